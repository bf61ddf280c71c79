/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * MPA connection set-up (RFC 5044 section 7.1) with the enhanced RDMA
 * connection establishment of RFC 6581: the MPA Request and Reply frames,
 * their strict parser, and the negotiation that turns a request, a reply
 * and the local policy into what a connection uses (CRC, markers, IRD and
 * ORD, the RTR message, large FPDUs, the RFC 7306 extensions).
 * Documentation/wire-iwarp.md describes the choices.
 *
 * Frame: 16-byte key, flags, revision, private data length, then for an
 * enhanced (rev 2, H flag) frame the 4-byte IRD/ORD words and after them
 * the ULP's private data.  Everything is read through byte accessors.
 */
#ifndef SOFTRNIC_PROTO_IWARP_MPA_H
#define SOFTRNIC_PROTO_IWARP_MPA_H

#include "proto_compat.h"

#define MPA_KEY_LEN		16
#define MPA_KEY_REQ		"MPA ID Req Frame"
#define MPA_KEY_REP		"MPA ID Rep Frame"
#define MPA_RR_HDR_LEN		20	/* key, flags, rev, PD_Length */
#define MPA_MAX_PD_LEN		512	/* RFC 5044: private data <= 512 */
#define MPA_V2_CTRL_LEN		4	/* RFC 6581 IRD and ORD words */
#define MPA_MAX_RR_LEN		(MPA_RR_HDR_LEN + MPA_MAX_PD_LEN)
#define MPA_REV1		1
#define MPA_REV2		2

/*
 * Flags byte (byte 16).  M, C, R are RFC 5044, H (enhanced) RFC 6581.
 * LARGE_FPDU is siw's experimental "GSO" bit (MPA_RR_FLAG_GSO_EXP): the
 * sender takes FPDUs longer than one TCP segment.  EXT_OFFER/EXT_ACCEPT
 * are softrnic's RFC 7306 negotiation (see mpa_accept()); two bits
 * because siw answers a request with the request's own flags byte.
 */
#define MPA_FLAG_MARKERS	0x80
#define MPA_FLAG_CRC		0x40
#define MPA_FLAG_REJECT		0x20
#define MPA_FLAG_ENHANCED	0x10
#define MPA_FLAG_LARGE_FPDU	0x08
#define MPA_FLAG_EXT_ACCEPT	0x02
#define MPA_FLAG_EXT_OFFER	0x01

/* RFC 6581 words: IRD word A (P2P) and B (SEND RTR), ORD word C, D. */
#define MPA_V2_P2P		0x8000U
#define MPA_V2_SEND_RTR		0x4000U
#define MPA_V2_WRITE_RTR	0x8000U
#define MPA_V2_READ_RTR		0x4000U
#define MPA_V2_IRD_ORD_MASK	0x3fffU

/* RTR (ready to receive) message types, as a set. */
#define MPA_RTR_SEND		0x1
#define MPA_RTR_WRITE		0x2
#define MPA_RTR_READ		0x4
#define MPA_RTR_ALL		(MPA_RTR_SEND | MPA_RTR_WRITE | MPA_RTR_READ)

/* What a frame says, in host terms. */
struct mpa_params {
	__u8	rev;		/* 1 or 2 */
	bool	markers;	/* M: the sender wants to receive markers */
	bool	crc;		/* C */
	bool	enhanced;	/* H and rev 2: the IRD/ORD words follow */
	bool	p2p;		/* A (enhanced only) */
	__u8	rtr;		/* MPA_RTR_*: offered (request), chosen (reply) */
	__u16	ird;		/* enhanced only, 14 bits */
	__u16	ord;
	bool	large_fpdu;	/* LARGE_FPDU */
	bool	rdmap_ext;	/* request: EXT_OFFER; reply: EXT_ACCEPT */
};

/* A parsed frame: its parameters and the ULP's private data. */
struct mpa_rr {
	struct mpa_params p;
	bool		reply;
	bool		reject;
	__u8		flags;		/* the flags byte as received */
	const __u8	*pd;		/* ULP private data (after the v2 words) */
	__u16		pd_len;
	__u32		frame_len;	/* bytes of the whole frame */
};

