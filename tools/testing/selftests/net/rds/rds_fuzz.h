/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rds_fuzz.h - what the files of rds_fuzz share: its constants, the
 * state of a seed, and the functions and tables one file uses from
 * another.  rds_fuzz.c has the header comment (the reference), the
 * options and main(); each rds_fuzz_*.c holds one part:
 *
 *   rds_fuzz_gen.c	the generator, call kinds, errnos, the state
 *   rds_fuzz_args.c	checking results, mutated arguments
 *   rds_fuzz_cmsg.c	cookies and control messages
 *   rds_fuzz_calls.c	the calls but the socket options, one op
 *   rds_fuzz_opts.c	setsockopt and getsockopt
 *   rds_fuzz_seed.c	seeds, on one node and two; the seed cases
 *   rds_fuzz_sweep.c	the socket option sweep
 */
#ifndef RDS_FUZZ_H
#define RDS_FUZZ_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

#include <linux/rds.h>

#include "rds_test.h"
#include "rds_sock_util.h"
#include "rds_peer.h"

#define FZ_SOCKS	8	/* sockets per seed; slot i on port port0 + i */
#define FZ_LOCAL_CK	16	/* cookie slots 0..15: this node's registrations */
#define FZ_COOKIES	32	/* 16..31: cookies received from the peer */
#define FZ_ARENA	(2UL << 20)	/* memory for MRs and RDMA, guarded */
#define FZ_SBUF		((1UL << 20) + 8192)	/* payloads */
#define FZ_RBUF		(72 * 1024)	/* receives */
#define FZ_CTL		1024	/* control messages of one sendmsg() */
#define FZ_MAXIOV	(UIO_MAXIOV + 8)	/* local iovecs of RDMA_ARGS */
#define FZ_ERRMAX	256
#define FZ_PORT		28000	/* case k: ports FZ_PORT + 32 k + slot */
#define FZ_CTL_PORT	18637	/* two nodes: the control connection */
#define FZ_ABSENT	"10.0.0.200"	/* an address nobody answers */
#define FZ_RCVTIMEO_MS	20
#define FZ_KERNEL_ADDR	0xffffffff81000000ULL
#define FZ_NONCANON	0x0000800000000000ULL
#define FZ_MAGIC	0x525d5a46U
/* The kernel's own flag; recvmsg() and sendmsg() refuse it from users. */
#define FZ_MSG_CMSG_COMPAT	0x80000000U
#define FZ_FAIL_PRINT	12	/* unexpected errnos printed in full per seed */
#define FZ_STALL_MS	5000	/* an op blocked longer is interrupted */
#define FZ_HANG_MS	20000	/* an op of our modules blocked longer fails */
#define FZ_ALIVE_MS	20000	/* for a datagram after the fuzzing */
/* The largest SOL_RDS argument, and the sweep's last length. */
#define FZ_ARG_MAX	sizeof(struct rds_get_mr_for_dest_args)
#define FZ_SWEEP_MAX	(FZ_ARG_MAX + 8)

#ifndef SOCK_MAX
#define SOCK_MAX	(SOCK_PACKET + 1)
#endif

/*
 * The header a message carries when its RDMA_MAP or RDMA_DEST names a
 * region, so that the peer knows what it may aim at.
 */
struct fz_hdr {
	uint32_t magic;		/* FZ_MAGIC */
	uint32_t flags;		/* RDS_RDMA_* of the registration */
	uint64_t len;		/* bytes registered */
	uint32_t atomics;	/* the sender's modules allow atomics on it */
	uint32_t pad;
};

/* Which modules return an errno, and which this node runs. */
#define FZ_O	1	/* ours (rds_zc) */
#define FZ_D	2	/* the distribution's (rds, rds_rdma) */
#define FZ_OD	(FZ_O | FZ_D)

extern uint64_t fuzz_state;
uint64_t fuzz_rand(void);
void fuzz_seed_state(uint64_t seed);
void fz_draw(uint64_t *r, unsigned int n);

