/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Event counters of the RDS core.  Every state change of a socket, a
 * message or a congestion map bumps one; RDS_INFO_COUNTERS will export
 * them under the names in stats.c.  Per-CPU, so counting costs no lock.
 */
#ifndef _RDS_ZC_STATS_H
#define _RDS_ZC_STATS_H

#include <linux/percpu.h>
#include <linux/types.h>

enum rds_stat {
	RDS_STAT_SOCK_CREATED,
	RDS_STAT_SOCK_RELEASED,
	RDS_STAT_SOCK_BOUND,
	RDS_STAT_SEND_MSGS,
	RDS_STAT_SEND_BYTES,
	RDS_STAT_SEND_CONG_ENOBUFS,
	RDS_STAT_SEND_CONG_BLOCKED,
	RDS_STAT_SEND_LOCAL,
	RDS_STAT_RECV_QUEUED,
	RDS_STAT_RECV_DELIVERED,
	RDS_STAT_RECV_BYTES,
	RDS_STAT_RECV_DROP_NO_SOCK,
	RDS_STAT_RECV_DROP_CLOSED,
	RDS_STAT_RECV_PURGED,
	RDS_STAT_CONG_SET,
	RDS_STAT_CONG_CLEARED,
	RDS_STAT_CONG_NOTIFY,
	RDS_STAT_CONN_CREATED,
	RDS_STAT_CONN_CONNECT,
	RDS_STAT_CONN_ACCEPT,
	RDS_STAT_CONN_UP,
	RDS_STAT_CONN_DROP,
	RDS_STAT_CONN_ACK_TIMEOUT,
	RDS_STAT_CONN_RECONNECT,
	RDS_STAT_CONN_RACE_YIELD,
	RDS_STAT_CONN_RACE_REFUSE,
	RDS_STAT_SEND_QUEUED,
	RDS_STAT_SEND_XMIT,
	RDS_STAT_SEND_RETRANSMIT,
	RDS_STAT_SEND_ACKED,
	RDS_STAT_SEND_CANCELLED,
	RDS_STAT_SEND_SNDBUF_FULL,
	RDS_STAT_RECV_REMOTE,
	RDS_STAT_RECV_PING,
	RDS_STAT_RECV_DUP,
	RDS_STAT_CONG_UPDATE_SENT,
	RDS_STAT_CONG_UPDATE_RECV,
	RDS_STAT_MR_CREATED,
	RDS_STAT_MR_RELEASED,
	RDS_STAT_RDMA_OPS,
	RDS_STAT_ATOMIC_OPS,
	RDS_STAT_RDMA_NOTIFY,
	RDS_STAT_RDMA_DROPPED,
	RDS_STAT_NR
};

struct rds_stats {
	u64 val[RDS_STAT_NR];
};

DECLARE_PER_CPU(struct rds_stats, rds_stats);

#define rds_stat_inc(s)		this_cpu_inc(rds_stats.val[s])
#define rds_stat_add(s, n)	this_cpu_add(rds_stats.val[s], n)

u64 rds_stat_read(enum rds_stat s);
const char *rds_stat_name(enum rds_stat s);

#endif /* _RDS_ZC_STATS_H */
