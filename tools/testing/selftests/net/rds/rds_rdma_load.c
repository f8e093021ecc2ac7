// SPDX-License-Identifier: GPL-2.0
/*
 * rds_rdma_load - RDMA cycles between two RDS sockets for as long as asked,
 * through whatever faults happen meanwhile, counting every operation's
 * outcome (rds_storm.sh runs several pairs at once, one process a socket).
 *
 *   rds_rdma_load owner -b ADDR:PORT -t ADDR:PORT [-m] [-s FILE] [-T SECS]
 *		[-F]
 *   rds_rdma_load init -b ADDR:PORT -t ADDR:PORT [-d SECS] [-s FILE]
 *		[-T SECS] [-F]
 *
 * The owner keeps SLOTS requests out: for each it registers a slot of its
 * buffer (RDS_GET_MR, or with -m RDS_CMSG_RDMA_MAP on the request itself),
 * and sends a request (REQ) with the cookie, the direction and a pattern
 * seed; for a READ it fills the slot with the pattern first.  The
 * initiator (init) answers each with one RDMA (RDS_RDMA_NOTIFY_ME, the
 * request's number as token) and an ACK message, and for each status
 * notification sends a DONE with the status.  On a DONE the owner checks
 * a WRITE that succeeded byte for byte, releases the MR (RDS_FREE_MR) and
 * sends the next request.
 *
 * What must hold, else the exit status is 1 and the summary says why:
 *  - every plain message (REQ, DONE) arrives once and in order: each
 *    direction numbers its own, the receiver checks them consecutive;
 *  - every RDMA submitted gets exactly one notification: none for a token
 *    that has none pending (a second, or an unknown one), none missing
 *    when the run ends (waited for up to 60 s), its status one of the
 *    RDS_RDMA_* values;
 *  - an ACK message (it travels with its RDMA) arrives at most once;
 *  - a WRITE that reported SUCCESS left exactly its pattern in the
 *    owner's slot, a READ that did brought exactly the owner's pattern;
 *  - after -d SECS of load the initiator asks for the end but first waits
 *    (60 s at most) for one more RDMA that succeeds: the pair works again
 *    after the faults;
 *  - at the end each side's VmPin (/proc/self/status: the pages RDS
 *    pinned and charged to the process) is back to 0 within 15 s, with
 *    the socket still open: the owner after releasing its last MR, the
 *    initiator after its last notification.
 *
 * With -s FILE a side expects its peer to be killed: once FILE exists it
 * stops, waits for the notifications of what it has in flight (init) or
 * releases its MRs (owner), checks as above, and ends without the final
 * handshake.  A side whose peer was SIGKILLed still sees its own plain
 * messages checked.
 *
 * The last line on stdout is the summary: "load: ..." with the counts of
 * requests, RDMAs and statuses.  The line before it gives counts for
 * "make reliability" (tools/testing/reliability.sh), KEY=VALUE fields:
 *
 *   # load_diag role=ROLE rdmas=N notes=N success=N msgs_sent=N
 *     msgs_received=N msgs_lost=N msgs_reordered=N vmpin_kb=N errors=N
 *
 * (one line): RDMAs submitted and notifications received (init), or
 * DONEs taken and, of them, SUCCESS (owner); the numbered plain messages
 * sent and received, those missing from the sequence and those that came
 * again or late; VmPin at the end (-1: not read).  -T SECS bounds the
 * whole run (default 240).
 *
 * -F: the kernel fails some of its allocations on purpose (rds_storm.sh's
 * slab_storm).  A sendmsg() or recvmsg() that fails with ENOMEM is then
 * made again, as after ENOBUFS, and counted ("enomem" in the summary);
 * it must have had no effect, which the numbering of the plain messages
 * checks (a message queued by a call that failed arrives twice).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <linux/rds.h>

#include "rds_test.h"

#ifndef AF_RDS
#define AF_RDS		21
#endif
#ifndef SOL_RDS
#define SOL_RDS		276
#endif

#define SLOTS		4
#define SLOT_LEN	(3 * 4096 + 512)	/* not page aligned either */
#define SLOT_STRIDE	(4 * 4096)
#define SLOT_OFF	256	/* the cookie's page offset matters */
#define MAX_SEQ		(1U << 20)
#define NSTATUS		(RDS_RDMA_OTHER_ERROR + 1)
#define DRAIN_MS	60000
#define PIN_MS		15000
#define MAGIC		0x52444d4cU	/* "RDML" */

