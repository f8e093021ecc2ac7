// SPDX-License-Identifier: GPL-2.0
/*
 * rds-zc-bench - performance of RDS (AF_RDS) between two hosts: the RDMA
 * cycle of a storage server, memory registration, and plain datagrams.
 *
 *   rds-zc-bench server -a ADDR [-p PORT] [--once] [--idle SECS]
 *		[--no-fence]
 *   rds-zc-bench client -a ADDR -s SERVER [-p PORT] [--tests LIST] ...
 *
 * The server binds ADDR:PORT and answers what clients ask, one request per
 * message; it keeps no state but counters.  ADDR and SERVER are IPv4 or
 * IPv6 addresses, a link-local one with its interface (fe80::1%eth0).  The client runs the
 * measurements ("points") one after the other and prints, for each, one
 * machine-readable line
 *
 *   RESULT name=NAME size=BYTES inflight=N value=V unit=U [key=value...]
 *
 * (value is a number, "unsupported" when the kernel refused a feature the
 * point needs, or "error") and one line for people.  The points:
 *
 * rdma_{write,read}_{map,getmr,reuse}: the client sends a request naming
 *	its buffer (a cookie); the server RDMA-writes into it (or reads
 *	from it) with RDS_CMSG_RDMA_ARGS and RDS_RDMA_NOTIFY_ME and sends its
 *	ACK message in the same sendmsg(), a READ with RDS_RDMA_FENCE as
 *	rds(7) advises (the server's --no-fence leaves it out); the client
 *	receives the ACK and the buffer is free again.  The client's key comes from
 *	RDS_CMSG_RDMA_MAP with RDS_RDMA_USE_ONCE on the request (map), from
 *	RDS_GET_MR before and RDS_FREE_MR after every operation (getmr), or
 *	from one RDS_GET_MR per buffer kept for the whole point (reuse).
 *	The server counts the RDS_CMSG_RDMA_STATUS notifications; a point
 *	whose notifications are missing or not all RDS_RDMA_SUCCESS is an
 *	error.  Value: MiB/s of RDMA payload; inflight: operations in flight.
 * reg_pair, reg_pair_inv: RDS_GET_MR then RDS_FREE_MR (with
 *	RDS_RDMA_INVALIDATE for reg_pair_inv) of one buffer, as fast as
 *	possible, by inflight threads with a socket each, on this host only.
 *	Value: pairs per second, all threads together.
 * dgram_rtt_p50, dgram_rtt_p99: round trips of 64-byte datagrams, one at
 *	a time; median and 99th percentile in microseconds.
 * reclaim_notify, reclaim_barrier: the client RDMA-writes an MR of the
 *	server (asked for with a MR request) from 16 buffers in batches:
 *	all 16 in flight, then the batch is waited for, by one notification
 *	per operation (RDS_RDMA_NOTIFY_ME) or by one RDS_OP_BARRIER for the
 *	batch (the bulk reclaim of the original RDS design), and the buffers
 *	are reused.  Silent WRITEs, no messages.  Value: operations per
 *	second.  The barrier needs this project's module.
 * conn_setup (only with --tests conn, first of all): the first round trip
 *	of a ping on a new socket, which on a cold connection includes its
 *	setup, in milliseconds; then 20 round trips more, whose median is
 *	the warm round trip (warm_us).
 * dgram_rate, dgram_tput: datagrams sent to the server by inflight
 *	threads with a socket each, as fast as the sockets take them; the
 *	clock stops when the server has answered the last one of every
 *	thread, and its count must match.  Messages per second (64 B, 4 KiB)
 *	and MiB/s (64 KiB, 1 MiB).
 *
 * --live-keys N registers N keys more (RDS_GET_MR of one page each) before
 * the RDMA points and holds them until the last one is done: the cost of
 * a cycle on a device with many live keys.  Their RESULT lines carry
 * live_keys=N.
 *
 * Every wait is bounded (--timeout): a dead peer makes a point fail, never
 * the program hang.  Exit status: 0 if no point failed ("unsupported" is
 * not a failure), 1 if one did, 2 on bad usage.
 *
 * One client at a time per server: the server's counters are shared.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <linux/rds.h>

#ifndef AF_RDS
#define AF_RDS		21
#endif
#ifndef SOL_RDS
#define SOL_RDS		276
#endif

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define BENCH_MAGIC	0x525a4342U	/* "RZCB" */
#define DEF_PORT	18700
#define MAX_MSG		(1U << 20)	/* RDS's largest message and MR */
#define MAX_LIST	16		/* values of a list option */
#define MAX_SLOTS	64		/* RDMA operations in flight */
#define MAX_THREADS	64
#define PAGE_SZ		4096UL
#define NOTE_BATCH	64		/* notifications one recvmsg() takes */
#define MIN_MSG		((unsigned int)sizeof(struct bench_msg))
#define MAX_LIVE_KEYS	1000000
#define LIVE_KEYS_PER_FD 4096		/* live keys one socket holds */
#define WARM_PINGS	20		/* round trips after the first */

/* Message types; requests are odd, answers even. */
enum {
	T_PING = 1,	/* answered by a PONG of the same size */
	T_PONG,
	T_SINK,		/* counted, not answered */
	T_SINK_NONE,
	T_SYNC,		/* answered once everything before it was read */
	T_SYNCED,
	T_RDMA_WRITE,	/* the server writes the client's buffer */
	T_RDMA_ACK,	/* the message of the RDMA */
	T_RDMA_READ,	/* the server reads the client's buffer */
	T_RDMA_NONE,
	T_RESET,	/* zero the counters */
	T_RESET_DONE,
	T_STATS,	/* answered by the counters, once all RDMAs completed */
	T_STATS_REPLY,
	T_BYE,		/* the client is done */
	T_BYE_ACK,
	T_MR,		/* answered by the cookie of the server's MR */
	T_MR_REPLY,
};

#define F_ERROR		0x1	/* an ACK without RDMA: cookie holds errno */
#define F_STATUS	0x2	/* with F_ERROR: the cookie holds the RDMA's
				 * RDS_RDMA_* status, not an errno
				 */

/*
 * Every message starts with this header (host byte order: both ends must
 * share it, which the magic checks).
 */
struct bench_msg {
	uint32_t magic;
	uint16_t type;
	uint16_t flags;
	uint32_t slot;		/* the client's buffer, for RDMA */
	uint32_t len;		/* RDMA length */
	uint64_t seq;
	uint64_t cookie;	/* the key, when not in RDS_CMSG_RDMA_DEST */
};

/* The server's counters, as T_STATS_REPLY carries them. */
enum {
	C_RDMA,		/* RDMA operations sent */
	C_NOTE_OK,	/* notifications with RDS_RDMA_SUCCESS */
	C_NOTE_BAD,	/* notifications with another status */
	C_SEND_ERR,	/* RDMA sendmsg() failures */
	C_SINK,		/* T_SINK messages read */
	C_SINK_BYTES,
	C_BAD_STATUS,	/* the last status other than success */
	C_STALE,	/* notifications of RDMAs sent before the RESET */
	C_COUNT,
};

struct stats_msg {
	struct bench_msg h;
	uint64_t c[C_COUNT];
};

/* ------------------------------------------------------------ addresses */

/* An address of either family with its port, as bind() and sendto() take. */
union addr {
	struct sockaddr sa;
	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;
};

/* "[address%interface]:port" at most, with its NUL. */
#define ADDR_STRLEN	(INET6_ADDRSTRLEN + IF_NAMESIZE + 16)

static socklen_t addr_len(const union addr *a)
{
	return a->sa.sa_family == AF_INET6 ? sizeof(a->sin6) : sizeof(a->sin);
}

static unsigned int addr_port(const union addr *a)
{
	return ntohs(a->sa.sa_family == AF_INET6 ? a->sin6.sin6_port :
			a->sin.sin_port);
}

static void addr_set_port(union addr *a, unsigned int port)
{
	if (a->sa.sa_family == AF_INET6)
		a->sin6.sin6_port = htons(port);
	else
		a->sin.sin_port = htons(port);
}

/*
 * Whether a socket bound to @a can send to @b: RDS keeps the families
 * apart, an IPv4-mapped IPv6 address counting as IPv4.
 */
static int addr_same_family(const union addr *a, const union addr *b)
{
	const union addr *v6 = a->sa.sa_family == AF_INET6 ? a : b;

	return a->sa.sa_family == b->sa.sa_family ||
	       IN6_IS_ADDR_V4MAPPED(&v6->sin6.sin6_addr);
}

/* The address alone: "10.0.0.1", "fd00::1" or "fe80::1%eth0". */
static const char *addr_host(const union addr *a, char buf[ADDR_STRLEN])
{
	char ifname[IF_NAMESIZE];
	unsigned int id;
	size_t n;

	if (a->sa.sa_family != AF_INET6) {
		inet_ntop(AF_INET, &a->sin.sin_addr, buf, ADDR_STRLEN);
		return buf;
	}
	inet_ntop(AF_INET6, &a->sin6.sin6_addr, buf, ADDR_STRLEN);
	id = a->sin6.sin6_scope_id;
	n = strlen(buf);
	if (id && if_indextoname(id, ifname))
		snprintf(buf + n, ADDR_STRLEN - n, "%%%s", ifname);
	else if (id)
		snprintf(buf + n, ADDR_STRLEN - n, "%%%u", id);
	return buf;
}

/* "10.0.0.1:18700", or "[fd00::1]:18700" for IPv6. */
static const char *addr_str(const union addr *a, char buf[ADDR_STRLEN])
{
	char host[ADDR_STRLEN];

	snprintf(buf, ADDR_STRLEN,
		 a->sa.sa_family == AF_INET6 ? "[%s]:%u" : "%s:%u",
		 addr_host(a, host), addr_port(a));
	return buf;
}

/* -------------------------------------------------------------- options */

struct list {
	int n;
	long v[MAX_LIST];
};

