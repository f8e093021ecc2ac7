// SPDX-License-Identifier: GPL-2.0
/*
 * rds_ipv6_local.c - rds_ipv6's cases on one node: bind() and the names
 * of IPv6 sockets, IPv4-mapped addresses, mixing the families, local
 * delivery over ::1, the global and the link-local address, connect(),
 * MSG_PEEK and MSG_TRUNC, the RDS_INFO and RDS6_INFO socket tables, and
 * RDS_CANCEL_SENT_TO with a struct sockaddr_in6.
 */
#include "rds_ipv6.h"

/* An address of this node that no host of the bench has. */
#define NOBODY6		"fd00::dead"

static const struct in6_addr loopback6 = IN6ADDR_LOOPBACK_INIT;

/* bind() to [a]:port%scope, @len bytes of name: bind()'s result. */
static int bind6(int fd, const struct in6_addr *a, unsigned short port,
		 unsigned int scope, socklen_t len)
{
	struct sockaddr_in6 s = sin6_of(a, port, scope);

	return bind(fd, (struct sockaddr *)&s, len);
}

/* The IPv4 address of the cases that need one: RDS_ADDR, else 127.0.0.1. */
static struct in_addr v4_addr(void)
{
	struct in_addr a;

	if (have_a4)
		return a4_self;
	inet_pton(AF_INET, "127.0.0.1", &a);
	return a;
}

/* A global address: RDS_ADDR6 if set, else ::1. */
static const struct in6_addr *v6_addr(void)
{
	return have_a6 ? &a6_self : &loopback6;
}

/*
 * The global address (RDS_ADDR6, which rxe0 serves): port 0 picks a port,
 * getsockname() gives back a struct sockaddr_in6 with the address, that
 * port, scope id 0 and no flow label; an explicit port is taken as given.
 */
void test_bind_global(void)
{
	struct sockaddr_in6 got;
	unsigned short port;
	int fd;

	need_a6();
	fd = rds_bound6(&a6_self, 0, 0, &got, LOCAL_RCV_MS);
	port = ntohs(got.sin6_port);
	close(fd);
	/* the port is free again once its socket is closed */
	fd = rds_bound6(&a6_self, port, 0, &got, LOCAL_RCV_MS);
	EXPECT_EQ(ntohs(got.sin6_port), port);
	close(fd);
}

/* ::1, which the loopback transport serves, like 127.0.0.1. */
void test_bind_loopback(void)
{
	struct sockaddr_in6 got;
	int fd;

	fd = rds_bound6(&loopback6, 0, 0, &got, LOCAL_RCV_MS);
	close(fd);
	fd = rds_bound6(&loopback6, ntohs(got.sin6_port), 0, NULL,
			LOCAL_RCV_MS);
	close(fd);
}

/*
 * A link-local address needs the scope id of its interface: without one,
 * EINVAL; with another interface's (lo) or one that does not exist,
 * EADDRNOTAVAIL; with eth0's, bound, and getsockname() gives the scope
 * id back.
 */
void test_bind_link_local(void)
{
	struct sockaddr_in6 got;
	int fd;

	need_ll6();
	fd = rds_socket();
	EXPECT_SYS_ERR(bind6(fd, &ll6_self, 0, 0, sizeof(got)), EINVAL);
	EXPECT_SYS_ERR(bind6(fd, &ll6_self, 0, if_nametoindex("lo"),
			     sizeof(got)), EADDRNOTAVAIL);
	EXPECT_SYS_ERR(bind6(fd, &ll6_self, 0, 0x7fffffff, sizeof(got)),
		       EADDRNOTAVAIL);
	/* the failures left the socket unbound */
	EXPECT_SYS_OK(bind6(fd, &ll6_self, 0, ifindex, sizeof(got)));
	close(fd);

	fd = rds_bound6(&ll6_self, 0, ifindex, &got, LOCAL_RCV_MS);
	EXPECT_EQ(got.sin6_scope_id, ifindex);
	close(fd);
}

