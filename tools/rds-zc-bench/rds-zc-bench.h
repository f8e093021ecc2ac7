/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rds-zc-bench.h - what the files of rds-zc-bench share: the messages
 * between client and server, addresses, the options, and what each file
 * lends the others.  main.c describes the tool.  The files:
 *
 *   main.c	usage, options and main()
 *   common.c	addresses, clock, memory, RDS sockets and messages
 *   server.c	the server
 *   client.c	RESULT lines, requests to the server, the order of the
 *		points
 *   conn.c	conn_setup
 *   rdma.c	rdma_{write,read}_{map,getmr,reuse}, --live-keys
 *   reg.c	reg_pair, reg_pair_inv
 *   reclaim.c	reclaim_notify, reclaim_barrier
 *   dgram.c	dgram_rtt_p50, dgram_rtt_p99, dgram_rate, dgram_tput,
 *		dgram_rate_zc, dgram_tput_zc
 *   tcp.c	the datagram points again over RDS-over-TCP: tcp_dgram_*
 */
#ifndef RDS_ZC_BENCH_H
#define RDS_ZC_BENCH_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
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

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY	60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY	0x4000000
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
#define ZC_RING		8		/* buffers of a MSG_ZEROCOPY sender */

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

/* -------------------------------------------------------------- options */

struct list {
	int n;
	long v[MAX_LIST];
};

struct options {
	union addr self;		/* port 0 for the client */
	union addr server;
	int have_self, have_server;
	double secs;			/* per point */
	long max_ops;			/* per point, 0: no limit */
	int timeout;			/* seconds, any single wait */
	int tests;			/* T_* bits below */
	int dirs;			/* 1: write, 2: read */
	int keys;			/* 1: map, 2: getmr, 4: reuse */
	struct list sizes, inflight, reg_threads, senders, dgram_sizes;
	int reg_kinds;			/* 1: reg_pair, 2: reg_pair_inv */
	long reg_size;
	int bufsize;			/* SO_RCVBUF of the server */
	long live_keys;			/* held during the RDMA points */
	int have_live_keys;
	int once;
	int no_fence;			/* server: READs without RDS_RDMA_FENCE */
	int idle;
	int zerocopy;			/* the streams with MSG_ZEROCOPY */
	int trans;			/* SO_RDS_TRANSPORT of every socket
					 * before its bind; RDS_TRANS_NONE:
					 * none, RDS picks by the address
					 */
	const char *tag;
};

extern struct options opt;

#define TEST_RDMA	0x1
#define TEST_REG	0x2
#define TEST_DGRAM	0x4
#define TEST_RECLAIM	0x8
#define TEST_CONN	0x10
#define TEST_RTT	0x20	/* dgram_rtt alone */
#define TEST_STREAM	0x40	/* dgram_stream alone */
#define TEST_ZC		0x80	/* zero-copy streams, 64 KiB and 1 MiB */
#define TEST_TCP	0x100	/* the datagram points over TCP (tcp.c) */

#define RECLAIM_DEPTH	16	/* operations per batch of the reclaim points */

#define KEY_MAP		0x1
#define KEY_GETMR	0x2
#define KEY_REUSE	0x4

extern const char * const key_names[3];

/* What recvmsg() brought besides the data. */
struct rx {
	union addr from;
	int ndest;
	uint64_t cookie;	/* of RDS_CMSG_RDMA_DEST */
	int nnote;		/* RDS_CMSG_RDMA_STATUS notifications */
	struct rds_rdma_notify note[NOTE_BATCH];
};

/* common.c */
socklen_t addr_len(const union addr *a);
unsigned int addr_port(const union addr *a);
void addr_set_port(union addr *a, unsigned int port);
int addr_same_family(const union addr *a, const union addr *b);
const char *addr_host(const union addr *a, char buf[ADDR_STRLEN]);
const char *addr_str(const union addr *a, char buf[ADDR_STRLEN]);
double now(void);
const char *errname(int err);
const char *status_name(int status);
void die(const char *fmt, ...);
const char *size_str(unsigned long size);
void *xmap(size_t len);
size_t page_round(size_t len);
void raise_memlock(void);
int timed_out(int err);
void set_timeouts(int fd, int secs);
const char *trans_name(int trans);
int rds_open(const union addr *addr, int msg, int rcv, char *err,
	     size_t errlen);
void msg_init(struct bench_msg *m, int type, uint64_t seq);
long send_cm(int fd, const union addr *to, const void *buf, size_t len,
	     int cm_type, const void *cm, size_t cm_len);
long send_plain(int fd, const union addr *to, const void *buf, size_t len);
long recv_rx(int fd, void *buf, size_t len, int flags, struct rx *rx);
int valid_msg(const void *buf, long n);
int get_mr(int fd, void *buf, size_t len, uint64_t *cookie);
int free_mr(int fd, uint64_t cookie, uint64_t flags);

/* main.c */
void bad_usage(const char *fmt, const char *arg);

/* server.c */
int run_server(void);

/* client.c */
extern int failures;
extern char live_field[40];
extern const char *point_prefix, *point_note;
void result(const char *name, unsigned long size, int inflight,
	    double value, const char *unit, const char *extra,
	    const char *human);
void no_result(const char *name, unsigned long size, int inflight,
	       const char *unit, int unsupported, const char *why);
int unsupported_err(int err);
long wait_answer(int fd, void *buf, size_t len, int type, uint64_t seq,
		 int secs);
int ask(int fd, int type, int answer, uint64_t seq, void *reply, size_t len);
int cmp_double(const void *a, const void *b);
int reach_server(int wait_s, char *why, size_t len);
int run_client(void);

/* the points, one file each */
void conn_point(void);
int live_keys_get(void);
void live_keys_put(void);
void rdma_points(int write, int key);
void reg_point(int inv, int nthreads);
void reclaim_point(int barrier, unsigned int size);
void dgram_rtt(void);
void dgram_stream(unsigned int size, int nthreads, int zc);
void dgram_points(int rtt, int streams, int zc, int unsupported,
		  const char *why);
void tcp_points(void);

#endif /* RDS_ZC_BENCH_H */
