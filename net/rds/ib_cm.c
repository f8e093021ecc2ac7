// SPDX-License-Identifier: GPL-2.0
/*
 * Connection management over rdma_cm: the listener, the active connect,
 * the passive accept with the distribution's collision rules, QP and CQ
 * setup, and teardown.  Rules: rds_zc-wire.rst sections 1 to 3.
 *
 * Setup is a ladder (device, CQs, rings, QP, receives) unwound in reverse
 * by rds_ib_teardown(), which also serves a half-built incarnation.
 */
#include <linux/delay.h>
#include <linux/errno.h>
#include <linux/in.h>
#include <linux/llist.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/addrconf.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/route.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>
#include <uapi/linux/rds.h>

#include "addr.h"
#include "ib.h"
#include "message.h"
#include "transport.h"

static struct rdma_cm_id *rds_ib_listen_id;
static struct rdma_cm_id *rds_ib_listen6_id;	/* NULL without IPv6 */
/* The transport connections from peers are made for (rds_ib_listen_init()). */
static const struct rds_transport *rds_ib_cm_transport;

static unsigned int rds_ib_send_wr = 256;
module_param_named(send_wr, rds_ib_send_wr, uint, 0644);
MODULE_PARM_DESC(send_wr, "Send ring entries per connection, at most the device's (default 256)");

static unsigned int rds_ib_recv_wr = 1024;
module_param_named(recv_wr, rds_ib_recv_wr, uint, 0644);
MODULE_PARM_DESC(recv_wr, "Receive buffers of 4 KiB per connection (default 1024)");

static int rds_ib_cm_handler(struct rdma_cm_id *id,
			     struct rdma_cm_event *event);

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

/*
 * Can the port of an id send a connection management MAD right now?  Its
 * RDMA port must be ACTIVE and the netdev it is bound to up, with carrier:
 * "ip link set down" clears IFF_UP before rxe hears of it.
 */
static bool rds_ib_port_up(struct ib_device *ibdev, u32 port, int ifindex)
{
	struct ib_port_attr attr;
	struct net_device *ndev;
	bool up = true;

	if (ib_query_port(ibdev, port, &attr) || attr.state != IB_PORT_ACTIVE)
		return false;
	if (!ifindex)
		return true;
	rcu_read_lock();
	ndev = dev_get_by_index_rcu(&init_net, ifindex);
	if (ndev)
		up = netif_running(ndev) && netif_carrier_ok(ndev);
	rcu_read_unlock();
	return up;
}

/*
 * Hold back the MADs of a teardown (DREQ or REJ, which rdma_disconnect()
 * and rdma_destroy_id() send once the CM exchange has begun) until the
 * port can send again.  Soft-RoCE on 6.1 breaks its GSI QP for good
 * when a MAD is posted while its netdev is down: the send fails its route
 * lookup, rxe moves QP1 to the error state and flushes its receive queue,
 * and ib_mad moves it back to RTS, which in rxe makes only the send side
 * ready again.  From then on every CM message that arrives is dropped,
 * and no connection to or from this device comes up until the device is
 * created again.  Gives up when the device is being removed or the
 * connection destroyed (module unload).  Caller holds work_mutex.
 */
static void rds_ib_wait_port_up(struct rds_ib_conn *ic)
{
	struct rds_ib_device *rdev;
	struct ib_device *ibdev;
	bool waited = false;
	int ifindex;
	u32 port;

	mutex_lock(&ic->cm_mutex);
	if (!ic->cm_id || !ic->qp || !ic->rdev) {
		mutex_unlock(&ic->cm_mutex);
		return;
	}
	/* Stable until this shutdown tears the QP down: rdev is held. */
	rdev = ic->rdev;
	ibdev = ic->cm_id->device;
	port = ic->cm_id->port_num;
	ifindex = ic->cm_id->route.addr.dev_addr.bound_dev_if;
	mutex_unlock(&ic->cm_mutex);

	while (!rds_ib_port_up(ibdev, port, ifindex) &&
	       !READ_ONCE(rdev->removing) &&
	       !test_bit(RDS_CONN_DEAD, &ic->conn->flags)) {
		if (!waited)
			pr_debug("rds_zc_ib: %pI6c->%pI6c: port %s/%u down, teardown waits for it\n",
				 &ic->conn->laddr, &ic->conn->faddr,
				 dev_name(&ibdev->dev), port);
		waited = true;
		msleep(100);
	}
}

