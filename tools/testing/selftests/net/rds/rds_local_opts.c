// SPDX-License-Identifier: GPL-2.0
/*
 * rds_local_opts.c - rds_local's cases of socket options, closed sockets,
 * interrupted receives, many sockets and stress.
 */
#include "rds_local.h"

/* ------------------------------------------------------ socket options */

void test_opt_transport(void)
{
	static const int bad[] = { -1, RDS_TRANS_COUNT, 100, -2147483647 - 1 };
	socklen_t len;
	unsigned int i;
	int fd = rds_socket(), val;
	long long two = 2;

	EXPECT_EQ(int_opt(fd, SOL_RDS, SO_RDS_TRANSPORT), RDS_TRANS_NONE);

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		EXPECT_SYS_ERR(set_int_opt(fd, SOL_RDS, SO_RDS_TRANSPORT,
					   bad[i]), EINVAL);
	/* A number in range with no transport behind it (1 was iWARP). */
	EXPECT_SYS_ERR(set_int_opt(fd, SOL_RDS, SO_RDS_TRANSPORT,
				   RDS_TRANS_GAP), ENOPROTOOPT);
	/* The option takes exactly an int. */
	val = RDS_TRANS_TCP;
	EXPECT_SYS_ERR(setsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &val, 2),
		       EINVAL);
	EXPECT_SYS_ERR(setsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &two,
				  sizeof(two)), EINVAL);
	EXPECT_SYS_ERR(setsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, NULL,
				  sizeof(int)), EFAULT);
	len = 2;
	EXPECT_SYS_ERR(getsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &val, &len),
		       EINVAL);
	EXPECT_SYS_ERR(getsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &val, NULL),
		       EFAULT);
	len = sizeof(val);
	EXPECT_SYS_ERR(getsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, NULL, &len),
		       EFAULT);
	/* Failed attempts changed nothing. */
	EXPECT_EQ(int_opt(fd, SOL_RDS, SO_RDS_TRANSPORT), RDS_TRANS_NONE);
	close(fd);

	/* Binding picks a transport; after that it is fixed. */
	fd = rds_bound(addr_main, 0, NULL);
	val = int_opt(fd, SOL_RDS, SO_RDS_TRANSPORT);
	rt_diag("a socket bound to %s reports transport %d", addr_main_str,
		val);
	EXPECT_SYS_ERR(set_int_opt(fd, SOL_RDS, SO_RDS_TRANSPORT,
				   RDS_TRANS_TCP), EOPNOTSUPP);
	/* Even a bad value: the bound state is checked first. */
	EXPECT_SYS_ERR(set_int_opt(fd, SOL_RDS, SO_RDS_TRANSPORT, 100),
		       EOPNOTSUPP);
	close(fd);
}

void test_opt_recverr(void)
{
	int fd = rds_socket(), val = 1;
	socklen_t len;

	EXPECT_EQ(int_opt(fd, SOL_RDS, RDS_RECVERR), 0);
	EXPECT_SYS_OK(set_int_opt(fd, SOL_RDS, RDS_RECVERR, 1));
	EXPECT_EQ(int_opt(fd, SOL_RDS, RDS_RECVERR), 1);
	EXPECT_SYS_OK(set_int_opt(fd, SOL_RDS, RDS_RECVERR, 0));
	EXPECT_EQ(int_opt(fd, SOL_RDS, RDS_RECVERR), 0);
	/* Any nonzero value reads back as 1. */
	EXPECT_SYS_OK(set_int_opt(fd, SOL_RDS, RDS_RECVERR, 7));
	EXPECT_EQ(int_opt(fd, SOL_RDS, RDS_RECVERR), 1);

	EXPECT_SYS_ERR(setsockopt(fd, SOL_RDS, RDS_RECVERR, &val, 2), EINVAL);
	EXPECT_SYS_ERR(setsockopt(fd, SOL_RDS, RDS_RECVERR, NULL, sizeof(val)),
		       EFAULT);
	len = 2;
	EXPECT_SYS_ERR(getsockopt(fd, SOL_RDS, RDS_RECVERR, &val, &len),
		       EINVAL);
	len = sizeof(val);
	EXPECT_SYS_ERR(getsockopt(fd, SOL_RDS, RDS_RECVERR, KERNEL_PTR, &len),
		       EFAULT);
	EXPECT_EQ(int_opt(fd, SOL_RDS, RDS_RECVERR), 1);
	close(fd);
}

