// SPDX-License-Identifier: GPL-2.0
/*
 * RC responder: executes request packets in PSN order and answers them.
 *
 * Receive (softirq, resp.lock): a packet's PSN is compared with epsn.
 *  - Ahead: a packet was lost.  One PSN sequence error NAK (for epsn) per
 *    gap; the packet is dropped.
 *  - Behind: a duplicate.  SEND/WRITE are acknowledged again, never
 *    executed again; a duplicate READ is executed again from its PSN
 *    with the addresses it carries; a duplicate atomic gets the original
 *    value saved when it first executed (resp.res); a duplicate FLUSH or
 *    ATOMIC WRITE gets its zero-length READ RESPONSE again.
 *  - Equal: checked (opcode sequence, lengths against the path MTU, QP
 *    access flags, rkey and bounds over the whole request before the
 *    first byte is written), executed, epsn advanced.
 * Errors: a missing receive WQE is an RNR NAK (epsn stays, the requester
 * retries); a bad rkey, bounds or rights is a Remote Access Error NAK,
 * a malformed request an Invalid Request NAK, a local failure placing a
 * SEND a Remote Operational Error NAK; those three also move this QP to
 * ERR.  Target memory is untouched by a request that fails its checks.
 *
 * ACKs are coalesced: one when the requester asks (AckReq, which it sets
 * on the last packet of every message and every ROCE_ACK_EVERY packets),
 * for the newest PSN received.
 *
 * READ and atomic responses go through resp.res, in order, and are sent
 * by the responder's work item in process context, ROCE_TX_BUDGET packets
 * per run: a 1 MiB READ does not burst 1024 packets from softirq into a
 * veth's backlog (netdev_max_backlog), as each transmit from process
 * context lets the receiving softirq run.  An ACK or NAK generated while
 * responses are queued waits behind them (ack_deferred), so the requester
 * never sees an ACK overtake a READ response.
 *
 * While responses are queued they all leave from one CPU (resp.tx_cpu),
 * the one the first of them left from: the work item runs there, on
 * roce_steer.c's bound queue, and a request received on another CPU
 * leaves its responses to it.  A veth, and softrnic's own loopback, deliver
 * into the sending CPU's queue, so responses sent from two CPUs overtake
 * each other, and every overtaken READ response costs the requester a
 * re-request and the responder the READ again (NVMe/RDMA writes are
 * target READs, many at once).  Once the queue is empty the next response
 * may start anywhere.
 */
#include "roce.h"

void roce_resp_init(struct roce_qp *rqp)
{
	spin_lock_init(&rqp->resp.lock);
	INIT_WORK(&rqp->resp.work, roce_resp_work);
}

void roce_resp_start(struct roce_qp *rqp)
{
	struct roce_resp *resp = &rqp->resp;
	unsigned long flags;

	spin_lock_irqsave(&resp->lock, flags);
	resp->epsn = rqp->qp->attr.rq_psn & ROCE_PSN_MASK;
	resp->msn = 0;
	resp->nak_sent = false;
	resp->noack = 0;
	resp->cur_op = 0;
	resp->have_rqe = false;
	memset(resp->res, 0, ROCE_NRES * sizeof(*resp->res));
	resp->res_head = 0;
	resp->res_count = 0;
	resp->npending = 0;
	resp->ack_deferred = false;
	resp->tx_busy = false;
	resp->tx_cpu = -1;
	resp->active = true;
	spin_unlock_irqrestore(&resp->lock, flags);
}

static void roce_resp_rqe_done(struct roce_qp *rqp, enum ib_wc_status status,
			       u8 opcode, u32 byte_len, u16 wc_flags, u32 ex,
			       bool solicited)
{
	struct roce_resp *resp = &rqp->resp;

	resp->have_rqe = false;
	softrnic_rq_complete(rqp->qp, &resp->rqe, status, opcode, byte_len,
			     wc_flags, ex, solicited);
}

/* ERR (flush the WQE of a half-received message), RESET, destroy. */
void roce_resp_stop(struct roce_qp *rqp, bool flush)
{
	struct roce_resp *resp = &rqp->resp;
	unsigned long flags;

	spin_lock_irqsave(&resp->lock, flags);
	resp->active = false;
	if (resp->have_rqe) {
		if (flush)
			roce_resp_rqe_done(rqp, IB_WC_WR_FLUSH_ERR,
					   SOFTRNIC_WC_RECV, 0, 0, 0, false);
		resp->have_rqe = false;
	}
	resp->cur_op = 0;
	resp->npending = 0;
	resp->ack_deferred = false;
	spin_unlock_irqrestore(&resp->lock, flags);
}

void roce_send_ack(struct roce_qp *rqp, u8 syndrome, u32 psn, u32 msn)
{
	struct softrnic_qp *qp = rqp->qp;
	struct roce_pkt pkt = {
		.opcode = ROCE_RC_ACKNOWLEDGE,
		.psn = psn,
		.dest_qpn = qp->attr.dest_qp_num,
		.aeth = { .syndrome = syndrome, .msn = msn },
	};
	struct sk_buff *skb;
	void *payload;

	switch (roce_syn_type(syndrome)) {
	case ROCE_AETH_ACK:
		roce_qp_count(qp, ROCE_CNT_ACKS_SENT, 1);
		break;
	case ROCE_AETH_RNR_NAK:
		roce_qp_count(qp, ROCE_CNT_RNR_NAKS_SENT, 1);
		break;
	default:
		roce_qp_count(qp, roce_syn_value(syndrome) ==
			      ROCE_NAK_PSN_SEQ_ERR ? ROCE_CNT_SEQ_NAKS_SENT :
			      ROCE_CNT_NAKS_SENT, 1);
		break;
	}
	skb = roce_alloc_skb(qp, &pkt, &payload);
	if (skb)
		roce_xmit(qp, skb);
}

