/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The send side of a socket: sendmsg().
 */
#ifndef _RDS_ZC_SEND_H
#define _RDS_ZC_SEND_H

#include <linux/types.h>

struct msghdr;
struct rds_msg;
struct rds_sock;
struct socket;

int rds_sendmsg(struct socket *sock, struct msghdr *msg, size_t len);
void rds_send_uncharge(struct rds_msg *m);
bool rds_send_sock_dead(const struct rds_sock *rs);

#endif /* _RDS_ZC_SEND_H */
