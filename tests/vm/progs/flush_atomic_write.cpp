// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrnic-mpe-test: RDMA FLUSH and ATOMIC WRITE (IBTA memory placement
 * extensions) between two RDMA devices, driven from one process that owns
 * both ends (so it can look at the responder's memory directly).  Used by
 * tests/vm/roce_flush_atomic_write.sh.
 *
 *   softrnic-mpe-test -a DEV -x GIDIDX -b DEV -y GIDIDX [--stress N] [--seed S]
 *                     [--skip-errors] [--peer-without-mpe]
 *
 * DEV a is the requester, DEV b the responder.  ATOMIC WRITE goes through
 * ibv_wr_atomic_write(), FLUSH through softrnicdv_wr_flush() (softrnicdv.h;
 * this program links the provider module).  Without --stress it runs every
 * case once:
 *   - success: ATOMIC WRITE of 8 bytes (byte-exact, neighbours untouched),
 *     FLUSH of a range, of a whole region (VA ignored), of zero bytes, on
 *     regions with only remote READ or only remote WRITE rights; completion
 *     opcodes IBV_WC_ATOMIC_WRITE and 8 (IBV_WC_FLUSH);
 *   - ordering: WRITEs then FLUSH: every byte there when the FLUSH
 *     completes; WRITEs then ATOMIC WRITE of a flag: the data is there as
 *     soon as the flag is; ATOMIC WRITE then WRITE of the same word: the
 *     WRITE wins; WRITE, READ, FLUSH, ATOMIC WRITE complete in order; 64
 *     FLUSH/ATOMIC WRITEs back to back beyond max_rd_atomic;
 *   - errors, each on a fresh QP pair, with the target's every byte
 *     checked afterwards: bad rkey, out of bounds, missing region rights,
 *     missing QP rights, misaligned ATOMIC WRITE, FLUSH for persistence ->
 *     IBV_WC_REM_ACCESS_ERR / IBV_WC_REM_INV_REQ_ERR, the next WR flushed
 *     (IBV_WC_WR_FLUSH_ERR), the responder's QP in ERR; local errors (bad
 *     type or level, a QP not created for FLUSH) -> ibv_wr_complete EINVAL.
 * --skip-errors leaves the error cases out (on a lossy link a lost NAK
 * turns into a retry timeout: the responder's QP is in ERR and answers
 * nothing more, as the spec says).
 * --stress N: N rounds of WRITE data, ATOMIC WRITE flag=A, WRITE flag=B,
 * FLUSH (and every 4th round a READ back), checked after the FLUSH
 * completes: the data exact, the flag B (a duplicate ATOMIC WRITE executed
 * again would have put A back).  Run under netem loss/duplicate/reorder.
 *
 * --peer-without-mpe: the responder (dev b) does not know the two opcodes
 * (rdma_rxe of Linux 6.1 drops them as unknown): each must end in
 * IBV_WC_RETRY_EXC_ERR with the target untouched, and a new QP pair then
 * moves WRITE and READ data exactly.
 *
 * Exit 0 if every check passed, 1 if one failed, 2 on a setup error.
 */
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <string>
#include <sys/mman.h>
#include <thread>
#include <vector>

#include "common.h"
#include "softrnicdv.h"

namespace
{

using srtest::check;
using srtest::checks;
using srtest::failures;
using srtest::fatal;

constexpr size_t tgt_size = 64 * 1024; /* the responder's buffer */
constexpr size_t flag_off = 60 * 1024; /* the flag word of the ordering checks */
constexpr size_t src_size = 256 * 1024;
constexpr int port = 1;

void *alloc_pages(size_t n)
{
	void *p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		fatal("mmap %zu: %s", n, std::strerror(errno));
	return p;
}

struct Dev {
	ibv_context *ctx = nullptr;
	ibv_pd *pd = nullptr;
	ibv_cq *cq = nullptr;
	int gid_index = 0;
	ibv_gid gid{};
};

Dev open_dev(const char *name, int gid_index)
{
	int n = 0;
	ibv_device **list = ibv_get_device_list(&n);
	if (!list)
		fatal("ibv_get_device_list: %s", std::strerror(errno));
	Dev d;
	for (int i = 0; i < n; i++)
		if (std::strcmp(ibv_get_device_name(list[i]), name) == 0)
			d.ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!d.ctx)
		fatal("no device %s", name);
	d.pd = ibv_alloc_pd(d.ctx);
	d.cq = ibv_create_cq(d.ctx, 256, nullptr, nullptr, 0);
	if (!d.pd || !d.cq)
		fatal("%s: PD/CQ: %s", name, std::strerror(errno));
	d.gid_index = gid_index;
	if (ibv_query_gid(d.ctx, port, gid_index, &d.gid))
		fatal("%s: GID %d: %s", name, gid_index, std::strerror(errno));
	return d;
}

ibv_mr *reg(Dev &d, void *p, size_t n, int access)
{
	ibv_mr *mr = ibv_reg_mr(d.pd, p, n, access);
	if (!mr)
		fatal("ibv_reg_mr(access %#x): %s", access, std::strerror(errno));
	return mr;
}

