// SPDX-License-Identifier: GPL-2.0
/*
 * Zero-copy RDMA, the core's part (see rdma.h): memory regions for
 * RDS_GET_MR, RDS_GET_MR_FOR_DEST, RDS_FREE_MR and RDS_CMSG_RDMA_MAP;
 * cookies handed along with RDS_CMSG_RDMA_DEST; operations from
 * RDS_CMSG_RDMA_ARGS and remote atomics from RDS_CMSG_*ATOMIC_*; the
 * extension headers that carry them (wire
 * sections 4.5 and 8); and the RDS_CMSG_RDMA_STATUS notifications.
 *
 * Registration needs only a bound socket: the transport registers on the
 * device of the bound address, so RDS_GET_MR works before any connection
 * exists.  Pinned pages are charged to RLIMIT_MEMLOCK (mm->pinned_vm) as
 * ib_umem charges them.
 *
 * Locking: rs->mr_lock (bottom halves off) protects rs->mr_tree;
 * rs->recv_lock protects rs->notify_queue and every op->notified.
 */
#include <linux/errno.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <net/sock.h>
#include <uapi/linux/rds.h>

#include "message.h"
#include "op_barrier.h"
#include "rdma.h"
#include "sock.h"
#include "stats.h"
#include "transport.h"

/* Flags of the RDMA interface; any other bit is refused with EINVAL. */
#define RDS_RDMA_FLAGS	(RDS_RDMA_READWRITE | RDS_RDMA_FENCE | \
			 RDS_RDMA_INVALIDATE | RDS_RDMA_USE_ONCE | \
			 RDS_RDMA_DONTWAIT | RDS_RDMA_NOTIFY_ME | \
			 RDS_RDMA_SILENT)

/* Extension header types and sizes (wire 4.5). */
#define RDS_EXTHDR_NONE		0
#define RDS_EXTHDR_RDMA		2	/* be32 rkey */
#define RDS_EXTHDR_RDMA_DEST	3	/* be32 rkey, be32 offset */

static struct workqueue_struct *rds_mr_wq;

struct rds_notifier {
	struct list_head item;		/* on rs->notify_queue */
	struct rds_rdma_notify n;
};

static u64 rds_rdma_cookie(u32 rkey, u32 offset)
{
	return rkey | ((u64)offset << 32);
}

/* ------------------------------------------------------- user pages */

/*
 * Pin the pages under [addr, addr + len).  Return: 0 with *@pagesp and
 * *@nrp set, or -EFAULT for memory that is not there, -ENOMEM.
 */
static int rds_rdma_pin(unsigned long addr, size_t len, unsigned int gup,
			struct page ***pagesp, unsigned int *nrp)
{
	unsigned long start = addr & PAGE_MASK;
	unsigned int nr = DIV_ROUND_UP(offset_in_page(addr) + len, PAGE_SIZE);
	unsigned int done = 0;
	struct page **pages;
	int ret;

	pages = kvmalloc_array(nr, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;
	while (done < nr) {
		ret = pin_user_pages_fast(start + (unsigned long)done * PAGE_SIZE,
					  nr - done, gup, pages + done);
		if (ret <= 0) {
			unpin_user_pages(pages, done);
			kvfree(pages);
			return ret ? ret : -EFAULT;
		}
		done += ret;
	}
	*pagesp = pages;
	*nrp = nr;
	return 0;
}

/* Charge @nr pinned pages to @mm against RLIMIT_MEMLOCK. */
static int rds_rdma_charge(struct mm_struct *mm, unsigned long nr)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;

	if (atomic64_add_return(nr, &mm->pinned_vm) > limit &&
	    !capable(CAP_IPC_LOCK)) {
		atomic64_sub(nr, &mm->pinned_vm);
		return -ENOMEM;
	}
	return 0;
}

/* ------------------------------------------------------------- MRs */

static void rds_mr_unpin_work(struct work_struct *work)
{
	struct rds_mr *mr = container_of(work, struct rds_mr, unpin_w);
	struct rds_sock *rs = mr->rs;

	unpin_user_pages_dirty_lock(mr->pages, mr->nr_pages, true);
	mmdrop(mr->mm);
	kvfree(mr->pages);
	kfree(mr);
	rds_stat_inc(RDS_STAT_MR_RELEASED);
	/* The socket's reference keeps rs valid past the wake-up. */
	if (atomic_dec_and_test(&rs->mr_pending))
		wake_up(&rs->mr_wait);
	sock_put(&rs->sk);
}

