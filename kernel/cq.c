// SPDX-License-Identifier: GPL-2.0
/*
 * Completion queues.  A CQ is one ring of struct softrnic_cqe: the kernel
 * produces, the consumer (a process through the mapping, or a kernel ULP
 * through poll_cq) consumes.  Producers serialize on cq->lock; the only
 * value taken from a process is its cons counter, read once per CQE and
 * checked before it can influence anything.
 *
 * Arming: the consumer sets SOFTRNIC_CQ_ARM_* in uflags (a process
 * writes it directly, a kernel ULP through req_notify_cq).  After
 * publishing a CQE the producer takes a satisfied arm request with a
 * compare-and-exchange to 0 and has the completion handler called, which
 * for a process signals its completion channel.
 *
 * Handlers.  Producers post under the transport's spinlocks, with IRQs
 * off (a QP's send or receive state, its SQ completion lock), and ULPs
 * poll, re-arm and post from their completion handler, as they may with
 * hardware, whose handler runs in interrupt context holding nothing of
 * the driver's.  So neither the completion handler nor the CQ_ERR event
 * handler is called by the producer: it counts what is owed and
 * schedules the CQ's tasklet, which calls them in softirq context with
 * IRQs on and no lock of ours held.  destroy_cq kills the tasklet.
 */
#include <linux/etherdevice.h>
#include <rdma/uverbs_ioctl.h>

#include "queue.h"

#define SOFTRNIC_CQE_SLOT_SIZE \
	SR_ALIGN_UP((u32)sizeof(struct softrnic_cqe), SOFTRNIC_SLOT_ALIGN)

