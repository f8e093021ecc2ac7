// SPDX-License-Identifier: GPL-2.0
/*
 * Congestion maps and congestion monitors.
 *
 * Locking:
 *  - rds_cong_lock serialises insertions and removals in rds_cong_hash;
 *    lookups walk the hash under RCU and take a reference with
 *    refcount_inc_not_zero().  A map is freed after a grace period.
 *  - A map's bits are changed with atomic bit operations; its wait queue
 *    has its own lock.  Setting and clearing are called by the owning
 *    socket under that socket's receive lock, which orders them.
 *  - rds_cong_mon_lock protects the monitor list and every monitor's
 *    mask and notify fields.  It nests inside a socket's receive lock
 *    and never takes one.
 */
#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/hash.h>
#include <linux/mm.h>
#include <linux/jhash.h>
#include <net/netns/hash.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include <uapi/linux/rds.h>

#include "addr.h"
#include "cong.h"
#include "stats.h"
#include "trace.h"

#define RDS_CONG_PORTS		65536
#define RDS_CONG_HASH_BITS	8

struct rds_cong_map {
	struct hlist_node node;		/* in rds_cong_hash */
	refcount_t	refs;
	possible_net_t	net;
	struct in6_addr	addr;
	wait_queue_head_t waitq;	/* senders blocked on this map */
	struct rcu_head	rcu;		/* must stay in the first 4 KiB */
	unsigned long	bits[BITS_TO_LONGS(RDS_CONG_PORTS)];
};

static struct hlist_head rds_cong_hash[1 << RDS_CONG_HASH_BITS];
static DEFINE_SPINLOCK(rds_cong_lock);		/* writers of rds_cong_hash */

static LIST_HEAD(rds_cong_monitors);
static DEFINE_SPINLOCK(rds_cong_mon_lock);	/* list and monitor fields */

/* Bumped on every change of any map; poll() reports changes once. */
static atomic_t rds_cong_gen = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(rds_cong_poll_waitq);

static struct hlist_head *rds_cong_bucket(const struct net *net,
					  const struct in6_addr *addr)
{
	u32 h = rds_addr_hash(addr, net_hash_mix(net));

	return &rds_cong_hash[hash_32(h, RDS_CONG_HASH_BITS)];
}

/* Caller holds rcu_read_lock() or rds_cong_lock. */
static struct rds_cong_map *rds_cong_find(const struct net *net,
					  const struct in6_addr *addr)
{
	struct rds_cong_map *map;

	hlist_for_each_entry_rcu(map, rds_cong_bucket(net, addr), node,
				 lockdep_is_held(&rds_cong_lock)) {
		if (ipv6_addr_equal(&map->addr, addr) &&
		    net_eq(read_pnet(&map->net), net) &&
		    refcount_inc_not_zero(&map->refs))
			return map;
	}
	return NULL;
}

/**
 * rds_cong_map_get() - find or create the map of an address
 * @net: network namespace
 * @addr: the address
 *
 * Context: process context, may sleep.
 * Return: the map with a reference the caller must put, or NULL if no
 * memory.
 */
struct rds_cong_map *rds_cong_map_get(struct net *net,
				      const struct in6_addr *addr)
{
	struct rds_cong_map *map, *new;

	rcu_read_lock();
	map = rds_cong_find(net, addr);
	rcu_read_unlock();
	if (map)
		return map;

	new = kvzalloc(sizeof(*new), GFP_KERNEL);
	if (!new)
		return NULL;
	refcount_set(&new->refs, 1);
	write_pnet(&new->net, net);
	new->addr = *addr;
	init_waitqueue_head(&new->waitq);

	spin_lock_bh(&rds_cong_lock);
	map = rds_cong_find(net, addr);
	if (!map) {
		hlist_add_head_rcu(&new->node, rds_cong_bucket(net, addr));
		map = new;
		new = NULL;
	}
	spin_unlock_bh(&rds_cong_lock);
	kvfree(new);
	return map;
}

