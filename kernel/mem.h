/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Memory objects: memory regions (MR), memory windows (MW), address
 * handles (AH), and the data path API the wire layers use to turn keys
 * into memory.  Documentation/memory.md has the model; the short version:
 *
 *  - Every MR and MW owns one slot of the device's key table (keys.c), an
 *    xarray indexed by key >> 8.  lkey == rkey == index << 8 | key byte.
 *    The slot points at a struct softrnic_mkey, embedded in the MR or in
 *    the MW's window state, whose memory is freed only after an RCU grace
 *    period, so lookups are lock-free: rcu_read_lock, xa_load,
 *    refcount_inc_not_zero.
 *  - A reference keeps the object, its pages and its translation alive.
 *    Data path users hold one only across a copy (never across a wait
 *    for the network).  Destruction unpublishes the key, drops the
 *    owner's reference and waits on a completion for the last user: no
 *    sleeping and hoping, no global lock.
 *  - The mutable part of a key (key byte, state, rights, bounds, PD) is
 *    read under a per-object seqlock, so checks are consistent snapshots
 *    even while a fast-register, invalidate or bind rewrites them.
 *  - Invalidation (LOCAL_INV, SEND_WITH_INV) keeps the object but must
 *    not complete while an access that passed its check still copies:
 *    the ULP frees the pages on that completion.  Every data path access
 *    counts itself in its MR's inflight from before its check until
 *    softrnic_mr_put(), with BH or IRQs off and without waiting for
 *    anything, so it is short (one packet's copy at most); an
 *    invalidation makes the key non-VALID, then waits for inflight to
 *    drop to zero, spinning: it may run in softirq, and no access can be
 *    stuck behind it on its own CPU.
 *
 * Lock order: MW window lock -> MR lock -> key table xa_lock, and
 * MW window lock -> the bound QP's mw_lock (queue.h).
 */
#ifndef SOFTRNIC_MEM_H
#define SOFTRNIC_MEM_H

#include <linux/completion.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/seqlock.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include "softrnic.h"
#include "mem_check.h"

/* -------------------------------------------------------------------- */
/* Key table entries (keys.c)                                           */
/* -------------------------------------------------------------------- */

enum softrnic_mkey_kind {
	SOFTRNIC_MKEY_MR = 1,
	SOFTRNIC_MKEY_MW,
};

/*
 * IBTA states.  Fast-reg MRs and type 2 MWs start FREE and move between
 * FREE and VALID; every other MR is VALID from registration; type 1 MWs
 * are VALID (bound or not).  INVALID: being destroyed or re-registered;
 * no lookup succeeds.
 */
enum softrnic_mkey_state {
	SOFTRNIC_MKEY_INVALID = 0,
	SOFTRNIC_MKEY_FREE,
	SOFTRNIC_MKEY_VALID,
};

struct softrnic_mkey {
	refcount_t ref;			/* owner's 1 + data path users */
	struct completion drained;	/* ref reached 0 */
	seqlock_t lock;			/* writers of the fields below */

	u32 key;			/* index << 8 | key byte */
	u8 kind;			/* enum softrnic_mkey_kind */
	u8 state;			/* enum softrnic_mkey_state */
	u32 access;			/* IB_ACCESS_* rights granted */
	u64 iova;			/* [iova, iova + length) */
	u64 length;
	struct softrnic_pd *pd;
};

/* -------------------------------------------------------------------- */
/* Memory regions (mr.c)                                                */
/* -------------------------------------------------------------------- */

/* Pinned user memory: what a user MR translates to. */
struct softrnic_pinned {
	u64 start;			/* user address of the first byte */
	struct ib_umem *umem;		/* NULL for a zero-length MR */
	struct page **pages;		/* umem's pages, by index */
	u64 npages;
	u32 fbo;			/* offset of the first byte in pages[0] */
};

enum softrnic_mr_type {
	SOFTRNIC_MR_USER = 1,		/* pinned user pages (ib_umem) */
	SOFTRNIC_MR_DMA,		/* all of kernel memory (get_dma_mr) */
	SOFTRNIC_MR_FAST_REG,		/* page list, IB_WR_REG_MR */
};

struct softrnic_mr {
	struct ib_mr ibmr;
	struct softrnic_mkey mk;
	u8 type;			/* enum softrnic_mr_type */
	/*
	 * Number of MWs bound to this MR; under mk.lock.  While non-zero
	 * the MR cannot be deregistered, re-registered or invalidated.
	 */
	unsigned int num_mw;
	/* Data path accesses between their check and softrnic_mr_put(). */
	atomic_t inflight;

	/* USER: fixed between re-registrations (which drain all users). */
	struct softrnic_pinned pin;

	/*
	 * FAST_REG: map_mr_sg fills the staged list, REG_MR makes it the
	 * active one (under mk.lock), so mapping the next registration
	 * never rewrites the list the data path reads.  Entries are kernel
	 * virtual addresses (we register with virtual DMA).
	 */
	u64 *fr_list[2];
	u32 fr_active;			/* index of the active list */
	u32 fr_max;			/* capacity of each list */
	u32 fr_staged_n;		/* entries map_mr_sg staged */
	u32 fr_n;			/* entries of the active list */
	u32 fr_shift;			/* log2 of the active block size */
	u32 fr_fbo;			/* iova mod block size */

	struct rcu_head rcu;
};

static inline struct softrnic_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct softrnic_mr, ibmr);
}

