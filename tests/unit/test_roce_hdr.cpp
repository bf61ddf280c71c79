// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// IBTA transport header layout, accessors and the opcode table
// (kernel/proto/roce_hdr.h).  Expected bytes are written out by hand from
// the IBTA vol 1 field diagrams, not derived from the header.
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstring>
#include <map>
#include <vector>

#include "roce_hdr.h"
#include "softrnic-abi.h" /* SOFTRNIC_FLUSH_*: the same values as the FETH's */

namespace
{

template <typename T> T from_bytes(const std::vector<__u8> &b)
{
	REQUIRE(b.size() == sizeof(T));
	T h;
	std::memcpy(&h, b.data(), sizeof(T));
	return h;
}

template <typename T> std::vector<__u8> to_bytes(const T &h)
{
	std::vector<__u8> b(sizeof(T));
	std::memcpy(b.data(), &h, sizeof(T));
	return b;
}

} // namespace

TEST_CASE("wire struct sizes and field offsets", "[roce_hdr]")
{
	STATIC_REQUIRE(sizeof(roce_bth) == 12);
	STATIC_REQUIRE(offsetof(roce_bth, pkey) == 2);
	STATIC_REQUIRE(offsetof(roce_bth, qpn) == 4);
	STATIC_REQUIRE(offsetof(roce_bth, apsn) == 8);
	STATIC_REQUIRE(sizeof(roce_reth) == 16);
	STATIC_REQUIRE(offsetof(roce_reth, rkey) == 8);
	STATIC_REQUIRE(offsetof(roce_reth, len) == 12);
	STATIC_REQUIRE(sizeof(roce_aeth) == 4);
	STATIC_REQUIRE(sizeof(roce_atomic_eth) == 28);
	STATIC_REQUIRE(offsetof(roce_atomic_eth, rkey) == 8);
	STATIC_REQUIRE(offsetof(roce_atomic_eth, swap_add) == 12);
	STATIC_REQUIRE(offsetof(roce_atomic_eth, compare) == 20);
	STATIC_REQUIRE(sizeof(roce_atomic_ack_eth) == 8);
	STATIC_REQUIRE(sizeof(roce_immdt) == 4);
	STATIC_REQUIRE(sizeof(roce_ieth) == 4);
	STATIC_REQUIRE(sizeof(roce_deth) == 8);
	STATIC_REQUIRE(sizeof(roce_feth) == 4);
	STATIC_REQUIRE(alignof(roce_atomic_eth) == 1);
	STATIC_REQUIRE(ROCE_MAX_HDR_LEN == 40);
}

TEST_CASE("BTH accessors decode a hand-made header", "[roce_hdr]")
{
	// opcode RDMA WRITE ONLY; SE=1 M=1 PadCnt=2 TVer=0; P_Key 0x8001;
	// FECN=1 BECN=1 DestQP 0x123456; AckReq=1 PSN 0xabcdef
	auto bth = from_bytes<roce_bth>(
	    {0x0a, 0xe0, 0x80, 0x01, 0xc0, 0x12, 0x34, 0x56, 0x80, 0xab, 0xcd, 0xef});
	CHECK(roce_bth_opcode(&bth) == ROCE_RC_RDMA_WRITE_ONLY);
	CHECK(roce_bth_se(&bth));
	CHECK(roce_bth_mig(&bth));
	CHECK(roce_bth_pad(&bth) == 2);
	CHECK(roce_bth_tver(&bth) == 0);
	CHECK(roce_bth_pkey(&bth) == 0x8001);
	CHECK(roce_bth_fecn(&bth));
	CHECK(roce_bth_becn(&bth));
	CHECK(roce_bth_qpn(&bth) == 0x123456);
	CHECK(roce_bth_ackreq(&bth));
	CHECK(roce_bth_psn(&bth) == 0xabcdef);

	// Every flag clear, reserved bits set: they must not leak into fields.
	bth = from_bytes<roce_bth>(
	    {0x04, 0x0f, 0xff, 0xff, 0x3f, 0x00, 0x00, 0x01, 0x7f, 0x00, 0x00, 0x00});
	CHECK_FALSE(roce_bth_se(&bth));
	CHECK_FALSE(roce_bth_mig(&bth));
	CHECK(roce_bth_pad(&bth) == 0);
	CHECK(roce_bth_tver(&bth) == 0xf);
	CHECK(roce_bth_pkey(&bth) == 0xffff);
	CHECK_FALSE(roce_bth_fecn(&bth));
	CHECK_FALSE(roce_bth_becn(&bth));
	CHECK(roce_bth_qpn(&bth) == 1);
	CHECK_FALSE(roce_bth_ackreq(&bth));
	CHECK(roce_bth_psn(&bth) == 0);
}

