// SPDX-License-Identifier: GPL-2.0
/*
 * Follow the bound netdev: carrier and admin state become the port state
 * (with IB_EVENT_PORT_ACTIVE / IB_EVENT_PORT_ERR), and a netdev that goes
 * away takes its softrnic devices with it.  The MTU needs no tracking:
 * query_port derives active_mtu from the netdev each time.
 */
#include <linux/netdevice.h>

#include "softrnic.h"

enum ib_port_state softrnic_netdev_port_state(struct net_device *netdev)
{
	return netif_running(netdev) && netif_carrier_ok(netdev) ?
		IB_PORT_ACTIVE : IB_PORT_DOWN;
}

static void softrnic_dispatch_port_event(struct softrnic_dev *sdev,
					 enum ib_event_type type)
{
	struct ib_event ev = {
		.device = &sdev->ibdev,
		.element.port_num = 1,
		.event = type,
	};

	ib_dispatch_event(&ev);
}

static void softrnic_port_state_changed(struct softrnic_dev *sdev)
{
	enum ib_port_state now = softrnic_netdev_port_state(sdev->netdev);

	if (now == sdev->port_state)
		return;
	sdev->port_state = now;
	softrnic_dispatch_port_event(sdev, now == IB_PORT_ACTIVE ?
				     IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR);
}

static int softrnic_netdev_event(struct notifier_block *nb,
				 unsigned long event, void *ptr)
{
	struct net_device *netdev = netdev_notifier_info_to_dev(ptr);

	switch (event) {
	case NETDEV_UNREGISTER:
		softrnic_dev_remove_all_on(netdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		softrnic_dev_for_each_on(netdev, softrnic_port_state_changed);
		break;
	default:
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block softrnic_netdev_notifier = {
	.notifier_call = softrnic_netdev_event,
};

int softrnic_netdev_init(void)
{
	return register_netdevice_notifier(&softrnic_netdev_notifier);
}

void softrnic_netdev_exit(void)
{
	unregister_netdevice_notifier(&softrnic_netdev_notifier);
}
