#!/bin/bash
# Host-side check: a fresh clone of this tree under /tmp, where the guest
# mounts a tmpfs of its own, builds and runs the demo (scripts/demo: VM,
# devices, RC traffic), as a newcomer's first `make demo` there would.
# The clone is of HEAD: commit before trusting this check.
set -u
cd "$(dirname "$0")/../.." || exit 2
clone=$(mktemp -d /tmp/softrnic-clone.XXXXXX)
trap 'rm -rf "$clone"' EXIT
fail() { echo "check-demo-from-tmp: $*"; exit 1; }

git clone -q . "$clone/softrnic" || fail "git clone"
cd "$clone/softrnic" || fail "cd"
# `make demo` minus `make deps`, which the caller (make check) just ran.
make all >build.log 2>&1 || { tail -20 build.log; fail "make all in $PWD"; }
scripts/demo >demo.log 2>&1
rc=$?
tail -n 3 demo.log
[ $rc = 0 ] || { tail -40 demo.log; fail "scripts/demo from $PWD: status $rc"; }
grep -q "demo: all steps succeeded" demo.log || fail "the demo did not report success"
grep -q "bytes in" demo.log || fail "no RC traffic in the demo's output"
echo "check-demo-from-tmp: OK"
