// SPDX-License-Identifier: GPL-2.0
/*
 * rds_rdma_barrier.c - rds_rdma's cases of operation ids and barriers.
 */
#include "rds_rdma.h"

/* ------------------------------------------ operation ids and barriers */

#define STREAM_OPS	4096	/* RDMA WRITEs of op_barrier_stream */
#define STREAM_SLICE	64	/* bytes each, to its own slice */
#define STREAM_BATCH	16	/* a barrier after every so many */

/*
 * RDS_OP_BARRIER on fd for the peer's port k (-1: every destination),
 * waiting for @wait: 0 with the barrier in *done, or -errno.
 */
static int op_barrier(int fd, int k, uint64_t wait, uint64_t *done)
{
	struct rds_op_barrier b = { .wait_id = wait };
	socklen_t len = sizeof(b);

	if (k >= 0) {
		struct sockaddr_in sin = peer_port(k);

		memcpy(&b.dest, &sin, sizeof(sin));
	}
	if (getsockopt(fd, SOL_RDS, RDS_OP_BARRIER, &b, &len))
		return -errno;
	*done = b.done_id;
	return 0;
}

/*
 * RDMA WRITE of len bytes at buf to off of the peer's MR, to the peer's
 * port k, silent, or with ACK @seq if @seq is not 0; its id
 * (RDS_CMSG_OP_ID) in *id.
 */
static long write_with_id(struct pair *p, int k, uint64_t cookie,
			  uint64_t off, void *buf, size_t len, uint64_t flags,
			  uint64_t token, uint32_t seq, uint64_t *id)
{
	struct kmsg m = { K_ACK, seq, { 0 } };
	struct sockaddr_in to = peer_port(k);
	struct rds_iovec iov = { (uintptr_t)buf, len };
	struct rds_rdma_args args = {
		.cookie = cookie,
		.remote_vec = { off, len },
		.local_vec_addr = (uintptr_t)&iov,
		.nr_local = 1,
		.flags = flags | RDS_RDMA_READWRITE |
			 (seq ? 0 : RDS_RDMA_SILENT),
		.user_token = token,
	};
	uint64_t where = (uintptr_t)id;
	struct cm cm[2] = {
		{ RDS_CMSG_RDMA_ARGS, &args, sizeof(args) },
		{ RDS_CMSG_OP_ID, &where, sizeof(where) },
	};

	fill_pattern(m.pattern, sizeof(m.pattern), msg_seed(node, K_ACK * 1000 + seq));
	return send_cm(p->fd, &to, &m, seq ? sizeof(m) : 0, cm, 2, 0);
}

/*
 * Take every notification queued now; note[i] counts those of token
 * token_of(i), and each must have status @want (-1: any, counted in
 * *dropped when DROPPED).
 */
static void drain_notes(int fd, unsigned char *note, int n, int want,
			int *dropped)
{
	unsigned char buf[64];
	struct rx rx;
	uint64_t i;
	int k;

	while (rx_msg(fd, buf, sizeof(buf), MSG_DONTWAIT, &rx) >= 0) {
		ASSERT_TRUE(rx.nnote > 0 && rx.nnote <= NOTE_MAX,
			    "%d notifications in one message", rx.nnote);
		for (k = 0; k < rx.nnote; k++) {
			i = rx.note[k].user_token - token_of(0);
			if (!EXPECT_TRUE(i < (uint64_t)n && !note[i],
					 "token %#llx unknown or repeated",
					 (unsigned long long)rx.note[k].user_token))
				continue;
			note[i] = 1;
			if (want >= 0)
				EXPECT_STATUS(rx.note[k].status, want);
			else if (rx.note[k].status == RDS_RDMA_DROPPED)
				(*dropped)++;
		}
	}
	EXPECT_EQ(errno, EAGAIN);
}

/*
 * The bulk-reclaim pattern of the original design: STREAM_OPS silent RDMA
 * WRITEs to two ports of the peer, every other one with NOTIFY_ME, and a
 * blocking barrier for the operation STREAM_BATCH before the newest after
 * each batch.  A barrier never runs ahead of the notifications: every
 * NOTIFY_ME operation at or below it has been reported; a port's barrier
 * is at least the socket's; at the end the barrier is the last id, every
 * notification arrived once, and the owner's MR holds every write.
 */