enum { M_REQ = 1, M_ACK, M_DONE, M_STOP, M_STOPPED, M_END, M_FIN, M_HELLO };

struct lmsg {
	uint32_t magic;
	uint32_t kind;
	uint32_t seq;		/* REQ: request; DONE: its own number */
	uint32_t req;		/* ACK, DONE: the request; STOPPED: last */
	uint32_t slot;
	uint32_t write;
	uint32_t seed;
	int32_t status;		/* DONE: the notification's status */
	uint64_t cookie;	/* REQ: 0 with -m (RDS_CMSG_RDMA_DEST) */
	uint64_t len;
};

struct slot {
	int busy;
	uint32_t req;
	uint32_t seed;
	int write;
	uint64_t cookie;
};

static int fd = -1;
static struct sockaddr_in peer;
static unsigned char *buf;
static struct slot slots[SLOTS];
static unsigned char *acked;	/* ACKs per request (owner) */
static unsigned char *pending;	/* RDMAs waiting for a note (init) */
static unsigned long nstatus[NSTATUS], bad_status, errors, nacks;
static unsigned long submitted, notes, reqs, dones, send_retries, npending;
static uint32_t next_seq = 1, expect_seq = 1;	/* plain messages */
static unsigned long msgs_rx, msgs_lost, msgs_reordered;
static long vmpin_end = -1;
static const char *stop_file;
static int use_map;
static int faulty;		/* -F: ENOMEM is expected */
static const struct timeval send_wait = { .tv_sec = 5 };
static unsigned long enomem;

static void fail(const char *fmt, ...)
{
	va_list ap;

	errors++;
	printf("# error: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static int parse_addr(const char *s, struct sockaddr_in *sin)
{
	char host[64];
	const char *colon = strrchr(s, ':');

	if (!colon || colon - s >= (long)sizeof(host))
		return -1;
	memcpy(host, s, colon - s);
	host[colon - s] = '\0';
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(atoi(colon + 1));
	return inet_pton(AF_INET, host, &sin->sin_addr) == 1 ? 0 : -1;
}

static unsigned char *slot_buf(int s)
{
	return buf + s * SLOT_STRIDE + SLOT_OFF;
}

static unsigned char pattern(uint32_t seed, size_t i)
{
	return (seed * 131 + i * 7 + (i >> 8)) & 0xff;
}

static void fill(unsigned char *p, uint32_t seed)
{
	size_t i;

	for (i = 0; i < SLOT_LEN; i++)
		p[i] = pattern(seed, i);
}

/* Offset of the first byte that differs from the pattern, or -1. */
static long differs(const unsigned char *p, uint32_t seed)
{
	size_t i;

	for (i = 0; i < SLOT_LEN; i++)
		if (p[i] != pattern(seed, i))
			return i;
	return -1;
}

static long vm_pin_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static void check_unpinned(const char *who)
{
	long t0 = now_ms(), kb;

	while ((kb = vm_pin_kb()) != 0 && now_ms() - t0 < PIN_MS)
		usleep(100000);
	vmpin_end = kb;
	if (kb != 0)
		fail("%s: VmPin %ld kB %d s after the last operation", who,
		     kb, PIN_MS / 1000);
}

/*
 * Send a message, with an optional control message; retry while the
 * socket is congested or its buffer full.  Returns 0 or the errno.
 */
static int send_msg(struct lmsg *m, int level, int type, const void *cm,
		    size_t cmlen)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct rds_rdma_args))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { m, sizeof(*m) };
	struct msghdr mh = {
		.msg_name = &peer, .msg_namelen = sizeof(peer),
		.msg_iov = &iov, .msg_iovlen = 1,
	};
	struct cmsghdr *c;
	long t0 = now_ms();

	m->magic = MAGIC;
	if (cm) {
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(cmlen);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = level;
		c->cmsg_type = type;
		c->cmsg_len = CMSG_LEN(cmlen);
		memcpy(CMSG_DATA(c), cm, cmlen);
	}
	for (;;) {
		if (sendmsg(fd, &mh, 0) >= 0)
			return 0;
		if (errno == ENOMEM && faulty)
			enomem++;
		else if ((errno != ENOBUFS && errno != EAGAIN &&
			  errno != EINTR && errno != ETIMEDOUT) ||
			 now_ms() - t0 > 120000L * rt_time_scale())
			return errno;
		send_retries++;
		usleep(10000);
	}
}

