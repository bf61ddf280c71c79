#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Lets the real libibverbs load the plugin and offer it a device, on a host
# without RDMA: ibv_devices runs with SYSFS_PATH pointing at a fake sysfs
# tree holding one uverbs device, inside a private mount namespace whose
# /dev is a tmpfs with the /dev/infiniband/uverbs0 node libibverbs stat()s.
#
# libibverbs only learns a device's driver id over netlink, so in this sysfs
# mode the device is, correctly, not claimed.  What this proves:
#   - the plugin loads from RDMAV_DRIVERS and registers without noise;
#   - libibverbs calls our match_device through our verbs_device_ops layout;
#   - the verbs_sysfs_dev fields we read sit where libibverbs wrote them
#     (the provider's debug log line echoes the values planted below);
#   - ibv_devices output is unchanged by the plugin.
# Exit 77 (skip) where mount namespaces or ibv_devices are unavailable, or
# where the kernel answers RDMA netlink (then the fake tree is not read).
# usage: fake_sysfs.sh <provider path stem, as for RDMAV_DRIVERS>
set -eu
stem=$1
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

command -v ibv_devices >/dev/null || skip "ibv_devices not installed"
command -v unshare >/dev/null || skip "unshare not installed"
if unshare -m true 2>/dev/null; then
	ns="unshare -m"
elif unshare -r -m true 2>/dev/null; then
	ns="unshare -r -m"
else
	skip "cannot create a mount namespace here"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
sys=$tmp/sys
uv=$sys/class/infiniband_verbs/uverbs0
ib=$sys/class/infiniband/softrnic0
mkdir -p "$uv" "$ib/device"
echo 6 >"$sys/class/infiniband_verbs/abi_version"
echo softrnic0 >"$uv/ibdev"
echo 231:199 >"$uv/dev"
echo 7 >"$uv/abi_version"       # a value no field is zero-initialised to
echo 4 >"$ib/node_type"         # RDMA_NODE_RNIC
echo softrnic:fake-modalias >"$ib/device/modalias"

run() { # run <log file> [RDMAV_DRIVERS value]
	$ns sh -c '
		mount -t tmpfs tmpfs /dev && mkdir /dev/infiniband &&
		: >/dev/infiniband/uverbs0 || exit 99
		exec env SYSFS_PATH="$1" VERBS_LOG_LEVEL=4 VERBS_LOG_FILE="$2" \
			${3:+RDMAV_DRIVERS="$3"} ibv_devices' sh "$sys" "$@"
}

set +e
run "$tmp/base.log" >"$tmp/base.out" 2>"$tmp/base.err"
base_rc=$?
run "$tmp/ours.log" "$stem" >"$tmp/ours.out" 2>"$tmp/ours.err"
ours_rc=$?
set -e
[ $base_rc -ne 99 ] && [ $ours_rc -ne 99 ] || skip "cannot mount a tmpfs /dev in the namespace"

# libibverbs' own warnings (e.g. "couldn't load driver ..." for an uninstalled
# in-tree provider) show up in both runs; ours must add nothing.
cmp -s "$tmp/base.out" "$tmp/ours.out" || fail "stdout differs with the plugin: $(cat "$tmp/ours.out")"
cmp -s "$tmp/base.err" "$tmp/ours.err" || fail "stderr differs with the plugin: $(cat "$tmp/ours.err")"
[ $base_rc -eq $ours_rc ] || fail "exit status $ours_rc with the plugin, $base_rc without"

grep -q 'libsoftrnic' "$tmp/ours.log" 2>/dev/null ||
	skip "plugin never consulted (RDMA netlink answered, so the fake sysfs was not used?)"
want="libsoftrnic: softrnic0: not ours (uverbs0, driver id 0, uverbs ABI 7, node type 4, index -1, modalias 'softrnic:fake-modalias')"
grep -qF "$want" "$tmp/ours.log" || fail "unexpected provider log: $(grep libsoftrnic "$tmp/ours.log")"
echo "ok: libibverbs loaded the plugin and consulted it: $want"
