// SPDX-License-Identifier: GPL-2.0
/*
 * Plain datagrams: dgram_rtt_p50, dgram_rtt_p99, dgram_rate, dgram_tput,
 * and the streams again with MSG_ZEROCOPY: dgram_rate_zc, dgram_tput_zc.
 */
#include "rds-zc-bench.h"

void dgram_rtt(void)
{
	const unsigned int size = 64;
	size_t cap = 1 << 20, n = 0;
	double *rtt = malloc(cap * sizeof(*rtt));
	double deadline = 0, t, p50, p99;
	char why[256], extra[128], human[256];
	unsigned char buf[256];
	struct bench_msg *m = (void *)buf;
	uint64_t seq = 0;
	int fd, i;

	if (!rtt)
		die("out of memory");
	fd = rds_open(&opt.self, size, 1 << 20, why, sizeof(why));
	if (fd < 0)
		goto fail;
	for (i = -20; ; i++) {
		if (!i)
			deadline = now() + opt.secs;
		else if (i > 0 && (now() >= deadline || n == cap ||
				   (opt.max_ops && (long)n >= opt.max_ops)))
			break;
		memset(buf, 0, size);
		msg_init(m, T_PING, ++seq);
		t = now();
		if (send_plain(fd, &opt.server, buf, size) < 0) {
			snprintf(why, sizeof(why), "sendmsg: %s", errname(errno));
			goto fail;
		}
		if (wait_answer(fd, buf, sizeof(buf), T_PONG, seq,
				opt.timeout) < 0) {
			snprintf(why, sizeof(why), timed_out(errno) ?
				 "no answer in time" : "recvmsg failed");
			goto fail;
		}
		if (i >= 0)
			rtt[n++] = (now() - t) * 1e6;
	}
	close(fd);
	qsort(rtt, n, sizeof(*rtt), cmp_double);
	p50 = rtt[(n - 1) / 2];
	p99 = rtt[(n * 99 + 99) / 100 - 1];
	snprintf(extra, sizeof(extra), "samples=%zu", n);
	snprintf(human, sizeof(human),
		 "round trip of %s datagrams, median %.1f us", size_str(size), p50);
	result("dgram_rtt_p50", size, 1, p50, "us", extra, human);
	snprintf(human, sizeof(human),
		 "round trip of %s datagrams, 99th percentile %.1f us (%zu samples)",
		 size_str(size), p99, n);
	result("dgram_rtt_p99", size, 1, p99, "us", extra, human);
	free(rtt);
	return;
fail:
	if (fd >= 0)
		close(fd);
	no_result("dgram_rtt_p50", size, 1, "us", 0, why);
	no_result("dgram_rtt_p99", size, 1, "us", 0, why);
	free(rtt);
}

struct snd_thread {
	pthread_t tid;
	pthread_barrier_t *start;
	const double *t0;
	int fd;
	unsigned int size;
	int zc;			/* MSG_ZEROCOPY from ring[] */
	unsigned char *buf;
	unsigned char *ring[ZC_RING];
	uint32_t pending[ZC_RING];	/* cookie + 1 sent from a buffer, 0: free */
	long completed;		/* cookies that came back */
	int unsupported;	/* the kernel refused MSG_ZEROCOPY */
	long msgs;
	double t_end;
	char why[256];
};

/*
 * Read the zero-copy completions queued on t->fd, waiting up to --timeout
 * for one when @wait: 0, or -1 with t->why set.  Each cookie must be one
 * in flight; its buffer is free again.  No datagram comes to a sender
 * while it streams: one that does is an error.
 */
