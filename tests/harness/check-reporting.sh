#!/bin/bash
# Host-side check of make check's reporting, no VM needed: the line
# run-suite prints per finished test (vm_result_line, "[7/31] roce_access
# ... PASS 41.2 s"), and scripts/check reading such lines back
# (vm_result_records), including a test reported twice and the indented
# log tails that must not count.
set -u
cd "$(dirname "$0")/../.." || exit 2
# shellcheck disable=SC1091
. scripts/vm/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok=1
fail() { echo "check-reporting: $*"; ok=0; }

# --- the progress line
same() { # GOT WANT WHAT
	[ "$1" = "$2" ] || fail "$3: got '$1', want '$2'"
}
same "$(vm_result_line 7 31 roce_access PASS 41.2)" "[7/31] roce_access ... PASS 41.2 s" "PASS line"
same "$(vm_result_line 3 6 selftest_timeout FAIL 5.1 'timed out after 5 s')" \
	"[3/6] selftest_timeout ... FAIL 5.1 s (timed out after 5 s)" "FAIL line"
same "$(vm_result_line 2 6 selftest_skip SKIP 0.3 '')" "[2/6] selftest_skip ... SKIP 0.3 s" "SKIP line"

# --- reading run-suite output back
{
	echo "vm: checking whether KVM works here"
	vm_result_line 1 4 harness_selftest PASS 6.3
	vm_result_line 2 4 selftest_splat FAIL 0.3 'kernel splat: WARNING: x (y) <z>'
	echo "    | [9/9] not_a_result ... PASS 1 s"
	echo "    (full log: build/vm/logs/selftest_splat.log)"
	vm_result_line 3 4 tool_cli PASS 12
	printf '%s\r\n' "$(vm_result_line 4 4 devinfo SKIP 0.5)"
	# A splat after the last test: reported again.
	vm_result_line 3 4 tool_cli FAIL 12 'kernel splat after the test ended: BUG: q'
	echo "vm: 1 passed, 2 failed, 1 skipped"
} >"$tmp/suite.log"
want=$(printf '%s\t%s\t%s\t%s\t%s\n' \
	1 harness_selftest PASS 6.3 '' \
	2 selftest_splat FAIL 0.3 'kernel splat: WARNING: x (y) <z>' \
	3 tool_cli FAIL 12 'kernel splat after the test ended: BUG: q' \
	4 devinfo SKIP 0.5 '')
same "$(vm_result_records "$tmp/suite.log")" "$want" "vm_result_records"

[ $ok = 1 ] && echo "check-reporting: OK"
[ $ok = 1 ]
