// SPDX-License-Identifier: GPL-2.0
/*
 * RC requester: turns send WQEs into request packets, and ACKs, NAKs,
 * READ responses and atomic ACKs back into completions.
 *
 * The SQ worker hands each network WQE to roce_req_take() (qp->mutex
 * held), which copies it into the ring req.rwqe and gives it its PSN
 * range: one PSN per packet of a SEND or WRITE, one per expected
 * response packet of a READ, one for an atomic.  roce_req_tx() then
 * sends packets from (req.tx, req.tx_psn) while fewer than ROCE_WINDOW
 * PSNs are unacknowledged.  It runs wherever there is something to send:
 * in the context that rang the SQ doorbell (sq_xmit), in the receive
 * softirq of the ACK or response that opened the window, or in the QP's
 * transmit work item (leftovers beyond a budget, timers).  One context
 * transmits at a time (req.tx_busy, under req.lock), so packets leave in
 * PSN order, and each packet is built after dropping req.lock.  The WQE
 * copy a transmitter reads without req.lock (req.tx_cur) is not reused
 * by roce_req_take() until that transmitter is done with it.
 *
 * A QP transmits from one CPU while packets are in flight (req.tx_cpu):
 * a veth delivers into the sending CPU's backlog, so packets of one flow
 * sent from two CPUs can overtake each other, which costs a sequence NAK
 * and a go-back.  A doorbell or an ACK on another CPU hands the transmit
 * to the work item on tx_cpu (on roce_steer.c's bound queue, where it
 * preempts a process spinning on that CPU).  Once everything sent is
 * acknowledged nothing can be overtaken, and the next transmitter's CPU
 * becomes tx_cpu.  The work item itself always transmits where it runs.
 *
 * Acknowledgement (softirq, req.lock): [una_psn, max_sent) are in
 * flight.  An ACK for PSN p completes every SEND/WRITE ending at or
 * before p, in order.  READ and atomic WQEs complete only with their
 * response; an ACK or NAK beyond an unanswered READ means its responses
 * were lost ("implied NAK") and the READ is re-requested from the first
 * missing byte.  Sequence-error NAKs, timeouts and RNR NAKs go back to a
 * PSN (go-back-N) and let the transmit work resend from there.
 *
 * Timers: rto is armed while anything is unacknowledged and counts from
 * the last progress (rto_start; the timer is not moved on every ACK, and
 * may fire once with nothing in flight, for nothing); when it expires,
 * retry_left is decremented and everything from
 * una_psn is resent, or, at zero, the oldest WQE completes with
 * IB_WC_RETRY_EXC_ERR.  Each expiry without progress doubles the next
 * wait, up to 8 times the QP's timeout (roce_rto_jiffies()).  timeout 0 means no timer (infinite).  rnr holds
 * transmission for the RNR NAK's delay; rnr_retry 7 retries forever.
 */
#include "roce.h"

/* Retransmission timeout floor: jiffies granularity, and TCG guests. */
#define ROCE_RTO_MIN_MS		10
/* Doublings of the retransmission timeout without progress (x8). */
#define ROCE_RTO_BACKOFF_MAX	3

static void roce_rto_fn(struct timer_list *t);
static void roce_rnr_fn(struct timer_list *t);

void roce_req_init(struct roce_qp *rqp)
{
	struct roce_req *req = &rqp->req;

	spin_lock_init(&req->lock);
	timer_setup(&req->rto, roce_rto_fn, 0);
	timer_setup(&req->rnr, roce_rnr_fn, 0);
	INIT_WORK(&req->work, roce_req_work);
	req->tx_cpu = -1;
}

/* Have the transmit work item run, on tx_cpu if there is one. */
void roce_req_kick(struct roce_qp *rqp)
{
	if (!READ_ONCE(rqp->dying))
		softrnic_dp_queue_work(READ_ONCE(rqp->req.tx_cpu),
				       &rqp->req.work);
}

/* From RTR to RTS: start at sq_psn; qp->mutex held. */
void roce_req_start(struct roce_qp *rqp)
{
	struct softrnic_qp *qp = rqp->qp;
	struct roce_req *req = &rqp->req;
	unsigned long flags;

	spin_lock_irqsave(&req->lock, flags);
	req->next_psn = qp->attr.sq_psn & ROCE_PSN_MASK;
	req->una_psn = req->next_psn;
	req->tx_psn = req->next_psn;
	req->max_sent = req->next_psn;
	req->read_nak_psn = ~0U;
	req->head = req->tail = req->tx = 0;
	req->rd_out = 0;
	req->noack = 0;
	req->retry_left = qp->attr.retry_cnt;
	req->rnr_left = qp->attr.rnr_retry;
	req->rnr_wait = false;
	req->want_kick = false;
	req->want_psns = 0;
	req->mtu = roce_mtu(qp);
	req->active = true;
	spin_unlock_irqrestore(&req->lock, flags);
}

/* ERR, RESET, destroy: forget everything in flight. */
void roce_req_stop(struct roce_qp *rqp)
{
	struct roce_req *req = &rqp->req;
	unsigned long flags;

	spin_lock_irqsave(&req->lock, flags);
	req->active = false;
	req->gen++;
	req->head = req->tail = req->tx = 0;
	req->rd_out = 0;
	req->want_kick = false;
	req->want_psns = 0;
	spin_unlock_irqrestore(&req->lock, flags);
	del_timer(&req->rto);
	del_timer(&req->rnr);
}