void test_opt_cancel_sent_to(void)
{
	struct sockaddr_in r;
	int rx = rds_bound(addr_main, 0, &r);
	int fd = rds_socket();

	/* Unbound: nothing of ours can be queued anywhere. */
	EXPECT_SYS_ERR(setsockopt(fd, SOL_RDS, RDS_CANCEL_SENT_TO, &r,
				  sizeof(r)), ENOTCONN);
	close(fd);

	fd = rds_bound(addr_main, 0, NULL);
	EXPECT_SYS_OK(setsockopt(fd, SOL_RDS, RDS_CANCEL_SENT_TO, &r,
				 sizeof(r)));
	EXPECT_SYS_ERR(setsockopt(fd, SOL_RDS, RDS_CANCEL_SENT_TO, &r,
				  sizeof(r) - 1), EINVAL);
	EXPECT_SYS_ERR(setsockopt(fd, SOL_RDS, RDS_CANCEL_SENT_TO, NULL,
				  sizeof(r)), EFAULT);
	/* Later messages are not affected. */
	EXPECT_EQ(EXPECT_SYS_OK(sendto(fd, "after", 5, 0, (void *)&r,
				       sizeof(r))), 5);
	recv_text(rx, "after", NULL);
	close(fd);
	close(rx);
}

void test_opt_cong_monitor(void)
{
	int fd = rds_bound(addr_main, 0, NULL), val = 1;
	socklen_t len = sizeof(val);

	EXPECT_SYS_OK(set_int_opt(fd, SOL_RDS, RDS_CONG_MONITOR, 1));
	EXPECT_SYS_OK(set_int_opt(fd, SOL_RDS, RDS_CONG_MONITOR, 0));
	EXPECT_SYS_OK(set_int_opt(fd, SOL_RDS, RDS_CONG_MONITOR, 1));
	EXPECT_SYS_ERR(setsockopt(fd, SOL_RDS, RDS_CONG_MONITOR, &val, 2),
		       EINVAL);
	EXPECT_SYS_ERR(setsockopt(fd, SOL_RDS, RDS_CONG_MONITOR, NULL,
				  sizeof(val)), EFAULT);
	/* It can be set, not read. */
	EXPECT_SYS_ERR(getsockopt(fd, SOL_RDS, RDS_CONG_MONITOR, &val, &len),
		       ENOPROTOOPT);
	close(fd);
}

/*
 * Distribution behaviour: SO_RDS_MSG_RXPATH_LATENCY reports a wrong size
 * or a bad trace point as EFAULT, not EINVAL.
 */
void test_opt_rxpath_latency(void)
{
	struct rds_rx_trace_so trace;
	int fd = rds_socket();
	char big[16];

	memset(&trace, 0, sizeof(trace));
	EXPECT_SYS_OK(setsockopt(fd, SOL_RDS, SO_RDS_MSG_RXPATH_LATENCY,
				 &trace, sizeof(trace)));
	trace.rx_traces = 1;
	trace.rx_trace_pos[0] = RDS_MSG_RX_DGRAM_REASSEMBLE;
	EXPECT_SYS_OK(setsockopt(fd, SOL_RDS, SO_RDS_MSG_RXPATH_LATENCY,
				 &trace, sizeof(trace)));
	trace.rx_trace_pos[0] = RDS_MSG_RX_DGRAM_TRACE_MAX;
	EXPECT_SYS_ERR(setsockopt(fd, SOL_RDS, SO_RDS_MSG_RXPATH_LATENCY,
				  &trace, sizeof(trace)), EFAULT);
	trace.rx_traces = RDS_MSG_RX_DGRAM_TRACE_MAX + 1;
	EXPECT_SYS_ERR(setsockopt(fd, SOL_RDS, SO_RDS_MSG_RXPATH_LATENCY,
				  &trace, sizeof(trace)), EFAULT);
	memset(big, 0, sizeof(big));
	EXPECT_SYS_ERR(setsockopt(fd, SOL_RDS, SO_RDS_MSG_RXPATH_LATENCY,
				  big, sizeof(big)), EFAULT);
	close(fd);
}

