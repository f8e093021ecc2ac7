// SPDX-License-Identifier: GPL-2.0
/*
 * A connection's receive side: duplicate suppression, pings, delivery to
 * the socket layer and the peer's congestion map (wire sections 5.4, 7
 * and 10).
 */
#include <linux/workqueue.h>
#include <net/ipv6.h>

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
	if (!rds_conn_enqueue_pong(conn, m, false)) {
		rds_msg_put(m);
		goto dropped;
	}
	queue_work(rds_conn_wq, &conn->send_w);
	return;
dropped:
	rds_stat_inc(RDS_STAT_SEND_PONG_DROPPED);
}

/*
 * Multipath (connection.h, wire 10.6).  The handshake is a probe, a
 * ping from port RDS_MP_PROBE_PORT to port 0, and its pong, from port 0
 * to RDS_MP_PROBE_PORT, on path 0; each carries NPATHS (how many paths
 * its sender would take) and, from a node that names a connection's
 * path in the low bits of its source port, SPORT_IDX.  Ours:
 *  - the end that accepted path 0 (TCP: the higher address) probes
 *    each time path 0 comes up (rds_zc_conn_mp_probe()), with NPATHS
 *    RDS_CONN_PATHS once the pair agreed on that, else 1: a peer
 *    without SPORT_IDX (the distribution's 6.1 and 6.12) takes the
 *    smaller count, and would pair its paths with ours by the order of
 *    their connections, which breaks exactly-once delivery across a
 *    reconnect of several paths (wire 10.6 rule 9);
 *  - a probe is answered always, with NPATHS and SPORT_IDX when the
 *    probe had SPORT_IDX, else without extensions (one path);
 *  - either frame sets npaths to RDS_CONN_PATHS when it has SPORT_IDX
 *    and NPATHS >= RDS_CONN_PATHS and every path exists within the
 *    limits (rds_conn_mp_reserve()), else to 1;
 *  - a pong that says RDS_CONN_PATHS to a probe that said 1 is
 *    followed by a second probe that says RDS_CONN_PATHS, so that the
 *    peer agrees too;
 *  - when npaths becomes RDS_CONN_PATHS the lower address connects
 *    paths 1 ... (and reconnects each after a drop: conn_state.c).
 * Never on a transport that is not mp_capable (IB: wire 10.2).
 */
#define RDS_MP_PROBE_PORT	1
#define RDS_EXTHDR_NPATHS	5	/* be16 */
#define RDS_EXTHDR_SPORT_IDX	8	/* u8, 0 */

/* What a handshake frame says: NPATHS (0: none) and SPORT_IDX. */
static void rds_conn_mp_parse(const u8 *ext, u16 *npaths, bool *idx)
{
	/* Payload sizes of the types known to 6.x and later kernels. */
	static const u8 size[] = { 0, 4, 4, 8, 0, 2, 4, 8, 1 };
	unsigned int pos = 0;

	*npaths = 0;
	*idx = false;
	while (pos < RDS_HDR_EXT_SPACE) {
		u8 t = ext[pos];

		if (!t || t >= ARRAY_SIZE(size) ||
		    pos + 1 + size[t] > RDS_HDR_EXT_SPACE)
			return;
		if (t == RDS_EXTHDR_NPATHS)
			*npaths = ext[pos + 1] << 8 | ext[pos + 2];
		else if (t == RDS_EXTHDR_SPORT_IDX)
			*idx = true;
		pos += 1 + size[t];
	}
}

/* Write NPATHS = @npaths and SPORT_IDX into @m's extension space. */
static void rds_conn_mp_ext(struct rds_msg *m, u8 npaths)
{
	m->exthdr[0] = RDS_EXTHDR_NPATHS;
	m->exthdr[1] = 0;	/* be16 */
	m->exthdr[2] = npaths;
	m->exthdr[3] = RDS_EXTHDR_SPORT_IDX;
	m->exthdr[4] = 0;
}

/*
 * A handshake frame on path 0 of an mp_capable connection: note it for
 * mp_w.  Return: true if @m is one (the caller consumes it).
 */
static bool rds_conn_mp_frame(struct rds_conn *conn, const struct rds_msg *m)
{
	bool probe = !m->dport && m->sport == htons(RDS_MP_PROBE_PORT);
	bool pong = !m->sport && m->dport == htons(RDS_MP_PROBE_PORT);
	u16 npaths;
	bool idx;

	if (!probe && !pong)
		return false;
	rds_conn_mp_parse(m->exthdr, &npaths, &idx);
	spin_lock_bh(&conn->lock);
	if (probe) {
		conn->mp_probe_rx = true;
		conn->mp_probe_idx = idx;
	} else {
		conn->mp_pong_rx = true;
	}
	conn->mp_rx_npaths = npaths;
	conn->mp_rx_idx = idx;
	spin_unlock_bh(&conn->lock);
	if (!test_bit(RDS_CONN_DEAD, &conn->flags))
		queue_work(rds_conn_wq, &conn->mp_w);
	return true;
}

