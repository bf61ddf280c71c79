// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// JSON output (-j, and -p for the pretty form), as iproute2's rdma prints
// it: a value tree built by the commands, then written out in one go, so a
// failing command never leaves half a document on stdout.
#ifndef SOFTRNIC_TOOL_JSON_H
#define SOFTRNIC_TOOL_JSON_H

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace softrnic::tool
{

class Json
{
public:
	using Array = std::vector<Json>;
	using Object = std::vector<std::pair<std::string, Json>>; // in insertion order

	Json() : v_(nullptr) {}
	Json(std::nullptr_t) : v_(nullptr) {}
	Json(bool b) : v_(b) {}
	Json(uint64_t n) : v_(n) {}
	Json(uint32_t n) : v_(uint64_t{n}) {}
	Json(std::string s) : v_(std::move(s)) {}
	Json(const char *s) : v_(std::string(s)) {}
	Json(Array a) : v_(std::move(a)) {}
	Json(Object o) : v_(std::move(o)) {}

	static Json array() { return Json(Array{}); }
	static Json object() { return Json(Object{}); }

	// Object member (appended; keys are not merged) and array element.
	Json &set(std::string key, Json value);
	Json &push(Json value);

	// Compact ("[{"ifname":"roce0"}]") or indented by four spaces per
	// level; either way followed by a newline.
	std::string dump(bool pretty) const;

private:
	void write(std::string &out, bool pretty, int depth) const;

	std::variant<std::nullptr_t, bool, uint64_t, std::string, Array, Object> v_;
};

// The JSON string literal for s (quotes included); bytes that are not
// printable ASCII are escaped as \u00XX.
std::string json_quote(std::string_view s);

} // namespace softrnic::tool

#endif
