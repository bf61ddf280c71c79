#!/bin/bash
# softrnic and rdma_rxe on one host, in both load orders, both carrying
# traffic at the same time; and a UDP socket bound to port 4791 after
# softrnic's devices came.  rdma_rxe on 6.1 binds UDP 4791 in init_net
# when it is loaded and works only there; softrnic binds no socket and
# takes its packets before the UDP layer (kernel/roce/roce_net.c), so
# neither may take the other's packets, whoever came first.
#   sr0 (init_net, rxe0)    <-> sr1 (netns peer,  roce1)   rxe <-> softrnic
#   sr2 (init_net, roce2)   <-> sr3 (netns peer2, roce3)   softrnic <-> softrnic
# Also: devices of both drivers and both wires on one netdev.
# timeout: 600
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"

have_softrnic || skip "softrnic.ko not built"
command -v ib_write_bw >/dev/null || skip "perftest not installed"

# --- devices of both drivers on one netdev -----------------------------------
net_setup
modprobe rdma_rxe || die "modprobe rdma_rxe"
rdma link add rxe0 type rxe netdev sr0 || die "add rxe0"
rdma link add roce0 type roce netdev sr0 || die "add roce0 next to rxe0"
rdma link add iw0 type iwarp netdev sr0 || die "add iw0 next to rxe0"
out=$(ibv_devices)
echo "$out"
for d in rxe0 roce0 iw0; do grep -q "$d" <<<"$out" || die "$d missing"; done
ibv_devinfo -d rxe0 | grep -q PORT_ACTIVE || die "rxe0 broken by softrnic"
ibv_devinfo -d roce0 | grep -q PORT_ACTIVE || die "roce0 broken by rxe"
# Each provider claims only its own device.
ibv_devinfo -d roce0 2>&1 | grep -qi "no userspace" && die "roce0 unclaimed"
rdma link delete roce0
rdma link delete iw0
rdma link delete rxe0
modprobe -r rdma_rxe || die "rmmod rdma_rxe"

# --- traffic -----------------------------------------------------------------
P2=peer2
in_peer2() { "$IP" netns exec $P2 "$@"; }
pair2_up() {
	"$IP" link del sr2 2>/dev/null
	"$IP" netns del $P2 2>/dev/null
	"$IP" link add sr2 type veth peer name sr3 && "$IP" netns add $P2 &&
		"$IP" link set sr3 netns $P2 &&
		"$IP" addr add 10.0.1.1/24 dev sr2 && "$IP" link set sr2 up &&
		in_peer2 "$IP" link set lo up &&
		in_peer2 "$IP" addr add 10.0.1.2/24 dev sr3 &&
		in_peer2 "$IP" link set sr3 up || die "second veth pair"
}
GID4_2=0000:0000:0000:0000:0000:ffff:0a00:0101
GID4_3=0000:0000:0000:0000:0000:ffff:0a00:0102

add_softrnic() {
	in_peer rdma link add roce1 type roce netdev sr1 || die "add roce1"
	rdma link add roce2 type roce netdev sr2 || die "add roce2"
	in_peer2 rdma link add roce3 type roce netdev sr3 || die "add roce3"
	wait_gid g1 roce1 "$GID4_1"
	wait_gid g2 roce2 "$GID4_2"
	PEER_NS=$P2 wait_gid g3 roce3 "$GID4_3"
}
add_rxe() {
	modprobe rdma_rxe || die "modprobe rdma_rxe ($1)"
	rdma link add rxe0 type rxe netdev sr0 || die "add rxe0 ($1)"
	wait_gid r0 rxe0 "$GID4_0"
}

# Seconds each ib_write_bw runs: under the debug kernel (make
# check-debug) rxe's first 128 WRITEs of 64 KiB took longer than 4 s,
# and a run that completes none fails.
BW_SECONDS=$(scaled 4)