/**
 * rds_zc_mr_invalidated() - the transport made an MR's key unusable
 * @mr: an MR whose release started
 *
 * No peer reaches the pages any more: return the memlock charge now,
 * wake a caller waiting for the invalidation, and unpin in process
 * context.
 *
 * Context: any.
 */
void rds_zc_mr_invalidated(struct rds_mr *mr)
{
	struct completion *waiter = mr->invalidated;
	struct rds_sock *rs = mr->rs;

	atomic64_sub(mr->nr_pages, &mr->mm->pinned_vm);
	if (atomic_dec_and_test(&rs->mr_releasing))
		wake_up(&rs->mr_wait);
	INIT_WORK(&mr->unpin_w, rds_mr_unpin_work);
	queue_work(rds_mr_wq, &mr->unpin_w);
	if (waiter)
		complete(waiter);
}
EXPORT_SYMBOL_GPL(rds_zc_mr_invalidated);

/* The last reference is gone: have the key invalidated.  May sleep. */
static void rds_mr_release(struct rds_mr *mr)
{
	atomic_inc(&mr->rs->mr_releasing);
	if (mr->tp)
		mr->trans->mr_dereg(mr);	/* rds_zc_mr_invalidated() follows */
	else
		rds_zc_mr_invalidated(mr);
}

static void rds_mr_free_work(struct work_struct *work)
{
	rds_mr_release(container_of(work, struct rds_mr, free_w));
}

/**
 * rds_mr_put() - drop a reference on an MR
 * @mr: the MR
 *
 * The last reference starts its release on rds_mr_wq, whatever the
 * caller's context; the key dies shortly after, and the pages are
 * unpinned once it is dead.
 *
 * Context: any.
 */
void rds_mr_put(struct rds_mr *mr)
{
	if (!refcount_dec_and_test(&mr->refs))
		return;
	INIT_WORK(&mr->free_w, rds_mr_free_work);
	queue_work(rds_mr_wq, &mr->free_w);
}

/*
 * Drop the tree's reference of an MR taken out of it and wait until its
 * key is dead.  Context: process context, may sleep.
 */
static void rds_mr_put_invalidate(struct rds_mr *mr)
{
	DECLARE_COMPLETION_ONSTACK(done);

	mr->invalidated = &done;
	if (refcount_dec_and_test(&mr->refs))
		rds_mr_release(mr);
	wait_for_completion(&done);
}

/* Caller holds rs->mr_lock. */
static struct rds_mr *rds_mr_find(struct rds_sock *rs, u32 rkey)
{
	struct rb_node *n = rs->mr_tree.rb_node;

	while (n) {
		struct rds_mr *mr = rb_entry(n, struct rds_mr, node);

		if (rkey < mr->rkey)
			n = n->rb_left;
		else if (rkey > mr->rkey)
			n = n->rb_right;
		else
			return mr;
	}
	return NULL;
}

static int rds_mr_insert(struct rds_sock *rs, struct rds_mr *mr)
{
	struct rb_node **p = &rs->mr_tree.rb_node, *parent = NULL;

	spin_lock_bh(&rs->mr_lock);
	while (*p) {
		struct rds_mr *cur = rb_entry(*p, struct rds_mr, node);

		parent = *p;
		if (mr->rkey < cur->rkey) {
			p = &(*p)->rb_left;
		} else if (mr->rkey > cur->rkey) {
			p = &(*p)->rb_right;
		} else {
			spin_unlock_bh(&rs->mr_lock);
			return -EBUSY;
		}
	}
	rb_link_node(&mr->node, parent, p);
	rb_insert_color(&mr->node, &rs->mr_tree);
	spin_unlock_bh(&rs->mr_lock);
	return 0;
}

/* Take the MR of @rkey out of the socket's tree; the tree's reference. */
static struct rds_mr *rds_mr_take(struct rds_sock *rs, u32 rkey)
{
	struct rds_mr *mr;

	spin_lock_bh(&rs->mr_lock);
	mr = rds_mr_find(rs, rkey);
	if (mr)
		rb_erase(&mr->node, &rs->mr_tree);
	spin_unlock_bh(&rs->mr_lock);
	return mr;
}

