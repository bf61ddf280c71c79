// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "tool/nl_socket.h"

#include <cerrno>
#include <ctime>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <utility>

namespace softrnic::tool
{

namespace
{

// The kernel sizes dump messages after our receive buffer, capped at
// 32 KiB, so a buffer this large never sees a truncated datagram.
constexpr size_t kRecvBufSize = 32768;

// A kernel that never answers (it should not happen) must not hang the
// tool forever; link creation may load modules, so be generous.
constexpr time_t kReplyTimeoutSec = 30;

} // namespace

NlSocket::NlSocket(mnl_socket *sock, uint32_t seq) : sock_(sock), seq_(seq), buf_(kRecvBufSize) {}

NlSocket::NlSocket(NlSocket &&other) noexcept
    : sock_(std::exchange(other.sock_, nullptr)), seq_(other.seq_), buf_(std::move(other.buf_))
{
}

NlSocket &NlSocket::operator=(NlSocket &&other) noexcept
{
	if (this != &other) {
		if (sock_)
			mnl_socket_close(sock_);
		sock_ = std::exchange(other.sock_, nullptr);
		seq_ = other.seq_;
		buf_ = std::move(other.buf_);
	}
	return *this;
}

NlSocket::~NlSocket()
{
	if (sock_)
		mnl_socket_close(sock_);
}

Result<NlSocket> NlSocket::open(int bus)
{
	mnl_socket *raw = mnl_socket_open(bus);
	if (!raw)
		return make_error(errno);
	NlSocket sock(raw, static_cast<uint32_t>(time(nullptr)));

	// Best effort: without NETLINK_EXT_ACK (kernels before 4.12) errors
	// simply carry no text.  NETLINK_CAP_ACK keeps our request out of the
	// error reply; we know what we sent.
	int one = 1;
	mnl_socket_setsockopt(raw, NETLINK_EXT_ACK, &one, sizeof(one));
	mnl_socket_setsockopt(raw, NETLINK_CAP_ACK, &one, sizeof(one));

	timeval tv{kReplyTimeoutSec, 0};
	if (setsockopt(mnl_socket_get_fd(raw), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
		return make_error(errno);
	if (mnl_socket_bind(raw, 0, MNL_SOCKET_AUTOPID) < 0)
		return make_error(errno);
	return sock;
}

Result<std::vector<Bytes>> NlSocket::transact(const NlRequest &req)
{
	ByteView out = req.bytes();
	if (mnl_socket_sendto(sock_, out.data(), out.size()) < 0)
		return make_error(errno);

	ReplyCollector replies(req.seq());
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(sock_, buf_.data(), buf_.size());
		if (n < 0) {
			int err = errno;
			if (err == EINTR)
				continue;
			if (err == EAGAIN || err == EWOULDBLOCK)
				return make_error(ETIMEDOUT, "no reply from the kernel");
			return make_error(err);
		}
		if (n == 0)
			return make_error(ECONNRESET, "netlink socket closed by the kernel");
		auto done = replies.feed({buf_.data(), static_cast<size_t>(n)});
		if (!done)
			return done.error();
		if (*done)
			return replies.take_messages();
	}
}

} // namespace softrnic::tool
