// SPDX-License-Identifier: GPL-2.0
/*
 * Receiving: the receive ring, frame classification, reassembly of
 * fragments into messages, and ACK bookkeeping (rds_zc-wire.rst sections
 * 3.2, 4.6, 4.7 and 5).
 *
 * Each receive WR has two SGEs: the slot's 48-byte header, then its 4 KiB
 * page; it is built once with the ring, and a new page changes only its
 * address.  A fragment's page is handed over to the message being
 * rebuilt (no copy) and the slot gets a fresh page before it is posted
 * again; a message of at most RDS_MSG_INLINE_MAX bytes is copied out
 * instead, and the slot keeps its page.  A frame the rules call fatal drops the
 * connection; the peer then resends everything we did not acknowledge.
 *
 * Holding a peer back: when the core refuses a complete message because
 * its socket holds too much (rds_zc_conn_recv() returns -EBUSY, a peer
 * that ignores congestion), the message stays in rx_msg and the
 * connection is parked.  The headers of later frames are still read (the
 * peer's ACKs and credits), and ACK frames are posted again, but data
 * frames wait in rx_held with their slots not posted, so the peer soon
 * finds no receive buffer (RNR NAKs, which it retries for ever) or no
 * credit.  rx_resume_w offers the message again every
 * RDS_IB_RX_RESUME_DELAY; once it is taken, the held frames are worked
 * through in order.  What a peer can make us hold is one ring and one
 * message, and nothing is lost.
 *
 * Running out of memory: the receive path runs in softirq and allocates
 * without sleeping, so an allocation can fail under pressure.  None of
 * them drops the connection, which would end every RDMA on it as
 * DROPPED and make the peer send everything again:
 *  - a slot whose page went to a message and that gets no new one stays
 *    unposted (rx_unfilled); rx_refill_w gives it a page with
 *    GFP_KERNEL and posts it, and tries again later while the ring is
 *    short.  The peer meanwhile has fewer buffers (and credits).
 *  - no message for a first fragment, or the core without memory for a
 *    complete one (rds_zc_conn_recv() returns -ENOMEM): the frame or the
 *    message waits as a held-back one does, and rx_resume_w tries again.
 *    Data frames behind it are held, in order.
 * Each is counted in ib_rx_nomem_deferred.  The module parameter
 * inject_rx_nomem makes such allocations fail on purpose, for tests on
 * kernels without fault injection.
 */
#include <linux/errno.h>
#include <linux/highmem.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "ib.h"
#include "message.h"
#include "transport.h"

/* How often a parked connection offers its message again. */
#define RDS_IB_RX_RESUME_DELAY	max_t(unsigned long, msecs_to_jiffies(10), 2)
/* How soon rx_refill_w tries again when it found no page either. */
#define RDS_IB_RX_REFILL_DELAY	max_t(unsigned long, msecs_to_jiffies(10), 2)

static unsigned int rds_ib_rx_fault;
module_param_named(inject_rx_nomem, rds_ib_rx_fault, uint, 0600);
MODULE_PARM_DESC(inject_rx_nomem, "Testing: every Nth allocation of the receive path that may not sleep fails (0: none, the default)");
static atomic_t rds_ib_rx_fault_seq = ATOMIC_INIT(0);

/* inject_rx_nomem: should this allocation, which may not sleep, fail? */
static bool rds_ib_rx_fail(void)
{
	unsigned int every = READ_ONCE(rds_ib_rx_fault);

	return every &&
	       (unsigned int)atomic_inc_return(&rds_ib_rx_fault_seq) % every == 0;
}

/* rds_ib_recv_data(): the message is parked, the ring held back. */
#define RDS_IB_RX_PARKED	1

static u64 rds_ib_recv_hdr_dma(struct rds_ib_conn *ic, unsigned int i)
{
	return ic->recv_hdrs_dma + i * sizeof(struct rds_ib_hdr);
}

/* Give a slot @page, mapped; on failure the caller still owns @page. */
static int rds_ib_recv_slot_map(struct rds_ib_conn *ic,
				struct rds_ib_recv_slot *slot,
				struct page *page)
{
	struct ib_device *ibdev = ic->rdev->ibdev;