static void softrnic_cq_event(struct softrnic_cq *cq, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = type,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

#define SOFTRNIC_CQ_EV_ERR	0

static void softrnic_cq_notify(struct tasklet_struct *t)
{
	struct softrnic_cq *cq = from_tasklet(cq, t, notify);
	int n;

	if (test_and_clear_bit(SOFTRNIC_CQ_EV_ERR, &cq->ev_pending))
		softrnic_cq_event(cq, IB_EVENT_CQ_ERR);
	for (n = atomic_xchg(&cq->comp_pending, 0); n > 0; n--)
		if (cq->ibcq.comp_handler)
			cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

/*
 * Attempts at taking an arm request from uflags, which a process can
 * change between our read and our compare-and-exchange, as often as it
 * likes: past them the arm request counts as taken.
 */
#define SOFTRNIC_CQ_ARM_TRIES	4

/*
 * Take the arm request if @cqe satisfies it; cq->lock held.  If uflags
 * keeps changing under us, the completion handler runs anyway: a
 * spurious completion event is harmless (the consumer polls, finds what
 * there is and arms again), a lost one is not.
 */
static bool softrnic_cq_take_arm(struct softrnic_cq *cq, bool solicited,
				 u8 status)
{
	u32 *uflags = &cq->ring.ctrl->uflags;
	unsigned int tries = SOFTRNIC_CQ_ARM_TRIES;
	u32 old;

	/*
	 * Pairs with the consumer's fence between storing uflags and
	 * loading prod: either we see its arm request here, or it sees the
	 * CQE we just published and does not sleep.
	 */
	smp_mb();
	old = READ_ONCE(*uflags);
	while (sr_cq_arm_hit(old, solicited, status)) {
		if (try_cmpxchg(uflags, &old, 0) || !--tries)
			return true;
	}
	return false;
}

int softrnic_cq_post(struct softrnic_cq *cq, const struct softrnic_cqe *cqe,
		     bool solicited)
{
	struct softrnic_ring *ring;
	unsigned long flags;
	bool notify;
	u32 cons;

	spin_lock_irqsave(&cq->lock, flags);
	if (unlikely(cq->error)) {
		spin_unlock_irqrestore(&cq->lock, flags);
		return -EIO;
	}
	ring = &cq->ring;
	cons = softrnic_ring_load_cons(ring);
	/* A full ring, or a cons no honest consumer can produce. */
	if (unlikely(!sr_ring_sane(cq->prod, cons, ring->num_slots) ||
		     !sr_ring_free(cq->prod, cons, ring->num_slots))) {
		cq->error = true;
		softrnic_ring_kflags(ring, SOFTRNIC_KFLAG_ERROR, 0);
		spin_unlock_irqrestore(&cq->lock, flags);
		ibdev_warn_ratelimited(cq->ibcq.device,
				       "CQ %u overflow, CQ in error\n",
				       cq->cqn);
		set_bit(SOFTRNIC_CQ_EV_ERR, &cq->ev_pending);
		tasklet_schedule(&cq->notify);
		return -ENOSPC;
	}
	memcpy(softrnic_ring_slot(ring, cq->prod), cqe, sizeof(*cqe));
	softrnic_ring_store_prod(ring, ++cq->prod);
	notify = softrnic_cq_take_arm(cq, solicited, cqe->status);
	spin_unlock_irqrestore(&cq->lock, flags);

	/*
	 * ib_core guarantees the CQ outlives every QP posting to it, and QP
	 * destruction waits for its producers, so the CQ is alive here; its
	 * destruction waits for the tasklet.
	 */
	if (notify) {
		atomic_inc(&cq->comp_pending);
		tasklet_schedule(&cq->notify);
	}
	return 0;
}

static u32 softrnic_cq_slots_for(int cqe)
{
	if (cqe < 1)
		return 0;
	return sr_ring_slots_for(cqe, SOFTRNIC_MAX_CQE);
}

int softrnic_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		       struct ib_udata *udata)
{
	struct softrnic_dev *sdev = to_sdev(ibcq->device);
	struct softrnic_cq *cq = to_scq(ibcq);
	struct softrnic_create_cq_resp resp = {};
	u32 num_slots;
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	num_slots = softrnic_cq_slots_for(attr->cqe);
	if (!num_slots)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (atomic_inc_return(&sdev->cq_count) > SOFTRNIC_MAX_CQ) {
		err = -ENOMEM;
		goto err_count;
	}

	spin_lock_init(&cq->lock);
	tasklet_setup(&cq->notify, softrnic_cq_notify);
	cq->user = !!udata;
	cq->cqn = atomic_inc_return(&sdev->cqn_next);
	err = softrnic_ring_alloc(&cq->ring, num_slots, SOFTRNIC_CQE_SLOT_SIZE,
				  udata);
	if (err)
		goto err_count;
	ibcq->cqe = num_slots;

	if (udata) {
		softrnic_ring_info(&cq->ring, &resp.cq);
		resp.cqn = cq->cqn;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_ring;
	}
	return 0;

err_ring:
	softrnic_ring_free(&cq->ring);
err_count:
	atomic_dec(&sdev->cq_count);
	return err;
}

int softrnic_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct softrnic_cq *cq = to_scq(ibcq);

	/* No QP uses the CQ any more (ib_core's usecnt), so no producer. */
	tasklet_kill(&cq->notify);
	softrnic_ring_free(&cq->ring);
	atomic_dec(&to_sdev(ibcq->device)->cq_count);
	return 0;
}

/*
 * A new ring replaces the old one.  The unconsumed CQEs move to the same
 * counter positions in the new ring and prod, cons and uflags carry over,
 * so the consumer only switches its view (base, num_slots) and keeps its
 * cons: no CQE is lost or seen twice.  A process must not poll the CQ
 * while it resizes it (libibverbs' resize holds the CQ's lock).
 */