static struct roce_rwqe *roce_rwqe(struct roce_req *req, u32 i)
{
	return &req->rwqe[i % req->nslots];
}

/*
 * Operations that use the responder's READ/atomic resources and complete
 * only with a response: READ, the atomics, and FLUSH and ATOMIC WRITE
 * (memory placement extensions; answered by a zero-length READ RESPONSE
 * ONLY).
 */
static bool roce_op_is_rd(u8 op)
{
	return op == ROCE_OP_READ || op == ROCE_OP_CMP_SWAP ||
	       op == ROCE_OP_FETCH_ADD || op == ROCE_OP_FLUSH ||
	       op == ROCE_OP_ATOMIC_WRITE;
}

/* Answered by a zero-length READ RESPONSE ONLY. */
static bool roce_op_is_placement(u8 op)
{
	return op == ROCE_OP_FLUSH || op == ROCE_OP_ATOMIC_WRITE;
}

/*
 * The wait before the next expiry: 4.096 us << timeout, doubled for each
 * expiry since the last progress, up to ROCE_RTO_BACKOFF_MAX doublings.
 * A fixed timer resent the whole window every period into a path that
 * still held the previous copies (a QEMU hub between two virtio-net
 * NICs queues for far longer than 67 ms), and a clean-link transfer
 * with large READs could run out of retries while every packet was on
 * its way.  As with TCP's and adaptive-retransmission RNICs', the first
 * expiry still comes after the QP's own timeout.
 */
static unsigned long roce_rto_jiffies(const struct roce_qp *rqp)
{
	const struct softrnic_qp *qp = rqp->qp;
	int used = (int)qp->attr.retry_cnt - READ_ONCE(rqp->req.retry_left);
	u64 ns = 4096ULL << qp->attr.timeout;

	ns <<= clamp(used, 0, ROCE_RTO_BACKOFF_MAX);
	return max(nsecs_to_jiffies64(ns),
		   (u64)msecs_to_jiffies(ROCE_RTO_MIN_MS));
}

/*
 * Restart the retransmission timeout after progress.  The timer itself
 * is left where it is, even with nothing in flight: it fires at most
 * once more and looks at rto_start then (roce_rto_fn()).  Deleting it
 * on every ACK and arming it again for the next message took the timer
 * base's lock twice per message, a tenth of a short message's time.
 */
static void roce_rto_update(struct roce_qp *rqp)
{
	struct roce_req *req = &rqp->req;

	if (!rqp->qp->attr.timeout || rqp->dying) {
		del_timer(&req->rto);
		return;
	}
	req->rto_start = jiffies;
	if (roce_psn_diff(req->max_sent, req->una_psn) > 0 &&
	    !timer_pending(&req->rto))
		mod_timer(&req->rto, jiffies + roce_rto_jiffies(rqp));
}

/*
 * Room for @npkts more PSNs?  A READ reserves all its response PSNs at
 * once; past 2^23 - 1 outstanding the requester's window checks wrap and
 * the QP hangs, so a WQE waits until enough has drained, as hardware
 * does.  req.lock held.
 */
static bool roce_req_psn_room(const struct roce_req *req, u32 npkts)
{
	return roce_psn_room(req->next_psn, req->una_psn, npkts);
}

