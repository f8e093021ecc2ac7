// SPDX-License-Identifier: GPL-2.0
/*
 * A connection's send side: sequence numbers, the send and retransmit
 * queues, the congestion map update, the ACK probe, acknowledgments and
 * cancellation (connection.h; wire sections 5 and 7).
 */
#include <linux/rculist.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>
#include <uapi/linux/rds.h>

#include "addr.h"
#include "cong.h"
#include "conn_internal.h"
#include "connection.h"
#include "message.h"
#include "rdma.h"
#include "stats.h"
#include "sysctl.h"
#include "trace.h"
#include "transport.h"

/* How long a sender waits for the ACK of its last message before asking. */
#define RDS_ACK_PROBE_DELAY	max(msecs_to_jiffies(10), 2UL)
/* A congestion update that found no memory tries again this much later. */
#define RDS_CONG_RETRY_DELAY	max(msecs_to_jiffies(10), 2UL)

/*
 * A message of a closed socket: nobody waits for it any more, and its
 * pages and keys wait for it to go.  Caller holds conn->lock; the
 * message's socket reference keeps m->rs valid.
 */
bool rds_conn_msg_orphan(const struct rds_msg *m)
{
	return m->rs && rds_conn_up->sock_dead(m->rs);
}

/*
 * A message leaves the connection for good: acknowledged, cancelled or
 * destroyed.  Its sender's buffer is uncharged and woken.
 */
static void rds_conn_msg_done(struct rds_msg *m)
{
	if (m->rs)
		rds_conn_up->uncharge(m);
	rds_msg_put(m);
}

/* Take a message off the connection's queues for good, if still there. */
static void rds_conn_msg_unqueue(struct rds_conn *conn, struct rds_msg *m)
{
	bool queued;

	spin_lock_bh(&conn->lock);
	queued = !list_empty(&m->conn_item);
	list_del_init(&m->conn_item);
	spin_unlock_bh(&conn->lock);
	if (queued)
		rds_conn_msg_done(m);	/* the queue's reference */
}

/*
 * A pong (conn_recv.c): the only message from port 0 to a port that no
 * socket sent.  Caller holds conn->lock, or owns @m.
 */
static bool rds_conn_msg_is_pong(const struct rds_msg *m)
{
	return !m->rs && !m->sport && m->dport;
}

/* Number @m and put it at the end of the send queue.  Caller holds lock. */
static void rds_conn_enqueue_locked(struct rds_conn *conn, struct rds_msg *m)
{
	lockdep_assert_held(&conn->lock);
	m->seq = conn->next_tx_seq++;
	list_add_tail(&m->conn_item, &conn->send_queue);
	trace_rds_conn_queue(conn, m->seq, m->len, m->flags);
}

/* Number @m and put it at the end of the send queue.  Context: any. */
void rds_conn_enqueue(struct rds_conn *conn, struct rds_msg *m)
{
	spin_lock_bh(&conn->lock);
	rds_conn_enqueue_locked(conn, m);
	spin_unlock_bh(&conn->lock);
	rds_stat_inc(RDS_STAT_SEND_QUEUED);
}

/**
 * rds_conn_enqueue_pong() - queue a pong, unless enough wait already
 * @conn: the connection
 * @m: the pong; on success the connection takes over the reference
 * @always: beyond the bound too: the answer to a multipath probe, which
 *	the peer never asks again (conn_recv.c); at most one per probe
 *	handled
 *
 * At most RDS_CONN_PONGS_MAX pongs wait on a connection, to be sent or
 * acknowledged: they are charged to nobody, and a peer that pings
 * without granting credits or acknowledging would otherwise make us
 * hold one for every ping.
 *
 * Context: any.
 * Return: true if queued; false if not, and @m is still the caller's.
 */
bool rds_conn_enqueue_pong(struct rds_conn *conn, struct rds_msg *m,
			   bool always)
{
	spin_lock_bh(&conn->lock);
	if (conn->pongs >= RDS_CONN_PONGS_MAX && !always) {
		spin_unlock_bh(&conn->lock);
		return false;
	}
	conn->pongs++;
	rds_conn_enqueue_locked(conn, m);
	spin_unlock_bh(&conn->lock);
	rds_stat_inc(RDS_STAT_SEND_QUEUED);
	return true;
}

