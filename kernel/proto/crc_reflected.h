/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The userspace half of the wire CRCs (roce_icrc.h's CRC-32, iwarp_crc32c.h's
 * CRC32c): a bit-reflected CRC register advanced one byte per lookup in a
 * 256-entry table of its polynomial.  The kernel uses its own crc32_le()
 * and crc32c() instead, which take and return the same raw register.
 */
#ifndef SOFTRNIC_PROTO_CRC_REFLECTED_H
#define SOFTRNIC_PROTO_CRC_REFLECTED_H

#include "proto_compat.h"

static inline __u32 sr_crc_reflected_update(const __u32 tab[256], __u32 crc,
					    const void *p, size_t len)
{
	const __u8 *b = (const __u8 *)p;

	while (len--)
		crc = tab[(crc ^ *b++) & 0xff] ^ (crc >> 8);
	return crc;
}

#endif /* SOFTRNIC_PROTO_CRC_REFLECTED_H */
