// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues.
 *
 * The kernel produces struct softrnic_cqe entries into the CQ ring; the
 * provider consumes them from the mapping: ibv_poll_cq and the ibv_cq_ex
 * poll API (start_poll/next_poll/end_poll and the read_* accessors for the
 * standard wc_flags) make no system call.  Neither does ibv_req_notify_cq:
 * it sets SOFTRNIC_CQ_ARM_NEXT or _SOLICITED in the ring's uflags, and the
 * kernel, when it produces a CQE that satisfies the request, takes it and
 * signals the CQ's completion channel, which is all ibv_get_cq_event()
 * waits for (libibverbs reads the event from the channel fd and acks it
 * through the core, as for any provider).
 *
 * Overflow.  The kernel never overwrites a CQE: when the ring is full it
 * puts the CQ in the error state (SOFTRNIC_KFLAG_ERROR), raises
 * IBV_EVENT_CQ_ERR and drops further completions.  The CQEs already in the
 * ring are still valid, so polling returns them first; once they are
 * consumed, ibv_poll_cq returns -1 (errno EIO) and ibv_start_poll /
 * ibv_next_poll return EIO, for good: like a hardware CQ in error, the CQ
 * can only be destroyed.  A producer counter no honest kernel writes is
 * treated the same way.
 *
 * A QP moved to RESET leaves no CQEs behind (purge_qp, from modify_qp):
 * the completions of its previous life, flushed ones included, would
 * otherwise be polled as if they belonged to the WRs posted after it is
 * brought up again.  ConnectX does the same; receive completions of a QP
 * on an SRQ stay, since their WRs were the SRQ's.
 *
 * Thread safety: one mutex per CQ, held by poll_cq, from start_poll to
 * end_poll, by resize_cq (which replaces the mapping) and by purge_qp.
 */
#ifndef SOFTRNIC_CQ_H
#define SOFTRNIC_CQ_H

#include <cstdint>
#include <mutex>

#include "object.h"
#include "ring.h"
#include "verbs_provider_abi.h"

namespace softrnic
{

/* wc_flags create_cq_ex accepts: the standard ones. */
inline constexpr uint64_t cq_supported_wc_flags = IBV_WC_STANDARD_FLAGS;

/* IBV_WC_* flags of a CQE. */
unsigned int cqe_wc_flags(const softrnic_cqe &cqe) noexcept;
/* A CQE as the ibv_wc that ibv_poll_cq returns. */
void cqe_to_wc(const softrnic_cqe &cqe, ibv_wc &wc) noexcept;

class cq final : public verbs_object<cq, verbs_cq>
{
public:
	cq() noexcept = default;

	static cq *from_cq(ibv_cq *p) noexcept { return from_ibv(reinterpret_cast<verbs_cq *>(p)); }
	static cq *from_cq_ex(ibv_cq_ex *p) noexcept
	{
		return from_ibv(reinterpret_cast<verbs_cq *>(p));
	}
	ibv_cq *cq_ptr() noexcept { return &ibv()->cq; }
	ibv_cq_ex *cq_ex_ptr() noexcept { return &ibv()->cq_ex; }

	/* Takes the ring and installs the ibv_cq_ex poll functions for the
	 * given wc_flags (a subset of cq_supported_wc_flags). */
	void attach(ring r, uint32_t cqn, uint64_t wc_flags) noexcept;
	uint32_t cqn() const noexcept { return cqn_; }

	/* ibv_poll_cq: entries polled, or -1 with errno EIO (see above). */
	int poll(int num_entries, ibv_wc *wc) noexcept;
	/* The ibv_cq_ex poll API. */
	int start_poll(const ibv_poll_cq_attr *attr) noexcept;
	int next_poll() noexcept;
	void end_poll() noexcept;
	const softrnic_cqe &current() const noexcept { return cur_; }

	/* ibv_req_notify_cq */
	void arm(bool solicited_only) noexcept;
	/* ibv_resize_cq: the command, then the new ring's mapping. */
	int resize(int cqe);
	/* A QP went to RESET: remove its unpolled CQEs (except receive
	 * completions if keep_recv: those of an SRQ's WRs); returns how
	 * many went. */
	uint32_t purge_qp(uint32_t qp_num, bool keep_recv) noexcept;

private:
	/* 0 (cur_ filled), ENOENT (nothing new) or EIO (CQ in error). */
	int fetch() noexcept;

	std::mutex lock_;
	ring_consumer ring_;
	softrnic_cqe cur_{};
	uint32_t cqn_ = 0;
	bool broken_ = false; /* resize lost the ring: nothing to poll */
};

ibv_cq *create_cq(ibv_context *ctx, int cqe, ibv_comp_channel *channel, int comp_vector) noexcept;
ibv_cq_ex *create_cq_ex(ibv_context *ctx, ibv_cq_init_attr_ex *attr) noexcept;
int poll_cq(ibv_cq *ibcq, int num_entries, ibv_wc *wc) noexcept;
int req_notify_cq(ibv_cq *ibcq, int solicited_only) noexcept;
int resize_cq(ibv_cq *ibcq, int cqe) noexcept;
int destroy_cq(ibv_cq *ibcq) noexcept;

} // namespace softrnic

#endif /* SOFTRNIC_CQ_H */
