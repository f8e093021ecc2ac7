// SPDX-License-Identifier: GPL-2.0
/*
 * Counters of the IB transport.  Per-CPU, so counting costs no lock; the
 * core lists them in RDS_INFO_COUNTERS after its own, named "ib_..." as
 * the distribution's are.
 */
#include <linux/cpumask.h>
#include <linux/kernel.h>

#include "ib.h"
#include "transport.h"

DEFINE_PER_CPU(struct rds_ib_stats, rds_ib_stats);

static const char * const rds_ib_stat_names[RDS_IB_STAT_NR] = {
	[RDS_IB_STAT_TX_FRAMES]		= "ib_tx_frames",
	[RDS_IB_STAT_TX_RING_FULL]	= "ib_tx_ring_full",
	[RDS_IB_STAT_TX_ACK_FRAMES]	= "ib_tx_ack_frames",
	[RDS_IB_STAT_TX_CREDIT_STALL]	= "ib_tx_credit_stall",
	[RDS_IB_STAT_TX_CREDIT_UPDATES]	= "ib_tx_credit_updates",
	[RDS_IB_STAT_RX_FRAMES]		= "ib_rx_frames",
	[RDS_IB_STAT_RX_ACK_FRAMES]	= "ib_rx_ack_frames",
	[RDS_IB_STAT_RX_CREDIT_UPDATES]	= "ib_rx_credit_updates",
	[RDS_IB_STAT_RX_COPIED]		= "ib_rx_copied",
	[RDS_IB_STAT_RX_PARKED]		= "ib_rx_held_back",
	[RDS_IB_STAT_RX_HELD_FRAMES]	= "ib_rx_frames_held",
	[RDS_IB_STAT_RX_NOMEM]		= "ib_rx_nomem_deferred",
	[RDS_IB_STAT_RX_REFILLED]	= "ib_rx_refilled",
	[RDS_IB_STAT_CONN_FLOW_CONTROL]	= "ib_conn_flow_control",
	[RDS_IB_STAT_TX_RDMA]		= "ib_tx_rdma_wrs",
	[RDS_IB_STAT_TX_ATOMIC]		= "ib_tx_atomic_wrs",
	[RDS_IB_STAT_MR_REG]		= "ib_mr_registered",
	[RDS_IB_STAT_MR_REG_CHAINED]	= "ib_mr_reg_chained",
	[RDS_IB_STAT_MR_REG_UNCHAINED]	= "ib_mr_reg_unchained",
	[RDS_IB_STAT_MR_INVALIDATE]	= "ib_mr_invalidated",
	[RDS_IB_STAT_MR_INV_POSTED]	= "ib_mr_invalidate_posted",
	[RDS_IB_STAT_MR_INV_NOWAIT]	= "ib_mr_invalidate_nowait",
	[RDS_IB_STAT_MR_POOL_REUSE]	= "ib_mr_pool_reuse",
	[RDS_IB_STAT_MR_POOL_ALLOC]	= "ib_mr_pool_alloc",
	[RDS_IB_STAT_MR_POOL_EXHAUSTED]	= "ib_mr_pool_exhausted",
	[RDS_IB_STAT_MR_POOL_WAIT]	= "ib_mr_pool_wait",
	[RDS_IB_STAT_MR_QP_FULL]	= "ib_mr_reg_qp_full",
	[RDS_IB_STAT_MR_QP_RECOVERED]	= "ib_mr_reg_qp_recovered",
	[RDS_IB_STAT_MR_REG_BOUNCED]	= "ib_mr_reg_bounced",
	[RDS_IB_STAT_CONN_REFUSED_ADDR]	= "ib_conn_refused_addr",
	[RDS_IB_STAT_CONN_REFUSED_GID]	= "ib_conn_refused_gid",
};

static const char *rds_ib_stat_name(unsigned int i)
{
	return rds_ib_stat_names[i];
}

static u64 rds_ib_stat_read(unsigned int i)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu(rds_ib_stats, cpu).val[i];
	return sum;
}

const struct rds_transport_stats rds_ib_stats_ops = {
	.nr	= RDS_IB_STAT_NR,
	.name	= rds_ib_stat_name,
	.read	= rds_ib_stat_read,
};
