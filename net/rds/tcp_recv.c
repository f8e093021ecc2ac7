// SPDX-License-Identifier: GPL-2.0
/*
 * The TCP transport's receive side: the stream cut back into messages
 * (tcp.h).
 *
 * data_ready reads the socket with tcp_read_sock() in the softirq that
 * took the data (or in the socket's owner releasing it), where TCP holds
 * the socket's lock: no work item is scheduled per frame, the window
 * opens as soon as TCP filled it, and a complete message reaches its
 * socket without a context switch.  rx_w, under lock_sock(), reads
 * instead where that cannot: the first bytes of a connection we made
 * (they make it UP), and a message that found no atomic memory (rx_w
 * allocates with GFP_KERNEL).
 *
 * A message of RDS_TCP_RX_SKB_MIN bytes or more stays in the socket
 * buffers it came in: each part of it is cut out of its skb
 * (pskb_extract(), which references the skb's pages rather than copy
 * them; a small part is copied, RDS_TCP_RX_PART_MIN) and chained to the
 * message (rds_msg_alloc_rx_skbs()), so that its bytes are copied once,
 * from the skbs to the reader, as a TCP socket's own reader does.  A
 * smaller message is copied into its own memory (inline, or pages), so
 * that it does not keep a buffer that mostly holds its neighbours.
 * Either way a message takes memory as its bytes arrive, so a peer that
 * announces a large message and never sends it holds about what it
 * sent: at most one message (RDS_MAX_MSG_SIZE) beside the socket's
 * receive buffer.  A length over RDS_MAX_MSG_SIZE, or a bad non-zero
 * header checksum, drops the connection.
 *
 * A complete message the core refuses (its socket is over its limit, or
 * no memory) is held, and nothing more is read until rx_resume_w offers
 * it again: TCP's window then holds the peer back.  A connection that
 * goes down meanwhile delivers it, and what is whole behind it, past the
 * limit (rds_tcp_rx_drain()).
 *
 * A message must be complete RDS_TCP_RX_DEADLINE after its first byte
 * came, and a second later for each RDS_TCP_RX_RATE bytes of it that
 * came (rx_deadline_w, armed while one is partial), or the connection is
 * dropped: a header that never completes, or a message sent a byte at a
 * time, holds its memory and its connection for no longer than that,
 * while a large one on a slow path (tiny segments, loss) arrives.
 * Bytes waiting past a hole in TCP's out-of-order queue extend it, up to
 * RDS_TCP_RX_LOSS: the peer sent them, and the link lost some before
 * them, which the peer's TCP sends again after a backoff that doubles
 * with each loss (after a cut link, or a few losses of one segment, more
 * than RDS_TCP_RX_DEADLINE).
 *
 * What TCP acknowledged is acknowledged to the peer's RDS (tcp.h), so a
 * connection that goes down is read once more before its socket is
 * released (rds_tcp_rx_drain()): every message already whole in the
 * socket is delivered, not lost.
 */
#include <linux/errno.h>
#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/net.h>
#include <linux/skbuff.h>
#include <linux/tcp.h>
#include <net/checksum.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "message.h"
#include "tcp.h"
#include "transport.h"

/* How often a held message, or one that found no memory, tries again. */
#define RDS_TCP_RX_RESUME_DELAY	max(msecs_to_jiffies(10), 2UL)

/*
 * Messages this large keep their skbs (above).  A part of
 * RDS_TCP_RX_PART_MIN bytes or more is cut out of its skb and charges
 * the receiving socket its share of what TCP charged for that skb
 * (truesize) and a descriptor; a smaller one is copied into a linear skb
 * of ours, filled to a page before the next, so that a peer sending a
 * message in tiny segments makes the message hold about its size, not a
 * descriptor and a buffer per segment.
 */
#define RDS_TCP_RX_SKB_MIN	(32 * 1024)
#define RDS_TCP_RX_PART_MIN	1024

/* The actor stopped: a message is held, or memory ran out. */
#define RDS_TCP_RX_WAIT		1

/**
 * rds_tcp_rx_reset() - forget a partial or held message
 * @tc: the connection, its socket gone and rx_w not running
 */
