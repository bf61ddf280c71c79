#!/bin/bash
# RoCEv2 path MTU: the QP's path_mtu (256 .. 4096) sets the payload of
# every packet, capped by the netdev's MTU.  ibv_rc_pingpong -m M moves
# 64 KiB messages; the packets the client puts on sr0 must number at least
# the data packets that MTU needs (fewer = a larger MTU than asked) and at
# most twice that plus slack (the rest are ACKs for what it receives).
# Then sr0/sr1 at MTU 9000: the ports go to active_mtu 4096 and 4096-byte
# payloads cross the veth, softrnic <-> softrnic and softrnic <-> rxe.
# timeout: 600
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"

have_softrnic || skip "softrnic.ko not built"
roce_pair_up
# The veth counts a UDP GSO skb once, however many packets it holds: with
# UDP segmentation off softrnic sends no batches, and every packet is
# counted as it crosses.
ethtool -K sr0 tx-udp-segmentation off || die "sr0: tx-udp-segmentation off"
in_peer ethtool -K sr1 tx-udp-segmentation off || die "sr1: tx-udp-segmentation off"

size=65536
n=5

tx_packets() { cat /sys/class/net/sr0/statistics/tx_packets; }

# active_mtu DEV [PREFIX]: the port's active MTU in bytes.
active_mtu() {
	${2:-} ibv_devinfo -d "$1" | awk '/active_mtu:/ { print $2; exit }'
}

# pingpong_mtu ASK EXPECT: run with path MTU ASK; the payload per packet
# must be EXPECT.
pingpong_mtu() {
	local ask=$1 expect=$2 before after sent data
	before=$(tx_packets)
	run_pair 120 "ibv_rc_pingpong -d roce1 -g $g1 -s $size -n $n -m $ask" \
		"ibv_rc_pingpong -d roce0 -g $g0 -s $size -n $n -m $ask 10.0.0.2" ||
		die "pingpong with path MTU $ask"
	after=$(tx_packets)
	sent=$((after - before))
	data=$((n * size / expect))
	log "path MTU $ask: $sent packets out of sr0, $data data packets at $expect bytes"
	[ "$sent" -ge "$data" ] ||
		die "path MTU $ask: $sent packets < $data: payloads larger than $expect"
	[ "$sent" -le $((2 * data + 40)) ] ||
		die "path MTU $ask: $sent packets > $((2 * data + 40)): payloads smaller than $expect"
}

assert_eq "$(active_mtu roce0)" 1024 "roce0 active_mtu at netdev MTU 1500"
for m in 256 512 1024; do
	pingpong_mtu "$m" "$m"
done
# More than the port's active MTU: capped to it (1024 at netdev MTU 1500),
# never IP-fragmented or dropped by the veth.
pingpong_mtu 2048 1024
pingpong_mtu 4096 1024

ip link set sr0 mtu 9000 || die "sr0 mtu 9000"
in_peer ip link set sr1 mtu 9000 || die "sr1 mtu 9000"
mtu_is() { [ "$(active_mtu "$1" "${3:-}")" = "$2" ]; }
retry_until 10 mtu_is roce0 4096
retry_until 10 mtu_is roce1 4096 in_peer
assert_eq "$(active_mtu roce0)" 4096 "roce0 active_mtu at netdev MTU 9000"
assert_eq "$(active_mtu roce1 in_peer)" 4096 "roce1 active_mtu at netdev MTU 9000"
pingpong_mtu 4096 4096
pingpong_mtu 2048 2048

# rxe speaks 4096-byte payloads too (wire compatibility at the largest MTU).
rdma link delete roce0 || die "delete roce0"
modprobe rdma_rxe || die "modprobe rdma_rxe"
rdma link add rxe0 type rxe netdev sr0 || die "add rxe0"
wait_gid r0 rxe0 "$GID4_0"
before=$(tx_packets)
run_pair 120 "ibv_rc_pingpong -d roce1 -g $g1 -s $size -n $n -m 4096" \
	"ibv_rc_pingpong -d rxe0 -g $r0 -s $size -n $n -m 4096 10.0.0.2" ||
	die "pingpong rxe -> softrnic at path MTU 4096"
log "rxe -> softrnic at 4096: $(($(tx_packets) - before)) packets out of sr0"
rdma link delete rxe0
modprobe -r rdma_rxe
in_peer rdma link delete roce1 || die "delete roce1"
net_teardown
echo "roce_mtu OK"
