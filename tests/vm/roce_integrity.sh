#!/bin/bash
# RoCEv2 RC data integrity (softrnic-integrity, tests/vm/progs/integrity.cpp):
# random SEND/SEND_WITH_IMM/WRITE/WRITE_WITH_IMM/READ/CMP_SWAP/FETCH_ADD,
# inline or not, 1 B .. 4 MiB, up to 32 SGEs, requests from both ends,
# every byte and every completion checked by both ends.
#   softrnic <-> softrnic (roce0 on sr0, roce1 on sr1 in netns peer): IPv4
#   and IPv6 on a clean link, then with netem on both veth ends: loss 1%,
#   delay 1ms reorder 25% 50%, duplicate 1%, corrupt 0.1%: data must stay
#   exact (RC retransmits; the ICRC catches the corruption, with batches
#   turned off; with batches the UDP checksum may catch it first).  Then a black
#   hole for UDP 4791 only: the requester's retries run out and it must
#   report IBV_WC_RETRY_EXC_ERR, the documented outcome (--expect-errors),
#   after as many timeouts as the retransmission backoff takes (3.2 s).
#   softrnic <-> rdma_rxe (rxe0 on sr0 in init_net, the only namespace
#   Linux 6.1's rxe works in; roce1 on sr1): both roles, clean (softrnic
#   requesting every opcode, rxe SEND/WRITE; see below); then the same
#   four netem conditions, each one way at a time:
#   softrnic requesting every opcode from rxe, and rxe requesting only
#   SEND/WRITE (with immediate) from softrnic.  Linux 6.1's rxe, as the
#   requester of READs and atomics, does not recover from lost, corrupted,
#   duplicated or reordered packets: rxe <-> rxe (both in init_net, on a veth
#   pair forced over the wire by policy routing) with only READs/atomics
#   passed 0/5 runs under loss 1%, 4/5 under corrupt 0.1%, 3/5 under
#   duplicate 1%, none under reordering, stalling until the timeout with no
#   error completion; SEND/WRITE-only runs passed 15/15.  rxe requesting
#   READs/atomics from softrnic under loss 1%: 1/5.  softrnic requesting
#   them from rxe: 4/4 under each of the four conditions, as in this test.
# First the checker checks itself: a run whose first batch is damaged on
# purpose must fail, naming each kind of damage.
# SOFTRNIC_USERSPACE_BUILD=DIR uses DIR's programs; SOFTRNIC_INTEGRITY_SEED
# replaces the fixed seeds (each run prints its seed).
# timeout: 600
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"

integrity_setup
have_softrnic || skip "softrnic.ko not built"

roce_pair_up
wait_gid g roce0 "$GID6_0"
wait_gid g roce1 "$GID6_1"

seed() { echo "${SOFTRNIC_INTEGRITY_SEED:-$1}"; }

# netem_on ARGS...: the same netem on both ends of the veth
netem_on() {
	tc qdisc replace dev sr0 root netem "$@" || die "tc netem $* on sr0"
	in_peer tc qdisc replace dev sr1 root netem "$@" || die "tc netem $* on sr1"
}
netem_off() {
	tc qdisc del dev sr0 root 2>/dev/null
	in_peer tc qdisc del dev sr1 root 2>/dev/null
	return 0
}

# --- the checker finds damage ------------------------------------------------
integrity_pair selftest peer roce1 roce0 -n 32 -m 64K -s 7 --selftest-fault data,guard,atomic,imm
rc=$?
[ $rc = 1 ] || { integrity_show selftest; die "selftest: damaged batch not reported (status $rc)"; }
for what in "bytes wrong" "guard bytes overwritten" "atomic target" "CRC-32 of the received data"; do
	grep -q "ERROR: .*$what" /tmp/selftest.srv ||
		{ integrity_show selftest; die "selftest: no '$what' report"; }
done
grep -q "^integrity: .* [1-9][0-9]* errors$" /tmp/selftest.cli ||
	{ integrity_show selftest; die "selftest: the client's totals miss the server's errors"; }
log "selftest: damaged data, guard, atomic value and immediate all reported"

# --- softrnic <-> softrnic ---------------------------------------------------
integrity clean4 peer roce1 roce0 -n 1000 -s "$(seed 0x1001)"
integrity clean6 peer roce1 roce0 -6 -n 150 -m 1M -s "$(seed 0x1002)"

