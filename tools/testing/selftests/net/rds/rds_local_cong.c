// SPDX-License-Identifier: GPL-2.0
/*
 * rds_local_cong.c - rds_local's cases of poll() and congestion control.
 */
#include "rds_local.h"

/* ------------------------------------------------------------- poll() */

/*
 * monitor: with RDS_CONG_MONITOR set, poll() reports POLLIN for queued
 * messages and notifications only, and the results are exact; without it,
 * a stale POLLIN from a congestion map update is let settle first.
 */
static void poll_readable(int monitor)
{
	struct sockaddr_in r;
	int rx = rds_bound(addr_main, 0, &r);
	int tx = rds_bound(addr_main, 0, NULL);
	int fresh = rds_socket();
	int rev;
	char buf[8];

	if (monitor)
		ASSERT_SYS_OK(set_int_opt(rx, SOL_RDS, RDS_CONG_MONITOR, 1));

	/* Room to send: POLLOUT, bound or not. */
	EXPECT_TRUE(poll_fd(fresh, POLLOUT, 0) & POLLOUT,
		    "unbound socket: no POLLOUT");
	rev = monitor ? poll_fd(rx, POLLIN | POLLOUT, 0) : poll_settled(rx);
	EXPECT_TRUE(rev & POLLOUT, "bound socket: no POLLOUT (revents %#x)",
		    rev);
	EXPECT_TRUE(!(rev & POLLIN), "empty socket: POLLIN (revents %#x)",
		    rev);

	EXPECT_EQ(EXPECT_SYS_OK(sendto(tx, "ping", 4, 0, (void *)&r,
				       sizeof(r))), 4);
	rev = poll_fd(rx, POLLIN, RCV_TIMEOUT_MS);
	EXPECT_TRUE(rev & POLLIN, "message queued: no POLLIN (revents %#x)",
		    rev);
	/* Still readable until it is read. */
	rev = poll_fd(rx, POLLIN, 0);
	EXPECT_TRUE(rev & POLLIN, "message queued: POLLIN went away");

	EXPECT_EQ(EXPECT_SYS_OK(recv(rx, buf, sizeof(buf), MSG_DONTWAIT)), 4);
	rev = monitor ? poll_fd(rx, POLLIN | POLLOUT, 0) : poll_settled(rx);
	EXPECT_TRUE(!(rev & POLLIN), "message read: POLLIN (revents %#x)",
		    rev);
	EXPECT_TRUE(rev & POLLOUT, "no POLLOUT (revents %#x)", rev);
	close(fresh);
	close(tx);
	close(rx);
}

void test_poll_plain(void)
{
	poll_readable(0);
}

void test_poll_monitored(void)
{
	poll_readable(1);
}

/* A poll() that sleeps wakes up when a message arrives. */
void test_poll_wakeup(void)
{
	struct sockaddr_in r;
	int rx = rds_bound(addr_main, 0, &r);
	int tx = rds_bound(addr_main, 0, NULL);
	long long start;
	pid_t pid;
	int rev;

	ASSERT_SYS_OK(set_int_opt(rx, SOL_RDS, RDS_CONG_MONITOR, 1));
	pid = ASSERT_SYS_OK(fork());
	if (pid == 0) {
		rt_sleep_ms(300);
		_exit(sendto(tx, "wake", 4, 0, (void *)&r, sizeof(r)) == 4 ?
		      0 : 1);
	}
	start = rt_now_ms();
	rev = poll_fd(rx, POLLIN, RCV_TIMEOUT_MS);
	EXPECT_TRUE(rev & POLLIN, "poll ended without POLLIN (revents %#x)",
		    rev);
	EXPECT_TRUE(rt_now_ms() - start >= 200,
		    "poll returned after %lld ms, before the message was sent",
		    rt_now_ms() - start);
	recv_text(rx, "wake", NULL);
	waitpid(pid, NULL, 0);
	close(tx);
	close(rx);
}

/* ------------------------------------------------- congestion control */

#define CONG_MSG	1024