/* Addresses this node does not have: EADDRNOTAVAIL, the socket unbound. */
void test_bind_not_local(void)
{
	static const char *const others[] = {
		NOBODY6, "2001:db8::1", "fd00::1:2",
	};
	struct in6_addr a;
	unsigned int i;
	int fd = rds_socket();

	for (i = 0; i < ARRAY_SIZE(others); i++) {
		a = in6_of(others[i]);
		if (!EXPECT_SYS_ERR(bind6(fd, &a, 0, 0, sizeof(struct sockaddr_in6)),
				    EADDRNOTAVAIL))
			rt_diag("bind to %s", others[i]);
	}
	if (have_ll6) {
		a = in6_of("fe80::dead");
		EXPECT_SYS_ERR(bind6(fd, &a, 0, ifindex,
				     sizeof(struct sockaddr_in6)),
			       EADDRNOTAVAIL);
	}
	EXPECT_SYS_OK(bind6(fd, v6_addr(), 0, 0, sizeof(struct sockaddr_in6)));
	close(fd);
}

/*
 * Names that are no unicast address, or too short: EINVAL.  The
 * unspecified address, multicast (with a scope id or not), the mapped
 * IPv4 broadcast and multicast; a name shorter than a struct
 * sockaddr_in6; and a second bind() of a bound socket.
 */
void test_bind_invalid(void)
{
	static const char *const bad[] = {
		"::", "ff02::1", "ff0e::1", "::ffff:255.255.255.255",
		"::ffff:224.0.0.1", "::ffff:0.0.0.0",
	};
	struct in6_addr a;
	unsigned int i;
	int fd = rds_socket();

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		a = in6_of(bad[i]);
		if (!EXPECT_SYS_ERR(bind6(fd, &a, 0, 0, sizeof(struct sockaddr_in6)),
				    EINVAL))
			rt_diag("bind to %s", bad[i]);
	}
	a = in6_of("ff02::1");
	EXPECT_SYS_ERR(bind6(fd, &a, 0, if_nametoindex("lo"),
			     sizeof(struct sockaddr_in6)), EINVAL);
	EXPECT_SYS_ERR(bind6(fd, v6_addr(), 0, 0,
			     sizeof(struct sockaddr_in6) - 1), EINVAL);
	EXPECT_SYS_ERR(bind6(fd, v6_addr(), 0, 0, sizeof(struct sockaddr_in)),
		       EINVAL);
	EXPECT_SYS_OK(bind6(fd, v6_addr(), 0, 0, sizeof(struct sockaddr_in6)));
	EXPECT_SYS_ERR(bind6(fd, v6_addr(), 0, 0, sizeof(struct sockaddr_in6)),
		       EINVAL);
	EXPECT_SYS_ERR(bind6(fd, &loopback6, 0, 0, sizeof(struct sockaddr_in6)),
		       EINVAL);
	close(fd);
}

/*
 * One address and port, one socket: a second gets EADDRINUSE, on the same
 * port of another address it binds.  An IPv4-mapped address is the IPv4
 * address: taken if the IPv4 address and port are.
 */
void test_bind_in_use(void)
{
	struct sockaddr_in6 got;
	struct sockaddr_in b4;
	struct in6_addr m;
	unsigned short port;
	int fa, fb, f4, fm;

	fa = rds_bound6(v6_addr(), 0, 0, &got, LOCAL_RCV_MS);
	port = ntohs(got.sin6_port);
	fb = rds_socket();
	EXPECT_SYS_ERR(bind6(fb, v6_addr(), port, 0, sizeof(got)), EADDRINUSE);
	if (have_a6)	/* the same port on ::1 */
		EXPECT_SYS_OK(bind6(fb, &loopback6, port, 0, sizeof(got)));
	close(fb);
	close(fa);

	f4 = rds_bound_at(v4_addr(), 0, &b4, LOCAL_RCV_MS);
	m = in6_mapped(v4_addr());
	fm = rds_socket();
	EXPECT_SYS_ERR(bind6(fm, &m, ntohs(b4.sin_port), 0, sizeof(got)),
		       EADDRINUSE);
	close(fm);
	close(f4);
}