netem_on loss 1%
integrity loss peer roce1 roce0 -n 300 -m 256K -s "$(seed 0x1003)"
netem_on delay 1ms reorder 25% 50%
integrity reorder peer roce1 roce0 -n 300 -m 256K -s "$(seed 0x1004)"
netem_on duplicate 1%
integrity duplicate peer roce1 roce0 -n 300 -m 256K -s "$(seed 0x1005)"
# udp_segmentation on|off: batches (UDP GSO skbs) or single packets.  A
# NIC that cannot segment UDP (virtio-net of Linux 6.1 behind QEMU's hub,
# SOFTRNIC_VM_NICS=virtio) has it "off [fixed]": single packets only.
udp_segmentation() {
	if ethtool -k sr0 | grep -q '^tx-udp-segmentation: off \[fixed\]'; then
		log "sr0 cannot segment UDP: single packets, whatever was asked ($1)"
		return 0
	fi
	ethtool -K sr0 tx-udp-segmentation "$1" &&
		in_peer ethtool -K sr1 tx-udp-segmentation "$1" ||
		die "tx-udp-segmentation $1"
}
# udp_csum_errors: UDP checksum errors in both namespaces (/proc/net/snmp)
udp_csum_errors() {
	{ cat /proc/net/snmp; in_peer cat /proc/net/snmp; } |
		awk '$1 == "Udp:" && $2 ~ /^[0-9]/ { n += $8 } END { print n + 0 }'
}
# netem corrupts one byte of an skb's linear part: in a batch that is the
# first packet or the headers, which the batch's UDP checksum covers, so
# corruption meant for the ICRC runs with single packets (UDP checksum 0).
udp_segmentation off
icrc0=$(counter roce0 rx_drop_bad_icrc)
icrc1=$(counter roce1 rx_drop_bad_icrc)
netem_on corrupt 0.1%
integrity corrupt peer roce1 roce0 -n 600 -m 256K -s "$(seed 0x1006)"
udp_segmentation on
# the corruption reached the transport and the ICRC threw it away
if [ -n "$icrc0" ] && [ -n "$icrc1" ]; then
	caught=$(($(counter roce0 rx_drop_bad_icrc) + $(counter roce1 rx_drop_bad_icrc) - icrc0 - icrc1))
	[ "$caught" -gt 0 ] || die "corrupt: no rx_drop_bad_icrc on either end"
	log "corrupt: $caught corrupted packets dropped by the ICRC check"
else
	log "SKIP (part): no rx_drop_bad_icrc counter; not checking that the ICRC caught the corruption"
fi
# The same with batches: data exact whichever check drops a packet.
icrc0=$(counter roce0 rx_drop_bad_icrc) icrc1=$(counter roce1 rx_drop_bad_icrc)
csum0=$(udp_csum_errors)
integrity corrupt-batches peer roce1 roce0 -n 600 -m 256K -s "$(seed 0x1008)"
netem_off
log "corrupt-batches: dropped by the ICRC check $(($(counter roce0 rx_drop_bad_icrc) + $(counter roce1 rx_drop_bad_icrc) - icrc0 - icrc1)), by the UDP checksum $(($(udp_csum_errors) - csum0))"
for dev in roce0 roce1; do
	log "$dev: $(rdma statistic show link $dev/1 2>/dev/null | grep -o 'retransmits [0-9]*\|retransmit_timeouts [0-9]*\|duplicate_requests [0-9]*\|seq_naks_sent [0-9]*' | tr '\n' ' ')"
done

# A black hole for RoCE (UDP 4791) on sr0 only, the side channel (TCP)
# untouched: every request of roce0 and every response to roce1's requests
# vanishes.  After --retry-cnt retransmissions the requester completes with
# IBV_WC_RETRY_EXC_ERR: counted with --expect-errors, a failure without.
tc qdisc add dev sr0 root handle 1: prio || die "tc prio"
tc qdisc add dev sr0 parent 1:3 handle 30: netem loss 100% || die "tc netem"
tc filter add dev sr0 parent 1: protocol ip prio 1 u32 match ip protocol 17 0xff \
	match ip dport 4791 0xffff flowid 1:3 || die "tc filter"
hole=(-n 20 -m 4K --qp-timeout 12 --retry-cnt 2 -s "$(seed 0x1007)")
integrity_pair blackhole peer roce1 roce0 "${hole[@]}" --expect-errors ||
	{ integrity_show blackhole; die "blackhole: --expect-errors run failed (status $?)"; }
grep -q "RETRY_EXC\|retries ran out" /tmp/blackhole.cli /tmp/blackhole.srv ||
	{ integrity_show blackhole; die "blackhole: no IBV_WC_RETRY_EXC_ERR reported"; }
grep -q "^integrity: .* [1-9][0-9]* errors$" /tmp/blackhole.cli ||
	{ integrity_show blackhole; die "blackhole: no errors counted"; }
log "blackhole: $(tail -n 1 /tmp/blackhole.cli), as documented"
integrity_pair blackhole2 peer roce1 roce0 "${hole[@]}" &&
	{ integrity_show blackhole2; die "blackhole: passed without --expect-errors"; }
