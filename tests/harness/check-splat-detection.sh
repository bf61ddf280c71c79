#!/bin/bash
# Host-side check of run-suite's kernel-log scan: a test that exits 0 but
# made the kernel log "WARNING:" (and then ran dmesg -C to hide it) must be
# reported FAIL, while the clean test before it in the same VM still
# passes.  This script passes when the suite it runs fails that way.
set -u
cd "$(dirname "$0")/../.." || exit 2
export SOFTRNIC_VM_CONSOLE=${SOFTRNIC_VM_CONSOLE:-build/vm/console-check-splat.log}

out=$(scripts/vm/run-suite tests/vm/selftest/pass.sh tests/vm/selftest/splat.sh 2>&1)
rc=$?
echo "$out"
ok=1
expect() { grep -qE "$1" <<<"$out" || { echo "check-splat-detection: missing: $1"; ok=0; }; }
expect '^\[1/2\] selftest_pass \.\.\. PASS [0-9.]+ s$'
expect '^\[2/2\] selftest_splat \.\.\. FAIL [0-9.]+ s \(kernel splat: WARNING: softrnic harness self-test'
expect '^vm: 1 passed, 1 failed, 0 skipped$'
[ $rc -ne 0 ] || { echo "check-splat-detection: run-suite exited 0 despite a failed test"; ok=0; }
[ $ok = 1 ] && echo "check-splat-detection: OK (the splat was caught)"
[ $ok = 1 ]
