// SPDX-License-Identifier: GPL-2.0
/*
 * The RDS core module: the PF_RDS socket family, local delivery,
 * connections, and the registry transports plug into.
 */
#include <linux/module.h>

#include "cong.h"
#include "connection.h"
#include "rdma.h"
#include "send.h"
#include "socket.h"
#include "sysctl.h"
#include "transport.h"

/* The socket layer's side of connections (connection.h). */
static const struct rds_conn_upcalls rds_zc_conn_upcalls = {
	.deliver	= rds_zc_deliver,
	.uncharge	= rds_send_uncharge,
	.sock_dead	= rds_send_sock_dead,
};

static int __init rds_zc_init(void)
{
	int ret;

	ret = rds_rdma_init();
	if (ret)
		return ret;
	ret = rds_conn_init(&rds_zc_conn_upcalls);
	if (ret)
		goto out_rdma;
	/* First: it fails cleanly when the distribution's rds is loaded. */
	ret = rds_socket_init();
	if (ret)
		goto out_conn;
	ret = rds_sysctl_init();
	if (ret)
		goto out_socket;
	return 0;

out_socket:
	rds_socket_exit();
out_conn:
	rds_conn_exit();
out_rdma:
	rds_rdma_exit();
	return ret;
}

static void __exit rds_zc_exit(void)
{
	rds_sysctl_exit();
	rds_socket_exit();
	rds_conn_exit();
	rds_cong_exit();
	rds_rdma_exit();
}

module_init(rds_zc_init);
module_exit(rds_zc_exit);

MODULE_DESCRIPTION("Reliable Datagram Sockets (RDS) with zero-copy RDMA: socket family and core");
MODULE_AUTHOR("The rds_zc authors");
MODULE_LICENSE("GPL");
