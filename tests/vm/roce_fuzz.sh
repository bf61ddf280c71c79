#!/bin/bash
# Fuzzing the live RC transport, beyond the header parser (tests/fuzz):
#  1. State machines: softrnic-inject's fuzz mode (tests/vm/progs/inject.cpp)
#     sends thousands of well-formed packets with valid ICRCs at both QPs of
#     a pair while a softrnic-integrity transfer runs on it, from each QP's
#     real peer address, so every one reaches the requester or responder:
#     every RC request and response opcode, PSNs at the live window edges
#     (followed by sniffing the pair's own traffic), ACK/RNR/NAK syndromes,
#     valid and invalid keys, addresses and lengths.  Two profiles:
#       edges  PSNs at ePSN-1/ePSN/ePSN+1, the requester's una/next, the 2^23
#              duplicate/ahead boundary and the 2^24 wrap.  Such packets are
#              legal for a peer to send, so they may break the transfer: the
#              run must end cleanly (both ends exit, status 0 = every byte
#              checked and exact, or 1 = an error completion / wrong data
#              reported), within a bound, and leave no QP behind.
#       stale  PSNs far outside every window the run can reach: nothing may
#              change, the transfer must pass with every byte exact.
#     Over IPv4 and IPv6.  Then unreclaimable slab and the sk_buffs
#     allocated must be back near where they started (a softrnic.ko that
#     leaked each stale response failed this), and a fresh pair must run a
#     byte-exact transfer.  The seed is printed; SOFTRNIC_FUZZ_SEED=N repeats a run.
#  2. Non-linear skbs: softrnic_skbtest.ko (tests/kmod/skb) feeds roce1's
#     netdev frames split at random offsets over page fragments and a
#     frag_list (headers included): valid WRITEs and SENDs that must land
#     byte-exact, and damaged ones that must each be dropped and counted.
#     Then one WRITE received on one CPU while another holds roce1's QP
#     table lock with IRQs off: the packet's QP lookup must not wait for
#     it (review defect 9: every packet took that lock).
# No kernel splat (run-suite checks dmesg).
# timeout: 400
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"

integrity_setup
userspace_prog inject softrnic-inject
have_softrnic || skip "softrnic.ko not built"
SKB_KO=$SOFTRNIC_ROOT/tests/kmod/skb/softrnic_skbtest.ko
[ -f "$SKB_KO" ] || die "softrnic_skbtest.ko not built (make testprogs)"

SEED=${SOFTRNIC_FUZZ_SEED:-$((RANDOM << 15 | RANDOM))}
log "fuzz seed $SEED (SOFTRNIC_FUZZ_SEED=$SEED repeats this run)"

# Every fuzzed packet is well-formed, by kernel/proto's own ICRC check and
# parser: what reaches the QPs is for the state machines, not the parser.
for stale in "" --stale; do
	"$inject" --check --dst 10.0.0.2 --qpn 0x42 --epsn 0xfffff0 --sq-psn 3 --va 0x10000 \
		--rkey 0x1234 --len 65536 --fuzz 3000 --seed "$SEED" $stale fuzz >/tmp/check.out ||
		{ tail -n 5 /tmp/check.out; die "fuzz self-check $stale"; }
done
log "fuzz self-check: every fuzzed packet has a valid ICRC and parses"

roce_pair_up
wait_gid g6 roce0 "$GID6_0"
wait_gid g6 roce1 "$GID6_1"

# unreclaimable slab in kB, caches dropped first
sunreclaim() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	awk '$1 == "SUnreclaim:" { print $2 }' /proc/meminfo
}
# sk_buffs allocated (empty if the cache was merged into another)
skbs() { awk '$1 == "skbuff_head_cache" { print $2 }' /proc/slabinfo; }

fails=0
bad() {
	log "FAIL: $*"
	fails=$((fails + 1))
}

info() { awk -v k="$2" '$1 == k { print $2 }' "/tmp/info.$1"; }

# RC QPs left on roce0 and roce1 (none once both processes are gone)
rc_qps() { rdma resource show qp 2>/dev/null | grep -c 'type RC'; }
no_rc_qps() { [ "$(rc_qps)" = 0 ]; }
gone() { ! kill -0 "$1" 2>/dev/null; }
started() { grep -q '^inject: ' "$1" && grep -q '^inject: ' "$2"; }

