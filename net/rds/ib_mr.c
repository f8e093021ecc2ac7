// SPDX-License-Identifier: GPL-2.0
/*
 * Memory registration for RDMA: a fast-registration (FRWR) MR pool per
 * device, and a registration QP per device to post REG_MR and LOCAL_INV
 * work requests on.
 *
 * The registration QP is an RC QP connected to itself.  It never carries
 * a packet: it exists so that memory can be registered as soon as a
 * socket is bound, before any connection (and its QP) exists, and stays
 * registered across reconnects.  An rkey is valid on every QP of the PD,
 * so a cookie handed out here serves any connection on the device.
 *
 * A registration covers exactly the bytes asked for: the MR's IOVA is
 * the buffer's offset in its first page, its length the buffer's length,
 * so a peer addresses byte x as offset + x (wire section 8.1) and the HCA
 * refuses anything outside the range.  Each registration of a pooled MR
 * moves its key byte on, so a stale cookie never reaches new memory.
 *
 * Every deregistration invalidates the key (LOCAL_INV) before the core
 * unpins the pages: with or without RDS_RDMA_INVALIDATE, no peer reaches
 * a page after it left the MR.
 *
 * Lifetime: a registration (struct rds_ib_mr) holds its device's memory
 * (rdev->mem), not the device.  Device removal deregisters every live
 * registration first, under reg_mutex, and marks it dead; a later
 * deregistration of a dead one only frees it.
 *
 * Locking: rds_ib_mr_dev.reg_mutex serialises the registration QP (one
 * work request posted and waited for at a time), the pool, the list of
 * live registrations and their dead marks.
 */
#include <linux/errno.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "ib.h"
#include "transport.h"

unsigned int rds_ib_fmr_pool_size = 2048;
module_param_named(fmr_pool_size, rds_ib_fmr_pool_size, uint, 0444);
MODULE_PARM_DESC(fmr_pool_size, "Memory regions mapped for RDMA at once, per device (default 2048)");

unsigned int rds_ib_fmr_message_size = 1024 * 1024;
module_param_named(fmr_message_size, rds_ib_fmr_message_size, uint, 0444);
MODULE_PARM_DESC(fmr_message_size, "Largest memory region mapped for RDMA, in bytes (default 1 MiB)");

/* One registration: a pooled MR mapped onto the core's pinned pages. */
struct rds_ib_mr {
	struct list_head item;		/* on mrd->live, under reg_mutex */
	struct rds_ib_device *rdev;	/* its mem referenced */
	struct ib_mr	*mr;		/* NULL once the device removed it */
	struct sg_table	sgt;
	int		nents;		/* DMA-mapped entries */
};

/* A work request on the registration QP and its caller's wait. */
struct rds_ib_reg_wait {
	struct ib_cqe	cqe;
	struct completion done;
	enum ib_wc_status status;
};

static void rds_ib_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rds_ib_reg_wait *w =
		container_of(wc->wr_cqe, struct rds_ib_reg_wait, cqe);

	w->status = wc->status;
	complete(&w->done);
}

/* Post @wr on the registration QP and wait.  Caller holds reg_mutex. */
static int rds_ib_reg_post(struct rds_ib_mr_dev *mrd, struct ib_send_wr *wr)
{
	struct rds_ib_reg_wait w;
	int ret;

	w.cqe.done = rds_ib_reg_done;
	init_completion(&w.done);
	wr->wr_cqe = &w.cqe;
	wr->send_flags = IB_SEND_SIGNALED;
	ret = ib_post_send(mrd->qp, wr, NULL);
	if (ret)
		return ret;
	wait_for_completion(&w.done);
	if (w.status != IB_WC_SUCCESS) {
		pr_warn_ratelimited("rds_zc_ib: registration work request failed: %s\n",
				    ib_wc_status_msg(w.status));
		return -EIO;
	}
	return 0;
}

/*
 * A pooled MR, or a new one while the pool is below its size.  Free MRs
 * are linked through qp_entry, which only the core's per-QP MR pools
 * use otherwise: ours outlive every connection's QP.
 */
static struct ib_mr *rds_ib_pool_get(struct rds_ib_device *rdev)
{
	struct rds_ib_mr_dev *mrd = &rdev->mrd;
	struct ib_mr *mr;

