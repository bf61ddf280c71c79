#!/bin/bash
# Host-side check of make check's reporting, no VM needed:
#  - the line run-suite prints per finished test (vm_result_line,
#    "[7/31] roce_access ... PASS 41.2 s"), and scripts/check reading such
#    lines back (vm_result_records), including a test reported twice and
#    the indented log tails that must not count;
#  - scripts/junit-report on synthetic records: well-formed XML (parsed by
#    python3's minidom, and xmllint where installed) whose counts, names,
#    times and failure texts are the input's, with & < > " ' and bytes XML
#    cannot carry in the input.
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

# --- the JUnit writer
printf 'first line\n<b>&amp; "quoted" '"'"'single'"'"'\n\033[31mcolour\033[0m \xff\xfe not UTF-8 ]]>\nlast line\n' >"$tmp/detail.log"
msg='a&b <c> "d" '"'"'e'"'"''
{
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' \
		unit 'roce header: parse <BTH> & "AETH"' pass 0.05 '' '' \
		unit 'ring wraps' fail 1.5 "$msg" "$tmp/detail.log" \
		harness tests/harness/check-run.sh pass 30.2 '' '' \
		vm roce_access fail 41.2 'exit status 1' /nonexistent/log \
		vm package_install skip 0.4 'skipped (exit status 77)' ''
} >"$tmp/records"
scripts/junit-report "$tmp/records" "$tmp/out.xml" || fail "junit-report failed"
if command -v xmllint >/dev/null; then
	xmllint --noout "$tmp/out.xml" 2>"$tmp/xmllint.err" || fail "xmllint: $(head -5 "$tmp/xmllint.err")"
fi
python3 - "$tmp/out.xml" "$msg" >"$tmp/py.out" 2>&1 <<'PY' || fail "XML check: $(cat "$tmp/py.out")"
import sys, xml.dom.minidom
doc = xml.dom.minidom.parse(sys.argv[1])
msg = sys.argv[2]
def check(cond, what):
    if not cond:
        sys.exit(what)
root = doc.documentElement
check(root.tagName == "testsuites", "root is " + root.tagName)
a = lambda e, n: e.getAttribute(n)
check((a(root, "tests"), a(root, "failures"), a(root, "skipped")) == ("5", "2", "1"),
      "testsuites counts: %s %s %s" % (a(root, "tests"), a(root, "failures"), a(root, "skipped")))
suites = root.getElementsByTagName("testsuite")
got = [(a(s, "name"), a(s, "tests"), a(s, "failures"), a(s, "skipped")) for s in suites]
check(got == [("unit", "2", "1", "0"), ("harness", "1", "0", "0"), ("vm", "2", "1", "1")],
      "testsuite counts: %r" % got)
cases = root.getElementsByTagName("testcase")
check(len(cases) == 5, "%d testcases" % len(cases))
check([a(c, "name") for c in cases] ==
      ['roce header: parse <BTH> & "AETH"', "ring wraps", "tests/harness/check-run.sh",
       "roce_access", "package_install"], "names: %r" % [a(c, "name") for c in cases])
check([a(c, "time") for c in cases] == ["0.05", "1.5", "30.2", "41.2", "0.4"], "times")
check(a(suites[0], "time") == "1.6", "unit suite time " + a(suites[0], "time"))
fails = root.getElementsByTagName("failure")
check(len(fails) == 2, "%d failures" % len(fails))
check(a(fails[0], "message") == msg, "failure message: %r" % a(fails[0], "message"))
text = "".join(n.data for n in fails[0].childNodes)
check(text.startswith("first line\n<b>&amp; \"quoted\" 'single'\n"), "failure text: %r" % text)
check("colour" in text and "\033" not in text and "]]>" in text and text.endswith("last line\n"),
      "failure text: %r" % text)
check(a(fails[1], "message") == "exit status 1", "second failure: %r" % a(fails[1], "message"))
check(len(root.getElementsByTagName("skipped")) == 1, "skipped elements")
PY

# An empty run (scripts/check --vm-only with nothing counted) is still a report.
: >"$tmp/empty"
if ! scripts/junit-report "$tmp/empty" "$tmp/empty.xml" ||
	! python3 -c 'import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]).documentElement; sys.exit(d.getAttribute("tests") != "0")' \
		"$tmp/empty.xml"; then
	fail "empty records: no valid report"
fi

[ $ok = 1 ] && echo "check-reporting: OK"
[ $ok = 1 ]
