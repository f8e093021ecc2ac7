// SPDX-License-Identifier: GPL-2.0
/*
 * verbs-floor - the raw-verbs floor of "make profile": the frames of an
 * RDS cycle, posted with libibverbs and nothing else, so that the
 * instructions a guest spends on them tell what any RDMA consumer must
 * spend (rds_zc-bench.rst, "The raw-verbs floor").
 *
 *   verbs-floor server -a ADDR [-p PORT] [--timeout SECS]
 *   verbs-floor client -a ADDR -s SERVER [-p PORT] -n OPS
 *		--cycle rtt|write|read [--size BYTES] [--inflight N]
 *		[--timeout SECS]
 *
 * One RC connection through rdma_cm; the client names a registered
 * buffer of --size bytes in the connect request's private data.  A
 * cycle, for each of the client's OPS operations:
 *   rtt    client SEND 64 B, server SEND 64 B back (the 64 B datagram
 *          round trip of RDS without its header and ACKs);
 *   write  client SEND 64 B (the request), server RDMA WRITE --size
 *          bytes into the client's buffer and SEND 64 B (the ACK
 *          message), chained in one ibv_post_send, only the SEND
 *          signaled: what an RDS MAP cycle puts on the wire;
 *   read   the same with an RDMA READ and a fenced SEND.
 * --inflight N keeps N requests outstanding.  Completions are waited for
 * on a completion channel (no busy polling: polling would count the
 * instructions of a spinning CPU).  The server serves one client and
 * exits when it says goodbye.  Both give up after --timeout seconds
 * (default 600).  Exit status 0 when every operation completed.
 */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define MSG_BYTES	64
#define RING		128	/* receive buffers and send queue */
#define MAX_SIZE	(1 << 20)
#define OP_REQ		1
#define OP_BYE		2

struct remote_buf {
	uint64_t addr;
	uint32_t rkey;
	uint32_t size;
	uint32_t cycle;		/* 0 rtt, 1 write, 2 read */
} __attribute__((packed));

struct ctx {
	struct rdma_event_channel *ech;
	struct rdma_cm_id *listen_id, *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cch;
	struct ibv_cq *cq;
	struct ibv_mr *msg_mr, *buf_mr;
	unsigned char *msgs;	/* RING receive slots, then one send slot */
	unsigned char *buf;
	struct remote_buf peer;
	unsigned int unsignaled;
};

static void die(const char *what)
{
	fprintf(stderr, "verbs-floor: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void cm_expect(struct ctx *c, enum rdma_cm_event_type type,
		      struct rdma_cm_event **out)
{
	struct rdma_cm_event *ev;

	if (rdma_get_cm_event(c->ech, &ev))
		die("rdma_get_cm_event");
	if (ev->event != type) {
		fprintf(stderr, "verbs-floor: %s, expected %s\n",
			rdma_event_str(ev->event), rdma_event_str(type));
		exit(1);
	}
	if (out)
		*out = ev;
	else
		rdma_ack_cm_event(ev);
}

static void post_recv(struct ctx *c, unsigned int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(c->msgs + slot * MSG_BYTES),
		.length = MSG_BYTES, .lkey = c->msg_mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (ibv_post_recv(c->id->qp, &wr, &bad))
		die("ibv_post_recv");
}

/* Set up PD, CQ, QP and buffers on c->id. */
static void setup(struct ctx *c, size_t bufsize)
{
	struct ibv_qp_init_attr qa = {};
	unsigned int i;

	c->pd = ibv_alloc_pd(c->id->verbs);
	c->cch = ibv_create_comp_channel(c->id->verbs);
	if (!c->pd || !c->cch)
		die("ibv_alloc_pd/ibv_create_comp_channel");
	c->cq = ibv_create_cq(c->id->verbs, 4 * RING, NULL, c->cch, 0);
	if (!c->cq || ibv_req_notify_cq(c->cq, 0))
		die("ibv_create_cq");
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 2 * RING;
	qa.cap.max_recv_wr = RING;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(c->id, c->pd, &qa))
		die("rdma_create_qp");
	c->msgs = calloc(RING + 1, MSG_BYTES);
	c->buf = aligned_alloc(4096, bufsize);
	if (!c->msgs || !c->buf)
		die("malloc");
	memset(c->buf, 0x5a, bufsize);
	c->msg_mr = ibv_reg_mr(c->pd, c->msgs, (RING + 1) * MSG_BYTES,
			       IBV_ACCESS_LOCAL_WRITE);
	c->buf_mr = ibv_reg_mr(c->pd, c->buf, bufsize,
			       IBV_ACCESS_LOCAL_WRITE |
			       IBV_ACCESS_REMOTE_WRITE |
			       IBV_ACCESS_REMOTE_READ);
	if (!c->msg_mr || !c->buf_mr)
		die("ibv_reg_mr");
	for (i = 0; i < RING; i++)
		post_recv(c, i);
}

