// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// RoCEv2 transport parser and encoder (kernel/proto/roce_parse.h):
// known-answer packets built byte by byte, encode/parse round trips for
// every opcode, and every malformed variant with its drop reason.
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "roce_parse.h"

namespace
{

// Big-endian byte writer, independent of the header under test.
struct Bytes {
	std::vector<__u8> b;
	Bytes &u8(unsigned v)
	{
		b.push_back(__u8(v));
		return *this;
	}
	Bytes &be16(unsigned v) { return u8(v >> 8).u8(v); }
	Bytes &be24(unsigned v) { return u8(v >> 16).u8(v >> 8).u8(v); }
	Bytes &be32(__u32 v) { return be16(v >> 16).be16(v & 0xffff); }
	Bytes &be64(__u64 v) { return be32(__u32(v >> 32)).be32(__u32(v)); }
	Bytes &fill(size_t n, __u8 v)
	{
		b.insert(b.end(), n, v);
		return *this;
	}
	// BTH: opcode, SE/M/pad/tver byte, pkey, F/B byte + QPN, A + PSN
	Bytes &bth(unsigned opcode, unsigned flags, unsigned pkey, unsigned fb, __u32 qpn,
		   unsigned a, __u32 psn)
	{
		return u8(opcode).u8(flags).be16(pkey).u8(fb).be24(qpn).u8(a).be24(psn);
	}
	Bytes &icrc() { return fill(4, 0xcc); } // parse does not look at it
};

int parse(const std::vector<__u8> &pkt, roce_pkt *out)
{
	// Copy into an exactly-sized heap block so a sanitizer build would
	// flag any read past the end.
	std::unique_ptr<__u8[]> buf(new __u8[pkt.size() ? pkt.size() : 1]);
	if (!pkt.empty())
		std::memcpy(buf.get(), pkt.data(), pkt.size());
	return roce_parse(buf.get(), pkt.size(), out);
}

} // namespace

TEST_CASE("parse: RC SEND ONLY with padded payload", "[roce_parse]")
{
	// SE=1, pad 3, P_Key 0xffff, DestQP 0x000011, AckReq, PSN 0x000100,
	// payload "hello" (5 bytes) + 3 pad bytes, ICRC
	Bytes p;
	p.bth(0x04, 0xb0, 0xffff, 0x00, 0x11, 0x80, 0x100);
	for (char c : std::string("hello"))
		p.u8(__u8(c));
	p.fill(3, 0).icrc();
	REQUIRE(p.b.size() == 12 + 8 + 4);

	roce_pkt pkt;
	REQUIRE(parse(p.b, &pkt) == ROCE_PARSE_OK);
	CHECK(pkt.opcode == ROCE_RC_SEND_ONLY);
	REQUIRE(pkt.info != nullptr);
	CHECK(pkt.info->op == ROCE_OP_SEND);
	CHECK(pkt.bth_flags == ROCE_PKT_SE);
	CHECK(pkt.pad == 3);
	CHECK(pkt.ackreq);
	CHECK(pkt.pkey == 0xffff);
	CHECK(pkt.dest_qpn == 0x11);
	CHECK(pkt.psn == 0x100);
	CHECK(pkt.payload_off == 12);
	CHECK(pkt.payload_len == 5);
	CHECK(std::memcmp(p.b.data() + pkt.payload_off, "hello", 5) == 0);
}

