// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Entry-point guards.  Everything libibverbs calls is C; no exception may
 * cross into it (the library is C and unwinding through it is undefined, and
 * an escaped exception would terminate the application).  Every function
 * placed in an ops table therefore wraps its body in one of these, which
 * turns whatever was thrown into an errno value, the verbs error convention.
 */
#ifndef SOFTRNIC_ENTRY_H
#define SOFTRNIC_ENTRY_H

#include <cerrno>
#include <system_error>
#include <type_traits>

namespace softrnic
{

/* errno for a std::error_code: system/generic values pass, anything else
 * (or a non-positive value) becomes EIO. */
int errno_from_error_code(const std::error_code &ec) noexcept;

/* errno for the exception being handled; call only from inside a catch. */
int errno_from_current_exception() noexcept;

/* Throw a system_error carrying errno value err (for internal helpers that
 * want to bail out of deep code). */
[[noreturn]] void throw_errno(int err, const char *what);

/* For ops returning 0 or a positive errno. */
template <typename Fn> int guard_errno(Fn &&fn) noexcept
{
	static_assert(std::is_same_v<std::invoke_result_t<Fn>, int>);
	try {
		return fn();
	} catch (...) {
		return errno_from_current_exception();
	}
}

/* For ops returning an object pointer, or null with errno set. */
template <typename Fn> auto guard_ptr(Fn &&fn) noexcept -> std::invoke_result_t<Fn>
{
	static_assert(std::is_pointer_v<std::invoke_result_t<Fn>>);
	try {
		return fn();
	} catch (...) {
		errno = errno_from_current_exception();
		return nullptr;
	}
}

/* For ops returning void, or bool "no" on failure. */
template <typename Fn> void guard_void(Fn &&fn) noexcept
{
	try {
		fn();
	} catch (...) {
		errno = errno_from_current_exception();
	}
}

template <typename Fn> bool guard_bool(Fn &&fn) noexcept
{
	try {
		return fn();
	} catch (...) {
		errno = errno_from_current_exception();
		return false;
	}
}

} // namespace softrnic

#endif /* SOFTRNIC_ENTRY_H */
