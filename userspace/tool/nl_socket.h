// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// RAII owner of one libmnl netlink socket, plus the request/reply exchange
// on top of it.  The only file of the tool that performs socket I/O.
#ifndef SOFTRNIC_TOOL_NL_SOCKET_H
#define SOFTRNIC_TOOL_NL_SOCKET_H

#include <cstdint>
#include <vector>

#include "tool/nl_message.h"
#include "tool/result.h"

struct mnl_socket;

namespace softrnic::tool
{

class NlSocket
{
public:
	// Opens and binds a socket on `bus` (e.g. NETLINK_RDMA) with extended
	// acks enabled.  A kernel without that netlink family fails here with
	// EPROTONOSUPPORT.
	static Result<NlSocket> open(int bus);

	NlSocket(NlSocket &&other) noexcept;
	NlSocket &operator=(NlSocket &&other) noexcept;
	NlSocket(const NlSocket &) = delete;
	NlSocket &operator=(const NlSocket &) = delete;
	~NlSocket();

	// A fresh sequence number for the next request.
	uint32_t next_seq() { return seq_++; }

	// Sends `req` and gathers its replies until the ack or NLMSG_DONE.
	// Returns the data messages; a kernel error comes back as Error with
	// the errno and any extended-ack text.
	Result<std::vector<Bytes>> transact(const NlRequest &req);

private:
	explicit NlSocket(mnl_socket *sock, uint32_t seq);

	mnl_socket *sock_ = nullptr;
	uint32_t seq_ = 0;
	Bytes buf_;
};

} // namespace softrnic::tool

#endif
