// SPDX-License-Identifier: GPL-2.0
/*
 * Operations a message carries (see rdma.h): RDMA READs and WRITEs
 * (RDS_CMSG_RDMA_ARGS) and remote atomics (RDS_CMSG_*ATOMIC_*), built
 * from the control messages with their local pages pinned and charged,
 * ended with at most one notification, and freed by the socket's owner
 * or through rds_mr_wq.
 *
 * Locking: rs->recv_lock protects rs->notify_queue and every
 * op->notified and op->note_charged once the operation is handed on.
 *
 * Notifications are charged to their socket (rs->note_mem,
 * RDS_NOTE_CHARGE each) from the moment an operation that may leave one
 * is built (RDS_RDMA_NOTIFY_ME, or RDS_RECVERR set) until the
 * application reads it or the socket is released.  An operation that
 * would take the charge over half of SO_RCVBUF is refused before it
 * starts: the send fails with ENOBUFS and counts rdma_note_refused, so
 * that no status is ever lost, and the application reads its
 * notifications and sends again.  An operation built before RDS_RECVERR
 * was set is charged when its failure is queued, over the limit if need
 * be: it is in flight already, so those are bounded by the send buffer.
 */
#include <linux/errno.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <net/sock.h>
#include <uapi/linux/rds.h>

#include "defer.h"
#include "message.h"
#include "mr.h"
#include "op_barrier.h"
#include "rdma.h"
#include "rdma_op.h"
#include "sock.h"
#include "stats.h"
#include "trace.h"
#include "transport.h"

static void rds_rdma_op_finish(struct rds_deferred *d)
{
	struct rds_rdma_op *op = container_of(d, struct rds_rdma_op, free_d);

	WARN_ON_ONCE(op->dma_nents);	/* the transport unmapped it */
	sg_free_table(&op->sgt);
	if (op->pages) {
		/* A READ wrote into them. */
		unpin_user_pages_dirty_lock(op->pages, op->nr_pages, !op->write);
		kvfree(op->pages);
	}
	if (op->mm) {
		atomic64_sub(op->charged, &op->mm->pinned_vm);
		mmdrop(op->mm);
	}
	if (op->note && op->note_charged)
		rds_rdma_note_uncharge(op->rs);	/* never queued */
	if (op->rs)
		sock_put(&op->rs->sk);
	kfree(op->note);
	kfree(op);
}

/*
 * Charge one notification to @rs; with @limit, only while the charge
 * stays within half of SO_RCVBUF.  Return: 0 or -ENOBUFS.
 */
static int rds_rdma_note_charge(struct rds_sock *rs, bool limit)
{
	int mem = atomic_add_return(RDS_NOTE_CHARGE, &rs->note_mem);

	if (limit && mem > rds_sk_rcvbuf(rs)) {
		atomic_sub(RDS_NOTE_CHARGE, &rs->note_mem);
		rds_stat_inc(RDS_STAT_RDMA_NOTE_REFUSED);
		return -ENOBUFS;
	}
	return 0;
}

/**
 * rds_rdma_note_uncharge() - a charged notification is freed
 * @rs: its socket
 *
 * Context: any.
 */
void rds_rdma_note_uncharge(struct rds_sock *rs)
{
	atomic_sub(RDS_NOTE_CHARGE, &rs->note_mem);
}

/**
 * rds_rdma_op_free() - release an operation with its message
 * @op: the operation
 *
 * Context: any, also under a spinlock: unpinning, which may sleep, is
 * left to the socket's owner (defer.h), or to rds_mr_wq.
 */
void rds_rdma_op_free(struct rds_rdma_op *op)
{
	rds_op_untrack(op, false);	/* never handed on, if still there */
	rds_defer(op->rs, &op->free_d, rds_rdma_op_finish, rds_mr_wq);
}

