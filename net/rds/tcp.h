/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The TCP transport: RDS datagrams over kernel TCP sockets, as the
 * distribution's rds_tcp carries them (Documentation/networking/
 * rds_zc.rst, "RDS over TCP").
 *
 * On the wire: every message is one 48-byte RDS header (the IB
 * transport's layout, checksum 0) followed by its whole payload, on one
 * TCP connection per pair of addresses, to port RDS_TCP_PORT.  There are
 * no ACK frames: a message is acknowledged once TCP has acknowledged its
 * last byte (snd_una passed it).
 *
 * Who connects: the end with the lower address.  The higher one, when it
 * has something to send, only pokes: it opens a TCP connection that the
 * lower end resets, which makes the lower end connect.  The lower end
 * resets every connection that comes from a higher address; so two ends
 * never race, whether they run this module or the distribution's.
 *
 * The lower end's connection is UP only once the peer has sent its first
 * bytes (its congestion map, which both ends send first): TCP completes
 * the handshake and acknowledges data before the peer's RDS has looked
 * at the connection, and the distribution's higher end resets one that
 * comes while its own attempt is still going down.  What TCP
 * acknowledged there would be lost, as the ACK frees it here.
 *
 * Multipath (connection.h, wire 10.6): between two nodes that name each
 * path in their source port (SPORT_IDX), a pair of addresses has
 * RDS_CONN_PATHS connections, each a struct rds_conn with its own
 * struct rds_tcp_conn.  The lower address connects each from a source
 * port whose low bits are its path, and reconnects every path > 0 after
 * each drop; the higher one never connects nor pokes a path > 0
 * (accept_only) and maps an accepted connection to its path by that
 * port.  A peer without SPORT_IDX gets one path.
 *
 * Locking, per connection (struct rds_tcp_conn):
 *  - sock_mutex protects sock, poke and the saved callbacks: connect,
 *    accept and shutdown install or remove the socket under it.  It
 *    nests inside the core's work_mutex (connect and shutdown run under
 *    that) and outside the TCP socket's lock.
 *  - the socket's sk_callback_lock (read side in the callbacks) keeps
 *    sk_user_data valid while a callback runs; callbacks are removed
 *    under its write side, after which none runs for this socket.
 *  - the receive state (rx_*) belongs to whoever holds the socket's
 *    lock: data_ready (TCP holds it) or rx_w (lock_sock()).  Shutdown
 *    reads what is left once more, after the callbacks are removed and
 *    rx_w is cancelled.
 *    rx_deadline_w only reads rx_since, rx_hdr_got and rx_held
 *    (READ_ONCE).
 *  - ack_lock (bottom halves off) protects the ACK ring and the
 *    sequence numbers shown in RDS_INFO_TCP_SOCKETS.
 *  - xmit runs under the core's work_mutex only while the connection is
 *    UP; the socket changes only while it is not, so xmit reads sock
 *    without sock_mutex.
 */
#ifndef _RDS_ZC_TCP_H
#define _RDS_ZC_TCP_H

#include <linux/in6.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct net;
struct rds_conn;
struct rds_msg;
struct rds_transport;
struct sk_buff;
struct sock;
struct socket;

/* The distribution's port for RDS over TCP, IPv4 and IPv6. */
#define RDS_TCP_PORT		16385

/* The header in front of every message on the stream. */
struct rds_tcp_hdr {
	__be64	h_sequence;
	__be64	h_ack;		/* 0: TCP acknowledges */
	__be32	h_len;		/* payload bytes that follow */
	__be16	h_sport;
	__be16	h_dport;
	u8	h_flags;	/* RDS_FLAG_* */
	u8	h_credit;	/* 0 */
	u8	h_padding[4];
	__sum16	h_csum;		/* 0 on TCP; a peer's non-zero one is checked */
	u8	h_exthdr[16];
};

#define RDS_TCP_HDR_SIZE	48

/*
 * Messages sent and not yet acknowledged by TCP, at most: past this xmit
 * waits for ACKs.  It bounds the ring, whatever the socket buffers.
 */
#define RDS_TCP_ACK_RING	512

/*
 * A message must arrive whole within this of its first byte, or the
 * connection is reset: a peer that stops inside a message, or sends it
 * a byte at a time, holds what it sent for no longer than this.  Each
 * RDS_TCP_RX_RATE bytes of it that came add a second: a large message
 * on a slow or lossy path arrives, however long it takes, as long as it
 * comes at least that fast.  While TCP holds bytes past a hole (the link
 * lost some that the peer sent, which its TCP sends again after its
 * backoff), up to RDS_TCP_RX_LOSS: 8 losses in a row of one segment,
 * from TCP's 200 ms.
 */
#define RDS_TCP_RX_DEADLINE	(10 * HZ)
#define RDS_TCP_RX_RATE		4096
#define RDS_TCP_RX_LOSS		(60 * HZ)

struct rds_tcp_ack_ent {
	u64	seq;		/* RDS sequence number */
	u32	end;		/* TCP sequence just after its last byte */
};

struct rds_tcp_conn {
	struct rds_conn	*conn;

	struct mutex	sock_mutex;	/* see the top of this file */
	struct socket	*sock;		/* the connection, or the poke */
	bool		poke;		/* sock only pokes the peer */
	void		(*orig_data_ready)(struct sock *sk);
	void		(*orig_write_space)(struct sock *sk);
	void		(*orig_state_change)(struct sock *sk);
	struct delayed_work poke_w;	/* the peer did not connect back */
	/*
	 * The peer poked us (it has something to send) until then, in
	 * jiffies, 0: not.  Our core reconnects only for what we have to
	 * send, so retry_w connects again, as long as this lasts, after an
	 * attempt of ours failed (the distribution's higher end never
	 * reconnects by itself).  Written under sock_mutex, read anywhere.
	 */
	unsigned long	poked_until;
	struct delayed_work retry_w;

