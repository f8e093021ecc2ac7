// SPDX-License-Identifier: GPL-2.0
/*
 * Memory regions, the core's part (see rdma.h): the user memory a socket
 * registers for its peers with RDS_GET_MR, RDS_GET_MR_FOR_DEST and
 * RDS_CMSG_RDMA_MAP, and gives back with RDS_FREE_MR, a USE_ONCE
 * release or close.
 *
 * Registration needs only a bound socket: the transport registers on the
 * device of the bound address, so RDS_GET_MR works before any connection
 * exists.  Pinned pages are charged to RLIMIT_MEMLOCK (mm->pinned_vm) as
 * ib_umem charges them; operations (rdma_op.c) pin and charge theirs
 * with the same helpers.
 *
 * Killing a key and freeing an MR are apart: RDS_FREE_MR with
 * RDS_RDMA_INVALIDATE, a USE_ONCE release and close kill the key of an
 * MR that a message on its way still holds (rds_mr_kill(): the
 * transport invalidates it, or marks a registration not posted yet as
 * never to be posted), and return; the pages stay pinned and charged
 * until the last reference goes (rds_mr_put()), which only then unpins
 * them.
 *
 * Local delivery (loop.c) runs operations of this host against MRs of
 * this host without a device, so it must find an MR by its key alone,
 * without knowing its socket: every MR in a socket's tree is also in one
 * global index, hashed by (namespace, bound address and scope, key) —
 * what names it over the wire, where the device of the destination
 * address interprets the key.  Lookups walk it under RCU and take a
 * reference only while the MR is still referenced, so a hot path takes
 * no lock; the index grows with the number of MRs (rhashtable), and an
 * MR's memory outlives a walker by a grace period (kfree_rcu()).  An MR
 * enters the index with its tree and leaves it with it, under the
 * socket's mr_lock, before its key is killed: a key out of the index is
 * dead for local delivery too.
 *
 * Locking: rs->mr_lock (bottom halves off) protects rs->mr_tree and the
 * membership of its MRs in the index; the index's buckets have their own
 * locks (rhashtable).
 */
#include <linux/errno.h>
#include <linux/hash.h>
#include <linux/mm.h>
#include <linux/rhashtable.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/uaccess.h>
#include <net/netns/hash.h>
#include <net/sock.h>
#include <uapi/linux/rds.h>

#include "addr.h"
#include "defer.h"
#include "message.h"
#include "mr.h"
#include "rdma.h"
#include "recv_hold.h"
#include "sock.h"
#include "stats.h"
#include "trace.h"
#include "transport.h"

/* Registrations tried for a key the socket does not hold yet (rds_mr_map) */
#define RDS_MR_KEY_TRIES	4
/*
 * How long close waits for the pages of MRs that messages still held when
 * it killed their keys: those in the transport's hands end within
 * milliseconds; one stalled behind a connection that cannot tear down
 * yet (its port is down) gives them back when it goes, not before.
 */
#define RDS_MR_CLOSE_WAIT	HZ

/* ------------------------------------------------------- user pages */

/* Pin @nr pages from @start into @pages: all of them, or none. */
static int rds_rdma_pin_into(unsigned long start, unsigned int nr,
			     unsigned int gup, struct page **pages)
{
	unsigned int done = 0;
	int ret;

	while (done < nr) {
		ret = pin_user_pages_fast(start + (unsigned long)done * PAGE_SIZE,
					  nr - done, gup, pages + done);
		if (ret <= 0) {
			unpin_user_pages(pages, done);
			return ret ? ret : -EFAULT;
		}
		done += ret;
	}
	return 0;
}

/*
 * Pin the pages under [addr, addr + len).  Return: 0 with *@pagesp and
 * *@nrp set, or -EFAULT for memory that is not there, -ENOMEM.
 */
int rds_rdma_pin(unsigned long addr, size_t len, unsigned int gup,
		 struct page ***pagesp, unsigned int *nrp)
{
	unsigned int nr = DIV_ROUND_UP(offset_in_page(addr) + len, PAGE_SIZE);
	struct page **pages;
	int ret;

