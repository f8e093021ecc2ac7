/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The receive side of a socket: its queue, its congestion state, and
 * recvmsg().
 */
#ifndef _RDS_ZC_RECV_H
#define _RDS_ZC_RECV_H

#include <linux/types.h>

struct msghdr;
struct rds_sock;
struct socket;

int rds_recvmsg(struct socket *sock, struct msghdr *msg, size_t size,
		int flags);
bool rds_recv_readable(struct rds_sock *rs);
size_t rds_recv_purge(struct rds_sock *rs);

#endif /* _RDS_ZC_RECV_H */
