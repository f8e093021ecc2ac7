// SPDX-License-Identifier: GPL-2.0
/*
 * rds_hostile_frames.c - rds_hostile's cases of frames: well-formed ones,
 * wrong checksums, lengths that promise more than comes, credits and
 * ACKs out of range.
 */
#include "rds_hostile.h"

/* ------------------------------------------------------ the frames */

/*
 * Well-formed frames arrive: a checksummed message, one with checksum 0
 * (unchecked), three fragments with ACK_REQUIRED, which node 1 must
 * acknowledge; and its congestion map came first, holding no port that
 * no socket binds, though node 1 had just freed pages full of set bits.
 */
void test_wire_sane(void)
{
	struct rds_wire_hdr hdr;
	long long start, end;
	struct hcase hc;
	uint64_t last;
	struct hp h;

	hc_begin(&hc);
	if (node == 1)
		dirty_free_pages();	/* before node 2 connects: its map */
	sync_peer("dirtied");
	if (node == 2) {
		hp_open(&h, case_tos(0), 0, 0);
		hp_msg(&h, 1, 100, P_VICTIM, 0, NULL);
		hp_hdr(&h, &hdr, ++h.seq, 0, P_VICTIM, 0, NULL);
		hdr.csum = 0;
		ASSERT_TRUE(!hp_frame(&h, &hdr, NULL, 0, 1, DOWN_MS),
			    "frame without checksum not sent");
		last = hp_msg(&h, 3, 10000, P_VICTIM, RDS_WIRE_F_ACK_REQ, NULL);
		EXPECT_TRUE(!hp_flush(&h, DOWN_MS), "sends: status %d", h.err);
		/*
		 * Until the deadline, not until a wait takes nothing: a
		 * completion event left from the sends wakes the first wait
		 * at once, with nothing new to take.
		 */
		start = rt_now_ms();
		end = start + DOWN_MS;
		while (h.rx_ack < last && h.up && !h.err && rt_now_ms() < end)
			hp_progress(&h, (int)(end - rt_now_ms()));
		EXPECT_TRUE(h.rx_ack == last,
			    "ACK %llu after %lld ms, expected %llu (%llu frames, %llu ACK frames from node 1)",
			    (unsigned long long)h.rx_ack, rt_now_ms() - start,
			    (unsigned long long)last, h.rx_frames, h.rx_acks);
		EXPECT_TRUE(h.rx_cong >= 2, "%llu frames of a congestion map",
			    h.rx_cong);
		/* Node 1's maps carry only what it wrote in them. */
		EXPECT_TRUE(h.rx_cong_stray == 0,
			    "%llu congested ports in node 1's maps that no socket binds, the first %d",
			    h.rx_cong_stray, h.rx_cong_stray_port);
		EXPECT_EQ(h.rx_bad, 0);
		EXPECT_TRUE(h.up, "node 1 dropped the connection");
	} else {
		expect_hostile(hc.victim, 1, 100, 0, 0);
		expect_hostile(hc.victim, 2, 0, 0, 0);
		expect_hostile(hc.victim, 3, 10000, 0, 0);
	}
	hc_middle(&hc);
	if (node == 2)
		hp_close(&h);
	hc_end(&hc, distro_victim() ? -1 : 1);
}

/*
 * (a) A wrong checksum on a data frame, an ACK frame and the second
 * fragment of a message: each drops the connection; only the messages
 * around them arrive.
 */
void test_bad_csum(void)
{
	long long bad_csum = 0;
	struct rds_wire_hdr hdr;
	unsigned char *data;
	struct hcase hc;
	struct hp h;

	hc_begin(&hc);
	if (node == 1)
		bad_csum = rds_counter(hc.cfd, "recv_drop_bad_checksum");
	if (node == 2) {
		hp_open(&h, case_tos(0), 0, 0);
		hp_msg(&h, 1, 64, P_VICTIM, 0, NULL);
		data = hostile_payload(2, 64);
		hp_hdr(&h, &hdr, ++h.seq, 64, P_VICTIM, 0, NULL);
		hdr.csum ^= htons(0x0101);
		hp_frame(&h, &hdr, data, 64, 1, DOWN_MS);
		free(data);
		hp_expect_drop(&h, "data frame with a bad checksum");

		hp_open(&h, case_tos(1), 0, 0);
		rds_wire_ack_init(&hdr, 0, 0);
		hdr.csum ^= htons(0x8000);
		hp_frame(&h, &hdr, NULL, 0, 1, DOWN_MS);
		hp_expect_drop(&h, "ACK frame with a bad checksum");

		hp_open(&h, case_tos(2), 0, 0);
		data = hostile_payload(3, 6000);
		hp_hdr(&h, &hdr, ++h.seq, 6000, P_VICTIM, 0, NULL);
		hp_frame(&h, &hdr, data, RDS_WIRE_FRAG, 0, DOWN_MS);
		hdr.csum ^= htons(0x0001);
		hp_frame(&h, &hdr, data + RDS_WIRE_FRAG, 6000 - RDS_WIRE_FRAG,
			 1, DOWN_MS);
		free(data);
		hp_expect_drop(&h, "second fragment with a bad checksum");

		hp_open(&h, case_tos(3), 0, 0);
		hp_msg(&h, 4, 64, P_VICTIM, 0, NULL);
		EXPECT_TRUE(!hp_flush(&h, DOWN_MS), "sends: status %d", h.err);
	} else {
		expect_hostile(hc.victim, 1, 64, 0, 0);
		expect_hostile(hc.victim, 4, 64, 0, 0);
	}
	hc_middle(&hc);
	if (node == 2)
		hp_close(&h);
	if (node == 1 && bad_csum >= 0)
		EXPECT_EQ(rds_counter(hc.cfd, "recv_drop_bad_checksum") -
			  bad_csum, 3);
	hc_end(&hc, distro_victim() ? -1 : 4);
}

