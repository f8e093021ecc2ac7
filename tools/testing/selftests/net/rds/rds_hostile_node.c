// SPDX-License-Identifier: GPL-2.0
/*
 * rds_hostile_node.c - what rds_hostile's cases share besides the
 * hostile QP: the guest's kernel and modules, node 1's counters and
 * resources (the victim's checks) and the frame of every case (the
 * honest exchange, before and after).
 */
#include "rds_hostile.h"

#include <sys/mman.h>

int distro_victim(void)
{
	return !strcmp(modules_of(1), "distro");
}

/*
 * A TOS of the running case's own: k = 0 .. 7, from 16 (case 1) on,
 * above rds_remote's fresh TOS values (5 to 15).  Never 0, the TOS of
 * node 2's own RDS connection to node 1 (the honest exchange of every
 * case): a hostile QP on that TOS takes over the honest connection, and
 * each side then drops the other's.  TOS is a byte, so 30 cases at most:
 * a wrap to 0 made flood_one, case 20, flood the honest connection's TOS.
 */
uint8_t case_tos(int k)
{
	int tos = 8 + 8 * this_case() + k;

	if (tos > 255 || k < 0 || k > 7) {
		fprintf(stderr, "%s(%d) of case %d: past the TOS byte\n",
			__func__, k, this_case());
		abort();
	}
	return (uint8_t)tos;
}

/* ------------------------------------------------- node 1: the victim */

/* A counter, by our name or else by the distribution's. */
static long long counter2(int fd, const char *ours, const char *theirs)
{
	long long v = rds_counter(fd, ours);

	return v >= 0 || !theirs ? v : rds_counter(fd, theirs);
}

static long long drops(int fd)
{
	return counter2(fd, "conn_drop", "conn_reset");
}

