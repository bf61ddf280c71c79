// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "pd.h"

#include <cerrno>
#include <utility>

#include "entry.h"
#include "uverbs_cmd.h"

namespace softrnic
{

ibv_pd *alloc_pd(ibv_context *ctx) noexcept
{
	return guard_ptr([&]() -> ibv_pd * {
		auto obj = pd::make();
		cmd::alloc_pd_req req{};
		cmd::alloc_pd_resp resp{};
		const int ret = ibv_cmd_alloc_pd(ctx, obj->ibv(), &req.core, sizeof(req),
						 resp.core(), sizeof(resp));
		if (ret) {
			errno = ret;
			return nullptr; /* obj freed; the kernel holds nothing */
		}
		obj->set_pdn(resp.drv.pdn);
		return pd::release(std::move(obj));
	});
}

int dealloc_pd(ibv_pd *ibpd) noexcept
{
	return guard_errno([&] {
		const int ret = ibv_cmd_dealloc_pd(ibpd);
		if (ret)
			return ret; /* still alive in the kernel: keep ours too */
		pd::reclaim(ibpd);
		return 0;
	});
}

} // namespace softrnic
