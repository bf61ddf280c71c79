// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The user side of softrnic's shared rings, driven through the raw uverbs
 * write() ABI on /dev/infiniband/uverbsN, without libibverbs or the
 * provider: a test of the kernel's half of Documentation/ring-abi.md,
 * including what a broken or hostile process can do to it.
 *
 *   ring_test DEV basic         RC (iWARP device) or UD (RoCE device) QP:
 *                               doorbells, flush and comp channel (iWARP
 *                               only: needs sends that stall), resize,
 *                               corrupt WQEs/counters, CQ overflow, mmap
 *   ring_test DEV disassociate  `rdma link delete DEV` while holding
 *                               objects and mappings
 *   ring_test DEV abandon       exit without destroying anything
 *   ring_test DEV scribble-rc [ROUNDS]  the same with RC QPs on a RoCE
 *                               device, each connected to itself over GID
 *                               0, so scribbled WQEs reach the RC transport
 *   ring_test DEV hostile       prod moved back (iWARP RC), and a thread
 *                               flipping prod, kflags and a CQ's uflags
 *                               while doorbells ring: bounded, QP_FATAL
 *
 * Prints "FAIL ..." per failed check and "ring_test: N checks, M failed";
 * exits non-zero on failure.  Only libibverbs' headers are used (for the
 * IBV_* constants, which equal the kernel's).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "softrnic-abi.h"
#include "ring.h"
#include "check.h"

struct ctx {
	int fd;
	int async_fd;
	uint32_t pd;
	uint32_t link_type;
	int rc;				/* RC QPs on a RoCE device too */
	const char *dev;
};

struct uring {
	void *base;
	struct softrnic_ring_ctrl *ctrl;
	struct softrnic_ring_info info;
	uint32_t mine;			/* our counter (prod or cons) */
};

struct ucq {
	uint32_t handle;
	struct uring r;
};

struct uqp {
	uint8_t type;			/* IBV_QPT_* */
	uint32_t handle;
	uint32_t qpn;
	uint32_t max_inline;
	struct uring sq, rq;
};

/* ------------------------------------------------------------------ */
/* uverbs write() commands */

static int uverbs_cmd(struct ctx *c, uint32_t command, void *req, size_t len,
		      size_t out_len)
{
	char buf[1024];
	struct ib_uverbs_cmd_hdr *h = (void *)buf;
	ssize_t n;

	h->command = command;
	h->in_words = (sizeof(*h) + len) / 4;
	h->out_words = out_len / 4;
	memcpy(buf + sizeof(*h), req, len);
	n = write(c->fd, buf, sizeof(*h) + len);
	if (n == (ssize_t)(sizeof(*h) + len))
		return 0;
	if (getenv("RING_TEST_DEBUG"))
		printf("uverbs command %u: %s\n", command, strerror(errno));
	return -errno;
}

static int open_dev(struct ctx *c, const char *name)
{
	char path[256], ibdev[64];
	int i;

	memset(c, 0, sizeof(*c));
	c->dev = name;
	c->fd = -1;
	for (i = 0; i < 64 && c->fd < 0; i++) {
		FILE *f;

		snprintf(path, sizeof(path),
			 "/sys/class/infiniband_verbs/uverbs%d/ibdev", i);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%63s", ibdev) == 1 && !strcmp(ibdev, name)) {
			snprintf(path, sizeof(path), "/dev/infiniband/uverbs%d",
				 i);
			c->fd = open(path, O_RDWR | O_CLOEXEC);
		}
		fclose(f);
	}
	if (c->fd < 0)
		return -ENODEV;

	struct {
		struct ib_uverbs_get_context_resp core;
		struct softrnic_alloc_ucontext_resp drv;
	} resp;
	struct ib_uverbs_get_context gc = { .response = (uintptr_t)&resp };
	int err = uverbs_cmd(c, IB_USER_VERBS_CMD_GET_CONTEXT, &gc, sizeof(gc),
			     sizeof(resp));
	if (err)
		return err;
	c->async_fd = resp.core.async_fd;
	c->link_type = resp.drv.link_type;
	fcntl(c->async_fd, F_SETFL, O_NONBLOCK);

	struct {
		struct ib_uverbs_alloc_pd_resp core;
		struct softrnic_alloc_pd_resp drv;
	} __attribute__((packed)) presp;
	struct ib_uverbs_alloc_pd pd = { .response = (uintptr_t)&presp };

	err = uverbs_cmd(c, IB_USER_VERBS_CMD_ALLOC_PD, &pd, sizeof(pd),
			 sizeof(presp));
	c->pd = presp.core.pd_handle;
	return err;
}

static int map_ring(struct ctx *c, struct uring *r,
		    const struct softrnic_ring_info *info)
{
	r->info = *info;
	r->mine = 0;
	if (!info->num_slots)
		return 0;
	r->base = mmap(NULL, info->mmap_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED, c->fd, info->mmap_offset);
	if (r->base == MAP_FAILED)
		return -errno;
	r->ctrl = r->base;
	return 0;
}

static void *slot(struct uring *r, uint32_t counter)
{
	return (char *)r->base + sr_slot_offset(counter, r->info.num_slots,
						r->info.slot_size);
}

static int comp_channel(struct ctx *c)
{
	struct ib_uverbs_create_comp_channel_resp resp;
	struct ib_uverbs_create_comp_channel cmd = {
		.response = (uintptr_t)&resp
	};

	if (uverbs_cmd(c, IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL, &cmd,
		       sizeof(cmd), sizeof(resp)))
		return -1;
	return resp.fd;
}

