#!/bin/bash
# Guest half of scripts/bench (`make bench`): perftest and iperf3 over a
# veth pair each in one boot, rdma_rxe and softrnic taking turns run by run
# (see "network" and "interleaving"); the same for softrnic's iWARP and
# siw through rdma_cm (phase iwarp, see "iwarp").  See
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
#             P IMPL TEXT                  a note on an implementation (table footer)
#             M KEY VALUE                  metadata (accel, kernel, ...)
#   stderr  one progress line per step
#
# Every command that touches RDMA or the network runs under a deadline
# (bounded), so a transport that hangs -- even in the kernel -- costs a
# timeout, never the run.  The script exits 0 once it has gone through
# its phases, whatever they measured.
#
# env (all optional): BENCH_RUNS (runs per bandwidth cell, 5),
#   BENCH_LAT_RUNS (per latency cell, 9; both 1 with BENCH_QUICK=1), BENCH_QUICK,
#   BENCH_DURATION (s per bw run, 3), BENCH_BW_ITER_SIZE and BENCH_BW_BYTES
#   (bw runs of messages from 1 MiB move 128 MiB, -n, instead), BENCH_LAT_ITERS (1000),
#   BENCH_BW_SIZES, BENCH_LAT_SIZES, BENCH_BW_TESTS, BENCH_LAT_TESTS,
#   BENCH_PHASES ("rxe iperf3 softrnic loopback storage"; storage is the
#   kernel storage table; iwarp, not a default, the iWARP table),
#   BENCH_IPERF_SECS (3),
#   BENCH_ST_RUNS (storage: 3, 1 with BENCH_QUICK), BENCH_ST_SECS (5),
#   BENCH_ST_MB (128), BENCH_ST_CONNS (50),
#   BENCH_LO_RUNS, BENCH_LO_LAT_RUNS (loopback: 3 and 5), BENCH_LO_BW_SIZES,
#   BENCH_LO_LAT_SIZES (the two-device sizes),
#   BENCH_RUN_TIMEOUT (s beyond the expected run time, 45),
#   BENCH_BUDGET (s; cells not started by then are recorded "skip", 2400)

# shellcheck disable=SC2317 # functions called through try_until and traps
. "$SOFTRNIC_ROOT/tests/vm/lib.sh"
set -u

QUICK=${BENCH_QUICK:-0}
if [ "$QUICK" = 1 ]; then
	RUNS=${BENCH_RUNS:-1}
	LAT_RUNS=${BENCH_LAT_RUNS:-1}
	BW_SIZES=${BENCH_BW_SIZES:-64 65536}
	LAT_SIZES=${BENCH_LAT_SIZES:-2 4096}
else
	RUNS=${BENCH_RUNS:-5}
	LAT_RUNS=${BENCH_LAT_RUNS:-9}
	# set but empty: no cell of the two-device table (e.g. to measure
	# only loopback, with BENCH_LO_*_SIZES)
	BW_SIZES=${BENCH_BW_SIZES-64 4096 65536 1048576}
	LAT_SIZES=${BENCH_LAT_SIZES-2 64 1024 4096}
fi
BW_TESTS=${BENCH_BW_TESTS:-ib_write_bw ib_read_bw ib_send_bw}
LAT_TESTS=${BENCH_LAT_TESTS:-ib_write_lat ib_send_lat}
DUR=${BENCH_DURATION:-3}
# Bandwidth runs of messages of BW_ITER_SIZE bytes or more move a fixed
# BW_BYTES (-n BW_BYTES/size) instead of running -D DUR seconds: in a
# 3 s duration run rdma_rxe completed no 1 MiB message inside perftest's
# sample window on one device, and perftest printed 0.
BW_ITER_SIZE=${BENCH_BW_ITER_SIZE:-1048576}
BW_BYTES=${BENCH_BW_BYTES:-134217728}
LAT_ITERS=${BENCH_LAT_ITERS:-1000}
PHASES=${BENCH_PHASES:-rxe iperf3 softrnic loopback storage}
# Loopback: both ends on one device (see "loopback").  Fewer runs per
# cell than the two-device table: it comes on top of it.
LO_RUNS=${BENCH_LO_RUNS:-$([ "$QUICK" = 1 ] && echo 1 || echo 3)}
LO_LAT_RUNS=${BENCH_LO_LAT_RUNS:-$([ "$QUICK" = 1 ] && echo 1 || echo 5)}
LO_BW_SIZES=${BENCH_LO_BW_SIZES:-${BW_SIZES:-64 4096 65536 1048576}}
LO_LAT_SIZES=${BENCH_LO_LAT_SIZES:-${LAT_SIZES:-2 64 1024 4096}}
IPERF_SECS=${BENCH_IPERF_SECS:-3}
# Storage (see "storage"): pairs per cell, seconds per fio run, the size
# of each NVMe namespace and of the NFS file (MiB), cmtime's connections.
ST_RUNS=${BENCH_ST_RUNS:-$([ "$QUICK" = 1 ] && echo 1 || echo 3)}
ST_SECS=${BENCH_ST_SECS:-5}
ST_MB=${BENCH_ST_MB:-128}
ST_CONNS=${BENCH_ST_CONNS:-50}
ST_IMPLS=(rxe softrnic)
SLACK=${BENCH_RUN_TIMEOUT:-45}
BUDGET=${BENCH_BUDGET:-2400}
# A run that "succeeds" while moving fewer packets over sr0 did not
# measure the veth (e.g. the kernel routed it through lo): "noveth".  In
# the loopback table the packets counted are the device's own.
MIN_PKTS=100

