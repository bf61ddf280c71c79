# shellcheck shell=bash
# Helpers for VM tests (tests/vm/*.sh), which scripts/vm/run-suite runs
# inside the test VM.  Source it first thing:
#     . "$(dirname "$0")/lib.sh"
# A test exits 0 to pass, 77 to be skipped, anything else to fail.  Kernel
# splats logged while it runs fail it regardless (run-suite checks).
#
# Network: net_setup gives two "hosts" joined by a cable:
#     sr0  initial netns   10.0.0.1/24  fd00::1/64
#     sr1  netns "peer"    10.0.0.2/24  fd00::2/64
# sr0 stays in the initial namespace because Linux 6.1's rdma_rxe only
# works there.  The cable is one of two topologies, chosen by
# SOFTRNIC_VM_NICS:
#   veth    (default) sr0/sr1 are the two ends of a veth pair, made by
#           net_setup and deleted by net_teardown.
#   virtio  sr0/sr1 are the guest's two virtio-net NICs (PCI functions,
#           driven by virtio_net), which QEMU joins back to back through
#           a hub; the VM has them only when asked: SOFTRNIC_VM_NICS=virtio
#           for scripts/vm/run or run-suite, or a test's "# vm-nics:
#           virtio" line (such a test sets SOFTRNIC_VM_NICS=virtio itself).
#           net_setup binds virtio_net, renames the NICs (the lower MAC
#           becomes sr0) and moves sr1 to the peer netns; net_teardown
#           unbinds the driver, which removes both netdevs wherever they
#           are, so every net_setup starts from fresh netdevs as with a
#           veth.  Unlike a veth, a NIC has a parent device (an RDMA device
#           on it shows up under /sys/class/infiniband/DEV/device/net/),
#           virtio_net hands the receiver skbs in page fragments, and GRO
#           runs on them; offloads are virtio_net's defaults (with QEMU's
#           hub there is no checksum offload, TSO or USO).
# Every test that only uses sr0/sr1 through net_setup runs unchanged on
# either; tests that delete sr0 or make their own veths are veth-only.

if [ "${SOFTRNIC_VM:-}" != 1 ] && [ "${SOFTRNIC_ALLOW_HOST:-}" != 1 ]; then
	# These tests rewire the network and load modules: keep them off hosts.
	echo "$0: VM test; run it with scripts/vm/run-suite $0" >&2
	echo "    (or set SOFTRNIC_ALLOW_HOST=1 on a disposable machine)" >&2
	exit 2
fi

: "${SOFTRNIC_ROOT:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
export SOFTRNIC_ROOT

# iproute2's ip, explicitly: busybox's ip applet (which a busybox shell
# prefers) cannot create veth pairs.
IP=/usr/sbin/ip
[ -x "$IP" ] || IP=/sbin/ip
[ -x "$IP" ] || IP=/bin/ip

PEER_NS=peer

log() { printf '%(%H:%M:%S)T %s\n' -1 "$*" >&2; }

die() {
	log "FAIL: $*"
	exit 1
}

skip() {
	log "SKIP: $*"
	exit 77
}

# assert_eq ACTUAL EXPECTED [WHAT]
assert_eq() {
	[ "$1" = "$2" ] || die "${3:-value}: expected '$2', got '$1'"
}

# scaled SECONDS: SECONDS times SOFTRNIC_VM_TIMEOUT_SCALE, for the time
# limit a test gives a tool (timeout(1), a tool's --timeout): under the
# debug kernel (scale 3) everything takes longer, the tool's work too.
scaled() { echo $(($1 * ${SOFTRNIC_VM_TIMEOUT_SCALE:-1})); }

# descaled COUNT: COUNT divided by SOFTRNIC_VM_TIMEOUT_SCALE (at least 1),
# for the amount of data a data-heavy test moves: the debug kernel moves
# data 5-10 times slower, more than scaled time limits allow, and a smaller
# transfer runs the same code paths.
descaled() {
	local n=$(($1 / ${SOFTRNIC_VM_TIMEOUT_SCALE:-1}))
	echo $((n > 0 ? n : 1))
}

