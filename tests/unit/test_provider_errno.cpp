// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Provider entry guards: nothing thrown inside the provider may reach
// libibverbs; it must come out as the matching errno.
#include <catch2/catch.hpp>
#include <cerrno>
#include <future>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "entry.h"

using namespace softrnic;

namespace
{

template <typename Ex> int errno_for(Ex ex)
{
	try {
		throw ex;
	} catch (...) {
		return errno_from_current_exception();
	}
}

struct not_a_std_exception {
};

} // namespace

TEST_CASE("provider: exceptions map to errno values", "[provider][errno]")
{
	CHECK(errno_for(std::bad_alloc()) == ENOMEM);
	CHECK(errno_for(std::bad_array_new_length()) == ENOMEM);
	CHECK(errno_for(std::length_error("x")) == ENOMEM);
	CHECK(errno_for(std::invalid_argument("x")) == EINVAL);
	CHECK(errno_for(std::out_of_range("x")) == ERANGE);
	CHECK(errno_for(std::system_error(EBUSY, std::generic_category())) == EBUSY);
	CHECK(errno_for(std::system_error(ENOSPC, std::system_category())) == ENOSPC);
	CHECK(errno_for(std::runtime_error("x")) == EIO);
	CHECK(errno_for(not_a_std_exception{}) == EIO);
	CHECK(errno_for(42) == EIO);
}

TEST_CASE("provider: error codes outside errno space become EIO", "[provider][errno]")
{
	CHECK(errno_from_error_code(std::error_code(EAGAIN, std::generic_category())) == EAGAIN);
	CHECK(errno_from_error_code(std::error_code(0, std::generic_category())) == EIO);
	CHECK(errno_from_error_code(std::error_code(-5, std::system_category())) == EIO);
	CHECK(errno_from_error_code(std::make_error_code(std::future_errc::broken_promise)) == EIO);
}

TEST_CASE("provider: throw_errno round-trips through the guards", "[provider][errno]")
{
	CHECK(guard_errno([]() -> int { throw_errno(ETIMEDOUT, "wait"); }) == ETIMEDOUT);
	CHECK(guard_errno([] { return 0; }) == 0);
	CHECK(guard_errno([] { return EAGAIN; }) == EAGAIN);
}

TEST_CASE("provider: pointer guard returns null and sets errno", "[provider][errno]")
{
	errno = 0;
	int *p = guard_ptr([]() -> int * { throw std::bad_alloc(); });
	CHECK(p == nullptr);
	CHECK(errno == ENOMEM);

	static int value = 7;
	errno = 0;
	CHECK(guard_ptr([]() -> int * { return &value; }) == &value);
	CHECK(errno == 0);

	/* a size the standard library refuses to even try (length_error) */
	errno = 0;
	auto *v = guard_ptr([]() -> std::vector<char> * {
		auto huge = std::vector<char>();
		huge.reserve(huge.max_size() + 1);
		return nullptr;
	});
	CHECK(v == nullptr);
	CHECK(errno == ENOMEM);
}

TEST_CASE("provider: bool and void guards swallow and record", "[provider][errno]")
{
	errno = 0;
	CHECK_FALSE(guard_bool([]() -> bool { throw std::invalid_argument("no"); }));
	CHECK(errno == EINVAL);
	CHECK(guard_bool([] { return true; }));

	errno = 0;
	guard_void([] { throw std::string("not even an exception class"); });
	CHECK(errno == EIO);
}
