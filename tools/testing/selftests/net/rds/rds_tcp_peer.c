// SPDX-License-Identifier: GPL-2.0
/*
 * rds_tcp_peer - RDS over TCP between two hosts, ours or the
 * distribution's on each (run_remote.sh): the same cases on both nodes
 * at once, coordinated as rds_remote (rds_peer.h), here control port
 * 18636 and RDS ports from 21000.  Every socket is pinned to TCP with
 * SO_RDS_TRANSPORT, although the bench's addresses have soft-RoCE
 * devices: the IB connections between the same addresses stay apart.
 *
 *	rds_tcp_peer [-n NODE] [-a ADDR] [-p PEER] [-c PORT] [-l] [CASE...]
 *
 * Cases:
 *   peer_v4      each node sends PEER_COUNT datagrams of 1 to 9000 bytes
 *                to the other, all in flight at once; each arrives once,
 *                in order, intact, from the sender's address and port
 *   peer_v6      the same over the guests' global IPv6 addresses
 *   peer_info    RDS_INFO_TCP_SOCKETS and RDS6_INFO_TCP_SOCKETS list the
 *                connection to the peer: the lower address's end talks to
 *                port 16385 of the higher's
 *   peer_rdma    RDMA over TCP fails as on the distribution: RDS_GET_MR
 *                EOPNOTSUPP, RDS_FREE_MR of cookie 0 EINVAL, a message
 *                with RDS_CMSG_RDMA_ARGS to the peer EOPNOTSUPP
 *
 * Environment: that of rds_remote, and RDS_ADDR6 / RDS_PEER_ADDR6.
 */
#define _GNU_SOURCE
#include "rds_test.h"
#include "rds_sock_util.h"
#include "rds_info_util.h"
#include "rds_peer.h"

#define CTL_PORT	18636
#define PORT_BASE	21000
#define PEER_COUNT	200
#define MAX_MSG		9000
#define TCP_PORT	16385

static size_t tp_len(uint32_t i)
{
	uint32_t r = mix32(i * 7 + 3);

	return r % 4 ? 1 + r % 200 : 1 + r % MAX_MSG;
}

/* A socket pinned to TCP, bound to this node's address, port @k. */
static int tp_socket(int k, union rds_sa *self)
{
	union rds_sa want = case_sa(1, k);
	int fd = rds_socket();

	ASSERT_SYS_OK(set_int_opt(fd, SOL_RDS, SO_RDS_TRANSPORT,
				  RDS_TRANS_TCP));
	ASSERT_SYS_OK(bind(fd, &want.sa, sa_len(&want)));
	EXPECT_EQ(int_opt(fd, SOL_RDS, SO_RDS_TRANSPORT), RDS_TRANS_TCP);
	make_room(fd, MAX_MSG, 4 << 20);
	set_rcvtimeo(fd, RCV_TIMEOUT_MS);
	*self = want;
	return fd;
}

/* Send PEER_COUNT to the peer while receiving its PEER_COUNT. */
static void tp_exchange(int k)
{
	static unsigned char buf[MAX_MSG], want[MAX_MSG];
	unsigned int sent = 0, got = 0;
	union rds_sa self, peer = peer_sa(k), from;
	long long until;
	int fd = tp_socket(k, &self);
	long r;

	sync_peer("bound");
	until = rt_now_ms() + rt_scaled_ms(120000);
	while ((sent < PEER_COUNT || got < PEER_COUNT) &&
	       rt_now_ms() < until) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		socklen_t fl;

		while (sent < PEER_COUNT) {
			fill_pattern(buf, tp_len(sent), msg_seed(node, sent));
			r = sendto(fd, buf, tp_len(sent), MSG_DONTWAIT,
				   &peer.sa, sa_len(&peer));
			if (r < 0 && (errno == EAGAIN || errno == ENOBUFS))
				break;
			ASSERT_TRUE(r == (long)tp_len(sent), "sendto %s: %s",
				    sa_str(&peer), rt_errname(errno));
			sent++;
		}
		poll(&pfd, 1, 100);
		fl = sizeof(from);
		while (got < PEER_COUNT &&
		       (r = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT,
				     &from.sa, &fl)) >= 0) {
			fill_pattern(want, tp_len(got),
				     msg_seed(peer_node, got));
			ASSERT_TRUE(r == (long)tp_len(got) &&
				    !memcmp(buf, want, r) &&
				    sa_port(&from) == sa_port(&peer),
				    "datagram %u: %ld bytes from %s, %s",
				    got, r, sa_str(&from),
				    r == (long)tp_len(got) ? "other bytes" :
				    "another length");
			got++;
			fl = sizeof(from);
		}
	}
	EXPECT_TRUE(sent == PEER_COUNT && got == PEER_COUNT,
		    "sent %u, received %u of %u", sent, got, PEER_COUNT);
	sync_peer("received");
	rt_sleep_ms(300);
	EXPECT_SYS_ERR(recv(fd, buf, sizeof(buf), MSG_DONTWAIT), EAGAIN);
	close(fd);
}

