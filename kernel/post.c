// SPDX-License-Identifier: GPL-2.0
/*
 * post_send and post_recv.
 *
 * A process owns the producer side of its SQ and RQ rings and never asks
 * the kernel to post: ops.post_send with no WR (an empty uverbs
 * post_send) is its SQ doorbell, ops.post_recv with no WR its RQ
 * doorbell, which it only needs when the QP is in ERR (flush.c).  A WR
 * list from a process is refused.
 *
 * A kernel consumer's WRs are translated into the same WQE format and
 * written into its kernel-owned rings under the per-queue producer lock,
 * so the SQ worker and the wire see one format.  Any context.
 */
#include "queue.h"
#include "mem.h"

#define SOFTRNIC_SEND_FLAGS (IB_SEND_FENCE | IB_SEND_SIGNALED | \
			     IB_SEND_SOLICITED | IB_SEND_INLINE)

static bool softrnic_opcode_inline_ok(u8 opcode)
{
	return opcode == SOFTRNIC_WR_SEND ||
	       opcode == SOFTRNIC_WR_SEND_WITH_IMM ||
	       opcode == SOFTRNIC_WR_SEND_WITH_INV ||
	       opcode == SOFTRNIC_WR_RDMA_WRITE ||
	       opcode == SOFTRNIC_WR_RDMA_WRITE_WITH_IMM;
}

/* Inline data of a kernel WR: its SGEs are kernel virtual addresses. */
static int softrnic_copy_inline(struct softrnic_qp *qp,
				const struct ib_send_wr *wr, void *dst,
				u32 *len)
{
	u32 total = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		u32 n = wr->sg_list[i].length;

		if (n > qp->sq_lim.max_inline - total)
			return -EINVAL;
		memcpy(dst + total, (void *)(uintptr_t)wr->sg_list[i].addr, n);
		total += n;
	}
	*len = total;
	return 0;
}

