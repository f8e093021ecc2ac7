/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rds_peer.h - the two-node framework of rds_remote and rds_rdma: both
 * programs run on two hosts at once, node 1 and node 2, with the same
 * cases in the same order (rds_test.h runs each in its own process), and
 * coordinate over a TCP connection between the same two addresses (node 1
 * listens on the control port, node 2 connects), not over RDS: an RDS that
 * loses messages then shows as failed cases, never as a hang, and no
 * barrier depends on what is being tested.  Every control line carries a
 * tag, case number * 100 + step; a line from a case this node has already
 * left is dropped, one from a case it has not reached yet is kept for that
 * case (so one node failing a case early does not make the other fail the
 * next one).
 *
 * Also here: per-case RDS ports (case k uses port_base + 32 k .. + 31 on
 * both nodes), bound sockets, the byte patterns messages carry, and
 * rds_peer_main(), the whole of main() but the table of cases.
 *
 * Include after _GNU_SOURCE, rds_test.h and rds_sock_util.h; the state
 * below is the program's, one copy however many of its files include this.
 */
#ifndef RDS_PEER_H
#define RDS_PEER_H

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <linux/rds.h>

#include "rds_test.h"
#include "rds_sock_util.h"

#define CTL_LINE	256
/* The first two times RDS_TIME_SCALE; set_rcvtimeo() and poll_fd() scale. */
#define CTL_TIMEOUT_MS	rt_scaled_ms(30000)	/* one node for the other */
#define CONNECT_MS	rt_scaled_ms(90000)	/* the other program starts */
#define RCV_TIMEOUT_MS	15000	/* the longest a receive waits */

/*
 * Weak, not static (as in rds_test.h): a program built from several files
 * (rds_rdma) has one copy of the state, whichever of its files use it.
 */
__attribute__((weak)) struct in_addr addr_self, addr_peer;
__attribute__((weak)) char addr_self_str[INET_ADDRSTRLEN];
__attribute__((weak)) char addr_peer_str[INET_ADDRSTRLEN];
__attribute__((weak)) int node;			/* 1 or 2 */
__attribute__((weak)) int peer_node;
__attribute__((weak)) unsigned short ctl_port;
__attribute__((weak)) unsigned short port_base;	/* of the per-case RDS ports */
__attribute__((weak)) int ctl_fd = -1;

/*
 * The RDS addresses of the running case, for the helpers that take either
 * family (peer_sa(), rds_bound_sa(), and rds_rdma_lib.c's): addr_self and
 * addr_peer, unless the case sets rds_v6 and the IPv6 addresses (with
 * their scope ids) in rds_self6 and rds_peer6, as rds_ipv6 does.  The
 * control connection stays on IPv4.
 */
__attribute__((weak)) int rds_v6;
__attribute__((weak)) struct sockaddr_in6 rds_self6, rds_peer6;

__attribute__((weak)) const struct rt_case *all_cases;
__attribute__((weak)) int n_cases;

/* A control line read ahead of its case, kept across the case processes. */
struct ctl_stash {
	int full;
	char line[CTL_LINE];
};

__attribute__((weak)) struct ctl_stash *ctl_stash;

/* Map the stash, shared with forked children; -1 (said) if it cannot. */
static inline int ctl_stash_map(void)
{
	ctl_stash = mmap(NULL, sizeof(*ctl_stash), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ctl_stash == MAP_FAILED) {
		printf("Bail out! mmap: %s\n", rt_errname(errno));
		return -1;
	}
	memset(ctl_stash, 0, sizeof(*ctl_stash));
	return 0;
}

__attribute__((weak)) int case_no;	/* 1-based number of the running case */
__attribute__((weak)) int ctl_step;	/* control steps so far in this case */

/* ---------------------------------------------------------------- helpers */

