// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrnic-verbs-test: the verbs objects through libibverbs and libsoftrnic
 * against the real softrnic.ko, in the test VM (tests/vm/verbs_objects.sh).
 * Only the public verbs API: what any application sees.
 *
 *   softrnic-verbs-test objects ROCE_DEV IWARP_DEV
 *       create/destroy of every object type and the error paths, flush of
 *       posted WRs through a completion channel (ibv_post_* and the
 *       ibv_wr_* / ibv_cq_ex APIs), an ibv_get_cq_event blocked until a
 *       completion arrives, CQ overflow -> IBV_EVENT_CQ_ERR, local MW
 *       operations.  Exit status: number of failed checks (capped).
 *   softrnic-verbs-test cycles DEV N
 *       N create/destroy cycles of CQ + SRQ + QP + MR; checks that no
 *       mapping or fd is left behind.
 *   softrnic-verbs-test loop DEV N
 *       N iterations of post_recv + poll_cq, for `strace -c`: neither makes
 *       a system call.  The RQ is recycled by a RESET/INIT transition every
 *       time it fills (two commands per max_recv_wr iterations); the
 *       program prints how many it made.
 *
 * RC network WRs go to a peer that does not exist, so they complete only
 * by being flushed; UD sends complete once sent; local ones (BIND_MW,
 * LOCAL_INV) are executed by the kernel.
 */
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <endian.h>
#include <fstream>
#include <infiniband/verbs.h>
#include <poll.h>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "common.h"

namespace
{

using srtest::check;
using srtest::failures;

[[noreturn]] void die(const char *what)
{
	std::fprintf(stdout, "FATAL: %s: %s\n", what, std::strerror(errno));
	std::exit(100);
}

template <typename T> T *must(T *p, const char *what)
{
	if (!p)
		die(what);
	return p;
}

void must0(int ret, const char *what)
{
	if (ret) {
		errno = ret;
		die(what);
	}
}

/* errno of a verb that returns a pointer, and release the object if it
 * unexpectedly succeeded */
template <typename T, typename Destroy> int fails_with(T *p, Destroy destroy)
{
	if (p) {
		destroy(p);
		return 0;
	}
	return errno;
}

struct device {
	ibv_context *ctx = nullptr;
	bool roce = false;
	ibv_device_attr attr{};
	std::string name;

