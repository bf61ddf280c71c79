// SPDX-License-Identifier: GPL-2.0
/*
 * Counters: the port counters of `rdma statistic show link` and the
 * counter groups of `rdma statistic qp` (ib_core's rdma_counter), for
 * whatever counters the wire names in struct softrnic_wire.
 *
 * The data path counts every event per CPU in sdev->stats, without a
 * lock.  An event of a QP bound to a group is also added to the QP's own
 * cnt[] (softrnic_qp_count()), an atomic in the QP, so again no lock.
 * A group's value is, at read time, what its QPs counted since they were
 * bound plus what QPs unbound from it had counted (retired[]).
 *
 * ib_core shows a port counter as get_hw_stats() plus every group's value
 * plus the values of freed groups, as a NIC counts a bound QP in its
 * group instead of the port's default counter.  So get_hw_stats() returns
 * the per-CPU total less what the groups hold and held (cnt_gone).  A QP
 * stops adding when unbound, and its counts move to retired[] under
 * cnt_lock; an add racing with that stays in the QP's cnt[] and is
 * cleared at the next bind: the port total keeps it, no group does.
 *
 * Lock order: ib_core's counter->lock or port stats lock -> cnt_lock.
 */
#include <linux/percpu.h>
#include <linux/slab.h>
#include <rdma/rdma_counter.h>

#include "queue.h"

struct softrnic_cgroup {
	struct list_head node;		/* on sdev->cnt_groups */
	struct list_head qps;		/* softrnic_qp.cnt_node */
	u64 retired[];			/* wire->nstats */
};

int softrnic_counters_init(struct softrnic_dev *sdev)
{
	unsigned int n = sdev->wire->nstats;

	spin_lock_init(&sdev->cnt_lock);
	INIT_LIST_HEAD(&sdev->cnt_groups);
	/* From 1: a counter id of 0 asks bind_qp for a new group. */
	xa_init_flags(&sdev->cnt_ids, XA_FLAGS_ALLOC1);
	if (!n)
		return 0;
	sdev->stats = __alloc_percpu(sizeof(u64) * n, __alignof__(u64));
	sdev->cnt_gone = kcalloc(n, sizeof(u64), GFP_KERNEL);
	if (!sdev->stats || !sdev->cnt_gone) {
		softrnic_counters_fini(sdev);
		return -ENOMEM;
	}
	return 0;
}

/* After every QP is gone: ib_core frees the groups before that. */
void softrnic_counters_fini(struct softrnic_dev *sdev)
{
	WARN_ON(!list_empty(&sdev->cnt_groups));
	xa_destroy(&sdev->cnt_ids);
	free_percpu(sdev->stats);
	sdev->stats = NULL;
	kfree(sdev->cnt_gone);
	sdev->cnt_gone = NULL;
}

/* Add @grp's value to @v; cnt_lock held. */
static void softrnic_cgroup_sum(struct softrnic_dev *sdev,
				const struct softrnic_cgroup *grp, u64 *v)
{
	unsigned int i, n = sdev->wire->nstats;
	struct softrnic_qp *qp;

	for (i = 0; i < n; i++)
		v[i] += grp->retired[i];
	list_for_each_entry(qp, &grp->qps, cnt_node)
		for (i = 0; i < n; i++)
			v[i] += atomic64_read(&qp->cnt[i]);
}

/* Stop counting @qp in its group, keeping its counts there. */
static void softrnic_cgroup_detach(struct softrnic_qp *qp)
{
	struct softrnic_cgroup *grp = qp->cgroup;
	unsigned int i;

	lockdep_assert_held(&qp->sdev->cnt_lock);
	WRITE_ONCE(qp->cnt_on, false);
	for (i = 0; i < qp->sdev->wire->nstats; i++)
		grp->retired[i] += atomic64_xchg(&qp->cnt[i], 0);
	list_del(&qp->cnt_node);
	qp->cgroup = NULL;
}

