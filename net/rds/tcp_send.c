// SPDX-License-Identifier: GPL-2.0
/*
 * The TCP transport's send side: a message goes out as its header and
 * its payload on the stream, and is acknowledged once TCP's snd_una has
 * passed its last byte (tcp.h).
 *
 * Each message sent, but for congestion maps, leaves an entry in the ACK
 * ring: its RDS sequence number and the TCP sequence number just after
 * it.  write_space, which TCP calls as ACKs free its send queue (xmit
 * sets SOCK_NOSPACE so that it does), takes the entries snd_una passed
 * and acknowledges them to the core.  A full ring makes xmit wait, as a
 * full socket does; write_space kicks the core when there is room.
 */
#include <linux/bvec.h>
#include <linux/errno.h>
#include <linux/highmem.h>
#include <linux/net.h>
#include <linux/socket.h>
#include <linux/tcp.h>
#include <linux/uio.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "message.h"
#include "tcp.h"
#include "transport.h"

/**
 * rds_tcp_ack_reset() - forget what the previous socket had in flight
 * @tc: the connection, its socket gone or not yet set
 */
void rds_tcp_ack_reset(struct rds_tcp_conn *tc)
{
	spin_lock_bh(&tc->ack_lock);
	tc->ack_head = 0;
	tc->ack_nr = 0;
	tc->last_sent_nxt = 0;
	tc->last_expected_una = 0;
	tc->last_seen_una = 0;
	spin_unlock_bh(&tc->ack_lock);
	tc->tx_cur = NULL;
	clear_bit(RDS_TCP_TX_BLOCKED, &tc->tx_flags);
}

/*
 * Note message @m, of @bytes on the stream from TCP sequence @start.
 * Return: false if the ring is full.
 */
static bool rds_tcp_ack_push(struct rds_tcp_conn *tc,
			     const struct rds_msg *m, u32 start, u32 bytes)
{
	struct rds_tcp_ack_ent *e;
	bool ok = false;

	spin_lock_bh(&tc->ack_lock);
	if (tc->ack_nr < RDS_TCP_ACK_RING) {
		e = &tc->ack_ring[(tc->ack_head + tc->ack_nr) % RDS_TCP_ACK_RING];
		e->seq = m->seq;
		e->end = start + bytes;
		if (!tc->ack_nr)
			tc->last_ack_jiffies = jiffies;
		tc->ack_nr++;
		tc->last_sent_nxt = start;
		tc->last_expected_una = start + bytes;
		ok = true;
	}
	spin_unlock_bh(&tc->ack_lock);
	return ok;
}

/*
 * Take the entries TCP acknowledged up to @una.  Return: true, with the
 * newest of their RDS sequence numbers in @seq, if there were any.
 */
static bool rds_tcp_ack_pop(struct rds_tcp_conn *tc, u32 una, u64 *seq)
{
	struct rds_tcp_ack_ent *e;
	bool any = false;

	spin_lock_bh(&tc->ack_lock);
	tc->last_seen_una = una;
	while (tc->ack_nr) {
		e = &tc->ack_ring[tc->ack_head];
		if ((s32)(una - e->end) < 0)
			break;
		*seq = e->seq;
		any = true;
		tc->ack_head = (tc->ack_head + 1) % RDS_TCP_ACK_RING;
		tc->ack_nr--;
	}
	if (any)
		tc->last_ack_jiffies = jiffies;
	spin_unlock_bh(&tc->ack_lock);
	return any;
}

/**
 * rds_tcp_conn_tx_state() - for the core's ACK watchdog
 * @conn: the connection
 * @posted: messages TCP has not acknowledged yet
 * @idle: jiffies since TCP last acknowledged one (0 if none waits)
 */
void rds_tcp_conn_tx_state(struct rds_conn *conn, unsigned int *posted,
			   unsigned long *idle)
{
	struct rds_tcp_conn *tc = conn->tp;

	spin_lock_bh(&tc->ack_lock);
	*posted = tc->ack_nr;
	*idle = tc->ack_nr ? jiffies - tc->last_ack_jiffies : 0;
	spin_unlock_bh(&tc->ack_lock);
}

