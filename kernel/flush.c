// SPDX-License-Identifier: GPL-2.0
/*
 * Flushing (ERR) and discarding (RESET) the work queues of a QP.  Both
 * run with qp->mutex held, so the SQ worker is not fetching meanwhile.
 *
 * Flush: every posted send WQE completes on the send CQ and every posted
 * receive WQE of the QP's own RQ on the receive CQ, with
 * IB_WC_WR_FLUSH_ERR, its wr_id, the opcode class of the WR and the QP's
 * number, whether signaled or not.  In-flight send WQEs that the wire
 * already completed keep their status; their CQEs come first, in SQ
 * order.  SRQ WQEs belong to the SRQ and are never flushed by a QP.
 *
 * WRs posted while the QP is in ERR are flushed by the next run of the
 * QP's worker.  Kernel post_send/post_recv and the user SQ doorbell kick
 * it; a process posting receives writes the ring only, sees
 * SOFTRNIC_KFLAG_ERROR in the RQ's kflags and then rings the doorbell
 * with an empty post_recv (Documentation/ring-abi.md).  Every
 * modify_qp to ERR flushes as well.
 *
 * Only the header of a WQE is read here, once, for wr_id and opcode; a
 * producer counter that no honest producer can have written leaves the
 * unfetched WQEs where they are (there is no way to tell what they are).
 */
#include "queue.h"

/* WQEs flushed per hold of the queue's lock (interrupts are off). */
#define SOFTRNIC_FLUSH_BATCH	64

static void softrnic_sq_flush(struct softrnic_qp *qp)
{
	struct softrnic_ring *sq = &qp->sq;
	struct softrnic_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.qp_num = qp->ibqp.qp_num,
	};
	struct softrnic_sq_shadow *sh;
	struct softrnic_sqe hdr;
	unsigned long flags;
	u32 c, n, prod;

	/* Not draining any more: fully ordered before the load of prod. */
	softrnic_ring_kflags(sq, 0, SOFTRNIC_KFLAG_KERNEL_ACTIVE);

	spin_lock_irqsave(&qp->sq_lock, flags);
	/* In flight: whatever the wire has not completed is flushed. */
	for (c = qp->sq_cons; c != qp->sq_next; c++) {
		sh = &qp->sq_shadow[sr_ring_slot(c, sq->num_slots)];
		if (!sh->done) {
			sh->done = 1;
			sh->status = IB_WC_WR_FLUSH_ERR;
			sh->byte_len = 0;
		}
	}
	softrnic_sq_retire(qp);

	/*
	 * Not yet fetched: prod is read once, the WQEs are completed in
	 * batches.  Between batches nothing is in flight (sq_cons ==
	 * sq_next), so a late completion from the wire finds nothing.
	 */
	prod = softrnic_ring_load_prod(sq);
	if (!sr_ring_sane_fetch(prod, qp->sq_next, qp->sq_cons,
				sq->num_slots)) {
		spin_unlock_irqrestore(&qp->sq_lock, flags);
		return;
	}
	c = qp->sq_next;
	for (;;) {
		for (n = 0; c != prod && n < SOFTRNIC_FLUSH_BATCH; n++, c++) {
			if (c == qp->sq_next && qp->sq_pending)
				hdr = qp->sq_wqe->sqe;
			else
				memcpy(&hdr, softrnic_ring_slot(sq, c),
				       sizeof(hdr));
			cqe.wr_id = hdr.wr_id;
			cqe.opcode = sr_wc_opcode_of_sqe(hdr.opcode);
			softrnic_cq_post(softrnic_qp_scq(qp), &cqe, false);
		}
		qp->sq_next = c;
		qp->sq_prod_seen = c;
		qp->sq_cons = c;
		qp->sq_pending = false;
		qp->sq_fence_wait = false;
		softrnic_ring_store_cons(sq, c);
		spin_unlock_irqrestore(&qp->sq_lock, flags);
		if (c == prod)
			return;
		cond_resched();
		spin_lock_irqsave(&qp->sq_lock, flags);
	}
}

static void softrnic_rq_flush(struct softrnic_qp *qp)
{
	struct softrnic_ring *rq = &qp->rq;
	struct softrnic_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = SOFTRNIC_WC_RECV,
		.qp_num = qp->ibqp.qp_num,
	};
	struct softrnic_rqe hdr;
	unsigned long flags;
	u32 n, prod;
	bool done;

	if (!rq->num_slots)
		return;		/* on an SRQ */
	spin_lock_irqsave(&qp->rq_lock, flags);
	prod = softrnic_ring_load_prod(rq);
	if (!sr_ring_sane(prod, qp->rq_cons, rq->num_slots)) {
		spin_unlock_irqrestore(&qp->rq_lock, flags);
		return;
	}
	for (;;) {
		/*
		 * The wire may take a WQE between batches (it should not in
		 * ERR, but then it completes that one itself): stop at prod
		 * as read above, or wherever the consumer already is.
		 */
		for (n = 0; n < SOFTRNIC_FLUSH_BATCH &&
		     sr_counter_in(qp->rq_cons, prod - rq->num_slots, prod);
		     n++, qp->rq_cons++) {
			memcpy(&hdr, softrnic_ring_slot(rq, qp->rq_cons),
			       sizeof(hdr));
			cqe.wr_id = hdr.wr_id;
			softrnic_cq_post(softrnic_qp_rcq(qp), &cqe, false);
		}
		softrnic_ring_store_cons(rq, qp->rq_cons);
		done = n < SOFTRNIC_FLUSH_BATCH;
		spin_unlock_irqrestore(&qp->rq_lock, flags);
		if (done)
			return;
		cond_resched();
		spin_lock_irqsave(&qp->rq_lock, flags);
	}
}

void softrnic_qp_flush(struct softrnic_qp *qp)
{
	lockdep_assert_held(&qp->mutex);
	softrnic_sq_flush(qp);
	softrnic_rq_flush(qp);
}

/*
 * To RESET: every posted WQE goes away without a completion.  The
 * counters stay free-running; the kernel consumes up to the producer.
 * Completions the wire still reports for in-flight WQEs are ignored.
 */
void softrnic_qp_discard(struct softrnic_qp *qp)
{
	unsigned long flags;
	u32 prod;

	lockdep_assert_held(&qp->mutex);
	clear_bit(SOFTRNIC_QP_ERR_PENDING, &qp->flags);
	clear_bit(SOFTRNIC_QP_FATAL_PENDING, &qp->flags);

	softrnic_ring_kflags(&qp->sq, 0, SOFTRNIC_KFLAG_KERNEL_ACTIVE |
					 SOFTRNIC_KFLAG_ERROR);
	spin_lock_irqsave(&qp->sq_lock, flags);
	prod = softrnic_ring_load_prod(&qp->sq);
	qp->sq_next = prod;
	qp->sq_prod_seen = prod;
	qp->sq_cons = prod;
	qp->sq_pending = false;
	qp->sq_fence_wait = false;
	qp->sqd_notify = false;
	softrnic_ring_store_cons(&qp->sq, prod);
	spin_unlock_irqrestore(&qp->sq_lock, flags);

	if (!qp->rq.num_slots)
		return;
	softrnic_ring_kflags(&qp->rq, 0, SOFTRNIC_KFLAG_ERROR);
	spin_lock_irqsave(&qp->rq_lock, flags);
	prod = softrnic_ring_load_prod(&qp->rq);
	qp->rq_cons = prod;
	softrnic_ring_store_cons(&qp->rq, prod);
	spin_unlock_irqrestore(&qp->rq_lock, flags);
}
