// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only: softrnic.ko's sources plus this file make softrnic_mtest.ko
 * (tests/kmod/memory/Makefile), never part of the product.  It drives the
 * memory data path API of kernel/mem.h the way the wire layers will, on a
 * live device:
 *
 *   echo <ibdev> > /sys/module/softrnic_mtest/parameters/run
 *
 * then look for "memtest: <ibdev>: N passed, 0 failed" in the kernel log.
 * Covered: the DMA MR (copies, atomics, direct-map check, every lookup
 * failure class, SGE-list copies), fast registration (page lists, the
 * xprtrdma iova trick, REG_MR/LOCAL_INV state machine, stale keys), MW
 * type 1 and 2 (bind rules, zero-based translation, QP association,
 * invalidation, QP destruction, dereg refused while bound), lookups racing
 * with invalidate/re-register/dereg on all CPUs, and AHs (atomic-context
 * create/destroy, PD check, query, modify while an old vector is held).
 */
#include <linux/module.h>
#include <linux/kthread.h>
#include <linux/delay.h>
#include <linux/vmalloc.h>
#include <linux/scatterlist.h>
#include <rdma/ib_cache.h>
#include <linux/etherdevice.h>
#include "limits.h"

#include "mem.h"
#include "queue.h"

#define KTEST_NAME "memtest"
#include "ktest.h"

#define ERRV(p) (IS_ERR(p) ? (int)PTR_ERR(p) : 0)

static void mt_dma(struct softrnic_dev *sdev, struct ib_pd *pd, struct ib_pd *pd2)
{
	struct softrnic_pd *spd = to_spd(pd);
	u8 *buf = kzalloc(8192, GFP_KERNEL), src[100];
	void *vbuf = vmalloc(4096);
	struct softrnic_mr *mr;
	u64 orig = 0, *w;
	int i, err;

	for (i = 0; i < 100; i++)
		src[i] = i + 1;
	CHECK(pd->local_dma_lkey >= 0x100);
	mr = softrnic_mr_get(sdev, pd->local_dma_lkey, spd, IB_ACCESS_LOCAL_WRITE,
			     (u64)buf, 8192, false);
	CHECK(!IS_ERR(mr));
	if (IS_ERR(mr))
		goto out;
	CHECK(softrnic_mr_copy(mr, (u64)buf + 4090, src, 100, SOFTRNIC_COPY_TO_MR) == 0);
	CHECK(buf[4090] == 1 && buf[4189] == 100 && buf[4089] == 0 && buf[4190] == 0);
	memset(src, 0, sizeof(src));
	CHECK(softrnic_mr_copy(mr, (u64)buf + 4090, src, 100, SOFTRNIC_COPY_FROM_MR) == 0);
	CHECK(src[0] == 1 && src[99] == 100);
	/* Not in the direct map: refused, not faulted. */
	CHECK(softrnic_mr_copy(mr, (u64)vbuf, src, 8, SOFTRNIC_COPY_TO_MR) == -ERANGE);
	/* Atomics. */
	w = (u64 *)(buf + 64);
	*w = 5;
	CHECK(softrnic_mr_atomic64(mr, (u64)w, SOFTRNIC_ATOMIC_CMP_SWP, 5, 9, &orig) == 0);
	CHECK(orig == 5 && *w == 9);
	CHECK(softrnic_mr_atomic64(mr, (u64)w, SOFTRNIC_ATOMIC_CMP_SWP, 5, 7, &orig) == 0);
	CHECK(orig == 9 && *w == 9);
	CHECK(softrnic_mr_atomic64(mr, (u64)w, SOFTRNIC_ATOMIC_FETCH_ADD, 3, 0, &orig) == 0);
	CHECK(orig == 9 && *w == 12);
	CHECK(softrnic_mr_atomic64(mr, (u64)w, SOFTRNIC_ATOMIC_WRITE, 0, 42, &orig) == 0);
	CHECK(*w == 42);
	CHECK(softrnic_mr_atomic64(mr, (u64)w + 4, SOFTRNIC_ATOMIC_FETCH_ADD, 1, 0, &orig) == -EINVAL);
	softrnic_mr_put(mr);

	/* Failure classes. */
	CHECK(ERRV(softrnic_mr_get(sdev, pd->local_dma_lkey, spd, IB_ACCESS_REMOTE_READ,
				   (u64)buf, 8, true)) == -EACCES);
	CHECK(ERRV(softrnic_mr_get(sdev, pd->local_dma_lkey, to_spd(pd2), 0,
				   (u64)buf, 8, false)) == -EPERM);
	CHECK(ERRV(softrnic_mr_get(sdev, pd->local_dma_lkey ^ 1, spd, 0,
				   (u64)buf, 8, false)) == -ENOENT);
	CHECK(ERRV(softrnic_mr_get(sdev, 0, spd, 0, (u64)buf, 8, false)) == -ENOENT);
	CHECK(ERRV(softrnic_mr_get(sdev, 0xff, spd, 0, (u64)buf, 8, false)) == -ENOENT);
	CHECK(ERRV(softrnic_mr_get(sdev, 0xffffff00, spd, 0, (u64)buf, 8, false)) == -ENOENT);
	CHECK(ERRV(softrnic_mr_get(sdev, pd->local_dma_lkey, spd, 0,
				   U64_MAX, 2, false)) == -ERANGE);
	CHECK(ERRV(softrnic_mr_get(sdev, pd->local_dma_lkey, spd, IB_ACCESS_REMOTE_READ,
				   (u64)buf, 8, false)) == -EINVAL);
	CHECK(ERRV(softrnic_mr_get(sdev, pd->local_dma_lkey, spd, 0,
				   (u64)buf, 8, true)) == -EINVAL);

	/* SGE list copy straddling entries, starting at an offset. */
	{
		struct softrnic_sge sg[3] = {
			{ (u64)buf, 10, pd->local_dma_lkey },
			{ (u64)buf + 100, 0, 0 },
			{ (u64)buf + 200, 50, pd->local_dma_lkey },
		};
		u8 m[20];

		for (i = 0; i < 20; i++)
			m[i] = 0xa0 + i;
		memset(buf, 0, 300);
		err = softrnic_copy_sges(sdev, spd, sg, 3, 5, m, 20, SOFTRNIC_COPY_TO_MR);
		CHECK(err == 0);
		CHECK(buf[5] == 0xa0 && buf[9] == 0xa4 && buf[200] == 0xa5 && buf[214] == 0xb3 &&
		      buf[215] == 0);
		CHECK(softrnic_copy_sges(sdev, spd, sg, 3, 55, m, 10, SOFTRNIC_COPY_FROM_MR) == -ERANGE);
		sg[0].lkey ^= 0x1;
		CHECK(softrnic_copy_sges(sdev, spd, sg, 3, 0, m, 5, SOFTRNIC_COPY_FROM_MR) == -ENOENT);
		sg[0].lkey ^= 0x1;
		sg[0].addr = U64_MAX - 2;
		CHECK(softrnic_copy_sges(sdev, spd, sg, 3, 4, m, 5, SOFTRNIC_COPY_FROM_MR) == -ERANGE);
	}
out:
	vfree(vbuf);
	kfree(buf);
}

