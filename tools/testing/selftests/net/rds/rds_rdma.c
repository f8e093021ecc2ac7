// SPDX-License-Identifier: GPL-2.0
/*
 * rds_rdma - RDS zero-copy RDMA between two hosts, as rds-zerocopy(7)
 * describes it: a client (the MR owner) registers a buffer and sends its
 * cookie with a request, the server (the initiator) RDMA-reads or -writes
 * that buffer together with an ACK message, and may ask for a status
 * notification.
 *
 * Run like rds_remote, on both hosts at once with the same cases, one as
 * node 1 and the other as node 2 (RDS_NODE, RDS_ADDR, RDS_PEER_ADDR in the
 * bench); the two programs coordinate over TCP (rds_peer.h), here on port
 * 18632.  Cases named *_owner1 have node 1 own the memory and node 2
 * initiate the RDMA, *_owner2 the other way round.
 *
 * Every RDMA carries a pattern derived from the case and the operation;
 * the MR owner checks the bytes written and that none outside the range
 * changed, the initiator the bytes it read.  The cookie the owner got from
 * the kernel is passed over the control connection too, so the initiator
 * checks what RDS_CMSG_RDMA_DEST delivered.
 *
 * Each case first exchanges one plain message each way: the
 * distribution's RDS registers memory only on an established connection
 * (its FRWR registration is posted on the connection's QP), and a failed
 * RDMA makes it drop and re-establish the connection, which the next case
 * must not mistake for lost messages.
 *
 * Where the distribution's module (RDS_MODULES distro) is known to do
 * otherwise than the manual page, the case checks what the distribution
 * does on the node concerned, says so in a comment, and reports SKIP with
 * the difference as the reason; our module is held to the manual.
 *
 * Usage: rds_rdma [-n NODE] [-a ADDR] [-p PEER] [-c PORT] [-l] [CASE...]
 * (as rds_remote).
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include <sys/wait.h>

#include "rds_test.h"
#include "rds_sock_util.h"
#include "rds_peer.h"

#define CTL_PORT	18632
#define PORT_BASE	24000	/* case k uses PORT_BASE + 32 k .. + 31 */
#define PAGE		4096UL
#define MR_MAX		(1UL << 20)	/* the largest region and RDMA */
#define NOTE_MAX	16	/* notifications one recvmsg() takes */
#define PIPE_OPS	64	/* RDMAs of the pipeline case */
#define RECONNECT_MS	60000	/* for a connection dropped after an error */

/* The kinds of plain messages; each carries its kind and a number. */
enum {
	K_WARM = 1,	/* the first message of a case, each way */
	K_REQ,		/* the request, carrying the cookie */
	K_ACK,		/* the message of the RDMA */
	K_GOTIT,	/* initiator: request received (and so acked) */
	K_AFTER,	/* initiator: after a failed RDMA */
	K_PLAIN,	/* anything else */
};

struct kmsg {
	uint32_t kind;
	uint32_t seq;
	unsigned char pattern[24];
};

/* The module set of node k is the distribution's. */
static int distro(int k)
{
	return !strcmp(modules_of(k), "distro");
}

static uint64_t token_of(int i)
{
	/* all 64 bits matter: the high ones come back too */
	return 0xa5a5000000000000ULL | (uint64_t)this_case() << 16 | i;
}

/* -------------------------------------------------------------- sockets */

/* The case's two sockets: this node's and the peer's port 0. */
struct pair {
	int owner;		/* this node owns the memory */
	int fd;
	struct sockaddr_in peer;
};

/* A control message to send: type, payload. */
struct cm {
	int type;
	const void *data;
	size_t len;
};

