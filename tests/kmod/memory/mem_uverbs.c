// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Test-only: the user verbs of memory objects (reg/rereg/dereg MR, MWs, AHs)
// through raw uverbs write() commands, no libibverbs or provider needed.
// usage: mem_uverbs IBDEV [test|rlimit|hold]; see run-in-vm.sh.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/ib_user_ioctl_verbs.h>
#define IB_MR_REREG_TRANS 1
#define IB_MR_REREG_PD 2
#define IB_MR_REREG_ACCESS 4
#include "softrnic-abi.h"
#include "check.h"

static int fd;

static int ucmd(__u32 op, void *body, size_t blen, void *resp, size_t rlen)
{
	char buf[512];
	struct ib_uverbs_cmd_hdr *h = (void *)buf;

	h->command = op;
	h->in_words = (sizeof(*h) + blen) / 4;
	h->out_words = rlen / 4;
	memcpy(buf + sizeof(*h), body, blen);
	if (resp)
		*(__u64 *)(buf + sizeof(*h)) = (uintptr_t)resp;
	return write(fd, buf, sizeof(*h) + blen) == (ssize_t)(sizeof(*h) + blen) ? 0 : -errno;
}

static int open_dev(const char *name)
{
	char p[256], n[64];
	for (int i = 0; i < 32; i++) {
		snprintf(p, sizeof(p), "/sys/class/infiniband_verbs/uverbs%d/ibdev", i);
		FILE *f = fopen(p, "r");
		if (!f)
			continue;
		if (fscanf(f, "%63s", n) == 1 && !strcmp(n, name)) {
			fclose(f);
			snprintf(p, sizeof(p), "/dev/infiniband/uverbs%d", i);
			return open(p, O_RDWR | O_CLOEXEC);
		}
		fclose(f);
	}
	return -1;
}

static __u32 alloc_pd(void)
{
	struct ib_uverbs_alloc_pd c = {};
	struct { struct ib_uverbs_alloc_pd_resp r; struct softrnic_alloc_pd_resp d; } __attribute__((packed)) r;
	if (ucmd(IB_USER_VERBS_CMD_ALLOC_PD, &c, sizeof(c), &r, sizeof(r)))
		return ~0u;
	return r.r.pd_handle;
}

static int reg_mr(__u32 pd, void *start, __u64 len, __u64 va, __u32 access, struct ib_uverbs_reg_mr_resp *r)
{
	struct ib_uverbs_reg_mr c = { .start = (uintptr_t)start, .length = len, .hca_va = va,
				      .pd_handle = pd, .access_flags = access };
	return ucmd(IB_USER_VERBS_CMD_REG_MR, &c, sizeof(c), r, sizeof(*r));
}

static int rereg_mr(__u32 mr, __u32 flags, void *start, __u64 len, __u64 va, __u32 pd, __u32 access,
		    struct ib_uverbs_rereg_mr_resp *r)
{
	struct ib_uverbs_rereg_mr c = { .mr_handle = mr, .flags = flags, .start = (uintptr_t)start,
					.length = len, .hca_va = va, .pd_handle = pd, .access_flags = access };
	return ucmd(IB_USER_VERBS_CMD_REREG_MR, &c, sizeof(c), r, sizeof(*r));
}

static int dereg_mr(__u32 h)
{
	struct ib_uverbs_dereg_mr c = { .mr_handle = h };
	return ucmd(IB_USER_VERBS_CMD_DEREG_MR, &c, sizeof(c), NULL, 0);
}

static int alloc_mw(__u32 pd, int type, struct ib_uverbs_alloc_mw_resp *r)
{
	struct ib_uverbs_alloc_mw c = { .pd_handle = pd, .mw_type = type };
	return ucmd(IB_USER_VERBS_CMD_ALLOC_MW, &c, sizeof(c), r, sizeof(*r));
}

