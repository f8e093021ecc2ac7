// SPDX-License-Identifier: GPL-2.0
/*
 * rds_remote - RDS between two hosts, over InfiniBand or RoCE.
 *
 * Run on both hosts at once, with the same cases, one as node 1 and the
 * other as node 2:
 *
 *	host 1: rds_remote -n 1 -a 10.0.0.1 -p 10.0.0.2
 *	host 2: rds_remote -n 2 -a 10.0.0.2 -p 10.0.0.1
 *
 * In the bench the defaults come from RDS_NODE, RDS_ADDR and RDS_PEER_ADDR,
 * so "rds_remote" alone does it.  Both nodes run the same cases in the same
 * order, each case in its own process under an alarm (rds_test.h), and each
 * node prints its own TAP: a lost or damaged message fails the case on the
 * node that received it.
 *
 * The two programs coordinate over a TCP connection between the same two
 * addresses (node 1 listens on the control port, node 2 connects), not over
 * RDS: an RDS that loses messages then shows as failed cases, never as a
 * hang, and no barrier depends on what is being tested.  Every control line
 * carries a tag, case number * 100 + step; a line from a case this node has
 * already left is dropped, one from a case it has not reached yet is kept
 * for that case (so one node failing a case early does not make the other
 * fail the next one).
 *
 * Every message carries a pattern derived from the case, its sender and its
 * sequence number (and, when long enough, a header with the last two), so a
 * message that is lost, duplicated, reordered, truncated or damaged fails
 * the check; so does a wrong sender address from recvmsg().  Every blocking
 * call is bounded: receives by SO_RCVTIMEO, control reads by poll(), sends
 * that wait on congestion by the case's alarm.
 *
 * What the cases rely on, from the distribution's RDS (Debian's 6.1 and 6.12
 * over soft-RoCE): a message sent to a port nobody is bound to is dropped,
 * so every case binds its receivers, then synchronises, then sends; a
 * port's congestion reaches the sending host as a congestion map update, so
 * a non-blocking sender gets ENOBUFS some messages after the receiver went
 * over its SO_RCVBUF share (the cases give that 20 s); a sender that exits
 * drops what it had queued, so senders stay until the peer confirms it got
 * everything.
 *
 * Usage: rds_remote [-n NODE] [-a ADDR] [-p PEER] [-c PORT] [-l] [CASE...]
 *   -n  this node, 1 or 2 (RDS_NODE)
 *   -a  this node's address on the RDMA device (RDS_ADDR)
 *   -p  the other node's address (RDS_PEER_ADDR)
 *   -c  control TCP port (default 18631)
 *   -l  list the cases
 * Environment: RDS_MODULES (none: skip all if AF_RDS is missing),
 * RDS_MODULES_ALL and RDS_CREDITS for the flow_control case.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <linux/rds.h>

#include "rds_test.h"
#include "rds_sock_util.h"

#ifndef AF_RDS
#define AF_RDS 21
#endif

#define CTL_PORT	18631
#define CTL_LINE	256
#define CTL_TIMEOUT_MS	30000	/* the longest one node waits for the other */
#define CONNECT_MS	90000	/* for the other program to start */
#define RCV_TIMEOUT_MS	15000	/* the longest a receive waits */
#define PORT_BASE	20000	/* case k uses PORT_BASE + 32 k .. + 31 */
#define BIG_MSG		(1 << 20)	/* the largest message RDS takes */

static struct in_addr addr_self, addr_peer;
static char addr_self_str[INET_ADDRSTRLEN], addr_peer_str[INET_ADDRSTRLEN];
static int node;			/* 1 or 2 */
static int peer_node;
static unsigned short ctl_port = CTL_PORT;
static int ctl_fd = -1;

static const struct rt_case *all_cases;
static int n_cases;

/* A control line read ahead of its case, kept across the case processes. */
struct ctl_stash {
	int full;
	char line[CTL_LINE];
};

static struct ctl_stash *ctl_stash;
static int case_no;			/* 1-based number of the running case */
static int ctl_step;			/* control steps so far in this case */

/* ---------------------------------------------------------------- helpers */

static void sin_set(struct sockaddr_in *sin, struct in_addr addr,
		    unsigned short port)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_addr = addr;
	sin->sin_port = htons(port);
}

static int same_sin(const struct sockaddr_in *a, const struct sockaddr_in *b)
{
	return a->sin_family == b->sin_family &&
	       a->sin_addr.s_addr == b->sin_addr.s_addr &&
	       a->sin_port == b->sin_port;
}

/* The running case's number, found by its name. */
static int this_case(void)
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
static unsigned short case_port(int k)
{
	return PORT_BASE + 32 * this_case() + k;
}

static int rds_socket(void)
{
	return ASSERT_SYS_OK(socket(AF_RDS, SOCK_SEQPACKET, 0));
}

static void set_rcvtimeo(int fd, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	ASSERT_SYS_OK(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
				 sizeof(tv)));
}

