// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The `list` output: one row per device, columns padded to the widest
// cell, two spaces apart, no trailing blanks.  Missing values print as "-".
// V4IDX/V4GID: the GID RoCEv2 over IPv4 uses (the first RoCE v2 entry that
// is an IPv4-mapped address), which is what ibv_*_pingpong -g needs.
#ifndef SOFTRNIC_TOOL_DEVICE_TABLE_H
#define SOFTRNIC_TOOL_DEVICE_TABLE_H

#include <string>
#include <vector>

namespace softrnic::tool
{

struct DeviceRow {
	std::string name;
	std::string type; // roce, iwarp, ... (see device_type_name)
	std::string netdev;
	std::string state;    // port 1 state
	std::string gid0;     // port 1, GID index 0
	std::string v4_index; // index of the RoCE v2 GID of an IPv4 address
	std::string v4_gid;   // that GID as ::ffff:a.b.c.d
	std::string uverbs;   // /dev/infiniband/uverbsN
	std::string driver;   // only shown with --all
};

// Header line plus one line per row, each ending in '\n'.
std::string format_table(const std::vector<DeviceRow> &rows, bool with_driver);

} // namespace softrnic::tool

#endif