A=10.0.0.1 # rx0 (init_net) for rxe, sr0 (netns cli) for softrnic
B=10.0.0.2 # rx1 (init_net) for rxe, sr1 (netns peer) for softrnic and iperf3
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
# process is left behind.  CMD may be a shell function (nfsd_start...):
# `timeout` cannot run one, so it runs in a subshell, bounded by the
# watchdog alone.  No polling loop: nothing runs beside the measurement.
bounded() {
	local secs=$1 pid wd rc done_pid=
	shift
	if declare -F "$1" >/dev/null; then
		("$@") &
	else
		timeout -k 3 "$secs" "$@" &
	fi
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
	kill -KILL "$pid" 2>/dev/null
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

# wait_server_listen PID PORT: until the server listens (0) or exits or
# 20 s pass (1): its TCP socket, or with PERF_CM its RDMA CM id (in
# SRV_NS) and the iWARP driver's TCP listener in its namespace.  rdma_cm
# marks the id LISTEN before it asks the devices to listen, and a client
# that came in between was refused (ECONNREFUSED; perftest 4.5 then
# segfaults in librdmacm); the last device's listener follows the first
# within the same rdma_listen call, hence the short pause.
wait_server_listen() {
	local i
	for ((i = 0; i < 200; i++)); do
		if [ -n "$PERF_CM" ]; then
			cm_listening "$(ns_prefix "$SRV_NS")" "$2" && listening "$1" "$2" && sleep 0.3 && return 0
		else
			listening "$1" "$2" && return 0
		fi
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# The guest's CPU time so far per state, in USER_HZ ticks: "user system
# softirq idle" (user includes nice, system includes irq) summed over the
# CPUs, then the same four for each CPU in turn.
cpu_ticks() {
	local name us ni sy id io irq sirq rest
	while read -r name us ni sy id io irq sirq rest; do
		[[ $name == cpu* ]] || break
		echo -n "$((us + ni)) $((sy + irq)) $sirq $((id + io)) "
	done </proc/stat
	echo
}

# cpu_split BEFORE AFTER: where the CPUs' time went in between, in percent:
# all CPUs, then each CPU ("cpu0 u/s/si/id").
cpu_split() {
	local -a a b
	local t i g d
	read -r -a a <<<"$1"
	read -r -a b <<<"$2"
	for ((g = 0; g + 3 < ${#b[@]}; g += 4)); do
		t=0
		for i in 0 1 2 3; do t=$((t + b[g + i] - a[g + i])); done
		[ "$t" -gt 0 ] || t=1
		for i in 0 1 2 3; do d[i]=$((100 * (b[g + i] - a[g + i]) / t)); done
		if [ "$g" = 0 ]; then
			printf 'user %d%% system %d%% softirq %d%% idle %d%%' "${d[@]}"
		else
			printf ', cpu%d %d/%d/%d/%d' $((g / 4 - 1)) "${d[@]}"
		fi
	done
}

# Packets through the client's veth end so far (tx + rx).
pair_pkts() {
	local tx rx
	# shellcheck disable=SC2046
	read -r tx rx < <($(ns_prefix "$CLI_NS") cat "/sys/class/net/$CLI_NETDEV/statistics/tx_packets" \
		"/sys/class/net/$CLI_NETDEV/statistics/rx_packets" 2>/dev/null | paste -s -d ' ')
	echo $((${tx:-0} + ${rx:-0}))
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

# Two veth pairs made alike, one per implementation, both up for the
# whole bench so that runs can alternate at no cost (see "Interleaving"):
#
# rxe: rx0 (10.0.0.1) <-> rx1 (10.0.0.2), both in init_net: Linux 6.1's
# rdma_rxe works only there, and holds UDP 4791 there while loaded, so
# softrnic cannot share the namespace, nor a veth pair, with it.  With
# both addresses local, the kernel would deliver 10.0.0.1 -> 10.0.0.2
# through lo; rxe routes with the flow's oif set to its netdev, so
# per-oif rules, looked up before the local table, send it out of that
# veth end.  The far end accepts a packet whose source is one of its own
# addresses only with accept_local (and no rp_filter).
#
# softrnic: sr0 (10.0.0.1, netns cli) <-> sr1 (10.0.0.2, netns peer).
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
	"$IP" link del rx0 2>/dev/null
	"$IP" link del lx0 2>/dev/null
	"$IP" link del ly0 2>/dev/null
	local ns
	for ns in cli peer icli ipeer scli speer; do "$IP" netns del "$ns" 2>/dev/null; done
	return 0
}

# carrier NETNS DEV: is DEV's carrier up (NETNS "" = init_net)?
carrier() {
	local c
	# shellcheck disable=SC2046
	c=$($(ns_prefix "$1") cat "/sys/class/net/$2/carrier" 2>/dev/null) && [ "$c" = 1 ]
}

net_rxe_setup() {
	"$IP" link set lo up &&
		"$IP" link add rx0 type veth peer name rx1 &&
		"$IP" addr add "$A"/24 dev rx0 &&
		"$IP" addr add "$B"/24 dev rx1 || return 1
	local d
	for d in rx0 rx1; do
		set_sysctl net.ipv4.conf."$d".accept_local 1 &&
			set_sysctl net.ipv4.conf."$d".rp_filter 0 || return 1
	done
	set_sysctl net.ipv4.conf.all.rp_filter 0 || return 1
	"$IP" link set rx0 up && "$IP" link set rx1 up &&
		"$IP" route add 10.0.0.0/24 dev rx0 src "$A" table 100 &&
		"$IP" route add 10.0.0.0/24 dev rx1 src "$B" table 101 &&
		"$IP" rule add pref 100 oif rx0 lookup 100 &&
		"$IP" rule add pref 101 oif rx1 lookup 101 &&
		"$IP" rule add pref 1000 lookup local &&
		"$IP" rule del pref 0 lookup local || return 1
	try_until 5 carrier '' rx0 || return 1
	"$IP" route get "$B" oif rx0 | grep -q 'dev rx0' || return 1
	"$IP" route get "$A" oif rx1 | grep -q 'dev rx1' || return 1
	# ARP both ways now, not in the first measurement
	bounded 10 ping -q -c 1 -W 5 -I rx0 "$B" >/dev/null &&
		bounded 10 ping -q -c 1 -W 5 -I rx1 "$A" >/dev/null
}

# net_ns_pair NS0 IF0 NS1 IF1 [INDEX0 INDEX1]: a veth pair IF0 (10.0.0.1,
# netns NS0) <-> IF1 (10.0.0.2, netns NS1), both namespaces new; with
# the ifindexes given (see "iwarp" for why).
net_ns_pair() {
	local ns0=$1 if0=$2 ns1=$3 if1=$4 ns x0=() x1=()
	[ -z "${5:-}" ] || x0=(index "$5")
	[ -z "${6:-}" ] || x1=(index "$6")
	for ns in "$ns0" "$ns1"; do
		"$IP" netns add "$ns" && "$IP" -n "$ns" link set lo up || return 1
	done
	"$IP" link add "$if0" "${x0[@]}" netns "$ns0" type veth peer name "$if1" "${x1[@]}" netns "$ns1" &&
		"$IP" -n "$ns0" addr add "$A"/24 dev "$if0" &&
		"$IP" -n "$ns1" addr add "$B"/24 dev "$if1" &&
		"$IP" -n "$ns0" link set "$if0" up &&
		"$IP" -n "$ns1" link set "$if1" up || return 1
	try_until 5 carrier "$ns0" "$if0" || return 1
	bounded 10 "$IP" netns exec "$ns0" ping -q -c 1 -W 5 "$B" >/dev/null
}

net_ns_setup() { net_ns_pair cli sr0 peer sr1; }

# ---------------------------------------------------------------- perftest

# The implementation of the next run (pick): devices, GIDs and network
# namespaces ("" = init_net) of the client (10.0.0.1) and the server, the
# address the client connects to, and how its packets are counted
# (PKTS: a command printing a running count).  PERF_CM=1: the QPs are
# connected through rdma_cm (perftest -R, no -x: the GIDs are ''), as
# iWARP needs.
CLI_DEV='' CLI_GID='' SRV_DEV='' SRV_GID='' CLI_NS='' SRV_NS='' CLI_NETDEV=''
SRV_ADDR=$B PKTS=pair_pkts PERF_CM=''
# Records of the loopback table carry this prefix on the test name.
TPFX=''

# dev_pkts DEV COUNTER: one hw counter of DEV in init_net.
dev_pkts() {
	rdma statistic show link "$1/1" 2>/dev/null |
		awk -v n="$2" '{ for (i = 3; i < NF; i += 2) if ($i == n) v = $(i + 1) } END { print v + 0 }'
}

ns_prefix() { [ -n "$1" ] && echo "$IP netns exec $1"; }

# perf_run TEST SIZE TAG: one client/server run.  Sets RESULT to the
# value (or fail/stall/noveth), and for latency RESULT_MIN to t_min; the
# tool output goes to the log (fd 3).  A run that failed for perftest's
# sake runs again, up to three times in all (tests/vm/lib.sh,
# cm_rerun_why): with PERF_CM its data connection found no listener
# (Debian 12's perftest connects before its server listens again, and
# fails instead of retrying), or it could not calibrate its clock.
RESULT='' RESULT_MIN=''
perf_run() {
	local try why
	for try in 1 2 3; do
		perf_run_once "$@"
		[ "$RESULT" = fail ] && [ $try -lt 3 ] && why=$(cm_rerun_why "$WORK/cli") || return 0
		echo "=== $3: $why; again" >&3
	done
}

perf_run_once() {
	local test=$1 size=$2 tag=$3 args tmo spid rc src pk0 pk1 t0 val vmin c0 c1
	local cli=$WORK/cli srv=$WORK/srv cx=() sx=()
	PORT=$((PORT + 1))
	: >"$cli"
	case $test in
	*_bw)
		if [ "$size" -ge "$BW_ITER_SIZE" ]; then
			# ~17 s for the default 128 MiB at 0.06 Gbit/s, the slowest
			# seen (rxe's 1 MiB READ under TCG)
			args=(-F -s "$size" -n $((BW_BYTES / size > 2 ? BW_BYTES / size : 2)) --report_gbits -p "$PORT")
			tmo=$((SLACK + BW_BYTES / 4000000))
		else
			args=(-F -s "$size" -D "$DUR" --report_gbits -p "$PORT")
			tmo=$((DUR + SLACK))
		fi
		;;
	*)
		args=(-F -s "$size" -n "$LAT_ITERS" -p "$PORT")
		tmo=$SLACK
		;;
	esac
	[ -z "$PERF_CM" ] || args+=(-R)
	[ -z "$CLI_GID" ] || cx=(-x "$CLI_GID")
	[ -z "$SRV_GID" ] || sx=(-x "$SRV_GID")
	# The prefix first: $! must be a process in the server's netns (for
	# wait_server_listen); `ip netns exec` execs its command, no fork.
	# shellcheck disable=SC2046
	$(ns_prefix "$SRV_NS") timeout -k 3 $((tmo + 20)) "$test" -d "$SRV_DEV" "${sx[@]}" "${args[@]}" >"$srv" 2>&1 &
	spid=$!
	BG_PIDS+=("$spid")
	if ! wait_server_listen "$spid" "$PORT"; then
		kill "$spid" 2>/dev/null
		reap "$spid" 10
		{
			echo "=== $tag: server did not start listening"
			dump "$srv"
		} >&3
		RESULT=fail RESULT_MIN=fail
		return
	fi
	pk0=$($PKTS)
	c0=$(cpu_ticks)
	t0=$SECONDS
	# shellcheck disable=SC2046
	bounded "$tmo" $(ns_prefix "$CLI_NS") "$test" -d "$CLI_DEV" "${cx[@]}" "${args[@]}" "$SRV_ADDR" >"$cli" 2>&1
	rc=$?
	c1=$(cpu_ticks)
	pk1=$($PKTS)
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
		echo "=== $tag: client rc=$rc, server rc=$src, $((SECONDS - t0)) s, $((pk1 - pk0)) packets over $CLI_NETDEV -> $val"
		echo "  cpu (all CPUs, then each as user/system/softirq/idle, client's run): $(cpu_split "$c0" "$c1")"
		echo "  client: $(ns_prefix "$CLI_NS") $test -d $CLI_DEV ${cx[*]} ${args[*]} $SRV_ADDR"
		dump "$cli"
		echo "  server: $(ns_prefix "$SRV_NS") $test -d $SRV_DEV ${sx[*]} ${args[*]}"
		dump "$srv"
	} >&3
	RESULT=$val RESULT_MIN=$vmin
}

numeric() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]]; }