int roce_req_take(struct roce_qp *rqp, const struct softrnic_swqe *wqe)
{
	struct softrnic_qp *qp = rqp->qp;
	struct roce_req *req = &rqp->req;
	const struct softrnic_sqe *sqe = &wqe->sqe;
	struct roce_rwqe *r;
	unsigned long flags;
	u32 npkts, mtu;
	u64 len;
	u8 op;

	switch (sqe->opcode) {
	case SOFTRNIC_WR_SEND:
	case SOFTRNIC_WR_SEND_WITH_IMM:
	case SOFTRNIC_WR_SEND_WITH_INV:
		op = ROCE_OP_SEND;
		break;
	case SOFTRNIC_WR_RDMA_WRITE:
	case SOFTRNIC_WR_RDMA_WRITE_WITH_IMM:
		op = ROCE_OP_WRITE;
		break;
	case SOFTRNIC_WR_RDMA_READ:
		op = ROCE_OP_READ;
		break;
	case SOFTRNIC_WR_ATOMIC_CMP_AND_SWP:
		op = ROCE_OP_CMP_SWAP;
		break;
	case SOFTRNIC_WR_ATOMIC_FETCH_AND_ADD:
		op = ROCE_OP_FETCH_ADD;
		break;
	case SOFTRNIC_WR_FLUSH:
		op = ROCE_OP_FLUSH;
		break;
	case SOFTRNIC_WR_ATOMIC_WRITE:
		op = ROCE_OP_ATOMIC_WRITE;
		break;
	default:
		return IB_WC_LOC_QP_OP_ERR;
	}
	if (op == ROCE_OP_FLUSH) {
		/* No local data: the length is the RETH's. */
		if (!sr_flush_wqe_valid(sqe->flush.type, sqe->flush.level,
					sqe->flush.length))
			return IB_WC_LOC_QP_OP_ERR;
		len = 0;
	} else if (op == ROCE_OP_ATOMIC_WRITE) {
		len = sizeof(u64);	/* carried in the WQE (atomic.swap) */
	} else if (sqe->flags & SOFTRNIC_WQE_F_INLINE)
		len = sr_sqe_inline_len(sqe, qp->kind);
	else
		len = sr_sge_total(wqe->sge, sqe->num_sge,
				   SOFTRNIC_MAX_MSG_SIZE);
	if (len > SOFTRNIC_MAX_MSG_SIZE)
		return IB_WC_LOC_LEN_ERR;
	if ((op == ROCE_OP_CMP_SWAP || op == ROCE_OP_FETCH_ADD) &&
	    len != sizeof(u64))
		return IB_WC_LOC_LEN_ERR;

	spin_lock_irqsave(&req->lock, flags);
	if (!req->active)
		goto busy;	/* on its way to ERR: the flush takes it */
	if (req->tail - req->head == req->nslots)
		goto busy;
	mtu = req->mtu;
	npkts = roce_op_is_rd(op) && op != ROCE_OP_READ ? 1 :
		max_t(u32, DIV_ROUND_UP_ULL(len, mtu), 1);
	/* Never fits in the PSN window, however far it drains. */
	if (npkts > ROCE_PSN_OUTSTANDING_MAX) {
		spin_unlock_irqrestore(&req->lock, flags);
		return IB_WC_LOC_LEN_ERR;
	}
	if (!roce_req_psn_room(req, npkts)) {
		req->want_psns = npkts;
		goto busy;
	}
	if (roce_op_is_rd(op) &&
	    req->rd_out >= max_t(u32, qp->attr.max_rd_atomic, 1))
		goto busy;
	if ((sqe->flags & SOFTRNIC_WQE_F_FENCE) && req->rd_out)
		goto busy;
	r = roce_rwqe(req, req->tail);
	if (req->tx_busy && req->tx_cur == r) {
		/* A transmitter still reads the old WQE here; it kicks us. */
		req->tx_slot_wait = true;
		goto busy;
	}
	/*
	 * The header and only the part of the payload area the WQE uses:
	 * the whole struct is ~580 bytes, ~1.2 us per post under TCG.
	 */
	r->wqe.sqe = *sqe;
	r->wqe.index = wqe->index;
	if (op == ROCE_OP_FLUSH || op == ROCE_OP_ATOMIC_WRITE)
		;	/* everything is in the header */
	else if (sqe->flags & SOFTRNIC_WQE_F_INLINE)
		memcpy(r->wqe.inline_data, wqe->inline_data,
		       min_t(u64, len, sizeof(r->wqe.inline_data)));
	else
		memcpy(r->wqe.sge, wqe->sge,
		       min_t(u32, sqe->num_sge, SOFTRNIC_MAX_SGE) *
		       sizeof(*wqe->sge));
	r->len = len;
	r->op = op;
	r->done = false;
	r->first_psn = req->next_psn;
	r->last_psn = roce_psn_add(req->next_psn, npkts - 1);
	req->next_psn = roce_psn_add(r->last_psn, 1);
	if (roce_op_is_rd(op))
		req->rd_out++;
	req->tail++;
	spin_unlock_irqrestore(&req->lock, flags);
	return 0;
busy:
	req->want_kick = true;
	spin_unlock_irqrestore(&req->lock, flags);
	return -EAGAIN;
}

/* One packet to send, decided under req.lock. */
struct roce_txpkt {
	struct roce_pkt pkt;
	struct roce_rwqe *r;
	u32 off;			/* message offset of the payload */
};

static u8 roce_send_opcode(const struct roce_rwqe *r, bool first, bool last)
{
	u8 opc = r->wqe.sqe.opcode;

	if (r->op == ROCE_OP_WRITE) {
		bool imm = opc == SOFTRNIC_WR_RDMA_WRITE_WITH_IMM;

		if (first && last)
			return imm ? ROCE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE :
				     ROCE_RC_RDMA_WRITE_ONLY;
		if (first)
			return ROCE_RC_RDMA_WRITE_FIRST;
		if (last)
			return imm ? ROCE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE :
				     ROCE_RC_RDMA_WRITE_LAST;
		return ROCE_RC_RDMA_WRITE_MIDDLE;
	}
	if (first && last) {
		if (opc == SOFTRNIC_WR_SEND_WITH_IMM)
			return ROCE_RC_SEND_ONLY_WITH_IMMEDIATE;
		if (opc == SOFTRNIC_WR_SEND_WITH_INV)
			return ROCE_RC_SEND_ONLY_WITH_INVALIDATE;
		return ROCE_RC_SEND_ONLY;
	}
	if (first)
		return ROCE_RC_SEND_FIRST;
	if (last) {
		if (opc == SOFTRNIC_WR_SEND_WITH_IMM)
			return ROCE_RC_SEND_LAST_WITH_IMMEDIATE;
		if (opc == SOFTRNIC_WR_SEND_WITH_INV)
			return ROCE_RC_SEND_LAST_WITH_INVALIDATE;
		return ROCE_RC_SEND_LAST;
	}
	return ROCE_RC_SEND_MIDDLE;
}

