// SPDX-License-Identifier: GPL-2.0
/*
 * The TCP transport's receive side: the stream cut back into messages
 * (tcp.h).
 *
 * data_ready queues rx_w, which reads the socket under lock_sock() with
 * tcp_read_sock().  A message's pages are allocated as its bytes arrive,
 * so a peer that announces a large message and never sends it holds no
 * more than what it sent: at most one message (RDS_MAX_MSG_SIZE) beside
 * the socket's receive buffer.  A length over RDS_MAX_MSG_SIZE, or a bad
 * non-zero header checksum, drops the connection.
 *
 * A complete message the core refuses (its socket is over its limit, or
 * no memory) is held, and nothing more is read until rx_resume_w offers
 * it again: TCP's window then holds the peer back.  A connection that
 * goes down meanwhile delivers it, and what is whole behind it, past the
 * limit (rds_tcp_rx_drain()).
 *
 * A message must be complete RDS_TCP_RX_DEADLINE after its first byte
 * came (rx_deadline_w, armed while one is partial), or the connection is
 * dropped: a header that never completes, or a message sent a byte at a
 * time, holds its memory and its connection for no longer than that.
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

/* The actor stopped: a message is held, or memory ran out. */
#define RDS_TCP_RX_WAIT		1

/**
 * rds_tcp_data_ready() - data arrived on a connection's socket
 * @sk: the socket
 *
 * Context: softirq, or the socket's owner releasing it.
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
	queue_work(rds_tcp_wq, &tc->rx_w);
out:
	read_unlock_bh(&sk->sk_callback_lock);
	ready(sk);
}

/**
 * rds_tcp_rx_reset() - forget a partial or held message
 * @tc: the connection, its socket gone and rx_w not running
 */
void rds_tcp_rx_reset(struct rds_tcp_conn *tc)
{
	if (tc->rx_msg)
		rds_msg_put(tc->rx_msg);
	tc->rx_msg = NULL;
	WRITE_ONCE(tc->rx_held, false);
	tc->rx_bad = false;
	WRITE_ONCE(tc->rx_hdr_got, 0);
	WRITE_ONCE(tc->rx_len, 0);
	WRITE_ONCE(tc->rx_got, 0);
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

/* A message to reassemble into.  Return: 0 or -ENOMEM (try again). */
static int rds_tcp_rx_alloc(struct rds_tcp_conn *tc)
{
	if (tc->rx_len <= RDS_MSG_INLINE_MAX)
		tc->rx_msg = rds_msg_alloc_inline(tc->rx_len, GFP_KERNEL);
	else
		tc->rx_msg = rds_msg_alloc_empty(tc->rx_len, GFP_KERNEL);
	return tc->rx_msg ? 0 : -ENOMEM;
}

/*
 * Copy up to @len payload bytes from @skb at @off.  Return: how many, or
 * -ENOMEM if a page was needed and none came.
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
	if (m->data) {
		ret = skb_copy_bits(skb, off, m->data + tc->rx_got, len);
		return ret ?: (int)len;
	}
	i = tc->rx_got / PAGE_SIZE;
	poff = tc->rx_got % PAGE_SIZE;
	if (i == m->nr_pages) {
		page = alloc_page(GFP_KERNEL | __GFP_NOWARN);
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
 * Offer a held message again, then read what the socket has.  Caller
 * holds lock_sock().  Return: 0, RDS_TCP_RX_WAIT, -ENOMEM (both: try
 * again later) or an errno to drop.
 */
static int rds_tcp_rx_read(struct rds_tcp_conn *tc, struct sock *sk)
{
	read_descriptor_t desc = {
		.arg.data = tc,
		.count = 1,	/* the actor stops itself */
	};
	int ret;

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
	return desc.error;
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
	int ret;

	lock_sock(sk);
	/* Our connection: the peer's first bytes say it took it (tcp.h). */
	if (test_bit(RDS_TCP_AWAIT_PEER, &tc->tx_flags) &&
	    !skb_queue_empty(&sk->sk_receive_queue) &&
	    test_and_clear_bit(RDS_TCP_AWAIT_PEER, &tc->tx_flags)) {
		WRITE_ONCE(tc->poked_until, 0);
		rds_zc_conn_connected(tc->conn);
	}
	ret = rds_tcp_rx_read(tc, sk);
	if (ret && ret != RDS_TCP_RX_WAIT && ret != -ENOMEM)
		tc->rx_bad = true;
	release_sock(sk);
	if (ret == RDS_TCP_RX_WAIT || ret == -ENOMEM)
		queue_delayed_work(rds_tcp_wq, &tc->rx_resume_w,
				   RDS_TCP_RX_RESUME_DELAY);
	else if (ret)
		rds_zc_conn_drop(tc->conn, "bad data from the peer");
	else if (READ_ONCE(tc->rx_hdr_got))	/* a message is partial */
		queue_delayed_work(rds_tcp_wq, &tc->rx_deadline_w,
				   RDS_TCP_RX_DEADLINE);
}

/**
 * rds_tcp_rx_deadline_work() - rx_deadline_w: a message is still partial
 * @work: the connection's rx_deadline_w
 *
 * Armed by rx_w when it left a message partial (and not already armed):
 * the message that was partial then, or a later one, must be whole by
 * RDS_TCP_RX_DEADLINE after its first byte.  A held message is whole:
 * the core, not the peer, holds it up.  It reads rx_w's state
 * without its lock: rx_since is read on both sides of rx_hdr_got, so
 * that a message that completed meanwhile is not taken for a late one.
 */
void rds_tcp_rx_deadline_work(struct work_struct *work)
{
	struct rds_tcp_conn *tc = container_of(to_delayed_work(work),
					       struct rds_tcp_conn,
					       rx_deadline_w);
	unsigned long since = READ_ONCE(tc->rx_since);
	unsigned long due;

	smp_rmb();	/* rx_since, then rx_hdr_got, then rx_since */
	if (!READ_ONCE(tc->rx_hdr_got) || READ_ONCE(tc->rx_held))
		return;		/* nothing partial; rx_w re-arms after */
	smp_rmb();
	if (READ_ONCE(tc->rx_since) != since)
		return;		/* a new message began: rx_w re-arms */
	due = since + RDS_TCP_RX_DEADLINE;
	if (time_before(jiffies, due)) {
		queue_delayed_work(rds_tcp_wq, &tc->rx_deadline_w,
				   due - jiffies);
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
		rds_tcp_rx_read(tc, sk);
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
