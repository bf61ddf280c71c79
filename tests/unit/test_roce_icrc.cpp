// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// RoCEv2 ICRC (kernel/proto/roce_icrc.h) against a packet captured from
// real hardware, a constant derived with Python's zlib, and a reference
// CRC-32 run over a masked copy that the test builds field by field.
#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "roce_icrc.h"
#include "wire_bytes.h"

namespace
{

using wire_bytes::hex;

// What zlib's crc32() computes, written independently of the header.
__u32 ref_crc32(const std::vector<__u8> &b)
{
	return wire_bytes::ref_crc_reflected(0xedb88320U, b);
}

std::vector<__u8> cat(std::initializer_list<std::vector<__u8>> parts)
{
	std::vector<__u8> v;
	for (auto &p : parts)
		v.insert(v.end(), p.begin(), p.end());
	return v;
}

// A RoCEv2 CNP as captured on a Mellanox ConnectX-4 Lx (published with
// scapy's RoCE tests): Ethernet, IPv4 (TOS 0xc2, TTL 64), UDP sport 0,
// BTH opcode 0x81 with BECN, DestQP 0x000118, 16 reserved bytes, and the
// hardware's ICRC 82 fd 00 2a.
const char *const cnp_frame = "e41d2dab2bc2 7cfe90643b32 0800"
			      "45c2003c718c400040119161 0a001101 0a001201"
			      "000012b700280000"
			      "8100ffff40000118 00000000"
			      "00000000000000000000000000000000"
			      "82fd002a";

// An IPv6 RC RDMA WRITE ONLY: TC 0xba, flow label 0x12345, hop limit 64,
// UDP checksum 0xbeef, BECN set, RETH {0x1000, 0x203, 16}, 16 bytes
// 00..0f.  Expected ICRC derived with Python:
//   zlib.crc32(b'\xff'*8 + masked_ipv6 + masked_udp + masked_bth + reth
//              + payload) == 0xb82190e5
// where masked_ipv6 has byte 0 |= 0x0f, bytes 1-3 and 7 = 0xff,
// masked_udp bytes 6-7 = 0xff, masked_bth byte 4 = 0xff.
const char *const v6_ip = "6ba12345 0038 11 40"
			  "fe800000000000000000000000000001"
			  "fe800000000000000000000000000002";
const char *const v6_udp = "c001 12b7 0038 beef"
			   "0a00ffff 40000012 80000001"
			   "0000000000001000 00000203 00000010"
			   "000102030405060708090a0b0c0d0e0f";
const __u32 v6_icrc = 0xb82190e5U;

} // namespace

TEST_CASE("CRC-32 table matches the bitwise definition", "[roce_icrc]")
{
	const char *check = "123456789";
	// the standard CRC-32 check value
	CHECK(~roce_crc32_update(~0U, check, 9) == 0xcbf43926U);
	std::vector<__u8> b;
	for (int i = 0; i < 1000; i++) {
		b.push_back(__u8(i * 37 + (i >> 3)));
		CHECK(~roce_crc32_update(~0U, b.data(), b.size()) == ref_crc32(b));
	}
	// the register after the preset and the masked LRH
	CHECK(roce_crc32_update(~0U, std::vector<__u8>(8, 0xff).data(), 8) == ROCE_ICRC_SEED);
}

TEST_CASE("ICRC of a CNP captured on ConnectX-4 Lx", "[roce_icrc]")
{
	auto f = hex(cnp_frame);
	REQUIRE(f.size() == 14 + 20 + 40);
	const __u8 *ip = &f[14], *udp = &f[34];
	CHECK(roce_icrc(ip, 20, false, udp, 36) == 0x2a00fd82U);
	CHECK(roce_icrc_get(&f[70]) == 0x2a00fd82U);
	CHECK(roce_icrc_check(ip, 20, false, udp, 40));

	std::vector<__u8> g = f;
	std::memset(&g[70], 0, 4);
	REQUIRE(roce_icrc_fill(&g[14], 20, false, &g[34], 40));
	CHECK(g == f); // bytes 82 fd 00 2a: least significant byte first
}

TEST_CASE("ICRC of an IPv6 packet (Python zlib constant)", "[roce_icrc]")
{
	auto ip = hex(v6_ip);
	auto udp = hex(v6_udp);
	REQUIRE(ip.size() == 40);
	REQUIRE(udp.size() == 52);
	CHECK(roce_icrc(ip.data(), 40, true, udp.data(), udp.size()) == v6_icrc);
	udp.resize(56);
	REQUIRE(roce_icrc_fill(ip.data(), 40, true, udp.data(), udp.size()));
	CHECK(std::vector<__u8>(udp.end() - 4, udp.end()) ==
	      std::vector<__u8>{0xe5, 0x90, 0x21, 0xb8});
	CHECK(roce_icrc_check(ip.data(), 40, true, udp.data(), udp.size()));
}

