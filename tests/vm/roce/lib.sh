# shellcheck shell=bash
# Helpers for the RoCE transport tests (tests/vm/roce_*.sh); source after
# lib.sh.  Not a test itself (run-suite only runs files it is given, and
# this one exits 0 if run).

# gid_index DEV HEXGID: the index of RoCE v2 GID HEXGID (sysfs format,
# e.g. 0000:0000:0000:0000:0000:ffff:0a00:0001) on port 1 of DEV.
gid_index() {
	local dev=$1 want=$2 f i g t
	for f in /sys/class/infiniband/"$dev"/ports/1/gids/*; do
		i=${f##*/}
		read -r g <"$f" 2>/dev/null || continue
		[ "$g" = "$want" ] || continue
		read -r t <"/sys/class/infiniband/$dev/ports/1/gid_attrs/types/$i" 2>/dev/null
		[ "$t" = "RoCE v2" ] && { echo "$i"; return 0; }
	done
	return 1
}

GID4_0=0000:0000:0000:0000:0000:ffff:0a00:0001	# 10.0.0.1
GID4_1=0000:0000:0000:0000:0000:ffff:0a00:0002	# 10.0.0.2
GID6_0=fd00:0000:0000:0000:0000:0000:0000:0001	# fd00::1
GID6_1=fd00:0000:0000:0000:0000:0000:0000:0002	# fd00::2

# wait_gid VAR DEV HEXGID: set VAR to the GID's index once ib_core has
# filled it in (the GID cache follows netdev events asynchronously).
wait_gid() {
	local var=$1 dev=$2 want=$3 i
	retry_until 20 gid_index "$dev" "$want" >/dev/null
	i=$(gid_index "$dev" "$want") || die "no GID $want on $dev"
	printf -v "$var" '%s' "$i"
}

# roce_pair_up: the two-namespace setup every RoCE suite starts from:
# veth sr0 (init_net, 10.0.0.1, fd00::1) <-> sr1 (netns peer, 10.0.0.2,
# fd00::2), softrnic loaded, roce0 on sr0 and roce1 on sr1, and their
# IPv4 GID indexes in g0 and g1.  rdma_rxe is unloaded first, so that
# the suites start from the same state whatever ran before them.
roce_pair_up() {
	net_setup
	modprobe -r rdma_rxe 2>/dev/null
	load_softrnic || die "modprobe softrnic"
	rdma link add roce0 type roce netdev sr0 || die "add roce0"
	in_peer rdma link add roce1 type roce netdev sr1 || die "add roce1"
	wait_gid g0 roce0 "$GID4_0"
	wait_gid g1 roce1 "$GID4_1"
}

# rxe_instead_of_roce0: the softrnic device on sr0 goes, rdma_rxe comes
# (init_net is the only namespace 6.1's rxe works in), its IPv4 GID index
# in r0: for the interop halves of the RoCE suites.
rxe_instead_of_roce0() {
	rdma link delete roce0 || die "delete roce0"
	modprobe rdma_rxe || die "modprobe rdma_rxe"
	rdma link add rxe0 type rxe netdev sr0 || die "add rxe0"
	wait_gid r0 rxe0 "$GID4_0"
}

# vlan10_up: VLAN 10 on both ends of the pair, sr0.10 (init_net,
# 10.0.10.1) and sr1.10 (netns peer, 10.0.10.2).
vlan10_up() {
	"$IP" link add link sr0 name sr0.10 type vlan id 10 &&
		"$IP" addr add 10.0.10.1/24 dev sr0.10 &&
		"$IP" link set sr0.10 up || die "sr0.10"
	in_peer "$IP" link add link sr1 name sr1.10 type vlan id 10 &&
		in_peer "$IP" addr add 10.0.10.2/24 dev sr1.10 &&
		in_peer "$IP" link set sr1.10 up || die "sr1.10"
}

# counter DEV NAME [PREFIX]: one hw counter of DEV (rdma statistic), run
# under PREFIX ("" or in_peer); empty if DEV has no such counter.
counter() {
	$3 rdma statistic show link "$1/1" 2>/dev/null |
		awk -v n="$2" '{ for (i = 3; i < NF; i += 2) if ($i == n) print $(i + 1) }'
}

