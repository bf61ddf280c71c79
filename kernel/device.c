// SPDX-License-Identifier: GPL-2.0
/*
 * softrnic device lifetime: creation from `rdma link add`, binding to a
 * netdev, and teardown from `rdma link delete`, netdev removal or rmmod.
 *
 * Ownership: ib_core owns the ib_device once registered; every path that
 * removes a device goes through ib_core's unregistration, which calls
 * softrnic_dealloc_driver() exactly once.  The device list below exists
 * only to answer "which of our devices sit on this netdev" and is never
 * touched on the data path.
 *
 * Lock order: RTNL -> softrnic_devices_lock.  Nothing here takes RTNL
 * while holding softrnic_devices_lock, and ib_register_device() is called
 * with no lock of ours held.
 */
#include <linux/module.h>
#include <linux/if_arp.h>
#include <net/addrconf.h>

#include "softrnic.h"
#include "limits.h"

enum softrnic_dev_state {
	SOFTRNIC_DEV_REGISTERING,
	SOFTRNIC_DEV_LIVE,
	SOFTRNIC_DEV_GONE,
};

static LIST_HEAD(softrnic_devices);
static DEFINE_MUTEX(softrnic_devices_lock);

/*
 * Undo softrnic_dev_alloc() and everything set up after it; the ib_device
 * memory itself is ib_core's (dealloc_driver) or the caller's to free.
 */
static void softrnic_dev_release(struct softrnic_dev *sdev)
{
	mutex_lock(&softrnic_devices_lock);
	list_del_init(&sdev->list);
	sdev->state = SOFTRNIC_DEV_GONE;
	mutex_unlock(&softrnic_devices_lock);

	if (sdev->wire_priv)
		sdev->wire->dev_fini(sdev);
	/* NULL (a veth, say) or the reference softrnic_dev_bind() took. */
	put_device(sdev->ibdev.dev.parent);
	netdev_put(sdev->netdev, &sdev->netdev_tracker);
	ida_destroy(&sdev->pd_ida);
	softrnic_mem_fini(sdev);
	softrnic_queues_fini(sdev);
	softrnic_counters_fini(sdev);
}

static void softrnic_dealloc_driver(struct ib_device *ibdev)
{
	softrnic_dev_release(to_sdev(ibdev));
}

/* Queue unregistration of a registered device; safe against a racing one. */
static void softrnic_dev_unregister_async(struct softrnic_dev *sdev)
{
	if (!ib_device_try_get(&sdev->ibdev))
		return;		/* already on its way out */
	ib_unregister_device_queued(&sdev->ibdev);
	ib_device_put(&sdev->ibdev);
}

static const struct ib_device_ops softrnic_core_ops = {
	.owner = THIS_MODULE,
	.driver_id = SOFTRNIC_DRIVER_ID,
	.uverbs_abi_ver = SOFTRNIC_UVERBS_ABI_VERSION,

	.alloc_pd = softrnic_alloc_pd,
	.alloc_ucontext = softrnic_alloc_ucontext,
	.dealloc_driver = softrnic_dealloc_driver,
	.dealloc_pd = softrnic_dealloc_pd,
	.dealloc_ucontext = softrnic_dealloc_ucontext,
	.disassociate_ucontext = softrnic_disassociate_ucontext,
	.get_dev_fw_str = softrnic_get_dev_fw_str,
	.get_link_layer = softrnic_get_link_layer,
	.modify_port = softrnic_modify_port,
	.query_device = softrnic_query_device,
	.query_pkey = softrnic_query_pkey,
	.query_port = softrnic_query_port,

	INIT_RDMA_OBJ_SIZE(ib_pd, softrnic_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, softrnic_ucontext, ibuc),
};

static struct softrnic_dev *find_on_netdev(struct net_device *netdev,
					   const struct softrnic_wire *wire)
{
	struct softrnic_dev *sdev;

	lockdep_assert_held(&softrnic_devices_lock);
	list_for_each_entry(sdev, &softrnic_devices, list)
		if (sdev->netdev == netdev && sdev->wire == wire)
			return sdev;
	return NULL;
}

