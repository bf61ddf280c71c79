/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause */
/*
 * softrnic user/kernel ABI: the one header shared by softrnic.ko and the
 * libsoftrnic provider.  Only fixed-width types, every struct padded to a
 * multiple of 8 bytes so 32- and 64-bit layouts agree.
 */
#ifndef SOFTRNIC_ABI_H
#define SOFTRNIC_ABI_H

#include <linux/types.h>

/*
 * Our driver id for RDMA_NLDEV_ATTR_UVERBS_DRIVER_ID and the uverbs ioctl
 * header.  Deliberately outside the kernel's enum rdma_driver_id: an
 * in-tree id would let another provider claim our devices, and
 * RDMA_DRIVER_UNKNOWN would make matching depend on device names.
 */
#define SOFTRNIC_DRIVER_ID 0x5352

/* uverbs ABI version; bumped on any incompatible change below. */
#define SOFTRNIC_UVERBS_ABI_VERSION 1

enum softrnic_link_type {
	SOFTRNIC_LINK_ROCE = 1,
	SOFTRNIC_LINK_IWARP = 2,
};

/* Returned by ib_uverbs GET_CONTEXT in the driver-specific response. */
struct softrnic_alloc_ucontext_resp {
	__u32 abi_version;	/* SOFTRNIC_UVERBS_ABI_VERSION */
	__u32 link_type;	/* enum softrnic_link_type */
	__u32 page_size;	/* kernel PAGE_SIZE, ring mmap granularity */
	__u32 reserved;
};

struct softrnic_alloc_pd_resp {
	__u32 pdn;
	__u32 reserved;
};

/*
 * ---------------------------------------------------------------------
 * Shared rings (SQ, RQ, SRQ, CQ).  Documentation/ring-abi.md explains the
 * design; the ordering contract is stated here, once:
 *
 *  - A ring is a struct softrnic_ring_ctrl followed, at offset
 *    SOFTRNIC_RING_CTRL_SIZE, by num_slots (a power of two) slots of
 *    slot_size bytes (a multiple of 64).  The kernel allocates it; the
 *    process maps it with mmap(mmap_offset, mmap_size) on its uverbs fd.
 *  - prod and cons are free-running 32-bit counters; a counter c names
 *    slot (c & (num_slots - 1)).  The ring is empty when prod == cons and
 *    full when prod - cons == num_slots.
 *  - Each side writes only its own counter.  The producer fills a slot and
 *    then stores prod with RELEASE; the consumer loads prod with ACQUIRE,
 *    reads the slot, and then stores cons with RELEASE; the producer loads
 *    cons with ACQUIRE before reusing a slot.
 *  - The kernel never trusts a value the process can write: it keeps its
 *    own copy of its counter, reads the other side's counter once, checks
 *    0 <= prod - cons <= num_slots, and copies a slot into kernel memory
 *    once before validating and using it.  A violation puts the QP (or CQ)
 *    into the error state; it never makes the kernel read outside the ring.
 *
 * SQ, RQ and SRQ: the process produces, the kernel consumes.
 * CQ: the kernel produces, the process consumes.
 * ---------------------------------------------------------------------
 */
#define SOFTRNIC_RING_CTRL_SIZE		256
#define SOFTRNIC_SLOT_ALIGN		64

struct softrnic_ring_ctrl {
	__u32 prod;			/* written by the producer only */
	__u32 prod_pad[15];
	__u32 cons;			/* written by the consumer only */
	__u32 cons_pad[15];
	__u32 kflags;			/* written by the kernel only */
	__u32 kflags_pad[15];
	__u32 uflags;			/* written by the process only */
	__u32 uflags_pad[15];
};

/*
 * kflags.  SQ: KERNEL_ACTIVE is set while the kernel is draining the SQ;
 * a process that sees it clear after publishing prod (with a full fence
 * between the prod store and the kflags load) rings the doorbell, an
 * empty post_send command.  The kernel clears it, fences, and re-reads
 * prod before it goes idle, so no WQE is left behind.
 * ERROR: the queue (QP or CQ) is in the error state.
 */
