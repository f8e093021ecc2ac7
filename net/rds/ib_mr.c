// SPDX-License-Identifier: GPL-2.0
/*
 * Memory registration for RDMA: a fast-registration (FRWR) MR pool per
 * device.  REG_MR and LOCAL_INV work requests go on the device's
 * registration QP (ib_reg_qp.c) or, chained, on a connection's QP.
 *
 * Normal operation.  RDS_GET_MR posts its REG_MR on the registration
 * QP and waits for its own completion.  RDS_CMSG_RDMA_MAP only maps the
 * pages and picks the key (rds_ib_mr_prepare); the transmit path chains
 * the REG_MR in front of the first SEND of the message that carries the
 * cookie, on the connection's QP (rds_ib_mr_chain), so the HCA has run
 * it before the peer can learn the cookie, and nothing waits for it.
 * rxe cannot be trusted with that (rds_ib_mr_chains()): there a MAP
 * registers as RDS_GET_MR does.
 * A release posts its LOCAL_INV and returns, and the
 * completion finishes it (rds_ib_inv_done): the MR goes back to the pool
 * and only then does the core unpin the pages (rds_zc_mr_invalidated).
 * Nothing serialises a device: any number of sockets register and
 * release at once, bounded only by the QP's send queue (sq_slots).
 *
 * A registration covers exactly the bytes asked for: the MR's IOVA is
 * the buffer's offset in its first page, its length the buffer's length,
 * so a peer addresses byte x as offset + x (wire section 8.1) and the HCA
 * refuses anything outside the range.
 *
 * Keys.  Free MRs are reused first in, first out, and only once
 * RDS_IB_MR_REUSE_GAP others wait behind them (the pool grows up to
 * fmr_pool_size until then), and every registration gives its MR a new
 * random key byte.  A peer that kept an old cookie therefore reaches
 * nothing in most cases, and at worst hits a new registration of the same
 * MR with probability 1/255, never a predictable one.
 *
 * Transport recovery.  A failed registration returns -EIO; an MR whose
 * REG_MR or LOCAL_INV did not succeed may still carry a live key and is
 * deregistered, never reused.  The registration QP recovers by itself
 * (ib_reg_qp.c).
 *
 * Lifetime: a registration (struct rds_ib_mr) holds its device's memory
 * (rdev->mem), not the device.  Device removal deregisters every live
 * registration first and clears its mr; a later release of such a one
 * only frees it.  Whoever clears imr->mr under the lock owns the MR and
 * the DMA mapping from then on.
 *
 * Locking (see struct rds_ib_mr_dev):
 *  - mrd->lock (bottom halves off) protects the pool, the live list, the
 *    counts, mrd->dead and every imr->mr;
 *  - mrd->qp_sem and mrd->sq_slots guard the registration QP (see
 *    ib_reg_qp.c).
 */
#include <linux/dma-mapping.h>
#include <linux/errno.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "ib.h"
#include "transport.h"

unsigned int rds_ib_fmr_pool_size = 2048;
module_param_named(fmr_pool_size, rds_ib_fmr_pool_size, uint, 0444);
MODULE_PARM_DESC(fmr_pool_size, "Memory regions mapped for RDMA at once, per device (default 2048)");

unsigned int rds_ib_fmr_message_size = 1024 * 1024;
module_param_named(fmr_message_size, rds_ib_fmr_message_size, uint, 0444);
MODULE_PARM_DESC(fmr_message_size, "Largest memory region mapped for RDMA, in bytes (default and maximum 1 MiB: only lowers the core's limit)");

/*
 * Whether a MAP's REG_MR is chained on the connection's QP: -1 (auto)
 * chains unless the device re-runs local operations (rds_ib_mr_chains()).
 */
static int rds_ib_chain_reg_mr = -1;
module_param_named(chain_reg_mr, rds_ib_chain_reg_mr, int, 0644);
MODULE_PARM_DESC(chain_reg_mr, "Post a MAP's REG_MR in front of its SEND on the connection's QP: 1 always, 0 never (register on the registration QP in sendmsg), -1 unless the device is rxe (default)");

