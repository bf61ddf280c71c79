// SPDX-License-Identifier: GPL-2.0
/*
 * iWARP receive: the socket is read with tcp_read_sock(), in TCP's
 * receive softirq as far as a budget allows (iwarp_rx_data_ready()),
 * else by the rx work item under lock_sock.  The actor walks each skb in
 * place (skb_seq_read) and feeds the FPDU stream receiver
 * (iwarp_mpa_rx.h), which hands out the headers of each segment
 * (validated here before anything is placed), the data slices (placed
 * straight from the skb: tagged into the MR the STag names, untagged
 * into the receive WQE at its MO, READ responses into the SGEs of our
 * ORQ entry by offset) and the end of the FPDU once its CRC checked
 * out: only then does anything complete.
 *
 * Any invalid field sends a TERMINATE with the RFC 5040/5041 codes and
 * the connection is lost (iwarp_dp_terminate(); the stream is dead and
 * the rest of it discarded).  The actor may run in a softirq, or with
 * a page mapped atomically (skb_seq_read): it never sleeps.
 */
#include <linux/skbuff.h>
#include <net/tcp.h>

#include "iwarp.h"
#include "mem.h"

/* Bytes one run of the work reads before it requeues itself. */
#define IWARP_RX_BUDGET		(256 * 1024)
/* Bytes read in the softirq before the work item takes over. */
#define IWARP_RX_INLINE_BUDGET	(64 * 1024)

static void iwarp_rx_term(struct iwarp_qp *iwqp, u8 layer, u8 etype,
			  u8 ecode)
{
	struct iwarp_dp *dp = &iwqp->dp;
	struct iw_term t;

	softrnic_qp_count(iwqp->qp, layer == IW_LAYER_LLP &&
			  ecode == IW_LLP_EC_CRC ? IWARP_CNT_RX_CRC_ERRORS :
			  IWARP_CNT_RX_BAD_SEGMENTS, 1);
	iw_term_report(&t, layer, etype, ecode, dp->rx.hdr, dp->rx.hdr_len,
		       dp->rx.ulpdu_len);
	iwarp_dp_terminate(iwqp, &t);
}

static void iwarp_rx_rqe_done(struct iwarp_qp *iwqp, enum ib_wc_status st,
			      u8 opcode, u32 byte_len, u16 wc_flags, u32 ex,
			      bool solicited)
{
	struct iwarp_dp *dp = &iwqp->dp;

	dp->have_rqe = false;
	softrnic_rq_complete(iwqp->qp, &dp->rqe, st, opcode, byte_len,
			     wc_flags, ex, solicited);
}

/* The ORQ head, for a READ response; NULL if none is outstanding. */
static struct iwarp_orq_ent *iwarp_orq_head(struct iwarp_dp *dp)
{
	unsigned long flags;
	struct iwarp_orq_ent *e = NULL;

	spin_lock_irqsave(&dp->lock, flags);
	if (dp->orq_count)
		e = &dp->orq[dp->orq_head];
	spin_unlock_irqrestore(&dp->lock, flags);
	return e;
}

/*
 * An untagged message's MSN must be the next one of its queue (@q: the
 * index into dp->rx_msn); anything else is a TERMINATE.
 */
static bool iwarp_rx_msn_ok(struct iwarp_qp *iwqp, const struct iw_pkt *p,
			    unsigned int q)
{
	if (p->msn == iwqp->dp.rx_msn[q])
		return true;
	iwarp_rx_term(iwqp, IW_LAYER_DDP, IW_DDP_ET_UNTAGGED,
		      IW_DDP_EC_U_MSN_RANGE);
	return false;
}

/*
 * A READ or Atomic Request (QN 1): the next MSN, and a free entry in the
 * IRD we announced; anything else is a TERMINATE.
 */
static bool iwarp_rx_irq_slot_ok(struct iwarp_qp *iwqp, const struct iw_pkt *p)
{
	struct iwarp_dp *dp = &iwqp->dp;

	if (!iwarp_rx_msn_ok(iwqp, p, 1))
		return false;
	if (READ_ONCE(dp->irq_count) < dp->irq_size)
		return true;
	iwarp_rx_term(iwqp, IW_LAYER_DDP, IW_DDP_ET_UNTAGGED,
		      IW_DDP_EC_U_NO_BUFFER);
	return false;
}

