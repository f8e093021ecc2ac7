// SPDX-License-Identifier: GPL-2.0
/*
 * Registration: RDS_GET_MR registers on the registration QP and waits
 * (rds_ib_mr_reg()); RDS_CMSG_RDMA_MAP maps the pages (rds_ib_mr_prepare())
 * and the transmit path chains the REG_MR in front of the message's
 * SENDs (rds_ib_mr_chain()); a registered MR's pages are synced around
 * a peer's use.  The rules: ib_mr.h.
 */
#include <linux/dma-mapping.h>
#include <linux/errno.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "ib.h"
#include "ib_mr.h"
#include "transport.h"

/*
 * Whether a MAP's REG_MR is chained on the connection's QP: -1 (auto)
 * chains unless the device re-runs local operations (rds_ib_mr_chains()).
 */
static int rds_ib_chain_reg_mr = -1;
module_param_named(chain_reg_mr, rds_ib_chain_reg_mr, int, 0644);
MODULE_PARM_DESC(chain_reg_mr, "Post a MAP's REG_MR in front of its SEND on the connection's QP: 1 always, 0 never (register on the registration QP in sendmsg), -1 unless the device is rxe (default)");

/* A REG_MR or LOCAL_INV whose poster waits for it completed. */
void rds_ib_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	complete(&rds_ib_reg_wc(wc)->done);
}

/* A new random key byte for @mr, never the one it has now. */
static void rds_ib_mr_new_key(struct ib_mr *mr)
{
	u8 key = get_random_u8();

	if (key == (u8)mr->rkey)
		key++;
	ib_update_fast_reg_key(mr, key);
}

/*
 * Whether the DMA mapping of @imr kept the buffer's offset in its first
 * page.  The MR addresses its bytes from the start of the first mapped
 * page, zero-based with the buffer's own offset (rds_ib_mr_map()), and
 * the peer addresses them by the cookie, which carries that offset.  An
 * IOMMU and a direct mapping keep it; so does swiotlb for a device with
 * a min_align_mask.  Without one, swiotlb (swiotlb=force, confidential
 * guests) bounces the first entry to the start of a 2 KiB slot: the MR
 * would then reach other bytes of the bounce page, another mapping's,
 * and miss the buffer's own.  Later entries start on a page, or
 * ib_map_mr_sg() takes fewer of them and the registration fails.
 * Devices without DMA (rxe) map to kernel addresses, which keep it.
 */
static bool rds_ib_mr_dma_kept_offset(const struct rds_ib_mr *imr,
				      const struct rds_mr *mr)
{
	return offset_in_page(sg_dma_address(imr->sgt.sgl)) == mr->offset;
}

/*
 * Map the core's pinned pages onto a pooled MR with a new key, without
 * posting anything.  Return: the registration with its device's memory
 * referenced and the MR on the live list, or an ERR_PTR (see
 * rds_ib_mr_reg()).  Caller holds a reference on @rdev.
 */
static struct rds_ib_mr *rds_ib_mr_map(struct rds_ib_device *rdev,
				       struct rds_mr *mr)
{
	struct rds_ib_mr_dev *mrd = &rdev->mrd;
	struct rds_ib_mr *imr;
	struct ib_mr *ibmr;
	int ret, n;

	if (!mrd->cq)
		return ERR_PTR(-EOPNOTSUPP);
	/* fmr_message_size, and a page of slack for an unaligned start. */
	if (mr->len > READ_ONCE(rds_ib_fmr_message_size) + PAGE_SIZE ||
	    mr->nr_pages > mrd->max_pages)
		return ERR_PTR(-EINVAL);
	imr = kzalloc(sizeof(*imr), GFP_KERNEL);
	if (!imr)
		return ERR_PTR(-ENOMEM);
	imr->rdev = rdev;
	imr->owner = mr;
	imr->virt_dma = ib_uses_virt_dma(rdev->ibdev);
	INIT_LIST_HEAD(&imr->item);
	init_completion(&imr->done);
	if (mr->nr_pages == 1) {
		/*
		 * The common registration, a buffer in one page: its one
		 * entry lives in @imr (zeroed), no table to allocate and free.
		 */
		sg_set_page(&imr->sg1, mr->pages[0], mr->len, mr->offset);
		sg_mark_end(&imr->sg1);
		imr->sgt.sgl = &imr->sg1;
		imr->sgt.nents = 1;
		imr->sgt.orig_nents = 1;
	} else {
		ret = sg_alloc_table_from_pages(&imr->sgt, mr->pages,
						mr->nr_pages, mr->offset,
						mr->len, GFP_KERNEL);
		if (ret)
			goto out_free;
	}
	imr->nents = ib_dma_map_sg(rdev->ibdev, imr->sgt.sgl,
				   imr->sgt.orig_nents, DMA_BIDIRECTIONAL);
	if (!imr->nents) {
		ret = -EBUSY;
		goto out_sgt;
	}
	if (!rds_ib_mr_dma_kept_offset(imr, mr)) {
		rds_ib_stat_inc(RDS_IB_STAT_MR_REG_BOUNCED);
		pr_info_ratelimited("rds_zc_ib: %s: refused an MR at offset %u: its DMA mapping moved it (bounce buffers)\n",
				    dev_name(&rdev->ibdev->dev), mr->offset);
		ret = -EOPNOTSUPP;
		goto out_unmap;
	}