enum mpa_rr_err {
	MPA_RR_OK		= 0,
	MPA_RR_ERR_TRUNCATED	= -1,	/* fewer bytes than the frame needs */
	MPA_RR_ERR_KEY		= -2,	/* not the key expected */
	MPA_RR_ERR_REV		= -3,	/* revision other than 1 or 2 */
	MPA_RR_ERR_PD_LEN	= -4,	/* private data > 512 */
	MPA_RR_ERR_FLAGS	= -5,	/* R in a request */
	MPA_RR_ERR_V2		= -6,	/* enhanced without room for IRD/ORD, or
					 * request RTR flags without P2P */
};

#define MPA_RR_NR_REASONS	7

static inline const char *mpa_rr_err_name(int err)
{
	switch (err) {
	case MPA_RR_OK:			return "ok";
	case MPA_RR_ERR_TRUNCATED:	return "truncated";
	case MPA_RR_ERR_KEY:		return "key";
	case MPA_RR_ERR_REV:		return "revision";
	case MPA_RR_ERR_PD_LEN:		return "private_data_length";
	case MPA_RR_ERR_FLAGS:		return "flags";
	case MPA_RR_ERR_V2:		return "enhanced";
	default:			return "unknown";
	}
}

/*
 * Length of the whole frame at @buf once its 20-byte header is there:
 * MPA_RR_HDR_LEN + PD_Length, or a negative enum mpa_rr_err (fewer than
 * 20 bytes, wrong key, PD_Length > 512).  Lets a receiver read exactly one
 * frame from the stream and nothing of the FPDUs behind it.
 */
static inline int mpa_rr_frame_len(const void *buf, size_t len, bool reply)
{
	const __u8 *b = (const __u8 *)buf;
	__u16 pd_len;

	if (len < MPA_RR_HDR_LEN)
		return MPA_RR_ERR_TRUNCATED;
	if (memcmp(b, reply ? MPA_KEY_REP : MPA_KEY_REQ, MPA_KEY_LEN))
		return MPA_RR_ERR_KEY;
	pd_len = sr_get_be16(b + 18);
	if (pd_len > MPA_MAX_PD_LEN)
		return MPA_RR_ERR_PD_LEN;
	return MPA_RR_HDR_LEN + pd_len;
}

/*
 * Parse a Request (@reply false) or Reply frame of exactly @len bytes
 * (mpa_rr_frame_len()).  Checks key, revision 1 or 2, PD_Length <= 512
 * and == what follows, no R in a request, and for rev 2 with H: room for
 * the IRD/ORD words, and in a request no RTR flag without P2P.  A reply
 * with P2P must name at most one RTR type (mpa_connected() checks it
 * against the offer).  Unknown reserved flag bits are ignored, as RFC 5044
 * asks.  H in a rev 1 frame is ignored too (siw does the same).
 * @out->pd points into @buf.
 */
static inline int mpa_rr_parse(const void *buf, size_t len, bool reply,
			       struct mpa_rr *out)
{
	const __u8 *b = (const __u8 *)buf;
	int flen = mpa_rr_frame_len(buf, len, reply);
	__u8 flags;

	memset(out, 0, sizeof(*out));
	out->reply = reply;
	if (flen < 0)
		return flen;
	if ((size_t)flen != len)
		return len < (size_t)flen ? MPA_RR_ERR_TRUNCATED :
		       MPA_RR_ERR_PD_LEN;
	flags = b[16];
	out->flags = flags;
	out->frame_len = (__u32)flen;
	out->p.rev = b[17];
	if (out->p.rev != MPA_REV1 && out->p.rev != MPA_REV2)
		return MPA_RR_ERR_REV;
	out->reject = flags & MPA_FLAG_REJECT;
	if (out->reject && !reply)
		return MPA_RR_ERR_FLAGS;
	out->p.markers = flags & MPA_FLAG_MARKERS;
	out->p.crc = flags & MPA_FLAG_CRC;
	out->p.large_fpdu = flags & MPA_FLAG_LARGE_FPDU;
	/* siw echoes a request's flags: only ACCEPT without OFFER counts */
	if (reply)
		out->p.rdmap_ext = (flags & MPA_FLAG_EXT_ACCEPT) &&
				   !(flags & MPA_FLAG_EXT_OFFER);
	else
		out->p.rdmap_ext = flags & MPA_FLAG_EXT_OFFER;
	out->pd = b + MPA_RR_HDR_LEN;
	out->pd_len = (__u16)(flen - MPA_RR_HDR_LEN);

