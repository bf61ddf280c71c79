// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Ring index math and WQE validation (kernel/proto/ring.h).
#include <catch2/catch.hpp>
#include <cstring>

#include "ring.h"

TEST_CASE("ring counters wrap around 2^32", "[ring]")
{
	const __u32 n = 8;
	__u32 cons = 0xfffffffcU;
	__u32 prod = cons + 8; // wrapped
	REQUIRE(sr_ring_used(prod, cons) == 8);
	REQUIRE(sr_ring_sane(prod, cons, n));
	REQUIRE(sr_ring_free(prod, cons, n) == 0);
	REQUIRE(sr_ring_slot(prod, n) == 4);
	REQUIRE_FALSE(sr_ring_sane(prod + 1, cons, n));
	// A consumer "ahead" of the producer is hostile, not empty.
	REQUIRE_FALSE(sr_ring_sane(cons - 1, cons, n));
}

TEST_CASE("slot offsets stay inside the ring", "[ring]")
{
	const __u32 n = 16, sz = 128;
	for (__u32 c = 0xfffffff0U; c != 0x20; c++) {
		size_t off = sr_slot_offset(c, n, sz);
		REQUIRE(off >= SOFTRNIC_RING_CTRL_SIZE);
		REQUIRE(off + sz <= sr_ring_bytes(n, sz));
	}
}

TEST_CASE("power-of-two rounding", "[ring]")
{
	REQUIRE(sr_roundup_pow2(1) == 1);
	REQUIRE(sr_roundup_pow2(3) == 4);
	REQUIRE(sr_roundup_pow2(4096) == 4096);
	REQUIRE(sr_roundup_pow2(0x80000001U) == 0);
	REQUIRE(sr_is_pow2(64));
	REQUIRE_FALSE(sr_is_pow2(0));
	REQUIRE_FALSE(sr_is_pow2(96));
}

TEST_CASE("slot sizes fit the largest WQE", "[ring]")
{
	REQUIRE(sr_sq_slot_size(1, 0) == 128);
	REQUIRE(sr_sq_slot_size(32, 0) == 64 + 32 * 16);
	REQUIRE(sr_sq_slot_size(1, 512) == 64 + 512);
	REQUIRE(sr_sq_slot_size(3, 0) % SOFTRNIC_SLOT_ALIGN == 0);
	REQUIRE(sr_rq_slot_size(1) == 64);
	REQUIRE(sr_rq_slot_size(32) == 16 + 32 * 16 + 48);
}

static softrnic_sqe make_sqe(__u8 op, __u16 nsge)
{
	softrnic_sqe w;
	std::memset(&w, 0, sizeof(w));
	w.opcode = op;
	w.num_sge = nsge;
	return w;
}

TEST_CASE("send WQE validation rejects corrupted entries", "[ring]")
{
	sr_sq_limits rc{SR_QP_RC, 4, 64, sr_sq_slot_size(4, 64)};
	sr_sq_limits ud{SR_QP_UD, 4, 64, sr_sq_slot_size(4, 64)};

	auto ok = make_sqe(SOFTRNIC_WR_RDMA_WRITE, 4);
	REQUIRE(sr_sqe_check(&ok, &rc) == SR_WQE_OK);

	auto many = make_sqe(SOFTRNIC_WR_SEND, 5);
	REQUIRE(sr_sqe_check(&many, &rc) == SR_WQE_TOO_MANY_SGE);
	many.num_sge = 0xffff;
	REQUIRE(sr_sqe_check(&many, &rc) == SR_WQE_TOO_MANY_SGE);

	auto bad = make_sqe(0x77, 0);
	REQUIRE(sr_sqe_check(&bad, &rc) == SR_WQE_BAD_OPCODE);
	auto reg = make_sqe(SOFTRNIC_WR_REG_MR, 0);
	REQUIRE(sr_sqe_check(&reg, &rc) == SR_WQE_BAD_OPCODE);

	auto flags = make_sqe(SOFTRNIC_WR_SEND, 1);
	flags.flags = 0x80;
	REQUIRE(sr_sqe_check(&flags, &rc) == SR_WQE_BAD_FLAGS);

	auto rd_on_ud = make_sqe(SOFTRNIC_WR_RDMA_READ, 1);
	REQUIRE(sr_sqe_check(&rd_on_ud, &ud) == SR_WQE_BAD_OPCODE);

	auto inl = make_sqe(SOFTRNIC_WR_SEND, 0);
	inl.flags = SOFTRNIC_WQE_F_INLINE;
	inl.rdma.inline_len = 64;
	REQUIRE(sr_sqe_check(&inl, &rc) == SR_WQE_OK);
	inl.rdma.inline_len = 65;
	REQUIRE(sr_sqe_check(&inl, &rc) == SR_WQE_INLINE_TOO_LONG);
	inl.rdma.inline_len = 0xffffffffU;
	REQUIRE(sr_sqe_check(&inl, &rc) == SR_WQE_INLINE_TOO_LONG);

	auto inl_read = make_sqe(SOFTRNIC_WR_RDMA_READ, 0);
	inl_read.flags = SOFTRNIC_WQE_F_INLINE;
	REQUIRE(sr_sqe_check(&inl_read, &rc) == SR_WQE_OPCODE_NOT_FOR_QP);
}

TEST_CASE("receive WQE validation", "[ring]")
{
	softrnic_rqe r{};
	r.num_sge = 2;
	REQUIRE(sr_rqe_check(&r, 2, sr_rq_slot_size(2)) == SR_WQE_OK);
	r.num_sge = 3;
	REQUIRE(sr_rqe_check(&r, 2, sr_rq_slot_size(2)) == SR_WQE_TOO_MANY_SGE);
	// A slot too small for max_sge is caught even if max_sge says yes.
	REQUIRE(sr_rqe_check(&r, 8, 64) == SR_WQE_OK);
	r.num_sge = 4;
	REQUIRE(sr_rqe_check(&r, 8, 64) == SR_WQE_TOO_MANY_SGE);
}

TEST_CASE("SGE totals never wrap", "[ring]")
{
	softrnic_sge s[3] = {{0, 0xffffffffU, 1}, {0, 0xffffffffU, 1}, {0, 2, 1}};
	REQUIRE(sr_sge_total(s, 2, 1ULL << 40) == 0x1fffffffeULL);
	REQUIRE(sr_sge_total(s, 3, 0x1ffffffffULL) == ~0ULL);
	REQUIRE(sr_sge_total(s, 0, 0) == 0);
}
