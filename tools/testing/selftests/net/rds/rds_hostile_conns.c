// SPDX-License-Identifier: GPL-2.0
/*
 * rds_hostile_conns.c - rds_hostile's cases of how many connections a
 * peer makes node 1 hold: the limits on them, and the reaping of idle
 * ones whatever they received.
 */
#include "rds_hostile.h"

#define CAP_EXTRA	2	/* the per-peer limit: what exists, and two */
#define CAP_TRIES	4	/* requests on new TOS values */
#define IDLE_MS		2000	/* net.rds.conn_idle_ms of conn_idle_reap */
#define REAP_WAIT_MS	30000

/*
 * Node 1's connections (any state, any transport) to node 2: all of them,
 * or those of @tos when it is 0 .. 255.
 */
static int conns_to_peer(int fd, int tos)
{
	struct rds_info_connection *ci;
	socklen_t len;
	unsigned int i;
	int n = 0;

	ASSERT_TRUE(rds_info_read(fd, RDS_INFO_CONNECTIONS, (void **)&ci,
				  &len) >= 0,
		    "RDS_INFO_CONNECTIONS: %s", rt_errname(errno));
	for (i = 0; ci && i < len / sizeof(*ci); i++)
		n += ci[i].faddr == addr_peer.s_addr &&
		     (tos < 0 || ci[i].tos == tos);
	free(ci);
	return n;
}

/* Node 1: every connection, all peers together. */
static int conns_all(int fd)
{
	struct rds_info_connection *ci;
	socklen_t len;
	int n;

	ASSERT_TRUE(rds_info_read(fd, RDS_INFO_CONNECTIONS, (void **)&ci,
				  &len) >= 0,
		    "RDS_INFO_CONNECTIONS: %s", rt_errname(errno));
	n = len / sizeof(*ci);
	free(ci);
	return n;
}

/*
 * Node 1: its connection to node 2 on @tos as RDS_INFO_CONNECTIONS shows
 * it, for a message that did not come: whether it is up, and whether
 * the message got as far as node 1's RDS (next_rx_seq past it) or not.
 */
static void conn_diag(int fd, uint8_t tos)
{
	struct rds_info_connection *ci;
	socklen_t len;
	unsigned int i;
	int n = 0;

	if (rds_info_read(fd, RDS_INFO_CONNECTIONS, (void **)&ci, &len) < 0)
		return;
	for (i = 0; ci && i < len / sizeof(*ci); i++) {
		if (ci[i].faddr != addr_peer.s_addr || ci[i].tos != tos)
			continue;
		rt_diag("node 1, TOS %u: flags %#x, next_tx_seq %llu, next_rx_seq %llu",
			tos, ci[i].flags,
			(unsigned long long)ci[i].next_tx_seq,
			(unsigned long long)ci[i].next_rx_seq);
		n++;
	}
	if (!n)
		rt_diag("node 1, TOS %u: no connection", tos);
	free(ci);
	rt_diag("node 1: conn_drop %lld, recv_drop_no_sock %lld",
		rds_counter(fd, "conn_drop"),
		rds_counter(fd, "recv_drop_no_sock"));
}

/*
 * Node 2: a request on @tos; whether node 1 took it (@h is then up, and
 * node 1 counts it up: its congestion map came, as hp_open() waits for).
 */
static int try_tos(struct hp *h, uint8_t tos)
{
	enum rdma_cm_event_type type;
	struct rds_wire_priv p;
	int status;

	memset(h, 0, sizeof(*h));
	h->tos = tos;
	h->read_status = -1;
	rds_wire_priv_fill(&p, addr_self.s_addr, addr_peer.s_addr, tos, 0, 0);
	type = hp_try_open(h, &p, &status);
	if (type == RDMA_CM_EVENT_ESTABLISHED) {
		long long end = rt_now_ms() + DOWN_MS;

		while (h->rx_cong < 2 && h->up && rt_now_ms() < end)
			hp_progress(h, 100);
		EXPECT_TRUE(h->rx_cong >= 2,
			    "TOS %u: taken, but no congestion map from node 1 (QP %s)",
			    tos, h->up ? "up" : "down");
		return 1;
	}
	EXPECT_TRUE(type == RDMA_CM_EVENT_REJECTED,
		    "TOS %u: %s (status %d), neither taken nor refused", tos,
		    rdma_event_str(type), status);
	hp_close(h);
	return 0;
}

