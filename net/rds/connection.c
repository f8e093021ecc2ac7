// SPDX-License-Identifier: GPL-2.0
/*
 * Connections: sequence numbers, the send and retransmit queues,
 * acknowledgments, duplicate suppression, drop and reconnect.  The rules
 * are in connection.h; the wire side in rds_zc-wire.rst sections 1.8 and 5.
 *
 * Locking: rds_conn_lock protects the connection hash and list for
 * writers; readers walk them under RCU.  A connection is freed only by
 * rds_conn_destroy_all(), after a grace period.
 */
#include <linux/errno.h>
#include <linux/jhash.h>
#include <linux/random.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/net_namespace.h>
#include <net/netns/hash.h>
#include <net/sock.h>
#include <uapi/linux/rds.h>

#include "cong.h"
#include "connection.h"
#include "message.h"
#include "rdma.h"
#include "sock.h"
#include "stats.h"
#include "sysctl.h"
#include "trace.h"
#include "transport.h"

#define RDS_CONN_HASH_BITS	8

/* How long a sender waits for the ACK of its last message before asking. */
#define RDS_ACK_PROBE_DELAY	max(msecs_to_jiffies(10), 2UL)

static struct hlist_head rds_conn_hash[1 << RDS_CONN_HASH_BITS];
static LIST_HEAD(rds_conn_list);
static DEFINE_SPINLOCK(rds_conn_lock);	/* writers of hash and list */

/* Connect, send and shutdown work of every connection. */
static struct workqueue_struct *rds_conn_wq;

static struct hlist_head *rds_conn_bucket(const struct net *net, __be32 laddr,
					  __be32 faddr, u8 tos)
{
	u32 h = jhash_3words((__force u32)laddr, (__force u32)faddr, tos,
			     net_hash_mix(net));

	return &rds_conn_hash[hash_32(h, RDS_CONN_HASH_BITS)];
}

/* Caller holds rcu_read_lock() or rds_conn_lock. */
static struct rds_conn *rds_conn_find(const struct net *net, __be32 laddr,
				      __be32 faddr, u8 tos)
{
	struct rds_conn *conn;

	hlist_for_each_entry_rcu(conn, rds_conn_bucket(net, laddr, faddr, tos),
				 hash_node, lockdep_is_held(&rds_conn_lock)) {
		if (conn->laddr == laddr && conn->faddr == faddr &&
		    conn->tos == tos && net_eq(conn->net, net))
			return conn;
	}
	return NULL;
}

static bool rds_conn_set_state(struct rds_conn *conn, int from, int to,
			       const char *reason)
{
	if (atomic_cmpxchg(&conn->state, from, to) != from)
		return false;
	trace_rds_conn_state(conn, conn->laddr, conn->faddr, conn->tos, from,
			     to, reason);
	return true;
}

/*
 * A message of a closed socket: nobody waits for it any more, and its
 * pages and keys wait for it to go.  Caller holds conn->lock; the
 * message's socket reference keeps m->rs valid.
 */
static bool rds_conn_msg_orphan(const struct rds_msg *m)
{
	return m->rs && READ_ONCE(m->rs->dead);
}

/*
 * A message leaves the connection for good: acknowledged, cancelled or
 * destroyed.  Its sender's buffer is uncharged and woken.
 */