	if (out->p.rev == MPA_REV2 && (flags & MPA_FLAG_ENHANCED)) {
		__u16 ird, ord;

		if (out->pd_len < MPA_V2_CTRL_LEN)
			return MPA_RR_ERR_V2;
		ird = sr_get_be16(out->pd);
		ord = sr_get_be16(out->pd + 2);
		out->p.enhanced = true;
		out->p.p2p = ird & MPA_V2_P2P;
		out->p.ird = ird & MPA_V2_IRD_ORD_MASK;
		out->p.ord = ord & MPA_V2_IRD_ORD_MASK;
		out->p.rtr = ((ird & MPA_V2_SEND_RTR) ? MPA_RTR_SEND : 0) |
			     ((ord & MPA_V2_WRITE_RTR) ? MPA_RTR_WRITE : 0) |
			     ((ord & MPA_V2_READ_RTR) ? MPA_RTR_READ : 0);
		if (out->p.rtr && !out->p.p2p)
			return MPA_RR_ERR_V2;
		if (reply && (out->p.rtr & (out->p.rtr - 1)))
			return MPA_RR_ERR_V2;
		out->pd += MPA_V2_CTRL_LEN;
		out->pd_len -= MPA_V2_CTRL_LEN;
	}
	return MPA_RR_OK;
}

/*
 * Write a Request or Reply frame into @buf (@size bytes).  @p->enhanced
 * (only with rev 2) adds the IRD/ORD words before the @pd_len bytes of ULP
 * private data.  Returns the frame length, or 0 if the private data does
 * not fit the 512 bytes (with the words) or @buf is too small.
 */
static inline size_t mpa_rr_build(void *buf, size_t size, bool reply,
				  bool reject, const struct mpa_params *p,
				  const void *pd, size_t pd_len)
{
	__u8 *b = (__u8 *)buf;
	bool v2 = p->enhanced && p->rev == MPA_REV2;
	size_t wire_pd = pd_len + (v2 ? MPA_V2_CTRL_LEN : 0);
	__u8 flags = 0;
	__u8 *d;

	if (wire_pd > MPA_MAX_PD_LEN || size < MPA_RR_HDR_LEN + wire_pd)
		return 0;
	memcpy(b, reply ? MPA_KEY_REP : MPA_KEY_REQ, MPA_KEY_LEN);
	if (p->markers)
		flags |= MPA_FLAG_MARKERS;
	if (p->crc)
		flags |= MPA_FLAG_CRC;
	if (reject && reply)
		flags |= MPA_FLAG_REJECT;
	if (v2)
		flags |= MPA_FLAG_ENHANCED;
	if (p->large_fpdu)
		flags |= MPA_FLAG_LARGE_FPDU;
	if (p->rdmap_ext)
		flags |= reply ? MPA_FLAG_EXT_ACCEPT : MPA_FLAG_EXT_OFFER;
	b[16] = flags;
	b[17] = p->rev;
	sr_put_be16(b + 18, (__u16)wire_pd);
	d = b + MPA_RR_HDR_LEN;
	if (v2) {
		__u16 ird = p->ird & MPA_V2_IRD_ORD_MASK;
		__u16 ord = p->ord & MPA_V2_IRD_ORD_MASK;

		if (p->p2p) {
			ird |= MPA_V2_P2P;
			if (p->rtr & MPA_RTR_SEND)
				ird |= MPA_V2_SEND_RTR;
			if (p->rtr & MPA_RTR_WRITE)
				ord |= MPA_V2_WRITE_RTR;
			if (p->rtr & MPA_RTR_READ)
				ord |= MPA_V2_READ_RTR;
		}
		sr_put_be16(d, ird);
		sr_put_be16(d + 2, ord);
		d += MPA_V2_CTRL_LEN;
	}
	if (pd_len)
		memcpy(d, pd, pd_len);
	return MPA_RR_HDR_LEN + wire_pd;
}

