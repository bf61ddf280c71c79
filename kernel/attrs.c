// SPDX-License-Identifier: GPL-2.0
/*
 * Device and port attributes.  Every limit comes from limits.h, the same
 * numbers the verbs core enforces.
 */
#include <linux/netdevice.h>
#include <rdma/ib_mad.h>

#include "softrnic.h"
#include "limits.h"

int softrnic_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
			  struct ib_udata *udata)
{
	struct softrnic_dev *sdev = to_sdev(ibdev);

	if (udata->inlen || udata->outlen)
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = SOFTRNIC_MAX_MR_SIZE;
	attr->page_size_cap = PAGE_SIZE;
	attr->vendor_id = SOFTRNIC_VENDOR_ID;
	attr->vendor_part_id = SOFTRNIC_VENDOR_PART_ID;
	attr->hw_ver = SOFTRNIC_HW_VER;
	attr->fw_ver = SOFTRNIC_FW_VER;
	attr->max_qp = SOFTRNIC_MAX_QP;
	attr->max_qp_wr = SOFTRNIC_MAX_QP_WR;
	attr->device_cap_flags = IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	attr->max_send_sge = SOFTRNIC_MAX_SGE;
	attr->max_recv_sge = SOFTRNIC_MAX_SGE;
	attr->max_sge_rd = SOFTRNIC_MAX_SGE_RD;
	attr->max_cq = SOFTRNIC_MAX_CQ;
	attr->max_cqe = SOFTRNIC_MAX_CQE;
	attr->max_mr = SOFTRNIC_MAX_MR;
	attr->max_pd = SOFTRNIC_MAX_PD;
	attr->max_qp_rd_atom = SOFTRNIC_MAX_RD_ATOMIC;
	attr->max_qp_init_rd_atom = SOFTRNIC_MAX_RD_ATOMIC;
	attr->max_res_rd_atom = SOFTRNIC_MAX_RD_ATOMIC * SOFTRNIC_MAX_QP;
	attr->max_mw = SOFTRNIC_MAX_MW;
	attr->max_srq = SOFTRNIC_MAX_SRQ;
	attr->max_srq_wr = SOFTRNIC_MAX_SRQ_WR;
	attr->max_srq_sge = SOFTRNIC_MAX_SRQ_SGE;
	attr->max_fast_reg_page_list_len = SOFTRNIC_MAX_FAST_REG_PAGES;
	attr->max_pkeys = SOFTRNIC_PKEY_TBL_LEN;
	attr->local_ca_ack_delay = 15;
	attr->max_ah = SOFTRNIC_MAX_AH;

	sdev->wire->fill_device_attr(sdev, attr);
	return 0;
}

/* The port's active MTU: what query_port reports, what a QP's path_mtu
 * is capped to. */
enum ib_mtu softrnic_active_mtu(struct softrnic_dev *sdev)
{
	enum ib_mtu mtu = sdev->wire->active_mtu(READ_ONCE(sdev->netdev->mtu));

	return mtu ? mtu : IB_MTU_256;
}

int softrnic_query_port(struct ib_device *ibdev, u32 port,
			struct ib_port_attr *attr)
{
	struct softrnic_dev *sdev = to_sdev(ibdev);
	struct net_device *netdev = sdev->netdev;

	/* ib_core zeroes *attr and checks the port number. */
	attr->state = softrnic_netdev_port_state(netdev);
	attr->phys_state = attr->state == IB_PORT_ACTIVE ?
		IB_PORT_PHYS_STATE_LINK_UP : IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = softrnic_active_mtu(sdev);
	attr->gid_tbl_len = sdev->wire->gid_tbl_len;
	attr->port_cap_flags = IB_PORT_CM_SUP | IB_PORT_DEVICE_MGMT_SUP |
			       IB_PORT_VENDOR_CLASS_SUP;
	attr->max_msg_sz = SOFTRNIC_MAX_MSG_SIZE;
	attr->bad_pkey_cntr = 0;
	attr->qkey_viol_cntr = 0;
	attr->pkey_tbl_len = SOFTRNIC_PKEY_TBL_LEN;
	attr->lid = 0;
	attr->sm_lid = 0;
	attr->lmc = 0;
	attr->max_vl_num = 1;
	attr->sm_sl = 0;
	attr->subnet_timeout = 0;
	attr->init_type_reply = 0;

	return ib_get_eth_speed(ibdev, port, &attr->active_speed,
				&attr->active_width);
}

int softrnic_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			u16 *pkey)
{
	if (index >= SOFTRNIC_PKEY_TBL_LEN)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

int softrnic_modify_port(struct ib_device *ibdev, u32 port, int mask,
			 struct ib_port_modify *props)
{
	/*
	 * Capability bits are ib_core's business on Ethernet ports; a port
	 * shutdown would be the netdev's.
	 */
	return mask & IB_PORT_SHUTDOWN ? -EOPNOTSUPP : 0;
}

void softrnic_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%s", SOFTRNIC_FW_VER_STR);
}

enum rdma_link_layer softrnic_get_link_layer(struct ib_device *ibdev, u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}
