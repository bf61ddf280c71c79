// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The softrnic tool's list/add/del logic against a fake kernel, and the
// list table layout.  GIDs come from a throwaway sysfs tree.
#include <catch2/catch.hpp>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_netlink.h>
#include <sstream>
#include <unistd.h>

#include "softrnic-abi.h"
#include "tool/commands.h"
#include "tool/json.h"
#include "tool/nldev_client.h"

using namespace softrnic::tool;
namespace fs = std::filesystem;

namespace
{

struct FakeDevice {
	DeviceInfo info;
	std::optional<PortInfo> port;
	std::optional<ChardevInfo> chardev;
	std::optional<PortCounters> counters;
	std::optional<std::vector<QpCounter>> qp_counters;
};

class FakeApi final : public RdmaApi
{
public:
	std::vector<FakeDevice> devs;
	std::optional<Error> dump_error;
	std::optional<Error> link_error;
	std::optional<Error> port_error;
	std::vector<std::string> calls;

	Result<std::vector<DeviceInfo>> devices() override
	{
		calls.push_back("devices");
		if (dump_error)
			return *dump_error;
		std::vector<DeviceInfo> out;
		for (auto &d : devs)
			out.push_back(d.info);
		return out;
	}
	Result<PortInfo> port(uint32_t dev_index, uint32_t port) override
	{
		calls.push_back("port " + std::to_string(dev_index) + " " + std::to_string(port));
		if (port_error)
			return *port_error;
		for (auto &d : devs)
			if (d.info.index == dev_index && d.port)
				return *d.port;
		return make_error(EINVAL);
	}
	Result<ChardevInfo> uverbs(uint32_t dev_index) override
	{
		calls.push_back("uverbs " + std::to_string(dev_index));
		for (auto &d : devs)
			if (d.info.index == dev_index && d.chardev)
				return *d.chardev;
		return make_error(EOPNOTSUPP);
	}
	Status newlink(std::string_view name, std::string_view type,
		       std::string_view netdev) override
	{
		calls.push_back("newlink " + std::string(name) + " " + std::string(type) + " " +
				std::string(netdev));
		if (link_error)
			return *link_error;
		return {};
	}
	Status dellink(uint32_t dev_index) override
	{
		calls.push_back("dellink " + std::to_string(dev_index));
		if (link_error)
			return *link_error;
		return {};
	}
	Result<PortCounters> counters(uint32_t dev_index, uint32_t port) override
	{
		calls.push_back("counters " + std::to_string(dev_index) + " " +
				std::to_string(port));
		for (auto &d : devs)
			if (d.info.index == dev_index && d.counters)
				return *d.counters;
		return make_error(EOPNOTSUPP);
	}
	Result<std::vector<QpCounter>> qp_counters(uint32_t dev_index, uint32_t port) override
	{
		calls.push_back("qp_counters " + std::to_string(dev_index) + " " +
				std::to_string(port));
		if (qp_error)
			return *qp_error;
		for (auto &d : devs)
			if (d.info.index == dev_index && d.qp_counters)
				return *d.qp_counters;
		return make_error(EOPNOTSUPP);
	}
	std::optional<Error> qp_error;
};

FakeDevice device(uint32_t index, std::string name, std::string protocol,
		  std::optional<uint32_t> driver, std::string netdev, uint8_t state)
{
	FakeDevice d;
	d.info.index = index;
	d.info.name = name;
	d.info.port_count = 1;
	d.info.protocol = protocol;
	PortInfo p;
	p.dev_index = index;
	p.port = 1;
	p.netdev = netdev;
	p.state = state;
	d.port = p;
	ChardevInfo cd;
	cd.name = "uverbs" + std::to_string(index);
	cd.driver_id = driver;
	d.chardev = cd;
	return d;
}

// A private sysfs tree with one GID file.
class FakeSysfs
{
public:
	FakeSysfs()
	{
		static int instances;
		root_ =
		    fs::temp_directory_path() / ("softrnic-tool-test-" + std::to_string(getpid()) +
						 "-" + std::to_string(instances++));
		fs::remove_all(root_);
	}
	~FakeSysfs()
	{
		std::error_code ec;
		fs::remove_all(root_, ec);
	}
	void gid(const std::string &dev, const std::string &value, int index = 0,
		 const std::string &type = "")
	{
		fs::path port = root_ / "class/infiniband" / dev / "ports/1";
		fs::create_directories(port / "gids");
		std::ofstream(port / "gids" / std::to_string(index)) << value << "\n";
		if (!type.empty()) {
			fs::create_directories(port / "gid_attrs/types");
			std::ofstream(port / "gid_attrs/types" / std::to_string(index))
			    << type << "\n";
		}
	}
	const fs::path &root() const { return root_; }

private:
	fs::path root_;
};

struct Harness {
	std::shared_ptr<FakeApi> api = std::make_shared<FakeApi>();
	std::optional<Error> open_error;
	FakeSysfs sysfs;
	std::ostringstream out, err;

