// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The send queue: work requests into struct softrnic_sqe WQEs in the SQ ring.
 *
 * Pure ring work, no system calls: the QP (qp.cpp) holds the lock, asks
 * need_doorbell() after a successful post and rings the doorbell itself.
 * Two front ends write the same WQEs:
 *   - post(): an ibv_send_wr chain (ibv_post_send, ibv_bind_mw);
 *   - the wr_* builder behind ibv_qp_ex (ibv_wr_start ... ibv_wr_complete):
 *     each wr_<opcode>() takes a slot, the wr_set_*() calls fill it in, and
 *     wr_complete() publishes the batch, or drops it if any call failed.
 *     ATOMIC_WRITE (ibv_wr_atomic_write) and FLUSH (softrnicdv_wr_flush)
 *     exist only here: ibv_send_wr has no encoding for them.
 *
 * Encoding (softrnic-abi.h): opcode = IBV_WR_* (numerically the ABI's),
 * flags from send_flags (SIGNALED forced on with sq_sig_all), imm_data as
 * given (network order) or the rkey to invalidate in `ex`; RDMA, atomic,
 * UD or bind fields in the union; then num_sge SGEs or, with INLINE,
 * inline_len bytes of data.  INLINE only applies to opcodes that carry
 * outgoing data (SEND*, RDMA_WRITE*): for the others it is ignored, as the
 * kernel does for its own consumers.
 */
#ifndef SOFTRNIC_SEND_QUEUE_H
#define SOFTRNIC_SEND_QUEUE_H

#include <cstddef>
#include <cstdint>

#include "proto_ring.h"
#include "ring.h"
#include "verbs_provider_abi.h"

namespace softrnic
{

struct sq_limits {
	sr_qp_kind kind = SR_QP_RC;
	uint32_t max_sge = 0;	 /* per WQE, as create_qp reported it */
	uint32_t max_inline = 0; /* bytes, as create_qp reported it */
	bool sig_all = false;	 /* sq_sig_all: every WQE signaled */
};

/* IBV_SEND_* bits we understand; anything else is EINVAL. */
inline constexpr unsigned int sq_send_flags =
    IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_INLINE;

/* Does the opcode carry outgoing data that may be inline? */
bool sq_inline_opcode(uint8_t opcode) noexcept;

class send_queue
{
public:
	send_queue() noexcept = default;
	/* Limits beyond what a slot of this ring can hold are clamped. */
	send_queue(ring r, const sq_limits &lim) noexcept;

	const sq_limits &limits() const noexcept { return lim_; }
	const ring &get() const noexcept { return prod_.get(); }

	/*
	 * Writes and publishes a chain of work requests.  0, or an errno with
	 * *bad_wr the first request not posted (all before it are):
	 *   EINVAL  opcode not supported or not allowed on this QP type,
	 *           unknown send flag, too many SGEs, inline data longer than
	 *           max_inline, UD without an AH, bind without an MW;
	 *   ENOMEM  the ring is full.
	 */
	int post(ibv_send_wr *wr, ibv_send_wr **bad_wr) noexcept;

	/* After a post that published: must the doorbell ring (the kernel is
	 * not already draining the SQ)? */
	bool need_doorbell() const noexcept { return prod_.get().kernel_idle(); }

	/* ---- the ibv_qp_ex builder (caller holds the lock from wr_start to
	 * wr_complete/wr_abort) ---- */
	void wr_start() noexcept;
	/* Starts the next WQE; null if the batch already failed (then the
	 * caller just returns: the error is reported by wr_complete). */
	softrnic_sqe *wr_begin(uint8_t opcode, uint64_t wr_id, unsigned int send_flags) noexcept;
	void wr_set_sge_list(size_t num_sge, const ibv_sge *sg_list) noexcept;
	void wr_set_inline_list(size_t num_buf, const ibv_data_buf *buf_list) noexcept;
	void wr_set_ud(ibv_ah *ah, uint32_t remote_qpn, uint32_t remote_qkey) noexcept;
	/* ATOMIC_WRITE: the 8 bytes at value, copied now. */
	void wr_atomic_write(uint64_t wr_id, unsigned int send_flags, uint32_t rkey,
			     uint64_t remote_addr, const void *value) noexcept;
	/* FLUSH (softrnicdv_wr_flush): EINVAL for the batch unless
	 * sr_flush_wqe_valid(type, level, length). */
	void wr_flush(uint64_t wr_id, unsigned int send_flags, uint32_t rkey, uint64_t remote_addr,
		      uint64_t length, uint8_t type, uint8_t level) noexcept;
	/* Fails the batch with err (e.g. an opcode the QP was not created for). */
	void wr_fail(int err) noexcept { fail(err); }
	/* 0 and the batch published (possibly empty), or the first error and
	 * nothing of the batch posted. */
	int wr_complete() noexcept;
	void wr_abort() noexcept;
	/* Did the last wr_complete/post publish anything? */
	bool published() const noexcept { return published_; }

private:
	int encode(const ibv_send_wr &wr, void *slot) noexcept;
	void fail(int err) noexcept;

	ring_producer prod_;
	sq_limits lim_;

	/* builder state */
	uint32_t batch_start_ = 0;
	softrnic_sqe *cur_ = nullptr;
	int batch_err_ = 0;
	bool published_ = false;
};

/* The 8 header bits of a WQE from IBV_SEND_* flags. */
uint8_t sqe_flags(unsigned int send_flags, bool sig_all) noexcept;

} // namespace softrnic

#endif /* SOFTRNIC_SEND_QUEUE_H */
