// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The one check of the fuzz targets: a broken invariant traps, which
// libFuzzer reports as a crash and keeps the input of.
#ifndef SOFTRNIC_TESTS_FUZZ_ASSERT_H
#define SOFTRNIC_TESTS_FUZZ_ASSERT_H

#define FUZZ_ASSERT(c)                                                                             \
	do {                                                                                       \
		if (!(c))                                                                          \
			__builtin_trap();                                                          \
	} while (0)

#endif