static int int_opt(int fd, int level, int name)
{
	socklen_t len = sizeof(int);
	int val = 0;

	ASSERT_SYS_OK(getsockopt(fd, level, name, &val, &len));
	ASSERT_EQ(len, sizeof(int));
	return val;
}

static int set_int_opt(int fd, int level, int name, int val)
{
	return setsockopt(fd, level, name, &val, sizeof(val));
}

/*
 * A socket bound to this node's address and the case's port k, its address
 * in *out if out is not NULL.  Receives wait RCV_TIMEOUT_MS at most.
 */
static int rds_bound(int k, struct sockaddr_in *out)
{
	struct sockaddr_in sin, got;
	socklen_t len = sizeof(got);
	int fd = rds_socket();

	sin_set(&sin, addr_self, case_port(k));
	ASSERT_SYS_OK(bind(fd, (struct sockaddr *)&sin, sizeof(sin)));
	ASSERT_SYS_OK(getsockname(fd, (struct sockaddr *)&got, &len));
	ASSERT_TRUE(same_sin(&got, &sin), "bound to %s, asked for %s",
		    sin_str(&got), sin_str(&sin));
	if (out)
		*out = got;
	set_rcvtimeo(fd, RCV_TIMEOUT_MS);
	return fd;
}

/* The peer's port k of the running case. */
static struct sockaddr_in peer_port(int k)
{
	struct sockaddr_in sin;

	sin_set(&sin, addr_peer, case_port(k));
	return sin;
}

/*
 * Room for messages of up to msg bytes (RDS takes at most half of the send
 * buffer per message) and a receive buffer of rcv bytes (0: plenty, so the
 * port never congests).
 */
static void make_room(int fd, int msg, int rcv)
{
	int snd = 2 * msg + 65536;

	if (!rcv)
		rcv = 4 * snd;
	ASSERT_SYS_OK(set_int_opt(fd, SOL_SOCKET, SO_SNDBUFFORCE, snd));
	ASSERT_SYS_OK(set_int_opt(fd, SOL_SOCKET, SO_RCVBUFFORCE, rcv));
	ASSERT_TRUE(int_opt(fd, SOL_SOCKET, SO_SNDBUF) / 2 >= msg,
		    "SO_SNDBUF %d too small for %d",
		    int_opt(fd, SOL_SOCKET, SO_SNDBUF), msg);
}

static void *xmalloc(size_t len)
{
	void *p = malloc(len ? len : 1);

	ASSERT_TRUE(p, "out of memory for %zu bytes", len);
	return p;
}

/* --------------------------------------------------------- the contents */

static uint32_t mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

/*
 * The seed of a message: which case, which sender (a node, or a node and
 * a sender of its), which message.  Different seeds give unrelated bytes.
 */
static uint32_t msg_seed(uint32_t sender, uint32_t seq)
{
	return mix32(mix32(this_case() * 0x01000193U + sender) ^ seq);
}

/* Byte i of the pattern of a seed: every 4 bytes a new hash. */
static void fill_pattern(unsigned char *buf, size_t len, uint32_t seed)
{
	uint32_t w = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!(i & 3))
			w = mix32(seed + (uint32_t)(i >> 2) * 0x9e3779b9U);
		buf[i] = (unsigned char)(w >> (8 * (i & 3)));
	}
}

/* The offset of the first byte that is not the pattern, or len. */
static size_t pattern_mismatch(const unsigned char *buf, size_t len,
			       uint32_t seed)
{
	unsigned char want[4096];
	size_t off, n;

	for (off = 0; off < len; off += n) {
		n = len - off < sizeof(want) ? len - off : sizeof(want);
		/* off is a multiple of 4: the pattern goes on from there */
		fill_pattern(want, n, seed + (uint32_t)(off >> 2) * 0x9e3779b9U);
		if (memcmp(buf + off, want, n)) {
			size_t j = 0;

			while (buf[off + j] == want[j])
				j++;
			return off + j;
		}
	}
	return len;
}

/*
 * Messages of the streams (many senders, both ways at once, congestion):
 * a header, then the pattern of (sender, seq).
 */
#define MSG_MAGIC	0x52445352U	/* "RSDR" */

struct msg_hdr {
	uint32_t magic;
	uint32_t sender;
	uint32_t seq;
	uint32_t len;		/* of the whole message */
};

static void build_msg(unsigned char *buf, size_t len, uint32_t sender,
		      uint32_t seq)
{
	struct msg_hdr h = { MSG_MAGIC, sender, seq, (uint32_t)len };

	memcpy(buf, &h, sizeof(h));
	fill_pattern(buf + sizeof(h), len - sizeof(h), msg_seed(sender, seq));
}

/*
 * Check a received stream message of n bytes from this sender; its
 * sequence number in *seq.  Returns 1 if intact.
 */
