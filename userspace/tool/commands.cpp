// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "tool/commands.h"

#include <cerrno>
#include <cstring>
#include <functional>
#include <optional>

#include "softrnic-abi.h"
#include "tool/cli_errors.h"
#include "tool/json.h"
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

std::string query_warning(std::string_view cmd, const std::string &dev, const char *what,
			  const Error &err)
{
	std::string text = err.what.empty() ? std::string(strerror(err.code)) : err.what;
	return "softrnic: " + std::string(cmd) + ": warning: " + dev + ": " + what + ": " + text +
	       " (" + errno_name(err.code) + ")";
}

int fail(CommandEnv &env, const CommandContext &ctx, const Error &err)
{
	env.err << describe_error(ctx, err) << '\n';
	return kExitFailure;
}

// What list, show and stats know about one device.
struct DeviceView {
	DeviceInfo dev;
	std::optional<ChardevInfo> uverbs;
	std::optional<PortInfo> port;
	std::vector<GidEntry> gids;
};

struct Selection {
	std::vector<DeviceView> views;
	std::vector<std::string> warnings;
};

// The devices a command covers: NAME only (whatever its driver), else
// softrnic's, or every device with `all`.  Per-device query failures are
// as collect_rows describes; a NAME not in the dump is ENODEV.
Result<Selection> select_devices(RdmaApi &api, std::string_view cmd, bool all,
				 const std::string &name, const std::filesystem::path &sysfs_root)
{
	auto devs = api.devices();
	if (!devs)
		return devs.error();
	Selection sel;
	bool found = false;
	for (const DeviceInfo &dev : *devs) {
		if (!name.empty() && dev.name != name)
			continue;
		found = true;
		DeviceView v;
		v.dev = dev;
		// Ownership is the uverbs driver id: it does not depend on
		// device names and needs nothing from our module beyond
		// registering with its driver id.
		auto cd = api.uverbs(dev.index);
		if (cd)
			v.uverbs = *cd;
		else if (!expected_query_error(cd.error()))
			sel.warnings.push_back(query_warning(cmd, dev.name, "uverbs", cd.error()));
		if (name.empty() && !all && !is_ours(v.uverbs ? v.uverbs->driver_id : std::nullopt))
			continue;
		if (dev.port_count >= kFirstPort) {
			auto port = api.port(dev.index, kFirstPort);
			if (port)
				v.port = *port;
			else if (!expected_query_error(port.error()))
				sel.warnings.push_back(
				    query_warning(cmd, dev.name, "port 1", port.error()));
			v.gids = read_gids(sysfs_root, dev.name, kFirstPort);
		}
		sel.views.push_back(std::move(v));
	}
	if (!name.empty() && !found)
		return make_error(ENODEV, "no RDMA device named '" + name + "'");
	return sel;
}

// show and stats: the kernel connection and the devices they cover, or
// nullopt once the failure has been reported.
struct Session {
	std::unique_ptr<RdmaApi> api;
	Selection sel;
};

std::optional<Session> open_session(const Options &opts, CommandEnv &env, const CommandContext &ctx)
{
	auto api = env.open_api();
	if (!api) {
		fail(env, ctx, api.error());
		return std::nullopt;
	}
	auto sel = select_devices(**api, ctx.command, opts.all, opts.name, env.sysfs_root);
	if (!sel) {
		fail(env, ctx, sel.error());
		return std::nullopt;
	}
	for (const std::string &w : sel->warnings)
		env.err << w << '\n';
	return Session{std::move(api).value(), std::move(sel).value()};
}

// Runs `each` for every selected device; it appends the device's JSON
// object and text, or returns an exit code to stop with (its error already
// reported).  Then prints one or the other.
using PerDevice = std::function<int(Session &, const DeviceView &, Json &, std::string &)>;

int print_each_device(const Options &opts, CommandEnv &env, const CommandContext &ctx,
		      const PerDevice &each)
{
	auto session = open_session(opts, env, ctx);
	if (!session)
		return kExitFailure;
	Json all = Json::array();
	std::string text;
	for (const DeviceView &v : session->sel.views)
		if (int rc = each(*session, v, all, text); rc != kExitOk)
			return rc;
	env.out << (opts.json ? all.dump(opts.pretty) : text);
	return kExitOk;
}

