// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrnic-rcsem: IBTA RC semantics between two processes, each end any
 * RDMA device (softrnic roce, rdma_rxe, hardware).  Used by
 * tests/vm/roce_access.sh, roce_rnr.sh and roce_large.sh.
 *
 *   server (responder):  softrnic-rcsem -d DEV [options]
 *   client (requester):  softrnic-rcsem -d DEV [options] --cases LIST SERVER
 *
 * The client drives; the server executes its commands over a TCP side
 * channel.  Every case gets fresh PDs, MRs, CQs and QPs on both ends (an
 * error case leaves them in ERR).  The server's buffer is 64 KiB of
 * regions, each its own MR, filled with a keyed guard pattern:
 *
 *   FULL    local write, remote write/read/atomic, MW bind
 *   RO      remote read only           WO      remote write only
 *   NOATOM  remote write and read      PD2     full rights, another PD
 *   MW      holds a type 2 window      RECV    receive buffers
 *
 * An error case posts the bad request and after it a valid 8-byte WRITE
 * to FULL, then checks: the requester's completion status, the WRITE
 * flushed (IBV_WC_WR_FLUSH_ERR), the requester's QP in ERR; on the
 * responder: its QP state, its receive completions (a SEND that fails
 * consumes its receive with an error, the rest are flushed), and every
 * byte of its buffer still the guard (so neither the bad request nor the
 * flushed WRITE wrote anything).  Positive cases check the data instead.
 *
 * Cases (--cases takes names or the groups access, rnr, inv, sge, large):
 *  access: bad rkey (WRITE, READ, atomic), out of bounds (before the
 *   start, past the end, READ past the end, atomic past the end, a length
 *   that wraps 64-bit), MR without the right (WRITE, READ, atomic), QP
 *   without the right (WRITE, READ, atomic), PD mismatch (WRITE, READ),
 *   a type 2 MW's rkey after LOCAL_INV and outside its window, a SEND
 *   longer than the receive, a misaligned atomic, a message longer than
 *   the device's max_msg_sz (local length error, nothing on the wire);
 *   and a zero-length READ/WRITE with a bad rkey, which must succeed (no
 *   R_Key check without data).
 *  rnr: no receive posted, rnr_retry 0..6 with min_rnr_timer 40.96 ms:
 *   IBV_WC_RNR_RETRY_EXC_ERR after rnr_retry + 1 RNR NAKs (the devices'
 *   counters) and at least rnr_retry timer periods; rnr_retry 7: a
 *   receive posted late completes the SEND; the budget is per message
 *   (rnr_retry 2, three SENDs each meeting an RNR NAK all complete).
 *  inv: SEND_WITH_INV of a bound type 2 MW (IBV_WC_WITH_INV and
 *   invalidated_rkey at the receiver, the rkey refused afterwards); of an
 *   rkey that names nothing and of a plain MR's rkey (errors).
 *  sge: max_send_sge SGEs in a SEND (and max_recv_sge in its receive)
 *   move the right bytes; one more is refused by ibv_post_send /
 *   ibv_post_recv with EINVAL and nothing posted.
 *  large: WRITE, READ and SEND of 2^31 bytes (server with --large): both
 *   ends' buffers are a small memfd mapped again and again, the local
 *   side 32 SGEs over the same 64 MiB; checked by content and byte_len;
 *   read-psn-span: a 2 GiB READ at path MTU 256 (2^23 PSNs, one more
 *   than may be outstanding) ends at once in a local length error.
 *
 * --rxe-responder accepts what Linux 6.1's rdma_rxe does as responder
 * where it departs from the spec (each departure is printed as NOTE).
 *
 * Output: one line per case, "rcsem: case NAME ok" or "... FAILED: why",
 * and last "rcsem: N cases ok, N failed".  Exit 0 only if all passed.
 */
#include <algorithm>
#include <cinttypes>
#include <fcntl.h>
#include <functional>
#include <getopt.h>
#include <string>
#include <sys/mman.h>
#include <vector>

#include "common.h"

using namespace srtest;

namespace
{

/* ------------------------------------------------------------------ */
/* Layout */

enum Region { R_FULL, R_RO, R_WO, R_NOATOM, R_PD2, R_MW, R_RECV, NREG };
const char *const region_names[NREG] = {"FULL", "RO", "WO", "NOATOM", "PD2", "MW", "RECV"};
constexpr uint64_t REG_SZ = 8192;
constexpr uint64_t RECV_SZ = 16384;
constexpr uint64_t BUF_SZ = 6 * REG_SZ + RECV_SZ; /* 64 KiB */
constexpr uint64_t MW_OFF = 1024, MW_LEN = 4096;  /* the window, within MW */
constexpr uint64_t LOCAL_SZ = 65536;
/* The WRITE after a bad request goes to FULL + FOLLOW_OFF: flushed, never executed. */
constexpr uint64_t FOLLOW_OFF = 4096;

constexpr uint64_t LARGE_MSG = 1ULL << 31;
constexpr uint64_t SRV_MEMFD = 2 << 20; /* server: 2 MiB mapped 1024 times */
constexpr uint64_t CLI_MEMFD = 1 << 20; /* client: 1 MiB mapped 64 times */
constexpr uint64_t CLI_SPAN = 64 << 20; /* each of the 32 SGEs */
constexpr unsigned LARGE_SGES = 32;

uint64_t reg_off(int r)
{
	return (uint64_t)r * REG_SZ;
}

uint64_t reg_len(int r)
{
	return r == R_RECV ? RECV_SZ : REG_SZ;
}

/* ------------------------------------------------------------------ */
/* Side channel */

constexpr uint32_t MAGIC = 0x52435345; /* "RCSE" */

enum Cmd : uint32_t {
	C_SETUP = 1,
	C_CONNECT,
	C_BIND_MW,
	C_LOCAL_INV,
	C_POST_RECV,
	C_CHECK,
	C_TEARDOWN,
	C_BYE,
	C_REPLY,
};

struct Setup {
	uint32_t qp_access;
	uint32_t nrecv;	   /* receives posted at setup */
	uint32_t recv_len; /* bytes per receive */
	uint32_t recv_sge; /* SGEs per receive (recv_len split evenly) */
	uint32_t min_rnr_timer;
	uint32_t mw;
	uint32_t large;
	uint32_t pad;
	uint64_t guard_key;
};

struct Ep {
	uint32_t qpn, psn, mtu, atomics;
	uint8_t gid[16];
	uint32_t max_send_sge, max_recv_sge;
	uint64_t max_msg_sz;
	uint64_t addr[NREG];
	uint32_t rkey[NREG];
	uint32_t mw_rkey;
};

/* Ranges of the server buffer expected to hold a stream. */
constexpr unsigned MAX_RANGES = 64;
struct Range {
	uint64_t off, len, key, pos;
};
/* Range.pos: the range may hold anything */
constexpr uint64_t ANY_BYTES = ~0ULL;

struct CheckReq {
	uint32_t wait_ms;
	uint32_t want_wcs;  /* receive completions to wait for */
	int32_t want_state; /* wait (up to wait_ms) for this QP state, -1: any */
	uint32_t nranges;
	Range r[MAX_RANGES];
	int32_t want_event = -1; /* wait (up to wait_ms) for this async event */
};

struct WcRec {
	uint64_t wr_id;
	uint32_t status, opcode, byte_len, wc_flags, imm_inv, vendor_err;
};

struct Counters {
	int64_t rnr_sent, rnr_rcvd; /* -1: the device has no such counter */
};

struct CheckRep {
	int32_t qp_state;
	uint32_t nwc;
	uint32_t nevents;
	uint32_t pad;
	WcRec wc[8];
	uint32_t events[8];
	uint64_t bad, first_bad;
	Counters cnt;
};

struct Msg {
	uint32_t magic, type;
	int32_t err; /* reply: 0 or an errno */
	uint32_t arg;
	Setup setup;
	Ep ep;
	CheckReq chk;
	CheckRep rep;
};

Msg mk(Cmd c)
{
	Msg m{};
	m.magic = MAGIC;
	m.type = c;
	return m;
}

int sock = -1;

void send_msg(const Msg &m)
{
	tcp_send_all(sock, &m, sizeof(m));
}

Msg recv_msg(const char *what)
{
	Msg m;
	tcp_recv_all(sock, &m, sizeof(m), what);
	if (m.magic != MAGIC)
		fail("garbage from the peer");
	return m;
}

/* ------------------------------------------------------------------ */
/* Options, device */

struct Options {
	std::string dev, host, cases = "access,rnr,inv,sge";
	int port = 18530;
	int ib_port = 1;
	bool ipv6 = false;
	bool large = false;
	bool rxe_responder = false;
	bool rxe_requester = false;
	bool scribble = false; /* --selftest-scribble */
	double timeout = 120;
} opt;

ContextPtr ctx;
ibv_device_attr dattr;
ibv_port_attr pattr;
int gid_index;
ibv_gid my_gid;

/* A port counter from sysfs; -1 if the device has none of these names. */
int64_t read_counter(std::initializer_list<const char *> names)
{
	for (const char *n : names) {
		std::string path = std::string("/sys/class/infiniband/") + opt.dev + "/ports/" +
				   std::to_string(opt.ib_port) + "/hw_counters/" + n;
		FILE *f = std::fopen(path.c_str(), "r");
		if (!f)
			continue;
		long long v = -1;
		if (std::fscanf(f, "%lld", &v) != 1)
			v = -1;
		std::fclose(f);
		return v;
	}
	return -1;
}

Counters counters()
{
	/* softrnic's names, then rdma_rxe's */
	return Counters{read_counter({"rnr_naks_sent", "send_rnr_err"}),
			read_counter({"rnr_naks_rcvd", "rcvd_rnr_err"})};
}

/* Where an end's buffers live: plain 64 KiB, or (large) memfd repeats. */
struct Memory {
	uint8_t *base = nullptr; /* what the MRs cover */
	uint64_t span = 0;
	uint8_t *phys = nullptr; /* the memfd's one mapping (large) */
	uint64_t phys_len = 0;
	int fd = -1;

	Memory() = default;
	Memory(const Memory &) = delete;
	Memory &operator=(const Memory &) = delete;
	~Memory()
	{
		if (base)
			munmap(base, span);
		if (phys && phys != base)
			munmap(phys, phys_len);
		if (fd >= 0)
			close(fd);
	}

	void plain(uint64_t len)
	{
		void *p =
		    mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			fatal("mmap %" PRIu64 ": %s", len, std::strerror(errno));
		base = phys = static_cast<uint8_t *>(p);
		span = phys_len = len;
	}

