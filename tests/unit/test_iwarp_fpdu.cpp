// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// MPA FPDU framing, markers and the stream receiver
// (kernel/proto/iwarp_fpdu.h, iwarp_mpa_rx.h): an FPDU whose CRC was
// computed with an independent Python CRC32c, marker positions and
// FPDUPTRs worked out by hand, and the receiver fed every split.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "iwarp_mpa_rx.h"
#include "wire_bytes.h"

namespace
{

using wire_bytes::hex;

// An untagged SEND (DDP L, DV 1; RDMAP RV 1, opcode 3; QN 0, MSN 1,
// MO 0) of "hello": ULPDU 23 bytes, pad 3.  CRC32c from Python:
//   crc32c(bytes.fromhex("0017" + ulpdu + "000000")) == 0x0cb190b9
const char *const send_hello = "0017 4143 00000000 00000000 00000001 00000000"
			       "68656c6c6f 000000 b990b10c";

struct Fpdu {
	std::vector<__u8> hdr, ulpdu;
	bool operator==(const Fpdu &o) const { return hdr == o.hdr && ulpdu == o.ulpdu; }
};

struct Result {
	std::vector<Fpdu> fpdus;
	int err = 0;
	__u64 err_pos = 0;
};

// Feed @s in pieces cut at @cuts (sorted offsets), collect whole FPDUs.
Result run(const std::vector<__u8> &s, std::vector<size_t> cuts, bool crc, bool markers)
{
	mpa_rx rx;
	mpa_rx_init(&rx, crc, markers, MPA_MAX_ULPDU);
	Result r;
	Fpdu cur;
	cuts.push_back(s.size());
	size_t from = 0;
	for (size_t to : cuts) {
		while (from < to) {
			size_t used;
			mpa_rx_ev ev;
			int rc = mpa_rx_next(&rx, s.data() + from, to - from, &used, &ev);
			from += used;
			if (rc < 0) {
				r.err = rc;
				r.err_pos = rx.pos;
				return r;
			}
			if (rc == MPA_RX_HDR) {
				cur = Fpdu{};
				cur.hdr.assign(rx.hdr, rx.hdr + rx.hdr_len);
				cur.ulpdu = cur.hdr;
			} else if (rc == MPA_RX_DATA) {
				REQUIRE(ev.off == cur.ulpdu.size());
				cur.ulpdu.insert(cur.ulpdu.end(), ev.data, ev.data + ev.len);
			} else if (rc == MPA_RX_FPDU) {
				REQUIRE(cur.ulpdu.size() == ev.ulpdu_len);
				r.fpdus.push_back(cur);
			} else {
				REQUIRE(from == to);
			}
		}
	}
	return r;
}

std::vector<__u8> ulpdu_send(size_t payload, __u32 msn)
{
	std::vector<__u8> u = {0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0};
	for (int i = 3; i >= 0; i--)
		u.push_back(__u8(msn >> (8 * i)));
	u.insert(u.end(), 4, 0);
	for (size_t i = 0; i < payload; i++)
		u.push_back(__u8(i + msn));
	return u;
}

std::vector<__u8> ulpdu_write(size_t payload)
{
	std::vector<__u8> u = {0xc1, 0x40, 0, 0, 0x12, 0x34, 0, 0, 0, 0, 0, 0, 0x10, 0};
	for (size_t i = 0; i < payload; i++)
		u.push_back(__u8(i * 3));
	return u;
}

std::vector<__u8> framed(const std::vector<__u8> &ulpdu, bool crc)
{
	std::vector<__u8> f(mpa_fpdu_len(__u32(ulpdu.size())));
	std::memcpy(f.data() + MPA_LEN_FIELD, ulpdu.data(), ulpdu.size());
	REQUIRE(mpa_fpdu_frame(f.data(), __u32(ulpdu.size()), crc) == f.size());
	return f;
}

// A stream of FPDUs, with markers inserted when asked.
std::vector<__u8> stream_of(const std::vector<std::vector<__u8>> &ulpdus, bool crc, bool markers)
{
	std::vector<__u8> s;
	for (auto &u : ulpdus) {
		auto f = framed(u, crc);
		if (markers) {
			std::vector<__u8> w(f.size() +
					    4 * mpa_markers_in(s.size(), __u32(f.size())));
			REQUIRE(mpa_fpdu_add_markers(w.data(), f.data(), __u32(f.size()), s.size(),
						     crc) == w.size());
			f = w;
		}
		s.insert(s.end(), f.begin(), f.end());
	}
	return s;
}

} // namespace

