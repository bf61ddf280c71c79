// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only kernel ULP for softrnic's queue objects (CQ, QP, SRQ), driven
 * through ib_core's kernel verbs exactly like a real ULP.  Not part of
 * softrnic.ko.  Loaded in the VM after devices exist:
 *
 *   insmod softrnic_qtest.ko roce=r0 iwarp=i0
 *
 * runs every test at load time, logs "qtest: FAIL ..." per failed check
 * and ends with "qtest: done: N checks, M failed"; the module then stays
 * loaded doing nothing (rmmod it).  Both devices must be named.  The QPs'
 * peers do not exist (on RoCE a made-up address nobody answers; an iWARP
 * QP moved to RTS by hand has no connection), so network WQEs stay
 * posted; the tests use local operations (REG_MR, LOCAL_INV) to get
 * successful completions and flushes to get the rest.
 *
 * No check waits for time to pass: an expected event is waited for with a
 * bound that fails the check, and "nothing (more) happened" is checked
 * behind a barrier: a later completion of the same queue, which the
 * driver produces in order, or for handler calls (which the CQ's tasklet
 * makes after the CQE is visible) ib_destroy_cq, which delivers every
 * call still owed before it returns.
 */
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/wait.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#define KTEST_NAME "qtest"
#include "ktest.h"

static char *roce = "";
module_param(roce, charp, 0444);
static char *iwarp = "";
module_param(iwarp, charp, 0444);

/* How long an expected event may take before its check fails. */
#define QT_WAIT_MS	2000

static atomic_t comp_calls, cq_err_events, qp_fatal_events, sq_drained_events;
static DECLARE_WAIT_QUEUE_HEAD(qt_events);

static void qt_comp(struct ib_cq *cq, void *ctx)
{
	atomic_inc(&comp_calls);
	wake_up(&qt_events);
}

static void qt_cq_event(struct ib_event *ev, void *ctx)
{
	if (ev->event == IB_EVENT_CQ_ERR)
		atomic_inc(&cq_err_events);
	wake_up(&qt_events);
}

static void qt_qp_event(struct ib_event *ev, void *ctx)
{
	if (ev->event == IB_EVENT_QP_FATAL)
		atomic_inc(&qp_fatal_events);
	if (ev->event == IB_EVENT_SQ_DRAINED)
		atomic_inc(&sq_drained_events);
	wake_up(&qt_events);
}

/* Until @count reaches @n; its value then, or at QT_WAIT_MS. */
static int qt_wait_count(atomic_t *count, int n)
{
	wait_event_timeout(qt_events, atomic_read(count) >= n,
			   msecs_to_jiffies(QT_WAIT_MS));
	return atomic_read(count);
}

struct qt {
	struct ib_device *dev;
	struct ib_pd *pd;
	bool roce;
};

static struct ib_cq *qt_cq(struct qt *t, int cqe)
{
	struct ib_cq_init_attr attr = { .cqe = cqe };

	return ib_create_cq(t->dev, qt_comp, qt_cq_event, NULL, &attr);
}

static struct ib_qp *qt_qp_full(struct qt *t, enum ib_qp_type type,
				struct ib_cq *scq, struct ib_cq *rcq,
				struct ib_srq *srq, u32 swr, u32 rwr,
				bool sig_all)
{
	struct ib_qp_init_attr init = {
		.event_handler = qt_qp_event,
		.send_cq = scq,
		.recv_cq = rcq,
		.srq = srq,
		.cap = {
			.max_send_wr = swr,
			.max_recv_wr = rwr,
			.max_send_sge = 2,
			.max_recv_sge = 2,
		},
		.sq_sig_type = sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR,
		.qp_type = type,
		.port_num = 1,
	};

	return ib_create_qp(t->pd, &init);
}

static struct ib_qp *qt_qp(struct qt *t, struct ib_cq *scq, struct ib_cq *rcq)
{
	return qt_qp_full(t, IB_QPT_RC, scq, rcq, NULL, 16, 16, false);
}

static int qt_modify(struct ib_qp *qp, struct ib_qp_attr *attr, int mask)
{
	return ib_modify_qp(qp, attr, mask);
}

static int qt_to_init(struct qt *t, struct ib_qp *qp)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE |
				   IB_ACCESS_REMOTE_READ,
		.port_num = 1,
	};

	if (!t->roce)
		return qt_modify(qp, &a, IB_QP_STATE | IB_QP_ACCESS_FLAGS);
	if (qp->qp_type == IB_QPT_UD) {
		a.qkey = 0x11111111;
		return qt_modify(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
				 IB_QP_PORT | IB_QP_QKEY);
	}
	return qt_modify(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
			 IB_QP_ACCESS_FLAGS);
}

static int qt_to_rtr(struct qt *t, struct ib_qp *qp)
{
	struct ib_qp_attr a = { .qp_state = IB_QPS_RTR };
	union ib_gid dgid = { .raw = { 0xfe, 0x80, [15] = 1 } };
	static const u8 dmac[ETH_ALEN] = { 2, 0, 0, 0, 0, 1 };

	if (!t->roce || qp->qp_type == IB_QPT_UD)
		return qt_modify(qp, &a, IB_QP_STATE);
	a.path_mtu = IB_MTU_4096;
	a.dest_qp_num = 0x42;
	a.rq_psn = 0x654321;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 12;
	a.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&a.ah_attr, 1);
	rdma_ah_set_grh(&a.ah_attr, &dgid, 0, 0, 64, 0);
	memcpy(a.ah_attr.roce.dmac, dmac, ETH_ALEN);
	return qt_modify(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			 IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			 IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
}

