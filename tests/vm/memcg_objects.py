#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Verbs memory is charged to the process that asks for it: run inside a
# memory cgroup (memcg_objects.sh puts this process in CGROUP), it checks
# that a max-size QP and CQ raise the cgroup's memory.current by at least
# their rings, that under a memory.max just above what it uses QP creation
# fails with ENOMEM (the verb, not the OOM killer), and that destroying
# everything gives the memory back.  The same for MRs (the MR itself and
# the page list of its pinned pages, over memory the process has already
# faulted in) and memory windows.
# usage: memcg_objects.py DEV CGROUP_DIR
import ctypes
import errno
import mmap
import sys
import time

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR, MW
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr

T0 = time.monotonic()
MIB = 1 << 20
KIB = 1 << 10
PAGE = mmap.PAGESIZE
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
    print("%s: %s [%.1f s]" % ("ok" if cond else "FAIL", what, time.monotonic() - T0),
          flush=True)


dev, cg = sys.argv[1], sys.argv[2]


def current():
    with open(cg + "/memory.current") as f:
        return int(f.read())


def set_max(v):
    with open(cg + "/memory.max", "w") as f:
        f.write(str(v))


def given_back(read, base, limit, unit, what):
    """Check that read() falls back below base + limit once the objects
    are gone.  MRs and windows are freed with kfree_rcu, which batches
    for up to several seconds, and memory.stat lags by the per-CPU stat
    batch: so poll (bounded) and report the value the check used."""
    deadline = time.monotonic() + 15
    while True:
        left = read() - base
        if left < limit or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    name, div = ("MiB", MIB) if unit == MIB else ("KiB", KIB)
    check(left < limit, "%s gave back all but %.1f %s" % (what, left / div, name))


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
given_back(current, before, ring_bytes // 4, MIB, "destroying it")

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
given_back(current, base, ring_bytes // 4, MIB, "destroying them")


# ---- MRs and MWs
# The Python objects of thousands of MRs are anonymous memory of this
# process, charged to the cgroup too: these parts count the cgroup's
# kernel memory only (memory.stat, flushed lazily: the sums below hold
# to a few hundred KiB).
KSTATS = ("slab_unreclaimable", "vmalloc", "percpu", "kernel_stack")


def kernel():
    with open(cg + "/memory.stat") as f:
        st = dict(line.split() for line in f)
    return sum(int(st.get(k, 0)) for k in KSTATS)


ACCESS = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE


class Buffer:
    """Private anonymous memory, every page faulted in (and charged to the
    cgroup as user memory) before anything registers it."""

    def __init__(self, nbytes):
        self.m = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        page = b"\x5a" * PAGE
        for off in range(0, nbytes, PAGE):
            self.m[off:off + PAGE] = page
        self.c = ctypes.c_char.from_buffer(self.m)
        self.addr = ctypes.addressof(self.c)


def reg(buf, off, length):
    return MR(pd, length, ACCESS, address=buf.addr + off)


# Many small MRs: each one's own bookkeeping (struct softrnic_mr, 360
# bytes, and a one-entry page list) must be charged, or a process pins
# down kernel memory outside its limit, up to 2^18 MRs per device.
N_SMALL = 4096
small = Buffer(N_SMALL * PAGE)
before = kernel()
mrs = [reg(small, i * PAGE, PAGE) for i in range(N_SMALL)]
per_mr = (kernel() - before) / N_SMALL
print("per-MR charge: %d one-page MRs, %.0f bytes each" % (N_SMALL, per_mr), flush=True)
check(per_mr >= 256, "a one-page MR charged %.0f bytes (its struct alone is 360)" % per_mr)
for m in mrs:
    m.close()
mrs = []
given_back(kernel, before, 512 * KIB, KIB, "deregistering them")

# Large MRs: the page list, 8 bytes per pinned page.
BIG = 64 * MIB
big = Buffer(BIG)
list_bytes = BIG // PAGE * 8
N_BIG = 16
before = kernel()
mrs = [reg(big, 0, BIG) for _ in range(N_BIG)]
per_mr = (kernel() - before) / N_BIG
print("per-MR charge: a %d MiB MR, %.1f KiB (page list %d KiB)"
      % (BIG // MIB, per_mr / KIB, list_bytes // KIB), flush=True)
check(per_mr >= list_bytes * 3 // 4,
      "a %d MiB MR charged %.1f KiB, its page list is %d KiB"
      % (BIG // MIB, per_mr / KIB, list_bytes // KIB))
for m in mrs:
    m.close()
mrs = []
given_back(kernel, before, 512 * KIB, KIB, "deregistering them")

# Memory windows (ibv_alloc_mw): the window's kernel object.
N_MW = 4096
before = kernel()
mws = [MW(pd, e.IBV_MW_TYPE_2) for _ in range(N_MW)]
per_mw = (kernel() - before) / N_MW
print("per-MW charge: %.0f bytes" % per_mw, flush=True)
check(per_mw >= 128, "a memory window charged %.0f bytes (its struct alone is 144)" % per_mw)
for w in mws:
    w.close()
mws = []
given_back(kernel, before, 512 * KIB, KIB, "deallocating them")

# At the limit: room for about eight large MRs' page lists.  Registration
# must fail with ENOMEM (not an OOM kill, not a splat), the MRs that
# fitted must still be usable, and deregistering gives everything back.
# Right at the limit, reclaim would evict this process's own code and
# libraries (page cache charged to the cgroup) and the interpreter would
# thrash on faulting them back: everything mapped is locked in memory
# first, the rest of the cgroup's page cache dropped.
libc = ctypes.CDLL(None, use_errno=True)
if libc.mlockall(1):  # MCL_CURRENT
    print("mlockall: %s" % errno.errorcode[ctypes.get_errno()])
    sys.exit(2)
try:
    with open(cg + "/memory.reclaim", "w") as f:
        f.write(str(1 << 30))
except OSError:
    pass  # EAGAIN: less than that was reclaimable
base, kbase = current(), kernel()
set_max(base + 8 * list_bytes)
err = None
for _ in range(64):
    try:
        mrs.append(reg(big, 0, BIG))
    except PyverbsRDMAError as ex:
        err = ex.error_code
        break
check(err == errno.ENOMEM,
      "under memory.max, MR %d failed with %s" % (len(mrs) + 1, err))
check(2 <= len(mrs) <= 12, "%d large MRs fitted under the limit" % len(mrs))
# Small MRs fail the same way once what is left is used up.  (Their
# Python objects reuse the heap the 4096 above left behind.)
err = None
small_mrs = []
for i in range(1024):
    try:
        small_mrs.append(reg(small, i * PAGE, PAGE))
    except PyverbsRDMAError as ex:
        err = ex.error_code
        break
check(err == errno.ENOMEM,
      "under memory.max, one-page MR %d failed with %s" % (len(small_mrs) + 1, err))
for m in small_mrs:
    m.close()
small_mrs = []
# What fitted still works: the MRs can be re-registered in place.
try:
    for m in mrs:
        m.rereg(e.IBV_REREG_MR_CHANGE_ACCESS, pd, 0, 0, e.IBV_ACCESS_LOCAL_WRITE)
    check(True, "the MRs that fitted can still be re-registered")
except PyverbsRDMAError as ex:
    check(False, "an MR that fitted cannot be re-registered: %s" % ex)
for m in mrs:
    m.close()
mrs = []
set_max("max")
libc.munlockall()
given_back(kernel, kbase, 512 * KIB, KIB, "deregistering them")
cq.close()
pd.close()
ctx.close()
print("%d failures" % failures)
sys.exit(1 if failures else 0)
