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
. "$(dirname "$0")/storage/lib.sh"

have_softrnic || skip "softrnic.ko not built"
command -v rpc.mountd >/dev/null && command -v mount.nfs >/dev/null ||
	skip "nfs-kernel-server/nfs-common not installed (scripts/deps)"

roce_pair_up

nfs_data_up

nfs_client_copy in_peer 10.0.0.1 "softrnic roce1 -> roce0"
rdma statistic show link roce0/1 | grep -o "tx_bytes [0-9]*\|rx_bytes [0-9]*" | tr '\n' ' ' >&2
echo >&2

nfs_client_copy "" 10.0.0.1 "softrnic roce0, both ends"

rxe_instead_of_roce0
nfs_client_copy "" 10.0.0.1 "rdma_rxe rxe0, both ends"

nfs_data_down
timeout 30 rdma link delete rxe0 || die "delete rxe0"
in_peer timeout 30 rdma link delete roce1 || die "delete roce1"
timeout 60 modprobe -r rdma_rxe || die "unload rdma_rxe"
timeout 60 rmmod softrnic || die "rmmod softrnic"
net_teardown
echo "roce_nfsrdma OK"
