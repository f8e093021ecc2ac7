// SPDX-License-Identifier: GPL-2.0
/*
 * Connections: the table of every connection, their creation and their
 * destruction.  The rules are in connection.h; the state machine is in
 * conn_state.c, the send side in conn_send.c, the receive side in
 * conn_recv.c and the RDS_INFO rows in conn_info.c.
 *
 * Locking: rds_conn_lock protects the connection hash and list for
 * writers, and the counts of connections (rds_conn_total and the table
 * of peers, rds_conn_peers, with each peer's count) for readers and
 * writers alike; readers walk the hash and list under RCU, and
 * rds_zc_conn_get() peeks at the counts under RCU before it allocates
 * anything (a peer is freed after a grace period).  Only making and
 * freeing a connection takes the lock: a lookup, the path of every
 * message, does not.  A connection is freed only by
 * rds_conn_destroy_all() or by the reaper, after a grace period, and
 * rds_conn_reap_mutex keeps the two apart, so that a transport is never
 * unregistered while the reaper still destroys one of its connections.
 *
 * The paths of a multipath pair (connection.h) are connections of the
 * table like any other, told apart by their path in the key; they are
 * made only for a base that is still in the table (RDS_CONN_UNHASHED,
 * set under rds_conn_lock when one leaves it, tells), and leave it with
 * their base only, in the same pass of rds_conn_remove(), which destroys
 * them first: a path's pointer to its base needs no reference.
 *
 * Senders keep the connection they last used in a struct rds_conn_cache,
 * without a reference, so that a datagram to the same destination takes
 * no hash lookup.  rds_conn_gen validates such a pointer: it moves,
 * under rds_conn_lock, every time connections leave the hash, before the
 * grace period after which they are freed.  A reader under RCU that
 * still sees the generation of its cache therefore holds a connection
 * whose memory lives until rcu_read_unlock(), and takes a reference as a
 * lookup does.
 */
#include <linux/errno.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include <net/netns/hash.h>

#include "addr.h"
#include "cong.h"
#include "conn_internal.h"
#include "connection.h"
#include "message.h"
#include "stats.h"
#include "sysctl.h"
#include "trace.h"
#include "transport.h"

#define RDS_CONN_HASH_BITS	8

static struct hlist_head rds_conn_hash[1 << RDS_CONN_HASH_BITS];
LIST_HEAD(rds_conn_list);
static DEFINE_SPINLOCK(rds_conn_lock);	/* writers of hash and list */
static unsigned long rds_conn_gen;	/* written under rds_conn_lock */

struct workqueue_struct *rds_conn_wq;
const struct rds_conn_upcalls *rds_conn_up;

/*
 * A remote address (in a namespace) and how many connections name it,
 * for net.rds.conn_max_per_peer.  Lives while it has one, under
 * rds_conn_lock; freed after a grace period.
 */
struct rds_conn_peer {
	struct hlist_node node;		/* in rds_conn_peers */
	const struct net *net;		/* compared only */
	struct in6_addr faddr;
	unsigned int	conns;
	struct rcu_head	rcu;
};

static struct hlist_head rds_conn_peers[1 << RDS_CONN_HASH_BITS];
static unsigned int rds_conn_total;	/* connections in the table */

static void rds_conn_reap_work(struct work_struct *work);
static DECLARE_DELAYED_WORK(rds_conn_reap_w, rds_conn_reap_work);
static DEFINE_MUTEX(rds_conn_reap_mutex);	/* reaper vs destroy_all */

static struct hlist_head *rds_conn_bucket(const struct net *net,
					  const struct in6_addr *laddr,
					  const struct in6_addr *faddr, u8 tos)
{
	u32 h = rds_addr_hash(faddr, rds_addr_hash(laddr, net_hash_mix(net)) ^
				     tos);

	return &rds_conn_hash[hash_32(h, RDS_CONN_HASH_BITS)];
}

/*
 * One address pair has a connection per transport, as in the
 * distribution: IB and TCP sockets of the same two addresses do not
 * share one.  @trans NULL: whatever the transport (a socket's cache,
 * filled through the socket's transport).  @path < 0: whatever the path
 * (the same cache: a socket stays on its path, send.c).
 */
static bool rds_conn_match(const struct rds_conn *conn, const struct net *net,
			   const struct in6_addr *laddr,
			   const struct in6_addr *faddr, u8 tos, u32 dev_if,
			   const struct rds_transport *trans, int path)
{
	return ipv6_addr_equal(&conn->faddr, faddr) &&
	       ipv6_addr_equal(&conn->laddr, laddr) &&
	       conn->tos == tos && conn->dev_if == dev_if &&
	       net_eq(conn->net, net) && (!trans || conn->trans == trans) &&
	       (path < 0 || conn->path == path);
}

