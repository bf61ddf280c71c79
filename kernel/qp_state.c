// SPDX-License-Identifier: GPL-2.0
/*
 * The QP state machine: modify_qp, the move to ERR and the events it
 * raises, and the QP's work item, which acts on the state.  Every state
 * change happens under qp->mutex; other contexts read qp->state with
 * READ_ONCE and report errors through softrnic_qp_error(), which the
 * QP's worker turns into a state change.
 *
 * A modify either applies completely or not at all: every attribute is
 * checked before anything is stored.
 */
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>

#include "queue.h"

/*
 * Everything we keep.  ib_core bans IB_QP_ALT_PATH on our ports; the
 * migration state is kept and reported like any attribute (there is no
 * alternate path to migrate to).
 */
#define SOFTRNIC_QP_ATTR_MASK (IB_QP_STATE | IB_QP_CUR_STATE | \
	IB_QP_EN_SQD_ASYNC_NOTIFY | IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX | \
	IB_QP_PORT | IB_QP_QKEY | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_TIMEOUT | \
	IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_RQ_PSN | \
	IB_QP_MAX_QP_RD_ATOMIC | IB_QP_MIN_RNR_TIMER | IB_QP_SQ_PSN | \
	IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_DEST_QPN | IB_QP_PATH_MIG_STATE)

static void softrnic_qp_event(struct softrnic_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/* Events noted under locks, raised without any; the worker calls this. */
void softrnic_qp_raise_events(struct softrnic_qp *qp)
{
	if (test_bit(SOFTRNIC_QP_DYING, &qp->flags))
		return;
	if (test_and_clear_bit(SOFTRNIC_QP_EV_FATAL, &qp->flags))
		softrnic_qp_event(qp, IB_EVENT_QP_FATAL);
	if (test_and_clear_bit(SOFTRNIC_QP_EV_SQ_DRAINED, &qp->flags))
		softrnic_qp_event(qp, IB_EVENT_SQ_DRAINED);
	if (test_and_clear_bit(SOFTRNIC_QP_EV_REQ_ERR, &qp->flags))
		softrnic_qp_event(qp, IB_EVENT_QP_REQ_ERR);
	if (test_and_clear_bit(SOFTRNIC_QP_EV_ACCESS_ERR, &qp->flags))
		softrnic_qp_event(qp, IB_EVENT_QP_ACCESS_ERR);
	/* After the error events: the QP is done with the SRQ. */
	if (test_and_clear_bit(SOFTRNIC_QP_EV_LAST_WQE, &qp->flags))
		softrnic_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
}

/*
 * To ERR: stop the wire, then flush.  The state is stored before the
 * ERROR flag, whose update is a full fence before the flush loads the
 * producers: a producer that stores prod, fences and then finds the QP
 * in neither state nor flag has had its WQE seen by this flush (post.c,
 * and the RQ doorbell protocol in Documentation/ring-abi.md).
 *
 * The wire goes first: once qp_modify returned, its requester and
 * responder are stopped (nothing takes a receive WQE or completes a
 * send WQE any more) and the receive WQE of a half-received message has
 * been flushed, ahead of the RQ's later WQEs, as it was consumed first.
 * Flushing first would let the responder take a WQE posted after the
 * flush read prod and complete it with success in ERR.
 *
 * A QP on an SRQ then consumes no more SRQ WQEs: IB_EVENT_QP_LAST_WQE_-
 * REACHED (IBTA 11.6.3.1), raised with the other events, without locks.
 */
void softrnic_qp_to_error(struct softrnic_qp *qp)
{
	lockdep_assert_held(&qp->mutex);
	WRITE_ONCE(qp->state, IB_QPS_ERR);
	softrnic_ring_kflags(&qp->sq, SOFTRNIC_KFLAG_ERROR, 0);
	softrnic_ring_kflags(&qp->rq, SOFTRNIC_KFLAG_ERROR, 0);
	/* The transport stops its timers and forgets what is in flight. */
	if (qp->sdev->wire->qp_modify)
		qp->sdev->wire->qp_modify(qp, IB_QP_STATE, IB_QPS_ERR);
	softrnic_qp_flush(qp);
	if (qp->ibqp.srq)
		set_bit(SOFTRNIC_QP_EV_LAST_WQE, &qp->flags);
}

static int softrnic_qp_check_attrs(struct softrnic_qp *qp,
				   const struct ib_qp_attr *attr, int mask,
				   enum ib_qp_state cur, enum ib_qp_state next)
{
	struct softrnic_dev *sdev = qp->sdev;

	if (mask & ~SOFTRNIC_QP_ATTR_MASK)
		return -EOPNOTSUPP;
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != qp->state)
		return -EINVAL;
	if (!sdev->wire->qp_transition_ok(qp, cur, next, mask))
		return -EINVAL;

	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) &&
	    attr->pkey_index >= SOFTRNIC_PKEY_TBL_LEN)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > SOFTRNIC_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > SOFTRNIC_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MIG_STATE) &&
	    attr->path_mig_state > IB_MIG_ARMED)
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > 0xffffff)
		return -EINVAL;
	/* A controlled Q_Key (high bit set) is for privileged users only. */
	if ((mask & IB_QP_QKEY) && (attr->qkey & IB_QP_SET_QKEY) && qp->user &&
	    !capable(CAP_NET_RAW))
		return -EPERM;
	if ((mask & IB_QP_SQ_PSN) && attr->sq_psn > 0xffffff)
		return -EINVAL;
	if ((mask & IB_QP_RQ_PSN) && attr->rq_psn > 0xffffff)
		return -EINVAL;
	if (mask & IB_QP_AV) {
		if (rdma_ah_get_port_num(&attr->ah_attr) != 1)
			return -EINVAL;
		/* The path is the GRH (RoCE); ib_core resolved its sgid. */
		if (sdev->wire->av_needs_grh &&
		    (!(rdma_ah_get_ah_flags(&attr->ah_attr) & IB_AH_GRH) ||
		     !attr->ah_attr.grh.sgid_attr))
			return -EINVAL;
	}
	return 0;
}