/* Each operation ends once, in one status (RDS_RDMA_*). */
static void rds_rdma_count_status(int status)
{
	static const enum rds_stat by_status[] = {
		[RDS_RDMA_SUCCESS]	= RDS_STAT_RDMA_DONE_SUCCESS,
		[RDS_RDMA_REMOTE_ERROR]	= RDS_STAT_RDMA_DONE_REMOTE_ERROR,
		[RDS_RDMA_CANCELED]	= RDS_STAT_RDMA_DONE_CANCELED,
		[RDS_RDMA_DROPPED]	= RDS_STAT_RDMA_DROPPED,
		[RDS_RDMA_OTHER_ERROR]	= RDS_STAT_RDMA_DONE_OTHER_ERROR,
	};

	if (status >= 0 && status < ARRAY_SIZE(by_status))
		rds_stat_inc(by_status[status]);
	else
		rds_stat_inc(RDS_STAT_RDMA_DONE_OTHER_ERROR);
}

/**
 * rds_rdma_op_done() - an operation finished: queue its notification
 * @op: the operation
 * @status: RDS_RDMA_SUCCESS or the error; the first error sticks
 *
 * At most one notification per operation: on RDS_RDMA_NOTIFY_ME always,
 * with RDS_RECVERR on the socket for a failure.
 *
 * Context: any.
 */
void rds_rdma_op_done(struct rds_rdma_op *op, int status)
{
	struct rds_sock *rs = op->rs;
	struct rds_notifier *n;
	bool queued = false, first = false;

	if (!op->status)
		op->status = status;

	spin_lock_bh(&rs->recv_lock);
	if (!op->notified) {
		op->notified = true;
		first = true;
		/* Before the note: whoever reads it sees the count too. */
		rds_rdma_count_status(op->status);
		n = op->note;
		if ((op->notify || (op->status && READ_ONCE(rs->recverr))) &&
		    n && !rs->dead) {
			/* The charge goes with it: see the top of the file. */
			if (!op->note_charged)
				rds_rdma_note_charge(rs, false);
			op->note_charged = false;
			op->note = NULL;	/* the queue's now */
			n->n.user_token = op->token;
			n->n.status = op->status;
			rds_stat_inc(RDS_STAT_RDMA_NOTIFY);
			list_add_tail(&n->item, &rs->notify_queue);
			queued = true;
		}
	}
	spin_unlock_bh(&rs->recv_lock);
	if (first)
		trace_rds_rdma_notify(op->id, op->token, op->status, queued);
	/* After the notification: a barrier never runs ahead of it. */
	rds_op_untrack(op, queued);
	if (queued)
		rs->sk.sk_data_ready(&rs->sk);
}

/**
 * rds_zc_rdma_done() - the transport finished an operation
 * @op: the operation of a message it was given
 * @status: RDS_RDMA_SUCCESS, or how it failed: RDS_RDMA_REMOTE_ERROR for
 *	a remote access error, RDS_RDMA_DROPPED when the connection went
 *	down first, RDS_RDMA_OTHER_ERROR
 *
 * Called once the last work request of the operation, or the message's
 * last SEND if it has any, completed.  Context: any.
 */
void rds_zc_rdma_done(struct rds_rdma_op *op, int status)
{
	trace_rds_rdma_done(op->id, status);
	rds_rdma_op_done(op, status);
}
EXPORT_SYMBOL_GPL(rds_zc_rdma_done);

/*
 * Build the local side of an operation from the user's iovecs: pinned
 * long-term (the operation may wait for a connection), and charged to
 * RLIMIT_MEMLOCK as an MR's pages are.
 */
