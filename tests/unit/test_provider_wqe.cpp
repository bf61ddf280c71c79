// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Send and receive WQE encoding (userspace/provider/send_queue.h,
 * recv_queue.h, qp.h): every opcode through ibv_post_send's work requests
 * and through the ibv_qp_ex builder, into a fake ring in plain memory, read
 * back the way the kernel reads it (and checked with the kernel's own
 * sr_sqe_check).  The QP's doorbell goes to a socket standing in for the
 * uverbs fd, so the tests see exactly when a system call would be made.
 */
#include <catch2/catch.hpp>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <string>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

#include "../../userspace/provider/ring.h"
#include "ah.h"
#include "mr.h"
#include "qp.h"
#include "recv_queue.h"
#include "ring.h" /* kernel/proto/ring.h: sr_sqe_check as the kernel runs it */
#include "send_queue.h"
#include "srq.h"
#include "uverbs_cmd.h"

using namespace softrnic;

namespace
{

struct ring_memory {
	void *mem = nullptr;
	uint32_t num_slots, slot_size;

	ring_memory(uint32_t n, uint32_t sz) : num_slots(n), slot_size(sz)
	{
		size_t bytes = SOFTRNIC_RING_CTRL_SIZE + size_t{n} * sz;
		bytes = (bytes + 4095) & ~size_t{4095};
		mem = std::aligned_alloc(4096, bytes);
		REQUIRE(mem != nullptr);
		std::memset(mem, 0, bytes);
	}
	~ring_memory() { std::free(mem); }
	ring_memory(const ring_memory &) = delete;

	ring view() const { return ring(mem, num_slots, slot_size); }
	softrnic_ring_ctrl *ctrl() const { return static_cast<softrnic_ring_ctrl *>(mem); }
	const softrnic_sqe &sqe(uint32_t c) const
	{
		return *static_cast<const softrnic_sqe *>(view().slot(c));
	}
	const softrnic_sge *sges(uint32_t c) const
	{
		return reinterpret_cast<const softrnic_sge *>(&sqe(c) + 1);
	}
	const softrnic_rqe &rqe(uint32_t c) const
	{
		return *static_cast<const softrnic_rqe *>(view().slot(c));
	}
	const char *inline_data(uint32_t c) const
	{
		return reinterpret_cast<const char *>(&sqe(c) + 1);
	}
	/* what the kernel would say about the WQE, given the QP's limits */
	sr_wqe_error kernel_check(uint32_t c, sr_qp_kind kind, uint32_t max_sge,
				  uint32_t max_inline) const
	{
		sr_sq_limits lim{kind, max_sge, max_inline, slot_size};
		softrnic_sqe copy = sqe(c);
		return sr_sqe_check(&copy, &lim);
	}
};

ibv_send_wr make_wr(uint64_t wr_id, ibv_wr_opcode op, ibv_sge *sg = nullptr, int n = 0,
		    unsigned flags = 0)
{
	ibv_send_wr wr{};
	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.sg_list = sg;
	wr.num_sge = n;
	wr.send_flags = flags;
	return wr;
}

void chain(std::vector<ibv_send_wr> &wrs)
{
	for (size_t i = 0; i + 1 < wrs.size(); i++)
		wrs[i].next = &wrs[i + 1];
	wrs.back().next = nullptr;
}

/* A QP object around fake rings, its doorbell going to a socket. */
struct fake_qp {
	ring_memory sqm;
	ring_memory rqm;
	int sock[2] = {-1, -1};
	ibv_context ctx{};
	std::unique_ptr<qp> obj;

	explicit fake_qp(sr_qp_kind kind = SR_QP_RC, bool sig_all = false, uint32_t sq_slots = 8)
	    : sqm(sq_slots, sr_sq_slot_size(4, 128)), rqm(8, sr_rq_slot_size(4))
	{
		REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sock) == 0);
		ctx.cmd_fd = sock[0];
		obj = qp::make();
		obj->qp_ptr()->context = &ctx;
		obj->qp_ptr()->handle = 0x77;
		obj->qp_ptr()->qp_type = kind == SR_QP_UD ? IBV_QPT_UD : IBV_QPT_RC;
		obj->qp_ptr()->state = IBV_QPS_RTS;
		sq_limits lim{kind, 4, 128, sig_all};
		obj->attach(send_queue(sqm.view(), lim), recv_queue(rqm.view(), 4));
		obj->enable_qp_ex(kind == SR_QP_UD ? qp_ud_send_ops : qp_rc_send_ops);
	}
	~fake_qp()
	{
		close(sock[0]);
		close(sock[1]);
	}
	ibv_qp *ibqp() { return obj->qp_ptr(); }
	ibv_qp_ex *qpx() { return ibv_qp_to_qp_ex(obj->qp_ptr()); }

	/* the doorbells written so far */
	std::vector<std::vector<uint8_t>> doorbells()
	{
		std::vector<std::vector<uint8_t>> out;
		for (;;) {
			std::vector<uint8_t> b(256);
			const ssize_t n = recv(sock[1], b.data(), b.size(), MSG_DONTWAIT);
			if (n < 0)
				break;
			b.resize(static_cast<size_t>(n));
			out.push_back(b);
		}
		return out;
	}
};

cmd::doorbell_req as_doorbell(const std::vector<uint8_t> &b)
{
	cmd::doorbell_req r{};
	REQUIRE(b.size() == sizeof(r));
	std::memcpy(&r, b.data(), sizeof(r));
	return r;
}

} // namespace