/* RTR -> RTS, with max_rd_atomic @rd_atomic. */
static int qt_rtr_to_rts(struct qt *t, struct ib_qp *qp, u8 rd_atomic)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_RTS,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 6,
		.sq_psn = 0x123456,
		.max_rd_atomic = rd_atomic,
	};

	if (!t->roce)
		return qt_modify(qp, &a, IB_QP_STATE);
	if (qp->qp_type == IB_QPT_UD)
		return qt_modify(qp, &a, IB_QP_STATE | IB_QP_SQ_PSN);
	return qt_modify(qp, &a, IB_QP_STATE | IB_QP_TIMEOUT |
			 IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			 IB_QP_MAX_QP_RD_ATOMIC);
}

static int qt_to_rts(struct qt *t, struct ib_qp *qp)
{
	int err;

	err = qt_to_init(t, qp);
	if (!err)
		err = qt_to_rtr(t, qp);
	if (!err)
		err = qt_rtr_to_rts(t, qp, 16);
	return err;
}

static enum ib_qp_state qt_state(struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr a;

	if (ib_query_qp(qp, &a, IB_QP_STATE, &init))
		return -1;
	return a.qp_state;
}

/* Poll until @want CQEs arrived or @ms passed; returns how many. */
static int qt_poll(struct ib_cq *cq, struct ib_wc *wc, int want, int ms)
{
	int got = 0, n;

	for (;;) {
		n = ib_poll_cq(cq, want - got, wc + got);
		if (n < 0)
			return n;
		got += n;
		if (got >= want || ms <= 0)
			return got;
		usleep_range(10000, 11000);
		ms -= 10;
	}
}

/* Until @qp is in @want, or QT_WAIT_MS; the state then. */
static enum ib_qp_state qt_wait_state(struct ib_qp *qp, enum ib_qp_state want)
{
	unsigned long end = jiffies + msecs_to_jiffies(QT_WAIT_MS);
	enum ib_qp_state st;

	while ((st = qt_state(qp)) != want && time_before(jiffies, end))
		usleep_range(1000, 2000);
	return st;
}

/* The next CQE of @cq is @wr_id (waited for), with nothing before it. */
static bool qt_next_is(struct ib_cq *cq, u64 wr_id)
{
	struct ib_wc wc;

	return qt_poll(cq, &wc, 1, QT_WAIT_MS) == 1 && wc.wr_id == wr_id;
}

static int qt_post_send(struct ib_qp *qp, enum ib_wr_opcode op, u64 wr_id,
			int flags)
{
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = wr_id,
			.opcode = op,
			.send_flags = flags,
		},
		.remote_addr = 0x1000,
		.rkey = 0x1234,
	};

	return ib_post_send(qp, &wr.wr, NULL);
}

static int qt_post_recv(struct ib_qp *qp, u64 wr_id)
{
	struct ib_recv_wr wr = { .wr_id = wr_id };

	return ib_post_recv(qp, &wr, NULL);
}

/* A fast-reg MR over one kernel page, for REG_MR / LOCAL_INV. */
struct qt_mr {
	struct ib_mr *mr;
	void *buf;
};

static int qt_mr_alloc(struct qt *t, struct qt_mr *m)
{
	struct scatterlist sg;
	int n;

	m->buf = kzalloc(PAGE_SIZE, GFP_KERNEL);
	if (!m->buf)
		return -ENOMEM;
	m->mr = ib_alloc_mr(t->pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(m->mr)) {
		kfree(m->buf);
		return PTR_ERR(m->mr);
	}
	sg_init_one(&sg, m->buf, PAGE_SIZE);
	sg_dma_address(&sg) = (uintptr_t)m->buf;
	sg_dma_len(&sg) = PAGE_SIZE;
	n = ib_map_mr_sg(m->mr, &sg, 1, NULL, PAGE_SIZE);
	return n == 1 ? 0 : -EINVAL;
}

static void qt_mr_free(struct qt_mr *m)
{
	ib_dereg_mr(m->mr);
	kfree(m->buf);
}

static int qt_reg(struct ib_qp *qp, struct qt_mr *m, u64 wr_id, int flags)
{
	struct ib_reg_wr wr = {
		.wr = {
			.wr_id = wr_id,
			.opcode = IB_WR_REG_MR,
			.send_flags = flags,
		},
		.mr = m->mr,
		.key = m->mr->rkey,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ,
	};

	return ib_post_send(qp, &wr.wr, NULL);
}

static int qt_inv(struct ib_qp *qp, u32 key, u64 wr_id, int flags)
{
	struct ib_send_wr wr = {
		.wr_id = wr_id,
		.opcode = IB_WR_LOCAL_INV,
		.send_flags = flags,
		.ex.invalidate_rkey = key,
	};

	return ib_post_send(qp, &wr, NULL);
}

/* ------------------------------------------------------------------ */

