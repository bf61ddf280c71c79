// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "log.h"

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace softrnic
{

namespace
{

void stderr_sink(const char *line) noexcept
{
	std::fputs(line, stderr);
}

constinit complaint_sink current_sink = stderr_sink;

/* "libsoftrnic: <message>\n", truncated to fit. */
using line_buffer = char[512];

void format_line(line_buffer &buf, const char *fmt, va_list ap) noexcept
{
	constexpr std::size_t room = sizeof(line_buffer) - 1; /* keep one for '\n' */
	std::size_t used = sizeof(log_prefix) - 1;
	std::memcpy(buf, log_prefix, used);
	const int n = std::vsnprintf(buf + used, room - used, fmt, ap);
	if (n > 0)
		used += std::min(static_cast<std::size_t>(n), room - used - 1);
	buf[used++] = '\n';
	buf[used] = '\0';
}

} // namespace

void log_msg(verbs_abi::log_level level, const char *fmt, ...) noexcept
{
	const int saved = errno;
	line_buffer line;
	va_list ap;
	va_start(ap, fmt);
	format_line(line, fmt, ap);
	va_end(ap);
	__verbs_log(nullptr, level, "%s", line);
	errno = saved;
}

void complain(const char *fmt, ...) noexcept
{
	const int saved = errno;
	line_buffer line;
	va_list ap;
	va_start(ap, fmt);
	format_line(line, fmt, ap);
	va_end(ap);
	current_sink(line);
	__verbs_log(nullptr, verbs_abi::log_err, "%s", line);
	errno = saved;
}

void set_complaint_sink(complaint_sink sink) noexcept
{
	current_sink = sink ? sink : stderr_sink;
}

} // namespace softrnic
