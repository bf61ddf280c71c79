// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrnic-scale: many RC QP pairs between two processes, every one of
 * them carrying verified traffic.  Used by tests/vm/scale_qps.sh.
 *
 *   server:  softrnic-scale -d DEV [options]
 *   client:  softrnic-scale -d DEV [options] SERVER_ADDRESS
 *
 * Both ends create --qps N RC QPs (small rings: 4 send and 2 receive
 * WRs, one SGE), one send and one receive CQ for all of them and one MR
 * over an arena with four --size byte areas per QP (source, WRITE
 * target, receive buffer, READ destination).  They meet over TCP,
 * exchange QP numbers, PSNs, GIDs and the arena's key, and connect QP i
 * to the peer's QP i.  Then, --rounds times, every QP of both ends
 * posts a receive, and (once both ends have) an RDMA WRITE of its source
 * area to the peer's WRITE target, a SEND of it to the peer's receive
 * buffer and an RDMA READ of the peer's source area, all signaled.  Every
 * completion must be SUCCESS with the right opcode, QP and (receives)
 * length, each QP must complete exactly its three sends and one receive,
 * and after the round every byte of the three target areas of every QP
 * must be the stream the peer's QP wrote (keyed by seed, round, end and
 * QP index).
 *
 * Output: timings of each phase and, last, `scale: N QPs, N rounds, N
 * ops, N bytes, S s`.  Exit 0 only if every completion and byte was
 * right, 1 if not, 2 on a setup or usage error.
 */
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

#include "common.h"

namespace
{

using srtest::fail;
using srtest::fatal;
using srtest::msg;

struct Options {
	std::string dev;
	std::string server; /* empty: we are the server */
	int port = 18530;
	uint32_t qps = 4096;
	uint32_t rounds = 2;
	uint32_t size = 512;
	double timeout = 150;
	uint64_t seed = 0x5ca1e;
};

/* What each end tells the other, then the QP numbers and PSNs. */
struct Hello {
	uint32_t qps;
	uint32_t size;
	uint32_t rkey;
	uint32_t mtu;
	uint64_t addr;
	uint64_t seed;
	uint8_t gid[16];
};

enum Area { SRC, WDST, RDST, RDDST, AREAS };
enum Op : uint64_t { OP_WRITE, OP_SEND, OP_READ, OP_RECV };

constexpr int SEND_WR = 4, RECV_WR = 2;

/* The stream end @end's QP @qp sends in round @round. */
uint64_t key_of(uint64_t seed, uint32_t round, int end, uint32_t qp)
{
	return srtest::fmix(seed ^ ((uint64_t)round << 40) ^ ((uint64_t)end << 32) ^ qp);
}

double since(double t0)
{
	return srtest::now_s() - t0;
}

/* A /proc/meminfo field in kB, -1 if there is none. */
long meminfo(const char *field)
{
	FILE *f = std::fopen("/proc/meminfo", "r");
	char line[256];
	long v = -1;
	size_t n = std::strlen(field);
	while (f && std::fgets(line, sizeof(line), f))
		if (!std::strncmp(line, field, n) && line[n] == ':')
			v = std::atol(line + n + 1);
	if (f)
		std::fclose(f);
	return v;
}

void usage()
{
	std::fprintf(stderr, "usage: softrnic-scale -d DEV [-p PORT] [-q QPS] [-r ROUNDS] "
			     "[-s SIZE] [--timeout S] [--seed N] [SERVER_ADDRESS]\n");
	std::exit(2);
}

Options parse(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"dev", required_argument, nullptr, 'd'},  {"port", required_argument, nullptr, 'p'},
	    {"qps", required_argument, nullptr, 'q'},  {"rounds", required_argument, nullptr, 'r'},
	    {"size", required_argument, nullptr, 's'}, {"timeout", required_argument, nullptr, 't'},
	    {"seed", required_argument, nullptr, 'S'}, {nullptr, 0, nullptr, 0}};
	Options o;
	int c;
	while ((c = getopt_long(argc, argv, "d:p:q:r:s:", longopts, nullptr)) != -1) {
		switch (c) {
		case 'd':
			o.dev = optarg;
			break;
		case 'p':
			o.port = std::atoi(optarg);
			break;
		case 'q':
			o.qps = (uint32_t)std::strtoul(optarg, nullptr, 0);
			break;
		case 'r':
			o.rounds = (uint32_t)std::strtoul(optarg, nullptr, 0);
			break;
		case 's':
			o.size = (uint32_t)std::strtoul(optarg, nullptr, 0);
			break;
		case 't':
			o.timeout = std::atof(optarg);
			break;
		case 'S':
			o.seed = std::strtoull(optarg, nullptr, 0);
			break;
		default:
			usage();
		}
	}
	if (optind < argc)
		o.server = argv[optind++];
	if (optind != argc || o.dev.empty() || !o.qps || !o.rounds || !o.size)
		usage();
	return o;
}

