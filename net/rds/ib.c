// SPDX-License-Identifier: GPL-2.0
/*
 * The InfiniBand/RoCE transport: module entry and its registration with
 * the RDS core.
 *
 * Today it claims the local addresses of RDMA devices, so sockets bound
 * there report RDS_TRANS_IB and pin this module.  Connections over RC
 * QPs (Documentation/networking/rds_zc-wire.rst) come next; until then
 * messages to other hosts get ENETUNREACH and messages between sockets
 * of this host go through the core's local delivery.
 */
#include <linux/errno.h>
#include <linux/module.h>
#include <uapi/linux/rds.h>

#include "ib.h"
#include "transport.h"

static int rds_ib_laddr_check(struct net *net, __be32 addr)
{
	struct rds_ib_device *rdev = rds_ib_device_for_addr(net, addr);

	if (!rdev)
		return -EADDRNOTAVAIL;
	rds_ib_device_put(rdev);
	return 0;
}

static struct rds_transport rds_ib_transport = {
	.name		= "infiniband",
	.type		= RDS_TRANS_IB,
	.owner		= THIS_MODULE,
	.laddr_check	= rds_ib_laddr_check,
};

static int __init rds_ib_init(void)
{
	int ret;

	ret = rds_ib_device_init();
	if (ret)
		return ret;
	ret = rds_zc_transport_register(&rds_ib_transport);
	if (ret)
		goto out_devices;
	return 0;

out_devices:
	rds_ib_device_exit();
	return ret;
}

static void __exit rds_ib_exit(void)
{
	rds_zc_transport_unregister(&rds_ib_transport);
	rds_ib_device_exit();
}

module_init(rds_ib_init);
module_exit(rds_ib_exit);

MODULE_DESCRIPTION("RDS zero-copy: InfiniBand/RoCE transport");
MODULE_AUTHOR("The rds_zc authors");
MODULE_LICENSE("GPL");
