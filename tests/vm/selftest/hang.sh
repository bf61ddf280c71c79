#!/bin/bash
# Harness self-test, expected to FAIL: stops the guest-side `timeout` that
# watches it, so only the host-side watchdog (per-test timeout plus
# SOFTRNIC_VM_GRACE) can end it, by killing the VM.
# timeout: 5
. "$(dirname "$0")/../lib.sh"
kill -STOP "$PPID"
sleep 600