TEST_CASE("FPDU framing of a SEND matches an independent CRC", "[iwarp_fpdu]")
{
	auto want = hex(send_hello);
	std::vector<__u8> ulpdu(want.begin() + 2, want.begin() + 25);
	auto f = framed(ulpdu, true);
	CHECK(f == want);
	CHECK(mpa_pad_len(23) == 3);
	CHECK(mpa_fpdu_len(23) == 32);
	CHECK(mpa_fpdu_check(f.data(), f.size(), true, MPA_MAX_ULPDU) == 23);
	// without CRC the field is zero, and not checked
	auto nocrc = framed(ulpdu, false);
	CHECK(std::vector<__u8>(nocrc.end() - 4, nocrc.end()) == std::vector<__u8>(4, 0));
	CHECK(mpa_fpdu_check(nocrc.data(), nocrc.size(), false, MPA_MAX_ULPDU) == 23);
	CHECK(mpa_fpdu_check(nocrc.data(), nocrc.size(), true, MPA_MAX_ULPDU) == MPA_ERR_CRC);
	// any flipped bit is caught
	for (size_t i = 0; i < f.size() * 8; i++) {
		auto g = f;
		g[i / 8] ^= __u8(1 << (i % 8));
		int rc = mpa_fpdu_check(g.data(), g.size(), true, MPA_MAX_ULPDU);
		if (i / 8 < 2)
			CHECK(rc < 0); // length changed: truncated or length
		else
			CHECK(rc == MPA_ERR_CRC); // pad and CRC field included
	}
	CHECK(mpa_fpdu_check(f.data(), f.size() - 1, true, MPA_MAX_ULPDU) == MPA_ERR_TRUNCATED);
	CHECK(mpa_fpdu_check(f.data(), f.size(), true, 22) == MPA_ERR_LENGTH);
}

// The zero-copy transmit frames the header and the tail around a payload
// that stays in the MR's pages, folding the payload into the CRC chunk by
// chunk: the bytes must be those of the one-buffer framing.
TEST_CASE("FPDU split framing equals framing in one buffer", "[iwarp_fpdu]")
{
	auto want = hex(send_hello);
	std::vector<__u8> head(want.begin(), want.begin() + 20);
	std::vector<__u8> payload(want.begin() + 20, want.begin() + 25);
	for (bool crc : {true, false}) {
		std::vector<__u8> split(MPA_LEN_FIELD + 18);
		mpa_fpdu_put_len(split.data(), 23);
		std::memcpy(split.data() + MPA_LEN_FIELD, head.data() + MPA_LEN_FIELD, 18);
		__u32 reg = iw_crc32c_update(iw_crc32c_begin(), split.data(), split.size());
		for (__u8 b : payload)
			reg = iw_crc32c_update(reg, &b, 1);
		split.insert(split.end(), payload.begin(), payload.end());
		__u8 tail[3 + IW_CRC32C_LEN];
		__u32 n = mpa_fpdu_tail(tail, 23, crc, reg);
		CHECK(n == 3 + IW_CRC32C_LEN);
		split.insert(split.end(), tail, tail + n);
		std::vector<__u8> ulpdu(want.begin() + 2, want.begin() + 25);
		CHECK(split == framed(ulpdu, crc));
	}
	// every pad length, payload cut at every byte
	for (size_t len = 18; len < 26; len++) {
		auto ulpdu = ulpdu_send(len - 18, 7);
		auto whole = framed(ulpdu, true);
		for (size_t cut = 0; cut <= len; cut++) {
			std::vector<__u8> s(MPA_LEN_FIELD);
			mpa_fpdu_put_len(s.data(), __u32(len));
			s.insert(s.end(), ulpdu.begin(), ulpdu.end());
			__u32 reg = iw_crc32c_update(iw_crc32c_begin(), s.data(), MPA_LEN_FIELD + cut);
			reg = iw_crc32c_update(reg, s.data() + MPA_LEN_FIELD + cut, len - cut);
			__u8 tail[3 + IW_CRC32C_LEN];
			__u32 n = mpa_fpdu_tail(tail, __u32(len), true, reg);
			s.insert(s.end(), tail, tail + n);
			CHECK(s == whole);
		}
	}
}

TEST_CASE("FPDU pad lengths", "[iwarp_fpdu]")
{
	CHECK(mpa_pad_len(14) == 0);
	CHECK(mpa_pad_len(15) == 3);
	CHECK(mpa_pad_len(16) == 2);
	CHECK(mpa_pad_len(17) == 1);
	CHECK(mpa_pad_len(18) == 0);
	CHECK(mpa_fpdu_len(0xffff) == 2 + 0xffff + 3 + 4);
	for (__u32 n = 0; n < 64; n++)
		CHECK((MPA_LEN_FIELD + n + mpa_pad_len(n)) % 4 == 0);
}