static struct {
	union addr self;		/* port 0 for the client */
	union addr server;
	int have_self, have_server;
	double secs;			/* per point */
	long max_ops;			/* per point, 0: no limit */
	int timeout;			/* seconds, any single wait */
	int tests;			/* T_* bits below */
	int dirs;			/* 1: write, 2: read */
	int keys;			/* 1: map, 2: getmr, 4: reuse */
	struct list sizes, inflight, reg_threads, senders;
	long reg_size;
	int bufsize;			/* SO_RCVBUF of the server */
	long live_keys;			/* held during the RDMA points */
	int have_live_keys;
	int once;
	int no_fence;			/* server: READs without RDS_RDMA_FENCE */
	int idle;
	const char *tag;
} opt;

#define TEST_RDMA	0x1
#define TEST_REG	0x2
#define TEST_DGRAM	0x4
#define TEST_RECLAIM	0x8
#define TEST_CONN	0x10

#define RECLAIM_DEPTH	16	/* operations per batch of the reclaim points */

#define KEY_MAP		0x1
#define KEY_GETMR	0x2
#define KEY_REUSE	0x4

static const char * const key_names[] = { "map", "getmr", "reuse" };

/* ------------------------------------------------------------ utilities */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *errname(int err)
{
	const char *name = strerrorname_np(err);

	return name ? name : "E?";
}

static const char *status_name(int status)
{
	static const char * const names[] = {
		[RDS_RDMA_SUCCESS] = "SUCCESS",
		[RDS_RDMA_REMOTE_ERROR] = "REMOTE_ERROR",
		[RDS_RDMA_CANCELED] = "CANCELED",
		[RDS_RDMA_DROPPED] = "DROPPED",
		[RDS_RDMA_OTHER_ERROR] = "OTHER_ERROR",
	};

	if (status >= 0 && status < (int)ARRAY_SIZE(names))
		return names[status];
	return "unknown";
}

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "rds-zc-bench: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static const char *size_str(unsigned long size)
{
	static char buf[4][32];
	static int which;

	which = (which + 1) % 4;
	if (size >= (1UL << 20) && !(size % (1UL << 20)))
		snprintf(buf[which], sizeof(buf[which]), "%lu MiB", size >> 20);
	else if (size >= 1024 && !(size % 1024))
		snprintf(buf[which], sizeof(buf[which]), "%lu KiB", size >> 10);
	else
		snprintf(buf[which], sizeof(buf[which]), "%lu B", size);
	return buf[which];
}

static void *xmap(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED)
		die("mmap of %zu bytes: %s", len, strerror(errno));
	memset(p, 0x5a, len);
	return p;
}

static size_t page_round(size_t len)
{
	return (len + PAGE_SZ - 1) / PAGE_SZ * PAGE_SZ;
}

/* Pinned memory beyond the default limit, where the rules allow it. */
static void raise_memlock(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl))
		return;
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_MEMLOCK, &rl);
	rl.rlim_cur = RLIM_INFINITY;
	rl.rlim_max = RLIM_INFINITY;
	setrlimit(RLIMIT_MEMLOCK, &rl);
}

/*
 * A receive or send that ran out of SO_RCVTIMEO or SO_SNDTIMEO: RDS says
 * ETIMEDOUT for a receive, EAGAIN for a send.
 */
static int timed_out(int err)
{
	return err == EAGAIN || err == ETIMEDOUT;
}

static void set_timeouts(int fd, int secs)
{
	struct timeval tv = { secs, 0 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* Set a socket buffer; the privileged option first, which ignores the cap. */
static int set_buf(int fd, int force, int plain, int bytes)
{
	int got = 0;
	socklen_t len = sizeof(got);

	if (setsockopt(fd, SOL_SOCKET, force, &bytes, sizeof(bytes)))
		setsockopt(fd, SOL_SOCKET, plain, &bytes, sizeof(bytes));
	getsockopt(fd, SOL_SOCKET, plain, &got, &len);
	return got;
}

/*
 * An RDS socket bound to addr (port 0 picks one), with room for messages
 * of msg bytes (RDS lets one message take half the send buffer) and a
 * receive buffer of rcv bytes.  -1 with errno and a message in err.
 */
static int rds_open(const union addr *addr, int msg, int rcv,
		    char *err, size_t errlen)
{
	int fd, snd, want = 2 * msg + 65536;

	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket(AF_RDS): %s (is an RDS module loaded?)",
			 errname(errno));
		return -1;
	}
	snd = set_buf(fd, SO_SNDBUFFORCE, SO_SNDBUF, want);
	set_buf(fd, SO_RCVBUFFORCE, SO_RCVBUF, rcv);
	if (snd / 2 < msg) {
		snprintf(err, errlen,
			 "SO_SNDBUF is %d, too small for %d-byte messages: raise net.core.wmem_max and net.core.rmem_max (sysctl) or run as root",
			 snd, msg);
		close(fd);
		errno = ENOBUFS;
		return -1;
	}
	if (bind(fd, &addr->sa, addr_len(addr))) {
		char name[ADDR_STRLEN];
		int e = errno;

		snprintf(err, errlen, "bind %s: %s", addr_str(addr, name),
			 errname(e));
		close(fd);
		errno = e;
		return -1;
	}
	set_timeouts(fd, opt.timeout);
	return fd;
}

static void msg_init(struct bench_msg *m, int type, uint64_t seq)
{
	memset(m, 0, sizeof(*m));
	m->magic = BENCH_MAGIC;
	m->type = type;
	m->seq = seq;
}

/* sendmsg() of len bytes of buf to @to, with one SOL_RDS control message. */
static long send_cm(int fd, const union addr *to, const void *buf,
		    size_t len, int cm_type, const void *cm, size_t cm_len)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct rds_rdma_args))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { (void *)buf, len };
	struct msghdr msg = {
		.msg_name = (void *)to,
		.msg_namelen = addr_len(to),
		.msg_iov = &iov,
		.msg_iovlen = 1,
	};
	struct cmsghdr *c;

	if (cm) {
		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.buf;
		msg.msg_controllen = CMSG_SPACE(cm_len);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_RDS;
		c->cmsg_type = cm_type;
		c->cmsg_len = CMSG_LEN(cm_len);
		memcpy(CMSG_DATA(c), cm, cm_len);
	}
	return sendmsg(fd, &msg, 0);
}

static long send_plain(int fd, const union addr *to, const void *buf,
		       size_t len)
{
	return send_cm(fd, to, buf, len, 0, NULL, 0);
}

/* What recvmsg() brought besides the data. */
struct rx {
	union addr from;
	int ndest;
	uint64_t cookie;	/* of RDS_CMSG_RDMA_DEST */
	int nnote;		/* RDS_CMSG_RDMA_STATUS notifications */
	struct rds_rdma_notify note[NOTE_BATCH];
};

static long recv_rx(int fd, void *buf, size_t len, int flags, struct rx *rx)
{
	union {
		char buf[NOTE_BATCH * CMSG_SPACE(sizeof(struct rds_rdma_notify))];
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
	struct rds_rdma_notify note;
	struct cmsghdr *c;
	long ret;

	memset(rx, 0, sizeof(*rx));
	ret = recvmsg(fd, &msg, flags);
	if (ret < 0)
		return ret;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_RDS)
			continue;
		if (c->cmsg_type == RDS_CMSG_RDMA_DEST &&
		    c->cmsg_len >= CMSG_LEN(sizeof(uint64_t))) {
			memcpy(&rx->cookie, CMSG_DATA(c), sizeof(uint64_t));
			rx->ndest++;
		} else if (c->cmsg_type == RDS_CMSG_RDMA_STATUS &&
			   c->cmsg_len >= CMSG_LEN(sizeof(note))) {
			memcpy(&note, CMSG_DATA(c), sizeof(note));
			if (rx->nnote < NOTE_BATCH)
				rx->note[rx->nnote++] = note;
		}
	}
	return ret;
}

static int valid_msg(const void *buf, long n)
{
	const struct bench_msg *m = buf;

	return n >= (long)sizeof(*m) && m->magic == BENCH_MAGIC;
}

/* ---------------------------------------------------------------- server */

static unsigned char *srv_buf;		/* received messages */
static unsigned char *srv_rdma;		/* the server's side of every RDMA */
static uint64_t srv_c[C_COUNT];
static union addr srv_peer[MAX_SLOTS];		/* who asked, by slot */
static unsigned char *srv_mr_buf;		/* the MR of T_MR */
static uint64_t srv_mr_cookie;
static uint64_t srv_epoch;			/* RESETs so far, 16 bits */

/* An RDMA's user_token: the epoch, the request's sequence, its slot. */
static uint64_t token_of(uint64_t seq, uint32_t slot)
{
	return srv_epoch << 48 | (seq & ((1ULL << 40) - 1)) << 8 | (slot & 0xff);
}

static void srv_reply(int fd, const union addr *to, int type,
		      uint64_t seq)
{
	char name[ADDR_STRLEN];
	struct stats_msg s;
	size_t len = sizeof(s.h);

	msg_init(&s.h, type, seq);
	if (type == T_STATS_REPLY) {
		memcpy(s.c, srv_c, sizeof(s.c));
		len = sizeof(s);
	}
	if (send_plain(fd, to, &s, len) < 0)
		fprintf(stderr, "rds-zc-bench server: answer to %s: %s\n",
			addr_str(to, name), errname(errno));
}

