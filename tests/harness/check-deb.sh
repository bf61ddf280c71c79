#!/bin/bash
# Host-side check of make deb (scripts/deb; a build whose sources did not
# change is reused): dpkg-buildpackage succeeds, lintian reports no error,
# and the three packages hold what they must: the DKMS source tree and its
# dkms.conf, the provider where libibverbs looks with an exact libibverbs1
# dependency, the CLI with its completion and man pages.  The packages are
# also what tests/vm/package_install.sh installs.
set -u
cd "$(dirname "$0")/../.." || exit 2
build=${BUILD:-$PWD/build}
fail() { echo "check-deb: $*"; exit 1; }

BUILD=$build scripts/deb >"$build/check-deb.log" 2>&1 || { tail -20 "$build/check-deb.log"; fail "make deb"; }
v=$(cat VERSION)
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
dkms=$build/deb/softrnic-dkms_${v}_all.deb
provider=$build/deb/softrnic-provider_${v}_$arch.deb
tools=$build/deb/softrnic-tools_${v}_$arch.deb
for d in "$dkms" "$provider" "$tools"; do [ -f "$d" ] || fail "no $d"; done

has() { # DEB PATH...
	local deb=$1 list p
	shift
	list=$(dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|')
	for p in "$@"; do
		grep -qx -- "$p" <<<"$list" || fail "${deb##*/} lacks $p"
	done
}
has "$dkms" "/usr/src/softrnic-$v/dkms.conf" "/usr/src/softrnic-$v/Kbuild" "/usr/src/softrnic-$v/VERSION" \
	"/usr/src/softrnic-$v/main.c" "/usr/src/softrnic-$v/uapi/softrnic-abi.h"
has "$provider" /etc/libibverbs.d/softrnic.driver "/usr/lib/$multiarch/libibverbs/libsoftrnic-rdmav34.so" \
	/usr/include/infiniband/softrnicdv.h "/usr/lib/$multiarch/pkgconfig/softrnicdv.pc" \
	/usr/share/man/man3/softrnicdv.3.gz
has "$tools" /usr/bin/softrnic /usr/share/bash-completion/completions/softrnic \
	/usr/share/man/man7/softrnic.7.gz /usr/share/man/man8/softrnic.8.gz
dpkg-deb -c "$provider" "$tools" 2>/dev/null | grep -q dkms.conf && fail "dkms.conf outside softrnic-dkms"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$dkms" "$tmp"
grep -qx "PACKAGE_VERSION=\"$v\"" "$tmp/usr/src/softrnic-$v/dkms.conf" || fail "dkms.conf: not version $v"
dpkg-deb -f "$dkms" Depends | grep -q dkms || fail "softrnic-dkms does not depend on dkms"

# The provider needs exactly the rdma-core release it was built against.
major=$(dpkg-query -W -f='${source:Upstream-Version}' libibverbs-dev | cut -d. -f1)
dep=$(dpkg-deb -f "$provider" Depends)
grep -q "libibverbs1 (>= $major)" <<<"$dep" && grep -q "libibverbs1 (<< $((major + 1))~)" <<<"$dep" ||
	fail "provider Depends: $dep"
dpkg-deb -f "$tools" Depends | grep -q libmnl0 || fail "softrnic-tools does not depend on libmnl0"
echo "check-deb: OK ($(ls "$build"/deb/*.deb | wc -l) packages, lintian clean)"