/**
 * rds_conn_pongs_take() - take every pong off the connection's queues
 * @conn: the connection, going down
 * @list: where they go, for rds_conn_msgs_done()
 *
 * A pong answers a ping of the incarnation that is going: the pinger
 * asks again, and a pong kept for the next one would only hold memory,
 * and keep a connection to a pinger that went away reconnecting.
 *
 * Caller holds conn->lock.
 */
void rds_conn_pongs_take(struct rds_conn *conn, struct list_head *list)
{
	struct rds_msg *m, *tmp;

	lockdep_assert_held(&conn->lock);
	list_for_each_entry_safe(m, tmp, &conn->retrans, conn_item)
		if (rds_conn_msg_is_pong(m))
			list_move_tail(&m->conn_item, list);
	list_for_each_entry_safe(m, tmp, &conn->send_queue, conn_item)
		if (rds_conn_msg_is_pong(m))
			list_move_tail(&m->conn_item, list);
	conn->pongs = 0;
}

/**
 * rds_conn_holds_sock() - whether a message of a socket is on a connection
 * @conn: the connection
 * @rs: the socket
 *
 * Queued or waiting for its acknowledgment.  It walks both queues: for
 * the multipath send path's rare decisions only (send.c).
 *
 * Context: any; takes @conn's lock.
 */
bool rds_conn_holds_sock(struct rds_conn *conn, const struct rds_sock *rs)
{
	struct rds_msg *m;
	bool held = false;

	spin_lock_bh(&conn->lock);
	list_for_each_entry(m, &conn->retrans, conn_item)
		if (m->rs == rs)
			goto found;
	list_for_each_entry(m, &conn->send_queue, conn_item)
		if (m->rs == rs)
			goto found;
	goto out;
found:
	held = true;
out:
	spin_unlock_bh(&conn->lock);
	return held;
}

/*
 * A socket queued a message on @conn, or @conn received one: it is not
 * idle (connection.h), and a probe sent for its idleness no longer
 * counts.  Written only when it changes: this is every message's path.
 */
void rds_conn_mark_used(struct rds_conn *conn)
{
	unsigned long now = jiffies;

	if (READ_ONCE(conn->last_used) != now)
		WRITE_ONCE(conn->last_used, now);
	if (test_bit(RDS_CONN_IDLE_PROBED, &conn->flags))
		clear_bit(RDS_CONN_IDLE_PROBED, &conn->flags);
}

/*
 * A probe of ours, to port 0 of no socket: an ACK probe, from port 0
 * (wire 5.3), or a multipath probe, from port 1 (conn_recv.c).
 */
bool rds_conn_msg_is_probe(const struct rds_msg *m)
{
	return !m->rs && (!m->sport || m->sport == htons(1)) && !m->dport &&
	       !(m->flags & RDS_FLAG_CONG_BITMAP);
}

/* Each message of @list leaves its connection for good. */
void rds_conn_msgs_done(struct list_head *list)
{
	struct rds_msg *m, *tmp;

	list_for_each_entry_safe(m, tmp, list, conn_item) {
		list_del_init(&m->conn_item);
		rds_conn_msg_done(m);
	}
}

/*
 * The whole map of our address, as the peer expects it (wire 7.1).  Its
 * pages are zeroed: the copy sets only the congested ports' bits, and a
 * page as the allocator left it would send the peer stale kernel memory
 * and mark ports congested at random, whose senders then wait for a
 * map that clears them.
 */
static struct rds_msg *rds_conn_cong_msg(struct rds_conn *conn)
{
	struct rds_msg *m = rds_msg_alloc(RDS_CONG_MAP_BYTES,
					  GFP_KERNEL | __GFP_ZERO);