static int zc_reap(struct snd_thread *t, int wait)
{
	union {
		char buf[4 * CMSG_SPACE(sizeof(struct rds_zcopy_cookies))];
		struct cmsghdr align;
	} ctl;
	struct rds_zcopy_cookies zc;
	struct pollfd pfd = { .fd = t->fd, .events = POLLIN };
	struct msghdr msg;
	struct cmsghdr *c;
	unsigned char b[64];
	struct iovec iov;
	uint32_t i, slot;
	long n;
	int got = 0;

	for (;;) {
		if (wait && !got) {
			n = poll(&pfd, 1, opt.timeout * 1000);
			if (n <= 0) {
				snprintf(t->why, sizeof(t->why),
					 n ? "poll for completions: %s" :
					 "no zero-copy completion for the whole timeout",
					 errname(errno));
				return -1;
			}
		}
		memset(&msg, 0, sizeof(msg));
		iov.iov_base = b;
		iov.iov_len = sizeof(b);
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = ctl.buf;
		msg.msg_controllen = sizeof(ctl.buf);
		n = recvmsg(t->fd, &msg, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (!wait || got)
				return 0;
			continue;
		}
		if (n < 0) {
			snprintf(t->why, sizeof(t->why), "recvmsg for completions: %s",
				 errname(errno));
			return -1;
		}
		if (n > 0) {
			snprintf(t->why, sizeof(t->why),
				 "a datagram came to a sending socket");
			return -1;
		}
		for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
			if (c->cmsg_level != SOL_RDS ||
			    c->cmsg_type != RDS_CMSG_ZCOPY_COMPLETION)
				continue;
			if (c->cmsg_len < CMSG_LEN(sizeof(zc))) {
				snprintf(t->why, sizeof(t->why),
					 "short RDS_CMSG_ZCOPY_COMPLETION");
				return -1;
			}
			memcpy(&zc, CMSG_DATA(c), sizeof(zc));
			if (zc.num > RDS_MAX_ZCOOKIES) {
				snprintf(t->why, sizeof(t->why),
					 "a completion of %u cookies", zc.num);
				return -1;
			}
			for (i = 0; i < zc.num; i++) {
				slot = zc.cookies[i] % ZC_RING;
				if (t->pending[slot] != zc.cookies[i] + 1) {
					snprintf(t->why, sizeof(t->why),
						 "completion of cookie %u, not in flight",
						 zc.cookies[i]);
					return -1;
				}
				t->pending[slot] = 0;
				t->completed++;
				got = 1;
			}
		}
		/* an empty message without a completion: nothing more queued */
		if (!got && !wait)
			return 0;
	}
}

