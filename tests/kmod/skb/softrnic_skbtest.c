// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module: softrnic's RoCEv2 receive path fed non-linear skbs,
 * as a real NIC driver (virtio-net's mergeable buffers, GRO) hands them
 * over and a veth never does.  Not part of softrnic.ko.  Loaded in the VM
 * once roce0 (the peer) and roce1 (the target) have their RoCE v2 IPv4
 * GIDs:
 *
 *   insmod softrnic_skbtest.ko dev0=roce0 dev1=roce1 seed=N [valid=N] [bad=N]
 *
 * It connects an RC QP pair between the devices (kernel verbs, as
 * tests/kmod/rc does), then builds whole Ethernet/IPv4/UDP/BTH frames
 * from roce0's QP to roce1's, with kernel/proto's header builder and
 * ICRC, cuts each at random offsets into a linear part (14 bytes, the
 * Ethernet header, up to the whole frame: most often ending inside the
 * IP, UDP, BTH or extension headers), page fragments at random offsets
 * within their pages and, for some, a frag_list skb, and hands it to
 * roce1's netdev with netif_receive_skb(), as a driver's NAPI poll does:
 *
 *   valid   WRITE ONLY, WRITE FIRST/MIDDLE/LAST, SEND ONLY into a posted
 *           receive, at the expected PSN, with random payloads: every
 *           byte must land where it belongs (the DMA MR of roce1's PD),
 *           each SEND complete with its length;
 *   bad     between them, frames that must be dropped and counted (a
 *           byte the ICRC covers flipped after it was computed, the
 *           ICRC itself wrong, the RoCE part cut short with a valid
 *           ICRC): roce1's rx_drop_* counters must grow by exactly their
 *           number, and the byte they would have written must not change.
 *
 *   locked  (lookup=1, the default) one WRITE ONLY received on one CPU
 *           while a thread on another holds roce1's QP table lock (its
 *           xarray's, as create and destroy take it) with IRQs off: a
 *           packet's QP lookup is lockless (RCU), so the WRITE must land
 *           while the lock is still held, not when it is let go.
 *
 * Logs "skbtest: FAIL ..." per failed check and ends with "skbtest: done:
 * N checks, M failed" (tests/vm/lib.sh kmod_passed).  Everything it
 * created is gone when init returns.
 */
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/prandom.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "roce_hdr.h"
#include "roce_icrc.h"
#include "roce_parse.h"
#include "roce_psn.h"
#include "softrnic.h"		/* the QP table the locked check holds */

#define KTEST_NAME "skbtest"
#include "ktest.h"

static char *dev0 = "roce0";
module_param(dev0, charp, 0444);
MODULE_PARM_DESC(dev0, "the peer device, whose QP the frames come from");
static char *dev1 = "roce1";
module_param(dev1, charp, 0444);
MODULE_PARM_DESC(dev1, "the target device, whose netdev receives the frames");
static ulong seed = 1;
module_param(seed, ulong, 0444);
MODULE_PARM_DESC(seed, "PRNG seed (split points, sizes, payloads)");
static uint valid = 300;
module_param(valid, uint, 0444);
MODULE_PARM_DESC(valid, "valid messages");
static uint bad = 300;
module_param(bad, uint, 0444);
MODULE_PARM_DESC(bad, "damaged frames among them");
static bool lookup = true;
module_param(lookup, bool, 0444);
MODULE_PARM_DESC(lookup, "receive a WRITE while another CPU holds roce1's QP table lock");
static bool broken_check;
module_param(broken_check, bool, 0444);
MODULE_PARM_DESC(broken_check, "self-test: count one valid SEND as if it were a bad frame");

#define MTU		1024
#define BUF_LEN		(256 * 1024)
#define SENTINEL_OFF	(BUF_LEN - PAGE_SIZE)	/* where bad frames aim */
#define RECV_LEN	2048
#define RECV_OFF	(BUF_LEN - 2 * PAGE_SIZE) /* where SENDs land */
#define WAIT_MS		5000

struct side {
	struct ib_device *dev;
	struct net_device *ndev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	u8 *buf;
	u64 dma;
	u8 gid_index;
	union ib_gid gid;
};

static struct side S[2];
static struct ib_qp *QP[2];
static u32 epsn;		/* roce1's expected PSN */
static struct rnd_state rnd;

static u32 rnd_below(u32 n)
{
	return n ? prandom_u32_state(&rnd) % n : 0;
}

static void cq_noop(struct ib_cq *cq, void *ctx)
{
}

/* The RoCE v2 IPv4 GID of port 1 and its netdev (held). */
static int find_gid(struct side *s)
{
	const struct ib_gid_attr *attr;
	struct net_device *ndev;
	int i;

	for (i = 0; i < 256; i++) {
		attr = rdma_get_gid_attr(s->dev, 1, i);
		if (IS_ERR(attr)) {
			if (PTR_ERR(attr) == -EINVAL)
				break;
			continue;
		}
		if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		    ipv6_addr_v4mapped((const struct in6_addr *)attr->gid.raw)) {
			rcu_read_lock();
			ndev = rdma_read_gid_attr_ndev_rcu(attr);
			if (!IS_ERR(ndev))
				dev_hold(ndev);
			rcu_read_unlock();
			s->gid = attr->gid;
			s->gid_index = i;
			rdma_put_gid_attr(attr);
			if (IS_ERR(ndev))
				return PTR_ERR(ndev);
			s->ndev = ndev;
			return 0;
		}
		rdma_put_gid_attr(attr);
	}
	return -ENOENT;
}

static int side_init(struct side *s, const char *name)
{
	struct ib_cq_init_attr cqa = { .cqe = 256 };
	int err;

	s->dev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (!CHECK(s->dev, "device %s", name))
		return -ENODEV;
	err = find_gid(s);
	if (!CHECK(!err, "%s: RoCE v2 IPv4 GID: %d", name, err))
		return err;
	s->pd = ib_alloc_pd(s->dev, IB_PD_UNSAFE_GLOBAL_RKEY);
	s->cq = ib_create_cq(s->dev, cq_noop, NULL, NULL, &cqa);
	s->buf = kzalloc(BUF_LEN, GFP_KERNEL);
	if (!CHECK(!IS_ERR(s->pd) && !IS_ERR(s->cq) && s->buf, "%s: PD, CQ, buffer", name))
		return -ENOMEM;
	s->dma = ib_dma_map_single(s->dev, s->buf, BUF_LEN, DMA_BIDIRECTIONAL);
	if (!CHECK(!ib_dma_mapping_error(s->dev, s->dma), "dma map"))
		return -ENOMEM;
	return 0;
}

static void side_fini(struct side *s)
{
	if (s->buf && s->dma && !ib_dma_mapping_error(s->dev, s->dma))
		ib_dma_unmap_single(s->dev, s->dma, BUF_LEN, DMA_BIDIRECTIONAL);
	kfree(s->buf);
	if (!IS_ERR_OR_NULL(s->cq))
		ib_destroy_cq(s->cq);
	if (!IS_ERR_OR_NULL(s->pd))
		ib_dealloc_pd(s->pd);
	if (s->ndev)
		dev_put(s->ndev);
	if (s->dev)
		ib_device_put(s->dev);
	memset(s, 0, sizeof(*s));
}

static struct ib_qp *mk_qp(struct side *s)
{
	struct ib_qp_init_attr init = {
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.cap = {
			.max_send_wr = 64,
			.max_recv_wr = 64,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
		.port_num = 1,
	};

	return ib_create_qp(s->pd, &init);
}

static int qp_connect(struct ib_qp *qp, const struct side *me,
		      const struct side *peer, u32 dqpn, u32 my_psn, u32 peer_psn)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ,
	};
	int err;

	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT |
			   IB_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = peer_psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&a.ah_attr, 1);
	rdma_ah_set_grh(&a.ah_attr, (union ib_gid *)&peer->gid, 0, me->gid_index, 64, 0);
	memcpy(a.ah_attr.roce.dmac, peer->ndev->dev_addr, ETH_ALEN);
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
	a.max_rd_atomic = 1;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
			    IB_QP_RNR_RETRY | IB_QP_SQ_PSN | IB_QP_MAX_QP_RD_ATOMIC);
}

