// SPDX-License-Identifier: GPL-2.0
/*
 * rds_stream - a counted, checked stream of RDS messages between two hosts,
 * for the fault tests (rds_faults.sh): one end sends numbered messages at a
 * steady pace while a link, a module or an RDMA device goes away and comes
 * back, the other end checks what arrived.
 *
 *   rds_stream send -b ADDR:PORT -t ADDR:PORT -n COUNT [-i MS] [-w FILE]
 *		     [-T SECS] [-g FILE -m MORE] [-z]
 *   rds_stream recv -b ADDR:PORT -f ADDR:PORT [-T SECS] [-d SECS] [-r FILE]
 *		     [-P N]
 *
 * send: binds -b, sends messages 0 .. COUNT - 1 to -t, blocking, one every
 * -i ms (default 10), then an end marker that carries the count; then keeps
 * its socket open (closing it would drop what is still queued) until FILE
 * (-w) exists, which the receiving side creates once it has checked the
 * stream.  With -g, the count is not fixed: when FILE (-g) appears, the
 * next message's number K is noted, MORE (-m) messages more are sent, and
 * the end marker says that every message from K on must arrive.  Every
 * sendto() must take the whole message: RDS queues messages while a
 * connection is down and gives the sender no error.  Fails when the time
 * limit (-T, default 120 s) passes first.
 *
 * With -z, every message goes with MSG_ZEROCOPY (SO_ZEROCOPY, the cookie
 * its number), from one of ZC_RING buffers in turn, which start 100
 * bytes into a page: a buffer is reused only once the completion of its
 * last message came, and is written over the moment it comes.  Every
 * completion must come once, in order, before the sender ends (the
 * receiver sees any message the kernel still read after its completion
 * as damaged).
 *
 * recv: binds -b (creating FILE (-r) once bound), and receives until the end
 * marker, or for -d seconds from the first message.  Every message must
 * come from -f, be intact (its length, a header with its number, a pattern
 * derived from the stream and the number) and have a higher number than
 * the one before: no duplicate, nothing out of order.  At the end marker,
 * every message from K (0 without -g) to COUNT - 1 must have arrived; with
 * -d and no end marker, every message from 0 up to the last one received.
 * Fails when the end marker does not come within -T seconds (default 120).
 * With -P it prints "progress: N messages" when the N-th has arrived.
 *
 * Each prints one summary line, then a line of counts for "make
 * reliability" (tools/testing/reliability.sh), KEY=VALUE fields after
 * "# stream_diag ":
 *
 *   # stream_diag role=send sent=N
 *   # stream_diag role=recv received=N due=N missing=N duplicates=N
 *     out_of_order=N damaged=N foreign=N
 *
 * (one line; due: the messages that had to arrive, when known).  Exit
 * status 0 iff the stream was right.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <linux/rds.h>

#ifndef AF_RDS
#define AF_RDS 21
#endif

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define STREAM_MAGIC	0x52445353U	/* "SSDR" */
#define F_END		1
#define MAX_MSGS	(1 << 20)
#define MAX_LEN		20000
#define ZC_RING		8
#define ZC_SLOT		(MAX_LEN + 4096)

struct stream_hdr {
	uint32_t magic;
	uint32_t seq;
	uint32_t len;		/* of the whole message */
	uint32_t flags;		/* F_END */
	uint32_t count;		/* end marker: messages sent */
	uint32_t need_from;	/* end marker: every one from here on is due */
};

/* Sizes in turn: small, one 4 KiB fragment, just over, several. */
static const size_t sizes[] = { 100, 1000, 4096, 4097, 9000, MAX_LEN };

static volatile sig_atomic_t timed_out;

/* For the diag line: what was sent, what the receiver saw. */
static long n_sent, n_received, n_due = -1, n_missing;
static long n_dup, n_order, n_damaged, n_foreign;
/* -z: completions that came, and those that came twice or out of order. */
static long zc_done = -1, zc_bad;

static void on_alarm(int sig)
{
	(void)sig;
	timed_out = 1;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static uint32_t mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

/* The payload of message seq: a hash of the stream, the number, the word. */
static void fill_payload(unsigned char *buf, size_t len, uint32_t stream,
			 uint32_t seq)
{
	uint32_t seed = mix32(mix32(stream) ^ seq), w = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!(i & 3))
			w = mix32(seed + (uint32_t)(i >> 2) * 0x9e3779b9U);
		buf[i] = (unsigned char)(w >> (8 * (i & 3)));
	}
}

