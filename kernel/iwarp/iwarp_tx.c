// SPDX-License-Identifier: GPL-2.0
/*
 * iWARP transmit: RDMAP messages cut into DDP segments, each framed as an
 * MPA FPDU in dp->txbuf and handed to TCP with MSG_DONTWAIT.
 *
 * Every send on the socket is under dp->tx_mutex, from sq_xmit (the SQ
 * worker, qp->mutex held) or from the tx work item (sk_write_space, the
 * receive side's READ responses and TERMINATE).  An FPDU TCP took only
 * part of stays in txbuf (tx_sent < tx_len) until write_space; the next
 * FPDU is chosen only once it is all out, so TERMINATE, READ responses
 * and the SQ message interleave at FPDU boundaries: TERMINATE first (and
 * nothing after it), then READ responses and the SQ message in turn.
 *
 * The SQ sends one message at a time (sq_xmit says -EAGAIN while one is
 * going out and kicks the SQ when it is done).  SEND and WRITE complete
 * once their last byte was handed to TCP; a READ sits in the ORQ until
 * the receive side placed its last response.  Payload is copied into the
 * FPDU (with BH off around each MR access as mem.h asks), except that a
 * SEND or WRITE of IWARP_ZC_MIN_LEN bytes or more goes by reference to
 * its pages and completes when TCP let go of them (iwarp_zc.c).
 */
#include <linux/mm.h>
#include <net/tcp.h>

#include "iwarp.h"
#include "mem.h"

/* FPDUs one push sends before it lets the work item go on. */
#define IWARP_TX_BUDGET		64

/* dp->lock held: whether the SQ waits (sq_stalled), which ends here. */
bool iwarp_sq_unstall(struct iwarp_dp *dp)
{
	bool was = dp->sq_stalled;

	lockdep_assert_held(&dp->lock);
	dp->sq_stalled = false;
	return was;
}

void iwarp_tx_schedule(struct iwarp_qp *iwqp)
{
	if (!test_bit(IWARP_DP_STOP, &iwqp->dp.flags))
		softrnic_dp_queue_work(-1, &iwqp->dp.tx_work);
}

void iwarp_tx_work(struct work_struct *work)
{
	struct iwarp_dp *dp = container_of(work, struct iwarp_dp, tx_work);
	struct iwarp_qp *iwqp = container_of(dp, struct iwarp_qp, dp);

	mutex_lock(&dp->tx_mutex);
	iwarp_tx_push(iwqp);
	mutex_unlock(&dp->tx_mutex);
}

/*
 * Payload bytes per FPDU after @hl header bytes: one TCP segment (the
 * current MSS) per FPDU, or up to a 64 KiB ULPDU when the peer takes
 * FPDUs beyond a segment.  A multiple of 4, so middle FPDUs need no pad.
 */
static u32 iwarp_tx_max_payload(struct iwarp_dp *dp, u32 hl)
{
	u32 seg;

	if (dp->conn.large_fpdu_tx)
		return (MPA_MAX_ULPDU - hl) & ~3U;
	seg = READ_ONCE(tcp_sk(dp->sock->sk)->mss_cache);
	seg = clamp_t(u32, seg, 256, MPA_MAX_ULPDU);
	return (seg - MPA_LEN_FIELD - hl - IW_CRC32C_LEN - 3) & ~3U;
}

void iwarp_dp_terminate(struct iwarp_qp *iwqp, const struct iw_term *t)
{
	struct iwarp_dp *dp = &iwqp->dp;
	struct iw_pkt p = {
		.opcode = IW_OP_TERMINATE,
		.last = true,
		.msn = 1,
		.term = *t,
	};
	unsigned long flags;
	u32 hl;

	set_bit(IWARP_DP_RX_DEAD, &dp->flags);
	spin_lock_irqsave(&dp->lock, flags);
	if (dp->term_pending || test_bit(IWARP_DP_TERM_SENT, &dp->flags)) {
		spin_unlock_irqrestore(&dp->lock, flags);
		return;
	}
	hl = iw_build_hdrs(dp->term_fpdu + MPA_LEN_FIELD, &p);
	dp->term_len = mpa_fpdu_frame(dp->term_fpdu, hl, dp->conn.crc);
	dp->term_pending = true;
	spin_unlock_irqrestore(&dp->lock, flags);
	ibdev_dbg(iwqp->qp->ibqp.device,
		  "QP %u: TERMINATE layer %u etype %u code 0x%02x\n",
		  iwqp->qp->ibqp.qp_num, t->layer, t->etype, t->ecode);
	iwarp_tx_schedule(iwqp);
}

