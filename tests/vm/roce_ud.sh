#!/bin/bash
# UD over RoCEv2: ibv_ud_pingpong (payload checked) at 1 B .. the path MTU
# and perftest's ib_send_bw/ib_send_lat -c UD, softrnic <-> softrnic over
# IPv4 and IPv6 GIDs, both ends on one device, and softrnic <-> rdma_rxe
# both ways.  The counters say the datagrams went as UD, one each.
# timeout: 900
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"

have_softrnic || skip "softrnic.ko not built"
roce_pair_up
wait_gid g6_0 roce0 "$GID6_0"
wait_gid g6_1 roce1 "$GID6_1"

# ud SRV_PFX CLI_PFX "SRVDEV GID" "CLIDEV GID" ADDR SIZE N
ud() {
	local sd cd
	read -r sd sg <<<"$3"
	read -r cd cg <<<"$4"
	pair_run "$1" "$2" 120 "ibv_ud_pingpong -c -d $sd -g $sg -s $6 -n $7" \
		"ibv_ud_pingpong -c -d $cd -g $cg -s $6 -n $7 $5"
}

sent0=$(counter roce0 ud_sends)
for size in 1 64 1000 1024; do
	log "softrnic <-> softrnic, IPv4: $size bytes"
	ud in_peer "" "roce1 $g1" "roce0 $g0" 10.0.0.2 $size 200 ||
		die "ud_pingpong IPv4 size $size"
done
log "softrnic <-> softrnic, IPv6: 1024 bytes"
ud in_peer "" "roce1 $g6_1" "roce0 $g6_0" 10.0.0.2 1024 200 ||
	die "ud_pingpong IPv6"
sent=$(($(counter roce0 ud_sends) - sent0))
# 5 runs x 200 iterations, one datagram each way each, plus the first
log "roce0 ud_sends +$sent"
[ "$sent" -ge 1000 ] || die "roce0 sent $sent UD datagrams, expected >= 1000"

log "one device, both ends: 1024 bytes"
ud "" "" "roce0 $g0" "roce0 $g0" 10.0.0.1 1024 200 || die "ud_pingpong loopback"
log "one device, both ends, IPv6: 64 bytes"
ud "" "" "roce0 $g6_0" "roce0 $g6_0" 10.0.0.1 64 200 ||
	die "ud_pingpong loopback IPv6"

# perftest: UD sends and their latency, two hosts and one device
for t in "ib_send_bw -c UD -s 1024 -n 2000" "ib_send_lat -c UD -s 64 -n 500"; do
	log "$t: softrnic <-> softrnic"
	run_pair 180 "$t -d roce1 -x $g1" "$t -d roce0 -x $g0 10.0.0.2" ||
		die "$t softrnic<->softrnic"
	log "$t: one device"
	pair_run "" "" 180 "$t -d roce0 -x $g0" "$t -d roce0 -x $g0 10.0.0.1" ||
		die "$t loopback"
done
rdma statistic show link roce0/1
for c in rx_drop_bad_qkey rx_drop_unknown_qp rx_drop_bad_icrc; do
	assert_eq "$(counter roce0 $c)" 0 "roce0 $c"
done
rxe_instead_of_roce0
for size in 1 1024; do
	log "rxe client -> softrnic server: $size bytes"
	ud in_peer "" "roce1 $g1" "rxe0 $r0" 10.0.0.2 $size 100 ||
		die "ud_pingpong rxe->softrnic size $size"
	log "softrnic client -> rxe server: $size bytes"
	ud "" in_peer "rxe0 $r0" "roce1 $g1" 10.0.0.1 $size 100 ||
		die "ud_pingpong softrnic->rxe size $size"
done
t="ib_send_bw -c UD -s 1024 -n 1000"
log "$t: rxe -> softrnic"
run_pair 180 "$t -d roce1 -x $g1" "$t -d rxe0 -x $r0 10.0.0.2" || die "$t rxe->softrnic"
log "$t: softrnic -> rxe"
pair_run "" in_peer 180 "$t -d rxe0 -x $r0" "$t -d roce1 -x $g1 10.0.0.1" ||
	die "$t softrnic->rxe"
rdma statistic show link roce1/1
rdma link delete rxe0
in_peer rdma link delete roce1
modprobe -r rdma_rxe
net_teardown
echo "roce_ud OK"
