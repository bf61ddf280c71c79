// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A small value-or-error type: g++ 12 has no std::expected, and the tool
// reports failures as values so nothing can throw past main().
#ifndef SOFTRNIC_TOOL_RESULT_H
#define SOFTRNIC_TOOL_RESULT_H

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace softrnic::tool
{

// A failed kernel or runtime operation.
struct Error {
	int code = 0;		// positive errno value
	std::string kernel_msg; // extended-ack text from the kernel, may be empty
	std::string what;	// our own explanation; overrides the errno mapping
};

inline Error make_error(int code, std::string what = {})
{
	return Error{code, {}, std::move(what)};
}

template <typename T, typename E = Error> class [[nodiscard]] Result
{
public:
	Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
	Result(E error) : v_(std::in_place_index<1>, std::move(error)) {}

	bool ok() const { return v_.index() == 0; }
	explicit operator bool() const { return ok(); }

	T &value() & { return std::get<0>(v_); }
	const T &value() const & { return std::get<0>(v_); }
	T &&value() && { return std::get<0>(std::move(v_)); }
	T &operator*() & { return value(); }
	const T &operator*() const & { return value(); }
	T *operator->() { return &value(); }
	const T *operator->() const { return &value(); }

	const E &error() const & { return std::get<1>(v_); }
	E &&error() && { return std::get<1>(std::move(v_)); }

private:
	std::variant<T, E> v_;
};

// Success carries nothing; failure carries E.
template <typename E> class [[nodiscard]] Result<void, E>
{
public:
	Result() = default;
	Result(E error) : err_(std::move(error)) {}

	bool ok() const { return !err_.has_value(); }
	explicit operator bool() const { return ok(); }

	const E &error() const & { return *err_; }
	E &&error() && { return std::move(*err_); }

private:
	std::optional<E> err_;
};

using Status = Result<void>;

} // namespace softrnic::tool

#endif
