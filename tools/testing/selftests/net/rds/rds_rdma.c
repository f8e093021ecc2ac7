// SPDX-License-Identifier: GPL-2.0
/*
 * rds_rdma - RDS zero-copy RDMA between two hosts, as rds-zerocopy(7)
 * describes it: a client (the MR owner) registers a buffer and sends its
 * cookie with a request, the server (the initiator) RDMA-reads or -writes
 * that buffer together with an ACK message, and may ask for a status
 * notification.
 *
 * Run like rds_remote, on both hosts at once with the same cases, one as
 * node 1 and the other as node 2 (RDS_NODE, RDS_ADDR, RDS_PEER_ADDR in the
 * bench); the two programs coordinate over TCP (rds_peer.h), here on port
 * 18632.  Cases named *_owner1 have node 1 own the memory and node 2
 * initiate the RDMA, *_owner2 the other way round.
 *
 * Every RDMA carries a pattern derived from the case and the operation;
 * the MR owner checks the bytes written and that none outside the range
 * changed, the initiator the bytes it read.  The cookie the owner got from
 * the kernel is passed over the control connection too, so the initiator
 * checks what RDS_CMSG_RDMA_DEST delivered.
 *
 * Each case first exchanges one plain message each way: the
 * distribution's RDS registers memory only on an established connection
 * (its FRWR registration is posted on the connection's QP), and a failed
 * RDMA makes it drop and re-establish the connection, which the next case
 * must not mistake for lost messages.
 *
 * Where the distribution's module (RDS_MODULES distro) is known to do
 * otherwise than the manual page, the case checks what the distribution
 * does on the node concerned, says so in a comment, and reports SKIP with
 * the difference as the reason; our module is held to the manual.
 *
 * Usage: rds_rdma [-n NODE] [-a ADDR] [-p PEER] [-c PORT] [-l] [CASE...]
 * (as rds_remote).
 */
#include "rds_rdma.h"

/* --------------------------------------------------------- driver */

static const struct rt_case cases[] = {
	RT_CASE(get_mr_after_bind, 30),
	RT_CASE(get_mr_errors, 30),
	RT_CASE(free_mr_errors, 30),
	RT_CASE_OWNER(rdma_write_map, 1, 60),
	RT_CASE_OWNER(rdma_write_map, 2, 60),
	RT_CASE_OWNER(rdma_read_map, 1, 60),
	RT_CASE_OWNER(rdma_read_map, 2, 60),
	RT_CASE_OWNER(rdma_write_dest, 1, 60),
	RT_CASE_OWNER(rdma_write_dest, 2, 60),
	RT_CASE_OWNER(rdma_sizes, 1, 90),
	RT_CASE_OWNER(rdma_sizes, 2, 90),
	RT_CASE_OWNER(rdma_len_mismatch, 1, 60),
	RT_CASE_OWNER(rdma_len_mismatch, 2, 60),
	RT_CASE(cmsg_conflicts, 60),
	RT_CASE_OWNER(use_once, 1, 150),
	RT_CASE_OWNER(use_once, 2, 150),
	RT_CASE_OWNER(pipeline, 1, 90),
	RT_CASE_OWNER(pipeline, 2, 90),
	RT_CASE_OWNER(silent, 1, 60),
	RT_CASE_OWNER(silent, 2, 60),
	RT_CASE_OWNER(bogus_cookie, 1, 150),
	RT_CASE_OWNER(bogus_cookie, 2, 150),
	RT_CASE_OWNER(invalidate, 1, 150),
	RT_CASE_OWNER(invalidate, 2, 150),
	RT_CASE_OWNER(recverr, 1, 240),
	RT_CASE_OWNER(recverr, 2, 240),
	RT_CASE_OWNER(out_of_bounds, 1, 150),
	RT_CASE_OWNER(out_of_bounds, 2, 150),
	RT_CASE_OWNER(out_of_bounds_unaligned, 1, 150),
	RT_CASE_OWNER(client_killed, 1, 150),
	RT_CASE_OWNER(client_killed, 2, 150),
	RT_CASE_OWNER(link_dropped, 1, 150),
	RT_CASE_OWNER(link_dropped, 2, 150),
	RT_CASE_OWNER(loss_retried, 1, 120),
	RT_CASE_OWNER(loss_retried, 2, 120),
	RT_CASE(atomic_errors, 30),
	RT_CASE_OWNER(atomic_forms, 1, 150),
	RT_CASE_OWNER(atomic_forms, 2, 150),
	RT_CASE(atomic_counter, 120),
	RT_CASE_OWNER(atomic_lock, 1, 120),
	RT_CASE_OWNER(atomic_lock, 2, 120),
	RT_CASE_OWNER(atomic_mixed, 1, 60),
	RT_CASE_OWNER(atomic_mixed, 2, 60),
	RT_CASE_OWNER(atomic_released, 1, 150),
	RT_CASE_OWNER(atomic_released, 2, 150),
	RT_CASE_OWNER(op_barrier_stream, 1, 150),
	RT_CASE_OWNER(op_barrier_stream, 2, 150),
	RT_CASE(op_barrier_drop, 150),
};

int main(int argc, char **argv)
{
	return rds_peer_main(argc, argv, cases, ARRAY_SIZE(cases), CTL_PORT,
			     PORT_BASE);
}
