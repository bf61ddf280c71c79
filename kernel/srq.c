// SPDX-License-Identifier: GPL-2.0
/*
 * Shared receive queues: one ring of receive WQEs that the wire takes
 * from on behalf of any QP attached to the SRQ (softrnic_srq_get, rq.c).
 *
 * The limit: modify_srq(IB_SRQ_LIMIT) arms it; when a consumption leaves
 * fewer WQEs posted than the limit, IB_EVENT_SRQ_LIMIT_REACHED is raised
 * once and the limit disarms (it reads back as 0).  Resizing is not
 * supported.  A QP going to ERR never flushes SRQ WQEs.
 */
#include <rdma/uverbs_ioctl.h>

#include "queue.h"

static void softrnic_srq_event(struct softrnic_srq *srq,
			       enum ib_event_type type)
{
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = type,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

/*
 * The SRQ's events, from its tasklet: softrnic_srq_get() runs under the
 * transport's spinlocks with IRQs off, and an event handler may call
 * back into verbs (modify_srq to re-arm the limit, post_srq_recv).
 */
static void softrnic_srq_notify(struct tasklet_struct *t)
{
	struct softrnic_srq *srq = from_tasklet(srq, t, notify);

	if (test_and_clear_bit(SOFTRNIC_SRQ_EV_ERR, &srq->ev_pending))
		softrnic_srq_event(srq, IB_EVENT_SRQ_ERR);
	if (test_and_clear_bit(SOFTRNIC_SRQ_EV_LIMIT, &srq->ev_pending))
		softrnic_srq_event(srq, IB_EVENT_SRQ_LIMIT_REACHED);
}

int softrnic_create_srq(struct ib_srq *ibsrq,
			struct ib_srq_init_attr *init_attr,
			struct ib_udata *udata)
{
	struct softrnic_dev *sdev = to_sdev(ibsrq->device);
	struct softrnic_srq *srq = to_ssrq(ibsrq);
	struct ib_srq_attr *attr = &init_attr->attr;
	struct softrnic_create_srq_resp resp = {};
	u32 slots, slot_size;
	int err;

	if (init_attr->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	slots = sr_ring_slots_for(attr->max_wr, SOFTRNIC_MAX_SRQ_WR);
	if (!attr->max_wr || !slots || attr->max_sge > SOFTRNIC_MAX_SRQ_SGE)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (atomic_inc_return(&sdev->srq_count) > SOFTRNIC_MAX_SRQ) {
		err = -ENOMEM;
		goto err_count;
	}

	spin_lock_init(&srq->lock);
	spin_lock_init(&srq->post_lock);
	tasklet_setup(&srq->notify, softrnic_srq_notify);
	srq->user = !!udata;
	srq->srqn = atomic_inc_return(&sdev->srqn_next);
	slot_size = sr_rq_slot_size(attr->max_sge);
	err = softrnic_ring_alloc(&srq->ring, slots, slot_size, udata);
	if (err)
		goto err_count;
	srq->max_sge = sr_slot_sge_cap(slot_size, sizeof(struct softrnic_rqe),
				       SOFTRNIC_MAX_SRQ_SGE);
	/* A limit is armed by modify_srq only. */
	srq->limit = 0;
	attr->max_wr = slots;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = 0;

	if (udata) {
		softrnic_ring_info(&srq->ring, &resp.srq);
		resp.srqn = srq->srqn;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_ring;
	}
	return 0;

err_ring:
	softrnic_ring_free(&srq->ring);
err_count:
	atomic_dec(&sdev->srq_count);
	return err;
}

int softrnic_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct softrnic_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;

	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (mask & ~IB_SRQ_LIMIT)
		return -EINVAL;
	if (mask & IB_SRQ_LIMIT) {
		if (attr->srq_limit > srq->ring.num_slots)
			return -EINVAL;
		spin_lock_irqsave(&srq->lock, flags);
		srq->limit = attr->srq_limit;
		spin_unlock_irqrestore(&srq->lock, flags);
	}
	return 0;
}

int softrnic_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct softrnic_srq *srq = to_ssrq(ibsrq);

	attr->max_wr = srq->ring.num_slots;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

int softrnic_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct softrnic_srq *srq = to_ssrq(ibsrq);

	/* ib_core refuses while a QP uses the SRQ: no consumer is left. */
	tasklet_kill(&srq->notify);
	softrnic_ring_free(&srq->ring);
	atomic_dec(&to_sdev(ibsrq->device)->srq_count);
	return 0;
}

int softrnic_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			   const struct ib_recv_wr **bad_wr)
{
	struct softrnic_srq *srq = to_ssrq(ibsrq);
	struct softrnic_ring *ring = &srq->ring;
	unsigned long flags;
	u32 start, cons;
	int err = 0;

	/* A process writes its SRQ ring itself. */
	if (srq->user) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&srq->post_lock, flags);
	start = srq->prod;
	cons = softrnic_ring_load_cons(ring);
	for (; wr; wr = wr->next) {
		if (!sr_ring_free(srq->prod, cons, ring->num_slots)) {
			cons = softrnic_ring_load_cons(ring);
			if (!sr_ring_free(srq->prod, cons, ring->num_slots)) {
				err = -ENOMEM;
				break;
			}
		}
		err = softrnic_rqe_from_wr(wr, srq->max_sge,
					   softrnic_ring_slot(ring, srq->prod));
		if (err)
			break;
		srq->prod++;
	}
	if (srq->prod != start)
		softrnic_ring_store_prod(ring, srq->prod);
	spin_unlock_irqrestore(&srq->post_lock, flags);

	if (err)
		*bad_wr = wr;
	return err;
}
