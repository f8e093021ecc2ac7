// SPDX-License-Identifier: GPL-2.0
/*
 * The client: RESULT lines, the requests the server answers, and the
 * points in their order.
 */
#include "rds-zc-bench.h"

int failures;

/* "live_keys=N" while the live keys are held, on every RESULT line */
char live_field[40];

/*
 * Put before every point's name and its line for people while a group
 * of points runs on another path (tcp.c: "tcp_", "over TCP: ").
 */
const char *point_prefix = "", *point_note = "";

/* A RESULT line and its human form. */
void result(const char *name, unsigned long size, int inflight,
	    double value, const char *unit, const char *extra,
	    const char *human)
{
	printf("RESULT name=%s%s size=%lu inflight=%d value=%.3f unit=%s%s%s%s%s%s%s\n",
	       point_prefix, name, size, inflight, value, unit,
	       extra ? " " : "", extra ? extra : "", live_field[0] ? " " : "",
	       live_field, opt.tag ? " " : "", opt.tag ? opt.tag : "");
	printf("  %s%s\n", point_note, human);
	fflush(stdout);
}

/* A point that could not run: "unsupported" (why) or "error" (why). */
void no_result(const char *name, unsigned long size, int inflight,
	       const char *unit, int unsupported, const char *why)
{
	printf("RESULT name=%s%s size=%lu inflight=%d value=%s unit=%s reason=\"%s\"%s%s%s%s\n",
	       point_prefix, name, size, inflight,
	       unsupported ? "unsupported" : "error", unit, why,
	       live_field[0] ? " " : "", live_field, opt.tag ? " " : "",
	       opt.tag ? opt.tag : "");
	printf("  %s%s, %s, %d: %s: %s\n", point_note, name, size_str(size),
	       inflight, unsupported ? "unsupported" : "FAILED", why);
	fflush(stdout);
	if (!unsupported)
		failures++;
}

/* The errors that say "this kernel does not do RDS_GET_MR here". */
int unsupported_err(int err)
{
	return err == EOPNOTSUPP || err == ENODEV || err == ENOPROTOOPT;
}

/*
 * Wait for the answer of type @type and sequence @seq on fd, into buf;
 * other messages are dropped.  Its length, or -1 (errno; see timed_out()).
 */
long wait_answer(int fd, void *buf, size_t len, int type, uint64_t seq,
		 int secs)
{
	double deadline = now() + secs;
	struct rx rx;
	long n;

	do {
		n = recv_rx(fd, buf, len, 0, &rx);
		if (n < 0)
			return n;
		if (valid_msg(buf, n) && ((struct bench_msg *)buf)->type == type &&
		    ((struct bench_msg *)buf)->seq == seq)
			return n;
	} while (now() < deadline);
	errno = ETIMEDOUT;
	return -1;
}

/*
 * A request answered by the server, on fd: 0, or -1 with errno.  Waits
 * --timeout seconds, or at least a minute for the RESET that starts a
 * point: after a failed RDMA, RDS may be setting up its connection again.
 */
int ask(int fd, int type, int answer, uint64_t seq, void *reply,
	size_t len)
{
	int secs = opt.timeout, ret;
	struct bench_msg m;
	struct stats_msg tmp;

	if (type == T_RESET && secs < 60)
		secs = 60;
	msg_init(&m, type, seq);
	if (send_plain(fd, &opt.server, &m, sizeof(m)) < 0)
		return -1;
	if (!reply) {
		reply = &tmp;
		len = sizeof(tmp);
	}
	set_timeouts(fd, secs);
	ret = wait_answer(fd, reply, len, answer, seq, secs) < 0 ? -1 : 0;
	set_timeouts(fd, opt.timeout);
	return ret;
}

/*
 * The server answers a ping (the first message also sets up the RDS
 * connection, which can take a while): 0, or -1 after wait_s seconds
 * with why set (errno: that of the socket, or ETIMEDOUT).
 */
