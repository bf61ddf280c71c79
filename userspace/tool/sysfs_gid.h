// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// GIDs come from sysfs: the nldev netlink interface has no GID attribute,
// so `list` mixes netlink (devices, ports, chardevs) with this one file.
#ifndef SOFTRNIC_TOOL_SYSFS_GID_H
#define SOFTRNIC_TOOL_SYSFS_GID_H

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace softrnic::tool
{

// <sysfs_root>/class/infiniband/<dev>/ports/<port>/gids/<index>, trimmed;
// nullopt if the file is missing, unreadable or empty.
std::optional<std::string> read_gid(const std::filesystem::path &sysfs_root, std::string_view dev,
				    uint32_t port, uint32_t index);

} // namespace softrnic::tool

#endif