	/* @len bytes of virtual memory backed by the same @plen bytes. */
	void repeated(uint64_t len, uint64_t plen)
	{
		fd = memfd_create("rcsem", 0);
		if (fd < 0 || ftruncate(fd, (off_t)plen))
			fatal("memfd %" PRIu64 ": %s", plen, std::strerror(errno));
		void *p = mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			       -1, 0);
		if (p == MAP_FAILED)
			fatal("mmap %" PRIu64 ": %s", len, std::strerror(errno));
		base = static_cast<uint8_t *>(p);
		span = len;
		for (uint64_t off = 0; off < len; off += plen) {
			if (mmap(base + off, plen, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
				 fd, 0) == MAP_FAILED)
				fatal("mmap memfd at +%" PRIu64 ": %s", off, std::strerror(errno));
		}
		void *q = mmap(nullptr, plen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (q == MAP_FAILED)
			fatal("mmap memfd: %s", std::strerror(errno));
		phys = static_cast<uint8_t *>(q);
		phys_len = plen;
	}
};

CqPtr make_cq()
{
	CqPtr cq(ibv_create_cq(ctx.get(), 256, nullptr, nullptr, 0));
	if (!cq)
		fatal("ibv_create_cq: %s", std::strerror(errno));
	return cq;
}

QpPtr make_qp(ibv_pd *pd, ibv_cq *scq, ibv_cq *rcq, uint32_t *send_sge, uint32_t *recv_sge)
{
	ibv_qp_init_attr ia{};
	ia.send_cq = scq;
	ia.recv_cq = rcq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 64;
	ia.cap.max_recv_wr = 64;
	ia.cap.max_send_sge = (uint32_t)dattr.max_sge;
	ia.cap.max_recv_sge = (uint32_t)dattr.max_sge;
	QpPtr qp(ibv_create_qp(pd, &ia));
	if (!qp)
		fatal("ibv_create_qp: %s", std::strerror(errno));
	*send_sge = ia.cap.max_send_sge;
	*recv_sge = ia.cap.max_recv_sge;
	return qp;
}

uint32_t psn_seed = 0x1234;
/* The client's path MTU at most (a case may lower it; the server follows). */
enum ibv_mtu mtu_cap = IBV_MTU_4096;

uint32_t next_psn()
{
	psn_seed = psn_seed * 1103515245 + 12345;
	return (psn_seed >> 4) & 0xffffff;
}

void fill_ep(Ep &e, ibv_qp *qp)
{
	e.qpn = qp->qp_num;
	e.psn = next_psn();
	e.mtu = std::min(pattr.active_mtu, mtu_cap);
	e.atomics = dattr.atomic_cap != IBV_ATOMIC_NONE;
	std::memcpy(e.gid, my_gid.raw, 16);
	e.max_msg_sz = pattr.max_msg_sz;
}

RcPath path_to(const Ep &me, const Ep &peer)
{
	RcPath p;
	p.port = opt.ib_port;
	p.sgid_index = gid_index;
	std::memcpy(p.dgid, peer.gid, 16);
	p.dest_qpn = peer.qpn;
	p.rq_psn = peer.psn;
	p.sq_psn = me.psn;
	p.mtu = (enum ibv_mtu)std::min(me.mtu, peer.mtu);
	p.max_dest_rd_atomic = (uint8_t)std::min(dattr.max_qp_rd_atom, 16);
	p.max_rd_atomic = (uint8_t)std::min(dattr.max_qp_init_rd_atom, 16);
	if (!me.atomics)
		p.access &= ~IBV_ACCESS_REMOTE_ATOMIC;
	return p;
}

WcRec rec(const ibv_wc &wc)
{
	WcRec r{};
	r.wr_id = wc.wr_id;
	r.status = wc.status;
	r.opcode = wc.opcode;
	r.byte_len = wc.byte_len;
	r.wc_flags = wc.wc_flags;
	r.imm_inv = wc.wc_flags & IBV_WC_WITH_INV ? wc.invalidated_rkey : ntohl(wc.imm_data);
	r.vendor_err = wc.vendor_err;
	return r;
}

/* Poll @cq until @n completions or @ms milliseconds. */
std::vector<WcRec> poll_n(ibv_cq *cq, unsigned n, int ms)
{
	std::vector<WcRec> out;
	double end = now_s() + ms / 1000.0;
	while (out.size() < n) {
		ibv_wc wc;
		int k = ibv_poll_cq(cq, 1, &wc);
		if (k < 0)
			fatal("ibv_poll_cq failed");
		if (k) {
			out.push_back(rec(wc));
			continue;
		}
		if (now_s() >= end)
			break;
		usleep(500);
	}
	return out;
}

std::string wc_str(const WcRec &w)
{
	char b[160];
	std::snprintf(b, sizeof(b), "wr_id %" PRIu64 " %s opcode %u byte_len %u flags %#x ex %#x",
		      w.wr_id, ibv_wc_status_str((enum ibv_wc_status)w.status), w.opcode,
		      w.byte_len, w.wc_flags, w.imm_inv);
	return b;
}

/* ------------------------------------------------------------------ */
/* Server */

struct ServerEnv {
	Memory mem;
	PdPtr pd, pd2;
	CqPtr scq, rcq;
	MrPtr mr[NREG];
	MrPtr big;
	/*
	 * The MW goes first: a window still bound when its QP is destroyed
	 * keeps rdma_rxe's QP referenced (a WARN in __rxe_cleanup).
	 */
	QpPtr qp;
	MwPtr mw;
	Setup s{};
	Ep ep{};
	uint32_t send_sge = 0, recv_sge = 0;
	uint64_t next_recv = 0;
	std::vector<uint32_t> events;
};

/* Drain the async event queue (non-blocking fd). */
void collect_events(ServerEnv &e)
{
	ibv_async_event ev;
	while (ibv_get_async_event(ctx.get(), &ev) == 0) {
		e.events.push_back(ev.event_type);
		ibv_ack_async_event(&ev);
	}
}

int srv_post_recvs(ServerEnv &e, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		ibv_sge sg[32];
		ibv_recv_wr wr{}, *bad;
		unsigned ns = std::max(1U, std::min(e.s.recv_sge, 32U));
		if (e.s.large) {
			/* the 2 GiB MR, ns SGEs */
			uint64_t per = e.mem.span / ns;
			for (unsigned k = 0; k < ns; k++)
				sg[k] = {(uint64_t)(uintptr_t)e.mem.base + k * per, (uint32_t)per,
					 e.big->lkey};
		} else {
			uint64_t off = reg_off(R_RECV) + (e.next_recv % 4) * (RECV_SZ / 4);
			uint32_t per = e.s.recv_len / ns;
			for (unsigned k = 0; k < ns; k++)
				sg[k] = {(uint64_t)(uintptr_t)e.mem.base + off + k * per,
					 k == ns - 1 ? e.s.recv_len - per * (ns - 1) : per,
					 e.mr[R_RECV]->lkey};
		}
		wr.wr_id = 100 + e.next_recv++;
		wr.sg_list = sg;
		wr.num_sge = (int)ns;
		if (int err = ibv_post_recv(e.qp.get(), &wr, &bad))
			return err;
	}
	return 0;
}

void srv_setup(ServerEnv &e, const Setup &s)
{
	e.s = s;
	e.pd.reset(ibv_alloc_pd(ctx.get()));
	e.pd2.reset(ibv_alloc_pd(ctx.get()));
	if (!e.pd || !e.pd2)
		fatal("ibv_alloc_pd: %s", std::strerror(errno));
	e.scq = make_cq();
	e.rcq = make_cq();
	if (s.large) {
		e.mem.repeated(LARGE_MSG, SRV_MEMFD);
		fill_stream(e.mem.phys, s.guard_key, 0, SRV_MEMFD);
		e.big.reset(ibv_reg_mr(e.pd.get(), e.mem.base, e.mem.span,
				       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					   IBV_ACCESS_REMOTE_READ));
		if (!e.big)
			fatal("ibv_reg_mr of 2 GiB: %s", std::strerror(errno));
		e.ep.addr[R_FULL] = (uint64_t)(uintptr_t)e.mem.base;
		e.ep.rkey[R_FULL] = e.big->rkey;
	} else {
		e.mem.plain(BUF_SZ);
		fill_stream(e.mem.base, s.guard_key, 0, BUF_SZ);
		const int lw = IBV_ACCESS_LOCAL_WRITE, rw = IBV_ACCESS_REMOTE_WRITE,
			  rr = IBV_ACCESS_REMOTE_READ,
			  ra = dattr.atomic_cap != IBV_ATOMIC_NONE ? IBV_ACCESS_REMOTE_ATOMIC : 0;
		const int acc[NREG] = {lw | rw | rr | ra,
				       lw | rr,
				       lw | rw,
				       lw | rw | rr,
				       lw | rw | rr | ra,
				       lw | rw | rr | IBV_ACCESS_MW_BIND,
				       lw};
		for (int r = 0; r < NREG; r++) {
			ibv_pd *pd = r == R_PD2 ? e.pd2.get() : e.pd.get();
			e.mr[r].reset(ibv_reg_mr(pd, e.mem.base + reg_off(r), reg_len(r), acc[r]));
			if (!e.mr[r])
				fatal("ibv_reg_mr %s: %s", region_names[r], std::strerror(errno));
			e.ep.addr[r] = (uint64_t)(uintptr_t)(e.mem.base + reg_off(r));
			e.ep.rkey[r] = e.mr[r]->rkey;
		}
		if (s.mw) {
			e.mw.reset(ibv_alloc_mw(e.pd.get(), IBV_MW_TYPE_2));
			if (!e.mw)
				fatal("ibv_alloc_mw type 2: %s", std::strerror(errno));
		}
	}
	e.qp = make_qp(e.pd.get(), e.scq.get(), e.rcq.get(), &e.send_sge, &e.recv_sge);
	fill_ep(e.ep, e.qp.get());
	e.ep.max_send_sge = e.send_sge;
	e.ep.max_recv_sge = e.recv_sge;
	collect_events(e);
	e.events.clear();
}

void srv_check(ServerEnv &e, const CheckReq &c, CheckRep &rep)
{
	std::vector<WcRec> wcs = poll_n(e.rcq.get(), c.want_wcs, (int)c.wait_ms);
	/* a little longer for any we did not ask for */
	std::vector<WcRec> more = poll_n(e.rcq.get(), 8, c.want_wcs ? 50 : 0);
	wcs.insert(wcs.end(), more.begin(), more.end());
	rep.nwc = (uint32_t)std::min<size_t>(wcs.size(), 8);
	std::copy_n(wcs.begin(), rep.nwc, rep.wc);
	double end = now_s() + c.wait_ms / 1000.0;
	for (;;) {
		rep.qp_state = qp_state(e.qp.get());
		if (c.want_state < 0 || rep.qp_state == c.want_state || now_s() >= end)
			break;
		usleep(1000);
	}
	/* the event follows the state change closely */
	end = std::min(end, now_s() + 0.5);
	for (;;) {
		collect_events(e);
		if (c.want_event < 0 || now_s() >= end ||
		    std::find(e.events.begin(), e.events.end(), (uint32_t)c.want_event) !=
			e.events.end())
			break;
		usleep(1000);
	}
	rep.nevents = (uint32_t)std::min<size_t>(e.events.size(), 8);
	std::copy_n(e.events.begin(), rep.nevents, rep.events);
	rep.cnt = counters();

	/* --selftest-scribble: a responder that wrote where it must not */
	if (opt.scribble)
		e.mem.phys[FOLLOW_OFF] ^= 0x01;
	/* Every byte: the expected ranges hold their streams, the rest the guard. */
	const uint8_t *p = e.mem.phys;
	uint64_t len = e.mem.phys_len;
	std::vector<uint8_t> want(p, p + len);
	fill_stream(want.data(), e.s.guard_key, 0, len);
	for (uint32_t i = 0; i < c.nranges && i < MAX_RANGES; i++) {
		const Range &r = c.r[i];
		if (r.off + r.len > len)
			continue;
		if (r.pos == ANY_BYTES)
			std::memcpy(want.data() + r.off, p + r.off, r.len);
		else
			fill_stream(want.data() + r.off, r.key, r.pos, r.len);
	}
	rep.bad = 0;
	for (uint64_t i = 0; i < len; i++) {
		if (p[i] != want[i]) {
			if (!rep.bad)
				rep.first_bad = i;
			rep.bad++;
		}
	}
}