/* The next FPDU is all in txbuf, @len bytes. */
static void iwarp_tx_linear(struct iwarp_dp *dp, u32 len, u8 done)
{
	dp->tx_len = dp->tx_fpdu_len = len;
	dp->tx_sent = 0;
	dp->tx_bv_len = dp->tx_bv_sent = 0;
	dp->tx_tail_len = dp->tx_tail_sent = 0;
	dp->tx_done = done;
}

/* Frame the ULPDU of @ulpdu_len bytes at txbuf + 2 as the next FPDU. */
static void iwarp_tx_frame(struct iwarp_dp *dp, u32 ulpdu_len, u8 done)
{
	iwarp_tx_linear(dp, mpa_fpdu_frame(dp->txbuf, ulpdu_len, dp->conn.crc),
			done);
}

/* Whether part of the FPDU is still to be handed to TCP. */
static bool iwarp_tx_pending(const struct iwarp_dp *dp)
{
	return dp->tx_sent < dp->tx_len || dp->tx_bv_sent < dp->tx_bv_len ||
	       dp->tx_tail_sent < dp->tx_tail_len;
}

/* Drop our references to the zero-copy payload's pages. */
void iwarp_tx_zc_release(struct iwarp_dp *dp)
{
	u32 i;

	for (i = 0; i < dp->tx_bv_nr; i++)
		put_page(dp->tx_bv[i].bv_page);
	dp->tx_bv_nr = 0;
}

struct iwarp_zc_walk {
	struct iwarp_dp *dp;
	bool crc;
	u32 reg;		/* raw CRC32c register */
};

/* One chunk of the payload, as a page reference (1: copy the FPDU). */
static int iwarp_zc_chunk(void *kaddr, size_t len, void *ctx)
{
	struct iwarp_zc_walk *w = ctx;
	struct iwarp_dp *dp = w->dp;
	/* walks map pages into the direct map (no HIGHMEM: iwarp_sq_xmit) */
	struct page *page = virt_to_page(kaddr);
	struct bio_vec *bv;

	if (dp->tx_bv_nr == IWARP_ZC_FRAGS || !sendpage_ok(page))
		return 1;
	if (w->crc)
		w->reg = iw_crc32c_update(w->reg, kaddr, len);
	get_page(page);
	bv = &dp->tx_bv[dp->tx_bv_nr++];
	bv->bv_page = page;
	bv->bv_offset = offset_in_page(kaddr);
	bv->bv_len = len;
	return 0;
}

/*
 * Build the SQ message's next FPDU (@hl header bytes in txbuf, @chunk
 * payload bytes from m->off) with its payload by reference: 0, 1 when it
 * must be copied instead, or a mem.h errno.
 */
static int iwarp_tx_zc_fpdu(struct iwarp_qp *iwqp, u32 hl, u32 chunk,
			    u8 done)
{
	struct iwarp_dp *dp = &iwqp->dp;
	const struct softrnic_swqe *wqe = dp->msg.wqe;
	struct softrnic_qp *qp = iwqp->qp;
	struct iwarp_zc_walk w = { .dp = dp, .crc = dp->conn.crc };
	u32 ulpdu = hl + chunk;
	int err;

	mpa_fpdu_put_len(dp->txbuf, ulpdu);
	if (w.crc)
		w.reg = iw_crc32c_update(iw_crc32c_begin(), dp->txbuf,
					 MPA_LEN_FIELD + hl);
	local_bh_disable();
	err = softrnic_sges_walk(qp->sdev, to_spd(qp->ibqp.pd), wqe->sge,
				 wqe->sqe.num_sge, dp->msg.off, chunk, false,
				 iwarp_zc_chunk, &w);
	local_bh_enable();
	if (err) {
		iwarp_tx_zc_release(dp);
		return err;
	}
	dp->tx_len = MPA_LEN_FIELD + hl;
	dp->tx_sent = 0;
	dp->tx_bv_len = chunk;
	dp->tx_bv_sent = 0;
	dp->tx_tail_len = mpa_fpdu_tail(dp->tx_tail, ulpdu, w.crc, w.reg);
	dp->tx_tail_sent = 0;
	dp->tx_fpdu_len = mpa_fpdu_len(ulpdu);
	dp->tx_done = done;
	return 0;
}

