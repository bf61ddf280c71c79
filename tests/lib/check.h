/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The C test programs' one check helper (tests/raw_uverbs/ring_test,
 * tests/kmod/memory/mem_uverbs; the C++ programs have
 * tests/vm/progs/common.h, the test modules tests/kmod/include/ktest.h).
 *
 * CHECK(cond[, fmt, args...]) counts a check in test_checks and, if @cond
 * is false, a failure in test_failures, printing "FAIL function:line:
 * cond[: message]" to stdout, with the errno of that moment if it is
 * set (the raw commands under test report through it).
 */
#ifndef SOFTRNIC_TEST_CHECK_H
#define SOFTRNIC_TEST_CHECK_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int test_checks, test_failures;

static __attribute__((format(printf, 4, 5), unused)) bool
test_check(bool ok, const char *func, int line, const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	test_checks++;
	if (ok)
		return true;
	test_failures++;
	printf("FAIL %s:%d: ", func, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (err)
		printf(" (errno %d: %s)", err, strerror(err));
	putchar('\n');
	fflush(stdout);
	errno = err;
	return false;
}

#define CHECK(cond, ...)						\
	test_check(!!(cond), __func__, __LINE__,			\
		   "%s" TEST_CHECK_MSG_(__VA_ARGS__), #cond		\
		   TEST_CHECK_ARGS_(__VA_ARGS__))

/*
 * CHECK(c) gives the format "%s", CHECK(c, "x %d", v) "%s: x %d" with
 * args (#c, v): the message's format must be a string literal.
 */
#define TEST_CHECK_MSG_(...)		__VA_OPT__(": " TEST_CHECK_FIRST_(__VA_ARGS__))
#define TEST_CHECK_ARGS_(...)		__VA_OPT__(TEST_CHECK_REST_(__VA_ARGS__))
#define TEST_CHECK_FIRST_(fmt, ...)	fmt
#define TEST_CHECK_REST_(fmt, ...)	__VA_OPT__(, __VA_ARGS__)

#endif
