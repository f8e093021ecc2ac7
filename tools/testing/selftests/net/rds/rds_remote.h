/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rds_remote.h - what the files of rds_remote share: its constants, the
 * messages of the streams, and the cases, which rds_remote.c lists in
 * its table.  Each rds_remote_*.c holds the cases of one topic:
 *
 *   rds_remote_data.c	the streams' messages; transport, sizes, many
 *			senders, both at full speed, two writers on one
 *			socket
 *   rds_remote_cong.c	congestion control
 *   rds_remote_flow.c	flow control, the connect race, ping, idle ACKs,
 *			messages held back, receive allocations failing
 *   rds_remote_info.c	RDS_INFO and RDS6_INFO tables
 *   rds_remote_zcopy.c	zero-copy sends
 */
#ifndef RDS_REMOTE_H
#define RDS_REMOTE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>

#include "rds_test.h"
#include "rds_sock_util.h"
#include "rds_peer.h"

#define CTL_PORT	18631
#define PORT_BASE	20000	/* case k uses PORT_BASE + 32 k .. + 31 */
/* TOS values of the connections that cases open anew (fresh_tos()) */
#define FRESH_TOS_MIN	5
#define FRESH_TOS_MAX	15

void build_msg(unsigned char *buf, size_t len, uint32_t sender,
	       uint32_t seq);
int check_msg(const unsigned char *buf, long n, uint32_t sender,
	      uint32_t *seq, const char *what);
void test_transport_ib(void);
void test_sizes_both_ways(void);
void test_many_senders(void);
void test_both_full_speed(void);
void test_two_writers(void);
void test_cong_enobufs_monitor_1to2(void);
void test_cong_enobufs_monitor_2to1(void);
void test_cong_blocking_1to2(void);
void test_cong_blocking_2to1(void);
void test_flow_control(void);
void test_connect_race_rule(void);
void test_connect_duel(void);
void test_info_connections(void);
void test_info_ib_connections(void);
int distro(int k);
int fresh_tos(void);
void test_info6_tables(void);
void test_ping(void);
void test_idle_ack(void);
void test_held_back(void);
void test_rx_nomem(void);
void test_zcopy_both_ways(void);

#endif /* RDS_REMOTE_H */
