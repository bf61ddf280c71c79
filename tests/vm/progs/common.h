// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Helpers shared by the VM test programs in tests/vm/progs: messages and
 * exit codes, a deadline, the TCP side channel two test processes meet
 * over, RAII owners for verbs objects, device and GID selection, RC QP
 * state transitions and keyed byte patterns.  Header-only; public verbs
 * API only, so the programs also run against rdma_rxe.
 *
 * Exit codes: 0 passed, 1 a check failed (fail(), or check() and the run
 * went on), 2 a setup or usage error (fatal()).
 */
#ifndef SOFTRNIC_TEST_PROGS_COMMON_H
#define SOFTRNIC_TEST_PROGS_COMMON_H

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <endian.h>
#include <infiniband/verbs.h>
#include <memory>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

namespace srtest
{

/* ------------------------------------------------------------------ */
/* Messages */

/* "prog[role]: " before every line; set once by main(). */
inline std::string log_prefix = "test";

inline void vmsg(const char *tag, const char *fmt, va_list ap)
{
	std::fprintf(stdout, "%s: %s", log_prefix.c_str(), tag);
	std::vfprintf(stdout, fmt, ap);
	std::fputc('\n', stdout);
	std::fflush(stdout);
}

inline void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
inline void msg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

/* Setup or usage error: status 2. */
[[noreturn]] inline void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
[[noreturn]] inline void fatal(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("FATAL: ", fmt, ap);
	va_end(ap);
	std::exit(2);
}

/* A run that cannot go on (peer gone or silent, check failed): status 1. */
[[noreturn]] inline void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
[[noreturn]] inline void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("FAILED: ", fmt, ap);
	va_end(ap);
	std::exit(1);
}

/*
 * Checks after which the run goes on: check() counts one in checks and,
 * if @ok is false, one in failures, saying why.  A program that uses them
 * exits with failures != 0 (status 1).
 */
inline int checks, failures;

inline bool check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
inline bool check(bool ok, const char *fmt, ...)
{
	checks++;
	if (ok)
		return true;
	failures++;
	va_list ap;
	va_start(ap, fmt);
	vmsg("FAIL: ", fmt, ap);
	va_end(ap);
	return false;
}

/* ------------------------------------------------------------------ */
/* Deadline */

class Deadline
{
public:
	void set(double seconds)
	{
		end_ = std::chrono::steady_clock::now() +
		       std::chrono::duration_cast<std::chrono::steady_clock::duration>(
			   std::chrono::duration<double>(seconds));
	}
	/* Milliseconds left, at most @cap; 0 once passed. */
	int ms_left(int cap) const
	{
		auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
				end_ - std::chrono::steady_clock::now())
				.count();
		if (left <= 0)
			return 0;
		return left < cap ? (int)left : cap;
	}
	bool expired() const { return std::chrono::steady_clock::now() >= end_; }

private:
	std::chrono::steady_clock::time_point end_ = std::chrono::steady_clock::now();
};

inline Deadline deadline;

inline double now_s()
{
	return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
	    .count();
}

/* ------------------------------------------------------------------ */
/* TCP side channel */

inline int tcp_listen_accept(int port)
{
	int s = socket(AF_INET6, SOCK_STREAM, 0), one = 1, zero = 0;
	if (s < 0)
		fatal("socket: %s", std::strerror(errno));
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	struct sockaddr_in6 a = {};
	a.sin6_family = AF_INET6;
	a.sin6_addr = in6addr_any;
	a.sin6_port = htons((uint16_t)port);
	if (bind(s, reinterpret_cast<struct sockaddr *>(&a), sizeof(a)) < 0)
		fatal("bind TCP port %d: %s", port, std::strerror(errno));
	if (listen(s, 1) < 0)
		fatal("listen: %s", std::strerror(errno));
	msg("listening on TCP port %d", port);
	struct pollfd pfd = {s, POLLIN, 0};
	for (;;) {
		int r = poll(&pfd, 1, deadline.ms_left(1000));
		if (r > 0)
			break;
		if (r < 0 && errno != EINTR)
			fatal("poll: %s", std::strerror(errno));
		if (deadline.expired())
			fail("timed out waiting for the client");
	}
	int c = accept(s, nullptr, nullptr);
	if (c < 0)
		fatal("accept: %s", std::strerror(errno));
	close(s);
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return c;
}

inline int tcp_connect(const std::string &host, int port)
{
	struct addrinfo hints = {}, *res;
	hints.ai_socktype = SOCK_STREAM;
	std::string service = std::to_string(port);
	int err = getaddrinfo(host.c_str(), service.c_str(), &hints, &res);
	if (err)
		fatal("%s: %s", host.c_str(), gai_strerror(err));
	/* the server may still be starting: retry for a while */
	for (int attempt = 0;; attempt++) {
		for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
			int s = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
			if (s < 0)
				continue;
			if (connect(s, ai->ai_addr, ai->ai_addrlen) == 0) {
				int one = 1;
				setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
				freeaddrinfo(res);
				return s;
			}
			close(s);
		}
		if (attempt >= 100 || deadline.expired())
			fatal("cannot connect to %s port %d: %s", host.c_str(), port,
			      std::strerror(errno));
		usleep(100000);
	}
}

