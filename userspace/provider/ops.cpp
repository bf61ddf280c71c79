// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The verbs this provider implements, gathered in one table.  Slots left
 * null are answered by libibverbs itself (EOPNOTSUPP/ENOSYS).  A new verb
 * is one assignment here, in any order.
 */
#include "ah.h"
#include "context.h"
#include "cq.h"
#include "mcast.h"
#include "mr.h"
#include "pd.h"
#include "qp.h"
#include "srq.h"

namespace softrnic
{

namespace
{

constexpr verbs_context_ops make_context_ops() noexcept
{
	verbs_context_ops ops{};
	ops.free_context = free_context;
	ops.query_device_ex = query_device_ex;
	ops.query_port = query_port;
	ops.alloc_pd = alloc_pd;
	ops.dealloc_pd = dealloc_pd;

	ops.create_cq = create_cq;
	ops.create_cq_ex = create_cq_ex;
	ops.poll_cq = poll_cq;
	ops.req_notify_cq = req_notify_cq;
	ops.resize_cq = resize_cq;
	ops.destroy_cq = destroy_cq;
	/* cq_event, async_event: nothing to do, the core delivers and acks
	 * completion and async events (CQ_ERR, QP_FATAL, SRQ_LIMIT_REACHED) */

	ops.create_qp = create_qp;
	ops.create_qp_ex = create_qp_ex;
	ops.modify_qp = modify_qp;
	ops.query_qp = query_qp;
	ops.destroy_qp = destroy_qp;
	ops.post_send = post_send;
	ops.post_recv = post_recv;

	ops.create_srq = create_srq;
	ops.create_srq_ex = create_srq_ex;
	ops.modify_srq = modify_srq;
	ops.query_srq = query_srq;
	ops.destroy_srq = destroy_srq;
	ops.post_srq_recv = post_srq_recv;

	ops.reg_mr = reg_mr;
	ops.rereg_mr = rereg_mr;
	ops.dereg_mr = dereg_mr;
	ops.alloc_mw = alloc_mw;
	ops.dealloc_mw = dealloc_mw;
	ops.bind_mw = bind_mw;

	ops.create_ah = create_ah;
	ops.destroy_ah = destroy_ah;
	ops.attach_mcast = attach_mcast;
	ops.detach_mcast = detach_mcast;
	return ops;
}

} // namespace

constinit const verbs_context_ops context_ops = make_context_ops();

} // namespace softrnic