/*
 * Whether @stag gives @access to @len bytes at @to, checked before a byte
 * of the message is taken; the region is not held: placement looks it up
 * again.  A refusal is answered with its TERMINATE (@placement: the DDP
 * tagged-buffer codes of a WRITE, else RDMAP's).
 */
static bool iwarp_rx_stag_ok(struct iwarp_qp *iwqp, u32 stag, int access,
			     u64 to, u64 len, bool placement)
{
	struct softrnic_mr *mr;
	u8 layer, etype, ecode;
	u64 iova = to;

	local_bh_disable();
	mr = softrnic_rkey_get(&iwqp->qp->ibqp, stag, access, &iova, len);
	if (!IS_ERR(mr))
		softrnic_mr_put(mr);
	local_bh_enable();
	if (!IS_ERR(mr))
		return true;
	if (access == IB_ACCESS_REMOTE_ATOMIC && PTR_ERR(mr) == -EINVAL) {
		/* an atomic the key's memory cannot do: no protection fault */
		layer = IW_LAYER_RDMAP;
		etype = IW_RDMAP_ET_OPERATION;
		ecode = IW_RDMAP_EC_UNSPECIFIED;
	} else {
		iwarp_mem_term(PTR_ERR(mr), placement, &layer, &etype, &ecode);
	}
	iwarp_rx_term(iwqp, layer, etype, ecode);
	return false;
}

/* Untagged SEND segment: MSN, MO and room, before a byte is placed. */
static bool iwarp_rx_send_hdr(struct iwarp_qp *iwqp, const struct iw_pkt *p)
{
	struct iwarp_dp *dp = &iwqp->dp;
	int err;

	if (!iwarp_rx_msn_ok(iwqp, p, 0))
		return false;
	if ((p->info->flags & IW_OPF_INV) && dp->rx_imm_pending) {
		/* SEND_WITH_IMM's immediate data comes before a plain SEND */
		iwarp_rx_term(iwqp, IW_LAYER_RDMAP, IW_RDMAP_ET_OPERATION,
			      IW_RDMAP_EC_OPCODE);
		return false;
	}
	if (dp->rtr_wait && dp->conn.rtr == MPA_RTR_SEND &&
	    !dp->have_rqe && !dp->rx_imm_pending &&
	    iw_is_rtr(p, MPA_RTR_SEND)) {
		dp->rx_rtr = true;	/* consumes its MSN, not a WQE */
		return true;
	}
	if (!dp->have_rqe) {
		if (p->mo) {
			iwarp_rx_term(iwqp, IW_LAYER_DDP, IW_DDP_ET_UNTAGGED,
				      IW_DDP_EC_U_INVALID_MO);
			return false;
		}
		err = softrnic_rq_get(iwqp->qp, &dp->rqe);
		if (err) {
			/* no RNR in iWARP: the SEND has no buffer */
			iwarp_rx_term(iwqp, IW_LAYER_DDP, IW_DDP_ET_UNTAGGED,
				      IW_DDP_EC_U_NO_BUFFER);
			return false;
		}
		dp->have_rqe = true;
		dp->rcv_len = 0;
	} else if (p->mo != dp->rcv_len) {
		iwarp_rx_term(iwqp, IW_LAYER_DDP, IW_DDP_ET_UNTAGGED,
			      IW_DDP_EC_U_INVALID_MO);
		return false;
	}
	if ((u64)p->mo + p->payload_len > softrnic_krqe_bytes(&dp->rqe)) {
		iwarp_rx_rqe_done(iwqp, IB_WC_LOC_LEN_ERR, SOFTRNIC_WC_RECV,
				  0, 0, 0, false);
		iwarp_rx_term(iwqp, IW_LAYER_DDP, IW_DDP_ET_UNTAGGED,
			      IW_DDP_EC_U_TOO_LONG);
		return false;
	}
	return true;
}

