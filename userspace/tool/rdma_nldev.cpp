// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "tool/rdma_nldev.h"

#include <cerrno>
#include <cstring>
#include <initializer_list>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_netlink.h>

#include "softrnic-abi.h"

namespace softrnic::tool
{

namespace
{

// enum rdma_node_type is kernel-internal (include/rdma/ib_verbs.h).
enum : uint8_t {
	NODE_IB_CA = 1,
	NODE_RNIC = 4,
	NODE_USNIC = 5,
	NODE_USNIC_UDP = 6,
};

Error bad_attr(const nlattr &attr)
{
	return make_error(EBADMSG, "malformed netlink attribute " +
				       std::to_string(mnl_attr_get_type(&attr)));
}

// Typed readers: each checks the payload size before reading.
Status read_u8(const nlattr &attr, uint8_t &out)
{
	if (mnl_attr_validate(&attr, MNL_TYPE_U8) < 0)
		return bad_attr(attr);
	out = mnl_attr_get_u8(&attr);
	return {};
}

Status read_u32(const nlattr &attr, uint32_t &out)
{
	if (mnl_attr_validate(&attr, MNL_TYPE_U32) < 0)
		return bad_attr(attr);
	out = mnl_attr_get_u32(&attr);
	return {};
}

Status read_u64(const nlattr &attr, uint64_t &out)
{
	if (mnl_attr_validate(&attr, MNL_TYPE_U64) < 0)
		return bad_attr(attr);
	out = mnl_attr_get_u64(&attr);
	return {};
}

Status read_string(const nlattr &attr, std::string &out)
{
	if (mnl_attr_validate(&attr, MNL_TYPE_NUL_STRING) < 0)
		return bad_attr(attr);
	out = mnl_attr_get_str(&attr);
	return {};
}

template <typename T> Status read_opt(const nlattr &attr, std::optional<T> &out)
{
	T v{};
	Status st;
	if constexpr (sizeof(T) == 1)
		st = read_u8(attr, v);
	else
		st = read_u32(attr, v);
	if (st)
		out = v;
	return st;
}

// The uapi header documents the driver id as u64, the kernel emits u32
// (nldev_policy, ib_uverbs_get_nl_info); accept both widths.
Status read_driver_id(const nlattr &attr, std::optional<uint32_t> &out)
{
	uint16_t len = mnl_attr_get_payload_len(&attr);
	if (len == sizeof(uint32_t)) {
		out = mnl_attr_get_u32(&attr);
		return {};
	}
	if (len == sizeof(uint64_t)) {
		out = static_cast<uint32_t>(mnl_attr_get_u64(&attr));
		return {};
	}
	return bad_attr(attr);
}

// Accepts any of the reply types the kernel is known to use for a command.
Status expect_type(const NlMessage &msg, std::initializer_list<unsigned int> cmds)
{
	for (unsigned int cmd : cmds)
		if (msg.type == nldev_type(cmd))
			return {};
	return make_error(EBADMSG, "unexpected netlink message type " + std::to_string(msg.type));
}

} // namespace

uint16_t nldev_type(unsigned int cmd)
{
	return static_cast<uint16_t>(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd));
}

NlRequest build_dev_dump(uint32_t seq)
{
	return NlRequest(nldev_type(RDMA_NLDEV_CMD_GET), NLM_F_REQUEST | NLM_F_DUMP, seq);
}

