#!/bin/bash
# `rdma link delete` and `rmmod` remove devices that processes still hold
# open (with a PD allocated): ib_core disassociates the user context and
# the process sees IBV_EVENT_DEVICE_FATAL instead of blocking removal.
# timeout: 120
. "$(dirname "$0")/lib.sh"

hold() { # device: open it, allocate a PD, wait for the fatal event
	/usr/bin/python3 - "$1" <<'PY' &
import sys
from pyverbs.device import Context
from pyverbs.pd import PD
ctx = Context(name=sys.argv[1])
pd = PD(ctx)
print("holding", sys.argv[1], flush=True)
ev = ctx.get_async_event()
print("event", ev.event_type, flush=True)
PY
}

net_setup
rdma link add roce0 type roce netdev sr0 || die "add roce0"
out=$(mktemp)
hold roce0 >"$out" 2>&1
pid=$!
retry_until 20 grep -q holding "$out"
timeout 30 rdma link delete roce0 || die "rdma link delete blocked by an open context"
retry_until 20 sh -c "! kill -0 $pid 2>/dev/null"
wait $pid
cat "$out"
# IBV_EVENT_DEVICE_FATAL == 8
grep -q "event 8" "$out" || die "holder did not get IBV_EVENT_DEVICE_FATAL"

rdma link add iw0 type iwarp netdev sr0 || die "add iw0"
hold iw0 >"$out" 2>&1
pid=$!
retry_until 20 grep -q holding "$out"
timeout 60 rmmod softrnic || die "rmmod blocked by an open context"
retry_until 20 sh -c "! kill -0 $pid 2>/dev/null"
wait $pid
cat "$out"
grep -q "event 8" "$out" || die "holder did not get IBV_EVENT_DEVICE_FATAL on rmmod"
net_teardown
echo "disassociate OK"