# round NAME PROFILE FAMILY OPS: a softrnic-integrity pair (server on roce1
# in netns peer, client on roce0), each QP fuzzed by an injector from its
# peer's side while the transfer runs.
round() {
	local name=$1 profile=$2 fam=$3 ops=$4 port=$((18800 + RANDOM % 100)) opt=() saddr caddr
	local spid cpid ia ib src=0 crc=0 bound=${INTEGRITY_TMO:-20} stale=() out n t0=$SECONDS
	if [ "$fam" = 6 ]; then
		opt=(-6) saddr=fd00::2 caddr=fd00::1
	else
		saddr=10.0.0.2 caddr=10.0.0.1
	fi
	[ "$profile" = stale ] && stale=(--stale)
	rm -f "/tmp/go.$name" "/tmp/info.$name.srv" "/tmp/info.$name.cli"
	in_peer "$integ" -d roce1 -p "$port" --timeout "$bound" --pause "/tmp/go.$name" \
		--info "/tmp/info.$name.srv" "${opt[@]}" >"/tmp/$name.srv" 2>&1 &
	spid=$!
	wait_listen in_peer "$port" "$spid" || { cat "/tmp/$name.srv"; die "$name: server did not start"; }
	"$integ" -d roce0 -p "$port" --timeout "$bound" --pause "/tmp/go.$name" -n "$ops" -m 64K \
		-s "$((SEED + fam))" --info "/tmp/info.$name.cli" "${opt[@]}" "$saddr" \
		>"/tmp/$name.cli" 2>&1 &
	cpid=$!
	retry_until 30 test -s "/tmp/info.$name.srv" -a -s "/tmp/info.$name.cli"
	# fuzz ARGS: an injector at the QP described by /tmp/info.$name.$1
	fuzz() {
		local end=$1 dst=$2 sniff=$3 while=$4 seed=$5
		"$inject" --dst "$dst" --qpn "$(info "$name.$end" lqpn)" --rqpn "$(info "$name.$end" rqpn)" \
			--epsn "$(info "$name.$end" rq_psn)" --sq-psn "$(info "$name.$end" sq_psn)" \
			--mtu "$(info "$name.$end" mtu)" --va "$(info "$name.$end" addr)" \
			--rkey "$(info "$name.$end" rkey)" --len "$(info "$name.$end" len)" \
			--sniff "$sniff" --while-pid "$while" --fuzz "${FUZZ_N:-20000}" --interval 200 --seed "$seed" \
			"${stale[@]}" fuzz
	}
	fuzz srv "$saddr" sr0 "$cpid" "$((SEED + 1))" >"/tmp/$name.inj0" 2>&1 &
	ia=$!
	in_peer bash -c "$(declare -f fuzz info); name=$name inject=$inject stale=(${stale[*]});
		fuzz cli $caddr sr1 $spid $((SEED + 2))" >"/tmp/$name.inj1" 2>&1 &
	ib=$!
	# the transfer starts once both injectors are sniffing
	retry_until 30 started "/tmp/$name.inj0" "/tmp/$name.inj1"
	touch "/tmp/go.$name"
	wait "$ia" || bad "$name: injector at roce1 failed: $(tail -n 3 "/tmp/$name.inj0")"
	wait "$ib" || bad "$name: injector at roce0 failed: $(tail -n 3 "/tmp/$name.inj1")"
	# both ends exit by their own deadline, whatever the packets did
	if ! try_until $((bound + 20)) gone "$cpid" || ! try_until 20 gone "$spid"; then
		bad "$name: softrnic-integrity hangs $((bound + 20)) s into the run"
		ps -o pid,stat,wchan:30,args -p "$spid,$cpid" >&2
		kill -9 "$spid" "$cpid" 2>/dev/null
		return
	fi
	wait "$cpid" || crc=$?
	wait "$spid" || src=$?
	sed 's/^/    server: /' "/tmp/$name.srv" | grep -E 'aborted|ERROR|timed out|integrity:' | head -n 5
	sed 's/^/    client: /' "/tmp/$name.cli" | grep -E 'aborted|ERROR|timed out|integrity:' | head -n 5
	# each injector fuzzed its QP during the transfer, at PSNs it followed
	for out in "/tmp/$name.inj0" "/tmp/$name.inj1"; do
		grep -E '^(fuzz: target|inject: fuzz)' "$out" | sed 's/^/    /'
		n=$(awk '$1 == "inject:" && $2 == "fuzz" { print $3 }' "$out")
		[ "${n:-0}" -gt 0 ] || bad "$name: no packet fuzzed while the transfer ran ($out)"
		fuzzed=$((fuzzed + ${n:-0}))
		grep -Eq '^fuzz: target .*: [1-9][0-9]* packets of the pair sniffed' "$out" ||
			bad "$name: the injector saw none of the pair's packets ($out)"
	done
	case $profile in
	stale)
		# nothing the fuzzer sent was in a window: every byte exact
		[ "$crc$src" = 00 ] ||
			bad "$name: stale packets changed the transfer (client $crc, server $src)"
		;;
	*)
		# 0: exact; 1: an error completion or wrong data reported;
		# anything else (2: set-up error, a signal) is not an outcome
		case $crc$src in
		00 | 01 | 10 | 11) ;;
		*) bad "$name: softrnic-integrity did not end cleanly (client $crc, server $src)" ;;
		esac
		;;
	esac
	log "$name ($profile, IPv$fam): client $crc, server $src, $((SECONDS - t0)) s"
	try_until 20 no_rc_qps || bad "$name: $(rc_qps) RC QPs left after both processes exited"
}

