// SPDX-License-Identifier: GPL-2.0
/*
 * rds_rdma_atomic.c - rds_rdma's cases of remote atomics.
 */
#include "rds_rdma.h"

/* ----------------------------------------------------- remote atomics */

/*
 * The cases below need our module on the node that sends the atomic: the
 * distribution posts the masked verbs for every form, and rxe has none.
 * Its MRs grant no remote atomic access either, so an atomic aimed at
 * them must fail (atomic_forms checks that it fails cleanly).
 */
#define ATOMIC_CLIENTS	4	/* processes per node in atomic_counter */
#define ATOMIC_ADDS	100	/* fetch-and-adds of each */
#define LOCK_CLIENTS	3	/* processes in atomic_lock */
#define LOCK_ROUNDS	15	/* critical sections of each */
#define MIXED_OPS	32	/* WRITE + FADD pairs in atomic_mixed */
#define POISON		0xdeadbeefdeadbeefULL

static void atomic_needs_ours(int k)
{
	needs_ours(k, "its atomics are masked verbs, which rxe lacks");
}

/* One atomic: its form and operands. */
struct atomic_req {
	int type;		/* RDS_CMSG_*ATOMIC_* */
	uint64_t a;		/* FADD: add; CSWP: compare */
	uint64_t b;		/* CSWP: swap */
	uint64_t m1, m2;	/* masked: compare (no-carry) mask, swap mask */
};

static void atomic_fill(struct rds_atomic_args *args,
			const struct atomic_req *q, uint64_t cookie,
			uint64_t off, uint64_t *result, uint64_t flags,
			uint64_t token)
{
	memset(args, 0, sizeof(*args));
	args->cookie = cookie;
	args->local_addr = (uintptr_t)result;
	args->remote_addr = off;
	args->flags = flags;
	args->user_token = token;
	switch (q->type) {
	case RDS_CMSG_ATOMIC_FADD:
		args->fadd.add = q->a;
		break;
	case RDS_CMSG_MASKED_ATOMIC_FADD:
		args->m_fadd.add = q->a;
		args->m_fadd.nocarry_mask = q->m1;
		break;
	case RDS_CMSG_ATOMIC_CSWP:
		args->cswp.compare = q->a;
		args->cswp.swap = q->b;
		break;
	default:
		args->m_cswp.compare = q->a;
		args->m_cswp.swap = q->b;
		args->m_cswp.compare_mask = q->m1;
		args->m_cswp.swap_mask = q->m2;
		break;
	}
}

/*
 * sendmsg() of atomic q on the peer's cookie at off, the prior value into
 * *result, with ACK seq of ack_len bytes (0: none) to @to; errno kept.
 */
static long atomic_send(int fd, const void *to,
			const struct atomic_req *q, uint64_t cookie,
			uint64_t off, uint64_t *result, uint64_t flags,
			uint64_t token, uint32_t seq, size_t ack_len)
{
	struct kmsg m = { K_ACK, seq, { 0 } };
	struct rds_atomic_args args;
	struct cm cm = { q->type, &args, sizeof(args) };

	atomic_fill(&args, q, cookie, off, result, flags, token);
	fill_pattern(m.pattern, sizeof(m.pattern), msg_seed(node, K_ACK * 1000 + seq));
	return send_cm(fd, to, &m, ack_len, &cm, 1, 0);
}

/*
 * One atomic with NOTIFY_ME that must succeed, its ACK seq to the peer's
 * port 0 (ack 0: SILENT, no message); the prior value it returned.
 */
static uint64_t atomic_sync(int fd, const struct atomic_req *q,
			    uint64_t cookie, uint64_t off, uint32_t seq,
			    int ack)
{
	struct sockaddr_in to = peer_port(0);
	uint64_t result = POISON;
	int status;

	if (EXPECT_SYS_OK(atomic_send(fd, &to, q, cookie, off, &result,
				      RDS_RDMA_NOTIFY_ME |
				      (ack ? 0 : RDS_RDMA_SILENT),
				      token_of(seq), seq,
				      ack ? sizeof(struct kmsg) : 0)) < 0)
		rt_abort();
	status = expect_note(fd, token_of(seq));
	ASSERT_TRUE(status == RDS_RDMA_SUCCESS, "atomic %u: status %d (%s)",
		    seq, status, status_name(status));
	return result;
}

