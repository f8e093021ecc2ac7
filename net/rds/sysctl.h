/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tunables of the RDS core under /proc/sys/net/rds, with the names and
 * defaults of the distribution's RDS.  Readers take a snapshot with
 * READ_ONCE(); a write takes effect at the next use.
 */
#ifndef _RDS_ZC_SYSCTL_H
#define _RDS_ZC_SYSCTL_H

extern unsigned int rds_sysctl_reconnect_min_delay_ms;
extern unsigned int rds_sysctl_reconnect_max_delay_ms;
extern unsigned int rds_sysctl_max_unacked_packets_val;
extern unsigned int rds_sysctl_max_unacked_bytes_val;
extern unsigned int rds_sysctl_unacked_timeout_ms_val;
extern unsigned int rds_sysctl_ping_enable_val;
extern unsigned int rds_sysctl_conn_reap_ms_val;
extern unsigned int rds_sysctl_conn_idle_ms_val;
extern unsigned int rds_sysctl_conn_max_val;
extern unsigned int rds_sysctl_conn_max_per_peer_val;

/* Answer pings (wire 10.1); 1 by default, as the distribution's. */
static inline bool rds_sysctl_ping_enable(void)
{
	return READ_ONCE(rds_sysctl_ping_enable_val);
}

static inline unsigned int rds_sysctl_unacked_timeout_ms(void)
{
	return READ_ONCE(rds_sysctl_unacked_timeout_ms_val);
}

static inline unsigned int rds_sysctl_reconnect_min_ms(void)
{
	return READ_ONCE(rds_sysctl_reconnect_min_delay_ms);
}

static inline unsigned int rds_sysctl_reconnect_max_ms(void)
{
	return READ_ONCE(rds_sysctl_reconnect_max_delay_ms);
}

static inline unsigned int rds_sysctl_max_unacked_packets(void)
{
	return READ_ONCE(rds_sysctl_max_unacked_packets_val);
}

static inline unsigned int rds_sysctl_max_unacked_bytes(void)
{
	return READ_ONCE(rds_sysctl_max_unacked_bytes_val);
}

static inline unsigned int rds_sysctl_conn_reap_ms(void)
{
	return READ_ONCE(rds_sysctl_conn_reap_ms_val);
}

static inline unsigned int rds_sysctl_conn_idle_ms(void)
{
	return READ_ONCE(rds_sysctl_conn_idle_ms_val);
}

static inline unsigned int rds_sysctl_conn_max(void)
{
	return READ_ONCE(rds_sysctl_conn_max_val);
}

static inline unsigned int rds_sysctl_conn_max_per_peer(void)
{
	return READ_ONCE(rds_sysctl_conn_max_per_peer_val);
}

int rds_sysctl_init(void);
void rds_sysctl_exit(void);

#endif /* _RDS_ZC_SYSCTL_H */
