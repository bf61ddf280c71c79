// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Memory key rules (kernel/proto/mem_check.h).
#include <catch2/catch.hpp>
#include <cstdint>

#include "mem_check.h"

static const __u64 U64MAX = ~(__u64)0;

TEST_CASE("keys pack index and key byte", "[mem]")
{
	REQUIRE(sr_mkey_make(1, 0) == 0x100);
	REQUIRE(sr_mkey_make(0x123456, 0x78) == 0x12345678U);
	REQUIRE(sr_mkey_index(0x12345678U) == 0x123456);
	REQUIRE(sr_mkey_byte(0x12345678U) == 0x78);
	REQUIRE(sr_mkey_make(SR_MKEY_INDEX_MAX, 0xff) == 0xffffffffU);
	REQUIRE(sr_mkey_with_byte(0x12345678U, 0x9a) == 0x1234569aU);

	// Key 0 and every key of index 0 are never valid.
	REQUIRE_FALSE(sr_mkey_index_valid(sr_mkey_index(0)));
	REQUIRE_FALSE(sr_mkey_index_valid(sr_mkey_index(0xff)));
	REQUIRE(sr_mkey_index_valid(sr_mkey_index(0x100)));
	REQUIRE_FALSE(sr_mkey_index_valid(SR_MKEY_INDEX_MAX + 1));
}

TEST_CASE("re-registration always changes the key byte", "[mem]")
{
	for (unsigned b = 0; b < 256; b++) {
		__u8 next = sr_mkey_next_byte((__u8)b);
		REQUIRE(next != b);
		REQUIRE(sr_mkey_with_byte(0x4200, next) != sr_mkey_make(0x42, (__u8)b));
	}
	REQUIRE(sr_mkey_next_byte(0xff) == 0);
}

TEST_CASE("access flags match the uverbs ABI numbering", "[mem]")
{
	// IB_UVERBS_ACCESS_* values (rdma/ib_user_ioctl_verbs.h).
	STATIC_REQUIRE(SR_ACCESS_LOCAL_WRITE == 1);
	STATIC_REQUIRE(SR_ACCESS_REMOTE_WRITE == 2);
	STATIC_REQUIRE(SR_ACCESS_REMOTE_READ == 4);
	STATIC_REQUIRE(SR_ACCESS_REMOTE_ATOMIC == 8);
	STATIC_REQUIRE(SR_ACCESS_MW_BIND == 16);
	STATIC_REQUIRE(SR_ACCESS_ZERO_BASED == 32);
	STATIC_REQUIRE(SR_ACCESS_ON_DEMAND == 64);
	STATIC_REQUIRE(SR_ACCESS_HUGETLB == 128);
	STATIC_REQUIRE(SR_ACCESS_RELAXED_ORDERING == (1U << 20));
	STATIC_REQUIRE(SR_ACCESS_OPTIONAL_RANGE == 0x3ff00000U);
	STATIC_REQUIRE(SR_ACCESS_SUPPORTED == 0x3ff000ffU);
}

TEST_CASE("registration access rules", "[mem]")
{
	REQUIRE(sr_mr_access_check(0) == SR_MEM_OK);
	REQUIRE(sr_mr_access_check(SR_ACCESS_LOCAL_WRITE) == SR_MEM_OK);
	REQUIRE(sr_mr_access_check(SR_ACCESS_REMOTE_READ) == SR_MEM_OK);
	REQUIRE(sr_mr_access_check(SR_ACCESS_LOCAL_WRITE | SR_ACCESS_REMOTE_WRITE |
				   SR_ACCESS_REMOTE_READ | SR_ACCESS_REMOTE_ATOMIC |
				   SR_ACCESS_MW_BIND | SR_ACCESS_ZERO_BASED |
				   SR_ACCESS_HUGETLB | SR_ACCESS_RELAXED_ORDERING) ==
		SR_MEM_OK);
	// Any optional bit is acceptable, even ones we do not know.
	REQUIRE(sr_mr_access_check(SR_ACCESS_OPTIONAL_LAST) == SR_MEM_OK);

	REQUIRE(sr_mr_access_check(SR_ACCESS_REMOTE_WRITE) ==
		SR_MEM_NEED_LOCAL_WRITE);
	REQUIRE(sr_mr_access_check(SR_ACCESS_REMOTE_ATOMIC) ==
		SR_MEM_NEED_LOCAL_WRITE);
	REQUIRE(sr_mr_access_check(SR_ACCESS_ON_DEMAND | SR_ACCESS_LOCAL_WRITE) ==
		SR_MEM_ODP);
	REQUIRE(sr_mr_access_check(1U << 8) == SR_MEM_BAD_FLAGS);
	REQUIRE(sr_mr_access_check(1U << 30) == SR_MEM_BAD_FLAGS);
	REQUIRE(sr_mr_access_check(0x80000000U) == SR_MEM_BAD_FLAGS);
}

