// SPDX-License-Identifier: GPL-2.0
/*
 * Plain datagrams: dgram_rtt_p50, dgram_rtt_p99, dgram_rate, dgram_tput.
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
	unsigned char *buf;
	long msgs;
	double t_end;
	char why[256];
};

static void *snd_worker(void *arg)
{
	struct snd_thread *t = arg;
	struct bench_msg *m = (void *)t->buf;
	double deadline;

	pthread_barrier_wait(t->start);
	deadline = *t->t0 + opt.secs;
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
	/* RDS keeps each socket's messages in order: this answer is last */
	if (ask(t->fd, T_SYNC, T_SYNCED, UINT64_MAX, NULL, 0))
		snprintf(t->why, sizeof(t->why), "no answer to SYNC: %s",
			 errname(errno));
	t->t_end = now();
	return NULL;
}

void dgram_stream(unsigned int size, int nthreads)
{
	const char *name = size < 65536 ? "dgram_rate" : "dgram_tput";
	const char *unit = size < 65536 ? "msg/s" : "MiB/s";
	struct snd_thread *t = calloc(nthreads, sizeof(*t));
	double t0 = 0, t1 = 0, secs, rate, mibs;
	char why[256] = "", extra[160], human[256];
	pthread_barrier_t start;
	struct stats_msg st;
	long msgs = 0;
	int ctl, i;

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
		t[i].buf = xmap(size);
		t[i].t0 = &t0;
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
		if (t[i].why[0] && !why[0])
			snprintf(why, sizeof(why), "%s", t[i].why);
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
	snprintf(extra, sizeof(extra), "msgs=%ld secs=%.3f msg_s=%.1f mib_s=%.3f",
		 msgs, secs, rate, mibs);
	snprintf(human, sizeof(human),
		 "datagrams of %s, %d sender(s): %.0f msg/s, %.2f MiB/s (%ld in %.2f s, all received)",
		 size_str(size), nthreads, rate, mibs, msgs, secs);
	result(name, size, nthreads, size < 65536 ? rate : mibs, unit, extra,
	       human);
	goto out;
fail:
	no_result(name, size, nthreads, unit, 0, why);
out:
	for (i = 0; i < nthreads; i++) {
		if (t[i].fd >= 0)
			close(t[i].fd);
		if (t[i].buf)
			munmap(t[i].buf, size);
	}
	if (ctl >= 0)
		close(ctl);
	free(t);
}
