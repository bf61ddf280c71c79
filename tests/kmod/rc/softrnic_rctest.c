// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only kernel ULP for softrnic's RoCEv2 RC transport across the wire:
 * two softrnic devices (one per network namespace, joined by a veth pair),
 * two RC QPs connected by hand with ib_modify_qp as a ULP without rdma_cm
 * does, kernel buffers, fast registration and remote invalidation.  Not
 * part of softrnic.ko.  Loaded in the VM once both devices have their
 * RoCE v2 IPv4 GIDs:
 *
 *   insmod softrnic_rctest.ko dev0=roce0 dev1=roce1 [ipv6=1]
 *
 * runs every test at load time, logs "rctest: FAIL ..." per failed check
 * and ends with "rctest: done: N checks, M failed".  Everything it created
 * is gone when init returns; the module then stays loaded doing nothing.
 * ipv6=1 connects through the global IPv6 GIDs instead of the IPv4 ones.
 * hold=1 runs no checks and leaves traffic running for device removal
 * (see hold_start()).  dev0 may be another driver's device (rdma_rxe).
 *
 * Side 0 is the requester of most tests, side 1 the target.  Remote access
 * to plain kernel buffers goes through each PD's DMA MR
 * (IB_PD_UNSAFE_GLOBAL_RKEY, the ib_get_dma_mr of today's ib_core);
 * local buffers use pd->local_dma_lkey.  A test that ends in a QP error
 * takes a fresh QP pair.
 */
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#define KTEST_NAME "rctest"
#include "ktest.h"

static char *dev0 = "roce0";
module_param(dev0, charp, 0444);
MODULE_PARM_DESC(dev0, "requester device (any netns)");
static char *dev1 = "roce1";
module_param(dev1, charp, 0444);
MODULE_PARM_DESC(dev1, "target device (any netns)");
static bool ipv6;
module_param(ipv6, bool, 0444);
MODULE_PARM_DESC(ipv6, "use the RoCE v2 IPv6 (global) GIDs instead of IPv4");
static bool hold;
module_param(hold, bool, 0444);
MODULE_PARM_DESC(hold, "no checks: leave traffic running until device removal or rmmod");
static bool no_inv_race;
module_param(no_inv_race, bool, 0444);
MODULE_PARM_DESC(no_inv_race, "leave out invalidation during WRITEs (rdma_rxe as requester: see tests/vm/roce_kverbs.sh)");

#define MIB		(1u << 20)
#define BUF_LEN		(MIB + 16 * PAGE_SIZE)	/* data + SGE gaps + guard */
#define SGE_GAP		64
#define MAX_SGE		8
#define QP_DEPTH	128
#define WAIT_MS		20000

struct side {
	struct ib_device *dev;
	struct ib_pd *pd;	/* with a DMA MR: pd->unsafe_global_rkey */
	struct ib_pd *pd2;	/* another PD, for cross-PD invalidation */
	struct ib_cq *cq;	/* polled by the tests */
	u8 *buf;
	u64 dma;
	u8 gid_index;
	union ib_gid gid;
	u8 mac[ETH_ALEN];
};

static struct side S[2];

struct pair {
	struct ib_qp *qp[2];
};

static void fill(u8 *p, size_t len, u32 seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (u8)(seed + i * 7 + (i >> 9));
}

static void rc_comp(struct ib_cq *cq, void *ctx)
{
}

/*
 * The RoCE v2 IPv4 GID of port 1 (ipv6: its global IPv6 GID), and the MAC
 * of its netdev.
 */
static int find_gid(struct side *s)
{
	const struct ib_gid_attr *attr;
	const struct in6_addr *a6;
	struct net_device *ndev;
	int i;

	for (i = 0; i < 256; i++) {
		attr = rdma_get_gid_attr(s->dev, 1, i);
		if (IS_ERR(attr)) {
			if (PTR_ERR(attr) == -EINVAL)
				break;
			continue;
		}
		a6 = (const struct in6_addr *)attr->gid.raw;
		if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		    (ipv6 ? !ipv6_addr_v4mapped(a6) &&
			    !(ipv6_addr_type(a6) & IPV6_ADDR_LINKLOCAL) :
			    ipv6_addr_v4mapped(a6))) {
			rcu_read_lock();
			ndev = rdma_read_gid_attr_ndev_rcu(attr);
			if (!IS_ERR(ndev))
				memcpy(s->mac, ndev->dev_addr, ETH_ALEN);
			rcu_read_unlock();
			s->gid = attr->gid;
			s->gid_index = i;
			rdma_put_gid_attr(attr);
			return IS_ERR(ndev) ? PTR_ERR(ndev) : 0;
		}
		rdma_put_gid_attr(attr);
	}
	return -ENOENT;
}

/* ------------------------------------------------------------------ */
/* QPs                                                                 */
/* ------------------------------------------------------------------ */

/* The SRQ side 1's next QP is created with (NULL: its own RQ). */
static struct ib_srq *qp_srq;
/* And its event handler (NULL: none). */
static void (*qp_events)(struct ib_event *ev, void *ctx);

static struct ib_qp *mk_qp(struct ib_pd *pd, struct ib_cq *scq,
			   struct ib_cq *rcq, struct ib_srq *srq,
			   void (*events)(struct ib_event *, void *))
{
	struct ib_qp_init_attr init = {
		.event_handler = events,
		.send_cq = scq,
		.recv_cq = rcq,
		.cap = {
			.max_send_wr = QP_DEPTH,
			.max_recv_wr = QP_DEPTH,
			.max_send_sge = MAX_SGE,
			.max_recv_sge = MAX_SGE,
			.max_inline_data = 64,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
		.port_num = 1,
		.srq = srq,
	};

	return ib_create_qp(pd, &init);
}

/* RESET -> INIT -> RTR -> RTS towards @peer's QP @dqpn, like a ULP. */
static int qp_connect(struct ib_qp *qp, const struct side *me,
		      const struct side *peer, u32 dqpn, u32 my_psn,
		      u32 peer_psn)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE |
				   IB_ACCESS_REMOTE_READ |
				   IB_ACCESS_REMOTE_ATOMIC,
	};
	int err;

	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = peer_psn;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 1;
	a.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&a.ah_attr, 1);
	rdma_ah_set_grh(&a.ah_attr, (union ib_gid *)&peer->gid, 0,
			me->gid_index, 64, 0);
	memcpy(a.ah_attr.roce.dmac, peer->mac, ETH_ALEN);
	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = my_psn;
	a.max_rd_atomic = 16;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

/* A connected pair: side 0's QP in S[0].pd, side 1's in @pd1. */
static int pair_new_cq(struct pair *p, struct ib_pd *pd1, struct ib_cq *scq0,
		       struct ib_cq *rcq0, struct ib_cq *scq1,
		       struct ib_cq *rcq1)
{
	u32 psn0 = get_random_u32() & 0xffffff;
	u32 psn1 = get_random_u32() & 0xffffff;
	int err;

	p->qp[0] = mk_qp(S[0].pd, scq0, rcq0, NULL, NULL);
	if (IS_ERR(p->qp[0])) {
		err = PTR_ERR(p->qp[0]);
		goto fail;
	}
	p->qp[1] = mk_qp(pd1, scq1, rcq1, qp_srq, qp_events);
	qp_srq = NULL;
	qp_events = NULL;
	if (IS_ERR(p->qp[1])) {
		ib_destroy_qp(p->qp[0]);
		err = PTR_ERR(p->qp[1]);
		goto fail;
	}
	err = qp_connect(p->qp[0], &S[0], &S[1], p->qp[1]->qp_num, psn0, psn1);
	if (!err)
		err = qp_connect(p->qp[1], &S[1], &S[0], p->qp[0]->qp_num,
				 psn1, psn0);
	if (!err)
		return 0;
	ib_destroy_qp(p->qp[0]);
	ib_destroy_qp(p->qp[1]);
fail:
	p->qp[0] = NULL;	/* nothing to destroy */
	p->qp[1] = NULL;
	return err;
}

static void cq_discard(struct ib_cq *cq)
{
	struct ib_wc wc;

	while (ib_poll_cq(cq, 1, &wc) > 0)
		;
}

static bool pair_new_pd(struct pair *p, struct ib_pd *pd1)
{
	int err = pair_new_cq(p, pd1, S[0].cq, S[0].cq, S[1].cq, S[1].cq);

	CHECK(!err, "connect QP pair: %d", err);
	return !err;
}

static bool pair_new(struct pair *p)
{
	return pair_new_pd(p, S[1].pd);
}

static void pair_free(struct pair *p)
{
	ib_destroy_qp(p->qp[0]);
	ib_destroy_qp(p->qp[1]);
	cq_discard(S[0].cq);
	cq_discard(S[1].cq);
}

static enum ib_qp_state qp_state(struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr a;

	if (ib_query_qp(qp, &a, IB_QP_STATE, &init))
		return -1;
	return a.qp_state;
}

/*
 * The responder moves to ERR as it answers, the requester right after it
 * completed the failed WQE (as rxe): allow them a moment.
 */
static enum ib_qp_state wait_state(struct ib_qp *qp, enum ib_qp_state want)
{
	unsigned long end = jiffies + msecs_to_jiffies(2000);
	enum ib_qp_state st;

	while ((st = qp_state(qp)) != want && time_before(jiffies, end))
		usleep_range(500, 1000);
	return st;
}

/*
 * The port counter @name of @dev (what `rdma statistic` shows), or
 * U64_MAX if it has none: a positive sign that the device handled a
 * packet, where a test would otherwise sleep and hope.
 */
static u64 hw_counter(struct ib_device *dev, const char *name)
{
	struct rdma_hw_stats *st;
	u64 v = U64_MAX;
	int i, n;

	if (!dev->ops.alloc_hw_port_stats || !dev->ops.get_hw_stats)
		return v;
	st = dev->ops.alloc_hw_port_stats(dev, 1);
	if (!st)
		return v;
	n = dev->ops.get_hw_stats(dev, st, 1, st->num_counters);
	for (i = 0; i < n && i < st->num_counters; i++)
		if (!strcmp(st->descs[i].name, name))
			v = st->value[i];
	rdma_free_hw_stats_struct(st);
	return v;
}

/* ------------------------------------------------------------------ */
/* Posting and polling                                                 */
/* ------------------------------------------------------------------ */

static int poll_one(struct ib_cq *cq, struct ib_wc *wc)
{
	unsigned long end = jiffies + msecs_to_jiffies(WAIT_MS);
	int n;

	for (;;) {
		n = ib_poll_cq(cq, 1, wc);
		if (n)
			return n < 0 ? n : 0;
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
		usleep_range(20, 100);
	}
}

/* The next CQE of @cq: @wr_id, @status and @opcode; false (logged) if not. */
static bool expect_wc(struct ib_cq *cq, u64 wr_id, enum ib_wc_status status,
		      enum ib_wc_opcode opcode, struct ib_wc *out)
{
	struct ib_wc wc = {};
	int err = poll_one(cq, &wc);

	if (out)
		*out = wc;
	if (!CHECK(!err, "no completion for wr_id %#llx: %d", wr_id, err))
		return false;
	return CHECK(wc.wr_id == wr_id && wc.status == status &&
		     (status != IB_WC_SUCCESS || wc.opcode == opcode),
		     "wr_id %#llx status %d (%s) opcode %d, want %#llx %d %d",
		     wc.wr_id, wc.status, ib_wc_status_msg(wc.status),
		     wc.opcode, wr_id, status, opcode);
}

static int post(struct ib_qp *qp, const struct ib_send_wr *wr)
{
	const struct ib_send_wr *bad;

	return ib_post_send(qp, wr, &bad);
}

static int post_recv(struct ib_qp *qp, u64 wr_id, struct ib_sge *sge, int n)
{
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = sge, .num_sge = n };
	const struct ib_recv_wr *bad;

	return ib_post_recv(qp, &wr, &bad);
}

/* One-sided op from side 0 on @qp; its completion status. */
static enum ib_wc_status rdma_op(struct ib_qp *qp, enum ib_wr_opcode op,
				 struct ib_sge *sge, int nsge, u64 raddr,
				 u32 rkey)
{
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_id = 0xabc,
			.opcode = op,
			.send_flags = IB_SEND_SIGNALED,
			.sg_list = sge,
			.num_sge = nsge,
		},
		.remote_addr = raddr,
		.rkey = rkey,
	};
	struct ib_wc wc = {};
	int err;

	err = post(qp, &wr.wr);
	if (!CHECK(!err, "post op %d: %d", op, err))
		return -1;
	err = poll_one(qp->send_cq, &wc);
	if (!CHECK(!err && wc.wr_id == 0xabc, "op %d completion %d wr_id %#llx",
		   op, err, wc.wr_id))
		return -1;
	if (wc.status == IB_WC_SUCCESS)
		CHECK(wc.opcode == (op == IB_WR_RDMA_READ ? IB_WC_RDMA_READ :
				    IB_WC_RDMA_WRITE), "opcode %d", wc.opcode);
	return wc.status;
}

/*
 * @len bytes from @addr as @n SGEs (fewer if @len is shorter), each
 * SGE_GAP after the previous one: a gather/scatter that ignored SGE
 * boundaries would move the wrong bytes.  Returns the SGE count.
 */
static int mk_sges(struct ib_sge *sge, int n, u64 addr, u32 len, u32 lkey)
{
	u32 off = 0, piece;
	int i;

	if (n > len)
		n = len ? len : 1;
	piece = len / n;
	for (i = 0; i < n; i++) {
		sge[i].addr = addr + off + i * SGE_GAP;
		sge[i].length = i == n - 1 ? len - off : piece;
		sge[i].lkey = lkey;
		off += sge[i].length;
	}
	return n;
}

/* Byte @i of the stream an SGE list describes (kernel virtual: virt DMA). */
static u8 *sge_byte(const struct ib_sge *sge, int n, u32 i)
{
	int k;

	for (k = 0; k < n; k++) {
		if (i < sge[k].length)
			return (u8 *)(uintptr_t)sge[k].addr + i;
		i -= sge[k].length;
	}
	return NULL;
}

/* Data of two SGE lists equal over @len; first mismatch or -1. */
static long sge_cmp(const struct ib_sge *a, int na, const struct ib_sge *b,
		    int nb, u32 len)
{
	u32 i;

	for (i = 0; i < len; i++)
		if (*sge_byte(a, na, i) != *sge_byte(b, nb, i))
			return i;
	return -1;
}

/* Bytes of the gaps between and after @sge untouched (still 0)? */
static bool gaps_clean(const struct ib_sge *sge, int n)
{
	int k, j;

	for (k = 0; k < n; k++) {
		const u8 *end = (u8 *)(uintptr_t)(sge[k].addr + sge[k].length);

		for (j = 0; j < SGE_GAP; j++)
			if (end[j])
				return false;
	}
	return true;
}

/* ------------------------------------------------------------------ */
/* SEND/RECV, WRITE, READ with kernel buffers                          */
/* ------------------------------------------------------------------ */

static const u32 sizes[] = { 1, 7, 64, 1023, 1024, 1025, 4096, 12345, 65536,
			     MIB };

