// SPDX-License-Identifier: GPL-2.0
/*
 * Receiving: the receive ring, frame classification, reassembly of
 * fragments into messages, and ACK bookkeeping (rds_zc-wire.rst sections
 * 3.2, 4.6, 4.7 and 5).
 *
 * Each receive WR has two SGEs: the slot's 48-byte header, then its 4 KiB
 * page.  A fragment's page is handed over to the message being rebuilt
 * (no copy) and the slot gets a fresh page before it is posted again.  A
 * frame the rules call fatal drops the connection; the peer then resends
 * everything we did not acknowledge.
 */
#include <linux/errno.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "ib.h"
#include "message.h"
#include "transport.h"

static u64 rds_ib_recv_hdr_dma(struct rds_ib_conn *ic, unsigned int i)
{
	return ic->recv_hdrs_dma + i * sizeof(struct rds_ib_hdr);
}

/* Give a slot a new page, mapped. */
static int rds_ib_recv_slot_fill(struct rds_ib_conn *ic,
				 struct rds_ib_recv_slot *slot, gfp_t gfp)
{
	struct ib_device *ibdev = ic->rdev->ibdev;
	struct page *page = alloc_page(gfp | __GFP_NOWARN);

	if (!page)
		return -ENOMEM;
	slot->dma = ib_dma_map_page(ibdev, page, 0, RDS_IB_FRAG_SIZE,
				    DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(ibdev, slot->dma)) {
		__free_page(page);
		slot->dma = 0;
		return -ENOMEM;
	}
	slot->page = page;
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

static int rds_ib_recv_post(struct rds_ib_conn *ic,
			    struct rds_ib_recv_slot *slot)
{
	unsigned int i = slot - ic->recv_slots;
	struct ib_recv_wr wr = {};
	struct ib_sge sge[2];

	ib_dma_sync_single_for_device(ic->rdev->ibdev,
				      rds_ib_recv_hdr_dma(ic, i),
				      sizeof(struct rds_ib_hdr), DMA_FROM_DEVICE);
	sge[0].addr = rds_ib_recv_hdr_dma(ic, i);
	sge[0].length = sizeof(struct rds_ib_hdr);
	sge[0].lkey = ic->rdev->pd->local_dma_lkey;
	sge[1].addr = slot->dma;
	sge[1].length = RDS_IB_FRAG_SIZE;
	sge[1].lkey = ic->rdev->pd->local_dma_lkey;
	wr.wr_cqe = &slot->cqe;
	wr.sg_list = sge;
	wr.num_sge = 2;
	return ib_post_recv(ic->qp, &wr, NULL);
}

/* A complete message: hand it to the core, acknowledge it if asked. */
static int rds_ib_recv_complete(struct rds_ib_conn *ic)
{
	const struct rds_ib_hdr *h = &ic->rx_hdr;
	struct rds_msg *m = ic->rx_msg;
	u64 seq = be64_to_cpu(h->h_sequence);
	int ret;

	ic->rx_msg = NULL;
	if (h->h_flags == RDS_FLAG_CONG_BITMAP) {
		rds_zc_conn_cong_recv(ic->conn, m);
		return 0;
	}
	m->seq = seq;
	m->flags = h->h_flags;
	m->sport = h->h_sport;
	m->dport = h->h_dport;
	memcpy(m->exthdr, h->h_exthdr, sizeof(m->exthdr));
	ret = rds_zc_conn_recv(ic->conn, m);
	if (ret)
		return ret;	/* not acknowledged: the peer sends it again */
	atomic64_set(&ic->ack_next, seq);
	if (h->h_flags & RDS_FLAG_ACK_REQUIRED) {
		set_bit(RDS_IB_ACK_REQUESTED, &ic->flags);
		rds_ib_send_ack(ic);
	}
	return 0;
}

/*
 * One received frame.  Return 0 to post the slot again, a negative errno
 * to drop the connection.
 */
static int rds_ib_recv_frame(struct rds_ib_conn *ic,
			     struct rds_ib_recv_slot *slot, u32 byte_len)
{
	unsigned int i = slot - ic->recv_slots;
	struct rds_ib_hdr *h = &ic->recv_hdrs[i];
	u32 payload, len, need;
	int ret;

