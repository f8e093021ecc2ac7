// SPDX-License-Identifier: GPL-2.0
/*
 * Zero-copy sends: MSG_ZEROCOPY with an RDS_CMSG_ZCOPY_COOKIE on a socket
 * with SO_ZEROCOPY, and their completions, read by recvmsg() as
 * RDS_CMSG_ZCOPY_COMPLETION control messages (struct rds_zcopy_cookies).
 *
 * Normal operation.  rds_zc_msg_build() pins the sender's buffer, charges
 * the pinned pages to RLIMIT_MEMLOCK (mm->pinned_vm, as MRs and RDMA
 * operations are, rds_rdma_charge()) and makes a message whose pages are
 * those user pages (rds_msg_alloc_user()): no copy is made.  A transport
 * reads them with rds_msg_page() as it reads any message; nothing else
 * about a zero-copy message is its business.  The message is freed at its
 * last reference, when no transport, connection or receiver holds it:
 * over a connection, once the peer acknowledged it (a retransmission may
 * still need the pages) and the device is done with every fragment, or
 * once it was cancelled or dropped; on local delivery, once the receiver
 * has read it (the receiver copies straight from the sender's pages), or
 * once the receiver's queue dropped it.  rds_msg_put() then calls
 * rds_zc_done(), in whatever context: it queues the cookie at once, so
 * the completion tells the sender that nothing reads its buffer any
 * more, and leaves the unpinning and the memlock uncharge, which need
 * process context, to the socket's owner or rds_mr_wq (defer.h); the
 * owner's next sendmsg() or recvmsg() runs them before anything else.
 *
 * A payload of at most RDS_MSG_INLINE_MAX bytes, or one spread over
 * several iovecs, is copied instead (pinning costs more than the copy of
 * a small one), and its completion is reported all the same when the
 * message is freed: a program sees one behaviour.
 *
 * Completions.  Cookies are reported in the order their messages are
 * freed, batched up to RDS_MAX_ZCOOKIES per struct rds_zcopy_cookies:
 * each message brings the batch it may need (struct rds_zc_note,
 * allocated when it is sent), so reporting allocates nothing and cannot
 * fail.  The completions a socket has not read yet, queued or still to
 * come, are bounded by SO_RCVBUF (rds_zc_limit()): a zero-copy send
 * that would go over fails with ENOBUFS before anything is pinned, so
 * that no completion is ever lost; the program reads its completions and
 * sends again.  The distribution's RDS has no bound.
 *
 * Close.  rds_zc_sock_release() drops the completions not read and
 * refuses later ones (zc_dead); messages still in a transport's hands
 * are sent or dropped as any message of a closed socket, and each frees
 * its pages and memlock charge when it goes: every struct rds_zc holds a
 * reference on its socket until then.
 *
 * Locking: rs->zc_lock (interrupts off: messages are freed from any
 * context) protects rs->zc_queue and rs->zc_dead.  rs->zc_pending is
 * atomic.
 */
#include <linux/errno.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/uio.h>
#include <net/compat.h>
#include <net/sock.h>
#include <uapi/linux/rds.h>

#include "defer.h"
#include "message.h"
#include "mr.h"
#include "sock.h"
#include "zcopy.h"

/* SO_RCVBUF bytes that one completion not read yet stands for. */
#define RDS_ZC_CHARGE	128

/* A batch of completions for recvmsg(), on rs->zc_queue. */
struct rds_zc_note {
	struct list_head item;
	struct rds_zcopy_cookies ck;
};

/* The zero-copy state of one message (rds_msg.zc). */
struct rds_zc {
	struct rds_msg_zc base;
	struct rds_sock	*rs;		/* referenced until rds_zc_finish() */
	u32		cookie;
	bool		aborted;	/* the send failed: no completion */
	struct rds_zc_note *note;	/* NULL once it went on the queue */
	struct page	**pages;	/* pinned, or NULL: the payload was copied */
	unsigned int	nr_pages;
	struct mm_struct *mm;		/* charged nr_pages, grabbed; or NULL */
	struct rds_deferred free_d;
};

/**
 * rds_zc_sock_init() - the zero-copy state of a new socket
 * @rs: the socket
 */
void rds_zc_sock_init(struct rds_sock *rs)
{
	spin_lock_init(&rs->zc_lock);
	INIT_LIST_HEAD(&rs->zc_queue);
	atomic_set(&rs->zc_pending, 0);
}

static int rds_zc_limit(const struct rds_sock *rs)
{
	return max(rds_sk_rcvbuf(rs) / RDS_ZC_CHARGE, 1);
}