/* A tagged segment's target, checked whole before a byte lands. */
static bool iwarp_rx_tagged_hdr(struct iwarp_qp *iwqp, const struct iw_pkt *p)
{
	struct iwarp_dp *dp = &iwqp->dp;
	struct iwarp_orq_ent *e;

	if (p->payload_len && p->to + p->payload_len - 1 < p->to) {
		iwarp_rx_term(iwqp, IW_LAYER_DDP, IW_DDP_ET_TAGGED,
			      IW_DDP_EC_T_TO_WRAP);
		return false;
	}
	if (p->opcode == IW_OP_READ_RESP) {
		e = iwarp_orq_head(dp);
		if (!e || e->atomic || p->stag != e->sink_stag ||
		    p->to != e->sink_to + e->placed ||
		    p->payload_len > e->len - e->placed ||
		    (p->last && e->placed + p->payload_len != e->len)) {
			iwarp_rx_term(iwqp, IW_LAYER_DDP, IW_DDP_ET_TAGGED,
				      e && p->stag == e->sink_stag ?
				      IW_DDP_EC_T_BASE_BOUNDS :
				      IW_DDP_EC_T_INVALID_STAG);
			return false;
		}
		return true;
	}
	/* RDMA WRITE; zero-length ones (the RTR among them) touch nothing */
	if (!p->payload_len)
		return true;
	return iwarp_rx_stag_ok(iwqp, p->stag, IB_ACCESS_REMOTE_WRITE, p->to,
				p->payload_len, true);
}

static bool iwarp_rx_read_req_hdr(struct iwarp_qp *iwqp,
				  const struct iw_pkt *p)
{
	if (!iwarp_rx_irq_slot_ok(iwqp, p))
		return false;
	if (!p->rreq.size)
		return true;
	if (p->rreq.size > SOFTRNIC_MAX_MSG_SIZE ||
	    p->rreq.src_to + p->rreq.size - 1 < p->rreq.src_to ||
	    p->rreq.sink_to + p->rreq.size - 1 < p->rreq.sink_to) {
		iwarp_rx_term(iwqp, IW_LAYER_RDMAP, IW_RDMAP_ET_PROTECTION,
			      IW_RDMAP_EC_TO_WRAP);
		return false;
	}
	return iwarp_rx_stag_ok(iwqp, p->rreq.src_stag, IB_ACCESS_REMOTE_READ,
				p->rreq.src_to, p->rreq.size, false);
}

/*
 * RFC 7306 Immediate Data on QN 0: IW_IMM_FOR_SEND waits for its SEND
 * (no receive WQE yet), IW_IMM_ALONE (WRITE_WITH_IMM) takes one now.
 */
static bool iwarp_rx_imm_hdr(struct iwarp_qp *iwqp, const struct iw_pkt *p)
{
	struct iwarp_dp *dp = &iwqp->dp;

	if (!iwarp_rx_msn_ok(iwqp, p, 0))
		return false;
	if (dp->have_rqe || dp->rx_imm_pending ||
	    (p->rsvd_ulp != IW_IMM_FOR_SEND && p->rsvd_ulp != IW_IMM_ALONE)) {
		/* amid a SEND, after another one, or not ours */
		iwarp_rx_term(iwqp, IW_LAYER_RDMAP, IW_RDMAP_ET_OPERATION,
			      IW_RDMAP_EC_OPCODE);
		return false;
	}
	if (p->rsvd_ulp == IW_IMM_FOR_SEND)
		return true;
	if (softrnic_rq_get(iwqp->qp, &dp->rqe)) {
		iwarp_rx_term(iwqp, IW_LAYER_DDP, IW_DDP_ET_UNTAGGED,
			      IW_DDP_EC_U_NO_BUFFER);
		return false;
	}
	dp->have_rqe = true;
	dp->rcv_len = 0;
	return true;
}

/*
 * RFC 7306 Atomic Request on QN 1, in the IRD with the READ requests:
 * FetchAdd and CmpSwap on an 8-byte aligned word the STag gives atomic
 * access to.  Checked whole here; executed in order at the IRQ head.
 */
static bool iwarp_rx_atomic_req_hdr(struct iwarp_qp *iwqp,
				    const struct iw_pkt *p)
{
	if (!iwarp_rx_irq_slot_ok(iwqp, p))
		return false;
	if (p->atomic.op != IW_ATOMIC_FETCH_ADD &&
	    p->atomic.op != IW_ATOMIC_CMP_SWAP) {
		/* the masked ones: not supported (masked_atomic_cap) */
		iwarp_rx_term(iwqp, IW_LAYER_RDMAP, IW_RDMAP_ET_OPERATION,
			      IW_RDMAP_EC_OPCODE);
		return false;
	}
	if (!iw_atomic_aligned(p->atomic.to)) {
		iwarp_rx_term(iwqp, IW_LAYER_RDMAP, IW_RDMAP_ET_OPERATION,
			      IW_RDMAP_EC_UNSPECIFIED);
		return false;
	}
	return iwarp_rx_stag_ok(iwqp, p->atomic.stag, IB_ACCESS_REMOTE_ATOMIC,
				p->atomic.to, IW_ATOMIC_LEN, false);
}

