// SPDX-License-Identifier: GPL-2.0
/*
 * Receive steering: the bulk of a long message is received on another
 * CPU than the one its packets arrive on.
 *
 * Why.  A veth -- and a NIC whose RSS hashes a flow to the CPU that sends
 * on it -- delivers a packet in the softirq of the CPU that transmitted
 * it.  Left there, one CPU would build, send, receive, check and place
 * every packet of a stream while the others idle.  Our part of receiving
 * a packet (ICRC, parse, placement into memory, the ACK it asks for) is
 * about half of the work per byte, so it moves: packets inside a long
 * message go to a per-QP work item on another CPU, on a high-priority
 * workqueue, so it preempts a process that spins polling its CQ there.
 * Short messages stay in the softirq: a hop would cost their latency.
 *
 * Which packets.  A QP starts steering at the ROCE_STEER_RUN-th packet in
 * a row that is neither the last of a message nor an ACK (FIRST and
 * MIDDLE of SEND, WRITE and READ RESPONSE), at once for a WRITE FIRST
 * whose RETH says the message is at least that many packets long.
 *
 * What is queued.  Only packets a peer could not have made up without
 * being on the path: roce_rcv() checked the ICRC, the parse and that the
 * packet comes from the QP's peer before it gets here, and here its PSN
 * must be one the QP can use next (roce_steer_in_window()).  Anything else
 * is processed at once, as if the QP were not steering, and costs no
 * memory: a duplicate is answered, a stale response or a PSN far ahead
 * dropped.  Queued packets are bounded per QP (roce_steer_queue_max())
 * and per device (ROCE_STEER_DEV_MAX); beyond either a packet is dropped
 * and counted (rx_drop_steer_full).
 *
 * Order.  A QP's packets are processed one at a time and in the order
 * they reached roce_steer(): while any is queued, every later packet of
 * the QP, of whatever kind, queues behind it.  The work item stays on its
 * CPU until it has drained the queue (a budget only lets others run in
 * between), so a workqueue never has to move it.  Beyond
 * roce_steer_queue_max() queued packets a packet is dropped, as a full
 * NIC ring would: the requester's go-back-N recovers it.
 *
 * Wake-ups.  Waking the work item costs a context switch, so it is woken
 * once per ROCE_STEER_KICK packets, or at once by a packet that asks for
 * an ACK, ends a message or is no FIRST/MIDDLE at all: everything the
 * requester waits for is processed without delay (it sets AckReq at
 * least every ROCE_ACK_EVERY packets and on the last of a message), and
 * the packets before it go along.  A queue that waits can only be the
 * start of a message whose sender stopped; RESET, ERR and destroy_qp
 * drop it.
 *
 * Which CPU.  Chosen when the queue starts: 1 + qpn % (online CPUs - 1)
 * online CPUs after the one the packet arrived on, so never the arrival
 * CPU, and QPs spread over the others.
 *
 * Lifetime.  Queued packets hold no reference: the work item takes one
 * while it runs, as a packet handler would, and gives up if the QP is
 * being destroyed; roce_qp_fini() waits for its return and drops what is
 * still queued.
 */
#include <asm/unaligned.h>

#include "roce.h"

/* FIRST/MIDDLE packets in a row after which a QP's receive moves. */
#define ROCE_STEER_RUN		8
/* Packets the work item processes before it lets others run. */
#define ROCE_STEER_BUDGET	64
/* Packets queued before the work item is woken without other reason. */
#define ROCE_STEER_KICK		16
/*
 * Packets queued per QP, at most: what a CPU's backlog in front of the
 * queue holds (net.core.netdev_max_backlog), and never less than two
 * windows.  A peer's READ responses come in bursts as long as the READ
 * (rxe sends them unpaced); a shorter queue would drop what the stack
 * delivered, and with them the peer's requests queued on the same QP.
 */
static unsigned int roce_steer_queue_max(void)
{
	return max_t(int, READ_ONCE(netdev_max_backlog), 2 * ROCE_WINDOW);
}
/* Packets queued on all QPs of a device, at most. */
#define ROCE_STEER_DEV_MAX	8192

void roce_steer_qp_init(struct roce_qp *rqp)
{
	spin_lock_init(&rqp->rx_lock);
	__skb_queue_head_init(&rqp->rx_queue);
	INIT_WORK(&rqp->rx_work, roce_steer_work);
}

/* RESET and ERR: drop the packets of a connection that is over. */
void roce_steer_purge(struct roce_qp *rqp)
{
	struct roce_dev *rdev = roce_dev(rqp->qp->sdev);

	spin_lock_bh(&rqp->rx_lock);
	atomic_sub(skb_queue_len(&rqp->rx_queue), &rdev->rx_queued);
	__skb_queue_purge(&rqp->rx_queue);
	if (!rqp->rx_kicked && !rqp->rx_owned)
		rqp->rx_busy = false;
	spin_unlock_bh(&rqp->rx_lock);
}

/* After the last reference is gone: nothing can queue any more. */
void roce_steer_qp_fini(struct roce_qp *rqp)
{
	cancel_work_sync(&rqp->rx_work);
	roce_steer_purge(rqp);
}