struct mt_frwr {
	struct ib_mr *mr;
	struct page *pages[3];
	struct scatterlist sg[3];
};

static int mt_frwr_map(struct ib_device *ibdev, struct mt_frwr *f)
{
	int i, n;

	sg_init_table(f->sg, 3);
	for (i = 0; i < 3; i++)
		sg_set_page(&f->sg[i], f->pages[i], PAGE_SIZE, 0);
	n = ib_dma_map_sg(ibdev, f->sg, 3, DMA_BIDIRECTIONAL);
	if (n != 3)
		return -EIO;
	n = ib_map_mr_sg(f->mr, f->sg, 3, NULL, PAGE_SIZE);
	/* Mangle the high bits like xprtrdma does. */
	f->mr->iova = (f->mr->iova & 0xffffffffULL) | (0xabcdULL << 32);
	ib_update_fast_reg_key(f->mr, ib_inc_rkey(f->mr->rkey) & 0xff);
	return n;
}

static void mt_frwr(struct softrnic_dev *sdev, struct ib_pd *pd, struct ib_pd *pd2)
{
	struct ib_device *ibdev = &sdev->ibdev;
	struct softrnic_pd *spd = to_spd(pd);
	int rw = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ;
	struct softrnic_mr *mr;
	struct mt_frwr f = {};
	u8 pat[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	u64 iova, orig;
	u32 oldkey;
	u8 *p0, *p1;
	int i;

	CHECK(IS_ERR(ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, SOFTRNIC_MAX_FAST_REG_PAGES + 1)));
	CHECK(IS_ERR(ib_alloc_mr(pd, IB_MR_TYPE_SG_GAPS, 4)));
	f.mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 3);
	CHECK(!IS_ERR(f.mr));
	if (IS_ERR(f.mr))
		return;
	for (i = 0; i < 3; i++)
		f.pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
	CHECK(mt_frwr_map(ibdev, &f) == 3);
	iova = f.mr->iova;
	CHECK(f.mr->length == 3 * PAGE_SIZE);
	/* Not registered yet: FREE. */
	CHECK(ERRV(softrnic_mr_get(sdev, f.mr->rkey, spd, IB_ACCESS_REMOTE_WRITE, iova, 8, true)) == -ENOENT);
	CHECK(softrnic_mr_fast_reg(to_spd(pd2), f.mr, f.mr->rkey, rw) == -EPERM);
	CHECK(softrnic_mr_fast_reg(spd, f.mr, f.mr->rkey ^ 0x100, rw) == -EINVAL);
	CHECK(softrnic_mr_fast_reg(spd, f.mr, f.mr->rkey, rw) == 0);
	CHECK(softrnic_mr_fast_reg(spd, f.mr, f.mr->rkey, rw) == -EINVAL);

	mr = softrnic_mr_get(sdev, f.mr->rkey, spd, IB_ACCESS_REMOTE_WRITE,
			     iova + PAGE_SIZE - 4, 8, true);
	CHECK(!IS_ERR(mr));
	if (!IS_ERR(mr)) {
		CHECK(softrnic_mr_copy(mr, iova + PAGE_SIZE - 4, pat, 8, SOFTRNIC_COPY_TO_MR) == 0);
		p0 = page_address(f.pages[0]);
		p1 = page_address(f.pages[1]);
		CHECK(p0[PAGE_SIZE - 4] == 1 && p0[PAGE_SIZE - 1] == 4 && p1[0] == 5 && p1[3] == 8);
		CHECK(softrnic_mr_atomic64(mr, iova + 2 * PAGE_SIZE, SOFTRNIC_ATOMIC_FETCH_ADD, 7, 0, &orig) == 0);
		CHECK(*(u64 *)page_address(f.pages[2]) == 7 && orig == 0);
		CHECK(softrnic_mr_copy(mr, iova + 3 * PAGE_SIZE - 1, pat, 2, SOFTRNIC_COPY_TO_MR) == -ERANGE);
		softrnic_mr_put(mr);
	}
	CHECK(ERRV(softrnic_mr_get(sdev, f.mr->rkey, spd, IB_ACCESS_REMOTE_ATOMIC, iova, 8, true)) == -EACCES);
	CHECK(ERRV(softrnic_mr_get(sdev, f.mr->rkey, spd, IB_ACCESS_REMOTE_READ, iova - 1, 8, true)) == -ERANGE);
	CHECK(ERRV(softrnic_mr_get(sdev, f.mr->rkey, spd, IB_ACCESS_REMOTE_READ, iova + 3 * PAGE_SIZE - 7, 8, true)) == -ERANGE);
	CHECK(ERRV(softrnic_mr_get(sdev, f.mr->rkey, to_spd(pd2), IB_ACCESS_REMOTE_READ, iova, 8, true)) == -EPERM);

	/* Invalidate: wrong key, wrong PD, then right. */
	CHECK(softrnic_mr_local_inv(spd, f.mr->rkey ^ 1) == -ENOENT);
	CHECK(softrnic_mr_local_inv(to_spd(pd2), f.mr->rkey) == -EPERM);
	CHECK(softrnic_mr_local_inv(spd, f.mr->rkey) == 0);
	CHECK(ERRV(softrnic_mr_get(sdev, f.mr->rkey, spd, IB_ACCESS_REMOTE_READ, iova, 8, true)) == -ENOENT);
	/* Again on the FREE MR: idempotent (rxe, siw, ConnectX), still FREE. */
	CHECK(softrnic_mr_local_inv(spd, f.mr->rkey) == 0);
	CHECK(ERRV(softrnic_mr_get(sdev, f.mr->rkey, spd, IB_ACCESS_REMOTE_READ, iova, 8, true)) == -ENOENT);
	/* A DMA MR is not invalidatable. */
	CHECK(softrnic_mr_local_inv(spd, pd->local_dma_lkey) == -EINVAL);

	/* Re-register with a new key: the old one is stale. */
	oldkey = f.mr->rkey;
	ib_dma_unmap_sg(ibdev, f.sg, 3, DMA_BIDIRECTIONAL);
	CHECK(mt_frwr_map(ibdev, &f) == 3);
	CHECK(f.mr->rkey != oldkey);
	CHECK(softrnic_mr_fast_reg(spd, f.mr, f.mr->rkey, IB_ACCESS_LOCAL_WRITE) == 0);
	CHECK(ERRV(softrnic_mr_get(sdev, oldkey, spd, 0, iova, 8, false)) == -ENOENT);
	mr = softrnic_mr_get(sdev, f.mr->lkey, spd, IB_ACCESS_LOCAL_WRITE, iova, 8, false);
	CHECK(!IS_ERR(mr));
	if (!IS_ERR(mr))
		softrnic_mr_put(mr);
	CHECK(ERRV(softrnic_mr_get(sdev, f.mr->rkey, spd, IB_ACCESS_REMOTE_READ, iova, 8, true)) == -EACCES);

	ib_dma_unmap_sg(ibdev, f.sg, 3, DMA_BIDIRECTIONAL);
	CHECK(ib_dereg_mr(f.mr) == 0);
	for (i = 0; i < 3; i++)
		__free_page(f.pages[i]);
}