	ibmr = rds_ib_pool_get(rdev);
	if (IS_ERR(ibmr)) {
		ret = PTR_ERR(ibmr);
		goto out_unmap;
	}
	n = ib_map_mr_sg(ibmr, imr->sgt.sgl, imr->nents, NULL, PAGE_SIZE);
	if (n != imr->nents) {
		ret = n < 0 ? n : -EINVAL;
		goto out_discard;
	}
	/* Zero-based at the first page, bounded to the bytes asked for. */
	ibmr->iova = mr->offset;
	ibmr->length = mr->len;
	rds_ib_mr_new_key(ibmr);

	spin_lock_bh(&mrd->lock);
	if (mrd->dead) {
		spin_unlock_bh(&mrd->lock);
		ret = -ENODEV;
		goto out_discard;
	}
	imr->mr = ibmr;
	list_add_tail(&imr->item, &mrd->live);
	spin_unlock_bh(&mrd->lock);
	kref_get(&rdev->mem);
	mr->rkey = ibmr->rkey;
	mr->tp = imr;
	return imr;

out_discard:
	rds_ib_pool_discard(mrd, ibmr);
out_unmap:
	rds_ib_mr_unmap(rdev, imr);
	goto out_free;
out_sgt:
	rds_ib_mr_sgt_free(imr);
out_free:
	kfree(imr);
	return ERR_PTR(ret);
}

/*
 * Undo rds_ib_mr_map() of a registration the core never got.  Caller
 * holds a reference on the device, so the PD outlives the MR.
 */
static void rds_ib_mr_drop(struct rds_ib_mr *imr)
{
	struct rds_ib_device *rdev = imr->rdev;

	rds_ib_mr_discard(imr);
	kfree(imr);
	kref_put(&rdev->mem, rds_ib_device_free);
}

/*
 * Describe the REG_MR of a mapped registration.  A peer may read, write
 * and, where the device has atomics, run them on it (the distribution's
 * MRs leave atomics out, so atomics aimed at them fail).  Inline: the
 * caller's stack may be zeroed already, and the compiler then drops one
 * of the two.
 */
static inline void rds_ib_mr_reg_wr(struct rds_ib_mr *imr, struct ib_reg_wr *wr)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr.opcode = IB_WR_REG_MR;
	wr->mr = imr->mr;
	wr->key = imr->mr->rkey;
	wr->access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
		     IB_ACCESS_REMOTE_WRITE;
	if (imr->mr->device->attrs.atomic_cap != IB_ATOMIC_NONE)
		wr->access |= IB_ACCESS_REMOTE_ATOMIC;
}

/*
 * Register on the registration QP and wait for the REG_MR: RDS_GET_MR,
 * and a MAP on a device that cannot chain.  Inline in both: one call
 * less per registration.  Return: as rds_ib_mr_reg().
 */
static __always_inline int rds_ib_mr_reg_wait(struct rds_ib_device *rdev,
					      struct rds_mr *mr)
{
	struct rds_ib_mr_dev *mrd = &rdev->mrd;
	struct rds_ib_mr *imr;
	struct ib_reg_wr wr;
	int ret;

	imr = rds_ib_mr_map(rdev, mr);
	if (IS_ERR(imr))
		return PTR_ERR(imr);
	rds_ib_mr_reg_wr(imr, &wr);
	wr.wr.wr_cqe = &imr->cqe;
	imr->cqe.done = rds_ib_reg_done;