/* What to do once resp.lock is dropped. */
struct roce_resp_out {
	bool ack;
	u8 syn;
	u32 psn;
	u32 msn;
	bool kick;			/* responses queued */
	bool error;			/* QP to ERR */
};

#define ROCE_SYN_ACK	roce_syn_make(ROCE_AETH_ACK, ROCE_AETH_CREDITS_INVALID)

/* Answer @syn for @psn now, or after the queued responses. */
static void roce_resp_answer(struct roce_qp *rqp, struct roce_resp_out *out,
			     u8 syn, u32 psn)
{
	struct roce_resp *resp = &rqp->resp;

	if (resp->npending) {
		/* A NAK is never replaced by a later ACK. */
		if (!resp->ack_deferred ||
		    roce_syn_type(resp->deferred_syn) == ROCE_AETH_ACK) {
			resp->deferred_syn = syn;
			resp->deferred_psn = psn;
		}
		resp->ack_deferred = true;
		out->kick = true;
		return;
	}
	out->ack = true;
	out->syn = syn;
	out->psn = psn;
	out->msn = resp->msn;
}

/*
 * A fatal NAK: answer, stop, and move the QP to ERR, with the affiliated
 * asynchronous error IBTA names for the class (11.6.3.1): Invalid Request
 * Local Work Queue Error, Local Access Violation Work Queue Error, or for
 * a Remote Operational Error a Local Work Queue Catastrophic Error.
 */
static void roce_resp_nak(struct roce_qp *rqp, struct roce_resp_out *out,
			  enum roce_nak_code code, enum ib_wc_status rqe_status)
{
	struct roce_resp *resp = &rqp->resp;

	ibdev_dbg(rqp->qp->ibqp.device, "QP %u: NAK %u at PSN %u\n",
		  rqp->qp->ibqp.qp_num, code, resp->epsn);
	/* In ERR (for query_qp) before the receive's error CQE is visible. */
	softrnic_qp_error_mark(rqp->qp, false);
	if (resp->have_rqe)
		roce_resp_rqe_done(rqp, rqe_status, SOFTRNIC_WC_RECV, 0, 0, 0,
				   false);
	resp->npending = 0;		/* nothing after the NAK */
	resp->ack_deferred = false;
	roce_resp_answer(rqp, out, roce_syn_make(ROCE_AETH_NAK, code),
			 resp->epsn);
	resp->active = false;
	resp->cur_op = 0;
	out->error = true;
	set_bit(code == ROCE_NAK_INVALID_REQUEST ? SOFTRNIC_QP_EV_REQ_ERR :
		code == ROCE_NAK_REMOTE_ACCESS_ERR ? SOFTRNIC_QP_EV_ACCESS_ERR :
						     SOFTRNIC_QP_EV_FATAL,
		&rqp->qp->flags);
}

static void roce_resp_rnr(struct roce_qp *rqp, struct roce_resp_out *out)
{
	roce_resp_answer(rqp, out,
			 roce_syn_make(ROCE_AETH_RNR_NAK,
				       rqp->qp->attr.min_rnr_timer),
			 rqp->resp.epsn);
}

static enum roce_nak_code roce_key_nak(int err)
{
	return err == -EINVAL ? ROCE_NAK_INVALID_REQUEST :
				ROCE_NAK_REMOTE_ACCESS_ERR;
}

/* After a request packet was executed: epsn on, ACK if asked for. */
static void roce_resp_done_pkt(struct roce_qp *rqp, const struct roce_pkt *pkt,
			       struct roce_resp_out *out)
{
	struct roce_resp *resp = &rqp->resp;

	resp->epsn = roce_psn_add(resp->epsn, 1);
	if (pkt->ackreq || ++resp->noack >= ROCE_ACK_EVERY) {
		resp->noack = 0;
		roce_resp_answer(rqp, out, ROCE_SYN_ACK, pkt->psn);
	}
}

/* Room left in the receive WQE for the rest of the message. */
static void roce_resp_send(struct roce_qp *rqp, const struct roce_pkt *pkt,
			   struct sk_buff *skb, u32 bth_off,
			   struct roce_resp_out *out)
{
	struct softrnic_qp *qp = rqp->qp;
	struct roce_resp *resp = &rqp->resp;
	u16 flags = pkt->info->flags, wc_flags = 0;
	u32 plen = pkt->payload_len, mtu = roce_mtu(qp), ex = 0;
	int err;

