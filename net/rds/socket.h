/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The PF_RDS family: registration, and the option handlers its
 * proto_ops use.
 */
#ifndef _RDS_ZC_SOCKET_H
#define _RDS_ZC_SOCKET_H

#include <linux/sockptr.h>

struct socket;

struct rds_sock;

int rds_socket_init(void);
void rds_socket_exit(void);

void rds_sock_walk(void (*fn)(struct rds_sock *rs, void *arg), void *arg);

int rds_setsockopt(struct socket *sock, int level, int optname,
		   sockptr_t optval, unsigned int optlen);
int rds_getsockopt(struct socket *sock, int level, int optname,
		   char __user *optval, int __user *optlen);

#endif /* _RDS_ZC_SOCKET_H */
