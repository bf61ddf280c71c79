// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Turns an Error into the one line the user sees, e.g.
//   softrnic: add roce0: netdev 'eth9' not found (ENODEV)
// The kernel's RDMA link code reports most failures as a bare errno, so the
// text is chosen from the command and errno; extended-ack text from the
// kernel, when present, is appended.
#ifndef SOFTRNIC_TOOL_CLI_ERRORS_H
#define SOFTRNIC_TOOL_CLI_ERRORS_H

#include <string>
#include <string_view>

#include "tool/result.h"

namespace softrnic::tool
{

// What the user asked for, to give the message context.
struct CommandContext {
	std::string_view command;   // "list", "add", "del"
	std::string_view name;	    // device name, empty for list
	std::string_view link_type; // add only
	std::string_view netdev;    // add only
};

// "ENODEV", or "errno 1234" for a value without a name.
std::string errno_name(int code);

// The full line, without a trailing newline.  An Error with code 0 gets no
// errno suffix (used for refusals that are ours, not the kernel's).
std::string describe_error(const CommandContext &ctx, const Error &err);

} // namespace softrnic::tool

#endif
