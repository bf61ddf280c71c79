#!/bin/bash
# Guest half of scripts/bench (`make bench`): perftest and iperf3 over one
# veth pair, rdma_rxe first, then softrnic, in the same boot.  See
# Documentation/benchmarks.md.
#
# Output protocol (the host turns it into the table):
#   stdout  the log: one record per measurement, plus every tool's output
#           indented under a "=== ..." header
#             R IMPL TEST SIZE RUN VALUE   VALUE: number (Gbit/s for *_bw,
#                                          usec for *_lat: t_typical, and
#                                          t_min as TEST/min), fail, stall,
#                                          noveth, skip
#             I iperf3 RUN VALUE           Gbit/s, or fail/stall
#             P IMPL TEXT                  a note on a phase (table footer)
#             M KEY VALUE                  metadata (accel, kernel, ...)
#   stderr  one progress line per step
#
# Every command that touches RDMA or the network runs under a deadline
# (bounded), so a transport that hangs -- even in the kernel -- costs a
# timeout, never the run.  The script exits 0 once it has gone through
# its phases, whatever they measured.
#
# env (all optional): BENCH_RUNS (3; 1 with BENCH_QUICK=1), BENCH_QUICK,
#   BENCH_DURATION (s per bw run, 3), BENCH_LAT_ITERS (1000),
#   BENCH_BW_SIZES, BENCH_LAT_SIZES, BENCH_BW_TESTS, BENCH_LAT_TESTS,
#   BENCH_PHASES ("rxe iperf3 softrnic"), BENCH_IPERF_SECS (3),
#   BENCH_RUN_TIMEOUT (s beyond the expected run time, 45),
#   BENCH_BUDGET (s; cells not started by then are recorded "skip", 2400)

# shellcheck disable=SC2317 # functions called through try_until and traps
. "$SOFTRNIC_ROOT/tests/vm/lib.sh"
set -u

QUICK=${BENCH_QUICK:-0}
if [ "$QUICK" = 1 ]; then
	RUNS=${BENCH_RUNS:-1}
	BW_SIZES=${BENCH_BW_SIZES:-64 65536}
	LAT_SIZES=${BENCH_LAT_SIZES:-2 4096}
else
	RUNS=${BENCH_RUNS:-3}
	BW_SIZES=${BENCH_BW_SIZES:-64 4096 65536 1048576}
	LAT_SIZES=${BENCH_LAT_SIZES:-2 64 1024 4096}
fi
BW_TESTS=${BENCH_BW_TESTS:-ib_write_bw ib_read_bw ib_send_bw}
LAT_TESTS=${BENCH_LAT_TESTS:-ib_write_lat ib_send_lat}
DUR=${BENCH_DURATION:-3}
LAT_ITERS=${BENCH_LAT_ITERS:-1000}
PHASES=${BENCH_PHASES:-rxe iperf3 softrnic}
IPERF_SECS=${BENCH_IPERF_SECS:-3}
SLACK=${BENCH_RUN_TIMEOUT:-45}
BUDGET=${BENCH_BUDGET:-2400}
# A run that "succeeds" while moving fewer packets over sr0 did not
# measure the veth (e.g. the kernel routed it through lo): "noveth".
MIN_PKTS=100

A=10.0.0.1 # sr0, always in init_net
B=10.0.0.2 # sr1: init_net in the rxe phase, netns peer in the softrnic phase
PORT=18600 # perftest/iperf3 TCP port, a fresh one per run (no TIME_WAIT games)

WORK=$(mktemp -d /tmp/bench.XXXXXX)
BG_PIDS=() # servers we started, killed at exit

out() { printf '%s\n' "$*"; }
say() { printf '%(%H:%M:%S)T bench: %s\n' -1 "$*" >&2; }

# Indent a file into the log.
dump() { [ -s "$1" ] && sed 's/^/    | /' "$1"; }