TEST_CASE("registration ranges: size limit and wrap-around", "[mem]")
{
	const __u64 max = 1ULL << 40;

	REQUIRE(sr_mr_region_check(0x1000, 0, max) == SR_MEM_OK);
	REQUIRE(sr_mr_region_check(0, max, max) == SR_MEM_OK);
	REQUIRE(sr_mr_region_check(0, max + 1, max) == SR_MEM_TOO_LARGE);
	REQUIRE(sr_mr_region_check(U64MAX, 0, max) == SR_MEM_OK);
	REQUIRE(sr_mr_region_check(U64MAX, 1, max) == SR_MEM_WRAPS);
	REQUIRE(sr_mr_region_check(U64MAX - 0xfff, 0x1000, max) == SR_MEM_WRAPS);
	REQUIRE(sr_mr_region_check(U64MAX - 0x1000, 0x1000, max) == SR_MEM_OK);
	// The DMA MR: all of the address space.
	REQUIRE(sr_mr_region_check(0, U64MAX, U64MAX) == SR_MEM_OK);
}

TEST_CASE("access requests and grants", "[mem]")
{
	REQUIRE(sr_access_request_valid(0, false));
	REQUIRE(sr_access_request_valid(SR_ACCESS_LOCAL_WRITE, false));
	REQUIRE_FALSE(sr_access_request_valid(SR_ACCESS_REMOTE_READ, false));
	REQUIRE_FALSE(sr_access_request_valid(0, true));
	REQUIRE(sr_access_request_valid(SR_ACCESS_REMOTE_READ, true));
	REQUIRE(sr_access_request_valid(SR_ACCESS_REMOTE_WRITE | SR_ACCESS_REMOTE_ATOMIC, true));
	REQUIRE_FALSE(sr_access_request_valid(SR_ACCESS_LOCAL_WRITE, true));
	REQUIRE_FALSE(sr_access_request_valid(SR_ACCESS_REMOTE_READ | SR_ACCESS_MW_BIND, true));

	REQUIRE(sr_access_granted(SR_ACCESS_LOCAL_WRITE, 0));
	REQUIRE(sr_access_granted(SR_ACCESS_LOCAL_WRITE | SR_ACCESS_REMOTE_READ,
				  SR_ACCESS_REMOTE_READ));
	REQUIRE_FALSE(sr_access_granted(SR_ACCESS_REMOTE_READ, SR_ACCESS_REMOTE_WRITE));
	REQUIRE_FALSE(sr_access_granted(SR_ACCESS_REMOTE_READ,
					SR_ACCESS_REMOTE_READ | SR_ACCESS_REMOTE_ATOMIC));
	REQUIRE_FALSE(sr_access_granted(0, SR_ACCESS_LOCAL_WRITE));
}

TEST_CASE("bounds checks are overflow-safe", "[mem]")
{
	// MR [0x1000, 0x3000)
	REQUIRE(sr_range_within(0x1000, 0x2000, 0x1000, 0x2000));
	REQUIRE(sr_range_within(0x1000, 0x2000, 0x2fff, 1));
	REQUIRE(sr_range_within(0x1000, 0x2000, 0x3000, 0));
	REQUIRE_FALSE(sr_range_within(0x1000, 0x2000, 0x3000, 1));
	REQUIRE_FALSE(sr_range_within(0x1000, 0x2000, 0xfff, 1));
	REQUIRE_FALSE(sr_range_within(0x1000, 0x2000, 0x1000, 0x2001));
	REQUIRE_FALSE(sr_range_within(0x1000, 0x2000, 0x3001, 0));
	// Lengths that would wrap a naive va + vlen check.
	REQUIRE_FALSE(sr_range_within(0x1000, 0x2000, 0x1001, U64MAX));
	REQUIRE_FALSE(sr_range_within(0x1000, 0x2000, U64MAX, 2));
	REQUIRE_FALSE(sr_range_within(0, 0x2000, 0x10, U64MAX - 0x8));
	// Regions ending at the top of the address space.
	REQUIRE(sr_range_within(U64MAX - 0xff, 0xff, U64MAX - 1, 1));
	REQUIRE_FALSE(sr_range_within(U64MAX - 0xff, 0xff, U64MAX - 1, 2));
	// The DMA MR accepts everything that does not wrap.
	REQUIRE(sr_range_within(0, U64MAX, 0xffff888000000000ULL, 4096));
	REQUIRE_FALSE(sr_range_within(0, U64MAX, U64MAX, 1));
}

