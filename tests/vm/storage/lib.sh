# shellcheck shell=bash
# Kernel storage ULPs over an RDMA device, the bodies of the suites that
# run them on each wire: NVMe over Fabrics (roce_nvmeof.sh,
# iwarp_nvmeof.sh: nvmeof_suite) and NFS/RDMA (roce_nfsrdma.sh,
# iwarp_nfsrdma.sh: nfs_data_up, nfs_client_copy).  Source after lib.sh
# and roce/lib.sh (veth_local_up, wait_gid).  Not a test itself.
#
# NVMe-oF: the kernel target (nvmet + nvmet-rdma) and the kernel host
# (nvme-rdma), the ULPs that use fast-reg MRs, LOCAL_INV and
# SEND_WITH_INV, shared CQs, SRQs on the target (use_srq=1) and
# ib_drain_qp (over iWARP also rdma_rw's RDMA READs into MRs).
# nvme-rdma and nvmet-rdma create their CM ids in init_net whatever
# namespace nvme-cli or configfs is used from, so both devices are in
# init_net: the target's on sr0 ($ADDR), the host's on sr1 ($HADDR, nvme
# connect --host-traddr), the two ends of a veth pair (veth_local_up):
# two ports of one host cabled to each other.  With one device, every
# address is local and the device loops the traffic back.  The target is
# a memory-backed null_blk, so what is read back is what was written.
#
# Per set-up (nvmeof_suite): fio writes 256 MiB of random data (crc32c
# headers) and reads it back; 10 connect/disconnect cycles; the target's
# port goes away under I/O and comes back (the host reconnects, and
# fio's verification still passes); `rdma link delete` of the host's
# device, then of the target's, under I/O (the host's controller goes
# away with clean I/O errors, no hang); data still there after the
# devices come back; then everything unloads.  Every step is under a
# timeout that fails the test.

NQN=nqn.2026-01.org.softrnic:nvmeof-test
ADDR=10.0.0.1
HADDR=10.0.0.2
MiB=$((1024 * 1024))
SIZE=$((256 * MiB))

# fio_run WHAT FIO-ARGS...: fio on $BLK, which must succeed within 600 s.
fio_run() {
	local what=$1 rc=0
	shift
	timeout -k 10 600 fio --name=nvmeof --filename="$BLK" --direct=1 \
		--ioengine=libaio --size=$SIZE --output=/tmp/fio.out "$@" || rc=$?
	if [ $rc != 0 ]; then
		cat /tmp/fio.out
		die "$what: fio status $rc"
	fi
	grep -E "^ *(READ|WRITE):" /tmp/fio.out | sed 's/^ */    /' >&2
}

# nvmet_up: a memory-backed null_blk of 320 MiB as namespace 1 of $NQN,
# served on port 1, $ADDR:4420.
nvmet_up() {
	nullb_mem 0 320 || die "null_blk nullb0"
	nvmet_subsys $NQN /dev/nullb0 || die "nvmet subsystem $NQN"
	nvmet_port 1 $ADDR $NQN || die "nvmet port 1"
}

# connect [nvme connect args]: from the host's device; sets CTRL and BLK.
connect() {
	nvme_rdma_connect $NQN $ADDR "${HOST_ARGS[@]}" "$@" ||
		die "nvme connect to $NQN at $ADDR"
	CTRL=$NVME_CTRL BLK=$NVME_BLK
	[ "$(blockdev --getsize64 "$BLK")" -ge $SIZE ] || die "$BLK is smaller than 256 MiB"
}

disconnect() { nvme_rdma_disconnect $NQN || die "nvme disconnect $NQN"; }

no_ctrl() { nvme_gone $NQN; }

ctrl_live() { nvme_live "$CTRL"; }

# The device's objects once nothing uses it, to compare with afterwards:
# without the device's index, which a deleted and added device changes,
# and counting only CQs in use: ib_core's shared CQ pool (ib_cq_pool_get,
# which nvme-rdma and nvmet-rdma use) keeps its CQs, idle, until the
# device goes.
res() {
	local busy
	busy=$(rdma resource show cq dev "$1" 2>/dev/null | grep -vc ' users 0 ')
	rdma resource show "$1" 2>/dev/null | tr -s ' ' | cut -d' ' -f2- |
		sed "s/ cq [0-9]* / cq-in-use $busy /"
}

