// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "tool/device_table.h"

#include <algorithm>

namespace softrnic::tool
{

std::string format_table(const std::vector<DeviceRow> &rows, bool with_driver)
{
	using Line = std::vector<std::string>;
	auto cells = [&](const DeviceRow &r) {
		Line l{r.name, r.type, r.netdev, r.state, r.gid0, r.v4_index, r.v4_gid, r.uverbs};
		if (with_driver)
			l.push_back(r.driver);
		for (std::string &c : l)
			if (c.empty())
				c.assign(1, '-'); // not = "-": g++ 12 -O2 false -Wrestrict
		return l;
	};

	std::vector<Line> lines;
	Line header{"DEVICE", "TYPE", "NETDEV", "STATE", "GID0", "V4IDX", "V4GID", "UVERBS"};
	if (with_driver)
		header.push_back("DRIVER");
	lines.push_back(header);
	for (const DeviceRow &r : rows)
		lines.push_back(cells(r));

	std::vector<size_t> width(header.size(), 0);
	for (const Line &l : lines)
		for (size_t i = 0; i < l.size(); i++)
			width[i] = std::max(width[i], l[i].size());

	std::string out;
	for (const Line &l : lines) {
		for (size_t i = 0; i < l.size(); i++) {
			out += l[i];
			if (i + 1 < l.size())
				out.append(width[i] - l[i].size() + 2, ' ');
		}
		out += '\n';
	}
	return out;
}

} // namespace softrnic::tool
