// SPDX-License-Identifier: GPL-2.0
/*
 * The registration QP of a device: where RDS_GET_MR posts its REG_MR and
 * every release its LOCAL_INV (ib_mr_reg.c, ib_mr_release.c).
 *
 * It is an RC QP connected to itself.  It never carries a packet: it
 * exists so that memory can be registered as soon as a socket is bound,
 * before any connection (and its QP) exists, and stays registered
 * across reconnects.  An rkey is valid on every QP of the PD, so a
 * cookie handed out here serves any connection on the device.
 *
 * Recovery.  A work request that fails moves the QP to the error state
 * and flushes the rest.  The failure schedules rds_ib_reg_recover(),
 * which drains the QP and brings it back to RTS, so later registrations
 * work again.
 *
 * Locking: mrd->qp_sem is held for reading while posting (and, for a
 * registration, until its completion), for writing while the QP is
 * drained, reset or destroyed; mrd->sq_slots counts the free entries of
 * its send queue.  A release that must not sleep posts under mrd->lock
 * instead (rds_ib_mr_dereg_nowait()), and only while mrd->qp_resetting
 * and mrd->dead, both set under that lock, are clear.
 */
#include <linux/module.h>
#include <linux/workqueue.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "ib.h"
#include "transport.h"

bool rds_ib_reg_fault;
module_param_named(inject_reg_qp_error, rds_ib_reg_fault, bool, 0600);
MODULE_PARM_DESC(inject_reg_qp_error, "Testing: the next registration first posts an invalid work request, which breaks the registration QP");

/* Work requests in flight on a registration QP, at most. */
#define RDS_IB_REG_DEPTH	64

/**
 * rds_ib_reg_failed() - a work request on the registration QP failed
 * @mrd: the device's registration state
 * @status: the completion's status
 *
 * The QP went to the error state: recovery brings it back.
 * Context: the completion handler.
 */
void rds_ib_reg_failed(struct rds_ib_mr_dev *mrd, enum ib_wc_status status)
{
	if (status != IB_WC_WR_FLUSH_ERR)
		pr_warn_ratelimited("rds_zc_ib: registration work request failed: %s\n",
				    ib_wc_status_msg(status));
	queue_work(rds_ib_mr_wq, &mrd->recover_w);
}

/* The deliberately invalid work request of inject_reg_qp_error. */
static void rds_ib_fault_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rds_ib_mr_dev *mrd = cq->cq_context;

	up(&mrd->sq_slots);
	if (wc->status != IB_WC_SUCCESS)
		rds_ib_reg_failed(mrd, wc->status);
}

/**
 * rds_ib_reg_wait_slot() - wait for a send queue entry of the registration QP
 * @mrd: the device's registration state
 *
 * rds_ib_reg_post() found them all in use.
 * Context: process context, may sleep.
 */
void rds_ib_reg_wait_slot(struct rds_ib_mr_dev *mrd)
{
	rds_ib_stat_inc(RDS_IB_STAT_MR_QP_FULL);
	down(&mrd->sq_slots);
}

/**
 * rds_ib_reg_inject_fault() - inject_reg_qp_error, once
 * @mrd: the device's registration state
 *
 * rds_ib_reg_maybe_fail() calls it when the parameter is set.  Posts a
 * LOCAL_INV of a key nobody has: the HCA fails it, which breaks the QP,
 * and the registration posted next is flushed.  Caller holds qp_sem for
 * reading and checked mrd->qp.
 * Context: process context, may sleep.
 */
void rds_ib_reg_inject_fault(struct rds_ib_mr_dev *mrd)
{
	struct ib_send_wr wr = {
		.opcode = IB_WR_LOCAL_INV,
		.wr_cqe = &mrd->fault_cqe,
	};

	if (!xchg(&rds_ib_reg_fault, false))
		return;
	mrd->fault_cqe.done = rds_ib_fault_done;
	if (rds_ib_reg_post(mrd, &wr))
		pr_info("rds_zc_ib: could not inject a registration fault\n");
}

