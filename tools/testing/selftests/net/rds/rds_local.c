// SPDX-License-Identifier: GPL-2.0
/*
 * rds_local - the RDS socket family on one node, with local delivery only.
 *
 * Every case talks to sockets of the same host: on the main address
 * (RDS_ADDR, the guest's own address, else 127.0.0.1) and, for the core
 * send/receive cases, once more on 127.0.0.1.  The expected errnos are
 * those of the distribution's net/rds (Debian's 6.1 kernel), which is the
 * reference: the project's module must behave the same.
 *
 * What the distribution does that matters here:
 *  - A socket bound to 127.0.0.0/8 uses the loopback transport, and the
 *    loopback transport never marks a port congested (its receive queue is
 *    not bounded by SO_RCVBUF).  The congestion cases therefore need the
 *    main address to be a real interface address with a transport
 *    (rds_rdma or rds_tcp) loaded, and skip otherwise.
 *  - Without RDS_CONG_MONITOR, poll() reports POLLIN (and POLLWRBAND) once
 *    after any congestion map update anywhere in the system, so the plain
 *    poll cases let POLLIN settle before they expect it clear; the
 *    monitoring cases expect exact results.
 *
 * Usage: rds_local [-l] [CASE...]	(-l lists the cases)
 * Environment: RDS_ADDR, RDS_MODULES (none: skip all if AF_RDS is missing).
 */
#define _GNU_SOURCE
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

static struct in_addr addr_main, addr_lo;
static char addr_main_str[INET_ADDRSTRLEN];
static int main_is_lo;

/* ---------------------------------------------------------------- helpers */

static struct in_addr in_addr_of(const char *dotted)
{
	struct in_addr a;

	if (inet_pton(AF_INET, dotted, &a) != 1)
		a.s_addr = htonl(INADDR_NONE);
	return a;
}