static void test_caps(struct qt *t)
{
	struct ib_cq *cq = qt_cq(t, 8);
	struct ib_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IB_QPT_RC,
		.cap = { .max_send_wr = 100, .max_recv_wr = 3,
			 .max_send_sge = 3, .max_recv_sge = 1,
			 .max_inline_data = 100 },
	};
	struct ib_qp_init_attr qinit;
	struct ib_qp_attr a;
	struct ib_qp *qp;

	CHECK(!IS_ERR(cq), "create_cq %ld", PTR_ERR(cq));
	if (IS_ERR(cq))
		return;
	CHECK(cq->cqe == 8, "cqe %d", cq->cqe);

	qp = ib_create_qp(t->pd, &init);
	CHECK(!IS_ERR(qp), "create_qp %ld", PTR_ERR(qp));
	if (!IS_ERR(qp)) {
		CHECK(init.cap.max_send_wr == 128, "%u", init.cap.max_send_wr);
		CHECK(init.cap.max_recv_wr == 4, "%u", init.cap.max_recv_wr);
		CHECK(init.cap.max_send_sge >= 3, "%u", init.cap.max_send_sge);
		CHECK(init.cap.max_recv_sge >= 1, "%u", init.cap.max_recv_sge);
		CHECK(init.cap.max_inline_data >= 100, "%u",
		      init.cap.max_inline_data);
		CHECK(qp->qp_num >= 2 && qp->qp_num < (1 << 24), "qpn %u",
		      qp->qp_num);
		CHECK(!ib_query_qp(qp, &a, IB_QP_CAP, &qinit), "query");
		CHECK(a.cap.max_send_wr == 128 && qinit.cap.max_recv_wr == 4,
		      "query caps %u %u", a.cap.max_send_wr,
		      qinit.cap.max_recv_wr);
		CHECK(a.qp_state == IB_QPS_RESET, "state %d", a.qp_state);
		ib_destroy_qp(qp);
	}

	init.cap.max_send_wr = (1 << 14) + 1;
	qp = ib_create_qp(t->pd, &init);
	CHECK(PTR_ERR(qp) == -EINVAL, "too many send WRs: %ld", PTR_ERR(qp));
	init.cap.max_send_wr = 4;
	init.cap.max_inline_data = 513;
	qp = ib_create_qp(t->pd, &init);
	CHECK(PTR_ERR(qp) == -EINVAL, "inline too big: %ld", PTR_ERR(qp));
	init.cap.max_inline_data = 0;
	init.cap.max_send_sge = 33;
	qp = ib_create_qp(t->pd, &init);
	CHECK(PTR_ERR(qp) == -EINVAL, "too many SGEs: %ld", PTR_ERR(qp));
	init.cap.max_send_sge = 1;
	init.cap.max_recv_wr = (1 << 14) + 1;
	qp = ib_create_qp(t->pd, &init);
	CHECK(PTR_ERR(qp) == -EINVAL, "too many recv WRs: %ld", PTR_ERR(qp));
	init.cap.max_recv_wr = 1;

	init.qp_type = IB_QPT_UD;
	qp = ib_create_qp(t->pd, &init);
	if (t->roce) {
		CHECK(!IS_ERR(qp), "UD on RoCE: %ld", PTR_ERR(qp));
		if (!IS_ERR(qp)) {
			CHECK(!qt_to_rts(t, qp), "UD to RTS");
			CHECK(!ib_query_qp(qp, &a, IB_QP_QKEY, &qinit) &&
			      a.qkey == 0x11111111, "qkey %x", a.qkey);
			ib_destroy_qp(qp);
		}
		init.qp_type = IB_QPT_GSI;
		init.port_num = 1;
		qp = ib_create_qp(t->pd, &init);
		CHECK(IS_ERR(qp), "a second QP1");
		if (!IS_ERR(qp))
			ib_destroy_qp(qp);
	} else {
		CHECK(PTR_ERR(qp) == -EOPNOTSUPP, "UD on iWARP: %ld",
		      PTR_ERR(qp));
	}
	ib_destroy_cq(cq);

	cq = qt_cq(t, (1 << 16) + 1);
	CHECK(PTR_ERR(cq) == -EINVAL, "CQ too big: %ld", PTR_ERR(cq));
	if (!IS_ERR(cq))
		ib_destroy_cq(cq);
}

