/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rds_sock_util.h - socket helpers shared by the selftest programs:
 * addresses of either family (setting, printing, comparing), RDS
 * sockets (created, bound, their int options and buffers), a receive
 * timeout, polling one socket, receiving one message, expecting none,
 * reading one congestion notification,
 * sending a datagram with one SOL_RDS control message, registering and
 * freeing a memory region, the byte patterns messages carry, and reading
 * one counter of RDS_INFO_COUNTERS (and, from rds_info_util.h, any
 * RDS_INFO table).  Include after rds_test.h, whose checks they use.
 */
#ifndef RDS_SOCK_UTIL_H
#define RDS_SOCK_UTIL_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>

#include <linux/rds.h>

#include "rds_info_util.h"
#include "rds_test.h"

#ifndef AF_RDS
#define AF_RDS 21
#endif

/* The distribution's modules are loaded (RDS_MODULES), not ours. */
static inline int modules_are_distro(void)
{
	const char *mods = getenv("RDS_MODULES");

	return mods && !strcmp(mods, "distro");
}

/*
 * Before a program's cases: can this host open an AF_RDS socket?
 * Return: 0 if it can; else the exit status, with the TAP printed: a
 * failure where RDS_MODULES says modules were loaded (ours, distro), a
 * skip of the whole program where none were.
 */
static inline int rds_need_af_rds(void)
{
	const char *modules = getenv("RDS_MODULES");
	int fd = socket(AF_RDS, SOCK_SEQPACKET, 0), err = errno;

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (modules && (!strcmp(modules, "ours") || !strcmp(modules, "distro"))) {
		printf("1..1\n# socket(AF_RDS): %s\n", rt_errname(err));
		printf("not ok 1 - AF_RDS sockets (RDS_MODULES=%s)\n", modules);
		return RT_EXIT_FAIL;
	}
	printf("1..0 # SKIP socket(AF_RDS): %s: no RDS module loaded\n",
	       rt_errname(err));
	return RT_EXIT_SKIP;
}

static inline void sin_set(struct sockaddr_in *sin, struct in_addr addr,
			   unsigned short port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_addr = addr;
	sin->sin_port = htons(port);
}

/* "family F a.b.c.d:port"; two calls may share one printf. */
static inline const char *sin_str(const struct sockaddr_in *sin)
{
	static char buf[2][64];
	static int which;
	char a[INET_ADDRSTRLEN];

	which ^= 1;
	inet_ntop(AF_INET, &sin->sin_addr, a, sizeof(a));
	snprintf(buf[which], sizeof(buf[which]), "family %d %s:%u",
		 sin->sin_family, a, ntohs(sin->sin_port));
	return buf[which];
}

/*
 * An RDS address of either family: what sendmsg() takes and recvmsg()
 * gives back (struct sockaddr_in or struct sockaddr_in6).
 */
union rds_sa {
	struct sockaddr sa;
	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;
};

/* The length of the name @sa: by its family, that of its structure. */
static inline socklen_t sa_len(const void *sa)
{
	return ((const struct sockaddr *)sa)->sa_family == AF_INET6 ?
	       sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

/*
 * "family F a.b.c.d:port" or "family F [a:b::c%scope]:port"; two calls
 * may share one printf.
 */
static inline const char *sa_str(const void *sa)
{
	const union rds_sa *u = sa;
	static char buf[2][96];
	static int which;
	char a[INET6_ADDRSTRLEN];

	if (u->sa.sa_family != AF_INET6)
		return sin_str(&u->sin);
	which ^= 1;
	inet_ntop(AF_INET6, &u->sin6.sin6_addr, a, sizeof(a));
	snprintf(buf[which], sizeof(buf[which]), "family %d [%s%%%u]:%u",
		 u->sin6.sin6_family, a, u->sin6.sin6_scope_id,
		 ntohs(u->sin6.sin6_port));
	return buf[which];
}

/* The same family, address, port (and for IPv6, scope id). */
static inline int same_sa(const void *x, const void *y)
{
	const union rds_sa *a = x, *b = y;

	if (a->sa.sa_family != b->sa.sa_family)
		return 0;
	if (a->sa.sa_family == AF_INET6)
		return !memcmp(&a->sin6.sin6_addr, &b->sin6.sin6_addr,
			       sizeof(a->sin6.sin6_addr)) &&
		       a->sin6.sin6_port == b->sin6.sin6_port &&
		       a->sin6.sin6_scope_id == b->sin6.sin6_scope_id;
	return a->sin.sin_addr.s_addr == b->sin.sin_addr.s_addr &&
	       a->sin.sin_port == b->sin.sin_port;
}

/* The port of @sa, in network order. */
static inline in_port_t sa_port(const void *sa)
{
	const union rds_sa *u = sa;

	return u->sa.sa_family == AF_INET6 ? u->sin6.sin6_port :
	       u->sin.sin_port;
}

static inline void sa_set_port(void *sa, unsigned short port)
{
	union rds_sa *u = sa;

	if (u->sa.sa_family == AF_INET6)
		u->sin6.sin6_port = htons(port);
	else
		u->sin.sin_port = htons(port);
}

/* SO_RCVTIMEO of @ms milliseconds on @fd (times RDS_TIME_SCALE). */
static inline void set_rcvtimeo(int fd, int ms)
{
	struct timeval tv;

	ms = rt_scaled_ms(ms);
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;

	ASSERT_SYS_OK(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
				 sizeof(tv)));
}