	int run(const Options &opts)
	{
		auto factory = [this]() -> Result<std::unique_ptr<RdmaApi>> {
			if (open_error)
				return *open_error;
			// Hand out a forwarding wrapper so the test keeps the fake.
			struct Fwd final : RdmaApi {
				std::shared_ptr<FakeApi> f;
				explicit Fwd(std::shared_ptr<FakeApi> p) : f(std::move(p)) {}
				Result<std::vector<DeviceInfo>> devices() override
				{
					return f->devices();
				}
				Result<PortInfo> port(uint32_t d, uint32_t p) override
				{
					return f->port(d, p);
				}
				Result<ChardevInfo> uverbs(uint32_t d) override
				{
					return f->uverbs(d);
				}
				Status newlink(std::string_view n, std::string_view t,
					       std::string_view nd) override
				{
					return f->newlink(n, t, nd);
				}
				Status dellink(uint32_t d) override { return f->dellink(d); }
				Result<PortCounters> counters(uint32_t d, uint32_t p) override
				{
					return f->counters(d, p);
				}
				Result<std::vector<QpCounter>> qp_counters(uint32_t d,
									   uint32_t p) override
				{
					return f->qp_counters(d, p);
				}
			};
			return std::unique_ptr<RdmaApi>(new Fwd(api));
		};
		CommandEnv env{factory, sysfs.root(), out, err};
		return run_command(opts, env);
	}
};

Options opts_for(Command c, std::string name = {})
{
	Options o;
	o.command = c;
	o.name = std::move(name);
	return o;
}

} // namespace

TEST_CASE("tool table: columns are padded, missing cells are dashes", "[tool]")
{
	std::vector<DeviceRow> rows{
	    {"roce0", "roce", "eth0", "ACTIVE", "fe80::1", "3", "::ffff:10.0.0.1",
	     "/dev/infiniband/uverbs0", "softrnic"},
	    {"iwarp10", "iwarp", "", "DOWN", "", "", "", "", "softrnic"},
	};
	CHECK(format_table(rows, false) ==
	      "DEVICE   TYPE   NETDEV  STATE   GID0     V4IDX  V4GID            UVERBS\n"
	      "roce0    roce   eth0    ACTIVE  fe80::1  3      ::ffff:10.0.0.1  "
	      "/dev/infiniband/uverbs0\n"
	      "iwarp10  iwarp  -       DOWN    -        -      -                -\n");
	CHECK(format_table({}, true) ==
	      "DEVICE  TYPE  NETDEV  STATE  GID0  V4IDX  V4GID  UVERBS  DRIVER\n");
}