static struct ib_mw *mt_alloc_mw(struct ib_pd *pd, enum ib_mw_type type)
{
	struct ib_device *ibdev = pd->device;
	struct ib_mw *mw = rdma_zalloc_drv_obj(ibdev, ib_mw);

	if (!mw)
		return NULL;
	mw->device = ibdev;
	mw->pd = pd;
	mw->type = type;
	if (ibdev->ops.alloc_mw(mw, NULL)) {
		kfree(mw);
		return NULL;
	}
	return mw;
}

static void mt_free_mw(struct ib_mw *mw)
{
	mw->device->ops.dealloc_mw(mw);
	kfree(mw);
}

static enum ib_wc_status mt_bind(struct ib_qp *qp, u32 mw_rkey, u32 new_rkey,
				 u32 mr_lkey, u64 addr, u64 len, u32 access)
{
	struct softrnic_sqe w = {};

	w.opcode = SOFTRNIC_WR_BIND_MW;
	w.bind.mw_rkey = mw_rkey;
	w.bind.new_rkey = new_rkey;
	w.bind.mr_lkey = mr_lkey;
	w.bind.addr = addr;
	w.bind.length = len;
	w.bind.access = access;
	return softrnic_mw_bind(to_sqp(qp), &w);
}

static void mt_mw(struct softrnic_dev *sdev, struct ib_pd *pd, struct ib_pd *pd2)
{
	struct ib_device *ibdev = &sdev->ibdev;
	struct softrnic_pd *spd = to_spd(pd);
	struct softrnic_qp *q = kcalloc(3, sizeof(*q), GFP_KERNEL);
	struct ib_qp *qp, *qp2, *qpx;
	struct softrnic_mr *mr;
	struct mt_frwr f = {};
	struct ib_mw *mw1, *mw2;
	u64 iova, va;
	u32 k1, k2;
	int i;

	/* Just what binding, lookups and destroy_qp's unbinding read. */
	if (!q) {
		CHECK(0);
		return;
	}
	for (i = 0; i < 3; i++) {
		q[i].ibqp.device = ibdev;
		q[i].ibqp.pd = i < 2 ? pd : pd2;
		q[i].ibqp.qp_num = 77 + i;
		q[i].sdev = sdev;
		spin_lock_init(&q[i].mw_lock);
		INIT_LIST_HEAD(&q[i].mws);
	}
	qp = &q[0].ibqp;
	qp2 = &q[1].ibqp;
	qpx = &q[2].ibqp;
	f.mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 3);
	if (IS_ERR(f.mr)) {
		CHECK(0);
		kfree(q);
		return;
	}
	for (i = 0; i < 3; i++)
		f.pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
	CHECK(mt_frwr_map(ibdev, &f) == 3);
	iova = f.mr->iova;
	CHECK(softrnic_mr_fast_reg(spd, f.mr, f.mr->rkey,
				   IB_ACCESS_LOCAL_WRITE | IB_ACCESS_MW_BIND) == 0);

	mw1 = mt_alloc_mw(pd, IB_MW_TYPE_1);
	mw2 = mt_alloc_mw(pd, IB_MW_TYPE_2);
	CHECK(mw1 && mw2);
	if (!mw1 || !mw2)
		goto out;
	k1 = mw1->rkey;
	k2 = mw2->rkey;
	CHECK(k1 >> 8 != k2 >> 8 && k1 >> 8 != f.mr->rkey >> 8);

	/* MW keys are no lkeys, and unbound windows resolve to nothing. */
	CHECK(ERRV(softrnic_mr_get(sdev, k1, spd, 0, iova, 8, false)) == -ENOENT);
	CHECK(ERRV(softrnic_rkey_get(qp, k1, IB_ACCESS_REMOTE_READ, &va, 8)) == -ENOENT);

	/* Type 1 bind. */
	CHECK(mt_bind(qp, k1, ib_inc_rkey(k1) ^ 0x100, f.mr->lkey, iova, 100,
		      IB_ACCESS_REMOTE_READ) == IB_WC_MW_BIND_ERR);
	CHECK(mt_bind(qp, k1, ib_inc_rkey(k1), f.mr->lkey, iova, 100,
		      IB_ACCESS_REMOTE_READ | IB_ZERO_BASED) == IB_WC_MW_BIND_ERR);
	CHECK(mt_bind(qpx, k1, ib_inc_rkey(k1), f.mr->lkey, iova, 100,
		      IB_ACCESS_REMOTE_READ) == IB_WC_MW_BIND_ERR);
	CHECK(mt_bind(qp, k1, ib_inc_rkey(k1), f.mr->lkey, iova + PAGE_SIZE, 3 * PAGE_SIZE,
		      IB_ACCESS_REMOTE_READ) == IB_WC_MW_BIND_ERR);
	CHECK(mt_bind(qp, k1, ib_inc_rkey(k1), f.mr->lkey, iova + 16, 100,
		      IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE) == IB_WC_SUCCESS);
	k1 = ib_inc_rkey(k1);
	va = iova + 20;
	mr = softrnic_mr_get(sdev, k1, spd, IB_ACCESS_REMOTE_WRITE, va, 8, true);
	CHECK(!IS_ERR(mr) && mr == to_smr(f.mr));
	if (!IS_ERR(mr))
		softrnic_mr_put(mr);
	CHECK(ERRV(softrnic_mr_get(sdev, k1, spd, IB_ACCESS_REMOTE_ATOMIC, va, 8, true)) == -EACCES);
	CHECK(ERRV(softrnic_mr_get(sdev, k1, spd, IB_ACCESS_REMOTE_READ, iova + 8, 8, true)) == -ERANGE);
	CHECK(ERRV(softrnic_mr_get(sdev, k1, to_spd(pd2), IB_ACCESS_REMOTE_READ, va, 8, true)) == -EPERM);
	CHECK(ERRV(softrnic_mr_get(sdev, ib_inc_rkey(k1), spd, IB_ACCESS_REMOTE_READ, va, 8, true)) == -ENOENT);
	/* Bound MR cannot go or be invalidated; type 1 cannot be invalidated. */
	CHECK(softrnic_mr_local_inv(spd, f.mr->rkey) == -EINVAL);
	CHECK(softrnic_mem_invalidate(qp, k1) == -EINVAL);
	CHECK(ib_dereg_mr(f.mr) == -EBUSY);
	/* Type 1 unbind (length 0). */
	CHECK(mt_bind(qp, k1, ib_inc_rkey(k1), 0, 0, 0, 0) == IB_WC_SUCCESS);
	k1 = ib_inc_rkey(k1);
	CHECK(ERRV(softrnic_mr_get(sdev, k1, spd, IB_ACCESS_REMOTE_READ, va, 8, true)) == -ENOENT);

	/* Type 2, zero based, bound to qp. */
	CHECK(mt_bind(qp, k2, ib_inc_rkey(k2), f.mr->lkey, iova + PAGE_SIZE, 0,
		      IB_ACCESS_REMOTE_READ) == IB_WC_MW_BIND_ERR);
	CHECK(mt_bind(qp, k2, ib_inc_rkey(k2), f.mr->lkey, iova + PAGE_SIZE, PAGE_SIZE,
		      IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | IB_ZERO_BASED) == IB_WC_SUCCESS);
	k2 = ib_inc_rkey(k2);
	/* Rebinding a bound type 2 window fails (o10-37.2.30). */
	CHECK(mt_bind(qp, k2, ib_inc_rkey(k2), f.mr->lkey, iova, 8,
		      IB_ACCESS_REMOTE_READ) == IB_WC_MW_BIND_ERR);
	va = 16;
	mr = softrnic_rkey_get(qp, k2, IB_ACCESS_REMOTE_ATOMIC, &va, 8);
	CHECK(!IS_ERR(mr) && va == iova + PAGE_SIZE + 16);
	if (!IS_ERR(mr)) {
		u64 orig;

		CHECK(softrnic_mr_atomic64(mr, va, SOFTRNIC_ATOMIC_FETCH_ADD, 2, 0, &orig) == 0);
		CHECK(*(u64 *)(page_address(f.pages[1]) + 16) == 2);
		softrnic_mr_put(mr);
	}
	va = 16;
	CHECK(ERRV(softrnic_rkey_get(qp2, k2, IB_ACCESS_REMOTE_READ, &va, 8)) == -EPERM);
	CHECK(ERRV(softrnic_mr_get(sdev, k2, spd, IB_ACCESS_REMOTE_READ, 16, 8, true)) == -EPERM);
	va = PAGE_SIZE - 4;
	CHECK(ERRV(softrnic_rkey_get(qp, k2, IB_ACCESS_REMOTE_READ, &va, 8)) == -ERANGE);
	/* Invalidate by another QP fails, by ours works. */
	CHECK(softrnic_mem_invalidate(qp2, k2) == -EPERM);
	CHECK(softrnic_mem_invalidate(qp, k2) == 0);
	va = 16;
	CHECK(ERRV(softrnic_rkey_get(qp, k2, IB_ACCESS_REMOTE_READ, &va, 8)) == -ENOENT);
	/* Bind again, then the QP goes away. */
	CHECK(mt_bind(qp, k2, ib_inc_rkey(k2), f.mr->lkey, iova, 64,
		      IB_ACCESS_REMOTE_READ) == IB_WC_SUCCESS);
	k2 = ib_inc_rkey(k2);
	va = iova;
	mr = softrnic_rkey_get(qp, k2, IB_ACCESS_REMOTE_READ, &va, 8);
	CHECK(!IS_ERR(mr));
	if (!IS_ERR(mr))
		softrnic_mr_put(mr);
	softrnic_mw_qp_destroyed(to_sqp(qp2));	/* binds nothing */
	va = iova;
	CHECK(!IS_ERR_OR_NULL(mr = softrnic_rkey_get(qp, k2, IB_ACCESS_REMOTE_READ, &va, 8)));
	if (!IS_ERR(mr))
		softrnic_mr_put(mr);
	softrnic_mw_qp_destroyed(to_sqp(qp));
	va = iova;
	CHECK(ERRV(softrnic_rkey_get(qp, k2, IB_ACCESS_REMOTE_READ, &va, 8)) == -ENOENT);
	/* Free again: can be bound anew. */
	CHECK(mt_bind(qp2, k2, ib_inc_rkey(k2), f.mr->lkey, iova, 64,
		      IB_ACCESS_REMOTE_READ) == IB_WC_SUCCESS);
	CHECK(ib_dereg_mr(f.mr) == -EBUSY);
	/* Deallocating a bound window releases the MR. */
	mt_free_mw(mw2);
	mw2 = NULL;