/* Blocking send/receive of exactly @n bytes within the deadline. */
inline void tcp_send_all(int fd, const void *buf, size_t n)
{
	const uint8_t *p = static_cast<const uint8_t *>(buf);
	while (n) {
		ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			fail("send to peer: %s", std::strerror(errno));
		p += k;
		n -= (size_t)k;
	}
}

inline void tcp_recv_all(int fd, void *buf, size_t n, const char *what)
{
	uint8_t *p = static_cast<uint8_t *>(buf);
	while (n) {
		struct pollfd pfd = {fd, POLLIN, 0};
		int r = poll(&pfd, 1, deadline.ms_left(1000));
		if (r < 0 && errno != EINTR)
			fatal("poll: %s", std::strerror(errno));
		if (r == 0) {
			if (deadline.expired())
				fail("timed out waiting for %s from the peer", what);
			continue;
		}
		ssize_t k = recv(fd, p, n, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k == 0)
			fail("the peer closed the connection while we waited for %s", what);
		if (k < 0)
			fail("recv from peer: %s", std::strerror(errno));
		p += k;
		n -= (size_t)k;
	}
}

/* ------------------------------------------------------------------ */
/* RAII owners for verbs objects */

template <auto Destroy> struct VerbsDeleter {
	template <class T> void operator()(T *p) const
	{
		if (p && Destroy(p))
			std::fprintf(stderr, "%s: destroying a verbs object failed: %s\n",
				     log_prefix.c_str(), std::strerror(errno));
	}
};

using ContextPtr = std::unique_ptr<ibv_context, VerbsDeleter<ibv_close_device>>;
using PdPtr = std::unique_ptr<ibv_pd, VerbsDeleter<ibv_dealloc_pd>>;
using MrPtr = std::unique_ptr<ibv_mr, VerbsDeleter<ibv_dereg_mr>>;
using MwPtr = std::unique_ptr<ibv_mw, VerbsDeleter<ibv_dealloc_mw>>;
using CqPtr = std::unique_ptr<ibv_cq, VerbsDeleter<ibv_destroy_cq>>;
using QpPtr = std::unique_ptr<ibv_qp, VerbsDeleter<ibv_destroy_qp>>;

/* ------------------------------------------------------------------ */
/* Devices, GIDs, MTU */

inline ContextPtr open_device(const std::string &name)
{
	int n;
	ibv_device **list = ibv_get_device_list(&n);
	if (!list)
		fatal("ibv_get_device_list: %s", std::strerror(errno));
	ContextPtr ctx;
	for (int i = 0; i < n; i++)
		if (name == ibv_get_device_name(list[i]))
			ctx.reset(ibv_open_device(list[i]));
	ibv_free_device_list(list);
	if (!ctx)
		fatal("cannot open RDMA device %s", name.c_str());
	return ctx;
}

/* Port attributes once the port is ACTIVE (it may still be coming up). */
inline ibv_port_attr wait_port_active(ibv_context *ctx, int port)
{
	ibv_port_attr pa{};
	for (int i = 0;; i++) {
		if (ibv_query_port(ctx, (uint8_t)port, &pa))
			fatal("ibv_query_port %d failed", port);
		if (pa.state == IBV_PORT_ACTIVE)
			return pa;
		if (i >= 100)
			fatal("%s port %d is not ACTIVE", ibv_get_device_name(ctx->device), port);
		usleep(100000);
	}
}

inline bool gid_is_v4mapped(const uint8_t *g)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	return !std::memcmp(g, prefix, 12);
}

inline std::string gid_str(const uint8_t *g)
{
	char buf[INET6_ADDRSTRLEN];
	inet_ntop(AF_INET6, g, buf, sizeof(buf));
	return buf;
}

/* The first RoCE v2 GID of an IPv4 (or with @ipv6, a global IPv6) address. */
inline int pick_gid(ibv_context *ctx, int port, int gid_tbl_len, bool ipv6)
{
	for (int i = 0; i < gid_tbl_len; i++) {
		struct ibv_gid_entry e;
		if (ibv_query_gid_ex(ctx, (uint32_t)port, (uint32_t)i, &e, 0))
			continue;
		if (e.gid_type != IBV_GID_TYPE_ROCE_V2)
			continue;
		const uint8_t *g = e.gid.raw;
		if (std::all_of(g, g + 16, [](uint8_t b) { return b == 0; }))
			continue;
		bool mapped = gid_is_v4mapped(g), linklocal = g[0] == 0xfe && (g[1] & 0xc0) == 0x80;
		if (ipv6 ? (!mapped && !linklocal) : mapped)
			return i;
	}
	fatal("%s port %d: no RoCE v2 GID with an %s address", ibv_get_device_name(ctx->device),
	      port, ipv6 ? "IPv6" : "IPv4");
}

