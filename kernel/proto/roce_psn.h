/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * 24-bit sequence arithmetic for the IBTA Packet Sequence Number and
 * Message Sequence Number.  Both wrap at 2^24; a distance is read as a
 * signed 24-bit number, so of two PSNs the "earlier" is the one less than
 * 2^23 behind the other (IBTA 9.7.1: a responder treats the 2^23 PSNs
 * before the expected one as duplicates and the rest as invalid).
 */
#ifndef SOFTRNIC_PROTO_ROCE_PSN_H
#define SOFTRNIC_PROTO_ROCE_PSN_H

#include "proto_compat.h"

#define ROCE_SEQ_BITS		24
#define ROCE_SEQ_MASK		0xffffffU
#define ROCE_SEQ_HALF		0x800000U	/* 2^23 */

/*
 * PSNs a requester may have outstanding (sent or reserved, not yet
 * acknowledged) at most: beyond 2^23 - 1, signed distances between them
 * wrap (IBTA 9.7.1).
 */
#define ROCE_PSN_OUTSTANDING_MAX	(ROCE_SEQ_HALF - 1)

/* Same definitions as roce_hdr.h (identical redefinition is fine). */
#define ROCE_PSN_MASK		0xffffffU
#define ROCE_MSN_MASK		0xffffffU

/* @psn + @n modulo 2^24. */
static inline __u32 roce_psn_add(__u32 psn, __u32 n)
{
	return (psn + n) & ROCE_PSN_MASK;
}

static inline __u32 roce_psn_next(__u32 psn)
{
	return roce_psn_add(psn, 1);
}

/* @a - @b modulo 2^24, as an unsigned distance in [0, 2^24). */
static inline __u32 roce_psn_sub(__u32 a, __u32 b)
{
	return (a - b) & ROCE_PSN_MASK;
}

/*
 * Signed distance from @b to @a in [-2^23, 2^23): positive when @a is
 * after @b.  Computed without shifting into the sign bit.
 */
static inline __s32 roce_psn_diff(__u32 a, __u32 b)
{
	__u32 d = roce_psn_sub(a, b);

	return d & ROCE_SEQ_HALF ? (__s32)d - (__s32)(ROCE_SEQ_MASK + 1) :
				   (__s32)d;
}

static inline bool roce_psn_before(__u32 a, __u32 b)
{
	return roce_psn_diff(a, b) < 0;
}

static inline bool roce_psn_after(__u32 a, __u32 b)
{
	return roce_psn_diff(a, b) > 0;
}

/* @a is @b or later. */
static inline bool roce_psn_after_eq(__u32 a, __u32 b)
{
	return roce_psn_diff(a, b) >= 0;
}

/* @a is @b or earlier. */
static inline bool roce_psn_before_eq(__u32 a, __u32 b)
{
	return roce_psn_diff(a, b) <= 0;
}

/*
 * @psn is one of the @len PSNs starting at @start (wrapping at 2^24).
 * A @len of 2^24 or more covers every PSN.
 */
static inline bool roce_psn_in_window(__u32 psn, __u32 start, __u32 len)
{
	return roce_psn_sub(psn, start) < len;
}

/*
 * May a requester whose PSNs [@una, @next) are outstanding (sent or
 * reserved by a WQE it took) take @npkts more?  Only while all of them
 * stay within ROCE_PSN_OUTSTANDING_MAX.
 */
static inline bool roce_psn_room(__u32 next, __u32 una, __u32 npkts)
{
	return (__u64)roce_psn_sub(next, una) + npkts <=
	       ROCE_PSN_OUTSTANDING_MAX;
}

/* Number of PSNs a message of @len bytes takes at path MTU @pmtu. */
static inline __u32 roce_psn_count(__u32 len, __u32 pmtu)
{
	if (!len || !pmtu)
		return 1;	/* zero-length messages still take one packet */
	return len / pmtu + (len % pmtu ? 1 : 0);
}

/* MSN: 24 bits, counts completed messages on the responder side. */
static inline __u32 roce_msn_add(__u32 msn, __u32 n)
{
	return (msn + n) & ROCE_MSN_MASK;
}

static inline __u32 roce_msn_next(__u32 msn)
{
	return roce_msn_add(msn, 1);
}

static inline __s32 roce_msn_diff(__u32 a, __u32 b)
{
	return roce_psn_diff(a, b);
}

static inline bool roce_msn_before(__u32 a, __u32 b)
{
	return roce_msn_diff(a, b) < 0;
}

#endif /* SOFTRNIC_PROTO_ROCE_PSN_H */