/*
 * ::ffff:a.b.c.d is the IPv4 address a.b.c.d: a socket bound to it is an
 * IPv4 socket (getsockname() says AF_INET, 16 bytes; it is in the
 * RDS_INFO_SOCKETS table), a datagram sent to one arrives, and the names
 * recvmsg() gives are AF_INET.
 */
void test_v4mapped(void)
{
	struct in_addr a4 = v4_addr();
	struct in6_addr m = in6_mapped(a4);
	struct sockaddr_in got, b4, from;
	struct sockaddr_in6 to6;
	struct rds_info_socket *si;
	socklen_t len = sizeof(got), ilen;
	unsigned long ino;
	char buf[16];
	int fm, f4, i, rows = 0, flags;
	long n;

	fm = rds_socket();
	set_rcvtimeo(fm, LOCAL_RCV_MS);
	ASSERT_SYS_OK(bind6(fm, &m, 0, 0, sizeof(struct sockaddr_in6)));
	memset(&got, 0xa5, sizeof(got));
	ASSERT_SYS_OK(getsockname(fm, (struct sockaddr *)&got, &len));
	EXPECT_EQ(len, sizeof(struct sockaddr_in));
	EXPECT_EQ(got.sin_family, AF_INET);
	EXPECT_EQ(got.sin_addr.s_addr, a4.s_addr);
	EXPECT_NE(got.sin_port, 0);
	f4 = rds_bound_at(a4, 0, &b4, LOCAL_RCV_MS);

	/* mapped name -> IPv4 socket: the sender is named AF_INET */
	to6 = sin6_of(&m, ntohs(b4.sin_port), 0);
	EXPECT_EQ(EXPECT_SYS_OK(sendto(fm, "mapped", 6, 0,
				       (struct sockaddr *)&to6, sizeof(to6))), 6);
	memset(buf, 0, sizeof(buf));
	n = recv_msg(f4, buf, sizeof(buf), 0, &from, &flags);
	EXPECT_EQ(n, 6);
	EXPECT_TRUE(!memcmp(buf, "mapped", 6), "got '%.6s'", buf);
	EXPECT_TRUE(same_sin(&from, &got), "from %s, expected %s",
		    sin_str(&from), sin_str(&got));
	/* the IPv4 socket sends back to the mapped one's IPv4 name */
	to6 = sin6_of(&m, ntohs(got.sin_port), 0);
	EXPECT_EQ(EXPECT_SYS_OK(sendto(f4, "back", 4, 0,
				       (struct sockaddr *)&to6, sizeof(to6))), 4);
	n = recv_msg(fm, buf, sizeof(buf), 0, &from, &flags);
	EXPECT_EQ(n, 4);
	EXPECT_TRUE(!memcmp(buf, "back", 4), "got '%.4s'", buf);
	EXPECT_TRUE(same_sin(&from, &b4), "from %s, expected %s",
		    sin_str(&from), sin_str(&b4));

	ino = inode_of(fm);
	ASSERT_EQ(EXPECT_SYS_OK(rds_info_read(fm, RDS_INFO_SOCKETS,
					      (void **)&si, &ilen)),
		  sizeof(*si));
	for (i = 0; si && i < (int)(ilen / sizeof(*si)); i++) {
		if (si[i].inum != ino)
			continue;
		rows++;
		EXPECT_EQ(si[i].bound_addr, a4.s_addr);
		EXPECT_EQ(si[i].bound_port, got.sin_port);
	}
	EXPECT_EQ(rows, 1);
	free(si);
	expect_none(fm);
	expect_none(f4);
	close(f4);
	close(fm);
}

/*
 * A socket bound to an IPv6 address cannot send to an IPv4 one (as a
 * struct sockaddr_in or IPv4-mapped), nor one bound to IPv4 to an IPv6
 * address: EOPNOTSUPP, and nothing is sent.
 */
