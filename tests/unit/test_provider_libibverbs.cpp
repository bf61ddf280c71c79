// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The provider against the real, installed libibverbs.
 *
 * verbs_provider_abi.h declares libibverbs' private records from scratch;
 * static_asserts can only check them against our own numbers.  These tests
 * check them against the library itself:
 *   - verbs_set_ops() is given a table with a distinct value in every slot
 *     and we look where each value lands in the public context, or call the
 *     public verb that dispatches through the slot;
 *   - the device refcount/sysfs/uninit_device handshake is driven through
 *     verbs_uninit_context();
 *   - ibv_read_ibdev_sysfs_file() reads through our verbs_sysfs_dev;
 *   - every verb the provider implements runs end to end against a fake
 *     uverbs "kernel": a socketpair stands in for /dev/infiniband/uverbsN
 *     (write() commands are captured on the peer) and the ioctl() calls
 *     libibverbs makes on it are answered by an interposed ioctl() below, so
 *     we see exactly the driver id, attributes and driver data the kernel
 *     module will see.
 */
#include <catch2/catch.hpp>
#include <cerrno>
#include <csignal>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <string>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

#include "context.h"
#include "cq.h"
#include "device.h"
#include "log.h"
#include "pd.h"
#include "qp.h"
#include "softrnic-abi.h"
#include "uverbs_cmd.h"

/* the exported function, not verbs.h's inline wrapper macro */
#undef ibv_query_port

using namespace softrnic;

/* ------------------------------------------------------------ fake kernel */
namespace fake_kernel
{

struct attr_seen {
	uint16_t id;
	uint16_t len;
	uint64_t data;
};

struct call_seen {
	uint16_t object;
	uint16_t method;
	uint32_t driver_id;
	std::vector<attr_seen> attrs;

	const attr_seen *find(uint16_t id) const
	{
		for (const auto &a : attrs)
			if (a.id == id)
				return &a;
		return nullptr;
	}
};

int armed_fd = -1;
std::vector<call_seen> calls;
softrnic_alloc_ucontext_resp ucontext{};
ib_uverbs_query_port_resp_ex port{};

/* Queue objects: what CQ_CREATE / QP_CREATE answer, and the memory their
 * rings live in (a memfd; mmap() of the armed fd maps it instead). */
int ring_fd = -1;
softrnic_create_cq_resp cq_resp{};
softrnic_create_qp_resp qp_resp{};
ib_uverbs_qp_cap qp_cap{};
uint32_t next_handle = 10;

void arm(int fd)
{
	armed_fd = fd;
	calls.clear();
}

void disarm()
{
	armed_fd = -1;
}

/* What the real ib_uverbs would do for the few methods we exercise;
 * everything else is "method not supported", which makes libibverbs fall
 * back to write() for that verb only. */
int answer(ib_uverbs_ioctl_hdr *hdr)
{
	call_seen c{hdr->object_id, hdr->method_id, hdr->driver_id, {}};
	for (unsigned i = 0; i < hdr->num_attrs; i++)
		c.attrs.push_back({hdr->attrs[i].attr_id, hdr->attrs[i].len, hdr->attrs[i].data});
	calls.push_back(c);

	if (hdr->driver_id != SOFTRNIC_DRIVER_ID)
		return EINVAL; /* what the kernel answers a foreign driver id */

	auto out = [&](ib_uverbs_attr &a, const void *src, size_t len) {
		std::memcpy(reinterpret_cast<void *>(static_cast<uintptr_t>(a.data)), src,
			    std::min<size_t>(len, a.len));
		a.flags |= UVERBS_ATTR_F_VALID_OUTPUT;
	};

	if (hdr->object_id == UVERBS_OBJECT_DEVICE && hdr->method_id == UVERBS_METHOD_GET_CONTEXT) {
		for (unsigned i = 0; i < hdr->num_attrs; i++) {
			ib_uverbs_attr &a = hdr->attrs[i];
			const uint32_t vectors = 2;
			const uint64_t core_support = 0;
			if (a.attr_id == UVERBS_ATTR_GET_CONTEXT_NUM_COMP_VECTORS)
				out(a, &vectors, sizeof(vectors));
			else if (a.attr_id == UVERBS_ATTR_GET_CONTEXT_CORE_SUPPORT)
				out(a, &core_support, sizeof(core_support));
			else if (a.attr_id == UVERBS_ATTR_UHW_OUT)
				out(a, &ucontext, sizeof(ucontext));
		}
		return 0;
	}
	if (hdr->object_id == UVERBS_OBJECT_DEVICE && hdr->method_id == UVERBS_METHOD_QUERY_PORT) {
		for (unsigned i = 0; i < hdr->num_attrs; i++)
			if (hdr->attrs[i].attr_id == UVERBS_ATTR_QUERY_PORT_RESP)
				out(hdr->attrs[i], &port, sizeof(port));
		return 0;
	}
	if (hdr->object_id == UVERBS_OBJECT_PD && hdr->method_id == UVERBS_METHOD_PD_DESTROY)
		return 0;

	const bool cq_create =
	    hdr->object_id == UVERBS_OBJECT_CQ && hdr->method_id == UVERBS_METHOD_CQ_CREATE;
	const bool qp_create =
	    hdr->object_id == UVERBS_OBJECT_QP && hdr->method_id == UVERBS_METHOD_QP_CREATE;
	if ((cq_create || qp_create) && ring_fd >= 0) {
		for (unsigned i = 0; i < hdr->num_attrs; i++) {
			ib_uverbs_attr &a = hdr->attrs[i];
			static_assert(int{UVERBS_ATTR_CREATE_CQ_HANDLE} ==
				      int{UVERBS_ATTR_CREATE_QP_HANDLE});
			if (a.attr_id == UVERBS_ATTR_CREATE_CQ_HANDLE) /* the new idr handle */
				a.data = next_handle++;
			else if (cq_create && a.attr_id == UVERBS_ATTR_CREATE_CQ_RESP_CQE)
				out(a, &cq_resp.cq.num_slots, sizeof(uint32_t));
			else if (qp_create && a.attr_id == UVERBS_ATTR_CREATE_QP_RESP_CAP)
				out(a, &qp_cap, sizeof(qp_cap));
			else if (qp_create && a.attr_id == UVERBS_ATTR_CREATE_QP_RESP_QP_NUM)
				out(a, &qp_resp.qpn, sizeof(uint32_t));
			else if (a.attr_id == UVERBS_ATTR_UHW_OUT && cq_create)
				out(a, &cq_resp, sizeof(cq_resp));
			else if (a.attr_id == UVERBS_ATTR_UHW_OUT)
				out(a, &qp_resp, sizeof(qp_resp));
		}
		return 0;
	}
	if ((hdr->object_id == UVERBS_OBJECT_CQ && hdr->method_id == UVERBS_METHOD_CQ_DESTROY) ||
	    (hdr->object_id == UVERBS_OBJECT_QP && hdr->method_id == UVERBS_METHOD_QP_DESTROY)) {
		/* no events reported: both responses are only counters */
		static_assert(int{UVERBS_ATTR_DESTROY_CQ_RESP} == int{UVERBS_ATTR_DESTROY_QP_RESP});
		static_assert(sizeof(ib_uverbs_destroy_cq_resp) >=
			      sizeof(ib_uverbs_destroy_qp_resp));
		for (unsigned i = 0; i < hdr->num_attrs; i++)
			if (hdr->attrs[i].attr_id == UVERBS_ATTR_DESTROY_CQ_RESP) {
				const ib_uverbs_destroy_cq_resp zero{};
				out(hdr->attrs[i], &zero, sizeof(zero));
			}
		return 0;
	}
	return EPROTONOSUPPORT;
}

} // namespace fake_kernel

