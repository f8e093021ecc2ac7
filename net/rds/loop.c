// SPDX-License-Identifier: GPL-2.0
/*
 * Local delivery between sockets of one host.
 *
 * The sender's message is shared with the receiver: the payload is
 * copied once from the sender and once to the receiver.  A small one is
 * copied once more, into an inline message (RDS_MSG_INLINE_MAX), so
 * that the receiver's queue does not keep a page for it.  Delivery happens
 * in the sender's context, so messages from one sender arrive in the
 * order they were sent, and a send returns only once its message is
 * queued on the receiver (or dropped because no socket is bound there).
 *
 * RDMA without a device.  A socket bound to an address no RDMA transport
 * claims registers memory here: its MR gets a random 32-bit key (never
 * 0: cookie 0 names no MR), is pinned and charged as every MR, and is
 * reachable only by local delivery.  An operation a locally delivered
 * message carries (RDS_CMSG_RDMA_ARGS, the atomics) runs here, in the
 * sender's context, as a copy between the two pinned memories, before
 * the message is delivered, with the semantics of the IB transport:
 *
 *  - the cookie's key must name a live MR of a socket bound to the
 *    destination address in the sender's namespace (mr.c's key index):
 *    an IB MR of a local RDMA device as well as a local one;
 *  - the bytes must lie inside the MR ([offset, offset + len) of the
 *    cookie's zero-based addresses), else nothing is touched;
 *  - a failure ends the operation with RDS_RDMA_REMOTE_ERROR and the
 *    message is not delivered, as the owner's HCA refuses the access and
 *    its ACK never arrives;
 *  - a USE_ONCE key is taken out of its socket by the use that succeeds,
 *    so exactly one operation uses it, where the IB transport releases
 *    it when the ACK arrives;
 *  - the notification (RDS_RDMA_SUCCESS) follows the delivery, as the
 *    IB transport's follows the SEND's completion.  No link can drop the
 *    operation on the way: DROPPED and OTHER_ERROR do not arise here,
 *    CANCELED never (nothing waits in a queue).
 *
 * Copies go a page at a time between the pinned pages (kmap_local_page());
 * atomics are the CPU's atomics on the aligned word in the MR's page, so
 * they are atomic against every other local user of the word.
 */
#include <linux/atomic.h>
#include <linux/errno.h>
#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/netdevice.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <net/addrconf.h>
#include <net/route.h>
#include <uapi/linux/rds.h>

#include "addr.h"
#include "loop.h"
#include "message.h"
#include "mr.h"
#include "rdma.h"
#include "stats.h"
#include "transport.h"

/*
 * A local MR: a random key.  Its registration is the pinning alone, so
 * mr->tp stays NULL and the core releases it without the transport (no
 * mr_dereg or mr_kill: a key dies when it leaves the key index).
 */
static int rds_loop_mr_reg(struct net *net, const struct in6_addr *laddr,
			   u32 scope, struct rds_mr *mr)
{
	do {
		mr->rkey = get_random_u32();
	} while (!mr->rkey);
	return 0;
}

const struct rds_transport rds_loop_transport = {
	.name	= "loopback",
	.type	= RDS_TRANS_LOOP,
	.mr_reg	= rds_loop_mr_reg,
};

/*
 * Copy @op's bytes to (WRITE) or from (READ) the MR's bytes from zero-based
 * address @pos on, a page of one side at a time.  The two may be the same
 * memory (a socket sending to its own MR): memmove().
 */
static void rds_loop_copy(struct rds_rdma_op *op, struct rds_mr *mr, u64 pos)
{
	struct scatterlist *sg;
	unsigned int i;

	for_each_sg(op->sgt.sgl, sg, op->sgt.orig_nents, i) {
		unsigned int off = sg->offset, left = sg->length;

		while (left) {
			struct page *rpage = mr->pages[pos >> PAGE_SHIFT];
			unsigned int roff = offset_in_page(pos);
			unsigned int n = min_t(unsigned int, left,
					       PAGE_SIZE - roff);
			void *l = kmap_local_page(sg_page(sg));
			void *r = kmap_local_page(rpage);

			if (op->write) {
				memmove(r + roff, l + off, n);
				flush_dcache_page(rpage);
			} else {
				memmove(l + off, r + roff, n);
				flush_dcache_page(sg_page(sg));
			}
			kunmap_local(r);
			kunmap_local(l);
			off += n;
			left -= n;
			pos += n;
		}
	}
}

/*
 * Masked fetch-and-add: @nocarry marks the top bit of each field; a
 * field's carry does not reach the next one.
 */
static u64 rds_loop_masked_add(u64 old, u64 add, u64 nocarry)
{
	unsigned int lo = 0, hi;
	u64 res = 0, field;

	while (lo < 64) {
		hi = nocarry >> lo ? __ffs64(nocarry >> lo) + lo : 63;
		field = GENMASK_ULL(hi, lo);
		res |= ((old & field) + (add & field)) & field;
		lo = hi + 1;
	}
	return res;
}

