// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The ABI header must have one layout on every ABI the kernel supports.
#include <catch2/catch.hpp>
#include <cstddef>

#include "softrnic-abi.h"

TEST_CASE("ABI structs are padded to 8 bytes", "[abi]")
{
	STATIC_REQUIRE(sizeof(softrnic_alloc_ucontext_resp) % 8 == 0);
	STATIC_REQUIRE(sizeof(softrnic_alloc_pd_resp) % 8 == 0);
	STATIC_REQUIRE(offsetof(softrnic_alloc_ucontext_resp, page_size) == 8);
}

TEST_CASE("Ring ABI layouts are fixed", "[abi]")
{
	STATIC_REQUIRE(sizeof(softrnic_ring_ctrl) == SOFTRNIC_RING_CTRL_SIZE);
	STATIC_REQUIRE(offsetof(softrnic_ring_ctrl, cons) == 64);
	STATIC_REQUIRE(offsetof(softrnic_ring_ctrl, kflags) == 128);
	STATIC_REQUIRE(offsetof(softrnic_ring_ctrl, uflags) == 192);
	STATIC_REQUIRE(sizeof(softrnic_sge) == 16);
	STATIC_REQUIRE(sizeof(softrnic_sqe) == 64);
	STATIC_REQUIRE(sizeof(softrnic_rqe) == 16);
	STATIC_REQUIRE(sizeof(softrnic_cqe) == 64);
	STATIC_REQUIRE(sizeof(softrnic_ring_info) == 24);
	STATIC_REQUIRE(sizeof(softrnic_create_qp_resp) % 8 == 0);
	STATIC_REQUIRE(sizeof(softrnic_create_cq_resp) % 8 == 0);
	STATIC_REQUIRE(sizeof(softrnic_create_srq_resp) % 8 == 0);
}
