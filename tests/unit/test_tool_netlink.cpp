// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Netlink framing of the softrnic tool: requests, datagram splitting, acks
// with extended-ack text, and the reply collector.  Messages are built by
// hand with libmnl, as the kernel would send them.
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>

#include "tool/nl_message.h"

using namespace softrnic::tool;

namespace
{

// A datagram being assembled: messages appended back to back, aligned.
class Datagram
{
public:
	nlmsghdr *add(uint16_t type, uint16_t flags, uint32_t seq)
	{
		off_ = buf_.size();
		buf_.resize(off_ + 4096);
		nlmsghdr *nlh = mnl_nlmsg_put_header(buf_.data() + off_);
		nlh->nlmsg_type = type;
		nlh->nlmsg_flags = flags;
		nlh->nlmsg_seq = seq;
		return nlh;
	}
	// Call after filling the last message added.
	void close()
	{
		auto *nlh = reinterpret_cast<nlmsghdr *>(buf_.data() + off_);
		buf_.resize(off_ + MNL_ALIGN(nlh->nlmsg_len));
	}
	nlmsghdr *last() { return reinterpret_cast<nlmsghdr *>(buf_.data() + off_); }
	ByteView view() const { return {buf_.data(), buf_.size()}; }
	Bytes &bytes() { return buf_; }

private:
	Bytes buf_;
	size_t off_ = 0;
};

// An NLMSG_ERROR as netlink_ack() builds it.
void add_error(Datagram &dg, uint32_t seq, int err, const char *text, bool capped,
	       size_t echoed_payload = 0)
{
	uint16_t flags = 0;
	if (capped)
		flags |= NLM_F_CAPPED;
	if (text)
		flags |= NLM_F_ACK_TLVS;
	nlmsghdr *nlh = dg.add(NLMSG_ERROR, flags, seq);
	auto *e = static_cast<nlmsgerr *>(mnl_nlmsg_put_extra_header(nlh, sizeof(nlmsgerr)));
	e->error = -err;
	e->msg.nlmsg_len = sizeof(nlmsghdr) + (capped ? 0 : echoed_payload);
	e->msg.nlmsg_seq = seq;
	if (!capped && echoed_payload) {
		void *echo = mnl_nlmsg_put_extra_header(nlh, echoed_payload);
		std::memset(echo, 0xab, echoed_payload);
	}
	if (text) {
		mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG, text);
		mnl_attr_put_u32(nlh, NLMSGERR_ATTR_OFFS, 20);
	}
	dg.close();
}

void add_data(Datagram &dg, uint16_t type, uint32_t seq, uint32_t value)
{
	nlmsghdr *nlh = dg.add(type, NLM_F_MULTI, seq);
	mnl_attr_put_u32(nlh, 1, value);
	dg.close();
}

void add_done(Datagram &dg, uint32_t seq, int err)
{
	nlmsghdr *nlh = dg.add(NLMSG_DONE, NLM_F_MULTI, seq);
	int32_t code = -err;
	std::memcpy(mnl_nlmsg_put_extra_header(nlh, sizeof(code)), &code, sizeof(code));
	dg.close();
}

} // namespace

TEST_CASE("tool: request builder lays out aligned, NUL-terminated attributes", "[tool]")
{
	NlRequest req(0x1234, NLM_F_REQUEST | NLM_F_ACK, 77);
	req.put_string(5, "abc");
	req.put_u32(6, 0xdeadbeef);
	ByteView b = req.bytes();

	nlmsghdr h;
	std::memcpy(&h, b.data(), sizeof(h));
	CHECK(h.nlmsg_type == 0x1234);
	CHECK(h.nlmsg_flags == (NLM_F_REQUEST | NLM_F_ACK));
	CHECK(h.nlmsg_seq == 77);
	CHECK(h.nlmsg_len == b.size());
	// header 16 + string attr (4 + "abc\0") 8 + u32 attr 8
	CHECK(b.size() == 16 + 8 + 8);

	auto *nlh = reinterpret_cast<const nlmsghdr *>(b.data());
	auto *a = static_cast<const nlattr *>(mnl_nlmsg_get_payload(nlh));
	CHECK(mnl_attr_get_type(a) == 5);
	CHECK(mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0);
	CHECK(std::string(mnl_attr_get_str(a)) == "abc");
	a = mnl_attr_next(a);
	CHECK(mnl_attr_get_type(a) == 6);
	CHECK(mnl_attr_get_u32(a) == 0xdeadbeef);
}

