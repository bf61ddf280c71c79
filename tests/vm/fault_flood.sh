#!/bin/bash
# A flood of valid-looking RoCEv2 packets to guessed QPNs, from a raw
# socket on the legitimate peer's own address (softrnic-inject: random,
# mutated-valid with correct ICRCs, and well-formed requests to QPNs that
# do not exist), at roce1 while a legitimate QP of roce1 carries an
# integrity transfer.  The transfer must finish byte-exact, every flood
# packet must be dropped (and counted) rather than kept, and the kernel's
# unreclaimable slab must not grow with the flood.
# timeout: 420
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"

have_softrnic || skip "softrnic.ko not built"
integrity_setup
ops=$(descaled 20000)
userspace_prog inject softrnic-inject
roce_pair_up

drops() { # DEV PREFIX: the sum of the device's rx_drop_* counters
	$2 rdma statistic show link "$1/1" 2>/dev/null |
		awk '{ for (i = 3; i < NF; i += 2) if ($i ~ /^rx_drop_/) s += $(i + 1) } END { print s + 0 }'
}
sunreclaim() { awk '$1 == "SUnreclaim:" { print $2 }' /proc/meminfo; }

# Baseline: the same transfer without a flood.
integrity flood-baseline peer roce1 roce0 -n $ops -m 64K -s 0xf100
base_s=$(grep -o '[0-9.]* s,' /tmp/flood-baseline.cli | tr -d ' s,')

slab0=$(sunreclaim) d0=$(drops roce1 in_peer)
INTEGRITY_PORT=$((INTEGRITY_PORT + 1))
in_peer "$integ" -d roce1 -p $INTEGRITY_PORT --timeout "$(scaled 240)" -n $ops -m 64K -s 0xf101 \
	--info /tmp/flood.info >/tmp/flood.srv 2>&1 &
spid=$!
wait_listen in_peer $INTEGRITY_PORT $spid || { cat /tmp/flood.srv; die "server did not start"; }
"$integ" -d roce0 -p $INTEGRITY_PORT --timeout "$(scaled 240)" -n $ops -m 64K -s 0xf101 10.0.0.2 \
	>/tmp/flood.cli 2>&1 &
cpid=$!
try_until 30 test -s /tmp/flood.info || die "the legitimate pair never connected"
qpn=$(awk '$1 == "lqpn" { print $2 }' /tmp/flood.info)
log "legitimate QP: roce1 QP $qpn; flooding roce1 from 10.0.0.1 while it runs"
sent=0 rounds=0
while kill -0 $cpid 2>/dev/null && [ $rounds -lt 200 ]; do
	"$inject" --dst 10.0.0.2 --qpn "$qpn" --avoid-qpn "$qpn" --random 4000 \
		--seed $((rounds + 1)) random unknown_qp >/tmp/flood.inj 2>&1 ||
		{ cat /tmp/flood.inj; die "softrnic-inject failed"; }
	n=$(awk '$1 == "inject:" && $2 == "sent" { print $3 }' /tmp/flood.inj)
	sent=$((sent + n)) rounds=$((rounds + 1))
done
wait $cpid || { integrity_show flood; die "the legitimate transfer failed under the flood"; }
wait $spid || { integrity_show flood; die "the legitimate server failed under the flood"; }
flood_s=$(grep -o '[0-9.]* s,' /tmp/flood.cli | tr -d ' s,')
log "legitimate transfer under the flood: $(tail -n 1 /tmp/flood.cli), ${flood_s} s (${base_s} s without)"
[ "$sent" -gt 10000 ] || die "the flood was too small to mean anything: $sent packets"

settle() { local a b; a=$(drops roce1 in_peer); sleep 0.5; b=$(drops roce1 in_peer); [ "$a" = "$b" ]; }
try_until 20 settle
dropped=$(($(drops roce1 in_peer) - d0))
log "flood: $sent packets in $rounds rounds, roce1 dropped $dropped"
# A few of the random packets are not RoCE at all (the UDP layer takes
# them) or are lost on the veth; the rest must show up as drops.
[ $((dropped * 10)) -ge $((sent * 8)) ] || die "only $dropped of $sent flood packets counted as drops"
slab1=$(sunreclaim)
log "SUnreclaim (the whole kernel): ${slab0} kB before, ${slab1} kB after"
[ $((slab1 - slab0)) -lt 8192 ] || die "unreclaimable slab grew by $((slab1 - slab0)) kB with the flood"
integrity flood-after peer roce1 roce0 -n 300 -m 64K -s 0xf102
net_teardown
echo "fault_flood OK"