void rds_tcp_rx_reset(struct rds_tcp_conn *tc)
{
	if (tc->rx_msg)
		rds_msg_put(tc->rx_msg);
	tc->rx_msg = NULL;
	tc->rx_tail = NULL;
	tc->rx_own = NULL;
	WRITE_ONCE(tc->rx_held, false);
	tc->rx_bad = false;
	WRITE_ONCE(tc->rx_hdr_got, 0);
	WRITE_ONCE(tc->rx_len, 0);
	WRITE_ONCE(tc->rx_got, 0);
	tc->rx_base_wait = false;
}

/*
 * Whether the message just completed on a path > 0 must wait for path 0
 * of its pair.  A socket of the peer moves from path 0 to its own path
 * once TCP acknowledged its last message on path 0 (send.c), and TCP
 * acknowledges what our stack holds, not what we delivered: that message
 * may still be unread in path 0's socket, or held there for a full
 * receiving socket, when the first one on the new path arrives.  So a
 * message on a path > 0 waits until path 0 has read everything that had
 * reached it when the message was first looked at (rx_base_snap), and
 * holds no message, or until path 0's socket went (its last read took
 * all that was whole) or was replaced.  Nothing is waited for when
 * nothing came on path 0's socket (none, or one still connecting): the
 * snapshot is a sequence number of that socket, meaningless for another
 * (a stale one made a message wait until the new socket's copied_seq
 * happened to pass it).  One rds_tcp_conn of path 0 per pair, never
 * freed before its paths; its rx_* are read without a lock (tcp.h).
 * Return: true to wait (rx_resume_w offers the message again).
 */
static bool rds_tcp_rx_base_behind(struct rds_tcp_conn *tc)
{
	struct rds_tcp_conn *btc = tc->conn->base->tp;
	u32 gen = READ_ONCE(btc->rx_gen);

	smp_rmb();	/* rx_gen, then what it covers (set_callbacks) */
	if (!tc->rx_base_wait) {
		if (!READ_ONCE(btc->rx_seen))
			return false;
		smp_rmb();	/* rx_seen, then rx_arrived (data_ready) */
		tc->rx_base_wait = true;
		tc->rx_base_gen = gen;
		tc->rx_base_snap = READ_ONCE(btc->rx_arrived);
	}
	if (gen != tc->rx_base_gen)
		return false;
	if (!READ_ONCE(btc->rx_pub))
		return true;
	smp_rmb();	/* rx_pub, then rx_consumed (rds_tcp_rx_read()) */
	return before(READ_ONCE(btc->rx_consumed), tc->rx_base_snap) ||
	       READ_ONCE(btc->rx_held);
}

/* The header is complete: check it.  Return: 0 or an errno to drop. */
static int rds_tcp_rx_hdr(struct rds_tcp_conn *tc)
{
	const struct rds_tcp_hdr *h = (const struct rds_tcp_hdr *)tc->rx_hdr;
	u32 len = be32_to_cpu(h->h_len);

	if (h->h_csum && ip_fast_csum(h, RDS_TCP_HDR_SIZE / 4)) {
		rds_zc_recv_bad_checksum();
		return -EBADMSG;
	}
	if (len > RDS_MAX_MSG_SIZE)
		return -EMSGSIZE;
	WRITE_ONCE(tc->rx_len, len);
	WRITE_ONCE(tc->rx_got, 0);
	return 0;
}

/*
 * A message to reassemble into, with room for its incoming.  A
 * congestion map (8 KiB) is read into pages (rds_zc_conn_cong_recv()).
 * Return: 0 or -ENOMEM (try again).
 */
static int rds_tcp_rx_alloc(struct rds_tcp_conn *tc)
{
	BUILD_BUG_ON(RDS_TCP_RX_SKB_MIN <= RDS_CONG_MAP_BYTES);
	tc->rx_tail = NULL;
	tc->rx_own = NULL;
	if (tc->rx_len >= RDS_TCP_RX_SKB_MIN) {
		tc->rx_msg = rds_msg_alloc_rx_skbs(tc->rx_len, tc->rx_gfp);
		if (tc->rx_msg)
			tc->rx_tail = &tc->rx_msg->skbs;
	} else {
		tc->rx_msg = rds_msg_alloc_rx(tc->rx_len, tc->rx_gfp);
	}
	return tc->rx_msg ? 0 : -ENOMEM;
}