/*
 * ---------------------------------------------------------------------
 * Negotiation
 * ---------------------------------------------------------------------
 */

/* What this end wants and takes. */
struct mpa_local {
	bool	crc;		/* ask for CRC (either side asking turns it on) */
	bool	markers_ok;	/* false: refuse a peer that wants markers */
	bool	enhanced;	/* send rev 2 with IRD/ORD (the initiator) */
	bool	p2p;		/* initiator: ask for an RTR message */
	__u8	rtr;		/* MPA_RTR_* this end can send and take */
	__u16	ird;		/* inbound READ/atomic depth wanted */
	__u16	ord;		/* outbound depth wanted */
	__u16	max_ird;	/* the most inbound depth this end can give */
	bool	large_fpdu;	/* take FPDUs longer than one segment */
	bool	rdmap_ext;	/* speak RFC 7306 (atomics, immediate data) */
};

/* What a connection uses once the frames are exchanged. */
struct mpa_conn {
	bool	crc;		/* generate and check the CRC */
	bool	markers_tx;	/* insert markers (the peer asked) */
	bool	markers_rx;	/* expect markers (we asked) */
	bool	enhanced;
	__u8	rtr;		/* the one RTR message type, 0 for none */
	bool	rtr_send;	/* initiator: send it; responder: wait for it */
	__u16	ird;		/* inbound depth this end serves */
	__u16	ord;		/* outbound depth this end may use */
	bool	large_fpdu_tx;	/* the peer takes FPDUs beyond one segment */
	bool	rdmap_ext;
};

/* Why a negotiation failed; the LLP TERMINATE code where there is one. */
enum mpa_neg_err {
	MPA_NEG_OK		= 0,
	MPA_NEG_REJECTED	= -1,	/* the peer set R */
	MPA_NEG_MARKERS		= -2,	/* the peer wants markers, refused */
	MPA_NEG_NOT_ENHANCED	= -3,	/* reply to an enhanced request is not */
	MPA_NEG_IRD		= -4,	/* peer ORD above our IRD (LLP 0x06) */
	MPA_NEG_RTR		= -5,	/* no common RTR type (LLP 0x07) */
};

#define MPA_NEG_NR_REASONS	6

static inline const char *mpa_neg_err_name(int err)
{
	switch (err) {
	case MPA_NEG_OK:		return "ok";
	case MPA_NEG_REJECTED:		return "rejected";
	case MPA_NEG_MARKERS:		return "markers";
	case MPA_NEG_NOT_ENHANCED:	return "not_enhanced";
	case MPA_NEG_IRD:		return "insufficient_ird";
	case MPA_NEG_RTR:		return "no_matching_rtr";
	default:			return "unknown";
	}
}

static inline __u16 mpa_min16(__u16 a, __u16 b)
{
	return a < b ? a : b;
}

/* One RTR type out of @offered that @supported has: WRITE, READ, SEND. */
static inline __u8 mpa_pick_rtr(__u8 offered, __u8 supported)
{
	__u8 both = offered & supported;

	if (both & MPA_RTR_WRITE)
		return MPA_RTR_WRITE;
	if (both & MPA_RTR_READ)
		return MPA_RTR_READ;
	return both & MPA_RTR_SEND;
}

/* The initiator's Request parameters. */
static inline void mpa_request_params(const struct mpa_local *loc,
				      struct mpa_params *req)
{
	memset(req, 0, sizeof(*req));
	req->rev = loc->enhanced ? MPA_REV2 : MPA_REV1;
	req->enhanced = loc->enhanced;
	req->crc = loc->crc;
	req->markers = false;		/* softrnic never asks for markers */
	req->large_fpdu = loc->large_fpdu;
	req->rdmap_ext = loc->rdmap_ext;
	if (loc->enhanced) {
		req->ird = loc->ird & MPA_V2_IRD_ORD_MASK;
		req->ord = loc->ord & MPA_V2_IRD_ORD_MASK;
		if (loc->p2p && (loc->rtr & MPA_RTR_ALL)) {
			req->p2p = true;
			req->rtr = loc->rtr & MPA_RTR_ALL;
		}
	}
}