TEST_CASE("WQE: every RC opcode from ibv_post_send", "[provider][wqe]")
{
	ring_memory m(16, sr_sq_slot_size(4, 64));
	send_queue sq(m.view(), sq_limits{SR_QP_RC, 4, 64, false});

	ibv_sge sg[2] = {{0x1000, 100, 0x11}, {0x2000, 200, 0x22}};
	ibv_mr mr{};
	mr.lkey = 0x3303;
	ibv_mw mw{};
	mw.rkey = 0x4400;
	mw.type = IBV_MW_TYPE_2;

	std::vector<ibv_send_wr> wrs;
	wrs.push_back(make_wr(1, IBV_WR_SEND, sg, 2, IBV_SEND_SIGNALED));
	wrs.push_back(make_wr(2, IBV_WR_SEND_WITH_IMM, sg, 1, IBV_SEND_SOLICITED));
	wrs.back().imm_data = htobe32(0xdeadbeef);
	wrs.push_back(make_wr(3, IBV_WR_SEND_WITH_INV, sg, 1));
	wrs.back().invalidate_rkey = 0xabcd01;
	wrs.push_back(make_wr(4, IBV_WR_RDMA_WRITE, sg, 2, IBV_SEND_FENCE));
	wrs.back().wr.rdma = {0xfeed0000, 0x5501};
	wrs.push_back(make_wr(5, IBV_WR_RDMA_WRITE_WITH_IMM, sg, 1));
	wrs.back().wr.rdma = {0xfeed1000, 0x5502};
	wrs.back().imm_data = htobe32(7);
	wrs.push_back(make_wr(6, IBV_WR_RDMA_READ, sg, 1));
	wrs.back().wr.rdma = {0xfeed2000, 0x5503};
	wrs.push_back(make_wr(7, IBV_WR_ATOMIC_CMP_AND_SWP, sg, 1));
	wrs.back().wr.atomic = {0xfeed3000, 10, 20, 0x5504};
	wrs.push_back(make_wr(8, IBV_WR_ATOMIC_FETCH_AND_ADD, sg, 1));
	wrs.back().wr.atomic = {0xfeed4000, 5, 0, 0x5505};
	wrs.push_back(make_wr(9, IBV_WR_LOCAL_INV, sg, 2)); /* SGEs ignored */
	wrs.back().invalidate_rkey = 0x6601;
	wrs.push_back(make_wr(10, IBV_WR_BIND_MW));
	wrs.back().bind_mw.mw = &mw;
	wrs.back().bind_mw.rkey = 0x4401;
	wrs.back().bind_mw.bind_info = {&mr, 0x7000, 4096, IBV_ACCESS_REMOTE_READ};
	chain(wrs);

	ibv_send_wr *bad = nullptr;
	REQUIRE(sq.post(&wrs[0], &bad) == 0);
	CHECK(bad == nullptr);
	CHECK(sq.published());
	REQUIRE(m.ctrl()->prod == 10);

	for (uint32_t i = 0; i < 10; i++) {
		INFO("WQE " << i);
		CHECK(m.sqe(i).wr_id == i + 1);
		CHECK(m.sqe(i).opcode == wrs[i].opcode);
		CHECK(m.kernel_check(i, SR_QP_RC, 4, 64) == SR_WQE_OK);
	}
	/* SEND: two SGEs as given */
	CHECK(m.sqe(0).flags == SOFTRNIC_WQE_F_SIGNALED);
	CHECK(m.sqe(0).num_sge == 2);
	CHECK(m.sges(0)[0].addr == 0x1000);
	CHECK(m.sges(0)[0].length == 100);
	CHECK(m.sges(0)[0].lkey == 0x11);
	CHECK(m.sges(0)[1].addr == 0x2000);
	CHECK(m.sges(0)[1].lkey == 0x22);
	/* imm_data stored as posted (network order) */
	CHECK(m.sqe(1).flags == SOFTRNIC_WQE_F_SOLICITED);
	CHECK(m.sqe(1).ex == htobe32(0xdeadbeef));
	CHECK(m.sqe(2).ex == 0xabcd01);
	CHECK(m.sqe(2).flags == 0);
	CHECK(m.sqe(3).flags == SOFTRNIC_WQE_F_FENCE);
	CHECK(m.sqe(3).rdma.remote_addr == 0xfeed0000);
	CHECK(m.sqe(3).rdma.rkey == 0x5501);
	CHECK(m.sqe(3).num_sge == 2);
	CHECK(m.sqe(4).ex == htobe32(7));
	CHECK(m.sqe(4).rdma.remote_addr == 0xfeed1000);
	CHECK(m.sqe(4).rdma.rkey == 0x5502);
	CHECK(m.sqe(5).rdma.remote_addr == 0xfeed2000);
	CHECK(m.sqe(5).rdma.rkey == 0x5503);
	CHECK(m.sqe(5).num_sge == 1);
	CHECK(m.sqe(6).atomic.remote_addr == 0xfeed3000);
	CHECK(m.sqe(6).atomic.compare_add == 10);
	CHECK(m.sqe(6).atomic.swap == 20);
	CHECK(m.sqe(6).atomic.rkey == 0x5504);
	CHECK(m.sqe(7).atomic.compare_add == 5);
	CHECK(m.sqe(7).atomic.rkey == 0x5505);
	CHECK(m.sqe(8).ex == 0x6601);
	CHECK(m.sqe(8).num_sge == 0);
	CHECK(m.sqe(9).bind.addr == 0x7000);
	CHECK(m.sqe(9).bind.length == 4096);
	CHECK(m.sqe(9).bind.mw_rkey == 0x4400);
	CHECK(m.sqe(9).bind.new_rkey == 0x4401);
	CHECK(m.sqe(9).bind.mr_lkey == 0x3303);
	CHECK(m.sqe(9).bind.access == IBV_ACCESS_REMOTE_READ);
	CHECK(m.sqe(9).num_sge == 0);
}

TEST_CASE("WQE: sq_sig_all signals every WQE", "[provider][wqe]")
{
	ring_memory m(4, 128);
	send_queue sq(m.view(), sq_limits{SR_QP_RC, 4, 64, true});
	ibv_send_wr wr = make_wr(1, IBV_WR_SEND);
	ibv_send_wr *bad = nullptr;
	REQUIRE(sq.post(&wr, &bad) == 0);
	CHECK(m.sqe(0).flags == SOFTRNIC_WQE_F_SIGNALED);
}