static int dealloc_mw(__u32 h)
{
	struct ib_uverbs_dealloc_mw c = { .mw_handle = h };
	return ucmd(IB_USER_VERBS_CMD_DEALLOC_MW, &c, sizeof(c), NULL, 0);
}

struct ah_resp { struct ib_uverbs_create_ah_resp r; struct softrnic_create_ah_resp d; } __attribute__((packed));

static int find_v4_gid(const char *dev, __u8 gid[16])
{
	char p[256], s[64];
	for (int i = 0; i < 64; i++) {
		unsigned int g[8];
		snprintf(p, sizeof(p), "/sys/class/infiniband/%s/ports/1/gids/%d", dev, i);
		FILE *f = fopen(p, "r");
		if (!f)
			continue;
		int ok = fscanf(f, "%63s", s) == 1 &&
			 sscanf(s, "%x:%x:%x:%x:%x:%x:%x:%x", &g[0], &g[1], &g[2], &g[3], &g[4], &g[5], &g[6], &g[7]) == 8;
		fclose(f);
		if (ok && !g[0] && !g[1] && !g[2] && !g[3] && !g[4] && g[5] == 0xffff) {
			for (int j = 0; j < 8; j++) {
				gid[2 * j] = g[j] >> 8;
				gid[2 * j + 1] = g[j] & 0xff;
			}
			return i;
		}
	}
	return -1;
}

static int create_ah(__u32 pd, const char *dev, struct ah_resp *r)
{
	struct ib_uverbs_create_ah c = { .pd_handle = pd };
	int idx = find_v4_gid(dev, c.attr.grh.dgid);

	if (idx < 0)
		idx = 0;
	c.attr.grh.sgid_index = idx;
	c.attr.grh.hop_limit = 64;
	c.attr.is_global = 1;
	c.attr.port_num = 1;
	return ucmd(IB_USER_VERBS_CMD_CREATE_AH, &c, sizeof(c), r, sizeof(*r));
}

static int destroy_ah(__u32 h)
{
	struct ib_uverbs_destroy_ah c = { .ah_handle = h };
	return ucmd(IB_USER_VERBS_CMD_DESTROY_AH, &c, sizeof(c), NULL, 0);
}

static void drop_ipc_lock(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	syscall(SYS_capget, &h, d);
	d[0].effective &= ~(1u << CAP_IPC_LOCK);
	syscall(SYS_capset, &h, d);
}

#define LW IB_UVERBS_ACCESS_LOCAL_WRITE
#define RW IB_UVERBS_ACCESS_REMOTE_WRITE
#define RR IB_UVERBS_ACCESS_REMOTE_READ
#define RA IB_UVERBS_ACCESS_REMOTE_ATOMIC
#define MB IB_UVERBS_ACCESS_MW_BIND

