#!/bin/bash
# The kernel's half of the shared ring ABI (Documentation/ring-abi.md),
# exercised through raw uverbs commands by tests/raw_uverbs/ring_test:
# doorbells, flush, corrupt WQEs and counters, CQ overflow, resize, mmap
# rules; then device removal and process exit with live objects.
# timeout: 240
. "$(dirname "$0")/lib.sh"

T=$SOFTRNIC_ROOT/tests/raw_uverbs/ring_test
[ -x "$T" ] || die "$T not built (make testprogs)"

net_setup
rdma link add roce0 type roce netdev sr0 || die "add roce0"
rdma link add iw0 type iwarp netdev sr0 || die "add iw0"
"$T" roce0 basic || die "ring_test roce0 basic"
"$T" iw0 basic || die "ring_test iw0 basic"
"$T" iw0 abandon || die "ring_test iw0 abandon"
[ -z "$(rdma resource show qp | grep ring_test)" ] || die "QPs left after exit"
"$T" iw0 disassociate || die "ring_test iw0 disassociate"
"$T" roce0 disassociate || die "ring_test roce0 disassociate"
[ -z "$(rdma link show | grep -E 'roce0|iw0')" ] || die "links left behind"
unload_softrnic || die "rmmod after the tests"
net_teardown
echo "queues_rings OK"
