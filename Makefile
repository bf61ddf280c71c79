# SPDX-License-Identifier: GPL-2.0
# softrnic top-level build.  `make demo` and `make check` are the two
# commands a user needs on a fresh Debian 12 machine; both install their
# own dependencies first.

BUILD      ?= $(CURDIR)/build
CMAKE_TYPE ?= RelWithDebInfo
# `make install`: userspace under PREFIX, the module under
# /lib/modules/<release>/extra, everything below DESTDIR when given.
PREFIX     ?= /usr/local
DESTDIR    ?=
VERSION    := $(shell cat $(CURDIR)/VERSION)

.PHONY: all deps module userspace testprogs unit vmtest check check-debug demo bench bench-iwarp clean format \
	install uninstall dkms-source dkms-install dkms-uninstall deb check-packages

all: module userspace

deps:
	scripts/deps

# The kernel `make`, `make check` and `make demo` build for: the running
# one when its headers are installed, else (a host that cannot load
# modules anyway, like a CI runner) the one the test VM boots -- said, not
# silent.  KERNELRELEASE=<release> or KDIR=<build dir> choose; kernel/Makefile
# alone never guesses.  `make install` targets the running kernel (or the
# one named) only.
ifeq ($(origin KERNELRELEASE)$(origin KDIR),undefinedundefined)
ifeq ($(wildcard /lib/modules/$(shell uname -r)/build/Makefile),)
TEST_KVER := $(shell bash -c '. scripts/vm/lib.sh && vm_kver' 2>/dev/null)
ifneq ($(TEST_KVER),)
$(info softrnic: no headers for the running kernel $(shell uname -r); building the module for $(TEST_KVER), the kernel the test VM boots)
endif
endif
endif
KMAKE := $(if $(TEST_KVER),KERNELRELEASE=$(TEST_KVER))
TEST_KDIR := $(or $(KDIR),/lib/modules/$(or $(TEST_KVER),$(KERNELRELEASE),$(shell uname -r))/build)

module:
	$(MAKE) -C kernel $(KMAKE)

userspace:
	cmake -S userspace -B $(BUILD)/userspace -DCMAKE_BUILD_TYPE=$(CMAKE_TYPE)
	cmake --build $(BUILD)/userspace -j$$(nproc)

# Programs and test modules the VM suites run (built on the host: the VM
# never compiles anything).
testprogs: module
	$(MAKE) -C tests/kmod/queues KDIR=$(TEST_KDIR)
	$(MAKE) -C tests/kmod/memory KDIR=$(TEST_KDIR)
	$(MAKE) -C tests/kmod/rc KDIR=$(TEST_KDIR)
	$(MAKE) -C tests/kmod/skb KDIR=$(TEST_KDIR)
	$(MAKE) -C tests/kmod/siw KDIR=$(TEST_KDIR)
	$(MAKE) -C tests/raw_uverbs

# The module, the provider and its .driver file where the installed
# libibverbs looks (see userspace/provider/CMakeLists.txt), softrnicdv.h and
# softrnicdv.pc, the CLI, its bash completion and the man pages.  PREFIX is
# a configure-time choice for CMake (paths inside softrnic.driver and the
# .pc), so the userspace build is reconfigured for it.
install:
	$(MAKE) -C kernel modules_install
	cmake -S userspace -B $(BUILD)/userspace -DCMAKE_BUILD_TYPE=$(CMAKE_TYPE) \
		-DCMAKE_INSTALL_PREFIX=$(PREFIX)
	cmake --build $(BUILD)/userspace -j$$(nproc)
	DESTDIR=$(DESTDIR) cmake --install $(BUILD)/userspace

# Removes exactly what `make install` with the same PREFIX and DESTDIR put
# there: the userspace list comes from a staged install of the same build.
uninstall:
	$(MAKE) -C kernel uninstall
	cmake -S userspace -B $(BUILD)/userspace -DCMAKE_BUILD_TYPE=$(CMAKE_TYPE) \
		-DCMAKE_INSTALL_PREFIX=$(PREFIX)
	scripts/uninstall-userspace $(BUILD)/userspace "$(DESTDIR)"

# The source tree DKMS builds (/usr/src/softrnic-<version>): kernel/'s
# sources, VERSION, and kernel/dkms.conf with the version filled in.
DKMS_SRC := $(BUILD)/dkms/softrnic-$(VERSION)
dkms-source:
	rm -rf $(DKMS_SRC) && mkdir -p $(DKMS_SRC)
	cd kernel && find . -type f \( -name '*.[ch]' ! -name '*.mod.c' -o -name Kbuild -o -name Makefile \) \
		-exec cp --parents {} $(DKMS_SRC)/ \;
	cp VERSION $(DKMS_SRC)/
	sed 's/#MODULE_VERSION#/$(VERSION)/' kernel/dkms.conf >$(DKMS_SRC)/dkms.conf

