/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The InfiniBand/RoCE transport's private header.
 *
 * Devices: one struct rds_ib_device exists for each RDMA device the
 * ib_client accepted, from its add() to its remove() callback.  It is
 * reference counted; remove() unlists it, drops the connections that use
 * it, drops the list's reference and waits until every user has dropped
 * theirs before the PD goes.
 *
 * Connections: one struct rds_ib_conn per core connection (conn->tp),
 * for the connection's whole life; the rdma_cm id, QP, CQs and rings in
 * it belong to one incarnation, from connect or accept to shutdown.
 *
 * Locking:
 *  - rds_ib_device.conns_lock protects its conns list.
 *  - rds_ib_conn.cm_mutex protects cm_id, rdev, the QP, CQs and rings
 *    against the rdma_cm handler, connect and shutdown.  Event handlers
 *    for an id that is no longer cm_id do nothing.
 *  - The send ring is filled by xmit (serialised by the core) and
 *    emptied by send completions: send_free counts free slots, and a slot
 *    is reused only after its completion ran (RC completes in order).
 *    Plain SENDs are signaled only every few WRs (ib_send.c): a
 *    completion releases every slot from send_tail up to its own.
 *  - rds_ib_conn.rx_lock (bottom halves off) protects the receive ring
 *    (which slots have a page: rx_unfilled), the reassembly state, the
 *    held frames and a parked message (ib_recv.c): receive completions
 *    (one CQ, softirq), rx_resume_w and rx_refill_w take it.
 */
#ifndef _RDS_ZC_IB_H
#define _RDS_ZC_IB_H

#include <linux/completion.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/refcount.h>
#include <linux/rwsem.h>
#include <linux/semaphore.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "ib_proto.h"
#include "transport.h"

struct net;
struct rds_conn;
struct rds6_info_rdma_connection;
struct rds_msg;
struct rds_rdma_op;

/* Memory registration of a device (ib_mr_*.c); ib_mr.h has the rules. */
struct rds_ib_mr_dev {
	spinlock_t	lock;		/* pool, live, counts, dead, qp_resetting */
	struct list_head pool;		/* free ib_mr, oldest first (qp_entry) */
	struct list_head live;		/* struct rds_ib_mr registered */
	unsigned int	nr_mrs;		/* allocated, free or live */
	unsigned int	nr_free;	/* on pool */
	unsigned int	nr_releasing;	/* LOCAL_INVs posted, not finished */
	bool		dead;		/* the device is going away */
	bool		qp_resetting;	/* recovery owns qp: post nothing */
	wait_queue_head_t pool_wait;	/* for nr_free or !nr_releasing */
	wait_queue_head_t kill_wait;	/* for a chained REG_MR to end */

	struct rw_semaphore qp_sem;	/* read: posting on qp; write: reset */
	struct semaphore sq_slots;	/* free send queue entries of qp */
	struct ib_cq	*cq;		/* NULL: no registration here */
	struct ib_qp	*qp;
	struct ib_cqe	fault_cqe;	/* inject_reg_qp_error's request */
	struct work_struct recover_w;	/* rds_ib_reg_recover() */

	unsigned int	pool_size;	/* most nr_mrs may reach */
	unsigned int	max_pages;	/* per MR */
};

struct rds_ib_device {
	struct list_head item;		/* on rds_ib_devices, under its lock */
	struct ib_device *ibdev;
	struct ib_pd	*pd;		/* shared by every connection on it */
	refcount_t	refs;		/* users; the list holds one */
	struct completion unused;	/* completed when refs reaches 0 */
	struct kref	mem;		/* the struct itself: users + MRs */
	struct rds_ib_mr_dev mrd;
	spinlock_t	conns_lock;	/* conns and removing */
	struct list_head conns;		/* rds_ib_conn using it */
	bool		removing;	/* remove() started: no new users */
};

