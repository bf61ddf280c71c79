// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "cq.h"

#include <cerrno>
#include <cstring>
#include <utility>

#include "entry.h"
#include "undo.h"
#include "uverbs_cmd.h"

namespace softrnic
{

/* The ABI's CQE opcodes and flags are the IBV_WC_* values. */
static_assert(int{SOFTRNIC_WC_SEND} == int{IBV_WC_SEND});
static_assert(int{SOFTRNIC_WC_RDMA_WRITE} == int{IBV_WC_RDMA_WRITE});
static_assert(int{SOFTRNIC_WC_RDMA_READ} == int{IBV_WC_RDMA_READ});
static_assert(int{SOFTRNIC_WC_COMP_SWAP} == int{IBV_WC_COMP_SWAP});
static_assert(int{SOFTRNIC_WC_FETCH_ADD} == int{IBV_WC_FETCH_ADD});
static_assert(int{SOFTRNIC_WC_BIND_MW} == int{IBV_WC_BIND_MW});
static_assert(int{SOFTRNIC_WC_LOCAL_INV} == int{IBV_WC_LOCAL_INV});
static_assert(int{SOFTRNIC_WC_ATOMIC_WRITE} == int{IBV_WC_ATOMIC_WRITE});
static_assert(int{SOFTRNIC_WC_RECV} == int{IBV_WC_RECV});
static_assert(int{SOFTRNIC_WC_RECV_RDMA_WITH_IMM} == int{IBV_WC_RECV_RDMA_WITH_IMM});
static_assert(int{SOFTRNIC_WC_F_GRH} == int{IBV_WC_GRH});
static_assert(int{SOFTRNIC_WC_F_WITH_IMM} == int{IBV_WC_WITH_IMM});
static_assert(int{SOFTRNIC_WC_F_WITH_INV} == int{IBV_WC_WITH_INV});
static_assert(sizeof(softrnic_cqe) <= SOFTRNIC_SLOT_ALIGN);

unsigned int cqe_wc_flags(const softrnic_cqe &cqe) noexcept
{
	return cqe.wc_flags & (SOFTRNIC_WC_F_GRH | SOFTRNIC_WC_F_WITH_IMM | SOFTRNIC_WC_F_WITH_INV);
}

void cqe_to_wc(const softrnic_cqe &cqe, ibv_wc &wc) noexcept
{
	wc.wr_id = cqe.wr_id;
	wc.status = static_cast<ibv_wc_status>(cqe.status);
	wc.opcode = static_cast<ibv_wc_opcode>(cqe.opcode);
	wc.vendor_err = cqe.vendor_err;
	wc.byte_len = cqe.byte_len;
	/* imm_data is in network order already; an invalidated rkey is a
	 * plain number (the other member of the same union) */
	wc.imm_data = cqe.ex;
	wc.qp_num = cqe.qp_num;
	wc.src_qp = cqe.src_qp;
	wc.wc_flags = cqe_wc_flags(cqe);
	wc.pkey_index = cqe.pkey_index;
	wc.slid = 0; /* Ethernet ports have no LIDs */
	wc.sl = cqe.sl;
	wc.dlid_path_bits = 0;
}

/* ------------------------------------------------------- ibv_cq_ex reads */

namespace
{

const softrnic_cqe &cur(ibv_cq_ex *c) noexcept
{
	return cq::from_cq_ex(c)->current();
}

int op_start_poll(ibv_cq_ex *c, ibv_poll_cq_attr *attr) noexcept
{
	return cq::from_cq_ex(c)->start_poll(attr);
}
int op_next_poll(ibv_cq_ex *c) noexcept
{
	return cq::from_cq_ex(c)->next_poll();
}
void op_end_poll(ibv_cq_ex *c) noexcept
{
	cq::from_cq_ex(c)->end_poll();
}
ibv_wc_opcode read_opcode(ibv_cq_ex *c) noexcept
{
	return static_cast<ibv_wc_opcode>(cur(c).opcode);
}
uint32_t read_vendor_err(ibv_cq_ex *c) noexcept
{
	return cur(c).vendor_err;
}
unsigned int read_wc_flags(ibv_cq_ex *c) noexcept
{
	return cqe_wc_flags(cur(c));
}
uint32_t read_byte_len(ibv_cq_ex *c) noexcept
{
	return cur(c).byte_len;
}
__be32 read_imm_data(ibv_cq_ex *c) noexcept
{
	/* imm_data as received (network order), or the invalidated rkey in
	 * host order: ibv_wc_read_invalidated_rkey() returns this unchanged */
	return cur(c).ex;
}
uint32_t read_qp_num(ibv_cq_ex *c) noexcept
{
	return cur(c).qp_num;
}
uint32_t read_src_qp(ibv_cq_ex *c) noexcept
{
	return cur(c).src_qp;
}
uint32_t read_slid(ibv_cq_ex *) noexcept
{
	return 0;
}
uint8_t read_sl(ibv_cq_ex *c) noexcept
{
	return cur(c).sl;
}
uint8_t read_dlid_path_bits(ibv_cq_ex *) noexcept
{
	return 0;
}

} // namespace

/* ------------------------------------------------------------------ cq */

void cq::attach(ring r, uint32_t cqn, uint64_t wc_flags) noexcept
{
	ring_ = ring_consumer(std::move(r));
	cqn_ = cqn;

	ibv_cq_ex &x = ibv()->cq_ex;
	x.start_poll = op_start_poll;
	x.next_poll = op_next_poll;
	x.end_poll = op_end_poll;
	x.read_opcode = read_opcode;
	x.read_vendor_err = read_vendor_err;
	x.read_wc_flags = read_wc_flags;
	if (wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		x.read_byte_len = read_byte_len;
	if (wc_flags & IBV_WC_EX_WITH_IMM)
		x.read_imm_data = read_imm_data;
	if (wc_flags & IBV_WC_EX_WITH_QP_NUM)
		x.read_qp_num = read_qp_num;
	if (wc_flags & IBV_WC_EX_WITH_SRC_QP)
		x.read_src_qp = read_src_qp;
	if (wc_flags & IBV_WC_EX_WITH_SLID)
		x.read_slid = read_slid;
	if (wc_flags & IBV_WC_EX_WITH_SL)
		x.read_sl = read_sl;
	if (wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		x.read_dlid_path_bits = read_dlid_path_bits;
}

int cq::fetch() noexcept
{
	if (broken_)
		return EIO;
	const void *slot = ring_.peek();
	if (!slot) {
		if (ring_.corrupt() || (ring_.get().load_kflags() & SOFTRNIC_KFLAG_ERROR))
			return EIO;
		return ENOENT;
	}
	std::memcpy(&cur_, slot, sizeof(cur_));
	ring_.pop();
	return 0;
}

int cq::poll(int num_entries, ibv_wc *wc) noexcept
{
	std::lock_guard guard(lock_);
	int n = 0;
	int err = 0;

	while (n < num_entries) {
		err = fetch();
		if (err)
			break;
		cqe_to_wc(cur_, wc[n++]);
	}
	ring_.publish();
	if (!n && err == EIO) {
		errno = EIO;
		return -1;
	}
	return n;
}

int cq::start_poll(const ibv_poll_cq_attr *attr) noexcept
{
	if (attr && attr->comp_mask)
		return EINVAL;
	lock_.lock();
	const int err = fetch();
	if (err) {
		/* no end_poll follows a failed start_poll */
		ring_.publish();
		lock_.unlock();
		return err;
	}
	ibv()->cq_ex.status = static_cast<ibv_wc_status>(cur_.status);
	ibv()->cq_ex.wr_id = cur_.wr_id;
	return 0;
}

int cq::next_poll() noexcept
{
	const int err = fetch();
	if (err)
		return err;
	ibv()->cq_ex.status = static_cast<ibv_wc_status>(cur_.status);
	ibv()->cq_ex.wr_id = cur_.wr_id;
	return 0;
}

void cq::end_poll() noexcept
{
	ring_.publish();
	lock_.unlock();
}

void cq::arm(bool solicited_only) noexcept
{
	ring_.get().arm(solicited_only ? SOFTRNIC_CQ_ARM_SOLICITED : SOFTRNIC_CQ_ARM_NEXT);
}

int cq::resize(int cqe)
{
	std::lock_guard guard(lock_);
	/* the kernel moves the entries from our published cons on */
	ring_.publish();

	struct ibv_resize_cq req {
	};
	cmd::resize_cq_resp resp{};
	const int ret =
	    ibv_cmd_resize_cq(cq_ptr(), cqe, &req, sizeof(req), resp.core(), sizeof(resp));
	if (ret)
		return ret;
	/* The kernel already switched rings: if the new one cannot be mapped
	 * the CQ is lost to us (poll reports EIO; destroy still works). */
	try {
		ring_.replace(
		    ring::map(cq_ptr()->context->cmd_fd, resp.drv.cq, sizeof(softrnic_cqe)));
	} catch (...) {
		broken_ = true;
		throw;
	}
	return 0;
}

uint32_t cq::purge_qp(uint32_t qp_num, bool keep_recv) noexcept
{
	std::lock_guard guard(lock_);
	if (broken_)
		return 0;
	return ring_.drop_if<softrnic_cqe>([&](const softrnic_cqe &e) {
		return e.qp_num == qp_num && !(keep_recv && (e.opcode & SOFTRNIC_WC_RECV));
	});
}

/* ----------------------------------------------------------------- verbs */

namespace
{

/* The CQ the kernel made, mapped: or the kernel CQ destroyed again. */
void finish_cq(cq &obj, ibv_context *ctx, const softrnic_create_cq_resp &drv, uint64_t wc_flags)
{
	undo destroy([&] { ibv_cmd_destroy_cq(obj.cq_ptr()); });
	obj.attach(ring::map(ctx->cmd_fd, drv.cq, sizeof(softrnic_cqe)), drv.cqn, wc_flags);
	destroy.dismiss();
}

} // namespace

ibv_cq *create_cq(ibv_context *ctx, int cqe, ibv_comp_channel *channel, int comp_vector) noexcept
{
	return guard_ptr([&]() -> ibv_cq * {
		auto obj = cq::make();
		struct ibv_create_cq req {
		};
		cmd::create_cq_resp resp{};
		const int ret = ibv_cmd_create_cq(ctx, cqe, channel, comp_vector, obj->cq_ptr(),
						  &req, sizeof(req), resp.core(), sizeof(resp));
		if (ret) {
			errno = ret;
			return nullptr;
		}
		finish_cq(*obj, ctx, resp.drv, cq_supported_wc_flags);
		return &cq::release(std::move(obj))->cq;
	});
}

ibv_cq_ex *create_cq_ex(ibv_context *ctx, ibv_cq_init_attr_ex *attr) noexcept
{
	return guard_ptr([&]() -> ibv_cq_ex * {
		if (attr->wc_flags & ~cq_supported_wc_flags) {
			errno = EOPNOTSUPP;
			return nullptr;
		}
		/* PD (parent-domain allocators) is accepted and unused; of
		 * the flags only the single-threaded hint */
		if (attr->comp_mask & ~(IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD) ||
		    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
		     (attr->flags & ~IBV_CREATE_CQ_ATTR_SINGLE_THREADED))) {
			errno = EOPNOTSUPP;
			return nullptr;
		}
		auto obj = cq::make();
		struct ibv_create_cq_ex req {
		};
		cmd::create_cq_ex_resp resp{};
		const int ret = ibv_cmd_create_cq_ex(ctx, attr, obj->ibv(), &req, sizeof(req),
						     resp.core(), sizeof(resp), 0);
		if (ret) {
			errno = ret;
			return nullptr;
		}
		finish_cq(*obj, ctx, resp.drv, attr->wc_flags);
		return &cq::release(std::move(obj))->cq_ex;
	});
}

int poll_cq(ibv_cq *ibcq, int num_entries, ibv_wc *wc) noexcept
{
	return cq::from_cq(ibcq)->poll(num_entries, wc);
}

int req_notify_cq(ibv_cq *ibcq, int solicited_only) noexcept
{
	cq::from_cq(ibcq)->arm(solicited_only != 0);
	return 0;
}

int resize_cq(ibv_cq *ibcq, int cqe) noexcept
{
	return guard_errno([&] { return cq::from_cq(ibcq)->resize(cqe); });
}

int destroy_cq(ibv_cq *ibcq) noexcept
{
	return guard_errno([&] {
		const int ret = ibv_cmd_destroy_cq(ibcq);
		if (ret)
			return ret;
		cq::reclaim(reinterpret_cast<verbs_cq *>(ibcq)); /* unmaps the ring */
		return 0;
	});
}

} // namespace softrnic
