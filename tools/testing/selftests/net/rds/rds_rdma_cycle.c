// SPDX-License-Identifier: GPL-2.0
/*
 * rds_rdma_cycle.c - rds_rdma's cases of whole RDMA cycles that succeed:
 * WRITE and READ with RDS_CMSG_RDMA_MAP or RDS_CMSG_RDMA_DEST, sizes,
 * USE_ONCE, a pipeline of RDMAs, RDMAs without notification.
 */
#include "rds_rdma.h"

#define CHAIN_PARAM "/sys/module/rds_zc_ib/parameters/chain_reg_mr"

/* Our module's chain_reg_mr: the value it had, -2 if unreadable. */
static int chain_reg_mr(int value)
{
	FILE *f = fopen(CHAIN_PARAM, "r");
	int old = -2;

	if (f) {
		if (fscanf(f, "%d", &old) != 1)
			old = -2;
		fclose(f);
	}
	f = fopen(CHAIN_PARAM, "w");
	if (f) {
		fprintf(f, "%d\n", value);
		if (fclose(f))
			old = -2;
	} else {
		old = -2;
	}
	return old;
}

/*
 * The worked example: WRITE into the owner's buffer, NOTIFY_ME.  Twice:
 * our module posts a MAP's REG_MR in front of the request's SEND on the
 * connection's QP instead of waiting for it in sendmsg() (chain_reg_mr
 * forced to 1: what a hardware device gets), except on rxe, which runs
 * local operations again when it retransmits (chain_reg_mr -1, the
 * default: registered on the registration QP, ib_mr_reg_unchained).
 * Between two processes of one host (one_host()), the MR is a local one
 * and neither path of the IB transport registers anything.
 */
void rdma_write_map(int owner)
{
	struct rdma_op op = {
		.write = 1, .start = 1000, .mr_len = 20000,
		.off = 3000, .len = 12345,
	};
	struct pair p;
	long long chained = 0, unchained = 0;
	int ours, old = -1;

	pair_start(&p, owner);
	if (p.owner && one_host()) {
		chained = rds_counter(p.fd, "ib_mr_reg_chained");
		unchained = rds_counter(p.fd, "ib_mr_reg_unchained");
		rdma_cycle(&p, &op, 1);
		op.start += 7;
		rdma_cycle(&p, &op, 2);
		EXPECT_EQ(rds_counter(p.fd, "ib_mr_reg_chained") - chained, 0);
		EXPECT_EQ(rds_counter(p.fd, "ib_mr_reg_unchained") - unchained,
			  0);
		pair_end(&p);
		return;
	}
	ours = p.owner && !distro(node);
	if (ours) {
		old = chain_reg_mr(1);
		ASSERT_TRUE(old != -2, "cannot set " CHAIN_PARAM);
		chained = rds_counter(p.fd, "ib_mr_reg_chained");
	}
	rdma_cycle(&p, &op, 1);
	if (ours) {
		EXPECT_EQ(rds_counter(p.fd, "ib_mr_reg_chained") - chained, 1);
		chain_reg_mr(-1);
		chained = rds_counter(p.fd, "ib_mr_reg_chained");
		unchained = rds_counter(p.fd, "ib_mr_reg_unchained");
	}
	op.start += 7;
	rdma_cycle(&p, &op, 2);
	if (ours) {
		int rxe = !access("/sys/class/infiniband/rxe0", F_OK);

		EXPECT_EQ(rds_counter(p.fd, "ib_mr_reg_chained") - chained,
			  rxe ? 0 : 1);
		EXPECT_EQ(rds_counter(p.fd, "ib_mr_reg_unchained") - unchained,
			  rxe ? 1 : 0);
		chain_reg_mr(old);
	}
	pair_end(&p);
}

/* READ the owner's buffer into the initiator's iovecs, fenced. */
void rdma_read_map(int owner)
{
	struct rdma_op op = {
		.write = 0, .start = 77, .mr_len = 30000,
		.off = 4000, .len = 17000, .rdma_flags = RDS_RDMA_FENCE,
	};
	struct pair p;

	pair_start(&p, owner);
	rdma_cycle(&p, &op, 1);
	pair_end(&p);
}