	explicit device(const char *want)
	{
		int n = 0;
		ibv_device **list = must(ibv_get_device_list(&n), "ibv_get_device_list");
		for (int i = 0; i < n; i++)
			if (name.empty() && !std::strcmp(ibv_get_device_name(list[i]), want)) {
				ctx = must(ibv_open_device(list[i]), "ibv_open_device");
				name = want;
			}
		ibv_free_device_list(list);
		if (!ctx) {
			errno = ENODEV;
			die(want);
		}
		must0(ibv_query_device(ctx, &attr), "ibv_query_device");
		ibv_port_attr port{};
		must0(ibv_query_port(ctx, 1, &port), "ibv_query_port");
		roce = port.link_layer == IBV_LINK_LAYER_ETHERNET &&
		       ctx->device->transport_type == IBV_TRANSPORT_IB;
	}
	~device() { ibv_close_device(ctx); }
};

ibv_qp *make_qp(ibv_pd *pd, ibv_cq *scq, ibv_cq *rcq, ibv_qp_type type, uint32_t wr,
		ibv_srq *srq = nullptr, int sig_all = 0)
{
	ibv_qp_init_attr a{};
	a.send_cq = scq;
	a.recv_cq = rcq;
	a.srq = srq;
	a.qp_type = type;
	a.sq_sig_all = sig_all;
	a.cap.max_send_wr = wr;
	a.cap.max_recv_wr = srq ? 0 : wr;
	a.cap.max_send_sge = 2;
	a.cap.max_recv_sge = srq ? 0 : 2;
	a.cap.max_inline_data = 64;
	return ibv_create_qp(pd, &a);
}

int to_init(device &d, ibv_qp *qp)
{
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.pkey_index = 0;
	a.qkey = 0x1234;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	if (qp->qp_type == IBV_QPT_UD)
		return ibv_modify_qp(qp, &a,
				     IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
	if (!d.roce)
		return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS);
	return ibv_modify_qp(qp, &a,
			     IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

int to_rts(device &d, ibv_qp *qp)
{
	int ret = to_init(d, qp);
	if (ret)
		return ret;
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_RTR;
	if (qp->qp_type == IBV_QPT_UD || !d.roce) {
		if ((ret = ibv_modify_qp(qp, &a, IBV_QP_STATE)))
			return ret;
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = 1;
		return ibv_modify_qp(
		    qp, &a, IBV_QP_STATE | (qp->qp_type == IBV_QPT_UD ? IBV_QP_SQ_PSN : 0));
	}
	/* RC on RoCE: a path to ourselves (GID 0 is link-local, no ARP) */
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = qp->qp_num;
	a.rq_psn = 0x10;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	if ((ret = ibv_query_gid(d.ctx, 1, 0, &a.ah_attr.grh.dgid)))
		return ret;
	a.ah_attr.grh.sgid_index = 0;
	a.ah_attr.grh.hop_limit = 64;
	if ((ret = ibv_modify_qp(qp, &a,
				 IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				     IBV_QP_MIN_RNR_TIMER)))
		return ret;
	a = ibv_qp_attr{};
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0x20;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &a,
			     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				 IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

int to_state(ibv_qp *qp, ibv_qp_state s)
{
	ibv_qp_attr a{};
	a.qp_state = s;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/* poll until `want` completions arrived or ~2 s passed */
std::vector<ibv_wc> poll_n(ibv_cq *cq, size_t want)
{
	std::vector<ibv_wc> out;
	for (int tries = 0; tries < 2000 && out.size() < want; tries++) {
		ibv_wc wc[16];
		const int n = ibv_poll_cq(cq, 16, wc);
		if (n < 0)
			break;
		out.insert(out.end(), wc, wc + n);
		if (!n)
			usleep(1000);
	}
	return out;
}

bool stays_empty(ibv_cq *cq)
{
	usleep(50 * 1000);
	ibv_wc wc;
	return ibv_poll_cq(cq, 1, &wc) == 0;
}

bool wait_readable(int fd, int ms)
{
	pollfd p{fd, POLLIN, 0};
	return poll(&p, 1, ms) == 1;
}

/*
 * Read async events (up to 10, 2 s each) and hand each to @seen until it
 * returns true; false if it never did.
 */
template <typename F> bool async_events(device &d, F seen)
{
	for (int i = 0; i < 10; i++) {
		if (!wait_readable(d.ctx->async_fd, 2000))
			return false;
		ibv_async_event ev;
		if (ibv_get_async_event(d.ctx, &ev))
			return false;
		const bool done = seen(ev);
		ibv_ack_async_event(&ev);
		if (done)
			return true;
	}
	return false;
}

/* ------------------------------------------------------------- objects */

void every_object(device &d)
{
	const char *n = d.name.c_str();
	ibv_pd *pd = must(ibv_alloc_pd(d.ctx), "alloc_pd");
	std::vector<char> buf(1 << 16);

	/* CQs, legacy and extended */
	ibv_comp_channel *ch = must(ibv_create_comp_channel(d.ctx), "comp channel");
	ibv_cq *cq = ibv_create_cq(d.ctx, 10, nullptr, ch, 0);
	check(cq && cq->cqe >= 10, "%s: create_cq (cqe %d)", n, cq ? cq->cqe : -1);
	check(cq && ibv_resize_cq(cq, 100) == 0 && cq->cqe >= 100, "%s: resize_cq to %d", n,
	      cq ? cq->cqe : -1);
	ibv_cq_init_attr_ex cx{};
	cx.cqe = 32;
	cx.wc_flags = IBV_WC_STANDARD_FLAGS;
	ibv_cq_ex *cqx = ibv_create_cq_ex(d.ctx, &cx);
	check(cqx != nullptr, "%s: create_cq_ex with the standard wc_flags", n);

	/* MR: reg, rereg (access), dereg */
	ibv_mr *mr =
	    ibv_reg_mr(pd, buf.data(), buf.size(),
		       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND);
	check(mr && mr->lkey && mr->rkey, "%s: reg_mr", n);
	const uint32_t old_lkey = mr ? mr->lkey : 0;
	check(mr && ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0,
				 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				     IBV_ACCESS_MW_BIND) == 0,
	      "%s: rereg_mr (access), lkey %#x -> %#x", n, old_lkey, mr ? mr->lkey : 0);

	/* MWs */
	ibv_mw *mw1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	ibv_mw *mw2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	check(mw1 && mw2 && mw1->rkey != mw2->rkey, "%s: alloc_mw type 1 and 2", n);

	/* SRQ */
	ibv_srq_init_attr sa{};
	sa.attr.max_wr = 10;
	sa.attr.max_sge = 2;
	ibv_srq *srq = ibv_create_srq(pd, &sa);
	check(srq && sa.attr.max_wr >= 10, "%s: create_srq (max_wr %u)", n, sa.attr.max_wr);
	ibv_srq_attr sq{};
	check(srq && ibv_query_srq(srq, &sq) == 0 && sq.max_wr >= 10, "%s: query_srq", n);
	sq.srq_limit = 2;
	check(srq && ibv_modify_srq(srq, &sq, IBV_SRQ_LIMIT) == 0, "%s: modify_srq limit", n);

	/* QPs: RC with its own RQ, RC on the SRQ, UD on RoCE */
	ibv_qp *rc = make_qp(pd, cq, cq, IBV_QPT_RC, 16);
	check(rc != nullptr, "%s: create_qp RC", n);
	ibv_qp *rcs = make_qp(pd, cq, cq, IBV_QPT_RC, 16, srq);
	check(rcs != nullptr, "%s: create_qp RC on an SRQ", n);
	ibv_qp_attr qa{};
	ibv_qp_init_attr qi{};
	check(rc && ibv_query_qp(rc, &qa, IBV_QP_STATE | IBV_QP_CAP, &qi) == 0 &&
		  qa.qp_state == IBV_QPS_RESET && qi.cap.max_send_wr >= 16 &&
		  qi.cap.max_inline_data >= 64,
	      "%s: query_qp (state %d, send_wr %u, inline %u)", n, qa.qp_state, qi.cap.max_send_wr,
	      qi.cap.max_inline_data);
	if (rcs) {
		ibv_recv_wr rwr{}, *bad = nullptr;
		check(ibv_post_recv(rcs, &rwr, &bad) == EINVAL && bad == &rwr,
		      "%s: post_recv on a QP with an SRQ -> EINVAL", n);
	}

	ibv_qp_init_attr_ex xa{};
	xa.qp_type = IBV_QPT_RC;
	xa.send_cq = cq;
	xa.recv_cq = cq;
	xa.cap.max_send_wr = 8;
	xa.cap.max_recv_wr = 8;
	xa.cap.max_send_sge = 1;
	xa.cap.max_recv_sge = 1;
	xa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	xa.pd = pd;
	xa.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE |
			    IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV;
	ibv_qp *rcx = ibv_create_qp_ex(d.ctx, &xa);
	check(rcx && ibv_qp_to_qp_ex(rcx) && ibv_qp_to_qp_ex(rcx)->wr_send &&
		  !ibv_qp_to_qp_ex(rcx)->wr_rdma_read,
	      "%s: create_qp_ex honours send_ops_flags", n);

	ibv_qp *ud = nullptr;
	ibv_ah *ah = nullptr;
	if (d.roce) {
		ud = make_qp(pd, cq, cq, IBV_QPT_UD, 8);
		check(ud != nullptr, "%s: create_qp UD", n);
		ibv_ah_attr aa{};
		aa.is_global = 1;
		aa.port_num = 1;
		ibv_query_gid(d.ctx, 1, 0, &aa.grh.dgid);
		aa.grh.hop_limit = 1;
		ah = ibv_create_ah(pd, &aa);
		check(ah != nullptr, "%s: create_ah", n);
	}

	/* and all of it away again */
	if (ud)
		check(ibv_destroy_qp(ud) == 0, "%s: destroy UD QP", n);
	if (ah)
		check(ibv_destroy_ah(ah) == 0, "%s: destroy_ah", n);
	if (rcx)
		check(ibv_destroy_qp(rcx) == 0, "%s: destroy qp_ex", n);
	if (rcs)
		check(ibv_destroy_qp(rcs) == 0, "%s: destroy QP on SRQ", n);
	if (rc)
		check(ibv_destroy_qp(rc) == 0, "%s: destroy RC QP", n);
	if (srq)
		check(ibv_destroy_srq(srq) == 0, "%s: destroy_srq", n);
	if (mw1)
		check(ibv_dealloc_mw(mw1) == 0, "%s: dealloc_mw 1", n);
	if (mw2)
		check(ibv_dealloc_mw(mw2) == 0, "%s: dealloc_mw 2", n);
	if (mr)
		check(ibv_dereg_mr(mr) == 0, "%s: dereg_mr", n);
	if (cqx)
		check(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)) == 0, "%s: destroy cq_ex", n);
	if (cq)
		check(ibv_destroy_cq(cq) == 0, "%s: destroy_cq", n);
	check(ibv_destroy_comp_channel(ch) == 0, "%s: destroy comp channel", n);
	check(ibv_dealloc_pd(pd) == 0, "%s: dealloc_pd", n);
}

/* -------------------------------------------------------------- errors */

void error_paths(device &d)
{
	const char *n = d.name.c_str();
	ibv_pd *pd = must(ibv_alloc_pd(d.ctx), "alloc_pd");
	ibv_cq *cq = must(ibv_create_cq(d.ctx, 16, nullptr, nullptr, 0), "create_cq");
	auto destroy_qp = [](ibv_qp *q) { ibv_destroy_qp(q); };
	auto destroy_cq = [](ibv_cq *c) { ibv_destroy_cq(c); };
	auto destroy_srq = [](ibv_srq *s) { ibv_destroy_srq(s); };
	int err;

	/* a PD the kernel does not know */
	ibv_pd bad_pd = *pd;
	bad_pd.handle = 0x7fffff;
	err = fails_with(make_qp(&bad_pd, cq, cq, IBV_QPT_RC, 4), destroy_qp);
	check(err == EINVAL || err == ENOENT, "%s: create_qp on a bad PD -> %s", n,
	      std::strerror(err));
	char b[64];
	err = fails_with(ibv_reg_mr(&bad_pd, b, sizeof(b), IBV_ACCESS_LOCAL_WRITE),
			 [](ibv_mr *m) { ibv_dereg_mr(m); });
	check(err == EINVAL || err == ENOENT, "%s: reg_mr on a bad PD -> %s", n,
	      std::strerror(err));

	/* QP types */
	err = fails_with(make_qp(pd, cq, cq, IBV_QPT_UC, 4), destroy_qp);
	check(err == EOPNOTSUPP, "%s: UC QP -> %s", n, std::strerror(err));
	if (!d.roce) {
		err = fails_with(make_qp(pd, cq, cq, IBV_QPT_UD, 4), destroy_qp);
		check(err == EOPNOTSUPP, "%s: UD QP on iWARP -> %s", n, std::strerror(err));
		ibv_ah_attr aa{};
		aa.port_num = 1;
		err = fails_with(ibv_create_ah(pd, &aa), [](ibv_ah *a) { ibv_destroy_ah(a); });
		check(err == EOPNOTSUPP, "%s: AH on iWARP -> %s", n, std::strerror(err));
	}

	/* caps beyond the device limits */
	auto qp_with = [&](ibv_qp_cap cap) {
		ibv_qp_init_attr a{};
		a.send_cq = a.recv_cq = cq;
		a.qp_type = IBV_QPT_RC;
		a.cap = cap;
		return fails_with(ibv_create_qp(pd, &a), destroy_qp);
	};
	const auto max_wr = static_cast<uint32_t>(d.attr.max_qp_wr);
	const auto max_sge = static_cast<uint32_t>(d.attr.max_sge);
	err = qp_with({max_wr + 1, 1, 1, 1, 0});
	check(err == EINVAL, "%s: max_send_wr %u -> %s", n, max_wr + 1, std::strerror(err));
	err = qp_with({1, max_wr + 1, 1, 1, 0});
	check(err == EINVAL, "%s: max_recv_wr %u -> %s", n, max_wr + 1, std::strerror(err));
	err = qp_with({1, 1, max_sge + 1, 1, 0});
	check(err == EINVAL, "%s: max_send_sge %u -> %s", n, max_sge + 1, std::strerror(err));
	err = qp_with({1, 1, 1, max_sge + 1, 0});
	check(err == EINVAL, "%s: max_recv_sge %u -> %s", n, max_sge + 1, std::strerror(err));
	err = qp_with({1, 1, 1, 1, 513});
	check(err == EINVAL, "%s: max_inline_data 513 -> %s", n, std::strerror(err));
	err = fails_with(ibv_create_cq(d.ctx, d.attr.max_cqe + 1, nullptr, nullptr, 0), destroy_cq);
	check(err == EINVAL, "%s: cqe %d -> %s", n, d.attr.max_cqe + 1, std::strerror(err));
	err = fails_with(ibv_create_cq(d.ctx, 0, nullptr, nullptr, 0), destroy_cq);
	check(err == EINVAL, "%s: cqe 0 -> %s", n, std::strerror(err));
	ibv_srq_init_attr sa{};
	sa.attr.max_wr = static_cast<uint32_t>(d.attr.max_srq_wr) + 1;
	sa.attr.max_sge = 1;
	err = fails_with(ibv_create_srq(pd, &sa), destroy_srq);
	check(err == EINVAL, "%s: SRQ max_wr %u -> %s", n, sa.attr.max_wr, std::strerror(err));
	sa.attr.max_wr = 4;
	sa.attr.max_sge = static_cast<uint32_t>(d.attr.max_srq_sge) + 1;
	err = fails_with(ibv_create_srq(pd, &sa), destroy_srq);
	check(err == EINVAL, "%s: SRQ max_sge %u -> %s", n, sa.attr.max_sge, std::strerror(err));

	/* what the provider refuses itself */
	ibv_cq_init_attr_ex cx{};
	cx.cqe = 8;
	cx.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	err = fails_with(ibv_create_cq_ex(d.ctx, &cx),
			 [](ibv_cq_ex *c) { ibv_destroy_cq(ibv_cq_ex_to_cq(c)); });
	check(err == EOPNOTSUPP, "%s: cq_ex with timestamps -> %s", n, std::strerror(err));
	ibv_qp_init_attr_ex xa{};
	xa.qp_type = IBV_QPT_RC;
	xa.send_cq = xa.recv_cq = cq;
	xa.cap = {4, 4, 1, 1, 0};
	xa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	xa.pd = pd;
	xa.send_ops_flags = IBV_QP_EX_WITH_TSO;
	err = fails_with(ibv_create_qp_ex(d.ctx, &xa), destroy_qp);
	check(err == EOPNOTSUPP, "%s: qp_ex with TSO -> %s", n, std::strerror(err));

	/* state machine */
	ibv_qp *qp = must(make_qp(pd, cq, cq, IBV_QPT_RC, 4), "create_qp");
	err = to_state(qp, IBV_QPS_RTS);
	check(err == EINVAL, "%s: RESET -> RTS -> %s", n, std::strerror(err));
	err = to_state(qp, IBV_QPS_RTR);
	check(err == EINVAL, "%s: RESET -> RTR without attributes -> %s", n, std::strerror(err));
	check(to_init(d, qp) == 0, "%s: RESET -> INIT", n);
	if (d.roce) { /* iw_cm takes an iWARP QP from INIT to RTS directly */
		err = to_state(qp, IBV_QPS_RTS);
		check(err == EINVAL, "%s: INIT -> RTS -> %s", n, std::strerror(err));
		err = to_state(qp, IBV_QPS_SQD);
		check(err == EINVAL, "%s: INIT -> SQD -> %s", n, std::strerror(err));
	}
	check(to_state(qp, IBV_QPS_RESET) == 0, "%s: INIT -> RESET", n);
	ibv_send_wr swr{}, *sbad = nullptr;
	swr.opcode = IBV_WR_SEND;
	check(ibv_post_send(qp, &swr, &sbad) == EINVAL && sbad == &swr,
	      "%s: post_send in RESET -> EINVAL", n);
	ibv_recv_wr rwr{}, *rbad = nullptr;
	check(ibv_post_recv(qp, &rwr, &rbad) == EINVAL && rbad == &rwr,
	      "%s: post_recv in RESET -> EINVAL", n);
	check(to_init(d, qp) == 0, "%s: RESET -> INIT again", n);

	/* post_send checks against the caps the QP really has */
	ibv_qp_attr qa{};
	ibv_qp_init_attr qi{};
	check(ibv_query_qp(qp, &qa, IBV_QP_CAP, &qi) == 0 && qi.cap.max_send_sge >= 2,
	      "%s: max_send_sge asked 2, got %u", n, qi.cap.max_send_sge);
	std::vector<ibv_sge> sg(qi.cap.max_send_sge + 1);
	ibv_send_wr wr{}, *bad = nullptr;
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = sg.data();
	wr.num_sge = static_cast<int>(sg.size());
	check(ibv_post_send(qp, &wr, &bad) == EINVAL && bad == &wr,
	      "%s: post_send with %zu SGEs -> EINVAL", n, sg.size());
	std::vector<char> big(4096);
	ibv_sge isg{reinterpret_cast<uintptr_t>(big.data()), 4096, 0};
	wr.sg_list = &isg;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_INLINE;
	check(ibv_post_send(qp, &wr, &bad) == EINVAL, "%s: inline above max_inline -> EINVAL", n);
	ibv_destroy_qp(qp);

	/* a full SQ (in INIT nothing is consumed) */
	qp = must(make_qp(pd, cq, cq, IBV_QPT_RC, 4), "create_qp");
	check(to_init(d, qp) == 0, "%s: to INIT", n);
	ibv_query_qp(qp, &qa, IBV_QP_CAP, &qi);
	std::vector<ibv_send_wr> wrs(qi.cap.max_send_wr + 1);
	for (size_t i = 0; i < wrs.size(); i++) {
		wrs[i].wr_id = i;
		wrs[i].opcode = IBV_WR_SEND;
		wrs[i].next = i + 1 < wrs.size() ? &wrs[i + 1] : nullptr;
	}
	check(ibv_post_send(qp, wrs.data(), &bad) == ENOMEM && bad == &wrs.back(),
	      "%s: post_send beyond max_send_wr (%u) -> ENOMEM at the first that did not fit", n,
	      qi.cap.max_send_wr);
	ibv_destroy_qp(qp);

	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
}

/* ---------------------------------------------------------------- flush */

void flush(device &d, ibv_qp_type type)
{
	std::string tag = d.name + (type == IBV_QPT_UD ? "/UD" : "/RC");
	const char *n = tag.c_str();
	ibv_pd *pd = must(ibv_alloc_pd(d.ctx), "alloc_pd");
	std::vector<char> buf(4096);
	ibv_mr *mr = must(ibv_reg_mr(pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE), "reg_mr");
	ibv_comp_channel *ch = must(ibv_create_comp_channel(d.ctx), "channel");
	ibv_cq *scq = must(ibv_create_cq(d.ctx, 32, nullptr, ch, 0), "scq");
	ibv_cq_init_attr_ex cx{};
	cx.cqe = 32;
	cx.channel = ch;
	cx.wc_flags = IBV_WC_STANDARD_FLAGS;
	ibv_cq_ex *rcqx = must(ibv_create_cq_ex(d.ctx, &cx), "rcq");
	ibv_cq *rcq = ibv_cq_ex_to_cq(rcqx);

	ibv_qp_init_attr_ex xa{};
	xa.qp_type = type;
	xa.send_cq = scq;
	xa.recv_cq = rcq;
	xa.cap = {16, 16, 2, 2, 64};
	xa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	xa.pd = pd;
	xa.send_ops_flags = type == IBV_QPT_UD ? IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM
					       : IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE |
						     IBV_QP_EX_WITH_RDMA_READ |
						     IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	ibv_qp *qp = must(ibv_create_qp_ex(d.ctx, &xa), "create_qp_ex");
	ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
	ibv_ah *ah = nullptr;
	if (type == IBV_QPT_UD) {
		ibv_ah_attr aa{};
		aa.is_global = 1;
		aa.port_num = 1;
		ibv_query_gid(d.ctx, 1, 0, &aa.grh.dgid);
		aa.grh.hop_limit = 1;
		ah = must(ibv_create_ah(pd, &aa), "create_ah");
	}

	/* receives 100.. before RTS (in INIT: not in RESET, IBTA
	 * C10-97.2.1), sends 1.. in RTS: mixed opcodes, some unsignaled,
	 * part through ibv_post_send, part ibv_wr_* */
	check(to_init(d, qp) == 0, "%s: to INIT", n);
	ibv_sge sg{reinterpret_cast<uintptr_t>(buf.data()), 64, mr->lkey};
	for (int i = 0; i < 4; i++) {
		ibv_recv_wr rwr{}, *rbad;
		rwr.wr_id = 100 + i;
		rwr.sg_list = &sg;
		rwr.num_sge = 1;
		check(ibv_post_recv(qp, &rwr, &rbad) == 0, "%s: post_recv %d", n, 100 + i);
	}
	check(to_rts(d, qp) == 0, "%s: to RTS", n);
	std::vector<ibv_wc_opcode> want_op;
	for (int i = 0; i < 3; i++) {
		ibv_send_wr wr{}, *bad;
		wr.wr_id = 1 + i;
		wr.sg_list = &sg;
		wr.num_sge = 1;
		wr.send_flags = i == 1 ? 0 : IBV_SEND_SIGNALED;
		if (type == IBV_QPT_UD) {
			wr.opcode = IBV_WR_SEND;
			wr.wr.ud = {ah, 0x99, 0x1234};
			want_op.push_back(IBV_WC_SEND);
		} else {
			wr.opcode = i == 2 ? IBV_WR_RDMA_WRITE : IBV_WR_SEND;
			wr.wr.rdma = {0x1000, 0x55};
			want_op.push_back(i == 2 ? IBV_WC_RDMA_WRITE : IBV_WC_SEND);
		}
		check(ibv_post_send(qp, &wr, &bad) == 0, "%s: post_send %d", n, 1 + i);
	}
	ibv_wr_start(qpx);
	qpx->wr_id = 4;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	if (type == IBV_QPT_UD) {
		ibv_wr_send_imm(qpx, htobe32(3));
		ibv_wr_set_ud_addr(qpx, ah, 0x99, 0x1234);
		ibv_wr_set_inline_data(qpx, buf.data(), 16);
		want_op.push_back(IBV_WC_SEND);
	} else {
		ibv_wr_rdma_read(qpx, 0x55, 0x2000);
		ibv_wr_set_sge(qpx, mr->lkey, reinterpret_cast<uintptr_t>(buf.data()), 32);
		qpx->wr_id = 5;
		qpx->wr_flags = 0;
		ibv_wr_atomic_fetch_add(qpx, 0x55, 0x3000, 1);
		ibv_wr_set_sge(qpx, mr->lkey, reinterpret_cast<uintptr_t>(buf.data()), 8);
		want_op.push_back(IBV_WC_RDMA_READ);
		want_op.push_back(IBV_WC_FETCH_ADD);
	}
	check(ibv_wr_complete(qpx) == 0, "%s: ibv_wr_complete", n);
	/*
	 * RC WRs to a peer that does not exist stay in flight until the
	 * flush; UD datagrams go out at once (to a QPN nobody has).
	 */
	const bool sends_stall = type != IBV_QPT_UD;
	if (sends_stall) {
		check(stays_empty(scq), "%s: no completion while in flight", n);
	} else {
		auto w = poll_n(scq, 3);
		check(w.size() == 3 && w[0].wr_id == 1 && w[1].wr_id == 3 && w[2].wr_id == 4 &&
			  std::all_of(w.begin(), w.end(),
				      [](const ibv_wc &c) { return c.status == IBV_WC_SUCCESS; }),
		      "%s: the signaled UD sends completed (got %zu)", n, w.size());
	}

	/* both CQs armed on one channel; ERR flushes what is left */
	check(ibv_req_notify_cq(scq, 0) == 0 && ibv_req_notify_cq(rcq, 0) == 0, "%s: req_notify_cq",
	      n);
	check(to_state(qp, IBV_QPS_ERR) == 0, "%s: to ERR", n);
	bool got_s = false, got_r = false;
	for (int i = 0; i < (sends_stall ? 2 : 1); i++) {
		ibv_cq *ev_cq = nullptr;
		void *ev_ctx = nullptr;
		if (!wait_readable(ch->fd, 2000) || ibv_get_cq_event(ch, &ev_cq, &ev_ctx)) {
			check(false, "%s: completion event %d", n, i);
			break;
		}
		got_s |= ev_cq == scq;
		got_r |= ev_cq == rcq;
		ibv_ack_cq_events(ev_cq, 1);
	}
	check(got_r && got_s == sends_stall,
	      "%s: one event per CQ with flushes, through the channel", n);

	std::vector<ibv_wc> swc;
	if (sends_stall) {
		swc = poll_n(scq, want_op.size());
		bool ok = swc.size() == want_op.size();
		for (size_t i = 0; ok && i < swc.size(); i++)
			ok = swc[i].wr_id == i + 1 && swc[i].status == IBV_WC_WR_FLUSH_ERR &&
			     swc[i].opcode == want_op[i] && swc[i].qp_num == qp->qp_num;
		check(ok,
		      "%s: %zu send WRs flushed in order with their wr_ids and opcodes (got %zu)",
		      n, want_op.size(), swc.size());
	}

	/* the receive side through the cq_ex API */
	ibv_poll_cq_attr pa{};
	std::vector<uint64_t> rids;
	bool rok = true;
	if (ibv_start_poll(rcqx, &pa) == 0) {
		do {
			rids.push_back(rcqx->wr_id);
			rok = rok && rcqx->status == IBV_WC_WR_FLUSH_ERR &&
			      ibv_wc_read_opcode(rcqx) == IBV_WC_RECV &&
			      ibv_wc_read_qp_num(rcqx) == qp->qp_num;
		} while (ibv_next_poll(rcqx) == 0);
		ibv_end_poll(rcqx);
	}
	check(rok && rids == std::vector<uint64_t>{100, 101, 102, 103},
	      "%s: 4 receive WRs flushed, read through ibv_cq_ex", n);

	/* WRs posted in ERR complete as flushed too */
	ibv_send_wr wr{}, *bad;
	wr.wr_id = 9;
	wr.opcode = IBV_WR_SEND;
	if (ah)
		wr.wr.ud = {ah, 0x99, 0x1234};
	check(ibv_post_send(qp, &wr, &bad) == 0, "%s: post_send in ERR", n);
	ibv_recv_wr rwr{}, *rbad;
	rwr.wr_id = 200;
	check(ibv_post_recv(qp, &rwr, &rbad) == 0, "%s: post_recv in ERR", n);
	swc = poll_n(scq, 1);
	check(swc.size() == 1 && swc[0].wr_id == 9 && swc[0].status == IBV_WC_WR_FLUSH_ERR,
	      "%s: send posted in ERR flushed", n);
	auto rwc = poll_n(rcq, 1);
	check(rwc.size() == 1 && rwc[0].wr_id == 200 && rwc[0].status == IBV_WC_WR_FLUSH_ERR,
	      "%s: recv posted in ERR flushed", n);

	check(ibv_destroy_qp(qp) == 0, "%s: destroy_qp", n);
	if (ah)
		ibv_destroy_ah(ah);
	check(ibv_destroy_cq(scq) == 0 && ibv_destroy_cq(rcq) == 0, "%s: destroy CQs", n);
	ibv_destroy_comp_channel(ch);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
}

/* ------------------------------------------- a blocked ibv_get_cq_event */

void blocked_event(device &d)
{
	const char *n = d.name.c_str();
	ibv_pd *pd = must(ibv_alloc_pd(d.ctx), "alloc_pd");
	ibv_comp_channel *ch = must(ibv_create_comp_channel(d.ctx), "channel");
	ibv_cq *cq = must(ibv_create_cq(d.ctx, 8, nullptr, ch, 0), "create_cq");
	ibv_qp *qp = must(make_qp(pd, cq, cq, IBV_QPT_RC, 4), "create_qp");
	check(to_init(d, qp) == 0, "%s: to INIT", n);
	ibv_recv_wr rwr{}, *rbad;
	rwr.wr_id = 77;
	check(ibv_post_recv(qp, &rwr, &rbad) == 0, "%s: post_recv", n);

	/* the usual arm-then-poll, then block */
	check(ibv_req_notify_cq(cq, 0) == 0, "%s: arm", n);
	ibv_wc wc;
	check(ibv_poll_cq(cq, 1, &wc) == 0, "%s: nothing yet", n);
	std::atomic<int> state{0};
	ibv_cq *ev_cq = nullptr;
	std::thread waiter([&] {
		void *ev_ctx;
		state = 1;
		const int r = ibv_get_cq_event(ch, &ev_cq, &ev_ctx); /* blocks */
		state = r ? -1 : 2;
	});
	while (state.load() == 0)
		usleep(1000);
	usleep(200 * 1000);
	check(state.load() == 1, "%s: ibv_get_cq_event is blocked", n);
	const auto t0 = std::chrono::steady_clock::now();
	check(to_state(qp, IBV_QPS_ERR) == 0, "%s: flush produces a completion", n);
	waiter.join();
	const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
			    std::chrono::steady_clock::now() - t0)
			    .count();
	check(state.load() == 2 && ev_cq == cq, "%s: woken by the completion after %lld ms", n,
	      static_cast<long long>(ms));
	ibv_ack_cq_events(cq, 1);
	check(ibv_poll_cq(cq, 1, &wc) == 1 && wc.wr_id == 77, "%s: and the CQE is there", n);
	/* not armed any more: a second completion raises no event */
	ibv_recv_wr r2{};
	r2.wr_id = 78;
	ibv_post_recv(qp, &r2, &rbad);
	check(poll_n(cq, 1).size() == 1 && !wait_readable(ch->fd, 100), "%s: one event per arm", n);

	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_destroy_comp_channel(ch);
	ibv_dealloc_pd(pd);
}

/* ----------------------------------------------------------- CQ overflow */

void cq_overflow(device &d)
{
	const char *n = d.name.c_str();
	ibv_pd *pd = must(ibv_alloc_pd(d.ctx), "alloc_pd");
	ibv_cq *cq = must(ibv_create_cq(d.ctx, 4, nullptr, nullptr, 0), "create_cq");
	ibv_cq *rcq = must(ibv_create_cq(d.ctx, 4, nullptr, nullptr, 0), "create_cq");
	ibv_qp *qp = must(make_qp(pd, cq, rcq, IBV_QPT_RC, 16, nullptr, 1), "create_qp");
	check(to_rts(d, qp) == 0, "%s: to RTS", n);
	const int posted = cq->cqe + 3;
	for (int i = 0; i < posted; i++) {
		ibv_send_wr wr{}, *bad;
		wr.wr_id = i;
		wr.opcode = IBV_WR_SEND;
		ibv_post_send(qp, &wr, &bad);
	}
	check(to_state(qp, IBV_QPS_ERR) == 0, "%s: flush %d WRs into a %d-entry CQ", n, posted,
	      cq->cqe);

	const bool got = async_events(d, [cq](const ibv_async_event &ev) {
		return ev.event_type == IBV_EVENT_CQ_ERR && ev.element.cq == cq;
	});
	check(got, "%s: IBV_EVENT_CQ_ERR for the overflowing CQ", n);
	ibv_wc wc[16];
	int total = 0, r;
	while ((r = ibv_poll_cq(cq, 16, wc)) > 0)
		total += r;
	check(total == cq->cqe && r == -1 && errno == EIO,
	      "%s: the %d CQEs that fit, then poll_cq fails with EIO (got %d, %d)", n, cq->cqe,
	      total, r);
	ibv_poll_cq_attr pa{};
	(void)pa;
	check(ibv_destroy_qp(qp) == 0 && ibv_destroy_cq(cq) == 0 && ibv_destroy_cq(rcq) == 0,
	      "%s: destroy after the overflow", n);
	ibv_dealloc_pd(pd);
}

/* ------------------------------------------- SRQ: the last WQE reached */

/*
 * A QP on an SRQ that goes to ERR consumes no more of the SRQ's WQEs and
 * says so with IBV_EVENT_QP_LAST_WQE_REACHED (IBTA 11.6.3.1), which
 * applications wait for before they destroy it; a QP with its own RQ
 * gets no such event.
 */
void srq_last_wqe(device &d)
{
	const char *n = d.name.c_str();
	ibv_pd *pd = must(ibv_alloc_pd(d.ctx), "alloc_pd");
	ibv_cq *cq = must(ibv_create_cq(d.ctx, 16, nullptr, nullptr, 0), "create_cq");
	ibv_srq_init_attr sa{};
	sa.attr.max_wr = 8;
	sa.attr.max_sge = 1;
	ibv_srq *srq = must(ibv_create_srq(pd, &sa), "create_srq");
	ibv_qp *own = must(make_qp(pd, cq, cq, IBV_QPT_RC, 8), "create_qp");
	ibv_qp *on_srq = must(make_qp(pd, cq, cq, IBV_QPT_RC, 8, srq), "create_qp on SRQ");
	check(to_rts(d, own) == 0 && to_rts(d, on_srq) == 0, "%s: both QPs to RTS", n);
	check(to_state(own, IBV_QPS_ERR) == 0 && to_state(on_srq, IBV_QPS_ERR) == 0,
	      "%s: both QPs to ERR, the one with its own RQ first", n);

	int got_srq = 0, got_own = 0;
	async_events(d, [&](const ibv_async_event &ev) {
		if (ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED) {
			got_srq += ev.element.qp == on_srq;
			got_own += ev.element.qp == own;
		}
		return got_srq > 0;
	});
	check(got_srq == 1, "%s: IBV_EVENT_QP_LAST_WQE_REACHED for the QP on the SRQ", n);
	check(got_own == 0, "%s: none for the QP with its own RQ", n);
	check(ibv_destroy_qp(on_srq) == 0 && ibv_destroy_qp(own) == 0 && ibv_destroy_srq(srq) == 0,
	      "%s: destroy after the event", n);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
}

/* ------------------------------------------------- local MW operations */

void memory_windows(device &d)
{
	const char *n = d.name.c_str();
	ibv_pd *pd = must(ibv_alloc_pd(d.ctx), "alloc_pd");
	std::vector<char> buf(8192);
	ibv_mr *mr = must(ibv_reg_mr(pd, buf.data(), buf.size(),
				     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
					 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND),
			  "reg_mr");
	ibv_cq *cq = must(ibv_create_cq(d.ctx, 16, nullptr, nullptr, 0), "create_cq");
	ibv_qp_init_attr_ex xa{};
	xa.qp_type = IBV_QPT_RC;
	xa.send_cq = xa.recv_cq = cq;
	xa.cap = {8, 8, 1, 1, 0};
	xa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	xa.pd = pd;
	xa.send_ops_flags = IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_SEND;
	ibv_qp *qp = must(ibv_create_qp_ex(d.ctx, &xa), "create_qp_ex");
	check(to_rts(d, qp) == 0, "%s: to RTS", n);

	/* type 1: ibv_bind_mw, a BIND_MW WQE the kernel executes */
	ibv_mw *mw1 = must(ibv_alloc_mw(pd, IBV_MW_TYPE_1), "alloc_mw 1");
	const uint32_t rkey0 = mw1->rkey;
	ibv_mw_bind b{};
	b.wr_id = 0xb1;
	b.send_flags = IBV_SEND_SIGNALED;
	b.bind_info = {mr, reinterpret_cast<uintptr_t>(buf.data()), 4096, IBV_ACCESS_REMOTE_READ};
	const int bret = ibv_bind_mw(qp, mw1, &b);
	check(bret == 0 && mw1->rkey == ibv_inc_rkey(rkey0),
	      "%s: ibv_bind_mw type 1, rkey %#x -> %#x", n, rkey0, mw1->rkey);
	auto wc = poll_n(cq, 1);
	check(wc.size() == 1 && wc[0].wr_id == 0xb1 && wc[0].status == IBV_WC_SUCCESS &&
		  wc[0].opcode == IBV_WC_BIND_MW,
	      "%s: bind completes (status %d)", n, wc.empty() ? -1 : wc[0].status);

	/* type 2: bind and invalidate through the ibv_wr_* API */
	ibv_mw *mw2 = must(ibv_alloc_mw(pd, IBV_MW_TYPE_2), "alloc_mw 2");
	const uint32_t rkey2 = ibv_inc_rkey(mw2->rkey);
	ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);
	ibv_mw_bind_info bi{mr, reinterpret_cast<uintptr_t>(buf.data()), 4096,
			    IBV_ACCESS_REMOTE_WRITE};
	ibv_wr_start(x);
	x->wr_id = 0xb2;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(x, mw2, rkey2, &bi);
	x->wr_id = 0x1a;
	ibv_wr_local_inv(x, rkey2);
	check(ibv_wr_complete(x) == 0, "%s: wr_bind_mw + wr_local_inv posted", n);
	wc = poll_n(cq, 2);
	check(wc.size() == 2 && wc[0].wr_id == 0xb2 && wc[0].status == IBV_WC_SUCCESS &&
		  wc[0].opcode == IBV_WC_BIND_MW && wc[1].wr_id == 0x1a &&
		  wc[1].status == IBV_WC_SUCCESS && wc[1].opcode == IBV_WC_LOCAL_INV,
	      "%s: type 2 bind and local invalidate complete", n);

