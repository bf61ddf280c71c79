#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# CQs, QPs and SRQs through libibverbs and libsoftrnic (pyverbs): the
# kernel's queue objects as applications see them.  RC WRs go to a peer
# that does not exist and UD ones to a QPN nobody has: RC completions come
# from flushes, UD sends complete once sent.
# usage: queues_verbs.py ROCE_DEV IWARP_DEV
import errno
import select
import subprocess
import sys

import pyverbs.enums as e
from pyverbs.addr import AH, AHAttr, GlobalRoute
from pyverbs.cq import CQ, CompChannel
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what, flush=True)


def poll(cq, want, tries=100):
    wcs = []
    for _ in range(tries):
        n, got = cq.poll(num_entries=want - len(wcs))
        wcs += got[:n]
        if len(wcs) >= want:
            break
        select.select([], [], [], 0.01)
    return wcs


def quiet(cq):
    select.select([], [], [], 0.05)
    n, _ = cq.poll(num_entries=1)
    return n == 0


def to_rts(ctx, qp, roce):
    if qp.qp_type == e.IBV_QPT_UD:
        a = QPAttr(qp_state=e.IBV_QPS_INIT, port_num=1)
        a.qkey = 0x1234
        a.pkey_index = 0
        qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT |
                  e.IBV_QP_QKEY)
        qp.modify(QPAttr(qp_state=e.IBV_QPS_RTR), e.IBV_QP_STATE)
        a = QPAttr(qp_state=e.IBV_QPS_RTS)
        a.sq_psn = 7
        qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_SQ_PSN)
        return
    a = QPAttr(qp_state=e.IBV_QPS_INIT, port_num=1)
    a.qp_access_flags = e.IBV_ACCESS_REMOTE_WRITE
    if not roce:
        qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_ACCESS_FLAGS)
        qp.modify(QPAttr(qp_state=e.IBV_QPS_RTR), e.IBV_QP_STATE)
        qp.modify(QPAttr(qp_state=e.IBV_QPS_RTS), e.IBV_QP_STATE)
        return
    a.pkey_index = 0
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT |
              e.IBV_QP_ACCESS_FLAGS)
    a = QPAttr(qp_state=e.IBV_QPS_RTR)
    a.path_mtu = e.IBV_MTU_4096
    a.dest_qp_num = 0x42
    a.rq_psn = 0x100
    a.max_dest_rd_atomic = 4
    a.min_rnr_timer = 12
    # Link-local GID: the MAC comes from the GID, no neighbour lookup.
    gr = GlobalRoute(dgid=ctx.query_gid(1, 0), sgid_index=0)
    a.ah_attr = AHAttr(gr=gr, is_global=1, port_num=1)
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_AV | e.IBV_QP_PATH_MTU |
              e.IBV_QP_DEST_QPN | e.IBV_QP_RQ_PSN |
              e.IBV_QP_MAX_DEST_RD_ATOMIC | e.IBV_QP_MIN_RNR_TIMER)
    a = QPAttr(qp_state=e.IBV_QPS_RTS)
    # No retransmission timer (0 = infinite): the RoCE transport sends to
    # QP 0x42 on our own GID, which does not exist, and with a timer the
    # sends would complete with RETRY_EXC_ERR (and the QP go to ERR) on
    # their own if the test is slower than 8 x 67 ms, instead of being
    # flushed by the test's own move to ERR.
    a.timeout = 0
    a.retry_cnt = 7
    a.rnr_retry = 7
    a.sq_psn = 0x200
    a.max_rd_atomic = 4
    qp.modify(a, e.IBV_QP_STATE | e.IBV_QP_TIMEOUT | e.IBV_QP_RETRY_CNT |
              e.IBV_QP_RNR_RETRY | e.IBV_QP_SQ_PSN |
              e.IBV_QP_MAX_QP_RD_ATOMIC)


def post_recv_fails(qp, mr):
    try:
        qp.post_recv(RecvWR(wr_id=1, num_sge=1, sg=[SGE(mr.buf, 64, mr.lkey)]))
    except PyverbsRDMAError as ex:
        return ex.error_code == errno.EINVAL
    return False


def to_err(qp):
    qp.modify(QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE)


