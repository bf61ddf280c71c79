// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "tool/nldev_client.h"

#include <cerrno>
#include <cstring>
#include <linux/netlink.h>

namespace softrnic::tool
{

Error NldevClient::open_error(int code)
{
	// Said here, not in the errno mapping: once connected, EPROTONOSUPPORT
	// from NEWLINK means something else (softrnic refuses a non-Ethernet
	// netdev with it).
	if (code == EPROTONOSUPPORT)
		return make_error(code, "this kernel has no RDMA netlink support "
					"(CONFIG_INFINIBAND off or ib_core not loadable)");
	return make_error(code,
			  std::string("cannot open an RDMA netlink socket: ") + strerror(code));
}

Result<std::unique_ptr<RdmaApi>> NldevClient::open()
{
	auto sock = NlSocket::open(NETLINK_RDMA);
	if (!sock)
		return open_error(sock.error().code);
	return std::unique_ptr<RdmaApi>(new NldevClient(std::move(sock).value()));
}

template <typename T, typename Parse>
Result<T> NldevClient::query_one(const NlRequest &req, Parse parse)
{
	auto replies = sock_.transact(req);
	if (!replies)
		return replies.error();
	if (replies->size() != 1)
		return make_error(EBADMSG, "expected one reply message, got " +
					       std::to_string(replies->size()));
	auto msg = view_message(replies->front());
	if (!msg)
		return msg.error();
	return parse(*msg);
}

Result<std::vector<DeviceInfo>> NldevClient::devices()
{
	auto replies = sock_.transact(build_dev_dump(sock_.next_seq()));
	if (!replies)
		return replies.error();
	std::vector<DeviceInfo> devs;
	for (const Bytes &buf : *replies) {
		auto msg = view_message(buf);
		if (!msg)
			return msg.error();
		auto dev = parse_device(*msg);
		if (!dev)
			return dev.error();
		devs.push_back(std::move(dev).value());
	}
	return devs;
}

Result<PortInfo> NldevClient::port(uint32_t dev_index, uint32_t port)
{
	return query_one<PortInfo>(build_port_get(sock_.next_seq(), dev_index, port), parse_port);
}

Result<ChardevInfo> NldevClient::uverbs(uint32_t dev_index)
{
	return query_one<ChardevInfo>(build_chardev_get(sock_.next_seq(), dev_index, "uverbs"),
				      parse_chardev);
}

Status NldevClient::newlink(std::string_view name, std::string_view link_type,
			    std::string_view netdev)
{
	auto replies = sock_.transact(build_newlink(sock_.next_seq(), name, link_type, netdev));
	if (!replies)
		return replies.error();
	return {};
}

Status NldevClient::dellink(uint32_t dev_index)
{
	auto replies = sock_.transact(build_dellink(sock_.next_seq(), dev_index));
	if (!replies)
		return replies.error();
	return {};
}

Result<PortCounters> NldevClient::counters(uint32_t dev_index, uint32_t port)
{
	return query_one<PortCounters>(build_stat_get(sock_.next_seq(), dev_index, port),
				       parse_port_counters);
}

Result<std::vector<QpCounter>> NldevClient::qp_counters(uint32_t dev_index, uint32_t port)
{
	auto replies = sock_.transact(build_qp_counter_dump(sock_.next_seq(), dev_index, port));
	if (!replies)
		return replies.error();
	std::vector<QpCounter> out;
	for (const Bytes &buf : *replies) {
		auto msg = view_message(buf);
		if (!msg)
			return msg.error();
		if (Status st = parse_qp_counters(*msg, out); !st)
			return st.error();
	}
	return out;
}

} // namespace softrnic::tool
