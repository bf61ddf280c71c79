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

TEST_CASE("consumer fetch cursor must not pass the producer", "[ring]")
{
	const __u32 n = 8;
	__u32 cons = 0xfffffffeU;
	REQUIRE(sr_ring_sane_fetch(cons + 4, cons + 2, cons, n));
	REQUIRE(sr_ring_sane_fetch(cons + 4, cons + 4, cons, n));
	REQUIRE(sr_ring_sane_fetch(cons, cons, cons, n)); // empty
	// A producer that moved prod back below what we already fetched.
	REQUIRE_FALSE(sr_ring_sane_fetch(cons + 1, cons + 2, cons, n));
	REQUIRE_FALSE(sr_ring_sane_fetch(cons + 9, cons, cons, n));
	REQUIRE_FALSE(sr_ring_sane_fetch(cons - 1, cons, cons, n));
}

TEST_CASE("counter ranges on the 32-bit circle", "[ring]")
{
	REQUIRE(sr_counter_in(5, 5, 6));
	REQUIRE_FALSE(sr_counter_in(6, 5, 6));
	REQUIRE_FALSE(sr_counter_in(4, 5, 6));
	REQUIRE_FALSE(sr_counter_in(5, 5, 5)); // empty range
	REQUIRE(sr_counter_in(0, 0xfffffffeU, 2));
	REQUIRE(sr_counter_in(0xffffffffU, 0xfffffffeU, 2));
	REQUIRE_FALSE(sr_counter_in(2, 0xfffffffeU, 2));
	// A stale completion index far behind cons is outside.
	REQUIRE_FALSE(sr_counter_in(100, 200, 210));
}

TEST_CASE("CQ arm requests", "[ring][cq]")
{
	REQUIRE_FALSE(sr_cq_arm_hit(0, true, 0));
	REQUIRE(sr_cq_arm_hit(SOFTRNIC_CQ_ARM_NEXT, false, 0));
	REQUIRE(sr_cq_arm_hit(SOFTRNIC_CQ_ARM_NEXT | SOFTRNIC_CQ_ARM_SOLICITED,
			      false, 0));
	REQUIRE_FALSE(sr_cq_arm_hit(SOFTRNIC_CQ_ARM_SOLICITED, false, 0));
	REQUIRE(sr_cq_arm_hit(SOFTRNIC_CQ_ARM_SOLICITED, true, 0));
	// Error completions wake solicited-only waiters.
	REQUIRE(sr_cq_arm_hit(SOFTRNIC_CQ_ARM_SOLICITED, false, 5));
	// Garbage bits from the process do not arm anything.
	REQUIRE_FALSE(sr_cq_arm_hit(0xfffffffcU, true, 1));
}

TEST_CASE("SRQ limit fires below an armed limit only", "[ring][srq]")
{
	REQUIRE_FALSE(sr_srq_limit_hit(0, 0)); // disarmed
	REQUIRE_FALSE(sr_srq_limit_hit(10, 10));
	REQUIRE(sr_srq_limit_hit(9, 10));
	REQUIRE(sr_srq_limit_hit(0, 1));
}

TEST_CASE("send completion opcode classes", "[ring][cq]")
{
	REQUIRE(sr_wc_opcode_of_sqe(SOFTRNIC_WR_SEND) == SOFTRNIC_WC_SEND);
	REQUIRE(sr_wc_opcode_of_sqe(SOFTRNIC_WR_SEND_WITH_IMM) == SOFTRNIC_WC_SEND);
	REQUIRE(sr_wc_opcode_of_sqe(SOFTRNIC_WR_SEND_WITH_INV) == SOFTRNIC_WC_SEND);
	REQUIRE(sr_wc_opcode_of_sqe(SOFTRNIC_WR_RDMA_WRITE_WITH_IMM) ==
		SOFTRNIC_WC_RDMA_WRITE);
	REQUIRE(sr_wc_opcode_of_sqe(SOFTRNIC_WR_RDMA_READ) == SOFTRNIC_WC_RDMA_READ);
	REQUIRE(sr_wc_opcode_of_sqe(SOFTRNIC_WR_ATOMIC_CMP_AND_SWP) ==
		SOFTRNIC_WC_COMP_SWAP);
	REQUIRE(sr_wc_opcode_of_sqe(SOFTRNIC_WR_ATOMIC_FETCH_AND_ADD) ==
		SOFTRNIC_WC_FETCH_ADD);
	REQUIRE(sr_wc_opcode_of_sqe(SOFTRNIC_WR_LOCAL_INV) == SOFTRNIC_WC_LOCAL_INV);
	REQUIRE(sr_wc_opcode_of_sqe(SOFTRNIC_WR_BIND_MW) == SOFTRNIC_WC_BIND_MW);
	REQUIRE(sr_wc_opcode_of_sqe(SOFTRNIC_WR_FLUSH) == SOFTRNIC_WC_FLUSH);
	REQUIRE(sr_wc_opcode_of_sqe(SOFTRNIC_WR_ATOMIC_WRITE) ==
		SOFTRNIC_WC_ATOMIC_WRITE);
	REQUIRE(sr_wc_opcode_of_sqe(SOFTRNIC_WR_REG_MR) == SOFTRNIC_WC_REG_MR);
	REQUIRE(sr_wc_opcode_of_sqe(0x77) == SOFTRNIC_WC_SEND);
	REQUIRE(sr_sqe_is_local(SOFTRNIC_WR_LOCAL_INV));
	REQUIRE(sr_sqe_is_local(SOFTRNIC_WR_BIND_MW));
	REQUIRE(sr_sqe_is_local(SOFTRNIC_WR_REG_MR));
	REQUIRE_FALSE(sr_sqe_is_local(SOFTRNIC_WR_SEND));
}

