/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RDS_INFO_* tables, read with getsockopt(SOL_RDS, RDS_INFO_*) by rds-info
 * and by applications.
 */
#ifndef _RDS_ZC_INFO_H
#define _RDS_ZC_INFO_H

#include <linux/compiler.h>

struct socket;

int rds_info_getsockopt(struct socket *sock, int optname,
			char __user *optval, int __user *optlen);

#endif /* _RDS_ZC_INFO_H */
