// SPDX-License-Identifier: GPL-2.0
/*
 * The connection state machine (connection.h): connect and accept, the
 * ACK watchdog, drop, shutdown and reconnect with back-off.
 */
#include <linux/random.h>
#include <linux/workqueue.h>
#include <uapi/linux/rds.h>

#include "addr.h"
#include "conn_internal.h"
#include "cong.h"
#include "connection.h"
#include "message.h"
#include "rdma.h"
#include "stats.h"
#include "sysctl.h"
#include "trace.h"
#include "transport.h"

/* One transition, from @from only; exactly one caller wins it. */
bool rds_conn_set_state(struct rds_conn *conn, int from, int to,
			const char *reason)
{
	if (atomic_cmpxchg(&conn->state, from, to) != from)
		return false;
	trace_rds_conn_state(conn, &conn->laddr, &conn->faddr, conn->tos, from,
			     to, reason);
	return true;
}

/*
 * Whether a path > 0 of a multipath pair may connect now: only once path
 * 0 is up and its handshake, in this incarnation, agreed on the paths and
 * said that the peer names them by source port (connection.h).  Before,
 * a restarted peer could take it for its path 0; rds_conn_mp_work()
 * connects it after the handshake.
 */
static bool rds_conn_mp_ready(const struct rds_conn *conn)
{
	const struct rds_conn *base = conn->base;

	return !conn->path ||
	       (rds_conn_state(base) == RDS_CONN_UP &&
		READ_ONCE(base->mp_peer_idx) &&
		conn->path < READ_ONCE(base->npaths));
}

/*
 * A path > 0 that the peer is the one to connect (accept_only), or that
 * may not connect yet, has path 0 connect (or poke the peer) instead:
 * the handshake on it makes the paths come (connection.h).
 */
static bool rds_conn_defers_to_base(const struct rds_conn *conn)
{
	return conn->path && (conn->accept_only || !rds_conn_mp_ready(conn));
}

/* Something waits to be sent: connect, unless already on the way. */
void rds_conn_connect_if_down(struct rds_conn *conn)
{
	if (rds_conn_defers_to_base(conn))
		conn = conn->base;
	if (rds_conn_state(conn) == RDS_CONN_DOWN &&
	    !test_bit(RDS_CONN_DEAD, &conn->flags) &&
	    !test_and_set_bit(RDS_CONN_RECONNECT_PENDING, &conn->flags))
		queue_delayed_work(rds_conn_wq, &conn->connect_w, 0);
}

/*
 * After a drop: 0 the first time after UP, then random delays below a
 * bound that doubles from reconnect_min_delay_ms to reconnect_max_delay_ms
 * (wire section 1.8).  Two peers that both reconnect thus stop colliding.
 * Caller holds work_mutex.
 */
static void rds_conn_queue_reconnect(struct rds_conn *conn)
{
	unsigned long min_j = max(msecs_to_jiffies(rds_sysctl_reconnect_min_ms()), 1UL);
	unsigned long max_j = max(msecs_to_jiffies(rds_sysctl_reconnect_max_ms()), min_j);
	unsigned long bound = conn->reconnect_delay;
	unsigned long delay = 0;

	if (!bound) {
		conn->reconnect_delay = min_j;
	} else {
		delay = get_random_u32() % bound;
		conn->reconnect_delay = min(bound * 2, max_j);
	}
	if (test_and_set_bit(RDS_CONN_RECONNECT_PENDING, &conn->flags))
		return;
	rds_stat_inc(RDS_STAT_CONN_RECONNECT);
	queue_delayed_work(rds_conn_wq, &conn->connect_w, delay);
}

/* connect_w: DOWN to CONNECTING, and the transport connects. */
void rds_conn_connect_work(struct work_struct *work)
{
	struct rds_conn *conn = container_of(to_delayed_work(work),
					     struct rds_conn, connect_w);
	int ret;

	clear_bit(RDS_CONN_RECONNECT_PENDING, &conn->flags);
	if (rds_conn_defers_to_base(conn)) {
		rds_conn_connect_if_down(conn);	/* path 0 instead */
		return;
	}
	mutex_lock(&conn->work_mutex);
	if (!test_bit(RDS_CONN_DEAD, &conn->flags) &&
	    rds_conn_set_state(conn, RDS_CONN_DOWN, RDS_CONN_CONNECTING,
			       "connect")) {
		rds_stat_inc(RDS_STAT_CONN_CONNECT);
		clear_bit(RDS_CONN_RACE_REFUSED, &conn->flags);
		ret = conn->trans->conn_connect(conn);
		if (ret)
			rds_zc_conn_drop(conn, "connect failed");
	}
	mutex_unlock(&conn->work_mutex);
}