struct rds_ib_send_slot {
	struct ib_cqe	cqe;
	struct rds_msg	*msg;		/* referenced while posted */
	u64		dma;		/* payload mapping, 0 if none */
	u32		dma_len;
	/* A zero-copy fragment's rest, in the next user page, 0 if none. */
	u64		dma2;
	u32		dma2_len;
	bool		dma_single;	/* inline payload: map_single */
	bool		reg;		/* the REG_MR of msg->reg_mr */
	bool		rdma;		/* an RDMA WR of msg->op */
	bool		rdma_last;	/* its last: unmap the operation */
	bool		op_last;	/* msg->op ends with this WR */
	/* A message's SEND, chained to its next fragment's (rds_ib_xmit()). */
	struct ib_send_wr wr;
	struct ib_sge	sge[3];		/* header, payload, payload's rest */
};

struct rds_ib_recv_slot {
	struct ib_cqe	cqe;
	struct page	*page;		/* 4 KiB fragment buffer */
	u64		dma;
	/* Its receive WR, built once: sge[1] follows page and dma. */
	struct ib_recv_wr wr;
	struct ib_sge	sge[2];		/* the header, the page */
};

/* A data frame received while the connection is parked (ib_recv.c). */
struct rds_ib_rx_held {
	u32		slot;		/* in recv_slots, not posted */
	u32		payload;	/* bytes after the header */
};

/* rds_ib_conn.flags */
enum {
	RDS_IB_SEND_FULL,	/* xmit waits for a free slot */
	RDS_IB_ACK_REQUESTED,	/* an ACK frame is owed to the peer */
	RDS_IB_ACK_IN_FLIGHT,	/* the ACK frame is posted */
	RDS_IB_CREDIT_WAIT,	/* a SEND waits for the peer's credits */
	RDS_IB_RETIRING,	/* torn down while the connection goes on */
	RDS_IB_RX_STOPPED,	/* teardown: receive nothing more */
};

struct rds_ib_conn {
	struct rds_conn	*conn;
	struct list_head dev_item;	/* on rdev->conns */

	struct mutex	cm_mutex;	/* see the top of this file */
	struct rdma_cm_id *cm_id;
	struct rds_ib_device *rdev;	/* referenced while set */
	bool		active;		/* we sent the request */
	u16		version;	/* negotiated */
	struct ib_cq	*send_cq;
	struct ib_cq	*recv_cq;
	struct ib_qp	*qp;
	bool		qp_own;		/* qp is not the id's: we move its states */
	/*
	 * qp's number while qp is set, else 0: written under cm_mutex,
	 * read without it by the handler of a request from this host
	 * (rds_ib_req_from_self()).
	 */
	u32		qp_num;
	unsigned int	max_sge;	/* per RDMA WRITE */
	unsigned int	max_sge_rd;	/* per RDMA READ */
	struct rds_rdma_op *xmit_op;	/* mapped, not all posted; xmit's */
	unsigned long	flags;		/* RDS_IB_* bits */

	/* Send ring, and one header more for the ACK frame. */
	unsigned int	send_nr;
	unsigned int	send_head;	/* next slot to use, xmit only */
	unsigned int	send_unsignaled; /* WRs since the last signaled, xmit */
	unsigned int	send_tail;	/* oldest slot not released, completions */
	atomic_t	send_free;
	struct rds_ib_send_slot *send_slots;
	struct rds_ib_hdr *send_hdrs;	/* send_nr + 1, DMA mapped */
	u64		send_hdrs_dma;
	struct ib_cqe	ack_cqe;
	atomic64_t	ack_next;	/* last complete message received */
	unsigned long	tx_done_jiffies; /* last send completion, or setup */

	/*
	 * Flow control (ib_credit.c), set up before the incarnation is
	 * reported up and reset at teardown: send credits (low 16 bits) and
	 * posted receive credits not yet returned (high 16 bits).
	 */
	bool		fc_grant;	/* we offered credits: return them */
	bool		fc_enforce;	/* the peer offered: spend them */
	unsigned int	credit_batch;	/* posted count that asks for an ACK */
	atomic_t	credits;

