// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues (basic type only).  The SRQ ring is produced like a
 * QP's RQ (recv_queue.h) and post_srq_recv makes no system call.  The kernel
 * owns the limit event (IBV_EVENT_SRQ_LIMIT_REACHED through the async fd)
 * and decides what modify_srq can change; the provider passes the command on.
 */
#ifndef SOFTRNIC_SRQ_H
#define SOFTRNIC_SRQ_H

#include <cstdint>
#include <mutex>

#include "object.h"
#include "recv_queue.h"
#include "verbs_provider_abi.h"

namespace softrnic
{

class srq final : public verbs_object<srq, verbs_srq>
{
public:
	srq() noexcept = default;

	static srq *from_srq(ibv_srq *p) noexcept
	{
		return from_ibv(reinterpret_cast<verbs_srq *>(p));
	}
	ibv_srq *srq_ptr() noexcept { return &ibv()->srq; }

	void attach(recv_queue rq, uint32_t srqn) noexcept;
	uint32_t srqn() const noexcept { return srqn_; }
	const recv_queue &rq() const noexcept { return rq_; }

	int post(ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept;

private:
	std::mutex lock_;
	recv_queue rq_;
	uint32_t srqn_ = 0;
};

ibv_srq *create_srq(ibv_pd *pd, ibv_srq_init_attr *attr) noexcept;
ibv_srq *create_srq_ex(ibv_context *ctx, ibv_srq_init_attr_ex *attr) noexcept;
int modify_srq(ibv_srq *ibsrq, ibv_srq_attr *attr, int attr_mask) noexcept;
int query_srq(ibv_srq *ibsrq, ibv_srq_attr *attr) noexcept;
int destroy_srq(ibv_srq *ibsrq) noexcept;
int post_srq_recv(ibv_srq *ibsrq, ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept;

} // namespace softrnic

#endif /* SOFTRNIC_SRQ_H */
