/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Queue objects of the verbs core: shared rings, CQs, QPs and SRQs.
 *
 * Ownership: ib_core allocates and frees every object here (INIT_RDMA_OBJ_
 * SIZE) and guarantees that a CQ, SRQ or PD outlives the QPs using it.
 * What we own is what hangs off the objects: ring memory (or, for rings a
 * process mapped, the mmap entry that owns it), the QP's worker and the
 * references the wire layer takes on a QP.  destroy_qp waits for all of
 * those deterministically before it returns.
 *
 * Lock order (outermost first):
 *   qp->mutex -> qp->sq_lock | qp->rq_lock | srq->lock -> cq->lock
 *   qp->sq_post_lock, qp->rq_post_lock, srq->post_lock: leaf locks of the
 *   kernel-consumer producers, never held with any other of ours.
 * Every spinlock is taken irqsave: the wire layer may complete work from
 * softirq context and kernel ULPs post from any context.
 */
#ifndef SOFTRNIC_QUEUE_H
#define SOFTRNIC_QUEUE_H

#include <linux/completion.h>
#include <linux/interrupt.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "softrnic.h"
#include "limits.h"
#include "ring.h"

/* ------------------------------------------------------------------ */
/* Rings (ring.c, mmap.c) */

struct softrnic_mmap_entry;

/*
 * A ring in kernel memory (vmalloc_user).  For a user queue the memory
 * belongs to the mmap entry once it is inserted; softrnic_ring_free()
 * removes the entry and the memory goes with the last reference to it.
 */
struct softrnic_ring {
	void *buf;
	struct softrnic_ring_ctrl *ctrl;
	size_t bytes;			/* mapping size, page aligned */
	u32 num_slots;			/* 0: no ring (QP on an SRQ) */
	u32 slot_size;
	struct softrnic_mmap_entry *mentry;	/* user rings only */
};

int softrnic_ring_alloc(struct softrnic_ring *ring, u32 num_slots,
			u32 slot_size, struct ib_udata *udata);
void softrnic_ring_free(struct softrnic_ring *ring);
void softrnic_ring_info(const struct softrnic_ring *ring,
			struct softrnic_ring_info *info);
void softrnic_ring_kflags(struct softrnic_ring *ring, u32 set, u32 clear);

static inline void *softrnic_ring_slot(const struct softrnic_ring *ring,
				       u32 counter)
{
	return ring->buf + sr_slot_offset(counter, ring->num_slots,
					  ring->slot_size);
}

/*
 * The ordering contract of softrnic-abi.h.  The peer's counters are read
 * once each, with ACQUIRE (slots written before the peer's RELEASE store
 * are visible after it), then validated before use.
 */
static inline u32 softrnic_ring_load_prod(const struct softrnic_ring *ring)
{
	/* pairs with the producer's RELEASE store of prod */
	return smp_load_acquire(&ring->ctrl->prod);
}

static inline u32 softrnic_ring_load_cons(const struct softrnic_ring *ring)
{
	/* pairs with the consumer's RELEASE store of cons */
	return smp_load_acquire(&ring->ctrl->cons);
}

/* Our own counters: published with RELEASE after the slots. */
static inline void softrnic_ring_store_prod(struct softrnic_ring *ring, u32 v)
{
	/* slot contents before prod; pairs with the consumer's ACQUIRE */
	smp_store_release(&ring->ctrl->prod, v);
}

static inline void softrnic_ring_store_cons(struct softrnic_ring *ring, u32 v)
{
	/* done with the slots before cons; pairs with the producer's ACQUIRE */
	smp_store_release(&ring->ctrl->cons, v);
}

int softrnic_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void softrnic_mmap_free(struct rdma_user_mmap_entry *entry);
int softrnic_mmap_entry_insert(struct ib_udata *udata, void *buf,
			       size_t bytes,
			       struct softrnic_mmap_entry **entry);
void softrnic_mmap_entry_remove(struct softrnic_mmap_entry *entry);
u64 softrnic_mmap_entry_offset(const struct softrnic_mmap_entry *entry);

/* ------------------------------------------------------------------ */
/* Completion queues (cq.c) */

struct softrnic_cq {
	struct ib_cq ibcq;
	spinlock_t lock;		/* producers, kernel pollers, resize */
	struct softrnic_ring ring;	/* replaced by resize under lock */
	u32 prod;			/* our producer counter */
	u32 cqn;
	bool user;
	bool error;			/* overflow or corrupted cons: sticky */
	/* Handlers run from here, never under a lock of ours (cq.c). */
	struct tasklet_struct notify;
	atomic_t comp_pending;		/* comp_handler calls owed */
	unsigned long ev_pending;	/* bit 0: IB_EVENT_CQ_ERR owed */
};

