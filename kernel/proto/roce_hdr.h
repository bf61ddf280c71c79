/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * InfiniBand transport headers as carried by RoCEv2 (IBTA vol 1 ch. 9 and
 * annex A17): wire structs, field accessors, opcode values and the
 * per-opcode descriptor table that both roce_build_hdrs() and roce_parse()
 * (roce_parse.h) follow.  Pure code shared by softrnic.ko and the host
 * tests.  Documentation/wire-roce.md describes the format.
 *
 * A RoCEv2 packet is Ethernet / IPv4 or IPv6 / UDP (dport 4791) / BTH /
 * extension headers / payload / pad / ICRC.  Every struct here is packed
 * because the BTH lands at offset 42 (or 62) of the frame.
 */
#ifndef SOFTRNIC_PROTO_ROCE_HDR_H
#define SOFTRNIC_PROTO_ROCE_HDR_H

#include "proto_compat.h"

#define ROCE_UDP_DPORT		4791

#define ROCE_BTH_LEN		12
#define ROCE_RETH_LEN		16
#define ROCE_AETH_LEN		4
#define ROCE_ATOMIC_ETH_LEN	28
#define ROCE_ATOMIC_ACK_LEN	8
#define ROCE_IMMDT_LEN		4
#define ROCE_IETH_LEN		4
#define ROCE_DETH_LEN		8
#define ROCE_FETH_LEN		4
#define ROCE_CNP_RSVD_LEN	16
#define ROCE_ICRC_LEN		4
/* Longest BTH + extension headers of any opcode (atomic request). */
#define ROCE_MAX_HDR_LEN	(ROCE_BTH_LEN + ROCE_ATOMIC_ETH_LEN)
/* BTH to end of UDP payload can never exceed what a UDP length allows. */
#define ROCE_MAX_LEN		(0xffff - 8)

#define ROCE_QPN_MASK		0xffffffU
/* Destination QPN of a UD multicast packet (IBTA 10.5.2.4). */
#define ROCE_MCAST_QPN		0xffffffU
#define ROCE_PSN_MASK		0xffffffU
#define ROCE_MSN_MASK		0xffffffU

/*
 * ---------------------------------------------------------------------
 * Base Transport Header (12 bytes)
 *
 *  byte 0     OpCode
 *  byte 1     SE:7 M:6 PadCnt:5-4 TVer:3-0
 *  bytes 2-3  P_Key
 *  byte 4     FECN:7 BECN:6 resv6:5-0       (the ICRC masks this byte)
 *  bytes 5-7  DestQP
 *  byte 8     AckReq:7 resv7:6-0
 *  bytes 9-11 PSN
 * ---------------------------------------------------------------------
 */
struct roce_bth {
	__u8	opcode;
	__u8	flags;
	__be16	pkey;
	__be32	qpn;
	__be32	apsn;
} SR_PACKED;

#define ROCE_BTH_SE		0x80U
#define ROCE_BTH_MIG		0x40U
#define ROCE_BTH_PAD_SHIFT	4
#define ROCE_BTH_PAD_MASK	0x30U
#define ROCE_BTH_TVER_MASK	0x0fU
#define ROCE_BTH_FECN		0x80000000U
#define ROCE_BTH_BECN		0x40000000U
#define ROCE_BTH_RESV8A_MASK	0xff000000U
#define ROCE_BTH_ACKREQ		0x80000000U
#define ROCE_DEFAULT_PKEY	0xffffU
#define ROCE_PKEY_FULL		0x8000U	/* membership bit */

/*
 * Do P_Keys @a and @b match (IBTA 10.9.3)?  The same partition (low 15
 * bits), and at least one of them a full member.
 */
static inline bool roce_pkey_match(__u16 a, __u16 b)
{
	return !((a ^ b) & ~ROCE_PKEY_FULL & 0xffffU) &&
	       ((a | b) & ROCE_PKEY_FULL);
}

static inline __u8 roce_bth_opcode(const struct roce_bth *bth)
{
	return bth->opcode;
}

static inline bool roce_bth_se(const struct roce_bth *bth)
{
	return bth->flags & ROCE_BTH_SE;
}

static inline bool roce_bth_mig(const struct roce_bth *bth)
{
	return bth->flags & ROCE_BTH_MIG;
}

static inline __u8 roce_bth_pad(const struct roce_bth *bth)
{
	return (bth->flags & ROCE_BTH_PAD_MASK) >> ROCE_BTH_PAD_SHIFT;
}

static inline __u8 roce_bth_tver(const struct roce_bth *bth)
{
	return bth->flags & ROCE_BTH_TVER_MASK;
}

static inline __u16 roce_bth_pkey(const struct roce_bth *bth)
{
	return sr_be16_to_cpu(bth->pkey);
}

static inline bool roce_bth_fecn(const struct roce_bth *bth)
{
	return sr_be32_to_cpu(bth->qpn) & ROCE_BTH_FECN;
}

static inline bool roce_bth_becn(const struct roce_bth *bth)
{
	return sr_be32_to_cpu(bth->qpn) & ROCE_BTH_BECN;
}

static inline __u32 roce_bth_qpn(const struct roce_bth *bth)
{
	return sr_be32_to_cpu(bth->qpn) & ROCE_QPN_MASK;
}