/* sendmsg() of len bytes with the control messages cm[0 .. n - 1]. */
static long send_cm(int fd, const struct sockaddr_in *to, const void *data,
		    size_t len, const struct cm *cm, int n, int flags)
{
	union {
		char buf[4 * CMSG_SPACE(sizeof(struct rds_rdma_args))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { (void *)data, len };
	struct msghdr msg = {
		.msg_name = (void *)to,
		.msg_namelen = sizeof(*to),
		.msg_iov = &iov,
		.msg_iovlen = 1,
	};
	struct cmsghdr *c;
	size_t total = 0;
	int i;

	memset(&ctl, 0, sizeof(ctl));
	for (i = 0; i < n; i++)
		total += CMSG_SPACE(cm[i].len);
	ASSERT_TRUE(total <= sizeof(ctl.buf), "%zu bytes of control messages",
		    total);
	if (n) {
		msg.msg_control = ctl.buf;
		msg.msg_controllen = total;
	}
	c = n ? CMSG_FIRSTHDR(&msg) : NULL;
	for (i = 0; i < n; i++) {
		c->cmsg_level = SOL_RDS;
		c->cmsg_type = cm[i].type;
		c->cmsg_len = CMSG_LEN(cm[i].len);
		memcpy(CMSG_DATA(c), cm[i].data, cm[i].len);
		c = CMSG_NXTHDR(&msg, c);
	}
	return sendmsg(fd, &msg, flags);
}

/* What recvmsg() returned, its control messages taken apart. */
struct rx {
	struct sockaddr_in from;
	int flags;
	int ndest;
	uint64_t cookie;
	int nnote;
	struct rds_rdma_notify note[NOTE_MAX];
};

static long rx_msg(int fd, void *buf, size_t len, int flags, struct rx *rx)
{
	union {
		char buf[NOTE_MAX * CMSG_SPACE(sizeof(struct rds_rdma_notify))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { buf, len };
	struct msghdr msg = {
		.msg_name = &rx->from,
		.msg_namelen = sizeof(rx->from),
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	unsigned char pad[sizeof(struct rds_rdma_notify)];
	struct cmsghdr *c;
	long ret;
	int err;

	memset(rx, 0, sizeof(*rx));
	memset(&ctl, 0, sizeof(ctl));
	ret = recvmsg(fd, &msg, flags);
	if (ret < 0)
		return ret;
	err = errno;
	rx->flags = msg.msg_flags;
	EXPECT_EQ(msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC), 0);
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level == SOL_RDS &&
		    c->cmsg_type == RDS_CMSG_RDMA_DEST) {
			EXPECT_EQ(c->cmsg_len, CMSG_LEN(sizeof(uint64_t)));
			memcpy(&rx->cookie, CMSG_DATA(c), sizeof(uint64_t));
			rx->ndest++;
		} else if (c->cmsg_level == SOL_RDS &&
			   c->cmsg_type == RDS_CMSG_RDMA_STATUS) {
			EXPECT_EQ(c->cmsg_len,
				  CMSG_LEN(sizeof(struct rds_rdma_notify)));
			memcpy(pad, CMSG_DATA(c), sizeof(pad));
			/* the tail padding must not leak kernel memory */
			EXPECT_TRUE(!pad[12] && !pad[13] && !pad[14] && !pad[15],
				    "rds_rdma_notify padding %02x%02x%02x%02x",
				    pad[12], pad[13], pad[14], pad[15]);
			if (rx->nnote < NOTE_MAX)
				memcpy(&rx->note[rx->nnote], pad, sizeof(pad));
			rx->nnote++;
		} else {
			rt_fail("unexpected control message level %d type %d",
				c->cmsg_level, c->cmsg_type);
		}
	}
	errno = err;
	return ret;
}

static void send_kind(struct pair *p, const struct sockaddr_in *to,
		      uint32_t kind, uint32_t seq, const struct cm *cm, int n)
{
	struct kmsg m = { kind, seq, { 0 } };

	fill_pattern(m.pattern, sizeof(m.pattern), msg_seed(node, kind * 1000 + seq));
	ASSERT_EQ(EXPECT_SYS_OK(send_cm(p->fd, to, &m, sizeof(m), cm, n, 0)),
		  sizeof(m));
}

/*
 * Receive the next message on fd: it must be (kind, seq) from the peer's
 * port @port and intact; its control messages in *rx.
 */
static void expect_kind_on(int fd, int port, uint32_t kind, uint32_t seq,
			   struct rx *rx)
{
	struct sockaddr_in want;
	struct kmsg m;
	long n;

	sin_set(&want, addr_peer, case_port(port));
	memset(&m, 0, sizeof(m));
	n = rx_msg(fd, &m, sizeof(m), 0, rx);
	if (n < 0) {
		rt_fail("waiting for message kind %u seq %u: recvmsg: %s",
			kind, seq, rt_errname(errno));
		rt_abort();
	}
	EXPECT_TRUE(same_sin(&rx->from, &want), "message from %s, expected %s",
		    sin_str(&rx->from), sin_str(&want));
	ASSERT_TRUE(n == sizeof(m) && m.kind == kind && m.seq == seq,
		    "got %ld bytes, kind %u seq %u; expected kind %u seq %u",
		    n, m.kind, m.seq, kind, seq);
	EXPECT_EQ(pattern_mismatch(m.pattern, sizeof(m.pattern),
				   msg_seed(peer_node, kind * 1000 + seq)),
		  sizeof(m.pattern));
	EXPECT_EQ(rx->nnote, 0);
}

static void expect_kind(struct pair *p, uint32_t kind, uint32_t seq,
			struct rx *rx)
{
	expect_kind_on(p->fd, 0, kind, seq, rx);
}

/*
 * Both nodes: bind port 0, then one plain message each way, so the
 * connection is up (again) before anything is registered.
 */
static void pair_start(struct pair *p, int owner_node)
{
	struct rx rx;

	memset(p, 0, sizeof(*p));
	p->owner = node == owner_node;
	p->fd = rds_bound(0, NULL);
	make_room(p->fd, 65536, 0);
	p->peer = peer_port(0);
	sync_peer("bound");
	send_kind(p, &p->peer, K_WARM, 0, NULL, 0);
	set_rcvtimeo(p->fd, RECONNECT_MS);	/* see fail_server() */
	expect_kind(p, K_WARM, 0, &rx);
	set_rcvtimeo(p->fd, RCV_TIMEOUT_MS);
	EXPECT_EQ(rx.ndest, 0);
	sync_peer("warm");
}

static void pair_end(struct pair *p)
{
	sync_peer("end");
	expect_empty(p->fd);
	close(p->fd);
}

/* ----------------------------------------------------------- memory */

/*
 * The owner's memory: whole pages, with the MR at start in the first, and
 * a copy of all of it to tell what changed.
 */
struct region {
	unsigned char *map;
	size_t map_len;
	unsigned char *buf;	/* map + start: the MR */
	size_t len;
	unsigned char *before;
};

static void region_init(struct region *r, size_t start, size_t len,
			uint32_t seed)
{
	r->map_len = (start + len + PAGE - 1) / PAGE * PAGE;
	r->map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(r->map != MAP_FAILED, "mmap %zu: %s", r->map_len,
		    rt_errname(errno));
	fill_pattern(r->map, r->map_len, seed);
	r->buf = r->map + start;
	r->len = len;
	r->before = xmalloc(r->map_len);
	memcpy(r->before, r->map, r->map_len);
}

static void region_free(struct region *r)
{
	munmap(r->map, r->map_len);
	free(r->before);
}

/* Nothing changed in the region but [off, off + len) of the MR. */
static int region_rest_unchanged(const struct region *r, size_t off,
				 size_t len)
{
	size_t a = r->buf - r->map + off, b = a + len, i;

	for (i = 0; i < r->map_len; i++) {
		if (i == a)
			i = b;
		if (i >= r->map_len)
			break;
		if (r->map[i] != r->before[i]) {
			rt_fail("MR byte %zd changed (%#x, was %#x), RDMA [%zu, %zu)",
				(ssize_t)i - (r->buf - r->map), r->map[i],
				r->before[i], off, off + len);
			return 0;
		}
	}
	return 1;
}

/* [off, off + len) of the MR holds the pattern of seed, the rest is as before. */
static void region_expect(const struct region *r, size_t off, size_t len,
			  uint32_t seed)
{
	size_t bad = pattern_mismatch(r->buf + off, len, seed);

	EXPECT_TRUE(bad == len, "MR [%zu, %zu): byte %zu is not what the peer wrote",
		    off, off + len, off + bad);
	region_rest_unchanged(r, off, len);
}

/* The initiator's local memory: pieces of the given sizes, 3 bytes apart. */
struct local {
	unsigned char *mem;
	struct rds_iovec iov[PIPE_OPS];
	int n;
	size_t total;
};

static void local_init(struct local *l, const size_t *pieces, int n,
		       size_t one)
{
	size_t pos = 0;
	int i;

	memset(l, 0, sizeof(*l));
	if (!pieces) {
		pieces = &one;
		n = 1;
	}
	ASSERT_TRUE(n <= PIPE_OPS, "%d local pieces", n);
	for (i = 0; i < n; i++)
		l->total += pieces[i];
	l->mem = xmalloc(l->total + 3 * n + 64);
	memset(l->mem, 0x5c, l->total + 3 * n + 64);
	for (i = 0; i < n; i++) {
		pos += 3;
		l->iov[i].addr = (uintptr_t)(l->mem + pos);
		l->iov[i].bytes = pieces[i];
		pos += pieces[i];
	}
	l->n = n;
}

/* Copy the pattern of seed into the pieces (dir 1) or compare (dir 0). */
static size_t local_pattern(struct local *l, uint32_t seed, size_t skip,
			    int fill)
{
	unsigned char *want = xmalloc(skip + l->total);
	size_t pos = skip, bad = l->total;
	int i;

	fill_pattern(want, skip + l->total, seed);
	for (i = 0; i < l->n; i++) {
		unsigned char *p = (unsigned char *)(uintptr_t)l->iov[i].addr;
		size_t k;

		if (fill) {
			memcpy(p, want + pos, l->iov[i].bytes);
		} else {
			for (k = 0; k < l->iov[i].bytes && bad == l->total; k++)
				if (p[k] != want[pos + k])
					bad = pos - skip + k;
		}
		pos += l->iov[i].bytes;
	}
	free(want);
	return bad;
}

/* ------------------------------------------------------- RDMA steps */

static uint64_t cookie_offset(uint64_t cookie)
{
	return cookie >> 32;
}

/*
 * Owner: send request seq carrying RDS_CMSG_RDMA_MAP of the MR (with
 * flags) to the peer, and tell the peer the cookie the kernel stored.
 */
static uint64_t owner_map_on(struct pair *p, int fd, struct region *r,
			     uint64_t flags, uint32_t seq)
{
	struct kmsg m = { K_REQ, seq, { 0 } };
	uint64_t cookie = 0;
	struct rds_get_mr_args args = {
		.vec = { (uintptr_t)r->buf, r->len },
		.cookie_addr = (uintptr_t)&cookie,
		.flags = flags,
	};
	struct cm cm = { RDS_CMSG_RDMA_MAP, &args, sizeof(args) };
	long ret;

	fill_pattern(m.pattern, sizeof(m.pattern), msg_seed(node, K_REQ * 1000 + seq));
	ret = send_cm(fd, &p->peer, &m, sizeof(m), &cm, 1, 0);
	if (ret < 0) {
		rt_fail("sendmsg with RDS_CMSG_RDMA_MAP of %zu bytes: %s",
			r->len, rt_errname(errno));
		tell_peer(0);
		rt_abort();
	}
	EXPECT_EQ(ret, sizeof(m));
	EXPECT_NE(cookie, 0);
	EXPECT_EQ(cookie_offset(cookie), (uintptr_t)r->buf & (PAGE - 1));
	tell_peer((long)cookie);
	return cookie;
}

static uint64_t owner_map(struct pair *p, struct region *r, uint64_t flags,
			  uint32_t seq)
{
	return owner_map_on(p, p->fd, r, flags, seq);
}

/* Initiator: the request seq from the peer's port, with the right cookie. */
static uint64_t server_cookie_on(struct pair *p, int port, uint32_t seq)
{
	uint64_t told = (uint64_t)hear_peer();
	struct rx rx;

	ASSERT_TRUE(told, "node %d could not register its memory", peer_node);
	expect_kind_on(p->fd, port, K_REQ, seq, &rx);
	EXPECT_EQ(rx.ndest, 1);
	EXPECT_EQ(rx.cookie, told);
	return told;
}

static uint64_t server_cookie(struct pair *p, uint32_t seq)
{
	return server_cookie_on(p, 0, seq);
}

/*
 * Initiator: the RDMA, with ACK seq (ack_len 0: no payload) to the peer's
 * port; the sendmsg() result, errno kept.
 */
static long server_rdma_to(struct pair *p, const struct sockaddr_in *to,
			   uint64_t cookie, uint64_t off, uint64_t len,
			   struct local *l, uint64_t flags, uint64_t token,
			   uint32_t seq, size_t ack_len, int msg_flags)
{
	struct kmsg m = { K_ACK, seq, { 0 } };
	struct rds_rdma_args args = {
		.cookie = cookie,
		.remote_vec = { off, len },
		.local_vec_addr = (uintptr_t)l->iov,
		.nr_local = l->n,
		.flags = flags,
		.user_token = token,
	};
	struct cm cm = { RDS_CMSG_RDMA_ARGS, &args, sizeof(args) };

	fill_pattern(m.pattern, sizeof(m.pattern), msg_seed(node, K_ACK * 1000 + seq));
	return send_cm(p->fd, to, &m, ack_len, &cm, 1, msg_flags);
}

static long server_rdma(struct pair *p, uint64_t cookie, uint64_t off,
			uint64_t len, struct local *l, uint64_t flags,
			uint64_t token, uint32_t seq)
{
	return server_rdma_to(p, &p->peer, cookie, off, len, l, flags, token,
			      seq, sizeof(struct kmsg), 0);
}

/*
 * The next notification: POLLIN, then an empty message with one
 * RDS_CMSG_RDMA_STATUS; its status (token checked).  The distribution
 * also signals POLLIN once after any congestion map update ("for
 * historical reasons", says its rds_poll()): a POLLIN that recvmsg()
 * answers with EAGAIN is tolerated there, and only there.
 */
static int expect_note(int fd, uint64_t token)
{
	long long deadline = rt_now_ms() + RECONNECT_MS;
	unsigned char buf[64];
	struct rx rx;
	long n;
	int rev;

	for (;;) {
		rev = poll_fd(fd, POLLIN, (int)(deadline - rt_now_ms()));
		ASSERT_TRUE(rev & POLLIN, "no notification (POLLIN) in %d ms",
			    RECONNECT_MS);
		n = rx_msg(fd, buf, sizeof(buf), MSG_DONTWAIT, &rx);
		if (n >= 0)
			break;
		if (errno != EAGAIN || !distro(node) ||
		    rt_now_ms() > deadline) {
			rt_fail("POLLIN, but recvmsg: %s", rt_errname(errno));
			rt_abort();
		}
		rt_sleep_ms(10);
	}
	ASSERT_TRUE(n == 0, "a message of %ld bytes from %s where a notification was due",
		    n, sin_str(&rx.from));
	EXPECT_EQ(rx.ndest, 0);
	ASSERT_EQ(rx.nnote, 1);
	EXPECT_EQ(rx.note[0].user_token, token);
	return rx.note[0].status;
}

static const char *status_name(int s)
{
	static const char *const names[] = {
		"SUCCESS", "REMOTE_ERROR", "CANCELED", "DROPPED", "OTHER_ERROR",
	};

	return s >= 0 && s < (int)ARRAY_SIZE(names) ? names[s] : "unknown";
}

#define EXPECT_STATUS(got, want)					\
	EXPECT_TRUE((got) == (want), "RDMA status %d (%s), expected %d (%s)", \
		    (got), status_name(got), (want), status_name(want))

/*
 * One RDMA from the initiator to the owner's MR, as the manual has it:
 * request with RDS_CMSG_RDMA_MAP, RDMA with NOTIFY_ME and ACK, SUCCESS,
 * the bytes checked on both sides; then the owner frees the MR (or, with
 * USE_ONCE, finds it gone).
 */
struct rdma_op {
	int write;		/* WRITE into the owner's MR, else READ it */
	size_t start;		/* the MR's offset in its first page */
	size_t mr_len;
	size_t off, len;	/* what the RDMA covers, in the MR */
	const size_t *pieces;	/* the initiator's local iovecs; NULL: one */
	int npieces;
	uint64_t map_flags;
	uint64_t rdma_flags;	/* besides READWRITE and NOTIFY_ME */
};

static uint64_t rdma_cycle_keep(struct pair *p, const struct rdma_op *op,
				uint32_t seq, struct region *keep)
{
	uint32_t seed = msg_seed(100 + node, seq);	/* this node's data */
	uint32_t pseed = msg_seed(100 + peer_node, seq);
	uint64_t cookie, flags;
	struct region r;
	struct local l;
	struct rx rx;
	size_t bad;
	int status;

	if (p->owner) {
		region_init(&r, op->start, op->mr_len, seed ^ 0x55);
		if (!op->write) {
			fill_pattern(r.buf, r.len, seed);
			memcpy(r.before, r.map, r.map_len);
		}
		cookie = owner_map(p, &r, op->map_flags, seq);
		expect_kind(p, K_ACK, seq, &rx);
		EXPECT_EQ(rx.ndest, 0);
		if (op->write)
			region_expect(&r, op->off, op->len, pseed);
		else
			region_rest_unchanged(&r, 0, 0);
		sync_peer("checked");
		if (op->map_flags & RDS_RDMA_USE_ONCE)
			EXPECT_EQ(rds_free_mr(p->fd, cookie, 0), -EINVAL);
		else if (!keep)
			EXPECT_EQ(rds_free_mr(p->fd, cookie, 0), 0);
		if (keep) {
			memcpy(r.before, r.map, r.map_len);
			*keep = r;
		} else {
			region_free(&r);
		}
		return cookie;
	}

	cookie = server_cookie(p, seq);
	local_init(&l, op->pieces, op->npieces, op->len);
	ASSERT_EQ(l.total, op->len);
	if (op->write)
		local_pattern(&l, seed, 0, 1);
	flags = RDS_RDMA_NOTIFY_ME | op->rdma_flags |
		(op->write ? RDS_RDMA_READWRITE : 0);
	if (EXPECT_SYS_OK(server_rdma(p, cookie, op->off, op->len, &l, flags,
				      token_of(seq), seq)) < 0) {
		sync_peer("checked");
		rt_abort();
	}
	status = expect_note(p->fd, token_of(seq));
	EXPECT_STATUS(status, RDS_RDMA_SUCCESS);
	if (!op->write) {
		bad = local_pattern(&l, pseed, op->off, 0);
		EXPECT_TRUE(bad == op->len, "%s of %zu bytes at %zu: byte %zu is not the peer's",
			    "READ", op->len, op->off, bad);
	}
	sync_peer("checked");
	free(l.mem);
	return cookie;
}

static void rdma_cycle(struct pair *p, const struct rdma_op *op, uint32_t seq)
{
	rdma_cycle_keep(p, op, seq, NULL);
}

/*
 * An RDMA WRITE that must fail at the owner, and what follows it.  A
 * failed RDMA makes the distribution drop the connection, and its
 * reconnect took up to 15 s here: what follows waits on RDS for
 * RECONNECT_MS, not on the control connection.
 *
 * Initiator: sends the RDMA (to the peer's port 0 or @to) with ACK seq;
 * takes the status when NOTIFY_ME or RDS_RECVERR asks for one (else -1)
 * and tells the owner; sends AFTER seq and waits for the owner's answer.
 * Owner: the next message is AFTER seq, never the ACK (the RDMA and its
 * message succeed or fail together), and its memory did not change;
 * returns the status.  Where the caller allows it (quirk, a known failure
 * of the distribution to invalidate), a successful RDMA is accepted: ACK,
 * data, then AFTER.
 *
 * The distribution as owner does not re-establish the connection while
 * an MR it registered on it is live (its shutdown waits for every FRWR
 * MR of the QP to be invalidated): so there the owner frees the MR
 * (*cookie, then 0) once it heard of the failure.
 */
/* The initiator's side after the operation that must fail was sent. */
static int fail_server_after(struct pair *p, long sent, int status_due,
			     uint32_t seq)
{
	int status = -1;
	struct rx rx;

	if (sent >= 0 && status_due)
		status = expect_note(p->fd, token_of(seq));
	tell_peer(status);
	send_kind(p, &p->peer, K_AFTER, seq, NULL, 0);
	set_rcvtimeo(p->fd, RECONNECT_MS);
	expect_kind(p, K_AFTER, seq + 1000, &rx);
	set_rcvtimeo(p->fd, RCV_TIMEOUT_MS);
	return status;
}

static int fail_server(struct pair *p, const struct sockaddr_in *to,
		       uint64_t cookie, uint64_t off, uint64_t len,
		       uint64_t flags, int status_due, uint32_t seq)
{
	struct local l;
	int status;
	long ret;

	local_init(&l, NULL, 0, len);
	local_pattern(&l, msg_seed(100 + node, seq), 0, 1);
	ret = EXPECT_SYS_OK(server_rdma_to(p, to ? to : &p->peer, cookie, off,
					   len, &l, flags | RDS_RDMA_READWRITE,
					   token_of(seq), seq,
					   sizeof(struct kmsg), 0));
	status = fail_server_after(p, ret, status_due, seq);
	free(l.mem);
	return status;
}

static int fail_owner(struct pair *p, struct region *r, uint64_t *cookie,
		      uint64_t off, uint64_t len, uint32_t seq, int quirk)
{
	struct sockaddr_in want;
	struct kmsg m;
	struct rx rx;
	int acked = 0, status;
	long n;

	status = (int)hear_peer();
	if (status != RDS_RDMA_SUCCESS && distro(node) && cookie && *cookie) {
		EXPECT_EQ(rds_free_mr(p->fd, *cookie, RDS_RDMA_INVALIDATE), 0);
		*cookie = 0;
	}
	sin_set(&want, addr_peer, case_port(0));
	set_rcvtimeo(p->fd, RECONNECT_MS);
	for (;;) {
		memset(&m, 0, sizeof(m));
		n = rx_msg(p->fd, &m, sizeof(m), 0, &rx);
		if (n < 0) {
			rt_fail("waiting for message AFTER %u: recvmsg: %s",
				seq, rt_errname(errno));
			rt_abort();
		}
		EXPECT_TRUE(same_sin(&rx.from, &want), "message from %s, expected %s",
			    sin_str(&rx.from), sin_str(&want));
		EXPECT_EQ(pattern_mismatch(m.pattern, sizeof(m.pattern),
					   msg_seed(peer_node, m.kind * 1000 + m.seq)),
			  sizeof(m.pattern));
		if (n == sizeof(m) && m.kind == K_ACK && m.seq == seq &&
		    !acked) {
			acked = 1;
			EXPECT_TRUE(quirk, "the ACK of the RDMA that had to fail arrived");
			continue;
		}
		ASSERT_TRUE(n == sizeof(m) && m.kind == K_AFTER && m.seq == seq,
			    "got %ld bytes, kind %u seq %u; expected AFTER %u",
			    n, m.kind, m.seq, seq);
		break;
	}
	set_rcvtimeo(p->fd, RCV_TIMEOUT_MS);
	send_kind(p, &p->peer, K_AFTER, seq + 1000, NULL, 0);
	if (acked) {
		rt_diag("the RDMA succeeded, status %d (%s)", status,
			status_name(status));
		if (r)
			region_expect(r, off, len, msg_seed(100 + peer_node, seq));
	} else if (r) {
		region_rest_unchanged(r, 0, 0);
	}
	return acked ? RDS_RDMA_SUCCESS : status;
}

/* Owner: map, hear that the request arrived, free with INVALIDATE. */
static uint64_t owner_map_invalidate(struct pair *p, struct region *r,
				     uint32_t seq)
{
	uint64_t cookie = owner_map(p, r, 0, seq);
	struct rx rx;

	/*
	 * The request message holds a reference to its MR until the peer
	 * acknowledged it; the distribution invalidates only when the last
	 * reference goes.  GOTIT carries that acknowledgment.
	 */
	expect_kind(p, K_GOTIT, seq, &rx);
	EXPECT_EQ(rds_free_mr(p->fd, cookie, RDS_RDMA_INVALIDATE), 0);
	sync_peer("freed");
	return cookie;
}

static uint64_t server_cookie_gotit(struct pair *p, uint32_t seq)
{
	uint64_t cookie = server_cookie(p, seq);

	send_kind(p, &p->peer, K_GOTIT, seq, NULL, 0);
	sync_peer("freed");
	return cookie;
}

/* ------------------------------------------------------ the cases */

/*
 * RDS_GET_MR and RDS_GET_MR_FOR_DEST work on a bound socket, before any
 * message was sent from it: a non-zero cookie whose high 32 bits are the
 * buffer's offset in its page; RDS_FREE_MR takes it back once.
 * The distribution fails both (EOPNOTSUPP, or ENODEV while the bound
 * address never had a connection): its FRWR registration needs a
 * connection's QP.
 */
static void test_get_mr_after_bind(void)
{
	unsigned char *buf = xmalloc(10000);
	struct rds_get_mr_for_dest_args dargs;
	struct rds_get_mr_args args;
	struct sockaddr_in *dest;
	uint64_t cookie = 0, dcookie = 0;
	int fd = rds_bound(0, NULL);
	int ret, err, dret, derr;

	memset(&args, 0, sizeof(args));
	args.vec.addr = (uintptr_t)(buf + 123);
	args.vec.bytes = 9000;
	args.cookie_addr = (uintptr_t)&cookie;
	ret = setsockopt(fd, SOL_RDS, RDS_GET_MR, &args, sizeof(args));
	err = errno;

	memset(&dargs, 0, sizeof(dargs));
	dest = (struct sockaddr_in *)&dargs.dest_addr;
	sin_set(dest, addr_peer, case_port(0));
	dargs.vec = args.vec;
	dargs.cookie_addr = (uintptr_t)&dcookie;
	dret = setsockopt(fd, SOL_RDS, RDS_GET_MR_FOR_DEST, &dargs,
			  sizeof(dargs));
	derr = errno;

	if (distro(node) && ret < 0 && dret < 0) {
		EXPECT_TRUE(err == EOPNOTSUPP || err == ENODEV,
			    "distribution's RDS_GET_MR: %s", rt_errname(err));
		EXPECT_TRUE(derr == EOPNOTSUPP || derr == ENODEV,
			    "distribution's RDS_GET_MR_FOR_DEST: %s",
			    rt_errname(derr));
		close(fd);
		sync_peer("done");
		rt_skip("distribution: RDS_GET_MR %s, RDS_GET_MR_FOR_DEST %s (no QP)",
			rt_errname(err), rt_errname(derr));
	}
	if (EXPECT_TRUE(!ret, "RDS_GET_MR after bind: %s", rt_errname(err))) {
		EXPECT_NE(cookie, 0);
		EXPECT_EQ(cookie_offset(cookie), (uintptr_t)(buf + 123) & (PAGE - 1));
		EXPECT_EQ(rds_free_mr(fd, cookie, 0), 0);
		EXPECT_EQ(rds_free_mr(fd, cookie, 0), -EINVAL);
	}
	if (EXPECT_TRUE(!dret, "RDS_GET_MR_FOR_DEST after bind: %s",
			rt_errname(derr))) {
		EXPECT_NE(dcookie, 0);
		EXPECT_NE(dcookie, cookie);
		EXPECT_EQ(cookie_offset(dcookie), (uintptr_t)(buf + 123) & (PAGE - 1));
		EXPECT_EQ(rds_free_mr(fd, dcookie, RDS_RDMA_INVALIDATE), 0);
		EXPECT_EQ(rds_free_mr(fd, dcookie, 0), -EINVAL);
	}
	close(fd);
	free(buf);
	sync_peer("done");
}

/* RDS_GET_MR with an argument optlen bytes long: setsockopt()'s. */
static int get_mr_optlen(int fd, void *addr, uint64_t bytes,
			 void *cookie_addr, int optlen)
{
	struct {
		struct rds_get_mr_args a;
		char more[8];
	} args;

	memset(&args, 0, sizeof(args));
	args.a.vec.addr = (uintptr_t)addr;
	args.a.vec.bytes = bytes;
	args.a.cookie_addr = (uintptr_t)cookie_addr;
	return setsockopt(fd, SOL_RDS, RDS_GET_MR, &args, optlen);
}

/*
 * RDS_GET_MR's errors, on this node alone.  The distribution checks all
 * but the cookie address before it fails to register (EOPNOTSUPP or
 * ENODEV), and says EMSGSIZE, not EINVAL, for a region over 1 MiB + 4 KiB.
 */
static void test_get_mr_errors(void)
{
	const int sz = sizeof(struct rds_get_mr_args);
	unsigned char *map, *hole;
	uint64_t cookie = 0;
	int fd, ret, err, want;

	map = mmap(NULL, MR_MAX + 3 * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(map != MAP_FAILED, "mmap: %s", rt_errname(errno));
	hole = map + MR_MAX + 2 * PAGE;
	ASSERT_SYS_OK(munmap(hole, PAGE));

	fd = rds_socket();
	EXPECT_SYS_ERR(get_mr_optlen(fd, map, PAGE, &cookie, sz), ENOTCONN);
	close(fd);

	fd = rds_bound(0, NULL);
	EXPECT_SYS_ERR(get_mr_optlen(fd, map, PAGE, &cookie, sz - 1), EINVAL);
	EXPECT_SYS_ERR(get_mr_optlen(fd, map, PAGE, &cookie, sz + 8), EINVAL);
	EXPECT_SYS_ERR(get_mr_optlen(fd, map, 0, &cookie, sz), EINVAL);
	EXPECT_SYS_ERR(get_mr_optlen(fd, (void *)-4096L, 8192, &cookie, sz), EINVAL);
	EXPECT_SYS_ERR(get_mr_optlen(fd, hole, PAGE, &cookie, sz), EFAULT);
	EXPECT_SYS_ERR(get_mr_optlen(fd, hole - 8, 16, &cookie, sz), EFAULT);
	EXPECT_SYS_ERR(get_mr_optlen(fd, NULL, PAGE, &cookie, sz), EFAULT);
	EXPECT_EQ(cookie, 0);

	/* one byte more than 1 MiB + 4 KiB */
	ret = get_mr_optlen(fd, map, MR_MAX + PAGE + 1, &cookie, sz);
	err = errno;
	want = distro(node) ? EMSGSIZE : EINVAL;	/* quirk, see above */
	EXPECT_TRUE(ret == -1 && err == want,
		    "RDS_GET_MR of 1 MiB + 4 KiB + 1: %d (%s), expected %s",
		    ret, rt_errname(err), rt_errname(want));

	/* everything right but the cookie address */
	ret = get_mr_optlen(fd, map + 5, 100, hole, sz);
	err = errno;
	if (distro(node)) {
		EXPECT_TRUE(ret < 0 && (err == EOPNOTSUPP || err == ENODEV),
			    "distribution's RDS_GET_MR: %d (%s)", ret,
			    rt_errname(err));
		close(fd);
		munmap(map, MR_MAX + 3 * PAGE);
		sync_peer("done");
		rt_skip("distribution: EMSGSIZE over 1 MiB + 4 KiB; %s, not EFAULT",
			rt_errname(err));
	}
	EXPECT_TRUE(ret == -1 && err == EFAULT,
		    "RDS_GET_MR with an unmapped cookie_addr: %d (%s)", ret,
		    rt_errname(err));
	/* the largest: 1 MiB at an odd address, 257 pages */
	cookie = 0;
	if (EXPECT_SYS_OK(get_mr_optlen(fd, map + 100, MR_MAX, &cookie, sz)) == 0)
		EXPECT_EQ(rds_free_mr(fd, cookie, 0), 0);
	/* 1 MiB + 4 KiB from a page boundary */
	cookie = 0;
	if (EXPECT_SYS_OK(get_mr_optlen(fd, map, MR_MAX + PAGE, &cookie, sz)) == 0)
		EXPECT_EQ(rds_free_mr(fd, cookie, 0), 0);
	close(fd);
	munmap(map, MR_MAX + 3 * PAGE);
	sync_peer("done");
}

/*
 * RDS_FREE_MR: cookie 0 is "flush", and succeeds on a bound socket (tools
 * probe for RDMA that way); an unknown cookie or a wrong size is EINVAL.
 */
static void test_free_mr_errors(void)
{
	struct rds_free_mr_args args = { 0x12345678abcdULL, 0 };
	int fd = rds_socket(), ret;

	ret = rds_free_mr(fd, 0, 0);
	rt_diag("RDS_FREE_MR cookie 0 on an unbound socket: %d (%s)",
		ret ? -1 : 0, ret ? rt_errname(-ret) : "ok");
	close(fd);

	fd = rds_bound(0, NULL);
	EXPECT_EQ(rds_free_mr(fd, 0, 0), 0);
	EXPECT_EQ(rds_free_mr(fd, 0, RDS_RDMA_INVALIDATE), 0);
	EXPECT_EQ(rds_free_mr(fd, args.cookie, 0), -EINVAL);
	EXPECT_EQ(rds_free_mr(fd, args.cookie, RDS_RDMA_INVALIDATE), -EINVAL);
	EXPECT_SYS_ERR(setsockopt(fd, SOL_RDS, RDS_FREE_MR, &args,
				  sizeof(args) - 1), EINVAL);
	EXPECT_SYS_ERR(setsockopt(fd, SOL_RDS, RDS_FREE_MR, &args,
				  sizeof(args.cookie)), EINVAL);
	close(fd);
	sync_peer("done");
}

/* The worked example: WRITE into the owner's buffer, NOTIFY_ME. */
static void rdma_write_map(int owner)
{
	struct rdma_op op = {
		.write = 1, .start = 1000, .mr_len = 20000,
		.off = 3000, .len = 12345,
	};
	struct pair p;
	long long chained = 0;

	pair_start(&p, owner);
	if (p.owner && !distro(node))
		chained = rds_counter(p.fd, "ib_mr_reg_chained");
	rdma_cycle(&p, &op, 1);
	/*
	 * Our module posts a MAP's REG_MR in front of the request's SEND on
	 * the connection's QP instead of waiting for it in sendmsg().
	 */
	if (p.owner && !distro(node))
		EXPECT_EQ(rds_counter(p.fd, "ib_mr_reg_chained") - chained, 1);
	pair_end(&p);
}

/* READ the owner's buffer into the initiator's iovecs, fenced. */
static void rdma_read_map(int owner)
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
static void rdma_write_dest(int owner)
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

static void rdma_sizes(int owner)
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

/*
 * The local iovecs must add up to remote_vec.bytes: more is EINVAL on
 * both modules; less is EINVAL by the manual, but the distribution takes
 * it and transfers the local total (checked, then SKIP).
 */
static void rdma_len_mismatch(int owner)
{
	struct pair p;
	struct region r;
	struct local l;
	struct rx rx;
	uint64_t cookie;
	long ret, taken;
	int err, status;

	pair_start(&p, owner);
	if (p.owner) {
		region_init(&r, 0, 8192, msg_seed(node, 1));
		fill_pattern(r.buf, r.len, msg_seed(100 + node, 1));
		memcpy(r.before, r.map, r.map_len);
		cookie = owner_map(&p, &r, 0, 1);
		taken = hear_peer();
		if (taken)
			expect_kind(&p, K_ACK, 1, &rx);
		region_rest_unchanged(&r, 0, 0);
		sync_peer("checked");
		EXPECT_EQ(rds_free_mr(p.fd, cookie, 0), 0);
		region_free(&r);
		pair_end(&p);
		if (taken && distro(peer_node))
			rt_skip("distribution on node %d: takes local < remote_vec.bytes",
				peer_node);
		return;
	}
	cookie = server_cookie(&p, 1);
	local_init(&l, NULL, 0, 4000);
	EXPECT_SYS_ERR(server_rdma(&p, cookie, 0, 3999, &l, RDS_RDMA_NOTIFY_ME,
				   token_of(1), 1), EINVAL);
	ret = server_rdma(&p, cookie, 0, 4001, &l, RDS_RDMA_NOTIFY_ME,
			  token_of(1), 1);
	err = errno;
	tell_peer(ret >= 0);
	if (ret >= 0) {
		status = expect_note(p.fd, token_of(1));
		EXPECT_STATUS(status, RDS_RDMA_SUCCESS);
		EXPECT_EQ(local_pattern(&l, msg_seed(100 + peer_node, 1), 0, 0),
			  4000);
		if (!distro(node))
			rt_fail("local 4000 bytes, remote 4001: taken, not EINVAL");
	} else {
		EXPECT_EQ(err, EINVAL);
	}
	sync_peer("checked");
	free(l.mem);
	pair_end(&p);
	if (ret >= 0 && distro(node))
		rt_skip("distribution: local 4000 < remote 4001 taken, 4000 read");
}

/*
 * Conflicting control messages in one sendmsg(), EINVAL each: two
 * RDMA_MAP, RDMA_MAP and RDMA_DEST (both orders), two RDMA_ARGS, and
 * RDMA_ARGS with RDMA_MAP.  Each node alone, to its peer's port.
 */
static void test_cmsg_conflicts(void)
{
	unsigned char *buf = xmalloc(3 * PAGE);
	struct kmsg m = { K_PLAIN, 0, { 0 } };
	uint64_t cookie = 0, cookie2 = 0, dest = 0x1234;
	struct rds_get_mr_args map = {
		.vec = { (uintptr_t)buf, PAGE }, .cookie_addr = (uintptr_t)&cookie,
	};
	struct rds_get_mr_args map2 = {
		.vec = { (uintptr_t)buf + PAGE, PAGE },
		.cookie_addr = (uintptr_t)&cookie2,
	};
	struct rds_iovec iov = { (uintptr_t)buf + 2 * PAGE, 16 };
	struct rds_rdma_args args = {
		.cookie = 0x1234, .remote_vec = { 0, 16 },
		.local_vec_addr = (uintptr_t)&iov, .nr_local = 1,
		.flags = RDS_RDMA_READWRITE,
	};
	struct cm two_maps[] = {
		{ RDS_CMSG_RDMA_MAP, &map, sizeof(map) },
		{ RDS_CMSG_RDMA_MAP, &map2, sizeof(map2) },
	};
	struct cm map_dest[] = {
		{ RDS_CMSG_RDMA_MAP, &map, sizeof(map) },
		{ RDS_CMSG_RDMA_DEST, &dest, sizeof(dest) },
	};
	struct cm dest_map[] = {
		{ RDS_CMSG_RDMA_DEST, &dest, sizeof(dest) },
		{ RDS_CMSG_RDMA_MAP, &map, sizeof(map) },
	};
	struct cm two_args[] = {
		{ RDS_CMSG_RDMA_ARGS, &args, sizeof(args) },
		{ RDS_CMSG_RDMA_ARGS, &args, sizeof(args) },
	};
	struct cm args_map[] = {
		{ RDS_CMSG_RDMA_ARGS, &args, sizeof(args) },
		{ RDS_CMSG_RDMA_MAP, &map, sizeof(map) },
	};
	struct cm short_map = { RDS_CMSG_RDMA_MAP, &map, sizeof(map) - 8 };
	struct pair p;

	pair_start(&p, 1);
	EXPECT_SYS_ERR(send_cm(p.fd, &p.peer, &m, sizeof(m), two_maps, 2, 0), EINVAL);
	EXPECT_SYS_ERR(send_cm(p.fd, &p.peer, &m, sizeof(m), map_dest, 2, 0), EINVAL);
	EXPECT_SYS_ERR(send_cm(p.fd, &p.peer, &m, sizeof(m), dest_map, 2, 0), EINVAL);
	EXPECT_SYS_ERR(send_cm(p.fd, &p.peer, &m, sizeof(m), two_args, 2, 0), EINVAL);
	EXPECT_SYS_ERR(send_cm(p.fd, &p.peer, &m, sizeof(m), args_map, 2, 0), EINVAL);
	EXPECT_SYS_ERR(send_cm(p.fd, &p.peer, &m, sizeof(m), &short_map, 1, 0), EINVAL);
	pair_end(&p);
	free(buf);
}

/*
 * USE_ONCE with INVALIDATE: the ACK releases the MR, so FREE_MR does not
 * find it (EINVAL) and a second RDMA with the cookie fails.
 */
static void use_once(int owner)
{
	struct rdma_op op = {
		.write = 1, .start = 10, .mr_len = 5000, .off = 0, .len = 5000,
		.map_flags = RDS_RDMA_USE_ONCE | RDS_RDMA_INVALIDATE,
	};
	struct region r;
	struct pair p;
	uint64_t cookie;
	int status;

	pair_start(&p, owner);
	cookie = rdma_cycle_keep(&p, &op, 1, &r);
	if (p.owner) {
		status = fail_owner(&p, &r, NULL, 0, 100, 2, distro(node));
		region_free(&r);
	} else {
		status = fail_server(&p, NULL, cookie, 0, 100,
				     RDS_RDMA_NOTIFY_ME, 1, 2);
		if (!distro(peer_node))
			EXPECT_STATUS(status, RDS_RDMA_REMOTE_ERROR);
	}
	pair_end(&p);
	/*
	 * The distribution frees a use-once MR when the ACK arrives, but in
	 * the receive path, so the INVALIDATE flush is only queued, and the
	 * key still works for a while.
	 */
	if (status == RDS_RDMA_SUCCESS && distro(owner))
		rt_skip("distribution on node %d: USE_ONCE|INVALIDATE key valid after ACK",
			owner);
}

/*
 * Many RDMA WRITEs back to back, each with NOTIFY_ME and its own token,
 * into slices of one MR: every notification arrives, SUCCESS, each token
 * once; every ACK arrives in order; every slice holds its data.
 */
/*
 * Collect the notifications of operations 0 .. n - 1 (token_of(i)), each
 * once, all SUCCESS.  Return: how many arrived.
 */
static int collect_notes(int fd, int n)
{
	unsigned char seen[PIPE_OPS];
	unsigned char buf[64];
	int k, got = 0;
	uint64_t tok;
	struct rx rx;
	long ret;

	ASSERT_TRUE(n <= PIPE_OPS, "%d notifications to collect", n);
	memset(seen, 0, sizeof(seen));
	while (got < n) {
		if (!(poll_fd(fd, POLLIN, RCV_TIMEOUT_MS) & POLLIN)) {
			rt_fail("%d of %d notifications in %d ms", got, n,
				RCV_TIMEOUT_MS);
			break;
		}
		ret = rx_msg(fd, buf, sizeof(buf), MSG_DONTWAIT, &rx);
		if (ret < 0 && errno == EAGAIN && distro(node))
			continue;	/* see expect_note() */
		ASSERT_TRUE(ret == 0, "recvmsg: %ld (%s) where notifications were due",
			    ret, ret < 0 ? rt_errname(errno) : "a message");
		ASSERT_TRUE(rx.nnote > 0 && rx.nnote <= NOTE_MAX,
			    "%d notifications in one message", rx.nnote);
		for (k = 0; k < rx.nnote; k++) {
			tok = rx.note[k].user_token - token_of(0);
			EXPECT_STATUS(rx.note[k].status, RDS_RDMA_SUCCESS);
			if (!EXPECT_TRUE(tok < (uint64_t)n && !seen[tok],
					 "token %#llx unknown or repeated",
					 (unsigned long long)rx.note[k].user_token))
				continue;
			seen[tok] = 1;
			got++;
		}
	}
	return got;
}

static void pipeline(int owner)
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
static void silent(int owner)
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

/*
 * The owner's side of a case whose RDMA must fail: 8 KiB mapped (request
 * 1), GOTIT heard, then fail_owner(): no ACK, the memory unchanged; with
 * @quirk, an RDMA of @len bytes at 0 that succeeded anyway is accepted.
 */
static void owner_of_failure(struct pair *p, size_t len, int quirk)
{
	struct region r;
	struct rx rx;
	uint64_t cookie;

	region_init(&r, 0, 8192, msg_seed(node, 1));
	cookie = owner_map(p, &r, 0, 1);
	expect_kind(p, K_GOTIT, 1, &rx);
	fail_owner(p, &r, &cookie, 0, len, 1, quirk);
	if (cookie)
		EXPECT_EQ(rds_free_mr(p->fd, cookie, 0), 0);
	region_free(&r);
}

/* The initiator's side: the cookie of request 1, and GOTIT to say so. */
static uint64_t server_cookie_ack(struct pair *p)
{
	uint64_t cookie = server_cookie(p, 1);

	send_kind(p, &p->peer, K_GOTIT, 1, NULL, 0);
	return cookie;
}

/*
 * An RDMA with a cookie the owner never handed out fails at the peer's
 * HCA: REMOTE_ERROR, no ACK; then RDMA works again.  Our module counts
 * each operation's end by status (rdma_done_*), once.
 */
static void bogus_cookie(int owner)
{
	struct rdma_op op = {
		.write = 1, .start = 0, .mr_len = 8192, .off = 16, .len = 4000,
	};
	long long remote_err = 0, success = 0;
	struct pair p;
	uint64_t cookie;
	int status;

	pair_start(&p, owner);
	if (p.owner) {
		owner_of_failure(&p, 0, 0);
	} else {
		if (!distro(node)) {
			remote_err = rds_counter(p.fd, "rdma_done_remote_error");
			success = rds_counter(p.fd, "rdma_done_success");
		}
		cookie = server_cookie_ack(&p);
		/* another key: the top bit of the rkey flipped */
		status = fail_server(&p, NULL, cookie ^ 0x80000000ULL, 0, 64,
				     RDS_RDMA_NOTIFY_ME, 1, 1);
		EXPECT_STATUS(status, RDS_RDMA_REMOTE_ERROR);
		if (!distro(node))
			EXPECT_EQ(rds_counter(p.fd, "rdma_done_remote_error") -
				  remote_err, 1);
	}
	rdma_cycle(&p, &op, 2);
	if (!p.owner && !distro(node))
		EXPECT_EQ(rds_counter(p.fd, "rdma_done_success") - success, 1);
	pair_end(&p);
}

/*
 * FREE_MR with RDS_RDMA_INVALIDATE: the key is dead at once; an RDMA WRITE
 * with it fails (REMOTE_ERROR) and the memory is unchanged.  FREE_MR
 * {0, INVALIDATE} (invalidate everything unused) succeeds.
 */
static void invalidate(int owner)
{
	struct region r;
	struct pair p;
	uint64_t cookie;
	int status;

	pair_start(&p, owner);
	if (p.owner) {
		region_init(&r, 300, 10000, msg_seed(node, 1));
		cookie = owner_map_invalidate(&p, &r, 1);
		status = fail_owner(&p, &r, NULL, 0, 0, 1, 0);
		EXPECT_EQ(rds_free_mr(p.fd, cookie, 0), -EINVAL);
		EXPECT_EQ(rds_free_mr(p.fd, 0, RDS_RDMA_INVALIDATE), 0);
		region_free(&r);
	} else {
		cookie = server_cookie_gotit(&p, 1);
		status = fail_server(&p, NULL, cookie, 0, 10000,
				     RDS_RDMA_NOTIFY_ME, 1, 1);
		EXPECT_STATUS(status, RDS_RDMA_REMOTE_ERROR);
	}
	pair_end(&p);
}

/*
 * RDS_RECVERR: a failed RDMA without NOTIFY_ME still yields its status;
 * without RDS_RECVERR nothing is queued for it.  (The distribution: see
 * the end.)
 */
static void recverr(int owner)
{
	struct region r;
	struct pair p;
	uint64_t cookie;
	int status;

	pair_start(&p, owner);
	if (p.owner) {
		region_init(&r, 0, 4096, msg_seed(node, 1));
		owner_map_invalidate(&p, &r, 1);
		status = fail_owner(&p, &r, NULL, 0, 0, 1, 0);
		region_free(&r);
		region_init(&r, 0, 4096, msg_seed(node, 2));
		owner_map_invalidate(&p, &r, 2);
		fail_owner(&p, &r, NULL, 0, 0, 2, 0);
		region_free(&r);
		sync_peer("quiet");
	} else {
		EXPECT_EQ(int_opt(p.fd, SOL_RDS, RDS_RECVERR), 0);
		ASSERT_SYS_OK(set_int_opt(p.fd, SOL_RDS, RDS_RECVERR, 1));
		EXPECT_EQ(int_opt(p.fd, SOL_RDS, RDS_RECVERR), 1);
		cookie = server_cookie_gotit(&p, 1);
		status = fail_server(&p, NULL, cookie, 0, 4096, 0, 1, 1);
		if (distro(node))
			EXPECT_STATUS(status, RDS_RDMA_DROPPED);	/* quirk */
		else
			EXPECT_STATUS(status, RDS_RDMA_REMOTE_ERROR);
		ASSERT_SYS_OK(set_int_opt(p.fd, SOL_RDS, RDS_RECVERR, 0));
		EXPECT_EQ(int_opt(p.fd, SOL_RDS, RDS_RECVERR), 0);
		cookie = server_cookie_gotit(&p, 2);
		fail_server(&p, NULL, cookie, 0, 4096, 0, 0, 2);
		sync_peer("quiet");
		rt_sleep_ms(500);
		expect_empty(p.fd);
	}
	pair_end(&p);
	/*
	 * The distribution queues a status without NOTIFY_ME only from
	 * its send path after the reconnect, for the message it will not
	 * send again: DROPPED, not the REMOTE_ERROR its completion saw.
	 */
	if (distro(3 - owner))
		rt_skip("distribution on node %d: RECVERR status DROPPED, not REMOTE_ERROR",
			3 - owner);
}

/*
 * An RDMA past the end of the MR (page-aligned, whole pages, so no
 * rounding hides it) fails with REMOTE_ERROR; nothing is written, not
 * even the part inside.
 */
static void out_of_bounds(int owner)
{
	struct pair p;
	uint64_t cookie;
	int status;

	pair_start(&p, owner);
	if (p.owner) {
		owner_of_failure(&p, 0, 0);
	} else {
		cookie = server_cookie_ack(&p);
		status = fail_server(&p, NULL, cookie, 8192 - 16, 32,
				     RDS_RDMA_NOTIFY_ME, 1, 1);
		EXPECT_STATUS(status, RDS_RDMA_REMOTE_ERROR);
	}
	pair_end(&p);
}

/*
 * The MR owner dies: a child process registers, hands out the cookie and
 * is SIGKILLed; its socket's MRs go with it, and an RDMA with the cookie
 * fails.
 */
static void client_killed(int owner)
{
	struct sockaddr_in port1;
	uint64_t cookie = 0;
	int pipefd[2], st;
	struct region r;
	struct pair p;
	struct rx rx;
	char c = 0;
	pid_t pid;

	pair_start(&p, owner);
	if (!p.owner) {
		cookie = server_cookie_on(&p, 1, 1);
		sin_set(&port1, addr_peer, case_port(1));
		send_kind(&p, &port1, K_GOTIT, 1, NULL, 0);
		sync_peer("killed");
		st = fail_server(&p, &port1, cookie, 0, 4096,
				 RDS_RDMA_NOTIFY_ME, 1, 1);
		EXPECT_STATUS(st, RDS_RDMA_REMOTE_ERROR);
		pair_end(&p);
		return;
	}
	ASSERT_SYS_OK(pipe(pipefd));
	pid = fork();
	ASSERT_TRUE(pid >= 0, "fork: %s", rt_errname(errno));
	if (pid == 0) {
		int fd = rds_bound(1, NULL);

		region_init(&r, 0, 4096, msg_seed(node, 1));
		cookie = owner_map_on(&p, fd, &r, 0, 1);
		if (write(pipefd[1], &cookie, sizeof(cookie)) != sizeof(cookie))
			_exit(1);
		expect_kind_on(fd, 0, K_GOTIT, 1, &rx);
		if (write(pipefd[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	/* owner_map_on() in the child told the peer the cookie */
	ctl_step++;
	ASSERT_TRUE(poll_fd(pipefd[0], POLLIN, RCV_TIMEOUT_MS) & POLLIN,
		    "no cookie from the child");
	ASSERT_EQ(read(pipefd[0], &cookie, sizeof(cookie)), sizeof(cookie));
	ASSERT_TRUE(poll_fd(pipefd[0], POLLIN, RCV_TIMEOUT_MS) & POLLIN,
		    "the child's request was not answered");
	ASSERT_EQ(read(pipefd[0], &c, 1), 1);
	ASSERT_SYS_OK(kill(pid, SIGKILL));
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	EXPECT_TRUE(WIFSIGNALED(st), "the child was not killed: status %#x", st);
	sync_peer("killed");
	fail_owner(&p, NULL, NULL, 0, 0, 1, 0);
	close(pipefd[0]);
	close(pipefd[1]);
	pair_end(&p);
}

/*
 * The connection breaks under an RDMA: every frame the initiator's eth0
 * sends is lost for CUT_S seconds (tc netem), so neither its RDMA WRITE
 * nor its ACK reaches the owner.  The QP gives up retrying (or the ACK
 * watchdog drops the connection), the operation ends as DROPPED, and
 * after the reconnect the ACK is not sent again (an operation may have
 * run, so it is never repeated): the owner never gets it, and traffic
 * flows again.
 */
#define CUT_S		15

/*
 * Lose every frame this node sends for CUT_S seconds (the bench's guests
 * carry RDS over eth0).  Return: the process that ends the loss.
 */
static pid_t link_cut(void)
{
	pid_t restore;

	ASSERT_TRUE(!system("tc qdisc add dev eth0 root netem loss 100%"),
		    "tc qdisc add dev eth0 root netem loss 100%% failed");
	restore = fork();
	if (restore == 0) {
		sleep(CUT_S);
		_exit(system("tc qdisc del dev eth0 root") ? 1 : 0);
	}
	if (restore < 0) {
		EXPECT_TRUE(!system("tc qdisc del dev eth0 root"), "tc del");
		rt_fail("fork: %s", rt_errname(errno));
		rt_abort();
	}
	return restore;
}

/* Wait for link_cut()'s process: the link is back. */
static void link_restored(pid_t restore)
{
	int st;

	ASSERT_EQ(waitpid(restore, &st, 0), restore);
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st),
		    "tc qdisc del dev eth0 root failed");
}

static void link_dropped(int owner)
{
	struct pair p;
	uint64_t cookie;
	pid_t restore;
	int status;

	pair_start(&p, owner);
	if (p.owner) {
		/*
		 * The distribution has no ACK watchdog: whether its RDMA
		 * fails depends on rxe's retries giving up before the link
		 * returns, and seen both ways (data and ACK arriving after
		 * CUT_S in a distro,ours run).  From it, both ends pass.
		 */
		owner_of_failure(&p, 4096, distro(peer_node));
		pair_end(&p);
		return;
	}
	cookie = server_cookie_ack(&p);
	restore = link_cut();
	status = fail_server(&p, NULL, cookie, 0, 4096, RDS_RDMA_NOTIFY_ME,
			     1, 1);
	link_restored(restore);
	if (distro(node))
		rt_diag("distribution: the operation ended with %s",
			status_name(status));
	else
		EXPECT_STATUS(status, RDS_RDMA_DROPPED);
	pair_end(&p);
}

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

/* Skip the case where node k runs the distribution's module, saying why. */
static void needs_ours(int k, const char *why)
{
	if (distro(k))
		rt_skip("distribution on node %d: %s", k, why);
}

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
static long atomic_send(int fd, const struct sockaddr_in *to,
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
static void atomic_forms(int owner)
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
 * (EINVAL); an atomic to this host (EOPNOTSUPP).  The masked forms on a
 * device without masked atomics (rxe): EOPNOTSUPP.  The distribution
 * takes unknown flags, an atomic with an RDMA and masked atomics on rxe,
 * which then fail on the wire: the case runs on our module only.
 */
static void test_atomic_errors(void)
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
	EXPECT_SYS_ERR(atomic_send(fd, &self, &fadd, cookie, 0, res, 0, 1, 1, 0),
		       EOPNOTSUPP);

	if (!access("/sys/class/infiniband/rxe0", F_OK)) {
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
static void test_atomic_counter(void)
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
static void atomic_lock(int owner)
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
static void atomic_mixed(int owner)
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
static void atomic_released(int owner)
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
static void op_barrier_stream(int owner)
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
static void test_op_barrier_drop(void)
{
	unsigned char note[8] = { 0 };
	unsigned char data[64] = { 0 };
	uint64_t cookie, id[8], done;
	struct pair p;
	pid_t restore;
	int i, dropped = 0;

	needs_ours(2, "no operation ids or barriers");
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
}

/* --------------------------------------------------------- driver */

static const struct rt_case cases[] = {
	RT_CASE(get_mr_after_bind, 30),
	RT_CASE(get_mr_errors, 30),
	RT_CASE(free_mr_errors, 30),
	RT_CASE_OWNER(rdma_write_map, 1, 60),
	RT_CASE_OWNER(rdma_write_map, 2, 60),
	RT_CASE_OWNER(rdma_read_map, 1, 60),
	RT_CASE_OWNER(rdma_read_map, 2, 60),
	RT_CASE_OWNER(rdma_write_dest, 1, 60),
	RT_CASE_OWNER(rdma_write_dest, 2, 60),
	RT_CASE_OWNER(rdma_sizes, 1, 90),
	RT_CASE_OWNER(rdma_sizes, 2, 90),
	RT_CASE_OWNER(rdma_len_mismatch, 1, 60),
	RT_CASE_OWNER(rdma_len_mismatch, 2, 60),
	RT_CASE(cmsg_conflicts, 60),
	RT_CASE_OWNER(use_once, 1, 150),
	RT_CASE_OWNER(use_once, 2, 150),
	RT_CASE_OWNER(pipeline, 1, 90),
	RT_CASE_OWNER(pipeline, 2, 90),
	RT_CASE_OWNER(silent, 1, 60),
	RT_CASE_OWNER(silent, 2, 60),
	RT_CASE_OWNER(bogus_cookie, 1, 150),
	RT_CASE_OWNER(bogus_cookie, 2, 150),
	RT_CASE_OWNER(invalidate, 1, 150),
	RT_CASE_OWNER(invalidate, 2, 150),
	RT_CASE_OWNER(recverr, 1, 240),
	RT_CASE_OWNER(recverr, 2, 240),
	RT_CASE_OWNER(out_of_bounds, 1, 150),
	RT_CASE_OWNER(out_of_bounds, 2, 150),
	RT_CASE_OWNER(client_killed, 1, 150),
	RT_CASE_OWNER(client_killed, 2, 150),
	RT_CASE_OWNER(link_dropped, 1, 150),
	RT_CASE_OWNER(link_dropped, 2, 150),
	RT_CASE(atomic_errors, 30),
	RT_CASE_OWNER(atomic_forms, 1, 150),
	RT_CASE_OWNER(atomic_forms, 2, 150),
	RT_CASE(atomic_counter, 120),
	RT_CASE_OWNER(atomic_lock, 1, 120),
	RT_CASE_OWNER(atomic_lock, 2, 120),
	RT_CASE_OWNER(atomic_mixed, 1, 60),
	RT_CASE_OWNER(atomic_mixed, 2, 60),
	RT_CASE_OWNER(atomic_released, 1, 150),
	RT_CASE_OWNER(atomic_released, 2, 150),
	RT_CASE_OWNER(op_barrier_stream, 1, 150),
	RT_CASE_OWNER(op_barrier_stream, 2, 150),
	RT_CASE(op_barrier_drop, 150),
};

int main(int argc, char **argv)
{
	return rds_peer_main(argc, argv, cases, ARRAY_SIZE(cases), CTL_PORT,
			     PORT_BASE);
}