static int softrnic_check_netdev(const char *ibdev_name,
				 struct net_device *netdev)
{
	struct ib_device *other;

	if (netdev->type != ARPHRD_ETHER || netdev->addr_len != ETH_ALEN) {
		pr_warn(DRV_NAME ": %s: netdev %s is not Ethernet\n",
			ibdev_name, netdev_name(netdev));
		return -EPROTONOSUPPORT;
	}
	/*
	 * ib_core would refuse the name too, but with ENFILE; say what is
	 * wrong.  The core's check stays as the race-free backstop.
	 */
	other = ib_device_get_by_name(ibdev_name, RDMA_DRIVER_UNKNOWN);
	if (other) {
		ib_device_put(other);
		pr_warn(DRV_NAME ": %s: an RDMA device with this name exists\n",
			ibdev_name);
		return -EEXIST;
	}
	return 0;
}

static struct softrnic_dev *softrnic_dev_alloc(struct net_device *netdev,
					       const struct softrnic_wire *wire)
{
	struct softrnic_dev *sdev;
	struct ib_device *ibdev;

	sdev = ib_alloc_device(softrnic_dev, ibdev);
	if (!sdev)
		return NULL;
	ibdev = &sdev->ibdev;
	sdev->wire = wire;
	if (softrnic_counters_init(sdev)) {
		ib_dealloc_device(ibdev);
		return NULL;
	}
	if (softrnic_queues_init(sdev)) {
		softrnic_counters_fini(sdev);
		ib_dealloc_device(ibdev);
		return NULL;
	}

	sdev->state = SOFTRNIC_DEV_REGISTERING;
	INIT_LIST_HEAD(&sdev->list);
	ida_init(&sdev->pd_ida);
	softrnic_mem_init(sdev);
	sdev->netdev = netdev;
	netdev_hold(netdev, &sdev->netdev_tracker, GFP_KERNEL);

	ibdev->node_type = wire->node_type;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = num_possible_cpus();
	ibdev->local_dma_lkey = 0;
	addrconf_addr_eui48((unsigned char *)&ibdev->node_guid,
			    netdev->dev_addr);
	strscpy(ibdev->node_desc, DRV_NAME, sizeof(ibdev->node_desc));

	ib_set_device_ops(ibdev, &softrnic_core_ops);
	ib_set_device_ops(ibdev, &softrnic_queue_ops);
	ib_set_device_ops(ibdev, &softrnic_mem_ops);
	if (wire->nstats)
		ib_set_device_ops(ibdev, &softrnic_stats_ops);
	ib_set_device_ops(ibdev, wire->ops);
	return sdev;
}

/* A device ib_register_device() never took (or gave back on failure). */
static void softrnic_dev_free_unregistered(struct softrnic_dev *sdev)
{
	softrnic_dev_release(sdev);
	ib_dealloc_device(&sdev->ibdev);
}

/*
 * Take the netdev's port state, and put the ib_device under the netdev's
 * parent device (the PCI or virtio NIC), as a hardware RNIC is, so that
 * /sys/class/infiniband/DEV/device/net/ lists the netdev: rdma-core's
 * tools and tests look for it there.  A veth has no parent; its devices
 * stay in /sys/devices/virtual.
 *
 * Under RTNL the netdev is either registered, and then its parent is
 * alive and a later NETDEV_UNREGISTER finds sdev, already on the list; or
 * it is on its way out, possibly announced before sdev was listed: refuse.
 *
 * Lifetime: the NIC driver's remove() unregisters the netdev, which waits
 * for our netdev reference; softrnic_dev_release() drops it only after
 * ib_core has unregistered (device_del()) the ib_device.  So the parent
 * outlives the ib_device's registration; our reference on it keeps the
 * pointer valid, whatever the driver does, for as long as we hold the
 * netdev.
 */
