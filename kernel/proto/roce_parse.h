/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCEv2 transport header parser and encoder, driven by the opcode table
 * of roce_hdr.h.  roce_parse() runs on untrusted packets in softirq: every
 * read is bounds-checked against the length it is given, it allocates
 * nothing and does not look at the ICRC (roce_icrc.h) or at any QP state
 * (PSN window, PMTU, keys are the transport's business).
 */
#ifndef SOFTRNIC_PROTO_ROCE_PARSE_H
#define SOFTRNIC_PROTO_ROCE_PARSE_H

#include "roce_hdr.h"

/*
 * Why roce_parse() refused a packet.  The values are negative so that
 * roce_parse() returns them as is and `drops[-err]` counts per reason.
 */
enum roce_parse_err {
	ROCE_PARSE_OK		= 0,
	/* shorter than BTH + extension headers + ICRC */
	ROCE_ERR_TRUNCATED	= -1,
	/* opcode of a transport softrnic does not speak: UC, RD, XRC, vendor */
	ROCE_ERR_TRANSPORT	= -2,
	/* reserved opcode of RC, UD or CNP */
	ROCE_ERR_OPCODE		= -3,
	/* BTH transport header version is not 0 */
	ROCE_ERR_TVER		= -4,
	/* pad count larger than the payload, or on a packet that cannot pad */
	ROCE_ERR_PAD		= -5,
	/*
	 * length not a multiple of 4, longer than a UDP datagram, payload on
	 * an opcode without one, or an ATOMIC WRITE payload that is not 8 bytes
	 */
	ROCE_ERR_LENGTH		= -6,
};

#define ROCE_PARSE_NR_REASONS	7	/* 0 and the six errors, for -err */

static inline const char *roce_parse_err_name(int err)
{
	switch (err) {
	case ROCE_PARSE_OK:		return "ok";
	case ROCE_ERR_TRUNCATED:	return "truncated";
	case ROCE_ERR_TRANSPORT:	return "transport";
	case ROCE_ERR_OPCODE:		return "opcode";
	case ROCE_ERR_TVER:		return "tver";
	case ROCE_ERR_PAD:		return "pad";
	case ROCE_ERR_LENGTH:		return "length";
	default:			return "unknown";
	}
}

/* struct roce_pkt.bth_flags */
#define ROCE_PKT_SE	0x01U	/* solicited event */
#define ROCE_PKT_MIG	0x02U	/* MigReq */
#define ROCE_PKT_FECN	0x04U
#define ROCE_PKT_BECN	0x08U

/* Payload length of an ATOMIC WRITE request. */
#define ROCE_ATOMIC_WRITE_LEN	8

/*
 * One packet's transport headers in host byte order.  roce_parse() fills
 * it from the wire; roce_build_hdrs() encodes it.  Only the extension
 * headers that the opcode carries (info->ext, or roce_opcode_has_ext())
 * are meaningful; the parser zeroes the rest.
 */
struct roce_pkt {
	/* opcode table entry; set by roce_parse(), ignored by the encoder */
	const struct roce_opcode_desc *info;

	/* BTH */
	__u8	opcode;		/* enum roce_opcode */
	__u8	bth_flags;	/* ROCE_PKT_SE | _MIG | _FECN | _BECN */
	__u8	pad;		/* PadCnt, 0..3 */
	bool	ackreq;
	__u16	pkey;
	__u32	dest_qpn;	/* 24 bits */
	__u32	psn;		/* 24 bits */

	/* where things are, in bytes from the start of the BTH */
	__u32	payload_off;	/* = length of BTH + extension headers */
	__u32	payload_len;	/* without pad and ICRC */

	struct {			/* RETH */
		__u64	va;
		__u32	rkey;
		__u32	len;
	} reth;
	struct {			/* AETH */
		__u8	syndrome;	/* roce_syn_type() / roce_syn_value() */
		__u32	msn;		/* 24 bits */
	} aeth;
	struct {			/* AtomicETH */
		__u64	va;
		__u32	rkey;
		__u64	swap_add;
		__u64	compare;
	} atomic;
	__u64	atomic_orig;		/* AtomicAckETH */
	__u32	imm;			/* ImmDt, host order of the wire bytes */
	__u32	inv_rkey;		/* IETH */
	struct {			/* DETH */
		__u32	qkey;
		__u32	src_qpn;	/* 24 bits */
	} deth;
	struct {			/* FETH */
		__u8	sel;
		__u8	plt;
	} feth;
};

static inline void roce_parse_ext(enum roce_ext ext, const __u8 *p,
				  struct roce_pkt *out)
{
	switch (ext) {
	case ROCE_EXT_DETH: {
		const struct roce_deth *h = (const struct roce_deth *)p;

		out->deth.qkey = roce_deth_qkey(h);
		out->deth.src_qpn = roce_deth_sqpn(h);
		break;
	}
	case ROCE_EXT_FETH: {
		const struct roce_feth *h = (const struct roce_feth *)p;

		out->feth.sel = roce_feth_sel(h);
		out->feth.plt = roce_feth_plt(h);
		break;
	}
	case ROCE_EXT_RETH: {
		const struct roce_reth *h = (const struct roce_reth *)p;

		out->reth.va = roce_reth_va(h);
		out->reth.rkey = roce_reth_rkey(h);
		out->reth.len = roce_reth_len(h);
		break;
	}
	case ROCE_EXT_ATOMIC_ETH: {
		const struct roce_atomic_eth *h =
			(const struct roce_atomic_eth *)p;

		out->atomic.va = roce_atomic_eth_va(h);
		out->atomic.rkey = roce_atomic_eth_rkey(h);
		out->atomic.swap_add = roce_atomic_eth_swap_add(h);
		out->atomic.compare = roce_atomic_eth_compare(h);
		break;
	}
	case ROCE_EXT_AETH: {
		const struct roce_aeth *h = (const struct roce_aeth *)p;

		out->aeth.syndrome = roce_aeth_syndrome(h);
		out->aeth.msn = roce_aeth_msn(h);
		break;
	}
	case ROCE_EXT_ATOMIC_ACK:
		out->atomic_orig =
			roce_atomic_ack_orig((const struct roce_atomic_ack_eth *)p);
		break;
	case ROCE_EXT_IMMDT:
		out->imm = roce_immdt_get((const struct roce_immdt *)p);
		break;
	case ROCE_EXT_IETH:
		out->inv_rkey = roce_ieth_rkey((const struct roce_ieth *)p);
		break;
	default:	/* CNP reserved bytes: ignored on receive */
		break;
	}
}

/*
 * Parse the transport part of a RoCEv2 packet: @bth points at the BTH,
 * @len counts from there to the end of the UDP payload, ICRC included.
 * Returns 0 and fills @out, or a negative enum roce_parse_err (then @out
 * holds whatever was decoded so far; at least ->opcode once len >= 1).
 *
 * Checks, in order: room for a BTH and ICRC; at most a UDP datagram;
 * opcode of RC/UD/CNP and not reserved; TVer 0; room for the extension
 * headers; length a multiple of 4 (pad makes every IBTA packet so); pad
 * only on LAST/ONLY packets that carry payload and no larger than what
 * follows the headers; no payload where the opcode has none.
 */
static inline int roce_parse(const void *bth, size_t len, struct roce_pkt *out)
{
	const __u8 *p = (const __u8 *)bth;
	const struct roce_bth *h = (const struct roce_bth *)p;
	const struct roce_opcode_desc *desc;
	size_t off = ROCE_BTH_LEN;
	size_t end, avail;
	unsigned int i;

	memset(out, 0, sizeof(*out));
	if (len >= 1)
		out->opcode = p[0];
	if (len < ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return ROCE_ERR_TRUNCATED;
	if (len > ROCE_MAX_LEN)
		return ROCE_ERR_LENGTH;

	desc = roce_opcode_lookup(out->opcode);
	if (!desc)
		return roce_transport_supported(out->opcode) ?
		       ROCE_ERR_OPCODE : ROCE_ERR_TRANSPORT;
	out->info = desc;
	if (roce_bth_tver(h) != 0)
		return ROCE_ERR_TVER;

	out->bth_flags = (roce_bth_se(h) ? ROCE_PKT_SE : 0) |
			 (roce_bth_mig(h) ? ROCE_PKT_MIG : 0) |
			 (roce_bth_fecn(h) ? ROCE_PKT_FECN : 0) |
			 (roce_bth_becn(h) ? ROCE_PKT_BECN : 0);
	out->pad = roce_bth_pad(h);
	out->ackreq = roce_bth_ackreq(h);
	out->pkey = roce_bth_pkey(h);
	out->dest_qpn = roce_bth_qpn(h);
	out->psn = roce_bth_psn(h);

	end = len - ROCE_ICRC_LEN;	/* >= ROCE_BTH_LEN, checked above */
	for (i = 0; i < ROCE_MAX_EXT && desc->ext[i] != ROCE_EXT_NONE; i++) {
		enum roce_ext ext = (enum roce_ext)desc->ext[i];
		size_t elen = roce_ext_len(ext);

		if (end - off < elen)
			return ROCE_ERR_TRUNCATED;
		roce_parse_ext(ext, p + off, out);
		off += elen;
	}
	out->payload_off = (__u32)off;

	if (len & 3)
		return ROCE_ERR_LENGTH;
	avail = end - off;		/* payload + pad */
	if (out->pad) {
		if (!(desc->flags & ROCE_OPF_PAYLOAD) ||
		    !(desc->flags & ROCE_OPF_LAST))
			return ROCE_ERR_PAD;
		if (avail < out->pad)
			return ROCE_ERR_PAD;
	}
	if (!(desc->flags & ROCE_OPF_PAYLOAD) && avail)
		return ROCE_ERR_LENGTH;
	out->payload_len = (__u32)(avail - out->pad);
	if (desc->op == ROCE_OP_ATOMIC_WRITE &&
	    out->payload_len != ROCE_ATOMIC_WRITE_LEN)
		return ROCE_ERR_LENGTH;
	return ROCE_PARSE_OK;
}

static inline void roce_build_ext(enum roce_ext ext, __u8 *p,
				  const struct roce_pkt *in)
{
	switch (ext) {
	case ROCE_EXT_DETH:
		roce_deth_set((struct roce_deth *)p, in->deth.qkey,
			      in->deth.src_qpn);
		break;
	case ROCE_EXT_FETH:
		roce_feth_set((struct roce_feth *)p, in->feth.sel, in->feth.plt);
		break;
	case ROCE_EXT_RETH:
		roce_reth_set((struct roce_reth *)p, in->reth.va, in->reth.rkey,
			      in->reth.len);
		break;
	case ROCE_EXT_ATOMIC_ETH:
		roce_atomic_eth_set((struct roce_atomic_eth *)p, in->atomic.va,
				    in->atomic.rkey, in->atomic.swap_add,
				    in->atomic.compare);
		break;
	case ROCE_EXT_AETH:
		roce_aeth_set((struct roce_aeth *)p, in->aeth.syndrome,
			      in->aeth.msn);
		break;
	case ROCE_EXT_ATOMIC_ACK:
		roce_atomic_ack_set((struct roce_atomic_ack_eth *)p,
				    in->atomic_orig);
		break;
	case ROCE_EXT_IMMDT:
		roce_immdt_set((struct roce_immdt *)p, in->imm);
		break;
	case ROCE_EXT_IETH:
		roce_ieth_set((struct roce_ieth *)p, in->inv_rkey);
		break;
	default:
		memset(p, 0, roce_ext_len(ext));
		break;
	}
}

/*
 * Write the BTH and the extension headers of @in->opcode at @buf (room
 * for ROCE_MAX_HDR_LEN bytes).  TVer and every reserved bit are written
 * as 0; @in->pad goes to PadCnt as given (see roce_pad_len()).  Returns
 * the header length, i.e. where the payload starts, or 0 for an opcode
 * the table does not know.
 */
static inline size_t roce_build_hdrs(void *buf, const struct roce_pkt *in)
{
	const struct roce_opcode_desc *desc = roce_opcode_lookup(in->opcode);
	__u8 *p = (__u8 *)buf;
	struct roce_bth *h = (struct roce_bth *)p;
	size_t off = ROCE_BTH_LEN;
	unsigned int i;

	if (!desc)
		return 0;

	h->opcode = in->opcode;
	h->flags = ((in->bth_flags & ROCE_PKT_SE) ? ROCE_BTH_SE : 0) |
		   ((in->bth_flags & ROCE_PKT_MIG) ? ROCE_BTH_MIG : 0) |
		   ((in->pad << ROCE_BTH_PAD_SHIFT) & ROCE_BTH_PAD_MASK);
	h->pkey = sr_cpu_to_be16(in->pkey);
	h->qpn = sr_cpu_to_be32(((in->bth_flags & ROCE_PKT_FECN) ?
				 ROCE_BTH_FECN : 0) |
				((in->bth_flags & ROCE_PKT_BECN) ?
				 ROCE_BTH_BECN : 0) |
				(in->dest_qpn & ROCE_QPN_MASK));
	h->apsn = sr_cpu_to_be32((in->ackreq ? ROCE_BTH_ACKREQ : 0) |
				 (in->psn & ROCE_PSN_MASK));

	for (i = 0; i < ROCE_MAX_EXT && desc->ext[i] != ROCE_EXT_NONE; i++) {
		enum roce_ext ext = (enum roce_ext)desc->ext[i];

		roce_build_ext(ext, p + off, in);
		off += roce_ext_len(ext);
	}
	return off;
}

/*
 * Bytes from the BTH to the end of the UDP payload for @opcode with
 * @payload_len bytes of payload: headers + payload + pad + ICRC.  0 for
 * an unknown opcode.
 */
static inline size_t roce_pkt_len(__u8 opcode, __u32 payload_len)
{
	const struct roce_opcode_desc *desc = roce_opcode_lookup(opcode);

	if (!desc)
		return 0;
	return roce_opcode_hdr_len(desc) + (size_t)payload_len +
	       roce_pad_len(payload_len) + ROCE_ICRC_LEN;
}

#endif /* SOFTRNIC_PROTO_ROCE_PARSE_H */
