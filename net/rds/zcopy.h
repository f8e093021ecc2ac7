/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Zero-copy sends (MSG_ZEROCOPY on a socket with SO_ZEROCOPY, zcopy.c).
 */
#ifndef _RDS_ZC_ZCOPY_H
#define _RDS_ZC_ZCOPY_H

#include <linux/list.h>
#include <linux/types.h>
#include <linux/uio.h>

#include "sock.h"

struct msghdr;
struct rds_msg;

void rds_zc_sock_init(struct rds_sock *rs);
struct rds_msg *rds_zc_msg_build(struct rds_sock *rs, struct iov_iter *from,
				 size_t len, u32 cookie);
void rds_zc_msg_abort(struct rds_msg *m);
int __rds_zc_recv_cmsg(struct rds_sock *rs, struct msghdr *msg);
void rds_zc_sock_release(struct rds_sock *rs);

/**
 * rds_zc_readable() - whether completions wait for a reader
 * @rs: the socket
 *
 * Context: any; a hint without zc_lock, as for a wait condition: the
 * list changes under the lock only, and list_empty_careful() reads each
 * of the head's links once (an acquire, a READ_ONCE()), so a list being
 * changed reads as not empty.  Who takes a batch is decided under the
 * lock; one queued just after the test is seen by the next read, or by
 * the wake-up that follows its queueing.
 */
static inline bool rds_zc_readable(struct rds_sock *rs)
{
	return !list_empty_careful(&rs->zc_queue);
}

/**
 * rds_zc_recv_cmsg() - hand the oldest batch of completions to a reader
 * @rs: the socket
 * @msg: the reader's message; nothing is taken without SO_ZEROCOPY or
 *	 without room for the whole struct rds_zcopy_cookies
 *
 * Most reads find no batch queued: one test inline, no call.
 *
 * Return: 1 if a batch was put, 0 if none, -EFAULT (the batch stays
 * queued).
 */
static inline int rds_zc_recv_cmsg(struct rds_sock *rs, struct msghdr *msg)
{
	if (likely(!rds_zc_readable(rs)))
		return 0;
	return __rds_zc_recv_cmsg(rs, msg);
}

#endif /* _RDS_ZC_ZCOPY_H */