static void test_states(struct qt *t)
{
	struct ib_cq *cq = qt_cq(t, 8);
	struct ib_qp_init_attr qinit;
	struct ib_wc wc[1];
	struct ib_qp_attr a = { .qp_state = IB_QPS_RTS };
	struct ib_qp *qp;
	int i;

	if (IS_ERR(cq))
		return;
	qp = qt_qp(t, cq, cq);
	CHECK(!IS_ERR(qp), "create_qp %ld", PTR_ERR(qp));
	if (IS_ERR(qp))
		goto out_cq;

	CHECK(qt_modify(qp, &a, IB_QP_STATE) == -EINVAL, "RESET->RTS");
	CHECK(qt_state(qp) == IB_QPS_RESET, "still RESET");
	CHECK(!qt_to_init(t, qp) && !qt_to_rtr(t, qp), "to RTR");
	if (t->roce) {
		/* A bad attribute fails the whole modify: still RTR. */
		CHECK(qt_rtr_to_rts(t, qp, 129) == -EINVAL, "rd_atomic 129");
		CHECK(qt_state(qp) == IB_QPS_RTR, "still RTR");
	}
	CHECK(!qt_rtr_to_rts(t, qp, 16), "to RTS");
	CHECK(qt_state(qp) == IB_QPS_RTS, "RTS");

	memset(&a, 0, sizeof(a));
	CHECK(!ib_query_qp(qp, &a, ~0, &qinit), "query");
	if (t->roce) {
		/* veth MTU 1500: RoCE active MTU 1024 caps the 4096 asked. */
		CHECK(a.path_mtu == IB_MTU_1024, "path_mtu %d", a.path_mtu);
		CHECK(a.timeout == 14 && a.retry_cnt == 7 && a.rnr_retry == 6,
		      "%u %u %u", a.timeout, a.retry_cnt, a.rnr_retry);
		CHECK(a.sq_psn == 0x123456 && a.rq_psn == 0x654321,
		      "psn %x %x", a.sq_psn, a.rq_psn);
		CHECK(a.dest_qp_num == 0x42, "dest %x", a.dest_qp_num);
		CHECK(a.max_rd_atomic == 16 && a.max_dest_rd_atomic == 16,
		      "rd_atomic %u %u", a.max_rd_atomic,
		      a.max_dest_rd_atomic);
		CHECK(a.min_rnr_timer == 12, "rnr timer %u", a.min_rnr_timer);
		CHECK(rdma_ah_get_ah_flags(&a.ah_attr) & IB_AH_GRH, "GRH");
		CHECK(a.ah_attr.grh.dgid.raw[15] == 1 &&
		      a.ah_attr.grh.hop_limit == 64, "dgid/hop");
		CHECK(a.ah_attr.roce.dmac[5] == 1, "dmac");
		CHECK(a.port_num == 1, "port %u", a.port_num);
	}
	CHECK(a.qp_access_flags ==
	      (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ),
	      "access %x", a.qp_access_flags);

	if (t->roce) {
		/* RTS->RTS may change the RNR timer, nothing on the path. */
		a.min_rnr_timer = 20;
		CHECK(!qt_modify(qp, &a, IB_QP_MIN_RNR_TIMER), "rnr timer");
		a.timeout = 3;
		CHECK(qt_modify(qp, &a, IB_QP_TIMEOUT) == -EINVAL,
		      "timeout in RTS->RTS");
		CHECK(!ib_query_qp(qp, &a, ~0, &qinit) &&
		      a.min_rnr_timer == 20 && a.timeout == 14,
		      "%u %u", a.min_rnr_timer, a.timeout);
	}

	/* SQD with notification: nothing in flight, so drained at once. */
	atomic_set(&sq_drained_events, 0);
	a.qp_state = IB_QPS_SQD;
	a.en_sqd_async_notify = 1;
	CHECK(!qt_modify(qp, &a, IB_QP_STATE |
			 (t->roce ? IB_QP_EN_SQD_ASYNC_NOTIFY : 0)), "to SQD");
	if (t->roce)
		CHECK(qt_wait_count(&sq_drained_events, 1) == 1, "SQ_DRAINED %d",
		      atomic_read(&sq_drained_events));
	a.qp_state = IB_QPS_RTS;
	CHECK(!qt_modify(qp, &a, IB_QP_STATE), "SQD->RTS");
	/*
	 * RESET takes the QP's unpolled CQEs along: the receives flushed by
	 * ERR must not be polled as completions of the QP's next life.
	 */
	CHECK(!qt_post_recv(qp, 500) && !qt_post_recv(qp, 501), "recvs");
	a.qp_state = IB_QPS_ERR;
	CHECK(!qt_modify(qp, &a, IB_QP_STATE), "to ERR");
	for (i = 0; i < QT_WAIT_MS && ib_req_notify_cq(cq, IB_CQ_NEXT_COMP |
				IB_CQ_REPORT_MISSED_EVENTS) <= 0; i++)
		usleep_range(1000, 2000);
	CHECK(i < QT_WAIT_MS, "flushed receives in the CQ");
	a.qp_state = IB_QPS_RESET;
	CHECK(!qt_modify(qp, &a, IB_QP_STATE), "to RESET");
	CHECK(ib_poll_cq(cq, 1, wc) == 0, "RESET purged the QP's CQEs");
	CHECK(!qt_to_rts(t, qp), "RESET->...->RTS again");
	/* Nor does one of them come late: the new life's flush comes first. */
	CHECK(!qt_post_recv(qp, 502), "recv");
	a.qp_state = IB_QPS_ERR;
	CHECK(!qt_modify(qp, &a, IB_QP_STATE), "to ERR again");
	CHECK(qt_next_is(cq, 502), "first CQE after RESET is the new life's");
	ib_destroy_qp(qp);
out_cq:
	ib_destroy_cq(cq);
}