void op_barrier_stream(int owner)
{
	unsigned char *note, *data;
	uint64_t cookie, *id, done, d0, d1;
	struct region r;
	struct pair p;
	long long t0;
	int i, j, waits = 0;

	needs_ours(3 - owner, "no operation ids or barriers");
	pair_start(&p, owner);
	if (p.owner) {
		region_init(&r, 0, STREAM_OPS * STREAM_SLICE, msg_seed(node, 1));
		cookie = owner_map(&p, &r, 0, 1);
		sync_peer("done");
		for (i = 0; i < STREAM_OPS; i++)
			if (pattern_mismatch(r.buf + i * STREAM_SLICE, STREAM_SLICE,
					     msg_seed(100 + peer_node, i)) != STREAM_SLICE) {
				rt_fail("slice %d does not hold WRITE %d's data", i, i);
				break;
			}
		EXPECT_EQ(rds_free_mr(p.fd, cookie, 0), 0);
		region_free(&r);
		pair_end(&p);
		return;
	}
	cookie = server_cookie(&p, 1);
	note = xmalloc(STREAM_OPS);
	memset(note, 0, STREAM_OPS);
	id = xmalloc(STREAM_OPS * sizeof(*id));
	data = xmalloc(STREAM_OPS * STREAM_SLICE);
	for (i = 0; i < STREAM_OPS; i++)
		fill_pattern(data + i * STREAM_SLICE, STREAM_SLICE,
			     msg_seed(100 + node, i));
	t0 = rt_now_ms();
	for (i = 0; i < STREAM_OPS; i++) {
		id[i] = 0;
		if (EXPECT_SYS_OK(write_with_id(&p, i & 1, cookie,
						i * STREAM_SLICE,
						data + i * STREAM_SLICE,
						STREAM_SLICE,
						(i & 1) ? RDS_RDMA_NOTIFY_ME : 0,
						token_of(i), 0, &id[i])) < 0)
			rt_abort();
		if (i && !EXPECT_TRUE(id[i] == id[i - 1] + 1,
				      "id %llu after %llu",
				      (unsigned long long)id[i],
				      (unsigned long long)id[i - 1]))
			rt_abort();
		if ((i + 1) % STREAM_BATCH || i < 2 * STREAM_BATCH)
			continue;
		ASSERT_EQ(op_barrier(p.fd, -1, id[i - STREAM_BATCH], &done), 0);
		waits++;
		EXPECT_TRUE(done >= id[i - STREAM_BATCH] && done <= id[i],
			    "barrier %llu for %llu, last id %llu",
			    (unsigned long long)done,
			    (unsigned long long)id[i - STREAM_BATCH],
			    (unsigned long long)id[i]);
		drain_notes(p.fd, note, STREAM_OPS, RDS_RDMA_SUCCESS, NULL);
		for (j = 1; j <= i && id[j] <= done; j += 2)
			if (!EXPECT_TRUE(note[j], "barrier %llu, %s %d (id %llu)",
					 (unsigned long long)done,
					 "but no notification of operation", j,
					 (unsigned long long)id[j]))
				break;
		ASSERT_EQ(op_barrier(p.fd, 0, 0, &d0), 0);
		ASSERT_EQ(op_barrier(p.fd, 1, 0, &d1), 0);
		EXPECT_TRUE(d0 >= done && d1 >= done,
			    "port barriers %llu, %llu below the socket's %llu",
			    (unsigned long long)d0, (unsigned long long)d1,
			    (unsigned long long)done);
	}
	ASSERT_EQ(op_barrier(p.fd, -1, id[STREAM_OPS - 1], &done), 0);
	EXPECT_EQ(done, id[STREAM_OPS - 1]);
	drain_notes(p.fd, note, STREAM_OPS, RDS_RDMA_SUCCESS, NULL);
	for (i = 1; i < STREAM_OPS; i += 2)
		if (!EXPECT_TRUE(note[i], "operation %d was never reported", i))
			break;
	rt_diag("%d RDMA WRITEs, %d barrier waits, in %lld ms", STREAM_OPS,
		waits, rt_now_ms() - t0);
	sync_peer("done");
	free(data);
	free(id);
	free(note);
	pair_end(&p);
}

/*
 * Barriers across a connection drop: with every frame of the initiator
 * lost for CUT_S seconds, eight RDMA WRITEs with NOTIFY_ME and an ACK
 * message never reach the owner; the blocking barrier for the last one
 * returns once the connection gave up on them (the ACK watchdog), and
 * each was reported DROPPED first.
 */
void test_op_barrier_drop(void)
{
	unsigned char note[8] = { 0 };
	unsigned char data[64] = { 0 };
	uint64_t cookie, id[8], done;
	struct pair p;
	pid_t restore;
	int i, dropped = 0;

	needs_ours(2, "no operation ids or barriers");
	if (node != 1)
		link_arm();
	pair_start(&p, 1);
	if (p.owner) {
		owner_of_failure(&p, 0, 0);
		pair_end(&p);
		return;
	}
	cookie = server_cookie_ack(&p);
	restore = link_cut();
	for (i = 0; i < 8; i++)
		EXPECT_SYS_OK(write_with_id(&p, 0, cookie, i * sizeof(data), data,
					    sizeof(data), RDS_RDMA_NOTIFY_ME,
					    token_of(i), 100 + i, &id[i]));
	set_rcvtimeo(p.fd, RECONNECT_MS);
	EXPECT_EQ(op_barrier(p.fd, 0, id[7], &done), 0);
	EXPECT_EQ(done, id[7]);
	drain_notes(p.fd, note, 8, -1, &dropped);
	for (i = 0; i < 8; i++)
		EXPECT_TRUE(note[i], "operation %d was not reported", i);
	EXPECT_EQ(dropped, 8);
	set_rcvtimeo(p.fd, RCV_TIMEOUT_MS);
	link_restored(restore);
	fail_server_after(&p, -1, 0, 1);
	pair_end(&p);
	link_disarm();
}