static int check_msg(const unsigned char *buf, long n, uint32_t sender,
		     uint32_t *seq, const char *what)
{
	struct msg_hdr h;
	size_t bad;

	if (n < (long)sizeof(h)) {
		rt_fail("%s: %ld bytes, shorter than a header", what, n);
		return 0;
	}
	memcpy(&h, buf, sizeof(h));
	*seq = h.seq;
	if (h.magic != MSG_MAGIC || h.sender != sender || h.len != n) {
		rt_fail("%s: header %#x sender %u seq %u len %u, expected %#x %u len %ld",
			what, h.magic, h.sender, h.seq, h.len, MSG_MAGIC,
			sender, n);
		return 0;
	}
	bad = pattern_mismatch(buf + sizeof(h), n - sizeof(h),
			       msg_seed(sender, h.seq));
	if (bad != n - sizeof(h)) {
		rt_fail("%s: message %u of sender %u, %ld bytes: byte %zu is damaged",
			what, h.seq, sender, n, bad + sizeof(h));
		return 0;
	}
	return 1;
}

/* recvmsg() into buf; the sender's address in *from, flags in *flags. */
static long recv_msg(int fd, void *buf, size_t len, int flags,
		     struct sockaddr_in *from, int *msg_flags)
{
	struct iovec iov = { buf, len };
	struct msghdr msg = {
		.msg_name = from,
		.msg_namelen = sizeof(*from),
		.msg_iov = &iov,
		.msg_iovlen = 1,
	};
	long ret;

	memset(from, 0xa5, sizeof(*from));
	ret = recvmsg(fd, &msg, flags);
	if (ret >= 0)
		EXPECT_EQ(msg.msg_namelen, sizeof(*from));
	if (msg_flags)
		*msg_flags = msg.msg_flags;
	return ret;
}

/* Nothing more may be queued on fd. */
static void expect_empty(int fd)
{
	struct sockaddr_in from;
	char c;
	long n;

	n = recv_msg(fd, &c, 1, MSG_DONTWAIT | MSG_TRUNC, &from, NULL);
	if (n >= 0)
		rt_fail("a message too many: %ld bytes from %s", n,
			sin_str(&from));
	else
		EXPECT_EQ(errno, EAGAIN);
}

/* ------------------------------------------------------- control channel */

static void ctl_write(int tag, const char *text)
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
static int ctl_read_line(char *line, size_t size, long long deadline)
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
static int ctl_expect(int tag, char *text, size_t size)
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

static int ctl_next_tag(void)
{
	ASSERT_TRUE(ctl_step < 99, "too many control steps");
	return this_case() * 100 + ++ctl_step;
}

/* Both nodes: wait until the other has reached the same point. */
static void sync_peer(const char *what)
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
static void tell_peer(long val)
{
	char text[64];

	snprintf(text, sizeof(text), "value %ld", val);
	ctl_write(ctl_next_tag(), text);
}

static long hear_peer(void)
{
	char text[CTL_LINE];
	long val;

	if (!ctl_expect(ctl_next_tag(), text, sizeof(text)))
		rt_abort();
	ASSERT_TRUE(sscanf(text, "value %ld", &val) == 1,
		    "expected a value from node %d, got '%s'", peer_node, text);
	return val;
}

/* ----------------------------------------------------------- the cases */

/* A socket bound to the RDMA device's address is served by IB. */
static void test_transport_ib(void)
{
	struct sockaddr_in me;
	int fd = rds_bound(0, &me);

	EXPECT_EQ(int_opt(fd, SOL_RDS, SO_RDS_TRANSPORT), RDS_TRANS_IB);
	close(fd);
	sync_peer("done");
}

/*
 * Sizes from 0 to 1 MiB, up and down again, both ways at once, byte for
 * byte and in order: each message's pattern depends on its place in the
 * list, so a message out of place or damaged does not match.
 */
static const size_t sizes[] = {
	0, 1, 4096, 4097, 65536, BIG_MSG, BIG_MSG, 65536, 4097, 4096, 1, 0,
};

static void test_sizes_both_ways(void)
{
	unsigned char *buf = xmalloc(BIG_MSG + 4096);
	struct sockaddr_in to = peer_port(0), from;
	size_t i, bad, total = 0;
	long long start;
	long ret;
	int fd, flags;

	fd = rds_bound(0, NULL);
	make_room(fd, BIG_MSG, 0);
	sync_peer("bound");

	start = rt_now_ms();
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		fill_pattern(buf, sizes[i], msg_seed(node, i));
		ret = EXPECT_SYS_OK(sendto(fd, buf, sizes[i], 0,
					   (struct sockaddr *)&to, sizeof(to)));
		if (!EXPECT_EQ(ret, sizes[i]))
			rt_abort();
		total += sizes[i];
	}
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		memset(buf, 0, sizes[i] + 16);
		ret = recv_msg(fd, buf, BIG_MSG + 4096, 0, &from, &flags);
		if (ret < 0) {
			rt_fail("message %zu (%zu bytes): recvmsg: %s", i,
				sizes[i], rt_errname(errno));
			rt_abort();
		}
		EXPECT_TRUE(same_sin(&from, &to), "message %zu from %s, expected %s",
			    i, sin_str(&from), sin_str(&to));
		EXPECT_EQ(flags & (MSG_TRUNC | MSG_CTRUNC), 0);
		if (ret != (long)sizes[i]) {
			rt_fail("message %zu: %ld bytes, expected %zu", i, ret,
				sizes[i]);
			continue;
		}
		bad = pattern_mismatch(buf, ret, msg_seed(peer_node, i));
		EXPECT_TRUE(bad == sizes[i],
			    "message %zu (%zu bytes): byte %zu is not what node %d sent",
			    i, sizes[i], bad, peer_node);
	}
	rt_diag("%zu messages, %zu bytes each way in %lld ms", ARRAY_SIZE(sizes),
		total, rt_now_ms() - start);
	sync_peer("received");
	expect_empty(fd);
	close(fd);
	free(buf);
}