TEST_CASE("zero-length MRs accept only zero-length accesses at their iova", "[mem]")
{
	REQUIRE(sr_range_within(0x5000, 0, 0x5000, 0));
	REQUIRE_FALSE(sr_range_within(0x5000, 0, 0x5000, 1));
	REQUIRE_FALSE(sr_range_within(0x5000, 0, 0x5001, 0));
	REQUIRE_FALSE(sr_range_within(0x5000, 0, 0x4fff, 0));
}

TEST_CASE("translation to blocks", "[mem]")
{
	// User MR: user address 0x7f0000001234 registered at iova 0x1234
	// (so fbo = 0x234), 4 KiB pages.
	const __u64 fbo = 0x234, iova = 0x1234;
	__u64 off = sr_region_offset(iova, fbo, iova);
	REQUIRE(sr_block_index(off, 12) == 0);
	REQUIRE(sr_block_offset(off, 12) == 0x234);
	off = sr_region_offset(iova, fbo, iova + 0xdcc);
	REQUIRE(sr_block_index(off, 12) == 1);
	REQUIRE(sr_block_offset(off, 12) == 0);
	REQUIRE(sr_blocks_spanned(fbo, 0xdcc, 12) == 1);
	REQUIRE(sr_blocks_spanned(fbo, 0xdcd, 12) == 2);
	REQUIRE(sr_blocks_spanned(0, 0, 12) == 0);
	REQUIRE(sr_blocks_spanned(0, 1ULL << 40, 12) == (1ULL << 28));

	// Fast-reg MR whose iova carries ULP bits above the page offset
	// (xprtrdma stores the XID there): only iova mod block size matters.
	const __u64 frwr_iova = 0xabcd0000ffff8100ULL;
	const __u64 frwr_fbo = frwr_iova & 0xfff;
	off = sr_region_offset(frwr_iova, frwr_fbo, frwr_iova + 0x2000);
	REQUIRE(sr_block_index(off, 12) == 2);
	REQUIRE(sr_block_offset(off, 12) == 0x100);
}

TEST_CASE("atomic alignment", "[mem]")
{
	REQUIRE(sr_atomic_aligned(0));
	REQUIRE(sr_atomic_aligned(0x1008));
	for (__u64 a = 1; a < 8; a++)
		REQUIRE_FALSE(sr_atomic_aligned(0x1000 + a));
}

static sr_bind_req mr_window(int type, __u32 access, __u64 addr, __u64 len)
{
	sr_bind_req r{};
	r.mw_type = type;
	r.access = access;
	r.addr = addr;
	r.length = len;
	r.have_mr = true;
	r.mr_access = SR_ACCESS_LOCAL_WRITE | SR_ACCESS_MW_BIND;
	r.mr_iova = 0x10000;
	r.mr_length = 0x10000;
	return r;
}

