// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions: user MRs (pinned with ib_umem), the DMA MR ib_core
 * creates for each kernel PD, fast-registration MRs for kernel ULPs, and
 * the copies and atomics the data path performs on them.
 *
 * We register the ib_device with a NULL DMA device, so ib_uses_virt_dma()
 * is true: every "DMA address" a kernel ULP hands us (ib_dma_map_*, the
 * scatterlists given to map_mr_sg) is a kernel virtual address, and the
 * DMA MR translates an address to itself.
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "mem.h"
#include "limits.h"

/* mem_check.h speaks the uverbs numbering; so does ib_core. */
static_assert(SR_ACCESS_LOCAL_WRITE == IB_ACCESS_LOCAL_WRITE);
static_assert(SR_ACCESS_REMOTE_WRITE == IB_ACCESS_REMOTE_WRITE);
static_assert(SR_ACCESS_REMOTE_READ == IB_ACCESS_REMOTE_READ);
static_assert(SR_ACCESS_REMOTE_ATOMIC == IB_ACCESS_REMOTE_ATOMIC);
static_assert(SR_ACCESS_MW_BIND == IB_ACCESS_MW_BIND);
static_assert(SR_ACCESS_ZERO_BASED == IB_ZERO_BASED);
static_assert(SR_ACCESS_ON_DEMAND == IB_ACCESS_ON_DEMAND);
static_assert(SR_ACCESS_RELAXED_ORDERING == IB_ACCESS_RELAXED_ORDERING);
static_assert(SR_ACCESS_HUGETLB == IB_ACCESS_HUGETLB);
static_assert(SR_ACCESS_OPTIONAL_RANGE == IB_ACCESS_OPTIONAL);
static_assert(SR_ACCESS_SUPPORTED == IB_ACCESS_SUPPORTED);

static int softrnic_access_errno(u32 access)
{
	switch (sr_mr_access_check(access)) {
	case SR_MEM_OK:
		return 0;
	case SR_MEM_ODP:
		/* We pin; we never claim IBK_ON_DEMAND_PAGING. */
		return -EOPNOTSUPP;
	default:
		return -EINVAL;
	}
}

/*
 * A new, unpublished MR counted against SOFTRNIC_MAX_MR.  Until
 * softrnic_mr_publish() succeeds nobody else can see it, so an error path
 * undoes what it added and hands it to softrnic_mr_discard().  A user
 * MR is charged to the registering process's memory cgroup, like its
 * page list (softrnic_gfp()).
 */
static struct softrnic_mr *softrnic_mr_new(struct ib_pd *ibpd, u8 type,
					   u8 state, u32 access, u64 iova,
					   u64 length)
{
	struct softrnic_dev *sdev = to_sdev(ibpd->device);
	bool user = type == SOFTRNIC_MR_USER;
	struct softrnic_mr *mr;

	if (atomic_inc_return(&sdev->num_mr) > SOFTRNIC_MAX_MR) {
		atomic_dec(&sdev->num_mr);
		return ERR_PTR(-ENOMEM);
	}
	mr = kzalloc(sizeof(*mr), softrnic_gfp(user));
	if (!mr) {
		atomic_dec(&sdev->num_mr);
		return ERR_PTR(-ENOMEM);
	}
	/* Here, not in keys.c: MRs get a lock class of their own. */
	seqlock_init(&mr->mk.lock);
	mr->mk.state = state;
	mr->mk.access = access;
	mr->mk.iova = iova;
	mr->mk.length = length;
	mr->mk.pd = to_spd(ibpd);
	mr->type = type;
	return mr;
}

static void softrnic_mr_discard(struct softrnic_dev *sdev,
				struct softrnic_mr *mr)
{
	kfree(mr->fr_list[0]);
	kfree(mr->fr_list[1]);
	kfree(mr);
	atomic_dec(&sdev->num_mr);
}

static int softrnic_mr_publish(struct softrnic_dev *sdev,
			       struct softrnic_mr *mr)
{
	int err = softrnic_mkey_add(sdev, &mr->mk, SOFTRNIC_MKEY_MR);

	if (err)
		return err;
	/* One key for both: rights, not key values, gate remote access. */
	mr->ibmr.lkey = mr->mk.key;
	mr->ibmr.rkey = mr->mk.key;
	return 0;
}

/* -------------------------------------------------------------------- */
/* Pinned user memory                                                    */
/* -------------------------------------------------------------------- */

