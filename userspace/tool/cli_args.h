// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Command line: parsing and validation (before any kernel contact), plus
// the help and version texts.
#ifndef SOFTRNIC_TOOL_CLI_ARGS_H
#define SOFTRNIC_TOOL_CLI_ARGS_H

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "tool/result.h"

namespace softrnic::tool
{

enum class Command { list, add, del, help, version };

struct Options {
	Command command = Command::list;
	bool all = false;      // list: every RDMA device, not only ours
	bool force = false;    // del: also delete devices of other drivers
	std::string name;      // add, del
	std::string link_type; // add: "roce" or "iwarp"
	std::string netdev;    // add
};

struct UsageError {
	std::string message;
};

// `args` excludes argv[0].  Options may appear anywhere; "--" ends them.
Result<Options, UsageError> parse_args(std::span<const std::string_view> args);

// Name checks mirror the kernel's own limits so that mistakes are caught
// here with a clear message; nullopt means valid.
std::optional<std::string> check_device_name(std::string_view name);
std::optional<std::string> check_netdev_name(std::string_view name);
bool is_link_type(std::string_view type);

std::string usage_text();
std::string version_text();

} // namespace softrnic::tool

#endif
