// SPDX-License-Identifier: GPL-2.0
/*
 * conn_setup: the first round trip on a new socket.
 */
#include "rds-zc-bench.h"

/*
 * conn_setup: the first round trip of a ping on a new socket, timed from
 * the first send to the first answer (on a cold connection RDS queues the
 * ping while it sets the connection up; a ping is sent again every
 * second meanwhile, and the answer to any of them ends the wait); then
 * WARM_PINGS round trips more on the connection now up.
 */
void conn_point(void)
{
	double t0, first = -1, deadline, warm[WARM_PINGS];
	char why[256] = "", extra[128], human[256];
	unsigned char buf[256];
	struct bench_msg *m = (void *)buf;
	uint64_t seq = 0;
	int fd, pings = 0, i;
	struct rx rx;
	long n;

	fd = rds_open(&opt.self, 64, 1 << 20, why, sizeof(why));
	if (fd < 0)
		goto fail;
	set_timeouts(fd, 1);
	t0 = now();
	deadline = t0 + (opt.timeout > 60 ? opt.timeout : 60);
	while (first < 0 && now() < deadline) {
		memset(buf, 0, 64);
		msg_init(m, T_PING, ++seq);
		if (send_plain(fd, &opt.server, buf, 64) < 0) {
			usleep(10000);
			continue;
		}
		pings++;
		do {
			n = recv_rx(fd, buf, sizeof(buf), 0, &rx);
			if (n >= 0 && valid_msg(buf, n) && m->type == T_PONG) {
				first = now() - t0;
				break;
			}
		} while (n >= 0 || errno == EINTR);
	}
	if (first < 0) {
		snprintf(why, sizeof(why), "no answer in %.0f s (%d pings)",
			 deadline - t0, pings);
		goto fail;
	}
	set_timeouts(fd, opt.timeout);
	for (i = 0; i < WARM_PINGS; i++) {
		double t = now();

		memset(buf, 0, 64);
		msg_init(m, T_PING, ++seq);
		if (send_plain(fd, &opt.server, buf, 64) < 0 ||
		    wait_answer(fd, buf, sizeof(buf), T_PONG, seq,
				opt.timeout) < 0) {
			snprintf(why, sizeof(why), "warm ping %d: %s", i + 1,
				 errname(errno));
			goto fail;
		}
		warm[i] = (now() - t) * 1e6;
	}
	close(fd);
	qsort(warm, WARM_PINGS, sizeof(*warm), cmp_double);
	snprintf(extra, sizeof(extra), "pings=%d warm_us=%.1f", pings,
		 warm[(WARM_PINGS - 1) / 2]);
	snprintf(human, sizeof(human),
		 "first round trip on a new socket: %.1f ms (%d ping(s) sent); warm round trip: median %.1f us of %d",
		 first * 1e3, pings, warm[(WARM_PINGS - 1) / 2], WARM_PINGS);
	result("conn_setup", 64, 1, first * 1e3, "ms", extra, human);
	return;
fail:
	if (fd >= 0)
		close(fd);
	no_result("conn_setup", 64, 1, "ms", 0, why);
}