/* Caller holds rcu_read_lock() or rds_conn_lock. */
static struct rds_conn *rds_conn_find(const struct net *net,
				      const struct in6_addr *laddr,
				      const struct in6_addr *faddr, u8 tos,
				      u32 dev_if,
				      const struct rds_transport *trans,
				      int path)
{
	struct rds_conn *conn;

	hlist_for_each_entry_rcu(conn, rds_conn_bucket(net, laddr, faddr, tos),
				 hash_node, lockdep_is_held(&rds_conn_lock)) {
		if (rds_conn_match(conn, net, laddr, faddr, tos, dev_if, trans,
				   path))
			return conn;
	}
	return NULL;
}

static struct hlist_head *rds_conn_peer_bucket(const struct net *net,
					       const struct in6_addr *faddr)
{
	return &rds_conn_peers[hash_32(rds_addr_hash(faddr, net_hash_mix(net)),
				       RDS_CONN_HASH_BITS)];
}

/* Caller holds rcu_read_lock() or rds_conn_lock. */
static struct rds_conn_peer *rds_conn_peer_find(const struct net *net,
						const struct in6_addr *faddr)
{
	struct rds_conn_peer *peer;

	hlist_for_each_entry_rcu(peer, rds_conn_peer_bucket(net, faddr), node,
				 lockdep_is_held(&rds_conn_lock)) {
		if (peer->net == net && ipv6_addr_equal(&peer->faddr, faddr))
			return peer;
	}
	return NULL;
}

/*
 * Whether one more connection to @faddr would pass net.rds.conn_max and
 * conn_max_per_peer, or @more: whether @more would.  Under RCU it is a
 * hint, taken before a connection is allocated; under rds_conn_lock the
 * answer.
 */
static bool rds_conn_over_limit(const struct net *net,
				const struct in6_addr *faddr, unsigned int more)
{
	const struct rds_conn_peer *peer = rds_conn_peer_find(net, faddr);

	return READ_ONCE(rds_conn_total) + more > rds_sysctl_conn_max() ||
	       (peer && READ_ONCE(peer->conns) + more >
			rds_sysctl_conn_max_per_peer());
}

/*
 * A refused connection: counted and logged.  Every one counts; the log
 * is rate limited, for a peer may ask for thousands.
 */
static struct rds_conn *rds_conn_refuse(const struct in6_addr *laddr,
					const struct in6_addr *faddr, u8 tos)
{
	rds_stat_inc(RDS_STAT_CONN_REFUSED_LIMIT);
	pr_info_ratelimited("rds_zc: refused a connection %pI6c to %pI6c, TOS %u: net.rds.conn_max (%u) or conn_max_per_peer (%u) reached\n",
			    laddr, faddr, tos, rds_sysctl_conn_max(),
			    rds_sysctl_conn_max_per_peer());
	return ERR_PTR(-ECONNREFUSED);
}

/*
 * Count @conn in the table: its peer's entry (@spare, allocated by the
 * caller, becomes it if there is none yet; *@spare is cleared then) and
 * the total.  Caller holds rds_conn_lock.  Return: false if a limit is
 * reached, and nothing was counted.
 */
static bool rds_conn_charge(struct rds_conn *conn,
			    struct rds_conn_peer **spare)
{
	struct rds_conn_peer *peer;

	lockdep_assert_held(&rds_conn_lock);
	if (rds_conn_over_limit(conn->net, &conn->faddr, 1))
		return false;
	peer = rds_conn_peer_find(conn->net, &conn->faddr);
	if (!peer) {
		peer = *spare;
		*spare = NULL;
		peer->net = conn->net;
		peer->faddr = conn->faddr;
		hlist_add_head_rcu(&peer->node,
				   rds_conn_peer_bucket(conn->net, &conn->faddr));
	}
	WRITE_ONCE(peer->conns, peer->conns + 1);
	WRITE_ONCE(rds_conn_total, rds_conn_total + 1);
	conn->peer = peer;
	return true;
}

/* @conn leaves the table.  Caller holds rds_conn_lock. */
static void rds_conn_uncharge(struct rds_conn *conn)
{
	struct rds_conn_peer *peer = conn->peer;

	lockdep_assert_held(&rds_conn_lock);
	WRITE_ONCE(rds_conn_total, rds_conn_total - 1);
	WRITE_ONCE(peer->conns, peer->conns - 1);
	if (!peer->conns) {
		hlist_del_rcu(&peer->node);
		kfree_rcu(peer, rcu);
	}
	conn->peer = NULL;
}

