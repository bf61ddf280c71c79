// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * undo: run a cleanup unless dismissed.  For the window in a create verb
 * between "the kernel made the object" and "the provider object is
 * complete" (e.g. the ring mmap() fails): the kernel object is destroyed
 * again so nothing leaks.
 */
#ifndef SOFTRNIC_UNDO_H
#define SOFTRNIC_UNDO_H

#include <utility>

namespace softrnic
{

template <typename Fn> class undo
{
public:
	explicit undo(Fn fn) noexcept : fn_(std::move(fn)) {}
	undo(const undo &) = delete;
	undo &operator=(const undo &) = delete;
	~undo()
	{
		if (armed_)
			fn_();
	}
	void dismiss() noexcept { armed_ = false; }

private:
	Fn fn_;
	bool armed_ = true;
};

} // namespace softrnic

#endif /* SOFTRNIC_UNDO_H */
