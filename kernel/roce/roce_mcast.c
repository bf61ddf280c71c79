// SPDX-License-Identifier: GPL-2.0
/*
 * UD multicast on RoCEv2.  A multicast GID is an IP multicast address
 * (IPv4-mapped or IPv6).  attach_mcast puts a UD QP into the device's
 * group for it; the first attachment joins the IP group on the device's
 * netdev (so the stack delivers the group's packets to this host, and
 * IGMP/MLD tell the switches), the last detach leaves it.
 *
 * Receive: a UD packet to QPN 0xFFFFFF and a multicast destination goes
 * to every QP attached to that group on the device it arrived for, each
 * with its own receive WQE and completion.  Every device of the host gets
 * its copy the way the IP stack hands multicast out: from the wire, and a
 * packet this host sends to a group it is a member of is also looped back
 * to it (ip_mc_output / ip6_finish_output2 do that, and deliver it to
 * our LOCAL_IN hook like any other).
 *
 * Locking: mc_mutex (process context) orders attach and detach and the
 * IP joins; the receive path walks the lists under RCU and takes each QP
 * by number (softrnic_qp_get), so a QP being destroyed is never used.
 */
#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <net/ipv6.h>
#include <rdma/ib_addr.h>

#include "roce.h"
#include "limits.h"

struct roce_mcg {
	struct list_head node;		/* rdev->mcgs, RCU */
	union ib_gid gid;
	struct list_head qps;		/* struct roce_mca, RCU */
	unsigned int nqps;
	struct rcu_head rcu;
};

struct roce_mca {
	struct list_head node;		/* mcg->qps, RCU */
	u32 qpn;
	struct rcu_head rcu;
};

/* Join (or leave) the IP group of @gid on @ndev. */
static int roce_mc_ip(struct net_device *ndev, const union ib_gid *gid,
		      bool join)
{
	struct in_device *in_dev;
	__be32 addr;
	int err = 0;

	if (!ipv6_addr_v4mapped((const struct in6_addr *)gid->raw)) {
		const struct in6_addr *a = (const struct in6_addr *)gid->raw;

		return join ? ipv6_dev_mc_inc(ndev, a) : ipv6_dev_mc_dec(ndev, a);
	}
	memcpy(&addr, &gid->raw[12], sizeof(addr));
	rtnl_lock();
	in_dev = __in_dev_get_rtnl(ndev);
	if (!in_dev)
		err = -ENODEV;
	else if (join)
		ip_mc_inc_group(in_dev, addr);
	else
		ip_mc_dec_group(in_dev, addr);
	rtnl_unlock();
	return err;
}

static struct roce_mcg *roce_mcg_find(struct roce_dev *rdev,
				      const union ib_gid *gid)
{
	struct roce_mcg *g;

	list_for_each_entry_rcu(g, &rdev->mcgs, node,
				lockdep_is_held(&rdev->mc_mutex))
		if (!memcmp(&g->gid, gid, sizeof(*gid)))
			return g;
	return NULL;
}

static struct roce_mca *roce_mca_find(struct roce_mcg *g, u32 qpn,
				      struct roce_dev *rdev)
{
	struct roce_mca *a;

	list_for_each_entry_rcu(a, &g->qps, node,
				lockdep_is_held(&rdev->mc_mutex))
		if (a->qpn == qpn)
			return a;
	return NULL;
}

