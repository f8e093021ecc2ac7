// SPDX-License-Identifier: GPL-2.0
/*
 * Sending: messages as SENDs of one header and at most 4 KiB of payload
 * each, and ACK frames (rds_zc-wire.rst sections 3.3, 4 and 5.3).
 *
 * Each ring slot owns a header buffer in one DMA-mapped array and the
 * storage of its SEND's WR; the payload page (or a small message's
 * inline payload) is mapped for the time the SEND is posted.  The SENDs
 * of one rds_ib_xmit() call are chained and posted with one
 * ib_post_send(): a 64 KiB message rings the doorbell once, not 16 times.
 *
 * Signaling.  A completion costs both the HCA and the host a CQE and a
 * pass through the completion handler, so SENDs of plain messages are
 * signaled only every rds_ib_signal_every() WRs, as the distribution's
 * RDS does.  RC completes a send queue in order, so the completion of a
 * signaled WR releases the slots of the unsignaled ones before it too
 * (a WR that fails has a completion of its own, whatever its flags).
 * REG_MR WRs, the last RDMA WR of an operation without SENDs, every
 * SEND of a message carrying an operation or a key, and the last SEND of
 * a zero-copy message are always signaled: their completions end
 * operations, release keys and give user pages back, which must not wait
 * for later traffic.  The other RDMA WRs of an operation count as plain
 * SENDs do: the completion of the message's first SEND, or of a later
 * signaled RDMA WR, ends them, and the last one's slot then ends the
 * RDMA part of the operation (rds_ib_send_op_done()).  At most
 * rds_ib_signal_every() - 1 plain messages or RDMA WRs stay referenced by
 * an idle ring until the next completion or the connection's teardown.
 *
 * Bottom halves.  rds_ib_xmit() runs in process context and posts with
 * bottom halves off, as the completion handlers post their ACK frames
 * and receive WRs.  A provider that does a kernel QP's work in a softirq
 * (rxe on 6.1 schedules its requester's tasklet on every post) raises it
 * inside the bracket, and local_bh_enable() runs it at once, on this
 * CPU, for all the WRs of the call; raised from plain process context it
 * would wake ksoftirqd instead, a context switch and back per message.
 * A provider that rings a doorbell (or, as rxe on 6.12, queues a work
 * item) is not affected.
 */
#include <linux/delay.h>
#include <linux/errno.h>
#include <linux/jiffies.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <uapi/linux/rds.h>

#include "ib.h"
#include "message.h"
#include "rdma.h"
#include "transport.h"

/* Plain SENDs per signaled one, at most; never more than half a ring. */
#define RDS_IB_SIGNAL_EVERY	16

static unsigned int rds_ib_signal_every(const struct rds_ib_conn *ic)
{
	return clamp(ic->send_nr / 2, 1U, (unsigned int)RDS_IB_SIGNAL_EVERY);
}

static void rds_ib_send_unmap(struct rds_ib_conn *ic,
			      struct rds_ib_send_slot *slot)
{
	if (slot->dma && slot->dma_single)
		ib_dma_unmap_single(ic->rdev->ibdev, slot->dma, slot->dma_len,
				    DMA_TO_DEVICE);
	else if (slot->dma)
		ib_dma_unmap_page(ic->rdev->ibdev, slot->dma, slot->dma_len,
				  DMA_TO_DEVICE);
	if (slot->dma2)
		ib_dma_unmap_page(ic->rdev->ibdev, slot->dma2, slot->dma2_len,
				  DMA_TO_DEVICE);
	slot->dma2 = 0;
	slot->dma = 0;
	slot->dma_single = false;
	rds_msg_put(slot->msg);
	slot->msg = NULL;
}

/* The notification status of a failed work request (rds_rdma_notify). */
static int rds_ib_rdma_status(enum ib_wc_status status)
{
	switch (status) {
	case IB_WC_SUCCESS:
		return RDS_RDMA_SUCCESS;
	case IB_WC_REM_ACCESS_ERR:
	case IB_WC_REM_INV_REQ_ERR:
	case IB_WC_REM_OP_ERR:
		return RDS_RDMA_REMOTE_ERROR;
	case IB_WC_WR_FLUSH_ERR:
	case IB_WC_RETRY_EXC_ERR:
	case IB_WC_RNR_RETRY_EXC_ERR:
		return RDS_RDMA_DROPPED;
	default:
		return RDS_RDMA_OTHER_ERROR;
	}
}

static void rds_ib_op_dma_unmap(struct rds_rdma_op *op)
{
	if (!op->dma_nents)
		return;
	ib_dma_unmap_sg(op->dma_dev, op->sgt.sgl, op->sgt.orig_nents,
			op->write ? DMA_TO_DEVICE : DMA_FROM_DEVICE);
	op->dma_nents = 0;
}

/**
 * rds_ib_send_op_unmap() - unmap an operation teardown cut short
 * @ic: the connection, its QP drained
 *
 * An operation whose last RDMA WR was posted is unmapped by that WR's
 * completion; only the one xmit was still posting can be left.
 */