/* Translate one kernel send WR into the WQE at @slot. */
static int softrnic_sqe_from_wr(struct softrnic_qp *qp,
				const struct ib_send_wr *wr, void *slot)
{
	struct softrnic_sqe sqe = {};
	struct softrnic_sge *sge = slot + sizeof(sqe);
	struct softrnic_sqe_kreg *kreg;
	u32 inline_len = 0;
	int i, err;

	if (wr->send_flags & ~SOFTRNIC_SEND_FLAGS)
		return -EINVAL;
	sqe.wr_id = wr->wr_id;
	if ((wr->send_flags & IB_SEND_SIGNALED) || qp->sig_all)
		sqe.flags |= SOFTRNIC_WQE_F_SIGNALED;
	if (wr->send_flags & IB_SEND_SOLICITED)
		sqe.flags |= SOFTRNIC_WQE_F_SOLICITED;
	if (wr->send_flags & IB_SEND_FENCE)
		sqe.flags |= SOFTRNIC_WQE_F_FENCE;

	switch (wr->opcode) {
	case IB_WR_SEND:
		sqe.opcode = SOFTRNIC_WR_SEND;
		break;
	case IB_WR_SEND_WITH_IMM:
		sqe.opcode = SOFTRNIC_WR_SEND_WITH_IMM;
		sqe.ex = (__force u32)wr->ex.imm_data;
		break;
	case IB_WR_SEND_WITH_INV:
		sqe.opcode = SOFTRNIC_WR_SEND_WITH_INV;
		sqe.ex = wr->ex.invalidate_rkey;
		break;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		sqe.opcode = wr->opcode == IB_WR_RDMA_READ ?
			SOFTRNIC_WR_RDMA_READ :
			wr->opcode == IB_WR_RDMA_WRITE ?
			SOFTRNIC_WR_RDMA_WRITE : SOFTRNIC_WR_RDMA_WRITE_WITH_IMM;
		if (wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM)
			sqe.ex = (__force u32)wr->ex.imm_data;
		sqe.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		sqe.rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_RDMA_READ_WITH_INV:
		/*
		 * The MR invalidated is the sink SGE's, as siw does: rdma_rw
		 * sets ex.invalidate_rkey before rdma_rw_update_lkey gives
		 * the MR its next key, so that one is stale by then.
		 */
		if (!qp->sdev->wire->read_with_inv || wr->num_sge != 1 ||
		    (wr->send_flags & IB_SEND_INLINE))
			return -EINVAL;
		sqe.opcode = SOFTRNIC_WR_RDMA_READ;
		sqe.flags |= SOFTRNIC_WQE_F_KREAD_INV;
		sqe.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		sqe.rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		sqe.opcode = wr->opcode == IB_WR_ATOMIC_CMP_AND_SWP ?
			SOFTRNIC_WR_ATOMIC_CMP_AND_SWP :
			SOFTRNIC_WR_ATOMIC_FETCH_AND_ADD;
		sqe.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		sqe.atomic.compare_add = atomic_wr(wr)->compare_add;
		sqe.atomic.swap = atomic_wr(wr)->swap;
		sqe.atomic.rkey = atomic_wr(wr)->rkey;
		break;
	case IB_WR_LOCAL_INV:
		sqe.opcode = SOFTRNIC_WR_LOCAL_INV;
		sqe.ex = wr->ex.invalidate_rkey;
		break;
	case IB_WR_REG_MR:
		if (qp->kind != SR_QP_RC)
			return -EINVAL;
		sqe.opcode = SOFTRNIC_WR_REG_MR;
		kreg = (struct softrnic_sqe_kreg *)sqe.raw;
		kreg->mr = reg_wr(wr)->mr;
		kreg->key = reg_wr(wr)->key;
		kreg->access = reg_wr(wr)->access;
		memcpy(slot, &sqe, sizeof(sqe));
		return 0;
	default:
		return -EINVAL;
	}
	if (!sr_opcode_allowed(sqe.opcode, qp->kind))
		return -EINVAL;

	if (qp->kind == SR_QP_UD) {
		if (!ud_wr(wr)->ah)
			return -EINVAL;
		sqe.ud.ah_num = to_sah(ud_wr(wr)->ah)->ah_num;
		sqe.ud.remote_qpn = ud_wr(wr)->remote_qpn;
		sqe.ud.remote_qkey = ud_wr(wr)->remote_qkey;
	}

	if (wr->send_flags & IB_SEND_INLINE) {
		if (!softrnic_opcode_inline_ok(sqe.opcode))
			return -EINVAL;
		err = softrnic_copy_inline(qp, wr, sge, &inline_len);
		if (err)
			return err;
		sqe.flags |= SOFTRNIC_WQE_F_INLINE;
		if (qp->kind == SR_QP_UD)
			sqe.ud.inline_len = inline_len;
		else
			sqe.rdma.inline_len = inline_len;
	} else if (sqe.opcode != SOFTRNIC_WR_LOCAL_INV) {
		if (wr->num_sge < 0 || (u32)wr->num_sge > qp->sq_lim.max_sge)
			return -EINVAL;
		sqe.num_sge = wr->num_sge;
		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = wr->sg_list[i].addr;
			sge[i].length = wr->sg_list[i].length;
			sge[i].lkey = wr->sg_list[i].lkey;
		}
	}
	memcpy(slot, &sqe, sizeof(sqe));
	return 0;
}

static int softrnic_post_send_kernel(struct softrnic_qp *qp,
				     const struct ib_send_wr *wr,
				     const struct ib_send_wr **bad_wr)
{
	struct softrnic_ring *sq = &qp->sq;
	enum ib_qp_state state = softrnic_qp_state(qp);
	unsigned long flags;
	u32 start, cons;
	int err = 0;

	/* Not before RTS; in SQD/SQE WRs wait, in ERR they are flushed. */
	if (state == IB_QPS_RESET || state == IB_QPS_INIT ||
	    state == IB_QPS_RTR) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&qp->sq_post_lock, flags);
	start = qp->sq_prod;
	cons = softrnic_ring_load_cons(sq);
	for (; wr; wr = wr->next) {
		if (!sr_ring_free(qp->sq_prod, cons, sq->num_slots)) {
			cons = softrnic_ring_load_cons(sq);
			if (!sr_ring_free(qp->sq_prod, cons, sq->num_slots)) {
				err = -ENOMEM;
				break;
			}
		}
		err = softrnic_sqe_from_wr(qp, wr,
					   softrnic_ring_slot(sq, qp->sq_prod));
		if (err)
			break;
		qp->sq_prod++;
	}
	if (qp->sq_prod != start)
		softrnic_ring_store_prod(sq, qp->sq_prod);
	spin_unlock_irqrestore(&qp->sq_post_lock, flags);

	if (err)
		*bad_wr = wr;
	if (qp->sq_prod != start)
		softrnic_qp_kick(qp);
	return err;
}

