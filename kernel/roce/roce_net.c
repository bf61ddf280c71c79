// SPDX-License-Identifier: GPL-2.0
/*
 * RoCEv2 on the network stack: the UDP port, receive demultiplexing and
 * IP/UDP encapsulation.
 *
 * Namespaces.  A softrnic device lives in its netdev's namespace.  Every
 * namespace that has at least one roce device gets a netfilter LOCAL_IN
 * hook for IPv4 and IPv6 (struct roce_ns, net_generic), registered with
 * the first device there and removed with the last one, or when the
 * namespace is dismantled, whichever comes first.  Devices find their
 * namespace state through rdev->rns, under roce_net_mutex (control path
 * only); the receive path finds the device through an RCU list, with no
 * lock.
 *
 * Receive.  The hook takes UDP packets to port 4791 that are for one of
 * our devices: the one on the netdev a packet arrived on, or, for one
 * this host sent to itself (both ends on one device, or on two devices
 * of one namespace: the loopback device delivers it), the one on the
 * netdev that has the destination address.  The rest goes on to the UDP
 * layer.  No socket is bound to the port, so Linux 6.1's rdma_rxe, which
 * binds it in init_net when it is loaded and shares it with nobody, works
 * next to softrnic in either load order, each receiving for its own
 * netdevs.  A packet for a device of this host mostly never gets here:
 * roce_loop.c hands it over on the transmit side; what the loopback
 * device does bring back goes through the same code as any other.
 *
 * Transmit does not use a socket either: it routes in the netdev's
 * namespace, builds the UDP and IP headers itself and hands the packet to
 * ip_local_out()/ip6_local_out().  It cannot use udp_tunnel_xmit_skb():
 * the ICRC covers the IPv4 Identification field, which that helper picks
 * only after the payload (and so the ICRC) is final.
 *
 * Lifetime on transmit: the netdev is held by the device, but its
 * namespace is not; transmit runs under RCU and only while the netdev is
 * registered.  A namespace is freed only after its netdevs are
 * unregistered and an RCU grace period has passed (cleanup_net), so a
 * reader that saw NETREG_REGISTERED can use dev_net() until it unlocks.
 */
#include <linux/if_vlan.h>
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/module.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/route.h>

#include "roce.h"

struct roce_ns {
	struct list_head devs;		/* struct roce_dev.ns_node, RCU */
	unsigned int ndevs;
	struct net *net;		/* whose net_generic this is */
	bool hooked;			/* roce_nf_ops registered in net */
};

static unsigned int roce_net_id;
/* Sockets and device lists of every namespace: control path only. */
static DEFINE_MUTEX(roce_net_mutex);

/* ------------------------------------------------------------------ */
/* ICRC */

/*
 * The ICRC of the packet in @skb (kernel/proto/roce_icrc.h has the
 * definition): @l3 is the IP header as on the wire, the UDP header is at
 * @bth_off - 8 in @skb, @len counts from the BTH to the end of the UDP
 * payload, ICRC included.  Only the walk over a possibly non-linear skb
 * is ours; the payload is read where it lies, never copied.
 */
static u32 roce_icrc_compute(const void *l3, bool ipv6,
			     const struct sk_buff *skb, u32 bth_off, u32 len)
{
	u8 head[ROCE_UDP_HDR_LEN + ROCE_BTH_LEN];
	u32 off = bth_off + ROCE_BTH_LEN, n = len - ROCE_BTH_LEN - ROCE_ICRC_LEN;
	struct skb_seq_state st;
	const u8 *data;
	u32 crc, got, consumed = 0;

	skb_copy_bits(skb, bth_off - ROCE_UDP_HDR_LEN, head, sizeof(head));
	crc = roce_icrc_begin(l3, ipv6 ? ROCE_IPV6_HDR_LEN : ROCE_IPV4_HDR_LEN,
			      ipv6, head, sizeof(head));
	if (!skb_is_nonlinear(skb))
		return roce_icrc_final(roce_icrc_update(crc, skb->data + off,
							n));
	/*
	 * skb_seq_read() hands out whole blocks: the last one runs on past
	 * @off + @n, over the ICRC field, so it is cut here and the walk
	 * ended by hand.
	 */
	skb_prepare_seq_read((struct sk_buff *)skb, off, off + n, &st);
	while (consumed < n && (got = skb_seq_read(consumed, &data, &st))) {
		got = min(got, n - consumed);
		crc = roce_icrc_update(crc, data, got);
		consumed += got;
	}
	skb_abort_seq_read(&st);
	return roce_icrc_final(crc);
}

/* ------------------------------------------------------------------ */
/* Receive */

static struct roce_dev *roce_ns_find(struct roce_ns *rns,
				     const struct net_device *ndev)
{
	const struct net_device *real = is_vlan_dev(ndev) ?
					vlan_dev_real_dev(ndev) : NULL;
	struct roce_dev *rdev;

	list_for_each_entry_rcu(rdev, &rns->devs, ns_node)
		if (rdev->sdev->netdev == ndev ||
		    (real && rdev->sdev->netdev == real))
			return rdev;
	return NULL;
}