static void test_post_rules_and_flush(struct qt *t)
{
	struct ib_cq *scq = qt_cq(t, 256), *rcq = qt_cq(t, 256);
	struct ib_sge sge = { .addr = 0x1000, .length = 8, .lkey = 0x100 };
	struct ib_sge sges[5] = { sge, sge, sge, sge, sge };
	const struct ib_send_wr *bad;
	struct ib_rdma_wr wrs[2];
	struct ib_wc *wc;
	struct ib_qp *qp;
	int i, n, err;

	wc = kcalloc(300, sizeof(*wc), GFP_KERNEL);
	if (IS_ERR(scq) || IS_ERR(rcq) || !wc)
		goto out;
	qp = qt_qp_full(t, IB_QPT_RC, scq, rcq, NULL, 128, 8, false);
	CHECK(!IS_ERR(qp), "create_qp %ld", PTR_ERR(qp));
	if (IS_ERR(qp))
		goto out;

	CHECK(qt_post_recv(qp, 1) == -EINVAL, "post_recv in RESET");
	CHECK(!qt_to_init(t, qp), "INIT");
	CHECK(qt_post_send(qp, IB_WR_SEND, 1, 0) == -EINVAL,
	      "post_send in INIT");
	for (i = 0; i < 8; i++)
		CHECK(!qt_post_recv(qp, 1000 + i), "recv %d", i);
	CHECK(qt_post_recv(qp, 2000) == -ENOMEM, "RQ full");
	CHECK(!qt_to_rtr(t, qp), "RTR");
	CHECK(!qt_rtr_to_rts(t, qp, 16), "RTS");

	/* Bad WRs: too many SGEs, inline on READ; bad_wr names them. */
	memset(wrs, 0, sizeof(wrs));
	wrs[0].wr.opcode = IB_WR_SEND;
	wrs[0].wr.wr_id = 0;
	wrs[0].wr.next = &wrs[1].wr;
	wrs[1].wr.opcode = IB_WR_SEND;
	wrs[1].wr.sg_list = sges;
	/* max_send_sge 2 is reported as 4: what a 128-byte slot holds. */
	wrs[1].wr.num_sge = 5;
	err = ib_post_send(qp, &wrs[0].wr, &bad);
	CHECK(err == -EINVAL && bad == &wrs[1].wr, "5 SGEs: %d", err);
	wrs[1].wr.num_sge = 1;
	wrs[1].wr.opcode = IB_WR_RDMA_READ;
	wrs[1].wr.send_flags = IB_SEND_INLINE;
	wrs[1].wr.wr_id = 1;
	err = ib_post_send(qp, &wrs[1].wr, &bad);
	CHECK(err == -EINVAL && bad == &wrs[1].wr, "inline READ: %d", err);
	wrs[1].wr.opcode = 0x77;
	wrs[1].wr.send_flags = 0;
	err = ib_post_send(qp, &wrs[1].wr, &bad);
	CHECK(err == -EINVAL && bad == &wrs[1].wr, "bad opcode: %d", err);

	/* Fill the SQ (nobody answers: the sends stay posted). */
	for (i = 1; i < 128; i++) {
		enum ib_wr_opcode op = i % 3 == 0 ? IB_WR_RDMA_WRITE :
				       i % 3 == 1 ? IB_WR_RDMA_READ : IB_WR_SEND;

		err = qt_post_send(qp, op, i, i % 2 ? IB_SEND_SIGNALED : 0);
		CHECK(!err, "send %d: %d", i, err);
	}
	wrs[1].wr.opcode = IB_WR_SEND;
	wrs[1].wr.wr_id = 128;
	err = ib_post_send(qp, &wrs[1].wr, &bad);
	CHECK(err == -ENOMEM && bad == &wrs[1].wr, "SQ full: %d", err);
	/*
	 * Nothing completed: the flushes below are all 128, in order, so a
	 * send completing before the flush (late or not) fails them.
	 */
	CHECK(ib_poll_cq(scq, 1, wc) == 0, "no completion without a peer");

	/* To ERR: everything flushes, signaled or not, in order. */
	{
		struct ib_qp_attr a = { .qp_state = IB_QPS_ERR };

		CHECK(!qt_modify(qp, &a, IB_QP_STATE), "to ERR");
	}
	n = qt_poll(scq, wc, 129, 500);
	CHECK(n == 128, "send flushes: %d", n);
	for (i = 0; i < n; i++) {
		enum ib_wc_opcode op = i == 0 ? IB_WC_SEND :
				       i % 3 == 0 ? IB_WC_RDMA_WRITE :
				       i % 3 == 1 ? IB_WC_RDMA_READ : IB_WC_SEND;

		CHECK(wc[i].wr_id == i && wc[i].status == IB_WC_WR_FLUSH_ERR &&
		      wc[i].opcode == op && wc[i].qp == qp,
		      "send flush %d: wr_id %llu status %d opcode %d", i,
		      wc[i].wr_id, wc[i].status, wc[i].opcode);
	}
	n = qt_poll(rcq, wc, 9, 200);
	CHECK(n == 8, "recv flushes: %d", n);
	for (i = 0; i < n; i++)
		CHECK(wc[i].wr_id == 1000 + i &&
		      wc[i].status == IB_WC_WR_FLUSH_ERR &&
		      wc[i].opcode == IB_WC_RECV && wc[i].qp == qp,
		      "recv flush %d: %llu %d %d", i, wc[i].wr_id,
		      wc[i].status, wc[i].opcode);

	/* Posted in ERR: accepted and flushed too. */
	CHECK(!qt_post_send(qp, IB_WR_SEND, 500, 0), "send in ERR");
	CHECK(!qt_post_send(qp, IB_WR_RDMA_WRITE, 501, 0), "send in ERR");
	CHECK(!qt_post_recv(qp, 600), "recv in ERR");
	n = qt_poll(scq, wc, 2, 500);
	CHECK(n == 2 && wc[0].wr_id == 500 && wc[1].wr_id == 501 &&
	      wc[1].opcode == IB_WC_RDMA_WRITE &&
	      wc[0].status == IB_WC_WR_FLUSH_ERR, "ERR sends: %d", n);
	n = qt_poll(rcq, wc, 1, 500);
	CHECK(n == 1 && wc[0].wr_id == 600 &&
	      wc[0].status == IB_WC_WR_FLUSH_ERR, "ERR recv: %d", n);
	/* Nothing more, not even late: markers posted now come next. */
	CHECK(!qt_post_send(qp, IB_WR_SEND, 502, 0) && !qt_post_recv(qp, 601),
	      "markers");
	CHECK(qt_next_is(scq, 502) && qt_next_is(rcq, 601), "nothing more");
	CHECK(atomic_read(&qp_fatal_events) == 0, "no QP_FATAL");
	ib_destroy_qp(qp);
out:
	kfree(wc);
	if (!IS_ERR(scq))
		ib_destroy_cq(scq);
	if (!IS_ERR(rcq))
		ib_destroy_cq(rcq);
}

