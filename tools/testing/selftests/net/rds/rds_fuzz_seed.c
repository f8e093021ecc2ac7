// SPDX-License-Identifier: GPL-2.0
/*
 * rds_fuzz_seed.c - rds_fuzz's seeds: one seed's run on one node or two,
 * its watchdog, its diagnostics, the check that RDS still works after
 * it, and the seed cases.
 */
#include "rds_fuzz.h"

/* --------------------------------------------------------------- seeds */

struct in_addr fz_self;		/* RDS_ADDR, or 127.0.0.1 */
struct in6_addr fz_self6, fz_peer6, fz_ll6;	/* RDS_ADDR6 ... */
int fz_have6;			/* RDS_ADDR6 is set */
unsigned int fz_ifindex;	/* RDS_IFINDEX */
int fz_two;			/* RDS_NODES=2: fuzz the peer */
unsigned long fz_max_ops = 30000;
unsigned int fz_budget_s = 60;
uint64_t fz_given_seed;

static void *fz_map(size_t len, int prot, int shared)
{
	void *p = mmap(NULL, len, prot, (shared ? MAP_SHARED : MAP_PRIVATE) |
		       MAP_ANONYMOUS, -1, 0);

	ASSERT_TRUE(p != MAP_FAILED, "mmap %zu: %s", len, rt_errname(errno));
	return p;
}

/* The state of a seed: memory, sockets bound to slot ports. */
struct fz *fz_new(uint64_t seed)
{
	static struct fz fz;
	struct fz *f = &fz;
	size_t i;
	void *hole;

	memset(f, 0, sizeof(*f));
	f->seed = seed;
	f->two = fz_two;
	f->node = fz_two ? node : 0;
	f->max_ops = fz_max_ops;
	f->port0 = FZ_PORT + 32 * this_case();
	f->self = fz_self;
	f->self6 = fz_self6;
	f->peer6 = fz_two ? fz_peer6 : fz_self6;
	f->ll6 = fz_ll6;
	/*
	 * Not on the distribution's modules without -K: an RDMA_MAP to one of
	 * this node's own IPv6 addresses (its link-local one from a global
	 * one) goes over an RDMA connection to itself, and there its
	 * registration waits uninterruptibly for ever (fz_known_bugs; seen
	 * in peer_seed_1 of distro,distro on 6.1, 2026-11-26).
	 */
	f->have6 = fz_have6 && (fz_mods != FZ_D || fz_known_bugs);
	f->ifindex = fz_ifindex;
	if (fz_two)
		f->peer = addr_peer;
	inet_pton(AF_INET, FZ_ABSENT, &f->absent);
	f->sh = fz_map(sizeof(*f->sh), PROT_READ | PROT_WRITE, 1);
	memset(f->sh, 0, sizeof(*f->sh));
	f->arena = fz_map(FZ_ARENA + 4096, PROT_READ | PROT_WRITE, 0);
	ASSERT_SYS_OK(mprotect(f->arena + FZ_ARENA, 4096, PROT_NONE));
	f->sbuf = fz_map(FZ_SBUF, PROT_READ | PROT_WRITE, 0);
	f->rbuf = fz_map(FZ_RBUF + 8192, PROT_READ | PROT_WRITE, 0);
	f->iov = fz_map(FZ_MAXIOV * sizeof(*f->iov), PROT_READ | PROT_WRITE, 0);
	f->ro = fz_map(2 * 4096, PROT_READ, 0);
	f->none = fz_map(4096, PROT_NONE, 0);
	hole = fz_map(4096, PROT_READ, 0);
	munmap(hole, 4096);
	f->hole = (uintptr_t)hole;
	for (i = 0; i < FZ_ARENA; i += 64)
		f->arena[i] = (unsigned char)(i >> 6);
	for (i = 0; i < FZ_SBUF; i += 64)
		f->sbuf[i] = (unsigned char)(i >> 6);

	/* The sequence of node 2 differs from node 1's for the same seed. */
	fuzz_seed_state(seed + ((uint64_t)f->node << 48));
	for (i = 0; i < FZ_SOCKS; i++) {
		fz_socket(f, i);
		fz_sock_setup(f, i, 0);
	}
	return f;
}

