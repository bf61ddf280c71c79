// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// CRC32c (kernel/proto/iwarp_crc32c.h) against the RFC 3720 appendix B.4
// vectors, the catalogue check value, a bitwise reference written here,
// and chunked updates.
#include <catch2/catch.hpp>
#include <cstring>
#include <numeric>
#include <vector>

#include "iwarp_crc32c.h"
#include "wire_bytes.h"

namespace
{

// Bitwise CRC32c, independent of the header's table.
__u32 ref_crc32c(const std::vector<__u8> &b)
{
	return wire_bytes::ref_crc_reflected(0x82f63b78U, b);
}

std::vector<__u8> bytes_of(__u32 crc)
{
	std::vector<__u8> v(4);
	iw_crc32c_put(v.data(), crc);
	return v;
}

} // namespace

TEST_CASE("CRC32c matches RFC 3720 B.4", "[iwarp_crc32c]")
{
	std::vector<__u8> zeros(32, 0), ones(32, 0xff), inc(32), dec(32);
	std::iota(inc.begin(), inc.end(), __u8(0));
	for (int i = 0; i < 32; i++)
		dec[i] = __u8(31 - i);
	// the RFC lists the digest bytes as they go on the wire
	CHECK(bytes_of(iw_crc32c(zeros.data(), 32)) == std::vector<__u8>{0xaa, 0x36, 0x91, 0x8a});
	CHECK(bytes_of(iw_crc32c(ones.data(), 32)) == std::vector<__u8>{0x43, 0xab, 0xa8, 0x62});
	CHECK(bytes_of(iw_crc32c(inc.data(), 32)) == std::vector<__u8>{0x4e, 0x79, 0xdd, 0x46});
	CHECK(bytes_of(iw_crc32c(dec.data(), 32)) == std::vector<__u8>{0x5c, 0xdb, 0x3f, 0x11});

	// iSCSI SCSI Read (10) command PDU of B.4
	const __u8 pdu[48] = {0x01, 0xc0, 0, 0, 0, 0, 0,    0, 0, 0, 0, 0,    0, 0, 0, 0,
			      0x14, 0,	  0, 0, 0, 0, 0x04, 0, 0, 0, 0, 0x14, 0, 0, 0, 0x18,
			      0x28, 0,	  0, 0, 0, 0, 0,    0, 2, 0, 0, 0,    0, 0, 0, 0};
	CHECK(iw_crc32c(pdu, sizeof(pdu)) == 0xd9963a56U);
	CHECK(iw_crc32c_get(bytes_of(0xd9963a56U).data()) == 0xd9963a56U);
}

TEST_CASE("CRC32c check value and empty input", "[iwarp_crc32c]")
{
	CHECK(iw_crc32c("123456789", 9) == 0xe3069283U);
	CHECK(iw_crc32c("", 0) == 0);
}

TEST_CASE("CRC32c table equals the bitwise definition", "[iwarp_crc32c]")
{
	std::vector<__u8> b;
	__u32 x = 1;
	for (int len = 0; len < 600; len++) {
		CHECK(iw_crc32c(b.data(), b.size()) == ref_crc32c(b));
		x = x * 1103515245U + 12345U;
		b.push_back(__u8(x >> 16));
	}
}

TEST_CASE("CRC32c over chunks equals one pass", "[iwarp_crc32c]")
{
	std::vector<__u8> b(1000);
	for (size_t i = 0; i < b.size(); i++)
		b[i] = __u8(i * 7 + 3);
	__u32 whole = iw_crc32c(b.data(), b.size());
	for (size_t cut1 = 0; cut1 <= b.size(); cut1 += 37) {
		for (size_t cut2 = cut1; cut2 <= b.size(); cut2 += 101) {
			__u32 c = iw_crc32c_begin();
			c = iw_crc32c_update(c, b.data(), cut1);
			c = iw_crc32c_update(c, b.data() + cut1, cut2 - cut1);
			c = iw_crc32c_update(c, b.data() + cut2, b.size() - cut2);
			CHECK(iw_crc32c_final(c) == whole);
		}
	}
}