# bounded SECS CMD [ARGS...]: CMD under `timeout SECS`, but never blocks
# more than SECS+10 s: a process stuck in the kernel (D state) outlives
# even SIGKILL, and `timeout` would wait for it forever.  Then 124 and the
# process is left behind.  No polling loop: nothing runs beside the
# measurement.
bounded() {
	local secs=$1 pid wd rc done_pid=
	shift
	timeout -k 3 "$secs" "$@" &
	pid=$!
	sleep $((secs + 10)) &
	wd=$!
	wait -n -p done_pid "$pid" "$wd"
	rc=$?
	if [ "$done_pid" = "$pid" ]; then
		# KILL: a watchdog killed before it has exec'd sleep is still
		# bash and would run this script's EXIT trap on SIGTERM.
		kill -KILL "$wd" 2>/dev/null
		wait "$wd" 2>/dev/null
		return "$rc"
	fi
	say "gave up waiting for a stuck process ($*)"
	return 124
}

# reap PID SECS: wait up to SECS for background PID; 124 if still running.
reap() {
	local pid=$1 secs=$2 wd rc done_pid=
	kill -0 "$pid" 2>/dev/null || {
		wait "$pid"
		return
	}
	sleep "$secs" &
	wd=$!
	wait -n -p done_pid "$pid" "$wd"
	rc=$?
	if [ "$done_pid" = "$pid" ]; then
		kill -KILL "$wd" 2>/dev/null
		wait "$wd" 2>/dev/null
		return "$rc"
	fi
	return 124
}

# listening PID PORT: does a TCP socket listen on PORT in PID's netns?
listening() {
	local hex f laddr st
	printf -v hex '%04X' "$2"
	for f in /proc/"$1"/net/tcp /proc/"$1"/net/tcp6; do
		while read -r _ laddr _ st _; do
			[ "$st" = 0A ] && [ "${laddr##*:}" = "$hex" ] && return 0
		done <"$f" 2>/dev/null
	done
	return 1
}