/* Does this packet continue a long message?  rx_lock held. */
static bool roce_steer_bulk(struct roce_qp *rqp, const u8 *bth, u32 len)
{
	u32 run;

	switch (bth[0]) {
	case ROCE_RC_RDMA_WRITE_FIRST:
		run = 1;
		if (len >= ROCE_BTH_LEN + ROCE_RETH_LEN &&
		    get_unaligned_be32(bth + ROCE_BTH_LEN + 12) >=
		    ROCE_STEER_RUN * roce_mtu(rqp->qp))
			run = ROCE_STEER_RUN;
		break;
	case ROCE_RC_SEND_FIRST:
	case ROCE_RC_RDMA_READ_RESPONSE_FIRST:
		run = 1;
		break;
	case ROCE_RC_SEND_MIDDLE:
	case ROCE_RC_RDMA_WRITE_MIDDLE:
	case ROCE_RC_RDMA_READ_RESPONSE_MIDDLE:
		run = min_t(u32, rqp->rx_run + 1, ROCE_STEER_RUN);
		break;
	case ROCE_RC_ACKNOWLEDGE:
		/* Between the packets of a READ response, say: no reset. */
		return false;
	default:
		run = 0;
		break;
	}
	rqp->rx_run = run;
	return run >= ROCE_STEER_RUN;
}

/*
 * Is @pkt's PSN one the QP can use next?  Responses: one the requester
 * waits for, in [una_psn, max_sent).  Requests: from the responder's
 * expected PSN up to a queue's length past the last request queued
 * (rx_next_psn; a READ there takes all its response PSNs).  Read without
 * the transport's locks: a stale value only widens the window by what is
 * queued, and the transport checks the PSN again under its lock.
 * rx_lock held.
 */
static bool roce_steer_in_window(const struct roce_qp *rqp,
				 const struct roce_pkt *pkt)
{
	u32 una, epsn, next;

	if (pkt->info->flags & ROCE_OPF_RESP) {
		una = READ_ONCE(rqp->req.una_psn);
		return roce_psn_in_window(pkt->psn, una,
					  roce_psn_sub(READ_ONCE(rqp->req.max_sent),
						       una));
	}
	epsn = READ_ONCE(rqp->resp.epsn);
	next = rqp->rx_busy && roce_psn_after(rqp->rx_next_psn, epsn) ?
	       rqp->rx_next_psn : epsn;
	return roce_psn_after_eq(pkt->psn, epsn) &&
	       roce_psn_before(pkt->psn,
			       roce_psn_add(next, roce_steer_queue_max()));
}

/* A request @pkt was queued: the PSN after it.  rx_lock held. */
static void roce_steer_next_psn(struct roce_qp *rqp,
				const struct roce_pkt *pkt)
{
	u32 n = 1;

	if (pkt->info->flags & ROCE_OPF_RESP)
		return;
	if (pkt->info->op == ROCE_OP_READ)
		n = roce_psn_count(pkt->reth.len, roce_mtu(rqp->qp));
	if (roce_psn_after(roce_psn_add(pkt->psn, n), rqp->rx_next_psn))
		rqp->rx_next_psn = roce_psn_add(pkt->psn, n);
}

/* Another online CPU than this one, picked by QPN; this one if alone. */
static int roce_steer_cpu(u32 qpn)
{
	unsigned int n = num_online_cpus(), hops;
	int cpu = smp_processor_id();

	if (n < 2)
		return cpu;
	for (hops = 1 + qpn % (n - 1); hops; hops--) {
		cpu = cpumask_next(cpu, cpu_online_mask);
		if (cpu >= nr_cpu_ids)
			cpu = cpumask_first(cpu_online_mask);
	}
	return cpu;
}

/* Must the work item run now (see Wake-ups)?  rx_lock held. */
static bool roce_steer_wake(const struct roce_qp *rqp, const u8 *bth)
{
	if (rqp->rx_kicked || rqp->rx_owned)
		return false;
	if (skb_queue_len(&rqp->rx_queue) >= ROCE_STEER_KICK ||
	    roce_bth_ackreq((const struct roce_bth *)bth))
		return true;
	switch (bth[0]) {
	case ROCE_RC_SEND_FIRST:
	case ROCE_RC_SEND_MIDDLE:
	case ROCE_RC_RDMA_WRITE_FIRST:
	case ROCE_RC_RDMA_WRITE_MIDDLE:
	case ROCE_RC_RDMA_READ_RESPONSE_FIRST:
	case ROCE_RC_RDMA_READ_RESPONSE_MIDDLE:
		return false;
	}
	return true;
}

/*
 * Process up to @budget queued packets as the queue's owner (rx_owned,
 * set by the caller), BH off and under RCU, then give ownership up.
 * rx_lock is held on entry and on return.  Returns true if packets are
 * left; an empty queue ends the busy period unless the work item is
 * woken (it ends it then).
 */