	if ((flags & ROCE_OPF_LAST) ?
	    (plen > mtu || (!(flags & ROCE_OPF_FIRST) && !plen)) :
	    plen != mtu) {
		roce_resp_nak(rqp, out, ROCE_NAK_INVALID_REQUEST,
			      IB_WC_REM_INV_REQ_ERR);
		return;
	}
	if (flags & ROCE_OPF_FIRST) {
		err = softrnic_rq_get(qp, &resp->rqe);
		if (err == -ENOENT) {
			roce_resp_rnr(rqp, out);
			return;
		}
		if (err)
			return;		/* the core moves the QP to ERR */
		resp->have_rqe = true;
		resp->rcv_len = 0;
		resp->cur_op = ROCE_OP_SEND;
	}
	/* Too long for the receive: fail before a byte of this packet lands. */
	err = plen > softrnic_krqe_bytes(&resp->rqe) - resp->rcv_len ? -ERANGE :
	      softrnic_skb_to_sges(qp, skb, bth_off + pkt->payload_off, plen,
				   resp->rqe.sge, resp->rqe.rqe.num_sge,
				   resp->rcv_len);
	if (err) {
		if (err == -ERANGE)
			roce_resp_nak(rqp, out, ROCE_NAK_INVALID_REQUEST,
				      IB_WC_LOC_LEN_ERR);
		else
			roce_resp_nak(rqp, out, ROCE_NAK_REMOTE_OP_ERR,
				      IB_WC_LOC_PROT_ERR);
		return;
	}
	resp->rcv_len += plen;
	if (flags & ROCE_OPF_LAST) {
		if (flags & ROCE_OPF_INV) {
			/*
			 * IBTA class J (as rxe): Invalid Request NAK, and
			 * the receive WQE completes with the same status.
			 */
			if (softrnic_mem_invalidate(&qp->ibqp, pkt->inv_rkey)) {
				roce_resp_nak(rqp, out,
					      ROCE_NAK_INVALID_REQUEST,
					      IB_WC_REM_INV_REQ_ERR);
				return;
			}
			wc_flags |= SOFTRNIC_WC_F_WITH_INV;
			ex = pkt->inv_rkey;
		}
		if (flags & ROCE_OPF_IMM) {
			wc_flags |= SOFTRNIC_WC_F_WITH_IMM;
			ex = (__force u32)cpu_to_be32(pkt->imm);
		}
		resp->cur_op = 0;
		resp->msn = roce_psn_add(resp->msn, 1);
		roce_resp_rqe_done(rqp, IB_WC_SUCCESS, SOFTRNIC_WC_RECV,
				   resp->rcv_len, wc_flags, ex,
				   pkt->bth_flags & ROCE_PKT_SE);
	}
	roce_resp_done_pkt(rqp, pkt, out);
}

static void roce_resp_write(struct roce_qp *rqp, const struct roce_pkt *pkt,
			    struct sk_buff *skb, u32 bth_off,
			    struct roce_resp_out *out)
{
	struct softrnic_qp *qp = rqp->qp;
	struct roce_resp *resp = &rqp->resp;
	u16 flags = pkt->info->flags;
	u32 plen = pkt->payload_len, mtu = roce_mtu(qp);
	struct softrnic_mr *mr;
	u64 iova;
	int err;

	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_WRITE)) {
		roce_resp_nak(rqp, out, ROCE_NAK_REMOTE_ACCESS_ERR,
			      IB_WC_REM_ACCESS_ERR);
		return;
	}
	if (flags & ROCE_OPF_FIRST) {
		/* The whole target, before a byte of it is written. */
		if ((flags & ROCE_OPF_LAST) ?
		    (plen != pkt->reth.len || plen > mtu) :
		    (plen != mtu || pkt->reth.len <= mtu ||
		     pkt->reth.len > SOFTRNIC_MAX_MSG_SIZE)) {
			roce_resp_nak(rqp, out, ROCE_NAK_INVALID_REQUEST,
				      IB_WC_REM_INV_REQ_ERR);
			return;
		}
		if (pkt->reth.len) {
			iova = pkt->reth.va;
			mr = softrnic_rkey_get(&qp->ibqp, pkt->reth.rkey,
					       IB_ACCESS_REMOTE_WRITE, &iova,
					       pkt->reth.len);
			if (IS_ERR(mr)) {
				roce_resp_nak(rqp, out,
					      roce_key_nak(PTR_ERR(mr)),
					      IB_WC_REM_ACCESS_ERR);
				return;
			}
			softrnic_mr_put(mr);
		}
	} else if ((flags & ROCE_OPF_LAST) ?
		   (plen != resp->wr_resid || !plen || plen > mtu) :
		   (plen != mtu || resp->wr_resid <= mtu)) {
		roce_resp_nak(rqp, out, ROCE_NAK_INVALID_REQUEST,
			      IB_WC_REM_INV_REQ_ERR);
		return;
	}
	/* WRITE with immediate consumes a receive WQE: RNR before placing. */
	if ((flags & ROCE_OPF_IMM) && !resp->have_rqe) {
		err = softrnic_rq_get(qp, &resp->rqe);
		if (err == -ENOENT) {
			roce_resp_rnr(rqp, out);
			return;
		}
		if (err)
			return;
		resp->have_rqe = true;
	}
	if (flags & ROCE_OPF_FIRST) {
		resp->wr_va = pkt->reth.va;
		resp->wr_rkey = pkt->reth.rkey;
		resp->wr_resid = pkt->reth.len;
		resp->wr_len = pkt->reth.len;
		resp->cur_op = ROCE_OP_WRITE;
	}
	if (plen) {
		iova = resp->wr_va;
		mr = softrnic_rkey_get(&qp->ibqp, resp->wr_rkey,
				       IB_ACCESS_REMOTE_WRITE, &iova, plen);
		if (IS_ERR(mr)) {
			roce_resp_nak(rqp, out, roce_key_nak(PTR_ERR(mr)),
				      IB_WC_REM_ACCESS_ERR);
			return;
		}
		err = softrnic_skb_to_mr(mr, iova, skb,
					 bth_off + pkt->payload_off, plen);
		softrnic_mr_put(mr);
		if (err) {
			roce_resp_nak(rqp, out, ROCE_NAK_REMOTE_ACCESS_ERR,
				      IB_WC_REM_ACCESS_ERR);
			return;
		}
		resp->wr_va += plen;
		resp->wr_resid -= plen;
	}
	if (flags & ROCE_OPF_LAST) {
		resp->cur_op = 0;
		resp->msn = roce_psn_add(resp->msn, 1);
		if (flags & ROCE_OPF_IMM)
			roce_resp_rqe_done(rqp, IB_WC_SUCCESS,
					   SOFTRNIC_WC_RECV_RDMA_WITH_IMM,
					   resp->wr_len, SOFTRNIC_WC_F_WITH_IMM,
					   (__force u32)cpu_to_be32(pkt->imm),
					   pkt->bth_flags & ROCE_PKT_SE);
	}
	roce_resp_done_pkt(rqp, pkt, out);
}

