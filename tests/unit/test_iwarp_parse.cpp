// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// DDP/RDMAP headers (kernel/proto/iwarp_hdr.h, iwarp_parse.h) and RFC 7306
// atomics (iwarp_atomic.h): segments written out byte by byte, every
// refusal, parse(build(x)) for every opcode, TERMINATE reports as siw
// sends them, and the atomic arithmetic against a bitwise reference.
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "iwarp_atomic.h"
#include "iwarp_mpa.h"
#include "iwarp_mpa_rx.h"
#include "iwarp_parse.h"
#include "wire_bytes.h"

using wire_bytes::hex;

namespace
{

int parse(const std::vector<__u8> &u, iw_pkt *p, bool ext = true)
{
	return iw_parse(u.data(), u.size(), __u32(u.size()), ext, p);
}

// Carry-by-carry reference of RFC 7306's masked FetchAdd.
__u64 ref_masked_add(__u64 a, __u64 b, __u64 mask)
{
	__u64 r = 0;
	unsigned carry = 0;
	for (int i = 0; i < 64; i++) {
		unsigned s = unsigned((a >> i) & 1) + unsigned((b >> i) & 1) + carry;
		r |= __u64(s & 1) << i;
		carry = (s >> 1) && !((mask >> i) & 1);
	}
	return r;
}

} // namespace

TEST_CASE("iWARP opcode table", "[iwarp_parse]")
{
	CHECK(iw_opcode_hdr_len(iw_opcode_lookup(IW_OP_WRITE)) == 14);
	CHECK(iw_opcode_hdr_len(iw_opcode_lookup(IW_OP_READ_RESP)) == 14);
	CHECK(iw_opcode_hdr_len(iw_opcode_lookup(IW_OP_SEND)) == 18);
	CHECK(iw_opcode_hdr_len(iw_opcode_lookup(IW_OP_READ_REQ)) == 46);
	CHECK(iw_opcode_hdr_len(iw_opcode_lookup(IW_OP_TERMINATE)) == 22);
	CHECK(iw_opcode_hdr_len(iw_opcode_lookup(IW_OP_IMM)) == 26);
	CHECK(iw_opcode_hdr_len(iw_opcode_lookup(IW_OP_ATOMIC_REQ)) == 70);
	CHECK(iw_opcode_hdr_len(iw_opcode_lookup(IW_OP_ATOMIC_RESP)) == 30);
	for (int op = 0xc; op <= 0xf; op++)
		CHECK(iw_opcode_lookup(__u8(op)) == nullptr);
	CHECK(iw_opcode_lookup(IW_OP_ATOMIC_REQ)->qn == IW_QN_READ_REQ);
	CHECK(iw_opcode_lookup(IW_OP_ATOMIC_RESP)->qn == IW_QN_ATOMIC_RESP);
	CHECK(iw_opcode_lookup(IW_OP_IMM_SE)->qn == IW_QN_SEND);
	CHECK(iw_opcode_lookup(IW_OP_TERMINATE)->qn == IW_QN_TERMINATE);
	CHECK(iw_hdr_len_of(0xc1, 0x40) == 14);
	CHECK(iw_hdr_len_of(0x41, 0x47) == IW_MAX_HDR_LEN);
	CHECK(iw_hdr_len_of(0x41, 0x4a) == 70);
	CHECK(iw_hdr_len_of(0x41, 0x40) == 18); // untagged WRITE: bare header
	CHECK(iw_hdr_len_of(0xc1, 0x4f) == 14);
}

TEST_CASE("iWARP tagged WRITE by hand", "[iwarp_parse]")
{
	auto u = hex("c1 40 11223344 0000000000001000 aabbcc");
	iw_pkt p;
	REQUIRE(parse(u, &p) == IW_PARSE_OK);
	CHECK(p.opcode == IW_OP_WRITE);
	CHECK(p.last);
	CHECK(p.stag == 0x11223344U);
	CHECK(p.to == 0x1000);
	CHECK(p.hdr_len == 14);
	CHECK(p.payload_len == 3);
	std::vector<__u8> b(IW_MAX_HDR_LEN);
	REQUIRE(iw_build_hdrs(b.data(), &p) == 14);
	CHECK(std::memcmp(b.data(), u.data(), 14) == 0);
	// not last: a middle segment of a WRITE
	u[0] = 0x81;
	REQUIRE(parse(u, &p) == IW_PARSE_OK);
	CHECK_FALSE(p.last);
}

