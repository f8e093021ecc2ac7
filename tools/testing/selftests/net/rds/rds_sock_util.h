/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rds_sock_util.h - socket helpers shared by the selftest programs:
 * printing an address, a receive timeout, polling one socket, reading one
 * congestion notification, sending a datagram with one SOL_RDS control
 * message, and reading one counter of RDS_INFO_COUNTERS (and, from
 * rds_info_util.h, any RDS_INFO table).  Include
 * after rds_test.h, whose checks they use.
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

/* SO_RCVTIMEO of @ms milliseconds on @fd. */
static inline void set_rcvtimeo(int fd, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	ASSERT_SYS_OK(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
				 sizeof(tv)));
}

/* poll() one descriptor; the revents, 0 on timeout. */
static inline int poll_fd(int fd, short events, int ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int n;

	n = EXPECT_SYS_OK(poll(&p, 1, ms));
	return n > 0 ? p.revents : 0;
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
 * sendmsg() @len bytes of @data to @to with one SOL_RDS control message
 * of @type carrying @arg_len bytes of @arg (at most 64).  Return:
 * sendmsg()'s.
 */
static inline ssize_t rds_send_cmsg(int fd, const struct sockaddr_in *to,
				    const void *data, size_t len, int type,
				    const void *arg, size_t arg_len)
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
	return sendmsg(fd, &msg, 0);
}

#endif /* RDS_SOCK_UTIL_H */