/*
 * The other way to pass a cookie: the owner registers with RDS_GET_MR
 * and sends the cookie as RDS_CMSG_RDMA_DEST.  Needs RDS_GET_MR, which
 * the distribution does not have (test_get_mr_after_bind).
 */
void rdma_write_dest(int owner)
{
	struct pair p;
	struct region r;
	struct local l;
	struct rx rx;
	uint64_t cookie = 0, told;
	int ret, err;

	pair_start(&p, owner);
	if (p.owner) {
		region_init(&r, 2222, 9999, msg_seed(node, 9));
		ret = get_mr_optlen(p.fd, r.buf, r.len, &cookie, sizeof(struct rds_get_mr_args));
		err = errno;
		if (ret < 0) {
			tell_peer(0);
			if (distro(node)) {
				sync_peer("end");
				rt_skip("distribution: RDS_GET_MR fails with %s",
					rt_errname(err));
			}
			rt_fail("RDS_GET_MR: %s", rt_errname(err));
			rt_abort();
		}
		{
			struct cm cm = { RDS_CMSG_RDMA_DEST, &cookie, sizeof(cookie) };

			tell_peer((long)cookie);
			send_kind(&p, &p.peer, K_REQ, 1, &cm, 1);
		}
		expect_kind(&p, K_ACK, 1, &rx);
		region_expect(&r, 10, 9000, msg_seed(100 + peer_node, 1));
		sync_peer("checked");
		EXPECT_EQ(rds_free_mr(p.fd, cookie, 0), 0);
		region_free(&r);
	} else {
		told = (uint64_t)hear_peer();
		if (!told) {
			sync_peer("end");
			if (distro(peer_node))
				rt_skip("distribution on node %d: no RDS_GET_MR",
					peer_node);
			rt_fail("node %d could not register", peer_node);
			rt_abort();
		}
		expect_kind(&p, K_REQ, 1, &rx);
		EXPECT_EQ(rx.ndest, 1);
		EXPECT_EQ(rx.cookie, told);
		local_init(&l, NULL, 0, 9000);
		local_pattern(&l, msg_seed(100 + node, 1), 0, 1);
		EXPECT_SYS_OK(server_rdma(&p, told, 10, 9000, &l,
					  RDS_RDMA_READWRITE | RDS_RDMA_NOTIFY_ME,
					  token_of(1), 1));
		EXPECT_STATUS(expect_note(p.fd, token_of(1)), RDS_RDMA_SUCCESS);
		sync_peer("checked");
		free(l.mem);
	}
	pair_end(&p);
}

/*
 * Sizes: 1 byte, 4095 bytes from an odd address across a page boundary,
 * 64 KiB, 1 MiB (the largest, 257 pages), a middle part of a region, and
 * 64 local iovecs of odd sizes; each as WRITE and as READ.
 */
static size_t odd_pieces[64];

void rdma_sizes(int owner)
{
	struct rdma_op ops[] = {
		{ .start = 7, .mr_len = 1, .off = 0, .len = 1 },
		{ .start = 2049, .mr_len = 4095, .off = 0, .len = 4095 },
		{ .start = 0, .mr_len = 65536, .off = 0, .len = 65536 },
		{ .start = 100, .mr_len = MR_MAX, .off = 0, .len = MR_MAX },
		{ .start = 3333, .mr_len = 70000, .off = 5001, .len = 10007 },
		{ .start = 333, .mr_len = 0, .off = 0, .len = 0,
		  .pieces = odd_pieces, .npieces = 64 },
	};
	struct pair p;
	size_t i, total = 0;
	int w;
	long long start;

	for (i = 0; i < ARRAY_SIZE(odd_pieces); i++) {
		odd_pieces[i] = 1 + (i * 677) % 1500;
		total += odd_pieces[i];
	}
	ops[5].mr_len = total + 64;
	ops[5].off = 64;
	ops[5].len = total;

	pair_start(&p, owner);
	start = rt_now_ms();
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		for (w = 1; w >= 0; w--) {
			ops[i].write = w;
			rdma_cycle(&p, &ops[i], 2 * i + w);
		}
	}
	rt_diag("%zu RDMAs in %lld ms", 2 * ARRAY_SIZE(ops), rt_now_ms() - start);
	pair_end(&p);
}