void test_mixed_families(void)
{
	struct in_addr a4 = v4_addr();
	struct in6_addr m = in6_mapped(a4);
	struct sockaddr_in6 b6, to6;
	struct sockaddr_in b4;
	int f6, f4;

	f6 = rds_bound6(v6_addr(), 0, 0, &b6, LOCAL_RCV_MS);
	f4 = rds_bound_at(a4, 0, &b4, LOCAL_RCV_MS);

	EXPECT_SYS_ERR(sendto(f6, "x", 1, 0, (struct sockaddr *)&b4,
			      sizeof(b4)), EOPNOTSUPP);
	to6 = sin6_of(&m, ntohs(b4.sin_port), 0);
	EXPECT_SYS_ERR(sendto(f6, "x", 1, 0, (struct sockaddr *)&to6,
			      sizeof(to6)), EOPNOTSUPP);
	EXPECT_SYS_ERR(sendto(f4, "x", 1, 0, (struct sockaddr *)&b6,
			      sizeof(b6)), EOPNOTSUPP);
	to6 = sin6_of(&loopback6, ntohs(b6.sin6_port), 0);
	EXPECT_SYS_ERR(sendto(f4, "x", 1, 0, (struct sockaddr *)&to6,
			      sizeof(to6)), EOPNOTSUPP);
	/* still good for their own family */
	send_seed(f6, &b6, 10, 1);
	recv_seed6(f6, 10, 1, &b6);
	expect_none(f6);
	expect_none(f4);
	close(f4);
	close(f6);
}

/*
 * Local delivery from a socket on @a1 (@scope1) to one on @a2 (@scope2):
 * empty, 1 byte, 4 KiB and @big bytes, in order, byte for byte, each
 * named by a struct sockaddr_in6 of its sender; then one back.
 */
static void local_exchange2(const struct in6_addr *a1, unsigned int scope1,
			    const struct in6_addr *a2, unsigned int scope2,
			    size_t big)
{
	const size_t sizes[] = { 0, 1, 4096, big };
	struct sockaddr_in6 n1, n2;
	unsigned int i;
	int f1, f2;

	f1 = rds_bound6(a1, 0, scope1, &n1, LOCAL_RCV_MS);
	f2 = rds_bound6(a2, 0, scope2, &n2, LOCAL_RCV_MS);
	make_room(f1, MSG_MAX, 0);
	make_room(f2, MSG_MAX, 0);
	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		send_seed(f1, &n2, sizes[i], 100 + i);
	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		recv_seed6(f2, sizes[i], 100 + i, &n1);
	send_seed(f2, &n1, 333, 7);
	recv_seed6(f1, 333, 7, &n2);
	expect_none(f1);
	expect_none(f2);
	close(f2);
	close(f1);
}

/* The same between two sockets of one address and scope. */
static void local_exchange(const struct in6_addr *a, unsigned int scope,
			   size_t big)
{
	local_exchange2(a, scope, a, scope, big);
}

void test_local_loopback(void)
{
	local_exchange(&loopback6, 0, MSG_MAX);
}

void test_local_global(void)
{
	need_a6();
	local_exchange(&a6_self, 0, MSG_MAX);
}

/*
 * The same on the link-local address, the names carrying eth0's scope
 * id.  A link-local destination without a scope id, or with another
 * interface's than the socket's, is EINVAL.
 */
void test_local_link_local(void)
{
	struct sockaddr_in6 n1, to;
	int f1;

	need_ll6();
	local_exchange(&ll6_self, ifindex, 4096);

	f1 = rds_bound6(&ll6_self, 0, ifindex, &n1, LOCAL_RCV_MS);
	to = n1;
	to.sin6_scope_id = 0;
	EXPECT_SYS_ERR(sendto(f1, "x", 1, 0, (struct sockaddr *)&to,
			      sizeof(to)), EINVAL);
	to.sin6_scope_id = if_nametoindex("lo");
	EXPECT_SYS_ERR(sendto(f1, "x", 1, 0, (struct sockaddr *)&to,
			      sizeof(to)), EINVAL);
	expect_none(f1);
	close(f1);
}

