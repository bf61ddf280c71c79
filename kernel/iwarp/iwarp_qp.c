// SPDX-License-Identifier: GPL-2.0
/*
 * The iWARP side of a QP's life.  An RC QP is connected by iw_cm
 * (iwarp_cm.c): its data path runs while the QP is bound to a connection,
 * from the accept or the MPA Reply to the moment it leaves RTS.  Leaving
 * RTS closes the connection: to SQD (iw_cm's graceful disconnect) with a
 * FIN, to ERR or RESET (an abortive one, or an error) with a RST.
 */
#include "iwarp.h"

int iwarp_qp_init(struct softrnic_qp *qp)
{
	struct iwarp_qp *iwqp;
	int err;

	if (qp->kind != SR_QP_RC)
		return -EOPNOTSUPP;	/* iWARP has no datagram QPs */
	iwqp = kzalloc(sizeof(*iwqp), softrnic_gfp(qp->user));
	if (!iwqp)
		return -ENOMEM;
	iwqp->qp = qp;
	qp->wire_priv = iwqp;
	err = iwarp_dp_init(iwqp);
	if (err) {
		qp->wire_priv = NULL;
		kfree(iwqp);
	}
	return err;
}

void iwarp_qp_fini(struct softrnic_qp *qp)
{
	struct iwarp_qp *iwqp = iwarp_qp(qp);

	/* iwarp_qp_destroying unbound the connection; nothing refers to it */
	WARN_ON_ONCE(iwqp->cep);
	iwarp_dp_fini(iwqp);
	qp->wire_priv = NULL;
	kfree(iwqp);
}

void iwarp_qp_modify(struct softrnic_qp *qp, int mask, enum ib_qp_state cur)
{
	enum ib_qp_state state = qp->state;

	if (state == IB_QPS_RTS || state == IB_QPS_RTR ||
	    state == IB_QPS_INIT)
		return;
	iwarp_cm_qp_leaving(qp, state != IB_QPS_SQD);
}

/* Before destroy_qp waits: iw_cm lets go of the QP on the CLOSE event. */
void iwarp_qp_destroying(struct softrnic_qp *qp)
{
	mutex_lock(&qp->mutex);
	if (qp->wire_priv)
		iwarp_cm_qp_leaving(qp, true);
	mutex_unlock(&qp->mutex);
}
