// SPDX-License-Identifier: GPL-2.0
/*
 * Bulk reclaim: reclaim_notify, reclaim_barrier.
 */
#include "rds-zc-bench.h"

/*
 * A silent RDMA WRITE of len bytes at buf to off of the server's MR;
 * with @id, RDS_CMSG_OP_ID asks for its id there.
 */
static long send_write(int fd, uint64_t cookie, uint64_t off, void *buf,
		       size_t len, uint64_t flags, uint64_t token, uint64_t *id)
{
	struct rds_iovec iov = { (uintptr_t)buf, len };
	struct rds_rdma_args args = {
		.cookie = cookie,
		.remote_vec = { off, len },
		.local_vec_addr = (uintptr_t)&iov,
		.nr_local = 1,
		.flags = flags | RDS_RDMA_READWRITE | RDS_RDMA_SILENT,
		.user_token = token,
	};
	uint64_t where = (uintptr_t)id;
	union {
		char buf[CMSG_SPACE(sizeof(args)) + CMSG_SPACE(sizeof(where))];
		struct cmsghdr align;
	} ctl;
	struct msghdr msg = {
		.msg_name = &opt.server,
		.msg_namelen = addr_len(&opt.server),
		.msg_control = ctl.buf,
		.msg_controllen = CMSG_SPACE(sizeof(args)) +
				  (id ? CMSG_SPACE(sizeof(where)) : 0),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	memset(&ctl, 0, sizeof(ctl));
	c->cmsg_level = SOL_RDS;
	c->cmsg_type = RDS_CMSG_RDMA_ARGS;
	c->cmsg_len = CMSG_LEN(sizeof(args));
	memcpy(CMSG_DATA(c), &args, sizeof(args));
	if (id) {
		c = CMSG_NXTHDR(&msg, c);
		c->cmsg_level = SOL_RDS;
		c->cmsg_type = RDS_CMSG_OP_ID;
		c->cmsg_len = CMSG_LEN(sizeof(where));
		memcpy(CMSG_DATA(c), &where, sizeof(where));
	}
	return sendmsg(fd, &msg, 0);
}

/* Wait for a batch: @n notifications of success, or the barrier of @id. */
static int reclaim_wait(int fd, int barrier, int n, uint64_t id, char *why,
			size_t wlen)
{
	struct rds_op_barrier b = { .wait_id = id };
	socklen_t blen = sizeof(b);
	unsigned char buf[64];
	struct rx rx;
	int got = 0, i;

	if (barrier) {
		memcpy(&b.dest, &opt.server, addr_len(&opt.server));
		if (!getsockopt(fd, SOL_RDS, RDS_OP_BARRIER, &b, &blen))
			return 0;
		snprintf(why, wlen, "RDS_OP_BARRIER: %s", errname(errno));
		return -1;
	}
	while (got < n) {
		if (recv_rx(fd, buf, sizeof(buf), 0, &rx) < 0) {
			snprintf(why, wlen, "%d of %d notifications: %s", got,
				 n, errname(errno));
			return -1;
		}
		for (i = 0; i < rx.nnote; i++, got++) {
			if (rx.note[i].status != RDS_RDMA_SUCCESS) {
				snprintf(why, wlen, "an RDMA WRITE failed: status %s",
					 status_name(rx.note[i].status));
				return -1;
			}
		}
	}
	return 0;
}

void reclaim_point(int barrier, unsigned int size)
{
	const char *name = barrier ? "reclaim_barrier" : "reclaim_notify";
	size_t slot = page_round(size);
	char why[256] = "", extra[128], human[256];
	double t0 = 0, secs, deadline = 0;
	int fd, i, unsupported = 0;
	unsigned char *buf = NULL;
	uint64_t cookie, id = 0;
	long ops = 0, batch;
	struct bench_msg m;

	fd = rds_open(&opt.self, 4096, 4 << 20, why, sizeof(why));
	if (fd < 0)
		goto out;
	buf = xmap(RECLAIM_DEPTH * slot);
	if (ask(fd, T_MR, T_MR_REPLY, 1, &m, sizeof(m))) {
		snprintf(why, sizeof(why), "no answer to MR: %s", errname(errno));
		goto out;
	}
	if (m.flags & F_ERROR) {
		snprintf(why, sizeof(why), "the server's RDS_GET_MR: %s",
			 errname((int)m.cookie));
		unsupported = unsupported_err((int)m.cookie);
		goto out;
	}
	cookie = m.cookie;
	/* Batch 0 warms up; the clock runs from batch 1 on. */
	for (batch = 0;; batch++) {
		if (batch == 1) {
			t0 = now();
			deadline = t0 + opt.secs;
		}
		for (i = 0; i < RECLAIM_DEPTH; i++) {
			int last = i == RECLAIM_DEPTH - 1;

			if (send_write(fd, cookie, (uint64_t)i * size,
				       buf + i * slot, size,
				       barrier ? 0 : RDS_RDMA_NOTIFY_ME, i,
				       barrier && last ? &id : NULL) < 0) {
				int e = errno;

				snprintf(why, sizeof(why), "sendmsg: %s",
					 errname(e));
				/* the distribution refuses RDS_CMSG_OP_ID */
				unsupported = !batch && barrier &&
					      (e == EINVAL || unsupported_err(e));
				goto out;
			}
		}
		if (reclaim_wait(fd, barrier, RECLAIM_DEPTH, id, why,
				 sizeof(why))) {
			unsupported = !batch && barrier && unsupported_err(errno);
			goto out;
		}
		if (!batch)
			continue;
		ops += RECLAIM_DEPTH;
		if (now() >= deadline || (opt.max_ops && ops >= opt.max_ops))
			break;
	}
	secs = now() - t0;
	snprintf(extra, sizeof(extra), "ops=%ld secs=%.3f", ops, secs);
	snprintf(human, sizeof(human),
		 "bulk reclaim by %s, RDMA WRITE %s, batches of %d: %.1f ops/s (%ld ops in %.2f s)",
		 barrier ? "one barrier per batch" : "a notification per operation",
		 size_str(size), RECLAIM_DEPTH, ops / secs, ops, secs);
	result(name, size, RECLAIM_DEPTH, ops / secs, "ops/s", extra, human);
	close(fd);
	munmap(buf, RECLAIM_DEPTH * slot);
	return;
out:
	no_result(name, size, RECLAIM_DEPTH, "ops/s", unsupported, why);
	if (fd >= 0)
		close(fd);
	if (buf)
		munmap(buf, RECLAIM_DEPTH * slot);
}