/* Move a reset RC QP to RTS, connected to itself (no packet ever leaves). */
static int rds_ib_reg_qp_connect(struct ib_device *ibdev, struct ib_qp *qp)
{
	const u32 port = rdma_start_port(ibdev);
	struct ib_port_attr pattr;
	struct ib_qp_attr a = {};
	union ib_gid gid;
	int ret;

	ret = ib_query_port(ibdev, port, &pattr);
	if (ret)
		return ret;
	a.qp_state = IB_QPS_INIT;
	a.port_num = port;
	ret = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_256;
	a.dest_qp_num = qp->qp_num;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.type = rdma_ah_find_type(ibdev, port);
	rdma_ah_set_port_num(&a.ah_attr, port);
	if (a.ah_attr.type == RDMA_AH_ATTR_TYPE_ROCE) {
		ret = rdma_query_gid(ibdev, port, 0, &gid);
		if (ret)
			return ret;
		rdma_ah_set_grh(&a.ah_attr, &gid, 0, 0, 1, 0);
	} else {
		rdma_ah_set_dlid(&a.ah_attr, pattr.lid);
	}
	ret = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

static void rds_ib_reg_set_resetting(struct rds_ib_mr_dev *mrd, bool on)
{
	spin_lock_bh(&mrd->lock);
	mrd->qp_resetting = on;
	spin_unlock_bh(&mrd->lock);
}

/*
 * Bring a registration QP that went to the error state back: wait for
 * everything posted to flush, then reset and reconnect it.  Registrations
 * wait for qp_sem meanwhile.
 */
static void rds_ib_reg_recover(struct work_struct *work)
{
	struct rds_ib_mr_dev *mrd =
		container_of(work, struct rds_ib_mr_dev, recover_w);
	struct rds_ib_device *rdev = container_of(mrd, struct rds_ib_device, mrd);
	struct ib_qp_attr a = { .qp_state = IB_QPS_RESET };
	struct ib_qp_init_attr init;
	int ret;

	down_write(&mrd->qp_sem);
	if (!mrd->qp || READ_ONCE(mrd->dead))
		goto out;
	ret = ib_query_qp(mrd->qp, &a, IB_QP_STATE, &init);
	if (ret || a.qp_state != IB_QPS_ERR)
		goto out;	/* a flush that recovery already handled */
	/* No post without qp_sem from here on (rds_ib_mr_dereg_nowait). */
	rds_ib_reg_set_resetting(mrd, true);
	ib_drain_sq(mrd->qp);
	a.qp_state = IB_QPS_RESET;
	ret = ib_modify_qp(mrd->qp, &a, IB_QP_STATE);
	if (!ret)
		ret = rds_ib_reg_qp_connect(rdev->ibdev, mrd->qp);
	if (ret) {
		pr_warn("rds_zc_ib: %s: registration QP not recovered (%d)\n",
			dev_name(&rdev->ibdev->dev), ret);
		goto out;
	}
	rds_ib_stat_inc(RDS_IB_STAT_MR_QP_RECOVERED);
	pr_info("rds_zc_ib: %s: registration QP recovered\n",
		dev_name(&rdev->ibdev->dev));
	rds_ib_reg_set_resetting(mrd, false);
out:
	up_write(&mrd->qp_sem);
}

/**
 * rds_ib_reg_qp_create() - the registration QP of a new device
 * @rdev: the device, its PD allocated
 *
 * On failure, what was made stays in @rdev->mrd for
 * rds_ib_reg_qp_destroy().
 * Context: process context, may sleep.
 * Return: 0 or a negative errno.
 */
int rds_ib_reg_qp_create(struct rds_ib_device *rdev)
{
	struct rds_ib_mr_dev *mrd = &rdev->mrd;
	struct ib_device *ibdev = rdev->ibdev;
	struct ib_qp_init_attr attr = {};
	int ret;

	init_rwsem(&mrd->qp_sem);
	sema_init(&mrd->sq_slots, RDS_IB_REG_DEPTH);
	INIT_WORK(&mrd->recover_w, rds_ib_reg_recover);
	mrd->cq = ib_alloc_cq_any(ibdev, mrd, RDS_IB_REG_DEPTH + 1,
				  IB_POLL_SOFTIRQ);
	if (IS_ERR(mrd->cq)) {
		ret = PTR_ERR(mrd->cq);
		mrd->cq = NULL;
		return ret;
	}
	attr.send_cq = mrd->cq;
	attr.recv_cq = mrd->cq;
	attr.cap.max_send_wr = RDS_IB_REG_DEPTH + 1;	/* + ib_drain_sq's */
	attr.cap.max_recv_wr = 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	mrd->qp = ib_create_qp(rdev->pd, &attr);
	if (IS_ERR(mrd->qp)) {
		ret = PTR_ERR(mrd->qp);
		mrd->qp = NULL;
		return ret;
	}
	return rds_ib_reg_qp_connect(ibdev, mrd->qp);
}

/**
 * rds_ib_reg_qp_stop() - let everything posted end, and recovery with it
 * @mrd: the device's registration state, marked dead
 *
 * Context: process context, may sleep.
 */
void rds_ib_reg_qp_stop(struct rds_ib_mr_dev *mrd)
{
	down_write(&mrd->qp_sem);
	if (mrd->qp)
		ib_drain_sq(mrd->qp);
	up_write(&mrd->qp_sem);
	cancel_work_sync(&mrd->recover_w);
}

/**
 * rds_ib_reg_qp_destroy() - free the registration QP and its CQ
 * @mrd: the device's registration state, stopped
 *
 * Caller holds qp_sem for writing.
 * Context: process context, may sleep.
 */
void rds_ib_reg_qp_destroy(struct rds_ib_mr_dev *mrd)
{
	if (mrd->qp) {
		ib_destroy_qp(mrd->qp);
		mrd->qp = NULL;
	}
	if (mrd->cq) {
		ib_free_cq(mrd->cq);
		mrd->cq = NULL;
	}
}