/* The connection of @trans (NULL: any) for an address pair, referenced. */
static struct rds_conn *rds_conn_lookup(struct net *net,
					const struct in6_addr *laddr,
					const struct in6_addr *faddr, u8 tos,
					u32 dev_if,
					const struct rds_transport *trans,
					int path)
{
	struct rds_conn *conn;

	rcu_read_lock();
	conn = rds_conn_find(net, laddr, faddr, tos, dev_if, trans, path);
	if (conn && !refcount_inc_not_zero(&conn->users))
		conn = NULL;	/* being reaped */
	rcu_read_unlock();
	return conn;
}

/*
 * rds_zc_conn_get() of path @path of @base (NULL: path 0, the base).  A
 * path > 0 is made for its base only (rds_conn_mp_reserve()), which the
 * caller holds.
 */
static struct rds_conn *rds_conn_get(struct net *net,
				     const struct in6_addr *laddr,
				     const struct in6_addr *faddr, u8 tos,
				     u32 dev_if,
				     const struct rds_transport *trans,
				     struct rds_conn *base, u8 path)
{
	struct rds_conn_peer *spare;
	struct rds_conn *conn, *new;
	bool over, gone = false;
	int ret = -ENOMEM;

	conn = rds_conn_lookup(net, laddr, faddr, tos, dev_if, trans, path);
	if (conn)
		return conn;	/* one being reaped is not found: a new one */
	if (!trans->xmit)
		return ERR_PTR(-ENETUNREACH);
	/* Before a ring of megabytes is allocated to be freed again. */
	rcu_read_lock();
	over = rds_conn_over_limit(net, faddr, 1);
	rcu_read_unlock();
	if (over)
		return rds_conn_refuse(laddr, faddr, tos);

	spare = kzalloc(sizeof(*spare), GFP_KERNEL_ACCOUNT);
	if (!spare)
		return ERR_PTR(-ENOMEM);
	new = kzalloc(sizeof(*new), GFP_KERNEL);
	if (!new) {
		kfree(spare);
		return ERR_PTR(-ENOMEM);
	}
	new->net = net;
	new->laddr = *laddr;
	new->faddr = *faddr;
	new->tos = tos;
	new->dev_if = dev_if;
	new->local_peer = rds_addr_is_local(net, faddr, dev_if);
	new->trans = trans;
	new->path = path;
	new->base = base ?: new;
	refcount_set(&new->users, 2);	/* the table's and the caller's */
	new->down_since = jiffies;
	new->last_used = jiffies;
	atomic_set(&new->state, RDS_CONN_DOWN);
	spin_lock_init(&new->lock);
	INIT_LIST_HEAD(&new->send_queue);
	INIT_LIST_HEAD(&new->retrans);
	new->next_tx_seq = 1;
	new->unacked_pkts = rds_sysctl_max_unacked_packets();
	new->unacked_bytes = rds_sysctl_max_unacked_bytes();
	mutex_init(&new->work_mutex);
	INIT_DELAYED_WORK(&new->connect_w, rds_conn_connect_work);
	INIT_DELAYED_WORK(&new->watchdog_w, rds_conn_watchdog_work);
	INIT_DELAYED_WORK(&new->ack_probe_w, rds_conn_ack_probe_work);
	INIT_WORK(&new->send_w, rds_conn_send_work);
	INIT_WORK(&new->shutdown_w, rds_conn_shutdown_work);
	INIT_WORK(&new->mp_w, rds_conn_mp_work);

	new->lmap = rds_cong_map_get(net, laddr);
	new->fmap = rds_cong_map_get(net, faddr);
	if (!new->lmap || !new->fmap)
		goto out_maps;
	ret = trans->conn_alloc(new, GFP_KERNEL);
	if (ret)
		goto out_maps;

	spin_lock_bh(&rds_conn_lock);
	conn = rds_conn_find(net, laddr, faddr, tos, dev_if, trans, path);
	if (conn) {
		refcount_inc(&conn->users);	/* hashed: at least 1 */
	} else if (base && test_bit(RDS_CONN_UNHASHED, &base->flags)) {
		gone = true;	/* a path never outlives its base */
	} else if (rds_conn_charge(new, &spare)) {
		hlist_add_head_rcu(&new->hash_node,
				   rds_conn_bucket(net, laddr, faddr, tos));
		list_add_tail_rcu(&new->all_item, &rds_conn_list);
		conn = new;
		new = NULL;
	}
	spin_unlock_bh(&rds_conn_lock);
	kfree(spare);	/* NULL if it became the peer's entry */
	spare = NULL;
	if (!new) {
		rds_stat_inc(RDS_STAT_CONN_CREATED);
		trace_rds_conn_state(conn, laddr, faddr, tos, -1,
				     RDS_CONN_DOWN, "created");
		return conn;
	}
	trans->conn_free(new);
	ret = gone ? -ENETRESET : 0;
out_maps:
	rds_cong_map_put(new->fmap);
	rds_cong_map_put(new->lmap);
	mutex_destroy(&new->work_mutex);
	kfree(new);
	kfree(spare);
	if (ret)
		return ERR_PTR(ret);
	return conn ?: rds_conn_refuse(laddr, faddr, tos);
}

