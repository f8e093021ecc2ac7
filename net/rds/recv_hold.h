/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Messages held back from readers until a key they released is dead
 * (recv_hold.c).
 */
#ifndef _RDS_ZC_RECV_HOLD_H
#define _RDS_ZC_RECV_HOLD_H

#include <linux/types.h>

#include "message.h"
#include "sock.h"

u32 rds_recv_hold(struct rds_sock *rs, struct rds_incoming *inc,
		  bool gated);
void rds_recv_ungate(struct rds_sock *rs, u32 ticket);

#endif /* _RDS_ZC_RECV_HOLD_H */