#define SOFTRNIC_KFLAG_KERNEL_ACTIVE	(1U << 0)
#define SOFTRNIC_KFLAG_ERROR		(1U << 1)

/*
 * CQ uflags: the arm request, written by the process instead of a
 * req_notify_cq syscall.  The kernel atomically takes it (xchg to 0) when
 * it produces a CQE that satisfies it and then signals the completion
 * channel.
 */
#define SOFTRNIC_CQ_ARM_NEXT		(1U << 0)
#define SOFTRNIC_CQ_ARM_SOLICITED	(1U << 1)

struct softrnic_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/* Send WQE opcodes: numerically the IB_UVERBS_WR_* values. */
enum softrnic_wqe_opcode {
	SOFTRNIC_WR_RDMA_WRITE = 0,
	SOFTRNIC_WR_RDMA_WRITE_WITH_IMM = 1,
	SOFTRNIC_WR_SEND = 2,
	SOFTRNIC_WR_SEND_WITH_IMM = 3,
	SOFTRNIC_WR_RDMA_READ = 4,
	SOFTRNIC_WR_ATOMIC_CMP_AND_SWP = 5,
	SOFTRNIC_WR_ATOMIC_FETCH_AND_ADD = 6,
	SOFTRNIC_WR_LOCAL_INV = 7,
	SOFTRNIC_WR_BIND_MW = 8,
	SOFTRNIC_WR_SEND_WITH_INV = 9,
	SOFTRNIC_WR_FLUSH = 14,
	SOFTRNIC_WR_ATOMIC_WRITE = 15,
	SOFTRNIC_WR_REG_MR = 0x20,	/* kernel consumers only */
};

#define SOFTRNIC_WQE_F_SIGNALED		(1U << 0)
#define SOFTRNIC_WQE_F_SOLICITED	(1U << 1)
#define SOFTRNIC_WQE_F_FENCE		(1U << 2)
#define SOFTRNIC_WQE_F_INLINE		(1U << 3)

/*
 * A send WQE: this 64-byte header, then num_sge struct softrnic_sge or,
 * with SOFTRNIC_WQE_F_INLINE, inline_len bytes of data.
 */
struct softrnic_sqe {
	__aligned_u64 wr_id;
	__u8 opcode;			/* enum softrnic_wqe_opcode */
	__u8 flags;			/* SOFTRNIC_WQE_F_* */
	__u16 num_sge;
	__u32 ex;			/* imm_data (as posted) or invalidate rkey */
	union {
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 inline_len;
		} rdma;			/* WRITE, READ, SEND (inline_len) */
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 compare_add;
			__aligned_u64 swap;
			__u32 rkey;
			__u32 reserved;
		} atomic;
		struct {
			__u32 ah_num;
			__u32 remote_qpn;
			__u32 remote_qkey;
			__u32 inline_len;
		} ud;
		struct {
			__aligned_u64 addr;
			__aligned_u64 length;
			__u32 mw_rkey;		/* the MW's current rkey */
			__u32 new_rkey;		/* rkey after the bind */
			__u32 mr_lkey;		/* MR the window is bound to */
			__u32 access;		/* IB_UVERBS_ACCESS_* */
		} bind;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 length;
			__u32 rkey;
			__u8 type;		/* SOFTRNIC_FLUSH_GLOBAL|_PERSISTENT */
			__u8 level;		/* SOFTRNIC_FLUSH_RANGE|_MR */
			__u16 reserved;
		} flush;
		__u8 raw[48];
	};
};

/*
 * FLUSH: flush.type is a set of these bits, flush.level one of the levels
 * (numerically rdma-core's IBV_FLUSH_GLOBAL/_PERSISTENT, IBV_FLUSH_RANGE/
 * _MR).  ATOMIC_WRITE uses atomic.remote_addr and atomic.rkey; atomic.swap
 * holds the 8 bytes to write, in memory order (as the process's buffer
 * had them), and no SGE follows.
 */
