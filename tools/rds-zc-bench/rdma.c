// SPDX-License-Identifier: GPL-2.0
/*
 * The RDMA cycle: rdma_{write,read}_{map,getmr,reuse}, and the keys
 * --live-keys holds meanwhile.
 */
#include "rds-zc-bench.h"

struct slot {
	unsigned char *buf;
	uint64_t cookie;	/* getmr, reuse: the key; map: what MAP stored */
	uint64_t seq;
	int busy;
};

/*
 * --live-keys: keys registered before the RDMA points and held until
 * they are done, one page each, LIVE_KEYS_PER_FD per socket.
 */
static struct {
	int nfd;
	int *fd;
	unsigned char *mem;
	uint64_t *cookie;
	long n;			/* registered so far */
	char why[256];		/* why the points cannot run */
	int unsupported;
} live;

/* Register opt.live_keys keys: 0, or -1 with live.why set. */
int live_keys_get(void)
{
	long want = opt.live_keys, i;
	double t0 = now();
	int j;

	snprintf(live_field, sizeof(live_field), "live_keys=%ld", want);
	if (!want)
		return 0;
	live.nfd = (want + LIVE_KEYS_PER_FD - 1) / LIVE_KEYS_PER_FD;
	live.fd = calloc(live.nfd, sizeof(*live.fd));
	live.cookie = calloc(want, sizeof(*live.cookie));
	if (!live.fd || !live.cookie)
		die("out of memory");
	live.mem = xmap(want * PAGE_SZ);
	for (j = 0; j < live.nfd; j++)
		live.fd[j] = -1;
	for (j = 0; j < live.nfd; j++) {
		live.fd[j] = rds_open(&opt.self, 4096, 65536, live.why,
				      sizeof(live.why));
		if (live.fd[j] < 0)
			return -1;
	}
	for (i = 0; i < want; i++) {
		if (get_mr(live.fd[i / LIVE_KEYS_PER_FD], live.mem + i * PAGE_SZ,
			   PAGE_SZ, &live.cookie[i])) {
			int e = errno;

			snprintf(live.why, sizeof(live.why),
				 "live key %ld of %ld: RDS_GET_MR: %s%s", i + 1,
				 want, errname(e),
				 e == EAGAIN ? " (MR pool full: fmr_pool_size)" : "");
			live.unsupported = !i && unsupported_err(e);
			return -1;
		}
		live.n++;
	}
	printf("# live keys: %ld registered (one page each, %d socket(s)) in %.2f s\n",
	       want, live.nfd, now() - t0);
	fflush(stdout);
	return 0;
}

/* Release the live keys (RDS_FREE_MR) and close their sockets. */
void live_keys_put(void)
{
	double t0 = now();
	long i, bad = 0;
	int j;

	live_field[0] = 0;
	for (i = 0; i < live.n; i++)
		if (free_mr(live.fd[i / LIVE_KEYS_PER_FD], live.cookie[i], 0))
			bad++;
	for (j = 0; j < live.nfd; j++)
		if (live.fd[j] >= 0)
			close(live.fd[j]);
	if (live.n)
		printf("# live keys: %ld released (RDS_FREE_MR) in %.2f s%s\n",
		       live.n, now() - t0, bad ? ", some FAILED" : "");
	if (bad) {
		fprintf(stderr, "rds-zc-bench: RDS_FREE_MR of %ld live key(s) failed\n",
			bad);
		failures++;
	}
	if (live.mem)
		munmap(live.mem, opt.live_keys * PAGE_SZ);
	free(live.fd);
	free(live.cookie);
	memset(&live, 0, sizeof(live));
}

struct rdma_point {
	int write;
	int key;		/* KEY_* */
	unsigned int size;
	int inflight;
	int fd;
	struct slot slots[MAX_SLOTS];
	uint64_t seq;
	long issued;
	char why[256];
	int unsupported;
};

