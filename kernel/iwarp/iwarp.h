/* SPDX-License-Identifier: GPL-2.0 */
/* The iWARP wire of softrnic: what its files share. */
#ifndef SOFTRNIC_IWARP_H
#define SOFTRNIC_IWARP_H

#include <rdma/ib_verbs.h>

/* The wire (MPA, FPDU stream, DDP/RDMAP headers) is pure code in kernel/proto. */
#include "iwarp_mpa.h"
#include "iwarp_mpa_rx.h"
#include "iwarp_parse.h"
#include "iwarp_atomic.h"

struct iw_cm_id;
struct iw_cm_conn_param;
struct softrnic_qp;

/* iwarp_qp_state.c: the QP state rules of iWARP verbs */
bool softrnic_iwarp_qp_transition_ok(const struct softrnic_qp *qp,
				     enum ib_qp_state cur,
				     enum ib_qp_state next, int mask);

/* iwarp_cm.c: the iw_cm ops (connection management refused for now) */
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

#endif /* SOFTRNIC_IWARP_H */
