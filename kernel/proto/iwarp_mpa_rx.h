/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Incremental receiver of an MPA FPDU stream (iwarp_fpdu.h): takes the
 * TCP byte stream after the MPA Reply/Request frame in whatever pieces it
 * arrives and reports, one event per call:
 *
 *   MPA_RX_HDR   the FPDU's DDP/RDMAP headers (iw_hdr_len_of() bytes, or
 *                the whole ULPDU if shorter) are complete in rx->hdr;
 *   MPA_RX_DATA  ev.len ULPDU bytes at ULPDU offset ev.off, pointing into
 *                the caller's buffer: placed straight from there, never
 *                copied by the parser;
 *   MPA_RX_FPDU  the FPDU ended, its CRC (if on) and markers checked out;
 *   MPA_RX_MORE  all input consumed, nothing else to report;
 *
 * or a negative enum mpa_fpdu_err, after which the stream is dead (MPA
 * cannot resynchronise without markers) and every later call returns the
 * same error.  Only the length field, the headers (at most
 * IW_MAX_HDR_LEN bytes), markers, pad and CRC are copied.  The CRC of an
 * FPDU is known only at its end, after its data events: a receiver places
 * data as it comes (into memory the headers' STag allows) and completes
 * nothing before MPA_RX_FPDU.  The events are the same whatever the
 * splits of the input (tests/fuzz/fuzz_iwarp_stream.cpp).
 *
 * With rx->caller_crcs_data the parser leaves the data bytes out of the
 * CRC and the caller folds each MPA_RX_DATA slice in with
 * mpa_rx_crc_data() before its next call (one pass: copy and CRC).
 */
#ifndef SOFTRNIC_PROTO_IWARP_MPA_RX_H
#define SOFTRNIC_PROTO_IWARP_MPA_RX_H

#include "iwarp_fpdu.h"

enum mpa_rx_event {
	MPA_RX_MORE	= 0,
	MPA_RX_HDR	= 1,
	MPA_RX_DATA	= 2,
	MPA_RX_FPDU	= 3,
};

enum mpa_rx_state {
	MPA_RX_S_LEN,		/* ULPDU_Length */
	MPA_RX_S_HDR,		/* DDP/RDMAP headers into rx->hdr */
	MPA_RX_S_DATA,		/* the rest of the ULPDU */
	MPA_RX_S_TRAILER,	/* pad and CRC */
};

struct mpa_rx {
	/* set before the first byte (mpa_rx_init()) */
	bool	crc;			/* check the CRC field */
	bool	markers;		/* the peer inserts markers */
	bool	caller_crcs_data;
	__u32	max_ulpdu;		/* at most MPA_MAX_ULPDU */

	/* running state */
	int	err;			/* sticky error, 0 while alive */
	__u8	state;			/* enum mpa_rx_state */
	bool	in_fpdu;
	__u8	in_marker;		/* marker bytes collected */
	__u64	pos;			/* stream offset of the next byte */
	__u64	fpdu_start;		/* stream offset of this FPDU */
	__u32	crc_reg;
	__u32	ulpdu_len;
	__u32	off;			/* ULPDU bytes handed out so far */
	__u32	got;			/* bytes of the current field */
	__u32	hdr_want;
	__u32	hdr_len;
	__u8	lenbuf[MPA_LEN_FIELD];
	__u8	marker[MPA_MARKER_LEN];
	__u8	trailer[3 + IW_CRC32C_LEN];
	__u8	hdr[IW_MAX_HDR_LEN];
};

struct mpa_rx_ev {
	const __u8	*data;		/* MPA_RX_DATA */
	__u32		len;
	__u32		off;		/* offset in the ULPDU */
	__u32		ulpdu_len;	/* every event but MORE */
};

static inline void mpa_rx_init(struct mpa_rx *rx, bool crc, bool markers,
			       __u32 max_ulpdu)
{
	memset(rx, 0, sizeof(*rx));
	rx->crc = crc;
	rx->markers = markers;
	rx->max_ulpdu = max_ulpdu > MPA_MAX_ULPDU ? MPA_MAX_ULPDU : max_ulpdu;
}

static inline void mpa_rx_crc_data(struct mpa_rx *rx, const void *p,
				   size_t len)
{
	if (rx->crc)
		rx->crc_reg = iw_crc32c_update(rx->crc_reg, p, len);
}

static inline int mpa_rx_fail(struct mpa_rx *rx, int err, size_t used,
			      size_t *usedp)
{
	rx->err = err;
	*usedp = used;
	return err;
}

/*
 * Copy up to @want - rx->got of the @n bytes at @p to @dst + rx->got (a
 * small field being collected), into the CRC if @crc; returns how many.
 */
static inline size_t mpa_rx_collect(struct mpa_rx *rx, __u8 *dst, __u32 want,
				    const __u8 *p, size_t n, bool crc)
{
	size_t take = want - rx->got;

	if (take > n)
		take = n;
	memcpy(dst + rx->got, p, take);
	if (crc)
		mpa_rx_crc_data(rx, p, take);
	rx->got += (__u32)take;
	rx->pos += take;
	return take;
}

/* Take the marker bytes at @p (@n available); false if it is wrong. */
static inline bool mpa_rx_marker(struct mpa_rx *rx, const __u8 *p, size_t n,
				 size_t *take)
{
	__u64 mpos;

	*take = MPA_MARKER_LEN - rx->in_marker;
	if (*take > n)
		*take = n;
	memcpy(rx->marker + rx->in_marker, p, *take);
	mpa_rx_crc_data(rx, p, *take);
	rx->in_marker += (__u8)*take;
	rx->pos += *take;
	if (rx->in_marker < MPA_MARKER_LEN)
		return true;
	rx->in_marker = 0;
	mpos = rx->pos - MPA_MARKER_LEN;
	return rx->marker[0] == 0 && rx->marker[1] == 0 &&
	       mpos - rx->fpdu_start <= 0xffff &&
	       sr_get_be16(rx->marker + 2) == (__u16)(mpos - rx->fpdu_start);
}

/*
 * Consume from the @len bytes at @buf up to the next event; *@used says
 * how many were taken (the caller passes the rest again).  See the top of
 * the file for the events.
 */
static inline int mpa_rx_next(struct mpa_rx *rx, const void *buf, size_t len,
			      size_t *used, struct mpa_rx_ev *ev)
{
	const __u8 *b = (const __u8 *)buf;
	size_t i = 0;

	memset(ev, 0, sizeof(*ev));
	if (rx->err) {
		*used = 0;
		return rx->err;
	}
	while (i < len) {
		const __u8 *p = b + i;
		size_t n = len - i, take;

		if (!rx->in_fpdu) {
			rx->in_fpdu = true;
			rx->fpdu_start = rx->pos;
			rx->crc_reg = iw_crc32c_begin();
			rx->state = MPA_RX_S_LEN;
			rx->got = 0;
		}
		if (rx->markers &&
		    (rx->in_marker || mpa_is_marker_pos(rx->pos))) {
			if (!mpa_rx_marker(rx, p, n, &take))
				return mpa_rx_fail(rx, MPA_ERR_MARKER, i + take,
						   used);
			i += take;
			continue;
		}
		if (rx->markers) {
			__u64 gap = mpa_next_marker(rx->pos) - rx->pos;

			if (n > gap)
				n = (size_t)gap;
		}
		ev->ulpdu_len = rx->ulpdu_len;

		switch (rx->state) {
		case MPA_RX_S_LEN:
			i += mpa_rx_collect(rx, rx->lenbuf, MPA_LEN_FIELD, p, n,
					    true);
			if (rx->got < MPA_LEN_FIELD)
				break;
			rx->ulpdu_len = sr_get_be16(rx->lenbuf);
			if (rx->ulpdu_len < IW_TAGGED_HDR_LEN ||
			    rx->ulpdu_len > rx->max_ulpdu)
				return mpa_rx_fail(rx, MPA_ERR_LENGTH, i, used);
			rx->state = MPA_RX_S_HDR;
			rx->got = 0;
			rx->off = 0;
			rx->hdr_want = 2;	/* the control bytes first */
			rx->hdr_len = 0;
			break;

		case MPA_RX_S_HDR:
			i += mpa_rx_collect(rx, rx->hdr, rx->hdr_want, p, n, true);
			if (rx->got < rx->hdr_want)
				break;
			if (rx->got == 2 && rx->hdr_len == 0) {
				__u32 want = iw_hdr_len_of(rx->hdr[0],
							   rx->hdr[1]);

				rx->hdr_len = 2;	/* control bytes seen */
				rx->hdr_want = want < rx->ulpdu_len ?
					       want : rx->ulpdu_len;
				if (rx->got < rx->hdr_want)
					break;
			}
			rx->hdr_len = rx->got;
			rx->off = rx->got;
			rx->got = 0;
			rx->state = rx->off == rx->ulpdu_len ?
				    MPA_RX_S_TRAILER : MPA_RX_S_DATA;
			ev->ulpdu_len = rx->ulpdu_len;
			*used = i;
			return MPA_RX_HDR;

		case MPA_RX_S_DATA:
			take = rx->ulpdu_len - rx->off;
			if (take > n)
				take = n;
			ev->data = p;
			ev->len = (__u32)take;
			ev->off = rx->off;
			if (!rx->caller_crcs_data)
				mpa_rx_crc_data(rx, p, take);
			rx->off += (__u32)take;
			rx->pos += take;
			i += take;
			if (rx->off == rx->ulpdu_len) {
				rx->state = MPA_RX_S_TRAILER;
				rx->got = 0;
			}
			*used = i;
			return MPA_RX_DATA;

		case MPA_RX_S_TRAILER: {
			__u32 pad = mpa_pad_len(rx->ulpdu_len);
			__u32 tlen = pad + IW_CRC32C_LEN;

			if (rx->got < pad) {	/* pad: under the CRC */
				i += mpa_rx_collect(rx, rx->trailer, pad, p, n,
						    true);
				break;
			}
			i += mpa_rx_collect(rx, rx->trailer, tlen, p, n, false);
			if (rx->got < tlen)
				break;
			if (rx->crc && iw_crc32c_final(rx->crc_reg) !=
				       iw_crc32c_get(rx->trailer + pad))
				return mpa_rx_fail(rx, MPA_ERR_CRC, i, used);
			rx->in_fpdu = false;
			*used = i;
			return MPA_RX_FPDU;
		}
		}
	}
	*used = i;
	return MPA_RX_MORE;
}

#endif /* SOFTRNIC_PROTO_IWARP_MPA_RX_H */
