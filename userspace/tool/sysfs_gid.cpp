// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "tool/sysfs_gid.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <system_error>

namespace softrnic::tool
{

namespace
{

bool safe_name(std::string_view dev)
{
	// The name comes from the kernel, but never let it leave the class
	// directory.
	return !dev.empty() && dev != "." && dev != ".." && dev.find('/') == std::string_view::npos;
}

std::filesystem::path port_dir(const std::filesystem::path &sysfs_root, std::string_view dev,
			       uint32_t port)
{
	return sysfs_root / "class" / "infiniband" / std::string(dev) / "ports" /
	       std::to_string(port);
}

std::optional<std::string> read_line(const std::filesystem::path &path)
{
	std::ifstream in(path);
	std::string line;
	if (!in || !std::getline(in, line))
		return std::nullopt;
	while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r'))
		line.pop_back();
	if (line.empty())
		return std::nullopt;
	return line;
}

} // namespace

std::optional<std::string> read_gid(const std::filesystem::path &sysfs_root, std::string_view dev,
				    uint32_t port, uint32_t index)
{
	if (!safe_name(dev))
		return std::nullopt;
	return read_line(port_dir(sysfs_root, dev, port) / "gids" / std::to_string(index));
}

std::vector<GidEntry> read_gids(const std::filesystem::path &sysfs_root, std::string_view dev,
				uint32_t port)
{
	std::vector<GidEntry> gids;
	if (!safe_name(dev))
		return gids;
	const std::filesystem::path dir = port_dir(sysfs_root, dev, port);
	std::vector<uint32_t> indexes;
	std::error_code ec;
	for (const auto &e : std::filesystem::directory_iterator(dir / "gids", ec)) {
		const std::string name = e.path().filename().string();
		uint32_t i = 0;
		auto [end, err] = std::from_chars(name.data(), name.data() + name.size(), i);
		if (err == std::errc() && end == name.data() + name.size())
			indexes.push_back(i);
	}
	std::sort(indexes.begin(), indexes.end());
	for (uint32_t i : indexes) {
		auto gid = read_line(dir / "gids" / std::to_string(i));
		if (!gid || *gid == "0000:0000:0000:0000:0000:0000:0000:0000")
			continue;
		GidEntry e;
		e.index = i;
		e.gid = *gid;
		e.type = read_line(dir / "gid_attrs" / "types" / std::to_string(i)).value_or("");
		gids.push_back(std::move(e));
	}
	return gids;
}

std::optional<std::string> ipv4_mapped(std::string_view gid)
{
	constexpr std::string_view prefix = "0000:0000:0000:0000:0000:ffff:";
	if (gid.size() != prefix.size() + 9 || gid.substr(0, prefix.size()) != prefix ||
	    gid[prefix.size() + 4] != ':')
		return std::nullopt;
	unsigned int hi = 0, lo = 0;
	const char *p = gid.data() + prefix.size();
	auto r1 = std::from_chars(p, p + 4, hi, 16);
	auto r2 = std::from_chars(p + 5, p + 9, lo, 16);
	if (r1.ec != std::errc() || r1.ptr != p + 4 || r2.ec != std::errc() || r2.ptr != p + 9)
		return std::nullopt;
	return "::ffff:" + std::to_string(hi >> 8) + "." + std::to_string(hi & 0xff) + "." +
	       std::to_string(lo >> 8) + "." + std::to_string(lo & 0xff);
}

const GidEntry *roce_v2_ipv4_gid(const std::vector<GidEntry> &gids)
{
	for (const GidEntry &e : gids)
		if (e.type == "RoCE v2" && ipv4_mapped(e.gid))
			return &e;
	return nullptr;
}

} // namespace softrnic::tool