/*
 * Interposes libc's ioctl() for this test binary: libibverbs' calls on the
 * armed fd go to the fake kernel, everything else straight to the kernel.
 */
extern "C" int ioctl(int fd, unsigned long request, ...) noexcept
{
	va_list ap;
	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (fd >= 0 && fd == fake_kernel::armed_fd && request == RDMA_VERBS_IOCTL) {
		const int err = fake_kernel::answer(static_cast<ib_uverbs_ioctl_hdr *>(arg));
		if (err) {
			errno = err;
			return -1;
		}
		return 0;
	}
	return static_cast<int>(syscall(SYS_ioctl, fd, request, arg));
}

/*
 * Interposes mmap() for this test binary: the provider's ring mappings of
 * the armed "uverbs fd" (a socket, which cannot be mapped) map the fake
 * kernel's memfd at the same offset instead.
 */
extern "C" void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) noexcept
{
	if (fd >= 0 && fd == fake_kernel::armed_fd && fake_kernel::ring_fd >= 0)
		fd = fake_kernel::ring_fd;
	return reinterpret_cast<void *>(syscall(SYS_mmap, addr, len, prot, flags, fd, off));
}

/* ---------------------------------------------------------------- helpers */
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

/* Our device, set up the way libibverbs' try_driver() finishes it. */
struct fake_device {
	verbs_device *vdev = nullptr;

	explicit fake_device(const verbs_device_ops *ops = &device_ops)
	{
		verbs_sysfs_dev d{};
		std::strcpy(d.ibdev_name, "softrnic0");
		d.driver_id = SOFTRNIC_DRIVER_ID;
		d.match = &match_table[0];
		d.abi_ver = SOFTRNIC_UVERBS_ABI_VERSION;
		vdev = alloc_device(&d);
		REQUIRE(vdev != nullptr);
		vdev->ops = ops;
		vdev->refcount = 1; /* the device list's reference */
		vdev->sysfs =
		    static_cast<verbs_sysfs_dev *>(std::calloc(1, sizeof(verbs_sysfs_dev)));
		std::strcpy(vdev->device.name, "softrnic0");
	}
	~fake_device()
	{
		if (vdev) { /* what the library does on the last put */
			std::free(vdev->sysfs);
			uninit_device(vdev);
		}
	}
	int refs() const { return vdev->refcount.load(); }
	ibv_device *ibv() { return &vdev->device; }
};

/* A connected pair: [0] plays /dev/infiniband/uverbs0, [1] reads what was
 * written to it.  SEQPACKET keeps one write() = one command. */
struct fake_cdev {
	int fd[2] = {-1, -1};
	fake_cdev() { REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fd) == 0); }
	~fake_cdev()
	{
		for (int f : fd)
			if (f >= 0 && fcntl(f, F_GETFD) != -1)
				close(f);
	}
	/* ownership of fd[0] passes to libibverbs */
	int give() { return fd[0]; }
	bool given_fd_closed() const { return fcntl(fd[0], F_GETFD) == -1 && errno == EBADF; }

	std::vector<uint8_t> next_write()
	{
		std::vector<uint8_t> buf(4096);
		const ssize_t n = recv(fd[1], buf.data(), buf.size(), MSG_DONTWAIT);
		REQUIRE(n >= static_cast<ssize_t>(sizeof(ib_uverbs_cmd_hdr)));
		buf.resize(static_cast<size_t>(n));
		return buf;
	}
	bool nothing_written()
	{
		uint8_t b;
		return recv(fd[1], &b, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN;
	}
};