/**
 * rds_zc_conn_get() - find or create the connection for an address pair
 * @net: namespace
 * @laddr: local address
 * @faddr: remote address
 * @tos: type of service
 * @dev_if: the interface of a link-local pair (addr.h), else 0
 * @trans: the transport that carries it
 *
 * A new connection is made only while there are fewer than
 * net.rds.conn_max in all and fewer than net.rds.conn_max_per_peer to
 * @faddr; else it is refused, counted (conn_refused_limit) and logged.
 *
 * Context: process context, may sleep.
 * Return: the connection with a reference the caller gives back with
 * rds_zc_conn_put(), or an ERR_PTR: -ECONNREFUSED at a limit, -ENOMEM,
 * or the transport's error.
 */
struct rds_conn *rds_zc_conn_get(struct net *net, const struct in6_addr *laddr,
				 const struct in6_addr *faddr, u8 tos,
				 u32 dev_if, const struct rds_transport *trans)
{
	return rds_conn_get(net, laddr, faddr, tos, dev_if, trans, NULL, 0);
}
EXPORT_SYMBOL_GPL(rds_zc_conn_get);

/**
 * rds_zc_conn_lookup_path() - a path of an address pair, if it exists
 * @base: path 0 of the pair, held by the caller
 * @path: the path wanted, below RDS_CONN_PATHS
 *
 * Paths beyond 0 are made by the multipath handshake only
 * (rds_conn_mp_reserve()), never by a lookup.
 *
 * Context: any.
 * Return: the connection with a reference, as rds_zc_conn_get() gives
 * it (@base itself, referenced again, for 0), or NULL.
 */
struct rds_conn *rds_zc_conn_lookup_path(struct rds_conn *base, u8 path)
{
	return rds_conn_lookup(base->net, &base->laddr, &base->faddr,
			       base->tos, base->dev_if, base->trans, path);
}
EXPORT_SYMBOL_GPL(rds_zc_conn_lookup_path);

/**
 * rds_conn_mp_each() - act on the other paths of a multipath pair
 * @conn: a path of the pair, held by the caller (or its own work)
 * @fn: called for each other path in the table, path 0 included; must
 *	not sleep
 * @arg: passed to @fn
 *
 * Under rcu_read_lock(), without references: a path found in the table
 * is destroyed only after a grace period, and its destruction then
 * cancels whatever work @fn queued on it (rds_conn_destroy()).  A
 * reference would not do that: the namespace's and the transport's
 * teardown destroy connections whoever holds them.
 *
 * Context: any.
 */
void rds_conn_mp_each(struct rds_conn *conn,
		      void (*fn)(struct rds_conn *p, void *arg), void *arg)
{
	struct rds_conn *p;
	u8 path;

	rcu_read_lock();
	for (path = 0; path < RDS_CONN_PATHS; path++) {
		if (path == conn->path)
			continue;
		p = rds_conn_find(conn->net, &conn->laddr, &conn->faddr,
				  conn->tos, conn->dev_if, conn->trans, path);
		if (p)
			fn(p, arg);
	}
	rcu_read_unlock();
}

/**
 * rds_conn_mp_reserve() - make paths 1 ... RDS_CONN_PATHS - 1 of a pair
 * @base: path 0, held by the caller
 *
 * All of them or none that counts: the peer may queue messages on any
 * path once both agreed on RDS_CONN_PATHS, so that many are advertised
 * only when every one exists within net.rds.conn_max and
 * conn_max_per_peer (wire 10.6).  Paths already made are kept; one
 * that cannot be made leaves those made so far to the reaper, which
 * frees them with @base.
 *
 * Context: process context, may sleep.
 * Return: true if every path exists.
 */
bool rds_conn_mp_reserve(struct rds_conn *base)
{
	unsigned int missing = 0;
	struct rds_conn *conn;
	bool over;
	u8 path;

	for (path = 1; path < RDS_CONN_PATHS; path++) {
		conn = rds_zc_conn_lookup_path(base, path);
		if (conn)
			rds_zc_conn_put(conn);
		else
			missing++;
	}
	if (!missing)
		return true;
	rcu_read_lock();
	over = rds_conn_over_limit(base->net, &base->faddr, missing);
	rcu_read_unlock();
	if (over) {
		rds_conn_refuse(&base->laddr, &base->faddr, base->tos);
		return false;
	}
	for (path = 1; path < RDS_CONN_PATHS; path++) {
		conn = rds_conn_get(base->net, &base->laddr, &base->faddr,
				    base->tos, base->dev_if, base->trans, base,
				    path);
		if (IS_ERR(conn))
			return false;
		rds_zc_conn_put(conn);
	}
	return true;
}