/* Chain @part to the message, charged @size. */
static void rds_tcp_rx_chain(struct rds_tcp_conn *tc, struct sk_buff *part,
			     size_t size)
{
	*tc->rx_tail = part;
	tc->rx_tail = &part->next;
	tc->rx_msg->skbs_size += size;
}

/*
 * Take up to @len payload bytes of @skb from @off for the message in
 * skbs: cut out of @skb, or copied (RDS_TCP_RX_PART_MIN).  Return: how
 * many, or -ENOMEM.
 */
static int rds_tcp_rx_take(struct rds_tcp_conn *tc, struct sk_buff *skb,
			   unsigned int off, size_t len)
{
	struct sk_buff *part = tc->rx_own;
	int ret;

	if (len >= RDS_TCP_RX_PART_MIN) {
		part = pskb_extract(skb, off, len, tc->rx_gfp | __GFP_NOWARN);
		if (!part)
			return -ENOMEM;
		rds_tcp_rx_chain(tc, part, SKB_TRUESIZE(0) +
				 DIV_ROUND_UP_ULL((u64)skb->truesize * len,
						  skb->len));
		tc->rx_own = NULL;
		return len;
	}
	if (!part || !skb_tailroom(part)) {
		part = alloc_skb(min_t(size_t, tc->rx_len - tc->rx_got,
				       SKB_MAX_HEAD(0)),
				 tc->rx_gfp | __GFP_NOWARN);
		if (!part)
			return -ENOMEM;
		rds_tcp_rx_chain(tc, part, part->truesize);
		tc->rx_own = part;
	}
	len = min_t(size_t, len, skb_tailroom(part));
	ret = skb_copy_bits(skb, off, skb_put(part, len), len);
	return ret ?: (int)len;
}

/*
 * Copy up to @len payload bytes from @skb at @off, or take them
 * (rds_tcp_rx_take()).  Return: how many, or -ENOMEM if memory was
 * needed and none came.
 */
static int rds_tcp_rx_copy(struct rds_tcp_conn *tc, struct sk_buff *skb,
			   unsigned int off, size_t len)
{
	struct rds_msg *m = tc->rx_msg;
	unsigned int i, poff;
	struct page *page;
	void *addr;
	int ret;

	len = min_t(size_t, len, tc->rx_len - tc->rx_got);
	if (tc->rx_tail)
		return rds_tcp_rx_take(tc, skb, off, len);
	if (m->data) {
		ret = skb_copy_bits(skb, off, m->data + tc->rx_got, len);
		return ret ?: (int)len;
	}
	i = tc->rx_got / PAGE_SIZE;
	poff = tc->rx_got % PAGE_SIZE;
	if (i == m->nr_pages) {
		page = alloc_page(tc->rx_gfp | __GFP_NOWARN);
		if (!page)
			return -ENOMEM;
		m->pages[m->nr_pages++] = page;
	}
	len = min_t(size_t, len, PAGE_SIZE - poff);
	addr = kmap_local_page(m->pages[i]);
	ret = skb_copy_bits(skb, off, addr + poff, len);
	kunmap_local(addr);
	return ret ?: (int)len;
}

/*
 * The message is complete: a congestion map, or one for the core.
 * Return: 0, RDS_TCP_RX_WAIT if it is held, or an errno to drop.
 */