static inline bool roce_bth_ackreq(const struct roce_bth *bth)
{
	return sr_be32_to_cpu(bth->apsn) & ROCE_BTH_ACKREQ;
}

static inline __u32 roce_bth_psn(const struct roce_bth *bth)
{
	return sr_be32_to_cpu(bth->apsn) & ROCE_PSN_MASK;
}

/* Setters leave the other bits of the same byte or word untouched. */
static inline void roce_bth_set_opcode(struct roce_bth *bth, __u8 opcode)
{
	bth->opcode = opcode;
}

static inline void roce_bth_set_flag_bits(struct roce_bth *bth, __u8 mask,
					  __u8 val)
{
	bth->flags = (__u8)((bth->flags & ~mask) | (val & mask));
}

static inline void roce_bth_set_se(struct roce_bth *bth, bool se)
{
	roce_bth_set_flag_bits(bth, ROCE_BTH_SE, se ? ROCE_BTH_SE : 0);
}

static inline void roce_bth_set_mig(struct roce_bth *bth, bool mig)
{
	roce_bth_set_flag_bits(bth, ROCE_BTH_MIG, mig ? ROCE_BTH_MIG : 0);
}

static inline void roce_bth_set_pad(struct roce_bth *bth, __u8 pad)
{
	roce_bth_set_flag_bits(bth, ROCE_BTH_PAD_MASK,
			       (__u8)(pad << ROCE_BTH_PAD_SHIFT));
}

static inline void roce_bth_set_tver(struct roce_bth *bth, __u8 tver)
{
	roce_bth_set_flag_bits(bth, ROCE_BTH_TVER_MASK, tver);
}

static inline void roce_bth_set_pkey(struct roce_bth *bth, __u16 pkey)
{
	bth->pkey = sr_cpu_to_be16(pkey);
}

static inline void roce_bth_set_qpn_bits(struct roce_bth *bth, __u32 mask,
					 __u32 val)
{
	__u32 w = sr_be32_to_cpu(bth->qpn);

	bth->qpn = sr_cpu_to_be32((w & ~mask) | (val & mask));
}

static inline void roce_bth_set_fecn(struct roce_bth *bth, bool on)
{
	roce_bth_set_qpn_bits(bth, ROCE_BTH_FECN, on ? ROCE_BTH_FECN : 0);
}

static inline void roce_bth_set_becn(struct roce_bth *bth, bool on)
{
	roce_bth_set_qpn_bits(bth, ROCE_BTH_BECN, on ? ROCE_BTH_BECN : 0);
}

static inline void roce_bth_set_qpn(struct roce_bth *bth, __u32 qpn)
{
	roce_bth_set_qpn_bits(bth, ROCE_QPN_MASK, qpn);
}

static inline void roce_bth_set_ackreq(struct roce_bth *bth, bool on)
{
	__u32 w = sr_be32_to_cpu(bth->apsn);

	w = on ? (w | ROCE_BTH_ACKREQ) : (w & ~ROCE_BTH_ACKREQ);
	bth->apsn = sr_cpu_to_be32(w);
}

static inline void roce_bth_set_psn(struct roce_bth *bth, __u32 psn)
{
	__u32 w = sr_be32_to_cpu(bth->apsn);

	w = (w & ~ROCE_PSN_MASK) | (psn & ROCE_PSN_MASK);
	bth->apsn = sr_cpu_to_be32(w);
}

/*
 * ---------------------------------------------------------------------
 * RDMA Extended Transport Header (16 bytes): write/read/flush target.
 * ---------------------------------------------------------------------
 */
struct roce_reth {
	__be64	va;
	__be32	rkey;
	__be32	len;
} SR_PACKED;

static inline __u64 roce_reth_va(const struct roce_reth *h)
{
	return sr_be64_to_cpu(h->va);
}

static inline __u32 roce_reth_rkey(const struct roce_reth *h)
{
	return sr_be32_to_cpu(h->rkey);
}

static inline __u32 roce_reth_len(const struct roce_reth *h)
{
	return sr_be32_to_cpu(h->len);
}

static inline void roce_reth_set(struct roce_reth *h, __u64 va, __u32 rkey,
				 __u32 len)
{
	h->va = sr_cpu_to_be64(va);
	h->rkey = sr_cpu_to_be32(rkey);
	h->len = sr_cpu_to_be32(len);
}

/*
 * ---------------------------------------------------------------------
 * ACK Extended Transport Header (4 bytes): syndrome:31-24 MSN:23-0.
 *
 * Syndrome bit 7 is reserved, bits 6-5 the type, bits 4-0 a value whose
 * meaning depends on the type:
 *   00 ACK      value = credit count code (roce_aeth_credits())
 *   01 RNR NAK  value = RNR timer code (roce_rnr_timer_usecs())
 *   10 reserved
 *   11 NAK      value = enum roce_nak_code
 * ---------------------------------------------------------------------
 */
struct roce_aeth {
	__be32	smsn;
} SR_PACKED;

#define ROCE_AETH_TYPE_SHIFT	5
#define ROCE_AETH_TYPE_MASK	0x60U
#define ROCE_AETH_VALUE_MASK	0x1fU
#define ROCE_AETH_SYN_SHIFT	24