/* Sum of roce1's port counters whose names start with @prefix. */
static u64 counters(struct ib_device *dev, const char *prefix)
{
	struct rdma_hw_stats *st;
	u64 v = 0;
	int i, n;

	if (!dev->ops.alloc_hw_port_stats || !dev->ops.get_hw_stats)
		return U64_MAX;
	st = dev->ops.alloc_hw_port_stats(dev, 1);
	if (!st)
		return U64_MAX;
	n = dev->ops.get_hw_stats(dev, st, 1, st->num_counters);
	for (i = 0; i < n && i < st->num_counters; i++)
		if (!strncmp(st->descs[i].name, prefix, strlen(prefix)))
			v += st->value[i];
	rdma_free_hw_stats_struct(st);
	return v;
}

/* ------------------------------------------------------------------ */
/* Frames                                                              */
/* ------------------------------------------------------------------ */

#define L3_OFF		ETH_HLEN
#define UDP_OFF		(ETH_HLEN + ROCE_IPV4_HDR_LEN)
#define BTH_OFF		(UDP_OFF + ROCE_UDP_HDR_LEN)
#define FRAME_MAX	(BTH_OFF + ROCE_MAX_HDR_LEN + MTU + 8 + ROCE_ICRC_LEN)

enum damage {
	DMG_NONE,
	DMG_FLIP,	/* a byte the ICRC covers, after the ICRC */
	DMG_ICRC,	/* the ICRC itself */
	DMG_CUT,	/* the RoCE part cut inside its headers, valid ICRC */
	DMG_NR,
};

