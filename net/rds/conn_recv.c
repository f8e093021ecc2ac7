// SPDX-License-Identifier: GPL-2.0
/*
 * A connection's receive side: duplicate suppression, pings, delivery to
 * the socket layer and the peer's congestion map (wire sections 5.4, 7
 * and 10).
 */
#include <linux/workqueue.h>

#include "cong.h"
#include "conn_internal.h"
#include "connection.h"
#include "message.h"
#include "stats.h"
#include "sysctl.h"
#include "trace.h"
#include "transport.h"

/*
 * A ping (wire 10.1): a message to port 0 from a port that is not.  The
 * answer, a pong, is a header-only message from port 0 to that port,
 * sequenced like any other; none goes to a congested port, and none
 * while RDS_CONN_PONGS_MAX wait on the connection already (a peer that
 * pings and never takes the answers).  Context: the receive path: the
 * send work takes it out.
 */
static void rds_conn_pong(struct rds_conn *conn, __be16 dport)
{
	struct rds_msg *m;

	rds_stat_inc(RDS_STAT_RECV_PING);
	if (!dport || rds_cong_test(conn->fmap, dport))
		return;
	/* The receive path is the only producer: the check holds. */
	if (READ_ONCE(conn->pongs) >= RDS_CONN_PONGS_MAX)
		goto dropped;
	m = rds_msg_alloc(0, GFP_ATOMIC);
	if (!m)
		return;	/* the pinger asks again */
	m->dport = dport;
	if (!rds_conn_enqueue_pong(conn, m)) {
		rds_msg_put(m);
		goto dropped;
	}
	queue_work(rds_conn_wq, &conn->send_w);
	return;
dropped:
	rds_stat_inc(RDS_STAT_SEND_PONG_DROPPED);
}

/**
 * rds_conn_recv() - a complete message arrived from the peer
 * @conn: the connection
 * @m: the message, with seq, flags and ports from its header; consumed
 * @bounded: refuse it (-EBUSY) if its socket is over its hard limit
 *
 * A retransmission of a message already received is dropped; anything
 * else is accepted and sets the next expected number, so that a peer
 * that restarted its numbering is followed (wire 5.4).  A ping is
 * answered, not delivered, while net.rds.ping_enable is set.
 *
 * Context: the transport's receive path, one at a time per connection.
 * Return: 0 when the message was taken (delivered, or dropped as a
 * duplicate or for want of a socket) and may be acknowledged; @m is
 * consumed.  -ESHUTDOWN: the reaper is taking the connection
 * (rds_conn_reapable()); @m is consumed, not acknowledged, and the
 * transport must drop the connection, so that the peer sends it again.
 * -EBUSY: the receiving socket is over its hard limit (a peer ignoring
 * congestion); -ENOMEM: no memory to queue it now.  In both cases @m was
 * not touched, and the transport keeps it, takes nothing more from the
 * peer, and offers it again later; dropping the connection instead would
 * end every RDMA operation on it.
 */