int reach_server(int wait_s, char *why, size_t len)
{
	double deadline = now() + wait_s;
	char name[ADDR_STRLEN];
	struct bench_msg m;
	uint64_t seq = 0;
	int fd, ret = -1;

	fd = rds_open(&opt.self, 4096, 1 << 20, why, len);
	if (fd < 0)
		return -1;
	set_timeouts(fd, 1);
	while (now() < deadline) {
		msg_init(&m, T_PING, ++seq);
		if (send_plain(fd, &opt.server, &m, sizeof(m)) < 0) {
			usleep(200000);
			continue;
		}
		if (wait_answer(fd, &m, sizeof(m), T_PONG, seq, 1) >= 0) {
			ret = 0;
			break;
		}
	}
	close(fd);
	if (ret) {
		snprintf(why, len, "no answer from the server %s in %d s",
			 addr_str(&opt.server, name), wait_s);
		errno = ETIMEDOUT;
	}
	return ret;
}

int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int run_client(void)
{
	int need_server = opt.tests & (TEST_RDMA | TEST_DGRAM | TEST_RECLAIM |
				       TEST_CONN | TEST_RTT | TEST_STREAM |
				       TEST_ZC | TEST_TCP);
	char host[ADDR_STRLEN], server[ADDR_STRLEN], why[256];
	int d, k, i, j;

	if (need_server && !opt.have_server)
		bad_usage("%s",
			  "-s SERVER is required for every test but reg");
	if (need_server && !addr_same_family(&opt.self, &opt.server))
		bad_usage("%s", "-a ADDR and -s SERVER must be of one family, IPv4 or IPv6");
	printf("# rds-zc-bench client %s -> %s, %.1f s per point, timeout %d s%s%s\n",
	       addr_host(&opt.self, host), addr_str(&opt.server, server),
	       opt.secs, opt.timeout, opt.tag ? ", " : "", opt.tag ? opt.tag : "");
	fflush(stdout);
	/* first: the connection may be cold only now */
	if (opt.tests & TEST_CONN)
		conn_point();
	/* the TCP group reaches its own socket of the server (tcp.c) */
	if ((need_server & ~TEST_TCP) &&
	    reach_server(opt.timeout > 60 ? opt.timeout : 60, why,
			 sizeof(why))) {
		fprintf(stderr, "rds-zc-bench: %s\n", why);
		return 1;
	}

	if ((opt.tests & TEST_RDMA) && opt.have_live_keys)
		live_keys_get();
	for (d = 0; d < 2; d++)
		for (k = 0; k < 3; k++)
			if ((opt.tests & TEST_RDMA) && (opt.dirs & (1 << d)) &&
			    (opt.keys & (1 << k)))
				rdma_points(!d, 1 << k);
	if ((opt.tests & TEST_RDMA) && opt.have_live_keys)
		live_keys_put();
	if (opt.tests & TEST_REG)
		for (k = 0; k < 2; k++)
			for (j = 0; j < opt.reg_threads.n; j++)
				if (opt.reg_kinds & (1 << k))
					reg_point(k, opt.reg_threads.v[j]);
	if (opt.tests & TEST_RECLAIM) {
		static const unsigned int sizes[] = { 4096, 65536 };

		for (i = 0; i < (int)ARRAY_SIZE(sizes); i++)
			for (k = 0; k < 2; k++)
				reclaim_point(k, sizes[i]);
	}
	dgram_points(opt.tests & (TEST_RTT | TEST_DGRAM),
		     opt.tests & (TEST_DGRAM | TEST_STREAM),
		     opt.tests & TEST_ZC, 0, NULL);
	if (opt.tests & TEST_TCP)
		tcp_points();

	if (need_server & ~TEST_TCP) {
		char err[256];
		int fd = rds_open(&opt.self, 4096, 1 << 20, err, sizeof(err));

		if (fd < 0 || ask(fd, T_BYE, T_BYE_ACK, 1, NULL, 0))
			fprintf(stderr, "rds-zc-bench: the server did not answer BYE\n");
		if (fd >= 0)
			close(fd);
	}
	printf("# rds-zc-bench: %s\n", failures ? "some points FAILED" : "done");
	return failures ? 1 : 0;
}