TEST_CASE("ICRC equals a CRC-32 over a hand-masked IPv4 copy", "[roce_icrc]")
{
	// IPv4: TOS 0x02 (ECT), TTL 17, a checksum (value irrelevant)
	auto ip = hex("4502 0040 1234 4000 1111 abcd c0a80001 c0a80002");
	// UDP sport 0xd000 dport 4791 len 44 csum 0x5555; BTH SEND ONLY with
	// FECN and a resv6 bit set, DestQP 0x000203, A, PSN 0x000010;
	// 20 bytes payload; ICRC slot
	auto udp = hex("d00012b7002c5555"
		       "04000000 a1000203 80000010"
		       "6865 6c6c 6f2c 2072 6f63 6576 3220 6963 7263 2121");
	// The same bytes with the ICRC's don't-care fields set to ones.
	auto mip = ip;
	mip[1] = 0xff;	// TOS
	mip[8] = 0xff;	// TTL
	mip[10] = 0xff; // header checksum
	mip[11] = 0xff;
	auto mudp = udp;
	mudp[6] = 0xff; // UDP checksum
	mudp[7] = 0xff;
	mudp[12] = 0xff; // BTH FECN/BECN/resv6
	const __u32 want = ref_crc32(cat({std::vector<__u8>(8, 0xff), mip, mudp}));
	CHECK(roce_icrc(ip.data(), ip.size(), false, udp.data(), udp.size()) == want);

	// the helpers mask exactly those bytes
	auto cip = ip, cudp = udp;
	roce_icrc_mask_l3(cip.data(), cip.size(), false);
	roce_icrc_mask_udp_bth(cudp.data(), cudp.size());
	CHECK(cip == mip);
	CHECK(cudp == mudp);
}

TEST_CASE("ICRC ignores exactly the mutable fields", "[roce_icrc]")
{
	SECTION("IPv4")
	{
		auto f = hex(cnp_frame);
		std::vector<__u8> pkt(f.begin() + 14, f.end() - 4); // IP .. before ICRC
		const __u32 base =
		    roce_icrc(pkt.data(), 20, false, pkt.data() + 20, pkt.size() - 20);
		for (size_t i = 0; i < pkt.size(); i++) {
			// IP TOS, TTL, checksum; UDP checksum; BTH byte 4
			bool masked =
			    i == 1 || i == 8 || i == 10 || i == 11 || i == 26 || i == 27 || i == 32;
			for (__u8 bit = 1; bit; bit <<= 1) {
				INFO("byte " << i << " bit " << int(bit));
				auto m = pkt;
				m[i] ^= bit;
				__u32 c =
				    roce_icrc(m.data(), 20, false, m.data() + 20, m.size() - 20);
				CHECK((c == base) == masked);
			}
		}
	}
	SECTION("IPv6")
	{
		auto ip = hex(v6_ip);
		auto udp = hex(v6_udp);
		auto pkt = cat({ip, udp});
		for (size_t i = 0; i < pkt.size(); i++) {
			// version nibble kept; TC, flow label, hop limit masked;
			// UDP checksum; BTH byte 4
			for (__u8 bit = 1; bit; bit <<= 1) {
				bool masked = (i == 0 && bit < 0x10) || i == 1 || i == 2 ||
					      i == 3 || i == 7 || i == 46 || i == 47 || i == 52;
				INFO("byte " << i << " bit " << int(bit));
				auto m = pkt;
				m[i] ^= bit;
				__u32 c =
				    roce_icrc(m.data(), 40, true, m.data() + 40, m.size() - 40);
				CHECK((c == v6_icrc) == masked);
			}
		}
	}
}

TEST_CASE("ICRC fed in pieces equals the one-shot ICRC", "[roce_icrc]")
{
	auto ip = hex(v6_ip);
	auto udp = hex(v6_udp);
	for (size_t head = 0; head <= 20; head++) {
		for (size_t split = head; split <= udp.size(); split++) {
			INFO("head " << head << " split " << split);
			// begin() masks only the first `head` bytes it is given;
			// a short head means the rest of UDP+BTH is unmasked, so
			// only head == 20 must match, shorter heads must not
			// (they leave the UDP checksum or BTH byte 4 unmasked).
			__u32 c = roce_icrc_begin(ip.data(), 40, true, udp.data(), head);
			c = roce_icrc_update(c, udp.data() + head, split - head);
			c = roce_icrc_update(c, udp.data() + split, udp.size() - split);
			CHECK((roce_icrc_final(c) == v6_icrc) == (head > 12));
		}
	}
}

