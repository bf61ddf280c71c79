/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Memory key rules shared by softrnic.ko, libsoftrnic and the host unit
 * tests: key packing, access-flag rules, overflow-safe bounds checks,
 * address translation and memory window bind rules.  Pure functions only,
 * no kernel or libc dependency.  Documentation/memory.md explains the
 * model; kernel/mem.h is the kernel API built on top of this.
 */
#ifndef SOFTRNIC_PROTO_MEM_CHECK_H
#define SOFTRNIC_PROTO_MEM_CHECK_H

#include <linux/types.h>

#ifndef __KERNEL__
#include <stdbool.h>
#endif

/*
 * ---------------------------------------------------------------------
 * Keys.  lkey == rkey == index << 8 | key byte.  The index names a slot of
 * the device's key table and is never 0, so key 0 (and every key below
 * 0x100) is never valid.  The key byte changes whenever the object behind
 * the index is re-registered, fast-registered or (for MWs) rebound, so a
 * stale key stops matching.
 * ---------------------------------------------------------------------
 */
#define SR_MKEY_BYTE_BITS	8
#define SR_MKEY_BYTE_MASK	0xffU
#define SR_MKEY_INDEX_MIN	1U
#define SR_MKEY_INDEX_MAX	0xffffffU

static inline __u32 sr_mkey_make(__u32 index, __u8 byte)
{
	return (index << SR_MKEY_BYTE_BITS) | byte;
}

static inline __u32 sr_mkey_index(__u32 key)
{
	return key >> SR_MKEY_BYTE_BITS;
}

static inline __u8 sr_mkey_byte(__u32 key)
{
	return (__u8)(key & SR_MKEY_BYTE_MASK);
}

/* A key with the same index as @key and key byte @byte. */
static inline __u32 sr_mkey_with_byte(__u32 key, __u8 byte)
{
	return (key & ~SR_MKEY_BYTE_MASK) | byte;
}

/* Key byte after a re-registration: always differs from the old one. */
static inline __u8 sr_mkey_next_byte(__u8 byte)
{
	return (__u8)(byte + 1);
}

static inline bool sr_mkey_index_valid(__u32 index)
{
	return index >= SR_MKEY_INDEX_MIN && index <= SR_MKEY_INDEX_MAX;
}

/*
 * ---------------------------------------------------------------------
 * Access flags: numerically IB_UVERBS_ACCESS_* (and the kernel's
 * IB_ACCESS_*; mr.c checks that at build time).
 * ---------------------------------------------------------------------
 */
#define SR_ACCESS_LOCAL_WRITE		(1U << 0)
#define SR_ACCESS_REMOTE_WRITE		(1U << 1)
#define SR_ACCESS_REMOTE_READ		(1U << 2)
#define SR_ACCESS_REMOTE_ATOMIC		(1U << 3)
#define SR_ACCESS_MW_BIND		(1U << 4)
#define SR_ACCESS_ZERO_BASED		(1U << 5)
#define SR_ACCESS_ON_DEMAND		(1U << 6)
#define SR_ACCESS_HUGETLB		(1U << 7)
#define SR_ACCESS_OPTIONAL_FIRST	(1U << 20)
#define SR_ACCESS_OPTIONAL_LAST		(1U << 29)
#define SR_ACCESS_RELAXED_ORDERING	SR_ACCESS_OPTIONAL_FIRST
#define SR_ACCESS_OPTIONAL_RANGE \
	(((SR_ACCESS_OPTIONAL_LAST << 1) - 1) & ~(SR_ACCESS_OPTIONAL_FIRST - 1))
/* Everything a registration may carry (IB_ACCESS_SUPPORTED). */
#define SR_ACCESS_SUPPORTED \
	(((SR_ACCESS_HUGETLB << 1) - 1) | SR_ACCESS_OPTIONAL_RANGE)
#define SR_ACCESS_REMOTE \
	(SR_ACCESS_REMOTE_WRITE | SR_ACCESS_REMOTE_READ | SR_ACCESS_REMOTE_ATOMIC)