/* -------------------------------------------------------------------- */
/* Memory windows (mw.c)                                                */
/* -------------------------------------------------------------------- */

/*
 * The data path part of an MW.  ib_core allocates and frees struct ib_mw
 * itself, without an RCU grace period, so what lookups touch lives here
 * and is freed with kfree_rcu.
 */
struct softrnic_win {
	struct softrnic_mkey mk;	/* iova/length: the window */
	u8 type;			/* IB_MW_TYPE_1 / IB_MW_TYPE_2 */
	bool zero_based;
	u32 qpn;			/* type 2: the QP it is bound to */
	/*
	 * Type 2, bound: that QP, and our node on its mws list (under its
	 * mw_lock).  The QP unbinds every window on the list before it is
	 * freed, so qp is valid whenever it is set (under mk.lock).
	 */
	struct softrnic_qp *qp;
	struct list_head qp_node;
	struct softrnic_mr *mr;		/* bound MR (counted in mr->num_mw) */
	struct rcu_head rcu;
};

struct softrnic_mw {
	struct ib_mw ibmw;
	struct softrnic_win *win;
};

static inline struct softrnic_mw *to_smw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct softrnic_mw, ibmw);
}

/* -------------------------------------------------------------------- */
/* Address handles (ah.c)                                               */
/* -------------------------------------------------------------------- */

/*
 * What a UD send needs to build headers: an immutable snapshot of the AH
 * attributes.  modify_ah publishes a new one under the same ah_num.
 */
struct softrnic_av {
	struct kref ref;
	struct softrnic_pd *pd;
	/* Our own reference; the source GID, its netdev and VLAN. */
	const struct ib_gid_attr *sgid_attr;
	union ib_gid sgid;
	union ib_gid dgid;
	u32 flow_label;
	u8 sgid_index;
	u8 hop_limit;
	u8 traffic_class;
	u8 sl;
	u8 static_rate;
	u8 ah_flags;
	u32 port_num;
	u8 dmac[ETH_ALEN];
	enum rdma_network_type net_type;	/* RDMA_NETWORK_IPV4/IPV6 */
	struct rcu_head rcu;
};

struct softrnic_ah {
	struct ib_ah ibah;
	u32 ah_num;			/* index in sdev->ahs, never 0 */
};

static inline struct softrnic_ah *to_sah(struct ib_ah *ibah)
{
	return container_of(ibah, struct softrnic_ah, ibah);
}

/* -------------------------------------------------------------------- */
/* Data path API                                                        */
/* -------------------------------------------------------------------- */

