// SPDX-License-Identifier: GPL-2.0
/*
 * softrnic: a software RDMA NIC.  `rdma link add NAME type roce|iwarp
 * netdev DEV` creates an ib_device on any Ethernet netdev.
 */
#include <linux/module.h>
#include <rdma/rdma_netlink.h>

#include "softrnic.h"

static int softrnic_roce_newlink(const char *ibdev_name,
				 struct net_device *netdev)
{
	return softrnic_dev_add(ibdev_name, netdev, &softrnic_roce_wire);
}

static int softrnic_iwarp_newlink(const char *ibdev_name,
				  struct net_device *netdev)
{
	return softrnic_dev_add(ibdev_name, netdev, &softrnic_iwarp_wire);
}

static struct rdma_link_ops softrnic_roce_link_ops = {
	.type = "roce",
	.newlink = softrnic_roce_newlink,
};

static struct rdma_link_ops softrnic_iwarp_link_ops = {
	.type = "iwarp",
	.newlink = softrnic_iwarp_newlink,
};

static int __init softrnic_init(void)
{
	int err;

	err = softrnic_netdev_init();
	if (err)
		return err;
	/* RoCE: per-namespace UDP sockets (kernel/roce/roce_net.c). */
	err = roce_net_init();
	if (err) {
		softrnic_netdev_exit();
		return err;
	}
	rdma_link_register(&softrnic_roce_link_ops);
	rdma_link_register(&softrnic_iwarp_link_ops);
	return 0;
}

static void __exit softrnic_exit(void)
{
	/* No new devices, then remove (and wait for) every existing one. */
	rdma_link_unregister(&softrnic_iwarp_link_ops);
	rdma_link_unregister(&softrnic_roce_link_ops);
	ib_unregister_driver(SOFTRNIC_DRIVER_ID);
	roce_net_exit();
	softrnic_netdev_exit();
}

module_init(softrnic_init);
module_exit(softrnic_exit);

MODULE_AUTHOR("softrnic developers");
MODULE_DESCRIPTION("softrnic: software RDMA NIC (RoCEv2 and iWARP)");
MODULE_LICENSE("GPL");
MODULE_VERSION(SOFTRNIC_VERSION);
MODULE_ALIAS_RDMA_LINK("roce");
MODULE_ALIAS_RDMA_LINK("iwarp");
