/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * DDP (RFC 5041) and RDMAP (RFC 5040, with the RFC 7306 extensions)
 * headers: field offsets, opcodes, the per-opcode table that the parser
 * and encoder (iwarp_parse.h) follow, and the TERMINATE layer / error
 * type / error code values.  A DDP segment is the ULPDU of one MPA FPDU
 * (iwarp_fpdu.h).  Documentation/wire-iwarp.md describes the format.
 *
 *  byte 0      DDP control: T:7 L:6 Rsvd:5-2 DV:1-0 (DDP version 1)
 *  byte 1      RDMAP control: RV:7-6 (version 1) Rsvd:5-4 OpCode:3-0
 *  tagged      bytes 2-5 STag, 6-13 Tagged Offset            (14 bytes)
 *  untagged    bytes 2-5 RsvdULP (Invalidate STag of SEND_INV),
 *              6-9 QN, 10-13 MSN, 14-17 MO                   (18 bytes)
 *
 * then the RDMAP header of the opcode (READ request, TERMINATE, atomic,
 * immediate data) and the payload.  All fields are big endian, read and
 * written bytewise (the ULPDU sits at offset 2 of an FPDU).
 */
#ifndef SOFTRNIC_PROTO_IWARP_HDR_H
#define SOFTRNIC_PROTO_IWARP_HDR_H

#include "proto_compat.h"

#define IW_DDP_VERSION		1
#define IW_RDMAP_VERSION	1

#define IW_DDP_T		0x80U
#define IW_DDP_L		0x40U
#define IW_DDP_RSVD_MASK	0x3cU
#define IW_DDP_DV_MASK		0x03U
#define IW_RDMAP_RV_SHIFT	6
#define IW_RDMAP_RV_MASK	0xc0U
#define IW_RDMAP_RSVD_MASK	0x30U
#define IW_RDMAP_OP_MASK	0x0fU

#define IW_TAGGED_HDR_LEN	14
#define IW_UNTAGGED_HDR_LEN	18
#define IW_READ_REQ_LEN		28	/* RDMAP READ request header */
#define IW_TERM_CTRL_LEN	4
#define IW_TERM_SEGLEN_LEN	2
#define IW_ATOMIC_REQ_LEN	52	/* RFC 7306 atomic request header */
#define IW_ATOMIC_RESP_LEN	12
#define IW_IMM_LEN		8	/* RFC 7306 immediate data */
/* Longest header: atomic request (18 + 52), or a TERMINATE carrying a
 * DDP segment length, an untagged DDP header and a READ request header
 * (18 + 4 + 2 + 18 + 28). */
#define IW_MAX_HDR_LEN		70

/* Untagged queue numbers (RFC 5040 section 5, RFC 7306). */
enum iw_qn {
	IW_QN_SEND		= 0,	/* SENDs, immediate data */
	IW_QN_READ_REQ		= 1,	/* READ and atomic requests */
	IW_QN_TERMINATE		= 2,
	IW_QN_ATOMIC_RESP	= 3,
	IW_QN_NONE		= 0xff,	/* tagged */
};

enum iw_opcode {
	IW_OP_WRITE		= 0x0,
	IW_OP_READ_REQ		= 0x1,
	IW_OP_READ_RESP		= 0x2,
	IW_OP_SEND		= 0x3,
	IW_OP_SEND_INV		= 0x4,
	IW_OP_SEND_SE		= 0x5,
	IW_OP_SEND_SE_INV	= 0x6,
	IW_OP_TERMINATE		= 0x7,
	/* RFC 7306 */
	IW_OP_IMM		= 0x8,
	IW_OP_IMM_SE		= 0x9,
	IW_OP_ATOMIC_REQ	= 0xa,
	IW_OP_ATOMIC_RESP	= 0xb,
	/* 0xc..0xf reserved */
	IW_NR_OPCODES		= 0x10,
};

/* struct iw_opcode_desc.flags */
#define IW_OPF_TAGGED	0x01U	/* tagged buffer model */
#define IW_OPF_PAYLOAD	0x02U	/* carries ULP data after its headers */
#define IW_OPF_CONTROL	0x04U	/* one segment (L set, MO 0), exact size */
#define IW_OPF_SE	0x08U	/* solicited event */
#define IW_OPF_INV	0x10U	/* RsvdULP holds an STag to invalidate */
#define IW_OPF_EXT	0x20U	/* RFC 7306: only with rdmap_ext negotiated */
#define IW_OPF_REQUEST	0x40U	/* takes an IRD slot at the responder */