TEST_CASE("tool list: only softrnic devices unless --all", "[tool]")
{
	Harness h;
	h.api->devs.push_back(device(0, "rxe0", "roce", RDMA_DRIVER_RXE, "eth0", 4));
	h.api->devs.push_back(device(1, "roce0", "roce", SOFTRNIC_DRIVER_ID, "eth0", 4));
	h.api->devs.push_back(device(2, "iw0", "iw", SOFTRNIC_DRIVER_ID, "eth1", 1));
	h.sysfs.gid("roce0", "fe80:0000:0000:0000:5054:00ff:fe12:3456");

	SECTION("default")
	{
		REQUIRE(h.run(opts_for(Command::list)) == kExitOk);
		CHECK(h.err.str().empty());
		CHECK(h.out.str() ==
		      "DEVICE  TYPE   NETDEV  STATE   GID0                                     "
		      "V4IDX  V4GID  UVERBS\n"
		      "roce0   roce   eth0    ACTIVE  fe80:0000:0000:0000:5054:00ff:fe12:3456  "
		      "-      -      /dev/infiniband/uverbs1\n"
		      "iw0     iwarp  eth1    DOWN    -                                        "
		      "-      -      /dev/infiniband/uverbs2\n");
	}
	SECTION("--all adds other drivers and a DRIVER column")
	{
		Options o = opts_for(Command::list);
		o.all = true;
		REQUIRE(h.run(o) == kExitOk);
		std::string s = h.out.str();
		CHECK(s.find("DRIVER\n") != std::string::npos);
		CHECK(s.find("rxe0") != std::string::npos);
		CHECK(s.find("  rxe\n") != std::string::npos);
		CHECK(s.find("  softrnic\n") != std::string::npos);
	}
}

TEST_CASE("tool list: per-device query failures leave dashes", "[tool]")
{
	Harness h;
	FakeDevice d = device(5, "roce1", "roce", SOFTRNIC_DRIVER_ID, "eth0", 4);
	d.port.reset(); // vanished between the dump and the port query
	h.api->devs.push_back(d);
	FakeDevice nouverbs = device(6, "mystery", "", std::nullopt, "eth2", 4);
	nouverbs.chardev.reset();
	h.api->devs.push_back(nouverbs);

	auto list = collect_rows(*h.api, true, h.sysfs.root());
	REQUIRE(list);
	const auto &rows = list->rows;
	REQUIRE(rows.size() == 2);
	CHECK(rows[0].name == "roce1");
	CHECK(rows[0].netdev.empty());
	CHECK(rows[0].state.empty());
	CHECK(rows[0].uverbs == "/dev/infiniband/uverbs5");
	CHECK(rows[1].uverbs.empty());
	CHECK(rows[1].driver == "-");
	CHECK(rows[1].type == "-");
	// EINVAL (device gone) and EOPNOTSUPP (no uverbs) are not news.
	CHECK(list->warnings.empty());

	// Without --all, a device whose driver we cannot learn is not ours.
	list = collect_rows(*h.api, false, h.sysfs.root());
	REQUIRE(list);
	CHECK(list->rows.size() == 1);
}

TEST_CASE("tool list: unexpected per-device failures are warned about", "[tool]")
{
	Harness h;
	h.api->devs.push_back(device(1, "roce0", "roce", SOFTRNIC_DRIVER_ID, "eth0", 4));
	h.api->port_error = make_error(EBADMSG, "unexpected netlink message type 5121");
	REQUIRE(h.run(opts_for(Command::list)) == kExitOk);
	CHECK(h.err.str() == "softrnic: list: warning: roce0: port 1: unexpected netlink message "
			     "type 5121 (EBADMSG)\n");
	CHECK(h.out.str().find("roce0") != std::string::npos);
}

