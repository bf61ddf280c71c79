// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrnic-inject: crafted RoCEv2 packets at a live RC QP, for
 * tests/vm/roce_inject.sh.
 *
 *   softrnic-inject --dst ADDR --qpn N [--epsn PSN] [--mtu N] [options] [CATEGORY...]
 *
 * Packets go out of a raw IP socket (IPPROTO_RAW: IPv4 with IP_HDRINCL, or
 * IPv6 with the header included), so every byte the ICRC covers is ours:
 * the IPv4 Identification (the kernel fills it in only when it is 0), the
 * addresses, the UDP ports.  The kernel only fills in the IPv4 header
 * checksum and total length, which the ICRC masks or we already set.
 * Transport headers come from kernel/proto's roce_build_hdrs(), the ICRC
 * from roce_icrc_fill(); the UDP checksum is computed (IPv4 and IPv6).
 *
 * The source address is the one the kernel would use to reach --dst (or
 * --src), i.e. the address of the QP's peer when the injector runs where
 * the peer does: the transport drops packets from anyone else.  --epsn is
 * the target's expected PSN (its rq_psn when nothing has been sent yet):
 * it places "duplicate" and "ahead" PSNs; the categories that need it are
 * skipped without it.
 *
 * Categories (all but `fatal` by default), and what a transport that
 * follows IBTA and Documentation/wire-roce.md does with them:
 *
 *   empty          a UDP datagram with no payload (not delivered to a
 *                  tunnel socket's encap_rcv by Linux: no expectation)
 *   truncated      every UDP payload length from 1 to 15 (shorter than
 *                  BTH + ICRC), and headers cut inside the extension
 *                  headers with a valid ICRC
 *   bad_icrc       ICRC bytes, transport header, payload, IP ID or UDP
 *                  port changed after the ICRC was computed; no ICRC
 *   opcode         every reserved opcode of RC, UD and the CNP range
 *   transport      every opcode of UC, RD, XRC and the vendor ranges
 *   tver           TVer 1..15
 *   pad            PadCnt on FIRST/MIDDLE, on opcodes without payload, and
 *                  larger than the payload
 *   length         length not a multiple of 4, payload on opcodes without
 *                  one, ATOMIC WRITE payload other than 8 bytes
 *   unknown_qp     well-formed requests and an ACK to QPNs that do not
 *                  exist (or are not RC: QP1)
 *   bad_pkey       well-formed requests and an ACK whose P_Key matches
 *                  no key of ours (the default partition's 0xffff), the
 *                  SENDs at the expected PSN: none may be executed
 *   bad_address    well-formed packets from an address that is not the
 *                  QP's peer (--spoof, default: the source with bit 7 of
 *                  its last byte flipped, on the same subnet)
 *   out_of_window  responses (ACK, NAKs, READ responses, atomic ACK) to
 *                  the idle requester, READ requests at duplicate PSNs
 *                  that match no READ the responder executed
 *   duplicate      SEND/WRITE packets at PSNs behind the expected one (up
 *                  to the 2^23 edge), never executed again; one asks for
 *                  an ACK
 *   ahead          PSNs ahead of the expected one: one sequence NAK, the
 *                  packets are not executed
 *   oversized      payload above the path MTU (--mtu) at duplicate PSNs,
 *                  and a READ response above it to the idle requester
 *   valid          well-formed duplicate requests whose ICRC-masked fields
 *                  (TTL, TOS/ECN, IPv6 flow label and traffic class, FECN,
 *                  BECN, UDP checksum) differ from what the ICRC was
 *                  computed over: the control group, accepted by the ICRC
 *                  check and the parser, then dropped as duplicates
 *   random         --random N packets (default 500): random bytes, random
 *                  bytes with a valid ICRC, and mutated valid packets with
 *                  a valid ICRC; never to the target or --avoid-qpn QPNs
 *   ud             UD at the GSI QP: wrong Q_Key or P_Key, above a MAD's
 *                  256 bytes, unknown QPNs, the multicast QPN without a
 *                  group; short, random and CM-class MADs with random
 *                  contents, which ib_mad / ib_cm must discard
 *   fatal          (only when named) a SEND at the expected PSN with a
 *                  payload above the path MTU: Invalid Request NAK, and the
 *                  target QP goes to the error state
 *   write_only_big (only when named, with --va/--rkey) a WRITE ONLY at the
 *                  expected PSN with a payload above the path MTU: Invalid
 *                  Request NAK, the target QP goes to ERR
 *   write_last_big (likewise) a WRITE FIRST, then a LAST above the path MTU
 *   replay_first   (likewise) a READ of 4096 packets at the expected PSN
 *   replay         (after replay_first) 127 zero-length READs, that first
 *                  READ replayed, one more READ: its resource would be the
 *                  replayed one's, still sending: Invalid Request NAK
 *   steer          (only when named) a duplicate WRITE FIRST of a long
 *                  message, then SEND MIDDLE packets with bad ICRCs, from
 *                  a spoofed source and far ahead, and stale READ RESPONSE
 *                  MIDDLE packets: none may wait on the QP's receive
 *                  steering queue (rx_steered stays)
 *   fuzz           (only when named) --fuzz N well-formed packets at the
 *                  target's requester and responder state machines while
 *                  a transfer runs on it: every RC opcode, PSNs at the
 *                  live window edges (--sniff IF follows the pair's
 *                  traffic; --sq-psn, --rqpn), ACK/RNR/NAK syndromes,
 *                  valid (--va, --rkey, --len) and invalid keys and
 *                  lengths; --stale: only PSNs far outside every window.
 *                  Expectation: none (the test checks the transfer and
 *                  the kernel; Documentation/wire-roce.md, "Fuzzing the
 *                  live transport")
 *
 * Output: `inject: CATEGORY N packets` per category, then one line per
 * expected outcome, `expect OUTCOME N`, where OUTCOME is one of truncated,
 * bad_icrc, transport, opcode, tver, pad, length, unknown_qp, bad_pkey,
 * bad_address, out_of_window, bad_qkey, mad_length (drops), ud_recv (delivered to
 * a UD QP; for QP1, to ib_mad), duplicate (duplicate requests, not executed),
 * dup_ack (ACKs for duplicates that asked for one), seq_nak (at least one
 * sequence NAK), nak (Invalid Request NAKs), any_drop (dropped for one of
 * the drop reasons, which one depends on the transport), none.  The test
 * compares them with the device's counters.
 */
#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cinttypes>
#include <csignal>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <getopt.h>
#include <linux/if_packet.h>
#include <map>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/udp.h>
#include <string>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

#include "roce_icrc.h"
#include "roce_parse.h"
#include "roce_psn.h"

namespace
{

[[noreturn]] void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
[[noreturn]] void fatal(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	std::fprintf(stderr, "inject: FATAL: ");
	std::vfprintf(stderr, fmt, ap);
	std::fputc('\n', stderr);
	va_end(ap);
	std::exit(2);
}

int verbose;

/* splitmix64 */
struct Rng {
	uint64_t s;
	explicit Rng(uint64_t seed) : s(seed) {}
	uint64_t next()
	{
		uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		return z ^ (z >> 31);
	}
	uint64_t below(uint64_t n) { return next() % n; }
	uint64_t range(uint64_t lo, uint64_t hi) { return lo + below(hi - lo + 1); }
};

/* ------------------------------------------------------------------ */
/* Addresses and the raw socket */

struct Addr {
	bool v6 = false;
	uint8_t b[16] = {}; /* IPv4 in the first 4 bytes */

	size_t len() const { return v6 ? 16 : 4; }
	std::string str() const
	{
		char buf[INET6_ADDRSTRLEN];
		inet_ntop(v6 ? AF_INET6 : AF_INET, b, buf, sizeof(buf));
		return buf;
	}
};

Addr parse_addr(const char *s)
{
	Addr a;
	if (inet_pton(AF_INET, s, a.b) == 1)
		return a;
	if (inet_pton(AF_INET6, s, a.b) == 1) {
		a.v6 = true;
		return a;
	}
	fatal("not an IP address: %s", s);
}

/* The source address the kernel picks to reach @dst. */
Addr route_source(const Addr &dst)
{
	Addr src;
	src.v6 = dst.v6;
	int fd = socket(dst.v6 ? AF_INET6 : AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		fatal("socket: %s", std::strerror(errno));
	struct sockaddr_storage ss = {};
	socklen_t sl;
	if (dst.v6) {
		auto *a = reinterpret_cast<struct sockaddr_in6 *>(&ss);
		a->sin6_family = AF_INET6;
		a->sin6_port = htons(ROCE_UDP_DPORT);
		std::memcpy(&a->sin6_addr, dst.b, 16);
		sl = sizeof(*a);
	} else {
		auto *a = reinterpret_cast<struct sockaddr_in *>(&ss);
		a->sin_family = AF_INET;
		a->sin_port = htons(ROCE_UDP_DPORT);
		std::memcpy(&a->sin_addr, dst.b, 4);
		sl = sizeof(*a);
	}
	if (connect(fd, reinterpret_cast<struct sockaddr *>(&ss), sl))
		fatal("no route to %s: %s", dst.str().c_str(), std::strerror(errno));
	sl = sizeof(ss);
	getsockname(fd, reinterpret_cast<struct sockaddr *>(&ss), &sl);
	if (dst.v6)
		std::memcpy(src.b, &reinterpret_cast<struct sockaddr_in6 *>(&ss)->sin6_addr, 16);
	else
		std::memcpy(src.b, &reinterpret_cast<struct sockaddr_in *>(&ss)->sin_addr, 4);
	close(fd);
	return src;
}

uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	return sum;
}

/* How one packet is sent. */
struct Send {
	bool icrc = true;	   /* compute the ICRC into the last 4 bytes */
	bool udp_csum = true;	   /* compute the UDP checksum (else 0; IPv4 only) */
	const Addr *src = nullptr; /* override the source address */
	/* applied after the ICRC, before the UDP checksum: (ip header, udp header) */
	std::function<void(uint8_t *, uint8_t *)> after;
};

class Injector
{
public:
	Injector(const Addr &dst, const Addr &src, uint16_t sport, uint64_t seed)
	    : dst_(dst), src_(src), sport_(sport), rng_(seed)
	{
	}
	~Injector()
	{
		if (fd_ >= 0)
			close(fd_);
	}

	void open_socket()
	{
		fd_ = socket(dst_.v6 ? AF_INET6 : AF_INET, SOCK_RAW, IPPROTO_RAW);
		if (fd_ < 0)
			fatal("raw socket: %s (needs CAP_NET_RAW)", std::strerror(errno));
	}

	/*
	 * @roce: BTH .. ICRC (the ICRC's 4 bytes are overwritten if s.icrc).
	 * Returns the IP packet; with --check it is not sent.
	 */
	std::vector<uint8_t> send(const std::vector<uint8_t> &roce, const Send &s = Send())
	{
		size_t l3 = dst_.v6 ? ROCE_IPV6_HDR_LEN : ROCE_IPV4_HDR_LEN;
		size_t udp_len = ROCE_UDP_HDR_LEN + roce.size();
		std::vector<uint8_t> pkt(l3 + udp_len);
		uint8_t *ip = pkt.data(), *udp = ip + l3;
		const Addr &src = s.src ? *s.src : src_;

		if (dst_.v6) {
			ip[0] = 0x60; /* version 6, traffic class 0, flow label 0 */
			ip[4] = (uint8_t)(udp_len >> 8);
			ip[5] = (uint8_t)udp_len;
			ip[6] = IPPROTO_UDP;
			ip[7] = 64;
			std::memcpy(ip + 8, src.b, 16);
			std::memcpy(ip + 24, dst_.b, 16);
		} else {
			uint16_t id = (uint16_t)(1 + rng_.below(0xfffe)); /* 0: the kernel picks */
			ip[0] = 0x45;
			ip[2] = (uint8_t)(pkt.size() >> 8);
			ip[3] = (uint8_t)pkt.size();
			ip[4] = (uint8_t)(id >> 8);
			ip[5] = (uint8_t)id;
			ip[6] = 0x40; /* DF */
			ip[8] = 64;
			ip[9] = IPPROTO_UDP;
			std::memcpy(ip + 12, src.b, 4);
			std::memcpy(ip + 16, dst_.b, 4);
		}
		udp[0] = (uint8_t)(sport_ >> 8);
		udp[1] = (uint8_t)sport_;
		udp[2] = (uint8_t)(ROCE_UDP_DPORT >> 8);
		udp[3] = (uint8_t)ROCE_UDP_DPORT;
		udp[4] = (uint8_t)(udp_len >> 8);
		udp[5] = (uint8_t)udp_len;
		std::memcpy(udp + ROCE_UDP_HDR_LEN, roce.data(), roce.size());
		if (s.icrc && !roce_icrc_fill(ip, l3, dst_.v6, udp, udp_len))
			fatal("packet of %zu bytes too short for an ICRC", roce.size());
		if (s.after)
			s.after(ip, udp);
		if (s.udp_csum || dst_.v6) {
			uint32_t sum = 0;
			uint8_t pl[4] = {0, IPPROTO_UDP, (uint8_t)(udp_len >> 8), (uint8_t)udp_len};
			if (dst_.v6) {
				sum = csum_add(sum, ip + 8, 32);
				uint8_t p6[8] = {
				    0, 0,	   (uint8_t)(udp_len >> 8), (uint8_t)udp_len, 0, 0,
				    0, IPPROTO_UDP};
				sum = csum_add(sum, p6, 8);
			} else {
				sum = csum_add(sum, ip + 12, 8);
				sum = csum_add(sum, pl, 4);
			}
			udp[6] = udp[7] = 0;
			sum = csum_add(sum, udp, udp_len);
			uint16_t c = csum_fold(sum);
			if (!c)
				c = 0xffff;
			udp[6] = (uint8_t)(c >> 8);
			udp[7] = (uint8_t)c;
		}
		if (verbose > 1)
			dump(pkt);
		if (check_only) {
			sent_++;
			return pkt;
		}

		struct sockaddr_storage ss = {};
		socklen_t sl;
		if (dst_.v6) {
			auto *a = reinterpret_cast<struct sockaddr_in6 *>(&ss);
			a->sin6_family = AF_INET6;
			std::memcpy(&a->sin6_addr, dst_.b, 16);
			sl = sizeof(*a);
		} else {
			auto *a = reinterpret_cast<struct sockaddr_in *>(&ss);
			a->sin_family = AF_INET;
			std::memcpy(&a->sin_addr, dst_.b, 4);
			sl = sizeof(*a);
		}
		for (;;) {
			ssize_t n = sendto(fd_, pkt.data(), pkt.size(), 0,
					   reinterpret_cast<struct sockaddr *>(&ss), sl);
			if (n == (ssize_t)pkt.size())
				break;
			if (n < 0 && (errno == ENOBUFS || errno == EAGAIN || errno == EINTR)) {
				usleep(1000);
				continue;
			}
			fatal("sendto %s: %s", dst_.str().c_str(),
			      n < 0 ? std::strerror(errno) : "short write");
		}
		/* pace: a veth delivers into a 1000-packet backlog */
		if (++sent_ % 32 == 0)
			usleep(500);
		return pkt;
	}

	bool check_only = false;

	Rng &rng() { return rng_; }
	const Addr &src() const { return src_; }
	uint64_t sent() const { return sent_; }
	const Addr &dst() const { return dst_; }

private:
	Addr dst_, src_;
	uint16_t sport_;
	Rng rng_;
	int fd_ = -1;
	uint64_t sent_ = 0;

	static void dump(const std::vector<uint8_t> &p)
	{
		for (size_t i = 0; i < p.size(); i++)
			std::fprintf(stderr, "%02x%s", p[i], (i % 32 == 31) ? "\n" : " ");
		std::fprintf(stderr, "\n");
	}
};

/* ------------------------------------------------------------------ */
/* Packets */

/*
 * BTH .. ICRC of a well-formed packet: the headers of @p (p.pad is set to
 * the minimal pad), @payload, the pad and 4 bytes for the ICRC.
 */
std::vector<uint8_t> build(roce_pkt p, const std::vector<uint8_t> &payload)
{
	uint8_t hdr[ROCE_MAX_HDR_LEN];
	p.pad = roce_pad_len((uint32_t)payload.size());
	size_t hl = roce_build_hdrs(hdr, &p);
	if (!hl)
		fatal("build: opcode %#x not in the table", p.opcode);
	std::vector<uint8_t> v(hdr, hdr + hl);
	v.insert(v.end(), payload.begin(), payload.end());
	v.insert(v.end(), p.pad + ROCE_ICRC_LEN, 0);
	return v;
}

/* Headers of @p with PadCnt @pad as given, then @body, then the ICRC's room. */
std::vector<uint8_t> build_raw(roce_pkt p, uint8_t pad, const std::vector<uint8_t> &body)
{
	uint8_t hdr[ROCE_MAX_HDR_LEN];
	p.pad = pad;
	size_t hl = roce_build_hdrs(hdr, &p);
	if (!hl)
		fatal("build: opcode %#x not in the table", p.opcode);
	std::vector<uint8_t> v(hdr, hdr + hl);
	v.insert(v.end(), body.begin(), body.end());
	v.insert(v.end(), ROCE_ICRC_LEN, 0);
	return v;
}

std::vector<uint8_t> bytes(size_t n, uint8_t fill = 0xa5)
{
	return std::vector<uint8_t>(n, fill);
}

struct Target {
	uint32_t qpn;
	bool have_epsn;
	uint32_t epsn;
	uint32_t mtu;
	uint64_t va; /* --va, --rkey: a region the target may write and read */
	uint32_t rkey;
	uint32_t sq_psn; /* --sq-psn: the target requester's first PSN (fuzz) */
	std::vector<uint32_t> avoid;
	Addr spoof;
};

roce_pkt req(uint8_t opcode, uint32_t qpn, uint32_t psn)
{
	roce_pkt p{};
	p.opcode = opcode;
	p.pkey = ROCE_DEFAULT_PKEY;
	p.dest_qpn = qpn;
	p.psn = psn & ROCE_PSN_MASK;
	/* harmless extension header contents: nothing of ours is at VA 0 */
	p.reth.va = 0x1000;
	p.reth.rkey = 0xdeadbe;
	p.reth.len = 16;
	p.atomic.va = 0x1000;
	p.atomic.rkey = 0xdeadbe;
	p.aeth.syndrome = roce_syn_make(ROCE_AETH_ACK, ROCE_AETH_CREDITS_INVALID);
	p.deth.qkey = 0x11111111;
	p.deth.src_qpn = 1;
	return p;
}

/* The outcome counts a category expects, by name (see the header comment). */
using Expect = std::map<std::string, uint64_t>;

/*
 * --check: what kernel/proto makes of an IP packet, the way a receiver
 * runs it: too short for BTH + ICRC, ICRC, then roce_parse().
 */
std::string verdict(const std::vector<uint8_t> &pkt, bool v6)
{
	size_t l3 = v6 ? ROCE_IPV6_HDR_LEN : ROCE_IPV4_HDR_LEN;
	const uint8_t *ip = pkt.data(), *udp = ip + l3;
	size_t udp_len = pkt.size() - l3;

	if (udp_len == ROCE_UDP_HDR_LEN)
		return "none";
	if (udp_len < ROCE_UDP_HDR_LEN + ROCE_BTH_LEN + ROCE_ICRC_LEN)
		return "truncated";
	if (!roce_icrc_check(ip, l3, v6, udp, udp_len))
		return "bad_icrc";
	roce_pkt p;
	int err = roce_parse(udp + ROCE_UDP_HDR_LEN, udp_len - ROCE_UDP_HDR_LEN, &p);
	if (err)
		return roce_parse_err_name(err);
	return "parsed";
}

uint64_t check_failures;

struct Ctx {
	Injector &inj;
	const Target &t;
	const char *category;
	Expect expect;
	uint64_t n = 0;

	void send(const std::vector<uint8_t> &roce, const char *outcome, const Send &s = Send())
	{
		std::vector<uint8_t> pkt = inj.send(roce, s);
		n++;
		expect[outcome]++;
		if (!inj.check_only && verbose < 1)
			return;
		std::string v = verdict(pkt, t.spoof.v6);
		std::string o = outcome;
		bool parse_level = o == "truncated" || o == "bad_icrc" || o == "transport" ||
				   o == "opcode" || o == "tver" || o == "pad" || o == "length";
		std::string want = parse_level			     ? o
				   : !std::strcmp(category, "empty") ? "none"
								     : "parsed";
		bool ok = o == "random" || v == want;
		if (verbose)
			std::printf("inject: %s #%" PRIu64 ": %zu bytes, opcode %#04x: %s%s%s\n",
				    category, n, roce.size(), roce.empty() ? 0 : roce[0], v.c_str(),
				    ok ? "" : ", expected ", ok ? "" : want.c_str());
		if (inj.check_only && !ok) {
			check_failures++;
			std::printf("inject: CHECK FAILED: %s packet %" PRIu64
				    " (opcode %#04x, %zu bytes): parser says %s, expected %s\n",
				    category, n, roce.empty() ? 0 : roce[0], roce.size(), v.c_str(),
				    want.c_str());
		}
	}
	/* a PSN @k + 1 behind the expected one: a duplicate */
	uint32_t dup(uint32_t k) const { return roce_psn_sub(t.epsn, k + 1); }
};

void cat_empty(Ctx &c)
{
	c.send({}, "none", Send{.icrc = false, .after = {}});
}

void cat_truncated(Ctx &c)
{
	/* every length shorter than BTH + ICRC: a real packet's first bytes */
	std::vector<uint8_t> full = build(req(ROCE_RC_SEND_ONLY, c.t.qpn, 0), bytes(16));
	for (size_t len = 1; len < ROCE_BTH_LEN + ROCE_ICRC_LEN; len++)
		c.send(std::vector<uint8_t>(full.begin(), full.begin() + (long)len), "truncated",
		       Send{.icrc = false, .after = {}});
	/* cut inside the extension headers, with a valid ICRC after the cut */
	static const uint8_t ops[] = {
	    ROCE_RC_RDMA_WRITE_ONLY,
	    ROCE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
	    ROCE_RC_RDMA_READ_REQUEST,
	    ROCE_RC_COMPARE_SWAP,
	    ROCE_RC_SEND_ONLY_WITH_IMMEDIATE,
	    ROCE_RC_ACKNOWLEDGE,
	    ROCE_RC_ATOMIC_ACKNOWLEDGE,
	    ROCE_RC_SEND_ONLY_WITH_INVALIDATE,
	    ROCE_UD_SEND_ONLY,
	    ROCE_CNP,
	};
	for (uint8_t op : ops) {
		roce_pkt p = req(op, c.t.qpn, c.t.have_epsn ? c.dup(0) : 0);
		uint8_t hdr[ROCE_MAX_HDR_LEN];
		size_t hl = roce_build_hdrs(hdr, &p);
		for (size_t cut = ROCE_BTH_LEN; cut < hl; cut++) {
			std::vector<uint8_t> v(hdr, hdr + cut);
			v.insert(v.end(), ROCE_ICRC_LEN, 0);
			c.send(v, "truncated");
		}
	}
}

void cat_bad_icrc(Ctx &c)
{
	uint32_t psn = c.t.have_epsn ? c.dup(0) : 0;
	std::vector<uint8_t> v = build(req(ROCE_RC_SEND_ONLY, c.t.qpn, psn), bytes(32));
	size_t icrc_off = ROCE_UDP_HDR_LEN + v.size() - ROCE_ICRC_LEN;

	for (int i = 0; i < 4; i++) /* each ICRC byte */
		c.send(v, "bad_icrc", Send{.after = [=](uint8_t *, uint8_t *udp) {
			       udp[icrc_off + (size_t)i] ^= 0x10;
		       }});
	/* covered fields changed after the ICRC: opcode bit, SE, QPN, PSN, payload */
	static const size_t roce_offs[] = {0, 1, 7, 11, ROCE_BTH_LEN + 5};
	for (size_t off : roce_offs)
		c.send(v, "bad_icrc", Send{.after = [=](uint8_t *, uint8_t *udp) {
			       udp[ROCE_UDP_HDR_LEN + off] ^= 0x01;
		       }});
	/* UDP source port */
	c.send(v, "bad_icrc", Send{.after = [](uint8_t *, uint8_t *udp) { udp[1] ^= 0x01; }});
	/* IPv4 Identification / IPv6 payload... the ID is covered; IPv6 has none */
	if (!c.t.spoof.v6)
		c.send(v, "bad_icrc", Send{.after = [](uint8_t *ip, uint8_t *) { ip[5] ^= 0x01; }});
	/* zero, all ones */
	c.send(v, "bad_icrc",
	       Send{.after = [=](uint8_t *, uint8_t *udp) { std::memset(udp + icrc_off, 0, 4); }});
	c.send(v, "bad_icrc", Send{.after = [=](uint8_t *, uint8_t *udp) {
		       std::memset(udp + icrc_off, 0xff, 4);
	       }});
	/* no ICRC at all: the last 4 payload bytes are read as one */
	std::vector<uint8_t> noicrc(v.begin(), v.end() - ROCE_ICRC_LEN);
	c.send(noicrc, "bad_icrc", Send{.icrc = false, .after = {}});
	/* a full-MTU packet with one bit flipped in the middle */
	std::vector<uint8_t> big = build(req(ROCE_RC_SEND_ONLY, c.t.qpn, psn), bytes(c.t.mtu));
	size_t mid = ROCE_UDP_HDR_LEN + big.size() / 2;
	c.send(big, "bad_icrc", Send{.after = [=](uint8_t *, uint8_t *udp) { udp[mid] ^= 0x40; }});
}

/* A bare BTH (+ 8 bytes) with any opcode, valid ICRC. */
std::vector<uint8_t> with_opcode(uint8_t opcode, uint32_t qpn)
{
	std::vector<uint8_t> v = build(req(ROCE_RC_SEND_ONLY, qpn, 0), bytes(8, 0));
	v[0] = opcode;
	return v;
}

void cat_opcode(Ctx &c)
{
	for (unsigned op = 0; op < 256; op++) {
		if (!roce_transport_supported((uint8_t)op) || roce_opcode_lookup((uint8_t)op))
			continue;
		c.send(with_opcode((uint8_t)op, c.t.qpn), "opcode");
	}
}

void cat_transport(Ctx &c)
{
	for (unsigned op = 0; op < 256; op++)
		if (!roce_transport_supported((uint8_t)op))
			c.send(with_opcode((uint8_t)op, c.t.qpn), "transport");
}

void cat_tver(Ctx &c)
{
	uint32_t psn = c.t.have_epsn ? c.dup(0) : 0;
	for (uint8_t tver = 1; tver < 16; tver++) {
		std::vector<uint8_t> v = build(req(ROCE_RC_SEND_ONLY, c.t.qpn, psn), bytes(16));
		roce_bth_set_tver(reinterpret_cast<roce_bth *>(v.data()), tver);
		c.send(v, "tver");
	}
}

void cat_pad(Ctx &c)
{
	uint32_t psn = c.t.have_epsn ? c.dup(0) : 0;
	for (uint8_t pad = 1; pad <= 3; pad++) {
		/* pad on packets that cannot have any: FIRST, MIDDLE, no payload */
		static const uint8_t no_pad[] = {
		    ROCE_RC_SEND_FIRST,	       ROCE_RC_SEND_MIDDLE,
		    ROCE_RC_RDMA_WRITE_FIRST,  ROCE_RC_RDMA_READ_RESPONSE_MIDDLE,
		    ROCE_RC_RDMA_READ_REQUEST, ROCE_RC_ACKNOWLEDGE,
		    ROCE_RC_COMPARE_SWAP,
		};
		for (uint8_t op : no_pad) {
			const roce_opcode_desc *d = roce_opcode_lookup(op);
			size_t body = (d->flags & ROCE_OPF_PAYLOAD) ? 16 : 0;
			c.send(build_raw(req(op, c.t.qpn, psn), pad, bytes(body)), "pad");
		}
		/* more pad than bytes after the headers */
		c.send(build_raw(req(ROCE_RC_SEND_ONLY, c.t.qpn, psn), pad, {}), "pad");
	}
}

void cat_length(Ctx &c)
{
	uint32_t psn = c.t.have_epsn ? c.dup(0) : 0;
	/* not a multiple of 4 */
	for (size_t n = 1; n <= 3; n++)
		c.send(build_raw(req(ROCE_RC_SEND_ONLY, c.t.qpn, psn), 0, bytes(n)), "length");
	/* payload where the opcode has none */
	c.send(build_raw(req(ROCE_RC_ACKNOWLEDGE, c.t.qpn, psn), 0, bytes(4)), "length");
	c.send(build_raw(req(ROCE_RC_ACKNOWLEDGE, c.t.qpn, psn), 0, bytes(64)), "length");
	c.send(build_raw(req(ROCE_RC_RDMA_READ_REQUEST, c.t.qpn, psn), 0, bytes(4)), "length");
	c.send(build_raw(req(ROCE_RC_COMPARE_SWAP, c.t.qpn, psn), 0, bytes(8)), "length");
	c.send(build_raw(req(ROCE_RC_FETCH_ADD, c.t.qpn, psn), 0, bytes(8)), "length");
	c.send(build_raw(req(ROCE_CNP, c.t.qpn, 0), 0, bytes(4)), "length");
	/* ATOMIC WRITE: exactly 8 bytes of payload */
	for (size_t n : {0, 4, 12, 16})
		c.send(build_raw(req(ROCE_RC_ATOMIC_WRITE, c.t.qpn, psn), 0, bytes(n)), "length");
}

void cat_unknown_qp(Ctx &c)
{
	static const uint32_t qpns[] = {0, 1, 0xffffff, 0xfffffe, 0x800000, 0x7fffff, 0xabcdef};
	uint32_t psn = c.t.have_epsn ? c.dup(0) : 0;
	for (uint32_t q : qpns) {
		if (std::find(c.t.avoid.begin(), c.t.avoid.end(), q) != c.t.avoid.end() ||
		    q == c.t.qpn)
			continue;
		c.send(build(req(ROCE_RC_SEND_ONLY, q, psn), bytes(16)), "unknown_qp");
	}
	c.send(build(req(ROCE_RC_ACKNOWLEDGE, 0xfffffd, 0), {}), "unknown_qp");
	c.send(build(req(ROCE_RC_RDMA_WRITE_ONLY, 0xfffffc, psn), bytes(16)), "unknown_qp");
}

void cat_bad_pkey(Ctx &c)
{
	uint32_t psn = c.t.have_epsn ? c.t.epsn : 0;
	for (uint16_t k : {0x1234, 0x8000, 0xfffe, 0x0000}) {
		roce_pkt p = req(ROCE_RC_SEND_ONLY, c.t.qpn, psn);
		p.pkey = k;
		c.send(build(p, bytes(16)), "bad_pkey");
	}
	roce_pkt w = req(ROCE_RC_RDMA_WRITE_ONLY, c.t.qpn, psn);
	w.pkey = 0x1234;
	c.send(build(w, bytes(16)), "bad_pkey");
	roce_pkt r = req(ROCE_RC_RDMA_READ_REQUEST, c.t.qpn, psn);
	r.pkey = 0x1234;
	c.send(build(r, {}), "bad_pkey");
	roce_pkt a = req(ROCE_RC_ACKNOWLEDGE, c.t.qpn, 0);
	a.pkey = 0x1234;
	c.send(build(a, {}), "bad_pkey");
}

void cat_bad_address(Ctx &c)
{
	uint32_t psn = c.t.have_epsn ? c.dup(0) : 0;
	Send s{.src = &c.t.spoof, .after = {}};
	c.send(build(req(ROCE_RC_SEND_ONLY, c.t.qpn, psn), bytes(16)), "bad_address", s);
	c.send(build(req(ROCE_RC_RDMA_WRITE_ONLY, c.t.qpn, psn), bytes(16)), "bad_address", s);
	c.send(build(req(ROCE_RC_RDMA_READ_REQUEST, c.t.qpn, psn), {}), "bad_address", s);
	c.send(build(req(ROCE_RC_ACKNOWLEDGE, c.t.qpn, 0), {}), "bad_address", s);
	/* and one in sequence: it must not be executed either */
	if (c.t.have_epsn)
		c.send(build(req(ROCE_RC_SEND_ONLY, c.t.qpn, c.t.epsn), bytes(16)), "bad_address",
		       s);
}

void cat_out_of_window(Ctx &c)
{
	/* responses to a requester with nothing outstanding: every PSN is stale */
	Rng &r = c.inj.rng();
	for (int i = 0; i < 6; i++) {
		roce_pkt p = req(ROCE_RC_ACKNOWLEDGE, c.t.qpn, (uint32_t)r.below(1U << 24));
		p.aeth.msn = (uint32_t)r.below(1U << 24);
		c.send(build(p, {}), "out_of_window");
	}
	roce_pkt p = req(ROCE_RC_ACKNOWLEDGE, c.t.qpn, (uint32_t)r.below(1U << 24));
	p.aeth.syndrome = roce_syn_make(ROCE_AETH_NAK, ROCE_NAK_PSN_SEQ_ERR);
	c.send(build(p, {}), "out_of_window");
	p.aeth.syndrome = roce_syn_make(ROCE_AETH_NAK, ROCE_NAK_REMOTE_ACCESS_ERR);
	c.send(build(p, {}), "out_of_window");
	p.aeth.syndrome = roce_syn_make(ROCE_AETH_RNR_NAK, 1);
	c.send(build(p, {}), "out_of_window");
	static const uint8_t resp[] = {
	    ROCE_RC_RDMA_READ_RESPONSE_FIRST, ROCE_RC_RDMA_READ_RESPONSE_MIDDLE,
	    ROCE_RC_RDMA_READ_RESPONSE_LAST,  ROCE_RC_RDMA_READ_RESPONSE_ONLY,
	    ROCE_RC_ATOMIC_ACKNOWLEDGE,
	};
	for (uint8_t op : resp) {
		const roce_opcode_desc *d = roce_opcode_lookup(op);
		size_t n = (d->flags & ROCE_OPF_PAYLOAD) ? 64 : 0;
		if (d->flags & (ROCE_OPF_MIDDLE))
			n = c.t.mtu;
		roce_pkt q = req(op, c.t.qpn, (uint32_t)r.below(1U << 24));
		q.atomic_orig = 0x0123456789abcdefULL;
		c.send(build(q, bytes(n)), "out_of_window");
	}
	/* READ requests behind the expected PSN that match no executed READ */
	if (c.t.have_epsn) {
		for (uint32_t k : {0U, 1U, 77U}) {
			roce_pkt q = req(ROCE_RC_RDMA_READ_REQUEST, c.t.qpn, c.dup(k));
			c.send(build(q, {}), "out_of_window");
			c.expect["duplicate"]++;
		}
	}
}

void cat_duplicate(Ctx &c)
{
	/* behind the expected PSN, as far as the 2^23 edge: never executed */
	for (uint32_t k : {0U, 1U, 100U, (1U << 23) - 1}) {
		c.send(build(req(ROCE_RC_SEND_ONLY, c.t.qpn, c.dup(k)), bytes(24)), "duplicate");
	}
	c.send(build(req(ROCE_RC_SEND_FIRST, c.t.qpn, c.dup(5)), bytes(c.t.mtu)), "duplicate");
	c.send(build(req(ROCE_RC_SEND_MIDDLE, c.t.qpn, c.dup(4)), bytes(c.t.mtu)), "duplicate");
	c.send(build(req(ROCE_RC_SEND_LAST, c.t.qpn, c.dup(3)), bytes(10)), "duplicate");
	/* a WRITE with a key that would fault: executing it would break the QP */
	c.send(build(req(ROCE_RC_RDMA_WRITE_ONLY, c.t.qpn, c.dup(2)), bytes(16)), "duplicate");
	/* AckReq on a duplicate: the responder acknowledges (to the real peer) */
	roce_pkt p = req(ROCE_RC_SEND_ONLY_WITH_IMMEDIATE, c.t.qpn, c.dup(0));
	p.ackreq = true;
	p.imm = 0x12345678;
	c.send(build(p, bytes(8)), "duplicate");
	c.expect["dup_ack"]++;
}

void cat_ahead(Ctx &c)
{
	for (uint32_t k : {1U, 2U, 1000U, (1U << 23) - 1})
		c.send(build(req(ROCE_RC_SEND_ONLY, c.t.qpn, roce_psn_add(c.t.epsn, k)), bytes(8)),
		       "none");
	c.expect["seq_nak"] = 1;
}

void cat_oversized(Ctx &c)
{
	uint32_t big = c.t.mtu + 4;
	c.send(build(req(ROCE_RC_SEND_ONLY, c.t.qpn, c.dup(0)), bytes(big)), "duplicate");
	c.send(build(req(ROCE_RC_SEND_FIRST, c.t.qpn, c.dup(1)), bytes(big)), "duplicate");
	c.send(build(req(ROCE_RC_RDMA_WRITE_ONLY, c.t.qpn, c.dup(2)), bytes(big)), "duplicate");
	c.send(build(req(ROCE_RC_RDMA_READ_RESPONSE_ONLY, c.t.qpn, 0x123456), bytes(big)),
	       "out_of_window");
}

void cat_valid(Ctx &c)
{
	bool v6 = c.t.spoof.v6;
	std::vector<uint8_t> v = build(req(ROCE_RC_SEND_ONLY, c.t.qpn, c.dup(0)), bytes(40));
	/* as computed */
	c.send(v, "duplicate");
	/* every field the ICRC masks, changed after it was computed */
	if (v6) {
		c.send(v, "duplicate", Send{.after = [](uint8_t *ip, uint8_t *) {
			       ip[0] |= 0x0b; /* traffic class */
			       ip[1] |= 0x8a;
			       ip[2] = 0x12; /* flow label */
			       ip[3] = 0x34;
		       }});
		c.send(v, "duplicate", Send{.after = [](uint8_t *ip, uint8_t *) {
			       ip[7] = 1; /* hop limit */
		       }});
	} else {
		c.send(v, "duplicate", Send{.after = [](uint8_t *ip, uint8_t *) {
			       ip[1] = 0xb8; /* DSCP EF */
		       }});
		c.send(v, "duplicate", Send{.after = [](uint8_t *ip, uint8_t *) {
			       ip[1] = 0x02; /* ECT(0) */
		       }});
		c.send(v, "duplicate", Send{.after = [](uint8_t *ip, uint8_t *) { ip[8] = 1; }});
		c.send(v, "duplicate", Send{.after = [](uint8_t *ip, uint8_t *) { ip[8] = 255; }});
		c.send(v, "duplicate", Send{.udp_csum = false, .after = {}});
	}
	c.send(v, "duplicate", Send{.after = [](uint8_t *, uint8_t *udp) {
		       udp[ROCE_UDP_HDR_LEN + 4] |= 0x80; /* FECN */
	       }});
	c.send(v, "duplicate", Send{.after = [](uint8_t *, uint8_t *udp) {
		       udp[ROCE_UDP_HDR_LEN + 4] |= 0x40; /* BECN */
	       }});
	/* other well-formed duplicates: MigReq set, SE set, immediate, a WRITE */
	roce_pkt p = req(ROCE_RC_SEND_ONLY, c.t.qpn, c.dup(1));
	p.bth_flags = ROCE_PKT_MIG | ROCE_PKT_SE;
	c.send(build(p, bytes(3)), "duplicate");
	p = req(ROCE_RC_SEND_ONLY_WITH_IMMEDIATE, c.t.qpn, c.dup(2));
	c.send(build(p, bytes(1)), "duplicate");
	c.send(build(req(ROCE_RC_RDMA_WRITE_ONLY, c.t.qpn, c.dup(3)), bytes(0)), "duplicate");
}

void cat_random(Ctx &c, unsigned count)
{
	Rng &r = c.inj.rng();
	static const uint8_t known[] = {
	    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d,
	    0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x16, 0x17, 0x1c, 0x1d, 0x64, 0x65, 0x81,
	};
	auto avoid = [&](std::vector<uint8_t> &v) {
		if (v.size() < ROCE_BTH_LEN)
			return;
		uint32_t q = (uint32_t)v[5] << 16 | (uint32_t)v[6] << 8 | v[7];
		bool bad = q == c.t.qpn ||
			   std::find(c.t.avoid.begin(), c.t.avoid.end(), q) != c.t.avoid.end();
		if (bad)
			v[5] ^= 0x80;
	};
	for (unsigned i = 0; i < count; i++) {
		unsigned kind = (unsigned)r.below(3);
		std::vector<uint8_t> v;
		if (kind < 2) {
			size_t len = (size_t)r.below(1200);
			if (kind == 1 && len < ROCE_BTH_LEN + ROCE_ICRC_LEN)
				len = ROCE_BTH_LEN + ROCE_ICRC_LEN + (size_t)r.below(64);
			v.resize(len);
			for (auto &b : v)
				b = (uint8_t)r.next();
			avoid(v);
			c.send(v, "random", Send{.icrc = kind == 1, .after = {}});
			continue;
		}
		/* a valid packet of a random known opcode, then mutated */
		roce_pkt p = req(known[r.below(sizeof(known))], (uint32_t)r.below(1U << 24),
				 (uint32_t)r.below(1U << 24));
		p.reth.va = r.next();
		p.reth.len = (uint32_t)r.next();
		p.ackreq = r.below(2);
		const roce_opcode_desc *d = roce_opcode_lookup(p.opcode);
		size_t n = (d->flags & ROCE_OPF_PAYLOAD) ? (size_t)r.below(c.t.mtu + 64) : 0;
		if (p.opcode == ROCE_RC_ATOMIC_WRITE)
			n = 8;
		v = build(p, bytes(n, (uint8_t)r.next()));
		unsigned flips = (unsigned)r.below(4);
		size_t span = std::min<size_t>(v.size() - ROCE_ICRC_LEN, ROCE_MAX_HDR_LEN);
		for (unsigned f = 0; f < flips; f++)
			v[r.below(span)] ^= (uint8_t)(1U << r.below(8));
		if (r.below(8) == 0 && v.size() > ROCE_BTH_LEN + 8) /* and sometimes cut */
			v.resize(ROCE_BTH_LEN + ROCE_ICRC_LEN + (size_t)r.below(v.size() - 20));
		avoid(v);
		c.send(v, "random");
	}
}

/*
 * What a QP in the middle of a long message must not queue for its
 * receive CPU (kernel/roce/roce_steer.c): a WRITE FIRST announcing 16
 * packets (steering starts at once, but at a duplicate PSN: answered, not
 * queued), then SEND MIDDLE packets with a bad ICRC, from a spoofed
 * source, far ahead of the expected PSN, and stale READ RESPONSE MIDDLE
 * packets to the idle requester.  Every one is dropped or answered in the
 * softirq; the test checks that rx_steered did not move.
 */
void cat_steer(Ctx &c)
{
	Rng &r = c.inj.rng();
	roce_pkt first = req(ROCE_RC_RDMA_WRITE_FIRST, c.t.qpn, c.dup(0));
	first.reth.len = 16 * c.t.mtu;
	c.send(build(first, bytes(c.t.mtu)), "duplicate");
	std::vector<uint8_t> mid =
	    build(req(ROCE_RC_SEND_MIDDLE, c.t.qpn, c.t.epsn), bytes(c.t.mtu));
	size_t icrc_off = ROCE_UDP_HDR_LEN + mid.size() - ROCE_ICRC_LEN;
	Send spoofed{.src = &c.t.spoof, .after = {}};
	for (int i = 0; i < 64; i++) {
		c.send(mid, "bad_icrc",
		       Send{.after = [=](uint8_t *, uint8_t *udp) { udp[icrc_off] ^= 0x01; }});
		c.send(mid, "bad_address", spoofed);
		c.send(build(req(ROCE_RC_SEND_MIDDLE, c.t.qpn, roce_psn_add(c.t.epsn, 1U << 22)),
			     bytes(c.t.mtu)),
		       "none");
		c.send(build(req(ROCE_RC_RDMA_READ_RESPONSE_MIDDLE, c.t.qpn,
				 (uint32_t)r.below(1U << 24)),
			     bytes(c.t.mtu)),
		       "out_of_window");
	}
	c.expect["seq_nak"] = 1;
}

/* A WRITE ONLY at the expected PSN above the path MTU, to a valid region. */
void cat_write_only_big(Ctx &c)
{
	roce_pkt p = req(ROCE_RC_RDMA_WRITE_ONLY, c.t.qpn, c.t.epsn);
	p.reth = {c.t.va, c.t.rkey, c.t.mtu + 4};
	c.send(build(p, bytes(c.t.mtu + 4)), "nak");
}

/* A WRITE FIRST of MTU bytes, then a LAST of MTU + 4: the message fits the region. */
void cat_write_last_big(Ctx &c)
{
	roce_pkt p = req(ROCE_RC_RDMA_WRITE_FIRST, c.t.qpn, c.t.epsn);
	p.reth = {c.t.va, c.t.rkey, 2 * c.t.mtu + 4};
	c.send(build(p, bytes(c.t.mtu)), "none");
	c.send(build(req(ROCE_RC_RDMA_WRITE_LAST, c.t.qpn, roce_psn_add(c.t.epsn, 1)),
		     bytes(c.t.mtu + 4)),
	       "nak");
}

/* READ resources (kernel/roce/roce_resp.c): 128, the ring's size. */
constexpr uint32_t replay_nres = 128;
/*
 * The first READ's response packets: 4 MiB at MTU 1024, so many that its
 * replay is still sending (paced by the responder's work item) when the
 * next READ comes, even if that work item runs before the injector does.
 */
constexpr uint32_t replay_first_pkts = 4096;

/* replay_first: a READ of 4096 packets at the expected PSN. */
void cat_replay_first(Ctx &c)
{
	roce_pkt p = req(ROCE_RC_RDMA_READ_REQUEST, c.t.qpn, c.t.epsn);
	p.reth = {c.t.va, c.t.rkey, replay_first_pkts * c.t.mtu};
	c.send(build(p, {}), "none");
}

/*
 * replay (after replay_first, --epsn unchanged): 127 zero-length READs
 * fill the responder's other resources, then replay_first's READ again
 * (its responses are sent again, paced), then one more READ, whose
 * resource would be the replayed one's while it still has responses to
 * send: refused (Invalid Request NAK), never overwritten.
 */
void cat_replay(Ctx &c)
{
	uint32_t psn = roce_psn_add(c.t.epsn, replay_first_pkts);
	for (uint32_t i = 1; i < replay_nres; i++, psn = roce_psn_next(psn)) {
		roce_pkt p = req(ROCE_RC_RDMA_READ_REQUEST, c.t.qpn, psn);
		p.reth = {c.t.va, c.t.rkey, 0};
		c.send(build(p, {}), "none");
	}
	roce_pkt again = req(ROCE_RC_RDMA_READ_REQUEST, c.t.qpn, c.t.epsn);
	again.reth = {c.t.va, c.t.rkey, replay_first_pkts * c.t.mtu};
	c.send(build(again, {}), "duplicate");
	roce_pkt next = req(ROCE_RC_RDMA_READ_REQUEST, c.t.qpn, psn);
	next.reth = {c.t.va, c.t.rkey, 0};
	c.send(build(next, {}), "nak");
}

void cat_fatal(Ctx &c)
{
	c.send(build(req(ROCE_RC_SEND_ONLY, c.t.qpn, c.t.epsn), bytes(c.t.mtu + 4)), "nak");
}

/*
 * UD at the GSI QP (QP1) and elsewhere: a wrong Q_Key (QP1 takes
 * 0x80010000 only) or P_Key, a datagram above a MAD's 256 bytes, unknown
 * QPNs, the multicast QPN to a group nobody joined; then datagrams that
 * pass every check of ours and are MADs ib_mad and ib_cm must refuse:
 * short ones, random bytes, and CM MADs (class 0x07, version 2) of every
 * method with random attributes and bodies.
 */
void cat_ud(Ctx &c)
{
	constexpr uint32_t qp1_qkey = 0x80010000;
	roce_pkt p = req(ROCE_UD_SEND_ONLY, 1, 0);
	p.deth.src_qpn = 1;
	p.deth.qkey = 0x11111111;
	c.send(build(p, bytes(256)), "bad_qkey");
	p.deth.qkey = qp1_qkey;
	roce_pkt k = p;
	k.pkey = 0x1234;
	c.send(build(k, bytes(256)), "bad_pkey");
	c.send(build(p, bytes(260)), "mad_length");
	c.send(build(p, bytes(1024)), "mad_length");
	for (uint32_t q : {0xabcdefu, 0x7ffffeu, 0xffffffu}) {
		roce_pkt u = p;
		u.dest_qpn = q;
		c.send(build(u, bytes(256)), "unknown_qp");
	}
	for (size_t n : {0, 1, 23, 24, 255})
		c.send(build(p, bytes(n, 0)), "ud_recv");
	Rng rng(0x4d4144);
	for (int i = 0; i < 64; i++) {
		std::vector<uint8_t> mad(256);
		for (auto &b : mad)
			b = (uint8_t)rng.next();
		if (i >= 16) {
			mad[0] = 1;		   /* base version */
			mad[1] = 0x07;		   /* CM */
			mad[2] = 2;		   /* class version */
			mad[3] = (uint8_t)(i & 7); /* methods 0..7 */
			mad[16] = 0x00;		   /* attribute IDs 0x0010..0x001f */
			mad[17] = (uint8_t)(0x10 + (i & 15));
		}
		c.send(build(p, mad), "ud_recv");
	}
}

/* ------------------------------------------------------------------ */
/* fuzz: random sequences at the live RC state machines */

/*
 * What a sniffer on the path (--sniff IF, an AF_PACKET socket on the
 * interface the QP's traffic crosses) learns of the target QP's state
 * from the real traffic, so that the fuzzed PSNs sit at its live window
 * edges: the PSN its responder expects next (after the last request the
 * peer sent it), the next PSN its requester sends, and the oldest one
 * the peer has not acknowledged yet.  Without --sniff the starting
 * values (--epsn, --sq-psn) stay.  A UDP GSO batch is seen as one
 * datagram: its first PSN plus the number of MTU-sized segments it spans.
 */
struct LiveState {
	uint32_t epsn = 0;     /* target responder: expected PSN */
	uint32_t next_psn = 0; /* target requester: next PSN it sends */
	uint32_t una = 0;      /* target requester: oldest unacknowledged */
	uint32_t msn = 0;      /* an MSN seen in the peer's ACKs */
	uint64_t seen = 0;     /* packets of the pair sniffed */
};

class Sniffer
{
public:
	~Sniffer()
	{
		if (fd_ >= 0)
			close(fd_);
	}
	void open(const char *ifname)
	{
		unsigned idx = if_nametoindex(ifname);
		if (!idx)
			fatal("--sniff %s: no such interface", ifname);
		fd_ = socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK, htons(ETH_P_ALL));
		if (fd_ < 0)
			fatal("packet socket: %s", std::strerror(errno));
		struct sockaddr_ll sll = {};
		sll.sll_family = AF_PACKET;
		sll.sll_protocol = htons(ETH_P_ALL);
		sll.sll_ifindex = (int)idx;
		if (bind(fd_, reinterpret_cast<struct sockaddr *>(&sll), sizeof(sll)))
			fatal("bind to %s: %s", ifname, std::strerror(errno));
	}
	bool active() const { return fd_ >= 0; }

	/* Everything queued since the last call, into @st. */
	void drain(LiveState &st, const Addr &target, uint32_t qpn, uint32_t rqpn, uint32_t mtu)
	{
		target_ = &target;
		uint8_t buf[65536];
		for (;;) {
			ssize_t n = recv(fd_, buf, sizeof(buf), 0);
			if (n <= 0)
				return;
			note(st, buf, (size_t)n, qpn, rqpn, mtu);
		}
	}

private:
	int fd_ = -1;
	const Addr *target_ = nullptr;

	void note(LiveState &st, const uint8_t *p, size_t n, uint32_t qpn, uint32_t rqpn,
		  uint32_t mtu)
	{
		size_t l3;
		if (n >= ROCE_IPV4_HDR_LEN && (p[0] >> 4) == 4 && p[9] == IPPROTO_UDP)
			l3 = (size_t)(p[0] & 15) * 4;
		else if (n >= ROCE_IPV6_HDR_LEN && (p[0] >> 4) == 6 && p[6] == IPPROTO_UDP)
			l3 = ROCE_IPV6_HDR_LEN;
		else
			return;
		if (n < l3 + ROCE_UDP_HDR_LEN + ROCE_BTH_LEN + ROCE_AETH_LEN)
			return;
		const uint8_t *udp = p + l3, *bth = udp + ROCE_UDP_HDR_LEN;
		/*
		 * Not RoCE, or not the pair's: a QP's source port is 0xc000 and
		 * up (rdma_get_udp_sport()), a fuzzer's (ours, or one fuzzing
		 * the other QP with this one's address) below
		 */
		if ((udp[2] << 8 | udp[3]) != ROCE_UDP_DPORT || udp[0] < 0xc0)
			return;
		const roce_opcode_desc *d = roce_opcode_lookup(bth[0]);
		if (!d || d->transport != ROCE_TRANSPORT_RC)
			return;
		uint32_t dqpn = (uint32_t)bth[5] << 16 | (uint32_t)bth[6] << 8 | bth[7];
		uint32_t psn = (uint32_t)bth[9] << 16 | (uint32_t)bth[10] << 8 | bth[11];
		size_t body = n - l3 - ROCE_UDP_HDR_LEN;
		uint32_t segs = (uint32_t)std::max<size_t>(1, body / (mtu + ROCE_BTH_LEN + 4));
		uint32_t last = roce_psn_add(psn, segs - 1);
		bool resp = d->flags & ROCE_OPF_RESP;
		/* the direction by address: both QPs may have the same number */
		bool v6 = l3 == ROCE_IPV6_HDR_LEN;
		if (v6 != target_->v6)
			return;
		const uint8_t *saddr = p + (v6 ? 8 : 12), *daddr = p + (v6 ? 24 : 16);
		bool to = !std::memcmp(daddr, target_->b, target_->len()) && dqpn == qpn;
		bool from = !std::memcmp(saddr, target_->b, target_->len()) && dqpn == rqpn;
		if (to && !resp) {
			st.epsn = roce_psn_next(last);
		} else if (to && resp) {
			st.una = roce_psn_next(last);
			if (bth[0] == ROCE_RC_ACKNOWLEDGE) {
				const uint8_t *a = bth + ROCE_BTH_LEN;
				st.msn = (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];
			}
		} else if (from && !resp) {
			st.next_psn = roce_psn_next(last);
		} else if (!from) {
			return;
		}
		st.seen++;
	}
};

/*
 * --fuzz N packets (default 2000; fewer if --while-pid's process exits
 * first) at the target QP from its peer's address (the default source
 * where the injector runs on the peer's side), every one well-formed
 * with a valid ICRC, so each reaches the QP's requester or responder
 * state machine: opcodes from every RC request and response, PSNs at the
 * live window edges (LiveState), AETH syndromes of every kind, valid
 * (--va/--rkey/--len) and invalid keys, addresses and lengths.  Whatever
 * they do to a transfer running on the QP is legal for a peer to have
 * done; the test checks that the kernel survives it and the QP ends
 * cleanly.  With @stale, every PSN is far outside the QP's windows, and
 * the transfer must not notice.
 */
void cat_fuzz(Ctx &c, unsigned count, bool stale, Sniffer &sniff, uint32_t rqpn, uint32_t arena_len,
	      int while_pid, unsigned interval_us)
{
	Rng &r = c.inj.rng();
	static const uint8_t ops[] = {
	    ROCE_RC_SEND_FIRST,
	    ROCE_RC_SEND_MIDDLE,
	    ROCE_RC_SEND_LAST,
	    ROCE_RC_SEND_LAST_WITH_IMMEDIATE,
	    ROCE_RC_SEND_ONLY,
	    ROCE_RC_SEND_ONLY_WITH_IMMEDIATE,
	    ROCE_RC_RDMA_WRITE_FIRST,
	    ROCE_RC_RDMA_WRITE_MIDDLE,
	    ROCE_RC_RDMA_WRITE_LAST,
	    ROCE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
	    ROCE_RC_RDMA_WRITE_ONLY,
	    ROCE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
	    ROCE_RC_RDMA_READ_REQUEST,
	    ROCE_RC_RDMA_READ_RESPONSE_FIRST,
	    ROCE_RC_RDMA_READ_RESPONSE_MIDDLE,
	    ROCE_RC_RDMA_READ_RESPONSE_LAST,
	    ROCE_RC_RDMA_READ_RESPONSE_ONLY,
	    ROCE_RC_ACKNOWLEDGE,
	    ROCE_RC_ATOMIC_ACKNOWLEDGE,
	    ROCE_RC_COMPARE_SWAP,
	    ROCE_RC_FETCH_ADD,
	    ROCE_RC_SEND_LAST_WITH_INVALIDATE,
	    ROCE_RC_SEND_ONLY_WITH_INVALIDATE,
	    ROCE_RC_FLUSH,
	    ROCE_RC_ATOMIC_WRITE,
	};
	LiveState st;
	st.epsn = c.t.epsn;
	st.next_psn = c.t.sq_psn;
	st.una = c.t.sq_psn;
	uint64_t by_op[256] = {};

	/*
	 * A PSN at an edge of a window that starts at @lo and ends before
	 * @hi; with @stale, one no packet of the run can have: 2^22 .. 2^23
	 * behind @lo or 2^21 .. 2^22 ahead of @hi (a run covers far fewer).
	 */
	auto edge = [&](uint32_t lo, uint32_t hi) -> uint32_t {
		if (stale)
			return r.below(2)
				   ? roce_psn_sub(lo,
						  (1U << 22) + (uint32_t)r.below((1U << 22) - 8))
				   : roce_psn_add(hi, (1U << 21) + (uint32_t)r.below(1U << 21));
		switch (r.below(12)) {
		case 0:
			return roce_psn_sub(lo, 1);
		case 1:
		case 2:
			return lo;
		case 3:
			return roce_psn_next(lo);
		case 4:
			return roce_psn_sub(hi, 1);
		case 5:
			return hi;
		case 6:
			return roce_psn_next(hi);
		case 7: /* the duplicate / ahead boundary, 2^23 either way */
			return roce_psn_add(lo, (1U << 23) - (uint32_t)r.below(3));
		case 8:
			return roce_psn_sub(lo, (1U << 23) - (uint32_t)r.below(3));
		case 9: /* around the 2^24 wrap */
			return (uint32_t)(ROCE_PSN_MASK - 2 + r.below(5)) & ROCE_PSN_MASK;
		case 10:
			return roce_psn_add(lo, (uint32_t)r.below(64));
		default:
			return (uint32_t)r.below(1U << 24);
		}
	};
	/* a (va, rkey, len): mostly the real region, sometimes not */
	auto region = [&](__u64 &va, __u32 &rkey, __u32 &len, uint32_t want) {
		va = c.t.va + (arena_len ? r.below(arena_len) & ~7ULL : 0);
		rkey = c.t.rkey;
		len = want;
		switch (r.below(8)) {
		case 0:
			rkey ^= 1U << r.below(32); /* a key that is not ours */
			break;
		case 1:
			va = c.t.va + arena_len -
			     (uint64_t)r.below(2 * want + 8); /* across the end */
			break;
		case 2:
			va = c.t.va - (uint64_t)r.below(4096) - 1; /* before the start */
			break;
		case 3:
			len = (uint32_t)r.next(); /* any length */
			break;
		case 4:
			va = r.next();
			break;
		default:
			break;
		}
	};

	for (unsigned i = 0; i < count; i++) {
		if (sniff.active() && i % 8 == 0)
			sniff.drain(st, c.inj.dst(), c.t.qpn, rqpn, c.t.mtu);
		if (while_pid > 0 && i % 16 == 0 && kill(while_pid, 0))
			break;
		if (interval_us)
			usleep(interval_us);
		uint8_t op = ops[r.below(sizeof(ops))];
		const roce_opcode_desc *d = roce_opcode_lookup(op);
		bool resp = d->flags & ROCE_OPF_RESP;
		roce_pkt p = req(op, c.t.qpn, 0);
		/*
		 * Requests at the responder's window, responses at the
		 * requester's.  A PSN in the window (a request at ePSN, a
		 * response in [una, next)) is one the QP acts on, which often
		 * ends the transfer: one in 512 of those stays, so the state
		 * machines are fuzzed while it runs.
		 */
		uint32_t lo = resp ? st.una : st.epsn;
		uint32_t hi = resp ? st.next_psn : roce_psn_add(st.epsn, 1);
		p.psn = edge(lo, hi);
		for (int k = 0; k < 16 && !stale &&
				roce_psn_sub(p.psn, lo) < roce_psn_sub(hi, lo) && r.below(512);
		     k++)
			p.psn = edge(lo, hi);
		p.ackreq = r.below(4) == 0;
		if (r.below(8) == 0)
			p.bth_flags = ROCE_PKT_SE;
		size_t n = 0;
		if (d->flags & ROCE_OPF_PAYLOAD) {
			bool full = d->flags & (ROCE_OPF_MIDDLE) ||
				    ((d->flags & ROCE_OPF_FIRST) && !(d->flags & ROCE_OPF_LAST));
			switch (r.below(6)) {
			case 0:
				n = 0;
				break;
			case 1:
				n = c.t.mtu + 4 * r.range(1, 4); /* above the path MTU */
				break;
			case 2:
				n = (size_t)r.below(c.t.mtu) + 1;
				break;
			default:
				n = full ? c.t.mtu : (size_t)r.below(c.t.mtu + 1);
				break;
			}
		}
		if (!(d->flags & ROCE_OPF_LAST))
			n &= ~(size_t)3; /* PadCnt only on a message's last packet */
		if (op == ROCE_RC_ATOMIC_WRITE)
			n = 8;
		uint32_t want = (uint32_t)(n ? n : r.below(4 * c.t.mtu));
		if (d->flags & ROCE_OPF_FIRST && !(d->flags & ROCE_OPF_LAST))
			want = (uint32_t)(c.t.mtu * r.range(1, 8));
		region(p.reth.va, p.reth.rkey, p.reth.len, want);
		if (op == ROCE_RC_COMPARE_SWAP || op == ROCE_RC_FETCH_ADD) {
			__u32 dummy;
			region(p.atomic.va, p.atomic.rkey, dummy, 8);
			if (r.below(4) == 0)
				p.atomic.va |= r.range(1, 7); /* misaligned */
			p.atomic.swap_add = r.next();
			p.atomic.compare = r.next();
		}
		p.atomic_orig = r.next();
		p.imm = (uint32_t)r.next();
		p.inv_rkey = r.below(2) ? c.t.rkey : (uint32_t)r.next();
		p.feth.sel = (uint8_t)r.below(4);
		p.feth.plt = (uint8_t)r.below(4);
		if (op == ROCE_RC_ACKNOWLEDGE || op == ROCE_RC_ATOMIC_ACKNOWLEDGE ||
		    (d->flags & ROCE_OPF_RESP && r.below(2))) {
			static const uint8_t syns[] = {
			    roce_syn_make(ROCE_AETH_ACK, ROCE_AETH_CREDITS_INVALID),
			    roce_syn_make(ROCE_AETH_ACK, 0),
			    roce_syn_make(ROCE_AETH_ACK, 5),
			    roce_syn_make(ROCE_AETH_RNR_NAK, 0),
			    roce_syn_make(ROCE_AETH_RNR_NAK, 1),
			    roce_syn_make(ROCE_AETH_RNR_NAK, 31),
			    roce_syn_make(ROCE_AETH_NAK, ROCE_NAK_PSN_SEQ_ERR),
			    roce_syn_make(ROCE_AETH_RESERVED, 0),
			    roce_syn_make(ROCE_AETH_NAK, ROCE_NAK_INVALID_REQUEST),
			    roce_syn_make(ROCE_AETH_NAK, ROCE_NAK_REMOTE_ACCESS_ERR),
			    roce_syn_make(ROCE_AETH_NAK, ROCE_NAK_REMOTE_OP_ERR),
			    roce_syn_make(ROCE_AETH_NAK, ROCE_NAK_INVALID_RD_REQUEST),
			    roce_syn_make(ROCE_AETH_NAK, 9),
			};
			/*
			 * ACKs, RNR NAKs and sequence NAKs; one in 32 any
			 * syndrome: an error NAK in the window ends the transfer
			 */
			p.aeth.syndrome =
			    r.below(32) && !stale ? syns[r.below(7)] : syns[r.below(sizeof(syns))];
		}
		p.aeth.msn = r.below(2) ? roce_psn_add(st.msn, (uint32_t)r.below(3)) & ROCE_PSN_MASK
					: (uint32_t)r.below(1U << 24);
		by_op[op]++;
		c.send(build(p, bytes(n, (uint8_t)r.next())), "fuzz");
	}
	if (sniff.active())
		sniff.drain(st, c.inj.dst(), c.t.qpn, rqpn, c.t.mtu);
	std::printf("fuzz: target QP %#x: %" PRIu64 " packets of the pair sniffed; last epsn %u, "
		    "requester una %u next %u\nfuzz: opcodes:",
		    c.t.qpn, st.seen, st.epsn, st.una, st.next_psn);
	for (unsigned op = 0; op < 256; op++)
		if (by_op[op])
			std::printf(" %s %" PRIu64, roce_opcode_lookup((uint8_t)op)->name,
				    by_op[op]);
	std::printf("\n");
}

struct Category {
	const char *name;
	bool needs_epsn;
	bool by_default;
};

const Category categories[] = {
    {"empty", false, true},
    {"truncated", false, true},
    {"bad_icrc", false, true},
    {"opcode", false, true},
    {"transport", false, true},
    {"tver", false, true},
    {"pad", false, true},
    {"length", false, true},
    {"unknown_qp", false, true},
    {"bad_pkey", false, true},
    {"bad_address", false, true},
    {"out_of_window", false, true},
    {"duplicate", true, true},
    {"ahead", true, true},
    {"oversized", true, true},
    {"valid", true, true},
    {"random", false, true},
    {"ud", false, true},
    {"fatal", true, false},
    {"steer", true, false},
    {"write_only_big", true, false},
    {"write_last_big", true, false},
    {"replay_first", true, false},
    {"replay", true, false},
    {"fuzz", true, false},
};

void usage(FILE *f)
{
	std::fprintf(f, "usage: softrnic-inject --dst ADDR --qpn N [options] [CATEGORY...]\n"
			"  --dst ADDR        the target device's IP address (IPv4 or IPv6)\n"
			"  --qpn N           the target QP number\n"
			"  --epsn PSN        the PSN the target's responder expects next\n"
			"  --mtu N           the target QP's path MTU (1024)\n"
			"  --va VA, --rkey K a region of the target's the injected WRITEs and\n"
			"                    READs name (write_*_big, replay*)\n"
			"  --src ADDR        source address (default: the route's to --dst)\n"
			"  --spoof ADDR      source for bad_address (default: --src with bit 7 of\n"
			"                    the last byte flipped)\n"
			"  --sport N         UDP source port (0xc000 + random)\n"
			"  --avoid-qpn N     random packets never go to this QPN (repeatable)\n"
			"  --random N        random packets (500)\n"
			"  --seed S          PRNG seed (1)\n"
			"  --fuzz N          fuzz: N packets (2000)\n"
			"  --stale           fuzz: only PSNs far outside every window\n"
			"  --interval US     fuzz: microseconds between packets (0)\n"
			"  --sq-psn PSN      fuzz: the target requester's first PSN\n"
			"  --rqpn N          fuzz: the target's peer QPN (what --sniff follows)\n"
			"  --len N           fuzz: the length of the --va/--rkey region\n"
			"  --sniff IF        fuzz: follow the pair's PSNs on interface IF\n"
			"  --while-pid PID   fuzz: stop once process PID is gone (N: at most)\n"
			"  --check           do not send: run every packet through kernel/proto's\n"
			"                    ICRC check and parser, and fail unless each gets the\n"
			"                    verdict its category claims\n"
			"  -v                print each packet (twice: hex dumps)\n"
			"categories:");
	for (const Category &c : categories)
		std::fprintf(f, " %s", c.name);
	std::fprintf(f, "\n  (default: all up to ud)\n");
}

uint64_t num(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = std::strtoull(s, &end, 0);
	if (errno || end == s || *end)
		fatal("bad number '%s'", s);
	return v;
}

} // namespace

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"dst", required_argument, nullptr, 'd'},
	    {"qpn", required_argument, nullptr, 'q'},
	    {"epsn", required_argument, nullptr, 'e'},
	    {"mtu", required_argument, nullptr, 'm'},
	    {"va", required_argument, nullptr, 'V'},
	    {"rkey", required_argument, nullptr, 'K'},
	    {"src", required_argument, nullptr, 's'},
	    {"spoof", required_argument, nullptr, 'S'},
	    {"sport", required_argument, nullptr, 'P'},
	    {"avoid-qpn", required_argument, nullptr, 'a'},
	    {"random", required_argument, nullptr, 'r'},
	    {"seed", required_argument, nullptr, 'R'},
	    {"verbose", no_argument, nullptr, 'v'},
	    {"check", no_argument, nullptr, 'C'},
	    {"fuzz", required_argument, nullptr, 'F'},
	    {"stale", no_argument, nullptr, 'T'},
	    {"interval", required_argument, nullptr, 'U'},
	    {"sq-psn", required_argument, nullptr, 'Q'},
	    {"rqpn", required_argument, nullptr, 'N'},
	    {"len", required_argument, nullptr, 'L'},
	    {"sniff", required_argument, nullptr, 'I'},
	    {"while-pid", required_argument, nullptr, 'W'},
	    {"help", no_argument, nullptr, 'h'},
	    {nullptr, 0, nullptr, 0},
	};
	bool check = false;
	const char *dst_s = nullptr, *src_s = nullptr, *spoof_s = nullptr;
	Target t{};
	bool have_qpn = false;
	uint64_t seed = 1;
	unsigned nrandom = 500, nfuzz = 2000;
	uint32_t rqpn = 0, arena_len = 0;
	const char *sniff_if = nullptr;
	int while_pid = 0;
	bool fuzz_stale = false;
	unsigned interval_us = 0;
	int sport = -1;
	int c;

	t.mtu = 1024;
	while ((c = getopt_long(argc, argv, "vh", longopts, nullptr)) != -1) {
		switch (c) {
		case 'd':
			dst_s = optarg;
			break;
		case 'q':
			t.qpn = (uint32_t)num(optarg) & ROCE_QPN_MASK;
			have_qpn = true;
			break;
		case 'e':
			t.epsn = (uint32_t)num(optarg) & ROCE_PSN_MASK;
			t.have_epsn = true;
			break;
		case 'm':
			t.mtu = (uint32_t)num(optarg);
			break;
		case 'V':
			t.va = num(optarg);
			break;
		case 'K':
			t.rkey = (uint32_t)num(optarg);
			break;
		case 's':
			src_s = optarg;
			break;
		case 'S':
			spoof_s = optarg;
			break;
		case 'P':
			sport = (int)num(optarg);
			break;
		case 'a':
			t.avoid.push_back((uint32_t)num(optarg) & ROCE_QPN_MASK);
			break;
		case 'r':
			nrandom = (unsigned)num(optarg);
			break;
		case 'R':
			seed = num(optarg);
			break;
		case 'v':
			verbose++;
			break;
		case 'C':
			check = true;
			break;
		case 'F':
			nfuzz = (unsigned)num(optarg);
			break;
		case 'Q':
			t.sq_psn = (uint32_t)num(optarg) & ROCE_PSN_MASK;
			break;
		case 'N':
			rqpn = (uint32_t)num(optarg) & ROCE_QPN_MASK;
			break;
		case 'L':
			arena_len = (uint32_t)num(optarg);
			break;
		case 'I':
			sniff_if = optarg;
			break;
		case 'W':
			while_pid = (int)num(optarg);
			break;
		case 'T':
			fuzz_stale = true;
			break;
		case 'U':
			interval_us = (unsigned)num(optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!dst_s || !have_qpn) {
		usage(stderr);
		return 2;
	}
	if (t.mtu < 256 || t.mtu > 4096)
		fatal("--mtu must be 256 .. 4096");

	std::vector<std::string> want;
	for (int i = optind; i < argc; i++) {
		bool known = false;
		for (const Category &cat : categories)
			known |= std::string(cat.name) == argv[i];
		if (!known)
			fatal("unknown category '%s'", argv[i]);
		want.push_back(argv[i]);
	}
	if (want.empty())
		for (const Category &cat : categories)
			if (cat.by_default)
				want.push_back(cat.name);

	Addr dst = parse_addr(dst_s);
	Addr src = src_s ? parse_addr(src_s) : check ? dst : route_source(dst);
	if (src.v6 != dst.v6)
		fatal("--src and --dst are of different families");
	t.spoof = src;
	t.spoof.b[src.len() - 1] ^= 0x80;
	if (spoof_s)
		t.spoof = parse_addr(spoof_s);
	if (t.spoof.v6 != dst.v6)
		fatal("--spoof and --dst are of different families");

	Rng r(seed);
	/*
	 * RoCE's source ports are 0xc000 and up (rdma_get_udp_sport()); the
	 * fuzz mode's sniffer tells the pair's packets from fuzzers' by a
	 * port below that range, which the transport does not check.
	 */
	bool fuzzing = std::find(want.begin(), want.end(), "fuzz") != want.end();
	Injector inj(
	    dst, src,
	    (uint16_t)(sport >= 0 ? sport : (fuzzing ? 0x8000 : 0xc000) + (int)r.below(0x4000)),
	    seed);
	inj.check_only = check;
	if (!check)
		inj.open_socket();
	Sniffer sniff;
	if (sniff_if && !check)
		sniff.open(sniff_if);
	std::string epsn =
	    t.have_epsn ? "expected PSN " + std::to_string(t.epsn) : "no expected PSN";
	std::printf("inject: %s%s -> %s QPN %#x, %s, path MTU %u, seed %" PRIu64 "\n",
		    check ? "check only: " : "", src.str().c_str(), dst.str().c_str(), t.qpn,
		    epsn.c_str(), t.mtu, seed);
	std::fflush(stdout); /* a test waits for this line: the sniffer is open */

	Expect total;
	for (const std::string &name : want) {
		const Category *cat = nullptr;
		for (const Category &k : categories)
			if (name == k.name)
				cat = &k;
		if (cat->needs_epsn && !t.have_epsn) {
			std::printf("inject: %s skipped (needs --epsn)\n", cat->name);
			continue;
		}
		Ctx ctx{inj, t, cat->name, {}, 0};
		if (name == "ud")
			cat_ud(ctx);
		else if (name == "empty")
			cat_empty(ctx);
		else if (name == "truncated")
			cat_truncated(ctx);
		else if (name == "bad_icrc")
			cat_bad_icrc(ctx);
		else if (name == "opcode")
			cat_opcode(ctx);
		else if (name == "transport")
			cat_transport(ctx);
		else if (name == "tver")
			cat_tver(ctx);
		else if (name == "pad")
			cat_pad(ctx);
		else if (name == "length")
			cat_length(ctx);
		else if (name == "unknown_qp")
			cat_unknown_qp(ctx);
		else if (name == "bad_pkey")
			cat_bad_pkey(ctx);
		else if (name == "bad_address")
			cat_bad_address(ctx);
		else if (name == "out_of_window")
			cat_out_of_window(ctx);
		else if (name == "duplicate")
			cat_duplicate(ctx);
		else if (name == "ahead")
			cat_ahead(ctx);
		else if (name == "oversized")
			cat_oversized(ctx);
		else if (name == "valid")
			cat_valid(ctx);
		else if (name == "random")
			cat_random(ctx, nrandom);
		else if (name == "fatal")
			cat_fatal(ctx);
		else if (name == "steer")
			cat_steer(ctx);
		else if (name == "write_only_big")
			cat_write_only_big(ctx);
		else if (name == "write_last_big")
			cat_write_last_big(ctx);
		else if (name == "replay_first")
			cat_replay_first(ctx);
		else if (name == "replay")
			cat_replay(ctx);
		else if (name == "fuzz")
			cat_fuzz(ctx, nfuzz, fuzz_stale, sniff, rqpn, arena_len, while_pid,
				 interval_us);
		std::printf("inject: %s %" PRIu64 " packets\n", cat->name, ctx.n);
		for (const auto &[k, v] : ctx.expect)
			total[k] += v;
	}
	for (const auto &[k, v] : total)
		std::printf("expect %s %" PRIu64 "\n", k.c_str(), v);
	std::printf("inject: %s %" PRIu64 " packets\n", check ? "checked" : "sent", inj.sent());
	if (check_failures) {
		std::printf("inject: %" PRIu64 " packets do not do what their category says\n",
			    check_failures);
		return 1;
	}
	return 0;
}
