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