void rds_ib_send_op_unmap(struct rds_ib_conn *ic)
{
	if (ic->xmit_op) {
		rds_ib_op_dma_unmap(ic->xmit_op);
		ic->xmit_op = NULL;
	}
}

/* The RDMA and notification part of a send completion. */
static void rds_ib_send_op_done(struct rds_ib_send_slot *slot,
				enum ib_wc_status status)
{
	struct rds_rdma_op *op = slot->msg->op;

	/* The first failure of the operation is its status. */
	if (slot->rdma && status != IB_WC_SUCCESS && !op->status)
		op->status = rds_ib_rdma_status(status);
	if (slot->rdma_last)
		rds_ib_op_dma_unmap(op);
	if (slot->op_last)
		rds_zc_rdma_done(op, rds_ib_rdma_status(status));
	slot->rdma = false;
	slot->rdma_last = false;
	slot->op_last = false;
}

/* Release a slot whose WR ended with @status. */
static void rds_ib_send_slot_done(struct rds_ib_conn *ic,
				  struct rds_ib_send_slot *slot,
				  enum ib_wc_status status)
{
	if (slot->reg) {
		rds_ib_mr_chain_done(slot->msg->reg_mr, status);
		slot->reg = false;
	}
	if (slot->msg->op)
		rds_ib_send_op_done(slot, status);
	rds_ib_send_unmap(ic, slot);
}

static void rds_ib_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rds_ib_conn *ic = cq->cq_context;
	struct rds_ib_send_slot *slot =
		container_of(wc->wr_cqe, struct rds_ib_send_slot, cqe);
	unsigned int last = slot - ic->send_slots;
	unsigned int i, n = 0;

	/*
	 * The unsignaled WRs before this one ended, and well: a failed one
	 * would have had its own completion, which released it.
	 */
	do {
		i = ic->send_tail;
		rds_ib_send_slot_done(ic, &ic->send_slots[i],
				      i == last ? wc->status : IB_WC_SUCCESS);
		ic->send_tail = (i + 1) % ic->send_nr;
		n++;
	} while (i != last);
	WRITE_ONCE(ic->tx_done_jiffies, jiffies);
	/* The slots are clean before they are free; pairs with slot_get(). */
	smp_mb__before_atomic();
	atomic_add(n, &ic->send_free);

	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_debug("rds_zc_ib: send to %pI6c failed: %s\n",
				 &ic->conn->faddr,
				 ib_wc_status_msg(wc->status));
		rds_ib_conn_drop(ic, "send completion error");
		return;
	}
	if (test_and_clear_bit(RDS_IB_SEND_FULL, &ic->flags))
		rds_zc_conn_kick(ic->conn);
}

/**
 * rds_ib_send_ring_init() - allocate the send ring of a new incarnation
 * @ic: the connection, its rdev and send_nr set
 *
 * Return: 0 or a negative errno; rds_ib_send_ring_free() undoes it.
 */
int rds_ib_send_ring_init(struct rds_ib_conn *ic)
{
	struct ib_device *ibdev = ic->rdev->ibdev;
	size_t hdrs = (ic->send_nr + 1) * sizeof(struct rds_ib_hdr);
	unsigned int i;

	ic->send_slots = kvcalloc(ic->send_nr, sizeof(*ic->send_slots),
				  GFP_KERNEL);
	if (!ic->send_slots)
		return -ENOMEM;
	for (i = 0; i < ic->send_nr; i++)
		ic->send_slots[i].cqe.done = rds_ib_send_done;

	ic->send_hdrs = kzalloc(hdrs, GFP_KERNEL);
	if (!ic->send_hdrs)
		return -ENOMEM;
	ic->send_hdrs_dma = ib_dma_map_single(ibdev, ic->send_hdrs, hdrs,
					      DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ibdev, ic->send_hdrs_dma)) {
		kfree(ic->send_hdrs);
		ic->send_hdrs = NULL;
		return -ENOMEM;
	}
	ic->send_head = 0;
	ic->send_tail = 0;
	ic->send_unsignaled = 0;
	WRITE_ONCE(ic->tx_done_jiffies, jiffies);
	atomic_set(&ic->send_free, ic->send_nr);
	return 0;
}

/**
 * rds_ib_conn_tx_state() - the send ring, for the ACK watchdog's report
 * @conn: the connection, up
 * @posted: out: work requests posted and not yet completed (those posted
 *	unsignaled count until the next signaled one completes)
 * @idle: out: jiffies since the last send completion, or since setup
 *
 * Reads without locks: a report, not a decision.
 */
void rds_ib_conn_tx_state(struct rds_conn *conn, unsigned int *posted,
			  unsigned long *idle)
{
	struct rds_ib_conn *ic = conn->tp;

	*posted = READ_ONCE(ic->send_nr) - atomic_read(&ic->send_free);
	*idle = jiffies - READ_ONCE(ic->tx_done_jiffies);
}

