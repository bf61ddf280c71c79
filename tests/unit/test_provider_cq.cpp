// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues (userspace/provider/cq.h): CQEs the test writes into a
 * ring the way softrnic.ko produces them, read back through ibv_poll_cq's
 * ibv_wc and through the ibv_cq_ex poll API; the arm flag; the overflow
 * (error) state.  No context and no fd: any system call would crash, which
 * is the point.
 */
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "../../userspace/provider/ring.h"
#include "cq.h"

using namespace softrnic;

namespace
{

/* A CQ object over a ring in plain memory, and the kernel's side of it. */
struct fake_cq {
	uint32_t num_slots;
	void *mem;
	std::unique_ptr<cq> obj;
	uint32_t prod = 0;

	explicit fake_cq(uint32_t n = 8, uint64_t wc_flags = cq_supported_wc_flags) : num_slots(n)
	{
		mem = std::aligned_alloc(4096, 4096 * 4);
		std::memset(mem, 0, 4096 * 4);
		obj = cq::make();
		obj->attach(ring(mem, n, 64), 3, wc_flags);
	}
	~fake_cq() { std::free(mem); }
	softrnic_ring_ctrl *ctrl() const { return static_cast<softrnic_ring_ctrl *>(mem); }
	ibv_cq *ibcq() { return obj->cq_ptr(); }
	ibv_cq_ex *cqx() { return obj->cq_ex_ptr(); }

	/* what softrnic_cq_post() does: slot, then prod (release) */
	void produce(const softrnic_cqe &e)
	{
		ring r(mem, num_slots, 64);
		std::memcpy(r.slot(prod), &e, sizeof(e));
		r.store_prod(++prod);
	}
};

softrnic_cqe make_cqe(uint64_t wr_id, uint8_t opcode, uint8_t status = IBV_WC_SUCCESS)
{
	softrnic_cqe e{};
	e.wr_id = wr_id;
	e.opcode = opcode;
	e.status = status;
	e.byte_len = static_cast<uint32_t>(wr_id * 10);
	e.qp_num = 0x42;
	return e;
}

} // namespace

TEST_CASE("CQ: a CQE as an ibv_wc", "[provider][cq]")
{
	softrnic_cqe e{};
	e.wr_id = 0x1122334455667788ULL;
	e.status = IBV_WC_SUCCESS;
	e.opcode = SOFTRNIC_WC_RECV_RDMA_WITH_IMM;
	e.wc_flags = SOFTRNIC_WC_F_WITH_IMM | SOFTRNIC_WC_F_GRH | 0x8000; /* + unknown bit */
	e.byte_len = 4096;
	e.ex = htobe32(0xcafe);
	e.qp_num = 17;
	e.src_qp = 0x123456;
	e.pkey_index = 0;
	e.sl = 3;
	e.vendor_err = 0;
	ibv_wc wc;
	std::memset(&wc, 0xa5, sizeof(wc));
	cqe_to_wc(e, wc);
	CHECK(wc.wr_id == 0x1122334455667788ULL);
	CHECK(wc.status == IBV_WC_SUCCESS);
	CHECK(wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM);
	CHECK(wc.wc_flags == (IBV_WC_WITH_IMM | IBV_WC_GRH));
	CHECK(wc.byte_len == 4096);
	CHECK(wc.imm_data == htobe32(0xcafe));
	CHECK(wc.qp_num == 17);
	CHECK(wc.src_qp == 0x123456);
	CHECK(wc.pkey_index == 0);
	CHECK(wc.slid == 0);
	CHECK(wc.sl == 3);
	CHECK(wc.dlid_path_bits == 0);
	CHECK(wc.vendor_err == 0);

	/* SEND_WITH_INV received: the invalidated rkey, host order */
	e.opcode = SOFTRNIC_WC_RECV;
	e.wc_flags = SOFTRNIC_WC_F_WITH_INV;
	e.ex = 0xabc123;
	cqe_to_wc(e, wc);
	CHECK(wc.wc_flags == IBV_WC_WITH_INV);
	CHECK(wc.invalidated_rkey == 0xabc123);

	/* a flushed WR: status and vendor_err through */
	e = softrnic_cqe{};
	e.status = IBV_WC_WR_FLUSH_ERR;
	e.opcode = SOFTRNIC_WC_RDMA_READ;
	e.vendor_err = 0x77;
	cqe_to_wc(e, wc);
	CHECK(wc.status == IBV_WC_WR_FLUSH_ERR);
	CHECK(wc.opcode == IBV_WC_RDMA_READ);
	CHECK(wc.vendor_err == 0x77);
	CHECK(wc.wc_flags == 0);

	/* every opcode passes through unchanged */
	for (auto op :
	     {IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ, IBV_WC_COMP_SWAP, IBV_WC_FETCH_ADD,
	      IBV_WC_BIND_MW, IBV_WC_LOCAL_INV, IBV_WC_RECV, IBV_WC_RECV_RDMA_WITH_IMM}) {
		e.opcode = static_cast<uint8_t>(op);
		cqe_to_wc(e, wc);
		CHECK(wc.opcode == op);
	}
}

