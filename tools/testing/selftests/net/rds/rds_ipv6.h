/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rds_ipv6.h - what the files of rds_ipv6 share: the bench's IPv6
 * addresses, helpers for struct sockaddr_in6, and the cases, which
 * rds_ipv6.c lists in its two tables.  Each rds_ipv6_*.c holds the cases
 * of one topic:
 *
 *   rds_ipv6_local.c	one node: bind, names, IPv4-mapped addresses,
 *			mixing the families, local delivery, RDS6_INFO
 *			tables, RDS_CANCEL_SENT_TO
 *   rds_ipv6_remote.c	two nodes (rds_peer.h): datagrams over global and
 *			link-local addresses, RDS6_INFO_CONNECTIONS,
 *			RDS_GET_MR_FOR_DEST, RDMA cycles (rds_rdma_lib.c)
 */
#ifndef RDS_IPV6_H
#define RDS_IPV6_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <net/if.h>
#include <sys/stat.h>

#include "rds_test.h"
#include "rds_sock_util.h"
#include "rds_peer.h"
#include "rds_rdma.h"

#undef CTL_PORT
#undef PORT_BASE
#define CTL_PORT	18634
#define PORT_BASE	30000	/* case k uses PORT_BASE + 32 k .. + 31 */
#define LOCAL_RCV_MS	10000	/* the longest a one-node receive waits */
#define MSG_MAX		65536	/* the largest datagram of the cases */

/*
 * The bench's addresses (vm-run.sh): fd00::K (RDS_ADDR6), eth0's
 * link-local address (RDS_LL6) and its ifindex (RDS_IFINDEX), the peer's
 * (RDS_PEER_ADDR6, RDS_PEER_LL6), and the IPv4 address (RDS_ADDR).  The
 * have_* flags say which were given.  Defined in rds_ipv6.c.
 */
extern struct in6_addr a6_self, a6_peer, ll6_self, ll6_peer;
extern struct in_addr a4_self;
extern unsigned int ifindex;
extern int have_a6, have_ll6, have_a4;

/* ---------------------------------------------------------------- helpers */

static inline struct in6_addr in6_of(const char *s)
{
	struct in6_addr a;

	memset(&a, 0, sizeof(a));
	if (inet_pton(AF_INET6, s, &a) != 1)
		memset(&a, 0xff, sizeof(a));
	return a;
}

/* ::ffff:a.b.c.d */
static inline struct in6_addr in6_mapped(struct in_addr a4)
{
	struct in6_addr a;

	memset(&a, 0, sizeof(a));
	a.s6_addr[10] = 0xff;
	a.s6_addr[11] = 0xff;
	memcpy(&a.s6_addr[12], &a4, sizeof(a4));
	return a;
}

static inline struct sockaddr_in6 sin6_of(const struct in6_addr *a,
					  unsigned short port,
					  unsigned int scope)
{
	struct sockaddr_in6 s;

	memset(&s, 0, sizeof(s));
	s.sin6_family = AF_INET6;
	s.sin6_addr = *a;
	s.sin6_port = htons(port);
	s.sin6_scope_id = scope;
	return s;
}

static inline const char *in6_str(const struct in6_addr *a)
{
	static char buf[2][INET6_ADDRSTRLEN];
	static int which;

	which ^= 1;
	inet_ntop(AF_INET6, a, buf[which], sizeof(buf[which]));
	return buf[which];
}

/*
 * Expect *got (@len bytes, as getsockname() or recvmsg() gave them) to be
 * the struct sockaddr_in6 *want: family, address, port, scope id, and a
 * flow label of 0.
 */
static inline int expect_sin6(const void *got, socklen_t len,
			      const struct sockaddr_in6 *want,
			      const char *what)
{
	const struct sockaddr_in6 *g = got;

	if (!EXPECT_TRUE(len == sizeof(*want), "%s: name of %u bytes, expected %zu (family %d)",
			 what, len, sizeof(*want), g->sin6_family))
		return 0;
	if (g->sin6_family == AF_INET6 &&
	    !memcmp(&g->sin6_addr, &want->sin6_addr, sizeof(want->sin6_addr)) &&
	    g->sin6_port == want->sin6_port &&
	    g->sin6_scope_id == want->sin6_scope_id && !g->sin6_flowinfo)
		return 1;
	rt_fail("%s: expected %s, got %s (flowinfo %u)", what, sa_str(want),
		sa_str(g), g->sin6_flowinfo);
	return 0;
}

/*
 * A socket bound to [a]:port (port 0: any) with this scope id, its name
 * from getsockname() checked and returned in *out if out is not NULL.
 * Receives wait rcv_ms at most.
 */