/* The stream's identity: both ends' addresses, so both compute it. */
static uint32_t stream_id(const struct sockaddr_in *from,
			  const struct sockaddr_in *to)
{
	return mix32(from->sin_addr.s_addr ^ mix32(from->sin_port) ^
		     mix32(to->sin_addr.s_addr + to->sin_port));
}

static int parse_sin(const char *s, struct sockaddr_in *sin)
{
	char host[64];
	const char *colon = strrchr(s, ':');

	if (!colon || colon - s >= (long)sizeof(host))
		return -1;
	memcpy(host, s, colon - s);
	host[colon - s] = 0;
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons((unsigned short)atoi(colon + 1));
	return inet_pton(AF_INET, host, &sin->sin_addr) == 1 && sin->sin_port ?
	       0 : -1;
}

static const char *sin_str(const struct sockaddr_in *sin)
{
	static char buf[2][64];
	static int which;
	char a[INET_ADDRSTRLEN];

	which ^= 1;
	inet_ntop(AF_INET, &sin->sin_addr, a, sizeof(a));
	snprintf(buf[which], sizeof(buf[which]), "%s:%u", a,
		 ntohs(sin->sin_port));
	return buf[which];
}

static int bound_socket(const struct sockaddr_in *sin, int sndbuf, int rcvbuf)
{
	int fd = socket(AF_RDS, SOCK_SEQPACKET, 0);

	if (fd < 0) {
		printf("socket(AF_RDS): %s\n", strerror(errno));
		return -1;
	}
	/* Generous buffers: the stream is about faults, not congestion. */
	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	if (bind(fd, (const struct sockaddr *)sin, sizeof(*sin))) {
		printf("bind %s: %s\n", sin_str(sin), strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

struct opts {
	struct sockaddr_in bind, peer;
	long count, more, interval, timeout, duration, progress;
	const char *gate, *wait, *ready;
	int zcopy;
};

/* ------------------------------------------------------------------ send */

/* -z: the buffers; completions up to zc_next - 1 came. */
static unsigned char *zc_ring;
static uint32_t zc_next;

static unsigned char *zc_buf(uint32_t seq)
{
	return zc_ring + (size_t)(seq % ZC_RING) * ZC_SLOT + 100;
}

static ssize_t zc_sendto(int fd, const struct opts *o, const void *buf,
			 size_t len, uint32_t cookie)
{
	union {
		char b[CMSG_SPACE(sizeof(uint32_t))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { (void *)buf, len };
	struct msghdr m = {
		.msg_name = (void *)&o->peer,
		.msg_namelen = sizeof(o->peer),
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.b,
		.msg_controllen = sizeof(ctl.b),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	memset(&ctl, 0, sizeof(ctl));
	c->cmsg_level = SOL_RDS;
	c->cmsg_type = RDS_CMSG_ZCOPY_COOKIE;
	c->cmsg_len = CMSG_LEN(sizeof(cookie));
	memcpy(CMSG_DATA(c), &cookie, sizeof(cookie));
	return sendmsg(fd, &m, MSG_ZEROCOPY);
}

/*
 * Take the completions until zc_next reaches stop, waiting for them (0:
 * only those there now).  Each buffer is written over as its completion
 * comes.  Return: 0, or -1 when the time limit passed or recvmsg failed.
 */
static int zc_reap(int fd, uint32_t stop, int wait)
{
	union {
		char b[CMSG_SPACE(sizeof(struct rds_zcopy_cookies))];
		struct cmsghdr align;
	} ctl;
	struct rds_zcopy_cookies z;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint32_t i;
	char c;

	do {
		struct iovec iov = { &c, 1 };
		struct msghdr m = {
			.msg_iov = &iov,
			.msg_iovlen = 1,
			.msg_control = ctl.b,
			.msg_controllen = sizeof(ctl.b),
		};
		struct cmsghdr *cm;

		if (recvmsg(fd, &m, MSG_DONTWAIT) < 0) {
			if (errno != EAGAIN && errno != EINTR) {
				printf("send: FAIL: recvmsg for completions: %s\n",
				       strerror(errno));
				return -1;
			}
			if (!wait)
				return 0;
			if (timed_out) {
				printf("send: FAIL: completions from %u on missing at the limit\n",
				       zc_next);
				return -1;
			}
			poll(&p, 1, 100);
			continue;
		}
		for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
			if (cm->cmsg_level != SOL_RDS ||
			    cm->cmsg_type != RDS_CMSG_ZCOPY_COMPLETION)
				continue;
			memcpy(&z, CMSG_DATA(cm), sizeof(z));
			for (i = 0; i < z.num && i < RDS_MAX_ZCOOKIES; i++) {
				if (z.cookies[i] != zc_next) {
					if (!zc_bad)
						printf("send: completion of %u, expected %u\n",
						       z.cookies[i], zc_next);
					zc_bad++;
					continue;
				}
				memset(zc_buf(zc_next), 0xee, MAX_LEN);
				zc_next++;
				zc_done++;
			}
		}
	} while (zc_next < stop);
	return 0;
}

static int send_one(int fd, const struct opts *o, uint32_t stream,
		    unsigned char *buf, uint32_t seq, const struct stream_hdr *end,
		    long long *longest)
{
	struct stream_hdr h = { STREAM_MAGIC, seq, 0, 0, 0, 0 };
	size_t len = sizes[seq % ARRAY_SIZE(sizes)];
	long long t0;
	ssize_t n;

	if (end) {
		h = *end;
		len = sizeof(h) + 16;
	}
	h.len = (uint32_t)len;
	if (o->zcopy) {
		if (seq >= ZC_RING && zc_reap(fd, seq - ZC_RING + 1, 1))
			return -1;
		buf = zc_buf(seq);
	}
	memcpy(buf, &h, sizeof(h));
	fill_payload(buf + sizeof(h), len - sizeof(h), stream, seq);
	t0 = now_ms();
	if (o->zcopy)
		n = zc_sendto(fd, o, buf, len, seq);
	else
		n = sendto(fd, buf, len, 0, (const struct sockaddr *)&o->peer,
			   sizeof(o->peer));
	t0 = now_ms() - t0;
	if (t0 > *longest)
		*longest = t0;
	if (n == (ssize_t)len)
		return 0;
	if (timed_out)
		printf("send: FAIL: time limit of %ld s passed in message %u's sendto\n",
		       o->timeout, seq);
	else
		printf("send: FAIL: message %u (%zu bytes): sendto returned %zd (%s)\n",
		       seq, len, n, n < 0 ? strerror(errno) : "short");
	return -1;
}

static int do_send(const struct opts *o)
{
	uint32_t stream = stream_id(&o->bind, &o->peer), seq, target;
	struct stream_hdr end = { STREAM_MAGIC, 0, 0, F_END, 0, 0 };
	long long start = now_ms(), longest = 0;
	unsigned char *buf = malloc(MAX_LEN);
	int fd, gated = 0;

	if (!buf)
		return 1;
	fd = bound_socket(&o->bind, 4 * MAX_LEN + 65536, 65536);
	if (fd < 0)
		return 1;
	if (o->zcopy) {
		int one = 1;

		zc_ring = mmap(NULL, ZC_RING * ZC_SLOT, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (zc_ring == MAP_FAILED ||
		    setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one))) {
			printf("send: FAIL: zero-copy setup: %s\n", strerror(errno));
			return 1;
		}
		zc_done = 0;
	}
	target = o->gate ? MAX_MSGS - 1 : (uint32_t)o->count;
	for (seq = 0; seq < target; seq++) {
		if (o->gate && !gated && !access(o->gate, F_OK)) {
			gated = 1;
			end.need_from = seq;
			target = seq + o->more;
		}
		if (timed_out) {
			printf("send: FAIL: time limit of %ld s passed at message %u%s\n",
			       o->timeout, seq,
			       o->gate && !gated ? " (gate never opened)" : "");
			return 1;
		}
		if (send_one(fd, o, stream, buf, seq, NULL, &longest))
			return 1;
		n_sent++;
		if (o->interval)
			sleep_ms(o->interval);
	}
	end.seq = seq;
	end.count = seq;
	if (send_one(fd, o, stream, buf, seq, &end, &longest))
		return 1;
	printf("send: %u messages and the end marker to %s in %lld ms",
	       seq, sin_str(&o->peer), now_ms() - start);
	if (o->gate)
		printf(", gate opened at message %u", end.need_from);
	printf(", longest sendto %lld ms", longest);
	fflush(stdout);
	/* Every completion, the end marker's too, before the sender ends. */
	if (o->zcopy) {
		if (zc_reap(fd, seq + 1, 1))
			return 1;
		usleep(100 * 1000);
		if (zc_reap(fd, seq + 1, 0) || zc_bad) {
			printf("; FAIL: %ld completions twice or out of order\n",
			       zc_bad);
			return 1;
		}
		printf(", %ld completions in order, once each", zc_done);
	}
	while (o->wait && access(o->wait, F_OK)) {
		if (timed_out) {
			printf("; FAIL: %s did not appear in %ld s\n", o->wait,
			       o->timeout);
			return 1;
		}
		sleep_ms(100);
	}
	printf("\n");
	close(fd);
	return 0;
}

/* ------------------------------------------------------------------ recv */

static int do_recv(const struct opts *o)
{
	uint32_t stream = stream_id(&o->peer, &o->bind);
	struct timeval tv = { 0, 500 * 1000 };
	unsigned char *buf = malloc(MAX_LEN + 64), *want = malloc(MAX_LEN);
	unsigned char *seen = calloc(MAX_MSGS, 1);
	long long start, deadline;
	struct stream_hdr h = { 0 }, end = { 0 };
	struct sockaddr_in from;
	long received = 0, bad = 0, missing = 0, first_missing = -1;
	long last = -1, first = -1, i;
	long long prev = 0, gap = 0;
	long gap_after = -1;
	int fd, got_end = 0;
	FILE *f;

	if (!buf || !want || !seen)
		return 1;
	fd = bound_socket(&o->bind, 65536, 8 << 20);
	if (fd < 0)
		return 1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (o->ready) {
		f = fopen(o->ready, "w");
		if (f)
			fclose(f);
	}
	start = now_ms();
	deadline = start + 1000 * o->timeout;
	while (!got_end && now_ms() < deadline) {
		struct iovec iov = { buf, MAX_LEN + 64 };
		struct msghdr msg = {
			.msg_name = &from,
			.msg_namelen = sizeof(from),
			.msg_iov = &iov,
			.msg_iovlen = 1,
		};
		ssize_t n = recvmsg(fd, &msg, 0);

		if (n < 0) {
			if (errno == EAGAIN || errno == ETIMEDOUT ||
			    errno == EINTR)
				continue;
			printf("recv: FAIL: recvmsg: %s\n", strerror(errno));
			return 1;
		}
		if (from.sin_addr.s_addr != o->peer.sin_addr.s_addr ||
		    from.sin_port != o->peer.sin_port) {
			printf("recv: a message from %s, not from %s\n",
			       sin_str(&from), sin_str(&o->peer));
			n_foreign++;
			bad++;
			continue;
		}
		memcpy(&h, buf, n >= (ssize_t)sizeof(h) ? sizeof(h) : 0);
		if (n < (ssize_t)sizeof(h) || h.magic != STREAM_MAGIC ||
		    h.len != n || h.seq >= MAX_MSGS ||
		    (msg.msg_flags & MSG_TRUNC)) {
			printf("recv: a damaged message of %zd bytes after message %ld\n",
			       n, last);
			n_damaged++;
			bad++;
			continue;
		}
		fill_payload(want, n - sizeof(h), stream, h.seq);
		if (memcmp(buf + sizeof(h), want, n - sizeof(h))) {
			printf("recv: message %u (%zd bytes) has damaged contents\n",
			       h.seq, n);
			n_damaged++;
			bad++;
			continue;
		}
		if ((long)h.seq <= last) {
			printf("recv: message %u after message %ld: %s\n", h.seq,
			       last, seen[h.seq] ? "a duplicate" : "out of order");
			if (seen[h.seq])
				n_dup++;
			else
				n_order++;
			bad++;
			continue;
		}
		if (bad > 10)
			break;		/* reported enough */
		if (h.flags & F_END) {
			end = h;
			got_end = 1;
			break;
		}
		seen[h.seq] = 1;
		received++;
		if (prev && now_ms() - prev > gap) {
			gap = now_ms() - prev;
			gap_after = last;
		}
		prev = now_ms();
		if (received == o->progress)
			printf("progress: %ld messages\n", received);
		if (first < 0) {
			first = h.seq;
			/* -d counts from the first message */
			if (o->duration &&
			    now_ms() + 1000 * o->duration < deadline)
				deadline = now_ms() + 1000 * o->duration;
		}
		last = h.seq;
	}

	n_received = received;
	printf("recv: %ld messages from %s", received, sin_str(&o->peer));
	if (received)
		printf(" (%ld .. %ld)", first, last);
	printf(" in %lld ms", now_ms() - start);
	if (gap_after >= 0)
		printf(", longest pause %lld ms (after message %ld)", gap,
		       gap_after);
	if (got_end)
		printf(", end marker: %u sent, due from %u", end.count,
		       end.need_from);
	/* What had to arrive: [from, to). */
	if (got_end) {
		for (i = end.need_from; i < (long)end.count && i < MAX_MSGS; i++)
			if (!seen[i] && missing++ == 0)
				first_missing = i;
		n_due = (long)end.count - (long)end.need_from;
		n_missing = missing;
		if (last >= (long)end.count) {
			printf("; FAIL: message %ld is beyond the end\n", last);
			return 1;
		}
	} else if (o->duration) {
		for (i = 0; i <= last; i++)
			if (!seen[i] && missing++ == 0)
				first_missing = i;
		n_due = last + 1;
	}
	n_missing = missing;
	if (bad) {
		printf("; FAIL: %ld bad messages (see above)\n", bad);
		return 1;
	}
	if (!got_end && !o->duration) {
		printf("; FAIL: no end marker in %ld s\n", o->timeout);
		return 1;
	}
	if (!got_end && !received) {
		printf("; FAIL: nothing arrived in %ld s\n", o->timeout);
		return 1;
	}
	if (missing) {
		printf("; FAIL: %ld messages missing, the first %ld\n", missing,
		       first_missing);
		return 1;
	}
	printf("; all there, in order, once each\n");
	close(fd);
	return 0;
}

static void bad_args(void)
{
	fprintf(stderr,
		"usage: rds_stream send -b ADDR:PORT -t ADDR:PORT (-n COUNT | -g FILE -m MORE)\n"
		"                       [-i MS] [-w FILE] [-T SECS] [-z]\n"
		"       rds_stream recv -b ADDR:PORT -f ADDR:PORT [-T SECS] [-d SECS] [-r FILE] [-P N]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct opts o = { .interval = 10, .timeout = 120 };
	struct sigaction sa;
	int sending, opt, have_bind = 0, have_peer = 0, ret;

	if (argc < 2)
		bad_args();
	sending = !strcmp(argv[1], "send");
	if (!sending && strcmp(argv[1], "recv"))
		bad_args();
	optind = 2;
	while ((opt = getopt(argc, argv, "b:t:f:n:m:i:T:d:g:w:r:P:z")) != -1) {
		switch (opt) {
		case 'b':
			if (parse_sin(optarg, &o.bind))
				bad_args();
			have_bind = 1;
			break;
		case 't':
		case 'f':
			if (parse_sin(optarg, &o.peer))
				bad_args();
			have_peer = 1;
			break;
		case 'n':
			o.count = atol(optarg);
			break;
		case 'm':
			o.more = atol(optarg);
			break;
		case 'i':
			o.interval = atol(optarg);
			break;
		case 'T':
			o.timeout = atol(optarg);
			break;
		case 'd':
			o.duration = atol(optarg);
			break;
		case 'g':
			o.gate = optarg;
			break;
		case 'w':
			o.wait = optarg;
			break;
		case 'r':
			o.ready = optarg;
			break;
		case 'P':
			o.progress = atol(optarg);
			break;
		case 'z':
			o.zcopy = 1;
			break;
		default:
			bad_args();
		}
	}
	if (!have_bind || !have_peer || o.timeout <= 0 || o.interval < 0 ||
	    (sending && (o.gate ? o.more <= 0 : o.count <= 0)) ||
	    o.count >= MAX_MSGS || o.more >= MAX_MSGS / 2)
		bad_args();

	/* The limit interrupts a blocked sendto() (no SA_RESTART). */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (sending) {
		alarm(o.timeout);
		ret = do_send(&o);
		printf("# stream_diag role=send sent=%ld", n_sent);
		if (zc_done >= 0)
			printf(" zc_done=%ld zc_bad=%ld", zc_done, zc_bad);
		printf("\n");
		return ret;
	}
	ret = do_recv(&o);
	printf("# stream_diag role=recv received=%ld due=%ld missing=%ld ",
	       n_received, n_due, n_missing);
	printf("duplicates=%ld out_of_order=%ld damaged=%ld foreign=%ld\n",
	       n_dup, n_order, n_damaged, n_foreign);
	return ret;
}
