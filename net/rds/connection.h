/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Connections: the reliable, ordered channel between one local and one
 * remote address, for one type of service.
 *
 * A struct rds_conn exists for each (net, laddr, faddr, tos, dev_if) that has
 * been used, from its first use until its transport is unregistered, so
 * that sequence numbers survive reconnects; or until it is reaped:
 *  - one that stayed down for net.rds.conn_reap_ms with nothing to send,
 *    nothing waiting for an ACK and nothing ever received is freed, so
 *    that connections to hosts that never answer do not pile up;
 *  - one that nobody used (no message queued by a socket, none received)
 *    for net.rds.conn_idle_ms, with nothing to send and nothing waiting
 *    for an ACK, is freed whatever it received, so that a peer cannot
 *    keep a receive ring for every TOS value and address it ever named.
 *    One that is up and received something first sends the peer an ACK
 *    probe, which carries our ACK of everything received, and goes only
 *    once the peer acknowledged the probe and both stayed idle: the peer
 *    then holds none of our deliveries for retransmission, and a later
 *    message makes a new connection.  One that went down with the peer
 *    away is freed as it is: a peer that stays away longer than
 *    conn_idle_ms with messages we delivered and it did not see
 *    acknowledged would have them delivered again when it comes back
 *    (connection.c).
 * net.rds.conn_max and conn_max_per_peer bound how many exist; a request
 * for one more is refused (rds_zc_conn_get()).  It carries every message to
 * its peer exactly once and in order: a message takes the next sequence
 * number when it is queued, moves from send_queue to retrans when the
 * transport picks it, and is freed when the peer acknowledges it.  When
 * the transport connection breaks, what is on retrans is queued again in
 * front of send_queue, marked RETRANSMITTED, and the connection comes
 * back with a randomised, growing back-off as long as something waits to
 * be sent.  See Documentation/networking/rds_zc-ib-design.rst.
 *
 * States (numbered as RDS_INFO_CONNECTIONS reports them):
 *
 *   DOWN --connect or accept--> CONNECTING --connected--> UP
 *   CONNECTING, UP --drop--> ERROR --shutdown work--> DISCONNECTING --> DOWN
 *
 * Locking and context:
 *  - state is atomic; each transition is a cmpxchg from the state it
 *    leaves, so exactly one caller wins it.
 *  - lock (bottom halves off) protects send_queue, retrans, next_tx_seq,
 *    the unacked budgets and the count of pongs on those queues.  It is
 *    taken from process context and from the transport's completion
 *    handlers, and nests inside nothing.
 *  - work_mutex serialises the send path, connect and shutdown: it
 *    protects xmit_msg, xmit_frag and reconnect_delay, and guarantees
 *    that the transport's @xmit never runs during @conn_shutdown.
 *    RDS_INFO_CONNECTIONS peeks at xmit_msg without it (set or not), so
 *    it is written with WRITE_ONCE().
 *  - next_rx_seq is written only from the transport's receive path,
 *    which runs in one context at a time per connection, and peeked at
 *    by RDS_INFO_CONNECTIONS.
 *  - users counts the connection table's reference and those of callers
 *    of rds_zc_conn_get(), who hold theirs across what they do with it
 *    and give it back with rds_zc_conn_put().  The reaper frees a
 *    connection only by taking the table's reference when it is the
 *    last, under the table's lock; a lookup under RCU that finds users
 *    at 0 takes the lock and finds the connection gone.  Work items,
 *    transport callbacks and RCU walkers need no reference: the
 *    connection is destroyed as at unload (rds_conn_destroy()).
 *  - the table's lock nests outside lock.
 *
 * Paths (multipath, wire 10.6): a transport that declares mp_capable
 * (TCP) may carry the traffic of one address pair on RDS_CONN_PATHS
 * connections, each a full struct rds_conn with its own sequence
 * numbers, queues and back-off, told apart by path (0 ...
 * RDS_CONN_PATHS - 1) in the table's key.  rds_zc_conn_get() is path 0,
 * the base; paths 1 ... are made only when the handshake on the base
 * agrees on more than one (rds_conn_mp_reserve()), and leave the table
 * with their base, never alone: a path's base pointer needs no
 * reference.  What the pair agreed on lives in the base, under its
 * lock: npaths (0: not known yet, 1 or RDS_CONN_PATHS), whether the peer
 * names a connection's path in its source port (mp_peer_idx: in the
 * handshake of path 0's incarnation; mp_peer_named: ever), and the
 * handshake frames received and not yet handled (mp_*), which mp_w,
 * in process context, acts on.  Readers elsewhere use READ_ONCE().
 * A path > 0 connects only while path 0 is up and its handshake in this
 * incarnation agreed on the paths; a path that was up and drops takes
 * the pair's other paths down with it, so that a restarted peer finds
 * path 0 first (conn_state.c).
 */
