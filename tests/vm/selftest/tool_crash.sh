#!/bin/bash
# Harness self-test, expected to PASS: the kernel logs a user-space tool's
# general protection fault (a "traps:" line, a splat unless excused) for a
# PID the test declared its tool's own crash (tool_crash_ok).
# Run by tests/harness/check-splat-detection.sh, not by the normal suites.
. "$(dirname "$0")/../lib.sh"
# A PID above any the VM hands out; tool_crash_other.sh logs it again.
pid=4194001
tool_crash_ok $pid
echo "<6>traps: ib_write_lat[$pid] general protection fault ip:7f5ca2676472 sp:7ffcfab5e450 error:0 in librdmacm.so.1.3.44.0[7f5ca2670000+15000]" >/dev/kmsg