static void softrnic_unpin(struct softrnic_pinned *pin)
{
	kvfree(pin->pages);
	if (pin->umem)
		ib_umem_release(pin->umem);
	memset(pin, 0, sizeof(*pin));
}

/*
 * Pin [start, start + length) and index its pages.  A zero-length MR pins
 * nothing: it only ever matches zero-length accesses, which touch no
 * memory.  ib_umem_get() enforces RLIMIT_MEMLOCK (or CAP_IPC_LOCK) and
 * pins writable memory only if @access needs it.
 */
static int softrnic_pin(struct ib_device *ibdev, u64 start, u64 length,
			u32 access, struct softrnic_pinned *pin)
{
	struct sg_page_iter iter;
	struct ib_umem *umem;
	u64 i = 0;

	memset(pin, 0, sizeof(*pin));
	pin->start = start;
	if (!length)
		return 0;

	umem = ib_umem_get(ibdev, start, length, access);
	if (IS_ERR(umem))
		return PTR_ERR(umem);
	pin->umem = umem;
	pin->npages = ib_umem_num_pages(umem);
	pin->fbo = start & ~PAGE_MASK;
	pin->pages = kvmalloc_array(pin->npages, sizeof(*pin->pages),
				    softrnic_gfp(true));
	if (!pin->pages) {
		softrnic_unpin(pin);
		return -ENOMEM;
	}
	for_each_sgtable_page(&umem->sgt_append.sgt, &iter, 0) {
		if (WARN_ON_ONCE(i >= pin->npages))
			break;
		pin->pages[i++] = sg_page_iter_page(&iter);
	}
	if (WARN_ON_ONCE(i != pin->npages)) {
		softrnic_unpin(pin);
		return -EFAULT;
	}
	return 0;
}

/* -------------------------------------------------------------------- */
/* Verbs                                                                 */
/* -------------------------------------------------------------------- */

struct ib_mr *softrnic_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				   u64 iova, int access,
				   struct ib_udata *udata)
{
	struct softrnic_dev *sdev = to_sdev(ibpd->device);
	struct softrnic_mr *mr;
	int err;

	err = softrnic_access_errno(access);
	if (err)
		return ERR_PTR(err);
	if (sr_mr_region_check(iova, length, SOFTRNIC_MAX_MR_SIZE) != SR_MEM_OK)
		return ERR_PTR(-EINVAL);

	mr = softrnic_mr_new(ibpd, SOFTRNIC_MR_USER, SOFTRNIC_MKEY_VALID, access,
			     iova, length);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	err = softrnic_pin(ibpd->device, start, length, access, &mr->pin);
	if (err)
		goto err_discard;
	err = softrnic_mr_publish(sdev, mr);
	if (err)
		goto err_unpin;
	return &mr->ibmr;

err_unpin:
	softrnic_unpin(&mr->pin);
err_discard:
	softrnic_mr_discard(sdev, mr);
	return ERR_PTR(err);
}

/*
 * ib_core asks for LOCAL_WRITE (no IBK_LOCAL_DMA_LKEY) and, for PDs with
 * IB_PD_UNSAFE_GLOBAL_RKEY, remote read/write.  The MR covers the whole
 * address space; the copy path refuses addresses that are not in the
 * kernel's direct map, so a bad address from a peer fails the access
 * instead of faulting the kernel.
 */
