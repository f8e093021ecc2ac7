// SPDX-License-Identifier: GPL-2.0
/*
 * rds_remote - RDS between two hosts, over InfiniBand or RoCE.
 *
 * Run on both hosts at once, with the same cases, one as node 1 and the
 * other as node 2:
 *
 *	host 1: rds_remote -n 1 -a 10.0.0.1 -p 10.0.0.2
 *	host 2: rds_remote -n 2 -a 10.0.0.2 -p 10.0.0.1
 *
 * In the bench the defaults come from RDS_NODE, RDS_ADDR and RDS_PEER_ADDR,
 * so "rds_remote" alone does it.  Both nodes run the same cases in the same
 * order, each case in its own process under an alarm (rds_test.h), and each
 * node prints its own TAP: a lost or damaged message fails the case on the
 * node that received it.
 *
 * The two programs coordinate over a TCP connection between the same two
 * addresses (node 1 listens on the control port, node 2 connects), not over
 * RDS: an RDS that loses messages then shows as failed cases, never as a
 * hang, and no barrier depends on what is being tested.  Every control line
 * carries a tag, case number * 100 + step; a line from a case this node has
 * already left is dropped, one from a case it has not reached yet is kept
 * for that case (so one node failing a case early does not make the other
 * fail the next one).
 *
 * Every message carries a pattern derived from the case, its sender and its
 * sequence number (and, when long enough, a header with the last two), so a
 * message that is lost, duplicated, reordered, truncated or damaged fails
 * the check; so does a wrong sender address from recvmsg().  Every blocking
 * call is bounded: receives by SO_RCVTIMEO, control reads by poll(), sends
 * that wait on congestion by the case's alarm.
 *
 * What the cases rely on, from the distribution's RDS (Debian's 6.1 and 6.12
 * over soft-RoCE): a message sent to a port nobody is bound to is dropped,
 * so every case binds its receivers, then synchronises, then sends; a
 * port's congestion reaches the sending host as a congestion map update, so
 * a non-blocking sender gets ENOBUFS some messages after the receiver went
 * over its SO_RCVBUF share (the cases give that 20 s); a sender that exits
 * drops what it had queued, so senders stay until the peer confirms it got
 * everything.
 *
 * Usage: rds_remote [-n NODE] [-a ADDR] [-p PEER] [-c PORT] [-l] [CASE...]
 *   -n  this node, 1 or 2 (RDS_NODE)
 *   -a  this node's address on the RDMA device (RDS_ADDR)
 *   -p  the other node's address (RDS_PEER_ADDR)
 *   -c  control TCP port (default 18631)
 *   -l  list the cases
 * Environment: RDS_MODULES (none: skip all if AF_RDS is missing),
 * RDS_MODULES_ALL and RDS_CREDITS for the flow_control case.
 */
#include "rds_remote.h"

/* ------------------------------------------------------------- driver */

static const struct rt_case cases[] = {
	RT_CASE(transport_ib, 60),
	RT_CASE(sizes_both_ways, 90),
	RT_CASE(many_senders, 90),
	RT_CASE(both_full_speed, 90),
	RT_CASE(two_writers, 90),
	RT_CASE(cong_enobufs_monitor_1to2, 90),
	RT_CASE(cong_enobufs_monitor_2to1, 90),
	RT_CASE(cong_blocking_1to2, 90),
	RT_CASE(cong_blocking_2to1, 90),
	RT_CASE(info_connections, 30),
	RT_CASE(flow_control, 30),
	RT_CASE(connect_race_rule, 150),
	RT_CASE(connect_duel, 150),
	RT_CASE(ping, 30),
	RT_CASE(info_ib_connections, 60),
	RT_CASE(idle_ack, 30),
	RT_CASE(held_back, 90),
	RT_CASE(rx_nomem, 90),
	RT_CASE(info6_tables, 30),
	RT_CASE(zcopy_both_ways, 120),
};

int main(int argc, char **argv)
{
	return rds_peer_main(argc, argv, cases, ARRAY_SIZE(cases), CTL_PORT,
			     PORT_BASE);
}