/*
 * (b) Messages whose h_len promises more than comes: a new message
 * after the first fragment, a disconnect after it, h_len 2^32 - 1, a
 * short first fragment.  None may be delivered; the connection drops and
 * the next message arrives whole.
 */
void test_len_overrun(void)
{
	unsigned char *data = NULL;
	struct rds_wire_hdr hdr;
	struct hcase hc;
	long short_taken;
	struct hp h;

	hc_begin(&hc);
	if (node == 2) {
		data = hostile_payload(9, 3 * RDS_WIRE_FRAG);
		hp_open(&h, case_tos(0), 0, 0);
		hp_hdr(&h, &hdr, ++h.seq, 3 * RDS_WIRE_FRAG, P_VICTIM, 0, NULL);
		hp_frame(&h, &hdr, data, RDS_WIRE_FRAG, 0, DOWN_MS);
		hp_msg(&h, 2, 64, P_VICTIM, 0, NULL);
		hp_expect_drop(&h, "a new message before the last fragment");

		hp_open(&h, case_tos(1), 0, 0);
		hp_hdr(&h, &hdr, ++h.seq, 2 * RDS_WIRE_FRAG, P_VICTIM, 0, NULL);
		hp_frame(&h, &hdr, data, RDS_WIRE_FRAG, 0, DOWN_MS);
		EXPECT_TRUE(!hp_flush(&h, DOWN_MS), "sends: status %d", h.err);
		hp_close(&h);	/* the message never completes */

		hp_open(&h, case_tos(2), 0, 0);
		hp_hdr(&h, &hdr, ++h.seq, UINT32_MAX, P_VICTIM, 0, NULL);
		hp_frame(&h, &hdr, data, RDS_WIRE_FRAG, 0, DOWN_MS);
		hp_msg(&h, 3, 64, P_VICTIM, 0, NULL);
		hp_expect_drop(&h, "h_len 2^32 - 1");

		/* Wire 4.6: the distribution's 6.1 takes short fragments. */
		hp_open(&h, case_tos(3), 0, 0);
		hp_hdr(&h, &hdr, ++h.seq, 6000, P_VICTIM, 0, NULL);
		hp_frame(&h, &hdr, data, 100, 0, DOWN_MS);
		hp_frame(&h, &hdr, data + RDS_WIRE_FRAG, 6000 - RDS_WIRE_FRAG,
			 1, DOWN_MS);
		short_taken = hp_wait_down(&h, DOWN_MS) ? 1 : 0;
		if (!distro_victim())
			EXPECT_TRUE(!short_taken,
				    "a short fragment: node 1 did not drop the connection in %d ms",
				    DOWN_MS);
		hp_close(&h);
		tell_peer(short_taken);

		hp_open(&h, case_tos(4), 0, 0);
		hp_msg(&h, 4, 64, P_VICTIM, 0, NULL);
		EXPECT_TRUE(!hp_flush(&h, DOWN_MS), "sends: status %d", h.err);
		free(data);
	} else {
		short_taken = hear_peer();
		if (short_taken && distro_victim()) {
			data = xmalloc(6000);
			EXPECT_EQ(recv(hc.victim, data, 6000, 0), 6000);
			free(data);
		}
		expect_hostile(hc.victim, 4, 64, 0, 0);
	}
	hc_middle(&hc);
	if (node == 2)
		hp_close(&h);
	hc_end(&hc, distro_victim() ? -1 : 5);
	if (short_taken && distro_victim())
		rt_skip("distribution (wire 4.6): takes a short first fragment");
}