/* The 8-byte word at off of the MR. */
static uint64_t word_at(const struct region *r, size_t off)
{
	uint64_t v;

	memcpy(&v, r->buf + off, sizeof(v));
	return v;
}

static void word_set(struct region *r, size_t off, uint64_t v)
{
	memcpy(r->buf + off, &v, sizeof(v));
	memcpy(r->before, r->map, r->map_len);
}

/*
 * Each plain form once, on a word of an MR that starts 24 bytes into its
 * page (so the cookie's offset counts), with the ACK message: fetch-and-
 * add, one that wraps around, compare-and-swap that swaps and one that
 * does not.  Each returns the prior value; only the word changes, and
 * every ACK arrives.  Aimed at the distribution's MR, an atomic fails
 * with REMOTE_ERROR and its ACK never arrives.
 */
void atomic_forms(int owner)
{
	const uint64_t v = 0x0123456789abcdefULL ^ (uint64_t)this_case() << 40;
	const uint64_t w = 0xfeedface00c0ffeeULL;
	const struct atomic_req q[] = {
		{ .type = RDS_CMSG_ATOMIC_FADD, .a = 0x100000001ULL },
		{ .type = RDS_CMSG_ATOMIC_FADD, .a = ~0ULL },	/* - 1 */
		{ .type = RDS_CMSG_ATOMIC_CSWP, .a = v + 0x100000000ULL, .b = w },
		{ .type = RDS_CMSG_ATOMIC_CSWP, .a = v, .b = 7 },	/* no swap */
	};
	const uint64_t prior[] = { v, v + 0x100000001ULL, v + 0x100000000ULL, w };
	struct region r;
	struct pair p;
	struct rx rx;
	uint64_t cookie;
	unsigned int i;
	int status;

	atomic_needs_ours(3 - owner);
	pair_start(&p, owner);
	if (distro(owner)) {
		if (p.owner) {
			owner_of_failure(&p, 0, 0);
		} else {
			uint64_t result = POISON;
			long sent;

			cookie = server_cookie_ack(&p);
			sent = atomic_send(p.fd, &p.peer, &q[0], cookie, 8,
					   &result, RDS_RDMA_NOTIFY_ME,
					   token_of(1), 1, sizeof(struct kmsg));
			status = fail_server_after(&p, EXPECT_SYS_OK(sent), 1, 1);
			EXPECT_STATUS(status, RDS_RDMA_REMOTE_ERROR);
			EXPECT_EQ(result, POISON);
		}
		pair_end(&p);
		return;
	}
	if (p.owner) {
		region_init(&r, 24, 256, msg_seed(node, 1));
		word_set(&r, 8, v);
		cookie = owner_map(&p, &r, 0, 1);
		for (i = 0; i < ARRAY_SIZE(q); i++)
			expect_kind(&p, K_ACK, 2 + i, &rx);
		sync_peer("done");
		EXPECT_EQ(word_at(&r, 8), w);
		region_rest_unchanged(&r, 8, 8);
		EXPECT_EQ(rds_free_mr(p.fd, cookie, 0), 0);
		region_free(&r);
	} else {
		cookie = server_cookie(&p, 1);
		for (i = 0; i < ARRAY_SIZE(q); i++)
			EXPECT_EQ(atomic_sync(p.fd, &q[i], cookie, 8, 2 + i, 1),
				  prior[i]);
		sync_peer("done");
	}
	pair_end(&p);
}

/*
 * What the kernel refuses before anything is sent, each with the
 * distribution's errno where it has one: a result buffer that is
 * misaligned (EFAULT, as the distribution), not mapped or read-only
 * (EFAULT); a misaligned remote word, a short control message, two
 * atomics or an atomic with an RDMA in one message, an unknown flag
 * (EINVAL).  An atomic to this host is accepted and runs on local
 * delivery: with a key that names no MR it ends REMOTE_ERROR, writing
 * nothing.  The masked forms on a
 * device without masked atomics (rxe): EOPNOTSUPP.  The distribution
 * takes unknown flags, an atomic with an RDMA and masked atomics on rxe,
 * which then fail on the wire: the case runs on our module only.
 */