ib_uverbs_cmd_hdr header_of(const std::vector<uint8_t> &w)
{
	ib_uverbs_cmd_hdr h;
	std::memcpy(&h, w.data(), sizeof(h));
	return h;
}

/* An open context of ours on a fake device, built through alloc_context
 * with the fake kernel answering GET_CONTEXT. */
struct open_context {
	fake_device dev;
	fake_cdev cdev;
	verbs_context *vctx = nullptr;

	explicit open_context(softrnic_alloc_ucontext_resp uc)
	{
		fake_kernel::ucontext = uc;
		fake_kernel::arm(cdev.fd[0]);
		vctx = dev.vdev->ops->alloc_context(dev.ibv(), cdev.give(), nullptr);
	}
	~open_context()
	{
		if (vctx)
			ibv_close_device(&vctx->context);
		fake_kernel::disarm();
	}
	ibv_context *ctx() { return &vctx->context; }
};

softrnic_alloc_ucontext_resp good_ucontext(uint32_t link = SOFTRNIC_LINK_ROCE)
{
	softrnic_alloc_ucontext_resp r{};
	r.abi_version = SOFTRNIC_UVERBS_ABI_VERSION;
	r.link_type = link;
	r.page_size = 4096;
	return r;
}

} // namespace

/* ------------------------------------------------------- layout vs library */

namespace
{

constexpr size_t n_slots = sizeof(verbs_context_ops) / sizeof(void *);

void *slot_value(size_t index)
{
	return reinterpret_cast<void *>(uintptr_t{0x7e5700000000} + index * 0x10);
}

#define SLOT_OF(name) slot_value(offsetof(verbs_context_ops, name) / sizeof(void *))

std::string dispatched;

void rec_free_context(ibv_context *ctx)
{
	dispatched = "free_context";
	auto *v = reinterpret_cast<verbs_context *>(reinterpret_cast<char *>(ctx) -
						    offsetof(verbs_context, context));
	verbs_uninit_context(v);
	std::free(v);
}
int rec_query_port(ibv_context *, uint8_t port, ibv_port_attr *)
{
	dispatched = "query_port:" + std::to_string(port);
	return 0;
}
ibv_pd *rec_import_pd(ibv_context *, uint32_t h)
{
	dispatched = "import_pd:" + std::to_string(h);
	return nullptr;
}
ibv_mr *rec_import_mr(ibv_pd *, uint32_t h)
{
	dispatched = "import_mr:" + std::to_string(h);
	return nullptr;
}
ibv_dm *rec_import_dm(ibv_context *, uint32_t h)
{
	dispatched = "import_dm:" + std::to_string(h);
	return nullptr;
}
void rec_unimport_pd(ibv_pd *)
{
	dispatched = "unimport_pd";
}
void rec_unimport_mr(ibv_mr *)
{
	dispatched = "unimport_mr";
}
void rec_unimport_dm(ibv_dm *)
{
	dispatched = "unimport_dm";
}
int rec_query_ece(ibv_qp *, ibv_ece *)
{
	dispatched = "query_ece";
	return 0;
}
int rec_set_ece(ibv_qp *, ibv_ece *)
{
	dispatched = "set_ece";
	return 0;
}
int rec_query_qp_data_in_order(ibv_qp *, ibv_wr_opcode, uint32_t flags)
{
	dispatched = "query_qp_data_in_order:" + std::to_string(flags);
	return 0;
}
ibv_mr *rec_reg_dmabuf_mr(ibv_pd *, uint64_t, size_t, uint64_t, int fd, int)
{
	dispatched = "reg_dmabuf_mr:" + std::to_string(fd);
	return nullptr;
}

} // namespace