/*
 * A socket on the link-local address sends to one on ::1 and back, as
 * local_exchange() does: ::1 is this host's (local delivery, the scope id
 * only names the sender's link) and its socket has no scope to match.  Our module used to take
 * ::1 for a remote address here and kept trying to reach it over
 * rdma_cm; the distribution delivers over loopback but looks the
 * receiver up with the sender's scope, finds nobody and drops the
 * datagram without a word.  A datagram to a bound local socket must
 * arrive: skipped on the distribution's module.
 */
void test_local_ll_to_loopback(void)
{
	const char *modules = getenv("RDS_MODULES");

	need_ll6();
	if (modules && !strcmp(modules, "distro"))
		rt_skip("the distribution drops a datagram from a %s",
			"link-local socket to ::1 (receiver looked up with the sender's scope)");
	local_exchange2(&ll6_self, ifindex, &loopback6, 0, 4096);
}

/*
 * connect() to an IPv6 name: getpeername() gives it back (a struct
 * sockaddr_in6), send() without a name goes there.  A socket connected
 * but not bound has the name [::]:0 in AF_INET6.  Errors: a name
 * shorter than a struct sockaddr_in6 is EINVAL, as is a link-local one
 * without a scope id; the unspecified and multicast addresses are
 * EPROTOTYPE (the distribution's choice for names that are no unicast
 * address).
 */
void test_connect_send(void)
{
	const struct in6_addr *a = v6_addr();
	struct sockaddr_in6 n1, n2, got, bad;
	socklen_t len;
	int f1, f2, f3;

	f1 = rds_bound6(a, 0, 0, &n1, LOCAL_RCV_MS);
	f2 = rds_bound6(a, 0, 0, &n2, LOCAL_RCV_MS);
	ASSERT_SYS_OK(connect(f1, (struct sockaddr *)&n2, sizeof(n2)));
	len = sizeof(got);
	memset(&got, 0xa5, sizeof(got));
	ASSERT_SYS_OK(getpeername(f1, (struct sockaddr *)&got, &len));
	expect_sin6(&got, len, &n2, "getpeername()");
	{
		unsigned char buf[64];

		fill_pattern(buf, sizeof(buf), 3);
		EXPECT_EQ(EXPECT_SYS_OK(send(f1, buf, sizeof(buf), 0)),
			  sizeof(buf));
	}
	/* a name still goes where it says */
	send_seed(f1, &n1, 32, 4);
	recv_seed6(f2, 64, 3, &n1);
	recv_seed6(f1, 32, 4, &n1);

	f3 = rds_socket();
	ASSERT_SYS_OK(connect(f3, (struct sockaddr *)&n2, sizeof(n2)));
	len = sizeof(got);
	memset(&got, 0xa5, sizeof(got));
	ASSERT_SYS_OK(getsockname(f3, (struct sockaddr *)&got, &len));
	bad = sin6_of(&in6addr_any, 0, 0);
	expect_sin6(&got, len, &bad, "getsockname() of a connected socket");
	EXPECT_SYS_ERR(connect(f3, (struct sockaddr *)&n2, sizeof(n2) - 1),
		       EINVAL);
	bad = sin6_of(&in6addr_any, ntohs(n2.sin6_port), 0);
	EXPECT_SYS_ERR(connect(f3, (struct sockaddr *)&bad, sizeof(bad)),
		       EPROTOTYPE);
	bad.sin6_addr = in6_of("ff02::1");
	EXPECT_SYS_ERR(connect(f3, (struct sockaddr *)&bad, sizeof(bad)),
		       EPROTOTYPE);
	bad.sin6_addr = in6_of("fe80::1");
	EXPECT_SYS_ERR(connect(f3, (struct sockaddr *)&bad, sizeof(bad)),
		       EINVAL);
	expect_none(f1);
	expect_none(f2);
	close(f3);
	close(f2);
	close(f1);
}

/*
 * MSG_PEEK leaves the message queued, with the sender's IPv6 name; a
 * buffer too small with MSG_TRUNC gives the whole length, MSG_TRUNC in
 * msg_flags, the first bytes and the name, and takes the message.
 */
