#!/bin/bash
# Harness self-test, expected to FAIL by timing out (and to be killed with
# its background children).
# timeout: 5
. "$(dirname "$0")/../lib.sh"
sleep 600 &
sleep 600