enum roce_aeth_type {
	ROCE_AETH_ACK		= 0,
	ROCE_AETH_RNR_NAK	= 1,
	ROCE_AETH_RESERVED	= 2,
	ROCE_AETH_NAK		= 3,
};

enum roce_nak_code {
	ROCE_NAK_PSN_SEQ_ERR		= 0,
	ROCE_NAK_INVALID_REQUEST	= 1,
	ROCE_NAK_REMOTE_ACCESS_ERR	= 2,
	ROCE_NAK_REMOTE_OP_ERR		= 3,
	ROCE_NAK_INVALID_RD_REQUEST	= 4,
	/* 5..31 reserved */
};

/* Credit code 31: the responder does not advertise end-to-end credits. */
#define ROCE_AETH_CREDITS_INVALID	0x1fU
#define ROCE_CREDITS_UNLIMITED		0xffffffffU

static inline __u8 roce_aeth_syndrome(const struct roce_aeth *h)
{
	return (__u8)(sr_be32_to_cpu(h->smsn) >> ROCE_AETH_SYN_SHIFT);
}

static inline __u32 roce_aeth_msn(const struct roce_aeth *h)
{
	return sr_be32_to_cpu(h->smsn) & ROCE_MSN_MASK;
}

static inline void roce_aeth_set(struct roce_aeth *h, __u8 syndrome,
				 __u32 msn)
{
	h->smsn = sr_cpu_to_be32(((__u32)syndrome << ROCE_AETH_SYN_SHIFT) |
				 (msn & ROCE_MSN_MASK));
}

static inline __u8 roce_syn_make(enum roce_aeth_type type, __u8 value)
{
	return (__u8)((((__u32)type << ROCE_AETH_TYPE_SHIFT) &
		       ROCE_AETH_TYPE_MASK) | (value & ROCE_AETH_VALUE_MASK));
}

static inline enum roce_aeth_type roce_syn_type(__u8 syndrome)
{
	return (enum roce_aeth_type)((syndrome & ROCE_AETH_TYPE_MASK) >>
				     ROCE_AETH_TYPE_SHIFT);
}

static inline __u8 roce_syn_value(__u8 syndrome)
{
	return syndrome & ROCE_AETH_VALUE_MASK;
}

/*
 * Credit counts and RNR timers share one 5-bit log-like encoding: codes
 * 1-4 are 1-4 units, then the values alternate 3 << n and 2 << (n + 1):
 * 6, 8, 12, 16, 24, 32, ... up to 49152 at code 31.
 */
static inline __u32 roce_code_units(__u8 code)
{
	code &= ROCE_AETH_VALUE_MASK;
	if (code < 2)
		return code;
	return (__u32)(2 + (code & 1)) << ((code - 2) / 2);
}

/*
 * AETH credit count (ACK syndrome value): code 0 is no credit, 1-30 are
 * 1 .. 32768 credits, 31 is "invalid": the responder does not limit.
 */
static inline __u32 roce_aeth_credits(__u8 code)
{
	code &= ROCE_AETH_VALUE_MASK;
	if (code == ROCE_AETH_CREDITS_INVALID)
		return ROCE_CREDITS_UNLIMITED;
	return roce_code_units(code);
}

/* Largest credit code that does not promise more than @credits. */
static inline __u8 roce_aeth_credit_code(__u32 credits)
{
	unsigned int code = 0;

	if (credits == ROCE_CREDITS_UNLIMITED)
		return ROCE_AETH_CREDITS_INVALID;
	while (code + 1 < ROCE_AETH_CREDITS_INVALID &&
	       roce_code_units((__u8)(code + 1)) <= credits)
		code++;
	return (__u8)code;
}

/*
 * RNR NAK timer (RNR NAK syndrome value), in microseconds: code 0 is
 * 655.36 ms, codes 1-31 are 0.01 ms .. 491.52 ms (10 us units).
 */
static inline __u32 roce_rnr_timer_usecs(__u8 code)
{
	code &= ROCE_AETH_VALUE_MASK;
	if (code == 0)
		return 655360;
	return roce_code_units(code) * 10U;
}

/*
 * ---------------------------------------------------------------------
 * Atomic Extended Transport Header (28 bytes): CmpSwap / FetchAdd.
 * ---------------------------------------------------------------------
 */
struct roce_atomic_eth {
	__be64	va;
	__be32	rkey;
	__be64	swap_add;
	__be64	compare;
} SR_PACKED;

static inline __u64 roce_atomic_eth_va(const struct roce_atomic_eth *h)
{
	return sr_be64_to_cpu(h->va);
}

static inline __u32 roce_atomic_eth_rkey(const struct roce_atomic_eth *h)
{
	return sr_be32_to_cpu(h->rkey);
}

static inline __u64 roce_atomic_eth_swap_add(const struct roce_atomic_eth *h)
{
	return sr_be64_to_cpu(h->swap_add);
}

static inline __u64 roce_atomic_eth_compare(const struct roce_atomic_eth *h)
{
	return sr_be64_to_cpu(h->compare);
}

static inline void roce_atomic_eth_set(struct roce_atomic_eth *h, __u64 va,
				       __u32 rkey, __u64 swap_add,
				       __u64 compare)
{
	h->va = sr_cpu_to_be64(va);
	h->rkey = sr_cpu_to_be32(rkey);
	h->swap_add = sr_cpu_to_be64(swap_add);
	h->compare = sr_cpu_to_be64(compare);
}