/* How long a teardown lets the QP finish what was answered already. */
#define RDS_IB_QUIESCE_MS	50

/**
 * rds_ib_send_quiesce() - let the QP finish the work requests answered
 * @ic: the connection, being torn down, its QP not yet in the error state
 *
 * A peer whose memory refused our RDMA (a dead key) sends its NAK, then
 * goes down and sends its DREQ: the DREQ can bring us here while our
 * device has yet to process the NAK, and moving the QP to the error state
 * would then flush the RDMA, ending the operation as DROPPED ("may have
 * run") where the peer said REMOTE_ERROR.  So wait until no work request
 * is in flight, RDS_IB_QUIESCE_MS at most: a peer that is gone answers
 * nothing, and up to rds_ib_signal_every() - 1 unsignaled ones may count
 * until then.
 *
 * Context: process context, may sleep; the caller holds cm_mutex.
 */
void rds_ib_send_quiesce(struct rds_ib_conn *ic)
{
	unsigned long until = jiffies + msecs_to_jiffies(RDS_IB_QUIESCE_MS);

	while (ic->send_slots && atomic_read(&ic->send_free) < ic->send_nr &&
	       time_before(jiffies, until))
		usleep_range(1000, 2000);
}

/**
 * rds_ib_send_ring_free() - free the send ring; the QP is drained
 * @ic: the connection
 */
void rds_ib_send_ring_free(struct rds_ib_conn *ic)
{
	struct rds_ib_send_slot *slot;
	unsigned int i;

	if (ic->send_slots) {
		for (i = 0; i < ic->send_nr; i++) {
			slot = &ic->send_slots[i];
			if (!slot->msg)
				continue;
			/*
			 * Never completed: an unsignaled WR that ended well
			 * before the drain, for one that failed or was flushed
			 * has a completion of its own.  If it was an RDMA WR
			 * of an operation, the operation's pages are unmapped
			 * as its completion would have done.
			 */
			if (slot->msg->op)
				rds_ib_send_op_done(slot, IB_WC_SUCCESS);
			rds_ib_send_unmap(ic, slot);
		}
		kvfree(ic->send_slots);
		ic->send_slots = NULL;
	}
	if (ic->send_hdrs) {
		ib_dma_unmap_single(ic->rdev->ibdev, ic->send_hdrs_dma,
				    (ic->send_nr + 1) * sizeof(struct rds_ib_hdr),
				    DMA_TO_DEVICE);
		kfree(ic->send_hdrs);
		ic->send_hdrs = NULL;
	}
}

static u64 rds_ib_hdr_dma(struct rds_ib_conn *ic, unsigned int i)
{
	return ic->send_hdrs_dma + i * sizeof(struct rds_ib_hdr);
}

/* Hand header @i, checksummed, to the device; describe it as an SGE. */
static void rds_ib_hdr_seal(struct rds_ib_conn *ic, unsigned int i,
			    struct ib_sge *sge)
{
	ib_dma_sync_single_for_device(ic->rdev->ibdev, rds_ib_hdr_dma(ic, i),
				      sizeof(struct rds_ib_hdr), DMA_TO_DEVICE);
	sge->addr = rds_ib_hdr_dma(ic, i);
	sge->length = sizeof(struct rds_ib_hdr);
	sge->lkey = ic->rdev->pd->local_dma_lkey;
}

/* Take a free slot, or note that xmit waits for one. */
static bool rds_ib_send_slot_get(struct rds_ib_conn *ic)
{
	if (atomic_dec_if_positive(&ic->send_free) >= 0)
		return true;
	set_bit(RDS_IB_SEND_FULL, &ic->flags);
	/* Pairs with the barrier in rds_ib_send_done(): bit before recheck. */
	smp_mb__after_atomic();
	/* A completion may have freed one before it could see the bit. */
	if (atomic_dec_if_positive(&ic->send_free) >= 0) {
		clear_bit(RDS_IB_SEND_FULL, &ic->flags);
		return true;
	}
	return false;
}

/*
 * Up to @want free slots at once, for a message's fragments; when none
 * is free, rds_ib_send_slot_get() notes that xmit waits.  Return: the
 * slots taken, 0 to @want.
 */
static unsigned int rds_ib_send_slots_get(struct rds_ib_conn *ic,
					  unsigned int want)
{
	int old = atomic_read(&ic->send_free);
	unsigned int n;

	do {
		if (old <= 0)
			return rds_ib_send_slot_get(ic) ? 1 : 0;
		n = min_t(unsigned int, want, old);
	} while (!atomic_try_cmpxchg(&ic->send_free, &old, old - n));
	return n;
}

/* The verb and operands of an atomic; the caller sets the rest of @wr. */
static void rds_ib_atomic_wr(const struct rds_rdma_op *op,
			     struct ib_atomic_wr *wr)
{
	const struct rds_atomic *at = &op->atomic;