#define TRACING "/sys/kernel/tracing"

/*
 * Our module's events of a key's death and of reads, traced with the
 * global clock, so that the lines of the trace are in the order of the
 * events on every CPU.
 */
static void once_trace_start(void)
{
	ASSERT_TRUE(!system("t=" TRACING "; "
			    "[ -d $t/events ] || mount -t tracefs nodev $t; "
			    "echo global > $t/trace_clock || exit 1; "
			    "echo > $t/trace; "
			    "for e in rds_mr_invalidated rds_mr_killed rds_recv_read; "
			    "do echo 1 > $t/events/rds_zc/$e/enable || exit 1; done"),
		    "tracing rds_zc's events could not be set up in %s", TRACING);
}

/*
 * The trace says that key @rkey died before the socket bound to @fd read
 * a message of @len bytes.  Tracing stops, back to the local clock.
 */
static void once_trace_check(int fd, uint32_t rkey, size_t len)
{
	char dead1[64], dead2[64], rd[128], line[512], a[INET6_ADDRSTRLEN];
	union rds_sa me;
	socklen_t sl = sizeof(me);
	long n = 0, dead = 0, read = 0;
	const char *how = "never";
	FILE *f;

	ASSERT_SYS_OK(getsockname(fd, &me.sa, &sl));
	if (me.sa.sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &me.sin6.sin6_addr, a, sizeof(a));
		snprintf(rd, sizeof(rd), " -> [%s]:%u len=%zu ", a,
			 ntohs(me.sin6.sin6_port), len);
	} else {
		inet_ntop(AF_INET, &me.sin.sin_addr, a, sizeof(a));
		snprintf(rd, sizeof(rd), " -> %s:%u len=%zu ", a,
			 ntohs(me.sin.sin_port), len);
	}
	snprintf(dead1, sizeof(dead1), "rds_mr_invalidated: rkey=%#x ", rkey);
	snprintf(dead2, sizeof(dead2), "rds_mr_killed: rkey=%#x ", rkey);
	f = fopen(TRACING "/trace", "r");
	ASSERT_TRUE(f, "%s/trace: %s", TRACING, rt_errname(errno));
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (!dead && (strstr(line, dead1) || strstr(line, dead2))) {
			dead = n;
			how = strstr(line, dead1) ? "invalidated" : "killed";
		}
		if (!read && strstr(line, "rds_recv_read: ") && strstr(line, rd))
			read = n;
	}
	fclose(f);
	EXPECT_TRUE(!system("t=" TRACING "; "
			    "for e in rds_mr_invalidated rds_mr_killed rds_recv_read; "
			    "do echo 0 > $t/events/rds_zc/$e/enable; done; "
			    "echo local > $t/trace_clock"),
		    "tracing could not be stopped");
	ASSERT_TRUE(read, "no read of%s traced", rd);
	rt_diag("key %#x %s at line %ld of the trace, the ACK read at line %ld",
		rkey, how, dead, read);
	EXPECT_TRUE(dead && dead < read,
		    "key %#x died at line %ld of the trace, after the ACK was read (line %ld)",
		    rkey, dead, read);
}

