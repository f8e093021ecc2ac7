// SPDX-License-Identifier: GPL-2.0
/*
 * The RDS core module: the PF_RDS socket family, local delivery, and the
 * registry transports plug into.
 */
#include <linux/module.h>

#include "cong.h"
#include "socket.h"

static int __init rds_zc_init(void)
{
	return rds_socket_init();
}

static void __exit rds_zc_exit(void)
{
	rds_socket_exit();
	rds_cong_exit();
}

module_init(rds_zc_init);
module_exit(rds_zc_exit);

MODULE_DESCRIPTION("Reliable Datagram Sockets (RDS) with zero-copy RDMA: socket family and core");
MODULE_AUTHOR("The rds_zc authors");
MODULE_LICENSE("GPL");
