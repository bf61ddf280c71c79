// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// MPA Request/Reply frames and their negotiation (kernel/proto/iwarp_mpa.h):
// frames written out byte by byte, the strict parser's refusals, and the
// outcomes against a softrnic peer and against what siw sends and echoes.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "iwarp_mpa.h"

namespace
{

std::vector<__u8> frame(const char *key, __u8 flags, __u8 rev, std::vector<__u8> pd)
{
	std::vector<__u8> f(key, key + 16);
	f.push_back(flags);
	f.push_back(rev);
	f.push_back(__u8(pd.size() >> 8));
	f.push_back(__u8(pd.size()));
	f.insert(f.end(), pd.begin(), pd.end());
	return f;
}

mpa_local softrnic_local()
{
	mpa_local l{};
	l.crc = false;
	l.markers_ok = false;
	l.enhanced = true;
	l.p2p = false;
	l.rtr = MPA_RTR_ALL;
	l.ird = 16;
	l.ord = 16;
	l.max_ird = 128;
	l.large_fpdu = true;
	l.rdmap_ext = true;
	return l;
}

} // namespace

TEST_CASE("MPA keys and header layout", "[iwarp_mpa]")
{
	const __u8 req_key[16] = {0x4d, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52,
				  0x65, 0x71, 0x20, 0x46, 0x72, 0x61, 0x6d, 0x65};
	const __u8 rep_key[16] = {0x4d, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52,
				  0x65, 0x70, 0x20, 0x46, 0x72, 0x61, 0x6d, 0x65};
	CHECK(std::memcmp(MPA_KEY_REQ, req_key, 16) == 0);
	CHECK(std::memcmp(MPA_KEY_REP, rep_key, 16) == 0);

	mpa_params p{};
	p.rev = MPA_REV2;
	p.enhanced = true;
	p.crc = true;
	p.ird = 0x12;
	p.ord = 0x1456;
	p.p2p = true;
	p.rtr = MPA_RTR_WRITE | MPA_RTR_READ;
	std::vector<__u8> buf(MPA_MAX_RR_LEN);
	const char pd[] = "hi";
	size_t n = mpa_rr_build(buf.data(), buf.size(), false, false, &p, pd, 2);
	REQUIRE(n == 26);
	buf.resize(n);
	// C and H, rev 2, PD_Length 6, IRD word A|0x12, ORD word C|D|0x1456
	CHECK(buf == frame(MPA_KEY_REQ, 0x50, 2, {0x80, 0x12, 0xd4, 0x56, 'h', 'i'}));

	mpa_rr rr;
	REQUIRE(mpa_rr_parse(buf.data(), buf.size(), false, &rr) == MPA_RR_OK);
	CHECK(rr.p.rev == 2);
	CHECK(rr.p.crc);
	CHECK_FALSE(rr.p.markers);
	CHECK(rr.p.enhanced);
	CHECK(rr.p.p2p);
	CHECK(rr.p.rtr == (MPA_RTR_WRITE | MPA_RTR_READ));
	CHECK(rr.p.ird == 0x12);
	CHECK(rr.p.ord == 0x1456);
	CHECK(rr.pd_len == 2);
	CHECK(std::memcmp(rr.pd, "hi", 2) == 0);
	CHECK(rr.frame_len == 26);
}

TEST_CASE("MPA rev 1 frame without enhanced words", "[iwarp_mpa]")
{
	auto f = frame(MPA_KEY_REP, 0xc0, 1, {1, 2, 3});
	mpa_rr rr;
	REQUIRE(mpa_rr_parse(f.data(), f.size(), true, &rr) == MPA_RR_OK);
	CHECK(rr.p.markers);
	CHECK(rr.p.crc);
	CHECK_FALSE(rr.p.enhanced);
	CHECK(rr.pd_len == 3);
	// H in a rev 1 frame is ignored: the words are private data
	f = frame(MPA_KEY_REP, MPA_FLAG_ENHANCED, 1, {0, 1, 0, 2});
	REQUIRE(mpa_rr_parse(f.data(), f.size(), true, &rr) == MPA_RR_OK);
	CHECK_FALSE(rr.p.enhanced);
	CHECK(rr.pd_len == 4);
}