static void send_plain(uint32_t kind, uint32_t req, int32_t status)
{
	struct lmsg m = { .kind = kind, .seq = next_seq++, .req = req,
			  .status = status };
	int err = send_msg(&m, 0, 0, NULL, 0);

	if (err)
		fail("send of kind %u: %s", kind, strerror(err));
}

/* ----------------------------------------------------------------- owner */

static void owner_release(int s)
{
	struct rds_free_mr_args f = { .cookie = slots[s].cookie };

	if (setsockopt(fd, SOL_RDS, RDS_FREE_MR, &f, sizeof(f)))
		fail("RDS_FREE_MR of request %u: %s", slots[s].req,
		     strerror(errno));
	slots[s].busy = 0;
}

/* Register slot s and send its request; 0, or -1 to try again later. */
static int owner_request(int s)
{
	struct slot *sl = &slots[s];
	unsigned char *p = slot_buf(s);
	struct rds_get_mr_args a = {
		.vec = { (uintptr_t)p, SLOT_LEN },
		.cookie_addr = (uintptr_t)&sl->cookie,
		.flags = RDS_RDMA_INVALIDATE,
	};
	struct lmsg m = { .kind = M_REQ, .slot = s, .len = SLOT_LEN };
	int err;

	sl->req = next_seq;
	sl->seed = next_seq * 2654435761U;
	sl->write = next_seq % 3 != 0;
	if (sl->write)
		memset(p, 0xee, SLOT_LEN);
	else
		fill(p, sl->seed);
	if (!use_map &&
	    setsockopt(fd, SOL_RDS, RDS_GET_MR, &a, sizeof(a))) {
		/* the device may be gone for a while (rdma link del) */
		if (errno != ENODEV && errno != EAGAIN && errno != ENOMEM &&
		    errno != EIO)
			fail("RDS_GET_MR: %s", strerror(errno));
		return -1;
	}
	m.seq = next_seq;
	m.write = sl->write;
	m.seed = sl->seed;
	m.cookie = use_map ? 0 : sl->cookie;
	err = use_map ? send_msg(&m, SOL_RDS, RDS_CMSG_RDMA_MAP, &a, sizeof(a)) :
			send_msg(&m, 0, 0, NULL, 0);
	if (err) {
		if (!use_map) {
			struct rds_free_mr_args f = { .cookie = sl->cookie };

			setsockopt(fd, SOL_RDS, RDS_FREE_MR, &f, sizeof(f));
		}
		if (err != ENODEV && err != EIO)
			fail("send of request %u: %s", next_seq, strerror(err));
		return -1;
	}
	next_seq++;
	sl->busy = 1;
	reqs++;
	return 0;
}

static int owner_slot_of(uint32_t req)
{
	int s;

	for (s = 0; s < SLOTS; s++)
		if (slots[s].busy && slots[s].req == req)
			return s;
	return -1;
}

static void owner_done(const struct lmsg *m)
{
	int s = owner_slot_of(m->req);
	long off;

	dones++;
	if (s < 0) {
		fail("DONE for request %u, which has none outstanding", m->req);
		return;
	}
	if (m->status >= 0 && m->status < NSTATUS)
		nstatus[m->status]++;
	else
		bad_status++;
	if (m->status == RDS_RDMA_SUCCESS && slots[s].write) {
		off = differs(slot_buf(s), slots[s].seed);
		if (off >= 0)
			fail("request %u: WRITE reported SUCCESS, byte %ld is %#x, not %#x",
			     m->req, off, slot_buf(s)[off],
			     pattern(slots[s].seed, off));
	}
	owner_release(s);
}

/* ------------------------------------------------------------- initiator */