static void iwarp_tx_rtr(struct iwarp_qp *iwqp)
{
	struct iwarp_dp *dp = &iwqp->dp;
	struct iwarp_orq_ent *e;
	unsigned long flags;
	struct iw_pkt p;
	u32 msn = 0;

	dp->tx_rtr = false;
	if (dp->conn.rtr == MPA_RTR_SEND)
		msn = dp->tx_msn[0]++;
	else if (dp->conn.rtr == MPA_RTR_READ)
		msn = dp->tx_msn[1]++;
	if (!iw_rtr_pkt(&p, dp->conn.rtr, msn))
		return;
	if (dp->conn.rtr == MPA_RTR_READ) {
		/* its zero-length response comes back: expect it */
		spin_lock_irqsave(&dp->lock, flags);
		e = &dp->orq[(dp->orq_head + dp->orq_count) % dp->orq_size];
		memset(e, 0, offsetof(struct iwarp_orq_ent, sge));
		e->rtr = true;
		dp->orq_count++;	/* the first: the ORQ is empty */
		spin_unlock_irqrestore(&dp->lock, flags);
	}
	iwarp_tx_frame(dp, iw_build_hdrs(dp->txbuf + MPA_LEN_FIELD, &p),
		       IWARP_TXD_NONE);
}

static int iwarp_tx_copy_mr(struct softrnic_qp *qp, u32 stag, u64 to,
			    void *buf, u32 len)
{
	struct softrnic_mr *mr;
	u64 iova = to;
	int err;

	local_bh_disable();
	mr = softrnic_rkey_get(&qp->ibqp, stag, IB_ACCESS_REMOTE_READ, &iova,
			       len);
	if (IS_ERR(mr)) {
		err = PTR_ERR(mr);
	} else {
		err = softrnic_mr_copy(mr, iova, buf, len,
				       SOFTRNIC_COPY_FROM_MR);
		softrnic_mr_put(mr);
	}
	local_bh_enable();
	return err;
}

/*
 * Execute the atomic request @e at the IRQ head (the READs before it took
 * their data) and build its Atomic Response.  The request was checked
 * when it came; what fails now (the MR invalidated since) is a TERMINATE.
 */
static void iwarp_tx_atomic(struct iwarp_qp *iwqp,
			    const struct iwarp_irq_ent *e)
{
	struct iwarp_dp *dp = &iwqp->dp;
	struct iw_pkt p = { .opcode = IW_OP_ATOMIC_RESP, .last = true };
	struct softrnic_mr *mr;
	unsigned long flags;
	u64 iova = e->src_to, orig = 0;
	int err;

	local_bh_disable();
	mr = softrnic_rkey_get(&iwqp->qp->ibqp, e->src_stag,
			       IB_ACCESS_REMOTE_ATOMIC, &iova, IW_ATOMIC_LEN);
	if (IS_ERR(mr)) {
		err = PTR_ERR(mr);
	} else {
		err = softrnic_mr_atomic64(mr, iova,
					   e->aop == IW_ATOMIC_CMP_SWAP ?
					   SOFTRNIC_ATOMIC_CMP_SWP :
					   SOFTRNIC_ATOMIC_FETCH_ADD,
					   e->aop == IW_ATOMIC_CMP_SWAP ?
					   e->compare : e->add_swap,
					   e->add_swap, &orig);
		softrnic_mr_put(mr);
	}
	local_bh_enable();
	if (err) {
		struct iw_term t = {};

		iwarp_mem_term(err, false, &t.layer, &t.etype, &t.ecode);
		iwarp_dp_terminate(iwqp, &t);
		return;
	}
	p.msn = dp->tx_msn[2]++;
	p.atomic_resp.req_id = e->req_id;
	p.atomic_resp.orig = orig;
	iwarp_tx_frame(dp, iw_build_hdrs(dp->txbuf + MPA_LEN_FIELD, &p),
		       IWARP_TXD_NONE);

	spin_lock_irqsave(&dp->lock, flags);
	dp->irq_head = (dp->irq_head + 1) % dp->irq_size;
	dp->irq_count--;
	spin_unlock_irqrestore(&dp->lock, flags);
	softrnic_qp_count(iwqp->qp, IWARP_CNT_ATOMICS, 1);
}

