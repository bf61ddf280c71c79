#!/bin/bash
# softrnic on a real NIC driver: sr0/sr1 are the guest's two virtio-net
# NICs, joined back to back by QEMU (SOFTRNIC_VM_NICS=virtio, see lib.sh).
#  1. The ib_device's parent is the netdev's parent, as a hardware RNIC's
#     is: /sys/class/infiniband/DEV/device is the virtio device and its
#     net/ lists the netdev (what rdma-core's tests and tools read), for
#     roce and iwarp, in both namespaces; on a veth (no parent) the device
#     stays in /sys/devices/virtual, with no device link.
#  2. The NIC going away takes the RDMA devices first: virtio_net unbound
#     from sr0 while roce0 and iw0 sit on it and a process has roce0 open;
#     sr1's PCI function removed under roce1 (the parent device itself
#     goes), then rescanned.
#  3. Traffic over virtio_net, which hands the receiver page-fragment skbs
#     (and GRO) that a veth never does: roce_pingpong.sh (softrnic <->
#     softrnic 1 B .. 1 MiB, softrnic <-> rdma_rxe both ways),
#     roce_integrity.sh and roce_ud.sh (UD datagrams, also against rxe),
#     unchanged, on this topology.  The other RoCE
#     suites run on it too:
#       SOFTRNIC_VM_NICS=virtio scripts/vm/run-suite tests/vm/roce_perftest.sh ...
# vm-nics: virtio
# timeout: 900
export SOFTRNIC_VM_NICS=virtio
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"

have_softrnic || skip "softrnic.ko not built"

# sysfs_parent DEV NETDEV [PREFIX]: DEV's parent is NETDEV's, which
# rdma-core finds from DEV alone (ls .../device/net/, first entry).
sysfs_parent() {
	local dev=$1 nd=$2 pfx=${3:-} want got
	want=$($pfx readlink -f "/sys/class/net/$nd/device") || die "$nd has no device"
	got=$($pfx readlink -f "/sys/class/infiniband/$dev/device") ||
		die "$dev: no /sys/class/infiniband/$dev/device"
	assert_eq "$got" "$want" "$dev: parent device"
	assert_eq "$($pfx ls "/sys/class/infiniband/$dev/device/net/" | head -n 1)" "$nd" \
		"$dev: first entry of device/net/"
	got=$($pfx readlink -f "/sys/class/infiniband/$dev/device/driver")
	assert_eq "${got##*/}" virtio_net "$dev: driver of the parent device"
	log "$dev: parent $want ($nd, virtio_net)"
}

ib_gone() { [ ! -e "/sys/class/infiniband/$1" ]; }

# --- 1. the parent device ----------------------------------------------------
roce_pair_up
rdma link add iw0 type iwarp netdev sr0 || die "add iw0"
sysfs_parent roce0 sr0
sysfs_parent iw0 sr0
sysfs_parent roce1 sr1 in_peer
# rdma's view is unchanged.
rdma link show roce0/1 | grep -q "netdev sr0" || die "rdma link show roce0: $(rdma link show roce0/1)"

# A veth has no parent: the device keeps today's place.
"$IP" link add srv0 type veth peer name srv1 || die "veth srv0/srv1"
rdma link add vroce0 type roce netdev srv0 || die "add vroce0 on a veth"
[ -e /sys/class/infiniband/vroce0/device ] &&
	die "vroce0 on a veth has a parent: $(readlink -f /sys/class/infiniband/vroce0/device)"
case $(readlink -f /sys/class/infiniband/vroce0) in
/sys/devices/virtual/infiniband/vroce0) ;;
*) die "vroce0 on a veth is at $(readlink -f /sys/class/infiniband/vroce0)" ;;
esac
"$IP" link del srv0 # takes vroce0
retry_until 10 ib_gone vroce0
log "vroce0 on a veth: no parent, in /sys/devices/virtual"

# --- 2. the NIC goes away under its RDMA devices ------------------------------
# A user context on roce0: ibv_rc_pingpong's server waits for its peer
# with the device open.  Unbinding must not wait for it (disassociate).
srv_log=$(mktemp)
ibv_rc_pingpong -d roce0 -g "$g0" >"$srv_log" 2>&1 &
srv=$!
wait_listen "" 18515 "$srv" || die "ibv_rc_pingpong server did not start: $(cat "$srv_log")"
virtio0=$(readlink -f /sys/class/net/sr0/device)
virtio0=${virtio0##*/}
# In the background: if it hangs, say so rather than hang with it.
echo "$virtio0" >"$VIRTIO_NET_DRV/unbind" &
unbind=$!
try_until 60 sh -c "! kill -0 $unbind 2>/dev/null" ||
	die "unbinding virtio_net from $virtio0 (sr0) did not finish in 60 s"
wait "$unbind" || die "unbind $virtio0 failed"
ib_gone roce0 && ib_gone iw0 || die "roce0/iw0 outlived sr0's driver: $(ls /sys/class/infiniband)"
[ -e /sys/class/net/sr0 ] && die "sr0 still there after unbinding virtio_net"
kill -0 "$srv" 2>/dev/null || log "note: the server exited: $(cat "$srv_log")"
kill "$srv" 2>/dev/null
wait "$srv" 2>/dev/null
rm -f "$srv_log"
in_peer test -e /sys/class/infiniband/roce1 || die "roce1 (on the other NIC) went too"
log "virtio_net unbound from $virtio0: roce0 and iw0 gone first, roce1 untouched"

# sr1's PCI function removed: the parent of roce1's parent goes.
pci=$(in_peer readlink -f /sys/class/net/sr1/device) || die "sr1's device"
pci=${pci%/*}
case $pci in /sys/devices/pci*) ;; *) die "sr1 is not on PCI: $pci" ;; esac
echo 1 >"$pci/remove" || die "remove ${pci##*/}"
ib_gone roce1 || die "roce1 outlived its PCI function"
in_peer test -e /sys/class/net/sr1 && die "sr1 still there after removing ${pci##*/}"
echo 1 >/sys/bus/pci/rescan || die "PCI rescan"
retry_until 10 test -e "$pci"
log "${pci##*/} (sr1) removed under roce1 and rescanned"

# The topology comes back whole: the next net_setup rebinds and renames.
roce_pair_up
sysfs_parent roce0 sr0
sysfs_parent roce1 sr1 in_peer
run_pair 60 "ibv_rc_pingpong -d roce1 -g $g1 -s 4096 -n 20" \
	"ibv_rc_pingpong -d roce0 -g $g0 -s 4096 -n 20 10.0.0.2" ||
	die "pingpong after unbind and rescan"
rdma link delete roce0
in_peer rdma link delete roce1
net_teardown
log "after unbind and rescan: both NICs back, pingpong passes"

# --- 3. the RC and UD traffic suites on virtio_net ---------------------------
for t in roce_pingpong roce_integrity roce_ud; do
	log "=== $t.sh on virtio-net"
	t0=$SECONDS
	bash "$(dirname "$0")/$t.sh" || die "$t.sh failed on virtio-net (status $?)"
	log "=== $t.sh on virtio-net passed ($((SECONDS - t0)) s)"
done
echo "roce_virtio OK"