TEST_CASE("WQE: inline data", "[provider][wqe]")
{
	ring_memory m(8, sr_sq_slot_size(2, 100));
	send_queue sq(m.view(), sq_limits{SR_QP_RC, 2, 100, false});
	CHECK(sq.limits().max_inline == 100);

	std::string a = "hello, ", b = "inline ", c = "world";
	ibv_sge sg[3] = {
	    {reinterpret_cast<uintptr_t>(a.data()), static_cast<uint32_t>(a.size()), 0},
	    {reinterpret_cast<uintptr_t>(b.data()), static_cast<uint32_t>(b.size()), 0},
	    {reinterpret_cast<uintptr_t>(c.data()), static_cast<uint32_t>(c.size()), 0}};
	/* three buffers: more than max_sge, fine for inline */
	ibv_send_wr wr = make_wr(1, IBV_WR_SEND, sg, 3, IBV_SEND_INLINE | IBV_SEND_SIGNALED);
	ibv_send_wr *bad = nullptr;
	REQUIRE(sq.post(&wr, &bad) == 0);
	CHECK(m.sqe(0).flags == (SOFTRNIC_WQE_F_INLINE | SOFTRNIC_WQE_F_SIGNALED));
	CHECK(m.sqe(0).rdma.inline_len == 19);
	CHECK(m.sqe(0).num_sge == 0);
	CHECK(std::string(m.inline_data(0), 19) == "hello, inline world");
	CHECK(m.kernel_check(0, SR_QP_RC, 2, 100) == SR_WQE_OK);

	/* RDMA WRITE inline keeps its remote address */
	wr = make_wr(2, IBV_WR_RDMA_WRITE, sg, 1, IBV_SEND_INLINE);
	wr.wr.rdma = {0xabc000, 9};
	REQUIRE(sq.post(&wr, &bad) == 0);
	CHECK(m.sqe(1).flags == SOFTRNIC_WQE_F_INLINE);
	CHECK(m.sqe(1).rdma.remote_addr == 0xabc000);
	CHECK(m.sqe(1).rdma.rkey == 9);
	CHECK(m.sqe(1).rdma.inline_len == 7);

	/* INLINE on a READ is ignored: the SGEs describe where data lands */
	wr = make_wr(3, IBV_WR_RDMA_READ, sg, 1, IBV_SEND_INLINE);
	REQUIRE(sq.post(&wr, &bad) == 0);
	CHECK(m.sqe(2).flags == 0);
	CHECK(m.sqe(2).num_sge == 1);
	CHECK(m.kernel_check(2, SR_QP_RC, 2, 100) == SR_WQE_OK);

	/* longer than max_inline: EINVAL, not posted */
	std::vector<char> big(101, 'x');
	ibv_sge bsg{reinterpret_cast<uintptr_t>(big.data()), 101, 0};
	wr = make_wr(4, IBV_WR_SEND, &bsg, 1, IBV_SEND_INLINE);
	CHECK(sq.post(&wr, &bad) == EINVAL);
	CHECK(bad == &wr);
	CHECK(m.ctrl()->prod == 3);
	/* exactly max_inline is fine */
	bsg.length = 100;
	REQUIRE(sq.post(&wr, &bad) == 0);
	CHECK(m.sqe(3).rdma.inline_len == 100);
}

TEST_CASE("WQE: SGE lists and the max_send_sge cap", "[provider][wqe]")
{
	ring_memory m(8, sr_sq_slot_size(3, 0));
	send_queue sq(m.view(), sq_limits{SR_QP_RC, 3, 0, false});
	ibv_sge sg[4];
	for (int i = 0; i < 4; i++)
		sg[i] = {uint64_t(0x1000) * (i + 1), uint32_t(10 * (i + 1)), uint32_t(i)};

	std::vector<ibv_send_wr> wrs;
	wrs.push_back(make_wr(1, IBV_WR_SEND, sg, 0)); /* zero-length send */
	wrs.push_back(make_wr(2, IBV_WR_SEND, sg, 3));
	wrs.push_back(make_wr(3, IBV_WR_SEND, sg, 4)); /* one too many */
	wrs.push_back(make_wr(4, IBV_WR_SEND, sg, 1));
	chain(wrs);
	ibv_send_wr *bad = nullptr;
	CHECK(sq.post(&wrs[0], &bad) == EINVAL);
	/* the ones before the bad WR are posted and published */
	CHECK(bad == &wrs[2]);
	CHECK(m.ctrl()->prod == 2);
	CHECK(m.sqe(0).num_sge == 0);
	CHECK(m.sqe(1).num_sge == 3);
	for (int i = 0; i < 3; i++) {
		CHECK(m.sges(1)[i].addr == sg[i].addr);
		CHECK(m.sges(1)[i].length == sg[i].length);
		CHECK(m.sges(1)[i].lkey == sg[i].lkey);
	}
	/* a negative count is not a count */
	ibv_send_wr neg = make_wr(5, IBV_WR_SEND, sg, -1);
	CHECK(sq.post(&neg, &bad) == EINVAL);
}

TEST_CASE("WQE: a full SQ is ENOMEM at the first WR that does not fit", "[provider][wqe]")
{
	ring_memory m(4, 128);
	send_queue sq(m.view(), sq_limits{SR_QP_RC, 4, 64, false});
	std::vector<ibv_send_wr> wrs;
	for (int i = 0; i < 6; i++)
		wrs.push_back(make_wr(i, IBV_WR_SEND));
	chain(wrs);
	ibv_send_wr *bad = nullptr;
	CHECK(sq.post(&wrs[0], &bad) == ENOMEM);
	CHECK(bad == &wrs[4]);
	CHECK(m.ctrl()->prod == 4);
	/* still full until the kernel consumes */
	CHECK(sq.post(&wrs[4], &bad) == ENOMEM);
	CHECK(bad == &wrs[4]);
	m.ctrl()->cons = 2;
	CHECK(sq.post(&wrs[4], &bad) == 0);
	CHECK(m.ctrl()->prod == 6);
	CHECK(m.sqe(4).wr_id == 4);
	CHECK(m.sqe(5).wr_id == 5);
	CHECK(m.view().slot(4) == m.view().slot(0)); /* wrapped */
}