/* SEND of @len from side @from to the other side, @ns/@nr SGEs. */
static void test_send(struct pair *p, int from, u32 len, int ns, int nr)
{
	struct side *a = &S[from], *b = &S[!from];
	struct ib_qp *qa = p->qp[from], *qb = p->qp[!from];
	struct ib_sge ssge[MAX_SGE], rsge[MAX_SGE];
	struct ib_send_wr wr = {
		.wr_id = 0x5e0d,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
		.sg_list = ssge,
	};
	struct ib_wc wc;
	long bad;

	fill(a->buf, BUF_LEN, len);
	memset(b->buf, 0, BUF_LEN);
	wr.num_sge = mk_sges(ssge, ns, a->dma, len, a->pd->local_dma_lkey);
	nr = mk_sges(rsge, nr, b->dma + 3, len, b->pd->local_dma_lkey);
	if (!CHECK(!post_recv(qb, 0x7ec, rsge, nr), "post_recv"))
		return;
	if (!CHECK(!post(qa, &wr), "post_send"))
		return;
	expect_wc(qa->send_cq, 0x5e0d, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	if (!expect_wc(qb->recv_cq, 0x7ec, IB_WC_SUCCESS, IB_WC_RECV, &wc))
		return;
	CHECK(wc.byte_len == len && wc.qp == qb && !(wc.wc_flags &
	      (IB_WC_WITH_IMM | IB_WC_WITH_INVALIDATE)),
	      "len %u: byte_len %u flags %#x", len, wc.byte_len, wc.wc_flags);
	bad = sge_cmp(ssge, wr.num_sge, rsge, nr, len);
	CHECK(bad < 0, "SEND %u B (%d/%d SGEs): byte %ld differs", len,
	      wr.num_sge, nr, bad);
	CHECK(gaps_clean(rsge, nr) && !b->buf[0] && !b->buf[1] && !b->buf[2],
	      "SEND %u B wrote outside its receive SGEs", len);
}

/* WRITE of @len from side 0 at remote offset @roff of side 1's buffer. */
static void test_write(struct pair *p, u32 len, u32 roff, int ns)
{
	struct ib_sge sge[MAX_SGE], rsge = {
		.addr = S[1].dma + roff, .length = len,
	};
	long bad;
	int n;

	fill(S[0].buf, BUF_LEN, len + 1);
	memset(S[1].buf, 0, BUF_LEN);
	n = mk_sges(sge, ns, S[0].dma, len, S[0].pd->local_dma_lkey);
	if (!CHECK(rdma_op(p->qp[0], IB_WR_RDMA_WRITE, sge, n, rsge.addr,
			   S[1].pd->unsafe_global_rkey) == IB_WC_SUCCESS,
		   "WRITE %u B", len))
		return;
	bad = sge_cmp(sge, n, &rsge, 1, len);
	CHECK(bad < 0, "WRITE %u B (%d SGEs): byte %ld differs", len, n, bad);
	CHECK(!memchr_inv(S[1].buf, 0, roff) &&
	      !memchr_inv(S[1].buf + roff + len, 0, SGE_GAP),
	      "WRITE %u B wrote outside its target", len);
}

/* READ of @len from side 1's buffer at @roff into side 0, @ns SGEs. */
static void test_read(struct pair *p, u32 len, u32 roff, int ns)
{
	struct ib_sge sge[MAX_SGE], rsge = {
		.addr = S[1].dma + roff, .length = len,
	};
	long bad;
	int n;

	fill(S[1].buf, BUF_LEN, len + 2);
	memset(S[0].buf, 0, BUF_LEN);
	n = mk_sges(sge, ns, S[0].dma + 1, len, S[0].pd->local_dma_lkey);
	if (!CHECK(rdma_op(p->qp[0], IB_WR_RDMA_READ, sge, n, rsge.addr,
			   S[1].pd->unsafe_global_rkey) == IB_WC_SUCCESS,
		   "READ %u B", len))
		return;
	bad = sge_cmp(sge, n, &rsge, 1, len);
	CHECK(bad < 0, "READ %u B (%d SGEs): byte %ld differs", len, n, bad);
	CHECK(!S[0].buf[0] && gaps_clean(sge, n),
	      "READ %u B wrote outside its SGEs", len);
}

static void test_data_path(void)
{
	struct pair p;
	int i, before = atomic_read(&failures);

	if (!pair_new(&p))
		return;
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		u32 len = sizes[i];
		int ns = 1 + i % 4, nr = 1 + (i * 3) % MAX_SGE;

		test_send(&p, 0, len, ns, nr);
		test_write(&p, len, i % 2 ? 5 : 0, 1 + (i + 1) % MAX_SGE);
		test_read(&p, len, i % 2 ? 0 : 9, 1 + (i + 2) % 3);
	}
	/* and the other way round */
	test_send(&p, 1, 4096, 2, 3);
	test_send(&p, 1, MIB, 1, 1);
	CHECK(qp_state(p.qp[0]) == IB_QPS_RTS &&
	      qp_state(p.qp[1]) == IB_QPS_RTS, "QPs still RTS");
	pair_free(&p);
	pr_info("rctest: data path (SEND/WRITE/READ 1 B..1 MiB): %d failed\n",
		atomic_read(&failures) - before);
}

/* ------------------------------------------------------------------ */
/* Fast registration                                                   */
/* ------------------------------------------------------------------ */

#define FR_PAGES	4
#define FR_OFF		100		/* first byte within the first page */
#define FR_TAIL		2000		/* bytes used of the last page */
#define FR_LEN		(FR_PAGES * PAGE_SIZE - FR_OFF - (PAGE_SIZE - FR_TAIL))

struct fr {
	struct ib_mr *mr;
	struct page *pg[FR_PAGES];
	struct scatterlist sgl[FR_PAGES];
	int nents;
	u8 snap[FR_LEN];	/* expected content */
};

static u8 *fr_byte(struct fr *f, u32 off)
{
	off += FR_OFF;
	return (u8 *)page_address(f->pg[off / PAGE_SIZE]) + off % PAGE_SIZE;
}

static void fr_snapshot(struct fr *f)
{
	u32 i;

	for (i = 0; i < FR_LEN; i++)
		f->snap[i] = *fr_byte(f, i);
}

/* Region content still the snapshot?  First differing offset or -1. */
static long fr_diff(struct fr *f)
{
	u32 i;

	for (i = 0; i < FR_LEN; i++)
		if (f->snap[i] != *fr_byte(f, i))
			return i;
	return -1;
}

static void fr_free(struct fr *f)
{
	int i;

	if (f->mr && !IS_ERR(f->mr))
		ib_dereg_mr(f->mr);
	if (f->nents)
		ib_dma_unmap_sg(S[1].dev, f->sgl, FR_PAGES, DMA_BIDIRECTIONAL);
	for (i = 0; i < FR_PAGES; i++)
		if (f->pg[i])
			__free_page(f->pg[i]);
	kfree(f);
}

/* Four separate pages, the first used from FR_OFF, the last to FR_TAIL. */
static struct fr *fr_alloc(struct ib_pd *pd)
{
	struct fr *f = kzalloc(sizeof(*f), GFP_KERNEL);
	int i;

	if (!f)
		return NULL;
	sg_init_table(f->sgl, FR_PAGES);
	for (i = 0; i < FR_PAGES; i++) {
		f->pg[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!f->pg[i])
			goto err;
		sg_set_page(&f->sgl[i], f->pg[i],
			    i == 0 ? PAGE_SIZE - FR_OFF :
			    i == FR_PAGES - 1 ? FR_TAIL : PAGE_SIZE,
			    i == 0 ? FR_OFF : 0);
	}
	f->nents = ib_dma_map_sg(pd->device, f->sgl, FR_PAGES,
				 DMA_BIDIRECTIONAL);
	if (!f->nents)
		goto err;
	f->mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, FR_PAGES);
	if (IS_ERR(f->mr))
		goto err;
	return f;
err:
	fr_free(f);
	return NULL;
}

/* ib_map_mr_sg + IB_WR_REG_MR on @qp (side 1) with key byte @key. */
static bool fr_register(struct fr *f, struct ib_qp *qp, u8 key, int access)
{
	struct ib_reg_wr wr = {
		.wr = {
			.wr_id = 0x4e9,
			.opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED,
		},
		.mr = f->mr,
		.access = access,
	};
	int n;

	n = ib_map_mr_sg(f->mr, f->sgl, f->nents, NULL, PAGE_SIZE);
	if (!CHECK(n == f->nents, "ib_map_mr_sg: %d of %d", n, f->nents))
		return false;
	CHECK(f->mr->length == FR_LEN &&
	      f->mr->iova == sg_dma_address(&f->sgl[0]),
	      "mapped iova %#llx length %llu", f->mr->iova, f->mr->length);
	ib_update_fast_reg_key(f->mr, key);
	wr.key = f->mr->rkey;
	if (!CHECK(!post(qp, &wr.wr), "post REG_MR"))
		return false;
	return expect_wc(qp->send_cq, 0x4e9, IB_WC_SUCCESS, IB_WC_REG_MR,
			 NULL);
}

/*
 * IB_WR_REG_MR that must fail on @qp (side 1): an error completion, the QP
 * in ERR, the MR's key as before.
 */
static void fr_register_refused(struct fr *f, struct ib_qp *qp, u8 key,
				const char *what)
{
	struct ib_reg_wr wr = {
		.wr = {
			.wr_id = 0x4ea,
			.opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED,
		},
		.mr = f->mr,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE,
	};
	u8 old = f->mr->rkey & 0xff;
	struct ib_wc wc = {};
	int n;

	n = ib_map_mr_sg(f->mr, f->sgl, f->nents, NULL, PAGE_SIZE);
	CHECK(n == f->nents, "%s: ib_map_mr_sg %d", what, n);
	ib_update_fast_reg_key(f->mr, key);
	wr.key = f->mr->rkey;
	if (CHECK(!post(qp, &wr.wr), "%s: post", what))
		CHECK(!poll_one(qp->send_cq, &wc) && wc.wr_id == 0x4ea &&
		      wc.status != IB_WC_SUCCESS &&
		      wc.status != IB_WC_WR_FLUSH_ERR,
		      "%s: status %d (%s)", what, wc.status,
		      ib_wc_status_msg(wc.status));
	CHECK(wait_state(qp, IB_QPS_ERR) == IB_QPS_ERR, "%s: QP in ERR", what);
	ib_update_fast_reg_key(f->mr, old);
}

#define FR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ)

/* Side 0 writes and reads the whole region and across page boundaries. */
static void fr_data(struct pair *p, struct fr *f)
{
	struct ib_sge sge[MAX_SGE];
	u32 off, len, i;
	long bad;
	int n;

	fill(S[0].buf, BUF_LEN, 77);
	n = mk_sges(sge, 3, S[0].dma, FR_LEN, S[0].pd->local_dma_lkey);
	if (!CHECK(rdma_op(p->qp[0], IB_WR_RDMA_WRITE, sge, n, f->mr->iova,
			   f->mr->rkey) == IB_WC_SUCCESS, "WRITE fast-reg"))
		return;
	for (i = 0, bad = -1; i < FR_LEN && bad < 0; i++)
		if (*fr_byte(f, i) != *sge_byte(sge, n, i))
			bad = i;
	CHECK(bad < 0, "fast-reg WRITE: region byte %ld differs", bad);
	CHECK(!memchr_inv(page_address(f->pg[0]), 0, FR_OFF) &&
	      !memchr_inv(fr_byte(f, FR_LEN), 0, PAGE_SIZE - FR_TAIL),
	      "fast-reg WRITE outside the region's pages' used part");

	/* READ it all back, 2 SGEs. */
	memset(S[0].buf, 0, BUF_LEN);
	n = mk_sges(sge, 2, S[0].dma, FR_LEN, S[0].pd->local_dma_lkey);
	if (CHECK(rdma_op(p->qp[0], IB_WR_RDMA_READ, sge, n, f->mr->iova,
			  f->mr->rkey) == IB_WC_SUCCESS, "READ fast-reg")) {
		for (i = 0, bad = -1; i < FR_LEN && bad < 0; i++)
			if (*fr_byte(f, i) != *sge_byte(sge, n, i))
				bad = i;
		CHECK(bad < 0, "fast-reg READ: byte %ld differs", bad);
	}

	/* Small accesses straddling each page boundary. */
	for (i = 1; i < FR_PAGES; i++) {
		off = i * PAGE_SIZE - FR_OFF - 13;
		len = 40;
		fr_snapshot(f);
		fill(S[0].buf, 64, i * 31);
		sge[0].addr = S[0].dma;
		sge[0].length = len;
		sge[0].lkey = S[0].pd->local_dma_lkey;
		if (!CHECK(rdma_op(p->qp[0], IB_WR_RDMA_WRITE, sge, 1,
				   f->mr->iova + off, f->mr->rkey) ==
			   IB_WC_SUCCESS, "WRITE across page %u", i))
			return;
		memcpy(f->snap + off, S[0].buf, len);
		CHECK(fr_diff(f) < 0, "WRITE across page %u: byte %ld", i,
		      fr_diff(f));
		memset(S[0].buf + 128, 0, 64);
		sge[0].addr = S[0].dma + 128;
		if (CHECK(rdma_op(p->qp[0], IB_WR_RDMA_READ, sge, 1,
				  f->mr->iova + off - 1, f->mr->rkey) ==
			  IB_WC_SUCCESS, "READ across page %u", i))
			CHECK(!memcmp(S[0].buf + 128, f->snap + off - 1, len),
			      "READ across page %u", i);
	}
	/* The last byte, exactly. */
	fr_snapshot(f);
	S[0].buf[0] = 0xa5;
	sge[0].addr = S[0].dma;
	sge[0].length = 1;
	if (CHECK(rdma_op(p->qp[0], IB_WR_RDMA_WRITE, sge, 1,
			  f->mr->iova + FR_LEN - 1, f->mr->rkey) ==
		  IB_WC_SUCCESS, "WRITE last byte"))
		CHECK(*fr_byte(f, FR_LEN - 1) == 0xa5, "last byte");
}

/*
 * An access by side 0 through @rkey that must fail: IB_WC_REM_ACCESS_ERR,
 * the region unchanged, both QPs in ERR.  Uses (and frees) a fresh pair.
 */
static void fr_denied(struct fr *f, enum ib_wr_opcode op, u64 raddr,
		      u32 len, u32 rkey, const char *what)
{
	struct ib_sge sge = {
		.addr = S[0].dma, .length = len,
		.lkey = S[0].pd->local_dma_lkey,
	};
	enum ib_wc_status st;
	struct pair p;

	if (!pair_new(&p))
		return;
	fr_snapshot(f);
	fill(S[0].buf, len, 0x33);
	st = rdma_op(p.qp[0], op, &sge, 1, raddr, rkey);
	CHECK(st == IB_WC_REM_ACCESS_ERR, "%s: status %d (%s)", what, st,
	      ib_wc_status_msg(st));
	CHECK(fr_diff(f) < 0, "%s: region changed at %ld", what, fr_diff(f));
	CHECK(wait_state(p.qp[0], IB_QPS_ERR) == IB_QPS_ERR,
	      "%s: requester QP in ERR", what);
	CHECK(wait_state(p.qp[1], IB_QPS_ERR) == IB_QPS_ERR,
	      "%s: responder QP in ERR", what);
	pair_free(&p);
}

/* SEND_WITH_INV of @rkey from side 0 to side 1 over @p; side 1's WC. */
static bool send_inv(struct pair *p, u32 rkey, struct ib_wc *rwc,
		     enum ib_wc_status sstatus)
{
	struct ib_sge rsge = {
		.addr = S[1].dma, .length = 256,
		.lkey = S[1].pd->local_dma_lkey,
	}, ssge = {
		.addr = S[0].dma, .length = 32,
		.lkey = S[0].pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_id = 0x1a5,
		.opcode = IB_WR_SEND_WITH_INV,
		.send_flags = IB_SEND_SIGNALED,
		.sg_list = &ssge,
		.num_sge = 1,
		.ex.invalidate_rkey = rkey,
	};
	int err;

	if (!CHECK(!post_recv(p->qp[1], 0x1a6, &rsge, 1), "post_recv"))
		return false;
	err = post(p->qp[0], &wr);
	if (!CHECK(!err, "post SEND_WITH_INV: %d", err))
		return false;
	if (!expect_wc(S[0].cq, 0x1a5, sstatus, IB_WC_SEND, NULL))
		return false;
	return CHECK(!poll_one(S[1].cq, rwc) && rwc->wr_id == 0x1a6,
		     "receive completion of SEND_WITH_INV");
}

