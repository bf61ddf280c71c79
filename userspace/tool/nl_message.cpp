// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "tool/nl_message.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>

namespace softrnic::tool
{

namespace
{

constexpr size_t kHdrLen = MNL_ALIGN(sizeof(nlmsghdr));

bool aligned(const std::byte *p)
{
	return reinterpret_cast<uintptr_t>(p) % NLMSG_ALIGNTO == 0;
}

Error bad_message(const char *why)
{
	return make_error(EBADMSG, std::string("malformed netlink message: ") + why);
}

// Extended-ack TLVs start at `offset` in an ack payload; only the text is
// used (the attribute offset would only point into our own request).
std::string ack_text(ByteView payload, size_t offset)
{
	if (offset >= payload.size())
		return {};
	std::string text;
	Status st = for_each_attr(payload.subspan(offset), [&](const nlattr &attr) -> Status {
		if (mnl_attr_get_type(&attr) == NLMSGERR_ATTR_MSG &&
		    mnl_attr_validate(&attr, MNL_TYPE_NUL_STRING) == 0)
			text = mnl_attr_get_str(&attr);
		return {};
	});
	// A damaged TLV area must not hide the errno itself.
	return st ? text : std::string();
}

} // namespace

ByteView NlMessage::payload() const
{
	return bytes.size() > kHdrLen ? bytes.subspan(kHdrLen) : ByteView{};
}

NlRequest::NlRequest(uint16_t type, uint16_t flags, uint32_t seq) : buf_(kHdrLen), seq_(seq)
{
	nlmsghdr *nlh = mnl_nlmsg_put_header(buf_.data());
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = flags;
	nlh->nlmsg_seq = seq;
	nlh->nlmsg_pid = 0; // the kernel fills in our port id
}

void NlRequest::put(uint16_t attr, const void *data, size_t len)
{
	// Grow first; mnl_attr_put writes at the current message end and
	// updates nlmsg_len itself.
	buf_.resize(buf_.size() + MNL_ALIGN(MNL_ATTR_HDRLEN + len));
	auto *nlh = reinterpret_cast<nlmsghdr *>(buf_.data());
	mnl_attr_put(nlh, attr, len, data);
}

void NlRequest::put_u32(uint16_t attr, uint32_t value)
{
	put(attr, &value, sizeof(value));
}

void NlRequest::put_string(uint16_t attr, std::string_view value)
{
	std::string z(value); // guarantees the terminating NUL
	put(attr, z.c_str(), z.size() + 1);
}

Result<std::vector<NlMessage>> split_datagram(ByteView datagram)
{
	if (!aligned(datagram.data()))
		return bad_message("unaligned buffer");

	std::vector<NlMessage> out;
	size_t off = 0;
	while (off < datagram.size()) {
		if (datagram.size() - off < sizeof(nlmsghdr))
			return bad_message("truncated header");
		nlmsghdr h;
		std::memcpy(&h, datagram.data() + off, sizeof(h));
		if (h.nlmsg_len < sizeof(nlmsghdr) || h.nlmsg_len > datagram.size() - off)
			return bad_message("bad length");
		out.push_back(NlMessage{h.nlmsg_type, h.nlmsg_flags, h.nlmsg_seq, h.nlmsg_pid,
					datagram.subspan(off, h.nlmsg_len)});
		off += MNL_ALIGN(h.nlmsg_len);
	}
	return out;
}

Result<NlAck> parse_ack(const NlMessage &msg)
{
	ByteView p = msg.payload();
	nlmsgerr err;
	if (msg.type != NLMSG_ERROR || p.size() < sizeof(err))
		return bad_message("short error message");
	std::memcpy(&err, p.data(), sizeof(err));

	NlAck ack;
	ack.error = err.error < 0 ? -err.error : err.error;
	if (msg.flags & NLM_F_ACK_TLVS) {
		size_t off = sizeof(err);
		// Unless capped, the kernel echoes our whole request first.
		if (!(msg.flags & NLM_F_CAPPED) && err.msg.nlmsg_len > sizeof(nlmsghdr))
			off += MNL_ALIGN(err.msg.nlmsg_len - sizeof(nlmsghdr));
		ack.message = ack_text(p, MNL_ALIGN(off));
	}
	return ack;
}

Result<NlAck> parse_done(const NlMessage &msg)
{
	if (msg.type != NLMSG_DONE)
		return bad_message("not a done message");
	ByteView p = msg.payload();
	NlAck ack;
	int32_t code = 0;
	if (p.size() >= sizeof(code)) {
		std::memcpy(&code, p.data(), sizeof(code));
		ack.error = code < 0 ? -code : code;
		if (msg.flags & NLM_F_ACK_TLVS)
			ack.message = ack_text(p, MNL_ALIGN(sizeof(code)));
	}
	return ack;
}

Status for_each_attr(ByteView payload, const std::function<Status(const nlattr &)> &fn)
{
	if (!aligned(payload.data()))
		return bad_message("unaligned attributes");
	size_t off = 0;
	while (payload.size() - off >= MNL_ATTR_HDRLEN) {
		const auto *attr = reinterpret_cast<const nlattr *>(payload.data() + off);
		if (attr->nla_len < MNL_ATTR_HDRLEN || attr->nla_len > payload.size() - off)
			return bad_message("attribute overruns message");
		if (Status st = fn(*attr); !st)
			return st;
		off += MNL_ALIGN(attr->nla_len);
	}
	return {};
}

Result<bool> ReplyCollector::feed(ByteView datagram)
{
	auto msgs = split_datagram(datagram);
	if (!msgs)
		return msgs.error();

	for (const NlMessage &m : *msgs) {
		if (done_)
			break;
		if (m.seq != seq_)
			continue; // late reply to an earlier request
		switch (m.type) {
		case NLMSG_NOOP:
			break;
		case NLMSG_OVERRUN:
			return make_error(EOVERFLOW, "netlink reply overrun");
		case NLMSG_ERROR:
		case NLMSG_DONE: {
			auto ack = m.type == NLMSG_ERROR ? parse_ack(m) : parse_done(m);
			if (!ack)
				return ack.error();
			if (ack->error)
				return Error{ack->error, ack->message, {}};
			done_ = true;
			break;
		}
		default:
			messages_.emplace_back(m.bytes.begin(), m.bytes.end());
			break;
		}
	}
	return done_;
}

Result<NlMessage> view_message(const Bytes &buf)
{
	auto msgs = split_datagram({buf.data(), buf.size()});
	if (!msgs)
		return msgs.error();
	if (msgs->size() != 1)
		return bad_message("expected exactly one message");
	return msgs->front();
}

} // namespace softrnic::tool