	if (at->cswp)
		wr->wr.opcode = at->masked ? IB_WR_MASKED_ATOMIC_CMP_AND_SWP :
					     IB_WR_ATOMIC_CMP_AND_SWP;
	else
		wr->wr.opcode = at->masked ? IB_WR_MASKED_ATOMIC_FETCH_AND_ADD :
					     IB_WR_ATOMIC_FETCH_AND_ADD;
	wr->remote_addr = op->remote_addr;
	wr->rkey = op->rkey;
	wr->compare_add = at->compare_add;
	wr->swap = at->swap;
	wr->compare_add_mask = at->compare_add_mask;
	wr->swap_mask = at->swap_mask;
}

/*
 * Post the RDMA operation or atomic of a message, before its SENDs (wire
 * 8.4): as many WRs as the ring takes now, each with up to max_sge
 * entries of the local pages and the remote range continuing where the
 * last one ended; an atomic is one WR of one 8-byte entry.  Return: 0
 * when all of it is posted, -EAGAIN when the ring is full (the rest goes
 * when slots free up), another negative errno to drop.
 */
static int rds_ib_xmit_rdma(struct rds_ib_conn *ic, struct rds_msg *m)
{
	struct rds_rdma_op *op = m->op;
	struct ib_device *ibdev = ic->rdev->ibdev;
	unsigned int max = op->write ? ic->max_sge : ic->max_sge_rd;
	struct ib_sge sge[8];
	int ret;

	if (op->posted == op->len)
		return 0;
	if (!op->dma_nents) {
		op->dma_nents = ib_dma_map_sg(ibdev, op->sgt.sgl,
					      op->sgt.orig_nents,
					      op->write ? DMA_TO_DEVICE :
							  DMA_FROM_DEVICE);
		if (!op->dma_nents)
			return -ENOMEM;
		op->dma_dev = ibdev;
		op->next_sg = op->sgt.sgl;
		ic->xmit_op = op;
	}

	while (op->posted < op->len) {
		unsigned int i = ic->send_head;
		struct rds_ib_send_slot *slot = &ic->send_slots[i];
		union {
			struct ib_rdma_wr rdma;
			struct ib_atomic_wr atomic;
		} u = {};
		struct ib_send_wr *wr = &u.rdma.wr;	/* both begin with it */
		unsigned int n = 0;
		u32 bytes = 0;

		if (!rds_ib_send_slot_get(ic)) {
			rds_ib_stat_inc(RDS_IB_STAT_TX_RING_FULL);
			return -EAGAIN;
		}
		while (n < max && op->next_sg) {
			sge[n].addr = sg_dma_address(op->next_sg);
			sge[n].length = sg_dma_len(op->next_sg);
			sge[n].lkey = ic->rdev->pd->local_dma_lkey;
			bytes += sge[n].length;
			n++;
			op->next_sg = sg_next(op->next_sg);
			/* Past the mapped entries: the op ends here. */
			if (op->posted + bytes >= op->len)
				op->next_sg = NULL;
		}
		if (op->is_atomic) {
			rds_ib_atomic_wr(op, &u.atomic);
		} else {
			wr->opcode = op->write ? IB_WR_RDMA_WRITE :
						 IB_WR_RDMA_READ;
			u.rdma.remote_addr = op->remote_addr + op->posted;
			u.rdma.rkey = op->rkey;
		}
		wr->wr_cqe = &slot->cqe;
		wr->sg_list = sge;
		wr->num_sge = n;

		slot->msg = rds_msg_get(m);
		slot->rdma = true;
		slot->rdma_last = op->posted + bytes >= op->len;
		slot->op_last = slot->rdma_last && m->no_sends;
		/* Unsignaled when a SEND's completion will end it (above). */
		if (slot->op_last ||
		    ++ic->send_unsignaled >= rds_ib_signal_every(ic)) {
			wr->send_flags = IB_SEND_SIGNALED;
			ic->send_unsignaled = 0;
		}
		ret = ib_post_send(ic->qp, wr, NULL);
		if (ret) {
			slot->rdma = false;
			slot->rdma_last = false;
			slot->op_last = false;
			rds_ib_send_unmap(ic, slot);
			atomic_inc(&ic->send_free);
			return ret;
		}
		ic->send_head = (i + 1) % ic->send_nr;
		op->posted += bytes;
		rds_ib_stat_inc(op->is_atomic ? RDS_IB_STAT_TX_ATOMIC :
						RDS_IB_STAT_TX_RDMA);
	}
	ic->xmit_op = NULL;	/* the last WR's completion unmaps it */
	return 0;
}

/*
 * Post the REG_MR of the MR whose cookie @m carries (RDS_CMSG_RDMA_MAP),
 * unless it is registered already: on this QP it runs before the SENDs
 * that tell the peer the cookie.  Return: 0, -EAGAIN when the ring is
 * full, another negative errno to drop.
 */
