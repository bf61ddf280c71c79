// SPDX-License-Identifier: GPL-2.0
/*
 * UD and the GSI QP on RoCEv2: one datagram per send WQE, one packet per
 * datagram (SEND ONLY, with DETH), no acknowledgement, no PSN check.
 *
 * Send (SQ worker, qp->mutex): the WQE names its destination by AH
 * number, remote QPN and Q_Key.  The AV must belong to the QP's PD, the
 * message fit the port's path MTU.  A Q_Key with its high bit set is
 * "controlled": the QP's own Q_Key goes on the wire instead (IBTA
 * 10.2.5), which is how the GSI QP sends with 0x80010000 and how a
 * process without CAP_NET_RAW is kept from forging one (modify_qp
 * refuses it such a QP Q_Key).  The WQE completes once the packet is
 * handed to the IP stack: a datagram lost after that (no route, a full
 * queue) is lost as on any network, and counted.
 *
 * Receive (softirq, rx_lock): the QP must be in RTR, RTS or SQD, the
 * Q_Key match (the P_Key, like every packet's, was checked by
 * roce_rcv_deliver()).  The receive WQE gets the 40-byte GRH area and
 * then the payload: for IPv6 the IPv6 header as received, for IPv4 20
 * zero bytes and then the IPv4 header (RoCEv2 annex A17.4.5.1), which is
 * how libibverbs' ibv_init_ah_from_wc and ib_core tell them apart.  No
 * receive WQE posted: the datagram is dropped (UD has no RNR).  One too
 * short for GRH plus payload completes with IB_WC_LOC_LEN_ERR.  The GSI
 * QP takes MADs only (at most 256 bytes): ib_mad does not repost a
 * receive that completes in error, so an oversize datagram from a peer
 * must not consume one of its buffers.
 */
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_mad.h>

#include "roce.h"

/* The GRH area at the head of every UD receive buffer. */
#define ROCE_UD_GRH_LEN		sizeof(struct ib_grh)

int roce_ud_init(struct softrnic_qp *qp)
{
	struct roce_ud *ud;

	ud = kzalloc(sizeof(*ud), GFP_KERNEL);
	if (!ud)
		return -ENOMEM;
	if (dst_cache_init(&ud->dst_cache, GFP_KERNEL)) {
		kfree(ud);
		return -ENOMEM;
	}
	ud->qp = qp;
	spin_lock_init(&ud->rx_lock);
	qp->wire_priv = ud;
	return 0;
}

/* destroy_qp: no receiver holds the QP any more, the SQ worker is idle. */
void roce_ud_fini(struct softrnic_qp *qp)
{
	struct roce_ud *ud = roce_ud(qp);

	qp->wire_priv = NULL;
	if (ud->av)
		softrnic_ah_put(ud->av);
	dst_cache_destroy(&ud->dst_cache);
	kfree(ud);
}

void roce_ud_modify(struct softrnic_qp *qp, enum ib_qp_state cur)
{
	struct roce_ud *ud = roce_ud(qp);
	enum ib_qp_state state = qp->state;
	unsigned long flags;

	spin_lock_irqsave(&ud->rx_lock, flags);
	ud->rx_active = state == IB_QPS_RTR || state == IB_QPS_RTS ||
			state == IB_QPS_SQD;
	spin_unlock_irqrestore(&ud->rx_lock, flags);
	if (state == IB_QPS_RTS && cur == IB_QPS_RTR)
		ud->psn = qp->attr.sq_psn & ROCE_PSN_MASK;
}

/* The largest datagram the port carries now. */
static u32 roce_ud_mtu(const struct softrnic_qp *qp)
{
	enum ib_mtu m = iboe_get_mtu(READ_ONCE(qp->sdev->netdev->mtu));

	return ib_mtu_enum_to_int(m ? m : IB_MTU_256);
}

/*
 * Point path and dst_cache at @av, which the caller holds a reference
 * on and hands over.  Consecutive sends to one AH reuse the route.
 */
static void roce_ud_route(struct roce_ud *ud, struct softrnic_av *av)
{
	if (ud->av == av) {
		softrnic_ah_put(av);
		return;
	}
	if (ud->av)
		softrnic_ah_put(ud->av);
	ud->av = av;
	roce_path_set(&ud->path, av->sgid_attr, &av->dgid, av->traffic_class,
		      av->hop_limit, av->flow_label);
	dst_cache_reset(&ud->dst_cache);
}