/* RFC 7306 Atomic Response on QN 3: for the atomic at the ORQ head. */
static bool iwarp_rx_atomic_resp_hdr(struct iwarp_qp *iwqp,
				     const struct iw_pkt *p)
{
	struct iwarp_dp *dp = &iwqp->dp;
	struct iwarp_orq_ent *e;

	if (!iwarp_rx_msn_ok(iwqp, p, 2))
		return false;
	e = iwarp_orq_head(dp);
	if (!e || !e->atomic) {
		iwarp_rx_term(iwqp, IW_LAYER_DDP, IW_DDP_ET_UNTAGGED,
			      IW_DDP_EC_U_NO_BUFFER);
		return false;
	}
	if (e->req_id != p->atomic_resp.req_id) {
		iwarp_rx_term(iwqp, IW_LAYER_RDMAP, IW_RDMAP_ET_OPERATION,
			      IW_RDMAP_EC_UNSPECIFIED);
		return false;
	}
	return true;
}

static void iwarp_rx_hdr(struct iwarp_qp *iwqp, u32 ulpdu_len)
{
	struct iwarp_dp *dp = &iwqp->dp;
	struct iw_pkt *p = &dp->rx_pkt;
	u8 layer, etype, ecode;
	bool ok;
	int err;

	dp->rx_pkt_ok = false;
	dp->rx_rtr = false;
	err = iw_parse(dp->rx.hdr, dp->rx.hdr_len, ulpdu_len,
		       dp->conn.rdmap_ext, p);
	if (err) {
		iw_parse_err_term(err, dp->rx.hdr, dp->rx.hdr_len, &layer,
				  &etype, &ecode);
		iwarp_rx_term(iwqp, layer, etype, ecode);
		return;
	}
	switch (p->opcode) {
	case IW_OP_SEND:
	case IW_OP_SEND_SE:
	case IW_OP_SEND_INV:
	case IW_OP_SEND_SE_INV:
		ok = iwarp_rx_send_hdr(iwqp, p);
		break;
	case IW_OP_WRITE:
	case IW_OP_READ_RESP:
		ok = iwarp_rx_tagged_hdr(iwqp, p);
		break;
	case IW_OP_READ_REQ:
		ok = iwarp_rx_read_req_hdr(iwqp, p);
		break;
	case IW_OP_TERMINATE:
		ok = true;
		break;
	/* RFC 7306: iw_parse() let them through only with rdmap_ext */
	case IW_OP_IMM:
	case IW_OP_IMM_SE:
		ok = iwarp_rx_imm_hdr(iwqp, p);
		break;
	case IW_OP_ATOMIC_REQ:
		ok = iwarp_rx_atomic_req_hdr(iwqp, p);
		break;
	case IW_OP_ATOMIC_RESP:
		ok = iwarp_rx_atomic_resp_hdr(iwqp, p);
		break;
	default:
		iwarp_rx_term(iwqp, IW_LAYER_RDMAP, IW_RDMAP_ET_OPERATION,
			      IW_RDMAP_EC_OPCODE);
		ok = false;
		break;
	}
	dp->rx_pkt_ok = ok;
}