	/* Receive ring and reassembly. */
	unsigned int	recv_nr;
	struct rds_ib_recv_slot *recv_slots;
	struct rds_ib_hdr *recv_hdrs;	/* recv_nr, DMA mapped */
	u64		recv_hdrs_dma;
	spinlock_t	rx_lock;	/* see the top of this file */
	struct rds_msg	*rx_msg;	/* being reassembled, or parked */
	struct rds_ib_hdr rx_hdr;	/* its first header */
	u32		rx_left;	/* payload bytes still to come */
	/*
	 * What the highest h_ack handed to the core on this incarnation
	 * covered (rds_zc_conn_acked()): every frame repeats the peer's
	 * last ACK, and only a higher one can release anything.  Receive
	 * completions only.
	 */
	u64		rx_acked;
	bool		rx_parked;	/* rx_msg complete, refused: hold */
	struct rds_ib_rx_held *rx_held;	/* recv_nr entries, a FIFO */
	unsigned int	rx_held_head;
	unsigned int	rx_held_nr;
	struct delayed_work rx_resume_w; /* offers the parked rx_msg again */
	unsigned int	rx_unfilled;	/* slots without a page, not posted */
	struct delayed_work rx_refill_w; /* gives them pages and posts them */

	/*
	 * RDS_INFO_IB_CONNECTIONS: set under cm_mutex before the
	 * incarnation is reported up, read without lock while it is.
	 */
	u8		info_src_gid[16];
	u8		info_dst_gid[16];
	u8		info_sl;
	u32		info_mr_max;	/* the device's MR pool */
	u32		info_mr_pages;	/* pages per MR */
};

/**
 * rds_ib_conn_drop() - the current incarnation failed: drop the connection
 * @ic: the connection's transport state
 * @reason: a few words for the trace
 *
 * Not while the incarnation is retired under a connection that goes on
 * (we yield to the peer's request, rds_ib_cm_req()): the work requests its
 * drain flushes say nothing about the connection.
 */
static inline void rds_ib_conn_drop(struct rds_ib_conn *ic, const char *reason)
{
	if (!test_bit(RDS_IB_RETIRING, &ic->flags))
		rds_zc_conn_drop(ic->conn, reason);
}

/* Counters of the transport, appended to RDS_INFO_COUNTERS (ib_stats.c). */
enum rds_ib_stat {
	RDS_IB_STAT_TX_FRAMES,
	RDS_IB_STAT_TX_RING_FULL,
	RDS_IB_STAT_TX_ACK_FRAMES,
	RDS_IB_STAT_TX_CREDIT_STALL,
	RDS_IB_STAT_TX_CREDIT_UPDATES,
	RDS_IB_STAT_RX_FRAMES,
	RDS_IB_STAT_RX_ACK_FRAMES,
	RDS_IB_STAT_RX_CREDIT_UPDATES,
	RDS_IB_STAT_RX_COPIED,
	RDS_IB_STAT_RX_PARKED,
	RDS_IB_STAT_RX_HELD_FRAMES,
	RDS_IB_STAT_RX_NOMEM,
	RDS_IB_STAT_RX_REFILLED,
	RDS_IB_STAT_CONN_FLOW_CONTROL,
	RDS_IB_STAT_TX_RDMA,
	RDS_IB_STAT_TX_ATOMIC,
	RDS_IB_STAT_MR_REG,
	RDS_IB_STAT_MR_REG_CHAINED,
	RDS_IB_STAT_MR_REG_UNCHAINED,
	RDS_IB_STAT_MR_INVALIDATE,
	RDS_IB_STAT_MR_INV_POSTED,
	RDS_IB_STAT_MR_INV_NOWAIT,
	RDS_IB_STAT_MR_POOL_REUSE,
	RDS_IB_STAT_MR_POOL_ALLOC,
	RDS_IB_STAT_MR_POOL_EXHAUSTED,
	RDS_IB_STAT_MR_POOL_WAIT,
	RDS_IB_STAT_MR_QP_FULL,
	RDS_IB_STAT_MR_QP_RECOVERED,
	RDS_IB_STAT_MR_REG_BOUNCED,
	RDS_IB_STAT_CONN_REFUSED_ADDR,
	RDS_IB_STAT_CONN_REFUSED_GID,
	RDS_IB_STAT_NR
};

struct rds_ib_stats {
	u64 val[RDS_IB_STAT_NR];
};

DECLARE_PER_CPU(struct rds_ib_stats, rds_ib_stats);

#define rds_ib_stat_inc(s)	this_cpu_inc(rds_ib_stats.val[s])
#define rds_ib_stat_add(s, n)	this_cpu_add(rds_ib_stats.val[s], n)