static int rds_tcp_rx_done(struct rds_tcp_conn *tc)
{
	const struct rds_tcp_hdr *h = (const struct rds_tcp_hdr *)tc->rx_hdr;
	struct rds_msg *m = tc->rx_msg;
	int ret = 0;

	if (h->h_flags == RDS_FLAG_CONG_BITMAP) {
		rds_zc_conn_cong_recv(tc->conn, m);
	} else {
		if (tc->conn->path && !tc->rx_last &&
		    rds_tcp_rx_base_behind(tc)) {
			WRITE_ONCE(tc->rx_held, true);
			return RDS_TCP_RX_WAIT;
		}
		m->seq = be64_to_cpu(h->h_sequence);
		m->flags = h->h_flags;
		m->sport = h->h_sport;
		m->dport = h->h_dport;
		memcpy(m->exthdr, h->h_exthdr, sizeof(m->exthdr));
		ret = tc->rx_last ? rds_zc_conn_recv_last(tc->conn, m) :
				    rds_zc_conn_recv(tc->conn, m);
		if (ret == -EBUSY || ret == -ENOMEM) {
			WRITE_ONCE(tc->rx_held, true);
			return RDS_TCP_RX_WAIT;
		}
	}
	tc->rx_msg = NULL;	/* consumed */
	tc->rx_tail = NULL;
	tc->rx_own = NULL;
	tc->rx_base_wait = false;
	WRITE_ONCE(tc->rx_held, false);
	WRITE_ONCE(tc->rx_hdr_got, 0);
	WRITE_ONCE(tc->rx_len, 0);
	WRITE_ONCE(tc->rx_got, 0);
	return ret;
}

/*
 * Advance the reassembly with what @skb holds from @off.  Return: bytes
 * taken (> 0), 0 to stop with nothing taken (waiting, or desc->error).
 */
static int rds_tcp_rx_actor(read_descriptor_t *desc, struct sk_buff *skb,
			    unsigned int off, size_t len)
{
	struct rds_tcp_conn *tc = desc->arg.data;
	size_t left = len;
	int ret = 0;

	while (left && !tc->rx_held) {
		if (tc->rx_hdr_got < RDS_TCP_HDR_SIZE) {
			size_t n = min_t(size_t, left,
					 RDS_TCP_HDR_SIZE - tc->rx_hdr_got);

			if (!tc->rx_hdr_got)	/* a message begins */
				WRITE_ONCE(tc->rx_since, jiffies);

			ret = skb_copy_bits(skb, off, tc->rx_hdr + tc->rx_hdr_got,
					    n);
			if (ret)
				break;
			WRITE_ONCE(tc->rx_hdr_got, tc->rx_hdr_got + n);
			off += n;
			left -= n;
			if (tc->rx_hdr_got < RDS_TCP_HDR_SIZE)
				break;
			ret = rds_tcp_rx_hdr(tc);
			if (ret)
				break;
		}
		if (!tc->rx_msg) {
			ret = rds_tcp_rx_alloc(tc);
			if (ret)
				break;
		}
		if (tc->rx_got < tc->rx_len) {
			ret = rds_tcp_rx_copy(tc, skb, off, left);
			if (ret < 0)
				break;
			WRITE_ONCE(tc->rx_got, tc->rx_got + ret);
			off += ret;
			left -= ret;
			ret = 0;
		}
		if (tc->rx_got == tc->rx_len) {
			ret = rds_tcp_rx_done(tc);
			if (ret)
				break;
		}
	}
	if (ret)
		desc->error = ret;
	return len - left;
}

/*
 * Offer a held message again, then read what the socket has, allocating
 * with @gfp.  Caller holds the socket's lock.  Return: 0,
 * RDS_TCP_RX_WAIT, -ENOMEM (both: try again later) or an errno to drop.
 */
static int rds_tcp_rx_read(struct rds_tcp_conn *tc, struct sock *sk,
			   gfp_t gfp)
{
	read_descriptor_t desc = {
		.arg.data = tc,
		.count = 1,	/* the actor stops itself */
	};
	int ret;

	tc->rx_gfp = gfp;

	/* A header whose message found no memory, or a held message. */
	if (tc->rx_hdr_got == RDS_TCP_HDR_SIZE && !tc->rx_msg) {
		ret = rds_tcp_rx_alloc(tc);
		if (ret)
			return ret;
	}
	if (tc->rx_msg && tc->rx_got == tc->rx_len) {
		ret = rds_tcp_rx_done(tc);
		if (ret)
			return ret;
	}
	tcp_read_sock(sk, &desc, rds_tcp_rx_actor);
	/* For the pair's other paths (rds_tcp_rx_base_behind()). */
	WRITE_ONCE(tc->rx_consumed, READ_ONCE(tcp_sk(sk)->copied_seq));
	smp_wmb();	/* rx_consumed, then rx_pub */
	WRITE_ONCE(tc->rx_pub, true);
	return desc.error;
}

