// SPDX-License-Identifier: GPL-2.0
/*
 * RDMA devices: the ib_client that gives each device the per-device state
 * the transport needs (a protection domain, and the memory registration
 * QP and MR pool of ib_mr_pool.c), and the lookup from a local
 * IPv4 address to the device that owns it.
 *
 * Device removal ("rdma link del", hot unplug, module unload of the
 * driver): remove() unlists the device so that no new user finds it,
 * drops every connection that uses it, then waits for the users to let
 * go: a connection holds its device from QP setup to its teardown, which
 * the drop starts.  Connections with something to send come back on
 * their own once an address is reachable again.
 *
 * Address lookup: the first lookup of an address binds a throw-away
 * rdma_cm id to it, as rdma_cm itself finds devices; the answer is kept
 * in a small cache, so registrations on a hot path do not repeat it.  Any
 * IPv4 address change and any device removal empties the cache.  The
 * entry found last is tried before the hash (rds_ib_addr_last): a host
 * registers on one address, or a few, and every RDMA_MAP looks it up.
 *
 * Locking: rds_ib_devices_lock protects the device list; a device's
 * conns_lock its connection list and its removing flag;
 * rds_ib_addr_lock the address cache and rds_ib_addr_last, which
 * lookups read under RCU.
 */
#include <linux/errno.h>
#include <linux/hashtable.h>
#include <linux/in.h>
#include <linux/inetdevice.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <net/addrconf.h>
#include <net/net_namespace.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "addr.h"
#include "ib.h"
#include "transport.h"

static LIST_HEAD(rds_ib_devices);
static DEFINE_MUTEX(rds_ib_devices_lock);	/* rds_ib_devices */

static struct ib_client rds_ib_client;
/* What the layers above add to each device (rds_ib_device_init()). */
static const struct rds_ib_device_hooks *rds_ib_device_hooks;

/* Cached answers of rds_ib_device_by_addr(), at most RDS_IB_ADDR_MAX. */
struct rds_ib_addr {
	struct hlist_node node;		/* in rds_ib_addr_cache */
	struct in6_addr	addr;		/* addr.h */
	u32		scope;
	bool		flushed;	/* off the cache: under the lock */
	struct rds_ib_device *rdev;	/* not referenced: see the flush */
	struct rcu_head	rcu;
};

#define RDS_IB_ADDR_MAX		256
static DEFINE_HASHTABLE(rds_ib_addr_cache, 6);
static DEFINE_SPINLOCK(rds_ib_addr_lock);	/* the cache, its count, last */
static unsigned int rds_ib_addr_count;
/* The entry the last lookup found, on the cache, or NULL. */
static struct rds_ib_addr __rcu *rds_ib_addr_last;

/*
 * Forget every cached address.  A removed device is flushed before it
 * can be freed, and the grace period below makes sure no lookup still
 * reads an entry pointing at it.
 */
static void rds_ib_addr_flush(bool wait)
{
	struct rds_ib_addr *a;
	struct hlist_node *tmp;
	int bkt;

	spin_lock_bh(&rds_ib_addr_lock);
	RCU_INIT_POINTER(rds_ib_addr_last, NULL);
	hash_for_each_safe(rds_ib_addr_cache, bkt, tmp, a, node) {
		hash_del_rcu(&a->node);
		a->flushed = true;
		kfree_rcu(a, rcu);
	}
	rds_ib_addr_count = 0;
	spin_unlock_bh(&rds_ib_addr_lock);
	if (wait)
		synchronize_rcu();
}

static u32 rds_ib_addr_key(const struct in6_addr *addr, u32 scope)
{
	return rds_addr_hash(addr, scope);
}

static bool rds_ib_addr_is(const struct rds_ib_addr *a,
			   const struct in6_addr *addr, u32 scope)
{
	return ipv6_addr_equal(&a->addr, addr) && a->scope == scope;
}

/*
 * The hash's entry for @addr; the first found after a flush becomes the
 * last one, and stays until the next flush (no lock taken per lookup
 * when a host alternates between addresses).  Under RCU.
 */