static inline int rds_bound6(const struct in6_addr *a, unsigned short port,
			     unsigned int scope, struct sockaddr_in6 *out,
			     int rcv_ms)
{
	struct sockaddr_in6 sin6 = sin6_of(a, port, scope), got;
	socklen_t len = sizeof(got);
	int fd = rds_socket();

	ASSERT_SYS_OK(bind(fd, (struct sockaddr *)&sin6, sizeof(sin6)));
	memset(&got, 0xa5, sizeof(got));
	ASSERT_SYS_OK(getsockname(fd, (struct sockaddr *)&got, &len));
	ASSERT_TRUE(port || got.sin6_port, "bound to port 0");
	if (!port)
		sin6.sin6_port = got.sin6_port;
	if (!expect_sin6(&got, len, &sin6, "getsockname()"))
		rt_abort();
	set_rcvtimeo(fd, rcv_ms);
	if (out)
		*out = got;
	return fd;
}

/* sendto() @len pattern bytes of @seed to @to (either family). */
static inline void send_seed(int fd, const void *to, size_t len,
			     uint32_t seed)
{
	unsigned char *buf = xmalloc(len);
	long ret;

	fill_pattern(buf, len, seed);
	ret = EXPECT_SYS_OK(sendto(fd, buf, len, 0, to, sa_len(to)));
	free(buf);
	if (ret < 0)
		rt_abort();
	ASSERT_EQ(ret, len);
}

/*
 * Receive one message: exactly @len pattern bytes of @seed, not
 * truncated, from the struct sockaddr_in6 *from (namelen its size).
 */
static inline void recv_seed6(int fd, size_t len, uint32_t seed,
			      const struct sockaddr_in6 *from)
{
	size_t room = len + 64, bad;
	unsigned char *buf = xmalloc(room);
	union rds_sa src;
	struct iovec iov = { buf, room };
	struct msghdr msg = {
		.msg_name = &src,
		.msg_namelen = sizeof(src),
		.msg_iov = &iov,
		.msg_iovlen = 1,
	};
	long ret;

	memset(buf, 0, room);
	memset(&src, 0xa5, sizeof(src));
	ret = recvmsg(fd, &msg, 0);
	if (ret < 0) {
		rt_fail("waiting for %zu bytes from %s: recvmsg: %s", len,
			sa_str(from), rt_errname(errno));
		free(buf);
		rt_abort();
	}
	EXPECT_EQ(ret, len);
	EXPECT_EQ(msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC), 0);
	expect_sin6(&src, msg.msg_namelen, from, "recvmsg() name");
	if (ret == (long)len) {
		bad = pattern_mismatch(buf, len, seed);
		EXPECT_TRUE(bad == len, "message of %zu bytes: byte %zu is not the sender's",
			    len, bad);
	}
	free(buf);
}

/* Nothing is queued on fd (either family). */
static inline void expect_none(int fd)
{
	union rds_sa from;
	struct iovec iov;
	struct msghdr msg = {
		.msg_name = &from,
		.msg_namelen = sizeof(from),
		.msg_iov = &iov,
		.msg_iovlen = 1,
	};
	char c;
	long n;

	iov.iov_base = &c;
	iov.iov_len = 1;
	memset(&from, 0, sizeof(from));
	n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_TRUNC);
	if (n >= 0)
		rt_fail("a message too many: %ld bytes from %s", n,
			sa_str(&from));
	else
		EXPECT_EQ(errno, EAGAIN);
}

/* The socket's inode number, as the RDS_INFO tables give it. */
static inline unsigned long inode_of(int fd)
{
	struct stat st;

	ASSERT_SYS_OK(fstat(fd, &st));
	return st.st_ino;
}

/* Skip the case unless the bench gave this node an address of the kind. */
static inline void need_a6(void)
{
	if (!have_a6)
		rt_skip("no global IPv6 address (RDS_ADDR6; vm-run.sh sets it)");
}

static inline void need_ll6(void)
{
	if (!have_ll6)
		rt_skip("no link-local address (RDS_LL6, RDS_IFINDEX; vm-run.sh sets them)");
}

/* ------------------------------------------------------ the cases */

/* rds_ipv6_local.c */
void test_bind_global(void);
void test_bind_loopback(void);
void test_bind_link_local(void);
void test_bind_not_local(void);
void test_bind_invalid(void);
void test_bind_in_use(void);
void test_v4mapped(void);
void test_mixed_families(void);
void test_local_loopback(void);
void test_local_global(void);
void test_local_link_local(void);
void test_local_ll_to_loopback(void);
void test_connect_send(void);
void test_peek_trunc(void);
void test_info_sockets(void);
void test_cancel_sent_to(void);

/* rds_ipv6_remote.c */
void test_peer_global(void);
void test_peer_link_local(void);
void test_peer_info_connections(void);
void test_peer_get_mr_for_dest(void);
void peer_rdma_write(int owner);
void peer_rdma_read(int owner);

#endif /* RDS_IPV6_H */
