/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * MPA FPDU framing (RFC 5044 section 4): ULPDU_Length (2 bytes, big
 * endian), the ULPDU (one DDP segment), 0-3 pad bytes so that length
 * field, ULPDU and pad are a multiple of 4, and the CRC32c field (4
 * bytes, sent even when CRC is off, then zero and ignored).  The CRC
 * covers everything before it, markers included.
 *
 * Markers (RFC 5044 section 4.3): when the receiving side asked for them,
 * a 4-byte marker (16 reserved zero bits, then FPDUPTR) sits at every
 * stream offset that is a multiple of 512, counted from the first byte
 * after the MPA Request/Reply frame of that direction.  FPDUPTR is the
 * distance back from the marker to the first byte of the FPDU it sits in;
 * a marker right at an FPDU's start belongs to that FPDU (FPDUPTR 0).
 * softrnic refuses markers (mpa_local.markers_ok), like siw, but the
 * arithmetic is here and tested so that the refusal is a choice.
 */
#ifndef SOFTRNIC_PROTO_IWARP_FPDU_H
#define SOFTRNIC_PROTO_IWARP_FPDU_H

#include "iwarp_crc32c.h"
#include "iwarp_hdr.h"

#define MPA_LEN_FIELD		2
#define MPA_MARKER_LEN		4
#define MPA_MARKER_SPACING	512
#define MPA_MAX_ULPDU		0xffffU
/* Bytes of an FPDU that are not ULPDU: length field, pad, CRC. */
#define MPA_FPDU_OVERHEAD_MAX	(MPA_LEN_FIELD + 3 + IW_CRC32C_LEN)

static inline __u32 mpa_pad_len(__u32 ulpdu_len)
{
	return (__u32)(-(MPA_LEN_FIELD + ulpdu_len)) & 3U;
}

/* FPDU length without markers: length field, ULPDU, pad, CRC. */
static inline __u32 mpa_fpdu_len(__u32 ulpdu_len)
{
	return MPA_LEN_FIELD + ulpdu_len + mpa_pad_len(ulpdu_len) +
	       IW_CRC32C_LEN;
}

/* Whether stream offset @off is where a marker goes. */
static inline bool mpa_is_marker_pos(__u64 off)
{
	return (off % MPA_MARKER_SPACING) == 0;
}

/* Offset of the first marker at or after stream offset @off. */
static inline __u64 mpa_next_marker(__u64 off)
{
	return (off + MPA_MARKER_SPACING - 1) / MPA_MARKER_SPACING *
	       MPA_MARKER_SPACING;
}

/*
 * Markers inside an FPDU of @len bytes (mpa_fpdu_len()) that starts at
 * stream offset @start (a multiple of 4 outside any marker): one at
 * @start if that is a marker position, then one per 508 FPDU bytes.
 */
static inline __u32 mpa_markers_in(__u64 start, __u32 len)
{
	__u64 before = mpa_next_marker(start) - start;

	if (len <= before)
		return 0;
	return 1 + (__u32)((len - before - 1) /
			   (MPA_MARKER_SPACING - MPA_MARKER_LEN));
}

/* Wire length of such an FPDU, markers included. */
static inline __u32 mpa_fpdu_wire_len(__u64 start, __u32 ulpdu_len,
				      bool markers)
{
	__u32 len = mpa_fpdu_len(ulpdu_len);

	return len + (markers ? MPA_MARKER_LEN * mpa_markers_in(start, len) :
		      0);
}

static inline void mpa_marker_put(__u8 *p, __u16 fpduptr)
{
	p[0] = 0;
	p[1] = 0;
	p[2] = (__u8)(fpduptr >> 8);
	p[3] = (__u8)fpduptr;
}

/* Write the length field that starts an FPDU of @ulpdu_len bytes. */
static inline void mpa_fpdu_put_len(void *buf, __u32 ulpdu_len)
{
	__u8 *b = (__u8 *)buf;

	b[0] = (__u8)(ulpdu_len >> 8);
	b[1] = (__u8)ulpdu_len;
}

/*
 * Bytes of the FPDU after its ULPDU: pad and CRC field.  For an FPDU that
 * is not in one buffer (a zero-copy payload between a header and this
 * tail), @crc is the raw CRC register (iw_crc32c_begin(), then
 * iw_crc32c_update() over the length field and the ULPDU); the pad is
 * folded in here.  Writes mpa_pad_len(@ulpdu_len) zero bytes and the CRC
 * field (0 unless @crc_on) to @tail and returns how many.
 */
static inline __u32 mpa_fpdu_tail(void *tail, __u32 ulpdu_len, bool crc_on,
				  __u32 crc)
{
	__u8 *t = (__u8 *)tail;
	__u32 pad = mpa_pad_len(ulpdu_len);

	memset(t, 0, pad);
	if (crc_on)
		crc = iw_crc32c_final(iw_crc32c_update(crc, t, pad));
	iw_crc32c_put(t + pad, crc_on ? crc : 0);
	return pad + IW_CRC32C_LEN;
}