static struct rds_ib_addr *rds_ib_addr_hashed(const struct in6_addr *addr,
					      u32 scope)
{
	struct rds_ib_addr *a;

	hash_for_each_possible_rcu(rds_ib_addr_cache, a, node,
				   rds_ib_addr_key(addr, scope)) {
		if (!rds_ib_addr_is(a, addr, scope))
			continue;
		if (rcu_access_pointer(rds_ib_addr_last))
			return a;
		/* Under the lock: a flushed entry is never made last. */
		spin_lock_bh(&rds_ib_addr_lock);
		if (!a->flushed && !rcu_access_pointer(rds_ib_addr_last))
			rcu_assign_pointer(rds_ib_addr_last, a);
		spin_unlock_bh(&rds_ib_addr_lock);
		return a;
	}
	return NULL;
}

static struct rds_ib_device *rds_ib_addr_lookup(const struct in6_addr *addr,
						u32 scope)
{
	struct rds_ib_device *rdev = NULL;
	struct rds_ib_addr *a;

	rcu_read_lock();
	a = rcu_dereference(rds_ib_addr_last);
	if (!a || !rds_ib_addr_is(a, addr, scope))
		a = rds_ib_addr_hashed(addr, scope);
	if (a && refcount_inc_not_zero(&a->rdev->refs))
		rdev = a->rdev;
	rcu_read_unlock();
	return rdev;
}

static void rds_ib_addr_insert(const struct in6_addr *addr, u32 scope,
			       struct rds_ib_device *rdev)
{
	struct rds_ib_addr *a = kmalloc(sizeof(*a), GFP_KERNEL);
	u32 key = rds_ib_addr_key(addr, scope);
	struct rds_ib_addr *old;

	if (!a)
		return;
	a->addr = *addr;
	a->scope = scope;
	a->flushed = false;
	a->rdev = rdev;
	spin_lock_bh(&rds_ib_addr_lock);
	hash_for_each_possible(rds_ib_addr_cache, old, node, key)
		if (ipv6_addr_equal(&old->addr, addr) && old->scope == scope)
			goto out_free;
	/* Still listed: a removal that unlisted it after us flushes after. */
	if (list_empty(&rdev->item) || rds_ib_addr_count >= RDS_IB_ADDR_MAX)
		goto out_free;
	hash_add_rcu(rds_ib_addr_cache, &a->node, key);
	if (!rcu_access_pointer(rds_ib_addr_last))
		rcu_assign_pointer(rds_ib_addr_last, a);
	rds_ib_addr_count++;
	spin_unlock_bh(&rds_ib_addr_lock);
	return;

out_free:
	spin_unlock_bh(&rds_ib_addr_lock);
	kfree(a);
}

static int rds_ib_inetaddr_event(struct notifier_block *nb,
				 unsigned long event, void *ptr)
{
	rds_ib_addr_flush(false);
	return NOTIFY_DONE;
}

static struct notifier_block rds_ib_inetaddr_nb = {
	.notifier_call = rds_ib_inetaddr_event,
};

static struct notifier_block rds_ib_inet6addr_nb = {
	.notifier_call = rds_ib_inetaddr_event,
};

/**
 * rds_ib_device_free() - free a device's memory once nothing points at it
 * @mem: its rds_ib_device.mem; the device was removed, and every memory
 *	 registration that outlived it has been released
 */
void rds_ib_device_free(struct kref *mem)
{
	kfree(container_of(mem, struct rds_ib_device, mem));
}

