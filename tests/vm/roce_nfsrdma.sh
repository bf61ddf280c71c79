#!/bin/bash
# NFS over RDMA (the kernel's svcrdma server and xprtrdma client, NFSv4.2
# on port 20049) on RoCEv2: a 256 MiB file of random data copied to the
# server and another one back, checksums compared on the other side,
# unmount, nfsd stopped, nothing left on the devices.
#   softrnic: nfsd in init_net on roce0 (sr0), the client in netns peer
#             on roce1 (sr1): both ends of the veth pair; then the client
#             in init_net too: one device, both ends on it (loopback).
#   rdma_rxe: rxe0 on sr0 instead of roce0; 6.1's rxe works only in
#             init_net, so the client mounts there too (one device, both
#             ends on it).
# timeout: 900
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"

have_softrnic || skip "softrnic.ko not built"
command -v rpc.mountd >/dev/null && command -v mount.nfs >/dev/null ||
	skip "nfs-kernel-server/nfs-common not installed (scripts/deps)"

EXPORT=/srv/nfsrdma
MNT=/mnt/nfsrdma

# no_cm_ids PREFIX: no RDMA CM id but listeners in the namespace PREFIX runs in.
no_cm_ids() { ! $1 rdma resource show cm_id 2>/dev/null | grep -v "state LISTEN" | grep -q .; }

# sum FILE: its SHA-256.
sum() { sha256sum "$1" | cut -d' ' -f1; }

# client_copy PREFIX ADDR WHAT: under PREFIX ("" or in_peer), mount the
# export from ADDR over RDMA, copy /tmp/nfs-up there and the server's
# from-server.bin back to /tmp/nfs-down, unmount.  One script: a mount
# made under `ip netns exec` lives in that command's mount namespace.
client_copy() {
	local pfx=$1 addr=$2 what=$3 t0=$SECONDS
	log "$what: mount $addr:/ ($EXPORT) over RDMA, copy 256 MiB each way"
	# shellcheck disable=SC2016
	$pfx timeout -k 10 400 bash -c '
		. "$SOFTRNIC_ROOT/tests/vm/lib.sh"
		set -e
		nfs_rdma_mount "$1" "$2" || { echo "mount $1:/ over RDMA failed"; exit 1; }
		cp /tmp/nfs-up "$2/to-server.bin"
		cp "$2/from-server.bin" /tmp/nfs-down
		umount "$2"
	' client "$addr" "$MNT" || die "$what: NFS/RDMA copy: status $?"
	log "$what: both copies and the unmount took $((SECONDS - t0)) s"
	assert_eq "$(sum "$EXPORT/to-server.bin")" "$UP" "$what: checksum on the server"
	assert_eq "$(sum /tmp/nfs-down)" "$DOWN" "$what: checksum back on the client"
	rm -f "$EXPORT/to-server.bin" /tmp/nfs-down
}

roce_pair_up

log "random data"
head -c $((256 * 1024 * 1024)) /dev/urandom >/tmp/nfs-up || die "random data"
UP=$(sum /tmp/nfs-up)
nfsd_start $EXPORT || die "nfsd with RDMA on port 20049"
head -c $((256 * 1024 * 1024)) /dev/urandom >"$EXPORT/from-server.bin" || die "random data"
DOWN=$(sum "$EXPORT/from-server.bin")

client_copy in_peer 10.0.0.1 "softrnic roce1 -> roce0"
rdma statistic show link roce0/1 | grep -o "tx_bytes [0-9]*\|rx_bytes [0-9]*" | tr '\n' ' ' >&2
echo >&2
retry_until 30 no_cm_ids in_peer
retry_until 30 no_cm_ids ""

client_copy "" 10.0.0.1 "softrnic roce0, both ends"
retry_until 30 no_cm_ids ""

rxe_instead_of_roce0
client_copy "" 10.0.0.1 "rdma_rxe rxe0, both ends"
retry_until 30 no_cm_ids ""

nfsd_stop $EXPORT || die "stop nfsd"
retry_until 30 no_cm_ids ""
timeout 60 modprobe -r rpcrdma || die "unload rpcrdma"
timeout 30 rdma link delete rxe0 || die "delete rxe0"
in_peer timeout 30 rdma link delete roce1 || die "delete roce1"
timeout 60 modprobe -r rdma_rxe || die "unload rdma_rxe"
timeout 60 rmmod softrnic || die "rmmod softrnic"
rm -f /tmp/nfs-up
net_teardown
echo "roce_nfsrdma OK"
