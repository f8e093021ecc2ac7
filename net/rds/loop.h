/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Local delivery: messages between sockets of the same host never touch a
 * transport; they are queued on the receiver directly, in order, and
 * cannot be lost once sent.
 */
#ifndef _RDS_ZC_LOOP_H
#define _RDS_ZC_LOOP_H

#include <linux/types.h>

struct net;
struct rds_msg;
struct rds_transport;

extern const struct rds_transport rds_loop_transport;

bool rds_loop_addr_is_local(struct net *net, __be32 addr);
int rds_loop_xmit(struct net *net, struct rds_msg *m, __be32 saddr,
		  __be16 sport, __be32 daddr, __be16 dport);

#endif /* _RDS_ZC_LOOP_H */