TEST_CASE("CQ: ibv_poll_cq from shared memory", "[provider][cq]")
{
	fake_cq f(8);
	ibv_wc wc[8];
	CHECK(poll_cq(f.ibcq(), 8, wc) == 0);
	for (uint64_t i = 1; i <= 5; i++)
		f.produce(make_cqe(i, SOFTRNIC_WC_SEND));
	/* in order, at most num_entries, cons published after each call */
	REQUIRE(poll_cq(f.ibcq(), 2, wc) == 2);
	CHECK(wc[0].wr_id == 1);
	CHECK(wc[1].wr_id == 2);
	CHECK(wc[1].byte_len == 20);
	CHECK(wc[1].qp_num == 0x42);
	CHECK(f.ctrl()->cons == 2);
	REQUIRE(poll_cq(f.ibcq(), 8, wc) == 3);
	CHECK(wc[2].wr_id == 5);
	CHECK(f.ctrl()->cons == 5);
	CHECK(poll_cq(f.ibcq(), 8, wc) == 0);

	/* around the ring several times */
	uint64_t next = 6, expect = 6;
	for (int round = 0; round < 10; round++) {
		for (int i = 0; i < 7; i++)
			f.produce(make_cqe(next++, SOFTRNIC_WC_RECV));
		int got;
		while ((got = poll_cq(f.ibcq(), 3, wc)) > 0)
			for (int i = 0; i < got; i++)
				CHECK(wc[i].wr_id == expect++);
		CHECK(got == 0);
	}
	CHECK(expect == next);
}

TEST_CASE("CQ: the ibv_cq_ex poll API", "[provider][cq][cq_ex]")
{
	fake_cq f(8);
	ibv_cq_ex *x = f.cqx();
	ibv_poll_cq_attr attr{};

	/* empty: ENOENT, and no end_poll is needed (the lock is free) */
	CHECK(ibv_start_poll(x, &attr) == ENOENT);
	ibv_wc wc;
	CHECK(poll_cq(f.ibcq(), 1, &wc) == 0);

	softrnic_cqe a = make_cqe(1, SOFTRNIC_WC_RECV);
	a.wc_flags = SOFTRNIC_WC_F_WITH_IMM;
	a.ex = htobe32(0x5151);
	a.src_qp = 0x99;
	a.sl = 5;
	softrnic_cqe b = make_cqe(2, SOFTRNIC_WC_RECV);
	b.wc_flags = SOFTRNIC_WC_F_WITH_INV;
	b.ex = 0x7700aa;
	softrnic_cqe c = make_cqe(3, SOFTRNIC_WC_RDMA_WRITE, IBV_WC_REM_ACCESS_ERR);
	c.vendor_err = 0x12;
	f.produce(a);
	f.produce(b);
	f.produce(c);

	REQUIRE(ibv_start_poll(x, &attr) == 0);
	CHECK(x->wr_id == 1);
	CHECK(x->status == IBV_WC_SUCCESS);
	CHECK(ibv_wc_read_opcode(x) == IBV_WC_RECV);
	CHECK(ibv_wc_read_wc_flags(x) == IBV_WC_WITH_IMM);
	CHECK(ibv_wc_read_imm_data(x) == htobe32(0x5151));
	CHECK(ibv_wc_read_byte_len(x) == 10);
	CHECK(ibv_wc_read_qp_num(x) == 0x42);
	CHECK(ibv_wc_read_src_qp(x) == 0x99);
	CHECK(ibv_wc_read_slid(x) == 0);
	CHECK(ibv_wc_read_sl(x) == 5);
	CHECK(ibv_wc_read_dlid_path_bits(x) == 0);
	CHECK(ibv_wc_read_vendor_err(x) == 0);

	REQUIRE(ibv_next_poll(x) == 0);
	CHECK(x->wr_id == 2);
	CHECK(ibv_wc_read_wc_flags(x) == IBV_WC_WITH_INV);
	CHECK(ibv_wc_read_invalidated_rkey(x) == 0x7700aa);

	REQUIRE(ibv_next_poll(x) == 0);
	CHECK(x->wr_id == 3);
	CHECK(x->status == IBV_WC_REM_ACCESS_ERR);
	CHECK(ibv_wc_read_opcode(x) == IBV_WC_RDMA_WRITE);
	CHECK(ibv_wc_read_vendor_err(x) == 0x12);

	CHECK(ibv_next_poll(x) == ENOENT);
	CHECK(f.ctrl()->cons == 0); /* published at end_poll */
	ibv_end_poll(x);
	CHECK(f.ctrl()->cons == 3);

	/* start_poll with an unknown comp_mask */
	attr.comp_mask = 1;
	CHECK(ibv_start_poll(x, &attr) == EINVAL);
	CHECK(poll_cq(f.ibcq(), 1, &wc) == 0); /* not left locked */
}