static int rds_rdma_op_pin(struct rds_rdma_op *op, const struct rds_iovec *iov,
			   unsigned int nr, unsigned int gup)
{
	struct scatterlist *sg;
	unsigned int i, p = 0, ents = 0;
	int ret;

	for (i = 0; i < nr; i++)
		if (iov[i].bytes)
			ents += DIV_ROUND_UP(offset_in_page(iov[i].addr) +
					     iov[i].bytes, PAGE_SIZE);
	ret = rds_rdma_charge(current->mm, ents);
	if (ret)
		return ret;
	op->mm = current->mm;
	mmgrab(op->mm);
	op->charged = ents;
	gup |= FOLL_LONGTERM;
	op->pages = kvmalloc_array(ents, sizeof(*op->pages), GFP_KERNEL);
	if (!op->pages)
		return -ENOMEM;
	ret = sg_alloc_table(&op->sgt, ents, GFP_KERNEL);
	if (ret)
		return ret;

	sg = op->sgt.sgl;
	for (i = 0; i < nr; i++) {
		unsigned long addr = iov[i].addr;
		size_t left = iov[i].bytes;
		struct page **pages;
		unsigned int n, k;

		if (!left)
			continue;
		ret = rds_rdma_pin(addr, left, gup, &pages, &n);
		if (ret)
			return ret;
		for (k = 0; k < n; k++) {
			size_t off = k ? 0 : offset_in_page(addr);
			size_t len = min_t(size_t, left, PAGE_SIZE - off);

			op->pages[p++] = pages[k];
			op->nr_pages = p;
			sg_set_page(sg, pages[k], len, off);
			sg = sg_next(sg);
			left -= len;
		}
		kvfree(pages);
	}
	return 0;
}

/*
 * A new operation of RDS_RDMA_* @flags against the peer's @cookie at
 * @remote bytes into its MR.  Return: the operation, or NULL.
 */
static struct rds_rdma_op *rds_op_alloc(u64 cookie, u64 remote, u64 flags,
					u64 token)
{
	struct rds_rdma_op *op = kzalloc(sizeof(*op), GFP_KERNEL_ACCOUNT);

	if (!op)
		return NULL;
	op->note = kzalloc(sizeof(*op->note), GFP_KERNEL_ACCOUNT);
	if (!op->note) {
		kfree(op);
		return NULL;
	}
	INIT_LIST_HEAD(&op->inflight);
	op->token = token;
	op->rkey = (u32)cookie;
	op->remote_addr = (cookie >> 32) + remote;
	op->write = flags & RDS_RDMA_READWRITE;
	op->fence = flags & RDS_RDMA_FENCE;
	op->silent = flags & RDS_RDMA_SILENT;
	op->notify = flags & RDS_RDMA_NOTIFY_ME;
	return op;
}

/*
 * Charge the notification @op may leave (see the top of the file), pin
 * its local side (a WRITE reads the pages, a READ or an atomic writes
 * them) and tie it to @rs.  Return: @op, or an errno with @op freed:
 * -ENOBUFS when @rs holds notifications worth half its SO_RCVBUF.
 */
static struct rds_rdma_op *rds_op_attach(struct rds_sock *rs,
					 struct rds_rdma_op *op,
					 const struct rds_iovec *iov,
					 unsigned int nr)
{
	bool charge = op->notify || READ_ONCE(rs->recverr);
	int ret = 0;

	if (charge)
		ret = rds_rdma_note_charge(rs, true);
	if (!ret) {
		ret = rds_rdma_op_pin(op, iov, nr, op->write ? 0 : FOLL_WRITE);
		if (ret && charge)
			rds_rdma_note_uncharge(rs);
	}
	if (ret) {
		op->write = true;	/* nothing was written */
		rds_rdma_op_free(op);
		return ERR_PTR(ret);
	}
	sock_hold(&rs->sk);
	op->rs = rs;
	op->note_charged = charge;
	return op;
}

/* RDS_CMSG_RDMA_ARGS: validate and build the operation. */
struct rds_rdma_op *rds_rdma_op_build(struct rds_sock *rs,
				      const struct rds_rdma_args *a)
{
	struct rds_iovec *iov;
	struct rds_rdma_op *op;
	u64 total = 0;
	unsigned int i;

	if (a->flags & ~RDS_RDMA_FLAGS)
		return ERR_PTR(-EINVAL);
	if (!a->nr_local)
		return ERR_PTR(-EINVAL);
	if (a->nr_local > UIO_MAXIOV)
		return ERR_PTR(-EMSGSIZE);
	iov = memdup_user((void __user *)(unsigned long)a->local_vec_addr,
			  a->nr_local * sizeof(*iov));
	if (IS_ERR(iov))
		return ERR_CAST(iov);
	for (i = 0; i < a->nr_local; i++) {
		if (iov[i].addr + iov[i].bytes < iov[i].addr ||
		    iov[i].bytes > RDS_MAX_MSG_SIZE + PAGE_SIZE) {
			op = ERR_PTR(-EINVAL);
			goto out_iov;
		}
		total += iov[i].bytes;
	}
	if (!total || total != a->remote_vec.bytes ||
	    total > RDS_MAX_MSG_SIZE + PAGE_SIZE) {
		op = ERR_PTR(-EINVAL);
		goto out_iov;
	}

	op = rds_op_alloc(a->cookie, a->remote_vec.addr, a->flags,
			  a->user_token);
	if (!op) {
		op = ERR_PTR(-ENOMEM);
		goto out_iov;
	}
	op->len = total;
	op = rds_op_attach(rs, op, iov, a->nr_local);
out_iov:
	kfree(iov);
	return op;
}