TEST_CASE("tool list: kernel without RDMA netlink fails cleanly", "[tool]")
{
	Harness h;
	h.open_error = NldevClient::open_error(EPROTONOSUPPORT);
	CHECK(h.run(opts_for(Command::list)) == kExitFailure);
	CHECK(h.out.str().empty());
	CHECK(h.err.str().rfind("softrnic: list: this kernel has no RDMA netlink support", 0) == 0);

	Harness dump;
	dump.api->dump_error = make_error(EMSGSIZE);
	CHECK(dump.run(opts_for(Command::list)) == kExitFailure);
	CHECK(dump.err.str().find("(EMSGSIZE)") != std::string::npos);
}

TEST_CASE("tool add: passes the request through and maps errors", "[tool]")
{
	Harness h;
	Options o = opts_for(Command::add, "roce0");
	o.link_type = "roce";
	o.netdev = "eth9";
	REQUIRE(h.run(o) == kExitOk);
	CHECK(h.api->calls == std::vector<std::string>{"newlink roce0 roce eth9"});
	CHECK(h.out.str().empty());

	h.api->link_error = make_error(ENODEV);
	CHECK(h.run(o) == kExitFailure);
	CHECK(h.err.str() == "softrnic: add roce0: netdev 'eth9' not found (ENODEV)\n");
}

TEST_CASE("tool del: resolves the name and guards other drivers' devices", "[tool]")
{
	Harness h;
	h.api->devs.push_back(device(3, "rxe0", "roce", RDMA_DRIVER_RXE, "eth0", 4));
	h.api->devs.push_back(device(7, "roce0", "roce", SOFTRNIC_DRIVER_ID, "eth0", 4));

	SECTION("ours")
	{
		REQUIRE(h.run(opts_for(Command::del, "roce0")) == kExitOk);
		CHECK(h.api->calls.back() == "dellink 7");
	}
	SECTION("unknown name")
	{
		CHECK(h.run(opts_for(Command::del, "nope0")) == kExitFailure);
		CHECK(h.err.str() ==
		      "softrnic: del nope0: no RDMA device named 'nope0' (ENODEV)\n");
		CHECK(h.api->calls.back() == "devices");
	}
	SECTION("another driver's device needs --force")
	{
		CHECK(h.run(opts_for(Command::del, "rxe0")) == kExitFailure);
		CHECK(h.err.str().find("belongs to driver rxe") != std::string::npos);
		CHECK(h.api->calls.back() != "dellink 3");

		Options o = opts_for(Command::del, "rxe0");
		o.force = true;
		CHECK(h.run(o) == kExitOk);
		CHECK(h.api->calls.back() == "dellink 3");
	}
	SECTION("kernel refusal")
	{
		h.api->link_error = make_error(EINVAL);
		CHECK(h.run(opts_for(Command::del, "roce0")) == kExitFailure);
		CHECK(h.err.str().find("refused to delete 'roce0'") != std::string::npos);
	}
}

TEST_CASE("tool list: the RoCE v2 GID of an IPv4 address, in the table and in JSON", "[tool]")
{
	Harness h;
	h.api->devs.push_back(device(1, "roce0", "roce", SOFTRNIC_DRIVER_ID, "eth0", 4));
	h.sysfs.gid("roce0", "fe80:0000:0000:0000:5054:00ff:fe12:3456", 0, "IB/RoCE v1");
	h.sysfs.gid("roce0", "fe80:0000:0000:0000:5054:00ff:fe12:3456", 1, "RoCE v2");
	// A v1 entry of the IPv4 address comes first and must be passed over.
	h.sysfs.gid("roce0", "0000:0000:0000:0000:0000:ffff:0a00:0001", 2, "IB/RoCE v1");
	h.sysfs.gid("roce0", "0000:0000:0000:0000:0000:0000:0000:0000", 3, "RoCE v2");
	h.sysfs.gid("roce0", "0000:0000:0000:0000:0000:ffff:0a00:0001", 10, "RoCE v2");

	Options o = opts_for(Command::list);
	REQUIRE(h.run(o) == kExitOk);
	CHECK(h.out.str().find("  10     ::ffff:10.0.0.1  /dev/infiniband/uverbs1\n") !=
	      std::string::npos);

	Harness j;
	j.api->devs = h.api->devs;
	j.sysfs.gid("roce0", "0000:0000:0000:0000:0000:ffff:c0a8:01fe", 4, "RoCE v2");
	o.json = true;
	REQUIRE(j.run(o) == kExitOk);
	CHECK(j.out.str() ==
	      "[{\"ifname\":\"roce0\",\"type\":\"roce\",\"netdev\":\"eth0\",\"state\":\"ACTIVE\","
	      "\"gid0\":null,\"ipv4_gid_index\":4,\"ipv4_gid\":\"::ffff:192.168.1.254\","
	      "\"uverbs\":\"/dev/infiniband/uverbs1\"}]\n");
}