/*
 * An Ethernet frame of @p with @payload (@plen bytes) at @f, from roce0's
 * address to roce1's; returns its length.  @dmg: how to damage it.
 */
static size_t frame(u8 *f, struct roce_pkt *p, const u8 *payload, u32 plen,
		    enum damage dmg)
{
	struct ethhdr *eth = (struct ethhdr *)f;
	struct iphdr *iph = (struct iphdr *)(f + L3_OFF);
	struct udphdr *uh = (struct udphdr *)(f + UDP_OFF);
	size_t hl, rlen, i;

	p->pad = roce_pad_len(plen);
	p->pkey = ROCE_DEFAULT_PKEY;
	hl = roce_build_hdrs(f + BTH_OFF, p);
	memcpy(f + BTH_OFF + hl, payload, plen);
	memset(f + BTH_OFF + hl + plen, 0, p->pad + ROCE_ICRC_LEN);
	rlen = hl + plen + p->pad + ROCE_ICRC_LEN;
	if (dmg == DMG_CUT) {
		/* cut inside the extension headers (or right after the BTH) */
		rlen = ROCE_BTH_LEN + rnd_below(hl - ROCE_BTH_LEN + 1);
		rlen = max_t(size_t, rlen & ~3UL, ROCE_BTH_LEN) + ROCE_ICRC_LEN;
		if (rlen >= hl + ROCE_ICRC_LEN) /* not cut: cut the payload's pad off */
			rlen = ROCE_BTH_LEN + ROCE_ICRC_LEN + 1;
	}

