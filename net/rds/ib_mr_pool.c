// SPDX-License-Identifier: GPL-2.0
/*
 * The FRWR MR pool of each device: its size, taking an MR for a
 * registration and deregistering one that may carry a live key; each
 * device's registration state from its arrival to its removal, and the
 * workqueue where releases and the registration QP's recovery finish.
 * The rules: ib_mr.h.
 */
#include <linux/dma-mapping.h>
#include <linux/errno.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "ib.h"
#include "ib_mr.h"
#include "transport.h"

unsigned int rds_ib_fmr_pool_size = 2048;
module_param_named(fmr_pool_size, rds_ib_fmr_pool_size, uint, 0444);
MODULE_PARM_DESC(fmr_pool_size, "Memory regions mapped for RDMA at once, per device (default 2048)");

unsigned int rds_ib_fmr_message_size = 1024 * 1024;
module_param_named(fmr_message_size, rds_ib_fmr_message_size, uint, 0444);
MODULE_PARM_DESC(fmr_message_size, "Largest memory region mapped for RDMA, in bytes (default and maximum 1 MiB: only lowers the core's limit)");

/* Free MRs that wait behind one before it is registered again. */
#define RDS_IB_MR_REUSE_GAP	32

/* Releases and the registration QP's recovery finish here. */
struct workqueue_struct *rds_ib_mr_wq;

/* Unmap a registration's pages and free its scatter list. */
void rds_ib_mr_unmap(struct rds_ib_device *rdev, struct rds_ib_mr *imr)
{
	if (imr->nents)
		ib_dma_unmap_sg(rdev->ibdev, imr->sgt.sgl, imr->sgt.orig_nents,
				DMA_BIDIRECTIONAL);
	imr->nents = 0;
	rds_ib_mr_sgt_free(imr);
}

/*
 * The MR for a new registration: the oldest free one once enough others
 * wait behind it, else a new one while the pool is below its size, else
 * the first a release under way returns.
 */
struct ib_mr *rds_ib_pool_get(struct rds_ib_device *rdev)
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
void rds_ib_pool_discard(struct rds_ib_mr_dev *mrd, struct ib_mr *mr)
{
	spin_lock_bh(&mrd->lock);
	mrd->nr_mrs--;
	spin_unlock_bh(&mrd->lock);
	ib_dereg_mr(mr);
}

/**
 * rds_ib_mr_discard() - take the MR off a registration and deregister it
 * @imr: the registration
 *
 * Removal may have taken the MR already (its key is gone then); else it
 * leaves @imr and its list, and its key dies with it.  May sleep.
 */
void rds_ib_mr_discard(struct rds_ib_mr *imr)
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
	init_waitqueue_head(&mrd->kill_wait);
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