# perftest_scaled_opts: perftest options for tests with many QPs' windows
# in flight at once: nothing at scale 1; under a timeout scale (the debug
# kernel moves data 10-20 times slower) a 1.07 s local ACK timeout (-u 18
# for perftest's 67 ms) and 16 WQEs in flight per QP (-t 16 for 128).
# Otherwise the requesters retransmit whole windows the responder still
# has queued, until one runs out of retries (RETRY_EXC); a lost packet
# still fails a transfer.
perftest_scaled_opts() {
	[ "${SOFTRNIC_VM_TIMEOUT_SCALE:-1}" -gt 1 ] && echo "-u 18 -t 16"
	return 0
}

# try_until SECONDS CMD [ARGS...]: run CMD every 0.1 s until it succeeds
# (status 0) or SECONDS (may be fractional) times SOFTRNIC_VM_TIMEOUT_SCALE
# (run-suite's, e.g. 3 under the debug kernel) have passed (status 1).
# For state that settles asynchronously: port state, device removal, ...
try_until() {
	local limit=$1 int frac end
	shift
	# Deadline in microseconds (EPOCHREALTIME without its dot).
	int=${limit%%.*} frac=${limit#"$int"}
	frac=${frac#.}000000
	end=$(((${int:-0} * 1000000 + 10#${frac:0:6}) * ${SOFTRNIC_VM_TIMEOUT_SCALE:-1}))
	end=$((${EPOCHREALTIME/./} + end))
	while :; do
		"$@" && return 0
		[ "${EPOCHREALTIME/./}" -lt "$end" ] || return 1
		sleep 0.1
	done
}

# retry_until SECONDS CMD [ARGS...]: as try_until, but the test fails if
# CMD never succeeds.  Note CMD's arguments are evaluated once: to poll a
# changing value, poll a command (e.g. sh -c '...' or a function).
retry_until() {
	local limit=$1
	shift
	try_until "$limit" "$@" || die "timed out after $limit s waiting for: $*"
}

# in_peer CMD [ARGS...]: run CMD in the peer network namespace.
in_peer() { "$IP" netns exec "$PEER_NS" "$@"; }

NET_TOPOLOGY=${SOFTRNIC_VM_NICS:-veth}
case $NET_TOPOLOGY in
veth | virtio) ;;
*) die "SOFTRNIC_VM_NICS must be veth or virtio, not '$NET_TOPOLOGY'" ;;
esac

VIRTIO_NET_DRV=/sys/bus/virtio/drivers/virtio_net

net_teardown() {
	# Deleting one end of the veth pair deletes both, synchronously; the
	# namespace itself is cleaned up by the kernel in the background.
	"$IP" link del sr0 2>/dev/null
	# The virtio NICs, in either topology: a virtio test that died
	# half-way must not leave its sr0/sr1 to a veth test.  Unbinding is
	# synchronous too; the driver unregisters the netdevs wherever they
	# are, and RDMA devices on them go first.
	_net_virtio_unbind
	"$IP" netns del "$PEER_NS" 2>/dev/null
	return 0
}

_net_virtio_unbind() {
	local d
	for d in "$VIRTIO_NET_DRV"/virtio*; do
		[ -e "$d" ] || continue
		echo "${d##*/}" >"$VIRTIO_NET_DRV/unbind" || log "cannot unbind ${d##*/} from virtio_net"
	done
}

# _net_virtio_nics: "MAC NAME" of every netdev virtio_net drives here,
# sorted by MAC.
_net_virtio_nics() {
	local n drv mac
	for n in /sys/class/net/*; do
		drv=$(readlink "$n/device/driver" 2>/dev/null) || continue
		[ "${drv##*/}" = virtio_net ] || continue
		read -r mac <"$n/address"
		echo "$mac ${n##*/}"
	done | sort
}

_net_virtio_count() { [ "$(_net_virtio_nics | wc -l)" -eq "$1" ]; }

# The two virtio NICs, freshly bound, as sr0 here and sr1 in the peer ns.
_net_virtio_setup() {
	local d id nics
	[ -d "$VIRTIO_NET_DRV" ] || modprobe virtio_net || die "modprobe virtio_net"
	# Every virtio network device (virtio device ID 1) without a driver.
	for d in /sys/bus/virtio/devices/*; do
		read -r id <"$d/device" || continue
		[ "$id" = 0x0001 ] && [ ! -e "$d/driver" ] || continue
		echo "${d##*/}" >"$VIRTIO_NET_DRV/bind" || die "cannot bind ${d##*/} to virtio_net"
	done
	try_until 5 _net_virtio_count 2 ||
		die "SOFTRNIC_VM_NICS=virtio, but the VM has $(_net_virtio_nics | wc -l) virtio-net NICs, not 2" \
			"(give the test a '# vm-nics: virtio' line, or set SOFTRNIC_VM_NICS=virtio for run-suite)"
	mapfile -t nics < <(_net_virtio_nics)
	"$IP" link set "${nics[0]#* }" name sr0 &&
		"$IP" link set "${nics[1]#* }" name sr1 || die "cannot rename ${nics[*]} to sr0/sr1"
}

net_setup() {
	net_teardown # leftovers of a test that died half-way
	"$IP" link set lo up || die "lo up"
	if [ "$NET_TOPOLOGY" = virtio ]; then
		_net_virtio_setup
	else
		"$IP" link add sr0 type veth peer name sr1 || die "cannot create veth pair sr0/sr1"
	fi
	"$IP" netns add "$PEER_NS" || die "cannot create netns $PEER_NS"
	"$IP" link set sr1 netns "$PEER_NS" || die "cannot move sr1 to netns $PEER_NS"
	# nodad and net_fast_dad: the addresses are usable at once instead of
	# after ~1-2 s of duplicate address detection.
	net_fast_dad sr0 &&
		"$IP" addr add 10.0.0.1/24 dev sr0 &&
		"$IP" -6 addr add fd00::1/64 dev sr0 nodad &&
		"$IP" link set sr0 up || die "cannot configure sr0"
	in_peer "$IP" link set lo up &&
		net_fast_dad sr1 in_peer &&
		in_peer "$IP" addr add 10.0.0.2/24 dev sr1 &&
		in_peer "$IP" -6 addr add fd00::2/64 dev sr1 nodad &&
		in_peer "$IP" link set sr1 up || die "cannot configure sr1"
	# A veth's carrier comes up once both ends are up, a NIC's once the
	# driver has opened it.
	retry_until 5 _net_carrier_up
	retry_until 5 net_ll_ready sr0
	retry_until 5 net_ll_ready sr1 in_peer
}

# net_fast_dad DEV [in_peer]: DEV's link-local address (added when the
# link comes up) skips duplicate address detection, as the nodad addresses
# do.  Set before the link is up.
net_fast_dad() {
	local dev=$1
	shift
	"$@" sysctl -qw "net.ipv6.conf.$dev.dad_transmits=0" \
		"net.ipv6.conf.$dev.router_solicitation_delay=0"
}

# net_ll_ready DEV [in_peer]: DEV has a link-local address that is not
# tentative.
# GID 0 of a RoCE device is that address, and ib_core resolves it through
# the route, which while the address is tentative leads to neighbour
# discovery of our own address: modify QP to RTR fails with ETIMEDOUT.
net_ll_ready() {
	local dev=$1
	shift
	"$@" "$IP" -6 addr show dev "$dev" scope link |
		awk '/inet6/ && !/tentative/ { ok = 1 } END { exit !ok }'
}

_net_carrier_up() {
	[ "$(cat /sys/class/net/sr0/carrier 2>/dev/null)" = 1 ] &&
		[ "$(in_peer cat /sys/class/net/sr1/carrier 2>/dev/null)" = 1 ]
}

# Is softrnic.ko installed for the running kernel?  (scripts/vm stages
# this tree's kernel/softrnic.ko when it has been built.)
have_softrnic() { modinfo softrnic >/dev/null 2>&1; }

# load_softrnic / unload_softrnic: nothing to do (status 0) when the module
# is not installed / not loaded; a failing modprobe/rmmod is returned.
load_softrnic() {
	have_softrnic || {
		log "softrnic.ko not installed; not loading it"
		return 0
	}
	modprobe softrnic
}

unload_softrnic() {
	grep -q '^softrnic ' /proc/modules || return 0
	rmmod softrnic
}

# ---- kernel storage over RDMA (NVMe-oF, NFS/RDMA): roce_nvmeof.sh,
# roce_nfsrdma.sh and the bench's storage phase.  Each returns non-zero
# on failure (no die): the bench records a failure and goes on.
# nvme-rdma and nvmet-rdma create their CM ids in init_net, whatever
# namespace they are set up from; nfsd and the NFS client use the
# namespace they are started or mounted in.

NVMET_CFS=/sys/kernel/config/nvmet
NVME_HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:5e72c0de-0000-4000-8000-000000000001
NVME_HOSTID=5e72c0de-0000-4000-8000-000000000001

_configfs_up() {
	# Debian's configfs is a module: /sys/kernel/config exists once it is
	# loaded (nvmet loads it too, but null_blk may come first).
	modprobe configfs || return 1
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
}

# nullb_mem N MB: memory-backed null_blk /dev/nullbN of MB MiB (what is
# read back is what was written), 4 KiB blocks.
nullb_mem() {
	local nb=/sys/kernel/config/nullb/nullb$1
	_configfs_up && modprobe null_blk nr_devices=0 || return 1
	mkdir "$nb" && echo "$2" >"$nb/size" && echo 1 >"$nb/memory_backed" &&
		echo 4096 >"$nb/blocksize" && echo 1 >"$nb/power" || return 1
	try_until 10 test -b "/dev/nullb$1"
}

nullb_del() { rmdir "/sys/kernel/config/nullb/nullb$1" 2>/dev/null; }

# nvmet_subsys NQN BLOCKDEV: subsystem NQN, any host, namespace 1 on
# BLOCKDEV.
nvmet_subsys() {
	local s=$NVMET_CFS/subsystems/$1
	_configfs_up && modprobe nvmet-rdma || return 1
	mkdir "$s" && echo 1 >"$s/attr_allow_any_host" && mkdir "$s/namespaces/1" &&
		echo "$2" >"$s/namespaces/1/device_path" && echo 1 >"$s/namespaces/1/enable"
}

# nvmet_port ID ADDR NQN: RDMA port ID on IPv4 ADDR:4420 (made if new),
# serving subsystem NQN.
nvmet_port() {
	local p=$NVMET_CFS/ports/$1
	[ -d "$p" ] || { mkdir "$p" && echo rdma >"$p/addr_trtype" &&
		echo ipv4 >"$p/addr_adrfam" && echo "$2" >"$p/addr_traddr" &&
		echo 4420 >"$p/addr_trsvcid"; } || return 1
	ln -s "$NVMET_CFS/subsystems/$3" "$p/subsystems/$3"
}

# nvmet_unport ID NQN: port ID stops serving NQN (its controllers go).
nvmet_unport() { rm "$NVMET_CFS/ports/$1/subsystems/$2"; }

# nvmet_clear: every port and subsystem goes.
nvmet_clear() {
	local p s
	for p in "$NVMET_CFS"/ports/*; do
		[ -d "$p" ] || continue
		rm -f "$p"/subsystems/*
		rmdir "$p"
	done
	for s in "$NVMET_CFS"/subsystems/*; do
		[ -d "$s" ] || continue
		echo 0 >"$s/namespaces/1/enable" 2>/dev/null
		rmdir "$s"/namespaces/* "$s"
	done
	# one directory per ls: ls of two prints their names even when empty
	[ -z "$(ls -A "$NVMET_CFS/subsystems")" ] && [ -z "$(ls -A "$NVMET_CFS/ports")" ]
}

# nvme_ctrl_of NQN: the host's controller (nvmeN) connected to NQN.
nvme_ctrl_of() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/subsysnqn" ] && [ "$(cat "$c/subsysnqn")" = "$1" ] || continue
		echo "${c##*/}"
		return 0
	done
	return 1
}

nvme_gone() { ! nvme_ctrl_of "$1" >/dev/null; }

nvme_live() { [ "$(cat "/sys/class/nvme/$1/state" 2>/dev/null)" = live ]; }

# nvme_blk NQN: the block device of namespace 1 of subsystem NQN (with
# native multipath, Debian's default, it hangs off the subsystem, and
# the controller has only the hidden path device nvmeXcYn1).
nvme_blk() {
	local s b
	for s in /sys/class/nvme-subsystem/* /sys/class/nvme/*; do
		[ -e "$s/subsysnqn" ] && [ "$(cat "$s/subsysnqn")" = "$1" ] || continue
		for b in "$s"/nvme*n1; do
			[[ ${b##*/} != *c*n1 ]] && [ -b "/dev/${b##*/}" ] &&
				{ echo "/dev/${b##*/}"; return 0; }
		done
	done
	return 1
}