static inline int same_sin(const struct sockaddr_in *a,
			   const struct sockaddr_in *b)
{
	return a->sin_family == b->sin_family &&
	       a->sin_addr.s_addr == b->sin_addr.s_addr &&
	       a->sin_port == b->sin_port;
}

/* The running case's number, found by its name. */
static inline int this_case(void)
{
	int i;

	if (!case_no) {
		for (i = 0; i < n_cases; i++)
			if (rt_case_name && !strcmp(all_cases[i].name, rt_case_name))
				case_no = i + 1;
		ASSERT_TRUE(case_no, "case %s not in the table", rt_case_name);
	}
	return case_no;
}

/* Port k of the running case; both nodes use the same numbers. */
static inline unsigned short case_port(int k)
{
	return port_base + 32 * this_case() + k;
}

/*
 * A socket bound to this node's address and the case's port k, its address
 * in *out if out is not NULL.  Receives wait RCV_TIMEOUT_MS at most.
 */
static inline int rds_bound(int k, struct sockaddr_in *out)
{
	struct sockaddr_in sin, got;
	int fd;

	sin_set(&sin, addr_self, case_port(k));
	fd = rds_bound_at(addr_self, case_port(k), &got, RCV_TIMEOUT_MS);
	ASSERT_TRUE(same_sin(&got, &sin), "bound to %s, asked for %s",
		    sin_str(&got), sin_str(&sin));
	if (out)
		*out = got;
	return fd;
}

/* The peer's port k of the running case. */
static inline struct sockaddr_in peer_port(int k)
{
	struct sockaddr_in sin;

	sin_set(&sin, addr_peer, case_port(k));
	return sin;
}

/* This node's (self 1) or the peer's address, port k, of either family. */
static inline union rds_sa case_sa(int self, int k)
{
	union rds_sa u;

	memset(&u, 0, sizeof(u));
	if (rds_v6) {
		u.sin6 = self ? rds_self6 : rds_peer6;
		u.sin6.sin6_family = AF_INET6;
		u.sin6.sin6_port = htons(case_port(k));
	} else {
		sin_set(&u.sin, self ? addr_self : addr_peer, case_port(k));
	}
	return u;
}

static inline union rds_sa peer_sa(int k)
{
	return case_sa(0, k);
}

/* rds_bound() in the family of the case: bound to case_sa(1, k). */
static inline int rds_bound_sa(int k, union rds_sa *out)
{
	union rds_sa want = case_sa(1, k), got;
	socklen_t len = sizeof(got);
	int fd;

	if (!rds_v6) {
		if (out)
			memset(out, 0, sizeof(*out));
		return rds_bound(k, out ? &out->sin : NULL);
	}
	fd = rds_socket();
	ASSERT_SYS_OK(bind(fd, &want.sa, sizeof(want.sin6)));
	memset(&got, 0, sizeof(got));
	ASSERT_SYS_OK(getsockname(fd, &got.sa, &len));
	ASSERT_EQ(len, sizeof(got.sin6));
	ASSERT_TRUE(same_sa(&got, &want), "bound to %s, asked for %s",
		    sa_str(&got), sa_str(&want));
	set_rcvtimeo(fd, RCV_TIMEOUT_MS);
	if (out)
		*out = got;
	return fd;
}

/* --------------------------------------------------------- the contents */

/*
 * The seed of a message: which case, which sender (a node, or a node and
 * a sender of its), which message.  Different seeds give unrelated bytes.
 */
static inline uint32_t msg_seed(uint32_t sender, uint32_t seq)
{
	return mix32(mix32(this_case() * 0x01000193U + sender) ^ seq);
}

/* ------------------------------------------------------- control channel */

static inline void ctl_write(int tag, const char *text)
{
	char line[CTL_LINE];
	int n;

	n = snprintf(line, sizeof(line), "%d %s\n", tag, text);
	ASSERT_TRUE(n > 0 && n < (int)sizeof(line), "control line too long");
	if (write(ctl_fd, line, n) != n) {
		rt_fail("control connection: write: %s", rt_errname(errno));
		rt_abort();
	}
}

