// SPDX-License-Identifier: GPL-2.0
/*
 * rds_remote_cong.c - rds_remote's cases of congestion control across
 * hosts.
 */
#include "rds_remote.h"

/* ------------------------------------------------- congestion control */

#define CONG_MSG	1024
#define CONG_FILL_MS	20000
/*
 * The senders' SO_SNDBUF: room for 8192 messages, charged at most twice
 * their size, so that only the port's congestion stops them, never the
 * send buffer.  ENOBUFS came after 5 to 300 messages, after 2048 once
 * (a distribution sender against our receiver, 177 ms, with room for
 * 2048 then: the only EAGAIN of the fill) and 1626 once (below).
 */
#define CONG_SNDBUF	(16 << 20)
/*
 * The fill sends CONG_BURST messages at full speed, then one every
 * CONG_PACE_MS until the congestion update arrives.  The update takes a
 * round trip, and a case's first exchange a connect too: unpaced, a
 * sender queued 1626 messages before it came (6.12, --credits 32, the
 * first round of a loop), 2.1 MiB at the receiver, past the receiving
 * socket's hard limit (recv.c: twice max(SO_RCVBUF, 1 MiB), true size).
 * Our receiver then holds the connection back until the reader makes
 * room, as it does for a peer that ignores congestion, and the message
 * to the uncongested port waited behind them until the drain.  Paced,
 * the fill stays well below that limit: 256 messages (330 KiB), then
 * 200 a second.
 */
#define CONG_BURST	256
#define CONG_PACE_MS	5

/* The sockets of a congestion case. */
struct cong {
	int sending;		/* this node sends, the other receives */
	int rx, rx2;		/* receiver: congested port, and another one */
	int tx, tx2;		/* sender: two sockets to the congested port */
	struct sockaddr_in r, r2;
	int sent;		/* messages taken before ENOBUFS */
};

/* Send stream message seq from fd; the sendto() result. */
static long cong_send(int fd, const struct sockaddr_in *to, uint32_t seq,
		      int flags)
{
	unsigned char buf[CONG_MSG];

	build_msg(buf, sizeof(buf), 1, seq);
	return sendto(fd, buf, sizeof(buf), flags, (struct sockaddr *)to,
		      sizeof(*to));
}

/*
 * Set up a congestion case with node 'sender' sending: the receiver binds
 * a port with a small SO_RCVBUF that it does not read, the sender (with
 * RDS_CONG_MONITOR if monitor) sends to it without blocking, paced after
 * CONG_BURST, until the congestion map update from the receiving host
 * makes sendto() fail with ENOBUFS.  Both nodes learn how many messages were taken.
 */
static void cong_start(struct cong *c, int sender, int monitor)
{
	long long start, deadline;
	int eagain = 0, paced = 0;
	long ret;

	memset(c, 0, sizeof(*c));
	c->sending = node == sender;
	c->rx = -1;
	c->rx2 = -1;
	c->tx = -1;
	c->tx2 = -1;
	if (c->sending) {
		c->tx = rds_bound(0, NULL);
		c->tx2 = rds_bound(1, NULL);
		c->r = peer_port(2);
		c->r2 = peer_port(3);
		ASSERT_SYS_OK(set_int_opt(c->tx, SOL_SOCKET, SO_SNDBUFFORCE,
					  CONG_SNDBUF));
		ASSERT_SYS_OK(set_int_opt(c->tx2, SOL_SOCKET, SO_SNDBUFFORCE,
					  CONG_SNDBUF));
		if (monitor)
			ASSERT_SYS_OK(set_int_opt(c->tx, SOL_RDS,
						  RDS_CONG_MONITOR, 1));
	} else {
		c->rx = rds_bound(2, NULL);
		c->rx2 = rds_bound(3, NULL);
		ASSERT_SYS_OK(set_int_opt(c->rx, SOL_SOCKET, SO_RCVBUF, 4096));
	}
	sync_peer("bound");
	if (!c->sending) {
		c->sent = hear_peer();
		ASSERT_TRUE(c->sent > 0, "node %d reported no ENOBUFS",
			    peer_node);
		return;
	}

	start = rt_now_ms();
	deadline = start + CONG_FILL_MS;
	for (;;) {
		ret = cong_send(c->tx, &c->r, c->sent, MSG_DONTWAIT);
		if (ret == CONG_MSG) {
			if (++c->sent >= CONG_BURST) {
				paced++;
				rt_sleep_ms(CONG_PACE_MS);
			}
		} else if (ret < 0 && errno == ENOBUFS) {
			break;
		} else if (ret < 0 && errno == EAGAIN) {
			/* the send buffer is full of unacknowledged data */
			eagain++;
			rt_sleep_ms(5);
		} else {
			rt_fail("message %d: sendto: %ld (%s)", c->sent, ret,
				ret < 0 ? rt_errname(errno) : "short");
			tell_peer(-1);
			rt_abort();
		}
		if (rt_now_ms() > deadline) {
			rt_fail("no ENOBUFS in %d ms: %d messages of %d bytes, SO_RCVBUF 4096",
				CONG_FILL_MS, c->sent, CONG_MSG);
			tell_peer(-1);
			rt_abort();
		}
	}
	rt_diag("ENOBUFS after %d messages of %d bytes (%d paced), %lld ms (%d EAGAIN)",
		c->sent, CONG_MSG, paced, rt_now_ms() - start, eagain);
	tell_peer(c->sent);
}