TEST_CASE("WQE: UD fields, and what UD refuses", "[provider][wqe]")
{
	ring_memory m(8, sr_sq_slot_size(2, 64));
	send_queue sq(m.view(), sq_limits{SR_QP_UD, 2, 64, false});
	auto a = ah::make(0x1234);
	ibv_sge sg{0x1000, 64, 1};

	ibv_send_wr wr = make_wr(1, IBV_WR_SEND_WITH_IMM, &sg, 1);
	wr.imm_data = htobe32(99);
	wr.wr.ud.ah = a->ibv();
	wr.wr.ud.remote_qpn = 0xabcdef;
	wr.wr.ud.remote_qkey = 0x11111111;
	ibv_send_wr *bad = nullptr;
	REQUIRE(sq.post(&wr, &bad) == 0);
	CHECK(m.sqe(0).ud.ah_num == 0x1234);
	CHECK(m.sqe(0).ud.remote_qpn == 0xabcdef);
	CHECK(m.sqe(0).ud.remote_qkey == 0x11111111);
	CHECK(m.sqe(0).ex == htobe32(99));
	CHECK(m.sqe(0).num_sge == 1);
	CHECK(m.kernel_check(0, SR_QP_UD, 2, 64) == SR_WQE_OK);

	/* inline on UD: the length goes into ud.inline_len */
	char data[10] = "ud inline";
	ibv_sge isg{reinterpret_cast<uintptr_t>(data), 10, 0};
	wr = make_wr(2, IBV_WR_SEND, &isg, 1, IBV_SEND_INLINE);
	wr.wr.ud.ah = a->ibv();
	REQUIRE(sq.post(&wr, &bad) == 0);
	CHECK(m.sqe(1).ud.inline_len == 10);
	CHECK(m.sqe(1).ud.ah_num == 0x1234);
	CHECK(std::string(m.inline_data(1)) == "ud inline");
	CHECK(m.kernel_check(1, SR_QP_UD, 2, 64) == SR_WQE_OK);

	/* no AH; RC-only opcodes */
	wr = make_wr(3, IBV_WR_SEND, &sg, 1);
	CHECK(sq.post(&wr, &bad) == EINVAL);
	for (auto op : {IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP,
			IBV_WR_LOCAL_INV, IBV_WR_BIND_MW, IBV_WR_SEND_WITH_INV}) {
		wr = make_wr(4, op, &sg, 1);
		wr.wr.ud.ah = a->ibv();
		bad = nullptr;
		CHECK(sq.post(&wr, &bad) == EINVAL);
		CHECK(bad == &wr);
	}
	CHECK(m.ctrl()->prod == 2);
}

TEST_CASE("WQE: opcodes and flags the ABI has no encoding for", "[provider][wqe]")
{
	ring_memory m(4, 128);
	send_queue sq(m.view(), sq_limits{SR_QP_RC, 4, 64, false});
	ibv_send_wr *bad = nullptr;
	for (auto op : {IBV_WR_TSO, IBV_WR_DRIVER1, IBV_WR_ATOMIC_WRITE,
			static_cast<ibv_wr_opcode>(14), static_cast<ibv_wr_opcode>(0x20),
			static_cast<ibv_wr_opcode>(-1), static_cast<ibv_wr_opcode>(0x102)}) {
		ibv_send_wr wr = make_wr(1, op);
		CHECK(sq.post(&wr, &bad) == EINVAL);
	}
	ibv_send_wr wr = make_wr(1, IBV_WR_SEND, nullptr, 0, IBV_SEND_IP_CSUM);
	CHECK(sq.post(&wr, &bad) == EINVAL);
	ibv_send_wr bind = make_wr(1, IBV_WR_BIND_MW); /* no MW */
	CHECK(sq.post(&bind, &bad) == EINVAL);
	CHECK(m.ctrl()->prod == 0);
	CHECK_FALSE(sq.published());
}

TEST_CASE("WQE: send_queue clamps caps to what its slots hold", "[provider][wqe]")
{
	ring_memory m(4, 128); /* 64 bytes after the header */
	send_queue sq(m.view(), sq_limits{SR_QP_RC, 32, 512, false});
	CHECK(sq.limits().max_sge == 4);
	CHECK(sq.limits().max_inline == 64);
	recv_queue rq(ring_memory(4, 64).view(), 32);
	CHECK(rq.max_sge() == 3);
}

TEST_CASE("QP: the doorbell rings only when the kernel is idle", "[provider][wqe][doorbell]")
{
	fake_qp q;
	ibv_send_wr wr = make_wr(1, IBV_WR_SEND);
	ibv_send_wr *bad = nullptr;

	REQUIRE(post_send(q.ibqp(), &wr, &bad) == 0);
	auto db = q.doorbells();
	REQUIRE(db.size() == 1);
	const auto r = as_doorbell(db[0]);
	/* an empty POST_SEND: what ib_uverbs accepts with no WR */
	CHECK(r.hdr.command == IB_USER_VERBS_CMD_POST_SEND);
	CHECK(r.hdr.in_words * 4u == sizeof(cmd::doorbell_req));
	CHECK(r.hdr.out_words * 4u == sizeof(ib_uverbs_post_send_resp));
	CHECK(r.qp_handle == 0x77);
	CHECK(r.wr_count == 0);
	CHECK(r.sge_count == 0);
	CHECK(r.wqe_size == sizeof(ib_uverbs_send_wr));
	CHECK(r.response != 0);

	/* while the kernel drains the SQ, posting is system-call free */
	q.sqm.ctrl()->kflags = SOFTRNIC_KFLAG_KERNEL_ACTIVE;
	for (int i = 0; i < 5; i++) {
		wr.wr_id = 2 + i;
		REQUIRE(post_send(q.ibqp(), &wr, &bad) == 0);
	}
	CHECK(q.doorbells().empty());
	CHECK(q.sqm.ctrl()->prod == 6);

	/* a post that publishes nothing rings nothing */
	q.sqm.ctrl()->kflags = 0;
	ibv_send_wr badwr = make_wr(9, IBV_WR_TSO);
	CHECK(post_send(q.ibqp(), &badwr, &bad) == EINVAL);
	CHECK(q.doorbells().empty());

	/* in ERR the kernel is idle too: the doorbell gets the WR flushed */
	q.sqm.ctrl()->kflags = SOFTRNIC_KFLAG_ERROR;
	REQUIRE(post_send(q.ibqp(), &wr, &bad) == 0);
	CHECK(q.doorbells().size() == 1);
}