# The retransmission timer backs off: with timeout 14 (67 ms) and 7
# retries one lost READ takes 1+2+4+8+8+8+8+8 = 47 periods, 3.2 s, to
# IBV_WC_RETRY_EXC_ERR (8 periods, 0.5 s, with a fixed timer; 255
# periods, 17 s, with an unbounded doubling).
integrity_pair backoff peer roce1 roce0 -n 1 --ops-mask read --one-way -m 4K \
	--qp-timeout 14 --retry-cnt 7 -s "$(seed 0x1008)" --expect-errors ||
	{ integrity_show backoff; die "backoff: --expect-errors run failed (status $?)"; }
grep -q "RETRY_EXC\|retries ran out" /tmp/backoff.cli ||
	{ integrity_show backoff; die "backoff: no IBV_WC_RETRY_EXC_ERR reported"; }
t=$(sed -n 's/^.* batches in \([0-9.]*\) s,.*$/\1/p' /tmp/backoff.cli)
[ -n "$t" ] || { integrity_show backoff; die "backoff: no run time reported"; }
awk -v t="$t" 'BEGIN { exit !(t >= 2.0 && t <= 9.0) }' ||
	{ integrity_show backoff; die "backoff: RETRY_EXC after $t s, not 3.2 s (2..9 s)"; }
log "backoff: RETRY_EXC after $t s (47 periods of 67 ms: 3.2 s)"
netem_off

# --- softrnic <-> rdma_rxe ---------------------------------------------------
rdma link delete roce0 || die "delete roce0"
modprobe rdma_rxe || die "modprobe rdma_rxe"
rdma link add rxe0 type rxe netdev sr0 || die "add rxe0"
wait_gid g rxe0 "$GID4_0"
# (see the top) "init": requests from softrnic (client) to rxe (server);
# "peer": from rxe (client) to softrnic (server), SEND/WRITE only.  Even on
# a clean link rxe 6.1 drops packets of its own: it sends a READ's
# responses unpaced, more than a CPU's backlog (1000) takes for a 1 MiB
# READ, and counts its own ACKs that did not fit ("Failed sending ACK",
# send_err); as a requester of READs/atomics it then stalls.  Looping the
# all-opcode rxe-client pass: 3 of 25 runs stalled so, on main before
# receive steering as after it.  So rxe requests SEND/WRITE only here too;
# rxe requesting READs/atomics from softrnic is in roce_kverbs,
# roce_access and roce_perftest.  In rxe-server both ends request,
# softrnic every opcode, rxe (the server) SEND/WRITE: a CI run stalled
# so with rxe requesting all of them (an operation of rxe's never
# completed, softrnic's all did).
rxe_sw=(--ops-mask "send,send_imm,write,write_imm")
integrity rxe-client peer roce1 rxe0 "${rxe_sw[@]}" -n 250 -m 1M -s "$(seed 0x2001)"
integrity rxe-server init rxe0 roce1 --server-ops-mask "send,send_imm,write,write_imm" \
	-n 250 -m 1M -s "$(seed 0x2002)"
n=0
for cond in "loss 1%" "delay 1ms reorder 25% 50%" "duplicate 1%" "corrupt 0.1%"; do
	# shellcheck disable=SC2086
	netem_on $cond
	name=rxe-${cond%% *}
	[ "$name" = rxe-delay ] && name=rxe-reorder
	n=$((n + 1))
	tx0=$(counter roce1 tx_packets in_peer) rtx0=$(counter roce1 retransmits in_peer)
	integrity "$name-from-softrnic" init rxe0 roce1 --one-way -n 150 -m 256K \
		-s "$(seed $((0x2010 + n)))"
	tx=$(($(counter roce1 tx_packets in_peer) - tx0))
	rtx=$(($(counter roce1 retransmits in_peer) - rtx0))
	log "$name-from-softrnic: roce1 sent $tx packets, $rtx of them again"
	# An ACK beyond a READ whose responses it overtook goes back N once
	# per una_psn (roce_req.c).  Going back for each such ACK, every one
	# an answer to the last go-back's resent WRITEs, was a storm: ~94% of
	# what roce1 sent was resent, and a READ starved (2 of 16 runs).
	# Reordering costs ~65% still: every go-back resends what follows.
	# Not on virtio-net (roce_virtio), whose QEMU hub also drops (~3%) and
	# delays: 31545 of 34988 there, an open defect (see wire-roce.md).
	[ "$name" != rxe-reorder ] || [ "${SOFTRNIC_VM_NICS:-veth}" = virtio ] ||
		[ $((rtx * 20)) -lt $((tx * 17)) ] ||
		die "$name-from-softrnic: $rtx of $tx packets resent: a retransmission storm"
	integrity "$name-from-rxe" peer roce1 rxe0 --one-way "${rxe_sw[@]}" -n 150 -m 256K \
		-s "$(seed $((0x2020 + n)))"
done
netem_off

rdma link delete rxe0
in_peer rdma link delete roce1 || die "delete roce1"
modprobe -r rdma_rxe
net_teardown
echo "roce_integrity OK"
