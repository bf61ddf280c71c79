// SPDX-License-Identifier: GPL-2.0
/*
 * Address handles for UD on RoCEv2.  ib_core has already resolved the
 * source GID attribute (and holds a reference to it for ah->sgid_attr);
 * for user AHs it has also resolved the destination MAC
 * (rdma_create_user_ah -> ib_resolve_eth_dmac).  Kernel callers bring
 * their own dmac (rdma_cm, ib_init_ah_attr_from_wc do so).
 *
 * The data path never looks at the ib_ah: every AH has a number, the
 * index of its struct softrnic_av in sdev->ahs, which user UD WQEs carry
 * and kernel UD sends take from the ib_ah.  An av is immutable and
 * refcounted: destroy_ah may be called in atomic context and must not
 * wait, so it unpublishes the av and drops its reference; the last user
 * frees it (and its own sgid_attr reference) after an RCU grace period.
 *
 * A wire without datagrams (iWARP) has no AHs: create_ah fails there.
 */
#include <linux/slab.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>

#include "mem.h"
#include "limits.h"

static void softrnic_av_release(struct kref *kref)
{
	struct softrnic_av *av = container_of(kref, struct softrnic_av, ref);

	/* Safe in any context: the GID entry is freed from a work item. */
	rdma_put_gid_attr(av->sgid_attr);
	kfree_rcu(av, rcu);
}

void softrnic_ah_put(struct softrnic_av *av)
{
	kref_put(&av->ref, softrnic_av_release);
}

static struct softrnic_av *softrnic_av_create(struct rdma_ah_attr *attr,
					      struct softrnic_pd *pd, gfp_t gfp)
{
	const struct ib_global_route *grh;
	const struct ib_gid_attr *sgid_attr;
	enum rdma_network_type net_type;
	struct softrnic_av *av;
	bool v4;

	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH))
		return ERR_PTR(-EINVAL);
	grh = rdma_ah_read_grh(attr);
	sgid_attr = grh->sgid_attr;
	/* Our port only announces RoCEv2 GIDs. */
	if (!sgid_attr || sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return ERR_PTR(-EINVAL);
	net_type = rdma_gid_attr_network_type(sgid_attr);
	v4 = ipv6_addr_v4mapped((const struct in6_addr *)grh->dgid.raw);
	/* Both ends of a RoCEv2 path speak the same IP version. */
	if (v4 != (net_type == RDMA_NETWORK_IPV4))
		return ERR_PTR(-EINVAL);

	av = kzalloc(sizeof(*av), gfp);
	if (!av)
		return ERR_PTR(-ENOMEM);
	kref_init(&av->ref);
	av->pd = pd;
	rdma_hold_gid_attr(sgid_attr);
	av->sgid_attr = sgid_attr;
	av->sgid = sgid_attr->gid;
	av->dgid = grh->dgid;
	av->flow_label = grh->flow_label;
	av->sgid_index = grh->sgid_index;
	av->hop_limit = grh->hop_limit;
	av->traffic_class = grh->traffic_class;
	av->sl = rdma_ah_get_sl(attr);
	av->static_rate = rdma_ah_get_static_rate(attr);
	av->port_num = rdma_ah_get_port_num(attr);
	av->ah_flags = rdma_ah_get_ah_flags(attr);
	memcpy(av->dmac, attr->roce.dmac, ETH_ALEN);
	av->net_type = net_type;
	return av;
}