int softrnic_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct softrnic_cq *cq = to_scq(ibcq);
	struct softrnic_resize_cq_resp resp = {};
	struct softrnic_ring new, old;
	unsigned long flags;
	u32 num_slots, cons, c;
	int err;

	num_slots = softrnic_cq_slots_for(cqe);
	if (!num_slots)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (!!udata != cq->user)
		return -EINVAL;

	err = softrnic_ring_alloc(&new, num_slots, SOFTRNIC_CQE_SLOT_SIZE,
				  udata);
	if (err)
		return err;
	if (udata) {
		/* Before the switch: a failed copy leaves the CQ untouched. */
		softrnic_ring_info(&new, &resp.cq);
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_free;
	}

	spin_lock_irqsave(&cq->lock, flags);
	cons = softrnic_ring_load_cons(&cq->ring);
	if (!sr_ring_sane(cq->prod, cons, cq->ring.num_slots) ||
	    cq->prod - cons > num_slots) {
		spin_unlock_irqrestore(&cq->lock, flags);
		err = -EINVAL;
		goto err_free;
	}
	for (c = cons; c != cq->prod; c++)
		memcpy(softrnic_ring_slot(&new, c),
		       softrnic_ring_slot(&cq->ring, c),
		       sizeof(struct softrnic_cqe));
	new.ctrl->prod = cq->prod;
	new.ctrl->cons = cons;
	new.ctrl->kflags = READ_ONCE(cq->ring.ctrl->kflags);
	new.ctrl->uflags = READ_ONCE(cq->ring.ctrl->uflags);
	old = cq->ring;
	cq->ring = new;
	ibcq->cqe = num_slots;
	spin_unlock_irqrestore(&cq->lock, flags);

	softrnic_ring_free(&old);
	return 0;

err_free:
	softrnic_ring_free(&new);
	return err;
}

static enum ib_wc_opcode softrnic_wc_opcode(u8 opcode)
{
	switch (opcode) {
	case SOFTRNIC_WC_SEND:
		return IB_WC_SEND;
	case SOFTRNIC_WC_RDMA_WRITE:
		return IB_WC_RDMA_WRITE;
	case SOFTRNIC_WC_RDMA_READ:
		return IB_WC_RDMA_READ;
	case SOFTRNIC_WC_COMP_SWAP:
		return IB_WC_COMP_SWAP;
	case SOFTRNIC_WC_FETCH_ADD:
		return IB_WC_FETCH_ADD;
	case SOFTRNIC_WC_BIND_MW:
		return IB_WC_BIND_MW;
	case SOFTRNIC_WC_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case SOFTRNIC_WC_REG_MR:
		return IB_WC_REG_MR;
	case SOFTRNIC_WC_RECV:
		return IB_WC_RECV;
	case SOFTRNIC_WC_RECV_RDMA_WITH_IMM:
		return IB_WC_RECV_RDMA_WITH_IMM;
	default:
		/* FLUSH and ATOMIC_WRITE: never posted by kernel ULPs. */
		return IB_WC_SEND;
	}
}

/*
 * For poll_cq on a kernel CQ, under cq->lock: no reference is taken; the
 * QP cannot go away while one of its CQEs is in the CQ.
 */
static struct softrnic_qp *softrnic_qp_from_qpn(struct softrnic_dev *sdev,
						u32 qpn)
{
	return xa_load(&sdev->qp_xa, qpn);
}

static void softrnic_cqe_to_wc(struct softrnic_dev *sdev,
			       const struct softrnic_cqe *cqe, struct ib_wc *wc)
{
	struct softrnic_qp *qp;

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = softrnic_wc_opcode(cqe->opcode);
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	/* The QP cannot be gone: destroy_qp purges its CQEs first. */
	qp = softrnic_qp_from_qpn(sdev, cqe->qp_num);
	wc->qp = qp ? &qp->ibqp : NULL;
	wc->src_qp = cqe->src_qp;
	wc->pkey_index = cqe->pkey_index;
	wc->sl = cqe->sl;
	wc->port_num = 1;
	if (cqe->wc_flags & SOFTRNIC_WC_F_GRH)
		wc->wc_flags |= IB_WC_GRH;
	if (cqe->wc_flags & SOFTRNIC_WC_F_WITH_IMM) {
		wc->wc_flags |= IB_WC_WITH_IMM;
		wc->ex.imm_data = (__force __be32)cqe->ex;
	} else if (cqe->wc_flags & SOFTRNIC_WC_F_WITH_INV) {
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
		wc->ex.invalidate_rkey = cqe->ex;
	}
	if (cqe->network_hdr_type) {
		wc->wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
		wc->network_hdr_type = cqe->network_hdr_type;
	}
	if (cqe->wc_flags & SOFTRNIC_WC_F_SMAC) {
		wc->wc_flags |= IB_WC_WITH_SMAC;
		ether_addr_copy(wc->smac, cqe->smac);
	}
	if (cqe->wc_flags & SOFTRNIC_WC_F_VLAN) {
		wc->wc_flags |= IB_WC_WITH_VLAN;
		wc->vlan_id = cqe->vlan_id;
	}
}