	if (!m)
		return NULL;
	rds_cong_map_copy_le(conn->lmap, m->pages, m->nr_pages);
	m->flags = RDS_FLAG_CONG_BITMAP;
	return m;
}

/*
 * @m goes to the transport: it waits on retrans for its ACK from now on.
 * ACK_REQUIRED is set by the peer's budget rule (every
 * max_unacked_packets + 1 messages or max_unacked_bytes).  A sender that
 * goes idle is not acknowledged at once: the peer's answer usually
 * carries the ACK, else the ACK probe asks for it
 * (rds_conn_ack_probe_work()).  Takes the reference of xmit_msg.  Caller
 * holds conn->lock, with @m at the tail of retrans.
 */
static __always_inline void
rds_conn_xmit_take_locked(struct rds_conn *conn, struct rds_msg *m)
{
	lockdep_assert_held(&conn->lock);
	m->xmit_jiffies = jiffies;
	if (!conn->unacked_pkts || conn->unacked_bytes < m->len)
		m->flags |= RDS_FLAG_ACK_REQUIRED;
	if (m->flags & RDS_FLAG_ACK_REQUIRED) {
		conn->unacked_pkts = rds_sysctl_max_unacked_packets();
		conn->unacked_bytes = rds_sysctl_max_unacked_bytes();
	} else {
		conn->unacked_pkts--;
		conn->unacked_bytes -= m->len;
	}
	rds_msg_get(m);
}

/*
 * Pick the next message: the congestion map if it changed, else the head
 * of send_queue, which moves to retrans.
 */
static struct rds_msg *rds_conn_pick(struct rds_conn *conn)
{
	struct rds_msg *m;

	if (test_and_clear_bit(RDS_CONN_CONG_PENDING, &conn->flags)) {
		m = rds_conn_cong_msg(conn);
		if (m) {
			rds_stat_inc(RDS_STAT_CONG_UPDATE_SENT);
			return m;
		}
		/*
		 * No memory: try again soon, not only when the next message
		 * goes, for the peer's senders may wait for this one.
		 */
		set_bit(RDS_CONN_CONG_PENDING, &conn->flags);
		queue_delayed_work(rds_conn_wq, &conn->ack_probe_w,
				   RDS_CONG_RETRY_DELAY);
	}

	/*
	 * Not locked: most calls find the queue empty, after the message
	 * they sent.  One queued meanwhile is pushed by its queuer, who
	 * finds work_mutex held and leaves it to send_w (rds_conn_push()).
	 */
	if (list_empty_careful(&conn->send_queue))
		return NULL;
	spin_lock_bh(&conn->lock);
	m = list_first_entry_or_null(&conn->send_queue, struct rds_msg,
				     conn_item);
	if (m) {
		list_move_tail(&m->conn_item, &conn->retrans);
		rds_conn_xmit_take_locked(conn, m);
	}
	spin_unlock_bh(&conn->lock);
	if (m && (m->flags & RDS_FLAG_RETRANSMITTED)) {
		atomic64_inc(&conn->retransmits);
		rds_stat_inc(RDS_STAT_SEND_RETRANSMIT);
	}
	return m;
}

/*
 * A new message when nothing waits before it: numbered and put straight
 * on retrans as xmit_msg, where rds_conn_enqueue() and rds_conn_pick()
 * would have put it after a pass through send_queue, under conn->lock
 * once instead of twice.  Not while a message is being posted, one waits
 * on send_queue (a retransmission, one queued by another sender) or a
 * congestion update is due: those go first, and @m takes the queue
 * behind them.  Caller holds work_mutex.
 * Return: true if @m is xmit_msg now, false if nothing was done.
 */