TEST_CASE("tool show: device line and every GID, text and pretty JSON", "[tool]")
{
	Harness h;
	h.api->devs.push_back(device(1, "roce0", "roce", SOFTRNIC_DRIVER_ID, "eth0", 4));
	h.api->devs[0].port->phys_state = 5;
	h.api->devs.push_back(device(2, "rxe0", "roce", RDMA_DRIVER_RXE, "eth0", 4));
	h.sysfs.gid("roce0", "fe80:0000:0000:0000:5054:00ff:fe12:3456", 0, "IB/RoCE v1");
	h.sysfs.gid("roce0", "0000:0000:0000:0000:0000:ffff:0a00:0001", 3, "RoCE v2");

	REQUIRE(h.run(opts_for(Command::show)) == kExitOk);
	CHECK(h.out.str() ==
	      "roce0: type roce netdev eth0 state ACTIVE physical_state LINK_UP driver softrnic "
	      "uverbs /dev/infiniband/uverbs1\n"
	      "    gid 0 fe80:0000:0000:0000:5054:00ff:fe12:3456 IB/RoCE v1\n"
	      "    gid 3 0000:0000:0000:0000:0000:ffff:0a00:0001 RoCE v2 ipv4 ::ffff:10.0.0.1\n");

	Harness p;
	p.api->devs = h.api->devs;
	Options o = opts_for(Command::show, "rxe0"); // a name picks any driver's device
	o.json = o.pretty = true;
	REQUIRE(p.run(o) == kExitOk);
	CHECK(p.out.str() == "[\n"
			     "    {\n"
			     "        \"ifname\": \"rxe0\",\n"
			     "        \"type\": \"roce\",\n"
			     "        \"netdev\": \"eth0\",\n"
			     "        \"state\": \"ACTIVE\",\n"
			     "        \"gid0\": null,\n"
			     "        \"ipv4_gid_index\": null,\n"
			     "        \"ipv4_gid\": null,\n"
			     "        \"uverbs\": \"/dev/infiniband/uverbs2\",\n"
			     "        \"driver\": \"rxe\",\n"
			     "        \"physical_state\": null,\n"
			     "        \"gids\": []\n"
			     "    }\n"
			     "]\n");

	Harness missing;
	REQUIRE(missing.run(opts_for(Command::show, "nope")) == kExitFailure);
	CHECK(missing.err.str() == "softrnic: show nope: no RDMA device named 'nope' (ENODEV)\n");
}