/* Free MRs that wait behind one before it is registered again. */
#define RDS_IB_MR_REUSE_GAP	32

/* Releases and the registration QP's recovery finish here. */
struct workqueue_struct *rds_ib_mr_wq;

/*
 * Where a registration's REG_MR is.  Set by the one who posts it, before
 * the message that carries its cookie can be freed (which alone can start
 * the release), so a release reads a settled state.
 */
enum rds_ib_mr_state {
	RDS_IB_MR_IDLE,		/* mapped, key chosen, nothing posted */
	RDS_IB_MR_POSTED,	/* REG_MR posted on a connection's QP */
	RDS_IB_MR_VALID,	/* REG_MR completed: the key works */
	RDS_IB_MR_DIRTY,	/* REG_MR failed or flushed: unknown */
};

/* One registration: a pooled MR mapped onto the core's pinned pages. */
struct rds_ib_mr {
	struct list_head item;		/* on mrd->live, under mrd->lock */
	struct rds_ib_device *rdev;	/* its mem referenced */
	struct ib_mr	*mr;		/* under mrd->lock; see the top */
	struct rds_mr	*owner;		/* the core's MR */
	struct sg_table	sgt;
	int		nents;		/* DMA-mapped entries */
	enum rds_ib_mr_state state;
	struct ib_cqe	cqe;		/* the REG_MR or LOCAL_INV posted */
	enum ib_wc_status status;	/* its outcome */
	struct completion done;		/* a registration waits for it */
	struct work_struct work;	/* a release ends here */
};

static void rds_ib_mr_unmap(struct rds_ib_device *rdev, struct rds_ib_mr *imr)
{
	if (imr->nents)
		ib_dma_unmap_sg(rdev->ibdev, imr->sgt.sgl, imr->sgt.orig_nents,
				DMA_BIDIRECTIONAL);
	imr->nents = 0;
	sg_free_table(&imr->sgt);
}

/* A registration work request completed: record it, free its entry. */
static struct rds_ib_mr *rds_ib_reg_wc(struct ib_wc *wc)
{
	struct rds_ib_mr *imr = container_of(wc->wr_cqe, struct rds_ib_mr, cqe);
	struct rds_ib_mr_dev *mrd = &imr->rdev->mrd;

	imr->status = wc->status;
	up(&mrd->sq_slots);
	if (wc->status != IB_WC_SUCCESS)
		rds_ib_reg_failed(mrd, wc->status);
	return imr;
}

static void rds_ib_reg_done(struct ib_cq *cq, struct ib_wc *wc)
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
 * The MR for a new registration: the oldest free one once enough others
 * wait behind it, else a new one while the pool is below its size, else
 * the first a release under way returns.
 */
static struct ib_mr *rds_ib_pool_get(struct rds_ib_device *rdev)
{
	struct rds_ib_mr_dev *mrd = &rdev->mrd;
	struct ib_mr *mr = NULL;
	bool grow = false, wait;

again:
	spin_lock_bh(&mrd->lock);
	if (mrd->dead) {
		spin_unlock_bh(&mrd->lock);
		return ERR_PTR(-ENODEV);
	}
	if (mrd->nr_free > RDS_IB_MR_REUSE_GAP ||
	    (mrd->nr_free && mrd->nr_mrs >= mrd->pool_size)) {
		mr = list_first_entry(&mrd->pool, struct ib_mr, qp_entry);
		list_del(&mr->qp_entry);
		mrd->nr_free--;
	} else if (mrd->nr_mrs < mrd->pool_size) {
		mrd->nr_mrs++;		/* reserved for the one made below */
		grow = true;
	}
	wait = !mr && !grow && mrd->nr_releasing;
	spin_unlock_bh(&mrd->lock);

