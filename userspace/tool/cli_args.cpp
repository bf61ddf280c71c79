// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "tool/cli_args.h"

#include <cstdio>
#include <vector>

#include "softrnic-abi.h"
#include "tool/json.h"

#ifndef SOFTRNIC_TOOL_VERSION
#define SOFTRNIC_TOOL_VERSION "unknown"
#endif

namespace softrnic::tool
{

namespace
{

// Kernel limits: IB_DEVICE_NAME_MAX and IFNAMSIZ, both counting the NUL.
constexpr size_t kMaxDeviceName = 64 - 1;
constexpr size_t kMaxNetdevName = 16 - 1;

bool has_space(std::string_view s)
{
	for (char c : s)
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f')
			return true;
	return false;
}

std::string quoted(std::string_view s)
{
	return "'" + std::string(s) + "'";
}

UsageError usage(std::string message)
{
	return UsageError{std::move(message)};
}

} // namespace

std::optional<std::string> check_device_name(std::string_view name)
{
	if (name.empty())
		return "device name must not be empty";
	if (name.size() > kMaxDeviceName)
		return "device name " + quoted(name) + " is longer than " +
		       std::to_string(kMaxDeviceName) + " characters";
	// '%' would make the kernel treat the name as a template ("roce%d");
	// nldev_newlink refuses it.
	if (name.find('%') != std::string_view::npos)
		return "device name " + quoted(name) + " must not contain '%'";
	if (name == "." || name == ".." || name.find('/') != std::string_view::npos ||
	    has_space(name))
		return "device name " + quoted(name) + " is not a valid sysfs name";
	return std::nullopt;
}

std::optional<std::string> check_netdev_name(std::string_view name)
{
	// Same rules as the kernel's dev_valid_name().
	if (name.empty())
		return "netdev name must not be empty";
	if (name.size() > kMaxNetdevName)
		return "netdev name " + quoted(name) + " is longer than " +
		       std::to_string(kMaxNetdevName) + " characters";
	if (name == "." || name == ".." || name.find('/') != std::string_view::npos ||
	    name.find(':') != std::string_view::npos || has_space(name))
		return "netdev name " + quoted(name) + " is not a valid interface name";
	return std::nullopt;
}

bool is_link_type(std::string_view type)
{
	return type == "roce" || type == "iwarp";
}

Result<Options, UsageError> parse_args(std::span<const std::string_view> args)
{
	Options opts;
	std::vector<std::string_view> pos;
	bool options_done = false;
	bool want_version = false;

	for (std::string_view a : args) {
		if (options_done || a.size() < 2 || a[0] != '-') {
			pos.push_back(a);
			continue;
		}
		if (a == "--") {
			options_done = true;
		} else if (a == "-h" || a == "--help") {
			// Help wins over everything else on the line.
			Options help;
			help.command = Command::help;
			return help;
		} else if (a == "-V" || a == "--version") {
			want_version = true;
		} else if (a == "-a" || a == "--all") {
			opts.all = true;
		} else if (a == "-f" || a == "--force") {
			opts.force = true;
		} else if (a == "-j" || a == "--json") {
			opts.json = true;
		} else if (a == "-p" || a == "--pretty") {
			opts.json = true;
			opts.pretty = true;
		} else {
			return usage("unknown option " + quoted(a));
		}
	}

	if (want_version) {
		// Wins over any command; only -j/-p still matter.
		Options ver;
		ver.command = Command::version;
		ver.json = opts.json;
		ver.pretty = opts.pretty;
		return ver;
	}

	std::string_view cmd = pos.empty() ? "list" : pos.front();
	size_t nargs = pos.empty() ? 0 : pos.size() - 1;
	auto arg = [&](size_t i) { return pos[i + 1]; };

	if (cmd == "help") {
		Options help;
		help.command = Command::help;
		return help;
	}
	if (cmd == "list") {
		opts.command = Command::list;
		if (nargs != 0)
			return usage("list: unexpected argument " + quoted(arg(0)));
	} else if (cmd == "show" || cmd == "stats") {
		opts.command = cmd == "show" ? Command::show : Command::stats;
		if (nargs > 1)
			return usage(std::string(cmd) + ": unexpected argument " + quoted(arg(1)));
		if (nargs == 1) {
			opts.name = arg(0);
			if (auto bad = check_device_name(opts.name))
				return usage(std::string(cmd) + ": " + *bad);
		}
	} else if (cmd == "add") {
		opts.command = Command::add;
		if (nargs == 5) {
			opts.name = arg(0);
			for (size_t i = 1; i < 5; i += 2) {
				if (arg(i) == "type" && opts.link_type.empty())
					opts.link_type = arg(i + 1);
				else if (arg(i) == "netdev" && opts.netdev.empty())
					opts.netdev = arg(i + 1);
				else
					return usage(
					    "add: expected NAME type roce|iwarp netdev NETDEV, "
					    "not " +
					    quoted(arg(i)));
			}
		} else if (nargs == 3) {
			opts.name = arg(0);
			opts.link_type = arg(1);
			opts.netdev = arg(2);
		} else {
			return usage("add: expected NAME type roce|iwarp netdev NETDEV");
		}
		if (auto bad = check_device_name(opts.name))
			return usage("add: " + *bad);
		if (!is_link_type(opts.link_type))
			return usage("add " + opts.name + ": unknown type " +
				     quoted(opts.link_type) + " (expected roce or iwarp)");
		if (auto bad = check_netdev_name(opts.netdev))
			return usage("add " + opts.name + ": " + *bad);
	} else if (cmd == "del" || cmd == "delete") {
		opts.command = Command::del;
		if (nargs != 1)
			return usage("del: expected NAME");
		opts.name = arg(0);
		if (auto bad = check_device_name(opts.name))
			return usage("del: " + *bad);
	} else {
		return usage("unknown command " + quoted(cmd));
	}

	if (opts.all && opts.command != Command::list && opts.command != Command::show &&
	    opts.command != Command::stats)
		return usage("--all applies to 'list', 'show' and 'stats' only");
	if (opts.all && !opts.name.empty())
		return usage("--all and a device name exclude each other");
	if (opts.force && opts.command != Command::del)
		return usage("--force applies to 'del' only");
	return opts;
}
std::string usage_text()
{
	return "Usage: softrnic [OPTIONS] [list]\n"
	       "       softrnic [OPTIONS] show [NAME]\n"
	       "       softrnic [OPTIONS] stats [NAME]\n"
	       "       softrnic add NAME type roce|iwarp netdev NETDEV\n"
	       "       softrnic add NAME roce|iwarp NETDEV\n"
	       "       softrnic del NAME [--force]\n"
	       "       softrnic help | --help | --version\n"
	       "\n"
	       "Manage softrnic software RDMA devices over RDMA netlink.\n"
	       "\n"
	       "Commands:\n"
	       "  list          one line per softrnic device (the default command)\n"
	       "  show [NAME]   port state, netdev, driver and every GID of NAME or of all "
	       "devices\n"
	       "  stats [NAME]  the port counters of NAME or of all devices\n"
	       "  add NAME type TYPE netdev NETDEV\n"
	       "                create RDMA device NAME of TYPE (roce or iwarp) on NETDEV\n"
	       "  del NAME      delete RDMA device NAME (also: delete)\n"
	       "  help          show this help\n"
	       "\n"
	       "Options:\n"
	       "  -a, --all      list, show, stats: every RDMA device, not only softrnic's\n"
	       "  -f, --force    del: delete NAME even if another driver owns it\n"
	       "  -j, --json     JSON output\n"
	       "  -p, --pretty   indented JSON output (implies --json)\n"
	       "  -h, --help     show this help and exit\n"
	       "  -V, --version  show the version and exit\n"
	       "\n"
	       "Exit status: 0 success, 1 kernel or runtime error, 2 usage error.\n"
	       "add and del need CAP_NET_ADMIN.\n";
}

std::string version_text()
{
	char id[16];
	snprintf(id, sizeof(id), "0x%04x", SOFTRNIC_DRIVER_ID);
	return std::string("softrnic ") + SOFTRNIC_TOOL_VERSION + " (uverbs ABI " +
	       std::to_string(SOFTRNIC_UVERBS_ABI_VERSION) + ", driver id " + id + ")\n";
}

std::string version_json(bool pretty)
{
	Json v = Json::object();
	v.set("version", SOFTRNIC_TOOL_VERSION);
	v.set("uverbs_abi", uint32_t{SOFTRNIC_UVERBS_ABI_VERSION});
	v.set("driver_id", uint32_t{SOFTRNIC_DRIVER_ID});
	return v.dump(pretty);
}

} // namespace softrnic::tool
