// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// 24-bit PSN / MSN arithmetic (kernel/proto/roce_psn.h), around the wrap
// at 2^24 and at the 2^23 half-way point.
#include <catch2/catch.hpp>

#include "roce_hdr.h" // same masks defined twice must not clash
#include "roce_psn.h"

TEST_CASE("PSN add and sub wrap at 2^24", "[roce_psn]")
{
	CHECK(roce_psn_add(0, 1) == 1);
	CHECK(roce_psn_add(0xffffff, 1) == 0);
	CHECK(roce_psn_next(0xffffff) == 0);
	CHECK(roce_psn_add(0xfffffe, 5) == 3);
	CHECK(roce_psn_add(0x123456, 0x1000000) == 0x123456);
	CHECK(roce_psn_add(0x123456, 0xffffffff) == 0x123455); // i.e. -1
	CHECK(roce_psn_sub(3, 0xfffffe) == 5);
	CHECK(roce_psn_sub(0xfffffe, 3) == 0xfffffb);
	CHECK(roce_psn_sub(7, 7) == 0);
}

TEST_CASE("PSN signed distance", "[roce_psn]")
{
	CHECK(roce_psn_diff(5, 3) == 2);
	CHECK(roce_psn_diff(3, 5) == -2);
	CHECK(roce_psn_diff(0, 0xffffff) == 1);
	CHECK(roce_psn_diff(0xffffff, 0) == -1);
	CHECK(roce_psn_diff(2, 0xfffffe) == 4);
	// half way: 2^23 ahead reads as 2^23 behind
	CHECK(roce_psn_diff(0x800000, 0) == -0x800000);
	CHECK(roce_psn_diff(0x7fffff, 0) == 0x7fffff);
	CHECK(roce_psn_diff(0, 0x800000) == -0x800000);
	CHECK(roce_psn_diff(0, 0x800001) == 0x7fffff);
	// bits above 24 are ignored
	CHECK(roce_psn_diff(0x01000005, 0xff000003) == 2);
	for (__u32 b : {0u, 1u, 0x7fffffu, 0x800000u, 0xfffff0u, 0xffffffu}) {
		for (__s32 d : {-0x800000, -0x7fffff, -1000, -1, 0, 1, 77, 0x7fffff}) {
			INFO("b " << b << " d " << d);
			__u32 a = roce_psn_add(b, __u32(d));
			CHECK(roce_psn_diff(a, b) == d);
		}
	}
}

TEST_CASE("PSN before/after across the wrap", "[roce_psn]")
{
	CHECK(roce_psn_before(0xffffff, 0));
	CHECK(roce_psn_after(0, 0xffffff));
	CHECK(roce_psn_before(0xfff000, 0x000100));
	CHECK_FALSE(roce_psn_before(0x000100, 0xfff000));
	CHECK_FALSE(roce_psn_before(5, 5));
	CHECK_FALSE(roce_psn_after(5, 5));
	CHECK(roce_psn_before_eq(5, 5));
	CHECK(roce_psn_after_eq(5, 5));
	CHECK(roce_psn_after_eq(0, 0xffffff));
	CHECK_FALSE(roce_psn_after_eq(0xffffff, 0));
	CHECK(roce_psn_before_eq(0xffffff, 0));
	// exactly half the space apart: a is "before" b, and b before a
	CHECK(roce_psn_before(0, 0x800000));
	CHECK(roce_psn_before(0x800000, 0));
}

TEST_CASE("PSN window membership", "[roce_psn]")
{
	// window of 4 starting 2 before the wrap: fffffe ffffff 0 1
	CHECK(roce_psn_in_window(0xfffffe, 0xfffffe, 4));
	CHECK(roce_psn_in_window(0xffffff, 0xfffffe, 4));
	CHECK(roce_psn_in_window(0, 0xfffffe, 4));
	CHECK(roce_psn_in_window(1, 0xfffffe, 4));
	CHECK_FALSE(roce_psn_in_window(2, 0xfffffe, 4));
	CHECK_FALSE(roce_psn_in_window(0xfffffd, 0xfffffe, 4));
	CHECK_FALSE(roce_psn_in_window(7, 7, 0)); // empty window
	CHECK(roce_psn_in_window(7, 7, 1));
	// the responder's duplicate window: the 2^23 PSNs before ePSN
	const __u32 epsn = 0x000010;
	const __u32 dup_start = roce_psn_add(epsn, __u32(-0x800000));
	CHECK(roce_psn_in_window(0x00000f, dup_start, 0x800000));
	CHECK(roce_psn_in_window(0x800010, dup_start, 0x800000));
	CHECK_FALSE(roce_psn_in_window(0x80000f, dup_start, 0x800000));
	CHECK_FALSE(roce_psn_in_window(epsn, dup_start, 0x800000));
	// 2^24 covers everything
	CHECK(roce_psn_in_window(0x123456, 0x654321, 0x1000000));
}

TEST_CASE("packets per message", "[roce_psn]")
{
	CHECK(roce_psn_count(0, 1024) == 1);
	CHECK(roce_psn_count(1, 1024) == 1);
	CHECK(roce_psn_count(1024, 1024) == 1);
	CHECK(roce_psn_count(1025, 1024) == 2);
	CHECK(roce_psn_count(4096, 256) == 16);
	CHECK(roce_psn_count(0x80000000U, 4096) == 0x80000);
	CHECK(roce_psn_count(0xffffffffU, 256) == 0x1000000);
}

TEST_CASE("MSN wraps at 2^24 like the PSN", "[roce_psn]")
{
	CHECK(roce_msn_next(0xffffff) == 0);
	CHECK(roce_msn_add(0xfffffe, 3) == 1);
	CHECK(roce_msn_diff(1, 0xffffff) == 2);
	CHECK(roce_msn_before(0xffffff, 1));
	CHECK_FALSE(roce_msn_before(1, 0xffffff));
	CHECK(ROCE_PSN_MASK == 0xffffffU);
	CHECK(ROCE_MSN_MASK == 0xffffffU);
}

TEST_CASE("outstanding PSNs stay below 2^23", "[roce_psn]")
{
	/* nothing outstanding: one message of up to 2^23 - 1 PSNs */
	CHECK(roce_psn_room(0x10, 0x10, ROCE_PSN_OUTSTANDING_MAX));
	CHECK_FALSE(roce_psn_room(0x10, 0x10, ROCE_SEQ_HALF));
	/* 2 GiB at path MTU 256 never fits */
	CHECK_FALSE(roce_psn_room(0, 0, roce_psn_count(1U << 31, 256)));
	/* across the 2^24 wrap: 0x20 + 0x10 outstanding */
	CHECK(roce_psn_room(0x20, 0xfffff0, ROCE_PSN_OUTSTANDING_MAX - 0x30));
	CHECK_FALSE(roce_psn_room(0x20, 0xfffff0, ROCE_PSN_OUTSTANDING_MAX - 0x2f));
	/* several large READs: the next waits until the first drained */
	uint32_t una = 0xabcdef, read = 1U << 21; /* 2 GiB / 1024 */
	uint32_t next = roce_psn_add(una, 3 * read);
	CHECK_FALSE(roce_psn_room(next, una, read));
	CHECK(roce_psn_room(next, roce_psn_add(una, read), read));
}
