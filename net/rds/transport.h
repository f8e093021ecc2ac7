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

#include <linux/dma-direction.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/types.h>

struct in6_addr;
struct net;
struct rds_conn;
struct rds_incoming;
struct rds6_info_rdma_connection;
struct rds6_info_tcp_socket;
struct rds_mr;
struct rds_sock_cache;
struct rds_msg;

/*
 * The core's own transport for messages whose destination is an address
 * of this host.  Its type reads back from SO_RDS_TRANSPORT as 3, as it
 * does with the distribution's loopback transport.
 */
#define RDS_TRANS_LOOP		3

/*
 * Counters a transport appends to RDS_INFO_COUNTERS, after the core's:
 * @nr of them, @name(i) at most 31 characters, @read(i) summed over CPUs.
 */
struct rds_transport_stats {
	unsigned int	nr;
	const char	*(*name)(unsigned int i);
	u64		(*read)(unsigned int i);
};

struct rds_transport {
	const char	*name;		/* shown in RDS_INFO tables, < 16 chars */
	unsigned int	type;		/* RDS_TRANS_IB, ... */
	struct module	*owner;
	struct list_head item;		/* on the registry, under its lock */
	const struct rds_transport_stats *stats;	/* optional */
	/*
	 * Messages of a socket pinned to this transport whose destination
	 * is another address of this host take local delivery, not a
	 * connection (the distribution's t_prefer_loopback: TCP).
	 */
	bool		prefer_local;
	/*
	 * Carries an address pair on up to RDS_CONN_PATHS connections
	 * (connection.h, wire 10.6): the core then sends and reads the
	 * multipath handshake (NPATHS, SPORT_IDX) on path 0.  Only TCP.
	 */
	bool		mp_capable;

	/**
	 * @laddr_check: can this transport carry traffic from @addr
	 *	(addr.h; @scope: the interface of a link-local one)?
	 * Return 0 if so, a negative errno if not: -ENOMEM when it could
	 * not tell, any other when it cannot.  Process context.
	 */
	int (*laddr_check)(struct net *net, const struct in6_addr *addr,
			   u32 scope);

	/*
	 * Connections (optional: a transport without them, like local
	 * delivery, leaves these NULL).  See connection.h for the rules
	 * each one follows.
	 *
	 * @conn_alloc: set up @conn->tp for a new connection object, which
	 *	lives until the transport is unregistered.  Process context.
	 * @conn_free: release @conn->tp; the connection is down.
	 * @conn_connect: start connecting; the outcome is reported later
	 *	with rds_zc_conn_connected() or rds_zc_conn_drop().  A
	 *	negative return means it failed at once.  Process context.
	 * @conn_shutdown: tear the transport connection down.  When it
	 *	returns, no work request references a message any more and
	 *	no callback into the core for this incarnation is running or
	 *	will run.  Process context, may sleep.
	 * @xmit: send @m from fragment *@frag on, advancing *@frag.
	 *	Return 0 when all of it is posted, -EAGAIN when the send ring
	 *	is full (the transport calls rds_zc_conn_kick() when it has
	 *	room again), another negative errno to drop the connection.
	 *	Called from the connection's send path only, never
	 *	concurrently for one connection.
	 */
	int (*conn_alloc)(struct rds_conn *conn, gfp_t gfp);
	void (*conn_free)(struct rds_conn *conn);
	int (*conn_connect)(struct rds_conn *conn);
	void (*conn_shutdown)(struct rds_conn *conn);
	int (*xmit)(struct rds_conn *conn, struct rds_msg *m,
		    unsigned int *frag);