	down_read(&mrd->qp_sem);
	if (!mrd->qp) {
		ret = -EIO;
	} else {
		rds_ib_reg_maybe_fail(mrd);
		ret = rds_ib_reg_post(mrd, &wr.wr);
		if (!ret) {
			wait_for_completion(&imr->done);
			ret = imr->status == IB_WC_SUCCESS ? 0 : -EIO;
		}
	}
	up_read(&mrd->qp_sem);
	if (ret) {
		/* Its state is unknown: deregister it, never reuse it. */
		mr->tp = NULL;
		rds_ib_mr_drop(imr);
		return ret;
	}
	imr->state = RDS_IB_MR_VALID;
	rds_ib_stat_inc(RDS_IB_STAT_MR_REG);
	return 0;
}

/**
 * rds_ib_mr_reg() - register the core's pinned pages for remote access
 * @net: namespace of the socket
 * @laddr: the address the socket is bound to: its device registers
 * @scope: its scope (addr.h)
 * @mr: the core's MR: pages, nr_pages, offset, len set
 *
 * Context: process context, may sleep.
 * Return: 0 with mr->rkey and mr->tp set; -EOPNOTSUPP if the device
 * cannot register, -ENODEV if it is gone, -ENOMEM if finding it ran out
 * of memory, -EINVAL for a region over
 * fmr_message_size + 4 KiB or fmr_message_size / 4 KiB + 1 pages,
 * -EAGAIN when the pool is exhausted, -EBUSY when the pages cannot be
 * DMA-mapped, -EIO if the HCA refused or the registration QP is being
 * recovered from an earlier failure.
 */
int rds_ib_mr_reg(struct net *net, const struct in6_addr *laddr, u32 scope,
		  struct rds_mr *mr)
{
	struct rds_ib_device *rdev = rds_ib_device_by_addr(net, laddr, scope);
	int ret;

	if (IS_ERR(rdev))
		return rds_ib_no_device(rdev, -ENODEV);
	ret = rds_ib_mr_reg_wait(rdev, mr);
	rds_ib_device_put(rdev);
	return ret;
}

/*
 * Whether a REG_MR may wait on a connection's QP behind SENDs.  rxe may
 * not: when it retransmits (a lost packet, a late ACK) it walks its send
 * queue again from the oldest WR not yet acknowledged and runs every
 * local operation it meets once more, although it ran it already.  A
 * REG_MR run twice finds its MR valid, fails, and breaks the connection
 * ("rxe_reg_fast_mr: ... not free"; seen with 2% packet loss within
 * seconds, with the distribution's module too).  The registration QP
 * carries no remote operation, so it never retransmits.
 */
static bool rds_ib_mr_chains(struct rds_ib_device *rdev)
{
	int chain = READ_ONCE(rds_ib_chain_reg_mr);

	if (chain >= 0)
		return chain;
	return rdev->ibdev->ops.driver_id != RDMA_DRIVER_RXE;
}

/**
 * rds_ib_mr_prepare() - map pages for a registration the message posts
 * @net: namespace of the socket
 * @laddr: the address the socket is bound to: its device registers
 * @scope: its scope (addr.h)
 * @mr: the core's MR: pages, nr_pages, offset, len set
 *
 * As rds_ib_mr_reg(), but the REG_MR is left to rds_ib_mr_chain(), which
 * the transmit path calls before the first SEND of the message carrying
 * the cookie: on one QP the HCA runs it first, and nothing waits for it.
 * On a device that cannot chain (rds_ib_mr_chains()) it is rds_ib_mr_reg().
 *
 * Context: process context, may sleep.
 * Return: as rds_ib_mr_reg().
 */
int rds_ib_mr_prepare(struct net *net, const struct in6_addr *laddr,
		      u32 scope, struct rds_mr *mr)
{
	struct rds_ib_device *rdev = rds_ib_device_by_addr(net, laddr, scope);
	struct rds_ib_mr *imr;
	int ret;

	if (IS_ERR(rdev))
		return rds_ib_no_device(rdev, -ENODEV);
	if (!rds_ib_mr_chains(rdev)) {
		ret = rds_ib_mr_reg_wait(rdev, mr);
		if (!ret)
			rds_ib_stat_inc(RDS_IB_STAT_MR_REG_UNCHAINED);
		rds_ib_device_put(rdev);
		return ret;
	}
	imr = rds_ib_mr_map(rdev, mr);
	rds_ib_device_put(rdev);
	if (IS_ERR(imr))
		return PTR_ERR(imr);
	imr->state = RDS_IB_MR_IDLE;
	return 0;
}

/**
 * rds_ib_mr_chain() - the REG_MR a message must post before its SENDs
 * @mr: the message's reg_mr
 * @rdev: the device of the connection's QP
 * @wr: filled in when the function returns true; the caller sets wr_cqe
 *
 * Once per registration: a registration already posted or killed
 * (rds_ib_mr_kill()), or one on another device (it cannot be posted
 * there; the peer's RDMA with the cookie then fails), needs nothing.
 * When it returns true the
 * registration counts as posted: the caller posts @wr and reports its
 * completion with rds_ib_mr_chain_done(), or calls rds_ib_mr_unchain()
 * if the post failed.
 *
 * Context: the connection's transmit path, which runs one at a time.
 * Return: true if @wr must be posted.
 */