/* Does the packet come from the QP's peer, over the QP's IP version? */
static bool roce_from_peer(struct roce_qp *rqp, const struct sk_buff *skb)
{
	struct roce_path *p = &rqp->path;
	unsigned int seq;
	bool ok;

	do {
		seq = read_seqbegin(&rqp->path_lock);
		if (!p->valid)
			ok = false;
		else if (skb->protocol == htons(ETH_P_IP))
			ok = !p->ipv6 && ip_hdr(skb)->saddr == p->daddr4 &&
			     ip_hdr(skb)->daddr == p->saddr4;
		else
			ok = p->ipv6 &&
			     ipv6_addr_equal(&ipv6_hdr(skb)->saddr,
					     &p->daddr6) &&
			     ipv6_addr_equal(&ipv6_hdr(skb)->daddr,
					     &p->saddr6);
	} while (read_seqretry(&rqp->path_lock, seq));
	return ok;
}

/*
 * The ICRC, then the parse into @pkt, of a packet whose headers roce_rcv()
 * pulled: nothing of a corrupt packet is looked at, kept or queued.
 * Drops (counted) and returns false, or returns true.
 */
static bool roce_rcv_check(struct softrnic_dev *sdev, struct sk_buff *skb,
			   struct roce_pkt *pkt)
{
	const u32 bth_off = sizeof(struct udphdr);
	bool ipv6 = skb->protocol == htons(ETH_P_IPV6);
	u32 len = skb->len - bth_off, icrc, wire_icrc;
	u8 icrc_buf[ROCE_ICRC_LEN];
	int err;

	/*
	 * The ICRC first: nothing of a corrupt packet is looked at.  A
	 * packet looped by this host has none (roce_loop_xmit()).
	 */
	if (!roce_skb_cb(skb)->looped) {
		if (skb_copy_bits(skb, skb->len - ROCE_ICRC_LEN, icrc_buf,
				  sizeof(icrc_buf)))
			goto drop;
		wire_icrc = roce_icrc_get(icrc_buf);
		icrc = roce_icrc_compute(skb_network_header(skb), ipv6, skb,
					 bth_off, len);
		if (icrc != wire_icrc) {
			roce_count(sdev, ROCE_CNT_DROP_ICRC, 1);
			goto drop;
		}
	}
	err = roce_parse(skb->data + bth_off, len, pkt);
	if (err) {
		roce_count(sdev, ROCE_CNT_DROP_ICRC - err, 1);
		goto drop;
	}
	return true;
drop:
	kfree_skb(skb);
	return false;
}

/* A checked RC packet from the QP's peer, to its requester or responder. */
static void roce_rcv_rc(struct softrnic_qp *qp, const struct roce_pkt *pkt,
			struct sk_buff *skb)
{
	const u32 bth_off = sizeof(struct udphdr);

	if (pkt->info->flags & ROCE_OPF_RESP)
		roce_req_rcv(roce_qp(qp), pkt, skb, bth_off);
	else
		roce_resp_rcv(roce_qp(qp), pkt, skb, bth_off);
	/* BH is off: its sk_buff goes back to this CPU's cache for reuse. */
	napi_consume_skb(skb, 1);
}

/*
 * One packet that passed roce_rcv_check(): @qp is the QP the BTH names,
 * looked up before the packet was checked (the caller holds a reference),
 * or NULL.  An RC packet from the QP's peer is processed here, or, inside
 * a long message, queued for another CPU (roce_steer.c), which only ever
 * holds packets that passed every check but the transport's own.
 * Softirq; consumes @skb.
 */
static void roce_rcv_deliver(struct roce_dev *rdev, struct sk_buff *skb,
			     struct softrnic_qp *qp, const struct roce_pkt *pkt)
{
	struct softrnic_dev *sdev = rdev->sdev;
	const u32 bth_off = sizeof(struct udphdr);

	/*
	 * Every packet's P_Key, of any transport (IBTA 9.6.1.1): the
	 * default partition is the only one in our table.
	 */
	if (!roce_pkey_match(pkt->pkey, ROCE_DEFAULT_PKEY)) {
		roce_count(sdev, ROCE_CNT_DROP_PKEY, 1);
		goto drop;
	}
	if (pkt->info->transport == ROCE_TRANSPORT_UD) {
		roce_ud_rcv(sdev, qp, pkt, skb, bth_off);
		return;
	}
	if (pkt->info->transport != ROCE_TRANSPORT_RC) {
		/* CNPs: no congestion control to feed. */
		roce_count(sdev, ROCE_CNT_DROP_TRANSPORT, 1);
		goto drop;
	}

	/* The peeked QPN is the checked one: the ICRC covers it. */
	if (!qp || qp->kind != SR_QP_RC || !roce_qp(qp)) {
		roce_count(sdev, ROCE_CNT_DROP_UNKNOWN_QP, 1);
		goto drop;
	}
	if (!roce_from_peer(roce_qp(qp), skb)) {
		roce_qp_count(qp, ROCE_CNT_DROP_BAD_ADDR, 1);
		goto drop;
	}
	if (roce_steer(roce_qp(qp), skb, pkt))
		return;
	roce_rcv_rc(qp, pkt, skb);
	return;
drop:
	kfree_skb(skb);
}

/*
 * A packet roce_steer() queued, on the CPU it was steered to: it passed
 * every check before it was queued, and its bytes have not changed, so
 * only the parse is redone (the queue keeps no parse state).  The
 * steering work item, BH off, under RCU, holding a reference to @qp;
 * consumes @skb.
 */
void roce_rcv_steered(struct softrnic_qp *qp, struct sk_buff *skb)
{
	const u32 bth_off = sizeof(struct udphdr);
	struct roce_pkt pkt;

	if (WARN_ON_ONCE(roce_parse(skb->data + bth_off, skb->len - bth_off,
				    &pkt))) {
		kfree_skb(skb);
		return;
	}
	roce_rcv_rc(qp, &pkt, skb);
}