/* Undo rds_ib_setup() step by step.  Caller holds cm_mutex. */
static void rds_ib_teardown(struct rds_ib_conn *ic)
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
}

/*
 * The transport retry count of our QPs (7: the most; rxe retries for
 * ever).  The connection request carries the requester's count for both
 * QPs, and the distribution asks for 1 (its rds_ib_retry_count): a QP of
 * ours that took that gave up an RDMA READ as DROPPED when two of its
 * retransmissions went unanswered, a few lost frames on a busy link.  A
 * connection that is really dead is found by the ACK watchdog instead
 * (conn_state.c), so an accepted QP keeps our count (rds_ib_qp_ready()).
 */
#define RDS_IB_RETRY_COUNT	7

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
static int rds_ib_qp_ready(struct rds_ib_conn *ic, struct rdma_cm_id *id,
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
static int rds_ib_setup(struct rds_ib_conn *ic, struct rdma_cm_id *id,
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

	/* Posted before the handshake ends, so no SEND meets an RNR. */
	return rds_ib_recv_ring_post(ic);
}

/* Private data in either form: IPv4 (and mapped) or IPv6 (2.1). */
union rds_ib_privs {
	struct rds_ib_priv	v4;
	struct rds_ib_priv6	v6;
};

/* The size of the form for a connection between such addresses. */
static u8 rds_ib_priv_size(bool v6)
{
	return v6 ? sizeof(struct rds_ib_priv6) : sizeof(struct rds_ib_priv);
}

/*
 * The common part of private data @p of @len bytes in the form of @v6,
 * and its addresses if @saddr; NULL if it is shorter than that form.
 */
static const struct rds_ib_priv_cmn *
rds_ib_priv_parse(const union rds_ib_privs *p, u8 len, bool v6,
		  struct in6_addr *saddr, struct in6_addr *daddr)
{
	if (!p || len < rds_ib_priv_size(v6))
		return NULL;
	if (v6) {
		if (saddr) {
			*saddr = p->v6.saddr;
			*daddr = p->v6.daddr;
		}
		return &p->v6.cmn;
	}
	if (saddr) {
		rds_addr_set_v4(saddr, p->v4.saddr);
		rds_addr_set_v4(daddr, p->v4.daddr);
	}
	return &p->v4.cmn;
}

/* Our private data, in the form of the connection; return its size. */
static u8 rds_ib_fill_priv(struct rds_ib_conn *ic, union rds_ib_privs *p,
			   u16 version)
{
	const struct rds_conn *conn = ic->conn;
	struct rds_ib_priv_cmn *cmn;
	bool v6 = !rds_addr_is_v4(&conn->laddr);

	memset(p, 0, sizeof(*p));
	if (v6) {
		p->v6.saddr = conn->laddr;
		p->v6.daddr = conn->faddr;
		cmn = &p->v6.cmn;
	} else {
		p->v4.saddr = rds_addr_v4(&conn->laddr);
		p->v4.daddr = rds_addr_v4(&conn->faddr);
		cmn = &p->v4.cmn;
	}
	cmn->major = version >> 8;
	cmn->minor = version & 0xff;
	cmn->minor_mask = cpu_to_be16(RDS_IB_MINOR_MASK);
	cmn->tos = conn->tos;
	/* The whole posted receive ring, if we do flow control (6.1). */
	cmn->credit = cpu_to_be32(rds_ib_credit_offer(ic));
	/* ack_seq stays 0, as the distribution sends it (2.3). */
	return rds_ib_priv_size(v6);
}

static u8 rds_ib_clamp_u8(int v)
{
	return clamp(v, 0, 255);
}

/* ROUTE_RESOLVED: build the QP and send the request (section 1.3). */
static int rds_ib_connect_qp(struct rds_ib_conn *ic, struct rdma_cm_id *id)
{
	struct ib_device_attr *da = &id->device->attrs;
	struct rdma_conn_param param = {};
	union rds_ib_privs priv;
	int ret;

	ret = rds_ib_setup(ic, id, false);
	if (ret)
		return ret;
	param.private_data_len = rds_ib_fill_priv(ic, &priv,
						  RDS_IB_VERSION_3_1);
	param.private_data = &priv;
	param.responder_resources = rds_ib_clamp_u8(da->max_qp_rd_atom);
	param.initiator_depth = rds_ib_clamp_u8(da->max_qp_init_rd_atom);
	param.retry_count = RDS_IB_RETRY_COUNT;
	param.rnr_retry_count = 7;
	return rdma_connect_locked(id, &param);	/* in the handler */
}

/* ESTABLISHED on the active side: check the version the peer chose. */
static int rds_ib_check_rep(struct rds_ib_conn *ic,
			    const struct rdma_cm_event *event)
{
	const struct rds_ib_priv_cmn *p;
	u16 version;

	p = rds_ib_priv_parse(event->param.conn.private_data,
			      event->param.conn.private_data_len,
			      !rds_addr_is_v4(&ic->conn->laddr), NULL, NULL);
	if (!p || !p->major) {
		ic->version = RDS_IB_VERSION(4, 1);
		return 0;
	}
	version = RDS_IB_VERSION(p->major, p->minor);
	if (version < RDS_IB_VERSION_3_1)
		return -EPROTO;
	ic->version = version;
	if (p->ack_seq)
		rds_zc_conn_acked(ic->conn, be64_to_cpu(p->ack_seq));
	rds_ib_credit_start(ic, be32_to_cpu(p->credit));
	return 0;
}

/*
 * Which version to answer a request with (section 2.2): 3.1 for 3.1,
 * 4.n for a 4.x mask we share, 4.0 for a request without a version; 0
 * to refuse.  @p is the common part of the request's private data of
 * @len bytes, NULL when it is shorter than its form.
 */
static u16 rds_ib_req_version(const struct rds_ib_priv_cmn *p, u8 len)
{
	u16 mask;

	if (!len)
		return 0;
	if (!p || !p->major)
		return RDS_IB_VERSION(4, 0);
	mask = be16_to_cpu(p->minor_mask) & RDS_IB_MINOR_MASK;
	if (p->major == 4 && mask)
		return RDS_IB_VERSION(4, fls(mask) - 1);
	if (p->major == 3 && p->minor == 1)
		return RDS_IB_VERSION_3_1;
	return 0;
}

/* @reason: RDS_IB_REJ_INCOMPAT or RDS_IB_REJ_RETRY, in host order. */
static void rds_ib_reject(struct rdma_cm_id *id, int reason)
{
	rdma_reject(id, &reason, sizeof(reason), IB_CM_REJ_CONSUMER_DEFINED);
}

/*
 * The interface that has local IPv6 address @addr, 0 if none.  Two
 * interfaces with one link-local address are not told apart: rdma_cm
 * does not say which one a request came in on.
 */
static u32 rds_ib_addr_ifindex(const struct in6_addr *addr)
{
	struct net_device *dev;
	u32 ifindex = 0;

	rcu_read_lock();
	for_each_netdev_rcu(&init_net, dev) {
		if (ipv6_chk_addr(&init_net, addr, dev, 1)) {
			ifindex = dev->ifindex;
			break;
		}
	}
	rcu_read_unlock();
	return ifindex;
}

/*
 * A request's private data names the two RDS addresses of the connection
 * it is for; rdma_cm reports the IP addresses the request came from and
 * went to, checked against the routes of the device it arrived on.  Only
 * a request whose private data agrees with them, from a remote unicast
 * address to one of ours, is taken: anything else would let a host on the
 * fabric reach loopback-bound sockets, pose as this host or as a third
 * one, or rewrite a congestion map it does not own.  Loopback traffic
 * never needs the IB transport: local destinations go through the core's
 * own delivery.
 */
static bool rds_ib_req_addrs_ok(const struct rdma_cm_id *id,
				const struct in6_addr *saddr,
				const struct in6_addr *daddr, u32 *dev_if)
{
	struct in6_addr to, from;
	__be16 port;
	u32 scope;

	if (rds_addr_parse(&id->route.addr.src_addr,
			   sizeof(id->route.addr.src_addr), -EINVAL, &to,
			   &port, &scope) ||
	    rds_addr_parse(&id->route.addr.dst_addr,
			   sizeof(id->route.addr.dst_addr), -EINVAL, &from,
			   &port, &scope) ||
	    !ipv6_addr_equal(daddr, &to) || !ipv6_addr_equal(saddr, &from))
		return false;
	if (rds_addr_is_v4(daddr)) {
		*dev_if = 0;
		return !ipv4_is_loopback(rds_addr_v4(saddr)) &&
		       !ipv4_is_loopback(rds_addr_v4(daddr)) &&
		       inet_addr_type(&init_net, rds_addr_v4(daddr)) ==
		       RTN_LOCAL &&
		       inet_addr_type(&init_net, rds_addr_v4(saddr)) ==
		       RTN_UNICAST;
	}
	if (!(ipv6_addr_type(saddr) & IPV6_ADDR_UNICAST) ||
	    !(ipv6_addr_type(daddr) & IPV6_ADDR_UNICAST) ||
	    ipv6_addr_loopback(saddr) || ipv6_addr_loopback(daddr) ||
	    ipv6_chk_addr(&init_net, saddr, NULL, 0))
		return false;
	/* A link-local pair lives on the link of our address (addr.h). */
	*dev_if = rds_ib_addr_ifindex(daddr);
	if (!*dev_if)
		return false;
	if (!rds_addr_link_local(daddr) && !rds_addr_link_local(saddr))
		*dev_if = 0;
	return true;
}

/*
 * An id given up inside another id's CM callback (the yield below) is
 * destroyed from a work: rdma_destroy_id() takes the id's handler_mutex,
 * of the class rdma_cm holds twice around the callback already (the
 * listener's and the new id's), which lockdep reports as possible
 * recursive locking.  Its context is NULL: its late events find nothing.
 */
struct rds_ib_retired_id {
	struct llist_node node;
	struct rdma_cm_id *id;
};

static LLIST_HEAD(rds_ib_retired);

static void rds_ib_retire_work(struct work_struct *work)
{
	struct llist_node *list = llist_del_all(&rds_ib_retired);
	struct rds_ib_retired_id *r, *tmp;

	llist_for_each_entry_safe(r, tmp, list, node) {
		rdma_destroy_id(r->id);
		kfree(r);
	}
}

static DECLARE_WORK(rds_ib_retire_w, rds_ib_retire_work);

static void rds_ib_retire_id(struct rdma_cm_id *id)
{
	/* A few bytes that must not fail: the id would stay for ever. */
	struct rds_ib_retired_id *r = kmalloc(sizeof(*r),
					      GFP_KERNEL | __GFP_NOFAIL);

	r->id = id;
	llist_add(&r->node, &rds_ib_retired);
	queue_work(system_wq, &rds_ib_retire_w);
}

/*
 * CONNECT_REQUEST on the listener (section 1.4).  Returning non-zero
 * makes rdma_cm destroy the new id, which we do only before the id is
 * attached to a connection.
 */
static int rds_ib_cm_req(struct rdma_cm_id *id, struct rdma_cm_event *event,
			 bool v6)
{
	u8 len = event->param.conn.private_data_len;
	struct ib_device_attr *da = &id->device->attrs;
	const struct rds_ib_priv_cmn *p;
	struct rdma_conn_param param = {};
	struct rdma_cm_id *old = NULL;
	struct in6_addr saddr, daddr;
	union rds_ib_privs reply;
	struct rds_ib_conn *ic;
	struct rds_conn *conn;
	int reason = RDS_IB_REJ_INCOMPAT;
	u32 dev_if;
	u16 version;
	int ret;

	p = rds_ib_priv_parse(event->param.conn.private_data, len, v6, &saddr,
			      &daddr);
	version = rds_ib_req_version(p, len);
	if (!version || !p) {
		pr_info_ratelimited("rds_zc_ib: refused a connection with an unsupported protocol version\n");
		goto reject;
	}
	if (!rds_ib_req_addrs_ok(id, &saddr, &daddr, &dev_if)) {
		rds_ib_stat_inc(RDS_IB_STAT_CONN_REFUSED_ADDR);
		pr_info_ratelimited("rds_zc_ib: refused a connection request for %pI6c to %pI6c: not the addresses it came from and to\n",
				    &saddr, &daddr);
		goto reject;
	}
	conn = rds_zc_conn_get(&init_net, &daddr, &saddr, p->tos, dev_if,
			       rds_ib_cm_transport);
	if (IS_ERR(conn)) {
		reason = RDS_IB_REJ_RETRY;
		goto reject;
	}
	ret = rds_zc_conn_accept(conn);
	if (ret && ret != -EINPROGRESS) {
		/* Only a race we win is a refusal (rds_ib_race_refusal()). */
		if (ret != -EBUSY)
			reason = RDS_IB_REJ_RETRY;
		goto reject_put;
	}

	ic = conn->tp;
	mutex_lock(&ic->cm_mutex);
	if (ret) {
		/* We yield: our own attempt makes way for this request. */
		if (!ic->active || !ic->cm_id ||
		    rds_conn_state(conn) != RDS_CONN_CONNECTING) {
			mutex_unlock(&ic->cm_mutex);
			reason = RDS_IB_REJ_RETRY;
			goto reject_put;
		}
		set_bit(RDS_IB_RETIRING, &ic->flags);	/* teardown clears it */
		rds_ib_teardown(ic);
		old = ic->cm_id;
		old->context = NULL;	/* its late events find nothing */
	}
	ic->cm_id = id;
	id->context = ic;
	ic->active = false;
	ic->version = version;
	if (p->ack_seq)
		rds_zc_conn_acked(conn, be64_to_cpu(p->ack_seq));
	ret = rds_ib_setup(ic, id, true);
	if (ret) {
		rds_ib_reject(id, RDS_IB_REJ_RETRY);
		goto drop;
	}
	param.private_data_len = rds_ib_fill_priv(ic, &reply, version);
	rds_ib_credit_start(ic, be32_to_cpu(p->credit));
	param.private_data = &reply;
	/*
	 * The CM presents the request from our side: its responder_resources
	 * is how many READs and atomics the peer will have outstanding at us
	 * (its initiator depth), its initiator_depth how many the peer can
	 * serve for us (its responder resources).
	 */
	param.responder_resources = min_t(int, event->param.conn.responder_resources,
					  rds_ib_clamp_u8(da->max_qp_rd_atom));
	param.initiator_depth = min_t(int, event->param.conn.initiator_depth,
				      rds_ib_clamp_u8(da->max_qp_init_rd_atom));
	param.retry_count = RDS_IB_RETRY_COUNT;	/* the REP has no such field */
	param.rnr_retry_count = 7;
	ret = rds_ib_qp_ready(ic, id, &param);
	if (ret) {
		rds_ib_reject(id, RDS_IB_REJ_RETRY);
		goto drop;
	}
	ret = rdma_accept(id, &param);
	if (ret)
		goto drop;
	mutex_unlock(&ic->cm_mutex);
	if (old)
		rds_ib_retire_id(old);	/* the peer refuses its request */
	rds_zc_conn_put(conn);
	return 0;

drop:
	/* The id is ours now: shutdown destroys it. */
	mutex_unlock(&ic->cm_mutex);
	if (old)
		rds_ib_retire_id(old);
	rds_zc_conn_drop(conn, "accept failed");
	rds_zc_conn_put(conn);
	return 0;

reject_put:
	rds_zc_conn_put(conn);
reject:
	rds_ib_reject(id, reason);
	return 1;
}

/* What RDS_INFO_IB_CONNECTIONS shows of an incarnation about to be up. */
static void rds_ib_info_record(struct rds_ib_conn *ic, struct rdma_cm_id *id)
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

/*
 * Whether a REJ of our request may be the peer's own attempt winning a
 * connect race: the reason 1 that the distribution sends for every
 * reject and we send for a race we win (section 1.6).  Not a reject
 * the CM made, nor our reason for "not now" (rds_ib_cm_req()).
 */
static bool rds_ib_race_refusal(struct rdma_cm_id *id,
				struct rdma_cm_event *event)
{
	const void *data;
	u8 len = 0;
	int reason;

	data = rdma_consumer_reject_data(id, event, &len);
	if (!data || len < sizeof(reason))
		return false;
	memcpy(&reason, data, sizeof(reason));
	return reason == RDS_IB_REJ_INCOMPAT;
}

static int rds_ib_cm_handler(struct rdma_cm_id *id,
			     struct rdma_cm_event *event)
{
	struct rds_ib_conn *ic = id->context;
	int ret = 0;

	if (event->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return rds_ib_cm_req(id, event, false);
	if (!ic)
		return 0;	/* the listener's own events */

	mutex_lock(&ic->cm_mutex);
	if (ic->cm_id != id)
		goto out;	/* an incarnation already torn down */

	switch (event->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		rdma_set_service_type(id, ic->conn->tos);
		ret = rdma_resolve_route(id, RDS_IB_RESOLVE_MS);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		/* No request while the port is down: see rds_ib_wait_port_up(). */
		if (!rds_ib_port_up(id->device, id->port_num,
				    id->route.addr.dev_addr.bound_dev_if))
			ret = -ENETDOWN;
		else
			ret = rds_ib_connect_qp(ic, id);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (ic->active)
			ret = rds_ib_check_rep(ic, event);
		if (!ret) {
			rds_ib_info_record(ic, id);
			rds_zc_conn_connected(ic->conn);
		}
		break;
	case RDMA_CM_EVENT_REJECTED:
		if (ic->active && rds_ib_race_refusal(id, event))
			rds_zc_conn_refused(ic->conn);
		fallthrough;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_ADDR_CHANGE:
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		rds_zc_conn_drop(ic->conn, rdma_event_msg(event->event));
		break;
	default:
		break;
	}
	if (ret)
		rds_zc_conn_drop(ic->conn, rdma_event_msg(event->event));
out:
	mutex_unlock(&ic->cm_mutex);
	return 0;
}

/*
 * The handler of the IPv6 listener and of the ids it accepts: requests
 * on it carry the IPv6 form of private data (section 1.2).
 */
static int rds_ib_cm_handler6(struct rdma_cm_id *id,
			      struct rdma_cm_event *event)
{
	if (event->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return rds_ib_cm_req(id, event, true);
	return rds_ib_cm_handler(id, event);
}

/**
 * rds_ib_conn_connect() - start the active side of a connection
 * @conn: a connection the core moved to CONNECTING
 *
 * Return: 0 when address resolution started, or a negative errno.
 */
int rds_ib_conn_connect(struct rds_conn *conn)
{
	struct rds_ib_conn *ic = conn->tp;
	bool v4 = rds_addr_is_v4(&conn->laddr);
	struct sockaddr_storage src, dst;
	struct rdma_cm_id *id;
	int ret;

	/* IPv4 to the historical port, IPv6 to its own (section 1.2). */
	rds_addr_fill(&src, &conn->laddr, 0, conn->dev_if);
	rds_addr_fill(&dst, &conn->faddr,
		      htons(v4 ? RDS_IB_PORT : RDS_IB_PORT6), conn->dev_if);

	id = rdma_create_id(&init_net, rds_ib_cm_handler, ic, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	mutex_lock(&ic->cm_mutex);
	ic->cm_id = id;
	ic->active = true;
	ret = rdma_resolve_addr(id, (struct sockaddr *)&src,
				(struct sockaddr *)&dst, RDS_IB_RESOLVE_MS);
	mutex_unlock(&ic->cm_mutex);
	return ret;
}

/**
 * rds_ib_conn_shutdown() - tear down the current incarnation, if any
 * @conn: the connection
 *
 * Waits until the port can send again if the CM exchange began (see
 * rds_ib_wait_port_up()), disconnects, drains the QP so that every posted
 * message is given back, frees the QP, CQs and rings, then destroys the id
 * outside cm_mutex: the rdma_cm handler may be waiting for that mutex,
 * and destroying the id waits for the handler.
 */
void rds_ib_conn_shutdown(struct rds_conn *conn)
{
	struct rds_ib_conn *ic = conn->tp;
	struct rdma_cm_id *id;

	rds_ib_wait_port_up(ic);
	mutex_lock(&ic->cm_mutex);
	id = ic->cm_id;
	if (id && ic->qp)
		rdma_disconnect(id);
	rds_ib_teardown(ic);
	ic->cm_id = NULL;
	mutex_unlock(&ic->cm_mutex);
	if (id)
		rdma_destroy_id(id);
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

static struct rdma_cm_id *rds_ib_listen(const struct sockaddr *sa,
					rdma_cm_event_handler handler)
{
	struct rdma_cm_id *id;
	int ret;

	id = rdma_create_id(&init_net, handler, NULL, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return id;
	ret = rdma_bind_addr(id, (struct sockaddr *)sa);
	if (!ret)
		ret = rdma_listen(id, 128);
	if (ret) {
		rdma_destroy_id(id);
		return ERR_PTR(ret);
	}
	return id;
}

/**
 * rds_ib_listen_init() - listen for RDS connections on every RDMA device
 * @trans: the transport the peers' connections are made for
 *
 * On RDS_IB_PORT for IPv4 and on RDS_IB_PORT6 for IPv6, as the
 * distribution's; a host without IPv6 goes on with IPv4 alone.
 *
 * Return: 0, or a negative errno (-EADDRINUSE when another RDS, such as
 * the distribution's rds_rdma, already listens).
 */
int rds_ib_listen_init(const struct rds_transport *trans)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_ANY),
		.sin_port = htons(RDS_IB_PORT),
	};
	struct sockaddr_in6 sin6 = {
		.sin6_family = AF_INET6,
		.sin6_addr = IN6ADDR_ANY_INIT,
		.sin6_port = htons(RDS_IB_PORT6),
	};
	struct rdma_cm_id *id;

	rds_ib_cm_transport = trans;

	id = rds_ib_listen((struct sockaddr *)&sin, rds_ib_cm_handler);
	if (IS_ERR(id)) {
		pr_err("rds_zc_ib: cannot listen on RDMA port %u: %ld\n",
		       RDS_IB_PORT, PTR_ERR(id));
		return PTR_ERR(id);
	}
	rds_ib_listen_id = id;
	if (!IS_ENABLED(CONFIG_IPV6) || !ipv6_mod_enabled())
		return 0;
	id = rds_ib_listen((struct sockaddr *)&sin6, rds_ib_cm_handler6);
	if (IS_ERR(id)) {
		pr_warn("rds_zc_ib: cannot listen on RDMA port %u for IPv6: %ld\n",
			RDS_IB_PORT6, PTR_ERR(id));
		return 0;
	}
	rds_ib_listen6_id = id;
	return 0;
}

/**
 * rds_ib_listen_exit() - stop accepting connections
 */
void rds_ib_listen_exit(void)
{
	if (rds_ib_listen6_id)
		rdma_destroy_id(rds_ib_listen6_id);
	rds_ib_listen6_id = NULL;
	rdma_destroy_id(rds_ib_listen_id);
	rds_ib_listen_id = NULL;
	/* No CONNECT_REQUEST runs any more: nothing is retired after this. */
	flush_work(&rds_ib_retire_w);
}
