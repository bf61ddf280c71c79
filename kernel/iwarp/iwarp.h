/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The iWARP wire of softrnic: what its files share.
 *
 * A connected RC QP owns one kernel TCP socket.  Two parts use it, one
 * after the other:
 *
 *   iwarp_cm.c  connection management (the iw_cm ops): listening sockets,
 *               connect and accept, the MPA Request/Reply exchange, and
 *               closing.  It owns the socket (struct iwarp_cep) from
 *               socket() to release.
 *   iwarp_dp.h  the data path (FPDUs: DDP/RDMAP over MPA), from the moment
 *               the CM attaches the socket to the QP (iwarp_dp_attach) to
 *               the moment it detaches it (iwarp_dp_detach).
 *
 * Lock order: cep->mutex, then qp->mutex; the data path's own locks are
 * leaves.  The QP side never takes cep->mutex.  The data path never calls iw_cm; it reports the end of the
 * connection with iwarp_cm_conn_lost(), which defers to the CM's work.
 */
#ifndef SOFTRNIC_IWARP_H
#define SOFTRNIC_IWARP_H

#include <rdma/ib_verbs.h>

#include "softrnic.h"
#include "queue.h"

/* The wire (MPA, FPDU stream, DDP/RDMAP headers) is pure code in kernel/proto. */
#include "iwarp_mpa.h"
#include "iwarp_mpa_rx.h"
#include "iwarp_parse.h"
#include "iwarp_atomic.h"

struct iw_cm_id;
struct iw_cm_conn_param;
struct softrnic_qp;
struct softrnic_swqe;
struct iwarp_cep;

#include "iwarp_dp.h"

/* The iWARP side of an RC QP (qp->wire_priv). */
struct iwarp_qp {
	struct softrnic_qp *qp;
	/* The connection the QP is bound to, with a reference; qp->mutex. */
	struct iwarp_cep *cep;
	struct iwarp_dp dp;
};

static inline struct iwarp_qp *iwarp_qp(const struct softrnic_qp *qp)
{
	return qp->wire_priv;
}

/* iwarp_qp_state.c: the QP state rules of iWARP verbs */
bool softrnic_iwarp_qp_transition_ok(const struct softrnic_qp *qp,
				     enum ib_qp_state cur,
				     enum ib_qp_state next, int mask);

/* iwarp_qp.c: the wire's QP hooks */
int iwarp_qp_init(struct softrnic_qp *qp);
void iwarp_qp_fini(struct softrnic_qp *qp);
void iwarp_qp_modify(struct softrnic_qp *qp, int mask, enum ib_qp_state cur);
void iwarp_qp_destroying(struct softrnic_qp *qp);

/* iwarp_cm.c: the iw_cm ops */
int iwarp_cm_init(void);
void iwarp_cm_exit(void);
void iwarp_cm_dev_gone(struct softrnic_dev *sdev);
void softrnic_iw_add_ref(struct ib_qp *ibqp);
void softrnic_iw_rem_ref(struct ib_qp *ibqp);
struct ib_qp *softrnic_iw_get_qp(struct ib_device *ibdev, int qpn);
int softrnic_iw_connect(struct iw_cm_id *cm_id,
			struct iw_cm_conn_param *param);
int softrnic_iw_accept(struct iw_cm_id *cm_id,
		       struct iw_cm_conn_param *param);
int softrnic_iw_reject(struct iw_cm_id *cm_id, const void *pdata,
		       u8 pdata_len);
int softrnic_iw_create_listen(struct iw_cm_id *cm_id, int backlog);
int softrnic_iw_destroy_listen(struct iw_cm_id *cm_id);
/*
 * The QP left RTS (@abort: to ERR, else to SQD or CLOSING): close its
 * connection, gracefully (FIN after what was sent) or not (RST).
 * qp->mutex held.
 */
void iwarp_cm_qp_leaving(struct softrnic_qp *qp, bool abort);
/*
 * The data path lost the connection (peer closed or reset it, a socket
 * error, or a fatal stream error after which it sent TERMINATE): the QP
 * goes to ERR and iw_cm hears of it.  Any context; once per attach.
 */
void iwarp_cm_conn_lost(struct softrnic_qp *qp, int err);

#endif /* SOFTRNIC_IWARP_H */
