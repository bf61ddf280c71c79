// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrnic-iwarp-ext: RFC 7306 (immediate data, atomics) over rdma_cm,
 * byte-exact, between two processes (tests/vm/iwarp_rfc7306.sh).
 *
 *   softrnic-iwarp-ext -s ADDR [none]     server: listens on ADDR:7471
 *   softrnic-iwarp-ext ADDR [align|rkey|none]
 *
 * The client sends SEND_WITH_IMM (100 bytes), WRITE_WITH_IMM (5000 bytes),
 * a zero-length WRITE_WITH_IMM, a zero-length solicited SEND_WITH_IMM,
 * FetchAdd and CmpSwap (original values checked), READs and FetchAdds
 * interleaved beyond the ORD, a SEND; the server checks every receive
 * completion (opcode, flags, immediate, byte_len, data) and the target
 * words.  Then one failing atomic: misaligned (align, the default:
 * IBV_WC_REM_INV_REQ_ERR) or with a bad rkey (rkey: IBV_WC_REM_ACCESS_ERR).
 * "none": a peer without RFC 7306 (siw): the client's SEND_WITH_IMM must
 * fail at once with IBV_WC_LOC_QP_OP_ERR, and the server must receive
 * nothing (flushes only).  Exit 0 when every check held.
 */
#include <arpa/inet.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define BUF 65536

/* The side's last line and exit status. */
static int verdict(const char *side)
{
	printf("%s: %s (%d checks, %d failures)\n", side, test_failures ? "FAIL" : "OK",
	       test_checks, test_failures);
	return !!test_failures;
}

struct pd_msg {
	uint64_t addr;
	uint32_t rkey;
};

static struct ibv_wc poll1(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	int n, spins = 0;

	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0) {
		usleep(1000);
		if (++spins > 20000) {
			printf("FAIL: timeout\n");
			exit(2);
		}
	}
	if (n < 0) {
		printf("FAIL: poll\n");
		exit(2);
	}
	return wc;
}

static uint8_t pat(int seed, int i)
{
	return (uint8_t)(seed * 31 + i * 7 + (i >> 8));
}

