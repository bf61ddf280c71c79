// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// softrnic: create, delete, list, show and count softrnic RDMA devices.
#include <exception>
#include <iostream>
#include <string_view>
#include <vector>

#include "tool/cli_args.h"
#include "tool/commands.h"
#include "tool/nldev_client.h"

using namespace softrnic::tool;

namespace
{

int run(int argc, char **argv)
{
	std::vector<std::string_view> args(argv + (argc > 0 ? 1 : 0), argv + argc);
	auto opts = parse_args(args);
	if (!opts) {
		std::cerr << "softrnic: " << opts.error().message << '\n'
			  << "Try 'softrnic --help' for more information.\n";
		return kExitUsage;
	}

	int rc = kExitOk;
	switch (opts->command) {
	case Command::help:
		std::cout << usage_text();
		break;
	case Command::version:
		std::cout << (opts->json ? version_json(opts->pretty) : version_text());
		break;
	default: {
		CommandEnv env{NldevClient::open, "/sys", std::cout, std::cerr};
		rc = run_command(*opts, env);
		break;
	}
	}

	// A full disk or closed pipe must not look like success.
	if (!std::cout.flush()) {
		std::cerr << "softrnic: error writing to standard output\n";
		return kExitFailure;
	}
	return rc;
}

} // namespace

int main(int argc, char **argv)
{
	try {
		return run(argc, argv);
	} catch (const std::exception &e) {
		std::cerr << "softrnic: internal error: " << e.what() << '\n';
	} catch (...) {
		std::cerr << "softrnic: internal error\n";
	}
	return kExitFailure;
}