# wait_listen PREFIX PORT PID: until a TCP socket listens on PORT in the
# namespace PREFIX runs in ("" or in_peer), or process PID is gone; at
# most 600 looks (scaled).
wait_listen() {
	local pfx=$1 port=$2 pid=$3 hex i n
	printf -v hex ':%04X ' "$port"
	n=$(scaled 600)
	for ((i = 0; i < n; i++)); do
		$pfx cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
			awk -v p="$hex" 'index($2 " ", p) && $4 == "0A" { f = 1 } END { exit !f }' &&
			return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# pair_run SRV_PREFIX CLI_PREFIX TIMEOUT "SERVER CMD" "CLIENT CMD": the
# server under SRV_PREFIX ("" or in_peer), the client under CLI_PREFIX
# once the server listens on ${PORT:-18515}; both must succeed, each
# within TIMEOUT (seconds, scaled).
pair_run() {
	local spfx=$1 cpfx=$2 t srv=$4 cli=$5 spid rc=0 log
	t=$(scaled "$3")
	log=$(mktemp)
	# shellcheck disable=SC2086
	$spfx timeout "$t" $srv >"$log" 2>&1 &
	spid=$!
	wait_listen "$spfx" "${PORT:-18515}" "$spid" || rc=101
	# shellcheck disable=SC2086
	[ $rc = 0 ] && { $cpfx timeout "$t" $cli || rc=$?; }
	wait "$spid" || { [ $rc = 0 ] && rc=100; }
	sed 's/^/    server: /' "$log"
	rm -f "$log"
	return $rc
}

# run_pair TIMEOUT "SERVER CMD" "CLIENT CMD": server in the peer
# namespace, client here.
run_pair() { pair_run in_peer "" "$@"; }

# ---- softrnic-integrity pairs (tests/vm/progs/integrity.cpp):
# roce_integrity.sh, fault_kill.sh

# userspace_prog VAR NAME: VAR := the test program NAME of this tree's
# userspace build, or with SOFTRNIC_USERSPACE_BUILD of that tree, whose
# provider is then used too.
userspace_prog() {
	local build=${SOFTRNIC_USERSPACE_BUILD:-$SOFTRNIC_ROOT/build/userspace}
	[ -x "$build/$2" ] || die "$build/$2 not built (make userspace)"
	if [ -n "${SOFTRNIC_USERSPACE_BUILD:-}" ]; then
		export RDMAV_DRIVERS=$build/provider/libsoftrnic
	fi
	printf -v "$1" '%s' "$build/$2"
}

# integrity_setup: $integ, the tool.
integrity_setup() { userspace_prog integ softrnic-integrity; }

# pair_ends WHERE: spfx, cpfx and addr for a server/client pair of
# processes.  WHERE = peer: server in netns peer, client here; init: the
# other way round; loop: both here, the client connecting to this host's
# own address.
pair_ends() {
	case $1 in
	peer) spfx=in_peer cpfx="" addr=10.0.0.2 ;;
	init) spfx="" cpfx=in_peer addr=10.0.0.1 ;;
	loop) spfx="" cpfx="" addr=10.0.0.1 ;;
	*) die "pair_ends: WHERE is peer, init or loop, not $1" ;;
	esac
}

INTEGRITY_PORT=18700
# integrity_pair NAME WHERE SRV_DEV CLI_DEV [ARGS...]: server on SRV_DEV,
# client on CLI_DEV, ARGS for both (see pair_ends for WHERE).  Output
# in /tmp/NAME.{srv,cli}; status: 0 if both ends exit 0, else the
# client's status or 100 (server failed).
integrity_pair() {
	local name=$1 where=$2 sdev=$3 cdev=$4 spfx cpfx addr spid rc=0
	shift 4
	INTEGRITY_PORT=$((INTEGRITY_PORT + 1))
	pair_ends "$where"
	# 60 s (scaled): a normal pair takes a few seconds; a stalled one
	# must fail (with its diagnostics) well inside the test's timeout
	$spfx "$integ" -d "$sdev" -p $INTEGRITY_PORT --timeout "$(scaled 60)" "$@" >"/tmp/$name.srv" 2>&1 &
	spid=$!
	wait_listen "$spfx" $INTEGRITY_PORT $spid ||
		{ cat "/tmp/$name.srv"; die "$name: server did not start"; }
	$cpfx "$integ" -d "$cdev" -p $INTEGRITY_PORT --timeout "$(scaled 60)" "$@" $addr >"/tmp/$name.cli" 2>&1 || rc=$?
	wait $spid || { [ $rc = 0 ] && rc=100; }
	return $rc
}

integrity_show() {
	sed 's/^/    server: /' "/tmp/$1.srv"
	sed 's/^/    client: /' "/tmp/$1.cli"
}

# integrity NAME WHERE SRV_DEV CLI_DEV [ARGS...]: a pair that must pass
integrity() {
	local name=$1
	local rc=0
	integrity_pair "$@" || rc=$?
	[ $rc = 0 ] || { integrity_show "$name"; die "$name: data or completions wrong (status $rc)"; }
	log "$name: $(tail -n 1 "/tmp/$name.cli") ($(grep -o '[0-9.]* s, [0-9.]* MB/s' "/tmp/$name.cli"))"
}

# veth_local_up: both veth ends in init_net, sr0 10.0.0.1 fd00::1, sr1
# 10.0.0.2 fd00::2: two devices of one host cabled to each other.
veth_local_up() {
	"$IP" link del sr0 2>/dev/null
	"$IP" link add sr0 type veth peer name sr1 || die "veth"
	net_fast_dad sr0 && net_fast_dad sr1 || die "sysctl dad"
	"$IP" addr add 10.0.0.1/24 dev sr0 && "$IP" -6 addr add fd00::1/64 dev sr0 nodad &&
		"$IP" addr add 10.0.0.2/24 dev sr1 && "$IP" -6 addr add fd00::2/64 dev sr1 nodad &&
		"$IP" link set sr0 up && "$IP" link set sr1 up || die "addresses"
	# IPv4 between two netdevs of one host goes over the cable (a route
	# bound to sr0 never takes sr1's local route): each end must accept
	# packets, ARP included, from an address of its own host, as with
	# two ports of any RNIC cabled to each other.
	sysctl -qw net.ipv4.conf.sr0.accept_local=1 net.ipv4.conf.sr1.accept_local=1 ||
		die "accept_local"
	retry_until 5 net_ll_ready sr0
	retry_until 5 net_ll_ready sr1
}