	if (mr) {
		rds_ib_stat_inc(RDS_IB_STAT_MR_POOL_REUSE);
		return mr;
	}
	if (wait) {
		/* A release under way gives an MR back within microseconds. */
		rds_ib_stat_inc(RDS_IB_STAT_MR_POOL_WAIT);
		wait_event(mrd->pool_wait, READ_ONCE(mrd->nr_free) ||
			   !READ_ONCE(mrd->nr_releasing));
		goto again;
	}
	if (!grow) {
		rds_ib_stat_inc(RDS_IB_STAT_MR_POOL_EXHAUSTED);
		return ERR_PTR(-EAGAIN);
	}
	mr = ib_alloc_mr(rdev->pd, IB_MR_TYPE_MEM_REG, mrd->max_pages);
	if (IS_ERR(mr)) {
		spin_lock_bh(&mrd->lock);
		mrd->nr_mrs--;
		spin_unlock_bh(&mrd->lock);
		return ERR_PTR(PTR_ERR(mr) == -ENOMEM ? -EAGAIN : PTR_ERR(mr));
	}
	rds_ib_stat_inc(RDS_IB_STAT_MR_POOL_ALLOC);
	return mr;
}

/* An MR that may carry a live key: deregister it.  May sleep. */
static void rds_ib_pool_discard(struct rds_ib_mr_dev *mrd, struct ib_mr *mr)
{
	spin_lock_bh(&mrd->lock);
	mrd->nr_mrs--;
	spin_unlock_bh(&mrd->lock);
	ib_dereg_mr(mr);
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
	INIT_LIST_HEAD(&imr->item);
	init_completion(&imr->done);
	ret = sg_alloc_table_from_pages(&imr->sgt, mr->pages, mr->nr_pages,
					mr->offset, mr->len, GFP_KERNEL);
	if (ret)
		goto out_free;
	imr->nents = ib_dma_map_sg(rdev->ibdev, imr->sgt.sgl,
				   imr->sgt.orig_nents, DMA_BIDIRECTIONAL);
	if (!imr->nents) {
		ret = -EBUSY;
		goto out_sgt;
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
	sg_free_table(&imr->sgt);
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
	struct rds_ib_mr_dev *mrd = &rdev->mrd;
	struct ib_mr *ibmr;

	spin_lock_bh(&mrd->lock);
	ibmr = imr->mr;
	imr->mr = NULL;
	list_del_init(&imr->item);
	spin_unlock_bh(&mrd->lock);
	if (ibmr) {
		rds_ib_pool_discard(mrd, ibmr);
		rds_ib_mr_unmap(rdev, imr);
	}
	kfree(imr);
	kref_put(&rdev->mem, rds_ib_device_free);
}

/*
 * Describe the REG_MR of a mapped registration.  A peer may read, write
 * and, where the device has atomics, run them on it (the distribution's
 * MRs leave atomics out, so atomics aimed at them fail).
 */
static void rds_ib_mr_reg_wr(struct rds_ib_mr *imr, struct ib_reg_wr *wr)
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
 * and a MAP on a device that cannot chain.  Return: as rds_ib_mr_reg().
 */
static int rds_ib_mr_reg_wait(struct rds_ib_device *rdev, struct rds_mr *mr)
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
 * Once per registration: a registration already posted, or one on
 * another device (it cannot be posted there; the peer's RDMA with the
 * cookie then fails), needs nothing.  When it returns true the
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

	if (!imr || imr->state != RDS_IB_MR_IDLE || imr->rdev != rdev ||
	    !imr->mr)
		return false;
	rds_ib_mr_reg_wr(imr, wr);
	/* Before the post: its completion may run at once. */
	imr->state = RDS_IB_MR_POSTED;
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

	imr->state = RDS_IB_MR_IDLE;
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

	imr->state = status == IB_WC_SUCCESS ? RDS_IB_MR_VALID :
					       RDS_IB_MR_DIRTY;
	if (status == IB_WC_SUCCESS)
		rds_ib_stat_inc(RDS_IB_STAT_MR_REG);
}

/*
 * The end of a release, whose LOCAL_INV was @posted or not: return the
 * MR to the pool if @inv_ok (its key is surely dead), else deregister
 * it; then unmap, and let the core unpin.
 * Context: process context, may sleep; any context but hard interrupts
 * with @inv_ok: the device's memory is not freed here then, because
 * removal drains the registration QP, whose completion handler runs
 * this, before it drops the device's own reference.
 */