/* Is there a packet that may be sent now?  req.lock held. */
static bool roce_req_can_send(const struct roce_req *req)
{
	return req->active && !req->rnr_wait && req->tx != req->tail &&
	       roce_psn_diff(req->tx_psn, req->una_psn) < ROCE_WINDOW;
}

/*
 * The next packet at (tx, tx_psn), and advance; req.lock held.  Returns
 * false if nothing may be sent now.
 */
static bool roce_req_next(struct roce_qp *rqp, struct roce_txpkt *t)
{
	struct roce_req *req = &rqp->req;
	struct roce_pkt *pkt = &t->pkt;
	const struct softrnic_sqe *sqe;
	struct roce_rwqe *r;
	u32 n, mtu = req->mtu;
	bool first, last, idle;

	if (!roce_req_can_send(req))
		return false;
	idle = roce_psn_diff(req->max_sent, req->una_psn) <= 0;
	r = roce_rwqe(req, req->tx);
	sqe = &r->wqe.sqe;
	memset(pkt, 0, sizeof(*pkt));
	pkt->psn = req->tx_psn;
	pkt->dest_qpn = rqp->qp->attr.dest_qp_num;
	t->r = r;
	n = roce_psn_diff(req->tx_psn, r->first_psn);

	switch (r->op) {
	case ROCE_OP_SEND:
	case ROCE_OP_WRITE:
		t->off = n * mtu;
		first = n == 0;
		last = r->len - t->off <= mtu;
		pkt->payload_len = last ? r->len - t->off : mtu;
		pkt->opcode = roce_send_opcode(r, first, last);
		if (first && r->op == ROCE_OP_WRITE) {
			pkt->reth.va = sqe->rdma.remote_addr;
			pkt->reth.rkey = sqe->rdma.rkey;
			pkt->reth.len = r->len;
		}
		if (last) {
			pkt->imm = be32_to_cpu((__force __be32)sqe->ex);
			pkt->inv_rkey = sqe->ex;
			if (sqe->flags & SOFTRNIC_WQE_F_SOLICITED)
				pkt->bth_flags |= ROCE_PKT_SE;
		}
		pkt->ackreq = last || ++req->noack >= ROCE_ACK_EVERY;
		req->tx_psn = roce_psn_add(req->tx_psn, 1);
		if (last)
			req->tx++;
		break;
	case ROCE_OP_FLUSH:
		t->off = 0;
		pkt->opcode = ROCE_RC_FLUSH;
		pkt->feth.sel = sqe->flush.level;
		pkt->feth.plt = sqe->flush.type;
		pkt->reth.va = sqe->flush.remote_addr;
		pkt->reth.rkey = sqe->flush.rkey;
		pkt->reth.len = (u32)sqe->flush.length;	/* checked at take */
		pkt->ackreq = true;
		req->tx_psn = roce_psn_add(req->tx_psn, 1);
		req->tx++;
		break;
	case ROCE_OP_ATOMIC_WRITE:
		t->off = 0;
		pkt->opcode = ROCE_RC_ATOMIC_WRITE;
		pkt->reth.va = sqe->atomic.remote_addr;
		pkt->reth.rkey = sqe->atomic.rkey;
		pkt->reth.len = ROCE_ATOMIC_WRITE_LEN;
		pkt->payload_len = ROCE_ATOMIC_WRITE_LEN;
		pkt->ackreq = true;
		req->tx_psn = roce_psn_add(req->tx_psn, 1);
		req->tx++;
		break;
	case ROCE_OP_READ:
		/* A re-request asks for what is still missing. */
		t->off = n * mtu;
		pkt->opcode = ROCE_RC_RDMA_READ_REQUEST;
		pkt->reth.va = sqe->rdma.remote_addr + t->off;
		pkt->reth.rkey = sqe->rdma.rkey;
		pkt->reth.len = r->len - t->off;
		pkt->ackreq = true;
		req->tx_psn = roce_psn_add(r->last_psn, 1);
		req->tx++;
		break;
	default:			/* atomics */
		t->off = 0;
		pkt->opcode = r->op == ROCE_OP_CMP_SWAP ? ROCE_RC_COMPARE_SWAP :
							 ROCE_RC_FETCH_ADD;
		pkt->atomic.va = sqe->atomic.remote_addr;
		pkt->atomic.rkey = sqe->atomic.rkey;
		if (r->op == ROCE_OP_CMP_SWAP) {
			pkt->atomic.compare = sqe->atomic.compare_add;
			pkt->atomic.swap_add = sqe->atomic.swap;
		} else {
			pkt->atomic.swap_add = sqe->atomic.compare_add;
		}
		pkt->ackreq = true;
		req->tx_psn = roce_psn_add(req->tx_psn, 1);
		req->tx++;
		break;
	}
	if (pkt->ackreq)
		req->noack = 0;
	if (roce_psn_diff(req->tx_psn, req->max_sent) > 0)
		req->max_sent = req->tx_psn;
	else
		roce_qp_count(rqp->qp, ROCE_CNT_RETRANSMITS, 1);
	if (rqp->qp->attr.timeout && !rqp->dying) {
		/* The first packet in flight starts the clock. */
		if (idle || !timer_pending(&req->rto))
			req->rto_start = jiffies;
		if (!timer_pending(&req->rto))
			mod_timer(&req->rto, jiffies + roce_rto_jiffies(rqp));
	}
	return true;
}