static int rds_ib_add_one(struct ib_device *ibdev)
{
	struct rds_ib_device *rdev;
	int ret;

	/* RDS needs an RC-capable IB or RoCE device with fast registration. */
	if (ibdev->node_type != RDMA_NODE_IB_CA)
		return -EOPNOTSUPP;
	if (!(ibdev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS))
		return -EOPNOTSUPP;

	rdev = kzalloc(sizeof(*rdev), GFP_KERNEL);
	if (!rdev)
		return -ENOMEM;
	rdev->ibdev = ibdev;
	refcount_set(&rdev->refs, 1);
	init_completion(&rdev->unused);
	kref_init(&rdev->mem);
	spin_lock_init(&rdev->conns_lock);
	INIT_LIST_HEAD(&rdev->conns);

	rdev->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(rdev->pd)) {
		ret = PTR_ERR(rdev->pd);
		goto out_free;
	}
	rds_ib_device_hooks->add(rdev);

	mutex_lock(&rds_ib_devices_lock);
	list_add_tail(&rdev->item, &rds_ib_devices);
	mutex_unlock(&rds_ib_devices_lock);
	ib_set_client_data(ibdev, &rds_ib_client, rdev);
	pr_info("rds_zc_ib: using RDMA device %s\n", dev_name(&ibdev->dev));
	return 0;

out_free:
	kfree(rdev);
	return ret;
}

static void rds_ib_remove_one(struct ib_device *ibdev, void *client_data)
{
	struct rds_ib_device *rdev = client_data;

	struct rds_ib_conn *ic;

	mutex_lock(&rds_ib_devices_lock);
	spin_lock_bh(&rds_ib_addr_lock);
	list_del_init(&rdev->item);
	spin_unlock_bh(&rds_ib_addr_lock);
	mutex_unlock(&rds_ib_devices_lock);
	rds_ib_addr_flush(true);

	spin_lock_bh(&rdev->conns_lock);
	rdev->removing = true;
	list_for_each_entry(ic, &rdev->conns, dev_item)
		rds_zc_conn_drop(ic->conn, "device removed");
	spin_unlock_bh(&rdev->conns_lock);

	rds_ib_device_put(rdev);
	wait_for_completion(&rdev->unused);

	rds_ib_device_hooks->remove(rdev);	/* registrations sockets hold die */
	ib_dealloc_pd(rdev->pd);
	pr_info("rds_zc_ib: released RDMA device %s\n", dev_name(&ibdev->dev));
	kref_put(&rdev->mem, rds_ib_device_free);
}

static struct ib_client rds_ib_client = {
	.name	= "rds_zc",
	.add	= rds_ib_add_one,
	.remove	= rds_ib_remove_one,
};

/* Address resolution needs a handler; a bound-only id gets no event. */
static int rds_ib_probe_handler(struct rdma_cm_id *id,
				struct rdma_cm_event *event)
{
	return 0;
}

/**
 * rds_ib_device_add_conn() - a connection starts using a device
 * @rdev: the device, referenced by the caller for the connection
 * @ic: the connection
 *
 * Return: 0, or -ENODEV if the device is going away.
 */
int rds_ib_device_add_conn(struct rds_ib_device *rdev, struct rds_ib_conn *ic)
{
	int ret = 0;

	spin_lock_bh(&rdev->conns_lock);
	if (rdev->removing)
		ret = -ENODEV;
	else
		list_add_tail(&ic->dev_item, &rdev->conns);
	spin_unlock_bh(&rdev->conns_lock);
	return ret;
}

/**
 * rds_ib_device_del_conn() - a connection stopped using a device
 * @rdev: the device
 * @ic: a connection rds_ib_device_add_conn() accepted
 */
void rds_ib_device_del_conn(struct rds_ib_device *rdev, struct rds_ib_conn *ic)
{
	spin_lock_bh(&rdev->conns_lock);
	list_del_init(&ic->dev_item);
	spin_unlock_bh(&rdev->conns_lock);
}

/* Caller holds rds_ib_devices_lock. */
static struct rds_ib_device *rds_ib_device_find(struct ib_device *ibdev)
{
	struct rds_ib_device *rdev;

	list_for_each_entry(rdev, &rds_ib_devices, item)
		if (rdev->ibdev == ibdev && refcount_inc_not_zero(&rdev->refs))
			return rdev;
	return NULL;
}

