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

enum class Command { list, show, stats, add, del, help, version };

struct Options {
	Command command = Command::list;
	bool all = false;      // list, show, stats: every RDMA device, not only ours
	bool force = false;    // del: also delete devices of other drivers
	bool json = false;     // -j: JSON output (list, show, stats, version)
	bool pretty = false;   // -p: indented JSON (implies json)
	std::string name;      // add, del; show and stats: empty for all devices
	std::string link_type; // add: "roce" or "iwarp"
	std::string netdev;    // add
};

struct UsageError {
	std::string message;
};

// `args` excludes argv[0].  Options may appear anywhere; "--" ends them.
// add takes the rdma tool's form, NAME type TYPE netdev NETDEV (the two
// keyword pairs in either order), or the short NAME TYPE NETDEV.
Result<Options, UsageError> parse_args(std::span<const std::string_view> args);

// Name checks mirror the kernel's own limits so that mistakes are caught
// here with a clear message; nullopt means valid.
std::optional<std::string> check_device_name(std::string_view name);
std::optional<std::string> check_netdev_name(std::string_view name);
bool is_link_type(std::string_view type);

std::string usage_text();
std::string version_text();
std::string version_json(bool pretty);

} // namespace softrnic::tool

#endif