static bool rds_atomic_masked(int type)
{
	return type == RDS_CMSG_MASKED_ATOMIC_FADD ||
	       type == RDS_CMSG_MASKED_ATOMIC_CSWP;
}

/*
 * RDS_CMSG_*ATOMIC_* (cmsg_type @type): validate and build the atomic.
 * Over a connection (@remote) the plain forms are the plain verbs, which
 * every device with atomics has, and the masked forms need the masked
 * verbs; local delivery runs all of them with the CPU's atomics.
 */
struct rds_rdma_op *rds_atomic_op_build(struct rds_sock *rs, int type,
					const struct rds_atomic_args *a,
					bool remote)
{
	struct rds_iovec iov = { .addr = a->local_addr, .bytes = sizeof(u64) };
	const struct rds_transport *trans;
	struct rds_rdma_op *op;
	struct rds_atomic *at;
	struct in6_addr laddr;
	u32 scope;
	int ret;

	if (a->flags & ~RDS_RDMA_FLAGS)
		return ERR_PTR(-EINVAL);
	/* A misaligned result buffer is a bad address, as in the distribution. */
	if (!IS_ALIGNED(a->local_addr, sizeof(u64)))
		return ERR_PTR(-EFAULT);
	if (!IS_ALIGNED((a->cookie >> 32) + a->remote_addr, sizeof(u64)))
		return ERR_PTR(-EINVAL);
	lock_sock(&rs->sk);
	laddr = rs->bound_addr;
	scope = rs->bound_scope;
	trans = rs->trans;
	release_sock(&rs->sk);
	if (remote) {
		if (!trans || !trans->atomic_check)
			return ERR_PTR(-EOPNOTSUPP);
		ret = trans->atomic_check(sock_net(&rs->sk), &laddr, scope,
					  rds_atomic_masked(type));
		if (ret)
			return ERR_PTR(ret);
	}

	/* The prior value is written to local_addr: a READ of 8 bytes. */
	op = rds_op_alloc(a->cookie, a->remote_addr,
			  a->flags & ~RDS_RDMA_READWRITE, a->user_token);
	if (!op)
		return ERR_PTR(-ENOMEM);
	op->len = sizeof(u64);
	op->is_atomic = true;
	at = &op->atomic;
	at->masked = rds_atomic_masked(type);
	switch (type) {
	case RDS_CMSG_ATOMIC_FADD:
		at->compare_add = a->fadd.add;
		break;
	case RDS_CMSG_MASKED_ATOMIC_FADD:
		at->compare_add = a->m_fadd.add;
		at->compare_add_mask = a->m_fadd.nocarry_mask;
		break;
	case RDS_CMSG_ATOMIC_CSWP:
		at->cswp = true;
		at->compare_add = a->cswp.compare;
		at->swap = a->cswp.swap;
		break;
	default:	/* RDS_CMSG_MASKED_ATOMIC_CSWP */
		at->cswp = true;
		at->compare_add = a->m_cswp.compare;
		at->swap = a->m_cswp.swap;
		at->compare_add_mask = a->m_cswp.compare_mask;
		at->swap_mask = a->m_cswp.swap_mask;
		break;
	}
	return rds_op_attach(rs, op, &iov, 1);
}