/* Atomic Acknowledge Extended Transport Header (8 bytes). */
struct roce_atomic_ack_eth {
	__be64	orig;
} SR_PACKED;

static inline __u64 roce_atomic_ack_orig(const struct roce_atomic_ack_eth *h)
{
	return sr_be64_to_cpu(h->orig);
}

static inline void roce_atomic_ack_set(struct roce_atomic_ack_eth *h,
				       __u64 orig)
{
	h->orig = sr_cpu_to_be64(orig);
}

/*
 * Immediate Data (4 bytes).  Opaque to the transport: verbs hand it to
 * the consumer in network order (ib_wc.ex.imm_data is __be32), so
 * struct roce_pkt keeps the host-order value of the four wire bytes and
 * the transport converts back with cpu_to_be32().
 */
struct roce_immdt {
	__be32	imm;
} SR_PACKED;

static inline __u32 roce_immdt_get(const struct roce_immdt *h)
{
	return sr_be32_to_cpu(h->imm);
}

static inline void roce_immdt_set(struct roce_immdt *h, __u32 imm)
{
	h->imm = sr_cpu_to_be32(imm);
}

/* Invalidate Extended Transport Header (4 bytes): R_Key to invalidate. */
struct roce_ieth {
	__be32	rkey;
} SR_PACKED;

static inline __u32 roce_ieth_rkey(const struct roce_ieth *h)
{
	return sr_be32_to_cpu(h->rkey);
}

static inline void roce_ieth_set(struct roce_ieth *h, __u32 rkey)
{
	h->rkey = sr_cpu_to_be32(rkey);
}

/* Datagram Extended Transport Header (8 bytes): Q_Key, resv8:31-24 SrcQP. */
struct roce_deth {
	__be32	qkey;
	__be32	sqpn;
} SR_PACKED;

static inline __u32 roce_deth_qkey(const struct roce_deth *h)
{
	return sr_be32_to_cpu(h->qkey);
}

static inline __u32 roce_deth_sqpn(const struct roce_deth *h)
{
	return sr_be32_to_cpu(h->sqpn) & ROCE_QPN_MASK;
}

static inline void roce_deth_set(struct roce_deth *h, __u32 qkey, __u32 sqpn)
{
	h->qkey = sr_cpu_to_be32(qkey);
	h->sqpn = sr_cpu_to_be32(sqpn & ROCE_QPN_MASK);
}

/*
 * FLUSH Extended Transport Header (4 bytes, memory placement extensions):
 * reserved:31-6, selectivity level:5-4, placement type:3-0.
 */
struct roce_feth {
	__be32	bits;
} SR_PACKED;

#define ROCE_FETH_PLT_MASK	0x0fU
#define ROCE_FETH_SEL_SHIFT	4
#define ROCE_FETH_SEL_MASK	0x30U

static inline __u8 roce_feth_sel(const struct roce_feth *h)
{
	return (sr_be32_to_cpu(h->bits) & ROCE_FETH_SEL_MASK) >>
	       ROCE_FETH_SEL_SHIFT;
}

static inline __u8 roce_feth_plt(const struct roce_feth *h)
{
	return sr_be32_to_cpu(h->bits) & ROCE_FETH_PLT_MASK;
}

static inline void roce_feth_set(struct roce_feth *h, __u8 sel, __u8 plt)
{
	h->bits = sr_cpu_to_be32((((__u32)sel << ROCE_FETH_SEL_SHIFT) &
				  ROCE_FETH_SEL_MASK) |
				 (plt & ROCE_FETH_PLT_MASK));
}

/* FETH selectivity level (memory placement extensions). */
enum roce_flush_sel {
	ROCE_FLUSH_SEL_RANGE	= 0,	/* the RETH's VA and DMA length */
	ROCE_FLUSH_SEL_MR	= 1,	/* the whole region the R_Key names */
};

/* FETH placement type: bits, at least one of them. */
#define ROCE_FLUSH_PLT_GLOBAL		0x1U	/* global visibility */
#define ROCE_FLUSH_PLT_PERSISTENT	0x2U	/* persistence */
#define ROCE_FLUSH_PLT_KNOWN		(ROCE_FLUSH_PLT_GLOBAL | \
					 ROCE_FLUSH_PLT_PERSISTENT)

/* What a responder makes of a FLUSH's FETH (roce_flush_verdict()). */
enum roce_flush_verdict {
	ROCE_FLUSH_OK = 0,		/* global visibility, range or region */
	ROCE_FLUSH_INVALID,		/* reserved level, no or reserved type bits */
	ROCE_FLUSH_NO_PERSISTENCE,	/* persistence asked of volatile memory */
};

/*
 * softrnic's responder policy for a FLUSH: selectivity level 2 and 3 and
 * placement types 0 or with bits 2-3 are reserved (Invalid Request NAK);
 * persistence cannot be given by memory that has no persistence domain,
 * which is all memory softrnic registers (Remote Access Error NAK, as a
 * responder whose region lacks the persistent-flush right answers).
 */
