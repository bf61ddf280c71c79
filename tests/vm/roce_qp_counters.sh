#!/bin/bash
# Per-QP counters (`rdma statistic qp`, kernel/counters.c): QPs of a real
# ib_write_bw run bound automatically (auto type on) and by hand (bind
# lqpn), their counter groups read through rdma and `softrnic stats`
# while the run goes on; the values are non-zero, grow, fit inside the
# port counters and look like 64 KiB WRITEs; unbind, QP destroy and
# device deletion with bound QPs leave nothing behind (run-suite fails
# the test on any kernel splat).
# timeout: 600
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"

have_softrnic || skip "softrnic.ko not built"
command -v ib_write_bw >/dev/null || skip "perftest not installed"
roce_pair_up

# write_bw_start SECONDS: ib_write_bw for SECONDS, server on roce1 (peer),
# client on roce0, in the background; bw_pid is the client, the pair's
# output in /tmp/qpc_bw.log.
write_bw_start() {
	(run_pair $(($1 + 60)) "ib_write_bw -d roce1 -x $g1 -s 65536 -D $1 $(perftest_scaled_opts)" \
		"ib_write_bw -d roce0 -x $g0 -s 65536 -D $1 $(perftest_scaled_opts) 10.0.0.2") >/tmp/qpc_bw.log 2>&1 &
	bw_pid=$!
}

# groups PREFIX DEV: the QP counter groups of DEV/1 as `softrnic -j stats`
# prints them, one per line: "cntn lqpn,... tx_packets tx_bytes
# rx_packets rx_bytes" (lqpn "-" if none).
groups() {
	$1 softrnic -j stats "$2" | python3 -c '
import json, sys
for g in json.load(sys.stdin)[0].get("qp_counters", []):
	q = ",".join(map(str, g["lqpn"])) or "-"
	print(g["cntn"], q, g["tx_packets"], g["tx_bytes"], g["rx_packets"], g["rx_bytes"])
'
}

# rc_qp PREFIX DEV [FIELD]: FIELD (lqpn, pid) of ib_write_bw's RC QP on DEV.
rc_qp() {
	$1 rdma -j resource show qp link "$2/1" | python3 -c '
import json, sys
q = [x[sys.argv[1]] for x in json.load(sys.stdin) if x.get("comm") == "ib_write_bw" and x.get("type") == "RC"]
print(q[0] if q else "")
' "${3:-lqpn}"
}
rc_qpn() { rc_qp "$1" "$2" lqpn; }

# write_bw_pids: the run's processes (client on roce0, server on roce1).
write_bw_pids() {
	rc_qp "" roce0 pid 2>/dev/null
	rc_qp in_peer roce1 pid 2>/dev/null
}

