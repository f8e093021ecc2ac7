// SPDX-License-Identifier: GPL-2.0
/*
 * Messages: allocation, copies to and from user memory, and lifetime.
 *
 * Payload lives in order-0 pages so that a transport can DMA-map it as a
 * scatter list without copying.  Pages are charged to the allocating
 * task's memory cgroup.  A small received payload is copied into an
 * inline message instead (RDS_MSG_INLINE_MAX), and a large one a stream
 * transport received may stay in its socket buffers.
 */
#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/uio.h>

#include "message.h"

/**
 * rds_msg_alloc() - allocate a message able to hold @len payload bytes
 * @len: payload length, at most RDS_MAX_MSG_SIZE
 * @gfp: allocation flags
 *
 * Return: a message with one reference, its pages unfilled, or NULL.
 */
struct rds_msg *rds_msg_alloc(size_t len, gfp_t gfp)
{
	unsigned int nr = DIV_ROUND_UP(len, PAGE_SIZE);
	struct rds_msg *m;
	unsigned int i;

	/* A sender's message: charged to its memory cgroup. */
	m = rds_msg_alloc_empty(len, gfp | __GFP_ACCOUNT);
	if (!m)
		return NULL;
	for (i = 0; i < nr; i++) {
		m->pages[i] = alloc_page(gfp | __GFP_ACCOUNT | __GFP_NOWARN);
		if (!m->pages[i])
			goto out_free;
		m->nr_pages++;
	}
	return m;

out_free:
	rds_msg_put(m);
	return NULL;
}

/* A message of @len bytes with room for @nr page pointers, none set. */
static struct rds_msg *rds_msg_new(size_t len, unsigned int nr, gfp_t gfp)
{
	struct rds_msg *m;

	/* At most 257 page pointers: a small allocation, atomic-safe. */
	m = kzalloc(struct_size(m, pages, nr), gfp | __GFP_NOWARN);
	if (!m)
		return NULL;
	refcount_set(&m->refs, 1);
	INIT_LIST_HEAD(&m->conn_item);
	m->len = len;
	return m;
}

/**
 * rds_msg_alloc_empty() - allocate a message without its pages
 * @len: payload length, at most RDS_MAX_MSG_SIZE
 * @gfp: allocation flags
 *
 * For a receiver that hands its own pages over: it stores them in
 * @pages[@nr_pages++], at most DIV_ROUND_UP(@len, PAGE_SIZE) of them, and
 * rds_msg_put() frees as many as were stored.
 *
 * Return: a message with one reference, or NULL.
 */
struct rds_msg *rds_msg_alloc_empty(size_t len, gfp_t gfp)
{
	if (WARN_ON_ONCE(len > RDS_MAX_MSG_SIZE))
		return NULL;
	return rds_msg_new(len, DIV_ROUND_UP(len, PAGE_SIZE), gfp);
}
EXPORT_SYMBOL_GPL(rds_msg_alloc_empty);

/**
 * rds_msg_alloc_user() - a message whose payload stays in user pages
 * @len: payload length, at most RDS_MAX_MSG_SIZE
 * @pg_off: where the payload starts in @pages[0], below PAGE_SIZE
 * @pages: the pinned pages holding it, DIV_ROUND_UP(@pg_off + @len,
 *	   PAGE_SIZE) of them; the caller keeps them pinned until its
 *	   @zc->done runs, and sets @zc before handing the message on
 * @gfp: allocation flags
 *
 * Return: a message with one reference, or NULL.
 */
struct rds_msg *rds_msg_alloc_user(size_t len, unsigned int pg_off,
				   struct page **pages, gfp_t gfp)
{
	unsigned int nr = DIV_ROUND_UP(pg_off + len, PAGE_SIZE);
	struct rds_msg *m;

	if (WARN_ON_ONCE(len > RDS_MAX_MSG_SIZE || pg_off >= PAGE_SIZE))
		return NULL;
	m = rds_msg_new(len, nr, gfp);
	if (!m)
		return NULL;
	m->pg_off = pg_off;
	m->user_pages = true;
	memcpy(m->pages, pages, nr * sizeof(*pages));
	m->nr_pages = nr;
	return m;
}

/**
 * rds_msg_alloc_inline() - allocate a message holding its payload inline
 * @len: payload length, at most RDS_MSG_INLINE_MAX
 * @gfp: allocation flags
 *
 * For a receiver that copies a small payload to @data rather than keep
 * the page it arrived in, and for a sender's small message: a page per
 * 64-byte datagram costs an allocation, a free and most of a page.
 *
 * Return: a message with one reference, @data unfilled, or NULL.
 */
