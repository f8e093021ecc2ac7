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

/* What node 1's answer to a request carried (see struct hp). */
struct answer {
	int rd_init, rd_resp;	/* its initiator depth, responder resources */
	int rej_reason;		/* of its REJ (wire 1.6), or HP_REJ_NONE */
};

/*
 * Node 2: one request with @priv; return the event that answers it, and
 * in *@ans what that answer carried.  A connection it made is closed at
 * once.
 */
static enum rdma_cm_event_type send_request(const struct rds_wire_priv *priv,
					    int *status, struct answer *ans)
{
	enum rdma_cm_event_type type;
	struct hp h;

	memset(&h, 0, sizeof(h));
	h.read_status = -1;
	type = hp_try_open(&h, priv, status);
	if (ans) {
		ans->rd_init = h.peer_rd_init;
		ans->rd_resp = h.peer_rd_resp;
		ans->rej_reason = h.rej_reason;
	}
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
		type = send_request(&p, &status, NULL);
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

/*
 * The honest request gets through: the refusals above are about lies.
 * Node 1's reply keeps to what the request offered: no more READs and
 * atomics outstanding at us than we serve (HP_RD_RESP), no more served
 * than we may have outstanding (HP_RD_INIT).  A responder with fewer
 * resources than its peer's initiator depth forgets the oldest READ,
 * and a retry of that READ after a lost response is then dropped until
 * the requester's retries run out.
 */
void test_honest_request(void)
{
	enum rdma_cm_event_type type;
	struct rds_wire_priv p;
	struct answer ans;
	int status;

	sync_peer("ready");
	if (node == 2) {
		rds_wire_priv_fill(&p, addr_self.s_addr, addr_peer.s_addr,
				   HONEST_TOS, 0, 0);
		type = send_request(&p, &status, &ans);
		EXPECT_TRUE(type == RDMA_CM_EVENT_ESTABLISHED,
			    "an honest request got %s (status %d)",
			    rdma_event_str(type), status);
		if (type == RDMA_CM_EVENT_ESTABLISHED) {
			rt_diag("node 1's initiator depth %d, responder resources %d",
				ans.rd_init, ans.rd_resp);
			EXPECT_TRUE(ans.rd_init >= 1 &&
				    ans.rd_init <= HP_RD_RESP,
				    "node 1's initiator depth %d, we serve %d",
				    ans.rd_init, HP_RD_RESP);
			EXPECT_TRUE(ans.rd_resp >= 1 &&
				    ans.rd_resp <= HP_RD_INIT,
				    "node 1's responder resources %d, we may have %d outstanding",
				    ans.rd_resp, HP_RD_INIT);
		}
	}
	sync_peer("done");
}

/*
 * Why node 1 turns a request down, in its REJ (wire 1.6): reason 1 for
 * a request it can never take (protocol 2.0 here) and for a connect
 * race it wins; reason 0 for "not now".  A second request on a TOS
 * whose connection is up is "not now": node 1 asks the old connection's
 * peer for an ACK (live_conn_kept), which this hostile QP never gives,
 * and drops it within seconds; a later request is taken.  A module of
 * ours that loses a race counts only reason 1 as the peer refusing
 * whenever it connects (conn_race_refused) and then yields in the next
 * race.  It counted every reject before, and the higher of two nodes of
 * ours yielded where the lower had only been going down (make check's
 * ours,ours lane on 6.1, connect_race_rule, 2026-11-28).  The
 * distribution sends 1 for every reject and reads 0 as it reads 1
 * (drop, retry); ours tells them apart.
 */
void test_reject_reason(void)
{
	int busy = distro_victim() ? 1 : 0;
	enum rdma_cm_event_type type;
	struct rds_wire_priv p;
	struct answer got;
	struct hp h;
	int status;

	sync_peer("ready");
	if (node == 2) {
		rds_wire_priv_fill(&p, addr_self.s_addr, addr_peer.s_addr,
				   case_tos(0), 0, 0);
		p.c.major = 2;
		p.c.minor = 0;
		p.c.minor_mask = 0;
		type = send_request(&p, &status, &got);
		EXPECT_TRUE(type == RDMA_CM_EVENT_REJECTED &&
			    got.rej_reason == 1,
			    "protocol 2.0: %s (status %d, reason %d), not a REJ with reason 1",
			    rdma_event_str(type), status, got.rej_reason);

		hp_open(&h, case_tos(0), 0, 0);
		rds_wire_priv_fill(&p, addr_self.s_addr, addr_peer.s_addr,
				   case_tos(0), 0, 0);
		type = send_request(&p, &status, &got);
		EXPECT_TRUE(type == RDMA_CM_EVENT_REJECTED &&
			    got.rej_reason == busy,
			    "a second request on an up TOS: %s (status %d, reason %d), not a REJ with reason %d",
			    rdma_event_str(type), status, got.rej_reason, busy);
		EXPECT_EQ(hp_wait_down(&h, DOWN_MS), 0);
		hp_close(&h);

		/*
		 * Not now is not never: the next request is taken.  Not
		 * tried against the distribution: it reconnects what it
		 * dropped, to node 2's own module, which then holds the TOS.
		 */
		if (!busy) {
			hp_open(&h, case_tos(0), 0, 0);
			hp_close(&h);
		}
	}
	sync_peer("done");
}

/* ------------------------------------------- the same lies in IPv6 */

/*
 * The IPv6 listener (port 16385) takes the IPv6 form of private data;
 * its addresses must be the ones rdma_cm saw too.
 */
enum lie6 { SRC6_LOOPBACK, SRC6_VICTIM, SRC6_THIRD, DST6_LOOPBACK, SRC6_MAPPED };

/* The guests' IPv6 addresses (vm-run.sh), or the case is skipped. */
static void addrs6(struct in6_addr *self, struct in6_addr *peer)
{
	const char *s = getenv("RDS_ADDR6"), *p = getenv("RDS_PEER_ADDR6");

	if (!s || !p || inet_pton(AF_INET6, s, self) != 1 ||
	    inet_pton(AF_INET6, p, peer) != 1)
		rt_skip("no IPv6 addresses (%s)", "RDS_ADDR6, RDS_PEER_ADDR6");
}

/* Node 2: one request to node 1's IPv6 listener; the event answering it. */
static enum rdma_cm_event_type send_request6(const struct rds_wire_priv6 *priv,
					     const struct in6_addr *self,
					     const struct in6_addr *peer,
					     int *status)
{
	struct sockaddr_in6 src = { .sin6_family = AF_INET6 };
	struct sockaddr_in6 dst = { .sin6_family = AF_INET6 };
	enum rdma_cm_event_type type;
	struct hp h;

	src.sin6_addr = *self;
	dst.sin6_addr = *peer;
	dst.sin6_port = htons(RDS_WIRE_PORT6);
	memset(&h, 0, sizeof(h));
	h.read_status = -1;
	type = hp_try_open_sa(&h, priv, sizeof(*priv), (struct sockaddr *)&src,
			      (struct sockaddr *)&dst, status);
	hp_close(&h);
	return type;
}

static int in6_is(const void *a, const struct in6_addr *b)
{
	return !memcmp(a, b, sizeof(*b));
}

static void lie6(enum lie6 which)
{
	struct in6_addr self, peer, from, to, third, mapped;
	struct rds6_info_connection *ci = NULL;
	enum rdma_cm_event_type type;
	struct rds_wire_priv6 p;
	long long before = 0;
	socklen_t len = 0;
	unsigned int i;
	int fd, status;

	addrs6(&self, &peer);
	if (distro_victim())
		rt_skip("node 1 runs the distribution's module, which takes every such request");
	/* Another host of the victim's subnet: neither guest. */
	third = node == 1 ? self : peer;
	third.s6_addr[15] = 0xfa;
	fd = rds_socket();
	if (node == 1) {
		before = rds_counter(fd, "ib_conn_refused_addr");
		ASSERT_TRUE(before >= 0, "no counter ib_conn_refused_addr");
	}
	sync_peer("ready6");
	if (node == 2) {
		from = self;
		to = peer;
		switch (which) {
		case SRC6_LOOPBACK:
			from = in6addr_loopback;
			break;
		case SRC6_VICTIM:
			from = peer;
			break;
		case SRC6_THIRD:
			from = third;
			break;
		case SRC6_MAPPED:
			/* our IPv4 address, IPv4-mapped, from an IPv6 one */
			memset(&mapped, 0, sizeof(mapped));
			mapped.s6_addr[10] = 0xff;
			mapped.s6_addr[11] = 0xff;
			memcpy(&mapped.s6_addr[12], &addr_self, 4);
			from = mapped;
			break;
		default:
			to = in6addr_loopback;
			break;
		}
		rds_wire_priv6_fill(&p, &from, &to, 0);
		type = send_request6(&p, &self, &peer, &status);
		EXPECT_TRUE(type == RDMA_CM_EVENT_REJECTED,
			    "an IPv6 request (lie %d) got %s (status %d)",
			    which, rdma_event_str(type), status);
	}
	sync_peer("lied6");
	if (node == 1) {
		EXPECT_EQ(rds_counter(fd, "ib_conn_refused_addr") - before, 1);
		ASSERT_TRUE(rds_info_read(fd, RDS6_INFO_CONNECTIONS,
					  (void **)&ci, &len) >= 0,
			    "RDS6_INFO_CONNECTIONS: %s", rt_errname(errno));
		for (i = 0; ci && i < len / sizeof(*ci); i++) {
			int ib = !strcmp((char *)ci[i].transport, "infiniband");

			EXPECT_TRUE(!in6_is(&ci[i].laddr, &in6addr_loopback) &&
				    !in6_is(&ci[i].faddr, &in6addr_loopback) &&
				    !(ib && in6_is(&ci[i].faddr, &self)) &&
				    !in6_is(&ci[i].faddr, &third),
				    "a connection to or from a lie's address over %.*s",
				    (int)sizeof(ci[i].transport),
				    ci[i].transport);
		}
		free(ci);
	}
	close(fd);
}

void test_src6_loopback(void)
{
	lie6(SRC6_LOOPBACK);
}

void test_src6_victim(void)
{
	lie6(SRC6_VICTIM);
}

void test_src6_third_host(void)
{
	lie6(SRC6_THIRD);
}

void test_dst6_loopback(void)
{
	lie6(DST6_LOOPBACK);
}

void test_src6_mapped(void)
{
	lie6(SRC6_MAPPED);
}

/* The honest IPv6 request gets through, on either module. */
void test_honest_request6(void)
{
	struct in6_addr self, peer;
	enum rdma_cm_event_type type;
	struct rds_wire_priv6 p;
	int status;

	addrs6(&self, &peer);
	sync_peer("ready6");
	if (node == 2) {
		rds_wire_priv6_fill(&p, &self, &peer, HONEST_TOS);
		type = send_request6(&p, &self, &peer, &status);
		EXPECT_TRUE(type == RDMA_CM_EVENT_ESTABLISHED,
			    "an honest IPv6 request got %s (status %d)",
			    rdma_event_str(type), status);
	}
	sync_peer("done6");
}

/* ------------------------------------- a source GID not its address's */

#define GID_WAIT_MS	8000	/* node 1's answer goes to the GID named */

/*
 * Node 2 asks with honest private data and rdma_cm header (its own
 * address), but its CM REQ names a third host's GID as its port's
 * (RDMA_OPTION_IB_PATH).  Node 1's CM and QP would answer that GID, not
 * node 2: node 2 hears nothing either way (or a REJ), and what tells is
 * node 1.  On RoCE the GID of an address is the address, IPv4-mapped:
 * node 1 refuses the request, counts it (ib_conn_refused_gid) and
 * accepts nothing (conn_accept).  The same check refuses a host that
 * writes another's address in the header and private data but names its
 * own GID.  A module without the check accepted the request, and its QP
 * sent to the third host.
 */
void test_src_gid(void)
{
	long long before = -1, after, acc0 = 0, acc;
	struct in_addr third = third_host();
	enum rdma_cm_event_type type;
	struct rds_wire_priv p;
	union ibv_gid sgid;
	struct hp h;
	int fd, status;

	if (distro_victim())
		rt_skip("node 1 runs the distribution's module, which does not check the GID");
	fd = rds_socket();
	if (node == 1) {
		before = rds_counter(fd, "ib_conn_refused_gid");
		EXPECT_TRUE(before >= 0, "no counter ib_conn_refused_gid");
		acc0 = rds_counter(fd, "conn_accept");
	}
	sync_peer("ready");
	if (node == 2) {
		memset(&sgid, 0, sizeof(sgid));
		sgid.raw[10] = 0xff;
		sgid.raw[11] = 0xff;
		memcpy(&sgid.raw[12], &third, 4);
		rds_wire_priv_fill(&p, addr_self.s_addr, addr_peer.s_addr,
				   case_tos(0), 0, 0);
		memset(&h, 0, sizeof(h));
		h.read_status = -1;
		type = hp_try_open_gid(&h, &p, &sgid, GID_WAIT_MS, &status);
		rt_diag("a request naming GID ::ffff:%s: %s (status %d)",
			inet_ntoa(third), rdma_event_str(type), status);
		EXPECT_TRUE(type != RDMA_CM_EVENT_ESTABLISHED,
			    "a request naming another host's GID was established");
		hp_close(&h);
	}
	sync_peer("lied");
	if (node == 1) {
		after = rds_counter(fd, "ib_conn_refused_gid");
		acc = rds_counter(fd, "conn_accept");
		/* the CM may pass on a retransmitted REQ as a new one */
		EXPECT_TRUE(before >= 0 && after - before >= 1,
			    "ib_conn_refused_gid went from %lld to %lld",
			    before, after);
		EXPECT_TRUE(acc == acc0,
			    "node 1 accepted %lld connection(s) for it",
			    acc - acc0);
		rt_diag("bound_diag kind=refused_gid n=%lld",
			before >= 0 ? after - before : 0);
	}
	close(fd);
}

/* ------------------------------ a second connection for a live one */

#define LIVE_MSGS	10	/* each way round the request */

/*
 * Node 2 (its own address: it owns it on the wire) asks node 1 for
 * TOS 0, the connection between the two kernels that is up and carries
 * the honest exchange.  Node 1 refuses "not now" (reason 0), counts it
 * (conn_refused_live) and asks the peer of the live connection whether
 * it is there (an ACK probe): node 2's kernel answers, and the
 * connection stays.  Node 1's messages sent before and after the request
 * arrive in order, and it dropped nothing (hc_end()).  A module that
 * dropped the live connection as stale fails: a host that claims B's
 * address could cut B off at will.
 */
void test_live_conn_kept(void)
{
	struct sockaddr_in to = peer_port(P_HONEST), from;
	enum rdma_cm_event_type type;
	long long before = -1, after;
	struct rds_wire_priv p;
	struct answer ans;
	struct hcase hc;
	char buf[64], want[64];
	int i, status;
	long n;

	if (distro_victim())
		rt_skip("node 1 runs the distribution's module, which drops the live connection");
	hc_begin(&hc);
	if (node == 1) {
		before = rds_counter(hc.cfd, "conn_refused_live");
		EXPECT_TRUE(before >= 0, "no counter conn_refused_live");
		for (i = 0; i < LIVE_MSGS; i++) {
			snprintf(buf, sizeof(buf), "live %d", i);
			EXPECT_SYS_OK(sendto(hc.honest, buf, strlen(buf), 0,
					     (struct sockaddr *)&to,
					     sizeof(to)));
		}
	}
	sync_peer("sent");
	if (node == 2) {
		rds_wire_priv_fill(&p, addr_self.s_addr, addr_peer.s_addr, 0,
				   0, 0);
		type = send_request(&p, &status, &ans);
		EXPECT_TRUE(type == RDMA_CM_EVENT_REJECTED &&
			    ans.rej_reason == 0,
			    "a request for the live TOS 0: %s (status %d, reason %d), not a REJ with reason 0",
			    rdma_event_str(type), status, ans.rej_reason);
	}
	sync_peer("asked");
	if (node == 1) {
		for (i = LIVE_MSGS; i < 2 * LIVE_MSGS; i++) {
			snprintf(buf, sizeof(buf), "live %d", i);
			EXPECT_SYS_OK(sendto(hc.honest, buf, strlen(buf), 0,
					     (struct sockaddr *)&to,
					     sizeof(to)));
		}
		/* the probe's answer is back well before this */
		rt_sleep_ms(5000);
		after = rds_counter(hc.cfd, "conn_refused_live");
		EXPECT_TRUE(before >= 0 && after - before == 1,
			    "conn_refused_live went from %lld to %lld",
			    before, after);
		rt_diag("bound_diag kind=refused_live n=%lld",
			before >= 0 ? after - before : 0);
	} else {
		for (i = 0; i < 2 * LIVE_MSGS; i++) {
			snprintf(want, sizeof(want), "live %d", i);
			memset(buf, 0, sizeof(buf));
			n = recv_msg(hc.honest, buf, sizeof(buf) - 1, 0, &from,
				     NULL);
			ASSERT_TRUE(n >= 0, "message %d of node 1: %s", i,
				    rt_errname(errno));
			EXPECT_TRUE(!strcmp(buf, want),
				    "'%s' from node 1, expected '%s'", buf,
				    want);
		}
	}
	hc_middle(&hc);
	hc_end(&hc, 0);
}

/*
 * Whether node 2's own kernel has its connection to node 1 on @tos up:
 * node 1 then reconnected to it.
 */
static int own_conn_up(uint8_t tos)
{
	struct rds_info_connection *ci = NULL;
	socklen_t len = 0;
	unsigned int i;
	int fd = rds_socket(), up = 0;

	if (rds_info_read(fd, RDS_INFO_CONNECTIONS, (void **)&ci, &len) >= 0)
		for (i = 0; ci && i < len / sizeof(*ci); i++)
			if (ci[i].faddr == addr_peer.s_addr &&
			    ci[i].tos == tos &&
			    (ci[i].flags & RDS_INFO_CONNECTION_FLAG_CONNECTED))
				up = 1;
	free(ci);
	close(fd);
	return up;
}

/* Polls own_conn_up() for up to @ms; 1 once the connection is up. */
static int wait_own_conn_up(uint8_t tos, int ms)
{
	long long t0 = rt_now_ms();

	do {
		if (own_conn_up(tos))
			return 1;
		rt_sleep_ms(100);
	} while (rt_now_ms() - t0 < ms);
	return 0;
}

#define RESTART_MS	15000	/* a restarted peer is back within */
#define DISTRO_GAP_MS	5000	/* between requests to the distribution */

/*
 * A peer that restarts reconnects promptly: node 2 connects a hostile
 * QP, then loses it without a word (its QP destroyed, no DREQ), as a
 * host that rebooted.  Its next requests on that TOS are refused while
 * node 1's connection is up; node 1's ACK probe goes unanswered, the
 * connection drops within RDS_CONN_CHALLENGE_MS (3 s) of waiting, and
 * within RESTART_MS a request of node 2 is taken, or node 1 has
 * reconnected to node 2's kernel to resend its probe: either way the
 * dead connection is gone and the address is served again.
 *
 * The distribution's module on node 1 takes a request by dropping its
 * live connection and refusing the request; it then reconnects to node
 * 2's kernel.  A request every 200 ms knocks each new connection down
 * again before it can be seen (once 22 s in CI), which measures our
 * request loop, not a restart: live_conn_kept is the case that shows
 * that behaviour.  So the distribution gets one request per
 * DISTRO_GAP_MS, and between requests node 2 only watches its own
 * connection, as a restarted host would after a refusal.
 */
void test_peer_restart(void)
{
	enum rdma_cm_event_type type;
	long long t0, took = -1;
	struct rds_wire_priv p;
	struct hcase hc;
	struct hp h1, h2;
	int status, tries = 0, gap_ms;

	hc_begin(&hc);
	gap_ms = distro_victim() ? DISTRO_GAP_MS : 200;
	if (node == 2) {
		hp_open(&h1, case_tos(0), 0, 0);
		rdma_destroy_qp(h1.id);	/* gone without a word */
		rds_wire_priv_fill(&p, addr_self.s_addr, addr_peer.s_addr,
				   case_tos(0), 0, 0);
		t0 = rt_now_ms();
		while (rt_now_ms() - t0 < 2 * RESTART_MS) {
			tries++;
			memset(&h2, 0, sizeof(h2));
			h2.tos = case_tos(0);
			h2.read_status = -1;
			type = hp_try_open(&h2, &p, &status);
			if (type == RDMA_CM_EVENT_ESTABLISHED ||
			    own_conn_up(case_tos(0))) {
				took = rt_now_ms() - t0;
				break;
			}
			EXPECT_TRUE(type == RDMA_CM_EVENT_REJECTED,
				    "request %d: %s (status %d)", tries,
				    rdma_event_str(type), status);
			if (wait_own_conn_up(case_tos(0), gap_ms)) {
				took = rt_now_ms() - t0;
				break;
			}
		}
		rt_diag("restart: back after %lld ms, %d requests", took,
			tries);
		EXPECT_TRUE(took >= 0 && took < RESTART_MS,
			    "the restarted peer was not back within %d ms (%lld)",
			    RESTART_MS, took);
		hp_close(&h2);
		h1.up = 0;	/* its QP is gone: no disconnect to wait for */
		hp_close(&h1);
	}
	hc_middle(&hc);
	hc_end(&hc, -1);
}