/*
 * Senders: threads, each with its own socket, sending count messages of
 * len(seq) bytes to one address, blocking (through congestion).  A sender's
 * socket stays open until the case ends: closing it would drop what it
 * still has queued.
 */
struct sender {
	pthread_t thread;
	int fd;
	uint32_t id;		/* in the messages */
	struct sockaddr_in to;
	int count;
	size_t (*len)(uint32_t seq);
	int sent;		/* messages sendto() took */
	int err;		/* errno of the first failure, or 0 */
	int started;
};

static void *sender_main(void *arg)
{
	struct sender *s = arg;
	unsigned char *buf;
	size_t max = 0, n;
	int i;

	for (i = 0; i < s->count; i++) {
		n = s->len(i);
		max = n > max ? n : max;
	}
	buf = malloc(max);
	if (!buf) {
		s->err = ENOMEM;
		return NULL;
	}
	for (s->sent = 0; s->sent < s->count; s->sent++) {
		n = s->len(s->sent);
		build_msg(buf, n, s->id, s->sent);
		if (sendto(s->fd, buf, n, 0, (struct sockaddr *)&s->to,
			   sizeof(s->to)) != (ssize_t)n) {
			s->err = errno;
			break;
		}
	}
	free(buf);
	return NULL;
}

static void sender_start(struct sender *s)
{
	errno = pthread_create(&s->thread, NULL, sender_main, s);
	ASSERT_TRUE(!errno, "pthread_create: %s", rt_errname(errno));
	s->started = 1;
}

static void sender_join(struct sender *s, const char *what)
{
	if (!s->started)
		return;
	pthread_join(s->thread, NULL);
	s->started = 0;
	if (s->err)
		rt_fail("%s %u: message %d: sendto: %s", what, s->id, s->sent,
			rt_errname(s->err));
	EXPECT_EQ(s->sent, s->count);
}

/*
 * Receive nsenders * count stream messages on fd, from the peer's ports
 * first_port .. first_port + nsenders - 1 (sender i: id first_id + i,
 * port first_port + i), each exactly once and in order per sender.
 */
static void recv_streams(int fd, int nsenders, int count, uint32_t first_id,
			 unsigned short first_port, size_t max)
{
	unsigned char *buf = xmalloc(max + 64);
	int *next = calloc(nsenders, sizeof(*next));
	int got = 0, bad = 0, i, flags;
	struct sockaddr_in from;
	long long start, bytes = 0;
	uint32_t seq, id;
	long n;

	ASSERT_TRUE(next, "out of memory");
	start = rt_now_ms();
	while (got < nsenders * count) {
		n = recv_msg(fd, buf, max + 64, 0, &from, &flags);
		if (n < 0) {
			rt_fail("after %d of %d messages: recvmsg: %s", got,
				nsenders * count, rt_errname(errno));
			break;
		}
		got++;
		bytes += n;
		i = ntohs(from.sin_port) - first_port;
		if (from.sin_family != AF_INET ||
		    from.sin_addr.s_addr != addr_peer.s_addr ||
		    i < 0 || i >= nsenders) {
			rt_fail("a message from %s, not from one of the senders",
				sin_str(&from));
			bad++;
			continue;
		}
		id = first_id + i;
		EXPECT_EQ(flags & MSG_TRUNC, 0);
		if (!check_msg(buf, n, id, &seq, "received")) {
			bad++;
		} else if (seq != (uint32_t)next[i]) {
			rt_fail("sender %u: message %u where %d was due (%s)",
				id, seq, next[i],
				(int)seq < next[i] ? "duplicate or reordered" :
				"messages lost or reordered");
			bad++;
			if ((int)seq > next[i])
				next[i] = seq + 1;
		} else {
			next[i]++;
		}
		if (bad > 10) {
			rt_diag("giving up after %d bad messages", bad);
			break;
		}
	}
	rt_diag("received %d messages, %lld bytes from %d sender(s) in %lld ms",
		got, bytes, nsenders, rt_now_ms() - start);
	for (i = 0; i < nsenders; i++)
		EXPECT_TRUE(next[i] == count,
			    "sender %u: %d of %d messages arrived in order",
			    first_id + i, next[i], count);
	EXPECT_EQ(bad, 0);
	free(next);
	free(buf);
}