/*
 * One control line, without its newline, read a byte at a time so that
 * nothing past it is taken from the connection.  1: a line, 0: deadline
 * passed, -1: the connection is closed or broken.
 */
static inline int ctl_read_line(char *line, size_t size, long long deadline)
{
	size_t n = 0;
	char c;

	if (ctl_stash->full) {
		snprintf(line, size, "%s", ctl_stash->line);
		ctl_stash->full = 0;
		return 1;
	}
	for (;;) {
		struct pollfd p = { .fd = ctl_fd, .events = POLLIN };
		long long left = deadline - rt_now_ms();
		ssize_t r;

		if (left <= 0)
			return 0;
		if (poll(&p, 1, (int)left) <= 0)
			continue;
		r = read(ctl_fd, &c, 1);
		if (r <= 0)
			return -1;
		if (c == '\n')
			break;
		if (n + 1 < size)
			line[n++] = c;
	}
	line[n] = 0;
	return 1;
}

/* The peer's control line with this tag: its text into text. */
static inline int ctl_expect(int tag, char *text, size_t size)
{
	long long deadline = rt_now_ms() + CTL_TIMEOUT_MS;
	char line[CTL_LINE];
	int got, off, r;

	for (;;) {
		r = ctl_read_line(line, sizeof(line), deadline);
		if (r == 0) {
			rt_fail("no word from node %d for step %d.%d in %d ms",
				peer_node, tag / 100, tag % 100,
				CTL_TIMEOUT_MS);
			return 0;
		}
		if (r < 0) {
			rt_fail("control connection closed by node %d",
				peer_node);
			return 0;
		}
		if (sscanf(line, "%d %n", &got, &off) != 1) {
			rt_diag("ignoring control line '%s'", line);
			continue;
		}
		if (got < tag)		/* from a case the peer failed early */
			continue;
		if (got > tag) {
			/* the peer is ahead: keep its line for that case */
			snprintf(ctl_stash->line, sizeof(ctl_stash->line), "%s",
				 line);
			ctl_stash->full = 1;
			rt_fail("node %d is at step %d.%d already, this node at %d.%d",
				peer_node, got / 100, got % 100, tag / 100,
				tag % 100);
			return 0;
		}
		snprintf(text, size, "%s", line + off);
		return 1;
	}
}

static inline int ctl_next_tag(void)
{
	ASSERT_TRUE(ctl_step < 99, "too many control steps");
	return this_case() * 100 + ++ctl_step;
}

/* Both nodes: wait until the other has reached the same point. */
static inline void sync_peer(const char *what)
{
	int tag = ctl_next_tag();
	char want[CTL_LINE], text[CTL_LINE];

	snprintf(want, sizeof(want), "sync %s", what);
	ctl_write(tag, want);
	if (!ctl_expect(tag, text, sizeof(text)))
		rt_abort();
	ASSERT_TRUE(!strcmp(text, want), "at '%s', node %d sent '%s'", want,
		    peer_node, text);
}

/* One node tells a number, the other hears it (the same step on both). */
static inline void tell_peer(long val)
{
	char text[64];

	snprintf(text, sizeof(text), "value %ld", val);
	ctl_write(ctl_next_tag(), text);
}

static inline long hear_peer(void)
{
	char text[CTL_LINE];
	long val;

	if (!ctl_expect(ctl_next_tag(), text, sizeof(text)))
		rt_abort();
	ASSERT_TRUE(sscanf(text, "value %ld", &val) == 1,
		    "expected a value from node %d, got '%s'", peer_node, text);
	return val;
}