/*
 * Why the watchdog drops @conn, in the kernel log: the message that
 * waited, and whether the transport still holds work it posted and has
 * not completed for as long (a QP that stopped moving) or not (the peer
 * did not acknowledge what reached it).
 */
static void rds_conn_watchdog_report(struct rds_conn *conn, u64 seq,
				     unsigned long waited)
{
	unsigned long idle = 0;
	unsigned int posted = 0;

	if (conn->trans->conn_tx_state)
		conn->trans->conn_tx_state(conn, &posted, &idle);
	pr_warn_ratelimited("rds_zc: %pI6c to %pI6c: message %llu not acknowledged in %u ms; %u work requests posted, last send completion %u ms ago: dropping the connection\n",
			    &conn->laddr, &conn->faddr, seq,
			    jiffies_to_msecs(waited), posted,
			    jiffies_to_msecs(idle));
}

/*
 * Whether @conn's sends still move: work requests are posted and one
 * completed less than @timeout ago.  The peer then takes what we send,
 * only more slowly than it acknowledges (a long send queue of large
 * RDMAs on a slow host): waiting on is right.  A QP that stopped stops
 * completing; a peer that takes but never acknowledges stops our sends
 * once the send buffer is full; either way this turns false.
 */
static bool rds_conn_tx_moving(struct rds_conn *conn, unsigned long timeout)
{
	unsigned long idle = 0;
	unsigned int posted = 0;

	if (!conn->trans->conn_tx_state)
		return false;
	conn->trans->conn_tx_state(conn, &posted, &idle);
	return posted && idle < timeout;
}

/*
 * Sample the send queue once a watchdog period: tx_stuck_since is when
 * work was first seen posted since the last send completion, 0 while
 * nothing is posted.  A lower bound, to a period, of how long the QP has
 * sat on work it does not complete (rds_conn_tx_stuck()).
 */
static void rds_conn_tx_sample(struct rds_conn *conn)
{
	unsigned long since = READ_ONCE(conn->tx_stuck_since);
	unsigned long idle = 0, now = jiffies;
	unsigned int posted = 0;

	if (!conn->trans->conn_tx_state)
		return;
	conn->trans->conn_tx_state(conn, &posted, &idle);
	if (!posted)
		since = 0;
	else if (!since || idle < now - since)	/* one completed since */
		since = now ?: 1;
	WRITE_ONCE(conn->tx_stuck_since, since);
}

/*
 * How long work has sat posted on @conn with no send completion since,
 * as far as the watchdog's samples tell (0: not stuck), and how much is
 * posted (@posted).  Takes the sample: the next incarnation starts
 * afresh.
 */
static unsigned long rds_conn_tx_stuck(struct rds_conn *conn,
				       unsigned int *posted)
{
	unsigned long since = xchg(&conn->tx_stuck_since, 0);
	unsigned long idle = 0, now = jiffies;

	*posted = 0;
	if (!since || !conn->trans->conn_tx_state)
		return 0;
	conn->trans->conn_tx_state(conn, posted, &idle);
	if (!*posted || idle < now - since)
		return 0;
	return now - since;
}

/*
 * A connection going down while its QP sat on posted work for
 * RDS_CONN_STUCK_REPORT_MS or more says so in the kernel log: when the
 * peer's watchdog tears it down, our end's send queue may be what
 * stopped (soft-RoCE that neither sends nor retransmits, our ACKs
 * behind it), which only this end can see.
 */
#define RDS_CONN_STUCK_REPORT_MS	2000