static void test_fast_reg(void)
{
	struct pair p;
	struct fr *f;
	struct ib_wc wc;
	u32 old_rkey;
	u8 key = get_random_u32() & 0xff;
	int before = atomic_read(&failures);

	f = fr_alloc(S[1].pd);
	if (!CHECK(f, "fast-reg MR"))
		return;
	/* FREE before REG_MR: no access. */
	fr_denied(f, IB_WR_RDMA_WRITE, sg_dma_address(&f->sgl[0]), 8,
		  f->mr->rkey, "WRITE to a never-registered MR");

	if (!pair_new(&p))
		goto out;
	if (!fr_register(f, p.qp[1], key, FR_ACCESS)) {
		pair_free(&p);
		goto out;
	}
	fr_data(&p, f);
	pair_free(&p);

	/* A VALID MR cannot be registered again; it keeps its key. */
	if (!pair_new(&p))
		goto out;
	fr_register_refused(f, p.qp[1], key + 1, "REG_MR of a VALID MR");
	pair_free(&p);
	if (!pair_new(&p))
		goto out;
	fr_data(&p, f);
	pair_free(&p);

	/* Outside [iova, iova + length): nothing written or read. */
	fr_denied(f, IB_WR_RDMA_WRITE, f->mr->iova + FR_LEN - 8, 16,
		  f->mr->rkey, "WRITE over the end");
	fr_denied(f, IB_WR_RDMA_WRITE, f->mr->iova - 1, 4, f->mr->rkey,
		  "WRITE before the start");
	fr_denied(f, IB_WR_RDMA_READ, f->mr->iova + 1, FR_LEN, f->mr->rkey,
		  "READ over the end");
	fr_denied(f, IB_WR_RDMA_WRITE, f->mr->iova, 8,
		  ib_inc_rkey(f->mr->rkey), "WRITE with a wrong key byte");

	/* SEND_WITH_INV: the receiver learns which rkey went away. */
	if (!pair_new(&p))
		goto out;
	if (send_inv(&p, f->mr->rkey, &wc, IB_WC_SUCCESS))
		CHECK(wc.status == IB_WC_SUCCESS && wc.opcode == IB_WC_RECV &&
		      (wc.wc_flags & IB_WC_WITH_INVALIDATE) &&
		      wc.ex.invalidate_rkey == f->mr->rkey && wc.byte_len == 32,
		      "SEND_WITH_INV receive: status %d opcode %d flags %#x rkey %#x/%#x len %u",
		      wc.status, wc.opcode, wc.wc_flags, wc.ex.invalidate_rkey,
		      f->mr->rkey, wc.byte_len);
	CHECK(qp_state(p.qp[1]) == IB_QPS_RTS, "receiver still RTS");
	pair_free(&p);
	fr_denied(f, IB_WR_RDMA_WRITE, f->mr->iova, 8, f->mr->rkey,
		  "WRITE after SEND_WITH_INV");
	fr_denied(f, IB_WR_RDMA_READ, f->mr->iova, 8, f->mr->rkey,
		  "READ after SEND_WITH_INV");

	/* New key byte, registered again: usable, the old key is not. */
	old_rkey = f->mr->rkey;
	if (!pair_new(&p))
		goto out;
	if (!fr_register(f, p.qp[1], ++key, FR_ACCESS)) {
		pair_free(&p);
		goto out;
	}
	CHECK(f->mr->rkey != old_rkey, "key byte changed");
	fr_data(&p, f);
	pair_free(&p);
	fr_denied(f, IB_WR_RDMA_WRITE, f->mr->iova, 8, old_rkey,
		  "WRITE through the pre-invalidation rkey");

	/* LOCAL_INV by the owner, then the same again. */
	if (!pair_new(&p))
		goto out;
	{
		struct ib_send_wr inv = {
			.wr_id = 0x10c,
			.opcode = IB_WR_LOCAL_INV,
			.send_flags = IB_SEND_SIGNALED,
			.ex.invalidate_rkey = f->mr->rkey,
		};

		if (CHECK(!post(p.qp[1], &inv), "post LOCAL_INV"))
			expect_wc(S[1].cq, 0x10c, IB_WC_SUCCESS,
				  IB_WC_LOCAL_INV, NULL);
	}
	pair_free(&p);
	fr_denied(f, IB_WR_RDMA_READ, f->mr->iova, 8, f->mr->rkey,
		  "READ after LOCAL_INV");
	fr_denied(f, IB_WR_RDMA_WRITE, f->mr->iova + PAGE_SIZE, 8, f->mr->rkey,
		  "WRITE after LOCAL_INV");
	if (!pair_new(&p))
		goto out;
	if (fr_register(f, p.qp[1], ++key, FR_ACCESS))
		fr_data(&p, f);
	pair_free(&p);
out:
	fr_free(f);
	pr_info("rctest: fast registration and invalidation: %d failed\n",
		atomic_read(&failures) - before);
}

/*
 * A fast-reg MR of blocks smaller than a page, as a ULP with 512-byte
 * sectors maps it (ib_map_mr_sg with page_size 512): two blocks in two
 * pages, neither filling its page.  A WRITE and a READ of both must move
 * each half through its own block and touch nothing else of the pages.
 */
/* First offset where @a and @b differ, or -1. */
static long mem_diff(const u8 *a, const u8 *b, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (a[i] != b[i])
			return i;
	return -1;
}

#define FRB_BLOCK	512
#define FRB_OFF0	FRB_BLOCK		/* block 0 within page 0 */
#define FRB_OFF1	(2 * FRB_BLOCK)		/* block 1 within page 1 */

static void test_fast_reg_blocks(void)
{
	struct ib_sge sge = {
		.addr = S[0].dma, .length = 2 * FRB_BLOCK,
		.lkey = S[0].pd->local_dma_lkey,
	};
	struct ib_reg_wr wr = {
		.wr = {
			.wr_id = 0x4eb,
			.opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED,
		},
		.access = FR_ACCESS,
	};
	int before = atomic_read(&failures);
	struct scatterlist sgl[2];
	struct page *pg[2] = {};
	struct ib_mr *mr = NULL;
	u8 *b0, *b1, *expect;
	struct pair p;
	int i, n, nents = 0;

	expect = kzalloc(2 * PAGE_SIZE, GFP_KERNEL);
	for (i = 0; i < 2; i++)
		pg[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!CHECK(expect && pg[0] && pg[1], "pages"))
		goto out;
	b0 = page_address(pg[0]) + FRB_OFF0;
	b1 = page_address(pg[1]) + FRB_OFF1;
	sg_init_table(sgl, 2);
	sg_set_page(&sgl[0], pg[0], FRB_BLOCK, FRB_OFF0);
	sg_set_page(&sgl[1], pg[1], FRB_BLOCK, FRB_OFF1);
	nents = ib_dma_map_sg(S[1].dev, sgl, 2, DMA_BIDIRECTIONAL);
	if (!CHECK(nents == 2, "map 2 blocks: %d", nents))
		goto out;
	mr = ib_alloc_mr(S[1].pd, IB_MR_TYPE_MEM_REG, 2);
	if (!CHECK(!IS_ERR(mr), "alloc_mr: %ld", PTR_ERR(mr))) {
		mr = NULL;
		goto out;
	}
	n = ib_map_mr_sg(mr, sgl, nents, NULL, FRB_BLOCK);
	if (!CHECK(n == 2 && mr->length == 2 * FRB_BLOCK,
		   "ib_map_mr_sg 512: %d, length %llu", n, mr->length))
		goto out;
	if (!pair_new(&p))
		goto out;
	wr.mr = mr;
	wr.key = mr->rkey;
	if (!CHECK(!post(p.qp[1], &wr.wr), "post REG_MR") ||
	    !expect_wc(S[1].cq, 0x4eb, IB_WC_SUCCESS, IB_WC_REG_MR, NULL))
		goto out_pair;

	/* The expected pages: block 0 gets the first half, block 1 the rest. */
	fill(S[0].buf, 2 * FRB_BLOCK, 0x5a);
	memcpy(expect + FRB_OFF0, S[0].buf, FRB_BLOCK);
	memcpy(expect + PAGE_SIZE + FRB_OFF1, S[0].buf + FRB_BLOCK, FRB_BLOCK);
	if (CHECK(rdma_op(p.qp[0], IB_WR_RDMA_WRITE, &sge, 1, mr->iova,
			  mr->rkey) == IB_WC_SUCCESS, "WRITE over 2 blocks")) {
		CHECK(!memcmp(page_address(pg[0]), expect, PAGE_SIZE),
		      "WRITE over 2 blocks: page of block 0 differs at %ld",
		      mem_diff(page_address(pg[0]), expect, PAGE_SIZE));
		CHECK(!memcmp(page_address(pg[1]), expect + PAGE_SIZE,
			      PAGE_SIZE),
		      "WRITE over 2 blocks: page of block 1 differs at %ld",
		      mem_diff(page_address(pg[1]), expect + PAGE_SIZE,
			       PAGE_SIZE));
	}
	memset(S[0].buf, 0, 2 * FRB_BLOCK);
	if (CHECK(rdma_op(p.qp[0], IB_WR_RDMA_READ, &sge, 1, mr->iova,
			  mr->rkey) == IB_WC_SUCCESS, "READ over 2 blocks"))
		CHECK(!memcmp(S[0].buf, b0, FRB_BLOCK) &&
		      !memcmp(S[0].buf + FRB_BLOCK, b1, FRB_BLOCK),
		      "READ over 2 blocks: data differs");

	/* A short WRITE across the block boundary. */
	fill(S[0].buf, 64, 0x21);
	memcpy(expect + FRB_OFF0 + FRB_BLOCK - 24, S[0].buf, 24);
	memcpy(expect + PAGE_SIZE + FRB_OFF1, S[0].buf + 24, 40);
	sge.length = 64;
	if (CHECK(rdma_op(p.qp[0], IB_WR_RDMA_WRITE, &sge, 1,
			  mr->iova + FRB_BLOCK - 24, mr->rkey) ==
		  IB_WC_SUCCESS, "WRITE across the block boundary"))
		CHECK(!memcmp(page_address(pg[0]), expect, PAGE_SIZE) &&
		      !memcmp(page_address(pg[1]), expect + PAGE_SIZE,
			      PAGE_SIZE),
		      "WRITE across the block boundary: pages differ");
out_pair:
	pair_free(&p);
out:
	if (mr)
		ib_dereg_mr(mr);
	if (nents)
		ib_dma_unmap_sg(S[1].dev, sgl, 2, DMA_BIDIRECTIONAL);
	for (i = 0; i < 2; i++)
		if (pg[i])
			__free_page(pg[i]);
	kfree(expect);
	pr_info("rctest: fast-reg MR of 512-byte blocks: %d failed\n",
		atomic_read(&failures) - before);
}

/*
 * Invalidation while a WRITE is being placed.  Side 0 streams 8 KiB
 * WRITEs (8 packets each, placed on the receive steering CPU) into a
 * fast-reg MR of side 1, each with other data, while side 1's MR is
 * invalidated: LOCAL_INV on the target QP, or SEND_WITH_INV from side 0
 * over a second QP pair.  The completion handler of the invalidation's
 * CQ records the MR's last bytes of each packet's slot as the completion
 * is posted, when a ULP may free the pages.  Once the stream has stopped
 * (the responder NAKs the first WRITE it checks after the invalidation),
 * those bytes must be unchanged: nothing lands after the completion.
 * Each try races once; some must have invalidated mid-stream.  The
 * SEND_WITH_INV is posted from each CPU in turn: it is executed in the
 * softirq of the CPU it is sent from, which must at times not be the
 * one placing the WRITEs.
 */
#define INV_PKT		1024		/* the path MTU qp_connect sets */
#define INV_SLOTS	8
#define INV_WRITE	(INV_SLOTS * INV_PKT)
#define INV_WRITES	32
#define INV_TRIES	40

static struct {
	struct fr *f;
	u64 want;			/* wr_id of this try's invalidation */
	struct ib_wc wc;		/* its completion */
	struct completion seen;
	u8 tail[INV_SLOTS][8];
} inv_race;

static void inv_tails(u8 (*tail)[8])
{
	int i, k;

	for (i = 0; i < INV_SLOTS; i++)
		for (k = 0; k < 8; k++)
			tail[i][k] = *fr_byte(inv_race.f,
					      (i + 1) * INV_PKT - 8 + k);
}

/*
 * Runs where a CQE is posted, right after it (or late, if its CPU was
 * held up: then it may find the CQE of a later try, which it records no
 * earlier than that CQE was posted).  The invalidation's CQE is taken
 * here, and the memory recorded.
 */
static void inv_comp(struct ib_cq *cq, void *ctx)
{
	struct ib_wc wc;

	while (ib_poll_cq(cq, 1, &wc) > 0) {
		if (wc.wr_id != READ_ONCE(inv_race.want))
			continue;
		inv_tails(inv_race.tail);
		inv_race.wc = wc;
		complete(&inv_race.seen);
	}
}

/*
 * One try; @icq is the CQ the invalidation completes on.  Returns 1 if
 * the invalidation came mid-stream, 0 if after it, -1 if the try failed.
 */
static int inv_try(struct ib_cq *icq, bool remote, u8 key, int try)
{
	struct ib_sge sge = { .length = INV_WRITE,
			      .lkey = S[0].pd->local_dma_lkey };
	struct ib_sge rsge = { .length = 256,
			       .lkey = S[1].pd->local_dma_lkey };
	struct ib_rdma_wr wr = {
		.wr = { .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED,
			.sg_list = &sge, .num_sge = 1 },
	};
	struct ib_send_wr inv = {
		.wr_id = 0x10d, .opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
	};
	/* the completion that counts, told apart from other tries' */
	u64 want = (u64)(try + 1) << 16 | remote << 8 | 0x0d;
	struct fr *f = inv_race.f;
	u8 now[INV_SLOTS][8];
	struct pair p, q = {};
	int i, ret = -1, writes = 0, failed = 0;
	struct ib_wc wc;

	if (!CHECK(!pair_new_cq(&p, S[1].pd, S[0].cq, S[0].cq,
				remote ? S[1].cq : icq, S[1].cq), "pair"))
		return -1;
	/* REG_MR through the second pair: icq gets the invalidation only */
	if (!CHECK(!pair_new_cq(&q, S[1].pd, S[0].cq, S[0].cq, S[1].cq,
				remote ? icq : S[1].cq), "second pair"))
		goto out;
	if (!fr_register(f, q.qp[1], key, FR_ACCESS))
		goto out;
	for (i = 0; i < INV_WRITES; i++) {
		fill(S[0].buf + i * INV_WRITE, INV_WRITE,
		     try * INV_WRITES + i);
		sge.addr = S[0].dma + i * INV_WRITE;
		wr.wr.wr_id = 0x900 + i;
		wr.remote_addr = f->mr->iova;
		wr.rkey = f->mr->rkey;
		if (!CHECK(!post(p.qp[0], &wr.wr), "post WRITE %d", i))
			goto out;
	}
	/* the stream runs: the first WRITE is acknowledged */
	if (!expect_wc(S[0].cq, 0x900, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, NULL))
		goto out;

	reinit_completion(&inv_race.seen);
	WRITE_ONCE(inv_race.want, want);
	ib_req_notify_cq(icq, IB_CQ_NEXT_COMP);
	inv.ex.invalidate_rkey = f->mr->rkey;
	if (remote) {
		/* its send completion goes among the WRITEs' */
		set_cpus_allowed_ptr(current,
				     cpumask_of(cpumask_nth(try % num_online_cpus(),
							    cpu_online_mask)));
		inv.opcode = IB_WR_SEND_WITH_INV;
		inv.sg_list = &sge;
		inv.num_sge = 1;
		sge.addr = S[0].dma;
		sge.length = 32;
		rsge.addr = S[1].dma;
		if (!CHECK(!post_recv(q.qp[1], want, &rsge, 1), "post_recv") ||
		    !CHECK(!post(q.qp[0], &inv), "post SEND_WITH_INV"))
			goto out;
	} else {
		inv.wr_id = want;
		if (!CHECK(!post(p.qp[1], &inv), "post LOCAL_INV"))
			goto out;
	}
	if (!CHECK(wait_for_completion_timeout(&inv_race.seen,
					       msecs_to_jiffies(WAIT_MS)),
		   "invalidation completed"))
		goto out;
	wc = inv_race.wc;
	if (!CHECK(wc.status == IB_WC_SUCCESS &&
		   (!remote || (wc.wc_flags & IB_WC_WITH_INVALIDATE)),
		   "invalidation: status %d flags %#x", wc.status, wc.wc_flags))
		goto out;

	/* every other WRITE completes: done before, or NAKed, or flushed */
	while (writes < INV_WRITES - 1) {
		if (!CHECK(!poll_one(S[0].cq, &wc), "WRITE completions"))
			goto out;
		if (wc.wr_id == 0x10d)
			continue;	/* the SEND_WITH_INV */
		writes++;
		failed += wc.status != IB_WC_SUCCESS;
	}
	inv_tails(now);
	for (i = 0; i < INV_SLOTS; i++)
		CHECK(!memcmp(now[i], inv_race.tail[i], 8),
		      "%s: packet %d of a WRITE landed after the invalidation completed",
		      remote ? "SEND_WITH_INV" : "LOCAL_INV", i);
	ret = failed > 0;
out:
	set_cpus_allowed_ptr(current, cpu_possible_mask);
	WRITE_ONCE(inv_race.want, 0);
	if (q.qp[0])
		pair_free(&q);
	pair_free(&p);
	cq_discard(icq);
	return ret;
}

static void test_inv_in_flight(void)
{
	struct ib_cq_init_attr cqa = { .cqe = 2 * QP_DEPTH };
	int before = atomic_read(&failures);
	u8 key = get_random_u32() & 0xff;
	int raced[2] = {}, remote, try, r;
	struct ib_cq *icq;

	init_completion(&inv_race.seen);
	inv_race.f = fr_alloc(S[1].pd);
	if (!CHECK(inv_race.f, "fast-reg MR"))
		return;
	icq = ib_create_cq(S[1].dev, inv_comp, NULL, NULL, &cqa);
	if (!CHECK(!IS_ERR(icq), "CQ"))
		goto out;
	for (remote = 0; remote < 2; remote++) {
		for (try = 0; try < INV_TRIES; try++) {
			r = inv_try(icq, remote, ++key, try);
			if (r < 0)
				break;
			raced[remote] += r;
		}
		CHECK(raced[remote] > 0,
		      "%s: no try invalidated during the stream (%d tries)",
		      remote ? "SEND_WITH_INV" : "LOCAL_INV", try);
	}
	ib_destroy_cq(icq);
out:
	fr_free(inv_race.f);
	inv_race.f = NULL;
	pr_info("rctest: invalidation during WRITEs (%d, %d of %d mid-stream): %d failed\n",
		raced[0], raced[1], INV_TRIES, atomic_read(&failures) - before);
}

