// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The one-line error messages of the softrnic tool.
#include <catch2/catch.hpp>
#include <cerrno>
#include <string>

#include "tool/cli_errors.h"
#include "tool/nldev_client.h"

using namespace softrnic::tool;

TEST_CASE("tool errors: add failures name the culprit", "[tool]")
{
	CommandContext add{"add", "roce0", "roce", "eth9"};
	CHECK(describe_error(add, make_error(ENODEV)) ==
	      "softrnic: add roce0: netdev 'eth9' not found (ENODEV)");
	CHECK(describe_error(add, make_error(ENFILE)) ==
	      "softrnic: add roce0: an RDMA device named 'roce0' already exists (ENFILE)");
	std::string inval = describe_error(add, make_error(EINVAL));
	CHECK(inval.find("link type 'roce' is not registered") != std::string::npos);
	CHECK(inval.find("softrnic.ko") != std::string::npos);
	CHECK(inval.ends_with("(EINVAL)"));
	CHECK(describe_error(add, make_error(EPERM)).find("CAP_NET_ADMIN") != std::string::npos);
	// softrnic.ko's own refusals (kernel/device.c).
	CHECK(describe_error(add, make_error(EEXIST)) ==
	      "softrnic: add roce0: an RDMA device named 'roce0' already exists (EEXIST)");
	CHECK(describe_error(add, make_error(EBUSY)) ==
	      "softrnic: add roce0: netdev 'eth9' already has a roce device (EBUSY)");
	CHECK(describe_error(add, make_error(EPROTONOSUPPORT)) ==
	      "softrnic: add roce0: netdev 'eth9' is not an Ethernet device (EPROTONOSUPPORT)");
}

TEST_CASE("tool errors: del and list failures", "[tool]")
{
	CommandContext del{"del", "roce0", {}, {}};
	CHECK(describe_error(del, make_error(ENODEV)) ==
	      "softrnic: del roce0: no RDMA device named 'roce0' (ENODEV)");
	CHECK(describe_error(del, make_error(EINVAL)).find("refused to delete 'roce0'") !=
	      std::string::npos);

	CommandContext list{"list", {}, {}, {}};
	CHECK(describe_error(list, NldevClient::open_error(EPROTONOSUPPORT)) ==
	      "softrnic: list: this kernel has no RDMA netlink support (CONFIG_INFINIBAND off or "
	      "ib_core not loadable) (EPROTONOSUPPORT)");
	CHECK(describe_error(list, NldevClient::open_error(EMFILE)) ==
	      "softrnic: list: cannot open an RDMA netlink socket: Too many open files (EMFILE)");
	CHECK(describe_error(list, make_error(EIO)) == "softrnic: list: Input/output error (EIO)");
}

TEST_CASE("tool errors: kernel text, own text, no errno", "[tool]")
{
	CommandContext add{"add", "roce0", "roce", "eth0"};
	Error with_ack{EINVAL, "Attribute failed policy validation", {}};
	std::string line = describe_error(add, with_ack);
	CHECK(line.find(": Attribute failed policy validation (EINVAL)") != std::string::npos);

	CHECK(describe_error(add, make_error(ETIMEDOUT, "no reply from the kernel")) ==
	      "softrnic: add roce0: no reply from the kernel (ETIMEDOUT)");

	CommandContext del{"del", "rxe0", {}, {}};
	CHECK(describe_error(del, make_error(0, "refused")) == "softrnic: del rxe0: refused");

	CHECK(errno_name(ENODEV) == "ENODEV");
	CHECK(errno_name(100000) == "errno 100000");
}
