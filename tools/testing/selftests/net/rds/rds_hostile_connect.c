// SPDX-License-Identifier: GPL-2.0
/*
 * rds_hostile_connect.c - rds_hostile's cases of connect requests: the
 * lies about their source or destination, refused, and the honest one.
 */
#include "rds_hostile.h"

/* -------------------------------------------- connect-request lies */

/* The refused requests: each names a source or destination it is not. */
enum lie { SRC_LOOPBACK, SRC_VICTIM, SRC_THIRD, DST_LOOPBACK };

static struct in_addr third_host(void)
{
	struct in_addr a = addr_peer;

	/* Another host of the victim's subnet: neither guest. */
	a.s_addr = htonl((ntohl(addr_peer.s_addr) & ~0xffu) | 0xfa);
	return a;
}

/*
 * Node 2: one request with @priv; return the event that answers it.  A
 * connection it makes is closed at once.
 */
static enum rdma_cm_event_type send_request(const struct rds_wire_priv *priv,
					    int *status)
{
	enum rdma_cm_event_type type;
	struct hp h;

	memset(&h, 0, sizeof(h));
	h.read_status = -1;
	type = hp_try_open(&h, priv, status);
	hp_close(&h);
	return type;
}

/*
 * Node 2 lies, node 1 checks that the refusal was counted and that no
 * connection names an address a lie gave.
 */
static void lie(enum lie which)
{
	struct in_addr loopback = { .s_addr = htonl(INADDR_LOOPBACK) };
	struct in_addr third = third_host(), from = addr_self, to = addr_peer;
	struct rds_info_connection *ci;
	enum rdma_cm_event_type type;
	struct rds_wire_priv p;
	long long before = 0;
	socklen_t len;
	unsigned int i;
	int fd, status;

	if (distro_victim())
		rt_skip("node 1 runs the distribution's module, which takes every such request");
	fd = rds_socket();
	if (node == 1) {
		before = rds_counter(fd, "ib_conn_refused_addr");
		ASSERT_TRUE(before >= 0, "no counter ib_conn_refused_addr");
	}
	sync_peer("ready");
	if (node == 2) {
		switch (which) {
		case SRC_LOOPBACK:
			from = loopback;
			break;
		case SRC_VICTIM:
			from = addr_peer;
			break;
		case SRC_THIRD:
			from = third;
			break;
		default:
			to = loopback;
			break;
		}
		rds_wire_priv_fill(&p, from.s_addr, to.s_addr, 0, 0, 0);
		type = send_request(&p, &status);
		EXPECT_TRUE(type == RDMA_CM_EVENT_REJECTED,
			    "a request for %08x to %08x got %s (status %d)",
			    ntohl(p.saddr), ntohl(p.daddr),
			    rdma_event_str(type), status);
	}
	sync_peer("lied");
	if (node == 1) {
		EXPECT_EQ(rds_counter(fd, "ib_conn_refused_addr") - before, 1);
		ASSERT_TRUE(rds_info_read(fd, RDS_INFO_CONNECTIONS,
					  (void **)&ci, &len) >= 0,
			    "RDS_INFO_CONNECTIONS: %s", rt_errname(errno));
		for (i = 0; ci && i < len / sizeof(*ci); i++) {
			EXPECT_TRUE(ci[i].faddr != htonl(INADDR_LOOPBACK) &&
				    ci[i].laddr != htonl(INADDR_LOOPBACK) &&
				    (ci[i].faddr != addr_self.s_addr ||
				     strcmp((char *)ci[i].transport,
					    "infiniband")) &&
				    ci[i].faddr != third.s_addr,
				    "a connection %08x -> %08x over %.*s",
				    ntohl(ci[i].laddr), ntohl(ci[i].faddr),
				    (int)sizeof(ci[i].transport),
				    ci[i].transport);
		}
		free(ci);
	}
	close(fd);
}

void test_src_loopback(void)
{
	lie(SRC_LOOPBACK);
}

void test_src_victim(void)
{
	lie(SRC_VICTIM);
}

void test_src_third_host(void)
{
	lie(SRC_THIRD);
}

void test_dst_loopback(void)
{
	lie(DST_LOOPBACK);
}

/* The honest request gets through: the refusals above are about lies. */
void test_honest_request(void)
{
	enum rdma_cm_event_type type;
	struct rds_wire_priv p;
	int status;

	sync_peer("ready");
	if (node == 2) {
		rds_wire_priv_fill(&p, addr_self.s_addr, addr_peer.s_addr,
				   HONEST_TOS, 0, 0);
		type = send_request(&p, &status);
		EXPECT_TRUE(type == RDMA_CM_EVENT_ESTABLISHED,
			    "an honest request got %s (status %d)",
			    rdma_event_str(type), status);
	}
	sync_peer("done");
}