/* Unpin, uncharge and free; process context. */
static void rds_zc_finish(struct rds_deferred *d)
{
	struct rds_zc *zc = container_of(d, struct rds_zc, free_d);

	if (zc->pages) {
		unpin_user_pages(zc->pages, zc->nr_pages);
		kvfree(zc->pages);
	}
	if (zc->mm) {
		atomic64_sub(zc->nr_pages, &zc->mm->pinned_vm);
		mmdrop(zc->mm);
	}
	kfree(zc->note);
	if (zc->rs)
		sock_put(&zc->rs->sk);
	kfree(zc);
}

/* The message is freed: report its cookie.  Context: any. */
static void rds_zc_done(struct rds_msg_zc *base)
{
	struct rds_zc *zc = container_of(base, struct rds_zc, base);
	struct rds_sock *rs = zc->rs;
	struct rds_zc_note *tail;
	unsigned long flags;
	bool queued = false;

	spin_lock_irqsave(&rs->zc_lock, flags);
	if (!rs->zc_dead && !zc->aborted) {
		tail = list_empty(&rs->zc_queue) ? NULL :
		       list_last_entry(&rs->zc_queue, struct rds_zc_note, item);
		if (tail && tail->ck.num < RDS_MAX_ZCOOKIES) {
			tail->ck.cookies[tail->ck.num++] = zc->cookie;
		} else {
			zc->note->ck.num = 1;
			zc->note->ck.cookies[0] = zc->cookie;
			list_add_tail(&zc->note->item, &rs->zc_queue);
			zc->note = NULL;
		}
		queued = true;
	}
	spin_unlock_irqrestore(&rs->zc_lock, flags);
	if (queued)
		rs->sk.sk_data_ready(&rs->sk);
	else
		atomic_dec(&rs->zc_pending);	/* nobody reads it */

	if (zc->pages)
		rds_defer(rs, &zc->free_d, rds_zc_finish, rds_mr_wq);
	else
		rds_zc_finish(&zc->free_d);
}

/* The user address where @from's next byte is: a user-backed iterator. */
static unsigned long rds_zc_iter_addr(const struct iov_iter *from)
{
#ifdef iter_iov_addr	/* 6.4 and later */
	return (unsigned long)iter_iov_addr(from);
#else
	if (iter_is_ubuf(from))
		return (unsigned long)from->ubuf + from->iov_offset;
	return (unsigned long)iov_iter_iovec(from).iov_base;
#endif
}

/*
 * Pin the @len bytes at @from, one range of user memory, and charge them.
 * Return: the message over the pinned pages, or an ERR_PTR: -ENOMEM
 * when RLIMIT_MEMLOCK would be exceeded, -EFAULT for memory not there.
 */
static struct rds_msg *rds_zc_pin(struct rds_zc *zc, struct iov_iter *from,
				  size_t len)
{
	unsigned long addr = rds_zc_iter_addr(from);
	unsigned int nr = DIV_ROUND_UP(offset_in_page(addr) + len, PAGE_SIZE);
	struct rds_msg *m;
	int ret;

	ret = rds_rdma_charge(current->mm, nr);
	if (ret)
		return ERR_PTR(ret);
	zc->mm = current->mm;
	mmgrab(zc->mm);
	zc->nr_pages = nr;
	/* Read only: the device and local readers never write to them. */
	ret = rds_rdma_pin(addr, len, FOLL_LONGTERM, &zc->pages, &nr);
	if (ret)
		return ERR_PTR(ret);
	m = rds_msg_alloc_user(len, offset_in_page(addr), zc->pages,
			       GFP_KERNEL_ACCOUNT);
	if (!m)
		return ERR_PTR(-ENOMEM);
	iov_iter_advance(from, len);
	return m;
}

/* A small or scattered payload: copied, completed like the others. */
static struct rds_msg *rds_zc_copy(struct iov_iter *from, size_t len)
{
	struct rds_msg *m;
	int ret;

	if (len <= RDS_MSG_INLINE_MAX)
		m = rds_msg_alloc_inline(len, GFP_KERNEL | __GFP_ACCOUNT);
	else
		m = rds_msg_alloc(len, GFP_KERNEL);
	if (!m)
		return ERR_PTR(-ENOMEM);
	ret = rds_msg_copy_from_iter(m, from);
	if (ret) {
		rds_msg_put(m);
		return ERR_PTR(ret);
	}
	return m;
}