	pages = kvmalloc_array(nr, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;
	ret = rds_rdma_pin_into(addr & PAGE_MASK, nr, gup, pages);
	if (ret) {
		kvfree(pages);
		return ret;
	}
	*pagesp = pages;
	*nrp = nr;
	return 0;
}

/* Charge @nr pinned pages to @mm against RLIMIT_MEMLOCK. */
int rds_rdma_charge(struct mm_struct *mm, unsigned long nr)
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

/*
 * Pin an MR's pages: those of a one-page MR (a page-aligned buffer of up
 * to 4 KiB, the common registration) into mr->page1, which spares the
 * array's allocation and free; a longer one's into an array.
 */
static int rds_mr_pin(struct rds_mr *mr, const struct rds_iovec *vec)
{
	unsigned int gup = FOLL_WRITE | FOLL_LONGTERM;
	int ret;

	/*
	 * One call, not rds_rdma_pin_into(): its loop, out of line, costs
	 * this path 39 instructions more (make profile, --points getmr).
	 */
	if (offset_in_page(vec->addr) + vec->bytes <= PAGE_SIZE) {
		mr->pages = &mr->page1;
		mr->nr_pages = 1;
		ret = pin_user_pages_fast(vec->addr & PAGE_MASK, 1, gup,
					  mr->pages);
		return ret == 1 ? 0 : ret ? ret : -EFAULT;
	}
	return rds_rdma_pin(vec->addr, vec->bytes, gup, &mr->pages,
			    &mr->nr_pages);
}

static void rds_mr_pages_free(struct rds_mr *mr)
{
	if (mr->pages != &mr->page1)
		kvfree(mr->pages);
}

/*
 * One of @rs's counters of MRs on their way out reached 0: wake whoever
 * waits for it, and make no call when nobody does (the usual case: only
 * a registration short of memlock room and close() wait).  The
 * atomic_dec_and_test() that brought it to 0 returns a value and is
 * therefore fully ordered (Documentation/atomic_t.txt): it is the full
 * barrier waitqueue_active() needs between the store of the condition
 * and the read of the queue.  A waiter's wait_event() puts itself on
 * the queue and sets its state (a full barrier) before it reads the
 * counter, so either it sees 0 or this sees it queued.
 */
static inline void rds_mr_wake(struct rds_sock *rs)
{
	/* Ordered by the caller's atomic_dec_and_test(): see above. */
	if (waitqueue_active(&rs->mr_wait))
		wake_up(&rs->mr_wait);
}

/*
 * Only the release of the last reference gets here (mr_dereg, then
 * rds_zc_mr_invalidated()): no message holds the MR any more.
 */
static void rds_mr_unpin(struct rds_deferred *d)
{
	struct rds_mr *mr = container_of(d, struct rds_mr, unpin_d);
	struct rds_sock *rs = mr->rs;

	trace_rds_mr_unpinned(mr->rkey, mr->len, mr->nr_pages);
	unpin_user_pages_dirty_lock(mr->pages, mr->nr_pages, true);
	mmdrop(mr->mm);
	rds_mr_pages_free(mr);
	kfree_rcu(mr, rcu);	/* rds_mr_get_local() may still look at it */
	rds_stat_inc(RDS_STAT_MR_RELEASED);
	/* The socket's reference keeps rs valid past the wake-up. */
	if (atomic_dec_and_test(&rs->mr_pending))
		rds_mr_wake(rs);
	sock_put(&rs->sk);
}

/*
 * The key of a USE_ONCE MR that its ACK released is dead: the ACK may
 * be read now, if it waits for that (recv_hold.c).  Once only: killed
 * early (rds_mr_kill_work()), the key dies again with the last reference.
 * The MR holds its socket.
 */
static void rds_mr_gate_open(struct rds_mr *mr)
{
	u32 ticket = READ_ONCE(mr->gate) ? xchg(&mr->gate, 0) : 0;

	if (ticket)
		rds_recv_ungate(mr->rs, ticket);
}

/**
 * rds_zc_mr_invalidated() - the transport made an MR's key unusable
 * @mr: an MR whose release started
 *
 * No peer reaches the pages any more and nobody holds the MR: return
 * the memlock charge now, and have the pages unpinned where that may
 * sleep: by the socket's owner in its next call (defer.h), or on
 * rds_mr_wq once the socket is closed.
 *
 * Context: any.
 */
void rds_zc_mr_invalidated(struct rds_mr *mr)
{
	struct rds_sock *rs = mr->rs;

	trace_rds_mr_invalidated(mr->rkey, mr->len, mr->nr_pages);
	rds_mr_gate_open(mr);
	atomic64_sub(mr->nr_pages, &mr->mm->pinned_vm);
	if (atomic_dec_and_test(&rs->mr_releasing))
		rds_mr_wake(rs);
	rds_defer(rs, &mr->unpin_d, rds_mr_unpin, rds_mr_wq);
}
EXPORT_SYMBOL_GPL(rds_zc_mr_invalidated);

/*
 * The last reference is gone: start invalidating the key if that needs no
 * sleep.  Context: process or softirq, interrupts on.
 * Return: true if started; false: call rds_mr_release().
 */
static bool rds_mr_release_nowait(struct rds_mr *mr)
{
	struct rds_sock *rs = mr->rs;

	if (!mr->tp || !mr->trans->mr_dereg_nowait)
		return false;
	atomic_inc(&rs->mr_releasing);
	if (mr->trans->mr_dereg_nowait(mr)) {
		trace_rds_mr_release(mr->rkey, mr->len, mr->nr_pages);
		return true;	/* rds_zc_mr_invalidated() follows */
	}
	if (atomic_dec_and_test(&rs->mr_releasing))
		rds_mr_wake(rs);
	return false;
}

/* The last reference is gone: have the key invalidated.  May sleep. */
static void rds_mr_release(struct rds_mr *mr)
{
	trace_rds_mr_release(mr->rkey, mr->len, mr->nr_pages);
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
 * The last reference starts its release: at once where that needs no
 * sleep (the usual case: a USE_ONCE key released by the receive path
 * posts its invalidation there, with no worker in between), else on
 * rds_mr_wq.  The key dies shortly after, and the pages are unpinned
 * once it is dead.
 *
 * Context: any.
 */
void rds_mr_put(struct rds_mr *mr)
{
	if (!refcount_dec_and_test(&mr->refs))
		return;
	/* A caller in hard interrupt context or with interrupts off cannot
	 * take the transport's bottom-half locks: the worker does it.
	 */
	if (!in_hardirq() && !irqs_disabled() && rds_mr_release_nowait(mr))
		return;
	INIT_WORK(&mr->free_w, rds_mr_free_work);
	queue_work(rds_mr_wq, &mr->free_w);
}

/*
 * Drop the tree's reference of an MR taken out of it; the last reference
 * posts the invalidation before this returns, so a registration right
 * after waits for that MR rather than finding the pool empty.  The post
 * that needs no sleep is tried first: it is the usual case, and cheaper
 * than the one that may wait for a send queue entry.  Context: process
 * context, may sleep.
 */
static void rds_mr_put_start(struct rds_mr *mr)
{
	if (refcount_dec_and_test(&mr->refs) && !rds_mr_release_nowait(mr))
		rds_mr_release(mr);
}

/*
 * Kill the key of an MR taken out of the tree, whose reference the
 * caller holds, while others may hold it too: a message on its way that
 * carries the key (a MAP not yet acknowledged, maybe never, by a host
 * that does not answer).  The MR itself, its pages and their charge stay
 * until the last reference goes.  With @wait, a registration the
 * transport has in flight is waited for (a signal ends that wait).
 * Context: process context, may sleep.
 * Return: 0 once the key is dead; -EINTR (@wait) or -EINPROGRESS
 * (!@wait): a registration in flight; the key dies with the last
 * reference then.
 */
static int rds_mr_kill(struct rds_mr *mr, bool wait)
{
	int ret;

	if (!mr->tp)
		return 0;	/* never registered with a transport */
	ret = mr->trans->mr_kill(mr, wait);
	if (!ret)
		trace_rds_mr_killed(mr->rkey, mr->len, mr->nr_pages);
	return ret;
}

/* A USE_ONCE key that a message still holds dies now, see below. */
static void rds_mr_kill_work(struct work_struct *work)
{
	struct rds_mr *mr = container_of(work, struct rds_mr, kill_w);

	/* No signal reaches a worker: the wait for a REG_MR ends. */
	if (!rds_mr_kill(mr, true))
		rds_mr_gate_open(mr);
	rds_mr_put_start(mr);
}

/**
 * rds_mr_release_once() - release a USE_ONCE MR, used by its ACK
 * @mr: the MR, taken out of its socket's tree, whose reference passes
 * @ticket: the ticket of the message that waits for the key's death
 *	(recv_hold.c), or 0
 *
 * The key dies now, even when a message still holds the MR: the MAP
 * that carried the cookie may wait for its completion or its
 * acknowledgment, which a peer that does not answer never sends, and
 * the key must not live on until then.  The last reference releases it
 * without a worker, as rds_mr_put() does; a key others hold is killed
 * on rds_mr_wq.  Either way the message with @ticket is let through
 * when the key is dead: by rds_zc_mr_invalidated(), or once killed.
 *
 * Context: process or softirq, interrupts on.
 */
void rds_mr_release_once(struct rds_mr *mr, u32 ticket)
{
	WRITE_ONCE(mr->gate, ticket);
	/*
	 * Out of the tree and the index nobody takes a new reference, but a
	 * local lookup that found it before (rds_mr_get_local()): then the
	 * key dies with that operation's reference, as soon.
	 */
	if (refcount_read(&mr->refs) == 1) {
		rds_mr_put(mr);
		return;
	}
	INIT_WORK(&mr->kill_w, rds_mr_kill_work);
	queue_work(rds_mr_wq, &mr->kill_w);
}

/* ------------------------------------------------- the key index */

/*
 * The key's hash: the address, scope and namespace folded into one word
 * with the table's seed, multiplied out to 64 bits; the key added; one
 * more multiplication (hash_64()).  Every bit of the bucket index then
 * depends on every bit of both words.  Keys are chosen by the device or
 * at random (loop.c), never by the user, and the table rehashes with a
 * new seed when a chain grows long.  jhash_3words() cost 40 instructions
 * a hash, two per RDS_GET_MR + RDS_FREE_MR pair and per MAP cycle.
 */
static u32 rds_mr_idx_hash(const void *data, u32 len, u32 seed)
{
	const struct rds_mr_idx_key *k = data;
	const __be32 *a = k->addr.s6_addr32;
	u32 where = (__force u32)(a[0] ^ a[1] ^ a[2] ^ a[3]) ^ k->scope ^
		    net_hash_mix(k->net);

	return hash_64((u64)(where ^ seed) * GOLDEN_RATIO_64 ^ k->rkey, 32);
}

static const struct rhashtable_params rds_mr_idx_params = {
	.head_offset		= offsetof(struct rds_mr, idx_node),
	.key_offset		= offsetof(struct rds_mr, idx_key),
	.key_len		= offsetofend(struct rds_mr_idx_key, rkey),
	.hashfn			= rds_mr_idx_hash,
	.automatic_shrinking	= true,
};

static struct rhashtable rds_mr_idx;

/**
 * rds_mr_get_local() - the live MR a key names on a local address
 * @net: namespace of the operation
 * @addr: the destination address, of this host
 * @scope: its scope (addr.h)
 * @rkey: the key of the cookie
 *
 * Context: any.
 * Return: the MR with a reference (rds_mr_put() it), or NULL: no socket
 * bound to @addr in @net holds an MR of that key.
 */
struct rds_mr *rds_mr_get_local(struct net *net, const struct in6_addr *addr,
				u32 scope, u32 rkey)
{
	struct rds_mr_idx_key key;
	struct rds_mr *mr;

	memset(&key, 0, sizeof(key));
	key.net = net;
	key.addr = *addr;
	key.scope = rds_addr_scope(addr, scope);
	key.rkey = rkey;
	rcu_read_lock();
	mr = rhashtable_lookup(&rds_mr_idx, &key, rds_mr_idx_params);
	if (mr && !refcount_inc_not_zero(&mr->refs))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

/**
 * rds_mr_claim() - take a USE_ONCE MR out of its socket for its one use
 * @mr: an MR the caller holds a reference on
 *
 * Of concurrent operations with the key, one wins; the key is dead for
 * the others, and dies for peers as every release kills it.
 *
 * Context: process or softirq.
 * Return: true if the caller took it (and dropped the socket's
 * reference), false if it was gone already.
 */
bool rds_mr_claim(struct rds_mr *mr)
{
	struct rds_sock *rs = mr->rs;
	bool mine = false;

	spin_lock_bh(&rs->mr_lock);
	if (!RB_EMPTY_NODE(&mr->node)) {
		rds_mr_unlink(rs, mr);
		mine = true;
	}
	spin_unlock_bh(&rs->mr_lock);
	if (mine)
		rds_mr_put(mr);	/* the tree's; the caller's stays */
	return mine;
}

/**
 * rds_mr_index_init() - the key index, at module load
 *
 * Return: 0 or -ENOMEM.
 */
int rds_mr_index_init(void)
{
	return rhashtable_init(&rds_mr_idx, &rds_mr_idx_params);
}

/**
 * rds_mr_index_exit() - after every socket is gone: the index is empty
 */
void rds_mr_index_exit(void)
{
	rhashtable_destroy(&rds_mr_idx);
}

/* ------------------------------------------------- a socket's MRs */

/* Caller holds rs->mr_lock. */
struct rds_mr *rds_mr_find(struct rds_sock *rs, u32 rkey)
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

/**
 * rds_mr_unlink() - take an MR out of its socket's tree and the index
 * @rs: its socket
 * @mr: the MR, in the tree; the tree's reference passes to the caller
 *
 * Context: caller holds rs->mr_lock.
 */
void rds_mr_unlink(struct rds_sock *rs, struct rds_mr *mr)
{
	rb_erase(&mr->node, &rs->mr_tree);
	RB_CLEAR_NODE(&mr->node);
	rhashtable_remove_fast(&rds_mr_idx, &mr->idx_node, rds_mr_idx_params);
}

/*
 * File @mr under its socket and in the index.  Return: 0, -EBUSY when
 * its key is taken (in the tree, or by another MR of the address), or
 * -ENOMEM.
 */
static int rds_mr_insert(struct rds_sock *rs, struct rds_mr *mr)
{
	struct rb_node **p = &rs->mr_tree.rb_node, *parent = NULL;
	int ret;

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
	mr->idx_key.rkey = mr->rkey;
	ret = rhashtable_lookup_insert_fast(&rds_mr_idx, &mr->idx_node,
					    rds_mr_idx_params);
	if (ret) {
		spin_unlock_bh(&rs->mr_lock);
		return ret == -EEXIST ? -EBUSY : -ENOMEM;
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
		rds_mr_unlink(rs, mr);
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
	const struct in6_addr *laddr;
	struct rds_mr *mr;
	u32 scope;
	int ret;

	if (flags & ~RDS_RDMA_FLAGS)
		return ERR_PTR(-EINVAL);
	if (!vec->bytes || vec->bytes > RDS_MAX_MSG_SIZE + PAGE_SIZE ||
	    vec->addr + vec->bytes < vec->addr)
		return ERR_PTR(-EINVAL);

	/* The binding never changes once the port is seen (sock.h). */
	if (!smp_load_acquire(&rs->bound_port))
		return ERR_PTR(-ENOTCONN);
	laddr = &rs->bound_addr;
	scope = rs->bound_scope;
	trans = rs->trans;
	if (!trans || !trans->mr_reg)
		return ERR_PTR(-EOPNOTSUPP);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	refcount_set(&mr->refs, 1);
	RB_CLEAR_NODE(&mr->node);
	mr->idx_key.net = sock_net(&rs->sk);
	mr->idx_key.addr = *laddr;
	mr->idx_key.scope = rds_addr_scope(laddr, scope);
	mr->flags = flags;
	mr->offset = offset_in_page(vec->addr);
	mr->len = vec->bytes;
	mr->trans = trans;

	ret = rds_mr_pin(mr, vec);
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
		ret = trans->mr_prepare(sock_net(&rs->sk), laddr, scope, mr);
	else
		ret = trans->mr_reg(sock_net(&rs->sk), laddr, scope, mr);
	if (ret)
		goto out_uncharge;
	sock_hold(&rs->sk);
	mr->rs = rs;
	atomic_inc(&rs->mr_pending);
	rds_stat_inc(RDS_STAT_MR_CREATED);
	trace_rds_mr_register(mr->rkey, mr->len, mr->nr_pages);
	return mr;

out_uncharge:
	atomic64_sub(mr->nr_pages, &mr->mm->pinned_vm);
	mmdrop(mr->mm);
out_unpin:
	unpin_user_pages(mr->pages, mr->nr_pages);
	rds_mr_pages_free(mr);
out_free:
	kfree(mr);
	return ERR_PTR(ret);
}

/*
 * Register @vec, store its cookie at @cookie_addr (if not 0) and file it
 * under the socket.  With @keep (RDS_CMSG_RDMA_MAP), the message that
 * carries the cookie gets a reference in *@keep, and with @defer (it
 * goes over a connection) the transport may leave the registration to
 * it.  Return: 0 with *@cookie set, or a negative errno.
 */
int rds_mr_map(struct rds_sock *rs, const struct rds_iovec *vec,
	       u64 cookie_addr, u64 flags, u64 *cookie, struct rds_mr **keep,
	       bool defer)
{
	unsigned int tries = 0;
	struct rds_mr *mr;
	u32 rkey;
	int ret;

	/*
	 * A key is unique on its device only.  After "rdma link del" and
	 * "add", the socket may still hold MRs of the device that went,
	 * and the new one hands out the same indexes: a new MR whose key
	 * (index and random key byte) matches one of those cannot be filed
	 * (-EBUSY, 1 in 256 per index both hold).  Register again: the
	 * next MR has another index or key byte.  Local keys (loop.c) are
	 * random: a clash with another MR of the address is as rare, and
	 * is registered again the same way.
	 */
	do {
		mr = rds_mr_create(rs, vec, flags, keep && defer);
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
			if (keep) {
				rds_mr_put(*keep);
				*keep = NULL;
			}
		}
	} while (ret == -EBUSY && ++tries < RDS_MR_KEY_TRIES);
	if (ret)
		return ret;
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
 * @vec: the memory to register, from the arguments copied from the user
 * @cookie_addr: where the cookie goes, or 0
 * @flags: RDS_RDMA_* flags
 *
 * The destination of RDS_GET_MR_FOR_DEST does not matter: a registration
 * serves every peer of the device.  The caller checked it.
 *
 * Return: 0, or -ENOTCONN when unbound, -EOPNOTSUPP when the bound
 * address is not on an RDMA device that registers memory, -EINVAL for a
 * bad length, range or flag, -EFAULT for memory that is not there,
 * -ENOMEM over RLIMIT_MEMLOCK, -EAGAIN when the MR pool is exhausted,
 * -EBUSY when the pages cannot be DMA-mapped.
 */
int rds_rdma_get_mr(struct rds_sock *rs, const struct rds_iovec *vec,
		    u64 cookie_addr, u64 flags)
{
	u64 cookie;

	return rds_mr_map(rs, vec, cookie_addr, flags, &cookie, NULL, false);
}

/**
 * rds_rdma_free_mr() - RDS_FREE_MR
 * @rs: the socket
 * @cookie: a cookie of this socket, or 0
 * @flags: RDS_RDMA_INVALIDATE or 0
 *
 * Every release invalidates the key before the pages are unpinned.  With
 * RDS_RDMA_INVALIDATE the call returns once the key is dead, so the
 * peer's next RDMA against it fails, even while a message on its way
 * still carries the key (a MAP the peer has not acknowledged): the key
 * dies now, the MR's pages go with that message.  Without, the
 * invalidation is only started (it takes microseconds, where the
 * distribution leaves the key valid until its next pool flush), and a
 * key that a message carries lives until that message is done with.
 * Cookie 0 names no MR and succeeds: programs use it to probe for RDMA;
 * with RDS_RDMA_INVALIDATE it asks for what every release already does.
 * On a socket of a transport without RDMA (TCP) it fails with EINVAL, as
 * the distribution's does there (no flush_mrs): no RDMA is the answer.
 *
 * Context: process context, may sleep.
 * Return: 0, -EINVAL for a cookie this socket does not have, or -EINTR:
 * a signal ended the wait for a registration the transport had in
 * flight (the REG_MR chained in front of the MAP's message); the MR is
 * gone from the socket and its key dies when that message is done with.
 */
int rds_rdma_free_mr(struct rds_sock *rs, u64 cookie, u64 flags)
{
	/* Set once by bind() or SO_RDS_TRANSPORT, before any MR. */
	const struct rds_transport *trans = READ_ONCE(rs->trans);
	struct rds_mr *mr;
	int ret = 0;

	if (!cookie)
		return trans && trans->xmit && !trans->mr_reg ? -EINVAL : 0;
	mr = rds_mr_take(rs, (u32)cookie);
	if (!mr)
		return -EINVAL;
	if (flags & RDS_RDMA_INVALIDATE)
		ret = rds_mr_kill(mr, true);
	rds_mr_put_start(mr);
	return ret;
}

/**
 * rds_mr_sock_release() - invalidate and unpin every MR of a socket
 * @rs: the socket, being released; its messages not yet sent withdrawn
 *
 * Every release is started at once and waited for, those started from
 * softirq meanwhile too.  The key of an MR that a message still holds
 * (one the transport has not given back yet) is killed, and its pages
 * are waited for a little (RDS_MR_CLOSE_WAIT): a message stalled behind
 * a connection that cannot tear down yet gives them back when it goes,
 * and close does not wait for that.  A registration the transport had in
 * flight for such a message (chained in front of it) is not waited for
 * either: its key dies when the message goes.
 */
void rds_mr_sock_release(struct rds_sock *rs)
{
	struct rb_node *node;
	struct rds_mr *mr;

	for (;;) {
		spin_lock_bh(&rs->mr_lock);
		node = rb_first(&rs->mr_tree);
		mr = node ? rb_entry(node, struct rds_mr, node) : NULL;
		if (mr)
			rds_mr_unlink(rs, mr);
		spin_unlock_bh(&rs->mr_lock);
		if (!mr)
			break;
		/*
		 * Out of the tree, nobody takes a new reference: one other
		 * than ours is a message's.
		 */
		if (refcount_read(&mr->refs) > 1)
			rds_mr_kill(mr, false);
		rds_mr_put_start(mr);
	}
	wait_event(rs->mr_wait, !atomic_read(&rs->mr_releasing));
	if (!wait_event_timeout(rs->mr_wait, !atomic_read(&rs->mr_pending),
				RDS_MR_CLOSE_WAIT))
		trace_rds_mr_close_left(atomic_read(&rs->mr_pending));
}
