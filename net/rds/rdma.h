/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Zero-copy RDMA in the core: memory regions a socket registered for its
 * peers (struct rds_mr), RDMA operations a message carries (struct
 * rds_rdma_op), and the notifications their completions queue.
 *
 * The core pins user pages, keeps a socket's MRs by rkey, parses the
 * RDMA control messages and queues notifications; the transport maps and
 * registers pages and posts the operations (transport.h).
 *
 * Lifetime: an MR is referenced by its socket's tree and by the message
 * of the RDMA_MAP that made it (m->reg_mr), and holds a reference on its
 * socket; lookups under rs->mr_lock take none, lookups of local delivery
 * in the key index (RCU) take one if the MR is still referenced.  The last reference
 * starts the release on rds_mr_wq: the transport invalidates the key
 * (mr_dereg, which may finish later, in any context) and reports it with
 * rds_zc_mr_invalidated(); only then is the memlock charge returned and
 * are the pages unpinned, again on rds_mr_wq.  The key can die earlier
 * (mr_kill: RDS_FREE_MR with RDS_RDMA_INVALIDATE, close) while a message
 * still holds the MR; the pages still wait for the last reference.
 * rs->mr_pending counts the socket's MRs from creation to unpinning;
 * socket close waits for the keys, and a little for the pages (mr.c).
 * An operation belongs to its message and goes with it; its pages are
 * unpinned on rds_mr_wq too.
 */
#ifndef _RDS_ZC_RDMA_H
#define _RDS_ZC_RDMA_H

#include <linux/in6.h>
#include <linux/list.h>
#include <linux/rbtree.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/rhashtable-types.h>
#include <linux/scatterlist.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <uapi/linux/rds.h>

#include "defer.h"

struct mm_struct;
struct msghdr;
struct page;
struct rds_incoming;
struct rds_msg;
struct rds_sock;
struct rds_transport;

/*
 * What names an MR to an operation of this host (local delivery, mr.c):
 * the namespace and address its socket is bound to, and its key.  Only
 * the bytes up to and including @rkey are hashed and compared.
 */
struct rds_mr_idx_key {
	struct net	*net;
	struct in6_addr	addr;
	u32		scope;
	u32		rkey;
};

struct rds_mr {
	struct rb_node	node;		/* in rs->mr_tree, under rs->mr_lock */
	/* In the local key index (mr.c) exactly while in rs->mr_tree. */
	struct rhash_head idx_node;
	struct rds_mr_idx_key idx_key;
	struct rcu_head	rcu;		/* freed after local lookups (RCU) */
	refcount_t	refs;
	u32		rkey;		/* set by the transport */
	u32		offset;		/* of the buffer in its first page */
	u64		flags;		/* RDS_RDMA_USE_ONCE, _INVALIDATE */
	size_t		len;
	struct page	**pages;	/* pinned: &@page1, or an array */
	struct page	*page1;		/* the page of a one-page MR */
	unsigned int	nr_pages;
	struct mm_struct *mm;		/* charged for them (pinned_vm) */
	const struct rds_transport *trans;
	void		*tp;		/* the transport's registration */
	struct rds_sock	*rs;		/* referenced until unpinned */
	struct work_struct free_w;	/* release: invalidate */
	struct work_struct kill_w;	/* a USE_ONCE key dies, held elsewhere */
	/* The ticket of the message waiting for the key's death, or 0. */
	u32		gate;
	struct rds_deferred unpin_d;	/* then unpin (defer.h) */
};

/*
 * Does the message that releases @mr (USE_ONCE) wait for the key's death
 * before a reader may take it (recv_hold.c)?  With RDS_RDMA_INVALIDATE.
 */
static inline bool rds_mr_gates(const struct rds_mr *mr)
{
	return mr->flags & RDS_RDMA_INVALIDATE;
}

/*
 * An RDMA READ or WRITE (RDS_CMSG_RDMA_ARGS) or a remote atomic
 * (RDS_CMSG_*ATOMIC_*) a message carries.  The local side is pinned user
 * memory described by @sgt (for an atomic, the 8 bytes that receive the
 * prior value); the transport maps it for the device and posts the
 * operation before the message's SENDs.
 */
struct rds_atomic {
	bool		cswp;		/* compare-and-swap, else fetch-and-add */
	bool		masked;		/* the masked verbs */
	u64		compare_add;	/* CSWP: compare; FADD: add */
	u64		swap;		/* CSWP only */
	u64		compare_add_mask; /* masked CSWP: compare; FADD: no carry */
	u64		swap_mask;	/* masked CSWP only */
};

struct rds_notifier;

struct rds_rdma_op {
	struct rds_sock	*rs;		/* referenced, for the notification */
	u64		token;		/* user_token */
	u32		rkey;		/* of the peer's MR */
	u64		remote_addr;	/* cookie offset + remote_vec.addr */
	u64		len;
	bool		write;		/* RDS_RDMA_READWRITE */
	bool		is_atomic;	/* an atomic: @atomic, @len is 8 */
	struct rds_atomic atomic;
	/* Its id and destination, for barriers (op_barrier.c). */
	u64		id;
	struct in6_addr	daddr;
	__be16		dport;
	struct list_head inflight;	/* on rs->op_inflight until done */
	bool		fence;
	bool		silent;
	bool		notify;		/* RDS_RDMA_NOTIFY_ME */
	bool		notified;	/* status reported; under rs->recv_lock */
	/* Its notification, allocated with it: the end cannot fail. */
	struct rds_notifier *note;
	bool		note_charged;	/* @note counts in rs->note_mem */
	int		status;		/* first error, RDS_RDMA_* */
	struct mm_struct *mm;		/* charged for pages (pinned_vm) */
	unsigned int	charged;	/* pages charged to mm */
	struct page	**pages;	/* pinned, nr_pages of them */
	unsigned int	nr_pages;
	struct sg_table	sgt;		/* the local bytes, in order */

	/* The transport's, while it posts the operation. */
	int		dma_nents;	/* mapped entries, 0 if not mapped */
	void		*dma_dev;	/* the device they are mapped for */
	struct scatterlist *next_sg;	/* first mapped entry not posted */
	u64		posted;		/* bytes posted */
	struct rds_deferred free_d;	/* unpin and free (defer.h) */
};

void rds_mr_put(struct rds_mr *mr);
void rds_mr_release_once(struct rds_mr *mr, u32 ticket);
int rds_rdma_get_mr(struct rds_sock *rs, const struct rds_iovec *vec,
		    u64 cookie_addr, u64 flags);
int rds_rdma_free_mr(struct rds_sock *rs, u64 cookie, u64 flags);
void rds_rdma_sock_init(struct rds_sock *rs);
void rds_rdma_sock_release(struct rds_sock *rs);

int rds_rdma_cmsg_type(int type);
int rds_rdma_cmsgs(struct rds_sock *rs, struct msghdr *msg, struct rds_msg *m,
		   const struct in6_addr *daddr, __be16 dport, bool remote);
void rds_rdma_op_free(struct rds_rdma_op *op);
void rds_rdma_op_done(struct rds_rdma_op *op, int status);
void rds_zc_rdma_done(struct rds_rdma_op *op, int status);
void rds_zc_mr_invalidated(struct rds_mr *mr);

void rds_rdma_recv_exthdr(struct rds_sock *rs, struct rds_incoming *inc);
int rds_rdma_recv_cmsgs(struct rds_sock *rs, struct msghdr *msg);
int rds_rdma_put_dest(struct msghdr *msg, const struct rds_incoming *inc);

int rds_rdma_init(void);
void rds_rdma_exit(void);

#endif /* _RDS_ZC_RDMA_H */