static void rds_conn_stuck_report(struct rds_conn *conn)
{
	unsigned int posted;
	unsigned long stuck = rds_conn_tx_stuck(conn, &posted);

	if (stuck < msecs_to_jiffies(RDS_CONN_STUCK_REPORT_MS))
		return;
	pr_warn_ratelimited("rds_zc: %pI6c to %pI6c: going down with %u work requests posted and none completed for %u ms\n",
			    &conn->laddr, &conn->faddr, posted,
			    jiffies_to_msecs(stuck));
}

/*
 * A connection whose oldest message waits longer than unacked_timeout_ms
 * for its acknowledgment, while its sends do not move, is dead even if
 * the transport did not notice: drop it, and the reconnect resends what
 * the peer may not have.  A soft-RoCE QP can stop moving in RTS, after
 * its link went down or under frame loss (6.12's rxe: its work requests
 * stay posted and the peer receives nothing more, rds_zc-testing.rst),
 * and RDMA operations in flight then end as RDS_RDMA_DROPPED.
 *
 * For unacked_timeout_ms after a connect request came for it while it
 * was up (rds_conn_challenge()), the bound is RDS_CONN_CHALLENGE_MS if
 * lower: a peer that restarted reconnects that soon.
 */
void rds_conn_watchdog_work(struct work_struct *work)
{
	struct rds_conn *conn = container_of(to_delayed_work(work),
					     struct rds_conn, watchdog_w);
	unsigned int ms = rds_sysctl_unacked_timeout_ms();
	unsigned long challenged = READ_ONCE(conn->challenged);
	unsigned long timeout = msecs_to_jiffies(ms);
	unsigned long waited = 0;
	struct rds_msg *m;
	u64 seq = 0;

	if (rds_conn_state(conn) != RDS_CONN_UP ||
	    test_bit(RDS_CONN_DEAD, &conn->flags))
		return;
	rds_conn_tx_sample(conn);
	if (challenged && ms && time_before(jiffies, challenged + timeout) &&
	    ms > RDS_CONN_CHALLENGE_MS) {
		ms = RDS_CONN_CHALLENGE_MS;
		timeout = msecs_to_jiffies(ms);
	}
	spin_lock_bh(&conn->lock);
	m = list_first_entry_or_null(&conn->retrans, struct rds_msg, conn_item);
	if (ms && m && time_after(jiffies, m->xmit_jiffies + timeout)) {
		waited = jiffies - m->xmit_jiffies;
		seq = m->seq;
	}
	spin_unlock_bh(&conn->lock);
	if (waited && !rds_conn_tx_moving(conn, timeout)) {
		rds_stat_inc(RDS_STAT_CONN_ACK_TIMEOUT);
		rds_conn_watchdog_report(conn, seq, waited);
		/* Reported: the shutdown does not say it again. */
		WRITE_ONCE(conn->tx_stuck_since, 0);
		rds_zc_conn_drop(conn, "no ACK progress");
		return;
	}
	queue_delayed_work(rds_conn_wq, &conn->watchdog_w, HZ);
}

static void rds_conn_mp_holds(struct rds_conn *p, void *arg)
{
	if (p->path && !rds_conn_empty(p))
		*(bool *)arg = true;
}

/*
 * Whether a path of a multipath pair (connection.h) reconnects, or the
 * higher address pokes for it, although nothing of its own waits:
 *  - path 0, when another path of the pair holds messages: they go
 *    once path 0 is up again and its handshake agreed on the paths;
 *  - a path > 0 of the lower address, once path 0 is up and its
 *    handshake in this incarnation said the peer names paths by source
 *    port, whether or not anything waits: the peer's messages on it
 *    wait for us to connect it (wire 10.6 rule 7).  Before that,
 *    rds_conn_mp_work() connects it after the handshake.
 * Context: process.
 */
static bool rds_conn_mp_wanted(struct rds_conn *conn)
{
	struct rds_conn *base = conn->base;
	u8 npaths = READ_ONCE(base->npaths);
	bool wanted = false;

	if (!conn->trans->mp_capable || npaths <= 1 ||
	    test_bit(RDS_CONN_DEAD, &conn->flags))
		return false;
	if (conn->path)
		return !conn->accept_only && rds_conn_mp_ready(conn);
	rds_conn_mp_each(conn, rds_conn_mp_holds, &wanted);
	return wanted;
}