# nvme_rdma_connect NQN ADDR [nvme connect args]: the host connects over
# RDMA (2 I/O queues) and waits until the controller is live and its
# namespace has a block device.  Sets NVME_CTRL and NVME_BLK.
nvme_rdma_connect() {
	local nqn=$1 addr=$2
	shift 2
	modprobe nvme-rdma || return 1
	timeout -k 5 60 nvme connect -t rdma -a "$addr" -s 4420 -n "$nqn" -q "$NVME_HOSTNQN" \
		-I "$NVME_HOSTID" -i 2 "$@" >&2 || return 1
	try_until 30 nvme_ctrl_of "$nqn" >/dev/null || return 1
	NVME_CTRL=$(nvme_ctrl_of "$nqn")
	try_until 30 nvme_live "$NVME_CTRL" && try_until 30 nvme_blk "$nqn" >/dev/null ||
		return 1
	NVME_BLK=$(nvme_blk "$nqn")
}

# nvme_rdma_disconnect NQN: and wait until its controller is gone.
nvme_rdma_disconnect() {
	timeout -k 5 60 nvme disconnect -n "$1" >&2 && try_until 30 nvme_gone "$1"
}

NFSD=/proc/fs/nfsd

# nfsd_start EXPORT: an NFSv4-only server (no rpcbind needed) in this
# namespace, exporting EXPORT (a fresh 600 MiB tmpfs), listening for RDMA
# on port 20049 of every device here.  /var is a fresh tmpfs in the
# guest: nfsd's state directories are made there.  The grace period
# after a start refuses OPENs: it is made as short as it can be (10 s).
nfsd_start() {
	local export=$1
	mkdir -p /var/lib/nfs/v4recovery /var/lib/nfs/rpc_pipefs "$export" &&
		mount -t tmpfs -o size=600m nfsrdma "$export" || return 1
	# fsid=0: the export is NFSv4's root; the guest's overlayfs root has
	# no UUID for mountd to build a pseudo root from.
	echo "$export *(rw,no_root_squash,insecure,no_subtree_check,fsid=0)" >/etc/exports
	modprobe nfsd && modprobe rpcrdma || return 1
	mountpoint -q $NFSD || mount -t nfsd nfsd $NFSD || return 1
	echo "-2 -3 +4 +4.1 +4.2" >$NFSD/versions &&
		echo 10 >$NFSD/nfsv4leasetime && echo 10 >$NFSD/nfsv4gracetime || return 1
	timeout 60 exportfs -r && timeout 60 rpc.mountd -N 2 -N 3 -u || return 1
	echo "rdma 20049" >$NFSD/portlist && echo 4 >$NFSD/threads || return 1
	grep -q "rdma 20049" $NFSD/portlist
}