/*
 * This program checks our TCP transport against the distribution's.
 * With the distribution on both nodes there is nothing of ours to check,
 * and its rds_tcp lost datagrams of new connections (make check,
 * 2026-11-29: 139 of 200 over IPv6); two of its nodes also agree on
 * 8 paths where ours answers with one.
 */
static void tp_need_ours(void)
{
	if (!strcmp(modules_of(1), "distro") &&
	    !strcmp(modules_of(2), "distro"))
		rt_skip("%s",
			"the distribution on both nodes: its rds_tcp loses datagrams of new connections; this checks ours against it");
}

static void test_peer_v4(void)
{
	tp_need_ours();
	tp_exchange(0);
}

static void test_peer_v6(void)
{
	const char *s = getenv("RDS_ADDR6"), *p = getenv("RDS_PEER_ADDR6");

	tp_need_ours();
	if (!s || !p || !*s || !*p)
		rt_skip("%s", "no RDS_ADDR6 and RDS_PEER_ADDR6");
	rds_v6 = 1;
	memset(&rds_self6, 0, sizeof(rds_self6));
	memset(&rds_peer6, 0, sizeof(rds_peer6));
	rds_self6.sin6_family = AF_INET6;
	rds_peer6.sin6_family = AF_INET6;
	ASSERT_EQ(inet_pton(AF_INET6, s, &rds_self6.sin6_addr), 1);
	ASSERT_EQ(inet_pton(AF_INET6, p, &rds_peer6.sin6_addr), 1);
	tp_exchange(0);
}

static void test_peer_info(void)
{
	struct rds6_info_tcp_socket *r6;
	struct rds_info_tcp_socket *r4;
	union rds_sa self, peer = peer_sa(0);
	int fd = tp_socket(0, &self), i, found = 0;
	socklen_t len;
	char c = 'i';

	tp_need_ours();

	sync_peer("bound");
	ASSERT_SYS_OK(sendto(fd, &c, 1, 0, &peer.sa, sa_len(&peer)));
	ASSERT_SYS_OK(recv(fd, &c, 1, 0));
	sync_peer("received");
	ASSERT_TRUE(rds_info_read(fd, RDS_INFO_TCP_SOCKETS, (void **)&r4,
				  &len) >= 0,
		    "RDS_INFO_TCP_SOCKETS: %s", rt_errname(errno));
	for (i = 0; r4 && i < (int)(len / sizeof(*r4)); i++) {
		if (r4[i].local_addr != addr_self.s_addr ||
		    r4[i].peer_addr != addr_peer.s_addr)
			continue;
		found++;
		rt_diag("row: local port %u, peer port %u",
			ntohs(r4[i].local_port), ntohs(r4[i].peer_port));
		if (ntohl(addr_self.s_addr) < ntohl(addr_peer.s_addr))
			EXPECT_EQ(ntohs(r4[i].peer_port), TCP_PORT);
		else
			EXPECT_EQ(ntohs(r4[i].local_port), TCP_PORT);
	}
	EXPECT_EQ(found, 1);
	free(r4);
	ASSERT_TRUE(rds_info_read(fd, RDS6_INFO_TCP_SOCKETS, (void **)&r6,
				  &len) >= 0,
		    "RDS6_INFO_TCP_SOCKETS: %s", rt_errname(errno));
	found = 0;
	for (i = 0; r6 && i < (int)(len / sizeof(*r6)); i++)
		if (r6[i].local_addr.s6_addr32[3] == addr_self.s_addr &&
		    r6[i].peer_addr.s6_addr32[3] == addr_peer.s_addr)
			found++;
	EXPECT_EQ(found, 1);
	free(r6);
	close(fd);
}

static void test_peer_rdma(void)
{
	union rds_sa self, peer = peer_sa(0);
	int fd = tp_socket(0, &self);

	tp_need_ours();
	expect_no_rdma(fd, &peer.sin);
	close(fd);
	sync_peer("done");
}

static const struct rt_case cases[] = {
	RT_CASE(peer_v4, 180),
	RT_CASE(peer_v6, 180),
	RT_CASE(peer_info, 60),
	RT_CASE(peer_rdma, 30),
};

int main(int argc, char **argv)
{
	return rds_peer_main(argc, argv, cases, ARRAY_SIZE(cases), CTL_PORT,
			     PORT_BASE);
}