static void test_local_ops(struct qt *t)
{
	struct ib_cq *cq = qt_cq(t, 16);
	struct ib_wc wc[4];
	struct qt_mr m;
	struct ib_qp *qp;
	int n;

	if (IS_ERR(cq))
		return;
	if (qt_mr_alloc(t, &m)) {
		CHECK(0, "fast-reg MR");
		goto out_cq;
	}
	qp = qt_qp(t, cq, cq);
	if (IS_ERR(qp) || qt_to_rts(t, qp)) {
		CHECK(0, "QP");
		goto out_mr;
	}

	CHECK(!qt_reg(qp, &m, 1, IB_SEND_SIGNALED), "REG_MR");
	n = qt_poll(cq, wc, 1, 500);
	CHECK(n == 1 && wc[0].wr_id == 1 && wc[0].status == IB_WC_SUCCESS &&
	      wc[0].opcode == IB_WC_REG_MR && wc[0].qp == qp,
	      "REG_MR CQE: n %d status %d opcode %d", n, wc[0].status,
	      wc[0].opcode);
	CHECK(!qt_inv(qp, m.mr->rkey, 2, IB_SEND_SIGNALED), "LOCAL_INV");
	n = qt_poll(cq, wc, 1, 500);
	CHECK(n == 1 && wc[0].wr_id == 2 && wc[0].status == IB_WC_SUCCESS &&
	      wc[0].opcode == IB_WC_LOCAL_INV, "LOCAL_INV CQE: %d %d %d", n,
	      wc[0].status, wc[0].opcode);

	/* Unsignaled successes are silent. */
	ib_update_fast_reg_key(m.mr, ib_inc_rkey(m.mr->rkey));
	CHECK(!qt_reg(qp, &m, 3, 0), "REG_MR unsignaled");
	CHECK(!qt_inv(qp, m.mr->rkey, 4, 0), "LOCAL_INV unsignaled");
	/* The signaled one after them completes first. */
	ib_update_fast_reg_key(m.mr, ib_inc_rkey(m.mr->rkey));
	CHECK(!qt_reg(qp, &m, 40, IB_SEND_SIGNALED), "REG_MR signaled");
	CHECK(qt_next_is(cq, 40), "no CQE for unsignaled successes");

	/*
	 * Invalidating a bad key fails: error CQE (even unsignaled), QP to
	 * ERR, not fatal.
	 */
	atomic_set(&qp_fatal_events, 0);
	CHECK(!qt_inv(qp, 0xdead00, 5, 0), "LOCAL_INV of a bad key");
	n = qt_poll(cq, wc, 1, 500);
	CHECK(n == 1 && wc[0].wr_id == 5 && wc[0].status != IB_WC_SUCCESS &&
	      wc[0].status != IB_WC_WR_FLUSH_ERR &&
	      wc[0].opcode == IB_WC_LOCAL_INV, "failed LOCAL_INV: %d %d", n,
	      wc[0].status);
	CHECK(qt_wait_state(qp, IB_QPS_ERR) == IB_QPS_ERR, "QP in ERR: %d",
	      qt_state(qp));
	CHECK(atomic_read(&qp_fatal_events) == 0, "error CQE is not fatal");
	ib_destroy_qp(qp);
out_mr:
	qt_mr_free(&m);
out_cq:
	ib_destroy_cq(cq);
}

static void test_sig_all_and_purge(struct qt *t)
{
	struct ib_cq *cq = qt_cq(t, 16);
	struct ib_qp *a, *b;
	struct ib_wc wc[8];
	struct qt_mr ma, mb;
	int n;

	if (IS_ERR(cq))
		return;
	if (qt_mr_alloc(t, &ma) || qt_mr_alloc(t, &mb)) {
		CHECK(0, "MRs");
		goto out_cq;
	}
	a = qt_qp_full(t, IB_QPT_RC, cq, cq, NULL, 8, 8, true);
	b = qt_qp(t, cq, cq);
	if (IS_ERR(a) || IS_ERR(b) || qt_to_rts(t, a) || qt_to_rts(t, b)) {
		CHECK(0, "QPs");
		goto out_mr;
	}
	/*
	 * IB_SIGNAL_ALL_WR: unsignaled WRs complete too.  Each CQE is known
	 * to be in the CQ, unpolled, when the handler armed for it ran.
	 */
	atomic_set(&comp_calls, 0);
	CHECK(!ib_req_notify_cq(cq, IB_CQ_NEXT_COMP) &&
	      !qt_reg(a, &ma, 10, 0) && qt_wait_count(&comp_calls, 1) == 1,
	      "A's REG_MR CQE");
	CHECK(!ib_req_notify_cq(cq, IB_CQ_NEXT_COMP) &&
	      !qt_inv(a, ma.mr->rkey, 11, 0) &&
	      qt_wait_count(&comp_calls, 2) == 2, "A's LOCAL_INV CQE");
	CHECK(!ib_req_notify_cq(cq, IB_CQ_NEXT_COMP) &&
	      !qt_reg(b, &mb, 20, IB_SEND_SIGNALED) &&
	      qt_wait_count(&comp_calls, 3) == 3, "B's CQE");
	/* Destroying A takes its CQEs out of the CQ. */
	ib_destroy_qp(a);
	n = ib_poll_cq(cq, 8, wc);
	CHECK(n == 1 && wc[0].wr_id == 20 && wc[0].qp == b,
	      "only B's CQE left: %d", n);
	ib_destroy_qp(b);
out_mr:
	qt_mr_free(&ma);
	qt_mr_free(&mb);
out_cq:
	ib_destroy_cq(cq);
	/* Every call owed was made before destroy returned: three, no more. */
	CHECK(atomic_read(&comp_calls) == 3, "handler calls: %d",
	      atomic_read(&comp_calls));
}