TEST_CASE("provider ABI: verbs_context_ops slot order matches libibverbs", "[provider][abi]")
{
	REQUIRE(n_slots == 76);
	fake_device dev;
	fake_cdev cdev;
	auto *vctx = static_cast<verbs_context *>(_verbs_init_and_alloc_context(
	    dev.ibv(), cdev.give(), sizeof(verbs_context), nullptr, SOFTRNIC_DRIVER_ID));
	REQUIRE(vctx != nullptr);
	CHECK(dev.refs() == 2); /* the context holds the device */

	void *values[n_slots];
	for (size_t i = 0; i < n_slots; i++)
		values[i] = slot_value(i);
	verbs_context_ops ops;
	static_assert(sizeof(values) == sizeof(ops));
	std::memcpy(&ops, values, sizeof(ops));
	/* slots only reachable by calling through them get real functions */
	ops.free_context = rec_free_context;
	ops.query_port = rec_query_port;
	ops.import_pd = rec_import_pd;
	ops.import_mr = rec_import_mr;
	ops.import_dm = rec_import_dm;
	ops.unimport_pd = rec_unimport_pd;
	ops.unimport_mr = rec_unimport_mr;
	ops.unimport_dm = rec_unimport_dm;
	ops.query_ece = rec_query_ece;
	ops.set_ece = rec_set_ece;
	ops.query_qp_data_in_order = rec_query_qp_data_in_order;
	ops.reg_dmabuf_mr = rec_reg_dmabuf_mr;
	verbs_set_ops(vctx, &ops);

	const ibv_context_ops &c = vctx->context.ops;
	auto v = [](auto fn) { return reinterpret_cast<void *>(fn); };

	/* slots libibverbs mirrors into the public verbs_context */
	CHECK(v(vctx->advise_mr) == SLOT_OF(advise_mr));
	CHECK(v(vctx->alloc_dm) == SLOT_OF(alloc_dm));
	CHECK(v(vctx->alloc_null_mr) == SLOT_OF(alloc_null_mr));
	CHECK(v(vctx->alloc_parent_domain) == SLOT_OF(alloc_parent_domain));
	CHECK(v(vctx->alloc_td) == SLOT_OF(alloc_td));
	CHECK(v(vctx->attach_counters_point_flow) == SLOT_OF(attach_counters_point_flow));
	CHECK(v(vctx->close_xrcd) == SLOT_OF(close_xrcd));
	CHECK(v(vctx->create_counters) == SLOT_OF(create_counters));
	CHECK(v(vctx->ibv_create_flow) == SLOT_OF(create_flow));
	CHECK(v(vctx->create_flow_action_esp) == SLOT_OF(create_flow_action_esp));
	CHECK(v(vctx->create_qp_ex) == SLOT_OF(create_qp_ex));
	CHECK(v(vctx->create_rwq_ind_table) == SLOT_OF(create_rwq_ind_table));
	CHECK(v(vctx->create_srq_ex) == SLOT_OF(create_srq_ex));
	CHECK(v(vctx->create_wq) == SLOT_OF(create_wq));
	CHECK(v(vctx->dealloc_td) == SLOT_OF(dealloc_td));
	CHECK(v(vctx->destroy_counters) == SLOT_OF(destroy_counters));
	CHECK(v(vctx->ibv_destroy_flow) == SLOT_OF(destroy_flow));
	CHECK(v(vctx->destroy_flow_action) == SLOT_OF(destroy_flow_action));
	CHECK(v(vctx->destroy_rwq_ind_table) == SLOT_OF(destroy_rwq_ind_table));
	CHECK(v(vctx->destroy_wq) == SLOT_OF(destroy_wq));
	CHECK(v(vctx->free_dm) == SLOT_OF(free_dm));
	CHECK(v(vctx->get_srq_num) == SLOT_OF(get_srq_num));
	CHECK(v(vctx->modify_cq) == SLOT_OF(modify_cq));
	CHECK(v(vctx->modify_flow_action_esp) == SLOT_OF(modify_flow_action_esp));
	CHECK(v(vctx->modify_qp_rate_limit) == SLOT_OF(modify_qp_rate_limit));
	CHECK(v(vctx->modify_wq) == SLOT_OF(modify_wq));
	CHECK(v(vctx->open_qp) == SLOT_OF(open_qp));
	CHECK(v(vctx->open_xrcd) == SLOT_OF(open_xrcd));
	CHECK(v(vctx->post_srq_ops) == SLOT_OF(post_srq_ops));
	CHECK(v(vctx->query_device_ex) == SLOT_OF(query_device_ex));
	CHECK(v(vctx->query_rt_values) == SLOT_OF(query_rt_values));
	CHECK(v(vctx->read_counters) == SLOT_OF(read_counters));
	CHECK(v(vctx->reg_dm_mr) == SLOT_OF(reg_dm_mr));

	/* ... into the public ibv_context_ops */
	CHECK(v(c.alloc_mw) == SLOT_OF(alloc_mw));
	CHECK(v(c.bind_mw) == SLOT_OF(bind_mw));
	CHECK(v(c.dealloc_mw) == SLOT_OF(dealloc_mw));
	CHECK(v(c.poll_cq) == SLOT_OF(poll_cq));
	CHECK(v(c.post_recv) == SLOT_OF(post_recv));
	CHECK(v(c.post_send) == SLOT_OF(post_send));
	CHECK(v(c.post_srq_recv) == SLOT_OF(post_srq_recv));
	CHECK(v(c.req_notify_cq) == SLOT_OF(req_notify_cq));

	/* ... and into its _compat_ shadow copies */
	CHECK(v(c._compat_alloc_pd) == SLOT_OF(alloc_pd));
	CHECK(v(c._compat_async_event) == SLOT_OF(async_event));
	CHECK(v(c._compat_attach_mcast) == SLOT_OF(attach_mcast));
	CHECK(v(c._compat_cq_event) == SLOT_OF(cq_event));
	CHECK(v(c._compat_create_ah) == SLOT_OF(create_ah));
	CHECK(v(c._compat_create_cq) == SLOT_OF(create_cq));
	CHECK(v(c._compat_create_qp) == SLOT_OF(create_qp));
	CHECK(v(c._compat_create_srq) == SLOT_OF(create_srq));
	CHECK(v(c._compat_dealloc_pd) == SLOT_OF(dealloc_pd));
	CHECK(v(c._compat_dereg_mr) == SLOT_OF(dereg_mr));
	CHECK(v(c._compat_destroy_ah) == SLOT_OF(destroy_ah));
	CHECK(v(c._compat_destroy_cq) == SLOT_OF(destroy_cq));
	CHECK(v(c._compat_destroy_qp) == SLOT_OF(destroy_qp));
	CHECK(v(c._compat_destroy_srq) == SLOT_OF(destroy_srq));
	CHECK(v(c._compat_detach_mcast) == SLOT_OF(detach_mcast));
	CHECK(v(c._compat_modify_qp) == SLOT_OF(modify_qp));
	CHECK(v(c._compat_modify_srq) == SLOT_OF(modify_srq));
	CHECK(v(c._compat_query_qp) == SLOT_OF(query_qp));
	CHECK(v(c._compat_query_srq) == SLOT_OF(query_srq));
	CHECK(v(c._compat_reg_mr) == SLOT_OF(reg_mr));
	CHECK(v(c._compat_rereg_mr) == SLOT_OF(rereg_mr));
	CHECK(v(c._compat_resize_cq) == SLOT_OF(resize_cq));
	/* create_cq_ex (between create_cq and create_flow) is not mirrored
	 * anywhere; its neighbours pin it. */

	/* slots only the library's private copy holds: call through them */
	ibv_context *ctx = &vctx->context;
	ibv_pd pd{};
	pd.context = ctx;
	ibv_mr mr{};
	mr.context = ctx;
	ibv_dm dm{};
	dm.context = ctx;
	ibv_qp qp{};
	qp.context = ctx;
	ibv_ece ece{};
	ece.vendor_id = 1;
	alignas(8) unsigned char port_attr[sizeof(ibv_port_attr)] = {};

	CHECK(ibv_query_port(ctx, 3, reinterpret_cast<_compat_ibv_port_attr *>(port_attr)) == 0);
	CHECK(dispatched == "query_port:3");
	CHECK(ibv_import_pd(ctx, 11) == nullptr);
	CHECK(dispatched == "import_pd:11");
	CHECK(ibv_import_mr(&pd, 12) == nullptr);
	CHECK(dispatched == "import_mr:12");
	CHECK(ibv_import_dm(ctx, 13) == nullptr);
	CHECK(dispatched == "import_dm:13");
	ibv_unimport_pd(&pd);
	CHECK(dispatched == "unimport_pd");
	ibv_unimport_mr(&mr);
	CHECK(dispatched == "unimport_mr");
	ibv_unimport_dm(&dm);
	CHECK(dispatched == "unimport_dm");
	CHECK(ibv_query_ece(&qp, &ece) == 0);
	CHECK(dispatched == "query_ece");
	CHECK(ibv_set_ece(&qp, &ece) == 0);
	CHECK(dispatched == "set_ece");
	CHECK(ibv_query_qp_data_in_order(&qp, IBV_WR_SEND, 5) == 0);
	CHECK(dispatched == "query_qp_data_in_order:5");
	CHECK(ibv_reg_dmabuf_mr(&pd, 0, 4096, 0, 42, 0) == nullptr);
	CHECK(dispatched == "reg_dmabuf_mr:42");

	ibv_close_device(ctx);
	CHECK(dispatched == "free_context");
	CHECK(cdev.given_fd_closed());
	CHECK(dev.refs() == 1);
}