/**
 * rds_zc_msg_build() - the message of a zero-copy send
 * @rs: the sending socket, SO_ZEROCOPY set
 * @from: the payload, @len bytes
 * @len: its length, 1 to RDS_MAX_MSG_SIZE
 * @cookie: the RDS_CMSG_ZCOPY_COOKIE to report when the message is freed
 *
 * Return: the message, with one reference, or an ERR_PTR: -ENOBUFS when
 * the socket has as many completions not read as it may hold, -ENOMEM
 * when the pinned pages would take the caller over RLIMIT_MEMLOCK (or
 * memory is short), -EFAULT for a buffer that is not there.
 */
struct rds_msg *rds_zc_msg_build(struct rds_sock *rs, struct iov_iter *from,
				 size_t len, u32 cookie)
{
	struct rds_msg *m;
	struct rds_zc *zc;

	if (atomic_inc_return(&rs->zc_pending) > rds_zc_limit(rs)) {
		atomic_dec(&rs->zc_pending);
		return ERR_PTR(-ENOBUFS);
	}
	m = ERR_PTR(-ENOMEM);
	zc = kzalloc(sizeof(*zc), GFP_KERNEL_ACCOUNT);
	if (!zc)
		goto out_pending;
	zc->note = kzalloc(sizeof(*zc->note), GFP_KERNEL_ACCOUNT);
	if (!zc->note)
		goto out_free;
	zc->base.done = rds_zc_done;
	zc->cookie = cookie;

	if (len > RDS_MSG_INLINE_MAX && user_backed_iter(from) &&
	    iov_iter_single_seg_count(from) >= len)
		m = rds_zc_pin(zc, from, len);
	else
		m = rds_zc_copy(from, len);
	if (IS_ERR(m))
		goto out_free;
	sock_hold(&rs->sk);
	zc->rs = rs;
	m->zc = &zc->base;
	return m;

out_free:
	rds_zc_finish(&zc->free_d);	/* no socket reference yet */
out_pending:
	atomic_dec(&rs->zc_pending);
	return m;
}

/**
 * rds_zc_msg_abort() - the send of a zero-copy message failed
 * @m: the message, from rds_zc_msg_build(), not handed on
 *
 * Its release reports no completion: sendmsg() returned an error, and
 * the program did not give up its buffer.
 */
void rds_zc_msg_abort(struct rds_msg *m)
{
	struct rds_zc *zc = container_of(m->zc, struct rds_zc, base);

	zc->aborted = true;
}

/*
 * rds_zc_recv_cmsg()'s rare case, out of line: a batch may be queued.
 * Whether one is, and which, is decided under zc_lock: a batch is taken
 * by one reader only.
 */
int __rds_zc_recv_cmsg(struct rds_sock *rs, struct msghdr *msg)
{
	struct rds_zc_note *note;
	size_t room = (msg->msg_flags & MSG_CMSG_COMPAT) ?
		      sizeof(struct compat_cmsghdr) + sizeof(note->ck) :
		      CMSG_LEN(sizeof(note->ck));
	unsigned long flags;
	int ret;

	if (!sock_flag(&rs->sk, SOCK_ZEROCOPY) || !msg->msg_control ||
	    msg->msg_controllen < room)
		return 0;
	spin_lock_irqsave(&rs->zc_lock, flags);
	note = list_first_entry_or_null(&rs->zc_queue, struct rds_zc_note,
					item);
	if (note)
		list_del(&note->item);
	spin_unlock_irqrestore(&rs->zc_lock, flags);
	if (!note)
		return 0;

	ret = put_cmsg(msg, SOL_RDS, RDS_CMSG_ZCOPY_COMPLETION,
		       sizeof(note->ck), &note->ck);
	if (ret) {
		spin_lock_irqsave(&rs->zc_lock, flags);
		list_add(&note->item, &rs->zc_queue);
		spin_unlock_irqrestore(&rs->zc_lock, flags);
		return ret;
	}
	atomic_sub(note->ck.num, &rs->zc_pending);
	kfree(note);
	return 1;
}

/**
 * rds_zc_sock_release() - drop the completions of a closed socket
 * @rs: the socket, released
 *
 * Later completions are dropped as they come (rds_zc_done()).
 */
void rds_zc_sock_release(struct rds_sock *rs)
{
	struct rds_zc_note *note, *tmp;
	unsigned long flags;
	LIST_HEAD(notes);

	spin_lock_irqsave(&rs->zc_lock, flags);
	rs->zc_dead = true;
	list_splice_init(&rs->zc_queue, &notes);
	spin_unlock_irqrestore(&rs->zc_lock, flags);
	list_for_each_entry_safe(note, tmp, &notes, item) {
		atomic_sub(note->ck.num, &rs->zc_pending);
		kfree(note);
	}
}
