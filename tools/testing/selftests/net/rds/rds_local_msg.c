// SPDX-License-Identifier: GPL-2.0
/*
 * rds_local_msg.c - rds_local's cases of sendmsg and recvmsg.
 */
#include "rds_local.h"

/* ------------------------------------------------- sendmsg and recvmsg */

static void send_recv_boundaries(struct in_addr addr)
{
	static const size_t sizes[] = { 10, 3000, 200, 1, 4096 };
	struct sockaddr_in r, t;
	int rx = rds_bound(addr, 0, &r);
	int tx = rds_bound(addr, 0, &t);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		send_pattern(tx, sizes[i], i, &r);
	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		recv_pattern(rx, sizes[i], i, &t);
	expect_empty(rx);
	close(tx);
	close(rx);
}

ON_BOTH(send_recv_boundaries)

static void recv_msg_name(struct in_addr addr)
{
	struct sockaddr_storage ss;
	struct sockaddr_in r, t, *from = (struct sockaddr_in *)&ss;
	unsigned char *p = (unsigned char *)&ss;
	int rx = rds_bound(addr, 0, &r);
	int tx = rds_bound(addr, 0, &t);
	socklen_t len;
	char buf[16];
	unsigned int i;

	send_pattern(tx, 8, 1, &r);
	send_pattern(tx, 8, 2, &r);
	send_pattern(tx, 8, 3, &r);

	/* recvfrom() with room for any address: a sockaddr_in comes back. */
	memset(&ss, 0xa5, sizeof(ss));
	len = sizeof(ss);
	EXPECT_EQ(EXPECT_SYS_OK(recvfrom(rx, buf, sizeof(buf), 0,
					 (struct sockaddr *)&ss, &len)), 8);
	EXPECT_EQ(len, sizeof(struct sockaddr_in));
	expect_sin(from, &t, "recvfrom address");
	for (i = sizeof(struct sockaddr_in); i < sizeof(ss); i++)
		if (!EXPECT_TRUE(p[i] == 0xa5, "recvfrom wrote byte %u", i))
			break;

	/* A short address buffer: truncated, full length reported. */
	memset(&ss, 0xa5, sizeof(ss));
	len = 6;
	EXPECT_EQ(EXPECT_SYS_OK(recvfrom(rx, buf, sizeof(buf), 0,
					 (struct sockaddr *)&ss, &len)), 8);
	EXPECT_EQ(len, sizeof(struct sockaddr_in));
	EXPECT_TRUE(!memcmp(&ss, &t, 6), "truncated recvfrom address");
	EXPECT_EQ(p[6], 0xa5);

	/* No address asked for. */
	EXPECT_EQ(EXPECT_SYS_OK(recvfrom(rx, buf, sizeof(buf), 0, NULL, NULL)),
		  8);
	expect_empty(rx);
	close(tx);
	close(rx);
}

ON_BOTH(recv_msg_name)

static void message_sizes(struct in_addr addr)
{
	static const size_t sizes[] = { 0, 1, 4095, 4096, 4097, 65536,
					BIG_MSG - 1, BIG_MSG };
	struct sockaddr_in r, t;
	int rx = rds_bound(addr, 0, &r);
	int tx = rds_bound(addr, 0, &t);
	unsigned int i;

	make_room(tx, BIG_MSG, 0);
	make_room(rx, BIG_MSG, 0);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		send_pattern(tx, sizes[i], i, &r);
		recv_pattern(rx, sizes[i], i, &t);
	}
	expect_empty(rx);
	close(tx);
	close(rx);
}

ON_BOTH(message_sizes)

void test_message_too_big(void)
{
	struct sockaddr_in r;
	int rx = rds_bound(addr_main, 0, &r);
	int tx = rds_bound(addr_main, 0, NULL);
	size_t len = 2 * BIG_MSG;
	unsigned char *buf = xmalloc(len);
	struct iovec iov[2] = { { buf, BIG_MSG / 2 },
				{ buf + BIG_MSG / 2, BIG_MSG / 2 + 1 } };
	struct msghdr msg = { .msg_name = &r, .msg_namelen = sizeof(r),
			      .msg_iov = iov, .msg_iovlen = 2 };

	/* With room in the send buffer, only the 1 MiB limit refuses. */
	make_room(tx, len + 1, 0);
	memset(buf, 0x5a, len);
	EXPECT_SYS_ERR(sendto(tx, buf, BIG_MSG + 1, 0, (void *)&r, sizeof(r)),
		       EMSGSIZE);
	EXPECT_SYS_ERR(sendto(tx, buf, len, 0, (void *)&r, sizeof(r)),
		       EMSGSIZE);
	EXPECT_SYS_ERR(sendmsg(tx, &msg, 0), EMSGSIZE);
	flush_to(tx, addr_main);
	expect_empty(rx);
	free(buf);
	close(tx);
	close(rx);
}