static bool roce_steer_drain(struct roce_qp *rqp, unsigned int budget)
{
	struct softrnic_qp *qp = rqp->qp;
	struct roce_dev *rdev = roce_dev(qp->sdev);
	struct sk_buff *skb;

	lockdep_assert_held(&rqp->rx_lock);
	while (budget--) {
		skb = __skb_dequeue(&rqp->rx_queue);
		if (!skb)
			break;
		atomic_dec(&rdev->rx_queued);
		spin_unlock(&rqp->rx_lock);
		roce_rcv_steered(qp, skb);
		spin_lock(&rqp->rx_lock);
	}
	rqp->rx_owned = false;
	if (!skb_queue_empty(&rqp->rx_queue))
		return true;
	if (!rqp->rx_kicked)
		rqp->rx_busy = false;
	return false;
}

/*
 * Softirq, under rcu_read_lock, with a reference to @rqp's QP: queue @skb
 * (@pkt, parsed from it, passed every check of roce_rcv(); @skb->data at
 * the UDP header) and return true, or return false to have the caller
 * process it now.  Consumes @skb only when it returns true.  A packet
 * that arrives on the CPU the work item runs on gains nothing from the
 * work item, which the softirq would only starve: the queue is processed
 * here and now instead (rx_owned keeps it to one context at a time).
 */
bool roce_steer(struct roce_qp *rqp, struct sk_buff *skb,
		const struct roce_pkt *pkt)
{
	const u32 bth_off = sizeof(struct udphdr);
	const u8 *bth = skb->data + bth_off;
	struct softrnic_qp *qp = rqp->qp;
	struct roce_dev *rdev = roce_dev(qp->sdev);
	bool wake = false;

	spin_lock(&rqp->rx_lock);
	if (!roce_steer_in_window(rqp, pkt)) {
		spin_unlock(&rqp->rx_lock);
		return false;
	}
	if (!roce_steer_bulk(rqp, bth, skb->len - bth_off) && !rqp->rx_busy) {
		spin_unlock(&rqp->rx_lock);
		return false;
	}
	if (skb_queue_len(&rqp->rx_queue) >= roce_steer_queue_max())
		goto full;
	if (atomic_inc_return(&rdev->rx_queued) > ROCE_STEER_DEV_MAX) {
		atomic_dec(&rdev->rx_queued);
		goto full;
	}
	if (!rqp->rx_busy) {
		rqp->rx_busy = true;
		rqp->rx_cpu = roce_steer_cpu(qp->ibqp.qp_num);
		rqp->rx_next_psn = READ_ONCE(rqp->resp.epsn);
	}
	roce_steer_next_psn(rqp, pkt);
	/*
	 * The input route is only good in this RCU section, and the input
	 * netdev may go before the queue is processed: nothing downstream
	 * of the checks looks at either.
	 */
	skb_dst_drop(skb);
	skb->dev = NULL;
	__skb_queue_tail(&rqp->rx_queue, skb);
	if (rqp->rx_cpu == smp_processor_id() && !rqp->rx_owned) {
		rqp->rx_owned = true;
		if (roce_steer_drain(rqp, ROCE_STEER_BUDGET) &&
		    !rqp->rx_kicked)
			wake = true;
	} else {
		roce_count(qp->sdev, ROCE_CNT_RX_STEERED, 1);
		wake = roce_steer_wake(rqp, bth);
	}
	if (wake)
		rqp->rx_kicked = true;
	spin_unlock(&rqp->rx_lock);

	if (wake)
		softrnic_dp_queue_work(rqp->rx_cpu, &rqp->rx_work);
	return true;
full:
	spin_unlock(&rqp->rx_lock);
	roce_count(qp->sdev, ROCE_CNT_DROP_STEER_FULL, 1);
	kfree_skb(skb);
	return true;
}

/*
 * The QP's receive work item: the queued packets in order, one at a time
 * as in the softirq (BH off, under RCU, holding a QP reference), until
 * the queue is empty, requeueing itself after every ROCE_STEER_BUDGET.
 * If the softirq of this CPU owns the queue meanwhile, the work item
 * stops, and that context wakes it again for what it leaves.
 */
void roce_steer_work(struct work_struct *work)
{
	struct roce_qp *rqp = container_of(work, struct roce_qp, rx_work);
	struct softrnic_qp *qp = rqp->qp;
	unsigned int budget = ROCE_STEER_BUDGET;
	bool left, requeue = false;

	/* Being destroyed: roce_qp_fini() drops the queue. */
	if (!refcount_inc_not_zero(&qp->ref))
		return;
	do {
		local_bh_disable();
		rcu_read_lock();
		spin_lock(&rqp->rx_lock);
		if (rqp->rx_owned) {
			rqp->rx_kicked = false;
			left = false;
		} else {
			rqp->rx_owned = true;
			left = roce_steer_drain(rqp, 1);
			if (!left) {
				rqp->rx_kicked = false;
				rqp->rx_busy = false;
			} else if (!--budget) {
				rqp->rx_kicked = true;
				requeue = true;
			}
		}
		spin_unlock(&rqp->rx_lock);
		rcu_read_unlock();
		local_bh_enable();
	} while (left && !requeue);
	if (requeue)
		softrnic_dp_queue_work(-1, work);	/* this CPU */
	softrnic_qp_put(qp);
}
