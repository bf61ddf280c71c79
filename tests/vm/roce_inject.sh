#!/bin/bash
# Crafted RoCEv2 packets at a live softrnic RC QP (softrnic-inject,
# tests/vm/progs/inject.cpp): truncated headers, bad ICRCs, reserved and
# UC/RD/XRC opcodes, TVer != 0, bad pad counts and lengths, unknown QPNs,
# P_Keys of another partition, spoofed sources, stale responses, duplicate and ahead-of-window PSNs,
# oversized payloads, well-formed controls and random bytes, UD and MADs
# at the GSI QP, over IPv4 and IPv6.  Checks: no crash and no kernel splat (run-suite), each category is
# counted under its drop reason in `rdma statistic show link roce1/1` and
# under no other, and the QP the packets were aimed at then runs a full
# softrnic-integrity exchange with every byte exact.  Finally a SEND above
# the path MTU at the expected PSN must NAK and put a second QP in ERR,
# and rdma_cm (ib_cm, after the MADs it was fed) still connects.
# The injector runs in init_net on sr0, i.e. from the address of the QP's
# real peer (roce0); the target is roce1 in netns peer.  Receive steering
# must queue none of the bad packets, also in the middle of a long message
# and during a transfer (category steer, and a flood of bad ICRCs and
# spoofed sources while one runs).
# SOFTRNIC_USERSPACE_BUILD=DIR uses DIR's programs.
# timeout: 600
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"

integrity_setup
userspace_prog inject softrnic-inject
have_softrnic || skip "softrnic.ko not built"

# The packets are what their categories claim, by kernel/proto's own ICRC
# check and parser (no device involved).
for dst in 10.0.0.2 fd00::2; do
	"$inject" --check --dst "$dst" --qpn 0x42 --epsn 0xfffff0 --random 2000 >/tmp/check.out ||
		{ cat /tmp/check.out; die "injector self-check ($dst)"; }
done
log "injector self-check: every crafted packet parses as its category says"

roce_pair_up
wait_gid g6 roce1 "$GID6_1"

# counters DEV: "name value" lines of the device's port counters.
counters() {
	rdma statistic show link "$1/1" 2>/dev/null |
		awk '{ for (i = 3; i < NF; i += 2) print $i, $(i + 1) }'
}
counters roce1 >/tmp/c.names
if grep -q '^rx_drop_bad_icrc ' /tmp/c.names; then
	have_counters=1
else
	have_counters=0
	log "SKIP (part): roce1 has no rx_drop_* port counters (rdma statistic show link roce1/1);" \
		"drops per reason are not checked, only survival and the QP"
fi

# outcome (softrnic-inject's `expect` lines) -> counter (kernel/roce/roce_stats.c)
cat >/tmp/outcomes <<'EOF2'
truncated rx_drop_truncated
bad_icrc rx_drop_bad_icrc
transport rx_drop_transport
opcode rx_drop_opcode
tver rx_drop_tver
pad rx_drop_pad
length rx_drop_length
unknown_qp rx_drop_unknown_qp
bad_address rx_drop_bad_address
out_of_window rx_drop_out_of_window
duplicate duplicate_requests
dup_ack acks_sent
seq_nak seq_naks_sent
nak naks_sent
bad_qkey rx_drop_bad_qkey
bad_pkey rx_drop_bad_pkey
mad_length rx_drop_length
ud_recv ud_recvs
EOF2
# these may only move when a category expects them to
strict="rx_drop_truncated rx_drop_bad_icrc rx_drop_transport rx_drop_opcode rx_drop_tver
	rx_drop_pad rx_drop_length rx_drop_unknown_qp rx_drop_bad_address rx_drop_out_of_window
	rx_drop_bad_qkey rx_drop_bad_pkey tx_drop_no_route duplicate_requests naks_sent rnr_naks_sent"

# settled DEV FILE: counters once two readings 0.1 s apart agree.
settled() {
	local prev="" cur i
	for ((i = 0; i < 30; i++)); do
		cur=$(counters "$1")
		[ -n "$prev" ] && [ "$cur" = "$prev" ] && break
		prev=$cur
		sleep 0.1
	done
	printf '%s\n' "$cur" >"$2"
}

