// SPDX-License-Identifier: GPL-2.0
/*
 * The data path's work queue, one for every wire: bound and high-priority,
 * so a QP's receive or transmit work item runs next on the CPU that
 * queued it (a packet handler's or a socket callback's) instead of waiting
 * for an unbound kworker behind busy-polling processes, which doubled
 * small messages' latency.  WQ_MEM_RECLAIM: storage ULPs (nvme-rdma,
 * NFS/RDMA) send and receive through it.
 *
 * A wire that needs a QP's packets to leave in order from one CPU passes
 * that CPU; the queue never moves a work item by itself.
 */
#include <linux/cpumask.h>
#include <linux/workqueue.h>

#include "softrnic.h"

static struct workqueue_struct *softrnic_dp_wq;

int softrnic_dp_work_init(void)
{
	softrnic_dp_wq = alloc_workqueue("softrnic_dp", WQ_HIGHPRI |
					 WQ_MEM_RECLAIM, 0);
	return softrnic_dp_wq ? 0 : -ENOMEM;
}

/* After every wire's exit: nothing queues data-path work any more. */
void softrnic_dp_work_exit(void)
{
	destroy_workqueue(softrnic_dp_wq);
}

void softrnic_dp_queue_work(int cpu, struct work_struct *work)
{
	if (cpu >= 0 && cpu_online(cpu))
		queue_work_on(cpu, softrnic_dp_wq, work);
	else
		queue_work(softrnic_dp_wq, work);
}
