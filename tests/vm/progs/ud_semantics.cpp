// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrnic-udsem: UD semantics on one RDMA device, both QPs in this
 * process (the loopback path), over an IPv4 or (-6) IPv6 GID.  Used by
 * tests/vm/roce_ud_semantics.sh.  Public verbs API only.
 *
 *   softrnic-udsem -d DEV [-6] [--timeout S] [--gone IP --unroute CMD]
 *
 * Cases, each on fresh QPs:
 *  grh: SEND_WITH_IMM with SOLICITED: byte_len is 40 + payload, wc_flags
 *   GRH and WITH_IMM, imm_data, src_qp, the payload after the GRH area,
 *   and the GRH area as the RoCEv2 annex lays it out: IPv6 header (version
 *   6, payload length, next header UDP, hop limit, source and destination
 *   GIDs) or 20 zero bytes and an IPv4 header with a valid checksum;
 *   ibv_init_ah_from_wc() turns the completion into a working reply AH.
 *  zero: a zero-length SEND arrives as 40 bytes.
 *  qkey: a SEND with a wrong Q_Key is dropped (no completion, the QP
 *   stays RTS), the next one with the right Q_Key arrives; a WR Q_Key with
 *   the high bit set sends the QP's own Q_Key.
 *  short: a receive buffer shorter than GRH area + payload completes with
 *   IBV_WC_LOC_LEN_ERR.
 *  mtu: a SEND longer than the port's active MTU completes with
 *   IBV_WC_LOC_LEN_ERR and nothing arrives; exactly the MTU arrives.
 *  srq: a UD QP on an SRQ receives into it.
 *  sge: a SEND gathered from 3 SGEs lands scattered over 3 SGEs.
 *  many: 200 datagrams in one go, every one delivered intact.
 *  noroute: ibv_create_ah() to a GID with no route (TEST-NET-1 /
 *   2001:db8::/32) fails with a clear errno (ib_core says ETIMEDOUT)
 *   within 5 s.
 *  noneigh: an AH to an on-link GID nobody answers for (10.0.0.77 /
 *   fd00::77) either fails to be created with a clear errno, or sends on
 *   it complete (the datagrams are lost in the neighbour layer).
 *  gone (with --gone IP --unroute CMD): an AH to IP, which has a route
 *   and a neighbour entry, sends; then CMD (run with system()) takes the
 *   route away, and 10 more sends on the same AH all complete with
 *   success: the datagrams are dropped and counted (tx_drop_no_route).
 *
 * Output: one line per case, "udsem: case NAME ok" or "... FAILED: why",
 * and last "udsem: N cases ok, N failed".  Exit 0 only if all passed.
 */
#include <arpa/inet.h>
#include <cinttypes>
#include <functional>
#include <getopt.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <string>
#include <vector>

#include "common.h"

using namespace srtest;