TEST_CASE("BTH setters touch only their own bits", "[roce_hdr]")
{
	roce_bth bth;
	std::memset(&bth, 0, sizeof(bth));
	roce_bth_set_opcode(&bth, ROCE_RC_SEND_ONLY);
	roce_bth_set_se(&bth, true);
	roce_bth_set_pad(&bth, 3);
	roce_bth_set_pkey(&bth, 0xffff);
	roce_bth_set_qpn(&bth, 0xfedcba98); // high byte must be cut off
	roce_bth_set_becn(&bth, true);
	roce_bth_set_psn(&bth, 0x01000005); // wraps to 5
	roce_bth_set_ackreq(&bth, true);
	CHECK(to_bytes(bth) == std::vector<__u8>{0x04, 0xb0, 0xff, 0xff, 0x40, 0xdc, 0xba, 0x98,
						 0x80, 0x00, 0x00, 0x05});

	roce_bth_set_mig(&bth, true);
	roce_bth_set_fecn(&bth, true);
	roce_bth_set_becn(&bth, false);
	roce_bth_set_se(&bth, false);
	roce_bth_set_tver(&bth, 1);
	roce_bth_set_ackreq(&bth, false);
	roce_bth_set_psn(&bth, 0xffffff);
	CHECK(to_bytes(bth) == std::vector<__u8>{0x04, 0x71, 0xff, 0xff, 0x80, 0xdc, 0xba, 0x98,
						 0x00, 0xff, 0xff, 0xff});
	roce_bth_set_pad(&bth, 0);
	roce_bth_set_qpn(&bth, 0);
	CHECK(to_bytes(bth) == std::vector<__u8>{0x04, 0x41, 0xff, 0xff, 0x80, 0x00, 0x00, 0x00,
						 0x00, 0xff, 0xff, 0xff});
}

TEST_CASE("RETH, AtomicETH, AtomicAckETH byte layout", "[roce_hdr]")
{
	roce_reth reth;
	roce_reth_set(&reth, 0x0102030405060708ULL, 0x11223344, 0x00001000);
	CHECK(to_bytes(reth) == std::vector<__u8>{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
						  0x11, 0x22, 0x33, 0x44, 0x00, 0x00, 0x10, 0x00});
	CHECK(roce_reth_va(&reth) == 0x0102030405060708ULL);
	CHECK(roce_reth_rkey(&reth) == 0x11223344);
	CHECK(roce_reth_len(&reth) == 0x1000);

	auto at = from_bytes<roce_atomic_eth>({0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa, 0x99, 0x88, //
					       0x00, 0x00, 0x12, 0x34,			       //
					       0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2a, //
					       0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01});
	CHECK(roce_atomic_eth_va(&at) == 0xffeeddccbbaa9988ULL);
	CHECK(roce_atomic_eth_rkey(&at) == 0x1234);
	CHECK(roce_atomic_eth_swap_add(&at) == 42);
	CHECK(roce_atomic_eth_compare(&at) == 0x8000000000000001ULL);
	roce_atomic_eth at2;
	roce_atomic_eth_set(&at2, 0xffeeddccbbaa9988ULL, 0x1234, 42, 0x8000000000000001ULL);
	CHECK(to_bytes(at2) == to_bytes(at));

	roce_atomic_ack_eth ack;
	roce_atomic_ack_set(&ack, 0xdeadbeefcafef00dULL);
	CHECK(to_bytes(ack) == std::vector<__u8>{0xde, 0xad, 0xbe, 0xef, 0xca, 0xfe, 0xf0, 0x0d});
	CHECK(roce_atomic_ack_orig(&ack) == 0xdeadbeefcafef00dULL);
}

