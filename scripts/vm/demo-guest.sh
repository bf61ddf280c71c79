#!/bin/bash
# Guest half of scripts/demo (`make demo`): two hosts joined by a veth pair
# (sr0 here, sr1 in netns "peer"), softrnic devices on both, and what the
# standard tools say about them.  Every step is shown with its command; a
# failing step is reported and the demo goes on, exiting non-zero at the end.
#
# The demo ends with real RDMA traffic: ibv_rc_pingpong between roce1
# (server, in peer) and roce0 (client) over the RoCEv2 RC transport;
# SOFTRNIC_DEMO_TRAFFIC=0 leaves it out.
. "$SOFTRNIC_ROOT/tests/vm/lib.sh"

failed=()

heading() { printf '\n===== %s =====\n' "$*"; }

# step TITLE CMD [ARGS...]: show and run one demo step.
step() {
	local title=$1
	shift
	heading "$title"
	printf '$ %s\n' "$*"
	"$@"
	local rc=$?
	if [ $rc -ne 0 ]; then
		echo "!! failed (exit status $rc)"
		failed+=("$title")
	fi
	return $rc
}

# Index of the RoCE v2 GID of device $1 (port 1) that holds IPv4 address
# $2 (as ::ffff:a.b.c.d).  RoCE v2 between two IPv4 hosts needs it: -g.
roce_gid_index() {
	local dev=$1 want f idx
	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${2//./ })
	for f in /sys/class/infiniband/"$dev"/ports/1/gids/*; do
		idx=${f##*/}
		[ "$(cat "$f" 2>/dev/null)" = "$want" ] || continue
		[ "$(cat "/sys/class/infiniband/$dev/ports/1/gid_attrs/types/$idx" 2>/dev/null)" = "RoCE v2" ] || continue
		echo "$idx"
		return 0
	done
	return 1
}

# RC ping-pong: server on roce1 in the peer namespace, client on roce0.
demo_traffic() {
	local g0 g1 srv out rc
	heading "RC traffic: ibv_rc_pingpong roce1 (server, peer) <- roce0 (client)"
	g0=$(roce_gid_index roce0 10.0.0.1) || { echo "!! roce0 has no RoCE v2 GID for 10.0.0.1"; failed+=(traffic); return 1; }
	g1=$(roce_gid_index roce1 10.0.0.2) || { echo "!! roce1 has no RoCE v2 GID for 10.0.0.2"; failed+=(traffic); return 1; }
	out=$(mktemp)
	echo "\$ ip netns exec peer ibv_rc_pingpong -d roce1 -g $g1 &"
	# Line-buffered, so a run cut short by the timeout still shows how far
	# it got.
	in_peer timeout 180 stdbuf -oL ibv_rc_pingpong -d roce1 -g "$g1" >"$out" 2>&1 &
	srv=$!
	# The server needs a moment to listen on its TCP port (18515).
	echo "\$ ibv_rc_pingpong -d roce0 -g $g0 10.0.0.2"
	# Retry only while the server is not listening yet.
	for _ in $(seq 50); do
		timeout 180 stdbuf -oL ibv_rc_pingpong -d roce0 -g "$g0" 10.0.0.2 >"$out.client" 2>&1
		rc=$?
		grep -q "Couldn't connect" "$out.client" && kill -0 "$srv" 2>/dev/null || break
		sleep 0.2
	done
	cat "$out.client"
	rm -f "$out.client"
	wait "$srv"
	local src=$?
	echo "--- server output:"
	cat "$out"
	rm -f "$out"
	if [ $rc -ne 0 ] || [ $src -ne 0 ]; then
		echo "!! ibv_rc_pingpong failed (client $rc, server $src)"
		rdma statistic show link roce0/1
		in_peer rdma statistic show link roce1/1
		dmesg | tail -20
		failed+=(traffic)
		return 1
	fi
}

heading "softrnic demo in a VM: kernel $(uname -r)"
if ! have_softrnic; then
	echo "!! softrnic.ko is not built (kernel/softrnic.ko); the softrnic steps will fail"
fi

heading "network: sr0 (10.0.0.1, this namespace) <-> sr1 (10.0.0.2, netns peer)"
net_setup
"$IP" -br addr show dev sr0
in_peer "$IP" -br addr show dev sr1

step "RoCE device on sr0" rdma link add roce0 type roce netdev sr0
step "RoCE device on sr1, in netns peer" ip netns exec peer rdma link add roce1 type roce netdev sr1
step "iWARP device on sr0" rdma link add iw0 type iwarp netdev sr0
step "rdma link" rdma link
step "ibv_devices" ibv_devices
step "ibv_devinfo" ibv_devinfo
step "softrnic list" softrnic list

if [ "${SOFTRNIC_DEMO_TRAFFIC:-1}" = 1 ]; then
	demo_traffic
else
	heading "RC traffic"
	echo "(skipped: SOFTRNIC_DEMO_TRAFFIC=0)"
fi

heading "cleanup"
for d in iw0 roce0; do rdma link delete "$d" 2>/dev/null; done
in_peer rdma link delete roce1 2>/dev/null
net_teardown
unload_softrnic || echo "!! rmmod softrnic failed"

if [ ${#failed[@]} -gt 0 ]; then
	heading "demo: ${#failed[@]} step(s) failed"
	printf '  %s\n' "${failed[@]}"
	exit 1
fi
heading "demo: all steps succeeded"