/*
 * SEND_WITH_INV naming a key the responder may not invalidate: a
 * fast-reg MR of another PD, the PD's DMA MR.  IBTA: the responder
 * answers with an Invalid Request NAK (requester: IB_WC_REM_INV_REQ_ERR),
 * both QPs go to ERR, the receive WQE completes in error, and the key
 * stays valid.
 */
static void inv_refused(u32 rkey, const char *what)
{
	struct pair p;
	struct ib_wc wc;

	if (!pair_new(&p))
		return;
	if (send_inv(&p, rkey, &wc, IB_WC_REM_INV_REQ_ERR))
		CHECK(wc.status == IB_WC_REM_INV_REQ_ERR,
		      "%s: receive status %d (%s)", what, wc.status,
		      ib_wc_status_msg(wc.status));
	CHECK(wait_state(p.qp[0], IB_QPS_ERR) == IB_QPS_ERR,
	      "%s: requester QP in ERR", what);
	CHECK(wait_state(p.qp[1], IB_QPS_ERR) == IB_QPS_ERR,
	      "%s: responder QP in ERR", what);
	pair_free(&p);
}

static void test_inv_errors(void)
{
	struct ib_sge sge = {
		.addr = S[0].dma, .length = 64,
		.lkey = S[0].pd->local_dma_lkey,
	};
	struct pair p2, p;
	struct fr *f;
	int before = atomic_read(&failures);

	/* A fast-reg MR of pd2, registered through a QP of pd2. */
	f = fr_alloc(S[1].pd2);
	if (!CHECK(f, "fast-reg MR in pd2"))
		return;
	/* REG_MR through a QP of another PD: refused. */
	if (pair_new(&p)) {
		fr_register_refused(f, p.qp[1], 0x41,
				    "REG_MR by a QP of another PD");
		pair_free(&p);
	}
	ib_update_fast_reg_key(f->mr, 0x41);
	fr_denied(f, IB_WR_RDMA_WRITE, sg_dma_address(&f->sgl[0]), 8,
		  f->mr->rkey, "WRITE after a refused REG_MR");
	if (!pair_new_pd(&p2, S[1].pd2))
		goto out;
	if (!fr_register(f, p2.qp[1], 0x42, FR_ACCESS))
		goto out_p2;

	inv_refused(f->mr->rkey, "SEND_WITH_INV of another PD's MR");
	fill(S[0].buf, 64, 9);
	CHECK(rdma_op(p2.qp[0], IB_WR_RDMA_WRITE, &sge, 1, f->mr->iova,
		      f->mr->rkey) == IB_WC_SUCCESS &&
	      !memcmp(fr_byte(f, 0), S[0].buf, 64),
	      "other PD's MR still valid");

	inv_refused(S[1].pd->unsafe_global_rkey,
		    "SEND_WITH_INV of the DMA MR");
	inv_refused(S[1].pd->unsafe_global_rkey ^ 0x80,
		    "SEND_WITH_INV of an unknown key");
	if (pair_new(&p)) {
		fill(S[0].buf, 64, 10);
		memset(S[1].buf, 0, 64);
		CHECK(rdma_op(p.qp[0], IB_WR_RDMA_WRITE, &sge, 1, S[1].dma,
			      S[1].pd->unsafe_global_rkey) == IB_WC_SUCCESS &&
		      !memcmp(S[1].buf, S[0].buf, 64), "DMA MR still valid");
		pair_free(&p);
	}
out_p2:
	ib_destroy_qp(p2.qp[0]);
	ib_destroy_qp(p2.qp[1]);
	cq_discard(S[0].cq);
	cq_discard(S[1].cq);
out:
	fr_free(f);
	pr_info("rctest: refused invalidations: %d failed\n",
		atomic_read(&failures) - before);
}

/* ------------------------------------------------------------------ */
/* Atomics                                                             */
/* ------------------------------------------------------------------ */

static enum ib_wc_status atomic_op(struct ib_qp *qp, enum ib_wr_opcode op,
				   u64 raddr, u32 rkey, u64 cmp_add, u64 swap,
				   u64 *result)
{
	struct ib_sge sge = {
		.addr = S[0].dma + 64, .length = 8,
		.lkey = S[0].pd->local_dma_lkey,
	};
	struct ib_atomic_wr wr = {
		.wr = {
			.wr_id = 0xa70,
			.opcode = op,
			.send_flags = IB_SEND_SIGNALED,
			.sg_list = &sge,
			.num_sge = 1,
		},
		.remote_addr = raddr,
		.rkey = rkey,
		.compare_add = cmp_add,
		.swap = swap,
	};
	struct ib_wc wc = {};

	*(u64 *)(S[0].buf + 64) = 0xdeadbeefdeadbeefULL;
	if (!CHECK(!post(qp, &wr.wr), "post atomic"))
		return -1;
	if (!CHECK(!poll_one(S[0].cq, &wc) && wc.wr_id == 0xa70,
		   "atomic completion"))
		return -1;
	if (wc.status == IB_WC_SUCCESS)
		CHECK(wc.opcode == (op == IB_WR_ATOMIC_CMP_AND_SWP ?
				    IB_WC_COMP_SWAP : IB_WC_FETCH_ADD),
		      "atomic opcode %d", wc.opcode);
	*result = *(u64 *)(S[0].buf + 64);
	return wc.status;
}

static void test_atomics(void)
{
	struct pair p;
	struct fr *f;
	u64 *word, res, raddr;
	int before = atomic_read(&failures);

	f = fr_alloc(S[1].pd);
	if (!CHECK(f, "atomic MR"))
		return;
	if (!pair_new(&p))
		goto out;
	if (!fr_register(f, p.qp[1], 7, IB_ACCESS_LOCAL_WRITE |
			 IB_ACCESS_REMOTE_ATOMIC | IB_ACCESS_REMOTE_READ))
		goto out_p;
	/* an 8-byte aligned word in the second page */
	raddr = f->mr->iova + PAGE_SIZE - FR_OFF + 8;
	word = (u64 *)fr_byte(f, PAGE_SIZE - FR_OFF + 8);
	*word = 0x1122334455667788ULL;

	CHECK(atomic_op(p.qp[0], IB_WR_ATOMIC_FETCH_AND_ADD, raddr,
			f->mr->rkey, 5, 0, &res) == IB_WC_SUCCESS &&
	      res == 0x1122334455667788ULL &&
	      *word == 0x112233445566778dULL,
	      "fetch-add: got %#llx, word %#llx", res, *word);
	CHECK(atomic_op(p.qp[0], IB_WR_ATOMIC_CMP_AND_SWP, raddr,
			f->mr->rkey, 0x112233445566778dULL, 42, &res) ==
	      IB_WC_SUCCESS && res == 0x112233445566778dULL && *word == 42,
	      "cmp-swap hit: got %#llx, word %#llx", res, *word);
	CHECK(atomic_op(p.qp[0], IB_WR_ATOMIC_CMP_AND_SWP, raddr,
			f->mr->rkey, 41, 7, &res) == IB_WC_SUCCESS &&
	      res == 42 && *word == 42,
	      "cmp-swap miss: got %#llx, word %#llx", res, *word);
	CHECK(atomic_op(p.qp[0], IB_WR_ATOMIC_FETCH_AND_ADD, raddr,
			f->mr->rkey, -42ULL, 0, &res) == IB_WC_SUCCESS &&
	      res == 42 && *word == 0,
	      "fetch-add wraps: got %#llx, word %#llx", res, *word);
	pair_free(&p);

	/* The PD's DMA MR grants remote read/write, not atomics. */
	if (!pair_new(&p))
		goto out;
	*(u64 *)(S[1].buf + 256) = 99;
	CHECK(atomic_op(p.qp[0], IB_WR_ATOMIC_FETCH_AND_ADD, S[1].dma + 256,
			S[1].pd->unsafe_global_rkey, 1, 0, &res) ==
	      IB_WC_REM_ACCESS_ERR && *(u64 *)(S[1].buf + 256) == 99,
	      "atomic through the DMA MR refused, word %llu",
	      *(u64 *)(S[1].buf + 256));
out_p:
	pair_free(&p);
out:
	fr_free(f);
	pr_info("rctest: atomics: %d failed\n", atomic_read(&failures) - before);
}

/* ------------------------------------------------------------------ */
/* ULP I/O patterns                                                    */
/* ------------------------------------------------------------------ */

/* What side 1 tells side 0 about a buffer it registered (like nvme-rdma's
 * keyed SGL descriptor). */
struct desc {
	u64 addr;
	u32 rkey;
	u32 len;
};

/*
 * nvme-rdma/xprtrdma style I/O rounds: side 1 posts [LOCAL_INV of the
 * previous key (unless invalidated remotely), REG_MR, SEND of the
 * descriptor] as one chain, only the SEND signaled; side 0 WRITEs through
 * the descriptor at once and answers with SEND_WITH_INV (odd rounds) or a
 * SEND; side 1 checks the data and the invalidated rkey.  Each context
 * has its own QP pair, CQs, MR and 64 KiB slice of both buffers, so
 * several run at once (one per "hardware queue").
 */
#define IO_SLICE	(64 * 1024)

struct io_ctx {
	struct pair p;
	struct ib_cq *cq[2];
	struct fr *f;
	u32 off;		/* slice of S[i].buf */
	u32 prev;		/* key still VALID from the last round */
	int rounds, bad_rounds;
	struct completion done;
};

/* One round; false (with a CHECK failed) if it went wrong. */
static bool io_round(struct io_ctx *c, int round)
{
	struct ib_sge dsge, rsge, wsge;
	struct ib_send_wr send, inv;
	struct ib_reg_wr reg;
	const struct ib_send_wr *badw;
	bool remote_inv = round & 1;
	struct fr *f = c->f;
	u64 dma0 = S[0].dma + c->off, dma1 = S[1].dma + c->off;
	u8 *buf0 = S[0].buf + c->off, *buf1 = S[1].buf + c->off;
	struct desc *d;
	struct ib_wc wc;
	long bad;
	u32 i;

	/* side 0: a receive for the descriptor; side 1: for the answer */
	rsge = (struct ib_sge){ .addr = dma0 + IO_SLICE - 64, .length = 64,
				.lkey = S[0].pd->local_dma_lkey };
	if (!CHECK(!post_recv(c->p.qp[0], 0xd0, &rsge, 1), "recv"))
		return false;
	rsge = (struct ib_sge){ .addr = dma1 + IO_SLICE - 64, .length = 64,
				.lkey = S[1].pd->local_dma_lkey };
	if (!CHECK(!post_recv(c->p.qp[1], 0xd1, &rsge, 1), "recv"))
		return false;

	/* side 1: [LOCAL_INV,] REG_MR, SEND descriptor */
	if (!CHECK(ib_map_mr_sg(f->mr, f->sgl, f->nents, NULL, PAGE_SIZE) ==
		   f->nents, "map"))
		return false;
	ib_update_fast_reg_key(f->mr, ib_inc_rkey(f->mr->rkey));
	d = (struct desc *)(buf1 + IO_SLICE - 128);
	d->addr = f->mr->iova;
	d->rkey = f->mr->rkey;
	d->len = FR_LEN;
	dsge = (struct ib_sge){ .addr = dma1 + IO_SLICE - 128,
				.length = sizeof(*d),
				.lkey = S[1].pd->local_dma_lkey };
	send = (struct ib_send_wr){ .wr_id = 0x5d, .opcode = IB_WR_SEND,
				    .send_flags = IB_SEND_SIGNALED,
				    .sg_list = &dsge, .num_sge = 1 };
	reg = (struct ib_reg_wr){
		.wr = { .wr_id = 0x4d, .opcode = IB_WR_REG_MR, .next = &send },
		.mr = f->mr, .key = f->mr->rkey, .access = FR_ACCESS,
	};
	inv = (struct ib_send_wr){ .wr_id = 0x1d, .opcode = IB_WR_LOCAL_INV,
				   .ex.invalidate_rkey = c->prev,
				   .next = &reg.wr };
	if (!CHECK(!ib_post_send(c->p.qp[1], c->prev ? &inv : &reg.wr, &badw),
		   "round %d: post chain", round))
		return false;

	/* side 0: the descriptor, then a WRITE through it at once */
	if (!expect_wc(c->cq[0], 0xd0, IB_WC_SUCCESS, IB_WC_RECV, &wc))
		return false;
	d = (struct desc *)(buf0 + IO_SLICE - 64);
	fill(buf0, FR_LEN, round * 3 + c->off / IO_SLICE);
	wsge = (struct ib_sge){ .addr = dma0, .length = d->len,
				.lkey = S[0].pd->local_dma_lkey };
	if (!CHECK(rdma_op(c->p.qp[0], IB_WR_RDMA_WRITE, &wsge, 1, d->addr,
			   d->rkey) == IB_WC_SUCCESS,
		   "round %d: WRITE through the fresh rkey", round))
		return false;
	/* side 0 answers */
	dsge = (struct ib_sge){ .addr = dma0, .length = 16,
				.lkey = S[0].pd->local_dma_lkey };
	send = (struct ib_send_wr){
		.wr_id = 0x5e, .send_flags = IB_SEND_SIGNALED,
		.opcode = remote_inv ? IB_WR_SEND_WITH_INV : IB_WR_SEND,
		.ex.invalidate_rkey = remote_inv ? d->rkey : 0,
		.sg_list = &dsge, .num_sge = 1,
	};
	if (!CHECK(!post(c->p.qp[0], &send), "answer"))
		return false;
	if (!expect_wc(c->cq[0], 0x5e, IB_WC_SUCCESS, IB_WC_SEND, NULL))
		return false;

	/*
	 * side 1: its SEND's completion (on the ACK) and the answer, in
	 * either order: one CQ, two queues.
	 */
	{
		struct ib_wc w2[2] = {};
		int k, got = 0;

		for (k = 0; k < 2; k++)
			got += !poll_one(c->cq[1], &w2[k]);
		k = w2[0].wr_id == 0xd1 ? 0 : 1;
		wc = w2[k];
		if (!CHECK(got == 2 && w2[!k].wr_id == 0x5d &&
			   w2[!k].status == IB_WC_SUCCESS &&
			   w2[!k].opcode == IB_WC_SEND && wc.wr_id == 0xd1 &&
			   wc.status == IB_WC_SUCCESS &&
			   wc.opcode == IB_WC_RECV,
			   "round %d: %d CQEs %#llx/%d %#llx/%d", round, got,
			   w2[0].wr_id, w2[0].status, w2[1].wr_id,
			   w2[1].status))
			return false;
	}
	if (!CHECK(remote_inv ? (wc.wc_flags & IB_WC_WITH_INVALIDATE) &&
		   wc.ex.invalidate_rkey == f->mr->rkey :
		   !(wc.wc_flags & IB_WC_WITH_INVALIDATE),
		   "round %d: flags %#x rkey %#x", round, wc.wc_flags,
		   wc.ex.invalidate_rkey))
		return false;
	for (i = 0, bad = -1; i < FR_LEN && bad < 0; i++)
		if (*fr_byte(f, i) != buf0[i])
			bad = i;
	/* not invalidated remotely: the next chain does it */
	c->prev = remote_inv ? 0 : f->mr->rkey;
	return CHECK(bad < 0, "round %d: byte %ld differs", round, bad);
}

static void test_io_chain(void)
{
	struct io_ctx c = { .cq = { S[0].cq, S[1].cq } };
	int round, before = atomic_read(&failures);

	c.f = fr_alloc(S[1].pd);
	if (!CHECK(c.f, "fast-reg MR") || !pair_new(&c.p))
		goto out;
	for (round = 0; round < 12; round++)
		if (!io_round(&c, round))
			break;
	CHECK(qp_state(c.p.qp[0]) == IB_QPS_RTS &&
	      qp_state(c.p.qp[1]) == IB_QPS_RTS, "QPs still RTS");
	pair_free(&c.p);
out:
	if (c.f)
		fr_free(c.f);
	pr_info("rctest: chained REG_MR/SEND/SEND_WITH_INV I/O: %d failed\n",
		atomic_read(&failures) - before);
}

/* 8 I/O queues at once, one kthread each: key table and QPs under load. */
#define IO_QUEUES	8
#define IO_ROUNDS	40