struct ib_mr *softrnic_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct softrnic_dev *sdev = to_sdev(ibpd->device);
	struct softrnic_mr *mr;
	int err;

	err = softrnic_access_errno(access);
	if (err)
		return ERR_PTR(err);
	mr = softrnic_mr_new(ibpd, SOFTRNIC_MR_DMA, SOFTRNIC_MKEY_VALID, access,
			     0, U64_MAX);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	err = softrnic_mr_publish(sdev, mr);
	if (err) {
		softrnic_mr_discard(sdev, mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

struct ib_mr *softrnic_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
				u32 max_num_sg)
{
	struct softrnic_dev *sdev = to_sdev(ibpd->device);
	struct softrnic_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EINVAL);
	if (!max_num_sg || max_num_sg > SOFTRNIC_MAX_FAST_REG_PAGES)
		return ERR_PTR(-EINVAL);

	mr = softrnic_mr_new(ibpd, SOFTRNIC_MR_FAST_REG, SOFTRNIC_MKEY_FREE, 0,
			     0, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->fr_max = max_num_sg;
	mr->fr_list[0] = kcalloc(max_num_sg, sizeof(u64), GFP_KERNEL);
	mr->fr_list[1] = kcalloc(max_num_sg, sizeof(u64), GFP_KERNEL);
	err = -ENOMEM;
	if (mr->fr_list[0] && mr->fr_list[1])
		err = softrnic_mr_publish(sdev, mr);
	if (err) {
		softrnic_mr_discard(sdev, mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

static int softrnic_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct softrnic_mr *mr = to_smr(ibmr);

	if (mr->fr_staged_n >= mr->fr_max)
		return -ENOMEM;
	mr->fr_list[!mr->fr_active][mr->fr_staged_n++] = addr;
	return 0;
}

/*
 * Stage a page list for the next IB_WR_REG_MR.  The ULP maps only an MR
 * that is not registered (freshly allocated or invalidated), so nothing
 * reads the staged list; the active one stays untouched either way.
 */
int softrnic_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg,
		       int sg_nents, unsigned int *sg_offset)
{
	struct softrnic_mr *mr = to_smr(ibmr);

	if (mr->type != SOFTRNIC_MR_FAST_REG)
		return -EINVAL;
	/* Blocks must hold an aligned atomic; ib_core takes any size. */
	if (!is_power_of_2(ibmr->page_size) ||
	    ibmr->page_size < SR_ATOMIC_SIZE)
		return -EINVAL;
	mr->fr_staged_n = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset,
			      softrnic_set_page);
}

/*
 * rereg_mr, done in place: the MR keeps its ib_mr and key index, and every
 * change is applied while no data path user holds it.  New pages are
 * pinned before anything changes, so every failure leaves the old
 * registration intact.
 *
 * The key byte changes with the translation only.  A new translation
 * gives old addresses a new meaning, so a peer's stale rkey must stop
 * matching.  New rights or a new PD are checked on every access anyway,
 * and applications (rdma-core's own tests among them) keep using the
 * keys they exchanged, as rxe and ConnectX allow.
 */
struct ib_mr *softrnic_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				     u64 length, u64 iova, int access,
				     struct ib_pd *ibpd,
				     struct ib_udata *udata)
{
	struct softrnic_mr *mr = to_smr(ibmr);
	struct softrnic_pinned pin = {};
	struct softrnic_pd *new_pd;
	u32 new_access;
	bool repin;
	int err;

	if (mr->type != SOFTRNIC_MR_USER)
		return ERR_PTR(-EINVAL);
	if (!flags || (flags & ~IB_MR_REREG_SUPPORTED))
		return ERR_PTR(-EOPNOTSUPP);

	/* Only rereg writes these, and uverbs serialises it per MR. */
	new_access = flags & IB_MR_REREG_ACCESS ? access : mr->mk.access;
	new_pd = flags & IB_MR_REREG_PD ? to_spd(ibpd) : mr->mk.pd;
	err = softrnic_access_errno(new_access);
	if (err)
		return ERR_PTR(err);

	if (flags & IB_MR_REREG_TRANS) {
		if (sr_mr_region_check(iova, length, SOFTRNIC_MAX_MR_SIZE) !=
		    SR_MEM_OK)
			return ERR_PTR(-EINVAL);
		repin = true;
	} else {
		/*
		 * Pages pinned read-only (FOLL_FORCE, copy-on-write not
		 * broken) must never be written: becoming writable means
		 * pinning again.
		 */
		start = mr->pin.start;
		iova = mr->mk.iova;
		length = mr->mk.length;
		repin = mr->pin.umem && !mr->pin.umem->writable &&
			ib_access_writable(new_access);
	}
	if (repin) {
		err = softrnic_pin(ibmr->device, start, length, new_access,
				   &pin);
		if (err)
			return ERR_PTR(err);
	}

	write_seqlock_irq(&mr->mk.lock);
	if (mr->num_mw) {
		/* Windows are bound to this translation (IBTA 10.6.7.2.6). */
		write_sequnlock_irq(&mr->mk.lock);
		softrnic_unpin(&pin);
		return ERR_PTR(-EBUSY);
	}
	mr->mk.state = SOFTRNIC_MKEY_INVALID;
	write_sequnlock_irq(&mr->mk.lock);

	softrnic_mkey_drain(&mr->mk);