/* The next FPDU of the oldest inbound READ request's response. */
static void iwarp_tx_rresp(struct iwarp_qp *iwqp)
{
	struct iwarp_dp *dp = &iwqp->dp;
	struct iwarp_irq_ent e;
	struct iw_pkt p = { .opcode = IW_OP_READ_RESP };
	u8 *ulpdu = dp->txbuf + MPA_LEN_FIELD;
	unsigned long flags;
	u32 chunk, hl;
	int err;

	spin_lock_irqsave(&dp->lock, flags);
	if (!dp->irq_count) {
		spin_unlock_irqrestore(&dp->lock, flags);
		return;
	}
	e = dp->irq[dp->irq_head];
	spin_unlock_irqrestore(&dp->lock, flags);
	if (e.atomic) {
		iwarp_tx_atomic(iwqp, &e);
		return;
	}

	chunk = min(e.len - e.sent, iwarp_tx_max_payload(dp,
							 IW_TAGGED_HDR_LEN));
	p.stag = e.sink_stag;
	p.to = e.sink_to + e.sent;
	p.last = e.sent + chunk == e.len;
	hl = iw_build_hdrs(ulpdu, &p);
	if (chunk) {
		err = iwarp_tx_copy_mr(iwqp->qp, e.src_stag, e.src_to + e.sent,
				       ulpdu + hl, chunk);
		if (err) {
			/* checked at the request: invalidated since */
			struct iw_term t = {};

			iwarp_mem_term(err, false, &t.layer, &t.etype,
				       &t.ecode);
			iwarp_dp_terminate(iwqp, &t);
			return;
		}
	}
	iwarp_tx_frame(dp, hl + chunk, IWARP_TXD_NONE);

	spin_lock_irqsave(&dp->lock, flags);
	dp->irq[dp->irq_head].sent += chunk;
	if (p.last) {
		dp->irq_head = (dp->irq_head + 1) % dp->irq_size;
		dp->irq_count--;
	}
	spin_unlock_irqrestore(&dp->lock, flags);
	if (p.last)
		softrnic_qp_count(iwqp->qp, IWARP_CNT_READ_RESPONSES, 1);
}

/* The SQ message failed locally: complete it, it goes out no further. */
static void iwarp_tx_msg_fail(struct iwarp_qp *iwqp, enum ib_wc_status st)
{
	struct iwarp_dp *dp = &iwqp->dp;

	dp->msg.active = false;
	if (dp->msg.zc) {
		iwarp_zc_sent(dp->msg.zc, true);
		dp->msg.zc = NULL;
	}
	softrnic_sq_complete(iwqp->qp, dp->msg.index, st, 0);
	softrnic_qp_kick(iwqp->qp);
}

/* The next FPDU of the SQ message. */
static void iwarp_tx_msg(struct iwarp_qp *iwqp)
{
	struct iwarp_dp *dp = &iwqp->dp;
	struct iwarp_tx_msg *m = &dp->msg;
	struct softrnic_qp *qp = iwqp->qp;
	const struct softrnic_swqe *wqe = m->wqe;
	u8 *ulpdu = dp->txbuf + MPA_LEN_FIELD;
	struct iw_pkt p = m->pkt;
	u32 chunk, hl;
	u8 done;
	int err = 0;

	/*
	 * RFC 7306 immediate data: SEND_WITH_IMM's goes before the SEND,
	 * WRITE_WITH_IMM's after the WRITE's last FPDU and completes it.
	 */
	if (m->imm_pending && (m->imm_first || (m->started &&
						m->off == m->len))) {
		m->imm_pending = false;
		iwarp_tx_frame(dp, iw_build_hdrs(ulpdu, &m->imm_pkt),
			       m->imm_first ? IWARP_TXD_NONE :
			       IWARP_TXD_MSG_LAST);
		return;
	}
	hl = iw_opcode_hdr_len(iw_opcode_lookup(p.opcode));
	chunk = min(m->len - m->off, iwarp_tx_max_payload(dp, hl));
	if (p.opcode == IW_OP_WRITE)
		p.to += m->off;
	else
		p.mo = m->off;
	p.last = m->off + chunk == m->len;
	hl = iw_build_hdrs(ulpdu, &p);
	done = p.last && !m->imm_pending ? IWARP_TXD_MSG_LAST :
	       IWARP_TXD_NONE;
	if (chunk && m->zc)
		err = iwarp_tx_zc_fpdu(iwqp, hl, chunk, done);
	else
		err = 1;
	if (err > 0) {
		err = 0;
		if (!chunk)
			;
		else if (wqe->sqe.flags & SOFTRNIC_WQE_F_INLINE)
			memcpy(ulpdu + hl, wqe->inline_data + m->off, chunk);
		else {
			local_bh_disable();
			err = softrnic_copy_sges(qp->sdev, to_spd(qp->ibqp.pd),
						 wqe->sge, wqe->sqe.num_sge,
						 m->off, ulpdu + hl, chunk,
						 SOFTRNIC_COPY_FROM_MR);
			local_bh_enable();
		}
		if (!err)
			iwarp_tx_frame(dp, hl + chunk, done);
	}
	if (err) {
		iwarp_tx_msg_fail(iwqp, softrnic_mem_wc_status(err, false));
		return;
	}
	m->started = true;
	m->off += chunk;
}