# dev_add DEV: DEV anew on its netdev; DEV_TYPE, DEV_NETDEV, DEV_GID say
# which.  A RoCE device is ready once ib_core has its IPv4 GID
# (DEV_GID), an iWARP one (no DEV_GID) once its port is ACTIVE.
declare -A DEV_TYPE DEV_NETDEV DEV_GID
dev_add() {
	timeout 30 rdma link add "$1" type "${DEV_TYPE[$1]}" netdev "${DEV_NETDEV[$1]}" ||
		die "rdma link add $1"
	if [ -n "${DEV_GID[$1]:-}" ]; then
		wait_gid gix "$1" "${DEV_GID[$1]}"
	else
		retry_until 20 port_active "$1"
	fi
}

port_active() { rdma link show "$1/1" 2>/dev/null | grep -q "state ACTIVE"; }

# nvmeof_suite TDEV [HDEV]: everything above, the target on RDMA device TDEV
# ($ADDR), the host on HDEV ($HADDR) or on TDEV too.
nvmeof_suite() {
	local dev=$1 hdev=${2:-$1} b d i fpid rc t0 base hbase
	HOST_ARGS=()
	[ "$hdev" = "$dev" ] || HOST_ARGS=("--host-traddr=$HADDR")
	log "=== target on $dev ($ADDR), host on $hdev"
	base=$(res "$dev") hbase=$(res "$hdev")
	modprobe nvme-rdma || die "modprobe nvme-rdma"
	# the target's queues share one SRQ per completion vector
	modprobe nvmet-rdma use_srq=1 || die "modprobe nvmet-rdma use_srq=1"
	nvmet_up
	connect
	[ "$hdev" = "$dev" ] || rdma resource show qp link "$hdev/1" | grep -q "type RC" ||
		die "the host's queues are not on $hdev"
	log "$dev: $CTRL live, namespace $BLK; fio writes 256 MiB and reads it back"
	t0=$SECONDS
	fio_run "$dev: write + verify" --rw=randwrite --bs=64k --iodepth=16 \
		--verify=crc32c --do_verify=1 --verify_fatal=1 --randseed=1234
	log "$dev: written and verified in $((SECONDS - t0)) s"
	rdma statistic show link "$dev/1" >&2
	[ "$hdev" = "$dev" ] || rdma statistic show link "$hdev/1" >&2
	disconnect

	# The reconnect cases once per pair of devices: with SHORT set, this
	# set-up only writes, verifies and loses its device.
	if [ -z "${SHORT:-}" ]; then
		log "$dev: 10 connect/disconnect cycles"
		t0=$SECONDS
		for i in $(seq 10); do
			connect
			dd if="$BLK" of=/dev/null bs=64k count=16 iflag=direct status=none ||
				die "$dev: cycle $i: read"
			disconnect
		done
		log "$dev: 10 cycles in $((SECONDS - t0)) s"

		# The target's port goes away under I/O: the host loses its queues,
		# keeps the I/O and reconnects once the port is back.
		log "$dev: the target's port goes and comes back under I/O"
		connect -c 1 -l 120
		timeout -k 10 600 fio --name=nvmeof --filename="$BLK" --direct=1 --ioengine=libaio \
			--offset=$SIZE --size=$((32 * MiB)) --rw=randwrite --bs=64k --iodepth=16 \
			--verify=crc32c --do_verify=1 --verify_fatal=1 --randseed=99 --loops=4 \
			--output=/tmp/fio.bg &
		fpid=$!
		wait_io_moving "$dev" $fpid
		nvmet_unport 1 $NQN || die "port 1 stops serving $NQN"
		retry_until 60 ctrl_not_live
		log "$dev: controller $(cat "/sys/class/nvme/$CTRL/state"); the port comes back"
		nvmet_port 1 $ADDR $NQN || die "port 1 serves $NQN again"
		retry_until 120 ctrl_live
		log "$dev: reconnected"
		rc=0
		wait $fpid || rc=$?
		[ $rc = 0 ] || { cat /tmp/fio.bg; die "$dev: fio across the reconnect: status $rc"; }
		disconnect
	fi

	# Either device goes away under I/O: the host's controller is
	# deleted, fio sees I/O errors (not a hang), the target drops its
	# queues.  One reconnect attempt (-l 1): over RoCE, with the target's
	# device gone, nothing answers the attempt's CM REQ, which takes
	# ib_cm's 16 tries (about 100 s) to give up, as with any RNIC whose
	# peer's device went away; over iWARP the TCP connect is refused at
	# once.
	for d in $(printf '%s\n' "$hdev" "$dev" | uniq); do
		log "$dev: rdma link delete $d under I/O"
		connect -c 1 -l 1
		timeout -k 10 300 fio --name=nvmeof --filename="$BLK" --direct=1 \
			--ioengine=libaio --offset=$((SIZE + 32 * MiB)) --size=$((32 * MiB)) \
			--rw=randrw --bs=64k --iodepth=16 --time_based \
			--runtime=240 --output=/tmp/fio.bg &
		fpid=$!
		wait_io_moving "$dev" $fpid
		t0=$SECONDS
		timeout 60 rdma link delete "$d" || die "rdma link delete $d: status $?"
		rc=0
		wait $fpid || rc=$?
		log "$dev: fio ended with status $rc $((SECONDS - t0)) s after the delete"
		[ $rc != 124 ] && [ $rc != 137 ] || die "$dev: fio hung after rdma link delete $d"
		[ $rc != 0 ] || die "$dev: fio saw no error with $d gone"
		retry_until 60 no_ctrl
		log "$dev: controller gone"
		dev_add "$d"
		# A deleted target device took the port's listener with it.
		nvmet_unport 1 $NQN && nvmet_port 1 $ADDR $NQN || die "nvmet port 1 anew"
	done

	# Back: the 256 MiB written first are still there.
	connect
	fio_run "$dev: verify after the devices came back" --rw=randwrite --bs=64k --iodepth=16 \
		--verify=crc32c --verify_only --verify_fatal=1 --randseed=1234
	disconnect
	nvmet_clear || die "nvmet subsystems and ports left"
	nullb_del 0
	timeout 60 modprobe -r nvme-rdma nvmet-rdma || die "unload nvme-rdma/nvmet-rdma"
	for d in $(printf '%s\n' "$hdev" "$dev" | uniq); do
		[ "$d" = "$dev" ] && b=$base || b=$hbase
		try_until 30 objects_back "$d" "$b" || {
			rdma resource show "$d" >&2
			rdma resource show qp link "$d/1" >&2
			rdma resource show cq >&2
			rdma resource show cm_id >&2
			die "$d: objects left: $(res "$d"), $b before"
		}
	done
}