	check(ibv_destroy_qp(qp) == 0, "%s: destroy_qp", n);
	check(ibv_dealloc_mw(mw1) == 0 && ibv_dealloc_mw(mw2) == 0, "%s: dealloc_mw", n);
	check(ibv_dereg_mr(mr) == 0, "%s: dereg_mr after the windows are gone", n);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
}

/* ------------------------------- type 2 MWs and the QP they are bound to */

/* An RC QP in RTS that takes BIND_MW and LOCAL_INV through ibv_wr_*. */
ibv_qp *mw_qp(device &d, ibv_pd *pd, ibv_cq *cq, uint32_t depth)
{
	ibv_qp_init_attr_ex xa{};
	xa.qp_type = IBV_QPT_RC;
	xa.send_cq = xa.recv_cq = cq;
	xa.cap = {depth, 1, 1, 1, 0};
	xa.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	xa.pd = pd;
	xa.send_ops_flags = IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV;
	ibv_qp *qp = must(ibv_create_qp_ex(d.ctx, &xa), "create_qp_ex");
	if (to_rts(d, qp))
		die("mw QP to RTS");
	return qp;
}

/*
 * Bind type 2 windows @mws[0..n) to @qp over @mr, as many WQEs as the SQ
 * holds at a time, the last of each batch signaled.  true if all bound.
 */