# ---------------------------------------------------------------- implementations

# Why an implementation is out of the bench (DEAD[IMPL]; its cells then
# read fail), and its devices' GID indexes.
declare -A DEAD=() GIDS=()

# devices_up IMPL TYPE DEV0 NETDEV0 NS0 DEV1 NETDEV1 NS1: `rdma link add`
# the client's (10.0.0.1) and the server's (10.0.0.2) device, in their
# netdevs' namespaces ("" = init_net), and wait for their IPv4 GIDs.
devices_up() {
	local impl=$1 type=$2 d0=$3 n0=$4 s0=$5 d1=$6 n1=$7 s1=$8
	# shellcheck disable=SC2046
	if ! bounded 30 $(ns_prefix "$s0") rdma link add "$d0" type "$type" netdev "$n0" ||
		! bounded 30 $(ns_prefix "$s1") rdma link add "$d1" type "$type" netdev "$n1"; then
		say "$impl: rdma link add $d0/$d1 failed"
		return 1
	fi
	if ! wait_gid "GIDS[$d0]" "$d0" "$A" || ! wait_gid "GIDS[$d1]" "$d1" "$B"; then
		say "$impl: no IPv4 RoCE v2 GID on $d0/$d1"
		return 1
	fi
}

rxe_up() {
	if ! net_rxe_setup; then
		say "rxe: could not set up veth pair rx0/rx1 with policy routing"
		return 1
	fi
	if ! bounded 60 modprobe rdma_rxe; then
		say "rxe: modprobe rdma_rxe failed"
		return 1
	fi
	devices_up rxe rxe rxe0 rx0 '' rxe1 rx1 ''
}