/* Expect *got to be AF_INET addr:port with sin_zero cleared. */
static int expect_sin(const struct sockaddr_in *got,
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

/* The distribution's modules are loaded (RDS_MODULES), not ours. */
static int modules_are_distro(void)
{
	const char *mods = getenv("RDS_MODULES");

	return mods && !strcmp(mods, "distro");
}

/*
 * A socket bound to addr:port (port 0: any), its bound address in *out if
 * out is not NULL.  Receives wait RCV_TIMEOUT_MS at most.
 */
static int rds_bound(struct in_addr addr, unsigned short port,
		     struct sockaddr_in *out)
{
	return rds_bound_at(addr, port, out, RCV_TIMEOUT_MS);
}

/* Expect buf to hold the pattern; report the first difference. */
static int expect_pattern(const unsigned char *buf, size_t len,
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
static void send_pattern(int fd, size_t len, unsigned int seed,
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
static void recv_pattern(int fd, size_t len, unsigned int seed,
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
static void recv_text(int fd, const char *text, const struct sockaddr_in *from)
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
static void flush_to(int fd, struct in_addr addr)
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
static int poll_settled(int fd)
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
static volatile sig_atomic_t signals_seen;

static void on_sigusr1(int sig)
{
	(void)sig;
	signals_seen++;
}

static void catch_sigusr1(int restart)
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

static void *kicker_main(void *arg)
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

static void kicker_start(struct kicker *k)
{
	k->target = pthread_self();
	errno = pthread_create(&k->thread, NULL, kicker_main, k);
	ASSERT_TRUE(!errno, "pthread_create: %s", rt_errname(errno));
}

/* ----------------------------------------------------------- socket() */

static void test_socket_create(void)
{
	int fd, flags;

	fd = rds_socket();
	EXPECT_EQ(int_opt(fd, SOL_SOCKET, SO_TYPE), SOCK_SEQPACKET);
	EXPECT_EQ(int_opt(fd, SOL_SOCKET, SO_DOMAIN), AF_RDS);
	EXPECT_EQ(int_opt(fd, SOL_SOCKET, SO_PROTOCOL), 0);
	close(fd);

	/* The socket layer strips and applies the type flags. */
	fd = ASSERT_SYS_OK(socket(AF_RDS, SOCK_SEQPACKET | SOCK_NONBLOCK |
				  SOCK_CLOEXEC, 0));
	flags = EXPECT_SYS_OK(fcntl(fd, F_GETFL));
	EXPECT_TRUE(flags & O_NONBLOCK, "SOCK_NONBLOCK: O_NONBLOCK not set");
	flags = EXPECT_SYS_OK(fcntl(fd, F_GETFD));
	EXPECT_TRUE(flags & FD_CLOEXEC, "SOCK_CLOEXEC: FD_CLOEXEC not set");
	close(fd);
}

/* rds_create(): anything but SOCK_SEQPACKET with protocol 0. */
static void test_socket_bad_type(void)
{
	static const int types[] = { SOCK_STREAM, SOCK_DGRAM, SOCK_RAW,
				     SOCK_RDM };
	static const int protos[] = { 1, IPPROTO_TCP, IPPROTO_UDP, 21, 255 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(types); i++)
		EXPECT_SYS_ERR(socket(AF_RDS, types[i], 0), ESOCKTNOSUPPORT);
	for (i = 0; i < ARRAY_SIZE(protos); i++)
		EXPECT_SYS_ERR(socket(AF_RDS, SOCK_SEQPACKET, protos[i]),
			       ESOCKTNOSUPPORT);
}

/* ------------------------------------------------------------- bind() */

/* The case on RDS_ADDR itself: it must be bindable, or say why not. */
static void test_bind_rds_addr(void)
{
	const char *env = getenv("RDS_ADDR");
	struct sockaddr_in sin;
	int fd;

	if (!env || !*env)
		rt_skip("RDS_ADDR is not set");
	ASSERT_TRUE(in_addr_of(env).s_addr != htonl(INADDR_NONE),
		    "RDS_ADDR '%s' is not an IPv4 address", env);
	fd = rds_socket();
	sin_set(&sin, in_addr_of(env), 0);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		rt_fail("bind(%s:0): %s%s", env, rt_errname(errno),
			errno == EADDRNOTAVAIL ?
			" (no RDS transport accepts it: is rds_rdma or rds_tcp loaded?)" :
			"");
	}
	close(fd);
}

static void test_bind_explicit_port(void)
{
	struct sockaddr_in sin, got;
	socklen_t len = sizeof(got);
	unsigned short port = 20000 + getpid() % 20000;
	int fd = rds_socket(), tries, ret = -1;

	for (tries = 0; tries < 100; tries++, port++) {
		sin_set(&sin, addr_main, port);
		ret = bind(fd, (struct sockaddr *)&sin, sizeof(sin));
		if (!ret || errno != EADDRINUSE)
			break;
	}
	ASSERT_SYS_OK(ret);
	memset(&got, 0xa5, sizeof(got));
	ASSERT_SYS_OK(getsockname(fd, (struct sockaddr *)&got, &len));
	EXPECT_EQ(len, sizeof(struct sockaddr_in));
	expect_sin(&got, &sin, "getsockname");
	close(fd);
}

static void test_bind_port_zero(void)
{
	struct sockaddr_in a, b;
	int fa = rds_bound(addr_main, 0, &a);
	int fb = rds_bound(addr_main, 0, &b);

	EXPECT_EQ(a.sin_addr.s_addr, addr_main.s_addr);
	/* Port 1 is reserved for the protocol's probes. */
	EXPECT_TRUE(ntohs(a.sin_port) > 1 && ntohs(b.sin_port) > 1,
		    "ports %u and %u picked", ntohs(a.sin_port),
		    ntohs(b.sin_port));
	EXPECT_NE(a.sin_port, b.sin_port);
	close(fa);
	close(fb);
}

static void test_bind_addr_in_use(void)
{
	struct sockaddr_in a;
	int fa = rds_bound(addr_main, 0, &a);
	int fb = rds_socket(), fc;

	EXPECT_SYS_ERR(bind(fb, (struct sockaddr *)&a, sizeof(a)),
		       EADDRINUSE);
	/* The same port on another address is another binding. */
	if (!main_is_lo) {
		struct sockaddr_in other;

		sin_set(&other, addr_lo, ntohs(a.sin_port));
		fc = rds_socket();
		EXPECT_SYS_OK(bind(fc, (struct sockaddr *)&other,
				   sizeof(other)));
		close(fc);
	}
	/* close() releases the binding at once. */
	close(fa);
	EXPECT_SYS_OK(bind(fb, (struct sockaddr *)&a, sizeof(a)));
	close(fb);
}

static void test_bind_nonlocal(void)
{
	static const char *const addrs[] = { "192.0.2.1", "198.51.100.7" };
	struct sockaddr_in sin;
	unsigned int i;
	int fd = rds_socket();

	for (i = 0; i < ARRAY_SIZE(addrs); i++) {
		sin_set(&sin, in_addr_of(addrs[i]), 4000);
		EXPECT_SYS_ERR(bind(fd, (struct sockaddr *)&sin, sizeof(sin)),
			       EADDRNOTAVAIL);
	}
	/* The failures left the socket unbound. */
	sin_set(&sin, addr_main, 0);
	EXPECT_SYS_OK(bind(fd, (struct sockaddr *)&sin, sizeof(sin)));
	close(fd);
}

static void test_bind_bad_args(void)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr *sa = (struct sockaddr *)&ss;
	int fd = rds_socket();

	memset(&ss, 0, sizeof(ss));
	sin_set(sin, in_addr_of("0.0.0.0"), 4000);
	EXPECT_SYS_ERR(bind(fd, sa, sizeof(*sin)), EINVAL);
	sin_set(sin, in_addr_of("255.255.255.255"), 4000);
	EXPECT_SYS_ERR(bind(fd, sa, sizeof(*sin)), EINVAL);
	sin_set(sin, in_addr_of("224.0.0.1"), 4000);
	EXPECT_SYS_ERR(bind(fd, sa, sizeof(*sin)), EINVAL);

	sin_set(sin, addr_main, 0);
	sin->sin_family = AF_UNIX;
	EXPECT_SYS_ERR(bind(fd, sa, sizeof(*sin)), EINVAL);
	sin->sin_family = AF_UNSPEC;
	EXPECT_SYS_ERR(bind(fd, sa, sizeof(*sin)), EINVAL);
	sin->sin_family = AF_INET6;	/* too short for a sockaddr_in6 */
	EXPECT_SYS_ERR(bind(fd, sa, sizeof(*sin)), EINVAL);

	sin_set(sin, addr_main, 0);
	EXPECT_SYS_ERR(bind(fd, sa, sizeof(*sin) - 1), EINVAL);
	EXPECT_SYS_ERR(bind(fd, sa, 2), EINVAL);
	EXPECT_SYS_ERR(bind(fd, sa, 1), EINVAL);
	EXPECT_SYS_ERR(bind(fd, sa, 0), EINVAL);
	EXPECT_SYS_ERR(bind(fd, sa, sizeof(ss) + 1), EINVAL);
	EXPECT_SYS_ERR(bind(fd, sa, (socklen_t)-1), EINVAL);
	EXPECT_SYS_ERR(bind(fd, NULL, 0), EINVAL);
	EXPECT_SYS_ERR(bind(fd, NULL, sizeof(*sin)), EFAULT);
	EXPECT_SYS_ERR(bind(fd, KERNEL_PTR, sizeof(*sin)), EFAULT);
	EXPECT_SYS_ERR(bind(fd, TOP_PTR, sizeof(*sin)), EFAULT);

	/* None of that bound the socket. */
	EXPECT_SYS_OK(bind(fd, sa, sizeof(*sin)));
	close(fd);
}

/* Port 1 is RDS_FLAG_PROBE_PORT, kept for the protocol. */
static void test_bind_reserved_port(void)
{
	struct sockaddr_in sin;
	int fd = rds_socket();

	sin_set(&sin, addr_main, 1);
	EXPECT_SYS_ERR(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), EINVAL);
	close(fd);
}

static void test_bind_twice(void)
{
	struct sockaddr_in a, again, got;
	socklen_t len = sizeof(got);
	int fd = rds_bound(addr_main, 0, &a);

	EXPECT_SYS_ERR(bind(fd, (struct sockaddr *)&a, sizeof(a)), EINVAL);
	sin_set(&again, addr_main, 0);
	EXPECT_SYS_ERR(bind(fd, (struct sockaddr *)&again, sizeof(again)),
		       EINVAL);
	sin_set(&again, addr_lo, 0);
	EXPECT_SYS_ERR(bind(fd, (struct sockaddr *)&again, sizeof(again)),
		       EINVAL);
	ASSERT_SYS_OK(getsockname(fd, (struct sockaddr *)&got, &len));
	expect_sin(&got, &a, "address after failed rebinds");
	close(fd);
}

/* ---------------------------------------------------------- connect() */

static void connect_default_dest(struct in_addr addr)
{
	struct sockaddr_in r1, r2, t, got;
	socklen_t len = sizeof(got);
	int rx1 = rds_bound(addr, 0, &r1);
	int rx2 = rds_bound(addr, 0, &r2);
	int tx = rds_bound(addr, 0, &t);

	ASSERT_SYS_OK(connect(tx, (struct sockaddr *)&r1, sizeof(r1)));
	memset(&got, 0xa5, sizeof(got));
	ASSERT_SYS_OK(getpeername(tx, (struct sockaddr *)&got, &len));
	EXPECT_EQ(len, sizeof(got));
	expect_sin(&got, &r1, "getpeername");

	/* send() goes to the connected address ... */
	EXPECT_EQ(EXPECT_SYS_OK(send(tx, "one", 3, 0)), 3);
	recv_text(rx1, "one", &t);
	/* ... an explicit address still wins ... */
	EXPECT_EQ(EXPECT_SYS_OK(sendto(tx, "two", 3, 0, (void *)&r2,
				       sizeof(r2))), 3);
	recv_text(rx2, "two", &t);
	/* ... and connecting again moves the default. */
	ASSERT_SYS_OK(connect(tx, (struct sockaddr *)&r2, sizeof(r2)));
	EXPECT_EQ(EXPECT_SYS_OK(send(tx, "three", 5, 0)), 5);
	recv_text(rx2, "three", &t);
	expect_empty(rx1);
	expect_empty(rx2);
	close(tx);
	close(rx1);
	close(rx2);
}

static void test_getpeername_unconnected(void)
{
	struct sockaddr_in got;
	socklen_t len = sizeof(got);
	int fd = rds_socket();

	EXPECT_SYS_ERR(getpeername(fd, (struct sockaddr *)&got, &len),
		       ENOTCONN);
	close(fd);
	fd = rds_bound(addr_main, 0, NULL);
	len = sizeof(got);
	EXPECT_SYS_ERR(getpeername(fd, (struct sockaddr *)&got, &len),
		       ENOTCONN);
	close(fd);
}

static void test_connect_bad_args(void)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr *sa = (struct sockaddr *)&ss;
	struct sockaddr_in got;
	socklen_t len = sizeof(got);
	int fd = rds_socket();

	memset(&ss, 0, sizeof(ss));
	/* Unlike bind() and sendmsg(), connect() has its own errno here. */
	sin_set(sin, in_addr_of("0.0.0.0"), 4000);
	EXPECT_SYS_ERR(connect(fd, sa, sizeof(*sin)), EDESTADDRREQ);
	sin_set(sin, in_addr_of("255.255.255.255"), 4000);
	EXPECT_SYS_ERR(connect(fd, sa, sizeof(*sin)), EINVAL);
	sin_set(sin, in_addr_of("224.0.0.1"), 4000);
	EXPECT_SYS_ERR(connect(fd, sa, sizeof(*sin)), EINVAL);

	sin_set(sin, addr_main, 4000);
	sin->sin_family = AF_UNIX;
	EXPECT_SYS_ERR(connect(fd, sa, sizeof(*sin)), EAFNOSUPPORT);
	sin->sin_family = AF_UNSPEC;
	EXPECT_SYS_ERR(connect(fd, sa, sizeof(*sin)), EAFNOSUPPORT);
	sin->sin_family = AF_INET6;	/* too short for a sockaddr_in6 */
	EXPECT_SYS_ERR(connect(fd, sa, sizeof(*sin)), EINVAL);

	sin_set(sin, addr_main, 4000);
	EXPECT_SYS_ERR(connect(fd, sa, sizeof(*sin) - 1), EINVAL);
	EXPECT_SYS_ERR(connect(fd, sa, 1), EINVAL);
	EXPECT_SYS_ERR(connect(fd, sa, 0), EINVAL);
	EXPECT_SYS_ERR(connect(fd, sa, sizeof(ss) + 1), EINVAL);
	EXPECT_SYS_ERR(connect(fd, NULL, sizeof(*sin)), EFAULT);
	EXPECT_SYS_ERR(connect(fd, KERNEL_PTR, sizeof(*sin)), EFAULT);

	/* None of that set a destination. */
	EXPECT_SYS_ERR(getpeername(fd, (struct sockaddr *)&got, &len),
		       ENOTCONN);
	close(fd);
}