/**
 * rds_zc_conn_lookup() - find the connection for an address pair
 * @net: namespace
 * @laddr: local address
 * @faddr: remote address
 * @tos: type of service
 * @dev_if: the interface of a link-local pair (addr.h), else 0
 *
 * Of any transport (one address pair may have one per transport): the
 * caller checks conn->trans before it looks at conn->tp.
 *
 * Context: any.
 * Return: the connection with a reference the caller gives back with
 * rds_zc_conn_put(), or NULL if there is none.
 */
struct rds_conn *rds_zc_conn_lookup(struct net *net,
				    const struct in6_addr *laddr,
				    const struct in6_addr *faddr, u8 tos,
				    u32 dev_if)
{
	return rds_conn_lookup(net, laddr, faddr, tos, dev_if, NULL, 0);
}
EXPORT_SYMBOL_GPL(rds_zc_conn_lookup);

/**
 * rds_conn_generation() - what rds_conn_cache_set() is to record
 *
 * Read it before the lookup whose result is cached: a connection that
 * leaves the hash after this read moves it.
 *
 * Context: any.
 */
unsigned long rds_conn_generation(void)
{
	return smp_load_acquire(&rds_conn_gen);	/* pairs with remove */
}

/**
 * rds_conn_cache_set() - remember a connection for the next send
 * @cache: the sender's cache; the caller serialises its users
 * @conn: a connection the caller holds, found or made after @gen was read
 * @gen: rds_conn_generation() as read before @conn was looked up
 */
void rds_conn_cache_set(struct rds_conn_cache *cache, struct rds_conn *conn,
			unsigned long gen)
{
	cache->conn = conn;
	cache->gen = gen;
}

/**
 * rds_conn_cache_get() - the cached connection, if it is the one wanted
 * @cache: the sender's cache; the caller serialises its users
 * @net: namespace
 * @laddr: local address
 * @faddr: remote address
 * @tos: type of service
 * @dev_if: the interface of a link-local pair, else 0
 *
 * Context: any.
 * Return: the connection with a reference, as rds_zc_conn_get() gives
 * it, or NULL: nothing cached, another destination, or the connection
 * may have left the hash since (then look it up).
 */
struct rds_conn *rds_conn_cache_get(const struct rds_conn_cache *cache,
				    const struct net *net,
				    const struct in6_addr *laddr,
				    const struct in6_addr *faddr, u8 tos,
				    u32 dev_if)
{
	struct rds_conn *conn = cache->conn;

	if (!conn)
		return NULL;
	rcu_read_lock();
	if (cache->gen != rds_conn_generation() ||
	    !rds_conn_match(conn, net, laddr, faddr, tos, dev_if, NULL, -1) ||
	    !refcount_inc_not_zero(&conn->users))
		conn = NULL;
	rcu_read_unlock();
	return conn;
}

/**
 * rds_zc_conn_put() - give back the reference of rds_zc_conn_get()
 * @conn: the connection
 *
 * The table keeps its own: a connection is never freed here.
 * Context: any.
 */
void rds_zc_conn_put(struct rds_conn *conn)
{
	refcount_dec(&conn->users);
}
EXPORT_SYMBOL_GPL(rds_zc_conn_put);

static void rds_conn_cancel_works(struct rds_conn *conn)
{
	cancel_delayed_work_sync(&conn->connect_w);
	cancel_delayed_work_sync(&conn->watchdog_w);
	cancel_delayed_work_sync(&conn->ack_probe_w);
	cancel_work_sync(&conn->shutdown_w);
	cancel_work_sync(&conn->send_w);
	cancel_work_sync(&conn->mp_w);
}

/*
 * The rule that lets a connection be freed: nothing queues work on a
 * connection once RDS_CONN_DEAD is set, except a caller that tested the
 * bit just before it was set.  Those are of two kinds:
 *  - the connection's own work items, which queue one another (a drop
 *    queues shutdown_w, shutdown_w queues connect_w, the watchdog
 *    re-arms itself).  An instance that runs after DEAD is set returns
 *    at once; the first round of cancels waits out those that began
 *    before.
 *  - the transport's callbacks (ESTABLISHED calls
 *    rds_zc_conn_connected(), which arms send_w and watchdog_w;
 *    completions kick or drop).  They can run until @conn_shutdown
 *    returns, after the first round.
 * So every work item is cancelled again once the transport is shut
 * down: what either kind queued in between is gone, and nothing can
 * queue more.
 */