/*
 * Pin and register @vec for the socket's peers.  Return: the MR, with
 * one reference, not yet in the tree; or an errno (see rds_rdma_get_mr).
 */
static struct rds_mr *rds_mr_create(struct rds_sock *rs,
				    const struct rds_iovec *vec, u64 flags,
				    bool defer)
{
	const struct rds_transport *trans;
	struct rds_mr *mr;
	__be32 laddr;
	int ret;

	if (flags & ~RDS_RDMA_FLAGS)
		return ERR_PTR(-EINVAL);
	if (!vec->bytes || vec->bytes > RDS_MAX_MSG_SIZE + PAGE_SIZE ||
	    vec->addr + vec->bytes < vec->addr)
		return ERR_PTR(-EINVAL);

	lock_sock(&rs->sk);
	laddr = rs->bound_addr;
	trans = rs->trans;
	release_sock(&rs->sk);
	if (!READ_ONCE(rs->bound_port))
		return ERR_PTR(-ENOTCONN);
	if (!trans || !trans->mr_reg)
		return ERR_PTR(-EOPNOTSUPP);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	refcount_set(&mr->refs, 1);
	mr->flags = flags;
	mr->offset = offset_in_page(vec->addr);
	mr->len = vec->bytes;
	mr->trans = trans;

	ret = rds_rdma_pin(vec->addr, vec->bytes, FOLL_WRITE | FOLL_LONGTERM,
			   &mr->pages, &mr->nr_pages);
	if (ret)
		goto out_free;
	ret = rds_rdma_charge(current->mm, mr->nr_pages);
	if (ret && atomic_read(&rs->mr_releasing)) {
		/* Room this socket gave back may still be on its way. */
		wait_event(rs->mr_wait, !atomic_read(&rs->mr_releasing));
		ret = rds_rdma_charge(current->mm, mr->nr_pages);
	}
	if (ret)
		goto out_unpin;
	mr->mm = current->mm;
	mmgrab(mr->mm);

	if (defer && trans->mr_prepare)
		ret = trans->mr_prepare(sock_net(&rs->sk), laddr, mr);
	else
		ret = trans->mr_reg(sock_net(&rs->sk), laddr, mr);
	if (ret)
		goto out_uncharge;
	sock_hold(&rs->sk);
	mr->rs = rs;
	atomic_inc(&rs->mr_pending);
	rds_stat_inc(RDS_STAT_MR_CREATED);
	return mr;

out_uncharge:
	atomic64_sub(mr->nr_pages, &mr->mm->pinned_vm);
	mmdrop(mr->mm);
out_unpin:
	unpin_user_pages(mr->pages, mr->nr_pages);
	kvfree(mr->pages);
out_free:
	kfree(mr);
	return ERR_PTR(ret);
}

/*
 * Register @vec, store its cookie at @cookie_addr (if not 0) and file it
 * under the socket.  With @keep (RDS_CMSG_RDMA_MAP), the transport may
 * defer the registration to the message that carries the cookie, which
 * gets a reference in *@keep.  Return: 0 with *@cookie set, or a
 * negative errno.
 */
static int rds_mr_map(struct rds_sock *rs, const struct rds_iovec *vec,
		      u64 cookie_addr, u64 flags, u64 *cookie,
		      struct rds_mr **keep)
{
	struct rds_mr *mr = rds_mr_create(rs, vec, flags, !!keep);
	u32 rkey;
	int ret;

	if (IS_ERR(mr))
		return PTR_ERR(mr);
	rkey = mr->rkey;
	*cookie = rds_rdma_cookie(rkey, mr->offset);
	if (keep) {
		refcount_inc(&mr->refs);
		*keep = mr;
	}
	ret = rds_mr_insert(rs, mr);
	if (ret) {
		rds_mr_put(mr);
		goto out_keep;
	}
	/*
	 * From here on a concurrent RDS_FREE_MR or USE_ONCE release may
	 * free @mr: only its key is used.
	 */
	if (cookie_addr &&
	    put_user(*cookie, (u64 __user *)(unsigned long)cookie_addr)) {
		mr = rds_mr_take(rs, rkey);
		if (mr)
			rds_mr_put(mr);
		ret = -EFAULT;
		goto out_keep;
	}
	return 0;

out_keep:
	if (keep) {
		rds_mr_put(*keep);
		*keep = NULL;
	}
	return ret;
}