_no_mountd() { ! pgrep -x rpc.mountd >/dev/null; }

# nfsd_stop EXPORT: threads, exports, mountd, the export's tmpfs.
nfsd_stop() {
	echo 0 >$NFSD/threads && [ "$(cat $NFSD/threads)" = 0 ] || return 1
	timeout 30 exportfs -ua
	pkill -x rpc.mountd
	try_until 30 _no_mountd || return 1
	umount $NFSD && umount "$1"
}

# nfs_rdma_mount ADDR DIR: the export of nfsd_start (NFSv4's root) at
# ADDR, NFSv4.2 over RDMA (port 20049), and check that it really is.
nfs_rdma_mount() {
	mkdir -p "$2" && timeout -k 5 120 mount -t nfs4 -o rdma,port=20049,vers=4.2 "$1:/" "$2" &&
		grep " $2 " /proc/mounts | grep -q proto=rdma
}

# kmod_passed TAG [SUMMARY...]: the kernel log since the last dmesg -C
# shows a test module (tests/kmod, its lines prefixed "TAG: ") that ran and
# passed: exactly one "TAG: done: N checks, 0 failed" with N > 0, no
# "TAG: FAIL" line, and every SUMMARY (an ERE, after "TAG: ") that the
# module prints for each part it must have run.  A module that ran no
# checks, or skipped a device or a part, fails.
kmod_passed() {
	local tag=$1 k s
	shift
	k=$(dmesg)
	if grep -q "$tag: FAIL" <<<"$k"; then
		log "$tag reports failures"
		return 1
	fi
	[ "$(grep -Ec "$tag: done: [1-9][0-9]* checks, 0 failed\$" <<<"$k")" = 1 ] || {
		log "$tag: no single 'done: N checks, 0 failed' with N > 0"
		return 1
	}
	for s; do
		grep -Eq "$tag: $s" <<<"$k" || {
			log "$tag: missing summary '$s'"
			return 1
		}
	done
}

