// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// libFuzzer target for the iWARP receive path in kernel/proto: the MPA
// stream receiver (iwarp_mpa_rx.h) and the DDP/RDMAP parser
// (iwarp_parse.h).  Input: one flags byte (bit 0 CRC, 1 markers, 2 the
// caller folds data into the CRC, 3 RFC 7306 negotiated), one seed byte
// for the splits, then the TCP byte stream after the MPA Reply.
//
// The stream is fed whole, byte by byte, and in pseudo-random pieces; all
// three must give the same FPDUs and stop with the same error at the same
// byte.  With flags bit 4 the rest of the input is not a stream but ULPDUs
// (2-byte length, bytes) that the encoder frames into one: the receiver
// must then take every one of them back, unchanged.  Every FPDU must
// account for exactly its wire bytes, re-framing its ULPDU must give them
// back, and every segment the parser accepts must re-encode to its header
// bytes up to the reserved bits.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "fuzz_assert.h"
#include "iwarp_atomic.h"
#include "iwarp_mpa_rx.h"
#include "iwarp_parse.h"

namespace
{

struct Fpdu {
	std::vector<uint8_t> hdr, ulpdu;
	uint64_t start, end; // wire offsets in the stream
	bool operator==(const Fpdu &o) const
	{
		return hdr == o.hdr && ulpdu == o.ulpdu && start == o.start && end == o.end;
	}
};

struct Run {
	std::vector<Fpdu> fpdus;
	int err = 0;
	uint64_t err_pos = 0;
	bool operator==(const Run &o) const
	{
		return fpdus == o.fpdus && err == o.err && err_pos == o.err_pos;
	}
};

struct Config {
	bool crc, markers, caller_crc, ext;
};

// Feed @s in pieces whose lengths come from @next_piece().
template <typename F> Run feed(const Config &c, const uint8_t *s, size_t n, F next_piece)
{
	mpa_rx rx;
	mpa_rx_init(&rx, c.crc, c.markers, MPA_MAX_ULPDU);
	rx.caller_crcs_data = c.caller_crc;
	Run r;
	Fpdu cur{};
	size_t from = 0;
	while (from < n) {
		size_t piece = next_piece();
		if (piece > n - from)
			piece = n - from;
		// copy the piece so that reading past it is an ASan error
		std::vector<uint8_t> chunk(s + from, s + from + piece);
		size_t at = 0;
		while (at < chunk.size()) {
			size_t used;
			mpa_rx_ev ev;
			uint64_t before = rx.pos;
			int rc = mpa_rx_next(&rx, chunk.data() + at, chunk.size() - at, &used, &ev);
			FUZZ_ASSERT(used <= chunk.size() - at);
			FUZZ_ASSERT(rx.pos == before + used);
			at += used;
			if (rc < 0) {
				FUZZ_ASSERT(rc > -MPA_FPDU_NR_REASONS);
				// the error is sticky and takes nothing more
				size_t again;
				FUZZ_ASSERT(mpa_rx_next(&rx, chunk.data(), chunk.size(), &again,
							&ev) == rc);
				FUZZ_ASSERT(again == 0);
				r.err = rc;
				r.err_pos = rx.pos;
				return r;
			}
			switch (rc) {
			case MPA_RX_HDR:
				FUZZ_ASSERT(rx.hdr_len <= IW_MAX_HDR_LEN);
				FUZZ_ASSERT(rx.hdr_len <= ev.ulpdu_len);
				cur.hdr.assign(rx.hdr, rx.hdr + rx.hdr_len);
				cur.ulpdu = cur.hdr;
				cur.start = rx.fpdu_start;
				break;
			case MPA_RX_DATA:
				FUZZ_ASSERT(ev.len > 0 && ev.off == cur.ulpdu.size());
				FUZZ_ASSERT(ev.data >= chunk.data() &&
					    ev.data + ev.len <= chunk.data() + chunk.size());
				if (c.caller_crc)
					mpa_rx_crc_data(&rx, ev.data, ev.len);
				cur.ulpdu.insert(cur.ulpdu.end(), ev.data, ev.data + ev.len);
				break;
			case MPA_RX_FPDU:
				FUZZ_ASSERT(cur.ulpdu.size() == ev.ulpdu_len);
				cur.end = rx.pos;
				r.fpdus.push_back(cur);
				cur = Fpdu{};
				break;
			default:
				FUZZ_ASSERT(rc == MPA_RX_MORE && at == chunk.size());
			}
		}
		from += piece;
	}
	return r;
}

// The FPDU's wire bytes without its markers.
std::vector<uint8_t> strip_markers(const uint8_t *s, const Fpdu &f, bool markers)
{
	std::vector<uint8_t> out;
	for (uint64_t p = f.start; p < f.end;) {
		if (markers && mpa_is_marker_pos(p)) {
			p += MPA_MARKER_LEN;
			continue;
		}
		out.push_back(s[p++]);
	}
	return out;
}

void check_fpdu(const Config &c, const uint8_t *s, const Fpdu &f)
{
	__u32 ulen = __u32(f.ulpdu.size());
	FUZZ_ASSERT(ulen >= IW_TAGGED_HDR_LEN && ulen <= MPA_MAX_ULPDU);
	FUZZ_ASSERT(f.end - f.start == mpa_fpdu_wire_len(f.start, ulen, c.markers));
	__u32 want_hdr = iw_hdr_len_of(f.ulpdu[0], f.ulpdu[1]);
	FUZZ_ASSERT(f.hdr.size() == (want_hdr < ulen ? want_hdr : ulen));
	FUZZ_ASSERT(std::memcmp(f.hdr.data(), f.ulpdu.data(), f.hdr.size()) == 0);

	// the marker-free FPDU is a well-formed linear FPDU with this ULPDU
	std::vector<uint8_t> lin = strip_markers(s, f, c.markers);
	FUZZ_ASSERT(lin.size() == mpa_fpdu_len(ulen));
	FUZZ_ASSERT(mpa_fpdu_check(lin.data(), lin.size(), false, MPA_MAX_ULPDU) == int(ulen));
	FUZZ_ASSERT(std::memcmp(lin.data() + MPA_LEN_FIELD, f.ulpdu.data(), ulen) == 0);
	if (c.crc && !c.markers)
		FUZZ_ASSERT(mpa_fpdu_check(lin.data(), lin.size(), true, MPA_MAX_ULPDU) ==
			    int(ulen));

	// re-framing gives the wire bytes back (pad as sent, CRC if on)
	std::vector<uint8_t> again(lin.size());
	std::memcpy(again.data() + MPA_LEN_FIELD, f.ulpdu.data(), ulen);
	FUZZ_ASSERT(mpa_fpdu_frame(again.data(), ulen, c.crc) == lin.size());
	__u32 pad = mpa_pad_len(ulen);
	bool zero_pad = true;
	for (__u32 i = 0; i < pad; i++)
		zero_pad &= lin[MPA_LEN_FIELD + ulen + i] == 0;
	if (!zero_pad)
		return;
	std::vector<uint8_t> wire(f.end - f.start);
	if (c.markers) {
		if (mpa_fpdu_add_markers(wire.data(), again.data(), __u32(again.size()), f.start,
					 c.crc) == 0)
			return; // a marker beyond FPDUPTR's reach: the receiver refused those
	} else {
		wire = again;
	}
	size_t cmp = c.crc ? wire.size() : wire.size() - IW_CRC32C_LEN;
	FUZZ_ASSERT(std::memcmp(wire.data(), s + f.start, cmp) == 0);
}

// Clear what iw_build_hdrs() writes as zero, so a copy of the input's
// header compares with a re-encoded one.
void clear_reserved(std::vector<uint8_t> &h, const iw_pkt &p)
{
	h[0] &= uint8_t(~IW_DDP_RSVD_MASK);
	h[1] &= uint8_t(~IW_RDMAP_RSVD_MASK);
	if (p.opcode == IW_OP_ATOMIC_REQ) {
		h[IW_UNTAGGED_HDR_LEN] = h[IW_UNTAGGED_HDR_LEN + 1] = h[IW_UNTAGGED_HDR_LEN + 2] =
		    0;
		h[IW_UNTAGGED_HDR_LEN + 3] &= IW_ATOMIC_OP_MASK;
	}
}

void check_segment(const Config &c, const Fpdu &f)
{
	iw_pkt p;
	__u32 ulen = __u32(f.ulpdu.size());
	int rc = iw_parse(f.hdr.data(), f.hdr.size(), ulen, c.ext, &p);
	FUZZ_ASSERT(rc <= 0 && rc > -IW_PARSE_NR_REASONS);
	// the whole ULPDU parses the same as the header capture
	iw_pkt whole;
	FUZZ_ASSERT(iw_parse(f.ulpdu.data(), ulen, ulen, c.ext, &whole) == rc);
	if (rc != IW_PARSE_OK) {
		__u8 l, e, code;
		iw_parse_err_term(rc, f.hdr.data(), f.hdr.size(), &l, &e, &code);
		FUZZ_ASSERT(l <= IW_LAYER_LLP && e <= 0xf);
		iw_pkt t{};
		t.opcode = IW_OP_TERMINATE;
		iw_term_report(&t.term, l, e, code, f.hdr.data(), f.hdr.size(), ulen);
		std::vector<uint8_t> tb(IW_MAX_HDR_LEN);
		__u32 tl = iw_build_hdrs(tb.data(), &t);
		FUZZ_ASSERT(tl >= 22 && tl <= IW_MAX_HDR_LEN);
		iw_pkt tp;
		FUZZ_ASSERT(iw_parse(tb.data(), tl, tl, false, &tp) == IW_PARSE_OK);
		FUZZ_ASSERT(tp.term.layer == l && tp.term.etype == e && tp.term.ecode == code);
		FUZZ_ASSERT(tp.term.ddp_hdr_len == t.term.ddp_hdr_len);
		return;
	}
	FUZZ_ASSERT(p.info == iw_opcode_lookup(p.opcode));
	FUZZ_ASSERT(p.hdr_len <= f.hdr.size() && p.hdr_len + p.payload_len == ulen);
	FUZZ_ASSERT(p.payload_len == 0 || (p.info->flags & IW_OPF_PAYLOAD));
	FUZZ_ASSERT(!(p.info->flags & IW_OPF_CONTROL) || (p.last && p.mo == 0));

	std::vector<uint8_t> again(IW_MAX_HDR_LEN);
	__u32 hl = iw_build_hdrs(again.data(), &p);
	iw_pkt p2;
	FUZZ_ASSERT(iw_parse(again.data(), hl, hl + p.payload_len, c.ext, &p2) == IW_PARSE_OK);
	FUZZ_ASSERT(
	    p2.opcode == p.opcode && p2.stag == p.stag && p2.to == p.to && p2.msn == p.msn &&
	    p2.mo == p.mo && p2.rsvd_ulp == p.rsvd_ulp && p2.rreq.size == p.rreq.size &&
	    p2.atomic.compare == p.atomic.compare && p2.atomic_resp.orig == p.atomic_resp.orig &&
	    std::memcmp(p2.imm, p.imm, IW_IMM_LEN) == 0 && p2.term.ecode == p.term.ecode &&
	    p2.term.ddp_hdr_len == p.term.ddp_hdr_len && p2.term.has_rreq == p.term.has_rreq);
	if (p.opcode != IW_OP_TERMINATE) {
		FUZZ_ASSERT(hl == p.hdr_len);
		std::vector<uint8_t> orig(f.hdr.begin(), f.hdr.begin() + hl);
		again.resize(hl);
		clear_reserved(orig, p);
		FUZZ_ASSERT(orig == again);
	}
	if (p.opcode == IW_OP_ATOMIC_REQ) {
		__u64 v = iw_atomic_result(p.atomic.op, p.atomic.to, p.atomic.add_swap,
					   p.atomic.add_swap_mask, p.atomic.compare,
					   p.atomic.compare_mask);
		if (p.atomic.op == IW_ATOMIC_MASKED_CMP_SWAP)
			FUZZ_ASSERT(((v ^ p.atomic.to) & ~p.atomic.add_swap_mask) == 0);
	}
}

// Frame the ULPDUs described by @s (length, bytes; lengths raised to a
// DDP header) into a stream with the encoder, feed it, get them all back.
void check_encoder(const Config &c, const uint8_t *s, size_t n, uint32_t seed)
{
	std::vector<std::vector<uint8_t>> ulpdus;
	std::vector<uint8_t> stream;
	size_t at = 0;
	while (at + 2 <= n && ulpdus.size() < 64) {
		size_t len = (size_t(s[at]) << 8 | s[at + 1]) % 2048;
		at += 2;
		if (len < IW_TAGGED_HDR_LEN)
			len = IW_TAGGED_HDR_LEN;
		std::vector<uint8_t> u(len);
		for (size_t i = 0; i < len; i++)
			u[i] = at < n ? s[at++] : uint8_t(i);
		std::vector<uint8_t> f(mpa_fpdu_len(__u32(len)));
		std::memcpy(f.data() + MPA_LEN_FIELD, u.data(), len);
		FUZZ_ASSERT(mpa_fpdu_frame(f.data(), __u32(len), c.crc) == f.size());
		if (c.markers) {
			std::vector<uint8_t> w(f.size() +
					       MPA_MARKER_LEN *
						   mpa_markers_in(stream.size(), __u32(f.size())));
			FUZZ_ASSERT(mpa_fpdu_add_markers(w.data(), f.data(), __u32(f.size()),
							 stream.size(), c.crc) == w.size());
			f = w;
		}
		stream.insert(stream.end(), f.begin(), f.end());
		ulpdus.push_back(u);
	}
	Run r = feed(c, stream.data(), stream.size(), [&] {
		seed = seed * 1103515245U + 12345U;
		return size_t(1 + (seed >> 16) % 600);
	});
	FUZZ_ASSERT(r.err == 0 && r.fpdus.size() == ulpdus.size());
	for (size_t i = 0; i < ulpdus.size(); i++)
		FUZZ_ASSERT(r.fpdus[i].ulpdu == ulpdus[i]);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	Config c{bool(data[0] & 1), bool(data[0] & 2), bool(data[0] & 4), bool(data[0] & 8)};
	uint32_t seed = data[1] * 2654435761U + 1;
	const uint8_t *s = data + 2;
	size_t n = size - 2;

	if (data[0] & 0x10) {
		check_encoder(c, s, n, seed);
		return 0;
	}
	Run whole = feed(c, s, n, [&] { return n ? n : 1; });
	Run bytes = feed(c, s, n, [] { return size_t(1); });
	Run rnd = feed(c, s, n, [&] {
		seed = seed * 1103515245U + 12345U;
		return size_t(1 + (seed >> 16) % 97);
	});
	FUZZ_ASSERT(whole == bytes);
	FUZZ_ASSERT(whole == rnd);
	FUZZ_ASSERT(whole.err_pos <= n);

	uint64_t expect = 0;
	for (const Fpdu &f : whole.fpdus) {
		FUZZ_ASSERT(f.start == expect);
		expect = f.end;
		check_fpdu(c, s, f);
		check_segment(c, f);
	}
	FUZZ_ASSERT(whole.err ? whole.err_pos >= expect : true);
	return 0;
}