/**
 * rds_rdma_get_mr() - RDS_GET_MR and RDS_GET_MR_FOR_DEST
 * @rs: the socket, bound to an address of an RDMA device
 * @args: struct rds_get_mr_args or struct rds_get_mr_for_dest_args,
 *	  copied from the user
 * @argsize: which of the two
 *
 * The destination of RDS_GET_MR_FOR_DEST does not matter: a registration
 * serves every peer of the device.  It must be an IPv4 address.
 *
 * Return: 0, or -ENOTCONN when unbound, -EOPNOTSUPP when the bound
 * address is not on an RDMA device that registers memory, -EINVAL for a
 * bad length, range or flag, -EFAULT for memory that is not there,
 * -ENOMEM over RLIMIT_MEMLOCK, -EAGAIN when the MR pool is exhausted,
 * -EBUSY when the pages cannot be DMA-mapped.
 */
int rds_rdma_get_mr(struct rds_sock *rs, const void *args, size_t argsize)
{
	const struct rds_get_mr_for_dest_args *d = args;
	const struct rds_get_mr_args *a = args;
	u64 cookie;

	if (argsize == sizeof(*d)) {
		if (d->dest_addr.ss_family == AF_INET6)
			return -EAFNOSUPPORT;
		if (d->dest_addr.ss_family != AF_INET)
			return -EINVAL;
		return rds_mr_map(rs, &d->vec, d->cookie_addr, d->flags,
				  &cookie, NULL);
	}
	return rds_mr_map(rs, &a->vec, a->cookie_addr, a->flags, &cookie,
			  NULL);
}

/**
 * rds_rdma_free_mr() - RDS_FREE_MR
 * @rs: the socket
 * @cookie: a cookie of this socket, or 0
 * @flags: RDS_RDMA_INVALIDATE or 0
 *
 * Every release invalidates the key before the pages are unpinned.  With
 * RDS_RDMA_INVALIDATE the call returns once the key is dead, so the
 * peer's next RDMA against it fails; without, the invalidation is only
 * started (it takes microseconds, where the distribution leaves the key
 * valid until its next pool flush).  Cookie 0 names no MR and succeeds:
 * programs use it to probe for RDMA; with RDS_RDMA_INVALIDATE it asks
 * for what every release already does.
 *
 * Context: process context, may sleep.
 * Return: 0, or -EINVAL for a cookie this socket does not have.
 */
int rds_rdma_free_mr(struct rds_sock *rs, u64 cookie, u64 flags)
{
	struct rds_mr *mr;

	if (!cookie)
		return 0;
	mr = rds_mr_take(rs, (u32)cookie);
	if (!mr)
		return -EINVAL;
	if (flags & RDS_RDMA_INVALIDATE)
		rds_mr_put_invalidate(mr);
	else
		rds_mr_put(mr);
	return 0;
}

/**
 * rds_rdma_sock_init() - the RDMA state of a new socket
 * @rs: the socket
 */
void rds_rdma_sock_init(struct rds_sock *rs)
{
	spin_lock_init(&rs->mr_lock);
	rs->mr_tree = RB_ROOT;
	atomic_set(&rs->mr_pending, 0);
	atomic_set(&rs->mr_releasing, 0);
	init_waitqueue_head(&rs->mr_wait);
	INIT_LIST_HEAD(&rs->notify_queue);
	rds_op_sock_init(rs);
}

/**
 * rds_rdma_sock_release() - invalidate and unpin everything of a socket
 * @rs: the socket, being released; nothing is delivered to it any more
 *
 * When it returns no key of the socket is valid and none of its pages
 * is pinned, including those released from softirq meanwhile: every
 * release is started at once, and then all of them are waited for.
 */
void rds_rdma_sock_release(struct rds_sock *rs)
{
	struct rds_notifier *n, *tmp;
	struct rb_node *node;
	struct rds_mr *mr;
	LIST_HEAD(notes);

	for (;;) {
		spin_lock_bh(&rs->mr_lock);
		node = rb_first(&rs->mr_tree);
		mr = node ? rb_entry(node, struct rds_mr, node) : NULL;
		if (mr)
			rb_erase(&mr->node, &rs->mr_tree);
		spin_unlock_bh(&rs->mr_lock);
		if (!mr)
			break;
		rds_mr_put(mr);
	}
	wait_event(rs->mr_wait, !atomic_read(&rs->mr_pending));
	flush_workqueue(rds_mr_wq);	/* operations' pages too */

	spin_lock_bh(&rs->recv_lock);
	list_splice_init(&rs->notify_queue, &notes);
	spin_unlock_bh(&rs->recv_lock);
	list_for_each_entry_safe(n, tmp, &notes, item)
		kfree(n);
}