/* Queue a probe saying @npaths on @base.  Context: process. */
static void rds_conn_mp_send_probe(struct rds_conn *base, u8 npaths)
{
	struct rds_msg *m = rds_msg_alloc(0, GFP_KERNEL);

	if (!m)
		return;
	m->sport = htons(RDS_MP_PROBE_PORT);
	rds_conn_mp_ext(m, npaths);
	spin_lock_bh(&base->lock);
	base->mp_adv = npaths;
	spin_unlock_bh(&base->lock);
	rds_conn_enqueue(base, m);
	if (!test_bit(RDS_CONN_DEAD, &base->flags))
		queue_work(rds_conn_wq, &base->send_w);
}

/**
 * rds_zc_conn_mp_probe() - path 0 came up on a connection we accepted
 * @conn: the connection
 *
 * Starts the multipath handshake (see above); nothing for a path > 0
 * or a transport that is not mp_capable.
 *
 * Context: process context.
 */
void rds_zc_conn_mp_probe(struct rds_conn *conn)
{
	if (!conn->trans->mp_capable || conn->path)
		return;
	/* Paths > 0 are accepted again once this handshake says so. */
	spin_lock_bh(&conn->lock);
	WRITE_ONCE(conn->mp_peer_idx, false);
	spin_unlock_bh(&conn->lock);
	rds_conn_mp_send_probe(conn, READ_ONCE(conn->npaths) == RDS_CONN_PATHS ?
				     RDS_CONN_PATHS : 1);
}
EXPORT_SYMBOL_GPL(rds_zc_conn_mp_probe);

static void rds_conn_mp_connect(struct rds_conn *p, void *arg)
{
	rds_conn_connect_if_down(p);
}

/* mp_w: act on the handshake frames path 0 received (see above). */
void rds_conn_mp_work(struct work_struct *work)
{
	struct rds_conn *conn = container_of(work, struct rds_conn, mp_w);
	bool probe, probe_idx, pong, idx, all = false;
	struct rds_msg *m;
	u8 npaths, adv;
	u16 rx_npaths;

	if (test_bit(RDS_CONN_DEAD, &conn->flags))
		return;
	spin_lock_bh(&conn->lock);
	probe = conn->mp_probe_rx;
	probe_idx = conn->mp_probe_idx;
	pong = conn->mp_pong_rx;
	rx_npaths = conn->mp_rx_npaths;
	idx = conn->mp_rx_idx;
	conn->mp_probe_rx = false;
	conn->mp_pong_rx = false;
	spin_unlock_bh(&conn->lock);
	if (!probe && !pong)
		return;

	if (idx)
		all = rds_conn_mp_reserve(conn);
	npaths = idx && all && rx_npaths >= RDS_CONN_PATHS ? RDS_CONN_PATHS : 1;
	spin_lock_bh(&conn->lock);
	if (idx) {
		WRITE_ONCE(conn->mp_peer_idx, true);
		WRITE_ONCE(conn->mp_peer_named, true);
	}
	WRITE_ONCE(conn->npaths, npaths);
	adv = conn->mp_adv;
	spin_unlock_bh(&conn->lock);

	if (probe) {
		m = rds_msg_alloc(0, GFP_KERNEL);
		if (m) {
			m->dport = htons(RDS_MP_PROBE_PORT);
			if (probe_idx)
				rds_conn_mp_ext(m, all ? RDS_CONN_PATHS : 1);
			if (rds_conn_enqueue_pong(conn, m, true))
				queue_work(rds_conn_wq, &conn->send_w);
		}
	}
	if (pong && npaths == RDS_CONN_PATHS && adv != RDS_CONN_PATHS)
		rds_conn_mp_send_probe(conn, RDS_CONN_PATHS);

	if (npaths > 1 && ipv6_addr_cmp(&conn->laddr, &conn->faddr) < 0 &&
	    rds_conn_state(conn) == RDS_CONN_UP)
		rds_conn_mp_each(conn, rds_conn_mp_connect, NULL);
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
	/* The multipath handshake: answered whatever ping_enable says. */
	if (unlikely(conn->trans->mp_capable && !conn->path &&
		     (!m->dport || !m->sport) && rds_conn_mp_frame(conn, m))) {
		WRITE_ONCE(conn->next_rx_seq, m->seq + 1);
		trace_rds_conn_recv(conn, m->seq, m->len, m->flags);
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
