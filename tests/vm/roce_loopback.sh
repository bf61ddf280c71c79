#!/bin/bash
# One host: both ends of every connection on one roce device, then on two
# roce devices of one network namespace (a veth pair with both ends in
# init_net).  ibv_rc_pingpong, perftest and softrnic-integrity over GID 0
# (fe80::), the IPv4-mapped GID and the global IPv6 GID.  The packets must
# be counted like any others (rx_packets = tx_packets, no drops; looped
# packets carry no ICRC: wire-roce.md).  Last, deleting one device while its peer on the other device
# is busy: the survivor gets an error completion, as from a remote peer
# that went away.
# timeout: 1200
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"

have_softrnic || skip "softrnic.ko not built"
command -v ib_write_bw >/dev/null || skip "perftest not installed"
integrity_setup

"$IP" link set lo up
modprobe -r rdma_rxe 2>/dev/null
load_softrnic || die "modprobe softrnic"
veth_local_up
rdma link add roce0 type roce netdev sr0 || die "add roce0"
rdma link add roce1 type roce netdev sr1 || die "add roce1"
wait_gid v4_0 roce0 "$GID4_0"
wait_gid v4_1 roce1 "$GID4_1"
wait_gid v6_0 roce0 "$GID6_0"
wait_gid v6_1 roce1 "$GID6_1"
grep -q '^fe80:' /sys/class/infiniband/roce0/ports/1/gids/0 || die "GID 0 of roce0 is not fe80::"

# gidx DEV KIND: the GID index of KIND (ll, v4, v6) on DEV
gidx() {
	case $2 in
	ll) echo 0 ;;
	v4) [ "$1" = roce0 ] && echo "$v4_0" || echo "$v4_1" ;;
	v6) [ "$1" = roce0 ] && echo "$v6_0" || echo "$v6_1" ;;
	esac
}

# local_pair SRV_DEV CLI_DEV TIMEOUT "SERVER CMD" "CLIENT CMD": both here
local_pair() { pair_run "" "" "$3" "$4" "$5"; }

fail=0
for pairing in "roce0 roce0" "roce0 roce1"; do
	read -r sdev cdev <<<"$pairing"
	for kind in ll v4 v6; do
		sg=$(gidx "$sdev" $kind) cg=$(gidx "$cdev" $kind)
		tag="$sdev<-$cdev $kind"
		tx0=$(counter "$sdev" tx_packets) rx0=$(counter "$sdev" rx_packets)
		lp0=$(counter "$sdev" tx_looped)
		for size in 1 4096 65536 1048576; do
			n=20
			[ $size -ge 65536 ] && n=5
			local_pair "$sdev" "$cdev" 120 \
				"ibv_rc_pingpong -d $sdev -g $sg -s $size -n $n" \
				"ibv_rc_pingpong -d $cdev -g $cg -s $size -n $n 127.0.0.1" >/tmp/pp.log 2>&1 ||
				{ cat /tmp/pp.log; log "FAIL: pingpong $tag $size"; fail=1; }
		done
		log "pingpong $tag: 1 B .. 1 MiB OK"
		if [ "$sdev" = "$cdev" ]; then
			# one device: what it sent, it received, and all of it
			# went around the IP stack (roce_loop.c)
			tx=$(($(counter "$sdev" tx_packets) - tx0)) rx=$(($(counter "$sdev" rx_packets) - rx0))
			lp=$(($(counter "$sdev" tx_looped) - lp0))
			log "$sdev $kind: tx_packets +$tx rx_packets +$rx tx_looped +$lp"
			[ "$tx" -gt 0 ] && [ "$tx" = "$rx" ] || { log "FAIL: $tag: sent $tx, received $rx"; fail=1; }
			[ "$lp" = "$tx" ] || { log "FAIL: $tag: $lp of $tx packets looped back"; fail=1; }
		fi
	done
	# perftest over the IPv4-mapped GID and GID 0
	for kind in v4 ll; do
		sg=$(gidx "$sdev" $kind) cg=$(gidx "$cdev" $kind)
		for t in ib_write_bw ib_read_bw ib_send_bw ib_atomic_bw ib_write_lat ib_read_lat ib_send_lat ib_atomic_lat; do
			args="-n 200"
			case $t in *_bw) [ $t = ib_atomic_bw ] || args="$args -s 65536" ;; esac
			out=$(local_pair "$sdev" "$cdev" 120 "$t -d $sdev -x $sg $args" \
				"$t -d $cdev -x $cg $args 127.0.0.1" 2>&1)
			if [ $? != 0 ] && ! grep -q "Can't produce a report" <<<"$out"; then
				echo "$out"
				log "FAIL: $t $sdev<-$cdev $kind"
				fail=1
				continue
			fi
			printf '%-14s %-14s %-3s %s\n' "$t" "$sdev<-$cdev" $kind \
				"$(grep -E '^ *[0-9]+ +[0-9]+ ' <<<"$out" | grep -v server | head -1 | tr -s ' ')"
		done
	done
	# data integrity: every opcode, 1 B .. 1 MiB, over IPv4 and IPv6
	for v in "" -6; do
		port=$((${port:-18700} + 1))
		"$integ" -d "$sdev" -p $port --timeout "$(scaled 60)" $v -n 300 -m 1M -s $port >/tmp/integ.srv 2>&1 &
		spid=$!
		wait_listen "" $port $spid || { cat /tmp/integ.srv; die "integrity server did not start"; }
		if "$integ" -d "$cdev" -p $port --timeout "$(scaled 60)" $v -n 300 -m 1M -s $port 127.0.0.1 >/tmp/integ.cli 2>&1 &&
			wait $spid; then
			log "integrity $sdev<-$cdev ${v:-v4}: $(tail -n 1 /tmp/integ.cli)"
		else
			wait $spid
			sed 's/^/    server: /' /tmp/integ.srv
			sed 's/^/    client: /' /tmp/integ.cli
			log "FAIL: integrity $sdev<-$cdev ${v:-v4}"
			fail=1
		fi
	done