# ---- RDMA CM tools (librdmacm's, perftest -R) between two ends.

CM_OUT=/tmp/cm

# cm_listening PREFIX PORT: an RDMA CM id listens on PORT in the
# namespace PREFIX ("" or in_peer) runs in.
cm_listening() {
	$1 rdma resource show cm_id 2>/dev/null |
		grep -q "state LISTEN .*src-addr [^ ]*:$2\b"
}

# wait_cm_listen PREFIX PORT PID: until cm_listening, or PID is gone; at
# most 300 looks (scaled).
wait_cm_listen() {
	local i n
	n=$(scaled 300)
	for ((i = 0; i < n; i++)); do
		cm_listening "$1" "$2" && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# tool_crash_ok PID: a crash of the user-space tool PID (a "traps: COMM[PID]
# general protection fault" kernel line) is the tool's own, as the test
# has told from its output: the harness does not count it as a splat
# (scripts/vm/guest-suite).  Outside the harness (make bench) a no-op.
tool_crash_ok() {
	[ -n "${SOFTRNIC_VM_TOOL_CRASHES:-}" ] || return 0
	echo "$1" >>"$SOFTRNIC_VM_TOOL_CRASHES"
}

_cm_show() {
	sed 's/^/    server: /' "$CM_OUT.srv" | cut -c1-200 >&2
	sed 's/^/    client: /' "$CM_OUT.cli" | cut -c1-200 >&2
}

# kill_tree PID: PID and every process below it (a server started as
# `in_peer timeout ... &` is three processes down from $!).
kill_tree() {
	local c
	for c in $(pgrep -P "$1"); do
		kill_tree "$c"
	done
	kill "$1" 2>/dev/null
}

# cm_rerun_why FILE: why the client whose output is FILE failed for the
# tools' sake, not the device's, if it did (output and status 0; else
# status 1):
# - its connect found no listener: a CM REJ for an unknown service ID
#   (reason 8, RoCE) or a refused TCP connection (-ECONNREFUSED, iWARP).
#   rdma_cm shows the id as LISTEN a moment before the device listens;
#   and perftest -R connects its data QP as soon as the ends have
#   exchanged parameters, while its server may not listen again yet,
#   where Debian 12's perftest (4.5-0.17) fails instead of retrying
#   (fixed in perftest 26.04, commit 3d9d8d0);
# - perftest moved its data but could not time it: it calibrates its
#   cycle counter against gettimeofday over 200 busy waits, and a vCPU
#   descheduled by the host in one of them (TCG, a loaded host) makes the
#   fit fail ("Correlation coefficient r^2 < 0.9", no report, status 1).
# The cm runner below and make bench (scripts/bench-guest.sh) use it.
cm_rerun_why() {
	if grep -qE "REJECTED[,;]? error:? (8|-111)\b" "$1"; then
		echo "the connect found no listener: $(grep -m1 REJECTED "$1")"
	elif grep -q "^Correlation coefficient r^2" "$1" &&
		grep -q "Can't produce a report" "$1"; then
		echo "perftest could not calibrate its clock: $(grep -m1 Correlation "$1")"
	else
		return 1
	fi
}

# cm NAME SRV_PFX CLI_PFX PORT "SERVER CMD" "CLIENT CMD": the server under
# SRV_PFX ("" or in_peer) once its CM id listens on PORT, then the client
# under CLI_PFX; both must exit 0 within 120 s (x SOFTRNIC_VM_TIMEOUT_SCALE).
# Output in $CM_OUT.srv and .cli.  Fails the test otherwise.  A server
# that serves forever (CM_SERVES_FOREVER=its name) is stopped.
#
# A client that failed for the tools' sake, not the device's
# (cm_rerun_why), runs again with a new server, up to three times in all.
cm() {
	local name=$1 spfx=$2 cpfx=$3 port=$4 srv=$5 cli=$6 spid rc try why
	local t
	t=$(scaled 120)
	log "$name"
	for try in 1 2 3; do
		rc=0
		: >"$CM_OUT.cli"
		# stdout line-buffered: a tool's error (stderr) stays in its
		# place among what it printed before, in the log of a failure
		# shellcheck disable=SC2086
		$spfx timeout $t stdbuf -oL $srv >"$CM_OUT.srv" 2>&1 &
		spid=$!
		wait_cm_listen "$spfx" "$port" "$spid" || rc=101
		if [ $rc = 0 ]; then
			# sh records its PID, which the client keeps (exec)
			# shellcheck disable=SC2086,SC2016
			$cpfx timeout $t sh -c 'echo $$ >"$0"; exec "$@"' "$CM_OUT.clipid" \
				stdbuf -oL $cli >"$CM_OUT.cli" 2>&1 || rc=$?
		fi
		[ $rc != 0 ] && [ $rc != 101 ] && [ $try -lt 3 ] && why=$(cm_rerun_why "$CM_OUT.cli") || break
		log "$name: $why; again"
		# perftest 4.5 crashes in librdmacm giving up a refused connection
		tool_crash_ok "$(cat "$CM_OUT.clipid")"
		kill_tree "$spid"
		wait "$spid" 2>/dev/null
		retry_until 20 eval '! cm_listening "$spfx" "$port"'
	done
	if [ -n "${CM_SERVES_FOREVER:-}" ]; then
		pkill -x "$CM_SERVES_FOREVER"
		wait "$spid"
	elif ! wait "$spid"; then
		[ $rc = 0 ] && rc=100
	fi
	[ $rc = 0 ] || { _cm_show; die "$name: status $rc (100: the server failed, 101: it never listened)"; }
	tail -n 2 "$CM_OUT.cli" | sed 's/^/    /' >&2
	# the next server may reuse the port: its listener must be gone
	retry_until 20 eval '! cm_listening "$spfx" "$port"'
}

# ---- siw, Linux's software iWARP driver, as a test peer (issue 16).
# Debian's kernel has no siw.ko: `make testprogs` builds it from Debian's
# linux-source-6.1 (tests/kmod/siw) as build/kmod-siw/VARIANT/siw.ko, one
# per MPA CRC policy, which 6.1 fixes at compile time:
#   default  does not ask for CRC, uses it when the peer asks
#   crc      asks for CRC, refuses a peer that does not use it
#   nocrc    refuses a peer that asks for CRC
# siw works in any network namespace (the device, its listeners and
# connections follow the namespace rdma link add / the tool runs in),
# unlike 6.1's rdma_rxe: see Documentation/vm-harness.md.
SIW_KO_DIR=$SOFTRNIC_ROOT/build/kmod-siw

# have_siw [VARIANT]: is that siw.ko built?
have_siw() { [ -f "$SIW_KO_DIR/${1:-default}/siw.ko" ]; }

# siw_load [VARIANT]: siw.ko of VARIANT (default) loaded, with what it
# needs (libcrc32c, and crc32c_generic for its crypto "crc32c" hash) and
# the user-space interfaces (ib_uverbs, rdma_ucm).  Another variant that
# is loaded is unloaded first (its devices go with it).  Status non-zero
# if it could not be.
siw_load() {
	local v=${1:-default} ko
	ko=$SIW_KO_DIR/$v/siw.ko
	[ -f "$ko" ] || {
		log "siw: $ko not built (make testprogs)"
		return 1
	}
	if grep -q '^siw ' /proc/modules; then
		[ "$(cat /run/softrnic-siw-variant 2>/dev/null)" = "$v" ] && return 0
		siw_unload || return 1
	fi
	modprobe -a libcrc32c crc32c_generic ib_uverbs rdma_ucm || return 1
	insmod "$ko" || return 1
	echo "$v" >/run/softrnic-siw-variant
}

# siw_unload: siw's links deleted (in any namespace) and siw.ko unloaded;
# a no-op when it is not loaded.
siw_unload() {
	grep -q '^siw ' /proc/modules || return 0
	rmmod siw || return 1
	rm -f /run/softrnic-siw-variant
}

# siw_add DEV NETDEV [NETNS]: siw device DEV on NETDEV (in netns NETNS
# when given: the device is made from there), siw.ko loaded first if it
# is not (default variant), and wait until its port is ACTIVE.
siw_add() {
	local dev=$1 nd=$2 ns=${3:-}
	grep -q '^siw ' /proc/modules || siw_load || return 1
	if [ -n "$ns" ]; then
		"$IP" netns exec "$ns" rdma link add "$dev" type siw netdev "$nd" || return 1
	else
		rdma link add "$dev" type siw netdev "$nd" || return 1
	fi
	try_until 10 _siw_active "$dev" || {
		log "siw: $dev never became ACTIVE"
		return 1
	}
}

_siw_active() { grep -q ACTIVE "/sys/class/infiniband/$1/ports/1/state" 2>/dev/null; }