static int io_thread(void *arg)
{
	struct io_ctx *c = arg;
	int round;

	for (round = 0; round < IO_ROUNDS; round++) {
		if (!io_round(c, round)) {
			c->bad_rounds++;
			break;
		}
		c->rounds++;
	}
	complete(&c->done);
	return 0;
}

static void test_io_queues(void)
{
	struct ib_cq_init_attr cqa = { .cqe = 2 * QP_DEPTH };
	struct io_ctx *c = kcalloc(IO_QUEUES, sizeof(*c), GFP_KERNEL);
	int i, k, started = 0, total = 0, before = atomic_read(&failures);
	unsigned long t0;

	if (!CHECK(c, "alloc"))
		return;
	for (i = 0; i < IO_QUEUES; i++) {
		c[i].off = i * IO_SLICE;
		init_completion(&c[i].done);
		for (k = 0; k < 2; k++) {
			c[i].cq[k] = ib_create_cq(S[k].dev, rc_comp, NULL, NULL,
						  &cqa);
			if (!CHECK(!IS_ERR(c[i].cq[k]), "CQ")) {
				c[i].cq[k] = NULL;
				goto out;
			}
		}
		c[i].f = fr_alloc(S[1].pd);
		if (!CHECK(c[i].f, "MR"))
			goto out;
		if (!CHECK(!pair_new_cq(&c[i].p, S[1].pd, c[i].cq[0],
					c[i].cq[0], c[i].cq[1], c[i].cq[1]),
			   "pair %d", i))
			goto out;
	}
	t0 = jiffies;
	for (i = 0; i < IO_QUEUES; i++) {
		struct task_struct *t = kthread_run(io_thread, &c[i],
						    "rctest_io%d", i);

		if (!CHECK(!IS_ERR(t), "kthread"))
			break;
		started++;
	}
	for (i = 0; i < started; i++) {
		wait_for_completion(&c[i].done);
		total += c[i].rounds;
	}
	CHECK(total == IO_QUEUES * IO_ROUNDS, "%d of %d rounds", total,
	      IO_QUEUES * IO_ROUNDS);
	pr_info("rctest: %d I/O queues: %d rounds in %u ms\n", IO_QUEUES,
		total, jiffies_to_msecs(jiffies - t0));
out:
	for (i = 0; i < IO_QUEUES; i++) {
		if (c[i].p.qp[0]) {
			ib_destroy_qp(c[i].p.qp[0]);
			ib_destroy_qp(c[i].p.qp[1]);
		}
		if (c[i].f)
			fr_free(c[i].f);
		for (k = 0; k < 2; k++)
			if (c[i].cq[k])
				ib_destroy_cq(c[i].cq[k]);
	}
	kfree(c);
	pr_info("rctest: %d I/O queues at once: %d failed\n", IO_QUEUES,
		atomic_read(&failures) - before);
}

/* A 1 MiB fast-reg MR over 256 separate pages, as a ULP maps a big I/O. */
#define BIG_PAGES	(MIB / PAGE_SIZE)

static void test_big_fast_reg(void)
{
	struct page **pg = kcalloc(BIG_PAGES, sizeof(*pg), GFP_KERNEL);
	struct scatterlist *sgl = kcalloc(BIG_PAGES, sizeof(*sgl), GFP_KERNEL);
	struct ib_sge sge = { .addr = S[0].dma, .length = MIB,
			      .lkey = S[0].pd->local_dma_lkey };
	struct ib_mr *mr = NULL;
	struct pair p;
	int i, n, nents = 0, before = atomic_read(&failures);
	long bad = -1;

	if (!CHECK(pg && sgl, "alloc"))
		goto out;
	sg_init_table(sgl, BIG_PAGES);
	for (i = 0; i < BIG_PAGES; i++) {
		/* every other page: never physically contiguous */
		pg[i] = alloc_pages(GFP_KERNEL | __GFP_ZERO, 1);
		if (!CHECK(pg[i], "page"))
			goto out;
		sg_set_page(&sgl[i], pg[i] + 1, PAGE_SIZE, 0);
	}
	nents = ib_dma_map_sg(S[1].dev, sgl, BIG_PAGES, DMA_BIDIRECTIONAL);
	mr = ib_alloc_mr(S[1].pd, IB_MR_TYPE_MEM_REG, BIG_PAGES);
	if (!CHECK(nents == BIG_PAGES && !IS_ERR(mr), "map %d, mr", nents))
		goto out;
	n = ib_map_mr_sg(mr, sgl, nents, NULL, PAGE_SIZE);
	CHECK(n == nents && mr->length == MIB, "ib_map_mr_sg %d len %llu", n,
	      mr->length);
	if (!pair_new(&p))
		goto out;
	{
		struct ib_reg_wr wr = {
			.wr = { .wr_id = 0xb16, .opcode = IB_WR_REG_MR,
				.send_flags = IB_SEND_SIGNALED },
			.mr = mr, .key = mr->rkey, .access = FR_ACCESS,
		};

		if (CHECK(!post(p.qp[1], &wr.wr), "post REG_MR") &&
		    expect_wc(S[1].cq, 0xb16, IB_WC_SUCCESS, IB_WC_REG_MR,
			      NULL)) {
			fill(S[0].buf, MIB, 5);
			if (CHECK(rdma_op(p.qp[0], IB_WR_RDMA_WRITE, &sge, 1,
					  mr->iova, mr->rkey) == IB_WC_SUCCESS,
				  "1 MiB WRITE through 256 pages")) {
				for (i = 0; i < BIG_PAGES && bad < 0; i++)
					if (memcmp(page_address(pg[i] + 1),
						   S[0].buf + i * PAGE_SIZE,
						   PAGE_SIZE) ||
					    memchr_inv(page_address(pg[i]), 0,
						       PAGE_SIZE))
						bad = i;
				CHECK(bad < 0, "page %ld", bad);
			}
			memset(S[0].buf, 0, MIB);
			sge.addr = S[0].dma + 1;
			sge.length = MIB - 3;
			if (CHECK(rdma_op(p.qp[0], IB_WR_RDMA_READ, &sge, 1,
					  mr->iova + 2, mr->rkey) ==
				  IB_WC_SUCCESS, "1 MiB READ"))
				for (i = 0, bad = -1; i < MIB - 3 && bad < 0;
				     i++)
					if (S[0].buf[1 + i] !=
					    ((u8 *)page_address(pg[(i + 2) /
						PAGE_SIZE] + 1))[(i + 2) %
								 PAGE_SIZE])
						bad = i;
			CHECK(bad < 0, "READ byte %ld", bad);
		}
	}
	pair_free(&p);

	/*
	 * ib_dereg_mr while a 1 MiB WRITE into the MR is on the wire: once
	 * dereg returns, not one more byte may land in the pages (the ULP
	 * frees them next).  The WRITE succeeds or fails, and nothing hangs.
	 */
	if (bad < 0 && pair_new(&p)) {
		struct ib_rdma_wr wr = {
			.wr = { .wr_id = 0xdead, .opcode = IB_WR_RDMA_WRITE,
				.send_flags = IB_SEND_SIGNALED,
				.sg_list = &sge, .num_sge = 1 },
			.remote_addr = mr->iova, .rkey = mr->rkey,
		};
		struct ib_wc wc = {};

		sge.addr = S[0].dma;
		sge.length = MIB;
		CHECK(!post(p.qp[0], &wr.wr), "post WRITE");
		/* until the first bytes have landed */
		for (i = 0; i < 20000 && !memchr_inv(page_address(pg[0] + 1),
						     0, PAGE_SIZE); i++)
			usleep_range(50, 100);
		CHECK(!ib_dereg_mr(mr), "dereg with a WRITE in flight");
		mr = NULL;
		for (i = 0; i < BIG_PAGES; i++)
			memset(page_address(pg[i] + 1), 0x5a, PAGE_SIZE);
		CHECK(!poll_one(S[0].cq, &wc) && wc.wr_id == 0xdead &&
		      (wc.status == IB_WC_SUCCESS ||
		       wc.status == IB_WC_REM_ACCESS_ERR),
		      "WRITE during dereg: status %d", wc.status);
		/*
		 * A WRITE that succeeded: once the responder has answered a
		 * READ posted after it, every packet of the WRITE that was
		 * going to land has landed.  One that failed left the
		 * responder in ERR before its NAK, so nothing lands after.
		 */
		if (wc.status == IB_WC_SUCCESS) {
			sge.length = 8;
			CHECK(rdma_op(p.qp[0], IB_WR_RDMA_READ, &sge, 1,
				      S[1].dma, S[1].pd->unsafe_global_rkey) ==
			      IB_WC_SUCCESS, "READ after the WRITE");
		}
		for (i = 0, bad = -1; i < BIG_PAGES && bad < 0; i++)
			if (memchr_inv(page_address(pg[i] + 1), 0x5a,
				       PAGE_SIZE))
				bad = i;
		CHECK(bad < 0, "page %ld written after ib_dereg_mr returned",
		      bad);
		pr_info("rctest: WRITE during dereg: %s\n",
			ib_wc_status_msg(wc.status));
		pair_free(&p);
	}
out:
	if (!IS_ERR_OR_NULL(mr))
		ib_dereg_mr(mr);
	if (nents)
		ib_dma_unmap_sg(S[1].dev, sgl, BIG_PAGES, DMA_BIDIRECTIONAL);
	for (i = 0; pg && i < BIG_PAGES; i++)
		if (pg[i])
			__free_pages(pg[i], 1);
	kfree(pg);
	kfree(sgl);
	pr_info("rctest: 1 MiB fast-reg MR: %d failed\n", atomic_read(&failures) - before);
}