static int rds_ib_xmit_reg(struct rds_ib_conn *ic, struct rds_msg *m)
{
	unsigned int i = ic->send_head;
	struct rds_ib_send_slot *slot = &ic->send_slots[i];
	struct ib_reg_wr wr;
	int ret;

	if (!rds_ib_send_slot_get(ic)) {
		rds_ib_stat_inc(RDS_IB_STAT_TX_RING_FULL);
		return -EAGAIN;
	}
	if (!rds_ib_mr_chain(m->reg_mr, ic->rdev, &wr)) {
		atomic_inc(&ic->send_free);
		return 0;
	}
	wr.wr.wr_cqe = &slot->cqe;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	ic->send_unsignaled = 0;
	slot->msg = rds_msg_get(m);
	slot->reg = true;
	ret = ib_post_send(ic->qp, &wr.wr, NULL);
	if (ret) {
		rds_ib_mr_unchain(m->reg_mr);
		slot->reg = false;
		rds_ib_send_unmap(ic, slot);
		atomic_inc(&ic->send_free);
		return ret;
	}
	ic->send_head = (i + 1) % ic->send_nr;
	return 0;
}

/*
 * Map the payload of the fragment at @off of a message of pages into
 * @slot.  A zero-copy message starts anywhere in its first user page, so
 * its fragments straddle two pages: the second part is mapped too, as
 * @slot->dma2, and described in *@sge2.  The SEND carries the same bytes
 * as a copied message's would: the wire cannot tell them apart.
 * Return: 0, with @slot->dma to be checked by the caller, or -ENOMEM
 * when the second part failed, -EOPNOTSUPP (the connection drops) when
 * the QP has no third gather entry for it.
 */
static int rds_ib_xmit_map_frag(struct rds_ib_conn *ic,
				struct rds_ib_send_slot *slot,
				const struct rds_msg *m, size_t off,
				struct ib_sge *sge2)
{
	struct ib_device *ibdev = ic->rdev->ibdev;
	size_t len = min_t(size_t, m->len - off, RDS_IB_FRAG_SIZE);
	struct page *page;
	size_t poff, p2;

	page = rds_msg_page(m, off, &poff);
	slot->dma_len = min_t(size_t, len, PAGE_SIZE - poff);
	if (slot->dma_len < len) {
		if (ic->max_sge < 3)	/* no device we know of */
			return -EOPNOTSUPP;
		slot->dma2_len = len - slot->dma_len;
		slot->dma2 = ib_dma_map_page(ibdev,
					     rds_msg_page(m, off + slot->dma_len,
							  &p2),
					     0, slot->dma2_len, DMA_TO_DEVICE);
		if (ib_dma_mapping_error(ibdev, slot->dma2)) {
			slot->dma2 = 0;
			return -ENOMEM;
		}
		sge2->addr = slot->dma2;
		sge2->length = slot->dma2_len;
		sge2->lkey = ic->rdev->pd->local_dma_lkey;
	}
	slot->dma = ib_dma_map_page(ibdev, page, poff, slot->dma_len,
				    DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ibdev, slot->dma) && slot->dma2) {
		ib_dma_unmap_page(ibdev, slot->dma2, slot->dma2_len,
				  DMA_TO_DEVICE);
		slot->dma2 = 0;
	}
	return 0;
}

/*
 * Build and checksum the header of @m's frames in @h.  Every byte is
 * written, the padding and (by rds_ib_hdr_csum()) the checksum too: the
 * slot's header is reused frame after frame, and not zeroed first.
 */
static __always_inline void rds_ib_hdr_build(struct rds_ib_hdr *h,
					     const struct rds_msg *m,
					     __be64 ack, u8 credit)
{
	h->h_sequence = cpu_to_be64(m->seq);
	h->h_ack = ack;
	h->h_len = cpu_to_be32(m->len);
	h->h_sport = m->sport;
	h->h_dport = m->dport;
	h->h_flags = m->flags;
	h->h_credit = credit;
	memset(h->h_padding, 0, sizeof(h->h_padding));
	memcpy(h->h_exthdr, m->exthdr, sizeof(h->h_exthdr));
	rds_ib_hdr_csum(h);
}

/*
 * Map the payload of the fragment at @off of @m into @slot and describe
 * it in @wr's SGEs.  Return: 0, or -ENOMEM / -EOPNOTSUPP with nothing of
 * it left mapped.
 */
static __always_inline int rds_ib_xmit_map(struct rds_ib_conn *ic,
					   struct rds_ib_send_slot *slot,
					   const struct rds_msg *m, size_t off,
					   struct ib_send_wr *wr)
{
	struct ib_device *ibdev = ic->rdev->ibdev;
	struct ib_sge *sge = slot->sge;
	int err;

	slot->dma_single = m->data;	/* one fragment */
	if (slot->dma_single) {
		slot->dma_len = m->len;
		slot->dma = ib_dma_map_single(ibdev, m->data, slot->dma_len,
					      DMA_TO_DEVICE);
	} else {
		err = rds_ib_xmit_map_frag(ic, slot, m, off, &sge[2]);
		if (err)
			return err;
	}
	if (ib_dma_mapping_error(ibdev, slot->dma)) {
		slot->dma = 0;
		return -ENOMEM;
	}
	sge[1].addr = slot->dma;
	sge[1].length = slot->dma_len;
	sge[1].lkey = ic->rdev->pd->local_dma_lkey;
	wr->num_sge = slot->dma2 ? 3 : 2;
	return 0;
}