TEST_CASE("QP: no sends or receives in RESET", "[provider][wqe]")
{
	fake_qp q;
	q.ibqp()->state = IBV_QPS_RESET;
	ibv_send_wr wr = make_wr(1, IBV_WR_SEND);
	ibv_send_wr *bad = nullptr;
	CHECK(post_send(q.ibqp(), &wr, &bad) == EINVAL);
	CHECK(bad == &wr);
	ibv_wr_start(q.qpx());
	ibv_wr_send(q.qpx());
	CHECK(ibv_wr_complete(q.qpx()) == EINVAL);
	CHECK(q.sqm.ctrl()->prod == 0);
	CHECK(q.doorbells().empty());
	/* nor receives (IBTA C10-97.2.1, as rxe): nothing reaches the RQ */
	ibv_recv_wr rwr{};
	ibv_recv_wr *rbad = nullptr;
	CHECK(post_recv(q.ibqp(), &rwr, &rbad) == EINVAL);
	CHECK(rbad == &rwr);
	CHECK(q.rqm.ctrl()->prod == 0);
	q.ibqp()->state = IBV_QPS_INIT;
	CHECK(post_send(q.ibqp(), &wr, &bad) == 0);
	CHECK(post_recv(q.ibqp(), &rwr, &rbad) == 0);
}

TEST_CASE("QP: a failing doorbell is reported", "[provider][wqe][doorbell]")
{
	fake_qp q;
	close(q.sock[1]);
	q.sock[1] = open("/dev/null", O_RDONLY);
	auto old = signal(SIGPIPE, SIG_IGN);
	std::vector<ibv_send_wr> wrs = {make_wr(1, IBV_WR_SEND), make_wr(2, IBV_WR_SEND)};
	chain(wrs);
	ibv_send_wr *bad = nullptr;
	CHECK(post_send(q.ibqp(), &wrs[0], &bad) == EPIPE);
	CHECK(bad == &wrs[0]);
	signal(SIGPIPE, old);
}

TEST_CASE("QP: post_recv never calls the kernel, except to flush in ERR",
	  "[provider][wqe][doorbell]")
{
	fake_qp q;
	ibv_sge sg[2] = {{0x5000, 512, 5}, {0x6000, 256, 6}};
	std::vector<ibv_recv_wr> wrs(3);
	for (size_t i = 0; i < wrs.size(); i++) {
		wrs[i].wr_id = 100 + i;
		wrs[i].sg_list = sg;
		wrs[i].num_sge = static_cast<int>(i % 3);
		wrs[i].next = i + 1 < wrs.size() ? &wrs[i + 1] : nullptr;
	}
	ibv_recv_wr *bad = nullptr;
	REQUIRE(post_recv(q.ibqp(), &wrs[0], &bad) == 0);
	CHECK(q.doorbells().empty());
	CHECK(q.rqm.ctrl()->prod == 3);
	for (uint32_t i = 0; i < 3; i++) {
		CHECK(q.rqm.rqe(i).wr_id == 100 + i);
		CHECK(q.rqm.rqe(i).num_sge == i);
		softrnic_rqe copy = q.rqm.rqe(i);
		CHECK(sr_rqe_check(&copy, 4, q.rqm.slot_size) == SR_WQE_OK);
	}
	const auto *rsge = reinterpret_cast<const softrnic_sge *>(&q.rqm.rqe(2) + 1);
	CHECK(rsge[1].addr == 0x6000);
	CHECK(rsge[1].length == 256);
	CHECK(rsge[1].lkey == 6);

	/* caps and full ring */
	ibv_recv_wr big{};
	big.sg_list = sg;
	big.num_sge = 5;
	CHECK(post_recv(q.ibqp(), &big, &bad) == EINVAL);
	CHECK(bad == &big);
	std::vector<ibv_recv_wr> more(6);
	for (size_t i = 0; i < more.size(); i++)
		more[i].next = i + 1 < more.size() ? &more[i + 1] : nullptr;
	CHECK(post_recv(q.ibqp(), &more[0], &bad) == ENOMEM);
	CHECK(bad == &more[5]);
	CHECK(q.doorbells().empty());

	/* QP in ERR: the WRs are written, then one empty POST_RECV */
	q.rqm.ctrl()->kflags = SOFTRNIC_KFLAG_ERROR;
	q.rqm.ctrl()->cons = q.rqm.ctrl()->prod;
	REQUIRE(post_recv(q.ibqp(), &wrs[2], &bad) == 0);
	auto db = q.doorbells();
	REQUIRE(db.size() == 1);
	const auto r = as_doorbell(db[0]);
	CHECK(r.hdr.command == IB_USER_VERBS_CMD_POST_RECV);
	CHECK(r.qp_handle == 0x77);
	CHECK(r.wr_count == 0);
	CHECK(r.wqe_size == sizeof(ib_uverbs_recv_wr));
}