TEST_CASE("MPA frame parser refusals", "[iwarp_mpa]")
{
	mpa_rr rr;
	auto ok = frame(MPA_KEY_REQ, 0, 1, {});
	CHECK(mpa_rr_parse(ok.data(), ok.size(), false, &rr) == MPA_RR_OK);
	// a reply key where a request is expected and vice versa
	CHECK(mpa_rr_parse(ok.data(), ok.size(), true, &rr) == MPA_RR_ERR_KEY);
	auto f = ok;
	f[3] ^= 0x20;
	CHECK(mpa_rr_parse(f.data(), f.size(), false, &rr) == MPA_RR_ERR_KEY);
	// every truncation
	for (size_t n = 0; n < ok.size(); n++)
		CHECK(mpa_rr_parse(ok.data(), n, false, &rr) == MPA_RR_ERR_TRUNCATED);
	auto withpd = frame(MPA_KEY_REQ, 0, 1, {9, 9, 9});
	CHECK(mpa_rr_parse(withpd.data(), withpd.size() - 1, false, &rr) == MPA_RR_ERR_TRUNCATED);
	// bytes past the frame are not the frame's
	withpd.push_back(0);
	CHECK(mpa_rr_parse(withpd.data(), withpd.size(), false, &rr) == MPA_RR_ERR_PD_LEN);
	// revisions 0, 3, 255
	for (int rev : {0, 3, 255}) {
		f = frame(MPA_KEY_REQ, 0, __u8(rev), {});
		CHECK(mpa_rr_parse(f.data(), f.size(), false, &rr) == MPA_RR_ERR_REV);
	}
	// R in a request
	f = frame(MPA_KEY_REQ, MPA_FLAG_REJECT, 1, {});
	CHECK(mpa_rr_parse(f.data(), f.size(), false, &rr) == MPA_RR_ERR_FLAGS);
	// PD_Length 513 and 0xffff
	std::vector<__u8> big(513);
	f = frame(MPA_KEY_REQ, 0, 1, big);
	CHECK(mpa_rr_frame_len(f.data(), f.size(), false) == MPA_RR_ERR_PD_LEN);
	CHECK(mpa_rr_parse(f.data(), f.size(), false, &rr) == MPA_RR_ERR_PD_LEN);
	f = frame(MPA_KEY_REQ, 0, 1, {});
	f[18] = f[19] = 0xff;
	CHECK(mpa_rr_parse(f.data(), f.size(), false, &rr) == MPA_RR_ERR_PD_LEN);
	big.resize(512);
	f = frame(MPA_KEY_REQ, 0, 1, big);
	CHECK(mpa_rr_frame_len(f.data(), 20, false) == 532);
	CHECK(mpa_rr_parse(f.data(), f.size(), false, &rr) == MPA_RR_OK);
	// enhanced with fewer than 4 private data bytes
	f = frame(MPA_KEY_REQ, MPA_FLAG_ENHANCED, 2, {0, 1, 0});
	CHECK(mpa_rr_parse(f.data(), f.size(), false, &rr) == MPA_RR_ERR_V2);
	// RTR flags without P2P
	f = frame(MPA_KEY_REQ, MPA_FLAG_ENHANCED, 2, {0, 1, 0x80, 1});
	CHECK(mpa_rr_parse(f.data(), f.size(), false, &rr) == MPA_RR_ERR_V2);
	// a reply naming two RTR types
	f = frame(MPA_KEY_REP, MPA_FLAG_ENHANCED, 2, {0x80, 1, 0xc0, 1});
	CHECK(mpa_rr_parse(f.data(), f.size(), true, &rr) == MPA_RR_ERR_V2);
	// unknown reserved flag bits are ignored
	f = frame(MPA_KEY_REQ, 0x04, 1, {});
	CHECK(mpa_rr_parse(f.data(), f.size(), false, &rr) == MPA_RR_OK);
	CHECK(std::string(mpa_rr_err_name(MPA_RR_ERR_V2)) == "enhanced");
}

TEST_CASE("MPA build refuses private data beyond 512 bytes", "[iwarp_mpa]")
{
	mpa_params p{};
	p.rev = MPA_REV2;
	p.enhanced = true;
	std::vector<__u8> buf(600), pd(509);
	CHECK(mpa_rr_build(buf.data(), buf.size(), false, false, &p, pd.data(), 509) == 0);
	CHECK(mpa_rr_build(buf.data(), buf.size(), false, false, &p, pd.data(), 508) == 532);
	p.enhanced = false;
	p.rev = MPA_REV1;
	CHECK(mpa_rr_build(buf.data(), buf.size(), false, false, &p, pd.data(), 509) == 529);
	CHECK(mpa_rr_build(buf.data(), 528, false, false, &p, pd.data(), 509) == 0);
}