/* A message may use at most half of the send buffer getsockopt() shows. */
void test_message_over_sndbuf(void)
{
	struct sockaddr_in r, t;
	int rx = rds_bound(addr_main, 0, &r);
	int tx = rds_bound(addr_main, 0, &t);
	unsigned char *buf;
	int half;

	ASSERT_SYS_OK(set_int_opt(tx, SOL_SOCKET, SO_SNDBUF, 16384));
	half = int_opt(tx, SOL_SOCKET, SO_SNDBUF) / 2;
	rt_diag("SO_SNDBUF reads %d after setting 16384", 2 * half);
	buf = xmalloc(half + 1);
	memset(buf, 0x3c, half + 1);
	EXPECT_SYS_ERR(sendto(tx, buf, half + 1, 0, (void *)&r, sizeof(r)),
		       EMSGSIZE);
	free(buf);
	send_pattern(tx, half, 9, &r);
	recv_pattern(rx, half, 9, &t);
	expect_empty(rx);
	close(tx);
	close(rx);
}

/* No implicit bind: an unbound socket cannot send. */
void test_send_unbound(void)
{
	struct sockaddr_in r, got;
	socklen_t len = sizeof(got);
	int rx = rds_bound(addr_main, 0, &r);
	int fd = rds_socket();

	EXPECT_SYS_ERR(sendto(fd, "x", 1, 0, (void *)&r, sizeof(r)), ENOTCONN);
	ASSERT_SYS_OK(connect(fd, (struct sockaddr *)&r, sizeof(r)));
	EXPECT_SYS_ERR(send(fd, "x", 1, 0), ENOTCONN);
	ASSERT_SYS_OK(getsockname(fd, (struct sockaddr *)&got, &len));
	EXPECT_TRUE(got.sin_port == 0 && got.sin_addr.s_addr == 0,
		    "sending bound the socket to %s", sin_str(&got));
	close(fd);
	fd = rds_bound(addr_main, 0, NULL);
	flush_to(fd, addr_main);
	expect_empty(rx);
	close(fd);
	close(rx);
}