# io_moving: the controller's path to the namespace (new with each
# connection) has done some I/O.  The path device, not the multipath
# head: 6.1 counts no I/O on the head.
io_moving() {
	local f r w
	for f in /sys/class/nvme/"$CTRL"/nvme*c*n1/stat "/sys/block/${BLK#/dev/}/stat"; do
		[ -e "$f" ] || continue
		read -r r _ _ _ w _ <"$f" && [ $((r + w)) -ge 32 ] && return 0
	done
	return 1
}

# wait_io_moving WHAT FPID: until io_moving, or fail showing what fio
# (background process FPID, output in /tmp/fio.bg) and the controller
# were doing.
wait_io_moving() {
	local f
	try_until 60 io_moving && return 0
	kill -0 "$2" 2>/dev/null && echo "fio still running" >&2 ||
		echo "fio exited" >&2
	cat /tmp/fio.bg >&2
	echo "controller $CTRL: $(cat "/sys/class/nvme/$CTRL/state" 2>&1), block device $BLK" >&2
	for f in /sys/class/nvme/"$CTRL"/nvme*c*n1/stat "/sys/block/${BLK#/dev/}/stat"; do
		[ -e "$f" ] && echo "$f: $(cat "$f")" >&2
	done
	die "$1: no I/O within 60 s of starting fio"
}