/*
 * Many senders to one receiver, both ways at once: 8 sockets on each node
 * send to one socket on the other, whose small receive buffer congests
 * again and again.  Every message arrives once, intact, in order per
 * sender.
 */
#define MANY_SENDERS	8
#define MANY_MSGS	200
#define MANY_MAX	(sizeof(struct msg_hdr) + 3000)

static size_t many_len(uint32_t seq)
{
	return sizeof(struct msg_hdr) + (seq * 613) % 3000;
}

static void test_many_senders(void)
{
	struct sender snd[MANY_SENDERS];
	int rx, i;

	memset(snd, 0, sizeof(snd));
	rx = rds_bound(0, NULL);
	ASSERT_SYS_OK(set_int_opt(rx, SOL_SOCKET, SO_RCVBUF, 8192));
	for (i = 0; i < MANY_SENDERS; i++) {
		snd[i].fd = rds_bound(1 + i, NULL);
		snd[i].id = node * 100 + i;
		snd[i].to = peer_port(0);
		snd[i].count = MANY_MSGS;
		snd[i].len = many_len;
	}
	sync_peer("bound");

	for (i = 0; i < MANY_SENDERS; i++)
		sender_start(&snd[i]);
	recv_streams(rx, MANY_SENDERS, MANY_MSGS, peer_node * 100,
		     case_port(1), MANY_MAX);
	for (i = 0; i < MANY_SENDERS; i++)
		sender_join(&snd[i], "sender");
	sync_peer("received");
	expect_empty(rx);
	for (i = 0; i < MANY_SENDERS; i++)
		close(snd[i].fd);
	close(rx);
}

/*
 * Both nodes send at full speed at once, on one socket each that also
 * receives what the other sends, with receive buffers small enough that
 * both directions congest: no deadlock, everything arrives in order.
 */
#define BOTH_MSGS	1000
#define BOTH_MAX	(sizeof(struct msg_hdr) + 65536)

static size_t both_len(uint32_t seq)
{
	if (seq % 50 == 49)
		return BOTH_MAX;
	return sizeof(struct msg_hdr) + (seq * 2741) % 16384;
}

static void test_both_full_speed(void)
{
	struct sender s;
	int fd;

	memset(&s, 0, sizeof(s));
	fd = rds_bound(0, NULL);
	make_room(fd, BOTH_MAX, 65536);
	s.fd = fd;
	s.id = node;
	s.to = peer_port(0);
	s.count = BOTH_MSGS;
	s.len = both_len;
	sync_peer("bound");

	sender_start(&s);
	recv_streams(fd, 1, BOTH_MSGS, peer_node, case_port(0), BOTH_MAX);
	sender_join(&s, "node");
	sync_peer("received");
	expect_empty(fd);
	close(fd);
}

/* ------------------------------------------------- congestion control */

#define CONG_MSG	1024
#define CONG_FILL_MS	20000

/* The sockets of a congestion case. */
struct cong {
	int sending;		/* this node sends, the other receives */
	int rx, rx2;		/* receiver: congested port, and another one */
	int tx, tx2;		/* sender: two sockets to the congested port */
	struct sockaddr_in r, r2;
	int sent;		/* messages taken before ENOBUFS */
};

/* Send stream message seq from fd; the sendto() result. */
static long cong_send(int fd, const struct sockaddr_in *to, uint32_t seq,
		      int flags)
{
	unsigned char buf[CONG_MSG];

	build_msg(buf, sizeof(buf), 1, seq);
	return sendto(fd, buf, sizeof(buf), flags, (struct sockaddr *)to,
		      sizeof(*to));
}

/*
 * Set up a congestion case with node 'sender' sending: the receiver binds
 * a port with a small SO_RCVBUF that it does not read, the sender (with
 * RDS_CONG_MONITOR if monitor) sends to it without blocking until the
 * congestion map update from the receiving host makes sendto() fail with
 * ENOBUFS.  Both nodes learn how many messages were taken.
 */