	memcpy(eth->h_dest, S[1].ndev->dev_addr, ETH_ALEN);
	memcpy(eth->h_source, S[0].ndev->dev_addr, ETH_ALEN);
	eth->h_proto = htons(ETH_P_IP);
	memset(iph, 0, sizeof(*iph));
	iph->version = 4;
	iph->ihl = 5;
	iph->tot_len = htons(ROCE_IPV4_HDR_LEN + ROCE_UDP_HDR_LEN + rlen);
	iph->id = htons(1 + rnd_below(0xfffe));
	iph->frag_off = htons(IP_DF);
	iph->ttl = 64;
	iph->protocol = IPPROTO_UDP;
	memcpy(&iph->saddr, S[0].gid.raw + 12, 4);
	memcpy(&iph->daddr, S[1].gid.raw + 12, 4);
	uh->source = htons(0xc000 | rnd_below(0x4000));
	uh->dest = htons(ROCE_UDP_DPORT);
	uh->len = htons(ROCE_UDP_HDR_LEN + rlen);
	uh->check = 0;
	roce_icrc_fill(iph, ROCE_IPV4_HDR_LEN, false, (u8 *)uh, ROCE_UDP_HDR_LEN + rlen);
	ip_send_check(iph);
	switch (dmg) {
	case DMG_FLIP:
		/*
		 * BTH .. payload: what the ICRC covers and the IP layer does
		 * not check; not BTH byte 4 (FECN, BECN), which it masks
		 */
		i = rnd_below(rlen - ROCE_ICRC_LEN);
		if (i == 4)
			i = 5;
		f[BTH_OFF + i] ^= 1 << rnd_below(8);
		break;
	case DMG_ICRC:
		f[BTH_OFF + rlen - ROCE_ICRC_LEN + rnd_below(ROCE_ICRC_LEN)] ^= 1 << rnd_below(8);
		break;
	default:
		break;
	}
	return BTH_OFF + rlen;
}

/* linear part ending in the headers, in the payload; with a frag_list; BTH not linear */
static u64 shapes[4];

/*
 * @len bytes of @f as a non-linear skb of @ndev: a linear part of random
 * length (at least the Ethernet header), page fragments at random offsets,
 * sometimes the tail in a frag_list skb.
 */
static struct sk_buff *split_skb(struct net_device *ndev, const u8 *f, size_t len)
{
	size_t lin, off, end, n, hdrs = BTH_OFF + ROCE_MAX_HDR_LEN;
	struct sk_buff *skb, *fl;
	int nfrags, i;

	/* mostly inside the headers, else anywhere */
	if (rnd_below(4))
		lin = ETH_HLEN + rnd_below(min(len, hdrs) - ETH_HLEN + 1);
	else
		lin = ETH_HLEN + rnd_below(len - ETH_HLEN + 1);
	shapes[lin < hdrs ? 0 : 1]++;
	skb = alloc_skb(NET_SKB_PAD + NET_IP_ALIGN + lin, GFP_KERNEL);
	if (!skb)
		return NULL;
	skb_reserve(skb, NET_SKB_PAD + NET_IP_ALIGN);
	skb_put_data(skb, f, lin);
	off = lin;

	/* the rest: up to 6 page fragments, then, one in three, a frag_list skb */
	end = len;
	if (off < len && !rnd_below(3))
		end = off + rnd_below(len - off);
	nfrags = 1 + rnd_below(6);
	for (i = 0; i < nfrags && off < end; i++) {
		struct page *page;
		u32 poff;

		n = i == nfrags - 1 ? end - off : 1 + rnd_below(end - off);
		if (n > PAGE_SIZE)
			n = PAGE_SIZE;
		page = alloc_page(GFP_KERNEL);
		if (!page)
			goto fail;
		poff = rnd_below(PAGE_SIZE - n + 1);
		memcpy(page_address(page) + poff, f + off, n);
		skb_add_rx_frag(skb, i, page, poff, n, PAGE_SIZE);
		off += n;
	}
	if (off < len) {	/* the frag_list, or what did not fit a page */
		shapes[2]++;
		fl = alloc_skb(len - off, GFP_KERNEL);
		if (!fl)
			goto fail;
		skb_put_data(fl, f + off, len - off);
		skb_shinfo(skb)->frag_list = fl;
		skb->len += fl->len;
		skb->data_len += fl->len;
		skb->truesize += fl->truesize;
	}
	if (lin < BTH_OFF + ROCE_BTH_LEN)
		shapes[3]++;
	skb->dev = ndev;
	skb->protocol = eth_type_trans(skb, ndev);
	skb->ip_summed = CHECKSUM_NONE;
	return skb;
fail:
	kfree_skb(skb);
	return NULL;
}

