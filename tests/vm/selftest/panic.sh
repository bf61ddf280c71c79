#!/bin/bash
# Harness self-test, expected to FAIL: crashes the guest kernel.  The
# harness must report it and continue in a fresh VM.
. "$(dirname "$0")/../lib.sh"
echo 1 >/proc/sys/kernel/sysrq
echo c >/proc/sysrq-trigger
sleep 60
