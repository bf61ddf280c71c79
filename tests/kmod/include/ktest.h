/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test modules' one check helper (under tests/kmod).  Define KTEST_NAME,
 * the tag of the module's log lines, before including it.
 *
 * CHECK(cond[, fmt, args...]) counts a check and, if @cond is false, a
 * failure, logging "TAG: FAIL function:line: cond[: message]"; it
 * returns whether @cond held.  ktest_done() logs "TAG: done: N checks, M
 * failed", the line tests/vm/lib.sh's kmod_passed looks for.  The
 * counters are atomic: checks run in work items and completion handlers
 * too.
 */
#ifndef SOFTRNIC_KTEST_H
#define SOFTRNIC_KTEST_H

#include <linux/atomic.h>
#include <linux/kernel.h>
#include <linux/printk.h>

#ifndef KTEST_NAME
#error "define KTEST_NAME before including ktest.h"
#endif

static atomic_t checks, failures;

static __printf(4, 5) bool ktest_check(bool ok, const char *func, int line,
				       const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	atomic_inc(&checks);
	if (ok)
		return true;
	atomic_inc(&failures);
	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_err(KTEST_NAME ": FAIL %s:%d: %pV\n", func, line, &vaf);
	va_end(args);
	return false;
}

/* The condition's text, then ": " and the message if there is one. */
#define CHECK(cond, ...)						\
	ktest_check(!!(cond), __func__, __LINE__,			\
		    "%s" KTEST_MSG_(__VA_ARGS__), #cond			\
		    KTEST_ARGS_(__VA_ARGS__))

/*
 * CHECK(c) gives the format "%s", CHECK(c, "x %d", v) "%s: x %d" with
 * args (#c, v): the message's format must be a string literal.
 */
#define KTEST_MSG_(...)		__VA_OPT__(": " KTEST_FIRST_(__VA_ARGS__))
#define KTEST_ARGS_(...)	__VA_OPT__(KTEST_REST_(__VA_ARGS__))
#define KTEST_FIRST_(fmt, ...)	fmt
#define KTEST_REST_(fmt, ...)	__VA_OPT__(, __VA_ARGS__)

static inline void ktest_done(void)
{
	pr_info(KTEST_NAME ": done: %d checks, %d failed\n",
		atomic_read(&checks), atomic_read(&failures));
}

#endif
