// SPDX-License-Identifier: GPL-2.0
/*
 * The data path's way into memory by key (mem.h, "Data path API"): an
 * lkey or rkey resolves to a referenced MR, directly or through a memory
 * window; invalidation by key; copies to and from SGE lists.  Above the
 * key table (keys.c), MRs (mr.c) and MWs (mw.c): it dispatches on the
 * kind of object a key names.
 */
#include "mem.h"

static struct softrnic_mr *softrnic_key_resolve(struct softrnic_dev *sdev,
						u32 key, struct softrnic_pd *pd,
						u32 qpn, int access, u64 *iova,
						u64 length, bool remote)
{
	struct softrnic_mkey *mk;
	struct softrnic_mr *mr;
	int err;

	if (!sr_access_request_valid(access, remote))
		return ERR_PTR(-EINVAL);

	mk = softrnic_mkey_get(sdev, key);
	if (!mk)
		return ERR_PTR(-ENOENT);

	if (mk->kind == SOFTRNIC_MKEY_MR) {
		mr = container_of(mk, struct softrnic_mr, mk);
		softrnic_mr_access_begin(mr);
		err = softrnic_mr_check(mr, key, pd, access, *iova, length);
		if (err) {
			softrnic_mr_put(mr);
			return ERR_PTR(err);
		}
		return mr;
	}

	/* A window's rkey is no lkey: locally it names nothing. */
	if (!remote) {
		softrnic_mkey_put(mk);
		return ERR_PTR(-ENOENT);
	}
	mr = softrnic_win_resolve(container_of(mk, struct softrnic_win, mk),
				  key, pd, qpn, access, iova, length);
	softrnic_mkey_put(mk);
	return mr;
}

struct softrnic_mr *softrnic_mr_get(struct softrnic_dev *sdev, u32 key,
				    struct softrnic_pd *pd, int access,
				    u64 iova, u64 length, bool remote)
{
	return softrnic_key_resolve(sdev, key, pd, SOFTRNIC_NO_QPN, access,
				    &iova, length, remote);
}

struct softrnic_mr *softrnic_rkey_get(const struct ib_qp *qp, u32 rkey,
				      int access, u64 *iova, u64 length)
{
	return softrnic_key_resolve(to_sdev(qp->device), rkey,
				    to_spd(qp->pd), qp->qp_num, access, iova,
				    length, true);
}

struct softrnic_copy_ctx {
	u8 *buf;
	enum softrnic_copy_dir dir;
};

static int softrnic_copy_chunk(void *kaddr, size_t len, void *ctx)
{
	struct softrnic_copy_ctx *c = ctx;

	if (c->dir == SOFTRNIC_COPY_TO_MR)
		memcpy(kaddr, c->buf, len);
	else
		memcpy(c->buf, kaddr, len);
	c->buf += len;
	return 0;
}

int softrnic_mr_copy(struct softrnic_mr *mr, u64 iova, void *buf, u64 len,
		     enum softrnic_copy_dir dir)
{
	struct softrnic_copy_ctx c = { .buf = buf, .dir = dir };

	return softrnic_mr_walk(mr, iova, len, dir == SOFTRNIC_COPY_TO_MR,
				softrnic_copy_chunk, &c);
}

int softrnic_sges_walk(struct softrnic_dev *sdev, struct softrnic_pd *pd,
		       const struct softrnic_sge *sge, u32 num_sge,
		       u64 offset, u64 len, bool write, softrnic_chunk_fn fn,
		       void *ctx)
{
	int access = write ? IB_ACCESS_LOCAL_WRITE : 0;
	u32 i;

	for (i = 0; i < num_sge && len; i++) {
		u64 slen = sge[i].length, addr = sge[i].addr, chunk;
		struct softrnic_mr *mr;
		int err;

		if (offset >= slen) {
			offset -= slen;
			continue;
		}
		/* An SGE that wraps could alias a valid address. */
		if (slen > U64_MAX - addr)
			return -ERANGE;
		chunk = min(slen - offset, len);
		mr = softrnic_mr_get(sdev, sge[i].lkey, pd, access,
				     addr + offset, chunk, false);
		if (IS_ERR(mr))
			return PTR_ERR(mr);
		err = softrnic_mr_walk(mr, addr + offset, chunk, write, fn, ctx);
		softrnic_mr_put(mr);
		if (err)
			return err;
		len -= chunk;
		offset = 0;
	}
	return len ? -ERANGE : 0;
}

int softrnic_copy_sges(struct softrnic_dev *sdev, struct softrnic_pd *pd,
		       const struct softrnic_sge *sge, u32 num_sge,
		       u64 offset, void *buf, u64 len,
		       enum softrnic_copy_dir dir)
{
	struct softrnic_copy_ctx c = { .buf = buf, .dir = dir };

	return softrnic_sges_walk(sdev, pd, sge, num_sge, offset, len,
				  dir == SOFTRNIC_COPY_TO_MR,
				  softrnic_copy_chunk, &c);
}

static int softrnic_key_invalidate(struct softrnic_dev *sdev,
				   struct softrnic_pd *pd, u32 qpn, u32 key)
{
	struct softrnic_mkey *mk;
	int err;

	mk = softrnic_mkey_get(sdev, key);
	if (!mk)
		return -ENOENT;
	if (mk->kind == SOFTRNIC_MKEY_MR)
		err = softrnic_mr_invalidate(container_of(mk, struct softrnic_mr,
							  mk), key, pd);
	else
		err = softrnic_win_invalidate(sdev,
					      container_of(mk, struct softrnic_win,
							   mk), key, pd, qpn);
	softrnic_mkey_put(mk);
	return err;
}

int softrnic_mr_local_inv(struct softrnic_pd *pd, u32 key)
{
	return softrnic_key_invalidate(to_sdev(pd->ibpd.device), pd,
				       SOFTRNIC_NO_QPN, key);
}

int softrnic_mem_invalidate(const struct ib_qp *qp, u32 key)
{
	return softrnic_key_invalidate(to_sdev(qp->device), to_spd(qp->pd),
				       qp->qp_num, key);
}
