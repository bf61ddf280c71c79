// SPDX-License-Identifier: GPL-2.0
/*
 * softrnic: a software RDMA NIC.  `rdma link add NAME type roce|iwarp
 * netdev DEV` creates an ib_device on any Ethernet netdev.
 */
#include <linux/module.h>
#include <rdma/rdma_netlink.h>

#include "softrnic.h"

/* Each wire is one link type of `rdma link add`. */
static const struct softrnic_wire *const softrnic_wires[] = {
	&softrnic_roce_wire,
	&softrnic_iwarp_wire,
};

/* The module-wide exit hooks of the first @n wires, last one first. */
static void softrnic_wires_exit(unsigned int n)
{
	while (n--)
		if (softrnic_wires[n]->exit)
			softrnic_wires[n]->exit();
}

static int __init softrnic_init(void)
{
	unsigned int i;
	int err;

	err = softrnic_netdev_init();
	if (err)
		return err;
	err = softrnic_dp_work_init();
	if (err) {
		softrnic_netdev_exit();
		return err;
	}
	for (i = 0; i < ARRAY_SIZE(softrnic_wires); i++) {
		if (!softrnic_wires[i]->init)
			continue;
		err = softrnic_wires[i]->init();
		if (err) {
			softrnic_wires_exit(i);
			softrnic_dp_work_exit();
			softrnic_netdev_exit();
			return err;
		}
	}
	for (i = 0; i < ARRAY_SIZE(softrnic_wires); i++)
		rdma_link_register(softrnic_wires[i]->link_ops);
	return 0;
}

static void __exit softrnic_exit(void)
{
	unsigned int i = ARRAY_SIZE(softrnic_wires);

	/* No new devices, then remove (and wait for) every existing one. */
	while (i--)
		rdma_link_unregister(softrnic_wires[i]->link_ops);
	ib_unregister_driver(SOFTRNIC_DRIVER_ID);
	softrnic_wires_exit(ARRAY_SIZE(softrnic_wires));
	softrnic_dp_work_exit();
	softrnic_netdev_exit();
}

module_init(softrnic_init);
module_exit(softrnic_exit);

MODULE_AUTHOR("softrnic developers");
MODULE_DESCRIPTION("softrnic: software RDMA NIC (RoCEv2 and iWARP)");
MODULE_LICENSE("GPL");
MODULE_VERSION(SOFTRNIC_VERSION);