TEST_CASE("QP: ibv_wr_* builder encodes like ibv_post_send", "[provider][wqe][qp_ex]")
{
	fake_qp q(SR_QP_RC, false, 16);
	ibv_qp_ex *x = q.qpx();
	REQUIRE(x != nullptr);
	ibv_mr mr{};
	mr.lkey = 0x88;
	ibv_mw mw{};
	mw.rkey = 0x900;
	ibv_mw_bind_info bi{&mr, 0x10000, 8192, IBV_ACCESS_REMOTE_WRITE};
	char payload[] = "builder-inline";
	ibv_data_buf bufs[2] = {{payload, 7}, {payload + 7, 8}};
	ibv_sge sgl[2] = {{0xa000, 1, 2}, {0xb000, 3, 4}};

	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, 0x42, 0xc000, 64);
	x->wr_id = 2;
	x->wr_flags = 0;
	ibv_wr_send_imm(x, htobe32(5));
	ibv_wr_set_sge_list(x, 2, sgl);
	x->wr_id = 3;
	ibv_wr_send_inv(x, 0x333);
	ibv_wr_set_inline_data_list(x, 2, bufs);
	x->wr_id = 4;
	x->wr_flags = IBV_SEND_FENCE | IBV_SEND_INLINE; /* INLINE bit: ignored */
	ibv_wr_rdma_write(x, 0x44, 0xd000);
	ibv_wr_set_inline_data(x, payload, 3);
	x->wr_id = 5;
	x->wr_flags = 0;
	ibv_wr_rdma_write_imm(x, 0x55, 0xe000, htobe32(6));
	ibv_wr_set_sge(x, 1, 2, 3);
	x->wr_id = 6;
	ibv_wr_rdma_read(x, 0x66, 0xf000);
	ibv_wr_set_sge(x, 7, 8, 9);
	x->wr_id = 7;
	ibv_wr_atomic_cmp_swp(x, 0x77, 0x1000, 11, 22);
	ibv_wr_set_sge(x, 1, 0x2000, 8);
	x->wr_id = 8;
	ibv_wr_atomic_fetch_add(x, 0x78, 0x1008, 33);
	ibv_wr_set_sge(x, 1, 0x2008, 8);
	REQUIRE(ibv_wr_complete(x) == 0);
	REQUIRE(q.sqm.ctrl()->prod == 8);
	CHECK(q.doorbells().size() == 1); /* one per batch */

	ibv_wr_start(x);
	x->wr_id = 9;
	ibv_wr_local_inv(x, 0x999);
	ibv_wr_set_sge(x, 1, 2, 3); /* meaningless here: ignored */
	x->wr_id = 10;
	ibv_wr_bind_mw(x, &mw, 0x901, &bi);
	REQUIRE(ibv_wr_complete(x) == 0);
	REQUIRE(q.sqm.ctrl()->prod == 10);

	const auto &m = q.sqm;
	CHECK(m.sqe(8).wr_id == 9);
	CHECK(m.sqe(8).opcode == SOFTRNIC_WR_LOCAL_INV);
	CHECK(m.sqe(8).ex == 0x999);
	CHECK(m.sqe(8).num_sge == 0);
	CHECK(m.sqe(9).opcode == SOFTRNIC_WR_BIND_MW);
	CHECK(m.sqe(9).bind.mw_rkey == 0x900);
	CHECK(m.sqe(9).bind.new_rkey == 0x901);
	CHECK(m.sqe(9).bind.mr_lkey == 0x88);
	CHECK(m.sqe(9).bind.addr == 0x10000);
	CHECK(m.sqe(9).bind.length == 8192);
	CHECK(m.sqe(9).bind.access == IBV_ACCESS_REMOTE_WRITE);
	for (uint32_t i = 8; i < 10; i++)
		CHECK(m.kernel_check(i, SR_QP_RC, 4, 128) == SR_WQE_OK);
	for (uint32_t i = 0; i < 8; i++) {
		INFO("WQE " << i);
		CHECK(m.sqe(i).wr_id == i + 1);
		CHECK(m.kernel_check(i, SR_QP_RC, 4, 128) == SR_WQE_OK);
	}
	CHECK(m.sqe(0).opcode == SOFTRNIC_WR_SEND);
	CHECK(m.sqe(0).flags == SOFTRNIC_WQE_F_SIGNALED);
	CHECK(m.sqe(0).num_sge == 1);
	CHECK(m.sges(0)[0].addr == 0xc000);
	CHECK(m.sges(0)[0].length == 64);
	CHECK(m.sges(0)[0].lkey == 0x42);
	CHECK(m.sqe(1).opcode == SOFTRNIC_WR_SEND_WITH_IMM);
	CHECK(m.sqe(1).ex == htobe32(5));
	CHECK(m.sqe(1).num_sge == 2);
	CHECK(m.sges(1)[1].addr == 0xb000);
	CHECK(m.sqe(2).opcode == SOFTRNIC_WR_SEND_WITH_INV);
	CHECK(m.sqe(2).ex == 0x333);
	CHECK(m.sqe(2).flags == SOFTRNIC_WQE_F_INLINE);
	CHECK(m.sqe(2).rdma.inline_len == 15);
	CHECK(std::string(m.inline_data(2), 15) == std::string(payload, 15));
	CHECK(m.sqe(3).opcode == SOFTRNIC_WR_RDMA_WRITE);
	CHECK(m.sqe(3).flags == (SOFTRNIC_WQE_F_FENCE | SOFTRNIC_WQE_F_INLINE));
	CHECK(m.sqe(3).rdma.remote_addr == 0xd000);
	CHECK(m.sqe(3).rdma.rkey == 0x44);
	CHECK(m.sqe(3).rdma.inline_len == 3);
	CHECK(m.sqe(4).opcode == SOFTRNIC_WR_RDMA_WRITE_WITH_IMM);
	CHECK(m.sqe(4).ex == htobe32(6));
	CHECK(m.sqe(4).rdma.rkey == 0x55);
	CHECK(m.sqe(5).opcode == SOFTRNIC_WR_RDMA_READ);
	CHECK(m.sqe(5).rdma.remote_addr == 0xf000);
	CHECK(m.sges(5)[0].lkey == 7);
	CHECK(m.sqe(6).opcode == SOFTRNIC_WR_ATOMIC_CMP_AND_SWP);
	CHECK(m.sqe(6).atomic.compare_add == 11);
	CHECK(m.sqe(6).atomic.swap == 22);
	CHECK(m.sqe(6).atomic.rkey == 0x77);
	CHECK(m.sqe(6).atomic.remote_addr == 0x1000);
	CHECK(m.sqe(7).opcode == SOFTRNIC_WR_ATOMIC_FETCH_AND_ADD);
	CHECK(m.sqe(7).atomic.compare_add == 33);
}

