/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The iWARP data path: RDMAP messages as DDP segments in MPA FPDUs on a
 * connected TCP socket (RFC 5040/5041/5044, RFC 7306 when negotiated).
 * Included by iwarp.h; the CM (iwarp_cm.c) calls the functions below.
 */
#ifndef SOFTRNIC_IWARP_DP_H
#define SOFTRNIC_IWARP_DP_H

#include <linux/bvec.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <net/sock.h>

struct iwarp_qp;

/*
 * RFC 7306 (atomics, immediate data) is offered in the MPA Request and
 * accepted in the Reply (iwarp_cm.c); a connection has it when both ends
 * agreed (mpa_conn.rdmap_ext).
 */
#define IWARP_DP_RDMAP_EXT	true

/*
 * Outstanding RDMA READ of ours (the ORQ, at most conn.ord).  The READ
 * response is placed by its offset into the WQE's own SGE list: the sink
 * STag (the first SGE's lkey) and sink TO (its address) we put on the
 * wire are only echoed by the responder and checked against what we sent,
 * never looked up, so a READ may have any number of local SGEs and one
 * READ request covers them all.
 */
struct iwarp_orq_ent {
	u32 index;			/* SQ index of the READ WQE */
	bool rtr;			/* our zero-length RTR READ: no WQE */
	bool atomic;			/* an RFC 7306 atomic: sge[] gets the
					 * original value, 8 bytes */
	bool inv;			/* READ_WITH_INV: sge[0]'s MR is
					 * invalidated once it completed */
	u32 req_id;			/* atomic: its request identifier */
	u32 sink_stag;
	u64 sink_to;
	u32 len;
	u32 placed;			/* bytes of the response placed */
	u32 num_sge;
	struct softrnic_sge sge[SOFTRNIC_MAX_SGE];
};

/*
 * An inbound READ or atomic request being answered (the IRQ, at most
 * conn.ird), in the order they came.  An atomic executes when it reaches
 * the head (after the READs before it took their data) and is answered
 * by one Atomic Response; src_stag/src_to are then its target.
 */
struct iwarp_irq_ent {
	u32 sink_stag;
	u64 sink_to;
	u32 src_stag;
	u64 src_to;
	u32 len;
	u32 sent;			/* response bytes built so far */
	bool atomic;
	u8 aop;				/* enum iw_atomic_op */
	u32 req_id;
	u64 add_swap;
	u64 compare;
};

/* The SQ message going out (one at a time); under tx_mutex. */
struct iwarp_tx_msg {
	bool active;
	bool started;			/* its first FPDU was built */
	bool is_read;			/* completes on its READ or atomic
					 * response */
	bool imm_pending;		/* the Immediate Data message (RFC
					 * 7306) is still to be built */
	bool imm_first;			/* SEND_WITH_IMM: it goes before the
					 * SEND; WRITE_WITH_IMM: after */
	u32 index;			/* SQ index */
	u32 len;			/* payload bytes */
	u32 off;			/* bytes built into FPDUs */
	struct iw_pkt pkt;		/* headers; TO/MO advance by off */
	struct iw_pkt imm_pkt;		/* the Immediate Data message */
	struct softrnic_swqe *wqe;	/* copy of the WQE (payload source) */
	struct iwarp_zc *zc;		/* zero-copy: completes on its ubuf */
};

/* What to do once the FPDU in txbuf is wholly handed to TCP. */
enum iwarp_tx_done {
	IWARP_TXD_NONE,
	IWARP_TXD_MSG_LAST,		/* complete the SQ message */
	IWARP_TXD_TERM,			/* TERMINATE sent: connection lost */
};

/* dp->flags */
enum {
	IWARP_DP_STOP,			/* detaching: no new work, no send */
	IWARP_DP_LOST,			/* iwarp_cm_conn_lost() was called */
	IWARP_DP_RX_DEAD,		/* stream error: discard what comes */
	IWARP_DP_TERM_SENT,		/* nothing goes out after TERMINATE */
};

/*
 * Zero-copy transmit (iwarp_zc.c): SEND and WRITE payloads from this
 * size on, from pages TCP may hold (sendpage_ok), up to this many page
 * pieces per FPDU (a 64 KiB ULPDU spans 17 pages; more SGEs than that in
 * one FPDU and it is copied).
 */
#define IWARP_ZC_MIN_LEN	(16 * 1024)
#define IWARP_ZC_FRAGS		20

struct iwarp_zc;
struct iwarp_zc_owner;
struct iwarp_zc_owner *iwarp_zc_owner_new(struct softrnic_qp *qp, gfp_t gfp);
/* The QP leaves the connection: no ubuf of its completes a WQE any more. */
void iwarp_zc_owner_detach(struct iwarp_zc_owner *o);
/* The zero-copy state of the SQ message at @index of @len bytes. */
struct iwarp_zc *iwarp_zc_new(struct iwarp_zc_owner *o, u32 index, u32 len,
			      gfp_t gfp);