int softrnic_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		       struct ib_udata *udata)
{
	struct softrnic_dev *sdev = to_sdev(ibah->device);
	struct softrnic_ah *ah = to_sah(ibah);
	struct softrnic_create_ah_resp resp = {};
	bool sleepable = init->flags & RDMA_CREATE_AH_SLEEPABLE;
	struct softrnic_av *av;
	unsigned long flags;
	u32 ah_num;
	int err;

	if (!sdev->wire->datagrams)
		return -EOPNOTSUPP;
	/* The provider cannot post to an AH whose number it never got. */
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	av = softrnic_av_create(init->ah_attr, to_spd(ibah->pd),
				sleepable ? GFP_KERNEL : GFP_ATOMIC);
	if (IS_ERR(av))
		return PTR_ERR(av);

	if (sleepable) {
		err = xa_alloc_cyclic_irq(&sdev->ahs, &ah_num, av,
					  XA_LIMIT(1, SOFTRNIC_MAX_AH),
					  &sdev->ah_next, GFP_KERNEL);
	} else {
		/* Maybe called with IRQs off (IPoIB-style callers). */
		xa_lock_irqsave(&sdev->ahs, flags);
		err = __xa_alloc_cyclic(&sdev->ahs, &ah_num, av,
					XA_LIMIT(1, SOFTRNIC_MAX_AH),
					&sdev->ah_next, GFP_ATOMIC);
		xa_unlock_irqrestore(&sdev->ahs, flags);
	}
	if (err < 0) {
		softrnic_ah_put(av);
		return err == -EBUSY ? -ENOMEM : err;
	}
	ah->ah_num = ah_num;

	if (udata) {
		resp.ah_num = ah_num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err) {
			xa_erase_irq(&sdev->ahs, ah_num);
			softrnic_ah_put(av);
			return err;
		}
	}
	return 0;
}

int softrnic_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct softrnic_dev *sdev = to_sdev(ibah->device);
	struct softrnic_av *av;
	unsigned long irqflags;

	xa_lock_irqsave(&sdev->ahs, irqflags);
	av = __xa_erase(&sdev->ahs, to_sah(ibah)->ah_num);
	xa_unlock_irqrestore(&sdev->ahs, irqflags);
	if (!WARN_ON(!av))
		softrnic_ah_put(av);
	return 0;
}

/* Publish a new av under the same number; users of the old one finish. */
int softrnic_modify_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	struct softrnic_dev *sdev = to_sdev(ibah->device);
	struct softrnic_av *av, *old;
	unsigned long flags;

	av = softrnic_av_create(attr, to_spd(ibah->pd), GFP_ATOMIC);
	if (IS_ERR(av))
		return PTR_ERR(av);
	xa_lock_irqsave(&sdev->ahs, flags);
	/* Replacing a present entry allocates nothing. */
	old = __xa_store(&sdev->ahs, to_sah(ibah)->ah_num, av, GFP_ATOMIC);
	xa_unlock_irqrestore(&sdev->ahs, flags);
	if (WARN_ON(xa_is_err(old) || !old)) {
		softrnic_ah_put(av);
		return -EINVAL;
	}
	softrnic_ah_put(old);
	return 0;
}

int softrnic_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	struct softrnic_dev *sdev = to_sdev(ibah->device);
	struct softrnic_av *av;

	av = softrnic_ah_get(sdev, to_sah(ibah)->ah_num, to_spd(ibah->pd));
	if (IS_ERR(av))
		return PTR_ERR(av);

	/* rdma_query_ah() hands the sgid_attr back as NULL: not ours. */
	memset(attr, 0, sizeof(*attr));
	attr->type = ibah->type;
	rdma_ah_set_port_num(attr, av->port_num);
	rdma_ah_set_sl(attr, av->sl);
	rdma_ah_set_static_rate(attr, av->static_rate);
	rdma_ah_set_grh(attr, &av->dgid, av->flow_label, av->sgid_index,
			av->hop_limit, av->traffic_class);
	memcpy(attr->roce.dmac, av->dmac, ETH_ALEN);
	softrnic_ah_put(av);
	return 0;
}

struct softrnic_av *softrnic_ah_get(struct softrnic_dev *sdev, u32 ah_num,
				    struct softrnic_pd *pd)
{
	struct softrnic_av *av;

	rcu_read_lock();
	av = xa_load(&sdev->ahs, ah_num);
	if (av && !kref_get_unless_zero(&av->ref))
		av = NULL;
	rcu_read_unlock();
	if (!av)
		return ERR_PTR(-ENOENT);
	/* An AH is usable only by QPs of its own PD. */
	if (av->pd != pd) {
		softrnic_ah_put(av);
		return ERR_PTR(-EPERM);
	}
	return av;
}