	write_seqlock_irq(&mr->mk.lock);
	if (repin)
		swap(mr->pin, pin);
	mr->mk.iova = iova;
	mr->mk.length = length;
	mr->mk.access = new_access;
	mr->mk.pd = new_pd;
	if (flags & IB_MR_REREG_TRANS) {
		u8 byte = sr_mkey_next_byte(sr_mkey_byte(mr->mk.key));

		mr->mk.key = sr_mkey_with_byte(mr->mk.key, byte);
	}
	mr->mk.state = SOFTRNIC_MKEY_VALID;
	write_sequnlock_irq(&mr->mk.lock);
	ibmr->lkey = mr->mk.key;
	ibmr->rkey = mr->mk.key;
	softrnic_mkey_rearm(&mr->mk);

	softrnic_unpin(&pin);		/* the old pages, if replaced */
	return NULL;			/* ib_core updates pd, iova, length */
}

/*
 * Deregistration of any MR.  Refused while MWs are bound to it (IBTA
 * 10.6.7.2.6; ibv_dereg_mr(3)): uverbs cleanup retries after destroying
 * the windows, so a killed process still frees everything.
 */
int softrnic_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct softrnic_dev *sdev = to_sdev(ibmr->device);
	struct softrnic_mr *mr = to_smr(ibmr);

	write_seqlock_irq(&mr->mk.lock);
	if (mr->num_mw) {
		write_sequnlock_irq(&mr->mk.lock);
		return -EBUSY;
	}
	mr->mk.state = SOFTRNIC_MKEY_INVALID;
	write_sequnlock_irq(&mr->mk.lock);

	softrnic_mkey_remove(sdev, &mr->mk);
	softrnic_mkey_drain(&mr->mk);

	softrnic_unpin(&mr->pin);
	kfree(mr->fr_list[0]);
	kfree(mr->fr_list[1]);
	atomic_dec(&sdev->num_mr);
	kfree_rcu(mr, rcu);
	return 0;
}

/* -------------------------------------------------------------------- */
/* Work requests: IB_WR_REG_MR and invalidation                          */
/* -------------------------------------------------------------------- */

int softrnic_mr_fast_reg(struct softrnic_pd *pd, struct ib_mr *ibmr, u32 key,
			 int access)
{
	struct softrnic_mr *mr = to_smr(ibmr);
	unsigned long flags;
	unsigned int shift;
	u64 iova, length;
	u32 n, fbo;
	int err = 0;

	if (mr->type != SOFTRNIC_MR_FAST_REG || softrnic_access_errno(access))
		return -EINVAL;
	/* The WR may change the key byte only (ib_update_fast_reg_key). */
	if (sr_mkey_index(key) != sr_mkey_index(mr->mk.key))
		return -EINVAL;
	if (!is_power_of_2(ibmr->page_size) ||
	    ibmr->page_size < SR_ATOMIC_SIZE)
		return -EINVAL;

	shift = ilog2(ibmr->page_size);
	iova = ibmr->iova;
	length = ibmr->length;
	n = mr->fr_staged_n;
	fbo = iova & (ibmr->page_size - 1);
	/* What ib_sg_to_pages() produced must cover the region. */
	if (sr_mr_region_check(iova, length, U64_MAX) != SR_MEM_OK ||
	    sr_blocks_spanned(fbo, length, shift) > n)
		return -EINVAL;

	write_seqlock_irqsave(&mr->mk.lock, flags);
	if (mr->mk.pd != pd) {
		err = -EPERM;
		goto out;
	}
	if (mr->mk.state != SOFTRNIC_MKEY_FREE) {
		err = -EINVAL;
		goto out;
	}
	mr->fr_active = !mr->fr_active;
	mr->fr_n = n;
	mr->fr_shift = shift;
	mr->fr_fbo = fbo;
	mr->mk.key = key;
	mr->mk.access = access;
	mr->mk.iova = iova;
	mr->mk.length = length;
	mr->mk.state = SOFTRNIC_MKEY_VALID;
out:
	write_sequnlock_irqrestore(&mr->mk.lock, flags);
	return err;
}

/*
 * Wait until no data path access of @mr that may have passed its check
 * before the caller made the key non-VALID is left (mem.h: inflight).
 * Those run with BH or IRQs off, on other CPUs than a softirq caller's,
 * and copy one chunk at most, so the spin is short; accesses that start
 * later fail their check, and one that sees the key still VALID is
 * already counted here.  Any context; the caller keeps @mr's memory
 * (a reference, or RCU).
 */
