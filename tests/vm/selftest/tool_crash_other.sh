#!/bin/bash
# Harness self-test, expected to FAIL: a user-space tool's general
# protection fault for a PID other than the one the test declared: the
# one tool_crash.sh, the test before, declared, which must not carry over.
# Run by tests/harness/check-splat-detection.sh, not by the normal suites.
. "$(dirname "$0")/../lib.sh"
pid=4194001
tool_crash_ok 4194002
echo "<6>traps: ib_write_lat[$pid] general protection fault ip:7f5ca2676472 sp:7ffcfab5e450 error:0 in librdmacm.so.1.3.44.0[7f5ca2670000+15000]" >/dev/kmsg
