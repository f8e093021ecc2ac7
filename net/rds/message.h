/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Messages: the payload of one datagram, and an incoming message queued
 * on a receiving socket.
 *
 * A struct rds_msg holds a datagram's payload in whole pages, or, for a
 * small one, in @data right after the struct (rds_msg_alloc_inline()),
 * so that neither a sender nor a receive queue of small messages holds
 * a page each; a large one a stream transport received may stay in the
 * socket buffers it came in (@skbs, rds_msg_alloc_rx_skbs()), so that
 * its bytes are copied once, to the reader.  It is immutable once
 * filled and reference counted: the sender's queue, a transport and
 * each receiver of a local delivery may share it.
 *
 * A struct rds_incoming is one message queued for one socket.  It owns a
 * reference on its rds_msg and carries the addresses the receiver sees.
 * A message a transport received (rds_msg_alloc_rx()) has room for the
 * incoming that delivers it in its own allocation: one allocation and
 * one free per received message, not two.
 */
#ifndef _RDS_ZC_MESSAGE_H
#define _RDS_ZC_MESSAGE_H

#include <linux/in6.h>
#include <linux/list.h>
#include <linux/math.h>
#include <linux/overflow.h>
#include <linux/ktime.h>
#include <linux/refcount.h>
#include <linux/types.h>
#include <linux/uio.h>
#include <asm/page.h>

/* The largest datagram RDS carries, by protocol (RDS 3.1). */
#define RDS_MAX_MSG_SIZE	(1024 * 1024)

/*
 * Received payloads up to this size are copied out of the transport's
 * page into an inline message (copybreak), so that what a receive queue
 * holds is at most twice what it is charged for.
 */
#define RDS_MSG_INLINE_MAX	(PAGE_SIZE / 2)

/* Bytes of extension header every message carries (wire section 4.5). */
#define RDS_HDR_EXT_SPACE	16

struct rds_incoming;
struct rds_mr;
struct sk_buff;
struct rds_rdma_op;
struct rds_sock;

/*
 * The header fields below are set by the sender before the message is
 * queued on a connection (seq by the connection), or by a transport from
 * a received header; while the message sits on a connection's queues
 * only the connection's send path changes @flags.
 */
struct rds_msg {
	refcount_t	refs;
	size_t		len;		/* payload bytes */
	struct list_head conn_item;	/* on a connection's queues, its lock */
	struct rds_sock	*rs;		/* sender while queued, referenced */
	u64		seq;
	unsigned long	xmit_jiffies;	/* when the connection last picked it */
	__be16		sport;
	__be16		dport;
	u8		flags;		/* RDS_FLAG_* */
	u8		exthdr[RDS_HDR_EXT_SPACE];
	struct rds_rdma_op *op;		/* RDS_CMSG_RDMA_ARGS, freed with it */
	/*
	 * RDS_CMSG_RDMA_MAP: the MR whose cookie the message carries,
	 * referenced; a transport that deferred its registration posts it
	 * before the message's first SEND.
	 */
	struct rds_mr	*reg_mr;
	/*
	 * Set by the layer that attaches @op or @reg_mr, which this layer
	 * does not know: releases them when the message is freed.
	 */
	void		(*release)(struct rds_msg *m);
	/*
	 * Only a silent RDMA operation, no payload: no SEND goes out, and
	 * the sequence number becomes a gap (wire 8.4).
	 */
	bool		no_sends;
	/*
	 * MSG_ZEROCOPY (zcopy.c): @zc is told when the message is freed, at
	 * its last reference; with @user_pages, @pages are the sender's own
	 * pinned pages, which @zc owns, and the payload starts @pg_off bytes
	 * into the first one.  Read them with rds_msg_page().
	 */
	struct rds_msg_zc *zc;
	bool		user_pages;
	unsigned int	pg_off;
	void		*data;		/* inline payload, or NULL: pages */
	/*
	 * Or the payload in socket buffers (rds_msg_alloc_rx_skbs()): a
	 * chain by ->next, each holding its part from its offset 0 to its
	 * end, in order, freed with the message; @skbs_size is what they
	 * are charged (rds_msg_truesize()).
	 */
	struct sk_buff	*skbs;
	unsigned int	skbs_size;
	/*
	 * Room for the incoming of a received message, in this allocation
	 * (rds_msg_alloc_rx()); rds_inc_alloc() takes it, once.
	 */
	struct rds_incoming *rx_inc;
	unsigned int	nr_pages;	/* pages filled in */
	struct page	*pages[];	/* DIV_ROUND_UP(pg_off + len, PAGE_SIZE) */
};

/*
 * What a message's zero-copy state shows this layer: @done runs once,
 * when the message is freed, in any context; the layer above owns the
 * rest.
 */
struct rds_msg_zc {
	void (*done)(struct rds_msg_zc *zc);
};