/* Receive @f as a driver's NAPI poll would. */
static bool inject(const u8 *f, size_t len)
{
	struct sk_buff *skb = split_skb(S[1].ndev, f, len);

	if (!CHECK(skb, "skb allocation"))
		return false;
	local_bh_disable();
	netif_receive_skb(skb);
	local_bh_enable();
	return true;
}

/* ------------------------------------------------------------------ */
/* The test                                                            */
/* ------------------------------------------------------------------ */

static u8 *frame_buf, *payload, *expect;
static u64 nbad, nvalid_pkts, nsends;

/* A bad frame aimed at the sentinel page at the expected PSN. */
static void inject_bad(void)
{
	enum damage d = 1 + rnd_below(DMG_NR - 1);
	struct roce_pkt p = {};
	u32 plen = 4 * (1 + rnd_below(MTU / 4));
	size_t len;

	p.opcode = rnd_below(2) ? ROCE_RC_RDMA_WRITE_ONLY : ROCE_RC_SEND_ONLY;
	p.dest_qpn = QP[1]->qp_num;
	p.psn = epsn;
	p.reth.va = S[1].dma + SENTINEL_OFF;
	p.reth.rkey = S[1].pd->unsafe_global_rkey;
	p.reth.len = plen;
	memset(payload, 0x5a, plen);
	len = frame(frame_buf, &p, payload, plen, d);
	if (inject(frame_buf, len))
		nbad++;
}

/* Wait until roce1's buffer at @off holds @len bytes of expect[off]. */
static bool landed(u32 off, u32 len)
{
	unsigned long end = jiffies + msecs_to_jiffies(WAIT_MS);

	for (;;) {
		ib_dma_sync_single_for_cpu(S[1].dev, S[1].dma, BUF_LEN, DMA_BIDIRECTIONAL);
		if (!memcmp(S[1].buf + off, expect + off, len))
			return true;
		if (time_after(jiffies, end))
			return false;
		usleep_range(100, 200);
	}
}

/* One packet of a valid message, maybe preceded by a bad frame. */
static void inject_valid(struct roce_pkt *p, const u8 *data, u32 plen)
{
	size_t len;

	if (nbad < bad && rnd_below(2))
		inject_bad();
	p->dest_qpn = QP[1]->qp_num;
	p->psn = epsn;
	len = frame(frame_buf, p, data, plen, DMG_NONE);
	if (inject(frame_buf, len)) {
		epsn = roce_psn_next(epsn);
		nvalid_pkts++;
	}
}

/* A WRITE of @len bytes at @off of roce1's buffer, in MTU packets. */
static bool valid_write(u32 off, u32 len)
{
	u32 done = 0, n, i;

	for (i = 0; i < len; i++)
		expect[off + i] = (u8)prandom_u32_state(&rnd);
	do {
		struct roce_pkt p = {};
		bool first = !done, last;

		n = min_t(u32, len - done, MTU);
		last = done + n == len;
		p.opcode = first && last ? ROCE_RC_RDMA_WRITE_ONLY :
			   first ? ROCE_RC_RDMA_WRITE_FIRST :
			   last ? ROCE_RC_RDMA_WRITE_LAST : ROCE_RC_RDMA_WRITE_MIDDLE;
		p.reth.va = S[1].dma + off;
		p.reth.rkey = S[1].pd->unsafe_global_rkey;
		p.reth.len = len;
		p.ackreq = last;
		inject_valid(&p, expect + off + done, n);
		done += n;
	} while (done < len);
	return CHECK(landed(off, len), "WRITE of %u bytes at %u: data wrong (seed %lu)",
		     len, off, seed);
}