static int rds_conn_recv(struct rds_conn *conn, struct rds_msg *m,
			 bool bounded)
{
	struct rds_incoming *inc;
	int ret;

	/* A probe is not use: two idle peers' probes would keep both. */
	if (m->dport || m->sport)
		rds_conn_mark_used(conn);
	smp_mb();	/* the mark, then the bit (rds_conn_reapable()) */
	if (test_bit(RDS_CONN_REAPING, &conn->flags)) {
		rds_msg_put(m);
		return -ESHUTDOWN;	/* not acknowledged: sent again, elsewhere */
	}
	if (m->seq < conn->next_rx_seq && (m->flags & RDS_FLAG_RETRANSMITTED)) {
		trace_rds_conn_recv(conn, m->seq, m->len, m->flags);
		rds_stat_inc(RDS_STAT_RECV_DUP);
		rds_msg_put(m);
		return 0;
	}
	if (!m->dport && !m->sport) {	/* an ACK probe: acknowledge it */
		WRITE_ONCE(conn->next_rx_seq, m->seq + 1);
		trace_rds_conn_recv(conn, m->seq, m->len, m->flags);
		rds_stat_inc(RDS_STAT_RECV_ACK_PROBE);
		rds_msg_put(m);
		return 0;
	}
	if (!m->dport && rds_sysctl_ping_enable()) {
		WRITE_ONCE(conn->next_rx_seq, m->seq + 1);
		trace_rds_conn_recv(conn, m->seq, m->len, m->flags);
		rds_conn_pong(conn, m->sport);
		rds_msg_put(m);
		return 0;
	}
	inc = rds_inc_alloc(m, GFP_ATOMIC);
	if (!inc)
		return -ENOMEM;		/* @m stays the caller's */
	inc->saddr = conn->faddr;
	inc->sport = m->sport;
	inc->daddr = conn->laddr;
	inc->dport = m->dport;
	inc->scope = conn->dev_if;
	ret = rds_conn_up->deliver(conn->net, inc, bounded, &conn->rx_sock);
	if (ret) {
		rds_stat_inc(RDS_STAT_RECV_HELD_BACK);
		rds_inc_free(inc);	/* @m keeps the caller's reference */
		return ret;
	}
	/* @m is still ours: a reader may only have freed @inc. */
	WRITE_ONCE(conn->next_rx_seq, m->seq + 1);
	trace_rds_conn_recv(conn, m->seq, m->len, m->flags);
	atomic64_inc(&conn->rx_msgs);
	rds_stat_inc(RDS_STAT_RECV_REMOTE);
	rds_msg_put(m);		/* the incoming holds its own reference */
	return 0;
}

/**
 * rds_zc_conn_recv() - a complete message arrived from the peer
 * @conn: the connection
 * @m: the message, with seq, flags and ports from its header; consumed
 *
 * See rds_conn_recv(), bounded.
 * Context: the transport's receive path, one at a time per connection.
 * Return: as rds_conn_recv().
 */
int rds_zc_conn_recv(struct rds_conn *conn, struct rds_msg *m)
{
	return rds_conn_recv(conn, m, true);
}
EXPORT_SYMBOL_GPL(rds_zc_conn_recv);

/**
 * rds_zc_conn_recv_last() - a message the transport cannot keep
 * @conn: the connection, going down
 * @m: as for rds_zc_conn_recv()
 *
 * As rds_zc_conn_recv(), but a socket over its hard limit takes @m all
 * the same: the transport's connection is going down and it already
 * acknowledged @m to the peer (TCP acknowledges what its stack holds),
 * so @m is delivered now or lost.  Past the limit by at most what the
 * transport's connection held.
 *
 * Context: as rds_zc_conn_recv().
 * Return: as rds_conn_recv(), never -EBUSY.
 */
int rds_zc_conn_recv_last(struct rds_conn *conn, struct rds_msg *m)
{
	return rds_conn_recv(conn, m, false);
}
EXPORT_SYMBOL_GPL(rds_zc_conn_recv_last);

/**
 * rds_zc_conn_cong_recv() - the peer sent its congestion map
 * @conn: the connection
 * @m: the map, RDS_CONG_MAP_BYTES; consumed.  Other lengths are ignored,
 *     as by the distribution's RDS.
 *
 * Context: the transport's receive path.
 */
void rds_zc_conn_cong_recv(struct rds_conn *conn, struct rds_msg *m)
{
	/*
	 * The map of an address of this host is the one its sockets keep:
	 * a copy that went through a device is older than it.
	 */
	if (m->len == RDS_CONG_MAP_BYTES && !conn->local_peer) {
		rds_stat_inc(RDS_STAT_CONG_UPDATE_RECV);
		rds_cong_map_update_le(conn->fmap, m->pages, m->nr_pages);
	}
	rds_msg_put(m);
}
EXPORT_SYMBOL_GPL(rds_zc_conn_cong_recv);