constexpr int all_remote =
    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;

struct PairOpts {
	int b_access = all_remote; /* the responder QP's access flags */
	bool flush_op = true;	   /* create the requester with FLUSH */
	uint8_t max_rd_atomic = 16;
	bool b_basic = false; /* responder QP: WRITE/READ/SEND ops only */
	uint8_t retry_cnt = 7;
};

ibv_qp *create_qp(Dev &d, bool flush_op, bool basic = false)
{
	ibv_qp_init_attr_ex a{};
	a.send_cq = d.cq;
	a.recv_cq = d.cq;
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = 128;
	a.cap.max_recv_wr = 1;
	a.cap.max_send_sge = 2;
	a.cap.max_recv_sge = 1;
	a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	a.pd = d.pd;
	a.send_ops_flags =
	    IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_SEND;
	if (!basic)
		a.send_ops_flags |=
		    IBV_QP_EX_WITH_ATOMIC_WRITE | (flush_op ? SOFTRNICDV_QP_EX_WITH_FLUSH : 0);
	ibv_qp *qp = ibv_create_qp_ex(d.ctx, &a);
	if (!qp)
		fatal("ibv_create_qp_ex: %s", std::strerror(errno));
	return qp;
}

void to_rts(ibv_qp *qp, const Dev &me, const Dev &peer, uint32_t peer_qpn, int access,
	    uint8_t rd_atomic, uint8_t retry_cnt = 7)
{
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.port_num = port;
	a.qp_access_flags = access;
	if (int e = ibv_modify_qp(
		qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		fatal("INIT: %s", std::strerror(e));
	a = {};
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer_qpn;
	a.rq_psn = 0x100;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer.gid;
	a.ah_attr.grh.sgid_index = (uint8_t)me.gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = port;
	if (int e =
		ibv_modify_qp(qp, &a,
			      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		fatal("RTR: %s", std::strerror(e));
	a = {};
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14; /* 67 ms */
	a.retry_cnt = retry_cnt;
	a.rnr_retry = 7;
	a.sq_psn = 0x100;
	a.max_rd_atomic = rd_atomic;
	if (int e = ibv_modify_qp(qp, &a,
				  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				      IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		fatal("RTS: %s", std::strerror(e));
}

struct Pair {
	ibv_qp *a = nullptr; /* requester, on dev a */
	ibv_qp *b = nullptr; /* responder, on dev b */
	ibv_qp_ex *x = nullptr;
};

Pair make_pair(Dev &A, Dev &B, const PairOpts &o = {})
{
	Pair p;
	p.a = create_qp(A, o.flush_op);
	p.b = create_qp(B, true, o.b_basic);
	to_rts(p.a, A, B, p.b->qp_num, all_remote, o.max_rd_atomic, o.retry_cnt);
	to_rts(p.b, B, A, p.a->qp_num, o.b_access, o.max_rd_atomic);
	p.x = ibv_qp_to_qp_ex(p.a);
	return p;
}

void drain(ibv_cq *cq)
{
	ibv_wc wc[16];
	while (ibv_poll_cq(cq, 16, wc) > 0)
		;
}

void destroy_pair(Pair &p, Dev &A, Dev &B)
{
	ibv_destroy_qp(p.a);
	ibv_destroy_qp(p.b);
	drain(A.cq);
	drain(B.cq);
	p = {};
}

/* The next completion of cq, or status -1 on a timeout. */
ibv_wc poll_one(ibv_cq *cq, int seconds = 20)
{
	ibv_wc wc{};
	const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
	for (;;) {
		int n = ibv_poll_cq(cq, 1, &wc);
		if (n < 0)
			fatal("ibv_poll_cq: %d", n);
		if (n == 1)
			return wc;
		if (std::chrono::steady_clock::now() > end) {
			wc = {};
			wc.status = static_cast<ibv_wc_status>(-1);
			return wc;
		}
		std::this_thread::yield();
	}
}

const char *st(int s)
{
	return s < 0 ? "timeout" : ibv_wc_status_str(static_cast<ibv_wc_status>(s));
}

/* Expect a successful completion of wr_id with opcode. */
bool expect_ok(ibv_cq *cq, uint64_t wr_id, int opcode, const char *what)
{
	ibv_wc wc = poll_one(cq);
	return check(wc.status == IBV_WC_SUCCESS && wc.wr_id == wr_id && (int)wc.opcode == opcode,
		     "%s: completion wr_id %" PRIu64 " status %s opcode %d, want wr_id %" PRIu64
		     " success opcode %d",
		     what, wc.wr_id, st(wc.status), (int)wc.opcode, wr_id, opcode);
}

/* ---------------------------------------------------------------- memory */

struct Mem {
	uint8_t *tgt = nullptr;	 /* responder (dev b) */
	uint8_t *src = nullptr;	 /* requester (dev a) */
	uint8_t *rbuf = nullptr; /* requester READ destination */
	ibv_mr *rw = nullptr, *ro = nullptr, *wo = nullptr, *none = nullptr, *sub = nullptr;
	ibv_mr *src_mr = nullptr, *rbuf_mr = nullptr;
};

uint8_t guard_byte(size_t i)
{
	return static_cast<uint8_t>(i * 7 + 3);
}

void fill_guard(Mem &m)
{
	for (size_t i = 0; i < tgt_size; i++)
		m.tgt[i] = guard_byte(i);
}

/* Every byte of the target still the guard, except [skip, skip + n). */
bool guard_intact(const Mem &m, const char *what, size_t skip = 0, size_t n = 0)
{
	for (size_t i = 0; i < tgt_size; i++) {
		if (i >= skip && i < skip + n)
			continue;
		if (m.tgt[i] != guard_byte(i))
			return check(false, "%s: target byte %zu changed (%#x, guard %#x)", what, i,
				     m.tgt[i], guard_byte(i));
	}
	return check(true, "%s", what);
}

uint8_t data_byte(uint64_t seed, size_t i)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + i * 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 29;
	return static_cast<uint8_t>(x * 0x94d049bb133111ebULL >> 56);
}

uint64_t load_acquire(const uint8_t *p)
{
	return reinterpret_cast<const std::atomic<uint64_t> *>(p)->load(std::memory_order_acquire);
}

/* ----------------------------------------------------------------- cases */

void case_success(Dev &A, Dev &B, Mem &m)
{
	Pair p = make_pair(A, B);
	ibv_qp_ex *x = p.x;
	fill_guard(m);

	/* ATOMIC WRITE: the 8 bytes as given, nothing around them */
	const uint8_t val[8] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
	const size_t off = 4096 + 8 * 5;
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(x, m.rw->rkey, (uintptr_t)m.tgt + off, val);
	check(ibv_wr_complete(x) == 0, "ATOMIC WRITE post");
	if (expect_ok(A.cq, 1, IBV_WC_ATOMIC_WRITE, "ATOMIC WRITE")) {
		check(std::memcmp(m.tgt + off, val, 8) == 0, "ATOMIC WRITE: target bytes wrong");
		guard_intact(m, "ATOMIC WRITE", off, 8);
	}
	std::printf("ok: ATOMIC WRITE of 8 bytes\n");

	/* FLUSH: range, whole region (VA ignored), zero length; READ-only and
	 * WRITE-only regions */
	struct F {
		const char *what;
		uint32_t rkey;
		uint64_t va;
		size_t len;
		uint8_t level;
	};
	const F flushes[] = {
	    {"FLUSH range", m.rw->rkey, (uintptr_t)m.tgt + 100, 5000, SOFTRNICDV_FLUSH_RANGE},
	    {"FLUSH whole region", m.rw->rkey, 0x1234, 0, SOFTRNICDV_FLUSH_MR},
	    {"FLUSH zero length", m.rw->rkey, (uintptr_t)m.tgt + 64, 0, SOFTRNICDV_FLUSH_RANGE},
	    {"FLUSH region with remote READ only", m.ro->rkey, (uintptr_t)m.tgt, tgt_size,
	     SOFTRNICDV_FLUSH_RANGE},
	    {"FLUSH region with remote WRITE only", m.wo->rkey, (uintptr_t)m.tgt, tgt_size,
	     SOFTRNICDV_FLUSH_RANGE},
	    {"FLUSH whole sub-region", m.sub->rkey, (uintptr_t)m.tgt, 1, SOFTRNICDV_FLUSH_MR},
	};
	uint64_t id = 10;
	for (const F &f : flushes) {
		ibv_wr_start(x);
		x->wr_id = id;
		x->wr_flags = IBV_SEND_SIGNALED;
		softrnicdv_wr_flush(x, f.rkey, f.va, f.len, SOFTRNICDV_FLUSH_GLOBAL, f.level);
		check(ibv_wr_complete(x) == 0, "%s: post", f.what);
		if (expect_ok(A.cq, id, SOFTRNICDV_WC_FLUSH, f.what))
			std::printf("ok: %s\n", f.what);
		id++;
	}
	guard_intact(m, "FLUSHes", off, 8);
	destroy_pair(p, A, B);
}

void case_ordering(Dev &A, Dev &B, Mem &m)
{
	Pair p = make_pair(A, B);
	ibv_qp_ex *x = p.x;
	fill_guard(m);

	/* WRITEs (multi-packet) then FLUSH: all there once it completes */
	for (size_t i = 0; i < src_size; i++)
		m.src[i] = data_byte(1, i);
	ibv_wr_start(x);
	const size_t chunk = 12 * 1024 + 5;
	for (int i = 0; i < 4; i++) {
		x->wr_id = 100 + i;
		x->wr_flags = 0;
		ibv_wr_rdma_write(x, m.rw->rkey, (uintptr_t)m.tgt + i * chunk);
		ibv_wr_set_sge(x, m.src_mr->lkey, (uintptr_t)m.src + i * chunk, chunk);
	}
	x->wr_id = 104;
	x->wr_flags = IBV_SEND_SIGNALED;
	softrnicdv_wr_flush(x, m.rw->rkey, (uintptr_t)m.tgt, 4 * chunk, SOFTRNICDV_FLUSH_GLOBAL,
			    SOFTRNICDV_FLUSH_RANGE);
	check(ibv_wr_complete(x) == 0, "WRITEs + FLUSH: post");
	if (expect_ok(A.cq, 104, SOFTRNICDV_WC_FLUSH, "WRITEs + FLUSH")) {
		check(std::memcmp(m.tgt, m.src, 4 * chunk) == 0,
		      "WRITEs + FLUSH: data not all there when the FLUSH completed");
		guard_intact(m, "WRITEs + FLUSH", 0, 4 * chunk);
	}
	std::printf("ok: WRITEs then FLUSH: every byte placed when the FLUSH completes\n");

	/* WRITEs then ATOMIC WRITE of a flag: the data is there as soon as the
	 * flag is (watched here, before any completion) */
	for (size_t i = 0; i < src_size; i++)
		m.src[i] = data_byte(2, i);
	const uint64_t flag = 0x600df1a6f1a60001ULL;
	ibv_wr_start(x);
	for (int i = 0; i < 4; i++) {
		x->wr_id = 200 + i;
		x->wr_flags = 0;
		ibv_wr_rdma_write(x, m.rw->rkey, (uintptr_t)m.tgt + i * chunk);
		ibv_wr_set_sge(x, m.src_mr->lkey, (uintptr_t)m.src + i * chunk, chunk);
	}
	x->wr_id = 204;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(x, m.rw->rkey, (uintptr_t)m.tgt + flag_off, &flag);
	check(ibv_wr_complete(x) == 0, "WRITEs + ATOMIC WRITE: post");
	const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
	bool seen = false;
	while (std::chrono::steady_clock::now() < end)
		if (load_acquire(m.tgt + flag_off) == flag) {
			seen = true;
			break;
		}
	check(seen, "WRITEs + ATOMIC WRITE: flag never appeared");
	if (seen)
		check(std::memcmp(m.tgt, m.src, 4 * chunk) == 0,
		      "WRITEs + ATOMIC WRITE: flag visible before the data written earlier");
	expect_ok(A.cq, 204, IBV_WC_ATOMIC_WRITE, "WRITEs + ATOMIC WRITE");
	std::printf("ok: WRITEs then ATOMIC WRITE: data visible whenever the flag is\n");

	/* ATOMIC WRITE then WRITE of the same word: the WRITE wins */
	const uint64_t a = 0xaaaaaaaa00000001ULL, b = 0xbbbbbbbb00000002ULL;
	std::memcpy(m.src, &b, 8);
	ibv_wr_start(x);
	x->wr_id = 300;
	x->wr_flags = 0;
	ibv_wr_atomic_write(x, m.rw->rkey, (uintptr_t)m.tgt + flag_off, &a);
	x->wr_id = 301;
	ibv_wr_rdma_write(x, m.rw->rkey, (uintptr_t)m.tgt + flag_off);
	ibv_wr_set_sge(x, m.src_mr->lkey, (uintptr_t)m.src, 8);
	x->wr_id = 302;
	x->wr_flags = IBV_SEND_SIGNALED;
	softrnicdv_wr_flush(x, m.rw->rkey, (uintptr_t)m.tgt + flag_off, 8, SOFTRNICDV_FLUSH_GLOBAL,
			    SOFTRNICDV_FLUSH_RANGE);
	check(ibv_wr_complete(x) == 0, "ATOMIC WRITE + WRITE: post");
	if (expect_ok(A.cq, 302, SOFTRNICDV_WC_FLUSH, "ATOMIC WRITE + WRITE + FLUSH"))
		check(load_acquire(m.tgt + flag_off) == b,
		      "ATOMIC WRITE + WRITE: flag %#" PRIx64 ", want the WRITE's %#" PRIx64,
		      load_acquire(m.tgt + flag_off), b);
	std::printf("ok: ATOMIC WRITE then WRITE of the same word: the WRITE wins\n");

	/* WRITE, READ, FLUSH, ATOMIC WRITE: completions in posting order, the
	 * READ sees the WRITE */
	for (size_t i = 0; i < 3000; i++)
		m.src[i] = data_byte(3, i);
	std::memset(m.rbuf, 0, 3000);
	const uint64_t c = 0xc0c0c0c0c0c0c0c0ULL;
	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_SIGNALED;
	x->wr_id = 400;
	ibv_wr_rdma_write(x, m.rw->rkey, (uintptr_t)m.tgt + 8192);
	ibv_wr_set_sge(x, m.src_mr->lkey, (uintptr_t)m.src, 3000);
	x->wr_id = 401;
	ibv_wr_rdma_read(x, m.rw->rkey, (uintptr_t)m.tgt + 8192);
	ibv_wr_set_sge(x, m.rbuf_mr->lkey, (uintptr_t)m.rbuf, 3000);
	x->wr_id = 402;
	softrnicdv_wr_flush(x, m.rw->rkey, 0, 0, SOFTRNICDV_FLUSH_GLOBAL, SOFTRNICDV_FLUSH_MR);
	x->wr_id = 403;
	ibv_wr_atomic_write(x, m.rw->rkey, (uintptr_t)m.tgt + flag_off, &c);
	check(ibv_wr_complete(x) == 0, "mixed: post");
	const int ops[] = {IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ, SOFTRNICDV_WC_FLUSH,
			   IBV_WC_ATOMIC_WRITE};
	bool ok = true;
	for (int i = 0; i < 4; i++)
		ok &= expect_ok(A.cq, 400 + i, ops[i], "WRITE, READ, FLUSH, ATOMIC WRITE in order");
	if (ok) {
		check(std::memcmp(m.rbuf, m.src, 3000) == 0, "mixed: READ did not see the WRITE");
		check(load_acquire(m.tgt + flag_off) == c, "mixed: ATOMIC WRITE value");
	}
	std::printf("ok: WRITE, READ, FLUSH, ATOMIC WRITE complete in order\n");

	/* 64 back to back: beyond max_rd_atomic (4 here), every one answered */
	destroy_pair(p, A, B);
	PairOpts o;
	o.max_rd_atomic = 4;
	p = make_pair(A, B, o);
	x = p.x;
	ibv_wr_start(x);
	for (uint64_t i = 0; i < 64; i++) {
		x->wr_id = 500 + i;
		x->wr_flags = IBV_SEND_SIGNALED;
		if (i % 2) {
			softrnicdv_wr_flush(x, m.rw->rkey, (uintptr_t)m.tgt, tgt_size,
					    SOFTRNICDV_FLUSH_GLOBAL, SOFTRNICDV_FLUSH_RANGE);
		} else {
			const uint64_t v = i;
			ibv_wr_atomic_write(x, m.rw->rkey, (uintptr_t)m.tgt + 8 * i, &v);
		}
	}
	check(ibv_wr_complete(x) == 0, "64 back to back: post");
	ok = true;
	for (uint64_t i = 0; i < 64 && ok; i++)
		ok = expect_ok(A.cq, 500 + i,
			       i % 2 ? int{SOFTRNICDV_WC_FLUSH} : int{IBV_WC_ATOMIC_WRITE},
			       "64 FLUSH/ATOMIC WRITEs");
	for (uint64_t i = 0; i < 64 && ok; i += 2)
		check(load_acquire(m.tgt + 8 * i) == i, "back to back: word %" PRIu64, i);
	std::printf("ok: 64 FLUSH/ATOMIC WRITEs beyond max_rd_atomic 4, in order\n");
	destroy_pair(p, A, B);
}

/* An operation that must fail remotely with want; the WR after it must be
 * flushed; the target must be untouched; the responder's QP ends in ERR. */
void expect_remote_error(Dev &A, Dev &B, Mem &m, const char *what, const PairOpts &o,
			 const std::function<void(ibv_qp_ex *)> &post, ibv_wc_status want)
{
	Pair p = make_pair(A, B, o);
	ibv_qp_ex *x = p.x;
	fill_guard(m);
	const uint64_t later = 0x1a7e1a7e1a7e1a7eULL;
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	post(x);
	x->wr_id = 2;
	ibv_wr_atomic_write(x, m.rw->rkey, (uintptr_t)m.tgt + 16, &later);
	check(ibv_wr_complete(x) == 0, "%s: post", what);
	ibv_wc wc = poll_one(A.cq);
	check(wc.wr_id == 1 && wc.status == want, "%s: wr_id %" PRIu64 " status %s, want %s", what,
	      wc.wr_id, st(wc.status), ibv_wc_status_str(want));
	wc = poll_one(A.cq);
	check(wc.wr_id == 2 && wc.status == IBV_WC_WR_FLUSH_ERR,
	      "%s: next WR: wr_id %" PRIu64 " status %s, want flushed", what, wc.wr_id,
	      st(wc.status));
	guard_intact(m, what);
	/* the responder moved its QP to ERR */
	ibv_qp_attr qa{};
	ibv_qp_init_attr qi{};
	bool err = false;
	for (int i = 0; i < 200 && !err; i++) {
		if (ibv_query_qp(p.b, &qa, IBV_QP_STATE, &qi) == 0 && qa.qp_state == IBV_QPS_ERR)
			err = true;
		else
			std::this_thread::sleep_for(std::chrono::milliseconds(10));
	}
	check(err, "%s: responder QP state %d, want ERR", what, (int)qa.qp_state);
	std::printf("ok: %s -> %s, target untouched\n", what, ibv_wc_status_str(want));
	destroy_pair(p, A, B);
}

void case_errors(Dev &A, Dev &B, Mem &m)
{
	const uint64_t v = 0xdeaddeaddeaddeadULL;
	const uintptr_t t = (uintptr_t)m.tgt;
	const PairOpts def;
	const uint32_t bogus = m.rw->rkey ^ 0x5a5a00;
	auto aw = [&](uint32_t rkey, uintptr_t va) {
		return [=, &v](ibv_qp_ex *x) { ibv_wr_atomic_write(x, rkey, va, &v); };
	};
	auto fl = [&](uint32_t rkey, uintptr_t va, size_t len, uint8_t type, uint8_t level) {
		return [=](ibv_qp_ex *x) { softrnicdv_wr_flush(x, rkey, va, len, type, level); };
	};
	const auto G = SOFTRNICDV_FLUSH_GLOBAL;
	const auto R = SOFTRNICDV_FLUSH_RANGE;

	expect_remote_error(A, B, m, "ATOMIC WRITE, bad rkey", def, aw(bogus, t + 64),
			    IBV_WC_REM_ACCESS_ERR);
	expect_remote_error(A, B, m, "ATOMIC WRITE, past the region's end", def,
			    aw(m.rw->rkey, t + tgt_size), IBV_WC_REM_ACCESS_ERR);
	expect_remote_error(A, B, m, "ATOMIC WRITE, before the region", def, aw(m.rw->rkey, t - 8),
			    IBV_WC_REM_ACCESS_ERR);
	expect_remote_error(A, B, m, "ATOMIC WRITE, region without remote WRITE", def,
			    aw(m.ro->rkey, t + 64), IBV_WC_REM_ACCESS_ERR);
	expect_remote_error(A, B, m, "ATOMIC WRITE, region without remote access", def,
			    aw(m.none->rkey, t + 64), IBV_WC_REM_ACCESS_ERR);
	PairOpts no_write;
	no_write.b_access = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	expect_remote_error(A, B, m, "ATOMIC WRITE, QP without remote WRITE", no_write,
			    aw(m.rw->rkey, t + 64), IBV_WC_REM_ACCESS_ERR);
	expect_remote_error(A, B, m, "ATOMIC WRITE, misaligned", def, aw(m.rw->rkey, t + 68),
			    IBV_WC_REM_INV_REQ_ERR);

	expect_remote_error(A, B, m, "FLUSH, bad rkey", def, fl(bogus, t, 64, G, R),
			    IBV_WC_REM_ACCESS_ERR);
	expect_remote_error(A, B, m, "FLUSH whole region, bad rkey", def,
			    fl(bogus, 0, 0, G, SOFTRNICDV_FLUSH_MR), IBV_WC_REM_ACCESS_ERR);
	expect_remote_error(A, B, m, "FLUSH, range past the region's end", def,
			    fl(m.rw->rkey, t + 4096, tgt_size, G, R), IBV_WC_REM_ACCESS_ERR);
	expect_remote_error(A, B, m, "FLUSH, region without remote access", def,
			    fl(m.none->rkey, t, 64, G, R), IBV_WC_REM_ACCESS_ERR);
	PairOpts atomic_only;
	atomic_only.b_access = IBV_ACCESS_REMOTE_ATOMIC;
	expect_remote_error(A, B, m, "FLUSH, QP without remote READ or WRITE", atomic_only,
			    fl(m.rw->rkey, t, 64, G, R), IBV_WC_REM_ACCESS_ERR);
	expect_remote_error(A, B, m, "FLUSH for persistence", def,
			    fl(m.rw->rkey, t, 64, SOFTRNICDV_FLUSH_PERSISTENT, R),
			    IBV_WC_REM_ACCESS_ERR);
	expect_remote_error(
	    A, B, m, "FLUSH for persistence and visibility", def,
	    fl(m.rw->rkey, t, 64, G | SOFTRNICDV_FLUSH_PERSISTENT, SOFTRNICDV_FLUSH_MR),
	    IBV_WC_REM_ACCESS_ERR);

	/* local: refused by ibv_wr_complete, nothing posted, QP still fine */
	Pair p = make_pair(A, B);
	ibv_qp_ex *x = p.x;
	struct L {
		size_t len;
		uint8_t type, level;
	};
	for (const L &l : {L{8, 0, 0}, L{8, 4, 0}, L{8, 1, 2}, L{size_t{1} << 32, 1, 0}}) {
		ibv_wr_start(x);
		softrnicdv_wr_flush(x, m.rw->rkey, t, l.len, l.type, l.level);
		check(ibv_wr_complete(x) == EINVAL, "FLUSH len %zu type %u level %u: not refused",
		      l.len, l.type, l.level);
	}
	ibv_wr_start(x);
	ibv_wr_atomic_write(x, m.rw->rkey, t, nullptr);
	check(ibv_wr_complete(x) == EINVAL, "ATOMIC WRITE without data: not refused");
	ibv_wr_start(x);
	x->wr_id = 9;
	x->wr_flags = IBV_SEND_SIGNALED;
	softrnicdv_wr_flush(x, m.rw->rkey, t, 8, G, R);
	check(ibv_wr_complete(x) == 0, "FLUSH after refused batches: post");
	expect_ok(A.cq, 9, SOFTRNICDV_WC_FLUSH, "FLUSH after refused batches");
	destroy_pair(p, A, B);
	PairOpts noflush;
	noflush.flush_op = false;
	p = make_pair(A, B, noflush);
	ibv_wr_start(p.x);
	softrnicdv_wr_flush(p.x, m.rw->rkey, t, 8, G, R);
	check(ibv_wr_complete(p.x) == EINVAL, "FLUSH on a QP created without it: not refused");
	destroy_pair(p, A, B);
	std::printf("ok: bad type, level, length, data, and a QP without FLUSH: EINVAL\n");
}

/* A responder that drops both opcodes as unknown (Linux 6.1's rxe). */
void case_peer_without_mpe(Dev &A, Dev &B, Mem &m)
{
	PairOpts o;
	o.b_basic = true;
	o.retry_cnt = 2;
	const uint64_t v = 0x5555aaaa5555aaaaULL;
	for (int op = 0; op < 2; op++) {
		const char *what =
		    op ? "FLUSH to a peer without it" : "ATOMIC WRITE to a peer without it";
		Pair p = make_pair(A, B, o);
		fill_guard(m);
		ibv_wr_start(p.x);
		p.x->wr_id = 1;
		p.x->wr_flags = IBV_SEND_SIGNALED;
		if (op)
			softrnicdv_wr_flush(p.x, m.rw->rkey, (uintptr_t)m.tgt, 64,
					    SOFTRNICDV_FLUSH_GLOBAL, SOFTRNICDV_FLUSH_RANGE);
		else
			ibv_wr_atomic_write(p.x, m.rw->rkey, (uintptr_t)m.tgt + 64, &v);
		check(ibv_wr_complete(p.x) == 0, "%s: post", what);
		ibv_wc wc = poll_one(A.cq, 60);
		check(wc.wr_id == 1 && wc.status == IBV_WC_RETRY_EXC_ERR,
		      "%s: wr_id %" PRIu64 " status %s, want retry exceeded", what, wc.wr_id,
		      st(wc.status));
		guard_intact(m, what);
		std::printf("ok: %s -> %s, target untouched\n", what, st(wc.status));
		destroy_pair(p, A, B);
	}
	/* and ordinary traffic on a new pair is exact */
	Pair p = make_pair(A, B, o);
	const size_t len = 40000;
	for (size_t i = 0; i < len; i++)
		m.src[i] = data_byte(9, i);
	std::memset(m.rbuf, 0, len);
	ibv_wr_start(p.x);
	p.x->wr_flags = IBV_SEND_SIGNALED;
	p.x->wr_id = 1;
	ibv_wr_rdma_write(p.x, m.rw->rkey, (uintptr_t)m.tgt);
	ibv_wr_set_sge(p.x, m.src_mr->lkey, (uintptr_t)m.src, len);
	p.x->wr_id = 2;
	ibv_wr_rdma_read(p.x, m.rw->rkey, (uintptr_t)m.tgt);
	ibv_wr_set_sge(p.x, m.rbuf_mr->lkey, (uintptr_t)m.rbuf, len);
	check(ibv_wr_complete(p.x) == 0, "WRITE + READ: post");
	if (expect_ok(A.cq, 1, IBV_WC_RDMA_WRITE, "WRITE after the failures") &&
	    expect_ok(A.cq, 2, IBV_WC_RDMA_READ, "READ after the failures")) {
		check(std::memcmp(m.tgt, m.src, len) == 0, "WRITE data wrong at the peer");
		check(std::memcmp(m.rbuf, m.src, len) == 0, "READ data wrong");
	}
	std::printf("ok: WRITE and READ on a new QP pair afterwards\n");
	destroy_pair(p, A, B);
}

void stress(Dev &A, Dev &B, Mem &m, int rounds, uint64_t seed)
{
	Pair p = make_pair(A, B);
	ibv_qp_ex *x = p.x;
	const auto t0 = std::chrono::steady_clock::now();
	for (int r = 0; r < rounds && !failures; r++) {
		const uint64_t s = seed * 1000003 + r;
		const size_t len = 1 + data_byte(s, 1000000) * 64 + data_byte(s, 1000001);
		const size_t off = (data_byte(s, 1000002) * 97) % (flag_off - len - 8);
		for (size_t i = 0; i < len; i++)
			m.src[i] = data_byte(s, i);
		const uint64_t a = 0xa000000000000000ULL | s, b = 0xb000000000000000ULL | s;
		std::memcpy(m.src + src_size - 8, &b, 8);
		ibv_wr_start(x);
		x->wr_flags = 0;
		x->wr_id = 1;
		ibv_wr_rdma_write(x, m.rw->rkey, (uintptr_t)m.tgt + off);
		ibv_wr_set_sge(x, m.src_mr->lkey, (uintptr_t)m.src, len);
		x->wr_id = 2;
		ibv_wr_atomic_write(x, m.rw->rkey, (uintptr_t)m.tgt + flag_off, &a);
		x->wr_id = 3;
		ibv_wr_rdma_write(x, m.rw->rkey, (uintptr_t)m.tgt + flag_off);
		ibv_wr_set_sge(x, m.src_mr->lkey, (uintptr_t)m.src + src_size - 8, 8);
		const bool rd = r % 4 == 3;
		if (rd) {
			x->wr_id = 4;
			ibv_wr_rdma_read(x, m.rw->rkey, (uintptr_t)m.tgt + off);
			ibv_wr_set_sge(x, m.rbuf_mr->lkey, (uintptr_t)m.rbuf, len);
		}
		x->wr_id = 5;
		x->wr_flags = IBV_SEND_SIGNALED;
		softrnicdv_wr_flush(x, m.rw->rkey, (uintptr_t)m.tgt + off, len,
				    SOFTRNICDV_FLUSH_GLOBAL,
				    r % 2 ? SOFTRNICDV_FLUSH_MR : SOFTRNICDV_FLUSH_RANGE);
		check(ibv_wr_complete(x) == 0, "round %d: post", r);
		if (!expect_ok(A.cq, 5, SOFTRNICDV_WC_FLUSH, "stress FLUSH"))
			break;
		check(std::memcmp(m.tgt + off, m.src, len) == 0, "round %d: data wrong", r);
		if (rd)
			check(std::memcmp(m.rbuf, m.src, len) == 0, "round %d: READ data wrong", r);
		check(load_acquire(m.tgt + flag_off) == b,
		      "round %d: flag %#" PRIx64 ", want %#" PRIx64 " (ATOMIC WRITE re-executed?)",
		      r, load_acquire(m.tgt + flag_off), b);
		/* the duplicates of this round may still be on their way: they
		 * must not change the flag in the next one either */
	}
	/* let late duplicates arrive, then look at the last flag again */
	std::this_thread::sleep_for(std::chrono::milliseconds(300));
	const double secs =
	    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	if (!failures) {
		const uint64_t b = 0xb000000000000000ULL | (seed * 1000003 + rounds - 1);
		check(load_acquire(m.tgt + flag_off) == b,
		      "after the rounds: flag changed by a late "
		      "duplicate");
		std::printf("ok: %d rounds of WRITE, ATOMIC WRITE, WRITE, FLUSH in %.1f s\n",
			    rounds, secs);
	}
	destroy_pair(p, A, B);
}

} // namespace

int main(int argc, char **argv)
{
	const char *dev_a = nullptr, *dev_b = nullptr;
	int gid_a = -1, gid_b = -1, rounds = 0, skip_errors = 0, no_mpe = 0;
	uint64_t seed = 1;
	srtest::log_prefix = "mpe";
	static const option longopts[] = {{"stress", required_argument, nullptr, 's'},
					  {"seed", required_argument, nullptr, 'S'},
					  {"skip-errors", no_argument, &skip_errors, 1},
					  {"peer-without-mpe", no_argument, &no_mpe, 1},
					  {nullptr, 0, nullptr, 0}};
	int c;
	while ((c = getopt_long(argc, argv, "a:b:x:y:", longopts, nullptr)) != -1) {
		switch (c) {
		case 'a':
			dev_a = optarg;
			break;
		case 'b':
			dev_b = optarg;
			break;
		case 'x':
			gid_a = std::atoi(optarg);
			break;
		case 'y':
			gid_b = std::atoi(optarg);
			break;
		case 's':
			rounds = std::atoi(optarg);
			break;
		case 'S':
			seed = std::strtoull(optarg, nullptr, 0);
			break;
		case 0:
			break;
		default:
			std::fprintf(stderr,
				     "usage: %s -a DEV -x GID -b DEV -y GID [--stress N] "
				     "[--seed S] [--skip-errors] [--peer-without-mpe]\n",
				     argv[0]);
			return 2;
		}
	}
	if (!dev_a || !dev_b || gid_a < 0 || gid_b < 0)
		fatal("need -a DEV -x GID -b DEV -y GID");

	Dev A = open_dev(dev_a, gid_a);
	Dev B = open_dev(dev_b, gid_b);
	Mem m;
	m.tgt = static_cast<uint8_t *>(alloc_pages(tgt_size));
	m.src = static_cast<uint8_t *>(alloc_pages(src_size));
	m.rbuf = static_cast<uint8_t *>(alloc_pages(src_size));
	m.rw = reg(B, m.tgt, tgt_size, IBV_ACCESS_LOCAL_WRITE | all_remote);
	m.ro = reg(B, m.tgt, tgt_size, IBV_ACCESS_REMOTE_READ);
	m.wo = reg(B, m.tgt, tgt_size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	m.none = reg(B, m.tgt, tgt_size, IBV_ACCESS_LOCAL_WRITE);
	m.sub = reg(B, m.tgt + 4096, 4096, IBV_ACCESS_REMOTE_READ);
	m.src_mr = reg(A, m.src, src_size, IBV_ACCESS_LOCAL_WRITE);
	m.rbuf_mr = reg(A, m.rbuf, src_size, IBV_ACCESS_LOCAL_WRITE);

	if (no_mpe) {
		case_peer_without_mpe(A, B, m);
	} else if (rounds) {
		stress(A, B, m, rounds, seed);
	} else {
		case_success(A, B, m);
		case_ordering(A, B, m);
		if (!skip_errors)
			case_errors(A, B, m);
	}
	std::printf("mpe: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
