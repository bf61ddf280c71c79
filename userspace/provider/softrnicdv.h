/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softrnic direct verbs: what libsoftrnic offers beyond the libibverbs API
 * of rdma-core v44 (Debian 12).
 *
 * softrnicdv_wr_flush() is rdma-core >= 45's ibv_wr_flush() for softrnic
 * QPs: a FLUSH (IBTA memory placement extensions) in an ibv_wr_start() ...
 * ibv_wr_complete() batch, with the same arguments and semantics.  The QP
 * must be an RC QP made by ibv_create_qp_ex() with SOFTRNICDV_QP_EX_WITH_FLUSH
 * in send_ops_flags (the value of IBV_QP_EX_WITH_FLUSH).  It completes with
 * opcode SOFTRNICDV_WC_FLUSH (IBV_WC_FLUSH of rdma-core >= 45, 8).
 *
 * Errors are those of the batch: ibv_wr_complete() returns EINVAL and posts
 * nothing if type is not a non-empty set of SOFTRNICDV_FLUSH_GLOBAL and
 * SOFTRNICDV_FLUSH_PERSISTENT, level not SOFTRNICDV_FLUSH_RANGE or
 * SOFTRNICDV_FLUSH_MR, len above 2^32 - 1 (the wire's DMA length), or the
 * QP was not created for FLUSH; on a QP of another provider the call does
 * nothing.  What the responder makes of the request is reported in the
 * completion: a softrnic responder answers persistence with
 * IBV_WC_REM_ACCESS_ERR (its memory has no persistence domain).
 *
 * Link with libsoftrnic-rdmav34.so, the provider libibverbs loads
 * (pkg-config softrnicdv), or look the symbol up with dlsym() in it.
 */
#ifndef SOFTRNICDV_H
#define SOFTRNICDV_H

#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
	SOFTRNICDV_QP_EX_WITH_FLUSH = 1 << 11, /* IBV_QP_EX_WITH_FLUSH */
	SOFTRNICDV_WC_FLUSH = 8,	       /* IBV_WC_FLUSH */
};

/* Placement type: a set of these (IBV_FLUSH_GLOBAL, IBV_FLUSH_PERSISTENT). */
enum softrnicdv_flush_type {
	SOFTRNICDV_FLUSH_GLOBAL = 1U << 0,
	SOFTRNICDV_FLUSH_PERSISTENT = 1U << 1,
};

/* Selectivity level (IBV_FLUSH_RANGE, IBV_FLUSH_MR). */
enum softrnicdv_flush_level {
	SOFTRNICDV_FLUSH_RANGE = 0, /* [remote_addr, remote_addr + len) */
	SOFTRNICDV_FLUSH_MR = 1,    /* the whole region of rkey */
};

void softrnicdv_wr_flush(struct ibv_qp_ex *qp, uint32_t rkey, uint64_t remote_addr, size_t len,
			 uint8_t type, uint8_t level);

#ifdef __cplusplus
}
#endif

#endif /* SOFTRNICDV_H */