/* --------------------------------------------- getsockname/getpeername */

static void test_getsockname_unbound(void)
{
	struct sockaddr_in got, zero, dst;
	socklen_t len = sizeof(got);
	int fd = rds_socket();

	/* Neither bound nor connected: AF_UNSPEC, sockaddr_in sized. */
	memset(&got, 0xa5, sizeof(got));
	ASSERT_SYS_OK(getsockname(fd, (struct sockaddr *)&got, &len));
	EXPECT_EQ(len, sizeof(got));
	memset(&zero, 0, sizeof(zero));
	EXPECT_TRUE(!memcmp(&got, &zero, sizeof(got)),
		    "unbound socket: expected an all-zero AF_UNSPEC address, got %s",
		    sin_str(&got));

	/* Connected but not bound: AF_INET with address and port 0. */
	sin_set(&dst, addr_main, 4000);
	ASSERT_SYS_OK(connect(fd, (struct sockaddr *)&dst, sizeof(dst)));
	len = sizeof(got);
	memset(&got, 0xa5, sizeof(got));
	ASSERT_SYS_OK(getsockname(fd, (struct sockaddr *)&got, &len));
	EXPECT_EQ(len, sizeof(got));
	sin_set(&zero, in_addr_of("0.0.0.0"), 0);
	expect_sin(&got, &zero, "connected, unbound socket");
	close(fd);
}

/* The socket layer's part of getsockname()/getpeername(). */
static void check_getname_args(int fd, int peer, const struct sockaddr_in *want)
{
	int (*getname)(int, struct sockaddr *, socklen_t *) =
		peer ? getpeername : getsockname;
	const char *what = peer ? "getpeername" : "getsockname";
	unsigned char buf[sizeof(struct sockaddr_in)];
	struct sockaddr_in got;
	socklen_t len;
	unsigned int i;

	EXPECT_SYS_ERR(getname(fd, (struct sockaddr *)&got, NULL), EFAULT);
	EXPECT_SYS_ERR(getname(fd, (struct sockaddr *)&got, KERNEL_PTR),
		       EFAULT);
	len = sizeof(got);
	EXPECT_SYS_ERR(getname(fd, NULL, &len), EFAULT);
	len = sizeof(got);
	EXPECT_SYS_ERR(getname(fd, KERNEL_PTR, &len), EFAULT);
	len = (socklen_t)-1;
	EXPECT_SYS_ERR(getname(fd, (struct sockaddr *)&got, &len), EINVAL);

	/* A short buffer gets a truncated copy and the full length. */
	len = 4;
	memset(buf, 0xa5, sizeof(buf));
	EXPECT_SYS_OK(getname(fd, (struct sockaddr *)buf, &len));
	EXPECT_EQ(len, sizeof(struct sockaddr_in));
	EXPECT_TRUE(!memcmp(buf, want, 4), "%s: truncated copy differs", what);
	for (i = 4; i < sizeof(buf); i++)
		if (!EXPECT_TRUE(buf[i] == 0xa5,
				 "%s: wrote byte %u past the given length 4",
				 what, i))
			break;
	len = 0;
	EXPECT_SYS_OK(getname(fd, NULL, &len));
	EXPECT_EQ(len, sizeof(struct sockaddr_in));
}

static void test_getname_bad_args(void)
{
	struct sockaddr_in a, b;
	int fa = rds_bound(addr_main, 0, &a);
	int fb = rds_bound(addr_main, 0, &b);

	ASSERT_SYS_OK(connect(fa, (struct sockaddr *)&b, sizeof(b)));
	check_getname_args(fa, 0, &a);
	check_getname_args(fa, 1, &b);
	close(fa);
	close(fb);
}

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

static void test_message_too_big(void)
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
static void test_message_over_sndbuf(void)
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
static void test_send_unbound(void)
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