static struct roce_res *roce_res_new(struct roce_resp *resp)
{
	struct roce_res *res = &resp->res[resp->res_head % ROCE_NRES];

	resp->res_head++;
	if (resp->res_count < ROCE_NRES)
		resp->res_count++;
	memset(res, 0, sizeof(*res));
	return res;
}

static u32 roce_read_npkts(u32 len, u32 mtu)
{
	return max_t(u32, DIV_ROUND_UP(len, mtu), 1);
}

/*
 * No resource for another READ, atomic or placement request: as many
 * have responses pending as the QP takes, or the slot the next one gets
 * still has responses to send (a requester that replayed its oldest READ
 * and then sent more than the ring holds): refused, never overwritten.
 */
static bool roce_resp_rd_full(struct roce_qp *rqp)
{
	struct roce_resp *resp = &rqp->resp;

	return resp->npending >=
	       max_t(u32, rqp->qp->attr.max_dest_rd_atomic, 1) ||
	       resp->res[resp->res_head % ROCE_NRES].pending;
}

/*
 * A READ, atomic or placement request of @npkts PSNs is accepted: its
 * resource waits for its responses to go out, the request is consumed.
 */
static void roce_res_queue(struct roce_resp *resp, struct roce_res *res,
			   u32 npkts, struct roce_resp_out *out)
{
	res->pending = true;
	resp->npending++;
	resp->epsn = roce_psn_add(resp->epsn, npkts);
	resp->msn = roce_psn_add(resp->msn, 1);
	res->msn = resp->msn;
	out->kick = true;
}

static void roce_resp_read(struct roce_qp *rqp, const struct roce_pkt *pkt,
			   struct roce_resp_out *out)
{
	struct softrnic_qp *qp = rqp->qp;
	struct roce_resp *resp = &rqp->resp;
	struct softrnic_mr *mr;
	struct roce_res *res;
	u32 npkts;
	u64 iova;

	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_READ)) {
		roce_resp_nak(rqp, out, ROCE_NAK_REMOTE_ACCESS_ERR, 0);
		return;
	}
	if (pkt->reth.len > SOFTRNIC_MAX_MSG_SIZE || roce_resp_rd_full(rqp)) {
		roce_resp_nak(rqp, out, ROCE_NAK_INVALID_REQUEST, 0);
		return;
	}
	if (pkt->reth.len) {
		iova = pkt->reth.va;
		mr = softrnic_rkey_get(&qp->ibqp, pkt->reth.rkey,
				       IB_ACCESS_REMOTE_READ, &iova,
				       pkt->reth.len);
		if (IS_ERR(mr)) {
			roce_resp_nak(rqp, out, roce_key_nak(PTR_ERR(mr)), 0);
			return;
		}
		softrnic_mr_put(mr);
	}
	npkts = roce_read_npkts(pkt->reth.len, roce_mtu(qp));
	res = roce_res_new(resp);
	res->type = ROCE_RES_READ;
	res->first_psn = pkt->psn;
	res->last_psn = roce_psn_add(pkt->psn, npkts - 1);
	res->start_psn = pkt->psn;
	res->cur_psn = pkt->psn;
	res->va = pkt->reth.va;
	res->rkey = pkt->reth.rkey;
	res->resid = pkt->reth.len;
	roce_res_queue(resp, res, npkts, out);
}

