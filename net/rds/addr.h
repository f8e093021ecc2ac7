/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Addresses.  Everywhere inside the modules an RDS address is a struct
 * in6_addr: an IPv4 address a.b.c.d is held IPv4-mapped, ::ffff:a.b.c.d,
 * as the distribution's RDS holds it, so that one code path serves both
 * families.  A link-local IPv6 address is only meaningful with the
 * interface it lives on, its scope id; every other address has scope 0.
 *
 * Applications name addresses with a struct sockaddr_in or a struct
 * sockaddr_in6; an IPv4-mapped sockaddr_in6 means the IPv4 address.
 */
#ifndef _RDS_ZC_ADDR_H
#define _RDS_ZC_ADDR_H

#include <linux/errno.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/jhash.h>
#include <linux/netdevice.h>
#include <linux/rcupdate.h>
#include <linux/stddef.h>
#include <net/addrconf.h>
#include <net/ipv6.h>
#include <net/route.h>

/* The IPv4 address of a mapped RDS address. */
static inline __be32 rds_addr_v4(const struct in6_addr *a)
{
	return a->s6_addr32[3];
}

static inline bool rds_addr_is_v4(const struct in6_addr *a)
{
	return ipv6_addr_v4mapped(a);
}

static inline void rds_addr_set_v4(struct in6_addr *a, __be32 v4)
{
	ipv6_addr_set_v4mapped(v4, a);
}

/* A hash of @a, for the tables keyed by address. */
static inline u32 rds_addr_hash(const struct in6_addr *a, u32 seed)
{
	return jhash2((const u32 *)a->s6_addr32, 4, seed);
}

/*
 * Whether a link-local IPv6 address (it needs a scope id).  An IPv4 one
 * never is: tested inline first, as the send, receive and key paths ask
 * for every message and __ipv6_addr_type() is a call of some 30
 * instructions.
 */
static inline bool rds_addr_link_local(const struct in6_addr *a)
{
	return !ipv6_addr_v4mapped(a) &&
	       (ipv6_addr_type(a) & IPV6_ADDR_LINKLOCAL);
}

/*
 * The scope @a itself has, given the @scope of the exchange it is part
 * of: that of a link-local address, none for any other (::1 stays ::1
 * when an fe80:: socket sends to it).
 */
static inline u32 rds_addr_scope(const struct in6_addr *a, u32 scope)
{
	return rds_addr_link_local(a) ? scope : 0;
}

/* Whether an IPv4 address cannot name one host: 0, broadcast, multicast. */
static inline bool rds_addr_v4_bad(__be32 a)
{
	return a == htonl(INADDR_ANY) || a == htonl(INADDR_BROADCAST) ||
	       ipv4_is_multicast(a);
}

/**
 * rds_addr_parse() - the address, port and scope a user's sockaddr names
 * @uaddr: the sockaddr, in kernel memory
 * @len: its length
 * @bad_family: the error for a family other than AF_INET and AF_INET6
 * @addr: the address, on success (IPv4 as IPv4-mapped)
 * @port: the port, on success
 * @scope: the scope id of a link-local IPv6 address, else 0
 *
 * Only the form is checked here; rds_addr_unicast() checks the address.
 *
 * Return: 0; -EINVAL for a length short of the family's sockaddr;
 * @bad_family.
 */
static inline int rds_addr_parse(const void *uaddr, size_t len,
				 int bad_family, struct in6_addr *addr,
				 __be16 *port, u32 *scope)
{
	const struct sockaddr_in6 *sin6 = uaddr;
	const struct sockaddr_in *sin = uaddr;

	if (len < offsetofend(struct sockaddr, sa_family))
		return -EINVAL;
	switch (sin->sin_family) {
	case AF_INET:
		if (len < sizeof(*sin))
			return -EINVAL;
		rds_addr_set_v4(addr, sin->sin_addr.s_addr);
		*port = sin->sin_port;
		*scope = 0;
		return 0;
	case AF_INET6:
		if (len < sizeof(*sin6))
			return -EINVAL;
		*addr = sin6->sin6_addr;
		*port = sin6->sin6_port;
		*scope = rds_addr_link_local(addr) ? sin6->sin6_scope_id : 0;
		return 0;
	default:
		return bad_family;
	}
}

/* Whether @addr can name one host, as RDS takes it, its scope aside. */
static inline bool rds_addr_is_unicast(const struct in6_addr *addr)
{
	if (rds_addr_is_v4(addr))
		return !rds_addr_v4_bad(rds_addr_v4(addr));
	return ipv6_addr_type(addr) & IPV6_ADDR_UNICAST;
}

/**
 * rds_addr_unicast() - whether @addr can name one host, as RDS takes it
 * @addr: an address from rds_addr_parse()
 * @scope: its scope
 *
 * IPv4 (mapped too): not 0, broadcast or multicast.  IPv6: a unicast
 * address; a link-local one with its scope id.
 */
static inline bool rds_addr_unicast(const struct in6_addr *addr, u32 scope)
{
	return rds_addr_is_unicast(addr) &&
	       (scope || !rds_addr_link_local(addr));
}

/**
 * rds_addr_fill() - write an address as the application reads it back
 * @uaddr: room for a struct sockaddr_in6
 * @addr: the address
 * @port: the port
 * @scope: the scope id, written for a link-local IPv6 address only
 *
 * An IPv4(-mapped) address reads as a struct sockaddr_in, any other as a
 * struct sockaddr_in6, as with the distribution's RDS.
 * Return: the length written.
 */
static inline int rds_addr_fill(void *uaddr, const struct in6_addr *addr,
				__be16 port, u32 scope)
{
	struct sockaddr_in6 *sin6 = uaddr;
	struct sockaddr_in *sin = uaddr;

	if (rds_addr_is_v4(addr)) {
		memset(sin, 0, sizeof(*sin));
		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = rds_addr_v4(addr);
		sin->sin_port = port;
		return sizeof(*sin);
	}
	memset(sin6, 0, sizeof(*sin6));
	sin6->sin6_family = AF_INET6;
	sin6->sin6_addr = *addr;
	sin6->sin6_port = port;
	sin6->sin6_scope_id = rds_addr_scope(addr, scope);
	return sizeof(*sin6);
}

/**
 * rds_addr_is_local() - is @addr an address of this host?
 * @net: namespace to look in
 * @addr: address (addr.h)
 * @scope: the interface a link-local @addr must be on; for any other
 *	address it only says which interface the sender's socket is bound
 *	to, and the address may be on another one (::1 on lo)
 *
 * Return: true for an IPv4 address that routes locally (127/8 included),
 * and for an IPv6 address of one of @net's interfaces (::1 included).
 */
static inline bool rds_addr_is_local(struct net *net,
				     const struct in6_addr *addr, u32 scope)
{
	struct net_device *dev = NULL;
	bool local;

	if (rds_addr_is_v4(addr))
		return inet_addr_type(net, rds_addr_v4(addr)) == RTN_LOCAL;
	if (!IS_ENABLED(CONFIG_IPV6))
		return false;
	rcu_read_lock();
	scope = rds_addr_scope(addr, scope);
	if (scope) {
		dev = dev_get_by_index_rcu(net, scope);
		if (!dev) {
			rcu_read_unlock();
			return false;
		}
	}
	local = ipv6_chk_addr(net, addr, dev, !!dev);
	rcu_read_unlock();
	return local;
}

#endif /* _RDS_ZC_ADDR_H */