void test_atomic_errors(void)
{
	const struct atomic_req fadd = { .type = RDS_CMSG_ATOMIC_FADD, .a = 1 };
	const struct atomic_req mfadd = {
		.type = RDS_CMSG_MASKED_ATOMIC_FADD, .a = 1,
	};
	const struct atomic_req mcswp = {
		.type = RDS_CMSG_MASKED_ATOMIC_CSWP, .b = 1, .m1 = ~0ULL, .m2 = ~0ULL,
	};
	const uint64_t cookie = 256ULL << 32 | 0x77;	/* never sent */
	struct sockaddr_in to = peer_port(0), self;
	struct rds_atomic_args args[2];
	struct rds_rdma_args rargs;
	uint64_t res[2] = { POISON, POISON }, *gone, *ro;
	struct local l;
	struct cm cm[2];
	int fd;

	if (distro(node))
		rt_skip("distribution on node %d: other errnos, see the comment above",
			node);
	fd = rds_bound(0, NULL);
	sin_set(&self, addr_self, case_port(1));
	EXPECT_SYS_ERR(atomic_send(fd, &to, &fadd, cookie, 0,
				   (uint64_t *)((char *)res + 4), 0, 1, 1, 0),
		       EFAULT);
	gone = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(gone != MAP_FAILED, "mmap: %s", rt_errname(errno));
	munmap(gone, PAGE);
	EXPECT_SYS_ERR(atomic_send(fd, &to, &fadd, cookie, 0, gone, 0, 1, 1, 0),
		       EFAULT);
	ro = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(ro != MAP_FAILED, "mmap: %s", rt_errname(errno));
	EXPECT_SYS_ERR(atomic_send(fd, &to, &fadd, cookie, 0, ro, 0, 1, 1, 0),
		       EFAULT);
	munmap(ro, PAGE);
	EXPECT_SYS_ERR(atomic_send(fd, &to, &fadd, cookie, 4, res, 0, 1, 1, 0),
		       EINVAL);
	EXPECT_SYS_ERR(atomic_send(fd, &to, &fadd, cookie, 0, res, 1ULL << 40,
				   1, 1, 0), EINVAL);

	atomic_fill(&args[0], &fadd, cookie, 0, &res[0], 0, 1);
	atomic_fill(&args[1], &fadd, cookie, 8, &res[1], 0, 2);
	cm[0] = (struct cm){ RDS_CMSG_ATOMIC_FADD, &args[0], sizeof(args[0]) - 8 };
	EXPECT_SYS_ERR(send_cm(fd, &to, NULL, 0, cm, 1, 0), EINVAL);
	cm[0].len = sizeof(args[0]);
	cm[1] = (struct cm){ RDS_CMSG_ATOMIC_CSWP, &args[1], sizeof(args[1]) };
	EXPECT_SYS_ERR(send_cm(fd, &to, NULL, 0, cm, 2, 0), EINVAL);
	local_init(&l, NULL, 0, 64);
	rargs = (struct rds_rdma_args){
		.cookie = cookie,
		.remote_vec = { 0, 64 },
		.local_vec_addr = (uintptr_t)l.iov,
		.nr_local = 1,
	};
	cm[1] = (struct cm){ RDS_CMSG_RDMA_ARGS, &rargs, sizeof(rargs) };
	EXPECT_SYS_ERR(send_cm(fd, &to, NULL, 0, cm, 2, 0), EINVAL);
	free(l.mem);
	/* To this host: local delivery runs it, and the key names no MR. */
	EXPECT_SYS_OK(atomic_send(fd, &self, &fadd, cookie, 0, res,
				  RDS_RDMA_NOTIFY_ME, token_of(1), 1, 0));
	EXPECT_STATUS(expect_note(fd, token_of(1)), RDS_RDMA_REMOTE_ERROR);

	if (one_host()) {
		rt_diag("one host: the masked forms run on local delivery");
	} else if (!access("/sys/class/infiniband/rxe0", F_OK)) {
		EXPECT_SYS_ERR(atomic_send(fd, &to, &mfadd, cookie, 0, res, 0,
					   1, 1, 0), EOPNOTSUPP);
		EXPECT_SYS_ERR(atomic_send(fd, &to, &mcswp, cookie, 0, res, 0,
					   1, 1, 0), EOPNOTSUPP);
	} else {
		rt_diag("not rxe0: the masked forms were not tried");
	}
	EXPECT_EQ(res[0], POISON);
	EXPECT_EQ(res[1], POISON);
	close(fd);
}