/**
 * rds_ib_device_get() - the state of an RDMA device this client accepted
 * @ibdev: the device
 *
 * Return: the device with a reference (rds_ib_device_put() it), or NULL
 * if it is unknown or going away.
 */
struct rds_ib_device *rds_ib_device_get(struct ib_device *ibdev)
{
	struct rds_ib_device *rdev;

	mutex_lock(&rds_ib_devices_lock);
	rdev = rds_ib_device_find(ibdev);
	mutex_unlock(&rds_ib_devices_lock);
	return rdev;
}

/*
 * rds_ib_device_by_addr() for an address not cached: out of line, so
 * that the cached case does not set up its sockaddr.
 */
static noinline struct rds_ib_device *
rds_ib_addr_probe(const struct in6_addr *addr, u32 scope)
{
	struct rds_ib_device *rdev = NULL;
	struct sockaddr_storage sa;
	struct rdma_cm_id *id;
	int ret;

	id = rdma_create_id(&init_net, rds_ib_probe_handler, NULL,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id) == -ENOMEM ? ERR_CAST(id) :
						ERR_PTR(-EADDRNOTAVAIL);
	rds_addr_fill(&sa, addr, 0, scope);
	ret = rdma_bind_addr(id, (struct sockaddr *)&sa);
	if (!ret && id->device)
		rdev = rds_ib_device_get(id->device);
	rdma_destroy_id(id);
	if (ret == -ENOMEM)
		return ERR_PTR(-ENOMEM);
	if (!rdev)
		return ERR_PTR(-EADDRNOTAVAIL);
	rds_ib_addr_insert(addr, scope, rdev);
	return rdev;
}

/**
 * rds_ib_device_by_addr() - the RDMA device that owns a local address
 * @net: namespace of the socket; RDS over RDMA lives in init_net only
 * @addr: local address (addr.h)
 * @scope: its scope
 *
 * From the cache, else by binding a throw-away rdma_cm id to the address,
 * as rdma_cm itself finds devices, and looking the device up among those
 * this client accepted.
 *
 * Context: process context, may sleep.
 * Return: the device with a reference (rds_ib_device_put() it);
 * ERR_PTR(-ENOMEM) if the search itself ran out of memory, which says
 * nothing of the address; else ERR_PTR(-EADDRNOTAVAIL).
 */
struct rds_ib_device *rds_ib_device_by_addr(struct net *net,
					    const struct in6_addr *addr, u32 scope)
{
	struct rds_ib_device *rdev;

	if (!net_eq(net, &init_net))
		return ERR_PTR(-EADDRNOTAVAIL);
	rdev = rds_ib_addr_lookup(addr, scope);
	if (rdev)
		return rdev;
	return rds_ib_addr_probe(addr, scope);
}

/**
 * rds_ib_device_init() - start watching RDMA devices
 * @hooks: what each device gets; lives until rds_ib_device_exit()
 *
 * Return: 0 or a negative errno.
 */
int rds_ib_device_init(const struct rds_ib_device_hooks *hooks)
{
	int ret;

	rds_ib_device_hooks = hooks;
	ret = register_inetaddr_notifier(&rds_ib_inetaddr_nb);
	if (ret)
		return ret;
	ret = register_inet6addr_notifier(&rds_ib_inet6addr_nb);
	if (ret)
		goto out_inet;
	ret = ib_register_client(&rds_ib_client);
	if (ret)
		goto out_inet6;
	return 0;

out_inet6:
	unregister_inet6addr_notifier(&rds_ib_inet6addr_nb);
out_inet:
	unregister_inetaddr_notifier(&rds_ib_inetaddr_nb);
	return ret;
}

/**
 * rds_ib_device_exit() - release every RDMA device
 */
void rds_ib_device_exit(void)
{
	ib_unregister_client(&rds_ib_client);
	unregister_inet6addr_notifier(&rds_ib_inet6addr_nb);
	unregister_inetaddr_notifier(&rds_ib_inetaddr_nb);
	rds_ib_addr_flush(true);
}
