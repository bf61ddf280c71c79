// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "device.h"

#include <type_traits>

#include "context.h"
#include "entry.h"
#include "log.h"
#include "softrnic-abi.h"

namespace softrnic
{

static_assert(std::is_standard_layout_v<verbs_device>,
	      "verbs_device must start with ibv_device for from_ibv_device()");

/* Driver id only: name or modalias rules would let us claim devices that
 * merely look like ours. */
constinit const verbs_match_ent match_table[] = {
    {.driver_data = nullptr,
     .u = {.driver_id = SOFTRNIC_DRIVER_ID},
     .vendor = 0,
     .device = 0,
     .kind = verbs_abi::match_driver_id},
    {.driver_data = nullptr,
     .u = {.driver_id = 0},
     .vendor = 0,
     .device = 0,
     .kind = verbs_abi::match_end},
};

match_verdict judge_device(const verbs_sysfs_dev &dev) noexcept
{
	/* libibverbs points ->match at our table row when the reported driver
	 * id equals the row's; check both so a stale pointer cannot fool us. */
	const verbs_match_ent *m = dev.match;
	if (!m || m->kind != verbs_abi::match_driver_id || m->u.driver_id != SOFTRNIC_DRIVER_ID ||
	    dev.driver_id != SOFTRNIC_DRIVER_ID)
		return match_verdict::not_ours;
	if (dev.abi_ver != SOFTRNIC_UVERBS_ABI_VERSION)
		return match_verdict::abi_mismatch;
	return match_verdict::accept;
}

namespace
{

void complain_abi(const verbs_sysfs_dev &dev) noexcept
{
	complain("%s: kernel module speaks softrnic uverbs ABI %u but this provider speaks %u; "
		 "device ignored (install matching softrnic.ko and libsoftrnic builds)",
		 dev.ibdev_name, dev.abi_ver, SOFTRNIC_UVERBS_ABI_VERSION);
}

} // namespace

bool match_device(verbs_sysfs_dev *sysfs_dev) noexcept
{
	return guard_bool([&] {
		const verbs_sysfs_dev &dev = *sysfs_dev;
		switch (judge_device(dev)) {
		case match_verdict::accept:
			log_msg(verbs_abi::log_debug,
				"%s: claimed (%s, driver id %#x, uverbs ABI %u)", dev.ibdev_name,
				dev.sysfs_name, dev.driver_id, dev.abi_ver);
			return true;
		case match_verdict::abi_mismatch:
			complain_abi(dev);
			return false;
		case match_verdict::not_ours:
			break;
		}
		log_msg(verbs_abi::log_debug,
			"%s: not ours (%s, driver id %#x, uverbs ABI %u, node type %d, index %d, "
			"modalias '%s')",
			dev.ibdev_name, dev.sysfs_name, dev.driver_id, dev.abi_ver,
			static_cast<int>(dev.node_type), dev.ibdev_idx, dev.modalias);
		return false;
	});
}

device::device(const verbs_sysfs_dev &sysfs) noexcept : abi_version_(sysfs.abi_ver) {}

device *device::from_ibv_device(ibv_device *dev) noexcept
{
	/* ibv_device is the first member of the standard-layout verbs_device */
	return from_ibv(reinterpret_cast<verbs_device *>(dev));
}

verbs_device *alloc_device(verbs_sysfs_dev *sysfs_dev) noexcept
{
	return guard_ptr([&]() -> verbs_device * {
		/* match_device already filtered; this guards direct callers and
		 * any future library that skips match_device */
		switch (judge_device(*sysfs_dev)) {
		case match_verdict::accept:
			break;
		case match_verdict::abi_mismatch:
			complain_abi(*sysfs_dev);
			errno = EPROTO;
			return nullptr;
		case match_verdict::not_ours:
			errno = ENODEV;
			return nullptr;
		}
		return device::release(device::make(*sysfs_dev));
	});
}

void uninit_device(verbs_device *vdev) noexcept
{
	/* unique_ptr deletes it */
	device::reclaim(vdev);
}

constinit const verbs_device_ops device_ops = {
    .name = "softrnic",
    /* libibverbs double-checks the range after match_device */
    .match_min_abi_version = SOFTRNIC_UVERBS_ABI_VERSION,
    .match_max_abi_version = SOFTRNIC_UVERBS_ABI_VERSION,
    .match_table = match_table,
    .static_providers = nullptr,
    .match_device = match_device,
    .alloc_context = alloc_context,
    .import_context = nullptr, /* ibv_import_device() answers EOPNOTSUPP */
    .alloc_device = alloc_device,
    .uninit_device = uninit_device,
};

} // namespace softrnic