/*
 * All of the message was handed to TCP (or, @failed, it was completed
 * with an error): the WQE completes once TCP let go of its pages.
 */
void iwarp_zc_sent(struct iwarp_zc *zc, bool failed);
/* Hand TCP @len bytes of @bv (from @skip on) by reference. */
int iwarp_zc_sendmsg(struct socket *sock, struct iwarp_zc *zc,
		     const struct bio_vec *bv, u32 nr, u32 len, u32 skip);

#define IWARP_TERM_FPDU_MAX	(MPA_LEN_FIELD + IW_MAX_HDR_LEN + 3 + \
				 IW_CRC32C_LEN)

struct iwarp_dp {
	/* the socket while attached, NULL otherwise */
	struct socket *sock;
	struct mpa_conn conn;
	bool initiator;

	unsigned long flags;		/* IWARP_DP_* bits */
	int lost_err;
	struct work_struct rx_work;
	struct work_struct tx_work;
	/* The socket callbacks of the CM, restored by detach. */
	void (*saved_data_ready)(struct sock *sk);
	void (*saved_write_space)(struct sock *sk);
	void (*saved_state_change)(struct sock *sk);
	void *saved_user_data;

	/*
	 * lock (a leaf, irqsave): ORQ, IRQ, TERMINATE to send, rtr_wait,
	 * sq_stalled.
	 * The ORQ is filled by sq_xmit and emptied by the receive work, the
	 * IRQ the other way round.
	 */
	spinlock_t lock;
	struct iwarp_orq_ent *orq;
	u32 orq_size, orq_head, orq_count;
	struct iwarp_irq_ent *irq;
	u32 irq_size, irq_head, irq_count;
	bool term_pending;
	u32 term_len;
	u8 term_fpdu[IWARP_TERM_FPDU_MAX];
	bool rtr_wait;			/* responder: RTR not received yet */
	/*
	 * sq_xmit said -EAGAIN (a message still going out, ORD, fence): who
	 * ends that kicks the QP.  Otherwise the SQ loop that called sq_xmit
	 * goes on by itself, and a kick would only cost a kworker round.
	 */
	bool sq_stalled;

	/*
	 * tx_mutex: every send on the socket, the FPDU in txbuf and the SQ
	 * message (sq_xmit, the tx work).  Never held across a wait for
	 * socket space (MSG_DONTWAIT; sk_write_space requeues the work).
	 */
	struct mutex tx_mutex;
	u8 *txbuf;			/* one FPDU, up to a 64 KiB ULPDU */
	u32 tx_len, tx_sent;
	u32 tx_fpdu_len;		/* the whole FPDU's, for the counters */
	u8 tx_done;			/* enum iwarp_tx_done of txbuf */
	/*
	 * A zero-copy FPDU is txbuf's length field and headers, then the
	 * payload as references to the MR's pages (tx_bv, with a page
	 * reference of ours each until TCP took it), then pad and CRC.
	 */
	struct bio_vec tx_bv[IWARP_ZC_FRAGS];
	u32 tx_bv_nr, tx_bv_len, tx_bv_sent;
	u8 tx_tail[3 + IW_CRC32C_LEN];
	u8 tx_tail_len, tx_tail_sent;
	struct iwarp_zc_owner *zc_owner;	/* while attached */
	bool tx_rtr;			/* initiator: RTR still to send */
	bool tx_rresp_turn;		/* alternate READ responses and SQ */
	u32 tx_msn[3];			/* next MSN: QN 0 SEND and immediate
					 * data, QN 1 READ and atomic
					 * requests, QN 3 atomic responses */
	u32 tx_atomic_id;		/* request id of our next atomic */
	struct iwarp_tx_msg msg;

	/* Receive side: only the receive work (and detach after it). */
	struct mpa_rx rx;
	struct iw_pkt rx_pkt;
	bool rx_pkt_ok;			/* rx_pkt parsed and accepted */
	bool rx_rtr;			/* this FPDU is the RTR SEND */
	u32 rx_msn[3];			/* expected MSN: QN 0, QN 1, QN 3 */
	bool have_rqe;
	u32 rcv_len;			/* bytes of the SEND in rqe */
	bool rx_imm_pending;		/* immediate data for the next SEND */
	u32 rx_imm;			/* its 32 bits, network order */
	u32 rx_wr_acc;			/* bytes of the WRITE under way */
	u32 rx_wr_len;			/* bytes of the last whole WRITE: the
					 * byte_len of WRITE_WITH_IMM */
	struct softrnic_krqe rqe;
};

/* qp_init / qp_fini (after iwarp_dp_detach): the data path's memory. */
int iwarp_dp_init(struct iwarp_qp *iwqp);
void iwarp_dp_fini(struct iwarp_qp *iwqp);