/*
 * (d) Credits out of range: an initial credit of 2^32 - 1 and 600 ACK
 * frames granting 255 each.  Node 1 must go on sending on that connection
 * and must not answer with an ACK storm (one ACK frame per 16 frames
 * taken, to return credits, is what it may send), nor return more
 * credits than it took frames.
 */
#define CREDIT_FRAMES	600
#define S2_MSGS		4

void test_bad_credit(void)
{
	struct sockaddr_in to;
	uint64_t seqs[S2_MSGS];
	long long acks = 0;
	struct hcase hc;
	int s2 = -1, i, n;
	struct hp h;

	hc_begin(&hc);
	if (node == 2) {
		hp_open(&h, case_tos(0), UINT32_MAX, 0);
		for (i = 0; i < CREDIT_FRAMES; i++)
			hp_ack(&h, 0, 255);
		hp_msg(&h, 1, 10, P_VICTIM, RDS_WIRE_F_ACK_REQ, NULL);
		EXPECT_TRUE(!hp_flush(&h, DOWN_MS), "sends: status %d", h.err);
		hp_listen(&h, 500);
		tell_peer((long)h.rx_acks);
	} else {
		acks = rds_counter(hc.cfd, "ib_tx_ack_frames");
		expect_hostile(hc.victim, 1, 10, 0, 0);
		hear_peer();
		s2 = rds_bound(P_S2, NULL);
		set_tos(s2, case_tos(0));
		to = peer_port(P_INIT);
		for (i = 0; i < S2_MSGS; i++)
			EXPECT_SYS_OK(sendto(s2, "to the liar", 11, 0,
					     (struct sockaddr *)&to,
					     sizeof(to)));
	}
	sync_peer("sent");
	if (node == 2) {
		n = hp_wait_seen(&h, case_port(P_S2), S2_MSGS, seqs, DOWN_MS);
		EXPECT_EQ(n, S2_MSGS);
		/*
		 * Node 1 returns a credit for each receive buffer it posted
		 * again, one per frame it took: never more than we sent.  The
		 * credits we granted once overflowed its send count into its
		 * posted count, and it returned credits it never had.
		 */
		rt_diag("node 1 returned %llu credits for %llu frames",
			h.rx_credit, h.posted);
		EXPECT_TRUE(h.rx_credit <= h.posted,
			    "node 1 returned %llu credits for %llu frames",
			    h.rx_credit, h.posted);
		hp_ack_all(&h);
		rt_diag("node 1 sent %llu ACK frames", h.rx_acks);
	}
	sync_peer("acked");
	if (node == 1) {
		EXPECT_EQ(unacked_wait(hc.cfd, P_S2, 0, DOWN_MS), 0);
		if (acks >= 0)
			EXPECT_TRUE(rds_counter(hc.cfd, "ib_tx_ack_frames") -
				    acks <= CREDIT_FRAMES / 4,
				    "node 1 sent %lld ACK frames for %d of credit",
				    rds_counter(hc.cfd, "ib_tx_ack_frames") -
				    acks, CREDIT_FRAMES);
		close(s2);
	}
	hc_middle(&hc);
	if (node == 2) {
		EXPECT_TRUE(h.up, "node 1 dropped the connection");
		hp_close(&h);
	}
	hc_end(&hc, 1);
}

/*
 * (d) ACKs out of range.  Two verbs peers on TOS t0 and t1: A, honest,
 * takes node 1's messages from S1 and does not acknowledge them; B,
 * hostile, takes S2's and acknowledges with 0, a partial ACK, backwards,
 * 2^64 - 1 and 2^63.  B's ACKs may release S2's messages (cumulative,
 * wire 5.2) but never S1's; A's honest ACK then releases those.
 */
/* Both: node 2 has sent the ACKs of step @name; node 1 checks them. */
static void ack_step(const char *name, int s1, int s2, int victim_msg,
		     const struct hcase *hc)
{
	char what[64];

	snprintf(what, sizeof(what), "%s sent", name);
	sync_peer(what);
	if (node == 1) {
		if (victim_msg)
			expect_hostile(hc->victim, victim_msg, 10, 0, 0);
		EXPECT_TRUE(unacked_wait(hc->cfd, P_S2, s2, 500) == s2,
			    "after the ACKs %s: %d of the liar's messages unacknowledged, expected %d",
			    name, unacked(hc->cfd, P_S2), s2);
		EXPECT_TRUE(unacked(hc->cfd, P_S1) == s1,
			    "after the liar's ACKs %s: %d of the honest peer's messages unacknowledged, expected %d",
			    name, unacked(hc->cfd, P_S1), s1);
	}
	snprintf(what, sizeof(what), "%s checked", name);
	sync_peer(what);
}