/*
 * One RoCEv2 packet: @skb->data is at the UDP header, whose length the
 * UDP layer checked and trimmed the skb to.  Softirq; consumes @skb.
 */
static void roce_rcv(struct roce_dev *rdev, struct sk_buff *skb)
{
	struct softrnic_dev *sdev = rdev->sdev;
	const u32 bth_off = sizeof(struct udphdr);
	struct softrnic_qp *qp;
	struct roce_pkt pkt;
	u32 len;

	if (skb->protocol != htons(ETH_P_IPV6) &&
	    (skb->protocol != htons(ETH_P_IP) || ip_hdr(skb)->ihl != 5)) {
		roce_count(sdev, ROCE_CNT_DROP_BAD_ADDR, 1);
		goto drop;
	}
	if (skb->len < bth_off + ROCE_BTH_LEN + ROCE_ICRC_LEN) {
		roce_count(sdev, ROCE_CNT_DROP_TRUNCATED, 1);
		goto drop;
	}
	len = skb->len - bth_off;
	/* Headers linear; the payload may stay in fragments. */
	if (!pskb_may_pull(skb, bth_off + min_t(u32, len, ROCE_MAX_HDR_LEN))) {
		roce_count(sdev, ROCE_CNT_DROP_TRUNCATED, 1);
		goto drop;
	}
	roce_count(sdev, ROCE_CNT_RX_PKTS, 1);
	roce_count(sdev, ROCE_CNT_RX_BYTES, len);

	if (!roce_rcv_check(sdev, skb, &pkt))
		return;
	qp = softrnic_qp_get(sdev, pkt.dest_qpn);
	if (qp) {
		/* The device counted it above, before any check. */
		softrnic_qp_stat(qp, ROCE_CNT_RX_PKTS, 1);
		softrnic_qp_stat(qp, ROCE_CNT_RX_BYTES, len);
	}
	roce_rcv_deliver(rdev, skb, qp, &pkt);
	if (qp)
		softrnic_qp_put(qp);
	return;
drop:
	kfree_skb(skb);
}

/*
 * A RoCEv2 packet the stack delivers locally: @skb->data is at its IP
 * header, the UDP header at @thoff from there.  Pull it, check the UDP
 * length (the one thing the UDP layer would have checked for us), and
 * hand it on with @skb->data at the UDP header.  The UDP checksum is not
 * checked: the ICRC covers everything it covers, and more.
 */
static void roce_rcv_udp(struct roce_dev *rdev, struct sk_buff *skb,
			 u32 thoff)
{
	const struct udphdr *uh;
	u32 ulen;

	if (!pskb_may_pull(skb, thoff + sizeof(*uh)))
		goto truncated;
	__skb_pull(skb, thoff);
	skb_reset_transport_header(skb);
	uh = udp_hdr(skb);
	ulen = ntohs(uh->len);
	if (ulen < sizeof(*uh) || ulen > skb->len ||
	    pskb_trim_rcsum(skb, ulen))
		goto truncated;
	roce_rcv(rdev, skb);
	return;
truncated:
	roce_count(rdev->sdev, ROCE_CNT_DROP_TRUNCATED, 1);
	kfree_skb(skb);
}

/*
 * A UDP GSO skb (a peer's transmit batch behind a veth or the loopback
 * device): cut back into its packets, as the UDP layer would.
 */
static void roce_rcv_gso(struct roce_dev *rdev, struct sk_buff *skb)
{
	struct sk_buff *segs, *seg, *next;
	bool looped;

	segs = __skb_gso_segment(skb, NETIF_F_SG | NETIF_F_HW_CSUM, false);
	if (IS_ERR_OR_NULL(segs)) {
		roce_count(rdev->sdev, ROCE_CNT_DROP_TRUNCATED,
			   skb_shinfo(skb)->gso_segs ?: 1);
		kfree_skb(skb);
		return;
	}
	looped = roce_skb_cb(skb)->looped;
	consume_skb(skb);
	skb_list_walk_safe(segs, seg, next) {
		skb_mark_not_on_list(seg);
		roce_skb_cb(seg)->looped = looped;
		roce_rcv_udp(rdev, seg, skb_transport_offset(seg));
	}
}

/* The netdev that has the destination address of @skb.  RCU held. */
struct net_device *roce_addr_dev(struct net *net, const struct sk_buff *skb)
{
	if (skb->protocol == htons(ETH_P_IP))
		return __ip_dev_find(net, ip_hdr(skb)->daddr, false);
	return ipv6_dev_find(net, &ipv6_hdr(skb)->daddr, NULL);
}

/* The roce device on @ndev of @net (or on its real device), or NULL. */
struct roce_dev *roce_dev_of(struct net *net, const struct net_device *ndev)
{
	return roce_ns_find(net_generic(net, roce_net_id), ndev);
}

/*
 * The roce device a packet is for: the one on the netdev it arrived on
 * (or that netdev's real device, for a VLAN), or, for a packet looped
 * back by this host through the stack (the loopback device delivers it:
 * tx-side loopback, roce_loop.c, found no device), the one whose netdev
 * has its destination address.  RCU held.
 */
static struct roce_dev *roce_rcv_dev(struct net *net, struct roce_ns *rns,
				     const struct sk_buff *skb,
				     const struct net_device *in)
{
	struct net_device *ndev;
	struct roce_dev *rdev;

	rdev = roce_ns_find(rns, in);
	if (rdev || !(in->flags & IFF_LOOPBACK))
		return rdev;
	ndev = roce_addr_dev(net, skb);
	return ndev ? roce_ns_find(rns, ndev) : NULL;
}