static void test_arm_overflow_resize(struct qt *t)
{
	struct ib_cq *cq = qt_cq(t, 4), *tiny = qt_cq(t, 1);
	struct ib_wc wc[8];
	struct qt_mr m;
	struct ib_qp *qp, *qp2;
	int n, i;

	if (IS_ERR(cq) || IS_ERR(tiny) || qt_mr_alloc(t, &m)) {
		CHECK(0, "setup");
		return;
	}
	qp = qt_qp(t, cq, cq);
	qp2 = qt_qp(t, tiny, tiny);
	if (IS_ERR(qp) || IS_ERR(qp2) || qt_to_rts(t, qp) ||
	    qt_to_rts(t, qp2)) {
		CHECK(0, "QPs");
		return;
	}

	/*
	 * A handler call comes after its CQE is visible, from the CQ's
	 * tasklet: the expected ones are waited for, and once the CQ is
	 * destroyed (below) the total must be exactly what was expected,
	 * so a wrong call fails even if it comes late.
	 */
	/* Not armed: no handler call. */
	atomic_set(&comp_calls, 0);
	CHECK(!qt_reg(qp, &m, 1, IB_SEND_SIGNALED), "reg");
	CHECK(!qt_inv(qp, m.mr->rkey, 2, IB_SEND_SIGNALED), "inv");
	CHECK(qt_poll(cq, wc, 2, QT_WAIT_MS) == 2, "CQEs");
	CHECK(atomic_read(&comp_calls) == 0, "unarmed: %d",
	      atomic_read(&comp_calls));
	/* Armed: exactly one call (3), then disarmed (4, 5). */
	CHECK(ib_req_notify_cq(cq, IB_CQ_NEXT_COMP) == 0, "arm");
	ib_update_fast_reg_key(m.mr, ib_inc_rkey(m.mr->rkey));
	CHECK(!qt_reg(qp, &m, 3, IB_SEND_SIGNALED), "reg");
	CHECK(qt_wait_count(&comp_calls, 1) == 1, "armed: %d",
	      atomic_read(&comp_calls));
	CHECK(!qt_inv(qp, m.mr->rkey, 4, IB_SEND_SIGNALED), "inv");
	ib_update_fast_reg_key(m.mr, ib_inc_rkey(m.mr->rkey));
	CHECK(!qt_reg(qp, &m, 5, IB_SEND_SIGNALED), "reg");
	n = qt_poll(cq, wc, 3, QT_WAIT_MS);
	CHECK(n == 3 && wc[0].wr_id == 3 && wc[2].wr_id == 5, "CQEs: %d", n);
	CHECK(atomic_read(&comp_calls) == 1, "one shot: %d",
	      atomic_read(&comp_calls));

	/*
	 * Three CQEs pending (wr_id 2, 3, 4 again), each known to be in the
	 * CQ when the handler armed for it ran; REPORT_MISSED_EVENTS (which
	 * arms too) says they are there.
	 */
	CHECK(ib_req_notify_cq(cq, IB_CQ_NEXT_COMP) == 0, "arm");
	CHECK(!qt_inv(qp, m.mr->rkey, 2, IB_SEND_SIGNALED), "inv");
	CHECK(qt_wait_count(&comp_calls, 2) == 2, "CQE 2: %d",
	      atomic_read(&comp_calls));
	CHECK(ib_req_notify_cq(cq, IB_CQ_NEXT_COMP |
			       IB_CQ_REPORT_MISSED_EVENTS) > 0, "missed");
	ib_update_fast_reg_key(m.mr, ib_inc_rkey(m.mr->rkey));
	CHECK(!qt_reg(qp, &m, 3, IB_SEND_SIGNALED), "reg");
	CHECK(qt_wait_count(&comp_calls, 3) == 3, "CQE 3: %d",
	      atomic_read(&comp_calls));
	CHECK(ib_req_notify_cq(cq, IB_CQ_NEXT_COMP) == 0, "arm");
	CHECK(!qt_inv(qp, m.mr->rkey, 4, IB_SEND_SIGNALED), "inv");
	CHECK(qt_wait_count(&comp_calls, 4) == 4, "CQE 4: %d",
	      atomic_read(&comp_calls));

	/* Resize with them pending: all survive, in order. */
	CHECK(!ib_resize_cq(cq, 8), "resize to 8");
	CHECK(cq->cqe == 8, "cqe %d", cq->cqe);
	CHECK(ib_resize_cq(cq, 2), "resize below the pending count");
	n = qt_poll(cq, wc, 8, 100);
	CHECK(n == 3, "after resize: %d", n);
	for (i = 0; i < n; i++)
		CHECK(wc[i].wr_id == i + 2 && wc[i].status == IB_WC_SUCCESS,
		      "order %d: %llu", i, wc[i].wr_id);
	CHECK(!ib_resize_cq(cq, 2) && cq->cqe == 2, "shrink when empty");

	/* Solicited-only arm: successes do not wake (5, 6) ... */
	CHECK(ib_req_notify_cq(cq, IB_CQ_SOLICITED) == 0, "arm solicited");
	ib_update_fast_reg_key(m.mr, ib_inc_rkey(m.mr->rkey));
	CHECK(!qt_reg(qp, &m, 5, IB_SEND_SIGNALED), "reg");
	CHECK(!qt_inv(qp, m.mr->rkey, 6, IB_SEND_SIGNALED), "inv");
	CHECK(qt_poll(cq, wc, 2, QT_WAIT_MS) == 2, "CQEs");
	CHECK(atomic_read(&comp_calls) == 4, "success vs solicited: %d",
	      atomic_read(&comp_calls));
	/* ... errors do (the MR registered again for the overflow below). */
	ib_update_fast_reg_key(m.mr, ib_inc_rkey(m.mr->rkey));
	CHECK(!qt_reg(qp, &m, 61, 0), "reg");
	CHECK(!qt_inv(qp, 0xdead00, 60, IB_SEND_SIGNALED), "bad inv");
	CHECK(qt_poll(cq, wc, 1, QT_WAIT_MS) == 1 &&
	      wc[0].status != IB_WC_SUCCESS, "error CQE");
	CHECK(qt_wait_count(&comp_calls, 5) == 5, "error wakes solicited: %d",
	      atomic_read(&comp_calls));

	/*
	 * Overflow: a 1-entry CQ takes one CQE (7), then goes to error (8,
	 * on the same SQ, so after 7).
	 */
	atomic_set(&cq_err_events, 0);
	CHECK(!qt_inv(qp2, m.mr->rkey, 7, IB_SEND_SIGNALED), "inv");
	ib_update_fast_reg_key(m.mr, ib_inc_rkey(m.mr->rkey));
	CHECK(!qt_reg(qp2, &m, 8, IB_SEND_SIGNALED), "reg");
	CHECK(qt_wait_count(&cq_err_events, 1) == 1, "CQ_ERR: %d",
	      atomic_read(&cq_err_events));
	n = qt_poll(tiny, wc, 4, 50);
	CHECK(n == 1 && wc[0].wr_id == 7, "first CQE kept: %d", n);

	ib_destroy_qp(qp);
	ib_destroy_qp(qp2);
	qt_mr_free(&m);
	ib_destroy_cq(cq);
	ib_destroy_cq(tiny);
	/* Calls still owed came before destroy returned: none was wrong. */
	CHECK(atomic_read(&comp_calls) == 5, "handler calls in all: %d",
	      atomic_read(&comp_calls));
}