int srv_bind_mw(ServerEnv &e, uint32_t *rkey)
{
	ibv_send_wr wr{}, *bad;
	wr.wr_id = 7;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = e.mw.get();
	wr.bind_mw.rkey = ibv_inc_rkey(e.mw->rkey);
	wr.bind_mw.bind_info.mr = e.mr[R_MW].get();
	wr.bind_mw.bind_info.addr = e.ep.addr[R_MW] + MW_OFF;
	wr.bind_mw.bind_info.length = MW_LEN;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	if (int err = ibv_post_send(e.qp.get(), &wr, &bad))
		return err;
	auto wc = poll_n(e.scq.get(), 1, 5000);
	if (wc.size() != 1 || wc[0].status != IBV_WC_SUCCESS) {
		msg("bind MW: %s", wc.empty() ? "no completion" : wc_str(wc[0]).c_str());
		return EIO;
	}
	e.mw->rkey = wr.bind_mw.rkey;
	*rkey = wr.bind_mw.rkey;
	return 0;
}

int srv_local_inv(ServerEnv &e)
{
	ibv_send_wr wr{}, *bad;
	wr.wr_id = 8;
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = e.mw->rkey;
	if (int err = ibv_post_send(e.qp.get(), &wr, &bad))
		return err;
	auto wc = poll_n(e.scq.get(), 1, 5000);
	if (wc.size() != 1 || wc[0].status != IBV_WC_SUCCESS) {
		msg("LOCAL_INV: %s", wc.empty() ? "no completion" : wc_str(wc[0]).c_str());
		return EIO;
	}
	return 0;
}

void server()
{
	fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
	sock = tcp_listen_accept(opt.port);
	std::unique_ptr<ServerEnv> e;
	for (;;) {
		Msg m = recv_msg("a command");
		Msg r = mk(C_REPLY);
		switch (m.type) {
		case C_SETUP:
			e = std::make_unique<ServerEnv>();
			srv_setup(*e, m.setup);
			r.ep = e->ep;
			break;
		case C_CONNECT: {
			RcPath p = path_to(e->ep, m.ep);
			p.access = e->s.qp_access;
			p.min_rnr_timer = (uint8_t)e->s.min_rnr_timer;
			r.err = rc_connect(e->qp.get(), p);
			/* receives in RTS (rxe refuses them in RESET, as it may) */
			if (!r.err)
				r.err = srv_post_recvs(*e, e->s.nrecv);
			break;
		}
		case C_BIND_MW:
			r.err = srv_bind_mw(*e, &r.ep.mw_rkey);
			break;
		case C_LOCAL_INV:
			r.err = srv_local_inv(*e);
			break;
		case C_POST_RECV:
			r.err = srv_post_recvs(*e, m.arg);
			break;
		case C_CHECK:
			srv_check(*e, m.chk, r.rep);
			break;
		case C_TEARDOWN:
			e.reset();
			break;
		case C_BYE:
			send_msg(r);
			return;
		default:
			fail("unknown command %u", m.type);
		}
		send_msg(r);
	}
}

/* ------------------------------------------------------------------ */
/* Client */

struct Client {
	Memory mem;
	PdPtr pd;
	CqPtr scq, rcq;
	MrPtr mr;
	QpPtr qp;
	Ep me{}, srv{};
	uint32_t send_sge = 0, recv_sge = 0;
	uint64_t key = 0; /* source data stream */
};

std::unique_ptr<Client> cl;
int n_ok, n_failed;
std::string cur_case;
bool cur_failed;
uint64_t case_no;

void bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bad(const char *fmt, ...)
{
	char b[512];
	va_list ap;
	va_start(ap, fmt);
	std::vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	msg("case %s: FAILED: %s", cur_case.c_str(), b);
	cur_failed = true;
}

void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void note(const char *fmt, ...)
{
	char b[512];
	va_list ap;
	va_start(ap, fmt);
	std::vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	msg("case %s: NOTE: %s", cur_case.c_str(), b);
}

Msg call(Msg m, const char *what)
{
	send_msg(m);
	Msg r = recv_msg(what);
	if (r.type != C_REPLY)
		fail("bad reply to %s", what);
	return r;
}

uint64_t guard_key()
{
	return fmix(0x6775617264ULL + case_no);
}

/* Fresh resources at both ends, connected.  @rnr_retry: the client's. */
void connect_case(Setup s, uint8_t rnr_retry = 7, bool large = false)
{
	s.guard_key = guard_key();
	if (!s.qp_access)
		s.qp_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	if (!s.min_rnr_timer)
		s.min_rnr_timer = 12;
	if (!s.recv_len)
		s.recv_len = 256;
	if (!s.recv_sge)
		s.recv_sge = 1;
	s.large = large;
	Msg m = mk(C_SETUP);
	m.setup = s;
	Msg r = call(m, "SETUP");
	if (r.err)
		fatal("server setup: %s", std::strerror(r.err));

	cl = std::make_unique<Client>();
	Client &c = *cl;
	c.srv = r.ep;
	c.key = fmix(0x737263ULL + case_no);
	c.pd.reset(ibv_alloc_pd(ctx.get()));
	if (!c.pd)
		fatal("ibv_alloc_pd: %s", std::strerror(errno));
	c.scq = make_cq();
	c.rcq = make_cq();
	if (large) {
		c.mem.repeated(CLI_SPAN, CLI_MEMFD);
		fill_stream(c.mem.phys, c.key, 0, CLI_MEMFD);
	} else {
		c.mem.plain(LOCAL_SZ);
		fill_stream(c.mem.base, c.key, 0, LOCAL_SZ);
	}
	c.mr.reset(
	    ibv_reg_mr(c.pd.get(), c.mem.base, c.mem.span,
		       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ));
	if (!c.mr)
		fatal("ibv_reg_mr: %s", std::strerror(errno));
	c.qp = make_qp(c.pd.get(), c.scq.get(), c.rcq.get(), &c.send_sge, &c.recv_sge);
	fill_ep(c.me, c.qp.get());

	m = mk(C_CONNECT);
	m.ep = c.me;
	r = call(m, "CONNECT");
	if (r.err)
		fatal("server connect: %s", std::strerror(r.err));
	RcPath p = path_to(c.me, c.srv);
	p.rnr_retry = rnr_retry;
	if (int e = rc_connect(c.qp.get(), p))
		fatal("connect: %s", std::strerror(e));
}

CheckRep check(CheckReq c)
{
	Msg m = mk(C_CHECK);
	m.chk = c;
	return call(m, "CHECK").rep;
}

void teardown()
{
	cl.reset();
	call(mk(C_TEARDOWN), "TEARDOWN");
}

uint64_t laddr(uint64_t off)
{
	return (uint64_t)(uintptr_t)cl->mem.base + off;
}

/* ibv_send_wr with one SGE from the local buffer at @off. */
struct Wr {
	ibv_send_wr wr{};
	ibv_sge sge{};
	Wr(uint64_t id, ibv_wr_opcode op, uint64_t off, uint32_t len)
	{
		sge = {laddr(off), len, cl->mr->lkey};
		wr.wr_id = id;
		wr.opcode = op;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.send_flags = IBV_SEND_SIGNALED;
	}
	/* a copy gathers from its own SGE */
	Wr(const Wr &o) : wr(o.wr), sge(o.sge)
	{
		if (o.wr.sg_list == &o.sge)
			wr.sg_list = &sge;
	}
	Wr &operator=(const Wr &) = delete;
	Wr &rdma(uint64_t va, uint32_t rkey)
	{
		wr.wr.rdma.remote_addr = va;
		wr.wr.rdma.rkey = rkey;
		return *this;
	}
	Wr &atomic(uint64_t va, uint32_t rkey, uint64_t cmp_add, uint64_t swap)
	{
		wr.wr.atomic.remote_addr = va;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = cmp_add;
		wr.wr.atomic.swap = swap;
		return *this;
	}
};

const char *st(int s)
{
	return ibv_wc_status_str((enum ibv_wc_status)s);
}

struct Expect {
	int req_status;
	int req_state = IBV_QPS_ERR;
	int resp_state = IBV_QPS_ERR;
	std::vector<int> recv; /* the responder's receive completions, in order */
	bool on_wire = true;   /* false: a local error, the responder saw nothing */
	/*
	 * A multi-packet SEND is known to be too long only at the packet
	 * that overruns the receive: what fitted before it is placed.
	 */
	bool recv_buffer_may_change = false;
	/* a requester may refuse it at ibv_post_send (EINVAL) */
	bool post_may_refuse = false;
	/* what Linux 6.1's rxe does instead, as responder (0: as the spec) */
	int rxe_status = 0;
	std::vector<int> rxe_recv = {};
	const char *rxe_why = nullptr;
	/*
	 * A local error the requester may find only after the start of the
	 * message left (rxe): the responder then refuses it (Remote Access
	 * Error) and goes to ERR instead of seeing nothing.
	 */
	bool start_may_leave = false;
};

void expect_recvs(const CheckRep &rep, const std::vector<int> &want)
{
	bool same = rep.nwc == want.size();
	for (size_t i = 0; same && i < want.size(); i++)
		same = (int)rep.wc[i].status == want[i];
	if (same)
		return;
	std::string got, exp;
	for (uint32_t i = 0; i < rep.nwc; i++)
		got += (i ? ", " : "") + wc_str(rep.wc[i]);
	for (size_t i = 0; i < want.size(); i++)
		exp += std::string(i ? ", " : "") + st(want[i]);
	bad("responder's receive completions: got [%s], expected [%s]", got.c_str(), exp.c_str());
}

void report_events(const CheckRep &rep)
{
	for (uint32_t i = 0; i < rep.nevents; i++)
		msg("case %s: responder async event: %s", cur_case.c_str(),
		    ibv_event_type_str((enum ibv_event_type)rep.events[i]));
}

