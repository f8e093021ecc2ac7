/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Building operations from a sendmsg()'s control messages (rdma_op.c),
 * for rdma.c, and the notifications they leave on a socket.  Core only.
 */
#ifndef _RDS_ZC_RDMA_OP_H
#define _RDS_ZC_RDMA_OP_H

#include <linux/cache.h>
#include <linux/list.h>
#include <uapi/linux/rds.h>

struct rds_rdma_op;
struct rds_sock;

/* A queued RDS_CMSG_RDMA_STATUS. */
struct rds_notifier {
	struct list_head item;		/* on rs->notify_queue */
	struct rds_rdma_notify n;
};

/*
 * What a notification costs its socket (rs->note_mem): the object, its
 * slab's rounding and a cache line's worth of bookkeeping.
 */
#define RDS_NOTE_CHARGE	L1_CACHE_ALIGN(sizeof(struct rds_notifier))

void rds_rdma_note_uncharge(struct rds_sock *rs);

struct rds_rdma_op *rds_rdma_op_build(struct rds_sock *rs,
				      const struct rds_rdma_args *a);
struct rds_rdma_op *rds_atomic_op_build(struct rds_sock *rs, int type,
					const struct rds_atomic_args *a,
					bool remote);

#endif /* _RDS_ZC_RDMA_OP_H */
