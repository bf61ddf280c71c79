#!/bin/bash
# A hostile process scribbles random bytes over its SQ, RQ and CQ rings
# (slots and counters) while posting, ringing doorbells and polling, on UD
# and RC QPs of a roce device and RC QPs of an iwarp one; then
# one is killed with scribbled objects alive; and a thread flips prod,
# kflags and a CQ's uflags under doorbells (bounded, QP to ERR).  The
# kernel log must stay
# clean (the harness fails the test on any splat) and nothing may leak.
# timeout: 300
. "$(dirname "$0")/lib.sh"

T=$SOFTRNIC_ROOT/tests/raw_uverbs/ring_test
[ -x "$T" ] || die "$T not built (make testprogs)"

net_setup
rdma link add roce0 type roce netdev sr0 || die "add roce0"
rdma link add iw0 type iwarp netdev sr0 || die "add iw0"
"$T" roce0 scribble 150 || die "ring_test roce0 scribble"
# RC QPs connected to themselves: scribbled WQEs reach the RC transport
# (requester, responder, ACKs, retries) through the device's loopback.
rx_packets() {
	rdma statistic show link roce0/1 |
		awk '{ for (i = 3; i < NF; i += 2) if ($i == "rx_packets") print $(i + 1) }'
}
rx0=$(rx_packets)
"$T" roce0 scribble-rc 150 || die "ring_test roce0 scribble-rc"
rx1=$(rx_packets)
log "roce0 received $((rx1 - rx0)) packets during scribble-rc"
[ $((rx1 - rx0)) -ge 150 ] || die "scribble-rc moved too few packets: its QPs did not reach the transport"
"$T" iw0 scribble 150 || die "ring_test iw0 scribble"
# A thread moving prod back and forth, kflags and the CQ's arm word while
# doorbells ring: every loop of the kernel over them is bounded, and the
# QP ends in ERR (prod moved back is ring corruption), on UD and RC.
"$T" roce0 hostile || die "ring_test roce0 hostile"
"$T" iw0 hostile || die "ring_test iw0 hostile"
"$T" roce0 scribble 5 &
pid=$!
sleep 0.2
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
retry_until 20 sh -c '! rdma resource show qp | grep -q ring_test'
rdma link delete roce0 || die "delete roce0"
rdma link delete iw0 || die "delete iw0"
unload_softrnic || die "rmmod softrnic: something leaked a reference"
net_teardown
echo "queues_scribble OK"