/* Build the next FPDU into txbuf; false when there is nothing to send. */
static bool iwarp_tx_next(struct iwarp_qp *iwqp)
{
	struct iwarp_dp *dp = &iwqp->dp;
	struct iwarp_tx_msg *m = &dp->msg;
	bool rresp, rresp_mid, msg;
	unsigned long flags;

	if (test_bit(IWARP_DP_TERM_SENT, &dp->flags))
		return false;
	spin_lock_irqsave(&dp->lock, flags);
	if (dp->term_pending) {
		dp->term_pending = false;
		set_bit(IWARP_DP_TERM_SENT, &dp->flags);
		memcpy(dp->txbuf, dp->term_fpdu, dp->term_len);
		iwarp_tx_linear(dp, dp->term_len, IWARP_TXD_TERM);
		spin_unlock_irqrestore(&dp->lock, flags);
		return true;
	}
	rresp = dp->irq_count;
	rresp_mid = rresp && dp->irq[dp->irq_head].sent;
	spin_unlock_irqrestore(&dp->lock, flags);
	/* After a stream error only the TERMINATE goes out. */
	if (test_bit(IWARP_DP_RX_DEAD, &dp->flags))
		return false;

	if (dp->tx_rtr) {
		iwarp_tx_rtr(iwqp);
		return true;
	}
	msg = m->active && (m->imm_pending || !m->started ||
			    m->off < m->len);
	/*
	 * Alternate between READ responses and the SQ message only at
	 * message boundaries: a message once started goes out whole.
	 * Interleaving the DDP segments of a READ response with a WRITE's
	 * (both tagged) is what siw refuses ("packet intersection": EPROTO,
	 * the connection is dropped).
	 */
	if (rresp_mid) {
		iwarp_tx_rresp(iwqp);
		return true;
	}
	if (msg && m->started && m->off < m->len) {
		iwarp_tx_msg(iwqp);
		return true;
	}
	if (rresp && (!msg || dp->tx_rresp_turn)) {
		dp->tx_rresp_turn = false;
		iwarp_tx_rresp(iwqp);
		return true;
	}
	if (msg) {
		dp->tx_rresp_turn = true;
		iwarp_tx_msg(iwqp);
		return true;
	}
	return false;
}

/* The FPDU in txbuf is all in TCP's hands. */
static void iwarp_tx_fpdu_done(struct iwarp_qp *iwqp)
{
	struct iwarp_dp *dp = &iwqp->dp;
	struct iwarp_tx_msg *m = &dp->msg;
	u8 done = dp->tx_done;
	unsigned long flags;
	bool kick;

	iwarp_tx_linear(dp, 0, IWARP_TXD_NONE);
	switch (done) {
	case IWARP_TXD_MSG_LAST:
		if (!m->active)
			break;
		m->active = false;
		if (m->zc) {
			iwarp_zc_sent(m->zc, false);	/* completes later */
			m->zc = NULL;
		} else if (!m->is_read) {
			softrnic_sq_complete(iwqp->qp, m->index, IB_WC_SUCCESS,
					     m->len);
		}
		spin_lock_irqsave(&dp->lock, flags);
		kick = iwarp_sq_unstall(dp);
		spin_unlock_irqrestore(&dp->lock, flags);
		if (kick)
			softrnic_qp_kick(iwqp->qp);	/* the next WQE */
		break;
	case IWARP_TXD_TERM:
		softrnic_qp_count(iwqp->qp, IWARP_CNT_TERM_SENT, 1);
		iwarp_dp_lost(iwqp, -ECONNABORTED);
		break;
	default:
		break;
	}
}

