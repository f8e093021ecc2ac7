// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/sys/net/rds: the core's tunables.
 *
 *  reconnect_min_delay_ms	first bound of the random reconnect delay (1)
 *  reconnect_max_delay_ms	its ceiling (1000)
 *  max_unacked_packets		messages sent before one asks for an ACK (8)
 *  max_unacked_bytes		bytes sent before one asks for an ACK (16 MiB)
 *  unacked_timeout_ms		a connection whose oldest message waits this
 *				long for its ACK is reconnected (10000; 0: never)
 *  ping_enable			answer pings (messages to port 0) with a pong
 *				(1; 0: they are not answered)
 *  conn_reap_ms		a connection down this long with nothing queued
 *				and nothing ever received is freed (60000;
 *				0: never)
 *  conn_idle_ms		a connection neither used nor holding anything
 *				this long is freed, whatever it received
 *				(600000; 0: never; connection.h)
 *  conn_max			connections at most, all peers together (1024)
 *  conn_max_per_peer		connections at most to one remote address, its
 *				TOS values and our addresses together (64)
 */
#include <linux/sysctl.h>
#include <net/net_namespace.h>

#include "sysctl.h"

unsigned int rds_sysctl_reconnect_min_delay_ms = 1;
unsigned int rds_sysctl_reconnect_max_delay_ms = 1000;
unsigned int rds_sysctl_max_unacked_packets_val = 8;
unsigned int rds_sysctl_max_unacked_bytes_val = 16 << 20;
unsigned int rds_sysctl_unacked_timeout_ms_val = 10 * 1000;
unsigned int rds_sysctl_ping_enable_val = 1;
unsigned int rds_sysctl_conn_reap_ms_val = 60 * 1000;
unsigned int rds_sysctl_conn_idle_ms_val = 600 * 1000;
unsigned int rds_sysctl_conn_max_val = 1024;
unsigned int rds_sysctl_conn_max_per_peer_val = 64;

static unsigned int rds_sysctl_zero;
static unsigned int rds_sysctl_one = 1;
static unsigned int rds_sysctl_delay_max = 60 * 1000;

static struct ctl_table rds_sysctl_table[] = {
	{
		.procname	= "reconnect_min_delay_ms",
		.data		= &rds_sysctl_reconnect_min_delay_ms,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= proc_douintvec_minmax,
		.extra1		= &rds_sysctl_one,
		.extra2		= &rds_sysctl_delay_max,
	},
	{
		.procname	= "reconnect_max_delay_ms",
		.data		= &rds_sysctl_reconnect_max_delay_ms,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= proc_douintvec_minmax,
		.extra1		= &rds_sysctl_one,
		.extra2		= &rds_sysctl_delay_max,
	},
	{
		.procname	= "max_unacked_packets",
		.data		= &rds_sysctl_max_unacked_packets_val,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= proc_douintvec,
	},
	{
		.procname	= "max_unacked_bytes",
		.data		= &rds_sysctl_max_unacked_bytes_val,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= proc_douintvec,
	},
	{
		.procname	= "ping_enable",
		.data		= &rds_sysctl_ping_enable_val,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= proc_douintvec_minmax,
		.extra1		= &rds_sysctl_zero,
		.extra2		= &rds_sysctl_one,
	},
	{
		.procname	= "conn_reap_ms",
		.data		= &rds_sysctl_conn_reap_ms_val,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= proc_douintvec,
	},
	{
		.procname	= "conn_idle_ms",
		.data		= &rds_sysctl_conn_idle_ms_val,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= proc_douintvec,
	},
	{
		.procname	= "conn_max",
		.data		= &rds_sysctl_conn_max_val,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= proc_douintvec,
	},
	{
		.procname	= "conn_max_per_peer",
		.data		= &rds_sysctl_conn_max_per_peer_val,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= proc_douintvec,
	},
	{
		.procname	= "unacked_timeout_ms",
		.data		= &rds_sysctl_unacked_timeout_ms_val,
		.maxlen		= sizeof(unsigned int),
		.mode		= 0644,
		.proc_handler	= proc_douintvec,
	},
#ifndef register_net_sysctl
	{ }	/* the older, function form wants an empty last entry */
#endif
};

static struct ctl_table_header *rds_sysctl_header;

/**
 * rds_sysctl_init() - publish /proc/sys/net/rds
 *
 * Return: 0 or -ENOMEM.
 */
int rds_sysctl_init(void)
{
	rds_sysctl_header = register_net_sysctl(&init_net, "net/rds",
						rds_sysctl_table);
	return rds_sysctl_header ? 0 : -ENOMEM;
}

/**
 * rds_sysctl_exit() - withdraw /proc/sys/net/rds
 */
void rds_sysctl_exit(void)
{
	unregister_net_sysctl_table(rds_sysctl_header);
}