done
rdma statistic show link roce0/1
rdma statistic show link roce1/1
late=0 unknown=0
for d in roce0 roce1; do
	for c in rx_drop_bad_icrc rx_drop_bad_address tx_drop_loop_full; do
		[ "$(counter $d $c)" = 0 ] || { log "FAIL: $d $c = $(counter $d $c)"; fail=1; }
	done
	late=$((late + $(counter $d retransmits) + $(counter $d duplicate_requests)))
	unknown=$((unknown + $(counter $d rx_drop_unknown_qp)))
done
# A packet for a destroyed QP can only be a late copy: a retransmitted
# request, or the answer to a duplicate, arriving after its test ended.
[ "$unknown" -le "$late" ] ||
	{ log "FAIL: $unknown packets for unknown QPs, more than the $late retransmits and duplicates"; fail=1; }
log "packets for unknown QPs: $unknown (retransmits and duplicates: $late)"

# The peer device goes away mid-transfer (IPv6: looped back, not over the
# cable): the survivor's QP fails like
# one whose remote host went away (retry exceeded), it does not hang.
tx0=$(counter roce0 tx_packets)
ib_write_bw -d roce1 -x "$v6_1" -D 60 -s 65536 >/tmp/gone.srv 2>&1 &
spid=$!
wait_listen "" 18515 $spid || { cat /tmp/gone.srv; die "ib_write_bw server did not start"; }
timeout "$(scaled 120)" ib_write_bw -d roce0 -x "$v6_0" -D 60 -s 65536 127.0.0.1 >/tmp/gone.cli 2>&1 &
cpid=$!
busy() { [ $(($(counter roce0 tx_packets) - tx0)) -gt 5000 ]; }
retry_until 30 busy
rdma link delete roce1 || die "delete roce1 under traffic"
wait $cpid
crc=$?
wait $spid
[ $crc != 124 ] || die "the survivor hung after its peer device was deleted"
grep -q "status 12" /tmp/gone.cli ||
	{ sed 's/^/    client: /' /tmp/gone.cli; log "FAIL: no retry-exceeded completion after the peer device was deleted (status $crc)"; fail=1; }
log "peer device deleted under traffic: $(grep -m1 'status 12' /tmp/gone.cli)"
rdma link delete roce0 || die "delete roce0"
"$IP" link del sr0
[ $fail = 0 ] || die "see above"
echo "roce_loopback OK"
