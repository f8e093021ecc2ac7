// SPDX-License-Identifier: GPL-2.0
/*
 * The server: answers each request as it comes, RDMAs included, and
 * keeps no state but counters.
 */
#include "rds-zc-bench.h"

static unsigned char *srv_buf;		/* received messages */
static unsigned char *srv_rdma;		/* the server's side of every RDMA */
static uint64_t srv_c[C_COUNT];
static union addr srv_peer[MAX_SLOTS];		/* who asked, by slot */
static unsigned char *srv_mr_buf;		/* the MR of T_MR */
static uint64_t srv_mr_cookie;
static uint64_t srv_epoch;			/* RESETs so far, 16 bits */

/* An RDMA's user_token: the epoch, the request's sequence, its slot. */
static uint64_t token_of(uint64_t seq, uint32_t slot)
{
	return srv_epoch << 48 | (seq & ((1ULL << 40) - 1)) << 8 | (slot & 0xff);
}

static void srv_reply(int fd, const union addr *to, int type,
		      uint64_t seq)
{
	char name[ADDR_STRLEN];
	struct stats_msg s;
	size_t len = sizeof(s.h);

	msg_init(&s.h, type, seq);
	if (type == T_STATS_REPLY) {
		memcpy(s.c, srv_c, sizeof(s.c));
		len = sizeof(s);
	}
	if (send_plain(fd, to, &s, len) < 0)
		fprintf(stderr, "rds-zc-bench server: answer to %s: %s\n",
			addr_str(to, name), errname(errno));
}

/* The RDMA a request asks for, with its ACK in the same sendmsg(). */
static void srv_rdma_op(int fd, const struct bench_msg *req,
			const struct rx *rx)
{
	char name[ADDR_STRLEN];
	struct bench_msg ack;
	struct rds_iovec local = { (uintptr_t)srv_rdma, req->len };
	struct rds_rdma_args args = {
		.cookie = rx->ndest ? rx->cookie : req->cookie,
		.remote_vec = { 0, req->len },
		.local_vec_addr = (uintptr_t)&local,
		.nr_local = 1,
		.flags = RDS_RDMA_NOTIFY_ME |
			 (req->type == T_RDMA_WRITE ? RDS_RDMA_READWRITE :
			  opt.no_fence ? 0 : RDS_RDMA_FENCE),
		.user_token = token_of(req->seq, req->slot),
	};
	int err = 0;

	msg_init(&ack, T_RDMA_ACK, req->seq);
	ack.slot = req->slot;
	ack.len = req->len;
	if (!req->len || req->len > MAX_MSG || req->slot >= MAX_SLOTS) {
		err = EMSGSIZE;
	} else if (send_cm(fd, &rx->from, &ack, sizeof(ack),
			   RDS_CMSG_RDMA_ARGS, &args, sizeof(args)) < 0) {
		err = errno;
		srv_c[C_SEND_ERR]++;
		fprintf(stderr, "rds-zc-bench server: RDMA %s of %u bytes for %s: %s\n",
			req->type == T_RDMA_WRITE ? "WRITE" : "READ", req->len,
			addr_str(&rx->from, name), errname(err));
	} else {
		srv_c[C_RDMA]++;
		srv_peer[req->slot] = rx->from;
	}
	if (err) {
		/* no RDMA: the client still hears of it, without waiting */
		ack.flags = F_ERROR;
		ack.cookie = err;
		send_plain(fd, &rx->from, &ack, sizeof(ack));
	}
}

/* T_MR: the cookie of the server's MR, registered once; or F_ERROR. */
static void srv_mr(int fd, const struct bench_msg *req, const struct rx *rx)
{
	struct rds_get_mr_args args = {
		.vec = { (uintptr_t)srv_mr_buf, MAX_MSG },
		.cookie_addr = (uintptr_t)&srv_mr_cookie,
	};
	struct bench_msg m;

	msg_init(&m, T_MR_REPLY, req->seq);
	if (!srv_mr_cookie &&
	    setsockopt(fd, SOL_RDS, RDS_GET_MR, &args, sizeof(args))) {
		m.flags = F_ERROR;
		m.cookie = errno;
		srv_mr_cookie = 0;
	} else {
		m.cookie = srv_mr_cookie;
	}
	send_plain(fd, &rx->from, &m, sizeof(m));
}

/*
 * A notification.  One of an RDMA sent before the last RESET belongs to a
 * point that is over (it failed, or its notifications came late): it is
 * counted apart.  If an RDMA failed, its ACK will never come (RDS delivers
 * both or neither): tell the client at once, the status in the cookie.
 */