struct cong {
	int rx, tx;
	struct sockaddr_in r, t;
	int rcvbuf;		/* the receiver's share: SO_RCVBUF / 2 */
	int sent;		/* messages taken before ENOBUFS */
};

static void cong_msg(unsigned char *buf, uint32_t seq)
{
	memset(buf, (int)(seq & 0xff), CONG_MSG);
	memcpy(buf, &seq, sizeof(seq));
}

/*
 * Fill a receiver with a small SO_RCVBUF until the sender, not blocking,
 * is refused with ENOBUFS: the receiver's port is congested.
 */
static void cong_start(struct cong *c, int monitor)
{
	unsigned char buf[CONG_MSG];
	long long deadline = rt_now_ms() + 15000;

	need_congestion();
	c->rx = rds_bound(addr_main, 0, &c->r);
	c->tx = rds_bound(addr_main, 0, &c->t);
	c->sent = 0;
	ASSERT_SYS_OK(set_int_opt(c->rx, SOL_SOCKET, SO_RCVBUF, 4096));
	c->rcvbuf = int_opt(c->rx, SOL_SOCKET, SO_RCVBUF) / 2;
	if (monitor)
		ASSERT_SYS_OK(set_int_opt(c->tx, SOL_RDS, RDS_CONG_MONITOR,
					  1));
	for (;;) {
		cong_msg(buf, c->sent);
		if (sendto(c->tx, buf, CONG_MSG, MSG_DONTWAIT, (void *)&c->r,
			   sizeof(c->r)) == CONG_MSG) {
			c->sent++;
		} else if (errno == ENOBUFS) {
			break;
		} else if (errno == EAGAIN) {
			/* the send buffer is full of unacknowledged data */
			rt_sleep_ms(10);
		} else {
			rt_fail("sendto while filling: %s", rt_errname(errno));
			rt_abort();
		}
		ASSERT_TRUE(rt_now_ms() < deadline && c->sent < 100000,
			    "no ENOBUFS after %d messages of %d bytes to a receiver with SO_RCVBUF %d",
			    c->sent, CONG_MSG, 2 * c->rcvbuf);
	}
	/* Congested means: more than the receiver's share is queued. */
	EXPECT_TRUE((long long)c->sent * CONG_MSG > c->rcvbuf,
		    "ENOBUFS after only %d bytes, receive buffer share %d",
		    c->sent * CONG_MSG, c->rcvbuf);
}

/* Receive the messages numbered first .. first + count - 1, in order. */
static void cong_drain(struct cong *c, int first, int count)
{
	unsigned char buf[CONG_MSG + 16];
	uint32_t seq;
	int i;

	for (i = first; i < first + count; i++) {
		long ret = recv(c->rx, buf, sizeof(buf), 0);

		if (ret != CONG_MSG) {
			rt_fail("message %d: recv returned %ld (%s)", i, ret,
				ret < 0 ? rt_errname(errno) : "-");
			rt_abort();
		}
		memcpy(&seq, buf, sizeof(seq));
		if (!EXPECT_EQ(seq, i))
			rt_abort();
	}
}

static void cong_end(struct cong *c)
{
	close(c->tx);
	close(c->rx);
}

/* Send one message without blocking, retrying while the port uncongests. */
static void send_when_uncongested(int fd, const struct sockaddr_in *to,
				  uint32_t seq)
{
	unsigned char buf[CONG_MSG];
	long long deadline = rt_now_ms() + RCV_TIMEOUT_MS;

	cong_msg(buf, seq);
	while (sendto(fd, buf, CONG_MSG, MSG_DONTWAIT, (void *)to,
		      sizeof(*to)) != CONG_MSG) {
		ASSERT_TRUE(errno == ENOBUFS || errno == EAGAIN,
			    "sendto: %s", rt_errname(errno));
		ASSERT_TRUE(rt_now_ms() < deadline,
			    "still %s %d ms after the receiver drained",
			    rt_errname(errno), RCV_TIMEOUT_MS);
		rt_sleep_ms(10);
	}
}