int main(int argc, char **argv)
{
	struct rdma_addrinfo hints = {.ai_port_space = RDMA_PS_TCP}, *res;
	struct ibv_qp_init_attr attr = {
	    .cap = {16, 16, 2, 2, 0}, .qp_type = IBV_QPT_RC, .sq_sig_all = 1};
	struct rdma_cm_id *lid, *id;
	struct rdma_conn_param cp = {
	    .initiator_depth = 4, .responder_resources = 4, .retry_count = 7};
	int server = argc > 1 && !strcmp(argv[1], "-s");
	const char *ip;

	if (argc < 2 + server) {
		fprintf(stderr, "usage: %s [-s] ADDR [align|rkey|none]\n", argv[0]);
		return 2;
	}
	ip = argv[server ? 2 : 1];
	const char *mode = argc > (server ? 3 : 2) ? argv[server ? 3 : 2] : "align";
	int badkey = !strcmp(mode, "rkey"), none = !strcmp(mode, "none");
	uint8_t *buf = aligned_alloc(4096, BUF);
	struct ibv_mr *mr;
	struct pd_msg pm;
	struct ibv_wc wc;
	int i;

	memset(buf, 0, BUF);
	if (server) {
		hints.ai_flags = RAI_PASSIVE;
		if (rdma_getaddrinfo(ip, "7471", &hints, &res)) {
			perror("gai");
			return 2;
		}
		if (rdma_create_ep(&lid, res, NULL, &attr) || rdma_listen(lid, 1) ||
		    rdma_get_request(lid, &id)) {
			perror("listen");
			return 2;
		}
		mr = ibv_reg_mr(id->pd, buf, BUF,
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
		if (!mr) {
			perror("mr");
			return 2;
		}
		*(uint64_t *)buf = 0x1000;
		for (i = 0; i < 8; i++)
			if (rdma_post_recv(id, (void *)(uintptr_t)i, buf + 16384 + i * 4096, 4096,
					   mr)) {
				perror("recv");
				return 2;
			}
		pm.addr = (uintptr_t)buf;
		pm.rkey = mr->rkey;
		cp.private_data = &pm;
		cp.private_data_len = sizeof(pm);
		if (rdma_accept(id, &cp)) {
			perror("accept");
			return 2;
		}
		if (none) {
			/* nothing may arrive; the disconnect flushes the receives */
			for (i = 0; i < 3000; i++) {
				if (ibv_poll_cq(id->recv_cq, 1, &wc) == 1)
					CHECK(wc.status == IBV_WC_WR_FLUSH_ERR,
					      "none: a receive completed: st %d op %d", wc.status,
					      wc.opcode);
				usleep(1000);
			}
			return verdict("server");
		}
		/* 1: SEND_WITH_IMM, 100 bytes */
		wc = poll1(id->recv_cq);
		CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
			  (wc.wc_flags & IBV_WC_WITH_IMM) && wc.imm_data == htonl(0x11223344) &&
			  wc.byte_len == 100 && wc.wr_id == 0,
		      "send_imm: st %d op %d fl %x imm %x len %u", wc.status, wc.opcode,
		      wc.wc_flags, ntohl(wc.imm_data), wc.byte_len);
		for (i = 0; i < 100; i++)
			CHECK(buf[16384 + i] == pat(1, i), "send_imm data %d", i);
		/* 2: WRITE_WITH_IMM 5000 bytes at 8192 */
		wc = poll1(id->recv_cq);
		CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
			  (wc.wc_flags & IBV_WC_WITH_IMM) && wc.imm_data == htonl(0x55667788) &&
			  wc.byte_len == 5000 && wc.wr_id == 1,
		      "write_imm: st %d op %d fl %x imm %x len %u", wc.status, wc.opcode,
		      wc.wc_flags, ntohl(wc.imm_data), wc.byte_len);
		for (i = 0; i < 5000; i++)
			if (buf[8192 + i] != pat(2, i)) {
				CHECK(0, "write_imm data %d", i);
				break;
			}
		CHECK(buf[8192 + 5000] == 0, "write_imm overrun");
		CHECK(buf[16384 + 4096] == 0, "write_imm touched the recv buffer");
		/* 3: zero-length WRITE_WITH_IMM */
		wc = poll1(id->recv_cq);
		CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
			  wc.imm_data == htonl(0x99) && wc.byte_len == 0 && wc.wr_id == 2,
		      "write_imm0: st %d op %d imm %x len %u", wc.status, wc.opcode,
		      ntohl(wc.imm_data), wc.byte_len);
		/* 4: zero-length solicited SEND_WITH_IMM */
		wc = poll1(id->recv_cq);
		CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
			  (wc.wc_flags & IBV_WC_WITH_IMM) && wc.imm_data == htonl(0xdeadbeef) &&
			  wc.byte_len == 0 && wc.wr_id == 3,
		      "send_imm0: st %d op %d imm %x len %u", wc.status, wc.opcode,
		      ntohl(wc.imm_data), wc.byte_len);
		/* 5: plain SEND after the atomics: target checked */
		wc = poll1(id->recv_cq);
		CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
			  !(wc.wc_flags & IBV_WC_WITH_IMM) && wc.byte_len == 4 && wc.wr_id == 4,
		      "send: st %d op %d fl %x len %u", wc.status, wc.opcode, wc.wc_flags,
		      wc.byte_len);
		CHECK(*(uint64_t *)buf == 0xabc, "atomic target %llx",
		      (unsigned long long)*(uint64_t *)buf);
		CHECK(*(uint64_t *)(buf + 8) == 0, "atomic neighbour");
		CHECK(*(uint64_t *)(buf + 16) == 4, "batch target %llx",
		      (unsigned long long)*(uint64_t *)(buf + 16));
		sleep(3); /* the client's misaligned atomic */
		return verdict("server");
	}

	if (rdma_getaddrinfo(ip, "7471", &hints, &res)) {
		perror("gai");
		return 2;
	}
	if (rdma_create_ep(&id, res, NULL, &attr)) {
		perror("ep");
		return 2;
	}
	mr = ibv_reg_mr(id->pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE);
	if (!mr || rdma_connect(id, &cp)) {
		perror("connect");
		return 2;
	}
	memcpy(&pm, id->event->param.conn.private_data, sizeof(pm));

	struct ibv_sge sge = {(uintptr_t)buf, 100, mr->lkey};
	struct ibv_send_wr wr = {.sg_list = &sge, .num_sge = 1}, *bad;