void test_send_no_dest(void)
{
	struct iovec iov = { "x", 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	int fd = rds_bound(addr_main, 0, NULL);

	EXPECT_SYS_ERR(send(fd, "x", 1, 0), ENOTCONN);
	EXPECT_SYS_ERR(sendmsg(fd, &msg, 0), ENOTCONN);
	EXPECT_SYS_ERR(sendto(fd, "x", 1, 0, NULL, 0), ENOTCONN);
	close(fd);
}

void test_send_bad_args(void)
{
	static const struct {
		int flag;
		const char *name;
	} flags[] = {
		{ MSG_OOB, "MSG_OOB" }, { MSG_MORE, "MSG_MORE" },
		{ MSG_NOSIGNAL, "MSG_NOSIGNAL" }, { MSG_EOR, "MSG_EOR" },
		{ MSG_CONFIRM, "MSG_CONFIRM" },
	};
	struct sockaddr_storage ss;
	struct sockaddr_in r, *sin = (struct sockaddr_in *)&ss;
	void *sa = &ss;
	int rx = rds_bound(addr_main, 0, &r);
	int tx = rds_bound(addr_main, 0, NULL);
	unsigned int i;

	memset(&ss, 0, sizeof(ss));
	*sin = r;
	EXPECT_SYS_ERR(sendto(tx, "x", 1, 0, sa, sizeof(*sin) - 1), EINVAL);
	EXPECT_SYS_ERR(sendto(tx, "x", 1, 0, sa, 8), EINVAL);
	EXPECT_SYS_ERR(sendto(tx, "x", 1, 0, sa, sizeof(ss) + 1), EINVAL);
	EXPECT_SYS_ERR(sendto(tx, "x", 1, 0, KERNEL_PTR, sizeof(*sin)),
		       EFAULT);
	/* The socket layer ignores the length of a NULL address. */
	EXPECT_SYS_ERR(sendto(tx, "x", 1, 0, NULL, sizeof(*sin)), ENOTCONN);
	sin->sin_family = AF_UNIX;
	EXPECT_SYS_ERR(sendto(tx, "x", 1, 0, sa, sizeof(*sin)), EINVAL);
	sin->sin_family = AF_UNSPEC;
	EXPECT_SYS_ERR(sendto(tx, "x", 1, 0, sa, sizeof(*sin)), EINVAL);
	sin->sin_family = AF_INET6;	/* too short for a sockaddr_in6 */
	EXPECT_SYS_ERR(sendto(tx, "x", 1, 0, sa, sizeof(*sin)), EINVAL);

	sin_set(sin, in_addr_of("0.0.0.0"), ntohs(r.sin_port));
	EXPECT_SYS_ERR(sendto(tx, "x", 1, 0, sa, sizeof(*sin)), EINVAL);
	sin_set(sin, in_addr_of("255.255.255.255"), ntohs(r.sin_port));
	EXPECT_SYS_ERR(sendto(tx, "x", 1, 0, sa, sizeof(*sin)), EINVAL);
	sin_set(sin, in_addr_of("224.0.0.1"), ntohs(r.sin_port));
	EXPECT_SYS_ERR(sendto(tx, "x", 1, 0, sa, sizeof(*sin)), EINVAL);

	/* Only MSG_DONTWAIT and MSG_ZEROCOPY (rds_local_zcopy.c) are accepted. */
	for (i = 0; i < ARRAY_SIZE(flags); i++)
		if (!EXPECT_SYS_ERR(sendto(tx, "x", 1, flags[i].flag,
					   (void *)&r, sizeof(r)), EOPNOTSUPP))
			rt_diag("... with flag %s", flags[i].name);

	flush_to(tx, addr_main);
	expect_empty(rx);
	close(tx);
	close(rx);
}

/* A bad data pointer fails the call and queues nothing. */
void test_send_efault(void)
{
	struct sockaddr_in r, t;
	int rx = rds_bound(addr_main, 0, &r);
	int tx = rds_bound(addr_main, 0, &t);
	struct iovec iov[2] = { { "abc", 3 }, { NULL, 10 } };
	struct msghdr msg = { .msg_name = &r, .msg_namelen = sizeof(r),
			      .msg_iov = iov, .msg_iovlen = 2 };

	EXPECT_SYS_ERR(sendto(tx, NULL, 100, 0, (void *)&r, sizeof(r)),
		       EFAULT);
	EXPECT_SYS_ERR(sendto(tx, KERNEL_PTR, 100, 0, (void *)&r, sizeof(r)),
		       EFAULT);
	EXPECT_SYS_ERR(sendto(tx, TOP_PTR, 100, 0, (void *)&r, sizeof(r)),
		       EFAULT);
	EXPECT_SYS_ERR(sendmsg(tx, &msg, 0), EFAULT);
	msg.msg_iov = KERNEL_PTR;
	EXPECT_SYS_ERR(sendmsg(tx, &msg, 0), EFAULT);

	EXPECT_EQ(EXPECT_SYS_OK(sendto(tx, "good", 4, 0, (void *)&r,
				       sizeof(r))), 4);
	recv_text(rx, "good", &t);
	expect_empty(rx);
	close(tx);
	close(rx);
}

/* A bad buffer fails the receive and leaves the message queued. */
void test_recv_efault(void)
{
	struct sockaddr_in r, t;
	int rx = rds_bound(addr_main, 0, &r);
	int tx = rds_bound(addr_main, 0, &t);
	char small[2];
	struct iovec iov[2] = { { small, sizeof(small) }, { NULL, 100 } };
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };

	EXPECT_EQ(EXPECT_SYS_OK(sendto(tx, "hello", 5, 0, (void *)&r,
				       sizeof(r))), 5);
	EXPECT_SYS_ERR(recv(rx, NULL, 100, 0), EFAULT);
	EXPECT_SYS_ERR(recv(rx, KERNEL_PTR, 100, 0), EFAULT);
	EXPECT_SYS_ERR(recv(rx, TOP_PTR, 100, 0), EFAULT);
	EXPECT_SYS_ERR(recvmsg(rx, &msg, 0), EFAULT);
	EXPECT_SYS_ERR(recvmsg(rx, KERNEL_PTR, 0), EFAULT);
	recv_text(rx, "hello", &t);
	expect_empty(rx);
	close(tx);
	close(rx);
}