TEST_CASE("iWARP SEND_SE_INV and READ request by hand", "[iwarp_parse]")
{
	auto u = hex("41 46 00000a0b 00000000 00000007 00000000 010203");
	iw_pkt p;
	REQUIRE(parse(u, &p) == IW_PARSE_OK);
	CHECK(p.info->flags & IW_OPF_INV);
	CHECK(p.info->flags & IW_OPF_SE);
	CHECK(p.rsvd_ulp == 0xa0b);
	CHECK(p.msn == 7);
	CHECK(p.payload_len == 3);

	u = hex("41 41 00000000 00000001 00000003 00000000"
		"00000111 0000000000002000 00010000 00000222 0000000000003000");
	REQUIRE(parse(u, &p) == IW_PARSE_OK);
	CHECK(p.opcode == IW_OP_READ_REQ);
	CHECK(p.rreq.sink_stag == 0x111);
	CHECK(p.rreq.sink_to == 0x2000);
	CHECK(p.rreq.size == 0x10000);
	CHECK(p.rreq.src_stag == 0x222);
	CHECK(p.rreq.src_to == 0x3000);
	CHECK(p.payload_len == 0);
	std::vector<__u8> b(IW_MAX_HDR_LEN);
	REQUIRE(iw_build_hdrs(b.data(), &p) == 46);
	CHECK(std::vector<__u8>(b.begin(), b.begin() + 46) == u);

	// refusals on a READ request: wrong QN, MO, no L, size
	auto bad = u;
	bad[9] = 0;
	CHECK(parse(bad, &p) == IW_ERR_QN);
	bad = u;
	bad[17] = 4;
	CHECK(parse(bad, &p) == IW_ERR_MO);
	bad = u;
	bad[0] = 0x01;
	CHECK(parse(bad, &p) == IW_ERR_LAST);
	bad = u;
	bad.push_back(0);
	CHECK(parse(bad, &p) == IW_ERR_LENGTH);
	for (size_t n = 0; n < u.size(); n++)
		CHECK(iw_parse(u.data(), n, __u32(n), true, &p) == IW_ERR_TRUNCATED);
}

TEST_CASE("iWARP version, opcode and extension refusals", "[iwarp_parse]")
{
	iw_pkt p;
	auto u = hex("41 43 00000000 00000000 00000001 00000000");
	REQUIRE(parse(u, &p) == IW_PARSE_OK);
	for (int dv : {0, 2, 3}) {
		auto b = u;
		b[0] = __u8((b[0] & ~3) | dv);
		CHECK(parse(b, &p) == IW_ERR_DDP_VERSION);
	}
	for (int rv : {0, 2, 3}) {
		auto b = u;
		b[1] = __u8((b[1] & 0x3f) | rv << 6);
		CHECK(parse(b, &p) == IW_ERR_RDMAP_VERSION);
	}
	for (int op = 0xc; op <= 0xf; op++) {
		auto b = u;
		b[1] = __u8(0x40 | op);
		CHECK(parse(b, &p) == IW_ERR_OPCODE);
	}
	// T flag not the opcode's: a tagged SEND, an untagged WRITE
	auto b = u;
	b[0] |= 0x80;
	CHECK(parse(b, &p) == IW_ERR_OPCODE);
	auto w = hex("41 40 00000000 00000000 00000000 00000000");
	CHECK(parse(w, &p) == IW_ERR_OPCODE);
	// reserved bits are ignored
	b = u;
	b[0] |= IW_DDP_RSVD_MASK;
	b[1] |= IW_RDMAP_RSVD_MASK;
	CHECK(parse(b, &p) == IW_PARSE_OK);
	// RFC 7306 opcodes only when negotiated
	auto imm = hex("41 48 00000000 00000000 00000002 00000000 0102030405060708");
	CHECK(parse(imm, &p, false) == IW_ERR_EXT);
	REQUIRE(parse(imm, &p, true) == IW_PARSE_OK);
	CHECK(std::vector<__u8>(p.imm, p.imm + 8) == hex("0102030405060708"));
	// the receiver's header capture shorter than the ULPDU
	CHECK(iw_parse(u.data(), 10, 100, true, &p) == IW_ERR_TRUNCATED);
	REQUIRE(iw_parse(u.data(), 18, 100, true, &p) == IW_PARSE_OK);
	CHECK(p.payload_len == 82);
	CHECK(std::string(iw_parse_err_name(IW_ERR_EXT)) == "extension");
}