/* A SEND of @len bytes, in MTU packets, into a receive posted at RECV_OFF. */
static bool valid_send(u32 len)
{
	struct ib_sge sge = {
		.addr = S[1].dma + RECV_OFF,
		.length = RECV_LEN,
		.lkey = S[1].pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_id = ++nsends, .sg_list = &sge, .num_sge = 1 };
	const struct ib_recv_wr *badwr;
	unsigned long end = jiffies + msecs_to_jiffies(WAIT_MS);
	u32 done = 0, n, i;
	struct ib_wc wc;
	int got;

	if (!CHECK(!ib_post_recv(QP[1], &wr, &badwr), "post recv"))
		return false;
	for (i = 0; i < len; i++)
		expect[RECV_OFF + i] = (u8)prandom_u32_state(&rnd);
	do {
		struct roce_pkt p = {};
		bool first = !done, last;

		n = min_t(u32, len - done, MTU);
		last = done + n == len;
		p.opcode = first && last ? ROCE_RC_SEND_ONLY :
			   first ? ROCE_RC_SEND_FIRST :
			   last ? ROCE_RC_SEND_LAST : ROCE_RC_SEND_MIDDLE;
		p.ackreq = last;
		inject_valid(&p, expect + RECV_OFF + done, n);
		done += n;
	} while (done < len);
	if (broken_check && nsends == 1) /* self-test: count this SEND as a bad frame */
		nbad++;
	while (!(got = ib_poll_cq(S[1].cq, 1, &wc)) && time_before(jiffies, end))
		usleep_range(100, 200);
	if (!CHECK(got == 1, "SEND of %u bytes: no receive completion (seed %lu)", len, seed))
		return false;
	if (!CHECK(wc.status == IB_WC_SUCCESS && wc.wr_id == nsends && wc.byte_len == len,
		   "SEND of %u bytes: status %d wr_id %llu byte_len %u (seed %lu)",
		   len, wc.status, wc.wr_id, wc.byte_len, seed))
		return false;
	return CHECK(landed(RECV_OFF, len), "SEND of %u bytes: data wrong (seed %lu)", len, seed);
}

static void run(void)
{
	u64 drops0, drops1, rx0, rx1;
	u32 i, sentinel_fill = 0xa5;
	bool ok = true;

	memset(S[1].buf, 0, BUF_LEN);
	memset(S[1].buf + SENTINEL_OFF, sentinel_fill, PAGE_SIZE);
	memcpy(expect, S[1].buf, BUF_LEN);
	ib_dma_sync_single_for_device(S[1].dev, S[1].dma, BUF_LEN, DMA_BIDIRECTIONAL);
	drops0 = counters(S[1].dev, "rx_drop_");
	rx0 = counters(S[1].dev, "rx_packets");
	if (!CHECK(drops0 != U64_MAX, "%s has no port counters", dev1))
		return;

	for (i = 0; i < valid && ok; i++) {
		/* the self-test needs a SEND to miscount, whatever the seed */
		bool send = (broken_check && i == 0) || !rnd_below(3);

		if (!send) {
			u32 len = 1 + rnd_below(rnd_below(4) ? MTU : 6 * MTU);
			u32 off = rnd_below(RECV_OFF - len);

			ok = valid_write(off, len);
		} else {
			ok = valid_send(1 + rnd_below(RECV_LEN));
		}
	}
	while (ok && nbad < bad)
		inject_bad();

	/* the bad frames: each dropped and counted, nothing written */
	drops1 = counters(S[1].dev, "rx_drop_");
	CHECK(drops1 - drops0 == nbad, "rx_drop_* +%llu for %llu bad frames (seed %lu)",
	      drops1 - drops0, nbad, seed);
	CHECK(memchr_inv(S[1].buf + SENTINEL_OFF, sentinel_fill, PAGE_SIZE) == NULL,
	      "a bad frame wrote into the sentinel page (seed %lu)", seed);
	/* every frame, valid or not, reached the device: nothing lost on the way */
	rx1 = counters(S[1].dev, "rx_packets");
	CHECK(rx1 - rx0 == nvalid_pkts + nbad, "rx_packets +%llu for %llu frames (seed %lu)",
	      rx1 - rx0, nvalid_pkts + nbad, seed);
	pr_info("skbtest: %llu valid packets (%llu SENDs) and %llu bad frames, rx_packets +%llu, rx_drop_* +%llu; linear part ending in the headers %llu, in the payload %llu; frag_list %llu; BTH not in the linear part %llu: %d failed\n",
		nvalid_pkts, nsends, nbad, rx1 - rx0, drops1 - drops0,
		shapes[0], shapes[1], shapes[2], shapes[3], atomic_read(&failures));
}

