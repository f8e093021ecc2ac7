/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rds_local.h - what the files of rds_local share: the addresses it runs
 * on, the helpers of its cases and the cases themselves, which
 * rds_local.c lists in its table.  Each rds_local_*.c holds the cases of
 * one topic:
 *
 *   rds_local_sock.c	socket(), bind(), connect(), getsockname/getpeername
 *   rds_local_msg.c	sendmsg and recvmsg
 *   rds_local_cong.c	poll() and congestion control
 *   rds_local_opts.c	socket options, closed sockets, interrupted
 *			receives, many sockets, stress
 *   rds_local_info.c	RDS_INFO tables, ioctl, connection reaping,
 *			timestamps
 *   rds_local_rdma.c	RDMA notifications
 *   rds_local_netns.c	network namespaces
 *   rds_local_zcopy.c	zero-copy sends
 */
#ifndef RDS_LOCAL_H
#define RDS_LOCAL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>

#include <linux/rds.h>
#include <linux/time_types.h>

#include "rds_test.h"
#include "rds_sock_util.h"

#define RCV_TIMEOUT_MS	10000	/* how long a case waits for a message */
#define BIG_MSG		(1 << 20)	/* the largest message RDS takes */

/* Addresses no caller can have a user pointer to. */
#define KERNEL_PTR	((void *)0xffffffff81000000UL)
#define TOP_PTR		((void *)-4096L)

/* The main address (RDS_ADDR, else 127.0.0.1) and 127.0.0.1: rds_local.c */
extern struct in_addr addr_main, addr_lo;
extern char addr_main_str[INET_ADDRSTRLEN];
extern int main_is_lo;

/* ---------------------------------------------------------------- helpers */

static inline struct in_addr in_addr_of(const char *dotted)
{
	struct in_addr a;

	if (inet_pton(AF_INET, dotted, &a) != 1)
		a.s_addr = htonl(INADDR_NONE);
	return a;
}

/* Expect *got to be AF_INET addr:port with sin_zero cleared. */
static inline int expect_sin(const struct sockaddr_in *got,
			     const struct sockaddr_in *want, const char *what)
{
	static const unsigned char zero[sizeof(got->sin_zero)];

	if (got->sin_family == AF_INET &&
	    got->sin_addr.s_addr == want->sin_addr.s_addr &&
	    got->sin_port == want->sin_port &&
	    !memcmp(got->sin_zero, zero, sizeof(zero)))
		return 1;
	rt_fail("%s: expected %s, got %s%s", what, sin_str(want), sin_str(got),
		memcmp(got->sin_zero, zero, sizeof(zero)) ?
		" (sin_zero not cleared)" : "");
	return 0;
}

/*
 * A socket bound to addr:port (port 0: any), its bound address in *out if
 * out is not NULL.  Receives wait RCV_TIMEOUT_MS at most.
 */
static inline int rds_bound(struct in_addr addr, unsigned short port,
			    struct sockaddr_in *out)
{
	return rds_bound_at(addr, port, out, RCV_TIMEOUT_MS);
}

/* Expect buf to hold the pattern; report the first difference. */
static inline int expect_pattern(const unsigned char *buf, size_t len,
				 unsigned int seed, const char *what)
{
	size_t i = pattern_mismatch(buf, len, seed);
	unsigned char want[4];

	if (i == len)
		return 1;
	fill_pattern(want, sizeof(want), seed + (uint32_t)(i >> 2) * 0x9e3779b9U);
	rt_fail("%s: byte %zu of %zu is %#x, expected %#x", what, i, len,
		buf[i], want[i & 3]);
	return 0;
}

/* Send len pattern bytes to *to; the whole message must be taken. */
static inline void send_pattern(int fd, size_t len, unsigned int seed,
				const struct sockaddr_in *to)
{
	unsigned char *buf = xmalloc(len);
	long ret;

	fill_pattern(buf, len, seed);
	ret = ASSERT_SYS_OK(sendto(fd, buf, len, 0, (const void *)to,
				   sizeof(*to)));
	ASSERT_EQ(ret, len);
	free(buf);
}

/*
 * Receive one message that must be exactly len pattern bytes of this seed,
 * from *from when from is not NULL, not truncated.
 */