static void rds_ib_mr_finish(struct rds_ib_mr *imr, bool posted, bool inv_ok)
{
	struct rds_ib_device *rdev = imr->rdev;
	struct rds_ib_mr_dev *mrd = &rdev->mrd;
	struct rds_mr *owner = imr->owner;
	struct ib_mr *ibmr;

	spin_lock_bh(&mrd->lock);
	ibmr = imr->mr;
	imr->mr = NULL;
	list_del_init(&imr->item);
	if (ibmr && inv_ok) {
		list_add_tail(&ibmr->qp_entry, &mrd->pool);
		mrd->nr_free++;
	}
	if (posted)
		mrd->nr_releasing--;
	spin_unlock_bh(&mrd->lock);

	if (ibmr) {
		if (!inv_ok)
			rds_ib_pool_discard(mrd, ibmr);
		rds_ib_mr_unmap(rdev, imr);
	}
	if (posted)
		wake_up(&mrd->pool_wait);
	kfree(imr);
	owner->tp = NULL;
	rds_zc_mr_invalidated(owner);
	kref_put(&rdev->mem, rds_ib_device_free);
}

static void rds_ib_inv_work(struct work_struct *work)
{
	struct rds_ib_mr *imr = container_of(work, struct rds_ib_mr, work);

	rds_ib_stat_inc(RDS_IB_STAT_MR_INVALIDATE);	/* one posted ended */
	rds_ib_mr_finish(imr, true, imr->status == IB_WC_SUCCESS);
}

/*
 * A LOCAL_INV completed.  A dead key returns its MR to the pool without
 * sleeping, so the release ends here, with no worker on the way of the
 * woken reader; a failed one deregisters the MR, which sleeps.
 */
static void rds_ib_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rds_ib_mr *imr = rds_ib_reg_wc(wc);

	if (imr->status != IB_WC_SUCCESS) {
		queue_work(rds_ib_mr_wq, &imr->work);
		return;
	}
	rds_ib_stat_inc(RDS_IB_STAT_MR_INVALIDATE);	/* one posted ended */
	rds_ib_mr_finish(imr, true, true);
}

/*
 * The LOCAL_INV of a release, whose completion (rds_ib_inv_done()) ends
 * it.  Caller holds mrd->lock and has counted it in nr_releasing.
 */
static void rds_ib_inv_wr(struct rds_ib_mr *imr, struct ib_send_wr *wr)
{
	INIT_WORK(&imr->work, rds_ib_inv_work);
	imr->cqe.done = rds_ib_inv_done;
	wr->opcode = IB_WR_LOCAL_INV;
	wr->ex.invalidate_rkey = imr->mr->rkey;
	wr->wr_cqe = &imr->cqe;
}

/**
 * rds_ib_mr_sync() - hand an MR's pages to the device or to the CPU
 * @mr: a registered MR
 * @dir: DMA_TO_DEVICE before a peer uses the key, DMA_FROM_DEVICE after
 *
 * The pages stay mapped (DMA_BIDIRECTIONAL) for the MR's whole life, so
 * with bounce buffers a peer's WRITE is seen, and a peer's READ sees
 * what the owner wrote, only at these points.  Devices without DMA (rxe)
 * need nothing.  A device being removed has unmapped the pages already.
 *
 * Context: any.
 */
void rds_ib_mr_sync(struct rds_mr *mr, enum dma_data_direction dir)
{
	struct rds_ib_mr *imr = mr->tp;
	struct rds_ib_mr_dev *mrd;
	struct ib_device *dev;

	if (!imr)
		return;
	dev = imr->rdev->ibdev;
	mrd = &imr->rdev->mrd;
	if (ib_uses_virt_dma(dev))
		return;
	spin_lock_bh(&mrd->lock);	/* against the removal's unmapping */
	if (imr->nents && dir == DMA_TO_DEVICE)
		dma_sync_sg_for_device(dev->dma_device, imr->sgt.sgl,
				       imr->sgt.orig_nents, DMA_BIDIRECTIONAL);
	else if (imr->nents)
		dma_sync_sg_for_cpu(dev->dma_device, imr->sgt.sgl,
				    imr->sgt.orig_nents, DMA_BIDIRECTIONAL);
	spin_unlock_bh(&mrd->lock);
}