/*
 * The locked lookup: a receiver thread on one CPU and a holder thread on
 * another.  The receiver says it is ready (LK_READY) and spins; the
 * holder takes the QP table's lock with IRQs off, says go (LK_GO) and
 * spins until the receiver has handed its frame to the stack (LK_DONE)
 * or LOCK_HOLD_MS have passed, noting which, and only then lets go.
 */
#define LOCK_HOLD_MS	2000

enum { LK_IDLE, LK_READY, LK_GO, LK_DONE };

static struct {
	const u8 *frame;
	size_t len;
	struct xarray *table;
	atomic_t state;
	bool landed_under_lock;
	struct completion held;
} lk;

/* Park a finished thread until kthread_stop(). */
static void lk_park(void)
{
	while (!kthread_should_stop())
		schedule_timeout_interruptible(HZ / 100);
}

static int lk_receiver(void *unused)
{
	atomic_set(&lk.state, LK_READY);
	/* Debian's kernel preempts only where asked: let its CPU serve others */
	while (atomic_read(&lk.state) != LK_GO) {
		if (kthread_should_stop())
			return 0;
		cond_resched();
	}
	inject(lk.frame, lk.len);
	atomic_set(&lk.state, LK_DONE);
	lk_park();
	return 0;
}

static int lk_holder(void *unused)
{
	ktime_t end;
	unsigned long flags;

	xa_lock_irqsave(lk.table, flags);
	atomic_set(&lk.state, LK_GO);
	end = ktime_add_ms(ktime_get(), LOCK_HOLD_MS);
	while (atomic_read(&lk.state) != LK_DONE && ktime_before(ktime_get(), end))
		cpu_relax();
	lk.landed_under_lock = atomic_read(&lk.state) == LK_DONE;
	xa_unlock_irqrestore(lk.table, flags);
	complete(&lk.held);
	lk_park();
	return 0;
}

