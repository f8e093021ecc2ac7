// SPDX-License-Identifier: GPL-2.0
/*
 * rds_hostile_flood.c - rds_hostile's cases of floods that ignore
 * congestion.
 */
#include "rds_hostile.h"

/* ------------------------------------------------------- (e) floods */

/*
 * Node 2: post up to @n messages of @len bytes (0 or 1, the byte the
 * message's number) without waiting for each, as fast as node 1 takes
 * them.  Return: 1 if node 1 held them back (no room for FLOOD_STALL_MS).
 */
static int flood_batch(struct hp *h, unsigned long first, unsigned long n,
		       uint32_t len)
{
	struct rds_wire_hdr hdr;
	unsigned char byte;
	unsigned long i;

	for (i = 0; i < n; i++) {
		byte = (unsigned char)(first + i);
		rds_wire_hdr_init(&hdr, ++h->seq, 0, len, HOSTILE_SPORT,
				  case_port(P_VICTIM), 0);
		rds_wire_csum_set(&hdr);
		if (hp_frame(h, &hdr, &byte, len, 1, FLOOD_STALL_MS)) {
			h->seq--;
			return 1;
		}
	}
	return hp_flush(h, FLOOD_STALL_MS) ? 1 : 0;
}

/* Node 1: read what the flood left, @len bytes each, in order. */
static unsigned long flood_drain(int fd, uint32_t len, unsigned long want,
				 int ms)
{
	unsigned long got = 0, misordered = 0;
	long long end = rt_now_ms() + ms;
	unsigned char buf[16];
	long n;

	while (got < want && rt_now_ms() < end) {
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0) {
			if (errno != EAGAIN)
				break;
			poll_fd(fd, POLLIN, 200);
			continue;
		}
		if (n != (long)len || (len && buf[0] != (unsigned char)got))
			misordered++;
		got++;
	}
	EXPECT_EQ(misordered, 0);
	return got;
}

/*
 * (e) A flood of @len-byte messages to a socket that never reads, the
 * congestion map ignored.  In batches: node 2 sends, node 1 says how much
 * its memory grew; they stop when node 1 holds the flood back, when all
 * FLOOD_MSGS went, or before node 1 runs out of memory.
 */