std::optional<uint32_t> driver_of(const DeviceView &v)
{
	return v.uverbs ? v.uverbs->driver_id : std::nullopt;
}

std::string uverbs_path(const DeviceView &v)
{
	return v.uverbs ? "/dev/infiniband/" + v.uverbs->name : "";
}

// A string member, or null when the value is unknown.
Json str_or_null(const std::string &s)
{
	return s.empty() || s == "-" ? Json() : Json(s);
}

DeviceRow make_row(const DeviceView &v)
{
	DeviceRow row;
	row.name = v.dev.name;
	row.type = device_type_name(v.dev);
	row.driver = driver_name(driver_of(v));
	row.uverbs = uverbs_path(v);
	if (v.port) {
		row.netdev = v.port->netdev;
		row.state = port_state_name(v.port->state);
	}
	for (const GidEntry &g : v.gids)
		if (g.index == 0)
			row.gid0 = g.gid;
	if (const GidEntry *g = roce_v2_ipv4_gid(v.gids)) {
		row.v4_index = std::to_string(g->index);
		row.v4_gid = ipv4_mapped(g->gid).value_or("");
	}
	return row;
}

Json row_json(const DeviceRow &r, bool with_driver)
{
	Json o = Json::object();
	o.set("ifname", r.name);
	o.set("type", str_or_null(r.type));
	o.set("netdev", str_or_null(r.netdev));
	o.set("state", str_or_null(r.state));
	o.set("gid0", str_or_null(r.gid0));
	o.set("ipv4_gid_index",
	      r.v4_index.empty() ? Json() : Json(uint32_t(std::stoul(r.v4_index))));
	o.set("ipv4_gid", str_or_null(r.v4_gid));
	o.set("uverbs", str_or_null(r.uverbs));
	if (with_driver)
		o.set("driver", str_or_null(r.driver));
	return o;
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
	if (opts.json) {
		Json a = Json::array();
		for (const DeviceRow &r : list->rows)
			a.push(row_json(r, opts.all));
		env.out << a.dump(opts.pretty);
	} else {
		env.out << format_table(list->rows, opts.all);
	}
	return kExitOk;
}

// show: one line per device, then one indented line per GID.
//   roce0: type roce netdev sr0 state ACTIVE physical_state LINK_UP driver softrnic uverbs
//   /dev/infiniband/uverbs0
//       gid 3 0000:0000:0000:0000:0000:ffff:0a00:0001 RoCE v2 ipv4 ::ffff:10.0.0.1
int do_show(const Options &opts, CommandEnv &env)
{
	CommandContext ctx{"show", opts.name, {}, {}};
	return print_each_device(
	    opts, env, ctx, [](Session &, const DeviceView &v, Json &all, std::string &text) {
		    DeviceRow r = make_row(v);
		    std::string phys = v.port ? phys_state_name(v.port->phys_state) : "-";
		    auto dash = [](const std::string &s) {
			    return s.empty() ? std::string("-") : s;
		    };
		    text += r.name + ": type " + dash(r.type) + " netdev " + dash(r.netdev) +
			    " state " + dash(r.state) + " physical_state " + phys + " driver " +
			    dash(r.driver) + " uverbs " + dash(r.uverbs) + "\n";
		    Json o = row_json(r, true);
		    o.set("physical_state", str_or_null(phys));
		    Json gids = Json::array();
		    for (const GidEntry &g : v.gids) {
			    auto v4 = ipv4_mapped(g.gid);
			    text += "    gid " + std::to_string(g.index) + " " + g.gid;
			    if (!g.type.empty())
				    text += " " + g.type;
			    if (v4)
				    text += " ipv4 " + *v4;
			    text += "\n";
			    Json gj = Json::object();
			    gj.set("index", g.index);
			    gj.set("gid", g.gid);
			    gj.set("type", str_or_null(g.type));
			    gj.set("ipv4", v4 ? Json(*v4) : Json());
			    gids.push(std::move(gj));
		    }
		    o.set("gids", std::move(gids));
		    all.push(std::move(o));
		    return int(kExitOk);
	    });
}