class Scale
{
public:
	explicit Scale(const Options &o) : o_(o), end_(o.server.empty() ? 0 : 1) {}

	void setup();
	void exchange();
	void connect();
	void round(uint32_t r);
	void destroy();
	uint64_t ops() const { return ops_; }
	uint64_t bytes() const { return bytes_; }

private:
	uint8_t *area(uint32_t qp, Area a) const
	{
		return arena_ + ((size_t)qp * AREAS + a) * o_.size;
	}
	uint64_t peer_area(uint32_t qp, Area a) const
	{
		return peer_.addr + ((uint64_t)qp * AREAS + a) * o_.size;
	}
	void barrier(const char *what);
	void post(uint32_t r);
	void complete();
	void check_wc(const ibv_wc &wc, bool recv);
	void verify(uint32_t r);

	const Options &o_;
	int end_; /* 0 server, 1 client */
	srtest::ContextPtr ctx_;
	srtest::PdPtr pd_;
	ibv_comp_channel *chan_ = nullptr;
	srtest::CqPtr scq_, rcq_;
	uint8_t *arena_ = nullptr;
	size_t arena_len_ = 0;
	srtest::MrPtr mr_;
	std::vector<srtest::QpPtr> qps_;
	std::vector<uint32_t> psn_, peer_qpn_, peer_psn_;
	/* QP number -> index; per QP, the completions of this round. */
	std::vector<uint32_t> index_of_;
	std::vector<uint8_t> done_;
	int gid_index_ = 0;
	ibv_mtu mtu_ = IBV_MTU_1024;
	uint8_t gid_[16] = {};
	Hello peer_{};
	int fd_ = -1;
	uint64_t ops_ = 0, bytes_ = 0;
};