static int iwarp_tx_sendbuf(struct iwarp_dp *dp, void *buf, u32 len,
			    int more)
{
	struct msghdr mh = { .msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL | more };
	struct kvec iov = { .iov_base = buf, .iov_len = len };

	return kernel_sendmsg(dp->sock, &mh, &iov, 1, len);
}

/*
 * Hand TCP what is left of the FPDU: 0 once all of it is out, else the
 * first error (-EAGAIN: no room; the retry after a partial send is what
 * sets SOCK_NOSPACE, and sk_write_space requeues us).
 */
static int iwarp_tx_send(struct iwarp_dp *dp)
{
	int ret;

	while (dp->tx_sent < dp->tx_len) {
		ret = iwarp_tx_sendbuf(dp, dp->txbuf + dp->tx_sent,
				       dp->tx_len - dp->tx_sent,
				       dp->tx_bv_len ? MSG_MORE : 0);
		if (ret < 0)
			return ret;
		dp->tx_sent += ret;
	}
	while (dp->tx_bv_sent < dp->tx_bv_len) {
		ret = iwarp_zc_sendmsg(dp->sock, dp->msg.zc, dp->tx_bv,
				       dp->tx_bv_nr, dp->tx_bv_len,
				       dp->tx_bv_sent);
		if (ret < 0)
			return ret;
		dp->tx_bv_sent += ret;
	}
	iwarp_tx_zc_release(dp);	/* TCP holds its own references */
	while (dp->tx_tail_sent < dp->tx_tail_len) {
		ret = iwarp_tx_sendbuf(dp, dp->tx_tail + dp->tx_tail_sent,
				       dp->tx_tail_len - dp->tx_tail_sent, 0);
		if (ret < 0)
			return ret;
		dp->tx_tail_sent += ret;
	}
	return 0;
}

/* Send what there is to send, without waiting for socket space. */
void iwarp_tx_push(struct iwarp_qp *iwqp)
{
	struct iwarp_dp *dp = &iwqp->dp;
	int budget = IWARP_TX_BUDGET;

	lockdep_assert_held(&dp->tx_mutex);
	while (!test_bit(IWARP_DP_STOP, &dp->flags) && dp->sock &&
	       !test_bit(IWARP_DP_LOST, &dp->flags)) {
		if (iwarp_tx_pending(dp)) {
			int ret = iwarp_tx_send(dp);

			if (ret == -EAGAIN)
				return;
			if (ret < 0) {
				iwarp_dp_lost(iwqp, ret);
				return;
			}
			softrnic_qp_count(iwqp->qp, IWARP_CNT_TX_FPDUS, 1);
			softrnic_qp_count(iwqp->qp, IWARP_CNT_TX_BYTES,
					  dp->tx_fpdu_len);
			if (dp->tx_bv_len)
				softrnic_qp_count(iwqp->qp,
						  IWARP_CNT_TX_ZCOPY_FPDUS, 1);
			iwarp_tx_fpdu_done(iwqp);
			continue;
		}
		if (!budget--) {
			iwarp_tx_schedule(iwqp);
			return;
		}
		if (!iwarp_tx_next(iwqp))
			return;
	}
}

static u64 iwarp_sge_bytes(const struct softrnic_swqe *wqe)
{
	u64 n = 0;
	u32 i;

	for (i = 0; i < wqe->sqe.num_sge; i++)
		n += wqe->sge[i].length;
	return n;
}

