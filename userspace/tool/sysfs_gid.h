// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// GIDs come from sysfs: the nldev netlink interface has no GID attribute,
// so `list` and `show` mix netlink (devices, ports, chardevs) with these
// files.
#ifndef SOFTRNIC_TOOL_SYSFS_GID_H
#define SOFTRNIC_TOOL_SYSFS_GID_H

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace softrnic::tool
{

// <sysfs_root>/class/infiniband/<dev>/ports/<port>/gids/<index>, trimmed;
// nullopt if the file is missing, unreadable or empty.
std::optional<std::string> read_gid(const std::filesystem::path &sysfs_root, std::string_view dev,
				    uint32_t port, uint32_t index);

struct GidEntry {
	uint32_t index = 0;
	std::string gid;  // sysfs form: eight groups of four hex digits
	std::string type; // "RoCE v2", "IB/RoCE v1"; empty if sysfs has none
};

// Every non-zero GID of the port in index order (an unused entry reads as
// all zeros).  Empty if the port has no GID table.
std::vector<GidEntry> read_gids(const std::filesystem::path &sysfs_root, std::string_view dev,
				uint32_t port);

// "::ffff:10.0.0.1" for the IPv4-mapped GID 0000:...:ffff:0a00:0001;
// nullopt for any other GID.
std::optional<std::string> ipv4_mapped(std::string_view gid);

// The entry RoCEv2 over IPv4 uses: the first RoCE v2 GID that is an
// IPv4-mapped address, or nullptr.
const GidEntry *roce_v2_ipv4_gid(const std::vector<GidEntry> &gids);

} // namespace softrnic::tool

#endif