TEST_CASE("parse: RDMA WRITE ONLY WITH IMMEDIATE", "[roce_parse]")
{
	Bytes p;
	p.bth(0x0b, 0x80, 0x8001, 0xc0, 0xabcdef, 0x80, 0xffffff)
	    .be64(0x00007f0012345678ULL) // RETH VA
	    .be32(0x00c0ffee)		 // R_Key
	    .be32(8)			 // DMA length
	    .be32(0xdeadbeef)		 // ImmDt
	    .fill(8, 0x5a)
	    .icrc();
	roce_pkt pkt;
	REQUIRE(parse(p.b, &pkt) == ROCE_PARSE_OK);
	CHECK(pkt.opcode == ROCE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
	CHECK(pkt.bth_flags == (ROCE_PKT_SE | ROCE_PKT_FECN | ROCE_PKT_BECN));
	CHECK(pkt.pkey == 0x8001);
	CHECK(pkt.dest_qpn == 0xabcdef);
	CHECK(pkt.psn == 0xffffff);
	CHECK(pkt.reth.va == 0x00007f0012345678ULL);
	CHECK(pkt.reth.rkey == 0x00c0ffee);
	CHECK(pkt.reth.len == 8);
	CHECK(pkt.imm == 0xdeadbeef);
	CHECK(pkt.payload_off == 32);
	CHECK(pkt.payload_len == 8);
	CHECK(pkt.pad == 0);
}

TEST_CASE("parse: READ request and READ RESPONSE FIRST/MIDDLE", "[roce_parse]")
{
	roce_pkt pkt;
	Bytes rd;
	rd.bth(0x0c, 0x00, 0xffff, 0, 0x42, 0x80, 7).be64(0x1000).be32(0x1234).be32(0x10000).icrc();
	REQUIRE(parse(rd.b, &pkt) == ROCE_PARSE_OK);
	CHECK(pkt.reth.va == 0x1000);
	CHECK(pkt.reth.rkey == 0x1234);
	CHECK(pkt.reth.len == 0x10000);
	CHECK(pkt.payload_len == 0);
	CHECK(pkt.payload_off == 28);

	Bytes first;
	first.bth(0x0d, 0x00, 0xffff, 0, 0x43, 0x00, 7).be32(0x1f000003).fill(1024, 0xab).icrc();
	REQUIRE(parse(first.b, &pkt) == ROCE_PARSE_OK);
	CHECK(pkt.aeth.syndrome == 0x1f);
	CHECK(pkt.aeth.msn == 3);
	CHECK_FALSE(pkt.ackreq);
	CHECK(pkt.payload_off == 16);
	CHECK(pkt.payload_len == 1024);
	CHECK(pkt.info->flags & ROCE_OPF_RESP);

	Bytes mid;
	mid.bth(0x0e, 0x00, 0xffff, 0, 0x43, 0x00, 8).fill(1024, 0xcd).icrc();
	REQUIRE(parse(mid.b, &pkt) == ROCE_PARSE_OK);
	CHECK(pkt.payload_off == 12);
	CHECK(pkt.payload_len == 1024);
}

TEST_CASE("parse: ACK, NAK and ATOMIC ACKNOWLEDGE", "[roce_parse]")
{
	roce_pkt pkt;
	Bytes nak;
	nak.bth(0x11, 0x00, 0xffff, 0, 0x99, 0x00, 0x123).be32(0x62000010).icrc();
	REQUIRE(parse(nak.b, &pkt) == ROCE_PARSE_OK);
	CHECK(roce_syn_type(pkt.aeth.syndrome) == ROCE_AETH_NAK);
	CHECK(roce_syn_value(pkt.aeth.syndrome) == ROCE_NAK_REMOTE_ACCESS_ERR);
	CHECK(pkt.aeth.msn == 0x10);
	CHECK(pkt.psn == 0x123);
	CHECK(pkt.payload_len == 0);

	Bytes aack;
	aack.bth(0x12, 0x00, 0xffff, 0, 0x99, 0x00, 0x124)
	    .be32(0x00fffffe)
	    .be64(0x0102030405060708ULL)
	    .icrc();
	REQUIRE(parse(aack.b, &pkt) == ROCE_PARSE_OK);
	CHECK(roce_syn_type(pkt.aeth.syndrome) == ROCE_AETH_ACK);
	CHECK(pkt.aeth.msn == 0xfffffe);
	CHECK(pkt.atomic_orig == 0x0102030405060708ULL);
	CHECK(pkt.payload_off == 24);
}

TEST_CASE("parse: COMPARE SWAP and FETCH ADD", "[roce_parse]")
{
	roce_pkt pkt;
	Bytes cs;
	cs.bth(0x13, 0x00, 0xffff, 0, 0x77, 0x80, 0x10)
	    .be64(0xfffff000ULL)
	    .be32(0xabcd)
	    .be64(0x1111111111111111ULL)
	    .be64(0x2222222222222222ULL)
	    .icrc();
	REQUIRE(parse(cs.b, &pkt) == ROCE_PARSE_OK);
	CHECK(pkt.atomic.va == 0xfffff000ULL);
	CHECK(pkt.atomic.rkey == 0xabcd);
	CHECK(pkt.atomic.swap_add == 0x1111111111111111ULL);
	CHECK(pkt.atomic.compare == 0x2222222222222222ULL);
	CHECK(pkt.payload_off == 40);
	CHECK(pkt.payload_len == 0);

	cs.b[0] = 0x14;
	REQUIRE(parse(cs.b, &pkt) == ROCE_PARSE_OK);
	CHECK(pkt.info->op == ROCE_OP_FETCH_ADD);
}

TEST_CASE("parse: SEND WITH INVALIDATE, FLUSH, ATOMIC WRITE", "[roce_parse]")
{
	roce_pkt pkt;
	Bytes inv;
	inv.bth(0x17, 0x00, 0xffff, 0, 5, 0x80, 1).be32(0x00000a01).fill(4, 1).icrc();
	REQUIRE(parse(inv.b, &pkt) == ROCE_PARSE_OK);
	CHECK(pkt.inv_rkey == 0xa01);
	CHECK(pkt.payload_len == 4);

	Bytes fl;
	fl.bth(0x1c, 0x00, 0xffff, 0, 5, 0x80, 2)
	    .be32(0x00000011) // SEL 1 (memory region), PLT 1 (global visibility)
	    .be64(0x2000)
	    .be32(0x77)
	    .be32(64)
	    .icrc();
	REQUIRE(parse(fl.b, &pkt) == ROCE_PARSE_OK);
	CHECK(pkt.feth.sel == 1);
	CHECK(pkt.feth.plt == 1);
	CHECK(pkt.reth.va == 0x2000);
	CHECK(pkt.reth.rkey == 0x77);
	CHECK(pkt.reth.len == 64);
	CHECK(pkt.payload_off == 32);

	Bytes aw;
	aw.bth(0x1d, 0x00, 0xffff, 0, 5, 0x80, 3)
	    .be64(0x3000)
	    .be32(0x78)
	    .be32(8)
	    .be64(0x0123456789abcdefULL)
	    .icrc();
	REQUIRE(parse(aw.b, &pkt) == ROCE_PARSE_OK);
	CHECK(pkt.reth.va == 0x3000);
	CHECK(pkt.payload_off == 28);
	CHECK(pkt.payload_len == 8);
}

TEST_CASE("parse: UD SEND ONLY WITH IMMEDIATE and CNP", "[roce_parse]")
{
	roce_pkt pkt;
	Bytes ud;
	ud.bth(0x65, 0x20, 0x7fff, 0, 1, 0x00, 0x555555) // pad 2
	    .be32(0x80010000)				 // Q_Key
	    .u8(0xff)					 // resv8, ignored
	    .be24(0x000123)				 // SrcQP
	    .be32(0xcafebabe)				 // ImmDt
	    .fill(254, 0x11)
	    .fill(2, 0) // pad
	    .icrc();
	REQUIRE(parse(ud.b, &pkt) == ROCE_PARSE_OK);
	CHECK(pkt.opcode == ROCE_UD_SEND_ONLY_WITH_IMMEDIATE);
	CHECK(pkt.pkey == 0x7fff);
	CHECK(pkt.deth.qkey == 0x80010000);
	CHECK(pkt.deth.src_qpn == 0x123);
	CHECK(pkt.imm == 0xcafebabe);
	CHECK(pkt.payload_off == 24);
	CHECK(pkt.pad == 2);
	CHECK(pkt.payload_len == 254);

	// CNP: BECN set, A=0, PSN 0, 16 reserved bytes, no payload
	Bytes cnp;
	cnp.bth(0x81, 0x00, 0xffff, 0x40, 0x000abc, 0x00, 0).fill(16, 0).icrc();
	REQUIRE(parse(cnp.b, &pkt) == ROCE_PARSE_OK);
	CHECK(pkt.opcode == ROCE_CNP);
	CHECK(pkt.bth_flags == ROCE_PKT_BECN);
	CHECK(pkt.dest_qpn == 0xabc);
	CHECK(pkt.payload_off == 28);
	CHECK(pkt.payload_len == 0);
}

namespace
{

// A struct roce_pkt with a distinct value in every field the opcode uses.
roce_pkt sample_pkt(__u8 opcode, __u32 payload_len, unsigned seed)
{
	roce_pkt in;
	std::memset(&in, 0, sizeof(in));
	in.opcode = opcode;
	in.bth_flags = __u8(seed & 0xf);
	in.ackreq = seed & 0x10;
	in.pkey = __u16(0x8000 | seed);
	in.dest_qpn = (0x10203 * (seed + 1)) & 0xffffff;
	in.psn = (0xfffff0 + seed) & 0xffffff;
	in.pad = roce_pad_len(payload_len);
	in.reth = {0x0001020304050607ULL + seed, 0x11121314u + seed, payload_len};
	in.aeth = {__u8(0x60 | (seed & 0x1f)), (0xfffffe + seed) & 0xffffff};
	in.atomic = {0x2122232425262728ULL, 0x31323334u, 0x4142434445464748ULL + seed,
		     0x5152535455565758ULL};
	in.atomic_orig = 0x6162636465666768ULL + seed;
	in.imm = 0x71727374u + seed;
	in.inv_rkey = 0x81828384u + seed;
	in.deth = {0x91929394u + seed, (0xa1a2a3 + seed) & 0xffffff};
	in.feth = {__u8(seed & 3), __u8(seed & 0xf)};
	return in;
}

std::vector<__u8> build_pkt(const roce_pkt &in, __u32 payload_len)
{
	std::vector<__u8> b(ROCE_MAX_HDR_LEN + payload_len + 3 + ROCE_ICRC_LEN, 0xee);
	size_t hl = roce_build_hdrs(b.data(), &in);
	REQUIRE(hl > 0);
	for (__u32 i = 0; i < payload_len; i++)
		b[hl + i] = __u8(i * 7);
	size_t pad = roce_pad_len(payload_len);
	std::memset(&b[hl + payload_len], 0, pad);
	b.resize(hl + payload_len + pad + ROCE_ICRC_LEN);
	REQUIRE(b.size() == roce_pkt_len(in.opcode, payload_len));
	return b;
}

void check_same(const roce_pkt &in, const roce_pkt &out)
{
	const roce_opcode_desc *desc = roce_opcode_lookup(in.opcode);
	CHECK(out.info == desc);
	CHECK(out.opcode == in.opcode);
	CHECK(out.bth_flags == in.bth_flags);
	CHECK(out.ackreq == in.ackreq);
	CHECK(out.pkey == in.pkey);
	CHECK(out.dest_qpn == in.dest_qpn);
	CHECK(out.psn == in.psn);
	CHECK(out.pad == in.pad);
	CHECK(out.payload_off == roce_opcode_hdr_len(desc));
	if (roce_opcode_has_ext(desc, ROCE_EXT_RETH)) {
		CHECK(out.reth.va == in.reth.va);
		CHECK(out.reth.rkey == in.reth.rkey);
		CHECK(out.reth.len == in.reth.len);
	} else {
		CHECK(out.reth.va == 0);
	}
	if (roce_opcode_has_ext(desc, ROCE_EXT_AETH)) {
		CHECK(out.aeth.syndrome == in.aeth.syndrome);
		CHECK(out.aeth.msn == in.aeth.msn);
	} else {
		CHECK(out.aeth.msn == 0);
	}
	if (roce_opcode_has_ext(desc, ROCE_EXT_ATOMIC_ETH)) {
		CHECK(out.atomic.va == in.atomic.va);
		CHECK(out.atomic.rkey == in.atomic.rkey);
		CHECK(out.atomic.swap_add == in.atomic.swap_add);
		CHECK(out.atomic.compare == in.atomic.compare);
	} else {
		CHECK(out.atomic.va == 0);
	}
	CHECK(out.atomic_orig ==
	      (roce_opcode_has_ext(desc, ROCE_EXT_ATOMIC_ACK) ? in.atomic_orig : 0));
	CHECK(out.imm == (roce_opcode_has_ext(desc, ROCE_EXT_IMMDT) ? in.imm : 0));
	CHECK(out.inv_rkey == (roce_opcode_has_ext(desc, ROCE_EXT_IETH) ? in.inv_rkey : 0));
	if (roce_opcode_has_ext(desc, ROCE_EXT_DETH)) {
		CHECK(out.deth.qkey == in.deth.qkey);
		CHECK(out.deth.src_qpn == in.deth.src_qpn);
	} else {
		CHECK(out.deth.qkey == 0);
	}
	if (roce_opcode_has_ext(desc, ROCE_EXT_FETH)) {
		CHECK(out.feth.sel == in.feth.sel);
		CHECK(out.feth.plt == in.feth.plt);
	}
}

// Payload lengths worth trying for an opcode: none if it has no payload,
// exactly 8 for ATOMIC WRITE, unaligned ones only where pad is allowed.
std::vector<__u32> payload_lens(const roce_opcode_desc *desc)
{
	if (!(desc->flags & ROCE_OPF_PAYLOAD))
		return {0};
	if (desc->op == ROCE_OP_ATOMIC_WRITE)
		return {8};
	if (!(desc->flags & ROCE_OPF_LAST))
		return {0, 4, 256, 1024};
	return {0, 1, 2, 3, 4, 5, 255, 4096};
}

std::vector<__u8> all_opcodes()
{
	std::vector<__u8> v;
	for (int op = 0; op < 256; op++)
		if (roce_opcode_lookup(__u8(op)))
			v.push_back(__u8(op));
	return v;
}

} // namespace

TEST_CASE("parse(build(x)) == x for every opcode", "[roce_parse]")
{
	const auto ops = all_opcodes();
	REQUIRE(ops.size() == 28);
	for (__u8 op : ops) {
		const roce_opcode_desc *desc = roce_opcode_lookup(op);
		for (__u32 len : payload_lens(desc)) {
			for (unsigned seed : {0u, 5u, 0x1fu}) {
				INFO(desc->name << " payload " << len << " seed " << seed);
				roce_pkt in = sample_pkt(op, len, seed);
				auto b = build_pkt(in, len);
				roce_pkt out;
				REQUIRE(parse(b, &out) == ROCE_PARSE_OK);
				check_same(in, out);
				CHECK(out.payload_len == len);

				// re-encoding the parsed packet gives the same bytes
				std::vector<__u8> again(ROCE_MAX_HDR_LEN);
				size_t hl = roce_build_hdrs(again.data(), &out);
				REQUIRE(hl == out.payload_off);
				CHECK(std::memcmp(again.data(), b.data(), hl) == 0);
			}
		}
	}
}

TEST_CASE("build writes TVer and reserved bits as zero", "[roce_parse]")
{
	roce_pkt in = sample_pkt(ROCE_UD_SEND_ONLY, 0, 0xf);
	in.dest_qpn = 0xffffffff; // bits above 24 must not reach FECN/BECN
	in.bth_flags = 0;
	in.psn = 0xffffffff; // nor AckReq
	in.ackreq = false;
	in.deth.src_qpn = 0xffffffff;
	std::vector<__u8> b(ROCE_MAX_HDR_LEN, 0xee);
	REQUIRE(roce_build_hdrs(b.data(), &in) == 20);
	CHECK(b[1] == 0x00);
	CHECK(b[4] == 0x00);
	CHECK(b[8] == 0x00);
	CHECK(b[16] == 0x00); // DETH resv8
	CHECK(b[20] == 0xee); // nothing written past the headers

	roce_pkt cnp;
	std::memset(&cnp, 0, sizeof(cnp));
	cnp.opcode = ROCE_CNP;
	cnp.bth_flags = ROCE_PKT_BECN;
	cnp.dest_qpn = 0x17;
	std::fill(b.begin(), b.end(), 0xee);
	REQUIRE(roce_build_hdrs(b.data(), &cnp) == 28);
	CHECK(std::vector<__u8>(b.begin(), b.begin() + 28) ==
	      std::vector<__u8>{0x81, 0, 0, 0, 0x40, 0, 0, 0x17, 0, 0, 0, 0, 0, 0,
				0,    0, 0, 0, 0,    0, 0, 0,	 0, 0, 0, 0, 0, 0});
}

TEST_CASE("build refuses an opcode the table does not know", "[roce_parse]")
{
	roce_pkt in = sample_pkt(0x15, 0, 0);
	std::vector<__u8> b(ROCE_MAX_HDR_LEN, 0xee);
	CHECK(roce_build_hdrs(b.data(), &in) == 0);
	CHECK(roce_pkt_len(0x24, 0) == 0);
	CHECK(b[0] == 0xee);
}

TEST_CASE("truncation at every byte is refused with the right reason", "[roce_parse]")
{
	for (__u8 op : all_opcodes()) {
		const roce_opcode_desc *desc = roce_opcode_lookup(op);
		for (__u32 plen : payload_lens(desc)) {
			roce_pkt in = sample_pkt(op, plen, 3);
			auto full = build_pkt(in, plen);
			const size_t hl = roce_opcode_hdr_len(desc);
			for (size_t len = 0; len < full.size(); len++) {
				INFO(desc->name << " payload " << plen << " cut to " << len);
				std::vector<__u8> cut(full.begin(), full.begin() + long(len));
				roce_pkt out;
				int rc = parse(cut, &out);
				int want;
				if (len < hl + ROCE_ICRC_LEN)
					want = ROCE_ERR_TRUNCATED;
				else if (len % 4)
					want = ROCE_ERR_LENGTH;
				else if (len - hl - ROCE_ICRC_LEN < in.pad)
					want = ROCE_ERR_PAD;
				else if (desc->op == ROCE_OP_ATOMIC_WRITE)
					want = ROCE_ERR_LENGTH; // 8-byte payload cut short
				else
					want = ROCE_PARSE_OK; // a shorter, well-formed packet
				CHECK(rc == want);
				if (len >= 1)
					CHECK(out.opcode == op);
			}
		}
	}
}

TEST_CASE("TVer other than 0 is refused", "[roce_parse]")
{
	for (__u8 op : all_opcodes()) {
		const roce_opcode_desc *desc = roce_opcode_lookup(op);
		roce_pkt in = sample_pkt(op, payload_lens(desc).back(), 1);
		auto b = build_pkt(in, payload_lens(desc).back());
		for (unsigned tver = 1; tver < 16; tver++) {
			INFO(desc->name << " tver " << tver);
			b[1] = __u8((b[1] & 0xf0) | tver);
			roce_pkt out;
			CHECK(parse(b, &out) == ROCE_ERR_TVER);
		}
	}
}

TEST_CASE("unknown opcodes: reserved vs unsupported transport", "[roce_parse]")
{
	Bytes p;
	p.bth(0, 0, 0xffff, 0, 1, 0, 0).fill(64, 0).icrc();
	for (int op = 0; op < 256; op++) {
		if (roce_opcode_lookup(__u8(op)))
			continue;
		INFO("opcode 0x" << std::hex << op);
		p.b[0] = __u8(op);
		roce_pkt out;
		int rc = parse(p.b, &out);
		switch (op & 0xe0) {
		case 0x00: // RC reserved: 0x15, 0x18-0x1b, 0x1e, 0x1f
		case 0x60: // UD other than SEND ONLY (with imm)
		case 0x80: // CNP range other than 0x81
			CHECK(rc == ROCE_ERR_OPCODE);
			break;
		default: // UC, RD, XRC, manufacturer specific
			CHECK(rc == ROCE_ERR_TRANSPORT);
			break;
		}
		CHECK(out.opcode == op);
		CHECK(out.info == nullptr);
	}
	// an unknown opcode is reported even on a bad TVer
	p.b[0] = 0x24;
	p.b[1] = 0x01;
	roce_pkt out;
	CHECK(parse(p.b, &out) == ROCE_ERR_TRANSPORT);
}

TEST_CASE("pad count rules", "[roce_parse]")
{
	roce_pkt out;
	auto with_pad = [](__u8 op, __u32 plen_with_pad, unsigned pad) {
		roce_pkt in = sample_pkt(op, 0, 0);
		in.pad = 0;
		auto b = build_pkt(in, plen_with_pad);
		b[1] = __u8((b[1] & ~0x30) | (pad << 4));
		return b;
	};
	// pad on FIRST and MIDDLE packets
	for (__u8 op : {ROCE_RC_SEND_FIRST, ROCE_RC_SEND_MIDDLE, ROCE_RC_RDMA_WRITE_FIRST,
			ROCE_RC_RDMA_WRITE_MIDDLE, ROCE_RC_RDMA_READ_RESPONSE_FIRST,
			ROCE_RC_RDMA_READ_RESPONSE_MIDDLE}) {
		INFO("opcode " << int(op));
		CHECK(parse(with_pad(op, 8, 1), &out) == ROCE_ERR_PAD);
		CHECK(parse(with_pad(op, 8, 0), &out) == ROCE_PARSE_OK);
	}
	// pad on packets without payload
	for (__u8 op : {ROCE_RC_RDMA_READ_REQUEST, ROCE_RC_ACKNOWLEDGE, ROCE_RC_ATOMIC_ACKNOWLEDGE,
			ROCE_RC_COMPARE_SWAP, ROCE_RC_FETCH_ADD, ROCE_RC_FLUSH, ROCE_CNP}) {
		INFO("opcode " << int(op));
		CHECK(parse(with_pad(op, 0, 2), &out) == ROCE_ERR_PAD);
	}
	// pad larger than what follows the headers
	CHECK(parse(with_pad(ROCE_RC_SEND_ONLY, 0, 3), &out) == ROCE_ERR_PAD);
	CHECK(parse(with_pad(ROCE_RC_SEND_LAST, 0, 1), &out) == ROCE_ERR_PAD);
	CHECK(parse(with_pad(ROCE_UD_SEND_ONLY, 0, 1), &out) == ROCE_ERR_PAD);
	// pad == everything after the headers: a 1-byte payload needs 3, so
	// 4 bytes with pad 3 is one byte of payload
	REQUIRE(parse(with_pad(ROCE_RC_SEND_ONLY, 4, 3), &out) == ROCE_PARSE_OK);
	CHECK(out.payload_len == 1);
	// any pad on a LAST/ONLY packet with room is fine
	for (unsigned pad = 0; pad < 4; pad++) {
		REQUIRE(parse(with_pad(ROCE_RC_RDMA_WRITE_LAST, 8, pad), &out) == ROCE_PARSE_OK);
		CHECK(out.payload_len == 8 - pad);
	}
}

TEST_CASE("length rules", "[roce_parse]")
{
	roce_pkt out;
	// payload on opcodes that carry none
	for (__u8 op : {ROCE_RC_RDMA_READ_REQUEST, ROCE_RC_ACKNOWLEDGE, ROCE_RC_ATOMIC_ACKNOWLEDGE,
			ROCE_RC_COMPARE_SWAP, ROCE_RC_FETCH_ADD, ROCE_RC_FLUSH, ROCE_CNP}) {
		INFO("opcode " << int(op));
		roce_pkt in = sample_pkt(op, 0, 0);
		auto b = build_pkt(in, 0);
		b.insert(b.end() - 4, 4, 0);
		CHECK(parse(b, &out) == ROCE_ERR_LENGTH);
	}
	// ATOMIC WRITE carries exactly 8 bytes
	for (__u32 plen : {0u, 4u, 12u, 16u}) {
		roce_pkt in = sample_pkt(ROCE_RC_ATOMIC_WRITE, 8, 0);
		auto b = build_pkt(in, plen);
		CHECK(parse(b, &out) == ROCE_ERR_LENGTH);
	}
	// not a multiple of 4
	roce_pkt in = sample_pkt(ROCE_RC_SEND_ONLY, 8, 0);
	auto b = build_pkt(in, 8);
	b.push_back(0);
	CHECK(parse(b, &out) == ROCE_ERR_LENGTH);
	// larger than any UDP datagram
	b.resize(ROCE_MAX_LEN + 1);
	CHECK(parse(b, &out) == ROCE_ERR_LENGTH);
	b.resize(ROCE_MAX_LEN & ~3u);
	REQUIRE(parse(b, &out) == ROCE_PARSE_OK);
	CHECK(out.payload_len == (ROCE_MAX_LEN & ~3u) - 12 - 4);
}

TEST_CASE("parse error names are distinct", "[roce_parse]")
{
	std::set<std::string> names;
	for (int e = 0; e > -ROCE_PARSE_NR_REASONS; e--)
		names.insert(roce_parse_err_name(e));
	CHECK(names.size() == ROCE_PARSE_NR_REASONS);
	CHECK(names.count("unknown") == 0);
	CHECK(std::string(roce_parse_err_name(-ROCE_PARSE_NR_REASONS)) == "unknown");
	CHECK(std::string(roce_parse_err_name(1)) == "unknown");
}

TEST_CASE("fuzzer seed corpus: every seed parses, every opcode has one", "[roce_parse]")
{
	// tests/fuzz/corpus/, written by tests/fuzz/gen_corpus.py
	namespace fs = std::filesystem;
	const fs::path dir = fs::path(__FILE__).parent_path() / ".." / "fuzz" / "corpus";
	REQUIRE(fs::is_directory(dir));
	std::set<int> seen;
	size_t n = 0;
	for (const auto &ent : fs::directory_iterator(dir)) {
		INFO(ent.path().string());
		std::ifstream f(ent.path(), std::ios::binary);
		std::vector<__u8> b((std::istreambuf_iterator<char>(f)),
				    std::istreambuf_iterator<char>());
		roce_pkt pkt;
		CHECK(parse(b, &pkt) == ROCE_PARSE_OK);
		CHECK(b.size() == roce_pkt_len(pkt.opcode, pkt.payload_len));
		seen.insert(pkt.opcode);
		n++;
	}
	CHECK(n >= 28);
	for (__u8 op : all_opcodes()) {
		INFO("opcode 0x" << std::hex << int(op));
		CHECK(seen.count(op) == 1);
	}
}