TEST_CASE("Marker positions and counts", "[iwarp_fpdu]")
{
	CHECK(mpa_is_marker_pos(0));
	CHECK(mpa_is_marker_pos(512));
	CHECK_FALSE(mpa_is_marker_pos(4));
	CHECK(mpa_next_marker(0) == 0);
	CHECK(mpa_next_marker(4) == 512);
	CHECK(mpa_next_marker(512) == 512);
	// starting on a marker position: one marker at once, then every 508
	CHECK(mpa_markers_in(0, 4) == 1);
	CHECK(mpa_markers_in(0, 508) == 1);
	CHECK(mpa_markers_in(0, 512) == 2);
	// 500 bytes before the next marker
	CHECK(mpa_markers_in(12, 500) == 0); // ends exactly at 512: the next FPDU's
	CHECK(mpa_markers_in(12, 504) == 1);
	CHECK(mpa_markers_in(12, 500 + 508) == 1);
	CHECK(mpa_markers_in(12, 500 + 512) == 2);
	CHECK(mpa_fpdu_wire_len(12, 23, true) == 32);
	CHECK(mpa_fpdu_wire_len(0, 23, true) == 36);
	CHECK(mpa_fpdu_wire_len(0, 23, false) == 32);
}

TEST_CASE("Markers inserted into a 1000-byte FPDU", "[iwarp_fpdu]")
{
	// FPDU at stream offset 256, ULPDU 994 bytes: wire offsets 256..1255
	// plus markers at 512 (FPDUPTR 256) and 1024 (FPDUPTR 768)
	auto u = ulpdu_write(980);
	REQUIRE(u.size() == 994);
	auto f = framed(u, true);
	REQUIRE(f.size() == 1000);
	REQUIRE(mpa_markers_in(256, 1000) == 2);
	std::vector<__u8> w(1008);
	REQUIRE(mpa_fpdu_add_markers(w.data(), f.data(), 1000, 256, true) == 1008);
	// marker 1 at wire offset 512 - 256 = 256 into the FPDU
	CHECK(std::vector<__u8>(w.begin() + 256, w.begin() + 260) ==
	      std::vector<__u8>{0, 0, 0x01, 0x00});
	// marker 2 at stream 1024: 768 into the FPDU
	CHECK(std::vector<__u8>(w.begin() + 768, w.begin() + 772) ==
	      std::vector<__u8>{0, 0, 0x03, 0x00});
	CHECK(std::memcmp(w.data(), f.data(), 256) == 0);
	CHECK(std::memcmp(w.data() + 260, f.data() + 256, 508) == 0);
	CHECK(std::memcmp(w.data() + 772, f.data() + 764, 1000 - 764 - 4) == 0);
	// the CRC covers the markers
	CHECK(iw_crc32c_get(w.data() + 1004) == iw_crc32c(w.data(), 1004));
	CHECK(iw_crc32c_get(w.data() + 1004) != iw_crc32c_get(f.data() + 996));
}

TEST_CASE("Stream receiver: one FPDU, every split", "[iwarp_fpdu]")
{
	auto s = hex(send_hello);
	auto whole = run(s, {}, true, false);
	REQUIRE(whole.err == 0);
	REQUIRE(whole.fpdus.size() == 1);
	CHECK(whole.fpdus[0].hdr.size() == 18);
	CHECK(std::string(whole.fpdus[0].ulpdu.begin() + 18, whole.fpdus[0].ulpdu.end()) ==
	      "hello");
	for (size_t a = 0; a <= s.size(); a++)
		for (size_t b = a; b <= s.size(); b++)
			CHECK(run(s, {a, b}, true, false).fpdus == whole.fpdus);
	// byte by byte
	std::vector<size_t> all;
	for (size_t i = 1; i < s.size(); i++)
		all.push_back(i);
	CHECK(run(s, all, true, false).fpdus == whole.fpdus);
}

TEST_CASE("Stream receiver: many FPDUs with and without markers", "[iwarp_fpdu]")
{
	std::vector<std::vector<__u8>> us;
	for (size_t i = 0; i < 12; i++)
		us.push_back(i % 3 ? ulpdu_send(i * 97, __u32(i)) : ulpdu_write(i * 131 + 1));
	for (bool markers : {false, true}) {
		for (bool crc : {false, true}) {
			auto s = stream_of(us, crc, markers);
			auto whole = run(s, {}, crc, markers);
			REQUIRE(whole.err == 0);
			REQUIRE(whole.fpdus.size() == us.size());
			for (size_t i = 0; i < us.size(); i++)
				CHECK(whole.fpdus[i].ulpdu == us[i]);
			for (size_t step : {1, 3, 4, 7, 511, 512, 513}) {
				std::vector<size_t> cuts;
				for (size_t c = step; c < s.size(); c += step)
					cuts.push_back(c);
				CHECK(run(s, cuts, crc, markers).fpdus == whole.fpdus);
			}
		}
	}
}