/* Complete the WQE at req.head in error; the QP goes to ERR.  req.lock. */
static void roce_req_fail(struct roce_qp *rqp, struct roce_rwqe *r,
			  enum ib_wc_status status)
{
	struct roce_req *req = &rqp->req;

	ibdev_dbg(rqp->qp->ibqp.device, "QP %u: WQE %u failed: %s\n",
		  rqp->qp->ibqp.qp_num, r->wqe.index,
		  ib_wc_status_msg(status));
	req->active = false;
	r->done = true;
	softrnic_sq_complete(rqp->qp, r->wqe.index, status, 0);
	del_timer(&req->rto);
	del_timer(&req->rnr);
}

/*
 * Send what may be sent now, at most ROCE_TX_BUDGET packets; leftovers,
 * and what must be sent from tx_cpu, go to the transmit work item.  Any
 * context; no lock held; @work: called by that work item.  A caller that
 * finds another context transmitting leaves the work to that one, which
 * looks at the state again under req.lock before every packet and before
 * it stops.
 *
 * Packets leave in batches (struct roce_batch): one trip through the
 * stack for up to a GSO skb's worth of them.  A batch is sent before
 * tx_busy is given up, so no other context's packets overtake it.
 */
static void __roce_req_tx(struct roce_qp *rqp, bool work)
{
	struct softrnic_qp *qp = rqp->qp;
	struct roce_req *req = &rqp->req;
	unsigned int budget = ROCE_TX_BUDGET;
	const struct softrnic_sqe *sqe;
	bool more = false, kick_sq, outer;
	struct roce_batch b = { };
	struct roce_txpkt t;
	unsigned long flags;
	void *payload;
	int err, cpu;
	u32 gen;

	/*
	 * BH off from the tx_cpu check to the transmit of each batch: a
	 * doorbell's process context could otherwise move to the other CPU
	 * in between and put packets in that CPU's backlog, behind or ahead
	 * of the rest (a sequence NAK).  Enabled between batches, so the
	 * receive softirq runs in between as before.  From task context
	 * (a doorbell, the work item) what the transmit looped back to this
	 * host is received right here before BH is on (roce_loop.c).
	 */
	outer = !in_interrupt();
	local_bh_disable();
	b.loop_drain = roce_loop_drain_begin(outer);
	spin_lock_irqsave(&req->lock, flags);
	if (req->tx_busy) {
		spin_unlock_irqrestore(&req->lock, flags);
		if (b.loop_drain)
			roce_loop_drain();
		local_bh_enable();
		return;
	}
	req->tx_busy = true;
	for (;;) {
		if (!budget) {
			more = roce_req_can_send(req);
			break;
		}
		cpu = smp_processor_id();	/* irqs are off */
		if (cpu != req->tx_cpu) {
			/* never with a batch pending: BH stayed off */
			if (!work && req->tx_cpu >= 0 &&
			    roce_psn_diff(req->max_sent, req->una_psn) > 0) {
				more = roce_req_can_send(req);
				break;
			}
			req->tx_cpu = cpu;
		}
		if (!roce_req_next(rqp, &t))
			break;
		req->tx_cur = t.r;
		gen = req->gen;
		spin_unlock_irqrestore(&req->lock, flags);
		budget--;

		payload = roce_batch_add(qp, &b, &t.pkt);
		sqe = &t.r->wqe.sqe;
		err = 0;
		if (!payload || !t.pkt.payload_len)
			;	/* no memory: lost, the timer resends it */
		else if (t.r->op == ROCE_OP_ATOMIC_WRITE)
			memcpy(payload, &sqe->atomic.swap, sizeof(u64));
		else if (sqe->flags & SOFTRNIC_WQE_F_INLINE)
			memcpy(payload, t.r->wqe.inline_data + t.off,
			       t.pkt.payload_len);
		else
			err = softrnic_copy_sges(qp->sdev, to_spd(qp->ibqp.pd),
						 t.r->wqe.sge, sqe->num_sge,
						 t.off, payload,
						 t.pkt.payload_len,
						 SOFTRNIC_COPY_FROM_MR);
		if (err) {
			roce_batch_trim(&b);
			spin_lock_irqsave(&req->lock, flags);
			if (req->active && req->gen == gen && !t.r->done)
				roce_req_fail(rqp, t.r,
					      softrnic_mem_wc_status(err, false));
			break;
		}
		roce_batch_next(qp, &b);
		spin_lock_irqsave(&req->lock, flags);
	}
	if (b.skb) {
		spin_unlock_irqrestore(&req->lock, flags);
		roce_batch_xmit(qp, &b);
		spin_lock_irqsave(&req->lock, flags);
		/* what others left to us meanwhile goes to the work item */
		more = more || roce_req_can_send(req);
	}
	req->tx_busy = false;
	req->tx_cur = NULL;
	kick_sq = req->tx_slot_wait;
	req->tx_slot_wait = false;
	spin_unlock_irqrestore(&req->lock, flags);
	if (b.loop_drain)
		roce_loop_drain();
	local_bh_enable();

	if (more)
		roce_req_kick(rqp);
	if (kick_sq)
		softrnic_qp_kick(qp);
}

void roce_req_tx(struct roce_qp *rqp)
{
	__roce_req_tx(rqp, false);
}

