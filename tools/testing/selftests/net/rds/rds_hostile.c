// SPDX-License-Identifier: GPL-2.0
/*
 * rds_hostile - a host on the fabric that lies in its RDS/IB connect
 * requests.  Two guests: node 2 plays the liar with librdmacm, sending
 * connect requests to node 1's RDS/IB listener whose private data names
 * addresses the request did not come from (loopback, node 1's own, a
 * third host's); node 1, the victim, checks afterwards that none of them
 * became a connection and that its module counted each refusal.
 *
 * A request that names 127.0.0.1 or the victim's own address as its
 * source would otherwise reach sockets bound to loopback, or pose as the
 * victim to itself; one naming a third host could rewrite the congestion
 * map of that host's connection.  One honest request (the liar's real
 * address, a TOS no other test uses) must be accepted, so that the
 * refusals are not the listener refusing everything.
 *
 * The distribution's module takes every such request (its
 * rds_ib_cm_handle_connect() checks no address of the private data), and
 * a connection to 127.0.0.1 over IB then retries for ever: where node 1
 * runs it, the cases are skipped with that reason rather than attacking.
 *
 * Environment (vm-run.sh): RDS_NODE, RDS_ADDR, RDS_PEER_ADDR,
 * RDS_MODULES_ALL, RDS_VM_TOOLS.  Arguments name cases to run.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <assert.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <rdma/rdma_cma.h>

#include <linux/rds.h>

#include "rds_test.h"
#include "rds_sock_util.h"
#include "rds_info_util.h"

#define RDS_IB_PORT	18634
#define HONEST_TOS	77	/* no other test uses it */
#define CM_WAIT_MS	30000
#define BARRIER_SECS	"240"

/* The RDS 3.1 connect private data (wire document, section 2.1). */
struct ib_priv {
	uint32_t saddr;		/* network order, as the addresses */
	uint32_t daddr;
	uint8_t major;
	uint8_t minor;
	uint16_t minor_mask;	/* big-endian */
	uint8_t tos;
	uint8_t reserved0;
	uint16_t reserved1;
	uint64_t ack_seq;	/* big-endian */
	uint32_t credit;	/* big-endian */
	uint32_t padding;
};

static_assert(sizeof(struct ib_priv) == 32, "RDS/IB private data");

static struct in_addr self, peer;

/* The refused requests: each names a source or destination it is not. */
enum lie { SRC_LOOPBACK, SRC_VICTIM, SRC_THIRD, DST_LOOPBACK, NR_LIES };

static struct in_addr third_host(void)
{
	struct in_addr a = peer;

	/* Another host of the victim's subnet: neither guest. */
	a.s_addr = htonl((ntohl(peer.s_addr) & ~0xffu) | 0xfa);
	return a;
}

static int victim_is_ours(void)
{
	const char *all = getenv("RDS_MODULES_ALL");

	return all && !strncmp(all, "ours,", 5);
}

/* Wait for the other guest at barrier @name; 0 once both are there. */
static int sync_guests(const char *name)
{
	const char *tools = getenv("RDS_VM_TOOLS");
	char cmd[PATH_MAX + 64];

	if (!tools)
		return -1;
	snprintf(cmd, sizeof(cmd), "%s/guest-barrier.sh %s %s", tools, name,
		 BARRIER_SECS);
	return system(cmd) ? -1 : 0;
}

/* The next event on @ch within @ms; its type and status. */
static int cm_wait(struct rdma_event_channel *ch, int ms,
		   enum rdma_cm_event_type *type, int *status)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pfd, 1, ms) != 1)
		return -1;
	if (rdma_get_cm_event(ch, &ev))
		return -1;
	*type = ev->event;
	*status = ev->status;
	rdma_ack_cm_event(ev);
	return 0;
}

/* Step @id's setup until @want, or fail the case. */
static void cm_expect(struct rdma_event_channel *ch,
		      enum rdma_cm_event_type want, const char *what)
{
	enum rdma_cm_event_type type;
	int status;