static int create_cq(struct ctx *c, struct ucq *cq, uint32_t cqe, int chan)
{
	struct {
		struct ib_uverbs_create_cq_resp core;
		struct softrnic_create_cq_resp drv;
	} resp;
	struct ib_uverbs_create_cq cmd = {
		.response = (uintptr_t)&resp,
		.user_handle = 0xc0,
		.cqe = cqe,
		.comp_channel = chan,
	};
	int err;

	err = uverbs_cmd(c, IB_USER_VERBS_CMD_CREATE_CQ, &cmd, sizeof(cmd),
			 sizeof(resp));
	if (err)
		return err;
	cq->handle = resp.core.cq_handle;
	CHECK(resp.core.cqe == resp.drv.cq.num_slots, "cqe %u slots %u",
	      resp.core.cqe, resp.drv.cq.num_slots);
	CHECK(resp.drv.cq.slot_size == sizeof(struct softrnic_cqe), "slot %u",
	      resp.drv.cq.slot_size);
	return map_ring(c, &cq->r, &resp.drv.cq);
}

static int destroy_cq(struct ctx *c, struct ucq *cq)
{
	struct ib_uverbs_destroy_cq_resp resp;
	struct ib_uverbs_destroy_cq cmd = {
		.response = (uintptr_t)&resp,
		.cq_handle = cq->handle,
	};

	munmap(cq->r.base, cq->r.info.mmap_size);
	return uverbs_cmd(c, IB_USER_VERBS_CMD_DESTROY_CQ, &cmd, sizeof(cmd),
			  sizeof(resp));
}

static int create_qp(struct ctx *c, struct uqp *qp, struct ucq *scq,
		     struct ucq *rcq, uint8_t type, uint32_t swr, uint32_t rwr)
{
	struct {
		struct ib_uverbs_create_qp_resp core;
		struct softrnic_create_qp_resp drv;
	} resp;
	struct ib_uverbs_create_qp cmd = {
		.response = (uintptr_t)&resp,
		.user_handle = 0x99,
		.pd_handle = c->pd,
		.send_cq_handle = scq->handle,
		.recv_cq_handle = rcq->handle,
		.max_send_wr = swr,
		.max_recv_wr = rwr,
		.max_send_sge = 2,
		.max_recv_sge = 2,
		.max_inline_data = 64,
		.qp_type = type,
	};
	int err;

	err = uverbs_cmd(c, IB_USER_VERBS_CMD_CREATE_QP, &cmd, sizeof(cmd),
			 sizeof(resp));
	if (err)
		return err;
	qp->type = type;
	qp->handle = resp.core.qp_handle;
	qp->qpn = resp.drv.qpn;
	qp->max_inline = resp.drv.max_inline;
	CHECK(resp.core.qpn == resp.drv.qpn, "qpn %u/%u", resp.core.qpn,
	      resp.drv.qpn);
	CHECK(resp.core.max_send_wr == resp.drv.sq.num_slots &&
	      resp.core.max_recv_wr == resp.drv.rq.num_slots, "caps");
	CHECK(resp.core.max_inline_data == resp.drv.max_inline &&
	      resp.drv.max_inline >= 64, "inline %u", resp.drv.max_inline);
	err = map_ring(c, &qp->sq, &resp.drv.sq);
	if (!err)
		err = map_ring(c, &qp->rq, &resp.drv.rq);
	return err;
}

static int destroy_qp(struct ctx *c, struct uqp *qp)
{
	struct ib_uverbs_destroy_qp_resp resp;
	struct ib_uverbs_destroy_qp cmd = {
		.response = (uintptr_t)&resp,
		.qp_handle = qp->handle,
	};

	munmap(qp->sq.base, qp->sq.info.mmap_size);
	if (qp->rq.base)
		munmap(qp->rq.base, qp->rq.info.mmap_size);
	return uverbs_cmd(c, IB_USER_VERBS_CMD_DESTROY_QP, &cmd, sizeof(cmd),
			  sizeof(resp));
}

static int modify_qp(struct ctx *c, struct uqp *qp, enum ibv_qp_state state,
		     uint32_t mask)
{
	struct ib_uverbs_modify_qp cmd = {
		.qp_handle = qp->handle,
		.attr_mask = mask | IBV_QP_STATE,
		.qp_state = state,
		.qkey = 0x11111111,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};

	return uverbs_cmd(c, IB_USER_VERBS_CMD_MODIFY_QP, &cmd, sizeof(cmd), 0);
}

/* GID 0 of port 1 of the device, from sysfs. */
static int read_gid0(struct ctx *c, uint8_t gid[16])
{
	char path[256], buf[64];
	unsigned int w[8];
	FILE *f;
	int i, ok;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/gids/0",
		 c->dev);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	ok = fgets(buf, sizeof(buf), f) &&
	     sscanf(buf, "%x:%x:%x:%x:%x:%x:%x:%x", &w[0], &w[1], &w[2], &w[3],
		    &w[4], &w[5], &w[6], &w[7]) == 8;
	fclose(f);
	if (!ok)
		return -EINVAL;
	for (i = 0; i < 8; i++) {
		gid[2 * i] = (uint8_t)(w[i] >> 8);
		gid[2 * i + 1] = (uint8_t)w[i];
	}
	return 0;
}

/*
 * An RC QP of a RoCE device connected to itself over GID 0: what it
 * sends comes back to its own RQ through the device's loopback, so its
 * WQEs go through the whole RC transport.  Short timeouts and retries,
 * so that a scribbled QP fails fast.
 */