/*
 * The receiver: messages 0 .. count - 1 of the congestion stream, in
 * order, from the sender's socket.
 */
static void cong_drain(struct cong *c, int first, int count)
{
	struct sockaddr_in from, want;
	unsigned char buf[CONG_MSG + 64];
	uint32_t seq;
	long n;
	int i;

	sin_set(&want, addr_peer, case_port(0));
	for (i = first; i < first + count; i++) {
		n = recv_msg(c->rx, buf, sizeof(buf), 0, &from, NULL);
		if (n < 0) {
			rt_fail("message %d of %d: recvmsg: %s", i,
				first + count, rt_errname(errno));
			rt_abort();
		}
		EXPECT_TRUE(same_sin(&from, &want), "message %d from %s, expected %s",
			    i, sin_str(&from), sin_str(&want));
		if (!check_msg(buf, n, 1, &seq, "congested port") ||
		    !EXPECT_EQ(seq, i))
			rt_abort();
	}
}

static void cong_end(struct cong *c)
{
	sync_peer("end");
	if (!c->sending) {
		expect_empty(c->rx);
		expect_empty(c->rx2);
	}
	if (c->rx >= 0)
		close(c->rx);
	if (c->rx2 >= 0)
		close(c->rx2);
	if (c->tx >= 0)
		close(c->tx);
	if (c->tx2 >= 0)
		close(c->tx2);
}

/*
 * Congestion across hosts: ENOBUFS for every sender to the congested port
 * (and none for another port of the same host); with RDS_CONG_MONITOR,
 * one RDS_CMSG_CONG_UPDATE naming the port once the receiver drained it;
 * then the very next send to the port is taken, without a retry; nothing
 * was lost on the way.
 */
