// SPDX-License-Identifier: GPL-2.0
/*
 * RoCEv2 personality of a softrnic device: an IB CA whose port runs the
 * IBTA transport over UDP/IP on Ethernet.  ib_core fills the GID table from
 * the netdev's IPv4/IPv6 addresses (roce_gid_mgmt), so we only declare the
 * port's capabilities.
 */
#include <linux/module.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_mad.h>
#include <rdma/rdma_netlink.h>

#include "roce/roce.h"
#include "limits.h"

static int softrnic_roce_port_immutable(struct ib_device *ibdev, u32 port,
					struct ib_port_immutable *immutable)
{
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->pkey_tbl_len = SOFTRNIC_PKEY_TBL_LEN;
	immutable->gid_tbl_len = SOFTRNIC_ROCE_GID_TBL_LEN;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static void softrnic_roce_fill_device_attr(struct softrnic_dev *sdev,
					   struct ib_device_attr *attr)
{
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->masked_atomic_cap = IB_ATOMIC_NONE;
	attr->max_mcast_grp = SOFTRNIC_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = SOFTRNIC_MAX_MCAST_QP_ATTACH;
	attr->max_total_mcast_qp_attach = SOFTRNIC_MAX_TOTAL_MCAST_QP_ATTACH;
}

/* The IBTA table: which transitions exist and what attributes each takes. */
static bool softrnic_roce_qp_transition_ok(const struct softrnic_qp *qp,
					   enum ib_qp_state cur,
					   enum ib_qp_state next, int mask)
{
	return ib_modify_qp_is_ok(cur, next, qp->ibqp.qp_type, mask);
}

static const struct ib_device_ops softrnic_roce_ops = {
	.get_port_immutable = softrnic_roce_port_immutable,
	/* UD multicast, roce_mcast.c */
	.attach_mcast = roce_attach_mcast,
	.detach_mcast = roce_detach_mcast,
};

static int softrnic_roce_newlink(const char *ibdev_name,
				 struct net_device *netdev)
{
	return softrnic_dev_add(ibdev_name, netdev, &softrnic_roce_wire);
}

static struct rdma_link_ops softrnic_roce_link_ops = {
	.type = "roce",
	.newlink = softrnic_roce_newlink,
};
MODULE_ALIAS_RDMA_LINK("roce");

const struct softrnic_wire softrnic_roce_wire = {
	/* Per-namespace UDP sockets (roce_net.c). */
	.init = roce_net_init,
	.exit = roce_net_exit,
	.link_ops = &softrnic_roce_link_ops,
	.type = SOFTRNIC_LINK_ROCE,
	.node_type = RDMA_NODE_IB_CA,
	.gid_tbl_len = SOFTRNIC_ROCE_GID_TBL_LEN,
	.datagrams = true,
	.av_needs_grh = true,
	.ops = &softrnic_roce_ops,
	.fill_device_attr = softrnic_roce_fill_device_attr,
	/* The largest IB MTU whose packet, with RoCEv2's headers, fits. */
	.active_mtu = iboe_get_mtu,
	.qp_transition_ok = softrnic_roce_qp_transition_ok,
	/* The RC transport (roce_net.c, roce_qp.c, roce_req.c, roce_resp.c). */
	.sq_xmit = roce_sq_xmit,
	.dev_init = roce_dev_init,
	.dev_fini = roce_dev_fini,
	.qp_init = roce_qp_init,
	.qp_fini = roce_qp_fini,
	.qp_modify = roce_qp_modify,
	/* Transport counters, per port and per QP (roce_stats.c). */
	.stat_descs = roce_stat_descs,
	.nstats = ROCE_CNT_NR,
	.qp_stats = ROCE_QP_STATS,
};