/*
 * A new RDS socket; pinned with SO_RDS_TRANSPORT to the transport
 * RDS_PIN_TRANSPORT names (its number), if set: rds_rdma_local.sh
 * --device runs rds_rdma that way, over a device between two addresses
 * of one host.
 */
static inline int rds_socket(void)
{
	int fd = ASSERT_SYS_OK(socket(AF_RDS, SOCK_SEQPACKET, 0));
	const char *pin = getenv("RDS_PIN_TRANSPORT");
	int trans;

	if (pin && *pin) {
		trans = atoi(pin);
		ASSERT_SYS_OK(setsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &trans,
					 sizeof(trans)));
	}
	return fd;
}

static inline int int_opt(int fd, int level, int name)
{
	socklen_t len = sizeof(int);
	int val = 0;

	ASSERT_SYS_OK(getsockopt(fd, level, name, &val, &len));
	ASSERT_EQ(len, sizeof(int));
	return val;
}

static inline int set_int_opt(int fd, int level, int name, int val)
{
	return setsockopt(fd, level, name, &val, sizeof(val));
}

/*
 * A socket bound to addr:port (port 0: any), its bound address in *out if
 * out is not NULL.  Receives wait rcv_ms at most, so that a lost message
 * fails a check instead of hanging the case.
 */
static inline int rds_bound_at(struct in_addr addr, unsigned short port,
			       struct sockaddr_in *out, int rcv_ms)
{
	struct sockaddr_in sin, got;
	socklen_t len = sizeof(got);
	int fd = rds_socket();

	sin_set(&sin, addr, port);
	ASSERT_SYS_OK(bind(fd, (struct sockaddr *)&sin, sizeof(sin)));
	ASSERT_SYS_OK(getsockname(fd, (struct sockaddr *)&got, &len));
	ASSERT_EQ(len, sizeof(got));
	ASSERT_EQ(got.sin_family, AF_INET);
	ASSERT_TRUE(got.sin_port != 0, "bound to port 0");
	if (out)
		*out = got;
	set_rcvtimeo(fd, rcv_ms);
	return fd;
}

/*
 * Room for messages of up to msg bytes (RDS takes at most half of
 * SO_SNDBUF, as getsockopt() reports it, per message) and a receive
 * buffer of rcv bytes (0: plenty, so the port never congests).  Skips
 * without CAP_NET_ADMIN.
 */
static inline void make_room(int fd, int msg, int rcv)
{
	int snd = 2 * msg + 65536;

	if (!rcv)
		rcv = 4 * snd;
	if (set_int_opt(fd, SOL_SOCKET, SO_SNDBUFFORCE, snd) ||
	    set_int_opt(fd, SOL_SOCKET, SO_RCVBUFFORCE, rcv)) {
		if (errno != EPERM)
			rt_fail("SO_SNDBUFFORCE/SO_RCVBUFFORCE: %s",
				rt_errname(errno));
		rt_skip("no CAP_NET_ADMIN to raise the socket buffers");
	}
	ASSERT_TRUE(int_opt(fd, SOL_SOCKET, SO_SNDBUF) / 2 >= msg,
		    "SO_SNDBUF %d too small for %d",
		    int_opt(fd, SOL_SOCKET, SO_SNDBUF), msg);
}

static inline void *xmalloc(size_t len)
{
	void *p = malloc(len ? len : 1);

	ASSERT_TRUE(p, "out of memory for %zu bytes", len);
	return p;
}

