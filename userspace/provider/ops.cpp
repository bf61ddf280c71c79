// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The verbs this provider implements, gathered in one table.  Slots left
 * null are answered by libibverbs itself (EOPNOTSUPP/ENOSYS).  New verbs
 * (CQ, QP, SRQ, MR) add one assignment here, in any order.
 */
#include "context.h"
#include "pd.h"

namespace softrnic
{

namespace
{

constexpr verbs_context_ops make_context_ops() noexcept
{
	verbs_context_ops ops{};
	ops.free_context = free_context;
	ops.query_device_ex = query_device_ex;
	ops.query_port = query_port;
	ops.alloc_pd = alloc_pd;
	ops.dealloc_pd = dealloc_pd;
	return ops;
}

} // namespace

constinit const verbs_context_ops context_ops = make_context_ops();

} // namespace softrnic