void test_recv_dontwait_empty(void)
{
	int fd = rds_bound(addr_main, 0, NULL);
	struct sockaddr_in a;
	char c;

	EXPECT_SYS_ERR(recv(fd, &c, 1, MSG_DONTWAIT), EAGAIN);
	close(fd);

	/* O_NONBLOCK makes every receive non-blocking. */
	fd = ASSERT_SYS_OK(socket(AF_RDS, SOCK_SEQPACKET | SOCK_NONBLOCK, 0));
	sin_set(&a, addr_main, 0);
	ASSERT_SYS_OK(bind(fd, (struct sockaddr *)&a, sizeof(a)));
	EXPECT_SYS_ERR(recv(fd, &c, 1, 0), EAGAIN);
	close(fd);

	/* Unbound: nothing can arrive, and it says so the same way. */
	fd = rds_socket();
	EXPECT_SYS_ERR(recv(fd, &c, 1, MSG_DONTWAIT), EAGAIN);
	close(fd);
}

/*
 * Distribution behaviour: a receive timeout (SO_RCVTIMEO) ends with
 * ETIMEDOUT, not EAGAIN as on most other sockets.
 */
void test_recv_timeout(void)
{
	int fd = rds_bound(addr_main, 0, NULL);
	long long start;
	char c;

	set_rcvtimeo(fd, 300);
	start = rt_now_ms();
	EXPECT_SYS_ERR(recv(fd, &c, 1, 0), ETIMEDOUT);
	EXPECT_TRUE(rt_now_ms() - start >= 250,
		    "recv returned after %lld ms, before the 300 ms timeout",
		    rt_now_ms() - start);
	close(fd);
}

/*
 * Distribution behaviour: MSG_OOB receives nothing and succeeds with 0;
 * MSG_ERRQUEUE reads the (empty) socket error queue.
 */
void test_recv_odd_flags(void)
{
	struct sockaddr_in r, t;
	int rx = rds_bound(addr_main, 0, &r);
	int tx = rds_bound(addr_main, 0, &t);
	char buf[16];

	EXPECT_SYS_ERR(recv(rx, buf, sizeof(buf), MSG_ERRQUEUE), EAGAIN);
	EXPECT_EQ(EXPECT_SYS_OK(sendto(tx, "data", 4, 0, (void *)&r,
				       sizeof(r))), 4);
	EXPECT_EQ(EXPECT_SYS_OK(recv(rx, buf, sizeof(buf),
				     MSG_OOB | MSG_DONTWAIT)), 0);
	recv_text(rx, "data", &t);
	close(tx);
	close(rx);
}

void test_recv_peek(void)
{
	struct sockaddr_in r, t, from;
	int rx = rds_bound(addr_main, 0, &r);
	int tx = rds_bound(addr_main, 0, &t);
	unsigned char buf[200];
	int flags, i;

	send_pattern(tx, 100, 4, &r);
	for (i = 0; i < 2; i++) {
		memset(buf, 0, sizeof(buf));
		EXPECT_EQ(EXPECT_SYS_OK(recv_msg(rx, buf, sizeof(buf),
						 MSG_PEEK, &from, &flags)),
			  100);
		expect_pattern(buf, 100, 4, "peeked message");
		expect_sin(&from, &t, "peeked sender");
		EXPECT_EQ(flags & MSG_TRUNC, 0);
	}
	/* A short peek is truncated but consumes nothing either. */
	EXPECT_EQ(EXPECT_SYS_OK(recv_msg(rx, buf, 10, MSG_PEEK, NULL,
					 &flags)), 10);
	EXPECT_TRUE(flags & MSG_TRUNC, "short peek: MSG_TRUNC not set");
	EXPECT_EQ(EXPECT_SYS_OK(recv_msg(rx, buf, 10, MSG_PEEK | MSG_TRUNC,
					 NULL, &flags)), 100);
	recv_pattern(rx, 100, 4, &t);
	expect_empty(rx);
	close(tx);
	close(rx);
}

