#!/bin/bash
# The VM harness itself: the guest sees the host's software, can write
# where the harness needs to, and can build the two-host network and an
# RDMA device (rdma_rxe, independent of softrnic) that verbs tools list.
# timeout: 180
. "$(dirname "$0")/lib.sh"

log "kernel $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ { print int($2 / 1024) " MB" }' /proc/meminfo)"

# Host software, through the shared root.
for tool in ibv_devices ibv_devinfo rdma ib_write_bw ibv_rc_pingpong modprobe depmod; do
	command -v "$tool" >/dev/null || die "$tool not found in the guest (PATH=$PATH)"
done
# Debian's python3 (the one with pyverbs) must come first on PATH.
python3 -c 'import pyverbs' || die "python3 cannot import pyverbs ($(command -v python3))"
[ -d "/lib/modules/$(uname -r)/kernel" ] || die "/lib/modules/$(uname -r) missing"
[ -x /usr/sbin/modprobe ] || die "/usr/sbin/modprobe missing (module autoloading needs it)"
assert_eq "$(cat /proc/sys/kernel/modprobe)" /sbin/modprobe "kernel's modprobe path"
assert_eq "$(hostname)" softrnic-vm "hostname"
assert_eq "$PWD" "$SOFTRNIC_ROOT" "cwd of a suite test"

# Writable where the harness writes, without touching the host.
echo "driver /nonexistent/selftest" >/etc/libibverbs.d/zz-selftest.driver ||
	die "/etc/libibverbs.d not writable"
rm -f /etc/libibverbs.d/zz-selftest.driver
mkdir -p "/lib/modules/$(uname -r)/extra" && touch "/lib/modules/$(uname -r)/extra/.selftest" ||
	die "/lib/modules/$(uname -r)/extra not writable"
rm -f "/lib/modules/$(uname -r)/extra/.selftest"
echo x >/tmp/selftest && rm /tmp/selftest || die "/tmp not writable"
grep -q ' /tmp tmpfs ' /proc/mounts || die "/tmp is not a tmpfs"
grep -q ' /sys/kernel/debug debugfs ' /proc/mounts || die "debugfs not mounted"
[ -c /dev/kmsg ] && [ -e /dev/fd/0 ] || die "/dev incomplete"

# softrnic pieces, when built, are installed the way users get them.
if [ -f "$SOFTRNIC_ROOT/kernel/softrnic.ko" ]; then
	have_softrnic || die "kernel/softrnic.ko is built but modprobe cannot find it"
	modprobe -n softrnic || die "modprobe -n softrnic"
	grep -q 'rdma-link-roce softrnic' "/lib/modules/$(uname -r)/modules.alias" ||
		die "rdma-link-roce alias missing: rdma link add would not autoload softrnic"
fi
if [ -f "$SOFTRNIC_ROOT/build/userspace/provider/libsoftrnic-rdmav34.so" ]; then
	assert_eq "$(cat /etc/libibverbs.d/softrnic.driver)" \
		"driver $SOFTRNIC_ROOT/build/userspace/provider/libsoftrnic" "softrnic.driver"
fi
if [ -x "$SOFTRNIC_ROOT/build/userspace/tool/softrnic" ]; then
	command -v softrnic >/dev/null || die "the softrnic CLI is not on PATH"
fi

# Two hosts joined by a veth pair, both ways, both IP versions.
net_setup
ping -c 1 -W 5 10.0.0.2 >/dev/null || die "ping 10.0.0.2 from init ns"
in_peer ping -c 1 -W 5 10.0.0.1 >/dev/null || die "ping 10.0.0.1 from peer"
ping -6 -c 1 -W 5 fd00::2 >/dev/null || die "ping fd00::2 from init ns"
in_peer ping -6 -c 1 -W 5 fd00::1 >/dev/null || die "ping fd00::1 from peer"
in_peer "$IP" -o addr show dev sr1 | grep -q 'inet 10.0.0.2/24' || die "sr1 address"
"$IP" -o link show sr1 2>/dev/null && die "sr1 is still in the initial netns"

# An RDMA device that verbs tools see (rdma_rxe needs crc32_generic,
# which modprobe finds in the host's /lib/modules).
modprobe rdma_rxe || die "modprobe rdma_rxe"
rdma link add rxe0 type rxe netdev sr0 || die "rdma link add rxe0"
ibv_devices | grep -qw rxe0 || die "ibv_devices does not list rxe0: $(ibv_devices)"
ibv_devinfo -d rxe0 | grep -q 'PORT_ACTIVE' || die "rxe0 port not active: $(ibv_devinfo -d rxe0)"
rdma link delete rxe0 || die "rdma link delete rxe0"
ibv_devices | grep -qw rxe0 && die "rxe0 still listed after delete"
rmmod rdma_rxe || die "rmmod rdma_rxe"

net_teardown
log "harness OK"