struct rds_msg *rds_msg_alloc_inline(size_t len, gfp_t gfp)
{
	struct rds_msg *m;

	if (WARN_ON_ONCE(len > RDS_MSG_INLINE_MAX))
		return NULL;
	m = kzalloc(struct_size(m, pages, 0) + len, gfp | __GFP_NOWARN);
	if (!m)
		return NULL;
	refcount_set(&m->refs, 1);
	INIT_LIST_HEAD(&m->conn_item);
	m->len = len;
	m->data = m->pages;	/* the room the page pointers would take */
	return m;
}
EXPORT_SYMBOL_GPL(rds_msg_alloc_inline);

/* A received message with room for its incoming (rds_msg_alloc_rx()). */
static struct rds_msg *rds_msg_rx_new(size_t len, unsigned int nr, bool inl,
				      gfp_t gfp)
{
	size_t head = struct_size_t(struct rds_msg, pages, nr);
	struct rds_msg *m;

	if (WARN_ON_ONCE(len > RDS_MAX_MSG_SIZE))
		return NULL;
	/* Both parts are 8-byte aligned: the incoming follows the header. */
	BUILD_BUG_ON(sizeof(struct rds_msg) % __alignof__(struct rds_incoming));
	m = kzalloc(head + sizeof(struct rds_incoming) + (inl ? len : 0),
		    gfp | __GFP_NOWARN);
	if (!m)
		return NULL;
	refcount_set(&m->refs, 1);
	INIT_LIST_HEAD(&m->conn_item);
	m->len = len;
	m->rx_inc = (struct rds_incoming *)((char *)m + head);
	if (inl)
		m->data = m->rx_inc + 1;
	return m;
}

/**
 * rds_msg_alloc_rx() - allocate a message a transport received
 * @len: payload length, at most RDS_MAX_MSG_SIZE
 * @gfp: allocation flags
 *
 * As rds_msg_alloc_inline() for @len up to RDS_MSG_INLINE_MAX, the
 * payload to be copied to @data, else as rds_msg_alloc_empty(), the
 * receiver's pages to be stored; and with room for the incoming that
 * will deliver it (@rx_inc, between the page pointers and the inline
 * payload), so that rds_inc_alloc() allocates nothing.  The incoming
 * holds a reference on the message: the room outlives it.
 *
 * Return: a message with one reference, or NULL.
 */
struct rds_msg *rds_msg_alloc_rx(size_t len, gfp_t gfp)
{
	bool inl = len <= RDS_MSG_INLINE_MAX;

	return rds_msg_rx_new(len, inl ? 0 : DIV_ROUND_UP(len, PAGE_SIZE), inl,
			      gfp);
}
EXPORT_SYMBOL_GPL(rds_msg_alloc_rx);

/**
 * rds_msg_alloc_rx_skbs() - a received message kept in socket buffers
 * @len: payload length, above RDS_MSG_INLINE_MAX and at most
 *	 RDS_MAX_MSG_SIZE
 * @gfp: allocation flags
 *
 * As rds_msg_alloc_rx(), but the transport chains the socket buffers
 * that hold the payload to @skbs, in order, each trimmed to its part,
 * and adds what each is charged to @skbs_size; they are freed with the
 * message.  A congestion map is never one of these (it is read as
 * pages).
 *
 * Return: a message with one reference, or NULL.
 */
struct rds_msg *rds_msg_alloc_rx_skbs(size_t len, gfp_t gfp)
{
	return rds_msg_rx_new(len, 0, false, gfp);
}
EXPORT_SYMBOL_GPL(rds_msg_alloc_rx_skbs);

/**
 * rds_msg_copy_inline() - an inline copy of a small message, for a receiver
 * @m: message of at most RDS_MSG_INLINE_MAX bytes, filled
 * @gfp: allocation flags
 *
 * The copy has @m's payload, ports, flags and extension headers, not its
 * sender, operation or MR.
 *
 * Return: the copy with one reference, or NULL.
 */
struct rds_msg *rds_msg_copy_inline(const struct rds_msg *m, gfp_t gfp)
{
	struct rds_msg *c = rds_msg_alloc_inline(m->len, gfp);
	size_t done, n, off;