/* SRQ receiver, immediate data, inline SENDs, RNR retry. */
static void test_recv_variants(void)
{
	struct ib_srq_init_attr sa = {
		.attr = { .max_wr = 64, .max_sge = 2 },
	};
	struct ib_sge sge, rsge[16];
	struct ib_send_wr wr;
	struct ib_rdma_wr rwr;
	struct ib_srq *srq;
	const struct ib_recv_wr *badr;
	struct ib_recv_wr rw;
	struct ib_wc wc;
	struct pair p;
	int i, got, before = atomic_read(&failures);
	u64 rnr0;

	srq = ib_create_srq(S[1].pd, &sa);
	if (!CHECK(!IS_ERR(srq), "ib_create_srq"))
		return;
	for (i = 0; i < 16; i++) {
		rsge[i] = (struct ib_sge){ .addr = S[1].dma + i * 8192,
					   .length = 8192,
					   .lkey = S[1].pd->local_dma_lkey };
		rw = (struct ib_recv_wr){ .wr_id = 0x500 + i,
					  .sg_list = &rsge[i], .num_sge = 1 };
		CHECK(!ib_post_srq_recv(srq, &rw, &badr), "post_srq_recv");
	}
	qp_srq = srq;
	if (!pair_new(&p))
		goto out;
	memset(S[1].buf, 0, 16 * 8192);
	for (i = 0; i < 16; i++) {
		fill(S[0].buf + i * 8192, 8192, i);
		sge = (struct ib_sge){ .addr = S[0].dma + i * 8192,
				       .length = 100 + i * 500,
				       .lkey = S[0].pd->local_dma_lkey };
		wr = (struct ib_send_wr){ .wr_id = i,
					  .opcode = IB_WR_SEND_WITH_IMM,
					  .send_flags = IB_SEND_SIGNALED,
					  .ex.imm_data = cpu_to_be32(0xfeed0000 + i),
					  .sg_list = &sge, .num_sge = 1 };
		CHECK(!post(p.qp[0], &wr), "post");
	}
	for (i = 0; i < 16; i++)
		expect_wc(S[0].cq, i, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	for (got = 0; got < 16; got++) {
		u32 k;

		if (!CHECK(!poll_one(S[1].cq, &wc) &&
			   wc.status == IB_WC_SUCCESS, "SRQ receive %d", got))
			break;
		/* in order, each message into the next SRQ WQE */
		k = wc.wr_id - 0x500;
		CHECK(k == got && wc.byte_len == 100 + k * 500 &&
		      (wc.wc_flags & IB_WC_WITH_IMM) &&
		      be32_to_cpu(wc.ex.imm_data) == 0xfeed0000 + k &&
		      wc.qp == p.qp[1] &&
		      !memcmp(S[1].buf + k * 8192, S[0].buf + k * 8192,
			      wc.byte_len),
		      "SRQ receive %d: wr_id %#llx len %u flags %#x imm %#x",
		      got, wc.wr_id, wc.byte_len, wc.wc_flags,
		      be32_to_cpu(wc.ex.imm_data));
	}
	pair_free(&p);
	ib_destroy_srq(srq);
	srq = NULL;

	/* WRITE with immediate, inline SEND, RNR then late receive. */
	if (!pair_new(&p))
		goto out;
	rsge[0] = (struct ib_sge){ .addr = S[1].dma + MIB, .length = 64,
				   .lkey = S[1].pd->local_dma_lkey };
	CHECK(!post_recv(p.qp[1], 0x1111, rsge, 1), "recv");
	fill(S[0].buf, 4096, 44);
	memset(S[1].buf, 0, 8192);
	sge = (struct ib_sge){ .addr = S[0].dma, .length = 3000,
			       .lkey = S[0].pd->local_dma_lkey };
	rwr = (struct ib_rdma_wr){
		.wr = { .wr_id = 0x2222, .opcode = IB_WR_RDMA_WRITE_WITH_IMM,
			.send_flags = IB_SEND_SIGNALED,
			.ex.imm_data = cpu_to_be32(0x12345678),
			.sg_list = &sge, .num_sge = 1 },
		.remote_addr = S[1].dma + 7, .rkey = S[1].pd->unsafe_global_rkey,
	};
	CHECK(!post(p.qp[0], &rwr.wr), "post WRITE_WITH_IMM");
	expect_wc(S[0].cq, 0x2222, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, NULL);
	if (expect_wc(S[1].cq, 0x1111, IB_WC_SUCCESS, IB_WC_RECV_RDMA_WITH_IMM,
		      &wc))
		CHECK((wc.wc_flags & IB_WC_WITH_IMM) &&
		      be32_to_cpu(wc.ex.imm_data) == 0x12345678 &&
		      !memcmp(S[1].buf + 7, S[0].buf, 3000),
		      "WRITE_WITH_IMM: flags %#x imm %#x", wc.wc_flags,
		      be32_to_cpu(wc.ex.imm_data));

	/* inline: the SGE is a kernel virtual address, copied at post time */
	rsge[0] = (struct ib_sge){ .addr = S[1].dma + 256, .length = 64,
				   .lkey = S[1].pd->local_dma_lkey };
	CHECK(!post_recv(p.qp[1], 0x3333, rsge, 1), "recv");
	sge = (struct ib_sge){ .addr = (uintptr_t)(S[0].buf + 100),
			       .length = 60 };
	wr = (struct ib_send_wr){ .wr_id = 0x4444, .opcode = IB_WR_SEND,
				  .send_flags = IB_SEND_SIGNALED |
						IB_SEND_INLINE,
				  .sg_list = &sge, .num_sge = 1 };
	CHECK(!post(p.qp[0], &wr), "post inline SEND");
	memset(S[0].buf + 100, 0xee, 60);	/* after posting: not sent */
	expect_wc(S[0].cq, 0x4444, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	fill(S[0].buf, 4096, 44);
	if (expect_wc(S[1].cq, 0x3333, IB_WC_SUCCESS, IB_WC_RECV, &wc))
		CHECK(wc.byte_len == 60 &&
		      !memcmp(S[1].buf + 256, S[0].buf + 100, 60),
		      "inline SEND data, len %u", wc.byte_len);

	/* RNR: SEND before the receive exists; rnr_retry 7 waits for it. */
	sge = (struct ib_sge){ .addr = S[0].dma, .length = 2000,
			       .lkey = S[0].pd->local_dma_lkey };
	wr = (struct ib_send_wr){ .wr_id = 0x5555, .opcode = IB_WR_SEND,
				  .send_flags = IB_SEND_SIGNALED,
				  .sg_list = &sge, .num_sge = 1 };
	rnr0 = hw_counter(S[1].dev, "rnr_naks_sent");
	CHECK(!post(p.qp[0], &wr), "post SEND");
	/* The responder has seen the SEND and refused it: not merely late. */
	for (i = 0; i < 2000 && hw_counter(S[1].dev, "rnr_naks_sent") == rnr0; i++)
		usleep_range(500, 1000);
	CHECK(hw_counter(S[1].dev, "rnr_naks_sent") != rnr0,
	      "no RNR NAK for a SEND without a receive");
	CHECK(ib_poll_cq(S[0].cq, 1, &wc) == 0, "SEND completed without a receive");
	rsge[0] = (struct ib_sge){ .addr = S[1].dma + 4096, .length = 2000,
				   .lkey = S[1].pd->local_dma_lkey };
	CHECK(!post_recv(p.qp[1], 0x6666, rsge, 1), "late recv");
	expect_wc(S[0].cq, 0x5555, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	if (expect_wc(S[1].cq, 0x6666, IB_WC_SUCCESS, IB_WC_RECV, &wc))
		CHECK(wc.byte_len == 2000 &&
		      !memcmp(S[1].buf + 4096, S[0].buf, 2000),
		      "SEND after RNR: len %u", wc.byte_len);
	pair_free(&p);
out:
	qp_srq = NULL;
	if (srq)
		ib_destroy_srq(srq);
	pr_info("rctest: SRQ, immediate data, inline, RNR: %d failed\n",
		atomic_read(&failures) - before);
}

/* ------------------------------------------------------------------ */
/* Send queue semantics ULPs rely on                                   */
/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */
/* Moving to ERR: receive completions in order, the SRQ's last WQE     */
/* ------------------------------------------------------------------ */

static struct ib_qp *last_wqe_qp;	/* the QP whose event is awaited */
static atomic_t last_wqe_ours, last_wqe_other;
static DECLARE_COMPLETION(last_wqe_done);

static void last_wqe_event(struct ib_event *ev, void *ctx)
{
	if (ev->event != IB_EVENT_QP_LAST_WQE_REACHED)
		return;
	if (ev->element.qp == READ_ONCE(last_wqe_qp)) {
		atomic_inc(&last_wqe_ours);
		complete(&last_wqe_done);
	} else {
		atomic_inc(&last_wqe_other);
	}
}

/* Wait for IB_EVENT_QP_LAST_WQE_REACHED of @qp, armed before its ERR. */
static void last_wqe_arm(struct ib_qp *qp)
{
	atomic_set(&last_wqe_ours, 0);
	reinit_completion(&last_wqe_done);
	WRITE_ONCE(last_wqe_qp, qp);
}

static bool last_wqe_wait(const char *what)
{
	return CHECK(wait_for_completion_timeout(&last_wqe_done,
						 msecs_to_jiffies(WAIT_MS)) &&
		     atomic_read(&last_wqe_ours) == 1,
		     "%s: IB_EVENT_QP_LAST_WQE_REACHED (%d)", what,
		     atomic_read(&last_wqe_ours));
}

/*
 * A QP on an SRQ that goes to ERR, by modify_qp or by an error of its
 * own (a Remote Access Error it answers), raises
 * IB_EVENT_QP_LAST_WQE_REACHED once (IBTA 11.6.3.1); a QP with its own
 * RQ raises none.  ULPs (nvmet, srpt) wait for it before destroying.
 */
static void test_srq_last_wqe(void)
{
	struct ib_srq_init_attr sa = {
		.attr = { .max_wr = 16, .max_sge = 1 },
	};
	struct ib_sge sge = {
		.addr = S[0].dma, .length = 64,
		.lkey = S[0].pd->local_dma_lkey,
	}, rsge = {
		.addr = S[1].dma, .length = 4096,
		.lkey = S[1].pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_id = 0x1e, .opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED, .sg_list = &sge, .num_sge = 1,
	};
	struct ib_qp_attr a = { .qp_state = IB_QPS_ERR };
	int before = atomic_read(&failures);
	const struct ib_recv_wr *badr;
	struct ib_recv_wr rw;
	struct pair own, p;
	struct ib_srq *srq;
	int i;

	srq = ib_create_srq(S[1].pd, &sa);
	if (!CHECK(!IS_ERR(srq), "ib_create_srq"))
		return;
	for (i = 0; i < 8; i++) {
		rw = (struct ib_recv_wr){ .wr_id = 0x700 + i, .sg_list = &rsge,
					  .num_sge = 1 };
		CHECK(!ib_post_srq_recv(srq, &rw, &badr), "post_srq_recv");
	}
	atomic_set(&last_wqe_other, 0);

	/* modify_qp to ERR, after traffic through the SRQ */
	qp_events = last_wqe_event;
	if (!pair_new(&own))
		goto out;
	qp_srq = srq;
	qp_events = last_wqe_event;
	if (!pair_new(&p)) {
		pair_free(&own);
		goto out;
	}
	if (CHECK(!post(p.qp[0], &wr), "SEND to the SRQ QP")) {
		expect_wc(S[0].cq, 0x1e, IB_WC_SUCCESS, IB_WC_SEND, NULL);
		expect_wc(S[1].cq, 0x700, IB_WC_SUCCESS, IB_WC_RECV, NULL);
	}
	CHECK(!ib_modify_qp(own.qp[1], &a, IB_QP_STATE), "own RQ QP to ERR");
	last_wqe_arm(p.qp[1]);
	CHECK(!ib_modify_qp(p.qp[1], &a, IB_QP_STATE), "SRQ QP to ERR");
	last_wqe_wait("modify_qp to ERR");
	CHECK(!atomic_read(&last_wqe_other),
	      "no LAST_WQE_REACHED for the QP with its own RQ (%d)",
	      atomic_read(&last_wqe_other));
	pair_free(&p);
	pair_free(&own);

	/* the QP's own error: a WRITE through a bad rkey */
	qp_srq = srq;
	qp_events = last_wqe_event;
	if (!pair_new(&p))
		goto out;
	last_wqe_arm(p.qp[1]);
	CHECK(rdma_op(p.qp[0], IB_WR_RDMA_WRITE, &sge, 1, S[1].dma,
		      S[1].pd->unsafe_global_rkey ^ 0x80) ==
	      IB_WC_REM_ACCESS_ERR, "WRITE through a bad rkey");
	last_wqe_wait("Remote Access Error");
	pair_free(&p);
out:
	ib_destroy_srq(srq);
	pr_info("rctest: SRQ last WQE reached: %d failed\n",
		atomic_read(&failures) - before);
}

/*
 * To ERR while a multi-packet SEND is half received: its receive WQE,
 * consumed first, completes first (flushed), then the later ones, in
 * order; a receive posted in ERR completes flushed, never with success.
 * The sender is stopped (to ERR) once the first bytes landed, so the
 * message can never finish; if it finished anyway, try again.
 */
static void test_err_recv_order(void)
{
	struct ib_sge ssge = {
		.addr = S[0].dma, .length = MIB,
		.lkey = S[0].pd->local_dma_lkey,
	}, rsge[4];
	struct ib_send_wr wr = {
		.wr_id = 0x5e, .opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED, .sg_list = &ssge,
		.num_sge = 1,
	};
	struct ib_qp_attr a = { .qp_state = IB_QPS_ERR };
	int before = atomic_read(&failures);
	unsigned long end;
	struct ib_wc wc;
	struct pair p;
	int i, try;
	bool half;

	rsge[0] = (struct ib_sge){ .addr = S[1].dma, .length = MIB,
				   .lkey = S[1].pd->local_dma_lkey };
	for (i = 1; i < 4; i++)
		rsge[i] = (struct ib_sge){ .addr = S[1].dma + MIB + i * 1024,
					   .length = 1024,
					   .lkey = S[1].pd->local_dma_lkey };
	fill(S[0].buf, MIB, 0x3c);
	for (try = 0; try < 5; try++) {
		if (!pair_new(&p))
			return;
		memset(S[1].buf, 0, MIB);
		for (i = 0; i < 3; i++)
			CHECK(!post_recv(p.qp[1], 0x600 + i, &rsge[i], 1),
			      "post_recv %d", i);
		CHECK(!post(p.qp[0], &wr), "post 1 MiB SEND");
		/* the first packet placed: stop the sender there */
		end = jiffies + msecs_to_jiffies(WAIT_MS);
		while (memcmp(S[1].buf, S[0].buf, 1024) &&
		       time_before(jiffies, end))
			cond_resched();
		CHECK(!ib_modify_qp(p.qp[0], &a, IB_QP_STATE),
		      "sender to ERR");
		/* still half received: no receive completion yet */
		half = ib_poll_cq(S[1].cq, 1, &wc) == 0;
		if (half)
			break;
		pair_free(&p);
	}
	if (!CHECK(half, "SEND still half received after %d tries", try))
		return;
	CHECK(!ib_modify_qp(p.qp[1], &a, IB_QP_STATE), "receiver to ERR");
	for (i = 0; i < 3; i++)
		expect_wc(S[1].cq, 0x600 + i, IB_WC_WR_FLUSH_ERR, IB_WC_RECV,
			  NULL);
	CHECK(!post_recv(p.qp[1], 0x603, &rsge[3], 1), "post_recv in ERR");
	expect_wc(S[1].cq, 0x603, IB_WC_WR_FLUSH_ERR, IB_WC_RECV, NULL);
	pair_free(&p);
	pr_info("rctest: receive order on the move to ERR: %d failed\n",
		atomic_read(&failures) - before);
}

static atomic_t notify_calls, notify_irqs_off;

/*
 * ULPs re-arm, poll and post from their completion handler, as with
 * hardware, where it runs in interrupt context with no driver lock held:
 * softrnic must not call it with IRQs off under a lock of its own.
 */
static void notify_comp(struct ib_cq *cq, void *ctx)
{
	if (irqs_disabled())
		atomic_inc(&notify_irqs_off);
	atomic_inc(&notify_calls);
}

/* Until @cq's handler ran @n times, or 2 s. */
static int wait_notify(int n)
{
	int i;

	for (i = 0; i < 2000 && atomic_read(&notify_calls) < n; i++)
		usleep_range(500, 1000);
	return atomic_read(&notify_calls);
}

static void test_sq_semantics(void)
{
	struct ib_cq_init_attr cqa = { .cqe = 4 * QP_DEPTH };
	struct ib_sge sge = { .lkey = S[0].pd->local_dma_lkey };
	struct ib_sge rsge = { .lkey = S[1].pd->local_dma_lkey };
	struct ib_rdma_wr wr[3];
	struct ib_send_wr swr;
	struct ib_wc wc;
	struct ib_cq *ncq;
	struct pair p;
	int i, n, done, err, before = atomic_read(&failures);
	long bad;

	/* 1000 WRITEs, one in 32 signaled: the SQ (128) wraps many times. */
	if (!pair_new(&p))
		return;
	memset(S[1].buf, 0, MIB);
	fill(S[0].buf, MIB, 3);
	for (i = 0, done = 0, err = 0; i < 1000 && !err; i++) {
		struct ib_rdma_wr w = {
			.wr = { .wr_id = i, .opcode = IB_WR_RDMA_WRITE,
				.send_flags = (i % 32 == 31 || i == 999) ?
					IB_SEND_SIGNALED : 0,
				.sg_list = &sge, .num_sge = 1 },
			.remote_addr = S[1].dma + i * 1000,
			.rkey = S[1].pd->unsafe_global_rkey,
		};

		sge.addr = S[0].dma + i * 1000;
		sge.length = 1000;
		/* at most 4 signaled batches outstanding: 128 slots */
		while (i - done >= 3 * 32 && !err) {
			err = poll_one(S[0].cq, &wc);
			if (!err && CHECK(wc.status == IB_WC_SUCCESS &&
					  wc.wr_id % 32 == 31,
					  "WRITE %llu: status %d", wc.wr_id,
					  wc.status))
				done = wc.wr_id + 1;
			else
				err = -EIO;
		}
		if (!err)
			err = post(p.qp[0], &w.wr);
	}
	CHECK(!err, "1000 mostly unsignaled WRITEs: %d at %d", err, i);
	while (!err && done < 1000) {
		err = poll_one(S[0].cq, &wc);
		if (!CHECK(!err && wc.status == IB_WC_SUCCESS,
			   "WRITE %llu: status %d", wc.wr_id, wc.status))
			break;
		done = wc.wr_id + 1;
	}
	CHECK(done == 1000 && !memcmp(S[1].buf, S[0].buf, 1000 * 1000),
	      "1000 WRITEs landed (%d)", done);

	/*
	 * Fence: a SEND gathering from the buffer a 256 KiB READ is filling
	 * carries the READ's data (the SEND waits for the READ).
	 */
	fill(S[1].buf, MIB, 99);
	memset(S[0].buf, 0, MIB);
	rsge.addr = S[1].dma + MIB;
	rsge.length = 4096;
	CHECK(!post_recv(p.qp[1], 0xf1, &rsge, 1), "recv");
	sge.addr = S[0].dma;
	sge.length = 256 * 1024;
	wr[0] = (struct ib_rdma_wr){
		.wr = { .wr_id = 0xf2, .opcode = IB_WR_RDMA_READ,
			.sg_list = &sge, .num_sge = 1, .next = &swr },
		.remote_addr = S[1].dma, .rkey = S[1].pd->unsafe_global_rkey,
	};
	{
		struct ib_sge fsge = { .addr = S[0].dma + 256 * 1024 - 4096,
				       .length = 4096,
				       .lkey = S[0].pd->local_dma_lkey };

		swr = (struct ib_send_wr){ .wr_id = 0xf3, .opcode = IB_WR_SEND,
					   .send_flags = IB_SEND_SIGNALED |
							 IB_SEND_FENCE,
					   .sg_list = &fsge, .num_sge = 1 };
		CHECK(!post(p.qp[0], &wr[0].wr), "post READ + fenced SEND");
		/* the READ is unsignaled and succeeds: one CQE, the SEND's */
		expect_wc(S[0].cq, 0xf3, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	}
	if (expect_wc(S[1].cq, 0xf1, IB_WC_SUCCESS, IB_WC_RECV, &wc))
		CHECK(!memcmp(S[1].buf + MIB, S[1].buf + 256 * 1024 - 4096,
			      4096), "fenced SEND carried stale data");
	pair_free(&p);

	/*
	 * An unsignaled WR that fails still completes (with its wr_id);
	 * the WRs after it flush, in order, and so do the peer's receives.
	 */
	if (!pair_new(&p))
		return;
	rsge.addr = S[1].dma;
	rsge.length = 4096;
	for (i = 0; i < 3; i++)
		CHECK(!post_recv(p.qp[1], 0x300 + i, &rsge, 1), "recv");
	/* one SEND that works first, to use a receive */
	sge.addr = S[0].dma;
	sge.length = 64;
	swr = (struct ib_send_wr){ .wr_id = 0x200, .opcode = IB_WR_SEND,
				   .send_flags = IB_SEND_SIGNALED,
				   .sg_list = &sge, .num_sge = 1 };
	CHECK(!post(p.qp[0], &swr), "post SEND");
	expect_wc(S[0].cq, 0x200, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	expect_wc(S[1].cq, 0x300, IB_WC_SUCCESS, IB_WC_RECV, NULL);
	for (i = 0; i < 3; i++)
		wr[i] = (struct ib_rdma_wr){
			.wr = { .wr_id = 0x201 + i, .opcode = IB_WR_RDMA_WRITE,
				.sg_list = &sge, .num_sge = 1,
				.next = i < 2 ? &wr[i + 1].wr : NULL,
				.send_flags = i == 2 ? IB_SEND_SIGNALED : 0 },
			.remote_addr = S[1].dma,
			/* the first: a wrong key byte */
			.rkey = i ? S[1].pd->unsafe_global_rkey :
				    S[1].pd->unsafe_global_rkey ^ 1,
		};
	CHECK(!post(p.qp[0], &wr[0].wr), "post 3 WRITEs");
	expect_wc(S[0].cq, 0x201, IB_WC_REM_ACCESS_ERR, 0, NULL);
	/* unsignaled WRs after an error complete as flushed (IBTA 10.8.3) */
	expect_wc(S[0].cq, 0x202, IB_WC_WR_FLUSH_ERR, 0, NULL);
	expect_wc(S[0].cq, 0x203, IB_WC_WR_FLUSH_ERR, 0, NULL);
	CHECK(wait_state(p.qp[1], IB_QPS_ERR) == IB_QPS_ERR, "peer in ERR");
	expect_wc(S[1].cq, 0x301, IB_WC_WR_FLUSH_ERR, 0, NULL);
	expect_wc(S[1].cq, 0x302, IB_WC_WR_FLUSH_ERR, 0, NULL);
	CHECK(ib_poll_cq(S[0].cq, 1, &wc) == 0 && ib_poll_cq(S[1].cq, 1, &wc) == 0,
	      "nothing more");
	pair_free(&p);

	/* REG_MR granting remote write without local write: refused. */
	{
		struct fr *f = fr_alloc(S[1].pd);

		if (CHECK(f, "MR") && pair_new(&p)) {
			struct ib_reg_wr rw = {
				.wr = { .wr_id = 0x4f, .opcode = IB_WR_REG_MR,
					.send_flags = IB_SEND_SIGNALED },
				.mr = f->mr,
				.access = IB_ACCESS_REMOTE_WRITE,
			};

			n = ib_map_mr_sg(f->mr, f->sgl, f->nents, NULL,
					 PAGE_SIZE);
			rw.key = f->mr->rkey;
			CHECK(n == f->nents && !post(p.qp[1], &rw.wr), "post");
			CHECK(!poll_one(S[1].cq, &wc) && wc.wr_id == 0x4f &&
			      wc.status != IB_WC_SUCCESS &&
			      wc.status != IB_WC_WR_FLUSH_ERR,
			      "REMOTE_WRITE without LOCAL_WRITE: status %d",
			      wc.status);
			pair_free(&p);
		}
		/* ib_map_mr_sg with a start offset into the first element */
		if (f && pair_new(&p)) {
			unsigned int off = 50;

			n = ib_map_mr_sg(f->mr, f->sgl, f->nents, &off,
					 PAGE_SIZE);
			CHECK(n == f->nents && f->mr->length == FR_LEN - 50 &&
			      f->mr->iova == sg_dma_address(&f->sgl[0]) + 50,
			      "sg_offset: n %d len %llu", n, f->mr->length);
			{
				struct ib_reg_wr rw = {
					.wr = { .wr_id = 0x50,
						.opcode = IB_WR_REG_MR,
						.send_flags = IB_SEND_SIGNALED },
					.mr = f->mr, .key = f->mr->rkey,
					.access = FR_ACCESS,
				};

				CHECK(!post(p.qp[1], &rw.wr), "post");
				expect_wc(S[1].cq, 0x50, IB_WC_SUCCESS,
					  IB_WC_REG_MR, NULL);
			}
			fill(S[0].buf, FR_LEN, 12);
			sge.addr = S[0].dma;
			sge.length = FR_LEN - 50;
			if (CHECK(rdma_op(p.qp[0], IB_WR_RDMA_WRITE, &sge, 1,
					  f->mr->iova, f->mr->rkey) ==
				  IB_WC_SUCCESS, "WRITE at sg_offset")) {
				for (i = 0, bad = -1; i < FR_LEN - 50 && bad < 0;
				     i++)
					if (*fr_byte(f, 50 + i) != S[0].buf[i])
						bad = i;
				CHECK(bad < 0 && !memchr_inv(fr_byte(f, 0), 0, 50),
				      "sg_offset data: byte %ld", bad);
			}
			pair_free(&p);
		}
		if (f)
			fr_free(f);
	}

	/*
	 * Solicited-only arming across the wire.  First an unsolicited
	 * SEND alone: its receive completion is polled (so the arm was
	 * looked at), then the QPs and the CQ are destroyed; destroy_cq
	 * waits for a handler call already scheduled, so a wrong one has
	 * been counted by the time it returns.
	 */
	rsge.addr = S[1].dma;
	rsge.length = 4096;
	swr = (struct ib_send_wr){ .wr_id = 0x601, .opcode = IB_WR_SEND,
				   .send_flags = IB_SEND_SIGNALED,
				   .sg_list = &sge, .num_sge = 1 };
	sge.addr = S[0].dma;
	sge.length = 16;
	ncq = ib_create_cq(S[1].dev, notify_comp, NULL, NULL, &cqa);
	if (!CHECK(!IS_ERR(ncq), "CQ"))
		goto out;
	if (!CHECK(!pair_new_cq(&p, S[1].pd, S[0].cq, S[0].cq, S[1].cq, ncq),
		   "pair")) {
		ib_destroy_cq(ncq);
		goto out;
	}
	CHECK(!post_recv(p.qp[1], 0x5ff, &rsge, 1), "recv");
	atomic_set(&notify_calls, 0);
	CHECK(!ib_req_notify_cq(ncq, IB_CQ_SOLICITED), "arm solicited");
	CHECK(!post(p.qp[0], &swr), "SEND");
	expect_wc(S[0].cq, 0x601, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	expect_wc(ncq, 0x5ff, IB_WC_SUCCESS, IB_WC_RECV, NULL);
	ib_destroy_qp(p.qp[0]);
	ib_destroy_qp(p.qp[1]);
	cq_discard(S[0].cq);
	ib_destroy_cq(ncq);
	CHECK(atomic_read(&notify_calls) == 0,
	      "unsolicited SEND fired a solicited-only arm");

	/* Then an unsolicited SEND and a solicited one behind it. */
	ncq = ib_create_cq(S[1].dev, notify_comp, NULL, NULL, &cqa);
	if (!CHECK(!IS_ERR(ncq), "CQ"))
		goto out;
	if (!CHECK(!pair_new_cq(&p, S[1].pd, S[0].cq, S[0].cq, S[1].cq, ncq),
		   "pair"))
		goto out_cq;
	for (i = 0; i < 4; i++)
		CHECK(!post_recv(p.qp[1], 0x600 + i, &rsge, 1), "recv");
	atomic_set(&notify_calls, 0);
	atomic_set(&notify_irqs_off, 0);
	CHECK(!ib_req_notify_cq(ncq, IB_CQ_SOLICITED), "arm solicited");
	CHECK(!post(p.qp[0], &swr), "SEND");
	expect_wc(S[0].cq, 0x601, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	swr.send_flags |= IB_SEND_SOLICITED;
	CHECK(!post(p.qp[0], &swr), "SEND solicited");
	expect_wc(S[0].cq, 0x601, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	CHECK(wait_notify(1) == 1, "solicited SEND: %d handler calls",
	      atomic_read(&notify_calls));
	CHECK(ib_poll_cq(ncq, 1, &wc) == 1 && wc.wr_id == 0x600 &&
	      ib_poll_cq(ncq, 1, &wc) == 1 && wc.wr_id == 0x601,
	      "both receives");
	/* IB_CQ_NEXT_COMP: any completion */
	CHECK(!ib_req_notify_cq(ncq, IB_CQ_NEXT_COMP), "arm next");
	swr.send_flags &= ~IB_SEND_SOLICITED;
	CHECK(!post(p.qp[0], &swr), "SEND");
	expect_wc(S[0].cq, 0x601, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	CHECK(wait_notify(2) == 2, "next-completion arm: %d handler calls",
	      atomic_read(&notify_calls));
	CHECK(!atomic_read(&notify_irqs_off),
	      "completion handler called with IRQs off %d of %d times",
	      atomic_read(&notify_irqs_off), atomic_read(&notify_calls));
	ib_destroy_qp(p.qp[0]);
	ib_destroy_qp(p.qp[1]);
	cq_discard(S[0].cq);
out_cq:
	ib_destroy_cq(ncq);
out:
	pr_info("rctest: SQ wrap, fence, error flush order, REG_MR rules, CQ arming: %d failed\n",
		atomic_read(&failures) - before);
}

/* ------------------------------------------------------------------ */
/* Ping-pong driven from completion context                           */
/* ------------------------------------------------------------------ */

/*
 * Each side answers every receive with a SEND posted from its completion
 * callback, as ULPs do: from a legacy comp_handler (which polls, re-posts
 * and re-arms with IB_CQ_REPORT_MISSED_EVENTS), or from ib_cqe done
 * callbacks of an ib_alloc_cq CQ (softirq on side 0, workqueue on side 1).
 */
#define PP_ROUNDS	300
#define PP_RECVS	4

static int pp_rounds = PP_ROUNDS;	/* side 0 stops answering after */

struct pp_side {
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_cqe scqe, rcqe;
	int idx;
	spinlock_t lock;
	bool busy, again, stop;
	int recvs, sends, errors, post_errors;
	struct completion done;
};

static struct pp_side PP[2];

static void pp_post(struct pp_side *ps, bool recv)
{
	struct side *s = &S[ps->idx];
	struct ib_sge sge = {
		.addr = s->dma + (recv ? MIB / 2 : 0) +
			((recv ? ps->recvs : ps->sends) % 16) * 64,
		.length = 64, .lkey = s->pd->local_dma_lkey,
	};
	int err;

	if (recv) {
		struct ib_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };

		if (ps->cq->poll_ctx != IB_POLL_DIRECT && ps->rcqe.done)
			wr.wr_cqe = &ps->rcqe;
		else
			wr.wr_id = 1;
		err = ib_post_recv(ps->qp, &wr, NULL);
	} else {
		struct ib_send_wr wr = {
			.opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED,
			.sg_list = &sge, .num_sge = 1,
		};

		if (ps->scqe.done)
			wr.wr_cqe = &ps->scqe;
		else
			wr.wr_id = 2;
		err = ib_post_send(ps->qp, &wr, NULL);
	}
	if (err)
		ps->post_errors++;
}

static void pp_wc(struct pp_side *ps, const struct ib_wc *wc, bool recv)
{
	if (wc->status != IB_WC_SUCCESS) {
		if (!ps->stop)
			ps->errors++;
		return;
	}
	if (!recv) {
		ps->sends++;
		return;
	}
	ps->recvs++;
	if (ps->stop)
		return;
	pp_post(ps, true);
	if (ps->idx == 1 || ps->recvs < pp_rounds)
		pp_post(ps, false);
	if (ps->idx == 0 && ps->recvs == pp_rounds)
		complete(&ps->done);
}

static void pp_poll(struct pp_side *ps)
{
	struct ib_wc wc[8];
	int n, i;

	do {
		while ((n = ib_poll_cq(ps->cq, ARRAY_SIZE(wc), wc)) > 0)
			for (i = 0; i < n; i++)
				pp_wc(ps, &wc[i], wc[i].wr_id == 1);
	} while (ib_req_notify_cq(ps->cq, IB_CQ_NEXT_COMP |
				  IB_CQ_REPORT_MISSED_EVENTS) > 0);
}

/* Legacy handler: serialized per side, re-run if called meanwhile. */
static void pp_handler(struct ib_cq *cq, void *ctx)
{
	struct pp_side *ps = ctx;
	unsigned long flags;

	spin_lock_irqsave(&ps->lock, flags);
	if (ps->busy) {
		ps->again = true;
		spin_unlock_irqrestore(&ps->lock, flags);
		return;
	}
	ps->busy = true;
	do {
		ps->again = false;
		spin_unlock_irqrestore(&ps->lock, flags);
		pp_poll(ps);
		spin_lock_irqsave(&ps->lock, flags);
	} while (ps->again);
	ps->busy = false;
	spin_unlock_irqrestore(&ps->lock, flags);
}

/* ib_cqe callbacks: ib_core serializes them per CQ. */
static void pp_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	pp_wc(container_of(wc->wr_cqe, struct pp_side, scqe), wc, false);
}

static void pp_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	pp_wc(container_of(wc->wr_cqe, struct pp_side, rcqe), wc, true);
}

static bool pp_idle(void)
{
	unsigned long flags;
	bool busy = false;
	int i;

	for (i = 0; i < 2; i++) {
		spin_lock_irqsave(&PP[i].lock, flags);
		PP[i].stop = true;
		busy |= PP[i].busy;
		spin_unlock_irqrestore(&PP[i].lock, flags);
	}
	return !busy;
}

static void pp_run(bool legacy)
{
	struct ib_cq_init_attr cqa = { .cqe = 64 };
	const char *how = legacy ? "comp_handler" : "ib_cqe callbacks";
	struct pair p;
	int i, err, before = atomic_read(&failures);
	unsigned long t0;

	memset(PP, 0, sizeof(PP));
	for (i = 0; i < 2; i++) {
		PP[i].idx = i;
		spin_lock_init(&PP[i].lock);
		init_completion(&PP[i].done);
		if (legacy) {
			PP[i].cq = ib_create_cq(S[i].dev, pp_handler, NULL,
						&PP[i], &cqa);
		} else {
			PP[i].cq = ib_alloc_cq(S[i].dev, NULL, 64, 0,
					       i ? IB_POLL_WORKQUEUE :
						   IB_POLL_SOFTIRQ);
			PP[i].scqe.done = pp_send_done;
			PP[i].rcqe.done = pp_recv_done;
		}
		if (!CHECK(!IS_ERR(PP[i].cq), "%s: CQ", how)) {
			PP[i].cq = NULL;
			goto out;
		}
	}
	err = pair_new_cq(&p, S[1].pd, PP[0].cq, PP[0].cq, PP[1].cq, PP[1].cq);
	if (!CHECK(!err, "%s: pair %d", how, err))
		goto out;
	for (i = 0; i < 2; i++) {
		int k;

		PP[i].qp = p.qp[i];
		for (k = 0; k < PP_RECVS; k++)
			pp_post(&PP[i], true);
		if (legacy)
			ib_req_notify_cq(PP[i].cq, IB_CQ_NEXT_COMP);
	}
	t0 = jiffies;
	pp_post(&PP[0], false);
	CHECK(wait_for_completion_timeout(&PP[0].done,
					  msecs_to_jiffies(WAIT_MS)),
	      "%s: %d of %d round trips", how, PP[0].recvs, PP_ROUNDS);
	pr_info("rctest: %s ping-pong: %d round trips in %u ms\n", how,
		PP[0].recvs, jiffies_to_msecs(jiffies - t0));
	/* side 1's last SEND completes once ACKed */
	for (i = 0; i < 2000 && PP[1].sends < PP_ROUNDS; i++)
		usleep_range(500, 1000);
	for (i = 0; i < 2000 && !pp_idle(); i++)
		usleep_range(500, 1000);
	CHECK(PP[0].recvs == PP_ROUNDS && PP[1].recvs == PP_ROUNDS &&
	      PP[0].sends == PP_ROUNDS && PP[1].sends == PP_ROUNDS &&
	      !PP[0].errors && !PP[1].errors &&
	      !PP[0].post_errors && !PP[1].post_errors,
	      "%s: recvs %d/%d sends %d/%d errors %d/%d post errors %d/%d",
	      how, PP[0].recvs, PP[1].recvs, PP[0].sends, PP[1].sends,
	      PP[0].errors, PP[1].errors, PP[0].post_errors,
	      PP[1].post_errors);
	if (!legacy) {
		ib_drain_qp(p.qp[0]);
		ib_drain_qp(p.qp[1]);
	}
	ib_destroy_qp(p.qp[0]);
	ib_destroy_qp(p.qp[1]);
out:
	for (i = 0; i < 2; i++) {
		if (!PP[i].cq)
			continue;
		if (legacy)
			ib_destroy_cq(PP[i].cq);
		else
			ib_free_cq(PP[i].cq);
	}
	pr_info("rctest: ping-pong from %s: %d failed\n", how,
		atomic_read(&failures) - before);
}

/* ------------------------------------------------------------------ */
/* Like a ULP: ib_alloc_cq, ib_cqe callbacks, drain, destroy in flight */
/* ------------------------------------------------------------------ */

struct ctr {
	struct ib_cqe cqe;
	atomic_t ok, flushed, bad, total, wrong_ctx;
	int target;
	bool softirq;		/* callbacks expected in softirq context */
	struct completion done;
};

static void ctr_init(struct ctr *c, int target, bool softirq)
{
	c->cqe.done = NULL;
	atomic_set(&c->ok, 0);
	atomic_set(&c->flushed, 0);
	atomic_set(&c->bad, 0);
	atomic_set(&c->total, 0);
	atomic_set(&c->wrong_ctx, 0);
	c->target = target;
	c->softirq = softirq;
	init_completion(&c->done);
}

static void ctr_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ctr *c = container_of(wc->wr_cqe, struct ctr, cqe);

	if (wc->status == IB_WC_SUCCESS)
		atomic_inc(&c->ok);
	else if (wc->status == IB_WC_WR_FLUSH_ERR)
		atomic_inc(&c->flushed);
	else
		atomic_inc(&c->bad);
	if (!!in_softirq() != c->softirq)
		atomic_inc(&c->wrong_ctx);
	if (atomic_inc_return(&c->total) == c->target)
		complete(&c->done);
}

struct ulp {
	struct ib_cq *scq[2], *rcq[2];
	struct ctr sc[2], rc[2];
	struct pair p;
};

static bool ulp_pair(struct ulp *u)
{
	int err = pair_new_cq(&u->p, S[1].pd, u->scq[0], u->rcq[0],
			      u->scq[1], u->rcq[1]);

	return CHECK(!err, "connect ULP pair: %d", err);
}

static int post_sends(struct ib_qp *qp, struct ctr *c, enum ib_wr_opcode op,
		      int n, u32 len, u64 raddr, u32 rkey, const struct side *s)
{
	struct ib_sge sge = { .length = len, .lkey = s->pd->local_dma_lkey };
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_cqe = &c->cqe,
			.opcode = op,
			.send_flags = IB_SEND_SIGNALED,
			.sg_list = &sge,
			.num_sge = 1,
		},
		.rkey = rkey,
	};
	int i, err;

	c->cqe.done = ctr_done;
	for (i = 0; i < n; i++) {
		sge.addr = s->dma + (i * (u64)len) % (MIB - len + 1);
		wr.remote_addr = raddr + (i * (u64)len) % (MIB - len + 1);
		err = post(qp, &wr.wr);
		if (err)
			return err;
	}
	return 0;
}

static int post_recvs(struct ib_qp *qp, struct ctr *c, int n, u32 len,
		      const struct side *s)
{
	struct ib_sge sge = { .length = len, .lkey = s->pd->local_dma_lkey };
	struct ib_recv_wr wr = {
		.wr_cqe = &c->cqe, .sg_list = &sge, .num_sge = 1,
	};
	const struct ib_recv_wr *bad;
	int i, err;

	c->cqe.done = ctr_done;
	for (i = 0; i < n; i++) {
		sge.addr = s->dma + (i * (u64)len) % (MIB - len + 1);
		err = ib_post_recv(qp, &wr, &bad);
		if (err)
			return err;
	}
	return 0;
}

static bool ctr_wait(struct ctr *c, const char *what)
{
	return CHECK(wait_for_completion_timeout(&c->done,
						 msecs_to_jiffies(WAIT_MS)),
		     "%s: %d of %d completions", what,
		     atomic_read(&c->total), c->target);
}

static void ulp_reset(struct ulp *u, int s0, int r0, int s1, int r1)
{
	ctr_init(&u->sc[0], s0, true);
	ctr_init(&u->rc[0], r0, false);
	ctr_init(&u->sc[1], s1, true);
	ctr_init(&u->rc[1], r1, false);
}

static void ulp_traffic(struct ulp *u)
{
	int i;

	/* 32 SENDs each way; the receivers' callbacks run from a workqueue. */
	ulp_reset(u, 32, 32, 32, 32);
	for (i = 0; i < 2; i++)
		CHECK(!post_recvs(u->p.qp[i], &u->rc[i], 32, 4096, &S[i]),
		      "post 32 receives");
	for (i = 0; i < 2; i++) {
		fill(S[i].buf, MIB, i);
		CHECK(!post_sends(u->p.qp[i], &u->sc[i], IB_WR_SEND, 32, 4096,
				  0, 0, &S[i]), "post 32 SENDs");
	}
	for (i = 0; i < 2; i++) {
		ctr_wait(&u->sc[i], "SEND callbacks");
		ctr_wait(&u->rc[i], "RECV callbacks");
		CHECK(atomic_read(&u->sc[i].ok) == 32 &&
		      atomic_read(&u->rc[i].ok) == 32,
		      "side %d: %d SENDs, %d RECVs ok", i,
		      atomic_read(&u->sc[i].ok), atomic_read(&u->rc[i].ok));
		CHECK(!atomic_read(&u->sc[i].wrong_ctx) &&
		      !atomic_read(&u->rc[i].wrong_ctx),
		      "side %d: callbacks in the wrong context %d/%d", i,
		      atomic_read(&u->sc[i].wrong_ctx),
		      atomic_read(&u->rc[i].wrong_ctx));
	}
}

/* ib_drain_qp on both sides while WRITEs and READs are in flight. */
static void ulp_drain(struct ulp *u)
{
	int i, n = 48;

	ulp_reset(u, 2 * n, 16, 0, 16);
	for (i = 0; i < 2; i++)
		CHECK(!post_recvs(u->p.qp[i], &u->rc[i], 16, 4096, &S[i]),
		      "post receives");
	CHECK(!post_sends(u->p.qp[0], &u->sc[0], IB_WR_RDMA_WRITE, n, 16384,
			  S[1].dma, S[1].pd->unsafe_global_rkey, &S[0]) &&
	      !post_sends(u->p.qp[0], &u->sc[0], IB_WR_RDMA_READ, n, 16384,
			  S[1].dma, S[1].pd->unsafe_global_rkey, &S[0]),
	      "post WRITEs and READs");
	/* drain once the first requests have completed: mid-stream */
	for (i = 0; i < 5000 && atomic_read(&u->sc[0].ok) < 4; i++)
		usleep_range(500, 1000);
	ib_drain_qp(u->p.qp[0]);
	/* everything posted before the drain has completed */
	CHECK(atomic_read(&u->sc[0].total) == 2 * n &&
	      atomic_read(&u->rc[0].total) == 16 &&
	      !atomic_read(&u->sc[0].bad) && !atomic_read(&u->rc[0].bad) &&
	      atomic_read(&u->rc[0].flushed) == 16,
	      "drained: sends %d (%d ok, %d flushed, %d bad), recvs %d/%d",
	      atomic_read(&u->sc[0].total), atomic_read(&u->sc[0].ok),
	      atomic_read(&u->sc[0].flushed), atomic_read(&u->sc[0].bad),
	      atomic_read(&u->rc[0].total), atomic_read(&u->rc[0].flushed));
	CHECK(qp_state(u->p.qp[0]) == IB_QPS_ERR, "drained QP in ERR");
	pr_info("rctest: drain: %d of %d requests done before the drain\n",
		atomic_read(&u->sc[0].ok), 2 * n);
	ib_drain_qp(u->p.qp[1]);
	CHECK(atomic_read(&u->rc[1].total) == 16 &&
	      atomic_read(&u->rc[1].flushed) == 16,
	      "peer drained: recvs %d, %d flushed",
	      atomic_read(&u->rc[1].total), atomic_read(&u->rc[1].flushed));
}

/* Destroy both QPs, @first side first, with requests and responses in flight. */
static void ulp_destroy_busy(struct ulp *u, int first, int delay_us)
{
	int i;

	ulp_reset(u, 1 << 30, 1 << 30, 1 << 30, 1 << 30);
	for (i = 0; i < 2; i++) {
		CHECK(!post_recvs(u->p.qp[i], &u->rc[i], 32, 65536, &S[i]),
		      "post receives");
		CHECK(!post_sends(u->p.qp[i], &u->sc[i], IB_WR_RDMA_WRITE, 16,
				  65536, S[!i].dma,
				  S[!i].pd->unsafe_global_rkey, &S[i]) &&
		      !post_sends(u->p.qp[i], &u->sc[i], IB_WR_RDMA_READ, 16,
				  65536, S[!i].dma,
				  S[!i].pd->unsafe_global_rkey, &S[i]) &&
		      !post_sends(u->p.qp[i], &u->sc[i], IB_WR_SEND, 16, 4096,
				  0, 0, &S[i]),
		      "post WRITEs, READs, SENDs");
	}
	/* let some of it reach the wire */
	if (delay_us)
		usleep_range(delay_us, delay_us + 100);
	CHECK(!ib_destroy_qp(u->p.qp[first]), "destroy busy QP");
	CHECK(!ib_destroy_qp(u->p.qp[!first]), "destroy its peer");
	pr_info("rctest: destroyed busy pair (side %d first, %d us) after %d/%d and %d/%d completions\n",
		first, delay_us, atomic_read(&u->sc[0].total),
		atomic_read(&u->rc[0].total), atomic_read(&u->sc[1].total),
		atomic_read(&u->rc[1].total));
}

static void test_ulp(void)
{
	struct ulp *u = kzalloc(sizeof(*u), GFP_KERNEL);
	int i, before = atomic_read(&failures);

	if (!CHECK(u, "alloc"))
		return;
	for (i = 0; i < 2; i++) {
		u->scq[i] = ib_alloc_cq(S[i].dev, NULL, 512, 0, IB_POLL_SOFTIRQ);
		u->rcq[i] = ib_alloc_cq(S[i].dev, NULL, 512, 0,
					IB_POLL_WORKQUEUE);
		if (!CHECK(!IS_ERR(u->scq[i]) && !IS_ERR(u->rcq[i]),
			   "ib_alloc_cq"))
			goto out;
	}
	if (ulp_pair(u)) {
		ulp_traffic(u);
		ulp_drain(u);
		CHECK(!ib_destroy_qp(u->p.qp[0]) && !ib_destroy_qp(u->p.qp[1]),
		      "destroy drained QPs");
	}
	for (i = 0; i < 8; i++)
		if (ulp_pair(u))
			ulp_destroy_busy(u, i & 1, (i / 2) * 1000);
	/* ib_drain_qp with the peer gone and requests outstanding */
	if (ulp_pair(u)) {
		ulp_reset(u, 8, 0, 0, 0);
		CHECK(!ib_destroy_qp(u->p.qp[1]), "destroy peer");
		CHECK(!post_sends(u->p.qp[0], &u->sc[0], IB_WR_RDMA_WRITE, 8,
				  65536, S[1].dma,
				  S[1].pd->unsafe_global_rkey, &S[0]),
		      "post WRITEs");
		ib_drain_qp(u->p.qp[0]);
		CHECK(atomic_read(&u->sc[0].total) == 8 &&
		      !atomic_read(&u->sc[0].ok),
		      "drain without a peer: %d completions, %d ok",
		      atomic_read(&u->sc[0].total),
		      atomic_read(&u->sc[0].ok));
		CHECK(!ib_destroy_qp(u->p.qp[0]), "destroy");
	}
	/* and a pair still works on the same CQs afterwards */
	if (ulp_pair(u)) {
		ulp_traffic(u);
		ib_drain_qp(u->p.qp[0]);
		ib_drain_qp(u->p.qp[1]);
		ib_destroy_qp(u->p.qp[0]);
		ib_destroy_qp(u->p.qp[1]);
	}
out:
	for (i = 0; i < 2; i++) {
		if (!IS_ERR_OR_NULL(u->scq[i]))
			ib_free_cq(u->scq[i]);
		if (!IS_ERR_OR_NULL(u->rcq[i]))
			ib_free_cq(u->rcq[i]);
	}
	kfree(u);
	pr_info("rctest: ULP-style CQs, drain, destroy in flight: %d failed\n",
		atomic_read(&failures) - before);
}

/* ------------------------------------------------------------------ */

static int side_init(struct side *s, const char *name)
{
	struct ib_cq_init_attr cqa = { .cqe = 2 * QP_DEPTH };
	int err;

	s->dev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (!CHECK(s->dev, "device %s", name))
		return -ENODEV;
	err = find_gid(s);
	if (!CHECK(!err, "%s: RoCE v2 %s GID: %d", name,
		   ipv6 ? "IPv6" : "IPv4", err))
		return err;
	s->pd = ib_alloc_pd(s->dev, IB_PD_UNSAFE_GLOBAL_RKEY);
	s->pd2 = ib_alloc_pd(s->dev, 0);
	s->cq = ib_create_cq(s->dev, rc_comp, NULL, NULL, &cqa);
	s->buf = kzalloc(BUF_LEN, GFP_KERNEL);
	if (!CHECK(!IS_ERR(s->pd) && !IS_ERR(s->pd2) && !IS_ERR(s->cq) &&
		   s->buf, "%s: PD, CQ, buffer", name))
		return -ENOMEM;
	s->dma = ib_dma_map_single(s->dev, s->buf, BUF_LEN, DMA_BIDIRECTIONAL);
	if (!CHECK(!ib_dma_mapping_error(s->dev, s->dma), "dma map"))
		return -ENOMEM;
	pr_info("rctest: %s: GID %pI6 index %u, MAC %pM\n", name,
		s->gid.raw, s->gid_index, s->mac);
	return 0;
}

static void side_fini(struct side *s)
{
	if (s->buf && s->dma && !ib_dma_mapping_error(s->dev, s->dma))
		ib_dma_unmap_single(s->dev, s->dma, BUF_LEN, DMA_BIDIRECTIONAL);
	kfree(s->buf);
	if (!IS_ERR_OR_NULL(s->cq))
		ib_destroy_cq(s->cq);
	if (!IS_ERR_OR_NULL(s->pd2))
		ib_dealloc_pd(s->pd2);
	if (!IS_ERR_OR_NULL(s->pd))
		ib_dealloc_pd(s->pd);
	if (s->dev)
		ib_device_put(s->dev);
	memset(s, 0, sizeof(*s));
}

/* ------------------------------------------------------------------ */
/* hold=1: traffic left running for device removal                    */
/* ------------------------------------------------------------------ */

/*
 * With hold=1 the module runs no checks: it starts an endless ping-pong
 * from ib_cqe callbacks between the two devices and keeps it running
 * after init.  It is an ib_client, so `rdma link delete` or netdev
 * removal of either device calls its remove callback, which stops the
 * traffic (ib_drain_qp on both QPs) and frees everything on both devices,
 * as a ULP must; the suite checks that removal completes.
 */
static DEFINE_MUTEX(held_lock);
static bool held, client_registered;
static struct pair held_pair;

static void held_release(const char *why)
{
	int i;

	for (i = 0; i < 2; i++)
		PP[i].stop = true;
	ib_drain_qp(held_pair.qp[0]);
	ib_drain_qp(held_pair.qp[1]);
	pr_info("rctest: held: released on %s after %d/%d round trips, errors %d/%d, post errors %d/%d\n",
		why, PP[0].recvs, PP[1].recvs, PP[0].errors, PP[1].errors,
		PP[0].post_errors, PP[1].post_errors);
	ib_destroy_qp(held_pair.qp[0]);
	ib_destroy_qp(held_pair.qp[1]);
	for (i = 0; i < 2; i++)
		ib_free_cq(PP[i].cq);
	side_fini(&S[1]);
	side_fini(&S[0]);
	held = false;
}

static int rc_client_add(struct ib_device *dev)
{
	return 0;
}

static void rc_client_remove(struct ib_device *dev, void *data)
{
	char why[IB_DEVICE_NAME_MAX + 16];

	mutex_lock(&held_lock);
	if (held && (dev == S[0].dev || dev == S[1].dev)) {
		snprintf(why, sizeof(why), "removal of %s", dev_name(&dev->dev));
		held_release(why);
	}
	mutex_unlock(&held_lock);
}

static struct ib_client rc_client = {
	.name = "softrnic_rctest",
	.add = rc_client_add,
	.remove = rc_client_remove,
};

static void hold_start(void)
{
	int i, k, err;

	if (side_init(&S[0], dev0) || side_init(&S[1], dev1))
		goto fail;
	memset(PP, 0, sizeof(PP));
	pp_rounds = INT_MAX;
	for (i = 0; i < 2; i++) {
		PP[i].idx = i;
		spin_lock_init(&PP[i].lock);
		init_completion(&PP[i].done);
		PP[i].cq = ib_alloc_cq(S[i].dev, NULL, 64, 0,
				       i ? IB_POLL_WORKQUEUE : IB_POLL_SOFTIRQ);
		PP[i].scqe.done = pp_send_done;
		PP[i].rcqe.done = pp_recv_done;
		if (!CHECK(!IS_ERR(PP[i].cq), "CQ")) {
			if (i)
				ib_free_cq(PP[0].cq);
			goto fail;
		}
	}
	err = pair_new_cq(&held_pair, S[1].pd, PP[0].cq, PP[0].cq, PP[1].cq,
			  PP[1].cq);
	if (!CHECK(!err, "held pair: %d", err)) {
		ib_free_cq(PP[0].cq);
		ib_free_cq(PP[1].cq);
		goto fail;
	}
	for (i = 0; i < 2; i++) {
		PP[i].qp = held_pair.qp[i];
		for (k = 0; k < PP_RECVS; k++)
			pp_post(&PP[i], true);
	}
	/* the client first: a removal from now on finds the objects */
	mutex_lock(&held_lock);
	held = true;
	mutex_unlock(&held_lock);
	pp_post(&PP[0], false);
	pr_info("rctest: held traffic running between %s and %s\n", dev0,
		dev1);
	return;
fail:
	side_fini(&S[1]);
	side_fini(&S[0]);
}

static int __init rctest_init(void)
{
	if (hold) {
		int err = ib_register_client(&rc_client);

		if (!CHECK(!err, "ib_register_client: %d", err))
			return err;
		client_registered = true;
		hold_start();
		ktest_done();
		return 0;
	}
	if (!side_init(&S[0], dev0) && !side_init(&S[1], dev1)) {
		test_data_path();
		test_fast_reg();
		test_fast_reg_blocks();
		if (!no_inv_race)
			test_inv_in_flight();
		test_inv_errors();
		test_atomics();
		test_io_chain();
		test_io_queues();
		test_big_fast_reg();
		test_recv_variants();
		test_srq_last_wqe();
		test_err_recv_order();
		test_sq_semantics();
		pp_run(true);
		pp_run(false);
		test_ulp();
	}
	side_fini(&S[1]);
	side_fini(&S[0]);
	ktest_done();
	return 0;
}

static void __exit rctest_exit(void)
{
	/* calls rc_client_remove for each device still there */
	if (client_registered)
		ib_unregister_client(&rc_client);
}

module_init(rctest_init);
module_exit(rctest_exit);
MODULE_DESCRIPTION("softrnic RoCEv2 RC across the wire: kernel-verbs test (test only)");
MODULE_LICENSE("GPL");
