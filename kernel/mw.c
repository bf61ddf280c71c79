// SPDX-License-Identifier: GPL-2.0
/*
 * Memory windows, type 1 and type 2B.  Both are allocated by
 * ibv_alloc_mw and bound by a BIND_MW send WQE (libibverbs turns
 * ibv_bind_mw for type 1 into one, like rxe); type 2 windows are
 * invalidated by LOCAL_INV or SEND_WITH_INV.
 *
 * A bound window counts itself in its MR's num_mw, which keeps the MR
 * from being deregistered, re-registered or invalidated underneath it; it
 * does not hold a reference on the MR (that would make dereg wait for
 * ever).  A type 2 window records the number of the QP it is bound to
 * and sits on that QP's list of windows, so destroying the QP unbinds
 * exactly its own windows (softrnic_mw_qp_destroyed()).
 */
#include <linux/slab.h>

#include "mem.h"
#include "queue.h"
#include "limits.h"

static_assert(SR_MW_TYPE_1 == IB_MW_TYPE_1);
static_assert(SR_MW_TYPE_2 == IB_MW_TYPE_2);

int softrnic_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct softrnic_dev *sdev = to_sdev(ibmw->device);
	struct softrnic_mw *mw = to_smw(ibmw);
	struct softrnic_win *win;
	int err;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	if (atomic_inc_return(&sdev->num_mw) > SOFTRNIC_MAX_MW) {
		err = -ENOMEM;
		goto err_count;
	}
	/* Charged to the process's memory cgroup (kernel MWs: udata NULL). */
	win = kzalloc(sizeof(*win), softrnic_gfp(udata));
	if (!win) {
		err = -ENOMEM;
		goto err_count;
	}
	/* Here, not in keys.c: windows get a lock class of their own. */
	seqlock_init(&win->mk.lock);
	win->type = ibmw->type;
	win->qpn = SOFTRNIC_NO_QPN;
	INIT_LIST_HEAD(&win->qp_node);
	win->mk.pd = to_spd(ibmw->pd);
	/* Type 1 windows are valid (unbound) from birth; type 2 free. */
	win->mk.state = ibmw->type == IB_MW_TYPE_1 ? SOFTRNIC_MKEY_VALID :
						       SOFTRNIC_MKEY_FREE;
	err = softrnic_mkey_add(sdev, &win->mk, SOFTRNIC_MKEY_MW);
	if (err)
		goto err_free;
	mw->win = win;
	ibmw->rkey = win->mk.key;
	return 0;

err_free:
	kfree(win);
err_count:
	atomic_dec(&sdev->num_mw);
	return err;
}

/* Drop @win's binding, if any.  win->mk.lock held, IRQs off. */
static void softrnic_win_unbind_locked(struct softrnic_win *win)
{
	struct softrnic_mr *mr = win->mr;
	struct softrnic_qp *qp = win->qp;

	if (mr) {
		write_seqlock(&mr->mk.lock);
		mr->num_mw--;
		write_sequnlock(&mr->mk.lock);
		win->mr = NULL;
	}
	if (qp) {
		/* destroy_qp may have taken it off already: _init */
		spin_lock(&qp->mw_lock);
		list_del_init(&win->qp_node);
		spin_unlock(&qp->mw_lock);
		win->qp = NULL;
	}
	win->qpn = SOFTRNIC_NO_QPN;
	win->mk.access = 0;
	win->mk.iova = 0;
	win->mk.length = 0;
	win->zero_based = false;
}

int softrnic_dealloc_mw(struct ib_mw *ibmw)
{
	struct softrnic_dev *sdev = to_sdev(ibmw->device);
	struct softrnic_win *win = to_smw(ibmw)->win;

	write_seqlock_irq(&win->mk.lock);
	softrnic_win_unbind_locked(win);
	win->mk.state = SOFTRNIC_MKEY_INVALID;
	write_sequnlock_irq(&win->mk.lock);

	softrnic_mkey_remove(sdev, &win->mk);
	softrnic_mkey_drain(&win->mk);
	atomic_dec(&sdev->num_mw);
	kfree_rcu(win, rcu);
	return 0;
}

