/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Ring index math and WQE validation shared by softrnic.ko, libsoftrnic
 * and the host unit tests.  Pure functions only: no kernel or libc
 * dependency, no memory ordering (each side wraps the counters in its own
 * acquire/release accessors, see softrnic-abi.h).
 */
#ifndef SOFTRNIC_PROTO_RING_H
#define SOFTRNIC_PROTO_RING_H

#include "softrnic-abi.h"

#ifndef __KERNEL__
#include <stdbool.h>
#include <stddef.h>
#endif

#define SR_ALIGN_UP(x, a) (((x) + ((a) - 1)) & ~((__typeof__(x))(a) - 1))

static inline bool sr_is_pow2(__u32 x)
{
	return x && !(x & (x - 1));
}

/* Smallest power of two >= x, or 0 if it does not fit in 32 bits. */
static inline __u32 sr_roundup_pow2(__u32 x)
{
	__u32 p = 1;

	while (p < x) {
		if (p & 0x80000000U)
			return 0;
		p <<= 1;
	}
	return p;
}

static inline __u32 sr_ring_slot(__u32 counter, __u32 num_slots)
{
	return counter & (num_slots - 1);
}

/* Entries between cons and prod; valid only if sr_ring_sane(). */
static inline __u32 sr_ring_used(__u32 prod, __u32 cons)
{
	return prod - cons;
}

/* A counter pair that a well-behaved peer can produce. */
static inline bool sr_ring_sane(__u32 prod, __u32 cons, __u32 num_slots)
{
	return prod - cons <= num_slots;
}

static inline __u32 sr_ring_free(__u32 prod, __u32 cons, __u32 num_slots)
{
	return num_slots - (prod - cons);
}

static inline size_t sr_slot_offset(__u32 counter, __u32 num_slots,
				    __u32 slot_size)
{
	return SOFTRNIC_RING_CTRL_SIZE +
	       (size_t)sr_ring_slot(counter, num_slots) * slot_size;
}

static inline size_t sr_ring_bytes(__u32 num_slots, __u32 slot_size)
{
	return SOFTRNIC_RING_CTRL_SIZE + (size_t)num_slots * slot_size;
}

/* Slot size for a send queue honouring max_sge and max_inline. */
static inline __u32 sr_sq_slot_size(__u32 max_sge, __u32 max_inline)
{
	__u32 payload = max_sge * (__u32)sizeof(struct softrnic_sge);

	if (max_inline > payload)
		payload = max_inline;
	return SR_ALIGN_UP((__u32)sizeof(struct softrnic_sqe) + payload,
			   SOFTRNIC_SLOT_ALIGN);
}

/* Slot size for a receive queue or SRQ honouring max_sge. */
static inline __u32 sr_rq_slot_size(__u32 max_sge)
{
	return SR_ALIGN_UP((__u32)sizeof(struct softrnic_rqe) +
			   max_sge * (__u32)sizeof(struct softrnic_sge),
			   SOFTRNIC_SLOT_ALIGN);
}

/* What is wrong with a WQE read from a ring. */
enum sr_wqe_error {
	SR_WQE_OK = 0,
	SR_WQE_BAD_OPCODE,
	SR_WQE_BAD_FLAGS,
	SR_WQE_TOO_MANY_SGE,
	SR_WQE_INLINE_TOO_LONG,
	SR_WQE_OPCODE_NOT_FOR_QP,
	SR_WQE_LENGTH_OVERFLOW,
};

enum sr_qp_kind {
	SR_QP_RC,
	SR_QP_UD,
};

struct sr_sq_limits {
	enum sr_qp_kind kind;
	__u32 max_sge;
	__u32 max_inline;
	__u32 slot_size;
};

#define SR_WQE_KNOWN_FLAGS (SOFTRNIC_WQE_F_SIGNALED | SOFTRNIC_WQE_F_SOLICITED | \
			    SOFTRNIC_WQE_F_FENCE | SOFTRNIC_WQE_F_INLINE)