	slot->dma = ib_dma_map_page(ibdev, page, 0, RDS_IB_FRAG_SIZE,
				    DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(ibdev, slot->dma)) {
		slot->dma = 0;
		return -ENOMEM;
	}
	slot->page = page;
	slot->sge[1].addr = slot->dma;
	return 0;
}

/* Give a slot a new page, mapped. */
static int rds_ib_recv_slot_fill(struct rds_ib_conn *ic,
				 struct rds_ib_recv_slot *slot, gfp_t gfp)
{
	struct page *page;

	if (!gfpflags_allow_blocking(gfp) && rds_ib_rx_fail())
		return -ENOMEM;
	page = alloc_page(gfp | __GFP_NOWARN);
	if (!page)
		return -ENOMEM;
	if (rds_ib_recv_slot_map(ic, slot, page)) {
		__free_page(page);
		return -ENOMEM;
	}
	return 0;
}

/* Take the page out of a slot, for a message. */
static struct page *rds_ib_recv_slot_take(struct rds_ib_conn *ic,
					  struct rds_ib_recv_slot *slot)
{
	struct page *page = slot->page;

	ib_dma_unmap_page(ic->rdev->ibdev, slot->dma, RDS_IB_FRAG_SIZE,
			  DMA_FROM_DEVICE);
	slot->page = NULL;
	slot->dma = 0;
	return page;
}

/* Post a slot's WR, built by rds_ib_recv_ring_init(). */
static int rds_ib_recv_post(struct rds_ib_conn *ic,
			    struct rds_ib_recv_slot *slot)
{
	ib_dma_sync_single_for_device(ic->rdev->ibdev, slot->sge[0].addr,
				      sizeof(struct rds_ib_hdr), DMA_FROM_DEVICE);
	return ib_post_recv(ic->qp, &slot->wr, NULL);
}

/*
 * Offer the complete rx_msg to the core and acknowledge it if asked, or
 * park it if its socket is over its limit.  Caller holds rx_lock.
 * Return: 0, RDS_IB_RX_PARKED, or a negative errno: drop the connection.
 */
static int rds_ib_recv_offer(struct rds_ib_conn *ic)
{
	const struct rds_ib_hdr *h = &ic->rx_hdr;
	u64 seq = ic->rx_msg->seq;
	int ret;

	ret = rds_zc_conn_recv(ic->conn, ic->rx_msg);
	if (ret == -EBUSY || ret == -ENOMEM) {
		if (ret == -ENOMEM)
			rds_ib_stat_inc(RDS_IB_STAT_RX_NOMEM);
		else if (!ic->rx_parked)
			rds_ib_stat_inc(RDS_IB_STAT_RX_PARKED);
		ic->rx_parked = true;
		queue_delayed_work(system_wq, &ic->rx_resume_w,
				   RDS_IB_RX_RESUME_DELAY);
		return RDS_IB_RX_PARKED;
	}
	ic->rx_msg = NULL;	/* consumed */
	ic->rx_parked = false;
	if (ret)
		return ret;
	atomic64_set(&ic->ack_next, seq);
	if (h->h_flags & RDS_FLAG_ACK_REQUIRED) {
		set_bit(RDS_IB_ACK_REQUESTED, &ic->flags);
		rds_ib_send_ack(ic);
	}
	return 0;
}

/* A complete message: a congestion map, or one for a socket. */
static int rds_ib_recv_complete(struct rds_ib_conn *ic)
{
	const struct rds_ib_hdr *h = &ic->rx_hdr;
	struct rds_msg *m = ic->rx_msg;

	if (h->h_flags == RDS_FLAG_CONG_BITMAP) {
		ic->rx_msg = NULL;
		rds_zc_conn_cong_recv(ic->conn, m);
		return 0;
	}
	m->seq = be64_to_cpu(h->h_sequence);
	m->flags = h->h_flags;
	m->sport = h->h_sport;
	m->dport = h->h_dport;
	memcpy(m->exthdr, h->h_exthdr, sizeof(m->exthdr));
	return rds_ib_recv_offer(ic);
}

/*
 * The header of frame @i: checked, its ACK and credits taken.
 * Return: 0 for a data frame, with its payload length in @payload; 1 for
 * an ACK frame, done with; a negative errno to drop the connection.
 */