static void rds_conn_msg_done(struct rds_msg *m)
{
	struct rds_sock *rs = m->rs;

	if (rs) {
		spin_lock_bh(&rs->snd_lock);
		rs->snd_bytes -= rds_msg_charge(m->len);
		spin_unlock_bh(&rs->snd_lock);
		rs->sk.sk_write_space(&rs->sk);
		m->rs = NULL;
		sock_put(&rs->sk);
	}
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

/* Number @m and put it at the end of the send queue.  Context: any. */
static void rds_conn_enqueue(struct rds_conn *conn, struct rds_msg *m)
{
	spin_lock_bh(&conn->lock);
	m->seq = conn->next_tx_seq++;
	list_add_tail(&m->conn_item, &conn->send_queue);
	trace_rds_conn_queue(conn, m->seq, m->len, m->flags);
	spin_unlock_bh(&conn->lock);
	rds_stat_inc(RDS_STAT_SEND_QUEUED);
}

static void rds_conn_msgs_done(struct list_head *list)
{
	struct rds_msg *m, *tmp;

	list_for_each_entry_safe(m, tmp, list, conn_item) {
		list_del_init(&m->conn_item);
		rds_conn_msg_done(m);
	}
}

static void rds_conn_connect_if_down(struct rds_conn *conn)
{
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

static void rds_conn_connect_work(struct work_struct *work)
{
	struct rds_conn *conn = container_of(to_delayed_work(work),
					     struct rds_conn, connect_w);
	int ret;

	clear_bit(RDS_CONN_RECONNECT_PENDING, &conn->flags);
	mutex_lock(&conn->work_mutex);
	if (!test_bit(RDS_CONN_DEAD, &conn->flags) &&
	    rds_conn_set_state(conn, RDS_CONN_DOWN, RDS_CONN_CONNECTING,
			       "connect")) {
		rds_stat_inc(RDS_STAT_CONN_CONNECT);
		ret = conn->trans->conn_connect(conn);
		if (ret)
			rds_zc_conn_drop(conn, "connect failed");
	}
	mutex_unlock(&conn->work_mutex);
}

/* The whole map of our address, as the peer expects it (wire 7.1). */
static struct rds_msg *rds_conn_cong_msg(struct rds_conn *conn)
{
	struct rds_msg *m = rds_msg_alloc(RDS_CONG_MAP_BYTES, GFP_KERNEL);

	if (!m)
		return NULL;
	rds_cong_map_copy_le(conn->lmap, m->pages, m->nr_pages);
	m->flags = RDS_FLAG_CONG_BITMAP;
	return m;
}

/*
 * Pick the next message: the congestion map if it changed, else the head
 * of send_queue, which moves to retrans.  ACK_REQUIRED is set by the
 * peer's budget rule (every max_unacked_packets + 1 messages or
 * max_unacked_bytes).  A sender that goes idle is not acknowledged at
 * once: the peer's answer usually carries the ACK, else the ACK probe
 * asks for it (rds_conn_ack_probe_work()).
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
		set_bit(RDS_CONN_CONG_PENDING, &conn->flags);
	}

	spin_lock_bh(&conn->lock);
	m = list_first_entry_or_null(&conn->send_queue, struct rds_msg,
				     conn_item);
	if (m) {
		list_move_tail(&m->conn_item, &conn->retrans);
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
	spin_unlock_bh(&conn->lock);
	if (m && (m->flags & RDS_FLAG_RETRANSMITTED)) {
		atomic64_inc(&conn->retransmits);
		rds_stat_inc(RDS_STAT_SEND_RETRANSMIT);
	}
	return m;
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

static void rds_conn_send_work(struct work_struct *work)
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

/*
 * A connection whose oldest message waits longer than unacked_timeout_ms
 * for its acknowledgment is dead even if the transport did not notice (a
 * soft-RoCE QP can stall in RTS after its link went down): drop it, and
 * the reconnect resends what the peer may not have.
 */
static void rds_conn_watchdog_work(struct work_struct *work)
{
	struct rds_conn *conn = container_of(to_delayed_work(work),
					     struct rds_conn, watchdog_w);
	unsigned int ms = rds_sysctl_unacked_timeout_ms();
	unsigned long timeout = msecs_to_jiffies(ms);
	bool stalled = false;
	struct rds_msg *m;

	if (rds_conn_state(conn) != RDS_CONN_UP ||
	    test_bit(RDS_CONN_DEAD, &conn->flags))
		return;
	spin_lock_bh(&conn->lock);
	m = list_first_entry_or_null(&conn->retrans, struct rds_msg, conn_item);
	if (ms && m && time_after(jiffies, m->xmit_jiffies + timeout))
		stalled = true;
	spin_unlock_bh(&conn->lock);
	if (stalled) {
		rds_stat_inc(RDS_STAT_CONN_ACK_TIMEOUT);
		rds_zc_conn_drop(conn, "no ACK progress");
		return;
	}
	queue_delayed_work(rds_conn_wq, &conn->watchdog_w, HZ);
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
 */
static void rds_conn_ack_probe_work(struct work_struct *work)
{
	struct rds_conn *conn = container_of(to_delayed_work(work),
					     struct rds_conn, ack_probe_w);
	unsigned long due = 0;
	struct rds_msg *m;

	if (rds_conn_state(conn) != RDS_CONN_UP ||
	    test_bit(RDS_CONN_DEAD, &conn->flags))
		return;
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
	if (!m)
		return;	/* the next message sent tries again */
	m->flags = RDS_FLAG_ACK_REQUIRED;
	rds_conn_enqueue(conn, m);
	rds_stat_inc(RDS_STAT_SEND_ACK_PROBE);
	rds_conn_push(conn);
}

static void rds_conn_shutdown_work(struct work_struct *work)
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

	conn->trans->conn_shutdown(conn);
	if (conn->xmit_msg) {
		rds_msg_put(conn->xmit_msg);
		WRITE_ONCE(conn->xmit_msg, NULL);
	}

	/*
	 * What the peer may not have: again, first, marked (wire 5.4).
	 * Not a message with an RDMA operation, which may have run: it
	 * ends as dropped (wire 9), unless it was reported already.  Not
	 * one whose socket is closed either (rds_conn_cancel()).
	 */
	spin_lock_bh(&conn->lock);
	list_for_each_entry_safe(m, tmp, &conn->retrans, conn_item) {
		if (m->op || rds_conn_msg_orphan(m))
			list_move_tail(&m->conn_item, &dropped);
		else
			m->flags |= RDS_FLAG_RETRANSMITTED |
				    RDS_FLAG_ACK_REQUIRED;
	}
	list_splice_init(&conn->retrans, &conn->send_queue);
	pending = !list_empty(&conn->send_queue);
	spin_unlock_bh(&conn->lock);
	list_for_each_entry(m, &dropped, conn_item) {
		if (!m->op)
			continue;
		rds_rdma_op_done(m->op, RDS_RDMA_DROPPED);
		rds_stat_inc(RDS_STAT_RDMA_DROPPED);
	}
	rds_conn_msgs_done(&dropped);

	rds_conn_set_state(conn, RDS_CONN_DISCONNECTING, RDS_CONN_DOWN, "down");
	if (pending)
		rds_conn_queue_reconnect(conn);
out:
	mutex_unlock(&conn->work_mutex);
}

/**
 * rds_zc_conn_get() - find or create the connection for an address pair
 * @net: namespace
 * @laddr: local address
 * @faddr: remote address
 * @tos: type of service
 * @trans: the transport that carries it; used only when creating
 *
 * Context: process context, may sleep.
 * Return: the connection, valid until @trans is unregistered, or an
 * ERR_PTR: -ENOMEM, or the transport's error.
 */
struct rds_conn *rds_zc_conn_get(struct net *net, __be32 laddr, __be32 faddr,
				 u8 tos, const struct rds_transport *trans)
{
	struct rds_conn *conn, *new;
	int ret = -ENOMEM;

	rcu_read_lock();
	conn = rds_conn_find(net, laddr, faddr, tos);
	rcu_read_unlock();
	if (conn)
		return conn;
	if (!trans->xmit)
		return ERR_PTR(-ENETUNREACH);

	new = kzalloc(sizeof(*new), GFP_KERNEL);
	if (!new)
		return ERR_PTR(-ENOMEM);
	new->net = net;
	new->laddr = laddr;
	new->faddr = faddr;
	new->tos = tos;
	new->trans = trans;
	atomic_set(&new->state, RDS_CONN_DOWN);
	spin_lock_init(&new->lock);
	INIT_LIST_HEAD(&new->send_queue);
	INIT_LIST_HEAD(&new->retrans);
	new->next_tx_seq = 1;
	new->unacked_pkts = rds_sysctl_max_unacked_packets();
	new->unacked_bytes = rds_sysctl_max_unacked_bytes();
	mutex_init(&new->work_mutex);
	INIT_DELAYED_WORK(&new->connect_w, rds_conn_connect_work);
	INIT_DELAYED_WORK(&new->watchdog_w, rds_conn_watchdog_work);
	INIT_DELAYED_WORK(&new->ack_probe_w, rds_conn_ack_probe_work);
	INIT_WORK(&new->send_w, rds_conn_send_work);
	INIT_WORK(&new->shutdown_w, rds_conn_shutdown_work);

	new->lmap = rds_cong_map_get(net, laddr);
	new->fmap = rds_cong_map_get(net, faddr);
	if (!new->lmap || !new->fmap)
		goto out_maps;
	ret = trans->conn_alloc(new, GFP_KERNEL);
	if (ret)
		goto out_maps;

	spin_lock_bh(&rds_conn_lock);
	conn = rds_conn_find(net, laddr, faddr, tos);
	if (!conn) {
		hlist_add_head_rcu(&new->hash_node,
				   rds_conn_bucket(net, laddr, faddr, tos));
		list_add_tail_rcu(&new->all_item, &rds_conn_list);
		conn = new;
		new = NULL;
	}
	spin_unlock_bh(&rds_conn_lock);
	if (!new) {
		rds_stat_inc(RDS_STAT_CONN_CREATED);
		trace_rds_conn_state(conn, laddr, faddr, tos, -1,
				     RDS_CONN_DOWN, "created");
		return conn;
	}
	trans->conn_free(new);
	ret = 0;
out_maps:
	rds_cong_map_put(new->fmap);
	rds_cong_map_put(new->lmap);
	mutex_destroy(&new->work_mutex);
	kfree(new);
	return ret ? ERR_PTR(ret) : conn;
}
EXPORT_SYMBOL_GPL(rds_zc_conn_get);

/**
 * rds_zc_conn_accept() - the peer asks to connect: may it?
 * @conn: the connection its request names
 *
 * Only a connection that is down is taken over by an incoming request.
 * One that is up is taken to be stale (the peer restarted) and dropped;
 * the request is refused all the same and the peer retries.
 *
 * Both ends connecting at once are told apart by address, so that the
 * race ends in one round: the end with the lower address yields, gives
 * up its own attempt and accepts; the higher one refuses, and its own
 * request is the one accepted.  The distribution refuses whenever it is
 * connecting (wire 1.5), so against it as the lower end both refuse and
 * the random back-off settles it, as between two of its own.
 *
 * Context: any.
 * Return: 0 if the caller now owns the connect (state CONNECTING),
 * -EINPROGRESS if the caller should replace its own attempt in progress
 * by this request (state stays CONNECTING), or -EBUSY if it must reject
 * the request.
 */
int rds_zc_conn_accept(struct rds_conn *conn)
{
	if (test_bit(RDS_CONN_DEAD, &conn->flags))
		return -EBUSY;
	if (rds_conn_set_state(conn, RDS_CONN_DOWN, RDS_CONN_CONNECTING,
			       "accept")) {
		rds_stat_inc(RDS_STAT_CONN_ACCEPT);
		return 0;
	}
	switch (rds_conn_state(conn)) {
	case RDS_CONN_UP:
		rds_zc_conn_drop(conn, "peer reconnects");
		break;
	case RDS_CONN_CONNECTING:
		if (ntohl(conn->laddr) < ntohl(conn->faddr)) {
			rds_stat_inc(RDS_STAT_CONN_RACE_YIELD);
			return -EINPROGRESS;
		}
		rds_stat_inc(RDS_STAT_CONN_RACE_REFUSE);
		break;
	default:	/* going down: the peer retries */
		break;
	}
	return -EBUSY;
}
EXPORT_SYMBOL_GPL(rds_zc_conn_accept);

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
	set_bit(RDS_CONN_CONG_PENDING, &conn->flags);
	/* Being destroyed: queue nothing (see rds_conn_destroy()). */
	if (test_bit(RDS_CONN_DEAD, &conn->flags))
		return;
	queue_work(rds_conn_wq, &conn->send_w);
	mod_delayed_work(rds_conn_wq, &conn->watchdog_w, HZ);
}
EXPORT_SYMBOL_GPL(rds_zc_conn_connected);

/**
 * rds_zc_conn_drop() - the transport connection failed: tear it down
 * @conn: the connection
 * @reason: a few words for the trace
 *
 * Does nothing unless the connection is connecting or up.  The shutdown
 * work tears the transport down, requeues unacknowledged messages and
 * reconnects if anything waits to be sent.
 *
 * Context: any.
 */
void rds_zc_conn_drop(struct rds_conn *conn, const char *reason)
{
	int old = rds_conn_state(conn);

	while (old == RDS_CONN_CONNECTING || old == RDS_CONN_UP) {
		if (rds_conn_set_state(conn, old, RDS_CONN_ERROR, reason)) {
			atomic_inc(&conn->drops);
			rds_stat_inc(RDS_STAT_CONN_DROP);
			queue_work(rds_conn_wq, &conn->shutdown_w);
			return;
		}
		old = rds_conn_state(conn);
	}
}
EXPORT_SYMBOL_GPL(rds_zc_conn_drop);

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
 */
void rds_zc_conn_acked(struct rds_conn *conn, u64 seq)
{
	struct rds_msg *m, *tmp;
	LIST_HEAD(done);

	spin_lock_bh(&conn->lock);
	list_for_each_entry_safe(m, tmp, &conn->retrans, conn_item) {
		if (m->seq > seq)
			break;
		list_move_tail(&m->conn_item, &done);
	}
	list_for_each_entry_safe(m, tmp, &conn->send_queue, conn_item) {
		if (m->seq > seq || !(m->flags & RDS_FLAG_RETRANSMITTED))
			break;
		list_move_tail(&m->conn_item, &done);
	}
	spin_unlock_bh(&conn->lock);

	list_for_each_entry_safe(m, tmp, &done, conn_item) {
		trace_rds_conn_acked(conn, m->seq, m->len, m->flags);
		rds_stat_inc(RDS_STAT_SEND_ACKED);
		list_del_init(&m->conn_item);
		rds_conn_msg_done(m);
	}
}
EXPORT_SYMBOL_GPL(rds_zc_conn_acked);

/*
 * A ping (wire 10.1): a message to port 0 from a port that is not.  The
 * answer, a pong, is a header-only message from port 0 to that port,
 * sequenced like any other; none goes to a congested port.  Context: the
 * receive path: the send work takes it out.
 */
static void rds_conn_pong(struct rds_conn *conn, __be16 dport)
{
	struct rds_msg *m;

	rds_stat_inc(RDS_STAT_RECV_PING);
	if (!dport || rds_cong_test(conn->fmap, dport))
		return;
	m = rds_msg_alloc(0, GFP_ATOMIC);
	if (!m)
		return;	/* the pinger asks again */
	m->dport = dport;
	rds_conn_enqueue(conn, m);
	queue_work(rds_conn_wq, &conn->send_w);
}

/**
 * rds_zc_conn_recv() - a complete message arrived from the peer
 * @conn: the connection
 * @m: the message, with seq, flags and ports from its header; consumed
 *
 * A retransmission of a message already received is dropped; anything
 * else is accepted and sets the next expected number, so that a peer
 * that restarted its numbering is followed (wire 5.4).  A ping is
 * answered, not delivered, while net.rds.ping_enable is set.
 *
 * Context: the transport's receive path, one at a time per connection.
 * Return: 0 when the message was taken (delivered, or dropped as a
 * duplicate or for want of a socket) and may be acknowledged; -ENOMEM if
 * it could not be, and the transport must drop the connection without
 * acknowledging it, so that the peer sends it again.  In both cases @m
 * is consumed.  -EBUSY: the receiving socket is over its hard limit (a
 * peer ignoring congestion); @m was not touched, and the transport keeps
 * it, takes nothing more from the peer, and offers it again later.
 */
int rds_zc_conn_recv(struct rds_conn *conn, struct rds_msg *m)
{
	struct rds_incoming *inc;
	int ret;

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
	if (!inc) {
		rds_msg_put(m);
		return -ENOMEM;
	}
	inc->saddr = conn->faddr;
	inc->sport = m->sport;
	inc->daddr = conn->laddr;
	inc->dport = m->dport;
	ret = rds_zc_deliver(conn->net, inc, true);
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
EXPORT_SYMBOL_GPL(rds_zc_conn_recv);

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
	if (m->len == RDS_CONG_MAP_BYTES) {
		rds_stat_inc(RDS_STAT_CONG_UPDATE_RECV);
		rds_cong_map_update_le(conn->fmap, m->pages, m->nr_pages);
	}
	rds_msg_put(m);
}
EXPORT_SYMBOL_GPL(rds_zc_conn_cong_recv);

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
void rds_conn_cong_changed(struct net *net, __be32 laddr)
{
	struct rds_conn *conn;

	rcu_read_lock();
	list_for_each_entry_rcu(conn, &rds_conn_list, all_item) {
		if (conn->laddr != laddr || !net_eq(conn->net, net))
			continue;
		set_bit(RDS_CONN_CONG_PENDING, &conn->flags);
		rds_zc_conn_kick(conn);
	}
	rcu_read_unlock();
}

/**
 * rds_conn_cancel() - withdraw a socket's messages not yet sent
 * @rs: the sending socket, bound
 * @daddr: destination address
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
unsigned int rds_conn_cancel(struct rds_sock *rs, __be32 daddr, __be16 dport,
			     bool any_dest)
{
	struct net *net = sock_net(&rs->sk);
	__be32 laddr = READ_ONCE(rs->bound_addr);
	struct rds_msg *m, *tmp, *xmit;
	struct rds_conn *conn;
	unsigned int n = 0;
	LIST_HEAD(done);
	LIST_HEAD(sent);

	rcu_read_lock();
	list_for_each_entry_rcu(conn, &rds_conn_list, all_item) {
		if (conn->laddr != laddr || !net_eq(conn->net, net) ||
		    (!any_dest && conn->faddr != daddr))
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

/**
 * rds_conn_info_walk() - describe every connection of a namespace
 * @net: namespace
 * @fn: called with one RDS_INFO_CONNECTIONS row per connection, under
 *	rcu_read_lock(), so it must not sleep
 * @arg: passed to @fn
 *
 * The flags say what the distribution's say: SENDING while a message is
 * being handed to the transport, CONNECTING, CONNECTED (UP).
 *
 * Context: process context.
 */
void rds_conn_info_walk(struct net *net,
			void (*fn)(const struct rds_info_connection *ci,
				   void *arg),
			void *arg)
{
	struct rds_info_connection ci;
	struct rds_conn *conn;

	rcu_read_lock();
	list_for_each_entry_rcu(conn, &rds_conn_list, all_item) {
		if (!net_eq(conn->net, net))
			continue;
		memset(&ci, 0, sizeof(ci));
		spin_lock_bh(&conn->lock);
		ci.next_tx_seq = conn->next_tx_seq;
		spin_unlock_bh(&conn->lock);
		ci.next_rx_seq = READ_ONCE(conn->next_rx_seq);
		ci.laddr = conn->laddr;
		ci.faddr = conn->faddr;
		strscpy(ci.transport, conn->trans->name, sizeof(ci.transport));
		if (READ_ONCE(conn->xmit_msg))
			ci.flags |= RDS_INFO_CONNECTION_FLAG_SENDING;
		switch (rds_conn_state(conn)) {
		case RDS_CONN_CONNECTING:
			ci.flags |= RDS_INFO_CONNECTION_FLAG_CONNECTING;
			break;
		case RDS_CONN_UP:
			ci.flags |= RDS_INFO_CONNECTION_FLAG_CONNECTED;
			break;
		default:
			break;
		}
		ci.tos = conn->tos;
		fn(&ci, arg);
	}
	rcu_read_unlock();
}

/**
 * rds_conn_rdma_info_walk() - RDS_INFO_IB_CONNECTIONS rows
 * @net: namespace
 * @fn: called with one row per connection of a transport that describes
 *	its RDMA side, under rcu_read_lock(), so it must not sleep
 * @arg: passed to @fn
 *
 * Addresses and tos always, as the distribution; the rest only while the
 * connection is up.
 *
 * Context: process context.
 */
void rds_conn_rdma_info_walk(struct net *net,
			     void (*fn)(const struct rds_info_rdma_connection *ri,
					void *arg),
			     void *arg)
{
	struct rds_info_rdma_connection ri;
	struct rds_conn *conn;

	rcu_read_lock();
	list_for_each_entry_rcu(conn, &rds_conn_list, all_item) {
		if (!net_eq(conn->net, net) || !conn->trans->rdma_conn_info)
			continue;
		memset(&ri, 0, sizeof(ri));
		ri.src_addr = conn->laddr;
		ri.dst_addr = conn->faddr;
		ri.tos = conn->tos;
		if (rds_conn_state(conn) == RDS_CONN_UP) {
			smp_rmb();	/* what the transport set before UP */
			conn->trans->rdma_conn_info(conn, &ri);
		}
		fn(&ri, arg);
	}
	rcu_read_unlock();
}

/**
 * rds_conn_msg_info_walk() - describe the messages on connections' queues
 * @net: namespace
 * @retrans: the messages sent and not yet acknowledged, else those not
 *	     yet sent
 * @fn: called with one RDS_INFO_SEND_MESSAGES or _RETRANS_MESSAGES row
 *	per message, under the connection's lock, so it must not sleep
 * @arg: passed to @fn
 *
 * Rows as the distribution writes them: our address and port first,
 * flags 0.
 *
 * Context: process context.
 */
void rds_conn_msg_info_walk(struct net *net, bool retrans,
			    void (*fn)(const struct rds_info_message *mi,
				       void *arg),
			    void *arg)
{
	struct rds_info_message mi;
	struct rds_conn *conn;
	struct rds_msg *m;

	rcu_read_lock();
	list_for_each_entry_rcu(conn, &rds_conn_list, all_item) {
		if (!net_eq(conn->net, net))
			continue;
		spin_lock_bh(&conn->lock);
		list_for_each_entry(m, retrans ? &conn->retrans :
				    &conn->send_queue, conn_item) {
			memset(&mi, 0, sizeof(mi));
			mi.seq = m->seq;
			mi.len = m->len;
			mi.laddr = conn->laddr;
			mi.faddr = conn->faddr;
			mi.lport = m->sport;
			mi.fport = m->dport;
			mi.tos = conn->tos;
			fn(&mi, arg);
		}
		spin_unlock_bh(&conn->lock);
	}
	rcu_read_unlock();
}

static void rds_conn_cancel_works(struct rds_conn *conn)
{
	cancel_delayed_work_sync(&conn->connect_w);
	cancel_delayed_work_sync(&conn->watchdog_w);
	cancel_delayed_work_sync(&conn->ack_probe_w);
	cancel_work_sync(&conn->shutdown_w);
	cancel_work_sync(&conn->send_w);
}

/*
 * The rule that lets a connection be freed: nothing queues work on a
 * connection once RDS_CONN_DEAD is set, except a caller that tested the
 * bit just before it was set.  Those are of two kinds:
 *  - the connection's own work items, which queue one another (a drop
 *    queues shutdown_w, shutdown_w queues connect_w, the watchdog
 *    re-arms itself).  An instance that runs after DEAD is set returns
 *    at once; the first round of cancels waits out those that began
 *    before.
 *  - the transport's callbacks (ESTABLISHED calls
 *    rds_zc_conn_connected(), which arms send_w and watchdog_w;
 *    completions kick or drop).  They can run until @conn_shutdown
 *    returns, after the first round.
 * So every work item is cancelled again once the transport is shut
 * down: what either kind queued in between is gone, and nothing can
 * queue more.
 */
static void rds_conn_destroy(struct rds_conn *conn)
{
	LIST_HEAD(done);

	set_bit(RDS_CONN_DEAD, &conn->flags);
	smp_mb__after_atomic();	/* DEAD before any work item runs again */
	rds_conn_cancel_works(conn);

	mutex_lock(&conn->work_mutex);
	conn->trans->conn_shutdown(conn);
	if (conn->xmit_msg) {
		rds_msg_put(conn->xmit_msg);
		WRITE_ONCE(conn->xmit_msg, NULL);
	}
	mutex_unlock(&conn->work_mutex);
	/* No transport callback runs any more: cancel what it queued. */
	rds_conn_cancel_works(conn);

	spin_lock_bh(&conn->lock);
	list_splice_init(&conn->retrans, &done);
	list_splice_tail_init(&conn->send_queue, &done);
	spin_unlock_bh(&conn->lock);
	rds_conn_msgs_done(&done);

	trace_rds_conn_state(conn, conn->laddr, conn->faddr, conn->tos,
			     rds_conn_state(conn), -1, "destroyed");
	conn->trans->conn_free(conn);
	rds_cong_map_put(conn->fmap);
	rds_cong_map_put(conn->lmap);
	mutex_destroy(&conn->work_mutex);
	kfree(conn);
}

/**
 * rds_conn_destroy_all() - destroy every connection of a transport
 * @trans: the transport being unregistered
 *
 * Messages still queued are dropped.  Sequence numbers start again at 1
 * on connections made afterwards, as with the distribution's module.
 *
 * Context: process context, may sleep.
 */
void rds_conn_destroy_all(const struct rds_transport *trans)
{
	struct rds_conn *conn, *tmp;
	LIST_HEAD(dead);

	spin_lock_bh(&rds_conn_lock);
	list_for_each_entry_safe(conn, tmp, &rds_conn_list, all_item) {
		if (conn->trans != trans)
			continue;
		hlist_del_rcu(&conn->hash_node);
		list_del_rcu(&conn->all_item);
		list_add_tail(&conn->all_item, &dead);
	}
	spin_unlock_bh(&rds_conn_lock);
	synchronize_rcu();

	list_for_each_entry_safe(conn, tmp, &dead, all_item)
		rds_conn_destroy(conn);
}

/**
 * rds_conn_init() - start the connection layer
 *
 * Return: 0 or -ENOMEM.
 */
int rds_conn_init(void)
{
	rds_conn_wq = alloc_workqueue("rds_zc_conn", WQ_UNBOUND | WQ_MEM_RECLAIM,
				      0);
	return rds_conn_wq ? 0 : -ENOMEM;
}

/**
 * rds_conn_exit() - stop the connection layer; every transport is gone
 */
void rds_conn_exit(void)
{
	WARN_ON(!list_empty(&rds_conn_list));
	destroy_workqueue(rds_conn_wq);
}