static inline enum roce_flush_verdict roce_flush_verdict(__u8 sel, __u8 plt)
{
	if (sel > ROCE_FLUSH_SEL_MR || !plt || (plt & ~ROCE_FLUSH_PLT_KNOWN))
		return ROCE_FLUSH_INVALID;
	if (plt & ROCE_FLUSH_PLT_PERSISTENT)
		return ROCE_FLUSH_NO_PERSISTENCE;
	return ROCE_FLUSH_OK;
}

/* RoCEv2 CNP (annex A17.9.3): 16 reserved bytes after the BTH. */
struct roce_cnp_rsvd {
	__u8	rsvd[ROCE_CNP_RSVD_LEN];
} SR_PACKED;

SR_STATIC_ASSERT(sizeof(struct roce_bth) == ROCE_BTH_LEN, "BTH size");
SR_STATIC_ASSERT(sizeof(struct roce_reth) == ROCE_RETH_LEN, "RETH size");
SR_STATIC_ASSERT(sizeof(struct roce_aeth) == ROCE_AETH_LEN, "AETH size");
SR_STATIC_ASSERT(sizeof(struct roce_atomic_eth) == ROCE_ATOMIC_ETH_LEN,
		 "AtomicETH size");
SR_STATIC_ASSERT(sizeof(struct roce_atomic_ack_eth) == ROCE_ATOMIC_ACK_LEN,
		 "AtomicAckETH size");
SR_STATIC_ASSERT(sizeof(struct roce_immdt) == ROCE_IMMDT_LEN, "ImmDt size");
SR_STATIC_ASSERT(sizeof(struct roce_ieth) == ROCE_IETH_LEN, "IETH size");
SR_STATIC_ASSERT(sizeof(struct roce_deth) == ROCE_DETH_LEN, "DETH size");
SR_STATIC_ASSERT(sizeof(struct roce_feth) == ROCE_FETH_LEN, "FETH size");
SR_STATIC_ASSERT(sizeof(struct roce_cnp_rsvd) == ROCE_CNP_RSVD_LEN,
		 "CNP size");

/*
 * ---------------------------------------------------------------------
 * Opcodes.  The top three bits name the transport, the low five the
 * operation.  softrnic speaks RC and UD (plus the RoCEv2 CNP); UC, RD,
 * XRC and the manufacturer-specific ranges are refused.
 * ---------------------------------------------------------------------
 */
#define ROCE_TRANSPORT_MASK	0xe0U

enum roce_transport {
	ROCE_TRANSPORT_RC	= 0x00,
	ROCE_TRANSPORT_UC	= 0x20,
	ROCE_TRANSPORT_RD	= 0x40,
	ROCE_TRANSPORT_UD	= 0x60,
	ROCE_TRANSPORT_CNP	= 0x80,
	ROCE_TRANSPORT_XRC	= 0xa0,
	/* 0xc0, 0xe0: manufacturer specific */
};

enum roce_opcode {
	ROCE_RC_SEND_FIRST			= 0x00,
	ROCE_RC_SEND_MIDDLE			= 0x01,
	ROCE_RC_SEND_LAST			= 0x02,
	ROCE_RC_SEND_LAST_WITH_IMMEDIATE	= 0x03,
	ROCE_RC_SEND_ONLY			= 0x04,
	ROCE_RC_SEND_ONLY_WITH_IMMEDIATE	= 0x05,
	ROCE_RC_RDMA_WRITE_FIRST		= 0x06,
	ROCE_RC_RDMA_WRITE_MIDDLE		= 0x07,
	ROCE_RC_RDMA_WRITE_LAST			= 0x08,
	ROCE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE	= 0x09,
	ROCE_RC_RDMA_WRITE_ONLY			= 0x0a,
	ROCE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE	= 0x0b,
	ROCE_RC_RDMA_READ_REQUEST		= 0x0c,
	ROCE_RC_RDMA_READ_RESPONSE_FIRST	= 0x0d,
	ROCE_RC_RDMA_READ_RESPONSE_MIDDLE	= 0x0e,
	ROCE_RC_RDMA_READ_RESPONSE_LAST		= 0x0f,
	ROCE_RC_RDMA_READ_RESPONSE_ONLY		= 0x10,
	ROCE_RC_ACKNOWLEDGE			= 0x11,
	ROCE_RC_ATOMIC_ACKNOWLEDGE		= 0x12,
	ROCE_RC_COMPARE_SWAP			= 0x13,
	ROCE_RC_FETCH_ADD			= 0x14,
	/* 0x15 reserved for RC (RESYNC is RD only) */
	ROCE_RC_SEND_LAST_WITH_INVALIDATE	= 0x16,
	ROCE_RC_SEND_ONLY_WITH_INVALIDATE	= 0x17,
	/* 0x18-0x1b reserved */
	ROCE_RC_FLUSH				= 0x1c,
	ROCE_RC_ATOMIC_WRITE			= 0x1d,
	/* 0x1e-0x1f reserved */

	ROCE_UD_SEND_ONLY			= 0x64,
	ROCE_UD_SEND_ONLY_WITH_IMMEDIATE	= 0x65,

	ROCE_CNP				= 0x81,
};

#define ROCE_RC_NR_OPCODES	(ROCE_RC_ATOMIC_WRITE + 1)