# wait_listen PID PORT: until the server listens (0) or exits / 20 s (1).
wait_listen() {
	local i
	for ((i = 0; i < 200; i++)); do
		listening "$1" "$2" && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# The guest's CPU time so far per state, in USER_HZ ticks summed over CPUs:
# "user system softirq idle" (user includes nice, system includes irq).
cpu_ticks() {
	local _cpu us ni sy id io irq sirq rest
	read -r _cpu us ni sy id io irq sirq rest </proc/stat
	echo "$((us + ni)) $((sy + irq)) $sirq $((id + io))"
}

# cpu_split BEFORE AFTER: where the CPUs' time went in between, in percent.
cpu_split() {
	local -a a b
	local t i
	read -r -a a <<<"$1"
	read -r -a b <<<"$2"
	t=0
	for i in 0 1 2 3; do t=$((t + b[i] - a[i])); done
	[ "$t" -gt 0 ] || t=1
	printf 'user %d%% system %d%% softirq %d%% idle %d%%' \
		$((100 * (b[0] - a[0]) / t)) $((100 * (b[1] - a[1]) / t)) \
		$((100 * (b[2] - a[2]) / t)) $((100 * (b[3] - a[3]) / t))
}

sr0_pkts() {
	local tx rx
	read -r tx </sys/class/net/sr0/statistics/tx_packets || tx=0
	read -r rx </sys/class/net/sr0/statistics/rx_packets || rx=0
	echo $((tx + rx))
}

# gid_index DEV IPV4: index of DEV's RoCE v2 GID ::ffff:IPV4 on port 1.
gid_index() {
	local dev=$1 want f i g t
	# shellcheck disable=SC2086 # split the dotted quad
	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${2//./ })
	for f in /sys/class/infiniband/"$dev"/ports/1/gids/*; do
		i=${f##*/}
		read -r g <"$f" 2>/dev/null || continue
		[ "$g" = "$want" ] || continue
		read -r t <"/sys/class/infiniband/$dev/ports/1/gid_attrs/types/$i" 2>/dev/null
		[ "$t" = "RoCE v2" ] && { echo "$i"; return 0; }
	done
	return 1
}

# wait_gid VAR DEV IPV4: the GID table follows netdev events asynchronously.
wait_gid() {
	local i
	try_until 20 gid_index "$2" "$3" >/dev/null || return 1
	i=$(gid_index "$2" "$3") || return 1
	printf -v "$1" '%s' "$i"
}

# ---------------------------------------------------------------- network

# The rxe topology: both veth ends in init_net (Linux 6.1's rdma_rxe works
# only there).  With 10.0.0.1 and 10.0.0.2 both local, the kernel would
# deliver 10.0.0.1 -> 10.0.0.2 through lo; rxe routes with the flow's oif
# set to its netdev, so per-oif rules, looked up before the local table,
# send it out of that veth end.  The far end accepts a packet whose source
# is one of its own addresses only with accept_local (and no rp_filter).
SAVED_SYSCTL=()
set_sysctl() {
	local old
	old=$(sysctl -n "$1" 2>/dev/null) || return 1
	SAVED_SYSCTL+=("$1=$old")
	sysctl -qw "$1=$2"
}

net_cleanup() {
	"$IP" rule del pref 100 2>/dev/null
	"$IP" rule del pref 101 2>/dev/null
	if ! "$IP" rule show pref 0 2>/dev/null | grep -q local; then
		"$IP" rule add pref 0 lookup local 2>/dev/null
	fi
	"$IP" rule del pref 1000 lookup local 2>/dev/null
	"$IP" route flush table 100 2>/dev/null
	"$IP" route flush table 101 2>/dev/null
	local kv
	for kv in "${SAVED_SYSCTL[@]}"; do sysctl -qw "$kv" 2>/dev/null; done
	SAVED_SYSCTL=()
	"$IP" link del sr0 2>/dev/null
	"$IP" netns del peer 2>/dev/null
	return 0
}

net_rxe_setup() {
	net_cleanup
	"$IP" link set lo up &&
		"$IP" link add sr0 type veth peer name sr1 &&
		"$IP" addr add $A/24 dev sr0 &&
		"$IP" addr add $B/24 dev sr1 || return 1
	local d
	for d in sr0 sr1; do
		set_sysctl net.ipv4.conf.$d.accept_local 1 &&
			set_sysctl net.ipv4.conf.$d.rp_filter 0 || return 1
	done
	set_sysctl net.ipv4.conf.all.rp_filter 0 || return 1
	"$IP" link set sr0 up && "$IP" link set sr1 up &&
		"$IP" route add 10.0.0.0/24 dev sr0 src $A table 100 &&
		"$IP" route add 10.0.0.0/24 dev sr1 src $B table 101 &&
		"$IP" rule add pref 100 oif sr0 lookup 100 &&
		"$IP" rule add pref 101 oif sr1 lookup 101 &&
		"$IP" rule add pref 1000 lookup local &&
		"$IP" rule del pref 0 lookup local || return 1
	try_until 5 carrier_up || return 1
	"$IP" route get $B oif sr0 | grep -q 'dev sr0' || return 1
	"$IP" route get $A oif sr1 | grep -q 'dev sr1' || return 1
	# ARP both ways now, not in the first measurement
	bounded 10 ping -q -c 1 -W 5 -I sr0 $B >/dev/null &&
		bounded 10 ping -q -c 1 -W 5 -I sr1 $A >/dev/null
}

carrier_up() {
	local c
	read -r c </sys/class/net/sr0/carrier 2>/dev/null && [ "$c" = 1 ]
}

# Back to the ordinary layout, same veth pair: sr1 moves to netns peer.
net_rxe_undo() {
	"$IP" rule del pref 100 2>/dev/null
	"$IP" rule del pref 101 2>/dev/null
	"$IP" rule add pref 0 lookup local 2>/dev/null
	"$IP" rule del pref 1000 lookup local 2>/dev/null
	"$IP" route flush table 100 2>/dev/null
	"$IP" route flush table 101 2>/dev/null
	local kv
	for kv in "${SAVED_SYSCTL[@]}"; do sysctl -qw "$kv" 2>/dev/null; done
	SAVED_SYSCTL=()
}

net_ns_setup() {
	if ! [ -e /sys/class/net/sr0 ]; then
		net_cleanup
		"$IP" link set lo up && "$IP" link add sr0 type veth peer name sr1 &&
			"$IP" addr add $A/24 dev sr0 || return 1
	fi
	"$IP" netns del peer 2>/dev/null
	"$IP" netns add peer &&
		"$IP" link set sr1 netns peer &&
		"$IP" link set sr0 up &&
		in_peer "$IP" link set lo up &&
		in_peer "$IP" addr add $B/24 dev sr1 &&
		in_peer "$IP" link set sr1 up || return 1
	try_until 5 carrier_up || return 1
	bounded 10 ping -q -c 1 -W 5 $B >/dev/null
}

# ---------------------------------------------------------------- perftest

# Set by each phase: client device/GID here (sr0 side), server
# device/GID on the sr1 side, SRV_NS = "" or "peer".
CLI_DEV='' CLI_GID='' SRV_DEV='' SRV_GID='' SRV_NS=''

srv_prefix() { [ -n "$SRV_NS" ] && echo "$IP netns exec $SRV_NS"; }

# perf_run TEST SIZE TAG: one client/server run.  Sets RESULT to the
# value (or fail/stall/noveth), and for latency RESULT_MIN to t_min; the
# tool output goes to the log (fd 3).
RESULT='' RESULT_MIN=''
perf_run() {
	local test=$1 size=$2 tag=$3 args tmo spid rc src pk0 pk1 t0 val vmin c0 c1
	local cli=$WORK/cli srv=$WORK/srv
	PORT=$((PORT + 1))
	case $test in
	*_bw)
		args=(-F -s "$size" -D "$DUR" --report_gbits -p "$PORT")
		tmo=$((DUR + SLACK))
		;;
	*)
		args=(-F -s "$size" -n "$LAT_ITERS" -p "$PORT")
		tmo=$SLACK
		;;
	esac
	# The prefix first: $! must be a process in the server's netns (for
	# wait_listen); `ip netns exec` execs its command, no fork.
	# shellcheck disable=SC2046
	$(srv_prefix) timeout -k 3 $((tmo + 20)) "$test" -d "$SRV_DEV" -x "$SRV_GID" "${args[@]}" >"$srv" 2>&1 &
	spid=$!
	BG_PIDS+=("$spid")
	if ! wait_listen "$spid" "$PORT"; then
		kill "$spid" 2>/dev/null
		reap "$spid" 10
		{
			echo "=== $tag: server did not start listening"
			dump "$srv"
		} >&3
		RESULT=fail RESULT_MIN=fail
		return
	fi
	pk0=$(sr0_pkts)
	c0=$(cpu_ticks)
	t0=$SECONDS
	bounded "$tmo" "$test" -d "$CLI_DEV" -x "$CLI_GID" "${args[@]}" "$B" >"$cli" 2>&1
	rc=$?
	c1=$(cpu_ticks)
	pk1=$(sr0_pkts)
	[ $rc = 0 ] || kill "$spid" 2>/dev/null
	reap "$spid" 15
	src=$?
	# the result line: "#bytes #iterations" and then
	#   bw:  BW peak, BW average, MsgRate
	#   lat: t_min, t_max, t_typical, t_avg, t_stdev, 99%, 99.9%
	case $test in
	*_bw) read -r val vmin < <(awk -v s="$size" '$1 == s && $2 ~ /^[0-9]+$/ && NF >= 4 { v = $4 } END { print v, "-" }' "$cli") ;;
	*) read -r val vmin < <(awk -v s="$size" '$1 == s && $2 ~ /^[0-9]+$/ && NF >= 5 { v = $5; m = $3 } END { print v, m }' "$cli") ;;
	esac
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		val=stall
	elif [ $rc != 0 ] || ! [[ $val =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
		val=fail
	elif [ $((pk1 - pk0)) -lt $MIN_PKTS ]; then
		val=noveth
	fi
	numeric "$val" || vmin=$val
	{
		echo "=== $tag: client rc=$rc, server rc=$src, $((SECONDS - t0)) s, $((pk1 - pk0)) packets over sr0 -> $val"
		echo "  cpu (all CPUs, client's run): $(cpu_split "$c0" "$c1")"
		echo "  client: $test -d $CLI_DEV -x $CLI_GID ${args[*]} $B"
		dump "$cli"
		echo "  server: $(srv_prefix) $test -d $SRV_DEV -x $SRV_GID ${args[*]}"
		dump "$srv"
	} >&3
	RESULT=$val RESULT_MIN=$vmin
}

numeric() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]]; }

