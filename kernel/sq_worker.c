// SPDX-License-Identifier: GPL-2.0
/*
 * The send queue consumer, run by the QP's work item (qp_state.c) in
 * RTS: it fetches WQEs from the SQ ring in order, runs local operations
 * itself and hands network operations to the wire; and the in-order
 * completion of SQ WQEs.
 *
 * Fetching (qp->mutex): sq_next is the next WQE to read.  The worker
 * reads prod once per pass, checks it against its own counters, copies
 * the WQE (header, then SGEs or inline data, bounded by the validated
 * header) into qp->sq_wqe and uses only that copy.  A WQE that was
 * fetched but not yet taken (the wire said -EAGAIN, a fence holds it)
 * stays in the copy (sq_pending) and is never read from the ring again.
 *
 * Completion (qp->sq_lock): WQEs in [sq_cons, sq_next) are in flight and
 * described by qp->sq_shadow.  softrnic_sq_complete() marks one done;
 * the done prefix then retires in order: a CQE if it is signaled or
 * failed, and sq_cons (published as the ring's cons) moves on, which is
 * what frees slots for the producer.
 *
 * Doorbell (softrnic-abi.h): KERNEL_ACTIVE is set while the worker owns
 * the SQ.  It is cleared only when the SQ is empty, followed by a full
 * fence and another look at prod; while the worker is stalled (no wire
 * transport, wire busy, fence) it stays set, because whatever unblocks the SQ
 * kicks the worker, which looks at prod again.
 */
#include "queue.h"
#include "mem.h"

/* WQEs per run of the work item before it yields the CPU. */
#define SOFTRNIC_SQ_BUDGET	64

enum softrnic_sq_step {
	SOFTRNIC_SQ_TAKEN,		/* WQE consumed; go on */
	SOFTRNIC_SQ_STALL,		/* cannot go on now */
	SOFTRNIC_SQ_FAILED,		/* QP is going to the error state */
};

void softrnic_qp_kick(struct softrnic_qp *qp)
{
	queue_work(softrnic_queue_wq(qp->sdev), &qp->work);
}

void softrnic_qp_error_mark(struct softrnic_qp *qp, bool fatal)
{
	set_bit(fatal ? SOFTRNIC_QP_FATAL_PENDING : SOFTRNIC_QP_ERR_PENDING,
		&qp->flags);
}

bool softrnic_qp_error_pending(const struct softrnic_qp *qp)
{
	return test_bit(SOFTRNIC_QP_ERR_PENDING, &qp->flags) ||
	       test_bit(SOFTRNIC_QP_FATAL_PENDING, &qp->flags);
}

void softrnic_qp_error(struct softrnic_qp *qp, bool fatal)
{
	softrnic_qp_error_mark(qp, fatal);
	softrnic_qp_kick(qp);
}

/* Retire the done prefix of the in-flight WQEs; sq_lock held. */
void softrnic_sq_retire(struct softrnic_qp *qp)
{
	struct softrnic_cqe cqe = {};
	struct softrnic_sq_shadow *sh;
	u32 start = qp->sq_cons;

	lockdep_assert_held(&qp->sq_lock);
	while (qp->sq_cons != qp->sq_next) {
		sh = &qp->sq_shadow[sr_ring_slot(qp->sq_cons,
						 qp->sq.num_slots)];
		if (!sh->done)
			break;
		sh->done = 0;
		qp->sq_cons++;
		if (sh->status != IB_WC_SUCCESS ||
		    (sh->flags & SOFTRNIC_WQE_F_SIGNALED)) {
			cqe.wr_id = sh->wr_id;
			cqe.status = sh->status;
			cqe.opcode = sr_wc_opcode_of_sqe(sh->opcode);
			cqe.byte_len = sh->byte_len;
			cqe.qp_num = qp->ibqp.qp_num;
			/*
			 * The slot is free before its CQE is visible: a
			 * consumer that polls the CQE and posts at once (a
			 * depth-1 SQ) must find room, even while the wire
			 * completes from another CPU.
			 */
			softrnic_ring_store_cons(&qp->sq, qp->sq_cons);
			softrnic_cq_post(softrnic_qp_scq(qp), &cqe, false);
		}
	}
	if (qp->sq_cons == start)
		return;
	softrnic_ring_store_cons(&qp->sq, qp->sq_cons);
	if (qp->sq_cons != qp->sq_next)
		return;
	/* The SQ has no WQE in flight any more. */
	if (qp->sq_fence_wait) {
		qp->sq_fence_wait = false;
		softrnic_qp_kick(qp);
	}
	if (qp->sqd_notify && softrnic_qp_state(qp) == IB_QPS_SQD) {
		qp->sqd_notify = false;
		set_bit(SOFTRNIC_QP_EV_SQ_DRAINED, &qp->flags);
		softrnic_qp_kick(qp);
	}
}

void softrnic_sq_complete(struct softrnic_qp *qp, u32 index,
			  enum ib_wc_status status, u32 byte_len)
{
	struct softrnic_sq_shadow *sh;
	unsigned long flags;
	bool stale;

