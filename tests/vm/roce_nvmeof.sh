#!/bin/bash
# timeout: 1500
# NVMe over Fabrics on RoCEv2 (tests/vm/storage/lib.sh: nvmeof_suite
# says what is done and checked): over softrnic with the target on roce0
# (sr0) and the host on roce1 (sr1), then with both ends on roce0, then
# over rdma_rxe (one device) for comparison; the last two without the
# reconnect cases.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"
. "$(dirname "$0")/storage/lib.sh"

have_softrnic || skip "softrnic.ko not built"
command -v nvme >/dev/null || skip "nvme-cli not installed (scripts/deps)"
command -v fio >/dev/null || skip "fio not installed (scripts/deps)"

"$IP" link set lo up
veth_local_up
modprobe -r rdma_rxe 2>/dev/null
load_softrnic || die "modprobe softrnic"
DEV_TYPE=([roce0]=roce [roce1]=roce [rxe0]=rxe)
DEV_NETDEV=([roce0]=sr0 [roce1]=sr1 [rxe0]=sr0)
DEV_GID=([roce0]=$GID4_0 [roce1]=$GID4_1 [rxe0]=$GID4_0)
dev_add roce0
dev_add roce1
nvmeof_suite roce0 roce1
timeout 30 rdma link delete roce1 || die "delete roce1"
SHORT=1 nvmeof_suite roce0
timeout 30 rdma link delete roce0 || die "delete roce0"
timeout 60 rmmod softrnic || die "rmmod softrnic"

modprobe rdma_rxe || die "modprobe rdma_rxe"
dev_add rxe0
SHORT=1 nvmeof_suite rxe0
timeout 30 rdma link delete rxe0 || die "delete rxe0"
timeout 60 modprobe -r rdma_rxe || die "unload rdma_rxe"
timeout 60 modprobe -r nvmet nvme-fabrics null_blk || die "unload nvmet, nvme-fabrics, null_blk"
net_teardown
echo "roce_nvmeof OK"
