// SPDX-License-Identifier: GPL-2.0
/*
 * Queue pairs: creation, numbering, lookup, query and destruction.  The
 * state machine is in qp_state.c, the data path in post.c, sq_worker.c,
 * flush.c and rq.c.
 *
 * Lifetime.  ib_core allocates and frees struct softrnic_qp.  Between
 * create_qp and destroy_qp:
 *  - qp->ref counts the QP's own reference plus one per wire lookup
 *    (softrnic_qp_get); destroy_qp drops its own and waits on
 *    qp->released for the others, so no wire code touches the QP after
 *    destroy_qp returns;
 *  - the work item (SQ consumer, flush, events) is cancelled only after
 *    that, so nobody can queue it again;
 *  - the QP stays in sdev->qp_xa until its CQEs left any kernel CQ, so
 *    poll_cq can always turn a CQE's qp_num into the QP.
 */
#include <linux/slab.h>
#include <rdma/uverbs_ioctl.h>

#include "queue.h"
#include "mem.h"

#define SOFTRNIC_QPN_MAX	0xffffffU	/* 24-bit QPNs */
#define SOFTRNIC_GSI_QPN	1

/*
 * Every received packet looks its QP up: no lock, only RCU.  A QP found
 * here is still allocated (destroy_qp waits a grace period after taking
 * it out of qp_xa), and usable if its count was not zero yet.
 */
struct softrnic_qp *softrnic_qp_get(struct softrnic_dev *sdev, u32 qpn)
{
	struct softrnic_qp *qp;

	rcu_read_lock();
	qp = xa_load(&sdev->qp_xa, qpn);
	if (qp && !refcount_inc_not_zero(&qp->ref))
		qp = NULL;
	rcu_read_unlock();
	return qp;
}

void softrnic_qp_put(struct softrnic_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->released);
}

static int softrnic_qp_check_init(struct softrnic_dev *sdev,
				  const struct ib_qp_init_attr *init)
{
	const struct ib_qp_cap *cap = &init->cap;

	switch (init->qp_type) {
	case IB_QPT_RC:
		break;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		if (!sdev->wire->datagrams)
			return -EOPNOTSUPP;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags || init->rwq_ind_tbl)
		return -EOPNOTSUPP;
	if (init->srq && init->srq->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (init->qp_type == IB_QPT_GSI && init->port_num != 1)
		return -EINVAL;
	if (!init->send_cq || !init->recv_cq)
		return -EINVAL;
	if (cap->max_send_wr > SOFTRNIC_MAX_QP_WR ||
	    cap->max_send_sge > SOFTRNIC_MAX_SGE ||
	    cap->max_inline_data > SOFTRNIC_MAX_INLINE)
		return -EINVAL;
	if (!init->srq && (cap->max_recv_wr > SOFTRNIC_MAX_QP_WR ||
			   cap->max_recv_sge > SOFTRNIC_MAX_SGE))
		return -EINVAL;
	return 0;
}

/* Rings and shadow state; reports the actual caps back in @cap. */
static int softrnic_qp_alloc_queues(struct softrnic_qp *qp,
				    struct ib_qp_init_attr *init,
				    struct ib_udata *udata)
{
	struct ib_qp_cap *cap = &init->cap;
	u32 slots, slot_size;
	int err;

	slots = sr_ring_slots_for(cap->max_send_wr, SOFTRNIC_MAX_QP_WR);
	slot_size = sr_sq_slot_size(cap->max_send_sge, cap->max_inline_data);
	err = softrnic_ring_alloc(&qp->sq, slots, slot_size, udata);
	if (err)
		return err;
	qp->sq_lim.kind = qp->kind;
	qp->sq_lim.slot_size = slot_size;
	qp->sq_lim.max_sge = sr_slot_sge_cap(slot_size,
					     sizeof(struct softrnic_sqe),
					     SOFTRNIC_MAX_SGE);
	qp->sq_lim.max_inline = sr_slot_inline_cap(slot_size,
						   SOFTRNIC_MAX_INLINE);
	cap->max_send_wr = slots;
	cap->max_send_sge = qp->sq_lim.max_sge;
	cap->max_inline_data = qp->sq_lim.max_inline;

	qp->sq_shadow = kvcalloc(slots, sizeof(*qp->sq_shadow),
				 softrnic_gfp(qp->user));
	qp->sq_wqe = kmalloc(sizeof(*qp->sq_wqe), softrnic_gfp(qp->user));
	if (!qp->sq_shadow || !qp->sq_wqe)
		return -ENOMEM;

	if (init->srq) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
		return 0;
	}
	slots = sr_ring_slots_for(cap->max_recv_wr, SOFTRNIC_MAX_QP_WR);
	slot_size = sr_rq_slot_size(cap->max_recv_sge);
	err = softrnic_ring_alloc(&qp->rq, slots, slot_size, udata);
	if (err)
		return err;
	qp->rq_max_sge = sr_slot_sge_cap(slot_size,
					 sizeof(struct softrnic_rqe),
					 SOFTRNIC_MAX_SGE);
	cap->max_recv_wr = slots;
	cap->max_recv_sge = qp->rq_max_sge;
	return 0;
}