# write_bw_stop [PID...]: end the run (PIDs, by default write_bw_pids) now
# rather than after its duration, which is long for TCG; the QPs go with
# the processes.
write_bw_stop() {
	local pids=("$@") t0=$SECONDS
	[ ${#pids[@]} -gt 0 ] || mapfile -t pids < <(write_bw_pids)
	[ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null
	wait "$bw_pid"
	log "ib_write_bw (pids ${pids[*]:-none found}) ended $((SECONDS - t0)) s after the kill"
	return 0
}

# traffic_on PREFIX DEV: a group of DEV has sent or received something.
traffic_on() { groups "$1" "$2" | awk '$3 + $5 > 0 { f = 1 } END { exit !f }'; }

no_groups() { [ -z "$(groups "" roce0)" ]; }
bw_qp_up() { [ -n "$(rc_qpn "" roce0)" ]; }

# port_at_least PREFIX DEV NAME VALUE: DEV's port counter NAME >= VALUE.
port_at_least() {
	local v
	v=$(counter "$2" "$3" "$1")
	[ -n "$v" ] && [ "$v" -ge "$4" ] || { log "port $2 $3 = $v < $4"; return 1; }
}

fail=0
check() { "$@" || { log "FAIL: $*"; fail=1; }; }

# ---- auto mode: every RC QP of a process gets a group at INIT.
rdma statistic qp set link roce0/1 auto type on || die "auto mode on roce0"
in_peer rdma statistic qp set link roce1/1 auto type on || die "auto mode on roce1"
rdma statistic qp mode link roce0/1 | grep -q 'qp auto type on' ||
	{ rdma statistic qp mode link roce0/1; die "roce0: not in auto mode"; }

tx_port0=$(counter roce0 tx_bytes)
write_bw_start 600
try_until 120 traffic_on "" roce0 || { cat /tmp/qpc_bw.log; die "no group of roce0 counts"; }
try_until 60 traffic_on in_peer roce1 || die "no group of roce1 counts"
a=$(groups "" roce0)
b=$(groups in_peer roce1)
log "roce0 groups (cntn lqpn tx_pkts tx_bytes rx_pkts rx_bytes): $a"
log "roce1 groups: $b"
qpn=$(rc_qpn "" roce0)
[ -n "$qpn" ] || die "no ib_write_bw QP on roce0"
# The requester's group: its QP, WRITE packets out, ACKs in.
read -r cntn lqpn tx tb rx rb < <(awk -v q="$qpn" '$2 ~ "(^|,)" q "(,|$)"' <<<"$a")
[ -n "$cntn" ] || die "QP $qpn of roce0 is in no group"
check [ "$tx" -gt 0 ]
check [ "$rx" -gt 0 ]
# full-MTU WRITE packets (path MTU >= 1024 here), ACKs of 30-odd bytes
check [ "$tb" -ge $((tx * 1024)) ]
check [ "$rb" -lt $((rx * 256)) ]
# the responder's group on roce1 received them
read -r _ _ ptx _ prx prb < <(head -1 <<<"$b")
check [ "$prx" -gt 0 ]
check [ "$prb" -ge $((prx * 1024)) ]
check [ "$ptx" -gt 0 ]
# growing while the run goes on, and never beyond the port's count
sleep 2
read -r _ _ _ tb2 _ _ < <(awk -v c="$cntn" '$1 == c' <<<"$(groups "" roce0)")
check [ "$tb2" -gt "$tb" ]
sum=$(groups "" roce0 | awk '{ s += $4 } END { print s + 0 }')
check port_at_least "" roce0 tx_bytes $((sum + tx_port0))
# rdma shows the same group
rdma statistic qp show link roce0/1 | tee /tmp/qpc_rdma.txt
grep -q "cntn $cntn " /tmp/qpc_rdma.txt || { log "FAIL: rdma does not show cntn $cntn"; fail=1; }
softrnic stats roce0 | grep -Eq "^    cntn $cntn mode auto qp-type RC lqpn [0-9,]*$qpn.* tx_packets [1-9]" ||
	{ softrnic stats roce0; log "FAIL: softrnic stats: no line for cntn $cntn"; fail=1; }

write_bw_stop
# The QPs are gone, and with them their groups; the port keeps the counts.
try_until 20 no_groups ||
	{ groups "" roce0; log "FAIL: groups left on roce0 after the QPs went"; fail=1; }
check port_at_least "" roce0 tx_bytes $((tb2 + tx_port0))
rdma statistic qp set link roce0/1 auto off || die "auto off roce0"
in_peer rdma statistic qp set link roce1/1 auto off || die "auto off roce1"

# ---- manual mode: bind one QP by number, unbind it, bind it again and
# let the process destroy it while bound.
write_bw_start 600
try_until 120 bw_qp_up ||
	{ cat /tmp/qpc_bw.log; die "ib_write_bw did not start"; }
qpn=$(rc_qpn "" roce0)
[ -n "$qpn" ] || die "no ib_write_bw QP on roce0"
rdma statistic qp bind link roce0/1 lqpn "$qpn" || die "bind lqpn $qpn"
try_until 60 traffic_on "" roce0 || die "the bound QP counts nothing"
read -r cntn lqpn tx tb _ _ < <(groups "" roce0 | head -1)
log "bound: cntn $cntn lqpn $lqpn tx_packets $tx tx_bytes $tb"
assert_eq "$lqpn" "$qpn" "the group holds the bound QP"
softrnic stats roce0 | grep -Eq "^    cntn $cntn mode manual lqpn $qpn tx_packets [1-9]" ||
	{ softrnic stats roce0; log "FAIL: softrnic stats: manual group"; fail=1; }
rdma statistic qp unbind link roce0/1 cntn "$cntn" lqpn "$qpn" || die "unbind"
# its only QP left: the group is freed
no_groups || { groups "" roce0; log "FAIL: group left after unbind"; fail=1; }
rdma statistic qp bind link roce0/1 lqpn "$qpn" || die "bind lqpn $qpn again"
read -r _ lqpn2 _ _ _ _ < <(groups "" roce0 | head -1)
assert_eq "$lqpn2" "$qpn" "bound again"
write_bw_stop
try_until 20 no_groups || { groups "" roce0; log "FAIL: group left after destroy"; fail=1; }

# ---- the device deleted while a QP is bound.
write_bw_start 600
try_until 120 bw_qp_up ||
	{ cat /tmp/qpc_bw.log; die "ib_write_bw did not start"; }
qpn=$(rc_qpn "" roce0)
rdma statistic qp bind link roce0/1 lqpn "$qpn" || die "bind lqpn $qpn (for the delete)"
mapfile -t pids < <(write_bw_pids)
rdma link delete roce0 || die "delete roce0 with a bound QP"
write_bw_stop "${pids[@]}"
rdma link show | grep -q roce0 && die "roce0 still there"

in_peer rdma link delete roce1
net_teardown
[ $fail = 0 ] || die "some checks failed"
echo "roce_qp_counters OK"