TEST_CASE("MPA negotiation between two softrnic ends", "[iwarp_mpa]")
{
	mpa_local ini = softrnic_local(), resp = softrnic_local();
	ini.p2p = true;
	ini.ird = 4;
	ini.ord = 64;
	resp.ird = 8;
	resp.ord = 32;
	resp.max_ird = 40;
	resp.crc = true;

	mpa_params req;
	mpa_request_params(&ini, &req);
	std::vector<__u8> buf(MPA_MAX_RR_LEN);
	size_t n = mpa_rr_build(buf.data(), buf.size(), false, false, &req, "x", 1);
	mpa_rr rreq;
	REQUIRE(mpa_rr_parse(buf.data(), n, false, &rreq) == MPA_RR_OK);
	CHECK(buf[16] == (MPA_FLAG_ENHANCED | MPA_FLAG_LARGE_FPDU | MPA_FLAG_EXT_OFFER));

	mpa_params rep;
	mpa_conn rc, ic;
	REQUIRE(mpa_accept(&rreq, &resp, &rep, &rc) == MPA_NEG_OK);
	CHECK(rep.crc);
	CHECK(rep.ord == 4);  // no more than the initiator's IRD
	CHECK(rep.ird == 40); // the initiator's ORD 64, cut to max_ird
	CHECK(rep.rtr == MPA_RTR_WRITE);
	CHECK(rc.rtr_send); // the responder waits for the RTR
	CHECK(rc.ird == 40);
	CHECK(rc.ord == 4);
	CHECK(rc.rdmap_ext);
	CHECK(rc.large_fpdu_tx);

	n = mpa_rr_build(buf.data(), buf.size(), true, false, &rep, nullptr, 0);
	CHECK(buf[16] ==
	      (MPA_FLAG_CRC | MPA_FLAG_ENHANCED | MPA_FLAG_LARGE_FPDU | MPA_FLAG_EXT_ACCEPT));
	mpa_rr rrep;
	REQUIRE(mpa_rr_parse(buf.data(), n, true, &rrep) == MPA_RR_OK);
	REQUIRE(mpa_connected(&req, &rrep, &ini, &ic) == MPA_NEG_OK);
	CHECK(ic.crc);
	CHECK(ic.ird == 4);
	CHECK(ic.ord == 40); // our ORD 64 cut to the responder's IRD
	CHECK(ic.rtr == MPA_RTR_WRITE);
	CHECK(ic.rtr_send);
	CHECK(ic.rdmap_ext);
	CHECK(ic.large_fpdu_tx);
	CHECK_FALSE(ic.markers_tx);
	CHECK_FALSE(ic.markers_rx);
}

TEST_CASE("MPA negotiation with what siw sends and echoes", "[iwarp_mpa]")
{
	mpa_local ours = softrnic_local();
	mpa_rr rr;
	mpa_params rep, req;
	mpa_conn c;

	// siw initiator (6.1 defaults): rev 2, H, IRD/ORD, no CRC, no P2P
	auto siw_req = frame(MPA_KEY_REQ, MPA_FLAG_ENHANCED, 2, {0, 8, 0, 8, 'p', 'd'});
	REQUIRE(mpa_rr_parse(siw_req.data(), siw_req.size(), false, &rr) == MPA_RR_OK);
	REQUIRE(mpa_accept(&rr, &ours, &rep, &c) == MPA_NEG_OK);
	CHECK_FALSE(rep.rdmap_ext);
	CHECK_FALSE(c.rdmap_ext);
	CHECK_FALSE(rep.large_fpdu);
	CHECK_FALSE(c.crc);
	CHECK(c.rtr == 0);
	CHECK(rep.ird == 16);
	CHECK(rep.ord == 8);
	CHECK(rr.pd_len == 2);

	// siw with mpa_crc_required: CRC on
	siw_req[16] |= MPA_FLAG_CRC;
	REQUIRE(mpa_rr_parse(siw_req.data(), siw_req.size(), false, &rr) == MPA_RR_OK);
	REQUIRE(mpa_accept(&rr, &ours, &rep, &c) == MPA_NEG_OK);
	CHECK(c.crc);
	CHECK(rep.crc);

	// siw in peer_to_peer mode offers READ and WRITE RTR: we pick WRITE
	siw_req = frame(MPA_KEY_REQ, MPA_FLAG_ENHANCED, 2, {0x80, 8, 0xc0, 8});
	REQUIRE(mpa_rr_parse(siw_req.data(), siw_req.size(), false, &rr) == MPA_RR_OK);
	REQUIRE(mpa_accept(&rr, &ours, &rep, &c) == MPA_NEG_OK);
	CHECK(rep.rtr == MPA_RTR_WRITE);
	ours.rtr = MPA_RTR_SEND;
	CHECK(mpa_accept(&rr, &ours, &rep, &c) == MPA_NEG_RTR);
	ours = softrnic_local();

	// a peer asking for markers is refused
	siw_req = frame(MPA_KEY_REQ, MPA_FLAG_MARKERS, 1, {});
	REQUIRE(mpa_rr_parse(siw_req.data(), siw_req.size(), false, &rr) == MPA_RR_OK);
	CHECK(mpa_accept(&rr, &ours, &rep, &c) == MPA_NEG_MARKERS);

	// siw responder: its reply is our request's flags byte echoed (plus
	// C when it requires CRC), key changed, its own IRD/ORD words
	mpa_request_params(&ours, &req);
	std::vector<__u8> buf(MPA_MAX_RR_LEN);
	mpa_rr_build(buf.data(), buf.size(), false, false, &req, nullptr, 0);
	__u8 echoed = buf[16];
	CHECK((echoed & MPA_FLAG_EXT_OFFER));
	auto siw_rep = frame(MPA_KEY_REP, echoed, 2, {0, 16, 0, 16});
	REQUIRE(mpa_rr_parse(siw_rep.data(), siw_rep.size(), true, &rr) == MPA_RR_OK);
	CHECK_FALSE(rr.p.rdmap_ext);
	REQUIRE(mpa_connected(&req, &rr, &ours, &c) == MPA_NEG_OK);
	CHECK_FALSE(c.rdmap_ext); // the echo is no acceptance
	CHECK(c.large_fpdu_tx);	  // siw's receiver takes any FPDU length
	CHECK(c.ord == 16);

	// siw responder with an ORD above our IRD
	siw_rep = frame(MPA_KEY_REP, echoed, 2, {0, 16, 0, 17});
	REQUIRE(mpa_rr_parse(siw_rep.data(), siw_rep.size(), true, &rr) == MPA_RR_OK);
	CHECK(mpa_connected(&req, &rr, &ours, &c) == MPA_NEG_IRD);
	// a rev 1 or plain reply to an enhanced request
	siw_rep = frame(MPA_KEY_REP, 0, 1, {});
	REQUIRE(mpa_rr_parse(siw_rep.data(), siw_rep.size(), true, &rr) == MPA_RR_OK);
	CHECK(mpa_connected(&req, &rr, &ours, &c) == MPA_NEG_NOT_ENHANCED);
	// a rejection
	siw_rep = frame(MPA_KEY_REP, MPA_FLAG_REJECT, 2, {});
	REQUIRE(mpa_rr_parse(siw_rep.data(), siw_rep.size(), true, &rr) == MPA_RR_OK);
	CHECK(mpa_connected(&req, &rr, &ours, &c) == MPA_NEG_REJECTED);
	// a reply that asks us for markers
	siw_rep = frame(MPA_KEY_REP, MPA_FLAG_MARKERS | MPA_FLAG_ENHANCED, 2, {0, 1, 0, 1});
	REQUIRE(mpa_rr_parse(siw_rep.data(), siw_rep.size(), true, &rr) == MPA_RR_OK);
	CHECK(mpa_connected(&req, &rr, &ours, &c) == MPA_NEG_MARKERS);
}

