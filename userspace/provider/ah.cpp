// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "ah.h"

#include <cerrno>
#include <utility>

#include "context.h"
#include "entry.h"
#include "uverbs_cmd.h"

namespace softrnic
{

ibv_ah *create_ah(ibv_pd *pd, ibv_ah_attr *attr) noexcept
{
	return guard_ptr([&]() -> ibv_ah * {
		/* iWARP has no address handles: connections carry the path */
		if (context::from_ibv(pd->context)->link() != link_type::roce) {
			errno = EOPNOTSUPP;
			return nullptr;
		}
		auto obj = ah::make();
		cmd::create_ah_resp resp{};
		const int ret = ibv_cmd_create_ah(pd, obj->ibv(), attr, resp.core(), sizeof(resp));
		if (ret) {
			errno = ret;
			return nullptr;
		}
		obj->set_ah_num(resp.drv.ah_num);
		return ah::release(std::move(obj));
	});
}

int destroy_ah(ibv_ah *ibah) noexcept
{
	return guard_errno([&] {
		const int ret = ibv_cmd_destroy_ah(ibah);
		if (ret)
			return ret;
		ah::reclaim(ibah);
		return 0;
	});
}

} // namespace softrnic