static void cong_start(struct cong *c, int sender, int monitor)
{
	long long start, deadline;
	long ret;
	int eagain = 0;

	memset(c, 0, sizeof(*c));
	c->sending = node == sender;
	c->rx = -1;
	c->rx2 = -1;
	c->tx = -1;
	c->tx2 = -1;
	if (c->sending) {
		c->tx = rds_bound(0, NULL);
		c->tx2 = rds_bound(1, NULL);
		c->r = peer_port(2);
		c->r2 = peer_port(3);
		if (monitor)
			ASSERT_SYS_OK(set_int_opt(c->tx, SOL_RDS,
						  RDS_CONG_MONITOR, 1));
	} else {
		c->rx = rds_bound(2, NULL);
		c->rx2 = rds_bound(3, NULL);
		ASSERT_SYS_OK(set_int_opt(c->rx, SOL_SOCKET, SO_RCVBUF, 4096));
	}
	sync_peer("bound");
	if (!c->sending) {
		c->sent = hear_peer();
		ASSERT_TRUE(c->sent > 0, "node %d reported no ENOBUFS",
			    peer_node);
		return;
	}

	start = rt_now_ms();
	deadline = start + CONG_FILL_MS;
	for (;;) {
		ret = cong_send(c->tx, &c->r, c->sent, MSG_DONTWAIT);
		if (ret == CONG_MSG) {
			c->sent++;
		} else if (ret < 0 && errno == ENOBUFS) {
			break;
		} else if (ret < 0 && errno == EAGAIN) {
			/* the send buffer is full of unacknowledged data */
			eagain++;
			rt_sleep_ms(5);
		} else {
			rt_fail("message %d: sendto: %ld (%s)", c->sent, ret,
				ret < 0 ? rt_errname(errno) : "short");
			tell_peer(-1);
			rt_abort();
		}
		if (rt_now_ms() > deadline) {
			rt_fail("no ENOBUFS in %d ms: %d messages of %d bytes, SO_RCVBUF 4096",
				CONG_FILL_MS, c->sent, CONG_MSG);
			tell_peer(-1);
			rt_abort();
		}
	}
	rt_diag("ENOBUFS after %d messages of %d bytes, %lld ms (%d EAGAIN)",
		c->sent, CONG_MSG, rt_now_ms() - start, eagain);
	tell_peer(c->sent);
}

/*
 * The receiver: messages 0 .. count - 1 of the congestion stream, in
 * order, from the sender's socket.
 */
static void cong_drain(struct cong *c, int first, int count)
{
	struct sockaddr_in from, want;
	unsigned char buf[CONG_MSG + 64];
	uint32_t seq;
	long n;
	int i;

	sin_set(&want, addr_peer, case_port(0));
	for (i = first; i < first + count; i++) {
		n = recv_msg(c->rx, buf, sizeof(buf), 0, &from, NULL);
		if (n < 0) {
			rt_fail("message %d of %d: recvmsg: %s", i,
				first + count, rt_errname(errno));
			rt_abort();
		}
		EXPECT_TRUE(same_sin(&from, &want), "message %d from %s, expected %s",
			    i, sin_str(&from), sin_str(&want));
		if (!check_msg(buf, n, 1, &seq, "congested port") ||
		    !EXPECT_EQ(seq, i))
			rt_abort();
	}
}

static void cong_end(struct cong *c)
{
	sync_peer("end");
	if (!c->sending) {
		expect_empty(c->rx);
		expect_empty(c->rx2);
	}
	if (c->rx >= 0)
		close(c->rx);
	if (c->rx2 >= 0)
		close(c->rx2);
	if (c->tx >= 0)
		close(c->tx);
	if (c->tx2 >= 0)
		close(c->tx2);
}

/*
 * Congestion across hosts: ENOBUFS for every sender to the congested port
 * (and none for another port of the same host); with RDS_CONG_MONITOR,
 * one RDS_CMSG_CONG_UPDATE naming the port once the receiver drained it;
 * then sending goes on; nothing was lost on the way.
 */
static void cong_enobufs_monitor(int sender)
{
	unsigned char buf[CONG_MSG + 64];
	struct sockaddr_in from;
	long long start;
	struct cong c;
	int rev;
	uint32_t seq;
	long n;

	cong_start(&c, sender, 1);
	if (c.sending) {
		/* The congestion is the port's, whoever sends to it ... */
		EXPECT_SYS_ERR(cong_send(c.tx2, &c.r, 0, MSG_DONTWAIT),
			       ENOBUFS);
		EXPECT_SYS_ERR(cong_send(c.tx, &c.r, c.sent, MSG_DONTWAIT),
			       ENOBUFS);
		/* ... and no other port's. */
		EXPECT_EQ(EXPECT_SYS_OK(cong_send(c.tx, &c.r2, 7, MSG_DONTWAIT)),
			  CONG_MSG);
		rev = poll_fd(c.tx, POLLIN, 0);
		if (rev & POLLIN)
			rt_diag("POLLIN on the monitoring sender before the drain");
		sync_peer("checked");
		sync_peer("drained");

		start = rt_now_ms();
		rev = poll_fd(c.tx, POLLIN, RCV_TIMEOUT_MS);
		if (!EXPECT_TRUE(rev & POLLIN,
				 "no POLLIN on the monitoring sender %d ms after the drain",
				 RCV_TIMEOUT_MS))
			rt_abort();
		rt_diag("notified %lld ms after the drain", rt_now_ms() - start);
		expect_cong_update(c.tx, c.r.sin_port);
		expect_empty(c.tx);

		/* Uncongested: the next message is taken. */
		start = rt_now_ms();
		while (cong_send(c.tx, &c.r, c.sent, MSG_DONTWAIT) != CONG_MSG) {
			if (!EXPECT_TRUE(errno == ENOBUFS || errno == EAGAIN,
					 "sendto after the drain: %s",
					 rt_errname(errno)) ||
			    !EXPECT_TRUE(rt_now_ms() - start < RCV_TIMEOUT_MS,
					 "still %s %d ms after the notification",
					 rt_errname(errno), RCV_TIMEOUT_MS))
				rt_abort();
			rt_sleep_ms(10);
		}
	} else {
		sync_peer("checked");
		/* the other port was never congested */
		n = recv_msg(c.rx2, buf, sizeof(buf), 0, &from, NULL);
		if (EXPECT_SYS_OK(n) >= 0 &&
		    check_msg(buf, n, 1, &seq, "uncongested port"))
			EXPECT_EQ(seq, 7);
		cong_drain(&c, 0, c.sent);
		sync_peer("drained");
		cong_drain(&c, c.sent, 1);
	}
	cong_end(&c);
}