out:
	if (mw1)
		mt_free_mw(mw1);
	if (mw2)
		mt_free_mw(mw2);
	ib_dma_unmap_sg(ibdev, f.sg, 3, DMA_BIDIRECTIONAL);
	CHECK(ib_dereg_mr(f.mr) == 0);
	for (i = 0; i < 3; i++)
		__free_page(f.pages[i]);
	kfree(q);
}

/* Lookups racing with deregistration and invalidation. */
struct mt_race {
	struct softrnic_dev *sdev;
	struct softrnic_pd *pd;
	u32 key;
	u64 addr;
	atomic_t ok, gone;
	u8 *buf;
};

static int mt_race_fn(void *arg)
{
	struct mt_race *r = arg;
	u8 tmp[64];

	/*
	 * Only kthread_stop() ends the loop: a thread that returned on its
	 * own could be freed before kthread_stop() looks at it.
	 */
	while (!kthread_should_stop()) {
		struct softrnic_mr *mr;

		/* as the wire does: accesses softirq-safe (mem.h) */
		local_bh_disable();
		mr = softrnic_mr_get(r->sdev, r->key, r->pd, IB_ACCESS_LOCAL_WRITE,
				     r->addr, 64, false);
		if (IS_ERR(mr)) {
			local_bh_enable();
			atomic_inc(&r->gone);
			cond_resched();
			continue;
		}
		atomic_inc(&r->ok);
		if (softrnic_mr_copy(mr, r->addr, tmp, 64, SOFTRNIC_COPY_TO_MR))
			atomic_inc(&r->gone);
		udelay(1);
		softrnic_mr_put(mr);
		local_bh_enable();
		cond_resched();
	}
	return 0;
}