static bool rds_conn_xmit_direct(struct rds_conn *conn, struct rds_msg *m)
{
	if (conn->xmit_msg || test_bit(RDS_CONN_CONG_PENDING, &conn->flags))
		return false;
	spin_lock_bh(&conn->lock);
	if (!list_empty(&conn->send_queue)) {
		spin_unlock_bh(&conn->lock);
		return false;
	}
	m->seq = conn->next_tx_seq++;
	list_add_tail(&m->conn_item, &conn->retrans);
	trace_rds_conn_queue(conn, m->seq, m->len, m->flags);
	rds_conn_xmit_take_locked(conn, m);
	spin_unlock_bh(&conn->lock);
	rds_stat_inc(RDS_STAT_SEND_QUEUED);
	WRITE_ONCE(conn->xmit_msg, m);
	conn->xmit_frag = 0;
	trace_rds_conn_xmit(conn, m->seq, m->len, m->flags);
	return true;
}

/* Push what is queued into the transport.  Caller holds work_mutex. */
static void rds_conn_send_locked(struct rds_conn *conn)
{
	int ret;

	while (rds_conn_state(conn) == RDS_CONN_UP &&
	       !test_bit(RDS_CONN_DEAD, &conn->flags)) {
		if (!conn->xmit_msg) {
			WRITE_ONCE(conn->xmit_msg, rds_conn_pick(conn));
			conn->xmit_frag = 0;
			if (!conn->xmit_msg)
				break;
			trace_rds_conn_xmit(conn, conn->xmit_msg->seq,
					    conn->xmit_msg->len,
					    conn->xmit_msg->flags);
		}
		ret = conn->trans->xmit(conn, conn->xmit_msg, &conn->xmit_frag);
		if (ret)
			trace_rds_conn_xmit_stop(conn, conn->xmit_msg->seq,
						 conn->xmit_frag, ret);
		if (ret == -EAGAIN)
			break;
		if (ret) {
			rds_zc_conn_drop(conn, "xmit failed");
			break;
		}
		if (!(conn->xmit_msg->flags & RDS_FLAG_CONG_BITMAP)) {
			atomic64_inc(&conn->tx_msgs);
			rds_stat_inc(RDS_STAT_SEND_XMIT);
		}
		/* Nothing will acknowledge a message that sent no SEND. */
		if (conn->xmit_msg->no_sends)
			rds_conn_msg_unqueue(conn, conn->xmit_msg);
		rds_msg_put(conn->xmit_msg);
		WRITE_ONCE(conn->xmit_msg, NULL);
	}
	/* Pending already after the first of a burst: cheap to repeat. */
	if (!list_empty_careful(&conn->retrans) &&
	    !test_bit(RDS_CONN_DEAD, &conn->flags))
		queue_delayed_work(rds_conn_wq, &conn->ack_probe_w,
				   RDS_ACK_PROBE_DELAY);
}

/* send_w: push what is queued when the caller could not. */
void rds_conn_send_work(struct work_struct *work)
{
	struct rds_conn *conn = container_of(work, struct rds_conn, send_w);

	mutex_lock(&conn->work_mutex);
	rds_conn_send_locked(conn);
	mutex_unlock(&conn->work_mutex);
}

/* Send now if nobody else is, else leave it to the send work. */
static void rds_conn_push(struct rds_conn *conn)
{
	if (rds_conn_state(conn) != RDS_CONN_UP) {
		rds_conn_connect_if_down(conn);
		return;
	}
	if (mutex_trylock(&conn->work_mutex)) {
		rds_conn_send_locked(conn);
		mutex_unlock(&conn->work_mutex);
	} else {
		queue_work(rds_conn_wq, &conn->send_w);
	}
}

/**
 * rds_conn_idle_probe() - an idle connection asks its last ACK
 * @conn: an idle connection that is up and received something, nothing
 *	queued
 *
 * The reaper's first step (connection.h): an ACK probe, whose header
 * carries our ACK of everything received and whose acknowledgment says
 * the peer has it.  RDS_CONN_IDLE_PROBED says it went; any use clears it
 * (rds_conn_mark_used()).  Context: any; under RCU from the reaper.
 */
