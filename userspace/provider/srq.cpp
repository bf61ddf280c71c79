// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "srq.h"

#include <cerrno>
#include <pthread.h>
#include <utility>

#include "entry.h"
#include "undo.h"
#include "uverbs_cmd.h"

namespace softrnic
{

void srq::attach(recv_queue rq, uint32_t srqn) noexcept
{
	rq_ = std::move(rq);
	srqn_ = srqn;
}

int srq::post(ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept
{
	std::lock_guard guard(lock_);
	return rq_.post(wr, bad_wr);
}

namespace
{

ibv_srq *create_basic_srq(ibv_pd *pd, ibv_srq_init_attr *attr)
{
	auto obj = srq::make();
	struct ibv_create_srq req {
	};
	cmd::create_srq_resp resp{};
	const int ret = ibv_cmd_create_srq(pd, obj->srq_ptr(), attr, &req, sizeof(req), resp.core(),
					   sizeof(resp));
	if (ret) {
		errno = ret;
		return nullptr;
	}
	undo destroy([&] { ibv_cmd_destroy_srq(obj->srq_ptr()); });
	recv_queue rq(ring::map(pd->context->cmd_fd, resp.drv.srq, sizeof(softrnic_rqe)),
		      attr->attr.max_sge);
	attr->attr.max_sge = rq.max_sge();
	obj->attach(std::move(rq), resp.drv.srqn);
	obj->ibv()->srq_type = IBV_SRQT_BASIC;
	destroy.dismiss();
	return &srq::release(std::move(obj))->srq;
}

} // namespace

ibv_srq *create_srq(ibv_pd *pd, ibv_srq_init_attr *attr) noexcept
{
	return guard_ptr([&] { return create_basic_srq(pd, attr); });
}

ibv_srq *create_srq_ex(ibv_context *, ibv_srq_init_attr_ex *attr) noexcept
{
	return guard_ptr([&]() -> ibv_srq * {
		/* libibverbs sends plain basic SRQs to create_srq itself; what
		 * reaches us asks for more (XRC, tag matching, a CQ) */
		const uint32_t mask = attr->comp_mask;
		if (!(mask & IBV_SRQ_INIT_ATTR_PD) ||
		    (mask & ~(IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE)) ||
		    ((mask & IBV_SRQ_INIT_ATTR_TYPE) && attr->srq_type != IBV_SRQT_BASIC)) {
			errno = EOPNOTSUPP;
			return nullptr;
		}
		/* ibv_srq_init_attr_ex starts with an ibv_srq_init_attr */
		ibv_srq_init_attr base{attr->srq_context, attr->attr};
		ibv_srq *s = create_basic_srq(attr->pd, &base);
		if (!s)
			return nullptr;
		attr->attr = base.attr;
		/* what ibv_create_srq() does after the legacy op */
		s->srq_context = attr->srq_context;
		s->pd = attr->pd;
		s->events_completed = 0;
		return s;
	});
}

int modify_srq(ibv_srq *ibsrq, ibv_srq_attr *attr, int attr_mask) noexcept
{
	return guard_errno([&] {
		struct ibv_modify_srq req {
		};
		return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &req, sizeof(req));
	});
}

int query_srq(ibv_srq *ibsrq, ibv_srq_attr *attr) noexcept
{
	return guard_errno([&] {
		struct ibv_query_srq req {
		};
		return ibv_cmd_query_srq(ibsrq, attr, &req, sizeof(req));
	});
}

int destroy_srq(ibv_srq *ibsrq) noexcept
{
	return guard_errno([&] {
		const int ret = ibv_cmd_destroy_srq(ibsrq);
		if (ret)
			return ret;
		srq::reclaim(reinterpret_cast<verbs_srq *>(ibsrq));
		return 0;
	});
}

int post_srq_recv(ibv_srq *ibsrq, ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept
{
	return srq::from_srq(ibsrq)->post(wr, bad_wr);
}

} // namespace softrnic