static void softrnic_qp_free_queues(struct softrnic_qp *qp)
{
	softrnic_ring_free(&qp->rq);
	softrnic_ring_free(&qp->sq);
	kvfree(qp->sq_shadow);
	qp->sq_shadow = NULL;
	kfree(qp->sq_wqe);
	qp->sq_wqe = NULL;
}

/* Reserve a QPN (the slot holds NULL until the QP is complete). */
static int softrnic_qpn_reserve(struct softrnic_dev *sdev,
				enum ib_qp_type type, u32 *qpn)
{
	int err;

	if (type == IB_QPT_GSI) {
		*qpn = SOFTRNIC_GSI_QPN;
		err = xa_insert_irq(&sdev->qp_xa, SOFTRNIC_GSI_QPN, NULL,
				    GFP_KERNEL);
		return err == -EBUSY ? -EEXIST : err;
	}
	err = xa_alloc_cyclic_irq(&sdev->qp_xa, qpn, NULL,
				  XA_LIMIT(SOFTRNIC_GSI_QPN + 1,
					   SOFTRNIC_QPN_MAX),
				  &sdev->qp_next, GFP_KERNEL);
	if (err == -EBUSY)
		return -ENOMEM;
	return err < 0 ? err : 0;
}

int softrnic_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		       struct ib_udata *udata)
{
	struct softrnic_dev *sdev = to_sdev(ibqp->device);
	struct softrnic_qp *qp = to_sqp(ibqp);
	struct softrnic_create_qp_resp resp = {};
	u32 qpn;
	int err;

	err = softrnic_qp_check_init(sdev, init);
	if (err)
		return err;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (atomic_inc_return(&sdev->qp_count) > SOFTRNIC_MAX_QP) {
		err = -ENOMEM;
		goto err_count;
	}

	qp->sdev = sdev;
	qp->kind = init->qp_type == IB_QPT_RC ? SR_QP_RC : SR_QP_UD;
	qp->user = !!udata;
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	refcount_set(&qp->ref, 1);
	init_completion(&qp->released);
	mutex_init(&qp->mutex);
	qp->state = IB_QPS_RESET;
	qp->attr.port_num = 1;
	qp->attr.path_mtu = IB_MTU_1024;
	qp->attr.path_mig_state = IB_MIG_MIGRATED;
	INIT_WORK(&qp->work, softrnic_qp_work);
	spin_lock_init(&qp->sq_post_lock);
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_post_lock);
	spin_lock_init(&qp->rq_lock);
	spin_lock_init(&qp->mw_lock);
	INIT_LIST_HEAD(&qp->mws);

	err = softrnic_qp_alloc_queues(qp, init, udata);
	if (err)
		goto err_queues;

	err = softrnic_qpn_reserve(sdev, init->qp_type, &qpn);
	if (err)
		goto err_queues;
	ibqp->qp_num = qpn;

	if (sdev->wire->qp_init) {
		err = sdev->wire->qp_init(qp);
		if (err)
			goto err_qpn;
	}

	if (udata) {
		softrnic_ring_info(&qp->sq, &resp.sq);
		softrnic_ring_info(&qp->rq, &resp.rq);
		resp.qpn = qpn;
		resp.max_inline = qp->sq_lim.max_inline;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_qpn;
	}

	/* Complete: visible to lookups from now on. */
	err = xa_err(xa_store_irq(&sdev->qp_xa, qpn, qp, GFP_KERNEL));
	if (err)
		goto err_qpn;
	return 0;

err_qpn:
	if (qp->wire_priv)
		sdev->wire->qp_fini(qp);
	xa_erase_irq(&sdev->qp_xa, qpn);
err_queues:
	softrnic_qp_free_queues(qp);
err_count:
	atomic_dec(&sdev->qp_count);
	return err;
}