	if (!c)
		return NULL;
	c->seq = m->seq;
	c->sport = m->sport;
	c->dport = m->dport;
	c->flags = m->flags;
	memcpy(c->exthdr, m->exthdr, sizeof(c->exthdr));
	if (m->data) {
		memcpy(c->data, m->data, m->len);
		return c;
	}
	for (done = 0; done < m->len; done += n) {
		struct page *page = rds_msg_page(m, done, &off);

		n = min_t(size_t, m->len - done, PAGE_SIZE - off);
		memcpy_from_page((char *)c->data + done, page, off, n);
	}
	return c;
}

/**
 * rds_msg_copy_from_iter() - fill a new message from user memory
 * @m: message from rds_msg_alloc() or rds_msg_alloc_inline(), not yet
 *     shared
 * @from: source, at least @m->len bytes
 *
 * Return: 0, or -EFAULT if any byte could not be read.
 */
int rds_msg_copy_from_iter(struct rds_msg *m, struct iov_iter *from)
{
	size_t left = m->len;
	unsigned int i;

	if (m->data)
		return copy_from_iter(m->data, left, from) == left ? 0 : -EFAULT;
	for (i = 0; left; i++) {
		size_t n = min_t(size_t, left, PAGE_SIZE);

		if (copy_page_from_iter(m->pages[i], 0, n, from) != n)
			return -EFAULT;
		left -= n;
	}
	return 0;
}

/**
 * rds_msg_copy_to_iter() - copy the first @len payload bytes to a reader
 * @m: message
 * @len: bytes to copy, at most @m->len
 * @to: destination
 *
 * Return: @len, or -EFAULT if any byte could not be written.  On a fault
 * @to is advanced by an unspecified amount.
 */
int rds_msg_copy_to_iter(const struct rds_msg *m, size_t len,
			 struct iov_iter *to)
{
	const struct sk_buff *skb;
	size_t done, n, off;

	if (m->data)
		return copy_to_iter(m->data, len, to) == len ? (int)len : -EFAULT;
	if (m->skbs) {
		for (skb = m->skbs, done = 0; done < len; skb = skb->next) {
			n = min_t(size_t, len - done, skb->len);
			if (skb_copy_datagram_iter(skb, 0, to, n))
				return -EFAULT;
			done += n;
		}
		return len;
	}
	for (done = 0; done < len; done += n) {
		struct page *page = rds_msg_page(m, done, &off);

		n = min_t(size_t, len - done, PAGE_SIZE - off);
		if (copy_page_to_iter(page, off, n, to) != n)
			return -EFAULT;
	}
	return len;
}

/**
 * rds_msg_free() - free a message whose last reference went
 * @m: the message, no reference left (rds_msg_put())
 */
void rds_msg_free(struct rds_msg *m)
{
	struct sk_buff *skb;
	unsigned int i;

	WARN_ON_ONCE(m->rs);	/* still charged to a socket */
	if (m->release)
		m->release(m);
	for (i = 0; i < m->nr_pages && !m->user_pages; i++)
		__free_page(m->pages[i]);
	while (m->skbs) {
		skb = m->skbs;
		m->skbs = skb->next;
		skb->next = NULL;
		consume_skb(skb);
	}
	/* Nothing reads the payload any more: the sender may reuse it. */
	if (m->zc)
		m->zc->done(m->zc);
	kfree(m);
}
EXPORT_SYMBOL_GPL(rds_msg_free);

/**
 * rds_inc_alloc() - wrap a message for queueing on one receiver
 * @m: message; the new incoming takes its own reference
 * @gfp: allocation flags
 *
 * A received message's first incoming takes the room its allocation
 * keeps for it (rds_msg_alloc_rx()); another one, as a retry's after a
 * delivery held back, is allocated.  Not concurrently for one message.
 *
 * Return: the incoming, addresses unset, or NULL.
 */
struct rds_incoming *rds_inc_alloc(struct rds_msg *m, gfp_t gfp)
{
	struct rds_incoming *inc = m->rx_inc;

	if (inc) {
		m->rx_inc = NULL;	/* zeroed by the message's kzalloc() */
		inc->in_msg = true;
	} else {
		inc = kzalloc(sizeof(*inc), gfp);
		if (!inc)
			return NULL;
	}
	INIT_LIST_HEAD(&inc->item);
	inc->msg = rds_msg_get(m);
	return inc;
}

/**
 * rds_inc_free() - free an incoming that is on no queue
 * @inc: incoming, may be NULL
 */
void rds_inc_free(struct rds_incoming *inc)
{
	struct rds_msg *m;

	if (!inc)
		return;
	m = inc->msg;
	if (!inc->in_msg)
		kfree(inc);
	rds_msg_put(m);		/* last: it may hold @inc */
}