/*
 * The stall watchdog: an op still running after FZ_STALL_MS gets a
 * SIGUSR1 (no SA_RESTART), which ends an interruptible wait in the
 * kernel, as a kill would, and the watcher prints where it waits.  With
 * our modules an op that takes FZ_HANG_MS fails (close() waits,
 * uninterruptibly, until the messages that carry the socket's keys are
 * acknowledged: seconds across a reconnection); the distribution's
 * close() can wait without end for a message its transport keeps mapped
 * (rds_send_drop_to() in rds_message_wait(), seen with RDMA to its own
 * address), so there a stall is only counted (stalls=).
 */
static timer_t fz_timer;
static int fz_timer_ok;

static void fz_on_stall(int sig)
{
	(void)sig;
	fz_stalled = 1;
}

static void fz_watchdog_init(void)
{
	struct sigaction sa = { .sa_handler = fz_on_stall };
	struct sigevent ev = {
		.sigev_notify = SIGEV_SIGNAL,
		.sigev_signo = SIGUSR1,
	};

	sigemptyset(&sa.sa_mask);
	fz_timer_ok = !sigaction(SIGUSR1, &sa, NULL) &&
		      !timer_create(CLOCK_MONOTONIC, &ev, &fz_timer);
}

static void fz_watchdog(int on)
{
	struct itimerspec its = {
		.it_value = { FZ_STALL_MS / 1000, (FZ_STALL_MS % 1000) * 1000000L },
	};

	if (!fz_timer_ok)
		return;
	if (!on)
		memset(&its, 0, sizeof(its));
	timer_settime(fz_timer, 0, &its, NULL);
}

/*
 * The watcher: a process that, when an op of @parent runs past
 * FZ_STALL_MS, prints where in the kernel it waits (/proc/PID/stack),
 * which the op itself cannot tell if the wait is uninterruptible.
 */
static void fz_watcher(struct fz *f, pid_t parent)
{
	char path[64], line[256];
	unsigned long dumped = 0;
	long long start;
	FILE *in;
	int fd;

	/* The sockets are the fuzzer's: a close there must release them. */
	for (fd = STDERR_FILENO + 1; fd < 1024; fd++)
		close(fd);
	for (;;) {
		rt_sleep_ms(1000);
		if (getppid() != parent)
			_exit(0);
		start = f->sh->op_start;
		if (!start || rt_now_ms() - start < FZ_STALL_MS ||
		    dumped == f->sh->op_no)
			continue;
		dumped = f->sh->op_no;
		dprintf(STDOUT_FILENO, "# seed %llu op %lu: blocked %lld ms; the kernel stack:\n",
			(unsigned long long)f->seed, dumped, rt_now_ms() - start);
		snprintf(path, sizeof(path), "/proc/%d/stack", parent);
		in = fopen(path, "r");
		while (in && fgets(line, sizeof(line), in))
			dprintf(STDOUT_FILENO, "#   %s", line);
		if (in)
			fclose(in);
	}
}

static void fz_run(struct fz *f)
{
	long long t0, ms;
	pid_t parent = getpid(), watcher;

	fz_watchdog_init();
	fflush(stdout);
	watcher = fork();
	if (!watcher)
		fz_watcher(f, parent);
	f->deadline = rt_now_ms() + fz_budget_s * 1000LL;
	for (f->op = 1; !f->max_ops || f->op <= f->max_ops; f->op++) {
		t0 = rt_now_ms();
		if (t0 >= f->deadline)
			break;
		fz_stalled = 0;
		snprintf(f->stall_desc, sizeof(f->stall_desc), "?");
		f->stall_kind = -1;
		f->sh->op_no = f->op;
		f->sh->op_start = t0;
		fz_watchdog(1);
		fz_op(f, 0);
		fz_watchdog(0);
		f->sh->op_start = 0;
		ms = rt_now_ms() - t0;
		if (ms > f->sh->st.slow_ms) {
			f->sh->st.slow_ms = ms;
			f->sh->st.slow_op = f->op;
		}
		f->sh->st.ops = f->op;
		if (!fz_stalled)
			continue;
		f->sh->st.stalls++;
		/*
		 * With our modules an op that blocked FZ_HANG_MS fails; a
		 * shorter stall is reported (the watcher printed where it
		 * waited), as is one of the distribution's.
		 */
		if (fz_mods != FZ_D && ms >= FZ_HANG_MS)
			rt_fail("seed %llu op %lu: blocked %lld ms: %s; replay with -n %lu",
				(unsigned long long)f->seed, f->op, ms,
				f->stall_desc, f->op);
		else
			rt_diag("seed %llu op %lu: stalled, %lld ms: %s",
				(unsigned long long)f->seed, f->op, ms,
				f->stall_desc);
	}
	f->seq = fuzz_state;
	if (watcher > 0) {
		kill(watcher, SIGKILL);
		waitpid(watcher, NULL, 0);
	}
}