ctrl_not_live() { ! ctrl_live; }

objects_back() { [ "$(res "$1")" = "$2" ]; }

# ---- NFS/RDMA: the kernel's svcrdma server and xprtrdma client, NFSv4.2
# on port 20049: a 256 MiB file of random data copied to the server and
# another one back, checksums compared on the other side.

NFS_EXPORT=/srv/nfsrdma
NFS_MNT=/mnt/nfsrdma

# no_cm_ids PREFIX: no RDMA CM id but listeners in the namespace PREFIX runs in.
no_cm_ids() { ! $1 rdma resource show cm_id 2>/dev/null | grep -v "state LISTEN" | grep -q .; }

# sum FILE: its SHA-256.
sum() { sha256sum "$1" | cut -d' ' -f1; }

# nfs_data_up: 256 MiB of random data in /tmp/nfs-up (its SHA-256 in
# UP), nfsd started here exporting $NFS_EXPORT with 256 MiB of others in
# from-server.bin (DOWN).
nfs_data_up() {
	log "random data"
	head -c $((256 * 1024 * 1024)) /dev/urandom >/tmp/nfs-up || die "random data"
	UP=$(sum /tmp/nfs-up)
	nfsd_start $NFS_EXPORT || die "nfsd with RDMA on port 20049"
	head -c $((256 * 1024 * 1024)) /dev/urandom >"$NFS_EXPORT/from-server.bin" ||
		die "random data"
	DOWN=$(sum "$NFS_EXPORT/from-server.bin")
}

# nfs_client_copy PREFIX ADDR WHAT: under PREFIX ("" or in_peer), mount
# the export from ADDR over RDMA, copy /tmp/nfs-up there and the server's
# from-server.bin back to /tmp/nfs-down, unmount; the checksums are
# compared, then no CM id but listeners is left under PREFIX.  One
# script: a mount made under `ip netns exec` lives in that command's
# mount namespace.  The copies' rates are logged.
nfs_client_copy() {
	local pfx=$1 addr=$2 what=$3 t0=$SECONDS
	log "$what: mount $addr:/ ($NFS_EXPORT) over RDMA, copy 256 MiB each way"
	# shellcheck disable=SC2016
	$pfx timeout -k 10 400 bash -c '
		. "$SOFTRNIC_ROOT/tests/vm/lib.sh"
		set -e
		nfs_rdma_mount "$1" "$2" || { echo "mount $1:/ over RDMA failed"; exit 1; }
		t=$(date +%s%N)
		cp /tmp/nfs-up "$2/to-server.bin"
		sync -f "$2/to-server.bin"
		u=$(date +%s%N)
		cp "$2/from-server.bin" /tmp/nfs-down
		d=$(date +%s%N)
		echo "    write $((256 * 1000000000 / (u - t + 1))) MiB/s, read $((256 * 1000000000 / (d - u + 1))) MiB/s" >&2
		umount "$2"
	' client "$addr" "$NFS_MNT" || die "$what: NFS/RDMA copy: status $?"
	log "$what: both copies and the unmount took $((SECONDS - t0)) s"
	assert_eq "$(sum "$NFS_EXPORT/to-server.bin")" "$UP" "$what: checksum on the server"
	assert_eq "$(sum /tmp/nfs-down)" "$DOWN" "$what: checksum back on the client"
	rm -f "$NFS_EXPORT/to-server.bin" /tmp/nfs-down
	retry_until 30 no_cm_ids "$pfx"
	[ -z "$pfx" ] || retry_until 30 no_cm_ids ""
}

# nfs_data_down: nfsd stopped, no CM id left, rpcrdma unloaded, the
# random data gone.
nfs_data_down() {
	nfsd_stop $NFS_EXPORT || die "stop nfsd"
	retry_until 30 no_cm_ids ""
	timeout 60 modprobe -r rpcrdma || die "unload rpcrdma"
	rm -f /tmp/nfs-up
}