/**
 * rds_cong_map_put() - drop a reference on a map
 * @map: the map, may be NULL
 */
void rds_cong_map_put(struct rds_cong_map *map)
{
	if (!map || !refcount_dec_and_test(&map->refs))
		return;
	/* Lookups skip it from now on: their refcount_inc_not_zero() fails. */
	spin_lock_bh(&rds_cong_lock);
	hlist_del_rcu(&map->node);
	spin_unlock_bh(&rds_cong_lock);
	kvfree_rcu(map, rcu);
}

static void rds_cong_changed(void)
{
	atomic_inc(&rds_cong_gen);
	wake_up_interruptible_all(&rds_cong_poll_waitq);
}

/**
 * rds_cong_set_port() - mark a port congested
 * @map: the map of the port's address
 * @port: the port
 *
 * Context: the port's socket holds its receive lock.
 */
void rds_cong_set_port(struct rds_cong_map *map, __be16 port)
{
	if (test_and_set_bit(be16_to_cpu(port), map->bits))
		return;
	trace_rds_cong_port(&map->addr, port, true);
	rds_stat_inc(RDS_STAT_CONG_SET);
	rds_cong_changed();
}

static void rds_cong_notify_monitors(const struct net *net, u64 portmask)
{
	struct rds_cong_monitor *mon;

	spin_lock(&rds_cong_mon_lock);
	list_for_each_entry(mon, &rds_cong_monitors, item) {
		u64 hit = mon->mask & portmask;

		if (!hit || !net_eq(mon->net, net))
			continue;
		mon->notify |= hit;
		mon->mask &= ~hit;
		trace_rds_cong_notify(mon, hit);
		rds_stat_inc(RDS_STAT_CONG_NOTIFY);
		mon->wake(mon);
	}
	spin_unlock(&rds_cong_mon_lock);
}

/**
 * rds_cong_clear_port() - mark a port uncongested and wake its senders
 * @map: the map of the port's address
 * @port: the port
 *
 * Wakes senders sleeping on the map, poll() waiters, and monitors that
 * were refused on this port.
 *
 * Context: the port's socket holds its receive lock (bottom halves off).
 */
void rds_cong_clear_port(struct rds_cong_map *map, __be16 port)
{
	if (!test_and_clear_bit(be16_to_cpu(port), map->bits))
		return;
	trace_rds_cong_port(&map->addr, port, false);
	rds_stat_inc(RDS_STAT_CONG_CLEARED);
	wake_up_interruptible_all(&map->waitq);
	rds_cong_notify_monitors(read_pnet(&map->net),
				 RDS_CONG_MONITOR_MASK(be16_to_cpu(port)));
	rds_cong_changed();
}

/**
 * rds_cong_map_any() - whether a map marks any port congested
 * @map: the map
 *
 * Return: true if it does.  Context: any; a scan of 8 KiB.
 */
bool rds_cong_map_any(struct rds_cong_map *map)
{
	return !bitmap_empty(map->bits, RDS_CONG_PORTS);
}

/*
 * On the wire a map is 8 KiB in which port p is bit p % 8 of byte p / 8
 * (little-endian bit order, wire section 7.1), split over pages.
 */
#define RDS_CONG_PORTS_PER_PAGE	(PAGE_SIZE * 8)

/**
 * rds_cong_map_copy_le() - write a map in wire order
 * @map: the map of a local address
 * @pages: zeroed pages holding RDS_CONG_PORTS bits
 * @nr_pages: their number
 */
void rds_cong_map_copy_le(struct rds_cong_map *map, struct page **pages,
			  unsigned int nr_pages)
{
	unsigned int port;

	if (WARN_ON_ONCE(nr_pages * RDS_CONG_PORTS_PER_PAGE < RDS_CONG_PORTS))
		return;
	for_each_set_bit(port, map->bits, RDS_CONG_PORTS)
		__set_bit_le(port % RDS_CONG_PORTS_PER_PAGE,
			     page_address(pages[port / RDS_CONG_PORTS_PER_PAGE]));
}