int roce_ud_xmit(struct softrnic_qp *qp, const struct softrnic_swqe *wqe)
{
	const struct softrnic_sqe *sqe = &wqe->sqe;
	struct softrnic_pd *pd = to_spd(qp->ibqp.pd);
	struct roce_ud *ud = roce_ud(qp);
	struct roce_pkt pkt = {};
	struct softrnic_av *av;
	struct sk_buff *skb;
	void *payload;
	u32 qkey;
	u64 len;
	int err;

	if (sqe->flags & SOFTRNIC_WQE_F_INLINE)
		len = sqe->ud.inline_len;
	else
		len = sr_sge_total(wqe->sge, sqe->num_sge, U32_MAX);
	if (len > roce_ud_mtu(qp))
		return IB_WC_LOC_LEN_ERR;
	av = softrnic_ah_get(qp->sdev, sqe->ud.ah_num, pd);
	if (IS_ERR(av))
		return IB_WC_LOC_QP_OP_ERR;
	roce_ud_route(ud, av);

	qkey = sqe->ud.remote_qkey;
	if (qkey & IB_QP_SET_QKEY)		/* controlled: the QP's */
		qkey = qp->attr.qkey;
	pkt.opcode = sqe->opcode == SOFTRNIC_WR_SEND_WITH_IMM ?
		     ROCE_UD_SEND_ONLY_WITH_IMMEDIATE : ROCE_UD_SEND_ONLY;
	if (sqe->flags & SOFTRNIC_WQE_F_SOLICITED)
		pkt.bth_flags |= ROCE_PKT_SE;
	pkt.dest_qpn = sqe->ud.remote_qpn & ROCE_QPN_MASK;
	pkt.psn = ud->psn;
	ud->psn = roce_psn_add(ud->psn, 1);
	pkt.deth.qkey = qkey;
	pkt.deth.src_qpn = qp->ibqp.qp_num;
	pkt.imm = be32_to_cpu((__force __be32)sqe->ex);
	pkt.payload_len = len;

	skb = roce_alloc_skb(qp, &pkt, &payload);
	if (!skb) {
		/* No memory: the datagram is lost, as in a full queue. */
		roce_qp_count(qp, ROCE_CNT_DROP_OUTPUT, 1);
		goto done;
	}
	if (sqe->flags & SOFTRNIC_WQE_F_INLINE) {
		memcpy(payload, wqe->inline_data, len);
	} else if (len) {
		/* MR accesses run softirq-safe (mem.h: inflight) */
		local_bh_disable();
		err = softrnic_copy_sges(qp->sdev, pd, wqe->sge, sqe->num_sge,
					 0, payload, len,
					 SOFTRNIC_COPY_FROM_MR);
		local_bh_enable();
		if (err) {
			kfree_skb(skb);
			return softrnic_mem_wc_status(err, false);
		}
	}
	ud->path.sport = htons(rdma_get_udp_sport(av->flow_label,
						  qp->ibqp.qp_num,
						  pkt.dest_qpn));
	if (!roce_xmit_path(qp, &ud->path, &ud->dst_cache, NULL, skb))
		roce_qp_count(qp, ROCE_CNT_UD_SENDS, 1);
done:
	softrnic_sq_complete(qp, wqe->index, IB_WC_SUCCESS, len);
	return 0;
}

/* The GRH area of a datagram in @skb (network header set). */
static void roce_ud_grh(const struct sk_buff *skb, u8 *grh)
{
	if (skb->protocol == htons(ETH_P_IP)) {
		memset(grh, 0, ROCE_UD_GRH_LEN - sizeof(struct iphdr));
		memcpy(grh + ROCE_UD_GRH_LEN - sizeof(struct iphdr),
		       skb_network_header(skb), sizeof(struct iphdr));
	} else {
		memcpy(grh, skb_network_header(skb), sizeof(struct ipv6hdr));
	}
}

/*
 * Source MAC and VLAN of a received datagram, for kernel consumers that
 * answer it (ib_init_ah_attr_from_wc).  A packet from this host (the
 * loopback queue, or the loopback device) has no Ethernet source of its
 * own: it is the receiving netdev's address.
 */
static void roce_ud_l2(const struct softrnic_dev *sdev,
		       const struct sk_buff *skb, struct softrnic_cqe *cqe)
{
	const struct net_device *dev = skb->dev;

	if (dev && skb_mac_header_was_set(skb) &&
	    skb_mac_header_len(skb) >= ETH_HLEN && dev->type == ARPHRD_ETHER &&
	    !(dev->flags & IFF_LOOPBACK))
		ether_addr_copy(cqe->smac, eth_hdr(skb)->h_source);
	else
		ether_addr_copy(cqe->smac, sdev->netdev->dev_addr);
	cqe->wc_flags |= SOFTRNIC_WC_F_SMAC;
	if (dev && is_vlan_dev(dev)) {
		cqe->vlan_id = vlan_dev_vlan_id(dev);
		cqe->wc_flags |= SOFTRNIC_WC_F_VLAN;
	}
}