static void mt_race(struct softrnic_dev *sdev, struct ib_pd *pd)
{
	struct mt_race r = { .sdev = sdev, .pd = to_spd(pd) };
	struct task_struct *t[4];
	struct mt_frwr f = {};
	int i, round;

	for (round = 0; round < 200; round++) {
		f.mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 3);
		if (IS_ERR(f.mr)) {
			CHECK(0);
			return;
		}
		if (!round)
			for (i = 0; i < 3; i++)
				f.pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		mt_frwr_map(&sdev->ibdev, &f);
		softrnic_mr_fast_reg(r.pd, f.mr, f.mr->rkey, IB_ACCESS_LOCAL_WRITE);
		r.key = f.mr->lkey;
		r.addr = f.mr->iova;
		for (i = 0; i < 4; i++) {
			t[i] = kthread_run(mt_race_fn, &r, "mt_race%d", i);
			CHECK(!IS_ERR(t[i]));
		}
		/* Invalidate / re-register while they run, then dereg. */
		for (i = 0; i < 50; i++) {
			softrnic_mr_local_inv(r.pd, f.mr->rkey);
			softrnic_mr_fast_reg(r.pd, f.mr, f.mr->rkey, IB_ACCESS_LOCAL_WRITE);
			cond_resched();
		}
		CHECK(ib_dereg_mr(f.mr) == 0);
		for (i = 0; i < 4; i++)
			if (!IS_ERR(t[i]))
				kthread_stop(t[i]);
		ib_dma_unmap_sg(&sdev->ibdev, f.sg, 3, DMA_BIDIRECTIONAL);
	}
	for (i = 0; i < 3; i++)
		__free_page(f.pages[i]);
	pr_info("memtest: race: %d lookups ok, %d refused\n",
		atomic_read(&r.ok), atomic_read(&r.gone));
	CHECK(atomic_read(&r.ok) > 0);
}

