/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Zero-copy sends (MSG_ZEROCOPY on a socket with SO_ZEROCOPY, zcopy.c).
 */
#ifndef _RDS_ZC_ZCOPY_H
#define _RDS_ZC_ZCOPY_H

#include <linux/types.h>
#include <linux/uio.h>

struct msghdr;
struct rds_msg;
struct rds_sock;

void rds_zc_sock_init(struct rds_sock *rs);
struct rds_msg *rds_zc_msg_build(struct rds_sock *rs, struct iov_iter *from,
				 size_t len, u32 cookie);
void rds_zc_msg_abort(struct rds_msg *m);
int rds_zc_recv_cmsg(struct rds_sock *rs, struct msghdr *msg);
bool rds_zc_readable(struct rds_sock *rs);
void rds_zc_sock_release(struct rds_sock *rs);

#endif /* _RDS_ZC_ZCOPY_H */
