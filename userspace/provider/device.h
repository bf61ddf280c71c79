// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Device matching and the per-device object.
 *
 * libibverbs enumerates uverbs devices (netlink first, sysfs as fallback)
 * and offers each one to every registered provider.  We claim a device only
 * when the kernel reported our private driver id (SOFTRNIC_DRIVER_ID, from
 * RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID) and its uverbs ABI version is the one
 * this build speaks (SOFTRNIC_UVERBS_ABI_VERSION).  A device with our id but
 * another ABI version is refused with a one-line explanation on stderr.
 */
#ifndef SOFTRNIC_DEVICE_H
#define SOFTRNIC_DEVICE_H

#include <cstdint>

#include "object.h"
#include "verbs_provider_abi.h"

namespace softrnic
{

enum class match_verdict {
	not_ours,     /* another provider's device: stay quiet */
	accept,	      /* ours, same ABI */
	abi_mismatch, /* ours, but kernel and provider disagree on the ABI */
};

/* Pure decision on a device libibverbs described; no side effects. */
match_verdict judge_device(const verbs_sysfs_dev &dev) noexcept;

/* libibverbs callbacks (exposed for the unit tests). */
bool match_device(verbs_sysfs_dev *sysfs_dev) noexcept;
verbs_device *alloc_device(verbs_sysfs_dev *sysfs_dev) noexcept;
void uninit_device(verbs_device *vdev) noexcept;

/* What register.cpp hands to libibverbs. */
extern const verbs_match_ent match_table[];
extern const verbs_device_ops device_ops;

/* One per claimed uverbs device, alive while libibverbs lists it. */
class device final : public verbs_object<device, verbs_device>
{
public:
	explicit device(const verbs_sysfs_dev &sysfs) noexcept;

	static device *from_ibv_device(ibv_device *dev) noexcept;

	uint32_t abi_version() const noexcept { return abi_version_; }

private:
	uint32_t abi_version_;
};

} // namespace softrnic

#endif /* SOFTRNIC_DEVICE_H */