/*
 * Run fn(k) in n child processes at once; each must exit 0.  The children
 * share *shared with the caller.
 */
static void run_clients(int n, void (*fn)(int k, void *arg), void *arg)
{
	pid_t pid[ATOMIC_CLIENTS];
	int k, st;

	ASSERT_TRUE(n <= ATOMIC_CLIENTS, "%d clients", n);
	for (k = 0; k < n; k++) {
		pid[k] = fork();
		ASSERT_TRUE(pid[k] >= 0, "fork: %s", rt_errname(errno));
		if (pid[k] == 0) {
			fn(k, arg);
			fflush(stdout);
			_exit(rt_failures ? RT_EXIT_FAIL : 0);
		}
	}
	for (k = 0; k < n; k++) {
		ASSERT_EQ(waitpid(pid[k], &st, 0), pid[k]);
		EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st),
			    "client %d: status %#x", k, st);
	}
}

static void *shared_map(size_t len)
{
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	ASSERT_TRUE(m != MAP_FAILED, "mmap: %s", rt_errname(errno));
	memset(m, 0, len);
	return m;
}

/* The counter every client of this node adds to, and what they got. */
struct counter_run {
	uint64_t cookie;
	uint64_t prior[ATOMIC_CLIENTS * ATOMIC_ADDS];
};