void softrnic_mr_wait_accesses(struct softrnic_mr *mr)
{
	/* the state store before the count; pairs with access_begin */
	smp_mb();
	while (atomic_read_acquire(&mr->inflight)) {
		/* LOCAL_INV: the SQ worker; let a preempted accessor on */
		if (preemptible())
			cond_resched();
		else
			cpu_relax();
	}
}

/*
 * Invalidate fast-reg MR @mr, referenced by the caller, by exact @key.
 * Returns once no access that found the key VALID is still copying: the
 * completion of the LOCAL_INV or SEND_WITH_INV follows, and a ULP may
 * free the pages on it.
 */
int softrnic_mr_invalidate(struct softrnic_mr *mr, u32 key,
			   struct softrnic_pd *pd)
{
	unsigned long flags;
	int err = 0;

	write_seqlock_irqsave(&mr->mk.lock, flags);
	err = softrnic_mkey_inv_check(&mr->mk, key, pd);
	if (!err && (mr->type != SOFTRNIC_MR_FAST_REG || mr->num_mw))
		err = -EINVAL;
	if (!err)
		mr->mk.state = SOFTRNIC_MKEY_FREE;
	write_sequnlock_irqrestore(&mr->mk.lock, flags);
	if (!err)
		softrnic_mr_wait_accesses(mr);
	return err;
}

/* -------------------------------------------------------------------- */
/* Data path                                                             */
/* -------------------------------------------------------------------- */

void softrnic_mr_put(struct softrnic_mr *mr)
{
	/* the access's copies before the count that invalidation waits on */
	smp_mb__before_atomic();
	atomic_dec(&mr->inflight);
	softrnic_mkey_put(&mr->mk);
}

/*
 * Check a referenced MR against an access: exact @key (0: any), VALID,
 * @pd (NULL: any), rights, bounds.  The fields are read as one snapshot.
 */
int softrnic_mr_check(struct softrnic_mr *mr, u32 key, struct softrnic_pd *pd,
		      int access, u64 iova, u64 length)
{
	struct softrnic_pd *mpd;
	u64 base, len;
	unsigned int seq;
	u32 k, have;
	u8 state;

	do {
		seq = read_seqbegin(&mr->mk.lock);
		k = mr->mk.key;
		state = mr->mk.state;
		mpd = mr->mk.pd;
		have = mr->mk.access;
		base = mr->mk.iova;
		len = mr->mk.length;
	} while (read_seqretry(&mr->mk.lock, seq));

	if ((key && k != key) || state != SOFTRNIC_MKEY_VALID)
		return -ENOENT;
	if (pd && mpd != pd)
		return -EPERM;
	if (!sr_access_granted(have, access))
		return -EACCES;
	if (!sr_range_within(base, len, iova, length))
		return -ERANGE;
	return 0;
}

/* The translation of a referenced MR, as one snapshot. */
struct softrnic_mr_view {
	u64 iova;
	u64 length;
	const u64 *list;		/* FAST_REG */
	u32 n;
	u32 shift;
	u32 fbo;
};

static void softrnic_mr_view(struct softrnic_mr *mr,
			     struct softrnic_mr_view *v)
{
	unsigned int seq;

	do {
		seq = read_seqbegin(&mr->mk.lock);
		v->iova = mr->mk.iova;
		v->length = mr->mk.length;
		v->list = mr->fr_list[mr->fr_active];
		v->n = mr->fr_n;
		v->shift = mr->fr_shift;
		v->fbo = mr->fr_fbo;
	} while (read_seqretry(&mr->mk.lock, seq));
}

/* Kernel virtual [addr, addr + len) that we may touch: the direct map. */
static bool softrnic_kva_ok(unsigned long addr)
{
	return virt_addr_valid((void *)addr);
}

static int softrnic_walk_user(struct softrnic_mr *mr,
			      const struct softrnic_mr_view *v, u64 iova,
			      u64 len, bool write,
			      softrnic_chunk_fn fn, void *ctx)
{
	u64 off = sr_region_offset(v->iova, mr->pin.fbo, iova);
	int ret = 0;

	while (len) {
		u64 idx = sr_block_index(off, PAGE_SHIFT);
		size_t in = sr_block_offset(off, PAGE_SHIFT);
		size_t chunk = min_t(u64, len, PAGE_SIZE - in);
		struct page *page;
		void *kaddr;

		if (WARN_ON_ONCE(idx >= mr->pin.npages))
			return -ERANGE;
		page = mr->pin.pages[idx];
		kaddr = kmap_local_page(page);
		ret = fn(kaddr + in, chunk, ctx);
		if (write)
			flush_dcache_page(page);
		kunmap_local(kaddr);
		if (ret)
			return ret;
		off += chunk;
		len -= chunk;
	}
	return 0;
}