/* Close the seed's sockets, with whatever they still have in flight. */
static void fz_close_all(struct fz *f)
{
	int i;

	for (i = 0; i < FZ_SOCKS; i++) {
		fz_desc(f, "close(s%d) at the end", i);
		FZ_CALL(f, FK_CLOSE, close(f->fd[i]));
		f->fd[i] = -1;
	}
}

/* The seed's diag line; its format is in the header comment. */
static void fz_diag(struct fz *f, long long ms)
{
	const struct fz_stats *st = &f->sh->st;
	char kinds[1536], cms[128], notes[160];
	size_t kl = 0, cl = 0, nl = 0;
	unsigned int paths = 0, cm = 0;
	unsigned long total = 0;
	int k, e;

	kinds[0] = 0;
	cms[0] = 0;
	notes[0] = 0;
	for (k = 0; k < FK_NR; k++) {
		for (e = 0; e < FZ_ERRMAX; e++)
			paths += st->seen[k][e];
		kl += snprintf(kinds + kl, sizeof(kinds) - kl, "%s%s:%lu",
			       k ? "," : "", fz_kind_names[k], st->kind_calls[k]);
		if (kl >= sizeof(kinds))
			kl = sizeof(kinds) - 1;
	}
	for (k = 0; k < FZ_CM_NR; k++) {
		if (!(st->cmsg_ok & (1U << k)))
			continue;
		cm++;
		cl += snprintf(cms + cl, sizeof(cms) - cl, "%s%s", cl ? "," : "",
			       fz_cm_names[k]);
	}
	for (k = 0; k < FZ_NOTE_NR; k++) {
		if (!st->notes[k])
			continue;
		total += st->notes[k];
		nl += snprintf(notes + nl, sizeof(notes) - nl, "%s%d:%lu",
			       nl ? "," : "", k, st->notes[k]);
	}
	printf("# fuzz_diag seed=%llu node=%d modules=%s ops=%lu calls=%lu",
	       (unsigned long long)f->seed, f->node, fz_mods_name, st->ops,
	       st->calls);
	printf(" ms=%lld unexpected=%lu paths=%u cmsg_ok=%u cmsg_ok_kinds=%s",
	       ms, st->bad, paths, cm, cm ? cms : "-");
	printf(" notes=%lu note_status=%s dest_rx=%lu forks=%lu seq=%016llx",
	       total, total ? notes : "-", st->dest_rx, st->forks,
	       (unsigned long long)f->seq);
	printf(" kinds=%s stalls=%lu slow_op=%lu slow_ms=%lld\n", kinds,
	       st->stalls, st->slow_op, st->slow_ms);
	fflush(stdout);
}

/* One node: fuzz this node's sockets, an absent peer and bad addresses. */
static void fz_case_one(uint64_t seed)
{
	struct fz *f = fz_new(seed);
	long long start = rt_now_ms(), ms;

	fz_run(f);
	ms = rt_now_ms() - start;
	fz_close_all(f);
	fz_diag(f, ms);
}

/*
 * A region the peer may always aim at: 256 KiB of the arena, registered
 * with RDS_GET_MR or, where that needs a connection (the distribution),
 * with RDS_CMSG_RDMA_MAP on a message to the peer.  Its cookie and
 * whether it takes atomics go to the peer over the control connection;
 * the peer's come back into the stable slot.  The socket stays open
 * until the seed ends.
 */