	/* Receive state: the socket lock holder's (above). */
	struct work_struct rx_w;
	struct delayed_work rx_resume_w;	/* a held message, again */
	struct delayed_work rx_deadline_w;	/* RDS_TCP_RX_DEADLINE */
	unsigned long	rx_since;	/* jiffies: the message's first byte */
	bool		rx_bad;		/* the stream cannot be read on */
	u8		rx_hdr[RDS_TCP_HDR_SIZE];
	unsigned int	rx_hdr_got;
	struct rds_msg	*rx_msg;	/* being reassembled, or held */
	struct sk_buff	**rx_tail;	/* where its next skb goes, if any */
	struct sk_buff	*rx_own;	/* its last, if ours with room */
	u32		rx_len;		/* its payload bytes */
	u32		rx_got;		/* of them received so far */
	bool		rx_held;	/* complete, refused: wait */
	bool		rx_last;	/* rx_drain(): nothing may wait */
	gfp_t		rx_gfp;		/* of this read's allocations */
	/*
	 * What the pair's other paths wait for (multipath, tcp_recv.c),
	 * read by them without a lock.  rx_gen moves when the socket goes
	 * (after its last read) and when another comes (sock_mutex);
	 * rx_arrived is the socket's rcv_nxt when data came (data_ready),
	 * valid once rx_seen is set (cleared for a socket that has not
	 * connected yet, and when the socket goes: the sequence numbers of
	 * another socket mean nothing); rx_consumed its copied_seq after a
	 * read, valid once rx_pub is set.  Path 0 only.
	 */
	u32		rx_gen;
	u32		rx_arrived;
	u32		rx_consumed;
	bool		rx_seen;
	bool		rx_pub;
	/* rx_msg (a path > 0) waits for path 0 to read up to rx_base_snap. */
	bool		rx_base_wait;
	u32		rx_base_gen;
	u32		rx_base_snap;

	/* Send state: xmit's (the core's work_mutex). */
	struct rds_tcp_hdr tx_hdr;	/* of tx_cur */
	const struct rds_msg *tx_cur;	/* compared only: its entry is in */
	unsigned long	tx_flags;	/* RDS_TCP_TX_* bits */

	spinlock_t	ack_lock;	/* see the top of this file */
	struct rds_tcp_ack_ent ack_ring[RDS_TCP_ACK_RING];
	unsigned int	ack_head;
	unsigned int	ack_nr;
	unsigned long	last_ack_jiffies;
	u32		last_sent_nxt;
	u32		last_expected_una;
	u32		last_seen_una;
	__be16		lport;		/* of sock, while it is connected */
	__be16		fport;
};

/*
 * What each network namespace has (net_generic()).  sndbuf and rcvbuf
 * are its sysctls, read without a lock by new sockets.
 */
struct rds_tcp_net {
	struct net	*net;
	const struct rds_transport *trans;	/* rds_tcp_transport */
	struct socket	*lsock;		/* the listener */
	void		(*orig_data_ready)(struct sock *sk);
	struct work_struct accept_w;
	struct ctl_table_header *sysctl;
	struct ctl_table *ctl_table;
	int		sndbuf;
	int		rcvbuf;
};

enum {
	RDS_TCP_TX_BLOCKED,	/* xmit waits for room: write_space kicks */
	RDS_TCP_AWAIT_PEER,	/* ours connected: wait for the peer's bytes */
};

/* tcp_net.c */
extern unsigned int rds_tcp_netid;
extern struct workqueue_struct *rds_tcp_wq;
void rds_tcp_tune(struct socket *sock);

/* tcp_connect.c */
int rds_tcp_conn_connect(struct rds_conn *conn);
void rds_tcp_conn_shutdown(struct rds_conn *conn);
void rds_tcp_set_callbacks(struct rds_tcp_conn *tc, struct socket *sock);
void rds_tcp_release_sock(struct rds_tcp_conn *tc);
void rds_tcp_poke_work(struct work_struct *work);
void rds_tcp_retry_work(struct work_struct *work);
void rds_tcp_poked(struct rds_tcp_conn *tc);

/* tcp_listen.c */
struct socket *rds_tcp_listen_init(struct net *net, bool v6);
void rds_tcp_listen_stop(struct socket *sock, struct work_struct *accept_w);
void rds_tcp_accept_work(struct work_struct *work);

/* tcp_send.c */
int rds_tcp_xmit(struct rds_conn *conn, struct rds_msg *m,
		 unsigned int *frag);
void rds_tcp_write_space(struct sock *sk);
void rds_tcp_ack_reset(struct rds_tcp_conn *tc);
void rds_tcp_conn_tx_state(struct rds_conn *conn, unsigned int *posted,
			   unsigned long *idle);

/* tcp_recv.c */
void rds_tcp_data_ready(struct sock *sk);
void rds_tcp_rx_work(struct work_struct *work);
void rds_tcp_rx_resume_work(struct work_struct *work);
void rds_tcp_rx_deadline_work(struct work_struct *work);
void rds_tcp_rx_drain(struct rds_tcp_conn *tc);
void rds_tcp_rx_reset(struct rds_tcp_conn *tc);

#endif /* _RDS_ZC_TCP_H */