TEST_CASE("tool stats: port counters as rdma prints them, and JSON", "[tool]")
{
	Harness h;
	FakeDevice d = device(1, "roce0", "roce", SOFTRNIC_DRIVER_ID, "eth0", 4);
	d.counters = PortCounters{1, 1, {{"tx_packets", 12}, {"rx_drop_bad_icrc", 0}}};
	h.api->devs.push_back(d);
	h.api->devs.push_back(device(2, "iw0", "iw", SOFTRNIC_DRIVER_ID, "eth0", 4)); // none

	REQUIRE(h.run(opts_for(Command::stats)) == kExitOk);
	CHECK(h.out.str() == "link roce0/1 tx_packets 12 rx_drop_bad_icrc 0\n");

	Harness j;
	j.api->devs = h.api->devs;
	Options o = opts_for(Command::stats, "roce0");
	o.json = true;
	REQUIRE(j.run(o) == kExitOk);
	CHECK(j.out.str() ==
	      "[{\"ifname\":\"roce0\",\"port\":1,\"tx_packets\":12,\"rx_drop_bad_icrc\":0}]\n");

	Harness none;
	none.api->devs = h.api->devs;
	REQUIRE(none.run(opts_for(Command::stats, "iw0")) == kExitFailure);
	CHECK(
	    none.err.str() ==
	    "softrnic: stats iw0: the device keeps no counters (or has just gone) (EOPNOTSUPP)\n");
	CHECK(none.out.str().empty());
}

TEST_CASE("tool stats: QP counter groups under their port", "[tool]")
{
	Harness h;
	FakeDevice d = device(1, "roce0", "roce", SOFTRNIC_DRIVER_ID, "eth0", 4);
	d.counters = PortCounters{1, 1, {{"tx_packets", 12}}};
	QpCounter a;
	a.port = 1;
	a.id = 3;
	a.mode = RDMA_COUNTER_MODE_AUTO;
	a.qp_type = 2;
	a.qpns = {17, 18};
	a.counters = {{"tx_packets", 5}, {"rx_bytes", 4096}};
	QpCounter m;
	m.port = 1;
	m.id = 4;
	m.mode = RDMA_COUNTER_MODE_MANUAL;
	m.counters = {{"tx_packets", 0}};
	d.qp_counters = std::vector<QpCounter>{a, m};
	h.api->devs.push_back(d);

	REQUIRE(h.run(opts_for(Command::stats)) == kExitOk);
	CHECK(h.out.str() ==
	      "link roce0/1 tx_packets 12\n"
	      "    cntn 3 mode auto qp-type RC lqpn 17,18 tx_packets 5 rx_bytes 4096\n"
	      "    cntn 4 mode manual lqpn - tx_packets 0\n");

	Harness j;
	j.api->devs = h.api->devs;
	Options o = opts_for(Command::stats, "roce0");
	o.json = true;
	REQUIRE(j.run(o) == kExitOk);
	CHECK(j.out.str() == "[{\"ifname\":\"roce0\",\"port\":1,\"tx_packets\":12,"
			     "\"qp_counters\":[{\"cntn\":3,\"mode\":\"auto\",\"qp_type\":\"RC\","
			     "\"lqpn\":[17,18],\"tx_packets\":5,\"rx_bytes\":4096},"
			     "{\"cntn\":4,\"mode\":\"manual\",\"lqpn\":[],\"tx_packets\":0}]}]\n");

	// No groups yet: an empty list, so JSON readers need not guess.
	Harness empty;
	empty.api->devs = h.api->devs;
	empty.api->devs[0].qp_counters = std::vector<QpCounter>{};
	REQUIRE(empty.run(o) == kExitOk);
	CHECK(empty.out.str() ==
	      "[{\"ifname\":\"roce0\",\"port\":1,\"tx_packets\":12,\"qp_counters\":[]}]\n");

	// A failure other than "none here" is reported.
	Harness bad;
	bad.api->devs = h.api->devs;
	bad.api->qp_error = make_error(EIO);
	REQUIRE(bad.run(opts_for(Command::stats, "roce0")) == kExitFailure);
	CHECK(bad.err.str().find("softrnic: stats roce0: ") == 0);
}

TEST_CASE("tool json: strings are escaped", "[tool]")
{
	CHECK(json_quote("a\"b\\c\n\x01\xc3") == "\"a\\\"b\\\\c\\n\\u0001\\u00c3\"");
	Json o = Json::object();
	o.set("k", Json::array());
	o.set("e", Json::object());
	CHECK(o.dump(true) == "{\n    \"k\": [],\n    \"e\": {}\n}\n");
}
