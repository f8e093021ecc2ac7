// SPDX-License-Identifier: GPL-2.0
/*
 * rds_ipv6_remote.c - rds_ipv6's cases on two nodes (rds_ipv6 -r):
 * datagrams both ways over the global (fd00::K) and the link-local
 * addresses, RDS6_INFO_CONNECTIONS after them, RDS_GET_MR_FOR_DEST with
 * a struct sockaddr_in6, and whole RDMA cycles, WRITE and READ, each
 * node in turn owning the memory: rds_rdma's steps (rds_rdma_lib.c) with
 * the case's addresses in IPv6 (rds_peer.h's rds_v6).
 */
#include "rds_ipv6.h"

/*
 * Both nodes: use the global (ll 0) or link-local (ll 1) addresses for
 * the case, and check that each node can bind its own: a node that
 * cannot says so at once, and both end the case, so that a module
 * without IPv6 fails every case in moments.
 */
static void start6(int ll)
{
	union rds_sa probe;
	int fd, err = 0, peer_ok;

	rds_v6 = 1;
	rds_self6 = sin6_of(ll ? &ll6_self : &a6_self, 0, ll ? ifindex : 0);
	rds_peer6 = sin6_of(ll ? &ll6_peer : &a6_peer, 0, ll ? ifindex : 0);
	probe = case_sa(1, 31);
	fd = rds_socket();
	if (bind(fd, &probe.sa, sizeof(probe.sin6)))
		err = errno;
	close(fd);
	/* one step each way: node 1 tells first, node 2 hears first */
	if (node == 1) {
		tell_peer(err);
		peer_ok = !hear_peer();
	} else {
		peer_ok = !hear_peer();
		tell_peer(err);
	}
	if (err)
		rt_fail("bind to %s: %s", sa_str(&probe), rt_errname(err));
	if (!peer_ok)
		rt_fail("node %d cannot bind its IPv6 address", peer_node);
	if (err || !peer_ok)
		rt_abort();
}

/*
 * Each node sends empty, 1 byte, 4 KiB and 64 KiB datagrams to the
 * other's port, which receives them in order, byte for byte, each named
 * by the sender's struct sockaddr_in6 (the scope id, for link-local
 * addresses, that of this node's interface).
 */
static void both_ways(int ll)
{
	const size_t sizes[] = { 0, 1, 4096, MSG_MAX };
	union rds_sa self, peer;
	unsigned int i;
	int fd;

	start6(ll);
	fd = rds_bound_sa(0, &self);
	make_room(fd, MSG_MAX, 0);
	peer = peer_sa(0);
	sync_peer("bound");
	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		send_seed(fd, &peer, sizes[i], msg_seed(node, i));
	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		recv_seed6(fd, sizes[i], msg_seed(peer_node, i), &peer.sin6);
	sync_peer("received");
	expect_none(fd);
	close(fd);
}

void test_peer_global(void)
{
	both_ways(0);
}

void test_peer_link_local(void)
{
	both_ways(1);
}

/*
 * After a datagram each way over the global addresses,
 * RDS6_INFO_CONNECTIONS has one row from this node's address to the
 * peer's, over "infiniband", connected.  RDS_INFO_CONNECTIONS, the IPv4
 * table, holds the IPv4 connections only: as many rows as the IPv6 table
 * has IPv4-mapped ones, none of them this connection.
 */