void roce_req_work(struct work_struct *work)
{
	struct roce_qp *rqp = container_of(work, struct roce_qp, req.work);

	if (!READ_ONCE(rqp->dying))
		__roce_req_tx(rqp, true);
}

/* Resend from @psn on (go-back-N); req.lock held. */
static void roce_req_goback(struct roce_qp *rqp, u32 psn)
{
	struct roce_req *req = &rqp->req;
	u32 i;

	for (i = req->head; i != req->tail; i++) {
		struct roce_rwqe *r = roce_rwqe(req, i);

		if (roce_psn_diff(psn, r->last_psn) <= 0) {
			req->tx = i;
			req->tx_psn = roce_psn_diff(psn, r->first_psn) > 0 ?
				      psn : r->first_psn;
			req->noack = 0;
			return;
		}
	}
	req->tx = req->tail;
	req->tx_psn = req->next_psn;
}

/*
 * The READ/atomic at head lost responses (a later one came, or an ACK
 * beyond it): go back to una_psn, re-requesting it from there, once per
 * una_psn.  Each go-back makes the responder ACK the SENDs and WRITEs
 * after it again, beyond it; going back for every such ACK that
 * overtook its responses was a storm under reordering that starved READs
 * from rdma_rxe until their retries ran out.  The timer resends if this
 * go-back is lost too.  req.lock held.
 */
static void roce_req_rerequest(struct roce_qp *rqp)
{
	struct roce_req *req = &rqp->req;

	if (req->read_nak_psn == req->una_psn)
		return;
	req->read_nak_psn = req->una_psn;
	roce_req_goback(rqp, req->una_psn);
}

/*
 * Everything up to and including @psn is acknowledged: complete the
 * SENDs and WRITEs that ended there.  An unanswered READ/atomic within
 * that range was overtaken (implied NAK) when @implied: re-request it.
 * Returns false if it stopped there.  req.lock held.
 */
static bool roce_req_ack_upto(struct roce_qp *rqp, u32 psn, bool implied)
{
	struct roce_req *req = &rqp->req;
	struct roce_rwqe *r;
	bool progress = false;

	u32 una;

	while (req->head != req->tail) {
		r = roce_rwqe(req, req->head);
		if (roce_psn_diff(psn, r->first_psn) < 0)
			break;
		if (roce_op_is_rd(r->op)) {
			if (!implied)
				break;
			roce_req_rerequest(rqp);
			return false;
		}
		if (roce_psn_diff(psn, r->last_psn) < 0)
			break;
		r->done = true;
		softrnic_sq_complete(rqp->qp, r->wqe.index, IB_WC_SUCCESS,
				     r->len);
		req->head++;
		progress = true;
	}
	/* Never past the first PSN of an unanswered READ/atomic. */
	una = roce_psn_add(psn, 1);
	if (req->head != req->tail) {
		r = roce_rwqe(req, req->head);
		if (roce_op_is_rd(r->op) && roce_psn_diff(una, r->first_psn) > 0)
			una = r->first_psn;
	}
	if (roce_psn_diff(una, req->una_psn) > 0) {
		req->una_psn = una;
		progress = true;
	}
	/* Acknowledged beyond where a go-back left the transmitter. */
	if ((s32)(req->tx - req->head) < 0) {
		req->tx = req->head;
		req->tx_psn = req->head == req->tail ? req->next_psn :
			      roce_rwqe(req, req->head)->first_psn;
	}
	if (req->tx != req->tail &&
	    roce_psn_diff(req->una_psn, req->tx_psn) > 0 &&
	    roce_psn_diff(req->una_psn,
			roce_rwqe(req, req->tx)->last_psn) <= 0)
		req->tx_psn = req->una_psn;
	/* Both retry budgets are per message: forward progress renews them. */
	if (progress) {
		req->retry_left = rqp->qp->attr.retry_cnt;
		req->rnr_left = rqp->qp->attr.rnr_retry;
	}
	return true;
}

static enum ib_wc_status roce_nak_status(u8 code)
{
	switch (code) {
	case ROCE_NAK_INVALID_REQUEST:
		return IB_WC_REM_INV_REQ_ERR;
	case ROCE_NAK_REMOTE_ACCESS_ERR:
		return IB_WC_REM_ACCESS_ERR;
	case ROCE_NAK_INVALID_RD_REQUEST:
		return IB_WC_REM_INV_RD_REQ_ERR;
	default:
		return IB_WC_REM_OP_ERR;
	}
}

/* The WQE whose PSN range holds @psn, or NULL; req.lock held. */
static struct roce_rwqe *roce_req_find(struct roce_req *req, u32 psn)
{
	u32 i;

	for (i = req->head; i != req->tail; i++) {
		struct roce_rwqe *r = roce_rwqe(req, i);

		if (roce_psn_diff(psn, r->first_psn) >= 0 &&
		    roce_psn_diff(psn, r->last_psn) <= 0)
			return r;
	}
	return NULL;
}