rxe_pick() {
	if [ -n "$TPFX" ]; then
		lo_pick rxl0 sent_pkts
		return
	fi
	CLI_DEV=rxe0 SRV_DEV=rxe1 CLI_NS='' SRV_NS='' CLI_NETDEV=rx0
	CLI_GID=${GIDS[rxe0]} SRV_GID=${GIDS[rxe1]} SRV_ADDR=$B PKTS=pair_pkts PERF_CM=''
}

softrnic_up() {
	if ! have_softrnic; then
		say "softrnic: softrnic.ko is not built (make all)"
		return 1
	fi
	if ! net_ns_setup; then
		say "softrnic: could not set up veth pair sr0/sr1 (netns cli/peer)"
		return 1
	fi
	devices_up softrnic roce roce0 sr0 cli roce1 sr1 peer
}

softrnic_pick() {
	if [ -n "$TPFX" ]; then
		lo_pick rol0 tx_packets
		return
	fi
	CLI_DEV=roce0 SRV_DEV=roce1 CLI_NS=cli SRV_NS=peer CLI_NETDEV=sr0
	CLI_GID=${GIDS[roce0]} SRV_GID=${GIDS[roce1]} SRV_ADDR=$B PKTS=pair_pkts PERF_CM=''
}

# ---------------------------------------------------------------- iwarp

# softrnic's iWARP wire against Linux's siw (the iWARP table, phase
# iwarp), each on a veth pair of its own made like the RoCE ones, both
# ends in namespaces of their own (so the pairs can use 10.0.0.1 and
# 10.0.0.2 next to rxe's and softrnic's RoCE pairs):
#   siw:      siw0 on sw0 (netns scli) <-> siw1 on sw1 (netns speer)
#   softrnic: iw0 on iv0 (netns icli)  <-> iw1 on iv1 (netns ipeer)
# iWARP QPs connect only through iw_cm, so every run is perftest -R
# (PERF_CM).  MPA CRC is off on both: siw's default build does not ask
# for it, and softrnic's mpa_crc parameter is set to N.  Records carry
# the test name iw:TEST, the implementations are siw and iwarp.
#
# A perftest -R server listens on 0.0.0.0:PORT, and rdma_cm (6.1) passes
# such a listen to every RDMA device of the host, whatever its namespace.
# siw makes its listening socket in the namespace of the listening
# process, bound to the wildcard address and to its netdev's ifindex
# (SO_BINDTODEVICE); softrnic makes its own in its netdev's namespace,
# likewise bound to its netdev.  Ifindexes are per namespace: sw0 and
# sw1 would both be 2 and siw1's listener would clash with siw0's
# (EADDRINUSE), so the pairs get ifindexes of their own (sw 60/61, iv
# 62/63).  siw's devices are deleted for softrnic's runs and added back
# for siw's (siw_links; about a second each way, siw.ko stays loaded), so
# that each implementation's runs have the host's RDMA devices to
# themselves: no other device's listeners are made and torn down with
# each run.
IW_IMPLS=(siw iwarp)

port_active() { grep -q ACTIVE "/sys/class/infiniband/$1/ports/1/state" 2>/dev/null; }

siw_up() {
	if ! have_siw default; then
		say "siw: build/kmod-siw/default/siw.ko is not built (make testprogs)"
		return 1
	fi
	if ! net_ns_pair scli sw0 speer sw1 60 61; then
		say "siw: could not set up veth pair sw0/sw1 (netns scli/speer)"
		return 1
	fi
	bounded 60 siw_load default || { say "siw: siw_load failed"; return 1; }
	siw_links add || { say "siw: rdma link add siw0/siw1 failed"; return 1; }
}