void test_peer_info_connections(void)
{
	struct rds6_info_connection *c6;
	struct rds_info_connection *c4;
	struct in6_addr l, f;
	union rds_sa self, peer;
	int fd, i, rows = 0, mapped = 0, n4, ours4 = 0;
	socklen_t len;

	start6(0);
	fd = rds_bound_sa(0, &self);
	peer = peer_sa(0);
	sync_peer("bound");
	send_seed(fd, &peer, 16, msg_seed(node, 0));
	recv_seed6(fd, 16, msg_seed(peer_node, 0), &peer.sin6);
	sync_peer("exchanged");

	ASSERT_EQ(EXPECT_SYS_OK(rds_info_read(fd, RDS6_INFO_CONNECTIONS,
					      (void **)&c6, &len)),
		  sizeof(*c6));
	for (i = 0; c6 && i < (int)(len / sizeof(*c6)); i++) {
		memcpy(&l, &c6[i].laddr, sizeof(l));
		memcpy(&f, &c6[i].faddr, sizeof(f));
		if (IN6_IS_ADDR_V4MAPPED(&l))
			mapped++;
		if (memcmp(&l, &a6_self, sizeof(l)) ||
		    memcmp(&f, &a6_peer, sizeof(f)))
			continue;
		rows++;
		EXPECT_TRUE(!strncmp((const char *)c6[i].transport,
				     "infiniband", sizeof(c6[i].transport)),
			    "transport '%.*s'", (int)sizeof(c6[i].transport),
			    c6[i].transport);
		EXPECT_TRUE(c6[i].flags & RDS_INFO_CONNECTION_FLAG_CONNECTED,
			    "flags %#x: not connected", c6[i].flags);
	}
	EXPECT_EQ(rows, 1);
	free(c6);

	ASSERT_EQ(EXPECT_SYS_OK(rds_info_read(fd, RDS_INFO_CONNECTIONS,
					      (void **)&c4, &len)),
		  sizeof(*c4));
	n4 = c4 ? (int)(len / sizeof(*c4)) : 0;
	for (i = 0; i < n4; i++)
		if (c4[i].laddr == a6_self.s6_addr32[3] &&
		    c4[i].faddr == a6_peer.s6_addr32[3])
			ours4++;
	EXPECT_EQ(ours4, 0);
	EXPECT_EQ(n4, mapped);
	free(c4);
	sync_peer("read");
	close(fd);
}

/*
 * RDS_GET_MR_FOR_DEST with a struct sockaddr_in6 destination, on a
 * connected pair: a cookie (its offset that of the buffer in its page)
 * that RDS_FREE_MR takes back once.  The distribution has no RDS_GET_MR
 * over rxe (rds_rdma's get_mr_after_bind): there it fails with EOPNOTSUPP
 * (6.1 and 6.12), and the case skips.
 */
void test_peer_get_mr_for_dest(void)
{
	unsigned char *buf = xmalloc(10000);
	struct rds_get_mr_for_dest_args a;
	uint64_t cookie = 0;
	struct pair p;
	int ret, err;

	start6(0);
	pair_start(&p, 1);
	memset(&a, 0, sizeof(a));
	memcpy(&a.dest_addr, &p.peer.sin6, sizeof(p.peer.sin6));
	a.vec.addr = (uintptr_t)(buf + 321);
	a.vec.bytes = 9000;
	a.cookie_addr = (uintptr_t)&cookie;
	ret = setsockopt(p.fd, SOL_RDS, RDS_GET_MR_FOR_DEST, &a, sizeof(a));
	err = errno;
	if (ret && distro(node)) {
		/* ENODEV before the first connection: this one is up */
		EXPECT_TRUE(err == EOPNOTSUPP,
			    "distribution's RDS_GET_MR_FOR_DEST: %s",
			    rt_errname(err));
		pair_end(&p);
		rt_skip("distribution: RDS_GET_MR_FOR_DEST %s", rt_errname(err));
	}
	if (EXPECT_TRUE(!ret, "RDS_GET_MR_FOR_DEST to %s: %s", sa_str(&p.peer),
			rt_errname(err))) {
		EXPECT_NE(cookie, 0);
		EXPECT_EQ(cookie_offset(cookie),
			  (uintptr_t)(buf + 321) & (PAGE - 1));
		EXPECT_EQ(rds_free_mr(p.fd, cookie, 0), 0);
		EXPECT_EQ(rds_free_mr(p.fd, cookie, 0), -EINVAL);
	}
	pair_end(&p);
	free(buf);
}

/*
 * The cycle of the manual over IPv6: the owner maps a buffer with
 * RDS_CMSG_RDMA_MAP in a request, the initiator RDMA-writes into it (or
 * reads it) with RDS_CMSG_RDMA_ARGS, NOTIFY_ME and an ACK message; the
 * owner checks the bytes written and that nothing else changed, the
 * initiator the bytes read and the SUCCESS notification.
 */
static void cycle6(int owner, int write)
{
	struct rdma_op op = {
		.write = write, .start = 333, .mr_len = 20000,
		.off = 1000, .len = 12345,
	};
	struct pair p;

	start6(0);
	pair_start(&p, owner);
	rdma_cycle(&p, &op, 1);
	op.start = 4095;
	op.mr_len = 65536;
	op.off = 0;
	op.len = 65536;
	rdma_cycle(&p, &op, 2);
	pair_end(&p);
}

void peer_rdma_write(int owner)
{
	cycle6(owner, 1);
}

void peer_rdma_read(int owner)
{
	cycle6(owner, 0);
}
