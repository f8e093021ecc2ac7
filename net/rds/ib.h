/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The InfiniBand/RoCE transport's private header.
 *
 * Lifetime: one struct rds_ib_device exists for each RDMA device the
 * ib_client accepted, from its add() to its remove() callback.  It is
 * reference counted; remove() unlists it, drops the list's reference and
 * waits until every user has dropped theirs before the PD goes.
 */
#ifndef _RDS_ZC_IB_H
#define _RDS_ZC_IB_H

#include <linux/completion.h>
#include <linux/list.h>
#include <linux/refcount.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

struct net;

struct rds_ib_device {
	struct list_head item;		/* on rds_ib_devices, under its lock */
	struct ib_device *ibdev;
	struct ib_pd	*pd;		/* shared by every connection on it */
	refcount_t	refs;		/* the list holds one */
	struct completion unused;	/* completed when refs reaches 0 */
};

int rds_ib_device_init(void);
void rds_ib_device_exit(void);
struct rds_ib_device *rds_ib_device_for_addr(struct net *net, __be32 addr);
void rds_ib_device_put(struct rds_ib_device *rdev);

#endif /* _RDS_ZC_IB_H */