void test_opt_unknown(void)
{
	static const int set_names[] = { 0, 4, 9, 11, 99, RDS_INFO_SOCKETS };
	static const int get_names[] = { 0, RDS_CANCEL_SENT_TO, RDS_GET_MR,
					 RDS_FREE_MR, 4, RDS_CONG_MONITOR,
					 RDS_GET_MR_FOR_DEST, 9, 99,
					 RDS_INFO_FIRST - 1,
					 RDS_INFO_LAST + 1 };
	int fd = rds_socket(), val = 1;
	socklen_t len;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(set_names); i++)
		if (!EXPECT_SYS_ERR(set_int_opt(fd, SOL_RDS, set_names[i], 1),
				    ENOPROTOOPT))
			rt_diag("... setsockopt(SOL_RDS, %d)", set_names[i]);
	for (i = 0; i < ARRAY_SIZE(get_names); i++) {
		len = sizeof(val);
		if (!EXPECT_SYS_ERR(getsockopt(fd, SOL_RDS, get_names[i], &val,
					       &len), ENOPROTOOPT))
			rt_diag("... getsockopt(SOL_RDS, %d)", get_names[i]);
	}

	/* Every level but SOL_SOCKET and SOL_RDS is unknown to RDS. */
	EXPECT_SYS_ERR(set_int_opt(fd, SOL_IP, IP_TOS, 0x10), ENOPROTOOPT);
	EXPECT_SYS_ERR(set_int_opt(fd, SOL_IP, IP_TTL, 5), ENOPROTOOPT);
	EXPECT_SYS_ERR(set_int_opt(fd, IPPROTO_TCP, 1 /* TCP_NODELAY */, 1),
		       ENOPROTOOPT);
	len = sizeof(val);
	EXPECT_SYS_ERR(getsockopt(fd, SOL_IP, IP_TOS, &val, &len),
		       ENOPROTOOPT);
	EXPECT_SYS_ERR(set_int_opt(fd, SOL_RDS + 1, SO_RDS_TRANSPORT, 0),
		       ENOPROTOOPT);
	/* SOL_SOCKET is the socket layer's and works. */
	EXPECT_SYS_OK(set_int_opt(fd, SOL_SOCKET, SO_SNDBUF, 65536));
	EXPECT_TRUE(int_opt(fd, SOL_SOCKET, SO_SNDBUF) >= 65536,
		    "SO_SNDBUF did not stick");
	close(fd);
}

/* ----------------------------------------------------- closed sockets */

static void close_with_queued(struct in_addr addr)
{
	struct sockaddr_in r, t, got;
	socklen_t len = sizeof(got);
	int rx = rds_bound(addr, 0, &r);
	int tx = rds_bound(addr, 0, &t);
	int i, old = rx;
	char c;

	for (i = 0; i < 5; i++)
		send_pattern(tx, 3000, i, &r);
	flush_to(tx, addr);	/* all five are queued now */
	ASSERT_SYS_OK(close(rx));

	/* The descriptor is gone (nothing reopened it meanwhile). */
	EXPECT_SYS_ERR(recv(old, &c, 1, MSG_DONTWAIT), EBADF);
	EXPECT_SYS_ERR(send(old, "x", 1, 0), EBADF);
	EXPECT_SYS_ERR(getsockname(old, (struct sockaddr *)&got, &len),
		       EBADF);
	EXPECT_SYS_ERR(close(old), EBADF);

	/* Sending to the closed port is silently dropped. */
	EXPECT_EQ(EXPECT_SYS_OK(sendto(tx, "lost", 4, 0, (void *)&r,
				       sizeof(r))), 4);
	flush_to(tx, addr);	/* dropped now, not left for the next socket */

	/* A new socket on that port starts empty. */
	rx = rds_socket();
	set_rcvtimeo(rx, RCV_TIMEOUT_MS);
	ASSERT_SYS_OK(bind(rx, (struct sockaddr *)&r, sizeof(r)));
	expect_empty(rx);
	EXPECT_EQ(EXPECT_SYS_OK(sendto(tx, "fresh", 5, 0, (void *)&r,
				       sizeof(r))), 5);
	recv_text(rx, "fresh", &t);
	expect_empty(rx);
	close(rx);
	close(tx);
}