/*
 * A packet for @rdev, @skb->data at its IP header, the UDP header at
 * @thoff from there: the device's from here on.  RCU held, BH off.
 */
void roce_rcv_ip(struct roce_dev *rdev, struct sk_buff *skb, u32 thoff,
		 bool looped)
{
	roce_skb_cb(skb)->looped = looped;
	nf_reset_ct(skb);
	skb_set_transport_header(skb, skb_network_offset(skb) + thoff);
	if (skb_is_gso(skb))
		roce_rcv_gso(rdev, skb);
	else
		roce_rcv_udp(rdev, skb, thoff);
}

/*
 * LOCAL_IN hook of every namespace with a roce device: RoCEv2 packets
 * for our devices are taken here, before the UDP layer, everything else
 * goes on.  So no socket is bound to port 4791: rdma_rxe (which binds
 * it in init_net when loaded) or any other user of the port keeps
 * getting the packets for its own devices, whichever came first.
 * RCU held.
 */
static unsigned int roce_nf_in(void *priv, struct sk_buff *skb,
			       const struct nf_hook_state *state)
{
	struct roce_ns *rns = net_generic(state->net, roce_net_id);
	struct udphdr _uh;
	const struct udphdr *uh;
	struct roce_dev *rdev;
	u32 thoff;

	if (state->pf == NFPROTO_IPV4) {
		const struct iphdr *iph = ip_hdr(skb);

		if (iph->protocol != IPPROTO_UDP || ip_is_fragment(iph))
			return NF_ACCEPT;
		thoff = ip_hdrlen(skb);
	} else {
		/* RoCEv2 has no extension headers. */
		if (ipv6_hdr(skb)->nexthdr != IPPROTO_UDP)
			return NF_ACCEPT;
		thoff = sizeof(struct ipv6hdr);
	}
	uh = skb_header_pointer(skb, skb_network_offset(skb) + thoff,
				sizeof(_uh), &_uh);
	if (!uh || uh->dest != htons(ROCE_UDP_DPORT) || !state->in)
		return NF_ACCEPT;
	rdev = roce_rcv_dev(state->net, rns, skb, state->in);
	if (!rdev)
		return NF_ACCEPT;
	roce_rcv_ip(rdev, skb, thoff, false);
	return NF_STOLEN;
}

/* ------------------------------------------------------------------ */
/* Transmit */

/* Bytes from the BTH to the ICRC of @pkt as sent, or 0 if it cannot be. */
static size_t roce_wire_len(const struct roce_pkt *pkt)
{
	return roce_pkt_len(pkt->opcode, pkt->payload_len);
}

/*
 * The transport headers of @pkt (pad and P_Key ours) at @data, @len bytes
 * (roce_wire_len()) in all; pad and ICRC zeroed.  Returns where the
 * payload goes: the caller's to fill.
 */
static void *roce_build_pkt(u8 *data, const struct roce_pkt *pkt, size_t len)
{
	struct roce_pkt p = *pkt;
	size_t hlen;

	p.pad = roce_pad_len(pkt->payload_len);
	p.pkey = ROCE_DEFAULT_PKEY;
	hlen = roce_build_hdrs(data, &p);
	memset(data + hlen + p.payload_len, 0, len - hlen - p.payload_len);
	return data + hlen;
}

/*
 * A linear skb with room for @size bytes.  One that fits in a page comes
 * from this CPU's NAPI caches, its data a page fragment and its sk_buff
 * a cached one, instead of from two slab allocations: for a short
 * message those cost as much as building and receiving its packet did
 * (about 2 us of a loopback transmit under TCG), twice per message
 * counting the ACK.  The caches are per CPU, so BH goes off around
 * them; with IRQs off (BH could not be turned on again) or in hard IRQ,
 * the slab.
 */
static struct sk_buff *roce_skb_alloc(unsigned int size)
{
	unsigned int fsize = SKB_DATA_ALIGN(size) +
			     SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	struct sk_buff *skb = NULL;
	void *data;

	if (fsize > PAGE_SIZE || in_hardirq() || irqs_disabled())
		return alloc_skb(size, GFP_ATOMIC);
	local_bh_disable();
	data = napi_alloc_frag(fsize);
	if (data) {
		skb = napi_build_skb(data, fsize);
		if (!skb)
			skb_free_frag(data);
	}
	local_bh_enable();
	return skb;
}

/*
 * An skb for one packet of @qp: headroom for the encapsulation, then
 * the transport headers of @pkt, room for its payload (*@payload points
 * there), the pad and the ICRC.  Any context.
 */
struct sk_buff *roce_alloc_skb(struct softrnic_qp *qp, const struct roce_pkt *pkt,
			       void **payload)
{
	struct net_device *ndev = qp->sdev->netdev;
	struct sk_buff *skb;
	size_t len = roce_wire_len(pkt);

	if (!len)
		return NULL;
	skb = roce_skb_alloc(ROCE_HEADROOM(ndev) + len);
	if (!skb)
		return NULL;
	skb_reserve(skb, ROCE_HEADROOM(ndev));
	*payload = roce_build_pkt(skb_put(skb, len), pkt, len);
	return skb;
}

static void roce_read_path(struct roce_qp *rqp, struct roce_path *out)
{
	unsigned int seq;

	do {
		seq = read_seqbegin(&rqp->path_lock);
		*out = rqp->path;
	} while (read_seqretry(&rqp->path_lock, seq));
}

