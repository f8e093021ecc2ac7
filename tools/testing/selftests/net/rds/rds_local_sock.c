// SPDX-License-Identifier: GPL-2.0
/*
 * rds_local_sock.c - rds_local's cases of socket(), bind(), connect() and getsockname/getpeername.
 */
#include "rds_local.h"

/* ----------------------------------------------------------- socket() */

void test_socket_create(void)
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
void test_socket_bad_type(void)
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
void test_bind_rds_addr(void)
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

void test_bind_explicit_port(void)
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

void test_bind_port_zero(void)
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

void test_bind_addr_in_use(void)
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

void test_bind_nonlocal(void)
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

void test_bind_bad_args(void)
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
void test_bind_reserved_port(void)
{
	struct sockaddr_in sin;
	int fd = rds_socket();

	sin_set(&sin, addr_main, 1);
	EXPECT_SYS_ERR(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), EINVAL);
	close(fd);
}

void test_bind_twice(void)
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

ON_BOTH(connect_default_dest)

void test_getpeername_unconnected(void)
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

void test_connect_bad_args(void)
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

void test_getsockname_unbound(void)
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

void test_getname_bad_args(void)
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

/* ::ffff:@addr, port @port */
static void sin6_mapped(struct sockaddr_in6 *sin6, struct in_addr addr,
			unsigned short port)
{
	memset(sin6, 0, sizeof(*sin6));
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(port);
	sin6->sin6_addr.s6_addr[10] = 0xff;
	sin6->sin6_addr.s6_addr[11] = 0xff;
	memcpy(&sin6->sin6_addr.s6_addr[12], &addr, sizeof(addr));
}

/*
 * An IPv4-mapped IPv6 address (::ffff:a.b.c.d) in a struct sockaddr_in6
 * is the IPv4 address wherever an address is taken (bind, connect,
 * sendto), as on the distribution; names given back stay AF_INET.  The
 * mapped 0.0.0.0 is EINVAL as 0.0.0.0 is.  A socket bound to an IPv4
 * address cannot send to an IPv6 one (EOPNOTSUPP), on either module.
 */
void test_v4mapped_addrs(void)
{
	struct sockaddr_in a, b, got;
	struct sockaddr_in6 m;
	socklen_t len = sizeof(got);
	int fa = rds_socket(), fb, fc;

	set_rcvtimeo(fa, RCV_TIMEOUT_MS);
	sin6_mapped(&m, addr_main, 0);
	ASSERT_SYS_OK(bind(fa, (struct sockaddr *)&m, sizeof(m)));
	ASSERT_SYS_OK(getsockname(fa, (struct sockaddr *)&got, &len));
	ASSERT_EQ(len, sizeof(got));
	EXPECT_EQ(got.sin_family, AF_INET);
	EXPECT_EQ(got.sin_addr.s_addr, addr_main.s_addr);
	a = got;
	fb = rds_bound(addr_main, 0, &b);

	/* sendto() a mapped name: arrives, named in AF_INET */
	sin6_mapped(&m, addr_main, ntohs(b.sin_port));
	EXPECT_EQ(EXPECT_SYS_OK(sendto(fa, "mapped", 6, 0, (struct sockaddr *)&m,
				       sizeof(m))), 6);
	recv_text(fb, "mapped", &a);
	/* connect() to one, then send() */
	sin6_mapped(&m, addr_main, ntohs(a.sin_port));
	ASSERT_SYS_OK(connect(fb, (struct sockaddr *)&m, sizeof(m)));
	EXPECT_EQ(EXPECT_SYS_OK(send(fb, "back", 4, 0)), 4);
	recv_text(fa, "back", &b);

	sin6_mapped(&m, in_addr_of("0.0.0.0"), ntohs(b.sin_port));
	EXPECT_SYS_ERR(sendto(fa, "x", 1, 0, (struct sockaddr *)&m, sizeof(m)),
		       EINVAL);
	fc = rds_socket();
	sin6_mapped(&m, in_addr_of("0.0.0.0"), 0);
	EXPECT_SYS_ERR(bind(fc, (struct sockaddr *)&m, sizeof(m)), EINVAL);
	/* too short for a sockaddr_in6 */
	sin6_mapped(&m, addr_main, 0);
	EXPECT_SYS_ERR(bind(fc, (struct sockaddr *)&m, sizeof(m) - 1), EINVAL);
	memset(&m, 0, sizeof(m));
	m.sin6_family = AF_INET6;
	m.sin6_addr.s6_addr[15] = 1;	/* ::1 */
	m.sin6_port = b.sin_port;
	EXPECT_SYS_ERR(sendto(fa, "x", 1, 0, (struct sockaddr *)&m, sizeof(m)),
		       EOPNOTSUPP);
	expect_empty(fa);
	expect_empty(fb);
	close(fc);
	close(fb);
	close(fa);
}
