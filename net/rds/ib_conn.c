// SPDX-License-Identifier: GPL-2.0
/*
 * The transport state of a connection (struct rds_ib_conn), and the QP,
 * CQs and rings of each of its incarnations, which ib_cm.c builds on
 * connect and accept and tears down on shutdown; what
 * RDS_INFO_IB_CONNECTIONS shows of an incarnation.  Rules: rds_zc-wire.rst
 * section 3.
 *
 * Setup is a ladder (device, CQs, rings, QP, receives) unwound in reverse
 * by rds_ib_teardown(), which also serves a half-built incarnation.
 */
#include <linux/errno.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <uapi/linux/rds.h>

#include "ib.h"
#include "ib_cm.h"
#include "message.h"
#include "transport.h"

static unsigned int rds_ib_send_wr = 256;
module_param_named(send_wr, rds_ib_send_wr, uint, 0644);
MODULE_PARM_DESC(send_wr, "Send ring entries per connection, at most the device's (default 256)");

static unsigned int rds_ib_recv_wr = 1024;
module_param_named(recv_wr, rds_ib_recv_wr, uint, 0644);
MODULE_PARM_DESC(recv_wr, "Receive buffers of 4 KiB per connection (default 1024)");

static void rds_ib_qp_event(struct ib_event *event, void *context)
{
	struct rds_ib_conn *ic = context;

	if (event->event == IB_EVENT_COMM_EST) {
		/* A receive completed before the RTU: tell rdma_cm. */
		rdma_notify(ic->cm_id, IB_EVENT_COMM_EST);
		return;
	}
	pr_debug("rds_zc_ib: QP event %s on %pI6c->%pI6c\n",
		 ib_event_msg(event->event), &ic->conn->laddr,
		 &ic->conn->faddr);
	rds_ib_conn_drop(ic, "QP event");
}

/* Undo rds_ib_setup() step by step.  Caller holds cm_mutex. */
void rds_ib_teardown(struct rds_ib_conn *ic)
{
	rds_ib_recv_stop(ic);
	if (ic->qp) {
		ib_drain_qp(ic->qp);	/* every completion has run */
		if (ic->qp_own)
			ib_destroy_qp(ic->qp);
		else
			rdma_destroy_qp(ic->cm_id);
		ic->qp = NULL;
		ic->qp_own = false;
		WRITE_ONCE(ic->qp_num, 0);
	}
	rds_ib_send_op_unmap(ic);	/* an operation cut short */
	rds_ib_recv_ring_free(ic);
	rds_ib_send_ring_free(ic);
	if (ic->recv_cq) {
		ib_free_cq(ic->recv_cq);
		ic->recv_cq = NULL;
	}
	if (ic->send_cq) {
		ib_free_cq(ic->send_cq);
		ic->send_cq = NULL;
	}
	if (ic->rdev) {
		rds_ib_device_del_conn(ic->rdev, ic);
		rds_ib_device_put(ic->rdev);
		ic->rdev = NULL;
	}
	if (ic->rx_msg) {
		rds_msg_put(ic->rx_msg);
		ic->rx_msg = NULL;
	}
	ic->flags = 0;
	rds_ib_credit_reset(ic);
	/*
	 * Nothing is acknowledged on the next QP before something arrives
	 * on it: the peer may have restarted its numbering, and an old,
	 * higher number would release its new messages unseen (wire 2.3).
	 */
	atomic64_set(&ic->ack_next, 0);
	ic->rx_acked = 0;
}

/*
 * Move a QP that is ours (not the id's) to @state with the attributes
 * rdma_cm gives it, as rdma_cm moves the QPs it owns.  @param: the
 * limits we answer with, for RTR and RTS.
 */