static int rds_ib_recv_hdr(struct rds_ib_conn *ic, unsigned int i,
			   u32 byte_len, u32 *payload)
{
	struct rds_ib_hdr *h = &ic->recv_hdrs[i];

	if (byte_len < sizeof(*h))
		return -EPROTO;
	ib_dma_sync_single_for_cpu(ic->rdev->ibdev, rds_ib_recv_hdr_dma(ic, i),
				   sizeof(*h), DMA_FROM_DEVICE);
	if (!rds_ib_hdr_csum_ok(h)) {
		rds_zc_recv_bad_checksum();
		return -EBADMSG;
	}
	*payload = byte_len - sizeof(*h);
	rds_ib_stat_inc(RDS_IB_STAT_RX_FRAMES);

	if (h->h_credit && rds_ib_credit_add(ic, h->h_credit))
		rds_ib_send_ack(ic);	/* an ACK frame may wait too */
	if (be64_to_cpu(h->h_ack) > ic->rx_acked)
		ic->rx_acked = rds_zc_conn_acked(ic->conn,
						 be64_to_cpu(h->h_ack));
	if (rds_ib_hdr_is_ack(h, *payload)) {
		rds_ib_stat_inc(RDS_IB_STAT_RX_ACK_FRAMES);
		return 1;
	}
	return 0;
}

/*
 * The payload of a data frame whose header was read: reassembly.
 * Caller holds rx_lock.  Return: 0 or RDS_IB_RX_PARKED, and the slot may
 * be posted again (if it still has a page: rds_ib_recv_repost());
 * -ENOMEM if no message could be allocated for a first fragment: nothing
 * was done, the frame must be held and tried again; another negative
 * errno to drop the connection.
 */
static int rds_ib_recv_data(struct rds_ib_conn *ic,
			    struct rds_ib_recv_slot *slot, u32 payload)
{
	struct ib_device *ibdev = ic->rdev->ibdev;
	const struct rds_ib_hdr *h = &ic->recv_hdrs[slot - ic->recv_slots];
	u32 len = be32_to_cpu(h->h_len), need;
	struct rds_msg *m = ic->rx_msg;
	int ret;

	if (!m) {
		if (len > RDS_MAX_MSG_SIZE)
			return -EMSGSIZE;
		if (rds_ib_rx_fail())
			m = NULL;
		else
			m = rds_msg_alloc_rx(len, GFP_ATOMIC);
		if (!m)
			return -ENOMEM;
		ic->rx_msg = m;
		ic->rx_hdr = *h;
		ic->rx_left = len;
	} else if (h->h_sequence != ic->rx_hdr.h_sequence ||
		   h->h_len != ic->rx_hdr.h_len ||
		   h->h_sport != ic->rx_hdr.h_sport ||
		   h->h_dport != ic->rx_hdr.h_dport) {
		return -EPROTO;	/* fragments of two messages interleaved */
	}

	need = min_t(u32, ic->rx_left, RDS_IB_FRAG_SIZE);
	if (payload < need)
		return -EPROTO;	/* a short fragment: section 4.6 */
	if (need) {
		ib_dma_sync_single_for_cpu(ibdev, slot->dma, need,
					   DMA_FROM_DEVICE);
		if (m->data) {	/* all of it: len <= RDS_MSG_INLINE_MAX */
			memcpy_from_page(m->data, slot->page, 0, need);
			ib_dma_sync_single_for_device(ibdev, slot->dma, need,
						      DMA_FROM_DEVICE);
			rds_ib_stat_inc(RDS_IB_STAT_RX_COPIED);
		} else {
			m->pages[m->nr_pages++] =
				rds_ib_recv_slot_take(ic, slot);
			/* Without a page now, rx_refill_w gives it one. */
			rds_ib_recv_slot_fill(ic, slot, GFP_ATOMIC);
		}
		ic->rx_left -= need;
	}
	if (ic->rx_left)
		return 0;
	ret = rds_ib_recv_complete(ic);
	return ret == -ENOMEM ? -EIO : ret;	/* only ours means "again" */
}