void Scale::setup()
{
	ctx_ = srtest::open_device(o_.dev);
	ibv_device_attr da{};
	if (ibv_query_device(ctx_.get(), &da))
		fatal("ibv_query_device: %s", std::strerror(errno));
	if ((uint64_t)o_.qps > (uint64_t)da.max_qp)
		fatal("%u QPs asked for, %s offers max_qp %d", o_.qps, o_.dev.c_str(), da.max_qp);
	uint64_t send_cqes = (uint64_t)o_.qps * 3;
	if (send_cqes > (uint64_t)da.max_cqe)
		fatal("%" PRIu64 " CQEs needed, %s offers max_cqe %d", send_cqes, o_.dev.c_str(),
		      da.max_cqe);
	ibv_port_attr pa = srtest::wait_port_active(ctx_.get(), 1);
	mtu_ = pa.active_mtu;
	gid_index_ = srtest::pick_gid(ctx_.get(), 1, pa.gid_tbl_len, false);
	ibv_gid g;
	if (ibv_query_gid(ctx_.get(), 1, gid_index_, &g))
		fatal("ibv_query_gid: %s", std::strerror(errno));
	std::memcpy(gid_, g.raw, 16);

	pd_.reset(ibv_alloc_pd(ctx_.get()));
	if (!pd_)
		fatal("ibv_alloc_pd: %s", std::strerror(errno));
	chan_ = ibv_create_comp_channel(ctx_.get());
	if (!chan_)
		fatal("ibv_create_comp_channel: %s", std::strerror(errno));
	scq_.reset(ibv_create_cq(ctx_.get(), (int)send_cqes, nullptr, chan_, 0));
	rcq_.reset(ibv_create_cq(ctx_.get(), (int)o_.qps, nullptr, chan_, 0));
	if (!scq_ || !rcq_)
		fatal("ibv_create_cq: %s", std::strerror(errno));

	arena_len_ = (size_t)o_.qps * AREAS * o_.size;
	void *p =
	    mmap(nullptr, arena_len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		fatal("mmap %zu bytes: %s", arena_len_, std::strerror(errno));
	arena_ = static_cast<uint8_t *>(p);
	mr_.reset(
	    ibv_reg_mr(pd_.get(), arena_, arena_len_,
		       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ));
	if (!mr_)
		fatal("ibv_reg_mr: %s", std::strerror(errno));

	double t0 = srtest::now_s();
	qps_.reserve(o_.qps);
	psn_.resize(o_.qps);
	for (uint32_t i = 0; i < o_.qps; i++) {
		ibv_qp_init_attr ia{};
		ia.send_cq = scq_.get();
		ia.recv_cq = rcq_.get();
		ia.qp_type = IBV_QPT_RC;
		ia.cap.max_send_wr = SEND_WR;
		ia.cap.max_recv_wr = RECV_WR;
		ia.cap.max_send_sge = 1;
		ia.cap.max_recv_sge = 1;
		ibv_qp *qp = ibv_create_qp(pd_.get(), &ia);
		if (!qp)
			fatal("ibv_create_qp %u of %u: %s", i + 1, o_.qps, std::strerror(errno));
		qps_.emplace_back(qp);
		if (qp->qp_num >= index_of_.size())
			index_of_.resize(qp->qp_num + 1, UINT32_MAX);
		if (index_of_[qp->qp_num] != UINT32_MAX)
			fail("QP number %u given twice", qp->qp_num);
		index_of_[qp->qp_num] = i;
		psn_[i] = (uint32_t)srtest::fmix(o_.seed + i * 7 + (uint64_t)end_) & 0xffffff;
	}
	done_.resize(o_.qps);
	msg("created %u QPs in %.2f s (QP numbers %u..%u)", o_.qps, since(t0), qps_.front()->qp_num,
	    qps_.back()->qp_num);
}

void Scale::barrier(const char *what)
{
	char c = 'B', d;
	srtest::tcp_send_all(fd_, &c, 1);
	srtest::tcp_recv_all(fd_, &d, 1, what);
}

void Scale::exchange()
{
	fd_ = end_ ? srtest::tcp_connect(o_.server, o_.port) : srtest::tcp_listen_accept(o_.port);
	Hello h{};
	h.qps = o_.qps;
	h.size = o_.size;
	h.rkey = mr_->rkey;
	h.mtu = mtu_;
	h.addr = (uint64_t)(uintptr_t)arena_;
	h.seed = o_.seed;
	std::memcpy(h.gid, gid_, 16);
	srtest::tcp_send_all(fd_, &h, sizeof(h));
	srtest::tcp_recv_all(fd_, &peer_, sizeof(peer_), "the peer's hello");
	if (peer_.qps != o_.qps || peer_.size != o_.size || peer_.seed != o_.seed)
		fatal("the peer runs %u QPs, %u bytes, seed %#" PRIx64 "; we run %u, %u, %#" PRIx64,
		      peer_.qps, peer_.size, peer_.seed, o_.qps, o_.size, o_.seed);
	std::vector<uint32_t> mine(o_.qps * 2);
	for (uint32_t i = 0; i < o_.qps; i++) {
		mine[i] = qps_[i]->qp_num;
		mine[o_.qps + i] = psn_[i];
	}
	std::vector<uint32_t> theirs(o_.qps * 2);
	srtest::tcp_send_all(fd_, mine.data(), mine.size() * 4);
	srtest::tcp_recv_all(fd_, theirs.data(), theirs.size() * 4, "the peer's QP numbers");
	peer_qpn_.assign(theirs.begin(), theirs.begin() + o_.qps);
	peer_psn_.assign(theirs.begin() + o_.qps, theirs.end());
}

void Scale::connect()
{
	double t0 = srtest::now_s();
	srtest::RcPath p;
	p.sgid_index = gid_index_;
	std::memcpy(p.dgid, peer_.gid, 16);
	p.mtu = std::min(mtu_, (ibv_mtu)peer_.mtu);
	p.max_rd_atomic = 1;
	p.max_dest_rd_atomic = 1;
	for (uint32_t i = 0; i < o_.qps; i++) {
		p.dest_qpn = peer_qpn_[i];
		p.rq_psn = peer_psn_[i];
		p.sq_psn = psn_[i];
		if (int e = srtest::rc_connect(qps_[i].get(), p))
			fatal("connecting QP %u (%u -> %u): %s", i, qps_[i]->qp_num, p.dest_qpn,
			      std::strerror(e));
	}
	msg("connected %u QPs in %.2f s", o_.qps, since(t0));
	barrier("the peer's QPs to connect");
	/* Both ends' QPs exist now: what the kernel holds for them (one host). */
	msg("kernel memory: SUnreclaim %ld kB, VmallocUsed %ld kB", meminfo("SUnreclaim"),
	    meminfo("VmallocUsed"));
}

void Scale::post(uint32_t r)
{
	for (uint32_t i = 0; i < o_.qps; i++) {
		srtest::fill_stream(area(i, SRC), key_of(o_.seed, r, end_, i), 0, o_.size);
		std::memset(area(i, WDST), 0, (size_t)o_.size * 3);
	}
	for (uint32_t i = 0; i < o_.qps; i++) {
		ibv_sge sge = {(uint64_t)(uintptr_t)area(i, RDST), o_.size, mr_->lkey};
		ibv_recv_wr wr{}, *bad;
		wr.wr_id = (uint64_t)OP_RECV << 32 | i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		if (int e = ibv_post_recv(qps_[i].get(), &wr, &bad))
			fail("ibv_post_recv on QP %u: %s", i, std::strerror(e));
	}
	/* Every receive and source of both ends is in place. */
	barrier("the peer's receives");
	for (uint32_t i = 0; i < o_.qps; i++) {
		ibv_sge src = {(uint64_t)(uintptr_t)area(i, SRC), o_.size, mr_->lkey};
		ibv_sge dst = {(uint64_t)(uintptr_t)area(i, RDDST), o_.size, mr_->lkey};
		ibv_send_wr wr[3] = {}, *bad;
		wr[0].opcode = IBV_WR_RDMA_WRITE;
		wr[0].sg_list = &src;
		wr[0].wr.rdma.remote_addr = peer_area(i, WDST);
		wr[0].wr.rdma.rkey = peer_.rkey;
		wr[1].opcode = IBV_WR_SEND;
		wr[1].sg_list = &src;
		wr[2].opcode = IBV_WR_RDMA_READ;
		wr[2].sg_list = &dst;
		wr[2].wr.rdma.remote_addr = peer_area(i, SRC);
		wr[2].wr.rdma.rkey = peer_.rkey;
		for (int k = 0; k < 3; k++) {
			wr[k].wr_id = (uint64_t)k << 32 | i;
			wr[k].num_sge = 1;
			wr[k].send_flags = IBV_SEND_SIGNALED;
			wr[k].next = k < 2 ? &wr[k + 1] : nullptr;
		}
		if (int e = ibv_post_send(qps_[i].get(), wr, &bad))
			fail("ibv_post_send on QP %u: %s", i, std::strerror(e));
	}
}

void Scale::check_wc(const ibv_wc &wc, bool recv)
{
	static const ibv_wc_opcode want[] = {IBV_WC_RDMA_WRITE, IBV_WC_SEND, IBV_WC_RDMA_READ,
					     IBV_WC_RECV};
	uint32_t i = (uint32_t)wc.wr_id;
	uint64_t op = wc.wr_id >> 32;
	if (wc.status != IBV_WC_SUCCESS)
		fail("QP %u (qpn %u) op %" PRIu64 ": completion status %s", i, wc.qp_num, op,
		     ibv_wc_status_str(wc.status));
	if (i >= o_.qps || op > OP_RECV || (op == OP_RECV) != recv)
		fail("a completion with wr_id %#" PRIx64 " we never posted", wc.wr_id);
	if (wc.qp_num != qps_[i]->qp_num)
		fail("QP %u's completion names qpn %u, not %u", i, wc.qp_num, qps_[i]->qp_num);
	if (wc.opcode != want[op])
		fail("QP %u op %" PRIu64 ": completion opcode %d, not %d", i, op, wc.opcode,
		     want[op]);
	if (recv && wc.byte_len != o_.size)
		fail("QP %u received %u bytes, not %u", i, wc.byte_len, o_.size);
	uint8_t bit = (uint8_t)(1u << op);
	if (done_[i] & bit)
		fail("QP %u op %" PRIu64 " completed twice", i, op);
	done_[i] |= bit;
}

void Scale::complete()
{
	uint64_t want_s = (uint64_t)o_.qps * 3, want_r = o_.qps, got_s = 0, got_r = 0;
	ibv_wc wc[64];
	bool armed = false;
	while (got_s < want_s || got_r < want_r) {
		int n = 0;
		for (int k = 0; k < 2; k++) {
			bool recv = k == 1;
			ibv_cq *cq = recv ? rcq_.get() : scq_.get();
			int m = ibv_poll_cq(cq, 64, wc);
			if (m < 0)
				fail("ibv_poll_cq failed");
			for (int j = 0; j < m; j++)
				check_wc(wc[j], recv);
			(recv ? got_r : got_s) += (uint64_t)m;
			n += m;
		}
		if (n)
			continue;
		if (!armed) {
			/* Poll once more after arming, or an event can be missed. */
			if (ibv_req_notify_cq(scq_.get(), 0) || ibv_req_notify_cq(rcq_.get(), 0))
				fail("ibv_req_notify_cq failed");
			armed = true;
			continue;
		}
		struct pollfd pfd = {chan_->fd, POLLIN, 0};
		int r = poll(&pfd, 1, srtest::deadline.ms_left(1000));
		if (r < 0 && errno != EINTR)
			fatal("poll: %s", std::strerror(errno));
		if (r > 0) {
			ibv_cq *cq;
			void *cq_ctx;
			if (ibv_get_cq_event(chan_, &cq, &cq_ctx))
				fail("ibv_get_cq_event failed");
			ibv_ack_cq_events(cq, 1);
			armed = false;
		} else if (srtest::deadline.expired()) {
			uint32_t idle = 0, first = 0;
			for (uint32_t i = 0; i < o_.qps; i++)
				if (done_[i] != 0xf && !idle++)
					first = i;
			fail("timed out: %" PRIu64 " of %" PRIu64 " send and %" PRIu64
			     " of %" PRIu64
			     " receive completions; %u QPs incomplete, the first QP %u (qpn %u, "
			     "state %s)",
			     got_s, want_s, got_r, want_r, idle, first, qps_[first]->qp_num,
			     srtest::qp_state_str(srtest::qp_state(qps_[first].get())));
		}
	}
	for (uint32_t i = 0; i < o_.qps; i++)
		if (done_[i] != 0xf)
			fail("QP %u completed ops %#x, not all four", i, done_[i]);
}

void Scale::verify(uint32_t r)
{
	static const char *const what[] = {"source", "WRITE target", "receive buffer",
					   "READ destination"};
	for (uint32_t i = 0; i < o_.qps; i++) {
		for (int a = SRC; a < AREAS; a++) {
			uint64_t key = key_of(o_.seed, r, a == SRC ? end_ : 1 - end_, i);
			size_t first = 0;
			uint64_t bad =
			    srtest::check_stream(area(i, (Area)a), key, 0, o_.size, &first);
			if (bad)
				fail("round %u QP %u (qpn %u): %" PRIu64
				     " of %u bytes of its %s wrong, "
				     "the first at offset %zu",
				     r + 1, i, qps_[i]->qp_num, bad, o_.size, what[a], first);
		}
	}
}

void Scale::round(uint32_t r)
{
	double t0 = srtest::now_s();
	std::fill(done_.begin(), done_.end(), 0);
	post(r);
	complete();
	/* The peer has all its completions too: its READs of our sources are done. */
	barrier("the peer's completions");
	verify(r);
	ops_ += (uint64_t)o_.qps * 4 * 2;
	bytes_ += (uint64_t)o_.qps * 3 * 2 * o_.size;
	msg("round %u: %u QPs x (WRITE, SEND, READ) both ways, all verified, %.2f s", r + 1, o_.qps,
	    since(t0));
}

void Scale::destroy()
{
	double t0 = srtest::now_s();
	qps_.clear();
	msg("destroyed %u QPs in %.2f s", o_.qps, since(t0));
	mr_.reset();
	scq_.reset();
	rcq_.reset();
	ibv_destroy_comp_channel(chan_);
	pd_.reset();
	ctx_.reset();
	munmap(arena_, arena_len_);
	close(fd_);
}

} // namespace

int main(int argc, char **argv)
{
	Options o = parse(argc, argv);
	srtest::log_prefix = o.server.empty() ? "scale[server]" : "scale[client]";
	srtest::deadline.set(o.timeout);
	double t0 = srtest::now_s();
	Scale s(o);
	s.setup();
	s.exchange();
	s.connect();
	double t_traffic = srtest::now_s();
	for (uint32_t r = 0; r < o.rounds; r++)
		s.round(r);
	double traffic = since(t_traffic);
	s.destroy();
	msg("scale: %u QPs, %u rounds, %" PRIu64 " ops, %" PRIu64 " bytes, %.2f s (traffic %.2f s)",
	    o.qps, o.rounds, s.ops(), s.bytes(), since(t0), traffic);
	return 0;
}