static void flood_case(uint32_t len)
{
	unsigned long total = 0, final, v;
	long long used0 = 0, slab0 = 0, used = 0, slab = 0, grown = 0, queued;
	long long start = 0, secs, bound;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr qa;
	struct hcase hc;
	int held = 0;
	struct hp h;

	if (distro_victim())	/* both nodes know: neither starts */
		rt_skip("the distribution queues such a flood without %s",
			"bound (44 MiB for 200000 empty messages on 6.1)");
	hc_begin(&hc);
	if (node == 2) {
		hp_open(&h, case_tos(0), 0, 0);
		if (!ibv_query_qp(h.id->qp, &qa, IBV_QP_RNR_RETRY, &init))
			rt_diag("the flooding QP's RNR retry count: %u",
				qa.rnr_retry);
		hp_listen(&h, 500);
	}
	sync_peer("up");
	if (node == 1)
		used0 = rt_mem_used_kib(&slab0);
	start = rt_now_ms();
	/* Both decide alike: on what node 2 posted and node 1's growth. */
	while (!held && total < FLOOD_MSGS && grown <= FLOOD_STOP_KIB) {
		if (node == 2) {
			held = flood_batch(&h, total, FLOOD_BATCH, len);
			total = h.posted;
			tell_peer((long)(total * 2 + held));
			grown = hear_peer();
		} else {
			v = (unsigned long)hear_peer();
			held = v & 1;
			total = v / 2;
			rt_sleep_ms(200);	/* what node 1 has yet to take */
			grown = rt_mem_grown_kib(used0, slab0, &used, &slab);
			tell_peer((long)grown);
		}
	}
	secs = (rt_now_ms() - start + 500) / 1000;
	if (node == 2) {
		rt_diag("%s: %lu messages posted, %llu accepted by node 1 in %lld s",
			held ? "held back" : "not held back", total, h.done,
			secs);
	} else {
		grown = rt_mem_grown_kib(used0, slab0, &used, &slab);
		queued = rds_counter(hc.cfd, "recv_queued") - hc.queued;
		rt_diag("%s: %lu messages of %u bytes in %lld s, %lld queued",
			held ? "held back" : "not held back", total, len, secs,
			queued);
		rt_diag("memory +%lld KiB (in use %lld KiB, slab %lld KiB), %lld bytes a message",
			grown, used - used0, slab - slab0,
			total ? grown * 1024 / (long long)total : 0);
		bound = (long long)FLOOD_BOUND_KIB * rt_mem_scale();
		EXPECT_TRUE(grown <= bound,
			    "memory grew by %lld KiB (at most %lld) for %lu messages: %s",
			    grown, bound, total,
			    held ? "held back too late" : "not held back");
		if (held)
			rt_diag("held back: only %lu of %lu accepted in %lld s, memory +%lld KiB",
				total, FLOOD_MSGS, secs, grown);
	}
	hc_middle(&hc);	/* the honest peer, the flood held */
	/* The reader wakes up: every message accepted arrives, once. */
	if (node == 2) {
		EXPECT_TRUE(!hp_flush(&h, 60000),
			    "the flood's last %u sends never completed (status %d)",
			    h.busy, h.err);
		tell_peer((long)h.done);
		/*
		 * A send completed once its frame was in a receive buffer of
		 * node 1, where a held one waits to be delivered until node
		 * 1 has read what is before it; and a frame not acknowledged
		 * by RDS is lost with the connection (a real RDS peer sends
		 * it again, this one does not).  So the QP stays until node
		 * 1 has everything.
		 */
		hear_peer();
		hp_close(&h);
	} else {
		unsigned long got = flood_drain(hc.victim, len, total, 60000);

		final = (unsigned long)hear_peer();
		got += flood_drain(hc.victim, len, final - got, 10000);
		tell_peer((long)got);
		EXPECT_EQ(got, final);
	}
	hc_end(&hc, distro_victim() ? -1 : 1);
}

void test_flood_zero(void)
{
	flood_case(0);
}

void test_flood_one(void)
{
	flood_case(1);
}

/* Node 2: one ping, from the hostile port to node 1's port 0. */
static int ping_one(struct hp *h, int ms)
{
	struct rds_wire_hdr hdr;

	rds_wire_hdr_init(&hdr, ++h->seq, 0, 0, HOSTILE_SPORT, 0, 0);
	rds_wire_csum_set(&hdr);
	if (!hp_frame(h, &hdr, NULL, 0, 1, ms))
		return 0;
	h->seq--;
	return -1;
}

/* Node 2: take node 1's frames until @want pongs came, or @ms passed. */
static void pongs_wait(struct hp *h, unsigned long long want, int ms)
{
	long long end = rt_now_ms() + ms;

	while (h->rx_pongs < want && h->up && rt_now_ms() < end)
		hp_progress(h, (int)(end - rt_now_ms()));
}

/*
 * (e) Pings that node 1 cannot answer: node 2 grants the credits of node
 * 1's congestion map and one more, returns none, and sends PING_FLOOD
 * pings.  Each asks node 1 for a pong it cannot send.  Its ACK watchdog
 * would drop the connection after unacked_timeout_ms (the first pong is
 * never acknowledged), so that is raised for the case: what is measured
 * is the bound itself.  A pong is a slab object, so the slab's growth is
 * what is bounded: memory in use moved by 8 MiB without it on 6.12 (page
 * lists and caches), while 40000 pongs held grew the slab by 5 MiB.
 */
