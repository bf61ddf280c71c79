// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrnic-integrity: byte-exact data integrity over one RC QP pair between
 * any two RDMA devices (softrnic roce, rdma_rxe, hardware), so the same run
 * tests softrnic against itself and against other implementations.  Used by
 * tests/vm/roce_integrity.sh and tests/vm/roce_inject.sh.
 *
 *   server:  softrnic-integrity -d DEV [options]
 *   client:  softrnic-integrity -d DEV [options] SERVER_ADDRESS
 *
 * Like perftest, the two processes meet over TCP (port 18520 by default),
 * exchange QP numbers, PSNs, GIDs, buffer keys and device limits, and
 * connect their RC QPs.  With --cm (both ends; iWARP QPs can be connected
 * no other way) rdma_cm connects them instead: the server listens on
 * --cm-port (the TCP port + 1) of --bind or any address, the client
 * resolves the server's address and connects; each end's device is the
 * one rdma_cm picks for the address (-d, if given, must name it), its QP
 * is the cm_id's (rdma_create_qp), REMOTE_ATOMIC is added to its access
 * flags once connected when it takes atomics, and each end ends its part
 * of a batch with a 1-byte READ of the peer's arena, a placement barrier:
 * an iWARP WRITE completes once handed to TCP, not once placed.  The rest
 * (parameters, buffer keys and limits over the tool's own TCP socket, the
 * schedule, the checks) is the same.  Both then generate the same
 * schedule from the client's seed: N operations in batches, each with a random requester
 * (either end), opcode (SEND, SEND_WITH_IMM, RDMA_WRITE, RDMA_WRITE_WITH_IMM,
 * RDMA_READ, ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD; inline when small; the
 * ones a device does not advertise are left out, e.g. atomics when either
 * atomic_cap is NONE, and the ones with immediate data when either end
 * says --no-imm: siw has none, and no device attribute tells), size
 * (1 B .. --max-size, skewed small), SGE list (1 .. max_send_sge /
 * max_recv_sge / max_sge_rd, up to 32) and offsets in a registered buffer
 * ("arena") on each side.
 *
 * Every byte is accounted for.  Message contents are a PRNG stream keyed by
 * the seed and the operation's sequence number; everything else in the
 * part of the arena a batch uses is a guard stream keyed by the batch.
 * After a batch each end checks its whole used arena: receive buffers,
 * WRITE targets and READ destinations hold exactly the message, sources are
 * unchanged (inline sources were scribbled over right after the post, so
 * the copy must have happened at post time), atomic targets and results
 * hold the right values, and every other byte (gaps between SGEs, slack at
 * the end of receive buffers, unused receive SGEs of WRITE_WITH_IMM) still
 * holds the guard.  The immediate data of SEND_WITH_IMM and
 * RDMA_WRITE_WITH_IMM is the CRC-32 of the message, checked against the
 * received bytes.  Every completion is checked: status, opcode, byte_len
 * (receives, READ, atomics), immediate data and flag, QP number, and wr_id
 * order (per queue, in posting order; unsignaled sends produce none;
 * --sq-any-order: send completions in any order, for siw; siw refuses a
 * fenced READ too: --no-read-fence).
 *
 * Batches: both ends prepare their arena and post their receives, say
 * READY over TCP, post their sends, wait for their completions (completion
 * channel; the TCP socket is watched at the same time), say END, verify.
 * If a completion fails the QP is moved to ERR, the outstanding WRs are
 * drained (flushed), the peer is told (END with the status) and moves its
 * QP to ERR too, and the run stops.  IBV_WC_RETRY_EXC_ERR is what a
 * requester reports when its retries run out (e.g. a black-holed path):
 * with --expect-errors that status is counted and reported instead of
 * failing the run (data that was transferred must still be exact).
 *
 * Output: the last line is `integrity: N ops, N bytes, N errors` (the
 * client's counts both ends); exit 0 only if every byte and every
 * completion was right (and errors were all expected ones), 1 if not, 2 on
 * a setup or usage error.  Both ends must run the same build.
 */
#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <csignal>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <endian.h>
#include <fcntl.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <string>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unordered_set>
#include <vector>

#include "common.h"    /* side channel, GIDs, patterns, messages (shared) */
#include "roce_icrc.h" /* roce_crc32_update(): the CRC-32 of the immediate data */

namespace
{

/* ------------------------------------------------------------------ */
/* Output, deadline */

int verbose;
bool is_server;
std::chrono::steady_clock::time_point t_start;
std::chrono::steady_clock::time_point t_run; /* after connecting (and any pause) */

using srtest::fail;
using srtest::fatal;
using srtest::msg;

double run_time()
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now() - t_run).count();
}

int ms_left(int cap)
{
	return srtest::deadline.ms_left(cap);
}

bool expired()
{
	return srtest::deadline.expired();
}

/* ------------------------------------------------------------------ */
/* PRNG and data patterns */

using srtest::check_stream;
using srtest::fill_stream;
using srtest::fmix;
using srtest::GAMMA;

/* splitmix64: tiny, fast, and the same sequence on both ends. */
struct Rng {
	uint64_t s;
	explicit Rng(uint64_t seed) : s(seed) {}
	uint64_t next() { return fmix(s += GAMMA); }
	/* uniform in [0, n) (n > 0; the modulo bias is irrelevant here) */
	uint64_t below(uint64_t n) { return next() % n; }
	/* uniform in [lo, hi] */
	uint64_t range(uint64_t lo, uint64_t hi) { return lo + below(hi - lo + 1); }
	bool chance(unsigned percent) { return below(100) < percent; }
};

/*
 * Streams (common.h): byte @pos of the stream @key.  Message contents use
 * key = data_key(op), the guard around them key = guard_key(batch, side)
 * with pos = arena offset.
 */

uint64_t seed_global;

uint64_t data_key(uint64_t op)
{
	return fmix(seed_global ^ fmix(op * 2 + 1));
}

/* What an inline source is overwritten with after the post. */
uint64_t scribble_key(uint64_t op)
{
	return fmix(data_key(op) ^ 0x5c5c5c5c5c5c5c5cULL);
}

uint64_t guard_key(uint64_t batch, int side)
{
	return fmix(seed_global ^ fmix(batch * 4 + 2 + (uint64_t)side * 0x100000000ULL));
}

uint32_t crc32_of_stream(uint64_t key, uint64_t len)
{
	uint8_t buf[65536];
	uint32_t crc = 0xffffffffU;

	for (uint64_t pos = 0; pos < len;) {
		size_t n = (size_t)std::min<uint64_t>(sizeof(buf), len - pos);
		fill_stream(buf, key, pos, n);
		crc = roce_crc32_update(crc, buf, n);
		pos += n;
	}
	return ~crc;
}

/* ------------------------------------------------------------------ */
/* Options */

enum OpType : uint8_t {
	OP_SEND,
	OP_SEND_IMM,
	OP_WRITE,
	OP_WRITE_IMM,
	OP_READ,
	OP_CAS,
	OP_FAA,
	OP_NR,
};

const char *const op_names[OP_NR] = {"send", "send_imm", "write", "write_imm",
				     "read", "cas",	 "faa"};
/* relative frequency of each opcode */
const unsigned op_weights[OP_NR] = {18, 10, 18, 10, 20, 7, 7};

bool is_atomic(OpType t)
{
	return t == OP_CAS || t == OP_FAA;
}

bool has_imm(OpType t)
{
	return t == OP_SEND_IMM || t == OP_WRITE_IMM;
}

/* consumes a receive WQE at the responder */
bool uses_recv(OpType t)
{
	return t == OP_SEND || t == OP_SEND_IMM || t == OP_WRITE_IMM;
}

bool is_send(OpType t)
{
	return t == OP_SEND || t == OP_SEND_IMM;
}

bool is_write(OpType t)
{
	return t == OP_WRITE || t == OP_WRITE_IMM;
}

struct Options {
	std::string dev;
	int ib_port = 1;
	int gid_index = -1;
	bool ipv6 = false;
	std::string host; /* empty: server */
	int tcp_port = 18520;
	uint64_t ops = 1000;
	uint64_t seed = 0;
	bool seed_set = false;
	uint64_t max_size = 4 << 20;
	bool expect_errors = false;
	double timeout = 300;
	unsigned batch = 32;
	unsigned mask = (1U << OP_NR) - 1;
	unsigned server_mask = 0; /* --server-ops-mask; 0: the same as mask */
	bool inline_ok = true;
	bool one_way = false;
	int mtu = 0;
	std::string pause_file, info_file;
	int qp_timeout = 14;
	int retry_cnt = 7;
	int rnr_retry = 7;
	std::vector<std::string> faults; /* --selftest-fault: damage batch 0 before checking */
	bool cm = false;		 /* --cm: connect the QPs through rdma_cm */
	int cm_port = 0;		 /* --cm-port (0: --port + 1) */
	std::string bind_addr;		 /* --bind: the server's rdma_cm listen address */
	bool no_imm = false;		 /* --no-imm: no immediate data at this end */
	bool sq_any_order = false;	 /* --sq-any-order: see usage() */
	bool no_read_fence = false;	 /* --no-read-fence: see usage() */
	bool reuse_sources = false;	 /* --reuse-sources: see usage() */
};

void usage(FILE *f)
{
	std::fprintf(f,
		     "usage: softrnic-integrity -d DEV [options] [SERVER_ADDRESS]\n"
		     "       softrnic-integrity --cm [-d DEV] [options] [SERVER_ADDRESS]\n"
		     "  without SERVER_ADDRESS: server (listens); with it: client\n"
		     "  -d, --dev NAME        RDMA device (with --cm: optional, checked)\n"
		     "  -i, --ib-port N       port number (1)\n"
		     "  -g, --gid-index N     source GID index (default: the RoCE v2 GID of\n"
		     "                        an IPv4 address, or of an IPv6 one with -6)\n"
		     "  -6, --ipv6            pick an IPv6 GID (not IPv4-mapped, not fe80::)\n"
		     "  -p, --port N          TCP port (18520)\n"
		     "  -n, --ops N           operations (1000); the client's value is used\n"
		     "  -s, --seed S          PRNG seed (client; default: from the clock)\n"
		     "  -m, --max-size B      largest message, K/M suffixes (4M)\n"
		     "  -b, --batch N         operations in flight per batch (32)\n"
		     "      --ops-mask LIST   opcodes to use: send,send_imm,write,write_imm,\n"
		     "                        read,cas,faa (default: all the devices support)\n"
		     "      --server-ops-mask LIST\n"
		     "                        of those, the ones the server requests (all)\n"
		     "      --no-inline       never post inline\n"
		     "      --one-way         only the client is requester\n"
		     "      --mtu N           path MTU cap, 256..4096 (default: active MTU)\n"
		     "      --expect-errors   IBV_WC_RETRY_EXC_ERR is counted, not a failure\n"
		     "      --timeout S       give up after S seconds (300)\n"
		     "      --qp-timeout N    local ACK timeout exponent (14: 67 ms)\n"
		     "      --retry-cnt N     (7)\n"
		     "      --rnr-retry N     (7 = infinite)\n"
		     "      --pause FILE      once connected, wait until FILE exists (give both\n"
		     "                        ends the same FILE); --timeout starts after it\n"
		     "      --info FILE       once connected, write QP numbers, PSNs, MTU there\n"
		     "      --cm              connect the QPs through rdma_cm (iWARP needs it):\n"
		     "                        the device is the one rdma_cm picks for the\n"
		     "                        address; both ends must give --cm\n"
		     "      --cm-port N       rdma_cm port (default: --port + 1)\n"
		     "      --bind ADDR       server, --cm: listen on ADDR only (default: any)\n"
		     "      --no-imm          this end has no immediate data (e.g. siw): leave\n"
		     "                        out send_imm and write_imm (either end may say it)\n"
		     "      --sq-any-order    this end's device completes its send queue out of\n"
		     "                        order (siw: a READ when its response is in, after\n"
		     "                        later SENDs and WRITEs): post every READ and\n"
		     "                        atomic signaled, take send completions in any order\n"
		     "                        (each must still come exactly once, and be right)\n"
		     "      --no-read-fence   never post a READ with IBV_SEND_FENCE here (siw\n"
		     "                        refuses a fenced READ: EINVAL, the QP goes to ERR)\n"
		     "      --reuse-sources   overwrite a SEND or WRITE source as soon as a send\n"
		     "                        completion covers it, as an application that\n"
		     "                        reuses its buffers does: bytes the device still\n"
		     "                        reads from it after the completion reach the peer\n"
		     "                        changed (not with --sq-any-order)\n"
		     "  -v, --verbose         one line per operation (twice: per completion)\n"
		     "      --selftest-fault KIND[,KIND...]  (data, guard, atomic, imm)\n"
		     "                        damage the first batch here before checking it:\n"
		     "                        the run must then fail (tests the checker)\n");
}