def flush_and_events(ctx, pd, mr, qpt, roce, name):
    chan = CompChannel(ctx)
    scq = CQ(ctx, 10, None, chan, 0)
    rcq = CQ(ctx, 16, None, None, 0)
    check(scq.cqe == 16, "%s: cqe rounded to 16, got %d" % (name, scq.cqe))
    cap = QPCap(max_send_wr=5, max_recv_wr=5, max_send_sge=1,
                max_recv_sge=1)
    qp = QP(pd, QPInitAttr(qp_type=qpt, scq=scq, rcq=rcq, cap=cap,
                           sq_sig_all=0))
    attr, init = qp.query(e.IBV_QP_CAP)
    check(init.cap.max_send_wr == 8 and init.cap.max_recv_wr == 8,
          "%s: caps %d %d" % (name, init.cap.max_send_wr,
                             init.cap.max_recv_wr))
    # Not in RESET: IBTA C10-97.2.1, post_recv fails there.
    check(post_recv_fails(qp, mr), "%s: post_recv in RESET" % name)
    to_rts(ctx, qp, roce)
    for i in range(3):
        qp.post_recv(RecvWR(wr_id=100 + i, num_sge=1,
                            sg=[SGE(mr.buf, 64, mr.lkey)]))
    if roce and qpt == e.IBV_QPT_RC:
        attr, _ = qp.query(e.IBV_QP_PATH_MTU | e.IBV_QP_RQ_PSN)
        check(attr.path_mtu == e.IBV_MTU_1024,
              "%s: path MTU capped to the port: %d" % (name, attr.path_mtu))
        check(attr.rq_psn == 0x100 and attr.dest_qp_num == 0x42,
              "%s: attributes kept" % name)
    ah = None
    if qpt == e.IBV_QPT_UD:
        ah = AH(pd, attr=AHAttr(gr=GlobalRoute(dgid=ctx.query_gid(1, 0),
                                               sgid_index=0),
                                is_global=1, port_num=1))
    for i in range(3):
        wr = SendWR(wr_id=i + 1, opcode=e.IBV_WR_SEND, num_sge=1,
                    sg=[SGE(mr.buf, 64, mr.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED if i != 1 else 0)
        if ah:
            wr.set_wr_ud(ah, 0x99, 0x1234)
        qp.post_send(wr)
    # RC sends to a peer that does not exist stay in flight until the
    # flush; UD sends go out at once (to a QPN nobody has).
    sends_stall = qpt == e.IBV_QPT_RC
    if sends_stall:
        check(quiet(scq), "%s: no completion while in flight" % name)
    else:
        wcs = poll(scq, 2)
        check([w.wr_id for w in wcs] == [1, 3] and
              all(w.status == e.IBV_WC_SUCCESS for w in wcs),
              "%s: UD sends complete %s" % (name, [w.wr_id for w in wcs]))

    # The subprocess sees our QP and CQs in rdma restrack.
    out = subprocess.run(["rdma", "resource", "show", "qp"],
                         capture_output=True, text=True).stdout
    check(("lqpn %d " % qp.qp_num) in out, "%s: rdma resource show qp" % name)
    out = subprocess.run(["rdma", "resource", "show", "cq"],
                         capture_output=True, text=True).stdout
    check(out.count("python3") >= 2, "%s: rdma resource show cq" % name)

    if sends_stall:
        scq.req_notify()
    to_err(qp)
    if sends_stall:
        ev = chan.get_cq_event(scq)
        scq.ack_events(1)
        wcs = poll(scq, 3)
        check([w.wr_id for w in wcs] == [1, 2, 3],
              "%s: send flush order %s" % (name, [w.wr_id for w in wcs]))
        check(all(w.status == e.IBV_WC_WR_FLUSH_ERR and
                  w.opcode == e.IBV_WC_SEND and w.qp_num == qp.qp_num
                  for w in wcs), "%s: send flush CQEs" % name)
    wcs = poll(rcq, 3)
    check([w.wr_id for w in wcs] == [100, 101, 102] and
          all(w.status == e.IBV_WC_WR_FLUSH_ERR and
              w.opcode == e.IBV_WC_RECV for w in wcs),
          "%s: recv flushes" % name)

    # WRs posted in ERR are flushed too.
    wr = SendWR(wr_id=9, opcode=e.IBV_WR_SEND, num_sge=1,
                sg=[SGE(mr.buf, 8, mr.lkey)], send_flags=0)
    if ah:
        wr.set_wr_ud(ah, 0x99, 0x1234)
    qp.post_send(wr)
    qp.post_recv(RecvWR(wr_id=200, num_sge=1, sg=[SGE(mr.buf, 8, mr.lkey)]))
    wcs = poll(scq, 1)
    check(len(wcs) == 1 and wcs[0].wr_id == 9, "%s: send in ERR" % name)
    wcs = poll(rcq, 1)
    check(len(wcs) == 1 and wcs[0].wr_id == 200, "%s: recv in ERR" % name)
    check(quiet(scq) and quiet(rcq), "%s: nothing more" % name)

    # Back through RESET; resize keeps nothing lost.
    qp.modify(QPAttr(qp_state=e.IBV_QPS_RESET), e.IBV_QP_STATE)
    to_rts(ctx, qp, roce)
    # sends that do not stall are flushed by posting them in ERR
    if not sends_stall:
        to_err(qp)
    for i in range(4):
        wr = SendWR(wr_id=20 + i, opcode=e.IBV_WR_SEND, num_sge=1,
                    sg=[SGE(mr.buf, 8, mr.lkey)], send_flags=0)
        if ah:
            wr.set_wr_ud(ah, 0x99, 0x1234)
        qp.post_send(wr)
    if sends_stall:
        to_err(qp)
    wcs = poll(scq, 1)
    scq.resize(64)
    check(scq.cqe == 64, "%s: resized cqe %d" % (name, scq.cqe))
    wcs += poll(scq, 3)
    check([w.wr_id for w in wcs] == [20, 21, 22, 23],
          "%s: CQEs across resize %s" % (name, [w.wr_id for w in wcs]))
    try:
        scq.resize(1 << 17)
        check(False, "%s: resize above max_cqe" % name)
    except PyverbsRDMAError:
        pass
    qp.close()
    if ah:
        ah.close()
    scq.close()
    rcq.close()
    chan.close()


def srq(ctx, pd, mr, name, roce):
    s = SRQ(pd, SrqInitAttr(SrqAttr(max_wr=10, max_sge=1)))
    attr = s.query()
    check(attr.max_wr == 16, "%s: SRQ max_wr %d" % (name, attr.max_wr))
    s.modify(SrqAttr(srq_limit=4), e.IBV_SRQ_LIMIT)
    check(s.query().srq_limit == 4, "%s: SRQ limit" % name)
    try:
        s.modify(SrqAttr(max_wr=64), e.IBV_SRQ_MAX_WR)
        check(False, "%s: SRQ resize must fail" % name)
    except PyverbsRDMAError:
        pass
    for i in range(16):
        s.post_recv(RecvWR(wr_id=i, num_sge=1, sg=[SGE(mr.buf, 8, mr.lkey)]))
    cq = CQ(ctx, 8, None, None, 0)
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, srq=s,
                           cap=QPCap(max_send_wr=4, max_recv_wr=0,
                                     max_send_sge=1, max_recv_sge=0)))
    attr, init = qp.query(e.IBV_QP_CAP)
    check(init.cap.max_recv_wr == 0, "%s: no RQ on an SRQ" % name)
    to_rts(ctx, qp, roce)
    to_err(qp)
    check(quiet(cq), "%s: SRQ WRs are not flushed by a QP" % name)
    qp.close()
    cq.close()
    s.close()