/**
 * rds_ib_mr_dereg() - start invalidating a registration
 * @mr: the core's MR, registered by rds_ib_mr_reg()
 *
 * Posts the LOCAL_INV and returns; its completion releases the
 * registration and calls rds_zc_mr_invalidated().  When nothing can be
 * posted (the device is going away, or the post failed) the MR is
 * deregistered here instead.
 *
 * Context: process context, may sleep.
 */
void rds_ib_mr_dereg(struct rds_mr *mr)
{
	struct rds_ib_mr *imr = mr->tp;
	struct rds_ib_device *rdev = imr->rdev;
	struct rds_ib_mr_dev *mrd = &rdev->mrd;
	struct ib_send_wr wr = {};
	bool post;

	/*
	 * The MR's reference on the device's memory goes with it, in
	 * rds_ib_mr_finish() here or in the LOCAL_INV's completion; on a
	 * removed device that can be the last one.  Ours keeps qp_sem.
	 */
	kref_get(&rdev->mem);
	/* Device removal waits for qp_sem: the MR and the PD stay. */
	down_read(&mrd->qp_sem);
	spin_lock_bh(&mrd->lock);
	if (imr->state == RDS_IB_MR_IDLE && imr->mr && !mrd->dead) {
		/* Never posted: its key never reached the HCA. */
		spin_unlock_bh(&mrd->lock);
		rds_ib_mr_finish(imr, false, true);
		goto out;
	}
	/*
	 * A REG_MR that failed or was flushed may or may not have run: a
	 * LOCAL_INV naming its key could fail and take the registration QP
	 * down with it.  Deregistering kills whatever key the MR has.
	 */
	post = imr->mr && mrd->qp && !mrd->dead &&
	       imr->state != RDS_IB_MR_DIRTY;
	if (post) {
		mrd->nr_releasing++;
		rds_ib_inv_wr(imr, &wr);
	}
	spin_unlock_bh(&mrd->lock);
	if (post && !rds_ib_reg_post(mrd, &wr)) {
		rds_ib_stat_inc(RDS_IB_STAT_MR_INV_POSTED);
		goto out;
	}
	if (post) {
		spin_lock_bh(&mrd->lock);
		mrd->nr_releasing--;
		spin_unlock_bh(&mrd->lock);
	}
	rds_ib_mr_finish(imr, false, false);
out:
	up_read(&mrd->qp_sem);
	kref_put(&rdev->mem, rds_ib_device_free);
}

/**
 * rds_ib_mr_dereg_nowait() - start invalidating without sleeping
 * @mr: the core's MR, registered by rds_ib_mr_reg() or rds_ib_mr_prepare()
 *
 * As rds_ib_mr_dereg() when nothing stands in the way: a registration
 * that was posted and did not fail, a registration QP that works and has
 * a free send queue entry.  The post is made under mrd->lock, which
 * recovery takes to mark the QP as being reset, and removal to mark the
 * device dead.
 *
 * Context: process or softirq context, interrupts on.
 * Return: true if the LOCAL_INV is posted (its completion ends the
 * release); false if nothing was done: call rds_ib_mr_dereg().
 */
bool rds_ib_mr_dereg_nowait(struct rds_mr *mr)
{
	struct rds_ib_mr *imr = mr->tp;
	struct rds_ib_mr_dev *mrd = &imr->rdev->mrd;
	struct ib_send_wr wr = { .send_flags = IB_SEND_SIGNALED };
	bool posted = false;

	spin_lock_bh(&mrd->lock);
	if (imr->state == RDS_IB_MR_IDLE || imr->state == RDS_IB_MR_DIRTY ||
	    !imr->mr || mrd->dead || !mrd->qp || mrd->qp_resetting ||
	    down_trylock(&mrd->sq_slots))
		goto out;
	mrd->nr_releasing++;	/* the completion waits for the lock */
	rds_ib_inv_wr(imr, &wr);
	if (ib_post_send(mrd->qp, &wr, NULL)) {
		mrd->nr_releasing--;
		up(&mrd->sq_slots);
		goto out;
	}
	posted = true;
	rds_ib_stat_inc(RDS_IB_STAT_MR_INV_POSTED);
	rds_ib_stat_inc(RDS_IB_STAT_MR_INV_NOWAIT);
out:
	spin_unlock_bh(&mrd->lock);
	return posted;
}

