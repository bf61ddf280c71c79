// SPDX-License-Identifier: GPL-2.0
/*
 * Zero-copy transmit: the payload of a large SEND or WRITE goes to TCP as
 * references to the MR's pages (MSG_ZEROCOPY with a ubuf_info of ours),
 * not as a copy.  The WQE completes when TCP lets go of the last page:
 * once every skb that carried them was freed, i.e. the peer ACKed the
 * bytes and no clone is left in a qdisc or a driver.  Completing when
 * the bytes were merely handed over (as for copied FPDUs) would let the
 * application rewrite a buffer that TCP may still retransmit, under a
 * CRC computed over the old bytes.  Where the stack delivers the skb to a
 * local socket (veth, loopback) it copies such frags first
 * (skb_orphan_frags_rx), so the receiver never reads the sender's pages
 * after the completion.
 *
 * The ubuf's callback runs in any context, possibly long after the QP
 * left the connection (an orphaned socket retransmitting).  It must not
 * keep the QP alive, so it reaches it through an owner object that
 * detach cuts loose: the callback completes the WQE only while the owner
 * still points at the QP, under its lock; after detach the core has
 * flushed or discarded the WQE.  The owner pins the module until its
 * last ubuf is gone, since the callback is module code.
 */
#include <linux/module.h>
#include <linux/skbuff.h>
#include <linux/slab.h>

#include "iwarp.h"

struct iwarp_zc_owner {
	spinlock_t lock;
	refcount_t ref;			/* the data path's 1 + one per ubuf */
	struct softrnic_qp *qp;		/* NULL once detached; under lock */
};

struct iwarp_zc {
	struct ubuf_info ubuf;		/* refcnt: ours 1 + TCP's */
	struct iwarp_zc_owner *owner;
	u32 index;			/* SQ index of the WQE */
	u32 len;			/* its byte_len */
	bool failed;			/* completed with an error already */
};

struct iwarp_zc_owner *iwarp_zc_owner_new(struct softrnic_qp *qp, gfp_t gfp)
{
	struct iwarp_zc_owner *o = kmalloc(sizeof(*o), gfp);

	if (!o)
		return NULL;
	spin_lock_init(&o->lock);
	refcount_set(&o->ref, 1);
	o->qp = qp;
	__module_get(THIS_MODULE);
	return o;
}

static void iwarp_zc_owner_put(struct iwarp_zc_owner *o)
{
	if (!refcount_dec_and_test(&o->ref))
		return;
	kfree(o);
	module_put(THIS_MODULE);
}

void iwarp_zc_owner_detach(struct iwarp_zc_owner *o)
{
	unsigned long flags;

	if (!o)
		return;
	spin_lock_irqsave(&o->lock, flags);
	o->qp = NULL;
	spin_unlock_irqrestore(&o->lock, flags);
	iwarp_zc_owner_put(o);
}

static void iwarp_zc_callback(struct sk_buff *skb, struct ubuf_info *uarg,
			      bool zerocopy_success)
{
	struct iwarp_zc *zc = container_of(uarg, struct iwarp_zc, ubuf);
	struct iwarp_zc_owner *o = zc->owner;
	unsigned long flags;

	if (!refcount_dec_and_test(&uarg->refcnt))
		return;
	spin_lock_irqsave(&o->lock, flags);
	if (o->qp && !zc->failed)
		softrnic_sq_complete(o->qp, zc->index, IB_WC_SUCCESS, zc->len);
	spin_unlock_irqrestore(&o->lock, flags);
	kfree(zc);
	iwarp_zc_owner_put(o);
}

struct iwarp_zc *iwarp_zc_new(struct iwarp_zc_owner *o, u32 index, u32 len,
			      gfp_t gfp)
{
	struct iwarp_zc *zc = kmalloc(sizeof(*zc), gfp);

	if (!zc)
		return NULL;
	zc->ubuf.callback = iwarp_zc_callback;
	refcount_set(&zc->ubuf.refcnt, 1);
	/*
	 * As MSG_ZEROCOPY's and io_uring's: no copy on the way out (a copy
	 * of a clone TCP still holds would rewrite the frags it shares with
	 * the original, and TCP's accounting of "pure" zero-copy skbs with
	 * them), only before a local socket receives it.
	 */
	zc->ubuf.flags = SKBFL_ZEROCOPY_FRAG | SKBFL_DONT_ORPHAN;
	zc->owner = o;
	refcount_inc(&o->ref);
	zc->index = index;
	zc->len = len;
	zc->failed = false;
	return zc;
}

void iwarp_zc_sent(struct iwarp_zc *zc, bool failed)
{
	zc->failed = failed;
	net_zcopy_put(&zc->ubuf);
}

int iwarp_zc_sendmsg(struct socket *sock, struct iwarp_zc *zc,
		     const struct bio_vec *bv, u32 nr, u32 len, u32 skip)
{
	struct msghdr mh = {
		.msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL | MSG_MORE |
			     MSG_ZEROCOPY,
		.msg_ubuf = &zc->ubuf,
	};

	iov_iter_bvec(&mh.msg_iter, WRITE, bv, nr, len);
	iov_iter_advance(&mh.msg_iter, skip);
	return sock_sendmsg(sock, &mh);
}