/* @len payload bytes at @data, @poff bytes into the segment's payload. */
static void iwarp_rx_data(struct iwarp_qp *iwqp, const u8 *data, u32 len,
			  u32 poff)
{
	struct iwarp_dp *dp = &iwqp->dp;
	struct softrnic_qp *qp = iwqp->qp;
	const struct iw_pkt *p = &dp->rx_pkt;
	struct iwarp_orq_ent *e;
	struct softrnic_mr *mr;
	u8 layer, etype, ecode;
	u64 iova;
	int err = 0;

	if (!dp->rx_pkt_ok || !len)
		return;
	local_bh_disable();
	switch (p->opcode) {
	case IW_OP_WRITE:
		iova = p->to + poff;
		mr = softrnic_rkey_get(&qp->ibqp, p->stag,
				       IB_ACCESS_REMOTE_WRITE, &iova, len);
		if (IS_ERR(mr)) {
			err = PTR_ERR(mr);
			break;
		}
		err = softrnic_mr_copy(mr, iova, (void *)data, len,
				       SOFTRNIC_COPY_TO_MR);
		softrnic_mr_put(mr);
		break;
	case IW_OP_READ_RESP:
		e = iwarp_orq_head(dp);
		if (!e) {
			err = -ENOENT;
			break;
		}
		err = softrnic_copy_sges(qp->sdev, to_spd(qp->ibqp.pd),
					 e->sge, e->num_sge,
					 e->placed + poff, (void *)data, len,
					 SOFTRNIC_COPY_TO_MR);
		break;
	default:	/* SENDs: into the receive WQE at MO */
		if (!dp->have_rqe) {
			err = -ENOENT;
			break;
		}
		err = softrnic_copy_sges(qp->sdev, to_spd(qp->ibqp.pd),
					 dp->rqe.sge, dp->rqe.rqe.num_sge,
					 (u64)p->mo + poff, (void *)data, len,
					 SOFTRNIC_COPY_TO_MR);
		break;
	}
	local_bh_enable();
	if (!err)
		return;
	dp->rx_pkt_ok = false;
	if (p->opcode == IW_OP_WRITE) {
		iwarp_mem_term(err, true, &layer, &etype, &ecode);
		iwarp_rx_term(iwqp, layer, etype, ecode);
		return;
	}
	/* our own buffers failed us: a local error, the peer hears of it */
	if (p->opcode == IW_OP_READ_RESP) {
		e = iwarp_orq_head(dp);
		if (e && !e->rtr)
			softrnic_sq_complete(qp, e->index,
					     softrnic_mem_wc_status(err, false),
					     0);
	} else if (dp->have_rqe) {
		iwarp_rx_rqe_done(iwqp, softrnic_mem_wc_status(err, false),
				  SOFTRNIC_WC_RECV, 0, 0, 0, false);
	}
	iwarp_rx_term(iwqp, IW_LAYER_RDMAP, IW_RDMAP_ET_CATASTROPHIC,
		      IW_RDMAP_EC_CATASTROPHIC_STREAM);
}

static void iwarp_rx_rtr_seen(struct iwarp_qp *iwqp)
{
	struct iwarp_dp *dp = &iwqp->dp;
	unsigned long flags;
	bool was;

	spin_lock_irqsave(&dp->lock, flags);
	was = dp->rtr_wait;
	dp->rtr_wait = false;
	spin_unlock_irqrestore(&dp->lock, flags);
	if (was)
		softrnic_qp_kick(iwqp->qp);	/* the SQ may send now */
}

/* A TERMINATE came: the QP goes to ERR, the WQE it concerns says why. */
static void iwarp_rx_terminate(struct iwarp_qp *iwqp, const struct iw_pkt *p)
{
	struct iwarp_dp *dp = &iwqp->dp;
	const struct iw_term *t = &p->term;
	enum ib_wc_status st = IB_WC_REM_OP_ERR;
	struct iwarp_orq_ent *e;

	if ((t->layer == IW_LAYER_RDMAP &&
	     t->etype == IW_RDMAP_ET_PROTECTION) ||
	    (t->layer == IW_LAYER_DDP && t->etype == IW_DDP_ET_TAGGED))
		st = IB_WC_REM_ACCESS_ERR;
	else if (t->layer == IW_LAYER_DDP && t->etype == IW_DDP_ET_UNTAGGED)
		st = IB_WC_REM_INV_REQ_ERR;
	e = iwarp_orq_head(dp);
	if (e && e->atomic && t->layer == IW_LAYER_RDMAP &&
	    t->etype == IW_RDMAP_ET_OPERATION)
		st = IB_WC_REM_INV_REQ_ERR;	/* as RoCE's NAK: misaligned,
						 * unsupported */
	ibdev_dbg(iwqp->qp->ibqp.device,
		  "QP %u: TERMINATE received: layer %u etype %u code 0x%02x\n",
		  iwqp->qp->ibqp.qp_num, t->layer, t->etype, t->ecode);
	softrnic_qp_count(iwqp->qp, IWARP_CNT_TERM_RCVD, 1);
	set_bit(IWARP_DP_RX_DEAD, &dp->flags);
	set_bit(IWARP_DP_TERM_SENT, &dp->flags);	/* none back */
	if (e && !e->rtr)
		softrnic_sq_complete(iwqp->qp, e->index, st, 0);
	iwarp_dp_lost(iwqp, -ECONNRESET);
}

