// SPDX-License-Identifier: GPL-2.0
/*
 * Releases deferred to a socket's owner: see defer.h.
 *
 * Locking: rs->defer_lock (interrupts off: entries come from any
 * context) protects rs->defer_list and rs->defer_closed.  An entry holds
 * a reference on its socket until its function has run, so a socket
 * with entries, and its delayed work, outlive close().
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

/**
 * rds_defer() - leave a release to the socket's owner
 * @rs: the socket; @d holds a reference on it until @d->fn has run
 * @d: the release, @d->fn set
 *
 * Context: any.
 * Return: true if deferred; false once the socket is closed: the caller
 * runs the release some other way.
 */
bool rds_defer(struct rds_sock *rs, struct rds_deferred *d)
{
	unsigned long flags;
	bool first;

	spin_lock_irqsave(&rs->defer_lock, flags);
	if (rs->defer_closed) {
		spin_unlock_irqrestore(&rs->defer_lock, flags);
		return false;
	}
	first = list_empty(&rs->defer_list);
	list_add_tail(&d->item, &rs->defer_list);
	/* Under the lock: close() cancels the work after it took the lock. */
	if (first)
		queue_delayed_work(system_wq, &rs->defer_w, RDS_DEFER_DELAY);
	spin_unlock_irqrestore(&rs->defer_lock, flags);
	return true;
}

/**
 * rds_defer_run() - the owner runs the releases waiting on its socket
 * @rs: the socket, held by the caller's file
 *
 * Context: process context, may sleep; sendmsg() and recvmsg().
 */
void rds_defer_run(struct rds_sock *rs)
{
	unsigned long flags;
	LIST_HEAD(list);

	if (list_empty_careful(&rs->defer_list))
		return;
	spin_lock_irqsave(&rs->defer_lock, flags);
	list_splice_init(&rs->defer_list, &list);
	/* Nothing left for the worker; a new entry queues it again. */
	cancel_delayed_work(&rs->defer_w);
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