	mr = list_first_entry_or_null(&mrd->pool, struct ib_mr, qp_entry);
	if (mr) {
		list_del(&mr->qp_entry);
		return mr;
	}
	if (mrd->nr_mrs >= mrd->pool_size)
		return ERR_PTR(-EAGAIN);
	mr = ib_alloc_mr(rdev->pd, IB_MR_TYPE_MEM_REG, mrd->max_pages);
	if (IS_ERR(mr))
		return ERR_PTR(PTR_ERR(mr) == -ENOMEM ? -EAGAIN : PTR_ERR(mr));
	mrd->nr_mrs++;
	return mr;
}

static void rds_ib_mr_unmap(struct rds_ib_device *rdev, struct rds_ib_mr *imr)
{
	if (imr->nents)
		ib_dma_unmap_sg(rdev->ibdev, imr->sgt.sgl, imr->sgt.orig_nents,
				DMA_BIDIRECTIONAL);
	imr->nents = 0;
	sg_free_table(&imr->sgt);
}

/**
 * rds_ib_mr_reg() - register the core's pinned pages for remote access
 * @net: namespace of the socket
 * @laddr: the address the socket is bound to: its device registers
 * @mr: the core's MR: pages, nr_pages, offset, len set
 *
 * Context: process context, may sleep.
 * Return: 0 with mr->rkey and mr->tp set; -EOPNOTSUPP if the device
 * cannot register, -ENODEV if it is gone, -EINVAL for a region over
 * fmr_message_size + 4 KiB or fmr_message_size / 4 KiB + 1 pages,
 * -EAGAIN when the pool is exhausted, -EBUSY when the pages cannot be
 * DMA-mapped, -EIO if the HCA refused.
 */
int rds_ib_mr_reg(struct net *net, __be32 laddr, struct rds_mr *mr)
{
	struct rds_ib_device *rdev = rds_ib_device_for_addr(net, laddr);
	struct rds_ib_mr_dev *mrd;
	struct ib_reg_wr wr = {};
	struct rds_ib_mr *imr;
	struct ib_mr *ibmr;
	int ret, n;

	if (!rdev)
		return -ENODEV;
	mrd = &rdev->mrd;
	if (!mrd->qp) {
		ret = -EOPNOTSUPP;
		goto out_put;
	}
	/* fmr_message_size, and a page of slack for an unaligned start. */
	if (mr->len > READ_ONCE(rds_ib_fmr_message_size) + PAGE_SIZE ||
	    mr->nr_pages > mrd->max_pages) {
		ret = -EINVAL;
		goto out_put;
	}
	imr = kzalloc(sizeof(*imr), GFP_KERNEL);
	if (!imr) {
		ret = -ENOMEM;
		goto out_put;
	}
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

	mutex_lock(&mrd->reg_mutex);
	if (mrd->dead) {
		ret = -ENODEV;
		goto out_unlock;
	}
	ibmr = rds_ib_pool_get(rdev);
	if (IS_ERR(ibmr)) {
		ret = PTR_ERR(ibmr);
		goto out_unlock;
	}
	n = ib_map_mr_sg(ibmr, imr->sgt.sgl, imr->nents, NULL, PAGE_SIZE);
	if (n != imr->nents) {
		ret = n < 0 ? n : -EINVAL;
		goto out_pool;
	}
	/* Zero-based at the first page, bounded to the bytes asked for. */
	ibmr->iova = mr->offset;
	ibmr->length = mr->len;
	ib_update_fast_reg_key(ibmr, ib_inc_rkey(ibmr->rkey));

	wr.wr.opcode = IB_WR_REG_MR;
	wr.mr = ibmr;
	wr.key = ibmr->rkey;
	wr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
		    IB_ACCESS_REMOTE_WRITE;
	ret = rds_ib_reg_post(mrd, &wr.wr);
	if (ret)
		goto out_pool;

	imr->mr = ibmr;
	imr->rdev = rdev;
	kref_get(&rdev->mem);
	list_add_tail(&imr->item, &mrd->live);
	mutex_unlock(&mrd->reg_mutex);
	rds_ib_stat_inc(RDS_IB_STAT_MR_REG);

	mr->rkey = ibmr->rkey;
	mr->tp = imr;
	rds_ib_device_put(rdev);
	return 0;

out_pool:
	list_add(&ibmr->qp_entry, &mrd->pool);
out_unlock:
	mutex_unlock(&mrd->reg_mutex);
	rds_ib_mr_unmap(rdev, imr);
	goto out_free;
out_sgt:
	sg_free_table(&imr->sgt);
out_free:
	kfree(imr);
out_put:
	rds_ib_device_put(rdev);
	return ret;
}