# Without a package: the source into /usr/src, then DKMS builds and
# installs the module for every kernel whose headers are installed (and,
# AUTOINSTALL, for kernels installed later).
dkms-install: dkms-source
	rm -rf $(DESTDIR)/usr/src/softrnic-$(VERSION)
	mkdir -p $(DESTDIR)/usr/src
	cp -a $(DKMS_SRC) $(DESTDIR)/usr/src/
	@if [ -z "$(DESTDIR)" ]; then \
		set -e; dkms add softrnic/$(VERSION); \
		for b in /lib/modules/*/build; do [ -f $$b/Makefile ] || continue; \
			k=$${b#/lib/modules/}; dkms install softrnic/$(VERSION) -k $${k%/build}; done; \
	fi

dkms-uninstall:
	-dkms remove softrnic/$(VERSION) --all
	rm -rf $(DESTDIR)/usr/src/softrnic-$(VERSION)

# Debian packages (softrnic-dkms, softrnic-provider, softrnic-tools) in
# $(BUILD)/deb/; see scripts/deb.
deb:
	BUILD=$(BUILD) scripts/deb

# Host unit tests only (no VM).
unit: userspace
	scripts/check --unit-only

# VM suites only.
vmtest: all testprogs
	scripts/check --vm-only

# Everything: deps, build, host unit tests, VM suites; ends with
# "N passed, N failed".  (tests/harness/check-deb.sh builds the Debian
# packages, which tests/vm/package_install.sh installs.)
check:
	$(MAKE) deps
	$(MAKE) all
	$(MAKE) testprogs
	scripts/check

# The VM suites under the debug kernel (KASAN, lockdep, kmemleak, UBSAN...;
# scripts/vm/debug-kernel builds it once per machine, ~20 min on 2
# cores at load ~2, far longer when they are busy), with softrnic.ko and the test modules built against it and a
# kmemleak scan after each suite.  Not part of `check`.  Afterwards the
# modules in the tree are the debug kernel's: `make` rebuilds them for
# Debian's.
check-debug:
	$(MAKE) deps
	scripts/vm/debug-kernel >/dev/null
	$(MAKE) all testprogs KDIR=$$(scripts/vm/debug-kernel --dir)/obj
	SOFTRNIC_VM_KERNEL=$$(scripts/vm/debug-kernel) SOFTRNIC_VM_TIMEOUT_SCALE=$${SOFTRNIC_VM_TIMEOUT_SCALE:-3} \
		scripts/check --vm-only

# tests/vm/package_install.sh with a cold DKMS build (no ccache; make
# check's run finds every compile in tests/harness/check-dkms-build.sh's
# cache): under TCG DKMS compiling the module takes ~21 minutes.
check-packages:
	$(MAKE) deps
	$(MAKE) all
	$(MAKE) deb
	SOFTRNIC_PACKAGE_COLD=1 scripts/vm/run-suite tests/vm/package_install.sh

demo:
	$(MAKE) deps
	$(MAKE) all
	scripts/demo

bench:
	$(MAKE) deps
	$(MAKE) all
	scripts/bench

# The iWARP table alone (softrnic's iWARP vs siw; siw.ko comes with
# testprogs), ~20-35 min under TCG: not a default phase of `make bench`,
# whose VM timeout could not take both; see Documentation/benchmarks.md.
bench-iwarp:
	$(MAKE) deps
	$(MAKE) all
	$(MAKE) testprogs
	BENCH_PHASES=iwarp BENCH_VM_TIMEOUT=$${BENCH_VM_TIMEOUT:-3600} scripts/bench

format:
	clang-format -i $$(git ls-files 'userspace/*.cpp' 'userspace/*.h' 'tests/unit/*.cpp')

clean:
	$(MAKE) -C kernel $(KMAKE) clean
	-$(MAKE) -C tests/kmod/queues KDIR=$(TEST_KDIR) clean
	-$(MAKE) -C tests/kmod/memory KDIR=$(TEST_KDIR) clean
	-$(MAKE) -C tests/kmod/rc KDIR=$(TEST_KDIR) clean
	-$(MAKE) -C tests/kmod/skb KDIR=$(TEST_KDIR) clean
	-$(MAKE) -C tests/raw_uverbs clean
	rm -rf $(BUILD)