bool bind_type2(ibv_qp *qp, ibv_cq *cq, ibv_mr *mr, std::vector<ibv_mw *> &mws, size_t first,
		size_t n, uint32_t depth)
{
	ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);
	ibv_mw_bind_info bi{mr, reinterpret_cast<uintptr_t>(mr->addr), 4096,
			    IBV_ACCESS_REMOTE_WRITE};
	for (size_t start = first; start < first + n;) {
		const size_t end = std::min(first + n, start + depth);
		ibv_wr_start(x);
		for (size_t i = start; i < end; i++) {
			x->wr_id = i;
			x->wr_flags = i + 1 == end ? IBV_SEND_SIGNALED : 0;
			ibv_wr_bind_mw(x, mws[i], ibv_inc_rkey(mws[i]->rkey), &bi);
		}
		if (ibv_wr_complete(x))
			return false;
		auto wc = poll_n(cq, 1);
		if (wc.size() != 1 || wc[0].status != IBV_WC_SUCCESS || wc[0].wr_id != end - 1)
			return false;
		/* the new key is the window's from now on */
		for (; start < end; start++)
			mws[start]->rkey = ibv_inc_rkey(mws[start]->rkey);
	}
	return true;
}

/* One signaled LOCAL_INV of @rkey on @qp: its completion status (-1: none). */
int local_inv(ibv_qp *qp, ibv_cq *cq, uint32_t rkey)
{
	ibv_qp_ex *x = ibv_qp_to_qp_ex(qp);
	ibv_wr_start(x);
	x->wr_id = 0x11;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_local_inv(x, rkey);
	if (ibv_wr_complete(x))
		return -1;
	auto wc = poll_n(cq, 1);
	return wc.size() == 1 && wc[0].wr_id == 0x11 ? wc[0].status : -1;
}

