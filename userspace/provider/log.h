// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Diagnostics.  Two channels, mirroring what libibverbs itself does:
 *   - log_msg(): libibverbs' debug log (VERBS_LOG_LEVEL=<n> VERBS_LOG_FILE=<f>),
 *     silent by default, for tracing what the provider decided and why;
 *   - complain(): one line on stderr, for conditions the user must fix (a
 *     kernel module and provider that speak different ABI versions).  Also
 *     copied to the debug log.
 * Neither allocates nor throws; both keep errno intact.
 */
#ifndef SOFTRNIC_LOG_H
#define SOFTRNIC_LOG_H

#include <cstdint>

#include "verbs_provider_abi.h"

namespace softrnic
{

inline constexpr const char log_prefix[] = "libsoftrnic: ";

void log_msg(verbs_abi::log_level level, const char *fmt, ...) noexcept
    __attribute__((format(printf, 2, 3)));

void complain(const char *fmt, ...) noexcept __attribute__((format(printf, 1, 2)));

/* Where complain() writes; tests point it at a buffer.  Null restores
 * stderr. */
using complaint_sink = void (*)(const char *line) noexcept;
void set_complaint_sink(complaint_sink sink) noexcept;

} // namespace softrnic

#endif /* SOFTRNIC_LOG_H */
