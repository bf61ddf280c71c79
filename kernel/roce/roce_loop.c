// SPDX-License-Identifier: GPL-2.0
/*
 * Loopback: a packet for a roce device of this host goes straight to its
 * receive path instead of through the IP stack and the loopback device.
 *
 * Why.  Both ends on one host is the commonest set-up without RDMA
 * hardware.  The packet is built exactly as for the wire (headers, ICRC,
 * batches) and received exactly as from it (ICRC check, parse, PSNs,
 * ACKs, counters): what is left out is the trip through IP output, the
 * loopback device, the backlog and IP input, which costs more than
 * everything the transport does for a short message.  So netfilter rules
 * and packet captures on lo do not see these packets; `rdma statistic`
 * counts them (tx_looped).
 *
 * How.  roce_xmit() hands over a packet whose route is local and whose
 * destination address is on a netdev with a roce device (otherwise it
 * goes out through the stack, as to rxe or to nobody).  The packet joins
 * a per-CPU queue that a NAPI instance of that CPU drains, in softirq as
 * a NIC's receive would: so a packet that its own receive answers (an
 * ACK, a READ response) is never received in the context, or under the
 * locks, of the transmit that caused it, the queue keeps the order in
 * which a CPU sent, and the budget of net_rx_action() bounds the work
 * per softirq.  Producer and consumer are the same CPU with BH off, so
 * the queue takes no lock.
 *
 * A transmit from task context with BH on (a doorbell, the QP's work
 * item; for a requester, also between its batches) drains the queue
 * itself before it turns BH back on: the place
 * where the softirq would run, holding nothing of ours, minus the
 * softirq and NAPI round trip, which costs about a tenth of a short
 * message's time under TCG.  What its own receive transmits in turn
 * (the ACK, the next packet) joins the same queue and the same drain;
 * beyond a NAPI budget the rest is left to the NAPI instance.
 *
 * Lifetime.  A queued packet holds its destination netdev (skb->dev), so
 * the netdev, and with it its namespace, outlives the queue; the device
 * is looked up again when the packet is received, and if it went away
 * meanwhile, the packet is dropped, as a remote peer's would be.
 */
#include <linux/netdevice.h>

#include "roce.h"

struct roce_loop {
	struct sk_buff_head queue;	/* its lock unused: this CPU, BH off */
	struct napi_struct napi;
	bool drain_here;		/* a caller drains before BH is on */
};

/* Packets one inline drain receives before it leaves the rest to NAPI. */
#define ROCE_LOOP_DRAIN_BUDGET	NAPI_POLL_WEIGHT

static DEFINE_PER_CPU(struct roce_loop, roce_loop);
/* The NAPI instances' netdev: a dummy one, as NAPI needs a netdev. */
static struct net_device roce_loop_ndev;

/* Packets queued per CPU, at most: what the backlog of lo would hold. */
static unsigned int roce_loop_queue_max(void)
{
	return max_t(int, READ_ONCE(netdev_max_backlog), 2 * ROCE_WINDOW);
}

/*
 * @skb (IP header at ->data, addresses filled in) is routed to this
 * host: the netdev of its destination if that has a roce device (the
 * packet is ours to loop), or NULL (it goes through the stack).  RCU
 * held.
 */
struct net_device *roce_loop_dev(struct net *net, const struct sk_buff *skb)
{
	struct net_device *ndev = roce_addr_dev(net, skb);

	return ndev && roce_dev_of(net, ndev) ? ndev : NULL;
}

/*
 * Queue @skb of @qp (built, IPCB cleared) for @ndev from roce_loop_dev().
 * No ICRC: the packet never leaves this host's memory, so there is no
 * wire whose corruption it could catch, and the receiver knows (cb) it
 * comes from here, not from the network.  Consumes @skb.  BH off, RCU
 * held.
 */
void roce_loop_xmit(struct softrnic_qp *qp, struct net_device *ndev,
		    struct sk_buff *skb)
{
	struct roce_loop *lp = this_cpu_ptr(&roce_loop);

