// SPDX-License-Identifier: GPL-2.0
/* Verbs ops for CQs, QPs, SRQs and their shared rings. */
#include "queue.h"

/*
 * Per-device queue state, set up with the device before registration.
 * ib_core destroys every QP, CQ and SRQ before it lets the device go, so
 * at softrnic_queues_fini() the QPN table is empty and no QP work is
 * queued.
 */
int softrnic_queues_init(struct softrnic_dev *sdev)
{
	struct ib_device *ibdev = &sdev->ibdev;

	sdev->wq = alloc_workqueue("softrnic_qp", WQ_UNBOUND | WQ_MEM_RECLAIM,
				   0);
	if (!sdev->wq)
		return -ENOMEM;
	xa_init_flags(&sdev->qp_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	sdev->qp_next = 0;
	atomic_set(&sdev->qp_count, 0);
	atomic_set(&sdev->cq_count, 0);
	atomic_set(&sdev->srq_count, 0);
	atomic_set(&sdev->cqn_next, 0);
	atomic_set(&sdev->srqn_next, 0);

	/*
	 * The SQ and RQ doorbells are the empty uverbs post_send and
	 * post_recv, which ib_core leaves out of the default command mask
	 * it sets at allocation.
	 */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_RECV);
	return 0;
}

void softrnic_queues_fini(struct softrnic_dev *sdev)
{
	WARN_ON(!xa_empty(&sdev->qp_xa));
	xa_destroy(&sdev->qp_xa);
	destroy_workqueue(sdev->wq);
}

const struct ib_device_ops softrnic_queue_ops = {
	.create_cq = softrnic_create_cq,
	.destroy_cq = softrnic_destroy_cq,
	.resize_cq = softrnic_resize_cq,
	.poll_cq = softrnic_poll_cq,
	.req_notify_cq = softrnic_req_notify_cq,

	.create_qp = softrnic_create_qp,
	.modify_qp = softrnic_modify_qp,
	.query_qp = softrnic_query_qp,
	.destroy_qp = softrnic_destroy_qp,
	.post_send = softrnic_post_send,
	.post_recv = softrnic_post_recv,

	.create_srq = softrnic_create_srq,
	.modify_srq = softrnic_modify_srq,
	.query_srq = softrnic_query_srq,
	.destroy_srq = softrnic_destroy_srq,
	.post_srq_recv = softrnic_post_srq_recv,

	.mmap = softrnic_mmap,
	.mmap_free = softrnic_mmap_free,

	INIT_RDMA_OBJ_SIZE(ib_cq, softrnic_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_qp, softrnic_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, softrnic_srq, ibsrq),
};
