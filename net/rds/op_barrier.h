/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Operation ids and barriers, the model of the original RDS design: each
 * RDMA or atomic operation a socket submits gets the next id, and
 * RDS_OP_BARRIER tells up to which id every operation towards a
 * destination has completed, so that a server can stream operations and
 * reclaim their buffers in bulk instead of asking for a notification per
 * operation.
 */
#ifndef _RDS_ZC_OP_BARRIER_H
#define _RDS_ZC_OP_BARRIER_H

#include <linux/poll.h>
#include <linux/types.h>

struct rds_rdma_op;
struct in6_addr;
struct rds_sock;

void rds_op_sock_init(struct rds_sock *rs);
void rds_op_track(struct rds_sock *rs, struct rds_rdma_op *op,
		  const struct in6_addr *daddr, __be16 dport);
void rds_op_untrack(struct rds_rdma_op *op, bool readers_woken);
int rds_op_barrier(struct rds_sock *rs, bool nonblock, char __user *optval,
		   int __user *optlen);
__poll_t rds_op_poll(struct rds_sock *rs);

#endif /* _RDS_ZC_OP_BARRIER_H */