enum ib_wc_status softrnic_mw_bind(struct softrnic_qp *qp,
				   const struct softrnic_sqe *wqe)
{
	struct softrnic_dev *sdev = qp->sdev;
	struct softrnic_pd *pd = to_spd(qp->ibqp.pd);
	u32 mw_rkey = wqe->bind.mw_rkey, new_rkey = wqe->bind.new_rkey;
	u32 mr_lkey = wqe->bind.mr_lkey;
	struct sr_bind_req req = {
		.access = wqe->bind.access,
		.addr = wqe->bind.addr,
		.length = wqe->bind.length,
	};
	struct softrnic_mkey *wmk, *mmk = NULL;
	struct softrnic_mr *mr = NULL;
	struct softrnic_win *win;
	enum ib_wc_status status = IB_WC_MW_BIND_ERR;
	unsigned long flags;
	bool ok;

	/* The bind may change the window's key byte only. */
	if (sr_mkey_index(new_rkey) != sr_mkey_index(mw_rkey))
		return IB_WC_MW_BIND_ERR;

	wmk = softrnic_mkey_get(sdev, mw_rkey);
	if (!wmk)
		return IB_WC_MW_BIND_ERR;
	if (wmk->kind != SOFTRNIC_MKEY_MW)
		goto out;
	win = container_of(wmk, struct softrnic_win, mk);
	req.mw_type = win->type;

	if (req.length) {
		mmk = softrnic_mkey_get(sdev, mr_lkey);
		if (!mmk || mmk->kind != SOFTRNIC_MKEY_MR)
			goto out;
		mr = container_of(mmk, struct softrnic_mr, mk);
	}
	req.have_mr = mr;

	write_seqlock_irqsave(&win->mk.lock, flags);
	/* C10-72 (and the same PD rule for type 1): QP, MW, MR share a PD. */
	ok = win->mk.key == mw_rkey && win->mk.pd == pd &&
	     win->mk.state == (win->type == IB_MW_TYPE_1 ?
			       SOFTRNIC_MKEY_VALID : SOFTRNIC_MKEY_FREE);
	if (ok && mr) {
		write_seqlock(&mr->mk.lock);
		req.mr_access = mr->mk.access;
		req.mr_iova = mr->mk.iova;
		req.mr_length = mr->mk.length;
		ok = mr->mk.key == mr_lkey &&
		     mr->mk.state == SOFTRNIC_MKEY_VALID &&
		     mr->mk.pd == pd && sr_mw_bind_check(&req) == SR_BIND_OK;
		if (ok)
			mr->num_mw++;	/* before the old MR's decrement */
		write_sequnlock(&mr->mk.lock);
	} else if (ok) {
		ok = sr_mw_bind_check(&req) == SR_BIND_OK;
	}
	if (ok) {
		softrnic_win_unbind_locked(win);
		win->mr = mr;
		win->mk.key = new_rkey;
		win->mk.access = req.access & SR_ACCESS_REMOTE;
		win->zero_based = req.access & SR_ACCESS_ZERO_BASED;
		win->mk.iova = req.addr;
		win->mk.length = req.length;
		win->mk.state = SOFTRNIC_MKEY_VALID;
		if (win->type == IB_MW_TYPE_2) {
			win->qpn = qp->ibqp.qp_num;
			win->qp = qp;
			spin_lock(&qp->mw_lock);
			list_add_tail(&win->qp_node, &qp->mws);
			spin_unlock(&qp->mw_lock);
		}
		status = IB_WC_SUCCESS;
	}
	write_sequnlock_irqrestore(&win->mk.lock, flags);

out:
	if (mmk)
		softrnic_mkey_put(mmk);
	softrnic_mkey_put(wmk);
	return status;
}

/*
 * Remote access through window @win (referenced by the caller): return
 * the bound MR, referenced, with *@iova translated into its space.
 */