static void rds_conn_destroy(struct rds_conn *conn)
{
	LIST_HEAD(done);

	set_bit(RDS_CONN_DEAD, &conn->flags);
	smp_mb__after_atomic();	/* DEAD before any work item runs again */
	rds_conn_cancel_works(conn);

	mutex_lock(&conn->work_mutex);
	conn->trans->conn_shutdown(conn);
	if (conn->xmit_msg) {
		rds_msg_put(conn->xmit_msg);
		WRITE_ONCE(conn->xmit_msg, NULL);
	}
	mutex_unlock(&conn->work_mutex);
	/* No transport callback runs any more: cancel what it queued. */
	rds_conn_cancel_works(conn);

	spin_lock_bh(&conn->lock);
	list_splice_init(&conn->retrans, &done);
	list_splice_tail_init(&conn->send_queue, &done);
	spin_unlock_bh(&conn->lock);
	rds_conn_msgs_done(&done);

	trace_rds_conn_state(conn, &conn->laddr, &conn->faddr, conn->tos,
			     rds_conn_state(conn), -1, "destroyed");
	conn->trans->conn_free(conn);
	rds_cong_map_put(conn->fmap);
	rds_cong_map_put(conn->lmap);
	mutex_destroy(&conn->work_mutex);
	kfree(conn);
}

/*
 * Take the connections @pick chooses, under the table's lock, out of the
 * table, and destroy them after a grace period: RCU walkers may still be
 * on them until then.  Caller holds rds_conn_reap_mutex.
 * Return: how many.
 */
static unsigned int rds_conn_remove(bool (*pick)(struct rds_conn *conn,
						 const void *arg),
				    const void *arg)
{
	struct rds_conn *conn, *tmp;
	unsigned int n = 0;
	LIST_HEAD(dead);

	spin_lock_bh(&rds_conn_lock);
	list_for_each_entry(conn, &rds_conn_list, all_item) {
		if (!pick(conn, arg))
			continue;
		hlist_del_rcu(&conn->hash_node);
		set_bit(RDS_CONN_UNHASHED, &conn->flags);
		list_add_tail(&conn->dead_item, &dead);
		rds_conn_uncharge(conn);
	}
	list_for_each_entry(conn, &dead, dead_item)
		list_del_rcu(&conn->all_item);
	/* Cached pointers to them go stale before the grace period. */
	if (!list_empty(&dead)) {
		/* Pairs with the acquire of rds_conn_generation(). */
		smp_store_release(&rds_conn_gen, rds_conn_gen + 1);
	}
	spin_unlock_bh(&rds_conn_lock);
	if (list_empty(&dead))
		return 0;
	synchronize_rcu();
	/* A pair's paths before their base, which comes first on the list. */
	list_for_each_entry_safe_reverse(conn, tmp, &dead, dead_item) {
		rds_conn_destroy(conn);
		n++;
	}
	return n;
}

static bool rds_conn_of_transport(struct rds_conn *conn, const void *arg)
{
	return conn->trans == arg;
}

/**
 * rds_conn_destroy_all() - destroy every connection of a transport
 * @trans: the transport being unregistered
 *
 * Messages still queued are dropped.  Sequence numbers start again at 1
 * on connections made afterwards, as with the distribution's module.
 *
 * Context: process context, may sleep.
 */
void rds_conn_destroy_all(const struct rds_transport *trans)
{
	mutex_lock(&rds_conn_reap_mutex);
	rds_conn_remove(rds_conn_of_transport, trans);
	mutex_unlock(&rds_conn_reap_mutex);
}

struct rds_conn_net_arg {
	const struct rds_transport *trans;
	const struct net *net;
};

static bool rds_conn_of_net(struct rds_conn *conn, const void *arg)
{
	const struct rds_conn_net_arg *a = arg;

	return conn->trans == a->trans && net_eq(conn->net, a->net);
}

/**
 * rds_zc_conn_destroy_net() - destroy a transport's connections of a namespace
 * @trans: the transport
 * @net: the namespace, going away
 *
 * For a transport that lives in every namespace (TCP): its pernet exit
 * calls this once it stopped accepting connections there.  No socket of
 * @net is left (each holds a reference on it), so nothing makes new
 * connections there.  Messages still queued are dropped.
 *
 * Context: process context, may sleep.
 */