/* Seconds that @cycles create/destroy pairs of a plain RC QP take. */
double qp_cycles(ibv_pd *pd, ibv_cq *cq, int cycles)
{
	const auto t0 = std::chrono::steady_clock::now();
	for (int i = 0; i < cycles; i++)
		must0(ibv_destroy_qp(must(make_qp(pd, cq, cq, IBV_QPT_RC, 4), "create_qp")),
		      "destroy_qp");
	return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/*
 * Destroying a QP frees exactly the type 2 windows bound to it (another
 * QP's stay bound and usable), and what it costs does not grow with the
 * windows other QPs have bound: they are kept per QP, not found by a walk
 * over every window of the device.
 */
void mw_qp_destroy(device &d)
{
	const char *n = d.name.c_str();
	constexpr uint32_t depth = 256;
	constexpr size_t many = 50000;
	constexpr int cycles = 40;
	ibv_pd *pd = must(ibv_alloc_pd(d.ctx), "alloc_pd");
	std::vector<char> buf(8192);
	ibv_mr *mr =
	    must(ibv_reg_mr(pd, buf.data(), buf.size(),
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND),
		 "reg_mr");
	ibv_cq *cq = must(ibv_create_cq(d.ctx, 2 * depth, nullptr, nullptr, 0), "create_cq");
	std::vector<ibv_mw *> mws;
	for (size_t i = 0; i < 4 + many; i++)
		mws.push_back(must(ibv_alloc_mw(pd, IBV_MW_TYPE_2), "alloc_mw 2"));

	/* windows 0, 1 bound to A; 2, 3 to B; A goes */
	ibv_qp *a = mw_qp(d, pd, cq, depth), *b = mw_qp(d, pd, cq, depth);
	check(bind_type2(a, cq, mr, mws, 0, 2, depth) && bind_type2(b, cq, mr, mws, 2, 2, depth),
	      "%s: type 2 windows bound to QPs A and B", n);
	check(ibv_destroy_qp(a) == 0, "%s: destroy QP A", n);
	check(local_inv(b, cq, mws[2]->rkey) == IBV_WC_SUCCESS &&
		  local_inv(b, cq, mws[3]->rkey) == IBV_WC_SUCCESS,
	      "%s: B's windows still bound after A's destroy (LOCAL_INV succeeds)", n);
	check(bind_type2(b, cq, mr, mws, 0, 2, depth),
	      "%s: A's windows free after A's destroy (bind to B succeeds)", n);
	check(local_inv(b, cq, mws[0]->rkey) == IBV_WC_SUCCESS, "%s: and usable by B", n);

	/* the cost of a destroy, before and after C binds many windows */
	const double before = qp_cycles(pd, cq, cycles);
	ibv_qp *c = mw_qp(d, pd, cq, depth);
	check(bind_type2(c, cq, mr, mws, 4, many, depth), "%s: %zu windows bound to QP C", n, many);
	const double after = qp_cycles(pd, cq, cycles);
	check(after < 3 * before + 0.1,
	      "%s: %d QP create/destroy: %.3f s, %.3f s with %zu windows bound elsewhere", n,
	      cycles, before, after, many);
	check(ibv_destroy_qp(c) == 0, "%s: destroy QP C", n);
	check(bind_type2(b, cq, mr, mws, 4, 2, depth), "%s: C's windows free after its destroy", n);

	check(ibv_destroy_qp(b) == 0, "%s: destroy QP B", n);
	for (ibv_mw *mw : mws)
		must0(ibv_dealloc_mw(mw), "dealloc_mw");
	check(ibv_dereg_mr(mr) == 0, "%s: dereg_mr after the windows are gone", n);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
}

int run_objects(const char *roce, const char *iwarp)
{
	for (const char *name : {roce, iwarp}) {
		device d(name);
		every_object(d);
		error_paths(d);
		flush(d, IBV_QPT_RC);
		if (d.roce)
			flush(d, IBV_QPT_UD);
		blocked_event(d);
		cq_overflow(d);
		srq_last_wqe(d);
		memory_windows(d);
		if (d.roce)
			mw_qp_destroy(d);
	}
	std::printf("verbs objects: %d failed\n", failures);
	return std::min(failures, 99);
}

/* ---------------------------------------------------------------- cycles */

size_t count_lines(const char *path)
{
	std::ifstream f(path);
	return static_cast<size_t>(
	    std::count(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>(), '\n'));
}

size_t count_fds()
{
	size_t n = 0;
	if (DIR *d = opendir("/proc/self/fd")) {
		while (readdir(d))
			n++;
		closedir(d);
	}
	return n;
}

int run_cycles(const char *name, long cycles)
{
	device d(name);
	ibv_pd *pd = must(ibv_alloc_pd(d.ctx), "alloc_pd");
	std::vector<char> buf(4096);
	const size_t maps0 = count_lines("/proc/self/maps"), fds0 = count_fds();
	const auto t0 = std::chrono::steady_clock::now();
	long done = 0;
	for (; done < cycles; done++) {
		ibv_cq *cq = ibv_create_cq(d.ctx, 64, nullptr, nullptr, 0);
		ibv_srq_init_attr sa{};
		sa.attr.max_wr = 16;
		sa.attr.max_sge = 1;
		ibv_srq *srq = ibv_create_srq(pd, &sa);
		ibv_qp *qp = cq ? make_qp(pd, cq, cq, IBV_QPT_RC, 64) : nullptr;
		ibv_qp *qps = cq && srq ? make_qp(pd, cq, cq, IBV_QPT_RC, 8, srq) : nullptr;
		ibv_mr *mr = ibv_reg_mr(pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE);
		const bool made = cq && srq && qp && qps && mr;
		const bool gone = (!qps || !ibv_destroy_qp(qps)) & (!qp || !ibv_destroy_qp(qp)) &
				  (!srq || !ibv_destroy_srq(srq)) & (!mr || !ibv_dereg_mr(mr)) &
				  (!cq || !ibv_destroy_cq(cq));
		if (!made || !gone) {
			check(false, "%s: cycle %ld: %s (%s)", name, done,
			      made ? "destroy failed" : "create failed", std::strerror(errno));
			break;
		}
	}
	const double s =
	    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	check(done == cycles, "%s: %ld create/destroy cycles of CQ+SRQ+2 QPs+MR in %.1f s", name,
	      done, s);
	const size_t maps1 = count_lines("/proc/self/maps"), fds1 = count_fds();
	check(maps1 == maps0 && fds1 == fds0,
	      "%s: no mapping or fd left (maps %zu -> %zu, fds %zu -> %zu)", name, maps0, maps1,
	      fds0, fds1);
	ibv_dealloc_pd(pd);
	return std::min(failures, 99);
}

/* ------------------------------------------------------------------ loop */

int run_loop(const char *name, long iterations)
{
	device d(name);
	ibv_pd *pd = must(ibv_alloc_pd(d.ctx), "alloc_pd");
	ibv_cq *cq = must(ibv_create_cq(d.ctx, 64, nullptr, nullptr, 0), "create_cq");
	ibv_qp_init_attr a{};
	a.send_cq = a.recv_cq = cq;
	a.qp_type = IBV_QPT_RC;
	a.cap = {1, static_cast<uint32_t>(d.attr.max_qp_wr), 1, 1, 0};
	ibv_qp *qp = must(ibv_create_qp(pd, &a), "create_qp");
	const uint32_t depth = a.cap.max_recv_wr;
	must0(to_init(d, qp), "to INIT");
	std::vector<char> buf(64);
	ibv_mr *mr = must(ibv_reg_mr(pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE), "reg_mr");
	ibv_sge sg{reinterpret_cast<uintptr_t>(buf.data()), 64, mr->lkey};

	std::printf("loop: start\n");
	std::fflush(stdout);
	long recycles = 0, polled = 0;
	uint32_t in_ring = 0;
	const auto t0 = std::chrono::steady_clock::now();
	for (long i = 0; i < iterations; i++) {
		if (in_ring == depth) { /* RESET discards the posted WRs */
			must0(to_state(qp, IBV_QPS_RESET), "to RESET");
			must0(to_init(d, qp), "to INIT");
			in_ring = 0;
			recycles++;
		}
		ibv_recv_wr wr{}, *bad;
		wr.wr_id = static_cast<uint64_t>(i);
		wr.sg_list = &sg;
		wr.num_sge = 1;
		if (ibv_post_recv(qp, &wr, &bad)) {
			check(false, "loop: post_recv %ld failed", i);
			break;
		}
		in_ring++;
		ibv_wc wc;
		polled += ibv_poll_cq(cq, 1, &wc);
	}
	const double s =
	    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	std::printf("loop: %ld post_recv + poll_cq in %.3f s (%.0f ns each), RQ depth %u, "
		    "%ld RESET/INIT recycles = %ld modify_qp commands, %ld completions\n",
		    iterations, s, s * 1e9 / static_cast<double>(iterations), depth, recycles,
		    2 * recycles, polled);
	std::fflush(stdout);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	return std::min(failures, 99);
}

} // namespace

int main(int argc, char **argv)
{
	setvbuf(stdout, nullptr, _IOLBF, 0);
	srtest::log_prefix = "verbs_objects";
	/* A hung verb must not hang the VM suite; a slower kernel gets more. */
	const char *scale = std::getenv("SOFTRNIC_VM_TIMEOUT_SCALE");
	const long s = scale ? std::atol(scale) : 1;
	alarm(600 * (unsigned)std::clamp(s, 1L, 20L));
	const std::string mode = argc > 1 ? argv[1] : "";
	if (mode == "objects" && argc == 4)
		return run_objects(argv[2], argv[3]);
	if (mode == "cycles" && argc == 4)
		return run_cycles(argv[2], std::atol(argv[3]));
	if (mode == "loop" && argc == 4)
		return run_loop(argv[2], std::atol(argv[3]));
	std::fprintf(stderr, "usage: %s objects ROCE_DEV IWARP_DEV | cycles DEV N | loop DEV N\n",
		     argv[0]);
	return 2;
}