# cell IMPL TEST SIZE: BENCH_RUNS runs; once the first run has failed the
# rest are not tried (a cell that stalls would cost a timeout each).
cell() {
	local impl=$1 test=$2 size=$3 r v vmin first=''
	for ((r = 1; r <= RUNS; r++)); do
		if [ -n "$first" ]; then
			v=$first vmin=$first
		elif [ $SECONDS -ge "$BUDGET" ]; then
			v=skip vmin=skip
		else
			perf_run "$test" "$size" "$impl $test $size run $r"
			v=$RESULT vmin=$RESULT_MIN
			numeric "$v" || [ "$r" != 1 ] || first=$v
			if ! numeric "$v"; then
				say "$impl $test $size B run $r/$RUNS: $v"
			elif [[ $test == *_lat ]]; then
				say "$impl $test $size B run $r/$RUNS: $v usec (t_min $vmin)"
			else
				say "$impl $test $size B run $r/$RUNS: $v Gbit/s"
			fi
		fi
		out "R $impl $test $size $r $v"
		case $test in *_lat) out "R $impl $test/min $size $r $vmin" ;; esac
	done
}

# all_cells IMPL VALUE: record every cell as VALUE (phase could not run).
all_cells() {
	local t s r
	for t in $BW_TESTS; do for s in $BW_SIZES; do for ((r = 1; r <= RUNS; r++)); do
		out "R $1 $t $s $r $2"
	done; done; done
	for t in $LAT_TESTS; do for s in $LAT_SIZES; do for ((r = 1; r <= RUNS; r++)); do
		out "R $1 $t $s $r $2"
		out "R $1 $t/min $s $r $2"
	done; done; done
}

