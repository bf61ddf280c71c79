// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "qp.h"

#include <algorithm>
#include <cerrno>
#include <unistd.h>
#include <utility>

#include "cq.h"
#include "entry.h"
#include "undo.h"
#include "uverbs_cmd.h"

namespace softrnic
{

/* ---------------------------------------------------------- the data path */

void qp::attach(send_queue sq, recv_queue rq) noexcept
{
	sq_ = std::move(sq);
	rq_ = std::move(rq);
}

int qp::doorbell(uint32_t command) noexcept
{
	cmd::doorbell_req req{};
	ib_uverbs_post_send_resp resp{};

	req.hdr.command = command;
	req.hdr.in_words = sizeof(req) / 4;
	req.hdr.out_words = sizeof(resp) / 4;
	req.response = reinterpret_cast<uintptr_t>(&resp);
	req.qp_handle = qp_ptr()->handle;
	req.wqe_size = command == IB_USER_VERBS_CMD_POST_SEND ? sizeof(ib_uverbs_send_wr)
							      : sizeof(ib_uverbs_recv_wr);
	const ssize_t n = write(qp_ptr()->context->cmd_fd, &req, sizeof(req));
	if (n == static_cast<ssize_t>(sizeof(req)))
		return 0;
	return n < 0 ? errno : EIO;
}

int qp::post_send(ibv_send_wr *wr, ibv_send_wr **bad_wr) noexcept
{
	/* the kernel does not consume a RESET SQ, and the next modify would
	 * not discard what was posted: refuse, as rxe does */
	if (qp_ptr()->state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	int err;
	bool ring;
	{
		std::lock_guard guard(sq_lock_);
		err = sq_.post(wr, bad_wr);
		ring = sq_.published() && sq_.need_doorbell();
	}
	if (ring) {
		const int dberr = doorbell(IB_USER_VERBS_CMD_POST_SEND);
		if (dberr && !err) {
			err = dberr;
			*bad_wr = wr;
		}
	}
	return err;
}

int qp::post_recv(ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept
{
	/* on an SRQ: post to the SRQ; RESET: not allowed (IBTA C10-97.2.1),
	 * and the next modify would discard what was posted */
	if (!rq_ || qp_ptr()->state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	int err;
	bool flush;
	{
		std::lock_guard guard(rq_lock_);
		err = rq_.post(wr, bad_wr);
		flush = rq_.kernel_error();
	}
	if (flush) {
		const int dberr = doorbell(IB_USER_VERBS_CMD_POST_RECV);
		if (dberr && !err) {
			err = dberr;
			*bad_wr = wr;
		}
	}
	return err;
}

void qp::wr_start() noexcept
{
	sq_lock_.lock();
	sq_.wr_start();
}

int qp::wr_complete() noexcept
{
	if (qp_ptr()->state == IBV_QPS_RESET) { /* as post_send */
		sq_.wr_abort();
		sq_lock_.unlock();
		return EINVAL;
	}
	int err = sq_.wr_complete();
	const bool ring = !err && sq_.published() && sq_.need_doorbell();
	sq_lock_.unlock();
	if (ring)
		err = doorbell(IB_USER_VERBS_CMD_POST_SEND);
	return err;
}

void qp::wr_abort() noexcept
{
	sq_.wr_abort();
	sq_lock_.unlock();
}

/* ------------------------------------------------------ ibv_qp_ex builder */

namespace
{

send_queue &bq(ibv_qp_ex *x) noexcept
{
	return qp::from_qp_ex(x)->builder();
}

softrnic_sqe *begin(ibv_qp_ex *x, uint8_t opcode) noexcept
{
	return bq(x).wr_begin(opcode, x->wr_id, x->wr_flags & ~IBV_SEND_INLINE);
}

void op_wr_start(ibv_qp_ex *x) noexcept
{
	qp::from_qp_ex(x)->wr_start();
}
int op_wr_complete(ibv_qp_ex *x) noexcept
{
	return qp::from_qp_ex(x)->wr_complete();
}
void op_wr_abort(ibv_qp_ex *x) noexcept
{
	qp::from_qp_ex(x)->wr_abort();
}

void op_wr_send(ibv_qp_ex *x) noexcept
{
	begin(x, SOFTRNIC_WR_SEND);
}
void op_wr_send_imm(ibv_qp_ex *x, __be32 imm_data) noexcept
{
	if (auto *h = begin(x, SOFTRNIC_WR_SEND_WITH_IMM))
		h->ex = imm_data;
}
void op_wr_send_inv(ibv_qp_ex *x, uint32_t invalidate_rkey) noexcept
{
	if (auto *h = begin(x, SOFTRNIC_WR_SEND_WITH_INV))
		h->ex = invalidate_rkey;
}
void op_wr_rdma_write(ibv_qp_ex *x, uint32_t rkey, uint64_t remote_addr) noexcept
{
	if (auto *h = begin(x, SOFTRNIC_WR_RDMA_WRITE)) {
		h->rdma.remote_addr = remote_addr;
		h->rdma.rkey = rkey;
	}
}
void op_wr_rdma_write_imm(ibv_qp_ex *x, uint32_t rkey, uint64_t remote_addr,
			  __be32 imm_data) noexcept
{
	if (auto *h = begin(x, SOFTRNIC_WR_RDMA_WRITE_WITH_IMM)) {
		h->ex = imm_data;
		h->rdma.remote_addr = remote_addr;
		h->rdma.rkey = rkey;
	}
}
void op_wr_rdma_read(ibv_qp_ex *x, uint32_t rkey, uint64_t remote_addr) noexcept
{
	if (auto *h = begin(x, SOFTRNIC_WR_RDMA_READ)) {
		h->rdma.remote_addr = remote_addr;
		h->rdma.rkey = rkey;
	}
}
void op_wr_atomic_cmp_swp(ibv_qp_ex *x, uint32_t rkey, uint64_t remote_addr, uint64_t compare,
			  uint64_t swap) noexcept
{
	if (auto *h = begin(x, SOFTRNIC_WR_ATOMIC_CMP_AND_SWP)) {
		h->atomic.remote_addr = remote_addr;
		h->atomic.compare_add = compare;
		h->atomic.swap = swap;
		h->atomic.rkey = rkey;
	}
}
void op_wr_atomic_fetch_add(ibv_qp_ex *x, uint32_t rkey, uint64_t remote_addr,
			    uint64_t add) noexcept
{
	if (auto *h = begin(x, SOFTRNIC_WR_ATOMIC_FETCH_AND_ADD)) {
		h->atomic.remote_addr = remote_addr;
		h->atomic.compare_add = add;
		h->atomic.rkey = rkey;
	}
}
void op_wr_bind_mw(ibv_qp_ex *x, ibv_mw *mw, uint32_t rkey,
		   const ibv_mw_bind_info *bind_info) noexcept
{
	if (!mw || !bind_info) {
		begin(x, 0xff); /* fails the batch with EINVAL */
		return;
	}
	if (auto *h = begin(x, SOFTRNIC_WR_BIND_MW)) {
		h->bind.addr = bind_info->addr;
		h->bind.length = bind_info->length;
		h->bind.mw_rkey = mw->rkey;
		h->bind.new_rkey = rkey;
		h->bind.mr_lkey = bind_info->mr ? bind_info->mr->lkey : 0;
		h->bind.access = bind_info->mw_access_flags;
	}
}
void op_wr_local_inv(ibv_qp_ex *x, uint32_t invalidate_rkey) noexcept
{
	if (auto *h = begin(x, SOFTRNIC_WR_LOCAL_INV))
		h->ex = invalidate_rkey;
}

void op_wr_atomic_write(ibv_qp_ex *x, uint32_t rkey, uint64_t remote_addr,
			const void *atomic_wr) noexcept
{
	bq(x).wr_atomic_write(x->wr_id, x->wr_flags & ~IBV_SEND_INLINE, rkey, remote_addr,
			      atomic_wr);
}

void op_wr_set_sge(ibv_qp_ex *x, uint32_t lkey, uint64_t addr, uint32_t length) noexcept
{
	const ibv_sge sge{addr, length, lkey};
	bq(x).wr_set_sge_list(1, &sge);
}
void op_wr_set_sge_list(ibv_qp_ex *x, size_t num_sge, const ibv_sge *sg_list) noexcept
{
	bq(x).wr_set_sge_list(num_sge, sg_list);
}
void op_wr_set_inline_data(ibv_qp_ex *x, void *addr, size_t length) noexcept
{
	const ibv_data_buf buf{addr, length};
	bq(x).wr_set_inline_list(1, &buf);
}
void op_wr_set_inline_data_list(ibv_qp_ex *x, size_t num_buf, const ibv_data_buf *buf_list) noexcept
{
	bq(x).wr_set_inline_list(num_buf, buf_list);
}
void op_wr_set_ud_addr(ibv_qp_ex *x, ibv_ah *ah, uint32_t remote_qpn, uint32_t remote_qkey) noexcept
{
	bq(x).wr_set_ud(ah, remote_qpn, remote_qkey);
}

} // namespace

void qp::enable_qp_ex(uint64_t ops) noexcept
{
	ibv_qp_ex &x = ibv()->qp_ex;

	if (ops & IBV_QP_EX_WITH_RDMA_WRITE)
		x.wr_rdma_write = op_wr_rdma_write;
	if (ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
		x.wr_rdma_write_imm = op_wr_rdma_write_imm;
	if (ops & IBV_QP_EX_WITH_SEND)
		x.wr_send = op_wr_send;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_IMM)
		x.wr_send_imm = op_wr_send_imm;
	if (ops & IBV_QP_EX_WITH_RDMA_READ)
		x.wr_rdma_read = op_wr_rdma_read;
	if (ops & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP)
		x.wr_atomic_cmp_swp = op_wr_atomic_cmp_swp;
	if (ops & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
		x.wr_atomic_fetch_add = op_wr_atomic_fetch_add;
	if (ops & IBV_QP_EX_WITH_LOCAL_INV)
		x.wr_local_inv = op_wr_local_inv;
	if (ops & IBV_QP_EX_WITH_BIND_MW)
		x.wr_bind_mw = op_wr_bind_mw;
	if (ops & IBV_QP_EX_WITH_SEND_WITH_INV)
		x.wr_send_inv = op_wr_send_inv;
	if (ops & IBV_QP_EX_WITH_ATOMIC_WRITE)
		x.wr_atomic_write = op_wr_atomic_write;
	flush_enabled_ = (ops & qp_ex_with_flush) != 0;
	x.wr_set_sge = op_wr_set_sge;
	x.wr_set_sge_list = op_wr_set_sge_list;
	x.wr_set_inline_data = op_wr_set_inline_data;
	x.wr_set_inline_data_list = op_wr_set_inline_data_list;
	x.wr_set_ud_addr = op_wr_set_ud_addr;
	x.wr_start = op_wr_start;
	x.wr_complete = op_wr_complete;
	x.wr_abort = op_wr_abort;
	ibv()->comp_mask |= VERBS_QP_EX;
}

bool qp::owns(const ibv_qp_ex *x) noexcept
{
	/* Only our QPs have our builder: no other provider's object gets
	 * mistaken for a softrnic::qp. */
	return x && x->wr_start == op_wr_start;
}

void dv_wr_flush(ibv_qp_ex *x, uint32_t rkey, uint64_t remote_addr, uint64_t len, uint8_t type,
		 uint8_t level) noexcept
{
	if (!qp::owns(x))
		return; /* not ours: nothing to report it through */
	qp *q = qp::from_qp_ex(x);
	if (!q->flush_enabled()) {
		q->builder().wr_fail(EINVAL);
		return;
	}
	q->builder().wr_flush(x->wr_id, x->wr_flags & ~IBV_SEND_INLINE, rkey, remote_addr, len,
			      type, level);
}

/* ----------------------------------------------------------------- verbs */

namespace
{

constexpr uint64_t qp_comp_mask_ok =
    IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS | IBV_QP_INIT_ATTR_CREATE_FLAGS;

/* What we refuse before asking the kernel: things the provider could not
 * drive even if the kernel made them. */
int check_qp_init(const ibv_qp_init_attr_ex &attr) noexcept
{
	if (attr.comp_mask & ~qp_comp_mask_ok)
		return EOPNOTSUPP;
	if ((attr.comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && attr.create_flags)
		return EOPNOTSUPP;
	if (attr.qp_type != IBV_QPT_RC && attr.qp_type != IBV_QPT_UD)
		return EOPNOTSUPP;
	if (attr.comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		const uint64_t ok = attr.qp_type == IBV_QPT_RC ? qp_rc_send_ops : qp_ud_send_ops;
		if (attr.send_ops_flags & ~ok)
			return EOPNOTSUPP;
	}
	return 0;
}

ibv_qp *create_qp_common(ibv_context *ctx, ibv_qp_init_attr_ex *attr, bool ex)
{
	int ret = check_qp_init(*attr);
	if (ret) {
		errno = ret;
		return nullptr;
	}
	auto obj = qp::make();
	struct ibv_create_qp_ex req {
	};
	cmd::create_qp_resp resp{};
	ret = ibv_cmd_create_qp_ex2(ctx, obj->ibv(), attr, &req, sizeof(req), resp.core(),
				    sizeof(resp));
	if (ret) {
		errno = ret; /* e.g. EOPNOTSUPP: UD on an iWARP device */
		return nullptr;
	}
	undo destroy([&] { ibv_cmd_destroy_qp(obj->qp_ptr()); });

	const softrnic_create_qp_resp &d = resp.drv;
	sq_limits lim;
	lim.kind = attr->qp_type == IBV_QPT_UD ? SR_QP_UD : SR_QP_RC;
	lim.max_sge = attr->cap.max_send_sge;
	lim.max_inline = d.max_inline;
	lim.sig_all = attr->sq_sig_all != 0;
	send_queue sq(ring::map(ctx->cmd_fd, d.sq, sizeof(softrnic_sqe)), lim);

	recv_queue rq;
	if (d.rq.num_slots)
		rq = recv_queue(ring::map(ctx->cmd_fd, d.rq, sizeof(softrnic_rqe)),
				attr->cap.max_recv_sge);
	else if (!attr->srq)
		throw_errno(EPROTO, "QP without an RQ ring");

	/* what the rings really hold (the kernel's numbers, normally) */
	attr->cap.max_send_sge = sq.limits().max_sge;
	attr->cap.max_inline_data = sq.limits().max_inline;
	if (rq)
		attr->cap.max_recv_sge = rq.max_sge();
	obj->attach(std::move(sq), std::move(rq));
	if (ex)
		obj->enable_qp_ex(
		    attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS ? attr->send_ops_flags : 0);
	destroy.dismiss();
	return &qp::release(std::move(obj))->qp;
}

} // namespace

ibv_qp *create_qp(ibv_pd *pd, ibv_qp_init_attr *attr) noexcept
{
	return guard_ptr([&]() -> ibv_qp * {
		ibv_qp_init_attr_ex ax{};
		ax.qp_context = attr->qp_context;
		ax.send_cq = attr->send_cq;
		ax.recv_cq = attr->recv_cq;
		ax.srq = attr->srq;
		ax.cap = attr->cap;
		ax.qp_type = attr->qp_type;
		ax.sq_sig_all = attr->sq_sig_all;
		ax.comp_mask = IBV_QP_INIT_ATTR_PD;
		ax.pd = pd;
		ibv_qp *q = create_qp_common(pd->context, &ax, false);
		if (q)
			attr->cap = ax.cap;
		return q;
	});
}

ibv_qp *create_qp_ex(ibv_context *ctx, ibv_qp_init_attr_ex *attr) noexcept
{
	return guard_ptr([&] { return create_qp_common(ctx, attr, true); });
}

static void purge_reset_qp(ibv_qp *ibqp) noexcept
{
	/* the kernel produces nothing more for a QP in RESET */
	const bool srq = ibqp->srq != nullptr;
	if (ibqp->send_cq)
		cq::from_cq(ibqp->send_cq)->purge_qp(ibqp->qp_num, srq);
	if (ibqp->recv_cq && ibqp->recv_cq != ibqp->send_cq)
		cq::from_cq(ibqp->recv_cq)->purge_qp(ibqp->qp_num, srq);
}

int modify_qp(ibv_qp *ibqp, ibv_qp_attr *attr, int attr_mask) noexcept
{
	const int err = guard_errno([&] {
		/* from IBV_QP_RATE_LIMIT on, attributes need the extended command */
		if (attr_mask & ~(IBV_QP_RATE_LIMIT - 1)) {
			struct ibv_modify_qp_ex req {
			};
			ib_uverbs_ex_modify_qp_resp resp{};
			return ibv_cmd_modify_qp_ex(ibqp, attr, attr_mask, &req, sizeof(req), &resp,
						    sizeof(resp));
		}
		struct ibv_modify_qp req {
		};
		return ibv_cmd_modify_qp(ibqp, attr, attr_mask, &req, sizeof(req));
	});
	if (!err && (attr_mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET)
		purge_reset_qp(ibqp);
	return err;
}

int query_qp(ibv_qp *ibqp, ibv_qp_attr *attr, int attr_mask, ibv_qp_init_attr *init_attr) noexcept
{
	return guard_errno([&] {
		struct ibv_query_qp req {
		};
		return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &req, sizeof(req));
	});
}

int destroy_qp(ibv_qp *ibqp) noexcept
{
	return guard_errno([&] {
		const int ret = ibv_cmd_destroy_qp(ibqp);
		if (ret)
			return ret;
		qp::reclaim(reinterpret_cast<verbs_qp *>(ibqp)); /* unmaps the rings */
		return 0;
	});
}

int post_send(ibv_qp *ibqp, ibv_send_wr *wr, ibv_send_wr **bad_wr) noexcept
{
	return qp::from_qp(ibqp)->post_send(wr, bad_wr);
}

int post_recv(ibv_qp *ibqp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept
{
	return qp::from_qp(ibqp)->post_recv(wr, bad_wr);
}

} // namespace softrnic
