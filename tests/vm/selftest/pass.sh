#!/bin/bash
# Harness self-test, expected to PASS; leaves a mark in this VM's /tmp so
# after_crash.sh can tell whether it runs in a fresh VM.
. "$(dirname "$0")/../lib.sh"
: >/tmp/softrnic-selftest-mark
log "pass.sh ran"