static inline void recv_pattern(int fd, size_t len, unsigned int seed,
				const struct sockaddr_in *from)
{
	size_t room = len + 64;
	unsigned char *buf = xmalloc(room);
	struct sockaddr_in src;
	int flags = 0;
	long ret;

	memset(buf, 0, room);
	ret = ASSERT_SYS_OK(recv_msg(fd, buf, room, 0, &src, &flags));
	EXPECT_EQ(ret, len);
	EXPECT_EQ(flags & MSG_TRUNC, 0);
	if (ret == (long)len)
		expect_pattern(buf, len, seed, "received message");
	if (from)
		expect_sin(&src, from, "sender address");
	free(buf);
}

/* Receive one message that must be exactly the string text, from *from. */
static inline void recv_text(int fd, const char *text, const struct sockaddr_in *from)
{
	size_t len = strlen(text);
	char buf[256];
	struct sockaddr_in src;
	long ret;

	memset(buf, 0, sizeof(buf));
	ret = ASSERT_SYS_OK(recv_msg(fd, buf, sizeof(buf), 0, &src, NULL));
	if (ret != (long)len || memcmp(buf, text, len))
		rt_fail("expected the message '%s', got '%.*s'", text,
			(int)(ret > 0 ? ret : 0), buf);
	if (from)
		expect_sin(&src, from, "sender address");
}

/*
 * Wait until everything fd sent to addr so far has been delivered or
 * dropped: one connection carries a socket's messages to one address in
 * order, so once a marker sent after them reached a fresh socket there,
 * they have been dealt with.  Transports other than loopback deliver
 * asynchronously.
 */
static inline void flush_to(int fd, struct in_addr addr)
{
	struct sockaddr_in p;
	int probe = rds_bound(addr, 0, &p);

	EXPECT_EQ(EXPECT_SYS_OK(sendto(fd, "flush", 5, 0, (void *)&p,
				       sizeof(p))), 5);
	recv_text(probe, "flush", NULL);
	close(probe);
}

/*
 * poll() a socket that should not be readable.  The distribution reports
 * POLLIN once after each congestion map update in the system (to sockets
 * without RDS_CONG_MONITOR), so give such a stale report a few tries to
 * clear before judging.
 */
static inline int poll_settled(int fd)
{
	int i, rev = 0;

	for (i = 0; i < 4; i++) {
		rev = poll_fd(fd, POLLIN | POLLOUT, 0);
		if (!(rev & POLLIN))
			break;
		rt_sleep_ms(20);
	}
	if (i)
		rt_diag("POLLIN with nothing to read cleared after %d polls",
			i + 1);
	return rev;
}

/* Signals for the interruption cases. */
extern volatile sig_atomic_t signals_seen;

static inline void on_sigusr1(int sig)
{
	(void)sig;
	signals_seen++;
}

static inline void catch_sigusr1(int restart)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigusr1;
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigemptyset(&sa.sa_mask);
	ASSERT_SYS_OK(sigaction(SIGUSR1, &sa, NULL));
}

/*
 * A thread that sends SIGUSR1 to a blocked thread after signal_ms and, if
 * send_ms is not 0, then sends a message from fd to *to after send_ms more.
 */
struct kicker {
	pthread_t target, thread;
	int signal_ms, send_ms;
	int fd;
	struct sockaddr_in to;
};

static inline void *kicker_main(void *arg)
{
	struct kicker *k = arg;

	rt_sleep_ms(k->signal_ms);
	pthread_kill(k->target, SIGUSR1);
	if (k->send_ms) {
		rt_sleep_ms(k->send_ms);
		if (sendto(k->fd, "late", 4, 0, (struct sockaddr *)&k->to,
			   sizeof(k->to)) != 4)
			rt_diag("kicker: sendto: %s", rt_errname(errno));
	}
	return NULL;
}

static inline void kicker_start(struct kicker *k)
{
	k->target = pthread_self();
	errno = pthread_create(&k->thread, NULL, kicker_main, k);
	ASSERT_TRUE(!errno, "pthread_create: %s", rt_errname(errno));
}

