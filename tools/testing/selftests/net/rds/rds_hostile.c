// SPDX-License-Identifier: GPL-2.0
/*
 * rds_hostile - a hostile peer on the fabric.  Two guests: node 1 is the
 * victim, with its RDS module and sockets; node 2 plays a host that speaks
 * the RDS/IB wire protocol itself, through librdmacm and libibverbs
 * (Documentation/networking/rds_zc-wire.rst; frames in rds_wire_frame.h),
 * and lies in it.  Node 2 also runs an RDS module: its kernel is the
 * honest peer, whose connection to node 1 (TOS 0) must keep working while
 * the hostile QPs (each on a TOS of its own, so a distinct RDS connection)
 * misbehave.
 *
 * The cases (node 2 acts, node 1 checks):
 *
 *  src_loopback, src_victim, src_third_host, dst_loopback: connect
 *	requests whose private data names addresses the request did not
 *	come from or go to; each is refused and counted
 *	(ib_conn_refused_addr), and none becomes a connection.
 *  honest_request: the honest request is accepted (the refusals above
 *	are about lies).
 *  reject_reason: a request node 1 can never take is refused with
 *	reason 1, one it cannot take now (a second on an up TOS) with 0
 *	(the distribution: 1), and a later request is taken.
 *  src_gid: a request whose CM REQ names a third host's GID as its
 *	sender's, with honest addresses: refused on RoCE, where an
 *	address's GID is the address, and counted (ib_conn_refused_gid).
 *  live_conn_kept: a request from node 2's address for TOS 0, the
 *	kernels' live connection: refused "not now" and counted
 *	(conn_refused_live); the live connection is not dropped, node 1's
 *	messages around it arrive in order.
 *  peer_restart: a hostile QP lost without a word (a peer that
 *	restarted): its address is served again within RESTART_MS, by a
 *	new request or by node 1 reconnecting.
 *  wire_sane: well-formed frames (checksummed, checksum 0, a message of
 *	three fragments) are delivered intact and acknowledged: the frames
 *	of the cases below are what they claim to be.
 *  bad_csum: a data frame, an ACK frame and the second fragment of a
 *	message with a wrong header checksum: each drops the connection,
 *	nothing of them is delivered, each drop is counted.
 *  len_overrun: h_len larger than the fragments sent, followed by a new
 *	message; the same ended by a disconnect; h_len of 4 GiB; a short
 *	first fragment.  Nothing of them is delivered, each drops the
 *	connection (counted), the next honest message arrives.
 *  bad_exthdr: unknown, invalid and truncated extension headers, an
 *	RDMA_DEST cookie and an RDMA extension naming a key nobody
 *	registered, and both naming the key another socket of node 1
 *	registered (RDS_GET_MR; RDS_CMSG_RDMA_MAP on the distribution),
 *	sent to another socket and to the owner.  Every message is
 *	delivered as sent (a cookie is only a number to its reader); the
 *	owner's memory is unchanged and its key still works for the honest
 *	peer's RDMA READ.
 *  bad_credit: an initial credit of 2^32 - 1 and 600 ACK frames with
 *	h_credit 255: node 1 still sends on that connection (its messages
 *	arrive and an honest ACK releases them), answers with a bounded
 *	number of ACK frames, and returns no more credits than the frames
 *	it took (the send credits once overflowed into its posted count).
 *  bad_ack: two verbs peers, an honest one that receives node 1's
 *	messages without acknowledging them, and a hostile one whose ACKs
 *	are zero, partial, backwards, 2^64 - 1 and 2^63: a cumulative ACK
 *	acts on its own connection only, never on another's unacknowledged
 *	messages; a later honest ACK still works.
 *  close_unacked: node 1 closes a socket whose RDMA_MAP message the peer
 *	took and never acknowledged: close() returns at once, the message
 *	is gone and the key with it (the peer read with it before, it
 *	cannot after; where the distribution's key still reads, skipped).
 *  free_unacked: RDS_FREE_MR with RDS_RDMA_INVALIDATE of the key of such
 *	a message returns at once and kills the key, although the message
 *	still holds the MR (the peer read with it before, it cannot after).
 *  use_once_unacked: the key of such a message is USE_ONCE and
 *	INVALIDATE, and the peer sends the ACK of its READ (an RDMA
 *	extension naming the key): node 1's reader gets it although the
 *	message still holds the MR, and by then the key is dead (the
 *	peer's next READ fails).
 *  kill_stalled: RDMA_MAP messages stalled for credits, node 1's link
 *	down, the process that owns them killed: it is gone within
 *	seconds (it sat in D state until the link came back).  Skipped on
 *	virtio-net and on the distribution (rds_faults.sh's link_down).
 *  flood_zero, flood_one: 200000 messages of 0
 *	and of 1 byte to a socket that never reads, ignoring congestion,
 *	with an RNR retry count of 7 and a 5 s send timeout.  Node 1's
 *	memory must grow by FLOOD_BOUND_KIB at most: the flood must be held
 *	back (node 1 stops reposting receive buffers, the sender meets RNR
 *	NAKs), and every message accepted is delivered once, in order, when
 *	the reader wakes up.  Modules without that bound (before "received
 *	messages count their true size; a peer ignoring congestion is held
 *	back") fail them, by design: the flood is stopped once node 1 has
 *	grown by FLOOD_STOP_KIB, before the guest runs out of memory.  They
 *	are skipped where node 1 runs the distribution, which has no such
 *	bound.
 *  ping_flood: a peer that grants node 1 only the credits for its
 *	congestion map and then sends PING_FLOOD pings: node 1 answers
 *	each with a pong it cannot send.  It may hold 64 of them at most
 *	(RDS_CONN_PONGS_MAX), counts the rest in send_pong_dropped, and
 *	its slab grows by PING_BOUND_KIB at most; once granted credits it
 *	sends the pongs it held, no more, and answers a later ping.
 *	Skipped where node 1 runs the distribution, which answers every
 *	ping without bound.
 *  conn_limit: requests on new TOS values beyond node 1's per-peer limit
 *	(net.rds.conn_max_per_peer, set to what exists and two) and its
 *	total (conn_max) are refused and counted (conn_refused_limit); a
 *	local send that needs a new connection fails with ECONNREFUSED;
 *	the connections taken and the honest one keep working.
 *  conn_idle_reap: with net.rds.conn_idle_ms at 2 s, a hostile QP that
 *	sent a message and then only acknowledges gets node 1's ACK probe
 *	(carrying node 1's ACK of the message) and is then dropped and
 *	counted (conn_reaped_idle); one holding a message node 1 sent and
 *	never acknowledged stays.  Both skipped where node 1 runs the
 *	distribution, which has neither limit nor reaping.
 *
 * After every case: the honest kernel connection still carries messages
 * both ways (also while the hostile QP is still there), node 1's QPs less
 * its connected IB connections, its MRs and its socket and MR counters are
 * back where they were, and (bench) its kernel log is clean.
 *
 * Where node 1 runs the distribution's module: the connect-request lies
 * are skipped (it takes every such request, and a connection to
 * 127.0.0.1 over IB then retries for ever); where it differs from the wire
 * document's rules (a short fragment delivered with stale bytes, an ACK of
 * 2^64 - 1 that stops every later ACK), the case says so and skips.
 *
 * Run like rds_remote, on both nodes with the same cases; control
 * connection on TCP port 18633 (rds_peer.h).  Environment (vm-run.sh):
 * RDS_NODE, RDS_ADDR, RDS_PEER_ADDR, RDS_MODULES_ALL.
 *
 * Usage: rds_hostile [-n NODE] [-a ADDR] [-p PEER] [-c PORT] [-l] [CASE...]
 * Without CASE, every case.
 */
