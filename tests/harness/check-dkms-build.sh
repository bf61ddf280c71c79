#!/bin/bash
# DKMS builds the softrnic-dkms package's source (make deb; check-deb.sh
# runs first) for the kernel the VM boots, here on the host, exactly as
# the package's postinst does: `dkms add` + `dkms build` of
# /var/lib/dkms/softrnic/VERSION/build.  A private mount namespace puts a
# tmpfs over /var/lib/dkms, so the host's DKMS state is not touched.
#
# The compiles go through ccache, Debian's own switch for its kernel
# headers (DEBIAN_KERNEL_USE_CCACHE), into $build/ccache-dkms.  The
# paths are the ones the guest's build will have, so
# tests/vm/package_install.sh's DKMS build in the guest finds every
# compile in that cache: under TCG a cold build takes ~21 minutes, which
# make check cannot afford (make check-packages still runs it cold).
set -u
cd "$(dirname "$0")/../.." || exit 2
build=${BUILD:-$PWD/build}
fail() { echo "check-dkms-build: $*"; exit 1; }

[ "$(id -u)" = 0 ] || fail "needs root (a mount namespace over /var/lib/dkms)"
command -v dkms >/dev/null || fail "dkms not installed (scripts/deps)"
command -v ccache >/dev/null || fail "ccache not installed (scripts/deps)"
# shellcheck source=scripts/vm/lib.sh
. scripts/vm/lib.sh
kver=$(vm_kver) || fail "no kernel for the VM"
[ -f "/lib/modules/$kver/build/Makefile" ] || fail "no headers for $kver (linux-headers-amd64)"
v=$(cat VERSION)
deb=$build/deb/softrnic-dkms_${v}_all.deb
[ -f "$deb" ] || fail "no $deb (make deb)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$deb" "$tmp/root" || fail "dpkg-deb -x $deb"
src=$tmp/root/usr/src

export CCACHE_DIR=$build/ccache-dkms DEBIAN_KERNEL_USE_CCACHE=1
mkdir -p "$CCACHE_DIR"
ccache -z >/dev/null
# shellcheck disable=SC2016 # expanded by the inner shell
unshare -m bash -c '
	set -e
	mount -t tmpfs dkms /var/lib/dkms
	dkms add -m softrnic -v "$1" --sourcetree "$2"
	dkms build -m softrnic -v "$1" -k "$3" --sourcetree "$2" ||
		{ cat /var/lib/dkms/softrnic/"$1"/build/make.log; exit 1; }
	modinfo -F version /var/lib/dkms/softrnic/"$1"/"$3"/x86_64/module/softrnic.ko
' _ "$v" "$src" "$kver" >"$tmp/out" 2>&1 || { tail -40 "$tmp/out"; fail "dkms build for $kver"; }
cat "$tmp/out"
got=$(tail -n 1 "$tmp/out")
[ "$got" = "$v" ] || fail "the built module's version is '$got', not $v"
ccache -s
calls=$(ccache --print-stats | awk '$1 == "direct_cache_hit" || $1 == "cache_miss" { n += $2 } END { print n + 0 }')
[ "$calls" -gt 0 ] || fail "no compile went through ccache: the guest's build would be cold"
[ -d /var/lib/dkms/softrnic ] && fail "the host's /var/lib/dkms was written"
echo "check-dkms-build: OK (softrnic $v for $kver, $calls compiles cached in $CCACHE_DIR)"