/*
 * What a read that returned @ret leaves to do: offer a held message
 * again later, drop the connection after bad data, or time a partial
 * message.  Caller holds the socket's lock (rx_bad).
 */
static void rds_tcp_rx_next(struct rds_tcp_conn *tc, int ret)
{
	if (ret == RDS_TCP_RX_WAIT || ret == -ENOMEM) {
		queue_delayed_work(rds_tcp_wq, &tc->rx_resume_w,
				   RDS_TCP_RX_RESUME_DELAY);
	} else if (ret) {
		tc->rx_bad = true;
		rds_zc_conn_drop(tc->conn, "bad data from the peer");
	} else if (READ_ONCE(tc->rx_hdr_got)) {	/* a message is partial */
		queue_delayed_work(rds_tcp_wq, &tc->rx_deadline_w,
				   RDS_TCP_RX_DEADLINE);
	}
}

/*
 * data_ready's read, the socket locked by TCP.  A message that found no
 * atomic memory is left to rx_w, which may sleep for it.
 */
static void rds_tcp_rx_now(struct rds_tcp_conn *tc, struct sock *sk)
{
	int ret = rds_tcp_rx_read(tc, sk, GFP_ATOMIC);

	if (ret == -ENOMEM)
		queue_work(rds_tcp_wq, &tc->rx_w);
	else
		rds_tcp_rx_next(tc, ret);
}

/**
 * rds_tcp_data_ready() - data arrived on a connection's socket
 * @sk: the socket
 *
 * Reads the socket at once (above), unless our connection still waits
 * for the peer's first bytes, or bad data stopped the stream.
 *
 * Context: softirq, or the socket's owner releasing it; TCP holds the
 * socket's lock either way.
 */
void rds_tcp_data_ready(struct sock *sk)
{
	void (*ready)(struct sock *sk);
	struct rds_tcp_conn *tc;

	read_lock_bh(&sk->sk_callback_lock);
	tc = sk->sk_user_data;
	if (!tc) {
		ready = sk->sk_data_ready;
		goto out;
	}
	ready = tc->orig_data_ready;
	/*
	 * For the pair's other paths (rds_tcp_rx_base_behind()): TCP calls
	 * this in the softirq that took the data, before or right after the
	 * ACK that lets the peer move a socket to another path, and the
	 * peer's answer to that ACK cannot come before the softirq ends.
	 */
	if (!tc->conn->path) {
		WRITE_ONCE(tc->rx_arrived, READ_ONCE(tcp_sk(sk)->rcv_nxt));
		smp_wmb();	/* rx_arrived, then rx_seen */
		WRITE_ONCE(tc->rx_seen, true);
	}
	if (test_bit(RDS_TCP_AWAIT_PEER, &tc->tx_flags))
		queue_work(rds_tcp_wq, &tc->rx_w);
	else if (!tc->rx_bad)
		rds_tcp_rx_now(tc, sk);
out:
	read_unlock_bh(&sk->sk_callback_lock);
	ready(sk);
}

/**
 * rds_tcp_rx_work() - rx_w: read the connection's socket
 * @work: the connection's rx_w
 */
void rds_tcp_rx_work(struct work_struct *work)
{
	struct rds_tcp_conn *tc = container_of(work, struct rds_tcp_conn,
					       rx_w);
	struct sock *sk = tc->sock->sk;

	lock_sock(sk);
	/* Our connection: the peer's first bytes say it took it (tcp.h). */
	if (test_bit(RDS_TCP_AWAIT_PEER, &tc->tx_flags) &&
	    !skb_queue_empty(&sk->sk_receive_queue) &&
	    test_and_clear_bit(RDS_TCP_AWAIT_PEER, &tc->tx_flags)) {
		WRITE_ONCE(tc->poked_until, 0);
		rds_zc_conn_connected(tc->conn);
	}
	if (!tc->rx_bad)
		rds_tcp_rx_next(tc, rds_tcp_rx_read(tc, sk, GFP_KERNEL));
	release_sock(sk);
}