static void locked_lookup(void)
{
	struct task_struct *rx = NULL, *holder = NULL;
	unsigned long end = jiffies + msecs_to_jiffies(WAIT_MS);
	struct roce_pkt p = {};
	u32 len = 64, off = 0, i;
	int rx_cpu, holder_cpu;

	rx_cpu = cpumask_first(cpu_online_mask);
	holder_cpu = cpumask_next(rx_cpu, cpu_online_mask);
	if (holder_cpu >= nr_cpu_ids) {
		pr_info("skbtest: one CPU online: the locked lookup needs two\n");
		return;
	}
	for (i = 0; i < len; i++)
		expect[off + i] = (u8)prandom_u32_state(&rnd);
	p.opcode = ROCE_RC_RDMA_WRITE_ONLY;
	p.reth.va = S[1].dma + off;
	p.reth.rkey = S[1].pd->unsafe_global_rkey;
	p.reth.len = len;
	p.ackreq = true;
	p.dest_qpn = QP[1]->qp_num;
	p.psn = epsn;
	lk.len = frame(frame_buf, &p, expect + off, len, DMG_NONE);
	lk.frame = frame_buf;
	lk.table = &to_sdev(S[1].dev)->qp_xa;
	atomic_set(&lk.state, LK_IDLE);
	init_completion(&lk.held);

	rx = kthread_create(lk_receiver, NULL, "skbtest_rx");
	if (!CHECK(!IS_ERR(rx), "receiver thread: %ld", PTR_ERR(rx)))
		return;
	kthread_bind(rx, rx_cpu);
	wake_up_process(rx);
	while (atomic_read(&lk.state) != LK_READY && time_before(jiffies, end))
		usleep_range(100, 200);
	if (!CHECK(atomic_read(&lk.state) == LK_READY, "the receiver thread did not start"))
		goto out;
	holder = kthread_create(lk_holder, NULL, "skbtest_lock");
	if (!CHECK(!IS_ERR(holder), "holder thread: %ld", PTR_ERR(holder))) {
		holder = NULL;
		goto out;
	}
	kthread_bind(holder, holder_cpu);
	wake_up_process(holder);
	if (!CHECK(wait_for_completion_timeout(&lk.held, msecs_to_jiffies(WAIT_MS +
									 LOCK_HOLD_MS)),
		   "the holder thread did not finish"))
		goto out;
	/* the receiver goes on once the lock is free, whatever it did before */
	while (atomic_read(&lk.state) != LK_DONE && time_before(jiffies, end + HZ))
		usleep_range(100, 200);
	CHECK(lk.landed_under_lock,
	      "a WRITE to QP %u waited for the QP table's lock (held %u ms on CPU %d)",
	      QP[1]->qp_num, LOCK_HOLD_MS, holder_cpu);
	if (CHECK(landed(off, len), "the WRITE received beside the lock: data wrong (seed %lu)",
		  seed))
		epsn = roce_psn_next(epsn);
	pr_info("skbtest: locked lookup: the WRITE was received on CPU %d %s CPU %d %s the QP table's lock\n",
		rx_cpu, lk.landed_under_lock ? "while" : "only after",
		holder_cpu, lk.landed_under_lock ? "held" : "let go of");
out:
	if (holder)
		kthread_stop(holder);
	kthread_stop(rx);
}

static int __init skbtest_init(void)
{
	u32 psn0, psn1;
	int err;

	prandom_seed_state(&rnd, seed);
	pr_info("skbtest: seed %lu, %u valid messages, %u bad frames\n", seed, valid, bad);
	frame_buf = kmalloc(FRAME_MAX, GFP_KERNEL);
	payload = kmalloc(MTU + 8, GFP_KERNEL);
	expect = kvzalloc(BUF_LEN, GFP_KERNEL);
	if (!CHECK(frame_buf && payload && expect, "buffers"))
		goto out;
	if (side_init(&S[0], dev0) || side_init(&S[1], dev1))
		goto out;
	QP[0] = mk_qp(&S[0]);
	QP[1] = mk_qp(&S[1]);
	if (!CHECK(!IS_ERR(QP[0]) && !IS_ERR(QP[1]), "create QPs"))
		goto out;
	psn0 = prandom_u32_state(&rnd) & ROCE_PSN_MASK;
	psn1 = prandom_u32_state(&rnd) & ROCE_PSN_MASK;
	err = qp_connect(QP[0], &S[0], &S[1], QP[1]->qp_num, psn0, psn1);
	if (!err)
		err = qp_connect(QP[1], &S[1], &S[0], QP[0]->qp_num, psn1, psn0);
	if (!CHECK(!err, "connect: %d", err))
		goto out;
	epsn = psn0;
	run();
	if (lookup)
		locked_lookup();
out:
	if (!IS_ERR_OR_NULL(QP[1]))
		ib_destroy_qp(QP[1]);
	if (!IS_ERR_OR_NULL(QP[0]))
		ib_destroy_qp(QP[0]);
	side_fini(&S[1]);
	side_fini(&S[0]);
	kvfree(expect);
	kfree(payload);
	kfree(frame_buf);
	ktest_done();
	return 0;
}

static void __exit skbtest_exit(void)
{
}

module_init(skbtest_init);
module_exit(skbtest_exit);
MODULE_DESCRIPTION("softrnic RoCEv2 receive of non-linear skbs (test only)");
MODULE_LICENSE("GPL");