# matrix IMPL: a short probe, then every cell.  The probe keeps a
# transport that carries nothing from costing one timeout per cell.
matrix() {
	local impl=$1 t s v
	LAT_ITERS=100 perf_run ib_send_lat 2 "$impl probe (ib_send_lat 2 B x 100)"
	v=$RESULT
	if ! numeric "$v"; then
		say "$impl: probe ib_send_lat 2 B x 100: $v; recording every cell as fail"
		out "P $impl probe (ib_send_lat, 2 B x 100) result: $v; no cell measured"
		all_cells "$impl" fail
		return
	fi
	say "$impl: probe ok (ib_send_lat 2 B: $v usec)"
	for t in $BW_TESTS; do for s in $BW_SIZES; do cell "$impl" "$t" "$s"; done; done
	for t in $LAT_TESTS; do for s in $LAT_SIZES; do cell "$impl" "$t" "$s"; done; done
}

# ---------------------------------------------------------------- phases

phase_fail() {
	say "$1 phase: $2"
	out "P $1 $2"
	all_cells "$1" fail
}

phase_rxe() {
	say "rxe phase: rxe0 on sr0 <-> rxe1 on sr1, both in init_net, policy routing over the veth"
	bounded 30 modprobe -r rdma_rxe 2>/dev/null
	if ! net_rxe_setup; then
		phase_fail rxe "could not set up the veth pair with policy routing"
		return
	fi
	local pk0
	pk0=$(sr0_pkts)
	if ! bounded 60 modprobe rdma_rxe; then
		phase_fail rxe "modprobe rdma_rxe failed"
	elif ! bounded 30 rdma link add rxe0 type rxe netdev sr0 ||
		! bounded 30 rdma link add rxe1 type rxe netdev sr1; then
		phase_fail rxe "rdma link add rxe0/rxe1 failed"
	elif ! wait_gid CLI_GID rxe0 $A || ! wait_gid SRV_GID rxe1 $B; then
		phase_fail rxe "no IPv4 RoCE v2 GID on rxe0/rxe1"
	else
		CLI_DEV=rxe0 SRV_DEV=rxe1 SRV_NS=''
		say "rxe0 GID index $CLI_GID, rxe1 GID index $SRV_GID"
		matrix rxe
	fi
	out "M rxe_sr0_packets $(($(sr0_pkts) - pk0))"
	{
		echo "=== rxe phase done: interface counters"
		"$IP" -s link show sr0
		"$IP" -s link show sr1
		"$IP" -s link show lo
		echo "netdev_max_backlog: $(sysctl -n net.core.netdev_max_backlog)"
		rdma statistic show link rxe0/1 2>&1 | head -5
	} 2>&1 | sed 's/^/    | /'
	bounded 30 rdma link delete rxe0 2>/dev/null
	bounded 30 rdma link delete rxe1 2>/dev/null
	bounded 60 modprobe -r rdma_rxe || out "P rxe modprobe -r rdma_rxe failed"
	net_rxe_undo
}