struct iw_opcode_desc {
	const char	*name;
	__u8		flags;
	__u8		qn;		/* enum iw_qn */
	__u8		rdmap_len;	/* RDMAP header after the DDP header;
					 * TERMINATE: the fixed control word */
};

static inline const struct iw_opcode_desc *iw_opcode_lookup(__u8 opcode)
{
	/* indexed by opcode, in order 0x0..0xb (C++ has no array designators) */
	static const struct iw_opcode_desc tab[IW_NR_OPCODES] = {
		{ "RDMA_WRITE",
			IW_OPF_TAGGED | IW_OPF_PAYLOAD, IW_QN_NONE, 0 },
		{ "RDMA_READ_REQUEST",
			IW_OPF_CONTROL | IW_OPF_REQUEST, IW_QN_READ_REQ,
			IW_READ_REQ_LEN },
		{ "RDMA_READ_RESPONSE",
			IW_OPF_TAGGED | IW_OPF_PAYLOAD, IW_QN_NONE, 0 },
		{ "SEND", IW_OPF_PAYLOAD, IW_QN_SEND, 0 },
		{ "SEND_INV",
			IW_OPF_PAYLOAD | IW_OPF_INV, IW_QN_SEND, 0 },
		{ "SEND_SE",
			IW_OPF_PAYLOAD | IW_OPF_SE, IW_QN_SEND, 0 },
		{ "SEND_SE_INV",
			IW_OPF_PAYLOAD | IW_OPF_SE | IW_OPF_INV, IW_QN_SEND,
			0 },
		{ "TERMINATE", IW_OPF_CONTROL,
			IW_QN_TERMINATE, IW_TERM_CTRL_LEN },
		{ "IMMEDIATE_DATA",
			IW_OPF_CONTROL | IW_OPF_EXT, IW_QN_SEND, IW_IMM_LEN },
		{ "IMMEDIATE_DATA_SE",
			IW_OPF_CONTROL | IW_OPF_EXT | IW_OPF_SE, IW_QN_SEND,
			IW_IMM_LEN },
		{ "ATOMIC_REQUEST",
			IW_OPF_CONTROL | IW_OPF_EXT | IW_OPF_REQUEST,
			IW_QN_READ_REQ, IW_ATOMIC_REQ_LEN },
		{ "ATOMIC_RESPONSE",
			IW_OPF_CONTROL | IW_OPF_EXT, IW_QN_ATOMIC_RESP,
			IW_ATOMIC_RESP_LEN },
	};

	if (opcode >= IW_NR_OPCODES || !tab[opcode].name)
		return (const struct iw_opcode_desc *)0;
	return &tab[opcode];
}

/* DDP + RDMAP header length of @desc (TERMINATE: without its options). */
static inline __u32 iw_opcode_hdr_len(const struct iw_opcode_desc *desc)
{
	return ((desc->flags & IW_OPF_TAGGED) ? IW_TAGGED_HDR_LEN :
		IW_UNTAGGED_HDR_LEN) + desc->rdmap_len;
}

/*
 * How many bytes of a ULPDU that starts with the control bytes @ddp and
 * @rdmap are headers: what a receiver collects before it can place the
 * rest.  Unknown opcodes and a T flag that does not match the opcode give
 * the bare DDP header (the parser then refuses the segment).  A TERMINATE
 * is all header, up to IW_MAX_HDR_LEN.
 */
static inline __u32 iw_hdr_len_of(__u8 ddp, __u8 rdmap)
{
	const struct iw_opcode_desc *desc =
		iw_opcode_lookup(rdmap & IW_RDMAP_OP_MASK);
	bool tagged = ddp & IW_DDP_T;

	if (!desc || tagged != !!(desc->flags & IW_OPF_TAGGED))
		return tagged ? IW_TAGGED_HDR_LEN : IW_UNTAGGED_HDR_LEN;
	if ((rdmap & IW_RDMAP_OP_MASK) == IW_OP_TERMINATE)
		return IW_MAX_HDR_LEN;
	return iw_opcode_hdr_len(desc);
}

/*
 * ---------------------------------------------------------------------
 * TERMINATE (RFC 5040 section 4.8 and 7)
 *
 *  Terminate control: Layer:31-28 EType:27-24 ErrCode:23-16 M:15 D:14
 *  R:13 Rsvd:12-0; then, if D, the DDP segment length (2 bytes, the
 *  ULPDU_Length of the offending FPDU) and its DDP header (14 or 18 bytes
 *  by that header's own T flag); then, if R, the 28-byte READ request
 *  header of the offending message.
 * ---------------------------------------------------------------------
 */
#define IW_TERM_M		0x8000U	/* DDP segment length valid */
#define IW_TERM_D		0x4000U	/* DDP header included */
#define IW_TERM_R		0x2000U	/* READ request header included */

