#!/bin/bash
# Host-side check of run-suite's kernel-log scan: a test that exits 0 but
# made the kernel log "WARNING:" (and then ran dmesg -C to hide it) must be
# reported FAIL, while the clean test before it in the same VM still
# passes.  A user-space tool's general protection fault is a splat too,
# unless the test declared that PID's crash its tool's own (tool_crash_ok),
# and a declaration holds for its test only; the RDMA CM pair runner
# makes one for a client it reruns.  This script passes when the
# suite it runs fails that way.
set -u
cd "$(dirname "$0")/../.." || exit 2
export SOFTRNIC_VM_CONSOLE=${SOFTRNIC_VM_CONSOLE:-build/vm/console-check-splat.log}

out=$(scripts/vm/run-suite tests/vm/selftest/pass.sh tests/vm/selftest/splat.sh \
	tests/vm/selftest/tool_crash.sh tests/vm/selftest/tool_crash_other.sh \
	tests/vm/selftest/cm_rerun_crash.sh 2>&1)
rc=$?
echo "$out"
ok=1
expect() { grep -qE "$1" <<<"$out" || { echo "check-splat-detection: missing: $1"; ok=0; }; }
expect '^\[1/5\] selftest_pass \.\.\. PASS [0-9.]+ s$'
expect '^\[2/5\] selftest_splat \.\.\. FAIL [0-9.]+ s \(kernel splat: WARNING: softrnic harness self-test'
expect '^\[3/5\] selftest_tool_crash \.\.\. PASS [0-9.]+ s$'
expect '^\[4/5\] selftest_tool_crash_other \.\.\. FAIL [0-9.]+ s \(kernel splat: traps: ib_write_lat\[4194001\] general protection fault'
expect '^\[5/5\] selftest_cm_rerun_crash \.\.\. PASS [0-9.]+ s$'
expect '^vm: 3 passed, 2 failed, 0 skipped$'
[ $rc -ne 0 ] || { echo "check-splat-detection: run-suite exited 0 despite a failed test"; ok=0; }
[ $ok = 1 ] && echo "check-splat-detection: OK (the splat was caught)"
[ $ok = 1 ]