static void roce_push_udp(struct sk_buff *skb, __be16 sport)
{
	struct udphdr *udph;

	__skb_push(skb, sizeof(*udph));
	skb_reset_transport_header(skb);
	udph = udp_hdr(skb);
	udph->source = sport;
	udph->dest = htons(ROCE_UDP_DPORT);
	udph->len = htons(skb->len);
	udph->check = 0;
}

static void roce_put_icrc(struct sk_buff *skb, bool ipv6)
{
	u32 bth_off = skb_transport_offset(skb) + sizeof(struct udphdr);
	u32 len = skb->len - bth_off;

	roce_icrc_put(skb_tail_pointer(skb) - ROCE_ICRC_LEN,
		      roce_icrc_compute(skb_network_header(skb), ipv6, skb,
					bth_off, len));
}

/* The ICRC of one packet of a batch, @len bytes at @pkt, into its end. */
static void roce_batch_icrc(const u8 *l3, u32 l3_len, bool ipv6, u8 *udp_bth,
			    u8 *pkt, u32 len)
{
	u32 crc;

	memcpy(udp_bth + ROCE_UDP_HDR_LEN, pkt, ROCE_BTH_LEN);
	crc = roce_icrc_begin(l3, l3_len, ipv6, udp_bth,
			      ROCE_UDP_HDR_LEN + ROCE_BTH_LEN);
	crc = roce_icrc_update(crc, pkt + ROCE_BTH_LEN,
			       len - ROCE_BTH_LEN - ROCE_ICRC_LEN);
	roce_icrc_put(pkt + len - ROCE_ICRC_LEN, roce_icrc_final(crc));
}

/*
 * The ICRCs of a batch (roce_batch_xmit()): its first packet is in the
 * linear area, every other one is a fragment of its own.  Each ICRC
 * covers the IP and UDP headers UDP segmentation will give its packet
 * (kernel/proto/roce_icrc.h, roce_icrc_seg_hdrs()), not the batch's: IPv4
 * IDs follow inet_gso_segment(), the batch's ID plus one per segment.
 * UDP gets a real checksum, left to the device or to segmentation
 * (CHECKSUM_PARTIAL): __udp_gso_segment() requires it, and the ICRC does
 * not cover it.
 */
static void roce_batch_finish(struct sk_buff *skb, bool ipv6, bool icrc)
{
	struct skb_shared_info *si = skb_shinfo(skb);
	u32 l3_len = ipv6 ? ROCE_IPV6_HDR_LEN : ROCE_IPV4_HDR_LEN;
	u8 udp_bth[ROCE_UDP_HDR_LEN + ROCE_BTH_LEN];
	u8 l3[ROCE_IPV6_HDR_LEN];
	struct udphdr *uh = udp_hdr(skb);
	u32 ulen = skb->len - skb_transport_offset(skb);
	const u8 *nh = skb_network_header(skb);
	unsigned int i;

	if (!icrc)
		goto csum;	/* looped: roce_loop_xmit() */
	memcpy(l3, nh, l3_len);
	memcpy(udp_bth, uh, ROCE_UDP_HDR_LEN);
	roce_icrc_seg_hdrs(nh, l3, ipv6, udp_bth, 0, si->gso_size);
	roce_batch_icrc(l3, l3_len, ipv6, udp_bth, (u8 *)(uh + 1),
			si->gso_size);
	for (i = 0; i < si->nr_frags; i++) {
		const skb_frag_t *f = &si->frags[i];
		u32 len = skb_frag_size(f);

		roce_icrc_seg_hdrs(nh, l3, ipv6, udp_bth, i + 1, len);
		roce_batch_icrc(l3, l3_len, ipv6, udp_bth, skb_frag_address(f),
				len);
	}
csum:

	if (ipv6)
		uh->check = ~csum_ipv6_magic(&ipv6_hdr(skb)->saddr,
					     &ipv6_hdr(skb)->daddr, ulen,
					     IPPROTO_UDP, 0);
	else
		uh->check = ~csum_tcpudp_magic(ip_hdr(skb)->saddr,
					       ip_hdr(skb)->daddr, ulen,
					       IPPROTO_UDP, 0);
	skb->ip_summed = CHECKSUM_PARTIAL;
	skb->csum_start = skb_transport_header(skb) - skb->head;
	skb->csum_offset = offsetof(struct udphdr, check);
}

/*
 * The route of a QP's path comes from its per-CPU cache, or is looked up
 * and cached.  A transmitter that read the path before it changed may
 * cache the old path's route after roce_path_update() reset the cache:
 * it then sees the new generation and resets it again.  A cached route
 * the FIB has since invalidated is never returned (dst_cache checks).
 */
static void roce_route_cached(struct roce_qp *rqp, u32 gen)
{
	unsigned int seq;
	u32 now;

	if (!rqp)
		return;		/* UD: the path and cache have one writer */
	do {
		seq = read_seqbegin(&rqp->path_lock);
		now = rqp->path.gen;
	} while (read_seqretry(&rqp->path_lock, seq));
	if (now != gen)
		dst_cache_reset(&rqp->dst_cache);
}

