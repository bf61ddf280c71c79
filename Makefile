# SPDX-License-Identifier: GPL-2.0
# softrnic top-level build.  `make demo` and `make check` are the two
# commands a user needs on a fresh Debian 12 machine; both install their
# own dependencies first.

BUILD      ?= $(CURDIR)/build
CMAKE_TYPE ?= RelWithDebInfo

.PHONY: all deps module userspace testprogs unit vmtest check demo bench clean format

all: module userspace

deps:
	scripts/deps

module:
	$(MAKE) -C kernel

userspace:
	cmake -S userspace -B $(BUILD)/userspace -DCMAKE_BUILD_TYPE=$(CMAKE_TYPE)
	cmake --build $(BUILD)/userspace -j$$(nproc)

# Programs and test modules the VM suites run (built on the host: the VM
# never compiles anything).
testprogs: module
	$(MAKE) -C tests/kmod/queues
	$(MAKE) -C tests/kmod/memory
	$(MAKE) -C tests/kmod/rc
	$(MAKE) -C tests/raw_uverbs

# Host unit tests only (no VM).
unit: userspace
	scripts/check --unit-only

# VM suites only.
vmtest: all testprogs
	scripts/check --vm-only

# Everything: deps, build, host unit tests, VM suites; ends with
# "N passed, N failed".
check:
	$(MAKE) deps
	$(MAKE) all
	$(MAKE) testprogs
	scripts/check

demo:
	$(MAKE) deps
	$(MAKE) all
	scripts/demo

bench:
	$(MAKE) deps
	$(MAKE) all
	scripts/bench

format:
	clang-format -i $$(git ls-files 'userspace/*.cpp' 'userspace/*.h' 'tests/unit/*.cpp')

clean:
	$(MAKE) -C kernel clean
	-$(MAKE) -C tests/kmod/queues clean
	-$(MAKE) -C tests/kmod/memory clean
	-$(MAKE) -C tests/kmod/rc clean
	-$(MAKE) -C tests/raw_uverbs clean
	rm -rf $(BUILD)
