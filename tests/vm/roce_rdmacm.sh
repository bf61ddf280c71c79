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


# wait_cm_listen PREFIX PORT PID: until an RDMA CM id listens on PORT in
# the namespace PREFIX runs in, or process PID is gone.
wait_cm_listen() {
	local pfx=$1 port=$2 pid=$3 i
	for ((i = 0; i < 300; i++)); do
		$pfx rdma resource show cm_id 2>/dev/null |
			grep -q "state LISTEN .*src-addr [^ ]*:$port\b" && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

cm_not_listening() {
	! $1 rdma resource show cm_id 2>/dev/null |
		grep -q "state LISTEN .*src-addr [^ ]*:$2\b"
}

# cm NAME SRV_PFX CLI_PFX PORT "SERVER CMD" "CLIENT CMD": server under
# SRV_PFX ("" or in_peer) once its CM id listens on PORT, then the client
# under CLI_PFX; both must succeed within 120 s.
cm() {
	local name=$1 spfx=$2 cpfx=$3 port=$4 srv=$5 cli=$6 spid rc=0 try
	log "$name"
	# stdout line-buffered: a tool's error (stderr) stays in its place
	# among what it printed before, in the log of a failure
	# shellcheck disable=SC2086
	$spfx timeout 120 stdbuf -oL $srv >"/tmp/cm.srv" 2>&1 &
	spid=$!
	wait_cm_listen "$spfx" "$port" "$spid" || rc=101
	# The CM id shows as LISTEN a moment before ib_cm listens on the
	# device: a REQ in between is rejected as for an unknown service
	# (reason 8).  Only that is retried, twice.
	for try in 1 2 3; do
		[ $rc = 0 ] || break
		# shellcheck disable=SC2086
		$cpfx timeout 120 stdbuf -oL $cli >/tmp/cm.cli 2>&1 && break
		rc=$?
		grep -qE "REJECTED[,;]? error:? 8" /tmp/cm.cli && [ $try -lt 3 ] || break
		log "$name: rejected before the listener was ready; again"
		rc=0
	done
	# a server that serves forever (CM_SERVES_FOREVER=its name) is stopped
	if [ -n "${CM_SERVES_FOREVER:-}" ]; then
		pkill -x "$CM_SERVES_FOREVER"
		wait "$spid"
		spid=
	fi
	[ -z "$spid" ] || wait "$spid" || { [ $rc = 0 ] && rc=100; }
	# the next server may reuse the port: its listener must be gone
	[ $rc != 0 ] || retry_until 20 cm_not_listening "$spfx" "$port"
	if [ $rc != 0 ]; then
		sed 's/^/    server: /' /tmp/cm.srv
		sed 's/^/    client: /' /tmp/cm.cli
		die "$name: status $rc"
	fi
	tail -n 2 /tmp/cm.cli | sed 's/^/    /' >&2
}

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
	$s timeout 120 mckey -m 239.1.2.3 -b "$a" -C 10 -S 512 >/tmp/cm.srv 2>&1 &
	spid=$!
	retry_until 30 mc_joined "$s" 239.1.2.3
	for try in $(seq 20); do
		kill -0 $spid 2>/dev/null || break
		$c timeout 60 mckey -m 239.1.2.3 -s -b "$ca" -C 10 -S 512 >/tmp/cm.cli 2>&1 ||
			{ cat /tmp/cm.cli; die "$w: mckey sender failed"; }
	done
	wait $spid || { cat /tmp/cm.srv; die "$w: mckey receiver failed"; }
	tail -n 1 /tmp/cm.srv | sed 's/^/    /' >&2
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
		grep -E "connect" /tmp/cm.cli | sed 's/^/    /' >&2 ;;
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
timeout 30 rping -c -a 10.0.0.2 -p 9999 -C 1 >/tmp/cm.cli 2>&1 && die "rping to nobody connected"
ms=$(((${EPOCHREALTIME/./} - start) / 1000))
cat /tmp/cm.cli >&2
grep -q REJECTED /tmp/cm.cli || die "connect to nobody: no REJECT"
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