TEST_CASE("iWARP RFC 7306 atomic request and response by hand", "[iwarp_parse]")
{
	auto u = hex("41 4a 00000000 00000001 00000005 00000000"
		     "00000003 0000abcd 00000333 0000000000004008"
		     "0000000000000001 8000000080000000 1111111111111111 ffffffff00000000");
	iw_pkt p;
	REQUIRE(parse(u, &p) == IW_PARSE_OK);
	CHECK(p.atomic.op == IW_ATOMIC_MASKED_CMP_SWAP);
	CHECK(p.atomic.req_id == 0xabcd);
	CHECK(p.atomic.stag == 0x333);
	CHECK(p.atomic.to == 0x4008);
	CHECK(p.atomic.add_swap == 1);
	CHECK(p.atomic.add_swap_mask == 0x8000000080000000ULL);
	CHECK(p.atomic.compare == 0x1111111111111111ULL);
	CHECK(p.atomic.compare_mask == 0xffffffff00000000ULL);
	std::vector<__u8> b(IW_MAX_HDR_LEN);
	REQUIRE(iw_build_hdrs(b.data(), &p) == 70);
	CHECK(b == u);
	auto bad = u;
	bad[21] = 4;
	CHECK(parse(bad, &p) == IW_ERR_ATOMIC_OP);
	bad = u;
	bad[9] = IW_QN_SEND;
	CHECK(parse(bad, &p) == IW_ERR_QN);

	auto r = hex("41 4b 00000000 00000003 00000005 00000000 0000abcd 0123456789abcdef");
	REQUIRE(parse(r, &p) == IW_PARSE_OK);
	CHECK(p.atomic_resp.req_id == 0xabcd);
	CHECK(p.atomic_resp.orig == 0x0123456789abcdefULL);
}

TEST_CASE("iWARP parse(build(x)) for every opcode", "[iwarp_parse]")
{
	for (int op = 0; op < IW_NR_OPCODES; op++) {
		const iw_opcode_desc *d = iw_opcode_lookup(__u8(op));
		if (!d)
			continue;
		iw_pkt in{};
		in.opcode = __u8(op);
		in.last = true;
		in.stag = 0x01020304;
		in.to = 0x1122334455667788ULL;
		in.rsvd_ulp = (d->flags & IW_OPF_INV) ? 0x55 : 0;
		in.msn = 0x77;
		in.mo = (d->flags & IW_OPF_CONTROL) ? 0 : 0x200;
		in.rreq = {1, 2, 3, 4, 5};
		in.atomic = {IW_ATOMIC_FETCH_ADD, 6, 7, 8, 9, 10, 11, 12};
		in.atomic_resp = {13, 14};
		std::memcpy(in.imm, "ABCDEFGH", 8);
		in.term.layer = IW_LAYER_DDP;
		in.term.etype = IW_DDP_ET_TAGGED;
		in.term.ecode = IW_DDP_EC_T_BASE_BOUNDS;
		std::vector<__u8> u(IW_MAX_HDR_LEN + 5);
		__u32 hl = iw_build_hdrs(u.data(), &in);
		REQUIRE(hl == iw_opcode_hdr_len(d));
		u.resize((d->flags & IW_OPF_PAYLOAD) ? hl + 5 : hl);
		iw_pkt out;
		INFO(d->name);
		REQUIRE(parse(u, &out) == IW_PARSE_OK);
		CHECK(out.opcode == in.opcode);
		CHECK(out.info == d);
		CHECK(out.hdr_len == hl);
		CHECK(out.payload_len == u.size() - hl);
		if (d->flags & IW_OPF_TAGGED) {
			CHECK(out.stag == in.stag);
			CHECK(out.to == in.to);
		} else {
			CHECK(out.qn == d->qn);
			CHECK(out.msn == in.msn);
			CHECK(out.mo == in.mo);
			CHECK(out.rsvd_ulp == in.rsvd_ulp);
		}
		std::vector<__u8> again(IW_MAX_HDR_LEN);
		CHECK(iw_build_hdrs(again.data(), &out) == hl);
		CHECK(std::memcmp(again.data(), u.data(), hl) == 0);
	}
}