NlRequest build_port_get(uint32_t seq, uint32_t dev_index, uint32_t port)
{
	NlRequest req(nldev_type(RDMA_NLDEV_CMD_PORT_GET), NLM_F_REQUEST | NLM_F_ACK, seq);
	req.put_u32(RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
	req.put_u32(RDMA_NLDEV_ATTR_PORT_INDEX, port);
	return req;
}

NlRequest build_chardev_get(uint32_t seq, uint32_t dev_index, std::string_view type)
{
	NlRequest req(nldev_type(RDMA_NLDEV_CMD_GET_CHARDEV), NLM_F_REQUEST | NLM_F_ACK, seq);
	req.put_u32(RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
	req.put_string(RDMA_NLDEV_ATTR_CHARDEV_TYPE, type);
	return req;
}

// The kernel's nldev_newlink requires exactly these three attributes and
// looks the link type up among registered rdma_link_ops (loading the module
// aliased rdma-link-<type> if needed).
NlRequest build_newlink(uint32_t seq, std::string_view name, std::string_view link_type,
			std::string_view netdev)
{
	NlRequest req(nldev_type(RDMA_NLDEV_CMD_NEWLINK), NLM_F_REQUEST | NLM_F_ACK, seq);
	req.put_string(RDMA_NLDEV_ATTR_DEV_NAME, name);
	req.put_string(RDMA_NLDEV_ATTR_LINK_TYPE, link_type);
	req.put_string(RDMA_NLDEV_ATTR_NDEV_NAME, netdev);
	return req;
}

NlRequest build_dellink(uint32_t seq, uint32_t dev_index)
{
	NlRequest req(nldev_type(RDMA_NLDEV_CMD_DELLINK), NLM_F_REQUEST | NLM_F_ACK, seq);
	req.put_u32(RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
	return req;
}

// nldev_stat_get_doit: with no RDMA_NLDEV_ATTR_STAT_RES it answers with
// the port's default counters (stat_get_doit_default_counter).
NlRequest build_stat_get(uint32_t seq, uint32_t dev_index, uint32_t port)
{
	NlRequest req(nldev_type(RDMA_NLDEV_CMD_STAT_GET), NLM_F_REQUEST | NLM_F_ACK, seq);
	req.put_u32(RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
	req.put_u32(RDMA_NLDEV_ATTR_PORT_INDEX, port);
	return req;
}

// nldev_stat_get_dumpit: RDMA_NLDEV_ATTR_STAT_RES = QP dumps the device's
// counter groups (res_get_common_dumpit), on PORT_INDEX only if given.
NlRequest build_qp_counter_dump(uint32_t seq, uint32_t dev_index, uint32_t port)
{
	NlRequest req(nldev_type(RDMA_NLDEV_CMD_STAT_GET), NLM_F_REQUEST | NLM_F_DUMP, seq);
	req.put_u32(RDMA_NLDEV_ATTR_DEV_INDEX, dev_index);
	req.put_u32(RDMA_NLDEV_ATTR_PORT_INDEX, port);
	req.put_u32(RDMA_NLDEV_ATTR_STAT_RES, RDMA_NLDEV_ATTR_RES_QP);
	return req;
}

Result<DeviceInfo> parse_device(const NlMessage &msg)
{
	if (Status st = expect_type(msg, {RDMA_NLDEV_CMD_GET}); !st)
		return st.error();
	DeviceInfo dev;
	bool have_index = false;
	Status st = for_each_attr(msg.payload(), [&](const nlattr &attr) -> Status {
		switch (mnl_attr_get_type(&attr)) {
		case RDMA_NLDEV_ATTR_DEV_INDEX:
			have_index = true;
			return read_u32(attr, dev.index);
		case RDMA_NLDEV_ATTR_DEV_NAME:
			return read_string(attr, dev.name);
		case RDMA_NLDEV_ATTR_PORT_INDEX:
			return read_u32(attr, dev.port_count);
		case RDMA_NLDEV_ATTR_DEV_PROTOCOL:
			return read_string(attr, dev.protocol);
		case RDMA_NLDEV_ATTR_DEV_NODE_TYPE:
			return read_opt(attr, dev.node_type);
		default:
			return {};
		}
	});
	if (!st)
		return st.error();
	if (!have_index || dev.name.empty())
		return make_error(EBADMSG, "device reply without index or name");
	return dev;
}

Result<PortInfo> parse_port(const NlMessage &msg)
{
	// nldev_port_get_doit (6.1 and later) replies with type CMD_GET;
	// only the port dump uses CMD_PORT_GET.
	if (Status st = expect_type(msg, {RDMA_NLDEV_CMD_PORT_GET, RDMA_NLDEV_CMD_GET}); !st)
		return st.error();
	PortInfo port;
	Status st = for_each_attr(msg.payload(), [&](const nlattr &attr) -> Status {
		switch (mnl_attr_get_type(&attr)) {
		case RDMA_NLDEV_ATTR_DEV_INDEX:
			return read_u32(attr, port.dev_index);
		case RDMA_NLDEV_ATTR_PORT_INDEX:
			return read_u32(attr, port.port);
		case RDMA_NLDEV_ATTR_PORT_STATE:
			return read_opt(attr, port.state);
		case RDMA_NLDEV_ATTR_PORT_PHYS_STATE:
			return read_opt(attr, port.phys_state);
		case RDMA_NLDEV_ATTR_NDEV_NAME:
			return read_string(attr, port.netdev);
		case RDMA_NLDEV_ATTR_NDEV_INDEX:
			return read_opt(attr, port.netdev_index);
		default:
			return {};
		}
	});
	if (!st)
		return st.error();
	return port;
}

Result<ChardevInfo> parse_chardev(const NlMessage &msg)
{
	if (Status st = expect_type(msg, {RDMA_NLDEV_CMD_GET_CHARDEV}); !st)
		return st.error();
	ChardevInfo cd;
	Status st = for_each_attr(msg.payload(), [&](const nlattr &attr) -> Status {
		switch (mnl_attr_get_type(&attr)) {
		case RDMA_NLDEV_ATTR_CHARDEV_NAME:
			return read_string(attr, cd.name);
		case RDMA_NLDEV_ATTR_CHARDEV:
			return read_u64(attr, cd.devt);
		case RDMA_NLDEV_ATTR_CHARDEV_ABI:
			return read_u64(attr, cd.abi);
		case RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID:
			return read_driver_id(attr, cd.driver_id);
		default:
			return {};
		}
	});
	if (!st)
		return st.error();
	if (cd.name.empty())
		return make_error(EBADMSG, "chardev reply without a name");
	return cd;
}

namespace
{

ByteView nested_payload(const nlattr &attr)
{
	return ByteView(static_cast<const std::byte *>(mnl_attr_get_payload(&attr)),
			mnl_attr_get_payload_len(&attr));
}

using CounterList = std::vector<std::pair<std::string, uint64_t>>;

// One RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY: a name and a u64 value, both
// required.
Status parse_counter_entry(const nlattr &entry, CounterList &out)
{
	std::string name;
	std::optional<uint64_t> value;
	Status st = for_each_attr(nested_payload(entry), [&](const nlattr &attr) -> Status {
		switch (mnl_attr_get_type(&attr)) {
		case RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME:
			return read_string(attr, name);
		case RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE: {
			uint64_t v = 0;
			Status r = read_u64(attr, v);
			if (r)
				value = v;
			return r;
		}
		default:
			return {};
		}
	});
	if (!st)
		return st;
	if (name.empty() || !value)
		return make_error(EBADMSG, "counter entry without a name or value");
	out.emplace_back(std::move(name), *value);
	return {};
}

// RDMA_NLDEV_ATTR_STAT_HWCOUNTERS: the entries, in the kernel's order.
Status parse_counter_table(const nlattr &table, CounterList &out)
{
	return for_each_attr(nested_payload(table), [&](const nlattr &e) -> Status {
		if (mnl_attr_get_type(&e) != RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY)
			return {};
		return parse_counter_entry(e, out);
	});
}

// RDMA_NLDEV_ATTR_RES_QP of a counter group (fill_stat_counter_qps): one
// RES_QP_ENTRY with an RES_LQPN per bound QP.
Status parse_bound_qps(const nlattr &table, std::vector<uint32_t> &out)
{
	return for_each_attr(nested_payload(table), [&](const nlattr &e) -> Status {
		if (mnl_attr_get_type(&e) != RDMA_NLDEV_ATTR_RES_QP_ENTRY)
			return {};
		return for_each_attr(nested_payload(e), [&](const nlattr &a) -> Status {
			if (mnl_attr_get_type(&a) != RDMA_NLDEV_ATTR_RES_LQPN)
				return {};
			uint32_t qpn = 0;
			Status st = read_u32(a, qpn);
			if (st)
				out.push_back(qpn);
			return st;
		});
	});
}

// One RDMA_NLDEV_ATTR_STAT_COUNTER_ENTRY (fill_res_counter_entry); the id
// and the counter table are required.
Status parse_qp_counter(const nlattr &entry, std::vector<QpCounter> &out)
{
	QpCounter c;
	bool have_id = false, have_table = false;
	Status st = for_each_attr(nested_payload(entry), [&](const nlattr &attr) -> Status {
		switch (mnl_attr_get_type(&attr)) {
		case RDMA_NLDEV_ATTR_PORT_INDEX:
			return read_u32(attr, c.port);
		case RDMA_NLDEV_ATTR_STAT_COUNTER_ID:
			have_id = true;
			return read_u32(attr, c.id);
		case RDMA_NLDEV_ATTR_STAT_MODE:
			return read_opt(attr, c.mode);
		case RDMA_NLDEV_ATTR_RES_TYPE:
			return read_opt(attr, c.qp_type);
		case RDMA_NLDEV_ATTR_RES_QP:
			return parse_bound_qps(attr, c.qpns);
		case RDMA_NLDEV_ATTR_STAT_HWCOUNTERS:
			have_table = true;
			return parse_counter_table(attr, c.counters);
		default:
			return {};
		}
	});
	if (!st)
		return st;
	if (!have_id || !have_table)
		return make_error(EBADMSG, "QP counter without an id or a counter table");
	out.push_back(std::move(c));
	return {};
}

} // namespace

Status parse_qp_counters(const NlMessage &msg, std::vector<QpCounter> &out)
{
	if (Status st = expect_type(msg, {RDMA_NLDEV_CMD_STAT_GET}); !st)
		return st;
	return for_each_attr(msg.payload(), [&](const nlattr &attr) -> Status {
		if (mnl_attr_get_type(&attr) != RDMA_NLDEV_ATTR_STAT_COUNTER)
			return {};
		return for_each_attr(nested_payload(attr), [&](const nlattr &e) -> Status {
			if (mnl_attr_get_type(&e) != RDMA_NLDEV_ATTR_STAT_COUNTER_ENTRY)
				return {};
			return parse_qp_counter(e, out);
		});
	});
}

Result<PortCounters> parse_port_counters(const NlMessage &msg)
{
	if (Status st = expect_type(msg, {RDMA_NLDEV_CMD_STAT_GET}); !st)
		return st.error();
	PortCounters pc;
	bool have_table = false;
	Status st = for_each_attr(msg.payload(), [&](const nlattr &attr) -> Status {
		switch (mnl_attr_get_type(&attr)) {
		case RDMA_NLDEV_ATTR_DEV_INDEX:
			return read_u32(attr, pc.dev_index);
		case RDMA_NLDEV_ATTR_PORT_INDEX:
			return read_u32(attr, pc.port);
		case RDMA_NLDEV_ATTR_STAT_HWCOUNTERS:
			have_table = true;
			return parse_counter_table(attr, pc.counters);
		default:
			return {};
		}
	});
	if (!st)
		return st.error();
	if (!have_table)
		return make_error(EBADMSG, "counter reply without a counter table");
	return pc;
}

std::string phys_state_name(std::optional<uint8_t> state)
{
	if (!state)
		return "-";
	// enum ib_port_phys_state, include/rdma/ib_verbs.h
	switch (*state) {
	case 1:
		return "SLEEP";
	case 2:
		return "POLLING";
	case 3:
		return "DISABLED";
	case 4:
		return "PORT_CONFIGURATION_TRAINING";
	case 5:
		return "LINK_UP";
	case 6:
		return "LINK_ERROR_RECOVERY";
	case 7:
		return "PHY_TEST";
	default:
		return "PHYS_STATE_" + std::to_string(*state);
	}
}

std::string port_state_name(std::optional<uint8_t> state)
{
	if (!state)
		return "-";
	// enum ib_port_state, include/rdma/ib_verbs.h
	switch (*state) {
	case 0:
		return "NOP";
	case 1:
		return "DOWN";
	case 2:
		return "INIT";
	case 3:
		return "ARMED";
	case 4:
		return "ACTIVE";
	case 5:
		return "ACTIVE_DEFER";
	default:
		return "STATE_" + std::to_string(*state);
	}
}

std::string device_type_name(const DeviceInfo &dev)
{
	if (dev.protocol == "iw")
		return "iwarp";
	if (!dev.protocol.empty())
		return dev.protocol; // roce, ib, opa, usnic
	if (dev.node_type == NODE_RNIC)
		return "iwarp";
	if (dev.node_type == NODE_USNIC || dev.node_type == NODE_USNIC_UDP)
		return "usnic";
	// A channel adapter may be InfiniBand or RoCE; without the protocol
	// we cannot tell which.
	return "-";
}

std::string counter_mode_name(uint32_t mode)
{
	switch (mode) {
	case RDMA_COUNTER_MODE_NONE:
		return "none";
	case RDMA_COUNTER_MODE_AUTO:
		return "auto";
	case RDMA_COUNTER_MODE_MANUAL:
		return "manual";
	default:
		return "mode " + std::to_string(mode);
	}
}

std::string qp_type_name(uint8_t type)
{
	// enum ib_qp_type, include/rdma/ib_verbs.h (IB_QPT_SMI .. IB_QPT_UD,
	// then the types named in the uapi header)
	switch (type) {
	case 0:
		return "SMI";
	case 1:
		return "GSI";
	case 2:
		return "RC";
	case 3:
		return "UC";
	case 4:
		return "UD";
	case 5:
		return "RAW_IPV6";
	case 6:
		return "RAW_ETHERTYPE";
	case 8:
		return "RAW_PACKET";
	case 9:
		return "XRC_INI";
	case 10:
		return "XRC_TGT";
	default:
		return "type " + std::to_string(type);
	}
}

std::string driver_name(std::optional<uint32_t> driver_id)
{
	if (!driver_id)
		return "-";
	if (*driver_id == SOFTRNIC_DRIVER_ID)
		return "softrnic";
	switch (*driver_id) {
	case RDMA_DRIVER_MLX5:
		return "mlx5";
	case RDMA_DRIVER_MLX4:
		return "mlx4";
	case RDMA_DRIVER_CXGB4:
		return "cxgb4";
	case RDMA_DRIVER_BNXT_RE:
		return "bnxt_re";
	case RDMA_DRIVER_IRDMA:
		return "irdma";
	case RDMA_DRIVER_VMW_PVRDMA:
		return "vmw_pvrdma";
	case RDMA_DRIVER_QEDR:
		return "qedr";
	case RDMA_DRIVER_HNS:
		return "hns";
	case RDMA_DRIVER_RXE:
		return "rxe";
	case RDMA_DRIVER_EFA:
		return "efa";
	case RDMA_DRIVER_SIW:
		return "siw";
	case RDMA_DRIVER_ERDMA:
		return "erdma";
	default:
		return "id " + std::to_string(*driver_id);
	}
}

} // namespace softrnic::tool