/* Lines of @cmd's output that contain @word. */
static int count_lines(const char *cmd, const char *word)
{
	char line[512];
	FILE *f = popen(cmd, "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += !!strstr(line, word);
	pclose(f);
	return n;
}

/* Node 1's IB connections to node 2, by state. */
static void conn_states(int fd, int *up, int *connecting)
{
	struct rds_info_connection *ci;
	socklen_t len;
	unsigned int i;

	*up = 0;
	*connecting = 0;
	ASSERT_TRUE(rds_info_read(fd, RDS_INFO_CONNECTIONS, (void **)&ci,
				  &len) >= 0,
		    "RDS_INFO_CONNECTIONS: %s", rt_errname(errno));
	for (i = 0; ci && i < len / sizeof(*ci); i++) {
		if (ci[i].faddr != addr_peer.s_addr ||
		    strncmp((char *)ci[i].transport, "infiniband",
			    sizeof(ci[i].transport)))
			continue;
		if (ci[i].flags & RDS_INFO_CONNECTION_FLAG_CONNECTED)
			(*up)++;
		else if (ci[i].flags & RDS_INFO_CONNECTION_FLAG_CONNECTING)
			(*connecting)++;
	}
	free(ci);
}

static void snap_take(int fd, struct snap *s)
{
	s->qp = count_lines("rdma res show qp 2>/dev/null", "lqpn");
	s->mr = count_lines("rdma res show mr 2>/dev/null", "mrn");
	conn_states(fd, &s->up, &s->connecting);
	s->mrs = rds_counter(fd, "rdma_mr_created");
	if (s->mrs >= 0)
		s->mrs -= rds_counter(fd, "rdma_mr_released");
	s->socks = rds_counter(fd, "sock_created");
	if (s->socks >= 0)
		s->socks -= rds_counter(fd, "sock_released");
}

/*
 * @b is back at @a: device MRs may have grown by @slack, MRs a pool
 * keeps for reuse (the RDS MR count must be back).  Fewer device MRs
 * than at @a is no leak: the distribution frees the MR of an earlier
 * case from a worker, whenever that runs.
 */
static int snap_same(const struct snap *a, const struct snap *b, int slack)
{
	return !b->connecting && a->qp - a->up == b->qp - b->up &&
	       b->mr <= a->mr + slack &&
	       a->mrs == b->mrs && a->socks == b->socks;
}

/* Node 1: wait until its resources are back at @base, or fail. */
static void expect_no_leak(int fd, const struct snap *base, int slack)
{
	long long end = rt_now_ms() + SETTLE_MS;
	struct snap s;

	for (;;) {
		snap_take(fd, &s);
		if (snap_same(base, &s, slack) || rt_now_ms() > end)
			break;
		rt_sleep_ms(500);
	}
	if (snap_same(base, &s, slack))
		return;
	rt_fail("not back in %d ms: QPs %d, %d connections up, %d connecting",
		SETTLE_MS, s.qp, s.up, s.connecting);
	rt_diag("  MRs %d, RDS MRs %lld, RDS sockets %lld", s.mr, s.mrs,
		s.socks);
	rt_diag("  before: QPs %d, %d up, MRs %d, RDS MRs %lld, sockets %lld",
		base->qp, base->up, base->mr, base->mrs, base->socks);
	system("rdma res show qp | sed 's/^/# /'");
}

/* Which hostile message @buf is, if any: a diagnostic for a mismatch. */
static void hostile_which(const unsigned char *buf, size_t len, uint32_t idx)
{
	unsigned char *other;
	uint32_t i;

	for (i = 0; i < 64; i++) {
		other = hostile_payload(i, len);
		if (!memcmp(buf, other, len)) {
			rt_diag("hostile message %u: got hostile message %u instead",
				idx, i);
			free(other);
			return;
		}
		free(other);
	}
	rt_diag("hostile message %u: got %zu bytes of no hostile message: %02x %02x %02x %02x",
		idx, len, buf[0], len > 1 ? buf[1] : 0, len > 2 ? buf[2] : 0,
		len > 3 ? buf[3] : 0);
}

/* The next message on @fd: hostile message @idx of @len bytes. */
void expect_hostile(int fd, uint32_t idx, size_t len, int cookies,
		    uint64_t cookie)
{
	union {
		char buf[4 * CMSG_SPACE(sizeof(uint64_t))];
		struct cmsghdr align;
	} ctl;
	unsigned char *want = hostile_payload(idx, len);
	unsigned char *buf = xmalloc(len + 16);
	struct sockaddr_in from, src;
	struct iovec iov = { buf, len + 16 };
	struct msghdr msg = {
		.msg_name = &from,
		.msg_namelen = sizeof(from),
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *c;
	uint64_t got = 0;
	int ndest = 0;
	long n;

	memset(&ctl, 0, sizeof(ctl));
	n = recvmsg(fd, &msg, 0);
	if (n < 0) {
		rt_fail("hostile message %u: recvmsg: %s", idx,
			rt_errname(errno));
		rt_abort();
	}
	sin_set(&src, addr_peer, HOSTILE_SPORT);
	EXPECT_TRUE(same_sin(&from, &src), "message from %s, expected %s",
		    sin_str(&from), sin_str(&src));
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level == SOL_RDS &&
		    c->cmsg_type == RDS_CMSG_RDMA_DEST) {
			memcpy(&got, CMSG_DATA(c), sizeof(got));
			ndest++;
		} else {
			rt_fail("message %u: control message %d/%d", idx,
				c->cmsg_level, c->cmsg_type);
		}
	}
	ASSERT_TRUE(n == (long)len, "hostile message %u: %ld bytes, expected %zu",
		    idx, n, len);
	if (memcmp(buf, want, len))
		hostile_which(buf, len, idx);
	EXPECT_TRUE(!memcmp(buf, want, len),
		    "hostile message %u: byte %zu is not what was sent", idx,
		    pattern_mismatch(buf, len, msg_seed(2, idx)));
	EXPECT_EQ(ndest, cookies);
	if (cookies)
		EXPECT_EQ(got, cookie);
	free(buf);
	free(want);
}

/* Messages node 1 has not had acknowledged from its port @k. */
int unacked(int fd, int k)
{
	static const int tables[] = {
		RDS_INFO_SEND_MESSAGES, RDS_INFO_RETRANS_MESSAGES
	};
	struct rds_info_message *mi;
	unsigned int t, i;
	socklen_t len;
	int n = 0;

	for (t = 0; t < ARRAY_SIZE(tables); t++) {
		ASSERT_TRUE(rds_info_read(fd, tables[t], (void **)&mi, &len) >= 0,
			    "RDS_INFO table %d: %s", tables[t], rt_errname(errno));
		for (i = 0; mi && i < len / sizeof(*mi); i++)
			n += mi[i].lport == htons(case_port(k));
		free(mi);
	}
	return n;
}

