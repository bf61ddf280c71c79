#!/bin/bash
# Host-side check of run-suite's bookkeeping when tests misbehave: skip
# (77), a test that overstays its "# timeout:", a test that stops the
# guest-side watchdog so that only the host can end it by killing the VM,
# and a kernel panic, after which a fresh VM must run the remaining test;
# and before all that a first boot that dies before any test (no init),
# which run-suite boots once more.
set -u
cd "$(dirname "$0")/../.." || exit 2
export SOFTRNIC_VM_CONSOLE=${SOFTRNIC_VM_CONSOLE:-build/vm/console-check-recovery.log}
export SOFTRNIC_VM_GRACE=10 # host watchdog: test timeout (5 s) + 10 s

d=tests/vm/selftest
out=$(SOFTRNIC_VM_FIRST_BOOT_APPEND="rdinit=/softrnic-no-such-init" \
	scripts/vm/run-suite $d/pass.sh $d/skip.sh $d/timeout.sh $d/hang.sh $d/panic.sh $d/after_crash.sh 2>&1)
rc=$?
echo "$out"
ok=1
expect() { grep -qE "$1" <<<"$out" || { echo "check-suite-recovery: missing: $1"; ok=0; }; }
expect 'VM failed before running a test .*; booting once more$'
expect '^\[1/6\] selftest_pass \.\.\. PASS [0-9.]+ s$'
expect '^\[2/6\] selftest_skip \.\.\. SKIP [0-9.]+ s$'
expect '^\[3/6\] selftest_timeout \.\.\. FAIL [0-9.]+ s \(timed out after 5 s'
expect '^\[4/6\] selftest_hang \.\.\. FAIL [0-9.]+ s \(VM stopped responding'
expect '^\[5/6\] selftest_panic \.\.\. FAIL [0-9.]+ s \(VM crashed: .*Kernel panic'
expect '^\[6/6\] selftest_after_crash \.\.\. PASS [0-9.]+ s$'
expect '^vm: 2 passed, 3 failed, 1 skipped$'
# The test that ran out of time has what its processes were doing in its log.
grep -q '^--- [0-9]* (S[^)]*): sleep 600' build/vm/logs/selftest_timeout.log ||
	{ echo "check-suite-recovery: no process snapshot in selftest_timeout.log"; ok=0; }
[ $rc -ne 0 ] || { echo "check-suite-recovery: run-suite exited 0 despite failed tests"; ok=0; }
[ $ok = 1 ] && echo "check-suite-recovery: OK"
[ $ok = 1 ]