int softrnic_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct softrnic_qp *qp = to_sqp(ibqp);
	struct softrnic_dev *sdev = qp->sdev;

	/* The worker does nothing from here on; see softrnic_qp_work(). */
	mutex_lock(&qp->mutex);
	set_bit(SOFTRNIC_QP_DYING, &qp->flags);
	mutex_unlock(&qp->mutex);

	if (qp->wire_priv && sdev->wire->qp_destroying)
		sdev->wire->qp_destroying(qp);
	/* Wait for the wire: no lookup succeeds once ref reached zero. */
	softrnic_qp_put(qp);
	wait_for_completion(&qp->released);
	/* The wire's timers and work items, which may kick the QP. */
	if (qp->wire_priv)
		sdev->wire->qp_fini(qp);
	/* Nobody can queue the work any more; wait for a running one. */
	cancel_work_sync(&qp->work);

	/*
	 * A kernel CQ must not hold CQEs naming this QP (poll_cq turns
	 * qp_num into the QP); a process resolves qp_num itself.
	 */
	softrnic_cq_purge_qp(softrnic_qp_scq(qp), ibqp->qp_num, false);
	if (ibqp->recv_cq != ibqp->send_cq)
		softrnic_cq_purge_qp(softrnic_qp_rcq(qp), ibqp->qp_num, false);
	/* Type 2 MWs bound to this QPN must not serve a later QP. */
	softrnic_mw_qp_destroyed(qp);
	xa_erase_irq(&sdev->qp_xa, ibqp->qp_num);
	/*
	 * A lockless softrnic_qp_get() may still be looking at the QP.
	 * Expedited: a normal grace period made every destroy_qp ~16 ms
	 * under TCG (40 create/destroy cycles 0.02 s -> 0.67 s).
	 */
	synchronize_rcu_expedited();

	softrnic_qp_free_queues(qp);
	softrnic_counters_qp_destroyed(qp);
	rdma_destroy_ah_attr(&qp->attr.ah_attr);
	atomic_dec(&sdev->qp_count);
	return 0;
}

int softrnic_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		      int mask, struct ib_qp_init_attr *init)
{
	struct softrnic_qp *qp = to_sqp(ibqp);
	const struct softrnic_qp_attrs *a = &qp->attr;
	unsigned long flags;

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));

	mutex_lock(&qp->mutex);
	attr->qp_state = qp->state;
	/*
	 * An error the worker has yet to act on is already the QP's state:
	 * its error CQE may have been polled (softrnic_qp_error_mark()).
	 */
	if (attr->qp_state != IB_QPS_RESET && softrnic_qp_error_pending(qp))
		attr->qp_state = IB_QPS_ERR;
	attr->cur_qp_state = attr->qp_state;
	attr->path_mtu = a->path_mtu;
	attr->path_mig_state = a->path_mig_state;
	attr->qkey = a->qkey;
	attr->rq_psn = a->rq_psn;
	attr->sq_psn = a->sq_psn;
	attr->dest_qp_num = a->dest_qp_num;
	attr->qp_access_flags = a->qp_access_flags;
	/* ib_core clears sgid_attr in the result: a plain copy is right. */
	attr->ah_attr = a->ah_attr;
	attr->pkey_index = a->pkey_index;
	attr->en_sqd_async_notify = a->en_sqd_async_notify;
	attr->max_rd_atomic = a->max_rd_atomic;
	attr->max_dest_rd_atomic = a->max_dest_rd_atomic;
	attr->min_rnr_timer = a->min_rnr_timer;
	attr->port_num = a->port_num;
	attr->timeout = a->timeout;
	attr->retry_cnt = a->retry_cnt;
	attr->rnr_retry = a->rnr_retry;
	if (qp->state == IB_QPS_SQD) {
		spin_lock_irqsave(&qp->sq_lock, flags);
		attr->sq_draining = qp->sq_cons != qp->sq_next;
		spin_unlock_irqrestore(&qp->sq_lock, flags);
	}
	mutex_unlock(&qp->mutex);

	attr->cap.max_send_wr = qp->sq.num_slots;
	attr->cap.max_send_sge = qp->sq_lim.max_sge;
	attr->cap.max_inline_data = qp->sq_lim.max_inline;
	attr->cap.max_recv_wr = qp->rq.num_slots;
	attr->cap.max_recv_sge = qp->rq.num_slots ? qp->rq_max_sge : 0;

	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->event_handler = ibqp->event_handler;
	init->qp_context = ibqp->qp_context;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init->port_num = ibqp->port;
	return 0;
}