#ifndef _RDS_ZC_CONNECTION_H
#define _RDS_ZC_CONNECTION_H

#include <linux/atomic.h>
#include <linux/in6.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct net;
struct rds_incoming;
struct rds_msg;
struct rds_sock;
struct rds_transport;
struct rds_cong_map;
struct rds_conn_peer;
struct rds6_info_connection;
struct rds6_info_rdma_connection;
struct rds6_info_tcp_socket;
struct rds6_info_message;

/* Paths of an address pair at most (the distribution's RDS_MPATH_WORKERS). */
#define RDS_CONN_PATHS		8

/* Header flags, as on the wire (rds_zc-wire.rst section 4.3). */
#define RDS_FLAG_CONG_BITMAP	0x01
#define RDS_FLAG_ACK_REQUIRED	0x02
#define RDS_FLAG_RETRANSMITTED	0x04

/* A congestion map on the wire: one bit per port, 8 KiB. */
#define RDS_CONG_MAP_BYTES	(65536 / 8)

enum rds_conn_state {
	RDS_CONN_DOWN		= 0,
	RDS_CONN_CONNECTING	= 1,
	RDS_CONN_DISCONNECTING	= 2,
	RDS_CONN_UP		= 3,
	RDS_CONN_ERROR		= 5,
};

/* Bits in rds_conn.flags. */
enum {
	RDS_CONN_RECONNECT_PENDING,	/* connect_w is queued */
	RDS_CONN_CONG_PENDING,		/* send our map before the next message */
	RDS_CONN_DEAD,			/* being destroyed: no more work */
	RDS_CONN_RACE_REFUSED,		/* this attempt refused the peer's */
	RDS_CONN_RACE_YIELD_NEXT,	/* the peer does not yield: we do */
	RDS_CONN_IDLE_PROBED,	/* idle: our ACK probe went out (reaper) */
	RDS_CONN_REAPING,	/* the reaper is taking it: take nothing in */
	RDS_CONN_UNHASHED,	/* out of the table (rds_conn_lock) */
};

/*
 * The socket a connection's receive path last delivered to, without a
 * reference: the socket layer fills and checks it (rds_bind_lookup()).
 * Used by the receive path only, one context at a time.
 */
struct rds_sock_cache {
	struct rds_sock	*rs;
	unsigned long	gen;
};

/*
 * A sender's last connection, without a reference: the generation of
 * the connection table it was found in tells whether it may have been
 * freed since (connection.c).  Its owner serialises its users.
 */
struct rds_conn_cache {
	struct rds_conn	*conn;
	unsigned long	gen;
};

struct rds_conn {
	/* Identity, constant; a transport may read these. */
	struct net	*net;
	struct in6_addr	laddr;		/* IPv4 ones IPv4-mapped (addr.h) */
	struct in6_addr	faddr;
	u8		tos;
	u32		dev_if;		/* interface of a link-local pair */
	bool		local_peer;	/* faddr is an address of this host */
	const struct rds_transport *trans;
	void		*tp;		/* the transport's private state */
	u8		path;		/* 0: the base (see the top) */
	/*
	 * Set by the transport's @conn_alloc: the connection never
	 * connects by itself, it waits for the peer to (a TCP path > 0
	 * of the higher address, wire 10.6 rule 7).
	 */
	bool		accept_only;
	struct rds_conn	*base;		/* path 0 of its pair; itself for 0 */