static void init_rdma(const struct lmsg *r, uint64_t dest_cookie)
{
	unsigned char *p = slot_buf(r->slot);
	struct rds_iovec local = { (uintptr_t)p, SLOT_LEN };
	uint64_t cookie = r->cookie ? r->cookie : dest_cookie;
	struct rds_rdma_args a = {
		.cookie = cookie,
		/* an offset in the MR: the kernel adds the cookie's */
		.remote_vec = { 0, SLOT_LEN },
		.local_vec_addr = (uintptr_t)&local,
		.nr_local = 1,
		.flags = RDS_RDMA_NOTIFY_ME |
			 (r->write ? RDS_RDMA_READWRITE : 0),
		.user_token = r->seq,
	};
	struct lmsg m = { .kind = M_ACK, .req = r->seq };
	int err;

	if (r->slot >= SLOTS || r->seq >= MAX_SEQ || pending[r->seq]) {
		fail("bad request %u (slot %u)", r->seq, r->slot);
		return;
	}
	if (r->write)
		fill(p, r->seed);
	else
		memset(p, 0x11, SLOT_LEN);
	slots[r->slot].req = r->seq;
	slots[r->slot].seed = r->seed;
	slots[r->slot].write = r->write;
	pending[r->seq] = 1;
	err = send_msg(&m, SOL_RDS, RDS_CMSG_RDMA_ARGS, &a, sizeof(a));
	if (err) {
		/* not submitted: no notification comes */
		pending[r->seq] = 0;
		fail("RDMA for request %u: %s", r->seq, strerror(err));
		send_plain(M_DONE, r->seq, -err);
		dones++;
		return;
	}
	submitted++;
	npending++;
}

static void init_note(const struct rds_rdma_notify *n)
{
	uint64_t tok = n->user_token;
	struct slot *sl;
	long off;
	int s;

	notes++;
	if (tok >= MAX_SEQ || !pending[tok]) {
		fail("notification for token %llu, which has no RDMA pending (status %d)",
		     (unsigned long long)tok, n->status);
		return;
	}
	pending[tok] = 0;
	npending--;
	if (n->status >= 0 && n->status < NSTATUS)
		nstatus[n->status]++;
	else
		bad_status++;
	for (s = 0; s < SLOTS; s++) {
		sl = &slots[s];
		if (sl->req != tok || sl->write || n->status != RDS_RDMA_SUCCESS)
			continue;
		off = differs(slot_buf(s), sl->seed);
		if (off >= 0)
			fail("request %llu: READ reported SUCCESS, byte %ld is %#x, not %#x",
			     (unsigned long long)tok, off,
			     slot_buf(s)[off], pattern(sl->seed, off));
	}
	send_plain(M_DONE, tok, n->status);
	dones++;
}

static unsigned long in_flight(void)
{
	return npending;
}

/* ---------------------------------------------------------------- common */

/*
 * Take what the socket has: plain messages go to @msg (returns 1 per
 * message; 0 when nothing came within @ms), notifications straight to
 * init_note.
 */
static int receive(struct lmsg *msg, uint64_t *dest, int ms)
{
	union {
		char buf[4096];
		struct cmsghdr align;
	} u;
	struct iovec iov = { msg, sizeof(*msg) };
	struct sockaddr_in from;
	struct msghdr mh = {
		.msg_name = &from, .msg_namelen = sizeof(from),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct pollfd pfd = { fd, POLLIN, 0 };
	struct rds_rdma_notify n;
	struct cmsghdr *c;
	long len;

	*dest = 0;
	if (poll(&pfd, 1, ms) <= 0)
		return 0;
	len = recvmsg(fd, &mh, MSG_DONTWAIT);
	if (len < 0) {
		if (errno == ENOMEM && faulty)
			enomem++;
		else if (errno != EAGAIN && errno != EINTR)
			fail("recvmsg: %s", strerror(errno));
		return 0;
	}
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_RDS)
			continue;
		if (c->cmsg_type == RDS_CMSG_RDMA_STATUS) {
			memcpy(&n, CMSG_DATA(c), sizeof(n));
			init_note(&n);
		} else if (c->cmsg_type == RDS_CMSG_RDMA_DEST) {
			memcpy(dest, CMSG_DATA(c), sizeof(*dest));
		}
	}
	if (len == 0)
		return 0;	/* notifications only */
	if (len != sizeof(*msg) || msg->magic != MAGIC) {
		fail("message of %ld bytes, not ours", len);
		return 0;
	}
	if (msg->kind == M_ACK || msg->kind == M_HELLO)
		return 1;	/* not numbered: they may be dropped */
	msgs_rx++;
	if (msg->seq > expect_seq)
		msgs_lost += msg->seq - expect_seq;
	else if (msg->seq < expect_seq)
		msgs_reordered++;
	if (msg->seq != expect_seq) {
		fail("message %u (kind %u) arrived, expected %u: %s",
		     msg->seq, msg->kind, expect_seq,
		     msg->seq < expect_seq ? "a duplicate or reordered" :
		     "some lost");
		expect_seq = msg->seq;
	}
	expect_seq++;
	return 1;
}