static void cong_enobufs_monitor(int sender)
{
	unsigned char buf[CONG_MSG + 64];
	struct sockaddr_in from;
	long long start;
	struct cong c;
	int rev, room;
	uint32_t seq;
	long n;

	cong_start(&c, sender, 1);
	if (c.sending) {
		/* The congestion is the port's, whoever sends to it ... */
		EXPECT_SYS_ERR(cong_send(c.tx2, &c.r, 0, MSG_DONTWAIT),
			       ENOBUFS);
		EXPECT_SYS_ERR(cong_send(c.tx, &c.r, c.sent, MSG_DONTWAIT),
			       ENOBUFS);
		/* ... and no other port's. */
		EXPECT_EQ(EXPECT_SYS_OK(cong_send(c.tx, &c.r2, 7, MSG_DONTWAIT)),
			  CONG_MSG);
		rev = poll_fd(c.tx, POLLIN, 0);
		if (rev & POLLIN)
			rt_diag("POLLIN on the monitoring sender before the drain");
		sync_peer("checked");
		sync_peer("drained");

		start = rt_now_ms();
		rev = poll_fd(c.tx, POLLIN, RCV_TIMEOUT_MS);
		if (!EXPECT_TRUE(rev & POLLIN,
				 "no POLLIN on the monitoring sender %d ms after the drain",
				 RCV_TIMEOUT_MS))
			rt_abort();
		rt_diag("notified %lld ms after the drain", rt_now_ms() - start);
		expect_cong_update(c.tx, c.r.sin_port);
		expect_empty(c.tx);

		/*
		 * Uncongested: the next message is taken at once.  The map
		 * bit is cleared before the notification is queued, nothing
		 * congests the port again (the receiver's queue is empty),
		 * and the send buffer has room for it even if none of the
		 * messages before it were acknowledged yet: neither ENOBUFS
		 * nor EAGAIN is a reason to fail.
		 */
		room = int_opt(c.tx, SOL_SOCKET, SO_SNDBUF) / 2;
		ASSERT_TRUE((long long)(c.sent + 2) * 2 * CONG_MSG <= room,
			    "%d messages may fill SO_SNDBUF's %d bytes",
			    c.sent + 2, room);
		n = cong_send(c.tx, &c.r, c.sent, MSG_DONTWAIT);
		ASSERT_TRUE(n == CONG_MSG,
			    "sendto right after the uncongested notification: %ld (%s)",
			    n, n < 0 ? rt_errname(errno) : "short");
	} else {
		sync_peer("checked");
		/* the other port was never congested */
		n = recv_msg(c.rx2, buf, sizeof(buf), 0, &from, NULL);
		if (EXPECT_SYS_OK(n) >= 0 &&
		    check_msg(buf, n, 1, &seq, "uncongested port"))
			EXPECT_EQ(seq, 7);
		cong_drain(&c, 0, c.sent);
		sync_peer("drained");
		cong_drain(&c, c.sent, 1);
	}
	cong_end(&c);
}

/*
 * A blocking sender to a port congested across hosts waits, and goes on
 * once the receiver drains it; nothing is lost.
 */
struct blocked_send {
	struct cong *c;
	int pipe_w;
};

static void *blocked_send_main(void *arg)
{
	struct blocked_send *b = arg;
	long ret = cong_send(b->c->tx, &b->c->r, b->c->sent, 0);

	if (ret < 0)
		ret = -errno;
	if (write(b->pipe_w, &ret, sizeof(ret)) != sizeof(ret))
		_exit(RT_EXIT_FAIL);
	return NULL;
}

static void cong_blocking(int sender)
{
	struct blocked_send b;
	pthread_t thread;
	long long start;
	int pipefd[2];
	long result = 0;
	struct cong c;

	cong_start(&c, sender, 0);
	if (c.sending) {
		ASSERT_SYS_OK(pipe(pipefd));
		b.c = &c;
		b.pipe_w = pipefd[1];
		errno = pthread_create(&thread, NULL, blocked_send_main, &b);
		ASSERT_TRUE(!errno, "pthread_create: %s", rt_errname(errno));
		/* Still waiting while nobody reads ... */
		EXPECT_EQ(poll_fd(pipefd[0], POLLIN, 1000) & POLLIN, 0);
		sync_peer("blocked");
		/* ... and done once the receiver drained its queue. */
		start = rt_now_ms();
		if (!EXPECT_TRUE(poll_fd(pipefd[0], POLLIN, RCV_TIMEOUT_MS) & POLLIN,
				 "blocked sender still blocked %d ms after the drain began",
				 RCV_TIMEOUT_MS))
			rt_abort();
		rt_diag("the blocked sender went on %lld ms after the drain began",
			rt_now_ms() - start);
		EXPECT_EQ(read(pipefd[0], &result, sizeof(result)),
			  sizeof(result));
		if (result < 0)
			rt_fail("blocked sendto: %s", rt_errname(-result));
		EXPECT_EQ(result, CONG_MSG);
		pthread_join(thread, NULL);
		close(pipefd[0]);
		close(pipefd[1]);
	} else {
		sync_peer("blocked");
		cong_drain(&c, 0, c.sent + 1);
	}
	cong_end(&c);
}

void test_cong_enobufs_monitor_1to2(void)
{
	cong_enobufs_monitor(1);
}

void test_cong_enobufs_monitor_2to1(void)
{
	cong_enobufs_monitor(2);
}

void test_cong_blocking_1to2(void)
{
	cong_blocking(1);
}

void test_cong_blocking_2to1(void)
{
	cong_blocking(2);
}