/* Send the request of slot i: 0, or -1 with p->why set. */
static int rdma_issue(struct rdma_point *p, int i)
{
	struct slot *s = &p->slots[i];
	struct rds_get_mr_args map = {
		.vec = { (uintptr_t)s->buf, p->size },
		.cookie_addr = (uintptr_t)&s->cookie,
		.flags = RDS_RDMA_USE_ONCE,
	};
	struct bench_msg m;
	long ret;

	msg_init(&m, p->write ? T_RDMA_WRITE : T_RDMA_READ, ++p->seq);
	m.slot = i;
	m.len = p->size;
	if (p->key == KEY_GETMR) {
		if (get_mr(p->fd, s->buf, p->size, &s->cookie)) {
			int e = errno;

			snprintf(p->why, sizeof(p->why), "RDS_GET_MR: %s",
				 errname(e));
			p->unsupported = !p->issued && unsupported_err(e);
			return -1;
		}
	}
	if (p->key != KEY_MAP) {
		m.cookie = s->cookie;
		ret = send_plain(p->fd, &opt.server, &m, sizeof(m));
	} else {
		ret = send_cm(p->fd, &opt.server, &m, sizeof(m),
			      RDS_CMSG_RDMA_MAP, &map, sizeof(map));
	}
	if (ret < 0) {
		int e = errno;

		snprintf(p->why, sizeof(p->why), "sendmsg of the request%s: %s",
			 p->key == KEY_MAP ? " with RDS_CMSG_RDMA_MAP" : "",
			 errname(e));
		p->unsupported = !p->issued && p->key == KEY_MAP &&
				 unsupported_err(e);
		if (p->key == KEY_GETMR)
			free_mr(p->fd, s->cookie, 0);
		return -1;
	}
	s->seq = m.seq;
	s->busy = 1;
	p->issued++;
	return 0;
}

/* Wait for one ACK and release its slot: the slot, or -1 with p->why. */
static int rdma_complete(struct rdma_point *p)
{
	struct bench_msg m;
	struct slot *s;
	struct rx rx;
	long n;

	for (;;) {
		n = recv_rx(p->fd, &m, sizeof(m), 0, &rx);
		if (n < 0 && timed_out(errno)) {
			snprintf(p->why, sizeof(p->why),
				 "no ACK from the server in %d s", opt.timeout);
			return -1;
		}
		if (n < 0) {
			snprintf(p->why, sizeof(p->why), "recvmsg: %s",
				 errname(errno));
			return -1;
		}
		if (valid_msg(&m, n) && m.type == T_RDMA_ACK &&
		    m.slot < (unsigned int)p->inflight &&
		    p->slots[m.slot].busy && p->slots[m.slot].seq == m.seq)
			break;
	}
	s = &p->slots[m.slot];
	s->busy = 0;
	if (m.flags & F_STATUS) {
		snprintf(p->why, sizeof(p->why),
			 "the RDMA of operation %llu failed: status %s",
			 (unsigned long long)m.seq, status_name((int)m.cookie));
		return -1;
	}
	if (m.flags & F_ERROR) {
		snprintf(p->why, sizeof(p->why), "the server's RDMA sendmsg failed: %s",
			 errname((int)m.cookie));
		return -1;
	}
	if (p->key == KEY_GETMR && free_mr(p->fd, s->cookie, 0)) {
		snprintf(p->why, sizeof(p->why), "RDS_FREE_MR: %s", errname(errno));
		return -1;
	}
	return m.slot;
}