	/* The rest belongs to the core. */
	struct hlist_node hash_node;	/* in the connection hash */
	struct list_head all_item;	/* on the list of all connections */
	struct list_head dead_item;	/* unhashed, waiting to be destroyed */
	refcount_t	users;		/* see the top of this file */
	unsigned long	down_since;	/* jiffies when it last went DOWN */
	/*
	 * jiffies when a connect request for it came while it was UP (its
	 * peer is challenged, rds_conn_challenge()), 0 if none came since
	 * it went UP; READ_ONCE/WRITE_ONCE, no lock.
	 */
	unsigned long	challenged;
	/*
	 * The watchdog's sample of the send queue (rds_conn_tx_sample()):
	 * jiffies since when work has been posted with no send completion,
	 * 0 if none was seen; written by watchdog_w while UP, taken by
	 * shutdown_w.  READ_ONCE/WRITE_ONCE and xchg(), no lock.
	 */
	unsigned long	tx_stuck_since;
	/* jiffies of the last message queued by a socket or received */
	unsigned long	last_used;
	struct rds_conn_peer *peer;	/* its remote address's count */
	atomic_t	state;		/* enum rds_conn_state */
	unsigned long	flags;		/* RDS_CONN_* bits, atomic */

	spinlock_t	lock;		/* see the top of this file */
	struct list_head send_queue;	/* rds_msg not yet picked */
	struct list_head retrans;	/* picked, not acknowledged */
	u64		next_tx_seq;	/* starts at 1 */
	unsigned int	unacked_pkts;	/* budget before ACK_REQUIRED */
	size_t		unacked_bytes;
	unsigned int	pongs;		/* on send_queue and retrans */

	u64		next_rx_seq;	/* receive path only */
	struct rds_sock_cache rx_sock;	/* receive path only */

	struct mutex	work_mutex;	/* see the top of this file */
	struct rds_msg	*xmit_msg;	/* being posted, referenced */
	unsigned int	xmit_frag;	/* its next fragment */
	unsigned long	reconnect_delay;	/* jiffies; 0 after UP */

	struct delayed_work connect_w;
	struct delayed_work watchdog_w;	/* ACK progress while UP */
	/* asks an idle peer to ACK; retries a cong update without memory */
	struct delayed_work ack_probe_w;
	struct work_struct send_w;
	struct work_struct shutdown_w;

	struct rds_cong_map *lmap;	/* map of laddr, referenced */
	struct rds_cong_map *fmap;	/* map of faddr, referenced */

	/* The base's multipath state: see the top; under lock. */
	u8		npaths;		/* 0: not known, 1 or RDS_CONN_PATHS */
	bool		mp_peer_idx;	/* the peer sent SPORT_IDX, this time */
	bool		mp_peer_named;	/* it ever did: sticks */
	bool		mp_probe_rx;	/* a probe to answer */
	bool		mp_probe_idx;	/* it carried SPORT_IDX */
	bool		mp_pong_rx;	/* a pong to our probe to act on */
	u16		mp_rx_npaths;	/* NPATHS of the frame (0: none) */
	bool		mp_rx_idx;	/* SPORT_IDX in the frame */
	u8		mp_adv;		/* NPATHS of our last probe */
	struct work_struct mp_w;	/* acts on them (conn_recv.c) */

	/* Counters, for RDS_INFO and tracing; updated without locks. */
	atomic64_t	tx_msgs;
	atomic64_t	rx_msgs;
	atomic64_t	retransmits;
	atomic_t	drops;
};

static inline enum rds_conn_state rds_conn_state(const struct rds_conn *conn)
{
	return atomic_read(&conn->state);
}

/* For transports (exported by the core). */
struct rds_conn *rds_zc_conn_get(struct net *net, const struct in6_addr *laddr,
				 const struct in6_addr *faddr, u8 tos,
				 u32 dev_if, const struct rds_transport *trans);