TEST_CASE("memory window bind rules", "[mem]")
{
	auto ok = mr_window(SR_MW_TYPE_1, SR_ACCESS_REMOTE_WRITE, 0x10000, 0x10000);
	REQUIRE(sr_mw_bind_check(&ok) == SR_BIND_OK);
	auto ok2 = mr_window(SR_MW_TYPE_2, SR_ACCESS_REMOTE_READ | SR_ACCESS_ZERO_BASED,
			     0x18000, 0x100);
	REQUIRE(sr_mw_bind_check(&ok2) == SR_BIND_OK);

	// Type 1 unbind: zero length, no MR needed.
	auto unbind = mr_window(SR_MW_TYPE_1, 0, 0, 0);
	unbind.have_mr = false;
	REQUIRE(sr_mw_bind_check(&unbind) == SR_BIND_OK);

	auto zb1 = mr_window(SR_MW_TYPE_1, SR_ACCESS_ZERO_BASED, 0x10000, 1);
	REQUIRE(sr_mw_bind_check(&zb1) == SR_BIND_TYPE1_ZERO_BASED);
	auto t2empty = mr_window(SR_MW_TYPE_2, SR_ACCESS_REMOTE_READ, 0x10000, 0);
	REQUIRE(sr_mw_bind_check(&t2empty) == SR_BIND_TYPE2_NEEDS_MR);
	auto nomr = mr_window(SR_MW_TYPE_1, SR_ACCESS_REMOTE_READ, 0x10000, 1);
	nomr.have_mr = false;
	REQUIRE(sr_mw_bind_check(&nomr) == SR_BIND_NO_MR);

	auto bad = mr_window(SR_MW_TYPE_1, SR_ACCESS_MW_BIND, 0x10000, 1);
	REQUIRE(sr_mw_bind_check(&bad) == SR_BIND_BAD_ACCESS);
	auto lw = mr_window(SR_MW_TYPE_1, SR_ACCESS_LOCAL_WRITE | SR_ACCESS_REMOTE_READ,
			    0x10000, 1);
	REQUIRE(sr_mw_bind_check(&lw) == SR_BIND_OK);

	auto nobind = mr_window(SR_MW_TYPE_1, SR_ACCESS_REMOTE_READ, 0x10000, 1);
	nobind.mr_access = SR_ACCESS_LOCAL_WRITE | SR_ACCESS_REMOTE_READ;
	REQUIRE(sr_mw_bind_check(&nobind) == SR_BIND_MR_NO_BIND);

	auto ro = mr_window(SR_MW_TYPE_2, SR_ACCESS_REMOTE_ATOMIC, 0x10000, 8);
	ro.mr_access = SR_ACCESS_MW_BIND;
	REQUIRE(sr_mw_bind_check(&ro) == SR_BIND_MR_NOT_WRITABLE);
	ro.access = SR_ACCESS_REMOTE_READ;
	REQUIRE(sr_mw_bind_check(&ro) == SR_BIND_OK);

	auto zbmr = mr_window(SR_MW_TYPE_1, SR_ACCESS_REMOTE_READ, 0x10000, 1);
	zbmr.mr_access |= SR_ACCESS_ZERO_BASED;
	REQUIRE(sr_mw_bind_check(&zbmr) == SR_BIND_MR_ZERO_BASED);

	auto out = mr_window(SR_MW_TYPE_1, SR_ACCESS_REMOTE_READ, 0x1ffff, 2);
	REQUIRE(sr_mw_bind_check(&out) == SR_BIND_OUTSIDE_MR);
	auto wrap = mr_window(SR_MW_TYPE_2, SR_ACCESS_REMOTE_READ, 0x10001, U64MAX);
	REQUIRE(sr_mw_bind_check(&wrap) == SR_BIND_OUTSIDE_MR);
	auto below = mr_window(SR_MW_TYPE_2, SR_ACCESS_REMOTE_READ, 0xffff, 1);
	REQUIRE(sr_mw_bind_check(&below) == SR_BIND_OUTSIDE_MR);
}

TEST_CASE("remote access through a window", "[mem]")
{
	// VA-based window [0x18000, 0x18100).
	REQUIRE(sr_mw_range_within(false, 0x18000, 0x100, 0x18000, 0x100));
	REQUIRE_FALSE(sr_mw_range_within(false, 0x18000, 0x100, 0x0, 0x10));
	REQUIRE(sr_mw_to_mr_iova(false, 0x18000, 0x18010) == 0x18010);
	// Zero-based window: addresses 0..0x100 map to 0x18000..
	REQUIRE(sr_mw_range_within(true, 0x18000, 0x100, 0x0, 0x100));
	REQUIRE_FALSE(sr_mw_range_within(true, 0x18000, 0x100, 0x18000, 1));
	REQUIRE_FALSE(sr_mw_range_within(true, 0x18000, 0x100, 0xff, 2));
	REQUIRE(sr_mw_to_mr_iova(true, 0x18000, 0x10) == 0x18010);
}