void rds_zc_conn_destroy_net(const struct rds_transport *trans,
			     const struct net *net)
{
	struct rds_conn_net_arg arg = { .trans = trans, .net = net };

	mutex_lock(&rds_conn_reap_mutex);
	rds_conn_remove(rds_conn_of_net, &arg);
	mutex_unlock(&rds_conn_reap_mutex);
}
EXPORT_SYMBOL_GPL(rds_zc_conn_destroy_net);

/**
 * rds_zc_conn_drop_net() - drop a transport's connections of a namespace
 * @trans: the transport
 * @net: the namespace
 * @reason: what the log says
 *
 * Each connection that is up or connecting goes down and reconnects as
 * after any drop (what it had sent and not got acknowledged is sent
 * again): for a transport whose settings apply to new connections only.
 *
 * Context: any.
 */
void rds_zc_conn_drop_net(const struct rds_transport *trans,
			  const struct net *net, const char *reason)
{
	struct rds_conn *conn;

	rcu_read_lock();
	list_for_each_entry_rcu(conn, &rds_conn_list, all_item) {
		if (conn->trans == trans && net_eq(conn->net, net))
			rds_zc_conn_drop(conn, reason);
	}
	rcu_read_unlock();
}
EXPORT_SYMBOL_GPL(rds_zc_conn_drop_net);

/* The reaper's idle times, in jiffies; 0: that kind is kept. */
struct rds_conn_reap_args {
	unsigned long down;	/* net.rds.conn_reap_ms */
	unsigned long idle;	/* net.rds.conn_idle_ms */
	unsigned int *idle_n;	/* out: how many were taken for idleness */
};

/* Nothing queued, nothing waiting for an ACK.  Caller holds no conn->lock. */
bool rds_conn_empty(struct rds_conn *conn)
{
	bool empty;

	spin_lock_bh(&conn->lock);
	empty = list_empty(&conn->send_queue) && list_empty(&conn->retrans);
	spin_unlock_bh(&conn->lock);
	return empty;
}

/* Neither used nor holding anything for @idle jiffies (connection.h). */
static bool rds_conn_idle(struct rds_conn *conn, unsigned long idle)
{
	int state = rds_conn_state(conn);

	return idle && (state == RDS_CONN_DOWN || state == RDS_CONN_UP) &&
	       !READ_ONCE(conn->xmit_msg) &&
	       !test_bit(RDS_CONN_RECONNECT_PENDING, &conn->flags) &&
	       time_after_eq(jiffies, READ_ONCE(conn->last_used) + idle);
}

/*
 * Whether the reaper may take @conn now (connection.h):
 *  - down for conn_reap_ms with nothing ever received; or
 *  - idle for conn_idle_ms, and if it is up and received anything, after
 *    its ACK probe (rds_conn_idle_probe()) was acknowledged.
 * Either way nothing queued, nothing waiting for an ACK, and nobody holds
 * it: then the table's reference is taken (users from 1 to 0), so that no
 * lookup can take one any more.  Caller holds rds_conn_lock.
 *
 * A message the transport hands up meanwhile (rds_zc_conn_recv()) marks
 * the connection used and then looks for RDS_CONN_REAPING; this sets
 * the bit and then looks at the mark again.  Either it sees the mark and
 * keeps the connection, or the receive path sees the bit and refuses
 * the message unacknowledged, for the peer to send again: a message is
 * never delivered on a connection that is then freed without its ACK.
 */
static bool rds_conn_reap_one(struct rds_conn *conn,
			      const struct rds_conn_reap_args *a, bool *idlep)
{
	bool down_unused = a->down && rds_conn_state(conn) == RDS_CONN_DOWN &&
			   !READ_ONCE(conn->next_rx_seq) &&
			   !READ_ONCE(conn->xmit_msg) &&
			   !test_bit(RDS_CONN_RECONNECT_PENDING, &conn->flags) &&
			   time_after_eq(jiffies,
					 READ_ONCE(conn->down_since) + a->down);
	bool idle = !down_unused && rds_conn_idle(conn, a->idle);

	if (!down_unused && !idle)
		return false;
	if (idle && rds_conn_state(conn) == RDS_CONN_UP &&
	    READ_ONCE(conn->next_rx_seq) &&
	    !test_bit(RDS_CONN_IDLE_PROBED, &conn->flags))
		return false;	/* its probe goes first */
	if (!rds_conn_empty(conn))
		return false;
	set_bit(RDS_CONN_REAPING, &conn->flags);
	smp_mb__after_atomic();	/* the bit, then the mark (see above) */
	if ((idle && !rds_conn_idle(conn, a->idle)) ||
	    !refcount_dec_if_one(&conn->users)) {
		clear_bit(RDS_CONN_REAPING, &conn->flags);
		return false;
	}
	*idlep = idle;
	return true;
}

