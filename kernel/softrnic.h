/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softrnic verbs core: objects shared by the RoCE and iWARP wire layers.
 */
#ifndef SOFTRNIC_H
#define SOFTRNIC_H

#include <linux/idr.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "softrnic-abi.h"

#define DRV_NAME "softrnic"

struct rdma_link_ops;
struct softrnic_cgroup;
struct softrnic_dev;
struct softrnic_qp;
struct softrnic_swqe;

/*
 * What a wire layer (kernel/roce, kernel/iwarp) plugs into the core.  The
 * core owns the ib_device; the wire adds its port personality and, later,
 * its transport.  Whatever differs between wires is described here, as
 * data or as a hook: the core never asks which wire it serves.
 */
struct softrnic_wire {
	/*
	 * Module-wide: init (optional) runs at module load before link_ops
	 * is registered, exit after it is unregistered and every device is
	 * gone.  link_ops is `rdma link add ... type link_ops->type`; its
	 * newlink calls softrnic_dev_add() with this wire.
	 */
	int (*init)(void);
	void (*exit)(void);
	struct rdma_link_ops *link_ops;

	enum softrnic_link_type type;	/* only reported to userspace */
	u8 node_type;			/* RDMA_NODE_IB_CA / RDMA_NODE_RNIC */
	u32 gid_tbl_len;
	/* UD and GSI QPs, and the AHs they send to, exist on this wire. */
	bool datagrams;
	/* A QP's address vector must carry a GRH with a resolved sgid. */
	bool av_needs_grh;
	const struct ib_device_ops *ops; /* overrides on top of the core ops */
	/* Fill the type-specific fields of the device attributes. */
	void (*fill_device_attr)(struct softrnic_dev *sdev,
				 struct ib_device_attr *attr);
	/*
	 * The port's active MTU for a netdev MTU of @mtu bytes, 0 if no IB
	 * MTU fits (the core then reports IB_MTU_256).
	 */
	enum ib_mtu (*active_mtu)(int mtu);
	/*
	 * Whether modify_qp may take @qp from @cur to @next with the
	 * attributes of @mask (which the core checks one by one after).
	 */
	bool (*qp_transition_ok)(const struct softrnic_qp *qp,
				 enum ib_qp_state cur, enum ib_qp_state next,
				 int mask);
	/*
	 * A move of an ERR QP to SQD (state alone) succeeds and leaves it in
	 * ERR: iWARP, where librdmacm's rdma_disconnect moves the QP to SQD
	 * first and the peer may have closed the connection (QP to ERR)
	 * just before; siw takes it the same way.
	 */
	bool sqd_in_err_ok;
	/*
	 * Kernel QPs take IB_WR_RDMA_READ_WITH_INV (an RDMA READ whose sink
	 * MR is invalidated when it completes): ib_core's rdma_rw posts one
	 * for every READ on iWARP (rdma_cap_read_inv), nvmet-rdma's and
	 * svcrdma's included.  The wire's READ completion invalidates the
	 * MR of a WQE with SOFTRNIC_WQE_F_KREAD_INV.
	 */
	bool read_with_inv;

	/*
	 * Queues: the transmit side of the transport (kernel/queue.h).
	 * Called by the QP's SQ worker (process context, qp->mutex held)
	 * for each network WQE in SQ order, with the validated kernel copy,
	 * which the wire copies as needed.  Returns 0 when it took the WQE
	 * (it later calls softrnic_sq_complete(qp, wqe->index, ...)),
	 * -EAGAIN to be offered the same WQE again after it calls
	 * softrnic_qp_kick(qp), or an enum ib_wc_status > 0 to complete the
	 * WQE in error.  Every wire has one.
	 */
	int (*sq_xmit)(struct softrnic_qp *qp, const struct softrnic_swqe *wqe);