/* Place a datagram into ud->rqe; rx_lock held.  Returns the CQE status. */
static enum ib_wc_status roce_ud_place(struct roce_ud *ud,
				       const struct roce_pkt *pkt,
				       const struct sk_buff *skb, u32 bth_off)
{
	struct softrnic_qp *qp = ud->qp;
	const struct softrnic_krqe *rqe = &ud->rqe;
	u8 grh[ROCE_UD_GRH_LEN];
	int err;

	if (softrnic_krqe_bytes(rqe) < ROCE_UD_GRH_LEN + (u64)pkt->payload_len)
		return IB_WC_LOC_LEN_ERR;
	roce_ud_grh(skb, grh);
	err = softrnic_copy_sges(qp->sdev, to_spd(qp->ibqp.pd), rqe->sge,
				 rqe->rqe.num_sge, 0, grh, sizeof(grh),
				 SOFTRNIC_COPY_TO_MR);
	if (!err)
		err = softrnic_skb_to_sges(qp, skb, bth_off + pkt->payload_off,
					   pkt->payload_len, rqe->sge,
					   rqe->rqe.num_sge, ROCE_UD_GRH_LEN);
	if (err)
		return softrnic_mem_wc_status(err, false);
	return IB_WC_SUCCESS;
}

/*
 * Deliver a UD packet (ICRC checked, parsed) to @qp (held by the caller)
 * or, NULL, to nobody.  Softirq; @skb stays the caller's.  Returns
 * whether a receive WQE took it (false: dropped, and counted).
 */
bool roce_ud_deliver(struct softrnic_dev *sdev, struct softrnic_qp *qp,
		     const struct roce_pkt *pkt, const struct sk_buff *skb,
		     u32 bth_off)
{
	struct softrnic_cqe cqe = {};
	enum ib_wc_status status;
	struct roce_ud *ud;
	unsigned long flags;
	int err;

	if (!qp || qp->kind != SR_QP_UD) {
		roce_count(sdev, ROCE_CNT_DROP_UNKNOWN_QP, 1);
		return false;
	}
	ud = roce_ud(qp);
	if (pkt->deth.qkey != READ_ONCE(qp->attr.qkey)) {
		roce_qp_count(qp, ROCE_CNT_DROP_QKEY, 1);
		return false;
	}
	if (qp->ibqp.qp_type == IB_QPT_GSI &&
	    pkt->payload_len > IB_MGMT_MAD_SIZE) {
		roce_count(sdev, ROCE_CNT_DROP_LENGTH, 1);
		return false;
	}

	spin_lock_irqsave(&ud->rx_lock, flags);
	if (!ud->rx_active) {
		spin_unlock_irqrestore(&ud->rx_lock, flags);
		roce_qp_count(qp, ROCE_CNT_DROP_QP_STATE, 1);
		return false;
	}
	err = softrnic_rq_get(qp, &ud->rqe);
	if (err) {
		spin_unlock_irqrestore(&ud->rx_lock, flags);
		/* -EIO: a corrupt RQ, and the core moves the QP to ERR */
		if (err == -ENOENT)
			roce_qp_count(qp, ROCE_CNT_DROP_NO_RECV, 1);
		return false;
	}
	status = roce_ud_place(ud, pkt, skb, bth_off);
	cqe.wr_id = ud->rqe.rqe.wr_id;
	cqe.status = status;
	cqe.opcode = SOFTRNIC_WC_RECV;
	cqe.qp_num = qp->ibqp.qp_num;
	if (status == IB_WC_SUCCESS) {
		cqe.byte_len = ROCE_UD_GRH_LEN + pkt->payload_len;
		cqe.src_qp = pkt->deth.src_qpn;
		cqe.wc_flags = SOFTRNIC_WC_F_GRH;
		if (pkt->info->flags & ROCE_OPF_IMM) {
			cqe.wc_flags |= SOFTRNIC_WC_F_WITH_IMM;
			cqe.ex = (__force u32)cpu_to_be32(pkt->imm);
		}
		cqe.network_hdr_type = skb->protocol == htons(ETH_P_IP) ?
				       RDMA_NETWORK_IPV4 : RDMA_NETWORK_IPV6;
		roce_ud_l2(sdev, skb, &cqe);
		roce_qp_count(qp, ROCE_CNT_UD_RECVS, 1);
	} else {
		/* In ERR before the error CQE can be polled. */
		softrnic_qp_error_mark(qp, false);
	}
	softrnic_cq_post(softrnic_qp_rcq(qp), &cqe,
			 pkt->bth_flags & ROCE_PKT_SE);
	spin_unlock_irqrestore(&ud->rx_lock, flags);
	if (status != IB_WC_SUCCESS)
		softrnic_qp_error(qp, false);
	return true;
}

/*
 * A UD packet for the QP its BTH names (@qp, held by the caller, or NULL)
 * or, with the multicast QPN, for the QPs attached to its group.
 * Softirq; consumes @skb.
 */
void roce_ud_rcv(struct softrnic_dev *sdev, struct softrnic_qp *qp,
		 const struct roce_pkt *pkt, struct sk_buff *skb, u32 bth_off)
{
	bool placed;

	if (pkt->dest_qpn == ROCE_MCAST_QPN)
		placed = roce_mcast_rcv(sdev, pkt, skb, bth_off);
	else
		placed = roce_ud_deliver(sdev, qp, pkt, skb, bth_off);
	if (placed)
		consume_skb(skb);
	else
		kfree_skb(skb);
}
