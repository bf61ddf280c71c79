// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "tool/sysfs_gid.h"

#include <fstream>

namespace softrnic::tool
{

std::optional<std::string> read_gid(const std::filesystem::path &sysfs_root, std::string_view dev,
				    uint32_t port, uint32_t index)
{
	// The name comes from the kernel, but never let it leave the class
	// directory.
	if (dev.empty() || dev == "." || dev == ".." || dev.find('/') != std::string_view::npos)
		return std::nullopt;

	std::filesystem::path path = sysfs_root / "class" / "infiniband" / std::string(dev) /
				     "ports" / std::to_string(port) / "gids" /
				     std::to_string(index);
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

} // namespace softrnic::tool
