/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The send side of a socket: sendmsg().
 */
#ifndef _RDS_ZC_SEND_H
#define _RDS_ZC_SEND_H

#include <linux/types.h>

struct msghdr;
struct socket;

int rds_sendmsg(struct socket *sock, struct msghdr *msg, size_t len);

#endif /* _RDS_ZC_SEND_H */