TEST_CASE("provider ABI: the library releases our device through our records", "[provider][abi]")
{
	static int uninit_calls;
	static verbs_device *uninit_arg;
	uninit_calls = 0;
	verbs_device_ops ops = device_ops;
	ops.uninit_device = [](verbs_device *vdev) {
		uninit_calls++;
		uninit_arg = vdev;
		uninit_device(vdev);
	};

	auto *dev = new fake_device(&ops);
	verbs_device *vdev = dev->vdev;
	fake_cdev cdev;
	auto *vctx = static_cast<verbs_context *>(_verbs_init_and_alloc_context(
	    dev->ibv(), cdev.give(), sizeof(verbs_context), nullptr, SOFTRNIC_DRIVER_ID));
	REQUIRE(vctx != nullptr);
	CHECK(vctx->context.device == dev->ibv());
	CHECK(vctx->context.cmd_fd == cdev.fd[0]);
	CHECK(dev->refs() == 2);

	/* the device list lets go first (ibv_free_device_list) ... */
	dev->vdev = nullptr;
	delete dev;
	vdev->refcount = 1;
	/* ... then the context: the last put frees ->sysfs and calls
	 * ->ops->uninit_device, all found through our verbs_device layout */
	verbs_uninit_context(vctx);
	std::free(vctx);
	CHECK(uninit_calls == 1);
	CHECK(uninit_arg == vdev);
	CHECK(cdev.given_fd_closed());
}

TEST_CASE("provider ABI: libibverbs reads sysfs through our verbs_sysfs_dev", "[provider][abi]")
{
	namespace fs = std::filesystem;
	const fs::path dir =
	    fs::temp_directory_path() / ("softrnic-sysfs-" + std::to_string(getpid()));
	fs::create_directories(dir / "ports" / "1");
	std::ofstream(dir / "ports" / "1" / "state") << "4: ACTIVE\n";

	verbs_sysfs_dev d{};
	std::strcpy(d.ibdev_path, dir.c_str());
	char buf[64] = {};
	const int n = ibv_read_ibdev_sysfs_file(buf, sizeof(buf), &d, "ports/%d/state", 1);
	fs::remove_all(dir);
	CHECK(n == 9);
	CHECK(std::string(buf) == "4: ACTIVE");
}

/* ------------------------------------------------------- verbs end to end */

TEST_CASE("provider: alloc_context over the ioctl path", "[provider][context]")
{
	open_context oc(good_ucontext(SOFTRNIC_LINK_IWARP));
	REQUIRE(oc.vctx != nullptr);
	CHECK(oc.dev.refs() == 2);

	/* every ioctl carried our driver id (or the kernel answers EINVAL) */
	REQUIRE_FALSE(fake_kernel::calls.empty());
	for (const auto &c : fake_kernel::calls)
		CHECK(c.driver_id == SOFTRNIC_DRIVER_ID);

	const fake_kernel::call_seen *gc = nullptr;
	for (const auto &c : fake_kernel::calls)
		if (c.object == UVERBS_OBJECT_DEVICE && c.method == UVERBS_METHOD_GET_CONTEXT)
			gc = &c;
	REQUIRE(gc != nullptr);
	/* no driver request; driver response exactly our struct */
	CHECK(gc->find(UVERBS_ATTR_UHW_IN) == nullptr);
	const auto *uhw_out = gc->find(UVERBS_ATTR_UHW_OUT);
	REQUIRE(uhw_out != nullptr);
	CHECK(uhw_out->len == sizeof(softrnic_alloc_ucontext_resp));

	context *c = context::from_ibv(oc.ctx());
	REQUIRE(c != nullptr);
	CHECK(c->ibv() == oc.ctx());
	CHECK(c->vctx() == oc.vctx);
	CHECK(c->link() == link_type::iwarp);
	CHECK(c->page_size() == 4096);
	CHECK(oc.ctx()->num_comp_vectors == 2);
	CHECK(oc.ctx()->device == oc.dev.ibv());
	CHECK(oc.cdev.nothing_written());

	/* our verbs are installed, the ones we lack are not */
	CHECK(reinterpret_cast<void *>(oc.vctx->query_device_ex) ==
	      reinterpret_cast<void *>(query_device_ex));
	CHECK(reinterpret_cast<void *>(oc.ctx()->ops._compat_alloc_pd) ==
	      reinterpret_cast<void *>(alloc_pd));
	CHECK(reinterpret_cast<void *>(oc.ctx()->ops.poll_cq) == reinterpret_cast<void *>(poll_cq));
	/* verbs we do not implement fail cleanly through libibverbs' stubs */
	ibv_td_init_attr td_attr{};
	errno = 0;
	CHECK(ibv_alloc_td(oc.ctx(), &td_attr) == nullptr);
	CHECK(errno == EOPNOTSUPP);
}