static void roce_req_acknowledge(struct roce_qp *rqp,
				 const struct roce_pkt *pkt)
{
	struct softrnic_qp *qp = rqp->qp;
	struct roce_req *req = &rqp->req;
	u8 syn = pkt->aeth.syndrome;
	u32 psn = pkt->psn, prev = roce_psn_add(pkt->psn, ROCE_PSN_MASK);
	struct roce_rwqe *r;
	u32 usecs;

	switch (roce_syn_type(syn)) {
	case ROCE_AETH_ACK:
		roce_req_ack_upto(rqp, psn, true);
		break;
	case ROCE_AETH_RNR_NAK:
		roce_qp_count(qp, ROCE_CNT_RNR_NAKS_RCVD, 1);
		if (!roce_req_ack_upto(rqp, prev, true))
			break;
		r = roce_req_find(req, psn);
		if (!r)
			break;
		if (qp->attr.rnr_retry != 7) {
			if (!req->rnr_left) {
				roce_req_fail(rqp, r, IB_WC_RNR_RETRY_EXC_ERR);
				return;
			}
			req->rnr_left--;
		}
		roce_req_goback(rqp, psn);
		req->rnr_wait = true;
		del_timer(&req->rto);
		usecs = roce_rnr_timer_usecs(roce_syn_value(syn));
		if (!rqp->dying)
			mod_timer(&req->rnr, jiffies +
				  max(usecs_to_jiffies(usecs), 1UL));
		return;
	case ROCE_AETH_NAK:
		if (roce_syn_value(syn) == ROCE_NAK_PSN_SEQ_ERR) {
			roce_qp_count(qp, ROCE_CNT_SEQ_NAKS_RCVD, 1);
			if (roce_req_ack_upto(rqp, prev, true))
				roce_req_goback(rqp, psn);
			break;
		}
		roce_qp_count(qp, ROCE_CNT_NAKS_RCVD, 1);
		roce_req_ack_upto(rqp, prev, false);
		r = roce_req_find(req, psn);
		if (r && !r->done)
			roce_req_fail(rqp, r,
				      roce_nak_status(roce_syn_value(syn)));
		return;
	default:
		return;
	}
	roce_rto_update(rqp);
}

/*
 * The last response packet of a READ, atomic or placement WQE (PSN @psn)
 * is in: it acknowledges everything up to it, and the WQE completes.
 */
static void roce_req_rd_done(struct roce_qp *rqp, struct roce_rwqe *r,
			     u32 psn, u32 byte_len)
{
	struct softrnic_qp *qp = rqp->qp;
	struct roce_req *req = &rqp->req;

	req->una_psn = roce_psn_add(psn, 1);
	req->retry_left = qp->attr.retry_cnt;
	r->done = true;
	req->rd_out--;
	req->head++;
	softrnic_sq_complete(qp, r->wqe.index, IB_WC_SUCCESS, byte_len);
	roce_rto_update(rqp);
}

/*
 * The response to a FLUSH or ATOMIC WRITE at req.head: a zero-length READ
 * RESPONSE ONLY.  Anything else in its place is a bad response.
 */
static void roce_req_placement_resp(struct roce_qp *rqp, struct roce_rwqe *r,
				    const struct roce_pkt *pkt)
{
	if (pkt->opcode != ROCE_RC_RDMA_READ_RESPONSE_ONLY ||
	    pkt->payload_len) {
		roce_req_fail(rqp, r, IB_WC_BAD_RESP_ERR);
		return;
	}
	roce_req_rd_done(rqp, r, pkt->psn, r->len);
}

/* READ RESPONSE packets: place the data, complete on the last one. */
static void roce_req_read_resp(struct roce_qp *rqp, const struct roce_pkt *pkt,
			       struct sk_buff *skb, u32 bth_off)
{
	struct softrnic_qp *qp = rqp->qp;
	struct roce_req *req = &rqp->req;
	u32 psn = pkt->psn, mtu = req->mtu, off, left;
	u16 flags = pkt->info->flags;
	struct roce_rwqe *r;
	int err;

	/* Everything before the READ is implicitly acknowledged. */
	roce_req_ack_upto(rqp, roce_psn_add(psn, ROCE_PSN_MASK), false);
	if (req->head == req->tail)
		return;
	r = roce_rwqe(req, req->head);
	if (roce_op_is_placement(r->op) && !r->done && psn == r->first_psn &&
	    psn == req->una_psn) {
		roce_req_placement_resp(rqp, r, pkt);
		return;
	}
	if (r->op != ROCE_OP_READ || r->done ||
	    roce_psn_diff(psn, r->first_psn) < 0 ||
	    roce_psn_diff(psn, r->last_psn) > 0)
		return;
	if (psn != req->una_psn) {
		/* A response was lost: ask again for the rest. */
		if (roce_psn_diff(psn, req->una_psn) > 0)
			roce_req_rerequest(rqp);
		return;
	}
	off = roce_psn_diff(psn, r->first_psn) * mtu;
	left = r->len - off;
	if ((flags & ROCE_OPF_LAST) ? pkt->payload_len != left :
	    (pkt->payload_len != mtu || left <= mtu)) {
		roce_req_fail(rqp, r, IB_WC_BAD_RESP_ERR);
		return;
	}
	if (pkt->payload_len) {
		err = softrnic_skb_to_sges(qp, skb, bth_off + pkt->payload_off,
					   pkt->payload_len, r->wqe.sge,
					   r->wqe.sqe.num_sge, off);
		if (err) {
			roce_req_fail(rqp, r, err == -ERANGE ?
				      IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR);
			return;
		}
	}
	if (flags & ROCE_OPF_LAST) {
		roce_req_rd_done(rqp, r, psn, r->len);
		return;
	}
	req->una_psn = roce_psn_add(psn, 1);
	req->retry_left = qp->attr.retry_cnt;
	roce_rto_update(rqp);
}