TEST_CASE("Stream receiver errors are sticky and at the same byte", "[iwarp_fpdu]")
{
	std::vector<std::vector<__u8>> us = {ulpdu_send(40, 1), ulpdu_send(700, 2), ulpdu_write(9)};
	auto good = stream_of(us, true, true);

	// a CRC error in the second FPDU
	auto s = good;
	s[100] ^= 1;
	auto r = run(s, {}, true, true);
	CHECK(r.err == MPA_ERR_CRC);
	CHECK(r.fpdus.size() == 1);
	for (size_t step : {1, 5, 64}) {
		std::vector<size_t> cuts;
		for (size_t c = step; c < s.size(); c += step)
			cuts.push_back(c);
		auto r2 = run(s, cuts, true, true);
		CHECK(r2.err == r.err);
		CHECK(r2.err_pos == r.err_pos);
		CHECK(r2.fpdus == r.fpdus);
	}
	// CRC off: the same flip goes through
	auto noc = stream_of(us, false, false);
	noc[100] ^= 1;
	CHECK(run(noc, {}, false, false).err == 0);

	// a wrong FPDUPTR in the marker at 512
	s = good;
	s[512 + 3] ^= 4;
	r = run(s, {}, false, true);
	CHECK(r.err == MPA_ERR_MARKER);
	CHECK(r.err_pos == 516);
	// reserved marker bits
	s = good;
	s[512] = 1;
	CHECK(run(s, {}, false, true).err == MPA_ERR_MARKER);
	// the marker at offset 0 has FPDUPTR 0
	CHECK(std::vector<__u8>(good.begin(), good.begin() + 4) == std::vector<__u8>(4, 0));

	// ULPDU_Length below a tagged DDP header, and above the limit
	s = hex(send_hello);
	s[1] = 13;
	CHECK(run(s, {}, true, false).err == MPA_ERR_LENGTH);
	s = hex(send_hello);
	mpa_rx rx;
	mpa_rx_init(&rx, true, false, 22);
	size_t used;
	mpa_rx_ev ev;
	CHECK(mpa_rx_next(&rx, s.data(), s.size(), &used, &ev) == MPA_ERR_LENGTH);
	CHECK(used == 2);
	CHECK(mpa_rx_next(&rx, s.data() + 2, s.size() - 2, &used, &ev) == MPA_ERR_LENGTH);
	CHECK(used == 0);
	CHECK(std::string(mpa_fpdu_err_name(MPA_ERR_MARKER)) == "marker");
}

TEST_CASE("Stream receiver: header capture sizes", "[iwarp_fpdu]")
{
	// tagged WRITE: 14 header bytes, then data
	auto s = framed(ulpdu_write(100), false);
	auto r = run(s, {}, false, false);
	REQUIRE(r.fpdus.size() == 1);
	CHECK(r.fpdus[0].hdr.size() == IW_TAGGED_HDR_LEN);
	// a TERMINATE is all header
	std::vector<__u8> term = {0x41, 0x47, 0, 0, 0, 0, 0, 0,	   0,	 2,    0,
				  0,	0,    1, 0, 0, 0, 0, 0x02, 0x00, 0x02, 0x00};
	r = run(framed(term, false), {}, false, false);
	REQUIRE(r.fpdus.size() == 1);
	CHECK(r.fpdus[0].hdr == term);
	// a ULPDU shorter than its opcode's headers: all of it is header
	std::vector<__u8> rreq = ulpdu_send(10, 0);
	rreq[1] = 0x41; // READ request wants 46 bytes, has 28
	r = run(framed(rreq, false), {}, false, false);
	REQUIRE(r.fpdus.size() == 1);
	CHECK(r.fpdus[0].hdr.size() == 28);
}

TEST_CASE("Stream receiver: caller folds the data into the CRC", "[iwarp_fpdu]")
{
	auto s = stream_of({ulpdu_send(300, 1), ulpdu_send(5, 2)}, true, false);
	mpa_rx rx;
	mpa_rx_init(&rx, true, false, MPA_MAX_ULPDU);
	rx.caller_crcs_data = true;
	size_t from = 0, fpdus = 0;
	while (from < s.size()) {
		size_t used;
		mpa_rx_ev ev;
		int rc = mpa_rx_next(&rx, s.data() + from, std::min<size_t>(7, s.size() - from),
				     &used, &ev);
		REQUIRE(rc >= 0);
		if (rc == MPA_RX_DATA)
			mpa_rx_crc_data(&rx, ev.data, ev.len);
		fpdus += rc == MPA_RX_FPDU;
		from += used;
	}
	CHECK(fpdus == 2);
}