/* The Atomic Response for the ORQ head: the original value, 8 bytes. */
static void iwarp_rx_atomic_resp(struct iwarp_qp *iwqp,
				 const struct iw_pkt *p)
{
	struct iwarp_dp *dp = &iwqp->dp;
	struct softrnic_qp *qp = iwqp->qp;
	struct iwarp_orq_ent *e = iwarp_orq_head(dp);
	u64 orig = p->atomic_resp.orig;
	unsigned long flags;
	u32 index;
	bool kick;
	int err;

	if (!e)
		return;
	local_bh_disable();
	err = softrnic_copy_sges(qp->sdev, to_spd(qp->ibqp.pd), e->sge,
				 e->num_sge, 0, &orig, sizeof(orig),
				 SOFTRNIC_COPY_TO_MR);
	local_bh_enable();
	spin_lock_irqsave(&dp->lock, flags);
	index = e->index;
	dp->rx_msn[2]++;
	dp->orq_head = (dp->orq_head + 1) % dp->orq_size;
	dp->orq_count--;
	kick = iwarp_sq_unstall(dp);
	spin_unlock_irqrestore(&dp->lock, flags);
	if (err) {
		/* our own buffer failed us: a local error */
		softrnic_sq_complete(qp, index,
				     softrnic_mem_wc_status(err, false), 0);
		iwarp_rx_term(iwqp, IW_LAYER_RDMAP, IW_RDMAP_ET_CATASTROPHIC,
			      IW_RDMAP_EC_CATASTROPHIC_STREAM);
		return;
	}
	softrnic_sq_complete(qp, index, IB_WC_SUCCESS, sizeof(orig));
	if (kick)
		softrnic_qp_kick(qp);	/* ORD credit, fence */
}

