/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCEv2 Invariant CRC (IBTA vol 1 annex A17, "RoCEv2"): the CRC-32 of
 * Ethernet (polynomial 0x04C11DB7, bit-reflected, register preset to all
 * ones, result inverted) computed over
 *
 *   8 bytes of 0xff             standing in for the LRH of native IB
 *   the IP header               IPv4: TOS, TTL, header checksum set to 1s
 *                               IPv6: traffic class, flow label, hop limit
 *                                     set to 1s
 *   the UDP header              checksum set to 1s
 *   the BTH                     byte 4 (FECN, BECN, resv6) set to 1s
 *   the rest of the packet      extension headers, payload and pad, up to
 *                               the ICRC itself
 *
 * i.e. over everything a router may rewrite in flight replaced by ones.
 * The ICRC travels least significant byte first: the 32-bit result of a
 * standard CRC-32 (zlib's crc32()) stored little endian.  A ConnectX-4 Lx
 * CNP whose CRC-32 is 0x2a00fd82 carries the bytes 82 fd 00 2a.
 *
 * The running value between roce_icrc_begin() and roce_icrc_final() is
 * the raw CRC register (no inversion), exactly what the kernel's
 * crc32_le() takes and returns, so a caller can feed an skb's fragments
 * one by one.  The kernel uses crc32_le(); userspace a table of its own.
 */
#ifndef SOFTRNIC_PROTO_ROCE_ICRC_H
#define SOFTRNIC_PROTO_ROCE_ICRC_H

#include "roce_hdr.h"

#ifdef __KERNEL__
#include <linux/crc32.h>
#endif

#define ROCE_IPV4_HDR_LEN	20
#define ROCE_IPV6_HDR_LEN	40
#define ROCE_UDP_HDR_LEN	8

/* CRC register after the all-ones preset and the 8 bytes of masked LRH. */
#define ROCE_ICRC_SEED		0xdebb20e3U

#ifdef __KERNEL__
static inline __u32 roce_crc32_update(__u32 crc, const void *p, size_t len)
{
	return crc32_le(crc, (const unsigned char *)p, len);
}
#else
#include "crc_reflected.h"

/* Reflected CRC-32 (0xEDB88320), one table lookup per byte. */
static inline __u32 roce_crc32_update(__u32 crc, const void *p, size_t len)
{
	static const __u32 tab[256] = {
		0x00000000U, 0x77073096U, 0xee0e612cU, 0x990951baU,
		0x076dc419U, 0x706af48fU, 0xe963a535U, 0x9e6495a3U,
		0x0edb8832U, 0x79dcb8a4U, 0xe0d5e91eU, 0x97d2d988U,
		0x09b64c2bU, 0x7eb17cbdU, 0xe7b82d07U, 0x90bf1d91U,
		0x1db71064U, 0x6ab020f2U, 0xf3b97148U, 0x84be41deU,
		0x1adad47dU, 0x6ddde4ebU, 0xf4d4b551U, 0x83d385c7U,
		0x136c9856U, 0x646ba8c0U, 0xfd62f97aU, 0x8a65c9ecU,
		0x14015c4fU, 0x63066cd9U, 0xfa0f3d63U, 0x8d080df5U,
		0x3b6e20c8U, 0x4c69105eU, 0xd56041e4U, 0xa2677172U,
		0x3c03e4d1U, 0x4b04d447U, 0xd20d85fdU, 0xa50ab56bU,
		0x35b5a8faU, 0x42b2986cU, 0xdbbbc9d6U, 0xacbcf940U,
		0x32d86ce3U, 0x45df5c75U, 0xdcd60dcfU, 0xabd13d59U,
		0x26d930acU, 0x51de003aU, 0xc8d75180U, 0xbfd06116U,
		0x21b4f4b5U, 0x56b3c423U, 0xcfba9599U, 0xb8bda50fU,
		0x2802b89eU, 0x5f058808U, 0xc60cd9b2U, 0xb10be924U,
		0x2f6f7c87U, 0x58684c11U, 0xc1611dabU, 0xb6662d3dU,
		0x76dc4190U, 0x01db7106U, 0x98d220bcU, 0xefd5102aU,
		0x71b18589U, 0x06b6b51fU, 0x9fbfe4a5U, 0xe8b8d433U,
		0x7807c9a2U, 0x0f00f934U, 0x9609a88eU, 0xe10e9818U,
		0x7f6a0dbbU, 0x086d3d2dU, 0x91646c97U, 0xe6635c01U,
		0x6b6b51f4U, 0x1c6c6162U, 0x856530d8U, 0xf262004eU,
		0x6c0695edU, 0x1b01a57bU, 0x8208f4c1U, 0xf50fc457U,
		0x65b0d9c6U, 0x12b7e950U, 0x8bbeb8eaU, 0xfcb9887cU,
		0x62dd1ddfU, 0x15da2d49U, 0x8cd37cf3U, 0xfbd44c65U,
		0x4db26158U, 0x3ab551ceU, 0xa3bc0074U, 0xd4bb30e2U,
		0x4adfa541U, 0x3dd895d7U, 0xa4d1c46dU, 0xd3d6f4fbU,
		0x4369e96aU, 0x346ed9fcU, 0xad678846U, 0xda60b8d0U,
		0x44042d73U, 0x33031de5U, 0xaa0a4c5fU, 0xdd0d7cc9U,
		0x5005713cU, 0x270241aaU, 0xbe0b1010U, 0xc90c2086U,
		0x5768b525U, 0x206f85b3U, 0xb966d409U, 0xce61e49fU,
		0x5edef90eU, 0x29d9c998U, 0xb0d09822U, 0xc7d7a8b4U,
		0x59b33d17U, 0x2eb40d81U, 0xb7bd5c3bU, 0xc0ba6cadU,
		0xedb88320U, 0x9abfb3b6U, 0x03b6e20cU, 0x74b1d29aU,
		0xead54739U, 0x9dd277afU, 0x04db2615U, 0x73dc1683U,
		0xe3630b12U, 0x94643b84U, 0x0d6d6a3eU, 0x7a6a5aa8U,
		0xe40ecf0bU, 0x9309ff9dU, 0x0a00ae27U, 0x7d079eb1U,
		0xf00f9344U, 0x8708a3d2U, 0x1e01f268U, 0x6906c2feU,
		0xf762575dU, 0x806567cbU, 0x196c3671U, 0x6e6b06e7U,
		0xfed41b76U, 0x89d32be0U, 0x10da7a5aU, 0x67dd4accU,
		0xf9b9df6fU, 0x8ebeeff9U, 0x17b7be43U, 0x60b08ed5U,
		0xd6d6a3e8U, 0xa1d1937eU, 0x38d8c2c4U, 0x4fdff252U,
		0xd1bb67f1U, 0xa6bc5767U, 0x3fb506ddU, 0x48b2364bU,
		0xd80d2bdaU, 0xaf0a1b4cU, 0x36034af6U, 0x41047a60U,
		0xdf60efc3U, 0xa867df55U, 0x316e8eefU, 0x4669be79U,
		0xcb61b38cU, 0xbc66831aU, 0x256fd2a0U, 0x5268e236U,
		0xcc0c7795U, 0xbb0b4703U, 0x220216b9U, 0x5505262fU,
		0xc5ba3bbeU, 0xb2bd0b28U, 0x2bb45a92U, 0x5cb36a04U,
		0xc2d7ffa7U, 0xb5d0cf31U, 0x2cd99e8bU, 0x5bdeae1dU,
		0x9b64c2b0U, 0xec63f226U, 0x756aa39cU, 0x026d930aU,
		0x9c0906a9U, 0xeb0e363fU, 0x72076785U, 0x05005713U,
		0x95bf4a82U, 0xe2b87a14U, 0x7bb12baeU, 0x0cb61b38U,
		0x92d28e9bU, 0xe5d5be0dU, 0x7cdcefb7U, 0x0bdbdf21U,
		0x86d3d2d4U, 0xf1d4e242U, 0x68ddb3f8U, 0x1fda836eU,
		0x81be16cdU, 0xf6b9265bU, 0x6fb077e1U, 0x18b74777U,
		0x88085ae6U, 0xff0f6a70U, 0x66063bcaU, 0x11010b5cU,
		0x8f659effU, 0xf862ae69U, 0x616bffd3U, 0x166ccf45U,
		0xa00ae278U, 0xd70dd2eeU, 0x4e048354U, 0x3903b3c2U,
		0xa7672661U, 0xd06016f7U, 0x4969474dU, 0x3e6e77dbU,
		0xaed16a4aU, 0xd9d65adcU, 0x40df0b66U, 0x37d83bf0U,
		0xa9bcae53U, 0xdebb9ec5U, 0x47b2cf7fU, 0x30b5ffe9U,
		0xbdbdf21cU, 0xcabac28aU, 0x53b39330U, 0x24b4a3a6U,
		0xbad03605U, 0xcdd70693U, 0x54de5729U, 0x23d967bfU,
		0xb3667a2eU, 0xc4614ab8U, 0x5d681b02U, 0x2a6f2b94U,
		0xb40bbe37U, 0xc30c8ea1U, 0x5a05df1bU, 0x2d02ef8dU,
	};

	return sr_crc_reflected_update(tab, crc, p, len);
}
#endif

/*
 * Set to ones the fields of an IP header copy that the ICRC leaves out.
 * @len may be shorter than the fixed header (only what is there is
 * touched); IPv4 options and IPv6 extension headers are not masked.
 */
static inline void roce_icrc_mask_l3(__u8 *ip, size_t len, bool ipv6)
{
	static const __u8 v4[] = { 1, 8, 10, 11 };	/* TOS, TTL, checksum */
	static const __u8 v6[] = { 1, 2, 3, 7 };	/* TC+FL bytes, hop limit */
	const __u8 *off = ipv6 ? v6 : v4;
	unsigned int i;

	/* IPv6 byte 0: version in the high nibble, TC high nibble below */
	if (ipv6 && len > 0)
		ip[0] |= 0x0f;
	for (i = 0; i < 4; i++)
		if (off[i] < len)
			ip[off[i]] = 0xff;
}

/*
 * Same for a copy of the UDP header and the BTH that follows it (20
 * bytes, or fewer: only what is there is touched).
 */
static inline void roce_icrc_mask_udp_bth(__u8 *udp_bth, size_t len)
{
	static const __u8 off[] = {
		6, 7,				/* UDP checksum */
		ROCE_UDP_HDR_LEN + 4,		/* BTH FECN, BECN, resv6 */
	};
	unsigned int i;

	for (i = 0; i < SR_NELEM(off); i++)
		if (off[i] < len)
			udp_bth[off[i]] = 0xff;
}

/*
 * Start an ICRC: the masked LRH, the IP header at @l3 (@l3_len bytes:
 * ihl * 4 for IPv4, 40 plus any extension headers for IPv6) and the
 * first @len bytes (at most 20: UDP header and BTH) at @udp_bth.
 * Continue with roce_icrc_update() from the byte after the BTH.
 */
static inline __u32 roce_icrc_begin(const void *l3, size_t l3_len, bool ipv6,
				    const void *udp_bth, size_t len)
{
	__u8 tmp[ROCE_IPV6_HDR_LEN];
	size_t n = l3_len < sizeof(tmp) ? l3_len : sizeof(tmp);
	__u32 crc = ROCE_ICRC_SEED;

	memcpy(tmp, l3, n);
	roce_icrc_mask_l3(tmp, n, ipv6);
	crc = roce_crc32_update(crc, tmp, n);
	crc = roce_crc32_update(crc, (const __u8 *)l3 + n, l3_len - n);

	n = len < ROCE_UDP_HDR_LEN + ROCE_BTH_LEN ?
	    len : ROCE_UDP_HDR_LEN + ROCE_BTH_LEN;
	memcpy(tmp, udp_bth, n);
	roce_icrc_mask_udp_bth(tmp, n);
	return roce_crc32_update(crc, tmp, n);
}

static inline __u32 roce_icrc_update(__u32 crc, const void *p, size_t len)
{
	return roce_crc32_update(crc, p, len);
}

static inline __u32 roce_icrc_final(__u32 crc)
{
	return ~crc;
}

/*
 * ICRC of a linear packet: IP header at @l3, UDP header at @udp followed
 * by BTH and the rest, @len bytes from the UDP header up to (not
 * including) the ICRC.
 */
static inline __u32 roce_icrc(const void *l3, size_t l3_len, bool ipv6,
			      const void *udp, size_t len)
{
	size_t head = len < ROCE_UDP_HDR_LEN + ROCE_BTH_LEN ?
		      len : ROCE_UDP_HDR_LEN + ROCE_BTH_LEN;
	__u32 crc = roce_icrc_begin(l3, l3_len, ipv6, udp, head);

	crc = roce_icrc_update(crc, (const __u8 *)udp + head, len - head);
	return roce_icrc_final(crc);
}

/*
 * The headers of segment @idx (@len bytes of UDP payload, BTH to ICRC) of
 * a run of packets sent as one UDP GSO packet (SKB_GSO_UDP_L4): what
 * segmentation writes into its copies of the run's headers, and so what
 * that packet's ICRC covers.  @l3 is the run's IP header (IPv4 without
 * options); @seg_l3 and @seg_udp are copies of the run's IP and UDP
 * headers that get the segment's IPv4 total length and Identification
 * (the run's plus @idx, as inet_gso_segment() numbers them) or IPv6
 * payload length, and UDP length.
 */
static inline void roce_icrc_seg_hdrs(const __u8 *l3, __u8 *seg_l3, bool ipv6,
				      __u8 *seg_udp, __u32 idx, __u32 len)
{
	__u32 ulen = ROCE_UDP_HDR_LEN + len;

	if (ipv6) {
		seg_l3[4] = (__u8)(ulen >> 8);
		seg_l3[5] = (__u8)ulen;
	} else {
		__u32 tot = ROCE_IPV4_HDR_LEN + ulen;
		__u16 id = (__u16)((((__u32)l3[4] << 8) | l3[5]) + idx);

		seg_l3[2] = (__u8)(tot >> 8);
		seg_l3[3] = (__u8)tot;
		seg_l3[4] = (__u8)(id >> 8);
		seg_l3[5] = (__u8)id;
	}
	seg_udp[4] = (__u8)(ulen >> 8);
	seg_udp[5] = (__u8)ulen;
}

/* The ICRC field in wire order (least significant byte first). */
static inline void roce_icrc_put(void *p, __u32 icrc)
{
	sr_put_le32(p, icrc);
}

static inline __u32 roce_icrc_get(const void *p)
{
	return sr_get_le32(p);
}

/*
 * Compute and store the ICRC of a linear packet whose UDP datagram
 * (header, BTH, ..., 4 bytes for the ICRC) is @udp_len bytes at @udp.
 * Returns false if the datagram cannot hold a UDP header, BTH and ICRC.
 */
static inline bool roce_icrc_fill(const void *l3, size_t l3_len, bool ipv6,
				  void *udp, size_t udp_len)
{
	size_t len;

	if (udp_len < ROCE_UDP_HDR_LEN + ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return false;
	len = udp_len - ROCE_ICRC_LEN;
	roce_icrc_put((__u8 *)udp + len, roce_icrc(l3, l3_len, ipv6, udp, len));
	return true;
}

/* Whether the ICRC at the end of a linear packet's UDP datagram is right. */
static inline bool roce_icrc_check(const void *l3, size_t l3_len, bool ipv6,
				   const void *udp, size_t udp_len)
{
	size_t len;

	if (udp_len < ROCE_UDP_HDR_LEN + ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return false;
	len = udp_len - ROCE_ICRC_LEN;
	return roce_icrc(l3, l3_len, ipv6, udp, len) ==
	       roce_icrc_get((const __u8 *)udp + len);
}

#endif /* SOFTRNIC_PROTO_ROCE_ICRC_H */
