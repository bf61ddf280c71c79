// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Translation between what the kernel reports and what verbs users see.
 * Pure functions: no libibverbs calls, no I/O, so the unit tests cover them
 * exhaustively.
 */
#ifndef SOFTRNIC_ATTR_H
#define SOFTRNIC_ATTR_H

#include <cstddef>
#include <cstdint>

#include "softrnic-abi.h"

namespace softrnic
{

enum class link_type : uint32_t {
	roce = SOFTRNIC_LINK_ROCE,
	iwarp = SOFTRNIC_LINK_IWARP,
};

const char *link_type_name(link_type t) noexcept;

/* What the provider keeps from the driver part of GET_CONTEXT. */
struct ucontext_params {
	link_type link = link_type::roce;
	uint32_t page_size = 0;
};

/*
 * Checks the kernel's softrnic_alloc_ucontext_resp.  Returns 0 and fills
 * out, or an errno with *why set to a static explanation:
 *   EPROTO  the kernel speaks another softrnic ABI version;
 *   EPROTO  unknown link type, or page size not a power of two >= 4096
 *           (the ring mmap()s of later verbs depend on it).
 */
int parse_ucontext_resp(const softrnic_alloc_ucontext_resp &resp, ucontext_params &out,
			const char **why) noexcept;

/*
 * ibv_device_attr::fw_ver from the 64-bit value the kernel reports:
 * "major.minor.sub" from bits 47..32, 31..16 and 15..0, the convention of
 * the software RDMA drivers.  Always NUL-terminated within len.
 */
void format_fw_ver(uint64_t raw, char *out, std::size_t len) noexcept;

} // namespace softrnic

#endif /* SOFTRNIC_ATTR_H */