// One QP counter group, as `rdma statistic qp show` prints it, indented
// under its port: "    cntn 1 mode auto qp-type RC lqpn 17,18
// tx_packets 5 ..."; in JSON {"cntn":1,"mode":"auto","qp_type":"RC",
// "lqpn":[17,18],"tx_packets":5,...}.
void print_qp_counter(const QpCounter &c, Json &list, std::string &text)
{
	Json o = Json::object();
	text += "    cntn " + std::to_string(c.id);
	o.set("cntn", c.id);
	if (c.mode) {
		text += " mode " + counter_mode_name(*c.mode);
		o.set("mode", counter_mode_name(*c.mode));
	}
	if (c.qp_type) {
		text += " qp-type " + qp_type_name(*c.qp_type);
		o.set("qp_type", qp_type_name(*c.qp_type));
	}
	std::string qpns;
	Json lqpn = Json::array();
	for (uint32_t qpn : c.qpns) {
		qpns += (qpns.empty() ? "" : ",") + std::to_string(qpn);
		lqpn.push(qpn);
	}
	text += " lqpn " + (qpns.empty() ? std::string("-") : qpns);
	o.set("lqpn", std::move(lqpn));
	for (const auto &[name, value] : c.counters) {
		text += " " + name + " " + std::to_string(value);
		o.set(name, value);
	}
	text += "\n";
	list.push(std::move(o));
}

// stats: the port counters, one line per port as `rdma statistic show`
// prints them ("link roce0/1 tx_packets 12 ..."), then the port's QP
// counter groups, if any, one indented line each (print_qp_counter());
// or JSON objects {"ifname":"roce0","port":1,"tx_packets":12,...,
// "qp_counters":[...]}.  A port counter counts its bound QPs too, as
// rdma shows it.  Without a NAME, devices that keep no counters
// (EOPNOTSUPP) are left out; "qp_counters" is left out where the kernel
// has no QP counters.
int do_stats(const Options &opts, CommandEnv &env)
{
	CommandContext ctx{"stats", opts.name, {}, {}};
	return print_each_device(
	    opts, env, ctx,
	    [&](Session &session, const DeviceView &v, Json &all, std::string &text) {
		    if (v.dev.port_count < kFirstPort)
			    return int(kExitOk);
		    auto pc = session.api->counters(v.dev.index, kFirstPort);
		    if (!pc) {
			    if (opts.name.empty() && expected_query_error(pc.error()))
				    return int(kExitOk);
			    // Linux 6.1 answers EINVAL for a device without
			    // counter ops (stat_get_doit_default_counter).
			    int code = pc.error().code;
			    if (code == EOPNOTSUPP || code == EINVAL)
				    return fail(env, ctx,
						make_error(code, "the device keeps no counters (or "
								 "has just gone)"));
			    return fail(env, ctx, pc.error());
		    }
		    text += "link " + v.dev.name + "/" + std::to_string(kFirstPort);
		    Json o = Json::object();
		    o.set("ifname", v.dev.name);
		    o.set("port", kFirstPort);
		    for (const auto &[name, value] : pc->counters) {
			    text += " " + name + " " + std::to_string(value);
			    o.set(name, value);
		    }
		    text += "\n";
		    // A device may keep port counters only; or it went away
		    // between the two requests.
		    auto qc = session.api->qp_counters(v.dev.index, kFirstPort);
		    if (!qc && !expected_query_error(qc.error()))
			    return fail(env, ctx, qc.error());
		    if (qc) {
			    Json groups = Json::array();
			    for (const QpCounter &c : *qc)
				    if (c.port == kFirstPort)
					    print_qp_counter(c, groups, text);
			    o.set("qp_counters", std::move(groups));
		    }
		    all.push(std::move(o));
		    return int(kExitOk);
	    });
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
	auto sel = select_devices(api, "list", all, {}, sysfs_root);
	if (!sel)
		return sel.error();
	ListOutput list;
	list.warnings = std::move(sel->warnings);
	for (const DeviceView &v : sel->views)
		list.rows.push_back(make_row(v));
	return list;
}

int run_command(const Options &opts, CommandEnv &env)
{
	switch (opts.command) {
	case Command::list:
		return do_list(opts, env);
	case Command::show:
		return do_show(opts, env);
	case Command::stats:
		return do_stats(opts, env);
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
