// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "send_queue.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <utility>

#include "ah.h"

namespace softrnic
{

/* The ABI's opcodes are the IBV_WR_* values, and its SGE is an ibv_sge. */
static_assert(int{SOFTRNIC_WR_RDMA_WRITE} == int{IBV_WR_RDMA_WRITE});
static_assert(int{SOFTRNIC_WR_RDMA_WRITE_WITH_IMM} == int{IBV_WR_RDMA_WRITE_WITH_IMM});
static_assert(int{SOFTRNIC_WR_SEND} == int{IBV_WR_SEND});
static_assert(int{SOFTRNIC_WR_SEND_WITH_IMM} == int{IBV_WR_SEND_WITH_IMM});
static_assert(int{SOFTRNIC_WR_RDMA_READ} == int{IBV_WR_RDMA_READ});
static_assert(int{SOFTRNIC_WR_ATOMIC_CMP_AND_SWP} == int{IBV_WR_ATOMIC_CMP_AND_SWP});
static_assert(int{SOFTRNIC_WR_ATOMIC_FETCH_AND_ADD} == int{IBV_WR_ATOMIC_FETCH_AND_ADD});
static_assert(int{SOFTRNIC_WR_LOCAL_INV} == int{IBV_WR_LOCAL_INV});
static_assert(int{SOFTRNIC_WR_BIND_MW} == int{IBV_WR_BIND_MW});
static_assert(int{SOFTRNIC_WR_SEND_WITH_INV} == int{IBV_WR_SEND_WITH_INV});
static_assert(int{SOFTRNIC_WR_ATOMIC_WRITE} == int{IBV_WR_ATOMIC_WRITE});
/* ... and so the kernel's IB_UVERBS_WR_* (what softrnic-abi.h promises) */
static_assert(int{IBV_WR_SEND} == int{IB_UVERBS_WR_SEND});
static_assert(int{IBV_WR_RDMA_READ} == int{IB_UVERBS_WR_RDMA_READ});
static_assert(int{IBV_WR_ATOMIC_FETCH_AND_ADD} == int{IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD});
static_assert(int{IBV_WR_LOCAL_INV} == int{IB_UVERBS_WR_LOCAL_INV});
static_assert(int{IBV_WR_BIND_MW} == int{IB_UVERBS_WR_BIND_MW});
static_assert(int{IBV_WR_SEND_WITH_INV} == int{IB_UVERBS_WR_SEND_WITH_INV});
static_assert(sizeof(softrnic_sqe) == 64 && sizeof(softrnic_sge) == sizeof(ibv_sge));
static_assert(offsetof(softrnic_sge, addr) == offsetof(ibv_sge, addr));
static_assert(offsetof(softrnic_sge, length) == offsetof(ibv_sge, length));
static_assert(offsetof(softrnic_sge, lkey) == offsetof(ibv_sge, lkey));
/* UD and RDMA WQEs keep inline_len in the same place */
static_assert(offsetof(softrnic_sqe, ud.inline_len) == offsetof(softrnic_sqe, rdma.inline_len));

namespace
{

softrnic_sge *sges_of(softrnic_sqe *h) noexcept
{
	return reinterpret_cast<softrnic_sge *>(h + 1);
}

/* Opcodes a process may post: what sr_opcode_allowed() accepts, minus the
 * ones ibv_send_wr has no encoding for (ATOMIC_WRITE's data, FLUSH's type
 * and level): those only come from the builder. */
bool sq_opcode_ok(uint8_t opcode, sr_qp_kind kind, bool builder = false) noexcept
{
	if (!builder && (opcode == SOFTRNIC_WR_FLUSH || opcode == SOFTRNIC_WR_ATOMIC_WRITE))
		return false;
	return sr_opcode_allowed(opcode, kind);
}

int put_sges(softrnic_sqe *h, const ibv_sge *sg_list, size_t num_sge, uint32_t max_sge) noexcept
{
	if (num_sge > max_sge)
		return EINVAL;
	if (num_sge)
		std::memcpy(sges_of(h), sg_list, num_sge * sizeof(softrnic_sge));
	h->num_sge = static_cast<uint16_t>(num_sge);
	return 0;
}

/* Gathers buffer i = get(i) -> {address, length} into the slot. */
template <typename Get>
int put_inline(softrnic_sqe *h, size_t n, uint32_t max_inline, sr_qp_kind kind, Get get) noexcept
{
	auto *dst = reinterpret_cast<unsigned char *>(sges_of(h));
	size_t total = 0;

	for (size_t i = 0; i < n; i++) {
		const auto [src, len] = get(i);
		if (len > max_inline - total)
			return EINVAL;
		if (len)
			std::memcpy(dst + total, src, len);
		total += len;
	}
	h->flags |= SOFTRNIC_WQE_F_INLINE;
	h->num_sge = 0;
	if (kind == SR_QP_UD)
		h->ud.inline_len = static_cast<uint32_t>(total);
	else
		h->rdma.inline_len = static_cast<uint32_t>(total);
	return 0;
}

} // namespace

bool sq_inline_opcode(uint8_t opcode) noexcept
{
	switch (opcode) {
	case SOFTRNIC_WR_SEND:
	case SOFTRNIC_WR_SEND_WITH_IMM:
	case SOFTRNIC_WR_SEND_WITH_INV:
	case SOFTRNIC_WR_RDMA_WRITE:
	case SOFTRNIC_WR_RDMA_WRITE_WITH_IMM:
		return true;
	default:
		return false;
	}
}

uint8_t sqe_flags(unsigned int send_flags, bool sig_all) noexcept
{
	uint8_t f = 0;

	if ((send_flags & IBV_SEND_SIGNALED) || sig_all)
		f |= SOFTRNIC_WQE_F_SIGNALED;
	if (send_flags & IBV_SEND_SOLICITED)
		f |= SOFTRNIC_WQE_F_SOLICITED;
	if (send_flags & IBV_SEND_FENCE)
		f |= SOFTRNIC_WQE_F_FENCE;
	return f;
}

send_queue::send_queue(ring r, const sq_limits &lim) noexcept : prod_(std::move(r)), lim_(lim)
{
	const uint32_t slot = prod_.get().slot_size();
	const uint32_t room = slot > sizeof(softrnic_sqe) ? slot - sizeof(softrnic_sqe) : 0;

	lim_.max_sge = std::min<uint32_t>(lim_.max_sge, room / sizeof(softrnic_sge));
	lim_.max_inline = std::min(lim_.max_inline, room);
}

int send_queue::encode(const ibv_send_wr &wr, void *slot) noexcept
{
	if (wr.opcode < 0 || wr.opcode > 0xff)
		return EINVAL;
	const auto opcode = static_cast<uint8_t>(wr.opcode);
	if (!sq_opcode_ok(opcode, lim_.kind) || (wr.send_flags & ~sq_send_flags) || wr.num_sge < 0)
		return EINVAL;

	auto *h = new (slot) softrnic_sqe{};
	h->wr_id = wr.wr_id;
	h->opcode = opcode;
	h->flags = sqe_flags(wr.send_flags, lim_.sig_all);

	switch (opcode) {
	case SOFTRNIC_WR_SEND:
		break;
	case SOFTRNIC_WR_SEND_WITH_IMM:
		h->ex = wr.imm_data;
		break;
	case SOFTRNIC_WR_SEND_WITH_INV:
		h->ex = wr.invalidate_rkey;
		break;
	case SOFTRNIC_WR_RDMA_WRITE_WITH_IMM:
		h->ex = wr.imm_data;
		[[fallthrough]];
	case SOFTRNIC_WR_RDMA_WRITE:
	case SOFTRNIC_WR_RDMA_READ:
		h->rdma.remote_addr = wr.wr.rdma.remote_addr;
		h->rdma.rkey = wr.wr.rdma.rkey;
		break;
	case SOFTRNIC_WR_ATOMIC_CMP_AND_SWP:
	case SOFTRNIC_WR_ATOMIC_FETCH_AND_ADD:
		h->atomic.remote_addr = wr.wr.atomic.remote_addr;
		h->atomic.compare_add = wr.wr.atomic.compare_add;
		h->atomic.swap = wr.wr.atomic.swap;
		h->atomic.rkey = wr.wr.atomic.rkey;
		break;
	case SOFTRNIC_WR_LOCAL_INV:
		h->ex = wr.invalidate_rkey;
		return 0; /* no data */
	case SOFTRNIC_WR_BIND_MW: {
		const ibv_mw_bind_info &b = wr.bind_mw.bind_info;
		if (!wr.bind_mw.mw)
			return EINVAL;
		h->bind.addr = b.addr;
		h->bind.length = b.length;
		h->bind.mw_rkey = wr.bind_mw.mw->rkey;
		h->bind.new_rkey = wr.bind_mw.rkey;
		h->bind.mr_lkey = b.mr ? b.mr->lkey : 0;
		h->bind.access = b.mw_access_flags;
		return 0; /* no data */
	}
	default:
		return EINVAL;
	}

	if (lim_.kind == SR_QP_UD) {
		if (!wr.wr.ud.ah)
			return EINVAL;
		h->ud.ah_num = ah::from_ibv(wr.wr.ud.ah)->ah_num();
		h->ud.remote_qpn = wr.wr.ud.remote_qpn;
		h->ud.remote_qkey = wr.wr.ud.remote_qkey;
	}

	const auto n = static_cast<size_t>(wr.num_sge);
	if ((wr.send_flags & IBV_SEND_INLINE) && sq_inline_opcode(opcode))
		return put_inline(h, n, lim_.max_inline, lim_.kind, [&](size_t i) {
			return std::pair(reinterpret_cast<const void *>(wr.sg_list[i].addr),
					 size_t{wr.sg_list[i].length});
		});
	return put_sges(h, wr.sg_list, n, lim_.max_sge);
}

int send_queue::post(ibv_send_wr *wr, ibv_send_wr **bad_wr) noexcept
{
	int err = 0;

	for (; wr; wr = wr->next) {
		void *slot = prod_.reserve();
		if (!slot) {
			err = ENOMEM;
			break;
		}
		err = encode(*wr, slot);
		if (err)
			break;
		prod_.commit();
	}
	published_ = prod_.dirty();
	prod_.publish();
	if (err)
		*bad_wr = wr;
	return err;
}

/* ----------------------------------------------------------------- builder */

void send_queue::wr_start() noexcept
{
	batch_start_ = prod_.prod();
	cur_ = nullptr;
	batch_err_ = 0;
}

void send_queue::fail(int err) noexcept
{
	if (!batch_err_)
		batch_err_ = err;
	cur_ = nullptr;
}

softrnic_sqe *send_queue::wr_begin(uint8_t opcode, uint64_t wr_id, unsigned int send_flags) noexcept
{
	if (batch_err_)
		return nullptr;
	if (!sq_opcode_ok(opcode, lim_.kind, true) || (send_flags & ~sq_send_flags)) {
		fail(EINVAL);
		return nullptr;
	}
	void *slot = prod_.reserve();
	if (!slot) {
		fail(ENOMEM);
		return nullptr;
	}
	cur_ = new (slot) softrnic_sqe{};
	cur_->wr_id = wr_id;
	cur_->opcode = opcode;
	/* inline data is asked for by wr_set_inline_data*, not by the flag */
	cur_->flags = sqe_flags(send_flags, lim_.sig_all);
	prod_.commit();
	return cur_;
}

void send_queue::wr_set_sge_list(size_t num_sge, const ibv_sge *sg_list) noexcept
{
	if (!cur_)
		return;
	if (cur_->opcode == SOFTRNIC_WR_LOCAL_INV || cur_->opcode == SOFTRNIC_WR_BIND_MW ||
	    cur_->opcode == SOFTRNIC_WR_ATOMIC_WRITE || cur_->opcode == SOFTRNIC_WR_FLUSH)
		return; /* carry no SGEs */
	const int err = put_sges(cur_, sg_list, num_sge, lim_.max_sge);
	if (err)
		fail(err);
}

void send_queue::wr_set_inline_list(size_t num_buf, const ibv_data_buf *buf_list) noexcept
{
	if (!cur_)
		return;
	if (!sq_inline_opcode(cur_->opcode)) {
		fail(EINVAL);
		return;
	}
	const int err = put_inline(cur_, num_buf, lim_.max_inline, lim_.kind, [&](size_t i) {
		return std::pair(static_cast<const void *>(buf_list[i].addr), buf_list[i].length);
	});
	if (err)
		fail(err);
}

void send_queue::wr_set_ud(ibv_ah *ah_ptr, uint32_t remote_qpn, uint32_t remote_qkey) noexcept
{
	if (!cur_)
		return;
	if (lim_.kind != SR_QP_UD || !ah_ptr) {
		fail(EINVAL);
		return;
	}
	cur_->ud.ah_num = ah::from_ibv(ah_ptr)->ah_num();
	cur_->ud.remote_qpn = remote_qpn;
	cur_->ud.remote_qkey = remote_qkey;
}

void send_queue::wr_atomic_write(uint64_t wr_id, unsigned int send_flags, uint32_t rkey,
				 uint64_t remote_addr, const void *value) noexcept
{
	if (!value) {
		fail(EINVAL);
		return;
	}
	softrnic_sqe *h = wr_begin(SOFTRNIC_WR_ATOMIC_WRITE, wr_id, send_flags);
	if (!h)
		return;
	h->atomic.remote_addr = remote_addr;
	h->atomic.rkey = rkey;
	std::memcpy(&h->atomic.swap, value, sizeof(h->atomic.swap)); /* memory order */
}

void send_queue::wr_flush(uint64_t wr_id, unsigned int send_flags, uint32_t rkey,
			  uint64_t remote_addr, uint64_t length, uint8_t type,
			  uint8_t level) noexcept
{
	if (!sr_flush_wqe_valid(type, level, length)) {
		fail(EINVAL);
		return;
	}
	softrnic_sqe *h = wr_begin(SOFTRNIC_WR_FLUSH, wr_id, send_flags);
	if (!h)
		return;
	h->flush.remote_addr = remote_addr;
	h->flush.length = length;
	h->flush.rkey = rkey;
	h->flush.type = type;
	h->flush.level = level;
}

int send_queue::wr_complete() noexcept
{
	const int err = batch_err_;

	if (err)
		prod_.rewind(batch_start_);
	published_ = prod_.dirty();
	prod_.publish();
	cur_ = nullptr;
	batch_err_ = 0;
	return err;
}

void send_queue::wr_abort() noexcept
{
	prod_.rewind(batch_start_);
	published_ = false;
	cur_ = nullptr;
	batch_err_ = 0;
}

} // namespace softrnic
