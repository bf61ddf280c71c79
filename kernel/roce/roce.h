/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The RoCEv2 RC transport of softrnic: per-device and per-QP state shared
 * by the files of kernel/roce.  Documentation/wire-roce.md describes the
 * state machines; the packet format lives in kernel/proto/roce_*.h.
 *
 *   roce_net.c   taking RoCEv2 packets per network namespace, receive
 *                demux, IP/UDP encapsulation, ICRC, routing
 *   roce_loop.c  packets to a device of this host, around the IP stack
 *   roce_qp.c    QP hooks (create, modify, destroy), sq_xmit, counters
 *   roce_ud.c    UD and GSI QPs: datagrams, Q_Keys, the GRH area
 *   roce_mcast.c UD multicast groups: attach/detach, IP joins, fan-out
 *   roce_req.c   requester: segmentation, retransmission, completions
 *   roce_resp.c  responder: placement, ACK/NAK, READ and atomic responses
 *
 * Lock order (on top of kernel/queue.h's):
 *   qp->mutex -> req.lock | resp.lock -> qp->sq_lock | qp->rq_lock |
 *   srq->lock -> cq->lock
 * req.lock and resp.lock are never held together, and no packet is ever
 * transmitted with either held: the state is advanced under the lock,
 * the skb is built and sent after it is dropped.
 */
#ifndef SOFTRNIC_ROCE_H
#define SOFTRNIC_ROCE_H

#include <linux/in6.h>
#include <linux/seqlock.h>
#include <linux/skbuff.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <net/dst_cache.h>

#include "queue.h"
#include "mem.h"
#include "roce_icrc.h"
#include "roce_parse.h"
#include "roce_psn.h"

/* ------------------------------------------------------------------ */
/*
 * Counters (rdma statistic): indices into the core's per-CPU counters
 * (kernel/counters.c); names and which of them a QP has in roce_stats.c.
 */

enum roce_counter {
	ROCE_CNT_TX_PKTS,
	ROCE_CNT_TX_BYTES,
	ROCE_CNT_RX_PKTS,
	ROCE_CNT_RX_BYTES,
	ROCE_CNT_DROP_ICRC,
	ROCE_CNT_DROP_TRUNCATED,	/* the parse errors, in enum order */
	ROCE_CNT_DROP_TRANSPORT,
	ROCE_CNT_DROP_OPCODE,
	ROCE_CNT_DROP_TVER,
	ROCE_CNT_DROP_PAD,
	ROCE_CNT_DROP_LENGTH,
	ROCE_CNT_DROP_UNKNOWN_QP,
	ROCE_CNT_DROP_BAD_ADDR,		/* not from the QP's peer, wrong type */
	ROCE_CNT_DROP_OUT_OF_WINDOW,	/* PSN outside any window we track */
	ROCE_CNT_DROP_NO_ROUTE,
	ROCE_CNT_DUP_REQUESTS,
	ROCE_CNT_RETRANSMITS,
	ROCE_CNT_TIMEOUTS,
	ROCE_CNT_SEQ_NAKS_SENT,
	ROCE_CNT_SEQ_NAKS_RCVD,
	ROCE_CNT_RNR_NAKS_SENT,
	ROCE_CNT_RNR_NAKS_RCVD,
	ROCE_CNT_NAKS_SENT,		/* access, invalid request, op error */
	ROCE_CNT_NAKS_RCVD,
	ROCE_CNT_ACKS_SENT,
	ROCE_CNT_READ_RESPONSES,
	ROCE_CNT_ATOMICS,
	ROCE_CNT_RX_STEERED,		/* received on another CPU (roce_steer.c) */
	ROCE_CNT_DROP_STEER_FULL,	/* the QP's or the device's queue was full */
	ROCE_CNT_TX_BATCHES,		/* UDP GSO skbs sent (roce_batch_xmit()) */
	ROCE_CNT_TX_LOOPED,		/* to a device of this host (roce_loop.c) */
	ROCE_CNT_DROP_LOOP_FULL,	/* that CPU's loopback queue was full */
	ROCE_CNT_DROP_OUTPUT,		/* netfilter, qdisc or device dropped it */
	ROCE_CNT_UD_SENDS,		/* datagrams sent (UD and GSI QPs) */
	ROCE_CNT_UD_RECVS,		/* datagrams placed */
	ROCE_CNT_DROP_QKEY,		/* UD: Q_Key mismatch */
	ROCE_CNT_DROP_NO_RECV,		/* UD: no receive WQE posted */
	ROCE_CNT_DROP_QP_STATE,		/* UD: QP not ready to receive */
	ROCE_CNT_DROP_PKEY,		/* BTH P_Key not in our table */
	ROCE_CNT_NR,
};

#define ROCE_Q(c) BIT_ULL(ROCE_CNT_##c)
/*
 * Counted per QP too (roce_qp_count()): what one QP sends, receives and
 * drops.  Not these: drops before a QP is known (ICRC, parse, P_Key,
 * QPN), and the device's own machinery (steering, batches, loopback).
 */
#define ROCE_QP_STATS							\
	(ROCE_Q(TX_PKTS) | ROCE_Q(TX_BYTES) | ROCE_Q(RX_PKTS) |		\
	 ROCE_Q(RX_BYTES) | ROCE_Q(DROP_BAD_ADDR) |			\
	 ROCE_Q(DROP_OUT_OF_WINDOW) | ROCE_Q(DROP_NO_ROUTE) |		\
	 ROCE_Q(DUP_REQUESTS) | ROCE_Q(RETRANSMITS) | ROCE_Q(TIMEOUTS) |	\
	 ROCE_Q(SEQ_NAKS_SENT) | ROCE_Q(SEQ_NAKS_RCVD) |			\
	 ROCE_Q(RNR_NAKS_SENT) | ROCE_Q(RNR_NAKS_RCVD) |			\
	 ROCE_Q(NAKS_SENT) | ROCE_Q(NAKS_RCVD) | ROCE_Q(ACKS_SENT) |	\
	 ROCE_Q(READ_RESPONSES) | ROCE_Q(ATOMICS) | ROCE_Q(DROP_OUTPUT) |	\
	 ROCE_Q(UD_SENDS) | ROCE_Q(UD_RECVS) | ROCE_Q(DROP_QKEY) |		\
	 ROCE_Q(DROP_NO_RECV) | ROCE_Q(DROP_QP_STATE))

/* ------------------------------------------------------------------ */
/* Devices and namespaces (roce_net.c) */

struct roce_ns;
struct roce_qp;

struct roce_dev {
	struct softrnic_dev *sdev;
	/* On rns->devs (RCU); rns is NULL once the namespace went away. */
	struct list_head ns_node;
	struct roce_ns *rns;
	atomic_t rx_queued;		/* skbs on the QPs' steering queues */
	/* Multicast groups (roce_mcast.c): RCU list, mc_mutex for writers. */
	struct mutex mc_mutex;
	struct list_head mcgs;
	unsigned int nmcg;
	unsigned int nattach;
};

static inline struct roce_dev *roce_dev(const struct softrnic_dev *sdev)
{
	return sdev->wire_priv;
}

/* A device-wide event, or one no QP owns (a packet for no QP, say). */
static inline void roce_count(struct softrnic_dev *sdev, enum roce_counter c,
			      u64 n)
{
	softrnic_count(sdev, c, n);
}

/* An event of @qp: also counted in its counter group, if bound. */
static inline void roce_qp_count(struct softrnic_qp *qp, enum roce_counter c,
				 u64 n)
{
	softrnic_qp_count(qp, c, n);
}

int roce_net_init(void);
void roce_net_exit(void);
int roce_dev_init(struct softrnic_dev *sdev);
void roce_dev_fini(struct softrnic_dev *sdev);

/* ------------------------------------------------------------------ */
/* Paths: where a QP's packets go, derived from its AV at modify time. */

struct roce_path {
	u32 gen;			/* ++ on every update */
	bool valid;
	bool ipv6;
	int ifindex;			/* the source GID's netdev (VLAN dev) */
	u8 tos;
	u8 ttl;
	__be16 sport;			/* flow entropy, 0xC000..0xFFFF */
	u32 flow_label;
	union {
		struct {
			__be32 saddr4;
			__be32 daddr4;
		};
		struct {
			struct in6_addr saddr6;
			struct in6_addr daddr6;
		};
	};
};

/* Headroom for Ethernet (+VLAN) / IPv6 / UDP in front of the BTH. */
#define ROCE_HEADROOM(ndev) \
	(LL_RESERVED_SPACE(ndev) + sizeof(struct ipv6hdr) + sizeof(struct udphdr))

struct sk_buff *roce_alloc_skb(struct softrnic_qp *qp, const struct roce_pkt *pkt,
			       void **payload);
int roce_xmit(struct softrnic_qp *qp, struct sk_buff *skb);
int roce_xmit_path(struct softrnic_qp *qp, const struct roce_path *path,
		   struct dst_cache *cache, struct roce_qp *rqp,
		   struct sk_buff *skb);
bool roce_path_set(struct roce_path *p, const struct ib_gid_attr *sgid,
		   const union ib_gid *dgid, u8 tclass, u8 hop_limit,
		   u32 flow_label);

/* Packets of one QP on their way out as one UDP GSO skb (roce_net.c). */
struct roce_batch {
	struct sk_buff *skb;		/* NULL: empty */
	u32 seg_len;			/* length of its first packet */
	u32 max_len;			/* UDP payload it may grow to */
	u32 max_segs;
	bool loop_drain;		/* its sender drains the loop queue */
};

void *roce_batch_add(struct softrnic_qp *qp, struct roce_batch *b,
		     const struct roce_pkt *pkt);
void roce_batch_trim(struct roce_batch *b);
void roce_batch_next(struct softrnic_qp *qp, struct roce_batch *b);
void roce_batch_xmit(struct softrnic_qp *qp, struct roce_batch *b);

/* ------------------------------------------------------------------ */
/* Requester (roce_req.c) */

/* Packets in flight (sent, not acknowledged) per QP. */
#define ROCE_WINDOW		256
/*
 * WQEs the requester holds copies of (taken from the SQ, not completed):
 * every one has at least a packet, so twice the window keeps the window
 * full while completions drain, and a max-size SQ does not cost a copy
 * of ~580 bytes per slot.  A power of 2, as roce_rwqe() requires.
 */
#define ROCE_RWQE_MAX		(2 * ROCE_WINDOW)
/* AckReq at least every this many packets of a message. */
#define ROCE_ACK_EVERY		32
/* Packets per run of a transmit work item before it yields. */
#define ROCE_TX_BUDGET		64
/* READ response packets sent straight from the receive softirq. */
#define ROCE_RESP_INLINE	8

/* The requester's copy of one WQE it took from the SQ. */
struct roce_rwqe {
	struct softrnic_swqe wqe;
	u32 len;			/* message length */
	u32 first_psn;
	u32 last_psn;
	u8 op;				/* enum roce_op */
	bool done;			/* completed (by an ACK or a response) */
};

struct roce_req {
	spinlock_t lock;
	bool active;			/* RTS/SQD and not in error */
	bool want_kick;			/* sq_xmit said -EAGAIN */
	u32 want_psns;			/* ... for want of this many PSNs */
	bool tx_busy;			/* a context is in roce_req_tx() */
	bool tx_slot_wait;		/* take waits for tx_cur's slot */
	struct roce_rwqe *tx_cur;	/* WQE copy tx_busy reads unlocked */
	u32 gen;			/* ++ on stop: forget old tx_cur */
	int tx_cpu;			/* transmits from there, or -1 */
	bool rnr_wait;			/* sleeping out an RNR NAK */
	struct roce_rwqe *rwqe;		/* ring of nslots (a power of 2) */
	u32 nslots;
	u32 head;			/* oldest not completed */
	u32 tail;			/* next free */
	u32 tx;				/* WQE being transmitted */
	u32 tx_psn;			/* next PSN to transmit */
	u32 next_psn;			/* first PSN of the next new WQE */
	u32 una_psn;			/* oldest unacknowledged PSN */
	u32 max_sent;			/* one past the highest PSN sent */
	u32 rd_out;			/* READ/atomic WQEs outstanding */
	u32 noack;			/* packets since the last AckReq */
	u32 read_nak_psn;		/* go-back already done for this PSN */
	u8 retry_left;
	u8 rnr_left;
	u32 mtu;
	struct timer_list rto;		/* retransmission timeout */
	unsigned long rto_start;	/* jiffies: rto counts from here */
	struct timer_list rnr;		/* RNR NAK wait */
	struct work_struct work;	/* transmit */
};

/* ------------------------------------------------------------------ */
/* Responder (roce_resp.c) */

enum roce_res_type {
	ROCE_RES_FREE = 0,
	ROCE_RES_READ,
	ROCE_RES_ATOMIC,
	/* Answered by a zero-length READ RESPONSE ONLY (resid 0). */
	ROCE_RES_FLUSH,
	ROCE_RES_ATOMIC_WRITE,
};

/*
 * READ and atomic responses: a ring that keeps the last requests for
 * replay (duplicate READs are re-executed, duplicate atomics, FLUSHes and
 * ATOMIC WRITEs answered from here, never executed again) and orders
 * every response the work item sends.
 */
#define ROCE_NRES		SOFTRNIC_MAX_RD_ATOMIC

struct roce_res {
	u8 type;			/* enum roce_res_type */
	bool pending;			/* responses still to send */
	u32 first_psn;			/* PSN range of the request */
	u32 last_psn;
	/* READ: what is left to send, from cur_psn on. */
	u32 start_psn;			/* first PSN of this (re)execution */
	u32 cur_psn;
	u64 va;
	u32 rkey;
	u32 resid;
	/* Atomic: the original value, for the ACK and its replays. */
	u64 orig;
	u32 msn;
};

struct roce_resp {
	spinlock_t lock;
	bool active;			/* RTR/RTS/SQD and not in error */
	u32 epsn;			/* expected PSN */
	u32 msn;
	bool nak_sent;			/* sequence error NAKed, once */
	u32 noack;			/* packets since the last ACK */
	/* The message being received. */
	u8 cur_op;			/* 0, ROCE_OP_SEND or ROCE_OP_WRITE */
	bool have_rqe;
	struct softrnic_krqe rqe;
	u32 rcv_len;			/* SEND: bytes placed so far */
	u64 wr_va;			/* WRITE: where the next byte goes */
	u32 wr_rkey;
	u32 wr_resid;
	u32 wr_len;
	/* Responses, in order. */
	struct roce_res *res;		/* ring of ROCE_NRES */
	u32 res_head;			/* next slot to allocate */
	u32 res_count;			/* slots in use (<= ROCE_NRES) */
	u32 npending;
	/* An ACK/NAK to send once the responses before it are out. */
	bool ack_deferred;
	u8 deferred_syn;
	u32 deferred_psn;
	bool tx_busy;			/* a context is sending responses */
	int tx_cpu;			/* they leave from there, or -1 */
	struct work_struct work;	/* READ/atomic responses, paced */
};

struct roce_qp {
	struct softrnic_qp *qp;
	bool dying;
	seqlock_t path_lock;
	struct roce_path path;
	/* path's route, per CPU (BH off); reset when path changes. */
	struct dst_cache dst_cache;
	struct roce_req req;
	struct roce_resp resp;
	/* Receive steering (roce_steer.c), under rx_lock. */
	spinlock_t rx_lock;
	struct sk_buff_head rx_queue;	/* its own lock unused */
	bool rx_busy;			/* packets queue, until it drained */
	bool rx_kicked;			/* the work item is woken */
	bool rx_owned;			/* a context is processing the queue */
	int rx_cpu;			/* where it runs */
	u32 rx_run;			/* FIRST/MIDDLE packets in a row */
	u32 rx_next_psn;		/* after the last request queued */
	struct work_struct rx_work;
};

static inline struct roce_qp *roce_qp(const struct softrnic_qp *qp)
{
	return qp->wire_priv;
}

static inline u32 roce_mtu(const struct softrnic_qp *qp)
{
	return ib_mtu_enum_to_int(qp->attr.path_mtu);
}

/* ------------------------------------------------------------------ */
/* UD and GSI QPs (roce_ud.c) */

/*
 * A UD QP's transport state.  Sending is done by the SQ worker, under
 * qp->mutex, which also guards psn, av, path and dst_cache.  Receiving
 * runs in softirq on any CPU; rx_lock orders it against state changes.
 */
struct roce_ud {
	struct softrnic_qp *qp;
	u32 psn;			/* next PSN: unchecked, but counted */
	/* The AV path and dst_cache were made for (held), or NULL. */
	struct softrnic_av *av;
	struct roce_path path;
	struct dst_cache dst_cache;
	spinlock_t rx_lock;
	bool rx_active;			/* RTR, RTS, SQD */
	struct softrnic_krqe rqe;	/* the receive being placed */
};

static inline struct roce_ud *roce_ud(const struct softrnic_qp *qp)
{
	return qp->wire_priv;
}

int roce_ud_init(struct softrnic_qp *qp);
void roce_ud_fini(struct softrnic_qp *qp);
void roce_ud_modify(struct softrnic_qp *qp, enum ib_qp_state cur);
int roce_ud_xmit(struct softrnic_qp *qp, const struct softrnic_swqe *wqe);
void roce_ud_rcv(struct softrnic_dev *sdev, struct softrnic_qp *qp,
		 const struct roce_pkt *pkt, struct sk_buff *skb, u32 bth_off);
bool roce_ud_deliver(struct softrnic_dev *sdev, struct softrnic_qp *qp,
		     const struct roce_pkt *pkt, const struct sk_buff *skb,
		     u32 bth_off);

/* roce_mcast.c */
int roce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int roce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void roce_mcast_init(struct roce_dev *rdev);
void roce_mcast_fini(struct roce_dev *rdev);
bool roce_mcast_rcv(struct softrnic_dev *sdev, const struct roce_pkt *pkt,
		    const struct sk_buff *skb, u32 bth_off);

/* roce_qp.c */
int roce_qp_init(struct softrnic_qp *qp);
void roce_qp_fini(struct softrnic_qp *qp);
void roce_qp_modify(struct softrnic_qp *qp, int mask, enum ib_qp_state cur);
int roce_sq_xmit(struct softrnic_qp *qp, const struct softrnic_swqe *wqe);

/* roce_net.c */
void roce_rcv_steered(struct softrnic_qp *qp, struct sk_buff *skb);
void roce_rcv_ip(struct roce_dev *rdev, struct sk_buff *skb, u32 thoff,
		 bool looped);
struct net_device *roce_addr_dev(struct net *net, const struct sk_buff *skb);
struct roce_dev *roce_dev_of(struct net *net, const struct net_device *ndev);

/*
 * What the receive path knows of a packet beyond its bytes, in skb->cb
 * from roce_rcv_ip() on (nothing below us uses cb then).
 */
struct roce_skb_cb {
	bool looped;	/* from our own transmit (roce_loop.c): no ICRC */
};

static inline struct roce_skb_cb *roce_skb_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct roce_skb_cb) > sizeof(skb->cb));
	return (struct roce_skb_cb *)skb->cb;
}