/*
 * destroy_qp, once the wire is done with @qp: ib_core unbinds a QP before
 * destroying it, but a bind by QPN may race with that; refuse binds from
 * now on and take the QP out of a group it is still in.
 */
void softrnic_counters_qp_destroyed(struct softrnic_qp *qp)
{
	struct softrnic_dev *sdev = qp->sdev;

	spin_lock(&sdev->cnt_lock);
	qp->cnt_dead = true;
	if (qp->cgroup)
		softrnic_cgroup_detach(qp);
	spin_unlock(&sdev->cnt_lock);
	kfree(qp->cnt);
	qp->cnt = NULL;
}

static struct rdma_hw_stats *
softrnic_alloc_hw_port_stats(struct ib_device *ibdev, u32 port)
{
	const struct softrnic_wire *wire = to_sdev(ibdev)->wire;

	return rdma_alloc_hw_stats_struct(wire->stat_descs, wire->nstats,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static int softrnic_get_hw_stats(struct ib_device *ibdev,
				 struct rdma_hw_stats *stats, u32 port,
				 int index)
{
	struct softrnic_dev *sdev = to_sdev(ibdev);
	unsigned int i, n = sdev->wire->nstats;
	struct softrnic_cgroup *grp;
	u64 *v = stats->value;
	int cpu;

	/* First what the groups hold, then the totals, which include it. */
	spin_lock(&sdev->cnt_lock);
	for (i = 0; i < n; i++)
		v[i] = sdev->cnt_gone[i];
	list_for_each_entry(grp, &sdev->cnt_groups, node)
		softrnic_cgroup_sum(sdev, grp, v);
	spin_unlock(&sdev->cnt_lock);
	smp_rmb();	/* pairs with the order of softrnic_qp_count() */

	for (i = 0; i < n; i++) {
		u64 total = 0;

		for_each_possible_cpu(cpu)
			total += per_cpu_ptr(sdev->stats, cpu)[i];
		v[i] = total > v[i] ? total - v[i] : 0;
	}
	return n;
}

/*
 * Bind @ibqp to @counter's group, a new one if counter->id is 0 (then we
 * pick the id).  ib_core holds counter->lock.
 */
static int softrnic_counter_bind_qp(struct rdma_counter *counter,
				    struct ib_qp *ibqp)
{
	struct softrnic_dev *sdev = to_sdev(counter->device);
	struct softrnic_qp *qp = to_sqp(ibqp);
	unsigned int i, n = sdev->wire->nstats;
	struct softrnic_cgroup *grp, *fresh = NULL;
	atomic64_t *cnt = NULL;
	u32 id = 0;
	int err;

	/* Allocate first: the rest is under a spinlock. */
	if (!READ_ONCE(qp->cnt)) {
		cnt = kcalloc(n, sizeof(*cnt), GFP_KERNEL);
		if (!cnt)
			return -ENOMEM;
	}
	if (!counter->id) {
		err = -ENOMEM;
		fresh = kzalloc(struct_size(fresh, retired, n), GFP_KERNEL);
		if (!fresh)
			goto err_free;
		INIT_LIST_HEAD(&fresh->qps);
		err = xa_alloc(&sdev->cnt_ids, &id, fresh, xa_limit_32b,
			       GFP_KERNEL);
		if (err)
			goto err_free;
	}

	spin_lock(&sdev->cnt_lock);
	grp = fresh ?: xa_load(&sdev->cnt_ids, counter->id);
	if (!grp || qp->cgroup || qp->cnt_dead) {
		spin_unlock(&sdev->cnt_lock);
		err = -EINVAL;
		goto err_id;
	}
	if (fresh)
		list_add_tail(&grp->node, &sdev->cnt_groups);
	if (!qp->cnt) {
		qp->cnt = cnt;
		cnt = NULL;
	}
	/* Adds that raced with the last unbind belong to no group. */
	for (i = 0; i < n; i++)
		atomic64_set(&qp->cnt[i], 0);
	list_add_tail(&qp->cnt_node, &grp->qps);
	qp->cgroup = grp;
	smp_store_release(&qp->cnt_on, true);
	if (fresh)
		counter->id = id;
	ibqp->counter = counter;
	spin_unlock(&sdev->cnt_lock);
	kfree(cnt);
	return 0;

err_id:
	if (fresh)
		xa_erase(&sdev->cnt_ids, id);
err_free:
	kfree(fresh);
	kfree(cnt);
	return err;
}

/* Back to the port's default counter; ib_core holds counter->lock. */
static int softrnic_counter_unbind_qp(struct ib_qp *ibqp)
{
	struct softrnic_qp *qp = to_sqp(ibqp);
	struct softrnic_dev *sdev = qp->sdev;

	spin_lock(&sdev->cnt_lock);
	if (qp->cgroup)
		softrnic_cgroup_detach(qp);
	ibqp->counter = NULL;
	spin_unlock(&sdev->cnt_lock);
	return 0;
}

/* The last QP left the group; ib_core has read its final value. */
static int softrnic_counter_dealloc(struct rdma_counter *counter)
{
	struct softrnic_dev *sdev = to_sdev(counter->device);
	struct softrnic_cgroup *grp;
	struct softrnic_qp *qp, *next;
	unsigned int i;

	grp = xa_erase(&sdev->cnt_ids, counter->id);
	if (!grp)
		return 0;
	spin_lock(&sdev->cnt_lock);
	list_for_each_entry_safe(qp, next, &grp->qps, cnt_node) {
		WARN_ON_ONCE(1);
		softrnic_cgroup_detach(qp);
	}
	/* Still part of the port counters, as ib_core's history. */
	for (i = 0; i < sdev->wire->nstats; i++)
		sdev->cnt_gone[i] += grp->retired[i];
	list_del(&grp->node);
	spin_unlock(&sdev->cnt_lock);
	kfree(grp);
	return 0;
}

static struct rdma_hw_stats *
softrnic_counter_alloc_stats(struct rdma_counter *counter)
{
	const struct softrnic_wire *wire = to_sdev(counter->device)->wire;
	struct rdma_hw_stats *stats;
	unsigned int i;

	/*
	 * All of the port's names, as ib_core adds a group's values to the
	 * port's index by index; those no QP counts are hidden.
	 */
	stats = rdma_alloc_hw_stats_struct(wire->stat_descs, wire->nstats,
					   RDMA_HW_STATS_DEFAULT_LIFESPAN);
	if (!stats)
		return NULL;
	for (i = 0; i < wire->nstats; i++)
		if (!(wire->qp_stats & BIT_ULL(i)))
			set_bit(i, stats->is_disabled);
	return stats;
}

static int softrnic_counter_update_stats(struct rdma_counter *counter)
{
	struct softrnic_dev *sdev = to_sdev(counter->device);
	struct softrnic_cgroup *grp;
	u64 *v = counter->stats->value;
	unsigned int i;
	int err = 0;

	for (i = 0; i < sdev->wire->nstats; i++)
		v[i] = 0;
	spin_lock(&sdev->cnt_lock);
	grp = xa_load(&sdev->cnt_ids, counter->id);
	if (grp)
		softrnic_cgroup_sum(sdev, grp, v);
	else
		err = -EINVAL;
	spin_unlock(&sdev->cnt_lock);
	return err;
}

/* Set on devices whose wire has counters (softrnic_dev_alloc()). */
const struct ib_device_ops softrnic_stats_ops = {
	.alloc_hw_port_stats = softrnic_alloc_hw_port_stats,
	.get_hw_stats = softrnic_get_hw_stats,
	.counter_bind_qp = softrnic_counter_bind_qp,
	.counter_unbind_qp = softrnic_counter_unbind_qp,
	.counter_dealloc = softrnic_counter_dealloc,
	.counter_alloc_stats = softrnic_counter_alloc_stats,
	.counter_update_stats = softrnic_counter_update_stats,
};
