// SPDX-License-Identifier: GPL-2.0
/*
 * The TCP transport (tcp.h): module entry, its registration with the RDS
 * core, the connection objects, and what each network namespace gets: a
 * listener on RDS_TCP_PORT and the sysctls net.rds.tcp.rds_tcp_sndbuf
 * and rds_tcp_rcvbuf.
 *
 * A namespace going away first stops its listener, so that nothing makes
 * new connections there, then has the core destroy the connections of
 * this transport in it: each is shut down and its socket released.  The
 * kernel sockets hold no reference on their namespace, so every one of
 * them must be gone before the namespace is; the pernet exit of a device
 * runs before TCP's own.
 */
#include <linux/errno.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sysctl.h>
#include <linux/tcp.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>
#include <net/ipv6.h>
#include <net/netns/generic.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <uapi/linux/rds.h>

#include "addr.h"
#include "tcp.h"
#include "transport.h"

/* Any address of the namespace, as the distribution's rds_tcp. */
static int rds_tcp_laddr_check(struct net *net, const struct in6_addr *addr,
			       u32 scope)
{
	return rds_addr_is_local(net, addr, scope) ? 0 : -EADDRNOTAVAIL;
}

static int rds_tcp_conn_alloc(struct rds_conn *conn, gfp_t gfp)
{
	struct rds_tcp_conn *tc = kzalloc(sizeof(*tc), gfp);

	if (!tc)
		return -ENOMEM;
	tc->conn = conn;
	/* The higher address never connects a path > 0 (tcp.h). */
	conn->accept_only = conn->path &&
			    ipv6_addr_cmp(&conn->laddr, &conn->faddr) > 0;
	mutex_init(&tc->sock_mutex);
	spin_lock_init(&tc->ack_lock);
	INIT_DELAYED_WORK(&tc->poke_w, rds_tcp_poke_work);
	INIT_DELAYED_WORK(&tc->retry_w, rds_tcp_retry_work);
	INIT_WORK(&tc->rx_w, rds_tcp_rx_work);
	INIT_DELAYED_WORK(&tc->rx_resume_w, rds_tcp_rx_resume_work);
	INIT_DELAYED_WORK(&tc->rx_deadline_w, rds_tcp_rx_deadline_work);
	conn->tp = tc;
	return 0;
}

/* The connection is shut down (conn_shutdown ran): no socket, no work. */
static void rds_tcp_conn_free(struct rds_conn *conn)
{
	struct rds_tcp_conn *tc = conn->tp;

	/* The connection is DEAD: retry_w does nothing more. */
	cancel_delayed_work_sync(&tc->retry_w);
	mutex_destroy(&tc->sock_mutex);
	kfree(tc);
	conn->tp = NULL;
}

/* The RDS6_INFO_TCP_SOCKETS row: under RCU, from fields set while UP. */
static bool rds_tcp_conn_info(struct rds_conn *conn,
			      struct rds6_info_tcp_socket *row)
{
	struct rds_tcp_conn *tc = conn->tp;
	__be16 lport = READ_ONCE(tc->lport);

	if (!lport)
		return false;
	row->local_addr = conn->laddr;
	row->local_port = lport;
	row->peer_addr = conn->faddr;
	row->peer_port = READ_ONCE(tc->fport);
	row->hdr_rem = RDS_TCP_HDR_SIZE - READ_ONCE(tc->rx_hdr_got);
	row->data_rem = READ_ONCE(tc->rx_len) - READ_ONCE(tc->rx_got);
	spin_lock_bh(&tc->ack_lock);
	row->last_sent_nxt = tc->last_sent_nxt;
	row->last_expected_una = tc->last_expected_una;
	row->last_seen_una = tc->last_seen_una;
	spin_unlock_bh(&tc->ack_lock);
	return true;
}

static struct rds_transport rds_tcp_transport = {
	.name		= "tcp",
	.type		= RDS_TRANS_TCP,
	.owner		= THIS_MODULE,
	.prefer_local	= true,
	.mp_capable	= true,
	.laddr_check	= rds_tcp_laddr_check,
	.conn_alloc	= rds_tcp_conn_alloc,
	.conn_free	= rds_tcp_conn_free,
	.conn_connect	= rds_tcp_conn_connect,
	.conn_shutdown	= rds_tcp_conn_shutdown,
	.xmit		= rds_tcp_xmit,
	.tcp_conn_info	= rds_tcp_conn_info,
	.conn_tx_state	= rds_tcp_conn_tx_state,
};

static int rds_tcp_min_sndbuf = SOCK_MIN_SNDBUF;
static int rds_tcp_min_rcvbuf = SOCK_MIN_RCVBUF;

/* The handlers' table argument became const in 6.11 (Kbuild tests it). */
#ifdef RDS_CTL_HANDLER_CONST
#define RDS_TCP_CTL_CONST const
#else
#define RDS_TCP_CTL_CONST
#endif

/*
 * A size written applies to new sockets only: the namespace's
 * connections are dropped, so that they reconnect with it, as the
 * distribution's do.  A write that fails (below the minimum: EINVAL)
 * changes nothing.
 */
static int rds_tcp_buf_written(struct rds_tcp_net *rtn,
			       RDS_TCP_CTL_CONST struct ctl_table *ctl,
			       int write, void *buffer, size_t *lenp,
			       loff_t *ppos)
{
	int ret = proc_dointvec_minmax(ctl, write, buffer, lenp, ppos);

	if (!ret && write)
		rds_zc_conn_drop_net(rtn->trans, rtn->net,
				     "net.rds.tcp buffer size written");
	return ret;
}