/* Extension headers, in the order they may follow the BTH. */
enum roce_ext {
	ROCE_EXT_NONE = 0,
	ROCE_EXT_DETH,
	ROCE_EXT_FETH,
	ROCE_EXT_RETH,
	ROCE_EXT_ATOMIC_ETH,
	ROCE_EXT_AETH,
	ROCE_EXT_ATOMIC_ACK,
	ROCE_EXT_IMMDT,
	ROCE_EXT_IETH,
	ROCE_EXT_CNP_RSVD,
	ROCE_EXT_NR,
};

static inline unsigned int roce_ext_len(enum roce_ext ext)
{
	switch (ext) {
	case ROCE_EXT_DETH:		return ROCE_DETH_LEN;
	case ROCE_EXT_FETH:		return ROCE_FETH_LEN;
	case ROCE_EXT_RETH:		return ROCE_RETH_LEN;
	case ROCE_EXT_ATOMIC_ETH:	return ROCE_ATOMIC_ETH_LEN;
	case ROCE_EXT_AETH:		return ROCE_AETH_LEN;
	case ROCE_EXT_ATOMIC_ACK:	return ROCE_ATOMIC_ACK_LEN;
	case ROCE_EXT_IMMDT:		return ROCE_IMMDT_LEN;
	case ROCE_EXT_IETH:		return ROCE_IETH_LEN;
	case ROCE_EXT_CNP_RSVD:		return ROCE_CNP_RSVD_LEN;
	default:			return 0;
	}
}

/* What a packet belongs to (responses name the operation they answer). */
enum roce_op {
	ROCE_OP_SEND = 1,
	ROCE_OP_WRITE,
	ROCE_OP_READ,		/* request and READ RESPONSE packets */
	ROCE_OP_CMP_SWAP,
	ROCE_OP_FETCH_ADD,
	ROCE_OP_ACK,		/* ACKNOWLEDGE: ACK, NAK or RNR NAK */
	ROCE_OP_ATOMIC_ACK,	/* response to CMP_SWAP or FETCH_ADD */
	ROCE_OP_FLUSH,
	ROCE_OP_ATOMIC_WRITE,
	ROCE_OP_CNP,
};

/* roce_opcode_desc.flags */
#define ROCE_OPF_REQ		0x0001U	/* sent by the requester */
#define ROCE_OPF_RESP		0x0002U	/* sent by the responder */
#define ROCE_OPF_FIRST		0x0004U	/* starts a message */
#define ROCE_OPF_MIDDLE		0x0008U
#define ROCE_OPF_LAST		0x0010U	/* ends a message */
#define ROCE_OPF_ONLY		(ROCE_OPF_FIRST | ROCE_OPF_LAST)
#define ROCE_OPF_PAYLOAD	0x0020U	/* may carry payload (and pad) */
#define ROCE_OPF_IMM		0x0040U	/* carries ImmDt */
#define ROCE_OPF_INV		0x0080U	/* carries IETH */

#define ROCE_MAX_EXT		2

struct roce_opcode_desc {
	const char	*name;
	__u16		flags;		/* ROCE_OPF_* */
	__u8		opcode;		/* enum roce_opcode, equals its index */
	__u8		op;		/* enum roce_op */
	__u8		transport;	/* enum roce_transport */
	__u8		ext[ROCE_MAX_EXT]; /* in wire order, ROCE_EXT_NONE ends */
};

#define ROCE_OPC(_opc, _name, _op, _flags, _e0, _e1) \
	{ _name, _flags, _opc, _op, (_opc) & ROCE_TRANSPORT_MASK, { _e0, _e1 } }
#define ROCE_OPC_RSVD(_opc) \
	{ NULL, 0, _opc, 0, 0, { ROCE_EXT_NONE, ROCE_EXT_NONE } }

#define ROCE_REQ_PL	(ROCE_OPF_REQ | ROCE_OPF_PAYLOAD)
#define ROCE_RESP_PL	(ROCE_OPF_RESP | ROCE_OPF_PAYLOAD)

/*
 * The opcode table: NULL for reserved or unsupported opcodes.  The single
 * source of truth for which headers follow the BTH, used by both the
 * encoder and the parser.
 */