static void test_send_no_dest(void)
{
	struct iovec iov = { "x", 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	int fd = rds_bound(addr_main, 0, NULL);

	EXPECT_SYS_ERR(send(fd, "x", 1, 0), ENOTCONN);
	EXPECT_SYS_ERR(sendmsg(fd, &msg, 0), ENOTCONN);
	EXPECT_SYS_ERR(sendto(fd, "x", 1, 0, NULL, 0), ENOTCONN);
	close(fd);
}

static void test_send_bad_args(void)
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

	/* Only MSG_DONTWAIT (and MSG_ZEROCOPY) are accepted. */
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
static void test_send_efault(void)
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
static void test_recv_efault(void)
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

static void test_recv_dontwait_empty(void)
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
static void test_recv_timeout(void)
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
static void test_recv_odd_flags(void)
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

static void test_recv_peek(void)
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

static void test_recv_trunc(void)
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

/* RDS drops a message for a port nobody is bound to, silently. */
static void test_send_no_listener(void)
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

static void test_poll_plain(void)
{
	poll_readable(0);
}

static void test_poll_monitored(void)
{
	poll_readable(1);
}

/* A poll() that sleeps wakes up when a message arrives. */
static void test_poll_wakeup(void)
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

/* Congestion needs a transport that bounds the receive queue. */
static void need_congestion(void)
{
	if (main_is_lo)
		rt_skip("127/8 never congests with the distribution's RDS; %s",
			"set RDS_ADDR to an interface address");
}

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

static void test_cong_enobufs(void)
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

static void test_cong_empty_messages(void)
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
static void test_cong_enobufs_lo(void)
{
	const char *mods = getenv("RDS_MODULES");

	if (!mods || strcmp(mods, "ours"))
		rt_skip("the distribution's loopback transport never congests");
	addr_main = addr_lo;
	main_is_lo = 0;
	test_cong_enobufs();
}

static void test_cong_blocking_sender(void)
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
static void test_cong_monitor(void)
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
static void test_cong_send_eintr(void)
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

/* ------------------------------------------------------ socket options */

static void test_opt_transport(void)
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

static void test_opt_recverr(void)
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

static void test_opt_cancel_sent_to(void)
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

static void test_opt_cong_monitor(void)
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
static void test_opt_rxpath_latency(void)
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

static void test_opt_unknown(void)
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

/* ---------------------------------------------- interrupted receives */

static void test_recv_eintr(void)
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
static void test_recv_restart(void)
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

/* --------------------------------------------------- info and ioctl */

/*
 * RDS_INFO_* snapshots: with too small a buffer, ENOSPC and the length
 * needed; with enough, the size of one entry as the return value.
 */
static long info_get(int fd, int name, void **out, int *len_out)
{
	socklen_t len;
	long ret;

	ret = rds_info_read(fd, name, out, &len);
	ASSERT_TRUE(ret >= 0 || errno != ENOSPC || len > 0,
		    "ENOSPC with length %u", len);
	*len_out = len;
	return ret;
}

static void test_info_sockets(void)
{
	struct rds_info_socket *si;
	struct rds_info_message *mi;
	struct sockaddr_in r, t;
	int distro = modules_are_distro();
	int rx = rds_bound(addr_main, 0, &r);
	int tx = rds_bound(addr_main, 0, &t);
	int len, i, found = 0, found_socket;
	socklen_t zero = 0;
	struct stat st;
	void *buf;
	long each;
	char c;

	ASSERT_SYS_OK(connect(tx, (struct sockaddr *)&r, sizeof(r)));
	EXPECT_SYS_ERR(getsockopt(rx, SOL_RDS, RDS_INFO_SOCKETS, NULL, &zero),
		       ENOSPC);
	EXPECT_TRUE(zero > 0 && zero % sizeof(*si) == 0,
		    "length needed %u, entries of %zu", zero, sizeof(*si));

	ASSERT_SYS_OK(fstat(tx, &st));
	/*
	 * The distribution's RDS_INFO_SOCKETS now and then left our socket,
	 * the newest, out (seen on 6.1 and 6.12 after the stress cases; not
	 * root-caused, and no second look hid it): on the distribution a
	 * missing row makes the case a skip once its other checks ran.  Our
	 * module is held to every row.
	 */
	each = EXPECT_SYS_OK(info_get(rx, RDS_INFO_SOCKETS, &buf, &len));
	EXPECT_EQ(each, sizeof(*si));
	EXPECT_EQ(len % sizeof(*si), 0);
	for (i = 0; i < len / (int)sizeof(*si); i++) {
		si = (struct rds_info_socket *)buf + i;
		if (si->bound_addr != t.sin_addr.s_addr ||
		    si->bound_port != t.sin_port)
			continue;
		found++;
		EXPECT_EQ(si->connected_addr, r.sin_addr.s_addr);
		EXPECT_EQ(si->connected_port, r.sin_port);
		EXPECT_EQ(si->sndbuf, int_opt(tx, SOL_SOCKET, SO_SNDBUF) / 2);
		EXPECT_EQ(si->rcvbuf, int_opt(tx, SOL_SOCKET, SO_RCVBUF) / 2);
		EXPECT_EQ(si->inum, st.st_ino);
	}
	free(buf);
	if (!distro || found)
		EXPECT_EQ(found, 1);
	found_socket = found;

	/*
	 * A queued message shows in RDS_INFO_RECV_MESSAGES.  Wait for the
	 * message itself, with a MSG_PEEK receive (rds_bound()'s timeout):
	 * the distribution's poll() also reports POLLIN for a congestion
	 * map update anywhere (left over from the stress cases), which let
	 * this case read the table before the message was queued.
	 */
	EXPECT_EQ(EXPECT_SYS_OK(send(tx, "seventy-seven", 13, 0)), 13);
	ASSERT_TRUE(recv(rx, &c, 1, MSG_PEEK) == 1, "nothing arrived: %s",
		    rt_errname(errno));
	each = EXPECT_SYS_OK(info_get(rx, RDS_INFO_RECV_MESSAGES, &buf,
				      &len));
	EXPECT_EQ(each, sizeof(*mi));
	found = 0;
	for (i = 0; i < len / (int)sizeof(*mi); i++) {
		mi = (struct rds_info_message *)buf + i;
		if (mi->lport != r.sin_port || mi->laddr != r.sin_addr.s_addr)
			continue;
		found++;
		EXPECT_EQ(mi->len, 13);
		EXPECT_EQ(mi->faddr, t.sin_addr.s_addr);
		EXPECT_EQ(mi->fport, t.sin_port);
	}
	EXPECT_EQ(found, 1);
	free(buf);
	close(tx);
	close(rx);
	if (distro && !found_socket)
		rt_skip("the distribution's RDS_INFO_SOCKETS left our socket's row out");
}

/*
 * RDS_INFO_SEND_MESSAGES: messages to a peer that never answers (an
 * unused address on our subnet) wait on the connection's send queue, in
 * order, with their numbers, lengths, addresses and ports; none is on the
 * retransmit queue, as none was sent; closing the socket takes them away.
 * The distribution's rows carry 0.0.0.0 for both addresses (6.1 and 6.12),
 * so rows are matched by their ports, and the addresses are checked on
 * ours only.
 */
static int send_rows(int fd, int name, in_port_t lport, in_port_t fport,
		     struct rds_info_message *rows, int max)
{
	int len, n;
	void *buf;

	EXPECT_EQ(EXPECT_SYS_OK(info_get(fd, name, &buf, &len)),
		  sizeof(*rows));
	n = rds_info_msg_rows(buf, len, lport, fport, rows, max);
	free(buf);
	return n;
}

/*
 * .250 of the main address's /24: no guest of the bench has it, so a
 * connection to it never comes up and what is sent there stays queued.
 */
static struct in_addr nobody_addr(void)
{
	struct in_addr nobody;

	if (main_is_lo)
		rt_skip("needs RDS_ADDR: local delivery has no send queue");
	nobody.s_addr = htonl((ntohl(addr_main.s_addr) & ~0xffu) | 250);
	return nobody;
}

static void test_info_send_messages(void)
{
	static const unsigned int lens[] = { 10, 2000, 9000 };
	int distro = modules_are_distro();
	struct rds_info_message rows[8];
	struct in_addr nobody = nobody_addr();
	struct sockaddr_in me, to;
	char buf[9000] = "";
	int fd, i, n;

	fd = rds_bound(addr_main, 0, &me);
	sin_set(&to, nobody, 4000);
	for (i = 0; i < (int)ARRAY_SIZE(lens); i++)
		EXPECT_EQ(EXPECT_SYS_OK(sendto(fd, buf, lens[i], 0,
					       (struct sockaddr *)&to,
					       sizeof(to))), lens[i]);

	n = send_rows(fd, RDS_INFO_SEND_MESSAGES, me.sin_port, to.sin_port,
		      rows, ARRAY_SIZE(rows));
	ASSERT_EQ(n, (int)ARRAY_SIZE(lens));
	for (i = 0; i < n; i++) {
		EXPECT_EQ(rows[i].len, lens[i]);
		EXPECT_EQ(rows[i].tos, 0);
		if (i)
			EXPECT_EQ(rows[i].seq, rows[i - 1].seq + 1);
		if (distro && !rows[i].laddr && !rows[i].faddr)
			continue;
		EXPECT_EQ(rows[i].laddr, addr_main.s_addr);
		EXPECT_EQ(rows[i].faddr, nobody.s_addr);
	}
	if (distro && !rows[0].laddr)
		rt_diag("distribution: addresses 0.0.0.0 in its rows");
	EXPECT_EQ(send_rows(fd, RDS_INFO_RETRANS_MESSAGES, me.sin_port,
			    to.sin_port, rows, ARRAY_SIZE(rows)), 0);
	close(fd);

	fd = rds_socket();
	EXPECT_EQ(send_rows(fd, RDS_INFO_SEND_MESSAGES, me.sin_port,
			    to.sin_port, rows, ARRAY_SIZE(rows)), 0);
	close(fd);
}

/* Rows of RDS_INFO_CONNECTIONS from @laddr to .@first ... .@last of its /24. */
static int conns_to(int fd, struct in_addr laddr, unsigned int first,
		    unsigned int last)
{
	struct rds_info_connection *c;
	unsigned int host;
	socklen_t len;
	int i, n = 0;

	if (rds_info_read(fd, RDS_INFO_CONNECTIONS, (void **)&c, &len) < 0) {
		rt_fail("RDS_INFO_CONNECTIONS: %s", rt_errname(errno));
		return -1;
	}
	for (i = 0; c && i < (int)(len / sizeof(*c)); i++) {
		host = ntohl(c[i].faddr) & 0xff;
		if (c[i].laddr == laddr.s_addr &&
		    (ntohl(c[i].faddr) & ~0xffu) ==
		    (ntohl(laddr.s_addr) & ~0xffu) &&
		    host >= first && host <= last)
			n++;
	}
	free(c);
	return n;
}

/* Wait up to @ms for conns_to() to reach @want; return the last count. */
static int conns_wait(int fd, struct in_addr laddr, unsigned int first,
		      unsigned int last, int want, int ms)
{
	long long end = rt_now_ms() + ms;
	int n;

	while ((n = conns_to(fd, laddr, first, last)) != want &&
	       rt_now_ms() < end)
		rt_sleep_ms(100);
	return n;
}

#define REAP_KNOB	"/proc/sys/net/rds/conn_reap_ms"
#define REAP_FIRST	200	/* .200 to .239: no guest of the bench */
#define REAP_N		40

static int reap_knob(const char *val, char *old, size_t oldlen)
{
	FILE *f = fopen(REAP_KNOB, "r+");
	int ok;

	if (!f)
		return -1;
	ok = !old || fgets(old, oldlen, f);
	rewind(f);
	ok = ok && fputs(val, f) >= 0;
	ok = !fclose(f) && ok;
	return ok ? 0 : -1;
}

/*
 * Connections to hosts that never answer do not pile up (issue 10): each
 * destination a local user sends to makes a connection, with congestion
 * maps of 8 KiB, and the distribution keeps every one until its module
 * is unloaded.  Ours frees one that has stayed down for
 * net.rds.conn_reap_ms (300 ms here) with nothing queued and nothing ever
 * received, and a later message simply makes a new one.
 */
static void test_conn_reap(void)
{
	struct in_addr nobody = nobody_addr();
	long long reaped, created, got, end;
	struct sockaddr_in me, to;
	char old[32] = "60000\n";
	int fd, i, n;

	if (modules_are_distro())
		rt_skip("the distribution has no %s: it keeps every connection until unload",
			REAP_KNOB);
	ASSERT_TRUE(!reap_knob("300\n", old, sizeof(old)),
		    "cannot set %s: %s", REAP_KNOB, rt_errname(errno));
	fd = rds_bound(addr_main, 0, &me);
	reaped = rds_counter(fd, "conn_reaped");
	EXPECT_TRUE(reaped >= 0, "no conn_reaped counter");
	for (i = 0; i < REAP_N; i++) {
		nobody.s_addr = htonl((ntohl(nobody.s_addr) & ~0xffu) |
				      (REAP_FIRST + i));
		sin_set(&to, nobody, 4000);
		EXPECT_EQ(EXPECT_SYS_OK(sendto(fd, "x", 1, MSG_DONTWAIT,
					       (struct sockaddr *)&to,
					       sizeof(to))), 1);
	}
	EXPECT_EQ(conns_to(fd, addr_main, REAP_FIRST,
			   REAP_FIRST + REAP_N - 1), REAP_N);
	/* Still queued: not idle, so none goes. */
	rt_sleep_ms(1000);
	EXPECT_EQ(conns_to(fd, addr_main, REAP_FIRST,
			   REAP_FIRST + REAP_N - 1), REAP_N);
	close(fd);	/* withdraws the messages */

	fd = rds_socket();
	n = conns_wait(fd, addr_main, REAP_FIRST, REAP_FIRST + REAP_N - 1, 0,
		       40000);
	EXPECT_TRUE(!n, "%d of %d connections still listed after 40 s", n,
		    REAP_N);
	/* Counted once destroyed, after they left the table. */
	end = rt_now_ms() + 20000;
	while ((got = rds_counter(fd, "conn_reaped")) < reaped + REAP_N &&
	       rt_now_ms() < end)
		rt_sleep_ms(100);
	EXPECT_TRUE(got >= reaped + REAP_N, "conn_reaped went from %lld to %lld",
		    reaped, got);
	close(fd);

	/* A destination that was reaped is reached again. */
	fd = rds_bound(addr_main, 0, &me);
	created = rds_counter(fd, "conn_created");
	nobody.s_addr = htonl((ntohl(nobody.s_addr) & ~0xffu) | REAP_FIRST);
	sin_set(&to, nobody, 4000);
	EXPECT_EQ(EXPECT_SYS_OK(sendto(fd, "x", 1, MSG_DONTWAIT,
				       (struct sockaddr *)&to, sizeof(to))), 1);
	EXPECT_EQ(conns_to(fd, addr_main, REAP_FIRST, REAP_FIRST), 1);
	EXPECT_EQ(rds_counter(fd, "conn_created"), created + 1);
	close(fd);
	fd = rds_socket();
	EXPECT_EQ(conns_wait(fd, addr_main, REAP_FIRST, REAP_FIRST, 0, 40000),
		  0);
	close(fd);
	EXPECT_TRUE(!reap_knob(old, NULL, 0), "cannot restore %s",
		    REAP_KNOB);
}

static void test_info_bad_args(void)
{
	struct rds_info_counter *ctr;
	int fd = rds_socket(), len, i;
	socklen_t slen;
	void *buf;
	long each;

	/* Counters always exist; names are NUL-terminated. */
	each = EXPECT_SYS_OK(info_get(fd, RDS_INFO_COUNTERS, &buf, &len));
	EXPECT_EQ(each, sizeof(*ctr));
	EXPECT_TRUE(len >= (int)sizeof(*ctr), "no counters (%d bytes)", len);
	for (i = 0; i < len / (int)sizeof(*ctr); i++) {
		ctr = (struct rds_info_counter *)buf + i;
		EXPECT_TRUE(memchr(ctr->name, 0, sizeof(ctr->name)),
			    "counter %d: name not terminated", i);
	}
	free(buf);

	/* 10002 (flows) and iWARP connections have no table. */
	slen = 0;
	EXPECT_SYS_ERR(getsockopt(fd, SOL_RDS, 10002, NULL, &slen),
		       ENOPROTOOPT);
	slen = 0;
	EXPECT_SYS_ERR(getsockopt(fd, SOL_RDS, RDS_INFO_IWARP_CONNECTIONS,
				  NULL, &slen), ENOPROTOOPT);
	slen = (socklen_t)-1;
	EXPECT_SYS_ERR(getsockopt(fd, SOL_RDS, RDS_INFO_COUNTERS, NULL,
				  &slen), EINVAL);
	EXPECT_SYS_ERR(getsockopt(fd, SOL_RDS, RDS_INFO_COUNTERS, NULL, NULL),
		       EFAULT);
	close(fd);
}

/*
 * SIOCRDSGETTOS reads 0 on a new socket.  SIOCRDSSETTOS needs a socket
 * bound through a transport that carries a type of service (ENOTTY
 * unbound or bound to 127.0.0.1, as the distribution: it asks the
 * transport to map the value); there it sets it once (a second time,
 * EINVAL) and never after the socket sent (EINVAL).
 */
static void test_ioctl_tos(void)
{
	struct sockaddr_in sin;
	int fd = rds_socket();
	rds_tos_t tos = 0xff;

	EXPECT_SYS_OK(ioctl(fd, SIOCRDSGETTOS, &tos));
	EXPECT_EQ(tos, 0);
	EXPECT_SYS_ERR(ioctl(fd, SIOCRDSGETTOS, NULL), EFAULT);
	tos = 5;
	EXPECT_SYS_ERR(ioctl(fd, SIOCRDSSETTOS, &tos), ENOTTY);
	close(fd);
	fd = rds_bound(addr_lo, 0, NULL);
	EXPECT_SYS_ERR(ioctl(fd, SIOCRDSSETTOS, &tos), ENOTTY);
	close(fd);
	if (addr_main.s_addr == addr_lo.s_addr)
		rt_skip("no RDS_ADDR: no transport with a type of service");

	fd = rds_bound(addr_main, 0, NULL);
	EXPECT_SYS_ERR(ioctl(fd, SIOCRDSSETTOS, NULL), EFAULT);
	EXPECT_SYS_OK(ioctl(fd, SIOCRDSSETTOS, &tos));
	tos = 0;
	EXPECT_SYS_OK(ioctl(fd, SIOCRDSGETTOS, &tos));
	EXPECT_EQ(tos, 5);
	tos = 6;
	EXPECT_SYS_ERR(ioctl(fd, SIOCRDSSETTOS, &tos), EINVAL);
	close(fd);

	fd = rds_bound(addr_main, 0, &sin);
	EXPECT_EQ(sendto(fd, "x", 1, 0, (struct sockaddr *)&sin, sizeof(sin)), 1);
	tos = 7;
	EXPECT_SYS_ERR(ioctl(fd, SIOCRDSSETTOS, &tos), EINVAL);
	tos = 0xff;
	EXPECT_SYS_OK(ioctl(fd, SIOCRDSGETTOS, &tos));
	EXPECT_EQ(tos, 0);
	close(fd);
}

#ifndef SO_TIMESTAMP_OLD
#define SO_TIMESTAMP_OLD	29
#endif
#ifndef SO_TIMESTAMP_NEW
#define SO_TIMESTAMP_NEW	63
#endif

/*
 * Send one message to @fd itself and receive it: the microseconds since
 * the epoch of its SO_TIMESTAMP control message of type @type, or -1 if
 * it had none; *before and *after bracket the exchange.
 */
static long long stamped_exchange(int fd, int type, long long *before,
				  long long *after)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct __kernel_sock_timeval)) + 64];
		struct cmsghdr align;
	} ctl;
	struct sockaddr_in self;
	socklen_t slen = sizeof(self);
	struct timeval tv;
	char c, data[4];
	struct iovec iov = { data, sizeof(data) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *cm;
	long long got = -1;

	ASSERT_SYS_OK(getsockname(fd, (struct sockaddr *)&self, &slen));
	gettimeofday(&tv, NULL);
	*before = tv.tv_sec * 1000000LL + tv.tv_usec;
	c = 't';
	EXPECT_EQ(sendto(fd, &c, 1, 0, (struct sockaddr *)&self, sizeof(self)), 1);
	EXPECT_EQ(recvmsg(fd, &msg, 0), 1);
	gettimeofday(&tv, NULL);
	*after = tv.tv_sec * 1000000LL + tv.tv_usec;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != type) {
			rt_fail("control message level %d type %d, expected SOL_SOCKET %d",
				cm->cmsg_level, cm->cmsg_type, type);
			continue;
		}
		if (type == SO_TIMESTAMP_NEW) {
			struct __kernel_sock_timeval st;

			EXPECT_EQ(cm->cmsg_len, CMSG_LEN(sizeof(st)));
			memcpy(&st, CMSG_DATA(cm), sizeof(st));
			got = st.tv_sec * 1000000LL + st.tv_usec;
		} else {
			EXPECT_EQ(cm->cmsg_len, CMSG_LEN(sizeof(tv)));
			memcpy(&tv, CMSG_DATA(cm), sizeof(tv));
			got = tv.tv_sec * 1000000LL + tv.tv_usec;
		}
	}
	return got;
}