static void srv_note(int fd, const struct rds_rdma_notify *note)
{
	struct bench_msg m;
	union addr to;
	uint32_t slot = note->user_token & 0xff;
	uint64_t seq = (note->user_token >> 8) & ((1ULL << 40) - 1);

	if (note->user_token >> 48 != srv_epoch) {
		srv_c[C_STALE]++;
		return;
	}
	if (note->status == RDS_RDMA_SUCCESS) {
		srv_c[C_NOTE_OK]++;
		return;
	}
	srv_c[C_NOTE_BAD]++;
	srv_c[C_BAD_STATUS] = note->status;
	fprintf(stderr, "rds-zc-bench server: RDMA %llu failed, status %d\n",
		(unsigned long long)seq, note->status);
	if (slot >= MAX_SLOTS || !srv_peer[slot].sa.sa_family)
		return;
	to = srv_peer[slot];
	msg_init(&m, T_RDMA_ACK, seq);
	m.slot = slot;
	m.flags = F_ERROR | F_STATUS;
	m.cookie = note->status;
	send_plain(fd, &to, &m, sizeof(m));
}

int run_server(void)
{
	char name[ADDR_STRLEN];
	union addr stats_to;
	double stats_deadline = 0, last = now();
	uint64_t stats_seq = 0;
	int fd, stats_pending = 0, bad = 0, i, tmo_ms = 0;
	char err[256];

	srv_buf = xmap(MAX_MSG + PAGE_SZ);
	srv_rdma = xmap(MAX_MSG);
	srv_mr_buf = xmap(MAX_MSG);
	fd = rds_open(&opt.self, 4096, opt.bufsize, err, sizeof(err));
	if (fd < 0)
		die("%s", err);
	printf("rds-zc-bench server on %s%s%s%s%s\n", addr_str(&opt.self, name),
	       opt.trans == (int)RDS_TRANS_NONE ? "" : " over ",
	       opt.trans == (int)RDS_TRANS_NONE ? "" : trans_name(opt.trans),
	       opt.once ? ", until the client's BYE" : "",
	       opt.no_fence ? ", READs without RDS_RDMA_FENCE" : "");
	fflush(stdout);

	for (;;) {
		const struct bench_msg *m = (const void *)srv_buf;
		int want_ms = stats_pending ? 100 : 500;
		struct rx rx;
		long n;

		/* short waits while the counters are due, to look at the clock */
		if (want_ms != tmo_ms) {
			struct timeval tv = { 0, want_ms * 1000 };

			setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
			tmo_ms = want_ms;
		}
		n = recv_rx(fd, srv_buf, MAX_MSG + PAGE_SZ, 0, &rx);
		if (n < 0 && !timed_out(errno) && errno != EINTR)
			die("server: recvmsg: %s", errname(errno));
		if (n >= 0)
			last = now();
		for (i = 0; i < rx.nnote; i++) {
			bad |= rx.note[i].status != RDS_RDMA_SUCCESS;
			srv_note(fd, &rx.note[i]);
		}
		if (n > 0 && valid_msg(srv_buf, n)) {
			switch (m->type) {
			case T_PING:
				((struct bench_msg *)srv_buf)->type = T_PONG;
				send_plain(fd, &rx.from, srv_buf, n);
				break;
			case T_SINK:
				srv_c[C_SINK]++;
				srv_c[C_SINK_BYTES] += n;
				break;
			case T_SYNC:
				srv_reply(fd, &rx.from, T_SYNCED, m->seq);
				break;
			case T_RDMA_WRITE:
			case T_RDMA_READ:
				srv_rdma_op(fd, m, &rx);
				break;
			case T_MR:
				srv_mr(fd, m, &rx);
				break;
			case T_RESET:
				memset(srv_c, 0, sizeof(srv_c));
				srv_epoch = (srv_epoch + 1) & 0xffff;
				srv_reply(fd, &rx.from, T_RESET_DONE, m->seq);
				break;
			case T_STATS:
				stats_pending = 1;
				stats_to = rx.from;
				stats_seq = m->seq;
				stats_deadline = now() + 5;
				break;
			case T_BYE:
				srv_reply(fd, &rx.from, T_BYE_ACK, m->seq);
				if (opt.once) {
					close(fd);
					printf("rds-zc-bench server: done%s\n",
					       bad ? ", with failed RDMA notifications" : "");
					return bad;
				}
				break;
			}
		}
		/* the counters once every RDMA sent has its notification */
		if (stats_pending &&
		    (srv_c[C_NOTE_OK] + srv_c[C_NOTE_BAD] >= srv_c[C_RDMA] ||
		     now() > stats_deadline)) {
			srv_reply(fd, &stats_to, T_STATS_REPLY, stats_seq);
			stats_pending = 0;
		}
		if (opt.idle && now() - last > opt.idle) {
			fprintf(stderr, "rds-zc-bench server: no message for %d s, exiting\n",
				opt.idle);
			close(fd);
			return 1;
		}
	}
}
