// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The RDMA_NL_NLDEV protocol as the tool uses it: request builders for the
// five commands we send, and parsers turning replies into plain structs.
// Pure functions on byte buffers; no socket is involved.
#ifndef SOFTRNIC_TOOL_RDMA_NLDEV_H
#define SOFTRNIC_TOOL_RDMA_NLDEV_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tool/nl_message.h"
#include "tool/result.h"

namespace softrnic::tool
{

// nlmsg_type of an NLDEV command (requests and replies use the same).
uint16_t nldev_type(unsigned int cmd);

// Reply to RDMA_NLDEV_CMD_GET (one per device in a dump).
struct DeviceInfo {
	uint32_t index = 0;
	std::string name;
	uint32_t port_count = 0;	  // RDMA_NLDEV_ATTR_PORT_INDEX: last port
	std::string protocol;		  // "roce", "iw", "ib", ... may be empty
	std::optional<uint8_t> node_type; // enum rdma_node_type
};

// Reply to RDMA_NLDEV_CMD_PORT_GET.
struct PortInfo {
	uint32_t dev_index = 0;
	uint32_t port = 0;
	std::optional<uint8_t> state; // enum ib_port_state
	std::optional<uint8_t> phys_state;
	std::string netdev; // empty if none (or other netns)
	std::optional<uint32_t> netdev_index;
};

// Reply to RDMA_NLDEV_CMD_GET_CHARDEV for the "uverbs" client.
struct ChardevInfo {
	std::string name;  // e.g. "uverbs0", no directory
	uint64_t devt = 0; // huge_encode_dev() of the inode
	uint64_t abi = 0;
	std::optional<uint32_t> driver_id; // RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID
};

// Reply to RDMA_NLDEV_CMD_STAT_GET for a port without a counter resource:
// the port's hardware counters (rdma_hw_stats), in the kernel's order.
struct PortCounters {
	uint32_t dev_index = 0;
	uint32_t port = 0;
	std::vector<std::pair<std::string, uint64_t>> counters;
};

// One counter group of the QP counter dump (RDMA_NLDEV_CMD_STAT_GET with
// RDMA_NLDEV_ATTR_STAT_RES = QP, as `rdma statistic qp show` asks): the
// QPs bound to it (`rdma statistic qp set ... auto` or `... bind`) and
// what they counted while bound.
struct QpCounter {
	uint32_t port = 0;
	uint32_t id = 0;		// cntn
	std::optional<uint32_t> mode;	// enum rdma_nl_counter_mode
	std::optional<uint8_t> qp_type; // auto mode by QP type: ib_qp_type
	std::vector<uint32_t> qpns;
	std::vector<std::pair<std::string, uint64_t>> counters;
};

// Requests.  Non-dump requests ask for an ack (NLM_F_ACK) so success is
// confirmed; none sets NLM_F_EXCL, which shares its bit with NLM_F_MATCH
// and would turn the request into a dump.
NlRequest build_dev_dump(uint32_t seq);
NlRequest build_port_get(uint32_t seq, uint32_t dev_index, uint32_t port);
NlRequest build_chardev_get(uint32_t seq, uint32_t dev_index, std::string_view type);
NlRequest build_newlink(uint32_t seq, std::string_view name, std::string_view link_type,
			std::string_view netdev);
NlRequest build_dellink(uint32_t seq, uint32_t dev_index);
NlRequest build_stat_get(uint32_t seq, uint32_t dev_index, uint32_t port);
// A dump: one reply message per batch of counter groups.
NlRequest build_qp_counter_dump(uint32_t seq, uint32_t dev_index, uint32_t port);

// Parsers.  Note the kernel answers a PORT_GET request (not dump) with
// type CMD_GET, so parse_port takes both.  A message of another type, an attribute of the wrong
// size or an unterminated string fails with EBADMSG; unknown attributes are skipped so newer
// kernels keep working.
Result<DeviceInfo> parse_device(const NlMessage &msg);
Result<PortInfo> parse_port(const NlMessage &msg);
Result<ChardevInfo> parse_chardev(const NlMessage &msg);
Result<PortCounters> parse_port_counters(const NlMessage &msg);
// The counter groups of one message of the QP counter dump (appended).
Status parse_qp_counters(const NlMessage &msg, std::vector<QpCounter> &out);

// "ACTIVE", "DOWN", ... or "-" if unknown/absent.
std::string port_state_name(std::optional<uint8_t> state);
// "LINK_UP", "DISABLED", ... or "-".
std::string phys_state_name(std::optional<uint8_t> state);
// "roce", "iwarp", "ib", "opa", "usnic", or "-": from the protocol the
// kernel reports for the first port, else from the node type.
std::string device_type_name(const DeviceInfo &dev);
// "auto", "manual", "none" or "mode N".
std::string counter_mode_name(uint32_t mode);
// "RC", "UD", "GSI", ... or "type N".
std::string qp_type_name(uint8_t type);
// "softrnic", "rxe", "siw", ... from a uverbs driver id; "-" if absent.
std::string driver_name(std::optional<uint32_t> driver_id);

} // namespace softrnic::tool

#endif
