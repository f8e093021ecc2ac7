// SPDX-License-Identifier: GPL-2.0
/*
 * rds_local_zcopy.c - rds_local's cases of zero-copy sends (SO_ZEROCOPY,
 * MSG_ZEROCOPY, RDS_CMSG_ZCOPY_COOKIE and RDS_CMSG_ZCOPY_COMPLETION) on
 * local delivery.  The distribution's RDS has them on its TCP transport
 * only: against it only the errnos run, and its EOPNOTSUPP is checked.
 */
#include "rds_local.h"

#include <sys/resource.h>

#define ZC_NOBODY	65534

static void need_ours(void)
{
	if (modules_are_distro())
		rt_skip("the distribution's RDS has zero-copy on TCP only");
}

/* A socket bound to the main address with SO_ZEROCOPY and room for 1 MiB. */
static int zc_socket(struct sockaddr_in *out)
{
	int fd = rds_bound(addr_main, 0, out);

	make_room(fd, BIG_MSG, 0);
	ASSERT_SYS_OK(set_int_opt(fd, SOL_SOCKET, SO_ZEROCOPY, 1));
	return fd;
}

/* Pages for len bytes starting off bytes into the first one. */
static unsigned char *zc_pages(size_t len, size_t off)
{
	unsigned char *p = mmap(NULL, len + off + 4096, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_TRUE(p != MAP_FAILED, "mmap: %s", rt_errname(errno));
	return p + off;
}

/* VmPin must come down to want KiB within ms (a release may be deferred). */
static void zc_expect_pin(long want, int ms)
{
	long long end = rt_now_ms() + rt_scaled_ms(ms);
	long kb;

	while ((kb = vm_pin_kb()) != want && rt_now_ms() < end)
		usleep(10000);
	EXPECT_TRUE(kb == want, "VmPin %ld kB, expected %ld kB", kb, want);
}

/* Nothing to reap: no completion queued, no POLLIN. */
static void zc_expect_none(int fd)
{
	uint32_t ck[RDS_MAX_ZCOOKIES];
	unsigned int n;
	char c;

	EXPECT_SYS_ERR(rds_recv_zc(fd, &c, 1, MSG_DONTWAIT, ck, &n), EAGAIN);
	/* The distribution's says POLLIN for a congestion map update. */
	if (!modules_are_distro())
		EXPECT_EQ(poll_fd(fd, POLLIN, 0) & POLLIN, 0);
}

/*
 * sendmsg() with ncookies RDS_CMSG_ZCOPY_COOKIEs of cklen bytes each
 * and, if type is not 0, one more control message of that type and len.
 */
static ssize_t zc_send_odd(int fd, const struct sockaddr_in *to,
			   const void *buf, size_t len, int flags,
			   int ncookies, size_t cklen, int type, size_t tlen)
{
	union {
		char buf[4 * CMSG_SPACE(64)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { (void *)buf, len };
	struct msghdr msg = {
		.msg_name = (void *)to,
		.msg_namelen = sizeof(*to),
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = ncookies * CMSG_SPACE(cklen) +
				  (type ? CMSG_SPACE(tlen) : 0),
	};
	struct cmsghdr *c;
	int i;

	memset(&ctl, 0, sizeof(ctl));
	c = CMSG_FIRSTHDR(&msg);
	for (i = 0; i < ncookies; i++) {
		c->cmsg_level = SOL_RDS;
		c->cmsg_type = RDS_CMSG_ZCOPY_COOKIE;
		c->cmsg_len = CMSG_LEN(cklen);
		c = CMSG_NXTHDR(&msg, c);
	}
	if (type) {
		c->cmsg_level = SOL_RDS;
		c->cmsg_type = type;
		c->cmsg_len = CMSG_LEN(tlen);
	}
	return sendmsg(fd, &msg, flags);
}

/*
 * The errnos, the distribution's: MSG_ZEROCOPY without SO_ZEROCOPY or
 * without a cookie, a cookie without MSG_ZEROCOPY or shorter than a u32:
 * EINVAL.  Ours adds EINVAL for two cookies, an empty payload and a
 * cookie with an RDMA operation, and EFAULT for a buffer that is not
 * there; none of them delivers anything or leaves a completion.
 */
void test_zcopy_errnos(void)
{
	struct sockaddr_in r, t;
	int rx = rds_bound(addr_main, 0, &r);
	int tx = rds_bound(addr_main, 0, &t);
	unsigned char *buf = xmalloc(8192), *p;
	struct sockaddr_in far;
	uint32_t ck = 7;
	int lo;

	memset(buf, 1, 8192);
	EXPECT_EQ(int_opt(tx, SOL_SOCKET, SO_ZEROCOPY), 0);
	EXPECT_SYS_ERR(rds_send_zc(tx, &r, buf, 4096, 1, 0), EINVAL);
	EXPECT_SYS_ERR(sendto(tx, buf, 4096, MSG_ZEROCOPY,
			      (struct sockaddr *)&r, sizeof(r)), EINVAL);
	EXPECT_SYS_ERR(rds_send_cmsg(tx, &r, buf, 4096, RDS_CMSG_ZCOPY_COOKIE,
				     &ck, sizeof(ck)), EINVAL);
	EXPECT_SYS_ERR(set_int_opt(tx, SOL_SOCKET, SO_ZEROCOPY, 2), EINVAL);
	ASSERT_SYS_OK(set_int_opt(tx, SOL_SOCKET, SO_ZEROCOPY, 1));
	EXPECT_EQ(int_opt(tx, SOL_SOCKET, SO_ZEROCOPY), 1);
	/* A cookie without MSG_ZEROCOPY, whole or short. */
	EXPECT_SYS_ERR(rds_send_cmsg(tx, &r, buf, 4096, RDS_CMSG_ZCOPY_COOKIE,
				     &ck, sizeof(ck)), EINVAL);
	EXPECT_SYS_ERR(zc_send_odd(tx, &r, buf, 4096, 0, 1, 2, 0, 0), EINVAL);
	if (modules_are_distro()) {
		/* On any transport but TCP. */
		EXPECT_SYS_ERR(rds_send_zc(tx, &r, buf, 4096, 1, 0), EOPNOTSUPP);
		goto out;
	}
	EXPECT_SYS_ERR(sendto(tx, buf, 4096, MSG_ZEROCOPY,
			      (struct sockaddr *)&r, sizeof(r)), EINVAL);
	EXPECT_SYS_ERR(zc_send_odd(tx, &r, buf, 4096, MSG_ZEROCOPY, 1, 2, 0, 0),
		       EINVAL);
	EXPECT_SYS_ERR(zc_send_odd(tx, &r, buf, 4096, MSG_ZEROCOPY, 2, 4, 0, 0),
		       EINVAL);
	EXPECT_SYS_ERR(rds_send_zc(tx, &r, buf, 0, 1, 0), EINVAL);
	EXPECT_SYS_ERR(zc_send_odd(tx, &r, buf, 4096, MSG_ZEROCOPY, 1, 4,
				   RDS_CMSG_RDMA_ARGS,
				   sizeof(struct rds_rdma_args)), EINVAL);
	EXPECT_SYS_ERR(zc_send_odd(tx, &r, buf, 4096, MSG_ZEROCOPY, 1, 4,
				   RDS_CMSG_ATOMIC_FADD,
				   sizeof(struct rds_atomic_args)), EINVAL);
	EXPECT_SYS_ERR(rds_send_zc(tx, &r, KERNEL_PTR, 65536, 1, 0), EFAULT);
	EXPECT_SYS_ERR(rds_send_zc(tx, &r, TOP_PTR - 65536, 65536, 1, 0),
		       EFAULT);
	/* Over 1 MiB: EMSGSIZE, as any send. */
	EXPECT_SYS_ERR(rds_send_zc(tx, &r, buf, BIG_MSG + 1, 1, 0), EMSGSIZE);
	zc_expect_pin(0, 1000);
	zc_expect_none(tx);
	/* Pinned, then failed: no completion, nothing left pinned. */
	lo = rds_bound(addr_lo, 0, NULL);
	make_room(lo, 65536, 0);
	ASSERT_SYS_OK(set_int_opt(lo, SOL_SOCKET, SO_ZEROCOPY, 1));
	sin_set(&far, in_addr_of("10.255.255.1"), 4000);
	p = xmalloc(65536 + 4096);
	EXPECT_SYS_ERR(rds_send_zc(lo, &far, p + 100, 65536, 1, 0),
		       ENETUNREACH);
	zc_expect_none(lo);
	zc_expect_pin(0, 1000);
	close(lo);
	free(p);
out:
	zc_expect_none(tx);
	expect_empty(rx);
	close(tx);
	close(rx);
	free(buf);
}

/*
 * 64 KiB and 1 MiB from pages that start 100 bytes into a page: the
 * receiver reads the sender's pages themselves, so the completion comes
 * only once it has read the message; until then the pages are pinned
 * (VmPin).  After the completion the sender writes over its buffer,
 * which no longer changes anything.
 */
void test_zcopy_local_bytes(void)
{
	static const size_t sizes[] = { 65536, BIG_MSG };
	struct sockaddr_in r, t;
	unsigned char *p, *rbuf;
	uint32_t next = 0;
	long pin0, ret;
	int rx, tx, flags;
	size_t i;

	need_ours();
	rx = rds_bound(addr_main, 0, &r);
	tx = zc_socket(&t);
	make_room(rx, BIG_MSG, 0);
	p = zc_pages(BIG_MSG, 100);
	rbuf = xmalloc(BIG_MSG + 64);
	pin0 = vm_pin_kb();
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		fill_pattern(p, sizes[i], 40 + i);
		ret = ASSERT_SYS_OK(rds_send_zc(tx, &r, p, sizes[i], i, 0));
		ASSERT_EQ(ret, sizes[i]);
		/* Pinned (the pages it spans), not completed. */
		EXPECT_TRUE(vm_pin_kb() >= pin0 + (long)(sizes[i] / 1024),
			    "VmPin %ld kB with %zu bytes in flight",
			    vm_pin_kb(), sizes[i]);
		zc_expect_none(tx);
		memset(rbuf, 0, sizes[i] + 64);
		ret = ASSERT_SYS_OK(recv_msg(rx, rbuf, BIG_MSG + 64, 0, NULL,
					     &flags));
		EXPECT_EQ(ret, sizes[i]);
		expect_pattern(rbuf, sizes[i], 40 + i, "zero-copy message");
		EXPECT_TRUE(poll_fd(tx, POLLIN, 2000) & POLLIN,
			    "no POLLIN for the completion");
		rds_reap_zc(tx, &next, i + 1, 5000, NULL, NULL);
		memset(p, 0x5a, sizes[i]);	/* ours again */
		zc_expect_pin(pin0, 2000);
	}
	zc_expect_none(tx);
	expect_empty(rx);
	close(tx);
	close(rx);
	free(rbuf);
}

/*
 * Completions exactly once, in order, batched: 20 sends of pinned and
 * copied payloads (small ones and several iovecs are copied), each read
 * at once, then reaped: 8, 8 and 4 cookies.  One rides along with a
 * datagram; with SO_ZEROCOPY off they stay queued, as in the
 * distribution.
 */
void test_zcopy_completions(void)
{
	static const size_t sizes[] = { 100, 3000, 65536, 9000 };
	struct sockaddr_in r, t, o;
	unsigned char *p = zc_pages(BIG_MSG, 4000), *rbuf = xmalloc(70000);
	uint32_t next = 1000, ck[RDS_MAX_ZCOOKIES];
	int rx, tx, other, calls;
	unsigned int n;
	uint32_t i;
	long ret;

	need_ours();
	rx = rds_bound(addr_main, 0, &r);
	tx = zc_socket(&t);
	other = rds_bound(addr_main, 0, &o);
	for (i = 0; i < 20; i++) {
		size_t len = sizes[i % ARRAY_SIZE(sizes)];

		fill_pattern(p, len, 100 + i);
		if (len == 9000) {	/* two iovecs: copied */
			union {
				char b[CMSG_SPACE(sizeof(uint32_t))];
				struct cmsghdr a;
			} ctl;
			struct iovec iov[2] = { { p, 5000 }, { p + 5000, 4000 } };
			struct msghdr m = {
				.msg_name = &r, .msg_namelen = sizeof(r),
				.msg_iov = iov, .msg_iovlen = 2,
				.msg_control = ctl.b,
				.msg_controllen = sizeof(ctl.b),
			};
			struct cmsghdr *c = CMSG_FIRSTHDR(&m);
			uint32_t cookie = 1000 + i;

			memset(&ctl, 0, sizeof(ctl));
			c->cmsg_level = SOL_RDS;
			c->cmsg_type = RDS_CMSG_ZCOPY_COOKIE;
			c->cmsg_len = CMSG_LEN(sizeof(cookie));
			memcpy(CMSG_DATA(c), &cookie, sizeof(cookie));
			ret = ASSERT_SYS_OK(sendmsg(tx, &m, MSG_ZEROCOPY));
		} else {
			ret = ASSERT_SYS_OK(rds_send_zc(tx, &r, p, len,
							1000 + i, 0));
		}
		ASSERT_EQ(ret, len);
		recv_pattern(rx, len, 100 + i, &t);
	}
	EXPECT_TRUE(poll_fd(tx, POLLIN, 2000) & POLLIN, "no POLLIN");
	calls = rds_reap_zc(tx, &next, 1020, 5000, NULL, NULL);
	EXPECT_EQ(calls, 3);
	zc_expect_none(tx);

	/* Along with a datagram, to a reader that blocks. */
	send_pattern(other, 200, 7, &t);
	fill_pattern(p, 65536, 120);
	ASSERT_EQ(ASSERT_SYS_OK(rds_send_zc(tx, &r, p, 65536, 1020, 0)), 65536);
	recv_pattern(rx, 65536, 120, &t);
	ret = ASSERT_SYS_OK(rds_recv_zc(tx, rbuf, 70000, 0, ck, &n));
	EXPECT_EQ(ret, 200);
	expect_pattern(rbuf, 200, 7, "datagram with the completion");
	EXPECT_TRUE(n == 1 && ck[0] == 1020, "%u cookies with the datagram (%u)",
		    n, n ? ck[0] : 0);

	/* SO_ZEROCOPY off: kept for later. */
	fill_pattern(p, 3000, 121);
	ASSERT_EQ(ASSERT_SYS_OK(rds_send_zc(tx, &r, p, 3000, 1021, 0)), 3000);
	recv_pattern(rx, 3000, 121, &t);
	ASSERT_SYS_OK(set_int_opt(tx, SOL_SOCKET, SO_ZEROCOPY, 0));
	EXPECT_SYS_ERR(rds_recv_zc(tx, rbuf, 1, MSG_DONTWAIT, ck, &n), EAGAIN);
	ASSERT_SYS_OK(set_int_opt(tx, SOL_SOCKET, SO_ZEROCOPY, 1));
	next = 1021;
	rds_reap_zc(tx, &next, 1022, 2000, NULL, NULL);
	zc_expect_none(tx);
	close(other);
	close(tx);
	close(rx);
	free(rbuf);
}

/*
 * The completions a socket has not read are bounded by its SO_RCVBUF:
 * past the bound a zero-copy send fails with ENOBUFS before anything is
 * sent; once they are read, sends go again.  None is lost.
 */
void test_zcopy_queue_bound(void)
{
	struct sockaddr_in t, nobody;
	unsigned char *p = zc_pages(4096, 0);
	uint32_t i, next = 0;
	int tx, fd;

	need_ours();
	/* A port nobody is bound to: each message is dropped, completed. */
	fd = rds_bound(addr_main, 0, &nobody);
	close(fd);
	tx = zc_socket(&t);
	ASSERT_SYS_OK(set_int_opt(tx, SOL_SOCKET, SO_RCVBUF, 1));
	for (i = 0; i < 100000; i++)
		if (rds_send_zc(tx, &nobody, p, 4096, i, MSG_DONTWAIT) < 0)
			break;
	EXPECT_SYS_ERR(rds_send_zc(tx, &nobody, p, 4096, i, MSG_DONTWAIT),
		       ENOBUFS);
	EXPECT_TRUE(i >= 8 && i <= (uint32_t)int_opt(tx, SOL_SOCKET, SO_RCVBUF) / 2 / 64,
		    "%u completions fit, with SO_RCVBUF %d", i,
		    int_opt(tx, SOL_SOCKET, SO_RCVBUF));
	rds_reap_zc(tx, &next, i, 5000, NULL, NULL);
	zc_expect_none(tx);
	EXPECT_EQ(ASSERT_SYS_OK(rds_send_zc(tx, &nobody, p, 4096, i, 0)), 4096);
	rds_reap_zc(tx, &next, i + 1, 2000, NULL, NULL);
	close(tx);
	zc_expect_pin(0, 2000);
}

/*
 * Pinned pages count against RLIMIT_MEMLOCK for a process without
 * CAP_IPC_LOCK: a zero-copy send over it fails with ENOMEM (as the
 * distribution's zero-copy does, and RDS_GET_MR); each completion gives
 * the room back.  A copied send is not charged.
 */
void test_zcopy_memlock(void)
{
	struct rlimit lim = { 16 * 4096, 16 * 4096 };
	struct sockaddr_in t, nobody;
	unsigned char *p = zc_pages(17 * 4096, 0);
	uint32_t i, next = 0;
	int tx, fd;

	need_ours();
	if (geteuid())
		rt_skip("not root: cannot drop to an unprivileged uid");
	fd = rds_bound(addr_main, 0, &nobody);
	close(fd);
	tx = zc_socket(&t);
	memset(p, 3, 17 * 4096);
	ASSERT_TRUE(!setrlimit(RLIMIT_MEMLOCK, &lim), "setrlimit: %s",
		    rt_errname(errno));
	ASSERT_TRUE(!setgid(ZC_NOBODY) && !setuid(ZC_NOBODY), "setuid: %s",
		    rt_errname(errno));

	EXPECT_SYS_ERR(rds_send_zc(tx, &nobody, p, 17 * 4096, 0, 0), ENOMEM);
	/* 15 pages from 100 bytes in: 16 pinned, the limit. */
	for (i = 0; i < 10; i++) {
		EXPECT_EQ(EXPECT_SYS_OK(rds_send_zc(tx, &nobody, p + 100,
						    15 * 4096, i, 0)),
			  15 * 4096);
		rds_reap_zc(tx, &next, i + 1, 2000, NULL, NULL);
	}
	EXPECT_SYS_ERR(rds_send_zc(tx, &nobody, p + 100, 16 * 4096, i, 0),
		       ENOMEM);
	EXPECT_EQ(EXPECT_SYS_OK(sendto(tx, p, 17 * 4096, 0,
				       (struct sockaddr *)&nobody,
				       sizeof(nobody))), 17 * 4096);
	zc_expect_none(tx);
	close(tx);
	zc_expect_pin(0, 2000);
}

/*
 * Close with zero-copy sends in flight loses nothing and leaks nothing:
 * the sender closes and unmaps its buffer while the receiver has not
 * read; the receiver still gets every byte (the pages stay pinned until
 * it read them), then VmPin is back to 0.  A receiver that closes
 * without reading completes the sender's message.
 */
void test_zcopy_close_inflight(void)
{
	struct sockaddr_in r, t;
	unsigned char *p = zc_pages(2 * BIG_MSG, 100), *rbuf;
	uint32_t next = 0;
	int rx, tx;

	need_ours();
	rbuf = xmalloc(BIG_MSG + 64);
	rx = rds_bound(addr_main, 0, &r);
	make_room(rx, 2 * BIG_MSG, 0);
	tx = zc_socket(&t);
	fill_pattern(p, BIG_MSG, 60);
	fill_pattern(p + BIG_MSG, 65536, 61);
	ASSERT_EQ(ASSERT_SYS_OK(rds_send_zc(tx, &r, p, BIG_MSG, 1, 0)), BIG_MSG);
	ASSERT_EQ(ASSERT_SYS_OK(rds_send_zc(tx, &r, p + BIG_MSG, 65536, 2, 0)),
		  65536);
	EXPECT_TRUE(vm_pin_kb() >= 1024 + 64, "VmPin %ld kB",
		    vm_pin_kb());
	close(tx);
	ASSERT_SYS_OK(munmap(p - 100, 2 * BIG_MSG + 100 + 4096));
	EXPECT_EQ(ASSERT_SYS_OK(recv_msg(rx, rbuf, BIG_MSG + 64, 0, NULL, NULL)),
		  BIG_MSG);
	expect_pattern(rbuf, BIG_MSG, 60, "1 MiB after its sender closed");
	EXPECT_EQ(ASSERT_SYS_OK(recv_msg(rx, rbuf, BIG_MSG + 64, 0, NULL, NULL)),
		  65536);
	expect_pattern(rbuf, 65536, 61, "64 KiB after its sender closed");
	zc_expect_pin(0, 2000);

	/*
	 * To a host that never answers: queued on its connection, pinned,
	 * then dropped by close, which unpins.
	 */
	if (!main_is_lo) {
		sin_set(&r, nobody_addr(), 4000);
		p = zc_pages(65536, 0);
		tx = zc_socket(&t);
		ASSERT_EQ(ASSERT_SYS_OK(rds_send_zc(tx, &r, p, 65536, 9,
						    MSG_DONTWAIT)), 65536);
		EXPECT_TRUE(vm_pin_kb() >= 64, "VmPin %ld kB queued",
			    vm_pin_kb());
		close(tx);
		zc_expect_pin(0, 2000);
		close(rx);
		rx = rds_bound(addr_main, 0, &r);
	}

	/* The receiver closes first: its queue's drop completes the send. */
	p = zc_pages(BIG_MSG, 0);
	tx = zc_socket(&t);
	ASSERT_EQ(ASSERT_SYS_OK(rds_send_zc(tx, &r, p, BIG_MSG, 5, 0)), BIG_MSG);
	close(rx);
	next = 5;
	rds_reap_zc(tx, &next, 6, 2000, NULL, NULL);
	zc_expect_pin(0, 2000);
	close(tx);
	free(rbuf);
}
