#!/bin/bash
# NFS over RDMA on softrnic's iWARP wire, as on RoCEv2
# (tests/vm/storage/lib.sh: nfs_client_copy): 256 MiB of random data
# copied to the server and 256 MiB back, checksums compared on the other
# side, unmount, nothing left.  nfsd in init_net on iw0 (sr0), the
# client in netns peer on iw1 (sr1); then the client in init_net too:
# both ends on iw0.
# About 175 s under TCG.
# timeout: 900
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/iwarp/lib.sh"
. "$(dirname "$0")/roce/lib.sh"
. "$(dirname "$0")/storage/lib.sh"

have_softrnic || skip "softrnic.ko not built"
command -v rpc.mountd >/dev/null && command -v mount.nfs >/dev/null ||
	skip "nfs-kernel-server/nfs-common not installed (scripts/deps)"

iwarp_pair_up

nfs_data_up
nfs_client_copy in_peer 10.0.0.1 "softrnic iw1 -> iw0"
rdma statistic show link iw0/1 >&2
nfs_client_copy "" 10.0.0.1 "softrnic iw0, both ends"

nfs_data_down
timeout 30 rdma link delete iw0 || die "delete iw0"
in_peer timeout 30 rdma link delete iw1 || die "delete iw1"
timeout 60 rmmod softrnic || die "rmmod softrnic"
net_teardown
echo "iwarp_nfsrdma OK"