/* IBTA 11.6.3.1: the responder's affiliated asynchronous error per NAK. */
int nak_event(int req_status)
{
	switch (req_status) {
	case IBV_WC_REM_ACCESS_ERR:
		return IBV_EVENT_QP_ACCESS_ERR;
	case IBV_WC_REM_INV_REQ_ERR:
		return IBV_EVENT_QP_REQ_ERR;
	case IBV_WC_REM_OP_ERR:
		return IBV_EVENT_QP_FATAL;
	default:
		return -1;
	}
}

void check_event(const CheckRep &rep, int ev)
{
	report_events(rep);
	if (ev < 0 || std::find(rep.events, rep.events + rep.nevents, (uint32_t)ev) !=
			  rep.events + rep.nevents)
		return;
	if (opt.rxe_responder)
		note("rxe raises no %s at the responder",
		     ibv_event_type_str((enum ibv_event_type)ev));
	else
		bad("no %s at the responder", ibv_event_type_str((enum ibv_event_type)ev));
}

void check_responder(const Expect &e, CheckReq c = {})
{
	if (!c.wait_ms)
		c.wait_ms = 2000;
	c.want_event = e.on_wire ? nak_event(e.req_status) : -1;
	c.want_wcs = (uint32_t)e.recv.size();
	c.want_state = e.resp_state;
	if (e.recv_buffer_may_change)
		c.r[c.nranges++] = {reg_off(R_RECV), 256, 0, ANY_BYTES};
	CheckRep rep = check(c);
	if (e.start_may_leave && rep.qp_state == IBV_QPS_ERR) {
		note("the requester sent the start of it before it failed: the responder refused it");
		/* its receive is flushed: wait for that too (CQEs are drained
		 * by each check, events accumulate) */
		CheckReq again = c;
		again.want_wcs = 1;
		again.want_state = IBV_QPS_ERR;
		again.want_event = nak_event(IBV_WC_REM_ACCESS_ERR);
		CheckRep more = check(again);
		for (uint32_t i = 0; i < more.nwc && rep.nwc < 8; i++)
			rep.wc[rep.nwc++] = more.wc[i];
		expect_recvs(rep, {IBV_WC_WR_FLUSH_ERR});
		check_event(more, again.want_event);
		return;
	}
	if (rep.qp_state != e.resp_state)
		bad("responder QP in %s, expected %s", qp_state_str(rep.qp_state),
		    qp_state_str(e.resp_state));
	expect_recvs(rep, e.recv);
	if (rep.bad)
		bad("responder's buffer: %" PRIu64 " bytes changed, first at offset %" PRIu64
		    " (region %s)",
		    rep.bad, rep.first_bad,
		    region_names[std::min<uint64_t>(rep.first_bad / REG_SZ, R_RECV)]);
	check_event(rep, c.want_event);
}

/*
 * Post @w then a valid WRITE; the first must complete with e.req_status,
 * the WRITE be flushed, the client's QP end in e.req_state and the
 * responder be as @e says.
 */
void error_case(Wr &w, const Expect &spec)
{
	Expect e = spec;
	Client &c = *cl;
	Wr follow(2, IBV_WR_RDMA_WRITE, 0, 8);
	follow.rdma(c.srv.addr[R_FULL] + FOLLOW_OFF, c.srv.rkey[R_FULL]);
	w.wr.next = &follow.wr;
	ibv_send_wr *badwr = nullptr;
	if (int err = ibv_post_send(c.qp.get(), &w.wr, &badwr)) {
		if (err != EINVAL || !e.post_may_refuse || badwr != &w.wr) {
			bad("ibv_post_send: %s", std::strerror(err));
			return;
		}
		/* refused before it reached the wire: nothing changes anywhere */
		note("the requester refused it at ibv_post_send (EINVAL)");
		if (qp_state(c.qp.get()) != IBV_QPS_RTS)
			bad("requester QP left RTS");
		Expect none{IBV_WC_SUCCESS, IBV_QPS_RTS, IBV_QPS_RTS, {}, false};
		check_responder(none, CheckReq{300, 0, -1, 0, {}});
		return;
	}
	auto wcs = poll_n(c.scq.get(), 2, 10000);
	if (opt.rxe_responder && e.rxe_status && !wcs.empty() &&
	    (int)wcs[0].status == e.rxe_status) {
		note("rxe answers %s (spec: %s): %s", st(e.rxe_status), st(e.req_status),
		     e.rxe_why);
		e.req_status = e.rxe_status;
		if (!e.rxe_recv.empty())
			e.recv = e.rxe_recv;
	}
	if (wcs.size() < 1) {
		bad("no completion within 10 s (expected %s)", st(e.req_status));
	} else {
		if (wcs[0].wr_id != w.wr.wr_id || (int)wcs[0].status != e.req_status)
			bad("requester: %s, expected wr_id %" PRIu64 " %s", wc_str(wcs[0]).c_str(),
			    w.wr.wr_id, st(e.req_status));
		/* after a success the WRITE runs too, else it is flushed */
		int follow_status =
		    e.req_status == IBV_WC_SUCCESS ? IBV_WC_SUCCESS : IBV_WC_WR_FLUSH_ERR;
		if (wcs.size() < 2)
			bad("no completion for the WRITE posted after it");
		else if (wcs[1].wr_id != 2 || (int)wcs[1].status != follow_status)
			bad("the WRITE posted after it: %s, expected %s", wc_str(wcs[1]).c_str(),
			    st(follow_status));
	}
	int s = qp_state(c.qp.get());
	if (s != e.req_state)
		bad("requester QP in %s, expected %s", qp_state_str(s), qp_state_str(e.req_state));
	CheckReq cr{};
	if (e.req_status == IBV_WC_SUCCESS) {
		cr.nranges = 1;
		cr.r[0] = {reg_off(R_FULL) + FOLLOW_OFF, 8, c.key, 0};
	}
	check_responder(e, cr);
}

void case_begin(const std::string &name)
{
	cur_case = name;
	cur_failed = false;
	case_no++;
}

void case_end()
{
	teardown();
	if (cur_failed) {
		n_failed++;
	} else {
		n_ok++;
		msg("case %s ok", cur_case.c_str());
	}
}

bool srv_atomics()
{
	return cl->srv.atomics && dattr.atomic_cap != IBV_ATOMIC_NONE;
}

/* ------------------------------------------------------------------ */
/* Cases: access */

constexpr unsigned ALL_ACCESS = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

/* One request against the responder: Setup, the WR, the expectation. */
struct AccessCase {
	const char *name;
	bool atomic;
	unsigned qp_access; /* 0: all */
	uint32_t nrecv;
	std::function<Wr()> wr;
	Expect exp;
};

void run_access(const AccessCase &a)
{
	case_begin(a.name);
	Setup s{};
	s.qp_access = a.qp_access;
	s.nrecv = a.nrecv;
	connect_case(s);
	if (a.atomic && !srv_atomics()) {
		msg("case %s: SKIP (no atomics)", a.name);
		teardown();
		return;
	}
	Wr w = a.wr();
	error_case(w, a.exp);
	case_end();
}

