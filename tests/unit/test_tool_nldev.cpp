// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// RDMA nldev requests and reply parsing in the softrnic tool.  Replies are
// built the way drivers/infiniband/core/nldev.c fills them.
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <map>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_netlink.h>
#include <string>

#include "softrnic-abi.h"
#include "tool/rdma_nldev.h"

using namespace softrnic::tool;

namespace
{

// One reply message under construction.
class Reply
{
public:
	explicit Reply(unsigned int cmd) : buf_(4096)
	{
		nlh_ = mnl_nlmsg_put_header(buf_.data());
		nlh_->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd);
		nlh_->nlmsg_seq = 1;
	}
	nlmsghdr *nlh() { return nlh_; }
	// Like nla_put_u64_64bit: a pad attribute keeps the u64 8-aligned.
	void put_u64(uint16_t type, uint64_t v)
	{
		if ((nlh_->nlmsg_len + MNL_ATTR_HDRLEN) % 8)
			mnl_attr_put(nlh_, RDMA_NLDEV_ATTR_PAD, 0, nullptr);
		mnl_attr_put_u64(nlh_, type, v);
	}
	NlMessage msg()
	{
		buf_.resize(nlh_->nlmsg_len);
		return split_datagram({buf_.data(), buf_.size()})->front();
	}

private:
	Bytes buf_;
	nlmsghdr *nlh_;
};

// Attribute type -> raw payload, for checking requests.
std::map<uint16_t, std::string> attrs_of(const NlRequest &req)
{
	std::map<uint16_t, std::string> out;
	auto msg = split_datagram(req.bytes());
	REQUIRE(msg);
	REQUIRE(msg->size() == 1);
	Status st = for_each_attr(msg->front().payload(), [&](const nlattr &a) -> Status {
		auto *p = static_cast<const char *>(mnl_attr_get_payload(&a));
		out[mnl_attr_get_type(&a)] = std::string(p, mnl_attr_get_payload_len(&a));
		return {};
	});
	REQUIRE(st);
	return out;
}

nlmsghdr header_of(const NlRequest &req)
{
	nlmsghdr h;
	std::memcpy(&h, req.bytes().data(), sizeof(h));
	return h;
}

std::string u32_bytes(uint32_t v)
{
	return std::string(reinterpret_cast<const char *>(&v), sizeof(v));
}

} // namespace

TEST_CASE("tool: NEWLINK carries exactly name, link type and netdev", "[tool]")
{
	NlRequest req = build_newlink(3, "roce0", "roce", "eth0");
	nlmsghdr h = header_of(req);
	CHECK(h.nlmsg_type == (RDMA_NL_NLDEV << 10) + RDMA_NLDEV_CMD_NEWLINK);
	CHECK(h.nlmsg_seq == 3);
	CHECK(h.nlmsg_flags == (NLM_F_REQUEST | NLM_F_ACK));
	// NLM_F_EXCL == NLM_F_MATCH: RDMA netlink would run a dump instead.
	CHECK((h.nlmsg_flags & (NLM_F_EXCL | NLM_F_DUMP)) == 0);

	auto a = attrs_of(req);
	CHECK(a.size() == 3);
	CHECK(a[RDMA_NLDEV_ATTR_DEV_NAME] == std::string("roce0", 6));
	CHECK(a[RDMA_NLDEV_ATTR_LINK_TYPE] == std::string("roce", 5));
	CHECK(a[RDMA_NLDEV_ATTR_NDEV_NAME] == std::string("eth0", 5));
}