/* The data of frame @i waits for the parked message to be taken. */
static void rds_ib_recv_hold(struct rds_ib_conn *ic, unsigned int i,
			     u32 payload)
{
	unsigned int tail = (ic->rx_held_head + ic->rx_held_nr) % ic->recv_nr;

	/* Only slots not posted are held: never more than the ring. */
	ic->rx_held[tail].slot = i;
	ic->rx_held[tail].payload = payload;
	ic->rx_held_nr++;
	rds_ib_stat_inc(RDS_IB_STAT_RX_HELD_FRAMES);
}

/*
 * Post a slot whose frame is done with: a credit for the peer.  One whose
 * page went to a message and got no new one waits for rx_refill_w.
 * Caller holds rx_lock.
 */
static int rds_ib_recv_repost(struct rds_ib_conn *ic,
			      struct rds_ib_recv_slot *slot)
{
	int ret;

	if (!slot->page) {
		rds_ib_stat_inc(RDS_IB_STAT_RX_NOMEM);
		if (!ic->rx_unfilled++)
			queue_delayed_work(system_wq, &ic->rx_refill_w, 0);
		return 0;
	}
	ret = rds_ib_recv_post(ic, slot);
	if (!ret && rds_ib_credit_posted(ic))
		rds_ib_send_ack(ic);
	return ret;
}

/*
 * No message for the first fragment of the frame in @slot: hold it, and
 * those behind it, and try again later.  Caller holds rx_lock.
 */
static void rds_ib_recv_nomem(struct rds_ib_conn *ic,
			      struct rds_ib_recv_slot *slot, u32 payload)
{
	rds_ib_stat_inc(RDS_IB_STAT_RX_NOMEM);
	rds_ib_recv_hold(ic, slot - ic->recv_slots, payload);
	queue_delayed_work(system_wq, &ic->rx_resume_w,
			   RDS_IB_RX_RESUME_DELAY);
}

static void rds_ib_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rds_ib_conn *ic = cq->cq_context;
	struct rds_ib_recv_slot *slot =
		container_of(wc->wr_cqe, struct rds_ib_recv_slot, cqe);
	u32 payload;
	int ret;

	spin_lock_bh(&ic->rx_lock);
	/* After a drop nothing more is taken from this incarnation. */
	if ((rds_conn_state(ic->conn) != RDS_CONN_UP &&
	     rds_conn_state(ic->conn) != RDS_CONN_CONNECTING) ||
	    test_bit(RDS_IB_RETIRING, &ic->flags) ||
	    test_bit(RDS_IB_RX_STOPPED, &ic->flags))
		goto out;
	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_debug("rds_zc_ib: receive from %pI6c failed: %s\n",
				 &ic->conn->faddr,
				 ib_wc_status_msg(wc->status));
		rds_ib_conn_drop(ic, "receive completion error");
		goto out;
	}
	if (wc->opcode != IB_WC_RECV) {
		rds_ib_conn_drop(ic, "unexpected receive opcode");
		goto out;
	}
	ret = rds_ib_recv_hdr(ic, slot - ic->recv_slots, wc->byte_len,
			      &payload);
	/* Behind a parked message or a frame that waits for memory. */
	if (!ret && (ic->rx_parked || ic->rx_held_nr)) {
		rds_ib_recv_hold(ic, slot - ic->recv_slots, payload);
		goto out;
	}
	if (!ret)
		ret = rds_ib_recv_data(ic, slot, payload);
	if (ret == -ENOMEM) {
		rds_ib_recv_nomem(ic, slot, payload);
		goto out;
	}
	if (ret >= 0)
		ret = rds_ib_recv_repost(ic, slot);
	if (ret)
		rds_ib_conn_drop(ic, "bad frame");
out:
	spin_unlock_bh(&ic->rx_lock);
}

/*
 * Offer the parked message again; then the frames held behind it, the
 * first of which may wait for memory for its message.
 */