/*
 * The SQ doorbell of a process, in its own context (the uverbs write
 * system call, which may sleep): if the QP's worker is not running, do
 * right here what it would do (softrnic_qp_run() under qp->mutex: the
 * SQ drain with the KERNEL_ACTIVE protocol of the ring, or the flush in
 * ERR), minus the switch to a kworker and back, which is most of the
 * latency of a short message.  If the worker holds the mutex, or the SQ
 * budget runs out, the worker runs (again), so no WQE is left behind or
 * taken twice.
 */
static void softrnic_sq_doorbell(struct softrnic_qp *qp)
{
	if (!mutex_trylock(&qp->mutex)) {
		/* the worker runs, and runs again after this */
		softrnic_qp_kick(qp);
		return;
	}
	softrnic_qp_run_unlock(qp);
}

int softrnic_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		       const struct ib_send_wr **bad_wr)
{
	struct softrnic_qp *qp = to_sqp(ibqp);

	if (!qp->user)
		return softrnic_post_send_kernel(qp, wr, bad_wr);
	if (wr) {
		*bad_wr = wr;
		return -EINVAL;
	}
	/* The doorbell: look at prod (or flush, in ERR). */
	softrnic_sq_doorbell(qp);
	return 0;
}

/* Write one receive WR into @slot of a ring holding up to @max_sge. */
int softrnic_rqe_from_wr(const struct ib_recv_wr *wr, u32 max_sge, void *slot)
{
	struct softrnic_rqe rqe = {};
	struct softrnic_sge *sge = slot + sizeof(rqe);
	int i;

	if (wr->num_sge < 0 || (u32)wr->num_sge > max_sge)
		return -EINVAL;
	rqe.wr_id = wr->wr_id;
	rqe.num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	memcpy(slot, &rqe, sizeof(rqe));
	return 0;
}

static int softrnic_post_recv_kernel(struct softrnic_qp *qp,
				     const struct ib_recv_wr *wr,
				     const struct ib_recv_wr **bad_wr)
{
	struct softrnic_ring *rq = &qp->rq;
	unsigned long flags;
	u32 start, cons;
	int err = 0;

	if (!rq->num_slots || softrnic_qp_state(qp) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&qp->rq_post_lock, flags);
	start = qp->rq_prod;
	cons = softrnic_ring_load_cons(rq);
	for (; wr; wr = wr->next) {
		if (!sr_ring_free(qp->rq_prod, cons, rq->num_slots)) {
			cons = softrnic_ring_load_cons(rq);
			if (!sr_ring_free(qp->rq_prod, cons, rq->num_slots)) {
				err = -ENOMEM;
				break;
			}
		}
		err = softrnic_rqe_from_wr(wr, qp->rq_max_sge,
					   softrnic_ring_slot(rq, qp->rq_prod));
		if (err)
			break;
		qp->rq_prod++;
	}
	if (qp->rq_prod != start)
		softrnic_ring_store_prod(rq, qp->rq_prod);
	spin_unlock_irqrestore(&qp->rq_post_lock, flags);

	if (err)
		*bad_wr = wr;
	/*
	 * Pairs with softrnic_qp_to_error(): either its flush saw our prod,
	 * or we see ERR here and have the worker flush.
	 */
	smp_mb();
	if (softrnic_qp_state(qp) == IB_QPS_ERR)
		softrnic_qp_kick(qp);
	return err;
}

int softrnic_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	struct softrnic_qp *qp = to_sqp(ibqp);

	if (!qp->user)
		return softrnic_post_recv_kernel(qp, wr, bad_wr);
	if (wr) {
		*bad_wr = wr;
		return -EINVAL;
	}
	/* The RQ doorbell: only ERR needs the kernel (a flush). */
	if (softrnic_qp_state(qp) == IB_QPS_ERR)
		softrnic_qp_kick(qp);
	return 0;
}