static void roce_req_atomic_ack(struct roce_qp *rqp,
				const struct roce_pkt *pkt)
{
	struct softrnic_qp *qp = rqp->qp;
	struct roce_req *req = &rqp->req;
	u64 orig = pkt->atomic_orig;
	struct roce_rwqe *r;
	int err;

	roce_req_ack_upto(rqp, roce_psn_add(pkt->psn, ROCE_PSN_MASK), false);
	if (req->head == req->tail)
		return;
	r = roce_rwqe(req, req->head);
	if (!roce_op_is_rd(r->op) || r->op == ROCE_OP_READ ||
	    roce_op_is_placement(r->op) || r->done ||
	    r->first_psn != pkt->psn)
		return;
	err = softrnic_copy_sges(qp->sdev, to_spd(qp->ibqp.pd), r->wqe.sge,
				 r->wqe.sqe.num_sge, 0, &orig, sizeof(orig),
				 SOFTRNIC_COPY_TO_MR);
	if (err) {
		roce_req_fail(rqp, r, IB_WC_LOC_PROT_ERR);
		return;
	}
	roce_req_rd_done(rqp, r, pkt->psn, sizeof(orig));
}

/* A response packet for this QP's requester; softirq. */
void roce_req_rcv(struct roce_qp *rqp, const struct roce_pkt *pkt,
		  struct sk_buff *skb, u32 bth_off)
{
	struct softrnic_qp *qp = rqp->qp;
	struct roce_req *req = &rqp->req;
	bool kick_tx, kick_sq = false;
	unsigned long flags;

	spin_lock_irqsave(&req->lock, flags);
	if (!req->active) {
		spin_unlock_irqrestore(&req->lock, flags);
		return;
	}
	/* Only [una_psn, max_sent) can be answered; the rest is stale. */
	if (roce_psn_diff(pkt->psn, req->una_psn) < 0 ||
	    roce_psn_diff(pkt->psn, req->max_sent) >= 0) {
		spin_unlock_irqrestore(&req->lock, flags);
		roce_qp_count(qp, ROCE_CNT_DROP_OUT_OF_WINDOW, 1);
		return;
	}
	switch (pkt->info->op) {
	case ROCE_OP_ACK:
		roce_req_acknowledge(rqp, pkt);
		break;
	case ROCE_OP_READ:
		roce_req_read_resp(rqp, pkt, skb, bth_off);
		break;
	case ROCE_OP_ATOMIC_ACK:
		roce_req_atomic_ack(rqp, pkt);
		break;
	default:
		break;
	}
	kick_tx = req->active && !req->rnr_wait && req->tx != req->tail;
	if (req->want_kick && (!req->active ||
			       (req->tail - req->head < req->nslots &&
				roce_req_psn_room(req, req->want_psns)))) {
		req->want_kick = false;
		req->want_psns = 0;
		kick_sq = true;
	}
	spin_unlock_irqrestore(&req->lock, flags);

	/* The window opened: send on from here (see the top of the file). */
	if (kick_tx)
		roce_req_tx(rqp);
	if (kick_sq)
		softrnic_qp_kick(qp);
}

static void roce_rto_fn(struct timer_list *t)
{
	struct roce_qp *rqp = from_timer(rqp, t, req.rto);
	struct roce_req *req = &rqp->req;
	struct softrnic_qp *qp = rqp->qp;
	unsigned long flags, expires;
	bool kick = false;

	spin_lock_irqsave(&req->lock, flags);
	if (!req->active || req->rnr_wait || rqp->dying ||
	    roce_psn_diff(req->max_sent, req->una_psn) <= 0 ||
	    req->head == req->tail) {
		spin_unlock_irqrestore(&req->lock, flags);
		return;
	}
	/* Left armed across progress (roce_rto_update()): not due yet. */
	expires = req->rto_start + roce_rto_jiffies(rqp);
	if (time_before(jiffies, expires)) {
		mod_timer(&req->rto, expires);
		spin_unlock_irqrestore(&req->lock, flags);
		return;
	}
	roce_qp_count(qp, ROCE_CNT_TIMEOUTS, 1);
	if (!req->retry_left) {
		roce_req_fail(rqp, roce_rwqe(req, req->head),
			      IB_WC_RETRY_EXC_ERR);
	} else {
		req->retry_left--;
		roce_req_goback(rqp, req->una_psn);
		req->read_nak_psn = ~0U;
		kick = true;
	}
	spin_unlock_irqrestore(&req->lock, flags);
	if (kick)
		roce_req_kick(rqp);
}

static void roce_rnr_fn(struct timer_list *t)
{
	struct roce_qp *rqp = from_timer(rqp, t, req.rnr);
	struct roce_req *req = &rqp->req;
	unsigned long flags;

	spin_lock_irqsave(&req->lock, flags);
	req->rnr_wait = false;
	spin_unlock_irqrestore(&req->lock, flags);
	roce_req_kick(rqp);
}