static void mt_ah(struct softrnic_dev *sdev, struct ib_pd *pd, struct ib_pd *pd2)
{
	const struct ib_gid_attr *gattr = NULL;
	struct rdma_ah_attr attr = {}, q = {};
	struct softrnic_av *av, *av2;
	struct ib_ah *ah;
	unsigned long flags;
	int i;

	if (sdev->wire->type != SOFTRNIC_LINK_ROCE) {
		attr.type = RDMA_AH_ATTR_TYPE_ROCE;
		CHECK(PTR_ERR(rdma_create_ah(pd, &attr, RDMA_CREATE_AH_SLEEPABLE)) == -EOPNOTSUPP ||
		      PTR_ERR(rdma_create_ah(pd, &attr, RDMA_CREATE_AH_SLEEPABLE)) == -EINVAL);
		return;
	}
	for (i = 0; i < 16; i++) {
		gattr = rdma_get_gid_attr(&sdev->ibdev, 1, i);
		if (!IS_ERR(gattr) && ipv6_addr_v4mapped((struct in6_addr *)gattr->gid.raw))
			break;
		if (!IS_ERR(gattr))
			rdma_put_gid_attr(gattr);
		gattr = NULL;
	}
	if (!gattr) {
		pr_info("memtest: no IPv4 GID, AH tests skipped\n");
		return;
	}
	attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&attr, 1);
	{
		union ib_gid g = gattr->gid;

		rdma_ah_set_grh(&attr, &g, 0, gattr->index, 64, 0);
	}
	eth_broadcast_addr(attr.roce.dmac);
	rdma_put_gid_attr(gattr);

	/* Atomic context: IRQs off. */
	local_irq_save(flags);
	ah = rdma_create_ah(pd, &attr, 0);
	local_irq_restore(flags);
	CHECK(!IS_ERR(ah));
	if (IS_ERR(ah))
		return;
	av = softrnic_ah_get(sdev, to_sah(ah)->ah_num, to_spd(pd));
	CHECK(!IS_ERR(av) && av->hop_limit == 64 && av->net_type == RDMA_NETWORK_IPV4 &&
	      av->sgid_attr && is_broadcast_ether_addr(av->dmac));
	CHECK(ERRV(softrnic_ah_get(sdev, to_sah(ah)->ah_num, to_spd(pd2))) == -EPERM);
	CHECK(ERRV(softrnic_ah_get(sdev, 0, to_spd(pd))) == -ENOENT);
	CHECK(rdma_query_ah(ah, &q) == 0);
	CHECK(q.type == RDMA_AH_ATTR_TYPE_ROCE && rdma_ah_read_grh(&q)->hop_limit == 64 &&
	      (rdma_ah_get_ah_flags(&q) & IB_AH_GRH));
	rdma_ah_set_grh(&attr, &attr.grh.dgid, 0, attr.grh.sgid_index, 7, 0);
	attr.grh.sgid_attr = NULL;
	CHECK(rdma_modify_ah(ah, &attr) == 0);
	av2 = softrnic_ah_get(sdev, to_sah(ah)->ah_num, to_spd(pd));
	CHECK(!IS_ERR(av2) && av2->hop_limit == 7);
	if (!IS_ERR(av2))
		softrnic_ah_put(av2);
	/* Destroy (atomic) while we still hold the old av: it stays valid. */
	local_irq_save(flags);
	rdma_destroy_ah(ah, 0);
	local_irq_restore(flags);
	if (!IS_ERR(av)) {
		CHECK(av->hop_limit == 64);
		softrnic_ah_put(av);
	}
	/* A bad GID combination: IPv6 dgid with an IPv4 sgid. */
	attr.grh.dgid.raw[10] = 0;
	attr.grh.sgid_attr = NULL;
	ah = rdma_create_ah(pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	CHECK(PTR_ERR(ah) == -EINVAL);
	if (!IS_ERR(ah))
		rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
}