enum iw_term_layer {
	IW_LAYER_RDMAP		= 0x0,
	IW_LAYER_DDP		= 0x1,
	IW_LAYER_LLP		= 0x2,	/* MPA */
};

enum iw_rdmap_etype {
	IW_RDMAP_ET_CATASTROPHIC	= 0x0,	/* local catastrophic */
	IW_RDMAP_ET_PROTECTION		= 0x1,	/* remote protection */
	IW_RDMAP_ET_OPERATION		= 0x2,	/* remote operation */
};

enum iw_rdmap_ecode {
	IW_RDMAP_EC_INVALID_STAG	= 0x00,
	IW_RDMAP_EC_BASE_BOUNDS		= 0x01,
	IW_RDMAP_EC_ACCESS		= 0x02,
	IW_RDMAP_EC_STAG_STREAM		= 0x03,	/* not associated with stream */
	IW_RDMAP_EC_TO_WRAP		= 0x04,
	IW_RDMAP_EC_VERSION		= 0x05,
	IW_RDMAP_EC_OPCODE		= 0x06,	/* unexpected opcode */
	IW_RDMAP_EC_CATASTROPHIC_STREAM	= 0x07,
	IW_RDMAP_EC_CATASTROPHIC_GLOBAL	= 0x08,
	IW_RDMAP_EC_CANNOT_INVALIDATE	= 0x09,
	IW_RDMAP_EC_UNSPECIFIED		= 0xff,
};

enum iw_ddp_etype {
	IW_DDP_ET_CATASTROPHIC	= 0x0,
	IW_DDP_ET_TAGGED	= 0x1,
	IW_DDP_ET_UNTAGGED	= 0x2,
	IW_DDP_ET_RSVD_LLP	= 0x3,
};

enum iw_ddp_tagged_ecode {
	IW_DDP_EC_T_INVALID_STAG	= 0x00,
	IW_DDP_EC_T_BASE_BOUNDS		= 0x01,
	IW_DDP_EC_T_STAG_STREAM		= 0x02,
	IW_DDP_EC_T_TO_WRAP		= 0x03,
	IW_DDP_EC_T_VERSION		= 0x04,
};

enum iw_ddp_untagged_ecode {
	IW_DDP_EC_U_INVALID_QN		= 0x01,
	IW_DDP_EC_U_NO_BUFFER		= 0x02,	/* invalid MSN: no buffer */
	IW_DDP_EC_U_MSN_RANGE		= 0x03,
	IW_DDP_EC_U_INVALID_MO		= 0x04,
	IW_DDP_EC_U_TOO_LONG		= 0x05,
	IW_DDP_EC_U_VERSION		= 0x06,
};

/* LLP (MPA) layer: error type 0, codes of RFC 5044 and RFC 6581. */
#define IW_LLP_ET_MPA			0x0
enum iw_llp_ecode {
	IW_LLP_EC_TCP_LOST		= 0x01,
	IW_LLP_EC_CRC			= 0x02,
	IW_LLP_EC_MARKER		= 0x03,	/* marker vs ULPDU_Length */
	IW_LLP_EC_BAD_RR		= 0x04,	/* invalid Request / Reply */
	IW_LLP_EC_CATASTROPHIC		= 0x05,	/* RFC 6581 */
	IW_LLP_EC_INSUFFICIENT_IRD	= 0x06,
	IW_LLP_EC_NO_MATCHING_RTR	= 0x07,
};

/*
 * ---------------------------------------------------------------------
 * RFC 7306 atomics: AOpCode in the low 4 bits of the first word.
 * ---------------------------------------------------------------------
 */
enum iw_atomic_op {
	IW_ATOMIC_FETCH_ADD		= 0x0,
	IW_ATOMIC_CMP_SWAP		= 0x1,
	IW_ATOMIC_MASKED_FETCH_ADD	= 0x2,
	IW_ATOMIC_MASKED_CMP_SWAP	= 0x3,
	IW_NR_ATOMIC_OPS		= 0x4,
};
#define IW_ATOMIC_OP_MASK		0xfU

/*
 * Immediate data RsvdULP word (softrnic, only with rdmap_ext): 0 is a
 * stand-alone Immediate Data message (the second half of WRITE_WITH_IMM,
 * it takes a receive WQE); IW_IMM_FOR_SEND marks the immediate data of
 * the SEND that follows it (SEND_WITH_IMM: the two share one WQE).
 */
#define IW_IMM_ALONE		0x0U
#define IW_IMM_FOR_SEND		0x1U

#endif /* SOFTRNIC_PROTO_IWARP_HDR_H */
