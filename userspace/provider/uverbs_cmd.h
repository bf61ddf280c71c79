// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Request/response buffers for the ibv_cmd_* helpers: the libibverbs core
 * record followed directly by softrnic's driver-specific part from
 * softrnic-abi.h.  The helpers split a buffer at sizeof(core record) and send
 * the tail to the kernel as driver data (UHW in/out), so the driver part must
 * start exactly where the core record ends: the asserts pin that there is no
 * padding in between or after.
 *
 * The core response fields are spelled out rather than embedding the uapi
 * struct, because the uapi structs end in flexible arrays.
 */
#ifndef SOFTRNIC_UVERBS_CMD_H
#define SOFTRNIC_UVERBS_CMD_H

#include <cstddef>
#include <rdma/ib_user_verbs.h>

#include "softrnic-abi.h"
#include "verbs_provider_abi.h"

namespace softrnic::cmd
{

/* GET_CONTEXT: no driver request, softrnic_alloc_ucontext_resp back. */
struct get_context_req {
	struct ibv_get_context core;
};

struct alignas(8) get_context_resp {
	/* == ib_uverbs_get_context_resp */
	__u32 async_fd;
	__u32 num_comp_vectors;
	softrnic_alloc_ucontext_resp drv;

	ib_uverbs_get_context_resp *core() noexcept
	{
		return reinterpret_cast<ib_uverbs_get_context_resp *>(this);
	}
};

/* ALLOC_PD: no driver request, softrnic_alloc_pd_resp back. */
struct alloc_pd_req {
	struct ibv_alloc_pd core;
};

struct alloc_pd_resp {
	/* == ib_uverbs_alloc_pd_resp */
	__u32 pd_handle;
	softrnic_alloc_pd_resp drv;

	ib_uverbs_alloc_pd_resp *core() noexcept
	{
		return reinterpret_cast<ib_uverbs_alloc_pd_resp *>(this);
	}
};

static_assert(sizeof(get_context_req) == sizeof(struct ibv_get_context));
static_assert(offsetof(get_context_resp, async_fd) ==
	      offsetof(ib_uverbs_get_context_resp, async_fd));
static_assert(offsetof(get_context_resp, num_comp_vectors) ==
	      offsetof(ib_uverbs_get_context_resp, num_comp_vectors));
static_assert(offsetof(get_context_resp, drv) == sizeof(ib_uverbs_get_context_resp));
static_assert(sizeof(get_context_resp) ==
	      sizeof(ib_uverbs_get_context_resp) + sizeof(softrnic_alloc_ucontext_resp));

static_assert(sizeof(alloc_pd_req) == sizeof(struct ibv_alloc_pd));
static_assert(offsetof(alloc_pd_resp, drv) == sizeof(ib_uverbs_alloc_pd_resp));
static_assert(sizeof(alloc_pd_resp) ==
	      sizeof(ib_uverbs_alloc_pd_resp) + sizeof(softrnic_alloc_pd_resp));

} // namespace softrnic::cmd

#endif /* SOFTRNIC_UVERBS_CMD_H */