uint64_t parse_size(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = std::strtoull(s, &end, 0);
	if (errno || end == s)
		fatal("bad number '%s'", s);
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	if (*end)
		fatal("bad number '%s'", s);
	return v;
}

unsigned parse_mask(const char *opt, const char *s)
{
	unsigned mask = 0;
	std::string list(s);
	size_t pos = 0;

	while (pos <= list.size()) {
		size_t comma = list.find(',', pos);
		std::string name =
		    list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
		int i;
		for (i = 0; i < OP_NR; i++)
			if (name == op_names[i])
				break;
		if (i == OP_NR)
			fatal("%s: unknown opcode '%s'", opt, name.c_str());
		mask |= 1U << i;
		if (comma == std::string::npos)
			break;
		pos = comma + 1;
	}
	return mask;
}

Options parse_args(int argc, char **argv)
{
	enum {
		O_MASK = 256,
		O_SERVER_MASK,
		O_NO_INLINE,
		O_ONE_WAY,
		O_MTU,
		O_EXPECT,
		O_TIMEOUT,
		O_QP_TIMEOUT,
		O_RETRY,
		O_RNR,
		O_PAUSE,
		O_INFO,
		O_FAULT,
		O_CM,
		O_CM_PORT,
		O_BIND,
		O_NO_IMM,
		O_SQ_ANY_ORDER,
		O_NO_READ_FENCE,
		O_REUSE_SOURCES,
	};
	static const struct option longopts[] = {
	    {"dev", required_argument, nullptr, 'd'},
	    {"ib-port", required_argument, nullptr, 'i'},
	    {"gid-index", required_argument, nullptr, 'g'},
	    {"ipv6", no_argument, nullptr, '6'},
	    {"port", required_argument, nullptr, 'p'},
	    {"ops", required_argument, nullptr, 'n'},
	    {"seed", required_argument, nullptr, 's'},
	    {"max-size", required_argument, nullptr, 'm'},
	    {"batch", required_argument, nullptr, 'b'},
	    {"ops-mask", required_argument, nullptr, O_MASK},
	    {"server-ops-mask", required_argument, nullptr, O_SERVER_MASK},
	    {"no-inline", no_argument, nullptr, O_NO_INLINE},
	    {"one-way", no_argument, nullptr, O_ONE_WAY},
	    {"mtu", required_argument, nullptr, O_MTU},
	    {"expect-errors", no_argument, nullptr, O_EXPECT},
	    {"timeout", required_argument, nullptr, O_TIMEOUT},
	    {"qp-timeout", required_argument, nullptr, O_QP_TIMEOUT},
	    {"retry-cnt", required_argument, nullptr, O_RETRY},
	    {"rnr-retry", required_argument, nullptr, O_RNR},
	    {"pause", required_argument, nullptr, O_PAUSE},
	    {"info", required_argument, nullptr, O_INFO},
	    {"selftest-fault", required_argument, nullptr, O_FAULT},
	    {"cm", no_argument, nullptr, O_CM},
	    {"cm-port", required_argument, nullptr, O_CM_PORT},
	    {"bind", required_argument, nullptr, O_BIND},
	    {"no-imm", no_argument, nullptr, O_NO_IMM},
	    {"sq-any-order", no_argument, nullptr, O_SQ_ANY_ORDER},
	    {"reuse-sources", no_argument, nullptr, O_REUSE_SOURCES},
	    {"no-read-fence", no_argument, nullptr, O_NO_READ_FENCE},
	    {"verbose", no_argument, nullptr, 'v'},
	    {"help", no_argument, nullptr, 'h'},
	    {nullptr, 0, nullptr, 0},
	};
	Options o;
	int c;

	while ((c = getopt_long(argc, argv, "d:i:g:6p:n:s:m:b:vh", longopts, nullptr)) != -1) {
		switch (c) {
		case 'd':
			o.dev = optarg;
			break;
		case 'i':
			o.ib_port = (int)parse_size(optarg);
			break;
		case 'g':
			o.gid_index = (int)parse_size(optarg);
			break;
		case '6':
			o.ipv6 = true;
			break;
		case 'p':
			o.tcp_port = (int)parse_size(optarg);
			break;
		case 'n':
			o.ops = parse_size(optarg);
			break;
		case 's':
			o.seed = parse_size(optarg);
			o.seed_set = true;
			break;
		case 'm':
			o.max_size = parse_size(optarg);
			break;
		case 'b':
			o.batch = (unsigned)parse_size(optarg);
			break;
		case O_MASK:
			o.mask = parse_mask("--ops-mask", optarg);
			break;
		case O_SERVER_MASK:
			o.server_mask = parse_mask("--server-ops-mask", optarg);
			break;
		case O_NO_INLINE:
			o.inline_ok = false;
			break;
		case O_ONE_WAY:
			o.one_way = true;
			break;
		case O_MTU:
			o.mtu = (int)parse_size(optarg);
			break;
		case O_EXPECT:
			o.expect_errors = true;
			break;
		case O_TIMEOUT:
			o.timeout = std::atof(optarg);
			break;
		case O_QP_TIMEOUT:
			o.qp_timeout = (int)parse_size(optarg);
			break;
		case O_RETRY:
			o.retry_cnt = (int)parse_size(optarg);
			break;
		case O_RNR:
			o.rnr_retry = (int)parse_size(optarg);
			break;
		case O_PAUSE:
			o.pause_file = optarg;
			break;
		case O_INFO:
			o.info_file = optarg;
			break;
		case O_FAULT: {
			std::string list(optarg);
			for (size_t pos = 0; pos <= list.size();) {
				size_t comma = std::min(list.find(',', pos), list.size());
				std::string f = list.substr(pos, comma - pos);
				if (f != "data" && f != "guard" && f != "atomic" && f != "imm")
					fatal("--selftest-fault: data, guard, atomic or imm");
				o.faults.push_back(f);
				pos = comma + 1;
			}
			break;
		}
		case O_CM:
			o.cm = true;
			break;
		case O_CM_PORT:
			o.cm_port = (int)parse_size(optarg);
			break;
		case O_BIND:
			o.bind_addr = optarg;
			break;
		case O_NO_IMM:
			o.no_imm = true;
			break;
		case O_SQ_ANY_ORDER:
			o.sq_any_order = true;
			break;
		case O_REUSE_SOURCES:
			o.reuse_sources = true;
			break;
		case O_NO_READ_FENCE:
			o.no_read_fence = true;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			usage(stdout);
			std::exit(0);
		default:
			usage(stderr);
			std::exit(2);
		}
	}
	if (optind < argc)
		o.host = argv[optind++];
	is_server = o.host.empty();
	srtest::log_prefix = is_server ? "integrity[server]" : "integrity[client]";
	if (optind < argc || (o.dev.empty() && !o.cm)) {
		usage(stderr);
		std::exit(2);
	}
	if (o.reuse_sources && o.sq_any_order)
		fatal("--reuse-sources needs send completions in order (not --sq-any-order)");
	if (o.max_size < 1 || o.max_size > (64ULL << 20))
		fatal("--max-size must be 1 .. 64M");
	if (o.batch < 1 || o.batch > 256)
		fatal("--batch must be 1 .. 256");
	if (o.timeout <= 0)
		fatal("--timeout must be positive");
	if (o.mtu && (o.mtu < 256 || o.mtu > 4096 || (o.mtu & (o.mtu - 1))))
		fatal("--mtu must be 256, 512, 1024, 2048 or 4096");
	if (o.qp_timeout < 0 || o.qp_timeout > 31 || o.retry_cnt < 0 || o.retry_cnt > 7 ||
	    o.rnr_retry < 0 || o.rnr_retry > 7)
		fatal("--qp-timeout 0..31, --retry-cnt and --rnr-retry 0..7");
	if (!o.cm_port)
		o.cm_port = o.tcp_port + 1;
	if (o.cm_port < 1 || o.cm_port > 65535)
		fatal("--cm-port must be 1 .. 65535");
	if (!o.cm && (!o.bind_addr.empty()))
		fatal("--bind needs --cm");
	return o;
}

/* ------------------------------------------------------------------ */
/* The side channel: fixed-size messages over TCP */

constexpr uint32_t MSG_MAGIC = 0x53524954; /* "SRIT" */

enum MsgType : uint32_t {
	M_PARAMS = 1, /* client -> server, with the client's INFO */
	M_INFO,	      /* server -> client */
	M_READY,      /* batch prepared, receives posted */
	M_END,	      /* batch over here (end.abort: and the QP is in ERR) */
	M_FINAL,      /* totals */
};

/* Test parameters the server takes from the client. */
struct Params {
	uint64_t seed;
	uint64_t ops;
	uint64_t max_size;
	uint64_t arena;
	uint32_t batch;
	uint32_t mask;
	uint32_t inline_ok;
	uint32_t one_way;
	uint32_t mtu;
	uint32_t server_mask; /* what the server requests, of mask; 0: all of it */
};

/* One end's QP, memory and limits. */
struct Info {
	uint32_t qpn;
	uint32_t psn;
	uint8_t gid[16];
	uint64_t addr;
	uint32_t rkey;
	uint32_t active_mtu; /* enum ibv_mtu */
	uint32_t send_sge;
	uint32_t recv_sge;
	uint32_t rd_sge;
	uint32_t max_inline;
	uint32_t atomics;
	uint32_t rd_atom;      /* max_qp_rd_atom: as responder */
	uint32_t init_rd_atom; /* max_qp_init_rd_atom: as requester */
	uint32_t sq_depth;
	uint32_t rq_depth;
	uint32_t flags; /* INFO_*; 0 from a build without them */
	char dev[32];
};

constexpr uint32_t INFO_NO_IMM = 1; /* --no-imm: no immediate data here */
constexpr uint32_t INFO_CM = 2;	    /* --cm: the QP is connected by rdma_cm */

struct End {
	uint32_t abort;
	int32_t status; /* first bad wc status, -1 for a timeout, -2 for a verbs failure */
};

struct Final {
	uint64_t ops;
	uint64_t bytes;
	uint64_t errors;
	uint64_t expected_errors;
	uint64_t mismatches;
	uint32_t failed;
	uint32_t pad;
};

struct Msg {
	uint32_t magic;
	uint32_t type;
	uint64_t batch;
	Params params;
	Info info;
	End end;
	Final final;
};

struct Conn {
	int fd = -1;
	bool eof = false; /* the peer closed; queue may still hold its last messages */
	std::vector<uint8_t> rbuf;
	std::vector<Msg> queue; /* received, not consumed yet */

	void send(const Msg &m)
	{
		const uint8_t *p = reinterpret_cast<const uint8_t *>(&m);
		size_t left = sizeof(m);

		while (left) {
			ssize_t n = ::send(fd, p, left, MSG_NOSIGNAL);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
				struct pollfd pfd = {fd, POLLOUT, 0};
				if (poll(&pfd, 1, ms_left(1000)) == 0 && expired())
					fail("timed out sending to the peer");
				continue;
			}
			if (n <= 0)
				fail("send to peer: %s", std::strerror(errno));
			p += n;
			left -= (size_t)n;
		}
	}

	/*
	 * Read what is available without blocking and queue the complete
	 * messages; false once the peer has closed (what it sent before is
	 * queued all the same: take() it first).
	 */
	bool pump()
	{
		uint8_t buf[4096];

		while (!eof) {
			ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
			if (n > 0) {
				rbuf.insert(rbuf.end(), buf, buf + n);
				continue;
			}
			if (n == 0) {
				eof = true;
				break;
			}
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			fail("recv from peer: %s", std::strerror(errno));
		}
		while (rbuf.size() >= sizeof(Msg)) {
			Msg m;
			std::memcpy(&m, rbuf.data(), sizeof(m));
			rbuf.erase(rbuf.begin(), rbuf.begin() + sizeof(m));
			if (m.magic != MSG_MAGIC)
				fail("garbage from the peer (magic %#x)", m.magic);
			queue.push_back(m);
		}
		return !eof;
	}

	/* Take a queued message of @type, if there is one. */
	bool take(uint32_t type, Msg *out)
	{
		for (auto it = queue.begin(); it != queue.end(); ++it) {
			if (it->type == type) {
				*out = *it;
				queue.erase(it);
				return true;
			}
		}
		return false;
	}

	/* Wait for a message of @type (an END with abort set ends the wait too). */
	Msg wait(uint32_t type, const char *what)
	{
		Msg m;

		for (;;) {
			if (take(type, &m))
				return m;
			if (type != M_END && take(M_END, &m))
				return m;
			if (eof)
				fail("the peer closed the connection while we waited for %s", what);
			struct pollfd pfd = {fd, POLLIN, 0};
			int r = poll(&pfd, 1, ms_left(1000));
			if (r < 0 && errno != EINTR)
				fatal("poll: %s", std::strerror(errno));
			if (r > 0)
				pump();
			if (r == 0 && expired())
				fail("timed out waiting for %s from the peer", what);
		}
	}
};