static void softrnic_qp_store_attrs(struct softrnic_qp *qp,
				    const struct ib_qp_attr *attr, int mask)
{
	struct softrnic_qp_attrs *a = &qp->attr;

	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		a->en_sqd_async_notify = attr->en_sqd_async_notify;
	if (mask & IB_QP_ACCESS_FLAGS)
		a->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & IB_QP_PORT)
		a->port_num = attr->port_num;
	if (mask & IB_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & IB_QP_AV)
		rdma_replace_ah_attr(&a->ah_attr, &attr->ah_attr);
	if (mask & IB_QP_PATH_MTU)
		a->path_mtu = min(attr->path_mtu,
				  softrnic_active_mtu(qp->sdev));
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num;
	if (mask & IB_QP_PATH_MIG_STATE)
		a->path_mig_state = attr->path_mig_state;
}

/* Entering SQD: SQ_DRAINED once nothing is in flight, if asked for. */
static void softrnic_qp_enter_sqd(struct softrnic_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq_lock, flags);
	WRITE_ONCE(qp->state, IB_QPS_SQD);
	qp->sqd_notify = false;
	if (qp->attr.en_sqd_async_notify) {
		if (qp->sq_cons == qp->sq_next) {
			set_bit(SOFTRNIC_QP_EV_SQ_DRAINED, &qp->flags);
			softrnic_qp_kick(qp);
		} else {
			qp->sqd_notify = true;
		}
	}
	spin_unlock_irqrestore(&qp->sq_lock, flags);
}

static void softrnic_qp_set_state(struct softrnic_qp *qp,
				  enum ib_qp_state cur, enum ib_qp_state next)
{
	switch (next) {
	case IB_QPS_RESET:
		softrnic_qp_discard(qp);
		WRITE_ONCE(qp->state, IB_QPS_RESET);
		break;
	case IB_QPS_ERR:
		softrnic_qp_to_error(qp);
		break;
	case IB_QPS_SQD:
		softrnic_qp_enter_sqd(qp);
		break;
	case IB_QPS_RTS:
		WRITE_ONCE(qp->state, IB_QPS_RTS);
		/* WQEs may have been posted before RTS, or while in SQD. */
		if (cur != IB_QPS_RTS)
			softrnic_qp_kick(qp);
		break;
	default:
		WRITE_ONCE(qp->state, next);
		break;
	}
}