static int fz_stable(struct fz *f)
{
	struct rds_get_mr_args a = {
		.vec = { (uintptr_t)f->arena + (1 << 20), 256 << 10 },
	};
	struct fz_cookie *st = &f->sh->ck[FZ_CK_STABLE];
	long long until = rt_now_ms() + 20000;
	struct sockaddr_in sin;
	union {
		unsigned char buf[CMSG_SPACE(sizeof(a))];
		struct cmsghdr align;
	} ctl;
	struct msghdr mh = { .msg_name = &sin, .msg_namelen = sizeof(sin) };
	struct cmsghdr *c;
	uint64_t cookie = 0;
	long got[2], ret;
	int fd;

	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	ASSERT_TRUE(fd >= 0, "socket: %s", rt_errname(errno));
	sin_set(&sin, f->self, f->port0 + FZ_SOCKS);
	ASSERT_SYS_OK(bind(fd, (struct sockaddr *)&sin, sizeof(sin)));
	sync_peer("stable bound");

	a.cookie_addr = (uintptr_t)&cookie;
	fz_desc(f, "setsockopt(stable, RDS_GET_MR, 256 KiB)");
	ret = FZ_CALL(f, FK_SO_GET_MR, setsockopt(fd, SOL_RDS, RDS_GET_MR, &a,
						  sizeof(a)));
	sin_set(&sin, f->peer, f->port0 + FZ_SOCKS);
	while (ret < 0 && rt_now_ms() < until) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_RDS;
		c->cmsg_type = RDS_CMSG_RDMA_MAP;
		c->cmsg_len = CMSG_LEN(sizeof(a));
		memcpy(CMSG_DATA(c), &a, sizeof(a));
		fz_desc(f, "sendmsg(stable, RDS_CMSG_RDMA_MAP 256 KiB)");
		ret = FZ_CALL(f, FK_SEND_MAP, sendmsg(fd, &mh, MSG_DONTWAIT));
		if (ret < 0)
			rt_sleep_ms(100);
	}
	if (ret < 0)
		rt_diag("node %d: no stable region for the peer: %s", node,
			rt_errname(errno));
	if (node == 1) {
		tell_peer((long)cookie);
		tell_peer(fz_mods == FZ_O);
		got[0] = hear_peer();
		got[1] = hear_peer();
	} else {
		got[0] = hear_peer();
		got[1] = hear_peer();
		tell_peer((long)cookie);
		tell_peer(fz_mods == FZ_O);
	}
	if (got[0]) {
		st->cookie = (uint64_t)got[0];
		st->len = 256 << 10;
		st->sock = -1;
		st->state = FZ_CK_LIVE;
		st->atomics = got[1];
	}
	rt_diag("node %d: stable region cookie %llx, the peer's %llx", node,
		(unsigned long long)cookie, (unsigned long long)st->cookie);
	return fd;
}

/* The nonzero counters about sending, on one line. */
static void fz_dump_counters(int fd)
{
	struct rds_info_counter *c;
	char line[2048];
	size_t n = 0;
	socklen_t len;
	unsigned int i;

	if (rds_info_read(fd, RDS_INFO_COUNTERS, (void **)&c, &len) < 0)
		return;
	line[0] = 0;
	for (i = 0; c && i < len / sizeof(*c) && n < sizeof(line) - 64; i++) {
		if (!c[i].value || (!strstr((char *)c[i].name, "send") &&
				    !strstr((char *)c[i].name, "tx") &&
				    !strstr((char *)c[i].name, "drop") &&
				    !strstr((char *)c[i].name, "conn")))
			continue;
		n += snprintf(line + n, sizeof(line) - n, " %.32s=%llu",
			      (char *)c[i].name, (unsigned long long)c[i].value);
	}
	free(c);
	rt_diag("node %d: counters:%s", node, line);
}

/* What this node's RDS says about its connections, for a failed check. */
static void fz_dump_conns(int fd, unsigned short port)
{
	struct rds_info_connection *ci;
	struct rds_info_message *mi;
	char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];
	const int tables[] = { RDS_INFO_SEND_MESSAGES, RDS_INFO_RETRANS_MESSAGES };
	socklen_t len;
	unsigned int i, t, n;

	if (rds_info_read(fd, RDS_INFO_CONNECTIONS, (void **)&ci, &len) >= 0) {
		for (i = 0; ci && i < len / sizeof(*ci); i++) {
			inet_ntop(AF_INET, &ci[i].laddr, a, sizeof(a));
			inet_ntop(AF_INET, &ci[i].faddr, b, sizeof(b));
			rt_diag("node %d: connection %s -> %s tos %u flags %#x tx %llu rx %llu",
				node, a, b, ci[i].tos, ci[i].flags,
				(unsigned long long)ci[i].next_tx_seq,
				(unsigned long long)ci[i].next_rx_seq);
		}
	}
	free(ci);
	for (t = 0; t < ARRAY_SIZE(tables); t++) {
		if (rds_info_read(fd, tables[t], (void **)&mi, &len) < 0)
			continue;
		for (i = 0, n = 0; mi && i < len / sizeof(*mi); i++)
			n += ntohs(mi[i].lport) == port;
		rt_diag("node %d: %s: %u messages, %u from port %u", node,
			t ? "RDS_INFO_RETRANS_MESSAGES" : "RDS_INFO_SEND_MESSAGES",
			(unsigned int)(len / sizeof(*mi)), n, port);
		for (i = 0; mi && i < len / sizeof(*mi) && i < 4; i++) {
			inet_ntop(AF_INET, &mi[i].laddr, a, sizeof(a));
			inet_ntop(AF_INET, &mi[i].faddr, b, sizeof(b));
			rt_diag("node %d:   seq %llu len %u %s:%u -> %s:%u flags %#x tos %u",
				node, (unsigned long long)mi[i].seq, mi[i].len, a,
				ntohs(mi[i].lport), b, ntohs(mi[i].fport),
				mi[i].flags, mi[i].tos);
		}
		free(mi);
	}
	fz_dump_counters(fd);
}

