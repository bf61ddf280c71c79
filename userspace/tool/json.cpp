// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "tool/json.h"

#include <cstdio>

namespace softrnic::tool
{

Json &Json::set(std::string key, Json value)
{
	if (!std::holds_alternative<Object>(v_))
		v_ = Object{};
	std::get<Object>(v_).emplace_back(std::move(key), std::move(value));
	return *this;
}

Json &Json::push(Json value)
{
	if (!std::holds_alternative<Array>(v_))
		v_ = Array{};
	std::get<Array>(v_).push_back(std::move(value));
	return *this;
}

std::string json_quote(std::string_view s)
{
	std::string out = "\"";
	for (unsigned char c : s) {
		switch (c) {
		case '"':
			out += "\\\"";
			break;
		case '\\':
			out += "\\\\";
			break;
		case '\n':
			out += "\\n";
			break;
		case '\t':
			out += "\\t";
			break;
		default:
			if (c < 0x20 || c >= 0x7f) {
				char buf[8];
				snprintf(buf, sizeof(buf), "\\u%04x", c);
				out += buf;
			} else {
				out += static_cast<char>(c);
			}
		}
	}
	return out + "\"";
}

namespace
{

void newline(std::string &out, bool pretty, int depth)
{
	if (pretty)
		out += "\n" + std::string(4 * depth, ' ');
}

} // namespace

void Json::write(std::string &out, bool pretty, int depth) const
{
	if (std::holds_alternative<std::nullptr_t>(v_)) {
		out += "null";
	} else if (const bool *b = std::get_if<bool>(&v_)) {
		out += *b ? "true" : "false";
	} else if (const uint64_t *n = std::get_if<uint64_t>(&v_)) {
		out += std::to_string(*n);
	} else if (const std::string *s = std::get_if<std::string>(&v_)) {
		out += json_quote(*s);
	} else if (const Array *a = std::get_if<Array>(&v_)) {
		out += '[';
		for (size_t i = 0; i < a->size(); i++) {
			if (i)
				out += ',';
			newline(out, pretty, depth + 1);
			(*a)[i].write(out, pretty, depth + 1);
		}
		if (!a->empty())
			newline(out, pretty, depth);
		out += ']';
	} else {
		const Object &o = std::get<Object>(v_);
		out += '{';
		for (size_t i = 0; i < o.size(); i++) {
			if (i)
				out += ',';
			newline(out, pretty, depth + 1);
			out += json_quote(o[i].first);
			out += pretty ? ": " : ":";
			o[i].second.write(out, pretty, depth + 1);
		}
		if (!o.empty())
			newline(out, pretty, depth);
		out += '}';
	}
}

std::string Json::dump(bool pretty) const
{
	std::string out;
	write(out, pretty, 0);
	return out + "\n";
}

} // namespace softrnic::tool