/**
 * rds_cong_map_update_le() - replace a remote address's map by its update
 * @map: the map of the peer's address
 * @pages: the peer's map in wire order, RDS_CONG_PORTS bits
 * @nr_pages: their number
 *
 * Ports that became free wake the senders waiting for them, poll() and
 * the congestion monitors that were refused on them.
 *
 * Context: any; updates of one map are serialised by the caller.
 */
void rds_cong_map_update_le(struct rds_cong_map *map, struct page **pages,
			    unsigned int nr_pages)
{
	bool changed = false, freed = false;
	u64 portmask = 0;
	unsigned int port;

	if (WARN_ON_ONCE(nr_pages * RDS_CONG_PORTS_PER_PAGE < RDS_CONG_PORTS))
		return;
	for (port = 0; port < RDS_CONG_PORTS; port++) {
		const void *page = page_address(pages[port / RDS_CONG_PORTS_PER_PAGE]);
		bool now = test_bit_le(port % RDS_CONG_PORTS_PER_PAGE, page);

		if (now == test_bit(port, map->bits))
			continue;
		changed = true;
		if (now) {
			set_bit(port, map->bits);
		} else {
			clear_bit(port, map->bits);
			freed = true;
			portmask |= RDS_CONG_MONITOR_MASK(port);
		}
		trace_rds_cong_port(&map->addr, cpu_to_be16(port), now);
	}
	if (freed) {
		wake_up_interruptible_all(&map->waitq);
		rds_cong_notify_monitors(read_pnet(&map->net), portmask);
	}
	if (changed)
		rds_cong_changed();
}

/**
 * rds_cong_test() - is a port of a map congested?
 * @map: the map
 * @port: the port
 *
 * Return: its bit.  Context: any.
 */
bool rds_cong_test(struct rds_cong_map *map, __be16 port)
{
	return test_bit(be16_to_cpu(port), map->bits);
}

/**
 * rds_cong_map_wait() - wait until a port of a map can take a message
 * @map: the map of the destination address, referenced by the caller
 * @port: destination port
 * @nonblock: fail with -ENOBUFS instead of sleeping
 * @timeo: in: the sender's timeout; out: what is left of it
 * @mon: the sender's congestion monitor; a refused port is recorded in it
 *	 when monitoring is on
 *
 * A sender that holds the connection to the destination has its map
 * (rds_conn.fmap) and needs no lookup.
 *
 * Context: process context; sleeps unless @nonblock.
 * Return: 0 when the port is not congested, -ENOBUFS if @nonblock,
 * -ETIMEDOUT when @timeo ran out, -EINTR or -ERESTARTSYS on a signal.
 */
int rds_cong_map_wait(struct rds_cong_map *map, __be16 port, bool nonblock,
		      long *timeo, struct rds_cong_monitor *mon)
{
	long left;

	if (!rds_cong_test(map, port))
		return 0;

	if (nonblock) {
		spin_lock_bh(&rds_cong_mon_lock);
		if (mon->active)
			mon->mask |= RDS_CONG_MONITOR_MASK(be16_to_cpu(port));
		spin_unlock_bh(&rds_cong_mon_lock);
		/* The port may have cleared before the mask was recorded. */
		if (!rds_cong_test(map, port))
			return 0;
		rds_stat_inc(RDS_STAT_SEND_CONG_ENOBUFS);
		return -ENOBUFS;
	}

	rds_stat_inc(RDS_STAT_SEND_CONG_BLOCKED);
	left = wait_event_interruptible_timeout(map->waitq,
						!rds_cong_test(map, port),
						*timeo);
	if (left < 0)
		return sock_intr_errno(*timeo);
	if (!left)
		return -ETIMEDOUT;
	*timeo = left;
	return 0;
}