/* Congestion needs a transport that bounds the receive queue. */
static inline void need_congestion(void)
{
	if (main_is_lo)
		rt_skip("127/8 never congests with the distribution's RDS; %s",
			"set RDS_ADDR to an interface address");
}

/*
 * .250 of the main address's /24: no guest of the bench has it, so a
 * connection to it never comes up and what is sent there stays queued.
 */
static inline struct in_addr nobody_addr(void)
{
	struct in_addr nobody;

	if (main_is_lo)
		rt_skip("needs RDS_ADDR: local delivery has no send queue");
	nobody.s_addr = htonl((ntohl(addr_main.s_addr) & ~0xffu) | 250);
	return nobody;
}

/*
 * The core cases run on the main address and again on 127.0.0.1 (which
 * the distribution always serves with its loopback transport).
 */
#define ON_BOTH(fn)							\
void test_##fn(void)							\
{									\
	fn(addr_main);							\
}									\
void test_##fn##_lo(void)						\
{									\
	if (main_is_lo)							\
		rt_skip("the main address is already on 127/8");	\
	fn(addr_lo);							\
}

/* The cases, in the order of rds_local.c's table. */
void test_name(void);
void test_name(void);
void test_socket_create(void);
void test_socket_bad_type(void);
void test_bind_rds_addr(void);
void test_bind_explicit_port(void);
void test_bind_port_zero(void);
void test_bind_addr_in_use(void);
void test_bind_nonlocal(void);
void test_bind_bad_args(void);
void test_bind_reserved_port(void);
void test_bind_twice(void);
void test_connect_default_dest(void);
void test_connect_default_dest_lo(void);
void test_getpeername_unconnected(void);
void test_connect_bad_args(void);
void test_getsockname_unbound(void);
void test_getname_bad_args(void);
void test_v4mapped_addrs(void);
void test_send_recv_boundaries(void);
void test_send_recv_boundaries_lo(void);
void test_recv_msg_name(void);
void test_recv_msg_name_lo(void);
void test_message_sizes(void);
void test_message_sizes_lo(void);
void test_message_too_big(void);
void test_message_over_sndbuf(void);
void test_send_unbound(void);
void test_send_no_dest(void);
void test_send_bad_args(void);
void test_send_efault(void);
void test_recv_efault(void);
void test_recv_dontwait_empty(void);
void test_recv_timeout(void);
void test_recv_odd_flags(void);
void test_recv_peek(void);
void test_recv_trunc(void);
void test_message_order(void);
void test_message_order_lo(void);
void test_send_no_listener(void);
void test_poll_plain(void);
void test_poll_monitored(void);
void test_poll_wakeup(void);
void test_cong_enobufs_lo(void);
void test_cong_enobufs(void);
void test_cong_empty_messages(void);
void test_cong_blocking_sender(void);
void test_cong_monitor(void);
void test_cong_send_eintr(void);
void test_opt_transport(void);
void test_opt_recverr(void);
void test_opt_cancel_sent_to(void);
void test_opt_cong_monitor(void);
void test_opt_rxpath_latency(void);
void test_opt_unknown(void);
void test_close_with_queued(void);
void test_close_with_queued_lo(void);
void test_recv_eintr(void);
void test_recv_restart(void);
void test_many_sockets(void);
void test_many_sockets_lo(void);
void test_stress_many_senders(void);
void test_stress_close_receiver(void);
void test_info_sockets(void);
void test_info_send_messages(void);
void test_rdma_cancel_sent_to(void);
void test_rdma_note_needs_room(void);
void test_rdma_note_bound(void);
void test_rdma_local_copy(void);
void test_rdma_local_keys(void);
void test_info_bad_args(void);
void test_conn_reap(void);
void test_conn_reap_cached(void);
void test_ioctl_tos(void);
void test_rx_timestamp(void);

/* rds_local_netns.c */
void test_netns_isolation(void);
void test_netns_limits(void);

void test_zcopy_errnos(void);
void test_zcopy_local_bytes(void);
void test_zcopy_completions(void);
void test_zcopy_queue_bound(void);
void test_zcopy_memlock(void);
void test_zcopy_close_inflight(void);

#endif /* RDS_LOCAL_H */
