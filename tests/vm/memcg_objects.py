#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Verbs memory is charged to the process that asks for it: run inside a
# memory cgroup (memcg_objects.sh puts this process in CGROUP), it checks
# that a max-size QP and CQ raise the cgroup's memory.current by at least
# their rings, that under a memory.max just above what it uses QP creation
# fails with ENOMEM (the verb, not the OOM killer), and that destroying
# everything gives the memory back.
# usage: memcg_objects.py DEV CGROUP_DIR
import errno
import sys

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr

MIB = 1 << 20
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
    print("%s: %s" % ("ok" if cond else "FAIL", what), flush=True)


dev, cg = sys.argv[1], sys.argv[2]


def current():
    with open(cg + "/memory.current") as f:
        return int(f.read())


def set_max(v):
    with open(cg + "/memory.max", "w") as f:
        f.write(str(v))


ctx = Context(name=dev)
attr = ctx.query_device()
pd = PD(ctx)
cq = CQ(ctx, 256)
# The largest QP the device offers: both rings at their maximum depth and
# SGE count.
cap = QPCap(max_send_wr=attr.max_qp_wr, max_recv_wr=attr.max_qp_wr,
            max_send_sge=attr.max_sge, max_recv_sge=attr.max_sge)


def big_qp():
    return QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))


# Each ring slot holds a WQE header plus max_sge 16-byte SGEs: the two
# rings of one max QP are at least this many bytes.
ring_bytes = 2 * attr.max_qp_wr * attr.max_sge * 16
before = current()
qp = big_qp()
grown = current() - before
check(grown >= ring_bytes * 9 // 10,
      "one max QP (%d WRs x %d SGEs) charged %.1f MiB, its rings are %.1f MiB"
      % (attr.max_qp_wr, attr.max_sge, grown / MIB, ring_bytes / MIB))
qp.close()
check(current() - before < ring_bytes // 4,
      "destroying it gave back all but %.1f MiB" % ((current() - before) / MIB))

before = current()
bigcq = CQ(ctx, attr.max_cqe)
grown = current() - before
check(grown >= attr.max_cqe * 32 * 9 // 10,
      "a %d-CQE CQ charged %.1f MiB" % (attr.max_cqe, grown / MIB))
bigcq.close()

# A limit with room for about two and a half max QPs: creation must fail
# with ENOMEM before a fourth, and what was created must still work.
base = current()
set_max(base + ring_bytes * 5 // 2)
qps, err = [], None
for _ in range(8):
    try:
        qps.append(big_qp())
    except PyverbsRDMAError as ex:
        err = ex.error_code
        break
check(err == errno.ENOMEM,
      "under memory.max, QP %d failed with %s" % (len(qps) + 1, err))
check(1 <= len(qps) <= 3, "%d max QPs fitted under the limit" % len(qps))
try:
    for q in qps:
        q.to_init(QPAttr(port_num=1))
    check(True, "the QPs that fitted move to INIT")
except PyverbsRDMAError as ex:
    check(False, "a QP that fitted cannot move to INIT: %s" % ex)
for q in qps:
    q.close()
set_max("max")
check(current() - base < ring_bytes // 4,
      "destroying them gave back all but %.1f MiB" % ((current() - base) / MIB))
cq.close()
pd.close()
ctx.close()
print("%d failures" % failures)
sys.exit(1 if failures else 0)