/* The value an atomic leaves in place of @old. */
static u64 rds_loop_atomic_new(const struct rds_atomic *at, u64 old)
{
	u64 cmask = at->masked ? at->compare_add_mask : ~0ULL;
	u64 smask = at->masked ? at->swap_mask : ~0ULL;

	if (!at->cswp)
		return rds_loop_masked_add(old, at->compare_add,
					   at->compare_add_mask);
	if ((old ^ at->compare_add) & cmask)
		return old;	/* no match: unchanged */
	return (old & ~smask) | (at->swap & smask);
}

/*
 * Run an atomic on the aligned word at zero-based address @pos of the MR,
 * and store the prior value in the operation's 8 local bytes.
 */
static void rds_loop_atomic(struct rds_rdma_op *op, struct rds_mr *mr,
			    u64 pos)
{
	const struct rds_atomic *at = &op->atomic;
	struct page *rpage = mr->pages[pos >> PAGE_SHIFT];
	struct scatterlist *sg = op->sgt.sgl;
	u64 *word, old, new, seen;
	void *r, *l;

	r = kmap_local_page(rpage);
	word = r + offset_in_page(pos);
	if (!at->cswp && !at->masked) {
		old = atomic64_fetch_add(at->compare_add, (atomic64_t *)word);
	} else {
		old = READ_ONCE(*word);
		for (;;) {
			new = rds_loop_atomic_new(at, old);
			if (new == old)
				break;
			seen = cmpxchg64(word, old, new);
			if (seen == old)
				break;
			old = seen;
		}
	}
	flush_dcache_page(rpage);
	kunmap_local(r);

	l = kmap_local_page(sg_page(sg));
	memcpy(l + sg->offset, &old, sizeof(old));
	flush_dcache_page(sg_page(sg));
	kunmap_local(l);
}

/*
 * Run @op against the MR its key names on @daddr.  @claim: the message
 * will be delivered, so a USE_ONCE key is used up.
 * Return: RDS_RDMA_SUCCESS or RDS_RDMA_REMOTE_ERROR.
 */
static int rds_loop_rdma(struct net *net, struct rds_rdma_op *op,
			 const struct in6_addr *daddr, u32 scope, bool claim)
{
	struct rds_mr *mr;
	u64 pos = op->remote_addr, end;
	int status = RDS_RDMA_REMOTE_ERROR;

	mr = rds_mr_get_local(net, daddr, scope, op->rkey);
	if (!mr)
		return status;
	end = (u64)mr->offset + mr->len;
	if (pos < mr->offset || pos > end || op->len > end - pos)
		goto out;
	if (claim && (mr->flags & RDS_RDMA_USE_ONCE) && !rds_mr_claim(mr))
		goto out;
	if (op->is_atomic)
		rds_loop_atomic(op, mr, pos);
	else
		rds_loop_copy(op, mr, pos);
	/* Bounce buffers of an IB MR (swiotlb) take what the CPU wrote. */
	if ((op->write || op->is_atomic) && mr->trans->mr_sync)
		(void)mr->trans->mr_sync(mr, DMA_TO_DEVICE);
	status = RDS_RDMA_SUCCESS;
out:
	rds_mr_put(mr);
	return status;
}

/**
 * rds_loop_xmit() - deliver a message to a socket of this host
 * @net: the sender's namespace
 * @m: the message; the receiver takes its own reference
 * @saddr: sender's bound address
 * @sport: sender's bound port
 * @daddr: destination, a local address
 * @dport: destination port
 * @scope: the scope of the addresses
 *
 * The RDMA operation the message carries runs first (see the top of the
 * file); its notification follows the delivery.
 *
 * Context: process context.
 * Return: 0 (also when nobody is bound at the destination, or the RDMA
 * failed: its notification says so), or -ENOMEM.
 */
int rds_loop_xmit(struct net *net, struct rds_msg *m,
		  const struct in6_addr *saddr, __be16 sport,
		  const struct in6_addr *daddr, __be16 dport, u32 scope)
{
	struct rds_msg *copy = NULL;
	struct rds_incoming *inc;
	int status;

	if (m->len <= RDS_MSG_INLINE_MAX && !m->data && !m->op && !m->reg_mr) {
		copy = rds_msg_copy_inline(m, GFP_KERNEL | __GFP_ACCOUNT);
		if (!copy)
			return -ENOMEM;
	}
	/* Allocated before an operation runs: a failure leaves no trace. */
	inc = rds_inc_alloc(copy ?: m, GFP_KERNEL);
	rds_msg_put(copy);	/* the incoming holds its own reference */
	if (!inc)
		return -ENOMEM;
	inc->saddr = *saddr;
	inc->sport = sport;
	inc->daddr = *daddr;
	inc->dport = dport;
	inc->scope = scope;
	if (m->op) {
		status = rds_loop_rdma(net, m->op, daddr, scope, !m->no_sends);
		if (status != RDS_RDMA_SUCCESS || m->no_sends) {
			/* No ACK: for a failure, as over a device. */
			rds_inc_free(inc);
			rds_zc_rdma_done(m->op, status);
			return 0;
		}
	}
	rds_stat_inc(RDS_STAT_SEND_LOCAL);
	rds_zc_deliver(net, inc, false, NULL);
	if (m->op)
		rds_zc_rdma_done(m->op, RDS_RDMA_SUCCESS);
	return 0;
}
