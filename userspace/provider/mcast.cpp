// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * UD multicast: the kernel keeps the groups (kernel/roce/roce_mcast.c);
 * attaching and detaching are plain uverbs commands.
 */
#include "mcast.h"

namespace softrnic
{

int attach_mcast(ibv_qp *qp, const ibv_gid *gid, uint16_t lid) noexcept
{
	return ibv_cmd_attach_mcast(qp, gid, lid);
}

int detach_mcast(ibv_qp *qp, const ibv_gid *gid, uint16_t lid) noexcept
{
	return ibv_cmd_detach_mcast(qp, gid, lid);
}

} // namespace softrnic