static int softrnic_dev_bind(struct softrnic_dev *sdev)
{
	struct net_device *netdev = sdev->netdev;
	int err = 0;

	rtnl_lock();
	if (netdev->reg_state != NETREG_REGISTERED) {
		err = -ENODEV;
		goto out;
	}
	sdev->port_state = softrnic_netdev_port_state(netdev);
	sdev->ibdev.dev.parent = get_device(netdev->dev.parent);
out:
	rtnl_unlock();
	return err;
}

int softrnic_dev_add(const char *ibdev_name, struct net_device *netdev,
		     const struct softrnic_wire *wire)
{
	struct softrnic_dev *sdev;
	bool netdev_gone;
	int err;

	err = softrnic_check_netdev(ibdev_name, netdev);
	if (err)
		return err;

	mutex_lock(&softrnic_devices_lock);
	if (find_on_netdev(netdev, wire)) {
		mutex_unlock(&softrnic_devices_lock);
		pr_warn(DRV_NAME ": %s: netdev %s already has a %s device\n",
			ibdev_name, netdev_name(netdev), wire->link_ops->type);
		return -EBUSY;
	}
	sdev = softrnic_dev_alloc(netdev, wire);
	if (!sdev) {
		mutex_unlock(&softrnic_devices_lock);
		return -ENOMEM;
	}
	list_add_tail(&sdev->list, &softrnic_devices);
	mutex_unlock(&softrnic_devices_lock);

	err = softrnic_dev_bind(sdev);
	if (err)
		goto err_free;

	err = ib_device_set_netdev(&sdev->ibdev, netdev, 1);
	if (err)
		goto err_free;
	/* The transport (sockets, receive lookup) before anyone can use it. */
	if (wire->dev_init) {
		err = wire->dev_init(sdev);
		if (err)
			goto err_free;
	}

	/*
	 * Once registered, the device may be unregistered (and freed) by a
	 * concurrent `rdma link delete`; pin its memory until we are done
	 * looking at it.
	 */
	get_device(&sdev->ibdev.dev);
	err = ib_register_device(&sdev->ibdev, ibdev_name, NULL);
	if (err) {
		put_device(&sdev->ibdev.dev);
		goto err_free;
	}

	mutex_lock(&softrnic_devices_lock);
	netdev_gone = sdev->netdev_gone;
	if (sdev->state == SOFTRNIC_DEV_REGISTERING)
		sdev->state = SOFTRNIC_DEV_LIVE;
	mutex_unlock(&softrnic_devices_lock);

	/* The netdev started to go away while we were registering. */
	if (netdev_gone)
		softrnic_dev_unregister_async(sdev);
	put_device(&sdev->ibdev.dev);
	return 0;

err_free:
	softrnic_dev_free_unregistered(sdev);
	return err;
}

/* Called with RTNL held from the netdev notifier on NETDEV_UNREGISTER. */
void softrnic_dev_remove_all_on(struct net_device *netdev)
{
	struct softrnic_dev *sdev;

	mutex_lock(&softrnic_devices_lock);
	list_for_each_entry(sdev, &softrnic_devices, list) {
		if (sdev->netdev != netdev)
			continue;
		sdev->netdev_gone = true;
		if (sdev->state == SOFTRNIC_DEV_LIVE)
			softrnic_dev_unregister_async(sdev);
	}
	mutex_unlock(&softrnic_devices_lock);
}

/* Run @fn on every registered device bound to @netdev (RTNL held). */
void softrnic_dev_for_each_on(struct net_device *netdev,
			      void (*fn)(struct softrnic_dev *sdev))
{
	struct softrnic_dev *sdev;

	ASSERT_RTNL();
	mutex_lock(&softrnic_devices_lock);
	list_for_each_entry(sdev, &softrnic_devices, list)
		if (sdev->netdev == netdev && sdev->state == SOFTRNIC_DEV_LIVE)
			fn(sdev);
	mutex_unlock(&softrnic_devices_lock);
}
