#!/bin/bash
# CQs, QPs and SRQs through libibverbs and libsoftrnic (pyverbs): caps,
# flush order and opcodes, completion channel events, WRs posted in ERR,
# RESET, resize across pending CQEs, SRQ limit/resize rules, limits, and
# rdma restrack listing the objects.  The QPs have no peer: completions are
# flushes.
# timeout: 180
. "$(dirname "$0")/lib.sh"

net_setup
rdma link add roce0 type roce netdev sr0 || die "add roce0"
rdma link add iw0 type iwarp netdev sr0 || die "add iw0"
/usr/bin/python3 "$(dirname "$0")/queues_verbs.py" roce0 iw0 ||
	die "pyverbs queue checks failed"
rdma link delete roce0 || die "delete roce0"
rdma link delete iw0 || die "delete iw0"
net_teardown
echo "queues_verbs OK"