/* Give back what rds_conn_reap_one() took.  Caller holds rds_conn_lock. */
static void rds_conn_reap_undo(struct rds_conn *conn)
{
	refcount_set(&conn->users, 1);
	clear_bit(RDS_CONN_REAPING, &conn->flags);
}

/*
 * The paths of a pair go with their base, all or none (connection.h):
 * the base is taken only if each of its paths may be, and a path only
 * with its base, which comes before it on the list.  Caller holds
 * rds_conn_lock.
 */
static bool rds_conn_reapable(struct rds_conn *conn, const void *arg)
{
	const struct rds_conn_reap_args *a = arg;
	struct rds_conn *taken[RDS_CONN_PATHS];
	unsigned int n = 0, idle_n = 0;
	struct rds_conn *p;
	bool idle;
	u8 path;

	lockdep_assert_held(&rds_conn_lock);
	if (conn->path)
		return test_bit(RDS_CONN_REAPING, &conn->base->flags);
	for (path = 1; conn->trans->mp_capable && path < RDS_CONN_PATHS;
	     path++) {
		p = rds_conn_find(conn->net, &conn->laddr, &conn->faddr,
				  conn->tos, conn->dev_if, conn->trans, path);
		if (!p)
			continue;
		if (!rds_conn_reap_one(p, a, &idle))
			goto undo;
		taken[n++] = p;
		idle_n += idle;
	}
	if (!rds_conn_reap_one(conn, a, &idle))
		goto undo;
	*a->idle_n += idle_n + idle;
	return true;
undo:
	while (n)
		rds_conn_reap_undo(taken[--n]);
	return false;
}

/*
 * Before an idle connection that is up and received something is
 * reaped: our ACK probe carries our ACK of everything received to the
 * peer, and its acknowledgment says the peer has it.  Caller holds
 * rds_conn_reap_mutex, so none of them is destroyed meanwhile.
 */
static void rds_conn_probe_idle(unsigned long idle)
{
	struct rds_conn *conn;

	rcu_read_lock();
	list_for_each_entry_rcu(conn, &rds_conn_list, all_item) {
		if (rds_conn_state(conn) != RDS_CONN_UP ||
		    !READ_ONCE(conn->next_rx_seq) ||
		    test_bit(RDS_CONN_IDLE_PROBED, &conn->flags) ||
		    !rds_conn_idle(conn, idle) || !rds_conn_empty(conn))
			continue;
		rds_conn_idle_probe(conn);
	}
	rcu_read_unlock();
}

/* The reaper: every half of the shorter idle time, between 100 ms and 10 s. */
static void rds_conn_reap_work(struct work_struct *work)
{
	unsigned int down_ms = rds_sysctl_conn_reap_ms();
	unsigned int idle_ms = rds_sysctl_conn_idle_ms();
	unsigned int ms = min_not_zero(down_ms, idle_ms);
	unsigned int n, idle_n = 0;
	struct rds_conn_reap_args a = {
		.down = msecs_to_jiffies(down_ms),
		.idle = msecs_to_jiffies(idle_ms),
		.idle_n = &idle_n,
	};

	if (ms) {
		mutex_lock(&rds_conn_reap_mutex);
		n = rds_conn_remove(rds_conn_reapable, &a);
		if (a.idle)
			rds_conn_probe_idle(a.idle);
		mutex_unlock(&rds_conn_reap_mutex);
		rds_stat_add(RDS_STAT_CONN_REAPED, n);
		rds_stat_add(RDS_STAT_CONN_REAPED_IDLE, idle_n);
	}
	queue_delayed_work(rds_conn_wq, &rds_conn_reap_w,
			   clamp(msecs_to_jiffies(ms / 2), HZ / 10, 10UL * HZ));
}

/**
 * rds_conn_init() - start the connection layer
 * @up: what it needs of the socket layer above it; lives until
 *	rds_conn_exit()
 *
 * Return: 0 or -ENOMEM.
 */
int rds_conn_init(const struct rds_conn_upcalls *up)
{
	rds_conn_up = up;
	rds_conn_wq = alloc_workqueue("rds_zc_conn", WQ_UNBOUND | WQ_MEM_RECLAIM,
				      0);
	if (!rds_conn_wq)
		return -ENOMEM;
	queue_delayed_work(rds_conn_wq, &rds_conn_reap_w, HZ);
	return 0;
}

/**
 * rds_conn_exit() - stop the connection layer; every transport is gone
 */
void rds_conn_exit(void)
{
	cancel_delayed_work_sync(&rds_conn_reap_w);
	WARN_ON(!list_empty(&rds_conn_list));
	destroy_workqueue(rds_conn_wq);
}