static int stopping(void)
{
	return stop_file && !access(stop_file, F_OK);
}

static void summary(const char *role)
{
	printf("# load_diag role=%s rdmas=%lu notes=%lu success=%lu ", role,
	       submitted, role[0] == 'o' ? dones : notes,
	       nstatus[RDS_RDMA_SUCCESS]);
	printf("msgs_sent=%lu msgs_received=%lu msgs_lost=%lu ",
	       (unsigned long)next_seq - 1, msgs_rx, msgs_lost);
	printf("msgs_reordered=%lu vmpin_kb=%ld errors=%lu\n", msgs_reordered,
	       vmpin_end, errors);
	printf("load: %s: %lu requests, %lu RDMAs, %lu notes ", role, reqs,
	       submitted, notes);
	printf("(success %lu, remote_error %lu, canceled %lu, dropped %lu, ",
	       nstatus[RDS_RDMA_SUCCESS], nstatus[RDS_RDMA_REMOTE_ERROR],
	       nstatus[RDS_RDMA_CANCELED], nstatus[RDS_RDMA_DROPPED]);
	printf("other_error %lu, invalid %lu), %lu ACKs, %lu DONEs, ",
	       nstatus[RDS_RDMA_OTHER_ERROR], bad_status, nacks, dones);
	printf("%lu send retries, %lu ENOMEM, %lu errors\n", send_retries,
	       enomem, errors);
}

static int run_owner(long limit_ms)
{
	long t0 = now_ms(), retry_at = 0;
	int stop_asked = 0, ended = 0, hello = 0, s, busy;
	struct lmsg m;
	uint64_t dest;

	acked = calloc(MAX_SEQ, 1);
	if (!acked)
		return 1;
	while (!ended) {
		if (now_ms() - t0 > limit_ms) {
			fail("owner: no end after %ld s", limit_ms / 1000);
			break;
		}
		if (stopping())
			break;
		for (s = 0; s < SLOTS && hello && !stop_asked &&
		     now_ms() >= retry_at; s++)
			if (!slots[s].busy && owner_request(s))
				retry_at = now_ms() + 100;
		if (!receive(&m, &dest, 100))
			continue;
		switch (m.kind) {
		case M_HELLO:
			hello = 1;
			break;
		case M_ACK:
			nacks++;
			if (m.req >= MAX_SEQ || owner_slot_of(m.req) < 0 ||
			    acked[m.req]++)
				fail("ACK of request %u: %s", m.req,
				     m.req < MAX_SEQ && acked[m.req] > 1 ?
				     "a second one" : "none outstanding");
			break;
		case M_DONE:
			owner_done(&m);
			break;
		case M_STOP:
			stop_asked = 1;
			send_plain(M_STOPPED, reqs, 0);
			break;
		case M_END:
			ended = 1;
			if (m.req != dones)
				fail("END: the initiator sent %u DONEs, %lu arrived",
				     m.req, dones);
			break;
		default:
			fail("owner: message of kind %u", m.kind);
		}
	}
	for (s = busy = 0; s < SLOTS; s++) {
		if (!slots[s].busy)
			continue;
		busy++;
		owner_release(s);
	}
	if (busy && !stopping())
		fail("owner: %d requests without a DONE at the end", busy);
	check_unpinned("owner");
	if (ended) {
		send_plain(M_FIN, 0, errors);
		sleep(3);	/* a close drops what is still queued */
	}
	summary("owner");
	return errors ? 1 : 0;
}