TEST_CASE("MPA P2P reply must pick an offered RTR", "[iwarp_mpa]")
{
	mpa_local ours = softrnic_local();
	ours.p2p = true;
	ours.rtr = MPA_RTR_READ;
	mpa_params req;
	mpa_request_params(&ours, &req);
	CHECK(req.rtr == MPA_RTR_READ);
	mpa_rr rr;
	mpa_conn c;
	auto rep = frame(MPA_KEY_REP, MPA_FLAG_ENHANCED, 2, {0x80, 1, 0x80, 1});
	REQUIRE(mpa_rr_parse(rep.data(), rep.size(), true, &rr) == MPA_RR_OK);
	CHECK(mpa_connected(&req, &rr, &ours, &c) == MPA_NEG_RTR);
	rep = frame(MPA_KEY_REP, MPA_FLAG_ENHANCED, 2, {0x00, 1, 0x00, 1});
	REQUIRE(mpa_rr_parse(rep.data(), rep.size(), true, &rr) == MPA_RR_OK);
	CHECK(mpa_connected(&req, &rr, &ours, &c) == MPA_NEG_RTR);
	rep = frame(MPA_KEY_REP, MPA_FLAG_ENHANCED, 2, {0x80, 1, 0x40, 1});
	REQUIRE(mpa_rr_parse(rep.data(), rep.size(), true, &rr) == MPA_RR_OK);
	CHECK(mpa_connected(&req, &rr, &ours, &c) == MPA_NEG_OK);
	CHECK(c.rtr == MPA_RTR_READ);
	CHECK(mpa_pick_rtr(MPA_RTR_ALL, MPA_RTR_ALL) == MPA_RTR_WRITE);
	CHECK(mpa_pick_rtr(MPA_RTR_SEND | MPA_RTR_READ, MPA_RTR_ALL) == MPA_RTR_READ);
	CHECK(mpa_pick_rtr(MPA_RTR_SEND, MPA_RTR_ALL) == MPA_RTR_SEND);
	CHECK(mpa_pick_rtr(MPA_RTR_SEND, MPA_RTR_WRITE) == 0);
}