TEST_CASE("CQ: cq_ex accessors follow wc_flags", "[provider][cq][cq_ex]")
{
	fake_cq f(4, IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM);
	ibv_cq_ex *x = f.cqx();
	CHECK(x->read_byte_len != nullptr);
	CHECK(x->read_qp_num != nullptr);
	CHECK(x->read_imm_data == nullptr);
	CHECK(x->read_src_qp == nullptr);
	CHECK(x->read_slid == nullptr);
	CHECK(x->read_sl == nullptr);
	CHECK(x->read_dlid_path_bits == nullptr);
	CHECK(x->read_completion_ts == nullptr);
	/* always there */
	CHECK(x->read_opcode != nullptr);
	CHECK(x->read_vendor_err != nullptr);
	CHECK(x->read_wc_flags != nullptr);
}

TEST_CASE("CQ: req_notify_cq is a write to uflags", "[provider][cq][arm]")
{
	fake_cq f(4);
	CHECK(f.ctrl()->uflags == 0);
	CHECK(req_notify_cq(f.ibcq(), 0) == 0);
	CHECK(f.ctrl()->uflags == SOFTRNIC_CQ_ARM_NEXT);
	/* the kernel takes the request when a CQE satisfies it */
	f.ctrl()->uflags = 0;
	CHECK(req_notify_cq(f.ibcq(), 1) == 0);
	CHECK(f.ctrl()->uflags == SOFTRNIC_CQ_ARM_SOLICITED);
	/* asking for "next" on top of "solicited" widens the request */
	CHECK(req_notify_cq(f.ibcq(), 0) == 0);
	CHECK(f.ctrl()->uflags == (SOFTRNIC_CQ_ARM_SOLICITED | SOFTRNIC_CQ_ARM_NEXT));
	/* nothing else moved */
	CHECK(f.ctrl()->prod == 0);
	CHECK(f.ctrl()->cons == 0);
	CHECK(f.ctrl()->kflags == 0);
}

TEST_CASE("CQ: after an overflow the valid CQEs come first, then EIO", "[provider][cq]")
{
	fake_cq f(4);
	for (uint64_t i = 1; i <= 4; i++)
		f.produce(make_cqe(i, SOFTRNIC_WC_SEND));
	/* the kernel could not add a fifth: CQ in error */
	f.ctrl()->kflags = SOFTRNIC_KFLAG_ERROR;

	ibv_wc wc[3];
	REQUIRE(poll_cq(f.ibcq(), 3, wc) == 3);
	CHECK(wc[2].wr_id == 3);
	REQUIRE(poll_cq(f.ibcq(), 3, wc) == 1);
	CHECK(wc[0].wr_id == 4);
	errno = 0;
	CHECK(poll_cq(f.ibcq(), 3, wc) == -1);
	CHECK(errno == EIO);
	CHECK(poll_cq(f.ibcq(), 3, wc) == -1); /* for good */
	ibv_poll_cq_attr attr{};
	CHECK(ibv_start_poll(f.cqx(), &attr) == EIO);
	CHECK(poll_cq(f.ibcq(), 3, wc) == -1); /* and the lock is free */

	/* cq_ex: EIO from next_poll once the valid ones are read */
	fake_cq g(4);
	g.produce(make_cqe(9, SOFTRNIC_WC_SEND));
	g.ctrl()->kflags = SOFTRNIC_KFLAG_ERROR;
	REQUIRE(ibv_start_poll(g.cqx(), &attr) == 0);
	CHECK(g.cqx()->wr_id == 9);
	CHECK(ibv_next_poll(g.cqx()) == EIO);
	ibv_end_poll(g.cqx());
}

