// SPDX-License-Identifier: GPL-2.0
/*
 * Mapping rings into a process: each user ring is one rdma_user_mmap_entry
 * in the ucontext; the process passes its offset to mmap() on the uverbs
 * fd.  The entry owns the ring memory from insertion on and frees it in
 * mmap_free, when ib_core drops the last reference (the ring's owner
 * removed it and no mmap() call is using it).  Pages already mapped into
 * a process are reference counted by the mm and outlive vfree().
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "queue.h"

struct softrnic_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *buf;
};

static struct softrnic_mmap_entry *
to_smmap(struct rdma_user_mmap_entry *entry)
{
	return container_of(entry, struct softrnic_mmap_entry, rdma);
}

int softrnic_mmap_entry_insert(struct ib_udata *udata, void *buf,
			       size_t bytes,
			       struct softrnic_mmap_entry **out)
{
	struct softrnic_ucontext *uctx =
		rdma_udata_to_drv_context(udata, struct softrnic_ucontext,
					  ibuc);
	struct softrnic_mmap_entry *entry;
	int err;

	if (!uctx)
		return -EINVAL;
	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return -ENOMEM;
	entry->buf = buf;
	err = rdma_user_mmap_entry_insert(&uctx->ibuc, &entry->rdma, bytes);
	if (err) {
		kfree(entry);
		return err;
	}
	*out = entry;
	return 0;
}

/* Gives up the owner's reference; the memory goes with the last one. */
void softrnic_mmap_entry_remove(struct softrnic_mmap_entry *entry)
{
	rdma_user_mmap_entry_remove(&entry->rdma);
}

u64 softrnic_mmap_entry_offset(const struct softrnic_mmap_entry *entry)
{
	return rdma_user_mmap_get_offset(&entry->rdma);
}

int softrnic_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *entry;
	int err;

	/* Rings hold data, never code. */
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;

	/* Checks VM_SHARED and that the VMA covers exactly the ring. */
	entry = rdma_user_mmap_entry_get(uctx, vma);
	if (!entry)
		return -EINVAL;
	vma->vm_flags &= ~VM_MAYEXEC;
	err = remap_vmalloc_range(vma, to_smmap(entry)->buf, 0);
	rdma_user_mmap_entry_put(entry);
	return err;
}

void softrnic_mmap_free(struct rdma_user_mmap_entry *entry)
{
	struct softrnic_mmap_entry *sentry = to_smmap(entry);

	vfree(sentry->buf);
	kfree(sentry);
}
