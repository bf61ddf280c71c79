/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What an RFC 7306 atomic request does to the 64-bit word it targets:
 * the responder reads the original value, stores iw_atomic_result() of it
 * (all under its atomics lock) and returns the original in the Atomic
 * Response.  The word is big endian in the wire's data; the caller
 * converts at the memory side.
 *
 *   FetchAdd          orig + add
 *   CmpSwap           orig == compare ? swap : orig
 *   Masked FetchAdd   orig + add, where a carry out of a bit set in the
 *                     add mask is dropped: the mask marks the top bit of
 *                     each independent field
 *   Masked CmpSwap    if (orig ^ compare) & compare_mask is 0, the bits
 *                     of swap under swap_mask replace those of orig
 *
 * The masks of the unmasked operations are ignored.  The Remote Tagged
 * Offset of every atomic must be 8-byte aligned (iw_atomic_aligned()).
 */
#ifndef SOFTRNIC_PROTO_IWARP_ATOMIC_H
#define SOFTRNIC_PROTO_IWARP_ATOMIC_H

#include "iwarp_hdr.h"

#define IW_ATOMIC_LEN	8

static inline bool iw_atomic_aligned(__u64 to)
{
	return (to & (IW_ATOMIC_LEN - 1)) == 0;
}

/*
 * Field-wise add: the bits under @top (each field's most significant bit)
 * are added without carry in from below being lost and without carry out
 * of them, so fields never spill into each other.
 */
static inline __u64 iw_masked_add(__u64 a, __u64 b, __u64 top)
{
	return ((a & ~top) + (b & ~top)) ^ ((a ^ b) & top);
}

/* The new value of the target word; @op is an enum iw_atomic_op (0-3). */
static inline __u64 iw_atomic_result(__u8 op, __u64 orig, __u64 add_swap,
				     __u64 add_swap_mask, __u64 compare,
				     __u64 compare_mask)
{
	switch (op) {
	case IW_ATOMIC_FETCH_ADD:
		return orig + add_swap;
	case IW_ATOMIC_CMP_SWAP:
		return orig == compare ? add_swap : orig;
	case IW_ATOMIC_MASKED_FETCH_ADD:
		return iw_masked_add(orig, add_swap, add_swap_mask);
	case IW_ATOMIC_MASKED_CMP_SWAP:
		if ((orig ^ compare) & compare_mask)
			return orig;
		return (orig & ~add_swap_mask) | (add_swap & add_swap_mask);
	default:	/* iw_parse() refuses other AOpCodes */
		return orig;
	}
}

#endif /* SOFTRNIC_PROTO_IWARP_ATOMIC_H */