void test_cong_enobufs(void)
{
	unsigned char buf[CONG_MSG];
	struct sockaddr_in r2;
	struct cong c;
	int rx2, tx2;

	cong_start(&c, 0);
	rt_diag("ENOBUFS after %d messages of %d bytes (receive share %d)",
		c.sent, CONG_MSG, c.rcvbuf);
	cong_msg(buf, 0);

	/* Congestion is the destination port's, whoever sends to it ... */
	tx2 = rds_bound(addr_main, 0, NULL);
	EXPECT_SYS_ERR(sendto(tx2, buf, CONG_MSG, MSG_DONTWAIT, (void *)&c.r,
			      sizeof(c.r)), ENOBUFS);
	EXPECT_SYS_ERR(sendto(c.tx, buf, CONG_MSG, MSG_DONTWAIT, (void *)&c.r,
			      sizeof(c.r)), ENOBUFS);
	/* ... and no other port's. */
	rx2 = rds_bound(addr_main, 0, &r2);
	EXPECT_EQ(EXPECT_SYS_OK(sendto(c.tx, buf, CONG_MSG, MSG_DONTWAIT,
				       (void *)&r2, sizeof(r2))), CONG_MSG);

	/* Nothing taken was lost, and draining lifts the congestion. */
	cong_drain(&c, 0, c.sent);
	expect_empty(c.rx);
	send_when_uncongested(c.tx, &c.r, c.sent);
	cong_drain(&c, c.sent, 1);
	close(tx2);
	close(rx2);
	cong_end(&c);
}

/*
 * Empty messages hold memory too: a receiver that never reads a flood of
 * them congests once its queue holds more memory than SO_RCVBUF, at least
 * 1 MiB (rds_zc.rst), although their payload is nothing; then the flood
 * gets ENOBUFS, and every message taken is there to read.  The
 * distribution counts payload only, so it queues empty messages without
 * bound (a local user can make the kernel hold any amount of memory that
 * way): on the distribution the case is skipped rather than filling the
 * guest's memory.
 */
#define EMPTY_MAX	100000

void test_cong_empty_messages(void)
{
	struct sockaddr_in r;
	int rx, tx, sent = 0, i;
	char c;

	need_congestion();
	if (modules_are_distro())
		rt_skip("the distribution never congests on empty messages");
	rx = rds_bound(addr_main, 0, &r);
	tx = rds_bound(addr_main, 0, NULL);
	while (sendto(tx, "", 0, MSG_DONTWAIT, (void *)&r, sizeof(r)) == 0) {
		if (++sent >= EMPTY_MAX)
			break;
	}
	ASSERT_TRUE(sent < EMPTY_MAX, "%d empty messages queued, no ENOBUFS",
		    sent);
	EXPECT_EQ(errno, ENOBUFS);
	/* At least 1 MiB of some hundred bytes each: thousands. */
	EXPECT_TRUE(sent > 1000, "ENOBUFS after only %d empty messages", sent);
	rt_diag("ENOBUFS after %d empty messages", sent);
	for (i = 0; i < sent; i++)
		if (!EXPECT_EQ(EXPECT_SYS_OK(recv(rx, &c, 1, MSG_DONTWAIT)), 0))
			break;
	expect_empty(rx);
	close(tx);
	close(rx);
}

/* A blocking sender waits for a congested port, then goes on. */
/*
 * Our module, unlike the distribution's loopback transport, bounds the
 * receive queue on 127/8 too.  Each case runs in its own process, so the
 * primary address can be switched here.
 */
void test_cong_enobufs_lo(void)
{
	const char *mods = getenv("RDS_MODULES");

	if (!mods || strcmp(mods, "ours"))
		rt_skip("the distribution's loopback transport never congests");
	addr_main = addr_lo;
	main_is_lo = 0;
	test_cong_enobufs();
}