/* A stamp of @type within the exchange, as both modules give it. */
static void expect_stamp(int fd, int type)
{
	long long before, after, t = stamped_exchange(fd, type, &before, &after);

	EXPECT_TRUE(t >= before && t <= after,
		    "timestamp %lld not within [%lld, %lld]", t, before, after);
}

/*
 * Receive timestamps: SO_TIMESTAMP at SOL_SOCKET gives each message a
 * struct timeval taken when it was queued, SO_TIMESTAMP_NEW the 64-bit
 * form; the distribution also takes both at SOL_RDS; off again, none.
 * Asked for the old form at SOL_RDS after the new one, the distribution
 * still gives the new one (it never clears that flag), which a program
 * built for the old form misreads; ours gives the form asked for, as
 * SOL_SOCKET does on both.
 */
static void test_rx_timestamp(void)
{
	int fd = rds_bound(addr_lo, 0, NULL);
	long long before, after;

	EXPECT_EQ(stamped_exchange(fd, SO_TIMESTAMP_OLD, &before, &after), -1);
	ASSERT_SYS_OK(set_int_opt(fd, SOL_SOCKET, SO_TIMESTAMP_OLD, 1));
	expect_stamp(fd, SO_TIMESTAMP_OLD);
	ASSERT_SYS_OK(set_int_opt(fd, SOL_SOCKET, SO_TIMESTAMP_NEW, 1));
	expect_stamp(fd, SO_TIMESTAMP_NEW);
	ASSERT_SYS_OK(set_int_opt(fd, SOL_SOCKET, SO_TIMESTAMP_OLD, 1));
	expect_stamp(fd, SO_TIMESTAMP_OLD);
	ASSERT_SYS_OK(set_int_opt(fd, SOL_SOCKET, SO_TIMESTAMP_OLD, 0));
	EXPECT_EQ(stamped_exchange(fd, SO_TIMESTAMP_OLD, &before, &after), -1);
	close(fd);

	fd = rds_bound(addr_lo, 0, NULL);
	ASSERT_SYS_OK(set_int_opt(fd, SOL_RDS, SO_TIMESTAMP_OLD, 1));
	expect_stamp(fd, SO_TIMESTAMP_OLD);
	ASSERT_SYS_OK(set_int_opt(fd, SOL_RDS, SO_TIMESTAMP_NEW, 1));
	expect_stamp(fd, SO_TIMESTAMP_NEW);
	ASSERT_SYS_OK(set_int_opt(fd, SOL_RDS, SO_TIMESTAMP_NEW, 0));
	EXPECT_EQ(stamped_exchange(fd, SO_TIMESTAMP_NEW, &before, &after), -1);
	ASSERT_SYS_OK(set_int_opt(fd, SOL_RDS, SO_TIMESTAMP_OLD, 1));
	if (modules_are_distro()) {
		expect_stamp(fd, SO_TIMESTAMP_NEW);	/* quirk */
		close(fd);
		rt_skip("distribution: SO_TIMESTAMP_OLD at SOL_RDS after _NEW %s",
			"still gives the new form");
	}
	expect_stamp(fd, SO_TIMESTAMP_OLD);
	close(fd);
}