TEST_CASE("ImmDt, IETH, DETH, FETH byte layout", "[roce_hdr]")
{
	roce_immdt imm;
	roce_immdt_set(&imm, 0x01020304);
	CHECK(to_bytes(imm) == std::vector<__u8>{1, 2, 3, 4});
	CHECK(roce_immdt_get(&imm) == 0x01020304);

	roce_ieth ieth;
	roce_ieth_set(&ieth, 0xa1b2c3d4);
	CHECK(to_bytes(ieth) == std::vector<__u8>{0xa1, 0xb2, 0xc3, 0xd4});
	CHECK(roce_ieth_rkey(&ieth) == 0xa1b2c3d4);

	// Q_Key 0x80010000 (a "controlled" Q_Key), resv8 set, SrcQP 1 (GSI)
	auto deth = from_bytes<roce_deth>({0x80, 0x01, 0x00, 0x00, 0xff, 0x00, 0x00, 0x01});
	CHECK(roce_deth_qkey(&deth) == 0x80010000);
	CHECK(roce_deth_sqpn(&deth) == 1);
	roce_deth_set(&deth, 0x80010000, 0xff000001); // resv8 written as 0
	CHECK(to_bytes(deth) == std::vector<__u8>{0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01});

	// SEL in bits 5-4, PLT in bits 3-0 of the last byte
	auto feth = from_bytes<roce_feth>({0xff, 0xff, 0xff, 0xd2});
	CHECK(roce_feth_sel(&feth) == 1);
	CHECK(roce_feth_plt(&feth) == 2);
	roce_feth_set(&feth, 1, 2);
	CHECK(to_bytes(feth) == std::vector<__u8>{0x00, 0x00, 0x00, 0x12});
	roce_feth_set(&feth, 0xff, 0xff);
	CHECK(to_bytes(feth) == std::vector<__u8>{0x00, 0x00, 0x00, 0x3f});
}

TEST_CASE("AETH syndromes: ACK, RNR NAK and NAK codes", "[roce_hdr]")
{
	// ACK, credit code 0x1f (no limit), MSN 0x000102
	auto aeth = from_bytes<roce_aeth>({0x1f, 0x00, 0x01, 0x02});
	CHECK(roce_aeth_syndrome(&aeth) == 0x1f);
	CHECK(roce_aeth_msn(&aeth) == 0x102);
	CHECK(roce_syn_type(0x1f) == ROCE_AETH_ACK);
	CHECK(roce_syn_value(0x1f) == ROCE_AETH_CREDITS_INVALID);
	CHECK(roce_aeth_credits(roce_syn_value(0x1f)) == ROCE_CREDITS_UNLIMITED);

	// RNR NAK with timer code 14 (1.28 ms) is 0b0_01_01110
	CHECK(roce_syn_make(ROCE_AETH_RNR_NAK, 14) == 0x2e);
	CHECK(roce_syn_type(0x2e) == ROCE_AETH_RNR_NAK);
	CHECK(roce_rnr_timer_usecs(roce_syn_value(0x2e)) == 1280);

	// NAK codes are 0b0_11_ccccc
	CHECK(roce_syn_make(ROCE_AETH_NAK, ROCE_NAK_PSN_SEQ_ERR) == 0x60);
	CHECK(roce_syn_make(ROCE_AETH_NAK, ROCE_NAK_INVALID_REQUEST) == 0x61);
	CHECK(roce_syn_make(ROCE_AETH_NAK, ROCE_NAK_REMOTE_ACCESS_ERR) == 0x62);
	CHECK(roce_syn_make(ROCE_AETH_NAK, ROCE_NAK_REMOTE_OP_ERR) == 0x63);
	CHECK(roce_syn_make(ROCE_AETH_NAK, ROCE_NAK_INVALID_RD_REQUEST) == 0x64);
	CHECK(roce_syn_type(0x63) == ROCE_AETH_NAK);
	CHECK(roce_syn_value(0x63) == ROCE_NAK_REMOTE_OP_ERR);
	CHECK(roce_syn_type(0x40) == ROCE_AETH_RESERVED);
	// bit 7 is reserved and ignored by the type
	CHECK(roce_syn_type(0xe2) == ROCE_AETH_NAK);

	roce_aeth_set(&aeth, 0x62, 0x1abcdef); // MSN is 24 bits
	CHECK(to_bytes(aeth) == std::vector<__u8>{0x62, 0xab, 0xcd, 0xef});
}