TEST_CASE("ring geometry for requested capacities", "[ring]")
{
	REQUIRE(sr_ring_slots_for(0, 16) == 1);
	REQUIRE(sr_ring_slots_for(1, 16) == 1);
	REQUIRE(sr_ring_slots_for(5, 16) == 8);
	REQUIRE(sr_ring_slots_for(16, 16) == 16);
	REQUIRE(sr_ring_slots_for(17, 16) == 0);
	REQUIRE(sr_ring_slots_for(0xffffffffU, 0xffffffffU) == 0);

	// Reported caps never promise more than the slot holds or the limit.
	__u32 sq = sr_sq_slot_size(3, 0);
	REQUIRE(sr_slot_sge_cap(sq, sizeof(softrnic_sqe), 32) == 4);
	REQUIRE(sr_slot_inline_cap(sq, 512) == 64);
	REQUIRE(sr_slot_sge_cap(sr_sq_slot_size(32, 512), sizeof(softrnic_sqe),
				32) == 32);
	REQUIRE(sr_slot_inline_cap(sr_sq_slot_size(32, 512), 512) == 512);
	__u32 rq = sr_rq_slot_size(1);
	REQUIRE(sr_slot_sge_cap(rq, sizeof(softrnic_rqe), 32) == 3);
	for (__u32 sge = 0; sge <= 32; sge++) {
		for (__u32 inl = 0; inl <= 512; inl += 64) {
			__u32 s = sr_sq_slot_size(sge, inl);
			softrnic_sqe w{};
			w.opcode = SOFTRNIC_WR_SEND;
			w.num_sge = (__u16)sr_slot_sge_cap(s, sizeof(w), 32);
			sr_sq_limits lim{SR_QP_RC, w.num_sge,
					 sr_slot_inline_cap(s, 512), s};
			REQUIRE(w.num_sge >= sge);
			REQUIRE(sr_sqe_check(&w, &lim) == SR_WQE_OK);
			w.num_sge = 0;
			w.flags = SOFTRNIC_WQE_F_INLINE;
			w.rdma.inline_len = lim.max_inline;
			REQUIRE(lim.max_inline >= inl);
			REQUIRE(sr_sqe_check(&w, &lim) == SR_WQE_OK);
		}
	}
}

TEST_CASE("FLUSH WQE fields", "[ring][flush]")
{
	CHECK(sr_flush_wqe_valid(SOFTRNIC_FLUSH_GLOBAL, SOFTRNIC_FLUSH_RANGE, 0));
	CHECK(sr_flush_wqe_valid(SOFTRNIC_FLUSH_PERSISTENT, SOFTRNIC_FLUSH_MR, 4096));
	CHECK(sr_flush_wqe_valid(3, SOFTRNIC_FLUSH_RANGE, 0xffffffffULL));
	CHECK_FALSE(sr_flush_wqe_valid(0, SOFTRNIC_FLUSH_RANGE, 8));	 /* no type */
	CHECK_FALSE(sr_flush_wqe_valid(4, SOFTRNIC_FLUSH_RANGE, 8));	 /* unknown type bit */
	CHECK_FALSE(sr_flush_wqe_valid(0x83, SOFTRNIC_FLUSH_RANGE, 8));
	CHECK_FALSE(sr_flush_wqe_valid(1, 2, 8));			 /* unknown level */
	CHECK_FALSE(sr_flush_wqe_valid(1, 0xff, 8));
	CHECK_FALSE(sr_flush_wqe_valid(1, SOFTRNIC_FLUSH_RANGE, 0x100000000ULL)); /* RETH: 32 bits */
	CHECK_FALSE(sr_flush_wqe_valid(1, SOFTRNIC_FLUSH_MR, ~0ULL));
}