namespace
{

constexpr uint32_t QKEY = 0x11111111;
constexpr size_t GRH = 40;
constexpr size_t BUF = 8192;

using AhPtr = std::unique_ptr<ibv_ah, VerbsDeleter<ibv_destroy_ah>>;
using SrqPtr = std::unique_ptr<ibv_srq, VerbsDeleter<ibv_destroy_srq>>;

struct CaseFailed {
	std::string why;
};

[[noreturn]] void check_failed(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
[[noreturn]] void check_failed(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	std::vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	throw CaseFailed{buf};
}

struct Env {
	ContextPtr ctx;
	PdPtr pd;
	int gid_index = 0;
	ibv_gid gid{};
	int mtu = 0;
	std::vector<uint8_t> mem;
	MrPtr mr;
	bool ipv6 = false;
	std::string gone_ip, unroute_cmd;
};

Env env;

/* One UD QP with its own CQ; receive buffers are slices of env.mem. */
struct Ud {
	CqPtr cq;
	SrqPtr srq;
	QpPtr qp;
};

Ud make_ud(bool with_srq = false)
{
	Ud u;
	u.cq.reset(ibv_create_cq(env.ctx.get(), 512, nullptr, nullptr, 0));
	if (!u.cq)
		fatal("ibv_create_cq: %s", std::strerror(errno));
	if (with_srq) {
		ibv_srq_init_attr sa{};
		sa.attr.max_wr = 64;
		sa.attr.max_sge = 4;
		u.srq.reset(ibv_create_srq(env.pd.get(), &sa));
		if (!u.srq)
			fatal("ibv_create_srq: %s", std::strerror(errno));
	}
	ibv_qp_init_attr ia{};
	ia.send_cq = u.cq.get();
	ia.recv_cq = u.cq.get();
	ia.srq = u.srq.get();
	ia.qp_type = IBV_QPT_UD;
	ia.cap.max_send_wr = 256;
	ia.cap.max_recv_wr = 256;
	ia.cap.max_send_sge = 4;
	ia.cap.max_recv_sge = 4;
	u.qp.reset(ibv_create_qp(env.pd.get(), &ia));
	if (!u.qp)
		fatal("ibv_create_qp(UD): %s", std::strerror(errno));
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = QKEY;
	if (int e = ibv_modify_qp(u.qp.get(), &a,
				  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		fatal("UD QP to INIT: %s", std::strerror(e));
	a = {};
	a.qp_state = IBV_QPS_RTR;
	if (int e = ibv_modify_qp(u.qp.get(), &a, IBV_QP_STATE))
		fatal("UD QP to RTR: %s", std::strerror(e));
	a = {};
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x123;
	if (int e = ibv_modify_qp(u.qp.get(), &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		fatal("UD QP to RTS: %s", std::strerror(e));
	return u;
}

ibv_ah_attr ah_attr(const ibv_gid &dgid)
{
	ibv_ah_attr aa{};
	aa.is_global = 1;
	aa.grh.dgid = dgid;
	aa.grh.sgid_index = (uint8_t)env.gid_index;
	aa.grh.hop_limit = 64;
	aa.port_num = 1;
	return aa;
}

AhPtr make_ah(const ibv_gid &dgid)
{
	ibv_ah_attr aa = ah_attr(dgid);
	AhPtr ah(ibv_create_ah(env.pd.get(), &aa));
	if (!ah)
		fatal("ibv_create_ah: %s", std::strerror(errno));
	return ah;
}

uint8_t *at(size_t off)
{
	return env.mem.data() + off;
}

void post_recv(ibv_qp *qp, ibv_srq *srq, uint64_t wr_id, std::vector<ibv_sge> sges)
{
	ibv_recv_wr wr{}, *bad;
	wr.wr_id = wr_id;
	wr.sg_list = sges.data();
	wr.num_sge = (int)sges.size();
	int e = srq ? ibv_post_srq_recv(srq, &wr, &bad) : ibv_post_recv(qp, &wr, &bad);
	if (e)
		fatal("post_recv: %s", std::strerror(e));
}

ibv_sge sge(size_t off, uint32_t len)
{
	return ibv_sge{(uint64_t)(uintptr_t)at(off), len, env.mr->lkey};
}

void post_send(ibv_qp *qp, ibv_ah *ah, uint32_t qpn, uint32_t qkey, std::vector<ibv_sge> sges,
	       uint64_t wr_id, bool imm = false, uint32_t imm_data = 0, unsigned flags = 0)
{
	ibv_send_wr wr{}, *bad;
	wr.wr_id = wr_id;
	wr.sg_list = sges.data();
	wr.num_sge = (int)sges.size();
	wr.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
	wr.imm_data = htonl(imm_data);
	wr.send_flags = IBV_SEND_SIGNALED | flags;
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = qkey;
	if (int e = ibv_post_send(qp, &wr, &bad))
		check_failed("ibv_post_send: %s", std::strerror(e));
}

/* Completions of @cq until @n arrived or @ms passed. */
std::vector<ibv_wc> poll_n(ibv_cq *cq, size_t n, int ms)
{
	std::vector<ibv_wc> out;
	double end = now_s() + ms / 1000.0;
	while (out.size() < n && now_s() < end) {
		ibv_wc wc[16];
		int k = ibv_poll_cq(cq, 16, wc);
		if (k < 0)
			check_failed("ibv_poll_cq failed");
		out.insert(out.end(), wc, wc + k);
		if (!k)
			usleep(200);
	}
	return out;
}

/* The one completion of @cq for @wr_id within the timeout. */
ibv_wc wait_wc(ibv_cq *cq, uint64_t wr_id, const char *what)
{
	auto wcs = poll_n(cq, 1, 5000);
	if (wcs.empty())
		check_failed("no completion for %s", what);
	if (wcs[0].wr_id != wr_id)
		check_failed("%s: completion for wr_id %" PRIu64 ", expected %" PRIu64, what,
			     wcs[0].wr_id, wr_id);
	return wcs[0];
}

void expect_status(const ibv_wc &wc, ibv_wc_status want, const char *what)
{
	if (wc.status != want)
		check_failed("%s: status %s, expected %s", what, ibv_wc_status_str(wc.status),
			     ibv_wc_status_str(want));
}

/* Completions split by opcode class: sends and receives share one CQ. */
struct Split {
	std::vector<ibv_wc> send, recv;
};

Split split(const std::vector<ibv_wc> &wcs)
{
	Split s;
	for (const auto &wc : wcs)
		(wc.opcode & IBV_WC_RECV ? s.recv : s.send).push_back(wc);
	return s;
}

/* --------------------------------------------------------------- cases */

void case_grh()
{
	Ud a = make_ud(), b = make_ud();
	AhPtr ah = make_ah(env.gid);
	constexpr uint32_t len = 300;
	fill_stream(at(0), 1, 0, len);
	std::memset(at(4096), 0xee, GRH + len + 16);
	post_recv(b.qp.get(), nullptr, 7, {sge(4096, GRH + len + 16)});
	post_send(a.qp.get(), ah.get(), b.qp->qp_num, QKEY, {sge(0, len)}, 1, true, 0xdeadbeef,
		  IBV_SEND_SOLICITED);
	expect_status(wait_wc(a.cq.get(), 1, "send"), IBV_WC_SUCCESS, "send");
	ibv_wc wc = wait_wc(b.cq.get(), 7, "receive");
	expect_status(wc, IBV_WC_SUCCESS, "receive");
	if (wc.opcode != IBV_WC_RECV)
		check_failed("receive opcode %d", wc.opcode);
	if (wc.byte_len != GRH + len)
		check_failed("byte_len %u, expected %zu", wc.byte_len, GRH + len);
	if (!(wc.wc_flags & IBV_WC_GRH) || !(wc.wc_flags & IBV_WC_WITH_IMM))
		check_failed("wc_flags 0x%x lack GRH or WITH_IMM", wc.wc_flags);
	if (ntohl(wc.imm_data) != 0xdeadbeef)
		check_failed("imm_data 0x%x", ntohl(wc.imm_data));
	if (wc.src_qp != a.qp->qp_num)
		check_failed("src_qp %u, expected %u", wc.src_qp, a.qp->qp_num);
	if (wc.qp_num != b.qp->qp_num)
		check_failed("qp_num %u, expected %u", wc.qp_num, b.qp->qp_num);
	size_t first = 0;
	if (check_stream(at(4096 + GRH), 1, 0, len, &first))
		check_failed("payload differs at byte %zu", first);
	if (*at(4096 + GRH + len) != 0xee)
		check_failed("bytes after the payload were written");

	const uint8_t *g = at(4096);
	if (env.ipv6) {
		ip6_hdr h;
		std::memcpy(&h, g, sizeof(h));
		if ((ntohl(h.ip6_flow) >> 28) != 6)
			check_failed("GRH: IP version %u, expected 6", ntohl(h.ip6_flow) >> 28);
		if (h.ip6_nxt != IPPROTO_UDP)
			check_failed("GRH: next header %u", h.ip6_nxt);
		/* UDP (8) + BTH (12) + DETH (8) + ImmDt (4) + payload + ICRC (4) */
		if (ntohs(h.ip6_plen) != 8 + 12 + 8 + 4 + len + 4)
			check_failed("GRH: payload length %u", ntohs(h.ip6_plen));
		if (std::memcmp(&h.ip6_src, env.gid.raw, 16) ||
		    std::memcmp(&h.ip6_dst, env.gid.raw, 16))
			check_failed("GRH: addresses are not the GIDs");
	} else {
		static const uint8_t zero[20] = {};
		if (std::memcmp(g, zero, 20))
			check_failed("GRH: first 20 bytes not zero for IPv4");
		iphdr h;
		std::memcpy(&h, g + 20, sizeof(h));
		if (h.version != 4 || h.ihl != 5 || h.protocol != IPPROTO_UDP)
			check_failed("GRH: not an IPv4/UDP header (version %u ihl %u proto %u)",
				     h.version, h.ihl, h.protocol);
		if (ntohs(h.tot_len) != 20 + 8 + 12 + 8 + 4 + len + 4)
			check_failed("GRH: total length %u", ntohs(h.tot_len));
		if (std::memcmp(&h.saddr, env.gid.raw + 12, 4) ||
		    std::memcmp(&h.daddr, env.gid.raw + 12, 4))
			check_failed("GRH: addresses are not the GIDs");
		uint32_t sum = 0;
		for (int i = 0; i < 10; i++)
			sum += (uint32_t)(g[20 + 2 * i] << 8 | g[20 + 2 * i + 1]);
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		if (sum != 0xffff)
			check_failed("GRH: IPv4 header checksum wrong");
	}

	/* Answer the datagram with an AH made from its completion. */
	ibv_ah_attr aa{};
	if (ibv_init_ah_from_wc(env.ctx.get(), 1, &wc, reinterpret_cast<ibv_grh *>(at(4096)), &aa))
		check_failed("ibv_init_ah_from_wc: %s", std::strerror(errno));
	if (std::memcmp(aa.grh.dgid.raw, env.gid.raw, 16))
		check_failed("ibv_init_ah_from_wc: dgid %s", gid_str(aa.grh.dgid.raw).c_str());
	AhPtr reply(ibv_create_ah(env.pd.get(), &aa));
	if (!reply)
		check_failed("ibv_create_ah from wc: %s", std::strerror(errno));
	post_recv(a.qp.get(), nullptr, 8, {sge(4096, GRH + 64)});
	post_send(b.qp.get(), reply.get(), wc.src_qp, QKEY, {sge(0, 64)}, 2);
	expect_status(wait_wc(b.cq.get(), 2, "reply send"), IBV_WC_SUCCESS, "reply send");
	expect_status(wait_wc(a.cq.get(), 8, "reply"), IBV_WC_SUCCESS, "reply");
}

void case_zero()
{
	Ud a = make_ud(), b = make_ud();
	AhPtr ah = make_ah(env.gid);
	post_recv(b.qp.get(), nullptr, 7, {sge(4096, 128)});
	post_send(a.qp.get(), ah.get(), b.qp->qp_num, QKEY, {}, 1);
	expect_status(wait_wc(a.cq.get(), 1, "send"), IBV_WC_SUCCESS, "send");
	ibv_wc wc = wait_wc(b.cq.get(), 7, "receive");
	expect_status(wc, IBV_WC_SUCCESS, "receive");
	if (wc.byte_len != GRH)
		check_failed("byte_len %u, expected %zu", wc.byte_len, GRH);
}

void case_qkey()
{
	Ud a = make_ud(), b = make_ud();
	AhPtr ah = make_ah(env.gid);
	post_recv(b.qp.get(), nullptr, 7, {sge(4096, GRH + 64)});
	post_send(a.qp.get(), ah.get(), b.qp->qp_num, QKEY + 1, {sge(0, 64)}, 1);
	expect_status(wait_wc(a.cq.get(), 1, "send"), IBV_WC_SUCCESS, "send");
	if (!poll_n(b.cq.get(), 1, 300).empty())
		check_failed("a datagram with the wrong Q_Key was delivered");
	if (qp_state(b.qp.get()) != IBV_QPS_RTS)
		check_failed("receiver left RTS");
	post_send(a.qp.get(), ah.get(), b.qp->qp_num, QKEY, {sge(0, 64)}, 2);
	expect_status(wait_wc(a.cq.get(), 2, "send"), IBV_WC_SUCCESS, "send");
	expect_status(wait_wc(b.cq.get(), 7, "receive"), IBV_WC_SUCCESS, "receive");

	/* Controlled: the WR's Q_Key has the high bit; the QP's (QKEY) goes. */
	post_recv(b.qp.get(), nullptr, 8, {sge(4096, GRH + 64)});
	post_send(a.qp.get(), ah.get(), b.qp->qp_num, 0x80000000u | 0x1234, {sge(0, 64)}, 3);
	expect_status(wait_wc(a.cq.get(), 3, "send"), IBV_WC_SUCCESS, "controlled send");
	expect_status(wait_wc(b.cq.get(), 8, "receive"), IBV_WC_SUCCESS,
		      "receive of a controlled-Q_Key send");
}

void case_short()
{
	Ud a = make_ud(), b = make_ud();
	AhPtr ah = make_ah(env.gid);
	post_recv(b.qp.get(), nullptr, 7, {sge(4096, GRH + 10)});
	post_send(a.qp.get(), ah.get(), b.qp->qp_num, QKEY, {sge(0, 100)}, 1);
	expect_status(wait_wc(a.cq.get(), 1, "send"), IBV_WC_SUCCESS, "send");
	expect_status(wait_wc(b.cq.get(), 7, "receive"), IBV_WC_LOC_LEN_ERR, "short receive");
}

void case_mtu()
{
	Ud a = make_ud(), b = make_ud();
	AhPtr ah = make_ah(env.gid);
	post_recv(b.qp.get(), nullptr, 7, {sge(0, (uint32_t)(GRH + env.mtu))});
	post_send(a.qp.get(), ah.get(), b.qp->qp_num, QKEY, {sge(4096, (uint32_t)env.mtu)}, 1);
	expect_status(wait_wc(a.cq.get(), 1, "send"), IBV_WC_SUCCESS, "MTU-sized send");
	ibv_wc wc = wait_wc(b.cq.get(), 7, "receive");
	expect_status(wc, IBV_WC_SUCCESS, "MTU-sized receive");
	if (wc.byte_len != GRH + env.mtu)
		check_failed("byte_len %u", wc.byte_len);

	Ud c = make_ud();
	post_recv(b.qp.get(), nullptr, 8, {sge(0, (uint32_t)(GRH + env.mtu + 8))});
	post_send(c.qp.get(), ah.get(), b.qp->qp_num, QKEY, {sge(4096, (uint32_t)env.mtu + 1)}, 2);
	expect_status(wait_wc(c.cq.get(), 2, "send"), IBV_WC_LOC_LEN_ERR,
		      "send longer than the MTU");
	if (!poll_n(b.cq.get(), 1, 300).empty())
		check_failed("a datagram longer than the MTU was delivered");
}

void case_srq()
{
	Ud a = make_ud(), b = make_ud(true);
	AhPtr ah = make_ah(env.gid);
	for (int i = 0; i < 4; i++)
		post_recv(nullptr, b.srq.get(), 10 + i, {sge(4096 + i * 512, 512)});
	for (int i = 0; i < 4; i++) {
		fill_stream(at(i * 256), 100 + i, 0, 200);
		post_send(a.qp.get(), ah.get(), b.qp->qp_num, QKEY, {sge(i * 256, 200)}, i);
	}
	auto r = split(poll_n(b.cq.get(), 4, 5000));
	if (r.recv.size() != 4)
		check_failed("%zu of 4 receives on the SRQ", r.recv.size());
	for (const auto &wc : r.recv) {
		expect_status(wc, IBV_WC_SUCCESS, "SRQ receive");
		int slot = (int)wc.wr_id - 10;
		/* datagrams arrive in order here: receive i got send i */
		size_t first;
		if (check_stream(at(4096 + slot * 512 + GRH), 100 + slot, 0, 200, &first))
			check_failed("SRQ receive %d differs at byte %zu", slot, first);
	}
}

void case_sge()
{
	Ud a = make_ud(), b = make_ud();
	AhPtr ah = make_ah(env.gid);
	fill_stream(at(0), 5, 0, 100);
	fill_stream(at(1000), 5, 100, 7);
	fill_stream(at(2000), 5, 107, 300);
	post_recv(b.qp.get(), nullptr, 7, {sge(4096, 30), sge(5000, 110), sge(6000, 400)});
	post_send(a.qp.get(), ah.get(), b.qp->qp_num, QKEY,
		  {sge(0, 100), sge(1000, 7), sge(2000, 300)}, 1);
	expect_status(wait_wc(a.cq.get(), 1, "send"), IBV_WC_SUCCESS, "send");
	ibv_wc wc = wait_wc(b.cq.get(), 7, "receive");
	expect_status(wc, IBV_WC_SUCCESS, "receive");
	/* GRH 30 + 10 in the first two SGEs, then payload 0..99 and 100.. */
	size_t first;
	if (check_stream(at(5000 + 10), 5, 0, 100, &first) ||
	    check_stream(at(6000), 5, 100, 307, &first))
		check_failed("scattered payload differs");
}

void case_many()
{
	Ud a = make_ud(), b = make_ud();
	AhPtr ah = make_ah(env.gid);
	constexpr int N = 200;
	constexpr uint32_t len = 16;
	for (int i = 0; i < N; i++)
		post_recv(b.qp.get(), nullptr, 1000 + i, {sge(4096 + i * 64, 64)});
	for (int i = 0; i < N; i++) {
		fill_stream(at(i * len), 7000 + i, 0, len);
		post_send(a.qp.get(), ah.get(), b.qp->qp_num, QKEY, {sge(i * len, len)}, i);
	}
	auto s = poll_n(a.cq.get(), N, 10000);
	if (s.size() != N)
		check_failed("%zu of %d sends completed", s.size(), N);
	auto r = poll_n(b.cq.get(), N, 10000);
	if (r.size() != N)
		check_failed("%zu of %d datagrams arrived", r.size(), N);
	for (const auto &wc : r) {
		expect_status(wc, IBV_WC_SUCCESS, "receive");
		int i = (int)wc.wr_id - 1000;
		size_t first;
		/* one CPU sends in order, so receive i carries send i */
		if (check_stream(at(4096 + i * 64 + GRH), 7000 + i, 0, len, &first))
			check_failed("datagram %d differs", i);
	}
}

/* The GID of IP address @ip (IPv4 as v4-mapped), in env's IP version. */
ibv_gid ip_gid(const char *ip)
{
	ibv_gid g{};
	if (env.ipv6) {
		if (inet_pton(AF_INET6, ip, g.raw) != 1)
			fatal("bad IPv6 address %s", ip);
	} else {
		g.raw[10] = g.raw[11] = 0xff;
		if (inet_pton(AF_INET, ip, g.raw + 12) != 1)
			fatal("bad IPv4 address %s", ip);
	}
	return g;
}

void case_noroute()
{
	ibv_ah_attr aa = ah_attr(ip_gid(env.ipv6 ? "2001:db8::1" : "192.0.2.1"));
	double t0 = now_s();
	errno = 0;
	AhPtr ah(ibv_create_ah(env.pd.get(), &aa));
	int e = errno;
	if (ah)
		check_failed("ibv_create_ah to a GID without a route succeeded");
	/* ib_core's ib_resolve_eth_dmac answers ETIMEDOUT, for rxe as for us */
	if (e != ENETUNREACH && e != EHOSTUNREACH && e != ETIMEDOUT)
		check_failed("ibv_create_ah without a route: errno %d (%s)", e, std::strerror(e));
	if (now_s() - t0 > 5)
		check_failed("ibv_create_ah without a route took %.1f s", now_s() - t0);
	msg("noroute: %s", std::strerror(e));
}

void case_noneigh()
{
	Ud a = make_ud();
	ibv_ah_attr aa = ah_attr(ip_gid(env.ipv6 ? "fd00::77" : "10.0.0.77"));
	for (int attempt = 0; attempt < 2; attempt++) {
		errno = 0;
		AhPtr ah(ibv_create_ah(env.pd.get(), &aa));
		if (!ah) {
			int e = errno;
			if (!e || e == ENOMEM || e == EFAULT)
				check_failed(
				    "ibv_create_ah to an unresolved neighbour: errno %d (%s)", e,
				    std::strerror(e));
			msg("noneigh: ibv_create_ah fails: %s", std::strerror(e));
			continue;
		}
		post_send(a.qp.get(), ah.get(), 0x123, QKEY, {sge(0, 64)}, 1);
		ibv_wc wc = wait_wc(a.cq.get(), 1, "send to an unresolved neighbour");
		msg("noneigh: AH created, send completes: %s", ibv_wc_status_str(wc.status));
	}
}

void case_gone()
{
	Ud a = make_ud();
	AhPtr ah = make_ah(ip_gid(env.gone_ip.c_str()));
	post_send(a.qp.get(), ah.get(), 0x123, QKEY, {sge(0, 64)}, 1);
	expect_status(wait_wc(a.cq.get(), 1, "send while routed"), IBV_WC_SUCCESS,
		      "send while routed");
	if (int rc = std::system(env.unroute_cmd.c_str()))
		check_failed("'%s': status %d", env.unroute_cmd.c_str(), rc);
	constexpr int N = 10;
	for (int i = 0; i < N; i++)
		post_send(a.qp.get(), ah.get(), 0x123, QKEY, {sge(0, 64)}, 100 + i);
	auto s = poll_n(a.cq.get(), N, 5000);
	if (s.size() != N)
		check_failed("%zu of %d sends without a route completed", s.size(), N);
	for (const auto &wc : s)
		expect_status(wc, IBV_WC_SUCCESS, "send without a route");
}

} // namespace

int main(int argc, char **argv)
{
	std::string dev;
	double timeout = 120;
	static const option opts[] = {
	    {"dev", required_argument, nullptr, 'd'},	  {"ipv6", no_argument, nullptr, '6'},
	    {"timeout", required_argument, nullptr, 't'}, {"gone", required_argument, nullptr, 'g'},
	    {"unroute", required_argument, nullptr, 'u'}, {}};
	for (int c; (c = getopt_long(argc, argv, "d:6t:g:u:", opts, nullptr)) != -1;) {
		switch (c) {
		case 'd':
			dev = optarg;
			break;
		case '6':
			env.ipv6 = true;
			break;
		case 't':
			timeout = std::atof(optarg);
			break;
		case 'g':
			env.gone_ip = optarg;
			break;
		case 'u':
			env.unroute_cmd = optarg;
			break;
		default:
			fatal("usage: softrnic-udsem -d DEV [-6] [--timeout S] [--gone IP "
			      "--unroute CMD]");
		}
	}
	if (dev.empty())
		fatal("usage: softrnic-udsem -d DEV [-6] [--timeout S] [--gone IP --unroute CMD]");
	log_prefix = "udsem";
	deadline.set(timeout);

	env.ctx = open_device(dev);
	ibv_port_attr pa = wait_port_active(env.ctx.get(), 1);
	env.mtu = mtu_bytes(pa.active_mtu);
	env.gid_index = pick_gid(env.ctx.get(), 1, pa.gid_tbl_len, env.ipv6);
	if (ibv_query_gid(env.ctx.get(), 1, env.gid_index, &env.gid))
		fatal("ibv_query_gid");
	env.pd.reset(ibv_alloc_pd(env.ctx.get()));
	if (!env.pd)
		fatal("ibv_alloc_pd: %s", std::strerror(errno));
	env.mem.assign(64 * 1024, 0);
	env.mr.reset(
	    ibv_reg_mr(env.pd.get(), env.mem.data(), env.mem.size(), IBV_ACCESS_LOCAL_WRITE));
	if (!env.mr)
		fatal("ibv_reg_mr: %s", std::strerror(errno));
	msg("%s GID %d %s, MTU %d", dev.c_str(), env.gid_index, gid_str(env.gid.raw).c_str(),
	    env.mtu);

	const std::pair<const char *, std::function<void()>> cases[] = {
	    {"grh", case_grh},	       {"zero", case_zero}, {"qkey", case_qkey},
	    {"short", case_short},     {"mtu", case_mtu},   {"srq", case_srq},
	    {"sge", case_sge},	       {"many", case_many}, {"noroute", case_noroute},
	    {"noneigh", case_noneigh},
	};
	std::vector<std::pair<const char *, std::function<void()>>> run(std::begin(cases),
									std::end(cases));
	if (!env.gone_ip.empty())
		run.emplace_back("gone", case_gone);
	int ok = 0, failed = 0;
	for (const auto &[name, fn] : run) {
		try {
			fn();
			msg("case %s ok", name);
			ok++;
		} catch (const CaseFailed &f) {
			msg("case %s FAILED: %s", name, f.why.c_str());
			failed++;
		}
	}
	msg("%d cases ok, %d failed", ok, failed);
	return failed ? 1 : 0;
}
