// SPDX-License-Identifier: GPL-2.0
/*
 * The registry of transports.
 *
 * rds_transport_lock protects rds_transports and the transports' list
 * items.  The list is kept in the order of their types, so that a bind()
 * without SO_RDS_TRANSPORT prefers IB to TCP whatever order the modules
 * were loaded in, as the distribution's RDS does.  Users of a transport
 * pin its module with try_module_get(); unregistering therefore never
 * races with a bound socket.
 */
#include <linux/errno.h>
#include <linux/module.h>
#include <linux/rwsem.h>

#include "addr.h"
#include "connection.h"
#include "transport.h"
#include "transport_core.h"

static LIST_HEAD(rds_transports);
static DECLARE_RWSEM(rds_transport_lock);

/**
 * rds_zc_transport_register() - make a transport available to sockets
 * @t: the transport, filled in; it must stay valid until unregistered
 *
 * Return: 0, or -EEXIST if a transport of the same type is registered.
 */
int rds_zc_transport_register(struct rds_transport *t)
{
	struct list_head *pos = &rds_transports;
	struct rds_transport *cur;
	int ret = 0;

	down_write(&rds_transport_lock);
	list_for_each_entry(cur, &rds_transports, item) {
		if (cur->type == t->type) {
			ret = -EEXIST;
			goto out;
		}
		if (cur->type > t->type && pos == &rds_transports)
			pos = &cur->item;
	}
	list_add_tail(&t->item, pos);
	pr_info("rds_zc: transport %s registered\n", t->name);
out:
	up_write(&rds_transport_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(rds_zc_transport_register);

/**
 * rds_zc_transport_unregister() - withdraw a transport
 * @t: a registered transport
 *
 * Its connections are destroyed, dropping what they still queue.
 *
 * Context: from the transport's module exit, after it stopped accepting
 * connections; no socket uses it any more, since each holds a reference
 * on the module.
 */
void rds_zc_transport_unregister(struct rds_transport *t)
{
	down_write(&rds_transport_lock);
	list_del_init(&t->item);
	up_write(&rds_transport_lock);
	rds_conn_destroy_all(t);
	pr_info("rds_zc: transport %s unregistered\n", t->name);
}
EXPORT_SYMBOL_GPL(rds_zc_transport_unregister);

/**
 * rds_transport_get() - find a registered transport by type
 * @type: RDS_TRANS_IB, ...
 *
 * Return: the transport with its module pinned, or NULL.
 */
const struct rds_transport *rds_transport_get(unsigned int type)
{
	struct rds_transport *t, *found = NULL;

	down_read(&rds_transport_lock);
	list_for_each_entry(t, &rds_transports, item) {
		if (t->type == type && try_module_get(t->owner)) {
			found = t;
			break;
		}
	}
	up_read(&rds_transport_lock);
	return found;
}

/**
 * rds_transport_for_addr() - the transport that claims a local address
 * @net: namespace of the socket
 * @addr: the address being bound
 * @scope: its scope (addr.h)
 *
 * A loopback address (127/8, ::1) always gets local delivery, as with the
 * distribution's RDS, even where a transport (TCP) would take it.
 *
 * Return: the first registered transport whose laddr_check() accepts
 * @addr, with its module pinned; NULL if none does; ERR_PTR(-ENOMEM) if
 * one could not tell for want of memory and none accepted it.
 */
const struct rds_transport *rds_transport_for_addr(struct net *net,
						   const struct in6_addr *addr,
						   u32 scope)
{
	struct rds_transport *t, *found = NULL;
	int ret;

	if (rds_addr_is_v4(addr) ? ipv4_is_loopback(rds_addr_v4(addr)) :
				   ipv6_addr_loopback(addr))
		return NULL;
	down_read(&rds_transport_lock);
	list_for_each_entry(t, &rds_transports, item) {
		if (!t->laddr_check)
			continue;
		ret = t->laddr_check(net, addr, scope);
		if (ret == -ENOMEM)
			found = ERR_PTR(-ENOMEM);
		if (ret)
			continue;
		if (try_module_get(t->owner)) {
			found = t;
			break;
		}
	}
	up_read(&rds_transport_lock);
	return found;
}

/**
 * rds_transport_put() - release a transport from rds_transport_get()
 * @t: the transport, may be NULL or the core's own loopback transport
 *     (which has no module to release)
 */
void rds_transport_put(const struct rds_transport *t)
{
	if (t)
		module_put(t->owner);
}

/**
 * rds_transport_stats_walk() - visit the counters of every transport
 * @fn: called with each counter's name and value, under the registry lock
 *	(it must not sleep on the registry)
 * @arg: passed to @fn
 */
void rds_transport_stats_walk(void (*fn)(const char *name, u64 value,
					 void *arg),
			      void *arg)
{
	const struct rds_transport *t;
	unsigned int i;

	down_read(&rds_transport_lock);
	list_for_each_entry(t, &rds_transports, item) {
		if (!t->stats)
			continue;
		for (i = 0; i < t->stats->nr; i++)
			fn(t->stats->name(i), t->stats->read(i), arg);
	}
	up_read(&rds_transport_lock);
}