# traffic WHAT: at the same time, ib_write_bw for BW_SECONDS between rxe0 and
# roce1 and between roce2 and roce3 (clients in init_net), and SENDs of
# ibv_rc_pingpong on both pairs; every run must succeed and move data.
# (ib_send_bw -D against rxe is left out: it fails now and then under
# load on rxe's side whatever the peer.)
traffic() {
	local what=$1 pids=() names=() i rc=0 port=18600 t pp=()
	in_peer ibv_rc_pingpong -d roce1 -g "$g1" -p 18700 -n 200 >/tmp/pp1.srv 2>&1 &
	wait_listen in_peer 18700 $! || die "pingpong server on roce1"
	ibv_rc_pingpong -d rxe0 -g "$r0" -p 18700 -n 200 10.0.0.2 >/tmp/pp1.cli 2>&1 &
	pp+=($!)
	in_peer2 ibv_rc_pingpong -d roce3 -g "$g3" -p 18701 -n 200 >/tmp/pp2.srv 2>&1 &
	PEER_NS=$P2 wait_listen in_peer 18701 $! || die "pingpong server on roce3"
	ibv_rc_pingpong -d roce2 -g "$g2" -p 18701 -n 200 10.0.1.2 >/tmp/pp2.cli 2>&1 &
	pp+=($!)
	for t in ib_write_bw; do
		port=$((port + 1))
		in_peer $t -d roce1 -x "$g1" -D "$BW_SECONDS" -s 65536 -p $port >/tmp/c$port.srv 2>&1 &
		wait_listen in_peer $port $! || die "$t server on roce1"
		$t -d rxe0 -x "$r0" -D "$BW_SECONDS" -s 65536 -p $port 10.0.0.2 >/tmp/c$port.cli 2>&1 &
		pids+=($!) names+=("$t rxe0->roce1 $port")
		port=$((port + 1))
		in_peer2 $t -d roce3 -x "$g3" -D "$BW_SECONDS" -s 65536 -p $port >/tmp/c$port.srv 2>&1 &
		PEER_NS=$P2 wait_listen in_peer $port $! || die "$t server on roce3"
		$t -d roce2 -x "$g2" -D "$BW_SECONDS" -s 65536 -p $port 10.0.1.2 >/tmp/c$port.cli 2>&1 &
		pids+=($!) names+=("$t roce2->roce3 $port")
	done
	for i in 0 1; do
		if wait "${pp[$i]}" && grep -q "iters in" /tmp/pp$((i + 1)).cli; then
			log "$what: pingpong pair $((i + 1)): $(grep 'iters in' /tmp/pp$((i + 1)).cli)"
		else
			cat /tmp/pp$((i + 1)).cli /tmp/pp$((i + 1)).srv
			log "FAIL: $what: pingpong pair $((i + 1)) (1: rxe0->roce1, 2: roce2->roce3)"
			rc=1
		fi
	done
	for i in "${!pids[@]}"; do
		port=${names[$i]##* }
		if wait "${pids[$i]}" && res=$(grep -E '^ *65536 +[0-9]+ ' /tmp/c$port.cli) &&
			awk '{ exit !($4 > 0) }' <<<"$res"; then
			log "$what: ${names[$i]% *}: $(tr -s ' ' <<<"$res")"
		else
			sed 's/^/    client: /' /tmp/c$port.cli
			sed 's/^/    server: /' /tmp/c$port.srv
			log "FAIL: $what: ${names[$i]% *}"
			rc=1
		fi
	done
	wait
	return $rc
}

fail=0
# Order 1: rdma_rxe first (a host where rxe is in use), then softrnic.
pair2_up
add_rxe "before softrnic"
add_softrnic
traffic "rxe first" || fail=1
rx=$(counter roce2 rx_packets)
[ "$rx" -gt 0 ] || { log "FAIL: roce2 in init_net received nothing next to rxe"; fail=1; }
in_peer rdma link delete roce1
rdma link delete roce2
in_peer2 rdma link delete roce3
rdma link delete rxe0
modprobe -r rdma_rxe || die "rmmod rdma_rxe"

# Order 2: softrnic first, with a device in init_net; then rdma_rxe, which
# must be able to bind its port there.
add_softrnic
add_rxe "after softrnic"
traffic "softrnic first" || fail=1

# A program binds UDP 4791 where softrnic devices already work: both go on.
in_peer2 python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 4791))
print("bound", flush=True)
time.sleep(30)
' >/tmp/bound.log 2>&1 &
bpid=$!
retry_until 10 grep -q bound /tmp/bound.log
in_peer2 ibv_rc_pingpong -d roce3 -g "$g3" -n 50 >/tmp/pp.srv 2>&1 &
spid=$!
PEER_NS=$P2 wait_listen in_peer 18515 $spid || die "pingpong server"
timeout 60 ibv_rc_pingpong -d roce2 -g "$g2" -n 50 10.0.1.2 >/tmp/pp.cli 2>&1 ||
	{ cat /tmp/pp.cli /tmp/pp.srv; log "FAIL: roce2 <-> roce3 with UDP 4791 bound by a program"; fail=1; }
wait $spid || { cat /tmp/pp.srv; log "FAIL: pingpong server"; fail=1; }
kill $bpid 2>/dev/null
wait $bpid 2>/dev/null
log "UDP 4791 bound by a program in peer2: pingpong $(tail -n 1 /tmp/pp.cli)"

rdma statistic show link roce2/1
in_peer rdma link delete roce1
rdma link delete roce2
in_peer2 rdma link delete roce3
rdma link delete rxe0
modprobe -r rdma_rxe || die "rmmod rdma_rxe"
"$IP" link del sr2
"$IP" netns del $P2
net_teardown
[ $fail = 0 ] || die "see above"
echo "coexist OK"