#include "rds_hostile.h"

/* The cases, in the order both nodes run them. */
static const struct rt_case cases[] = {
	RT_CASE(src_loopback, 120),
	RT_CASE(src_victim, 120),
	RT_CASE(src_third_host, 120),
	RT_CASE(dst_loopback, 120),
	RT_CASE(honest_request, 120),
	RT_CASE(reject_reason, 120),
	RT_CASE(src_gid, 120),
	RT_CASE(live_conn_kept, 120),
	RT_CASE(peer_restart, 120),
	RT_CASE(src6_loopback, 120),
	RT_CASE(src6_victim, 120),
	RT_CASE(src6_third_host, 120),
	RT_CASE(dst6_loopback, 120),
	RT_CASE(src6_mapped, 120),
	RT_CASE(honest_request6, 120),
	RT_CASE(wire_sane, 180),
	RT_CASE(bad_csum, 180),
	RT_CASE(len_overrun, 240),
	RT_CASE(bad_exthdr, 180),
	RT_CASE(bad_credit, 180),
	RT_CASE(bad_ack, 180),
	RT_CASE(close_unacked, 180),
	RT_CASE(free_unacked, 180),
	RT_CASE(use_once_unacked, 180),
	RT_CASE(kill_stalled, 240),
	RT_CASE(flood_zero, 300),
	RT_CASE(flood_one, 300),
	RT_CASE(ping_flood, 180),
	RT_CASE(conn_limit, 180),
	RT_CASE(conn_idle_reap, 180),
};

int main(int argc, char **argv)
{
	if (argc == 1 && !getenv("RDS_NODE")) {
		printf("1..0 # SKIP needs the two guests of vm-run.sh\n");
		return RT_EXIT_SKIP;
	}
	return rds_peer_main(argc, argv, cases, ARRAY_SIZE(cases), CTL_PORT,
			     PORT_BASE);
}