# siw_links add|del: siw0 (sw0, scli) and siw1 (sw1, speer) there or not.
siw_links() {
	local d ns
	for d in 0 1; do
		ns=scli
		[ "$d" = 0 ] || ns=speer
		if [ "$1" = add ]; then
			[ -e "/sys/class/infiniband/siw$d" ] || bounded 30 siw_add "siw$d" "sw$d" "$ns" || return 1
		elif [ -e "/sys/class/infiniband/siw$d" ]; then
			bounded 30 "$IP" netns exec "$ns" rdma link delete "siw$d" || return 1
		fi
	done
}

siw_pick() {
	siw_links add || say 'siw: rdma link add siw0/siw1 failed'
	CLI_DEV=siw0 SRV_DEV=siw1 CLI_NS=scli SRV_NS=speer CLI_NETDEV=sw0
	CLI_GID='' SRV_GID='' SRV_ADDR=$B PKTS=pair_pkts PERF_CM=1
}

iwarp_up() {
	local d ns crc=/sys/module/softrnic/parameters/mpa_crc
	if ! have_softrnic; then
		say "iwarp: softrnic.ko is not built (make all)"
		return 1
	fi
	bounded 60 modprobe softrnic || { say "iwarp: modprobe softrnic failed"; return 1; }
	if [ -e "$crc" ]; then
		echo N >"$crc" || { say "iwarp: could not set $crc to N"; return 1; }
		out "M iw_mpa_crc $(cat "$crc")"
	fi
	siw_links del || { say "iwarp: rdma link delete siw0/siw1 failed"; return 1; }
	if ! net_ns_pair icli iv0 ipeer iv1 62 63; then
		say "iwarp: could not set up veth pair iv0/iv1 (netns icli/ipeer)"
		return 1
	fi
	for d in 0 1; do
		ns=icli
		[ "$d" = 0 ] || ns=ipeer
		bounded 30 "$IP" netns exec "$ns" rdma link add "iw$d" type iwarp netdev "iv$d" ||
			{ say "iwarp: rdma link add iw$d type iwarp netdev iv$d failed"; return 1; }
		try_until 10 port_active "iw$d" || { say "iwarp: iw$d never became ACTIVE"; return 1; }
	done
}

iwarp_pick() {
	siw_links del || say "iwarp: rdma link delete siw0/siw1 failed"
	CLI_DEV=iw0 SRV_DEV=iw1 CLI_NS=icli SRV_NS=ipeer CLI_NETDEV=iv0
	CLI_GID='' SRV_GID='' SRV_ADDR=$B PKTS=pair_pkts PERF_CM=1
}

# ---------------------------------------------------------------- loopback

# Both ends on one device, the commonest set-up without RDMA hardware (a
# CI runner with one NIC): rxl0 (rxe) on lx0 10.0.2.1, rol0 (softrnic) on
# ly0 10.0.3.1, each a veth end in init_net whose other end is only up.
# The client connects to 127.0.0.1; the device's own counter (rxe
# sent_pkts, softrnic tx_packets) says the run went through it.
LO_A=10.0.2.1 LO_B=10.0.3.1

lo_dev_up() { # IMPL TYPE DEV NETDEV PEER ADDR
	"$IP" link add "$4" type veth peer name "$5" &&
		"$IP" addr add "$6"/24 dev "$4" &&
		"$IP" link set "$4" up && "$IP" link set "$5" up || return 1
	try_until 5 carrier '' "$4" || return 1
	# shellcheck disable=SC2046
	bounded 30 rdma link add "$3" type "$2" netdev "$4" || return 1
	wait_gid "GIDS[$3]" "$3" "$6"
}

loopback_up() {
	lo_dev_up rxe rxe rxl0 lx0 lx1 "$LO_A" ||
		DEAD[rxe]="could not set up its loopback device rxl0 on lx0"
	lo_dev_up softrnic roce rol0 ly0 ly1 "$LO_B" ||
		DEAD[softrnic]="could not set up its loopback device rol0 on ly0"
}

lo_pick() { # DEV COUNTER
	CLI_DEV=$1 SRV_DEV=$1 CLI_NS='' SRV_NS='' CLI_NETDEV='' PERF_CM=''
	CLI_GID=${GIDS[$1]} SRV_GID=${GIDS[$1]} SRV_ADDR=127.0.0.1
	PKTS="dev_pkts $1 $2"
}

# ---------------------------------------------------------------- storage

# Kernel storage over each implementation's loopback device (rxl0 on
# 10.0.2.1, rol0 on 10.0.3.1: nvme-rdma and nvmet-rdma work in init_net
# only, so both ends are on one device, as in the loopback table):
# NVMe/RDMA to a memory-backed null_blk of each (its own subsystem and
# port) and NFSv4.2/RDMA to one nfsd exporting a tmpfs, fio sequential
# write and read, 128 KiB, iodepth 16, O_DIRECT, ST_SECS per run; and
# cmtime's connection rate (ST_CONNS connections at once).  Records:
# R IMPL st:TEST SIZE RUN VALUE, TEST nvme_write_bw, nvme_read_bw,
# nfs_write_bw, nfs_read_bw (Gbit/s, SIZE the block size) and
# cmtime_conn_rate (connections/s, SIZE the connections).
ST_EXPORT=/srv/bench-nfs ST_MNT=/mnt/bench-nfs ST_NQN=nqn.2026-01.org.softrnic:bench
ST_TESTS="nvme_write_bw nvme_read_bw nfs_write_bw nfs_read_bw cmtime_conn_rate"
declare -A ST_BLK=() ST_PORT=([rxe]=1 [softrnic]=2) ST_NB=([rxe]=0 [softrnic]=1)

st_addr() { [ "$1" = rxe ] && echo "$LO_A" || echo "$LO_B"; }
st_dev() { [ "$1" = rxe ] && echo rxl0 || echo rol0; }

