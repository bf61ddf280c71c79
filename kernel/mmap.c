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

/*
 * Map the ring at @buf into all of @vma, which rdma_user_mmap_entry_get()
 * checked is exactly the ring's size.  Page by page: a ring is charged to
 * its process, so it comes from __vmalloc(), whose areas
 * remap_vmalloc_range() refuses (only vmalloc_user() ones are VM_USERMAP).
 */
static int softrnic_mmap_ring(struct vm_area_struct *vma, void *buf)
{
	unsigned long off, len = vma->vm_end - vma->vm_start;
	int err;

	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
	for (off = 0; off < len; off += PAGE_SIZE) {
		err = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page(buf + off));
		if (err)
			return err;
	}
	return 0;
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
	err = softrnic_mmap_ring(vma, to_smmap(entry)->buf);
	rdma_user_mmap_entry_put(entry);
	return err;
}

void softrnic_mmap_free(struct rdma_user_mmap_entry *entry)
{
	struct softrnic_mmap_entry *sentry = to_smmap(entry);

	vfree(sentry->buf);
	kfree(sentry);
}