/* Wait up to @ms for unacked(@k) to be @want; return what it is. */
int unacked_wait(int fd, int k, int want, int ms)
{
	long long end = rt_now_ms() + ms;
	int n;

	while ((n = unacked(fd, k)) != want && rt_now_ms() < end)
		rt_sleep_ms(50);
	return n;
}

void set_tos(int fd, uint8_t tos)
{
	rds_tos_t t = tos;

	ASSERT_SYS_OK(ioctl(fd, SIOCRDSSETTOS, &t));
}

/* ---------------------------------------------------- both: the frame */

/*
 * One message each way between the kernels' sockets (TOS 0): node 1's
 * module still serves its honest peer.
 */
static void honest_exchange(struct hcase *hc)
{
	struct sockaddr_in to = peer_port(P_HONEST), from;
	char buf[64], mine[64], theirs[64];
	long n;
	int i;

	snprintf(mine, sizeof(mine), "case %d round %d from node %d",
		 this_case(), hc->round, node);
	snprintf(theirs, sizeof(theirs), "case %d round %d from node %d",
		 this_case(), hc->round, peer_node);
	hc->round++;
	for (i = 0; i < 2; i++) {
		if (i == node - 1) {	/* node 1 speaks first */
			EXPECT_SYS_OK(sendto(hc->honest, mine, strlen(mine), 0,
					     (struct sockaddr *)&to,
					     sizeof(to)));
			continue;
		}
		memset(buf, 0, sizeof(buf));
		n = recv_msg(hc->honest, buf, sizeof(buf) - 1, 0, &from, NULL);
		ASSERT_TRUE(n >= 0, "honest exchange: %s from node %d: %s",
			    theirs, peer_node, rt_errname(errno));
		EXPECT_TRUE(!strcmp(buf, theirs) && same_sin(&from, &to),
			    "honest exchange: '%s' from %s, expected '%s'",
			    buf, sin_str(&from), theirs);
	}
}

/*
 * Node 1: hand the kernel back 64 MiB of pages full of set bits, so that
 * its next page allocations likely get them.  Debian's kernels zero each
 * page they allocate; vm-run.sh boots the guests with init_on_alloc=0,
 * and a page the kernel sends without writing all of it then shows.
 */
void dirty_free_pages(void)
{
	size_t len = 64UL << 20;
	unsigned char *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(p != MAP_FAILED, "mmap: %s", rt_errname(errno));
	memset(p, 0xa5, len);
	munmap(p, len);
}

/*
 * Both nodes, at the start of a case: sockets bound, an honest exchange
 * (so the honest connection is up), node 1's baseline; node 2 may then
 * act.
 */
void hc_begin(struct hcase *hc)
{
	memset(hc, 0, sizeof(*hc));
	hc->cfd = rds_socket();
	hc->honest = rds_bound(P_HONEST, NULL);
	hc->victim = node == 1 ? rds_bound(P_VICTIM, NULL) : -1;
	sync_peer("bound");
	honest_exchange(hc);
	if (node == 1) {
		snap_take(hc->cfd, &hc->base);
		hc->drops = drops(hc->cfd);
		hc->queued = rds_counter(hc->cfd, "recv_queued");
	}
	sync_peer("ready");
}

/* Both: the hostile QPs did their worst and still exist. */
void hc_middle(struct hcase *hc)
{
	sync_peer("acted");
	honest_exchange(hc);
}

/*
 * Both, node 2's hostile QPs closed: node 1 checks its drop count moved
 * by @want_drops (-1: not checked), that nothing stayed behind, and the
 * honest connection once more.
 */
void hc_end(struct hcase *hc, long long want_drops)
{
	long long end = rt_now_ms() + DOWN_MS;

	sync_peer("closed");
	if (node == 1) {
		expect_empty(hc->victim);
		close(hc->victim);
		if (hc->base.socks >= 0)
			hc->base.socks--;	/* the victim's */
		/* node 1 may take the last disconnect a moment later */
		while (want_drops >= 0 &&
		       drops(hc->cfd) - hc->drops < want_drops &&
		       rt_now_ms() < end)
			rt_sleep_ms(100);
		if (want_drops >= 0)
			EXPECT_EQ(drops(hc->cfd) - hc->drops, want_drops);
		expect_no_leak(hc->cfd, &hc->base, hc->mr_slack);
	}
	/* node 1 may have waited SETTLE_MS, longer than a receive waits */
	sync_peer("settled");
	honest_exchange(hc);
	sync_peer("end");
	close(hc->honest);
	close(hc->cfd);
}