fuzzed=0
mem0=$(sunreclaim)
skb0=$(skbs)
round edges4 edges 4 "${FUZZ_OPS:-2000}"
round stale4 stale 4 "${FUZZ_OPS:-2000}"
round edges6 edges 6 "${FUZZ_OPS:-2000}"
round stale6 stale 6 "${FUZZ_OPS:-2000}"

# --- 2. non-linear skbs ------------------------------------------------------
# First the module's own check must fail when a frame is miscounted: one
# valid SEND counted as a bad frame (broken_check=1).
dmesg -C
insmod "$SKB_KO" dev0=roce0 dev1=roce1 seed="$SEED" valid=8 bad=8 broken_check=1 ||
	die "insmod softrnic_skbtest broken_check=1"
rmmod softrnic_skbtest || die "rmmod softrnic_skbtest"
dmesg | grep -q 'skbtest: FAIL .*rx_drop_\* +[0-9]* for [0-9]* bad frames' ||
	{ dmesg | grep skbtest; die "skbtest self-test: a miscounted drop was not reported"; }
log "skbtest self-test: a miscounted drop is reported"
dmesg -C
insmod "$SKB_KO" dev0=roce0 dev1=roce1 seed="$SEED" || die "insmod softrnic_skbtest"
rmmod softrnic_skbtest || die "rmmod softrnic_skbtest"
dmesg | grep 'skbtest:' | sed 's/^/    /'
kmod_passed skbtest 'seed [0-9]+, ' '[1-9][0-9]* valid packets .* frag_list [1-9][0-9]*; .*: 0 failed$' \
	'locked lookup: the WRITE was received on CPU [0-9]+ while CPU [0-9]+ held' ||
	bad "non-linear skbs: valid frames not delivered exactly, bad frames not dropped and counted, or a packet waited for the QP table's lock"

# an edges round may end its transfer within a few packets; the stale
# ones run as long as their transfers do
log "$fuzzed packets fuzzed in all"
[ "$fuzzed" -ge "${FUZZ_MIN:-4000}" ] || bad "only $fuzzed packets fuzzed in all rounds"

mem1=$(sunreclaim)
skb1=$(skbs)
log "unreclaimable slab: $mem0 kB before the fuzzing, $mem1 kB after;" \
	"sk_buffs: ${skb0:-?} before, ${skb1:-?} after"
# what a leaked skb per fuzzed packet (thousands of them) or per
# injected frame would add
[ $((mem1 - mem0)) -lt 4096 ] ||
	bad "unreclaimable slab grew by $((mem1 - mem0)) kB over the fuzzing"
if [ -n "$skb0" ] && [ -n "$skb1" ]; then
	[ $((skb1 - skb0)) -lt 1000 ] || bad "$((skb1 - skb0)) more sk_buffs after the fuzzing"
fi

# a fresh pair between the same devices: every byte exact
integrity fresh peer roce1 roce0 -n 200 -m 256K -s "$SEED"

[ $fails = 0 ] || die "$fails checks failed (seed $SEED)"
echo "roce_fuzz OK (seed $SEED)"