Msg make_msg(MsgType type, uint64_t batch)
{
	Msg m;
	std::memset(&m, 0, sizeof(m));
	m.magic = MSG_MAGIC;
	m.type = type;
	m.batch = batch;
	return m;
}

using srtest::tcp_connect;
using srtest::tcp_listen_accept;

/* ------------------------------------------------------------------ */
/* The schedule, identical on both ends */

constexpr int MAX_SGE = 32;
constexpr uint32_t GAP_MAX = 64;     /* guard bytes between regions: 1 .. GAP_MAX */
constexpr uint64_t TAIL_GUARD = 256; /* guard checked after a batch's last region */

struct Seg {
	uint64_t off; /* in the arena of the end that owns it */
	uint32_t len;
};

struct Op {
	uint64_t idx;
	int req; /* requester: 0 client, 1 server */
	OpType type;
	bool inl;
	bool signaled;
	bool fence;
	bool solicited;
	uint32_t len;
	uint32_t imm;
	std::vector<Seg> lsge; /* requester's gather/scatter list */
	std::vector<Seg> rsge; /* responder's receive WQE */
	uint64_t roff;	       /* responder: WRITE/READ target, atomic target */
	/* atomics */
	uint64_t init;	      /* target before */
	uint64_t cmp_add;     /* compare (CAS) or add (FAA) */
	uint64_t swap;	      /* CAS */
	uint64_t final_value; /* target after */
};

/* What one end can do, from its INFO. */
struct Caps {
	uint32_t send_sge, recv_sge, rd_sge, inl, sq, rq;
	bool atomics;
	bool imm; /* SEND_WITH_IMM, RDMA_WRITE_WITH_IMM */
};

struct Batch {
	uint64_t index;
	std::vector<Op> ops;
	uint64_t used[2]; /* arena bytes used, per end */
};

struct Shape {
	int req;
	OpType type;
	uint32_t len;
	unsigned nl, nr; /* SGEs at the requester and in the receive WQE */
	uint32_t slack;
	bool inl;
};

class Schedule
{
public:
	Schedule(const Params &p, const Caps caps[2]) : rng_(p.seed ^ 0x5343484544ULL), p_(p)
	{
		caps_[0] = caps[0];
		caps_[1] = caps[1];
		for (int t = 0; t < OP_NR; t++) {
			if (!(p.mask & (1U << t)))
				continue;
			if (is_atomic((OpType)t) && !(caps[0].atomics && caps[1].atomics))
				continue;
			if (has_imm((OpType)t) && !(caps[0].imm && caps[1].imm))
				continue;
			allowed_[t] = true;
			total_weight_ += op_weights[t];
			if (!p.server_mask || (p.server_mask & (1U << t))) {
				server_allowed_[t] = true;
				server_weight_ += op_weights[t];
			}
		}
	}

	bool any_allowed() const { return total_weight_ > 0; }
	bool allowed(OpType t) const { return allowed_[t]; }

	/* The next batch; false when all operations have been handed out. */
	bool next(Batch *b)
	{
		b->index = nbatch_++;
		b->ops.clear();
		b->used[0] = b->used[1] = 0;
		unsigned nsend[2] = {0, 0}, nrecv[2] = {0, 0};

		while (next_idx_ < p_.ops && b->ops.size() < p_.batch) {
			if (!have_pending_) {
				pending_ = shape();
				have_pending_ = true;
			}
			const Shape &s = pending_;
			int resp = 1 - s.req;
			uint64_t need_l = (uint64_t)s.len + s.nl * (GAP_MAX + 8);
			uint64_t need_r = (uint64_t)s.len + s.slack + (s.nr + 1) * (GAP_MAX + 8) +
					  (s.type == OP_WRITE_IMM ? s.nr * 256 : 0);
			if (!b->ops.empty() && (b->used[s.req] + need_l + TAIL_GUARD > p_.arena ||
						b->used[resp] + need_r + TAIL_GUARD > p_.arena ||
						nsend[s.req] + 1 > caps_[s.req].sq ||
						nrecv[resp] + 1 > caps_[resp].rq))
				break;
			have_pending_ = false;
			nsend[s.req]++;
			if (uses_recv(s.type))
				nrecv[resp]++;
			b->ops.push_back(place(s, b));
		}
		if (b->ops.empty())
			return false;
		/* the last send of each end is signaled: its completion ends the batch */
		for (int side = 0; side < 2; side++) {
			for (auto it = b->ops.rbegin(); it != b->ops.rend(); ++it) {
				if (it->req == side) {
					it->signaled = true;
					break;
				}
			}
		}
		return true;
	}

private:
	Rng rng_;
	Params p_;
	Caps caps_[2];
	bool allowed_[OP_NR] = {};
	unsigned total_weight_ = 0;
	bool server_allowed_[OP_NR] = {}; /* of allowed_, what the server requests */
	unsigned server_weight_ = 0;
	uint64_t next_idx_ = 0;
	uint64_t nbatch_ = 0;
	bool have_pending_ = false;
	Shape pending_{};

	uint32_t size()
	{
		/* skewed small: most messages fit a packet, a few are MiBs */
		static const struct {
			unsigned percent;
			uint32_t lo, hi;
		} buckets[] = {
		    {35, 1, 64},	 {25, 65, 1024},       {15, 1025, 16384},
		    {13, 16385, 262144}, {8, 262145, 1048576}, {4, 1048577, 4194304},
		};
		uint64_t r = rng_.below(100), acc = 0;
		uint64_t len = 1;
		for (const auto &bk : buckets) {
			acc += bk.percent;
			if (r < acc) {
				len = rng_.range(bk.lo, bk.hi);
				break;
			}
		}
		if (len > p_.max_size)
			len = rng_.range(1, p_.max_size);
		return (uint32_t)len;
	}

	unsigned nsge(unsigned max, uint32_t len)
	{
		unsigned n = 1;
		if (max > 1 && !rng_.chance(50))
			n = (unsigned)rng_.range(2, max);
		return (unsigned)std::min<uint64_t>(n, len);
	}

	OpType pick(const bool allowed[OP_NR], unsigned weight)
	{
		uint64_t r = rng_.below(weight), acc = 0;
		for (int t = 0; t < OP_NR; t++) {
			if (!allowed[t])
				continue;
			acc += op_weights[t];
			if (r < acc)
				return (OpType)t;
		}
		return OP_SEND; /* not reached: weight is the sum over allowed */
	}

	Shape shape()
	{
		Shape s{};
		s.type = pick(allowed_, total_weight_);
		s.req = p_.one_way || !server_weight_ ? 0 : (int)rng_.below(2);
		/* the same draws as without --server-ops-mask unless it says no */
		if (s.req == 1 && !server_allowed_[s.type])
			s.type = pick(server_allowed_, server_weight_);
		const Caps &rc = caps_[s.req], &pc = caps_[1 - s.req];
		if (is_atomic(s.type)) {
			s.len = 8;
			s.nl = 1;
			return s;
		}
		s.len = size();
		s.nl =
		    nsge(s.type == OP_READ ? std::min(rc.send_sge, rc.rd_sge) : rc.send_sge, s.len);
		if (is_send(s.type)) {
			s.nr = nsge(pc.recv_sge, s.len);
			s.slack = rng_.chance(50) ? 0 : (uint32_t)rng_.range(1, 64);
		} else if (s.type == OP_WRITE_IMM) {
			s.nr = (unsigned)rng_.below(std::min(pc.recv_sge, 2U) + 1);
		}
		s.inl = p_.inline_ok && (is_send(s.type) || is_write(s.type)) && s.len <= rc.inl &&
			rng_.chance(50);
		return s;
	}

	uint64_t take(Batch *b, int side, uint32_t len, uint32_t align)
	{
		uint64_t off = b->used[side] + 1 + rng_.below(GAP_MAX);
		off = (off + align - 1) & ~(uint64_t)(align - 1);
		b->used[side] = off + len;
		return off;
	}

	/* @len bytes as @n segments of at least one byte each */
	std::vector<Seg> split(Batch *b, int side, uint32_t len, unsigned n)
	{
		std::vector<uint32_t> cuts;
		for (unsigned i = 1; i < n; i++)
			cuts.push_back((uint32_t)rng_.range(1, len - 1));
		std::sort(cuts.begin(), cuts.end());
		cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
		cuts.push_back(len);
		std::vector<Seg> segs;
		uint32_t prev = 0;
		for (uint32_t c : cuts) {
			segs.push_back({take(b, side, c - prev, 1), c - prev});
			prev = c;
		}
		return segs;
	}

	Op place(const Shape &s, Batch *b)
	{
		Op op{};
		int resp = 1 - s.req;

		op.idx = next_idx_++;
		op.req = s.req;
		op.type = s.type;
		op.len = s.len;
		op.inl = s.inl;
		op.signaled = rng_.chance(80);
		op.fence = rng_.chance(8);
		op.solicited = uses_recv(s.type) && rng_.chance(10);
		if (is_atomic(s.type)) {
			op.lsge.push_back({take(b, s.req, 8, 8), 8});
			op.roff = take(b, resp, 8, 8);
			op.init = rng_.next();
			if (s.type == OP_CAS) {
				op.cmp_add =
				    rng_.chance(70) ? op.init : op.init ^ (rng_.next() | 1);
				op.swap = rng_.next();
				op.final_value = op.cmp_add == op.init ? op.swap : op.init;
			} else {
				op.cmp_add = rng_.next();
				op.final_value = op.init + op.cmp_add;
			}
			return op;
		}
		op.lsge = split(b, s.req, s.len, s.nl);
		if (is_send(s.type)) {
			/* the receive WQE: the message plus slack, in nr pieces */
			op.rsge = split(b, resp, s.len + s.slack, std::min<uint32_t>(s.nr, s.len));
		} else {
			op.roff = take(b, resp, s.len, 1);
			for (unsigned i = 0; i < s.nr; i++) {
				uint32_t l = (uint32_t)rng_.range(1, 256);
				op.rsge.push_back({take(b, resp, l, 1), l});
			}
		}
		if (has_imm(s.type))
			op.imm = crc32_of_stream(data_key(op.idx), op.len);
		return op;
	}
};

/* ------------------------------------------------------------------ */
/* Verbs */

const char *wc_status(int st)
{
	if (st == -1)
		return "timeout";
	if (st == -2)
		return "verbs failure";
	return ibv_wc_status_str((enum ibv_wc_status)st);
}

struct Rdma {
	ibv_context *ctx = nullptr;
	ibv_pd *pd = nullptr;
	ibv_comp_channel *chan = nullptr;
	ibv_cq *scq = nullptr, *rcq = nullptr;
	ibv_qp *qp = nullptr;
	ibv_mr *mr = nullptr;
	rdma_cm_id *id = nullptr;     /* --cm: the connection's id (its device, its QP) */
	ibv_mr *barrier_mr = nullptr; /* --cm: the placement barrier READ's sink */
	uint8_t barrier_buf[64]{};
	uint8_t *arena = nullptr;
	uint64_t arena_size = 0;
	ibv_device_attr dev{};
	ibv_port_attr port{};
	int gid_index = -1;
	ibv_gid gid{};
	Caps caps{};
};

using srtest::gid_str;
using srtest::mtu_bytes;

int pick_gid(Rdma &r, const Options &o)
{
	if (o.gid_index >= 0)
		return o.gid_index;
	return srtest::pick_gid(r.ctx, o.ib_port, r.port.gid_tbl_len, o.ipv6);
}

/*
 * With --cm (r.id set) the device is r.id's, the one rdma_cm picked for the
 * address (main() has checked it against -d and set o.dev, o.ib_port), and
 * the QP is r.id's too (rdma_create_qp): rdma_cm moves it to RTS.
 */