	if (unlikely(skb_queue_len(&lp->queue) >= roce_loop_queue_max())) {
		/* A full ring: a loss, which retransmission repairs. */
		roce_count(qp->sdev, ROCE_CNT_DROP_LOOP_FULL,
			   skb_shinfo(skb)->gso_segs ?: 1);
		kfree_skb(skb);
		return;
	}
	roce_count(qp->sdev, ROCE_CNT_TX_LOOPED,
		   skb_shinfo(skb)->gso_segs ?: 1);
	skb_dst_drop(skb);
	dev_hold(ndev);
	skb->dev = ndev;
	skb->pkt_type = PACKET_HOST;
	__skb_queue_tail(&lp->queue, skb);
	if (!lp->drain_here)
		napi_schedule(&lp->napi);
}

static void roce_loop_rcv(struct sk_buff *skb)
{
	struct net_device *ndev = skb->dev;
	struct roce_dev *rdev = NULL;
	u32 thoff;

	rcu_read_lock();
	if (READ_ONCE(ndev->reg_state) == NETREG_REGISTERED)
		rdev = roce_dev_of(dev_net(ndev), ndev);
	if (rdev) {
		thoff = skb->protocol == htons(ETH_P_IP) ? ip_hdrlen(skb) :
							   sizeof(struct ipv6hdr);
		roce_rcv_ip(rdev, skb, thoff, true);
	} else {
		kfree_skb(skb);
	}
	rcu_read_unlock();
	dev_put(ndev);
}

/*
 * A transmit that was in task context with BH on (@outer) has just
 * turned BH off: it will drain the queue in roce_loop_drain(), so
 * queueing needs no softirq.  Returns whether the caller must call that.
 */
bool roce_loop_drain_begin(bool outer)
{
	struct roce_loop *lp = this_cpu_ptr(&roce_loop);

	if (!outer || lp->drain_here)
		return false;
	lp->drain_here = true;
	return true;
}

/*
 * After roce_loop_drain_begin() returned true, BH still off, no spinlock
 * of ours held (a QP's mutex may be: the receive path takes none):
 * receive what this CPU queued, and what that transmits.
 */
void roce_loop_drain(void)
{
	struct roce_loop *lp = this_cpu_ptr(&roce_loop);
	struct sk_buff *skb;
	int done = 0;

	while (done < ROCE_LOOP_DRAIN_BUDGET &&
	       (skb = __skb_dequeue(&lp->queue))) {
		roce_loop_rcv(skb);
		done++;
	}
	lp->drain_here = false;
	if (!skb_queue_empty(&lp->queue))
		napi_schedule(&lp->napi);
}

static int roce_loop_poll(struct napi_struct *napi, int budget)
{
	struct roce_loop *lp = container_of(napi, struct roce_loop, napi);
	struct sk_buff *skb;
	int done = 0;

	while (done < budget && (skb = __skb_dequeue(&lp->queue))) {
		roce_loop_rcv(skb);
		done++;
	}
	if (done < budget)
		napi_complete_done(napi, done);
	return done;
}

void roce_loop_init(void)
{
	int cpu;

	init_dummy_netdev(&roce_loop_ndev);
	for_each_possible_cpu(cpu) {
		struct roce_loop *lp = per_cpu_ptr(&roce_loop, cpu);

		__skb_queue_head_init(&lp->queue);
		netif_napi_add(&roce_loop_ndev, &lp->napi, roce_loop_poll);
		napi_enable(&lp->napi);
	}
}

/* No roce device is left, so nothing queues any more. */
void roce_loop_exit(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct roce_loop *lp = per_cpu_ptr(&roce_loop, cpu);

		napi_disable(&lp->napi);
		netif_napi_del(&lp->napi);
		while (!skb_queue_empty(&lp->queue)) {
			struct sk_buff *skb = __skb_dequeue(&lp->queue);

			dev_put(skb->dev);
			kfree_skb(skb);
		}
	}
}