/**
 * rds_cong_wait() - wait until a destination port can take a message
 * @net: namespace of the sender
 * @addr: destination address
 * @port: destination port
 * @nonblock: fail with -ENOBUFS instead of sleeping
 * @timeo: in: the sender's timeout; out: what is left of it
 * @mon: the sender's congestion monitor; a refused port is recorded in it
 *	 when monitoring is on
 *
 * An address without a map has no congested port.
 *
 * Context: process context; sleeps unless @nonblock.
 * Return: as rds_cong_map_wait().
 */
int rds_cong_wait(struct net *net, const struct in6_addr *addr, __be16 port,
		  bool nonblock, long *timeo, struct rds_cong_monitor *mon)
{
	struct rds_cong_map *map;
	int ret;

	rcu_read_lock();
	map = rds_cong_find(net, addr);
	rcu_read_unlock();
	if (!map)
		return 0;
	ret = rds_cong_map_wait(map, port, nonblock, timeo, mon);
	rds_cong_map_put(map);
	return ret;
}

/**
 * rds_cong_monitor_init() - prepare a socket's monitor, inactive
 * @mon: the monitor
 * @net: the socket's namespace
 * @wake: called when ports the socket waits for become uncongested
 */
void rds_cong_monitor_init(struct rds_cong_monitor *mon, struct net *net,
			   void (*wake)(struct rds_cong_monitor *mon))
{
	INIT_LIST_HEAD(&mon->item);
	mon->net = net;
	mon->wake = wake;
}

/**
 * rds_cong_monitor_enable() - turn RDS_CONG_MONITOR on or off
 * @mon: the monitor
 * @on: the new state; turning it off forgets refused and pending ports
 */
void rds_cong_monitor_enable(struct rds_cong_monitor *mon, bool on)
{
	spin_lock_bh(&rds_cong_mon_lock);
	if (on && !mon->active)
		list_add_tail(&mon->item, &rds_cong_monitors);
	else if (!on && mon->active)
		list_del_init(&mon->item);
	if (!on) {
		mon->mask = 0;
		mon->notify = 0;
	}
	mon->active = on;
	spin_unlock_bh(&rds_cong_mon_lock);
}

/**
 * rds_cong_monitor_peek() - the pending notification
 * @mon: the monitor
 *
 * Return: the mask of ports reported uncongested and not yet
 * acknowledged with rds_cong_monitor_ack().
 */
u64 rds_cong_monitor_peek(struct rds_cong_monitor *mon)
{
	u64 notify;

	spin_lock_bh(&rds_cong_mon_lock);
	notify = mon->notify;
	spin_unlock_bh(&rds_cong_mon_lock);
	return notify;
}

/**
 * rds_cong_monitor_ack() - forget ports whose notification was delivered
 * @mon: the monitor
 * @mask: what rds_cong_monitor_peek() returned and the reader received
 */
void rds_cong_monitor_ack(struct rds_cong_monitor *mon, u64 mask)
{
	spin_lock_bh(&rds_cong_mon_lock);
	mon->notify &= ~mask;
	spin_unlock_bh(&rds_cong_mon_lock);
}

/**
 * rds_cong_generation() - a number that changes with every map change
 *
 * Return: the current generation.
 */
unsigned int rds_cong_generation(void)
{
	return atomic_read(&rds_cong_gen);
}

/**
 * rds_cong_poll_wait() - let poll() wake on any congestion change
 * @file: as given to poll()
 * @wait: as given to poll()
 */
void rds_cong_poll_wait(struct file *file, poll_table *wait)
{
	poll_wait(file, &rds_cong_poll_waitq, wait);
}

/**
 * rds_cong_exit() - check that every map was released, at module exit
 */
void rds_cong_exit(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rds_cong_hash); i++)
		WARN_ON(!hlist_empty(&rds_cong_hash[i]));
	rcu_barrier();	/* pending kvfree_rcu() of maps */
}