/* Send the message of buffer @slot with MSG_ZEROCOPY and cookie @cookie. */
static long zc_send(struct snd_thread *t, int slot, uint32_t cookie)
{
	union {
		char buf[CMSG_SPACE(sizeof(uint32_t))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { t->ring[slot], t->size };
	struct msghdr msg = {
		.msg_name = (void *)&opt.server,
		.msg_namelen = addr_len(&opt.server),
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *c;

	memset(&ctl, 0, sizeof(ctl));
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_RDS;
	c->cmsg_type = RDS_CMSG_ZCOPY_COOKIE;
	c->cmsg_len = CMSG_LEN(sizeof(cookie));
	memcpy(CMSG_DATA(c), &cookie, sizeof(cookie));
	return sendmsg(t->fd, &msg, MSG_ZEROCOPY);
}

/*
 * The zero-copy stream: message K goes from buffer K % ZC_RING with cookie
 * K, and a buffer is written again only once its cookie came back.  All
 * completions are in before the SYNC, so the time includes the wait for
 * the last ones.
 */
static void zc_stream(struct snd_thread *t, double deadline)
{
	struct bench_msg *m;
	int slot, i;

	while (now() < deadline && (!opt.max_ops || t->msgs < opt.max_ops)) {
		slot = t->msgs % ZC_RING;
		while (t->pending[slot])
			if (zc_reap(t, 1))
				return;
		m = (void *)t->ring[slot];
		msg_init(m, T_SINK, t->msgs);
		if (zc_send(t, slot, (uint32_t)t->msgs) < 0) {
			t->unsupported = !t->msgs && unsupported_err(errno);
			snprintf(t->why, sizeof(t->why), timed_out(errno) ?
				 "sendmsg blocked for the whole timeout" :
				 "sendmsg(MSG_ZEROCOPY) failed: %s",
				 errname(errno));
			return;
		}
		t->pending[slot] = (uint32_t)t->msgs + 1;
		t->msgs++;
		if (zc_reap(t, 0))
			return;
	}
	for (i = 0; i < ZC_RING; i++)
		while (t->pending[i])
			if (zc_reap(t, 1))
				return;
}

static void *snd_worker(void *arg)
{
	struct snd_thread *t = arg;
	struct bench_msg *m = (void *)t->buf;
	double deadline;

	pthread_barrier_wait(t->start);
	deadline = *t->t0 + opt.secs;
	if (t->zc) {
		zc_stream(t, deadline);
		if (t->why[0])
			return NULL;
		goto sync;
	}
	msg_init(m, T_SINK, 0);
	while (now() < deadline && (!opt.max_ops || t->msgs < opt.max_ops)) {
		m->seq = t->msgs;
		if (send_plain(t->fd, &opt.server, t->buf, t->size) < 0) {
			snprintf(t->why, sizeof(t->why), timed_out(errno) ?
				 "sendmsg blocked for the whole timeout" :
				 "sendmsg failed: %s", errname(errno));
			return NULL;
		}
		t->msgs++;
	}
sync:
	/* RDS keeps each socket's messages in order: this answer is last */
	if (ask(t->fd, T_SYNC, T_SYNCED, UINT64_MAX, NULL, 0))
		snprintf(t->why, sizeof(t->why), "no answer to SYNC: %s",
			 errname(errno));
	t->t_end = now();
	return NULL;
}

/*
 * Datagrams of @size from @nthreads senders; with @zc, sent with
 * MSG_ZEROCOPY from a ring of ZC_RING buffers per sender (dgram_rate_zc,
 * dgram_tput_zc; "unsupported" when the kernel refuses it).
 */
static const char *stream_name(unsigned int size, int zc)
{
	return size < 65536 ? (zc ? "dgram_rate_zc" : "dgram_rate") :
			      (zc ? "dgram_tput_zc" : "dgram_tput");
}

static const char *stream_unit(unsigned int size)
{
	return size < 65536 ? "msg/s" : "MiB/s";
}

void dgram_stream(unsigned int size, int nthreads, int zc)
{
	const char *name = stream_name(size, zc);
	const char *unit = stream_unit(size);
	struct snd_thread *t = calloc(nthreads, sizeof(*t));
	double t0 = 0, t1 = 0, secs, rate, mibs;
	char why[256] = "", extra[160], human[256];
	pthread_barrier_t start;
	int ctl, i, j, one = 1, unsup = 0;
	struct stats_msg st;
	long msgs = 0;

	if (!t)
		die("out of memory");
	for (i = 0; i < nthreads; i++)
		t[i].fd = -1;
	ctl = rds_open(&opt.self, 4096, 1 << 20, why, sizeof(why));
	if (ctl < 0)
		goto fail;
	if (ask(ctl, T_RESET, T_RESET_DONE, 1, NULL, 0)) {
		snprintf(why, sizeof(why), "no answer to RESET: %s",
			 errname(errno));
		goto fail;
	}
	for (i = 0; i < nthreads; i++) {
		t[i].fd = rds_open(&opt.self, size, 1 << 20, why, sizeof(why));
		if (t[i].fd < 0)
			goto fail;
		t[i].size = size;
		t[i].t0 = &t0;
		t[i].zc = zc;
		if (!zc) {
			t[i].buf = xmap(size);
			continue;
		}
		for (j = 0; j < ZC_RING; j++)
			t[i].ring[j] = xmap(size);
		if (setsockopt(t[i].fd, SOL_SOCKET, SO_ZEROCOPY, &one,
			       sizeof(one))) {
			unsup = unsupported_err(errno);
			snprintf(why, sizeof(why), "SO_ZEROCOPY: %s",
				 errname(errno));
			goto fail;
		}
	}
	pthread_barrier_init(&start, NULL, nthreads + 1);
	for (i = 0; i < nthreads; i++) {
		t[i].start = &start;
		if (pthread_create(&t[i].tid, NULL, snd_worker, &t[i]))
			die("pthread_create failed");
	}
	t0 = now();
	pthread_barrier_wait(&start);
	for (i = 0; i < nthreads; i++) {
		pthread_join(t[i].tid, NULL);
		if (t[i].why[0] && !why[0]) {
			snprintf(why, sizeof(why), "%s", t[i].why);
			unsup = t[i].unsupported;
		}
		msgs += t[i].msgs;
		if (t[i].t_end > t1)
			t1 = t[i].t_end;
	}
	pthread_barrier_destroy(&start);
	if (why[0])
		goto fail;
	if (ask(ctl, T_STATS, T_STATS_REPLY, 2, &st, sizeof(st))) {
		snprintf(why, sizeof(why), "no answer to STATS: %s",
			 errname(errno));
		goto fail;
	}
	if (st.c[C_SINK] != (uint64_t)msgs) {
		snprintf(why, sizeof(why), "%ld datagrams sent, %llu received",
			 msgs, (unsigned long long)st.c[C_SINK]);
		goto fail;
	}
	secs = t1 - t0;
	rate = msgs / secs;
	mibs = rate * size / (1 << 20);
	snprintf(extra, sizeof(extra), "msgs=%ld secs=%.3f msg_s=%.1f mib_s=%.3f%s",
		 msgs, secs, rate, mibs, zc ? " zc=1" : "");
	snprintf(human, sizeof(human),
		 "datagrams of %s, %d sender(s)%s: %.0f msg/s, %.2f MiB/s (%ld in %.2f s, all received)",
		 size_str(size), nthreads,
		 zc ? ", MSG_ZEROCOPY, every completion back" : "", rate,
		 mibs, msgs, secs);
	result(name, size, nthreads, size < 65536 ? rate : mibs, unit, extra,
	       human);
	goto out;
fail:
	no_result(name, size, nthreads, unit, unsup, why);
out:
	for (i = 0; i < nthreads; i++) {
		if (t[i].fd >= 0)
			close(t[i].fd);
		if (t[i].buf)
			munmap(t[i].buf, size);
		for (j = 0; j < ZC_RING; j++)
			if (t[i].ring[j])
				munmap(t[i].ring[j], size);
	}
	if (ctl >= 0)
		close(ctl);
	free(t);
}

/*
 * The datagram points in their order: with @rtt the round trip, with
 * @streams every --dgram-sizes and --senders (with MSG_ZEROCOPY when
 * --zerocopy), with @zc the zero-copy streams of 64 KiB and 1 MiB, one
 * sender.  With @why, none runs: each reports that reason instead,
 * "unsupported" with @unsupported.
 */
void dgram_points(int rtt, int streams, int zc, int unsupported,
		  const char *why)
{
	static const unsigned int zc_sizes[] = { 65536, 1 << 20 };
	unsigned int size;
	int i, j;

	if (rtt && why) {
		no_result("dgram_rtt_p50", 64, 1, "us", unsupported, why);
		no_result("dgram_rtt_p99", 64, 1, "us", unsupported, why);
	} else if (rtt) {
		dgram_rtt();
	}
	for (i = 0; streams && i < opt.dgram_sizes.n; i++) {
		for (j = 0; j < opt.senders.n; j++) {
			size = opt.dgram_sizes.v[i];
			if (why)
				no_result(stream_name(size, opt.zerocopy), size,
					  opt.senders.v[j], stream_unit(size),
					  unsupported, why);
			else
				dgram_stream(size, opt.senders.v[j],
					     opt.zerocopy);
		}
	}
	for (i = 0; zc && i < (int)ARRAY_SIZE(zc_sizes); i++) {
		size = zc_sizes[i];
		if (why)
			no_result(stream_name(size, 1), size, 1,
				  stream_unit(size), unsupported, why);
		else
			dgram_stream(size, 1, 1);
	}
}