/* poll() one descriptor, @ms times RDS_TIME_SCALE; the revents, 0 on timeout. */
static inline int poll_fd(int fd, short events, int ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int n;

	n = EXPECT_SYS_OK(poll(&p, 1, ms > 0 ? rt_scaled_ms(ms) : ms));
	return n > 0 ? p.revents : 0;
}

/*
 * recvmsg() into buf; the sender's address in *from and the flags in
 * *msg_flags, each if not NULL.
 */
static inline long recv_msg(int fd, void *buf, size_t len, int flags,
			    struct sockaddr_in *from, int *msg_flags)
{
	struct iovec iov = { buf, len };
	struct msghdr msg = {
		.msg_name = from,
		.msg_namelen = from ? sizeof(*from) : 0,
		.msg_iov = &iov,
		.msg_iovlen = 1,
	};
	long ret;

	if (from)
		memset(from, 0xa5, sizeof(*from));
	ret = recvmsg(fd, &msg, flags);
	if (ret >= 0 && from)
		EXPECT_EQ(msg.msg_namelen, sizeof(*from));
	if (msg_flags)
		*msg_flags = msg.msg_flags;
	return ret;
}

/* Nothing more may be queued on fd. */
static inline void expect_empty(int fd)
{
	struct sockaddr_in from;
	char c;
	long n;

	n = recv_msg(fd, &c, 1, MSG_DONTWAIT | MSG_TRUNC, &from, NULL);
	if (n >= 0)
		rt_fail("a message too many: %ld bytes from %s", n,
			sin_str(&from));
	else
		EXPECT_EQ(errno, EAGAIN);
}

/*
 * Read one RDS_CONG_MONITOR notification from fd: an empty message whose
 * only control message is one RDS_CMSG_CONG_UPDATE, whose mask must
 * include the bit of port (network order).
 */
static inline void expect_cong_update(int fd, in_port_t port)
{
	union {
		char buf[CMSG_SPACE(sizeof(uint64_t)) * 2];
		struct cmsghdr align;
	} ctl;
	char data[16];
	struct iovec iov = { data, sizeof(data) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	uint64_t mask = 0;
	int seen = 0;

	memset(&ctl, 0, sizeof(ctl));
	msg.msg_control = ctl.buf;
	msg.msg_controllen = sizeof(ctl.buf);
	EXPECT_EQ(EXPECT_SYS_OK(recvmsg(fd, &msg, MSG_DONTWAIT)), 0);
	EXPECT_EQ(msg.msg_flags & MSG_CTRUNC, 0);
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level != SOL_RDS ||
		    cm->cmsg_type != RDS_CMSG_CONG_UPDATE) {
			rt_fail("unexpected cmsg level %d type %d",
				cm->cmsg_level, cm->cmsg_type);
			continue;
		}
		EXPECT_EQ(cm->cmsg_len, CMSG_LEN(sizeof(mask)));
		memcpy(&mask, CMSG_DATA(cm), sizeof(mask));
		seen++;
	}
	EXPECT_EQ(seen, 1);
	EXPECT_TRUE(mask & RDS_CONG_MONITOR_MASK(ntohs(port)),
		    "mask %#llx lacks the bit of port %u (%#llx)",
		    (unsigned long long)mask, ntohs(port),
		    (unsigned long long)RDS_CONG_MONITOR_MASK(ntohs(port)));
}

/*
 * The value of counter @name in RDS_INFO_COUNTERS, read through @fd (any
 * RDS socket); -1 if the table has no such counter or cannot be read.
 */
static inline long long rds_counter(int fd, const char *name)
{
	struct rds_info_counter *c;
	socklen_t len;
	long long val = -1;
	int i, got;

	got = rds_info_read(fd, RDS_INFO_COUNTERS, (void **)&c, &len) >= 0;
	for (i = 0; got && c && i < (int)(len / sizeof(*c)); i++) {
		if (!strncmp((const char *)c[i].name, name,
			     sizeof(c[i].name))) {
			val = (long long)c[i].value;
			break;
		}
	}
	free(c);
	return val;
}

/*
 * sendmsg(@flags) @len bytes of @data to @to with one SOL_RDS control
 * message of @type carrying @arg_len bytes of @arg (at most 64).
 * Return: sendmsg()'s.
 */