TEST_CASE("tool: split_datagram cuts back-to-back messages", "[tool]")
{
	Datagram dg;
	add_data(dg, 0x1401, 9, 1);
	add_data(dg, 0x1401, 9, 2);
	add_done(dg, 9, 0);

	auto msgs = split_datagram(dg.view());
	REQUIRE(msgs);
	REQUIRE(msgs->size() == 3);
	CHECK((*msgs)[0].type == 0x1401);
	CHECK((*msgs)[1].flags == NLM_F_MULTI);
	CHECK((*msgs)[2].type == NLMSG_DONE);
	CHECK((*msgs)[0].payload().size() == 8);
}

TEST_CASE("tool: split_datagram rejects truncated or lying headers", "[tool]")
{
	Datagram dg;
	add_data(dg, 0x1401, 9, 1);
	Bytes &b = dg.bytes();

	SECTION("length beyond the buffer")
	{
		b.resize(b.size() - 4);
		auto r = split_datagram({b.data(), b.size()});
		REQUIRE_FALSE(r);
		CHECK(r.error().code == EBADMSG);
	}
	SECTION("length shorter than a header")
	{
		uint32_t len = 8;
		std::memcpy(b.data(), &len, sizeof(len));
		REQUIRE_FALSE(split_datagram({b.data(), b.size()}));
	}
	SECTION("trailing bytes too short for a header")
	{
		b.resize(b.size() + 4);
		REQUIRE_FALSE(split_datagram({b.data(), b.size()}));
	}
	SECTION("unaligned buffer")
	{
		REQUIRE_FALSE(split_datagram({b.data() + 1, b.size() - 1}));
	}
	SECTION("empty datagram is no messages")
	{
		auto r = split_datagram({});
		REQUIRE(r);
		CHECK(r->empty());
	}
}

TEST_CASE("tool: parse_ack reads errno and extended-ack text", "[tool]")
{
	SECTION("plain ack")
	{
		Datagram dg;
		add_error(dg, 1, 0, nullptr, true);
		auto ack = parse_ack(split_datagram(dg.view())->front());
		REQUIRE(ack);
		CHECK(ack->error == 0);
		CHECK(ack->message.empty());
	}
	SECTION("error, capped, with message")
	{
		Datagram dg;
		add_error(dg, 1, ENODEV, "no such netdev", true);
		auto ack = parse_ack(split_datagram(dg.view())->front());
		REQUIRE(ack);
		CHECK(ack->error == ENODEV);
		CHECK(ack->message == "no such netdev");
	}
	SECTION("error, uncapped: text follows the echoed request")
	{
		Datagram dg;
		add_error(dg, 1, EINVAL, "bad attribute", false, 22); // 22 pads to 24
		auto ack = parse_ack(split_datagram(dg.view())->front());
		REQUIRE(ack);
		CHECK(ack->error == EINVAL);
		CHECK(ack->message == "bad attribute");
	}
	SECTION("error without TLVs")
	{
		Datagram dg;
		add_error(dg, 1, EPERM, nullptr, false, 8);
		auto ack = parse_ack(split_datagram(dg.view())->front());
		REQUIRE(ack);
		CHECK(ack->error == EPERM);
		CHECK(ack->message.empty());
	}
	SECTION("short error message")
	{
		Datagram dg;
		nlmsghdr *nlh = dg.add(NLMSG_ERROR, 0, 1);
		mnl_nlmsg_put_extra_header(nlh, 4);
		dg.close();
		auto ack = parse_ack(split_datagram(dg.view())->front());
		REQUIRE_FALSE(ack);
		CHECK(ack.error().code == EBADMSG);
	}
}