	/*
	 * Transport hooks, all optional.  dev_init runs before the device is
	 * registered (process context, no lock of ours), dev_fini when it
	 * is freed (dealloc_driver, or a failed add).  qp_init/qp_fini
	 * bracket a QP's life: qp_fini runs in destroy_qp after every wire
	 * reference is gone and before the QP's work item is cancelled, and
	 * must leave no timer or work of the wire behind.  qp_modify runs
	 * under qp->mutex after modify_qp stored @mask's attributes and
	 * changed the state from @cur, and after every move to ERR.
	 */
	int (*dev_init)(struct softrnic_dev *sdev);
	void (*dev_fini)(struct softrnic_dev *sdev);
	int (*qp_init)(struct softrnic_qp *qp);
	void (*qp_fini)(struct softrnic_qp *qp);
	void (*qp_modify)(struct softrnic_qp *qp, int mask,
			  enum ib_qp_state cur);
	/*
	 * destroy_qp is about to wait for the QP's references: a wire whose
	 * peers hold some (iw_cm, until the connection's CLOSE event) makes
	 * them let go here.  Process context, no lock of ours held.
	 */
	void (*qp_destroying)(struct softrnic_qp *qp);

	/*
	 * Counters (`rdma statistic`, counters.c): their names, indexed as
	 * the wire counts them with softrnic_count() and
	 * softrnic_qp_count(); nstats 0 for none.  Bit i of qp_stats says
	 * counter i belongs to a QP too: a QP bound to a counter group
	 * (`rdma statistic qp`) counts it there as well.
	 */
	const struct rdma_stat_desc *stat_descs;
	unsigned int nstats;
	u64 qp_stats;
};

extern const struct softrnic_wire softrnic_roce_wire;
extern const struct softrnic_wire softrnic_iwarp_wire;

struct softrnic_dev {
	struct ib_device ibdev;		/* must be first: ib_alloc_device */
	const struct softrnic_wire *wire;

	/*
	 * The netdev we are bound to, held (tracked) from newlink until
	 * dealloc_driver, so it cannot go away under a device that is still
	 * being unregistered.
	 */
	struct net_device *netdev;
	netdevice_tracker netdev_tracker;

	/* On softrnic_devices; protected by softrnic_devices_lock. */
	struct list_head list;
	/* Lifetime state (device.c); protected by softrnic_devices_lock. */
	int state;
	/* Set by the netdev notifier when the netdev is going away. */
	bool netdev_gone;
	/* Last port state we reported; only touched under RTNL. */
	enum ib_port_state port_state;

	/* Object numbers handed to userspace (control path only). */
	struct ida pd_ida;

	/*
	 * Queues (kernel/queue.h); set up by softrnic_queues_init().
	 * qp_xa maps QPN -> struct softrnic_qp (QP1 is the GSI QP, others
	 * from 2 up); its lock is taken irqsave.
	 */
	struct xarray qp_xa;
	u32 qp_next;			/* cyclic QPN allocation hint */
	atomic_t qp_count;
	atomic_t cq_count;
	atomic_t srq_count;
	atomic_t cqn_next;		/* CQ/SRQ numbers: informational */
	atomic_t srqn_next;
	/*
	 * QP work (SQ processing) runs here: per device so that storage ULPs
	 * (WQ_MEM_RECLAIM) and device removal don't depend on other devices.
	 */
	struct workqueue_struct *wq;

	/*
	 * Memory objects (kernel/mem.h); set up by softrnic_mem_init().
	 * mkeys maps key index (key >> 8) -> struct softrnic_mkey of every
	 * MR and MW, ahs maps AH number -> struct softrnic_av; lookups are
	 * RCU, both locks are taken irq-safe.
	 */
	struct xarray mkeys;
	u32 mkey_next;			/* cyclic key index hint */
	atomic_t num_mr;
	atomic_t num_mw;
	struct xarray ahs;
	u32 ah_next;			/* cyclic AH number hint */

	/*
	 * Counters (counters.c): wire->nstats per CPU, bumped without a
	 * lock.  The counter groups QPs are bound to (cnt_ids: counter id
	 * -> group) and the totals of freed groups (cnt_gone) are under
	 * cnt_lock, which only binding and reading take.
	 */
	u64 __percpu *stats;
	spinlock_t cnt_lock;
	struct list_head cnt_groups;
	struct xarray cnt_ids;
	u64 *cnt_gone;