/*
 * After the fuzzing: a datagram each way on fresh sockets must arrive
 * within FZ_ALIVE_MS, or the fuzzing left the connection broken.  (The
 * other node waits CTL_TIMEOUT_MS at most for the next step: longer.)
 */
static void fz_alive(struct fz *f)
{
	struct sockaddr_in me, to, from;
	long long until;
	char buf[64], want[64];
	int fd, sent = 0, got = 0, peer_ok;
	long n;

	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	ASSERT_TRUE(fd >= 0, "socket: %s", rt_errname(errno));
	sin_set(&me, f->self, f->port0 + FZ_SOCKS + 1);
	ASSERT_SYS_OK(bind(fd, (struct sockaddr *)&me, sizeof(me)));
	sin_set(&to, f->peer, f->port0 + FZ_SOCKS + 1);
	sync_peer("alive bound");
	snprintf(buf, sizeof(buf), "fz-alive from node %d", node);
	snprintf(want, sizeof(want), "fz-alive from node %d", peer_node);
	until = rt_now_ms() + FZ_ALIVE_MS;
	while ((!sent || !got) && rt_now_ms() < until) {
		if (!sent) {
			n = sendto(fd, buf, strlen(buf) + 1, MSG_DONTWAIT,
				   (struct sockaddr *)&to, sizeof(to));
			if (n >= 0)
				sent = 1;
			else if (errno != EAGAIN && errno != ENOBUFS)
				ASSERT_TRUE(0, "sendto %s: %s", sin_str(&to),
					    rt_errname(errno));
		}
		if (!got && (poll_fd(fd, POLLIN, 100) & POLLIN)) {
			memset(buf, 0, sizeof(buf));
			n = recv_msg(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT,
				     &from, NULL);
			if (n > 0) {
				EXPECT_TRUE(!strcmp(buf, want), "got '%s', expected '%s'",
					    buf, want);
				got = 1;
			}
			snprintf(buf, sizeof(buf), "fz-alive from node %d", node);
		} else if (!sent) {
			rt_sleep_ms(100);
		}
	}
	EXPECT_TRUE(sent, "could not send to node %d in %d ms after fuzzing",
		    peer_node, FZ_ALIVE_MS);
	EXPECT_TRUE(got,
		    "nothing from node %d in %d ms after fuzzing: the connection did not survive",
		    peer_node, FZ_ALIVE_MS);
	/* Either side failing: both say what their connections look like. */
	if (!(sent && got))
		fz_dump_conns(fd, f->port0 + FZ_SOCKS + 1);
	if (node == 1) {
		tell_peer(sent && got);
		peer_ok = hear_peer();
	} else {
		peer_ok = hear_peer();
		tell_peer(sent && got);
	}
	if (sent && got && !peer_ok)
		fz_dump_conns(fd, f->port0 + FZ_SOCKS + 1);
	close(fd);
	sync_peer("alive done");
}

/* Two nodes: fuzz each other, then check that they still talk. */
static void fz_case_two(uint64_t seed)
{
	struct fz *f = fz_new(seed);
	long long start, ms;
	int stable;

	stable = fz_stable(f);
	sync_peer("start");
	start = rt_now_ms();
	fz_run(f);
	ms = rt_now_ms() - start;
	sync_peer("fuzzed");
	fz_close_all(f);
	close(stable);
	fz_alive(f);
	fz_diag(f, ms);
}

static void fz_case(uint64_t seed)
{
	if (fz_two)
		fz_case_two(seed);
	else
		fz_case_one(seed);
}

void test_seed_1(void) { fz_case(1); }
void test_seed_2(void) { fz_case(2); }
void test_seed_3(void) { fz_case(3); }
void test_seed_4(void) { fz_case(4); }
void test_seed_given(void) { fz_case(fz_given_seed); }