#define POST(what)                                                                                 \
	do {                                                                                       \
		if (ibv_post_send(id->qp, &wr, &bad)) {                                            \
			perror(what);                                                              \
			return 2;                                                                  \
		}                                                                                  \
	} while (0)
	for (i = 0; i < 100; i++)
		buf[i] = pat(1, i);
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.imm_data = htonl(0x11223344);
	POST("send_imm");
	wc = poll1(id->send_cq);
	if (none) {
		CHECK(wc.status == IBV_WC_LOC_QP_OP_ERR, "none: send_imm: %s (%d)",
		      ibv_wc_status_str(wc.status), wc.status);
		return verdict("client");
	}
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND, "send_imm cqe %d %d",
	      wc.status, wc.opcode);

	for (i = 0; i < 5000; i++)
		buf[4096 + i] = pat(2, i);
	sge.addr = (uintptr_t)buf + 4096;
	sge.length = 5000;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.imm_data = htonl(0x55667788);
	wr.wr.rdma.remote_addr = pm.addr + 8192;
	wr.wr.rdma.rkey = pm.rkey;
	POST("write_imm");
	wc = poll1(id->send_cq);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_WRITE, "write_imm cqe %d %d",
	      wc.status, wc.opcode);

	wr.num_sge = 0;
	wr.imm_data = htonl(0x99);
	POST("write_imm0");
	wc = poll1(id->send_cq);
	CHECK(wc.status == IBV_WC_SUCCESS, "write_imm0 cqe %d", wc.status);

	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.imm_data = htonl(0xdeadbeef);
	wr.send_flags = IBV_SEND_SOLICITED;
	POST("send_imm0");
	wc = poll1(id->send_cq);
	CHECK(wc.status == IBV_WC_SUCCESS, "send_imm0 cqe %d", wc.status);
	wr.send_flags = 0;

	/* atomics: result into buf+64 */
	struct {
		int op;
		uint64_t a, b, orig;
	} at[] = {
	    {IBV_WR_ATOMIC_FETCH_AND_ADD, 5, 0, 0x1000},
	    {IBV_WR_ATOMIC_FETCH_AND_ADD, 5, 0, 0x1005},
	    {IBV_WR_ATOMIC_CMP_AND_SWP, 0x100a, 0xabc, 0x100a},
	    {IBV_WR_ATOMIC_CMP_AND_SWP, 0, 1, 0xabc},
	};
	wr.num_sge = 1;
	sge.addr = (uintptr_t)buf + 64;
	sge.length = 8;
	for (i = 0; i < 4; i++) {
		memset(buf + 64, 0xee, 16);
		wr.opcode = at[i].op;
		wr.wr.atomic.remote_addr = pm.addr;
		wr.wr.atomic.rkey = pm.rkey;
		wr.wr.atomic.compare_add = at[i].a;
		wr.wr.atomic.swap = at[i].b;
		POST("atomic");
		wc = poll1(id->send_cq);
		CHECK(wc.status == IBV_WC_SUCCESS &&
			  wc.opcode == (at[i].op == IBV_WR_ATOMIC_CMP_AND_SWP ? IBV_WC_COMP_SWAP
									      : IBV_WC_FETCH_ADD) &&
			  wc.byte_len == 8,
		      "atomic %d cqe st %d op %d len %u", i, wc.status, wc.opcode, wc.byte_len);
		CHECK(*(uint64_t *)(buf + 64) == at[i].orig, "atomic %d orig %llx want %llx", i,
		      (unsigned long long)*(uint64_t *)(buf + 64), (unsigned long long)at[i].orig);
		CHECK(buf[72] == 0xee, "atomic %d overrun", i);
	}
	/* READs and fetch-adds interleaved, posted at once beyond the ORD */
	{
		struct ibv_sge sg[8];
		struct ibv_send_wr w[8];
		int k;

		memset(w, 0, sizeof(w));
		memset(buf + 16384, 0, 4 * 4096);
		memset(buf + 128, 0xee, 64);
		for (k = 0; k < 8; k++) {
			w[k].wr_id = k;
			w[k].sg_list = &sg[k];
			w[k].num_sge = 1;
			w[k].next = k < 7 ? &w[k + 1] : NULL;
			sg[k].lkey = mr->lkey;
			if (k & 1) {
				w[k].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
				w[k].wr.atomic.remote_addr = pm.addr + 16;
				w[k].wr.atomic.rkey = pm.rkey;
				w[k].wr.atomic.compare_add = 1;
				sg[k].addr = (uintptr_t)buf + 128 + 8 * (k / 2);
				sg[k].length = 8;
			} else {
				w[k].opcode = IBV_WR_RDMA_READ;
				w[k].wr.rdma.remote_addr = pm.addr + 8192;
				w[k].wr.rdma.rkey = pm.rkey;
				sg[k].addr = (uintptr_t)buf + 16384 + 4096 * (k / 2);
				sg[k].length = 4096;
			}
		}
		if (ibv_post_send(id->qp, w, &bad)) {
			perror("batch");
			return 2;
		}
		for (k = 0; k < 8; k++) {
			wc = poll1(id->send_cq);
			CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == (uint64_t)k &&
				  wc.opcode == ((k & 1) ? IBV_WC_FETCH_ADD : IBV_WC_RDMA_READ),
			      "batch %d: st %d id %llu op %d", k, wc.status,
			      (unsigned long long)wc.wr_id, wc.opcode);
		}
		for (k = 0; k < 4; k++) {
			CHECK(*(uint64_t *)(buf + 128 + 8 * k) == (uint64_t)k,
			      "batch fetch-add %d orig %llx", k,
			      (unsigned long long)*(uint64_t *)(buf + 128 + 8 * k));
			for (i = 0; i < 4096; i++)
				if (buf[16384 + 4096 * k + i] != pat(2, i)) {
					CHECK(0, "batch read %d byte %d", k, i);
					break;
				}
		}
	}
	memcpy(buf, "done", 4);
	wr.opcode = IBV_WR_SEND;
	sge.addr = (uintptr_t)buf;
	sge.length = 4;
	POST("send");
	wc = poll1(id->send_cq);
	CHECK(wc.status == IBV_WC_SUCCESS, "send cqe %d", wc.status);
	sleep(1);
	/* misaligned: Remote Invalid Request; a bad rkey: Remote Access, as on RoCE */
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	sge.addr = (uintptr_t)buf + 64;
	sge.length = 8;
	wr.wr.atomic.remote_addr = pm.addr + (badkey ? 0 : 4);
	wr.wr.atomic.compare_add = 1;
	wr.wr.atomic.rkey = badkey ? pm.rkey + 1 : pm.rkey;
	POST("atomic error");
	wc = poll1(id->send_cq);
	CHECK(wc.status == (badkey ? IBV_WC_REM_ACCESS_ERR : IBV_WC_REM_INV_REQ_ERR),
	      "%s atomic: %s (%d)", badkey ? "bad rkey" : "misaligned",
	      ibv_wc_status_str(wc.status), wc.status);
	return verdict("client");
}
