#!/bin/bash
# Harness self-test, expected to PASS in a fresh VM after panic.sh.
. "$(dirname "$0")/../lib.sh"
[ -e /tmp/softrnic-selftest-mark ] && die "not a fresh VM: pass.sh's mark is still in /tmp"
log "fresh VM, as expected"