/*
 * Whether the pair's path 0 reconnects, although nothing waits, for the
 * peer's congestion map: it marks ports congested, and the update that
 * freed them may have been lost with the connection (a map goes out
 * once, then again only on the next connect).  A sender refused for such
 * a port sends nothing that would connect, and one that blocks waits
 * for that update; only a new connection brings the peer's map.  Not
 * for a pair unused for conn_idle_ms (a peer gone for good is not
 * called forever): a sender then connects it (rds_send_remote()).
 */
static bool rds_conn_map_stale(struct rds_conn *conn)
{
	unsigned long idle = msecs_to_jiffies(rds_sysctl_conn_idle_ms());

	return !conn->path && rds_cong_map_any(conn->fmap) &&
	       (!idle || time_before(jiffies, READ_ONCE(conn->last_used) + idle));
}

/*
 * shutdown_w: after a drop, tear the transport down, requeue or drop
 * what the peer may not have, and reconnect if anything waits.
 */
void rds_conn_shutdown_work(struct work_struct *work)
{
	struct rds_conn *conn = container_of(work, struct rds_conn, shutdown_w);
	struct rds_msg *m, *tmp;
	LIST_HEAD(dropped);
	bool pending;

	mutex_lock(&conn->work_mutex);
	if (test_bit(RDS_CONN_DEAD, &conn->flags) ||
	    !rds_conn_set_state(conn, RDS_CONN_ERROR, RDS_CONN_DISCONNECTING,
				"shutdown"))
		goto out;

	rds_conn_stuck_report(conn);
	conn->trans->conn_shutdown(conn);
	if (conn->xmit_msg) {
		rds_msg_put(conn->xmit_msg);
		WRITE_ONCE(conn->xmit_msg, NULL);
	}

	/*
	 * What the peer may not have: again, first, marked (wire 5.4).
	 * Not a message with an RDMA operation, which may have run: it
	 * ends as dropped (wire 9), unless it was reported already.  Not
	 * one whose socket is closed either (rds_conn_cancel()), nor a
	 * pong: its ping came to the incarnation that is going.  Not an
	 * ACK probe, sent or not: every retransmission asks for the ACK
	 * anyway, and a probe alone would reconnect, forever, to a peer
	 * that went away (the reaper frees a connection only once nothing
	 * is queued).  Nor a multipath probe: the next incarnation sends
	 * its own, and one alone would poke a peer that only knocked.
	 */
	spin_lock_bh(&conn->lock);
	rds_conn_pongs_take(conn, &dropped);
	list_for_each_entry_safe(m, tmp, &conn->retrans, conn_item) {
		if (m->op || rds_conn_msg_orphan(m) || rds_conn_msg_is_probe(m))
			list_move_tail(&m->conn_item, &dropped);
		else
			m->flags |= RDS_FLAG_RETRANSMITTED |
				    RDS_FLAG_ACK_REQUIRED;
	}
	list_for_each_entry_safe(m, tmp, &conn->send_queue, conn_item)
		if (rds_conn_msg_is_probe(m))
			list_move_tail(&m->conn_item, &dropped);
	list_splice_init(&conn->retrans, &conn->send_queue);
	pending = !list_empty(&conn->send_queue);
	if (!conn->path)	/* the next handshake says it again */
		WRITE_ONCE(conn->mp_peer_idx, false);
	spin_unlock_bh(&conn->lock);
	list_for_each_entry(m, &dropped, conn_item) {
		if (!m->op)
			continue;
		rds_rdma_op_done(m->op, RDS_RDMA_DROPPED);
	}
	rds_conn_msgs_done(&dropped);

	WRITE_ONCE(conn->down_since, jiffies);
	rds_conn_set_state(conn, RDS_CONN_DISCONNECTING, RDS_CONN_DOWN, "down");
	if (pending || rds_conn_mp_wanted(conn) || rds_conn_map_stale(conn))
		rds_conn_queue_reconnect(conn);
out:
	mutex_unlock(&conn->work_mutex);
}

/**
 * rds_zc_conn_connect() - connect now if the connection is down
 * @conn: the connection
 *
 * For a transport whose rules leave the connecting to one end: the
 * other end's attempt asks this one to connect (TCP, where the lower
 * address connects).  Nothing happens unless @conn is DOWN.
 *
 * Context: any.
 */
