#!/bin/bash
# Harness self-test, expected to be SKIPPED (exit 77).
. "$(dirname "$0")/../lib.sh"
skip "nothing to do here"