TEST_CASE("AETH credit count and RNR timer encodings", "[roce_hdr]")
{
	// IBTA credit count encoding, codes 0..30
	const __u32 credits[31] = {0,	 1,    2,    3,	    4,	   6,	  8,	12,
				   16,	 24,   32,   48,    64,	   96,	  128,	192,
				   256,	 384,  512,  768,   1024,  1536,  2048, 3072,
				   4096, 6144, 8192, 12288, 16384, 24576, 32768};
	for (__u8 c = 0; c < 31; c++) {
		INFO("code " << int(c));
		CHECK(roce_aeth_credits(c) == credits[c]);
		CHECK(roce_aeth_credit_code(credits[c]) == c);
		if (credits[c] > 1 && c > 0 && credits[c] - 1 != credits[c - 1])
			CHECK(roce_aeth_credit_code(credits[c] - 1) == c - 1);
	}
	CHECK(roce_aeth_credit_code(1000000) == 30);
	CHECK(roce_aeth_credit_code(ROCE_CREDITS_UNLIMITED) == 31);

	// IBTA RNR NAK timer field, in microseconds (code 0 is the longest)
	const __u32 usecs[32] = {655360, 10,	20,    30,     40,     60,     80,     120,
				 160,	 240,	320,   480,    640,    960,    1280,   1920,
				 2560,	 3840,	5120,  7680,   10240,  15360,  20480,  30720,
				 40960,	 61440, 81920, 122880, 163840, 245760, 327680, 491520};
	for (__u8 c = 0; c < 32; c++) {
		INFO("code " << int(c));
		CHECK(roce_rnr_timer_usecs(c) == usecs[c]);
	}
}

