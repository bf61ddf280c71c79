// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "mr.h"

#include <cerrno>
#include <utility>

#include "entry.h"
#include "qp.h"

namespace softrnic
{

ibv_mr *reg_mr(ibv_pd *pd, void *addr, size_t length, uint64_t hca_va, int access) noexcept
{
	return guard_ptr([&]() -> ibv_mr * {
		auto obj = mr::make();
		struct ibv_reg_mr req {
		};
		ib_uverbs_reg_mr_resp resp{};
		const int ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, obj->ibv(), &req,
					       sizeof(req), &resp, sizeof(resp));
		if (ret) {
			errno = ret;
			return nullptr;
		}
		return &mr::release(std::move(obj))->ibv_mr;
	});
}

int rereg_mr(verbs_mr *vmr, int flags, ibv_pd *pd, void *addr, size_t length, int access) noexcept
{
	return guard_errno([&] {
		struct ibv_rereg_mr req {
		};
		ib_uverbs_rereg_mr_resp resp{};
		return ibv_cmd_rereg_mr(vmr, static_cast<uint32_t>(flags), addr, length,
					reinterpret_cast<uintptr_t>(addr), access, pd, &req,
					sizeof(req), &resp, sizeof(resp));
	});
}

int dereg_mr(verbs_mr *vmr) noexcept
{
	return guard_errno([&] {
		const int ret = ibv_cmd_dereg_mr(vmr);
		if (ret)
			return ret;
		mr::reclaim(vmr);
		return 0;
	});
}

ibv_mw *alloc_mw(ibv_pd *pd, ibv_mw_type type) noexcept
{
	return guard_ptr([&]() -> ibv_mw * {
		auto obj = mw::make();
		struct ibv_alloc_mw req {
		};
		ib_uverbs_alloc_mw_resp resp{};
		const int ret =
		    ibv_cmd_alloc_mw(pd, type, obj->ibv(), &req, sizeof(req), &resp, sizeof(resp));
		if (ret) {
			errno = ret;
			return nullptr;
		}
		return mw::release(std::move(obj));
	});
}

int dealloc_mw(ibv_mw *ibmw) noexcept
{
	return guard_errno([&] {
		const int ret = ibv_cmd_dealloc_mw(ibmw);
		if (ret)
			return ret;
		mw::reclaim(ibmw);
		return 0;
	});
}

int bind_mw(ibv_qp *ibqp, ibv_mw *ibmw, ibv_mw_bind *bind) noexcept
{
	if (!ibmw || !bind || ibmw->type != IBV_MW_TYPE_1)
		return EINVAL;
	ibv_send_wr wr{};
	wr.wr_id = bind->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = bind->send_flags;
	wr.bind_mw.mw = ibmw;
	wr.bind_mw.rkey = ibv_inc_rkey(ibmw->rkey);
	wr.bind_mw.bind_info = bind->bind_info;
	ibv_send_wr *bad = nullptr;
	const int ret = qp::from_qp(ibqp)->post_send(&wr, &bad);
	if (ret)
		return ret;
	ibmw->rkey = wr.bind_mw.rkey;
	return 0;
}

} // namespace softrnic
