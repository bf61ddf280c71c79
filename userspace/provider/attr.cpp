// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "attr.h"

#include <cerrno>
#include <cstdio>

namespace softrnic
{

const char *link_type_name(link_type t) noexcept
{
	switch (t) {
	case link_type::roce:
		return "RoCE";
	case link_type::iwarp:
		return "iWARP";
	}
	return "unknown";
}

int parse_ucontext_resp(const softrnic_alloc_ucontext_resp &resp, ucontext_params &out,
			const char **why) noexcept
{
	const char *dummy;
	if (!why)
		why = &dummy;

	if (resp.abi_version != SOFTRNIC_UVERBS_ABI_VERSION) {
		*why = resp.abi_version == 0 ? "kernel sent no softrnic context data"
					     : "kernel context uses another softrnic ABI version";
		return EPROTO;
	}

	ucontext_params p;
	switch (resp.link_type) {
	case SOFTRNIC_LINK_ROCE:
		p.link = link_type::roce;
		break;
	case SOFTRNIC_LINK_IWARP:
		p.link = link_type::iwarp;
		break;
	default:
		*why = "kernel reported an unknown link type";
		return EPROTO;
	}

	const uint32_t ps = resp.page_size;
	if (ps < 4096 || (ps & (ps - 1)) != 0) {
		*why = "kernel reported a page size that is not a power of two >= 4096";
		return EPROTO;
	}
	p.page_size = ps;

	out = p;
	*why = nullptr;
	return 0;
}

void format_fw_ver(uint64_t raw, char *out, std::size_t len) noexcept
{
	if (!out || len == 0)
		return;
	const unsigned major = static_cast<unsigned>((raw >> 32) & 0xffff);
	const unsigned minor = static_cast<unsigned>((raw >> 16) & 0xffff);
	const unsigned sub = static_cast<unsigned>(raw & 0xffff);
	std::snprintf(out, len, "%u.%u.%u", major, minor, sub);
}

} // namespace softrnic