int roce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct softrnic_dev *sdev = to_sdev(ibqp->device);
	struct roce_dev *rdev = roce_dev(sdev);
	struct roce_mcg *g, *new_g = NULL;
	struct roce_mca *a;
	int err = 0;

	if (ibqp->qp_type != IB_QPT_UD ||
	    !rdma_is_multicast_addr((struct in6_addr *)gid->raw))
		return -EINVAL;
	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	a->qpn = ibqp->qp_num;

	mutex_lock(&rdev->mc_mutex);
	g = roce_mcg_find(rdev, gid);
	if (g && roce_mca_find(g, a->qpn, rdev)) {
		kfree(a);		/* attached already: nothing to do */
		goto out;
	}
	if (rdev->nattach >= SOFTRNIC_MAX_TOTAL_MCAST_QP_ATTACH ||
	    (g && g->nqps >= SOFTRNIC_MAX_MCAST_QP_ATTACH) ||
	    (!g && rdev->nmcg >= SOFTRNIC_MAX_MCAST_GRP)) {
		err = -ENOMEM;
		goto fail;
	}
	if (!g) {
		new_g = kzalloc(sizeof(*new_g), GFP_KERNEL);
		if (!new_g) {
			err = -ENOMEM;
			goto fail;
		}
		new_g->gid = *gid;
		INIT_LIST_HEAD(&new_g->qps);
		err = roce_mc_ip(sdev->netdev, gid, true);
		if (err) {
			kfree(new_g);
			goto fail;
		}
		g = new_g;
		list_add_tail_rcu(&g->node, &rdev->mcgs);
		rdev->nmcg++;
	}
	list_add_tail_rcu(&a->node, &g->qps);
	g->nqps++;
	rdev->nattach++;
out:
	mutex_unlock(&rdev->mc_mutex);
	return 0;
fail:
	mutex_unlock(&rdev->mc_mutex);
	kfree(a);
	return err;
}

int roce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct softrnic_dev *sdev = to_sdev(ibqp->device);
	struct roce_dev *rdev = roce_dev(sdev);
	struct roce_mcg *g;
	struct roce_mca *a = NULL;

	mutex_lock(&rdev->mc_mutex);
	g = roce_mcg_find(rdev, gid);
	if (g)
		a = roce_mca_find(g, ibqp->qp_num, rdev);
	if (!a) {
		mutex_unlock(&rdev->mc_mutex);
		return -EINVAL;
	}
	list_del_rcu(&a->node);
	kfree_rcu(a, rcu);
	rdev->nattach--;
	if (!--g->nqps) {
		list_del_rcu(&g->node);
		rdev->nmcg--;
		roce_mc_ip(sdev->netdev, &g->gid, false);
		kfree_rcu(g, rcu);
	}
	mutex_unlock(&rdev->mc_mutex);
	return 0;
}

void roce_mcast_init(struct roce_dev *rdev)
{
	mutex_init(&rdev->mc_mutex);
	INIT_LIST_HEAD(&rdev->mcgs);
}

/*
 * The device is freed: ib_core destroyed every QP, and a QP with
 * attachments cannot be destroyed (ib_attach_mcast counts them), so
 * nothing is left; anything that is would only be memory.
 */
void roce_mcast_fini(struct roce_dev *rdev)
{
	struct roce_mcg *g, *gt;
	struct roce_mca *a, *at;

	WARN_ON(!list_empty(&rdev->mcgs));
	list_for_each_entry_safe(g, gt, &rdev->mcgs, node) {
		list_for_each_entry_safe(a, at, &g->qps, node)
			kfree(a);
		kfree(g);
	}
	mutex_destroy(&rdev->mc_mutex);
}

/*
 * A packet to the multicast QPN: to every QP of its group.  Softirq.
 * Returns whether one of them took it.
 */
bool roce_mcast_rcv(struct softrnic_dev *sdev, const struct roce_pkt *pkt,
		    const struct sk_buff *skb, u32 bth_off)
{
	struct roce_dev *rdev = roce_dev(sdev);
	struct softrnic_qp *qp;
	union ib_gid gid;
	struct roce_mcg *g;
	struct roce_mca *a;
	bool any = false, placed = false;

	if (skb->protocol == htons(ETH_P_IP))
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)gid.raw);
	else
		memcpy(gid.raw, &ipv6_hdr(skb)->daddr, sizeof(gid.raw));

	rcu_read_lock();
	g = roce_mcg_find(rdev, &gid);
	if (g) {
		list_for_each_entry_rcu(a, &g->qps, node) {
			qp = softrnic_qp_get(sdev, a->qpn);
			if (!qp)
				continue;
			placed |= roce_ud_deliver(sdev, qp, pkt, skb, bth_off);
			softrnic_qp_put(qp);
			any = true;
		}
	}
	rcu_read_unlock();
	if (!any)
		roce_count(sdev, ROCE_CNT_DROP_UNKNOWN_QP, 1);
	return placed;
}
