// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Helpers of the wire-format unit tests: byte strings written as hex, and
// a textbook bitwise reflected CRC (preset ~0, final ~) to check the
// table-driven CRCs of kernel/proto against, written independently of them.
#ifndef SOFTRNIC_TESTS_UNIT_WIRE_BYTES_H
#define SOFTRNIC_TESTS_UNIT_WIRE_BYTES_H

#include <cstdint>
#include <vector>

namespace wire_bytes
{

// "0a 1b\n2c" -> {0x0a, 0x1b, 0x2c}; spaces and newlines are skipped.
inline std::vector<uint8_t> hex(const char *s)
{
	std::vector<uint8_t> v;
	auto nib = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
	while (*s) {
		if (*s == ' ' || *s == '\n') {
			s++;
			continue;
		}
		v.push_back(uint8_t(nib(s[0]) << 4 | nib(s[1])));
		s += 2;
	}
	return v;
}

// Bitwise CRC-32 with the reflected polynomial @poly: 0xedb88320 is the
// Ethernet/zlib CRC-32, 0x82f63b78 the Castagnoli CRC32c.
inline uint32_t ref_crc_reflected(uint32_t poly, const std::vector<uint8_t> &b)
{
	uint32_t c = 0xffffffffU;
	for (uint8_t x : b) {
		c ^= x;
		for (int i = 0; i < 8; i++)
			c = (c & 1) ? (c >> 1) ^ poly : c >> 1;
	}
	return ~c;
}

} // namespace wire_bytes

#endif