TEST_CASE("iWARP TERMINATE reports", "[iwarp_parse]")
{
	// a base/bounds violation on a tagged WRITE: M, D, the 14-byte header
	auto w = hex("c1 40 11223344 0000000000001000 aabbcc");
	iw_pkt t{};
	t.opcode = IW_OP_TERMINATE;
	t.msn = 1;
	iw_term_report(&t.term, IW_LAYER_DDP, IW_DDP_ET_TAGGED, IW_DDP_EC_T_BASE_BOUNDS, w.data(),
		       14, 17);
	CHECK(t.term.m);
	CHECK(t.term.seg_len == 17);
	CHECK(t.term.ddp_hdr_len == 14);
	CHECK_FALSE(t.term.has_rreq);
	std::vector<__u8> b(IW_MAX_HDR_LEN);
	__u32 n = iw_build_hdrs(b.data(), &t);
	REQUIRE(n == 22 + 2 + 14);
	b.resize(n);
	CHECK(b == hex("41 47 00000000 00000002 00000001 00000000"
		       "1101c000 0011 c140112233440000000000001000"));
	iw_pkt p;
	REQUIRE(parse(b, &p) == IW_PARSE_OK);
	CHECK(p.term.layer == IW_LAYER_DDP);
	CHECK(p.term.etype == IW_DDP_ET_TAGGED);
	CHECK(p.term.ecode == IW_DDP_EC_T_BASE_BOUNDS);
	CHECK(p.term.m);
	CHECK(p.term.seg_len == 17);
	CHECK(std::memcmp(p.term.ddp_hdr, w.data(), 14) == 0);

	// an access error on a READ request carries its READ header too: 70 bytes
	auto rr = hex("41 41 00000000 00000001 00000003 00000000"
		      "00000111 0000000000002000 00010000 00000222 0000000000003000");
	iw_term_report(&t.term, IW_LAYER_RDMAP, IW_RDMAP_ET_PROTECTION, IW_RDMAP_EC_ACCESS,
		       rr.data(), rr.size(), __u32(rr.size()));
	CHECK(t.term.has_rreq);
	b.assign(IW_MAX_HDR_LEN, 0);
	REQUIRE(iw_build_hdrs(b.data(), &t) == IW_MAX_HDR_LEN);
	REQUIRE(parse(b, &p) == IW_PARSE_OK);
	CHECK(p.term.has_rreq);
	CHECK(std::memcmp(p.term.rreq, rr.data() + 18, 28) == 0);
	CHECK(p.term.ddp_hdr_len == 18);

	// an opcode error reports no headers; an LLP CRC error neither
	iw_term_report(&t.term, IW_LAYER_RDMAP, IW_RDMAP_ET_OPERATION, IW_RDMAP_EC_OPCODE,
		       rr.data(), rr.size(), __u32(rr.size()));
	CHECK(t.term.ddp_hdr_len == 0);
	CHECK(iw_build_hdrs(b.data(), &t) == 22);
	iw_term_report(&t.term, IW_LAYER_LLP, IW_LLP_ET_MPA, IW_LLP_EC_CRC, rr.data(), rr.size(),
		       __u32(rr.size()));
	CHECK(t.term.ddp_hdr_len == 0);

	// siw: a remote protection error on a SEND sets M, D and R but
	// sends only the 18-byte DDP header
	auto siw = hex("41 47 00000000 00000002 00000001 00000000"
		       "0102e000 0020 41430000000000000000000000010000 0000");
	REQUIRE(parse(siw, &p) == IW_PARSE_OK);
	CHECK(p.term.layer == IW_LAYER_RDMAP);
	CHECK(p.term.etype == IW_RDMAP_ET_PROTECTION);
	CHECK(p.term.ecode == IW_RDMAP_EC_ACCESS);
	CHECK(p.term.ddp_hdr_len == 18);
	CHECK_FALSE(p.term.has_rreq);
	// D announced but cut short: left out, nothing read beyond
	auto cut = hex("41 47 00000000 00000002 00000001 00000000 0102c000 0020 4143");
	REQUIRE(parse(cut, &p) == IW_PARSE_OK);
	CHECK(p.term.ddp_hdr_len == 0);
	CHECK_FALSE(p.term.m);
	// a TERMINATE longer than any report
	std::vector<__u8> lng(71);
	std::memcpy(lng.data(), siw.data(), siw.size());
	CHECK(parse(lng, &p) == IW_ERR_LENGTH);
}