static int rds_ib_qp_modify(struct rds_ib_conn *ic, struct rdma_cm_id *id,
			    enum ib_qp_state state,
			    const struct rdma_conn_param *param)
{
	struct ib_qp_attr attr = { .qp_state = state };
	int mask, ret;

	ret = rdma_init_qp_attr(id, &attr, &mask);
	if (ret)
		return ret;
	if (state == IB_QPS_RTR) {
		attr.max_dest_rd_atomic = param->responder_resources;
	} else if (state == IB_QPS_RTS) {
		attr.max_rd_atomic = param->initiator_depth;
		attr.retry_cnt = param->retry_count;
		attr.rnr_retry = param->rnr_retry_count;
		mask |= IB_QP_RETRY_CNT | IB_QP_RNR_RETRY;
	}
	return ib_modify_qp(ic->qp, &attr, mask);
}

/*
 * Ready the QP of an accepted request for the reply: RTR, then RTS with
 * our retry counts rather than the requester's.  rdma_accept() leaves a
 * QP of our own alone and names it in the reply (param->qp_num).
 */
int rds_ib_qp_ready(struct rds_ib_conn *ic, struct rdma_cm_id *id,
		    struct rdma_conn_param *param)
{
	int ret;

	ret = rds_ib_qp_modify(ic, id, IB_QPS_RTR, param);
	if (ret)
		return ret;
	ret = rds_ib_qp_modify(ic, id, IB_QPS_RTS, param);
	if (ret)
		return ret;
	param->qp_num = ic->qp->qp_num;
	return 0;
}

/*
 * Build the QP of an id whose device is known: send ring + ACK frame +
 * drain, receive ring + drain (section 3.1).  @own: the QP is ours, not
 * the id's (a request we accept, rds_ib_qp_ready()); else rdma_cm moves
 * it through its states.  Caller holds cm_mutex.
 */
int rds_ib_setup(struct rds_ib_conn *ic, struct rdma_cm_id *id,
		 bool own)
{
	struct ib_qp_init_attr attr = {};
	struct ib_device *ibdev = id->device;
	unsigned int max_wr;
	int ret;

	ic->rdev = rds_ib_device_get(ibdev);
	if (!ic->rdev)
		return -ENODEV;
	ret = rds_ib_device_add_conn(ic->rdev, ic);
	if (ret) {
		rds_ib_device_put(ic->rdev);
		ic->rdev = NULL;
		return ret;
	}

	/* Credit counts are 16 bits wide (ib_credit.c). */
	max_wr = min(max(ibdev->attrs.max_qp_wr, 8) - 2, 16383);
	ic->send_nr = clamp(READ_ONCE(rds_ib_send_wr), 2U, max_wr);
	ic->recv_nr = clamp(READ_ONCE(rds_ib_recv_wr), 2U, max_wr);

	ic->send_cq = ib_alloc_cq_any(ibdev, ic, ic->send_nr + 2,
				      IB_POLL_SOFTIRQ);
	if (IS_ERR(ic->send_cq)) {
		ret = PTR_ERR(ic->send_cq);
		ic->send_cq = NULL;
		return ret;
	}
	ic->recv_cq = ib_alloc_cq_any(ibdev, ic, ic->recv_nr + 1,
				      IB_POLL_SOFTIRQ);
	if (IS_ERR(ic->recv_cq)) {
		ret = PTR_ERR(ic->recv_cq);
		ic->recv_cq = NULL;
		return ret;
	}
	ret = rds_ib_send_ring_init(ic);
	if (ret)
		return ret;
	ret = rds_ib_recv_ring_init(ic);
	if (ret)
		return ret;

	attr.event_handler = rds_ib_qp_event;
	attr.qp_context = ic;
	attr.send_cq = ic->send_cq;
	attr.recv_cq = ic->recv_cq;
	attr.cap.max_send_wr = ic->send_nr + 2;
	attr.cap.max_recv_wr = ic->recv_nr + 1;
	/* A fragment takes 2 SGEs; an RDMA WR up to 8 (wire 8.4). */
	ic->max_sge = clamp(ibdev->attrs.max_send_sge, 2, 8);
	ic->max_sge_rd = clamp_t(int, ibdev->attrs.max_sge_rd, 1, ic->max_sge);
	attr.cap.max_send_sge = ic->max_sge;
	attr.cap.max_recv_sge = 2;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	/* RNR NAKs to the peer are retried after 0.32 ms (section 2.4). */
	ret = rdma_set_min_rnr_timer(id, IB_RNR_TIMER_000_32);
	if (ret)
		return ret;
	if (own) {
		struct ib_qp *qp = ib_create_qp(ic->rdev->pd, &attr);

		if (IS_ERR(qp))
			return PTR_ERR(qp);
		ic->qp = qp;
		ic->qp_own = true;
		ret = rds_ib_qp_modify(ic, id, IB_QPS_INIT, NULL);
		if (ret)
			return ret;
	} else {
		ret = rdma_create_qp(id, ic->rdev->pd, &attr);
		if (ret)
			return ret;
		ic->qp = id->qp;
	}
	WRITE_ONCE(ic->qp_num, ic->qp->qp_num);

	/* Posted before the handshake ends, so no SEND meets an RNR. */
	return rds_ib_recv_ring_post(ic);
}