/* The module set guest @k loaded ("ours", "distro"), from the bench. */
static inline const char *modules_of(int k)
{
	static char buf[2][16];
	const char *all = getenv("RDS_MODULES_ALL");
	const char *comma;

	if (!all || !*all)
		return "";
	comma = strchr(all, ',');
	if (!comma)
		return all;	/* one choice for every guest */
	if (k == 1)
		snprintf(buf[0], sizeof(buf[0]), "%.*s", (int)(comma - all), all);
	else
		snprintf(buf[1], sizeof(buf[1]), "%s", comma + 1);
	return buf[k - 1];
}

static inline int parse_addr(const char *s, struct in_addr *a)
{
	return s && *s && inet_pton(AF_INET, s, a) == 1;
}

/* Write all of a short line, or fail. */
static inline int write_line(int fd, const char *line)
{
	size_t len = strlen(line);

	return write(fd, line, len) == (ssize_t)len ? 0 : -1;
}

/*
 * The control connection: node 1 accepts one from the peer's address,
 * node 2 connects, retrying while node 1 is not listening yet.
 */
static inline int ctl_connect(void)
{
	long long deadline = rt_now_ms() + CONNECT_MS;
	struct sockaddr_in sin, from;
	socklen_t len;
	int fd, lfd, one = 1;

	if (node == 1) {
		lfd = socket(AF_INET, SOCK_STREAM, 0);
		if (lfd < 0)
			return -1;
		setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		sin_set(&sin, addr_self, ctl_port);
		if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) ||
		    listen(lfd, 1)) {
			printf("# control port %s:%u: %s\n", addr_self_str,
			       ctl_port, rt_errname(errno));
			close(lfd);
			return -1;
		}
		for (;;) {
			long long left = deadline - rt_now_ms();

			if (left <= 0 || !(poll_fd(lfd, POLLIN, (int)left) & POLLIN)) {
				printf("# node 2 did not connect in %d s\n",
				       CONNECT_MS / 1000);
				close(lfd);
				return -1;
			}
			len = sizeof(from);
			fd = accept(lfd, (struct sockaddr *)&from, &len);
			if (fd < 0)
				continue;
			if (from.sin_addr.s_addr == addr_peer.s_addr)
				break;
			close(fd);	/* not our peer */
		}
		close(lfd);
	} else {
		for (;;) {
			fd = socket(AF_INET, SOCK_STREAM, 0);
			if (fd < 0)
				return -1;
			/*
			 * From this node's address: node 1 takes only its
			 * peer's, and on one host (rds_rdma_local.sh) the
			 * route alone would pick another.
			 */
			sin_set(&sin, addr_self, 0);
			if (bind(fd, (struct sockaddr *)&sin, sizeof(sin))) {
				close(fd);
				return -1;
			}
			sin_set(&sin, addr_peer, ctl_port);
			if (!connect(fd, (struct sockaddr *)&sin, sizeof(sin)))
				break;
			close(fd);
			if (rt_now_ms() > deadline) {
				printf("# could not connect to node 1 at %s:%u in %d s\n",
				       addr_peer_str, ctl_port,
				       CONNECT_MS / 1000);
				return -1;
			}
			rt_sleep_ms(200);
		}
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/*
 * Both programs must run the same cases: exchange a digest of the names
 * of the cases selected.
 */
static inline int ctl_hello(char *const *only)
{
	char line[CTL_LINE], want[64];
	uint32_t digest = 0;
	const char *p;
	int i, n = 0, r;

	for (i = 0; i < n_cases; i++) {
		if (!rt_wanted(&all_cases[i], only))
			continue;
		n++;
		for (p = all_cases[i].name; *p; p++)
			digest = mix32(digest ^ (unsigned char)*p);
	}
	snprintf(want, sizeof(want), "0 hello %d %08x", n, digest);
	snprintf(line, sizeof(line), "%s\n", want);
	if (write_line(ctl_fd, line))
		return -1;
	r = ctl_read_line(line, sizeof(line), rt_now_ms() + CTL_TIMEOUT_MS);
	if (r != 1) {
		printf("# no hello from node %d\n", peer_node);
		return -1;
	}
	if (strcmp(line, want)) {
		printf("# node %d runs other cases: '%s', here '%s'\n",
		       peer_node, line, want);
		return -1;
	}
	return 0;
}

static inline void bad_args(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-n NODE] [-a ADDR] [-p PEER] [-c PORT] [-l] [CASE...]\n",
		prog);
	exit(2);
}