	/*
	 * Memory registration (optional: without it RDS_GET_MR and
	 * RDS_CMSG_RDMA_MAP fail with EOPNOTSUPP).  See rdma.h.
	 *
	 * @mr_reg: register the pinned pages of @mr (pages, nr_pages,
	 *	offset, len) for the peers of local address @laddr (of
	 *	@scope); set
	 *	mr->rkey and mr->tp.  Process context.
	 * @mr_dereg: invalidate and release mr->tp.  It may return before
	 *	the key is dead, and calls rds_zc_mr_invalidated(@mr), from
	 *	any context, once no peer reaches the pages; only then does
	 *	the core unpin them.  Process context.
	 *
	 * A transport with @mr_reg also carries RDMA operations: @xmit
	 * posts m->op before the message's SENDs and reports its end with
	 * rds_zc_conn_rdma_done().
	 */
	int (*mr_reg)(struct net *net, const struct in6_addr *laddr, u32 scope,
		      struct rds_mr *mr);
	void (*mr_dereg)(struct rds_mr *mr);
	/*
	 * @mr_dereg_nowait (optional): start @mr_dereg's work without
	 *	sleeping if nothing stands in the way, and return true; else
	 *	do nothing and return false.  Process or softirq context.
	 */
	bool (*mr_dereg_nowait)(struct rds_mr *mr);
	/*
	 * @mr_kill: make @mr's key unusable now, although @mr stays
	 *	referenced (a message on its way holds it): a registration
	 *	not posted yet is never posted, a registered one is
	 *	invalidated or deregistered.  @mr stays the transport's
	 *	(mr->tp) until @mr_dereg, at the last reference, as ever.
	 *	A registration in flight (posted on a connection's QP, not
	 *	completed) is waited for if @wait, interruptibly; else left
	 *	alone.  Required with @mr_reg.  Process context, may sleep.
	 *	Return: 0 once the key is dead, -EINTR (a signal ended the
	 *	wait) or -EINPROGRESS (!@wait): a registration in flight.
	 */
	int (*mr_kill)(struct rds_mr *mr, bool wait);
	/*
	 * @mr_prepare (optional): as @mr_reg, for RDS_CMSG_RDMA_MAP, but the
	 *	registration may be left to @xmit: it posts it on the
	 *	connection's QP before the first SEND of the message whose
	 *	reg_mr is @mr, so nothing waits for it.  Process context.
	 */
	int (*mr_prepare)(struct net *net, const struct in6_addr *laddr,
			  u32 scope, struct rds_mr *mr);
	/*
	 * @mr_sync (optional): make the device and the CPU agree on @mr's
	 *	pages where the protocol hands them over: DMA_TO_DEVICE when
	 *	a message names the key to a peer (RDS_CMSG_RDMA_DEST),
	 *	DMA_FROM_DEVICE when the ACK of a peer's operation on it
	 *	arrives.  Needed with bounce buffers (swiotlb) and devices
	 *	that are not cache-coherent.  Any context; the caller keeps
	 *	@mr registered.  Return: 0, or -ENODEV when the key died with
	 *	its device (removed).
	 */
	int (*mr_sync)(struct rds_mr *mr, enum dma_data_direction dir);
	/*
	 * @atomic_check (optional; without it atomics fail with
	 *	EOPNOTSUPP): can the device of local address @laddr run
	 *	remote atomics, the masked verbs if @masked?  Return 0, or
	 *	-EOPNOTSUPP.  Process context.  A transport with it posts an
	 *	atomic m->op as it posts an RDMA one.
	 */
	int (*atomic_check)(struct net *net, const struct in6_addr *laddr,
			    u32 scope, bool masked);

	/*
	 * @rdma_conn_info (optional): the transport's part of the
	 *	RDS_INFO_IB_CONNECTIONS row of @conn, which is up (GIDs, ring
	 *	and MR pool sizes); addresses and tos are set.  Called under
	 *	rcu_read_lock(): must not sleep.
	 */
	void (*rdma_conn_info)(struct rds_conn *conn,
			       struct rds6_info_rdma_connection *row);

	/*
	 * @tcp_conn_info (optional): the RDS6_INFO_TCP_SOCKETS row of
	 *	@conn, addresses included; return false if it has no TCP
	 *	socket now (no row).  Called under rcu_read_lock(): must not
	 *	sleep.
	 */
	bool (*tcp_conn_info)(struct rds_conn *conn,
			      struct rds6_info_tcp_socket *row);

	/*
	 * @conn_tx_state (optional): for the ACK watchdog's report, how
	 *	many work requests of @conn's current incarnation are posted
	 *	and not reported complete, and how long ago (jiffies) the
	 *	last send completion came.  Does not sleep.
	 */
	void (*conn_tx_state)(struct rds_conn *conn, unsigned int *posted,
			      unsigned long *idle);
};

int rds_zc_transport_register(struct rds_transport *t);
void rds_zc_transport_unregister(struct rds_transport *t);

/*
 * Hand a received message to the socket bound to its destination (@cache:
 * the one the connection delivered to last, or NULL).  With @bounded, a
 * socket whose queue is over its hard limit (rds_recv_over_limit())
 * refuses it: -EBUSY, and @inc is not consumed;
 * the caller holds its peer back and tries again later.  Otherwise 0,
 * and @inc is consumed (queued, or dropped for want of a socket).  Any
 * context.
 */
int rds_zc_deliver(struct net *net, struct rds_incoming *inc, bool bounded,
		   struct rds_sock_cache *cache);

/* Count a frame dropped for its header checksum (recv_drop_bad_checksum). */
void rds_zc_recv_bad_checksum(void);

#include "connection.h"
#include "rdma.h"

#endif /* _RDS_ZC_TRANSPORT_H */