/*
 * Lookups fail with an ERR_PTR whose errno says why, so the responder can
 * pick the right NAK (IB) or terminate code (iWARP, RFC 5040 7.4.1):
 *
 *   -ENOENT  bad key: no such index, wrong key byte, wrong object kind,
 *            object not VALID (free, invalidated, being destroyed), MW
 *            not bound.                       iWARP: invalid STag
 *   -EPERM   protection domain mismatch, or a type 2 MW bound to another
 *            QP.                              iWARP: STag not associated
 *   -EACCES  access rights missing.           iWARP: access violation
 *   -ERANGE  outside the region's bounds.     iWARP: base or bounds
 *   -EINVAL  malformed request (e.g. misaligned atomic, bad rights mask).
 *
 * On IB all but -EINVAL become IB_WC_LOC_PROT_ERR locally and a Remote
 * Access Error NAK remotely; see softrnic_mem_wc_status().
 */
static inline enum ib_wc_status softrnic_mem_wc_status(int err, bool remote)
{
	if (err == -EINVAL)
		return remote ? IB_WC_REM_INV_REQ_ERR : IB_WC_LOC_QP_OP_ERR;
	return remote ? IB_WC_REM_ACCESS_ERR : IB_WC_LOC_PROT_ERR;
}

/*
 * Resolve @key for an access of @length bytes at @iova by a QP of @pd,
 * and return a referenced MR (release with softrnic_mr_put() as soon as
 * the copy is done).  Called with BH or IRQs off (see inflight above).
 *
 * @access:  0 or IB_ACCESS_LOCAL_WRITE for a local access (lkey in an
 *           SGE); one or more IB_ACCESS_REMOTE_* for a remote access.
 * @remote:  @key is an rkey from the wire.  MRs and type 1 MWs resolve;
 *           a type 2 MW is bound to a QP, which this function does not
 *           know: it fails with -EPERM.  Responders use
 *           softrnic_rkey_get(), which resolves every kind of rkey.
 *
 * The iova returned by a window lookup is the same @iova (type 1 MWs are
 * never zero-based), so the caller copies at @iova.  Zero-length
 * transfers the spec exempts from key checks should not call this.
 * Any context; does not sleep.
 */
struct softrnic_mr *softrnic_mr_get(struct softrnic_dev *sdev, u32 key,
				    struct softrnic_pd *pd, int access,
				    u64 iova, u64 length, bool remote);

/*
 * The responder's lookup: resolve @rkey for a remote access (@access is
 * IB_ACCESS_REMOTE_*) arriving on @qp (its PD and qp_num are used).
 * Resolves MRs, type 1 MWs and type 2 MWs bound to @qp.  *@iova is
 * translated into the returned MR's address space (zero-based windows),
 * copy there.  Any context; does not sleep.
 */
struct softrnic_mr *softrnic_rkey_get(const struct ib_qp *qp, u32 rkey,
				      int access, u64 *iova, u64 length);

void softrnic_mr_put(struct softrnic_mr *mr);

enum softrnic_copy_dir {
	SOFTRNIC_COPY_TO_MR,		/* buf -> MR (needs a writable MR) */
	SOFTRNIC_COPY_FROM_MR,		/* MR -> buf */
};

/*
 * What a walk calls on each kernel-mapped chunk of memory, in order: the
 * per-chunk hook of the one copy (skb_copy_bits() straight into the MR,
 * a copy that folds a CRC in, ...).  Non-zero ends the walk.
 */
typedef int (*softrnic_chunk_fn)(void *kaddr, size_t len, void *ctx);

/*
 * Walk [iova, iova + len) of a referenced MR as kernel-mapped chunks
 * (never crossing a page), calling @fn on each.  @write says whether @fn
 * will write.  Returns 0, @fn's first non-zero return, or -ERANGE/-EACCES.
 */
int softrnic_mr_walk(struct softrnic_mr *mr, u64 iova, u64 len, bool write,
		     softrnic_chunk_fn fn, void *ctx);

/*
 * Walk the byte range [@offset, @offset + @len) of the message an SGE list
 * (lkeys of @pd) describes, as softrnic_mr_walk() does for one MR: looks
 * up, checks (LOCAL_WRITE if @write) and releases each MR in turn.
 * -ERANGE if the SGEs are shorter than @offset + @len, else as
 * softrnic_mr_get() and softrnic_mr_walk().
 */
