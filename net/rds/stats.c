// SPDX-License-Identifier: GPL-2.0
/*
 * Event counters of the RDS core: storage and names.
 */
#include <linux/cpumask.h>
#include <linux/export.h>
#include <linux/kernel.h>

#include "stats.h"
#include "transport.h"

DEFINE_PER_CPU(struct rds_stats, rds_stats);

/* Names as RDS_INFO_COUNTERS reports them: at most 31 characters. */
static const char * const rds_stat_names[RDS_STAT_NR] = {
	[RDS_STAT_SOCK_CREATED]		= "sock_created",
	[RDS_STAT_SOCK_RELEASED]	= "sock_released",
	[RDS_STAT_SOCK_BOUND]		= "sock_bound",
	[RDS_STAT_SEND_MSGS]		= "send_msgs",
	[RDS_STAT_SEND_BYTES]		= "send_bytes",
	[RDS_STAT_SEND_CONG_ENOBUFS]	= "send_cong_enobufs",
	[RDS_STAT_SEND_CONG_BLOCKED]	= "send_cong_blocked",
	[RDS_STAT_SEND_LOCAL]		= "send_local",
	[RDS_STAT_RECV_QUEUED]		= "recv_queued",
	[RDS_STAT_RECV_DELIVERED]	= "recv_delivered",
	[RDS_STAT_RECV_BYTES]		= "recv_bytes",
	[RDS_STAT_RECV_DROP_NO_SOCK]	= "recv_drop_no_sock",
	[RDS_STAT_RECV_DROP_CLOSED]	= "recv_drop_closed",
	[RDS_STAT_RECV_PURGED]		= "recv_purged",
	[RDS_STAT_CONG_SET]		= "cong_set",
	[RDS_STAT_CONG_CLEARED]		= "cong_cleared",
	[RDS_STAT_CONG_NOTIFY]		= "cong_notify",
	[RDS_STAT_CONN_CREATED]	= "conn_created",
	[RDS_STAT_CONN_CONNECT]	= "conn_connect",
	[RDS_STAT_CONN_ACCEPT]	= "conn_accept",
	[RDS_STAT_CONN_UP]	= "conn_up",
	[RDS_STAT_CONN_DROP]	= "conn_drop",
	[RDS_STAT_CONN_ACK_TIMEOUT]	= "conn_ack_timeout",
	[RDS_STAT_CONN_RECONNECT]	= "conn_reconnect_queued",
	[RDS_STAT_CONN_RACE_YIELD]	= "conn_race_yield",
	[RDS_STAT_CONN_RACE_REFUSE]	= "conn_race_refuse",
	[RDS_STAT_CONN_RACE_REFUSED]	= "conn_race_refused",
	[RDS_STAT_CONN_REAPED]	= "conn_reaped",
	[RDS_STAT_CONN_REAPED_IDLE]	= "conn_reaped_idle",
	[RDS_STAT_CONN_REFUSED_LIMIT]	= "conn_refused_limit",
	[RDS_STAT_CONN_REFUSED_LIVE]	= "conn_refused_live",
	[RDS_STAT_SEND_QUEUED]	= "send_queued",
	[RDS_STAT_SEND_XMIT]	= "send_xmit",
	[RDS_STAT_SEND_RETRANSMIT]	= "send_retransmit",
	[RDS_STAT_SEND_ACKED]	= "send_acked",
	[RDS_STAT_SEND_CANCELLED]	= "send_cancelled",
	[RDS_STAT_SEND_SNDBUF_FULL]	= "send_sndbuf_full",
	[RDS_STAT_RECV_REMOTE]	= "recv_remote",
	[RDS_STAT_RECV_PING]	= "recv_ping",
	[RDS_STAT_SEND_PONG_DROPPED]	= "send_pong_dropped",
	[RDS_STAT_RECV_DUP]	= "recv_dup_dropped",
	[RDS_STAT_CONG_UPDATE_SENT]	= "cong_update_sent",
	[RDS_STAT_CONG_UPDATE_RECV]	= "cong_update_recv",
	[RDS_STAT_MR_CREATED]	= "rdma_mr_created",
	[RDS_STAT_MR_RELEASED]	= "rdma_mr_released",
	[RDS_STAT_DEFER_OWNER]	= "release_run_by_owner",
	[RDS_STAT_DEFER_WORKER]	= "release_run_by_worker",
	[RDS_STAT_RDMA_OPS]	= "rdma_ops",
	[RDS_STAT_ATOMIC_OPS]	= "atomic_ops",
	[RDS_STAT_RDMA_NOTIFY]	= "rdma_notify_queued",
	[RDS_STAT_RDMA_NOTE_REFUSED]	= "rdma_note_refused",
	[RDS_STAT_RDMA_DROPPED]	= "rdma_ops_dropped",
	[RDS_STAT_RDMA_DONE_SUCCESS]	= "rdma_done_success",
	[RDS_STAT_RDMA_DONE_REMOTE_ERROR]	= "rdma_done_remote_error",
	[RDS_STAT_RDMA_DONE_CANCELED]	= "rdma_done_canceled",
	[RDS_STAT_RDMA_DONE_OTHER_ERROR]	= "rdma_done_other_error",
	[RDS_STAT_SEND_ACK_PROBE]	= "send_ack_probe",
	[RDS_STAT_RECV_ACK_PROBE]	= "recv_ack_probe",
	[RDS_STAT_RECV_HELD_BACK]	= "recv_held_back",
	[RDS_STAT_RECV_BAD_CSUM]	= "recv_drop_bad_checksum",
};

/**
 * rds_stat_read() - sum one counter over all CPUs
 * @s: the counter
 *
 * Return: the counter's value; racy against concurrent increments, which
 * is fine for statistics.
 */
u64 rds_stat_read(enum rds_stat s)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu(rds_stats, cpu).val[s];
	return sum;
}

/**
 * rds_stat_name() - the exported name of a counter
 * @s: the counter
 *
 * Return: a NUL-terminated name of at most 31 characters.
 */
const char *rds_stat_name(enum rds_stat s)
{
	return rds_stat_names[s];
}

/**
 * rds_zc_recv_bad_checksum() - a transport dropped a frame whose header
 * checksum was wrong
 *
 * Counted under the distribution's name, recv_drop_bad_checksum.
 * Context: any.
 */
void rds_zc_recv_bad_checksum(void)
{
	rds_stat_inc(RDS_STAT_RECV_BAD_CSUM);
}
EXPORT_SYMBOL_GPL(rds_zc_recv_bad_checksum);