/*
 * USE_ONCE with INVALIDATE: the ACK releases the MR, so FREE_MR does not
 * find it (EINVAL) and a second RDMA with the cookie fails with
 * REMOTE_ERROR.  That is right, and our module as owner must do it.
 * It holds the ACK back from the reader until the key is dead, so that
 * the second RDMA fails however soon the peer sends it: the trace shows
 * the key's death before the read.  Twice: with the registration on the
 * registration QP, and with it chained in front of the request on the
 * connection's QP, where that message may still hold the MR when the
 * ACK comes (its key is then killed, not released).
 *
 * The distribution as owner frees a use-once MR when the ACK arrives,
 * but in its receive path (in interrupt context), where it only queues
 * the invalidation, 10 jiffies later (rds_ib_free_mr() in 6.1 and 6.12):
 * the key still works for a while.  The second RDMA, sent at once, then
 * succeeds (data and ACK delivered) or, should it come late, fails with
 * REMOTE_ERROR; any other status fails.  Either way the key must be dead
 * USE_ONCE_LATE_MS later: a third RDMA then fails with REMOTE_ERROR.  A
 * second RDMA that succeeded is reported as a SKIP.
 */
#define USE_ONCE_LATE_MS	1000

void use_once(int owner)
{
	struct rdma_op op = {
		.write = 1, .start = 10, .mr_len = 5000, .off = 0, .len = 5000,
		.map_flags = RDS_RDMA_USE_ONCE | RDS_RDMA_INVALIDATE,
	};
	struct region r;
	struct pair p;
	uint64_t cookie;
	int status, late, chain, old;

	pair_start(&p, owner);
	if (!distro(owner) && !one_host()) {
		for (chain = -1; chain <= 1; chain += 2) {
			if (!p.owner) {
				rdma_cycle_keep(&p, &op, 10 + chain, NULL);
				continue;
			}
			old = chain_reg_mr(chain);
			ASSERT_TRUE(old != -2, "%s could not be set", CHAIN_PARAM);
			once_trace_start();
			cookie = rdma_cycle_keep(&p, &op, 10 + chain, NULL);
			once_trace_check(p.fd, (uint32_t)cookie,
					 sizeof(struct kmsg));
			chain_reg_mr(old);
		}
	}
	cookie = rdma_cycle_keep(&p, &op, 1, &r);
	if (p.owner) {
		status = fail_owner(&p, &r, NULL, 0, 100, 2, distro(node));
		if (status == RDS_RDMA_SUCCESS) {
			/* the distribution's late invalidation, once more */
			memcpy(r.before, r.map, r.map_len);
			late = fail_owner(&p, &r, NULL, 0, 0, 3, 0);
			EXPECT_STATUS(late, RDS_RDMA_REMOTE_ERROR);
		}
		region_free(&r);
	} else {
		status = fail_server(&p, NULL, cookie, 0, 100,
				     RDS_RDMA_NOTIFY_ME, 1, 2);
		rt_diag("second RDMA with the use-once key (%s owning): %s",
			modules_of(peer_node), status_name(status));
		if (!distro(peer_node) || status != RDS_RDMA_SUCCESS)
			EXPECT_STATUS(status, RDS_RDMA_REMOTE_ERROR);
		if (status == RDS_RDMA_SUCCESS) {
			rt_sleep_ms(USE_ONCE_LATE_MS);
			late = fail_server(&p, NULL, cookie, 0, 100,
					   RDS_RDMA_NOTIFY_ME, 1, 3);
			rt_diag("third RDMA, %d ms later: %s",
				USE_ONCE_LATE_MS, status_name(late));
			EXPECT_STATUS(late, RDS_RDMA_REMOTE_ERROR);
		}
	}
	pair_end(&p);
	if (status == RDS_RDMA_SUCCESS && distro(owner))
		rt_skip("distribution on node %d: USE_ONCE key alive after the ACK, dead %d ms on",
			owner, USE_ONCE_LATE_MS);
}

/*
 * Many RDMA WRITEs back to back, each with NOTIFY_ME and its own token,
 * into slices of one MR: every notification arrives, SUCCESS, each token
 * once; every ACK arrives in order; every slice holds its data.
 */