/* The RDMA a request asks for, with its ACK in the same sendmsg(). */
static void srv_rdma_op(int fd, const struct bench_msg *req,
			const struct rx *rx)
{
	char name[ADDR_STRLEN];
	struct bench_msg ack;
	struct rds_iovec local = { (uintptr_t)srv_rdma, req->len };
	struct rds_rdma_args args = {
		.cookie = rx->ndest ? rx->cookie : req->cookie,
		.remote_vec = { 0, req->len },
		.local_vec_addr = (uintptr_t)&local,
		.nr_local = 1,
		.flags = RDS_RDMA_NOTIFY_ME |
			 (req->type == T_RDMA_WRITE ? RDS_RDMA_READWRITE :
			  opt.no_fence ? 0 : RDS_RDMA_FENCE),
		.user_token = token_of(req->seq, req->slot),
	};
	int err = 0;

	msg_init(&ack, T_RDMA_ACK, req->seq);
	ack.slot = req->slot;
	ack.len = req->len;
	if (!req->len || req->len > MAX_MSG || req->slot >= MAX_SLOTS) {
		err = EMSGSIZE;
	} else if (send_cm(fd, &rx->from, &ack, sizeof(ack),
			   RDS_CMSG_RDMA_ARGS, &args, sizeof(args)) < 0) {
		err = errno;
		srv_c[C_SEND_ERR]++;
		fprintf(stderr, "rds-zc-bench server: RDMA %s of %u bytes for %s: %s\n",
			req->type == T_RDMA_WRITE ? "WRITE" : "READ", req->len,
			addr_str(&rx->from, name), errname(err));
	} else {
		srv_c[C_RDMA]++;
		srv_peer[req->slot] = rx->from;
	}
	if (err) {
		/* no RDMA: the client still hears of it, without waiting */
		ack.flags = F_ERROR;
		ack.cookie = err;
		send_plain(fd, &rx->from, &ack, sizeof(ack));
	}
}

/* T_MR: the cookie of the server's MR, registered once; or F_ERROR. */
static void srv_mr(int fd, const struct bench_msg *req, const struct rx *rx)
{
	struct rds_get_mr_args args = {
		.vec = { (uintptr_t)srv_mr_buf, MAX_MSG },
		.cookie_addr = (uintptr_t)&srv_mr_cookie,
	};
	struct bench_msg m;

	msg_init(&m, T_MR_REPLY, req->seq);
	if (!srv_mr_cookie &&
	    setsockopt(fd, SOL_RDS, RDS_GET_MR, &args, sizeof(args))) {
		m.flags = F_ERROR;
		m.cookie = errno;
		srv_mr_cookie = 0;
	} else {
		m.cookie = srv_mr_cookie;
	}
	send_plain(fd, &rx->from, &m, sizeof(m));
}

/*
 * A notification.  One of an RDMA sent before the last RESET belongs to a
 * point that is over (it failed, or its notifications came late): it is
 * counted apart.  If an RDMA failed, its ACK will never come (RDS delivers
 * both or neither): tell the client at once, the status in the cookie.
 */
static void srv_note(int fd, const struct rds_rdma_notify *note)
{
	struct bench_msg m;
	union addr to;
	uint32_t slot = note->user_token & 0xff;
	uint64_t seq = (note->user_token >> 8) & ((1ULL << 40) - 1);

	if (note->user_token >> 48 != srv_epoch) {
		srv_c[C_STALE]++;
		return;
	}
	if (note->status == RDS_RDMA_SUCCESS) {
		srv_c[C_NOTE_OK]++;
		return;
	}
	srv_c[C_NOTE_BAD]++;
	srv_c[C_BAD_STATUS] = note->status;
	fprintf(stderr, "rds-zc-bench server: RDMA %llu failed, status %d\n",
		(unsigned long long)seq, note->status);
	if (slot >= MAX_SLOTS || !srv_peer[slot].sa.sa_family)
		return;
	to = srv_peer[slot];
	msg_init(&m, T_RDMA_ACK, seq);
	m.slot = slot;
	m.flags = F_ERROR | F_STATUS;
	m.cookie = note->status;
	send_plain(fd, &to, &m, sizeof(m));
}

static int run_server(void)
{
	char name[ADDR_STRLEN];
	union addr stats_to;
	double stats_deadline = 0, last = now();
	uint64_t stats_seq = 0;
	int fd, stats_pending = 0, bad = 0, i, tmo_ms = 0;
	char err[256];

	srv_buf = xmap(MAX_MSG + PAGE_SZ);
	srv_rdma = xmap(MAX_MSG);
	srv_mr_buf = xmap(MAX_MSG);
	fd = rds_open(&opt.self, 4096, opt.bufsize, err, sizeof(err));
	if (fd < 0)
		die("%s", err);
	printf("rds-zc-bench server on %s%s%s\n", addr_str(&opt.self, name),
	       opt.once ? ", until the client's BYE" : "",
	       opt.no_fence ? ", READs without RDS_RDMA_FENCE" : "");
	fflush(stdout);

	for (;;) {
		const struct bench_msg *m = (const void *)srv_buf;
		int want_ms = stats_pending ? 100 : 500;
		struct rx rx;
		long n;

		/* short waits while the counters are due, to look at the clock */
		if (want_ms != tmo_ms) {
			struct timeval tv = { 0, want_ms * 1000 };

			setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
			tmo_ms = want_ms;
		}
		n = recv_rx(fd, srv_buf, MAX_MSG + PAGE_SZ, 0, &rx);
		if (n < 0 && !timed_out(errno) && errno != EINTR)
			die("server: recvmsg: %s", errname(errno));
		if (n >= 0)
			last = now();
		for (i = 0; i < rx.nnote; i++) {
			bad |= rx.note[i].status != RDS_RDMA_SUCCESS;
			srv_note(fd, &rx.note[i]);
		}
		if (n > 0 && valid_msg(srv_buf, n)) {
			switch (m->type) {
			case T_PING:
				((struct bench_msg *)srv_buf)->type = T_PONG;
				send_plain(fd, &rx.from, srv_buf, n);
				break;
			case T_SINK:
				srv_c[C_SINK]++;
				srv_c[C_SINK_BYTES] += n;
				break;
			case T_SYNC:
				srv_reply(fd, &rx.from, T_SYNCED, m->seq);
				break;
			case T_RDMA_WRITE:
			case T_RDMA_READ:
				srv_rdma_op(fd, m, &rx);
				break;
			case T_MR:
				srv_mr(fd, m, &rx);
				break;
			case T_RESET:
				memset(srv_c, 0, sizeof(srv_c));
				srv_epoch = (srv_epoch + 1) & 0xffff;
				srv_reply(fd, &rx.from, T_RESET_DONE, m->seq);
				break;
			case T_STATS:
				stats_pending = 1;
				stats_to = rx.from;
				stats_seq = m->seq;
				stats_deadline = now() + 5;
				break;
			case T_BYE:
				srv_reply(fd, &rx.from, T_BYE_ACK, m->seq);
				if (opt.once) {
					close(fd);
					printf("rds-zc-bench server: done%s\n",
					       bad ? ", with failed RDMA notifications" : "");
					return bad;
				}
				break;
			}
		}
		/* the counters once every RDMA sent has its notification */
		if (stats_pending &&
		    (srv_c[C_NOTE_OK] + srv_c[C_NOTE_BAD] >= srv_c[C_RDMA] ||
		     now() > stats_deadline)) {
			srv_reply(fd, &stats_to, T_STATS_REPLY, stats_seq);
			stats_pending = 0;
		}
		if (opt.idle && now() - last > opt.idle) {
			fprintf(stderr, "rds-zc-bench server: no message for %d s, exiting\n",
				opt.idle);
			close(fd);
			return 1;
		}
	}
}

/* ---------------------------------------------------------------- client */

static int failures;

/* "live_keys=N" while the live keys are held, on every RESULT line */
static char live_field[40];

/* A RESULT line and its human form. */
static void result(const char *name, unsigned long size, int inflight,
		   double value, const char *unit, const char *extra,
		   const char *human)
{
	printf("RESULT name=%s size=%lu inflight=%d value=%.3f unit=%s%s%s%s%s%s%s\n",
	       name, size, inflight, value, unit, extra ? " " : "",
	       extra ? extra : "", live_field[0] ? " " : "", live_field,
	       opt.tag ? " " : "", opt.tag ? opt.tag : "");
	printf("  %s\n", human);
	fflush(stdout);
}

/* A point that could not run: "unsupported" (why) or "error" (why). */
static void no_result(const char *name, unsigned long size, int inflight,
		      const char *unit, int unsupported, const char *why)
{
	printf("RESULT name=%s size=%lu inflight=%d value=%s unit=%s reason=\"%s\"%s%s%s%s\n",
	       name, size, inflight, unsupported ? "unsupported" : "error",
	       unit, why, live_field[0] ? " " : "", live_field,
	       opt.tag ? " " : "", opt.tag ? opt.tag : "");
	printf("  %s, %s, %d: %s: %s\n", name, size_str(size), inflight,
	       unsupported ? "unsupported" : "FAILED", why);
	fflush(stdout);
	if (!unsupported)
		failures++;
}

/* The errors that say "this kernel does not do RDS_GET_MR here". */
static int unsupported_err(int err)
{
	return err == EOPNOTSUPP || err == ENODEV || err == ENOPROTOOPT;
}

/*
 * Wait for the answer of type @type and sequence @seq on fd, into buf;
 * other messages are dropped.  Its length, or -1 (errno; see timed_out()).
 */
static long wait_answer(int fd, void *buf, size_t len, int type, uint64_t seq,
			int secs)
{
	double deadline = now() + secs;
	struct rx rx;
	long n;

	do {
		n = recv_rx(fd, buf, len, 0, &rx);
		if (n < 0)
			return n;
		if (valid_msg(buf, n) && ((struct bench_msg *)buf)->type == type &&
		    ((struct bench_msg *)buf)->seq == seq)
			return n;
	} while (now() < deadline);
	errno = ETIMEDOUT;
	return -1;
}

/*
 * A request answered by the server, on fd: 0, or -1 with errno.  Waits
 * --timeout seconds, or at least a minute for the RESET that starts a
 * point: after a failed RDMA, RDS may be setting up its connection again.
 */
