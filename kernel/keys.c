// SPDX-License-Identifier: GPL-2.0
/*
 * The key table: one xarray per device maps key index -> struct
 * softrnic_mkey for every MR and MW (mem_access.c turns keys into
 * referenced MRs for the data path).
 *
 * Publication: an object is fully initialised, then stored in its slot
 * (xa_store is a release; xa_load an RCU dereference).  Removal: the slot
 * is erased, the owner's reference dropped, and the remover sleeps on a
 * completion until the last data path user has dropped its reference.
 * The memory itself is freed with kfree_rcu, because a lookup may have
 * loaded the pointer just before the erase and is about to try
 * refcount_inc_not_zero() on it.
 *
 * Re-registration keeps the slot: the owner drains the object the same
 * way, rewrites it, and re-arms the count (softrnic_mkey_rearm).  A
 * lookup that loaded the pointer earlier can then take a reference on
 * the rewritten object, which is why every check against the key byte,
 * state and bounds happens after the reference is taken.
 */
#include <linux/random.h>

#include "mem.h"
#include "limits.h"

/* Context-independent: called from process and softirq context. */
#define SOFTRNIC_XA_FLAGS (XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ)

void softrnic_mem_init(struct softrnic_dev *sdev)
{
	xa_init_flags(&sdev->mkeys, SOFTRNIC_XA_FLAGS);
	sdev->mkey_next = SR_MKEY_INDEX_MIN;
	atomic_set(&sdev->num_mr, 0);
	atomic_set(&sdev->num_mw, 0);
	xa_init_flags(&sdev->ahs, SOFTRNIC_XA_FLAGS);
	sdev->ah_next = 1;
}

/*
 * ib_core destroys every MR, MW and AH (user ones via uverbs cleanup,
 * kernel ones by their ULPs' remove callbacks) before it lets a device
 * go, so both tables must be empty here.
 */
void softrnic_mem_fini(struct softrnic_dev *sdev)
{
	WARN_ON(!xa_empty(&sdev->mkeys));
	WARN_ON(!xa_empty(&sdev->ahs));
	xa_destroy(&sdev->mkeys);
	xa_destroy(&sdev->ahs);
}

/*
 * Give @mk a slot and a key, then publish it.  The caller has initialised
 * everything a lookup reads (state, rights, bounds, PD, lock) and, for
 * its own use afterwards, reads the key from mk->key.  Process context.
 */
int softrnic_mkey_add(struct softrnic_dev *sdev, struct softrnic_mkey *mk,
		      u8 kind)
{
	u32 index;
	void *old;
	int err;

	/* Reserve the index first: the key must be set before we publish. */
	err = xa_alloc_cyclic_irq(&sdev->mkeys, &index, NULL,
				  XA_LIMIT(SR_MKEY_INDEX_MIN, SR_MKEY_INDEX_MAX),
				  &sdev->mkey_next, GFP_KERNEL);
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;

	mk->kind = kind;
	mk->key = sr_mkey_make(index, get_random_u8());
	refcount_set(&mk->ref, 1);
	init_completion(&mk->drained);

	old = xa_store_irq(&sdev->mkeys, index, mk, GFP_KERNEL);
	if (xa_is_err(old)) {
		xa_erase_irq(&sdev->mkeys, index);
		return xa_err(old);
	}
	return 0;
}

/* Unpublish @mk: no lookup finds it afterwards.  Process context. */
void softrnic_mkey_remove(struct softrnic_dev *sdev, struct softrnic_mkey *mk)
{
	void *old = xa_erase_irq(&sdev->mkeys, sr_mkey_index(mk->key));

	WARN_ON(old != mk);
}

/*
 * Drop the owner's reference and wait until every data path user has
 * dropped theirs.  Afterwards the caller owns @mk exclusively: either it
 * was unpublished first (destruction) or every lookup fails until
 * softrnic_mkey_rearm() (re-registration).  Sleeps; users only hold
 * references across a copy, so the wait is short and bounded.
 */
void softrnic_mkey_drain(struct softrnic_mkey *mk)
{
	might_sleep();
	softrnic_mkey_put(mk);
	wait_for_completion(&mk->drained);
}

/* Give a drained @mk back its owner's reference, making it findable. */
void softrnic_mkey_rearm(struct softrnic_mkey *mk)
{
	reinit_completion(&mk->drained);
	/* Everything written while drained, before lookups can succeed. */
	smp_wmb();
	refcount_set(&mk->ref, 1);
}

/*
 * Reference the object in @key's slot, if any.  The caller still has to
 * check the key byte, kind and state (under mk->lock).  Any context.
 */
struct softrnic_mkey *softrnic_mkey_get(struct softrnic_dev *sdev, u32 key)
{
	u32 index = sr_mkey_index(key);
	struct softrnic_mkey *mk;

	if (!sr_mkey_index_valid(index))
		return NULL;

	rcu_read_lock();
	mk = xa_load(&sdev->mkeys, index);
	if (mk && !refcount_inc_not_zero(&mk->ref))
		mk = NULL;
	rcu_read_unlock();

	/* Pairs with softrnic_mkey_rearm(): see a re-armed object whole. */
	if (mk)
		smp_rmb();
	return mk;
}

/*
 * The checks every invalidation starts with (IBTA 10.6.7): @key names
 * this very key (index and key byte), the key is not INVALID, and the
 * invalidating QP is of the key's PD.  Called with mk->lock held.
 */
int softrnic_mkey_inv_check(const struct softrnic_mkey *mk, u32 key,
			    const struct softrnic_pd *pd)
{
	if (mk->key != key || mk->state == SOFTRNIC_MKEY_INVALID)
		return -ENOENT;
	if (mk->pd != pd)
		return -EPERM;
	return 0;
}
