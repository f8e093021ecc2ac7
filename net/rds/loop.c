// SPDX-License-Identifier: GPL-2.0
/*
 * Local delivery between sockets of one host.
 *
 * The sender's message is shared with the receiver: the payload is
 * copied once from the sender and once to the receiver.  A small one is
 * copied once more, into an inline message (RDS_MSG_INLINE_MAX), so
 * that the receiver's queue does not keep a page for it.  Delivery happens
 * in the sender's context, so messages from one sender arrive in the
 * order they were sent, and a send returns only once its message is
 * queued on the receiver (or dropped because no socket is bound there).
 */
#include <linux/errno.h>
#include <linux/gfp.h>
#include <linux/netdevice.h>
#include <net/addrconf.h>
#include <net/route.h>
#include <uapi/linux/rds.h>

#include "addr.h"
#include "loop.h"
#include "message.h"
#include "stats.h"
#include "transport.h"

const struct rds_transport rds_loop_transport = {
	.name	= "loopback",
	.type	= RDS_TRANS_LOOP,
};

/**
 * rds_loop_xmit() - deliver a message to a socket of this host
 * @net: the sender's namespace
 * @m: the message; the receiver takes its own reference
 * @saddr: sender's bound address
 * @sport: sender's bound port
 * @daddr: destination, a local address
 * @dport: destination port
 * @scope: the scope of the addresses
 *
 * Context: process context.
 * Return: 0 (also when nobody is bound at the destination), or -ENOMEM.
 */
int rds_loop_xmit(struct net *net, struct rds_msg *m,
		  const struct in6_addr *saddr, __be16 sport,
		  const struct in6_addr *daddr, __be16 dport, u32 scope)
{
	struct rds_msg *copy = NULL;
	struct rds_incoming *inc;

	if (m->len <= RDS_MSG_INLINE_MAX && !m->data && !m->op && !m->reg_mr) {
		copy = rds_msg_copy_inline(m, GFP_KERNEL | __GFP_ACCOUNT);
		if (!copy)
			return -ENOMEM;
	}
	inc = rds_inc_alloc(copy ?: m, GFP_KERNEL);
	rds_msg_put(copy);	/* the incoming holds its own reference */
	if (!inc)
		return -ENOMEM;
	inc->saddr = *saddr;
	inc->sport = sport;
	inc->daddr = *daddr;
	inc->dport = dport;
	inc->scope = scope;
	rds_stat_inc(RDS_STAT_SEND_LOCAL);
	rds_zc_deliver(net, inc, false, NULL);
	return 0;
}