void rds_zc_conn_put(struct rds_conn *conn);
struct rds_conn *rds_zc_conn_lookup_path(struct rds_conn *base, u8 path);
void rds_zc_conn_mp_probe(struct rds_conn *conn);
bool rds_conn_holds_sock(struct rds_conn *conn, const struct rds_sock *rs);
struct rds_conn *rds_zc_conn_lookup(struct net *net,
				    const struct in6_addr *laddr,
				    const struct in6_addr *faddr, u8 tos,
				    u32 dev_if);
unsigned long rds_conn_generation(void);
void rds_conn_cache_set(struct rds_conn_cache *cache, struct rds_conn *conn,
			unsigned long gen);
struct rds_conn *rds_conn_cache_get(const struct rds_conn_cache *cache,
				    const struct net *net,
				    const struct in6_addr *laddr,
				    const struct in6_addr *faddr, u8 tos,
				    u32 dev_if);
int rds_zc_conn_accept(struct rds_conn *conn);
void rds_zc_conn_refused(struct rds_conn *conn);
void rds_zc_conn_connected(struct rds_conn *conn);
void rds_zc_conn_drop(struct rds_conn *conn, const char *reason);
u64 rds_zc_conn_acked(struct rds_conn *conn, u64 seq);
int rds_zc_conn_recv(struct rds_conn *conn, struct rds_msg *m);
int rds_zc_conn_recv_last(struct rds_conn *conn, struct rds_msg *m);
void rds_zc_conn_cong_recv(struct rds_conn *conn, struct rds_msg *m);
void rds_zc_conn_kick(struct rds_conn *conn);
void rds_zc_conn_connect(struct rds_conn *conn);
void rds_zc_conn_poked(struct rds_conn *conn);
void rds_zc_conn_destroy_net(const struct rds_transport *trans,
			     const struct net *net);
void rds_zc_conn_drop_net(const struct rds_transport *trans,
			  const struct net *net, const char *reason);

/**
 * struct rds_conn_upcalls - what connections need of the socket layer
 * @deliver: queue a message that arrived on a connection for the socket
 *	bound to its destination, as rds_zc_deliver() (transport.h), with
 *	the connection's receive cache.
 * @uncharge: a message of a socket (@m->rs) leaves its connection for
 *	good: give its charge back to the sender's buffer, wake the
 *	sender, drop the socket reference and clear @m->rs.  Context: any.
 * @sock_dead: whether a socket is closed.  Context: any.
 *
 * The socket layer sits above the connections and hands these in at
 * rds_conn_init(), so that connections never call up by name.
 */
struct rds_conn_upcalls {
	int (*deliver)(struct net *net, struct rds_incoming *inc, bool bounded,
		       struct rds_sock_cache *cache);
	void (*uncharge)(struct rds_msg *m);
	bool (*sock_dead)(const struct rds_sock *rs);
};

/* For the core. */
int rds_conn_queue(struct rds_conn *conn, struct rds_msg *m);
void rds_conn_cong_changed(struct net *net, const struct in6_addr *laddr);
unsigned int rds_conn_cancel(const struct rds_sock *rs, struct net *net,
			     const struct in6_addr *laddr,
			     const struct in6_addr *daddr, __be16 dport,
			     bool any_dest);
void rds_conn_info_walk(struct net *net,
			void (*fn)(const struct rds6_info_connection *ci,
				   u8 tos, void *arg),
			void *arg);
void rds_conn_rdma_info_walk(struct net *net,
			     void (*fn)(const struct rds6_info_rdma_connection *ri,
					void *arg),
			     void *arg);
void rds_conn_tcp_info_walk(struct net *net,
			    void (*fn)(const struct rds6_info_tcp_socket *ti,
				       u8 tos, void *arg),
			    void *arg);
void rds_conn_msg_info_walk(struct net *net, bool retrans,
			    void (*fn)(const struct rds6_info_message *mi,
				       void *arg),
			    void *arg);
void rds_conn_destroy_all(const struct rds_transport *trans);
int rds_conn_init(const struct rds_conn_upcalls *up);
void rds_conn_exit(void);

#endif /* _RDS_ZC_CONNECTION_H */