void test_ping_flood(void)
{
	long long used0 = 0, slab0 = 0, used = 0, slab = 0, grown, bound;
	long long pings0 = 0, dropped0 = 0, dropped, wd = -1, t0;
	unsigned long sent = 0, i;
	unsigned long long held = 0;
	struct hcase hc;
	struct hp h;

	if (distro_victim())	/* both nodes know: neither starts */
		rt_skip("the distribution answers every ping, %s",
			"without bound");
	hc_begin(&hc);
	if (node == 1) {
		pings0 = rds_counter(hc.cfd, "recv_ping");
		dropped0 = rds_counter(hc.cfd, "send_pong_dropped");
		EXPECT_TRUE(dropped0 >= 0, "no counter send_pong_dropped");
		wd = get_rds_sysctl("unacked_timeout_ms");
		set_rds_sysctl("unacked_timeout_ms", PING_WD_MS);
		used0 = rt_mem_used_kib(&slab0);
	}
	sync_peer("armed");
	if (node == 2) {
		hp_open(&h, case_tos(0), PING_CREDIT, 0);
		t0 = rt_now_ms();
		for (i = 0; i < PING_FLOOD; i++)
			if (ping_one(&h, DOWN_MS))
				break;
		EXPECT_TRUE(!hp_flush(&h, DOWN_MS), "pings: status %d", h.err);
		sent = (unsigned long)h.done;
		rt_diag("%lu pings in %lld ms, %llu pongs came", sent,
			rt_now_ms() - t0, h.rx_pongs);
		tell_peer((long)sent);
	} else {
		sent = (unsigned long)hear_peer();
		/* A completed SEND is in node 1's ring: wait until it is read. */
		t0 = rt_now_ms();
		while (rds_counter(hc.cfd, "recv_ping") - pings0 < (long long)sent &&
		       rt_now_ms() - t0 < rt_scaled_ms(DOWN_MS))
			rt_sleep_ms(100);
		EXPECT_EQ(rds_counter(hc.cfd, "recv_ping") - pings0,
			  (long long)sent);
		used = rt_mem_used_kib(&slab);
		grown = slab - slab0;
		dropped = rds_counter(hc.cfd, "send_pong_dropped") - dropped0;
		rt_diag("%lu pings, %lld pongs dropped, slab +%lld KiB (in use %+lld KiB)",
			sent, dropped, grown, used - used0);
		/* make reliability's row (tools/testing/reliability.sh) */
		rt_diag("bound_diag kind=pongs_dropped n=%lld", dropped);
		bound = (long long)PING_BOUND_KIB * rt_mem_scale();
		EXPECT_TRUE(grown <= bound,
			    "the slab grew by %lld KiB (at most %lld) for %lu pings",
			    grown, bound, sent);
		/* One pong went with the last credit; PONGS_MAX wait at most. */
		EXPECT_TRUE(dropped0 >= 0 &&
			    dropped >= (long long)sent - PONGS_MAX &&
			    dropped <= (long long)sent,
			    "%lld of %lu pings unanswered, expected all but %d",
			    dropped, sent, PONGS_MAX);
	}
	sync_peer("flooded");
	if (node == 2) {
		/* Credits: node 1 sends what it held, and nothing more. */
		held = h.rx_pongs;
		hp_ack(&h, 0, 255);
		hp_ack(&h, 0, 255);
		pongs_wait(&h, PONGS_MAX, rt_scaled_ms(DOWN_MS));
		hp_listen(&h, rt_scaled_ms(1000));
		rt_diag("%llu pongs before the credits, %llu in all",
			held, h.rx_pongs);
		EXPECT_TRUE(h.rx_pongs >= 1 && h.rx_pongs <= PONGS_MAX,
			    "node 1 sent %llu pongs for %lu pings, at most %d held",
			    h.rx_pongs, sent, PONGS_MAX);
		/* The connection still works: a later ping is answered. */
		hp_ack_all(&h);
		held = h.rx_pongs;
		EXPECT_TRUE(!ping_one(&h, DOWN_MS), "ping: status %d", h.err);
		pongs_wait(&h, held + 1, rt_scaled_ms(DOWN_MS));
		EXPECT_TRUE(h.rx_pongs == held + 1,
			    "%llu pongs to one ping after the flood",
			    h.rx_pongs - held);
		hp_ack_all(&h);
		EXPECT_TRUE(h.up, "node 1 dropped the connection");
	}
	sync_peer("answered");
	if (node == 1)
		set_rds_sysctl("unacked_timeout_ms", wd);
	hc_middle(&hc);
	if (node == 2)
		hp_close(&h);
	hc_end(&hc, 1);
}