enum fz_kind {
	FK_SOCKET, FK_CLOSE, FK_BIND, FK_CONNECT,
	FK_SEND,		/* no SOL_RDS control message */
	FK_SEND_MAP, FK_SEND_DEST, FK_SEND_ARGS, FK_SEND_ATOMIC,
	FK_SEND_MULTI,		/* several SOL_RDS control messages */
	FK_SEND_ODD,		/* types sendmsg() does not take, bad headers */
	FK_RECV,
	FK_SO_CANCEL, FK_SO_GET_MR, FK_SO_GET_MR_DEST, FK_SO_FREE_MR,
	FK_SO_BOOL,		/* RDS_RECVERR, RDS_CONG_MONITOR */
	FK_SO_TSTAMP,		/* SO_TIMESTAMP_OLD/_NEW at SOL_RDS */
	FK_SO_TRANSPORT, FK_SO_LATENCY,
	FK_SO_OTHER,		/* SOL_RDS names that are no option */
	FK_SO_LEVEL,		/* levels other than SOL_RDS and SOL_SOCKET */
	FK_GO_INT,		/* RDS_RECVERR, SO_RDS_TRANSPORT */
	FK_GO_BARRIER, FK_GO_INFO,
	FK_GO_OTHER,		/* other names or levels */
	FK_SOCK_OPT,		/* SOL_SOCKET, both ways */
	FK_IOCTL, FK_POLL, FK_NAME, FK_FORK,
	FK_NR
};

extern const char * const fz_kind_names[FK_NR];
extern unsigned char fz_ok[FK_NR][FZ_ERRMAX];
extern unsigned int fz_mods;
void fz_build_ok(void);

/* What a cookie slot holds. */
enum fz_ck_state { FZ_CK_NONE, FZ_CK_LIVE, FZ_CK_MAYBE, FZ_CK_FREED };

struct fz_cookie {
	uint64_t cookie;	/* as the kernel wrote it; 0: none */
	uint64_t len;		/* bytes behind it; 0: unknown */
	uint32_t flags;		/* RDS_RDMA_* it was registered with */
	int32_t sock;		/* owning slot, -1: the peer's */
	uint32_t state;		/* enum fz_ck_state */
	uint32_t atomics;	/* its owner's modules allow atomics on it */
	uint32_t from_map;	/* registered by RDS_CMSG_RDMA_MAP: a message may hold it */
};

/* Bits of cmsg_ok: kinds of control message a successful send carried. */
enum {
	FZ_CM_MAP, FZ_CM_DEST, FZ_CM_READ, FZ_CM_WRITE, FZ_CM_FADD,
	FZ_CM_CSWP, FZ_CM_MFADD, FZ_CM_MCSWP, FZ_CM_OPID, FZ_CM_NR
};

extern const char * const fz_cm_names[FZ_CM_NR];

#define FZ_NOTE_NR	(RDS_RDMA_OTHER_ERROR + 2)	/* the last: unknown */

struct fz_stats {
	unsigned long ops, calls, bad, forks, dest_rx, stalls;
	unsigned long slow_op;			/* the slowest op, and its time */
	long long slow_ms;
	unsigned long kind_calls[FK_NR];
	unsigned long notes[FZ_NOTE_NR];
	unsigned char seen[FK_NR][FZ_ERRMAX];	/* [kind][0 or errno] */
	unsigned int cmsg_ok;			/* 1 << FZ_CM_* */
};

/* Shared with forked children: what they do counts, and is reported. */
struct fz_shared {
	struct fz_stats st;
	struct fz_cookie ck[FZ_COOKIES + 1];	/* the last: FZ_CK_STABLE */
	unsigned int peer_next;		/* next slot for a peer's cookie */
	uint64_t op_ids[4];		/* RDS_CMSG_OP_ID lands here */
	char child_fail[768];		/* a child's first unexpected errno */
	unsigned long child_bad;
	long long op_start;		/* rt_now_ms() at the running op's start, 0 */
	unsigned long op_no;		/* the running op, for the watcher */
};

struct fz {
	uint64_t seed;
	int node;			/* 0: one node; 1 or 2 */
	int two;			/* fuzzing a peer */
	unsigned long op;		/* 1-based number of the running op */
	unsigned long max_ops;		/* 0: no limit */
	uint64_t seq;			/* the generator's state after the ops */
	long long deadline;		/* rt_now_ms() at which to stop */
	int fd[FZ_SOCKS];
	unsigned short port0;		/* slot i's port: port0 + i */
	struct in_addr self, peer, absent;
	/* IPv6: this node's and the peer's (vm-run.sh), eth0's index */
	struct in6_addr self6, peer6, ll6;
	int have6;
	unsigned int ifindex;
	unsigned char *arena;		/* FZ_ARENA bytes, a guard page after */
	unsigned char *sbuf, *rbuf;
	unsigned char *ro;		/* two read-only pages */
	unsigned char *none;		/* a PROT_NONE page */
	uint64_t hole;			/* an address with nothing mapped */
	struct rds_iovec *iov;		/* FZ_MAXIOV local iovecs */
	union {
		unsigned char buf[FZ_CTL];
		struct cmsghdr align;
	} ctl;
	union {
		unsigned char buf[FZ_SWEEP_MAX + 64];
		struct rds_get_mr_args mr;
		struct rds_get_mr_for_dest_args mrd;
		struct rds_free_mr_args free;
		struct rds_rx_trace_so trace;
		struct rds_op_barrier barrier;
		struct sockaddr_in sin;
		int val;
	} opt;
	char desc[1024];
	char stall_desc[1024];		/* the call the watchdog interrupted */
	int stall_kind, stall_err;	/* and how it ended */
	struct fz_shared *sh;
};