/* What RDS_INFO_IB_CONNECTIONS shows of an incarnation about to be up. */
void rds_ib_info_record(struct rds_ib_conn *ic, struct rdma_cm_id *id)
{
	rdma_read_gids(id, (union ib_gid *)ic->info_src_gid,
		       (union ib_gid *)ic->info_dst_gid);
	ic->info_sl = id->route.path_rec ? id->route.path_rec->sl : 0;
	ic->info_mr_max = ic->rdev->mrd.pool_size;
	ic->info_mr_pages = ic->rdev->mrd.max_pages;
}

/**
 * rds_ib_conn_info() - the IB part of an RDS_INFO_IB_CONNECTIONS row
 * @conn: a connection that is up
 * @ri: the row, addresses set
 *
 * Context: under rcu_read_lock().
 */
void rds_ib_conn_info(struct rds_conn *conn, struct rds6_info_rdma_connection *ri)
{
	struct rds_ib_conn *ic = conn->tp;

	memcpy(ri->src_gid, ic->info_src_gid, sizeof(ri->src_gid));
	memcpy(ri->dst_gid, ic->info_dst_gid, sizeof(ri->dst_gid));
	ri->sl = ic->info_sl;
	ri->max_send_wr = READ_ONCE(ic->send_nr);
	ri->max_recv_wr = READ_ONCE(ic->recv_nr);
	ri->max_send_sge = READ_ONCE(ic->max_sge);
	ri->rdma_mr_max = ic->info_mr_max;
	ri->rdma_mr_size = ic->info_mr_pages;
}

/**
 * rds_ib_conn_alloc() - the transport state of a new connection object
 * @conn: the connection
 * @gfp: allocation flags
 *
 * Return: 0 or -ENOMEM.
 */
int rds_ib_conn_alloc(struct rds_conn *conn, gfp_t gfp)
{
	struct rds_ib_conn *ic = kzalloc(sizeof(*ic), gfp);

	if (!ic)
		return -ENOMEM;
	ic->conn = conn;
	INIT_LIST_HEAD(&ic->dev_item);
	mutex_init(&ic->cm_mutex);
	rds_ib_recv_conn_init(ic);
	atomic64_set(&ic->ack_next, 0);
	conn->tp = ic;
	return 0;
}

/**
 * rds_ib_conn_free() - free what rds_ib_conn_alloc() made
 * @conn: a connection that is shut down
 */
void rds_ib_conn_free(struct rds_conn *conn)
{
	struct rds_ib_conn *ic = conn->tp;

	WARN_ON(ic->cm_id || ic->qp);
	rds_ib_recv_stop(ic);
	mutex_destroy(&ic->cm_mutex);
	kfree(ic);
	conn->tp = NULL;
}