static int roce_xmit4(struct net *net, struct softrnic_qp *qp,
		      const struct roce_path *p, struct dst_cache *cache,
		      struct roce_qp *rqp, struct sk_buff *skb)
{
	struct flowi4 fl = {
		.flowi4_oif = p->ifindex,
		.flowi4_proto = IPPROTO_UDP,
		.flowi4_tos = RT_TOS(p->tos),
		.saddr = p->saddr4,
		.daddr = p->daddr4,
	};
	struct net_device *loop_dev = NULL;
	struct rtable *rt;
	struct iphdr *iph;
	__be32 saddr;
	int err;

	rt = dst_cache_get_ip4(cache, &saddr);
	if (!rt) {
		rt = ip_route_output_key(net, &fl);
		if (IS_ERR(rt)) {
			kfree_skb(skb);
			return -EHOSTUNREACH;
		}
		dst_cache_set_ip4(cache, &rt->dst, fl.saddr);
		roce_route_cached(rqp, p->gen);
	}
	skb_dst_set(skb, &rt->dst);

	roce_push_udp(skb, p->sport);
	__skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph = ip_hdr(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = p->tos;
	iph->tot_len = htons(skb->len);
	iph->frag_off = htons(IP_DF);
	iph->ttl = p->ttl;
	iph->protocol = IPPROTO_UDP;
	iph->saddr = p->saddr4;
	iph->daddr = p->daddr4;
	iph->check = 0;
	__ip_select_ident(net, iph, skb_shinfo(skb)->gso_segs ?: 1);
	skb->protocol = htons(ETH_P_IP);
	if (rt->rt_flags & RTCF_LOCAL)
		loop_dev = roce_loop_dev(net, skb);
	if (skb_is_gso(skb))
		roce_batch_finish(skb, false, !loop_dev);
	else if (!loop_dev)
		roce_put_icrc(skb, false);

	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	if (loop_dev) {
		/* ip_local_out() would; UD receivers see it in the GRH. */
		ip_send_check(iph);
		roce_loop_xmit(qp, loop_dev, skb);
		return 0;
	}
	/* Consumed whatever it returns (net_xmit_eval() reads it twice). */
	err = ip_local_out(net, NULL, skb);
	return net_xmit_eval(err) ? -ENOBUFS : 0;
}

static int roce_xmit6(struct net *net, struct softrnic_qp *qp,
		      const struct roce_path *p, struct dst_cache *cache,
		      struct roce_qp *rqp, struct sk_buff *skb)
{
	struct flowi6 fl6 = {
		.flowi6_oif = p->ifindex,
		.flowi6_proto = IPPROTO_UDP,
		.saddr = p->saddr6,
		.daddr = p->daddr6,
	};
	struct net_device *loop_dev = NULL;
	struct in6_addr saddr;
	struct dst_entry *dst;
	struct ipv6hdr *ip6h;
	int err;

	dst = dst_cache_get_ip6(cache, &saddr);
	if (!dst) {
		dst = ipv6_stub->ipv6_dst_lookup_flow(net, NULL, &fl6, NULL);
		if (IS_ERR(dst) || dst->error) {
			if (!IS_ERR(dst))
				dst_release(dst);
			kfree_skb(skb);
			return -EHOSTUNREACH;
		}
		dst_cache_set_ip6(cache, dst, &fl6.saddr);
		roce_route_cached(rqp, p->gen);
	}
	skb_dst_set(skb, dst);

	roce_push_udp(skb, p->sport);
	__skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6h = ipv6_hdr(skb);
	ip6_flow_hdr(ip6h, p->tos, htonl(p->flow_label));
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = p->ttl;
	ip6h->saddr = p->saddr6;
	ip6h->daddr = p->daddr6;
	skb->protocol = htons(ETH_P_IPV6);
	if (dst->dev->flags & IFF_LOOPBACK)
		loop_dev = roce_loop_dev(net, skb);
	if (skb_is_gso(skb))
		roce_batch_finish(skb, true, !loop_dev);
	else if (!loop_dev)
		roce_put_icrc(skb, true);

	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	if (loop_dev) {
		roce_loop_xmit(qp, loop_dev, skb);
		return 0;
	}
	/* Consumed whatever it returns (net_xmit_eval() reads it twice). */
	err = ip6_local_out(net, NULL, skb);
	return net_xmit_eval(err) ? -ENOBUFS : 0;
}

/*
 * Send one packet of @qp (skb from roce_alloc_skb(), payload filled in),
 * or a batch (roce_batch_xmit()), along @path with its routes cached in
 * @cache; @rqp: an RC QP, whose path may change under the transmit.  Any
 * context but hard IRQ; consumes @skb.  A packet that cannot be routed,
 * or that netfilter, a qdisc or the device drops, is lost and counted
 * (an RC requester's timer recovers it).  roce_xmit4/6 consume the skb
 * on every path, so that nothing here touches it after ip_local_out():
 * that may free it and still return an error (a netfilter drop after a
 * failed re-route, NF_DROP_ERR).
 */
int roce_xmit_path(struct softrnic_qp *qp, const struct roce_path *path,
		   struct dst_cache *cache, struct roce_qp *rqp,
		   struct sk_buff *skb)
{
	struct net_device *ndev = qp->sdev->netdev;
	u32 segs = skb_shinfo(skb)->gso_segs ?: 1;
	u32 len = skb->len;
	bool outer, drain;
	int err;