TEST_CASE("provider: a context from another ABI version is refused cleanly", "[provider][context]")
{
	capture_complaints cap;
	auto uc = good_ucontext();
	uc.abi_version = SOFTRNIC_UVERBS_ABI_VERSION + 1;
	errno = 0;
	open_context oc(uc);
	CHECK(oc.vctx == nullptr);
	CHECK(errno == EPROTO);
	CHECK(oc.cdev.given_fd_closed()); /* the kernel context goes with the fd */
	CHECK(oc.dev.refs() == 1);
	CHECK(complaints.find("refusing context") != std::string::npos);
	CHECK(complaints.find("another softrnic ABI version") != std::string::npos);
}

TEST_CASE("provider: alloc_context over the write() path", "[provider][context]")
{
	/* No ioctl answers: libibverbs falls back to write(), the kernel is a
	 * socket that fills nothing in, so the provider must refuse the empty
	 * driver response, and must not close fd 0 on the way out. */
	capture_complaints cap;
	fake_device dev;
	fake_cdev cdev;
	const int fd0_flags = fcntl(0, F_GETFD);
	errno = 0;
	verbs_context *v = alloc_context(dev.ibv(), cdev.give(), nullptr);
	CHECK(v == nullptr);
	CHECK(errno == EPROTO);
	CHECK(fcntl(0, F_GETFD) == fd0_flags);
	CHECK(cdev.given_fd_closed());
	CHECK(dev.refs() == 1);
	CHECK(complaints.find("no softrnic context data") != std::string::npos);

	/* what the module would have received */
	const auto w = cdev.next_write();
	const auto h = header_of(w);
	CHECK(h.command == IB_USER_VERBS_CMD_GET_CONTEXT);
	CHECK(h.in_words * 4u == sizeof(struct ibv_get_context));
	CHECK(h.out_words * 4u == sizeof(cmd::get_context_resp));
	CHECK(w.size() == sizeof(struct ibv_get_context));
}

TEST_CASE("provider: PD allocation and release", "[provider][pd]")
{
	open_context oc(good_ucontext());
	REQUIRE(oc.vctx != nullptr);

	ibv_pd *ibpd = ibv_alloc_pd(oc.ctx());
	REQUIRE(ibpd != nullptr);
	CHECK(ibpd->context == oc.ctx());
	pd *p = pd::from_ibv(ibpd);
	CHECK(p->ibv() == ibpd);
	CHECK(p->pdn() == 0); /* the socket "kernel" wrote no response */

	const auto w = oc.cdev.next_write();
	const auto h = header_of(w);
	CHECK(h.command == IB_USER_VERBS_CMD_ALLOC_PD);
	CHECK(h.in_words * 4u == sizeof(struct ibv_alloc_pd));
	/* 4 bytes core response + softrnic_alloc_pd_resp */
	CHECK(h.out_words * 4u == sizeof(ib_uverbs_alloc_pd_resp) + sizeof(softrnic_alloc_pd_resp));

	fake_kernel::calls.clear();
	ibpd->handle = 77;
	CHECK(ibv_dealloc_pd(ibpd) == 0);
	REQUIRE(fake_kernel::calls.size() == 1);
	const auto &c = fake_kernel::calls[0];
	CHECK(c.object == UVERBS_OBJECT_PD);
	CHECK(c.method == UVERBS_METHOD_PD_DESTROY);
	CHECK(c.driver_id == SOFTRNIC_DRIVER_ID);
	REQUIRE(c.find(UVERBS_ATTR_DESTROY_PD_HANDLE) != nullptr);
	CHECK(c.find(UVERBS_ATTR_DESTROY_PD_HANDLE)->data == 77);
}

TEST_CASE("provider: PD allocation failure reports errno", "[provider][pd]")
{
	open_context oc(good_ucontext());
	REQUIRE(oc.vctx != nullptr);
	/* a "kernel" that has gone away: write() fails with EPIPE */
	auto old = std::signal(SIGPIPE, SIG_IGN);
	close(oc.cdev.fd[1]);
	oc.cdev.fd[1] = -1;
	errno = 0;
	CHECK(ibv_alloc_pd(oc.ctx()) == nullptr);
	CHECK(errno == EPIPE);
	std::signal(SIGPIPE, old);
}