static int rds_tcp_sndbuf_handler(RDS_TCP_CTL_CONST struct ctl_table *ctl,
				  int write, void *buffer, size_t *lenp,
				  loff_t *ppos)
{
	return rds_tcp_buf_written(container_of((int *)ctl->data,
						struct rds_tcp_net, sndbuf),
				   ctl, write, buffer, lenp, ppos);
}

static int rds_tcp_rcvbuf_handler(RDS_TCP_CTL_CONST struct ctl_table *ctl,
				  int write, void *buffer, size_t *lenp,
				  loff_t *ppos)
{
	return rds_tcp_buf_written(container_of((int *)ctl->data,
						struct rds_tcp_net, rcvbuf),
				   ctl, write, buffer, lenp, ppos);
}

/* Copied for each namespace, .data pointing into its rds_tcp_net. */
static const struct ctl_table rds_tcp_sysctl_table[] = {
	{
		.procname	= "rds_tcp_sndbuf",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= rds_tcp_sndbuf_handler,
		.extra1		= &rds_tcp_min_sndbuf,
	},
	{
		.procname	= "rds_tcp_rcvbuf",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= rds_tcp_rcvbuf_handler,
		.extra1		= &rds_tcp_min_rcvbuf,
	},
#ifndef register_net_sysctl
	{ }	/* the older, function form wants an empty last entry */
#endif
};

static int rds_tcp_sysctl_init(struct net *net, struct rds_tcp_net *rtn)
{
	struct ctl_table *tbl;

	tbl = kmemdup(rds_tcp_sysctl_table, sizeof(rds_tcp_sysctl_table),
		      GFP_KERNEL);
	if (!tbl)
		return -ENOMEM;
	tbl[0].data = &rtn->sndbuf;
	tbl[1].data = &rtn->rcvbuf;
#ifdef register_net_sysctl
	rtn->sysctl = register_net_sysctl_sz(net, "net/rds/tcp", tbl,
					     ARRAY_SIZE(rds_tcp_sysctl_table));
#else
	rtn->sysctl = register_net_sysctl(net, "net/rds/tcp", tbl);
#endif
	if (!rtn->sysctl) {
		kfree(tbl);
		return -ENOMEM;
	}
	rtn->ctl_table = tbl;
	return 0;
}

static void rds_tcp_sysctl_exit(struct rds_tcp_net *rtn)
{
	unregister_net_sysctl_table(rtn->sysctl);
	kfree(rtn->ctl_table);
}

/*
 * One listener, IPv6 with IPv4-mapped addresses, where the namespace has
 * IPv6; IPv4 only where it has not, as the distribution's.
 */
static __net_init int rds_tcp_init_net(struct net *net)
{
	struct rds_tcp_net *rtn = net_generic(net, rds_tcp_netid);
	int ret;

	rtn->net = net;
	rtn->trans = &rds_tcp_transport;
	INIT_WORK(&rtn->accept_w, rds_tcp_accept_work);
	ret = rds_tcp_sysctl_init(net, rtn);
	if (ret)
		return ret;
	rtn->lsock = rds_tcp_listen_init(net, true);
	if (!rtn->lsock)
		rtn->lsock = rds_tcp_listen_init(net, false);
	if (!rtn->lsock) {
		pr_warn("rds_zc_tcp: no listener on port %u in a namespace\n",
			RDS_TCP_PORT);
		rds_tcp_sysctl_exit(rtn);
		return -EAFNOSUPPORT;
	}
	return 0;
}

static __net_exit void rds_tcp_exit_net(struct net *net)
{
	struct rds_tcp_net *rtn = net_generic(net, rds_tcp_netid);

	rds_tcp_listen_stop(rtn->lsock, &rtn->accept_w);
	rtn->lsock = NULL;
	rds_zc_conn_destroy_net(&rds_tcp_transport, net);
	rds_tcp_sysctl_exit(rtn);
}

static struct pernet_operations rds_tcp_net_ops = {
	.init	= rds_tcp_init_net,
	.exit	= rds_tcp_exit_net,
	.id	= &rds_tcp_netid,
	.size	= sizeof(struct rds_tcp_net),
};

static int __init rds_tcp_init(void)
{
	int ret;

	rds_tcp_wq = alloc_workqueue("rds_zc_tcp", WQ_MEM_RECLAIM, 0);
	if (!rds_tcp_wq)
		return -ENOMEM;
	ret = register_pernet_device(&rds_tcp_net_ops);
	if (ret)
		goto out_wq;
	ret = rds_zc_transport_register(&rds_tcp_transport);
	if (ret)
		goto out_pernet;
	return 0;

out_pernet:
	unregister_pernet_device(&rds_tcp_net_ops);
out_wq:
	destroy_workqueue(rds_tcp_wq);
	return ret;
}

/*
 * No socket uses the transport (each pins the module).  The namespaces'
 * exits stop the listeners and destroy their connections; what is left
 * goes with the transport.
 */
static void __exit rds_tcp_exit(void)
{
	unregister_pernet_device(&rds_tcp_net_ops);
	rds_zc_transport_unregister(&rds_tcp_transport);
	destroy_workqueue(rds_tcp_wq);
}

module_init(rds_tcp_init);
module_exit(rds_tcp_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("RDS zero-copy: the TCP transport");