# delta NAME: counter NAME in /tmp/c.after minus /tmp/c.before
delta() {
	awk -v n="$1" 'FNR == NR { if ($1 == n) b = $2; next } $1 == n { a = $2 }
		END { print a - b }' /tmp/c.before /tmp/c.after
}

fails=0
bad() {
	log "FAIL: $*"
	fails=$((fails + 1))
}

# compare CATEGORY LENIENT: /tmp/c.before -> /tmp/c.after against the
# `expect` lines in /tmp/inject.out: every counter an outcome names moved by
# exactly that much (seq_nak and dup_ack: 1 .. that much), and unless
# LENIENT no other $strict counter moved.  Prints "ok: ..." or "FAIL: ...".
compare() {
	awk -v cat="$1" -v lenient="$2" -v strict="$strict" '
		FILENAME == "/tmp/outcomes" { ctr[$1] = $2; next }
		FILENAME == "/tmp/c.before" { b[$1] = $2; next }
		FILENAME == "/tmp/c.after" { a[$1] = $2; next }
		$1 == "expect" && ($2 in ctr) { want[ctr[$2]] = $3; range[ctr[$2]] = $2 == "seq_nak" || $2 == "dup_ack" }
		END {
			for (c in want) {
				d = a[c] - b[c]
				got = got " " c " +" d
				if (range[c] ? d < 1 || d > want[c] : d != want[c])
					print "FAIL: " cat ": " c " +" d ", expected " (range[c] ? "1.." : "+") want[c]
			}
			n = split(strict, s)
			for (i = 1; i <= n && !lenient; i++)
				if (!(s[i] in want) && a[s[i]] != b[s[i]])
					print "FAIL: " cat ": " s[i] " moved by " a[s[i]] - b[s[i]] " (not an expected outcome)"
			print "ok:" (got == "" ? " (nothing expected)" : got)
		}' /tmp/outcomes /tmp/c.before /tmp/c.after /tmp/inject.out
}

# inject_check DST QPN EPSN MTU CATEGORY [ARGS...]: one category at roce1,
# counters compared as above.  Random bytes may land on any drop reason, and
# an empty UDP datagram may or may not reach the tunnel socket's handler:
# those two are lenient.
inject_check() {
	local dst=$1 qpn=$2 epsn=$3 mtu=$4 cat=$5 lenient=0 line res
	shift 5
	case $cat in random | empty) lenient=1 ;; esac
	settled roce1 /tmp/c.before
	"$inject" --dst "$dst" --qpn "$qpn" --epsn "$epsn" --mtu "$mtu" "$@" "$cat" \
		>/tmp/inject.out 2>&1 || { bad "softrnic-inject $cat: $(cat /tmp/inject.out)"; return; }
	line=$(grep "^inject: $cat " /tmp/inject.out)
	[ "$have_counters" = 1 ] || { log "$line"; return; }
	settled roce1 /tmp/c.after
	res=$(compare "$cat" $lenient)
	while read -r l; do
		case $l in FAIL:*) bad "${l#FAIL: }" ;; esac
	done <<<"$res"
	log "$line:$(sed -n 's/^ok://p' <<<"$res")"
}