void rds_zc_conn_connect(struct rds_conn *conn)
{
	rds_conn_connect_if_down(conn);
}
EXPORT_SYMBOL_GPL(rds_zc_conn_connect);

/**
 * rds_zc_conn_poked() - the peer asks us to connect to it
 * @conn: the connection to the peer
 *
 * Where one end always connects (TCP: the lower address), the other
 * asks for a connection by knocking.  It knocks only when it has none:
 * a connection that is down connects; one that is up may be stale (the
 * peer restarted, or lost its end in a reset we never heard of), and
 * would stay until we send on it or keepalive gives up.  It is
 * challenged as a live connection is for a connect request
 * (rds_conn_challenge()): a peer that lost its end answers the ACK probe
 * with a reset, and the connection drops and connects again; one that
 * is there (a knock that crossed our connect, a host claiming the
 * peer's address) acknowledges it, and the connection stays.
 *
 * Context: any.
 */
void rds_zc_conn_poked(struct rds_conn *conn)
{
	if (rds_conn_state(conn) == RDS_CONN_UP)
		rds_conn_challenge(conn);
	else
		rds_conn_connect_if_down(conn);
}
EXPORT_SYMBOL_GPL(rds_zc_conn_poked);

/**
 * rds_zc_conn_accept() - the peer asks to connect: may it?
 * @conn: the connection its request names
 *
 * Only a connection that is down is taken over by an incoming request.
 * One that is up stays: the request may come from a host that claims
 * the peer's address.  It is refused and counted (conn_refused_live),
 * and the peer of the live connection is asked whether it is still there
 * (rds_conn_challenge()); a peer that restarted is not, the connection
 * then drops within RDS_CONN_CHALLENGE_MS and its next request is taken.
 * The distribution drops the live connection at once.
 *
 * Both ends connecting at once are told apart by address, so that the
 * race ends in one round: the end with the lower address yields, gives
 * up its own attempt and accepts; the higher one refuses, and its own
 * request is the one accepted.  The distribution refuses whenever it is
 * connecting (wire 1.5).  Against it as the higher end both refuse, and
 * its refusal of our request tells us so (rds_zc_conn_refused()): in
 * the next race we yield.  Left to the random back-off, the duel never
 * ends where one connect attempt lasts longer than the longest back-off
 * (the distribution's is at most a second; a sanitizer kernel under
 * emulation takes longer).
 *
 * Context: any.
 * Return: 0 if the caller now owns the connect (state CONNECTING),
 * -EINPROGRESS if the caller should replace its own attempt in progress
 * by this request (state stays CONNECTING), -EBUSY if it must reject
 * the request because its own attempt wins the race, or -EAGAIN if it
 * must reject it for now (dead, up and challenged, or going down).
 * The transport tells the peer which of the two rejects it is, so that
 * only a race refusal counts as one (rds_zc_conn_refused()).
 */
int rds_zc_conn_accept(struct rds_conn *conn)
{
	if (test_bit(RDS_CONN_DEAD, &conn->flags))
		return -EAGAIN;
	if (rds_conn_set_state(conn, RDS_CONN_DOWN, RDS_CONN_CONNECTING,
			       "accept")) {
		rds_stat_inc(RDS_STAT_CONN_ACCEPT);
		return 0;
	}
	switch (rds_conn_state(conn)) {
	case RDS_CONN_UP:
		rds_stat_inc(RDS_STAT_CONN_REFUSED_LIVE);
		rds_conn_challenge(conn);
		break;
	case RDS_CONN_CONNECTING:
		if (ipv6_addr_cmp(&conn->laddr, &conn->faddr) < 0 ||
		    test_and_clear_bit(RDS_CONN_RACE_YIELD_NEXT, &conn->flags)) {
			rds_stat_inc(RDS_STAT_CONN_RACE_YIELD);
			return -EINPROGRESS;
		}
		set_bit(RDS_CONN_RACE_REFUSED, &conn->flags);
		rds_stat_inc(RDS_STAT_CONN_RACE_REFUSE);
		return -EBUSY;
	default:	/* going down: the peer retries */
		break;
	}
	return -EAGAIN;
}
EXPORT_SYMBOL_GPL(rds_zc_conn_accept);

