// SPDX-License-Identifier: GPL-2.0
/*
 * rds_remote_data.c - rds_remote's messages of the streams, and its cases
 * of data: the transport, sizes both ways, many senders, both nodes at
 * full speed.
 */
#include "rds_remote.h"

#define BIG_MSG		(1 << 20)	/* the largest message RDS takes */

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

void build_msg(unsigned char *buf, size_t len, uint32_t sender,
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
int check_msg(const unsigned char *buf, long n, uint32_t sender,
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

/* ----------------------------------------------------------- the cases */

/* A socket bound to the RDMA device's address is served by IB. */
void test_transport_ib(void)
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

void test_sizes_both_ways(void)
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

/* A sender of count messages of len(seq) bytes from fd, to the peer's port 0. */
static void sender_init(struct sender *s, int fd, uint32_t id, int count,
			size_t (*len)(uint32_t seq))
{
	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->id = id;
	s->to = peer_port(0);
	s->count = count;
	s->len = len;
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

void test_many_senders(void)
{
	struct sender snd[MANY_SENDERS];
	int rx, i;

	memset(snd, 0, sizeof(snd));
	rx = rds_bound(0, NULL);
	ASSERT_SYS_OK(set_int_opt(rx, SOL_SOCKET, SO_RCVBUF, 8192));
	for (i = 0; i < MANY_SENDERS; i++)
		sender_init(&snd[i], rds_bound(1 + i, NULL), node * 100 + i,
			    MANY_MSGS, many_len);
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

void test_both_full_speed(void)
{
	struct sender s;
	int fd;

	memset(&s, 0, sizeof(s));
	fd = rds_bound(0, NULL);
	make_room(fd, BOTH_MAX, 65536);
	sender_init(&s, fd, node, BOTH_MSGS, both_len);
	sync_peer("bound");

	sender_start(&s);
	recv_streams(fd, 1, BOTH_MSGS, peer_node, case_port(0), BOTH_MAX);
	sender_join(&s, "node");
	sync_peer("received");
	expect_empty(fd);
	close(fd);
}

/*
 * Two threads send 64 KiB messages on one socket whose send buffer holds
 * two of them (SO_SNDBUF 128 KiB): both block for room again and again.
 * A room that frees wakes them both, one takes it and the other sleeps
 * again; the next room must wake that one too, however the wake-ups fell,
 * until both have sent everything.  A writer left asleep would end its
 * send with EAGAIN after SO_SNDTIMEO.  Both nodes at once.
 */
#define WRITERS		2
#define WRITER_MSGS	40
#define WRITER_LEN	(64 * 1024)
#define WRITER_SNDBUF	(128 * 1024)

static size_t writer_len(uint32_t seq)
{
	(void)seq;
	return WRITER_LEN;
}

/* count messages of each of n ids from one port: in order, once each */
static void recv_ids(int fd, int n, int count, uint32_t first_id,
		     unsigned short port, size_t max)
{
	unsigned char *buf = xmalloc(max + 64);
	int next[WRITERS] = { 0 }, got, bad = 0, flags, i;
	struct sockaddr_in from;
	struct msg_hdr h;
	uint32_t seq;
	long len;

	for (got = 0; got < n * count && bad <= 10; got++) {
		len = recv_msg(fd, buf, max + 64, 0, &from, &flags);
		if (len < 0) {
			rt_fail("after %d of %d messages: recvmsg: %s", got,
				n * count, rt_errname(errno));
			break;
		}
		i = -1;
		if (len >= (long)sizeof(h)) {
			memcpy(&h, buf, sizeof(h));
			i = (int)(h.sender - first_id);
		}
		if (from.sin_addr.s_addr != addr_peer.s_addr ||
		    ntohs(from.sin_port) != port || i < 0 || i >= n) {
			rt_fail("a message of %ld bytes from %s, not from a writer",
				len, sin_str(&from));
			bad++;
		} else if (!check_msg(buf, len, first_id + i, &seq, "received")) {
			bad++;
		} else if (seq != (uint32_t)next[i]++) {
			rt_fail("writer %u: message %u where %d was due",
				first_id + i, seq, next[i] - 1);
			bad++;
		}
	}
	for (i = 0; i < n; i++)
		EXPECT_TRUE(next[i] == count, "writer %u: %d of %d messages arrived",
			    first_id + i, next[i], count);
	EXPECT_EQ(bad, 0);
	free(buf);
}

void test_two_writers(void)
{
	struct timeval tv = { .tv_sec = 30 };
	struct sender w[WRITERS];
	int rx, tx, i;

	memset(w, 0, sizeof(w));
	rx = rds_bound(0, NULL);
	make_room(rx, WRITER_LEN + 64, 0);
	tx = rds_bound(1, NULL);
	ASSERT_SYS_OK(set_int_opt(tx, SOL_SOCKET, SO_SNDBUF, WRITER_SNDBUF));
	ASSERT_SYS_OK(setsockopt(tx, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)));
	for (i = 0; i < WRITERS; i++)
		sender_init(&w[i], tx, node * 100 + i, WRITER_MSGS, writer_len);
	sync_peer("bound");

	for (i = 0; i < WRITERS; i++)
		sender_start(&w[i]);
	recv_ids(rx, WRITERS, WRITER_MSGS, peer_node * 100, case_port(1),
		 WRITER_LEN);
	for (i = 0; i < WRITERS; i++)
		sender_join(&w[i], "writer");
	sync_peer("received");
	close(tx);
	close(rx);
}
