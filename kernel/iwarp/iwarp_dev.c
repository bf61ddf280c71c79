// SPDX-License-Identifier: GPL-2.0
/*
 * iWARP personality of a softrnic device: an RNIC whose single GID is the
 * netdev's MAC address, as iw_cm and rdma_cm expect of iWARP ports.
 */
#include <linux/etherdevice.h>
#include <linux/module.h>
#include <rdma/iw_cm.h>
#include <rdma/rdma_netlink.h>

#include "softrnic.h"
#include "limits.h"
#include "iwarp.h"

static int softrnic_iwarp_port_immutable(struct ib_device *ibdev, u32 port,
					 struct ib_port_immutable *immutable)
{
	immutable->core_cap_flags = RDMA_CORE_PORT_IWARP;
	immutable->pkey_tbl_len = SOFTRNIC_PKEY_TBL_LEN;
	immutable->gid_tbl_len = 1;
	return 0;
}

static int softrnic_iwarp_query_gid(struct ib_device *ibdev, u32 port,
				    int index, union ib_gid *gid)
{
	struct net_device *netdev = to_sdev(ibdev)->netdev;

	if (index != 0)
		return -EINVAL;
	memset(gid, 0, sizeof(*gid));
	ether_addr_copy(gid->raw, netdev->dev_addr);
	return 0;
}

static void softrnic_iwarp_fill_device_attr(struct softrnic_dev *sdev,
					    struct ib_device_attr *attr)
{
	/*
	 * RFC 7306 FetchAdd and CmpSwap, atomic with respect to every CPU
	 * and every QP (softrnic_mr_atomic64), as on the RoCE wire; the
	 * masked ones are not offered.  A connection without RFC 7306 (siw)
	 * fails atomic WQEs with IB_WC_LOC_QP_OP_ERR.
	 */
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->masked_atomic_cap = IB_ATOMIC_NONE;
}

static const struct ib_device_ops softrnic_iwarp_ops = {
	.get_port_immutable = softrnic_iwarp_port_immutable,
	.query_gid = softrnic_iwarp_query_gid,
	.iw_add_ref = softrnic_iw_add_ref,
	.iw_rem_ref = softrnic_iw_rem_ref,
	.iw_get_qp = softrnic_iw_get_qp,
	.iw_connect = softrnic_iw_connect,
	.iw_accept = softrnic_iw_accept,
	.iw_reject = softrnic_iw_reject,
	.iw_create_listen = softrnic_iw_create_listen,
	.iw_destroy_listen = softrnic_iw_destroy_listen,
};

/* rdma_cm talks to iw_cm without iwpmd: the ports are the sockets' own. */
static int iwarp_dev_init(struct softrnic_dev *sdev)
{
	sdev->ibdev.iw_driver_flags = IW_F_NO_PORT_MAP;
	strscpy(sdev->ibdev.iw_ifname, netdev_name(sdev->netdev),
		sizeof(sdev->ibdev.iw_ifname));
	return 0;
}

static void iwarp_dev_fini(struct softrnic_dev *sdev)
{
	iwarp_cm_dev_gone(sdev);
}

static int softrnic_iwarp_newlink(const char *ibdev_name,
				  struct net_device *netdev)
{
	return softrnic_dev_add(ibdev_name, netdev, &softrnic_iwarp_wire);
}

static struct rdma_link_ops softrnic_iwarp_link_ops = {
	.type = "iwarp",
	.newlink = softrnic_iwarp_newlink,
};
MODULE_ALIAS_RDMA_LINK("iwarp");

static int iwarp_wire_init(void)
{
	return iwarp_cm_init();
}

/* Every device is gone: the CM's endpoints end. */
static void iwarp_wire_exit(void)
{
	iwarp_cm_exit();
}

const struct softrnic_wire softrnic_iwarp_wire = {
	.link_ops = &softrnic_iwarp_link_ops,
	.type = SOFTRNIC_LINK_IWARP,
	.node_type = RDMA_NODE_RNIC,
	.gid_tbl_len = 1,
	.ops = &softrnic_iwarp_ops,
	.fill_device_attr = softrnic_iwarp_fill_device_attr,
	/* The netdev MTU itself, rounded down to an IB MTU. */
	.active_mtu = ib_mtu_int_to_enum,
	.qp_transition_ok = softrnic_iwarp_qp_transition_ok,
	.sqd_in_err_ok = true,
	.read_with_inv = true,
	.sq_xmit = iwarp_sq_xmit,
	.stat_descs = iwarp_stat_descs,
	.nstats = IWARP_CNT_NR,
	.qp_stats = IWARP_QP_STATS,
	.init = iwarp_wire_init,
	.exit = iwarp_wire_exit,
	.dev_init = iwarp_dev_init,
	.dev_fini = iwarp_dev_fini,
	.qp_init = iwarp_qp_init,
	.qp_fini = iwarp_qp_fini,
	.qp_modify = iwarp_qp_modify,
	.qp_destroying = iwarp_qp_destroying,
};
