// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The slice of libibverbs' private provider interface that libsoftrnic uses.
 *
 * libibverbs exports a second, unstable interface for the provider plugins
 * it dlopen()s.  It is versioned as a whole: every exported symbol carries
 * the ELF version IBVERBS_PRIVATE_<N>, the registration entry point has <N>
 * in its very name, and a provider file must be called lib<name>-rdmav<N>.so
 * to be loaded at all.  Distributions do not ship a header for it, so this
 * file declares, from scratch, exactly what we call and exactly the records
 * we share with the library, for N = 34 (rdma-core v44, Debian 12).
 *
 * What is ABI here and must not be "tidied up":
 *   - function names and their argument lists;
 *   - struct tags of records passed by pointer (kept so the declarations read
 *     the same as the library's own and as the kernel uapi);
 *   - the size of every record and the offset of every field, including the
 *     ORDER of the function pointers in verbs_context_ops (the library copies
 *     it slot by slot; a shifted slot silently calls the wrong function).
 * Field names follow the verbs operation they hold, which is also what the
 * libibverbs man pages call them.
 *
 * Every layout below is pinned by static_asserts (LP64 numbers; other data
 * models stop the build with #error until someone checks them) and by
 * tests/unit/test_provider_abi_layout.cpp, which drives the installed
 * libibverbs with these declarations and checks where each value lands.
 * The build refuses a libibverbs that does not export IBVERBS_PRIVATE_34
 * (see CMakeLists.txt next to this file).
 */
#ifndef SOFTRNIC_VERBS_PROVIDER_ABI_H
#define SOFTRNIC_VERBS_PROVIDER_ABI_H

#ifndef __cplusplus
#error "verbs_provider_abi.h is written for the C++ provider only"
#endif

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <sys/types.h>

/*
 * The private ABI generation these declarations describe.  CMakeLists.txt
 * reads this line to name the module (libsoftrnic-rdmav<N>.so) and to check
 * the installed libibverbs, so keep it a plain "#define NAME <number>".
 */
#define SOFTRNIC_VERBS_PRIVATE_ABI 34

extern "C" {

/* Doubly linked list hook embedded in libibverbs' records; only the library
 * walks these lists, we merely have to reserve the room. */
struct verbs_list_hook {
	verbs_list_hook *next;
	verbs_list_hook *prev;
};

/*
 * One row of a provider's device match table.  The table ends with a row
 * whose kind is 0.  We only ever use the driver-id kind; the other kinds
 * (PCI ids, modalias glob) are listed so the numbering is documented.
 */
struct verbs_match_ent {
	void *driver_data; /* handed back to us via verbs_sysfs_dev::match */
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind; /* softrnic::verbs_abi::match_kind */
};

/*
 * libibverbs' description of one uverbs device it found (through netlink or
 * sysfs), handed to match_device and alloc_device.  Owned by the library.
 */
struct verbs_sysfs_dev {
	verbs_list_hook entry;
	void *provider_data;
	const verbs_match_ent *match; /* table row that matched, or null */
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX]; /* uverbsN */
	dev_t sysfs_cdev;
	char ibdev_name[IBV_SYSFS_NAME_MAX]; /* e.g. softrnic0 */
	char ibdev_path[IBV_SYSFS_PATH_MAX]; /* <sysfs>/class/infiniband/<ibdev> */
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id; /* RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID, 0 if unknown */
	enum ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver; /* the device's uverbs_abi_ver (sysfs abi_version) */
	struct timespec time_created;
};

struct verbs_device;
struct verbs_context_ops;

/*
 * What a provider registers: identification, match rules and the
 * constructors libibverbs calls for a matched device.
 */
struct verbs_device_ops {
	const char *name;

	/* devices whose abi_ver is outside [min, max] are refused by the
	 * library itself after match_device */
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const verbs_match_ent *match_table;
	/* only for statically linked libibverbs; null for a plugin */
	const verbs_device_ops **static_providers;

	/* optional; called after the table lookup, has the final word */
	bool (*match_device)(verbs_sysfs_dev *sysfs_dev);

	verbs_context *(*alloc_context)(ibv_device *device, int cmd_fd, void *private_data);
	verbs_context *(*import_context)(ibv_device *device, int cmd_fd);

	verbs_device *(*alloc_device)(verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(verbs_device *device);
};

/*
 * The library's per-device record.  The provider allocates it (usually as
 * part of a bigger object) in alloc_device; the library fills everything but
 * our own extension and calls uninit_device when the last reference goes.
 * The public ibv_device must stay at offset 0.
 */
struct verbs_device {
	ibv_device device;
	const verbs_device_ops *ops;
	std::atomic<int> refcount; /* a C11 atomic_int on the library side */
	verbs_list_hook entry;
	verbs_sysfs_dev *sysfs; /* owned by the library once alloc_device returns */
	uint64_t core_support;
};

/* Only ever named by pointer (XRC domains are not supported). */
struct verbs_xrcd;

/*
 * The library's wrappers around the public object structs.  libibverbs
 * reaches the extra fields by container_of from the public pointer, so the
 * public struct is at offset 0 and the provider allocates the wrapper (as
 * the first member of its own object).
 */
struct verbs_srq {
	ibv_srq srq;
	enum ibv_srq_type srq_type;
	verbs_xrcd *xrcd;
	ibv_cq *cq;
	uint32_t srq_num;
};

/* verbs_qp::comp_mask */
enum verbs_qp_mask : uint32_t {
	VERBS_QP_XRCD = 1 << 0,
	VERBS_QP_EX = 1 << 1, /* ibv_qp_to_qp_ex() hands out qp_ex */
};

struct verbs_qp {
	union {
		ibv_qp qp;
		ibv_qp_ex qp_ex; /* starts with an ibv_qp */
	};
	uint32_t comp_mask;
	verbs_xrcd *xrcd;
};

struct verbs_cq {
	union {
		ibv_cq cq;
		ibv_cq_ex cq_ex; /* same leading fields as ibv_cq */
	};
};

/* verbs_mr::mr_type; ibv_rereg_mr only accepts IBV_MR_TYPE_MR */
enum ibv_mr_type {
	IBV_MR_TYPE_MR,
	IBV_MR_TYPE_NULL_MR,
	IBV_MR_TYPE_IMPORTED_MR,
	IBV_MR_TYPE_DMABUF_MR,
};

struct verbs_mr {
	ibv_mr ibv_mr;
	enum ibv_mr_type mr_type;
	int access;
};

/*
 * The provider's operation table.  verbs_set_ops() copies every non-null
 * slot into the context, so this must list the library's slots in the
 * library's order (alphabetical in v44), all 76 of them, whether we
 * implement them or not.
 */
struct verbs_context_ops {
	int (*advise_mr)(ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags,
			 ibv_sge *sg_list, uint32_t num_sges);
	ibv_dm *(*alloc_dm)(ibv_context *context, ibv_alloc_dm_attr *attr);
	ibv_mw *(*alloc_mw)(ibv_pd *pd, enum ibv_mw_type type);
	ibv_mr *(*alloc_null_mr)(ibv_pd *pd);
	ibv_pd *(*alloc_parent_domain)(ibv_context *context, ibv_parent_domain_init_attr *attr);
	ibv_pd *(*alloc_pd)(ibv_context *context);
	ibv_td *(*alloc_td)(ibv_context *context, ibv_td_init_attr *init_attr);
	void (*async_event)(ibv_context *context, ibv_async_event *event);
	int (*attach_counters_point_flow)(ibv_counters *counters, ibv_counter_attach_attr *attr,
					  ibv_flow *flow);
	int (*attach_mcast)(ibv_qp *qp, const ibv_gid *gid, uint16_t lid);
	int (*bind_mw)(ibv_qp *qp, ibv_mw *mw, ibv_mw_bind *mw_bind);
	int (*close_xrcd)(ibv_xrcd *xrcd);
	void (*cq_event)(ibv_cq *cq);
	ibv_ah *(*create_ah)(ibv_pd *pd, ibv_ah_attr *attr);
	ibv_counters *(*create_counters)(ibv_context *context, ibv_counters_init_attr *init_attr);
	ibv_cq *(*create_cq)(ibv_context *context, int cqe, ibv_comp_channel *channel,
			     int comp_vector);
	ibv_cq_ex *(*create_cq_ex)(ibv_context *context, ibv_cq_init_attr_ex *init_attr);
	ibv_flow *(*create_flow)(ibv_qp *qp, ibv_flow_attr *flow_attr);
	ibv_flow_action *(*create_flow_action_esp)(ibv_context *context,
						   ibv_flow_action_esp_attr *attr);
	ibv_qp *(*create_qp)(ibv_pd *pd, ibv_qp_init_attr *attr);
	ibv_qp *(*create_qp_ex)(ibv_context *context, ibv_qp_init_attr_ex *qp_init_attr_ex);
	ibv_rwq_ind_table *(*create_rwq_ind_table)(ibv_context *context,
						   ibv_rwq_ind_table_init_attr *init_attr);
	ibv_srq *(*create_srq)(ibv_pd *pd, ibv_srq_init_attr *srq_init_attr);
	ibv_srq *(*create_srq_ex)(ibv_context *context, ibv_srq_init_attr_ex *srq_init_attr_ex);
	ibv_wq *(*create_wq)(ibv_context *context, ibv_wq_init_attr *wq_init_attr);
	int (*dealloc_mw)(ibv_mw *mw);
	int (*dealloc_pd)(ibv_pd *pd);
	int (*dealloc_td)(ibv_td *td);
	int (*dereg_mr)(verbs_mr *vmr);
	int (*destroy_ah)(ibv_ah *ah);
	int (*destroy_counters)(ibv_counters *counters);
	int (*destroy_cq)(ibv_cq *cq);
	int (*destroy_flow)(ibv_flow *flow);
	int (*destroy_flow_action)(ibv_flow_action *action);
	int (*destroy_qp)(ibv_qp *qp);
	int (*destroy_rwq_ind_table)(ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(ibv_srq *srq);
	int (*destroy_wq)(ibv_wq *wq);
	int (*detach_mcast)(ibv_qp *qp, const ibv_gid *gid, uint16_t lid);
	void (*free_context)(ibv_context *context);
	int (*free_dm)(ibv_dm *dm);
	int (*get_srq_num)(ibv_srq *srq, uint32_t *srq_num);
	ibv_dm *(*import_dm)(ibv_context *context, uint32_t dm_handle);
	ibv_mr *(*import_mr)(ibv_pd *pd, uint32_t mr_handle);
	ibv_pd *(*import_pd)(ibv_context *context, uint32_t pd_handle);
	int (*modify_cq)(ibv_cq *cq, ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(ibv_flow_action *action, ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask);
	int (*modify_qp_rate_limit)(ibv_qp *qp, ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(ibv_srq *srq, ibv_srq_attr *srq_attr, int srq_attr_mask);
	int (*modify_wq)(ibv_wq *wq, ibv_wq_attr *wq_attr);
	ibv_qp *(*open_qp)(ibv_context *context, ibv_qp_open_attr *attr);
	ibv_xrcd *(*open_xrcd)(ibv_context *context, ibv_xrcd_init_attr *xrcd_init_attr);
	int (*poll_cq)(ibv_cq *cq, int num_entries, ibv_wc *wc);
	int (*post_recv)(ibv_qp *qp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr);
	int (*post_send)(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad_wr);
	int (*post_srq_ops)(ibv_srq *srq, ibv_ops_wr *op, ibv_ops_wr **bad_op);
	int (*post_srq_recv)(ibv_srq *srq, ibv_recv_wr *recv_wr, ibv_recv_wr **bad_recv_wr);
	int (*query_device_ex)(ibv_context *context, const ibv_query_device_ex_input *input,
			       ibv_device_attr_ex *attr, size_t attr_size);
	int (*query_ece)(ibv_qp *qp, ibv_ece *ece);
	int (*query_port)(ibv_context *context, uint8_t port_num, ibv_port_attr *port_attr);
	int (*query_qp)(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask, ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags);
	int (*query_rt_values)(ibv_context *context, ibv_values_ex *values);
	int (*query_srq)(ibv_srq *srq, ibv_srq_attr *srq_attr);
	int (*read_counters)(ibv_counters *counters, uint64_t *counters_value, uint32_t ncounters,
			     uint32_t flags);
	ibv_mr *(*reg_dm_mr)(ibv_pd *pd, ibv_dm *dm, uint64_t dm_offset, size_t length,
			     unsigned int access);
	ibv_mr *(*reg_dmabuf_mr)(ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova, int fd,
				 int access);
	ibv_mr *(*reg_mr)(ibv_pd *pd, void *addr, size_t length, uint64_t hca_va, int access);
	int (*req_notify_cq)(ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(verbs_mr *vmr, int flags, ibv_pd *pd, void *addr, size_t length,
			int access);
	int (*resize_cq)(ibv_cq *cq, int cqe);
	int (*set_ece)(ibv_qp *qp, ibv_ece *ece);
	void (*unimport_dm)(ibv_dm *dm);
	void (*unimport_mr)(ibv_mr *mr);
	void (*unimport_pd)(ibv_pd *pd);
};

/*
 * Legacy write() command records the ibv_cmd_* helpers take: the 8-byte
 * uverbs command header followed by the kernel's core request.  Any driver
 * request follows immediately, and the helpers learn where it ends from the
 * size argument.  The kernel uapi structs end in flexible arrays, which C++
 * will not let us embed in front of more fields, so the core payload is
 * spelled out here and checked against the uapi sizes below.  Two of these
 * tags are also names of public verbs functions, so C++ code has to write
 * "struct ibv_alloc_pd" / "struct ibv_query_port" to mean the record.
 */
struct ibv_get_context {
	ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
};

struct ibv_alloc_pd {
	ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
};

struct ibv_query_port {
	ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u8 port_num;
	__u8 reserved[7];
};

} /* extern "C" */

namespace softrnic::verbs_abi
{
/*
 * Room for a kernel core request or response that the ibv_cmd_* helper
 * fills in itself (the provider passes it zeroed and never reads it): the
 * uapi struct's size and alignment, without its trailing flexible array.
 */
template <typename Core> struct core_room {
	alignas(alignof(Core)) unsigned char bytes[sizeof(Core)];
};
} // namespace softrnic::verbs_abi

extern "C" {

/* The header of the extended (IB_USER_VERBS_CMD_FLAG_EXTENDED) commands. */
struct verbs_ex_hdr {
	ib_uverbs_cmd_hdr hdr;
	ib_uverbs_ex_cmd_hdr ex_hdr;
};

#define SOFTRNIC_DECLARE_CMD(name, core_type)                                                      \
	struct name {                                                                              \
		ib_uverbs_cmd_hdr hdr;                                                             \
		softrnic::verbs_abi::core_room<core_type> core;                                    \
	};                                                                                         \
	static_assert(sizeof(struct name) == sizeof(ib_uverbs_cmd_hdr) + sizeof(core_type));       \
	static_assert(offsetof(struct name, core) == sizeof(ib_uverbs_cmd_hdr))
#define SOFTRNIC_DECLARE_CMD_EX(name, core_type)                                                   \
	struct name {                                                                              \
		verbs_ex_hdr hdr;                                                                  \
		softrnic::verbs_abi::core_room<core_type> core;                                    \
	};                                                                                         \
	static_assert(sizeof(struct name) == sizeof(verbs_ex_hdr) + sizeof(core_type));            \
	static_assert(offsetof(struct name, core) == sizeof(verbs_ex_hdr))

SOFTRNIC_DECLARE_CMD(ibv_create_cq, ib_uverbs_create_cq);
SOFTRNIC_DECLARE_CMD_EX(ibv_create_cq_ex, ib_uverbs_ex_create_cq);
SOFTRNIC_DECLARE_CMD(ibv_resize_cq, ib_uverbs_resize_cq);
SOFTRNIC_DECLARE_CMD(ibv_create_qp, ib_uverbs_create_qp);
SOFTRNIC_DECLARE_CMD_EX(ibv_create_qp_ex, ib_uverbs_ex_create_qp);
SOFTRNIC_DECLARE_CMD(ibv_modify_qp, ib_uverbs_modify_qp);
SOFTRNIC_DECLARE_CMD_EX(ibv_modify_qp_ex, ib_uverbs_ex_modify_qp);
SOFTRNIC_DECLARE_CMD(ibv_query_qp, ib_uverbs_query_qp);
SOFTRNIC_DECLARE_CMD(ibv_create_srq, ib_uverbs_create_srq);
SOFTRNIC_DECLARE_CMD(ibv_modify_srq, ib_uverbs_modify_srq);
SOFTRNIC_DECLARE_CMD(ibv_query_srq, ib_uverbs_query_srq);
SOFTRNIC_DECLARE_CMD(ibv_reg_mr, ib_uverbs_reg_mr);
SOFTRNIC_DECLARE_CMD(ibv_rereg_mr, ib_uverbs_rereg_mr);
SOFTRNIC_DECLARE_CMD(ibv_alloc_mw, ib_uverbs_alloc_mw);

#undef SOFTRNIC_DECLARE_CMD
#undef SOFTRNIC_DECLARE_CMD_EX

/* ---- functions exported by libibverbs under IBVERBS_PRIVATE_34 ---- */

/* Adds a provider to the library's list; called from our ELF constructor. */
void verbs_register_driver_34(const verbs_device_ops *ops);

/* Allocates alloc_size zeroed bytes, initialises the verbs_context found
 * context_offset bytes in (the pointer value IS the offset) and tags future
 * ioctls with driver_id.  On failure closes cmd_fd, sets errno, returns null. */
void *_verbs_init_and_alloc_context(ibv_device *device, int cmd_fd, size_t alloc_size,
				    verbs_context *context_offset, uint32_t driver_id);
/* Undoes the above except the free(); closes cmd_fd and async_fd. */
void verbs_uninit_context(verbs_context *context);
void verbs_set_ops(verbs_context *vctx, const verbs_context_ops *ops);

/* Library logger, active with VERBS_LOG_LEVEL / VERBS_LOG_FILE.  The context
 * argument is unused by v44 and may be null. */
void __verbs_log(verbs_context *ctx, uint32_t level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Command helpers; all return 0 or a positive errno. */
int ibv_cmd_get_context(verbs_context *context, struct ibv_get_context *cmd, size_t cmd_size,
			ib_uverbs_get_context_resp *resp, size_t resp_size);
int ibv_cmd_query_device_any(ibv_context *context, const ibv_query_device_ex_input *input,
			     ibv_device_attr_ex *attr, size_t attr_size,
			     ib_uverbs_ex_query_device_resp *resp, size_t *resp_size);
int ibv_cmd_query_port(ibv_context *context, uint8_t port_num, ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);
int ibv_cmd_alloc_pd(ibv_context *context, ibv_pd *pd, struct ibv_alloc_pd *cmd, size_t cmd_size,
		     ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(ibv_pd *pd);

/* CQ.  create_cq/create_cq_ex fill handle and cqe (and set cq->context);
 * the caller of our op (libibverbs) then runs verbs_init_cq().  resize
 * updates cq->cqe. */
int ibv_cmd_create_cq(ibv_context *context, int cqe, ibv_comp_channel *channel, int comp_vector,
		      ibv_cq *cq, struct ibv_create_cq *cmd, size_t cmd_size,
		      ib_uverbs_create_cq_resp *resp, size_t resp_size);
int ibv_cmd_create_cq_ex(ibv_context *context, const ibv_cq_init_attr_ex *cq_attr, verbs_cq *cq,
			 struct ibv_create_cq_ex *cmd, size_t cmd_size,
			 ib_uverbs_ex_create_cq_resp *resp, size_t resp_size, uint32_t cmd_flags);
int ibv_cmd_resize_cq(ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd, size_t cmd_size,
		      ib_uverbs_resize_cq_resp *resp, size_t resp_size);
/* Waits until every event reported for the CQ has been acked. */
int ibv_cmd_destroy_cq(ibv_cq *cq);

/* SRQ */
int ibv_cmd_create_srq(ibv_pd *pd, ibv_srq *srq, ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size, ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_modify_srq(ibv_srq *srq, ibv_srq_attr *srq_attr, int srq_attr_mask,
		       struct ibv_modify_srq *cmd, size_t cmd_size);
int ibv_cmd_query_srq(ibv_srq *srq, ibv_srq_attr *srq_attr, struct ibv_query_srq *cmd,
		      size_t cmd_size);
int ibv_cmd_destroy_srq(ibv_srq *srq);

/* QP.  create_qp_ex2 fills handle, qp_num, the ibv_qp fields from the
 * attributes (state RESET, mutex/cond) and the actual caps in attr->cap. */
int ibv_cmd_create_qp_ex2(ibv_context *context, verbs_qp *qp, ibv_qp_init_attr_ex *qp_attr,
			  struct ibv_create_qp_ex *cmd, size_t cmd_size,
			  ib_uverbs_ex_create_qp_resp *resp, size_t resp_size);
int ibv_cmd_query_qp(ibv_qp *qp, ibv_qp_attr *qp_attr, int attr_mask,
		     ibv_qp_init_attr *qp_init_attr, struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_modify_qp(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size);
int ibv_cmd_modify_qp_ex(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask, struct ibv_modify_qp_ex *cmd,
			 size_t cmd_size, ib_uverbs_ex_modify_qp_resp *resp, size_t resp_size);
int ibv_cmd_destroy_qp(ibv_qp *qp);

/* MR, MW, AH */
int ibv_cmd_reg_mr(ibv_pd *pd, void *addr, size_t length, uint64_t hca_va, int access,
		   verbs_mr *vmr, struct ibv_reg_mr *cmd, size_t cmd_size,
		   ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_rereg_mr(verbs_mr *vmr, uint32_t flags, void *addr, size_t length, uint64_t hca_va,
		     int access, ibv_pd *pd, struct ibv_rereg_mr *cmd, size_t cmd_sz,
		     ib_uverbs_rereg_mr_resp *resp, size_t resp_sz);
int ibv_cmd_dereg_mr(verbs_mr *vmr);
int ibv_cmd_alloc_mw(ibv_pd *pd, enum ibv_mw_type type, ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size, ib_uverbs_alloc_mw_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_mw(ibv_mw *mw);
int ibv_cmd_create_ah(ibv_pd *pd, ibv_ah *ah, ibv_ah_attr *attr, ib_uverbs_create_ah_resp *resp,
		      size_t resp_size);
int ibv_cmd_destroy_ah(ibv_ah *ah);
int ibv_cmd_attach_mcast(ibv_qp *qp, const ibv_gid *gid, uint16_t lid);
int ibv_cmd_detach_mcast(ibv_qp *qp, const ibv_gid *gid, uint16_t lid);

/* Reads <ibdev_path>/<formatted name> into buf; returns its length or -1. */
int ibv_read_ibdev_sysfs_file(char *buf, size_t size, verbs_sysfs_dev *sysfs_dev, const char *fnfmt,
			      ...) __attribute__((format(printf, 4, 5)));

} /* extern "C" */

namespace softrnic::verbs_abi
{

/* verbs_match_ent::kind */
enum match_kind : uint8_t {
	match_end = 0,
	match_pci = 1,
	match_modalias = 2,
	match_driver_id = 3,
};

/* levels for __verbs_log; shown when VERBS_LOG_LEVEL >= level */
enum log_level : uint32_t {
	log_none = 0,
	log_err = 1,
	log_warn = 2,
	log_info = 3,
	log_debug = 4,
};

/* The file suffix libibverbs appends to a "driver" line: -rdmav<N>.so */
inline constexpr int private_abi = SOFTRNIC_VERBS_PRIVATE_ABI;

} // namespace softrnic::verbs_abi

/* ---- layout pins ---- */
#ifndef __LP64__
#error "only the LP64 layout of the libibverbs provider ABI has been checked"
#endif
static_assert(sizeof(void *) == 8 && sizeof(long) == 8);
static_assert(sizeof(std::atomic<int>) == sizeof(int) && alignof(std::atomic<int>) == alignof(int));
static_assert(std::atomic<int>::is_always_lock_free);

static_assert(sizeof(verbs_match_ent) == 24);
static_assert(offsetof(verbs_match_ent, u) == 8);
static_assert(offsetof(verbs_match_ent, kind) == 20);

static_assert(offsetof(verbs_sysfs_dev, match) == 24);
static_assert(offsetof(verbs_sysfs_dev, sysfs_name) == 36);
static_assert(offsetof(verbs_sysfs_dev, sysfs_cdev) == 104);
static_assert(offsetof(verbs_sysfs_dev, ibdev_name) == 112);
static_assert(offsetof(verbs_sysfs_dev, ibdev_path) == 176);
static_assert(offsetof(verbs_sysfs_dev, modalias) == 432);
static_assert(offsetof(verbs_sysfs_dev, node_guid) == 944);
static_assert(offsetof(verbs_sysfs_dev, driver_id) == 952);
static_assert(offsetof(verbs_sysfs_dev, node_type) == 956);
static_assert(offsetof(verbs_sysfs_dev, ibdev_idx) == 960);
static_assert(offsetof(verbs_sysfs_dev, abi_ver) == 968);
static_assert(offsetof(verbs_sysfs_dev, time_created) == 976);
static_assert(sizeof(verbs_sysfs_dev) == 992);

static_assert(offsetof(verbs_device_ops, match_min_abi_version) == 8);
static_assert(offsetof(verbs_device_ops, match_table) == 16);
static_assert(offsetof(verbs_device_ops, match_device) == 32);
static_assert(offsetof(verbs_device_ops, alloc_context) == 40);
static_assert(offsetof(verbs_device_ops, alloc_device) == 56);
static_assert(offsetof(verbs_device_ops, uninit_device) == 64);
static_assert(sizeof(verbs_device_ops) == 72);

static_assert(offsetof(verbs_device, device) == 0);
static_assert(sizeof(ibv_device) == 664);
static_assert(offsetof(verbs_device, ops) == 664);
static_assert(offsetof(verbs_device, refcount) == 672);
static_assert(offsetof(verbs_device, sysfs) == 696);
static_assert(sizeof(verbs_device) == 712);

/* 76 slots; spot-check both ends and the ones this provider fills */
static_assert(sizeof(verbs_context_ops) == 76 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, advise_mr) == 0 * 8);
static_assert(offsetof(verbs_context_ops, alloc_pd) == 5 * 8);
static_assert(offsetof(verbs_context_ops, dealloc_pd) == 26 * 8);
static_assert(offsetof(verbs_context_ops, free_context) == 39 * 8);
static_assert(offsetof(verbs_context_ops, query_device_ex) == 58 * 8);
static_assert(offsetof(verbs_context_ops, query_port) == 60 * 8);
static_assert(offsetof(verbs_context_ops, unimport_pd) == 75 * 8);

/* the object wrappers */
static_assert(offsetof(verbs_srq, srq) == 0);
static_assert(offsetof(verbs_srq, srq_type) == 128);
static_assert(offsetof(verbs_srq, xrcd) == 136);
static_assert(offsetof(verbs_srq, cq) == 144);
static_assert(offsetof(verbs_srq, srq_num) == 152);
static_assert(sizeof(verbs_srq) == 160);
static_assert(offsetof(ibv_qp_ex, qp_base) == 0);
static_assert(offsetof(verbs_qp, qp) == 0 && offsetof(verbs_qp, qp_ex) == 0);
static_assert(sizeof(ibv_qp_ex) == 352);
static_assert(offsetof(verbs_qp, comp_mask) == 352);
static_assert(offsetof(verbs_qp, xrcd) == 360);
static_assert(sizeof(verbs_qp) == 368);
static_assert(offsetof(verbs_cq, cq) == 0 && offsetof(verbs_cq, cq_ex) == 0);
static_assert(sizeof(verbs_cq) == 288);
/* ibv_cq_ex extends ibv_cq: the library treats either as the other */
static_assert(offsetof(ibv_cq_ex, handle) == offsetof(ibv_cq, handle));
static_assert(offsetof(ibv_cq_ex, comp_events_completed) ==
	      offsetof(ibv_cq, comp_events_completed));
static_assert(offsetof(ibv_cq_ex, async_events_completed) ==
	      offsetof(ibv_cq, async_events_completed));
static_assert(sizeof(enum ibv_mr_type) == 4);
static_assert(offsetof(verbs_mr, ibv_mr) == 0);
static_assert(offsetof(verbs_mr, mr_type) == 48);
static_assert(offsetof(verbs_mr, access) == 52);
static_assert(sizeof(verbs_mr) == 56);
static_assert(sizeof(verbs_ex_hdr) == 24);

/* architecture-independent: the command records against the kernel uapi */
static_assert(sizeof(struct ibv_get_context) ==
	      sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_get_context));
static_assert(sizeof(struct ibv_alloc_pd) ==
	      sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_alloc_pd));
static_assert(sizeof(struct ibv_query_port) ==
	      sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_query_port));
static_assert(offsetof(struct ibv_query_port, port_num) ==
	      sizeof(ib_uverbs_cmd_hdr) + offsetof(ib_uverbs_query_port, port_num));
static_assert(offsetof(struct ibv_get_context, response) == sizeof(ib_uverbs_cmd_hdr));

#endif /* SOFTRNIC_VERBS_PROVIDER_ABI_H */