TEST_CASE("iWARP parse errors map to TERMINATE codes", "[iwarp_parse]")
{
	__u8 l, e, c;
	const __u8 tagged[1] = {0xc1}, untagged[1] = {0x41};
	iw_parse_err_term(IW_ERR_DDP_VERSION, tagged, 1, &l, &e, &c);
	CHECK((l == IW_LAYER_DDP && e == IW_DDP_ET_TAGGED && c == IW_DDP_EC_T_VERSION));
	iw_parse_err_term(IW_ERR_DDP_VERSION, untagged, 1, &l, &e, &c);
	CHECK((l == IW_LAYER_DDP && e == IW_DDP_ET_UNTAGGED && c == IW_DDP_EC_U_VERSION));
	iw_parse_err_term(IW_ERR_RDMAP_VERSION, untagged, 1, &l, &e, &c);
	CHECK((l == IW_LAYER_RDMAP && e == IW_RDMAP_ET_OPERATION && c == IW_RDMAP_EC_VERSION));
	iw_parse_err_term(IW_ERR_OPCODE, untagged, 1, &l, &e, &c);
	CHECK(c == IW_RDMAP_EC_OPCODE);
	iw_parse_err_term(IW_ERR_QN, untagged, 1, &l, &e, &c);
	CHECK((l == IW_LAYER_DDP && e == IW_DDP_ET_UNTAGGED && c == IW_DDP_EC_U_INVALID_QN));
	iw_parse_err_term(IW_ERR_MO, untagged, 1, &l, &e, &c);
	CHECK(c == IW_DDP_EC_U_INVALID_MO);
	iw_parse_err_term(IW_ERR_LENGTH, untagged, 1, &l, &e, &c);
	CHECK((l == IW_LAYER_RDMAP && c == IW_RDMAP_EC_UNSPECIFIED));
}

TEST_CASE("RFC 7306 atomic arithmetic", "[iwarp_parse]")
{
	CHECK(iw_atomic_result(IW_ATOMIC_FETCH_ADD, 5, 7, ~0ULL, 0, 0) == 12);
	CHECK(iw_atomic_result(IW_ATOMIC_FETCH_ADD, ~0ULL, 1, 0, 0, 0) == 0);
	CHECK(iw_atomic_result(IW_ATOMIC_CMP_SWAP, 5, 9, 0, 5, 0) == 9);
	CHECK(iw_atomic_result(IW_ATOMIC_CMP_SWAP, 5, 9, 0, 6, ~0ULL) == 5);
	// two 32-bit counters: no carry from the low into the high one
	CHECK(iw_atomic_result(IW_ATOMIC_MASKED_FETCH_ADD, 0x00000001ffffffffULL, 1,
			       0x8000000080000000ULL, 0, 0) == 0x0000000100000000ULL);
	// masked compare on the high half, swap the low byte
	CHECK(iw_atomic_result(IW_ATOMIC_MASKED_CMP_SWAP, 0x12345678aabbccddULL, 0x99, 0xff,
			       0x1234567800000000ULL,
			       0xffffffff00000000ULL) == 0x12345678aabbcc99ULL);
	CHECK(iw_atomic_result(IW_ATOMIC_MASKED_CMP_SWAP, 0x12345678aabbccddULL, 0x99, 0xff,
			       0x1234567900000000ULL,
			       0xffffffff00000000ULL) == 0x12345678aabbccddULL);
	CHECK(iw_atomic_aligned(0x1000));
	CHECK_FALSE(iw_atomic_aligned(0x1004));
	__u64 x = 0x9e3779b97f4a7c15ULL;
	for (int i = 0; i < 20000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		__u64 a = x, b = x * 0x2545f4914f6cdd1dULL, m = (x >> 3) & (x << 5);
		CHECK(iw_masked_add(a, b, m) == ref_masked_add(a, b, m));
	}
	CHECK(iw_masked_add(~0ULL, 1, 0) == 0);
}