ON_BOTH(close_with_queued)

/* ---------------------------------------------- interrupted receives */

void test_recv_eintr(void)
{
	struct kicker k = { .signal_ms = 300 };
	int fd = rds_bound(addr_main, 0, NULL);
	long long start;
	char c;

	set_rcvtimeo(fd, 0);	/* block for good */
	catch_sigusr1(0);
	kicker_start(&k);
	start = rt_now_ms();
	EXPECT_SYS_ERR(recv(fd, &c, 1, 0), EINTR);
	EXPECT_TRUE(rt_now_ms() - start >= 200,
		    "recv returned after %lld ms, before the signal",
		    rt_now_ms() - start);
	EXPECT_EQ(signals_seen, 1);
	pthread_join(k.thread, NULL);
	close(fd);
}

/* With SA_RESTART the receive goes on after the handler. */
void test_recv_restart(void)
{
	struct sockaddr_in r;
	int rx = rds_bound(addr_main, 0, &r);
	struct kicker k = { .signal_ms = 200, .send_ms = 300 };
	char buf[8];

	set_rcvtimeo(rx, 0);
	k.fd = rds_bound(addr_main, 0, NULL);
	k.to = r;
	catch_sigusr1(1);
	kicker_start(&k);
	EXPECT_EQ(EXPECT_SYS_OK(recv(rx, buf, sizeof(buf), 0)), 4);
	EXPECT_EQ(signals_seen, 1);
	pthread_join(k.thread, NULL);
	close(k.fd);
	close(rx);
}

/* ------------------------------------------------------- many sockets */

#define MANY	64

static void many_sockets(struct in_addr addr)
{
	struct sockaddr_in r[MANY], t;
	int rx[MANY], tx = rds_bound(addr, 0, &t);
	char want[32], buf[64];
	int i, j, round;
	long ret;

	for (i = 0; i < MANY; i++) {
		rx[i] = rds_bound(addr, 0, &r[i]);
		for (j = 0; j < i; j++)
			ASSERT_TRUE(r[i].sin_port != r[j].sin_port,
				    "sockets %d and %d share port %u", i, j,
				    ntohs(r[i].sin_port));
	}
	/* Two rounds, interleaved across the receivers, in reverse. */
	for (round = 0; round < 2; round++)
		for (i = MANY - 1; i >= 0; i--) {
			ret = snprintf(want, sizeof(want), "to %d round %d",
				       i, round);
			EXPECT_EQ(EXPECT_SYS_OK(sendto(tx, want, ret, 0,
						       (void *)&r[i],
						       sizeof(r[i]))), ret);
		}
	for (i = 0; i < MANY; i++) {
		for (round = 0; round < 2; round++) {
			snprintf(want, sizeof(want), "to %d round %d", i,
				 round);
			memset(buf, 0, sizeof(buf));
			ret = EXPECT_SYS_OK(recv(rx[i], buf, sizeof(buf) - 1,
						 0));
			EXPECT_TRUE(!strcmp(buf, want),
				    "socket %d: expected '%s', got '%s'", i,
				    want, buf);
		}
		expect_empty(rx[i]);
		close(rx[i]);
	}
	close(tx);
}

ON_BOTH(many_sockets)

/* ------------------------------------------------------------- stress */

#define STRESS_SENDERS	6
#define STRESS_MSGS	150
#define STRESS_LEN	700

struct stress_sender {
	pthread_t thread;
	struct sockaddr_in dst;
	int fd;
	int id;
	int sent;		/* messages sendto() accepted */
	int err;		/* errno of the first failure, or 0 */
};