/*
 * Node 2 asks for a connection on each of CAP_TRIES new TOS values (a
 * peer that names all 256, and every address of its subnet, makes node
 * 1 hold a receive ring for each): node 1, whose per-peer limit
 * (net.rds.conn_max_per_peer) leaves room for CAP_EXTRA more, takes
 * that many and refuses the rest, counting each (conn_refused_limit); a
 * local send that needs a new connection to node 2 fails with
 * ECONNREFUSED and counts too.  Then net.rds.conn_max at what exists: a
 * request refused again.  The honest connection works throughout, and
 * the taken QPs still carry messages.  The distribution has no limit:
 * it takes every request (skipped).
 */
void test_conn_limit(void)
{
	long old_peer = 0, old_max = 0, old_reap = 0, old_idle = 0;
	long long refused = 0, got;
	struct hp h[CAP_TRIES + 1];
	struct sockaddr_in to = peer_port(P_INIT);
	int have = 0, taken = 0, i, s;
	struct hcase hc;

	if (distro_victim())
		rt_skip("distribution: node 1 takes every connect request, no conn_max_per_peer");
	hc_begin(&hc);
	if (node == 1) {
		refused = rds_counter(hc.cfd, "conn_refused_limit");
		ASSERT_TRUE(refused >= 0, "no counter conn_refused_limit");
		/* Nothing leaves the table while the case counts. */
		knob_set("conn_reap_ms", 0, &old_reap);
		knob_set("conn_idle_ms", 0, &old_idle);
		have = conns_to_peer(hc.cfd, -1);
		knob_set("conn_max_per_peer", have + CAP_EXTRA, &old_peer);
		rt_diag("%d connections to node 2: limit %d", have,
			have + CAP_EXTRA);
	}
	sync_peer("capped");
	if (node == 2) {
		for (i = 0; i < CAP_TRIES; i++) {
			if (try_tos(&h[taken], case_tos(i)))
				taken++;
		}
		EXPECT_EQ(taken, CAP_EXTRA);
	}
	sync_peer("asked");
	if (node == 1) {
		got = rds_counter(hc.cfd, "conn_refused_limit");
		EXPECT_EQ(got - refused, CAP_TRIES - CAP_EXTRA);
		EXPECT_EQ(conns_to_peer(hc.cfd, -1), have + CAP_EXTRA);
		for (i = CAP_EXTRA; i < CAP_TRIES; i++)
			EXPECT_EQ(conns_to_peer(hc.cfd, case_tos(i)), 0);
		/* Our own sends meet the same limit. */
		s = rds_bound(P_S1, NULL);
		set_tos(s, case_tos(CAP_TRIES));
		EXPECT_SYS_ERR(sendto(s, "x", 1, MSG_DONTWAIT,
				      (struct sockaddr *)&to, sizeof(to)),
			       ECONNREFUSED);
		close(s);
		EXPECT_EQ(rds_counter(hc.cfd, "conn_refused_limit") - got, 1);
		/* The total limit, with the per-peer one out of the way. */
		knob_set("conn_max_per_peer", old_peer, NULL);
		knob_set("conn_max", conns_all(hc.cfd), &old_max);
	}
	sync_peer("total");
	if (node == 2)
		EXPECT_EQ(try_tos(&h[taken], case_tos(CAP_TRIES + 1)), 0);
	hc_middle(&hc);		/* the honest connection still works */
	sync_peer("refused");
	if (node == 1) {
		got = rds_counter(hc.cfd, "conn_refused_limit") - refused;
		EXPECT_EQ(got, CAP_TRIES - CAP_EXTRA + 2);
		rt_diag("connlimit_diag refused=%lld", got);
		/* Before anything that may abort the case. */
		knob_set("conn_max", old_max, NULL);
	}
	/*
	 * The QPs taken carry a message each, one at a time: two
	 * connections do not order their messages between them.  Node 2
	 * goes on (and at last closes the QPs) only once node 1 has read
	 * the message: rdma_disconnect() moves a QP to the error state at
	 * once, which flushes a send that 6.12's rxe had not yet made (it
	 * sends a user QP's work from a work queue, not in ibv_post_send()),
	 * and node 1 takes nothing more from a connection that is going.
	 */
	for (i = 0; i < CAP_EXTRA; i++) {
		if (node == 2 && i < taken) {
			hp_msg(&h[i], (uint32_t)i, 16, P_VICTIM, 0, NULL);
			/* Done: node 1's QP took it (an RC send's ACK). */
			EXPECT_TRUE(!hp_flush(&h[i], DOWN_MS),
				    "TOS %u: message %d not sent (status %d, %u posted, QP %s)",
				    h[i].tos, i, h[i].err, h[i].busy,
				    h[i].up ? "up" : "down");
		}
		sync_peer("sent");
		if (node == 1) {
			if (poll_fd(hc.victim, POLLIN, RCV_TIMEOUT_MS) <= 0)
				conn_diag(hc.cfd, case_tos(i));
			expect_hostile(hc.victim, (uint32_t)i, 16, 0, 0);
		}
		sync_peer("read");
	}
	if (node == 2) {
		for (i = 0; i < taken; i++)
			hp_close(&h[i]);
	}
	hc_end(&hc, -1);
	if (node == 1) {
		knob_set("conn_reap_ms", old_reap, NULL);
		knob_set("conn_idle_ms", old_idle, NULL);
	}
}

