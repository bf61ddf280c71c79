// SPDX-License-Identifier: GPL-2.0
/* Verbs ops for CQs, QPs, SRQs and their shared rings. */
#include "queue.h"

/*
 * Per-device queue state, set up once ib_core has registered the device
 * and before any client (ib_mad, uverbs, ...) can create a queue or, for
 * uverbs, build its command table.  It
 * needs no teardown: ib_core destroys every QP, CQ and SRQ before it lets
 * the device go, which leaves the QPN table empty.
 */
int softrnic_queues_enable(struct ib_device *ibdev)
{
	struct softrnic_dev *sdev = to_sdev(ibdev);

	xa_init_flags(&sdev->qp_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	sdev->qp_next = 0;
	atomic_set(&sdev->qp_count, 0);
	atomic_set(&sdev->cq_count, 0);
	atomic_set(&sdev->srq_count, 0);
	atomic_set(&sdev->cqn_next, 0);
	atomic_set(&sdev->srqn_next, 0);

	/*
	 * The SQ and RQ doorbells are the empty uverbs post_send and
	 * post_recv, which ib_core leaves out of the default command mask.
	 * Clients (uverbs among them) are added after this returns.
	 */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_RECV);
	return 0;
}

const struct ib_device_ops softrnic_queue_ops = {
	.enable_driver = softrnic_queues_enable,

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