TEST_CASE("fuzzer seed corpus: every FPDU parses, every opcode has one", "[iwarp_parse]")
{
	// tests/fuzz/corpus-iwarp/, written by tests/fuzz/gen_corpus_iwarp.py:
	// flags byte, split seed byte, FPDU stream
	namespace fs = std::filesystem;
	const fs::path dir = fs::path(__FILE__).parent_path() / ".." / "fuzz" / "corpus-iwarp";
	REQUIRE(fs::is_directory(dir));
	std::set<int> seen;
	size_t files = 0;
	for (const auto &ent : fs::directory_iterator(dir)) {
		INFO(ent.path().string());
		std::ifstream f(ent.path(), std::ios::binary);
		std::vector<__u8> b((std::istreambuf_iterator<char>(f)),
				    std::istreambuf_iterator<char>());
		REQUIRE(b.size() > 2);
		if (b[0] & 0x10)
			continue; // encoder mode: ULPDUs, not a stream
		mpa_rx rx;
		mpa_rx_init(&rx, b[0] & 1, b[0] & 2, MPA_MAX_ULPDU);
		size_t at = 2, fpdus = 0;
		int rc = 0;
		while (at < b.size()) {
			size_t used;
			mpa_rx_ev ev;
			rc = mpa_rx_next(&rx, b.data() + at, b.size() - at, &used, &ev);
			at += used;
			if (rc < 0)
				break;
			if (rc == MPA_RX_HDR) {
				iw_pkt p;
				CHECK(iw_parse(rx.hdr, rx.hdr_len, ev.ulpdu_len, b[0] & 8, &p) ==
				      IW_PARSE_OK);
				seen.insert(p.opcode);
			}
			fpdus += rc == MPA_RX_FPDU;
		}
		if (ent.path().filename() == "bad_crc") {
			CHECK(rc == MPA_ERR_CRC);
			CHECK(at == b.size());
		} else {
			CHECK(rc == MPA_RX_FPDU); // the stream ends with an FPDU
		}
		CHECK(fpdus >= 6);
		files++;
	}
	CHECK(files >= 8);
	for (int op = 0; op < IW_NR_OPCODES; op++) {
		INFO("opcode " << op);
		if (iw_opcode_lookup(__u8(op)))
			CHECK(seen.count(op) == 1);
	}
}

TEST_CASE("RFC 6581 RTR messages", "[iwarp_parse]")
{
	std::vector<__u8> b(IW_MAX_HDR_LEN);
	iw_pkt in, out;
	// zero-length WRITE to STag 1, as siw sends it
	REQUIRE(iw_rtr_pkt(&in, MPA_RTR_WRITE, 1));
	__u32 n = iw_build_hdrs(b.data(), &in);
	REQUIRE(n == 14);
	CHECK(std::vector<__u8>(b.begin(), b.begin() + n) ==
	      hex("c1 40 00000001 0000000000000000"));
	REQUIRE(iw_parse(b.data(), n, n, false, &out) == IW_PARSE_OK);
	CHECK(iw_is_rtr(&out, MPA_RTR_WRITE));
	CHECK_FALSE(iw_is_rtr(&out, MPA_RTR_READ));
	// zero-length READ from STag 1
	REQUIRE(iw_rtr_pkt(&in, MPA_RTR_READ, 1));
	n = iw_build_hdrs(b.data(), &in);
	REQUIRE(n == 46);
	CHECK(std::vector<__u8>(b.begin(), b.begin() + n) ==
	      hex("41 41 00000000 00000001 00000001 00000000"
		  "00000000 0000000000000000 00000000 00000001 0000000000000000"));
	REQUIRE(iw_parse(b.data(), n, n, false, &out) == IW_PARSE_OK);
	CHECK(iw_is_rtr(&out, MPA_RTR_READ));
	// zero-length SEND
	REQUIRE(iw_rtr_pkt(&in, MPA_RTR_SEND, 1));
	n = iw_build_hdrs(b.data(), &in);
	REQUIRE(n == 18);
	REQUIRE(iw_parse(b.data(), n, n, false, &out) == IW_PARSE_OK);
	CHECK(iw_is_rtr(&out, MPA_RTR_SEND));
	// a SEND with data is none
	REQUIRE(iw_parse(b.data(), n, n + 1, false, &out) == IW_PARSE_OK);
	CHECK_FALSE(iw_is_rtr(&out, MPA_RTR_SEND));
	CHECK_FALSE(iw_rtr_pkt(&in, 3, 1));
	CHECK_FALSE(iw_is_rtr(&out, 0));
}