TEST_CASE("tool: DELLINK, PORT_GET, GET_CHARDEV and the device dump", "[tool]")
{
	SECTION("dellink")
	{
		NlRequest req = build_dellink(4, 7);
		nlmsghdr h = header_of(req);
		CHECK(h.nlmsg_type == (RDMA_NL_NLDEV << 10) + RDMA_NLDEV_CMD_DELLINK);
		CHECK(h.nlmsg_flags == (NLM_F_REQUEST | NLM_F_ACK));
		auto a = attrs_of(req);
		CHECK(a.size() == 1);
		CHECK(a[RDMA_NLDEV_ATTR_DEV_INDEX] == u32_bytes(7));
	}
	SECTION("port get")
	{
		NlRequest req = build_port_get(5, 2, 1);
		CHECK(header_of(req).nlmsg_type == (RDMA_NL_NLDEV << 10) + RDMA_NLDEV_CMD_PORT_GET);
		auto a = attrs_of(req);
		CHECK(a[RDMA_NLDEV_ATTR_DEV_INDEX] == u32_bytes(2));
		CHECK(a[RDMA_NLDEV_ATTR_PORT_INDEX] == u32_bytes(1));
	}
	SECTION("chardev get")
	{
		NlRequest req = build_chardev_get(6, 2, "uverbs");
		CHECK(header_of(req).nlmsg_type ==
		      (RDMA_NL_NLDEV << 10) + RDMA_NLDEV_CMD_GET_CHARDEV);
		auto a = attrs_of(req);
		CHECK(a[RDMA_NLDEV_ATTR_DEV_INDEX] == u32_bytes(2));
		CHECK(a[RDMA_NLDEV_ATTR_CHARDEV_TYPE] == std::string("uverbs", 7));
		CHECK(a.count(RDMA_NLDEV_ATTR_PORT_INDEX) == 0); // uverbs refuses ports
	}
	SECTION("device dump")
	{
		NlRequest req = build_dev_dump(8);
		nlmsghdr h = header_of(req);
		CHECK(h.nlmsg_type == (RDMA_NL_NLDEV << 10) + RDMA_NLDEV_CMD_GET);
		CHECK((h.nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP);
		CHECK(attrs_of(req).empty());
	}
}

TEST_CASE("tool: parse_device reads fill_dev_info's attributes", "[tool]")
{
	Reply r(RDMA_NLDEV_CMD_GET);
	mnl_attr_put_u32(r.nlh(), RDMA_NLDEV_ATTR_DEV_INDEX, 3);
	mnl_attr_put_strz(r.nlh(), RDMA_NLDEV_ATTR_DEV_NAME, "roce0");
	mnl_attr_put_u32(r.nlh(), RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	r.put_u64(RDMA_NLDEV_ATTR_CAP_FLAGS, 0x1234);
	r.put_u64(RDMA_NLDEV_ATTR_NODE_GUID, 0x0200000000000001ULL);
	mnl_attr_put_u8(r.nlh(), RDMA_NLDEV_ATTR_DEV_NODE_TYPE, 1);
	mnl_attr_put_u8(r.nlh(), RDMA_NLDEV_ATTR_DEV_DIM, 0);
	mnl_attr_put_strz(r.nlh(), RDMA_NLDEV_ATTR_DEV_PROTOCOL, "roce");
	mnl_attr_put_u32(r.nlh(), 4000, 1); // from some future kernel

	auto dev = parse_device(r.msg());
	REQUIRE(dev);
	CHECK(dev->index == 3);
	CHECK(dev->name == "roce0");
	CHECK(dev->port_count == 1);
	CHECK(dev->protocol == "roce");
	CHECK(dev->node_type == 1);
	CHECK(device_type_name(*dev) == "roce");
}

TEST_CASE("tool: parse_device rejects malformed replies", "[tool]")
{
	SECTION("no index")
	{
		Reply r(RDMA_NLDEV_CMD_GET);
		mnl_attr_put_strz(r.nlh(), RDMA_NLDEV_ATTR_DEV_NAME, "roce0");
		auto dev = parse_device(r.msg());
		REQUIRE_FALSE(dev);
		CHECK(dev.error().code == EBADMSG);
	}
	SECTION("index of the wrong size")
	{
		Reply r(RDMA_NLDEV_CMD_GET);
		mnl_attr_put_u16(r.nlh(), RDMA_NLDEV_ATTR_DEV_INDEX, 3);
		mnl_attr_put_strz(r.nlh(), RDMA_NLDEV_ATTR_DEV_NAME, "roce0");
		REQUIRE_FALSE(parse_device(r.msg()));
	}
	SECTION("unterminated name")
	{
		Reply r(RDMA_NLDEV_CMD_GET);
		mnl_attr_put_u32(r.nlh(), RDMA_NLDEV_ATTR_DEV_INDEX, 3);
		mnl_attr_put(r.nlh(), RDMA_NLDEV_ATTR_DEV_NAME, 5, "roce0");
		REQUIRE_FALSE(parse_device(r.msg()));
	}
	SECTION("another command's reply")
	{
		Reply r(RDMA_NLDEV_CMD_PORT_GET);
		mnl_attr_put_u32(r.nlh(), RDMA_NLDEV_ATTR_DEV_INDEX, 3);
		mnl_attr_put_strz(r.nlh(), RDMA_NLDEV_ATTR_DEV_NAME, "roce0");
		REQUIRE_FALSE(parse_device(r.msg()));
	}
}

TEST_CASE("tool: parse_port reads state and netdev", "[tool]")
{
	Reply r(RDMA_NLDEV_CMD_PORT_GET);
	mnl_attr_put_u32(r.nlh(), RDMA_NLDEV_ATTR_DEV_INDEX, 3);
	mnl_attr_put_strz(r.nlh(), RDMA_NLDEV_ATTR_DEV_NAME, "iw0");
	mnl_attr_put_u32(r.nlh(), RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	mnl_attr_put_u8(r.nlh(), RDMA_NLDEV_ATTR_PORT_STATE, 4);
	mnl_attr_put_u8(r.nlh(), RDMA_NLDEV_ATTR_PORT_PHYS_STATE, 5);

	SECTION("with a netdev in our namespace")
	{
		mnl_attr_put_u32(r.nlh(), RDMA_NLDEV_ATTR_NDEV_INDEX, 2);
		mnl_attr_put_strz(r.nlh(), RDMA_NLDEV_ATTR_NDEV_NAME, "eth0");
		auto p = parse_port(r.msg());
		REQUIRE(p);
		CHECK(p->dev_index == 3);
		CHECK(p->port == 1);
		CHECK(p->state == 4);
		CHECK(p->phys_state == 5);
		CHECK(p->netdev == "eth0");
		CHECK(p->netdev_index == 2);
		CHECK(port_state_name(p->state) == "ACTIVE");
	}
	SECTION("netdev elsewhere: no netdev attributes")
	{
		auto p = parse_port(r.msg());
		REQUIRE(p);
		CHECK(p->netdev.empty());
		CHECK_FALSE(p->netdev_index);
	}
}

TEST_CASE("tool: parse_chardev reads the uverbs node and driver id", "[tool]")
{
	Reply r(RDMA_NLDEV_CMD_GET_CHARDEV);
	SECTION("driver id as u32, as the kernel sends it")
	{
		mnl_attr_put_u32(r.nlh(), RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID, SOFTRNIC_DRIVER_ID);
		r.put_u64(RDMA_NLDEV_ATTR_CHARDEV, (231ULL << 20) | 192);
		r.put_u64(RDMA_NLDEV_ATTR_CHARDEV_ABI, 6);
		mnl_attr_put_strz(r.nlh(), RDMA_NLDEV_ATTR_CHARDEV_NAME, "uverbs0");
		auto cd = parse_chardev(r.msg());
		REQUIRE(cd);
		CHECK(cd->name == "uverbs0");
		CHECK(cd->abi == 6);
		CHECK(cd->devt == ((231ULL << 20) | 192));
		CHECK(cd->driver_id == SOFTRNIC_DRIVER_ID);
		CHECK(driver_name(cd->driver_id) == "softrnic");
	}
	SECTION("driver id as u64, as the uapi comment says")
	{
		r.put_u64(RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID, RDMA_DRIVER_RXE);
		mnl_attr_put_strz(r.nlh(), RDMA_NLDEV_ATTR_CHARDEV_NAME, "uverbs1");
		auto cd = parse_chardev(r.msg());
		REQUIRE(cd);
		CHECK(cd->driver_id == RDMA_DRIVER_RXE);
		CHECK(driver_name(cd->driver_id) == "rxe");
	}
	SECTION("no driver id (uverbs_no_driver_id_binding)")
	{
		mnl_attr_put_strz(r.nlh(), RDMA_NLDEV_ATTR_CHARDEV_NAME, "uverbs2");
		auto cd = parse_chardev(r.msg());
		REQUIRE(cd);
		CHECK_FALSE(cd->driver_id);
		CHECK(driver_name(cd->driver_id) == "-");
	}
	SECTION("no name")
	{
		r.put_u64(RDMA_NLDEV_ATTR_CHARDEV_ABI, 6);
		REQUIRE_FALSE(parse_chardev(r.msg()));
	}
}

TEST_CASE("tool: device type, port state and driver names", "[tool]")
{
	DeviceInfo d;
	d.protocol = "iw";
	CHECK(device_type_name(d) == "iwarp");
	d.protocol = "ib";
	CHECK(device_type_name(d) == "ib");
	d.protocol.clear();
	d.node_type = 4; // RDMA_NODE_RNIC
	CHECK(device_type_name(d) == "iwarp");
	d.node_type = 1; // RDMA_NODE_IB_CA: IB or RoCE, unknown
	CHECK(device_type_name(d) == "-");

	CHECK(port_state_name(std::nullopt) == "-");
	CHECK(port_state_name(1) == "DOWN");
	CHECK(port_state_name(2) == "INIT");
	CHECK(port_state_name(9) == "STATE_9");

	CHECK(driver_name(RDMA_DRIVER_SIW) == "siw");
	CHECK(driver_name(0x7777) == "id 30583");
}

TEST_CASE("tool: parse_port takes the CMD_GET type of a PORT_GET doit reply", "[tool]")
{
	// nldev_port_get_doit puts RDMA_NLDEV_CMD_GET in the reply header.
	Reply r(RDMA_NLDEV_CMD_GET);
	mnl_attr_put_u32(r.nlh(), RDMA_NLDEV_ATTR_DEV_INDEX, 0);
	mnl_attr_put_strz(r.nlh(), RDMA_NLDEV_ATTR_DEV_NAME, "rxe0");
	mnl_attr_put_u32(r.nlh(), RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	mnl_attr_put_u8(r.nlh(), RDMA_NLDEV_ATTR_PORT_STATE, 4);
	mnl_attr_put_strz(r.nlh(), RDMA_NLDEV_ATTR_NDEV_NAME, "dummy0");
	auto p = parse_port(r.msg());
	REQUIRE(p);
	CHECK(p->netdev == "dummy0");

	Reply other(RDMA_NLDEV_CMD_GET_CHARDEV);
	mnl_attr_put_u32(other.nlh(), RDMA_NLDEV_ATTR_DEV_INDEX, 0);
	auto bad = parse_port(other.msg());
	REQUIRE_FALSE(bad);
	CHECK(bad.error().code == EBADMSG);
}

TEST_CASE("tool: STAT_GET asks for a port's default counters", "[tool]")
{
	NlRequest req = build_stat_get(9, 4, 1);
	nlmsghdr h = header_of(req);
	CHECK(h.nlmsg_type == RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET));
	CHECK(h.nlmsg_flags == (NLM_F_REQUEST | NLM_F_ACK));
	auto a = attrs_of(req);
	CHECK(a.size() == 2);
	CHECK(a[RDMA_NLDEV_ATTR_DEV_INDEX] == u32_bytes(4));
	CHECK(a[RDMA_NLDEV_ATTR_PORT_INDEX] == u32_bytes(1));
}

TEST_CASE("tool: parse_port_counters reads stat_get_doit_default_counter's table", "[tool]")
{
	Reply r(RDMA_NLDEV_CMD_STAT_GET);
	mnl_attr_put_u32(r.nlh(), RDMA_NLDEV_ATTR_DEV_INDEX, 4);
	mnl_attr_put_strz(r.nlh(), RDMA_NLDEV_ATTR_DEV_NAME, "roce0");
	mnl_attr_put_u32(r.nlh(), RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	nlattr *table = mnl_attr_nest_start(r.nlh(), RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
	auto entry = [&](const char *name, uint64_t v, bool with_value = true) {
		nlattr *e = mnl_attr_nest_start(r.nlh(), RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
		mnl_attr_put_strz(r.nlh(), RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, name);
		if (with_value)
			r.put_u64(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, v);
		mnl_attr_nest_end(r.nlh(), e);
	};
	entry("tx_packets", 12);
	entry("rx_bytes", 1ULL << 40);

	SECTION("well formed")
	{
		mnl_attr_nest_end(r.nlh(), table);
		auto pc = parse_port_counters(r.msg());
		REQUIRE(pc);
		CHECK(pc->dev_index == 4);
		CHECK(pc->port == 1);
		REQUIRE(pc->counters.size() == 2);
		CHECK(pc->counters[0] == std::pair<std::string, uint64_t>{"tx_packets", 12});
		CHECK(pc->counters[1] == std::pair<std::string, uint64_t>{"rx_bytes", 1ULL << 40});
	}
	SECTION("an entry without a value")
	{
		entry("broken", 0, false);
		mnl_attr_nest_end(r.nlh(), table);
		auto pc = parse_port_counters(r.msg());
		REQUIRE_FALSE(pc);
		CHECK(pc.error().code == EBADMSG);
	}
}

TEST_CASE("tool: the QP counter dump asks for the port's counter groups", "[tool]")
{
	NlRequest req = build_qp_counter_dump(9, 4, 1);
	nlmsghdr h = header_of(req);
	CHECK(h.nlmsg_type == RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET));
	CHECK(h.nlmsg_flags == (NLM_F_REQUEST | NLM_F_DUMP));
	auto a = attrs_of(req);
	CHECK(a.size() == 3);
	CHECK(a[RDMA_NLDEV_ATTR_DEV_INDEX] == u32_bytes(4));
	CHECK(a[RDMA_NLDEV_ATTR_PORT_INDEX] == u32_bytes(1));
	CHECK(a[RDMA_NLDEV_ATTR_STAT_RES] == u32_bytes(RDMA_NLDEV_ATTR_RES_QP));
}

TEST_CASE("tool: parse_qp_counters reads fill_res_counter_entry's groups", "[tool]")
{
	Reply r(RDMA_NLDEV_CMD_STAT_GET);
	nlmsghdr *n = r.nlh();
	mnl_attr_put_u32(n, RDMA_NLDEV_ATTR_DEV_INDEX, 4);
	mnl_attr_put_strz(n, RDMA_NLDEV_ATTR_DEV_NAME, "roce0");
	nlattr *table = mnl_attr_nest_start(n, RDMA_NLDEV_ATTR_STAT_COUNTER);
	auto group = [&](uint32_t id, uint32_t mode, std::initializer_list<uint32_t> qpns,
			 bool with_table = true) {
		nlattr *e = mnl_attr_nest_start(n, RDMA_NLDEV_ATTR_STAT_COUNTER_ENTRY);
		mnl_attr_put_u32(n, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
		mnl_attr_put_u32(n, RDMA_NLDEV_ATTR_STAT_COUNTER_ID, id);
		mnl_attr_put_u32(n, RDMA_NLDEV_ATTR_STAT_MODE, mode);
		if (mode == RDMA_COUNTER_MODE_AUTO)
			mnl_attr_put_u8(n, RDMA_NLDEV_ATTR_RES_TYPE, 2);
		nlattr *qps = mnl_attr_nest_start(n, RDMA_NLDEV_ATTR_RES_QP);
		for (uint32_t qpn : qpns) {
			nlattr *q = mnl_attr_nest_start(n, RDMA_NLDEV_ATTR_RES_QP_ENTRY);
			mnl_attr_put_u32(n, RDMA_NLDEV_ATTR_RES_LQPN, qpn);
			mnl_attr_nest_end(n, q);
		}
		mnl_attr_nest_end(n, qps);
		if (with_table) {
			nlattr *hw = mnl_attr_nest_start(n, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
			nlattr *c = mnl_attr_nest_start(n, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);
			mnl_attr_put_strz(n, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME,
					  "tx_packets");
			r.put_u64(RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, 10 * id);
			mnl_attr_nest_end(n, c);
			mnl_attr_nest_end(n, hw);
		}
		mnl_attr_nest_end(n, e);
	};
	group(1, RDMA_COUNTER_MODE_AUTO, {17, 18});
	group(2, RDMA_COUNTER_MODE_MANUAL, {});

	SECTION("well formed, appended to what is there")
	{
		mnl_attr_nest_end(n, table);
		std::vector<QpCounter> out(1);
		REQUIRE(parse_qp_counters(r.msg(), out));
		REQUIRE(out.size() == 3);
		const QpCounter &a = out[1];
		CHECK(a.port == 1);
		CHECK(a.id == 1);
		CHECK(a.mode == uint32_t(RDMA_COUNTER_MODE_AUTO));
		CHECK(a.qp_type == 2);
		CHECK(a.qpns == std::vector<uint32_t>{17, 18});
		REQUIRE(a.counters.size() == 1);
		CHECK(a.counters[0] == std::pair<std::string, uint64_t>{"tx_packets", 10});
		CHECK(out[2].id == 2);
		CHECK_FALSE(out[2].qp_type);
		CHECK(out[2].qpns.empty());
		CHECK(counter_mode_name(*out[2].mode) == "manual");
		CHECK(qp_type_name(*a.qp_type) == "RC");
	}
	SECTION("a group without its counter table")
	{
		group(3, RDMA_COUNTER_MODE_MANUAL, {20}, false);
		mnl_attr_nest_end(n, table);
		std::vector<QpCounter> out;
		Status st = parse_qp_counters(r.msg(), out);
		REQUIRE_FALSE(st);
		CHECK(st.error().code == EBADMSG);
	}
}

TEST_CASE("tool: parse_port_counters wants the counter table", "[tool]")
{
	Reply r(RDMA_NLDEV_CMD_STAT_GET);
	mnl_attr_put_u32(r.nlh(), RDMA_NLDEV_ATTR_DEV_INDEX, 4);
	auto pc = parse_port_counters(r.msg());
	REQUIRE_FALSE(pc);
	CHECK(pc.error().code == EBADMSG);
	CHECK(phys_state_name(5) == "LINK_UP");
	CHECK(phys_state_name(std::nullopt) == "-");
}