struct softrnic_mr *softrnic_win_resolve(struct softrnic_win *win, u32 key,
					 struct softrnic_pd *pd, u32 qpn,
					 int access, u64 *iova, u64 length)
{
	struct softrnic_pd *wpd;
	struct softrnic_mr *mr;
	u64 base, len, mr_iova;
	bool zero_based;
	unsigned int seq;
	u32 k, have, wqpn;
	u8 state;
	int err;

again:
	/* The bound MR is freed after a grace period; look at it in one. */
	rcu_read_lock();
	do {
		seq = read_seqbegin(&win->mk.lock);
		k = win->mk.key;
		state = win->mk.state;
		wpd = win->mk.pd;
		have = win->mk.access;
		base = win->mk.iova;
		len = win->mk.length;
		zero_based = win->zero_based;
		wqpn = win->qpn;
		mr = win->mr;
	} while (read_seqretry(&win->mk.lock, seq));

	if (k != key || state != SOFTRNIC_MKEY_VALID || !mr)
		err = -ENOENT;
	else if (wpd != pd ||
		 (win->type == IB_MW_TYPE_2 &&
		  (qpn == SOFTRNIC_NO_QPN || wqpn != qpn)))
		err = -EPERM;
	else if (!sr_access_granted(have, access))
		err = -EACCES;
	else if (!sr_mw_range_within(zero_based, base, len, *iova, length))
		err = -ERANGE;
	else if (!refcount_inc_not_zero(&mr->mk.ref))
		err = -ENOENT;
	else
		err = 0;
	rcu_read_unlock();
	if (err)
		return ERR_PTR(err);
	smp_rmb();	/* as in softrnic_mkey_get() */

	/*
	 * An invalidation of the window waits for the MR's accesses, so
	 * count this one, then make sure the window did not change since
	 * the snapshot: if it did, its writer may have missed us.
	 */
	softrnic_mr_access_begin(mr);
	if (read_seqretry(&win->mk.lock, seq)) {
		softrnic_mr_put(mr);
		goto again;
	}

	/*
	 * While the window is bound the MR cannot change, but the window
	 * may have been unbound since the snapshot: check again what we are
	 * about to copy against.
	 */
	mr_iova = sr_mw_to_mr_iova(zero_based, base, *iova);
	err = softrnic_mr_check(mr, 0, NULL, 0, mr_iova, length);
	if (err) {
		softrnic_mr_put(mr);
		return ERR_PTR(err == -ERANGE ? -ERANGE : -ENOENT);
	}
	*iova = mr_iova;
	return mr;
}

/*
 * LOCAL_INV / SEND_WITH_INV of window @win (referenced by the caller):
 * type 2 only (o10-37.2.26), by a QP of its PD and, if @qpn is known, the
 * QP it is bound to.
 */
int softrnic_win_invalidate(struct softrnic_dev *sdev, struct softrnic_win *win,
			    u32 key, struct softrnic_pd *pd, u32 qpn)
{
	struct softrnic_mr *mr = NULL;
	unsigned long flags;
	int err;

	/* the MR, unbound below, may go after a grace period */
	rcu_read_lock();
	write_seqlock_irqsave(&win->mk.lock, flags);
	err = softrnic_mkey_inv_check(&win->mk, key, pd);
	if (!err && (win->type != IB_MW_TYPE_2 ||
		     win->mk.state != SOFTRNIC_MKEY_VALID))
		err = -EINVAL;
	if (!err && qpn != SOFTRNIC_NO_QPN && win->qpn != qpn)
		err = -EPERM;
	if (!err) {
		mr = win->mr;
		softrnic_win_unbind_locked(win);
		win->mk.state = SOFTRNIC_MKEY_FREE;
	}
	write_sequnlock_irqrestore(&win->mk.lock, flags);
	/* accesses through the window count in its MR (win_resolve) */
	if (mr)
		softrnic_mr_wait_accesses(mr);
	rcu_read_unlock();
	return err;
}

/*
 * Take the windows off @qp's list one at a time: each is referenced under
 * mw_lock (its memory is freed only after a grace period, so the node is
 * safe to follow there), then unbound under its own lock, which ranks
 * above mw_lock.  A window that dealloc_mw, an invalidation or another
 * bind unbinds in between no longer names @qp and is left alone.
 */
void softrnic_mw_qp_destroyed(struct softrnic_qp *qp)
{
	struct softrnic_win *win;
	unsigned long flags;
	bool ref;

	might_sleep();
	for (;;) {
		rcu_read_lock();
		spin_lock_irqsave(&qp->mw_lock, flags);
		win = list_first_entry_or_null(&qp->mws, struct softrnic_win,
					       qp_node);
		ref = false;
		if (win) {
			list_del_init(&win->qp_node);
			ref = refcount_inc_not_zero(&win->mk.ref);
		}
		spin_unlock_irqrestore(&qp->mw_lock, flags);
		rcu_read_unlock();
		if (!win)
			return;
		if (!ref)
			continue;	/* being deallocated: that unbinds it */

		write_seqlock_irqsave(&win->mk.lock, flags);
		if (win->qp == qp && win->mk.state == SOFTRNIC_MKEY_VALID) {
			softrnic_win_unbind_locked(win);
			win->mk.state = SOFTRNIC_MKEY_FREE;
		}
		write_sequnlock_irqrestore(&win->mk.lock, flags);
		softrnic_mkey_put(&win->mk);
	}
}