# st_up IMPL: its namespace served over its loopback device and
# connected; an implementation that fails is out of the storage cells.
st_up() {
	local impl=$1 nqn=$ST_NQN-$1
	bounded 60 nullb_mem "${ST_NB[$impl]}" $((ST_MB + 16)) ||
		{ say "$impl storage: null_blk nullb${ST_NB[$impl]}: status $?"; return 1; }
	bounded 60 nvmet_subsys "$nqn" "/dev/nullb${ST_NB[$impl]}" ||
		{ say "$impl storage: nvmet subsystem $nqn: status $?"; return 1; }
	bounded 30 nvmet_port "${ST_PORT[$impl]}" "$(st_addr "$impl")" "$nqn" ||
		{ say "$impl storage: nvmet port ${ST_PORT[$impl]}: status $?"; return 1; }
	nvme_rdma_connect "$nqn" "$(st_addr "$impl")" ||
		{ say "$impl storage: nvme connect to $(st_addr "$impl"): status $?"; return 1; }
	ST_BLK[$impl]=$NVME_BLK
}

storage_up() {
	local impl
	[ -e /sys/class/infiniband/rxl0 ] || [ -e /sys/class/infiniband/rol0 ] || loopback_up
	if ! command -v nvme >/dev/null || ! command -v fio >/dev/null ||
		! command -v rpc.mountd >/dev/null; then
		for impl in "${ST_IMPLS[@]}"; do
			DEAD[st:$impl]="nvme-cli, fio or nfs-kernel-server not installed (scripts/deps)"
		done
		return
	fi
	for impl in "${ST_IMPLS[@]}"; do
		if [ ! -e "/sys/class/infiniband/$(st_dev "$impl")" ]; then
			DEAD[st:$impl]="no loopback device $(st_dev "$impl")"
		elif ! st_up "$impl"; then
			DEAD[nvme:$impl]="its NVMe/RDMA namespace could not be set up"
		fi
	done
	if ! bounded 120 nfsd_start "$ST_EXPORT" 2>&3; then
		for impl in "${ST_IMPLS[@]}"; do DEAD[nfs:$impl]="nfsd could not start"; done
		return
	fi
	# the file read back, once, outside the measurements
	bounded 120 dd if=/dev/zero of="$ST_EXPORT/seq" bs=1M count="$ST_MB" status=none
	# nfsd's grace period refuses OPENs for its first 10 s
	ST_GRACE_END=$((SECONDS + 12))
}

storage_down() {
	local impl
	for impl in "${ST_IMPLS[@]}"; do
		nvme_ctrl_of "$ST_NQN-$impl" >/dev/null && bounded 60 nvme_rdma_disconnect "$ST_NQN-$impl" 2>&3
	done
	mountpoint -q "$ST_MNT" && bounded 60 umount "$ST_MNT"
	[ -e "$NFSD/threads" ] && bounded 60 nfsd_stop "$ST_EXPORT" 2>&3
	[ -d "$NVMET_CFS" ] && bounded 60 nvmet_clear
	nullb_del 0
	nullb_del 1
	bounded 60 modprobe -r nvme-rdma nvmet-rdma rpcrdma 2>&3
}

# st_fio RW TARGET ARGS...: fio, sequential RW (write or read) of 128 KiB
# blocks at iodepth 16 on TARGET for ST_SECS; sets RESULT (Gbit/s).
st_fio() {
	local rw=$1 target=$2 rc kib f=7
	shift 2
	[ "$rw" = write ] && f=48
	bounded $((ST_SECS + SLACK)) fio --name=st --filename="$target" --rw="$rw" --bs=128k \
		--iodepth=16 --direct=1 --ioengine=libaio --size="${ST_MB}M" --time_based \
		--runtime="$ST_SECS" --output-format=terse "$@" >"$WORK/cli" 2>&1
	rc=$?
	kib=$(awk -F';' -v f=$f 'NF > 100 { print $f }' "$WORK/cli")
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		RESULT=stall
	elif [ $rc != 0 ] || ! numeric "$kib" || [ "$kib" = 0 ]; then
		RESULT=fail
	else
		RESULT=$(awk -v k="$kib" 'BEGIN { printf "%.4f", k * 1024 * 8 / 1e9 }')
	fi
}

# st_run IMPL TEST: one run; sets RESULT.
st_run() {
	local impl=$1 test=$2 addr spid rc us c0 c1
	addr=$(st_addr "$impl")
	c0=$(cpu_ticks)
	case $test in
	nvme_*) st_fio "${test:5:-3}" "${ST_BLK[$impl]}" ;;
	nfs_*)
		[ $SECONDS -ge "$ST_GRACE_END" ] || sleep $((ST_GRACE_END - SECONDS))
		if ! bounded 120 nfs_rdma_mount "$addr" "$ST_MNT" 2>"$WORK/cli"; then
			RESULT=fail
		else
			st_fio "${test:4:-3}" "$ST_MNT/seq"
			bounded 60 umount "$ST_MNT" || RESULT=fail
		fi
		;;
	cmtime_conn_rate)
		PORT=$((PORT + 1))
		timeout -k 3 $((SLACK + 30)) cmtime -b "$addr" -p "$PORT" >"$WORK/srv" 2>&1 &
		spid=$!
		BG_PIDS+=("$spid")
		try_until 20 cm_listening "" "$PORT"
		bounded "$SLACK" cmtime -s "$addr" -p "$PORT" -c "$ST_CONNS" >"$WORK/cli" 2>&1
		rc=$?
		kill "$spid" 2>/dev/null
		reap "$spid" 10
		# "connect      :   total ms   max ms   min us   us / conn"
		us=$(awk -F: '$1 ~ /^(cm )?connect *$/ { split($2, v, " "); print v[1] }' "$WORK/cli")
		if [ $rc = 124 ]; then
			RESULT=stall
		elif [ $rc != 0 ] || ! numeric "$us" || [ "$us" = 0 ] || [ "$us" = 0.00 ]; then
			RESULT=fail
		else
			RESULT=$(awk -v ms="$us" -v n="$ST_CONNS" 'BEGIN { printf "%.1f", n * 1000 / ms }')
		fi
		;;
	esac
	c1=$(cpu_ticks)
	{
		echo "=== $impl st:$test run -> $RESULT ($(cpu_split "$c0" "$c1"))"
		dump "$WORK/cli"
	} >&3
}