/*
 * The SEND of a message of one fragment (a small datagram, the message
 * that carries an RDMA operation's ACK or a MAP): one slot, one credit,
 * one WR posted alone, without the chain and batch bookkeeping of
 * rds_ib_xmit()'s loop.  Same frame, same signaling and fencing rules,
 * and the same ACK frame for credits a grab left over, sent or not.
 * Return: as rds_ib_xmit().
 */
static int rds_ib_xmit_one(struct rds_ib_conn *ic, struct rds_msg *m,
			   unsigned int *frag)
{
	unsigned int i = ic->send_head;
	struct rds_ib_send_slot *slot = &ic->send_slots[i];
	struct ib_send_wr *wr = &slot->wr;
	u8 credit;
	int ret;

	if (!rds_ib_send_slot_get(ic)) {
		rds_ib_stat_inc(RDS_IB_STAT_TX_RING_FULL);
		ret = -EAGAIN;
		goto out;
	}
	if (!rds_ib_credit_grab(ic, &credit)) {
		atomic_inc(&ic->send_free);
		ret = -EAGAIN;		/* arriving credits kick us */
		goto out;
	}
	if (WARN_ON_ONCE(slot->msg)) {	/* completions out of order */
		atomic_inc(&ic->send_free);
		return -EIO;
	}
	rds_ib_hdr_build(&ic->send_hdrs[i], m,
			 cpu_to_be64(atomic64_read(&ic->ack_next)), credit);
	rds_ib_hdr_seal(ic, i, &slot->sge[0]);

	memset(wr, 0, sizeof(*wr));
	wr->wr_cqe = &slot->cqe;
	wr->sg_list = slot->sge;
	wr->num_sge = 1;
	wr->opcode = IB_WR_SEND;
	wr->send_flags = IB_SEND_SOLICITED;	/* the last: the peer wakes */
	if (m->op || m->reg_mr || m->zc ||
	    ++ic->send_unsignaled >= rds_ib_signal_every(ic)) {
		wr->send_flags |= IB_SEND_SIGNALED;
		ic->send_unsignaled = 0;
	}
	if (m->op) {	/* see rds_ib_xmit() for the fence */
		if (m->op->fence || (!m->op->write && !m->op->is_atomic))
			wr->send_flags |= IB_SEND_FENCE;
		slot->op_last = true;
	}
	if (m->len) {
		ret = rds_ib_xmit_map(ic, slot, m, 0, wr);
		if (ret) {
			slot->op_last = false;
			atomic_inc(&ic->send_free);
			return ret;
		}
	}
	slot->msg = rds_msg_get(m);

	ret = ib_post_send(ic->qp, wr, NULL);
	if (ret) {	/* the connection drops: credits go with it */
		slot->op_last = false;
		rds_ib_send_unmap(ic, slot);
		atomic_inc(&ic->send_free);
		return ret;
	}
	ic->send_head = (i + 1) % ic->send_nr;
	*frag = 1;
	rds_ib_stat_inc(RDS_IB_STAT_TX_FRAMES);
out:
	/* Credits left over by a grab ask for an ACK frame to carry them. */
	if (test_bit(RDS_IB_ACK_REQUESTED, &ic->flags))
		rds_ib_send_ack(ic);
	return ret;
}

/*
 * Post the chain of @n SENDs that rds_ib_xmit() built in the ring slots
 * from @start on, with one doorbell.  On a failure the WRs from the one
 * the device refused on were not posted: their slots are released, and
 * the ring head and *@frag move back over them; the connection drops,
 * which flushes those that were.
 */
static int rds_ib_xmit_post(struct rds_ib_conn *ic, unsigned int start,
			    unsigned int n, unsigned int *frag)
{
	const struct ib_send_wr *bad = NULL;
	struct rds_ib_send_slot *slot;
	unsigned int k;
	int ret;

	ret = ib_post_send(ic->qp, &ic->send_slots[start].wr, &bad);
	if (!ret) {
		rds_ib_stat_add(RDS_IB_STAT_TX_FRAMES, n);
		return 0;
	}
	for (k = 0; k < n; k++) {
		slot = &ic->send_slots[(start + k) % ic->send_nr];
		if (&slot->wr == bad)
			break;
	}
	rds_ib_stat_add(RDS_IB_STAT_TX_FRAMES, k);
	ic->send_head = (start + k) % ic->send_nr;
	*frag -= n - k;
	for (; k < n; k++) {
		slot = &ic->send_slots[(start + k) % ic->send_nr];
		slot->op_last = false;
		rds_ib_send_unmap(ic, slot);
		atomic_inc(&ic->send_free);
	}
	return ret;
}

