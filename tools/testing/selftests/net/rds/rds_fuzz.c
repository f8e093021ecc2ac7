// SPDX-License-Identifier: GPL-2.0
/*
 * A small, deterministic system-call fuzzer for AF_RDS on one node.
 *
 * Each case replays a fixed seed: a few thousand random calls (socket,
 * bind, connect, sendmsg with random control messages, recvmsg with odd
 * flags and buffers, setsockopt/getsockopt over every SOL_RDS option and
 * RDS_INFO table, ioctl, poll, close) with random lengths and, now and
 * then, NULL or kernel pointers.  Nothing may block: every send and
 * receive carries MSG_DONTWAIT.
 *
 * It asserts that every call returns, and returns success or an errno of
 * the documented set; crashes and kernel warnings are caught by the
 * bench's kernel-log check.  A failing seed is reproduced with
 *
 *	rds_fuzz -s SEED [-n CALLS]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <linux/rds.h>

#include "rds_test.h"

#ifndef AF_RDS
#define AF_RDS 21
#endif

#define FUZZ_SOCKS	6
#define FUZZ_BUF	(70 * 1024)

static uint64_t fuzz_state;
static unsigned long fuzz_calls = 6000;
static struct in_addr fuzz_addr;	/* RDS_ADDR, or 127.0.0.1 */

/* xorshift64*: the same sequence on every machine for a given seed. */
static uint64_t fuzz_rand(void)
{
	fuzz_state ^= fuzz_state >> 12;
	fuzz_state ^= fuzz_state << 25;
	fuzz_state ^= fuzz_state >> 27;
	return fuzz_state * 0x2545f4914f6cdd1dULL;
}

static unsigned int fuzz_below(unsigned int n)
{
	return fuzz_rand() % n;
}

/* A user pointer: mostly good, sometimes NULL, a kernel or wild one. */
static void *fuzz_ptr(void *good)
{
	switch (fuzz_below(16)) {
	case 0:
		return NULL;
	case 1:
		return (void *)0xffffffff81000000UL;
	case 2:
		return (void *)-4096L;
	default:
		return good;
	}
}

static int fuzz_len(int good)
{
	switch (fuzz_below(16)) {
	case 0:
		return 0;
	case 1:
		return good - 1;
	case 2:
		return good + 1 + fuzz_below(64);
	case 3:
		return -1;
	default:
		return good;
	}
}

static void fuzz_sin(struct sockaddr_in *sin)
{
	static const char * const others[] = {
		"127.0.0.1", "127.0.0.2", "0.0.0.0", "255.255.255.255",
		"224.0.0.1", "192.0.2.1",
	};
	unsigned int pick = fuzz_below(4 * ARRAY_SIZE(others));

	memset(sin, 0, sizeof(*sin));
	sin->sin_family = fuzz_below(12) ? AF_INET : fuzz_below(64);
	if (pick < ARRAY_SIZE(others))
		inet_pton(AF_INET, others[pick], &sin->sin_addr);
	else
		sin->sin_addr = fuzz_addr;
	/* A handful of ports, so that sockets find each other. */
	sin->sin_port = htons(fuzz_below(8) ? 4000 + fuzz_below(FUZZ_SOCKS) :
			      fuzz_below(65536));
}

/* Every errno AF_RDS documents for the calls made here. */
static int fuzz_errno_ok(int err)
{
	switch (err) {
	case EINVAL: case EFAULT: case ENOTCONN: case EOPNOTSUPP:
	case ENOPROTOOPT: case EAGAIN: case ENOBUFS: case EMSGSIZE:
	case EADDRINUSE: case EADDRNOTAVAIL: case EAFNOSUPPORT:
	case EDESTADDRREQ: case ENOSPC: case ENETUNREACH: case EBADF:
	case ESOCKTNOSUPPORT: case EPROTOTYPE: case ENOTTY: case ENOMEM:
	case ETIMEDOUT: case EPERM: case EHOSTUNREACH: case EISCONN:
	case ENODEV: case EBUSY:
		return 1;
	default:
		return 0;
	}
}

struct fuzz_run {
	int fd[FUZZ_SOCKS];
	unsigned char buf[FUZZ_BUF];
	unsigned char ctl[512];
	unsigned long calls, bad;
	unsigned long sent, received;	/* successful data calls */
};

static void fuzz_check(struct fuzz_run *r, const char *what, long ret)
{
	r->calls++;
	if (ret >= 0 || fuzz_errno_ok(errno))
		return;
	r->bad++;
	rt_fail("call %lu (%s): unexpected errno %s", r->calls, what,
		rt_errname(errno));
}

static int fuzz_fd(struct fuzz_run *r)
{
	return r->fd[fuzz_below(FUZZ_SOCKS)];
}

