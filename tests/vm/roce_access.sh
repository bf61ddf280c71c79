#!/bin/bash
# IBTA responder checks between two processes (softrnic-rcsem, see
# tests/vm/progs/rc_semantics.cpp): bad rkey, out of bounds, missing
# rights in the MR and in the QP, PD mismatch, a type 2 MW after
# LOCAL_INV and outside its window, a SEND longer than its receive, a
# misaligned atomic, a message longer than max_msg_sz; SEND_WITH_INV
# (invalidating a bound MW, an rkey naming nothing, a plain MR's rkey);
# the max_sge boundary.  Each checks the requester's completion status,
# the flush of the WR after it, both QPs' states, the responder's receive
# completions and every byte of the responder's buffer.
#   softrnic -> softrnic, then with rdma_rxe (init_net) both ways:
#   rxe requesting from softrnic, softrnic requesting from rxe (rxe's own
#   departures from the spec accepted with --rxe-responder, printed as
#   NOTEs).
# First the checker checks itself: a responder that writes a byte it
# should not (--selftest-scribble) must fail the run.
# timeout: 240
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"
have_softrnic || skip "softrnic.ko not built"
. "$(dirname "$0")/roce/rcsem.sh"

roce_pair_up

cases=access,inv,sge

# the checker: a scribbling responder is caught
RCSEM_SERVER_ARGS=--selftest-scribble rcsem selftest peer roce1 roce0 --cases bad-rkey-write &&
	{ rcsem_show selftest; die "selftest: a changed target byte went unnoticed"; }
grep -q "bytes changed" /tmp/selftest.cli || { rcsem_show selftest; die "selftest: no report"; }
log "selftest: a changed target byte is reported"

rcsem_pass soft-soft peer roce1 roce0 --cases $cases
# a few over IPv6 GIDs
RCSEM_SERVER_ARGS=-6 rcsem_pass soft-soft6 peer roce1 roce0 -6 \
	--cases bad-rkey-write,oob-read-past-end,send-longer-than-recv,mw-after-local-inv,send-inv-mw

rdma link delete roce0 || die "delete roce0"
modprobe rdma_rxe || die "modprobe rdma_rxe"
rdma link add rxe0 type rxe netdev sr0 || die "add rxe0"
wait_gid g rxe0 "$GID4_0"
rcsem_pass rxe-to-soft peer roce1 rxe0 --cases $cases --rxe-requester
rcsem_pass soft-to-rxe init rxe0 roce1 --cases $cases --rxe-responder

rdma link delete rxe0
in_peer rdma link delete roce1 || die "delete roce1"
modprobe -r rdma_rxe
net_teardown
echo "roce_access OK"