TEST_CASE("provider: query_port", "[provider][context]")
{
	open_context oc(good_ucontext());
	REQUIRE(oc.vctx != nullptr);
	fake_kernel::port = {};
	fake_kernel::port.legacy_resp.state = IBV_PORT_ACTIVE;
	fake_kernel::port.legacy_resp.active_mtu = IBV_MTU_1024;
	fake_kernel::port.legacy_resp.max_mtu = IBV_MTU_4096;
	fake_kernel::port.legacy_resp.gid_tbl_len = 16;
	fake_kernel::port.legacy_resp.link_layer = IBV_LINK_LAYER_ETHERNET;

	fake_kernel::calls.clear();
	ibv_port_attr attr{};
	CHECK(softrnic::query_port(oc.ctx(), 1, &attr) == 0);
	CHECK(attr.state == IBV_PORT_ACTIVE);
	CHECK(attr.active_mtu == IBV_MTU_1024);
	CHECK(attr.max_mtu == IBV_MTU_4096);
	CHECK(attr.gid_tbl_len == 16);
	CHECK(attr.link_layer == IBV_LINK_LAYER_ETHERNET);
	REQUIRE(fake_kernel::calls.size() == 1);
	const auto *pn = fake_kernel::calls[0].find(UVERBS_ATTR_QUERY_PORT_PORT_NUM);
	REQUIRE(pn != nullptr);
	CHECK(pn->data == 1);

	/* and through the public verb */
	attr = {};
	CHECK(ibv_query_port(oc.ctx(), 1, reinterpret_cast<_compat_ibv_port_attr *>(&attr)) == 0);
	CHECK(attr.state == IBV_PORT_ACTIVE);
}

TEST_CASE("provider: query_device_ex renders fw_ver", "[provider][context]")
{
	open_context oc(good_ucontext());
	REQUIRE(oc.vctx != nullptr);

	/* extended query: written as EX_QUERY_DEVICE; the socket answers
	 * nothing, so every counter is 0 */
	ibv_device_attr_ex ax;
	std::memset(&ax, 0xa5, sizeof(ax));
	CHECK(ibv_query_device_ex(oc.ctx(), nullptr, &ax) == 0);
	CHECK(std::string(ax.orig_attr.fw_ver) == "0.0.0");
	CHECK(ax.orig_attr.max_qp == 0);
	auto h = header_of(oc.cdev.next_write());
	CHECK(h.command == (IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_QUERY_DEVICE));

	/* legacy query: only sizeof(ibv_device_attr) may be written */
	struct {
		ibv_device_attr attr;
		unsigned char guard[64];
	} legacy;
	std::memset(&legacy, 0x5a, sizeof(legacy));
	CHECK(ibv_query_device(oc.ctx(), &legacy.attr) == 0);
	CHECK(std::string(legacy.attr.fw_ver) == "0.0.0");
	for (unsigned char b : legacy.guard)
		CHECK(b == 0x5a);
	h = header_of(oc.cdev.next_write());
	CHECK(h.command == IB_USER_VERBS_CMD_QUERY_DEVICE);

	/* input we do not understand is refused, not ignored */
	ibv_query_device_ex_input in{};
	in.comp_mask = 1;
	CHECK(softrnic::query_device_ex(oc.ctx(), &in, &ax, sizeof(ax)) == EINVAL);
	CHECK(oc.cdev.nothing_written());
}

/* A memfd holding the fake kernel's rings, and its view of them. */
struct fake_rings {
	static constexpr size_t bytes = 4 * 4096;
	int fd = -1;
	unsigned char *mem = nullptr;

