#!/bin/bash
# Harness self-test, expected to FAIL: it exits 0 but logs a kernel
# warning, which run-suite must notice.  It also clears the kernel ring
# buffer the way dmesg -C does, which must not hide the warning.
# Run by tests/harness/check-splat-detection.sh, not by the normal suites.
. "$(dirname "$0")/../lib.sh"
echo "<4>WARNING: softrnic harness self-test" >/dev/kmsg
dmesg -C
exit 0