/*
 * SRQ limit: the event fires once, when a wire-side consumer
 * (softrnic_srq_get) leaves fewer WQEs than the armed limit, and disarms.
 * The driver raises SRQ events from a tasklet, so the test waits for the
 * first one, and counts the rest after ib_destroy_srq(), which runs what
 * is still owed.
 */
struct mt_srq_hits {
	atomic_t hits;
	struct completion first;
};

static void mt_srq_event(struct ib_event *ev, void *ctx)
{
	struct mt_srq_hits *h = ctx;

	if (ev->event == IB_EVENT_SRQ_LIMIT_REACHED) {
		atomic_inc(&h->hits);
		complete(&h->first);
	}
}

static void mt_srq_limit(struct softrnic_dev *sdev, struct ib_pd *pd)
{
	static struct softrnic_krqe krqe;	/* 528 bytes: not on the stack */
	struct mt_srq_hits h = { .hits = ATOMIC_INIT(0) };
	struct ib_srq_init_attr init = {
		.event_handler = mt_srq_event,
		.srq_context = &h,
		.attr = { .max_wr = 16, .max_sge = 1 },
		.srq_type = IB_SRQT_BASIC,
	};
	struct ib_srq_attr attr = { .srq_limit = 8 };
	struct softrnic_srq *srq;
	struct ib_srq *ibsrq;
	int i, taken = 0;

	init_completion(&h.first);
	ibsrq = ib_create_srq(pd, &init);
	CHECK(!IS_ERR(ibsrq));
	if (IS_ERR(ibsrq))
		return;
	srq = to_ssrq(ibsrq);
	for (i = 0; i < 10; i++) {
		struct ib_recv_wr wr = { .wr_id = i };
		const struct ib_recv_wr *bad;

		CHECK(!ib_post_srq_recv(ibsrq, &wr, &bad));
	}
	CHECK(!ib_modify_srq(ibsrq, &attr, IB_SRQ_LIMIT));
	/* 10 -> 8 left: not below the limit yet. */
	for (i = 0; i < 2; i++)
		taken += !softrnic_srq_get(srq, &krqe);
	CHECK(taken == 2 && atomic_read(&h.hits) == 0);
	/* 7 left: below 8, one event, and the limit is disarmed. */
	CHECK(!softrnic_srq_get(srq, &krqe) && krqe.rqe.wr_id == 2);
	CHECK(wait_for_completion_timeout(&h.first, 2 * HZ));
	CHECK(!ib_query_srq(ibsrq, &attr) && attr.srq_limit == 0);
	while (!softrnic_srq_get(srq, &krqe))
		taken++;
	CHECK(taken == 9);
	CHECK(softrnic_srq_get(srq, &krqe) == -ENOENT);
	ib_destroy_srq(ibsrq);
	CHECK(atomic_read(&h.hits) == 1);
}

