// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// RdmaApi over a real NETLINK_RDMA socket.
#ifndef SOFTRNIC_TOOL_NLDEV_CLIENT_H
#define SOFTRNIC_TOOL_NLDEV_CLIENT_H

#include <memory>

#include "tool/nl_socket.h"
#include "tool/rdma_api.h"

namespace softrnic::tool
{

class NldevClient final : public RdmaApi
{
public:
	static Result<std::unique_ptr<RdmaApi>> open();
	// The Error open() reports when the socket cannot be opened.
	static Error open_error(int code);

	Result<std::vector<DeviceInfo>> devices() override;
	Result<PortInfo> port(uint32_t dev_index, uint32_t port) override;
	Result<ChardevInfo> uverbs(uint32_t dev_index) override;
	Status newlink(std::string_view name, std::string_view link_type,
		       std::string_view netdev) override;
	Status dellink(uint32_t dev_index) override;
	Result<PortCounters> counters(uint32_t dev_index, uint32_t port) override;
	Result<std::vector<QpCounter>> qp_counters(uint32_t dev_index, uint32_t port) override;

private:
	explicit NldevClient(NlSocket sock) : sock_(std::move(sock)) {}

	// Runs a request expected to produce exactly one reply message and
	// parses it with `parse`.
	template <typename T, typename Parse>
	Result<T> query_one(const NlRequest &req, Parse parse);

	NlSocket sock_;
};

} // namespace softrnic::tool

#endif