int main(int argc, char **argv)
{
	const char *dev = argc > 1 ? argv[1] : "sr0";
	const char *mode = argc > 2 ? argv[2] : "test";
	long pg = sysconf(_SC_PAGESIZE);
	struct { struct ib_uverbs_get_context_resp r; struct softrnic_alloc_ucontext_resp d; } cr;
	struct ib_uverbs_get_context gc = {};
	struct ib_uverbs_reg_mr_resp m1, m2, m3, m4;
	struct ib_uverbs_rereg_mr_resp rr;
	struct ib_uverbs_alloc_mw_resp w1, w2;
	struct ah_resp ah;
	__u32 pd, pd2, k;
	char *buf, *buf2, *ro;

	if (!strcmp(mode, "rlimit")) {
		/* Before opening: uverbs refuses writes after a cred change. */
		struct rlimit rl = { 16 * pg, 16 * pg };
		setrlimit(RLIMIT_MEMLOCK, &rl);
		drop_ipc_lock();
	}
	fd = open_dev(dev);
	if (fd < 0) {
		perror("open uverbs");
		return 2;
	}
	if (ucmd(IB_USER_VERBS_CMD_GET_CONTEXT, &gc, sizeof(gc), &cr, sizeof(cr))) {
		perror("get_context");
		return 2;
	}
	pd = alloc_pd();
	pd2 = alloc_pd();
	CHECK(pd != ~0u && pd2 != ~0u);
	buf = mmap(NULL, 64 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	buf2 = mmap(NULL, 64 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro = mmap(NULL, 4 * pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (!strcmp(mode, "rlimit")) {
		/* RLIMIT_MEMLOCK is ib_umem's to enforce. */
		CHECK(reg_mr(pd, buf, 32 * pg, (uintptr_t)buf, LW, &m4) == -ENOMEM);
		CHECK(reg_mr(pd, buf, 8 * pg, (uintptr_t)buf, LW, &m4) == 0);
		CHECK(reg_mr(pd, buf, 0, (uintptr_t)buf, LW, &m3) == 0);
		CHECK(dereg_mr(m4.mr_handle) == 0);
		CHECK(dereg_mr(m3.mr_handle) == 0);
		printf("rlimit test on %s: %d passed, %d failed\n", dev,
		       test_checks - test_failures, test_failures);
		return test_failures ? 1 : 0;
	}
	if (!strcmp(mode, "hold")) {
		/* Hold one of everything, then wait to be killed or orphaned. */
		CHECK(reg_mr(pd, buf, 16 * pg, (uintptr_t)buf, LW | RW | RR | MB, &m1) == 0);
		CHECK(reg_mr(pd, buf2, 0, 0, LW, &m2) == 0);
		CHECK(alloc_mw(pd, 1, &w1) == 0);
		CHECK(alloc_mw(pd, 2, &w2) == 0);
		if (cr.d.link_type == SOFTRNIC_LINK_ROCE)
			CHECK(create_ah(pd, dev, &ah) == 0);
		printf("holding: %d passed, %d failed\n", test_checks - test_failures,
		       test_failures);
		fflush(stdout);
		pause();
		return 0;
	}

	/* Every access flag, incl. remote atomic and relaxed ordering. */
	CHECK(reg_mr(pd, buf, 16 * pg, (uintptr_t)buf,
		     LW | RW | RR | RA | MB | IB_UVERBS_ACCESS_RELAXED_ORDERING |
		     IB_UVERBS_ACCESS_HUGETLB, &m1) == 0);
	CHECK(m1.lkey == m1.rkey && (m1.lkey >> 8) != 0);
	/* Zero-based iova, zero length (aligned and not). */
	CHECK(reg_mr(pd, buf + 0x10, 100, 0x10, LW | RR, &m2) == 0);
	CHECK(reg_mr(pd, buf2, 0, (uintptr_t)buf2, LW, &m3) == 0);
	CHECK(reg_mr(pd, buf2 + 3, 0, 3, 0, &m4) == 0);
	CHECK(dereg_mr(m4.mr_handle) == 0);
	/* Refusals. */
	CHECK(reg_mr(pd, buf, (1ULL << 40) + pg, (uintptr_t)buf, LW, &m4) == -EINVAL);
	CHECK(reg_mr(pd, buf, 2 * pg, 0xfffffffffffff000ULL, LW, &m4) == -EINVAL);
	CHECK(reg_mr(pd, buf, pg, (uintptr_t)buf, LW | IB_UVERBS_ACCESS_ON_DEMAND, &m4) == -EINVAL);
	CHECK(reg_mr(pd, buf, pg, (uintptr_t)buf, RW, &m4) == -EINVAL);
	CHECK(reg_mr(pd, buf, pg, (uintptr_t)buf, RA, &m4) == -EINVAL);
	CHECK(reg_mr(pd, buf, pg, (uintptr_t)buf, LW | (1u << 10), &m4) == -EINVAL);
	/* Read-only mapping: fine without write rights, not with them. */
	CHECK(reg_mr(pd, ro, 4 * pg, (uintptr_t)ro, RR, &m4) == 0);
	k = m4.lkey;
	CHECK(reg_mr(pd, ro, 4 * pg, (uintptr_t)ro, LW, &m3) != 0 || (dereg_mr(m3.mr_handle), 0));
	/* Becoming writable re-pins: fails on a read-only mapping, MR intact. */
	CHECK(rereg_mr(m4.mr_handle, IB_MR_REREG_ACCESS, 0, 0, 0, 0, LW | RR, &rr) != 0);
	CHECK(rereg_mr(m4.mr_handle, IB_MR_REREG_ACCESS, 0, 0, 0, 0, RR | MB, &rr) != 0 || 1);
	/* Translation change: same index, new key byte. */
	CHECK(rereg_mr(m4.mr_handle, IB_MR_REREG_TRANS, buf2, 8 * pg, (uintptr_t)buf2, 0, 0, &rr) == 0);
	CHECK(rr.lkey == rr.rkey && (rr.lkey >> 8) == (k >> 8) && rr.lkey != k);
	k = rr.lkey;
	/* Rights or PD only: the key stays (peers keep using it). */
	CHECK(rereg_mr(m4.mr_handle, IB_MR_REREG_ACCESS, 0, 0, 0, 0, LW | RW | RR, &rr) == 0);
	CHECK(rr.lkey == k && rr.rkey == k);
	CHECK(rereg_mr(m4.mr_handle, IB_MR_REREG_PD, 0, 0, 0, pd2, 0, &rr) == 0);
	CHECK(rr.lkey == k && rr.rkey == k);
	CHECK(rereg_mr(m4.mr_handle, IB_MR_REREG_TRANS | IB_MR_REREG_ACCESS | IB_MR_REREG_PD,
		       buf2, 0, 0x1000, pd, LW, &rr) == 0);
	CHECK((rr.lkey >> 8) == (k >> 8) && rr.lkey != k);
	CHECK(rereg_mr(m4.mr_handle, IB_MR_REREG_ACCESS, 0, 0, 0, 0, RW, &rr) == -EINVAL);
	CHECK(rereg_mr(m4.mr_handle, IB_MR_REREG_TRANS, buf, (1ULL << 40) + pg, (uintptr_t)buf, 0, 0, &rr) == -EINVAL);

	/* Memory windows. */
	CHECK(alloc_mw(pd, 1, &w1) == 0);
	CHECK(alloc_mw(pd, 2, &w2) == 0);
	CHECK((w1.rkey >> 8) && (w1.rkey >> 8) != (w2.rkey >> 8) && (w1.rkey >> 8) != (m1.lkey >> 8));
	CHECK(alloc_mw(pd, 3, &w2) != 0 || 1);

	/* AHs: RoCE only. */
	if (cr.d.link_type == SOFTRNIC_LINK_ROCE) {
		struct ah_resp ah2;
		CHECK(create_ah(pd, dev, &ah) == 0);
		CHECK(create_ah(pd, dev, &ah2) == 0);
		CHECK(ah.d.ah_num >= 1 && ah2.d.ah_num != ah.d.ah_num);
		CHECK(destroy_ah(ah2.r.ah_handle) == 0);
		CHECK(destroy_ah(ah.r.ah_handle) == 0);
	} else {
		CHECK(create_ah(pd, dev, &ah) == -EOPNOTSUPP);
	}

	fflush(stdout);
	if (system("rdma resource show mr") != 0)
		test_failures++;

	CHECK(dealloc_mw(w1.mw_handle) == 0);
	CHECK(dealloc_mw(w2.mw_handle) == 0);
	CHECK(dereg_mr(m1.mr_handle) == 0);
	CHECK(dereg_mr(m2.mr_handle) == 0);
	CHECK(dereg_mr(m4.mr_handle) == 0);

	printf("uverbs test on %s: %d passed, %d failed\n", dev,
	       test_checks - test_failures, test_failures);
	return test_failures ? 1 : 0;
}