# start_pair NAME OPS [ARGS...]: softrnic-integrity server on roce1 (the
# target; its QP in /tmp/info.NAME) and client on roce0, connected, then
# both paused until /tmp/go.NAME exists.  60 s for the run after that.
start_pair() {
	local name=$1 ops=$2 port=$((18600 + ${#pids[@]}))
	shift 2
	rm -f "/tmp/go.$name" "/tmp/info.$name"
	in_peer "$integ" -d roce1 -p "$port" --timeout "$(scaled 60)" --pause "/tmp/go.$name" \
		--info "/tmp/info.$name" "$@" >"/tmp/srv.$name" 2>&1 &
	pids+=($!)
	wait_listen in_peer "$port" "$!" || { cat "/tmp/srv.$name"; die "$name: server did not start"; }
	"$integ" -d roce0 -p "$port" --timeout "$(scaled 60)" --pause "/tmp/go.$name" -n "$ops" "$@" 10.0.0.2 \
		>"/tmp/cli.$name" 2>&1 &
	pids+=($!)
	retry_until 30 test -s "/tmp/info.$name"
}

# finish_pair NAME: let it run; both ends must exit 0
finish_pair() {
	local name=$1 rc=0 i
	touch "/tmp/go.$name"
	for i in "${pids[@]}"; do
		wait "$i" || rc=1
	done
	pids=()
	sed 's/^/    server: /' "/tmp/srv.$name"
	sed 's/^/    client: /' "/tmp/cli.$name"
	[ $rc = 0 ] || bad "$name: the target QP failed its integrity run after the injection"
}

info() { awk -v k="$2" '$1 == k { print $2 }' "/tmp/info.$1"; }

pids=()
for fam in 4 6; do
	if [ $fam = 4 ]; then dst=10.0.0.2 opt=(); else dst=fd00::2 opt=(-6); fi
	start_pair "v$fam" 200 "${opt[@]}" -m 256K -s "0x1$fam"
	qpn=$(info "v$fam" lqpn)
	epsn=$(info "v$fam" rq_psn)
	mtu=$(info "v$fam" mtu)
	log "IPv$fam target: roce1 QP $qpn, expected PSN $epsn, path MTU $mtu"
	for cat in empty truncated bad_icrc opcode transport tver pad length unknown_qp \
		bad_pkey bad_address out_of_window duplicate ahead oversized valid ud; do
		inject_check "$dst" "$qpn" "$epsn" "$mtu" "$cat"
	done
	inject_check "$dst" "$qpn" "$epsn" "$mtu" random --random 3000 --seed "$fam"
	[ "$have_counters" = 1 ] && log "after IPv$fam: $(counters roce1 | tr '\n' ' ')"
	finish_pair "v$fam"
done

qpstate() { rdma resource show qp lqpn "$1" 2>/dev/null | grep -q "state ERR"; }

# nak_fatal NAME CATEGORY: CATEGORY at a fresh pair's target QP (--va and
# --rkey its region) must be answered by exactly one NAK, and the QP must
# go to ERR (IBTA 9.7.5.2.4; wire-roce.md).  /tmp/info.NAME: the pair.
nak_fatal() {
	local name=$1 cat=$2 qpn d
	qpn=$(info "$name" lqpn)
	settled roce1 /tmp/c.before
	"$inject" --dst 10.0.0.2 --qpn "$qpn" --epsn "$(info "$name" rq_psn)" \
		--mtu "$(info "$name" mtu)" --va "$(info "$name" addr)" \
		--rkey "$(info "$name" rkey)" "$cat" >/tmp/inject.out 2>&1 ||
		bad "softrnic-inject $cat failed: $(cat /tmp/inject.out)"
	settled roce1 /tmp/c.after
	if [ "$have_counters" = 1 ]; then
		d=$(delta naks_sent)
		[ "$d" = 1 ] || bad "$cat: naks_sent +$d, expected +1"
		log "$cat: naks_sent +$d"
	fi
	if try_until 5 qpstate "$qpn"; then
		log "$cat: roce1 QP $qpn is in ERR"
	else
		bad "$cat: roce1 QP $qpn is not in ERR: $(rdma resource show qp lqpn "$qpn" 2>&1)"
	fi
}

# An in-sequence SEND above the path MTU is an Invalid Request: NAK, and
# the responder's QP goes to ERR; so are a WRITE ONLY and a WRITE LAST
# above it (into a region they fit).
for cat in fatal write_only_big write_last_big; do
	start_pair "$cat" 0 -m 256K
	nak_fatal "$cat" "$cat"
	finish_pair "$cat"
done

# A replayed READ keeps its resource until its responses are out: once
# 127 more READs filled the other resources, the next READ would get the
# replayed one's slot while it still sends.  Refused with an Invalid
# Request NAK (a requester never has that many READs outstanding), the
# pending responses never overwritten.
start_pair replay 0 -m 256K
qpn=$(info replay lqpn)
settled roce1 /tmp/c.before
"$inject" --dst 10.0.0.2 --qpn "$qpn" --epsn "$(info replay rq_psn)" --mtu "$(info replay mtu)" \
	--va "$(info replay addr)" --rkey "$(info replay rkey)" replay_first >/tmp/inject.out 2>&1 ||
	bad "softrnic-inject replay_first failed: $(cat /tmp/inject.out)"
settled roce1 /tmp/c.after
if [ "$have_counters" = 1 ]; then
	d=$(delta read_responses_sent)
	[ "$d" = 4096 ] || bad "replay_first: read_responses_sent +$d, expected +4096"
fi
nak_fatal replay replay
finish_pair replay

# Receive steering (kernel/roce/roce_steer.c) queues only packets that
# passed the ICRC, source and PSN checks.  At an idle QP: a long WRITE's
# FIRST (a duplicate: steering would start at once), then bad ICRCs, a
# spoofed source, PSNs far ahead and stale responses: each counted under
# its drop reason, and rx_steered unmoved (the queue never held one).
start_pair steer 300 -m 256K -s 0x77
qpn=$(info steer lqpn)
epsn=$(info steer rq_psn)
mtu=$(info steer mtu)
inject_check 10.0.0.2 "$qpn" "$epsn" "$mtu" steer
if [ "$have_counters" = 1 ]; then
	d=$(delta rx_steered)
	[ "$d" = 0 ] || bad "steer: rx_steered +$d: packets that failed a check were queued"
fi
# Then bad ICRCs and spoofed sources flooded at it during a legitimate
# transfer of long messages (which steers), for as long as it runs: all
# dropped as what they are (a spoofed packet that comes after the QP is
# gone counts as for an unknown QP), every bad ICRC counted, and every
# byte of the transfer exact.
settled roce1 /tmp/c.before
rm -f /tmp/flood.out
cli=${pids[1]}
(
	for ((i = 0; i < 200; i++)); do
		kill -0 "$cli" 2>/dev/null || break
		"$inject" --dst 10.0.0.2 --qpn "$qpn" --epsn "$epsn" --mtu "$mtu" \
			bad_icrc bad_address >>/tmp/flood.out 2>&1 || exit 1
	done
) &
flood=$!
finish_pair steer
wait $flood || bad "steer: the flood failed: $(tail -n 3 /tmp/flood.out)"
settled roce1 /tmp/c.after
if [ "$have_counters" = 1 ]; then
	sum() { awk -v o="$1" '$1 == "expect" && $2 == o { n += $3 } END { print n + 0 }' /tmp/flood.out; }
	d=$(delta rx_drop_bad_icrc)
	[ "$d" = "$(sum bad_icrc)" ] || bad "steer flood: rx_drop_bad_icrc +$d, expected +$(sum bad_icrc)"
	# the QP's peer may also send a last packet after it went
	a=$(delta rx_drop_bad_address)
	u=$(delta rx_drop_unknown_qp)
	if [ "$a" -lt 1 ] || [ "$a" -gt "$(sum bad_address)" ] || [ $((a + u)) -lt "$(sum bad_address)" ]; then
		bad "steer flood: rx_drop_bad_address +$a, rx_drop_unknown_qp +$u for $(sum bad_address) spoofed packets"
	fi
	log "steer flood: rx_drop_bad_icrc +$d, rx_drop_bad_address +$a (+$u after the QP went)," \
		"rx_steered +$(delta rx_steered), rx_drop_steer_full +$(delta rx_drop_steer_full)"
fi

# The GSI QP and ib_cm took the garbage MADs (category ud) and go on:
# an rdma_cm connection still comes up.
in_peer timeout 60 rping -s -a 10.0.0.2 -C 5 >/tmp/rping.srv 2>&1 &
spid=$!
retry_until 30 sh -c "rdma resource show cm_id | grep -q 'state LISTEN.*:7174'"
timeout 60 rping -c -a 10.0.0.2 -C 5 -V || bad "rping after the injection failed"
wait $spid || bad "rping server after the injection failed"

rdma link delete roce0 || die "delete roce0"
in_peer rdma link delete roce1 || die "delete roce1"
net_teardown
[ $fails = 0 ] || die "$fails checks failed"
echo "roce_inject OK"