/**
 * rds_tcp_write_space() - TCP freed send space: ACKs came
 * @sk: a connection's socket
 *
 * Context: softirq, or the socket's owner releasing it.
 */
void rds_tcp_write_space(struct sock *sk)
{
	void (*write_space)(struct sock *sk);
	struct rds_tcp_conn *tc;
	u64 seq = 0;

	read_lock_bh(&sk->sk_callback_lock);
	tc = sk->sk_user_data;
	if (!tc) {
		write_space = sk->sk_write_space;
		goto out;
	}
	write_space = tc->orig_write_space;
	if (rds_tcp_ack_pop(tc, READ_ONCE(tcp_sk(sk)->snd_una), &seq))
		rds_zc_conn_acked(tc->conn, seq);
	if (test_bit(RDS_TCP_TX_BLOCKED, &tc->tx_flags) &&
	    sk_stream_is_writeable(sk) &&
	    READ_ONCE(tc->ack_nr) < RDS_TCP_ACK_RING &&
	    test_and_clear_bit(RDS_TCP_TX_BLOCKED, &tc->tx_flags))
		rds_zc_conn_kick(tc->conn);
out:
	read_unlock_bh(&sk->sk_callback_lock);
	write_space(sk);
	/*
	 * TCP calls write_space only with SOCK_NOSPACE set, and its own
	 * write_space clears it: set it again, or later ACKs go unseen.
	 */
	if (sk->sk_socket)
		set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
}

static int rds_tcp_send_kvec(struct socket *sock, void *buf, size_t len,
			     bool more)
{
	struct msghdr msg = {
		.msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL | (more ? MSG_MORE : 0),
	};
	struct kvec vec = { .iov_base = buf, .iov_len = len };

	return kernel_sendmsg(sock, &msg, &vec, 1, len);
}

/* Build the header of @m in tx_hdr. */
static void rds_tcp_build_hdr(struct rds_tcp_conn *tc, const struct rds_msg *m)
{
	struct rds_tcp_hdr *h = &tc->tx_hdr;

	memset(h, 0, sizeof(*h));
	h->h_sequence = cpu_to_be64(m->seq);
	h->h_len = cpu_to_be32(m->len);
	h->h_sport = m->sport;
	h->h_dport = m->dport;
	h->h_flags = m->flags;
	memcpy(h->h_exthdr, m->exthdr, sizeof(h->h_exthdr));
}

#ifndef RDS_TCP_SENDPAGE
#define RDS_TCP_SEND_BVECS	16	/* pages handed to TCP in one call */

/*
 * Hand TCP the pages of @m's payload from @off, up to RDS_TCP_SEND_BVECS
 * of them, without copying: TCP takes its own reference on each page it
 * puts in an skb, so a page outlives the message while an skb (a
 * retransmission, a clone in a queue) still holds it.  Those are the
 * message's own pages or, for MSG_ZEROCOPY, the sender's pinned pages,
 * which it must not write before its completion (after TCP acknowledged
 * every byte).  Return: as sock_sendmsg().
 */
static int rds_tcp_send_pages(struct socket *sock, const struct rds_msg *m,
			      size_t off)
{
	struct msghdr msg = {
		.msg_flags = MSG_SPLICE_PAGES | MSG_DONTWAIT | MSG_NOSIGNAL,
	};
	struct bio_vec bvec[RDS_TCP_SEND_BVECS];
	size_t len = 0, poff, n;
	struct page *page;
	unsigned int i;

	for (i = 0; i < RDS_TCP_SEND_BVECS && off + len < m->len; i++) {
		/* a zero-copy message starts anywhere in its first page */
		page = rds_msg_page(m, off + len, &poff);
		n = min_t(size_t, m->len - off - len, PAGE_SIZE - poff);
		bvec_set_page(&bvec[i], page, n, poff);
		len += n;
	}
	if (off + len < m->len)
		msg.msg_flags |= MSG_MORE;
	iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, bvec, i, len);
	return sock_sendmsg(sock, &msg);
}
#else
/*
 * The same, a page at a time, by sendpage: the kernel has it (Kbuild),
 * and its TCP does not splice with MSG_SPLICE_PAGES yet.  A page before
 * the last says MSG_SENDPAGE_NOTLAST too, or TCP pushes what it has
 * after each page: a 64 KiB message then left in some ten bursts of two
 * or three segments, not two of up to 64 KiB, and the receiver's GRO,
 * TCP and ACKs worked twice (make profile's tcp64k point: 4.6 segments
 * sent a message, and 17 pushes).
 */