static void test_srq(struct qt *t)
{
	struct ib_srq_init_attr init = {
		.attr = { .max_wr = 10, .max_sge = 2 },
		.srq_type = IB_SRQT_BASIC,
	};
	struct ib_recv_wr wrs[17];
	const struct ib_recv_wr *bad;
	struct ib_srq_attr a;
	struct ib_cq *cq;
	struct ib_srq *srq;
	struct ib_qp *qp;
	int i, err;

	srq = ib_create_srq(t->pd, &init);
	CHECK(!IS_ERR(srq), "create_srq %ld", PTR_ERR(srq));
	if (IS_ERR(srq))
		return;
	CHECK(init.attr.max_wr == 16 && init.attr.max_sge >= 2, "caps %u %u",
	      init.attr.max_wr, init.attr.max_sge);
	CHECK(!ib_query_srq(srq, &a) && a.max_wr == 16 && a.srq_limit == 0,
	      "query");
	a.max_wr = 32;
	CHECK(ib_modify_srq(srq, &a, IB_SRQ_MAX_WR) == -EOPNOTSUPP, "resize");
	a.srq_limit = 5;
	CHECK(!ib_modify_srq(srq, &a, IB_SRQ_LIMIT), "limit");
	CHECK(!ib_query_srq(srq, &a) && a.srq_limit == 5, "limit %u",
	      a.srq_limit);
	a.srq_limit = 17;
	CHECK(ib_modify_srq(srq, &a, IB_SRQ_LIMIT) == -EINVAL, "limit 17");

	memset(wrs, 0, sizeof(wrs));
	for (i = 0; i < 17; i++) {
		wrs[i].wr_id = i;
		wrs[i].next = i < 16 ? &wrs[i + 1] : NULL;
	}
	err = ib_post_srq_recv(srq, wrs, &bad);
	CHECK(err == -ENOMEM && bad == &wrs[16], "SRQ full: %d", err);

	cq = qt_cq(t, 8);
	if (IS_ERR(cq))
		goto out;
	qp = qt_qp_full(t, IB_QPT_RC, cq, cq, srq, 4, 4, false);
	CHECK(!IS_ERR(qp), "QP on SRQ: %ld", PTR_ERR(qp));
	if (!IS_ERR(qp)) {
		struct ib_qp_attr qa = { .qp_state = IB_QPS_ERR };

		CHECK(!qt_to_rts(t, qp), "RTS");
		CHECK(qt_post_recv(qp, 1) == -EINVAL, "post_recv on SRQ QP");
		CHECK(!qt_modify(qp, &qa, IB_QP_STATE), "ERR");
		/* A send posted now is flushed after whatever ERR flushed. */
		CHECK(!qt_post_send(qp, IB_WR_SEND, 100, 0), "send in ERR");
		CHECK(qt_next_is(cq, 100), "SRQ WRs are not flushed");
		ib_destroy_qp(qp);
	}
	ib_destroy_cq(cq);
	/* ... nor taken: the SRQ is still full. */
	CHECK(ib_post_srq_recv(srq, &wrs[16], &bad) == -ENOMEM,
	      "SRQ still full");
out:
	ib_destroy_srq(srq);
}

static void test_drain(struct qt *t)
{
	struct ib_cq *scq, *rcq;
	struct ib_qp *qp;
	int i;

	scq = ib_alloc_cq(t->dev, NULL, 64, 0, IB_POLL_DIRECT);
	rcq = ib_alloc_cq(t->dev, NULL, 64, 0, IB_POLL_WORKQUEUE);
	if (IS_ERR(scq) || IS_ERR(rcq)) {
		CHECK(0, "alloc_cq");
		return;
	}
	qp = qt_qp(t, scq, rcq);
	if (IS_ERR(qp) || qt_to_rts(t, qp)) {
		CHECK(0, "QP");
		return;
	}
	/* wr_id 0: no wr_cqe, so ib_core's poller just drops the flush. */
	for (i = 0; i < 3; i++)
		CHECK(!qt_post_send(qp, IB_WR_SEND, 0, IB_SEND_SIGNALED),
		      "send");
	/* ib_drain_qp: ERR, then a marker WR on each queue, flushed. */
	ib_drain_qp(qp);
	CHECK(qt_state(qp) == IB_QPS_ERR, "drained QP in ERR");
	ib_destroy_qp(qp);
	ib_free_cq(scq);
	ib_free_cq(rcq);
}

static void run_device(const char *name, bool is_roce)
{
	struct qt t = { .roce = is_roce };
	int before = atomic_read(&failures);

	if (!name || !*name) {
		CHECK(0, "no %s device named (module parameter %s=)",
		      is_roce ? "RoCE" : "iWARP", is_roce ? "roce" : "iwarp");
		return;
	}
	t.dev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (!t.dev) {
		CHECK(0, "no device %s", name);
		return;
	}
	t.pd = ib_alloc_pd(t.dev, 0);
	if (IS_ERR(t.pd)) {
		CHECK(0, "alloc_pd %ld", PTR_ERR(t.pd));
		goto out;
	}
	test_caps(&t);
	test_states(&t);
	test_post_rules_and_flush(&t);
	test_local_ops(&t);
	test_sig_all_and_purge(&t);
	test_arm_overflow_resize(&t);
	test_srq(&t);
	test_drain(&t);
	ib_dealloc_pd(t.pd);
out:
	pr_info("qtest: %s: %d failed\n", name, atomic_read(&failures) - before);
	ib_device_put(t.dev);
}

static int __init qtest_init(void)
{
	run_device(roce, true);
	run_device(iwarp, false);
	ktest_done();
	return 0;
}

static void __exit qtest_exit(void)
{
}

module_init(qtest_init);
module_exit(qtest_exit);
MODULE_DESCRIPTION("softrnic queue objects: kernel-verbs test (test only)");
MODULE_LICENSE("GPL");
