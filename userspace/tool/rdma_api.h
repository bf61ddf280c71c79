// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// What the commands need from the kernel's RDMA netlink interface.  An
// interface so the command logic can run against a fake in unit tests.
#ifndef SOFTRNIC_TOOL_RDMA_API_H
#define SOFTRNIC_TOOL_RDMA_API_H

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "tool/rdma_nldev.h"
#include "tool/result.h"

namespace softrnic::tool
{

class RdmaApi
{
public:
	virtual ~RdmaApi() = default;

	// Every RDMA device visible in our network namespace.
	virtual Result<std::vector<DeviceInfo>> devices() = 0;
	virtual Result<PortInfo> port(uint32_t dev_index, uint32_t port) = 0;
	// The device's uverbs character device and driver id.
	virtual Result<ChardevInfo> uverbs(uint32_t dev_index) = 0;
	virtual Status newlink(std::string_view name, std::string_view link_type,
			       std::string_view netdev) = 0;
	virtual Status dellink(uint32_t dev_index) = 0;
	// The port's hardware counters; EOPNOTSUPP if the device has none.
	virtual Result<PortCounters> counters(uint32_t dev_index, uint32_t port) = 0;
	// The port's QP counter groups (`rdma statistic qp show`), maybe none;
	// EOPNOTSUPP or EINVAL if the device has no such counters.
	virtual Result<std::vector<QpCounter>> qp_counters(uint32_t dev_index, uint32_t port) = 0;
};

// Opens the connection to the kernel lazily, so usage errors and --help
// never touch netlink.
using RdmaApiFactory = std::function<Result<std::unique_ptr<RdmaApi>>()>;

} // namespace softrnic::tool

#endif
