// SPDX-License-Identifier: GPL-2.0
/*
 * The bind table.
 *
 * rds_bind_lock serialises insertions and removals and the search for a
 * free port; lookups walk the buckets under RCU.  A socket in the table
 * has SOCK_RCU_FREE set, so its memory outlives any walker.
 *
 * A connection's receive path keeps the socket it last delivered to in a
 * struct rds_sock_cache, without a reference, so that the next message
 * for it takes no hash lookup.  rds_bind_gen validates it: it moves,
 * under rds_bind_lock, every time a socket leaves the table, which is
 * before its last reference can go and its memory be freed after a grace
 * period.  A reader under RCU that still sees the generation of its cache
 * holds a socket that is in the table, or whose memory lives until
 * rcu_read_unlock(), and takes a reference as a walker does.  A socket
 * entering the table cannot take a cached (address, port) from another,
 * so insertions need not move it.
 */
#include <linux/errno.h>
#include <linux/hash.h>
#include <linux/random.h>
#include <net/netns/hash.h>
#include <linux/rculist.h>
#include <linux/spinlock.h>
#include <net/net_namespace.h>
#include <net/sock.h>

#include "addr.h"
#include "bind.h"
#include "sock.h"

#define RDS_BIND_HASH_BITS	10

/* RDS reserves port 1 for its multipath probe handshake. */
#define RDS_PROBE_PORT		1
/* Ports picked for bind(port 0) come from this range. */
#define RDS_EPHEMERAL_LOW	1024
#define RDS_EPHEMERAL_COUNT	(65536 - RDS_EPHEMERAL_LOW)

static struct hlist_head rds_bind_hash[1 << RDS_BIND_HASH_BITS];
static DEFINE_SPINLOCK(rds_bind_lock);	/* writers of rds_bind_hash */
static unsigned long rds_bind_gen;	/* written under rds_bind_lock */

static struct hlist_head *rds_bind_bucket(const struct net *net,
					  const struct in6_addr *addr,
					  __be16 port)
{
	u32 h = rds_addr_hash(addr, net_hash_mix(net) ^ (__force u32)port);

	return &rds_bind_hash[hash_32(h, RDS_BIND_HASH_BITS)];
}

static bool rds_bind_match(const struct rds_sock *rs, const struct net *net,
			   const struct in6_addr *addr, __be16 port, u32 scope)
{
	return ipv6_addr_equal(&rs->bound_addr, addr) &&
	       rs->bound_port == port && rs->bound_scope == scope &&
	       net_eq(sock_net(&rs->sk), net);
}

/* Caller holds rds_bind_lock. */
static bool rds_bind_taken(const struct net *net, const struct in6_addr *addr,
			   __be16 port, u32 scope)
{
	struct rds_sock *rs;

	hlist_for_each_entry(rs, rds_bind_bucket(net, addr, port), bind_node)
		if (rds_bind_match(rs, net, addr, port, scope))
			return true;
	return false;
}

/* Caller holds rds_bind_lock and checked that the pair is free. */
static void rds_bind_add(struct rds_sock *rs, const struct in6_addr *addr,
			 __be16 port, u32 scope)
{
	rs->bound_addr = *addr;
	rs->bound_scope = scope;
	/* Last: lock-free readers see the rest once they see the port. */
	smp_store_release(&rs->bound_port, port);
	hlist_add_head_rcu(&rs->bind_node,
			   rds_bind_bucket(sock_net(&rs->sk), addr, port));
}

/**
 * rds_bind_insert() - claim a local (address, port) for a socket
 * @rs: an unbound socket
 * @addr: local address
 * @scope: its scope (addr.h)
 * @port: in: the port, or 0 to pick a free one; out: the port bound
 *
 * Context: caller holds lock_sock(); the socket has SOCK_RCU_FREE set.
 * Return: 0, -EINVAL for the reserved port, -EADDRINUSE if taken (or, for
 * port 0, if every ephemeral port is).
 */
int rds_bind_insert(struct rds_sock *rs, const struct in6_addr *addr,
		    u32 scope, __be16 *port)
{
	const struct net *net = sock_net(&rs->sk);
	int ret = -EADDRINUSE;
	u32 start, i;

	if (*port && be16_to_cpu(*port) == RDS_PROBE_PORT)
		return -EINVAL;

	spin_lock_bh(&rds_bind_lock);
	if (*port) {
		if (!rds_bind_taken(net, addr, *port, scope)) {
			rds_bind_add(rs, addr, *port, scope);
			ret = 0;
		}
		goto out;
	}

	start = get_random_u32() % RDS_EPHEMERAL_COUNT;
	for (i = 0; i < RDS_EPHEMERAL_COUNT; i++) {
		u32 p = RDS_EPHEMERAL_LOW + (start + i) % RDS_EPHEMERAL_COUNT;

		if (rds_bind_taken(net, addr, cpu_to_be16(p), scope))
			continue;
		*port = cpu_to_be16(p);
		rds_bind_add(rs, addr, *port, scope);
		ret = 0;
		break;
	}
out:
	spin_unlock_bh(&rds_bind_lock);
	return ret;
}

/**
 * rds_bind_remove() - take a socket out of the table, if it is in it
 * @rs: the socket
 *
 * Walkers that found it before may still hold a reference; they see
 * rs->dead once release() has set it.
 */
void rds_bind_remove(struct rds_sock *rs)
{
	spin_lock_bh(&rds_bind_lock);
	if (!hlist_unhashed(&rs->bind_node)) {
		hlist_del_init_rcu(&rs->bind_node);
		/* Pairs with the acquire of rds_bind_lookup(). */
		smp_store_release(&rds_bind_gen, rds_bind_gen + 1);
	}
	spin_unlock_bh(&rds_bind_lock);
}

/**
 * rds_bind_lookup() - the socket bound to a local (address, port)
 * @net: namespace
 * @addr: local address
 * @port: port
 * @scope: the scope of the exchange; only a link-local address was bound
 *	with one (rds_addr_scope())
 * @cache: the socket found last time, updated; NULL for none.  Its
 *	owner serialises its users.
 *
 * Context: any.
 * Return: the socket with a reference (sock_put() it), or NULL.
 */
struct rds_sock *rds_bind_lookup(const struct net *net,
				 const struct in6_addr *addr, __be16 port,
				 u32 scope, struct rds_sock_cache *cache)
{
	struct rds_sock *rs, *found = NULL;
	unsigned long gen;

	scope = rds_addr_scope(addr, scope);
	rcu_read_lock();
	gen = smp_load_acquire(&rds_bind_gen);	/* pairs with remove */
	rs = cache ? cache->rs : NULL;
	if (rs && cache->gen == gen &&
	    rds_bind_match(rs, net, addr, port, scope) &&
	    refcount_inc_not_zero(&rs->sk.sk_refcnt)) {
		rcu_read_unlock();
		return rs;
	}
	hlist_for_each_entry_rcu(rs, rds_bind_bucket(net, addr, port),
				 bind_node) {
		if (rds_bind_match(rs, net, addr, port, scope) &&
		    refcount_inc_not_zero(&rs->sk.sk_refcnt)) {
			found = rs;
			break;
		}
	}
	rcu_read_unlock();
	if (found && cache) {
		cache->rs = found;
		cache->gen = gen;
	}
	return found;
}
