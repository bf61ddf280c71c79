// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Provider device matching: which devices libsoftrnic claims, what it says
// when it refuses one, and the device object's lifetime.
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <string>

#include "device.h"
#include "log.h"
#include "softrnic-abi.h"

using namespace softrnic;

namespace
{

std::string complaints;

void capture(const char *line) noexcept
{
	complaints += line;
}

struct capture_complaints {
	capture_complaints()
	{
		complaints.clear();
		set_complaint_sink(capture);
	}
	~capture_complaints() { set_complaint_sink(nullptr); }
};

/* A device as libibverbs describes one of ours after its table lookup. */
verbs_sysfs_dev our_device(uint32_t abi = SOFTRNIC_UVERBS_ABI_VERSION)
{
	verbs_sysfs_dev d{};
	std::strcpy(d.ibdev_name, "softrnic0");
	std::strcpy(d.sysfs_name, "uverbs0");
	d.driver_id = SOFTRNIC_DRIVER_ID;
	d.match = &match_table[0];
	d.abi_ver = abi;
	d.ibdev_idx = 3;
	return d;
}

} // namespace

TEST_CASE("provider: match table has exactly our driver id", "[provider][match]")
{
	CHECK(match_table[0].kind == verbs_abi::match_driver_id);
	CHECK(match_table[0].u.driver_id == SOFTRNIC_DRIVER_ID);
	CHECK(match_table[1].kind == verbs_abi::match_end);
	CHECK(device_ops.match_table == match_table);
	CHECK(std::string(device_ops.name) == "softrnic");
	CHECK(device_ops.match_min_abi_version == SOFTRNIC_UVERBS_ABI_VERSION);
	CHECK(device_ops.match_max_abi_version == SOFTRNIC_UVERBS_ABI_VERSION);
	CHECK(device_ops.match_device == match_device);
	CHECK(device_ops.alloc_device == alloc_device);
	CHECK(device_ops.uninit_device == uninit_device);
	CHECK(device_ops.alloc_context != nullptr);
	CHECK(device_ops.import_context == nullptr);
	CHECK(device_ops.static_providers == nullptr);
}

TEST_CASE("provider: judge_device", "[provider][match]")
{
	auto d = our_device();
	CHECK(judge_device(d) == match_verdict::accept);

	SECTION("no table match means another provider's device")
	{
		d.match = nullptr;
		CHECK(judge_device(d) == match_verdict::not_ours);
	}
	SECTION("the kernel reported another driver id")
	{
		d.driver_id = 19; /* some in-tree driver */
		CHECK(judge_device(d) == match_verdict::not_ours);
		d.driver_id = 0; /* RDMA_DRIVER_UNKNOWN (sysfs-only enumeration) */
		CHECK(judge_device(d) == match_verdict::not_ours);
	}
	SECTION("a match row that is not our driver id row")
	{
		verbs_match_ent other{};
		other.kind = verbs_abi::match_modalias;
		other.u.modalias = "softrnic*";
		d.match = &other;
		CHECK(judge_device(d) == match_verdict::not_ours);
	}
	SECTION("ours, other ABI versions")
	{
		for (uint32_t abi : {0u, SOFTRNIC_UVERBS_ABI_VERSION + 1u, 0xffffffffu}) {
			d.abi_ver = abi;
			CHECK(judge_device(d) == match_verdict::abi_mismatch);
		}
	}
}

TEST_CASE("provider: match_device claims ours quietly", "[provider][match]")
{
	capture_complaints cap;
	auto d = our_device();
	CHECK(match_device(&d));
	CHECK(complaints.empty());
}

TEST_CASE("provider: match_device ignores other devices quietly", "[provider][match]")
{
	capture_complaints cap;
	verbs_sysfs_dev d{};
	std::strcpy(d.ibdev_name, "mlx5_0");
	d.driver_id = 1;
	d.abi_ver = 1;
	CHECK_FALSE(match_device(&d));
	CHECK(complaints.empty());
}

TEST_CASE("provider: ABI mismatch is refused with a clear message", "[provider][match]")
{
	capture_complaints cap;
	auto d = our_device(SOFTRNIC_UVERBS_ABI_VERSION + 1);
	CHECK_FALSE(match_device(&d));
	INFO(complaints);
	CHECK(complaints.rfind("libsoftrnic: softrnic0: ", 0) == 0);
	CHECK(complaints.find("ABI " + std::to_string(SOFTRNIC_UVERBS_ABI_VERSION + 1)) !=
	      std::string::npos);
	CHECK(complaints.find("speaks " + std::to_string(SOFTRNIC_UVERBS_ABI_VERSION)) !=
	      std::string::npos);
	CHECK(complaints.back() == '\n');
	CHECK(complaints.find('\n') == complaints.size() - 1); /* one line */

	/* alloc_device double-checks, without aborting */
	complaints.clear();
	errno = 0;
	CHECK(alloc_device(&d) == nullptr);
	CHECK(errno == EPROTO);
	CHECK_FALSE(complaints.empty());
}

TEST_CASE("provider: alloc_device refuses foreign devices", "[provider][match]")
{
	capture_complaints cap;
	auto d = our_device();
	d.match = nullptr;
	errno = 0;
	CHECK(alloc_device(&d) == nullptr);
	CHECK(errno == ENODEV);
	CHECK(complaints.empty());
}

TEST_CASE("provider: device object lifetime", "[provider][match]")
{
	auto d = our_device();
	verbs_device *vdev = alloc_device(&d);
	REQUIRE(vdev != nullptr);
	/* zeroed the way libibverbs asserts (its _ops must be null) */
	CHECK(vdev->device._ops._dummy1 == nullptr);
	CHECK(vdev->device._ops._dummy2 == nullptr);
	CHECK(vdev->sysfs == nullptr);

	device *dev = device::from_ibv_device(&vdev->device);
	REQUIRE(dev != nullptr);
	CHECK(dev->ibv() == vdev);
	CHECK(dev->abi_version() == SOFTRNIC_UVERBS_ABI_VERSION);
	CHECK(device::from_ibv(vdev) == dev);
	uninit_device(vdev); /* leak/ASan-clean delete */
}

TEST_CASE("provider: diagnostics truncate instead of overflowing", "[provider][match]")
{
	capture_complaints cap;
	std::string long_name(2000, 'n');
	complain("%s", long_name.c_str());
	CHECK(complaints.size() < 600);
	CHECK(complaints.back() == '\n');
	CHECK(complaints.rfind("libsoftrnic: nnn", 0) == 0);
}