	spin_lock_irqsave(&qp->sq_lock, flags);
	sh = &qp->sq_shadow[sr_ring_slot(index, qp->sq.num_slots)];
	stale = !sr_counter_in(index, qp->sq_cons, qp->sq_next) || sh->done;
	if (!stale) {
		/* In ERR (for query_qp) before the error CQE can be polled. */
		if (status != IB_WC_SUCCESS && status != IB_WC_WR_FLUSH_ERR)
			softrnic_qp_error_mark(qp, false);
		sh->done = 1;
		sh->status = status;
		sh->byte_len = byte_len;
		softrnic_sq_retire(qp);
	}
	spin_unlock_irqrestore(&qp->sq_lock, flags);

	if (!stale && status != IB_WC_SUCCESS && status != IB_WC_WR_FLUSH_ERR)
		softrnic_qp_error(qp, false);
}

/* WQE sq_next becomes in flight; returns its index. */
static u32 softrnic_sq_start(struct softrnic_qp *qp,
			     const struct softrnic_swqe *wqe)
{
	struct softrnic_sq_shadow *sh;
	unsigned long flags;
	u32 index;

	spin_lock_irqsave(&qp->sq_lock, flags);
	index = qp->sq_next;
	sh = &qp->sq_shadow[sr_ring_slot(index, qp->sq.num_slots)];
	sh->wr_id = wqe->sqe.wr_id;
	sh->opcode = wqe->sqe.opcode;
	sh->flags = wqe->sqe.flags;
	if (qp->sig_all)
		sh->flags |= SOFTRNIC_WQE_F_SIGNALED;
	sh->byte_len = 0;
	sh->status = IB_WC_SUCCESS;
	sh->done = 0;
	qp->sq_next = index + 1;
	qp->sq_pending = false;
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	return index;
}

/* The wire refused the WQE it was just offered (-EAGAIN). */
static void softrnic_sq_unstart(struct softrnic_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq_lock, flags);
	qp->sq_next--;
	qp->sq_pending = true;
	spin_unlock_irqrestore(&qp->sq_lock, flags);
}

/*
 * Copy WQE sq_next out of the ring and validate it.  The header is read
 * exactly once; the payload length comes from the validated copy and is
 * bounded by both the slot and struct softrnic_swqe.
 */
static int softrnic_sq_fetch(struct softrnic_qp *qp,
			     struct softrnic_swqe *wqe)
{
	const void *slot = softrnic_ring_slot(&qp->sq, qp->sq_next);
	const void *payload = slot + sizeof(wqe->sqe);
	u8 kflags = 0;
	u32 len;

	memcpy(&wqe->sqe, slot, sizeof(wqe->sqe));
	wqe->index = qp->sq_next;

	/* Our own REG_MR WQE in a ring no process can see. */
	if (!qp->user && wqe->sqe.opcode == SOFTRNIC_WR_REG_MR)
		return qp->kind == SR_QP_RC ? 0 : -EINVAL;

	/* post.c's own flag on a kernel READ, past the ring's check */
	if (!qp->user && wqe->sqe.opcode == SOFTRNIC_WR_RDMA_READ) {
		kflags = wqe->sqe.flags & SOFTRNIC_WQE_F_KREAD_INV;
		wqe->sqe.flags &= ~kflags;
	}
	if (sr_sqe_check(&wqe->sqe, &qp->sq_lim) != SR_WQE_OK)
		return -EINVAL;
	wqe->sqe.flags |= kflags;
	if (wqe->sqe.flags & SOFTRNIC_WQE_F_INLINE) {
		len = sr_sqe_inline_len(&wqe->sqe, qp->kind);
		memcpy(wqe->inline_data, payload, len);
	} else {
		memcpy(wqe->sge, payload,
		       wqe->sqe.num_sge * sizeof(struct softrnic_sge));
	}
	return 0;
}

/* Fenced local WQEs wait for everything before them; sq_lock decides. */
static bool softrnic_sq_fenced(struct softrnic_qp *qp)
{
	unsigned long flags;
	bool wait;

	spin_lock_irqsave(&qp->sq_lock, flags);
	wait = qp->sq_cons != qp->sq_next;
	qp->sq_fence_wait = wait;
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	return wait;
}

static enum ib_wc_status softrnic_sq_local(struct softrnic_qp *qp,
					   const struct softrnic_swqe *wqe)
{
	struct softrnic_pd *pd = to_spd(qp->ibqp.pd);
	const struct softrnic_sqe_kreg *kreg;
	int err;

	switch (wqe->sqe.opcode) {
	case SOFTRNIC_WR_LOCAL_INV:
		err = softrnic_mem_invalidate(&qp->ibqp, wqe->sqe.ex);
		return err ? softrnic_mem_wc_status(err, false) : IB_WC_SUCCESS;
	case SOFTRNIC_WR_REG_MR:
		kreg = (const struct softrnic_sqe_kreg *)wqe->sqe.raw;
		err = softrnic_mr_fast_reg(pd, kreg->mr, kreg->key,
					   kreg->access);
		return err ? softrnic_mem_wc_status(err, false) : IB_WC_SUCCESS;
	case SOFTRNIC_WR_BIND_MW:
		return softrnic_mw_bind(qp, &wqe->sqe);
	default:
		return IB_WC_LOC_QP_OP_ERR;
	}
}