	ASSERT_TRUE(!cm_wait(ch, CM_WAIT_MS, &type, &status),
		    "%s: no event within %d ms", what, CM_WAIT_MS);
	ASSERT_TRUE(type == want, "%s: %s (status %d), not %s", what,
		    rdma_event_str(type), status, rdma_event_str(want));
}

/*
 * Send one RDS 3.1 connect request from our real address to the
 * victim's listener with @priv, and return the event that answers it
 * (ESTABLISHED, REJECTED, ...); *status gets the event's status.
 */
static enum rdma_cm_event_type send_request(const struct ib_priv *priv,
					    int *status)
{
	struct sockaddr_in src = { .sin_family = AF_INET, .sin_addr = self };
	struct sockaddr_in dst = {
		.sin_family = AF_INET,
		.sin_addr = peer,
		.sin_port = htons(RDS_IB_PORT),
	};
	struct ibv_qp_init_attr qpa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct rdma_conn_param param = {
		.private_data = priv,
		.private_data_len = sizeof(*priv),
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	struct rdma_event_channel *ch = rdma_create_event_channel();
	enum rdma_cm_event_type type;
	struct rdma_cm_id *id;
	struct ibv_cq *cq;

	ASSERT_TRUE(ch, "rdma_create_event_channel: %s", rt_errname(errno));
	ASSERT_SYS_OK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP));
	ASSERT_SYS_OK(rdma_resolve_addr(id, (struct sockaddr *)&src,
					(struct sockaddr *)&dst, CM_WAIT_MS));
	cm_expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED, "resolve address");
	ASSERT_SYS_OK(rdma_resolve_route(id, CM_WAIT_MS));
	cm_expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, "resolve route");
	cq = ibv_create_cq(id->verbs, 8, NULL, NULL, 0);
	ASSERT_TRUE(cq, "ibv_create_cq: %s", rt_errname(errno));
	qpa.send_cq = cq;
	qpa.recv_cq = cq;
	ASSERT_SYS_OK(rdma_create_qp(id, NULL, &qpa));
	ASSERT_SYS_OK(rdma_connect(id, &param));
	ASSERT_TRUE(!cm_wait(ch, CM_WAIT_MS, &type, status),
		    "no answer to the request within %d ms", CM_WAIT_MS);
	if (type == RDMA_CM_EVENT_ESTABLISHED) {
		rdma_disconnect(id);
		cm_expect(ch, RDMA_CM_EVENT_DISCONNECTED, "disconnect");
	}
	rdma_destroy_qp(id);
	ibv_destroy_cq(cq);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	return type;
}

static void fill_priv(struct ib_priv *p, struct in_addr from,
		      struct in_addr to, uint8_t tos)
{
	memset(p, 0, sizeof(*p));
	p->saddr = from.s_addr;
	p->daddr = to.s_addr;
	p->major = 3;
	p->minor = 1;
	p->tos = tos;	/* credit 0: no flow control */
}

static void lie(enum lie which)
{
	struct in_addr loopback = { .s_addr = htonl(INADDR_LOOPBACK) };
	enum rdma_cm_event_type type;
	struct ib_priv p;
	int status;

	switch (which) {
	case SRC_LOOPBACK:
		fill_priv(&p, loopback, peer, 0);
		break;
	case SRC_VICTIM:
		fill_priv(&p, peer, peer, 0);
		break;
	case SRC_THIRD:
		fill_priv(&p, third_host(), peer, 0);
		break;
	default:
		fill_priv(&p, self, loopback, 0);
		break;
	}
	type = send_request(&p, &status);
	EXPECT_TRUE(type == RDMA_CM_EVENT_REJECTED,
		    "a request for %08x to %08x got %s (status %d)",
		    ntohl(p.saddr), ntohl(p.daddr), rdma_event_str(type),
		    status);
}

static void test_src_loopback(void)
{
	lie(SRC_LOOPBACK);
}

static void test_src_victim(void)
{
	lie(SRC_VICTIM);
}

static void test_src_third_host(void)
{
	lie(SRC_THIRD);
}