static void rds_ib_recv_resume(struct work_struct *work)
{
	struct rds_ib_conn *ic = container_of(to_delayed_work(work),
					      struct rds_ib_conn, rx_resume_w);
	struct rds_ib_recv_slot *slot;
	enum rds_conn_state state;
	int ret;

	spin_lock_bh(&ic->rx_lock);
	if ((!ic->rx_parked && !ic->rx_held_nr) ||
	    test_bit(RDS_IB_RX_STOPPED, &ic->flags))
		goto out;
	state = rds_conn_state(ic->conn);
	if (state == RDS_CONN_CONNECTING) {
		/* Frames come before ESTABLISHED: wait for it, not forever. */
		queue_delayed_work(system_wq, &ic->rx_resume_w,
				   RDS_IB_RX_RESUME_DELAY);
		goto out;
	}
	if (state != RDS_CONN_UP)
		goto out;
	ret = ic->rx_parked ? rds_ib_recv_offer(ic) : 0;
	while (!ret && ic->rx_held_nr) {
		const struct rds_ib_rx_held *e = &ic->rx_held[ic->rx_held_head];

		slot = &ic->recv_slots[e->slot];
		ret = rds_ib_recv_data(ic, slot, e->payload);
		if (ret == -ENOMEM) {	/* it stays first: later */
			rds_ib_stat_inc(RDS_IB_STAT_RX_NOMEM);
			queue_delayed_work(system_wq, &ic->rx_resume_w,
					   RDS_IB_RX_RESUME_DELAY);
			ret = 0;
			break;
		}
		ic->rx_held_head = (ic->rx_held_head + 1) % ic->recv_nr;
		ic->rx_held_nr--;
		if (ret >= 0) {
			int err = rds_ib_recv_repost(ic, slot);

			if (err)
				ret = err;
		}
	}
	if (ret < 0)
		rds_ib_conn_drop(ic, "bad frame");
out:
	spin_unlock_bh(&ic->rx_lock);
}

/*
 * rx_refill_w: give the slots that lost their page a new one, allocated
 * with GFP_KERNEL outside rx_lock, and post them; again later while the
 * ring is still short.
 */
static void rds_ib_recv_refill(struct work_struct *work)
{
	struct rds_ib_conn *ic = container_of(to_delayed_work(work),
					      struct rds_ib_conn, rx_refill_w);
	struct rds_ib_recv_slot *slot;
	struct page *page;
	unsigned int i;
	int ret = 0;

	for (;;) {
		page = alloc_page(GFP_KERNEL | __GFP_NOWARN);
		spin_lock_bh(&ic->rx_lock);
		if (test_bit(RDS_IB_RX_STOPPED, &ic->flags) ||
		    !ic->rx_unfilled)
			break;
		if (!page || ret) {	/* no page, or it could not be mapped */
			queue_delayed_work(system_wq, &ic->rx_refill_w,
					   RDS_IB_RX_REFILL_DELAY);
			break;
		}
		/* Slots without a page are exactly the unfilled ones. */
		i = 0;
		while (i < ic->recv_nr && ic->recv_slots[i].page)
			i++;
		if (WARN_ON_ONCE(i == ic->recv_nr)) {
			ic->rx_unfilled = 0;
			break;
		}
		slot = &ic->recv_slots[i];
		ret = rds_ib_recv_slot_map(ic, slot, page);
		if (!ret) {
			page = NULL;
			ic->rx_unfilled--;
			rds_ib_stat_inc(RDS_IB_STAT_RX_REFILLED);
			if (rds_ib_recv_post(ic, slot)) {
				spin_unlock_bh(&ic->rx_lock);
				rds_ib_conn_drop(ic, "receive post failed");
				return;
			}
			if (rds_ib_credit_posted(ic))
				rds_ib_send_ack(ic);
		}
		spin_unlock_bh(&ic->rx_lock);
		if (page)
			__free_page(page);
	}
	spin_unlock_bh(&ic->rx_lock);
	if (page)
		__free_page(page);
}

/**
 * rds_ib_recv_conn_init() - receive state of a new connection object
 * @ic: the connection
 */
void rds_ib_recv_conn_init(struct rds_ib_conn *ic)
{
	spin_lock_init(&ic->rx_lock);
	INIT_DELAYED_WORK(&ic->rx_resume_w, rds_ib_recv_resume);
	INIT_DELAYED_WORK(&ic->rx_refill_w, rds_ib_recv_refill);
}

/**
 * rds_ib_recv_stop() - take nothing more from this incarnation
 * @ic: the connection, being torn down
 *
 * Completions that run after this (the drain's) do nothing, a parked
 * message is not offered again and no slot is refilled.
 */