static inline ssize_t rds_send_cmsg_flags(int fd, const struct sockaddr_in *to,
					  const void *data, size_t len,
					  int type, const void *arg,
					  size_t arg_len, int flags)
{
	union {
		char buf[CMSG_SPACE(64)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { (void *)data, len };
	struct msghdr msg = {
		.msg_name = (void *)to,
		.msg_namelen = to ? sizeof(*to) : 0,
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = CMSG_SPACE(arg_len),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	if (arg_len > 64) {
		errno = EINVAL;
		return -1;
	}
	memset(&ctl, 0, sizeof(ctl));
	c->cmsg_level = SOL_RDS;
	c->cmsg_type = type;
	c->cmsg_len = CMSG_LEN(arg_len);
	memcpy(CMSG_DATA(c), arg, arg_len);
	return sendmsg(fd, &msg, flags);
}

/* rds_send_cmsg_flags() without flags. */
static inline ssize_t rds_send_cmsg(int fd, const struct sockaddr_in *to,
				    const void *data, size_t len, int type,
				    const void *arg, size_t arg_len)
{
	return rds_send_cmsg_flags(fd, to, data, len, type, arg, arg_len, 0);
}

/* This process's pinned memory (mm->pinned_vm, VmPin), in KiB, or -1. */
static inline long vm_pin_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/*
 * A zero-copy send of len bytes at buf to *to with cookie (sendmsg flags
 * MSG_ZEROCOPY | flags, one RDS_CMSG_ZCOPY_COOKIE); the socket must have
 * SO_ZEROCOPY.  Return: as sendmsg().
 */
static inline ssize_t rds_send_zc(int fd, const struct sockaddr_in *to,
				  const void *buf, size_t len, uint32_t cookie,
				  int flags)
{
	return rds_send_cmsg_flags(fd, to, buf, len, RDS_CMSG_ZCOPY_COOKIE,
				   &cookie, sizeof(cookie),
				   MSG_ZEROCOPY | flags);
}

/*
 * One recvmsg(flags) on a zero-copy sender: the cookies of the
 * RDS_CMSG_ZCOPY_COMPLETION it carried go to ck (at most RDS_MAX_ZCOOKIES).
 * Return: recvmsg()'s value; *n the cookies (0 if none).
 */
static inline long rds_recv_zc(int fd, void *buf, size_t len, int flags,
			       uint32_t *ck, unsigned int *n)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct rds_zcopy_cookies)) + 64];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { buf, len };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	struct rds_zcopy_cookies z;
	struct cmsghdr *c;
	long ret;

	*n = 0;
	ret = recvmsg(fd, &msg, flags);
	if (ret < 0)
		return ret;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_RDS ||
		    c->cmsg_type != RDS_CMSG_ZCOPY_COMPLETION)
			continue;
		EXPECT_EQ(c->cmsg_len, CMSG_LEN(sizeof(z)));
		memcpy(&z, CMSG_DATA(c), sizeof(z));
		EXPECT_TRUE(z.num >= 1 && z.num <= RDS_MAX_ZCOOKIES,
			    "a completion with %u cookies", z.num);
		if (z.num > RDS_MAX_ZCOOKIES || *n)
			continue;
		memcpy(ck, z.cookies, z.num * sizeof(*ck));
		*n = z.num;
	}
	return ret;
}

/*
 * Reap completions on fd, a socket that receives no datagram, until
 * *next reaches stop, each cookie the next one, in order, once; done(),
 * if not NULL, is called with each.  Fails the case after ms.
 * Return: the recvmsg() calls that brought some.
 */
static inline int rds_reap_zc(int fd, uint32_t *next, uint32_t stop, int ms,
			      void (*done)(uint32_t cookie, void *arg),
			      void *arg)
{
	long long end = rt_now_ms() + rt_scaled_ms(ms);
	uint32_t ck[RDS_MAX_ZCOOKIES];
	unsigned int n, i;
	int calls = 0;
	char c;
	long r;

	while (*next < stop) {
		r = rds_recv_zc(fd, &c, 1, MSG_DONTWAIT, ck, &n);
		if (r < 0) {
			ASSERT_TRUE(errno == EAGAIN, "recvmsg: %s",
				    rt_errname(errno));
			ASSERT_TRUE(rt_now_ms() < end,
				    "completions %u to %u missing after %d ms",
				    *next, stop - 1, ms);
			poll_fd(fd, POLLIN, 50);
			continue;
		}
		ASSERT_EQ(r, 0);
		ASSERT_TRUE(n > 0, "recvmsg returned 0 without a completion");
		calls++;
		for (i = 0; i < n; i++) {
			ASSERT_TRUE(ck[i] == *next,
				    "completion of cookie %u, expected %u",
				    ck[i], *next);
			if (done)
				done(ck[i], arg);
			(*next)++;
		}
	}
	return calls;
}