static void fuzz_sendmsg(struct fuzz_run *r)
{
	static const int flags[] = {
		0, 0, 0, 0, 0, 0, MSG_NOSIGNAL, MSG_MORE, MSG_OOB,
		MSG_ZEROCOPY, MSG_EOR,
	};
	struct sockaddr_in sin;
	struct iovec iov;
	struct msghdr mh;
	struct cmsghdr *c;
	ssize_t ret;
	size_t len;

	memset(&mh, 0, sizeof(mh));
	fuzz_sin(&sin);
	if (fuzz_below(4)) {
		mh.msg_name = fuzz_ptr(&sin);
		mh.msg_namelen = fuzz_len(sizeof(sin));
	}
	switch (fuzz_below(8)) {
	case 0:
		len = 1024 * 1024 + fuzz_below(2);
		break;
	case 1:
		len = 0;
		break;
	default:
		len = fuzz_below(FUZZ_BUF);
	}
	iov.iov_base = len > FUZZ_BUF ? fuzz_ptr(NULL) : fuzz_ptr(r->buf);
	iov.iov_len = len;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (!fuzz_below(5)) {
		/* One control message of a random RDS type, random payload. */
		memset(r->ctl, 0, sizeof(r->ctl));
		mh.msg_control = r->ctl;
		mh.msg_controllen = CMSG_SPACE(fuzz_below(128));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = fuzz_below(8) ? SOL_RDS : SOL_SOCKET;
		c->cmsg_type = fuzz_below(16);
		c->cmsg_len = CMSG_LEN(fuzz_below(128));
		if (c->cmsg_len > mh.msg_controllen)
			c->cmsg_len = mh.msg_controllen;
	}
	ret = sendmsg(fuzz_fd(r), &mh, MSG_DONTWAIT |
		      flags[fuzz_below(ARRAY_SIZE(flags))]);
	fuzz_check(r, "sendmsg", ret);
	r->sent += ret >= 0;
}

static void fuzz_recvmsg(struct fuzz_run *r)
{
	static const int flags[] = {
		0, 0, 0, 0, MSG_PEEK, MSG_TRUNC, MSG_OOB, MSG_ERRQUEUE,
		MSG_WAITALL,
	};
	struct sockaddr_in sin;
	struct iovec iov;
	struct msghdr mh;
	ssize_t ret;

	memset(&mh, 0, sizeof(mh));
	mh.msg_name = fuzz_ptr(&sin);
	mh.msg_namelen = fuzz_len(sizeof(sin));
	iov.iov_base = fuzz_ptr(r->buf);
	iov.iov_len = fuzz_below(FUZZ_BUF);
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (fuzz_below(2)) {
		mh.msg_control = fuzz_ptr(r->ctl);
		mh.msg_controllen = fuzz_below(sizeof(r->ctl));
	}
	ret = recvmsg(fuzz_fd(r), &mh, MSG_DONTWAIT |
		      flags[fuzz_below(ARRAY_SIZE(flags))]);
	fuzz_check(r, "recvmsg", ret);
	r->received += ret > 0;
}

static void fuzz_setsockopt(struct fuzz_run *r)
{
	int name = fuzz_below(14);
	int len = fuzz_below(200);
	size_t i;

	for (i = 0; i < 200; i++)
		r->buf[i] = fuzz_rand();
	if (fuzz_below(3) == 0) {
		/* A plausible small int: 0, 1 or a transport number. */
		memset(r->buf, 0, sizeof(int));
		r->buf[0] = fuzz_below(4);
		len = fuzz_len(sizeof(int));
	}
	if (name == RDS_GET_MR || name == RDS_GET_MR_FOR_DEST) {
		/* Keep the cookie pointer away from our own memory. */
		struct rds_get_mr_args *a = (void *)r->buf;

		a->cookie_addr = (uintptr_t)(r->buf + 4096);
	}
	fuzz_check(r, "setsockopt",
		   setsockopt(fuzz_fd(r), fuzz_below(8) ? SOL_RDS : SOL_IP,
			      name, fuzz_ptr(r->buf), len));
}

static void fuzz_getsockopt(struct fuzz_run *r)
{
	int name = fuzz_below(2) ? (int)fuzz_below(14) :
		   RDS_INFO_FIRST + (int)fuzz_below(20);
	socklen_t len = fuzz_below(3) ? fuzz_below(FUZZ_BUF) :
			(socklen_t)fuzz_len(sizeof(int));

	fuzz_check(r, "getsockopt",
		   getsockopt(fuzz_fd(r), SOL_RDS, name, fuzz_ptr(r->buf),
			      fuzz_ptr(&len)));
}

/* A new socket, most often bound to one of the ports the calls aim at. */
static int fuzz_socket(int i)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_addr = fuzz_addr,
		.sin_port = htons(4000 + i),
	};
	int fd = socket(AF_RDS, SOCK_SEQPACKET, 0);

	if (fd >= 0 && fuzz_below(8))
		bind(fd, (struct sockaddr *)&sin, sizeof(sin));
	return fd;
}