/* ib_stats.c */
extern const struct rds_transport_stats rds_ib_stats_ops;

/* ib_device.c */

/**
 * struct rds_ib_device_hooks - what the layers above add to each device
 * @add: a new device, its PD allocated; may leave it without what it adds
 * @remove: the device goes, every user gone, its PD still there
 *
 * Handed to rds_ib_device_init() by the module, so that the device list
 * never calls up by name.
 */
struct rds_ib_device_hooks {
	void (*add)(struct rds_ib_device *rdev);
	void (*remove)(struct rds_ib_device *rdev);
};

int rds_ib_device_init(const struct rds_ib_device_hooks *hooks);
void rds_ib_device_exit(void);
struct rds_ib_device *rds_ib_device_by_addr(struct net *net,
					    const struct in6_addr *addr, u32 scope);

/**
 * rds_ib_no_device() - the errno of a failed rds_ib_device_by_addr()
 * @err: what it returned
 * @none: the caller's errno for "no RDMA device has that address"
 *
 * Running out of memory in the search says nothing of the address, so it
 * stays ENOMEM: an application may try again.
 */
static inline int rds_ib_no_device(const struct rds_ib_device *err, int none)
{
	return PTR_ERR(err) == -ENOMEM ? -ENOMEM : none;
}

struct rds_ib_device *rds_ib_device_get(struct ib_device *ibdev);

/**
 * rds_ib_device_put() - drop a reference from rds_ib_device_by_addr()
 * @rdev: the device, may be NULL
 *
 * Inline: every registration and connection lookup drops one.
 */
static inline void rds_ib_device_put(struct rds_ib_device *rdev)
{
	if (rdev && refcount_dec_and_test(&rdev->refs))
		complete(&rdev->unused);
}

void rds_ib_device_free(struct kref *mem);
int rds_ib_device_add_conn(struct rds_ib_device *rdev,
			   struct rds_ib_conn *ic);
void rds_ib_device_del_conn(struct rds_ib_device *rdev,
			    struct rds_ib_conn *ic);

/* ib_conn.c */
int rds_ib_conn_alloc(struct rds_conn *conn, gfp_t gfp);
void rds_ib_conn_free(struct rds_conn *conn);
void rds_ib_conn_info(struct rds_conn *conn,
		      struct rds6_info_rdma_connection *ri);

/* ib_cm.c */
int rds_ib_listen_init(const struct rds_transport *trans);
void rds_ib_listen_exit(void);
int rds_ib_conn_connect(struct rds_conn *conn);
void rds_ib_conn_shutdown(struct rds_conn *conn);

/* ib_send.c */
int rds_ib_send_ring_init(struct rds_ib_conn *ic);
void rds_ib_send_ring_free(struct rds_ib_conn *ic);
void rds_ib_send_quiesce(struct rds_ib_conn *ic);
int rds_ib_xmit(struct rds_conn *conn, struct rds_msg *m, unsigned int *frag);
void rds_ib_conn_tx_state(struct rds_conn *conn, unsigned int *posted,
			  unsigned long *idle);
void rds_ib_send_ack(struct rds_ib_conn *ic);
void rds_ib_send_op_unmap(struct rds_ib_conn *ic);

struct rds_mr;

/* ib_mr_pool.c */
extern unsigned int rds_ib_fmr_pool_size;
extern unsigned int rds_ib_fmr_message_size;
extern struct workqueue_struct *rds_ib_mr_wq;
void rds_ib_mr_dev_init(struct rds_ib_device *rdev);
void rds_ib_mr_dev_exit(struct rds_ib_device *rdev);
int rds_ib_mr_init(void);
void rds_ib_mr_exit(void);

/* ib_mr_reg.c */
int rds_ib_mr_reg(struct net *net, const struct in6_addr *laddr, u32 scope,
		  struct rds_mr *mr);
int rds_ib_mr_prepare(struct net *net, const struct in6_addr *laddr,
		      u32 scope, struct rds_mr *mr);
bool rds_ib_mr_chain(struct rds_mr *mr, struct rds_ib_device *rdev,
		     struct ib_reg_wr *wr);
