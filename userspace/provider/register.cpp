// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Plugin entry: libibverbs dlopen()s lib<name>-rdmav34.so for every
 * "driver" line in /etc/libibverbs.d/ *.driver (and for RDMAV_DRIVERS), and
 * learns about the provider only through this ELF constructor.  The module
 * exports no symbols at all (see libsoftrnic.map).
 *
 * Because every verbs application loads every configured provider, this must
 * not be able to fail loudly: it touches only constant-initialised data and
 * makes one call that cannot throw.  (Kept apart from device.cpp so the unit
 * tests link the provider logic without registering it.)
 */
#include "device.h"
#include "verbs_provider_abi.h"

static_assert(SOFTRNIC_VERBS_PRIVATE_ABI == 34,
	      "register.cpp calls verbs_register_driver_34; update both together");

namespace
{

__attribute__((constructor)) void softrnic_register_provider() noexcept
{
	verbs_register_driver_34(&softrnic::device_ops);
}

} // namespace