/* ------------------------------------------------- RDMA notifications */

#define RDMA_LEN	4096
#define RDMA_TOKEN	0xa5a5000000c0de00ULL	/* all 64 bits come back */
#define NOTE_SPACE	CMSG_SPACE(sizeof(struct rds_rdma_notify))

/*
 * Queue to *to a message carrying an RDMA WRITE of buf (RDMA_LEN bytes)
 * with RDS_RDMA_NOTIFY_ME.  Its cookie names no MR anywhere, which does
 * not matter: sent to nobody_addr(), the operation is never posted.
 */
static void send_rdma_write(int fd, const struct sockaddr_in *to,
			    const void *buf, uint64_t token)
{
	struct rds_iovec local = {
		.addr = (uintptr_t)buf,
		.bytes = RDMA_LEN,
	};
	struct rds_rdma_args args = {
		.cookie = 0x0000001000001234ULL,
		.remote_vec = { .addr = 0, .bytes = RDMA_LEN },
		.local_vec_addr = (uintptr_t)&local,
		.nr_local = 1,
		.flags = RDS_RDMA_READWRITE | RDS_RDMA_NOTIFY_ME,
		.user_token = token,
	};
	union {
		char buf[CMSG_SPACE(sizeof(args))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { (void *)"rdma", 4 };
	struct msghdr msg = {
		.msg_name = (void *)to,
		.msg_namelen = sizeof(*to),
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *cm;

	memset(&ctl, 0, sizeof(ctl));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_RDS;
	cm->cmsg_type = RDS_CMSG_RDMA_ARGS;
	cm->cmsg_len = CMSG_LEN(sizeof(args));
	memcpy(CMSG_DATA(cm), &args, sizeof(args));
	ASSERT_EQ(ASSERT_SYS_OK(sendmsg(fd, &msg, 0)), 4);
}

/*
 * recvmsg() with a control buffer of controllen bytes (0: none): the
 * RDS_CMSG_RDMA_STATUS notifications it carried are counted in *nnote,
 * the first one copied to *note; its msg_flags in *msg_flags.
 */
static long recv_notes(int fd, size_t controllen, int flags,
		       struct rds_rdma_notify *note, int *nnote,
		       int *msg_flags)
{
	union {
		char buf[4 * NOTE_SPACE];
		struct cmsghdr align;
	} ctl;
	char data[64];
	struct iovec iov = { data, sizeof(data) };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = controllen ? ctl.buf : NULL,
		.msg_controllen = controllen,
	};
	struct cmsghdr *cm;
	long ret;
	int err;

	ASSERT_TRUE(controllen <= sizeof(ctl.buf), "control buffer of %zu",
		    controllen);
	memset(&ctl, 0, sizeof(ctl));
	memset(note, 0, sizeof(*note));
	*nnote = 0;
	ret = recvmsg(fd, &msg, flags);
	err = errno;
	*msg_flags = ret < 0 ? 0 : msg.msg_flags;
	for (cm = ret < 0 ? NULL : CMSG_FIRSTHDR(&msg); cm;
	     cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level != SOL_RDS ||
		    cm->cmsg_type != RDS_CMSG_RDMA_STATUS) {
			rt_fail("unexpected cmsg level %d type %d",
				cm->cmsg_level, cm->cmsg_type);
			continue;
		}
		EXPECT_EQ(cm->cmsg_len, CMSG_LEN(sizeof(*note)));
		if (!(*nnote)++)
			memcpy(note, CMSG_DATA(cm), sizeof(*note));
	}
	errno = err;
	return ret;
}

/* The one notification queued on fd: token, RDS_RDMA_CANCELED, whole. */
static void expect_canceled_note(int fd, uint64_t token)
{
	struct rds_rdma_notify note;
	int n, flags;

	EXPECT_EQ(EXPECT_SYS_OK(recv_notes(fd, 4 * NOTE_SPACE, 0, &note, &n,
					   &flags)), 0);
	EXPECT_EQ(flags & MSG_CTRUNC, 0);
	EXPECT_EQ(n, 1);
	EXPECT_EQ(note.user_token, token);
	EXPECT_EQ(note.status, RDS_RDMA_CANCELED);
}

/*
 * RDS_CANCEL_SENT_TO withdraws a message whose RDMA operation was never
 * posted: the operation ends as RDS_RDMA_CANCELED, and with
 * RDS_RDMA_NOTIFY_ME a notification says so, with its user_token, as
 * the distribution's RDS sends it.  An operation to another port stays
 * queued and unreported.
 */
static void test_rdma_cancel_sent_to(void)
{
	struct in_addr nobody = nobody_addr();
	struct rds_rdma_notify note;
	struct sockaddr_in to, other;
	unsigned char *buf = xmalloc(RDMA_LEN);
	int fd, n, flags;

	fill_pattern(buf, RDMA_LEN, 1);
	fd = rds_bound(addr_main, 0, NULL);
	sin_set(&to, nobody, 4000);
	sin_set(&other, nobody, 4001);
	send_rdma_write(fd, &to, buf, RDMA_TOKEN);
	send_rdma_write(fd, &other, buf, RDMA_TOKEN + 1);

	/* Queued, not failed: nothing to report yet. */
	EXPECT_SYS_ERR(recv_notes(fd, 4 * NOTE_SPACE, MSG_DONTWAIT, &note, &n,
				  &flags), EAGAIN);
	ASSERT_SYS_OK(setsockopt(fd, SOL_RDS, RDS_CANCEL_SENT_TO, &to,
				 sizeof(to)));
	expect_canceled_note(fd, RDMA_TOKEN);
	EXPECT_SYS_ERR(recv_notes(fd, 4 * NOTE_SPACE, MSG_DONTWAIT, &note, &n,
				  &flags), EAGAIN);
	close(fd);
	free(buf);
}

/*
 * A notification leaves the socket only in a control buffer that holds
 * it whole.  A reader without room for one (recv(), or a buffer one
 * byte short) is served as if none were queued: the next datagram, or
 * EAGAIN; a later recvmsg() with room gets the notification.
 *
 * Distribution behaviour: a reader without room gets an empty message
 * with MSG_CTRUNC and the notification is freed, so nobody ever learns
 * how the operation ended; the case checks that and reports SKIP.
 */
static void test_rdma_note_needs_room(void)
{
	struct in_addr nobody = nobody_addr();
	unsigned char *buf = xmalloc(RDMA_LEN);
	struct rds_rdma_notify note;
	struct sockaddr_in me, to;
	int fd, tx, n, flags;
	char data[64];
	long ret;

	fill_pattern(buf, RDMA_LEN, 2);
	fd = rds_bound(addr_main, 0, &me);
	tx = rds_bound(addr_main, 0, NULL);
	sin_set(&to, nobody, 4000);
	send_rdma_write(fd, &to, buf, RDMA_TOKEN + 2);
	ASSERT_SYS_OK(setsockopt(fd, SOL_RDS, RDS_CANCEL_SENT_TO, &to,
				 sizeof(to)));
	EXPECT_TRUE(poll_fd(fd, POLLIN, 0) & POLLIN,
		    "no POLLIN with a notification queued");

	/* No data, no room: as an empty socket. */
	ret = recv(fd, data, sizeof(data), MSG_DONTWAIT);
	if (ret >= 0 && modules_are_distro()) {
		EXPECT_EQ(ret, 0);
		EXPECT_SYS_ERR(recv_notes(fd, 4 * NOTE_SPACE, MSG_DONTWAIT,
					  &note, &n, &flags), EAGAIN);
		close(tx);
		close(fd);
		free(buf);
		rt_skip("distribution: recv() got an empty message, the notification was freed");
	}
	if (ret >= 0)
		rt_fail("recv() without a control buffer returned %ld bytes, not EAGAIN",
			ret);
	else
		EXPECT_EQ(errno, EAGAIN);

	/* Data queued: recv() and a short buffer get the data. */
	EXPECT_EQ(EXPECT_SYS_OK(sendto(tx, "first", 5, 0, (void *)&me,
				       sizeof(me))), 5);
	recv_text(fd, "first", NULL);
	EXPECT_EQ(EXPECT_SYS_OK(sendto(tx, "second", 6, 0, (void *)&me,
				       sizeof(me))), 6);
	EXPECT_EQ(EXPECT_SYS_OK(recv_notes(fd, NOTE_SPACE - 1, 0, &note, &n,
					   &flags)), 6);
	EXPECT_EQ(n, 0);
	EXPECT_EQ(flags & MSG_CTRUNC, 0);
	EXPECT_SYS_ERR(recv_notes(fd, NOTE_SPACE - 1, MSG_DONTWAIT, &note, &n,
				  &flags), EAGAIN);

	/* Room for exactly one: it is still there, whole. */
	EXPECT_EQ(EXPECT_SYS_OK(recv_notes(fd, NOTE_SPACE, MSG_DONTWAIT, &note,
					   &n, &flags)), 0);
	EXPECT_EQ(flags & MSG_CTRUNC, 0);
	EXPECT_EQ(n, 1);
	EXPECT_EQ(note.user_token, RDMA_TOKEN + 2);
	EXPECT_EQ(note.status, RDS_RDMA_CANCELED);
	expect_empty(fd);
	close(tx);
	close(fd);
	free(buf);
}

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
static void test_stress_many_senders(void)
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
static void test_stress_close_receiver(void)
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

/* ------------------------------------------------------------- driver */

/*
 * The core cases run on the main address and again on 127.0.0.1 (which
 * the distribution always serves with its loopback transport).
 */
#define ON_BOTH(fn)							\
static void test_##fn(void)						\
{									\
	fn(addr_main);							\
}									\
static void test_##fn##_lo(void)					\
{									\
	if (main_is_lo)							\
		rt_skip("the main address is already on 127/8");	\
	fn(addr_lo);							\
}

ON_BOTH(connect_default_dest)
ON_BOTH(send_recv_boundaries)
ON_BOTH(recv_msg_name)
ON_BOTH(message_sizes)
ON_BOTH(message_order)
ON_BOTH(close_with_queued)
ON_BOTH(many_sockets)

#define CASE(name)		{ #name, test_##name, 0 }
#define CASE_T(name, secs)	{ #name, test_##name, secs }

static const struct rt_case cases[] = {
	CASE(socket_create),
	CASE(socket_bad_type),
	CASE(bind_rds_addr),
	CASE(bind_explicit_port),
	CASE(bind_port_zero),
	CASE(bind_addr_in_use),
	CASE(bind_nonlocal),
	CASE(bind_bad_args),
	CASE(bind_reserved_port),
	CASE(bind_twice),
	CASE_T(connect_default_dest, 30),
	CASE_T(connect_default_dest_lo, 30),
	CASE(getpeername_unconnected),
	CASE(connect_bad_args),
	CASE(getsockname_unbound),
	CASE(getname_bad_args),
	CASE_T(send_recv_boundaries, 30),
	CASE_T(send_recv_boundaries_lo, 30),
	CASE_T(recv_msg_name, 30),
	CASE_T(recv_msg_name_lo, 30),
	CASE_T(message_sizes, 90),
	CASE_T(message_sizes_lo, 90),
	CASE_T(message_too_big, 30),
	CASE(message_over_sndbuf),
	CASE(send_unbound),
	CASE(send_no_dest),
	CASE(send_bad_args),
	CASE(send_efault),
	CASE(recv_efault),
	CASE(recv_dontwait_empty),
	CASE(recv_timeout),
	CASE(recv_odd_flags),
	CASE(recv_peek),
	CASE(recv_trunc),
	CASE_T(message_order, 60),
	CASE_T(message_order_lo, 60),
	CASE(send_no_listener),
	CASE(poll_plain),
	CASE(poll_monitored),
	CASE(poll_wakeup),
	CASE_T(cong_enobufs_lo, 60),
	CASE_T(cong_enobufs, 60),
	CASE_T(cong_empty_messages, 60),
	CASE_T(cong_blocking_sender, 60),
	CASE_T(cong_monitor, 60),
	CASE_T(cong_send_eintr, 60),
	CASE(opt_transport),
	CASE(opt_recverr),
	CASE(opt_cancel_sent_to),
	CASE(opt_cong_monitor),
	CASE(opt_rxpath_latency),
	CASE(opt_unknown),
	CASE_T(close_with_queued, 30),
	CASE_T(close_with_queued_lo, 30),
	CASE(recv_eintr),
	CASE(recv_restart),
	CASE_T(many_sockets, 60),
	CASE_T(many_sockets_lo, 60),
	CASE_T(stress_many_senders, 120),
	CASE_T(stress_close_receiver, 60),
	CASE(info_sockets),
	CASE(info_send_messages),
	CASE(rdma_cancel_sent_to),
	CASE(rdma_note_needs_room),
	CASE(info_bad_args),
	CASE_T(conn_reap, 120),
	CASE(ioctl_tos),
	CASE(rx_timestamp),
};

/* Use RDS_ADDR as the main address if a socket can bind to it. */
static void pick_main_address(void)
{
	const char *env = getenv("RDS_ADDR");
	struct sockaddr_in sin;
	int fd;

	addr_lo = in_addr_of("127.0.0.1");
	addr_main = addr_lo;
	if (env && *env && in_addr_of(env).s_addr != htonl(INADDR_NONE)) {
		fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
		sin_set(&sin, in_addr_of(env), 0);
		if (fd >= 0 && !bind(fd, (struct sockaddr *)&sin, sizeof(sin)))
			addr_main = sin.sin_addr;
		else
			rt_diag("cannot bind to RDS_ADDR %s: %s", env,
				rt_errname(errno));
		if (fd >= 0)
			close(fd);
	}
	main_is_lo = (ntohl(addr_main.s_addr) >> 24) == 127;
	inet_ntop(AF_INET, &addr_main, addr_main_str, sizeof(addr_main_str));
}

int main(int argc, char **argv)
{
	const char *modules = getenv("RDS_MODULES");
	unsigned int i;
	int fd, opt;

	while ((opt = getopt(argc, argv, "l")) != -1) {
		if (opt != 'l') {
			fprintf(stderr, "usage: %s [-l] [CASE...]\n", argv[0]);
			return 2;
		}
		for (i = 0; i < ARRAY_SIZE(cases); i++)
			printf("%s\n", cases[i].name);
		return 0;
	}

	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (fd < 0) {
		int err = errno;

		if (modules && (!strcmp(modules, "ours") ||
				!strcmp(modules, "distro"))) {
			printf("1..1\n# socket(AF_RDS): %s\n", rt_errname(err));
			printf("not ok 1 - AF_RDS sockets (RDS_MODULES=%s)\n",
			       modules);
			return RT_EXIT_FAIL;
		}
		printf("1..0 # SKIP socket(AF_RDS): %s: no RDS module loaded\n",
		       rt_errname(err));
		return RT_EXIT_SKIP;
	}
	close(fd);

	pick_main_address();
	rt_diag("primary address %s%s, loopback 127.0.0.1", addr_main_str,
		main_is_lo ? " (loopback transport: congestion cases skip)" :
		"");
	return rt_run(cases, ARRAY_SIZE(cases), argv + optind);
}