TEST_CASE("QP: a failed ibv_wr_* batch posts nothing", "[provider][wqe][qp_ex]")
{
	fake_qp q(SR_QP_RC, false, 4);
	ibv_qp_ex *x = q.qpx();
	ibv_sge sgl[5] = {};

	/* too many SGEs in the middle of a batch */
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_send(x);
	ibv_wr_set_sge_list(x, 5, sgl);
	ibv_wr_send(x); /* after the failure: ignored */
	CHECK(ibv_wr_complete(x) == EINVAL);
	CHECK(q.sqm.ctrl()->prod == 0);
	CHECK(q.doorbells().empty());

	/* inline data on a READ, inline too long */
	char big[200] = {};
	ibv_wr_start(x);
	ibv_wr_rdma_read(x, 1, 2);
	ibv_wr_set_inline_data(x, big, 4);
	CHECK(ibv_wr_complete(x) == EINVAL);
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_inline_data(x, big, 129);
	CHECK(ibv_wr_complete(x) == EINVAL);
	/* UD address on an RC QP */
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_ud_addr(x, nullptr, 1, 2);
	CHECK(ibv_wr_complete(x) == EINVAL);
	CHECK(q.sqm.ctrl()->prod == 0);

	/* the ring fills up: ENOMEM, nothing of the batch posted */
	ibv_wr_start(x);
	for (int i = 0; i < 5; i++)
		ibv_wr_send(x);
	CHECK(ibv_wr_complete(x) == ENOMEM);
	CHECK(q.sqm.ctrl()->prod == 0);

	/* abort drops a good batch; the next one starts clean */
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_abort(x);
	CHECK(q.sqm.ctrl()->prod == 0);
	ibv_wr_start(x);
	x->wr_id = 77;
	ibv_wr_send(x);
	CHECK(ibv_wr_complete(x) == 0);
	CHECK(q.sqm.ctrl()->prod == 1);
	CHECK(q.sqm.sqe(0).wr_id == 77);
	CHECK(q.doorbells().size() == 1);

	/* an empty batch publishes and rings nothing */
	ibv_wr_start(x);
	CHECK(ibv_wr_complete(x) == 0);
	CHECK(q.doorbells().empty());
}

TEST_CASE("QP: UD through the builder", "[provider][wqe][qp_ex]")
{
	fake_qp q(SR_QP_UD, true);
	ibv_qp_ex *x = q.qpx();
	auto a = ah::make(55);
	CHECK(x->wr_rdma_write == nullptr); /* not a UD operation */
	ibv_wr_start(x);
	x->wr_id = 3;
	x->wr_flags = 0;
	ibv_wr_send_imm(x, htobe32(1));
	ibv_wr_set_ud_addr(x, a->ibv(), 0x1234, 0x80010000);
	ibv_wr_set_sge(x, 1, 0x100, 10);
	REQUIRE(ibv_wr_complete(x) == 0);
	const auto &e = q.sqm.sqe(0);
	CHECK(e.opcode == SOFTRNIC_WR_SEND_WITH_IMM);
	CHECK(e.flags == SOFTRNIC_WQE_F_SIGNALED); /* sq_sig_all */
	CHECK(e.ud.ah_num == 55);
	CHECK(e.ud.remote_qpn == 0x1234);
	CHECK(e.ud.remote_qkey == 0x80010000);
	CHECK(e.num_sge == 1);
	CHECK(q.sqm.kernel_check(0, SR_QP_UD, 4, 128) == SR_WQE_OK);
}

TEST_CASE("MW: a type 1 bind is a BIND_MW WQE with the next key byte", "[provider][wqe][mw]")
{
	fake_qp q;
	ibv_mr mr{};
	mr.lkey = 0x500;
	ibv_mw mw{};
	mw.type = IBV_MW_TYPE_1;
	mw.rkey = 0x123456ff;
	ibv_mw_bind b{};
	b.wr_id = 0xb1d;
	b.send_flags = IBV_SEND_SIGNALED;
	b.bind_info = {&mr, 0x8000, 100, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE};

	REQUIRE(bind_mw(q.ibqp(), &mw, &b) == 0);
	const auto &e = q.sqm.sqe(0);
	CHECK(e.opcode == SOFTRNIC_WR_BIND_MW);
	CHECK(e.wr_id == 0xb1d);
	CHECK(e.flags == SOFTRNIC_WQE_F_SIGNALED);
	CHECK(e.bind.mw_rkey == 0x123456ff);
	CHECK(e.bind.new_rkey == 0x12345600); /* index kept, key byte wraps */
	CHECK(e.bind.mr_lkey == 0x500);
	CHECK(e.bind.addr == 0x8000);
	CHECK(e.bind.length == 100);
	CHECK(mw.rkey == 0x12345600); /* updated once posted */
	CHECK(q.doorbells().size() == 1);

	/* a failed post leaves the window's rkey alone */
	q.sqm.ctrl()->cons = 0;
	for (int i = 0; i < 7; i++) {
		ibv_send_wr wr = make_wr(i, IBV_WR_SEND);
		ibv_send_wr *bad;
		REQUIRE(post_send(q.ibqp(), &wr, &bad) == 0);
	}
	CHECK(bind_mw(q.ibqp(), &mw, &b) == ENOMEM);
	CHECK(mw.rkey == 0x12345600);
	mw.type = IBV_MW_TYPE_2;
	CHECK(bind_mw(q.ibqp(), &mw, &b) == EINVAL);
}

TEST_CASE("SRQ: post_srq_recv writes the SRQ ring and nothing else", "[provider][wqe][srq]")
{
	ring_memory m(4, sr_rq_slot_size(2));
	auto s = srq::make();
	/* no context at all: a system call would crash */
	s->attach(recv_queue(m.view(), 2), 9);
	ibv_sge sg[2] = {{0x100, 1, 2}, {0x200, 3, 4}};
	std::vector<ibv_recv_wr> wrs(5);
	for (size_t i = 0; i < wrs.size(); i++) {
		wrs[i].wr_id = i;
		wrs[i].sg_list = sg;
		wrs[i].num_sge = 2;
		wrs[i].next = i + 1 < wrs.size() ? &wrs[i + 1] : nullptr;
	}
	ibv_recv_wr *bad = nullptr;
	CHECK(post_srq_recv(s->srq_ptr(), &wrs[0], &bad) == ENOMEM);
	CHECK(bad == &wrs[4]);
	CHECK(m.ctrl()->prod == 4);
	CHECK(m.rqe(3).wr_id == 3);
	CHECK(m.rqe(3).num_sge == 2);
	wrs[4].num_sge = 3;
	m.ctrl()->cons = 4;
	CHECK(post_srq_recv(s->srq_ptr(), &wrs[4], &bad) == EINVAL);
	CHECK(s->srqn() == 9);
}