/* ------------------------------------------------ extension headers */

static void rds_exthdr_put32(u8 *p, u32 v)
{
	__be32 be = cpu_to_be32(v);

	memcpy(p, &be, sizeof(be));
}

static u32 rds_exthdr_get32(const u8 *p)
{
	__be32 be;

	memcpy(&be, p, sizeof(be));
	return be32_to_cpu(be);
}

/*
 * Walk a received header's extensions (wire 4.5) for one type.  Return:
 * the payload of the first entry of @type, or NULL.
 */
static const u8 *rds_exthdr_find(const u8 *ext, u8 type)
{
	static const u8 size[] = { 0, 4, 4, 8, 0, 2, 4 };
	unsigned int pos = 0;

	while (pos < RDS_HDR_EXT_SPACE) {
		u8 t = ext[pos];
		unsigned int len;

		if (t == RDS_EXTHDR_NONE || t >= 16)
			return NULL;
		len = t < ARRAY_SIZE(size) ? size[t] : 0;
		if (pos + 1 + len > RDS_HDR_EXT_SPACE)
			return NULL;
		if (t == type)
			return ext + pos + 1;
		pos += 1 + len;
	}
	return NULL;
}

/* ------------------------------------------------------- operations */

static void rds_rdma_op_free_work(struct work_struct *work)
{
	struct rds_rdma_op *op = container_of(work, struct rds_rdma_op, free_w);

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
	if (op->rs)
		sock_put(&op->rs->sk);
	kfree(op);
}

/**
 * rds_rdma_op_free() - release an operation with its message
 * @op: the operation
 *
 * Context: any, also under a spinlock: unpinning, which may sleep,
 * always goes through rds_mr_wq.
 */