/*
 * The work of rds_ib_xmit(), with bottom halves off.  The SENDs of one
 * call are chained and posted together (one doorbell), their ring slots
 * and credits taken together (one atomic update each); a message of one
 * fragment goes by rds_ib_xmit_one(), without that.
 */
static int rds_ib_xmit_posts(struct rds_ib_conn *ic, struct rds_msg *m,
			     unsigned int *frag)
{
	unsigned int nr = max_t(unsigned int, 1,
				DIV_ROUND_UP(m->len, RDS_IB_FRAG_SIZE));
	unsigned int start, chained = 0, ready = 0, n;
	struct ib_send_wr *prev = NULL;
	const struct rds_ib_hdr *tmpl = NULL;	/* of this call's frames */
	__be64 ack;
	int ret = 0, err;
	u8 credit;

	if (m->reg_mr && *frag == 0) {
		ret = rds_ib_xmit_reg(ic, m);
		if (ret)
			return ret;
	}
	if (m->op && *frag == 0) {
		ret = rds_ib_xmit_rdma(ic, m);
		if (ret)
			return ret;
		if (m->no_sends)
			return 0;
	}
	if (nr == 1 && !*frag)
		return rds_ib_xmit_one(ic, m, frag);
	start = ic->send_head;

	while (*frag < nr) {
		unsigned int i = ic->send_head;
		struct rds_ib_send_slot *slot = &ic->send_slots[i];
		struct rds_ib_hdr *h = &ic->send_hdrs[i];
		struct ib_send_wr *wr = &slot->wr;
		struct ib_sge *sge = slot->sge;
		size_t off = (size_t)*frag * RDS_IB_FRAG_SIZE;

		/* Slots and credits for as many fragments as can go. */
		if (!ready) {
			/* The last fragment left: no batch for it. */
			if (*frag == nr - 1)
				ready = rds_ib_send_slot_get(ic);
			else
				ready = rds_ib_send_slots_get(ic, nr - *frag);
			if (!ready) {
				rds_ib_stat_inc(RDS_IB_STAT_TX_RING_FULL);
				ret = -EAGAIN;
				break;
			}
			if (ready == 1)
				n = rds_ib_credit_grab(ic, &credit);
			else
				n = rds_ib_credit_grab_many(ic, ready, &credit);
			if (n < ready)	/* give back the slots not used */
				atomic_add(ready - n, &ic->send_free);
			ready = n;
			if (!ready) {
				ret = -EAGAIN;	/* arriving credits kick us */
				break;
			}
		} else {
			credit = 0;	/* the batch's first returned them */
		}
		ready--;
		if (WARN_ON_ONCE(slot->msg)) {	/* completions out of order */
			atomic_add(ready + 1, &ic->send_free);
			ret = -EIO;
			break;
		}

		/*
		 * Every fragment carries the same header but for the credits
		 * it returns (the first of a batch only): build and checksum
		 * it once, in the first fragment's slot, then copy that and
		 * patch the credit byte and the checksum.  Built again if
		 * our ACK moved meanwhile: a frame never carries an older
		 * one than an ACK frame posted before it.
		 */
		ack = cpu_to_be64(atomic64_read(&ic->ack_next));
		if (!tmpl || ack != tmpl->h_ack) {
			rds_ib_hdr_build(h, m, ack, credit);
			tmpl = h;
		} else {
			*h = *tmpl;
			if (credit != h->h_credit)
				rds_ib_hdr_set_credit(h, credit);
		}
		rds_ib_hdr_seal(ic, i, &sge[0]);

		memset(wr, 0, sizeof(*wr));
		wr->wr_cqe = &slot->cqe;
		wr->sg_list = sge;
		wr->num_sge = 1;
		wr->opcode = IB_WR_SEND;
		/*
		 * A zero-copy message's last SEND too: its completion must
		 * not wait for later traffic to give the user's pages back.
		 */
		if (m->op || m->reg_mr || (m->zc && *frag == nr - 1) ||
		    ++ic->send_unsignaled >= rds_ib_signal_every(ic)) {
			wr->send_flags = IB_SEND_SIGNALED;
			ic->send_unsignaled = 0;
		}
		if (*frag == nr - 1)	/* the peer wakes on the last one */
			wr->send_flags |= IB_SEND_SOLICITED;
		if (m->op) {
			/*
			 * The ACK waits for a READ, asked to or not: on a lost
			 * response the device sends the READ again, and that
			 * must not find the key the ACK released (USE_ONCE at
			 * once, RDS_FREE_MR on it): the access error would
			 * take the connection down.  Atomics only if asked:
			 * the peer answers a repeated one from its record.
			 */
			if (*frag == 0 && (m->op->fence ||
					   (!m->op->write && !m->op->is_atomic)))
				wr->send_flags |= IB_SEND_FENCE;
			slot->op_last = *frag == nr - 1;
		}

		if (m->len) {
			err = rds_ib_xmit_map(ic, slot, m, off, wr);
			if (err) {
				slot->op_last = false;
				atomic_add(ready + 1, &ic->send_free);
				ret = err;
				break;
			}
		}
		slot->msg = rds_msg_get(m);
		if (prev)
			prev->next = wr;
		prev = wr;
		chained++;
		ic->send_head = (i + 1) % ic->send_nr;
		(*frag)++;
	}
	/* What was chained goes, whatever stopped the chain. */
	if (chained) {
		err = rds_ib_xmit_post(ic, start, chained, frag);
		if (err)	/* the connection drops: credits go with it */
			return err;
	}
	if (ret && ret != -EAGAIN)
		return ret;
	/* Credits left over by a grab ask for an ACK frame to carry them. */
	if (test_bit(RDS_IB_ACK_REQUESTED, &ic->flags))
		rds_ib_send_ack(ic);
	return ret;
}