/**
 * rds_ib_mr_dev_init() - the registration QP and pool of a new device
 * @rdev: the device, its PD allocated
 *
 * A device that cannot have them still carries datagrams: registration
 * then fails with EOPNOTSUPP.
 */
void rds_ib_mr_dev_init(struct rds_ib_device *rdev)
{
	struct rds_ib_mr_dev *mrd = &rdev->mrd;
	struct ib_device *ibdev = rdev->ibdev;
	int ret;

	spin_lock_init(&mrd->lock);
	INIT_LIST_HEAD(&mrd->pool);
	INIT_LIST_HEAD(&mrd->live);
	init_waitqueue_head(&mrd->pool_wait);
	mrd->pool_size = READ_ONCE(rds_ib_fmr_pool_size);
	if (ibdev->attrs.max_mr)
		mrd->pool_size = min_t(u32, mrd->pool_size,
				       ibdev->attrs.max_mr / 2);
	mrd->max_pages = min_t(u32, DIV_ROUND_UP(rds_ib_fmr_message_size,
						 PAGE_SIZE) + 1,
			       ibdev->attrs.max_fast_reg_page_list_len);

	ret = rds_ib_reg_qp_create(rdev);
	if (!ret)
		return;
	pr_info("rds_zc_ib: %s: no memory registration for RDMA (%d)\n",
		dev_name(&ibdev->dev), ret);
	rds_ib_mr_dev_exit(rdev);
}

/**
 * rds_ib_mr_dev_exit() - deregister everything of a device going away
 * @rdev: the device, unlisted, without users
 *
 * Registrations still held by sockets become dead: their keys are gone
 * with the MRs, and their release later only frees them.
 */
void rds_ib_mr_dev_exit(struct rds_ib_device *rdev)
{
	struct rds_ib_mr_dev *mrd = &rdev->mrd;
	struct rds_ib_mr *imr, *tmp;
	struct ib_mr *mr, *mtmp;
	LIST_HEAD(dead);

	spin_lock_bh(&mrd->lock);
	mrd->dead = true;
	spin_unlock_bh(&mrd->lock);

	/*
	 * Every work request ends, and every release it started; releases
	 * from now on find the device dead and deregister inline, under
	 * qp_sem, which the rest of the teardown holds.
	 */
	rds_ib_reg_qp_stop(mrd);
	flush_workqueue(rds_ib_mr_wq);

	down_write(&mrd->qp_sem);
	spin_lock_bh(&mrd->lock);
	list_for_each_entry_safe(imr, tmp, &mrd->live, item) {
		list_del_init(&imr->item);
		list_add_tail(&imr->mr->qp_entry, &dead);
		imr->mr = NULL;
		rds_ib_mr_unmap(rdev, imr);
	}
	list_splice_init(&mrd->pool, &dead);
	mrd->nr_free = 0;
	mrd->nr_mrs = 0;
	spin_unlock_bh(&mrd->lock);
	list_for_each_entry_safe(mr, mtmp, &dead, qp_entry) {
		list_del(&mr->qp_entry);
		ib_dereg_mr(mr);
	}

	rds_ib_reg_qp_destroy(mrd);
	up_write(&mrd->qp_sem);
}

/**
 * rds_ib_mr_init() - the workqueue that finishes releases
 *
 * Return: 0 or -ENOMEM.
 */
int rds_ib_mr_init(void)
{
	rds_ib_mr_wq = alloc_workqueue("rds_zc_ib_mr", WQ_UNBOUND, 0);
	return rds_ib_mr_wq ? 0 : -ENOMEM;
}

/**
 * rds_ib_mr_exit() - after every device is gone
 */
void rds_ib_mr_exit(void)
{
	destroy_workqueue(rds_ib_mr_wq);
}
