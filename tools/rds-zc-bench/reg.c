// SPDX-License-Identifier: GPL-2.0
/*
 * Registration alone: reg_pair, reg_pair_inv.
 */
#include "rds-zc-bench.h"

struct reg_thread {
	pthread_t tid;
	pthread_barrier_t *start;
	int inv;
	long pairs;
	double secs;
	char why[256];
	int unsupported;
};

static void *reg_worker(void *arg)
{
	struct reg_thread *t = arg;
	size_t maplen = page_round(opt.reg_size);
	unsigned char *buf = xmap(maplen);
	uint64_t cookie = 0;
	double t0, deadline;
	int fd;

	fd = rds_open(&opt.self, 4096, 65536, t->why, sizeof(t->why));
	pthread_barrier_wait(t->start);
	if (fd < 0)
		goto out;
	t0 = now();
	deadline = t0 + opt.secs;
	while (now() < deadline && (!opt.max_ops || t->pairs < opt.max_ops)) {
		if (get_mr(fd, buf, opt.reg_size, &cookie)) {
			int e = errno;

			snprintf(t->why, sizeof(t->why), "RDS_GET_MR: %s",
				 errname(e));
			t->unsupported = !t->pairs && unsupported_err(e);
			break;
		}
		if (free_mr(fd, cookie, t->inv ? RDS_RDMA_INVALIDATE : 0)) {
			snprintf(t->why, sizeof(t->why), "RDS_FREE_MR: %s",
				 errname(errno));
			break;
		}
		t->pairs++;
	}
	t->secs = now() - t0;
	close(fd);
out:
	munmap(buf, maplen);
	return NULL;
}

void reg_point(int inv, int nthreads)
{
	const char *name = inv ? "reg_pair_inv" : "reg_pair";
	struct reg_thread *t = calloc(nthreads, sizeof(*t));
	char extra[128], human[256];
	pthread_barrier_t start;
	double rate = 0;
	long pairs = 0;
	int i;

	if (!t)
		die("out of memory");
	pthread_barrier_init(&start, NULL, nthreads);
	for (i = 0; i < nthreads; i++) {
		t[i].start = &start;
		t[i].inv = inv;
		if (pthread_create(&t[i].tid, NULL, reg_worker, &t[i]))
			die("pthread_create failed");
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(t[i].tid, NULL);
	pthread_barrier_destroy(&start);
	for (i = 0; i < nthreads; i++) {
		if (t[i].why[0]) {
			no_result(name, opt.reg_size, nthreads, "pairs/s",
				  t[i].unsupported, t[i].why);
			free(t);
			return;
		}
		pairs += t[i].pairs;
		if (t[i].secs > 0)
			rate += t[i].pairs / t[i].secs;
	}
	snprintf(extra, sizeof(extra), "pairs=%ld secs=%.3f threads=%d", pairs,
		 opt.secs, nthreads);
	snprintf(human, sizeof(human),
		 "RDS_GET_MR + RDS_FREE_MR%s of %s, %d thread(s): %.0f pairs/s, %.1f us per pair and thread",
		 inv ? " with RDS_RDMA_INVALIDATE" : "", size_str(opt.reg_size),
		 nthreads, rate, rate > 0 ? nthreads / rate * 1e6 : 0);
	result(name, opt.reg_size, nthreads, rate, "pairs/s", extra, human);
	free(t);
}