static enum softrnic_sq_step softrnic_sq_step(struct softrnic_qp *qp)
{
	int (*xmit)(struct softrnic_qp *qp, const struct softrnic_swqe *wqe);
	struct softrnic_swqe *wqe = qp->sq_wqe;
	enum ib_wc_status status;
	u32 index;
	int ret;

	if (!qp->sq_pending) {
		if (softrnic_sq_fetch(qp, wqe)) {
			/* Complete the bad WQE itself, then the QP is dead. */
			index = softrnic_sq_start(qp, wqe);
			softrnic_sq_complete(qp, index, IB_WC_LOC_QP_OP_ERR, 0);
			ibdev_dbg(qp->ibqp.device,
				  "QP %u: invalid send WQE %u\n",
				  qp->ibqp.qp_num, index);
			softrnic_qp_error(qp, true);
			return SOFTRNIC_SQ_FAILED;
		}
		qp->sq_pending = true;
	}

	if (sr_sqe_is_local(wqe->sqe.opcode)) {
		if ((wqe->sqe.flags & SOFTRNIC_WQE_F_FENCE) &&
		    softrnic_sq_fenced(qp))
			return SOFTRNIC_SQ_STALL;
		index = softrnic_sq_start(qp, wqe);
		status = softrnic_sq_local(qp, wqe);
		softrnic_sq_complete(qp, index, status, 0);
		return status == IB_WC_SUCCESS ? SOFTRNIC_SQ_TAKEN :
						 SOFTRNIC_SQ_FAILED;
	}

	xmit = qp->sdev->wire->sq_xmit;
	index = softrnic_sq_start(qp, wqe);
	ret = xmit(qp, wqe);
	if (ret == -EAGAIN) {
		softrnic_sq_unstart(qp);
		return SOFTRNIC_SQ_STALL;
	}
	if (ret) {
		softrnic_sq_complete(qp, index,
				     ret > 0 ? ret : IB_WC_LOC_QP_OP_ERR, 0);
		return SOFTRNIC_SQ_FAILED;
	}
	return SOFTRNIC_SQ_TAKEN;
}

/*
 * The SQ's prod, read once and checked: within the ring, and never
 * behind a prod read before (sq_prod_seen).  An honest producer only
 * moves it forward; one that moves it back has corrupted its ring (and
 * could otherwise keep the worker looking forever), so the QP goes to
 * ERR with IB_EVENT_QP_FATAL.  qp->mutex held.
 */
static bool softrnic_sq_load_prod(struct softrnic_qp *qp, u32 *prod)
{
	struct softrnic_ring *sq = &qp->sq;
	u32 p = softrnic_ring_load_prod(sq);

	if (!sr_ring_sane_fetch(p, qp->sq_next, qp->sq_cons, sq->num_slots) ||
	    (s32)(p - qp->sq_prod_seen) < 0) {
		ibdev_dbg(qp->ibqp.device,
			  "QP %u: SQ producer index %u out of range or moved back from %u\n",
			  qp->ibqp.qp_num, p, qp->sq_prod_seen);
		softrnic_qp_error(qp, true);
		return false;
	}
	qp->sq_prod_seen = p;
	*prod = p;
	return true;
}

/*
 * Consume the SQ of a QP in RTS; qp->mutex held.  Returns true if the
 * budget ran out and the worker should run again.  Every look at prod
 * costs budget, also the one before going idle: prod is the process's to
 * write, and a process moving it to and fro must not keep us here.
 */
bool softrnic_sq_drain(struct softrnic_qp *qp)
{
	struct softrnic_ring *sq = &qp->sq;
	unsigned int budget = SOFTRNIC_SQ_BUDGET;
	enum softrnic_sq_step step;
	u32 prod;

	lockdep_assert_held(&qp->mutex);
	softrnic_ring_kflags(sq, SOFTRNIC_KFLAG_KERNEL_ACTIVE, 0);
	for (;;) {
		if (!softrnic_sq_load_prod(qp, &prod))
			return false;
		while (qp->sq_next != prod) {
			if (!budget--)
				return true;
			step = softrnic_sq_step(qp);
			if (step != SOFTRNIC_SQ_TAKEN)
				return false;
		}
		/* Empty: go idle, but only after one more look at prod. */
		softrnic_ring_kflags(sq, 0, SOFTRNIC_KFLAG_KERNEL_ACTIVE);
		if (softrnic_ring_load_prod(sq) == qp->sq_next)
			return false;
		softrnic_ring_kflags(sq, SOFTRNIC_KFLAG_KERNEL_ACTIVE, 0);
		if (!budget--)
			return true;
	}
}
