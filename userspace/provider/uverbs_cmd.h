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

/*
 * The later verbs all have the same shape: the core response the helper
 * fills in, then our driver response.  resp_pair<Core, Drv> lays them out
 * back to back; check_resp_pair() pins that there is no padding.
 */
template <typename Core, typename Drv> struct resp_pair {
	verbs_abi::core_room<Core> core_bytes;
	Drv drv;

	Core *core() noexcept { return reinterpret_cast<Core *>(core_bytes.bytes); }
};

template <typename Core, typename Drv> constexpr bool check_resp_pair() noexcept
{
	using P = resp_pair<Core, Drv>;
	return offsetof(P, drv) == sizeof(Core) && sizeof(P) == sizeof(Core) + sizeof(Drv);
}

/* CREATE_CQ / EX_CREATE_CQ: no driver request, the CQ ring back. */
using create_cq_resp = resp_pair<ib_uverbs_create_cq_resp, softrnic_create_cq_resp>;
using create_cq_ex_resp = resp_pair<ib_uverbs_ex_create_cq_resp, softrnic_create_cq_resp>;
/* RESIZE_CQ: the replacement ring. */
using resize_cq_resp = resp_pair<ib_uverbs_resize_cq_resp, softrnic_resize_cq_resp>;
/* EX_CREATE_QP: the SQ and RQ rings, QPN, actual max_inline. */
using create_qp_resp = resp_pair<ib_uverbs_ex_create_qp_resp, softrnic_create_qp_resp>;
/* CREATE_SRQ: the SRQ ring. */
using create_srq_resp = resp_pair<ib_uverbs_create_srq_resp, softrnic_create_srq_resp>;
/* CREATE_AH: the AH number UD WQEs carry. */
using create_ah_resp = resp_pair<ib_uverbs_create_ah_resp, softrnic_create_ah_resp>;

static_assert(check_resp_pair<ib_uverbs_create_cq_resp, softrnic_create_cq_resp>());
static_assert(check_resp_pair<ib_uverbs_ex_create_cq_resp, softrnic_create_cq_resp>());
static_assert(check_resp_pair<ib_uverbs_resize_cq_resp, softrnic_resize_cq_resp>());
static_assert(check_resp_pair<ib_uverbs_ex_create_qp_resp, softrnic_create_qp_resp>());
static_assert(check_resp_pair<ib_uverbs_create_srq_resp, softrnic_create_srq_resp>());
static_assert(check_resp_pair<ib_uverbs_create_ah_resp, softrnic_create_ah_resp>());

/*
 * The empty POST_SEND / POST_RECV write() that is the SQ doorbell (and,
 * for a QP in the error state, the RQ doorbell).  Our own record: the
 * library's ibv_cmd_post_send() would marshal work requests, we send none.
 * The kernel requires wqe_size to be at least its WR record even when
 * wr_count is 0, and writes a response (bad_wr) it reads nothing from.
 */
struct doorbell_req {
	ib_uverbs_cmd_hdr hdr;
	/* == ib_uverbs_post_send / ib_uverbs_post_recv without the WRs */
	__aligned_u64 response;
	__u32 qp_handle;
	__u32 wr_count;
	__u32 sge_count;
	__u32 wqe_size;
};

static_assert(sizeof(doorbell_req) == sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_post_send));
static_assert(sizeof(doorbell_req) == sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_post_recv));
static_assert(offsetof(doorbell_req, qp_handle) ==
	      sizeof(ib_uverbs_cmd_hdr) + offsetof(ib_uverbs_post_send, qp_handle));
static_assert(offsetof(doorbell_req, wqe_size) ==
	      sizeof(ib_uverbs_cmd_hdr) + offsetof(ib_uverbs_post_send, wqe_size));
static_assert(offsetof(doorbell_req, wqe_size) ==
	      sizeof(ib_uverbs_cmd_hdr) + offsetof(ib_uverbs_post_recv, wqe_size));
static_assert(sizeof(ib_uverbs_post_send_resp) == sizeof(ib_uverbs_post_recv_resp));

} // namespace softrnic::cmd

#endif /* SOFTRNIC_UVERBS_CMD_H */