static void roce_resp_atomic(struct roce_qp *rqp, const struct roce_pkt *pkt,
			     struct roce_resp_out *out)
{
	struct softrnic_qp *qp = rqp->qp;
	struct roce_resp *resp = &rqp->resp;
	struct softrnic_mr *mr;
	struct roce_res *res;
	u64 iova = pkt->atomic.va, orig;
	int err;

	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_ATOMIC)) {
		roce_resp_nak(rqp, out, ROCE_NAK_REMOTE_ACCESS_ERR, 0);
		return;
	}
	if (roce_resp_rd_full(rqp)) {
		roce_resp_nak(rqp, out, ROCE_NAK_INVALID_REQUEST, 0);
		return;
	}
	mr = softrnic_rkey_get(&qp->ibqp, pkt->atomic.rkey,
			       IB_ACCESS_REMOTE_ATOMIC, &iova, sizeof(u64));
	if (IS_ERR(mr)) {
		roce_resp_nak(rqp, out, roce_key_nak(PTR_ERR(mr)), 0);
		return;
	}
	if (pkt->opcode == ROCE_RC_COMPARE_SWAP)
		err = softrnic_mr_atomic64(mr, iova, SOFTRNIC_ATOMIC_CMP_SWP,
					   pkt->atomic.compare,
					   pkt->atomic.swap_add, &orig);
	else
		err = softrnic_mr_atomic64(mr, iova, SOFTRNIC_ATOMIC_FETCH_ADD,
					   pkt->atomic.swap_add, 0, &orig);
	softrnic_mr_put(mr);
	if (err) {
		roce_resp_nak(rqp, out, roce_key_nak(err), 0);
		return;
	}
	roce_qp_count(qp, ROCE_CNT_ATOMICS, 1);
	res = roce_res_new(resp);
	res->type = ROCE_RES_ATOMIC;
	res->first_psn = pkt->psn;
	res->last_psn = pkt->psn;
	res->cur_psn = pkt->psn;
	res->orig = orig;
	roce_res_queue(resp, res, 1, out);
}

/*
 * Queue the zero-length READ RESPONSE ONLY that answers a FLUSH or an
 * ATOMIC WRITE once it has executed; resp.lock held.
 */
static void roce_resp_placement_done(struct roce_qp *rqp,
				     const struct roce_pkt *pkt, u8 type,
				     struct roce_resp_out *out)
{
	struct roce_resp *resp = &rqp->resp;
	struct roce_res *res;

	res = roce_res_new(resp);
	res->type = type;
	res->first_psn = pkt->psn;
	res->last_psn = pkt->psn;
	res->start_psn = pkt->psn;
	res->cur_psn = pkt->psn;
	roce_res_queue(resp, res, 1, out);
}

/*
 * FLUSH (memory placement extensions).  Requests are executed in PSN
 * order and every earlier WRITE, SEND and ATOMIC WRITE was placed into the
 * registered pages by the time this one is looked at, so global
 * visibility is a full barrier.  Persistence is refused: no memory
 * softrnic registers has a persistence domain (roce_flush_verdict()).
 *
 * Access, without IB_ACCESS_FLUSH_* (Linux >= 6.2): the QP and the region
 * must allow remote READ or remote WRITE.  A FLUSH neither reads nor
 * changes data, and tells the requester nothing that a zero-length READ
 * or WRITE to the same key would not.  Selectivity "range" checks the
 * RETH's range against the region; "region" only the R_Key (its VA and
 * length are ignored).
 */
static void roce_resp_flush(struct roce_qp *rqp, const struct roce_pkt *pkt,
			    struct roce_resp_out *out)
{
	struct softrnic_qp *qp = rqp->qp;
	struct softrnic_mr *mr;
	u64 iova;
	int err;

	if (!(qp->attr.qp_access_flags &
	      (IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE))) {
		roce_resp_nak(rqp, out, ROCE_NAK_REMOTE_ACCESS_ERR, 0);
		return;
	}
	switch (roce_flush_verdict(pkt->feth.sel, pkt->feth.plt)) {
	case ROCE_FLUSH_OK:
		break;
	case ROCE_FLUSH_NO_PERSISTENCE:
		roce_resp_nak(rqp, out, ROCE_NAK_REMOTE_ACCESS_ERR, 0);
		return;
	default:
		roce_resp_nak(rqp, out, ROCE_NAK_INVALID_REQUEST, 0);
		return;
	}
	if (roce_resp_rd_full(rqp)) {
		roce_resp_nak(rqp, out, ROCE_NAK_INVALID_REQUEST, 0);
		return;
	}
	iova = pkt->reth.va;
	mr = softrnic_rkey_get(&qp->ibqp, pkt->reth.rkey,
			       IB_ACCESS_REMOTE_READ, &iova, pkt->reth.len);
	if (PTR_ERR_OR_ZERO(mr) == -EACCES) {
		iova = pkt->reth.va;
		mr = softrnic_rkey_get(&qp->ibqp, pkt->reth.rkey,
				       IB_ACCESS_REMOTE_WRITE, &iova,
				       pkt->reth.len);
	}
	err = PTR_ERR_OR_ZERO(mr);
	/*
	 * The key, PD and rights are checked before the bounds (-ERANGE is
	 * the last verdict of both MR and MW lookups), so for the whole
	 * region an out-of-range VA still means a good key.
	 */
	if (err == -ERANGE && pkt->feth.sel == ROCE_FLUSH_SEL_MR)
		err = 0;
	if (err) {
		roce_resp_nak(rqp, out, roce_key_nak(err), 0);
		return;
	}
	if (!IS_ERR(mr))
		softrnic_mr_put(mr);
	/* Everything placed before this request, visible to every CPU. */
	smp_mb();
	roce_resp_placement_done(rqp, pkt, ROCE_RES_FLUSH, out);
}

