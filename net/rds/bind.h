/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The bind table: which socket owns a local (address, port) in a network
 * namespace.  Lookups are lock-free and return a referenced socket.
 */
#ifndef _RDS_ZC_BIND_H
#define _RDS_ZC_BIND_H

#include <linux/types.h>

struct in6_addr;
struct net;
struct rds_sock;
struct rds_sock_cache;

int rds_bind_insert(struct rds_sock *rs, const struct in6_addr *addr,
		    u32 scope, __be16 *port);
void rds_bind_remove(struct rds_sock *rs);
struct rds_sock *rds_bind_lookup(const struct net *net,
				 const struct in6_addr *addr, __be16 port,
				 u32 scope, struct rds_sock_cache *cache);

#endif /* _RDS_ZC_BIND_H */