void test_cong_blocking_sender(void)
{
	unsigned char buf[CONG_MSG];
	struct cong c;
	int pipefd[2];
	long result = 0;
	pid_t pid;

	cong_start(&c, 0);
	ASSERT_SYS_OK(pipe(pipefd));
	pid = ASSERT_SYS_OK(fork());
	if (pid == 0) {
		cong_msg(buf, c.sent);
		result = sendto(c.tx, buf, CONG_MSG, 0, (void *)&c.r,
				sizeof(c.r));
		if (result < 0)
			result = -errno;
		_exit(write(pipefd[1], &result, sizeof(result)) !=
		      sizeof(result));
	}
	close(pipefd[1]);

	/* Still waiting while nobody reads ... */
	EXPECT_EQ(poll_fd(pipefd[0], POLLIN, 500) & POLLIN, 0);
	/* ... and done once the receiver drained its queue. */
	cong_drain(&c, 0, c.sent);
	if (!EXPECT_TRUE(poll_fd(pipefd[0], POLLIN, RCV_TIMEOUT_MS) & POLLIN,
			 "blocked sender still blocked %d ms after the drain",
			 RCV_TIMEOUT_MS))
		rt_abort();
	EXPECT_EQ(read(pipefd[0], &result, sizeof(result)), sizeof(result));
	if (result < 0)
		rt_fail("blocked sendto: %s", rt_errname(-result));
	EXPECT_EQ(result, CONG_MSG);
	cong_drain(&c, c.sent, 1);
	expect_empty(c.rx);
	waitpid(pid, NULL, 0);
	close(pipefd[0]);
	cong_end(&c);
}

/*
 * RDS_CONG_MONITOR: a sender refused with ENOBUFS learns through an
 * RDS_CMSG_CONG_UPDATE when the port's congestion map changes again.
 *
 * Distribution behaviour: the local transports report every congestion
 * map update as "all ports changed", so the notification can come as soon
 * as the map changes after the refusal, even before the port is drained;
 * only its arrival after the drain is certain, and that is what is checked.
 * And a recv() without a control buffer takes the notification and
 * returns an empty message, so the reader never sees it: on ours, such a
 * reader is served as if none were pending (EAGAIN here) and the
 * notification stays; the distribution is not asked.
 */
void test_cong_monitor(void)
{
	struct cong c;
	int rev;

	cong_start(&c, 1);
	cong_drain(&c, 0, c.sent);

	rev = poll_fd(c.tx, POLLIN, RCV_TIMEOUT_MS);
	if (!EXPECT_TRUE(rev & POLLIN,
			 "no POLLIN on the monitoring sender %d ms after the drain",
			 RCV_TIMEOUT_MS))
		rt_abort();

	if (!modules_are_distro())
		expect_empty(c.tx);
	expect_cong_update(c.tx, c.r.sin_port);

	/* Delivered once: nothing more to read. */
	rev = poll_fd(c.tx, POLLIN, 0);
	EXPECT_TRUE(!(rev & POLLIN), "POLLIN after the notification was read");
	expect_empty(c.tx);

	send_when_uncongested(c.tx, &c.r, c.sent);
	cong_drain(&c, c.sent, 1);
	cong_end(&c);
}

/* A sender blocked on a congested port is interrupted by a signal. */
void test_cong_send_eintr(void)
{
	unsigned char buf[CONG_MSG];
	struct kicker k = { .signal_ms = 300 };
	struct cong c;
	long long start;

	cong_start(&c, 0);
	catch_sigusr1(0);
	kicker_start(&k);
	cong_msg(buf, c.sent);
	start = rt_now_ms();
	EXPECT_SYS_ERR(sendto(c.tx, buf, CONG_MSG, 0, (void *)&c.r,
			      sizeof(c.r)), EINTR);
	EXPECT_TRUE(rt_now_ms() - start >= 200,
		    "sendto returned after %lld ms, before the signal",
		    rt_now_ms() - start);
	EXPECT_EQ(signals_seen, 1);
	pthread_join(k.thread, NULL);

	/* The interrupted message was not sent; the others all were. */
	cong_drain(&c, 0, c.sent);
	expect_empty(c.rx);
	cong_end(&c);
}