TEST_CASE("tool: reply collector gathers a dump until NLMSG_DONE", "[tool]")
{
	ReplyCollector rc(42);
	Datagram first;
	add_data(first, 0x1401, 42, 1);
	add_data(first, 0x1401, 41, 99); // stale reply to an older request
	add_data(first, 0x1401, 42, 2);
	auto r = rc.feed(first.view());
	REQUIRE(r);
	CHECK_FALSE(*r);

	Datagram second;
	add_data(second, 0x1401, 42, 3);
	add_done(second, 42, 0);
	r = rc.feed(second.view());
	REQUIRE(r);
	CHECK(*r);
	REQUIRE(rc.messages().size() == 3);
	auto m = view_message(rc.messages()[2]);
	REQUIRE(m);
	auto *a = reinterpret_cast<const nlattr *>(m->payload().data());
	CHECK(mnl_attr_get_u32(a) == 3);
}

TEST_CASE("tool: reply collector ends on an ack and fails on an error", "[tool]")
{
	SECTION("data then ack")
	{
		ReplyCollector rc(5);
		Datagram dg;
		add_data(dg, 0x1409, 5, 7);
		add_error(dg, 5, 0, nullptr, true);
		auto r = rc.feed(dg.view());
		REQUIRE(r);
		CHECK(*r);
		CHECK(rc.messages().size() == 1);
	}
	SECTION("error ack carries errno and text")
	{
		ReplyCollector rc(5);
		Datagram dg;
		add_error(dg, 5, ENODEV, "netdev gone", true);
		auto r = rc.feed(dg.view());
		REQUIRE_FALSE(r);
		CHECK(r.error().code == ENODEV);
		CHECK(r.error().kernel_msg == "netdev gone");
	}
	SECTION("error ack for another sequence is ignored")
	{
		ReplyCollector rc(5);
		Datagram dg;
		add_error(dg, 4, EINVAL, nullptr, true);
		auto r = rc.feed(dg.view());
		REQUIRE(r);
		CHECK_FALSE(*r);
	}
	SECTION("dump error in NLMSG_DONE")
	{
		ReplyCollector rc(5);
		Datagram dg;
		add_done(dg, 5, EMSGSIZE);
		auto r = rc.feed(dg.view());
		REQUIRE_FALSE(r);
		CHECK(r.error().code == EMSGSIZE);
	}
	SECTION("overrun")
	{
		ReplyCollector rc(5);
		Datagram dg;
		dg.add(NLMSG_OVERRUN, 0, 5);
		dg.close();
		auto r = rc.feed(dg.view());
		REQUIRE_FALSE(r);
		CHECK(r.error().code == EOVERFLOW);
	}
}

TEST_CASE("tool: for_each_attr stops at overrunning attributes", "[tool]")
{
	Datagram dg;
	nlmsghdr *nlh = dg.add(0x1401, 0, 1);
	mnl_attr_put_u32(nlh, 1, 1);
	mnl_attr_put_u32(nlh, 2, 2);
	dg.close();
	ByteView payload = split_datagram(dg.view())->front().payload();

	int seen = 0;
	Status st = for_each_attr(payload, [&](const nlattr &) -> Status {
		seen++;
		return {};
	});
	CHECK(st);
	CHECK(seen == 2);

	// Claim the second attribute is longer than what is left.
	auto *second = reinterpret_cast<nlattr *>(dg.bytes().data() + 16 + 8);
	second->nla_len = 64;
	st = for_each_attr(payload, [](const nlattr &) -> Status { return {}; });
	REQUIRE_FALSE(st);
	CHECK(st.error().code == EBADMSG);
}
