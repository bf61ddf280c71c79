// SPDX-License-Identifier: GPL-2.0
/*
 * QP state rules of the iWARP wire.  iw_cm drives the QP with IB_QP_STATE
 * (plus access flags) only, so the IB table of required attributes does
 * not apply; the states and their order do.
 */
#include "softrnic.h"
#include "iwarp.h"

bool softrnic_iwarp_qp_transition_ok(const struct softrnic_qp *qp,
				     enum ib_qp_state cur,
				     enum ib_qp_state next, int mask)
{
	if (next == IB_QPS_RESET || next == IB_QPS_ERR)
		return true;
	switch (cur) {
	case IB_QPS_RESET:
		return next == IB_QPS_INIT;
	case IB_QPS_INIT:
		return next == IB_QPS_INIT || next == IB_QPS_RTR ||
		       next == IB_QPS_RTS;
	case IB_QPS_RTR:
		return next == IB_QPS_RTR || next == IB_QPS_RTS;
	case IB_QPS_RTS:
		return next == IB_QPS_RTS || next == IB_QPS_SQD ||
		       next == IB_QPS_SQE;
	case IB_QPS_SQD:
		return next == IB_QPS_SQD || next == IB_QPS_RTS;
	case IB_QPS_SQE:
		return next == IB_QPS_RTS;
	default:
		return false;
	}
}