std::vector<AccessCase> access_cases()
{
	const int ACC = IBV_WC_REM_ACCESS_ERR, INV = IBV_WC_REM_INV_REQ_ERR;
	const int FLUSH = IBV_WC_WR_FLUSH_ERR;
	static const char QP_RIGHTS[] =
	    "an operation the QP's access flags do not enable is "
	    "an unsupported opcode to rxe (Invalid Request); hardware and "
	    "softrnic answer Remote Access Error";
	static const char SHORT_RECV[] = "rxe treats a SEND longer than its receive as a "
					 "Remote Operational Error and completes the receive with "
					 "IBV_WC_LOC_QP_OP_ERR, not Invalid Request and "
					 "IBV_WC_LOC_LEN_ERR";
	auto S = [] { return cl->srv; };
	auto full = [S](uint64_t off) { return S().addr[R_FULL] + off; };
	std::vector<AccessCase> v = {
	    {"bad-rkey-write",
	     false,
	     0,
	     1,
	     [=] { return Wr(1, IBV_WR_RDMA_WRITE, 0, 64).rdma(full(0), S().rkey[R_FULL] ^ 0x5a); },
	     {ACC, IBV_QPS_ERR, IBV_QPS_ERR, {FLUSH}}},
	    {"bad-rkey-read",
	     false,
	     0,
	     1,
	     [=] { return Wr(1, IBV_WR_RDMA_READ, 0, 64).rdma(full(0), S().rkey[R_FULL] ^ 0x5a); },
	     {ACC, IBV_QPS_ERR, IBV_QPS_ERR, {FLUSH}}},
	    {"bad-rkey-atomic",
	     true,
	     0,
	     1,
	     [=] {
		     return Wr(1, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, 8)
			 .atomic(full(64), S().rkey[R_FULL] ^ 0x5a, 1, 0);
	     },
	     {ACC, IBV_QPS_ERR, IBV_QPS_ERR, {FLUSH}}},
	    {"oob-before-start",
	     false,
	     0,
	     1,
	     [=] { return Wr(1, IBV_WR_RDMA_WRITE, 0, 16).rdma(full(0) - 8, S().rkey[R_FULL]); },
	     {ACC, IBV_QPS_ERR, IBV_QPS_ERR, {FLUSH}}},
	    {"oob-past-end",
	     false,
	     0,
	     1,
	     [=] {
		     return Wr(1, IBV_WR_RDMA_WRITE, 0, 16)
			 .rdma(full(REG_SZ - 8), S().rkey[R_FULL]);
	     },
	     {ACC, IBV_QPS_ERR, IBV_QPS_ERR, {FLUSH}}},
	    {"oob-multi-packet-past-end",
	     false,
	     0,
	     1,
	     [=] {
		     /* the first packets fit, the last does not */
		     return Wr(1, IBV_WR_RDMA_WRITE, 0, 8192).rdma(full(64), S().rkey[R_FULL]);
	     },
	     {ACC, IBV_QPS_ERR, IBV_QPS_ERR, {FLUSH}}},
	    {"oob-read-past-end",
	     false,
	     0,
	     1,
	     [=] {
		     return Wr(1, IBV_WR_RDMA_READ, 0, 4096)
			 .rdma(full(REG_SZ - 100), S().rkey[R_FULL]);
	     },
	     {ACC, IBV_QPS_ERR, IBV_QPS_ERR, {FLUSH}}},
	    {"oob-atomic-past-end",
	     true,
	     0,
	     1,
	     [=] {
		     return Wr(1, IBV_WR_ATOMIC_CMP_AND_SWP, 0, 8)
			 .atomic(full(REG_SZ), S().rkey[R_FULL], 0, 1);
	     },
	     {ACC, IBV_QPS_ERR, IBV_QPS_ERR, {FLUSH}}},
	    {"oob-length-wraps",
	     false,
	     0,
	     1,
	     [=] {
		     /* va + length overflows 64 bits */
		     return Wr(1, IBV_WR_RDMA_WRITE, 0, 4096)
			 .rdma(0xfffffffffffff800ULL, S().rkey[R_FULL]);
	     },
	     {ACC, IBV_QPS_ERR, IBV_QPS_ERR, {FLUSH}}},
	    {"mr-no-remote-write",
	     false,
	     0,
	     1,
	     [=] { return Wr(1, IBV_WR_RDMA_WRITE, 0, 64).rdma(S().addr[R_RO], S().rkey[R_RO]); },
	     {ACC, IBV_QPS_ERR, IBV_QPS_ERR, {FLUSH}}},
	    {"mr-no-remote-read",
	     false,
	     0,
	     1,
	     [=] { return Wr(1, IBV_WR_RDMA_READ, 0, 64).rdma(S().addr[R_WO], S().rkey[R_WO]); },
	     {ACC, IBV_QPS_ERR, IBV_QPS_ERR, {FLUSH}}},
	    {"mr-no-remote-atomic",
	     true,
	     0,
	     1,
	     [=] {
		     return Wr(1, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, 8)
			 .atomic(S().addr[R_NOATOM], S().rkey[R_NOATOM], 1, 0);
	     },
	     {ACC, IBV_QPS_ERR, IBV_QPS_ERR, {FLUSH}}},
	    {"qp-no-remote-write",
	     false,
	     ALL_ACCESS & ~IBV_ACCESS_REMOTE_WRITE,
	     1,
	     [=] { return Wr(1, IBV_WR_RDMA_WRITE, 0, 64).rdma(full(0), S().rkey[R_FULL]); },
	     {ACC, IBV_QPS_ERR, IBV_QPS_ERR, {FLUSH}, true, false, false, INV, {}, QP_RIGHTS}},
	    {"qp-no-remote-read",
	     false,
	     ALL_ACCESS & ~IBV_ACCESS_REMOTE_READ,
	     1,
	     [=] { return Wr(1, IBV_WR_RDMA_READ, 0, 64).rdma(full(0), S().rkey[R_FULL]); },
	     {ACC, IBV_QPS_ERR, IBV_QPS_ERR, {FLUSH}, true, false, false, INV, {}, QP_RIGHTS}},
	    {"qp-no-remote-atomic",
	     true,
	     ALL_ACCESS & ~IBV_ACCESS_REMOTE_ATOMIC,
	     1,
	     [=] {
		     return Wr(1, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, 8)
			 .atomic(full(64), S().rkey[R_FULL], 1, 0);
	     },
	     {ACC, IBV_QPS_ERR, IBV_QPS_ERR, {FLUSH}, true, false, false, INV, {}, QP_RIGHTS}},
	    {"pd-mismatch-write",
	     false,
	     0,
	     1,
	     [=] { return Wr(1, IBV_WR_RDMA_WRITE, 0, 64).rdma(S().addr[R_PD2], S().rkey[R_PD2]); },
	     {ACC, IBV_QPS_ERR, IBV_QPS_ERR, {FLUSH}}},
	    {"pd-mismatch-read",
	     false,
	     0,
	     1,
	     [=] { return Wr(1, IBV_WR_RDMA_READ, 0, 64).rdma(S().addr[R_PD2], S().rkey[R_PD2]); },
	     {ACC, IBV_QPS_ERR, IBV_QPS_ERR, {FLUSH}}},
	    {"pd-mismatch-atomic",
	     true,
	     0,
	     1,
	     [=] {
		     return Wr(1, IBV_WR_ATOMIC_CMP_AND_SWP, 0, 8)
			 .atomic(S().addr[R_PD2], S().rkey[R_PD2], 0, 1);
	     },
	     {ACC, IBV_QPS_ERR, IBV_QPS_ERR, {FLUSH}}},
	    {"send-longer-than-recv",
	     false,
	     0,
	     2,
	     [=] { return Wr(1, IBV_WR_SEND, 0, 257); },
	     {INV,
	      IBV_QPS_ERR,
	      IBV_QPS_ERR,
	      {IBV_WC_LOC_LEN_ERR, FLUSH},
	      true,
	      false,
	      false,
	      IBV_WC_REM_OP_ERR,
	      {IBV_WC_LOC_QP_OP_ERR, FLUSH},
	      SHORT_RECV}},
	    {"send-multi-packet-longer-than-recv",
	     false,
	     0,
	     2,
	     [=] { return Wr(1, IBV_WR_SEND, 0, 5000); },
	     {INV,
	      IBV_QPS_ERR,
	      IBV_QPS_ERR,
	      {IBV_WC_LOC_LEN_ERR, FLUSH},
	      true,
	      true,
	      false,
	      IBV_WC_REM_OP_ERR,
	      {IBV_WC_LOC_QP_OP_ERR, FLUSH},
	      SHORT_RECV}},
	    /* IBTA: a zero-length RDMA READ/WRITE checks no R_Key */
	    {"zero-length-write-bad-rkey",
	     false,
	     0,
	     1,
	     [=] { return Wr(1, IBV_WR_RDMA_WRITE, 0, 0).rdma(full(0), S().rkey[R_FULL] ^ 0x5a); },
	     {IBV_WC_SUCCESS, IBV_QPS_RTS, IBV_QPS_RTS, {}}},
	    {"zero-length-read-bad-rkey",
	     false,
	     0,
	     1,
	     [=] { return Wr(1, IBV_WR_RDMA_READ, 0, 0).rdma(full(0), S().rkey[R_FULL] ^ 0x5a); },
	     {IBV_WC_SUCCESS, IBV_QPS_RTS, IBV_QPS_RTS, {}}},
	    {"atomic-misaligned",
	     true,
	     0,
	     1,
	     [=] {
		     return Wr(1, IBV_WR_ATOMIC_CMP_AND_SWP, 0, 8)
			 .atomic(full(68), S().rkey[R_FULL], 0, 1);
	     },
	     {INV, IBV_QPS_ERR, IBV_QPS_ERR, {FLUSH}, true, false, true}},
	};
	return v;
}

/* A message longer than max_msg_sz: a local length error, nothing sent. */
void case_too_long(ibv_wr_opcode op, const char *name)
{
	case_begin(name);
	Setup s{};
	s.nrecv = 1;
	connect_case(s);
	Client &c = *cl;
	uint64_t max = c.me.max_msg_sz;
	/* two SGEs over the same bytes, together max_msg_sz + 1 */
	ibv_sge sg[2] = {{laddr(0), (uint32_t)(max / 2), c.mr->lkey},
			 {laddr(0), (uint32_t)(max / 2 + 1), c.mr->lkey}};
	Wr w(1, op, 0, 0);
	w.rdma(c.srv.addr[R_FULL], c.srv.rkey[R_FULL]);
	w.wr.sg_list = sg;
	w.wr.num_sge = 2;
	if (max >= (1ULL << 32) - 1) {
		msg("case %s: SKIP (max_msg_sz %" PRIu64 ")", name, max);
		teardown();
		return;
	}
	/*
	 * Right answers: refused at post (EINVAL), or a local length error;
	 * either way the responder sees nothing.  A requester that sends it
	 * anyway (rxe) tests the responder: an Invalid Request NAK.
	 */
	Expect e{IBV_WC_LOC_LEN_ERR, IBV_QPS_ERR, IBV_QPS_RTS, {}, false};
	Wr follow(2, IBV_WR_RDMA_WRITE, 0, 8);
	follow.rdma(c.srv.addr[R_FULL] + FOLLOW_OFF, c.srv.rkey[R_FULL]);
	w.wr.next = &follow.wr;
	ibv_send_wr *badwr = nullptr;
	int err = ibv_post_send(c.qp.get(), &w.wr, &badwr);
	if (err) {
		note("ibv_post_send refused it: %s", std::strerror(err));
		if (badwr != &w.wr)
			bad("bad_wr does not point at the long WR");
		if (qp_state(c.qp.get()) != IBV_QPS_RTS)
			bad("requester QP left RTS");
	} else {
		auto wcs = poll_n(c.scq.get(), 2, 10000);
		int got = wcs.empty() ? -1 : (int)wcs[0].status;
		if ((got == IBV_WC_REM_INV_REQ_ERR || got == IBV_WC_REM_ACCESS_ERR) &&
		    opt.rxe_requester) {
			/*
			 * rxe (6.1) does not enforce its own max_msg_sz (8 MiB)
			 * and puts it on the wire (RETH length 8 MiB + 1): the
			 * responder refused it (past the 8 KiB region: Remote
			 * Access Error) and went to ERR.
			 */
			note("the requester sent it, longer than its own max_msg_sz %" PRIu64
			     ": the responder answered %s",
			     max, st(got));
			e = Expect{got, IBV_QPS_ERR, IBV_QPS_ERR, {IBV_WC_WR_FLUSH_ERR}};
		} else if (got != IBV_WC_LOC_LEN_ERR && opt.rxe_requester) {
			note("rxe as requester: %s (expected %s)",
			     wcs.empty() ? "no completion" : wc_str(wcs[0]).c_str(),
			     st(IBV_WC_LOC_LEN_ERR));
			/* rxe finds its protection error packet by packet */
			e.start_may_leave = got == IBV_WC_LOC_PROT_ERR;
		} else if (got != IBV_WC_LOC_LEN_ERR) {
			bad("requester: %s, expected %s",
			    wcs.empty() ? "no completion" : wc_str(wcs[0]).c_str(),
			    st(IBV_WC_LOC_LEN_ERR));
		}
		if (wcs.size() == 2 && wcs[1].status != IBV_WC_WR_FLUSH_ERR)
			bad("the WRITE after it: %s, expected flushed", wc_str(wcs[1]).c_str());
		if (qp_state(c.qp.get()) != IBV_QPS_ERR)
			bad("requester QP not in ERR");
	}
	check_responder(e, CheckReq{e.on_wire ? 2000U : 300U, 0, -1, 0, {}});
	case_end();
}

