#!/bin/bash
# The Debian packages on a host that has never seen this tree: install
# build/deb/softrnic-{dkms,provider,tools}_*.deb (make deb) with dpkg, let
# DKMS build softrnic.ko for the running kernel, and run the demo's steps
# with installed files only: `rdma link add` loads the module through its
# rdma-link-roce alias, libibverbs finds the provider through
# /etc/libibverbs.d/softrnic.driver, ibv_rc_pingpong passes, the installed
# CLI lists the devices.  Then purge, and the module is gone again.
# The guest's writes (dpkg's database, /var/lib/dkms, /lib/modules) land in
# its tmpfs overlay and vanish with it.
#
# DKMS compiles through ccache (Debian's DEBIAN_KERNEL_USE_CCACHE) from
# a copy of build/ccache-dkms, which tests/harness/check-dkms-build.sh
# filled by the same DKMS build on the host, with the same paths: every
# compile must be a hit.  Cold, under TCG, the DKMS build alone takes
# ~21 minutes on a 2-core host (the whole test ~27), which make check
# cannot afford; SOFTRNIC_PACKAGE_COLD=1 (make check-packages) builds
# without the cache.
# timeout: 2400
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/roce/lib.sh"

cache=$SOFTRNIC_ROOT/build/ccache-dkms
if [ "${SOFTRNIC_PACKAGE_COLD:-}" = 1 ]; then
	cache=
elif [ ! -d "$cache" ]; then
	grep -qw kvm-clock /sys/devices/system/clocksource/clocksource0/available_clocksource ||
		skip "no DKMS compile cache $cache (tests/harness/check-dkms-build.sh) and no KVM: a cold DKMS build under TCG takes ~21 min; make check-packages runs it"
	cache=
fi

kver=$(uname -r)
# (A debug kernel of scripts/vm/debug-kernel has no headers package.)
[ -f "/lib/modules/$kver/build/Makefile" ] || skip "no headers for the guest's kernel $kver: DKMS cannot build"
version=$(cat "$SOFTRNIC_ROOT/VERSION")
debs=()
for p in softrnic-dkms softrnic-provider softrnic-tools; do
	f=$(ls "$SOFTRNIC_ROOT"/build/deb/"${p}_${version}"_*.deb 2>/dev/null) ||
		die "no $p $version package in build/deb (make deb)"
	debs+=("$f")
done

# Forget the tree's own softrnic that the harness set up (scripts/vm/
# guest-setup): its module link, provider registration and CLI on PATH.
# The suites after this one share the guest: whatever way this one ends,
# the packages go and the tree's softrnic comes back.
# shellcheck source=scripts/vm/guest-setup
. "$SOFTRNIC_ROOT/scripts/vm/guest-setup"
restore_tree_softrnic() {
	modprobe -r softrnic 2>/dev/null
	dpkg --purge softrnic-tools softrnic-provider softrnic-dkms >/dev/null 2>&1
	vm_setup_softrnic
	modinfo -n softrnic | grep -q "/extra/softrnic.ko$" ||
		log "warning: the tree's softrnic.ko is not back in place"
}
trap restore_tree_softrnic EXIT
unload_softrnic || die "rmmod the tree's softrnic"
rm -f "/lib/modules/$kver/extra/softrnic.ko" /etc/libibverbs.d/softrnic.driver
PATH=$(tr ':' '\n' <<<"$PATH" | grep -v -x "$SOFTRNIC_ROOT/build/userspace/tool" | paste -sd:)
hash -r
command -v softrnic >/dev/null && die "a softrnic CLI is still on PATH: $(command -v softrnic)"
# man-db's trigger would index every manual page over 9p: not what this
# test is about.
rm -f /var/lib/man-db/auto-update

