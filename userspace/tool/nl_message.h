// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Netlink framing, independent of any socket: building a request, cutting a
// received datagram into messages, decoding acks (with extended-ack text),
// and deciding when a request's reply is complete.  Everything here works on
// plain byte buffers so it can be unit-tested on a host without RDMA.
#ifndef SOFTRNIC_TOOL_NL_MESSAGE_H
#define SOFTRNIC_TOOL_NL_MESSAGE_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tool/result.h"

struct nlattr;

namespace softrnic::tool
{

using Bytes = std::vector<std::byte>;
using ByteView = std::span<const std::byte>;

// One message inside a datagram; `bytes` covers header and payload.
struct NlMessage {
	uint16_t type = 0;
	uint16_t flags = 0;
	uint32_t seq = 0;
	uint32_t portid = 0;
	ByteView bytes;

	// Payload after the (aligned) netlink header.
	ByteView payload() const;
};

// Builds one request message.  The buffer grows as attributes are added,
// so no size has to be guessed up front.
class NlRequest
{
public:
	NlRequest(uint16_t type, uint16_t flags, uint32_t seq);

	void put_u32(uint16_t attr, uint32_t value);
	void put_string(uint16_t attr, std::string_view value); // NUL-terminated

	uint32_t seq() const { return seq_; }
	ByteView bytes() const { return {buf_.data(), buf_.size()}; }

private:
	void put(uint16_t attr, const void *data, size_t len);

	Bytes buf_;
	uint32_t seq_;
};

// Cuts a datagram into messages.  Fails with EBADMSG if a header claims
// more bytes than are present, or the buffer is not 4-byte aligned.
Result<std::vector<NlMessage>> split_datagram(ByteView datagram);

// Outcome carried by NLMSG_ERROR (and by the error word of NLMSG_DONE).
struct NlAck {
	int error = 0;	     // positive errno, 0 for a plain ack
	std::string message; // NLMSGERR_ATTR_MSG if the kernel sent one
};

// Decodes NLMSG_ERROR, honouring NLM_F_CAPPED and NLM_F_ACK_TLVS.
Result<NlAck> parse_ack(const NlMessage &msg);
// Decodes NLMSG_DONE: an optional error word plus optional ack TLVs.
Result<NlAck> parse_done(const NlMessage &msg);

// Calls fn for each attribute in a payload.  Fails with EBADMSG if an
// attribute header overruns the payload.  fn may return an error to stop.
Status for_each_attr(ByteView payload, const std::function<Status(const nlattr &)> &fn);

// Collects the replies to one request: data messages are kept (copied),
// the first ack or NLMSG_DONE ends the exchange, an error ack fails it.
// Messages with another sequence number (stale replies) are skipped.
class ReplyCollector
{
public:
	explicit ReplyCollector(uint32_t seq) : seq_(seq) {}

	// Feeds one received datagram.  Returns true once the reply is
	// complete, false if more datagrams are needed.
	Result<bool> feed(ByteView datagram);

	const std::vector<Bytes> &messages() const { return messages_; }
	std::vector<Bytes> take_messages() { return std::move(messages_); }

private:
	uint32_t seq_;
	bool done_ = false;
	std::vector<Bytes> messages_;
};

// View a collected message again (the bytes stay owned by the collector).
Result<NlMessage> view_message(const Bytes &buf);

} // namespace softrnic::tool

#endif