inline int mtu_bytes(enum ibv_mtu m)
{
	return 128 << (int)m;
}

/* ------------------------------------------------------------------ */
/* RC QP */

inline const char *qp_state_str(int s)
{
	static const char *const names[] = {"RESET", "INIT", "RTR", "RTS",
					    "SQD",   "SQE",  "ERR", "UNKNOWN"};
	return s >= 0 && s <= IBV_QPS_UNKNOWN ? names[s] : "?";
}

inline int qp_state(ibv_qp *qp)
{
	ibv_qp_attr a{};
	ibv_qp_init_attr ia{};
	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		fatal("ibv_query_qp: %s", std::strerror(errno));
	return a.qp_state;
}

/* Where the other end of an RC connection is and how to reach it. */
struct RcPath {
	int port = 1;
	int sgid_index = 0;
	uint8_t dgid[16] = {};
	uint32_t dest_qpn = 0;
	uint32_t rq_psn = 0; /* the peer's first PSN */
	uint32_t sq_psn = 0; /* ours */
	enum ibv_mtu mtu = IBV_MTU_1024;
	unsigned access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	uint8_t max_dest_rd_atomic = 16;
	uint8_t max_rd_atomic = 16;
	uint8_t min_rnr_timer = 12; /* 0.64 ms */
	uint8_t timeout = 14;	    /* 67 ms */
	uint8_t retry_cnt = 7;
	uint8_t rnr_retry = 7;
};

/* RESET -> INIT -> RTR -> RTS; 0 or the failing modify's errno. */
inline int rc_connect(ibv_qp *qp, const RcPath &p)
{
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.port_num = (uint8_t)p.port;
	a.qp_access_flags = p.access;
	if (int e = ibv_modify_qp(
		qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return e;
	a = {};
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = p.mtu;
	a.dest_qp_num = p.dest_qpn;
	a.rq_psn = p.rq_psn;
	a.max_dest_rd_atomic = p.max_dest_rd_atomic;
	a.min_rnr_timer = p.min_rnr_timer;
	a.ah_attr.is_global = 1;
	std::memcpy(a.ah_attr.grh.dgid.raw, p.dgid, 16);
	a.ah_attr.grh.sgid_index = (uint8_t)p.sgid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = (uint8_t)p.port;
	if (int e =
		ibv_modify_qp(qp, &a,
			      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return e;
	a = {};
	a.qp_state = IBV_QPS_RTS;
	a.timeout = p.timeout;
	a.retry_cnt = p.retry_cnt;
	a.rnr_retry = p.rnr_retry;
	a.sq_psn = p.sq_psn;
	a.max_rd_atomic = p.max_rd_atomic;
	return ibv_modify_qp(qp, &a,
			     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				 IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* ------------------------------------------------------------------ */
/* Keyed byte patterns: byte @pos of stream @key */

constexpr uint64_t GAMMA = 0x9e3779b97f4a7c15ULL;

inline uint64_t fmix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

inline uint8_t stream_byte(uint64_t key, uint64_t pos)
{
	return (uint8_t)(fmix(key + ((pos >> 3) + 1) * GAMMA) >> (8 * (pos & 7)));
}

inline void fill_stream(uint8_t *dst, uint64_t key, uint64_t pos, size_t n)
{
	while (n && (pos & 7)) {
		*dst++ = stream_byte(key, pos++);
		n--;
	}
	for (; n >= 8; n -= 8, pos += 8, dst += 8) {
		uint64_t w = htole64(fmix(key + ((pos >> 3) + 1) * GAMMA));
		std::memcpy(dst, &w, 8);
	}
	while (n) {
		*dst++ = stream_byte(key, pos++);
		n--;
	}
}

/* Bytes of @p[0..n) that differ from the stream at @pos; first in *@first. */
inline uint64_t check_stream(const uint8_t *p, uint64_t key, uint64_t pos, size_t n, size_t *first)
{
	uint8_t buf[4096];
	uint64_t bad = 0;

	for (size_t done = 0; done < n;) {
		size_t k = std::min(sizeof(buf), n - done);
		fill_stream(buf, key, pos + done, k);
		if (std::memcmp(buf, p + done, k)) {
			for (size_t i = 0; i < k; i++) {
				if (buf[i] != p[done + i]) {
					if (!bad)
						*first = done + i;
					bad++;
				}
			}
		}
		done += k;
	}
	return bad;
}

} // namespace srtest

#endif
