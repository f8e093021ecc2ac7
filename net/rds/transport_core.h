/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The core's side of the transport registry: lookups used by bind() and
 * SO_RDS_TRANSPORT.  Transports themselves include only transport.h.
 */
#ifndef _RDS_ZC_TRANSPORT_CORE_H
#define _RDS_ZC_TRANSPORT_CORE_H

#include "transport.h"

const struct rds_transport *rds_transport_get(unsigned int type);
const struct rds_transport *rds_transport_for_addr(struct net *net,
						   const struct in6_addr *addr,
						   u32 scope);
void rds_transport_put(const struct rds_transport *t);
void rds_transport_stats_walk(void (*fn)(const char *name, u64 value,
					 void *arg),
			      void *arg);

#endif /* _RDS_ZC_TRANSPORT_CORE_H */