/**
 * rds_ib_mr_dereg() - invalidate a registration and release it
 * @mr: the core's MR, registered by rds_ib_mr_reg()
 *
 * When it returns, no peer can reach the pages through the key.
 *
 * Context: process context, may sleep.
 */
void rds_ib_mr_dereg(struct rds_mr *mr)
{
	struct rds_ib_mr *imr = mr->tp;
	struct rds_ib_device *rdev = imr->rdev;
	struct rds_ib_mr_dev *mrd = &rdev->mrd;
	struct ib_send_wr wr = {};

	mutex_lock(&mrd->reg_mutex);
	if (imr->mr) {
		wr.opcode = IB_WR_LOCAL_INV;
		wr.ex.invalidate_rkey = imr->mr->rkey;
		if (rds_ib_reg_post(mrd, &wr)) {
			/* The key may still be live: never reuse this MR. */
			ib_dereg_mr(imr->mr);
			mrd->nr_mrs--;
		} else {
			list_add(&imr->mr->qp_entry, &mrd->pool);
		}
		imr->mr = NULL;
		list_del(&imr->item);
		rds_ib_mr_unmap(rdev, imr);
		rds_ib_stat_inc(RDS_IB_STAT_MR_INVALIDATE);
	}
	mutex_unlock(&mrd->reg_mutex);
	kfree(imr);
	mr->tp = NULL;
	kref_put(&rdev->mem, rds_ib_device_free);
}

/* Move a fresh RC QP to RTS, connected to itself (no packet ever leaves). */
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
	struct ib_qp_init_attr attr = {};
	int ret;

	mutex_init(&mrd->reg_mutex);
	INIT_LIST_HEAD(&mrd->pool);
	INIT_LIST_HEAD(&mrd->live);
	mrd->pool_size = READ_ONCE(rds_ib_fmr_pool_size);
	if (ibdev->attrs.max_mr)
		mrd->pool_size = min_t(u32, mrd->pool_size,
				       ibdev->attrs.max_mr / 2);
	mrd->max_pages = min_t(u32, DIV_ROUND_UP(rds_ib_fmr_message_size,
						 PAGE_SIZE) + 1,
			       ibdev->attrs.max_fast_reg_page_list_len);

	mrd->cq = ib_alloc_cq_any(ibdev, NULL, 8, IB_POLL_SOFTIRQ);
	if (IS_ERR(mrd->cq)) {
		ret = PTR_ERR(mrd->cq);
		mrd->cq = NULL;
		goto fail;
	}
	attr.send_cq = mrd->cq;
	attr.recv_cq = mrd->cq;
	attr.cap.max_send_wr = 4;
	attr.cap.max_recv_wr = 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	mrd->qp = ib_create_qp(rdev->pd, &attr);
	if (IS_ERR(mrd->qp)) {
		ret = PTR_ERR(mrd->qp);
		mrd->qp = NULL;
		goto fail;
	}
	ret = rds_ib_reg_qp_connect(ibdev, mrd->qp);
	if (ret)
		goto fail;
	return;

fail:
	pr_info("rds_zc_ib: %s: no memory registration for RDMA (%d)\n",
		dev_name(&ibdev->dev), ret);
	rds_ib_mr_dev_exit(rdev);
}

/**
 * rds_ib_mr_dev_exit() - deregister everything of a device going away
 * @rdev: the device, unlisted
 *
 * Registrations still held by sockets become dead: their keys are gone
 * with the MRs, and their deregistration later only frees them.
 */
void rds_ib_mr_dev_exit(struct rds_ib_device *rdev)
{
	struct rds_ib_mr_dev *mrd = &rdev->mrd;
	struct rds_ib_mr *imr, *tmp;
	struct ib_mr *mr, *mtmp;

	mutex_lock(&mrd->reg_mutex);
	mrd->dead = true;
	list_for_each_entry_safe(imr, tmp, &mrd->live, item) {
		list_del_init(&imr->item);
		ib_dereg_mr(imr->mr);
		imr->mr = NULL;
		rds_ib_mr_unmap(rdev, imr);
	}
	list_for_each_entry_safe(mr, mtmp, &mrd->pool, qp_entry) {
		list_del(&mr->qp_entry);
		ib_dereg_mr(mr);
	}
	mrd->nr_mrs = 0;
	/* Nothing is outstanding: every post was waited for. */
	if (mrd->qp) {
		ib_destroy_qp(mrd->qp);
		mrd->qp = NULL;
	}
	if (mrd->cq) {
		ib_free_cq(mrd->cq);
		mrd->cq = NULL;
	}
	mutex_unlock(&mrd->reg_mutex);
}
