// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "entry.h"

#include <new>
#include <stdexcept>

namespace softrnic
{

int errno_from_error_code(const std::error_code &ec) noexcept
{
	const auto &cat = ec.category();
	if ((cat == std::generic_category() || cat == std::system_category()) && ec.value() > 0)
		return ec.value();
	return EIO;
}

int errno_from_current_exception() noexcept
{
	try {
		throw;
	} catch (const std::bad_alloc &) {
		return ENOMEM;
	} catch (const std::system_error &e) {
		return errno_from_error_code(e.code());
	} catch (const std::length_error &) {
		/* a size we were asked for does not fit a container */
		return ENOMEM;
	} catch (const std::invalid_argument &) {
		return EINVAL;
	} catch (const std::out_of_range &) {
		return ERANGE;
	} catch (...) {
		return EIO;
	}
}

void throw_errno(int err, const char *what)
{
	throw std::system_error(err, std::generic_category(), what);
}

} // namespace softrnic