/*
 * Take over the connected @sock (the MPA frames exchanged, nothing of the
 * FPDU stream read yet) with what the negotiation gave: install the
 * socket callbacks, start receiving, and (initiator with conn->rtr_send)
 * send the RTR message.  qp->mutex held, QP in RTR or RTS; the CM moves
 * it to RTS right after.  The socket stays the CM's: the data path only
 * uses it until iwarp_dp_detach().
 */
int iwarp_dp_attach(struct iwarp_qp *iwqp, struct socket *sock,
		    const struct mpa_conn *conn, bool initiator);
/*
 * Stop using the socket: restore its callbacks, wait for the data path's
 * work on it to end, forget the WQEs in flight (the core flushes or
 * discards them) and, with @flush, complete a receive WQE taken for a
 * half-received message with IB_WC_WR_FLUSH_ERR.  Sleeps; qp->mutex
 * held.  Nothing is sent any more; a no-op when not attached.
 */
void iwarp_dp_detach(struct iwarp_qp *iwqp, bool flush);

/* The wire's sq_xmit hook (struct softrnic_wire). */
int iwarp_sq_xmit(struct softrnic_qp *qp, const struct softrnic_swqe *wqe);

/*
 * A failed memory lookup (mem.h errnos) as TERMINATE codes: RDMAP remote
 * protection for an RDMA READ source (RFC 5040 7.4.1), DDP tagged buffer
 * for placement (RFC 5041 7.2; access rights, which DDP has no code for,
 * as RDMAP remote protection).
 */
static inline void iwarp_mem_term(int err, bool placement, u8 *layer,
				  u8 *etype, u8 *ecode)
{
	if (placement && err != -EACCES && err != -EINVAL) {
		*layer = IW_LAYER_DDP;
		*etype = IW_DDP_ET_TAGGED;
		*ecode = err == -ENOENT ? IW_DDP_EC_T_INVALID_STAG :
			 err == -EPERM ? IW_DDP_EC_T_STAG_STREAM :
			 IW_DDP_EC_T_BASE_BOUNDS;
		return;
	}
	*layer = IW_LAYER_RDMAP;
	*etype = IW_RDMAP_ET_PROTECTION;
	*ecode = err == -ENOENT ? IW_RDMAP_EC_INVALID_STAG :
		 err == -ERANGE ? IW_RDMAP_EC_BASE_BOUNDS :
		 err == -EACCES ? IW_RDMAP_EC_ACCESS :
		 err == -EPERM ? IW_RDMAP_EC_STAG_STREAM :
		 IW_RDMAP_EC_UNSPECIFIED;
}

/* Counters of the iWARP wire (iwarp_stats.c), all per QP too. */
enum iwarp_cnt {
	IWARP_CNT_TX_FPDUS,
	IWARP_CNT_TX_BYTES,		/* FPDU bytes handed to TCP */
	IWARP_CNT_TX_ZCOPY_FPDUS,	/* of them, payload by reference */
	IWARP_CNT_RX_FPDUS,
	IWARP_CNT_RX_BYTES,		/* ULPDU bytes of good FPDUs */
	IWARP_CNT_RX_CRC_ERRORS,
	IWARP_CNT_RX_BAD_SEGMENTS,	/* refused headers or placement */
	IWARP_CNT_TERM_SENT,
	IWARP_CNT_TERM_RCVD,
	IWARP_CNT_READ_RESPONSES,	/* READ requests answered */
	IWARP_CNT_ATOMICS,		/* atomic requests executed */
	IWARP_CNT_CONN_LOST,
	/* connection management (iwarp_cm.c), the device's only */
	IWARP_CNT_MPA_BAD_FRAMES,	/* malformed, late or cut-off frames */
	IWARP_CNT_MPA_REFUSED,		/* Requests refused, Replies with R */
	IWARP_CNT_NR,
};
#define IWARP_QP_STATS		(BIT_ULL(IWARP_CNT_CONN_LOST + 1) - 1)
extern const struct rdma_stat_desc iwarp_stat_descs[IWARP_CNT_NR];

/* Internal to the data path (iwarp_dp.c, iwarp_tx.c, iwarp_rx.c). */
void iwarp_tx_work(struct work_struct *work);
bool iwarp_sq_unstall(struct iwarp_dp *dp);
void iwarp_rx_work(struct work_struct *work);
void iwarp_rx_data_ready(struct iwarp_qp *iwqp, struct sock *sk);
void iwarp_tx_push(struct iwarp_qp *iwqp);
void iwarp_tx_zc_release(struct iwarp_dp *dp);
void iwarp_tx_schedule(struct iwarp_qp *iwqp);
/* Queue a TERMINATE (sent at the next FPDU boundary, then conn lost). */
void iwarp_dp_terminate(struct iwarp_qp *iwqp, const struct iw_term *t);
/* The connection ended (TERMINATE sent or received, EOF, error). */
void iwarp_dp_lost(struct iwarp_qp *iwqp, int err);

#endif /* SOFTRNIC_IWARP_DP_H */
