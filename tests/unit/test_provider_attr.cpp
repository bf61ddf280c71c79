// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Provider: what we accept from the kernel at GET_CONTEXT, how attributes
// are rendered, and where the driver-specific data sits in the buffers the
// ibv_cmd_* helpers split.
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

#include "attr.h"
#include "softrnic-abi.h"
#include "uverbs_cmd.h"

using namespace softrnic;

namespace
{

softrnic_alloc_ucontext_resp good_resp()
{
	softrnic_alloc_ucontext_resp r{};
	r.abi_version = SOFTRNIC_UVERBS_ABI_VERSION;
	r.link_type = SOFTRNIC_LINK_ROCE;
	r.page_size = 4096;
	return r;
}

} // namespace

TEST_CASE("provider: a well-formed context response is kept", "[provider][attr]")
{
	auto r = good_resp();
	ucontext_params p;
	const char *why = "unset";
	REQUIRE(parse_ucontext_resp(r, p, &why) == 0);
	CHECK(why == nullptr);
	CHECK(p.link == link_type::roce);
	CHECK(p.page_size == 4096);

	r.link_type = SOFTRNIC_LINK_IWARP;
	r.page_size = 65536;
	REQUIRE(parse_ucontext_resp(r, p, nullptr) == 0);
	CHECK(p.link == link_type::iwarp);
	CHECK(p.page_size == 65536);
}

TEST_CASE("provider: context responses from another ABI are refused", "[provider][attr]")
{
	ucontext_params p;
	p.page_size = 1234; /* must stay untouched on failure */
	const char *why = nullptr;

	auto r = good_resp();
	r.abi_version = SOFTRNIC_UVERBS_ABI_VERSION + 1;
	CHECK(parse_ucontext_resp(r, p, &why) == EPROTO);
	REQUIRE(why != nullptr);
	CHECK(std::string(why).find("ABI") != std::string::npos);

	/* a kernel that wrote nothing (old module, wrong driver) */
	softrnic_alloc_ucontext_resp zero{};
	CHECK(parse_ucontext_resp(zero, p, &why) == EPROTO);
	CHECK(std::string(why).find("no softrnic context data") != std::string::npos);
	CHECK(p.page_size == 1234);
}

TEST_CASE("provider: unknown link types and bad page sizes are refused", "[provider][attr]")
{
	ucontext_params p;
	const char *why = nullptr;
	auto r = good_resp();

	for (uint32_t lt : {0u, 3u, 0xffffffffu}) {
		r.link_type = lt;
		CHECK(parse_ucontext_resp(r, p, &why) == EPROTO);
	}
	r = good_resp();
	for (uint32_t ps : {0u, 1u, 2048u, 4095u, 4097u, 12288u, 0x80000001u}) {
		r.page_size = ps;
		INFO("page size " << ps);
		CHECK(parse_ucontext_resp(r, p, &why) == EPROTO);
	}
	for (uint32_t ps : {4096u, 16384u, 65536u, 0x80000000u}) {
		r.page_size = ps;
		INFO("page size " << ps);
		CHECK(parse_ucontext_resp(r, p, &why) == 0);
	}
}

TEST_CASE("provider: link type names", "[provider][attr]")
{
	CHECK(std::string(link_type_name(link_type::roce)) == "RoCE");
	CHECK(std::string(link_type_name(link_type::iwarp)) == "iWARP");
	CHECK(std::string(link_type_name(static_cast<link_type>(9))) == "unknown");
}

TEST_CASE("provider: firmware version rendering", "[provider][attr]")
{
	char buf[64];
	format_fw_ver(0, buf, sizeof(buf));
	CHECK(std::string(buf) == "0.0.0");
	format_fw_ver((uint64_t{1} << 32) | (2u << 16) | 3u, buf, sizeof(buf));
	CHECK(std::string(buf) == "1.2.3");
	/* bits above 47 are not part of the version */
	format_fw_ver(0xffff'ffff'ffff'ffffull, buf, sizeof(buf));
	CHECK(std::string(buf) == "65535.65535.65535");

	char tiny[4];
	std::memset(tiny, 'x', sizeof(tiny));
	format_fw_ver(0x0001'0002'0003ull, tiny, sizeof(tiny));
	CHECK(tiny[3] == '\0');
	CHECK(std::string(tiny) == "1.2");
	format_fw_ver(1, nullptr, 0); /* must not crash */
}

TEST_CASE("provider: driver data follows the core command records", "[provider][abi]")
{
	/* what the kernel sees as udata: in = cmd_size - sizeof(core),
	 * out = resp_size - sizeof(core resp) */
	STATIC_REQUIRE(sizeof(cmd::get_context_req) - sizeof(struct ibv_get_context) == 0);
	STATIC_REQUIRE(sizeof(cmd::get_context_resp) - sizeof(ib_uverbs_get_context_resp) ==
		       sizeof(softrnic_alloc_ucontext_resp));
	STATIC_REQUIRE(offsetof(cmd::get_context_resp, drv) == 8);

	STATIC_REQUIRE(sizeof(cmd::alloc_pd_req) - sizeof(struct ibv_alloc_pd) == 0);
	STATIC_REQUIRE(sizeof(cmd::alloc_pd_resp) - sizeof(ib_uverbs_alloc_pd_resp) ==
		       sizeof(softrnic_alloc_pd_resp));
	STATIC_REQUIRE(offsetof(cmd::alloc_pd_resp, drv) == 4);

	cmd::get_context_resp r{};
	CHECK(reinterpret_cast<char *>(r.core()) == reinterpret_cast<char *>(&r));
}