int iwarp_sq_xmit(struct softrnic_qp *qp, const struct softrnic_swqe *wqe)
{
	struct iwarp_qp *iwqp = iwarp_qp(qp);
	struct iwarp_dp *dp = &iwqp->dp;
	struct iwarp_tx_msg *m = &dp->msg;
	const struct softrnic_sqe *sqe = &wqe->sqe;
	struct iw_pkt p = {};
	struct iw_pkt imm = {};
	struct iwarp_orq_ent *e;
	unsigned long flags;
	bool inl = sqe->flags & SOFTRNIC_WQE_F_INLINE;
	bool se = sqe->flags & SOFTRNIC_WQE_F_SOLICITED;
	bool has_imm = false, atomic = false;
	u64 len;
	int ret = 0;

	lockdep_assert_held(&qp->mutex);
	/* Not connected (yet): posted until the connection or a flush. */
	if (!dp->sock || test_bit(IWARP_DP_STOP, &dp->flags))
		return -EAGAIN;
	if (test_bit(IWARP_DP_LOST, &dp->flags) ||
	    test_bit(IWARP_DP_RX_DEAD, &dp->flags))
		return -EAGAIN;		/* ERR and its flush are coming */

	len = inl ? sqe->rdma.inline_len : iwarp_sge_bytes(wqe);
	if (len > SOFTRNIC_MAX_MSG_SIZE)
		return IB_WC_LOC_LEN_ERR;

	switch (sqe->opcode) {
	case SOFTRNIC_WR_RDMA_WRITE_WITH_IMM:
	case SOFTRNIC_WR_SEND_WITH_IMM:
	case SOFTRNIC_WR_ATOMIC_CMP_AND_SWP:
	case SOFTRNIC_WR_ATOMIC_FETCH_AND_ADD:
		/*
		 * RFC 7306: only where both ends agreed to it (never with
		 * siw); without it the WQE fails here, nothing is sent.
		 */
		if (!dp->conn.rdmap_ext)
			return IB_WC_LOC_QP_OP_ERR;
		break;
	default:
		break;
	}

	switch (sqe->opcode) {
	case SOFTRNIC_WR_SEND_WITH_IMM:
		has_imm = true;
		fallthrough;
	case SOFTRNIC_WR_SEND:
		p.opcode = se ? IW_OP_SEND_SE : IW_OP_SEND;
		break;
	case SOFTRNIC_WR_SEND_WITH_INV:
		p.opcode = (sqe->flags & SOFTRNIC_WQE_F_SOLICITED) ?
			   IW_OP_SEND_SE_INV : IW_OP_SEND_INV;
		p.rsvd_ulp = sqe->ex;
		break;
	case SOFTRNIC_WR_RDMA_WRITE_WITH_IMM:
		has_imm = true;
		fallthrough;
	case SOFTRNIC_WR_RDMA_WRITE:
		p.opcode = IW_OP_WRITE;
		p.stag = sqe->rdma.rkey;
		p.to = sqe->rdma.remote_addr;
		if (len && p.to + len - 1 < p.to)
			return IB_WC_LOC_LEN_ERR;	/* TO would wrap */
		break;
	case SOFTRNIC_WR_RDMA_READ:
		if (inl)
			return IB_WC_LOC_QP_OP_ERR;
		p.opcode = IW_OP_READ_REQ;
		p.rreq.size = len;
		p.rreq.src_stag = sqe->rdma.rkey;
		p.rreq.src_to = sqe->rdma.remote_addr;
		if (wqe->sqe.num_sge) {
			p.rreq.sink_stag = wqe->sge[0].lkey;
			p.rreq.sink_to = wqe->sge[0].addr;
		}
		break;
	case SOFTRNIC_WR_ATOMIC_CMP_AND_SWP:
	case SOFTRNIC_WR_ATOMIC_FETCH_AND_ADD:
		/* the original value lands in one 8-byte local buffer */
		if (inl)
			return IB_WC_LOC_QP_OP_ERR;
		if (len != IW_ATOMIC_LEN)
			return IB_WC_LOC_LEN_ERR;
		atomic = true;
		p.opcode = IW_OP_ATOMIC_REQ;
		p.atomic.stag = sqe->atomic.rkey;
		p.atomic.to = sqe->atomic.remote_addr;
		if (sqe->opcode == SOFTRNIC_WR_ATOMIC_CMP_AND_SWP) {
			p.atomic.op = IW_ATOMIC_CMP_SWAP;
			p.atomic.compare = sqe->atomic.compare_add;
			p.atomic.add_swap = sqe->atomic.swap;
		} else {
			p.atomic.op = IW_ATOMIC_FETCH_ADD;
			p.atomic.add_swap = sqe->atomic.compare_add;
		}
		break;
	default:
		/* RFC 7306 (immediate data, atomics) is not sent yet. */
		return IB_WC_LOC_QP_OP_ERR;
	}

	mutex_lock(&dp->tx_mutex);
	spin_lock_irqsave(&dp->lock, flags);
	if (m->active) {
		/* kicked when it is out (tx_mutex orders the two) */
		dp->sq_stalled = true;
		spin_unlock_irqrestore(&dp->lock, flags);
		ret = -EAGAIN;
		goto out;
	}
	if (dp->rtr_wait ||
	    ((sqe->flags & SOFTRNIC_WQE_F_FENCE) && dp->orq_count)) {
		/* kicked when the RTR came, when the READs completed */
		dp->sq_stalled = true;
		spin_unlock_irqrestore(&dp->lock, flags);
		ret = -EAGAIN;
		goto out;
	}
	if (p.opcode == IW_OP_READ_REQ || atomic) {
		if (dp->orq_count >= min_t(u32, dp->orq_size,
					   dp->conn.ord ?: 1)) {
			dp->sq_stalled = true;
			spin_unlock_irqrestore(&dp->lock, flags);
			ret = -EAGAIN;	/* kicked when a READ completed */
			goto out;
		}
		/* in the ORQ before the request can be answered */
		e = &dp->orq[(dp->orq_head + dp->orq_count) % dp->orq_size];
		e->index = wqe->index;
		e->rtr = false;
		e->atomic = atomic;
		e->inv = sqe->flags & SOFTRNIC_WQE_F_KREAD_INV;
		if (atomic)
			e->req_id = p.atomic.req_id = dp->tx_atomic_id++;
		e->sink_stag = p.rreq.sink_stag;
		e->sink_to = p.rreq.sink_to;
		e->len = len;
		e->placed = 0;
		e->num_sge = sqe->num_sge;
		memcpy(e->sge, wqe->sge, sqe->num_sge * sizeof(e->sge[0]));
		dp->orq_count++;
		p.msn = dp->tx_msn[1]++;
	} else {
		/*
		 * QN 0: SEND_WITH_IMM's immediate data takes the MSN before
		 * its SEND, WRITE_WITH_IMM's the one after the (tagged)
		 * WRITE.  The 32-bit immediate is bytes 0-3 of the 8, in
		 * the network order the verbs hand it over in.
		 */
		if (has_imm && p.opcode != IW_OP_WRITE)
			imm.msn = dp->tx_msn[0]++;
		if (p.opcode != IW_OP_WRITE)
			p.msn = dp->tx_msn[0]++;
		if (has_imm && p.opcode == IW_OP_WRITE)
			imm.msn = dp->tx_msn[0]++;
	}
	spin_unlock_irqrestore(&dp->lock, flags);
	if (has_imm) {
		bool for_send = p.opcode != IW_OP_WRITE;

		/* the SEND carries the SE of SEND_WITH_IMM */
		imm.opcode = se && !for_send ? IW_OP_IMM_SE : IW_OP_IMM;
		imm.last = true;
		imm.rsvd_ulp = for_send ? IW_IMM_FOR_SEND : IW_IMM_ALONE;
		memcpy(imm.imm, &sqe->ex, sizeof(sqe->ex));
		m->imm_pkt = imm;
		m->imm_first = for_send;
	}
	m->imm_pending = has_imm;

	m->pkt = p;
	m->is_read = p.opcode == IW_OP_READ_REQ || atomic;
	m->index = wqe->index;
	m->len = m->is_read ? 0 : len;
	/* zero-copy needs the walks' kernel addresses to be the direct map */
	if (!m->is_read && !inl && len >= IWARP_ZC_MIN_LEN && dp->zc_owner &&
	    !IS_ENABLED(CONFIG_HIGHMEM))
		m->zc = iwarp_zc_new(dp->zc_owner, wqe->index, len,
				     softrnic_gfp(qp->user));
	m->off = 0;
	m->started = false;
	if (!m->is_read) {
		/* the payload source: the SGEs, or the inline bytes */
		m->wqe->sqe = *sqe;
		if (inl)
			memcpy(m->wqe->inline_data, wqe->inline_data, len);
		else
			memcpy(m->wqe->sge, wqe->sge,
			       sqe->num_sge * sizeof(wqe->sge[0]));
	}
	m->active = true;
	iwarp_tx_push(iwqp);
out:
	mutex_unlock(&dp->tx_mutex);
	return ret;
}
