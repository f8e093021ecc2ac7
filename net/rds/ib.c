// SPDX-License-Identifier: GPL-2.0
/*
 * The InfiniBand/RoCE transport: module entry, parameters, and its
 * registration with the RDS core.
 *
 * It claims the local addresses of RDMA devices, so sockets bound there
 * report RDS_TRANS_IB and pin this module, and carries their messages to
 * other hosts over one RC QP per connection, speaking RDS 3.1 as the
 * distribution's rds_rdma does (Documentation/networking/rds_zc-wire.rst).
 * Messages between sockets of this host go through the core's local
 * delivery.
 */
#include <linux/errno.h>
#include <linux/module.h>
#include <rdma/ib_verbs.h>
#include <uapi/linux/rds.h>

#include "ib.h"
#include "transport.h"

static int rds_ib_laddr_check(struct net *net, const struct in6_addr *addr,
			      u32 scope)
{
	struct rds_ib_device *rdev = rds_ib_device_by_addr(net, addr, scope);

	if (IS_ERR(rdev))
		return PTR_ERR(rdev);
	rds_ib_device_put(rdev);
	return 0;
}

/*
 * Remote atomics: the plain verbs on any device that has atomics (rxe
 * has them), the masked ones only where the device has those too.
 * ENOMEM if finding the device ran out of memory.
 */
static int rds_ib_atomic_check(struct net *net, const struct in6_addr *laddr,
			       u32 scope, bool masked)
{
	struct rds_ib_device *rdev = rds_ib_device_by_addr(net, laddr, scope);
	const struct ib_device_attr *attrs;
	int ret = 0;

	if (IS_ERR(rdev))
		return rds_ib_no_device(rdev, -EOPNOTSUPP);
	attrs = &rdev->ibdev->attrs;
	if (attrs->atomic_cap == IB_ATOMIC_NONE ||
	    (masked && attrs->masked_atomic_cap == IB_ATOMIC_NONE))
		ret = -EOPNOTSUPP;
	rds_ib_device_put(rdev);
	return ret;
}

static struct rds_transport rds_ib_transport = {
	.name		= "infiniband",
	.type		= RDS_TRANS_IB,
	.owner		= THIS_MODULE,
	.stats		= &rds_ib_stats_ops,
	.laddr_check	= rds_ib_laddr_check,
	.conn_alloc	= rds_ib_conn_alloc,
	.conn_free	= rds_ib_conn_free,
	.conn_connect	= rds_ib_conn_connect,
	.conn_shutdown	= rds_ib_conn_shutdown,
	.xmit		= rds_ib_xmit,
	.mr_reg		= rds_ib_mr_reg,
	.mr_dereg	= rds_ib_mr_dereg,
	.mr_dereg_nowait = rds_ib_mr_dereg_nowait,
	.mr_kill	= rds_ib_mr_kill,
	.mr_prepare	= rds_ib_mr_prepare,
	.mr_sync	= rds_ib_mr_sync,
	.atomic_check	= rds_ib_atomic_check,
	.rdma_conn_info	= rds_ib_conn_info,
	.conn_tx_state	= rds_ib_conn_tx_state,
};

/* What a new RDMA device gets besides its PD, and loses before it. */
static const struct rds_ib_device_hooks rds_ib_device_hooks = {
	.add	= rds_ib_mr_dev_init,
	.remove	= rds_ib_mr_dev_exit,
};

static int __init rds_ib_init(void)
{
	int ret;

	/* A fragment fills one page: receive buffers are handed over whole. */
	BUILD_BUG_ON(PAGE_SIZE != RDS_IB_FRAG_SIZE);

	ret = rds_ib_mr_init();
	if (ret)
		return ret;
	ret = rds_ib_device_init(&rds_ib_device_hooks);
	if (ret)
		goto out_mr;
	ret = rds_zc_transport_register(&rds_ib_transport);
	if (ret)
		goto out_devices;
	ret = rds_ib_listen_init(&rds_ib_transport);
	if (ret)
		goto out_transport;
	return 0;

out_transport:
	rds_zc_transport_unregister(&rds_ib_transport);
out_devices:
	rds_ib_device_exit();
out_mr:
	rds_ib_mr_exit();
	return ret;
}

static void __exit rds_ib_exit(void)
{
	rds_ib_listen_exit();
	rds_zc_transport_unregister(&rds_ib_transport);	/* connections go */
	rds_ib_device_exit();
	rds_ib_mr_exit();
}

module_init(rds_ib_init);
module_exit(rds_ib_exit);

MODULE_DESCRIPTION("RDS zero-copy: InfiniBand/RoCE transport");
MODULE_AUTHOR("The rds_zc authors");
MODULE_LICENSE("GPL");
