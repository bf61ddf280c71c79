// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The list, add and del commands.  They talk to the kernel only through
// RdmaApi and write only to the streams in CommandEnv, so they can be
// exercised with a fake kernel.
#ifndef SOFTRNIC_TOOL_COMMANDS_H
#define SOFTRNIC_TOOL_COMMANDS_H

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "tool/cli_args.h"
#include "tool/device_table.h"
#include "tool/rdma_api.h"

namespace softrnic::tool
{

enum ExitCode : int {
	kExitOk = 0,
	kExitFailure = 1, // kernel or runtime error
	kExitUsage = 2,
};

struct CommandEnv {
	RdmaApiFactory open_api;
	std::filesystem::path sysfs_root = "/sys";
	std::ostream &out;
	std::ostream &err;
};

struct ListOutput {
	std::vector<DeviceRow> rows;
	std::vector<std::string> warnings; // one line each, no newline
};

// Rows for `list`: softrnic devices only unless `all`.  A device whose
// port or chardev query fails still gets a row with "-" cells; failures
// that are not explained by a device vanishing meanwhile or having no
// uverbs node become warnings.  Only the device dump failing is an error.
Result<ListOutput> collect_rows(RdmaApi &api, bool all, const std::filesystem::path &sysfs_root);

// Runs list, add or del (help and version are main's business) and
// returns the exit code; errors are reported on env.err.
int run_command(const Options &opts, CommandEnv &env);

} // namespace softrnic::tool

#endif