static int ask(int fd, int type, int answer, uint64_t seq, void *reply,
	       size_t len)
{
	int secs = opt.timeout, ret;
	struct bench_msg m;
	struct stats_msg tmp;

	if (type == T_RESET && secs < 60)
		secs = 60;
	msg_init(&m, type, seq);
	if (send_plain(fd, &opt.server, &m, sizeof(m)) < 0)
		return -1;
	if (!reply) {
		reply = &tmp;
		len = sizeof(tmp);
	}
	set_timeouts(fd, secs);
	ret = wait_answer(fd, reply, len, answer, seq, secs) < 0 ? -1 : 0;
	set_timeouts(fd, opt.timeout);
	return ret;
}

/*
 * The server answers a ping (the first message also sets up the RDS
 * connection, which can take a while): 0, or -1 after wait_s seconds.
 */
static int reach_server(int wait_s)
{
	double deadline = now() + wait_s;
	char err[256], name[ADDR_STRLEN];
	struct bench_msg m;
	uint64_t seq = 0;
	int fd, ret = -1;

	fd = rds_open(&opt.self, 4096, 1 << 20, err, sizeof(err));
	if (fd < 0) {
		fprintf(stderr, "rds-zc-bench: %s\n", err);
		return -1;
	}
	set_timeouts(fd, 1);
	while (now() < deadline) {
		msg_init(&m, T_PING, ++seq);
		if (send_plain(fd, &opt.server, &m, sizeof(m)) < 0) {
			usleep(200000);
			continue;
		}
		if (wait_answer(fd, &m, sizeof(m), T_PONG, seq, 1) >= 0) {
			ret = 0;
			break;
		}
	}
	close(fd);
	if (ret)
		fprintf(stderr, "rds-zc-bench: no answer from the server %s in %d s\n",
			addr_str(&opt.server, name), wait_s);
	return ret;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * conn_setup: the first round trip of a ping on a new socket, timed from
 * the first send to the first answer (on a cold connection RDS queues the
 * ping while it sets the connection up; a ping is sent again every
 * second meanwhile, and the answer to any of them ends the wait); then
 * WARM_PINGS round trips more on the connection now up.
 */
static void conn_point(void)
{
	double t0, first = -1, deadline, warm[WARM_PINGS];
	char why[256] = "", extra[128], human[256];
	unsigned char buf[256];
	struct bench_msg *m = (void *)buf;
	uint64_t seq = 0;
	int fd, pings = 0, i;
	struct rx rx;
	long n;

	fd = rds_open(&opt.self, 64, 1 << 20, why, sizeof(why));
	if (fd < 0)
		goto fail;
	set_timeouts(fd, 1);
	t0 = now();
	deadline = t0 + (opt.timeout > 60 ? opt.timeout : 60);
	while (first < 0 && now() < deadline) {
		memset(buf, 0, 64);
		msg_init(m, T_PING, ++seq);
		if (send_plain(fd, &opt.server, buf, 64) < 0) {
			usleep(10000);
			continue;
		}
		pings++;
		do {
			n = recv_rx(fd, buf, sizeof(buf), 0, &rx);
			if (n >= 0 && valid_msg(buf, n) && m->type == T_PONG) {
				first = now() - t0;
				break;
			}
		} while (n >= 0 || errno == EINTR);
	}
	if (first < 0) {
		snprintf(why, sizeof(why), "no answer in %.0f s (%d pings)",
			 deadline - t0, pings);
		goto fail;
	}
	set_timeouts(fd, opt.timeout);
	for (i = 0; i < WARM_PINGS; i++) {
		double t = now();

		memset(buf, 0, 64);
		msg_init(m, T_PING, ++seq);
		if (send_plain(fd, &opt.server, buf, 64) < 0 ||
		    wait_answer(fd, buf, sizeof(buf), T_PONG, seq,
				opt.timeout) < 0) {
			snprintf(why, sizeof(why), "warm ping %d: %s", i + 1,
				 errname(errno));
			goto fail;
		}
		warm[i] = (now() - t) * 1e6;
	}
	close(fd);
	qsort(warm, WARM_PINGS, sizeof(*warm), cmp_double);
	snprintf(extra, sizeof(extra), "pings=%d warm_us=%.1f", pings,
		 warm[(WARM_PINGS - 1) / 2]);
	snprintf(human, sizeof(human),
		 "first round trip on a new socket: %.1f ms (%d ping(s) sent); warm round trip: median %.1f us of %d",
		 first * 1e3, pings, warm[(WARM_PINGS - 1) / 2], WARM_PINGS);
	result("conn_setup", 64, 1, first * 1e3, "ms", extra, human);
	return;
fail:
	if (fd >= 0)
		close(fd);
	no_result("conn_setup", 64, 1, "ms", 0, why);
}

/* ------------------------------------------------------------ RDMA cycle */

struct slot {
	unsigned char *buf;
	uint64_t cookie;	/* getmr, reuse: the key; map: what MAP stored */
	uint64_t seq;
	int busy;
};

static int get_mr(int fd, void *buf, size_t len, uint64_t *cookie)
{
	struct rds_get_mr_args args = {
		.vec = { (uintptr_t)buf, len },
		.cookie_addr = (uintptr_t)cookie,
		.flags = 0,
	};

	return setsockopt(fd, SOL_RDS, RDS_GET_MR, &args, sizeof(args));
}

static int free_mr(int fd, uint64_t cookie, uint64_t flags)
{
	struct rds_free_mr_args args = { cookie, flags };

	return setsockopt(fd, SOL_RDS, RDS_FREE_MR, &args, sizeof(args));
}

/*
 * --live-keys: keys registered before the RDMA points and held until
 * they are done, one page each, LIVE_KEYS_PER_FD per socket.
 */
static struct {
	int nfd;
	int *fd;
	unsigned char *mem;
	uint64_t *cookie;
	long n;			/* registered so far */
	char why[256];		/* why the points cannot run */
	int unsupported;
} live;

/* Register opt.live_keys keys: 0, or -1 with live.why set. */
static int live_keys_get(void)
{
	long want = opt.live_keys, i;
	double t0 = now();
	int j;

	snprintf(live_field, sizeof(live_field), "live_keys=%ld", want);
	if (!want)
		return 0;
	live.nfd = (want + LIVE_KEYS_PER_FD - 1) / LIVE_KEYS_PER_FD;
	live.fd = calloc(live.nfd, sizeof(*live.fd));
	live.cookie = calloc(want, sizeof(*live.cookie));
	if (!live.fd || !live.cookie)
		die("out of memory");
	live.mem = xmap(want * PAGE_SZ);
	for (j = 0; j < live.nfd; j++)
		live.fd[j] = -1;
	for (j = 0; j < live.nfd; j++) {
		live.fd[j] = rds_open(&opt.self, 4096, 65536, live.why,
				      sizeof(live.why));
		if (live.fd[j] < 0)
			return -1;
	}
	for (i = 0; i < want; i++) {
		if (get_mr(live.fd[i / LIVE_KEYS_PER_FD], live.mem + i * PAGE_SZ,
			   PAGE_SZ, &live.cookie[i])) {
			int e = errno;

			snprintf(live.why, sizeof(live.why),
				 "live key %ld of %ld: RDS_GET_MR: %s%s", i + 1,
				 want, errname(e),
				 e == EAGAIN ? " (MR pool full: fmr_pool_size)" : "");
			live.unsupported = !i && unsupported_err(e);
			return -1;
		}
		live.n++;
	}
	printf("# live keys: %ld registered (one page each, %d socket(s)) in %.2f s\n",
	       want, live.nfd, now() - t0);
	fflush(stdout);
	return 0;
}

/* Release the live keys (RDS_FREE_MR) and close their sockets. */
static void live_keys_put(void)
{
	double t0 = now();
	long i, bad = 0;
	int j;

	live_field[0] = 0;
	for (i = 0; i < live.n; i++)
		if (free_mr(live.fd[i / LIVE_KEYS_PER_FD], live.cookie[i], 0))
			bad++;
	for (j = 0; j < live.nfd; j++)
		if (live.fd[j] >= 0)
			close(live.fd[j]);
	if (live.n)
		printf("# live keys: %ld released (RDS_FREE_MR) in %.2f s%s\n",
		       live.n, now() - t0, bad ? ", some FAILED" : "");
	if (bad) {
		fprintf(stderr, "rds-zc-bench: RDS_FREE_MR of %ld live key(s) failed\n",
			bad);
		failures++;
	}
	if (live.mem)
		munmap(live.mem, opt.live_keys * PAGE_SZ);
	free(live.fd);
	free(live.cookie);
	memset(&live, 0, sizeof(live));
}

struct rdma_point {
	int write;
	int key;		/* KEY_* */
	unsigned int size;
	int inflight;
	int fd;
	struct slot slots[MAX_SLOTS];
	uint64_t seq;
	long issued;
	char why[256];
	int unsupported;
};

/* Send the request of slot i: 0, or -1 with p->why set. */
static int rdma_issue(struct rdma_point *p, int i)
{
	struct slot *s = &p->slots[i];
	struct rds_get_mr_args map = {
		.vec = { (uintptr_t)s->buf, p->size },
		.cookie_addr = (uintptr_t)&s->cookie,
		.flags = RDS_RDMA_USE_ONCE,
	};
	struct bench_msg m;
	long ret;

	msg_init(&m, p->write ? T_RDMA_WRITE : T_RDMA_READ, ++p->seq);
	m.slot = i;
	m.len = p->size;
	if (p->key == KEY_GETMR) {
		if (get_mr(p->fd, s->buf, p->size, &s->cookie)) {
			int e = errno;

			snprintf(p->why, sizeof(p->why), "RDS_GET_MR: %s",
				 errname(e));
			p->unsupported = !p->issued && unsupported_err(e);
			return -1;
		}
	}
	if (p->key != KEY_MAP) {
		m.cookie = s->cookie;
		ret = send_plain(p->fd, &opt.server, &m, sizeof(m));
	} else {
		ret = send_cm(p->fd, &opt.server, &m, sizeof(m),
			      RDS_CMSG_RDMA_MAP, &map, sizeof(map));
	}
	if (ret < 0) {
		int e = errno;

		snprintf(p->why, sizeof(p->why), "sendmsg of the request%s: %s",
			 p->key == KEY_MAP ? " with RDS_CMSG_RDMA_MAP" : "",
			 errname(e));
		p->unsupported = !p->issued && p->key == KEY_MAP &&
				 unsupported_err(e);
		if (p->key == KEY_GETMR)
			free_mr(p->fd, s->cookie, 0);
		return -1;
	}
	s->seq = m.seq;
	s->busy = 1;
	p->issued++;
	return 0;
}

/* Wait for one ACK and release its slot: the slot, or -1 with p->why. */
static int rdma_complete(struct rdma_point *p)
{
	struct bench_msg m;
	struct slot *s;
	struct rx rx;
	long n;

	for (;;) {
		n = recv_rx(p->fd, &m, sizeof(m), 0, &rx);
		if (n < 0 && timed_out(errno)) {
			snprintf(p->why, sizeof(p->why),
				 "no ACK from the server in %d s", opt.timeout);
			return -1;
		}
		if (n < 0) {
			snprintf(p->why, sizeof(p->why), "recvmsg: %s",
				 errname(errno));
			return -1;
		}
		if (valid_msg(&m, n) && m.type == T_RDMA_ACK &&
		    m.slot < (unsigned int)p->inflight &&
		    p->slots[m.slot].busy && p->slots[m.slot].seq == m.seq)
			break;
	}
	s = &p->slots[m.slot];
	s->busy = 0;
	if (m.flags & F_STATUS) {
		snprintf(p->why, sizeof(p->why),
			 "the RDMA of operation %llu failed: status %s",
			 (unsigned long long)m.seq, status_name((int)m.cookie));
		return -1;
	}
	if (m.flags & F_ERROR) {
		snprintf(p->why, sizeof(p->why), "the server's RDMA sendmsg failed: %s",
			 errname((int)m.cookie));
		return -1;
	}
	if (p->key == KEY_GETMR && free_mr(p->fd, s->cookie, 0)) {
		snprintf(p->why, sizeof(p->why), "RDS_FREE_MR: %s", errname(errno));
		return -1;
	}
	return m.slot;
}

static void rdma_point(int write, int key, unsigned int size, int inflight)
{
	struct rdma_point *p = calloc(1, sizeof(*p));
	double t0, t1, secs, deadline, mibs;
	char name[64], extra[256], human[256];
	size_t maplen = page_round(size);
	long ops = 0, started, goal;
	int i, k, busy, ok = 0, nreg = 0;
	struct stats_msg st;

	if (!p)
		die("out of memory");
	snprintf(name, sizeof(name), "rdma_%s_%s", write ? "write" : "read",
		 key_names[__builtin_ctz(key)]);
	p->write = write;
	p->key = key;
	p->size = size;
	p->inflight = inflight;
	if (live.why[0]) {
		snprintf(p->why, sizeof(p->why), "%s", live.why);
		p->unsupported = live.unsupported;
		p->fd = -1;
		goto out;
	}
	p->fd = rds_open(&opt.self, 4096, 4 << 20, p->why, sizeof(p->why));
	if (p->fd < 0)
		goto out;
	for (i = 0; i < inflight; i++)
		p->slots[i].buf = xmap(maplen);
	if (key == KEY_REUSE) {
		for (i = 0; i < inflight; i++, nreg++) {
			if (get_mr(p->fd, p->slots[i].buf, size,
				   &p->slots[i].cookie)) {
				int e = errno;

				snprintf(p->why, sizeof(p->why), "RDS_GET_MR: %s",
					 errname(e));
				p->unsupported = !i && unsupported_err(e);
				goto out;
			}
		}
	}
	if (ask(p->fd, T_RESET, T_RESET_DONE, ++p->seq, NULL, 0)) {
		snprintf(p->why, sizeof(p->why), "no answer to RESET: %s",
			 errname(errno));
		goto out;
	}

	/*
	 * Fill every slot.  The clock starts at the first ACK, with the
	 * pipeline full (that operation, the warm-up, is not counted), and
	 * stops when the last operation in flight is back: the count is of
	 * the ACKs in between.
	 */
	for (busy = 0; busy < inflight; busy++)
		if (rdma_issue(p, busy))
			goto out;
	k = rdma_complete(p);
	if (k < 0)
		goto out;
	goal = opt.max_ops ? opt.max_ops : LONG_MAX;
	t0 = now();
	deadline = t0 + opt.secs;
	if (rdma_issue(p, k))
		goto out;
	started = 1;
	while (busy) {
		k = rdma_complete(p);
		if (k < 0)
			goto out;
		ops++;
		if (now() < deadline && started < goal) {
			if (rdma_issue(p, k))
				goto out;
			started++;
		} else {
			busy--;
		}
	}
	t1 = now();

	if (ask(p->fd, T_STATS, T_STATS_REPLY, ++p->seq, &st, sizeof(st))) {
		snprintf(p->why, sizeof(p->why), "no answer to STATS: %s",
			 errname(errno));
		goto out;
	}
	if (st.c[C_RDMA] != (uint64_t)p->issued ||
	    st.c[C_NOTE_OK] != (uint64_t)p->issued || st.c[C_NOTE_BAD]) {
		snprintf(p->why, sizeof(p->why),
			 "%ld RDMAs asked, the server sent %llu and had %llu notifications of success, %llu of failure (last status %llu)",
			 p->issued, (unsigned long long)st.c[C_RDMA],
			 (unsigned long long)st.c[C_NOTE_OK],
			 (unsigned long long)st.c[C_NOTE_BAD],
			 (unsigned long long)st.c[C_BAD_STATUS]);
		goto out;
	}

	secs = t1 - t0;
	mibs = ops * (double)size / secs / (1 << 20);
	snprintf(extra, sizeof(extra),
		 "ops=%ld secs=%.3f ops_s=%.1f lat_us=%.1f notes_ok=%llu",
		 ops, secs, ops / secs, secs * inflight / ops * 1e6,
		 (unsigned long long)st.c[C_NOTE_OK]);
	snprintf(human, sizeof(human),
		 "RDMA %s, key by %s, %s, %d in flight: %.2f MiB/s, %.1f ops/s, %.2f ms per operation (%ld ops in %.2f s, every notification SUCCESS)",
		 write ? "WRITE" : "READ", key_names[__builtin_ctz(key)],
		 size_str(size), inflight, mibs, ops / secs,
		 secs * inflight / ops * 1e3, ops, secs);
	result(name, size, inflight, mibs, "MiB/s", extra, human);
	ok = 1;
out:
	if (!ok)
		no_result(name, size, inflight, "MiB/s", p->unsupported, p->why);
	if (p->fd >= 0) {
		for (i = 0; i < nreg; i++)
			free_mr(p->fd, p->slots[i].cookie, RDS_RDMA_INVALIDATE);
		close(p->fd);
	}
	/*
	 * After a failure the server may still be working on a buffer: leave
	 * the memory mapped rather than let an RDMA land in freed pages.
	 */
	if (ok)
		for (i = 0; i < inflight; i++)
			munmap(p->slots[i].buf, maplen);
	free(p);
}

/* ---------------------------------------------------------- registration */

struct reg_thread {
	pthread_t tid;
	pthread_barrier_t *start;
	int inv;
	long pairs;
	double secs;
	char why[256];
	int unsupported;
};

static void *reg_worker(void *arg)
{
	struct reg_thread *t = arg;
	size_t maplen = page_round(opt.reg_size);
	unsigned char *buf = xmap(maplen);
	uint64_t cookie = 0;
	double t0, deadline;
	int fd;

	fd = rds_open(&opt.self, 4096, 65536, t->why, sizeof(t->why));
	pthread_barrier_wait(t->start);
	if (fd < 0)
		goto out;
	t0 = now();
	deadline = t0 + opt.secs;
	while (now() < deadline && (!opt.max_ops || t->pairs < opt.max_ops)) {
		if (get_mr(fd, buf, opt.reg_size, &cookie)) {
			int e = errno;

			snprintf(t->why, sizeof(t->why), "RDS_GET_MR: %s",
				 errname(e));
			t->unsupported = !t->pairs && unsupported_err(e);
			break;
		}
		if (free_mr(fd, cookie, t->inv ? RDS_RDMA_INVALIDATE : 0)) {
			snprintf(t->why, sizeof(t->why), "RDS_FREE_MR: %s",
				 errname(errno));
			break;
		}
		t->pairs++;
	}
	t->secs = now() - t0;
	close(fd);
out:
	munmap(buf, maplen);
	return NULL;
}

static void reg_point(int inv, int nthreads)
{
	const char *name = inv ? "reg_pair_inv" : "reg_pair";
	struct reg_thread *t = calloc(nthreads, sizeof(*t));
	char extra[128], human[256];
	pthread_barrier_t start;
	double rate = 0;
	long pairs = 0;
	int i;

	if (!t)
		die("out of memory");
	pthread_barrier_init(&start, NULL, nthreads);
	for (i = 0; i < nthreads; i++) {
		t[i].start = &start;
		t[i].inv = inv;
		if (pthread_create(&t[i].tid, NULL, reg_worker, &t[i]))
			die("pthread_create failed");
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(t[i].tid, NULL);
	pthread_barrier_destroy(&start);
	for (i = 0; i < nthreads; i++) {
		if (t[i].why[0]) {
			no_result(name, opt.reg_size, nthreads, "pairs/s",
				  t[i].unsupported, t[i].why);
			free(t);
			return;
		}
		pairs += t[i].pairs;
		if (t[i].secs > 0)
			rate += t[i].pairs / t[i].secs;
	}
	snprintf(extra, sizeof(extra), "pairs=%ld secs=%.3f threads=%d", pairs,
		 opt.secs, nthreads);
	snprintf(human, sizeof(human),
		 "RDS_GET_MR + RDS_FREE_MR%s of %s, %d thread(s): %.0f pairs/s, %.1f us per pair and thread",
		 inv ? " with RDS_RDMA_INVALIDATE" : "", size_str(opt.reg_size),
		 nthreads, rate, rate > 0 ? nthreads / rate * 1e6 : 0);
	result(name, opt.reg_size, nthreads, rate, "pairs/s", extra, human);
	free(t);
}

/* ------------------------------------------------------------- datagrams */

/*
 * A silent RDMA WRITE of len bytes at buf to off of the server's MR;
 * with @id, RDS_CMSG_OP_ID asks for its id there.
 */
static long send_write(int fd, uint64_t cookie, uint64_t off, void *buf,
		       size_t len, uint64_t flags, uint64_t token, uint64_t *id)
{
	struct rds_iovec iov = { (uintptr_t)buf, len };
	struct rds_rdma_args args = {
		.cookie = cookie,
		.remote_vec = { off, len },
		.local_vec_addr = (uintptr_t)&iov,
		.nr_local = 1,
		.flags = flags | RDS_RDMA_READWRITE | RDS_RDMA_SILENT,
		.user_token = token,
	};
	uint64_t where = (uintptr_t)id;
	union {
		char buf[CMSG_SPACE(sizeof(args)) + CMSG_SPACE(sizeof(where))];
		struct cmsghdr align;
	} ctl;
	struct msghdr msg = {
		.msg_name = &opt.server,
		.msg_namelen = addr_len(&opt.server),
		.msg_control = ctl.buf,
		.msg_controllen = CMSG_SPACE(sizeof(args)) +
				  (id ? CMSG_SPACE(sizeof(where)) : 0),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	memset(&ctl, 0, sizeof(ctl));
	c->cmsg_level = SOL_RDS;
	c->cmsg_type = RDS_CMSG_RDMA_ARGS;
	c->cmsg_len = CMSG_LEN(sizeof(args));
	memcpy(CMSG_DATA(c), &args, sizeof(args));
	if (id) {
		c = CMSG_NXTHDR(&msg, c);
		c->cmsg_level = SOL_RDS;
		c->cmsg_type = RDS_CMSG_OP_ID;
		c->cmsg_len = CMSG_LEN(sizeof(where));
		memcpy(CMSG_DATA(c), &where, sizeof(where));
	}
	return sendmsg(fd, &msg, 0);
}

/* Wait for a batch: @n notifications of success, or the barrier of @id. */
static int reclaim_wait(int fd, int barrier, int n, uint64_t id, char *why,
			size_t wlen)
{
	struct rds_op_barrier b = { .wait_id = id };
	socklen_t blen = sizeof(b);
	unsigned char buf[64];
	struct rx rx;
	int got = 0, i;

	if (barrier) {
		memcpy(&b.dest, &opt.server, addr_len(&opt.server));
		if (!getsockopt(fd, SOL_RDS, RDS_OP_BARRIER, &b, &blen))
			return 0;
		snprintf(why, wlen, "RDS_OP_BARRIER: %s", errname(errno));
		return -1;
	}
	while (got < n) {
		if (recv_rx(fd, buf, sizeof(buf), 0, &rx) < 0) {
			snprintf(why, wlen, "%d of %d notifications: %s", got,
				 n, errname(errno));
			return -1;
		}
		for (i = 0; i < rx.nnote; i++, got++) {
			if (rx.note[i].status != RDS_RDMA_SUCCESS) {
				snprintf(why, wlen, "an RDMA WRITE failed: status %s",
					 status_name(rx.note[i].status));
				return -1;
			}
		}
	}
	return 0;
}

static void reclaim_point(int barrier, unsigned int size)
{
	const char *name = barrier ? "reclaim_barrier" : "reclaim_notify";
	size_t slot = page_round(size);
	char why[256] = "", extra[128], human[256];
	double t0 = 0, secs, deadline = 0;
	int fd, i, unsupported = 0;
	unsigned char *buf = NULL;
	uint64_t cookie, id = 0;
	long ops = 0, batch;
	struct bench_msg m;

	fd = rds_open(&opt.self, 4096, 4 << 20, why, sizeof(why));
	if (fd < 0)
		goto out;
	buf = xmap(RECLAIM_DEPTH * slot);
	if (ask(fd, T_MR, T_MR_REPLY, 1, &m, sizeof(m))) {
		snprintf(why, sizeof(why), "no answer to MR: %s", errname(errno));
		goto out;
	}
	if (m.flags & F_ERROR) {
		snprintf(why, sizeof(why), "the server's RDS_GET_MR: %s",
			 errname((int)m.cookie));
		unsupported = unsupported_err((int)m.cookie);
		goto out;
	}
	cookie = m.cookie;
	/* Batch 0 warms up; the clock runs from batch 1 on. */
	for (batch = 0;; batch++) {
		if (batch == 1) {
			t0 = now();
			deadline = t0 + opt.secs;
		}
		for (i = 0; i < RECLAIM_DEPTH; i++) {
			int last = i == RECLAIM_DEPTH - 1;

			if (send_write(fd, cookie, (uint64_t)i * size,
				       buf + i * slot, size,
				       barrier ? 0 : RDS_RDMA_NOTIFY_ME, i,
				       barrier && last ? &id : NULL) < 0) {
				int e = errno;

				snprintf(why, sizeof(why), "sendmsg: %s",
					 errname(e));
				/* the distribution refuses RDS_CMSG_OP_ID */
				unsupported = !batch && barrier &&
					      (e == EINVAL || unsupported_err(e));
				goto out;
			}
		}
		if (reclaim_wait(fd, barrier, RECLAIM_DEPTH, id, why,
				 sizeof(why))) {
			unsupported = !batch && barrier && unsupported_err(errno);
			goto out;
		}
		if (!batch)
			continue;
		ops += RECLAIM_DEPTH;
		if (now() >= deadline || (opt.max_ops && ops >= opt.max_ops))
			break;
	}
	secs = now() - t0;
	snprintf(extra, sizeof(extra), "ops=%ld secs=%.3f", ops, secs);
	snprintf(human, sizeof(human),
		 "bulk reclaim by %s, RDMA WRITE %s, batches of %d: %.1f ops/s (%ld ops in %.2f s)",
		 barrier ? "one barrier per batch" : "a notification per operation",
		 size_str(size), RECLAIM_DEPTH, ops / secs, ops, secs);
	result(name, size, RECLAIM_DEPTH, ops / secs, "ops/s", extra, human);
	close(fd);
	munmap(buf, RECLAIM_DEPTH * slot);
	return;
out:
	no_result(name, size, RECLAIM_DEPTH, "ops/s", unsupported, why);
	if (fd >= 0)
		close(fd);
	if (buf)
		munmap(buf, RECLAIM_DEPTH * slot);
}

static void dgram_rtt(void)
{
	const unsigned int size = 64;
	size_t cap = 1 << 20, n = 0;
	double *rtt = malloc(cap * sizeof(*rtt));
	double deadline = 0, t, p50, p99;
	char why[256], extra[128], human[256];
	unsigned char buf[256];
	struct bench_msg *m = (void *)buf;
	uint64_t seq = 0;
	int fd, i;

	if (!rtt)
		die("out of memory");
	fd = rds_open(&opt.self, size, 1 << 20, why, sizeof(why));
	if (fd < 0)
		goto fail;
	for (i = -20; ; i++) {
		if (!i)
			deadline = now() + opt.secs;
		else if (i > 0 && (now() >= deadline || n == cap ||
				   (opt.max_ops && (long)n >= opt.max_ops)))
			break;
		memset(buf, 0, size);
		msg_init(m, T_PING, ++seq);
		t = now();
		if (send_plain(fd, &opt.server, buf, size) < 0) {
			snprintf(why, sizeof(why), "sendmsg: %s", errname(errno));
			goto fail;
		}
		if (wait_answer(fd, buf, sizeof(buf), T_PONG, seq,
				opt.timeout) < 0) {
			snprintf(why, sizeof(why), timed_out(errno) ?
				 "no answer in time" : "recvmsg failed");
			goto fail;
		}
		if (i >= 0)
			rtt[n++] = (now() - t) * 1e6;
	}
	close(fd);
	qsort(rtt, n, sizeof(*rtt), cmp_double);
	p50 = rtt[(n - 1) / 2];
	p99 = rtt[(n * 99 + 99) / 100 - 1];
	snprintf(extra, sizeof(extra), "samples=%zu", n);
	snprintf(human, sizeof(human),
		 "round trip of %s datagrams, median %.1f us", size_str(size), p50);
	result("dgram_rtt_p50", size, 1, p50, "us", extra, human);
	snprintf(human, sizeof(human),
		 "round trip of %s datagrams, 99th percentile %.1f us (%zu samples)",
		 size_str(size), p99, n);
	result("dgram_rtt_p99", size, 1, p99, "us", extra, human);
	free(rtt);
	return;
fail:
	if (fd >= 0)
		close(fd);
	no_result("dgram_rtt_p50", size, 1, "us", 0, why);
	no_result("dgram_rtt_p99", size, 1, "us", 0, why);
	free(rtt);
}

struct snd_thread {
	pthread_t tid;
	pthread_barrier_t *start;
	const double *t0;
	int fd;
	unsigned int size;
	unsigned char *buf;
	long msgs;
	double t_end;
	char why[256];
};

static void *snd_worker(void *arg)
{
	struct snd_thread *t = arg;
	struct bench_msg *m = (void *)t->buf;
	double deadline;

	pthread_barrier_wait(t->start);
	deadline = *t->t0 + opt.secs;
	msg_init(m, T_SINK, 0);
	while (now() < deadline && (!opt.max_ops || t->msgs < opt.max_ops)) {
		m->seq = t->msgs;
		if (send_plain(t->fd, &opt.server, t->buf, t->size) < 0) {
			snprintf(t->why, sizeof(t->why), timed_out(errno) ?
				 "sendmsg blocked for the whole timeout" :
				 "sendmsg failed: %s", errname(errno));
			return NULL;
		}
		t->msgs++;
	}
	/* RDS keeps each socket's messages in order: this answer is last */
	if (ask(t->fd, T_SYNC, T_SYNCED, UINT64_MAX, NULL, 0))
		snprintf(t->why, sizeof(t->why), "no answer to SYNC: %s",
			 errname(errno));
	t->t_end = now();
	return NULL;
}

static void dgram_stream(unsigned int size, int nthreads)
{
	const char *name = size < 65536 ? "dgram_rate" : "dgram_tput";
	const char *unit = size < 65536 ? "msg/s" : "MiB/s";
	struct snd_thread *t = calloc(nthreads, sizeof(*t));
	double t0 = 0, t1 = 0, secs, rate, mibs;
	char why[256] = "", extra[160], human[256];
	pthread_barrier_t start;
	struct stats_msg st;
	long msgs = 0;
	int ctl, i;

	if (!t)
		die("out of memory");
	for (i = 0; i < nthreads; i++)
		t[i].fd = -1;
	ctl = rds_open(&opt.self, 4096, 1 << 20, why, sizeof(why));
	if (ctl < 0)
		goto fail;
	if (ask(ctl, T_RESET, T_RESET_DONE, 1, NULL, 0)) {
		snprintf(why, sizeof(why), "no answer to RESET: %s",
			 errname(errno));
		goto fail;
	}
	for (i = 0; i < nthreads; i++) {
		t[i].fd = rds_open(&opt.self, size, 1 << 20, why, sizeof(why));
		if (t[i].fd < 0)
			goto fail;
		t[i].size = size;
		t[i].buf = xmap(size);
		t[i].t0 = &t0;
	}
	pthread_barrier_init(&start, NULL, nthreads + 1);
	for (i = 0; i < nthreads; i++) {
		t[i].start = &start;
		if (pthread_create(&t[i].tid, NULL, snd_worker, &t[i]))
			die("pthread_create failed");
	}
	t0 = now();
	pthread_barrier_wait(&start);
	for (i = 0; i < nthreads; i++) {
		pthread_join(t[i].tid, NULL);
		if (t[i].why[0] && !why[0])
			snprintf(why, sizeof(why), "%s", t[i].why);
		msgs += t[i].msgs;
		if (t[i].t_end > t1)
			t1 = t[i].t_end;
	}
	pthread_barrier_destroy(&start);
	if (why[0])
		goto fail;
	if (ask(ctl, T_STATS, T_STATS_REPLY, 2, &st, sizeof(st))) {
		snprintf(why, sizeof(why), "no answer to STATS: %s",
			 errname(errno));
		goto fail;
	}
	if (st.c[C_SINK] != (uint64_t)msgs) {
		snprintf(why, sizeof(why), "%ld datagrams sent, %llu received",
			 msgs, (unsigned long long)st.c[C_SINK]);
		goto fail;
	}
	secs = t1 - t0;
	rate = msgs / secs;
	mibs = rate * size / (1 << 20);
	snprintf(extra, sizeof(extra), "msgs=%ld secs=%.3f msg_s=%.1f mib_s=%.3f",
		 msgs, secs, rate, mibs);
	snprintf(human, sizeof(human),
		 "datagrams of %s, %d sender(s): %.0f msg/s, %.2f MiB/s (%ld in %.2f s, all received)",
		 size_str(size), nthreads, rate, mibs, msgs, secs);
	result(name, size, nthreads, size < 65536 ? rate : mibs, unit, extra,
	       human);
	goto out;
fail:
	no_result(name, size, nthreads, unit, 0, why);
out:
	for (i = 0; i < nthreads; i++) {
		if (t[i].fd >= 0)
			close(t[i].fd);
		if (t[i].buf)
			munmap(t[i].buf, size);
	}
	if (ctl >= 0)
		close(ctl);
	free(t);
}

/* --------------------------------------------------------------- options */

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: rds-zc-bench server -a ADDR [-p PORT] [--once] [--idle SECS]\n"
		"                          [--no-fence]\n"
		"       rds-zc-bench client -a ADDR -s SERVER [-p PORT] [options]\n"
		"\n"
		"Measures RDS (AF_RDS) between two hosts: the RDMA cycle of a storage\n"
		"server (request naming a buffer, RDMA WRITE or READ with its ACK in one\n"
		"sendmsg, notification), memory registration alone, and plain datagrams.\n"
		"Start the server first; each client point prints one line\n"
		"  RESULT name=NAME size=BYTES inflight=N value=V unit=U [key=value...]\n"
		"and one line for people.  ADDR must be an address of the RDMA device\n"
		"(IB or RoCE) for RDS to use its transport: IPv4 or IPv6, a link-local\n"
		"address with its interface (fe80::1%%eth0 or fe80::1%%2).  SERVER is of\n"
		"the same family.\n"
		"\n"
		"  -a, --addr ADDR        this host's address to bind (required)\n"
		"  -s, --server ADDR      the server's address (client)\n"
		"  -p, --port PORT        the server's RDS port (default %d)\n"
		"  -T, --time SECS        length of each point (default 2)\n"
		"  -n, --ops N            at most N operations per point and thread\n"
		"                         (default: no limit, only the time)\n"
		"  -t, --timeout SECS     longest wait for any answer or send (default 30)\n"
		"      --tests LIST       rdma,reg,dgram,reclaim,conn (default the first\n"
		"                         four; reg needs no server; conn: the first\n"
		"                         round trip on a new socket, cold connection)\n"
		"      --dirs LIST        RDMA directions: write,read (default both)\n"
		"      --keys LIST        how the client gets its key: map (RDS_CMSG_RDMA_MAP\n"
		"                         with RDS_RDMA_USE_ONCE on the request), getmr\n"
		"                         (RDS_GET_MR and RDS_FREE_MR per operation), reuse\n"
		"                         (one RDS_GET_MR per buffer for the whole point);\n"
		"                         default map,getmr,reuse\n"
		"      --sizes LIST       RDMA sizes (default 4K,64K,1M; at most 1M)\n"
		"      --inflight LIST    RDMA operations in flight (default 1,16; max %d)\n"
		"      --reg-size BYTES   buffer of the registration points (default 4K)\n"
		"      --reg-threads LIST registering threads (default 1,8)\n"
		"      --senders LIST     datagram senders (default 1,16)\n"
		"      --live-keys N      hold N keys more (RDS_GET_MR of one page each)\n"
		"                         during the RDMA points; live_keys=N on their\n"
		"                         RESULT lines (default none)\n"
		"      --tag TEXT         appended to every RESULT line (e.g. round=2)\n"
		"      --rcvbuf BYTES     server: SO_RCVBUF (default 16M)\n"
		"      --once             server: exit after the client's BYE\n"
		"      --idle SECS        server: exit after SECS without a message\n"
		"      --no-fence         server: READs without RDS_RDMA_FENCE (their\n"
		"                         ACK may overtake them; rds(7) advises the fence)\n"
		"  -h, --help             this text\n"
		"\n"
		"Large messages need room in socket buffers: as root the tool forces\n"
		"them (SO_SNDBUFFORCE); otherwise raise net.core.wmem_max and rmem_max.\n"
		"Exit status: 0 when no point failed (\"unsupported\" is no failure),\n"
		"1 when one did, 2 on bad usage.\n",
		DEF_PORT, MAX_SLOTS);
}

static void bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "rds-zc-bench: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n(rds-zc-bench --help for usage)\n");
	exit(2);
}

