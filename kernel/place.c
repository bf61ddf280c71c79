// SPDX-License-Identifier: GPL-2.0
/*
 * Receive placement for every wire: the one copy of received payload,
 * straight from the skb into the pages of the target MR or of the MRs a
 * receive WQE's SGE list names (mem.h).  A wire that has its bytes in a
 * buffer instead of an skb uses softrnic_mr_copy()/softrnic_copy_sges();
 * one that must fold something into the copy walks with its own
 * softrnic_chunk_fn.
 */
#include <linux/skbuff.h>

#include "mem.h"
#include "queue.h"

struct softrnic_skb_pos {
	const struct sk_buff *skb;
	u32 off;
};

static int softrnic_skb_chunk(void *kaddr, size_t len, void *ctx)
{
	struct softrnic_skb_pos *pos = ctx;
	int err;

	err = skb_copy_bits(pos->skb, pos->off, kaddr, len);
	pos->off += len;
	return err;
}

int softrnic_skb_to_mr(struct softrnic_mr *mr, u64 iova,
		       const struct sk_buff *skb, u32 off, u32 len)
{
	struct softrnic_skb_pos pos = { .skb = skb, .off = off };

	return softrnic_mr_walk(mr, iova, len, true, softrnic_skb_chunk, &pos);
}

int softrnic_skb_to_sges(struct softrnic_qp *qp, const struct sk_buff *skb,
			 u32 off, u32 len, const struct softrnic_sge *sge,
			 u32 num_sge, u64 msg_off)
{
	struct softrnic_skb_pos pos = { .skb = skb, .off = off };

	return softrnic_sges_walk(qp->sdev, to_spd(qp->ibqp.pd), sge, num_sge,
				  msg_off, len, true, softrnic_skb_chunk, &pos);
}