static void fuzz_one(struct fuzz_run *r)
{
	struct sockaddr_in sin;
	socklen_t slen = sizeof(sin);
	struct pollfd p;
	int i = fuzz_below(FUZZ_SOCKS), val;

	switch (fuzz_below(13)) {
	case 0:
		close(r->fd[i]);
		r->fd[i] = fuzz_socket(i);
		fuzz_check(r, "socket", r->fd[i]);
		break;
	case 1:
		fuzz_sin(&sin);
		fuzz_check(r, "bind", bind(r->fd[i], fuzz_ptr(&sin),
					   fuzz_len(sizeof(sin))));
		break;
	case 2:
		fuzz_sin(&sin);
		fuzz_check(r, "connect", connect(r->fd[i], fuzz_ptr(&sin),
						 fuzz_len(sizeof(sin))));
		break;
	case 3:
	case 4:
	case 5:
		fuzz_sendmsg(r);
		break;
	case 6:
	case 7:
		fuzz_recvmsg(r);
		break;
	case 8:
		fuzz_setsockopt(r);
		break;
	case 9:
		fuzz_getsockopt(r);
		break;
	case 10:
		val = fuzz_below(2) ? 2048 : 1 << (10 + fuzz_below(12));
		fuzz_check(r, "setsockopt(SOL_SOCKET)",
			   setsockopt(r->fd[i], SOL_SOCKET,
				      fuzz_below(2) ? SO_RCVBUF : SO_SNDBUF,
				      &val, sizeof(val)));
		break;
	case 11:
		fuzz_check(r, "ioctl",
			   ioctl(r->fd[i], fuzz_below(2) ? SIOCRDSSETTOS :
				 SIOCRDSGETTOS + fuzz_below(3),
				 fuzz_ptr(r->buf)));
		break;
	default:
		p.fd = r->fd[i];
		p.events = POLLIN | POLLOUT;
		fuzz_check(r, "poll", poll(&p, 1, 0));
		fuzz_check(r, fuzz_below(2) ? "getsockname" : "getpeername",
			   (fuzz_below(2) ? getsockname : getpeername)
			   (r->fd[i], fuzz_ptr(&sin), fuzz_ptr(&slen)));
	}
}

static void fuzz_seed(uint64_t seed)
{
	static struct fuzz_run r;
	unsigned long n;
	int i;

	fuzz_state = seed * 0x9e3779b97f4a7c15ULL + 1;
	memset(&r, 0, sizeof(r));
	for (i = 0; i < FUZZ_SOCKS; i++)
		r.fd[i] = ASSERT_SYS_OK(fuzz_socket(i));
	for (n = 0; n < fuzz_calls; n++)
		fuzz_one(&r);
	for (i = 0; i < FUZZ_SOCKS; i++)
		close(r.fd[i]);
	rt_diag("seed %llu: %lu calls (%lu sends, %lu receives with data), %lu unexpected errnos",
		(unsigned long long)seed, r.calls, r.sent, r.received, r.bad);
}

static void test_seed_1(void) { fuzz_seed(1); }
static void test_seed_2(void) { fuzz_seed(2); }
static void test_seed_3(void) { fuzz_seed(3); }
static void test_seed_4(void) { fuzz_seed(4); }

static uint64_t fuzz_one_seed;

static void test_seed_given(void)
{
	fuzz_seed(fuzz_one_seed);
}

int main(int argc, char **argv)
{
	static const struct rt_case cases[] = {
		{ "seed_1", test_seed_1, 120 },
		{ "seed_2", test_seed_2, 120 },
		{ "seed_3", test_seed_3, 120 },
		{ "seed_4", test_seed_4, 120 },
	};
	static const struct rt_case given[] = {
		{ "seed_given", test_seed_given, 600 },
	};
	const char *addr = getenv("RDS_ADDR");
	int opt, fd;

	while ((opt = getopt(argc, argv, "s:n:")) != -1) {
		switch (opt) {
		case 's':
			fuzz_one_seed = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			fuzz_calls = strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: %s [-s SEED] [-n CALLS]\n",
				argv[0]);
			return 2;
		}
	}
	if (!addr || inet_pton(AF_INET, addr, &fuzz_addr) != 1)
		inet_pton(AF_INET, "127.0.0.1", &fuzz_addr);

	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (fd < 0) {
		printf("1..0 # SKIP no AF_RDS: %s\n", rt_errname(errno));
		return RT_EXIT_SKIP;
	}
	close(fd);
	if (fuzz_one_seed)
		return rt_run(given, ARRAY_SIZE(given), NULL);
	return rt_run(cases, ARRAY_SIZE(cases), NULL);
}
