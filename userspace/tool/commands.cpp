// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "tool/commands.h"

#include <cerrno>
#include <cstring>
#include <optional>

#include "softrnic-abi.h"
#include "tool/cli_errors.h"
#include "tool/sysfs_gid.h"

namespace softrnic::tool
{

namespace
{

// softrnic devices have one port; for others --all shows the first one.
constexpr uint32_t kFirstPort = 1;

bool is_ours(const std::optional<uint32_t> &driver_id)
{
	return driver_id && *driver_id == SOFTRNIC_DRIVER_ID;
}

// Errors a per-device query may legitimately return: the device went away
// after the dump (EINVAL from ib_device_get_by_index, ENODEV), or it has no
// uverbs client (EOPNOTSUPP).
bool expected_query_error(const Error &err)
{
	return err.code == EINVAL || err.code == ENODEV || err.code == EOPNOTSUPP;
}

std::string query_warning(const std::string &dev, const char *what, const Error &err)
{
	std::string text = err.what.empty() ? std::string(strerror(err.code)) : err.what;
	return "softrnic: list: warning: " + dev + ": " + what + ": " + text + " (" +
	       errno_name(err.code) + ")";
}

int fail(CommandEnv &env, const CommandContext &ctx, const Error &err)
{
	env.err << describe_error(ctx, err) << '\n';
	return kExitFailure;
}

int do_list(const Options &opts, CommandEnv &env)
{
	CommandContext ctx{"list", {}, {}, {}};
	auto api = env.open_api();
	if (!api)
		return fail(env, ctx, api.error());
	auto list = collect_rows(**api, opts.all, env.sysfs_root);
	if (!list)
		return fail(env, ctx, list.error());
	for (const std::string &w : list->warnings)
		env.err << w << '\n';
	env.out << format_table(list->rows, opts.all);
	return kExitOk;
}

int do_add(const Options &opts, CommandEnv &env)
{
	CommandContext ctx{"add", opts.name, opts.link_type, opts.netdev};
	auto api = env.open_api();
	if (!api)
		return fail(env, ctx, api.error());
	if (Status st = (*api)->newlink(opts.name, opts.link_type, opts.netdev); !st)
		return fail(env, ctx, st.error());
	return kExitOk;
}

int do_del(const Options &opts, CommandEnv &env)
{
	CommandContext ctx{"del", opts.name, {}, {}};
	auto api = env.open_api();
	if (!api)
		return fail(env, ctx, api.error());

	// DELLINK takes an index; the kernel's GET needs one too, so find
	// the name in a dump.
	auto devs = (*api)->devices();
	if (!devs)
		return fail(env, ctx, devs.error());
	std::optional<uint32_t> index;
	for (const DeviceInfo &d : *devs)
		if (d.name == opts.name)
			index = d.index;
	if (!index)
		return fail(env, ctx, make_error(ENODEV));

	// Refuse only when we positively know another driver owns the
	// device; if the uverbs query fails we cannot tell, and the kernel
	// still refuses devices not created through a link type.
	if (!opts.force) {
		auto cd = (*api)->uverbs(*index);
		if (cd && cd->driver_id && !is_ours(cd->driver_id))
			return fail(env, ctx,
				    make_error(0, "'" + opts.name + "' belongs to driver " +
						      driver_name(cd->driver_id) +
						      ", not softrnic (use --force to delete it "
						      "anyway)"));
	}

	if (Status st = (*api)->dellink(*index); !st)
		return fail(env, ctx, st.error());
	return kExitOk;
}

} // namespace

Result<ListOutput> collect_rows(RdmaApi &api, bool all, const std::filesystem::path &sysfs_root)
{
	auto devs = api.devices();
	if (!devs)
		return devs.error();

	ListOutput list;
	for (const DeviceInfo &dev : *devs) {
		// Ownership is the uverbs driver id: it does not depend on
		// device names and needs nothing from our module beyond
		// registering with its driver id.
		auto cd = api.uverbs(dev.index);
		if (!cd && !expected_query_error(cd.error()))
			list.warnings.push_back(query_warning(dev.name, "uverbs", cd.error()));
		std::optional<uint32_t> driver_id = cd ? cd->driver_id : std::nullopt;
		if (!all && !is_ours(driver_id))
			continue;

		DeviceRow row;
		row.name = dev.name;
		row.type = device_type_name(dev);
		row.driver = driver_name(driver_id);
		if (cd)
			row.uverbs = "/dev/infiniband/" + cd->name;
		if (dev.port_count >= kFirstPort) {
			auto port = api.port(dev.index, kFirstPort);
			if (port) {
				row.netdev = port->netdev;
				row.state = port_state_name(port->state);
			} else if (!expected_query_error(port.error())) {
				list.warnings.push_back(
				    query_warning(dev.name, "port 1", port.error()));
			}
			row.gid0 = read_gid(sysfs_root, dev.name, kFirstPort, 0).value_or("");
		}
		list.rows.push_back(std::move(row));
	}
	return list;
}

int run_command(const Options &opts, CommandEnv &env)
{
	switch (opts.command) {
	case Command::list:
		return do_list(opts, env);
	case Command::add:
		return do_add(opts, env);
	case Command::del:
		return do_del(opts, env);
	case Command::help:
	case Command::version:
		break;
	}
	return kExitUsage;
}

} // namespace softrnic::tool