namespace
{
struct ExpectedOpcode {
	const char *name;
	unsigned hdr_len; // BTH + extension headers, from IBTA packet layouts
	unsigned flags;
	std::vector<roce_ext> ext;
};

const std::map<int, ExpectedOpcode> &expected_opcodes()
{
	const unsigned req = ROCE_OPF_REQ, resp = ROCE_OPF_RESP, pl = ROCE_OPF_PAYLOAD;
	const unsigned F = ROCE_OPF_FIRST, M = ROCE_OPF_MIDDLE, L = ROCE_OPF_LAST,
		       O = ROCE_OPF_ONLY, imm = ROCE_OPF_IMM, inv = ROCE_OPF_INV;
	static const std::map<int, ExpectedOpcode> m = {
	    {0x00, {"RC_SEND_FIRST", 12, req | pl | F, {}}},
	    {0x01, {"RC_SEND_MIDDLE", 12, req | pl | M, {}}},
	    {0x02, {"RC_SEND_LAST", 12, req | pl | L, {}}},
	    {0x03, {"RC_SEND_LAST_WITH_IMMEDIATE", 16, req | pl | L | imm, {ROCE_EXT_IMMDT}}},
	    {0x04, {"RC_SEND_ONLY", 12, req | pl | O, {}}},
	    {0x05, {"RC_SEND_ONLY_WITH_IMMEDIATE", 16, req | pl | O | imm, {ROCE_EXT_IMMDT}}},
	    {0x06, {"RC_RDMA_WRITE_FIRST", 28, req | pl | F, {ROCE_EXT_RETH}}},
	    {0x07, {"RC_RDMA_WRITE_MIDDLE", 12, req | pl | M, {}}},
	    {0x08, {"RC_RDMA_WRITE_LAST", 12, req | pl | L, {}}},
	    {0x09, {"RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", 16, req | pl | L | imm, {ROCE_EXT_IMMDT}}},
	    {0x0a, {"RC_RDMA_WRITE_ONLY", 28, req | pl | O, {ROCE_EXT_RETH}}},
	    {0x0b,
	     {"RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
	      32,
	      req | pl | O | imm,
	      {ROCE_EXT_RETH, ROCE_EXT_IMMDT}}},
	    {0x0c, {"RC_RDMA_READ_REQUEST", 28, req | O, {ROCE_EXT_RETH}}},
	    {0x0d, {"RC_RDMA_READ_RESPONSE_FIRST", 16, resp | pl | F, {ROCE_EXT_AETH}}},
	    {0x0e, {"RC_RDMA_READ_RESPONSE_MIDDLE", 12, resp | pl | M, {}}},
	    {0x0f, {"RC_RDMA_READ_RESPONSE_LAST", 16, resp | pl | L, {ROCE_EXT_AETH}}},
	    {0x10, {"RC_RDMA_READ_RESPONSE_ONLY", 16, resp | pl | O, {ROCE_EXT_AETH}}},
	    {0x11, {"RC_ACKNOWLEDGE", 16, resp | O, {ROCE_EXT_AETH}}},
	    {0x12, {"RC_ATOMIC_ACKNOWLEDGE", 24, resp | O, {ROCE_EXT_AETH, ROCE_EXT_ATOMIC_ACK}}},
	    {0x13, {"RC_COMPARE_SWAP", 40, req | O, {ROCE_EXT_ATOMIC_ETH}}},
	    {0x14, {"RC_FETCH_ADD", 40, req | O, {ROCE_EXT_ATOMIC_ETH}}},
	    {0x16, {"RC_SEND_LAST_WITH_INVALIDATE", 16, req | pl | L | inv, {ROCE_EXT_IETH}}},
	    {0x17, {"RC_SEND_ONLY_WITH_INVALIDATE", 16, req | pl | O | inv, {ROCE_EXT_IETH}}},
	    {0x1c, {"RC_FLUSH", 32, req | O, {ROCE_EXT_FETH, ROCE_EXT_RETH}}},
	    {0x1d, {"RC_ATOMIC_WRITE", 28, req | pl | O, {ROCE_EXT_RETH}}},
	    {0x64, {"UD_SEND_ONLY", 20, req | pl | O, {ROCE_EXT_DETH}}},
	    {0x65,
	     {"UD_SEND_ONLY_WITH_IMMEDIATE",
	      24,
	      req | pl | O | imm,
	      {ROCE_EXT_DETH, ROCE_EXT_IMMDT}}},
	    {0x81, {"CNP", 28, O, {ROCE_EXT_CNP_RSVD}}},
	};
	return m;
}
} // namespace