static void test_dst_loopback(void)
{
	lie(DST_LOOPBACK);
}

/* The honest request gets through: the refusals above are about lies. */
static void test_honest_request(void)
{
	enum rdma_cm_event_type type;
	struct ib_priv p;
	int status;

	fill_priv(&p, self, peer, HONEST_TOS);
	type = send_request(&p, &status);
	EXPECT_TRUE(type == RDMA_CM_EVENT_ESTABLISHED,
		    "an honest request got %s (status %d)",
		    rdma_event_str(type), status);
}

/*
 * Node 1: the lies come between the two barriers; afterwards the counter
 * of refusals has moved by one per lie and no connection names an
 * address a lie gave.
 */
static void test_victim_refuses(void)
{
	struct in_addr third = third_host();
	struct rds_info_connection *ci;
	long long before, after;
	socklen_t len;
	unsigned int i;
	int fd;

	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	ASSERT_SYS_OK(fd);
	before = rds_counter(fd, "ib_conn_refused_addr");
	ASSERT_TRUE(before >= 0, "no counter ib_conn_refused_addr");
	ASSERT_TRUE(!sync_guests("hostile-start"), "node 2 never came");
	ASSERT_TRUE(!sync_guests("hostile-done"), "node 2 never finished");
	after = rds_counter(fd, "ib_conn_refused_addr");
	EXPECT_EQ(after - before, NR_LIES);
	ASSERT_TRUE(rds_info_read(fd, RDS_INFO_CONNECTIONS, (void **)&ci,
				  &len) >= 0,
		    "RDS_INFO_CONNECTIONS: %s", rt_errname(errno));
	for (i = 0; i < len / sizeof(*ci); i++) {
		EXPECT_TRUE(ci[i].faddr != htonl(INADDR_LOOPBACK) &&
			    ci[i].laddr != htonl(INADDR_LOOPBACK) &&
			    (ci[i].faddr != self.s_addr ||
			     strcmp((char *)ci[i].transport, "infiniband")) &&
			    ci[i].faddr != third.s_addr,
			    "a connection %08x -> %08x over %.*s",
			    ntohl(ci[i].laddr), ntohl(ci[i].faddr),
			    (int)sizeof(ci[i].transport), ci[i].transport);
	}
	free(ci);
	close(fd);
}

static const struct rt_case victim_cases[] = {
	{ "victim_refuses", test_victim_refuses, 600 },
};

static const struct rt_case liar_cases[] = {
	{ "src_loopback", test_src_loopback, 120 },
	{ "src_victim", test_src_victim, 120 },
	{ "src_third_host", test_src_third_host, 120 },
	{ "dst_loopback", test_dst_loopback, 120 },
	{ "honest_request", test_honest_request, 120 },
};

int main(int argc, char **argv)
{
	const char *n = getenv("RDS_NODE");
	const char *a = getenv("RDS_ADDR");
	const char *p = getenv("RDS_PEER_ADDR");
	int ret;

	if (!n || !a || !p || !inet_aton(a, &self) || !inet_aton(p, &peer)) {
		printf("1..0 # SKIP needs the two guests of vm-run.sh\n");
		return RT_EXIT_SKIP;
	}
	if (!victim_is_ours()) {
		printf("1..0 # SKIP node 1 runs the distribution's module, %s\n",
		       "which takes every such request");
		return RT_EXIT_SKIP;
	}
	if (atoi(n) == 1)
		return rt_run(victim_cases, ARRAY_SIZE(victim_cases),
			      argc > 1 ? argv + 1 : NULL);
	if (sync_guests("hostile-start")) {
		printf("Bail out! node 1 never came to barrier hostile-start\n");
		return RT_EXIT_FAIL;
	}
	ret = rt_run(liar_cases, ARRAY_SIZE(liar_cases),
		     argc > 1 ? argv + 1 : NULL);
	if (sync_guests("hostile-done")) {
		printf("# node 1 never came to barrier hostile-done\n");
		ret = RT_EXIT_FAIL;
	}
	return ret;
}