static inline bool sr_opcode_allowed(__u8 opcode, enum sr_qp_kind kind)
{
	switch (opcode) {
	case SOFTRNIC_WR_SEND:
	case SOFTRNIC_WR_SEND_WITH_IMM:
		return true;
	case SOFTRNIC_WR_RDMA_WRITE:
	case SOFTRNIC_WR_RDMA_WRITE_WITH_IMM:
	case SOFTRNIC_WR_RDMA_READ:
	case SOFTRNIC_WR_ATOMIC_CMP_AND_SWP:
	case SOFTRNIC_WR_ATOMIC_FETCH_AND_ADD:
	case SOFTRNIC_WR_LOCAL_INV:
	case SOFTRNIC_WR_BIND_MW:
	case SOFTRNIC_WR_SEND_WITH_INV:
	case SOFTRNIC_WR_FLUSH:
	case SOFTRNIC_WR_ATOMIC_WRITE:
		return kind == SR_QP_RC;
	default:
		return false;	/* REG_MR never comes from a user ring */
	}
}

/* Inline payload length of a send WQE, by opcode family. */
static inline __u32 sr_sqe_inline_len(const struct softrnic_sqe *wqe,
				      enum sr_qp_kind kind)
{
	return kind == SR_QP_UD ? wqe->ud.inline_len : wqe->rdma.inline_len;
}

/*
 * Validate a send WQE that the caller has already copied out of the
 * shared ring (never call this on ring memory: the process could change
 * it between check and use).  SGE contents (keys, bounds) are checked
 * later against the MR table.
 */
static inline enum sr_wqe_error sr_sqe_check(const struct softrnic_sqe *wqe,
					     const struct sr_sq_limits *lim)
{
	__u32 room = lim->slot_size - (__u32)sizeof(*wqe);

	if (!sr_opcode_allowed(wqe->opcode, lim->kind))
		return SR_WQE_BAD_OPCODE;
	if (wqe->flags & ~SR_WQE_KNOWN_FLAGS)
		return SR_WQE_BAD_FLAGS;
	if (wqe->flags & SOFTRNIC_WQE_F_INLINE) {
		__u32 len = sr_sqe_inline_len(wqe, lim->kind);

		if (wqe->opcode != SOFTRNIC_WR_SEND &&
		    wqe->opcode != SOFTRNIC_WR_SEND_WITH_IMM &&
		    wqe->opcode != SOFTRNIC_WR_SEND_WITH_INV &&
		    wqe->opcode != SOFTRNIC_WR_RDMA_WRITE &&
		    wqe->opcode != SOFTRNIC_WR_RDMA_WRITE_WITH_IMM)
			return SR_WQE_OPCODE_NOT_FOR_QP;
		if (len > lim->max_inline || len > room)
			return SR_WQE_INLINE_TOO_LONG;
		return SR_WQE_OK;
	}
	if (wqe->num_sge > lim->max_sge ||
	    wqe->num_sge * sizeof(struct softrnic_sge) > room)
		return SR_WQE_TOO_MANY_SGE;
	return SR_WQE_OK;
}

/* Validate a receive WQE copied out of an RQ or SRQ ring. */
static inline enum sr_wqe_error sr_rqe_check(const struct softrnic_rqe *wqe,
					     __u32 max_sge, __u32 slot_size)
{
	if (wqe->num_sge > max_sge ||
	    sizeof(*wqe) + wqe->num_sge * sizeof(struct softrnic_sge) >
	    slot_size)
		return SR_WQE_TOO_MANY_SGE;
	return SR_WQE_OK;
}

/*
 * Total byte length of an SGE list, or -1 (as __u64 ~0) if it exceeds
 * max_len: a message length never wraps.
 */
static inline __u64 sr_sge_total(const struct softrnic_sge *sge, __u32 n,
				 __u64 max_len)
{
	__u64 total = 0;
	__u32 i;

	for (i = 0; i < n; i++) {
		total += sge[i].length;
		if (total > max_len)
			return ~0ULL;
	}
	return total;
}

/*
 * Consumer-side sanity of a producer counter: besides sr_ring_sane()
 * (prod - cons <= num_slots), the consumer's fetch cursor next, which lies
 * in [cons, prod] for a well-behaved producer, must not be ahead of prod.
 * cons is the oldest entry the consumer still owns (published), next the
 * next one it will read.
 */
static inline bool sr_ring_sane_fetch(__u32 prod, __u32 next, __u32 cons,
				      __u32 num_slots)
{
	return prod - cons <= num_slots && next - cons <= prod - cons;
}

/* Is counter c within [lo, hi) on the free-running 32-bit circle? */
static inline bool sr_counter_in(__u32 c, __u32 lo, __u32 hi)
{
	return c - lo < hi - lo;
}