def limits(ctx, pd, name):
    cq = CQ(ctx, 4, None, None, 0)
    for cap, what in ((QPCap(max_send_wr=(1 << 14) + 1), "send WRs"),
                      (QPCap(max_send_sge=33), "send SGEs"),
                      (QPCap(max_inline_data=513), "inline")):
        try:
            QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))
            check(False, "%s: %s above the limit accepted" % (name, what))
        except PyverbsRDMAError as err:
            check(err.error_code == 22, "%s: %s: errno %d" %
                  (name, what, err.error_code))
    cq.close()


def run(name, roce):
    ctx = Context(name=name)
    pd = PD(ctx)
    mr = MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
    qpts = [e.IBV_QPT_RC] + ([e.IBV_QPT_UD] if roce else [])
    for qpt in qpts:
        flush_and_events(ctx, pd, mr, qpt, roce, "%s/%d" % (name, qpt))
    if not roce:
        try:
            QP(pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=CQ(ctx, 4),
                              rcq=CQ(ctx, 4), cap=QPCap()))
            check(False, "%s: UD on iWARP accepted" % name)
        except PyverbsRDMAError:
            pass
    srq(ctx, pd, mr, name, roce)
    limits(ctx, pd, name)
    mr.close()
    pd.close()
    ctx.close()
    print(name, "done", flush=True)


run(sys.argv[1], True)
run(sys.argv[2], False)
print("queues_verbs: %d failed" % failures)
sys.exit(1 if failures else 0)