void rds_conn_idle_probe(struct rds_conn *conn)
{
	struct rds_msg *m = rds_msg_alloc(1, GFP_ATOMIC | __GFP_ZERO);

	if (!m)
		return;	/* the reaper asks again */
	m->flags = RDS_FLAG_ACK_REQUIRED;
	set_bit(RDS_CONN_IDLE_PROBED, &conn->flags);
	rds_conn_enqueue(conn, m);
	rds_stat_inc(RDS_STAT_SEND_ACK_PROBE);
	queue_work(rds_conn_wq, &conn->send_w);
}

/**
 * rds_conn_challenge() - a connect request for a connection that is up
 * @conn: the connection, UP
 *
 * Only a peer that lost its side of the connection asks for it again
 * while it is up; and so does a host that claims the peer's address.
 * Which of the two it is, only the peer of the live connection can say:
 * ask it with an ACK probe (wire 5.3), at most one a second.  A peer
 * that is there acknowledges it, and the connection stays; one that is
 * gone (restarted, its QP destroyed) does not, and for the next
 * RDS_CONN_CHALLENGE_MS the ACK watchdog drops the connection as soon as
 * what it sent waits that long with its sends not moving
 * (rds_conn_watchdog_work()).  The request is refused meanwhile, and the
 * peer's next one is taken once the connection is down.
 *
 * Context: any.
 */
void rds_conn_challenge(struct rds_conn *conn)
{
	unsigned long last = READ_ONCE(conn->challenged);
	struct rds_msg *m;

	if (last && time_before(jiffies, last + HZ))
		return;
	WRITE_ONCE(conn->challenged, jiffies | 1);	/* 0 means none */
	m = rds_msg_alloc(1, GFP_ATOMIC | __GFP_ZERO);
	if (!m)
		return;	/* what is in flight answers, or the next request */
	m->flags = RDS_FLAG_ACK_REQUIRED;
	rds_conn_enqueue(conn, m);
	rds_stat_inc(RDS_STAT_SEND_ACK_PROBE);
	queue_work(rds_conn_wq, &conn->send_w);
}

/*
 * The ACK probe (wire 5.3): the newest message sent went out without
 * ACK_REQUIRED and nothing acknowledged it for RDS_ACK_PROBE_DELAY, so
 * the peer has nothing to send back: ask for the ACK with a message from
 * port 0 to port 0 that carries ACK_REQUIRED and is then dropped.  Until
 * the ACK comes the messages hold their senders' buffers and the pages
 * of their RDMA operations.  Acknowledging at once every message after
 * which the queue went idle costs each request/response exchange two
 * ACK frames; the answer carries the ACK instead.  One payload byte,
 * zero, keeps the probe from reading as an ACK frame.
 *
 * The same work retries a congestion update that found no memory, and
 * a probe that found none.
 */
void rds_conn_ack_probe_work(struct work_struct *work)
{
	struct rds_conn *conn = container_of(to_delayed_work(work),
					     struct rds_conn, ack_probe_w);
	unsigned long due = 0;
	struct rds_msg *m;

	if (rds_conn_state(conn) != RDS_CONN_UP ||
	    test_bit(RDS_CONN_DEAD, &conn->flags))
		return;
	if (test_bit(RDS_CONN_CONG_PENDING, &conn->flags))
		rds_conn_push(conn);
	spin_lock_bh(&conn->lock);
	if (!list_empty(&conn->retrans) && list_empty(&conn->send_queue)) {
		m = list_last_entry(&conn->retrans, struct rds_msg, conn_item);
		if (!(m->flags & RDS_FLAG_ACK_REQUIRED))
			due = m->xmit_jiffies + RDS_ACK_PROBE_DELAY;
	}
	spin_unlock_bh(&conn->lock);
	if (!due)
		return;	/* acknowledged, asked for, or still sending */
	if (time_before(jiffies, due)) {
		queue_delayed_work(rds_conn_wq, &conn->ack_probe_w,
				   due - jiffies);
		return;
	}
	m = rds_msg_alloc(1, GFP_KERNEL | __GFP_ZERO);
	if (!m) {
		queue_delayed_work(rds_conn_wq, &conn->ack_probe_w,
				   RDS_ACK_PROBE_DELAY);
		return;
	}
	m->flags = RDS_FLAG_ACK_REQUIRED;
	rds_conn_enqueue(conn, m);
	rds_stat_inc(RDS_STAT_SEND_ACK_PROBE);
	rds_conn_push(conn);
}