void test_recv_trunc(void)
{
	struct sockaddr_in r, t;
	int rx = rds_bound(addr_main, 0, &r);
	int tx = rds_bound(addr_main, 0, &t);
	unsigned char buf[2000];
	int flags, i;

	/* Too small a buffer: the head of the message, the rest dropped. */
	send_pattern(tx, 1000, 5, &r);
	memset(buf, 0, sizeof(buf));
	EXPECT_EQ(EXPECT_SYS_OK(recv_msg(rx, buf, 100, 0, NULL, &flags)), 100);
	EXPECT_TRUE(flags & MSG_TRUNC, "MSG_TRUNC not set in msg_flags");
	expect_pattern(buf, 100, 5, "truncated message");
	expect_empty(rx);

	/* MSG_TRUNC asks for the real length; no more bytes are copied. */
	send_pattern(tx, 1000, 6, &r);
	memset(buf, 0xee, sizeof(buf));
	EXPECT_EQ(EXPECT_SYS_OK(recv_msg(rx, buf, 100, MSG_TRUNC, NULL,
					 &flags)), 1000);
	EXPECT_TRUE(flags & MSG_TRUNC, "MSG_TRUNC not set in msg_flags");
	expect_pattern(buf, 100, 6, "truncated message");
	for (i = 100; i < 2000; i++)
		if (!EXPECT_TRUE(buf[i] == 0xee, "byte %d written", i))
			break;
	expect_empty(rx);

	/* The usual probe for a datagram's length consumes it here. */
	send_pattern(tx, 1000, 7, &r);
	EXPECT_EQ(EXPECT_SYS_OK(recv(rx, NULL, 0, MSG_TRUNC)), 1000);
	expect_empty(rx);
	send_pattern(tx, 1000, 8, &r);
	EXPECT_EQ(EXPECT_SYS_OK(recv(rx, NULL, 0, 0)), 0);
	expect_empty(rx);

	/* An exact fit is not truncated. */
	send_pattern(tx, 1000, 9, &r);
	EXPECT_EQ(EXPECT_SYS_OK(recv_msg(rx, buf, 1000, 0, NULL, &flags)),
		  1000);
	EXPECT_EQ(flags & MSG_TRUNC, 0);
	expect_pattern(buf, 1000, 9, "exact fit");
	close(tx);
	close(rx);
}

#define ORDER_COUNT	1000

static void message_order(struct in_addr addr)
{
	struct sockaddr_in r, t, from;
	int rx = rds_bound(addr, 0, &r);
	int tx = rds_bound(addr, 0, &t);
	uint32_t seq, got[4];
	long ret;

	for (seq = 0; seq < ORDER_COUNT; seq++) {
		uint32_t msg[3] = { seq, ~seq, seq * 2654435761U };

		ret = ASSERT_SYS_OK(sendto(tx, msg, sizeof(msg), 0,
					   (void *)&r, sizeof(r)));
		ASSERT_EQ(ret, sizeof(msg));
	}
	for (seq = 0; seq < ORDER_COUNT; seq++) {
		ret = ASSERT_SYS_OK(recv_msg(rx, got, sizeof(got), 0, &from,
					     NULL));
		ASSERT_EQ(ret, 3 * sizeof(uint32_t));
		if (got[0] != seq || got[1] != ~seq ||
		    got[2] != seq * 2654435761U) {
			rt_fail("message %u of %u: got sequence %u",
				seq, ORDER_COUNT, got[0]);
			rt_abort();
		}
		if (seq == 0)
			expect_sin(&from, &t, "sender address");
	}
	expect_empty(rx);
	close(tx);
	close(rx);
}

ON_BOTH(message_order)

/* RDS drops a message for a port nobody is bound to, silently. */
void test_send_no_listener(void)
{
	struct sockaddr_in gone;
	int fd = rds_bound(addr_main, 0, &gone);
	int tx = rds_bound(addr_main, 0, NULL);

	close(fd);	/* now nobody has that port */
	EXPECT_EQ(EXPECT_SYS_OK(sendto(tx, "void", 4, 0, (void *)&gone,
				       sizeof(gone))), 4);
	EXPECT_EQ(EXPECT_SYS_OK(sendto(tx, "void", 4, MSG_DONTWAIT,
				       (void *)&gone, sizeof(gone))), 4);
	flush_to(tx, addr_main);	/* and the connection still works */
	close(tx);
}
