// SPDX-License-Identifier: GPL-2.0
/*
 * iw_cm's view of an iwarp device.  iw_cm calls its driver's ops without
 * checking for them, and /dev/infiniband/rdma_cm is open to every user:
 * a device that registers as an RNIC without them is a NULL call away
 * from any local user (rping -s on its address).  Until the iWARP wire
 * (MPA over TCP) exists, listening and connecting are refused with
 * EOPNOTSUPP; the QP lookup and references are the real ones, so the
 * connect path fails at the connect, not before it.
 */
#include <rdma/iw_cm.h>

#include "softrnic.h"
#include "queue.h"
#include "iwarp.h"

void softrnic_iw_add_ref(struct ib_qp *ibqp)
{
	refcount_inc(&to_sqp(ibqp)->ref);
}

void softrnic_iw_rem_ref(struct ib_qp *ibqp)
{
	softrnic_qp_put(to_sqp(ibqp));
}

/* iw_cm holds ib_core's reference on the QP's uobject while it asks. */
struct ib_qp *softrnic_iw_get_qp(struct ib_device *ibdev, int qpn)
{
	struct softrnic_qp *qp;

	if (qpn < 0)
		return NULL;
	qp = softrnic_qp_get(to_sdev(ibdev), qpn);
	if (!qp)
		return NULL;
	/* the caller takes its own reference with iw_add_ref */
	softrnic_qp_put(qp);
	return &qp->ibqp;
}

int softrnic_iw_connect(struct iw_cm_id *cm_id,
			       struct iw_cm_conn_param *param)
{
	return -EOPNOTSUPP;
}

int softrnic_iw_accept(struct iw_cm_id *cm_id,
			      struct iw_cm_conn_param *param)
{
	return -EOPNOTSUPP;
}

int softrnic_iw_reject(struct iw_cm_id *cm_id, const void *pdata,
			      u8 pdata_len)
{
	return -EOPNOTSUPP;
}

int softrnic_iw_create_listen(struct iw_cm_id *cm_id, int backlog)
{
	return -EOPNOTSUPP;
}

int softrnic_iw_destroy_listen(struct iw_cm_id *cm_id)
{
	return 0;
}
