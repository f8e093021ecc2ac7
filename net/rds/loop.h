/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Local delivery: messages between sockets of the same host never touch a
 * transport; they are queued on the receiver directly, in order, and
 * cannot be lost once sent.
 */
#ifndef _RDS_ZC_LOOP_H
#define _RDS_ZC_LOOP_H

#include <linux/types.h>

struct in6_addr;
struct net;
struct rds_msg;
struct rds_transport;

extern const struct rds_transport rds_loop_transport;

int rds_loop_xmit(struct net *net, struct rds_msg *m,
		  const struct in6_addr *saddr, __be16 sport,
		  const struct in6_addr *daddr, __be16 dport, u32 scope);

#endif /* _RDS_ZC_LOOP_H */