# iperf3 TCP, 10.0.0.1 (init_net) -> 10.0.0.2 (netns peer): the ceiling
# the kernel's own stack reaches over the same veth pair.
phase_iperf() {
	local r spid v rc
	for ((r = 1; r <= RUNS; r++)); do
		PORT=$((PORT + 1))
		"$IP" netns exec peer timeout -k 3 $((IPERF_SECS + 40)) iperf3 -s -1 -p "$PORT" >"$WORK/srv" 2>&1 &
		spid=$!
		BG_PIDS+=("$spid")
		if ! wait_listen "$spid" "$PORT"; then
			v=fail
		else
			bounded $((IPERF_SECS + 20)) iperf3 -c $B -p "$PORT" -t "$IPERF_SECS" -f g >"$WORK/cli" 2>&1
			rc=$?
			v=$(awk '/receiver/ { for (i = 2; i <= NF; i++) if ($i == "Gbits/sec") v = $(i - 1) } END { print v }' "$WORK/cli")
			if [ $rc = 124 ]; then v=stall; elif [ $rc != 0 ] || ! numeric "$v"; then v=fail; fi
		fi
		kill "$spid" 2>/dev/null
		reap "$spid" 10
		{
			echo "=== iperf3 run $r -> $v"
			dump "$WORK/cli"
		} >&3
		say "iperf3 TCP run $r/$RUNS: $v Gbit/s"
		out "I iperf3 $r $v"
	done
}