TEST_CASE("CQ: a producer counter no kernel writes is an error", "[provider][cq]")
{
	fake_cq f(4);
	f.ctrl()->prod = 9; /* 9 entries in a 4-entry ring */
	ibv_wc wc;
	errno = 0;
	CHECK(poll_cq(f.ibcq(), 1, &wc) == -1);
	CHECK(errno == EIO);
}

TEST_CASE("CQ: a QP's unpolled CQEs go at RESET, the rest keep their order",
	  "[provider][cq][reset]")
{
	fake_cq f(8);
	uint64_t id = 1;
	/* one polled, then: 7 send, 9 recv, 7 recv, 7 send, 8 send, 9 send */
	const std::pair<uint32_t, uint8_t> cqes[] = {{7, SOFTRNIC_WC_SEND}, {7, SOFTRNIC_WC_SEND},
						     {9, SOFTRNIC_WC_RECV}, {7, SOFTRNIC_WC_RECV},
						     {7, SOFTRNIC_WC_SEND}, {8, SOFTRNIC_WC_SEND},
						     {9, SOFTRNIC_WC_SEND}};
	for (const auto &[qpn, op] : cqes) {
		softrnic_cqe e = make_cqe(id++, op, IBV_WC_WR_FLUSH_ERR);
		e.qp_num = qpn;
		f.produce(e);
	}
	ibv_wc wc[8];
	REQUIRE(poll_cq(f.ibcq(), 1, wc) == 1);
	CHECK(wc[0].wr_id == 1);

	CHECK(f.obj->purge_qp(7, false) == 3);
	/* the kernel's prod is untouched, cons moved past the gap */
	CHECK(f.ctrl()->prod == 7);
	CHECK(f.ctrl()->cons == 4);
	/* nothing of QP 9 matches: no change */
	CHECK(f.obj->purge_qp(10, false) == 0);
	CHECK(f.ctrl()->cons == 4);

	/* a new CQE after the purge follows the survivors */
	softrnic_cqe late = make_cqe(100, SOFTRNIC_WC_SEND);
	late.qp_num = 7;
	f.produce(late);
	REQUIRE(poll_cq(f.ibcq(), 8, wc) == 4);
	CHECK(wc[0].wr_id == 3);
	CHECK(wc[0].qp_num == 9);
	CHECK(wc[1].wr_id == 6);
	CHECK(wc[2].wr_id == 7);
	CHECK(wc[3].wr_id == 100);
	CHECK(poll_cq(f.ibcq(), 8, wc) == 0);
	/* an empty CQ: nothing to do */
	CHECK(f.obj->purge_qp(7, false) == 0);
}

TEST_CASE("CQ: at RESET of a QP on an SRQ, its receive completions stay", "[provider][cq][reset]")
{
	fake_cq f(4);
	softrnic_cqe a = make_cqe(1, SOFTRNIC_WC_RECV);
	softrnic_cqe b = make_cqe(2, SOFTRNIC_WC_SEND);
	softrnic_cqe c = make_cqe(3, SOFTRNIC_WC_RECV_RDMA_WITH_IMM);
	f.produce(a);
	f.produce(b);
	f.produce(c);
	/* make_cqe's QP is 0x42 */
	CHECK(f.obj->purge_qp(0x42, true) == 1);
	ibv_wc wc[4];
	REQUIRE(poll_cq(f.ibcq(), 4, wc) == 2);
	CHECK(wc[0].wr_id == 1);
	CHECK(wc[1].wr_id == 3);
}