static int softrnic_walk_kva(const struct softrnic_mr_view *v, bool dma,
			     u64 iova, u64 len,
			     softrnic_chunk_fn fn, void *ctx)
{
	u64 off = dma ? 0 : sr_region_offset(v->iova, v->fbo, iova);
	int ret;

	while (len) {
		unsigned long addr;
		u64 room = len;		/* bytes contiguous at addr */
		size_t chunk;

		if (dma) {
			addr = iova;
		} else {
			u64 idx = sr_block_index(off, v->shift);
			u64 in = sr_block_offset(off, v->shift);

			if (WARN_ON_ONCE(idx >= v->n))
				return -ERANGE;
			addr = READ_ONCE(v->list[idx]) + in;
			/* Blocks need not be adjacent, nor fill a page. */
			room = min_t(u64, len, (1ULL << v->shift) - in);
		}
		chunk = min_t(u64, room, PAGE_SIZE - offset_in_page(addr));
		if (!softrnic_kva_ok(addr))
			return -ERANGE;
		ret = fn((void *)addr, chunk, ctx);
		if (ret)
			return ret;
		iova += chunk;
		off += chunk;
		len -= chunk;
	}
	return 0;
}

int softrnic_mr_walk(struct softrnic_mr *mr, u64 iova, u64 len, bool write,
		     softrnic_chunk_fn fn, void *ctx)
{
	struct softrnic_mr_view v;

	softrnic_mr_view(mr, &v);
	if (!sr_range_within(v.iova, v.length, iova, len))
		return -ERANGE;
	if (!len)
		return 0;

	switch (mr->type) {
	case SOFTRNIC_MR_USER:
		/* Belt and braces: never write pages pinned read-only. */
		if (write && !mr->pin.umem->writable)
			return -EACCES;
		return softrnic_walk_user(mr, &v, iova, len, write, fn, ctx);
	case SOFTRNIC_MR_DMA:
		return softrnic_walk_kva(&v, true, iova, len, fn, ctx);
	case SOFTRNIC_MR_FAST_REG:
		return softrnic_walk_kva(&v, false, iova, len, fn, ctx);
	}
	return -EINVAL;
}

struct softrnic_atomic_ctx {
	enum softrnic_atomic_op op;
	u64 compare_add;
	u64 swap;
	u64 orig;
};

static int softrnic_atomic_chunk(void *kaddr, size_t len, void *ctx)
{
	struct softrnic_atomic_ctx *a = ctx;
	u64 *p = kaddr;
	u64 old, prev;

	/* The memory behind an aligned iova may still be misaligned. */
	if (len != SR_ATOMIC_SIZE || !IS_ALIGNED((unsigned long)kaddr,
						 SR_ATOMIC_SIZE))
		return -EINVAL;

	switch (a->op) {
	case SOFTRNIC_ATOMIC_CMP_SWP:
		a->orig = cmpxchg64(p, a->compare_add, a->swap);
		return 0;
	case SOFTRNIC_ATOMIC_FETCH_ADD:
		old = READ_ONCE(*p);
		for (;;) {
			prev = cmpxchg64(p, old, old + a->compare_add);
			if (prev == old)
				break;
			old = prev;
		}
		a->orig = old;
		return 0;
	case SOFTRNIC_ATOMIC_WRITE:
		a->orig = xchg(p, a->swap);
		return 0;
	}
	return -EINVAL;
}

int softrnic_mr_atomic64(struct softrnic_mr *mr, u64 iova,
			 enum softrnic_atomic_op op, u64 compare_add,
			 u64 swap, u64 *orig)
{
	struct softrnic_atomic_ctx a = {
		.op = op,
		.compare_add = compare_add,
		.swap = swap,
	};
	int err;

	if (!sr_atomic_aligned(iova))
		return -EINVAL;
	err = softrnic_mr_walk(mr, iova, SR_ATOMIC_SIZE, true,
			       softrnic_atomic_chunk, &a);
	if (!err)
		*orig = a.orig;
	return err;
}