static inline struct softrnic_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct softrnic_cq, ibcq);
}

int softrnic_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		       struct ib_udata *udata);
int softrnic_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int softrnic_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int softrnic_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int softrnic_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);

/*
 * Produce one CQE.  Any context; takes cq->lock.  Signals the completion
 * channel if the CQE satisfies the arm request.  Returns -ENOSPC (and
 * puts the CQ into the error state, IB_EVENT_CQ_ERR) on overflow, -EIO if
 * the CQ already is in the error state; a CQE is never overwritten.
 */
int softrnic_cq_post(struct softrnic_cq *cq, const struct softrnic_cqe *cqe,
		     bool solicited);
/* Drop the CQEs of a destroyed kernel QP from a kernel CQ. */
void softrnic_cq_purge_qp(struct softrnic_cq *cq, u32 qpn, bool keep_recv);

/* ------------------------------------------------------------------ */
/* Shared receive queues (srq.c) */

struct softrnic_srq {
	struct ib_srq ibsrq;
	struct softrnic_ring ring;
	u32 srqn;
	u32 max_sge;
	bool user;

	spinlock_t lock;		/* consumer: cons, limit, error */
	u32 cons;
	u32 limit;			/* armed limit; 0 = not armed */
	bool error;
	/* The event handler runs from here, never under our locks (srq.c). */
	struct tasklet_struct notify;
	unsigned long ev_pending;	/* SOFTRNIC_SRQ_EV_* bits */
#define SOFTRNIC_SRQ_EV_ERR	0
#define SOFTRNIC_SRQ_EV_LIMIT	1

	spinlock_t post_lock;		/* kernel producers */
	u32 prod;
};

static inline struct softrnic_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct softrnic_srq, ibsrq);
}

/* A receive WQE copied out of an RQ or SRQ ring and validated. */
struct softrnic_krqe {
	struct softrnic_rqe rqe;
	struct softrnic_sge sge[SOFTRNIC_MAX_SGE];
};

/* Bytes the SGEs of a validated receive WQE hold. */
static inline u64 softrnic_krqe_bytes(const struct softrnic_krqe *k)
{
	u64 n = 0;
	u32 i;

	for (i = 0; i < k->rqe.num_sge; i++)
		n += k->sge[i].length;
	return n;
}

int softrnic_create_srq(struct ib_srq *ibsrq,
			struct ib_srq_init_attr *init_attr,
			struct ib_udata *udata);
int softrnic_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			enum ib_srq_attr_mask mask, struct ib_udata *udata);
int softrnic_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int softrnic_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int softrnic_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			   const struct ib_recv_wr **bad_wr);

/* ------------------------------------------------------------------ */
/* Queue pairs (qp.c, qp_state.c, post.c, sq_worker.c, flush.c, rq.c) */

/* What the core keeps of each SQ WQE between fetch and completion. */
struct softrnic_sq_shadow {
	u64 wr_id;
	u32 byte_len;
	u8 opcode;			/* enum softrnic_wqe_opcode */
	u8 flags;			/* SOFTRNIC_WQE_F_* */
	u8 status;			/* enum ib_wc_status, once done */
	u8 done;
};

/*
 * A send WQE copied out of the SQ ring and validated: the header, then
 * num_sge SGEs or inline_len bytes.  Built by the SQ worker only.
 */
struct softrnic_swqe {
	struct softrnic_sqe sqe;
	u32 index;			/* SQ counter of this WQE */
	union {
		struct softrnic_sge sge[SOFTRNIC_MAX_SGE];
		u8 inline_data[SOFTRNIC_MAX_INLINE];
	};
};

/*
 * Kernel rings only: an IB_WR_RDMA_READ_WITH_INV, posted as a READ with
 * this flag (on wires with read_with_inv): its one sink SGE's MR is
 * invalidated when the READ completes.  Never in a user ring's WQE
 * (sr_sqe_check rejects unknown flags there).
 */
#define SOFTRNIC_WQE_F_KREAD_INV	(1U << 7)

/*
 * Kernel rings only: IB_WR_REG_MR carries the MR itself in the WQE, which
 * a process can never see (sr_sqe_check rejects REG_MR from user rings).
 */
struct softrnic_sqe_kreg {
	struct ib_mr *mr;
	u32 key;
	u32 access;
};

/* Attributes kept for query_qp and for the wire. */
struct softrnic_qp_attrs {
	struct rdma_ah_attr ah_attr;	/* holds a ref on its sgid_attr */
	enum ib_mtu path_mtu;
	u32 qkey;
	u32 rq_psn;
	u32 sq_psn;
	u32 dest_qp_num;
	int qp_access_flags;
	enum ib_mig_state path_mig_state;
	u16 pkey_index;
	u8 port_num;
	u8 en_sqd_async_notify;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	u8 min_rnr_timer;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
};

