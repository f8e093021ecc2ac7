// SPDX-License-Identifier: GPL-2.0
/*
 * Invalidation and release of a registration: RDS_FREE_MR, and the end
 * of a MAP's message, post its LOCAL_INV on the registration QP
 * (rds_ib_mr_dereg(), rds_ib_mr_dereg_nowait()), and the completion
 * returns the MR to the pool and lets the core unpin the pages.  A key
 * a message still holds is killed earlier by rds_ib_mr_kill().  The
 * rules: ib_mr.h.
 */
#include <linux/errno.h>
#include <linux/semaphore.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "ib.h"
#include "ib_mr.h"
#include "transport.h"

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
	/*
	 * rds_ib_pool_get() may wait for nr_free or !nr_releasing, which it
	 * reads without mrd->lock: wq_has_sleeper()'s full barrier orders
	 * the stores above before the read of the queue (an unlock does not
	 * order earlier stores before a later load), and a waiter queues
	 * itself before it reads them; no call when nobody waits, the usual
	 * case.
	 */
	if (posted && wq_has_sleeper(&mrd->pool_wait))
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
	if ((imr->state == RDS_IB_MR_IDLE || imr->state == RDS_IB_MR_KILLED) &&
	    imr->mr && !mrd->dead) {
		/* Never posted, or killed: no live key on the HCA. */
		spin_unlock_bh(&mrd->lock);
		rds_ib_mr_finish(imr, false, true);
		goto out;
	}
	/*
	 * A REG_MR that failed or was flushed may or may not have run: a
	 * LOCAL_INV naming its key could fail and take the registration QP
	 * down with it.  Deregistering kills whatever key the MR has.  A
	 * killed one left without its MR (deregistered) is only freed.
	 */
	post = imr->mr && mrd->qp && !mrd->dead &&
	       imr->state != RDS_IB_MR_DIRTY && imr->state != RDS_IB_MR_KILLED;
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
	    imr->state == RDS_IB_MR_KILLED ||
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

/*
 * Kill the key of a registration that completed (@valid) or failed: a
 * LOCAL_INV on the registration QP, waited for; where that cannot be
 * posted or fails, deregister the MR, which kills whatever key it has.
 * The registration stays the owner's, KILLED.  Caller holds a reference
 * on the owner, so nothing releases it meanwhile.
 */
static void rds_ib_mr_kill_key(struct rds_ib_mr *imr, bool valid)
{
	struct rds_ib_device *rdev = imr->rdev;
	struct rds_ib_mr_dev *mrd = &rdev->mrd;
	struct ib_send_wr wr = {};
	bool post;
	int ret = -EIO;

	/* Device removal waits for qp_sem: the MR and the PD stay. */
	down_read(&mrd->qp_sem);
	spin_lock_bh(&mrd->lock);
	post = valid && imr->mr && mrd->qp && !mrd->dead;
	if (post) {
		wr.opcode = IB_WR_LOCAL_INV;
		wr.ex.invalidate_rkey = imr->mr->rkey;
		wr.wr_cqe = &imr->cqe;
		imr->cqe.done = rds_ib_reg_done;
	}
	spin_unlock_bh(&mrd->lock);
	if (post) {
		reinit_completion(&imr->done);
		ret = rds_ib_reg_post(mrd, &wr);
		if (!ret) {
			rds_ib_stat_inc(RDS_IB_STAT_MR_INV_POSTED);
			/* The registration QP runs local work only: it ends. */
			wait_for_completion(&imr->done);
			rds_ib_stat_inc(RDS_IB_STAT_MR_INVALIDATE);
			ret = imr->status == IB_WC_SUCCESS ? 0 : -EIO;
		}
	}
	if (ret)
		rds_ib_mr_discard(imr);	/* the key dies with its MR */
	WRITE_ONCE(imr->state, RDS_IB_MR_KILLED);
	up_read(&mrd->qp_sem);
}

/**
 * rds_ib_mr_kill() - kill the key of a registration a message may hold
 * @mr: the core's MR, registered by rds_ib_mr_reg() or rds_ib_mr_prepare()
 * @wait: wait for a REG_MR in flight on a connection's QP
 *
 * A registration never posted is marked KILLED, which rds_ib_mr_chain()
 * never posts: the key never reaches the HCA.  A registered one is
 * invalidated now (rds_ib_mr_kill_key()).  One whose chained REG_MR is
 * in flight cannot be invalidated on another QP before that REG_MR has
 * run: with @wait its completion (or the flush of a connection that went
 * down) is waited for, interruptibly.  The registration stays @mr's
 * until rds_ib_mr_dereg(), which then posts nothing.
 *
 * Context: process context, may sleep; the caller holds a reference on
 * @mr and has taken it out of its socket's tree.
 * Return: 0 once the key is dead, -EINTR or (!@wait) -EINPROGRESS while
 * a chained REG_MR is in flight.
 */
int rds_ib_mr_kill(struct rds_mr *mr, bool wait)
{
	struct rds_ib_mr *imr = mr->tp;
	struct rds_ib_mr_dev *mrd = &imr->rdev->mrd;
	enum rds_ib_mr_state state;

	for (;;) {
		state = cmpxchg(&imr->state, RDS_IB_MR_IDLE, RDS_IB_MR_KILLED);
		if (state == RDS_IB_MR_IDLE || state == RDS_IB_MR_KILLED)
			return 0;
		if (state != RDS_IB_MR_POSTED)
			break;
		if (!wait)
			return -EINPROGRESS;
		if (wait_event_interruptible(mrd->kill_wait,
					     READ_ONCE(imr->state) !=
					     RDS_IB_MR_POSTED))
			return -EINTR;
	}
	/* VALID or DIRTY: only a release changes that, and we hold @mr. */
	rds_ib_mr_kill_key(imr, state == RDS_IB_MR_VALID);
	return 0;
}