/* A number with an optional K or M suffix (powers of 1024); -1 if bad. */
static long parse_num(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || v < 0)
		return -1;
	if (*end == 'K' || *end == 'k') {
		v <<= 10;
		end++;
	} else if (*end == 'M' || *end == 'm') {
		v <<= 20;
		end++;
	}
	return *end ? -1 : v;
}

static void parse_list(struct list *l, const char *arg, long min, long max,
		       const char *what)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	long v;

	if (!copy)
		die("out of memory");
	l->n = 0;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		v = parse_num(tok);
		if (v < min || v > max || l->n == MAX_LIST)
			bad_usage(what, arg);
		l->v[l->n++] = v;
	}
	if (!l->n)
		bad_usage(what, arg);
	free(copy);
}

/* Bits of the names in a comma-separated list of names[]; exits if bad. */
static int parse_names(const char *arg, const char * const *names, int n,
		       const char *what)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	int bits = 0, i;

	if (!copy)
		die("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < n && strcmp(tok, names[i]); i++)
			;
		if (i == n)
			bad_usage(what, arg);
		bits |= 1 << i;
	}
	free(copy);
	if (!bits)
		bad_usage(what, arg);
	return bits;
}

/* IPv4, or IPv6 with an optional %ifname or %index (sin6_scope_id). */
static void parse_addr(union addr *a, const char *arg)
{
	const char *pct = strchr(arg, '%');
	size_t len = pct ? (size_t)(pct - arg) : strlen(arg);
	char ip[INET6_ADDRSTRLEN], *end = "";
	unsigned long scope = 0;

	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, arg, &a->sin.sin_addr) == 1) {
		a->sin.sin_family = AF_INET;
		return;
	}
	if (pct) {
		scope = if_nametoindex(pct + 1);
		if (!scope)
			scope = strtoul(pct + 1, &end, 10);
	}
	snprintf(ip, sizeof(ip), "%.*s", (int)len, arg);
	if (len >= sizeof(ip) || inet_pton(AF_INET6, ip, &a->sin6.sin6_addr) != 1)
		bad_usage("not an IPv4 or IPv6 address: %s", arg);
	if (pct && (!scope || *end || scope > 0xffffffffUL))
		bad_usage("no such interface: %s", arg);
	a->sin6.sin6_family = AF_INET6;
	a->sin6.sin6_scope_id = scope;
}