/**
 * rds_zc_conn_acked() - the peer has every message up to @seq
 * @conn: the connection
 * @seq: cumulative acknowledgment (wire 5.2)
 *
 * Messages up to @seq leave the connection and their senders' buffers
 * are released.  Retransmissions not yet sent that the peer already has
 * are released too.
 *
 * Context: any; the transport's receive path.
 * Return: @seq, or the last sequence number given to a message if @seq
 * is beyond it: what this ACK covered.  A transport that skips ACKs it
 * saw before keeps this, so that a peer's ACK beyond anything we sent
 * does not hide its honest ones that follow.
 */
u64 rds_zc_conn_acked(struct rds_conn *conn, u64 seq)
{
	struct rds_msg *m, *tmp;
	LIST_HEAD(done);
	u64 covered;

	spin_lock_bh(&conn->lock);
	covered = min(seq, conn->next_tx_seq - 1);
	/* retrans is in sequence order: what @seq covers is its head. */
	list_for_each_entry(m, &conn->retrans, conn_item)
		if (m->seq > seq)
			break;
	list_cut_before(&done, &conn->retrans, &m->conn_item);
	list_for_each_entry_safe(m, tmp, &conn->send_queue, conn_item) {
		if (m->seq > seq || !(m->flags & RDS_FLAG_RETRANSMITTED))
			break;
		list_move_tail(&m->conn_item, &done);
	}
	if (conn->pongs)
		list_for_each_entry(m, &done, conn_item)
			if (rds_conn_msg_is_pong(m))
				conn->pongs--;
	/*
	 * Everything sent is acknowledged: the ACK probe has nothing to ask
	 * for, and would only wake a worker to find that out.  Under the
	 * lock: a message picked after this re-arms it once it is on
	 * retrans (rds_conn_send_locked()).  A congestion update to retry
	 * (rds_conn_pick()) sets its bit before it queues the work: one
	 * cancelled here is queued again.
	 */
	if (list_empty(&conn->retrans) && !list_empty(&done) &&
	    cancel_delayed_work(&conn->ack_probe_w) &&
	    test_bit(RDS_CONN_CONG_PENDING, &conn->flags))
		queue_delayed_work(rds_conn_wq, &conn->ack_probe_w,
				   RDS_CONG_RETRY_DELAY);
	spin_unlock_bh(&conn->lock);

	/* done is ours alone: each entry leaves it without unlinking. */
	list_for_each_entry_safe(m, tmp, &done, conn_item) {
		trace_rds_conn_acked(conn, m->seq, m->len, m->flags);
		rds_stat_inc(RDS_STAT_SEND_ACKED);
		INIT_LIST_HEAD(&m->conn_item);
		rds_conn_msg_done(m);
	}
	return covered;
}
EXPORT_SYMBOL_GPL(rds_zc_conn_acked);

/**
 * rds_zc_conn_kick() - the transport has room again: resume sending
 * @conn: the connection
 *
 * Context: any.
 */
void rds_zc_conn_kick(struct rds_conn *conn)
{
	if (rds_conn_state(conn) == RDS_CONN_UP)
		queue_work(rds_conn_wq, &conn->send_w);
}
EXPORT_SYMBOL_GPL(rds_zc_conn_kick);

/**
 * rds_conn_queue() - queue a message for the peer and start sending it
 * @conn: the connection
 * @m: the message, header fields and sender set, sender charged; the
 *     connection takes over the caller's reference
 *
 * Context: process context.
 * Return: 0.
 */
int rds_conn_queue(struct rds_conn *conn, struct rds_msg *m)
{
	rds_conn_mark_used(conn);
	/* Most sends: the connection up, idle, and nobody posting. */
	if (rds_conn_state(conn) == RDS_CONN_UP &&
	    mutex_trylock(&conn->work_mutex)) {
		if (!rds_conn_xmit_direct(conn, m))
			rds_conn_enqueue(conn, m);
		rds_conn_send_locked(conn);
		mutex_unlock(&conn->work_mutex);
		return 0;
	}
	rds_conn_enqueue(conn, m);
	rds_conn_push(conn);
	return 0;
}