static int to_rts_rc_self(struct ctx *c, struct uqp *qp)
{
	struct ib_uverbs_modify_qp cmd = {
		.qp_handle = qp->handle,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	int err;

	cmd.attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			IBV_QP_ACCESS_FLAGS;
	cmd.qp_state = IBV_QPS_INIT;
	err = uverbs_cmd(c, IB_USER_VERBS_CMD_MODIFY_QP, &cmd, sizeof(cmd), 0);
	if (err)
		return err;
	err = read_gid0(c, cmd.dest.dgid);
	if (err)
		return err;
	cmd.dest.is_global = 1;
	cmd.dest.hop_limit = 64;
	cmd.dest.port_num = 1;
	cmd.attr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	cmd.qp_state = IBV_QPS_RTR;
	cmd.path_mtu = IBV_MTU_1024;
	cmd.dest_qp_num = qp->qpn;
	cmd.max_dest_rd_atomic = 1;
	cmd.min_rnr_timer = 1;
	err = uverbs_cmd(c, IB_USER_VERBS_CMD_MODIFY_QP, &cmd, sizeof(cmd), 0);
	if (err)
		return err;
	cmd.attr_mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
	cmd.qp_state = IBV_QPS_RTS;
	cmd.timeout = 8;
	cmd.retry_cnt = 1;
	cmd.rnr_retry = 1;
	cmd.max_rd_atomic = 1;
	return uverbs_cmd(c, IB_USER_VERBS_CMD_MODIFY_QP, &cmd, sizeof(cmd), 0);
}

static int to_rts(struct ctx *c, struct uqp *qp)
{
	int roce = c->link_type == SOFTRNIC_LINK_ROCE;
	int err;

	if (roce && qp->type == IBV_QPT_RC)
		return to_rts_rc_self(c, qp);

	err = modify_qp(c, qp, IBV_QPS_INIT, roce ?
			IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY :
			IBV_QP_ACCESS_FLAGS);
	if (!err)
		err = modify_qp(c, qp, IBV_QPS_RTR, 0);
	if (!err)
		err = modify_qp(c, qp, IBV_QPS_RTS, roce ? IBV_QP_SQ_PSN : 0);
	return err;
}

/* The QP's state (enum ibv_qp_state), or -errno. */
static int query_qp_state(struct ctx *c, struct uqp *qp)
{
	struct ib_uverbs_query_qp_resp resp;
	struct ib_uverbs_query_qp cmd = {
		.response = (uintptr_t)&resp,
		.qp_handle = qp->handle,
		.attr_mask = IBV_QP_STATE,
	};
	int err;

	err = uverbs_cmd(c, IB_USER_VERBS_CMD_QUERY_QP, &cmd, sizeof(cmd),
			 sizeof(resp));
	return err ? err : resp.qp_state;
}

/* The doorbells: empty post_send / post_recv. */
static int sq_doorbell(struct ctx *c, struct uqp *qp)
{
	struct ib_uverbs_post_send_resp resp;
	struct ib_uverbs_post_send cmd = {
		.response = (uintptr_t)&resp,
		.qp_handle = qp->handle,
		.wqe_size = sizeof(struct ib_uverbs_send_wr),
	};

	return uverbs_cmd(c, IB_USER_VERBS_CMD_POST_SEND, &cmd, sizeof(cmd),
			  sizeof(resp));
}

static int rq_doorbell(struct ctx *c, struct uqp *qp)
{
	struct ib_uverbs_post_recv_resp resp;
	struct ib_uverbs_post_recv cmd = {
		.response = (uintptr_t)&resp,
		.qp_handle = qp->handle,
		.wqe_size = sizeof(struct ib_uverbs_recv_wr),
	};

	return uverbs_cmd(c, IB_USER_VERBS_CMD_POST_RECV, &cmd, sizeof(cmd),
			  sizeof(resp));
}

/* ------------------------------------------------------------------ */
/* The provider's half of the ring protocol */

static uint32_t kflags(struct uring *r)
{
	return __atomic_load_n(&r->ctrl->kflags, __ATOMIC_ACQUIRE);
}

/* Write one send WQE and publish it; ring the doorbell if needed. */
static int post_send_sge(struct ctx *c, struct uqp *qp, uint64_t wr_id,
			 uint8_t opcode, uint8_t flags, uint16_t num_sge,
			 int *rang)
{
	struct uring *r = &qp->sq;
	uint32_t cons = __atomic_load_n(&r->ctrl->cons, __ATOMIC_ACQUIRE);
	struct softrnic_sqe *w;

	if (!sr_ring_free(r->mine, cons, r->info.num_slots))
		return -ENOMEM;
	w = slot(r, r->mine);
	memset(w, 0, r->info.slot_size);
	w->wr_id = wr_id;
	w->opcode = opcode;
	w->flags = flags;
	w->num_sge = num_sge;
	if (num_sge == 1)
		((struct softrnic_sge *)(w + 1))->length = 8;
	r->mine++;
	__atomic_store_n(&r->ctrl->prod, r->mine, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (kflags(r) & SOFTRNIC_KFLAG_KERNEL_ACTIVE) {
		if (rang)
			*rang = 0;
		return 0;
	}
	if (rang)
		*rang = 1;
	return sq_doorbell(c, qp);
}

static int post_send(struct ctx *c, struct uqp *qp, uint64_t wr_id,
		     uint8_t opcode, uint8_t flags, int *rang)
{
	return post_send_sge(c, qp, wr_id, opcode, flags, 1, rang);
}

static int post_recv(struct ctx *c, struct uqp *qp, uint64_t wr_id)
{
	struct uring *r = &qp->rq;
	struct softrnic_rqe *w = slot(r, r->mine);

	memset(w, 0, r->info.slot_size);
	w->wr_id = wr_id;
	r->mine++;
	__atomic_store_n(&r->ctrl->prod, r->mine, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* Only a QP in ERR needs to hear about receives. */
	if (kflags(r) & SOFTRNIC_KFLAG_ERROR)
		return rq_doorbell(c, qp);
	return 0;
}

/* Poll up to @max CQEs, waiting up to @ms for at least @want. */
static int poll_cq(struct ucq *cq, struct softrnic_cqe *out, int want,
		   int max, int ms)
{
	struct uring *r = &cq->r;
	int n = 0;

	for (;;) {
		uint32_t prod = __atomic_load_n(&r->ctrl->prod,
						__ATOMIC_ACQUIRE);

		while (r->mine != prod && n < max) {
			memcpy(&out[n++], slot(r, r->mine), sizeof(*out));
			r->mine++;
		}
		__atomic_store_n(&r->ctrl->cons, r->mine, __ATOMIC_RELEASE);
		if (n >= want || ms <= 0)
			return n;
		usleep(10000);
		ms -= 10;
	}
}

static int async_event(struct ctx *c, struct ib_uverbs_async_event_desc *ev,
		       int ms)
{
	struct pollfd p = { .fd = c->async_fd, .events = POLLIN };

	if (poll(&p, 1, ms) != 1)
		return -ETIMEDOUT;
	return read(c->async_fd, ev, sizeof(*ev)) == sizeof(*ev) ? 0 : -errno;
}

/* ------------------------------------------------------------------ */

static void test_flush_and_channel(struct ctx *c, uint8_t qpt)
{
	struct softrnic_cqe cqe[64];
	struct ib_uverbs_comp_event_desc ev;
	struct ucq scq, rcq;
	struct uqp qp;
	struct pollfd p;
	int chan, n, i, rang;

	chan = comp_channel(c);
	CHECK(chan >= 0, "comp channel");
	CHECK(!create_cq(c, &scq, 10, chan), "send CQ");
	CHECK(scq.r.info.num_slots == 16, "slots %u", scq.r.info.num_slots);
	CHECK(!create_cq(c, &rcq, 16, -1), "recv CQ");
	CHECK(!create_qp(c, &qp, &scq, &rcq, qpt, 8, 8), "QP");

	/* Receives before RTS sit in the ring; the kernel is not told. */
	for (i = 0; i < 3; i++)
		CHECK(!post_recv(c, &qp, 100 + i), "recv");
	CHECK(!to_rts(c, &qp), "RTS");

	/* No peer: sends stay posted, the kernel keeps KERNEL_ACTIVE. */
	CHECK(!post_send(c, &qp, 1, SOFTRNIC_WR_SEND,
			 SOFTRNIC_WQE_F_SIGNALED, &rang), "send 1");
	CHECK(rang == 1, "first post rings the doorbell");
	usleep(50000);
	CHECK(kflags(&qp.sq) & SOFTRNIC_KFLAG_KERNEL_ACTIVE,
	      "kernel active while stalled");
	CHECK(!post_send(c, &qp, 2, SOFTRNIC_WR_SEND, 0, &rang), "send 2");
	CHECK(rang == 0, "no doorbell while the kernel is active");
	CHECK(!post_send(c, &qp, 3, SOFTRNIC_WR_SEND_WITH_IMM,
			 SOFTRNIC_WQE_F_SIGNALED, NULL), "send 3");
	CHECK(poll_cq(&scq, cqe, 1, 64, 50) == 0, "nothing completes");

	/* Arm, go to ERR: flushes, one completion event. */
	__atomic_store_n(&scq.r.ctrl->uflags, SOFTRNIC_CQ_ARM_NEXT,
			 __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	CHECK(!modify_qp(c, &qp, IBV_QPS_ERR, 0), "ERR");
	n = poll_cq(&scq, cqe, 3, 64, 500);
	CHECK(n == 3, "send flushes %d", n);
	for (i = 0; i < n; i++)
		CHECK(cqe[i].wr_id == (uint64_t)i + 1 &&
		      cqe[i].status == IBV_WC_WR_FLUSH_ERR &&
		      cqe[i].opcode == SOFTRNIC_WC_SEND &&
		      cqe[i].qp_num == qp.qpn, "flush %d: %llu %u %u", i,
		      (unsigned long long)cqe[i].wr_id, cqe[i].status,
		      cqe[i].opcode);
	CHECK(__atomic_load_n(&qp.sq.ctrl->cons, __ATOMIC_ACQUIRE) == 3,
	      "SQ cons");
	CHECK(kflags(&qp.sq) & SOFTRNIC_KFLAG_ERROR, "SQ ERROR flag");
	CHECK(!(kflags(&qp.sq) & SOFTRNIC_KFLAG_KERNEL_ACTIVE),
	      "not active in ERR");
	CHECK(kflags(&qp.rq) & SOFTRNIC_KFLAG_ERROR, "RQ ERROR flag");
	CHECK(scq.r.ctrl->uflags == 0, "arm taken");
	p = (struct pollfd){ .fd = chan, .events = POLLIN };
	CHECK(poll(&p, 1, 500) == 1 &&
	      read(chan, &ev, sizeof(ev)) == sizeof(ev) && ev.cq_handle == 0xc0,
	      "completion event");
	CHECK(poll(&p, 1, 50) == 0, "one event per arm");
	n = poll_cq(&rcq, cqe, 3, 64, 500);
	CHECK(n == 3 && cqe[0].wr_id == 100 && cqe[2].wr_id == 102 &&
	      cqe[1].opcode == SOFTRNIC_WC_RECV &&
	      cqe[1].status == IBV_WC_WR_FLUSH_ERR, "recv flushes %d", n);

	/* In ERR: the SQ doorbell and the RQ ERROR protocol flush. */
	CHECK(!post_send(c, &qp, 4, SOFTRNIC_WR_RDMA_WRITE, 0, &rang) &&
	      rang, "send in ERR");
	CHECK(!post_recv(c, &qp, 200), "recv in ERR");
	n = poll_cq(&scq, cqe, 1, 64, 500);
	/* A flush reports the class of the opcode as posted. */
	CHECK(n == 1 && cqe[0].wr_id == 4 &&
	      cqe[0].opcode == SOFTRNIC_WC_RDMA_WRITE,
	      "ERR send flush %d", n);
	n = poll_cq(&rcq, cqe, 1, 64, 500);
	CHECK(n == 1 && cqe[0].wr_id == 200, "ERR recv flush %d", n);

	/* RESET discards silently; back to RTS works. */
	CHECK(!modify_qp(c, &qp, IBV_QPS_RESET, 0), "RESET");
	CHECK(!(kflags(&qp.sq) & SOFTRNIC_KFLAG_ERROR), "RESET clears ERROR");
	CHECK(!to_rts(c, &qp), "RTS again");

	CHECK(!destroy_qp(c, &qp), "destroy QP");
	CHECK(!destroy_cq(c, &scq) && !destroy_cq(c, &rcq), "destroy CQs");
	close(chan);
}

static void test_corrupt_wqe(struct ctx *c, uint8_t qpt, int how)
{
	struct ib_uverbs_async_event_desc ev;
	struct softrnic_cqe cqe[8];
	struct ucq cq;
	struct uqp qp;
	int n;

	CHECK(!create_cq(c, &cq, 16, -1), "CQ");
	CHECK(!create_qp(c, &qp, &cq, &cq, qpt, 8, 8), "QP");
	CHECK(!to_rts(c, &qp), "RTS");
	switch (how) {
	case 0:	/* an opcode that does not exist */
		post_send(c, &qp, 7, 0x77, 0, NULL);
		break;
	case 1: /* 0xffff SGEs */
		post_send_sge(c, &qp, 7, SOFTRNIC_WR_SEND, 0, 0xffff, NULL);
		break;
	case 2: /* prod far beyond the ring */
		qp.sq.mine += 1000;
		__atomic_store_n(&qp.sq.ctrl->prod, qp.sq.mine,
				 __ATOMIC_RELEASE);
		sq_doorbell(c, &qp);
		break;
	}
	CHECK(!async_event(c, &ev, 1000) && ev.event_type ==
	      IBV_EVENT_QP_FATAL && ev.element == 0x99, "QP_FATAL (%d)", how);
	n = poll_cq(&cq, cqe, 1, 8, 500);
	if (how != 2)
		CHECK(n == 1 && cqe[0].wr_id == 7 &&
		      cqe[0].status == IBV_WC_LOC_QP_OP_ERR,
		      "bad WQE completes in error (%d): n %d status %u", how,
		      n, cqe[0].status);
	else
		CHECK(n == 0, "nothing to complete for a bad prod: %d", n);
	CHECK(kflags(&qp.sq) & SOFTRNIC_KFLAG_ERROR, "QP in error (%d)", how);
	CHECK(!destroy_qp(c, &qp), "destroy QP");
	CHECK(!destroy_cq(c, &cq), "destroy CQ");
}

static void test_cq_overflow_and_resize(struct ctx *c, uint8_t qpt)
{
	struct ib_uverbs_async_event_desc ev;
	struct softrnic_cqe cqe[16];
	struct ucq cq, big;
	struct uqp qp;
	int i, n;

	/* Resize with 3 CQEs pending: they move, cons carries over. */
	CHECK(!create_cq(c, &cq, 4, -1), "CQ");
	CHECK(!create_cq(c, &big, 64, -1), "big CQ");
	CHECK(!create_qp(c, &qp, &cq, &big, qpt, 8, 8), "QP");
	CHECK(!to_rts(c, &qp), "RTS");
	for (i = 0; i < 3; i++)
		post_send(c, &qp, 10 + i, SOFTRNIC_WR_SEND, 0, NULL);
	CHECK(!modify_qp(c, &qp, IBV_QPS_ERR, 0), "ERR");
	n = poll_cq(&cq, cqe, 1, 1, 500);
	CHECK(n == 1 && cqe[0].wr_id == 10, "first CQE");
	{
		struct {
			struct ib_uverbs_resize_cq_resp core;
			struct softrnic_resize_cq_resp drv;
		} resp;
		struct ib_uverbs_resize_cq cmd = {
			.response = (uintptr_t)&resp,
			.cq_handle = cq.handle,
			.cqe = 1,
		};
		uint32_t cons = cq.r.mine;

		CHECK(uverbs_cmd(c, IB_USER_VERBS_CMD_RESIZE_CQ, &cmd,
				 sizeof(cmd), sizeof(resp)) == -EINVAL,
		      "resize below pending");
		cmd.cqe = 8;
		CHECK(!uverbs_cmd(c, IB_USER_VERBS_CMD_RESIZE_CQ, &cmd,
				  sizeof(cmd), sizeof(resp)), "resize");
		CHECK(resp.core.cqe == 8 && resp.drv.cq.num_slots == 8,
		      "resized %u", resp.core.cqe);
		munmap(cq.r.base, cq.r.info.mmap_size);
		CHECK(!map_ring(c, &cq.r, &resp.drv.cq), "map new ring");
		cq.r.mine = cons;
		CHECK(cq.r.ctrl->cons == cons && cq.r.ctrl->prod == cons + 2,
		      "counters carried over");
	}
	n = poll_cq(&cq, cqe, 2, 16, 100);
	CHECK(n == 2 && cqe[0].wr_id == 11 && cqe[1].wr_id == 12,
	      "moved CQEs %d", n);

	/* Overflow: 8 slots, 9 flushes; CQ_ERR, nothing overwritten. */
	CHECK(!modify_qp(c, &qp, IBV_QPS_RESET, 0) && !to_rts(c, &qp), "RTS");
	for (i = 0; i < 8; i++)
		post_send(c, &qp, 20 + i, SOFTRNIC_WR_SEND, 0, NULL);
	for (i = 0; i < 8; i++)
		post_recv(c, &qp, 40 + i);
	/* send CQ gets 8 (fits), then: */
	CHECK(!modify_qp(c, &qp, IBV_QPS_ERR, 0), "ERR");
	post_send(c, &qp, 28, SOFTRNIC_WR_SEND, 0, NULL);
	CHECK(!async_event(c, &ev, 1000) && ev.event_type ==
	      IBV_EVENT_CQ_ERR && ev.element == 0xc0, "CQ_ERR");
	CHECK(kflags(&cq.r) & SOFTRNIC_KFLAG_ERROR, "CQ ERROR flag");
	n = poll_cq(&cq, cqe, 8, 16, 100);
	CHECK(n == 8 && cqe[0].wr_id == 20 && cqe[7].wr_id == 27,
	      "no overwrite %d", n);
	n = poll_cq(&big, cqe, 8, 16, 100);
	CHECK(n == 8, "recv flushes on the other CQ %d", n);
	CHECK(!destroy_qp(c, &qp), "destroy QP");
	CHECK(!destroy_cq(c, &cq) && !destroy_cq(c, &big), "destroy CQs");

	/* A hostile cons (ahead of prod) errors the CQ too. */
	CHECK(!create_cq(c, &cq, 4, -1), "CQ");
	CHECK(!create_qp(c, &qp, &cq, &cq, qpt, 8, 8), "QP");
	CHECK(!to_rts(c, &qp), "RTS");
	/* a receive: it stays posted on either wire until the flush */
	post_recv(c, &qp, 1);
	__atomic_store_n(&cq.r.ctrl->cons, 1000, __ATOMIC_RELEASE);
	CHECK(!modify_qp(c, &qp, IBV_QPS_ERR, 0), "ERR");
	CHECK(!async_event(c, &ev, 1000) && ev.event_type == IBV_EVENT_CQ_ERR,
	      "CQ_ERR on bad cons");
	CHECK(!destroy_qp(c, &qp), "destroy QP");
	CHECK(!destroy_cq(c, &cq), "destroy CQ");
}

static void test_mmap_rules(struct ctx *c)
{
	struct ucq cq;
	void *p;

	CHECK(!create_cq(c, &cq, 4, -1), "CQ");
	p = mmap(NULL, cq.r.info.mmap_size * 2, PROT_READ | PROT_WRITE,
		 MAP_SHARED, c->fd, cq.r.info.mmap_offset);
	CHECK(p == MAP_FAILED, "mmap of the wrong size");
	p = mmap(NULL, cq.r.info.mmap_size, PROT_READ, MAP_PRIVATE, c->fd,
		 cq.r.info.mmap_offset);
	CHECK(p == MAP_FAILED, "private mapping");
	p = mmap(NULL, cq.r.info.mmap_size, PROT_READ | PROT_EXEC, MAP_SHARED,
		 c->fd, cq.r.info.mmap_offset);
	CHECK(p == MAP_FAILED, "executable mapping");
	p = mmap(NULL, cq.r.info.mmap_size, PROT_READ, MAP_SHARED, c->fd,
		 cq.r.info.mmap_offset + 4096 * 1000);
	CHECK(p == MAP_FAILED, "unknown offset");
	/* A second mapping of the same ring is fine; it outlives the CQ. */
	p = mmap(NULL, cq.r.info.mmap_size, PROT_READ, MAP_SHARED, c->fd,
		 cq.r.info.mmap_offset);
	CHECK(p != MAP_FAILED, "second mapping");
	CHECK(!destroy_cq(c, &cq), "destroy CQ");
	if (p != MAP_FAILED) {
		CHECK(((struct softrnic_ring_ctrl *)p)->prod == 0,
		      "still readable after destroy");
		munmap(p, cq.r.info.mmap_size);
	}
}

static void test_srq(struct ctx *c)
{
	struct {
		struct ib_uverbs_create_srq_resp core;
		struct softrnic_create_srq_resp drv;
	} resp;
	struct ib_uverbs_create_srq cmd = {
		.response = (uintptr_t)&resp,
		.pd_handle = c->pd,
		.max_wr = 20,
		.max_sge = 1,
	};
	struct ib_uverbs_destroy_srq_resp dresp;
	struct ib_uverbs_destroy_srq dcmd = { .response = (uintptr_t)&dresp };
	struct uring r;

	CHECK(!uverbs_cmd(c, IB_USER_VERBS_CMD_CREATE_SRQ, &cmd, sizeof(cmd),
			  sizeof(resp)), "create SRQ");
	CHECK(resp.core.max_wr == 32 && resp.drv.srq.num_slots == 32,
	      "SRQ caps %u", resp.core.max_wr);
	CHECK(!map_ring(c, &r, &resp.drv.srq), "map SRQ");
	munmap(r.base, r.info.mmap_size);
	dcmd.srq_handle = resp.core.srq_handle;
	CHECK(!uverbs_cmd(c, IB_USER_VERBS_CMD_DESTROY_SRQ, &dcmd, sizeof(dcmd),
			  sizeof(dresp)), "destroy SRQ");
}

static int run_basic(struct ctx *c)
{
	uint8_t qpt = c->link_type == SOFTRNIC_LINK_ROCE ? IBV_QPT_UD :
							   IBV_QPT_RC;
	int how;

	/*
	 * Sends that stall in the SQ (KERNEL_ACTIVE, no doorbell, flushed by
	 * ERR) need a wire without a transport: the iWARP device, so far.
	 * A RoCE UD QP sends (and fails these WQEs, which name no AH).
	 */
	if (c->link_type != SOFTRNIC_LINK_ROCE)
		test_flush_and_channel(c, qpt);
	for (how = 0; how < 3; how++)
		test_corrupt_wqe(c, qpt, how);
	test_cq_overflow_and_resize(c, qpt);
	test_mmap_rules(c);
	test_srq(c);
	return 0;
}

/* Objects and mappings held while the device goes away. */
static int run_disassociate(struct ctx *c)
{
	struct ib_uverbs_async_event_desc ev;
	uint8_t qpt = c->link_type == SOFTRNIC_LINK_ROCE ? IBV_QPT_UD :
							   IBV_QPT_RC;
	char cmdline[128];
	struct ucq cq;
	struct uqp qp;

	CHECK(!create_cq(c, &cq, 16, comp_channel(c)), "CQ");
	CHECK(!create_qp(c, &qp, &cq, &cq, qpt, 8, 8), "QP");
	CHECK(!to_rts(c, &qp), "RTS");
	post_send(c, &qp, 1, SOFTRNIC_WR_SEND, SOFTRNIC_WQE_F_SIGNALED, NULL);
	post_recv(c, &qp, 2);

	snprintf(cmdline, sizeof(cmdline), "rdma link delete %s", c->dev);
	CHECK(system(cmdline) == 0, "%s", cmdline);
	CHECK(!async_event(c, &ev, 2000) &&
	      ev.event_type == IBV_EVENT_DEVICE_FATAL, "DEVICE_FATAL");
	/* The rings stay mapped and harmless; commands fail. */
	qp.sq.ctrl->prod = 12345;
	CHECK(cq.r.ctrl->cons == 0, "ring still mapped");
	CHECK(sq_doorbell(c, &qp) == -EIO, "doorbell after removal");
	CHECK(modify_qp(c, &qp, IBV_QPS_ERR, 0) == -EIO, "modify after");
	munmap(qp.sq.base, qp.sq.info.mmap_size);
	munmap(qp.rq.base, qp.rq.info.mmap_size);
	munmap(cq.r.base, cq.r.info.mmap_size);
	close(c->async_fd);
	close(c->fd);
	return 0;
}

/* Leave everything to ib_core's cleanup at exit. */
static int run_abandon(struct ctx *c)
{
	uint8_t qpt = c->link_type == SOFTRNIC_LINK_ROCE ? IBV_QPT_UD :
							   IBV_QPT_RC;
	struct ucq cq;
	struct uqp qp;
	int i;

	CHECK(!create_cq(c, &cq, 16, comp_channel(c)), "CQ");
	for (i = 0; i < 4; i++) {
		CHECK(!create_qp(c, &qp, &cq, &cq, qpt, 8, 8), "QP");
		CHECK(!to_rts(c, &qp), "RTS");
		post_send(c, &qp, 1, SOFTRNIC_WR_SEND, 0, NULL);
		post_recv(c, &qp, 2);
	}
	printf("ring_test: abandoning %s objects\n", c->dev);
	fflush(stdout);
	if (getenv("RING_TEST_SHOW"))
		CHECK(system(getenv("RING_TEST_SHOW")) == 0, "show");
	return 0;
}


/*
 * A hostile process: random bytes over every part of its SQ, RQ and CQ
 * rings (slots and control words alike) while it posts, rings doorbells,
 * polls and moves QPs between states.  The kernel must survive with a
 * clean log; the only thing checked here is that commands keep answering.
 */
static uint64_t rnd_state;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static void scribble_ring(struct uring *r, int bytes)
{
	uint8_t *b = r->base;
	size_t len = r->info.mmap_size;
	int i;

	for (i = 0; i < bytes; i++)
		b[rnd() % len] = (uint8_t)rnd();
	if (rnd() % 4 == 0)	/* counters are the juiciest target */
		((uint32_t *)r->ctrl)[(rnd() % 4) * 16] = (uint32_t)rnd();
}

static int run_scribble(struct ctx *c, int rounds)
{
	uint8_t qpt = c->link_type == SOFTRNIC_LINK_ROCE && !c->rc ?
		      IBV_QPT_UD : IBV_QPT_RC;
	struct softrnic_cqe cqe[16];
	struct ucq scq, rcq;
	struct uqp qp;
	int i, j, alive = 0;

	rnd_state = 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid();
	for (i = 0; i < rounds; i++) {
		CHECK(!create_cq(c, &scq, 32, comp_channel(c)), "send CQ");
		CHECK(!create_cq(c, &rcq, 32, -1), "recv CQ");
		CHECK(!create_qp(c, &qp, &scq, &rcq, qpt, 16, 16), "QP");
		CHECK(!to_rts(c, &qp), "RTS");
		for (j = 0; j < 64; j++) {
			switch (rnd() % 8) {
			case 0:
				scribble_ring(&qp.sq, 1 + rnd() % 64);
				break;
			case 1:
				scribble_ring(&qp.rq, 1 + rnd() % 64);
				break;
			case 2:
				scribble_ring(rnd() & 1 ? &scq.r : &rcq.r,
					      1 + rnd() % 64);
				break;
			case 3:
				/*
				 * RC: zero-length SENDs, which need no MR and
				 * fit the zero-SGE receives, so they travel.
				 */
				post_send_sge(c, &qp, j, SOFTRNIC_WR_SEND,
					      SOFTRNIC_WQE_F_SIGNALED,
					      c->rc ? 0 : 1, NULL);
				break;
			case 4:
				post_recv(c, &qp, j);
				break;
			case 5:
				sq_doorbell(c, &qp);
				rq_doorbell(c, &qp);
				break;
			case 6:
				poll_cq(&scq, cqe, 0, 16, 0);
				poll_cq(&rcq, cqe, 0, 16, 0);
				break;
			default:
				if (rnd() % 8 == 0)
					modify_qp(c, &qp, IBV_QPS_ERR, 0);
				break;
			}
		}
		/* Teardown must work whatever state the rings are in. */
		if (rnd() % 2)
			modify_qp(c, &qp, IBV_QPS_ERR, 0);
		CHECK(!destroy_qp(c, &qp), "destroy QP after scribbling");
		CHECK(!destroy_cq(c, &scq), "destroy send CQ");
		CHECK(!destroy_cq(c, &rcq), "destroy recv CQ");
		munmap(qp.sq.base, qp.sq.info.mmap_size);
		munmap(qp.rq.base, qp.rq.info.mmap_size);
		munmap(scq.r.base, scq.r.info.mmap_size);
		munmap(rcq.r.base, rcq.r.info.mmap_size);
		alive++;
	}
	/* Last round: leave scribbled objects for exit-time cleanup. */
	CHECK(!create_cq(c, &scq, 32, -1), "final CQ");
	CHECK(!create_qp(c, &qp, &scq, &scq, qpt, 16, 16), "final QP");
	to_rts(c, &qp);
	post_send(c, &qp, 1, SOFTRNIC_WR_SEND, SOFTRNIC_WQE_F_SIGNALED, NULL);
	scribble_ring(&qp.sq, 4096);
	scribble_ring(&scq.r, 4096);
	sq_doorbell(c, &qp);
	printf("ring_test: %d scribbled rounds survived\n", alive);
	return 0;
}

/* ------------------------------------------------------------------ */
/* A process that moves its ring words under the kernel's feet */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * prod moved back, but not behind what the kernel fetched: WQEs 0..3 sit
 * in the SQ of a QP whose sends stall (no transport), the kernel has seen
 * prod 4, and prod becomes 2.  The ring is corrupt: QP_FATAL, ERR.
 */
static void test_prod_backwards(struct ctx *c)
{
	struct ib_uverbs_async_event_desc ev;
	struct ucq cq;
	struct uqp qp;
	int i;

	CHECK(!create_cq(c, &cq, 16, -1), "CQ");
	CHECK(!create_qp(c, &qp, &cq, &cq, IBV_QPT_RC, 8, 8), "QP");
	CHECK(!to_rts(c, &qp), "RTS");
	for (i = 0; i < 4; i++)
		CHECK(!post_send(c, &qp, i, SOFTRNIC_WR_SEND, 0, NULL), "send");
	CHECK(!sq_doorbell(c, &qp), "doorbell");
	__atomic_store_n(&qp.sq.ctrl->prod, 2, __ATOMIC_RELEASE);
	CHECK(!sq_doorbell(c, &qp), "doorbell after prod moved back");
	CHECK(!async_event(c, &ev, 2000) && ev.event_type ==
	      IBV_EVENT_QP_FATAL && ev.element == 0x99,
	      "prod moved back: QP_FATAL");
	CHECK(kflags(&qp.sq) & SOFTRNIC_KFLAG_ERROR, "prod moved back: ERR");
	CHECK(!destroy_qp(c, &qp), "destroy QP");
	CHECK(!destroy_cq(c, &cq), "destroy CQ");
}

struct flipper {
	struct uqp *qp;
	struct ucq *cq;
	volatile int stop;
	unsigned long flips;
};

/* Store to prod, kflags and the CQ's uflags as fast as it can. */
static void *flip(void *arg)
{
	struct flipper *f = arg;
	struct softrnic_ring_ctrl *sq = f->qp->sq.ctrl, *cq = f->cq->r.ctrl;
	uint32_t base = f->qp->sq.mine;

	while (!f->stop) {
		__atomic_store_n(&sq->prod, base + (f->flips & 1),
				 __ATOMIC_RELAXED);
		__atomic_store_n(&sq->kflags, (uint32_t)f->flips,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&cq->uflags, f->flips & 2 ?
				 SOFTRNIC_CQ_ARM_NEXT : SOFTRNIC_CQ_ARM_SOLICITED,
				 __ATOMIC_RELAXED);
		f->flips++;
	}
	return NULL;
}

/*
 * One thread flips the SQ's prod back and forth, kflags and the CQ's arm
 * word, while this one rings doorbells, posts and polls: every system
 * call returns at once (the kernel bounds every loop over those words)
 * and the QP ends in ERR, and destroy works.  RC (iWARP: its sends stall
 * in the SQ, so prod is seen moving back): with QP_FATAL.  UD: the first
 * WQE the kernel fetches fails (no AH), which is ERR without an event.
 */
static void test_flip(struct ctx *c, uint8_t qpt)
{
	struct ib_uverbs_async_event_desc ev;
	struct softrnic_cqe cqe[16];
	struct flipper f = { 0 };
	double t0, t, worst = 0;
	struct ucq cq;
	struct uqp qp;
	pthread_t th;
	int i, n, fatal = 0;

	CHECK(!create_cq(c, &cq, 16, comp_channel(c)), "CQ");
	CHECK(!create_qp(c, &qp, &cq, &cq, qpt, 8, 8), "QP");
	CHECK(!to_rts(c, &qp), "RTS");
	f.qp = &qp;
	f.cq = &cq;
	CHECK(!pthread_create(&th, NULL, flip, &f), "flipper thread");
	t0 = now_s();
	/*
	 * At least 2000 doorbells, then until the kernel has seen prod move
	 * back: 2000 may take a few ms, and if the flipper did not run in
	 * between (one CPU for both threads), the kernel saw no flip yet.
	 */
	for (i = 0; now_s() - t0 < 3; i++) {
		t = now_s();
		sq_doorbell(c, &qp);
		if (i % 8 == 0)
			post_send(c, &qp, i, SOFTRNIC_WR_SEND,
				  SOFTRNIC_WQE_F_SIGNALED, NULL);
		poll_cq(&cq, cqe, 0, 16, 0);
		t = now_s() - t;
		if (t > worst)
			worst = t;
		if (i >= 2000 && i % 64 == 0 &&
		    query_qp_state(c, &qp) == IBV_QPS_ERR)
			break;
	}
	f.stop = 1;
	pthread_join(th, NULL);
	while (!async_event(c, &ev, 1000))
		if (ev.event_type == IBV_EVENT_QP_FATAL && ev.element == 0x99)
			fatal = 1;
	printf("ring_test: %s: %d doorbells against %lu flips, slowest %.3f s\n",
	       qpt == IBV_QPT_RC ? "RC" : "UD", i, f.flips, worst);
	CHECK(f.flips > 1000, "the flipper ran: %lu flips", f.flips);
	CHECK(worst < 1.0, "a doorbell took %.3f s", worst);
	n = query_qp_state(c, &qp);
	CHECK(n == IBV_QPS_ERR, "flipped prod: QP state %d, not ERR", n);
	if (qpt == IBV_QPT_RC)
		CHECK(fatal, "flipped prod: QP_FATAL");
	CHECK(!destroy_qp(c, &qp), "destroy QP");
	CHECK(!destroy_cq(c, &cq), "destroy CQ");
}

static int run_hostile(struct ctx *c)
{
	uint8_t qpt = c->link_type == SOFTRNIC_LINK_ROCE ? IBV_QPT_UD :
							   IBV_QPT_RC;

	if (qpt == IBV_QPT_RC)
		test_prod_backwards(c);
	test_flip(c, qpt);
	return 0;
}

int main(int argc, char **argv)
{
	struct ctx c;
	const char *mode = argc > 2 ? argv[2] : "basic";
	int err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: ring_test DEV [basic|disassociate|abandon|scribble[-rc] [ROUNDS]|hostile]\n");
		return 2;
	}
	err = open_dev(&c, argv[1]);
	if (err) {
		printf("FAIL: open %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	if (!strcmp(mode, "disassociate"))
		run_disassociate(&c);
	else if (!strcmp(mode, "abandon"))
		run_abandon(&c);
	else if (!strcmp(mode, "scribble"))
		run_scribble(&c, argc > 3 ? atoi(argv[3]) : 200);
	else if (!strcmp(mode, "scribble-rc")) {
		c.rc = 1;
		run_scribble(&c, argc > 3 ? atoi(argv[3]) : 200);
	}
	else if (!strcmp(mode, "hostile"))
		run_hostile(&c);
	else
		run_basic(&c);
	printf("ring_test: %s %s: %d checks, %d failed\n", argv[1], mode,
	       test_checks, test_failures);
	return test_failures ? 1 : 0;
}