int softrnic_sges_walk(struct softrnic_dev *sdev, struct softrnic_pd *pd,
		       const struct softrnic_sge *sge, u32 num_sge,
		       u64 offset, u64 len, bool write, softrnic_chunk_fn fn,
		       void *ctx);

/* Copy between a kernel buffer and a referenced MR.  Returns 0 or -errno. */
int softrnic_mr_copy(struct softrnic_mr *mr, u64 iova, void *buf, u64 len,
		     enum softrnic_copy_dir dir);

/*
 * Copy @len bytes between @buf and the byte range starting @offset bytes
 * into the message described by an SGE list (lkeys of @pd): looks up,
 * checks, copies and releases each MR in turn.  -ERANGE if the SGEs are
 * shorter than @offset + @len.
 */
int softrnic_copy_sges(struct softrnic_dev *sdev, struct softrnic_pd *pd,
		       const struct softrnic_sge *sge, u32 num_sge,
		       u64 offset, void *buf, u64 len,
		       enum softrnic_copy_dir dir);

/*
 * Receive placement (place.c): the one copy of received payload, bytes
 * [@off, @off + @len) of @skb straight into memory.
 */
int softrnic_skb_to_mr(struct softrnic_mr *mr, u64 iova,
		       const struct sk_buff *skb, u32 off, u32 len);
/* Into the message an SGE list of @qp's PD describes, at byte @msg_off. */
int softrnic_skb_to_sges(struct softrnic_qp *qp, const struct sk_buff *skb,
			 u32 off, u32 len, const struct softrnic_sge *sge,
			 u32 num_sge, u64 msg_off);

enum softrnic_atomic_op {
	SOFTRNIC_ATOMIC_CMP_SWP,	/* *p == compare_add ? *p = swap */
	SOFTRNIC_ATOMIC_FETCH_ADD,	/* *p += compare_add */
	SOFTRNIC_ATOMIC_WRITE,		/* *p = swap (IB_WR_ATOMIC_WRITE) */
};

/*
 * 8-byte atomic on a referenced MR (looked up with REMOTE_ATOMIC, or
 * REMOTE_WRITE for ATOMIC_WRITE); *@orig receives the old value.  -EINVAL
 * if @iova (or the memory behind it) is not 8-byte aligned, -ERANGE if
 * out of bounds.  Atomic with respect to every CPU, so also to other
 * responders and to the process itself.
 */
int softrnic_mr_atomic64(struct softrnic_mr *mr, u64 iova,
			 enum softrnic_atomic_op op, u64 compare_add,
			 u64 swap, u64 *orig);

/*
 * IB_WR_REG_MR on @ibmr (allocated by alloc_mr, mapped by map_mr_sg) for
 * a QP of @pd: the key byte of @key becomes the MR's (its index must be
 * the MR's), @access its rights, the staged page list its translation.
 * The MR must be FREE.  Returns 0 or -EINVAL/-EPERM.
 */
int softrnic_mr_fast_reg(struct softrnic_pd *pd, struct ib_mr *ibmr, u32 key,
			 int access);

/*
 * LOCAL_INV / SEND_WITH_INV of @key by a QP of @pd: a fast-reg MR or a
 * type 2 MW goes VALID -> FREE.  A fast-reg MR that is already FREE stays
 * FREE and succeeds, as on rxe, siw and ConnectX: ULPs invalidate MRs a
 * peer may already have invalidated remotely.  A type 2 MW must be bound
 * (VALID).  Fails with -ENOENT (bad key), -EPERM (PD), -EINVAL (not
 * invalidatable: user/DMA MR, type 1 MW, MWs still bound to the MR,
 * unbound MW).  Does not check which QP a type 2 MW is
 * bound to; use softrnic_mem_invalidate() when the QP is known.
 */
int softrnic_mr_local_inv(struct softrnic_pd *pd, u32 key);

/* As above, by @qp: a type 2 MW must be bound to @qp (IBTA type 2B). */
int softrnic_mem_invalidate(const struct ib_qp *qp, u32 key);

/*
 * Execute a BIND_MW send WQE (already copied out of the ring) on @qp:
 * bind.mw_rkey names the window, bind.new_rkey's key byte becomes its
 * new key byte (its index must be the window's), bind.mr_lkey the MR,
 * bind.addr/length/access the window.  A type 1 window with length 0 is
 * unbound.  Returns IB_WC_SUCCESS or IB_WC_MW_BIND_ERR.
 */