	if (!path->valid) {
		kfree_skb(skb);
		err = -EHOSTUNREACH;
		goto out;
	}
	/* Task context, BH on: nothing of ours is held (see roce_loop.c). */
	outer = !in_interrupt();
	/* BH off: the route cache is per CPU. */
	local_bh_disable();
	drain = roce_loop_drain_begin(outer);
	rcu_read_lock();
	if (READ_ONCE(ndev->reg_state) != NETREG_REGISTERED) {
		kfree_skb(skb);
		err = -ENODEV;
	} else if (path->ipv6) {
		err = roce_xmit6(dev_net(ndev), qp, path, cache, rqp, skb);
	} else {
		err = roce_xmit4(dev_net(ndev), qp, path, cache, rqp, skb);
	}
	rcu_read_unlock();
	if (drain)
		roce_loop_drain();
	local_bh_enable();
out:
	if (err) {
		roce_qp_count(qp, err == -EHOSTUNREACH ? ROCE_CNT_DROP_NO_ROUTE :
			      ROCE_CNT_DROP_OUTPUT, segs);
		return err;
	}
	/* Dropped further down (neighbour, the wire): a loss like any other. */
	roce_qp_count(qp, ROCE_CNT_TX_PKTS, segs);
	roce_qp_count(qp, ROCE_CNT_TX_BYTES, len);
	return 0;
}

/* A packet of RC QP @qp, along its current path. */
int roce_xmit(struct softrnic_qp *qp, struct sk_buff *skb)
{
	struct roce_qp *rqp = roce_qp(qp);
	struct roce_path path;

	roce_read_path(rqp, &path);
	return roce_xmit_path(qp, &path, &rqp->dst_cache, rqp, skb);
}

/* ------------------------------------------------------------------ */
/* Transmit batches */

/*
 * Room in @b for a packet of @len bytes?  @b holds at least one.  Only
 * the last segment may be shorter than the first, so a shorter packet
 * ends the batch.
 */
static bool roce_batch_fits(const struct roce_batch *b, u32 len)
{
	const struct skb_shared_info *si = skb_shinfo(b->skb);

	return len <= b->seg_len && 1 + si->nr_frags < b->max_segs &&
	       b->skb->len + len <= b->max_len &&
	       (!si->nr_frags ||
		skb_frag_size(&si->frags[si->nr_frags - 1]) == b->seg_len);
}

/*
 * After a packet was added to @b: send @b if a packet as long as its
 * first would not fit any more; between batches, receive what this CPU
 * looped (b->loop_drain: roce_loop_drain_begin() returned true for the
 * sender) and let this CPU's softirqs run.  BH off, no spinlock of ours
 * held.
 */
void roce_batch_next(struct softrnic_qp *qp, struct roce_batch *b)
{
	if (b->skb && !roce_batch_fits(b, b->seg_len))
		roce_batch_xmit(qp, b);
	if (!b->skb) {
		if (b->loop_drain)
			roce_loop_drain();
		local_bh_enable();
		local_bh_disable();
		if (b->loop_drain)
			b->loop_drain = roce_loop_drain_begin(true);
	}
}

/*
 * Add a packet of @qp to @b, sending what @b held first if the packet
 * cannot join it.  Returns where its payload goes (the headers, pad and
 * room for the ICRC are in place), or NULL if memory ran out: the packet
 * is then lost, which the requester's timer repairs.  BH off.
 *
 * The first packet is built as a packet sent alone is (roce_alloc_skb()),
 * so a batch of one is just that; every later one is a fragment, as
 * contiguous as the first.
 */
void *roce_batch_add(struct softrnic_qp *qp, struct roce_batch *b,
		     const struct roce_pkt *pkt)
{
	struct net_device *ndev = qp->sdev->netdev;
	size_t len = roce_wire_len(pkt);
	struct sk_buff *skb;
	struct page *page;
	void *payload;
	u8 *data;

	if (!len)
		return NULL;
	if (b->skb && !roce_batch_fits(b, len))
		roce_batch_xmit(qp, b);
	if (!b->skb) {
		skb = roce_alloc_skb(qp, pkt, &payload);
		if (!skb)
			return NULL;
		b->skb = skb;
		b->seg_len = len;
		/* tx-udp-segmentation off: every packet on its own */
		b->max_segs = READ_ONCE(ndev->features) & NETIF_F_GSO_UDP_L4 ?
			      min_t(u32, MAX_SKB_FRAGS + 1,
				    READ_ONCE(ndev->gso_max_segs)) : 1;
		/* IPv4 total length and IPv6 payload length are 16 bits */
		b->max_len = min_t(u32, READ_ONCE(ndev->gso_max_size),
				   0xffff) - ROCE_IPV4_HDR_LEN -
			     ROCE_UDP_HDR_LEN;
		return payload;
	}

	data = netdev_alloc_frag(len);
	if (!data)
		return NULL;
	page = virt_to_head_page(data);
	payload = roce_build_pkt(data, pkt, len);
	skb_add_rx_frag(b->skb, skb_shinfo(b->skb)->nr_frags, page,
			data - (u8 *)page_address(page), len,
			SKB_DATA_ALIGN(len));
	return payload;
}

/* Take back the packet roce_batch_add() added last (its payload failed). */
void roce_batch_trim(struct roce_batch *b)
{
	struct skb_shared_info *si = skb_shinfo(b->skb);
	skb_frag_t *f;
	u32 len;

	if (!si->nr_frags) {
		kfree_skb(b->skb);
		b->skb = NULL;
		return;
	}
	f = &si->frags[si->nr_frags - 1];
	len = skb_frag_size(f);
	b->skb->len -= len;
	b->skb->data_len -= len;
	b->skb->truesize -= SKB_DATA_ALIGN(len);
	__skb_frag_unref(f, false);
	si->nr_frags--;
}

/*
 * Send @b: one packet as is, more as one UDP GSO skb that segmentation
 * (at the device, or at the receiving socket of a veth peer) cuts back
 * into exactly the packets that were added.  BH off.
 */
void roce_batch_xmit(struct softrnic_qp *qp, struct roce_batch *b)
{
	struct sk_buff *skb = b->skb;
	struct skb_shared_info *si;

	if (!skb)
		return;
	b->skb = NULL;
	si = skb_shinfo(skb);
	if (si->nr_frags) {
		si->gso_size = b->seg_len;
		si->gso_type = SKB_GSO_UDP_L4;
		si->gso_segs = 1 + si->nr_frags;
		roce_count(qp->sdev, ROCE_CNT_TX_BATCHES, 1);
	}
	roce_xmit(qp, skb);
}

/* ------------------------------------------------------------------ */
/* Sockets, devices and namespaces */

/*
 * After the filter, security and NAT hooks, so a firewall's INPUT rules
 * apply to RoCE as to any traffic.
 */
static const struct nf_hook_ops roce_nf_ops[] = {
	{
		.hook = roce_nf_in,
		.pf = NFPROTO_IPV4,
		.hooknum = NF_INET_LOCAL_IN,
		.priority = NF_IP_PRI_LAST,
	},
	{
		.hook = roce_nf_in,
		.pf = NFPROTO_IPV6,
		.hooknum = NF_INET_LOCAL_IN,
		.priority = NF_IP6_PRI_LAST,
	},
};

/* Hooks of a namespace whose first device comes; roce_net_mutex held. */
static int roce_ns_hooks(struct net *net, struct roce_ns *rns)
{
	int err;

	lockdep_assert_held(&roce_net_mutex);
	if (rns->hooked)
		return 0;
	err = nf_register_net_hooks(net, roce_nf_ops,
				    ipv6_mod_enabled() ? 2 : 1);
	if (!err)
		rns->hooked = true;
	return err;
}

static void roce_ns_unhook(struct net *net, struct roce_ns *rns)
{
	lockdep_assert_held(&roce_net_mutex);
	if (!rns->hooked)
		return;
	nf_unregister_net_hooks(net, roce_nf_ops,
				ipv6_mod_enabled() ? 2 : 1);
	rns->hooked = false;
}

int roce_dev_init(struct softrnic_dev *sdev)
{
	struct net *net = dev_net(sdev->netdev);
	struct roce_dev *rdev;
	struct roce_ns *rns;
	int err;

	rdev = kzalloc(sizeof(*rdev), GFP_KERNEL);
	if (!rdev)
		return -ENOMEM;
	rdev->sdev = sdev;
	roce_mcast_init(rdev);
	/* A namespace on its way out gets no new device. */
	if (!maybe_get_net(net)) {
		kfree(rdev);
		return -ENODEV;
	}
	mutex_lock(&roce_net_mutex);
	rns = net_generic(net, roce_net_id);
	err = roce_ns_hooks(net, rns);
	if (err) {
		mutex_unlock(&roce_net_mutex);
		put_net(net);
		kfree(rdev);
		return err;
	}
	sdev->wire_priv = rdev;
	rdev->rns = rns;
	rns->ndevs++;
	list_add_tail_rcu(&rdev->ns_node, &rns->devs);
	mutex_unlock(&roce_net_mutex);
	put_net(net);
	return 0;
}

void roce_dev_fini(struct softrnic_dev *sdev)
{
	struct roce_dev *rdev = roce_dev(sdev);
	struct roce_ns *rns;

	mutex_lock(&roce_net_mutex);
	rns = rdev->rns;
	if (rns) {
		list_del_rcu(&rdev->ns_node);
		rdev->rns = NULL;
		if (!--rns->ndevs)
			roce_ns_unhook(rns->net, rns);
	}
	mutex_unlock(&roce_net_mutex);
	/* Receivers that found the device are done with it. */
	synchronize_rcu();
	sdev->wire_priv = NULL;
	roce_mcast_fini(rdev);
	kfree(rdev);
}

static __net_init int roce_ns_init(struct net *net)
{
	struct roce_ns *rns = net_generic(net, roce_net_id);

	INIT_LIST_HEAD(&rns->devs);
	rns->net = net;
	return 0;
}

/*
 * The namespace is being dismantled: its netdevs are already
 * unregistered (device exits run before subsystem exits), so our devices
 * on them are being removed; they only need to forget the namespace.
 */
static __net_exit void roce_ns_exit(struct net *net)
{
	struct roce_ns *rns = net_generic(net, roce_net_id);
	struct roce_dev *rdev, *tmp;

	mutex_lock(&roce_net_mutex);
	list_for_each_entry_safe(rdev, tmp, &rns->devs, ns_node) {
		list_del_rcu(&rdev->ns_node);
		rdev->rns = NULL;
	}
	rns->ndevs = 0;
	roce_ns_unhook(net, rns);
	mutex_unlock(&roce_net_mutex);
}

static struct pernet_operations roce_net_ops = {
	.init = roce_ns_init,
	.exit = roce_ns_exit,
	.id = &roce_net_id,
	.size = sizeof(struct roce_ns),
};

int roce_net_init(void)
{
	int err;

	roce_loop_init();
	err = register_pernet_subsys(&roce_net_ops);
	if (err)
		roce_loop_exit();
	return err;
}

void roce_net_exit(void)
{
	unregister_pernet_subsys(&roce_net_ops);
	roce_loop_exit();
}