/**
 * rds_tcp_rx_deadline_work() - rx_deadline_w: a message is still partial
 * @work: the connection's rx_deadline_w
 *
 * Armed by rx_w when it left a message partial (and not already armed):
 * the message that was partial then, or a later one, must be whole by
 * RDS_TCP_RX_DEADLINE after its first byte and a second for each
 * RDS_TCP_RX_RATE bytes that came, or RDS_TCP_RX_LOSS while TCP's
 * out-of-order queue holds bytes past a hole.  A held message is
 * whole: the core, not the peer, holds it up.  It reads rx_w's state
 * without its lock: rx_since is read on both sides of rx_hdr_got, so
 * that a message that completed meanwhile is not taken for a late one.
 * The socket is there: rds_tcp_release_sock() cancels this work before
 * it lets the socket go, and the queue's root is read once, unlocked.
 */
void rds_tcp_rx_deadline_work(struct work_struct *work)
{
	struct rds_tcp_conn *tc = container_of(to_delayed_work(work),
					       struct rds_tcp_conn,
					       rx_deadline_w);
	unsigned long since = READ_ONCE(tc->rx_since);
	unsigned long due;
	u32 got;

	smp_rmb();	/* rx_since, then rx_hdr_got, then rx_since */
	if (!READ_ONCE(tc->rx_hdr_got) || READ_ONCE(tc->rx_held))
		return;		/* nothing partial; rx_w re-arms after */
	got = READ_ONCE(tc->rx_got);
	smp_rmb();	/* rx_got, then rx_since and rx_hdr_got again */
	if (READ_ONCE(tc->rx_since) != since || !READ_ONCE(tc->rx_hdr_got))
		return;		/* it completed, or a new one began */
	/* got is this message's, or less (it completed meanwhile: above). */
	due = since + RDS_TCP_RX_DEADLINE + (got / RDS_TCP_RX_RATE) * HZ;
	if (time_before(jiffies, due)) {
		queue_delayed_work(rds_tcp_wq, &tc->rx_deadline_w,
				   due - jiffies);
		return;
	}
	/* Late: the network's, while TCP waits to fill a hole; look again. */
	if (time_before(jiffies, since + RDS_TCP_RX_LOSS) &&
	    !RB_EMPTY_ROOT(&tcp_sk(tc->sock->sk)->out_of_order_queue)) {
		queue_delayed_work(rds_tcp_wq, &tc->rx_deadline_w, HZ);
		return;
	}
	rds_zc_conn_drop(tc->conn, "a message did not complete in time");
}

/**
 * rds_tcp_rx_drain() - deliver the whole messages left in a socket
 * @tc: the connection, its callbacks removed and rx_w cancelled
 *
 * TCP acknowledged them, and so did we to the peer: they are delivered
 * now, or they would be lost, a held message and those behind it too,
 * past their socket's hard limit (rds_zc_conn_recv_last()).  A partial
 * message is not (the peer sends it again); neither is anything after
 * bad data.
 */
void rds_tcp_rx_drain(struct rds_tcp_conn *tc)
{
	struct sock *sk = tc->sock->sk;

	lock_sock(sk);
	tc->rx_last = true;
	if (!tc->rx_bad)
		rds_tcp_rx_read(tc, sk, GFP_KERNEL);
	tc->rx_last = false;
	release_sock(sk);
}

/**
 * rds_tcp_rx_resume_work() - rx_resume_w: try a held message again
 * @work: the connection's rx_resume_w
 */
void rds_tcp_rx_resume_work(struct work_struct *work)
{
	struct rds_tcp_conn *tc = container_of(to_delayed_work(work),
					       struct rds_tcp_conn,
					       rx_resume_w);

	queue_work(rds_tcp_wq, &tc->rx_w);
}