/**
 * rds_conn_cong_changed() - a local address's map changed: tell its peers
 * @net: namespace
 * @laddr: the address
 *
 * Context: any.
 */
void rds_conn_cong_changed(struct net *net, const struct in6_addr *laddr)
{
	struct rds_conn *conn;

	rcu_read_lock();
	list_for_each_entry_rcu(conn, &rds_conn_list, all_item) {
		/* A pair's map goes on its path 0 (wire 10.6 rule 11). */
		if (!ipv6_addr_equal(&conn->laddr, laddr) ||
		    !net_eq(conn->net, net) || conn->path)
			continue;
		set_bit(RDS_CONN_CONG_PENDING, &conn->flags);
		rds_zc_conn_kick(conn);
	}
	rcu_read_unlock();
}

/**
 * rds_conn_cancel() - withdraw a socket's messages not yet sent
 * @rs: the sending socket, compared only
 * @net: its namespace
 * @laddr: the address it is bound to
 * @daddr: destination address (NULL with @any_dest)
 * @dport: destination port
 * @any_dest: every destination (socket close), else only @daddr:@dport
 *
 * A message the transport has taken stays on RDS_CANCEL_SENT_TO: it may
 * have arrived.  On close (@any_dest) those waiting for their ACK go too,
 * as in the distribution's RDS: a peer that never acknowledges, or a
 * reconnection, would otherwise hold the socket's pages and keys, and
 * close() waits for those.  Not the one the transport is still posting:
 * stuck for credits, the ACK watchdog must see it and drop the
 * connection, and the shutdown then drops it (rds_conn_msg_orphan()).
 * The RDMA operation of a message withdrawn unsent never ran: it ends as
 * RDS_RDMA_CANCELED, reported like any other end (rds_rdma_op_done()):
 * with RDS_RDMA_NOTIFY_ME, as by the distribution's RDS, and under
 * RDS_RECVERR as a failure, which the distribution leaves unreported.
 *
 * Context: process context.
 * Return: the number of messages withdrawn.
 */
unsigned int rds_conn_cancel(const struct rds_sock *rs, struct net *net,
			     const struct in6_addr *laddr,
			     const struct in6_addr *daddr, __be16 dport,
			     bool any_dest)
{
	struct rds_msg *m, *tmp, *xmit;
	struct rds_conn *conn;
	unsigned int n = 0;
	LIST_HEAD(done);
	LIST_HEAD(sent);

	rcu_read_lock();
	list_for_each_entry_rcu(conn, &rds_conn_list, all_item) {
		if (!ipv6_addr_equal(&conn->laddr, laddr) ||
		    !net_eq(conn->net, net) ||
		    (!any_dest && !ipv6_addr_equal(&conn->faddr, daddr)))
			continue;
		spin_lock_bh(&conn->lock);
		list_for_each_entry_safe(m, tmp, &conn->send_queue, conn_item) {
			if (m->rs == rs && (any_dest || m->dport == dport)) {
				list_move_tail(&m->conn_item, &done);
				n++;
			}
		}
		if (any_dest) {
			xmit = READ_ONCE(conn->xmit_msg);
			list_for_each_entry_safe(m, tmp, &conn->retrans,
						 conn_item)
				if (m->rs == rs && m != xmit)
					list_move_tail(&m->conn_item, &sent);
		}
		spin_unlock_bh(&conn->lock);
	}
	rcu_read_unlock();
	rds_stat_add(RDS_STAT_SEND_CANCELLED, n);
	list_for_each_entry(m, &done, conn_item)
		if (m->op)
			rds_rdma_op_done(m->op, RDS_RDMA_CANCELED);
	rds_conn_msgs_done(&done);
	rds_conn_msgs_done(&sent);
	return n;
}
