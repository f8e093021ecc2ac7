// SPDX-License-Identifier: GPL-2.0
/*
 * The InfiniBand/RoCE transport.
 *
 * This is its skeleton: it registers the transport so that the module
 * dependency and SO_RDS_TRANSPORT work, but it claims no address yet, so
 * bind() through it fails with ENOPROTOOPT and sockets fall back to local
 * delivery.  Connections over RC QPs come with the transport work.
 */
#include <linux/errno.h>
#include <linux/module.h>
#include <uapi/linux/rds.h>

#include "transport.h"

static int rds_ib_laddr_check(struct net *net, __be32 addr)
{
	return -EADDRNOTAVAIL;
}

static struct rds_transport rds_ib_transport = {
	.name		= "infiniband",
	.type		= RDS_TRANS_IB,
	.owner		= THIS_MODULE,
	.laddr_check	= rds_ib_laddr_check,
};

static int __init rds_ib_init(void)
{
	return rds_zc_transport_register(&rds_ib_transport);
}

static void __exit rds_ib_exit(void)
{
	rds_zc_transport_unregister(&rds_ib_transport);
}

module_init(rds_ib_init);
module_exit(rds_ib_exit);

MODULE_DESCRIPTION("RDS zero-copy: InfiniBand/RoCE transport");
MODULE_AUTHOR("The rds_zc authors");
MODULE_LICENSE("GPL");