/* Each message: sender id, its sequence number, then a pattern of both. */
static void stress_fill(unsigned char *buf, int id, int seq)
{
	int i;

	buf[0] = id;
	buf[1] = seq & 0xff;
	buf[2] = seq >> 8;
	for (i = 3; i < STRESS_LEN; i++)
		buf[i] = (unsigned char)(id * 31 + seq * 7 + i);
}

static void *stress_send_main(void *arg)
{
	struct stress_sender *s = arg;
	unsigned char buf[STRESS_LEN];

	for (s->sent = 0; s->sent < STRESS_MSGS; s->sent++) {
		stress_fill(buf, s->id, s->sent);
		if (sendto(s->fd, buf, sizeof(buf), 0, (struct sockaddr *)&s->dst,
			   sizeof(s->dst)) != sizeof(buf)) {
			s->err = errno;
			break;
		}
	}
	return NULL;
}

static void stress_start(struct stress_sender *snd, int n,
			 const struct sockaddr_in *dst)
{
	int i;

	for (i = 0; i < n; i++) {
		snd[i].fd = rds_bound(addr_main, 0, NULL);
		snd[i].dst = *dst;
		snd[i].id = i;
		errno = pthread_create(&snd[i].thread, NULL, stress_send_main,
				       &snd[i]);
		ASSERT_TRUE(!errno, "pthread_create: %s", rt_errname(errno));
	}
}

/*
 * Many senders at once, blocking, to one receiver with a small buffer:
 * they run into congestion again and again.  Every message arrives
 * exactly once, intact, and in order per sender.
 */
void test_stress_many_senders(void)
{
	struct stress_sender snd[STRESS_SENDERS];
	unsigned char buf[STRESS_LEN + 1], want[STRESS_LEN];
	int next[STRESS_SENDERS] = { 0 };
	struct sockaddr_in r;
	int rx, i, got = 0, bad = 0;
	ssize_t n;

	rx = rds_bound(addr_main, 0, &r);
	set_int_opt(rx, SOL_SOCKET, SO_RCVBUF, 8 * STRESS_LEN);
	memset(snd, 0, sizeof(snd));
	stress_start(snd, STRESS_SENDERS, &r);

	while (got < STRESS_SENDERS * STRESS_MSGS) {
		n = recv(rx, buf, sizeof(buf), 0);
		if (n < 0) {
			rt_fail("after %d messages: recv: %s", got,
				rt_errname(errno));
			break;
		}
		got++;
		if (n != STRESS_LEN || buf[0] >= STRESS_SENDERS) {
			bad++;
			continue;
		}
		stress_fill(want, buf[0], next[buf[0]]);
		if (memcmp(buf, want, STRESS_LEN))
			bad++;	/* damaged, duplicated or out of order */
		else
			next[buf[0]]++;
	}
	for (i = 0; i < STRESS_SENDERS; i++) {
		pthread_join(snd[i].thread, NULL);
		EXPECT_EQ(snd[i].err, 0);
		EXPECT_EQ(snd[i].sent, STRESS_MSGS);
		EXPECT_EQ(next[i], STRESS_MSGS);
		close(snd[i].fd);
	}
	EXPECT_EQ(bad, 0);
	expect_empty(rx);
	close(rx);
}

/*
 * The receiver goes away while senders are blocked on its congested
 * port: they are released (their messages are dropped, as for any port
 * nobody is bound to), nobody hangs and nothing fails.
 */
void test_stress_close_receiver(void)
{
	struct stress_sender snd[STRESS_SENDERS];
	struct sockaddr_in r;
	int rx, i;

	need_congestion();
	rx = rds_bound(addr_main, 0, &r);
	set_int_opt(rx, SOL_SOCKET, SO_RCVBUF, 4 * STRESS_LEN);
	memset(snd, 0, sizeof(snd));
	stress_start(snd, STRESS_SENDERS, &r);
	rt_sleep_ms(500);	/* let them fill the queue and block */
	close(rx);
	for (i = 0; i < STRESS_SENDERS; i++) {
		pthread_join(snd[i].thread, NULL);
		EXPECT_EQ(snd[i].err, 0);
		EXPECT_EQ(snd[i].sent, STRESS_MSGS);
		close(snd[i].fd);
	}
}