TEST_CASE("opcode table matches the IBTA packet layouts", "[roce_hdr]")
{
	const auto &exp = expected_opcodes();
	for (int op = 0; op < 256; op++) {
		INFO("opcode 0x" << std::hex << op);
		const roce_opcode_desc *desc = roce_opcode_lookup(__u8(op));
		auto it = exp.find(op);
		if (it == exp.end()) {
			CHECK(desc == nullptr);
			continue;
		}
		REQUIRE(desc != nullptr);
		const ExpectedOpcode &e = it->second;
		CHECK(desc->opcode == op);
		CHECK(std::string(desc->name) == e.name);
		CHECK(desc->flags == e.flags);
		CHECK(desc->transport == (op & 0xe0));
		CHECK(roce_opcode_hdr_len(desc) == e.hdr_len);
		for (size_t i = 0; i < ROCE_MAX_EXT; i++)
			CHECK(desc->ext[i] == (i < e.ext.size() ? e.ext[i] : ROCE_EXT_NONE));
		for (int x = ROCE_EXT_DETH; x < ROCE_EXT_NR; x++) {
			bool want = false;
			for (auto y : e.ext)
				want |= y == x;
			CHECK(roce_opcode_has_ext(desc, roce_ext(x)) == want);
		}
		// a packet is either a request or a response (CNP is neither)
		CHECK(((desc->flags & ROCE_OPF_REQ) && (desc->flags & ROCE_OPF_RESP)) == false);
	}
}

TEST_CASE("opcode table operations", "[roce_hdr]")
{
	CHECK(roce_opcode_lookup(ROCE_RC_SEND_MIDDLE)->op == ROCE_OP_SEND);
	CHECK(roce_opcode_lookup(ROCE_RC_SEND_ONLY_WITH_INVALIDATE)->op == ROCE_OP_SEND);
	CHECK(roce_opcode_lookup(ROCE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE)->op == ROCE_OP_WRITE);
	CHECK(roce_opcode_lookup(ROCE_RC_RDMA_READ_REQUEST)->op == ROCE_OP_READ);
	CHECK(roce_opcode_lookup(ROCE_RC_RDMA_READ_RESPONSE_MIDDLE)->op == ROCE_OP_READ);
	CHECK(roce_opcode_lookup(ROCE_RC_ACKNOWLEDGE)->op == ROCE_OP_ACK);
	CHECK(roce_opcode_lookup(ROCE_RC_ATOMIC_ACKNOWLEDGE)->op == ROCE_OP_ATOMIC_ACK);
	CHECK(roce_opcode_lookup(ROCE_RC_COMPARE_SWAP)->op == ROCE_OP_CMP_SWAP);
	CHECK(roce_opcode_lookup(ROCE_RC_FETCH_ADD)->op == ROCE_OP_FETCH_ADD);
	CHECK(roce_opcode_lookup(ROCE_RC_FLUSH)->op == ROCE_OP_FLUSH);
	CHECK(roce_opcode_lookup(ROCE_RC_ATOMIC_WRITE)->op == ROCE_OP_ATOMIC_WRITE);
	CHECK(roce_opcode_lookup(ROCE_UD_SEND_ONLY_WITH_IMMEDIATE)->op == ROCE_OP_SEND);
	CHECK(roce_opcode_lookup(ROCE_CNP)->op == ROCE_OP_CNP);
	CHECK(roce_opcode_lookup(ROCE_UD_SEND_ONLY)->transport == ROCE_TRANSPORT_UD);
	CHECK(roce_opcode_lookup(ROCE_CNP)->transport == ROCE_TRANSPORT_CNP);
}

TEST_CASE("transport classes softrnic speaks", "[roce_hdr]")
{
	CHECK(roce_transport_supported(0x00));
	CHECK(roce_transport_supported(0x15));	     // reserved RC opcode, still RC
	CHECK_FALSE(roce_transport_supported(0x24)); // UC SEND ONLY
	CHECK_FALSE(roce_transport_supported(0x44)); // RD SEND ONLY
	CHECK(roce_transport_supported(0x64));
	CHECK(roce_transport_supported(0x81));
	CHECK_FALSE(roce_transport_supported(0xa4)); // XRC SEND ONLY
	CHECK_FALSE(roce_transport_supported(0xc0)); // manufacturer specific
	CHECK_FALSE(roce_transport_supported(0xff));
}