/* Wait for completions; return how many receives came, reposting them. */
static int reap(struct ctx *c, unsigned char *first_op)
{
	struct ibv_wc wc[16];
	struct ibv_cq *cq;
	void *cctx;
	int n, i, recvs = 0;

	for (;;) {
		n = ibv_poll_cq(c->cq, 16, wc);
		if (n < 0)
			die("ibv_poll_cq");
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "verbs-floor: completion %s\n",
					ibv_wc_status_str(wc[i].status));
				exit(1);
			}
			if (wc[i].opcode != IBV_WC_RECV)
				continue;
			if (!recvs && first_op)
				*first_op = c->msgs[wc[i].wr_id * MSG_BYTES];
			recvs++;
			post_recv(c, wc[i].wr_id);
		}
		if (n == 16)
			continue;
		if (recvs)
			return recvs;
		if (ibv_get_cq_event(c->cch, &cq, &cctx))
			die("ibv_get_cq_event");
		ibv_ack_cq_events(cq, 1);
		if (ibv_req_notify_cq(c->cq, 0))
			die("ibv_req_notify_cq");
	}
}

/* Post a 64 B SEND of @op, after an RDMA of @size bytes if @rdma. */
static void post_send(struct ctx *c, unsigned char op, int rdma,
		      uint32_t size)
{
	unsigned char *m = c->msgs + RING * MSG_BYTES;
	struct ibv_sge msge = { .addr = (uintptr_t)m, .length = MSG_BYTES,
				.lkey = c->msg_mr->lkey };
	struct ibv_sge bsge = { .addr = (uintptr_t)c->buf, .length = size,
				.lkey = c->buf_mr->lkey };
	struct ibv_send_wr wr[2] = {}, *bad;
	struct ibv_send_wr *first = &wr[1];

	m[0] = op;
	wr[1].opcode = IBV_WR_SEND;
	wr[1].sg_list = &msge;
	wr[1].num_sge = 1;
	/* one signaled completion in 16 keeps the send queue reaped */
	if (++c->unsignaled >= 16) {
		wr[1].send_flags = IBV_SEND_SIGNALED;
		c->unsignaled = 0;
	}
	if (rdma) {
		wr[0].opcode = c->peer.cycle == 2 ? IBV_WR_RDMA_READ :
						    IBV_WR_RDMA_WRITE;
		wr[0].sg_list = &bsge;
		wr[0].num_sge = 1;
		wr[0].wr.rdma.remote_addr = c->peer.addr;
		wr[0].wr.rdma.rkey = c->peer.rkey;
		wr[0].next = &wr[1];
		if (c->peer.cycle == 2)
			wr[1].send_flags |= IBV_SEND_FENCE;
		first = &wr[0];
	}
	if (ibv_post_send(c->id->qp, first, &bad))
		die("ibv_post_send");
}

static struct rdma_addrinfo *resolve(const char *host, const char *port,
				     int passive)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP },
			     *res;

	if (passive)
		hints.ai_flags = RAI_PASSIVE;
	if (rdma_getaddrinfo(host, port, &hints, &res))
		die(host);
	return res;
}

