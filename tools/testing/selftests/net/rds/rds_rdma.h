/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rds_rdma.h - what the files of rds_rdma share: its messages, sockets,
 * memory regions and RDMA steps (rds_rdma_lib.c), and the cases
 * themselves, which rds_rdma.c lists in its table.  Each rds_rdma_*.c
 * holds the cases of one topic:
 *
 *   rds_rdma_cycle.c	RDMAs that succeed: MAP and DEST, sizes, USE_ONCE,
 *			pipeline, silent
 *   rds_rdma_fail.c	GET_MR/FREE_MR errors, conflicting control
 *			messages, RDMAs that fail
 *   rds_rdma_atomic.c	remote atomics
 *   rds_rdma_barrier.c	operation ids and barriers
 */
#ifndef RDS_RDMA_H
#define RDS_RDMA_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
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

int distro(int k);
uint64_t token_of(int i);

/* -------------------------------------------------------------- sockets */

/*
 * The case's two sockets: this node's and the peer's port 0, in the
 * family of the case (rds_peer.h's case_sa()).
 */
struct pair {
	int owner;		/* this node owns the memory */
	int fd;
	union rds_sa peer;
};

/* A control message to send: type, payload. */
struct cm {
	int type;
	const void *data;
	size_t len;
};

/* Destinations (to) are a struct sockaddr_in or sockaddr_in6. */
long send_cm(int fd, const void *to, const void *data,
	     size_t len, const struct cm *cm, int n, int flags);

/* What recvmsg() returned, its control messages taken apart. */
struct rx {
	union rds_sa from;
	int flags;
	int ndest;
	uint64_t cookie;
	int nnote;
	struct rds_rdma_notify note[NOTE_MAX];
};

long rx_msg(int fd, void *buf, size_t len, int flags, struct rx *rx);
void send_kind(struct pair *p, const void *to,
	       uint32_t kind, uint32_t seq, const struct cm *cm, int n);
void expect_kind_on(int fd, int port, uint32_t kind, uint32_t seq,
		    struct rx *rx);
void expect_kind(struct pair *p, uint32_t kind, uint32_t seq,
		 struct rx *rx);
void pair_start_open(struct pair *p, int owner_node, rds_tos_t tos,
		     int opener);
void pair_start_tos(struct pair *p, int owner_node, rds_tos_t tos);
void pair_start(struct pair *p, int owner_node);
void pair_end(struct pair *p);

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

void region_init(struct region *r, size_t start, size_t len,
		 uint32_t seed);
void region_free(struct region *r);
int region_rest_unchanged(const struct region *r, size_t off,
			  size_t len);
void region_expect(const struct region *r, size_t off, size_t len,
		   uint32_t seed);

/* The initiator's local memory: pieces of the given sizes, 3 bytes apart. */
struct local {
	unsigned char *mem;
	struct rds_iovec iov[PIPE_OPS];
	int n;
	size_t total;
};

void local_init(struct local *l, const size_t *pieces, int n,
		size_t one);
size_t local_pattern(struct local *l, uint32_t seed, size_t skip,
		     int fill);

/* ------------------------------------------------------- RDMA steps */

uint64_t cookie_offset(uint64_t cookie);
uint64_t owner_map_on(struct pair *p, int fd, struct region *r,
		      uint64_t flags, uint32_t seq);
uint64_t owner_map(struct pair *p, struct region *r, uint64_t flags,
		   uint32_t seq);
uint64_t server_cookie_on(struct pair *p, int port, uint32_t seq);
uint64_t server_cookie(struct pair *p, uint32_t seq);
long server_rdma_to(struct pair *p, const void *to,
		    uint64_t cookie, uint64_t off, uint64_t len,
		    struct local *l, uint64_t flags, uint64_t token,
		    uint32_t seq, size_t ack_len, int msg_flags);
long server_rdma(struct pair *p, uint64_t cookie, uint64_t off,
		 uint64_t len, struct local *l, uint64_t flags,
		 uint64_t token, uint32_t seq);
int expect_note(int fd, uint64_t token);
const char *status_name(int s);

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

uint64_t rdma_cycle_keep(struct pair *p, const struct rdma_op *op,
			 uint32_t seq, struct region *keep);
void rdma_cycle(struct pair *p, const struct rdma_op *op, uint32_t seq);
int fail_server_after(struct pair *p, long sent, int status_due,
		      uint32_t seq);
int fail_server(struct pair *p, const void *to,
		uint64_t cookie, uint64_t off, uint64_t len,
		uint64_t flags, int status_due, uint32_t seq);
int fail_owner(struct pair *p, struct region *r, uint64_t *cookie,
	       uint64_t off, uint64_t len, uint32_t seq, int quirk);
uint64_t owner_map_invalidate(struct pair *p, struct region *r,
			      uint32_t seq);
uint64_t server_cookie_gotit(struct pair *p, uint32_t seq);

/* ------------------------------------------ shared by the case files */

int get_mr_optlen(int fd, void *addr, uint64_t bytes,
		  void *cookie_addr, int optlen);
int collect_notes(int fd, int n);
int owner_of_failure_at(struct pair *p, size_t start, size_t mr_len,
			size_t off, size_t len, int quirk);
void owner_of_failure(struct pair *p, size_t len, int quirk);
uint64_t server_cookie_ack(struct pair *p);

#define CUT_S		15

void link_arm(void);
void link_disarm(void);
pid_t link_cut_for(unsigned int secs);
pid_t link_cut(void);
void link_restored(pid_t restore);
void needs_ours(int k, const char *why);
int one_host(void);
int kernel_series(const char *series);

/* ------------------------------------------------------ the cases */

/* rds_rdma_cycle.c */
void rdma_write_map(int owner);
void rdma_read_map(int owner);
void rdma_write_dest(int owner);
void rdma_sizes(int owner);
void use_once(int owner);
void pipeline(int owner);
void silent(int owner);

/* rds_rdma_fail.c */
void test_get_mr_after_bind(void);
void test_get_mr_errors(void);
void test_free_mr_errors(void);
void rdma_len_mismatch(int owner);
void test_cmsg_conflicts(void);
void bogus_cookie(int owner);
void invalidate(int owner);
void recverr(int owner);
void out_of_bounds(int owner);
void out_of_bounds_unaligned(int owner);
void client_killed(int owner);
void link_dropped(int owner);
void loss_retried(int owner);

/* rds_rdma_atomic.c */
void atomic_forms(int owner);
void test_atomic_errors(void);
void test_atomic_counter(void);
void atomic_lock(int owner);
void atomic_mixed(int owner);
void atomic_released(int owner);

/* rds_rdma_barrier.c */
void op_barrier_stream(int owner);
void test_op_barrier_drop(void);

#endif /* RDS_RDMA_H */
