// SPDX-License-Identifier: GPL-2.0
/*
 * Receive WQEs for the wire: taking the next one from a QP's RQ or from
 * its SRQ.  The consumer is the transport's receive path, which may run
 * in softirq context; qp->rq_lock serializes it with the flush, srq->lock
 * the QPs of an SRQ.
 *
 * A WQE is copied out once and validated before its cons is published;
 * from then on the slot belongs to the producer again and the wire works
 * on the copy until it completes it.
 */
#include "queue.h"

/* Copy receive WQE @counter out of @ring and validate it. */
int softrnic_krqe_copy(const struct softrnic_ring *ring, u32 counter,
		       u32 max_sge, struct softrnic_krqe *out)
{
	const void *slot = softrnic_ring_slot(ring, counter);

	memcpy(&out->rqe, slot, sizeof(out->rqe));
	if (max_sge > SOFTRNIC_MAX_SGE ||
	    sr_rqe_check(&out->rqe, max_sge, ring->slot_size) != SR_WQE_OK)
		return -EINVAL;
	memcpy(out->sge, slot + sizeof(out->rqe),
	       out->rqe.num_sge * sizeof(struct softrnic_sge));
	return 0;
}

/*
 * 0: *out holds the next receive WQE; -ENOENT: none posted (RNR); -EIO:
 * the RQ is corrupt and the QP on its way to the error state (a malformed
 * WQE is completed with IB_WC_LOC_QP_OP_ERR first).  Any context.
 */
int softrnic_rq_get(struct softrnic_qp *qp, struct softrnic_krqe *out)
{
	struct softrnic_ring *rq = &qp->rq;
	struct softrnic_cqe cqe = {};
	unsigned long flags;
	int err = 0;
	u32 prod;

	if (qp->ibqp.srq)
		return softrnic_srq_get(to_ssrq(qp->ibqp.srq), out);

	spin_lock_irqsave(&qp->rq_lock, flags);
	prod = softrnic_ring_load_prod(rq);
	if (!sr_ring_sane(prod, qp->rq_cons, rq->num_slots)) {
		err = -EIO;
	} else if (prod == qp->rq_cons) {
		err = -ENOENT;
	} else if (softrnic_krqe_copy(rq, qp->rq_cons, qp->rq_max_sge, out)) {
		softrnic_qp_error_mark(qp, true);	/* ERR before the CQE */
		cqe.wr_id = out->rqe.wr_id;
		cqe.status = IB_WC_LOC_QP_OP_ERR;
		cqe.opcode = SOFTRNIC_WC_RECV;
		cqe.qp_num = qp->ibqp.qp_num;
		softrnic_cq_post(softrnic_qp_rcq(qp), &cqe, false);
		softrnic_ring_store_cons(rq, ++qp->rq_cons);
		err = -EIO;
	} else {
		softrnic_ring_store_cons(rq, ++qp->rq_cons);
	}
	spin_unlock_irqrestore(&qp->rq_lock, flags);

	if (err == -EIO)
		softrnic_qp_error(qp, true);
	return err;
}

int softrnic_srq_get(struct softrnic_srq *srq, struct softrnic_krqe *out)
{
	struct softrnic_ring *ring = &srq->ring;
	bool limit_hit = false, broke = false;
	unsigned long flags;
	int err = 0;
	u32 prod;

	spin_lock_irqsave(&srq->lock, flags);
	if (srq->error) {
		err = -EIO;
		goto out;
	}
	prod = softrnic_ring_load_prod(ring);
	if (!sr_ring_sane(prod, srq->cons, ring->num_slots) ||
	    (prod != srq->cons &&
	     softrnic_krqe_copy(ring, srq->cons, srq->max_sge, out))) {
		srq->error = true;
		softrnic_ring_kflags(ring, SOFTRNIC_KFLAG_ERROR, 0);
		broke = true;
		err = -EIO;
		goto out;
	}
	if (prod == srq->cons) {
		err = -ENOENT;
		goto out;
	}
	softrnic_ring_store_cons(ring, ++srq->cons);
	if (sr_srq_limit_hit(prod - srq->cons, srq->limit)) {
		srq->limit = 0;
		limit_hit = true;
	}
out:
	spin_unlock_irqrestore(&srq->lock, flags);
	if (broke)
		set_bit(SOFTRNIC_SRQ_EV_ERR, &srq->ev_pending);
	if (limit_hit)
		set_bit(SOFTRNIC_SRQ_EV_LIMIT, &srq->ev_pending);
	if (broke || limit_hit)
		tasklet_schedule(&srq->notify);
	return err;
}

/*
 * Complete a receive WQE the wire took with softrnic_rq_get(): the
 * partner of softrnic_sq_complete() for the receive side.  An error
 * status (other than a flush) marks the QP for ERR before the CQE is
 * visible, so a consumer that polls it finds the QP in ERR.  Any context.
 */
void softrnic_rq_complete(struct softrnic_qp *qp,
			  const struct softrnic_krqe *rqe,
			  enum ib_wc_status status, u8 opcode, u32 byte_len,
			  u16 wc_flags, u32 ex, bool solicited)
{
	struct softrnic_cqe cqe = {
		.wr_id = rqe->rqe.wr_id,
		.status = status,
		.opcode = opcode,
		.wc_flags = wc_flags,
		.byte_len = byte_len,
		.ex = ex,
		.qp_num = qp->ibqp.qp_num,
		.src_qp = qp->attr.dest_qp_num,
	};

	if (status != IB_WC_SUCCESS && status != IB_WC_WR_FLUSH_ERR)
		softrnic_qp_error_mark(qp, false);
	softrnic_cq_post(softrnic_qp_rcq(qp), &cqe, solicited);
}