# st_cell TEST: ST_RUNS pairs of runs, in turns as every cell.
st_cell() {
	local test=$1 r impl size=131072
	local -A first=()
	[ "$test" != cmtime_conn_rate ] || size=$ST_CONNS
	for ((r = 1; r <= ST_RUNS; r++)); do
		for impl in $(pair_order "${ST_IMPLS[@]}"); do
			if [ -n "${DEAD[st:$impl]:-}${DEAD[${test%%_*}:$impl]:-}" ]; then
				RESULT=fail
			elif [ -n "${first[$impl]:-}" ]; then
				RESULT=${first[$impl]}
			elif [ $SECONDS -ge "$BUDGET" ]; then
				RESULT=skip
			else
				st_run "$impl" "$test"
				numeric "$RESULT" || [ "$r" != 1 ] || first[$impl]=$RESULT
				say "$impl st:$test run $r/$ST_RUNS: $RESULT"
			fi
			out "R $impl st:$test $size $r $RESULT"
		done
		PAIR=$((PAIR + 1))
	done
}

storage_phase() {
	local impl t k
	say "storage: NVMe/RDMA and NFS/RDMA (fio 128 KiB, iodepth 16), cmtime; both ends on one device"
	storage_up
	for impl in "${ST_IMPLS[@]}"; do
		for k in st nvme nfs; do
			[ -n "${DEAD[$k:$impl]:-}" ] || continue
			say "$impl storage: ${DEAD[$k:$impl]}; recording those cells as fail"
			out "P $impl storage: ${DEAD[$k:$impl]}"
		done
	done
	for t in $ST_TESTS; do st_cell "$t"; done
	storage_down
}

# Take every device down and tell the log what the devices counted.
devices_down() {
	local d ns
	for d in rxe0 rxe1 roce0 roce1 rxl0 rol0 iw0 iw1 siw0 siw1; do
		[ -e "/sys/class/infiniband/$d" ] || continue
		echo "=== $d at the end: $(rdma statistic show link "$d"/1 2>&1 | head -1)" >&3
		ns=''
		case $d in roce0) ns=cli ;; roce1) ns=peer ;; iw0) ns=icli ;; iw1) ns=ipeer ;;
		siw0) ns=scli ;; siw1) ns=speer ;; esac
		# shellcheck disable=SC2046
		bounded 30 $(ns_prefix "$ns") rdma link delete "$d"
	done
	! grep -q '^rdma_rxe ' /proc/modules || bounded 60 modprobe -r rdma_rxe
	! grep -q '^siw ' /proc/modules || bounded 60 siw_unload
}

# ---------------------------------------------------------------- interleaving

# The guest's speed drifts: under TCG, latency over a veth moves between
# phases seconds to tens of seconds long, up to ~2x apart, for any
# traffic (a UDP socket ping-pong shows the same; see
# Documentation/benchmarks.md).  So the implementations take turns run by
# run, in pairs ordered A B, B A, A B, ...: the runs of a pair are a few
# seconds apart, and neither always goes first.
IMPLS=()
PAIR=0