/* The FPDU ended with its CRC right: complete what it completes. */
static void iwarp_rx_fpdu(struct iwarp_qp *iwqp)
{
	struct iwarp_dp *dp = &iwqp->dp;
	struct softrnic_qp *qp = iwqp->qp;
	const struct iw_pkt *p = &dp->rx_pkt;
	struct iwarp_orq_ent *e;
	struct iwarp_irq_ent *ie;
	unsigned long flags;
	u16 wc_flags = 0;
	u32 ex = 0, index, len, inv_key;
	bool done, rtr, inv, kick;

	if (!dp->rx_pkt_ok)
		return;
	dp->rx_pkt_ok = false;
	switch (p->opcode) {
	case IW_OP_WRITE:
		dp->rx_wr_acc += p->payload_len;
		if (p->last) {
			dp->rx_wr_len = dp->rx_wr_acc;
			dp->rx_wr_acc = 0;
		}
		break;
	case IW_OP_IMM:
	case IW_OP_IMM_SE:
		dp->rx_msn[0]++;
		if (p->rsvd_ulp == IW_IMM_FOR_SEND) {
			dp->rx_imm_pending = true;
			memcpy(&dp->rx_imm, p->imm, sizeof(dp->rx_imm));
			break;
		}
		/* WRITE_WITH_IMM: byte_len is the WRITE's, as on RoCE */
		len = dp->rx_wr_len;
		dp->rx_wr_len = 0;
		memcpy(&ex, p->imm, sizeof(ex));
		iwarp_rx_rqe_done(iwqp, IB_WC_SUCCESS,
				  SOFTRNIC_WC_RECV_RDMA_WITH_IMM, len,
				  SOFTRNIC_WC_F_WITH_IMM, ex,
				  p->opcode == IW_OP_IMM_SE);
		break;
	case IW_OP_ATOMIC_REQ:
		spin_lock_irqsave(&dp->lock, flags);
		ie = &dp->irq[(dp->irq_head + dp->irq_count) % dp->irq_size];
		memset(ie, 0, sizeof(*ie));
		ie->atomic = true;
		ie->aop = p->atomic.op;
		ie->req_id = p->atomic.req_id;
		ie->src_stag = p->atomic.stag;
		ie->src_to = p->atomic.to;
		ie->add_swap = p->atomic.add_swap;
		ie->compare = p->atomic.compare;
		dp->irq_count++;
		spin_unlock_irqrestore(&dp->lock, flags);
		dp->rx_msn[1]++;
		iwarp_tx_schedule(iwqp);
		break;
	case IW_OP_ATOMIC_RESP:
		iwarp_rx_atomic_resp(iwqp, p);
		break;
	case IW_OP_READ_RESP:
		spin_lock_irqsave(&dp->lock, flags);
		e = &dp->orq[dp->orq_head];
		e->placed += p->payload_len;
		done = p->last;
		rtr = e->rtr;
		index = e->index;
		len = e->len;
		inv = e->inv;
		inv_key = e->sge[0].lkey;
		kick = false;
		if (done) {
			dp->orq_head = (dp->orq_head + 1) % dp->orq_size;
			dp->orq_count--;
			kick = iwarp_sq_unstall(dp);
		}
		spin_unlock_irqrestore(&dp->lock, flags);
		/* READ_WITH_INV: the sink MR is invalid before the CQE */
		if (done && !rtr)
			softrnic_sq_complete(qp, index,
					     inv && softrnic_mem_invalidate(&qp->ibqp,
									    inv_key) ?
					     IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS,
					     len);
		if (kick)
			softrnic_qp_kick(qp);	/* ORD credit, fence */
		break;
	case IW_OP_READ_REQ:
		spin_lock_irqsave(&dp->lock, flags);
		ie = &dp->irq[(dp->irq_head + dp->irq_count) % dp->irq_size];
		ie->sink_stag = p->rreq.sink_stag;
		ie->sink_to = p->rreq.sink_to;
		ie->src_stag = p->rreq.src_stag;
		ie->src_to = p->rreq.src_to;
		ie->len = p->rreq.size;
		ie->sent = 0;
		ie->atomic = false;
		dp->irq_count++;
		spin_unlock_irqrestore(&dp->lock, flags);
		dp->rx_msn[1]++;
		iwarp_tx_schedule(iwqp);
		break;
	case IW_OP_TERMINATE:
		iwarp_rx_terminate(iwqp, p);
		return;
	default:	/* SENDs */
		if (dp->rx_rtr) {
			dp->rx_msn[0]++;
			iwarp_rx_rtr_seen(iwqp);
			return;
		}
		dp->rcv_len += p->payload_len;
		if (!p->last)
			break;
		dp->rx_msn[0]++;
		if (p->info->flags & IW_OPF_INV) {
			if (softrnic_mem_invalidate(&qp->ibqp, p->rsvd_ulp)) {
				iwarp_rx_rqe_done(iwqp, IB_WC_REM_INV_REQ_ERR,
						  SOFTRNIC_WC_RECV, 0, 0, 0,
						  false);
				iwarp_rx_term(iwqp, IW_LAYER_RDMAP,
					      IW_RDMAP_ET_OPERATION,
					      IW_RDMAP_EC_CANNOT_INVALIDATE);
				return;
			}
			wc_flags |= SOFTRNIC_WC_F_WITH_INV;
			ex = p->rsvd_ulp;
		}
		if (dp->rx_imm_pending) {
			dp->rx_imm_pending = false;
			wc_flags |= SOFTRNIC_WC_F_WITH_IMM;
			ex = dp->rx_imm;
		}
		iwarp_rx_rqe_done(iwqp, IB_WC_SUCCESS, SOFTRNIC_WC_RECV,
				  dp->rcv_len, wc_flags, ex,
				  p->info->flags & IW_OPF_SE);
		break;
	}
	/*
	 * The responder sends nothing before the RTR came.  It is the first
	 * message; one of another type ends the wait all the same (peers
	 * differ in the RTR they send), so a lenient peer is not stuck.
	 */
	if (dp->rtr_wait)
		iwarp_rx_rtr_seen(iwqp);
}

