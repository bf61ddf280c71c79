// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "tool/cli_errors.h"

#include <cerrno>
#include <cstring>

namespace softrnic::tool
{

namespace
{

std::string quoted(std::string_view s)
{
	return "'" + std::string(s) + "'";
}

// Failures that mean the same whatever the command.
std::string common_text(int code)
{
	switch (code) {
	case EPERM:
	case EACCES:
		return "permission denied (changing RDMA devices needs CAP_NET_ADMIN)";
	case ETIMEDOUT:
		return "no reply from the kernel";
	case EBADMSG:
		return "malformed netlink reply from the kernel";
	case ENOMEM:
	case ENOBUFS:
		return "out of memory";
	default: {
		const char *s = strerror(code);
		return s ? s : "unknown error";
	}
	}
}

std::string add_text(const CommandContext &ctx, int code)
{
	switch (code) {
	case ENODEV:
		return "netdev " + quoted(ctx.netdev) + " not found";
	case EINVAL:
		// nldev_newlink answers EINVAL when no rdma_link_ops of that
		// type is registered (even after trying to load the module);
		// the driver's newlink may also refuse the netdev with it.
		return "the kernel refused the request: link type " + quoted(ctx.link_type) +
		       " is not registered (is softrnic.ko loaded?) or the driver rejected "
		       "netdev " +
		       quoted(ctx.netdev);
	case EEXIST: // softrnic's own name check (rxe uses it for the netdev)
	case ENFILE: // ib_register_device's assign_name: the name is taken
		return "an RDMA device named " + quoted(ctx.name) + " already exists";
	case EBUSY:
		return "netdev " + quoted(ctx.netdev) + " already has a " +
		       std::string(ctx.link_type) + " device";
	case EPROTONOSUPPORT:
		return "netdev " + quoted(ctx.netdev) + " is not an Ethernet device";
	default:
		return common_text(code);
	}
}

std::string del_text(const CommandContext &ctx, int code)
{
	switch (code) {
	case ENODEV:
		return "no RDMA device named " + quoted(ctx.name);
	case EINVAL:
		// nldev_dellink: unknown index, or a device without
		// IBK_ALLOW_USER_UNREG (hardware, not created by a link type).
		return "the kernel refused to delete " + quoted(ctx.name) +
		       " (it was not created with 'add', or is already gone)";
	default:
		return common_text(code);
	}
}

} // namespace

std::string errno_name(int code)
{
	if (const char *n = strerrorname_np(code))
		return n;
	return "errno " + std::to_string(code);
}

std::string describe_error(const CommandContext &ctx, const Error &err)
{
	std::string line = "softrnic: " + std::string(ctx.command);
	if (!ctx.name.empty())
		line += " " + std::string(ctx.name);
	line += ": ";

	if (!err.what.empty())
		line += err.what;
	else if (ctx.command == "add")
		line += add_text(ctx, err.code);
	else if (ctx.command == "del")
		line += del_text(ctx, err.code);
	else
		line += common_text(err.code);

	if (!err.kernel_msg.empty())
		line += ": " + err.kernel_msg;
	if (err.code != 0)
		line += " (" + errno_name(err.code) + ")";
	return line;
}

} // namespace softrnic::tool
