// SPDX-License-Identifier: GPL-2.0
/*
 * rds_remote_zcopy.c - zero-copy sends over InfiniBand or RoCE.
 */
#include "rds_remote.h"

#include <sys/mman.h>

#define ZC_BIG		(1 << 20)
#define ZC_MSGS		8	/* per direction, 64 KiB and 1 MiB in turn */
#define ZC_RING		3	/* buffers, so that each is reused */

struct zc_ring {
	unsigned char *buf[ZC_RING];
	int scribbled;
};

/* A completion: the buffer is the sender's again, and it writes over it. */
static void zc_scribble(uint32_t cookie, void *arg)
{
	struct zc_ring *r = arg;

	memset(r->buf[cookie % ZC_RING], 0xee, ZC_BIG);
	r->scribbled++;
}

static size_t zc_len(uint32_t i)
{
	return i % 2 ? ZC_BIG : 65536;
}

/*
 * Both nodes send 64 KiB and 1 MiB datagrams with MSG_ZEROCOPY from
 * buffers that start 100 bytes into a page (so that every 4 KiB fragment
 * straddles two pages), three buffers in turn: a buffer is reused only
 * once the completion of its last message came, and it is written over
 * the moment the completion comes.  The completion comes once the peer
 * acknowledged the message, so the peer must receive every message
 * intact, once, in order; every completion must come once, in order.  A
 * node running the distribution's RDS, which has zero-copy on TCP only
 * (EOPNOTSUPP), sends the same datagrams with plain sends: what ours
 * sends without a copy is byte for byte what any RDS receives.
 */
void test_zcopy_both_ways(void)
{
	struct sockaddr_in to = peer_port(1), from;
	unsigned char *map, *rbuf = xmalloc(ZC_BIG + 64);
	int zc = !distro(node), fd, rx, flags;
	struct zc_ring ring = { { NULL }, 0 };
	uint32_t ck[RDS_MAX_ZCOOKIES];
	unsigned int n;
	uint32_t i, next = 0, seq;
	long ret;

	fd = rds_bound(0, NULL);
	make_room(fd, ZC_BIG, 0);
	rx = rds_bound(1, NULL);
	make_room(rx, ZC_BIG, 16 << 20);
	if (zc)
		ASSERT_SYS_OK(setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &zc,
					 sizeof(zc)));
	map = mmap(NULL, ZC_RING * (ZC_BIG + 4096), PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(map != MAP_FAILED, "mmap: %s", rt_errname(errno));
	for (i = 0; i < ZC_RING; i++)
		ring.buf[i] = map + i * (ZC_BIG + 4096) + 100;
	sync_peer("bound");

	for (i = 0; i < ZC_MSGS; i++) {
		unsigned char *b = ring.buf[i % ZC_RING];

		if (zc && i >= ZC_RING)
			rds_reap_zc(fd, &next, i - ZC_RING + 1, 60000,
				    zc_scribble, &ring);
		build_msg(b, zc_len(i), node, i);
		if (zc)
			ret = rds_send_zc(fd, &to, b, zc_len(i), i, 0);
		else
			ret = sendto(fd, b, zc_len(i), 0,
				     (struct sockaddr *)&to, sizeof(to));
		ASSERT_TRUE(ret == (long)zc_len(i), "message %u: %ld (%s)", i,
			    ret, ret < 0 ? rt_errname(errno) : "short");
	}
	if (zc) {
		rds_reap_zc(fd, &next, ZC_MSGS, 60000, zc_scribble, &ring);
		EXPECT_EQ(ring.scribbled, ZC_MSGS);
		/* Each exactly once: nothing more comes. */
		usleep(200 * 1000);
		EXPECT_SYS_ERR(rds_recv_zc(fd, rbuf, 1, MSG_DONTWAIT, ck, &n),
			       EAGAIN);
	}

	for (i = 0; i < ZC_MSGS; i++) {
		ret = recv_msg(rx, rbuf, ZC_BIG + 64, 0, &from, &flags);
		if (ret < 0) {
			rt_fail("message %u: recvmsg: %s", i, rt_errname(errno));
			break;
		}
		EXPECT_EQ(flags & MSG_TRUNC, 0);
		if (!check_msg(rbuf, ret, peer_node, &seq, "zero-copy message"))
			continue;
		EXPECT_EQ(seq, i);
		EXPECT_EQ(ret, zc_len(i));
	}
	sync_peer("received");
	expect_empty(rx);
	close(rx);
	close(fd);
	munmap(map, ZC_RING * (ZC_BIG + 4096));
	free(rbuf);
}
