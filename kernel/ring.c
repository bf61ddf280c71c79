// SPDX-License-Identifier: GPL-2.0
/*
 * Shared rings: allocation, geometry and the control words.  The layout
 * and the ordering contract are in uapi/softrnic-abi.h and
 * Documentation/ring-abi.md; the index math in proto/ring.h.
 *
 * Every ring is vmalloc memory, zeroed, so a fresh ring is empty
 * (prod == cons == 0) with no flags.  A user ring is charged to the
 * process that asks for it (softrnic_gfp()) and is additionally inserted
 * as an rdma_user_mmap_entry, which then owns the memory: the pages stay
 * alive as long as any process mapping does, and the kernel may drop its
 * side at any time.  Kernel consumers use the same allocation, unmapped.
 */
#include <linux/vmalloc.h>

#include "queue.h"

int softrnic_ring_alloc(struct softrnic_ring *ring, u32 num_slots,
			u32 slot_size, struct ib_udata *udata)
{
	size_t bytes;
	int err;

	if (WARN_ON(!sr_is_pow2(num_slots) || !slot_size ||
		    slot_size % SOFTRNIC_SLOT_ALIGN))
		return -EINVAL;

	memset(ring, 0, sizeof(*ring));
	bytes = PAGE_ALIGN(sr_ring_bytes(num_slots, slot_size));
	ring->buf = __vmalloc(bytes, softrnic_gfp(udata) | __GFP_ZERO);
	if (!ring->buf)
		return -ENOMEM;
	ring->ctrl = ring->buf;
	ring->bytes = bytes;
	ring->num_slots = num_slots;
	ring->slot_size = slot_size;

	if (udata) {
		err = softrnic_mmap_entry_insert(udata, ring->buf, bytes,
						 &ring->mentry);
		if (err) {
			vfree(ring->buf);
			memset(ring, 0, sizeof(*ring));
			return err;
		}
	}
	return 0;
}

/* Idempotent; a zeroed ring (never allocated) is fine too. */
void softrnic_ring_free(struct softrnic_ring *ring)
{
	if (ring->mentry)
		softrnic_mmap_entry_remove(ring->mentry);
	else
		vfree(ring->buf);
	memset(ring, 0, sizeof(*ring));
}

void softrnic_ring_info(const struct softrnic_ring *ring,
			struct softrnic_ring_info *info)
{
	memset(info, 0, sizeof(*info));
	if (!ring->num_slots)
		return;
	info->mmap_offset = ring->mentry ?
		softrnic_mmap_entry_offset(ring->mentry) : 0;
	info->mmap_size = ring->bytes;
	info->num_slots = ring->num_slots;
	info->slot_size = ring->slot_size;
}

/*
 * kflags is written only by the kernel, but by more than one context
 * (e.g. the SQ worker and an error path); keep each update atomic.  It
 * lives in memory the process maps writable, so no update may retry on
 * what the process can change: one atomic OR or AND-NOT each, never a
 * compare-and-exchange loop (a process storing to the word in a loop
 * would keep one failing, with interrupts off in some callers).  Fully
 * ordered: callers rely on it as the fence of the doorbell protocol.
 */
void softrnic_ring_kflags(struct softrnic_ring *ring, u32 set, u32 clear)
{
	atomic_t *kflags;

	if (!ring->num_slots)
		return;
	BUILD_BUG_ON(sizeof(atomic_t) != sizeof(ring->ctrl->kflags));
	kflags = (atomic_t *)&ring->ctrl->kflags;
	smp_mb__before_atomic();
	if (set)
		atomic_or(set, kflags);
	if (clear)
		atomic_andnot(clear, kflags);
	smp_mb__after_atomic();
}
