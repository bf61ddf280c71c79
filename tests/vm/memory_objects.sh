#!/bin/bash
# MRs, MWs, AHs and the key table: softrnic_mtest.ko (softrnic.ko's own
# sources plus tests/kmod/memory/memtest.c, so the internal data path API
# is reachable) and the raw uverbs test build/mem_uverbs.
# timeout: 420
. "$(dirname "$0")/lib.sh"

[ -f "$SOFTRNIC_ROOT/build/kmod-memory/softrnic_mtest.ko" ] ||
	die "softrnic_mtest.ko not built (make testprogs)"
# The test module registers the same link types: softrnic must be out.
unload_softrnic || die "rmmod softrnic"
"$SOFTRNIC_ROOT/tests/kmod/memory/run-in-vm.sh" || die "memory tests failed"