/* A type 2 MW: usable while bound, refused after LOCAL_INV and outside. */
void case_mw(bool invalidate)
{
	case_begin(invalidate ? "mw-after-local-inv" : "mw-outside-window");
	Setup s{};
	s.nrecv = 1;
	s.mw = 1;
	connect_case(s);
	Client &c = *cl;
	Msg r = call(mk(C_BIND_MW), "BIND_MW");
	if (r.err) {
		bad("server could not bind the MW: %s", std::strerror(r.err));
		case_end();
		return;
	}
	uint32_t rkey = r.ep.mw_rkey;
	uint64_t win = c.srv.addr[R_MW] + MW_OFF;
	/* works while bound */
	Wr ok(1, IBV_WR_RDMA_WRITE, 128, 64);
	ok.rdma(win, rkey);
	ibv_send_wr *badwr;
	if (ibv_post_send(c.qp.get(), &ok.wr, &badwr))
		fatal("ibv_post_send");
	auto wcs = poll_n(c.scq.get(), 1, 10000);
	if (wcs.size() != 1 || wcs[0].status != IBV_WC_SUCCESS)
		bad("WRITE through the bound window: %s",
		    wcs.empty() ? "no completion" : wc_str(wcs[0]).c_str());
	if (invalidate && call(mk(C_LOCAL_INV), "LOCAL_INV").err)
		bad("server's LOCAL_INV of the MW failed");
	Wr w(3, IBV_WR_RDMA_WRITE, 0, 64);
	if (invalidate)
		w.rdma(win, rkey);
	else
		w.rdma(win + MW_LEN - 32, rkey); /* inside the MR, past the window */
	Expect e{IBV_WC_REM_ACCESS_ERR, IBV_QPS_ERR, IBV_QPS_ERR, {IBV_WC_WR_FLUSH_ERR}};
	Wr follow(2, IBV_WR_RDMA_WRITE, 0, 8);
	follow.rdma(c.srv.addr[R_FULL] + FOLLOW_OFF, c.srv.rkey[R_FULL]);
	w.wr.next = &follow.wr;
	if (ibv_post_send(c.qp.get(), &w.wr, &badwr))
		fatal("ibv_post_send");
	wcs = poll_n(c.scq.get(), 2, 10000);
	if (!invalidate && opt.rxe_responder && !wcs.empty() && wcs[0].status == IBV_WC_SUCCESS) {
		note("rxe lets a WRITE through past the end of a type 2 MW's window (it "
		     "checks the MR's bounds only): the MR's bytes after the window changed");
		case_end();
		return;
	}
	if (wcs.empty() || wcs[0].status != IBV_WC_REM_ACCESS_ERR)
		bad("requester: %s, expected %s",
		    wcs.empty() ? "no completion" : wc_str(wcs[0]).c_str(),
		    st(IBV_WC_REM_ACCESS_ERR));
	if (wcs.size() < 2 || wcs[1].status != IBV_WC_WR_FLUSH_ERR)
		bad("the WRITE after it was not flushed");
	if (qp_state(c.qp.get()) != IBV_QPS_ERR)
		bad("requester QP not in ERR");
	CheckReq cr{};
	cr.nranges = 1;
	cr.r[0] = {reg_off(R_MW) + MW_OFF, 64, c.key, 128};
	check_responder(e, cr);
	case_end();
}

/* ------------------------------------------------------------------ */
/* Cases: RNR */

/* IBTA table 45: min_rnr_timer code -> microseconds */
uint32_t rnr_usecs(unsigned code)
{
	static const uint32_t t[32] = {
	    655360, 10,	   20,	  30,	 40,	60,	80,	120,	160,	240,   320,
	    480,    640,   960,	  1280,	 1920,	2560,	3840,	5120,	7680,	10240, 15360,
	    20480,  30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520};
	return t[code & 31];
}

constexpr unsigned RNR_CODE = 24; /* 40.96 ms */

void case_rnr(int retry)
{
	std::string name = "rnr-retry-" + std::to_string(retry);
	case_begin(name);
	Setup s{};
	s.nrecv = 0;
	s.min_rnr_timer = RNR_CODE;
	connect_case(s, (uint8_t)retry);
	Client &c = *cl;
	Counters before = counters();
	/* the server's counters: ask for them through a CHECK */
	CheckRep sb = check(CheckReq{0, 0, -1, 0, {}});
	Wr w(1, IBV_WR_SEND, 0, 64);
	double t0 = now_s();
	if (retry < 7) {
		Wr follow(2, IBV_WR_RDMA_WRITE, 0, 8);
		follow.rdma(c.srv.addr[R_FULL] + FOLLOW_OFF, c.srv.rkey[R_FULL]);
		w.wr.next = &follow.wr;
		ibv_send_wr *badwr;
		if (ibv_post_send(c.qp.get(), &w.wr, &badwr))
			fatal("ibv_post_send");
		auto wcs = poll_n(c.scq.get(), 1, 20000);
		double dt = now_s() - t0;
		auto rest = poll_n(c.scq.get(), 1, 2000);
		if (wcs.empty() || wcs[0].status != IBV_WC_RNR_RETRY_EXC_ERR) {
			bad("requester: %s, expected %s",
			    wcs.empty() ? "no completion" : wc_str(wcs[0]).c_str(),
			    st(IBV_WC_RNR_RETRY_EXC_ERR));
		}
		if (rest.empty() || rest[0].status != IBV_WC_WR_FLUSH_ERR)
			bad("the WRITE after it was not flushed");
		double min_s = retry * rnr_usecs(RNR_CODE) / 1e6;
		msg("case %s: RNR_RETRY_EXC_ERR after %.3f s (%d retries x %.2f ms = %.3f s at "
		    "least)",
		    name.c_str(), dt, retry, rnr_usecs(RNR_CODE) / 1e3, min_s);
		if (dt < min_s * 0.95)
			bad("retries not paced by min_rnr_timer: %.3f s < %.3f s", dt, min_s);
		if (dt > min_s * 4 + 3)
			bad("took too long: %.3f s for %d retries", dt, retry);
		if (qp_state(c.qp.get()) != IBV_QPS_ERR)
			bad("requester QP not in ERR");
		/* ib_core caches hw counters for their lifespan (rxe: 10 ms) */
		usleep(50000);
		/* RNR is no error for the responder: still RTS, nothing written */
		CheckRep rep = check(CheckReq{200, 0, IBV_QPS_RTS, 0, {}});
		if (rep.qp_state != IBV_QPS_RTS)
			bad("responder QP in %s, expected RTS", qp_state_str(rep.qp_state));
		expect_recvs(rep, {});
		if (rep.bad)
			bad("responder's buffer changed (%" PRIu64 " bytes)", rep.bad);
		Counters after = counters();
		int64_t want = retry + 1;
		if (before.rnr_rcvd >= 0) {
			int64_t got = after.rnr_rcvd - before.rnr_rcvd;
			msg("case %s: requester counted %" PRId64 " RNR NAKs received",
			    name.c_str(), got);
			if (got != want)
				bad("requester's RNR NAK counter moved by %" PRId64
				    ", expected %" PRId64,
				    got, want);
		}
		if (sb.cnt.rnr_sent >= 0) {
			int64_t got = rep.cnt.rnr_sent - sb.cnt.rnr_sent;
			msg("case %s: responder counted %" PRId64 " RNR NAKs sent", name.c_str(),
			    got);
			if (got != want)
				bad("responder's RNR NAK counter moved by %" PRId64
				    ", expected %" PRId64,
				    got, want);
		}
	} else {
		ibv_send_wr *badwr;
		if (ibv_post_send(c.qp.get(), &w.wr, &badwr))
			fatal("ibv_post_send");
		auto wcs = poll_n(c.scq.get(), 1, 600);
		if (!wcs.empty())
			bad("completed without a receive: %s", wc_str(wcs[0]).c_str());
		Msg m = mk(C_POST_RECV);
		m.arg = 1;
		if (call(m, "POST_RECV").err)
			fatal("server could not post the receive");
		wcs = poll_n(c.scq.get(), 1, 10000);
		if (wcs.empty() || wcs[0].status != IBV_WC_SUCCESS)
			bad("requester: %s, expected success once the receive was posted",
			    wcs.empty() ? "no completion" : wc_str(wcs[0]).c_str());
		CheckReq cr{5000, 1, IBV_QPS_RTS, 1, {}};
		cr.r[0] = {reg_off(R_RECV), 64, c.key, 0};
		CheckRep rep = check(cr);
		expect_recvs(rep, {IBV_WC_SUCCESS});
		if (rep.nwc && rep.wc[0].byte_len != 64)
			bad("receive byte_len %u, expected 64", rep.wc[0].byte_len);
		if (rep.bad)
			bad("responder's buffer: %" PRIu64 " bytes wrong", rep.bad);
		if (rep.qp_state != IBV_QPS_RTS || qp_state(c.qp.get()) != IBV_QPS_RTS)
			bad("a QP left RTS");
		Counters after = counters();
		if (before.rnr_rcvd >= 0) {
			int64_t got = after.rnr_rcvd - before.rnr_rcvd;
			msg("case %s: %" PRId64 " RNR NAKs received while the receive was missing",
			    name.c_str(), got);
			if (got < 2)
				bad("requester's RNR NAK counter moved by %" PRId64 " only", got);
		}
		if (sb.cnt.rnr_sent >= 0 && rep.cnt.rnr_sent - sb.cnt.rnr_sent < 2)
			bad("responder's RNR NAK counter moved by %" PRId64 " only",
			    rep.cnt.rnr_sent - sb.cnt.rnr_sent);
	}
	case_end();
}

/*
 * The RNR retry budget is per message: with rnr_retry 2, three SENDs one
 * after the other each meet an RNR NAK (the receive is posted after it)
 * and all complete.  A requester that spent its budget for the QP's life
 * fails the third with IBV_WC_RNR_RETRY_EXC_ERR.  (rnr_retry 2, not 1:
 * on a loaded host the receive may miss the first 491 ms retry too, and
 * a second NAK for one message is within a per-message budget.)
 */
void case_rnr_reset()
{
	case_begin("rnr-retry-per-message");
	Setup s{};
	s.nrecv = 0;
	s.min_rnr_timer = 31; /* 491.52 ms: room to post the receive */
	connect_case(s, 2);
	Client &c = *cl;
	for (int i = 0; i < 3 && !cur_failed; i++) {
		Counters before = counters();
		Wr w(10 + i, IBV_WR_SEND, 64 * i, 64);
		ibv_send_wr *badwr;
		if (ibv_post_send(c.qp.get(), &w.wr, &badwr))
			fatal("ibv_post_send");
		/* until the RNR NAK is in (where the counter is readable) */
		double end = now_s() + 2;
		auto wcs = poll_n(c.scq.get(), 1, 250);
		while (wcs.empty() && before.rnr_rcvd >= 0 &&
		       counters().rnr_rcvd == before.rnr_rcvd && now_s() < end)
			wcs = poll_n(c.scq.get(), 1, 20);
		if (!wcs.empty()) {
			bad("SEND %d completed before its receive was posted: %s", i,
			    wc_str(wcs[0]).c_str());
			break;
		}
		Msg m = mk(C_POST_RECV);
		m.arg = 1;
		if (call(m, "POST_RECV").err)
			fatal("server could not post the receive");
		wcs = poll_n(c.scq.get(), 1, 5000);
		if (wcs.empty() || wcs[0].status != IBV_WC_SUCCESS)
			bad("SEND %d after an RNR NAK with rnr_retry 2: %s, expected success", i,
			    wcs.empty() ? "no completion" : wc_str(wcs[0]).c_str());
	}
	CheckReq cr{3000, 3, IBV_QPS_RTS, 0, {}};
	CheckRep rep = check(cr);
	if (!cur_failed)
		expect_recvs(rep, {IBV_WC_SUCCESS, IBV_WC_SUCCESS, IBV_WC_SUCCESS});
	case_end();
}