static int run_init(long dur_ms, long limit_ms)
{
	long t0 = now_ms(), t_stop = 0, hello_at = 0;
	unsigned long ok_at_stop = 0;
	int phase = 0;	/* 0 load, 1 wait for a success, 2 stop sent */
	int stopped = 0, fin = 0;
	struct lmsg m;
	uint64_t dest;

	pending = calloc(MAX_SEQ, 1);
	if (!pending)
		return 1;
	while (!fin) {
		long t = now_ms();

		if (t - t0 > limit_ms) {
			fail("init: no end after %ld s (phase %d)", limit_ms / 1000, phase);
			break;
		}
		if (stopping())
			break;
		/* until the owner answers: it may not be bound yet */
		if (!reqs && t - hello_at >= 200) {
			struct lmsg h = { .kind = M_HELLO };

			if (send_msg(&h, 0, 0, NULL, 0))
				fail("send of HELLO failed");
			hello_at = t;
		}
		if (phase == 0 && t - t0 >= dur_ms) {
			phase = 1;
			ok_at_stop = nstatus[RDS_RDMA_SUCCESS];
			t_stop = t;
		}
		if (phase == 1 && nstatus[RDS_RDMA_SUCCESS] > ok_at_stop) {
			phase = 2;
			send_plain(M_STOP, 0, 0);
		}
		if (phase == 1 && t - t_stop > DRAIN_MS) {
			fail("init: no RDMA succeeded in the %d s after the load",
			     DRAIN_MS / 1000);
			phase = 2;
			send_plain(M_STOP, 0, 0);
		}
		if (stopped && !in_flight() && phase == 2) {
			struct lmsg e = { .kind = M_END, .seq = next_seq++,
					  .req = dones };

			if (send_msg(&e, 0, 0, NULL, 0))
				fail("send of END failed");
			stopped = 0;
			phase = 3;
		}
		if (!receive(&m, &dest, 100))
			continue;
		switch (m.kind) {
		case M_REQ:
			reqs++;
			init_rdma(&m, dest);
			break;
		case M_STOPPED:
			stopped = 1;
			if (m.req != reqs)
				fail("STOPPED: the owner sent %u requests, %lu arrived",
				     m.req, reqs);
			break;
		case M_FIN:
			fin = 1;
			if (m.status)
				fail("the owner reported %d errors", m.status);
			break;
		default:
			fail("init: message of kind %u", m.kind);
		}
	}
	/* What is in flight still ends, each with one notification. */
	t0 = now_ms();
	while (in_flight() && now_ms() - t0 < DRAIN_MS) {
		if (receive(&m, &dest, 100) && m.kind == M_REQ)
			reqs++;	/* not answered any more */
	}
	if (in_flight())
		fail("init: %lu RDMAs without a notification %d s after the end",
		     in_flight(), DRAIN_MS / 1000);
	check_unpinned("init");
	summary("init");
	return errors ? 1 : 0;
}

static void usage(void)
{
	fprintf(stderr,
		"%s owner|init -b ADDR:PORT -t ADDR:PORT [-m] [-d SECS] [-s FILE] [-T SECS] [-F]\n",
		program_invocation_short_name);
	exit(2);
}

int main(int argc, char **argv)
{
	struct sockaddr_in self;
	long dur = 20, limit = 240;
	int owner, opt, have_b = 0, have_t = 0, rc, one = 4 << 20;

	if (argc < 2)
		usage();
	owner = !strcmp(argv[1], "owner");
	if (!owner && strcmp(argv[1], "init"))
		usage();
	optind = 2;
	while ((opt = getopt(argc, argv, "b:t:md:s:T:F")) != -1) {
		switch (opt) {
		case 'b':
			have_b = !parse_addr(optarg, &self);
			break;
		case 't':
			have_t = !parse_addr(optarg, &peer);
			break;
		case 'm':
			use_map = 1;
			break;
		case 'd':
			dur = atol(optarg);
			break;
		case 's':
			stop_file = optarg;
			break;
		case 'T':
			limit = atol(optarg);
			break;
		case 'F':
			faulty = 1;
			break;
		default:
			usage();
		}
	}
	if (!have_b || !have_t)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	buf = aligned_alloc(4096, SLOTS * SLOT_STRIDE);
	if (!buf)
		return 1;
	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (fd < 0) {
		perror("socket(AF_RDS)");
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &one, sizeof(one));
	/*
	 * A send that waits (for room, or for the peer's port to clear of
	 * congestion) comes back every 5 s, so that one that never could
	 * ends in send_msg()'s time limit with an error, not in silence.
	 */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_wait,
		       sizeof(send_wait))) {
		perror("SO_SNDTIMEO");
		return 1;
	}
	if (bind(fd, (struct sockaddr *)&self, sizeof(self))) {
		perror("bind");
		return 1;
	}
	rc = owner ? run_owner(limit * 1000) :
		     run_init(dur * 1000, limit * 1000);
	close(fd);
	return rc;
}