/**
 * rds_msg_page() - where payload byte @off of a message of pages lies
 * @m: message whose payload is in @m->pages (@m->data is NULL)
 * @off: byte offset in the payload, below @m->len
 * @poff: out: the offset of that byte in the returned page
 *
 * Zero-copy messages start anywhere in their first page, so a transport
 * sending PAGE_SIZE bytes from @off may need the next page too: the
 * first PAGE_SIZE - *@poff bytes are in this one.
 *
 * Return: the page.
 */
static inline struct page *rds_msg_page(const struct rds_msg *m, size_t off,
					size_t *poff)
{
	off += m->pg_off;
	*poff = off & ~PAGE_MASK;
	return m->pages[off >> PAGE_SHIFT];
}

/*
 * Receive-path time stamps (local_clock()), for SO_RDS_MSG_RXPATH_LATENCY:
 * the interval from point N to point N + 1 is what the reader asked for
 * as enum rds_message_rxpath_latency N.
 */
enum rds_rx_lat_point {
	RDS_RX_LAT_HEADER,	/* its first header arrived */
	RDS_RX_LAT_START,	/* reassembly started */
	RDS_RX_LAT_QUEUED,	/* complete, queued on the socket */
	RDS_RX_LAT_READ,	/* handed to recvmsg() */
	RDS_RX_LAT_NR
};

struct rds_incoming {
	struct list_head item;		/* on rds_sock.recv_queue, recv_held */
	struct rds_msg	*msg;		/* reference owned */
	struct in6_addr	saddr;		/* IPv4 ones IPv4-mapped (addr.h) */
	struct in6_addr	daddr;
	__be16		sport;
	__be16		dport;
	u32		scope;		/* of daddr, if link-local */
	u64		rx_lat[RDS_RX_LAT_NR];
	ktime_t		rx_tstamp;	/* wall clock at queueing, if asked */
	u64		rdma_cookie;	/* from an RDMA_DEST extension */
	bool		has_rdma_cookie;
	bool		in_msg;		/* @msg's rx_inc: freed with it */
	/* The USE_ONCE MR it released, from delivery until queued. */
	struct rds_mr	*once_mr;
	u32		gate;		/* its ticket on recv_held, or 0 */
	size_t		charge;		/* its true size, for rcv_mem */
};

struct rds_msg *rds_msg_alloc(size_t len, gfp_t gfp);
struct rds_msg *rds_msg_alloc_empty(size_t len, gfp_t gfp);
struct rds_msg *rds_msg_alloc_inline(size_t len, gfp_t gfp);
struct rds_msg *rds_msg_alloc_rx(size_t len, gfp_t gfp);
struct rds_msg *rds_msg_alloc_rx_skbs(size_t len, gfp_t gfp);
struct rds_msg *rds_msg_alloc_user(size_t len, unsigned int pg_off,
				   struct page **pages, gfp_t gfp);
struct rds_msg *rds_msg_copy_inline(const struct rds_msg *m, gfp_t gfp);

/*
 * What a message of @len payload bytes is charged to its sender's
 * SO_SNDBUF: the payload and its descriptor with the page pointers, so
 * that empty messages cost something and the number a socket can queue
 * is bounded.  The rest of the last page is not counted: charging whole
 * pages (measured with make bench) cut the rate of 64-byte datagrams to
 * a third, as a sender's buffer is only freed by the peer's ACK.
 */
static inline size_t rds_msg_charge(size_t len)
{
	return len + struct_size_t(struct rds_msg, pages,
				   DIV_ROUND_UP(len, PAGE_SIZE));
}

/*
 * The memory a received message holds, as counted against the receiving
 * socket's limits (recv.c): whole pages, or the inline payload, with the
 * descriptors.
 */
static inline size_t rds_msg_truesize(const struct rds_msg *m)
{
	if (m->skbs)
		return struct_size_t(struct rds_msg, pages, 0) + m->skbs_size;
	if (m->data)
		return struct_size_t(struct rds_msg, pages, 0) + m->len;
	return struct_size_t(struct rds_msg, pages, m->nr_pages) +
	       (size_t)m->nr_pages * PAGE_SIZE;
}

int rds_msg_copy_from_iter(struct rds_msg *m, struct iov_iter *from);
int rds_msg_copy_to_iter(const struct rds_msg *m, size_t len,
			 struct iov_iter *to);
void rds_msg_free(struct rds_msg *m);

/**
 * rds_msg_put() - drop a reference; the last one frees the message
 * @m: message, may be NULL
 *
 * Inline: a message takes six of them on its way (queue, transmit, send
 * completion, ACK, reader), and all but the last only count down.
 */
static inline void rds_msg_put(struct rds_msg *m)
{
	if (m && refcount_dec_and_test(&m->refs))
		rds_msg_free(m);
}

static inline struct rds_msg *rds_msg_get(struct rds_msg *m)
{
	refcount_inc(&m->refs);
	return m;
}

struct rds_incoming *rds_inc_alloc(struct rds_msg *m, gfp_t gfp);
void rds_inc_free(struct rds_incoming *inc);

#endif /* _RDS_ZC_MESSAGE_H */