/*
 * Responder: answer the Request @req.  Fills the Reply parameters @rep
 * (same revision; CRC if either side asks; IRD/ORD words if the request
 * had them: our ORD at most the initiator's IRD, our IRD at least its ORD
 * up to @loc->max_ird; one RTR type out of the offer) and what the
 * connection uses.  Returns 0, or MPA_NEG_MARKERS / MPA_NEG_RTR: then
 * send a Reply with R set and close.
 */
static inline int mpa_accept(const struct mpa_rr *req,
			     const struct mpa_local *loc,
			     struct mpa_params *rep, struct mpa_conn *conn)
{
	memset(rep, 0, sizeof(*rep));
	memset(conn, 0, sizeof(*conn));
	rep->rev = req->p.rev;
	rep->crc = req->p.crc || loc->crc;
	if (req->p.markers && !loc->markers_ok)
		return MPA_NEG_MARKERS;
	/* echoing LARGE_FPDU tells the initiator we take long FPDUs */
	rep->large_fpdu = loc->large_fpdu && req->p.large_fpdu;
	rep->rdmap_ext = req->p.rdmap_ext && loc->rdmap_ext;

	conn->crc = rep->crc;
	conn->markers_tx = req->p.markers;
	conn->large_fpdu_tx = req->p.large_fpdu && loc->large_fpdu;
	conn->rdmap_ext = rep->rdmap_ext;
	conn->ird = loc->ird;
	conn->ord = loc->ord;

	if (req->p.enhanced) {
		__u16 ird = loc->ird > req->p.ord ? loc->ird : req->p.ord;

		rep->enhanced = true;
		rep->ord = mpa_min16(loc->ord, req->p.ird);
		rep->ird = mpa_min16(ird, loc->max_ird);
		if (req->p.p2p) {
			rep->p2p = true;
			rep->rtr = mpa_pick_rtr(req->p.rtr, loc->rtr);
			if (!rep->rtr)
				return MPA_NEG_RTR;
		}
		conn->enhanced = true;
		conn->ird = rep->ird;
		conn->ord = rep->ord;
		conn->rtr = rep->rtr;
		conn->rtr_send = rep->rtr != 0;
	}
	return MPA_NEG_OK;
}

/*
 * Initiator: the Reply @rep to the Request @req that @loc produced.
 * Returns 0 and fills @conn, or a negative enum mpa_neg_err: rejected;
 * markers asked and refused; an enhanced request answered without the
 * words; the responder's ORD above our IRD (TERMINATE LLP 0x06); P2P
 * asked and no RTR type (or one we did not offer) chosen (LLP 0x07).  Our
 * ORD is cut to the responder's IRD.  The CRC is on if either side asked.
 */
static inline int mpa_connected(const struct mpa_params *req,
				const struct mpa_rr *rep,
				const struct mpa_local *loc,
				struct mpa_conn *conn)
{
	memset(conn, 0, sizeof(*conn));
	if (rep->reject)
		return MPA_NEG_REJECTED;
	if (rep->p.markers && !loc->markers_ok)
		return MPA_NEG_MARKERS;
	conn->crc = req->crc || rep->p.crc;
	conn->markers_tx = rep->p.markers;
	conn->markers_rx = req->markers;
	conn->large_fpdu_tx = req->large_fpdu && rep->p.large_fpdu;
	conn->rdmap_ext = req->rdmap_ext && rep->p.rdmap_ext;
	conn->ird = loc->ird;
	conn->ord = loc->ord;
	if (!req->enhanced)
		return MPA_NEG_OK;
	if (!rep->p.enhanced)
		return MPA_NEG_NOT_ENHANCED;
	if (rep->p.ord > req->ird)
		return MPA_NEG_IRD;
	conn->enhanced = true;
	conn->ird = req->ird;
	conn->ord = mpa_min16(req->ord, rep->p.ird);
	if (req->p2p) {
		if (!rep->p.p2p || !(rep->p.rtr & req->rtr))
			return MPA_NEG_RTR;
		conn->rtr = rep->p.rtr;
		conn->rtr_send = true;
	}
	return MPA_NEG_OK;
}

#endif /* SOFTRNIC_PROTO_IWARP_MPA_H */
