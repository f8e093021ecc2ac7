// SPDX-License-Identifier: GPL-2.0
/*
 * Connections as the RDS_INFO tables show them: RDS_INFO_CONNECTIONS,
 * RDS_INFO_IB_CONNECTIONS and the send and retransmit queues.
 */
#include <linux/rculist.h>
#include <linux/string.h>
#include <net/net_namespace.h>
#include <uapi/linux/rds.h>

#include "conn_internal.h"
#include "connection.h"
#include "message.h"
#include "transport.h"

/**
 * rds_conn_info_walk() - describe every connection of a namespace
 * @net: namespace
 * @fn: called with one RDS_INFO_CONNECTIONS row per connection, under
 *	rcu_read_lock(), so it must not sleep
 * @arg: passed to @fn
 *
 * One row per address pair: its paths beyond 0 (connection.h) are left
 * out, as the distribution leaves them out.
 *
 * The flags say what the distribution's say: SENDING while a message is
 * being handed to the transport, CONNECTING, CONNECTED (UP).
 *
 * Context: process context.
 */
void rds_conn_info_walk(struct net *net,
			void (*fn)(const struct rds6_info_connection *ci,
				   u8 tos, void *arg),
			void *arg)
{
	struct rds6_info_connection ci;
	struct rds_conn *conn;

	rcu_read_lock();
	list_for_each_entry_rcu(conn, &rds_conn_list, all_item) {
		/* Path 0 of each pair, as the distribution shows it. */
		if (!net_eq(conn->net, net) || conn->path)
			continue;
		memset(&ci, 0, sizeof(ci));
		spin_lock_bh(&conn->lock);
		ci.next_tx_seq = conn->next_tx_seq;
		spin_unlock_bh(&conn->lock);
		ci.next_rx_seq = READ_ONCE(conn->next_rx_seq);
		ci.laddr = conn->laddr;
		ci.faddr = conn->faddr;
		strscpy(ci.transport, conn->trans->name, sizeof(ci.transport));
		if (READ_ONCE(conn->xmit_msg))
			ci.flags |= RDS_INFO_CONNECTION_FLAG_SENDING;
		switch (rds_conn_state(conn)) {
		case RDS_CONN_CONNECTING:
			ci.flags |= RDS_INFO_CONNECTION_FLAG_CONNECTING;
			break;
		case RDS_CONN_UP:
			ci.flags |= RDS_INFO_CONNECTION_FLAG_CONNECTED;
			break;
		default:
			break;
		}
		fn(&ci, conn->tos, arg);
	}
	rcu_read_unlock();
}

/**
 * rds_conn_rdma_info_walk() - RDS_INFO_IB_CONNECTIONS rows
 * @net: namespace
 * @fn: called with one row per connection of a transport that describes
 *	its RDMA side, under rcu_read_lock(), so it must not sleep
 * @arg: passed to @fn
 *
 * Addresses and tos always, as the distribution; the rest only while the
 * connection is up.
 *
 * Context: process context.
 */
void rds_conn_rdma_info_walk(struct net *net,
			     void (*fn)(const struct rds6_info_rdma_connection *ri,
					void *arg),
			     void *arg)
{
	struct rds6_info_rdma_connection ri;
	struct rds_conn *conn;

	rcu_read_lock();
	list_for_each_entry_rcu(conn, &rds_conn_list, all_item) {
		if (!net_eq(conn->net, net) || !conn->trans->rdma_conn_info)
			continue;
		memset(&ri, 0, sizeof(ri));
		ri.src_addr = conn->laddr;
		ri.dst_addr = conn->faddr;
		ri.tos = conn->tos;
		if (rds_conn_state(conn) == RDS_CONN_UP) {
			smp_rmb();	/* what the transport set before UP */
			conn->trans->rdma_conn_info(conn, &ri);
		}
		fn(&ri, arg);
	}
	rcu_read_unlock();
}

/**
 * rds_conn_tcp_info_walk() - RDS_INFO_TCP_SOCKETS rows
 * @net: namespace
 * @fn: called with one row (and the connection's tos) per connection of
 *	a transport that describes its TCP socket and has one, under
 *	rcu_read_lock(), so it must not sleep
 * @arg: passed to @fn
 *
 * Context: process context.
 */
void rds_conn_tcp_info_walk(struct net *net,
			    void (*fn)(const struct rds6_info_tcp_socket *ti,
				       u8 tos, void *arg),
			    void *arg)
{
	struct rds6_info_tcp_socket ti;
	struct rds_conn *conn;

	rcu_read_lock();
	list_for_each_entry_rcu(conn, &rds_conn_list, all_item) {
		if (!net_eq(conn->net, net) || !conn->trans->tcp_conn_info)
			continue;
		memset(&ti, 0, sizeof(ti));
		if (conn->trans->tcp_conn_info(conn, &ti))
			fn(&ti, conn->tos, arg);
	}
	rcu_read_unlock();
}

/**
 * rds_conn_msg_info_walk() - describe the messages on connections' queues
 * @net: namespace
 * @retrans: the messages sent and not yet acknowledged, else those not
 *	     yet sent
 * @fn: called with one RDS_INFO_SEND_MESSAGES or _RETRANS_MESSAGES row
 *	per message, under the connection's lock, so it must not sleep
 * @arg: passed to @fn
 *
 * Rows as the distribution writes them: our address and port first,
 * flags 0.
 *
 * Context: process context.
 */
void rds_conn_msg_info_walk(struct net *net, bool retrans,
			    void (*fn)(const struct rds6_info_message *mi,
				       void *arg),
			    void *arg)
{
	struct rds6_info_message mi;
	struct rds_conn *conn;
	struct rds_msg *m;

	rcu_read_lock();
	list_for_each_entry_rcu(conn, &rds_conn_list, all_item) {
		if (!net_eq(conn->net, net))
			continue;
		spin_lock_bh(&conn->lock);
		list_for_each_entry(m, retrans ? &conn->retrans :
				    &conn->send_queue, conn_item) {
			memset(&mi, 0, sizeof(mi));
			mi.seq = m->seq;
			mi.len = m->len;
			mi.laddr = conn->laddr;
			mi.faddr = conn->faddr;
			mi.lport = m->sport;
			mi.fport = m->dport;
			mi.tos = conn->tos;
			fn(&mi, arg);
		}
		spin_unlock_bh(&conn->lock);
	}
	rcu_read_unlock();
}
