#!/bin/bash
# Host-side check of scripts/vm/run: the guest command's stdout and stderr
# arrive separately and completely, its exit status comes back, it runs in
# our working directory with SOFTRNIC_* passed in, and --timeout gives 124.
set -u
cd "$(dirname "$0")/../.." || exit 2
export SOFTRNIC_VM_CONSOLE=${SOFTRNIC_VM_CONSOLE:-build/vm/console-check-run.log}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok=1
fail() { echo "check-run: $*"; ok=0; }

SOFTRNIC_CHECK_VAR=hello scripts/vm/run -- \
	'seq 1 20000; echo "err $SOFTRNIC_CHECK_VAR" >&2; pwd; exit 42' >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 42 ] || fail "exit status $rc, expected 42"
{ seq 1 20000; pwd; } | cmp -s - "$tmp/out" || fail "stdout differs: $(tail -n 3 "$tmp/out")"
grep -qx 'err hello' "$tmp/err" || fail "stderr lacks 'err hello': $(cat "$tmp/err")"
grep -q '^[0-9]' "$tmp/err" && fail "stdout leaked into stderr"

scripts/vm/run --timeout 3 -- sleep 600 >/dev/null 2>"$tmp/err"
rc=$?
[ $rc = 124 ] || fail "timeout gave status $rc, expected 124: $(cat "$tmp/err")"

[ $ok = 1 ] && echo "check-run: OK"
[ $ok = 1 ]