/*
 * A connection nobody used for net.rds.conn_idle_ms (IDLE_MS here) is
 * freed whatever it received, so that a peer cannot keep one for every
 * TOS value it ever named; but never one that holds a message.  Node 2
 * opens QP A, sends node 1 a message and then only acknowledges what
 * node 1 sends: node 1's ACK probe comes, carrying node 1's ACK of the
 * message (so node 2 holds nothing for retransmission), then node 1
 * drops A and counts it (conn_reaped_idle).  QP B receives a message
 * from node 1 and never acknowledges it: its connection stays, whatever
 * the idle time.  The distribution never frees a connection (skipped).
 */
void test_conn_idle_reap(void)
{
	long old_idle = 0, old_unacked = 0;
	struct sockaddr_in to = peer_port(P_INIT);
	long long reaped = 0, end;
	int s = -1, probe = 0, seen_a = 0;
	uint64_t seq = 0, seen_b;
	unsigned int i;
	struct hp a, b;
	struct hcase hc;

	if (distro_victim())
		rt_skip("distribution: node 1 keeps every connection until its module is unloaded");
	hc_begin(&hc);
	if (node == 2) {
		hp_open(&a, case_tos(0), 0, 0);
		hp_open(&b, case_tos(1), 0, 0);
		seq = hp_msg(&a, 0, 16, P_VICTIM, 0, NULL);
	} else {
		expect_hostile(hc.victim, 0, 16, 0, 0);
		s = rds_bound(P_S1, NULL);
		set_tos(s, case_tos(1));
		EXPECT_SYS_OK(sendto(s, "never acknowledged", 18, 0,
				     (struct sockaddr *)&to, sizeof(to)));
		EXPECT_EQ(unacked_wait(hc.cfd, P_S1, 1, DOWN_MS), 1);
		reaped = rds_counter(hc.cfd, "conn_reaped_idle");
		ASSERT_TRUE(reaped >= 0, "no counter conn_reaped_idle");
		/* B's watchdog would drop it: only the reaper acts here. */
		knob_set("unacked_timeout_ms", 0, &old_unacked);
		knob_set("conn_idle_ms", IDLE_MS, &old_idle);
	}
	sync_peer("idle");
	if (node == 2) {
		EXPECT_EQ(hp_wait_seen(&b, case_port(P_S1), 1, &seen_b, DOWN_MS),
			  1);
		/* A: acknowledge whatever comes, until node 1 drops it. */
		end = rt_now_ms() + REAP_WAIT_MS;
		while (a.up && rt_now_ms() < end) {
			hp_progress(&a, 200);
			if ((unsigned int)seen_a == a.nrx || !a.up)
				continue;
			for (i = seen_a; i < a.nrx; i++)
				probe |= !a.rx[i % HP_LOG].sport &&
					 !a.rx[i % HP_LOG].dport;
			seen_a = a.nrx;
			hp_ack(&a, a.rx[(a.nrx - 1) % HP_LOG].seq, 0);
		}
		EXPECT_TRUE(!a.up, "QP A still up after %d ms idle",
			    REAP_WAIT_MS);
		EXPECT_TRUE(probe, "no ACK probe came before A was dropped");
		EXPECT_TRUE(a.rx_ack >= seq,
			    "node 1 acknowledged %llu of A, not our %llu",
			    (unsigned long long)a.rx_ack,
			    (unsigned long long)seq);
		hp_progress(&b, 200);
		EXPECT_TRUE(b.up, "QP B, with a message unacknowledged, dropped");
	}
	sync_peer("reaped");
	if (node == 1) {
		EXPECT_TRUE(rds_counter(hc.cfd, "conn_reaped_idle") > reaped,
			    "conn_reaped_idle still %lld", reaped);
		EXPECT_EQ(conns_to_peer(hc.cfd, case_tos(0)), 0);
		EXPECT_EQ(conns_to_peer(hc.cfd, case_tos(1)), 1);
		EXPECT_EQ(unacked(hc.cfd, P_S1), 1);
		knob_set("conn_idle_ms", old_idle, NULL);
		knob_set("unacked_timeout_ms", old_unacked, NULL);
		close(s);	/* withdraws the message */
	}
	hc_middle(&hc);		/* honest, reaped or not, comes back */
	if (node == 2) {
		hp_close(&a);
		hp_close(&b);
	}
	hc_end(&hc, -1);
}
