// SPDX-License-Identifier: GPL-2.0
/*
 * The RC transport's side of a QP's life: its state next to the verbs
 * QP, what each state change means for it, and the hand-off of send WQEs
 * from the SQ worker.
 *
 * States: the responder runs in RTR, RTS and SQD, the requester in RTS
 * and SQD (it keeps answering ACKs in SQD; the core stops feeding it).
 * Entering RTR starts the responder at rq_psn, entering RTS from RTR the
 * requester at sq_psn.  ERR and RESET stop both: timers are cancelled,
 * in-flight WQEs are forgotten (the core flushes or discards them) and a
 * receive WQE taken for a half-received message is flushed (ERR) or
 * dropped (RESET).
 *
 * Teardown (roce_qp_fini, from destroy_qp once no packet handler holds
 * the QP): mark dying so nothing re-arms a timer or re-queues a work
 * item, then del_timer_sync and cancel_work_sync until nothing is left.
 */
#include <rdma/ib_cache.h>

#include "roce.h"

/*
 * Where packets from source GID @sgid to @dgid go: the addresses, the
 * egress netdev and the IP header fields.  false if the pair is not one
 * RoCEv2 can carry (no RoCEv2 source GID, IP versions that differ).
 * @sport is left to the caller: it depends on the QPs that talk.
 */
bool roce_path_set(struct roce_path *p, const struct ib_gid_attr *sgid,
		   const union ib_gid *dgid, u8 tclass, u8 hop_limit,
		   u32 flow_label)
{
	struct net_device *ndev;

	memset(p, 0, sizeof(*p));
	if (!sgid || sgid->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return false;
	if (rdma_gid_attr_network_type(sgid) == RDMA_NETWORK_IPV4) {
		if (!ipv6_addr_v4mapped((const struct in6_addr *)dgid->raw))
			return false;
		memcpy(&p->saddr4, &sgid->gid.raw[12], 4);
		memcpy(&p->daddr4, &dgid->raw[12], 4);
	} else {
		p->ipv6 = true;
		memcpy(&p->saddr6, sgid->gid.raw, sizeof(p->saddr6));
		memcpy(&p->daddr6, dgid->raw, sizeof(p->daddr6));
	}
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(sgid);
	if (!IS_ERR(ndev))
		p->ifindex = ndev->ifindex;
	rcu_read_unlock();
	p->tos = tclass;
	p->ttl = hop_limit ? hop_limit : 64;
	p->flow_label = flow_label;
	p->valid = true;
	return true;
}

/* The AV as the transmit path needs it; qp->mutex held. */
static void roce_path_update(struct roce_qp *rqp)
{
	struct softrnic_qp *qp = rqp->qp;
	const struct rdma_ah_attr *ah = &qp->attr.ah_attr;
	const struct ib_global_route *grh;
	struct roce_path p = {};

	if (rdma_ah_get_ah_flags(ah) & IB_AH_GRH) {
		grh = rdma_ah_read_grh(ah);
		if (roce_path_set(&p, grh->sgid_attr, &grh->dgid,
				  grh->traffic_class, grh->hop_limit,
				  grh->flow_label))
			p.sport = htons(rdma_get_udp_sport(grh->flow_label,
							   qp->ibqp.qp_num,
							   qp->attr.dest_qp_num));
	}
	/* Readers run in softirq: keep them off this CPU while writing. */
	p.gen = rqp->path.gen + 1;	/* writers hold qp->mutex */
	write_seqlock_bh(&rqp->path_lock);
	rqp->path = p;
	write_sequnlock_bh(&rqp->path_lock);
	/* Routes of the old path are not used again (roce_xmit). */
	dst_cache_reset(&rqp->dst_cache);
}

int roce_qp_init(struct softrnic_qp *qp)
{
	struct roce_qp *rqp;

	if (qp->kind != SR_QP_RC)
		return roce_ud_init(qp);
	rqp = kzalloc(sizeof(*rqp), softrnic_gfp(qp->user));
	if (!rqp)
		return -ENOMEM;
	rqp->qp = qp;
	seqlock_init(&rqp->path_lock);
	rqp->req.nslots = min_t(u32, qp->sq.num_slots, ROCE_RWQE_MAX);
	rqp->req.rwqe = kvcalloc(rqp->req.nslots, sizeof(*rqp->req.rwqe),
				 softrnic_gfp(qp->user));
	rqp->resp.res = kcalloc(ROCE_NRES, sizeof(*rqp->resp.res),
				softrnic_gfp(qp->user));
	if (!rqp->req.rwqe || !rqp->resp.res ||
	    dst_cache_init(&rqp->dst_cache, GFP_KERNEL)) {
		kvfree(rqp->req.rwqe);
		kfree(rqp->resp.res);
		kfree(rqp);
		return -ENOMEM;
	}
	roce_req_init(rqp);
	roce_resp_init(rqp);
	roce_steer_qp_init(rqp);
	qp->wire_priv = rqp;
	return 0;
}

void roce_qp_fini(struct softrnic_qp *qp)
{
	struct roce_qp *rqp = roce_qp(qp);

	if (qp->kind != SR_QP_RC) {
		roce_ud_fini(qp);
		return;
	}
	WRITE_ONCE(rqp->dying, true);
	roce_req_stop(rqp);
	roce_resp_stop(rqp, false);
	/*
	 * Timers queue the work items and the work items arm timers; with
	 * dying set neither happens any more, so two rounds suffice.
	 */
	del_timer_sync(&rqp->req.rto);
	del_timer_sync(&rqp->req.rnr);
	cancel_work_sync(&rqp->req.work);
	cancel_work_sync(&rqp->resp.work);
	del_timer_sync(&rqp->req.rto);
	del_timer_sync(&rqp->req.rnr);
	roce_steer_qp_fini(rqp);

	qp->wire_priv = NULL;
	dst_cache_destroy(&rqp->dst_cache);
	kvfree(rqp->req.rwqe);
	kfree(rqp->resp.res);
	kfree(rqp);
}

void roce_qp_modify(struct softrnic_qp *qp, int mask, enum ib_qp_state cur)
{
	struct roce_qp *rqp = roce_qp(qp);
	enum ib_qp_state state = qp->state;

	if (qp->kind != SR_QP_RC) {
		roce_ud_modify(qp, cur);
		return;
	}
	if (mask & (IB_QP_AV | IB_QP_DEST_QPN))
		roce_path_update(rqp);

	switch (state) {
	case IB_QPS_RTR:
		if (cur != IB_QPS_RTR)
			roce_resp_start(rqp);
		break;
	case IB_QPS_RTS:
		if (cur == IB_QPS_RTR)
			roce_req_start(rqp);
		break;
	case IB_QPS_ERR:
		roce_req_stop(rqp);
		roce_resp_stop(rqp, true);
		roce_steer_purge(rqp);
		break;
	case IB_QPS_RESET:
		roce_req_stop(rqp);
		roce_resp_stop(rqp, false);
		roce_steer_purge(rqp);
		break;
	default:
		break;
	}
}

int roce_sq_xmit(struct softrnic_qp *qp, const struct softrnic_swqe *wqe)
{
	struct roce_qp *rqp = roce_qp(qp);
	int ret;

	if (qp->kind != SR_QP_RC)
		return roce_ud_xmit(qp, wqe);
	ret = roce_req_take(rqp, wqe);
	if (ret)
		return ret;
	roce_req_tx(rqp);
	return 0;
}
