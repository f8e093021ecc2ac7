// SPDX-License-Identifier: GPL-2.0
/*
 * Operation ids and barriers (op_barrier.h, RDS_OP_BARRIER and
 * RDS_CMSG_OP_ID in the uapi header).
 *
 * A socket numbers its operations in the order sendmsg() builds them and
 * keeps those not yet done on rs->op_inflight, in that order.  An
 * operation leaves the list when it ends (rds_rdma_op_done(), after its
 * notification is queued, so a barrier never runs ahead of the
 * notifications) or when it is freed without having been handed on (its
 * sendmsg() failed).  The barrier of a destination is then one less than
 * the id of its oldest operation still on the list, or the last id handed
 * out if none is: a walk of the list, which the socket's send buffer
 * keeps short.
 *
 * Locking: rs->op_lock, a leaf lock taken with interrupts off (operations
 * end and are freed in any context), protects rs->op_inflight, every
 * op->inflight, rs->op_last_id and rs->op_done_unseen.
 */
#include <linux/errno.h>
#include <linux/in.h>
#include <linux/list.h>
#include <linux/sched/signal.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <net/sock.h>
#include <uapi/linux/rds.h>

#include "addr.h"
#include "op_barrier.h"
#include "rdma.h"
#include "sock.h"

/**
 * rds_op_sock_init() - the operation state of a new socket
 * @rs: the socket
 */
void rds_op_sock_init(struct rds_sock *rs)
{
	spin_lock_init(&rs->op_lock);
	INIT_LIST_HEAD(&rs->op_inflight);
	init_waitqueue_head(&rs->op_wait);
}

/**
 * rds_op_track() - give an operation its id
 * @rs: the sending socket
 * @op: the operation being built; not handed on yet
 * @daddr: its destination address
 * @dport: and port
 *
 * Context: process context.
 */
void rds_op_track(struct rds_sock *rs, struct rds_rdma_op *op,
		  const struct in6_addr *daddr, __be16 dport)
{
	unsigned long flags;

	op->daddr = *daddr;
	op->dport = dport;
	spin_lock_irqsave(&rs->op_lock, flags);
	op->id = ++rs->op_last_id;
	list_add_tail(&op->inflight, &rs->op_inflight);
	spin_unlock_irqrestore(&rs->op_lock, flags);
}

/**
 * rds_op_untrack() - an operation is done with, for its barrier
 * @op: an operation that ended, or is freed; once only matters
 * @readers_woken: the caller wakes the socket's readers (sk_data_ready)
 *	anyway, for a notification it queued
 *
 * Wakes barrier waiters and, unless @readers_woken, pollers.
 * Context: any.
 */
void rds_op_untrack(struct rds_rdma_op *op, bool readers_woken)
{
	struct rds_sock *rs = op->rs;
	unsigned long flags;
	bool was = false;

	if (!rs)
		return;
	spin_lock_irqsave(&rs->op_lock, flags);
	if (!list_empty(&op->inflight)) {
		list_del_init(&op->inflight);
		rs->op_done_unseen = true;
		was = true;
	}
	spin_unlock_irqrestore(&rs->op_lock, flags);
	if (!was)
		return;
	if (wq_has_sleeper(&rs->op_wait))
		wake_up_interruptible(&rs->op_wait);
	if (!readers_woken && !READ_ONCE(rs->dead))
		rs->sk.sk_data_ready(&rs->sk);
}

/* A destination of RDS_OP_BARRIER: port 0 stands for every port. */
struct rds_op_dest {
	struct in6_addr	addr;
	__be16		port;
};

/* The barrier of @dest (NULL: every destination).  Caller holds op_lock. */
static u64 rds_op_done_locked(struct rds_sock *rs,
			      const struct rds_op_dest *dest)
{
	struct rds_rdma_op *op;

	list_for_each_entry(op, &rs->op_inflight, inflight)
		if (!dest || (ipv6_addr_equal(&op->daddr, &dest->addr) &&
			      (!dest->port || op->dport == dest->port)))
			return op->id - 1;
	return rs->op_last_id;
}

/* Has the barrier of @dest reached @id?  Its value in *@done. */
static bool rds_op_reached(struct rds_sock *rs, const struct rds_op_dest *dest,
			   u64 id, u64 *done)
{
	unsigned long flags;

	spin_lock_irqsave(&rs->op_lock, flags);
	*done = rds_op_done_locked(rs, dest);
	spin_unlock_irqrestore(&rs->op_lock, flags);
	return *done >= id;
}

/**
 * rds_op_barrier() - getsockopt(RDS_OP_BARRIER)
 * @rs: the socket
 * @nonblock: the socket is non-blocking: never wait
 * @optval: struct rds_op_barrier, in and out
 * @optlen: its length, in and out
 *
 * Context: process context, may sleep.
 * Return: 0 with done_id written; -EINVAL for a short buffer, an unknown
 * family or a wait_id never handed out;
 * -EAGAIN when wait_id is not reached (at once when non-blocking, after
 * SO_RCVTIMEO otherwise); -EINTR or -ERESTARTSYS on a signal; -EFAULT.
 */
int rds_op_barrier(struct rds_sock *rs, bool nonblock, char __user *optval,
		   int __user *optlen)
{
	const struct rds_op_dest *dest = NULL;
	struct rds_op_dest d;
	struct rds_op_barrier b;
	u32 scope;
	unsigned long flags;
	u64 done, last;
	long timeo, left;
	int len, ret;

	if (get_user(len, optlen))
		return -EFAULT;
	if (len < (int)sizeof(b))
		return -EINVAL;
	if (copy_from_user(&b, optval, sizeof(b)))
		return -EFAULT;
	if (b.dest.ss_family != AF_UNSPEC) {
		ret = rds_addr_parse(&b.dest, sizeof(b.dest), -EINVAL,
				     &d.addr, &d.port, &scope);
		if (ret)
			return ret;
		dest = &d;
	}

	spin_lock_irqsave(&rs->op_lock, flags);
	rs->op_done_unseen = false;	/* the caller looks now */
	last = rs->op_last_id;
	done = rds_op_done_locked(rs, dest);
	spin_unlock_irqrestore(&rs->op_lock, flags);
	if (b.wait_id > last)
		return -EINVAL;
	if (done < b.wait_id) {
		timeo = sock_rcvtimeo(&rs->sk, nonblock);
		if (!timeo)
			return -EAGAIN;
		left = wait_event_interruptible_timeout(rs->op_wait,
							rds_op_reached(rs, dest, b.wait_id, &done),
							timeo);
		if (left < 0)
			return sock_intr_errno(timeo);
		if (!left)
			return -EAGAIN;
	}
	b.done_id = done;
	if (copy_to_user(optval, &b, sizeof(b)) ||
	    put_user((int)sizeof(b), optlen))
		return -EFAULT;
	return 0;
}

/**
 * rds_op_poll() - poll()'s events for operations
 * @rs: the socket
 *
 * Return: EPOLLRDBAND once an operation completed since the socket last
 * asked RDS_OP_BARRIER.
 */
__poll_t rds_op_poll(struct rds_sock *rs)
{
	return READ_ONCE(rs->op_done_unseen) ? EPOLLRDBAND : 0;
}