bool rds_ib_mr_chain(struct rds_mr *mr, struct rds_ib_device *rdev,
		     struct ib_reg_wr *wr)
{
	struct rds_ib_mr *imr = mr->tp;

	if (!imr || imr->rdev != rdev || !imr->mr)
		return false;
	/* Before the post: its completion may run at once. */
	if (cmpxchg(&imr->state, RDS_IB_MR_IDLE, RDS_IB_MR_POSTED) !=
	    RDS_IB_MR_IDLE)
		return false;
	rds_ib_mr_reg_wr(imr, wr);
	rds_ib_stat_inc(RDS_IB_STAT_MR_REG_CHAINED);
	return true;
}

/**
 * rds_ib_mr_unchain() - the REG_MR from rds_ib_mr_chain() was not posted
 * @mr: the message's reg_mr
 */
void rds_ib_mr_unchain(struct rds_mr *mr)
{
	struct rds_ib_mr *imr = mr->tp;
	struct rds_ib_mr_dev *mrd = &imr->rdev->mrd;

	WRITE_ONCE(imr->state, RDS_IB_MR_IDLE);
	if (wq_has_sleeper(&mrd->kill_wait))
		wake_up(&mrd->kill_wait);
}

/**
 * rds_ib_mr_chain_done() - a chained REG_MR completed
 * @mr: the message's reg_mr, still referenced by the message
 * @status: its completion status
 *
 * A failed or flushed one leaves the MR's key in an unknown state: it is
 * not posted again (a REG_MR on a valid MR would fail and break the next
 * QP too), and its release deregisters it.
 *
 * Context: send completion (softirq).
 */
void rds_ib_mr_chain_done(struct rds_mr *mr, enum ib_wc_status status)
{
	struct rds_ib_mr *imr = mr->tp;
	struct rds_ib_mr_dev *mrd = &imr->rdev->mrd;

	WRITE_ONCE(imr->state, status == IB_WC_SUCCESS ? RDS_IB_MR_VALID :
							 RDS_IB_MR_DIRTY);
	if (status == IB_WC_SUCCESS)
		rds_ib_stat_inc(RDS_IB_STAT_MR_REG);
	/* rds_ib_mr_kill() may wait for this */
	if (wq_has_sleeper(&mrd->kill_wait))
		wake_up(&mrd->kill_wait);
}

/**
 * rds_ib_mr_sync() - hand an MR's pages to the device or to the CPU
 * @mr: a registered MR
 * @dir: DMA_TO_DEVICE before a peer uses the key, DMA_FROM_DEVICE after
 *
 * The pages stay mapped (DMA_BIDIRECTIONAL) for the MR's whole life, so
 * with bounce buffers a peer's WRITE is seen, and a peer's READ sees
 * what the owner wrote, only at these points.  Devices without DMA (rxe)
 * need nothing.  The device of a registration that removal took
 * (imr->mr cleared) may be freed already: it is not touched then.
 *
 * Context: any.
 * Return: 0, or -ENODEV when the device was removed (the key died with
 * it).
 */
int rds_ib_mr_sync(struct rds_mr *mr, enum dma_data_direction dir)
{
	struct rds_ib_mr *imr = mr->tp;
	struct rds_ib_mr_dev *mrd;
	struct device *dev;
	int ret = 0;

	if (!imr)
		return -ENODEV;
	if (imr->virt_dma)	/* rxe: nothing to sync, no device touched */
		return READ_ONCE(imr->mr) ? 0 : -ENODEV;
	mrd = &imr->rdev->mrd;
	spin_lock_bh(&mrd->lock);	/* removal clears mr and unmaps under it */
	if (!imr->mr) {
		ret = -ENODEV;
	} else if (imr->nents) {
		dev = imr->rdev->ibdev->dma_device;
		if (dir == DMA_TO_DEVICE)
			dma_sync_sg_for_device(dev, imr->sgt.sgl,
					       imr->sgt.orig_nents,
					       DMA_BIDIRECTIONAL);
		else
			dma_sync_sg_for_cpu(dev, imr->sgt.sgl,
					    imr->sgt.orig_nents,
					    DMA_BIDIRECTIONAL);
	}
	spin_unlock_bh(&mrd->lock);
	return ret;
}