/*
 * main() of a two-node program: the options and environment described in
 * rds_remote.c, the control connection on port ctl (-c overrides it), per
 * case RDS ports from ports, then the cases.  The exit status for main().
 */
static inline int rds_peer_main(int argc, char **argv,
				const struct rt_case *cases, int ncases,
				unsigned short ctl, unsigned short ports)
{
	const char *self = getenv("RDS_ADDR"), *peer = getenv("RDS_PEER_ADDR");
	const char *nodestr = getenv("RDS_NODE");
	int i, opt, ret;

	all_cases = cases;
	n_cases = ncases;
	ctl_port = ctl;
	port_base = ports;
	while ((opt = getopt(argc, argv, "n:a:p:c:l")) != -1) {
		switch (opt) {
		case 'n':
			nodestr = optarg;
			break;
		case 'a':
			self = optarg;
			break;
		case 'p':
			peer = optarg;
			break;
		case 'c':
			ctl_port = (unsigned short)atoi(optarg);
			break;
		case 'l':
			for (i = 0; i < ncases; i++)
				printf("%s\n", cases[i].name);
			return 0;
		default:
			bad_args(argv[0]);
		}
	}
	if (!nodestr) {
		/* kselftest's run_tests on one machine, not vm-run.sh's */
		printf("1..0 # SKIP needs the two guests of vm-run.sh (-n, RDS_NODE)\n");
		return RT_EXIT_SKIP;
	}
	node = atoi(nodestr);
	if ((node != 1 && node != 2) || !ctl_port)
		bad_args(argv[0]);
	peer_node = 3 - node;

	ret = rds_need_af_rds();
	if (ret)
		return ret;
	if (!parse_addr(self, &addr_self) || !parse_addr(peer, &addr_peer)) {
		printf("1..0 # SKIP no address for %s (-a, -p, RDS_ADDR, RDS_PEER_ADDR)\n",
		       parse_addr(self, &addr_self) ? "the peer" : "this node");
		return RT_EXIT_SKIP;
	}
	inet_ntop(AF_INET, &addr_self, addr_self_str, sizeof(addr_self_str));
	inet_ntop(AF_INET, &addr_peer, addr_peer_str, sizeof(addr_peer_str));

	if (ctl_stash_map())
		return RT_EXIT_FAIL;
	rt_diag("node %d, %s, peer %s, control port %u", node, addr_self_str,
		addr_peer_str, ctl_port);
	ctl_fd = ctl_connect();
	if (ctl_fd < 0 || ctl_hello(argv + optind)) {
		printf("Bail out! no control connection with node %d (%s:%u)\n",
		       peer_node, node == 1 ? addr_self_str : addr_peer_str,
		       ctl_port);
		return RT_EXIT_FAIL;
	}
	ret = rt_run(cases, ncases, argv + optind);
	close(ctl_fd);
	return ret;
}

/* Write net.rds.@name of this node. */
static inline void set_rds_sysctl(const char *name, long val)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/net/rds/%s", name);
	f = fopen(path, "w");
	ASSERT_TRUE(f && fprintf(f, "%ld\n", val) > 0 && !fclose(f),
		    "writing %ld to %s: %s", val, path, rt_errname(errno));
}

/* Read net.rds.@name of this node. */
static inline long get_rds_sysctl(const char *name)
{
	char path[128];
	long val = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/net/rds/%s", name);
	f = fopen(path, "r");
	ASSERT_TRUE(f && fscanf(f, "%ld", &val) == 1 && !fclose(f),
		    "reading %s: %s", path, rt_errname(errno));
	return val;
}

#endif /* RDS_PEER_H */