void test_peek_trunc(void)
{
	const struct in6_addr *a = v6_addr();
	struct sockaddr_in6 n1, n2;
	unsigned char buf[200], want[100];
	union rds_sa from;
	struct iovec iov;
	struct msghdr msg;
	int f1, f2;

	f1 = rds_bound6(a, 0, 0, &n1, LOCAL_RCV_MS);
	f2 = rds_bound6(a, 0, 0, &n2, LOCAL_RCV_MS);
	fill_pattern(want, sizeof(want), 9);
	send_seed(f1, &n2, sizeof(want), 9);

	memset(&msg, 0, sizeof(msg));
	memset(buf, 0, sizeof(buf));
	iov.iov_base = buf;
	iov.iov_len = sizeof(buf);
	msg.msg_name = &from;
	msg.msg_namelen = sizeof(from);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	EXPECT_EQ(EXPECT_SYS_OK(recvmsg(f2, &msg, MSG_PEEK)), sizeof(want));
	EXPECT_TRUE(!memcmp(buf, want, sizeof(want)), "peeked bytes differ");
	expect_sin6(&from, msg.msg_namelen, &n1, "MSG_PEEK name");

	memset(buf, 0, sizeof(buf));
	memset(&from, 0, sizeof(from));
	iov.iov_len = 10;
	msg.msg_namelen = sizeof(from);
	msg.msg_flags = 0;
	EXPECT_EQ(EXPECT_SYS_OK(recvmsg(f2, &msg, MSG_TRUNC)), sizeof(want));
	EXPECT_TRUE(msg.msg_flags & MSG_TRUNC, "msg_flags %#x lacks MSG_TRUNC",
		    msg.msg_flags);
	EXPECT_TRUE(!memcmp(buf, want, 10) && !buf[10], "truncated bytes differ");
	expect_sin6(&from, msg.msg_namelen, &n1, "MSG_TRUNC name");
	expect_none(f2);
	close(f2);
	close(f1);
}

/*
 * RDS6_INFO_SOCKETS lists every socket, IPv6 ones with their bound and
 * connected addresses and ports, IPv4 ones with IPv4-mapped addresses;
 * RDS_INFO_SOCKETS lists only the IPv4 ones.
 */
void test_info_sockets(void)
{
	const struct in6_addr *a = v6_addr();
	struct in_addr a4 = v4_addr();
	struct in6_addr m = in6_mapped(a4), ba, ca;
	struct sockaddr_in6 n6, peer6;
	struct sockaddr_in n4;
	struct rds6_info_socket *s6;
	struct rds_info_socket *s4;
	unsigned long ino6, ino4;
	int f6, fp, f4, i, rows6 = 0, rows4 = 0, v4_in_6 = 0, v6_in_4 = 0;
	socklen_t len;

	f6 = rds_bound6(a, 0, 0, &n6, LOCAL_RCV_MS);
	fp = rds_bound6(a, 0, 0, &peer6, LOCAL_RCV_MS);
	ASSERT_SYS_OK(connect(f6, (struct sockaddr *)&peer6, sizeof(peer6)));
	f4 = rds_bound_at(a4, 0, &n4, LOCAL_RCV_MS);
	ino6 = inode_of(f6);
	ino4 = inode_of(f4);

	ASSERT_EQ(EXPECT_SYS_OK(rds_info_read(f6, RDS6_INFO_SOCKETS,
					      (void **)&s6, &len)),
		  sizeof(*s6));
	for (i = 0; s6 && i < (int)(len / sizeof(*s6)); i++) {
		memcpy(&ba, &s6[i].bound_addr, sizeof(ba));
		memcpy(&ca, &s6[i].connected_addr, sizeof(ca));
		if (s6[i].inum == ino6) {
			rows6++;
			EXPECT_TRUE(!memcmp(&ba, a, sizeof(ba)),
				    "bound to %s, expected %s", in6_str(&ba),
				    in6_str(a));
			EXPECT_EQ(s6[i].bound_port, n6.sin6_port);
			EXPECT_TRUE(!memcmp(&ca, a, sizeof(ca)),
				    "connected to %s, expected %s",
				    in6_str(&ca), in6_str(a));
			EXPECT_EQ(s6[i].connected_port, peer6.sin6_port);
		} else if (s6[i].inum == ino4) {
			v4_in_6++;
			EXPECT_TRUE(!memcmp(&ba, &m, sizeof(ba)),
				    "IPv4 socket bound to %s, expected %s",
				    in6_str(&ba), in6_str(&m));
			EXPECT_EQ(s6[i].bound_port, n4.sin_port);
		}
	}
	EXPECT_EQ(rows6, 1);
	EXPECT_EQ(v4_in_6, 1);
	free(s6);

	ASSERT_EQ(EXPECT_SYS_OK(rds_info_read(f6, RDS_INFO_SOCKETS,
					      (void **)&s4, &len)),
		  sizeof(*s4));
	for (i = 0; s4 && i < (int)(len / sizeof(*s4)); i++) {
		if (s4[i].inum == ino6)
			v6_in_4++;
		if (s4[i].inum == ino4) {
			rows4++;
			EXPECT_EQ(s4[i].bound_addr, a4.s_addr);
			EXPECT_EQ(s4[i].bound_port, n4.sin_port);
		}
	}
	EXPECT_EQ(rows4, 1);
	EXPECT_EQ(v6_in_4, 0);
	free(s4);
	close(f4);
	close(fp);
	close(f6);
}