int softrnic_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct softrnic_dev *sdev = to_sdev(ibcq->device);
	struct softrnic_cq *cq = to_scq(ibcq);
	struct softrnic_cqe cqe;
	unsigned long flags;
	int n = 0;
	u32 cons;

	/* A process consumes its CQ through the mapping only. */
	if (cq->user)
		return -EINVAL;

	spin_lock_irqsave(&cq->lock, flags);
	cons = cq->ring.ctrl->cons;
	while (n < num_entries && cons != cq->prod) {
		memcpy(&cqe, softrnic_ring_slot(&cq->ring, cons), sizeof(cqe));
		softrnic_cqe_to_wc(sdev, &cqe, &wc[n++]);
		cons++;
	}
	softrnic_ring_store_cons(&cq->ring, cons);
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

int softrnic_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct softrnic_cq *cq = to_scq(ibcq);
	u32 want, cons;
	unsigned long irqflags;
	int missed = 0;

	want = (flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED ?
		SOFTRNIC_CQ_ARM_SOLICITED : SOFTRNIC_CQ_ARM_NEXT;

	/* cq->lock keeps resize from swapping the ring under us. */
	spin_lock_irqsave(&cq->lock, irqflags);
	/*
	 * One atomic OR (a process may store to the word: no retry loop),
	 * fully ordered: the arm is visible before we look.
	 */
	smp_mb__before_atomic();
	atomic_or(want, (atomic_t *)&cq->ring.ctrl->uflags);
	smp_mb__after_atomic();
	if (flags & IB_CQ_REPORT_MISSED_EVENTS) {
		cons = softrnic_ring_load_cons(&cq->ring);
		missed = cons != cq->prod;
	}
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return missed;
}

/*
 * destroy_qp of a kernel QP: its CQEs leave the CQ so that poll_cq never
 * reports a QP that is gone.  A kernel QP moved to RESET: the same, except
 * for receive completions of a QP on an SRQ if @keep_recv (their WRs were
 * the SRQ's), so that the completions of its previous life are not polled
 * as those of the WRs posted after it is brought up again (ConnectX does
 * the same; a process's CQ is purged by the provider, which consumes it).
 * Order is kept for everything else.
 */
void softrnic_cq_purge_qp(struct softrnic_cq *cq, u32 qpn, bool keep_recv)
{
	struct softrnic_cqe *cqe;
	unsigned long flags;
	u32 r, w, cons;

	if (cq->user)
		return;
	spin_lock_irqsave(&cq->lock, flags);
	cons = cq->ring.ctrl->cons;
	for (r = w = cons; r != cq->prod; r++) {
		cqe = softrnic_ring_slot(&cq->ring, r);
		if (cqe->qp_num == qpn &&
		    !(keep_recv && (cqe->opcode & SOFTRNIC_WC_RECV)))
			continue;
		if (r != w)
			memcpy(softrnic_ring_slot(&cq->ring, w), cqe,
			       sizeof(*cqe));
		w++;
	}
	cq->prod = w;
	softrnic_ring_store_prod(&cq->ring, w);
	spin_unlock_irqrestore(&cq->lock, flags);
}