/*
 * ATOMIC WRITE: the 8-byte payload stored at an 8-byte aligned address
 * as one 64-bit store (xchg: a full barrier, so after everything placed
 * before it), with the rights of an RDMA WRITE.  Misaligned: Invalid
 * Request NAK, as for the other atomics.
 */
static void roce_resp_atomic_write(struct roce_qp *rqp,
				   const struct roce_pkt *pkt,
				   struct sk_buff *skb, u32 bth_off,
				   struct roce_resp_out *out)
{
	struct softrnic_qp *qp = rqp->qp;
	struct softrnic_mr *mr;
	u64 iova = pkt->reth.va, val, orig;
	int err;

	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_WRITE)) {
		roce_resp_nak(rqp, out, ROCE_NAK_REMOTE_ACCESS_ERR, 0);
		return;
	}
	if (pkt->reth.len != ROCE_ATOMIC_WRITE_LEN ||
	    pkt->payload_len != ROCE_ATOMIC_WRITE_LEN ||
	    roce_resp_rd_full(rqp)) {
		roce_resp_nak(rqp, out, ROCE_NAK_INVALID_REQUEST, 0);
		return;
	}
	if (skb_copy_bits(skb, bth_off + pkt->payload_off, &val, sizeof(val))) {
		roce_resp_nak(rqp, out, ROCE_NAK_INVALID_REQUEST, 0);
		return;
	}
	mr = softrnic_rkey_get(&qp->ibqp, pkt->reth.rkey,
			       IB_ACCESS_REMOTE_WRITE, &iova, sizeof(u64));
	if (IS_ERR(mr)) {
		roce_resp_nak(rqp, out, roce_key_nak(PTR_ERR(mr)), 0);
		return;
	}
	err = softrnic_mr_atomic64(mr, iova, SOFTRNIC_ATOMIC_WRITE, 0, val,
				   &orig);
	softrnic_mr_put(mr);
	if (err) {
		roce_resp_nak(rqp, out, roce_key_nak(err), 0);
		return;
	}
	roce_qp_count(qp, ROCE_CNT_ATOMICS, 1);
	roce_resp_placement_done(rqp, pkt, ROCE_RES_ATOMIC_WRITE, out);
}

/* Newest first: the resource whose request PSN range holds @psn. */
static struct roce_res *roce_res_find(struct roce_resp *resp, u32 psn, u8 type)
{
	u32 i;

	for (i = 0; i < resp->res_count; i++) {
		struct roce_res *res =
			&resp->res[(resp->res_head - 1 - i) % ROCE_NRES];

		if (res->type == type &&
		    roce_psn_diff(psn, res->first_psn) >= 0 &&
		    roce_psn_diff(psn, res->last_psn) <= 0)
			return res;
	}
	return NULL;
}

/* Responses after @res are dropped: the requester asks for them again. */
static void roce_res_replay(struct roce_resp *resp, struct roce_res *res)
{
	u32 i;

	for (i = 0; i < resp->res_count; i++) {
		struct roce_res *r =
			&resp->res[(resp->res_head - 1 - i) % ROCE_NRES];

		if (r == res)
			break;
		if (r->pending) {
			r->pending = false;
			resp->npending--;
		}
	}
	if (!res->pending) {
		res->pending = true;
		resp->npending++;
	}
}

static void roce_resp_duplicate(struct roce_qp *rqp, const struct roce_pkt *pkt,
				struct roce_resp_out *out)
{
	struct roce_resp *resp = &rqp->resp;
	struct roce_res *res;
	u32 npkts;

	roce_qp_count(rqp->qp, ROCE_CNT_DUP_REQUESTS, 1);
	switch (pkt->info->op) {
	case ROCE_OP_READ:
		res = roce_res_find(resp, pkt->psn, ROCE_RES_READ);
		if (!res)
			break;
		/* Execute again from @psn, as the re-request says. */
		npkts = roce_read_npkts(pkt->reth.len, roce_mtu(rqp->qp));
		if (roce_psn_add(pkt->psn, npkts - 1) != res->last_psn ||
		    pkt->reth.rkey != res->rkey)
			break;
		res->start_psn = pkt->psn;
		res->cur_psn = pkt->psn;
		res->va = pkt->reth.va;
		res->resid = pkt->reth.len;
		roce_res_replay(resp, res);
		out->kick = true;
		return;
	case ROCE_OP_CMP_SWAP:
	case ROCE_OP_FETCH_ADD:
		res = roce_res_find(resp, pkt->psn, ROCE_RES_ATOMIC);
		if (!res)
			break;
		roce_res_replay(resp, res);	/* the saved result, again */
		out->kick = true;
		return;
	case ROCE_OP_FLUSH:
	case ROCE_OP_ATOMIC_WRITE:
		/*
		 * Answered again, not executed again: a second ATOMIC WRITE
		 * could undo a WRITE that came after the first.
		 */
		res = roce_res_find(resp, pkt->psn,
				    pkt->info->op == ROCE_OP_FLUSH ?
				    ROCE_RES_FLUSH : ROCE_RES_ATOMIC_WRITE);
		if (!res)
			break;
		res->start_psn = res->first_psn;
		res->cur_psn = res->first_psn;
		res->resid = 0;
		roce_res_replay(resp, res);
		out->kick = true;
		return;
	default:
		/* Acknowledge what we have, without executing anything. */
		if (pkt->ackreq)
			roce_resp_answer(rqp, out, ROCE_SYN_ACK,
					 roce_psn_add(resp->epsn, ROCE_PSN_MASK));
		return;
	}
	roce_qp_count(rqp->qp, ROCE_CNT_DROP_OUT_OF_WINDOW, 1);
}

