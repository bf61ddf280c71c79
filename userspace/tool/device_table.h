// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The `list` output: one row per device, columns padded to the widest
// cell, two spaces apart, no trailing blanks.  Missing values print as "-".
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
	std::string state;  // port 1 state
	std::string gid0;   // port 1, GID index 0
	std::string uverbs; // /dev/infiniband/uverbsN
	std::string driver; // only shown with --all
};

// Header line plus one line per row, each ending in '\n'.
std::string format_table(const std::vector<DeviceRow> &rows, bool with_driver);

} // namespace softrnic::tool

#endif