int softrnic_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		       int mask, struct ib_udata *udata)
{
	struct softrnic_qp *qp = to_sqp(ibqp);
	enum ib_qp_state cur, next;
	int err;

	mutex_lock(&qp->mutex);
	cur = qp->state;
	next = mask & IB_QP_STATE ? attr->qp_state : cur;
	if (cur == IB_QPS_ERR && next == IB_QPS_SQD && mask == IB_QP_STATE &&
	    qp->sdev->wire->sqd_in_err_ok) {
		mutex_unlock(&qp->mutex);
		return 0;
	}
	err = softrnic_qp_check_attrs(qp, attr, mask, cur, next);
	if (err) {
		mutex_unlock(&qp->mutex);
		return err;
	}
	softrnic_qp_store_attrs(qp, attr, mask);
	if (mask & IB_QP_STATE)
		softrnic_qp_set_state(qp, cur, next);
	if (qp->sdev->wire->qp_modify && next != IB_QPS_ERR)
		qp->sdev->wire->qp_modify(qp, mask, cur);
	if (next == IB_QPS_RESET && cur != IB_QPS_RESET) {
		/* Nothing produces for the QP any more (wire stopped above). */
		softrnic_cq_purge_qp(softrnic_qp_scq(qp), ibqp->qp_num,
				     !!ibqp->srq);
		if (ibqp->recv_cq != ibqp->send_cq)
			softrnic_cq_purge_qp(softrnic_qp_rcq(qp), ibqp->qp_num,
					     !!ibqp->srq);
	}
	mutex_unlock(&qp->mutex);
	/* What the move to ERR noted (LAST_WQE_REACHED), without the mutex. */
	softrnic_qp_raise_events(qp);
	return 0;
}

/*
 * What the QP's work item does, qp->mutex held: pending errors, then, by
 * state, SQ consumption or flushing, until no error is pending.  Returns
 * true if the SQ budget ran out and the worker should run again.  The
 * caller raises events after dropping qp->mutex, so a handler may call
 * back into verbs on this QP.  Also run by the SQ doorbell of a process
 * (post.c): an error the wire reported while the doorbell transmitted
 * (a NAK in the softirq of its own transmit) moves the QP to ERR before
 * the system call returns, as it did when the worker transmitted.
 */
static bool softrnic_qp_run(struct softrnic_qp *qp)
{
	bool again = false;

	lockdep_assert_held(&qp->mutex);
	for (;;) {
		if (test_and_clear_bit(SOFTRNIC_QP_FATAL_PENDING, &qp->flags)) {
			clear_bit(SOFTRNIC_QP_ERR_PENDING, &qp->flags);
			if (qp->state != IB_QPS_RESET &&
			    qp->state != IB_QPS_ERR) {
				set_bit(SOFTRNIC_QP_EV_FATAL, &qp->flags);
				softrnic_qp_to_error(qp);
			}
		}
		if (test_and_clear_bit(SOFTRNIC_QP_ERR_PENDING, &qp->flags) &&
		    qp->state != IB_QPS_RESET)
			softrnic_qp_to_error(qp);

		/* In ERR this is the doorbell: flush what was posted since. */
		if (qp->state == IB_QPS_ERR)
			softrnic_qp_flush(qp);
		else if (qp->state == IB_QPS_RTS)
			again = softrnic_sq_drain(qp);
		if (!test_bit(SOFTRNIC_QP_FATAL_PENDING, &qp->flags) &&
		    !test_bit(SOFTRNIC_QP_ERR_PENDING, &qp->flags))
			break;
	}
	return again;
}

/*
 * With qp->mutex held (taken by the worker or the doorbell): run the QP
 * unless it is dying, drop the mutex, raise the events it produced and
 * queue the worker if the SQ budget ran out.
 */
void softrnic_qp_run_unlock(struct softrnic_qp *qp)
{
	bool again;

	lockdep_assert_held(&qp->mutex);
	if (test_bit(SOFTRNIC_QP_DYING, &qp->flags)) {
		mutex_unlock(&qp->mutex);
		return;
	}
	again = softrnic_qp_run(qp);
	mutex_unlock(&qp->mutex);

	softrnic_qp_raise_events(qp);
	if (again)
		softrnic_qp_kick(qp);
}

/* The QP's work item. */
void softrnic_qp_work(struct work_struct *work)
{
	struct softrnic_qp *qp = container_of(work, struct softrnic_qp, work);

	mutex_lock(&qp->mutex);
	softrnic_qp_run_unlock(qp);
}