/* qp->flags bits. */
enum {
	SOFTRNIC_QP_ERR_PENDING,	/* move to ERR in the worker */
	SOFTRNIC_QP_FATAL_PENDING,	/* ... and raise IB_EVENT_QP_FATAL */
	SOFTRNIC_QP_EV_FATAL,		/* events to raise, without locks */
	SOFTRNIC_QP_EV_SQ_DRAINED,
	SOFTRNIC_QP_EV_REQ_ERR,		/* responder: Invalid Request */
	SOFTRNIC_QP_EV_ACCESS_ERR,	/* responder: Remote Access Error */
	SOFTRNIC_QP_EV_LAST_WQE,	/* on an SRQ, in ERR: none consumed more */
	SOFTRNIC_QP_DYING,		/* destroy_qp has started */
};

struct softrnic_qp {
	struct ib_qp ibqp;
	struct softrnic_dev *sdev;
	enum sr_qp_kind kind;
	bool user;
	bool sig_all;			/* IB_SIGNAL_ALL_WR */

	/*
	 * Lifetime: one reference for the QP's own existence, one per wire
	 * lookup (softrnic_qp_get).  destroy_qp drops the first and waits.
	 */
	refcount_t ref;
	struct completion released;

	/* State machine, attributes, SQ consumption and flushing. */
	struct mutex mutex;
	enum ib_qp_state state;		/* WRITE_ONCE under mutex */
	unsigned long flags;		/* SOFTRNIC_QP_* bits, atomic */
	struct softrnic_qp_attrs attr;
	struct work_struct work;	/* SQ consumer, flush, events */

	/* Send queue. */
	struct softrnic_ring sq;
	struct sr_sq_limits sq_lim;
	spinlock_t sq_post_lock;	/* kernel producers */
	u32 sq_prod;			/* kernel QPs: producer counter */
	/* Fetch side, under mutex (sq_next also written under sq_lock). */
	u32 sq_next;			/* next WQE to fetch */
	u32 sq_prod_seen;		/* prod as last read: never goes back */
	bool sq_pending;		/* *sq_wqe holds WQE sq_next */
	bool sq_fence_wait;		/* stalled on a fenced local WQE */
	struct softrnic_swqe *sq_wqe;
	/* Completion side. */
	spinlock_t sq_lock;
	u32 sq_cons;			/* oldest WQE not yet completed */
	bool sqd_notify;		/* raise SQ_DRAINED when empty */
	struct softrnic_sq_shadow *sq_shadow;

	/* Receive queue (num_slots == 0 when on an SRQ). */
	struct softrnic_ring rq;
	u32 rq_max_sge;
	spinlock_t rq_post_lock;	/* kernel producers */
	u32 rq_prod;			/* kernel QPs: producer counter */
	spinlock_t rq_lock;		/* consumer: wire receive path, flush */
	u32 rq_cons;

	/*
	 * Type 2 MWs bound to this QP (struct softrnic_win.qp_node), for
	 * destroy_qp.  mw_lock is a leaf lock, taken inside a window's lock.
	 */
	spinlock_t mw_lock;
	struct list_head mws;

	/*
	 * Counts of a QP bound to a counter group (counters.c): cnt has
	 * wire->nstats entries, from the first bind until the QP is freed;
	 * the data path adds to it while cnt_on.  The rest is under
	 * sdev->cnt_lock.
	 */
	bool cnt_on;
	bool cnt_dead;			/* destroyed: no more binds */
	atomic64_t *cnt;
	struct softrnic_cgroup *cgroup;
	struct list_head cnt_node;	/* on cgroup->qps */

	/* The wire's transport state (qp_init .. qp_fini). */
	void *wire_priv;
};

static inline struct softrnic_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct softrnic_qp, ibqp);
}

/*
 * Count @n of event @c in @qp's counter group only, for an event the
 * caller counted for the device already (softrnic_count()), or did not.
 * The acquire pairs with the bind's release: cnt is set up by then.
 */
static inline void softrnic_qp_stat(struct softrnic_qp *qp, unsigned int c,
				    u64 n)
{
	if (unlikely(smp_load_acquire(&qp->cnt_on)))
		atomic64_add(n, &qp->cnt[c]);
}

/*
 * An event of @qp: the device's counter, then, while bound, the QP's.
 * In that order, so that a reader who sees the QP's count also sees the
 * device's (counters.c subtracts one from the other).
 */
