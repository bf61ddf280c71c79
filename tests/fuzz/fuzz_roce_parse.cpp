// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// libFuzzer target for the RoCEv2 parser (kernel/proto/roce_parse.h).
// The input is what softrnic.ko hands roce_parse(): the bytes from the
// BTH to the end of the UDP payload.  Besides "no crash, no out-of-bounds
// read, no UB", every accepted packet must satisfy the parser's promises:
// the lengths add up, the opcode is in the table, re-encoding the decoded
// fields gives back the input headers (up to the bits the encoder writes
// as zero), and the ICRC of the packet round-trips.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fuzz_assert.h"
#include "roce_icrc.h"
#include "roce_parse.h"
#include "roce_psn.h"

namespace
{

// Clear the bits roce_build_hdrs() always writes as zero (reserved
// fields), so a header copy can be compared with a re-encoded one.
void clear_reserved(std::vector<uint8_t> &h, const roce_opcode_desc *desc)
{
	h[4] &= 0xc0; // BTH resv6
	h[8] &= 0x80; // BTH resv7
	size_t off = ROCE_BTH_LEN;
	for (unsigned i = 0; i < ROCE_MAX_EXT && desc->ext[i] != ROCE_EXT_NONE; i++) {
		roce_ext ext = roce_ext(desc->ext[i]);
		if (ext == ROCE_EXT_DETH)
			h[off + 4] = 0; // resv8
		if (ext == ROCE_EXT_FETH) {
			h[off] = h[off + 1] = h[off + 2] = 0;
			h[off + 3] &= 0x3f;
		}
		if (ext == ROCE_EXT_CNP_RSVD)
			std::memset(&h[off], 0, ROCE_CNP_RSVD_LEN);
		off += roce_ext_len(ext);
	}
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	roce_pkt pkt;
	int rc = roce_parse(data, size, &pkt);

	FUZZ_ASSERT(rc <= 0 && rc > -ROCE_PARSE_NR_REASONS);
	if (rc != ROCE_PARSE_OK) {
		FUZZ_ASSERT(pkt.info == nullptr || roce_opcode_lookup(pkt.opcode) == pkt.info);
		return 0;
	}

	const roce_opcode_desc *desc = roce_opcode_lookup(data[0]);
	FUZZ_ASSERT(desc && pkt.info == desc && pkt.opcode == data[0]);
	FUZZ_ASSERT(pkt.payload_off == roce_opcode_hdr_len(desc));
	FUZZ_ASSERT(size_t(pkt.payload_off) + pkt.payload_len + pkt.pad + ROCE_ICRC_LEN == size);
	FUZZ_ASSERT(size % 4 == 0 && size <= ROCE_MAX_LEN);
	FUZZ_ASSERT(pkt.pad == 0 ||
		    ((desc->flags & ROCE_OPF_LAST) && (desc->flags & ROCE_OPF_PAYLOAD)));
	FUZZ_ASSERT(pkt.payload_len == 0 || (desc->flags & ROCE_OPF_PAYLOAD));
	FUZZ_ASSERT(pkt.dest_qpn <= ROCE_QPN_MASK && pkt.psn <= ROCE_PSN_MASK);
	FUZZ_ASSERT(pkt.aeth.msn <= ROCE_MSN_MASK && pkt.deth.src_qpn <= ROCE_QPN_MASK);
	// lengths are multiples of 4, so the pad is always the minimal one
	FUZZ_ASSERT(pkt.pad == roce_pad_len(pkt.payload_len));
	FUZZ_ASSERT(roce_pkt_len(pkt.opcode, pkt.payload_len) == size);

	// Re-encode and compare with the input's headers.
	std::vector<uint8_t> again(ROCE_MAX_HDR_LEN);
	size_t hl = roce_build_hdrs(again.data(), &pkt);
	FUZZ_ASSERT(hl == pkt.payload_off);
	std::vector<uint8_t> orig(data, data + hl);
	again.resize(hl);
	clear_reserved(orig, desc);
	FUZZ_ASSERT(orig == again);

	// A re-parse of the re-encoded packet decodes the same fields.
	std::vector<uint8_t> copy(data, data + size);
	std::memcpy(copy.data(), again.data(), hl);
	roce_pkt pkt2;
	FUZZ_ASSERT(roce_parse(copy.data(), copy.size(), &pkt2) == ROCE_PARSE_OK);
	FUZZ_ASSERT(pkt2.psn == pkt.psn && pkt2.payload_len == pkt.payload_len &&
		    pkt2.reth.va == pkt.reth.va && pkt2.atomic.compare == pkt.atomic.compare &&
		    pkt2.imm == pkt.imm && pkt2.deth.qkey == pkt.deth.qkey);

	// The ICRC over a synthetic IPv4/UDP header round-trips, and any
	// flipped payload bit is caught.
	const uint8_t ip[20] = {0x45, 0x00, 0x00, 0x00, 0x00, 0x01, 0x40, 0x00, 0x40, 0x11,
				0x00, 0x00, 10,	  0,	0,    1,    10,	  0,	0,    2};
	std::vector<uint8_t> udp(8 + size);
	udp[0] = 0xc0;
	udp[2] = ROCE_UDP_DPORT >> 8;
	udp[3] = ROCE_UDP_DPORT & 0xff;
	udp[4] = uint8_t(udp.size() >> 8);
	udp[5] = uint8_t(udp.size());
	std::memcpy(&udp[8], data, size);
	FUZZ_ASSERT(roce_icrc_fill(ip, sizeof(ip), false, udp.data(), udp.size()));
	FUZZ_ASSERT(roce_icrc_check(ip, sizeof(ip), false, udp.data(), udp.size()));
	if (pkt.payload_len) {
		udp[8 + pkt.payload_off] ^= 0x01;
		FUZZ_ASSERT(!roce_icrc_check(ip, sizeof(ip), false, udp.data(), udp.size()));
	}

	// PSN arithmetic on fuzzed values stays in range and is consistent.
	__u32 next = roce_psn_add(pkt.psn, pkt.payload_len);
	FUZZ_ASSERT(next <= ROCE_PSN_MASK);
	FUZZ_ASSERT(roce_psn_sub(next, pkt.psn) == (pkt.payload_len & ROCE_PSN_MASK));
	__s32 d = roce_psn_diff(next, pkt.psn);
	FUZZ_ASSERT(d >= -0x800000 && d < 0x800000);
	FUZZ_ASSERT(roce_psn_add(pkt.psn, __u32(d)) == next);
	return 0;
}