enum {
	O_TESTS = 256, O_DIRS, O_KEYS, O_SIZES, O_INFLIGHT, O_REG_SIZE,
	O_REG_THREADS, O_SENDERS, O_TAG, O_RCVBUF, O_ONCE, O_IDLE,
	O_LIVE_KEYS, O_NO_FENCE,
};

static const struct option long_opts[] = {
	{ "addr", required_argument, NULL, 'a' },
	{ "server", required_argument, NULL, 's' },
	{ "port", required_argument, NULL, 'p' },
	{ "time", required_argument, NULL, 'T' },
	{ "ops", required_argument, NULL, 'n' },
	{ "timeout", required_argument, NULL, 't' },
	{ "tests", required_argument, NULL, O_TESTS },
	{ "dirs", required_argument, NULL, O_DIRS },
	{ "keys", required_argument, NULL, O_KEYS },
	{ "sizes", required_argument, NULL, O_SIZES },
	{ "inflight", required_argument, NULL, O_INFLIGHT },
	{ "reg-size", required_argument, NULL, O_REG_SIZE },
	{ "reg-threads", required_argument, NULL, O_REG_THREADS },
	{ "senders", required_argument, NULL, O_SENDERS },
	{ "tag", required_argument, NULL, O_TAG },
	{ "rcvbuf", required_argument, NULL, O_RCVBUF },
	{ "once", no_argument, NULL, O_ONCE },
	{ "idle", required_argument, NULL, O_IDLE },
	{ "live-keys", required_argument, NULL, O_LIVE_KEYS },
	{ "no-fence", no_argument, NULL, O_NO_FENCE },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void parse_options(int argc, char **argv)
{
	static const char * const tests[] = {
		"rdma", "reg", "dgram", "reclaim", "conn",
	};
	static const char * const dirs[] = { "write", "read" };
	long port = DEF_PORT, v;
	char *end;
	int c;

	opt.secs = 2;
	opt.timeout = 30;
	opt.tests = TEST_RDMA | TEST_REG | TEST_DGRAM | TEST_RECLAIM;
	opt.dirs = 3;
	opt.keys = KEY_MAP | KEY_GETMR | KEY_REUSE;
	parse_list(&opt.sizes, "4K,64K,1M", 1, MAX_MSG, "");
	parse_list(&opt.inflight, "1,16", 1, MAX_SLOTS, "");
	parse_list(&opt.reg_threads, "1,8", 1, MAX_THREADS, "");
	parse_list(&opt.senders, "1,16", 1, MAX_THREADS, "");
	opt.reg_size = 4096;
	opt.bufsize = 16 << 20;

	while ((c = getopt_long(argc, argv, "a:s:p:T:n:t:h", long_opts,
				NULL)) != -1) {
		switch (c) {
		case 'a':
			parse_addr(&opt.self, optarg);
			opt.have_self = 1;
			break;
		case 's':
			parse_addr(&opt.server, optarg);
			opt.have_server = 1;
			break;
		case 'p':
			port = parse_num(optarg);
			if (port < 1 || port > 65535)
				bad_usage("bad port: %s", optarg);
			break;
		case 'T':
			opt.secs = strtod(optarg, &end);
			if (*end || !(opt.secs > 0 && opt.secs <= 3600))
				bad_usage("bad --time: %s", optarg);
			break;
		case 'n':
			opt.max_ops = parse_num(optarg);
			if (opt.max_ops < 1)
				bad_usage("bad --ops: %s", optarg);
			break;
		case 't':
			v = parse_num(optarg);
			if (v < 1 || v > 3600)
				bad_usage("bad --timeout: %s", optarg);
			opt.timeout = v;
			break;
		case O_TESTS:
			opt.tests = parse_names(optarg, tests, ARRAY_SIZE(tests),
						"--tests takes rdma,reg,dgram,reclaim,conn: %s");
			break;
		case O_DIRS:
			opt.dirs = parse_names(optarg, dirs, ARRAY_SIZE(dirs),
					       "--dirs takes write,read: %s");
			break;
		case O_KEYS:
			opt.keys = parse_names(optarg, key_names,
					       ARRAY_SIZE(key_names),
					       "--keys takes map,getmr,reuse: %s");
			break;
		case O_SIZES:
			parse_list(&opt.sizes, optarg, 1, MAX_MSG,
				   "bad --sizes (1 to 1M each): %s");
			break;
		case O_INFLIGHT:
			parse_list(&opt.inflight, optarg, 1, MAX_SLOTS,
				   "bad --inflight (1 to 64 each): %s");
			break;
		case O_REG_SIZE:
			opt.reg_size = parse_num(optarg);
			if (opt.reg_size < 1 || opt.reg_size > MAX_MSG)
				bad_usage("bad --reg-size (1 to 1M): %s", optarg);
			break;
		case O_REG_THREADS:
			parse_list(&opt.reg_threads, optarg, 1, MAX_THREADS,
				   "bad --reg-threads (1 to 64 each): %s");
			break;
		case O_SENDERS:
			parse_list(&opt.senders, optarg, 1, MAX_THREADS,
				   "bad --senders (1 to 64 each): %s");
			break;
		case O_TAG:
			opt.tag = optarg;
			break;
		case O_RCVBUF:
			v = parse_num(optarg);
			if (v < 4096 || v > INT_MAX)
				bad_usage("bad --rcvbuf: %s", optarg);
			opt.bufsize = v;
			break;
		case O_ONCE:
			opt.once = 1;
			break;
		case O_NO_FENCE:
			opt.no_fence = 1;
			break;
		case O_IDLE:
			v = parse_num(optarg);
			if (v < 1 || v > INT_MAX)
				bad_usage("bad --idle: %s", optarg);
			opt.idle = v;
			break;
		case O_LIVE_KEYS:
			opt.live_keys = parse_num(optarg);
			if (opt.live_keys < 0 || opt.live_keys > MAX_LIVE_KEYS)
				bad_usage("bad --live-keys (0 to 1000000): %s",
					  optarg);
			opt.have_live_keys = 1;
			break;
		case 'h':
			print_usage(stdout);
			exit(0);
		default:
			print_usage(stderr);
			exit(2);
		}
	}
	addr_set_port(&opt.self, 0);
	addr_set_port(&opt.server, port);
	if (!opt.have_self)
		bad_usage("%s", "-a ADDR (this host's address) is required");
}

/* Every size and depth of one direction and key. */
static void rdma_points(int write, int key)
{
	int i, j;

	for (i = 0; i < opt.sizes.n; i++)
		for (j = 0; j < opt.inflight.n; j++)
			rdma_point(write, key, opt.sizes.v[i], opt.inflight.v[j]);
}

static int run_client(void)
{
	int need_server = opt.tests & (TEST_RDMA | TEST_DGRAM | TEST_RECLAIM |
				       TEST_CONN);
	char host[ADDR_STRLEN], server[ADDR_STRLEN];
	int d, k, i, j;

	if (need_server && !opt.have_server)
		bad_usage("%s", "-s SERVER is required for --tests rdma, dgram, reclaim and conn");
	if (need_server && !addr_same_family(&opt.self, &opt.server))
		bad_usage("%s", "-a ADDR and -s SERVER must be of one family, IPv4 or IPv6");
	printf("# rds-zc-bench client %s -> %s, %.1f s per point, timeout %d s%s%s\n",
	       addr_host(&opt.self, host), addr_str(&opt.server, server),
	       opt.secs, opt.timeout, opt.tag ? ", " : "", opt.tag ? opt.tag : "");
	fflush(stdout);
	/* first: the connection may be cold only now */
	if (opt.tests & TEST_CONN)
		conn_point();
	if (need_server && reach_server(opt.timeout > 60 ? opt.timeout : 60))
		return 1;

	if ((opt.tests & TEST_RDMA) && opt.have_live_keys)
		live_keys_get();
	for (d = 0; d < 2; d++)
		for (k = 0; k < 3; k++)
			if ((opt.tests & TEST_RDMA) && (opt.dirs & (1 << d)) &&
			    (opt.keys & (1 << k)))
				rdma_points(!d, 1 << k);
	if ((opt.tests & TEST_RDMA) && opt.have_live_keys)
		live_keys_put();
	if (opt.tests & TEST_REG)
		for (k = 0; k < 2; k++)
			for (j = 0; j < opt.reg_threads.n; j++)
				reg_point(k, opt.reg_threads.v[j]);
	if (opt.tests & TEST_RECLAIM) {
		static const unsigned int sizes[] = { 4096, 65536 };

		for (i = 0; i < (int)ARRAY_SIZE(sizes); i++)
			for (k = 0; k < 2; k++)
				reclaim_point(k, sizes[i]);
	}
	if (opt.tests & TEST_DGRAM) {
		static const unsigned int sizes[] = { 64, 4096, 65536, 1 << 20 };

		dgram_rtt();
		for (i = 0; i < (int)ARRAY_SIZE(sizes); i++)
			for (j = 0; j < opt.senders.n; j++)
				dgram_stream(sizes[i], opt.senders.v[j]);
	}

	if (need_server) {
		char err[256];
		int fd = rds_open(&opt.self, 4096, 1 << 20, err, sizeof(err));

		if (fd < 0 || ask(fd, T_BYE, T_BYE_ACK, 1, NULL, 0))
			fprintf(stderr, "rds-zc-bench: the server did not answer BYE\n");
		if (fd >= 0)
			close(fd);
	}
	printf("# rds-zc-bench: %s\n", failures ? "some points FAILED" : "done");
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "-h") || !strcmp(mode, "--help")) {
		print_usage(stdout);
		return 0;
	}
	if (strcmp(mode, "server") && strcmp(mode, "client")) {
		print_usage(stderr);
		return 2;
	}
	parse_options(argc - 1, argv + 1);
	if (optind != argc - 1)
		bad_usage("unexpected argument: %s", argv[optind + 1]);
	raise_memlock();
	if (!strcmp(mode, "server")) {
		addr_set_port(&opt.self, addr_port(&opt.server));
		return run_server();
	}
	return run_client();
}