/*
 * Frame the @ulpdu_len bytes at @buf + MPA_LEN_FIELD in place: write the
 * length field, zero pad and the CRC field (CRC32c when @crc, else 0).
 * @buf has room for mpa_fpdu_len(@ulpdu_len) bytes.  No markers (see
 * mpa_fpdu_add_markers()).  Returns the FPDU length, 0 if @ulpdu_len is
 * above MPA_MAX_ULPDU.
 */
static inline __u32 mpa_fpdu_frame(void *buf, __u32 ulpdu_len, bool crc)
{
	__u8 *b = (__u8 *)buf;
	__u32 end = MPA_LEN_FIELD + ulpdu_len;

	if (ulpdu_len > MPA_MAX_ULPDU)
		return 0;
	mpa_fpdu_put_len(b, ulpdu_len);
	return end + mpa_fpdu_tail(b + end, ulpdu_len, crc,
				   crc ? iw_crc32c_update(iw_crc32c_begin(),
							  b, end) : 0);
}

/*
 * Copy the marker-free FPDU @src (@len bytes) that starts at stream
 * offset @start into @dst, inserting markers, and recompute its CRC field
 * over what goes on the wire when @crc.  @dst has room for
 * @len + MPA_MARKER_LEN * mpa_markers_in(@start, @len) bytes.  Returns the
 * wire length, or 0 if a marker would sit further than 65535 bytes into
 * the FPDU (FPDUPTR is 16 bits).
 */
static inline __u32 mpa_fpdu_add_markers(void *dst, const void *src,
					 __u32 len, __u64 start, bool crc)
{
	const __u8 *s = (const __u8 *)src;
	__u8 *d = (__u8 *)dst;
	__u64 pos = start;
	__u32 done = 0, out = 0;

	if (len < IW_CRC32C_LEN)
		return 0;
	while (done < len) {
		__u32 chunk;

		if (mpa_is_marker_pos(pos)) {
			if (pos - start > 0xffff)
				return 0;
			mpa_marker_put(d + out, (__u16)(pos - start));
			out += MPA_MARKER_LEN;
			pos += MPA_MARKER_LEN;
		}
		/* pos is past any marker here: the next one is ahead */
		chunk = (__u32)(mpa_next_marker(pos) - pos);
		if (chunk > len - done)
			chunk = len - done;
		memcpy(d + out, s + done, chunk);
		out += chunk;
		pos += chunk;
		done += chunk;
	}
	/* the last marker-free 4 bytes are the CRC field, never split */
	if (crc)
		iw_crc32c_put(d + out - IW_CRC32C_LEN,
			      iw_crc32c(d, out - IW_CRC32C_LEN));
	return out;
}

enum mpa_fpdu_err {
	MPA_FPDU_OK		= 0,
	MPA_ERR_TRUNCATED	= -1,	/* not a whole FPDU */
	MPA_ERR_LENGTH		= -2,	/* ULPDU_Length below a DDP header or
					 * above the limit */
	MPA_ERR_CRC		= -3,
	MPA_ERR_MARKER		= -4,	/* reserved bits or FPDUPTR wrong */
};

#define MPA_FPDU_NR_REASONS	5

static inline const char *mpa_fpdu_err_name(int err)
{
	switch (err) {
	case MPA_FPDU_OK:	return "ok";
	case MPA_ERR_TRUNCATED:	return "truncated";
	case MPA_ERR_LENGTH:	return "length";
	case MPA_ERR_CRC:	return "crc";
	case MPA_ERR_MARKER:	return "marker";
	default:		return "unknown";
	}
}

/*
 * Check one linear, marker-free FPDU of exactly @len bytes: a length
 * field that accounts for @len, a ULPDU of at least a tagged DDP header
 * and at most @max_ulpdu, and the CRC when @crc.  Returns the ULPDU length
 * (the ULPDU starts at @buf + MPA_LEN_FIELD) or a negative enum
 * mpa_fpdu_err.  Pad bytes are not looked at.
 */
static inline int mpa_fpdu_check(const void *buf, size_t len, bool crc,
				 __u32 max_ulpdu)
{
	const __u8 *b = (const __u8 *)buf;
	__u32 ulpdu, end;

	if (len < MPA_LEN_FIELD)
		return MPA_ERR_TRUNCATED;
	ulpdu = sr_get_be16(b);
	if (ulpdu < IW_TAGGED_HDR_LEN || ulpdu > max_ulpdu)
		return MPA_ERR_LENGTH;
	if (len != mpa_fpdu_len(ulpdu))
		return MPA_ERR_TRUNCATED;
	end = (__u32)len - IW_CRC32C_LEN;
	if (crc && iw_crc32c(b, end) != iw_crc32c_get(b + end))
		return MPA_ERR_CRC;
	return (int)ulpdu;
}

#endif /* SOFTRNIC_PROTO_IWARP_FPDU_H */
