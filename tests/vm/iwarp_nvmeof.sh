#!/bin/bash
# timeout: 900
# NVMe over Fabrics on softrnic's iWARP wire (issue 16), the same suite
# as on RoCEv2 (tests/vm/storage/lib.sh: nvmeof_suite says what is done
# and checked: fio's 256 MiB write + crc32c verify, connect/disconnect
# cycles, the target's port gone and back under I/O, `rdma link delete`
# of either device under I/O): the target on iw0 (sr0, 10.0.0.1) and the
# host on iw1 (sr1, 10.0.0.2), both in init_net as nvme-rdma/nvmet-rdma
# need, then both ends on iw0 without the reconnect cases.  Over iWARP
# the ULPs register every buffer the peer reads or writes with
# IB_WR_REG_MR, invalidate with LOCAL_INV and SEND_WITH_INV, and
# rdma_rw turns the target's every RDMA READ into one into an MR.
# About 290 s under TCG (2 vCPUs, nothing else running).
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
DEV_TYPE=([iw0]=iwarp [iw1]=iwarp)
DEV_NETDEV=([iw0]=sr0 [iw1]=sr1)
dev_add iw0
dev_add iw1
nvmeof_suite iw0 iw1
timeout 30 rdma link delete iw1 || die "delete iw1"
SHORT=1 nvmeof_suite iw0
timeout 30 rdma link delete iw0 || die "delete iw0"
timeout 60 rmmod softrnic || die "rmmod softrnic"
timeout 60 modprobe -r nvmet nvme-fabrics null_blk || die "unload nvmet, nvme-fabrics, null_blk"
net_teardown
echo "iwarp_nvmeof OK"