/* RDS_GET_MR of [addr, addr + len), the cookie in *cookie: 0 or -errno. */
static inline int rds_get_mr(int fd, void *addr, size_t len, uint64_t *cookie)
{
	struct rds_get_mr_args a = {
		.vec = { .addr = (uintptr_t)addr, .bytes = len },
		.cookie_addr = (uintptr_t)cookie,
	};

	return setsockopt(fd, SOL_RDS, RDS_GET_MR, &a, sizeof(a)) ? -errno : 0;
}

/* RDS_FREE_MR of cookie with flags: 0 or -errno. */
static inline int rds_free_mr(int fd, uint64_t cookie, uint64_t flags)
{
	struct rds_free_mr_args a = { .cookie = cookie, .flags = flags };

	return setsockopt(fd, SOL_RDS, RDS_FREE_MR, &a, sizeof(a)) ? -errno : 0;
}

/*
 * On a socket of a transport without RDMA (TCP), the distribution's
 * errnos: RDS_GET_MR EOPNOTSUPP, RDS_FREE_MR of cookie 0 EINVAL, and
 * RDS_CMSG_RDMA_ARGS to @to EOPNOTSUPP.
 */
static inline void expect_no_rdma(int fd, const struct sockaddr_in *to)
{
	static char buf[8192];
	struct rds_iovec iov = { .addr = (uintptr_t)buf, .bytes = 4096 };
	struct rds_rdma_args args = {
		.cookie = 0x1234,
		.remote_vec = { .bytes = 4096 },
		.local_vec_addr = (uintptr_t)&iov,
		.nr_local = 1,
		.flags = RDS_RDMA_READWRITE,
	};
	uint64_t cookie;

	EXPECT_EQ(rds_get_mr(fd, buf, 4096, &cookie), -EOPNOTSUPP);
	EXPECT_EQ(rds_free_mr(fd, 0, 0), -EINVAL);
	EXPECT_SYS_ERR(rds_send_cmsg(fd, to, "x", 1, RDS_CMSG_RDMA_ARGS,
				     &args, sizeof(args)), EOPNOTSUPP);
}

/* ------------------------------------------------------ the byte patterns */

static inline uint32_t mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

/*
 * The pattern of a seed: every 4 bytes a new hash.  Different seeds give
 * unrelated bytes; the pattern of seed + (off / 4) * 0x9e3779b9 is the
 * pattern of seed from offset off on, for off a multiple of 4.
 */
static inline void fill_pattern(unsigned char *buf, size_t len, uint32_t seed)
{
	uint32_t w = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!(i & 3))
			w = mix32(seed + (uint32_t)(i >> 2) * 0x9e3779b9U);
		buf[i] = (unsigned char)(w >> (8 * (i & 3)));
	}
}

/* The offset of the first byte that is not the pattern, or len. */
static inline size_t pattern_mismatch(const unsigned char *buf,
				      size_t len, uint32_t seed)
{
	unsigned char want[4096];
	size_t off, n;

	for (off = 0; off < len; off += n) {
		n = len - off < sizeof(want) ? len - off : sizeof(want);
		/* off is a multiple of 4: the pattern goes on from there */
		fill_pattern(want, n, seed + (uint32_t)(off >> 2) * 0x9e3779b9U);
		if (memcmp(buf + off, want, n)) {
			size_t j = 0;

			while (buf[off + j] == want[j])
				j++;
			return off + j;
		}
	}
	return len;
}

#define RDS_KNOB_DIR	"/proc/sys/net/rds/"

/* Set sysctl net.rds.@name to @val; its old value into @old if given. */
static inline void knob_set(const char *name, long val, long *old)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), RDS_KNOB_DIR "%s", name);
	f = fopen(path, "r+");
	ASSERT_TRUE(f, "%s: %s", path, rt_errname(errno));
	if (old)
		ASSERT_TRUE(fscanf(f, "%ld", old) == 1, "%s: unreadable", path);
	rewind(f);
	fprintf(f, "%ld\n", val);
	ASSERT_TRUE(!fclose(f), "%s: cannot write %ld: %s", path, val,
		    rt_errname(errno));
}

#endif /* RDS_SOCK_UTIL_H */