/**
 * rds_zc_conn_refused() - the peer refused our connect request in a race
 * @conn: a connection whose own attempt the peer turned down
 *
 * Called only for a reject that may be the peer's own attempt winning a
 * race (the transport leaves out rejects that say "not now": a peer of
 * ours going down, rds_zc_conn_accept()).  Where this attempt refused
 * the peer's racing request, the peer did not yield to us although our
 * address is the higher one: it refuses whenever it connects (the
 * distribution does).  The next race is then ours to yield.  The caller
 * drops @conn.
 *
 * Context: any.
 */
void rds_zc_conn_refused(struct rds_conn *conn)
{
	if (!test_and_clear_bit(RDS_CONN_RACE_REFUSED, &conn->flags))
		return;
	rds_stat_inc(RDS_STAT_CONN_RACE_REFUSED);
	set_bit(RDS_CONN_RACE_YIELD_NEXT, &conn->flags);
}
EXPORT_SYMBOL_GPL(rds_zc_conn_refused);

/**
 * rds_zc_conn_connected() - the transport connection is established
 * @conn: a connection in CONNECTING
 *
 * Our congestion map goes out first, then retransmissions, then the rest.
 *
 * Context: any.
 */
void rds_zc_conn_connected(struct rds_conn *conn)
{
	if (!rds_conn_set_state(conn, RDS_CONN_CONNECTING, RDS_CONN_UP, "up"))
		return;
	rds_stat_inc(RDS_STAT_CONN_UP);
	WRITE_ONCE(conn->reconnect_delay, 0);
	WRITE_ONCE(conn->challenged, 0);
	WRITE_ONCE(conn->tx_stuck_since, 0);
	clear_bit(RDS_CONN_RACE_YIELD_NEXT, &conn->flags);
	set_bit(RDS_CONN_CONG_PENDING, &conn->flags);
	/* Being destroyed: queue nothing (see rds_conn_destroy()). */
	if (test_bit(RDS_CONN_DEAD, &conn->flags))
		return;
	queue_work(rds_conn_wq, &conn->send_w);
	mod_delayed_work(rds_conn_wq, &conn->watchdog_w, HZ);
}
EXPORT_SYMBOL_GPL(rds_zc_conn_connected);

/* Drop @conn alone.  Return: the state it left, or -1 if none. */
static int rds_conn_drop_one(struct rds_conn *conn, const char *reason)
{
	int old = rds_conn_state(conn);

	while (old == RDS_CONN_CONNECTING || old == RDS_CONN_UP) {
		if (rds_conn_set_state(conn, old, RDS_CONN_ERROR, reason)) {
			atomic_inc(&conn->drops);
			rds_stat_inc(RDS_STAT_CONN_DROP);
			queue_work(rds_conn_wq, &conn->shutdown_w);
			return old;
		}
		old = rds_conn_state(conn);
	}
	return -1;
}

static void rds_conn_mp_drop(struct rds_conn *p, void *arg)
{
	rds_conn_drop_one(p, "another path of the pair went down");
}

/**
 * rds_zc_conn_drop() - the transport connection failed: tear it down
 * @conn: the connection
 * @reason: a few words for the trace
 *
 * Does nothing unless the connection is connecting or up.  The shutdown
 * work tears the transport down, requeues unacknowledged messages and
 * reconnects if anything waits to be sent.
 *
 * A path of a multipath pair (connection.h) that was up takes the
 * pair's other paths down with it: a path that breaks may mean that the
 * peer restarted, whose other paths are then stale too, and a new
 * incarnation of path 0 must agree on the paths again before any other
 * path is connected, or a restarted peer would take a path for path 0.
 * One that was still connecting goes alone (the peer refused it before
 * its handshake).
 *
 * Context: any.
 */
void rds_zc_conn_drop(struct rds_conn *conn, const char *reason)
{
	if (rds_conn_drop_one(conn, reason) == RDS_CONN_UP &&
	    conn->trans->mp_capable && READ_ONCE(conn->base->npaths) > 1)
		rds_conn_mp_each(conn, rds_conn_mp_drop, NULL);
}
EXPORT_SYMBOL_GPL(rds_zc_conn_drop);