void pipeline(int owner)
{
	struct local l[PIPE_OPS];
	uint64_t cookie;
	struct region r;
	struct pair p;
	struct rx rx;
	int i, got, again = 0;
	long long start;
	long n;

	pair_start(&p, owner);
	if (p.owner) {
		region_init(&r, 0, PIPE_OPS * PAGE, msg_seed(node, 0));
		cookie = owner_map(&p, &r, 0, 0);
		for (i = 0; i < PIPE_OPS; i++)
			expect_kind(&p, K_ACK, i, &rx);
		for (i = 0; i < PIPE_OPS; i++)
			if (pattern_mismatch(r.buf + i * PAGE, PAGE,
					     msg_seed(100 + peer_node, i)) != PAGE)
				rt_fail("slice %d does not hold RDMA %d's data", i, i);
		sync_peer("checked");
		EXPECT_EQ(rds_free_mr(p.fd, cookie, 0), 0);
		region_free(&r);
		pair_end(&p);
		return;
	}
	cookie = server_cookie(&p, 0);
	start = rt_now_ms();
	for (i = 0; i < PIPE_OPS; i++) {
		local_init(&l[i], NULL, 0, PAGE);
		local_pattern(&l[i], msg_seed(100 + node, i), 0, 1);
		for (;;) {
			n = server_rdma_to(&p, &p.peer, cookie, i * PAGE, PAGE,
					   &l[i], RDS_RDMA_READWRITE |
					   RDS_RDMA_NOTIFY_ME, token_of(i), i,
					   sizeof(struct kmsg), MSG_DONTWAIT);
			if (n >= 0)
				break;
			if (errno != EAGAIN && errno != ENOBUFS) {
				rt_fail("RDMA %d: sendmsg: %s", i, rt_errname(errno));
				rt_abort();
			}
			again++;
			poll_fd(p.fd, POLLOUT, 100);
			ASSERT_TRUE(rt_now_ms() - start < RCV_TIMEOUT_MS,
				    "RDMA %d: still %s after %d ms", i,
				    rt_errname(errno), RCV_TIMEOUT_MS);
		}
		EXPECT_EQ(n, sizeof(struct kmsg));
	}
	got = collect_notes(p.fd, PIPE_OPS);
	rt_diag("%d RDMAs, %d notifications in %lld ms (%d EAGAIN/ENOBUFS)",
		PIPE_OPS, got, rt_now_ms() - start, again);
	sync_peer("checked");
	for (i = 0; i < PIPE_OPS; i++)
		free(l[i].mem);
	pair_end(&p);
}

/*
 * RDS_RDMA_SILENT WRITE without payload: the data is there when the next
 * message arrives, and no message is delivered for the RDMA itself.
 */
void silent(int owner)
{
	struct region r;
	struct local l;
	struct pair p;
	struct rx rx;
	uint64_t cookie;

	pair_start(&p, owner);
	if (p.owner) {
		region_init(&r, 555, 6000, msg_seed(node, 1));
		cookie = owner_map(&p, &r, 0, 1);
		expect_kind(&p, K_AFTER, 1, &rx);
		region_expect(&r, 100, 5000, msg_seed(100 + peer_node, 1));
		sync_peer("checked");
		EXPECT_EQ(rds_free_mr(p.fd, cookie, 0), 0);
		region_free(&r);
	} else {
		cookie = server_cookie(&p, 1);
		local_init(&l, NULL, 0, 5000);
		local_pattern(&l, msg_seed(100 + node, 1), 0, 1);
		EXPECT_EQ(EXPECT_SYS_OK(server_rdma_to(&p, &p.peer, cookie, 100,
						       5000, &l,
						       RDS_RDMA_READWRITE |
						       RDS_RDMA_SILENT |
						       RDS_RDMA_NOTIFY_ME,
						       token_of(1), 1, 0, 0)), 0);
		/*
		 * No SEND goes with it: the distribution completes the
		 * RDMA, and notifies, only once a later SEND completed;
		 * and a process that closes the socket before that hangs
		 * in its exit for good.  So the next message goes first.
		 */
		send_kind(&p, &p.peer, K_AFTER, 1, NULL, 0);
		EXPECT_STATUS(expect_note(p.fd, token_of(1)), RDS_RDMA_SUCCESS);
		sync_peer("checked");
		free(l.mem);
	}
	pair_end(&p);
}