export DEBIAN_FRONTEND=noninteractive
if [ -n "$cache" ]; then
	# a copy: the guest's hits must not change the host's cache
	cp -a "$cache" /tmp/ccache-dkms || die "copy $cache"
	export CCACHE_DIR=/tmp/ccache-dkms DEBIAN_KERNEL_USE_CCACHE=1
	ccache -z >/dev/null || die "ccache -z"
fi
log "dpkg -i ${debs[*]##*/}${cache:+ (DKMS compiles through ccache)}"
t0=$SECONDS
dpkg -i "${debs[@]}" || die "dpkg -i"
log "installed in $((SECONDS - t0)) s (DKMS build included)"
if [ -n "$cache" ]; then
	ccache -s
	hits=$(ccache --print-stats | awk '$1 == "direct_cache_hit" { print $2 }')
	misses=$(ccache --print-stats | awk '$1 == "cache_miss" { print $2 }')
	[ "${hits:-0}" -gt 0 ] || die "DKMS did not compile through ccache"
	[ "${misses:-1}" = 0 ] || die "$misses of DKMS's compiles missed the cache: the guest built other sources, flags or paths than check-dkms-build.sh"
	unset CCACHE_DIR DEBIAN_KERNEL_USE_CCACHE
fi
dkms status softrnic
dkms status softrnic | grep -q "softrnic/$version, $kver, .*: installed" ||
	die "DKMS did not install softrnic $version for $kver"
ko=$(modinfo -n softrnic) || die "modinfo softrnic"
assert_eq "$ko" "/lib/modules/$kver/updates/dkms/softrnic.ko" "module path"
assert_eq "$(modinfo -F version softrnic)" "$version" "module version"
assert_eq "$(command -v softrnic)" /usr/bin/softrnic "CLI"
assert_eq "$(cat /etc/libibverbs.d/softrnic.driver)" "driver softrnic" "softrnic.driver"

net_setup
modprobe -r rdma_rxe 2>/dev/null
grep -q '^softrnic ' /proc/modules && die "softrnic loaded before any link was added"
rdma link add roce0 type roce netdev sr0 || die "rdma link add roce0 (module autoload)"
grep -q '^softrnic ' /proc/modules || die "softrnic not loaded by rdma link add"
in_peer rdma link add roce1 type roce netdev sr1 || die "add roce1"
wait_gid g0 roce0 "$GID4_0"
wait_gid g1 roce1 "$GID4_1"

out=$(LD_DEBUG=libs ibv_devinfo -d roce0 2>&1) || { echo "$out"; die "ibv_devinfo -d roce0"; }
grep -E 'hca_id:|transport:|state:' <<<"$out"
grep -q "calling init: /usr/lib/$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/libibverbs/libsoftrnic-rdmav34.so" <<<"$out" ||
	die "ibv_devinfo did not load the installed provider"
grep -q 'PORT_ACTIVE' <<<"$out" || die "roce0 port not active"

run_pair 120 "ibv_rc_pingpong -d roce1 -g $g1 -n 100" \
	"ibv_rc_pingpong -d roce0 -g $g0 -n 100 10.0.0.2" || die "ibv_rc_pingpong roce0 -> roce1"

out=$(softrnic list) || die "softrnic list"
echo "$out"
grep -Eq '^roce0\s+roce\s+sr0\s+ACTIVE' <<<"$out" || die "softrnic list: no roce0 row"
softrnic --version | grep -q "^softrnic $version " || die "softrnic --version"
rdma link delete roce0 || die "delete roce0"
in_peer rdma link delete roce1 || die "delete roce1"
net_teardown

rmmod softrnic || die "rmmod softrnic"
dpkg --purge softrnic-tools softrnic-provider softrnic-dkms || die "dpkg --purge"
[ -e "/lib/modules/$kver/updates/dkms/softrnic.ko" ] && die "module left after purge"
modinfo softrnic >/dev/null 2>&1 && die "modinfo still finds softrnic after purge"
[ -e /etc/libibverbs.d/softrnic.driver ] && die "softrnic.driver left after purge"
log "package install, use and purge OK"
