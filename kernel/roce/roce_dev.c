// SPDX-License-Identifier: GPL-2.0
/*
 * RoCEv2 personality of a softrnic device: an IB CA whose port runs the
 * IBTA transport over UDP/IP on Ethernet.  ib_core fills the GID table from
 * the netdev's IPv4/IPv6 addresses (roce_gid_mgmt), so we only declare the
 * port's capabilities.
 */
#include <rdma/ib_mad.h>

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

static const struct ib_device_ops softrnic_roce_ops = {
	.get_port_immutable = softrnic_roce_port_immutable,
	/* transport counters, roce_stats.c */
	.alloc_hw_port_stats = roce_alloc_hw_port_stats,
	.get_hw_stats = roce_get_hw_stats,
	/* UD multicast, roce_mcast.c */
	.attach_mcast = roce_attach_mcast,
	.detach_mcast = roce_detach_mcast,
};

const struct softrnic_wire softrnic_roce_wire = {
	.link_type = "roce",
	.type = SOFTRNIC_LINK_ROCE,
	.node_type = RDMA_NODE_IB_CA,
	.gid_tbl_len = SOFTRNIC_ROCE_GID_TBL_LEN,
	.ops = &softrnic_roce_ops,
	.fill_device_attr = softrnic_roce_fill_device_attr,
	/* The RC transport (roce_net.c, roce_qp.c, roce_req.c, roce_resp.c). */
	.sq_xmit = roce_sq_xmit,
	.dev_init = roce_dev_init,
	.dev_fini = roce_dev_fini,
	.qp_init = roce_qp_init,
	.qp_fini = roce_qp_fini,
	.qp_modify = roce_qp_modify,
};