/*
 * How many messages the socket bound to *self has queued to [addr]:port,
 * by RDS6_INFO_SEND_MESSAGES.
 */
static int queued_to(int fd, const struct sockaddr_in6 *self,
		     const struct in6_addr *addr, in_port_t port)
{
	struct rds6_info_message *mi;
	struct in6_addr l, f;
	socklen_t len;
	int i, n = 0;

	ASSERT_EQ(EXPECT_SYS_OK(rds_info_read(fd, RDS6_INFO_SEND_MESSAGES,
					      (void **)&mi, &len)),
		  sizeof(*mi));
	for (i = 0; mi && i < (int)(len / sizeof(*mi)); i++) {
		memcpy(&l, &mi[i].laddr, sizeof(l));
		memcpy(&f, &mi[i].faddr, sizeof(f));
		if (mi[i].lport == self->sin6_port && mi[i].fport == port &&
		    !memcmp(&l, &self->sin6_addr, sizeof(l)) &&
		    !memcmp(&f, addr, sizeof(f)))
			n++;
	}
	free(mi);
	return n;
}

/*
 * RDS_CANCEL_SENT_TO with a struct sockaddr_in6 drops what the socket has
 * queued to that address and port, and only that: messages to a host
 * that is not there wait in the queue (RDS6_INFO_SEND_MESSAGES) until
 * cancelled.
 */
void test_cancel_sent_to(void)
{
	struct in6_addr nobody = in6_of(NOBODY6);
	struct sockaddr_in6 self, to1, to2;
	int fd;

	need_a6();
	fd = rds_bound6(&a6_self, 0, 0, &self, LOCAL_RCV_MS);
	to1 = sin6_of(&nobody, 4000, 0);
	to2 = sin6_of(&nobody, 4001, 0);
	send_seed(fd, &to1, 100, 1);
	send_seed(fd, &to2, 200, 2);
	send_seed(fd, &to1, 300, 3);
	EXPECT_EQ(queued_to(fd, &self, &nobody, to1.sin6_port), 2);
	EXPECT_EQ(queued_to(fd, &self, &nobody, to2.sin6_port), 1);

	ASSERT_SYS_OK(setsockopt(fd, SOL_RDS, RDS_CANCEL_SENT_TO, &to1,
				 sizeof(to1)));
	EXPECT_EQ(queued_to(fd, &self, &nobody, to1.sin6_port), 0);
	EXPECT_EQ(queued_to(fd, &self, &nobody, to2.sin6_port), 1);
	ASSERT_SYS_OK(setsockopt(fd, SOL_RDS, RDS_CANCEL_SENT_TO, &to2,
				 sizeof(to2)));
	EXPECT_EQ(queued_to(fd, &self, &nobody, to2.sin6_port), 0);
	expect_none(fd);
	close(fd);
}