/**
 * rds_ib_xmit() - post the fragments of a message
 * @conn: the connection, up
 * @m: the message
 * @frag: in: the first fragment to post; out: the first not posted
 *
 * Posts the message's REG_MR, RDMA WRs and SENDs, and an ACK frame owed,
 * with bottom halves off (see "Bottom halves" at the top of the file).
 *
 * Context: process context, interrupts on: the connection's work_mutex
 * (sendmsg or send_w).  Nothing in it sleeps.
 * Return: 0 when every fragment is posted, -EAGAIN when the ring is full
 * or the peer's credits ran out (a send completion or arriving credits
 * kick the connection), another negative errno on a posting failure.
 */
int rds_ib_xmit(struct rds_conn *conn, struct rds_msg *m, unsigned int *frag)
{
	int ret;

	local_bh_disable();
	ret = rds_ib_xmit_posts(conn->tp, m, frag);
	local_bh_enable();
	return ret;
}

static void rds_ib_ack_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rds_ib_conn *ic = cq->cq_context;

	clear_bit(RDS_IB_ACK_IN_FLIGHT, &ic->flags);
	/*
	 * IN_FLIGHT clear before rds_ib_send_ack() tests ACK_REQUESTED:
	 * pairs with the fully ordered test_and_set_bit(ACK_IN_FLIGHT) of
	 * a requester that set ACK_REQUESTED before it.  Either it sees the
	 * bit clear and sends, or we see its request; without the barrier
	 * both could miss, and the ACK frame it asked for never went.
	 */
	smp_mb__after_atomic();
	if (wc->status != IB_WC_SUCCESS) {
		rds_ib_conn_drop(ic, "ACK completion error");
		return;
	}
	WRITE_ONCE(ic->tx_done_jiffies, jiffies);
	rds_ib_send_ack(ic);	/* one more may have been asked for */
}

/**
 * rds_ib_send_ack() - send an ACK frame if one is owed
 * @ic: the connection
 *
 * At most one ACK frame is in flight; a request made meanwhile is served
 * when it completes.  Under flow control it needs a send credit like any
 * SEND, and returns the posted credits.  Callers set RDS_IB_ACK_REQUESTED
 * first.
 *
 * Context: the completion handlers of a live incarnation, or xmit.
 */
void rds_ib_send_ack(struct rds_ib_conn *ic)
{
	unsigned int i = ic->send_nr;	/* the header after the ring's */
	struct rds_ib_hdr *h = &ic->send_hdrs[i];
	struct ib_send_wr wr = {};
	struct ib_sge sge;
	u8 credit;

	while (test_bit(RDS_IB_ACK_REQUESTED, &ic->flags)) {
		if (test_and_set_bit(RDS_IB_ACK_IN_FLIGHT, &ic->flags))
			return;	/* its completion comes back here */
		if (!test_and_clear_bit(RDS_IB_ACK_REQUESTED, &ic->flags)) {
			clear_bit(RDS_IB_ACK_IN_FLIGHT, &ic->flags);
			continue;
		}
		if (!rds_ib_credit_grab(ic, &credit)) {
			/* Arriving credits call us again. */
			set_bit(RDS_IB_ACK_REQUESTED, &ic->flags);
			clear_bit(RDS_IB_ACK_IN_FLIGHT, &ic->flags);
			/* They may have come before the request was back. */
			smp_mb__after_atomic();
			if (rds_ib_credit_can_send(ic))
				continue;
			return;
		}

		memset(h, 0, sizeof(*h));
		h->h_ack = cpu_to_be64(atomic64_read(&ic->ack_next));
		h->h_credit = credit;
		rds_ib_hdr_csum(h);
		rds_ib_hdr_seal(ic, i, &sge);
		ic->ack_cqe.done = rds_ib_ack_done;
		wr.wr_cqe = &ic->ack_cqe;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IB_WR_SEND;
		wr.send_flags = IB_SEND_SIGNALED | IB_SEND_SOLICITED;
		if (ib_post_send(ic->qp, &wr, NULL)) {
			clear_bit(RDS_IB_ACK_IN_FLIGHT, &ic->flags);
			rds_ib_conn_drop(ic, "ACK post failed");
			return;
		}
		rds_ib_stat_inc(RDS_IB_STAT_TX_ACK_FRAMES);
		return;
	}
}