static int rds_tcp_send_pages(struct socket *sock, const struct rds_msg *m,
			      size_t off)
{
	int flags = MSG_DONTWAIT | MSG_NOSIGNAL;
	struct page *page;
	size_t len, poff;

	page = rds_msg_page(m, off, &poff);
	len = min_t(size_t, m->len - off, PAGE_SIZE - poff);
	if (off + len < m->len)
		flags |= MSG_MORE | MSG_SENDPAGE_NOTLAST;
	return kernel_sendpage(sock, page, poff, len, flags);
}
#endif

/* Send bytes of @m's payload from @off.  Return as sock_sendmsg(). */
static int rds_tcp_send_payload(struct socket *sock, const struct rds_msg *m,
				size_t off)
{
	if (m->data)
		return rds_tcp_send_kvec(sock, m->data + off, m->len - off,
					 false);
	return rds_tcp_send_pages(sock, m, off);
}

/**
 * rds_tcp_xmit() - put a message on the stream
 * @conn: the connection, UP
 * @m: the message
 * @frag: bytes of it (header and payload) already sent; advanced
 *
 * Context: the core's send path, under its work_mutex.
 * Return: 0 when all of it is in TCP's hands, -EAGAIN when the socket or
 * the ACK ring is full (write_space kicks the core), another negative
 * errno to drop the connection.
 */
int rds_tcp_xmit(struct rds_conn *conn, struct rds_msg *m, unsigned int *frag)
{
	struct rds_tcp_conn *tc = conn->tp;
	struct socket *sock = tc->sock;
	size_t total = RDS_TCP_HDR_SIZE + m->len;
	size_t pos = *frag;
	int ret;

	if (!sock || tc->poke)
		return -ENOTCONN;
	set_bit(RDS_TCP_TX_BLOCKED, &tc->tx_flags);	/* write_space kicks */
	if (!pos && tc->tx_cur != m) {
		/*
		 * TCP acknowledges every message: asking for it keeps the
		 * core from sending ACK probes.  Never on a congestion map,
		 * which the distribution recognises by its flags alone.
		 */
		if (!(m->flags & RDS_FLAG_CONG_BITMAP)) {
			m->flags |= RDS_FLAG_ACK_REQUIRED;
			if (!rds_tcp_ack_push(tc, m,
					      READ_ONCE(tcp_sk(sock->sk)->write_seq),
					      total))
				return -EAGAIN;
		}
		rds_tcp_build_hdr(tc, m);
		tc->tx_cur = m;
	}
	while (pos < total) {
		set_bit(SOCK_NOSPACE, &sock->flags);
		if (pos < RDS_TCP_HDR_SIZE)
			ret = rds_tcp_send_kvec(sock, (u8 *)&tc->tx_hdr + pos,
						RDS_TCP_HDR_SIZE - pos,
						m->len != 0);
		else
			ret = rds_tcp_send_payload(sock, m,
						   pos - RDS_TCP_HDR_SIZE);
		if (ret <= 0) {
			*frag = pos;
			return ret ?: -EPIPE;
		}
		pos += ret;
	}
	*frag = pos;
	tc->tx_cur = NULL;
	clear_bit(RDS_TCP_TX_BLOCKED, &tc->tx_flags);
	return 0;
}
