#!/bin/bash
# The device or its netdev goes away under traffic on 64 QPs (ib_write_bw
# -q 64 between roce0 here and roce1 in netns peer): `rdma link delete`
# of either end, the netdev set down, the veth deleted, and `rmmod
# softrnic`.  Each time both tools must end by themselves (an error, not
# a hang: a 90 s bound), every QP must be released, the module must keep
# no reference, and traffic must pass again once the device is back.
# timeout: 600
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"

command -v ib_write_bw >/dev/null || skip "perftest not installed"
have_softrnic || skip "softrnic.ko not built"

PORT=18600
SLOW=$(perftest_scaled_opts)
# With netdev down only running out of retries ends the client, and that
# must come within its run: ~3 s with perftest's 67 ms ACK timeout, ~51 s
# with SLOW's 1.07 s (8 expiries, the wait doubling up to 8 times), so
# the duration is scaled too.  A client whose run ends first hangs in its
# closing exchange with the server over the link that is down.
BW="ib_write_bw -q 64 -s 4096 -D $(scaled 40) -F $SLOW"

held() {
	{ rdma resource show qp; in_peer rdma resource show qp; } 2>/dev/null |
		grep -c ib_write_bw
}
none_held() { [ "$(held)" -eq 0 ]; }
gone() { ! kill -0 "$1" 2>/dev/null; }
tool_running() { pgrep -x ib_write_bw >/dev/null; }

# traffic_start: the pair in the background, spid/cpid, until both run
# with their QPs connected (the client's QPs in RTS).
traffic_start() {
	PORT=$((PORT + 1))
	in_peer timeout "$(scaled 90)" $BW -d roce1 -x "$g1" -p $PORT >/tmp/rm.srv 2>&1 &
	spid=$!
	wait_listen in_peer $PORT $spid || { cat /tmp/rm.srv; die "ib_write_bw server did not start"; }
	timeout "$(scaled 90)" $BW -d roce0 -x "$g0" -p $PORT 10.0.0.2 >/tmp/rm.cli 2>&1 &
	cpid=$!
	try_until 30 sh -c '[ "$(rdma resource show qp 2>/dev/null | grep ib_write_bw | grep -c RTS)" -ge 64 ]' ||
		{ cat /tmp/rm.srv /tmp/rm.cli; die "64 QPs never reached RTS"; }
	sleep 1	# well into the flow
}

# traffic_end NAME [CMD...]: both tools end on their own; report how.
# CMD runs once the client has ended, before waiting for the server.
traffic_end() {
	local name=$1 t0=$SECONDS s=0 c=0
	shift
	wait $cpid || c=$?
	[ $# -eq 0 ] || "$@"
	wait $spid || s=$?
	[ $c != 124 ] && [ $s != 124 ] ||
		{ cat /tmp/rm.srv /tmp/rm.cli; die "$name: ib_write_bw hung (killed by timeout)"; }
	log "$name: client exit $c, server exit $s, $((SECONDS - t0)) s after the event"
	try_until 30 none_held || die "$name: QPs left: $(rdma resource show qp)"
}

# traffic_ok NAME: a short clean run passes.
traffic_ok() {
	PORT=$((PORT + 1))
	pair_run in_peer "" 120 "ib_write_bw -q 64 -s 4096 -n 200 -F $SLOW -d roce1 -x $g1 -p $PORT" \
		"ib_write_bw -q 64 -s 4096 -n 200 -F $SLOW -d roce0 -x $g0 -p $PORT 10.0.0.2" >/tmp/rm.ok 2>&1 ||
		{
			cat /tmp/rm.ok
			rdma statistic show link roce0/1
			in_peer rdma statistic show link roce1/1
			die "$1: traffic does not pass afterwards"
		}
	log "$1: 64 QPs carry traffic again"
}

roce_pair_up

traffic_start
in_peer rdma link delete roce1 || die "delete roce1 under traffic"
traffic_end "delete the server's device"
in_peer rdma link add roce1 type roce netdev sr1 || die "re-add roce1"
wait_gid g1 roce1 "$GID4_1"
traffic_ok "delete the server's device"

traffic_start
rdma link delete roce0 || die "delete roce0 under traffic"
traffic_end "delete the client's device"
rdma link add roce0 type roce netdev sr0 || die "re-add roce0"
wait_gid g0 roce0 "$GID4_0"
traffic_ok "delete the client's device"

# The server waits for the client's last word over TCP, which crosses the
# same link: it can only hear of the client's end once the link is back.
traffic_start
"$IP" link set sr0 down || die "sr0 down"
traffic_end "netdev down" "$IP" link set sr0 up
retry_until 10 _net_carrier_up
wait_gid g0 roce0 "$GID4_0"
traffic_ok "netdev down and up"

# Both devices go with the veth; the client fails by itself.  The server
# waits for the client's word over TCP on that veth, which can never come
# now (perftest does not watch for device removal): it is stopped by hand.
traffic_start
"$IP" link delete sr0 || die "delete the veth under traffic"
traffic_end "veth deleted" pkill -x ib_write_bw
no_devices() { ! rdma link show | grep -q roce0 && ! in_peer rdma link show | grep -q roce1; }
try_until 20 no_devices || die "a device outlived its netdev: $(rdma link show; in_peer rdma link show)"
roce_pair_up
traffic_ok "veth deleted and made again"

# rmmod while user QPs exist: the module is in use and stays (ib_uverbs
# holds it), or goes after disassociating them; either way no splat, the
# tools end, and nothing is left.
traffic_start
if rmmod softrnic 2>/tmp/rm.err; then
	log "rmmod under traffic: unloaded, the tools were disassociated"
	traffic_end "rmmod"
	roce_pair_up
else
	log "rmmod under traffic refused: $(cat /tmp/rm.err)"
	traffic_end "rmmod refused"
fi
traffic_ok "after rmmod"

rdma link delete roce0 || die "delete roce0"
in_peer rdma link delete roce1 || die "delete roce1"
unload_softrnic || die "rmmod softrnic at the end: a reference was leaked"
net_teardown
echo "fault_removal OK"