static void counter_client(int k, void *arg)
{
	const struct atomic_req one = { .type = RDS_CMSG_ATOMIC_FADD, .a = 1 };
	struct counter_run *run = arg;
	int fd = rds_bound(1 + k, NULL), i;

	for (i = 0; i < ATOMIC_ADDS; i++)
		run->prior[k * ATOMIC_ADDS + i] =
			atomic_sync(fd, &one, run->cookie, 0,
				    1000 * (k + 1) + i, 0);
	close(fd);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Each node owns a counter and runs ATOMIC_CLIENTS processes, each with
 * its own socket, that add 1 to the other node's counter ATOMIC_ADDS
 * times (silent, no ACK): both nodes at once, on one connection.  Every
 * prior value from base to base + total - 1 comes back exactly once, and
 * the counter ends at base + total.
 */
void test_atomic_counter(void)
{
	const uint64_t base = 0xfffffffffffff000ULL;	/* carries into bit 64 */
	const int total = ATOMIC_CLIENTS * ATOMIC_ADDS;
	struct counter_run *run;
	uint64_t cookie = 0;
	struct region r;
	struct pair p;
	int i;

	atomic_needs_ours(1);
	atomic_needs_ours(2);
	pair_start(&p, 1);
	run = shared_map(sizeof(*run));
	region_init(&r, 0, 64, msg_seed(node, 1));
	word_set(&r, 0, base);
	if (node == 1) {
		cookie = owner_map(&p, &r, 0, 1);
		run->cookie = server_cookie(&p, 1);
	} else {
		run->cookie = server_cookie(&p, 1);
		cookie = owner_map(&p, &r, 0, 1);
	}
	run_clients(ATOMIC_CLIENTS, counter_client, run);
	qsort(run->prior, total, sizeof(run->prior[0]), cmp_u64);
	for (i = 0; i < total; i++)
		if (!EXPECT_TRUE(run->prior[i] == base + i,
				 "prior values: #%d is %#llx, not %#llx", i,
				 (unsigned long long)run->prior[i],
				 (unsigned long long)(base + i)))
			break;
	sync_peer("done");
	EXPECT_EQ(word_at(&r, 0), base + total);
	region_rest_unchanged(&r, 0, 8);
	EXPECT_EQ(rds_free_mr(p.fd, cookie, 0), 0);
	region_free(&r);
	munmap(run, sizeof(*run));
	pair_end(&p);
}

/* The lock (word 0) and the count it guards (word 8) of atomic_lock. */
struct lock_run {
	struct pair p;
	uint64_t cookie;
	int spins;
};

static void lock_client(int k, void *arg)
{
	struct lock_run *run = arg;
	const uint64_t id = k + 1;
	const struct atomic_req take = { .type = RDS_CMSG_ATOMIC_CSWP, .b = id };
	const struct atomic_req give = { .type = RDS_CMSG_ATOMIC_CSWP, .a = id };
	struct pair c = run->p;
	uint32_t seq = 10000 * (k + 1);
	uint64_t got, count;
	struct local l;
	int i, tries;

	c.fd = rds_bound(1 + k, NULL);
	local_init(&l, NULL, 0, sizeof(count));
	for (i = 0; i < LOCK_ROUNDS; i++) {
		for (tries = 0;; tries++) {
			got = atomic_sync(c.fd, &take, run->cookie, 0, seq++, 0);
			if (!got)
				break;
			ASSERT_TRUE(got <= LOCK_CLIENTS && got != id,
				    "the lock holds %#llx", (unsigned long long)got);
			ASSERT_TRUE(tries < 5000, "lock not taken in %d tries",
				    tries);
		}
		__atomic_add_fetch(&run->spins, tries, __ATOMIC_RELAXED);
		/* count += 1, by an RDMA READ and an RDMA WRITE */
		ASSERT_SYS_OK(server_rdma_to(&c, &c.peer, run->cookie, 8, 8, &l,
					     RDS_RDMA_NOTIFY_ME | RDS_RDMA_SILENT,
					     token_of(seq), seq, 0, 0));
		EXPECT_STATUS(expect_note(c.fd, token_of(seq)), RDS_RDMA_SUCCESS);
		seq++;
		memcpy(&count, (void *)(uintptr_t)l.iov[0].addr, sizeof(count));
		count++;
		memcpy((void *)(uintptr_t)l.iov[0].addr, &count, sizeof(count));
		ASSERT_SYS_OK(server_rdma_to(&c, &c.peer, run->cookie, 8, 8, &l,
					     RDS_RDMA_NOTIFY_ME | RDS_RDMA_SILENT |
					     RDS_RDMA_READWRITE,
					     token_of(seq), seq, 0, 0));
		EXPECT_STATUS(expect_note(c.fd, token_of(seq)), RDS_RDMA_SUCCESS);
		seq++;
		got = atomic_sync(c.fd, &give, run->cookie, 0, seq++, 0);
		ASSERT_TRUE(got == id, "releasing, the lock held %#llx, not %#llx",
			    (unsigned long long)got, (unsigned long long)id);
	}
	free(l.mem);
	close(c.fd);
}

/*
 * Compare-and-swap as a lock: LOCK_CLIENTS processes of the initiator
 * take the lock in the owner's MR, add 1 to the count beside it with an
 * RDMA READ and an RDMA WRITE, and give the lock back, LOCK_ROUNDS times
 * each.  No update is lost: the count ends at LOCK_CLIENTS * LOCK_ROUNDS
 * and the lock free.
 */
void atomic_lock(int owner)
{
	struct lock_run *run;
	struct region r;

	atomic_needs_ours(1);
	atomic_needs_ours(2);
	run = shared_map(sizeof(*run));
	pair_start(&run->p, owner);
	if (run->p.owner) {
		region_init(&r, 0, 64, msg_seed(node, 1));
		word_set(&r, 0, 0);
		word_set(&r, 8, 0);
		run->cookie = owner_map(&run->p, &r, 0, 1);
		sync_peer("done");
		EXPECT_EQ(word_at(&r, 0), 0);
		EXPECT_EQ(word_at(&r, 8), LOCK_CLIENTS * LOCK_ROUNDS);
		region_rest_unchanged(&r, 0, 16);
		EXPECT_EQ(rds_free_mr(run->p.fd, run->cookie, 0), 0);
		region_free(&r);
	} else {
		run->cookie = server_cookie(&run->p, 1);
		run_clients(LOCK_CLIENTS, lock_client, run);
		rt_diag("%d critical sections, %d failed tries for the lock",
			LOCK_CLIENTS * LOCK_ROUNDS, run->spins);
		sync_peer("done");
	}
	pair_end(&run->p);
	munmap(run, sizeof(*run));
}

/*
 * Atomics and RDMA WRITEs on one MR, all in flight at once: MIXED_OPS
 * WRITEs of 96 bytes each to their own slice, and as many fetch-and-adds
 * on word 0 between them.  All succeed; the adds ran in order (one
 * connection), so add i saw base + i; the slices hold what was written.
 */
void atomic_mixed(int owner)
{
	const struct atomic_req one = { .type = RDS_CMSG_ATOMIC_FADD, .a = 1 };
	const uint64_t base = 0x5555000000000000ULL;
	const size_t slice = 96, first = 64;
	uint64_t *res, cookie;
	struct local l[MIXED_OPS];
	struct region r;
	struct pair p;
	int i, got;

	atomic_needs_ours(1);
	atomic_needs_ours(2);
	pair_start(&p, owner);
	if (p.owner) {
		region_init(&r, 0, PAGE, msg_seed(node, 1));
		word_set(&r, 0, base);
		cookie = owner_map(&p, &r, 0, 1);
		sync_peer("done");
		EXPECT_EQ(word_at(&r, 0), base + MIXED_OPS);
		for (i = 0; i < MIXED_OPS; i++)
			EXPECT_TRUE(pattern_mismatch(r.buf + first + i * slice, slice,
						     msg_seed(100 + peer_node, i)) == slice,
				    "slice %d does not hold WRITE %d's data", i, i);
		EXPECT_EQ(memcmp(r.buf + 8, r.before + 8, first - 8), 0);
		region_rest_unchanged(&r, 0, first + MIXED_OPS * slice);
		EXPECT_EQ(rds_free_mr(p.fd, cookie, 0), 0);
		region_free(&r);
		pair_end(&p);
		return;
	}
	cookie = server_cookie(&p, 1);
	res = xmalloc(MIXED_OPS * sizeof(*res));
	for (i = 0; i < MIXED_OPS; i++) {
		res[i] = POISON;
		local_init(&l[i], NULL, 0, slice);
		local_pattern(&l[i], msg_seed(100 + node, i), 0, 1);
		ASSERT_SYS_OK(server_rdma_to(&p, &p.peer, cookie,
					     first + i * slice, slice, &l[i],
					     RDS_RDMA_READWRITE | RDS_RDMA_NOTIFY_ME |
					     RDS_RDMA_SILENT, token_of(2 * i),
					     2 * i, 0, 0));
		ASSERT_SYS_OK(atomic_send(p.fd, &p.peer, &one, cookie, 0, &res[i],
					  RDS_RDMA_NOTIFY_ME | RDS_RDMA_SILENT,
					  token_of(2 * i + 1), 2 * i + 1, 0));
	}
	got = collect_notes(p.fd, 2 * MIXED_OPS);
	EXPECT_EQ(got, 2 * MIXED_OPS);
	for (i = 0; i < MIXED_OPS; i++)
		EXPECT_TRUE(res[i] == base + i, "add %d saw %#llx, not %#llx", i,
			    (unsigned long long)res[i],
			    (unsigned long long)(base + i));
	sync_peer("done");
	for (i = 0; i < MIXED_OPS; i++)
		free(l[i].mem);
	free(res);
	pair_end(&p);
}

/*
 * The owner frees its MR with RDS_RDMA_INVALIDATE while the initiator
 * holds the cookie: the initiator's atomic on it ends as REMOTE_ERROR,
 * its ACK never arrives and the result buffer is untouched; then RDMA
 * works again.
 */
void atomic_released(int owner)
{
	const struct atomic_req q = { .type = RDS_CMSG_ATOMIC_CSWP, .b = 1 };
	struct rdma_op op = {
		.write = 1, .start = 0, .mr_len = 4096, .off = 8, .len = 64,
	};
	uint64_t cookie, result = POISON;
	struct region r;
	struct pair p;
	int status;
	long sent;

	atomic_needs_ours(3 - owner);
	pair_start(&p, owner);
	if (p.owner) {
		region_init(&r, 0, 4096, msg_seed(node, 1));
		owner_map_invalidate(&p, &r, 1);
		fail_owner(&p, &r, NULL, 0, 0, 1, 0);
		region_free(&r);
	} else {
		cookie = server_cookie_gotit(&p, 1);
		sent = atomic_send(p.fd, &p.peer, &q, cookie, 0, &result,
				   RDS_RDMA_NOTIFY_ME, token_of(1), 1,
				   sizeof(struct kmsg));
		status = fail_server_after(&p, EXPECT_SYS_OK(sent), 1, 1);
		EXPECT_STATUS(status, RDS_RDMA_REMOTE_ERROR);
		EXPECT_EQ(result, POISON);
	}
	rdma_cycle(&p, &op, 2);
	pair_end(&p);
}