	fake_rings()
	{
		fd = memfd_create("softrnic-fake-rings", MFD_CLOEXEC);
		REQUIRE(fd >= 0);
		REQUIRE(ftruncate(fd, bytes) == 0);
		mem = static_cast<unsigned char *>(
		    ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
		REQUIRE(mem != MAP_FAILED);
		fake_kernel::ring_fd = fd;
	}
	~fake_rings()
	{
		fake_kernel::ring_fd = -1;
		munmap(mem, bytes);
		close(fd);
	}
	softrnic_ring_ctrl *ctrl(uint64_t offset)
	{
		return reinterpret_cast<softrnic_ring_ctrl *>(mem + offset);
	}
	template <typename T> T *slot(uint64_t offset, uint32_t index, uint32_t slot_size)
	{
		return reinterpret_cast<T *>(mem + offset + SOFTRNIC_RING_CTRL_SIZE +
					     size_t{index} * slot_size);
	}
};

softrnic_ring_info ring_at(uint64_t offset, uint32_t num_slots, uint32_t slot_size)
{
	softrnic_ring_info r{};
	r.mmap_offset = offset;
	r.mmap_size = 4096;
	r.num_slots = num_slots;
	r.slot_size = slot_size;
	return r;
}

bool mapped(const void *p)
{
	unsigned char vec;
	return mincore(const_cast<void *>(p), 1, &vec) == 0;
}

TEST_CASE("provider: CQ and QP end to end over the ioctl path", "[provider][cq][qp]")
{
	open_context oc(good_ucontext());
	REQUIRE(oc.vctx != nullptr);
	fake_rings rings;
	fake_kernel::cq_resp = {ring_at(0, 16, 64), 5, 0};
	fake_kernel::qp_resp = {ring_at(4096, 8, 128), ring_at(8192, 8, 64), 0x123, 64};
	fake_kernel::qp_cap = {8, 8, 4, 3, 64};

	/* CQ: the driver response the kernel fills is ours, exactly */
	fake_kernel::calls.clear();
	ibv_cq *cq = ibv_create_cq(oc.ctx(), 10, nullptr, nullptr, 0);
	REQUIRE(cq != nullptr);
	CHECK(cq->cqe == 16);
	CHECK(cq->context == oc.ctx());
	REQUIRE(fake_kernel::calls.size() == 1);
	const auto &cc = fake_kernel::calls[0];
	CHECK(cc.object == UVERBS_OBJECT_CQ);
	CHECK(cc.method == UVERBS_METHOD_CQ_CREATE);
	REQUIRE(cc.find(UVERBS_ATTR_UHW_OUT) != nullptr);
	CHECK(cc.find(UVERBS_ATTR_UHW_OUT)->len == sizeof(softrnic_create_cq_resp));
	CHECK(cc.find(UVERBS_ATTR_UHW_IN) == nullptr);
	CHECK(cc.find(UVERBS_ATTR_CREATE_CQ_CQE)->data == 10);

	/* a CQE "the kernel" produced comes out of ibv_poll_cq */
	auto *cqe = rings.slot<softrnic_cqe>(0, 0, 64);
	cqe->wr_id = 0xfeed;
	cqe->opcode = SOFTRNIC_WC_RECV;
	cqe->byte_len = 33;
	rings.ctrl(0)->prod = 1;
	ibv_wc wc{};
	CHECK(ibv_poll_cq(cq, 1, &wc) == 1);
	CHECK(wc.wr_id == 0xfeed);
	CHECK(wc.opcode == IBV_WC_RECV);
	CHECK(wc.byte_len == 33);
	CHECK(rings.ctrl(0)->cons == 1);
	CHECK(ibv_req_notify_cq(cq, 1) == 0);
	CHECK(rings.ctrl(0)->uflags == SOFTRNIC_CQ_ARM_SOLICITED);

	/* QP */
	ibv_pd *pd = ibv_alloc_pd(oc.ctx());
	REQUIRE(pd != nullptr);
	(void)oc.cdev.next_write(); /* ALLOC_PD went through write() */
	fake_kernel::calls.clear();
	ibv_qp_init_attr qa{};
	qa.send_cq = qa.recv_cq = cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap = {5, 5, 2, 2, 16};
	ibv_qp *qp = ibv_create_qp(pd, &qa);
	REQUIRE(qp != nullptr);
	CHECK(qp->qp_num == 0x123);
	CHECK(qp->state == IBV_QPS_RESET);
	/* the caps the kernel reported, what the rings hold */
	CHECK(qa.cap.max_send_wr == 8);
	CHECK(qa.cap.max_send_sge == 4);
	CHECK(qa.cap.max_recv_sge == 3);
	CHECK(qa.cap.max_inline_data == 64);
	REQUIRE(fake_kernel::calls.size() == 1);
	const auto &qc = fake_kernel::calls[0];
	CHECK(qc.object == UVERBS_OBJECT_QP);
	CHECK(qc.method == UVERBS_METHOD_QP_CREATE);
	REQUIRE(qc.find(UVERBS_ATTR_UHW_OUT) != nullptr);
	CHECK(qc.find(UVERBS_ATTR_UHW_OUT)->len == sizeof(softrnic_create_qp_resp));
	CHECK(qc.find(UVERBS_ATTR_UHW_IN) == nullptr);
	CHECK(ibv_qp_to_qp_ex(qp) == nullptr); /* legacy create: no qp_ex */

	/* in INIT, a receive lands in the RQ ring, no system call */
	qp->state = IBV_QPS_INIT;
	ibv_recv_wr rwr{};
	ibv_recv_wr *rbad = nullptr;
	rwr.wr_id = 0xabc;
	CHECK(ibv_post_recv(qp, &rwr, &rbad) == 0);
	CHECK(rings.ctrl(8192)->prod == 1);
	CHECK(rings.slot<softrnic_rqe>(8192, 0, 64)->wr_id == 0xabc);
	CHECK(oc.cdev.nothing_written());
	/* a send in INIT: WQE in the SQ ring, then the doorbell write */
	ibv_send_wr swr{};
	ibv_send_wr *sbad = nullptr;
	swr.wr_id = 0xdef;
	swr.opcode = IBV_WR_SEND;
	CHECK(ibv_post_send(qp, &swr, &sbad) == 0);
	CHECK(rings.ctrl(4096)->prod == 1);
	CHECK(rings.slot<softrnic_sqe>(4096, 0, 128)->wr_id == 0xdef);
	const auto w = oc.cdev.next_write();
	CHECK(header_of(w).command == IB_USER_VERBS_CMD_POST_SEND);
	CHECK(w.size() == sizeof(cmd::doorbell_req));

	void *sq_map = nullptr;
	{ /* where the provider mapped the SQ: the slot it wrote */
		const auto &r = qp::from_qp(qp)->sq().get();
		sq_map = r.ctrl();
	}
	CHECK(mapped(sq_map));
	CHECK(ibv_destroy_qp(qp) == 0);
	CHECK_FALSE(mapped(sq_map)); /* unmapped with the QP */
	CHECK(ibv_dealloc_pd(pd) == 0);
	CHECK(ibv_destroy_cq(cq) == 0);
}

TEST_CASE("provider: a ring the kernel describes wrongly fails the create cleanly",
	  "[provider][cq]")
{
	open_context oc(good_ucontext());
	REQUIRE(oc.vctx != nullptr);
	fake_rings rings;
	fake_kernel::cq_resp = {ring_at(0, 12, 64), 5, 0}; /* 12: not a power of two */
	fake_kernel::calls.clear();
	errno = 0;
	CHECK(ibv_create_cq(oc.ctx(), 10, nullptr, nullptr, 0) == nullptr);
	CHECK(errno == EPROTO);
	/* and the kernel CQ was destroyed again */
	REQUIRE(fake_kernel::calls.size() == 2);
	CHECK(fake_kernel::calls[1].object == UVERBS_OBJECT_CQ);
	CHECK(fake_kernel::calls[1].method == UVERBS_METHOD_CQ_DESTROY);
	CHECK(fake_kernel::calls[1].find(UVERBS_ATTR_DESTROY_CQ_HANDLE)->data ==
	      fake_kernel::next_handle - 1);
}
