#!/bin/bash
# Harness self-test, expected to PASS: tests/vm/lib.sh's cm runner reruns
# a pair whose client failed for the tools' sake (here: a REJ for an
# unknown service ID, then, as Debian 12's perftest does, a general
# protection fault on the way out), and that declared crash is not a
# splat; the second client succeeds.  Listening is faked by a file: this
# checks the runner and the harness, not rdma_cm.
# Run by tests/harness/check-splat-detection.sh, not by the normal suites.
. "$(dirname "$0")/../lib.sh"
d=/tmp/selftest-cm
mkdir -p $d
cm_listening() { [ -e "$d/listen.$2" ]; }
cat >$d/srv.sh <<EOS
trap 'rm -f $d/listen.18999; exit 1' TERM
touch $d/listen.18999
while [ ! -e $d/done ]; do sleep 0.1; done
rm -f $d/listen.18999
EOS
# The first client reports the REJ, then reads a non-canonical address
# (#GP: "traps: python3[PID] general protection fault").
cat >$d/cli.py <<EOS
import ctypes, os
if not os.path.exists("$d/tried"):
    open("$d/tried", "w").close()
    print("REJECTED error 8", flush=True)
    ctypes.string_at(1 << 63)
open("$d/done", "w").close()
print("connected")
EOS
cm selftest_cm "" "" 18999 "sh $d/srv.sh" "python3 $d/cli.py"
[ -e $d/tried ] && [ -e $d/done ] || die "the client did not run twice"