static int server(struct ctx *c, const char *addr, const char *port)
{
	struct rdma_addrinfo *ai = resolve(addr, port, 1);
	struct rdma_conn_param cp = {};
	struct rdma_cm_event *ev;
	unsigned char op = 0;
	int n;

	if (rdma_create_id(c->ech, &c->listen_id, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(c->listen_id, ai->ai_src_addr) ||
	    rdma_listen(c->listen_id, 1))
		die("listen");
	printf("verbs-floor %s on %s port %s\n", "server", addr, port);
	fflush(stdout);
	cm_expect(c, RDMA_CM_EVENT_CONNECT_REQUEST, &ev);
	c->id = ev->id;
	if (ev->param.conn.private_data_len < sizeof(c->peer)) {
		fprintf(stderr, "verbs-floor: short connect request\n");
		return 1;
	}
	memcpy(&c->peer, ev->param.conn.private_data, sizeof(c->peer));
	rdma_ack_cm_event(ev);
	if (c->peer.size > MAX_SIZE || c->peer.cycle > 2)
		return 1;
	setup(c, c->peer.size ? c->peer.size : 64);
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	/* a frame the link lost is sent again, as by the client's QP */
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	if (rdma_accept(c->id, &cp))
		die("rdma_accept");
	cm_expect(c, RDMA_CM_EVENT_ESTABLISHED, NULL);
	for (;;) {
		n = reap(c, &op);
		if (op == OP_BYE)
			break;
		while (n--)
			post_send(c, OP_REQ, c->peer.cycle != 0, c->peer.size);
	}
	rdma_disconnect(c->id);
	printf("verbs-floor %s: done\n", "server");
	return 0;
}

static int client(struct ctx *c, const char *addr, const char *saddr,
		  const char *port, long ops, unsigned int cycle,
		  unsigned int size, unsigned int inflight)
{
	struct rdma_addrinfo *src = resolve(addr, NULL, 1);
	struct rdma_addrinfo *dst = resolve(saddr, port, 0);
	struct rdma_conn_param cp = {};
	long sent = 0, done = 0;

	if (rdma_create_id(c->ech, &c->id, NULL, RDMA_PS_TCP) ||
	    rdma_resolve_addr(c->id, src->ai_src_addr, dst->ai_dst_addr, 5000))
		die("rdma_resolve_addr");
	cm_expect(c, RDMA_CM_EVENT_ADDR_RESOLVED, NULL);
	if (rdma_resolve_route(c->id, 5000))
		die("rdma_resolve_route");
	cm_expect(c, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL);
	setup(c, size ? size : 64);
	c->peer.addr = (uintptr_t)c->buf;
	c->peer.rkey = c->buf_mr->rkey;
	c->peer.size = size;
	c->peer.cycle = cycle;
	cp.private_data = &c->peer;
	cp.private_data_len = sizeof(c->peer);
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	if (rdma_connect(c->id, &cp))
		die("rdma_connect");
	cm_expect(c, RDMA_CM_EVENT_ESTABLISHED, NULL);
	while (sent < ops && sent < inflight) {
		post_send(c, OP_REQ, 0, 0);
		sent++;
	}
	while (done < ops) {
		int n = reap(c, NULL);

		done += n;
		while (n-- && sent < ops) {
			post_send(c, OP_REQ, 0, 0);
			sent++;
		}
	}
	post_send(c, OP_BYE, 0, 0);
	cm_expect(c, RDMA_CM_EVENT_DISCONNECTED, NULL);
	printf("verbs-floor %s: %ld operations\n", "client", done);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "addr", 1, NULL, 'a' }, { "server", 1, NULL, 's' },
		{ "port", 1, NULL, 'p' }, { "ops", 1, NULL, 'n' },
		{ "cycle", 1, NULL, 'c' }, { "size", 1, NULL, 'z' },
		{ "inflight", 1, NULL, 'i' }, { "timeout", 1, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	const char *addr = NULL, *saddr = NULL, *port = "18790";
	unsigned int cycle = 0, size = 0, inflight = 1, timeout = 600;
	struct ctx c = {};
	long ops = 1000;
	int o;

	if (argc < 2)
		goto usage;
	while ((o = getopt_long(argc - 1, argv + 1, "a:s:p:n:", lopts,
				NULL)) != -1) {
		switch (o) {
		case 'a':
			addr = optarg;
			break;
		case 's':
			saddr = optarg;
			break;
		case 'p':
			port = optarg;
			break;
		case 'n':
			ops = atol(optarg);
			break;
		case 'z':
			size = atoi(optarg);
			break;
		case 'i':
			inflight = atoi(optarg);
			break;
		case 't':
			timeout = atoi(optarg);
			break;
		case 'c':
			cycle = !strcmp(optarg, "write") ? 1 :
				!strcmp(optarg, "read") ? 2 :
				!strcmp(optarg, "rtt") ? 0 : 99;
			break;
		default:
			goto usage;
		}
	}
	if (!addr || cycle > 2 || size > MAX_SIZE || ops < 1 ||
	    inflight < 1 || inflight > RING / 2 || (cycle && !size))
		goto usage;
	/* SIGALRM ends a run that lost its peer: never a hung bench */
	alarm(timeout);
	c.ech = rdma_create_event_channel();
	if (!c.ech)
		die("rdma_create_event_channel");
	if (!strcmp(argv[1], "server"))
		return server(&c, addr, port);
	if (!strcmp(argv[1], "client") && saddr)
		return client(&c, addr, saddr, port, ops, cycle, size,
			      inflight);
usage:
	fprintf(stderr, "usage: verbs-floor server -a ADDR [-p PORT] [--timeout SECS]\n"
		"       verbs-floor client -a ADDR -s SERVER [-p PORT] -n OPS --cycle rtt|write|read [--size BYTES] [--inflight N] [--timeout SECS]\n");
	return 2;
}