void test_bad_ack(void)
{
	uint64_t sa[S2_MSGS + 8], sb[S2_MSGS + 8];
	struct sockaddr_in to = peer_port(P_INIT);
	int s1 = -1, s2 = -1, i, n, later = 0;
	struct hp a, b;
	struct hcase hc;

	hc_begin(&hc);
	if (node == 2) {
		hp_open(&a, case_tos(0), 0, 0);
		hp_open(&b, case_tos(1), 0, 0);
	} else {
		s1 = rds_bound(P_S1, NULL);
		set_tos(s1, case_tos(0));
		s2 = rds_bound(P_S2, NULL);
		set_tos(s2, case_tos(1));
	}
	sync_peer("up");
	if (node == 1) {
		for (i = 0; i < S2_MSGS; i++) {
			EXPECT_SYS_OK(sendto(s1, "to the honest", 13, 0,
					     (struct sockaddr *)&to, sizeof(to)));
			EXPECT_SYS_OK(sendto(s2, "to the liar", 11, 0,
					     (struct sockaddr *)&to, sizeof(to)));
		}
		EXPECT_EQ(unacked_wait(hc.cfd, P_S1, S2_MSGS, DOWN_MS), S2_MSGS);
		EXPECT_EQ(unacked_wait(hc.cfd, P_S2, S2_MSGS, DOWN_MS), S2_MSGS);
	} else {
		n = hp_wait_seen(&a, case_port(P_S1), S2_MSGS, sa, DOWN_MS);
		EXPECT_EQ(n, S2_MSGS);
		n = hp_wait_seen(&b, case_port(P_S2), S2_MSGS, sb, DOWN_MS);
		ASSERT_EQ(n, S2_MSGS);
	}
	sync_peer("sent");

	/* zero, in an ACK frame and piggybacked */
	if (node == 2) {
		hp_ack(&b, 0, 0);
		b.ack = 0;
		hp_msg(&b, 1, 10, P_VICTIM, 0, NULL);
		EXPECT_TRUE(!hp_flush(&b, DOWN_MS), "sends: status %d", b.err);
	}
	ack_step("of 0", S2_MSGS, S2_MSGS, 1, &hc);
	/* partial, honest */
	if (node == 2) {
		hp_ack(&b, sb[0], 0);
		EXPECT_TRUE(!hp_flush(&b, DOWN_MS), "sends: status %d", b.err);
	}
	ack_step("of the first", S2_MSGS, S2_MSGS - 1, 0, &hc);
	/* backwards */
	if (node == 2) {
		hp_ack(&b, sb[0] - 1, 0);
		hp_ack(&b, 1, 0);
		EXPECT_TRUE(!hp_flush(&b, DOWN_MS), "sends: status %d", b.err);
		hp_listen(&b, 200);
	}
	ack_step("backwards", S2_MSGS, S2_MSGS - 1, 0, &hc);
	/*
	 * 2^64 - 1, and 2^63 piggybacked: B is the receiver of S2's, it may
	 * say it has them all; but S1's went to A, which acknowledged none.
	 */
	if (node == 2) {
		hp_ack(&b, UINT64_MAX, 0);
		b.ack = 1ULL << 63;
		hp_msg(&b, 2, 10, P_VICTIM, 0, NULL);
		b.ack = 0;
		EXPECT_TRUE(!hp_flush(&b, DOWN_MS), "sends: status %d", b.err);
	}
	ack_step("of 2^64 - 1 and 2^63", S2_MSGS, 0, 2, &hc);

	/* Honest ACKs still work: A's of S1's, B's of one more of S2. */
	if (node == 1)
		EXPECT_SYS_OK(sendto(s2, "after", 5, 0, (struct sockaddr *)&to,
				     sizeof(to)));
	sync_peer("one more");
	if (node == 2) {
		hp_ack_all(&a);
		n = hp_wait_seen(&b, case_port(P_S2), S2_MSGS + 1, sb, DOWN_MS);
		EXPECT_EQ(n, S2_MSGS + 1);
		hp_ack_all(&b);
	}
	sync_peer("honest");
	if (node == 1) {
		EXPECT_EQ(unacked_wait(hc.cfd, P_S1, 0, DOWN_MS), 0);
		later = unacked_wait(hc.cfd, P_S2, 0, DOWN_MS);
		if (!distro_victim())
			EXPECT_EQ(later, 0);
		close(s1);
		close(s2);
	}
	hc_middle(&hc);
	if (node == 2) {
		EXPECT_TRUE(a.up && b.up, "node 1 dropped a connection");
		hp_close(&a);
		hp_close(&b);
	}
	hc_end(&hc, distro_victim() ? -1 : 2);
	if (later && distro_victim())
		rt_skip("distribution (wire 5.2): no ACK applies after one of 2^64 - 1");
}