void rds_ib_mr_unchain(struct rds_mr *mr);
void rds_ib_mr_chain_done(struct rds_mr *mr, enum ib_wc_status status);
int rds_ib_mr_sync(struct rds_mr *mr, enum dma_data_direction dir);

/* ib_mr_release.c */
void rds_ib_mr_dereg(struct rds_mr *mr);
bool rds_ib_mr_dereg_nowait(struct rds_mr *mr);
int rds_ib_mr_kill(struct rds_mr *mr, bool wait);

/* ib_reg_qp.c: the registration QP, for the ib_mr_*.c files */
int rds_ib_reg_qp_create(struct rds_ib_device *rdev);
void rds_ib_reg_qp_stop(struct rds_ib_mr_dev *mrd);
void rds_ib_reg_qp_destroy(struct rds_ib_mr_dev *mrd);
void rds_ib_reg_wait_slot(struct rds_ib_mr_dev *mrd);

/**
 * rds_ib_reg_post() - post a work request on the registration QP
 * @mrd: the device's registration state
 * @wr: one signalled work request, its wr_cqe set
 *
 * Takes a send queue entry, waiting for one if all are in use; the
 * completion gives it back.  Caller holds qp_sem for reading and checked
 * mrd->qp.  Inline: one per registration and per waited invalidation.
 *
 * The post is made with bottom halves off, as rds_ib_mr_dereg_nowait()
 * makes its own (under mrd->lock): a provider that does the work in a
 * softirq (rxe's tasklets on 6.1) raises it then, and local_bh_enable()
 * runs it here, on this CPU, before the caller waits.  Posted from
 * plain process context, the raise wakes ksoftirqd, and the caller's
 * wait sleeps until ksoftirqd has run: two context switches per
 * registration.  A device that completes by interrupt is not affected.
 *
 * Context: process context, may sleep.
 * Return: 0 or ib_post_send()'s error.
 */
static inline int rds_ib_reg_post(struct rds_ib_mr_dev *mrd,
				  struct ib_send_wr *wr)
{
	int ret;

	if (down_trylock(&mrd->sq_slots))
		rds_ib_reg_wait_slot(mrd);
	wr->send_flags = IB_SEND_SIGNALED;
	local_bh_disable();
	ret = ib_post_send(mrd->qp, wr, NULL);
	local_bh_enable();
	if (ret)
		up(&mrd->sq_slots);
	return ret;
}

void rds_ib_reg_failed(struct rds_ib_mr_dev *mrd, enum ib_wc_status status);
void rds_ib_reg_inject_fault(struct rds_ib_mr_dev *mrd);
extern bool rds_ib_reg_fault;

/*
 * inject_reg_qp_error, once, if it is set (rds_ib_reg_inject_fault()).
 * Inline: every registration tests it, and it is almost never set.
 */
static inline void rds_ib_reg_maybe_fail(struct rds_ib_mr_dev *mrd)
{
	if (unlikely(READ_ONCE(rds_ib_reg_fault)))
		rds_ib_reg_inject_fault(mrd);
}

/* ib_credit.c */
void rds_ib_credit_reset(struct rds_ib_conn *ic);
u32 rds_ib_credit_offer(struct rds_ib_conn *ic);
void rds_ib_credit_start(struct rds_ib_conn *ic, u32 offer);
bool rds_ib_credit_grab(struct rds_ib_conn *ic, u8 *adv);
unsigned int rds_ib_credit_grab_many(struct rds_ib_conn *ic,
				     unsigned int want, u8 *adv);
bool rds_ib_credit_can_send(struct rds_ib_conn *ic);
bool rds_ib_credit_add(struct rds_ib_conn *ic, u8 n);
bool rds_ib_credit_posted(struct rds_ib_conn *ic);

/* ib_recv.c */
void rds_ib_recv_conn_init(struct rds_ib_conn *ic);
void rds_ib_recv_stop(struct rds_ib_conn *ic);
int rds_ib_recv_ring_init(struct rds_ib_conn *ic);
int rds_ib_recv_ring_post(struct rds_ib_conn *ic);
void rds_ib_recv_ring_free(struct rds_ib_conn *ic);

#endif /* _RDS_ZC_IB_H */