static inline const struct roce_opcode_desc *roce_opcode_lookup(__u8 opcode)
{
	static const struct roce_opcode_desc rc[ROCE_RC_NR_OPCODES] = {
		ROCE_OPC(ROCE_RC_SEND_FIRST, "RC_SEND_FIRST", ROCE_OP_SEND,
			 ROCE_REQ_PL | ROCE_OPF_FIRST,
			 ROCE_EXT_NONE, ROCE_EXT_NONE),
		ROCE_OPC(ROCE_RC_SEND_MIDDLE, "RC_SEND_MIDDLE", ROCE_OP_SEND,
			 ROCE_REQ_PL | ROCE_OPF_MIDDLE,
			 ROCE_EXT_NONE, ROCE_EXT_NONE),
		ROCE_OPC(ROCE_RC_SEND_LAST, "RC_SEND_LAST", ROCE_OP_SEND,
			 ROCE_REQ_PL | ROCE_OPF_LAST,
			 ROCE_EXT_NONE, ROCE_EXT_NONE),
		ROCE_OPC(ROCE_RC_SEND_LAST_WITH_IMMEDIATE,
			 "RC_SEND_LAST_WITH_IMMEDIATE", ROCE_OP_SEND,
			 ROCE_REQ_PL | ROCE_OPF_LAST | ROCE_OPF_IMM,
			 ROCE_EXT_IMMDT, ROCE_EXT_NONE),
		ROCE_OPC(ROCE_RC_SEND_ONLY, "RC_SEND_ONLY", ROCE_OP_SEND,
			 ROCE_REQ_PL | ROCE_OPF_ONLY,
			 ROCE_EXT_NONE, ROCE_EXT_NONE),
		ROCE_OPC(ROCE_RC_SEND_ONLY_WITH_IMMEDIATE,
			 "RC_SEND_ONLY_WITH_IMMEDIATE", ROCE_OP_SEND,
			 ROCE_REQ_PL | ROCE_OPF_ONLY | ROCE_OPF_IMM,
			 ROCE_EXT_IMMDT, ROCE_EXT_NONE),
		ROCE_OPC(ROCE_RC_RDMA_WRITE_FIRST, "RC_RDMA_WRITE_FIRST",
			 ROCE_OP_WRITE, ROCE_REQ_PL | ROCE_OPF_FIRST,
			 ROCE_EXT_RETH, ROCE_EXT_NONE),
		ROCE_OPC(ROCE_RC_RDMA_WRITE_MIDDLE, "RC_RDMA_WRITE_MIDDLE",
			 ROCE_OP_WRITE, ROCE_REQ_PL | ROCE_OPF_MIDDLE,
			 ROCE_EXT_NONE, ROCE_EXT_NONE),
		ROCE_OPC(ROCE_RC_RDMA_WRITE_LAST, "RC_RDMA_WRITE_LAST",
			 ROCE_OP_WRITE, ROCE_REQ_PL | ROCE_OPF_LAST,
			 ROCE_EXT_NONE, ROCE_EXT_NONE),
		ROCE_OPC(ROCE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
			 "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", ROCE_OP_WRITE,
			 ROCE_REQ_PL | ROCE_OPF_LAST | ROCE_OPF_IMM,
			 ROCE_EXT_IMMDT, ROCE_EXT_NONE),
		ROCE_OPC(ROCE_RC_RDMA_WRITE_ONLY, "RC_RDMA_WRITE_ONLY",
			 ROCE_OP_WRITE, ROCE_REQ_PL | ROCE_OPF_ONLY,
			 ROCE_EXT_RETH, ROCE_EXT_NONE),
		ROCE_OPC(ROCE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
			 "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", ROCE_OP_WRITE,
			 ROCE_REQ_PL | ROCE_OPF_ONLY | ROCE_OPF_IMM,
			 ROCE_EXT_RETH, ROCE_EXT_IMMDT),
		ROCE_OPC(ROCE_RC_RDMA_READ_REQUEST, "RC_RDMA_READ_REQUEST",
			 ROCE_OP_READ, ROCE_OPF_REQ | ROCE_OPF_ONLY,
			 ROCE_EXT_RETH, ROCE_EXT_NONE),
		ROCE_OPC(ROCE_RC_RDMA_READ_RESPONSE_FIRST,
			 "RC_RDMA_READ_RESPONSE_FIRST", ROCE_OP_READ,
			 ROCE_RESP_PL | ROCE_OPF_FIRST,
			 ROCE_EXT_AETH, ROCE_EXT_NONE),
		ROCE_OPC(ROCE_RC_RDMA_READ_RESPONSE_MIDDLE,
			 "RC_RDMA_READ_RESPONSE_MIDDLE", ROCE_OP_READ,
			 ROCE_RESP_PL | ROCE_OPF_MIDDLE,
			 ROCE_EXT_NONE, ROCE_EXT_NONE),
		ROCE_OPC(ROCE_RC_RDMA_READ_RESPONSE_LAST,
			 "RC_RDMA_READ_RESPONSE_LAST", ROCE_OP_READ,
			 ROCE_RESP_PL | ROCE_OPF_LAST,
			 ROCE_EXT_AETH, ROCE_EXT_NONE),
		ROCE_OPC(ROCE_RC_RDMA_READ_RESPONSE_ONLY,
			 "RC_RDMA_READ_RESPONSE_ONLY", ROCE_OP_READ,
			 ROCE_RESP_PL | ROCE_OPF_ONLY,
			 ROCE_EXT_AETH, ROCE_EXT_NONE),
		ROCE_OPC(ROCE_RC_ACKNOWLEDGE, "RC_ACKNOWLEDGE", ROCE_OP_ACK,
			 ROCE_OPF_RESP | ROCE_OPF_ONLY,
			 ROCE_EXT_AETH, ROCE_EXT_NONE),
		ROCE_OPC(ROCE_RC_ATOMIC_ACKNOWLEDGE, "RC_ATOMIC_ACKNOWLEDGE",
			 ROCE_OP_ATOMIC_ACK, ROCE_OPF_RESP | ROCE_OPF_ONLY,
			 ROCE_EXT_AETH, ROCE_EXT_ATOMIC_ACK),
		ROCE_OPC(ROCE_RC_COMPARE_SWAP, "RC_COMPARE_SWAP",
			 ROCE_OP_CMP_SWAP, ROCE_OPF_REQ | ROCE_OPF_ONLY,
			 ROCE_EXT_ATOMIC_ETH, ROCE_EXT_NONE),
		ROCE_OPC(ROCE_RC_FETCH_ADD, "RC_FETCH_ADD",
			 ROCE_OP_FETCH_ADD, ROCE_OPF_REQ | ROCE_OPF_ONLY,
			 ROCE_EXT_ATOMIC_ETH, ROCE_EXT_NONE),
		ROCE_OPC_RSVD(0x15),
		ROCE_OPC(ROCE_RC_SEND_LAST_WITH_INVALIDATE,
			 "RC_SEND_LAST_WITH_INVALIDATE", ROCE_OP_SEND,
			 ROCE_REQ_PL | ROCE_OPF_LAST | ROCE_OPF_INV,
			 ROCE_EXT_IETH, ROCE_EXT_NONE),
		ROCE_OPC(ROCE_RC_SEND_ONLY_WITH_INVALIDATE,
			 "RC_SEND_ONLY_WITH_INVALIDATE", ROCE_OP_SEND,
			 ROCE_REQ_PL | ROCE_OPF_ONLY | ROCE_OPF_INV,
			 ROCE_EXT_IETH, ROCE_EXT_NONE),
		ROCE_OPC_RSVD(0x18),
		ROCE_OPC_RSVD(0x19),
		ROCE_OPC_RSVD(0x1a),
		ROCE_OPC_RSVD(0x1b),
		/* FLUSH: no payload; answered by a zero-length READ RESPONSE ONLY */
		ROCE_OPC(ROCE_RC_FLUSH, "RC_FLUSH", ROCE_OP_FLUSH,
			 ROCE_OPF_REQ | ROCE_OPF_ONLY,
			 ROCE_EXT_FETH, ROCE_EXT_RETH),
		/*
		 * ATOMIC WRITE: exactly 8 bytes of payload; answered, like a
		 * FLUSH, by a zero-length READ RESPONSE ONLY
		 */
		ROCE_OPC(ROCE_RC_ATOMIC_WRITE, "RC_ATOMIC_WRITE",
			 ROCE_OP_ATOMIC_WRITE, ROCE_REQ_PL | ROCE_OPF_ONLY,
			 ROCE_EXT_RETH, ROCE_EXT_NONE),
	};
	static const struct roce_opcode_desc ud[] = {
		ROCE_OPC(ROCE_UD_SEND_ONLY, "UD_SEND_ONLY", ROCE_OP_SEND,
			 ROCE_REQ_PL | ROCE_OPF_ONLY,
			 ROCE_EXT_DETH, ROCE_EXT_NONE),
		ROCE_OPC(ROCE_UD_SEND_ONLY_WITH_IMMEDIATE,
			 "UD_SEND_ONLY_WITH_IMMEDIATE", ROCE_OP_SEND,
			 ROCE_REQ_PL | ROCE_OPF_ONLY | ROCE_OPF_IMM,
			 ROCE_EXT_DETH, ROCE_EXT_IMMDT),
	};
	/* CNP: BECN set, 16 reserved zero bytes, no payload, no ACK */
	static const struct roce_opcode_desc cnp =
		ROCE_OPC(ROCE_CNP, "CNP", ROCE_OP_CNP, ROCE_OPF_ONLY,
			 ROCE_EXT_CNP_RSVD, ROCE_EXT_NONE);
	const struct roce_opcode_desc *desc = NULL;

	if (opcode < ROCE_RC_NR_OPCODES)
		desc = &rc[opcode];
	else if (opcode >= ROCE_UD_SEND_ONLY &&
		 opcode <= ROCE_UD_SEND_ONLY_WITH_IMMEDIATE)
		desc = &ud[opcode - ROCE_UD_SEND_ONLY];
	else if (opcode == ROCE_CNP)
		desc = &cnp;
	return desc && desc->name ? desc : NULL;
}