TEST_CASE("pad to a 4-byte boundary", "[roce_hdr]")
{
	CHECK(roce_pad_len(0) == 0);
	CHECK(roce_pad_len(1) == 3);
	CHECK(roce_pad_len(2) == 2);
	CHECK(roce_pad_len(3) == 1);
	CHECK(roce_pad_len(4) == 0);
	CHECK(roce_pad_len(4097) == 3);
	CHECK(roce_pad_len(0xffffffffU) == 1);
}

TEST_CASE("FLUSH: what the responder makes of the FETH", "[roce_hdr][flush]")
{
	/* FETH bytes as on the wire -> (sel, plt) -> verdict */
	struct kat {
		uint8_t last_byte;
		uint8_t sel, plt;
		enum roce_flush_verdict v;
	};
	for (const kat &k : {
		 kat{0x01, 0, 1, ROCE_FLUSH_OK},	     /* range, global visibility */
		 kat{0x11, 1, 1, ROCE_FLUSH_OK},	     /* region, global visibility */
		 kat{0x02, 0, 2, ROCE_FLUSH_NO_PERSISTENCE}, /* range, persistence */
		 kat{0x13, 1, 3, ROCE_FLUSH_NO_PERSISTENCE}, /* region, both */
		 kat{0x00, 0, 0, ROCE_FLUSH_INVALID},	     /* no placement type */
		 kat{0x10, 1, 0, ROCE_FLUSH_INVALID},
		 kat{0x05, 0, 5, ROCE_FLUSH_INVALID}, /* reserved type bit 2 */
		 kat{0x09, 0, 9, ROCE_FLUSH_INVALID}, /* reserved type bit 3 */
		 kat{0x0f, 0, 15, ROCE_FLUSH_INVALID},
		 kat{0x21, 2, 1, ROCE_FLUSH_INVALID}, /* reserved levels */
		 kat{0x31, 3, 1, ROCE_FLUSH_INVALID},
	     }) {
		INFO("FETH byte 3 = " << int{k.last_byte});
		auto feth = from_bytes<roce_feth>({0x00, 0x00, 0x00, k.last_byte});
		CHECK(roce_feth_sel(&feth) == k.sel);
		CHECK(roce_feth_plt(&feth) == k.plt);
		CHECK(roce_flush_verdict(k.sel, k.plt) == k.v);
	}
	/* every combination: OK exactly for global visibility alone */
	for (unsigned sel = 0; sel < 4; sel++)
		for (unsigned plt = 0; plt < 16; plt++)
			CHECK((roce_flush_verdict(__u8(sel), __u8(plt)) == ROCE_FLUSH_OK) ==
			      (sel <= 1 && plt == 1));
	STATIC_REQUIRE(ROCE_FLUSH_PLT_GLOBAL == SOFTRNIC_FLUSH_GLOBAL);
	STATIC_REQUIRE(ROCE_FLUSH_PLT_PERSISTENT == SOFTRNIC_FLUSH_PERSISTENT);
	STATIC_REQUIRE(ROCE_FLUSH_SEL_RANGE == SOFTRNIC_FLUSH_RANGE);
	STATIC_REQUIRE(ROCE_FLUSH_SEL_MR == SOFTRNIC_FLUSH_MR);
}

TEST_CASE("P_Key match: one partition, at least one full member", "[roce_hdr]")
{
	CHECK(roce_pkey_match(0xffff, ROCE_DEFAULT_PKEY));
	CHECK(roce_pkey_match(0x7fff, ROCE_DEFAULT_PKEY)); /* limited member */
	CHECK(roce_pkey_match(0xffff, 0x7fff));
	CHECK_FALSE(roce_pkey_match(0x7fff, 0x7fff)); /* two limited members */
	CHECK_FALSE(roce_pkey_match(0x1234, ROCE_DEFAULT_PKEY));
	CHECK_FALSE(roce_pkey_match(0x8000, ROCE_DEFAULT_PKEY));
	CHECK_FALSE(roce_pkey_match(0xfffe, ROCE_DEFAULT_PKEY));
	CHECK(roce_pkey_match(0x8001, 0x0001));
}