/* roce_loop.c */
void roce_loop_init(void);
void roce_loop_exit(void);
struct net_device *roce_loop_dev(struct net *net, const struct sk_buff *skb);
void roce_loop_xmit(struct softrnic_qp *qp, struct net_device *ndev,
		    struct sk_buff *skb);
bool roce_loop_drain_begin(bool outer);
void roce_loop_drain(void);

/* roce_steer.c */
void roce_steer_qp_init(struct roce_qp *rqp);
void roce_steer_qp_fini(struct roce_qp *rqp);
void roce_steer_purge(struct roce_qp *rqp);
bool roce_steer(struct roce_qp *rqp, struct sk_buff *skb,
		const struct roce_pkt *pkt);
void roce_steer_work(struct work_struct *work);

/* roce_req.c */
void roce_req_init(struct roce_qp *rqp);
void roce_req_start(struct roce_qp *rqp);
void roce_req_stop(struct roce_qp *rqp);
int roce_req_take(struct roce_qp *rqp, const struct softrnic_swqe *wqe);
void roce_req_tx(struct roce_qp *rqp);
void roce_req_rcv(struct roce_qp *rqp, const struct roce_pkt *pkt,
		  struct sk_buff *skb, u32 bth_off);
void roce_req_work(struct work_struct *work);
void roce_req_kick(struct roce_qp *rqp);

/* roce_resp.c */
void roce_resp_init(struct roce_qp *rqp);
void roce_resp_start(struct roce_qp *rqp);
void roce_resp_stop(struct roce_qp *rqp, bool flush);
void roce_resp_rcv(struct roce_qp *rqp, const struct roce_pkt *pkt,
		   struct sk_buff *skb, u32 bth_off);
void roce_resp_work(struct work_struct *work);
/* Send an ACKNOWLEDGE (ACK or NAK) now; no lock held. */
void roce_send_ack(struct roce_qp *rqp, u8 syndrome, u32 psn, u32 msn);

/* roce_stats.c */
extern const struct rdma_stat_desc roce_stat_descs[ROCE_CNT_NR];

#endif /* SOFTRNIC_ROCE_H */
