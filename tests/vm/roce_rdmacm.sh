#!/bin/bash
# RDMA CM over RoCEv2 (CM MADs on the GSI QP, UD datagrams, multicast):
# librdmacm's tools, perftest -R and rsockets (rstream, riostream),
# softrnic <-> softrnic between two namespaces over IPv4, IPv6 and a VLAN,
# both ends on one device, and softrnic <-> rdma_rxe both ways.  A connect
# to a port nobody listens on is rejected at once (a CM REJ), no timeout.
# timeout: 1200
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"

have_softrnic || skip "softrnic.ko not built"
roce_pair_up
wait_gid g6_0 roce0 "$GID6_0"
wait_gid g6_1 roce1 "$GID6_1"


mc_joined() { $1 "$IP" maddr show | grep -qE "inet +$2( |$)"; }

# mckey_run SRV_PFX CLI_PFX SRV_ADDR WHAT: UD multicast through rdma_cm:
# a receiver joins 239.1.2.3 at SRV_ADDR and waits for 10 datagrams; a
# sender joins from the other end and sends 10, again until the receiver
# has them all (a datagram sent before the receiver's QP is attached,
# right after its IP join shows, is lost, as multicast may be).
mckey_run() {
	local s=$1 c=$2 a=$3 w=$4 ca spid try
	case $s/$c/$a in
	//*) ca=$a ;;
	*/10.0.0.2) ca=10.0.0.1 ;;
	*) ca=10.0.0.2 ;;
	esac
	log "$w: mckey"
	$s timeout 120 mckey -m 239.1.2.3 -b "$a" -C 10 -S 512 >"$CM_OUT.srv" 2>&1 &
	spid=$!
	retry_until 30 mc_joined "$s" 239.1.2.3
	for try in $(seq 20); do
		kill -0 $spid 2>/dev/null || break
		$c timeout 60 mckey -m 239.1.2.3 -s -b "$ca" -C 10 -S 512 >"$CM_OUT.cli" 2>&1 ||
			{ cat "$CM_OUT.cli"; die "$w: mckey sender failed"; }
	done
	wait $spid || { cat "$CM_OUT.srv"; die "$w: mckey receiver failed"; }
	tail -n 1 "$CM_OUT.srv" | sed 's/^/    /' >&2
}

# tool NAME SRV_PFX CLI_PFX SRV_ADDR WHAT: one tool, its server at SRV_ADDR
tool() {
	local t=$1 s=$2 c=$3 a=$4 w=$5
	case $t in
	rping) cm "$w: rping -V" "$s" "$c" 7174 "rping -s -a $a -p 7174 -C 20 -S 4096 -V" \
		"rping -c -a $a -p 7174 -C 20 -S 4096 -V" ;;
	ucmatose) cm "$w: ucmatose" "$s" "$c" 7471 "ucmatose -b $a -c 4 -C 20 -S 1024" \
		"ucmatose -s $a -c 4 -C 20 -S 1024" ;;
	udaddy) cm "$w: udaddy" "$s" "$c" 7174 "udaddy -b $a -c 4 -C 20 -S 512" \
		"udaddy -s $a -c 4 -C 20 -S 512" ;;
	rdma_client) cm "$w: rdma_server/rdma_client" "$s" "$c" 7471 "rdma_server -s $a" \
		"rdma_client -s $a" ;;
	rstream) cm "$w: rstream" "$s" "$c" 7471 "rstream -b $a -T v -S 65536 -C 50" \
		"rstream -s $a -T v -S 65536 -C 50" ;;
	riostream) cm "$w: riostream" "$s" "$c" 7471 "riostream -b $a -T v -S 65536 -C 50" \
		"riostream -s $a -T v -S 65536 -C 50" ;;
	perftest) cm "$w: ib_send_bw -R" "$s" "$c" 18515 "ib_send_bw -R -n 200 -s 65536" \
		"ib_send_bw -R -n 200 -s 65536 $a"
		cm "$w: ib_write_lat -R" "$s" "$c" 18515 "ib_write_lat -R -n 200 -s 64" \
			"ib_write_lat -R -n 200 -s 64 $a"
		cm "$w: ib_send_bw -R -c UD" "$s" "$c" 18515 \
			"ib_send_bw -R -c UD -n 500 -s 1024" \
			"ib_send_bw -R -c UD -n 500 -s 1024 $a" ;;
	mckey) mckey_run "$s" "$c" "$a" "$w" ;;
	cmtime) CM_SERVES_FOREVER=cmtime cm "$w: cmtime" "$s" "$c" 7471 "cmtime -b $a" \
		"cmtime -s $a -c 50"
		grep -E "connect" "$CM_OUT.cli" | sed 's/^/    /' >&2 ;;
	*) die "tool $t?" ;;
	esac
}

# suite SRV_PFX CLI_PFX SRV_ADDR WHAT TOOL...
suite() {
	local s=$1 c=$2 a=$3 w=$4 t
	shift 4
	for t in "$@"; do
		tool "$t" "$s" "$c" "$a" "$w"
	done
}

ALL="rping ucmatose udaddy mckey rdma_client rstream riostream perftest cmtime"
# shellcheck disable=SC2086
suite in_peer "" 10.0.0.2 "softrnic <-> softrnic" $ALL
suite in_peer "" fd00::2 "softrnic <-> softrnic, IPv6" rping ucmatose udaddy rstream
# VLAN 10 on the veth pair, the devices on the real netdevs: CM MADs and
# data must go tagged, and answers find the VLAN's GID (IB_WC_WITH_VLAN).
vlan10_up
wait_gid gv0 roce0 0000:0000:0000:0000:0000:ffff:0a00:0a01
wait_gid gv1 roce1 0000:0000:0000:0000:0000:ffff:0a00:0a02
vrx=$(in_peer cat /sys/class/net/sr1.10/statistics/rx_bytes)
suite in_peer "" 10.0.10.2 "softrnic <-> softrnic, VLAN 10" rping ucmatose udaddy
vrx=$(($(in_peer cat /sys/class/net/sr1.10/statistics/rx_bytes) - vrx))
log "sr1.10 received $vrx bytes tagged"
[ "$vrx" -gt 100000 ] || die "RDMA CM over VLAN 10: only $vrx bytes came tagged"
"$IP" link del sr0.10
in_peer "$IP" link del sr1.10

suite "" "" 10.0.0.1 "one device" rping ucmatose udaddy mckey rdma_client perftest cmtime

log "connect to a port nobody listens on"
start=${EPOCHREALTIME/./}
timeout 30 rping -c -a 10.0.0.2 -p 9999 -C 1 >"$CM_OUT.cli" 2>&1 && die "rping to nobody connected"
ms=$(((${EPOCHREALTIME/./} - start) / 1000))
cat "$CM_OUT.cli" >&2
grep -q REJECTED "$CM_OUT.cli" || die "connect to nobody: no REJECT"
log "rejected after $ms ms"
[ "$ms" -lt 5000 ] || die "connect to nobody took $ms ms"

rdma statistic show link roce0/1
for c in rx_drop_bad_qkey rx_drop_bad_icrc rx_drop_length; do
	assert_eq "$(counter roce0 $c)" 0 "roce0 $c"
done
rxe_instead_of_roce0
suite in_peer "" 10.0.0.2 "rxe -> softrnic" rping ucmatose udaddy mckey rstream perftest cmtime
suite "" in_peer 10.0.0.1 "softrnic -> rxe" rping ucmatose udaddy mckey rstream perftest cmtime
rdma link delete rxe0
in_peer rdma link delete roce1
modprobe -r rdma_rxe
net_teardown
echo "roce_rdmacm OK"