static bool roce_resp_send_some(struct roce_qp *rqp, unsigned int budget,
				bool work);
static void roce_resp_kick(struct roce_qp *rqp);

void roce_resp_rcv(struct roce_qp *rqp, const struct roce_pkt *pkt,
		   struct sk_buff *skb, u32 bth_off)
{
	struct softrnic_qp *qp = rqp->qp;
	struct roce_resp *resp = &rqp->resp;
	struct roce_resp_out out = {};
	u16 flags = pkt->info->flags;
	unsigned long irqflags;
	s32 diff;

	spin_lock_irqsave(&resp->lock, irqflags);
	if (!resp->active)
		goto unlock;
	diff = roce_psn_diff(pkt->psn, resp->epsn);
	if (diff > 0) {
		if (!resp->nak_sent) {
			resp->nak_sent = true;
			roce_resp_answer(rqp, &out,
					 roce_syn_make(ROCE_AETH_NAK,
						       ROCE_NAK_PSN_SEQ_ERR),
					 resp->epsn);
		}
		goto unlock;
	}
	if (diff < 0) {
		roce_resp_duplicate(rqp, pkt, &out);
		goto unlock;
	}
	resp->nak_sent = false;

	/* Opcode sequence: a message continues, or a new one starts. */
	if (resp->cur_op ? (pkt->info->op != resp->cur_op ||
			    (flags & ROCE_OPF_FIRST)) :
	    !(flags & ROCE_OPF_FIRST)) {
		roce_resp_nak(rqp, &out, ROCE_NAK_INVALID_REQUEST,
			      IB_WC_REM_INV_REQ_ERR);
		goto unlock;
	}
	switch (pkt->info->op) {
	case ROCE_OP_SEND:
		roce_resp_send(rqp, pkt, skb, bth_off, &out);
		break;
	case ROCE_OP_WRITE:
		roce_resp_write(rqp, pkt, skb, bth_off, &out);
		break;
	case ROCE_OP_READ:
		roce_resp_read(rqp, pkt, &out);
		break;
	case ROCE_OP_CMP_SWAP:
	case ROCE_OP_FETCH_ADD:
		roce_resp_atomic(rqp, pkt, &out);
		break;
	case ROCE_OP_FLUSH:
		roce_resp_flush(rqp, pkt, &out);
		break;
	case ROCE_OP_ATOMIC_WRITE:
		roce_resp_atomic_write(rqp, pkt, skb, bth_off, &out);
		break;
	default:
		roce_resp_nak(rqp, &out, ROCE_NAK_INVALID_REQUEST, 0);
		break;
	}
unlock:
	spin_unlock_irqrestore(&resp->lock, irqflags);

	if (out.ack)
		roce_send_ack(rqp, out.syn, out.psn, out.msn);
	/*
	 * A few responses right away (latency of short READs and atomics);
	 * anything longer is paced from process context.
	 */
	if (out.kick && roce_resp_send_some(rqp, ROCE_RESP_INLINE, false))
		roce_resp_kick(rqp);
	if (out.error)
		softrnic_qp_error(qp, false);
}

/* The oldest resource with responses to send; resp.lock held. */
static struct roce_res *roce_res_next(struct roce_resp *resp)
{
	u32 i;

	if (!resp->npending)
		return NULL;
	for (i = resp->res_count; i; i--) {
		struct roce_res *res =
			&resp->res[(resp->res_head - i) % ROCE_NRES];

		if (res->pending)
			return res;
	}
	return NULL;
}

/*
 * Send queued READ and atomic responses, then a deferred ACK/NAK, at most
 * @budget packets.  One sender at a time (resp.tx_busy), so responses
 * leave in PSN order; a caller that finds another sender at work leaves
 * it to that one, which looks at the queue again before it stops.
 * Responses leave in batches (struct roce_batch), each sent before
 * tx_busy is given up.  Returns true if responses are left (the caller
 * queues the work item), also when they must leave from resp.tx_cpu and
 * this is another CPU (@work: called by the work item, which always
 * sends where it runs).
 */