#define SOFTRNIC_FLUSH_GLOBAL		(1U << 0)
#define SOFTRNIC_FLUSH_PERSISTENT	(1U << 1)
#define SOFTRNIC_FLUSH_RANGE		0
#define SOFTRNIC_FLUSH_MR		1

/* A receive WQE: this header, then num_sge struct softrnic_sge. */
struct softrnic_rqe {
	__aligned_u64 wr_id;
	__u16 num_sge;
	__u16 reserved0;
	__u32 reserved1;
};

/* CQE opcodes: numerically the IB_UVERBS_WC_* / IBV_WC_* values. */
enum softrnic_wc_opcode {
	SOFTRNIC_WC_SEND = 0,
	SOFTRNIC_WC_RDMA_WRITE = 1,
	SOFTRNIC_WC_RDMA_READ = 2,
	SOFTRNIC_WC_COMP_SWAP = 3,
	SOFTRNIC_WC_FETCH_ADD = 4,
	SOFTRNIC_WC_BIND_MW = 5,
	SOFTRNIC_WC_LOCAL_INV = 6,
	SOFTRNIC_WC_FLUSH = 8,
	SOFTRNIC_WC_ATOMIC_WRITE = 9,
	SOFTRNIC_WC_REG_MR = 0x20,	/* kernel consumers only */
	SOFTRNIC_WC_RECV = 1 << 7,
	SOFTRNIC_WC_RECV_RDMA_WITH_IMM = (1 << 7) + 1,
};

/* CQE flags: numerically the IBV_WC_* flag bits. */
#define SOFTRNIC_WC_F_GRH		(1U << 0)
#define SOFTRNIC_WC_F_WITH_IMM		(1U << 1)
#define SOFTRNIC_WC_F_WITH_INV		(1U << 3)
/* UD receives: smac and vlan_id are valid (kernel consumers read them). */
#define SOFTRNIC_WC_F_SMAC		(1U << 8)
#define SOFTRNIC_WC_F_VLAN		(1U << 9)

struct softrnic_cqe {
	__aligned_u64 wr_id;
	__u8 status;			/* enum ibv_wc_status / ib_wc_status */
	__u8 opcode;			/* enum softrnic_wc_opcode */
	__u16 wc_flags;			/* SOFTRNIC_WC_F_* */
	__u32 byte_len;
	__u32 ex;			/* imm_data (network order) or inv. rkey */
	__u32 qp_num;
	__u32 src_qp;
	__u16 pkey_index;
	__u8 sl;
	__u8 network_hdr_type;		/* RDMA_NETWORK_* for UD receives */
	__u32 vendor_err;
	__u8 smac[6];			/* UD receives: source MAC */
	__u16 vlan_id;
	__u32 reserved[4];
};

/* Where one ring lives in the process's view. */
struct softrnic_ring_info {
	__aligned_u64 mmap_offset;	/* pass to mmap() on the uverbs fd */
	__u32 mmap_size;		/* ctrl + slots, page aligned */
	__u32 num_slots;		/* power of two */
	__u32 slot_size;		/* bytes, multiple of SOFTRNIC_SLOT_ALIGN */
	__u32 reserved;
};

struct softrnic_create_cq_resp {
	struct softrnic_ring_info cq;
	__u32 cqn;
	__u32 reserved;
};

/* resize_cq: a new ring replaces the old; unconsumed CQEs move along. */
struct softrnic_resize_cq_resp {
	struct softrnic_ring_info cq;
};

struct softrnic_create_qp_resp {
	struct softrnic_ring_info sq;
	struct softrnic_ring_info rq;	/* num_slots == 0 when on an SRQ */
	__u32 qpn;
	__u32 max_inline;
};

struct softrnic_create_srq_resp {
	struct softrnic_ring_info srq;
	__u32 srqn;
	__u32 reserved;
};

struct softrnic_create_ah_resp {
	__u32 ah_num;			/* names the AH in UD send WQEs */
	__u32 reserved;
};

#endif /* SOFTRNIC_ABI_H */