TEST_CASE("ICRC check refuses corrupted and short packets", "[roce_icrc]")
{
	auto f = hex(cnp_frame);
	const __u8 *ip = &f[14];
	__u8 *udp = &f[34];
	REQUIRE(roce_icrc_check(ip, 20, false, udp, 40));
	udp[30] ^= 0x01; // a reserved CNP byte: covered
	CHECK_FALSE(roce_icrc_check(ip, 20, false, udp, 40));
	udp[30] ^= 0x01;
	f[73] ^= 0x80; // the ICRC itself
	CHECK_FALSE(roce_icrc_check(ip, 20, false, udp, 40));
	f[73] ^= 0x80;
	REQUIRE(roce_icrc_check(ip, 20, false, udp, 40));
	// UDP + BTH + ICRC is the least that can carry an ICRC
	CHECK_FALSE(roce_icrc_check(ip, 20, false, udp, 23));
	CHECK_FALSE(roce_icrc_fill(ip, 20, false, udp, 23));
	std::vector<__u8> small(24, 0);
	CHECK(roce_icrc_fill(ip, 20, false, small.data(), small.size()));
	CHECK(roce_icrc_check(ip, 20, false, small.data(), small.size()));
}

TEST_CASE("ICRC field byte order helpers", "[roce_icrc]")
{
	__u8 b[4];
	roce_icrc_put(b, 0x11223344U);
	CHECK(b[0] == 0x44);
	CHECK(b[1] == 0x33);
	CHECK(b[2] == 0x22);
	CHECK(b[3] == 0x11);
	CHECK(roce_icrc_get(b) == 0x11223344U);
}

TEST_CASE("IP masking touches only what is there", "[roce_icrc]")
{
	std::vector<__u8> v4(9, 0);
	roce_icrc_mask_l3(v4.data(), v4.size(), false);
	CHECK(v4 == std::vector<__u8>{0, 0xff, 0, 0, 0, 0, 0, 0, 0xff});
	std::vector<__u8> v6(8, 0x60);
	roce_icrc_mask_l3(v6.data(), 3, true);
	CHECK(v6 == std::vector<__u8>{0x6f, 0xff, 0xff, 0x60, 0x60, 0x60, 0x60, 0x60});
	std::vector<__u8> ub(13, 0);
	roce_icrc_mask_udp_bth(ub.data(), 7);
	CHECK(ub == std::vector<__u8>{0, 0, 0, 0, 0, 0, 0xff, 0, 0, 0, 0, 0, 0});
	// an IPv4 header with options: the options are covered, unmasked
	auto ip = hex("4602 0048 1234 4000 1111 abcd c0a80001 c0a80002 01010100");
	auto udp = hex("d00012b700305555 04000000 00000203 80000010");
	__u32 base = roce_icrc(ip.data(), 24, false, udp.data(), udp.size());
	ip[22] ^= 1;
	CHECK(roce_icrc(ip.data(), 24, false, udp.data(), udp.size()) != base);
}

TEST_CASE("Segment headers of a UDP GSO run", "[roce_icrc]")
{
	SECTION("IPv4: total length, Identification counting on and wrapping")
	{
		// the run: ID 0xfffe, total length and UDP length of the whole
		auto run_ip = hex("4500 3038 fffe 4000 4011 0000 0a000001 0a000002");
		auto run_udp = hex("c00012b7 3024 0000");
		const __u32 lens[] = {4124, 4124, 1040};
		const char *const want_ip[] = {
		    "4500 1038 fffe 4000 4011 0000 0a000001 0a000002",
		    "4500 1038 ffff 4000 4011 0000 0a000001 0a000002",
		    "4500 042c 0000 4000 4011 0000 0a000001 0a000002",
		};
		const char *const want_udp[] = {"c00012b7 1024 0000", "c00012b7 1024 0000",
						"c00012b7 0418 0000"};
		for (__u32 i = 0; i < 3; i++) {
			auto ip = run_ip, udp = run_udp;
			roce_icrc_seg_hdrs(run_ip.data(), ip.data(), false, udp.data(), i, lens[i]);
			CHECK(ip == hex(want_ip[i]));
			CHECK(udp == hex(want_udp[i]));
		}
	}
	SECTION("IPv6: payload length only")
	{
		auto run_ip = hex(v6_ip);
		run_ip[4] = 0x40; // payload length of a bigger run
		run_ip[5] = 0x00;
		auto ip = run_ip, udp = hex("c001 12b7 4000 beef");
		roce_icrc_seg_hdrs(run_ip.data(), ip.data(), true, udp.data(), 7, 48);
		CHECK(ip == hex(v6_ip));
		CHECK(udp == hex("c001 12b7 0038 beef"));
		// and so the segment's ICRC is the one of the packet sent alone
		auto pkt = hex(v6_udp);
		std::memcpy(pkt.data(), udp.data(), 8);
		CHECK(roce_icrc(ip.data(), 40, true, pkt.data(), pkt.size()) == v6_icrc);
	}
}