static inline void softrnic_qp_count(struct softrnic_qp *qp, unsigned int c,
				     u64 n)
{
	softrnic_count(qp->sdev, c, n);
	softrnic_qp_stat(qp, c, n);
}

static inline struct softrnic_cq *softrnic_qp_scq(struct softrnic_qp *qp)
{
	return to_scq(qp->ibqp.send_cq);
}

static inline struct softrnic_cq *softrnic_qp_rcq(struct softrnic_qp *qp)
{
	return to_scq(qp->ibqp.recv_cq);
}

static inline enum ib_qp_state softrnic_qp_state(const struct softrnic_qp *qp)
{
	return READ_ONCE(qp->state);
}

/*
 * The workqueue running @sdev's QP work items: the device's own,
 * unbound, WQ_MEM_RECLAIM (storage ULPs send through it), made by
 * softrnic_queues_init().
 */
static inline struct workqueue_struct *
softrnic_queue_wq(struct softrnic_dev *sdev)
{
	return sdev->wq;
}

/* counters.c */
void softrnic_counters_qp_destroyed(struct softrnic_qp *qp);

/* qp.c */
int softrnic_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		       struct ib_udata *udata);
int softrnic_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int softrnic_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		      int mask, struct ib_qp_init_attr *init);
struct softrnic_qp *softrnic_qp_get(struct softrnic_dev *sdev, u32 qpn);
void softrnic_qp_put(struct softrnic_qp *qp);

/* qp_state.c */
int softrnic_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		       int mask, struct ib_udata *udata);
void softrnic_qp_to_error(struct softrnic_qp *qp);
void softrnic_qp_raise_events(struct softrnic_qp *qp);
/* The QP's work item: pending errors, then flush (ERR) or SQ (RTS). */
void softrnic_qp_work(struct work_struct *work);
void softrnic_qp_run_unlock(struct softrnic_qp *qp);

/* post.c: verbs post_send / post_recv, kernel rings and doorbells */
int softrnic_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		       const struct ib_send_wr **bad_wr);
int softrnic_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);
int softrnic_rqe_from_wr(const struct ib_recv_wr *wr, u32 max_sge, void *slot);

/* sq_worker.c */
void softrnic_qp_kick(struct softrnic_qp *qp);
bool softrnic_sq_drain(struct softrnic_qp *qp);
/*
 * Completion of SQ WQE @index (the wire, or the core for local WQEs);
 * any context.  CQEs are produced in SQ order.  A status other than
 * IB_WC_SUCCESS also moves the QP to the error state.  Completions of
 * WQEs that were flushed meanwhile are ignored.
 */
void softrnic_sq_complete(struct softrnic_qp *qp, u32 index,
			  enum ib_wc_status status, u32 byte_len);
/* Produce the CQEs of the completed prefix of the SQ; sq_lock held. */
void softrnic_sq_retire(struct softrnic_qp *qp);
/*
 * Asynchronous errors: to ERR from the worker (with QP_FATAL if fatal).
 * softrnic_qp_error_mark() records the error without kicking the worker
 * yet; a path that posts an error CQE marks first, so that a consumer
 * who polls that CQE and queries the QP already finds it in ERR
 * (softrnic_qp_error_pending()).  Any context.
 */
void softrnic_qp_error(struct softrnic_qp *qp, bool fatal);
void softrnic_qp_error_mark(struct softrnic_qp *qp, bool fatal);
bool softrnic_qp_error_pending(const struct softrnic_qp *qp);

/* flush.c (qp->mutex held) */
void softrnic_qp_flush(struct softrnic_qp *qp);
void softrnic_qp_discard(struct softrnic_qp *qp);

/* rq.c */
int softrnic_rq_get(struct softrnic_qp *qp, struct softrnic_krqe *out);
void softrnic_rq_complete(struct softrnic_qp *qp,
			  const struct softrnic_krqe *rqe,
			  enum ib_wc_status status, u8 opcode, u32 byte_len,
			  u16 wc_flags, u32 ex, bool solicited);
/*
 * Take the next receive WQE of an SRQ (for the wire's receive path; any
 * context).  0: *out holds it; -ENOENT: none posted (RNR); -EIO: the SRQ
 * is in the error state (a corrupt ring puts it there, IB_EVENT_SRQ_ERR).
 * Raises IB_EVENT_SRQ_LIMIT_REACHED when the armed limit is crossed.
 */
int softrnic_srq_get(struct softrnic_srq *srq, struct softrnic_krqe *out);
int softrnic_krqe_copy(const struct softrnic_ring *ring, u32 counter,
		       u32 max_sge, struct softrnic_krqe *out);

/* queue_ops.c */

#endif /* SOFTRNIC_QUEUE_H */
