/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * DDP/RDMAP segment parser and encoder, driven by the opcode table of
 * iwarp_hdr.h.  iw_parse() runs on what the MPA receiver hands over
 * (iwarp_mpa_rx.h: the header bytes of one ULPDU and its length): every
 * read is bounded by the bytes given, it allocates nothing and looks at no
 * connection state (STags, MSN windows, ORD/IRD are the transport's).  The
 * TERMINATE helpers build the one error report the transport sends.
 */
#ifndef SOFTRNIC_PROTO_IWARP_PARSE_H
#define SOFTRNIC_PROTO_IWARP_PARSE_H

#include "iwarp_hdr.h"
#include "iwarp_mpa.h"

/* Negative, so that iw_parse() returns them and `drops[-err]` counts. */
enum iw_parse_err {
	IW_PARSE_OK		= 0,
	IW_ERR_TRUNCATED	= -1,	/* fewer bytes than the headers */
	IW_ERR_DDP_VERSION	= -2,
	IW_ERR_RDMAP_VERSION	= -3,
	IW_ERR_OPCODE		= -4,	/* reserved, or T flag not the opcode's */
	IW_ERR_EXT		= -5,	/* RFC 7306 opcode, not negotiated */
	IW_ERR_QN		= -6,	/* queue number not the opcode's */
	IW_ERR_MO		= -7,	/* control message with MO != 0 */
	IW_ERR_LAST		= -8,	/* control message without L */
	IW_ERR_LENGTH		= -9,	/* control message of the wrong size */
	IW_ERR_ATOMIC_OP	= -10,	/* AOpCode above 3 */
};

#define IW_PARSE_NR_REASONS	11

static inline const char *iw_parse_err_name(int err)
{
	switch (err) {
	case IW_PARSE_OK:		return "ok";
	case IW_ERR_TRUNCATED:		return "truncated";
	case IW_ERR_DDP_VERSION:	return "ddp_version";
	case IW_ERR_RDMAP_VERSION:	return "rdmap_version";
	case IW_ERR_OPCODE:		return "opcode";
	case IW_ERR_EXT:		return "extension";
	case IW_ERR_QN:			return "queue_number";
	case IW_ERR_MO:			return "message_offset";
	case IW_ERR_LAST:		return "last";
	case IW_ERR_LENGTH:		return "length";
	case IW_ERR_ATOMIC_OP:		return "atomic_opcode";
	default:			return "unknown";
	}
}

/* A TERMINATE's report (RFC 5040 section 4.8). */
struct iw_term {
	__u8	layer;			/* enum iw_term_layer */
	__u8	etype;
	__u8	ecode;
	bool	m;			/* seg_len is valid */
	__u16	seg_len;		/* ULPDU_Length of the offending FPDU */
	__u8	ddp_hdr_len;		/* 0 (none), 14 or 18 */
	__u8	ddp_hdr[IW_UNTAGGED_HDR_LEN];
	bool	has_rreq;
	__u8	rreq[IW_READ_REQ_LEN];	/* the offending READ request */
};

/* One DDP segment's headers in host terms. */
struct iw_pkt {
	const struct iw_opcode_desc *info;	/* set by iw_parse() */
	__u8	opcode;			/* enum iw_opcode */
	bool	last;			/* DDP L */
	/* tagged */
	__u32	stag;
	__u64	to;
	/* untagged */
	__u32	rsvd_ulp;		/* SEND_INV: STag; immediate: IW_IMM_* */
	__u32	qn;
	__u32	msn;
	__u32	mo;
	/* where things are, in bytes from the start of the ULPDU */
	__u32	hdr_len;
	__u32	payload_len;
	struct {			/* READ request */
		__u32	sink_stag;
		__u64	sink_to;
		__u32	size;
		__u32	src_stag;
		__u64	src_to;
	} rreq;
	struct {			/* RFC 7306 atomic request */
		__u8	op;		/* enum iw_atomic_op */
		__u32	req_id;
		__u32	stag;
		__u64	to;
		__u64	add_swap;
		__u64	add_swap_mask;
		__u64	compare;
		__u64	compare_mask;
	} atomic;
	struct {			/* RFC 7306 atomic response */
		__u32	req_id;
		__u64	orig;
	} atomic_resp;
	__u8	imm[IW_IMM_LEN];	/* RFC 7306 immediate data, opaque */
	struct iw_term term;
};

static inline void iw_parse_rreq(const __u8 *p, struct iw_pkt *out)
{
	out->rreq.sink_stag = sr_get_be32(p);
	out->rreq.sink_to = sr_get_be64(p + 4);
	out->rreq.size = sr_get_be32(p + 12);
	out->rreq.src_stag = sr_get_be32(p + 16);
	out->rreq.src_to = sr_get_be64(p + 20);
}

static inline void iw_parse_atomic(const __u8 *p, struct iw_pkt *out)
{
	out->atomic.op = p[3] & IW_ATOMIC_OP_MASK;
	out->atomic.req_id = sr_get_be32(p + 4);
	out->atomic.stag = sr_get_be32(p + 8);
	out->atomic.to = sr_get_be64(p + 12);
	out->atomic.add_swap = sr_get_be64(p + 20);
	out->atomic.add_swap_mask = sr_get_be64(p + 28);
	out->atomic.compare = sr_get_be64(p + 36);
	out->atomic.compare_mask = sr_get_be64(p + 44);
}

/*
 * The TERMINATE body at @p (@n bytes after the DDP header): control word,
 * then what D and R announce.  siw sets R for errors on SENDs without
 * adding the READ header, so a missing optional part is left out (its
 * length 0 / flag false), never read past @n.
 */
static inline void iw_parse_term(const __u8 *p, size_t n, struct iw_term *t)
{
	__u32 ctrl = sr_get_be32(p);
	size_t off = IW_TERM_CTRL_LEN;

	t->layer = (__u8)(ctrl >> 28);
	t->etype = (__u8)((ctrl >> 24) & 0xf);
	t->ecode = (__u8)(ctrl >> 16);
	t->m = ctrl & IW_TERM_M;
	if ((ctrl & IW_TERM_D) && n - off > IW_TERM_SEGLEN_LEN) {
		size_t hl = (p[off + IW_TERM_SEGLEN_LEN] & IW_DDP_T) ?
			    IW_TAGGED_HDR_LEN : IW_UNTAGGED_HDR_LEN;

		if (n - off >= IW_TERM_SEGLEN_LEN + hl) {
			t->seg_len = sr_get_be16(p + off);
			memcpy(t->ddp_hdr, p + off + IW_TERM_SEGLEN_LEN, hl);
			t->ddp_hdr_len = (__u8)hl;
			off += IW_TERM_SEGLEN_LEN + hl;
		}
	}
	if ((ctrl & IW_TERM_R) && n - off >= IW_READ_REQ_LEN) {
		memcpy(t->rreq, p + off, IW_READ_REQ_LEN);
		t->has_rreq = true;
	}
	if (!t->ddp_hdr_len)
		t->m = false;
}

/*
 * Parse one DDP segment: @hdr holds its first @hdr_len bytes (all of them
 * for a linear ULPDU, the receiver's header capture otherwise), @ulpdu_len
 * is its whole length.  @ext_ok: RFC 7306 opcodes were negotiated.
 * Returns 0 and fills @out, or a negative enum iw_parse_err (@out then
 * holds what was decoded so far: ->opcode once 2 bytes are there).
 *
 * Checks, in order: the two control bytes; DDP version 1; RDMAP version
 * 1; an opcode of the table whose T flag matches; RFC 7306 only if
 * negotiated; room for the headers; the opcode's queue number; for
 * control messages (READ request, TERMINATE, immediate data, atomics) L
 * set, MO 0 and the exact size (a TERMINATE: 22 to IW_MAX_HDR_LEN bytes);
 * an atomic AOpCode of 0-3.  Reserved bits are ignored, as the RFCs ask.
 */
static inline int iw_parse(const void *hdr, size_t hdr_len, __u32 ulpdu_len,
			   bool ext_ok, struct iw_pkt *out)
{
	const __u8 *p = (const __u8 *)hdr;
	const struct iw_opcode_desc *desc;
	__u32 hl;
	bool tagged;

	memset(out, 0, sizeof(*out));
	if (hdr_len > ulpdu_len)
		hdr_len = ulpdu_len;
	if (hdr_len < 2)
		return IW_ERR_TRUNCATED;
	out->opcode = p[1] & IW_RDMAP_OP_MASK;
	out->last = p[0] & IW_DDP_L;
	tagged = p[0] & IW_DDP_T;
	if ((p[0] & IW_DDP_DV_MASK) != IW_DDP_VERSION)
		return IW_ERR_DDP_VERSION;
	if ((p[1] & IW_RDMAP_RV_MASK) >> IW_RDMAP_RV_SHIFT != IW_RDMAP_VERSION)
		return IW_ERR_RDMAP_VERSION;
	desc = iw_opcode_lookup(out->opcode);
	if (!desc || tagged != !!(desc->flags & IW_OPF_TAGGED))
		return IW_ERR_OPCODE;
	out->info = desc;
	if ((desc->flags & IW_OPF_EXT) && !ext_ok)
		return IW_ERR_EXT;
	hl = iw_opcode_hdr_len(desc);
	if (hdr_len < hl)
		return IW_ERR_TRUNCATED;
	out->hdr_len = hl;

	if (tagged) {
		out->stag = sr_get_be32(p + 2);
		out->to = sr_get_be64(p + 6);
		out->qn = IW_QN_NONE;
		out->payload_len = ulpdu_len - hl;
		return IW_PARSE_OK;
	}
	out->rsvd_ulp = sr_get_be32(p + 2);
	out->qn = sr_get_be32(p + 6);
	out->msn = sr_get_be32(p + 10);
	out->mo = sr_get_be32(p + 14);
	if (out->qn != desc->qn)
		return IW_ERR_QN;
	if (!(desc->flags & IW_OPF_CONTROL)) {
		out->payload_len = ulpdu_len - hl;
		return IW_PARSE_OK;
	}
	if (out->mo)
		return IW_ERR_MO;
	if (!out->last)
		return IW_ERR_LAST;

	switch (out->opcode) {
	case IW_OP_TERMINATE:
		if (ulpdu_len > IW_MAX_HDR_LEN)
			return IW_ERR_LENGTH;
		if (hdr_len < ulpdu_len)
			return IW_ERR_TRUNCATED;
		iw_parse_term(p + IW_UNTAGGED_HDR_LEN,
			      ulpdu_len - IW_UNTAGGED_HDR_LEN, &out->term);
		out->hdr_len = ulpdu_len;
		return IW_PARSE_OK;
	case IW_OP_READ_REQ:
		iw_parse_rreq(p + IW_UNTAGGED_HDR_LEN, out);
		break;
	case IW_OP_ATOMIC_REQ:
		iw_parse_atomic(p + IW_UNTAGGED_HDR_LEN, out);
		break;
	case IW_OP_ATOMIC_RESP:
		out->atomic_resp.req_id = sr_get_be32(p + IW_UNTAGGED_HDR_LEN);
		out->atomic_resp.orig = sr_get_be64(p + IW_UNTAGGED_HDR_LEN + 4);
		break;
	default:	/* immediate data */
		memcpy(out->imm, p + IW_UNTAGGED_HDR_LEN, IW_IMM_LEN);
		break;
	}
	if (ulpdu_len != hl)
		return IW_ERR_LENGTH;
	if (out->opcode == IW_OP_ATOMIC_REQ &&
	    (p[IW_UNTAGGED_HDR_LEN + 3] & IW_ATOMIC_OP_MASK) >= IW_NR_ATOMIC_OPS)
		return IW_ERR_ATOMIC_OP;
	return IW_PARSE_OK;
}

/* TERMINATE body length for @t: control word, then the D and R parts. */
static inline __u32 iw_term_body_len(const struct iw_term *t)
{
	return IW_TERM_CTRL_LEN +
	       (t->ddp_hdr_len ? IW_TERM_SEGLEN_LEN + t->ddp_hdr_len : 0) +
	       (t->has_rreq ? IW_READ_REQ_LEN : 0);
}

static inline void iw_build_term(__u8 *p, const struct iw_term *t)
{
	__u32 ctrl = (__u32)(t->layer & 0xf) << 28 |
		     (__u32)(t->etype & 0xf) << 24 | (__u32)t->ecode << 16;
	__u32 off = IW_TERM_CTRL_LEN;

	if (t->ddp_hdr_len) {
		ctrl |= IW_TERM_D | (t->m ? IW_TERM_M : 0);
		sr_put_be16(p + off, t->seg_len);
		memcpy(p + off + IW_TERM_SEGLEN_LEN, t->ddp_hdr, t->ddp_hdr_len);
		off += IW_TERM_SEGLEN_LEN + t->ddp_hdr_len;
	}
	if (t->has_rreq) {
		ctrl |= IW_TERM_R;
		memcpy(p + off, t->rreq, IW_READ_REQ_LEN);
	}
	sr_put_be32(p, ctrl);
}

/*
 * Write the DDP and RDMAP headers of @in->opcode at @buf (room for
 * IW_MAX_HDR_LEN bytes): T from the table, L from @in->last (control
 * messages always L), DDP and RDMAP version 1, reserved bits 0, untagged
 * QN from the table (a TERMINATE's body from @in->term, whose D/M/R
 * follow what it holds).  Returns the header length, the start of the
 * payload, or 0 for an opcode not in the table.
 */
static inline __u32 iw_build_hdrs(void *buf, const struct iw_pkt *in)
{
	const struct iw_opcode_desc *desc = iw_opcode_lookup(in->opcode);
	__u8 *p = (__u8 *)buf;
	__u8 *r;
	bool last;

	if (!desc)
		return 0;
	last = in->last || (desc->flags & IW_OPF_CONTROL);
	p[0] = (__u8)(((desc->flags & IW_OPF_TAGGED) ? IW_DDP_T : 0) |
		      (last ? IW_DDP_L : 0) | IW_DDP_VERSION);
	p[1] = (__u8)(IW_RDMAP_VERSION << IW_RDMAP_RV_SHIFT | in->opcode);
	if (desc->flags & IW_OPF_TAGGED) {
		sr_put_be32(p + 2, in->stag);
		sr_put_be64(p + 6, in->to);
		return IW_TAGGED_HDR_LEN;
	}
	sr_put_be32(p + 2, in->rsvd_ulp);
	sr_put_be32(p + 6, desc->qn);
	sr_put_be32(p + 10, in->msn);
	sr_put_be32(p + 14, (desc->flags & IW_OPF_CONTROL) ? 0 : in->mo);
	r = p + IW_UNTAGGED_HDR_LEN;

	switch (in->opcode) {
	case IW_OP_TERMINATE:
		iw_build_term(r, &in->term);
		return IW_UNTAGGED_HDR_LEN + iw_term_body_len(&in->term);
	case IW_OP_READ_REQ:
		sr_put_be32(r, in->rreq.sink_stag);
		sr_put_be64(r + 4, in->rreq.sink_to);
		sr_put_be32(r + 12, in->rreq.size);
		sr_put_be32(r + 16, in->rreq.src_stag);
		sr_put_be64(r + 20, in->rreq.src_to);
		break;
	case IW_OP_ATOMIC_REQ:
		sr_put_be32(r, in->atomic.op & IW_ATOMIC_OP_MASK);
		sr_put_be32(r + 4, in->atomic.req_id);
		sr_put_be32(r + 8, in->atomic.stag);
		sr_put_be64(r + 12, in->atomic.to);
		sr_put_be64(r + 20, in->atomic.add_swap);
		sr_put_be64(r + 28, in->atomic.add_swap_mask);
		sr_put_be64(r + 36, in->atomic.compare);
		sr_put_be64(r + 44, in->atomic.compare_mask);
		break;
	case IW_OP_ATOMIC_RESP:
		sr_put_be32(r, in->atomic_resp.req_id);
		sr_put_be64(r + 4, in->atomic_resp.orig);
		break;
	case IW_OP_IMM:
	case IW_OP_IMM_SE:
		memcpy(r, in->imm, IW_IMM_LEN);
		break;
	default:
		break;
	}
	return iw_opcode_hdr_len(desc);
}

/*
 * Fill @t to report an error on the inbound segment whose first @hdr_len
 * header bytes are @hdr (@ulpdu_len its ULPDU_Length): the segment length
 * and DDP header go in for DDP and RDMAP errors when the header was read
 * whole, except where its layout is unknown (RDMAP catastrophic, version
 * or opcode errors, DDP version errors); the READ request header when the
 * segment was one.  LLP (MPA) errors carry nothing.
 */
static inline void iw_term_report(struct iw_term *t, __u8 layer, __u8 etype,
				  __u8 ecode, const void *hdr, size_t hdr_len,
				  __u32 ulpdu_len)
{
	const __u8 *p = (const __u8 *)hdr;
	size_t dl;
	bool unknown;

	memset(t, 0, sizeof(*t));
	t->layer = layer & 0xf;
	t->etype = etype & 0xf;
	t->ecode = ecode;
	if (layer == IW_LAYER_LLP || hdr_len < 2 || hdr_len > ulpdu_len)
		return;
	unknown = (layer == IW_LAYER_RDMAP &&
		   (etype == IW_RDMAP_ET_CATASTROPHIC ||
		    ecode == IW_RDMAP_EC_VERSION ||
		    ecode == IW_RDMAP_EC_OPCODE)) ||
		  (layer == IW_LAYER_DDP &&
		   ((etype == IW_DDP_ET_TAGGED &&
		     ecode == IW_DDP_EC_T_VERSION) ||
		    (etype == IW_DDP_ET_UNTAGGED &&
		     ecode == IW_DDP_EC_U_VERSION) ||
		    etype == IW_DDP_ET_CATASTROPHIC));
	dl = (p[0] & IW_DDP_T) ? IW_TAGGED_HDR_LEN : IW_UNTAGGED_HDR_LEN;
	if (unknown || hdr_len < dl)
		return;
	t->m = true;
	t->seg_len = (__u16)ulpdu_len;
	t->ddp_hdr_len = (__u8)dl;
	memcpy(t->ddp_hdr, p, dl);
	if (!(p[0] & IW_DDP_T) &&
	    (p[1] & IW_RDMAP_OP_MASK) == IW_OP_READ_REQ &&
	    hdr_len >= IW_UNTAGGED_HDR_LEN + IW_READ_REQ_LEN) {
		memcpy(t->rreq, p + IW_UNTAGGED_HDR_LEN, IW_READ_REQ_LEN);
		t->has_rreq = true;
	}
}

/*
 * The TERMINATE codes (RFC 5040 section 7, RFC 5041 section 7) for a
 * segment iw_parse() refused with @err; @hdr is that segment's header
 * (its T bit picks the DDP error type of a version error).
 */
static inline void iw_parse_err_term(int err, const void *hdr, size_t hdr_len,
				     __u8 *layer, __u8 *etype, __u8 *ecode)
{
	const __u8 *p = (const __u8 *)hdr;
	bool tagged = hdr_len >= 1 && (p[0] & IW_DDP_T);

	*layer = IW_LAYER_RDMAP;
	*etype = IW_RDMAP_ET_OPERATION;
	switch (err) {
	case IW_ERR_DDP_VERSION:
		*layer = IW_LAYER_DDP;
		*etype = tagged ? IW_DDP_ET_TAGGED : IW_DDP_ET_UNTAGGED;
		*ecode = tagged ? (__u8)IW_DDP_EC_T_VERSION :
				 (__u8)IW_DDP_EC_U_VERSION;
		break;
	case IW_ERR_RDMAP_VERSION:
		*ecode = IW_RDMAP_EC_VERSION;
		break;
	case IW_ERR_OPCODE:
	case IW_ERR_EXT:
	case IW_ERR_ATOMIC_OP:
		*ecode = IW_RDMAP_EC_OPCODE;
		break;
	case IW_ERR_QN:
		*layer = IW_LAYER_DDP;
		*etype = IW_DDP_ET_UNTAGGED;
		*ecode = IW_DDP_EC_U_INVALID_QN;
		break;
	case IW_ERR_MO:
		*layer = IW_LAYER_DDP;
		*etype = IW_DDP_ET_UNTAGGED;
		*ecode = IW_DDP_EC_U_INVALID_MO;
		break;
	default:	/* truncated, wrong size, control message without L */
		*ecode = IW_RDMAP_EC_UNSPECIFIED;
		break;
	}
}

/*
 * RFC 6581 RTR (ready to receive) messages: @rtr is the one MPA_RTR_*
 * type the set-up chose (mpa_conn.rtr).  The
 * initiator sends it first; it is zero-length, and the responder accepts
 * it without checking its STag (siw puts STag 1 in it: some hardware
 * treats STag 0 specially; softrnic does the same).  @msn is the next
 * MSN of the queue it goes on (1 on a fresh connection).  Returns false
 * for an unknown type.
 */
#define IW_RTR_STAG	1U

static inline bool iw_rtr_pkt(struct iw_pkt *p, __u8 rtr, __u32 msn)
{
	memset(p, 0, sizeof(*p));
	p->last = true;
	p->msn = msn;
	switch (rtr) {
	case MPA_RTR_SEND:
		p->opcode = IW_OP_SEND;
		return true;
	case MPA_RTR_WRITE:
		p->opcode = IW_OP_WRITE;
		p->stag = IW_RTR_STAG;
		return true;
	case MPA_RTR_READ:
		p->opcode = IW_OP_READ_REQ;
		p->rreq.src_stag = IW_RTR_STAG;
		return true;
	default:
		return false;
	}
}

/* Whether the parsed segment @p is an RTR message of type @rtr. */
static inline bool iw_is_rtr(const struct iw_pkt *p, __u8 rtr)
{
	switch (rtr) {
	case MPA_RTR_SEND:
		return p->opcode == IW_OP_SEND && p->last && !p->mo &&
		       !p->payload_len;
	case MPA_RTR_WRITE:
		return p->opcode == IW_OP_WRITE && p->last && !p->payload_len;
	case MPA_RTR_READ:
		return p->opcode == IW_OP_READ_REQ && !p->rreq.size;
	default:
		return false;
	}
}

#endif /* SOFTRNIC_PROTO_IWARP_PARSE_H */