static int mt_run(const char *name)
{
	struct ib_device *ibdev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	struct softrnic_dev *sdev;
	struct ib_pd *pd, *pd2;

	if (!ibdev)
		return -ENODEV;
	sdev = to_sdev(ibdev);
	atomic_set(&checks, 0);
	atomic_set(&failures, 0);
	pd = ib_alloc_pd(ibdev, 0);
	pd2 = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(pd) || IS_ERR(pd2)) {
		ib_device_put(ibdev);
		return -ENOMEM;
	}
	mt_dma(sdev, pd, pd2);
	mt_frwr(sdev, pd, pd2);
	mt_mw(sdev, pd, pd2);
	mt_race(sdev, pd);
	mt_ah(sdev, pd, pd2);
	mt_srq_limit(sdev, pd);
	ib_dealloc_pd(pd2);
	ib_dealloc_pd(pd);
	pr_info("memtest: %s: %d passed, %d failed; mr=%d mw=%d\n", name,
		atomic_read(&checks) - atomic_read(&failures), atomic_read(&failures),
		atomic_read(&sdev->num_mr), atomic_read(&sdev->num_mw));
	ib_device_put(ibdev);
	return 0;
}

static int mt_set(const char *val, const struct kernel_param *kp)
{
	char name[IB_DEVICE_NAME_MAX];

	strscpy(name, val, sizeof(name));
	strim(name);
	return mt_run(name);
}

static const struct kernel_param_ops mt_ops = { .set = mt_set };
module_param_cb(run, &mt_ops, NULL, 0200);