/*
 * A blocking sender to a port congested across hosts waits, and goes on
 * once the receiver drains it; nothing is lost.
 */
struct blocked_send {
	struct cong *c;
	int pipe_w;
};

static void *blocked_send_main(void *arg)
{
	struct blocked_send *b = arg;
	long ret = cong_send(b->c->tx, &b->c->r, b->c->sent, 0);

	if (ret < 0)
		ret = -errno;
	if (write(b->pipe_w, &ret, sizeof(ret)) != sizeof(ret))
		_exit(RT_EXIT_FAIL);
	return NULL;
}

static void cong_blocking(int sender)
{
	struct blocked_send b;
	pthread_t thread;
	long long start;
	int pipefd[2];
	long result = 0;
	struct cong c;

	cong_start(&c, sender, 0);
	if (c.sending) {
		ASSERT_SYS_OK(pipe(pipefd));
		b.c = &c;
		b.pipe_w = pipefd[1];
		errno = pthread_create(&thread, NULL, blocked_send_main, &b);
		ASSERT_TRUE(!errno, "pthread_create: %s", rt_errname(errno));
		/* Still waiting while nobody reads ... */
		EXPECT_EQ(poll_fd(pipefd[0], POLLIN, 1000) & POLLIN, 0);
		sync_peer("blocked");
		/* ... and done once the receiver drained its queue. */
		start = rt_now_ms();
		if (!EXPECT_TRUE(poll_fd(pipefd[0], POLLIN, RCV_TIMEOUT_MS) & POLLIN,
				 "blocked sender still blocked %d ms after the drain began",
				 RCV_TIMEOUT_MS))
			rt_abort();
		rt_diag("the blocked sender went on %lld ms after the drain began",
			rt_now_ms() - start);
		EXPECT_EQ(read(pipefd[0], &result, sizeof(result)),
			  sizeof(result));
		if (result < 0)
			rt_fail("blocked sendto: %s", rt_errname(-result));
		EXPECT_EQ(result, CONG_MSG);
		pthread_join(thread, NULL);
		close(pipefd[0]);
		close(pipefd[1]);
	} else {
		sync_peer("blocked");
		cong_drain(&c, 0, c.sent + 1);
	}
	cong_end(&c);
}

static void test_cong_enobufs_monitor_1to2(void)
{
	cong_enobufs_monitor(1);
}

static void test_cong_enobufs_monitor_2to1(void)
{
	cong_enobufs_monitor(2);
}

static void test_cong_blocking_1to2(void)
{
	cong_blocking(1);
}

static void test_cong_blocking_2to1(void)
{
	cong_blocking(2);
}

/* ------------------------------------------------------- flow control */

/* The module set guest @k loaded ("ours", "distro"), from the bench. */
static const char *modules_of(int k)
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

/*
 * Run after the traffic cases, on the counters they left.  Our module
 * offers credits, and returns them (ib_tx_credit_updates) to every peer;
 * it spends credits only when the peer offered some, which only our module
 * does.  With RDS_CREDITS set (run_remote.sh --credits N: our receive ring
 * is N buffers, the distribution's net.rds.ib.flow_control is 1), the
 * cases above had to stop for credits many times: our sender then counts
 * ib_tx_credit_stall, the distribution's ib_tx_throttle.  That they all
 * passed shows the credits were returned; that these count shows they
 * were enforced.
 */
static void test_flow_control(void)
{
	const char *me = modules_of(node), *peer = modules_of(peer_node);
	int credits = getenv("RDS_CREDITS") ? atoi(getenv("RDS_CREDITS")) : 0;
	int fd = rds_socket();

	if (!strcmp(me, "ours")) {
		long long fc = rds_counter(fd, "ib_conn_flow_control");
		long long upd = rds_counter(fd, "ib_tx_credit_updates");
		long long stall = rds_counter(fd, "ib_tx_credit_stall");

		rt_diag("ib_conn_flow_control %lld", fc);
		rt_diag("ib_tx_credit_updates %lld", upd);
		rt_diag("ib_tx_credit_stall %lld", stall);
		EXPECT_TRUE(upd > 0, "no credits returned to the peer (%lld)", upd);
		if (!strcmp(peer, "ours")) {
			EXPECT_TRUE(fc > 0, "no connection with flow control (%lld)", fc);
			if (credits)
				EXPECT_TRUE(stall > 0, "no credit stall, ring %d",
					    credits);
		} else {
			EXPECT_EQ(fc, 0);	/* the distribution offers none */
		}
	} else if (!strcmp(me, "distro") && credits && !strcmp(peer, "ours")) {
		long long thr = rds_counter(fd, "ib_tx_throttle");

		rt_diag("distribution: ib_tx_throttle %lld", thr);
		EXPECT_TRUE(thr > 0, "the distribution never waited for our credits (%lld)", thr);
	} else {
		close(fd);
		sync_peer("done");
		rt_skip("nothing to check for %s against %s%s", me, peer,
			credits ? " with credits" : "");
	}
	close(fd);
	sync_peer("done");
}

