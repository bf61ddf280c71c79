#!/bin/bash
# RDMA FLUSH and ATOMIC WRITE (memory placement extensions) over RoCEv2,
# softrnic <-> softrnic: roce0 on sr0 (init_net), roce1 on sr1 (netns peer);
# softrnic-mpe-test (tests/vm/progs/flush_atomic_write.cpp) drives both
# ends from one process (RDMA devices are shared between namespaces) and
# looks at the responder's memory directly.
#   - every case (success with data checks, ordering after WRITEs and
#     READs, every error: bad rkey, bounds, rights, misalignment,
#     persistence, and the local refusals), roce0 -> roce1 and
#     roce1 -> roce0, over IPv4, and the success/ordering cases over IPv6;
#   - under netem loss 5%, then duplicate 10% with delay 1ms reorder 25%
#     50%: success/ordering cases and 300 stress rounds each (WRITE data,
#     ATOMIC WRITE flag=A, WRITE flag=B, FLUSH; the data exact and the flag
#     B: a duplicate ATOMIC WRITE executed twice would put A back); the
#     responders must have seen duplicates / the requesters retransmitted;
#   - rdma_rxe of Linux 6.1 (rxe0 on sr0 in init_net) as the responder: it
#     knows neither opcode and drops them, so each ends in
#     IBV_WC_RETRY_EXC_ERR with rxe's memory untouched, and WRITE/READ on
#     a new QP pair with it are exact afterwards (interop unharmed; the
#     full interop suites are roce_pingpong.sh and roce_perftest.sh).
# SOFTRNIC_USERSPACE_BUILD=DIR uses DIR's programs.
# timeout: 600
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"

build=${SOFTRNIC_USERSPACE_BUILD:-$SOFTRNIC_ROOT/build/userspace}
mpe=$build/softrnic-mpe-test
[ -x "$mpe" ] || die "$mpe not built (make userspace)"
if [ -n "${SOFTRNIC_USERSPACE_BUILD:-}" ]; then
	export RDMAV_DRIVERS=$build/provider/libsoftrnic
fi
have_softrnic || skip "softrnic.ko not built"
command -v tc >/dev/null || skip "tc not installed"

roce_pair_up
modprobe sch_netem 2>/dev/null
wait_gid h0 roce0 "$GID6_0"
wait_gid h1 roce1 "$GID6_1"

# run NAME ARGS...: softrnic-mpe-test must pass; its output is shown
run() {
	local name=$1 rc=0
	shift
	log "$name: softrnic-mpe-test $*"
	timeout 300 "$mpe" "$@" >"/tmp/mpe-$name.log" 2>&1 || rc=$?
	sed 's/^/    /' "/tmp/mpe-$name.log"
	[ $rc = 0 ] || die "$name: softrnic-mpe-test failed (status $rc)"
	grep -q "^mpe: [1-9][0-9]* checks, 0 failed$" "/tmp/mpe-$name.log" ||
		die "$name: no checks ran?"
}

run v4-0to1 -a roce0 -x "$g0" -b roce1 -y "$g1"
run v4-1to0 -a roce1 -x "$g1" -b roce0 -y "$g0"
run v6-0to1 -a roce0 -x "$h0" -b roce1 -y "$h1" --skip-errors
run v4-stress -a roce0 -x "$g0" -b roce1 -y "$g1" --stress 100 --seed 1

netem_on() {
	tc qdisc replace dev sr0 root netem "$@" || die "tc netem $* on sr0"
	in_peer tc qdisc replace dev sr1 root netem "$@" || die "tc netem $* on sr1"
}
netem_off() {
	tc qdisc del dev sr0 root 2>/dev/null
	in_peer tc qdisc del dev sr1 root 2>/dev/null
	return 0
}

rtx0=$(counter roce0 retransmits)
netem_on loss 5%
run loss -a roce0 -x "$g0" -b roce1 -y "$g1" --skip-errors
run loss-stress -a roce0 -x "$g0" -b roce1 -y "$g1" --stress 300 --seed 2
run loss-stress-back -a roce1 -x "$g1" -b roce0 -y "$g0" --stress 150 --seed 3
rtx=$(($(counter roce0 retransmits) - rtx0))
[ "$rtx" -gt 0 ] || die "loss 5%: roce0 never retransmitted"
log "loss 5%: roce0 retransmitted $rtx packets"

dup1=$(counter roce1 duplicate_requests)
netem_on duplicate 10% delay 1ms reorder 25% 50%
run dup -a roce0 -x "$g0" -b roce1 -y "$g1" --skip-errors
run dup-stress -a roce0 -x "$g0" -b roce1 -y "$g1" --stress 300 --seed 4
netem_off
dup=$(($(counter roce1 duplicate_requests) - dup1))
[ "$dup" -gt 0 ] || die "duplicate 10%: roce1 saw no duplicate request"
log "duplicate 10%: roce1 answered $dup duplicate requests without executing them"

rdma link delete roce0 || die "delete roce0"
modprobe rdma_rxe || die "modprobe rdma_rxe"
rdma link add rxe0 type rxe netdev sr0 || die "add rxe0"
wait_gid r0 rxe0 "$GID4_0"
run rxe-peer -a roce1 -x "$g1" -b rxe0 -y "$r0" --peer-without-mpe
rdma link delete rxe0
modprobe -r rdma_rxe
in_peer rdma link delete roce1 || die "delete roce1"
net_teardown
echo "roce_flush_atomic_write OK"
