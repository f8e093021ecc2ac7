// SPDX-License-Identifier: GPL-2.0
/*
 * Connection management over rdma_cm: the listener, the active connect,
 * the passive accept with the distribution's collision rules, and
 * shutdown.  Rules: rds_zc-wire.rst sections 1 to 3.
 *
 * The QP, CQs and rings of an incarnation are ib_conn.c's to set up and
 * tear down, the private data ib_handshake.c's to write and check.
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
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>
#include <uapi/linux/rds.h>

#include "addr.h"
#include "ib.h"
#include "ib_cm.h"
#include "transport.h"

static struct rdma_cm_id *rds_ib_listen_id;
static struct rdma_cm_id *rds_ib_listen6_id;	/* NULL without IPv6 */
/* The transport connections from peers are made for (rds_ib_listen_init()). */
static const struct rds_transport *rds_ib_cm_transport;

static int rds_ib_cm_handler(struct rdma_cm_id *id,
			     struct rdma_cm_event *event);

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

/* @reason: RDS_IB_REJ_INCOMPAT or RDS_IB_REJ_RETRY, in host order. */
static void rds_ib_reject(struct rdma_cm_id *id, int reason)
{
	rdma_reject(id, &reason, sizeof(reason), IB_CM_REJ_CONSUMER_DEFINED);
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
 * rds_ib_req_from_self() - whether a request from a local address is ours
 * @saddr: the request's source, an address of this host
 * @daddr: its destination, another one
 * @tos: its type of service
 * @dev_if: the interface of a link-local pair, else 0
 * @qp_num: the QP the request names as its sender's
 *
 * A socket pinned to this transport connects one address of this host to
 * another through the device (send.c): the request comes back to our own
 * listener.  It is ours only if our connection from @saddr to @daddr is
 * connecting actively with the very QP the request names.  A host on the
 * fabric that forges our address would have to guess that QP's number
 * while the connection is being set up, and even then the reply goes to
 * this host, not to it.
 *
 * Context: the rdma_cm handler of the listener; takes no lock of the
 * connection it looks at.
 */
static bool rds_ib_req_from_self(const struct in6_addr *saddr,
				 const struct in6_addr *daddr, u8 tos,
				 u32 dev_if, u32 qp_num)
{
	struct rds_conn *conn;
	struct rds_ib_conn *ic;
	bool ours;

	conn = rds_zc_conn_lookup(&init_net, saddr, daddr, tos, dev_if);
	if (!conn)
		return false;
	ic = conn->tp;
	ours = conn->trans == rds_ib_cm_transport && READ_ONCE(ic->active) &&
	       rds_conn_state(conn) == RDS_CONN_CONNECTING && qp_num &&
	       READ_ONCE(ic->qp_num) == qp_num;
	rds_zc_conn_put(conn);
	return ours;
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
	bool self;
	int ret;

	p = rds_ib_priv_parse(event->param.conn.private_data, len, v6, &saddr,
			      &daddr);
	version = rds_ib_req_version(p, len);
	if (!version || !p) {
		pr_info_ratelimited("rds_zc_ib: refused a connection with an unsupported protocol version\n");
		goto reject;
	}
	if (!rds_ib_req_addrs_ok(id, &saddr, &daddr, &dev_if, &self) ||
	    (self && !rds_ib_req_from_self(&saddr, &daddr, p->tos, dev_if,
					   event->param.conn.qp_num))) {
		rds_ib_stat_inc(RDS_IB_STAT_CONN_REFUSED_ADDR);
		pr_info_ratelimited("rds_zc_ib: refused a connection request for %pI6c to %pI6c: not the addresses it came from and to\n",
				    &saddr, &daddr);
		goto reject;
	}
	if (!rds_ib_req_gid_ok(id, &saddr)) {
		rds_ib_stat_inc(RDS_IB_STAT_CONN_REFUSED_GID);
		pr_info_ratelimited("rds_zc_ib: refused a connection request for %pI6c from GID %pI6c: not that address's GID\n",
				    &saddr, id->route.path_rec ?
				    id->route.path_rec->dgid.raw : NULL);
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
	/*
	 * Bound first, then resolved: rdma_resolve_addr() binding an unbound
	 * id itself WARNs when the device goes away between its bind and its
	 * own state change (rdma_cm's removal of the id, after ours of the
	 * device: rds_faults rdma_link on 6.12).  A bound id that removal
	 * took fails the resolve with -EINVAL instead, and is retried.
	 */
	ret = rdma_bind_addr(id, (struct sockaddr *)&src);
	if (!ret)
		ret = rdma_resolve_addr(id, (struct sockaddr *)&src,
					(struct sockaddr *)&dst,
					RDS_IB_RESOLVE_MS);
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
	if (id && ic->qp) {
		rds_ib_send_quiesce(ic);
		rdma_disconnect(id);
	}
	rds_ib_teardown(ic);
	ic->cm_id = NULL;
	mutex_unlock(&ic->cm_mutex);
	if (id)
		rdma_destroy_id(id);
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