phase_softrnic() {
	say "softrnic phase: roce0 on sr0 (init_net) <-> roce1 on sr1 (netns peer)"
	if ! have_softrnic; then
		phase_fail softrnic "softrnic.ko is not built (make all)"
		return
	fi
	if ! bounded 30 rdma link add roce0 type roce netdev sr0 ||
		! bounded 30 "$IP" netns exec peer rdma link add roce1 type roce netdev sr1; then
		phase_fail softrnic "rdma link add roce0/roce1 failed"
	elif ! wait_gid CLI_GID roce0 $A || ! wait_gid SRV_GID roce1 $B; then
		phase_fail softrnic "no IPv4 RoCE v2 GID on roce0/roce1"
	else
		CLI_DEV=roce0 SRV_DEV=roce1 SRV_NS=peer
		say "roce0 GID index $CLI_GID, roce1 GID index $SRV_GID"
		matrix softrnic
	fi
	{
		echo "=== softrnic phase done: interface counters"
		"$IP" -s link show sr0
		rdma statistic show link roce0/1 2>&1 | head -5
	} 2>&1 | sed 's/^/    | /'
	bounded 30 rdma link delete roce0 2>/dev/null
	bounded 30 "$IP" netns exec peer rdma link delete roce1 2>/dev/null
	if grep -q '^softrnic ' /proc/modules; then
		bounded 60 rmmod softrnic || out "P softrnic rmmod softrnic failed"
	fi
}

cleanup() {
	# A child killed between fork and exec (e.g. bounded's watchdog) is
	# still this bash, and bash runs the EXIT trap on a fatal signal.
	[ "$BASHPID" = "$$" ] || return 0
	local p d
	for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for d in rxe0 rxe1 roce0; do
		[ -e "/sys/class/infiniband/$d" ] && bounded 30 rdma link delete "$d" 2>/dev/null
	done
	[ -e /sys/class/infiniband/roce1 ] && bounded 30 "$IP" netns exec peer rdma link delete roce1 2>/dev/null
	grep -q '^rdma_rxe ' /proc/modules && bounded 60 modprobe -r rdma_rxe
	net_cleanup
	rm -rf "$WORK"
}
trap cleanup EXIT

# ---------------------------------------------------------------- main

# fd 3: the log (tool output), same as stdout.
exec 3>&1
BUDGET=$((SECONDS + BUDGET))

accel=tcg
grep -qw kvm-clock /sys/devices/system/clocksource/clocksource0/available_clocksource 2>/dev/null && accel=kvm
out "M accel $accel"
out "M cpu $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
out "M vcpus $(nproc)"
out "M kernel $(uname -r)"
out "M perftest $(dpkg-query -W -f '${Version}' perftest 2>/dev/null)"
out "M runs $RUNS"
out "M bw_sizes $BW_SIZES"
out "M lat_sizes $LAT_SIZES"
out "M bw_tests $BW_TESTS"
out "M lat_tests $LAT_TESTS"
out "M duration $DUR"
out "M lat_iters $LAT_ITERS"
out "M phases $PHASES"
grep -q tsc=reliable /proc/cmdline || out "P all the kernel lacks tsc=reliable: perftest's clock calibration is unreliable"
say "$accel, $(nproc) vCPUs, $RUNS run(s) per cell, bw: $BW_TESTS x $BW_SIZES B, lat: $LAT_TESTS x $LAT_SIZES B"

unload_softrnic 2>/dev/null
NS_READY=''
# ns_topology: sr1 into netns peer, once (iperf3 and softrnic share it).
ns_topology() {
	[ -n "$NS_READY" ] && return "$NS_READY"
	net_ns_setup
	NS_READY=$?
	[ "$NS_READY" = 0 ] || say "could not move sr1 into netns peer"
	return "$NS_READY"
}
for phase in $PHASES; do
	case $phase in
	rxe) phase_rxe ;;
	iperf3)
		if ns_topology; then
			phase_iperf
		else
			for ((r = 1; r <= RUNS; r++)); do out "I iperf3 $r fail"; done
		fi
		;;
	softrnic)
		if ns_topology; then
			phase_softrnic
		else
			phase_fail softrnic "could not move sr1 into netns peer"
		fi
		;;
	*) say "unknown phase $phase (rxe, iperf3, softrnic)" ;;
	esac
done
say "done"
exit 0
