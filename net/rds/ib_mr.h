/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Memory registration for RDMA: a fast-registration (FRWR) MR pool per
 * device.  REG_MR and LOCAL_INV work requests go on the device's
 * registration QP (ib_reg_qp.c) or, chained, on a connection's QP.
 *
 * Shared among the MR files only; everyone else uses ib.h.  The pool and
 * each device's registration state are ib_mr_pool.c's, registration
 * (RDS_GET_MR, a MAP's chained REG_MR) ib_mr_reg.c's, invalidation and
 * release ib_mr_release.c's.
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
 *
 * Killing a key early.  RDS_FREE_MR with RDS_RDMA_INVALIDATE, and close,
 * kill the key of a registration that a message may still hold
 * (rds_ib_mr_kill): one never posted is marked KILLED, so that the
 * message's transmit never posts it; a registered one gets a LOCAL_INV
 * on the registration QP, waited for, or is deregistered if that cannot
 * be done.  The registration stays the core MR's (mr->tp), mapped, until
 * the last reference releases it as usual, without another LOCAL_INV.
 * One whose chained REG_MR is in flight is waited for: it may run on
 * the connection's QP after a LOCAL_INV posted elsewhere.
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
#ifndef _RDS_ZC_IB_MR_H
#define _RDS_ZC_IB_MR_H

#include <linux/completion.h>
#include <linux/list.h>
#include <linux/scatterlist.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "ib.h"

struct rds_mr;

/*
 * Where a registration's REG_MR is.  Set by the one who posts it, before
 * the message that carries its cookie can be freed (which alone can start
 * the release), so a release reads a settled state.  IDLE leaves by
 * cmpxchg(), to POSTED (the transmit path) or KILLED (rds_ib_mr_kill()),
 * whichever comes first; the others change with one owner at a time.
 */
enum rds_ib_mr_state {
	RDS_IB_MR_IDLE,		/* mapped, key chosen, nothing posted */
	RDS_IB_MR_POSTED,	/* REG_MR posted on a connection's QP */
	RDS_IB_MR_VALID,	/* REG_MR completed: the key works */
	RDS_IB_MR_DIRTY,	/* REG_MR failed or flushed: unknown */
	RDS_IB_MR_KILLED,	/* key dead (or never posted), still held */
};

/* One registration: a pooled MR mapped onto the core's pinned pages. */
struct rds_ib_mr {
	struct list_head item;		/* on mrd->live, under mrd->lock */
	struct rds_ib_device *rdev;	/* its mem referenced */
	struct ib_mr	*mr;		/* under mrd->lock; see the top */
	struct rds_mr	*owner;		/* the core's MR */
	struct sg_table	sgt;		/* its list: @sg1, or allocated */
	struct scatterlist sg1;		/* the entry of a one-page MR */
	int		nents;		/* DMA-mapped entries */
	bool		virt_dma;	/* the device needs no DMA syncs */
	enum rds_ib_mr_state state;
	struct ib_cqe	cqe;		/* REG_MR or LOCAL_INV on the reg QP */
	enum ib_wc_status status;	/* its outcome */
	struct completion done;		/* a registration waits for it */
	struct work_struct work;	/* a release ends here */
};

/* Free a registration's scatter list, unless it is its own @sg1. */
static inline void rds_ib_mr_sgt_free(struct rds_ib_mr *imr)
{
	if (imr->sgt.sgl != &imr->sg1)
		sg_free_table(&imr->sgt);
}

/* ib_mr_pool.c */
void rds_ib_mr_unmap(struct rds_ib_device *rdev, struct rds_ib_mr *imr);
struct ib_mr *rds_ib_pool_get(struct rds_ib_device *rdev);
void rds_ib_pool_discard(struct rds_ib_mr_dev *mrd, struct ib_mr *mr);
void rds_ib_mr_discard(struct rds_ib_mr *imr);

/* ib_mr_reg.c */
void rds_ib_reg_done(struct ib_cq *cq, struct ib_wc *wc);

/*
 * A registration work request completed: record it, free its entry.
 * Inline: each registration and invalidation ends here.
 */
static inline struct rds_ib_mr *rds_ib_reg_wc(struct ib_wc *wc)
{
	struct rds_ib_mr *imr = container_of(wc->wr_cqe, struct rds_ib_mr, cqe);
	struct rds_ib_mr_dev *mrd = &imr->rdev->mrd;

	imr->status = wc->status;
	up(&mrd->sq_slots);
	if (wc->status != IB_WC_SUCCESS)
		rds_ib_reg_failed(mrd, wc->status);
	return imr;
}

#endif /* _RDS_ZC_IB_MR_H */
