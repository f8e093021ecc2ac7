/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interface between the RDS core and its transports.
 *
 * A transport module (the IB transport) fills a struct rds_transport and
 * registers it.  The core asks it, at bind() time, whether it can carry
 * traffic from a local address; a socket bound through it holds a
 * reference on the transport's module.
 *
 * Nothing in this header reaches up into socket internals: a transport
 * sees messages, addresses and the delivery function below.
 */
#ifndef _RDS_ZC_TRANSPORT_H
#define _RDS_ZC_TRANSPORT_H

#include <linux/list.h>
#include <linux/module.h>
#include <linux/types.h>

struct net;
struct rds_incoming;

/*
 * The core's own transport for messages whose destination is an address
 * of this host.  Its type reads back from SO_RDS_TRANSPORT as 3, as it
 * does with the distribution's loopback transport.
 */
#define RDS_TRANS_LOOP		3

struct rds_transport {
	const char	*name;		/* shown in RDS_INFO tables, < 16 chars */
	unsigned int	type;		/* RDS_TRANS_IB, ... */
	struct module	*owner;
	struct list_head item;		/* on the registry, under its lock */

	/**
	 * @laddr_check: can this transport carry traffic from @addr?
	 * Return 0 if so, a negative errno if not.  Process context.
	 */
	int (*laddr_check)(struct net *net, __be32 addr);
};

int rds_zc_transport_register(struct rds_transport *t);
void rds_zc_transport_unregister(struct rds_transport *t);

/*
 * Hand a received message to the socket bound to its destination.  The
 * incoming is consumed whatever happens.  Any context.
 */
void rds_zc_deliver(struct net *net, struct rds_incoming *inc);

#endif /* _RDS_ZC_TRANSPORT_H */