# pair_order [IMPL...]: the order of the next pair, of IMPLS by default.
pair_order() {
	local -a l=("$@")
	[ $# -gt 0 ] || l=("${IMPLS[@]}")
	if [ $((PAIR % 2)) = 0 ] || [ ${#l[@]} -lt 2 ]; then
		echo "${l[@]}"
	else
		echo "${l[1]} ${l[0]}"
	fi
}

# probe IMPL: its devices up and a short run.  A transport that carries
# nothing is out at once, instead of costing a timeout per cell.
probe() {
	local impl=$1 v
	say "$impl: setting up"
	if ! "${impl}_up"; then
		DEAD[$impl]="could not set up its devices"
	else
		"${impl}_pick"
		say "$impl: $CLI_DEV (GID $CLI_GID) <-> $SRV_DEV (GID $SRV_GID)"
		LAT_ITERS=100 perf_run ib_send_lat 2 "$impl probe (ib_send_lat 2 B x 100)"
		v=$RESULT
		numeric "$v" || DEAD[$impl]="probe (ib_send_lat, 2 B x 100) result: $v"
	fi
	if [ -n "${DEAD[$impl]:-}" ]; then
		say "$impl: ${DEAD[$impl]}; recording every cell as fail"
		out "P $impl ${DEAD[$impl]}; no cell measured"
	else
		say "$impl: probe ok (ib_send_lat 2 B: $v usec)"
	fi
}

# cell TEST SIZE: BENCH_RUNS (bandwidth) or BENCH_LAT_RUNS (latency)
# pairs of runs.  Once an implementation's first run of the cell has
# failed, its other runs are not tried (a cell that stalls would cost a
# timeout each).
cell() {
	local test=$1 size=$2 r impl v vmin runs=$RUNS
	local -A first=()
	[[ $test != *_lat ]] || runs=$LAT_RUNS
	for ((r = 1; r <= runs; r++)); do
		for impl in $(pair_order); do
			if [ -n "${DEAD[$impl]:-}" ]; then
				v=fail vmin=fail
			elif [ -n "${first[$impl]:-}" ]; then
				v=${first[$impl]} vmin=$v
			elif [ $SECONDS -ge "$BUDGET" ]; then
				v=skip vmin=skip
			else
				"${impl}_pick"
				perf_run "$test" "$size" "$impl $TPFX$test $size run $r"
				v=$RESULT vmin=$RESULT_MIN
				numeric "$v" || [ "$r" != 1 ] || first[$impl]=$v
				if ! numeric "$v"; then
					say "$impl $TPFX$test $size B run $r/$runs: $v"
				elif [[ $test == *_lat ]]; then
					say "$impl $TPFX$test $size B run $r/$runs: $v usec (t_min $vmin)"
				else
					say "$impl $TPFX$test $size B run $r/$runs: $v Gbit/s"
				fi
			fi
			out "R $impl $TPFX$test $size $r $v"
			case $test in *_lat) out "R $impl $TPFX$test/min $size $r $vmin" ;; esac
		done
		PAIR=$((PAIR + 1))
	done
}

# iperf3 TCP over softrnic's pair, netns cli -> netns peer: the ceiling
# the kernel's own stack reaches over a veth pair like the two measured.
iperf_runs() {
	local r spid v rc
	for ((r = 1; r <= RUNS; r++)); do
		PORT=$((PORT + 1))
		"$IP" netns exec peer timeout -k 3 $((IPERF_SECS + 40)) iperf3 -s -1 -p "$PORT" >"$WORK/srv" 2>&1 &
		spid=$!
		BG_PIDS+=("$spid")
		if ! wait_server_listen "$spid" "$PORT"; then
			v=fail
		else
			bounded $((IPERF_SECS + 20)) "$IP" netns exec cli iperf3 -c "$B" -p "$PORT" -t "$IPERF_SECS" -f g >"$WORK/cli" 2>&1
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

cleanup() {
	# A child killed between fork and exec (e.g. bounded's watchdog) is
	# still this bash, and bash runs the EXIT trap on a fatal signal.
	[ "$BASHPID" = "$$" ] || return 0
	local p
	for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	devices_down 2>/dev/null
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
out "M lat_runs $LAT_RUNS"
out "M bw_sizes $BW_SIZES"
out "M lat_sizes $LAT_SIZES"
out "M bw_tests $BW_TESTS"
out "M lat_tests $LAT_TESTS"
out "M duration $DUR"
out "M bw_iter $((BW_ITER_SIZE >= 1048576 ? BW_ITER_SIZE / 1048576 : BW_ITER_SIZE))$([ "$BW_ITER_SIZE" -ge 1048576 ] && echo " MiB" || echo " B") and up: -n for $((BW_BYTES / 1048576)) MiB"
out "M lat_iters $LAT_ITERS"
out "M phases $PHASES"
case " $PHASES " in
*" loopback "*)
	out "M lo_runs $LO_RUNS"
	out "M lo_lat_runs $LO_LAT_RUNS"
	out "M lo_bw_sizes $LO_BW_SIZES"
	out "M lo_lat_sizes $LO_LAT_SIZES"
	;;
esac
case " $PHASES " in *" iwarp "*) out "M iwarp 1" ;; esac
case " $PHASES " in
*" storage "*)
	out "M st_runs $ST_RUNS"
	out "M st_secs $ST_SECS"
	out "M st_tests $ST_TESTS"
	;;
esac
grep -q tsc=reliable /proc/cmdline || out "P all the kernel lacks tsc=reliable: perftest's clock calibration is unreliable"
say "$accel, $(nproc) vCPUs, $RUNS/$LAT_RUNS run(s) per bw/lat cell, bw: $BW_TESTS x $BW_SIZES B, lat: $LAT_TESTS x $LAT_SIZES B"

unload_softrnic 2>/dev/null
bounded 30 modprobe -r rdma_rxe 2>/dev/null
net_cleanup
iperf='' loopback='' storage='' iwarp=''
for phase in $PHASES; do
	case $phase in
	rxe | softrnic) IMPLS+=("$phase") ;;
	iperf3) iperf=1 ;;
	loopback) loopback=1 ;;
	storage) storage=1 ;;
	iwarp) iwarp=1 ;;
	*) say "unknown phase $phase (rxe, iperf3, softrnic, loopback, storage, iwarp)" ;;
	esac
done
for impl in "${IMPLS[@]}"; do probe "$impl"; done
if [ -n "$iperf" ]; then
	if [ -e /run/netns/peer ] || net_ns_setup; then
		iperf_runs
	else
		say "could not set up veth pair sr0/sr1 for iperf3"
		for ((r = 1; r <= RUNS; r++)); do out "I iperf3 $r fail"; done
	fi
fi
say "runs: ${IMPLS[*]} taking turns, pairs ordered A B, B A, ..."
for t in $BW_TESTS; do for s in $BW_SIZES; do cell "$t" "$s"; done; done
for t in $LAT_TESTS; do for s in $LAT_SIZES; do cell "$t" "$s"; done; done
if [ -n "$loopback" ] && [ ${#IMPLS[@]} -gt 0 ]; then
	say "loopback: both ends on one device"
	loopback_up
	TPFX=lo: RUNS=$LO_RUNS LAT_RUNS=$LO_LAT_RUNS
	for t in $BW_TESTS; do for s in $LO_BW_SIZES; do cell "$t" "$s"; done; done
	for t in $LAT_TESTS; do for s in $LO_LAT_SIZES; do cell "$t" "$s"; done; done
	TPFX=''
fi
[ -z "$storage" ] || storage_phase
# Last: its wildcard rdma_cm listens would reach the iWARP devices, and
# theirs every device (see "iwarp").
if [ -n "$iwarp" ]; then
	say "iwarp: softrnic's iWARP and siw, perftest -R (rdma_cm), MPA CRC off"
	IMPLS=("${IW_IMPLS[@]}")
	for impl in "${IMPLS[@]}"; do probe "$impl"; done
	say "iwarp runs: ${IMPLS[*]} taking turns, pairs ordered A B, B A, ..."
	TPFX=iw:
	for t in $BW_TESTS; do for s in $BW_SIZES; do cell "$t" "$s"; done; done
	for t in $LAT_TESTS; do for s in $LAT_SIZES; do cell "$t" "$s"; done; done
	TPFX=''
fi
devices_down
if grep -q '^softrnic ' /proc/modules; then
	bounded 60 rmmod softrnic || out "P softrnic rmmod softrnic failed"
fi
say "done"
exit 0