void setup_rdma(Rdma &r, const Options &o, uint64_t arena_size, unsigned batch)
{
	if (r.id) {
		r.ctx = r.id->verbs;
	} else {
		int n;
		ibv_device **list = ibv_get_device_list(&n);
		if (!list)
			fatal("ibv_get_device_list: %s", std::strerror(errno));
		for (int i = 0; i < n; i++)
			if (o.dev == ibv_get_device_name(list[i]))
				r.ctx = ibv_open_device(list[i]);
		ibv_free_device_list(list);
	}
	if (!r.ctx)
		fatal("cannot open RDMA device %s", o.dev.c_str());
	if (ibv_query_device(r.ctx, &r.dev))
		fatal("ibv_query_device failed");
	/* the port may still be coming up after `rdma link add` */
	for (int i = 0;; i++) {
		if (ibv_query_port(r.ctx, (uint8_t)o.ib_port, &r.port))
			fatal("ibv_query_port %d failed", o.ib_port);
		if (r.port.state == IBV_PORT_ACTIVE)
			break;
		if (i >= 100)
			fatal("%s port %d is not ACTIVE", o.dev.c_str(), o.ib_port);
		usleep(100000);
	}
	if (r.id) {
		/* rdma_cm addresses the peer; the GID is only reported (iWARP: the MAC) */
		r.gid_index = o.gid_index >= 0 ? o.gid_index : 0;
		if (ibv_query_gid(r.ctx, (uint8_t)o.ib_port, r.gid_index, &r.gid))
			r.gid = {};
	} else {
		r.gid_index = pick_gid(r, o);
		if (ibv_query_gid(r.ctx, (uint8_t)o.ib_port, r.gid_index, &r.gid))
			fatal("ibv_query_gid %d failed", r.gid_index);
	}

	r.pd = ibv_alloc_pd(r.ctx);
	if (!r.pd)
		fatal("ibv_alloc_pd failed");
	r.arena_size = arena_size;
	void *p =
	    mmap(nullptr, arena_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		fatal("mmap %" PRIu64 " bytes: %s", arena_size, std::strerror(errno));
	r.arena = static_cast<uint8_t *>(p);
	r.mr =
	    ibv_reg_mr(r.pd, r.arena, arena_size,
		       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   (r.dev.atomic_cap != IBV_ATOMIC_NONE ? IBV_ACCESS_REMOTE_ATOMIC : 0));
	if (!r.mr)
		fatal("ibv_reg_mr %" PRIu64 " bytes: %s", arena_size, std::strerror(errno));
	if (r.id) {
		/*
		 * A READ sink: REMOTE_WRITE too, as iWARP hardware wants.  siw
		 * counts every MR against RLIMIT_MEMLOCK, root or not, and the
		 * arena alone may use up the default 8 MiB: raise it if we may.
		 */
		struct rlimit rl;
		if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
			struct rlimit inf = {RLIM_INFINITY, RLIM_INFINITY};
			if (setrlimit(RLIMIT_MEMLOCK, &inf)) {
				rl.rlim_cur = rl.rlim_max;
				setrlimit(RLIMIT_MEMLOCK, &rl);
			}
		}
		r.barrier_mr = ibv_reg_mr(r.pd, r.barrier_buf, sizeof(r.barrier_buf),
					  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		if (!r.barrier_mr)
			fatal("ibv_reg_mr (barrier): %s", std::strerror(errno));
	}

	uint32_t depth = batch + 8;
	if ((int)depth > r.dev.max_qp_wr)
		fatal("--batch %u exceeds the device's max_qp_wr %d", batch, r.dev.max_qp_wr);
	r.chan = ibv_create_comp_channel(r.ctx);
	if (!r.chan)
		fatal("ibv_create_comp_channel failed");
	fcntl(r.chan->fd, F_SETFL, fcntl(r.chan->fd, F_GETFL) | O_NONBLOCK);
	r.scq = ibv_create_cq(r.ctx, (int)depth * 2, nullptr, r.chan, 0);
	r.rcq = ibv_create_cq(r.ctx, (int)depth * 2, nullptr, r.chan, 0);
	if (!r.scq || !r.rcq)
		fatal("ibv_create_cq failed");

	uint32_t max_sge = (uint32_t)std::min(r.dev.max_sge, MAX_SGE);
	static const uint32_t inline_try[] = {256, 64, 0};
	for (uint32_t inl : inline_try) {
		ibv_qp_init_attr ia{};
		ia.send_cq = r.scq;
		ia.recv_cq = r.rcq;
		ia.qp_type = IBV_QPT_RC;
		ia.sq_sig_all = 0;
		ia.cap.max_send_wr = depth;
		ia.cap.max_recv_wr = depth;
		ia.cap.max_send_sge = max_sge;
		ia.cap.max_recv_sge = max_sge;
		ia.cap.max_inline_data = inl;
		if (r.id)
			r.qp = rdma_create_qp(r.id, r.pd, &ia) ? nullptr : r.id->qp;
		else
			r.qp = ibv_create_qp(r.pd, &ia);
		if (r.qp) {
			r.caps.send_sge = std::min(ia.cap.max_send_sge, (uint32_t)MAX_SGE);
			r.caps.recv_sge = std::min(ia.cap.max_recv_sge, (uint32_t)MAX_SGE);
			r.caps.inl = ia.cap.max_inline_data;
			r.caps.sq = std::min(ia.cap.max_send_wr, depth);
			r.caps.rq = std::min(ia.cap.max_recv_wr, depth);
			break;
		}
	}
	if (!r.qp)
		fatal("%s: %s", r.id ? "rdma_create_qp" : "ibv_create_qp", std::strerror(errno));
	r.caps.rd_sge = r.dev.max_sge_rd > 0 ? (uint32_t)r.dev.max_sge_rd : r.caps.send_sge;
	r.caps.rd_sge = std::min(r.caps.rd_sge, r.caps.send_sge);
	r.caps.atomics = r.dev.atomic_cap != IBV_ATOMIC_NONE;
	r.caps.imm = !o.no_imm;
	if (ibv_req_notify_cq(r.scq, 0) || ibv_req_notify_cq(r.rcq, 0))
		fatal("ibv_req_notify_cq failed");
}

Info my_info(const Rdma &r, const std::string &dev, uint32_t psn)
{
	Info i{};
	i.qpn = r.qp->qp_num;
	i.psn = psn;
	std::memcpy(i.gid, r.gid.raw, 16);
	i.addr = (uint64_t)(uintptr_t)r.arena;
	i.rkey = r.mr->rkey;
	i.active_mtu = r.port.active_mtu;
	i.send_sge = r.caps.send_sge;
	i.recv_sge = r.caps.recv_sge;
	i.rd_sge = r.caps.rd_sge;
	i.max_inline = r.caps.inl;
	i.atomics = r.caps.atomics;
	i.rd_atom = (uint32_t)r.dev.max_qp_rd_atom;
	i.init_rd_atom = (uint32_t)r.dev.max_qp_init_rd_atom;
	i.sq_depth = r.caps.sq;
	i.rq_depth = r.caps.rq;
	i.flags = (r.caps.imm ? 0 : INFO_NO_IMM) | (r.id ? INFO_CM : 0);
	std::snprintf(i.dev, sizeof(i.dev), "%s", dev.c_str());
	return i;
}

Caps caps_of(const Info &i)
{
	return Caps{i.send_sge, i.recv_sge, i.rd_sge,	    i.max_inline,
		    i.sq_depth, i.rq_depth, i.atomics != 0, !(i.flags & INFO_NO_IMM)};
}

enum ibv_mtu mtu_enum(int bytes)
{
	switch (bytes) {
	case 256:
		return IBV_MTU_256;
	case 512:
		return IBV_MTU_512;
	case 1024:
		return IBV_MTU_1024;
	case 2048:
		return IBV_MTU_2048;
	default:
		return IBV_MTU_4096;
	}
}

void connect_qp(Rdma &r, const Options &o, const Info &me, const Info &peer, enum ibv_mtu mtu)
{
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = (uint8_t)o.ib_port;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | (me.atomics ? IBV_ACCESS_REMOTE_ATOMIC : 0);
	if (int e = ibv_modify_qp(
		r.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		fatal("modify QP to INIT: %s", std::strerror(e));

	a = {};
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = peer.qpn;
	a.rq_psn = peer.psn;
	a.max_dest_rd_atomic =
	    (uint8_t)std::max(1U, std::min({me.rd_atom, peer.init_rd_atom, 16U}));
	a.min_rnr_timer = 12; /* 0.64 ms */
	a.ah_attr.is_global = 1;
	std::memcpy(a.ah_attr.grh.dgid.raw, peer.gid, 16);
	a.ah_attr.grh.sgid_index = (uint8_t)r.gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = (uint8_t)o.ib_port;
	if (int e =
		ibv_modify_qp(r.qp, &a,
			      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		fatal("modify QP to RTR: %s", std::strerror(e));

	a = {};
	a.qp_state = IBV_QPS_RTS;
	a.timeout = (uint8_t)o.qp_timeout;
	a.retry_cnt = (uint8_t)o.retry_cnt;
	a.rnr_retry = (uint8_t)o.rnr_retry;
	a.sq_psn = me.psn;
	a.max_rd_atomic = (uint8_t)std::max(1U, std::min({me.init_rd_atom, peer.rd_atom, 16U}));
	if (int e = ibv_modify_qp(r.qp, &a,
				  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				      IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		fatal("modify QP to RTS: %s", std::strerror(e));
}

/* ------------------------------------------------------------------ */
/* --cm: the QPs connected through rdma_cm (iWARP has no other way) */

struct Cm {
	rdma_event_channel *ch = nullptr;
	rdma_cm_id *listen_id = nullptr; /* server */
};

/*
 * The next event on the channel, which must be @want (anything else is
 * fatal).  @conn: where the event's connection parameters go; @id: the
 * event's id (a CONNECT_REQUEST's new one).  The event is acked.
 */
void cm_expect(Cm &cm, rdma_cm_event_type want, const char *what, rdma_conn_param *conn = nullptr,
	       rdma_cm_id **id = nullptr)
{
	rdma_cm_event *ev = nullptr;

	for (;;) {
		if (rdma_get_cm_event(cm.ch, &ev) == 0)
			break;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			fatal("rdma_get_cm_event: %s", std::strerror(errno));
		struct pollfd pfd = {cm.ch->fd, POLLIN, 0};
		int r = poll(&pfd, 1, ms_left(1000));
		if (r < 0 && errno != EINTR)
			fatal("poll: %s", std::strerror(errno));
		if (r == 0 && expired())
			fatal("timed out waiting for rdma_cm %s", what);
	}
	rdma_cm_event_type got = ev->event;
	int status = ev->status;
	if (got == want) {
		if (conn)
			*conn = ev->param.conn;
		if (id)
			*id = ev->id;
	}
	rdma_ack_cm_event(ev);
	if (got != want)
		fatal("rdma_cm: %s (status %d) while waiting for %s", rdma_event_str(got), status,
		      what);
}

/* an address for rdma_cm: HOST (numeric or a name) and PORT */
sockaddr_storage cm_addr(const std::string &host, int port, bool ipv6)
{
	sockaddr_storage ss{};
	if (host.empty()) { /* the wildcard */
		if (ipv6) {
			auto *a = reinterpret_cast<sockaddr_in6 *>(&ss);
			a->sin6_family = AF_INET6;
			a->sin6_addr = in6addr_any;
			a->sin6_port = htons((uint16_t)port);
		} else {
			auto *a = reinterpret_cast<sockaddr_in *>(&ss);
			a->sin_family = AF_INET;
			a->sin_addr.s_addr = htonl(INADDR_ANY);
			a->sin_port = htons((uint16_t)port);
		}
		return ss;
	}
	addrinfo hints{}, *res = nullptr;
	hints.ai_socktype = SOCK_STREAM;
	std::string ps = std::to_string(port);
	if (int e = getaddrinfo(host.c_str(), ps.c_str(), &hints, &res))
		fatal("%s: %s", host.c_str(), gai_strerror(e));
	std::memcpy(&ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return ss;
}

void cm_channel(Cm &cm)
{
	cm.ch = rdma_create_event_channel();
	if (!cm.ch)
		fatal("rdma_create_event_channel: %s (rdma_ucm loaded?)", std::strerror(errno));
	fcntl(cm.ch->fd, F_SETFL, fcntl(cm.ch->fd, F_GETFL) | O_NONBLOCK);
}

/* Server: an id listening on --bind (or any address), --cm-port. */
void cm_listen(Cm &cm, const Options &o)
{
	cm_channel(cm);
	if (rdma_create_id(cm.ch, &cm.listen_id, nullptr, RDMA_PS_TCP))
		fatal("rdma_create_id: %s", std::strerror(errno));
	sockaddr_storage ss = cm_addr(o.bind_addr, o.cm_port, o.ipv6);
	if (rdma_bind_addr(cm.listen_id, reinterpret_cast<sockaddr *>(&ss)))
		fatal("rdma_bind_addr %s port %d: %s",
		      o.bind_addr.empty() ? "(any)" : o.bind_addr.c_str(), o.cm_port,
		      std::strerror(errno));
	if (rdma_listen(cm.listen_id, 1))
		fatal("rdma_listen port %d: %s", o.cm_port, std::strerror(errno));
}

/* Client: an id bound to the device and port rdma_cm picks for the server. */
rdma_cm_id *cm_resolve(Cm &cm, const Options &o)
{
	rdma_cm_id *id = nullptr;
	cm_channel(cm);
	if (rdma_create_id(cm.ch, &id, nullptr, RDMA_PS_TCP))
		fatal("rdma_create_id: %s", std::strerror(errno));
	sockaddr_storage dst = cm_addr(o.host, o.cm_port, o.ipv6);
	if (rdma_resolve_addr(id, nullptr, reinterpret_cast<sockaddr *>(&dst), 5000))
		fatal("rdma_resolve_addr %s: %s", o.host.c_str(), std::strerror(errno));
	cm_expect(cm, RDMA_CM_EVENT_ADDR_RESOLVED, "ADDR_RESOLVED");
	if (rdma_resolve_route(id, 5000))
		fatal("rdma_resolve_route %s: %s", o.host.c_str(), std::strerror(errno));
	cm_expect(cm, RDMA_CM_EVENT_ROUTE_RESOLVED, "ROUTE_RESOLVED");
	return id;
}

/* -d, if given, must name the device rdma_cm picked; o's device and port become id's. */
void cm_take_device(Options &o, rdma_cm_id *id)
{
	if (!id->verbs)
		fatal("rdma_cm gave no device for the connection");
	std::string name = ibv_get_device_name(id->verbs->device);
	if (!o.dev.empty() && o.dev != name) {
		if (is_server)
			rdma_reject(id, nullptr, 0);
		fatal("rdma_cm picked device %s for the address, not %s (-d)", name.c_str(),
		      o.dev.c_str());
	}
	o.dev = name;
	o.ib_port = id->port_num ? id->port_num : 1;
}

uint8_t rd_clamp(int v)
{
	return (uint8_t)std::clamp(v, 0, 16);
}

/*
 * rdma_cm sets the QP's access flags without REMOTE_ATOMIC on iWARP: add
 * it (and the rest) once connected when this end takes atomics.
 */
void cm_access(Rdma &r, const Info &me)
{
	if (!me.atomics)
		return;
	ibv_qp_attr a{};
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	if (int e = ibv_modify_qp(r.qp, &a, IBV_QP_ACCESS_FLAGS))
		fatal("modify QP access flags (REMOTE_ATOMIC) in RTS: %s", std::strerror(e));
}

/* ------------------------------------------------------------------ */
/* Running a batch */

struct Stats {
	uint64_t ops = 0, bytes = 0;
	uint64_t errors = 0;	      /* failed completions and wrong completion fields */
	uint64_t expected_errors = 0; /* IBV_WC_RETRY_EXC_ERR with --expect-errors */
	uint64_t flushed = 0;
	uint64_t mismatches = 0; /* wrong bytes: regions with any */
	uint64_t by_type[OP_NR] = {};
	uint64_t inl = 0;
	bool failed = false;
	bool aborted = false;
	int abort_status = 0;
};

struct ExpSend {
	uint64_t wr_id;
	enum ibv_wc_opcode opcode;
	int64_t byte_len; /* -1: not defined for this opcode */
	const Op *op;
};

struct ExpRecv {
	uint64_t wr_id;
	enum ibv_wc_opcode opcode;
	uint32_t byte_len;
	bool imm;
	uint32_t imm_data;
	const Op *op;
};

/* K_SOURCE: K_DATA, or K_SCRIBBLED once --reuse-sources overwrote it. */
enum Kind { K_DATA, K_SCRIBBLED, K_SOURCE, K_VALUE };

/* A region of my arena and what it must hold after the batch. */
struct Expect {
	uint64_t off;
	uint32_t len;
	Kind kind;
	uint64_t pos; /* K_DATA/K_SCRIBBLED/K_SOURCE: message offset */
	uint64_t value;
	const Op *op;
	const char *what;
};

enum ibv_wc_opcode send_wc_opcode(OpType t)
{
	switch (t) {
	case OP_SEND:
	case OP_SEND_IMM:
		return IBV_WC_SEND;
	case OP_WRITE:
	case OP_WRITE_IMM:
		return IBV_WC_RDMA_WRITE;
	case OP_READ:
		return IBV_WC_RDMA_READ;
	case OP_CAS:
		return IBV_WC_COMP_SWAP;
	default:
		return IBV_WC_FETCH_ADD;
	}
}

enum ibv_wr_opcode wr_opcode(OpType t)
{
	switch (t) {
	case OP_SEND:
		return IBV_WR_SEND;
	case OP_SEND_IMM:
		return IBV_WR_SEND_WITH_IMM;
	case OP_WRITE:
		return IBV_WR_RDMA_WRITE;
	case OP_WRITE_IMM:
		return IBV_WR_RDMA_WRITE_WITH_IMM;
	case OP_READ:
		return IBV_WR_RDMA_READ;
	case OP_CAS:
		return IBV_WR_ATOMIC_CMP_AND_SWP;
	default:
		return IBV_WR_ATOMIC_FETCH_AND_ADD;
	}
}

class Runner
{
public:
	Runner(Rdma &r, Conn &c, const Options &o, int me, const Info &peer, Stats &st)
	    : r_(r), c_(c), o_(o), me_(me), peer_(peer), st_(st), rng_(o.seed ^ (uint64_t)me)
	{
	}

	/* false: the run is over (aborted) */
	bool run(const Batch &b);

private:
	Rdma &r_;
	Conn &c_;
	const Options &o_;
	int me_;
	Info peer_;
	Stats &st_;
	Rng rng_; /* local choices only (chaining), not part of the schedule */

	std::vector<Expect> expects_;
	std::vector<ExpSend> esend_;
	std::vector<ExpRecv> erecv_;
	size_t send_next_ = 0, recv_next_ = 0; /* --sq-any-order: send completions so far */
	uint64_t last_send_ = 0, last_recv_ = 0;
	/* --reuse-sources: my non-inline SENDs and WRITEs, in posting order */
	std::vector<const Op *> reuse_;
	size_t reuse_next_ = 0;
	std::unordered_set<uint64_t> reused_; /* their indexes, once overwritten */
	void reuse_completed(uint64_t wr_id);

	/* signaled at this end: --sq-any-order signals every READ and atomic */
	bool signaled(const Op &op) const
	{
		return op.signaled ||
		       (o_.sq_any_order && (op.type == OP_READ || is_atomic(op.type)));
	}
	bool send_wc_any_order(const ibv_wc &wc);
	/*
	 * --cm: after its last WR of a batch each end posts a signaled 1-byte
	 * READ of the peer's arena (local sink outside the arena) and waits
	 * for it before END.  On iWARP a WRITE completes at the requester
	 * once handed to TCP, before it is placed at the responder; the READ
	 * response comes back only after the responder has processed (placed)
	 * every WRITE ahead of it on the stream.
	 */
	static constexpr uint64_t BARRIER_WRID = ~0ULL;
	bool barrier_pending_ = false;
	bool post_barrier(const Batch &b);
	/* fenced at this end: --no-read-fence never fences a READ */
	bool fenced(const Op &op) const
	{
		return op.fence && !(o_.no_read_fence && op.type == OP_READ);
	}
	bool need_send_ = false, need_recv_ = false;
	bool aborting_ = false;
	int first_status_ = 0;
	bool peer_end_ = false;
	Msg peer_end_msg_{};
	uint64_t reported_ = 0;

	void prepare(const Batch &b);
	bool post_recvs(const Batch &b);
	bool post_sends(const Batch &b);
	void wait(const Batch &b);
	void start_abort(int status, const char *why);
	std::string send_desc(uint64_t wr_id) const;
	void on_send_wc(const ibv_wc &wc);
	void on_recv_wc(const ibv_wc &wc);
	void verify(const Batch &b);
	void damage(const Batch &b);
	void damage_one(const Batch &b, const std::string &f);
	void report(const char *fmt, ...) __attribute__((format(printf, 2, 3)));
	void check_range(uint64_t off, uint64_t len, uint64_t key, uint64_t pos, const Op *op,
			 const char *what, const Batch &b);
};

void Runner::report(const char *fmt, ...)
{
	if (reported_++ >= 30)
		return;
	va_list ap;
	va_start(ap, fmt);
	std::fprintf(stdout, "integrity[%s]: ERROR: ", is_server ? "server" : "client");
	std::vfprintf(stdout, fmt, ap);
	std::fputc('\n', stdout);
	std::fflush(stdout);
	va_end(ap);
}

std::string op_desc(const Op &op)
{
	char buf[160];
	std::snprintf(buf, sizeof(buf), "op %" PRIu64 " (%s%s %u bytes, %s -> %s, %zu+%zu SGEs)",
		      op.idx, op_names[op.type], op.inl ? " inline" : "", op.len,
		      op.req ? "server" : "client", op.req ? "client" : "server", op.lsge.size(),
		      op.rsge.size());
	return buf;
}

void Runner::prepare(const Batch &b)
{
	uint64_t end = std::min(b.used[me_] + TAIL_GUARD, r_.arena_size);
	uint8_t *a = r_.arena;

	expects_.clear();
	esend_.clear();
	erecv_.clear();
	send_next_ = recv_next_ = 0;
	reuse_.clear();
	reuse_next_ = 0;
	reused_.clear();
	need_send_ = need_recv_ = false;
	barrier_pending_ = false;
	aborting_ = false;
	first_status_ = 0;
	peer_end_ = false;

	fill_stream(a, guard_key(b.index, me_), 0, end);
	for (const Op &op : b.ops) {
		if (op.req == me_) {
			uint64_t pos = 0;
			switch (op.type) {
			case OP_SEND:
			case OP_SEND_IMM:
			case OP_WRITE:
			case OP_WRITE_IMM:
				for (const Seg &s : op.lsge) {
					fill_stream(a + s.off, data_key(op.idx), pos, s.len);
					expects_.push_back({s.off, s.len,
							    op.inl ? K_SCRIBBLED : K_SOURCE, pos,
							    0, &op, "source"});
					pos += s.len;
				}
				if (o_.reuse_sources && !op.inl)
					reuse_.push_back(&op);
				break;
			case OP_READ:
				for (const Seg &s : op.lsge) {
					expects_.push_back({s.off, s.len, K_DATA, pos, 0, &op,
							    "READ destination"});
					pos += s.len;
				}
				break;
			default:
				expects_.push_back(
				    {op.lsge[0].off, 8, K_VALUE, 0, op.init, &op, "atomic result"});
				break;
			}
			if (signaled(op)) {
				int64_t bl = -1;
				if (op.type == OP_READ)
					bl = op.len;
				else if (is_atomic(op.type))
					bl = 8;
				esend_.push_back({op.idx, send_wc_opcode(op.type), bl, &op});
			}
			last_send_ = op.idx;
			need_send_ = true;
		} else {
			uint64_t pos = 0;
			switch (op.type) {
			case OP_SEND:
			case OP_SEND_IMM:
				for (const Seg &s : op.rsge) {
					if (pos >= op.len)
						break;
					uint32_t n =
					    (uint32_t)std::min<uint64_t>(s.len, op.len - pos);
					expects_.push_back(
					    {s.off, n, K_DATA, pos, 0, &op, "receive buffer"});
					pos += n;
				}
				break;
			case OP_WRITE:
			case OP_WRITE_IMM:
				expects_.push_back(
				    {op.roff, op.len, K_DATA, 0, 0, &op, "WRITE target"});
				break;
			case OP_READ:
				fill_stream(a + op.roff, data_key(op.idx), 0, op.len);
				expects_.push_back(
				    {op.roff, op.len, K_DATA, 0, 0, &op, "READ source"});
				break;
			default: {
				std::memcpy(a + op.roff, &op.init, 8);
				expects_.push_back(
				    {op.roff, 8, K_VALUE, 0, op.final_value, &op, "atomic target"});
				break;
			}
			}
			if (uses_recv(op.type)) {
				erecv_.push_back({op.idx,
						  op.type == OP_WRITE_IMM
						      ? IBV_WC_RECV_RDMA_WITH_IMM
						      : IBV_WC_RECV,
						  op.len, has_imm(op.type), htobe32(op.imm), &op});
				last_recv_ = op.idx;
				need_recv_ = true;
			}
		}
	}
	std::sort(expects_.begin(), expects_.end(),
		  [](const Expect &x, const Expect &y) { return x.off < y.off; });
}

bool Runner::post_recvs(const Batch &b)
{
	std::vector<ibv_recv_wr> wrs;
	std::vector<std::vector<ibv_sge>> sges;

	for (const Op &op : b.ops) {
		if (op.req == me_ || !uses_recv(op.type))
			continue;
		std::vector<ibv_sge> sl;
		for (const Seg &s : op.rsge)
			sl.push_back({(uint64_t)(uintptr_t)(r_.arena + s.off), s.len, r_.mr->lkey});
		sges.push_back(std::move(sl));
		ibv_recv_wr wr{};
		wr.wr_id = op.idx;
		wrs.push_back(wr);
	}
	for (size_t i = 0; i < wrs.size(); i++) {
		wrs[i].sg_list = sges[i].empty() ? nullptr : sges[i].data();
		wrs[i].num_sge = (int)sges[i].size();
		wrs[i].next = i + 1 < wrs.size() ? &wrs[i + 1] : nullptr;
	}
	if (wrs.empty())
		return true;
	ibv_recv_wr *bad = nullptr;
	if (int e = ibv_post_recv(r_.qp, wrs.data(), &bad)) {
		report("batch %" PRIu64 ": ibv_post_recv: %s (wr_id %" PRIu64 ")", b.index,
		       std::strerror(e), bad ? bad->wr_id : 0);
		return false;
	}
	return true;
}

bool Runner::post_sends(const Batch &b)
{
	std::vector<ibv_send_wr> chain;
	std::vector<std::vector<ibv_sge>> sges;
	std::vector<const Op *> ops;
	size_t chain_max = 1;

	auto flush = [&]() -> bool {
		if (chain.empty())
			return true;
		for (size_t i = 0; i < chain.size(); i++) {
			chain[i].sg_list = sges[i].data();
			chain[i].num_sge = (int)sges[i].size();
			chain[i].next = i + 1 < chain.size() ? &chain[i + 1] : nullptr;
		}
		ibv_send_wr *bad = nullptr;
		int e = ibv_post_send(r_.qp, chain.data(), &bad);
		if (e) {
			report("batch %" PRIu64 ": ibv_post_send: %s (at %s)", b.index,
			       std::strerror(e),
			       bad ? op_desc(*ops[bad - chain.data()]).c_str() : "?");
			return false;
		}
		/* inline data was copied by the post: the source may change now */
		for (const Op *op : ops) {
			if (!op->inl)
				continue;
			uint64_t pos = 0;
			for (const Seg &s : op->lsge) {
				fill_stream(r_.arena + s.off, scribble_key(op->idx), pos, s.len);
				pos += s.len;
			}
		}
		chain.clear();
		sges.clear();
		ops.clear();
		chain_max = 1 + rng_.below(8);
		return true;
	};

	for (const Op &op : b.ops) {
		if (op.req != me_)
			continue;
		ibv_send_wr wr{};
		wr.wr_id = op.idx;
		wr.opcode = wr_opcode(op.type);
		wr.send_flags = (signaled(op) ? IBV_SEND_SIGNALED : 0) |
				(op.inl ? IBV_SEND_INLINE : 0) | (fenced(op) ? IBV_SEND_FENCE : 0) |
				(op.solicited ? IBV_SEND_SOLICITED : 0);
		if (has_imm(op.type))
			wr.imm_data = htobe32(op.imm);
		uint64_t raddr = peer_.addr + op.roff;
		if (is_write(op.type) || op.type == OP_READ) {
			wr.wr.rdma.remote_addr = raddr;
			wr.wr.rdma.rkey = peer_.rkey;
		} else if (is_atomic(op.type)) {
			wr.wr.atomic.remote_addr = raddr;
			wr.wr.atomic.rkey = peer_.rkey;
			wr.wr.atomic.compare_add = op.cmp_add;
			wr.wr.atomic.swap = op.swap;
		}
		std::vector<ibv_sge> sl;
		for (const Seg &s : op.lsge)
			sl.push_back({(uint64_t)(uintptr_t)(r_.arena + s.off), s.len, r_.mr->lkey});
		if (verbose)
			msg("batch %" PRIu64 ": post %s%s%s", b.index, op_desc(op).c_str(),
			    signaled(op) ? "" : " unsignaled", fenced(op) ? " fence" : "");
		chain.push_back(wr);
		sges.push_back(std::move(sl));
		ops.push_back(&op);
		/* an inline WR ends its chain, so its source is scribbled right after */
		if ((op.inl || chain.size() >= chain_max) && !flush())
			return false;
	}
	if (!flush())
		return false;
	return !r_.id || post_barrier(b);
}

bool Runner::post_barrier(const Batch &b)
{
	ibv_sge sge{(uint64_t)(uintptr_t)r_.barrier_buf, 1, r_.barrier_mr->lkey};
	ibv_send_wr wr{}, *bad = nullptr;
	wr.wr_id = BARRIER_WRID;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = peer_.addr;
	wr.wr.rdma.rkey = peer_.rkey;
	if (int e = ibv_post_send(r_.qp, &wr, &bad)) {
		report("batch %" PRIu64 ": ibv_post_send (placement barrier READ): %s", b.index,
		       std::strerror(e));
		return false;
	}
	barrier_pending_ = true;
	return true;
}

void Runner::start_abort(int status, const char *why)
{
	if (aborting_)
		return;
	aborting_ = true;
	first_status_ = status;
	if (verbose || status != IBV_WC_WR_FLUSH_ERR)
		msg("aborting: %s; moving the QP to ERR", why);
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_ERR;
	if (int e = ibv_modify_qp(r_.qp, &a, IBV_QP_STATE))
		report("modify QP to ERR: %s", std::strerror(e));
}

/* What wr_id of this batch's sends was, for error reports. */
std::string Runner::send_desc(uint64_t wr_id) const
{
	for (const ExpSend &e : esend_)
		if (e.wr_id == wr_id)
			return op_desc(*e.op);
	return "op " + std::to_string(wr_id);
}

void Runner::on_send_wc(const ibv_wc &wc)
{
	if (verbose > 1)
		msg("send wc wr_id %" PRIu64 " status %s opcode %d byte_len %u", wc.wr_id,
		    ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len);
	if (wc.wr_id == BARRIER_WRID) {
		barrier_pending_ = false;
		if (wc.status == IBV_WC_WR_FLUSH_ERR) {
			st_.flushed++;
		} else if (wc.status != IBV_WC_SUCCESS) {
			st_.errors++;
			report("placement barrier READ: completion status %s (vendor_err %#x)",
			       ibv_wc_status_str(wc.status), wc.vendor_err);
			start_abort(wc.status, "the placement barrier READ failed");
		} else if (wc.opcode != IBV_WC_RDMA_READ || wc.byte_len != 1) {
			st_.errors++;
			report("placement barrier READ: opcode %d byte_len %u", wc.opcode,
			       wc.byte_len);
		}
		return;
	}
	if (wc.wr_id == last_send_ && !o_.sq_any_order)
		need_send_ = false;
	if (wc.status != IBV_WC_SUCCESS) {
		if (wc.status == IBV_WC_WR_FLUSH_ERR) {
			st_.flushed++;
		} else if (wc.status == IBV_WC_RETRY_EXC_ERR && o_.expect_errors) {
			st_.expected_errors++;
			msg("op %" PRIu64 ": %s (expected: retries ran out)", wc.wr_id,
			    ibv_wc_status_str(wc.status));
		} else {
			st_.errors++;
			report("%s: send completion status %s (vendor_err %#x)",
			       send_desc(wc.wr_id).c_str(), ibv_wc_status_str(wc.status),
			       wc.vendor_err);
		}
		char why[128];
		std::snprintf(why, sizeof(why), "op %" PRIu64 " completed with %s", wc.wr_id,
			      ibv_wc_status_str(wc.status));
		start_abort(wc.status, why);
		return;
	}
	if (aborting_)
		return; /* completed before the error; the batch is not verified anyway */
	if (o_.sq_any_order && !send_wc_any_order(wc))
		return;
	if (!o_.sq_any_order && send_next_ >= esend_.size()) {
		st_.errors++;
		report("unexpected send completion wr_id %" PRIu64, wc.wr_id);
		return;
	}
	const ExpSend &e = o_.sq_any_order ? esend_[send_next_ - 1] : esend_[send_next_];
	if (!o_.sq_any_order && wc.wr_id != e.wr_id) {
		st_.errors++;
		report("send completion out of order: wr_id %" PRIu64 ", expected %" PRIu64 " (%s)",
		       wc.wr_id, e.wr_id, op_desc(*e.op).c_str());
		/* resynchronise on the one that did complete */
		for (size_t i = send_next_; i < esend_.size(); i++)
			if (esend_[i].wr_id == wc.wr_id)
				send_next_ = i;
		send_next_++;
		return;
	}
	if (!o_.sq_any_order)
		send_next_++;
	if (o_.reuse_sources)
		reuse_completed(wc.wr_id);
	if (wc.opcode != e.opcode) {
		st_.errors++;
		report("%s: send completion opcode %d, expected %d", op_desc(*e.op).c_str(),
		       wc.opcode, e.opcode);
	}
	if (e.byte_len >= 0 && wc.byte_len != (uint64_t)e.byte_len) {
		st_.errors++;
		report("%s: send completion byte_len %u, expected %" PRId64, op_desc(*e.op).c_str(),
		       wc.byte_len, e.byte_len);
	}
	if (wc.qp_num != r_.qp->qp_num) {
		st_.errors++;
		report("%s: completion for QP %u, ours is %u", op_desc(*e.op).c_str(), wc.qp_num,
		       r_.qp->qp_num);
	}
}

/*
 * --reuse-sources: the completion of op @wr_id covers it and every WR
 * posted before it; their sources are the application's again.
 */
void Runner::reuse_completed(uint64_t wr_id)
{
	for (; reuse_next_ < reuse_.size() && reuse_[reuse_next_]->idx <= wr_id; reuse_next_++) {
		const Op *op = reuse_[reuse_next_];
		uint64_t pos = 0;
		for (const Seg &s : op->lsge) {
			fill_stream(r_.arena + s.off, scribble_key(op->idx), pos, s.len);
			pos += s.len;
		}
		reused_.insert(op->idx);
	}
}

/*
 * --sq-any-order: find @wc's entry among those not completed yet and move
 * it to esend_[send_next_ - 1] (swapping: the order no longer matters) for
 * the checks that follow; false if there is none (reported).
 */
bool Runner::send_wc_any_order(const ibv_wc &wc)
{
	for (size_t i = send_next_; i < esend_.size(); i++) {
		if (esend_[i].wr_id != wc.wr_id)
			continue;
		std::swap(esend_[i], esend_[send_next_]);
		send_next_++;
		if (send_next_ == esend_.size())
			need_send_ = false;
		return true;
	}
	st_.errors++;
	report("unexpected send completion wr_id %" PRIu64, wc.wr_id);
	return false;
}

void Runner::on_recv_wc(const ibv_wc &wc)
{
	if (verbose > 1)
		msg("recv wc wr_id %" PRIu64 " status %s opcode %d byte_len %u flags %#x imm %#x",
		    wc.wr_id, ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len, wc.wc_flags,
		    be32toh(wc.imm_data));
	if (wc.wr_id == last_recv_)
		need_recv_ = false;
	if (wc.status != IBV_WC_SUCCESS) {
		if (wc.status == IBV_WC_WR_FLUSH_ERR) {
			st_.flushed++;
		} else {
			st_.errors++;
			report("op %" PRIu64 ": receive completion status %s (vendor_err %#x)",
			       wc.wr_id, ibv_wc_status_str(wc.status), wc.vendor_err);
		}
		char why[128];
		std::snprintf(why, sizeof(why), "receive for op %" PRIu64 " completed with %s",
			      wc.wr_id, ibv_wc_status_str(wc.status));
		start_abort(wc.status, why);
		return;
	}
	if (aborting_)
		return;
	if (recv_next_ >= erecv_.size()) {
		st_.errors++;
		report("unexpected receive completion wr_id %" PRIu64, wc.wr_id);
		return;
	}
	const ExpRecv &e = erecv_[recv_next_];
	if (wc.wr_id != e.wr_id) {
		st_.errors++;
		report("receive completion out of order: wr_id %" PRIu64 ", expected %" PRIu64
		       " (%s)",
		       wc.wr_id, e.wr_id, op_desc(*e.op).c_str());
		for (size_t i = recv_next_; i < erecv_.size(); i++)
			if (erecv_[i].wr_id == wc.wr_id)
				recv_next_ = i;
		recv_next_++;
		return;
	}
	recv_next_++;
	std::string d = op_desc(*e.op);
	if (wc.opcode != e.opcode) {
		st_.errors++;
		report("%s: receive completion opcode %d, expected %d", d.c_str(), wc.opcode,
		       e.opcode);
	}
	if (wc.byte_len != e.byte_len) {
		st_.errors++;
		report("%s: receive byte_len %u, expected %u", d.c_str(), wc.byte_len, e.byte_len);
	}
	bool imm = wc.wc_flags & IBV_WC_WITH_IMM;
	if (imm != e.imm || (imm && wc.imm_data != e.imm_data)) {
		st_.errors++;
		report("%s: receive immediate data %s %#x, expected %s %#x", d.c_str(),
		       imm ? "present" : "absent", be32toh(wc.imm_data),
		       e.imm ? "present" : "absent", be32toh(e.imm_data));
	}
	if (wc.wc_flags & IBV_WC_WITH_INV) {
		st_.errors++;
		report("%s: receive completion flags an invalidate", d.c_str());
	}
	if (wc.qp_num != r_.qp->qp_num) {
		st_.errors++;
		report("%s: receive completion for QP %u, ours is %u", d.c_str(), wc.qp_num,
		       r_.qp->qp_num);
	}
}

void Runner::wait(const Batch &b)
{
	ibv_wc wc[32];

	for (;;) {
		for (int pass = 0;; pass++) {
			int n;
			while ((n = ibv_poll_cq(r_.scq, 32, wc)) > 0)
				for (int i = 0; i < n; i++)
					on_send_wc(wc[i]);
			if (n < 0) {
				report("ibv_poll_cq (send) failed");
				start_abort(-2, "ibv_poll_cq failed");
				need_send_ = false;
			}
			while ((n = ibv_poll_cq(r_.rcq, 32, wc)) > 0)
				for (int i = 0; i < n; i++)
					on_recv_wc(wc[i]);
			if (n < 0) {
				report("ibv_poll_cq (receive) failed");
				start_abort(-2, "ibv_poll_cq failed");
				need_recv_ = false;
			}
			if (!need_send_ && !need_recv_ && !barrier_pending_)
				return;
			if (pass)
				break;
			/* arm, then poll once more: nothing slips between */
			if (ibv_req_notify_cq(r_.scq, 0) || ibv_req_notify_cq(r_.rcq, 0))
				fatal("ibv_req_notify_cq failed");
		}

		struct pollfd pfd[2] = {{r_.chan->fd, POLLIN, 0}, {c_.fd, POLLIN, 0}};
		int rc = poll(pfd, 2, ms_left(1000));
		if (rc < 0 && errno != EINTR)
			fatal("poll: %s", std::strerror(errno));
		if (pfd[0].revents & POLLIN) {
			ibv_cq *cq;
			void *ctx;
			while (ibv_get_cq_event(r_.chan, &cq, &ctx) == 0)
				ibv_ack_cq_events(cq, 1);
		}
		if (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			bool open = c_.pump();
			Msg m;
			if (!peer_end_ && c_.take(M_END, &m)) {
				peer_end_ = true;
				peer_end_msg_ = m;
				if (m.end.abort) {
					char why[128];
					std::snprintf(why, sizeof(why), "the peer aborted (%s)",
						      wc_status(m.end.status));
					start_abort(IBV_WC_WR_FLUSH_ERR, why);
				}
			}
			if (!open && !peer_end_)
				fail("the peer closed the connection during batch %" PRIu64,
				     b.index);
		}
		if (expired()) {
			report("timed out in batch %" PRIu64 ": %zu of %zu send and %zu of %zu "
			       "receive completions%s%s",
			       b.index, send_next_, esend_.size(), recv_next_, erecv_.size(),
			       need_send_ ? ", last send missing" : "",
			       need_recv_ ? ", last receive missing" : "");
			st_.errors++;
			Msg m = make_msg(M_END, b.index);
			m.end.abort = 1;
			m.end.status = -1;
			c_.send(m);
			msg("timeout");
			st_.failed = true;
			st_.aborted = true;
			st_.abort_status = -1;
			return;
		}
	}
}

void Runner::check_range(uint64_t off, uint64_t len, uint64_t key, uint64_t pos, const Op *op,
			 const char *what, const Batch &b)
{
	size_t first = 0;
	uint64_t bad = check_stream(r_.arena + off, key, pos, len, &first);
	if (!bad)
		return;
	st_.mismatches++;
	uint8_t want;
	fill_stream(&want, key, pos + first, 1);
	if (op)
		report("batch %" PRIu64 " %s: %s: %" PRIu64 " of %" PRIu64
		       " bytes wrong, first at message offset %" PRIu64 " (arena offset %" PRIu64
		       "): %#04x, expected %#04x",
		       b.index, op_desc(*op).c_str(), what, bad, len, pos + first, off + first,
		       r_.arena[off + first], want);
	else
		report("batch %" PRIu64 ": %s: %" PRIu64 " of %" PRIu64
		       " guard bytes overwritten, first at arena offset %" PRIu64
		       ": %#04x, expected %#04x",
		       b.index, what, bad, len, off + first, r_.arena[off + first], want);
}

/*
 * --selftest-fault: change what a correct transport would have left, in
 * the first batch, so that the checks below must catch it.
 */
void Runner::damage(const Batch &b)
{
	if (b.index == 0)
		for (const std::string &f : o_.faults)
			damage_one(b, f);
}

void Runner::damage_one(const Batch &b, const std::string &f)
{
	if (f == "guard") {
		r_.arena[0] ^= 0x01; /* regions start at offset 1 or later */
		msg("selftest: flipped guard byte at arena offset 0");
		return;
	}
	for (const Expect &e : expects_) {
		if (f == "data" && e.kind == K_DATA && e.op->req != me_) {
			r_.arena[e.off + e.len / 2] ^= 0x80;
			msg("selftest: flipped a byte of %s %s", op_desc(*e.op).c_str(), e.what);
			return;
		}
		if (f == "atomic" && e.kind == K_VALUE) {
			r_.arena[e.off + 7] ^= 0x01;
			msg("selftest: changed %s of %s", e.what, op_desc(*e.op).c_str());
			return;
		}
	}
	if (f == "imm") {
		for (const Op &op : b.ops) {
			if (op.req != me_ && has_imm(op.type)) {
				/* data and its guard are fine; only the CRC check can see this */
				const_cast<Op &>(op).imm ^= 1;
				msg("selftest: expecting a wrong immediate for %s",
				    op_desc(op).c_str());
				return;
			}
		}
	}
	msg("selftest: nothing to damage in batch 0 for '%s'", f.c_str());
}

void Runner::verify(const Batch &b)
{
	uint64_t gk = guard_key(b.index, me_);
	uint64_t end = std::min(b.used[me_] + TAIL_GUARD, r_.arena_size), cur = 0;
	const Expect *prev = nullptr;
	char what[200];

	for (const Expect &e : expects_) {
		if (e.off > cur) {
			std::snprintf(what, sizeof(what), "guard after %s",
				      prev ? op_desc(*prev->op).c_str() : "arena start");
			check_range(cur, e.off - cur, gk, cur, nullptr, what, b);
		}
		switch (e.kind) {
		case K_DATA:
			check_range(e.off, e.len, data_key(e.op->idx), e.pos, e.op, e.what, b);
			break;
		case K_SCRIBBLED:
			check_range(e.off, e.len, scribble_key(e.op->idx), e.pos, e.op,
				    "inline source (scribbled after the post)", b);
			break;
		case K_SOURCE:
			if (reused_.count(e.op->idx))
				check_range(e.off, e.len, scribble_key(e.op->idx), e.pos, e.op,
					    "source (overwritten at its completion)", b);
			else
				check_range(e.off, e.len, data_key(e.op->idx), e.pos, e.op, e.what,
					    b);
			break;
		case K_VALUE: {
			uint64_t v;
			std::memcpy(&v, r_.arena + e.off, 8);
			if (v != e.value) {
				st_.mismatches++;
				report("batch %" PRIu64 " %s: %s %#" PRIx64 ", expected %#" PRIx64
				       " (before %#" PRIx64 ", %s %#" PRIx64 ")",
				       b.index, op_desc(*e.op).c_str(), e.what, v, e.value,
				       e.op->init, e.op->type == OP_CAS ? "compare" : "add",
				       e.op->cmp_add);
			}
			break;
		}
		}
		cur = e.off + e.len;
		prev = &e;
	}
	if (end > cur) {
		std::snprintf(what, sizeof(what), "guard after %s",
			      prev ? op_desc(*prev->op).c_str() : "arena start");
		check_range(cur, end - cur, gk, cur, nullptr, what, b);
	}

	/* the immediate data is the CRC-32 of the message: check it against what arrived */
	for (const Op &op : b.ops) {
		if (op.req == me_ || !has_imm(op.type))
			continue;
		uint32_t crc = 0xffffffffU;
		if (op.type == OP_SEND_IMM) {
			uint64_t pos = 0;
			for (const Seg &s : op.rsge) {
				uint32_t n = (uint32_t)std::min<uint64_t>(s.len, op.len - pos);
				crc = roce_crc32_update(crc, r_.arena + s.off, n);
				pos += n;
				if (pos >= op.len)
					break;
			}
		} else {
			crc = roce_crc32_update(crc, r_.arena + op.roff, op.len);
		}
		if (~crc != op.imm) {
			st_.mismatches++;
			report("batch %" PRIu64 " %s: CRC-32 of the received data %#x, immediate "
			       "data says %#x",
			       b.index, op_desc(op).c_str(), ~crc, op.imm);
		}
	}

	/* nothing more may complete */
	ibv_wc wc;
	if (ibv_poll_cq(r_.scq, 1, &wc) > 0) {
		st_.errors++;
		report("batch %" PRIu64 ": extra send completion wr_id %" PRIu64 " status %s",
		       b.index, wc.wr_id, ibv_wc_status_str(wc.status));
	}
	if (ibv_poll_cq(r_.rcq, 1, &wc) > 0) {
		st_.errors++;
		report("batch %" PRIu64 ": extra receive completion wr_id %" PRIu64 " status %s",
		       b.index, wc.wr_id, ibv_wc_status_str(wc.status));
	}
	if (send_next_ != esend_.size() || recv_next_ != erecv_.size()) {
		st_.errors++;
		report("batch %" PRIu64 ": %zu of %zu send and %zu of %zu receive completions "
		       "arrived",
		       b.index, send_next_, esend_.size(), recv_next_, erecv_.size());
	}
}

bool Runner::run(const Batch &b)
{
	prepare(b);
	bool ok = post_recvs(b);

	Msg m = make_msg(M_READY, b.index);
	m.end.abort = !ok;
	c_.send(m);
	m = c_.wait(M_READY, "READY");
	if (m.type != M_READY || m.batch != b.index || m.end.abort || !ok) {
		msg("batch %" PRIu64 ": %s could not start it", b.index,
		    ok ? "the peer" : "this end");
		st_.failed = true;
		st_.aborted = true;
		st_.abort_status = -2;
		return false;
	}
	if (verbose)
		msg("batch %" PRIu64 ": %zu ops, arena %" PRIu64 " / %" PRIu64 " bytes", b.index,
		    b.ops.size(), b.used[0], b.used[1]);

	if (!post_sends(b)) {
		start_abort(-2, "posting failed");
		st_.errors++;
		/* what was posted still completes (flushed): drain it */
		need_send_ = false;
	}
	wait(b);
	if (st_.aborted)
		return false; /* timed out; the peer was told */

	m = make_msg(M_END, b.index);
	m.end.abort = aborting_;
	m.end.status = first_status_;
	c_.send(m);
	if (!peer_end_) {
		peer_end_msg_ = c_.wait(M_END, "END");
		peer_end_ = true;
	}
	if (aborting_ || peer_end_msg_.end.abort) {
		int st = aborting_ && first_status_ != IBV_WC_WR_FLUSH_ERR
			     ? first_status_
			     : peer_end_msg_.end.status;
		st_.aborted = true;
		st_.abort_status = st;
		msg("batch %" PRIu64 " aborted (%s): its data is not verified", b.index,
		    wc_status(st));
		return false;
	}
	damage(b);
	verify(b);
	for (const Op &op : b.ops) {
		st_.ops++;
		st_.bytes += op.len;
		st_.by_type[op.type]++;
		st_.inl += op.inl;
	}
	return true;
}

/* ------------------------------------------------------------------ */

void write_info(const Options &o, const Rdma &r, const Info &me, const Info &peer, enum ibv_mtu mtu)
{
	std::string tmp = o.info_file + ".tmp";
	FILE *f = std::fopen(tmp.c_str(), "w");
	if (!f)
		fatal("%s: %s", tmp.c_str(), std::strerror(errno));
	std::fprintf(f,
		     "dev %s\nlqpn %u\nrqpn %u\nsq_psn %u\nrq_psn %u\nmtu %d\ngid_index %d\n"
		     "gid %s\nrgid %s\naddr %#" PRIx64 "\nrkey %#x\nlen %" PRIu64 "\n",
		     o.dev.c_str(), me.qpn, peer.qpn, me.psn, peer.psn, mtu_bytes(mtu), r.gid_index,
		     gid_str(me.gid).c_str(), gid_str(peer.gid).c_str(), me.addr, me.rkey,
		     r.arena_size);
	std::fclose(f);
	if (rename(tmp.c_str(), o.info_file.c_str()))
		fatal("rename %s: %s", o.info_file.c_str(), std::strerror(errno));
}

/*
 * --pause: wait (up to 10 minutes) until @file exists; --timeout counts
 * from the end of the pause.  Both ends can be given the same file.
 */
void do_pause(const std::string &file, double timeout)
{
	struct stat sb;
	auto until = std::chrono::steady_clock::now() + std::chrono::minutes(10);

	msg("paused until %s exists", file.c_str());
	alarm(600 + 60);
	while (stat(file.c_str(), &sb)) {
		if (std::chrono::steady_clock::now() >= until)
			fail("still no %s after 10 minutes", file.c_str());
		usleep(50000);
	}
	srtest::deadline.set(timeout);
	alarm((unsigned)timeout + 60);
	msg("resuming");
}

uint32_t initial_psn(Rng &rng)
{
	/* now and then close to the wrap at 2^24 */
	if (rng.chance(30))
		return (uint32_t)(0xffffff - rng.below(64));
	return (uint32_t)rng.below(1U << 24);
}

} // namespace

int main(int argc, char **argv)
{
	srtest::log_prefix = "integrity";
	Options o = parse_args(argc, argv);
	t_start = std::chrono::steady_clock::now();
	srtest::deadline.set(o.timeout);
	/* a last resort if something blocks where no deadline reaches */
	alarm((unsigned)o.timeout + 60);
	std::signal(SIGPIPE, SIG_IGN);

	Conn conn;
	Rdma r;
	Cm cm;
	Params p{};
	Info me{}, peer{};
	int side = is_server ? 1 : 0;

	if (!is_server) {
		if (!o.seed_set)
			o.seed =
			    (uint64_t)std::chrono::system_clock::now().time_since_epoch().count();
		p.seed = o.seed;
		p.ops = o.ops;
		p.max_size = o.max_size;
		p.arena = std::max<uint64_t>(8 << 20, 2 * o.max_size + (1 << 20));
		p.arena = (p.arena + 4095) & ~4095ULL;
		p.batch = o.batch;
		p.mask = o.mask;
		p.server_mask = o.server_mask;
		p.inline_ok = o.inline_ok;
		p.one_way = o.one_way;
		p.mtu = (uint32_t)o.mtu;
		if (o.cm) {
			r.id = cm_resolve(cm, o);
			cm_take_device(o, r.id);
		}
		setup_rdma(r, o, p.arena, p.batch);
		Rng prng(p.seed ^ 0xc11e47ULL);
		me = my_info(r, o.dev, initial_psn(prng));
		conn.fd = tcp_connect(o.host, o.tcp_port);
		Msg m = make_msg(M_PARAMS, 0);
		m.params = p;
		m.info = me;
		conn.send(m);
		if (o.cm) {
			rdma_conn_param cp{};
			cp.responder_resources = rd_clamp(r.dev.max_qp_rd_atom);
			cp.initiator_depth = rd_clamp(r.dev.max_qp_init_rd_atom);
			cp.retry_count = (uint8_t)o.retry_cnt;
			cp.rnr_retry_count = (uint8_t)o.rnr_retry;
			if (rdma_connect(r.id, &cp))
				fatal("rdma_connect: %s", std::strerror(errno));
			cm_expect(cm, RDMA_CM_EVENT_ESTABLISHED, "ESTABLISHED");
		}
		m = conn.wait(M_INFO, "the server's INFO");
		if (m.type != M_INFO)
			fatal("the server refused the connection");
		peer = m.info;
	} else {
		if (o.cm) /* before the TCP listen: a client that got in finds it */
			cm_listen(cm, o);
		conn.fd = tcp_listen_accept(o.tcp_port);
		Msg m = conn.wait(M_PARAMS, "the client's PARAMS");
		if (m.type != M_PARAMS)
			fatal("protocol error: expected PARAMS");
		p = m.params;
		peer = m.info;
		o.seed = p.seed;
		o.ops = p.ops;
		o.max_size = p.max_size;
		o.batch = p.batch;
		o.mask = p.mask;
		o.inline_ok = p.inline_ok;
		o.one_way = p.one_way;
		rdma_conn_param req{};
		if (o.cm) {
			cm_expect(cm, RDMA_CM_EVENT_CONNECT_REQUEST, "CONNECT_REQUEST", &req,
				  &r.id);
			cm_take_device(o, r.id);
		}
		setup_rdma(r, o, p.arena, p.batch);
		Rng prng(p.seed ^ 0x5e4e4ULL);
		me = my_info(r, o.dev, initial_psn(prng));
		if (o.cm) {
			rdma_conn_param cp{};
			cp.responder_resources =
			    std::min(rd_clamp(r.dev.max_qp_rd_atom), req.initiator_depth);
			cp.initiator_depth =
			    std::min(rd_clamp(r.dev.max_qp_init_rd_atom), req.responder_resources);
			cp.retry_count = (uint8_t)o.retry_cnt;
			cp.rnr_retry_count = (uint8_t)o.rnr_retry;
			if (rdma_accept(r.id, &cp))
				fatal("rdma_accept: %s", std::strerror(errno));
			cm_expect(cm, RDMA_CM_EVENT_ESTABLISHED, "ESTABLISHED");
		}
		m = make_msg(M_INFO, 0);
		m.info = me;
		conn.send(m);
	}
	seed_global = p.seed;

	int mtu = std::min(mtu_bytes((enum ibv_mtu)me.active_mtu),
			   mtu_bytes((enum ibv_mtu)peer.active_mtu));
	if (p.mtu) /* the client's --mtu: both ends must agree */
		mtu = std::min(mtu, (int)p.mtu);
	enum ibv_mtu path_mtu = mtu_enum(mtu);
	if (o.cm) {
		if (!(peer.flags & INFO_CM))
			fatal("the peer does not connect with rdma_cm: give both ends --cm");
		cm_access(r, me);
	} else {
		if (peer.flags & INFO_CM)
			fatal("the peer connects with rdma_cm: give both ends --cm");
		connect_qp(r, o, me, peer, path_mtu);
	}
	msg("%s QP %u <-> %s QP %u, GID %s -> %s, path MTU %d, seed %#" PRIx64 ", %" PRIu64
	    " ops up to %" PRIu64 " bytes",
	    o.dev.c_str(), me.qpn, peer.dev, peer.qpn, gid_str(me.gid).c_str(),
	    gid_str(peer.gid).c_str(), mtu, p.seed, p.ops, p.max_size);
	msg("limits here: send_sge %u recv_sge %u rd_sge %u inline %u atomics %s; peer: %u %u %u "
	    "%u %s",
	    me.send_sge, me.recv_sge, me.rd_sge, me.max_inline, me.atomics ? "yes" : "no",
	    peer.send_sge, peer.recv_sge, peer.rd_sge, peer.max_inline,
	    peer.atomics ? "yes" : "no");
	if (!o.info_file.empty())
		write_info(o, r, me, peer, path_mtu);
	if (!o.pause_file.empty())
		do_pause(o.pause_file, o.timeout);
	t_run = std::chrono::steady_clock::now();

	Caps caps[2];
	caps[side] = caps_of(me);
	caps[1 - side] = caps_of(peer);
	Schedule sched(p, caps);
	if (p.ops && !sched.any_allowed())
		fatal("no opcode left to test (--ops-mask, atomics)");
	if ((p.mask & ((1U << OP_CAS) | (1U << OP_FAA))) &&
	    (!sched.allowed(OP_CAS) || !sched.allowed(OP_FAA)))
		msg("atomics skipped: atomic_cap is NONE on %s",
		    !me.atomics ? o.dev.c_str() : peer.dev);
	if ((p.mask & ((1U << OP_SEND_IMM) | (1U << OP_WRITE_IMM))) &&
	    (!sched.allowed(OP_SEND_IMM) || !sched.allowed(OP_WRITE_IMM)))
		msg("immediate data skipped: --no-imm on %s",
		    (me.flags & INFO_NO_IMM) ? o.dev.c_str() : peer.dev);

	Stats st;
	Runner runner(r, conn, o, side, peer, st);
	Batch b;
	uint64_t nbatches = 0;
	while (sched.next(&b)) {
		nbatches++;
		if (!runner.run(b))
			break;
		if (verbose)
			msg("batch %" PRIu64 " verified (%" PRIu64 " ops so far)", b.index, st.ops);
	}

	/* Totals; the client's line covers both ends. */
	bool expected_abort =
	    st.aborted && o.expect_errors &&
	    (st.abort_status == IBV_WC_RETRY_EXC_ERR || st.abort_status == IBV_WC_WR_FLUSH_ERR);
	bool my_fail = st.failed || st.errors || st.mismatches || (st.aborted && !expected_abort);
	Final fin{st.ops, st.bytes, st.errors, st.expected_errors, st.mismatches, my_fail, 0};
	Final pf{};
	bool peer_final = false;
	if (st.abort_status != -1) {
		Msg m = make_msg(M_FINAL, 0);
		m.final = fin;
		conn.send(m);
		/* the peer may still be draining after an abort */
		Msg pm;
		for (;;) {
			if (conn.take(M_FINAL, &pm)) {
				pf = pm.final;
				peer_final = true;
				break;
			}
			if (conn.eof)
				break;
			struct pollfd pfd = {conn.fd, POLLIN, 0};
			int rc = poll(&pfd, 1, ms_left(1000));
			if (rc > 0)
				conn.pump();
			if (rc == 0 && expired())
				break;
		}
		if (!peer_final)
			msg("no totals from the peer");
	}

	double t = run_time();
	msg("%" PRIu64 " batches in %.1f s, %.1f MB/s", nbatches, t,
	    t > 0 ? (double)st.bytes / t / 1e6 : 0.0);
	std::printf("integrity[%s]: mix:", is_server ? "server" : "client");
	for (int i = 0; i < OP_NR; i++)
		std::printf(" %s %" PRIu64, op_names[i], st.by_type[i]);
	std::printf("; inline %" PRIu64 "\n", st.inl);
	std::printf("integrity[%s]: here: %" PRIu64 " wrong regions, %" PRIu64
		    " bad completions, %" PRIu64 " expected errors, %" PRIu64 " flushed%s%s\n",
		    is_server ? "server" : "client", st.mismatches, st.errors, st.expected_errors,
		    st.flushed, st.aborted ? ", aborted: " : "",
		    st.aborted ? wc_status(st.abort_status) : "");
	uint64_t errors = st.errors + st.expected_errors + st.mismatches;
	bool fail = my_fail;
	if (!is_server) {
		if (peer_final) {
			errors += pf.errors + pf.expected_errors + pf.mismatches;
			fail |= pf.failed != 0;
		} else {
			fail = true;
		}
	}
	std::printf("integrity: %" PRIu64 " ops, %" PRIu64 " bytes, %" PRIu64 " errors\n", st.ops,
		    st.bytes, errors);
	std::fflush(stdout);

	if (r.id) {
		rdma_disconnect(r.id);
		rdma_destroy_qp(r.id);
	} else {
		ibv_destroy_qp(r.qp);
	}
	ibv_destroy_cq(r.scq);
	ibv_destroy_cq(r.rcq);
	ibv_destroy_comp_channel(r.chan);
	ibv_dereg_mr(r.mr);
	if (r.barrier_mr)
		ibv_dereg_mr(r.barrier_mr);
	ibv_dealloc_pd(r.pd);
	if (r.id) {
		rdma_destroy_id(r.id);
		if (cm.listen_id)
			rdma_destroy_id(cm.listen_id);
		rdma_destroy_event_channel(cm.ch);
	} else {
		ibv_close_device(r.ctx);
	}
	munmap(r.arena, r.arena_size);
	close(conn.fd);
	return fail ? 1 : 0;
}
