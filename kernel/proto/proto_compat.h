/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The few things the pure protocol headers (roce_*.h) need from their
 * environment, identical in softrnic.ko and in userspace (libsoftrnic,
 * host unit tests, fuzzers): fixed-width types, big-endian conversion,
 * packed structs, static asserts, memset/memcpy.
 *
 * Under __KERNEL__ everything maps onto the kernel's own helpers; in
 * userspace the byte swaps use compiler builtins so that no libc feature
 * macro (_DEFAULT_SOURCE for <endian.h>) is needed.
 */
#ifndef SOFTRNIC_PROTO_COMPAT_H
#define SOFTRNIC_PROTO_COMPAT_H

#include <linux/types.h>

#ifdef __KERNEL__
#include <linux/string.h>
#include <asm/byteorder.h>

#define sr_be16_to_cpu(x)	be16_to_cpu(x)
#define sr_be32_to_cpu(x)	be32_to_cpu(x)
#define sr_be64_to_cpu(x)	be64_to_cpu(x)
#define sr_cpu_to_be16(x)	cpu_to_be16(x)
#define sr_cpu_to_be32(x)	cpu_to_be32(x)
#define sr_cpu_to_be64(x)	cpu_to_be64(x)

#else /* !__KERNEL__ */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#if !defined(__BYTE_ORDER__) || !defined(__ORDER_LITTLE_ENDIAN__)
#error "proto_compat.h needs GCC or clang byte-order macros"
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SR_SWAP16(x)	__builtin_bswap16(x)
#define SR_SWAP32(x)	__builtin_bswap32(x)
#define SR_SWAP64(x)	__builtin_bswap64(x)
#else
#define SR_SWAP16(x)	(x)
#define SR_SWAP32(x)	(x)
#define SR_SWAP64(x)	(x)
#endif

static inline __u16 sr_be16_to_cpu(__be16 x)
{
	return (__u16)SR_SWAP16((__u16)x);
}

static inline __u32 sr_be32_to_cpu(__be32 x)
{
	return (__u32)SR_SWAP32((__u32)x);
}

static inline __u64 sr_be64_to_cpu(__be64 x)
{
	return (__u64)SR_SWAP64((__u64)x);
}

static inline __be16 sr_cpu_to_be16(__u16 x)
{
	return (__be16)SR_SWAP16(x);
}

static inline __be32 sr_cpu_to_be32(__u32 x)
{
	return (__be32)SR_SWAP32(x);
}

static inline __be64 sr_cpu_to_be64(__u64 x)
{
	return (__be64)SR_SWAP64(x);
}
#endif /* __KERNEL__ */

/* Wire structs: no padding, any alignment (the BTH sits at offset 42). */
#define SR_PACKED __attribute__((packed))

#ifdef __cplusplus
#define SR_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define SR_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#define SR_NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* A 32-bit value least significant byte first (CRC fields), any alignment. */
static inline void sr_put_le32(void *p, __u32 v)
{
	__u8 *b = (__u8 *)p;

	b[0] = (__u8)v;
	b[1] = (__u8)(v >> 8);
	b[2] = (__u8)(v >> 16);
	b[3] = (__u8)(v >> 24);
}

static inline __u32 sr_get_le32(const void *p)
{
	const __u8 *b = (const __u8 *)p;

	return (__u32)b[0] | (__u32)b[1] << 8 | (__u32)b[2] << 16 |
	       (__u32)b[3] << 24;
}

/*
 * Big-endian fields at any alignment, a byte at a time: for headers read
 * from or written into a byte stream (MPA, DDP, RDMAP), where no struct
 * overlay can be assumed aligned or even contiguous.
 */
static inline __u16 sr_get_be16(const __u8 *p)
{
	return (__u16)((__u16)p[0] << 8 | p[1]);
}

static inline __u32 sr_get_be32(const __u8 *p)
{
	return (__u32)p[0] << 24 | (__u32)p[1] << 16 | (__u32)p[2] << 8 |
	       p[3];
}

static inline __u64 sr_get_be64(const __u8 *p)
{
	return (__u64)sr_get_be32(p) << 32 | sr_get_be32(p + 4);
}

static inline void sr_put_be16(__u8 *p, __u16 v)
{
	p[0] = (__u8)(v >> 8);
	p[1] = (__u8)v;
}

static inline void sr_put_be32(__u8 *p, __u32 v)
{
	p[0] = (__u8)(v >> 24);
	p[1] = (__u8)(v >> 16);
	p[2] = (__u8)(v >> 8);
	p[3] = (__u8)v;
}

static inline void sr_put_be64(__u8 *p, __u64 v)
{
	sr_put_be32(p, (__u32)(v >> 32));
	sr_put_be32(p + 4, (__u32)v);
}

#endif /* SOFTRNIC_PROTO_COMPAT_H */