/* ------------------------------------------------------------- driver */

#define CASE_T(name, secs)	{ #name, test_##name, secs }

static const struct rt_case cases[] = {
	CASE_T(transport_ib, 60),
	CASE_T(sizes_both_ways, 90),
	CASE_T(many_senders, 90),
	CASE_T(both_full_speed, 90),
	CASE_T(cong_enobufs_monitor_1to2, 90),
	CASE_T(cong_enobufs_monitor_2to1, 90),
	CASE_T(cong_blocking_1to2, 90),
	CASE_T(cong_blocking_2to1, 90),
	CASE_T(flow_control, 30),
};

static int parse_addr(const char *s, struct in_addr *a)
{
	return s && *s && inet_pton(AF_INET, s, a) == 1;
}

/* Write all of a short line, or fail. */
static int write_line(int fd, const char *line)
{
	size_t len = strlen(line);

	return write(fd, line, len) == (ssize_t)len ? 0 : -1;
}

/*
 * The control connection: node 1 accepts one from the peer's address,
 * node 2 connects, retrying while node 1 is not listening yet.
 */
static int ctl_connect(void)
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
		sin_set(&sin, addr_peer, ctl_port);
		for (;;) {
			fd = socket(AF_INET, SOCK_STREAM, 0);
			if (fd < 0)
				return -1;
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
static int ctl_hello(char *const *only)
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

static void bad_args(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-n NODE] [-a ADDR] [-p PEER] [-c PORT] [-l] [CASE...]\n",
		prog);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *modules = getenv("RDS_MODULES");
	const char *self = getenv("RDS_ADDR"), *peer = getenv("RDS_PEER_ADDR");
	const char *nodestr = getenv("RDS_NODE");
	unsigned int i;
	int fd, opt, ret;

	all_cases = cases;
	n_cases = ARRAY_SIZE(cases);
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
			for (i = 0; i < ARRAY_SIZE(cases); i++)
				printf("%s\n", cases[i].name);
			return 0;
		default:
			bad_args(argv[0]);
		}
	}
	node = nodestr ? atoi(nodestr) : 0;
	if ((node != 1 && node != 2) || !ctl_port)
		bad_args(argv[0]);
	peer_node = 3 - node;

	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (fd < 0) {
		int err = errno;

		if (modules && (!strcmp(modules, "ours") ||
				!strcmp(modules, "distro"))) {
			printf("1..1\n# socket(AF_RDS): %s\n", rt_errname(err));
			printf("not ok 1 - AF_RDS sockets (RDS_MODULES=%s)\n",
			       modules);
			return RT_EXIT_FAIL;
		}
		printf("1..0 # SKIP socket(AF_RDS): %s: no RDS module loaded\n",
		       rt_errname(err));
		return RT_EXIT_SKIP;
	}
	close(fd);
	if (!parse_addr(self, &addr_self) || !parse_addr(peer, &addr_peer)) {
		printf("1..0 # SKIP no address for %s (-a, -p, RDS_ADDR, RDS_PEER_ADDR)\n",
		       parse_addr(self, &addr_self) ? "the peer" : "this node");
		return RT_EXIT_SKIP;
	}
	inet_ntop(AF_INET, &addr_self, addr_self_str, sizeof(addr_self_str));
	inet_ntop(AF_INET, &addr_peer, addr_peer_str, sizeof(addr_peer_str));

	ctl_stash = mmap(NULL, sizeof(*ctl_stash), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ctl_stash == MAP_FAILED) {
		printf("Bail out! mmap: %s\n", rt_errname(errno));
		return RT_EXIT_FAIL;
	}
	memset(ctl_stash, 0, sizeof(*ctl_stash));
	rt_diag("node %d, %s, peer %s, control port %u", node, addr_self_str,
		addr_peer_str, ctl_port);
	ctl_fd = ctl_connect();
	if (ctl_fd < 0 || ctl_hello(argv + optind)) {
		printf("Bail out! no control connection with node %d (%s:%u)\n",
		       peer_node, node == 1 ? addr_self_str : addr_peer_str,
		       ctl_port);
		return RT_EXIT_FAIL;
	}
	ret = rt_run(cases, ARRAY_SIZE(cases), argv + optind);
	close(ctl_fd);
	return ret;
}