static bool roce_resp_send_some(struct roce_qp *rqp, unsigned int budget,
				bool work)
{
	struct softrnic_qp *qp = rqp->qp;
	struct roce_resp *resp = &rqp->resp;
	u32 mtu = roce_mtu(qp), rkey, msn;
	struct roce_batch b = { };
	struct roce_pkt pkt;
	struct softrnic_mr *mr;
	struct roce_res *res;
	unsigned long flags;
	bool first, last, more;
	void *payload;
	u64 va, iova;
	u8 syn;
	int err, cpu;

	/* BH off: a batch's packets leave from one CPU, in PSN order */
	local_bh_disable();
	spin_lock_irqsave(&resp->lock, flags);
	if (resp->tx_busy) {
		spin_unlock_irqrestore(&resp->lock, flags);
		local_bh_enable();
		return false;
	}
	cpu = smp_processor_id();	/* irqs are off */
	if (cpu != resp->tx_cpu) {
		if (!work && resp->tx_cpu >= 0) {
			spin_unlock_irqrestore(&resp->lock, flags);
			local_bh_enable();
			return true;
		}
		resp->tx_cpu = cpu;
	}
	resp->tx_busy = true;
	for (;;) {
		memset(&pkt, 0, sizeof(pkt));
		pkt.dest_qpn = qp->attr.dest_qp_num;
		if (!resp->active) {
			more = false;
			break;
		}
		res = roce_res_next(resp);
		if (!res && b.skb) {
			/* out before tx_busy goes; then look again */
			spin_unlock_irqrestore(&resp->lock, flags);
			roce_batch_xmit(qp, &b);
			spin_lock_irqsave(&resp->lock, flags);
			continue;
		}
		if (!res) {
			bool ack = resp->ack_deferred;

			resp->ack_deferred = false;
			syn = resp->deferred_syn;
			pkt.psn = resp->deferred_psn;
			msn = resp->msn;
			resp->tx_busy = false;
			resp->tx_cpu = -1;
			spin_unlock_irqrestore(&resp->lock, flags);
			if (ack)
				roce_send_ack(rqp, syn, pkt.psn, msn);
			local_bh_enable();
			return false;
		}
		if (!budget--) {
			more = true;
			break;
		}
		pkt.psn = res->cur_psn;
		pkt.aeth.syndrome = ROCE_SYN_ACK;
		pkt.aeth.msn = res->msn;
		if (res->type == ROCE_RES_ATOMIC) {
			pkt.opcode = ROCE_RC_ATOMIC_ACKNOWLEDGE;
			pkt.atomic_orig = res->orig;
			res->pending = false;
			resp->npending--;
			spin_unlock_irqrestore(&resp->lock, flags);
			/* no memory: lost, the requester asks again */
			roce_batch_add(qp, &b, &pkt);
			spin_lock_irqsave(&resp->lock, flags);
			continue;
		}
		first = res->cur_psn == res->start_psn;
		last = res->resid <= mtu;
		pkt.opcode = first && last ? ROCE_RC_RDMA_READ_RESPONSE_ONLY :
			     first ? ROCE_RC_RDMA_READ_RESPONSE_FIRST :
			     last ? ROCE_RC_RDMA_READ_RESPONSE_LAST :
				    ROCE_RC_RDMA_READ_RESPONSE_MIDDLE;
		pkt.payload_len = last ? res->resid : mtu;
		va = res->va;
		rkey = res->rkey;
		res->va += pkt.payload_len;
		res->resid -= pkt.payload_len;
		res->cur_psn = roce_psn_add(res->cur_psn, 1);
		if (last) {
			res->pending = false;
			resp->npending--;
		}
		spin_unlock_irqrestore(&resp->lock, flags);

		roce_qp_count(qp, ROCE_CNT_READ_RESPONSES, 1);
		payload = roce_batch_add(qp, &b, &pkt);
		err = 0;
		if (payload && pkt.payload_len) {
			/* The memory may have gone since the request. */
			iova = va;
			mr = softrnic_rkey_get(&qp->ibqp, rkey,
					       IB_ACCESS_REMOTE_READ, &iova,
					       pkt.payload_len);
			err = IS_ERR(mr) ? PTR_ERR(mr) :
			      softrnic_mr_copy(mr, iova, payload,
					       pkt.payload_len,
					       SOFTRNIC_COPY_FROM_MR);
			if (!IS_ERR(mr))
				softrnic_mr_put(mr);
		}
		if (err) {
			struct roce_resp_out out = {};

			/* the responses before this one still go out */
			roce_batch_trim(&b);
			roce_batch_xmit(qp, &b);
			spin_lock_irqsave(&resp->lock, flags);
			if (resp->active)
				roce_resp_nak(rqp, &out, roce_key_nak(err), 0);
			resp->tx_busy = false;
			resp->tx_cpu = -1;
			spin_unlock_irqrestore(&resp->lock, flags);
			if (out.ack)
				roce_send_ack(rqp, out.syn, pkt.psn, out.msn);
			local_bh_enable();
			if (out.error)
				softrnic_qp_error(qp, false);
			return false;
		}
		/* no payload pointer: lost, the requester asks again */
		roce_batch_next(qp, &b);
		spin_lock_irqsave(&resp->lock, flags);
	}
	if (b.skb) {
		spin_unlock_irqrestore(&resp->lock, flags);
		roce_batch_xmit(qp, &b);
		spin_lock_irqsave(&resp->lock, flags);
	}
	resp->tx_busy = false;
	if (!more)
		resp->tx_cpu = -1;
	spin_unlock_irqrestore(&resp->lock, flags);
	local_bh_enable();
	return more;
}

/* Have the work item send, on resp.tx_cpu if responses left from there. */
static void roce_resp_kick(struct roce_qp *rqp)
{
	if (!READ_ONCE(rqp->dying))
		softrnic_dp_queue_work(READ_ONCE(rqp->resp.tx_cpu),
				       &rqp->resp.work);
}

void roce_resp_work(struct work_struct *work)
{
	struct roce_qp *rqp = container_of(work, struct roce_qp, resp.work);

	/* Out of budget: let others run, then go on. */
	if (roce_resp_send_some(rqp, ROCE_TX_BUDGET, true))
		roce_resp_kick(rqp);
}