TEST_CASE("QP: ATOMIC_WRITE and FLUSH through the builder", "[provider][wqe][qp_ex][mpe]")
{
	fake_qp q(SR_QP_RC, false, 8);
	ibv_qp_ex *x = q.qpx();
	REQUIRE(x->wr_atomic_write != nullptr);
	const uint8_t value[8] = {1, 2, 3, 4, 5, 6, 7, 0x88};

	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
	ibv_wr_atomic_write(x, 0x1234, 0xabc0, value);
	ibv_wr_set_sge(x, 1, 2, 3); /* no SGEs for these: ignored */
	x->wr_id = 2;
	x->wr_flags = 0;
	dv_wr_flush(x, 0x5678, 0xdef0, 4096, SOFTRNIC_FLUSH_GLOBAL, SOFTRNIC_FLUSH_RANGE);
	x->wr_id = 3;
	dv_wr_flush(x, 0x9abc, 0, 0xffffffffULL, SOFTRNIC_FLUSH_GLOBAL | SOFTRNIC_FLUSH_PERSISTENT,
		    SOFTRNIC_FLUSH_MR);
	REQUIRE(ibv_wr_complete(x) == 0);
	REQUIRE(q.sqm.ctrl()->prod == 3);
	CHECK(q.doorbells().size() == 1);

	const auto &m = q.sqm;
	for (uint32_t i = 0; i < 3; i++) {
		INFO("WQE " << i);
		CHECK(m.sqe(i).wr_id == i + 1);
		CHECK(m.sqe(i).num_sge == 0);
		CHECK(m.kernel_check(i, SR_QP_RC, 4, 128) == SR_WQE_OK);
	}
	CHECK(m.sqe(0).opcode == SOFTRNIC_WR_ATOMIC_WRITE);
	CHECK(m.sqe(0).flags == (SOFTRNIC_WQE_F_SIGNALED | SOFTRNIC_WQE_F_FENCE));
	CHECK(m.sqe(0).atomic.rkey == 0x1234);
	CHECK(m.sqe(0).atomic.remote_addr == 0xabc0);
	/* the 8 bytes in memory order, whatever the host's endianness */
	CHECK(std::memcmp(&m.sqe(0).atomic.swap, value, 8) == 0);
	CHECK(sr_wc_opcode_of_sqe(m.sqe(0).opcode) == IBV_WC_ATOMIC_WRITE);
	CHECK(m.sqe(1).opcode == SOFTRNIC_WR_FLUSH);
	CHECK(m.sqe(1).flush.rkey == 0x5678);
	CHECK(m.sqe(1).flush.remote_addr == 0xdef0);
	CHECK(m.sqe(1).flush.length == 4096);
	CHECK(m.sqe(1).flush.type == SOFTRNIC_FLUSH_GLOBAL);
	CHECK(m.sqe(1).flush.level == SOFTRNIC_FLUSH_RANGE);
	CHECK(m.sqe(2).flush.length == 0xffffffffULL);
	CHECK(m.sqe(2).flush.type == 3);
	CHECK(m.sqe(2).flush.level == SOFTRNIC_FLUSH_MR);
	CHECK(sr_wc_opcode_of_sqe(m.sqe(1).opcode) == 8); /* IBV_WC_FLUSH of rdma-core 45 */
}

TEST_CASE("QP: bad FLUSH and ATOMIC_WRITE batches post nothing", "[provider][wqe][qp_ex][mpe]")
{
	fake_qp q(SR_QP_RC, false, 8);
	ibv_qp_ex *x = q.qpx();
	const uint64_t v = 7;
	struct bad {
		uint64_t len;
		uint8_t type, level;
	};
	for (const bad &b : {bad{8, 0, 0}, bad{8, 4, 0}, bad{8, 0x81, 0}, bad{8, 1, 2},
			     bad{8, 1, 0xff}, bad{0x100000000ULL, 1, 0}, bad{~0ULL, 1, 1}}) {
		INFO("len " << b.len << " type " << int{b.type} << " level " << int{b.level});
		ibv_wr_start(x);
		ibv_wr_atomic_write(x, 1, 8, &v);
		dv_wr_flush(x, 1, 0, b.len, b.type, b.level);
		CHECK(ibv_wr_complete(x) == EINVAL);
	}
	ibv_wr_start(x);
	ibv_wr_atomic_write(x, 1, 8, nullptr);
	CHECK(ibv_wr_complete(x) == EINVAL);
	CHECK(q.sqm.ctrl()->prod == 0);
	CHECK(q.doorbells().empty());

	/* ibv_post_send has no encoding for either */
	ibv_send_wr *badwr = nullptr;
	ibv_send_wr wr = make_wr(1, IBV_WR_ATOMIC_WRITE);
	CHECK(q.obj->post_send(&wr, &badwr) == EINVAL);
	wr = make_wr(1, static_cast<ibv_wr_opcode>(SOFTRNIC_WR_FLUSH));
	CHECK(q.obj->post_send(&wr, &badwr) == EINVAL);

	/* a QP created without the FLUSH send op: the batch fails */
	fake_qp nf(SR_QP_RC, false, 8);
	nf.obj->enable_qp_ex(qp_rc_send_ops & ~qp_ex_with_flush);
	ibv_qp_ex *y = nf.qpx();
	ibv_wr_start(y);
	dv_wr_flush(y, 1, 0, 8, SOFTRNIC_FLUSH_GLOBAL, SOFTRNIC_FLUSH_RANGE);
	CHECK(ibv_wr_complete(y) == EINVAL);
	CHECK(nf.sqm.ctrl()->prod == 0);

	/* UD has neither */
	fake_qp ud(SR_QP_UD, false, 8);
	ibv_qp_ex *u = ud.qpx();
	ibv_wr_start(u);
	ud.obj->builder().wr_atomic_write(1, 0, 1, 8, &v);
	CHECK(ibv_wr_complete(u) == EINVAL);

	/* an ibv_qp_ex of another provider is left alone */
	ibv_qp_ex foreign{};
	dv_wr_flush(&foreign, 1, 0, 8, SOFTRNIC_FLUSH_GLOBAL, SOFTRNIC_FLUSH_RANGE);
	dv_wr_flush(nullptr, 1, 0, 8, SOFTRNIC_FLUSH_GLOBAL, SOFTRNIC_FLUSH_RANGE);
}
