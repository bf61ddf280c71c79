// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs: RC and UD (UD on RoCE only; the kernel refuses it on iWARP
 * and the provider passes its errno on).
 *
 * create_qp/create_qp_ex run EX_CREATE_QP and map the SQ ring and, unless
 * the QP is on an SRQ, the RQ ring from softrnic_create_qp_resp.  The caps
 * the kernel reports back (also copied into the caller's attr->cap) bound
 * what post_send accepts.  create_qp_ex installs the ibv_qp_ex builder
 * (ibv_wr_*) for the opcodes in send_ops_flags.
 *
 * Data path:
 *   post_send  EINVAL while the QP is in RESET (libibverbs' ibv_qp::state,
 *              as rxe); otherwise WQEs into the SQ ring (send_queue.h),
 *              prod published with
 *              release, then the doorbell test: a seq_cst fence and a look
 *              at the SQ's kflags; only if the kernel is not already
 *              draining the SQ (KERNEL_ACTIVE clear) one empty POST_SEND
 *              write() tells it to look.  In a busy stream the kernel is
 *              active and posting is a system-call-free memcpy.
 *   post_recv  WQEs into the RQ ring, publish: no system call.  The one
 *              exception is a QP in the error state (the RQ's kflags has
 *              ERROR): the kernel flushes receive WQEs only when something
 *              tells it, so the provider then sends an empty POST_RECV and
 *              the WRs complete with IBV_WC_WR_FLUSH_ERR like the rest.
 * Each queue has its own mutex, so one thread may post sends while another
 * posts receives.  A failed doorbell write (the device is gone) is reported
 * as that errno with *bad_wr the head of the chain, as libibverbs' own
 * ibv_cmd_post_send() reports a failed write.
 */
#ifndef SOFTRNIC_QP_H
#define SOFTRNIC_QP_H

#include <cstdint>
#include <mutex>

#include "object.h"
#include "recv_queue.h"
#include "send_queue.h"
#include "verbs_provider_abi.h"

namespace softrnic
{

/* IBV_QP_EX_WITH_FLUSH of rdma-core >= 45 (not in v44's header): enables
 * softrnicdv_wr_flush(). */
inline constexpr uint64_t qp_ex_with_flush = uint64_t{1} << 11;

/* send_ops_flags create_qp_ex accepts, per QP type. */
inline constexpr uint64_t qp_rc_send_ops =
    IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND |
    IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
    IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW |
    IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_ATOMIC_WRITE | qp_ex_with_flush;
inline constexpr uint64_t qp_ud_send_ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;

class qp final : public verbs_object<qp, verbs_qp>
{
public:
	qp() noexcept = default;

	static qp *from_qp(ibv_qp *p) noexcept { return from_ibv(reinterpret_cast<verbs_qp *>(p)); }
	static qp *from_qp_ex(ibv_qp_ex *p) noexcept
	{
		return from_ibv(reinterpret_cast<verbs_qp *>(p));
	}
	ibv_qp *qp_ptr() noexcept { return &ibv()->qp; }

	/* Takes the queues (rq empty for a QP on an SRQ). */
	void attach(send_queue sq, recv_queue rq) noexcept;
	/* Installs the ibv_qp_ex builder for these opcodes and makes
	 * ibv_qp_to_qp_ex() work. */
	void enable_qp_ex(uint64_t send_ops_flags) noexcept;

	const send_queue &sq() const noexcept { return sq_; }
	const recv_queue &rq() const noexcept { return rq_; }

	int post_send(ibv_send_wr *wr, ibv_send_wr **bad_wr) noexcept;
	int post_recv(ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept;

	/* the ibv_qp_ex builder: lock held from start to complete/abort */
	void wr_start() noexcept;
	int wr_complete() noexcept;
	void wr_abort() noexcept;
	send_queue &builder() noexcept { return sq_; }
	/* Was create_qp_ex given qp_ex_with_flush? */
	bool flush_enabled() const noexcept { return flush_enabled_; }
	/* Is this ibv_qp_ex one of ours, with the builder installed? */
	static bool owns(const ibv_qp_ex *x) noexcept;

private:
	/* The empty POST_SEND / POST_RECV write(); 0 or errno. */
	int doorbell(uint32_t command) noexcept;

	std::mutex sq_lock_;
	send_queue sq_;
	std::mutex rq_lock_;
	recv_queue rq_;
	bool flush_enabled_ = false;
};

ibv_qp *create_qp(ibv_pd *pd, ibv_qp_init_attr *attr) noexcept;
ibv_qp *create_qp_ex(ibv_context *ctx, ibv_qp_init_attr_ex *attr) noexcept;
int modify_qp(ibv_qp *ibqp, ibv_qp_attr *attr, int attr_mask) noexcept;
int query_qp(ibv_qp *ibqp, ibv_qp_attr *attr, int attr_mask, ibv_qp_init_attr *init_attr) noexcept;
int destroy_qp(ibv_qp *ibqp) noexcept;
int post_send(ibv_qp *ibqp, ibv_send_wr *wr, ibv_send_wr **bad_wr) noexcept;
int post_recv(ibv_qp *ibqp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept;
/* softrnicdv_wr_flush() (dv.cpp exports it): nothing for a QP not ours,
 * EINVAL for the batch if the QP was not created with qp_ex_with_flush. */
void dv_wr_flush(ibv_qp_ex *x, uint32_t rkey, uint64_t remote_addr, uint64_t len, uint8_t type,
		 uint8_t level) noexcept;

} // namespace softrnic

#endif /* SOFTRNIC_QP_H */
