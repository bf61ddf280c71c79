#!/bin/bash
# RoCEv2 RC transport: ibv_rc_pingpong softrnic <-> softrnic at 1 B .. 1 MiB,
# then softrnic <-> rdma_rxe both ways (wire compatibility, ICRC included).
# timeout: 900
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"

have_softrnic || skip "softrnic.ko not built"
roce_pair_up
log "roce0 GID $g0, roce1 GID $g1"

for size in 1 64 1000 1024 1025 4096 65536 1048576; do
	n=50
	[ "$size" -ge 65536 ] && n=10
	log "softrnic <-> softrnic: $size bytes x $n"
	run_pair 120 "ibv_rc_pingpong -d roce1 -g $g1 -s $size -n $n" \
		"ibv_rc_pingpong -d roce0 -g $g0 -s $size -n $n 10.0.0.2" ||
		die "pingpong softrnic<->softrnic size $size"
done
rdma statistic show link roce0/1 || true
rdma link delete roce0 || die "delete roce0"

# rxe in init_net (the only namespace it works in on 6.1), softrnic in peer.
modprobe rdma_rxe || die "modprobe rdma_rxe"
rdma link add rxe0 type rxe netdev sr0 || die "add rxe0"
wait_gid r0 rxe0 "$GID4_0"
for size in 1 4096 65536; do
	log "rxe client -> softrnic server: $size bytes"
	run_pair 120 "ibv_rc_pingpong -d roce1 -g $g1 -s $size -n 20" \
		"ibv_rc_pingpong -d rxe0 -g $r0 -s $size -n 20 10.0.0.2" ||
		die "pingpong rxe->softrnic size $size"
	log "softrnic client -> rxe server: $size bytes"
	# the server in init_net this time
	pair_run "" in_peer 120 "ibv_rc_pingpong -d rxe0 -g $r0 -s $size -n 20" \
		"ibv_rc_pingpong -d roce1 -g $g1 -s $size -n 20 10.0.0.1" ||
		die "pingpong softrnic->rxe size $size"
done
rdma statistic show link roce1/1 || true
rdma link delete rxe0
in_peer rdma link delete roce1
modprobe -r rdma_rxe
net_teardown
echo "roce_pingpong OK"