	if (byte_len < sizeof(*h))
		return -EPROTO;
	ib_dma_sync_single_for_cpu(ic->rdev->ibdev, rds_ib_recv_hdr_dma(ic, i),
				   sizeof(*h), DMA_FROM_DEVICE);
	if (!rds_ib_hdr_csum_ok(h))
		return -EBADMSG;
	payload = byte_len - sizeof(*h);
	rds_ib_stat_inc(RDS_IB_STAT_RX_FRAMES);

	if (h->h_credit)
		rds_ib_credit_add(ic, h->h_credit);
	if (h->h_ack)
		rds_zc_conn_acked(ic->conn, be64_to_cpu(h->h_ack));
	if (rds_ib_hdr_is_ack(h, payload)) {
		rds_ib_stat_inc(RDS_IB_STAT_RX_ACK_FRAMES);
		return 0;
	}

	len = be32_to_cpu(h->h_len);
	if (!ic->rx_msg) {
		if (len > RDS_MAX_MSG_SIZE)
			return -EMSGSIZE;
		ic->rx_msg = rds_msg_alloc_empty(len, GFP_ATOMIC);
		if (!ic->rx_msg)
			return -ENOMEM;
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
		ib_dma_sync_single_for_cpu(ic->rdev->ibdev, slot->dma, need,
					   DMA_FROM_DEVICE);
		ic->rx_msg->pages[ic->rx_msg->nr_pages++] =
			rds_ib_recv_slot_take(ic, slot);
		ret = rds_ib_recv_slot_fill(ic, slot, GFP_ATOMIC);
		if (ret)
			return ret;
		ic->rx_left -= need;
	}
	if (ic->rx_left)
		return 0;
	return rds_ib_recv_complete(ic);
}

static void rds_ib_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rds_ib_conn *ic = cq->cq_context;
	struct rds_ib_recv_slot *slot =
		container_of(wc->wr_cqe, struct rds_ib_recv_slot, cqe);
	int ret;

	/* After a drop nothing more is taken from this incarnation. */
	if ((rds_conn_state(ic->conn) != RDS_CONN_UP &&
	     rds_conn_state(ic->conn) != RDS_CONN_CONNECTING) ||
	    test_bit(RDS_IB_RETIRING, &ic->flags))
		return;
	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_debug("rds_zc_ib: receive from %pI4 failed: %s\n",
				 &ic->conn->faddr,
				 ib_wc_status_msg(wc->status));
		rds_ib_conn_drop(ic, "receive completion error");
		return;
	}
	if (wc->opcode != IB_WC_RECV) {
		rds_ib_conn_drop(ic, "unexpected receive opcode");
		return;
	}
	ret = rds_ib_recv_frame(ic, slot, wc->byte_len);
	if (!ret)
		ret = rds_ib_recv_post(ic, slot);
	if (ret) {
		rds_ib_conn_drop(ic, "bad frame");
		return;
	}
	rds_ib_credit_posted(ic);	/* a credit to return to the peer */
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
		ic->recv_slots[i].cqe.done = rds_ib_recv_done;
		ret = rds_ib_recv_slot_fill(ic, &ic->recv_slots[i], GFP_KERNEL);
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
	if (ic->recv_hdrs) {
		ib_dma_unmap_single(ic->rdev->ibdev, ic->recv_hdrs_dma,
				    ic->recv_nr * sizeof(struct rds_ib_hdr),
				    DMA_FROM_DEVICE);
		kfree(ic->recv_hdrs);
		ic->recv_hdrs = NULL;
	}
}
