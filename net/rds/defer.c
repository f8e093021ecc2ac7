// SPDX-License-Identifier: GPL-2.0
/*
 * Releases deferred to a socket's owner: see defer.h.
 *
 * Locking: rs->defer_lock (interrupts off: entries come from any
 * context) protects rs->defer_list and rs->defer_closed.  An entry holds
 * a reference on its socket until its function has run, so a socket
 * with entries, and its delayed work, outlive close().
 *
 * The delayed work is armed when an entry finds the list empty and the
 * work not pending, and the owner that runs the list leaves it armed:
 * arming a timer and cancelling it for every entry cost more than the
 * entry (queue_delayed_work() and cancel_delayed_work() ran some 460
 * instructions of the kernel per RDS_GET_MR + RDS_FREE_MR), where one
 * run of the worker, usually over an empty list, per RDS_DEFER_DELAY of
 * activity costs a few per pair.
 * What this relies on: an entry on the list always has a run of
 * rds_defer_work() ahead of it.  Its adder saw the work pending under
 * defer_lock, or queued it: a pending work has not started, since the
 * workqueue clears PENDING before it calls the function, which then
 * takes defer_lock and splices the list (an adder that takes the lock
 * after that splice sees PENDING clear, through the lock, and queues
 * the work again).  close() cancels the work synchronously after it
 * stopped new entries, so no run follows a closed socket's release.
 */
#include <linux/jiffies.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "defer.h"
#include "sock.h"
#include "stats.h"

/* How long an entry waits for its owner before the worker runs it. */
#define RDS_DEFER_DELAY		max(msecs_to_jiffies(4), 1UL)

/* Run the entries of @list.  The last one may free the socket. */
static void rds_defer_run_list(struct list_head *list)
{
	struct rds_deferred *d, *tmp;

	list_for_each_entry_safe(d, tmp, list, item) {
		list_del(&d->item);
		d->fn(d);
	}
}

static void rds_defer_work(struct work_struct *work)
{
	struct rds_sock *rs = container_of(to_delayed_work(work),
					   struct rds_sock, defer_w);
	unsigned long flags;
	LIST_HEAD(list);

	spin_lock_irqsave(&rs->defer_lock, flags);
	list_splice_init(&rs->defer_list, &list);
	spin_unlock_irqrestore(&rs->defer_lock, flags);
	/* Usually empty: the owner ran the list after the work was armed. */
	if (list_empty(&list))
		return;
	rds_stat_inc(RDS_STAT_DEFER_WORKER);
	rds_defer_run_list(&list);
}

/**
 * rds_defer_sock_init() - the deferred releases of a new socket
 * @rs: the socket
 */
void rds_defer_sock_init(struct rds_sock *rs)
{
	spin_lock_init(&rs->defer_lock);
	INIT_LIST_HEAD(&rs->defer_list);
	rs->defer_closed = false;
	INIT_DELAYED_WORK(&rs->defer_w, rds_defer_work);
}

static void rds_defer_queued(struct work_struct *work)
{
	struct rds_deferred *d = container_of(work, struct rds_deferred, work);

	d->fn(d);
}

/**
 * rds_defer() - leave a release to the socket's owner
 * @rs: the socket, or NULL; @d holds a reference on it until @fn has run
 * @d: the release
 * @fn: runs it, in process context
 * @wq: where it runs when there is no owner to run it: @rs is NULL or
 *	closed
 *
 * Context: any.
 */
void rds_defer(struct rds_sock *rs, struct rds_deferred *d,
	       void (*fn)(struct rds_deferred *d),
	       struct workqueue_struct *wq)
{
	unsigned long flags;
	bool deferred = false;

	d->fn = fn;
	if (rs) {
		spin_lock_irqsave(&rs->defer_lock, flags);
		if (!rs->defer_closed) {
			deferred = true;
			/*
			 * Under the lock: close() cancels the work after it.
			 * A pending work runs this entry too (see the top).
			 */
			if (list_empty(&rs->defer_list) &&
			    !delayed_work_pending(&rs->defer_w))
				queue_delayed_work(system_wq, &rs->defer_w,
						   RDS_DEFER_DELAY);
			list_add_tail(&d->item, &rs->defer_list);
		}
		spin_unlock_irqrestore(&rs->defer_lock, flags);
	}
	if (!deferred) {
		INIT_WORK(&d->work, rds_defer_queued);
		queue_work(wq, &d->work);
	}
}

/**
 * rds_defer_run_all() - the owner runs the releases waiting on its socket
 * @rs: the socket, held by the caller's file
 *
 * rds_defer_run() calls it when the list is not empty.
 *
 * Context: process context, may sleep; sendmsg() and recvmsg().
 */
void rds_defer_run_all(struct rds_sock *rs)
{
	unsigned long flags;
	LIST_HEAD(list);

	spin_lock_irqsave(&rs->defer_lock, flags);
	/* The work stays armed: it finds the list empty (see the top). */
	list_splice_init(&rs->defer_list, &list);
	spin_unlock_irqrestore(&rs->defer_lock, flags);
	rds_stat_inc(RDS_STAT_DEFER_OWNER);
	rds_defer_run_list(&list);
}

/**
 * rds_defer_sock_close() - run what waits and defer nothing more
 * @rs: the socket, being released
 *
 * Context: process context, may sleep.
 */
void rds_defer_sock_close(struct rds_sock *rs)
{
	unsigned long flags;
	LIST_HEAD(list);

	spin_lock_irqsave(&rs->defer_lock, flags);
	rs->defer_closed = true;
	list_splice_init(&rs->defer_list, &list);
	spin_unlock_irqrestore(&rs->defer_lock, flags);
	cancel_delayed_work_sync(&rs->defer_w);
	rds_defer_run_list(&list);
}