/* ------------------------------------------------------------------ */
/* Cases: SEND_WITH_INV */

enum InvKind { INV_MW, INV_NOTHING, INV_PLAIN_MR };

void case_inv(InvKind k)
{
	static const char *const names[] = {"send-inv-mw", "send-inv-bad-rkey",
					    "send-inv-plain-mr"};
	case_begin(names[k]);
	Setup s{};
	s.nrecv = 2;
	s.mw = 1;
	connect_case(s);
	Client &c = *cl;
	Msg r = call(mk(C_BIND_MW), "BIND_MW");
	if (r.err) {
		bad("server could not bind the MW: %s", std::strerror(r.err));
		case_end();
		return;
	}
	uint32_t mw_rkey = r.ep.mw_rkey;
	uint64_t win = c.srv.addr[R_MW] + MW_OFF;
	uint32_t inv = k == INV_MW	   ? mw_rkey
		       : k == INV_PLAIN_MR ? c.srv.rkey[R_FULL]
					   : (mw_rkey ^ 0x00f0f000U);
	ibv_send_wr *badwr;
	Wr w(1, IBV_WR_SEND_WITH_INV, 256, 100);
	w.wr.invalidate_rkey = inv;
	if (ibv_post_send(c.qp.get(), &w.wr, &badwr))
		fatal("ibv_post_send");
	auto wcs = poll_n(c.scq.get(), 1, 10000);
	CheckReq cr{};
	if (k == INV_MW) {
		if (wcs.empty() || wcs[0].status != IBV_WC_SUCCESS)
			bad("SEND_WITH_INV: %s, expected success",
			    wcs.empty() ? "no completion" : wc_str(wcs[0]).c_str());
		/* now the window's rkey is gone */
		Wr w2(3, IBV_WR_RDMA_WRITE, 0, 64);
		w2.rdma(win, mw_rkey);
		Wr follow(2, IBV_WR_RDMA_WRITE, 0, 8);
		follow.rdma(c.srv.addr[R_FULL] + FOLLOW_OFF, c.srv.rkey[R_FULL]);
		w2.wr.next = &follow.wr;
		if (ibv_post_send(c.qp.get(), &w2.wr, &badwr))
			fatal("ibv_post_send");
		wcs = poll_n(c.scq.get(), 2, 10000);
		if (wcs.empty() || wcs[0].status != IBV_WC_REM_ACCESS_ERR)
			bad("WRITE with the invalidated rkey: %s, expected %s",
			    wcs.empty() ? "no completion" : wc_str(wcs[0]).c_str(),
			    st(IBV_WC_REM_ACCESS_ERR));
		if (wcs.size() < 2 || wcs[1].status != IBV_WC_WR_FLUSH_ERR)
			bad("the WRITE after it was not flushed");
		cr = CheckReq{3000, 2, IBV_QPS_ERR, 1, {}};
		cr.r[0] = {reg_off(R_RECV), 100, c.key, 256};
		cr.want_event = IBV_EVENT_QP_ACCESS_ERR;
		CheckRep rep = check(cr);
		check_event(rep, cr.want_event);
		expect_recvs(rep, {IBV_WC_SUCCESS, IBV_WC_WR_FLUSH_ERR});
		if (rep.nwc && opt.rxe_responder && rep.wc[0].opcode == IBV_WC_RECV &&
		    (rep.wc[0].wc_flags & (IBV_WC_WITH_INV | IBV_WC_IP_CSUM_OK)) ==
			IBV_WC_IP_CSUM_OK &&
		    ntohl(rep.wc[0].imm_inv) == mw_rkey) {
			note("rxe flags the receive with the kernel's IB_WC_WITH_INVALIDATE "
			     "bit, which is IBV_WC_IP_CSUM_OK to userspace (flags %#x); the "
			     "rkey itself is right",
			     rep.wc[0].wc_flags);
			rep.wc[0].wc_flags |= IBV_WC_WITH_INV;
			rep.wc[0].imm_inv = mw_rkey;
		}
		if (rep.nwc) {
			const WcRec &x = rep.wc[0];
			if (x.opcode != IBV_WC_RECV || !(x.wc_flags & IBV_WC_WITH_INV) ||
			    x.imm_inv != mw_rkey || x.byte_len != 100)
				bad("receive: %s; expected IBV_WC_RECV, IBV_WC_WITH_INV, "
				    "invalidated_rkey %#x, byte_len 100",
				    wc_str(x).c_str(), mw_rkey);
		}
		if (rep.qp_state != IBV_QPS_ERR)
			bad("responder QP in %s, expected ERR", qp_state_str(rep.qp_state));
		if (rep.bad)
			bad("responder's buffer: %" PRIu64 " bytes wrong, first at %" PRIu64,
			    rep.bad, rep.first_bad);
	} else {
		bool rxe_acked =
		    opt.rxe_responder && !wcs.empty() && wcs[0].status == IBV_WC_SUCCESS;
		if (rxe_acked)
			note(
			    "rxe ACKs a SEND_WITH_INV whose invalidation fails, then completes the "
			    "receive in error and moves its QP to ERR: the requester never learns");
		else if (wcs.empty() || wcs[0].status == IBV_WC_SUCCESS)
			bad("SEND_WITH_INV of %s: %s, expected an error",
			    k == INV_NOTHING ? "an rkey that names nothing" : "a plain MR's rkey",
			    wcs.empty() ? "no completion" : wc_str(wcs[0]).c_str());
		else if (wcs[0].status != IBV_WC_REM_INV_REQ_ERR)
			note("requester got %s (Invalid Request NAK expected: %s)",
			     st(wcs[0].status), st(IBV_WC_REM_INV_REQ_ERR));
		if (!rxe_acked && qp_state(c.qp.get()) != IBV_QPS_ERR)
			bad("requester QP not in ERR");
		/* the receive completes in error; the window and MR stay as they were */
		cr = CheckReq{3000, 2, IBV_QPS_ERR, 1, {}};
		cr.r[0] = {reg_off(R_RECV), 100, c.key, 256}; /* placed before the check */
		cr.want_event = IBV_EVENT_QP_REQ_ERR;
		CheckRep rep = check(cr);
		check_event(rep, cr.want_event);
		if (rep.qp_state != IBV_QPS_ERR)
			bad("responder QP in %s, expected ERR", qp_state_str(rep.qp_state));
		if (rep.nwc < 1 || rep.wc[0].status == IBV_WC_SUCCESS ||
		    rep.wc[0].status == IBV_WC_WR_FLUSH_ERR)
			bad("responder's receive: %s, expected an error completion",
			    rep.nwc ? wc_str(rep.wc[0]).c_str() : "none");
		else
			msg("case %s: responder's receive: %s", cur_case.c_str(),
			    wc_str(rep.wc[0]).c_str());
		/* only the receive buffer may differ */
		if (rep.bad && rep.first_bad < reg_off(R_RECV))
			bad("responder's buffer changed at %" PRIu64, rep.first_bad);
	}
	case_end();
}

/* ------------------------------------------------------------------ */
/* Cases: SGE limits */

void case_sge()
{
	case_begin("max-sge");
	Setup s{};
	s.nrecv = 1;
	s.recv_len = 4096;
	s.recv_sge = 0; /* set below, from the server's max_recv_sge */
	/* the server's QP limits are known only after setup: ask twice */
	connect_case(s);
	uint32_t srv_rsge = cl->srv.max_recv_sge;
	teardown();
	s.recv_sge = std::min(srv_rsge, 32U);
	case_no++;
	connect_case(s);
	Client &c = *cl;
	uint32_t n = c.send_sge;
	msg("case max-sge: max_send_sge %u here, max_recv_sge %u at the server", n, srv_rsge);
	if (n < 32 || srv_rsge < 32)
		bad("fewer than 32 SGEs (send %u, receive %u)", n, srv_rsge);
	n = std::min(n, 64U);
	/* n SGEs, each 16 bytes from every other 32-byte slot */
	std::vector<ibv_sge> sg(n + 1);
	for (uint32_t i = 0; i <= n; i++)
		sg[i] = {laddr(i * 32), 16, c.mr->lkey};
	Wr w(1, IBV_WR_SEND, 0, 0);
	w.wr.sg_list = sg.data();
	w.wr.num_sge = (int)n + 1;
	ibv_send_wr *badwr = nullptr;
	int err = ibv_post_send(c.qp.get(), &w.wr, &badwr);
	if (err != EINVAL || badwr != &w.wr)
		bad("ibv_post_send with %u SGEs: %s (bad_wr %s), expected EINVAL", n + 1,
		    err ? std::strerror(err) : "accepted", badwr == &w.wr ? "set" : "not set");
	if (poll_n(c.scq.get(), 1, 300).size())
		bad("the refused WR completed");
	/* the same for a receive one SGE over max_recv_sge, here */
	{
		std::vector<ibv_sge> rs(c.recv_sge + 1, ibv_sge{laddr(32768), 16, c.mr->lkey});
		ibv_recv_wr rw{}, *rbad = nullptr;
		rw.wr_id = 99;
		rw.sg_list = rs.data();
		rw.num_sge = (int)c.recv_sge + 1;
		int rerr = ibv_post_recv(c.qp.get(), &rw, &rbad);
		if (rerr != EINVAL || rbad != &rw)
			bad("ibv_post_recv with %u SGEs (max_recv_sge %u): %s, expected EINVAL",
			    c.recv_sge + 1, c.recv_sge, rerr ? std::strerror(rerr) : "accepted");
	}
	w.wr.num_sge = (int)n;
	if ((err = ibv_post_send(c.qp.get(), &w.wr, &badwr)))
		bad("ibv_post_send with %u SGEs: %s", n, std::strerror(err));
	auto wcs = poll_n(c.scq.get(), 1, 10000);
	if (wcs.empty() || wcs[0].status != IBV_WC_SUCCESS)
		bad("SEND with %u SGEs: %s", n,
		    wcs.empty() ? "no completion" : wc_str(wcs[0]).c_str());
	/* the server's receive: 4096 bytes over srv_rsge SGEs, n * 16 arrive */
	/* gathered in order, scattered contiguously over the receive's SGEs */
	CheckReq cr{5000, 1, IBV_QPS_RTS, n, {}};
	for (uint32_t i = 0; i < n; i++)
		cr.r[i] = {reg_off(R_RECV) + i * 16, 16, c.key, i * 32};
	CheckRep rep = check(cr);
	expect_recvs(rep, {IBV_WC_SUCCESS});
	if (rep.nwc && rep.wc[0].byte_len != n * 16)
		bad("receive byte_len %u, expected %u", rep.wc[0].byte_len, n * 16);
	if (rep.bad)
		bad("responder's buffer: %" PRIu64 " bytes wrong, first at %" PRIu64, rep.bad,
		    rep.first_bad);
	if (rep.qp_state != IBV_QPS_RTS)
		bad("responder QP left RTS");
	case_end();
}

/* ------------------------------------------------------------------ */
/* Cases: 2 GiB messages */