static int iwarp_rx_actor(read_descriptor_t *desc, struct sk_buff *skb,
			  unsigned int offset, size_t len)
{
	struct iwarp_qp *iwqp = desc->arg.data;
	struct iwarp_dp *dp = &iwqp->dp;
	struct skb_seq_state st;
	unsigned int consumed = 0, n;
	const u8 *data;

	if (!desc->count)
		return 0;
	if (len > desc->count)
		len = desc->count;
	if (test_bit(IWARP_DP_RX_DEAD, &dp->flags)) {
		desc->count -= len;
		return len;		/* a dead stream: discarded */
	}
	skb_prepare_seq_read(skb, offset, offset + len, &st);
	while ((n = skb_seq_read(consumed, &data, &st)) != 0) {
		size_t pos = 0;

		while (pos < n && !test_bit(IWARP_DP_RX_DEAD, &dp->flags)) {
			struct mpa_rx_ev ev;
			size_t used = 0;
			int ret;

			ret = mpa_rx_next(&dp->rx, data + pos, n - pos, &used,
					  &ev);
			pos += used;
			switch (ret) {
			case MPA_RX_HDR:
				iwarp_rx_hdr(iwqp, ev.ulpdu_len);
				break;
			case MPA_RX_DATA:
				iwarp_rx_data(iwqp, ev.data, ev.len,
					      ev.off - dp->rx.hdr_len);
				break;
			case MPA_RX_FPDU:
				softrnic_qp_count(iwqp->qp,
						  IWARP_CNT_RX_FPDUS, 1);
				softrnic_qp_count(iwqp->qp, IWARP_CNT_RX_BYTES,
						  ev.ulpdu_len);
				iwarp_rx_fpdu(iwqp);
				break;
			case MPA_RX_MORE:
				break;
			case MPA_ERR_CRC:
				iwarp_rx_term(iwqp, IW_LAYER_LLP,
					      IW_LLP_ET_MPA, IW_LLP_EC_CRC);
				break;
			case MPA_ERR_MARKER:
				iwarp_rx_term(iwqp, IW_LAYER_LLP,
					      IW_LLP_ET_MPA, IW_LLP_EC_MARKER);
				break;
			default:	/* MPA_ERR_LENGTH */
				iwarp_rx_term(iwqp, IW_LAYER_DDP,
					      IW_DDP_ET_CATASTROPHIC, 0);
				break;
			}
			if (ret == MPA_RX_MORE)
				break;
		}
		consumed += n;
		if (test_bit(IWARP_DP_RX_DEAD, &dp->flags)) {
			skb_abort_seq_read(&st);
			consumed = len;	/* the rest is discarded */
			break;
		}
	}
	desc->count -= consumed;
	return consumed;
}

/*
 * Read what the socket holds, up to @budget bytes; the socket is ours
 * (lock_sock, or the softirq's bh_lock_sock with no owner).  Returns
 * whether the budget ran out; *@eof is set when the stream has ended
 * and nothing of it is left to read.
 */
static bool iwarp_rx_read(struct iwarp_qp *iwqp, struct sock *sk,
			  size_t budget, int *eof)
{
	read_descriptor_t desc = {
		.arg.data = iwqp,
		.count = budget,
	};
	int err;

	tcp_read_sock(sk, &desc, iwarp_rx_actor);
	err = READ_ONCE(sk->sk_err);
	*eof = 0;
	if ((err || (sk->sk_shutdown & RCV_SHUTDOWN) ||
	     sk->sk_state == TCP_CLOSE) &&
	    skb_queue_empty(&sk->sk_receive_queue))
		*eof = err ? -err : -ECONNRESET;
	return !desc.count;
}

static void iwarp_rx_eof(struct iwarp_qp *iwqp, int eof)
{
	struct iwarp_dp *dp = &iwqp->dp;

	if (eof && !test_bit(IWARP_DP_TERM_SENT, &dp->flags) &&
	    !dp->term_pending)
		iwarp_dp_lost(iwqp, eof);
}

void iwarp_rx_work(struct work_struct *work)
{
	struct iwarp_dp *dp = container_of(work, struct iwarp_dp, rx_work);
	struct iwarp_qp *iwqp = container_of(dp, struct iwarp_qp, dp);
	struct sock *sk;
	bool more;
	int eof;

	if (test_bit(IWARP_DP_STOP, &dp->flags) || !dp->sock)
		return;
	sk = dp->sock->sk;
	lock_sock(sk);
	more = iwarp_rx_read(iwqp, sk, IWARP_RX_BUDGET, &eof);
	release_sock(sk);

	if (more)
		softrnic_dp_queue_work(-1, &dp->rx_work);
	else
		iwarp_rx_eof(iwqp, eof);
}

/*
 * From the socket's data_ready (sk_callback_lock held for reading, the
 * data path attached).  In TCP's receive softirq, with the socket
 * bh-locked and no owner, the stream is read right here, as far as
 * IWARP_RX_INLINE_BUDGET: a short message is placed and completed
 * without a switch to the work item and back, which was most of its
 * latency.  Whatever is left -- the rest of a long message, the end of
 * the stream (iwarp_dp_lost() is for the work item) -- and every call
 * while a process owns the socket (its release_sock() delivers the
 * backlog) goes to the work item; the socket lock keeps the two apart.
 */
void iwarp_rx_data_ready(struct iwarp_qp *iwqp, struct sock *sk)
{
	int eof;

	if (sock_owned_by_user_nocheck(sk) ||
	    iwarp_rx_read(iwqp, sk, IWARP_RX_INLINE_BUDGET, &eof) || eof)
		softrnic_dp_queue_work(-1, &iwqp->dp.rx_work);
}