	/* The wire layer's per-device state (dev_init .. dev_fini). */
	void *wire_priv;
};

static inline struct softrnic_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct softrnic_dev, ibdev);
}

/*
 * Allocation flags for memory a verb makes on behalf of @user space (a
 * ucontext's objects, sized by the process): charged to the process's
 * memory cgroup, and at its limit the verb fails with ENOMEM instead of
 * waking the OOM killer or logging an allocation failure.  Kernel
 * consumers' objects are the kernel's own.
 */
static inline gfp_t softrnic_gfp(bool user)
{
	return user ? GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN :
		      GFP_KERNEL;
}

struct softrnic_ucontext {
	struct ib_ucontext ibuc;
};

struct softrnic_pd {
	struct ib_pd ibpd;
	u32 pdn;
};

static inline struct softrnic_pd *to_spd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct softrnic_pd, ibpd);
}

/*
 * Verbs ops tables of the core, merged into every device: queues (CQ, QP,
 * SRQ, rings, mmap; queue_ops.c) and memory (MR, MW, AH; mem_ops.c).
 */
extern const struct ib_device_ops softrnic_queue_ops;
extern const struct ib_device_ops softrnic_mem_ops;

/* counters.c: port counters and the QP counter groups of ib_core */
extern const struct ib_device_ops softrnic_stats_ops;
int softrnic_counters_init(struct softrnic_dev *sdev);
void softrnic_counters_fini(struct softrnic_dev *sdev);

/* Count @n of event @c of the device; any context, no lock. */
static inline void softrnic_count(struct softrnic_dev *sdev, unsigned int c,
				  u64 n)
{
	this_cpu_add(sdev->stats[c], n);
}

/* device.c */
int softrnic_dev_add(const char *ibdev_name, struct net_device *netdev,
		     const struct softrnic_wire *wire);
void softrnic_dev_remove_all_on(struct net_device *netdev);
void softrnic_dev_for_each_on(struct net_device *netdev,
			      void (*fn)(struct softrnic_dev *sdev));

/* dp_work.c */
int softrnic_dp_work_init(void);
void softrnic_dp_work_exit(void);
/*
 * Queue a QP's data-path work item on @cpu, or on this CPU if @cpu is -1
 * or offline.  Any context.
 */
void softrnic_dp_queue_work(int cpu, struct work_struct *work);

/* netdev.c */
enum ib_port_state softrnic_netdev_port_state(struct net_device *netdev);
int softrnic_netdev_init(void);
void softrnic_netdev_exit(void);

/* attrs.c */
int softrnic_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
			  struct ib_udata *udata);
int softrnic_query_port(struct ib_device *ibdev, u32 port,
			struct ib_port_attr *attr);
int softrnic_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			u16 *pkey);
int softrnic_modify_port(struct ib_device *ibdev, u32 port, int mask,
			 struct ib_port_modify *props);
void softrnic_get_dev_fw_str(struct ib_device *ibdev, char *str);
enum ib_mtu softrnic_active_mtu(struct softrnic_dev *sdev);
enum rdma_link_layer softrnic_get_link_layer(struct ib_device *ibdev, u32 port);

/* ucontext.c */
int softrnic_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void softrnic_dealloc_ucontext(struct ib_ucontext *ibuc);
void softrnic_disassociate_ucontext(struct ib_ucontext *ibuc);

/* queue_ops.c, keys.c: per-device state of the queue and memory objects */
int softrnic_queues_init(struct softrnic_dev *sdev);
void softrnic_queues_fini(struct softrnic_dev *sdev);
void softrnic_mem_init(struct softrnic_dev *sdev);
void softrnic_mem_fini(struct softrnic_dev *sdev);

/* pd.c */
int softrnic_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int softrnic_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

#endif /* SOFTRNIC_H */
