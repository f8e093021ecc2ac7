/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Releases deferred to a socket's owner (defer.c).
 *
 * Unpinning user pages may sleep, so a release that ends in softirq
 * (a key invalidated, an RDMA operation's message acknowledged) cannot
 * finish there.  Handing each one to a worker puts a context switch on
 * the critical path of every request/RDMA/ACK cycle: the worker runs
 * before the woken reader.  Instead the release waits on its socket's
 * list, and the owner's next sendmsg() or recvmsg() runs it, in process
 * context, on a CPU that is running anyway.  A delayed work runs what an
 * idle owner leaves; close() runs the rest and refuses new entries, so
 * nothing is deferred on a closed socket.
 */
#ifndef _RDS_ZC_DEFER_H
#define _RDS_ZC_DEFER_H

#include <linux/list.h>
#include <linux/workqueue.h>

#include "sock.h"

struct rds_sock;

/* One deferred release; @fn runs it, in process context. */
struct rds_deferred {
	struct list_head item;		/* on the socket's list, */
	struct work_struct work;	/* or queued, once it is closed */
	void (*fn)(struct rds_deferred *d);
};

void rds_defer_sock_init(struct rds_sock *rs);
void rds_defer(struct rds_sock *rs, struct rds_deferred *d,
	       void (*fn)(struct rds_deferred *d),
	       struct workqueue_struct *wq);
void rds_defer_run_all(struct rds_sock *rs);
void rds_defer_sock_close(struct rds_sock *rs);

/**
 * rds_defer_run() - the owner runs the releases waiting on its socket
 * @rs: the socket, held by the caller's file
 *
 * Inline: most calls find nothing, and the test is cheaper than a call.
 * An entry added meanwhile waits for the next call or the worker.
 *
 * Context: process context, may sleep; sendmsg() and recvmsg().
 */
static inline void rds_defer_run(struct rds_sock *rs)
{
	if (!list_empty_careful(&rs->defer_list))
		rds_defer_run_all(rs);
}

#endif /* _RDS_ZC_DEFER_H */
