#!/bin/bash
# Host-side check of `make install` / `make uninstall` into a DESTDIR: the
# exact file list for PREFIX=/usr (libibverbs' own provider directory, so
# softrnic.driver says just "driver softrnic") and for PREFIX=/usr/local
# (the driver file then names the provider by its absolute path), one
# project version everywhere, and an uninstall that leaves nothing behind.
# Uses the tree's build; the userspace build's install prefix is put back.
set -u
cd "$(dirname "$0")/../.." || exit 2
root=$PWD
build=${BUILD:-$root/build}
dest=$(mktemp -d)
cache=$build/userspace/CMakeCache.txt
old_prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$cache" 2>/dev/null)
restore() {
	rm -rf "$dest"
	[ -z "$old_prefix" ] || cmake -S userspace -B "$build/userspace" \
		-DCMAKE_INSTALL_PREFIX="$old_prefix" >/dev/null 2>&1
}
trap restore EXIT
fail() { echo "check-install: $*"; exit 1; }

version=$(cat VERSION)
kver=$(modinfo -F vermagic kernel/softrnic.ko 2>/dev/null | cut -d' ' -f1)
[ -n "$kver" ] || fail "kernel/softrnic.ko not built (make all first)"
arch=$(gcc -print-multiarch)
[ -n "$arch" ] || fail "gcc -print-multiarch says nothing"

install_into() { # PREFIX
	make -s install DESTDIR="$dest" PREFIX="$1" KERNELRELEASE="$kver" BUILD="$build" \
		>"$build/check-install.log" 2>&1 || { tail -20 "$build/check-install.log"; fail "make install PREFIX=$1"; }
}
uninstall_from() { # PREFIX
	make -s uninstall DESTDIR="$dest" PREFIX="$1" KERNELRELEASE="$kver" BUILD="$build" \
		>>"$build/check-install.log" 2>&1 || { tail -20 "$build/check-install.log"; fail "make uninstall PREFIX=$1"; }
}
file_list() { (cd "$dest" && find . ! -type d -printf '/%P\n' | LC_ALL=C sort); }
expect_files() { # PREFIX LIBDIR
	LC_ALL=C sort <<-EOF
		/etc/libibverbs.d/softrnic.driver
		/lib/modules/$kver/extra/softrnic.ko
		$1/bin/softrnic
		$1/include/infiniband/softrnicdv.h
		$2/libibverbs/libsoftrnic-rdmav34.so
		$2/pkgconfig/softrnicdv.pc
		$1/share/bash-completion/completions/softrnic
		$1/share/man/man3/softrnicdv.3
		$1/share/man/man7/softrnic.7
		$1/share/man/man8/softrnic.8
	EOF
}
check_tree() { # PREFIX LIBDIR DRIVER-LINE
	local got want
	got=$(file_list)
	want=$(expect_files "$1" "$2")
	[ "$got" = "$want" ] || fail "PREFIX=$1: installed files differ:
$(diff <(echo "$want") <(echo "$got"))"
	assert() { [ "$2" = "$3" ] || fail "PREFIX=$1: $4: '$2', want '$3'"; }
	assert "$1" "$(cat "$dest/etc/libibverbs.d/softrnic.driver")" "$3" "softrnic.driver"
	assert "$1" "$(modinfo -F version "$dest/lib/modules/$kver/extra/softrnic.ko")" "$version" "module version"
	assert "$1" "$("$dest$1/bin/softrnic" --version | cut -d' ' -f2)" "$version" "CLI version"
	assert "$1" "$(PKG_CONFIG_SYSROOT_DIR= PKG_CONFIG_PATH="$dest$2/pkgconfig" pkg-config --modversion softrnicdv)" \
		"$version" "softrnicdv.pc version"
	assert "$1" "$(PKG_CONFIG_PATH="$dest$2/pkgconfig" pkg-config --variable=providerdir softrnicdv)" \
		"$2/libibverbs" "softrnicdv.pc providerdir"
	cmp -s userspace/provider/softrnicdv.h "$dest$1/include/infiniband/softrnicdv.h" ||
		fail "PREFIX=$1: softrnicdv.h differs from the source"
}

install_into /usr
check_tree /usr "/usr/lib/$arch" "driver softrnic"
uninstall_from /usr
[ -z "$(file_list)" ] || fail "PREFIX=/usr: left after uninstall: $(file_list)"

install_into /usr/local
check_tree /usr/local /usr/local/lib "driver /usr/local/lib/libibverbs/libsoftrnic"
uninstall_from /usr/local
[ -z "$(file_list)" ] || fail "PREFIX=/usr/local: left after uninstall: $(file_list)"

# The DKMS source tree and the Debian packages carry the same version.
make -s dkms-source BUILD="$dest/b" >/dev/null 2>&1 || fail "make dkms-source"
dkms_conf=$dest/b/dkms/softrnic-$version/dkms.conf
[ -f "$dkms_conf" ] || fail "no $dkms_conf"
grep -qx "PACKAGE_VERSION=\"$version\"" "$dkms_conf" || fail "dkms.conf: $(grep PACKAGE_VERSION "$dkms_conf")"
for f in Kbuild Makefile VERSION main.c roce/roce_net.c proto/roce_hdr.h uapi/softrnic-abi.h; do
	[ -f "$dest/b/dkms/softrnic-$version/$f" ] || fail "DKMS source tree lacks $f"
done
[ -z "$(find "$dest/b/dkms" -name '*.o' -o -name '*.ko' -o -name '*.mod.c')" ] || fail "build products in the DKMS source tree"
deb_version=$(dpkg-parsechangelog -SVersion 2>/dev/null)
[ "$deb_version" = "$version" ] || fail "debian/changelog says $deb_version, VERSION $version"

echo "check-install: OK (version $version, kernel $kver)"
