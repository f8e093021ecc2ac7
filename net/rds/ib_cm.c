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
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include <net/route.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>
#include <uapi/linux/rds.h>

#include "ib.h"
#include "message.h"
#include "transport.h"

static struct rdma_cm_id *rds_ib_listen_id;
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
	pr_debug("rds_zc_ib: QP event %s on %pI4->%pI4\n",
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
			pr_debug("rds_zc_ib: %pI4->%pI4: port %s/%u down, teardown waits for it\n",
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
		rdma_destroy_qp(ic->cm_id);
		ic->qp = NULL;
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
 * Build the QP of an id whose device is known: send ring + ACK frame +
 * drain, receive ring + drain (section 3.1).  Caller holds cm_mutex.
 */
static int rds_ib_setup(struct rds_ib_conn *ic, struct rdma_cm_id *id)
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
	ret = rdma_create_qp(id, ic->rdev->pd, &attr);
	if (ret)
		return ret;
	ic->qp = id->qp;

	/* Posted before the handshake ends, so no SEND meets an RNR. */
	return rds_ib_recv_ring_post(ic);
}

static void rds_ib_fill_priv(struct rds_ib_conn *ic, struct rds_ib_priv *p,
			     u16 version)
{
	memset(p, 0, sizeof(*p));
	p->saddr = ic->conn->laddr;
	p->daddr = ic->conn->faddr;
	p->major = version >> 8;
	p->minor = version & 0xff;
	p->minor_mask = cpu_to_be16(RDS_IB_MINOR_MASK);
	p->tos = ic->conn->tos;
	/* The whole posted receive ring, if we do flow control (6.1). */
	p->credit = cpu_to_be32(rds_ib_credit_offer(ic));
	/* ack_seq stays 0, as the distribution sends it (2.3). */
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
	struct rds_ib_priv priv;
	int ret;

	ret = rds_ib_setup(ic, id);
	if (ret)
		return ret;
	rds_ib_fill_priv(ic, &priv, RDS_IB_VERSION_3_1);
	param.private_data = &priv;
	param.private_data_len = sizeof(priv);
	param.responder_resources = rds_ib_clamp_u8(da->max_qp_rd_atom);
	param.initiator_depth = rds_ib_clamp_u8(da->max_qp_init_rd_atom);
	param.retry_count = 7;
	param.rnr_retry_count = 7;
	return rdma_connect_locked(id, &param);	/* in the handler */
}

/* ESTABLISHED on the active side: check the version the peer chose. */
static int rds_ib_check_rep(struct rds_ib_conn *ic,
			    const struct rdma_cm_event *event)
{
	const struct rds_ib_priv *p = event->param.conn.private_data;
	u16 version;

	if (!p || event->param.conn.private_data_len < sizeof(*p) ||
	    !p->major) {
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
 * to refuse.
 */
static u16 rds_ib_req_version(const struct rds_ib_priv *p, u8 len)
{
	u16 mask;

	if (!p || !len)
		return 0;
	if (len < sizeof(*p) || !p->major)
		return RDS_IB_VERSION(4, 0);
	mask = be16_to_cpu(p->minor_mask) & RDS_IB_MINOR_MASK;
	if (p->major == 4 && mask)
		return RDS_IB_VERSION(4, fls(mask) - 1);
	if (p->major == 3 && p->minor == 1)
		return RDS_IB_VERSION_3_1;
	return 0;
}

static void rds_ib_reject(struct rdma_cm_id *id)
{
	int reason = RDS_IB_REJ_INCOMPAT;	/* host order, as the peer's */

	rdma_reject(id, &reason, sizeof(reason), IB_CM_REJ_CONSUMER_DEFINED);
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
				const struct rds_ib_priv *p)
{
	const struct sockaddr_in *to = (const void *)&id->route.addr.src_addr;
	const struct sockaddr_in *from = (const void *)&id->route.addr.dst_addr;

	if (to->sin_family != AF_INET || from->sin_family != AF_INET ||
	    p->daddr != to->sin_addr.s_addr ||
	    p->saddr != from->sin_addr.s_addr)
		return false;
	if (ipv4_is_loopback(p->saddr) || ipv4_is_loopback(p->daddr))
		return false;
	return inet_addr_type(&init_net, p->daddr) == RTN_LOCAL &&
	       inet_addr_type(&init_net, p->saddr) == RTN_UNICAST;
}

/*
 * CONNECT_REQUEST on the listener (section 1.4).  Returning non-zero
 * makes rdma_cm destroy the new id, which we do only before the id is
 * attached to a connection.
 */
static int rds_ib_cm_req(struct rdma_cm_id *id, struct rdma_cm_event *event)
{
	const struct rds_ib_priv *p = event->param.conn.private_data;
	struct ib_device_attr *da = &id->device->attrs;
	struct rdma_conn_param param = {};
	struct rdma_cm_id *old = NULL;
	struct rds_ib_priv reply;
	struct rds_ib_conn *ic;
	struct rds_conn *conn;
	u16 version;
	int ret;

	version = rds_ib_req_version(p, event->param.conn.private_data_len);
	if (!version || event->param.conn.private_data_len < sizeof(*p)) {
		pr_info_ratelimited("rds_zc_ib: refused a connection with an unsupported protocol version\n");
		goto reject;
	}
	if (!rds_ib_req_addrs_ok(id, p)) {
		rds_ib_stat_inc(RDS_IB_STAT_CONN_REFUSED_ADDR);
		pr_info_ratelimited("rds_zc_ib: refused a connection request for %pI4 to %pI4: not the addresses it came from and to\n",
				    &p->saddr, &p->daddr);
		goto reject;
	}
	conn = rds_zc_conn_get(&init_net, p->daddr, p->saddr, p->tos,
			       rds_ib_cm_transport);
	if (IS_ERR(conn))
		goto reject;
	ret = rds_zc_conn_accept(conn);
	if (ret && ret != -EINPROGRESS)
		goto reject_put;

	ic = conn->tp;
	mutex_lock(&ic->cm_mutex);
	if (ret) {
		/* We yield: our own attempt makes way for this request. */
		if (!ic->active || !ic->cm_id ||
		    rds_conn_state(conn) != RDS_CONN_CONNECTING) {
			mutex_unlock(&ic->cm_mutex);
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
	ret = rds_ib_setup(ic, id);
	if (ret) {
		rds_ib_reject(id);
		goto drop;
	}
	rds_ib_fill_priv(ic, &reply, version);
	rds_ib_credit_start(ic, be32_to_cpu(p->credit));
	param.private_data = &reply;
	param.private_data_len = sizeof(reply);
	param.responder_resources = min_t(int, event->param.conn.initiator_depth,
					  rds_ib_clamp_u8(da->max_qp_rd_atom));
	param.initiator_depth = min_t(int, event->param.conn.responder_resources,
				      rds_ib_clamp_u8(da->max_qp_init_rd_atom));
	param.retry_count = 7;
	param.rnr_retry_count = 7;
	ret = rdma_accept(id, &param);
	if (ret)
		goto drop;
	mutex_unlock(&ic->cm_mutex);
	if (old)
		rdma_destroy_id(old);	/* the peer refuses its request */
	rds_zc_conn_put(conn);
	return 0;

drop:
	/* The id is ours now: shutdown destroys it. */
	mutex_unlock(&ic->cm_mutex);
	if (old)
		rdma_destroy_id(old);
	rds_zc_conn_drop(conn, "accept failed");
	rds_zc_conn_put(conn);
	return 0;

reject_put:
	rds_zc_conn_put(conn);
reject:
	rds_ib_reject(id);
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
void rds_ib_conn_info(struct rds_conn *conn, struct rds_info_rdma_connection *ri)
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

static int rds_ib_cm_handler(struct rdma_cm_id *id,
			     struct rdma_cm_event *event)
{
	struct rds_ib_conn *ic = id->context;
	int ret = 0;

	if (event->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return rds_ib_cm_req(id, event);
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

/**
 * rds_ib_conn_connect() - start the active side of a connection
 * @conn: a connection the core moved to CONNECTING
 *
 * Return: 0 when address resolution started, or a negative errno.
 */
int rds_ib_conn_connect(struct rds_conn *conn)
{
	struct rds_ib_conn *ic = conn->tp;
	struct sockaddr_in src = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = conn->laddr,
	};
	struct sockaddr_in dst = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = conn->faddr,
		.sin_port = htons(RDS_IB_PORT),
	};
	struct rdma_cm_id *id;
	int ret;

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

/**
 * rds_ib_listen_init() - listen for RDS connections on every RDMA device
 * @trans: the transport the peers' connections are made for
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
	struct rdma_cm_id *id;
	int ret;

	rds_ib_cm_transport = trans;

	id = rdma_create_id(&init_net, rds_ib_cm_handler, NULL, RDMA_PS_TCP,
			    IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	ret = rdma_bind_addr(id, (struct sockaddr *)&sin);
	if (!ret)
		ret = rdma_listen(id, 128);
	if (ret) {
		pr_err("rds_zc_ib: cannot listen on RDMA port %u: %d\n",
		       RDS_IB_PORT, ret);
		rdma_destroy_id(id);
		return ret;
	}
	rds_ib_listen_id = id;
	return 0;
}

/**
 * rds_ib_listen_exit() - stop accepting connections
 */
void rds_ib_listen_exit(void)
{
	rdma_destroy_id(rds_ib_listen_id);
	rds_ib_listen_id = NULL;
}