enum ib_wc_status softrnic_mw_bind(struct softrnic_qp *qp,
				   const struct softrnic_sqe *wqe);

/*
 * The queues layer calls this when @qp is destroyed (before its number
 * can be reused and its memory freed): the type 2 MWs bound to it, kept
 * on its own list, go back to FREE, so a later QP with the same number
 * cannot use them.  Costs one step per window of @qp, none per window of
 * any other QP.  Process context.
 */
void softrnic_mw_qp_destroyed(struct softrnic_qp *qp);

/*
 * UD sends: the address vector of user or kernel AH @ah_num, which must
 * belong to @pd.  ERR_PTR(-ENOENT) or ERR_PTR(-EPERM).  Any context.
 */
struct softrnic_av *softrnic_ah_get(struct softrnic_dev *sdev, u32 ah_num,
				    struct softrnic_pd *pd);
void softrnic_ah_put(struct softrnic_av *av);

/* -------------------------------------------------------------------- */
/* Internal to the memory files                                         */
/* -------------------------------------------------------------------- */

/* keys.c */
int softrnic_mkey_add(struct softrnic_dev *sdev, struct softrnic_mkey *mk,
		      u8 kind);
void softrnic_mkey_remove(struct softrnic_dev *sdev, struct softrnic_mkey *mk);
void softrnic_mkey_drain(struct softrnic_mkey *mk);
void softrnic_mkey_rearm(struct softrnic_mkey *mk);
struct softrnic_mkey *softrnic_mkey_get(struct softrnic_dev *sdev, u32 key);

static inline void softrnic_mkey_put(struct softrnic_mkey *mk)
{
	if (refcount_dec_and_test(&mk->ref))
		complete(&mk->drained);
}

/*
 * A data path access of referenced @mr starts; call before checking it.
 * The full barrier orders the count before the check's loads, against
 * softrnic_mr_wait_accesses(): either the invalidation sees the access
 * or the access sees the key invalid.  BH or IRQs off until the put, so
 * an invalidation spinning in softirq never waits for its own CPU.
 */
static inline void softrnic_mr_access_begin(struct softrnic_mr *mr)
{
	atomic_inc(&mr->inflight);
	smp_mb__after_atomic();
}

/* mr.c */
struct ib_mr *softrnic_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *softrnic_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				   u64 iova, int access,
				   struct ib_udata *udata);
struct ib_mr *softrnic_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				     u64 length, u64 iova, int access,
				     struct ib_pd *ibpd,
				     struct ib_udata *udata);
int softrnic_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *softrnic_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
				u32 max_num_sg);
int softrnic_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg,
		       int sg_nents, unsigned int *sg_offset);
int softrnic_mr_check(struct softrnic_mr *mr, u32 key, struct softrnic_pd *pd,
		      int access, u64 iova, u64 length);
int softrnic_mr_invalidate(struct softrnic_mr *mr, u32 key,
			   struct softrnic_pd *pd);
int softrnic_mkey_inv_check(const struct softrnic_mkey *mk, u32 key,
			    const struct softrnic_pd *pd);
void softrnic_mr_wait_accesses(struct softrnic_mr *mr);

/* mw.c */
int softrnic_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int softrnic_dealloc_mw(struct ib_mw *ibmw);
struct softrnic_mr *softrnic_win_resolve(struct softrnic_win *win, u32 key,
					 struct softrnic_pd *pd, u32 qpn,
					 int access, u64 *iova, u64 length);
int softrnic_win_invalidate(struct softrnic_dev *sdev, struct softrnic_win *win,
			    u32 key, struct softrnic_pd *pd, u32 qpn);

/* ah.c */
int softrnic_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		       struct ib_udata *udata);
int softrnic_modify_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int softrnic_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int softrnic_destroy_ah(struct ib_ah *ibah, u32 flags);

/* No QP: the qpn argument of the internal helpers. */
#define SOFTRNIC_NO_QPN U32_MAX

#endif /* SOFTRNIC_MEM_H */