enum LargeOp { L_WRITE, L_READ, L_SEND };

/*
 * One message of 2^31 bytes.  The client's 32 SGEs all cover the same 64
 * MiB of virtual memory, which is a 1 MiB memfd mapped 64 times; the
 * server's MR is 2 GiB of virtual memory, a 2 MiB memfd mapped 1024
 * times.  Message byte x is client byte x mod 1 MiB; the server's byte p
 * ends up as the last message byte placed there.
 */
void case_large(LargeOp op)
{
	static const char *const names[] = {"large-write", "large-read", "large-send"};
	case_begin(names[op]);
	Setup s{};
	s.nrecv = op == L_SEND ? 1 : 0;
	s.recv_sge = LARGE_SGES;
	connect_case(s, 7, true);
	Client &c = *cl;
	if (c.me.max_msg_sz < LARGE_MSG || c.srv.max_msg_sz < LARGE_MSG ||
	    c.send_sge < LARGE_SGES || c.srv.max_recv_sge < LARGE_SGES) {
		bad("max_msg_sz %" PRIu64 "/%" PRIu64
		    " or SGEs %u/%u too small for 2 GiB in 32 SGEs",
		    c.me.max_msg_sz, c.srv.max_msg_sz, c.send_sge, c.srv.max_recv_sge);
		case_end();
		return;
	}
	ibv_sge sg[LARGE_SGES];
	for (auto &g : sg)
		g = {laddr(0), (uint32_t)CLI_SPAN, c.mr->lkey};
	Wr w(1,
	     op == L_WRITE  ? IBV_WR_RDMA_WRITE
	     : op == L_READ ? IBV_WR_RDMA_READ
			    : IBV_WR_SEND,
	     0, 0);
	w.wr.sg_list = sg;
	w.wr.num_sge = LARGE_SGES;
	w.rdma(c.srv.addr[R_FULL], c.srv.rkey[R_FULL]);
	if (op == L_READ) /* the destination starts out as something else */
		std::memset(c.mem.phys, 0xa5, CLI_MEMFD);
	ibv_send_wr *badwr;
	double t0 = now_s();
	if (int err = ibv_post_send(c.qp.get(), &w.wr, &badwr))
		fatal("ibv_post_send of 2 GiB: %s", std::strerror(err));
	auto wcs = poll_n(c.scq.get(), 1, (int)(deadline.ms_left(600000)));
	double dt = now_s() - t0;
	if (wcs.empty() || wcs[0].status != IBV_WC_SUCCESS) {
		bad("%s of 2 GiB: %s", names[op],
		    wcs.empty() ? "no completion" : wc_str(wcs[0]).c_str());
	} else {
		msg("case %s: 2 GiB in %.1f s (%.0f MB/s)", names[op], dt, LARGE_MSG / dt / 1e6);
		if (op == L_READ && wcs[0].byte_len != LARGE_MSG)
			bad("READ byte_len %u, expected %" PRIu64, wcs[0].byte_len, LARGE_MSG);
	}
	CheckReq cr{10000, op == L_SEND ? 1U : 0U, IBV_QPS_RTS, 0, {}};
	if (op != L_READ) {
		/* server byte p = message byte x with x = p (mod 2 MiB): client byte p mod 1 MiB */
		cr.nranges = 2;
		cr.r[0] = {0, CLI_MEMFD, c.key, 0};
		cr.r[1] = {CLI_MEMFD, CLI_MEMFD, c.key, 0};
	}
	CheckRep rep = check(cr);
	if (op == L_SEND) {
		expect_recvs(rep, {IBV_WC_SUCCESS});
		if (rep.nwc && rep.wc[0].byte_len != LARGE_MSG)
			bad("receive byte_len %u, expected %" PRIu64, rep.wc[0].byte_len,
			    LARGE_MSG);
	}
	if (rep.bad)
		bad("server's memory: %" PRIu64 " bytes wrong, first at %" PRIu64, rep.bad,
		    rep.first_bad);
	if (rep.qp_state != IBV_QPS_RTS || qp_state(c.qp.get()) != IBV_QPS_RTS)
		bad("a QP left RTS");
	if (op == L_READ) {
		/* client byte q: the last message byte y = q (mod 1 MiB), y = 2047 MiB + q,
		 * which is server byte y mod 2 MiB = 1 MiB + q of the guard */
		size_t first = 0;
		uint64_t nbad = check_stream(c.mem.phys, s.guard_key ? s.guard_key : guard_key(),
					     CLI_MEMFD, CLI_MEMFD, &first);
		if (nbad)
			bad("READ destination: %" PRIu64 " bytes wrong, first at %zu", nbad, first);
	}
	case_end();
}

/*
 * A 2 GiB READ at path MTU 256 is 2^23 response PSNs: more than a
 * requester may have outstanding (2^23 - 1, or its signed PSN distances
 * wrap and the QP hangs with no completion).  It must end at once with a
 * local length error, nothing on the wire, the responder still RTS.
 */
void case_psn_span()
{
	case_begin("read-psn-span");
	mtu_cap = IBV_MTU_256;
	Setup s{};
	connect_case(s, 7, true);
	mtu_cap = IBV_MTU_4096;
	Client &c = *cl;
	ibv_sge sg[LARGE_SGES];
	for (auto &g : sg)
		g = {laddr(0), (uint32_t)CLI_SPAN, c.mr->lkey};
	Wr w(1, IBV_WR_RDMA_READ, 0, 0);
	w.wr.sg_list = sg;
	w.wr.num_sge = LARGE_SGES;
	w.rdma(c.srv.addr[R_FULL], c.srv.rkey[R_FULL]);
	ibv_send_wr *badwr;
	if (int err = ibv_post_send(c.qp.get(), &w.wr, &badwr)) {
		note("ibv_post_send refused it: %s", std::strerror(err));
	} else {
		auto wcs = poll_n(c.scq.get(), 1, 30000);
		if (wcs.empty() || wcs[0].status != IBV_WC_LOC_LEN_ERR)
			bad("2 GiB READ at MTU 256: %s, expected %s",
			    wcs.empty() ? "no completion in 30 s" : wc_str(wcs[0]).c_str(),
			    st(IBV_WC_LOC_LEN_ERR));
	}
	CheckRep rep = check(CheckReq{300, 0, IBV_QPS_RTS, 0, {}});
	if (rep.qp_state != IBV_QPS_RTS)
		bad("the responder's QP left RTS");
	case_end();
}

/* ------------------------------------------------------------------ */

void run_cases()
{
	std::vector<std::string> want;
	for (size_t pos = 0; pos <= opt.cases.size();) {
		size_t comma = std::min(opt.cases.find(',', pos), opt.cases.size());
		want.push_back(opt.cases.substr(pos, comma - pos));
		pos = comma + 1;
	}
	auto on = [&](const std::string &name, const char *group) {
		return std::find(want.begin(), want.end(), name) != want.end() ||
		       std::find(want.begin(), want.end(), group) != want.end();
	};
	for (const auto &a : access_cases())
		if (on(a.name, "access"))
			run_access(a);
	if (on("mw-after-local-inv", "access"))
		case_mw(true);
	if (on("mw-outside-window", "access"))
		case_mw(false);
	if (on("write-too-long", "access"))
		case_too_long(IBV_WR_RDMA_WRITE, "write-too-long");
	if (on("read-too-long", "access"))
		case_too_long(IBV_WR_RDMA_READ, "read-too-long");
	for (int i = 0; i <= 7; i++)
		if (on("rnr-retry-" + std::to_string(i), "rnr"))
			case_rnr(i);
	if (on("rnr-retry-per-message", "rnr"))
		case_rnr_reset();
	for (int k = INV_MW; k <= INV_PLAIN_MR; k++) {
		static const char *const names[] = {"send-inv-mw", "send-inv-bad-rkey",
						    "send-inv-plain-mr"};
		if (on(names[k], "inv"))
			case_inv((InvKind)k);
	}
	if (on("max-sge", "sge"))
		case_sge();
	for (int op = L_WRITE; op <= L_SEND; op++) {
		static const char *const names[] = {"large-write", "large-read", "large-send"};
		if (on(names[op], "large"))
			case_large((LargeOp)op);
	}
	if (on("read-psn-span", "large"))
		case_psn_span();
}

void client()
{
	sock = tcp_connect(opt.host, opt.port);
	run_cases();
	call(mk(C_BYE), "BYE");
	msg("%d cases ok, %d failed", n_ok, n_failed);
}

void usage()
{
	std::fprintf(stderr, "usage: softrnic-rcsem -d DEV [-p PORT] [-6] [--timeout S] [--large]\n"
			     "                      [--cases LIST] [--rxe-responder] [SERVER]\n");
	std::exit(2);
}

} // namespace

int main(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"dev", required_argument, nullptr, 'd'},
	    {"port", required_argument, nullptr, 'p'},
	    {"ipv6", no_argument, nullptr, '6'},
	    {"cases", required_argument, nullptr, 'c'},
	    {"timeout", required_argument, nullptr, 't'},
	    {"large", no_argument, nullptr, 'L'},
	    {"rxe-responder", no_argument, nullptr, 'R'},
	    {"rxe-requester", no_argument, nullptr, 'Q'},
	    {"selftest-scribble", no_argument, nullptr, 'S'},
	    {nullptr, 0, nullptr, 0},
	};
	int ch;
	while ((ch = getopt_long(argc, argv, "d:p:6c:t:", lo, nullptr)) != -1) {
		switch (ch) {
		case 'd':
			opt.dev = optarg;
			break;
		case 'p':
			opt.port = std::atoi(optarg);
			break;
		case '6':
			opt.ipv6 = true;
			break;
		case 'c':
			opt.cases = optarg;
			break;
		case 't':
			opt.timeout = std::atof(optarg);
			break;
		case 'L':
			opt.large = true;
			break;
		case 'R':
			opt.rxe_responder = true;
			break;
		case 'Q':
			opt.rxe_requester = true;
			break;
		case 'S':
			opt.scribble = true;
			break;
		default:
			usage();
		}
	}
	if (optind < argc)
		opt.host = argv[optind++];
	if (optind != argc || opt.dev.empty())
		usage();
	log_prefix = opt.host.empty() ? "rcsem[server]" : "rcsem[client]";
	deadline.set(opt.timeout);

	ctx = open_device(opt.dev);
	if (ibv_query_device(ctx.get(), &dattr))
		fatal("ibv_query_device");
	pattr = wait_port_active(ctx.get(), opt.ib_port);
	gid_index = pick_gid(ctx.get(), opt.ib_port, pattr.gid_tbl_len, opt.ipv6);
	if (ibv_query_gid(ctx.get(), (uint8_t)opt.ib_port, gid_index, &my_gid))
		fatal("ibv_query_gid");
	psn_seed ^= (uint32_t)getpid();

	if (opt.host.empty())
		server();
	else
		client();
	ctx.reset();
	return n_failed ? 1 : 0;
}