enum sr_mem_error {
	SR_MEM_OK = 0,
	SR_MEM_BAD_FLAGS,		/* unknown access bit */
	SR_MEM_NEED_LOCAL_WRITE,	/* remote write/atomic w/o local write */
	SR_MEM_ODP,			/* on-demand paging: not supported */
	SR_MEM_TOO_LARGE,		/* length above the device maximum */
	SR_MEM_WRAPS,			/* iova + length wraps around 2^64 */
};

/*
 * Access flags of a registration (reg_mr, rereg_mr, fast-reg).  Every
 * defined flag is accepted except ON_DEMAND: we pin, we never fault in.
 * ZERO_BASED and HUGETLB are hints with no effect on an MR (the iova the
 * caller chose is the MR's address space); RELAXED_ORDERING and the rest
 * of the optional range may be ignored by definition.
 */
static inline enum sr_mem_error sr_mr_access_check(__u32 access)
{
	if (access & ~SR_ACCESS_SUPPORTED)
		return SR_MEM_BAD_FLAGS;
	if (access & SR_ACCESS_ON_DEMAND)
		return SR_MEM_ODP;
	if ((access & (SR_ACCESS_REMOTE_WRITE | SR_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & SR_ACCESS_LOCAL_WRITE))
		return SR_MEM_NEED_LOCAL_WRITE;
	return SR_MEM_OK;
}

/*
 * The address range of a registration: at most @max_size bytes, and
 * [iova, iova + length) must not wrap.  Length 0 is a legal MR.
 */
static inline enum sr_mem_error sr_mr_region_check(__u64 iova, __u64 length,
						   __u64 max_size)
{
	if (length > max_size)
		return SR_MEM_TOO_LARGE;
	if (length > ~(__u64)0 - iova)
		return SR_MEM_WRAPS;
	return SR_MEM_OK;
}

/*
 * What an access asks for.  Local (lkey) accesses ask for nothing
 * (read: send, RDMA WRITE source) or LOCAL_WRITE (receive, RDMA READ
 * response, atomic result).  Remote (rkey) accesses ask for one or more
 * REMOTE_* rights and nothing else.
 */
static inline bool sr_access_request_valid(__u32 need, bool remote)
{
	if (remote)
		return need && !(need & ~SR_ACCESS_REMOTE);
	return !(need & ~SR_ACCESS_LOCAL_WRITE);
}

static inline bool sr_access_granted(__u32 have, __u32 need)
{
	return !(need & ~have);
}

/*
 * Does [va, va + vlen) lie inside [base, base + len)?  Overflow-safe for
 * every input: nothing is ever added before it is known not to wrap.  A
 * zero-length access matches anywhere in [base, base + len], so a
 * zero-length MR accepts exactly zero-length accesses at its iova.
 */
static inline bool sr_range_within(__u64 base, __u64 len, __u64 va,
				   __u64 vlen)
{
	__u64 off;

	if (va < base)
		return false;
	off = va - base;
	return off <= len && vlen <= len - off;
}

/*
 * Translation.  A region maps [iova, iova + length) onto a list of equal
 * blocks (pages) whose first block holds the region's first byte at
 * offset @fbo (first byte offset).  For a user MR the blocks are pages and
 * fbo is the page offset of the user address; for a fast-registered MR
 * the blocks are the page list's and fbo is iova modulo the block size
 * (the iova may carry ULP bits above the block offset, e.g. xprtrdma's
 * XID, so it is never used as an address).  Only valid for a @va that
 * sr_range_within() accepted.
 */
static inline __u64 sr_region_offset(__u64 iova, __u64 fbo, __u64 va)
{
	return fbo + (va - iova);
}

static inline __u64 sr_block_index(__u64 offset, unsigned int block_shift)
{
	return offset >> block_shift;
}

static inline __u64 sr_block_offset(__u64 offset, unsigned int block_shift)
{
	return offset & ((1ULL << block_shift) - 1);
}

/* Number of blocks of 2^shift bytes that [fbo, fbo + length) touches. */
static inline __u64 sr_blocks_spanned(__u64 fbo, __u64 length,
				      unsigned int block_shift)
{
	if (!length)
		return 0;
	return ((fbo + length - 1) >> block_shift) + 1;
}

/* 8-byte atomics need a naturally aligned address (IBTA, RFC 7306). */
#define SR_ATOMIC_SIZE 8

static inline bool sr_atomic_aligned(__u64 va)
{
	return !(va & (SR_ATOMIC_SIZE - 1));
}

/*
 * ---------------------------------------------------------------------
 * Memory windows.
 * ---------------------------------------------------------------------
 */
#define SR_MW_TYPE_1	1
#define SR_MW_TYPE_2	2

/* Rights a window may grant.  LOCAL_WRITE is tolerated and ignored. */
#define SR_MW_BIND_ACCESS \
	(SR_ACCESS_REMOTE | SR_ACCESS_ZERO_BASED)

enum sr_bind_error {
	SR_BIND_OK = 0,
	SR_BIND_BAD_ACCESS,		/* flag a window cannot grant */
	SR_BIND_TYPE1_ZERO_BASED,	/* o10-36.2.2 */
	SR_BIND_TYPE2_NEEDS_MR,		/* o10-37.2.40: no MR or length 0 */
	SR_BIND_NO_MR,			/* non-empty window without an MR */
	SR_BIND_MR_ZERO_BASED,		/* window over a zero-based MR */
	SR_BIND_MR_NO_BIND,		/* C10-73: MR lacks MW_BIND */
	SR_BIND_MR_NOT_WRITABLE,	/* C10-74: writable window, RO MR */
	SR_BIND_OUTSIDE_MR,		/* C10-75 */
};

struct sr_bind_req {
	int mw_type;			/* SR_MW_TYPE_* */
	__u32 access;			/* rights the window grants */
	__u64 addr;			/* window start, in the MR's iova space */
	__u64 length;			/* 0 unbinds a type 1 window */
	bool have_mr;
	__u32 mr_access;
	__u64 mr_iova;
	__u64 mr_length;
};

static inline enum sr_bind_error sr_mw_bind_check(const struct sr_bind_req *r)
{
	if (r->access & ~(SR_MW_BIND_ACCESS | SR_ACCESS_LOCAL_WRITE))
		return SR_BIND_BAD_ACCESS;
	if (r->mw_type == SR_MW_TYPE_1 && (r->access & SR_ACCESS_ZERO_BASED))
		return SR_BIND_TYPE1_ZERO_BASED;
	if (r->mw_type == SR_MW_TYPE_2 && (!r->have_mr || !r->length))
		return SR_BIND_TYPE2_NEEDS_MR;
	if (!r->length)
		return SR_BIND_OK;	/* type 1 unbind: no MR involved */
	if (!r->have_mr)
		return SR_BIND_NO_MR;
	if (r->mr_access & SR_ACCESS_ZERO_BASED)
		return SR_BIND_MR_ZERO_BASED;
	if (!(r->mr_access & SR_ACCESS_MW_BIND))
		return SR_BIND_MR_NO_BIND;
	if ((r->access & (SR_ACCESS_REMOTE_WRITE | SR_ACCESS_REMOTE_ATOMIC)) &&
	    !(r->mr_access & SR_ACCESS_LOCAL_WRITE))
		return SR_BIND_MR_NOT_WRITABLE;
	if (!sr_range_within(r->mr_iova, r->mr_length, r->addr, r->length))
		return SR_BIND_OUTSIDE_MR;
	return SR_BIND_OK;
}

/*
 * Remote access through a bound window: is [va, va + vlen) inside it, and
 * where is va in the MR's iova space?  A zero-based window starts at
 * address 0; a VA-based one at its bind address.
 */
static inline bool sr_mw_range_within(bool zero_based, __u64 addr,
				      __u64 length, __u64 va, __u64 vlen)
{
	return sr_range_within(zero_based ? 0 : addr, length, va, vlen);
}

static inline __u64 sr_mw_to_mr_iova(bool zero_based, __u64 addr, __u64 va)
{
	return zero_based ? addr + va : va;
}

#endif /* SOFTRNIC_PROTO_MEM_CHECK_H */