void rds_ib_recv_stop(struct rds_ib_conn *ic)
{
	spin_lock_bh(&ic->rx_lock);
	set_bit(RDS_IB_RX_STOPPED, &ic->flags);
	spin_unlock_bh(&ic->rx_lock);
	cancel_delayed_work_sync(&ic->rx_resume_w);
	cancel_delayed_work_sync(&ic->rx_refill_w);
}

/**
 * rds_ib_recv_ring_init() - allocate the receive ring of an incarnation
 * @ic: the connection, its rdev and recv_nr set
 *
 * Return: 0 or a negative errno; rds_ib_recv_ring_free() undoes it.
 */
int rds_ib_recv_ring_init(struct rds_ib_conn *ic)
{
	struct ib_device *ibdev = ic->rdev->ibdev;
	size_t hdrs = ic->recv_nr * sizeof(struct rds_ib_hdr);
	unsigned int i;
	int ret;

	ic->recv_slots = kvcalloc(ic->recv_nr, sizeof(*ic->recv_slots),
				  GFP_KERNEL);
	if (!ic->recv_slots)
		return -ENOMEM;
	ic->rx_held = kvcalloc(ic->recv_nr, sizeof(*ic->rx_held), GFP_KERNEL);
	if (!ic->rx_held)
		return -ENOMEM;
	ic->rx_held_head = 0;
	ic->rx_held_nr = 0;
	ic->rx_parked = false;
	ic->rx_unfilled = 0;
	ic->recv_hdrs = kzalloc(hdrs, GFP_KERNEL);
	if (!ic->recv_hdrs)
		return -ENOMEM;
	ic->recv_hdrs_dma = ib_dma_map_single(ibdev, ic->recv_hdrs, hdrs,
					      DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(ibdev, ic->recv_hdrs_dma)) {
		kfree(ic->recv_hdrs);
		ic->recv_hdrs = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < ic->recv_nr; i++) {
		struct rds_ib_recv_slot *slot = &ic->recv_slots[i];

		slot->cqe.done = rds_ib_recv_done;
		slot->sge[0].addr = rds_ib_recv_hdr_dma(ic, i);
		slot->sge[0].length = sizeof(struct rds_ib_hdr);
		slot->sge[0].lkey = ic->rdev->pd->local_dma_lkey;
		slot->sge[1].length = RDS_IB_FRAG_SIZE;
		slot->sge[1].lkey = ic->rdev->pd->local_dma_lkey;
		slot->wr.wr_cqe = &slot->cqe;
		slot->wr.sg_list = slot->sge;
		slot->wr.num_sge = 2;
		ret = rds_ib_recv_slot_fill(ic, slot, GFP_KERNEL);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * rds_ib_recv_ring_post() - post every slot of a new ring
 * @ic: the connection, its QP created
 *
 * Return: 0 or the posting error.
 */
int rds_ib_recv_ring_post(struct rds_ib_conn *ic)
{
	unsigned int i;
	int ret;

	for (i = 0; i < ic->recv_nr; i++) {
		ret = rds_ib_recv_post(ic, &ic->recv_slots[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * rds_ib_recv_ring_free() - free the receive ring; the QP is drained
 * @ic: the connection
 */
void rds_ib_recv_ring_free(struct rds_ib_conn *ic)
{
	unsigned int i;

	if (ic->recv_slots) {
		for (i = 0; i < ic->recv_nr; i++) {
			struct rds_ib_recv_slot *slot = &ic->recv_slots[i];

			if (slot->page)
				__free_page(rds_ib_recv_slot_take(ic, slot));
		}
		kvfree(ic->recv_slots);
		ic->recv_slots = NULL;
	}
	kvfree(ic->rx_held);
	ic->rx_held = NULL;
	ic->rx_held_nr = 0;
	ic->rx_parked = false;
	ic->rx_unfilled = 0;
	if (ic->recv_hdrs) {
		ib_dma_unmap_single(ic->rdev->ibdev, ic->recv_hdrs_dma,
				    ic->recv_nr * sizeof(struct rds_ib_hdr),
				    DMA_FROM_DEVICE);
		kfree(ic->recv_hdrs);
		ic->recv_hdrs = NULL;
	}
}