/*
 * Does a new CQE satisfy the arm request in a CQ's uflags?  ARM_NEXT is
 * satisfied by any CQE; ARM_SOLICITED by a solicited CQE or by an
 * unsuccessful one (an error completion always wakes a solicited waiter).
 * Unknown uflags bits are ignored.
 */
static inline bool sr_cq_arm_hit(__u32 uflags, bool solicited, __u8 status)
{
	if (uflags & SOFTRNIC_CQ_ARM_NEXT)
		return true;
	return (uflags & SOFTRNIC_CQ_ARM_SOLICITED) && (solicited || status);
}

/*
 * SRQ limit: an armed limit (non-zero) fires once the number of posted
 * receive WQEs left after a consumption drops below it.
 */
static inline bool sr_srq_limit_hit(__u32 left, __u32 limit)
{
	return limit && left < limit;
}

/*
 * The CQE opcode reported for a send WQE, successful or flushed: the
 * class of the WR as posted.  Anything unknown reports as a send.
 */
static inline __u8 sr_wc_opcode_of_sqe(__u8 opcode)
{
	switch (opcode) {
	case SOFTRNIC_WR_RDMA_WRITE:
	case SOFTRNIC_WR_RDMA_WRITE_WITH_IMM:
		return SOFTRNIC_WC_RDMA_WRITE;
	case SOFTRNIC_WR_RDMA_READ:
		return SOFTRNIC_WC_RDMA_READ;
	case SOFTRNIC_WR_ATOMIC_CMP_AND_SWP:
		return SOFTRNIC_WC_COMP_SWAP;
	case SOFTRNIC_WR_ATOMIC_FETCH_AND_ADD:
		return SOFTRNIC_WC_FETCH_ADD;
	case SOFTRNIC_WR_LOCAL_INV:
		return SOFTRNIC_WC_LOCAL_INV;
	case SOFTRNIC_WR_BIND_MW:
		return SOFTRNIC_WC_BIND_MW;
	case SOFTRNIC_WR_FLUSH:
		return SOFTRNIC_WC_FLUSH;
	case SOFTRNIC_WR_ATOMIC_WRITE:
		return SOFTRNIC_WC_ATOMIC_WRITE;
	case SOFTRNIC_WR_REG_MR:
		return SOFTRNIC_WC_REG_MR;
	default:
		return SOFTRNIC_WC_SEND;
	}
}

/*
 * FLUSH WQE fields: type is a non-empty set of SOFTRNIC_FLUSH_GLOBAL and
 * SOFTRNIC_FLUSH_PERSISTENT (the IBV_FLUSH_* bits), level one of
 * SOFTRNIC_FLUSH_RANGE / SOFTRNIC_FLUSH_MR, and the length fits the
 * RETH's 32-bit DMA length.  Whether the responder can place as asked is
 * its business.
 */
static inline bool sr_flush_wqe_valid(__u8 type, __u8 level, __u64 length)
{
	return type && !(type & ~(SOFTRNIC_FLUSH_GLOBAL |
				  SOFTRNIC_FLUSH_PERSISTENT)) &&
	       level <= SOFTRNIC_FLUSH_MR && length <= 0xffffffffULL;
}

/* Send WQEs that the kernel executes itself, without the wire. */
static inline bool sr_sqe_is_local(__u8 opcode)
{
	return opcode == SOFTRNIC_WR_LOCAL_INV ||
	       opcode == SOFTRNIC_WR_BIND_MW ||
	       opcode == SOFTRNIC_WR_REG_MR;
}

/*
 * Ring geometry for a requested capacity: the number of slots (a power of
 * two >= want, at least 1), or 0 if want exceeds max.
 */
static inline __u32 sr_ring_slots_for(__u32 want, __u32 max)
{
	if (want > max)
		return 0;
	return sr_roundup_pow2(want ? want : 1);
}

/* What a slot of slot_size bytes can hold after a header of hdr bytes. */
static inline __u32 sr_slot_sge_cap(__u32 slot_size, __u32 hdr, __u32 max)
{
	__u32 n = (slot_size - hdr) / (__u32)sizeof(struct softrnic_sge);

	return n < max ? n : max;
}

static inline __u32 sr_slot_inline_cap(__u32 slot_size, __u32 max)
{
	__u32 n = slot_size - (__u32)sizeof(struct softrnic_sqe);

	return n < max ? n : max;
}

#endif /* SOFTRNIC_PROTO_RING_H */
