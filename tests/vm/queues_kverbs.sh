#!/bin/bash
# The queue objects as kernel ULPs use them: tests/kmod/queues/
# softrnic_qtest.ko runs its checks against a RoCE and an iWARP device at
# load time (caps, state machine, post rules, flush, local operations,
# arming, overflow, resize, SRQ, ib_drain_qp, CQE purge on destroy).
# timeout: 300
. "$(dirname "$0")/lib.sh"

have_softrnic || skip "softrnic.ko not built"
[ -f "$SOFTRNIC_ROOT/tests/kmod/queues/softrnic_qtest.ko" ] ||
	die "softrnic_qtest.ko not built (make testprogs)"

net_setup
rdma link add roce0 type roce netdev sr0 || die "add roce0"
rdma link add iw0 type iwarp netdev sr0 || die "add iw0"
dmesg -C
insmod "$SOFTRNIC_ROOT/tests/kmod/queues/softrnic_qtest.ko" roce=roce0 iwarp=iw0 ||
	die "insmod softrnic_qtest"
dmesg | grep 'qtest:'
rmmod softrnic_qtest
kmod_passed qtest 'roce0: 0 failed$' 'iw0: 0 failed$' || die "kernel-verbs checks failed"
# A module told no device to test fails instead of passing with nothing run.
dmesg -C
insmod "$SOFTRNIC_ROOT/tests/kmod/queues/softrnic_qtest.ko" roce= iwarp= ||
	die "insmod softrnic_qtest without devices"
rmmod softrnic_qtest
dmesg | grep -q 'qtest: FAIL .*no iWARP device named' || die "no error for an empty iwarp="
kmod_passed qtest && die "qtest with no devices passed"
rdma link delete roce0 || die "delete roce0"
rdma link delete iw0 || die "delete iw0"
unload_softrnic || die "rmmod softrnic"
net_teardown
echo "queues_kverbs OK"
