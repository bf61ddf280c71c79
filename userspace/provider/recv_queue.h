// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Receive queues: ibv_recv_wr into struct softrnic_rqe WQEs (header, then
 * num_sge SGEs) in a QP's RQ ring or an SRQ ring.  Pure ring work, never a
 * system call; the owner holds the lock.
 */
#ifndef SOFTRNIC_RECV_QUEUE_H
#define SOFTRNIC_RECV_QUEUE_H

#include <cstdint>

#include "ring.h"
#include "verbs_provider_abi.h"

namespace softrnic
{

class recv_queue
{
public:
	recv_queue() noexcept = default;
	/* max_sge beyond what a slot holds is clamped */
	recv_queue(ring r, uint32_t max_sge) noexcept;

	explicit operator bool() const noexcept { return static_cast<bool>(prod_); }
	const ring &get() const noexcept { return prod_.get(); }
	uint32_t max_sge() const noexcept { return max_sge_; }

	/*
	 * Writes and publishes a chain.  0, or an errno with *bad_wr the first
	 * request not posted: EINVAL (more SGEs than max_sge), ENOMEM (full).
	 */
	int post(ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept;

	/* After a post: is the queue in the error state (RQ of a QP in ERR:
	 * the kernel flushes what we posted only when told, see qp.cpp)? */
	bool kernel_error() const noexcept { return prod_.get().kernel_error(); }

private:
	ring_producer prod_;
	uint32_t max_sge_ = 0;
};

} // namespace softrnic

#endif /* SOFTRNIC_RECV_QUEUE_H */