extern int fz_verbose;
extern volatile sig_atomic_t fz_stalled;
extern int fz_known_bugs;
extern int fz_pair_distro;
extern int fz_in_child;
extern const char *fz_mods_name;
void __attribute__((format(printf, 2, 3)))
fz_desc(struct fz *f, const char *fmt, ...);
void __attribute__((format(printf, 2, 3)))
fz_more(struct fz *f, const char *fmt, ...);
void fz_result(struct fz *f, enum fz_kind k, long ret, int err);

/* Make a call, keep its errno, check it; the call's value. */
#define FZ_CALL(f, kind, call) ({				\
	long __r;						\
	int __e;						\
	if (fz_verbose > 1)					\
		dprintf(STDOUT_FILENO, "# > %s\n", (f)->desc);	\
	errno = 0;						\
	__r = (long)(call);					\
	__e = errno;						\
	fz_result(f, kind, __r, __e);				\
	errno = __e;						\
	__r;							\
})

uint64_t fz_ptr(struct fz *f, void *good, uint64_t r, const char **what);
uint64_t fz_mem(struct fz *f, uint64_t len, uint64_t r, const char **what);
uint64_t fz_rlen(uint64_t r);
uint64_t fz_rflags(uint64_t r, uint64_t valid);
socklen_t fz_sin(struct fz *f, uint64_t r, struct sockaddr_storage *ss,
		 const char **what);
const char *fz_sin_str(const struct sockaddr_storage *ss, socklen_t len);
const char *fz_where(struct fz *f, uint64_t a);
extern const char * const fz_ck_state_names[];

/* A sendmsg()'s control messages, being built into f->ctl. */
struct fz_msg {
	size_t used;		/* bytes of f->ctl.buf */
	unsigned int cm;	/* 1 << FZ_CM_* of the SOL_RDS ones */
	int hdr;		/* the payload starts with h */
	struct fz_hdr h;
	int map_slot;		/* the slot an RDMA_MAP writes, or -1 */
	struct fz_cookie map_old;	/* what it held */
	int once_slot;		/* a peer slot a USE_ONCE MR is used from */
	int remote_bad;		/* an RDMA the peer will refuse */
	int atomic;		/* carries an atomic (see fz_send()) */
	int map;		/* carries an RDMA_MAP */
};

/* Which cookie slot is the peer's stable MR. */
#define FZ_CK_STABLE	FZ_COOKIES

enum { FZ_CKT_OWN, FZ_CKT_PEER };

uint64_t fz_cookie(struct fz *f, int s, uint64_t r0, uint64_t r1,
		   int want, int *slot);
void fz_cookies_stale(struct fz *f, int s);
void fz_cookie_rx(struct fz *f, uint64_t cookie, const struct fz_hdr *h);

/* Send modes; the kind of call they make. */
enum {
	FZ_SM_PLAIN, FZ_SM_MAP, FZ_SM_DEST, FZ_SM_ARGS, FZ_SM_ATOMIC,
	FZ_SM_MULTI, FZ_SM_ODD,
};

extern const enum fz_kind fz_sm_kind[];
void fz_build(struct fz *f, struct fz_msg *m, int s, int mode);
size_t fz_setopt_mr(struct fz *f, const uint64_t *r, int name, int *track);
void fz_setopt(struct fz *f);
void fz_check_info(struct fz *f, long ret, int err, int room, int got);
void fz_getopt(struct fz *f);
void fz_sockopt(struct fz *f);
void fz_sock_setup(struct fz *f, int s, unsigned int how);
void fz_socket(struct fz *f, int s);
void fz_op(struct fz *f, int in_child);
extern struct in_addr fz_self;
extern struct in6_addr fz_self6, fz_peer6, fz_ll6;
extern int fz_have6;
extern unsigned int fz_ifindex;
extern int fz_two;
extern unsigned long fz_max_ops;
extern unsigned int fz_budget_s;
extern uint64_t fz_given_seed;
struct fz *fz_new(uint64_t seed);
void test_sockopt_sweep(void);
void test_seed_1(void);
void test_seed_2(void);
void test_seed_3(void);
void test_seed_4(void);
void test_seed_given(void);

#endif /* RDS_FUZZ_H */