void rds_rdma_op_free(struct rds_rdma_op *op)
{
	rds_op_untrack(op);	/* never handed on, if still there */
	INIT_WORK(&op->free_w, rds_rdma_op_free_work);
	queue_work(rds_mr_wq, &op->free_w);
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
	struct rds_notifier *n = NULL;
	bool queued = false;

	if (!op->status)
		op->status = status;
	if (op->notify || (op->status && READ_ONCE(rs->recverr)))
		n = kzalloc(sizeof(*n), GFP_ATOMIC);

	spin_lock_bh(&rs->recv_lock);
	if (!op->notified) {
		op->notified = true;
		if (n && !rs->dead) {
			n->n.user_token = op->token;
			n->n.status = op->status;
			list_add_tail(&n->item, &rs->notify_queue);
			queued = true;
		}
	}
	spin_unlock_bh(&rs->recv_lock);
	if (queued) {
		rds_stat_inc(RDS_STAT_RDMA_NOTIFY);
		rs->sk.sk_data_ready(&rs->sk);
	} else {
		kfree(n);
	}
	rds_op_untrack(op);	/* after the notification: barriers see it */
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
	struct rds_rdma_op *op = kzalloc(sizeof(*op), GFP_KERNEL);

	if (!op)
		return NULL;
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
 * Pin the local side of @op (a WRITE reads the pages, a READ or an
 * atomic writes them) and tie it to @rs.  Return: @op, or an errno with
 * @op freed.
 */
static struct rds_rdma_op *rds_op_attach(struct rds_sock *rs,
					 struct rds_rdma_op *op,
					 const struct rds_iovec *iov,
					 unsigned int nr)
{
	int ret = rds_rdma_op_pin(op, iov, nr, op->write ? 0 : FOLL_WRITE);

	if (ret) {
		op->write = true;	/* nothing was written */
		rds_rdma_op_free(op);
		return ERR_PTR(ret);
	}
	sock_hold(&rs->sk);
	op->rs = rs;
	return op;
}

/* RDS_CMSG_RDMA_ARGS: validate and build the operation. */
static struct rds_rdma_op *rds_rdma_op_build(struct rds_sock *rs,
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
 * The plain forms are the plain verbs, which every device with atomics
 * has; the masked forms need the masked verbs.
 */
static struct rds_rdma_op *rds_atomic_op_build(struct rds_sock *rs, int type,
					       const struct rds_atomic_args *a)
{
	struct rds_iovec iov = { .addr = a->local_addr, .bytes = sizeof(u64) };
	const struct rds_transport *trans;
	struct rds_rdma_op *op;
	struct rds_atomic *at;
	__be32 laddr;
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
	trans = rs->trans;
	release_sock(&rs->sk);
	if (!trans || !trans->atomic_check)
		return ERR_PTR(-EOPNOTSUPP);
	ret = trans->atomic_check(sock_net(&rs->sk), laddr,
				  rds_atomic_masked(type));
	if (ret)
		return ERR_PTR(ret);

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

/**
 * rds_rdma_cmsg_type() - may a sendmsg() carry this SOL_RDS control message?
 * @type: its cmsg_type
 *
 * Return: 0 for the RDMA, atomic and operation id ones, -EOPNOTSUPP for zero-copy
 * cookies, which this implementation does not carry, -EINVAL otherwise.
 */
int rds_rdma_cmsg_type(int type)
{
	switch (type) {
	case RDS_CMSG_RDMA_ARGS:
	case RDS_CMSG_RDMA_DEST:
	case RDS_CMSG_RDMA_MAP:
	case RDS_CMSG_ATOMIC_FADD:
	case RDS_CMSG_ATOMIC_CSWP:
	case RDS_CMSG_MASKED_ATOMIC_FADD:
	case RDS_CMSG_MASKED_ATOMIC_CSWP:
	case RDS_CMSG_OP_ID:
		return 0;
	case RDS_CMSG_ZCOPY_COOKIE:
		return -EOPNOTSUPP;
	default:
		return -EINVAL;
	}
}

/**
 * rds_rdma_cmsgs() - the control messages of a sendmsg()
 * @rs: the sending socket, bound
 * @msg: the call's message
 * @m: the message being built: gets its extension header and operation
 * @daddr: the destination address
 * @dport: and port
 * @remote: the destination is another host
 *
 * At most one of each, and one operation: RDMA_MAP with RDMA_DEST, or
 * RDMA_ARGS with either or with an atomic, is a conflict (one message
 * carries one extension header and one operation; an atomic needs no
 * extension, so it may go with a cookie).  The cookie of RDMA_MAP is
 * stored before the send goes on and stays with the socket if the send
 * then fails, as in the distribution's RDS; the message holds the MR
 * (m->reg_mr), so a transport may register it on its way out.  The
 * operation gets its id (RDS_OP_BARRIER), stored for the caller where
 * RDS_CMSG_OP_ID says.
 *
 * Return: 0, or -EINVAL for a malformed or conflicting control message,
 * an unknown cookie, mismatched lengths, a misaligned remote atomic or
 * RDS_CMSG_OP_ID without an operation,
 * -EFAULT for a misaligned or unwritable atomic result, -EOPNOTSUPP for
 * RDMA to this host or atomics the device does not have, -EMSGSIZE for
 * more than UIO_MAXIOV iovecs, or an errno of registration or pinning.
 */
int rds_rdma_cmsgs(struct rds_sock *rs, struct msghdr *msg, struct rds_msg *m,
		   __be32 daddr, __be16 dport, bool remote)
{
	const struct rds_atomic_args *atomic = NULL;
	const u64 *id_addr = NULL;
	const struct rds_get_mr_args *map = NULL;
	const struct rds_rdma_args *args = NULL;
	const u64 *dest = NULL;
	struct cmsghdr *cmsg;
	struct rds_rdma_op *op;
	int atomic_type = 0;
	struct rds_mr *mr;
	u64 cookie;

	for_each_cmsghdr(cmsg, msg) {
		size_t len;

		if (!CMSG_OK(msg, cmsg))
			return -EINVAL;
		if (cmsg->cmsg_level != SOL_RDS)
			continue;
		len = cmsg->cmsg_len - CMSG_LEN(0);
		switch (cmsg->cmsg_type) {
		case RDS_CMSG_RDMA_ARGS:
			if (args || len < sizeof(*args))
				return -EINVAL;
			args = CMSG_DATA(cmsg);
			break;
		case RDS_CMSG_RDMA_DEST:
			if (dest || len < sizeof(*dest))
				return -EINVAL;
			dest = CMSG_DATA(cmsg);
			break;
		case RDS_CMSG_RDMA_MAP:
			if (map || len < sizeof(*map))
				return -EINVAL;
			map = CMSG_DATA(cmsg);
			break;
		case RDS_CMSG_ATOMIC_FADD:
		case RDS_CMSG_ATOMIC_CSWP:
		case RDS_CMSG_MASKED_ATOMIC_FADD:
		case RDS_CMSG_MASKED_ATOMIC_CSWP:
			if (atomic || len < sizeof(*atomic))
				return -EINVAL;
			atomic = CMSG_DATA(cmsg);
			atomic_type = cmsg->cmsg_type;
			break;
		case RDS_CMSG_OP_ID:
			if (id_addr || len < sizeof(*id_addr))
				return -EINVAL;
			id_addr = CMSG_DATA(cmsg);
			break;
		default:
			return rds_rdma_cmsg_type(cmsg->cmsg_type);
		}
	}
	if ((map && dest) || (args && (map || dest || atomic)) ||
	    (id_addr && !args && !atomic))
		return -EINVAL;
	if (!map && !dest && !args && !atomic)
		return 0;
	if (!remote)
		return -EOPNOTSUPP;

	if (args || atomic) {
		op = args ? rds_rdma_op_build(rs, args) :
			    rds_atomic_op_build(rs, atomic_type, atomic);
		if (IS_ERR(op))
			return PTR_ERR(op);
		m->op = op;
		m->no_sends = op->silent && !m->len && !map && !dest;
		rds_op_track(rs, op, daddr, dport);
		if (id_addr) {
			u64 uaddr;

			memcpy(&uaddr, id_addr, sizeof(uaddr));
			if (put_user(op->id, (u64 __user *)(unsigned long)uaddr))
				return -EFAULT;
		}
		if (atomic) {
			rds_stat_inc(RDS_STAT_ATOMIC_OPS);
			if (!map && !dest)
				return 0;
		} else {
			m->exthdr[0] = RDS_EXTHDR_RDMA;
			rds_exthdr_put32(&m->exthdr[1], op->rkey);
			rds_stat_inc(RDS_STAT_RDMA_OPS);
			return 0;
		}
	}
	if (dest) {
		memcpy(&cookie, dest, sizeof(cookie));
		spin_lock_bh(&rs->mr_lock);
		mr = rds_mr_find(rs, (u32)cookie);
		/* What the socket wrote reaches the device before the peer. */
		if (mr && mr->trans->mr_sync)
			mr->trans->mr_sync(mr, DMA_TO_DEVICE);
		spin_unlock_bh(&rs->mr_lock);
		if (!mr)
			return -EINVAL;
	} else {
		struct rds_get_mr_args a;
		int ret;

		memcpy(&a, map, sizeof(a));
		ret = rds_mr_map(rs, &a.vec, a.cookie_addr, a.flags, &cookie,
				 &m->reg_mr);
		if (ret)
			return ret;
	}
	m->exthdr[0] = RDS_EXTHDR_RDMA_DEST;
	rds_exthdr_put32(&m->exthdr[1], (u32)cookie);
	rds_exthdr_put32(&m->exthdr[5], cookie >> 32);
	return 0;
}

/* ---------------------------------------------------------- receive */

/**
 * rds_rdma_recv_exthdr() - act on a delivered message's extensions
 * @rs: the socket it is queued for
 * @inc: the message
 *
 * RDMA_DEST: the cookie goes to the reader as RDS_CMSG_RDMA_DEST.  RDMA:
 * an operation against one of our MRs has finished: its pages are synced
 * for the CPU, and a USE_ONCE MR is released now (which invalidates it).
 * An unknown rkey is ignored.
 *
 * Context: any.
 */
void rds_rdma_recv_exthdr(struct rds_sock *rs, struct rds_incoming *inc)
{
	const u8 *ext = inc->msg->exthdr;
	const u8 *p;
	struct rds_mr *mr = NULL;

	p = rds_exthdr_find(ext, RDS_EXTHDR_RDMA_DEST);
	if (p) {
		inc->rdma_cookie = rds_rdma_cookie(rds_exthdr_get32(p),
						   rds_exthdr_get32(p + 4));
		inc->has_rdma_cookie = true;
	}
	p = rds_exthdr_find(ext, RDS_EXTHDR_RDMA);
	if (!p)
		return;
	spin_lock_bh(&rs->mr_lock);
	mr = rds_mr_find(rs, rds_exthdr_get32(p));
	/* What the peer wrote is the reader's before the ACK is. */
	if (mr && mr->trans->mr_sync)
		mr->trans->mr_sync(mr, DMA_FROM_DEVICE);
	if (mr && (mr->flags & RDS_RDMA_USE_ONCE))
		rb_erase(&mr->node, &rs->mr_tree);
	else
		mr = NULL;
	spin_unlock_bh(&rs->mr_lock);
	if (mr)
		rds_mr_put(mr);
}

/**
 * rds_rdma_put_dest() - RDS_CMSG_RDMA_DEST for a message that carried one
 * @msg: the reader's message
 * @inc: the message being read
 *
 * Return: 0 or -EFAULT.
 */
int rds_rdma_put_dest(struct msghdr *msg, const struct rds_incoming *inc)
{
	u64 cookie = inc->rdma_cookie;

	if (!inc->has_rdma_cookie)
		return 0;
	return put_cmsg(msg, SOL_RDS, RDS_CMSG_RDMA_DEST, sizeof(cookie),
			&cookie);
}

/**
 * rds_rdma_recv_cmsgs() - hand queued notifications to recvmsg()
 * @rs: the socket; caller holds recv_mutex
 * @msg: the reader's message
 *
 * As many RDS_CMSG_RDMA_STATUS as the control buffer holds whole, in an
 * empty message.  A notification leaves the queue only for a buffer that
 * holds it whole: put_cmsg() would cut a longer one short, set
 * MSG_CTRUNC and lose it.  A reader without room for one (a recv(), a
 * control buffer that is too short) takes none and they stay queued.
 *
 * Return: 0 when some were given, -EAGAIN if none is queued, -ENOBUFS if
 * some are but none fits, -EFAULT (they stay queued).
 */
int rds_rdma_recv_cmsgs(struct rds_sock *rs, struct msghdr *msg)
{
	/*
	 * What put_cmsg() writes for one; a 32-bit task's header (struct
	 * compat_cmsghdr) is three 32-bit words.
	 */
	size_t room = (msg->msg_flags & MSG_CMSG_COMPAT) ?
		      3 * sizeof(u32) + sizeof(struct rds_rdma_notify) :
		      CMSG_SPACE(sizeof(struct rds_rdma_notify));
	unsigned int max = msg->msg_control ? msg->msg_controllen / room : 0;
	struct rds_notifier *n, *tmp;
	LIST_HEAD(todo);
	unsigned int nr = 0;
	bool queued;
	int ret = 0;

	spin_lock_bh(&rs->recv_lock);
	queued = !list_empty(&rs->notify_queue);
	list_for_each_entry_safe(n, tmp, &rs->notify_queue, item) {
		if (nr++ == max)
			break;
		list_move_tail(&n->item, &todo);
	}
	spin_unlock_bh(&rs->recv_lock);
	if (list_empty(&todo))
		return queued ? -ENOBUFS : -EAGAIN;

	list_for_each_entry_safe(n, tmp, &todo, item) {
		if (!ret)
			ret = put_cmsg(msg, SOL_RDS, RDS_CMSG_RDMA_STATUS,
				       sizeof(n->n), &n->n);
		if (ret)
			continue;	/* back to the queue below */
		list_del(&n->item);
		kfree(n);
	}
	if (!list_empty(&todo)) {
		spin_lock_bh(&rs->recv_lock);
		list_splice(&todo, &rs->notify_queue);
		spin_unlock_bh(&rs->recv_lock);
	}
	msg->msg_namelen = 0;
	return ret;
}

/**
 * rds_rdma_init() - the workqueue that releases MRs and operations
 *
 * Return: 0 or -ENOMEM.
 */
int rds_rdma_init(void)
{
	rds_mr_wq = alloc_workqueue("rds_zc_mr", WQ_UNBOUND, 0);
	return rds_mr_wq ? 0 : -ENOMEM;
}

/**
 * rds_rdma_exit() - after every socket is gone
 */
void rds_rdma_exit(void)
{
	destroy_workqueue(rds_mr_wq);
}