#undef ROCE_OPC
#undef ROCE_OPC_RSVD
#undef ROCE_REQ_PL
#undef ROCE_RESP_PL

/* The transports whose opcodes softrnic parses (reserved ones included). */
static inline bool roce_transport_supported(__u8 opcode)
{
	switch (opcode & ROCE_TRANSPORT_MASK) {
	case ROCE_TRANSPORT_RC:
	case ROCE_TRANSPORT_UD:
	case ROCE_TRANSPORT_CNP:
		return true;
	default:
		return false;
	}
}

/* BTH plus the extension headers of @desc. */
static inline unsigned int
roce_opcode_hdr_len(const struct roce_opcode_desc *desc)
{
	unsigned int len = ROCE_BTH_LEN;
	unsigned int i;

	for (i = 0; i < ROCE_MAX_EXT && desc->ext[i] != ROCE_EXT_NONE; i++)
		len += roce_ext_len((enum roce_ext)desc->ext[i]);
	return len;
}

/* Whether @desc's packets carry extension header @ext. */
static inline bool roce_opcode_has_ext(const struct roce_opcode_desc *desc,
				       enum roce_ext ext)
{
	unsigned int i;

	for (i = 0; i < ROCE_MAX_EXT && desc->ext[i] != ROCE_EXT_NONE; i++)
		if (desc->ext[i] == ext)
			return true;
	return false;
}

/* Bytes of pad that make @payload_len a multiple of 4. */
static inline __u8 roce_pad_len(__u32 payload_len)
{
	return (__u8)((4 - (payload_len & 3)) & 3);
}

#endif /* SOFTRNIC_PROTO_ROCE_HDR_H */