static void rdma_point(int write, int key, unsigned int size, int inflight)
{
	struct rdma_point *p = calloc(1, sizeof(*p));
	double t0, t1, secs, deadline, mibs;
	char name[64], extra[256], human[256];
	size_t maplen = page_round(size);
	long ops = 0, started, goal;
	int i, k, busy, ok = 0, nreg = 0;
	struct stats_msg st;

	if (!p)
		die("out of memory");
	snprintf(name, sizeof(name), "rdma_%s_%s", write ? "write" : "read",
		 key_names[__builtin_ctz(key)]);
	p->write = write;
	p->key = key;
	p->size = size;
	p->inflight = inflight;
	if (live.why[0]) {
		snprintf(p->why, sizeof(p->why), "%s", live.why);
		p->unsupported = live.unsupported;
		p->fd = -1;
		goto out;
	}
	p->fd = rds_open(&opt.self, 4096, 4 << 20, p->why, sizeof(p->why));
	if (p->fd < 0)
		goto out;
	for (i = 0; i < inflight; i++)
		p->slots[i].buf = xmap(maplen);
	if (key == KEY_REUSE) {
		for (i = 0; i < inflight; i++, nreg++) {
			if (get_mr(p->fd, p->slots[i].buf, size,
				   &p->slots[i].cookie)) {
				int e = errno;

				snprintf(p->why, sizeof(p->why), "RDS_GET_MR: %s",
					 errname(e));
				p->unsupported = !i && unsupported_err(e);
				goto out;
			}
		}
	}
	if (ask(p->fd, T_RESET, T_RESET_DONE, ++p->seq, NULL, 0)) {
		snprintf(p->why, sizeof(p->why), "no answer to RESET: %s",
			 errname(errno));
		goto out;
	}

	/*
	 * Fill every slot.  The clock starts at the first ACK, with the
	 * pipeline full (that operation, the warm-up, is not counted), and
	 * stops when the last operation in flight is back: the count is of
	 * the ACKs in between.
	 */
	for (busy = 0; busy < inflight; busy++)
		if (rdma_issue(p, busy))
			goto out;
	k = rdma_complete(p);
	if (k < 0)
		goto out;
	goal = opt.max_ops ? opt.max_ops : LONG_MAX;
	t0 = now();
	deadline = t0 + opt.secs;
	if (rdma_issue(p, k))
		goto out;
	started = 1;
	while (busy) {
		k = rdma_complete(p);
		if (k < 0)
			goto out;
		ops++;
		if (now() < deadline && started < goal) {
			if (rdma_issue(p, k))
				goto out;
			started++;
		} else {
			busy--;
		}
	}
	t1 = now();

	if (ask(p->fd, T_STATS, T_STATS_REPLY, ++p->seq, &st, sizeof(st))) {
		snprintf(p->why, sizeof(p->why), "no answer to STATS: %s",
			 errname(errno));
		goto out;
	}
	if (st.c[C_RDMA] != (uint64_t)p->issued ||
	    st.c[C_NOTE_OK] != (uint64_t)p->issued || st.c[C_NOTE_BAD]) {
		snprintf(p->why, sizeof(p->why),
			 "%ld RDMAs asked, the server sent %llu and had %llu notifications of success, %llu of failure (last status %llu)",
			 p->issued, (unsigned long long)st.c[C_RDMA],
			 (unsigned long long)st.c[C_NOTE_OK],
			 (unsigned long long)st.c[C_NOTE_BAD],
			 (unsigned long long)st.c[C_BAD_STATUS]);
		goto out;
	}

	secs = t1 - t0;
	mibs = ops * (double)size / secs / (1 << 20);
	snprintf(extra, sizeof(extra),
		 "ops=%ld secs=%.3f ops_s=%.1f lat_us=%.1f notes_ok=%llu",
		 ops, secs, ops / secs, secs * inflight / ops * 1e6,
		 (unsigned long long)st.c[C_NOTE_OK]);
	snprintf(human, sizeof(human),
		 "RDMA %s, key by %s, %s, %d in flight: %.2f MiB/s, %.1f ops/s, %.2f ms per operation (%ld ops in %.2f s, every notification SUCCESS)",
		 write ? "WRITE" : "READ", key_names[__builtin_ctz(key)],
		 size_str(size), inflight, mibs, ops / secs,
		 secs * inflight / ops * 1e3, ops, secs);
	result(name, size, inflight, mibs, "MiB/s", extra, human);
	ok = 1;
out:
	if (!ok)
		no_result(name, size, inflight, "MiB/s", p->unsupported, p->why);
	if (p->fd >= 0) {
		for (i = 0; i < nreg; i++)
			free_mr(p->fd, p->slots[i].cookie, RDS_RDMA_INVALIDATE);
		close(p->fd);
	}
	/*
	 * After a failure the server may still be working on a buffer: leave
	 * the memory mapped rather than let an RDMA land in freed pages.
	 */
	if (ok)
		for (i = 0; i < inflight; i++)
			munmap(p->slots[i].buf, maplen);
	free(p);
}

/* Every size and depth of one direction and key. */
void rdma_points(int write, int key)
{
	int i, j;

	for (i = 0; i < opt.sizes.n; i++)
		for (j = 0; j < opt.inflight.n; j++)
			rdma_point(write, key, opt.sizes.v[i], opt.inflight.v[j]);
}
