// SPDX-License-Identifier: GPL-2.0
/*
 * The PF_RDS socket family: creation, binding, connecting, naming,
 * polling, options and release.  Sending and receiving live in send.c
 * and recv.c.
 */
#include <linux/errno.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/net.h>
#include <linux/poll.h>
#include <linux/socket.h>
#include <linux/sockptr.h>
#include <linux/uaccess.h>
#include <net/sock.h>
#include <uapi/linux/rds.h>

#include "addr.h"
#include "bind.h"
#include "connection.h"
#include "loop.h"
#include "op_barrier.h"
#include "rdma.h"
#include "recv.h"
#include "send.h"
#include "sock.h"
#include "socket.h"
#include "stats.h"
#include "trace.h"
#include "transport_core.h"
#include "zcopy.h"

static struct proto rds_proto = {
	.name		= "RDS_ZC",
	.owner		= THIS_MODULE,
	.obj_size	= sizeof(struct rds_sock),
};

static const struct proto_ops rds_proto_ops;

/* Every socket, for the RDS_INFO tables. */
static LIST_HEAD(rds_sock_list);
static DEFINE_SPINLOCK(rds_sock_list_lock);	/* the list, sock_item */

/**
 * rds_sock_walk() - call @fn for every RDS socket of every namespace
 * @fn: called with the list lock held (bottom halves off): must not sleep
 * @arg: passed to @fn
 */
void rds_sock_walk(void (*fn)(struct rds_sock *rs, void *arg), void *arg)
{
	struct rds_sock *rs;

	spin_lock_bh(&rds_sock_list_lock);
	list_for_each_entry(rs, &rds_sock_list, sock_item)
		fn(rs, arg);
	spin_unlock_bh(&rds_sock_list_lock);
}

static void rds_sock_cong_wake(struct rds_cong_monitor *mon)
{
	struct rds_sock *rs = container_of(mon, struct rds_sock, cong_mon);

	rs->sk.sk_data_ready(&rs->sk);
}

/*
 * Room in the send buffer (an acknowledgment, a cancel, a larger
 * SO_SNDBUF): wake the writers that found none.
 */
static void rds_sock_write_space(struct sock *sk)
{
	struct rds_sock *rs = rds_sk(sk);
	struct socket_wq *wq;

	smp_mb();	/* the release before the test; see snd_wait_mark */
	if (!READ_ONCE(rs->snd_waiting) || !rds_sock_snd_room(rs))
		return;
	WRITE_ONCE(rs->snd_waiting, false);
	rcu_read_lock();
	wq = rcu_dereference(sk->sk_wq);
	if (skwq_has_sleeper(wq))
		wake_up_interruptible_sync_poll(&wq->wait, EPOLLOUT |
						EPOLLWRNORM | EPOLLWRBAND);
	rcu_read_unlock();
	sk_wake_async(sk, SOCK_WAKE_SPACE, POLL_OUT);
}

static int rds_create(struct net *net, struct socket *sock, int protocol,
		      int kern)
{
	struct rds_sock *rs;
	struct sock *sk;

	if (sock->type != SOCK_SEQPACKET || protocol)
		return -ESOCKTNOSUPPORT;

	sk = sk_alloc(net, PF_RDS, GFP_KERNEL, &rds_proto, kern);
	if (!sk)
		return -ENOMEM;
	sock_init_data(sock, sk);
	sock->ops = &rds_proto_ops;
	sk->sk_protocol = protocol;
	sk->sk_write_space = rds_sock_write_space;

	rs = rds_sk(sk);
	INIT_HLIST_NODE(&rs->bind_node);
	spin_lock_init(&rs->recv_lock);
	INIT_LIST_HEAD(&rs->recv_queue);
	INIT_LIST_HEAD(&rs->recv_held);
	mutex_init(&rs->recv_mutex);
	spin_lock_init(&rs->snd_lock);
	rds_rdma_sock_init(rs);
	rds_zc_sock_init(rs);
	rds_cong_monitor_init(&rs->cong_mon, net, rds_sock_cong_wake);

	spin_lock_bh(&rds_sock_list_lock);
	list_add_tail(&rs->sock_item, &rds_sock_list);
	spin_unlock_bh(&rds_sock_list_lock);
	rds_stat_inc(RDS_STAT_SOCK_CREATED);
	return 0;
}

static int rds_release(struct socket *sock)
{
	struct sock *sk = sock->sk;
	struct rds_sock *rs;
	size_t purged;

	if (!sk)
		return 0;
	rs = rds_sk(sk);

	spin_lock_bh(&rds_sock_list_lock);
	list_del(&rs->sock_item);
	spin_unlock_bh(&rds_sock_list_lock);

	sock_orphan(sk);
	rds_cong_monitor_enable(&rs->cong_mon, false);
	rds_bind_remove(rs);
	/* Dead first: a connection's shutdown then drops what it holds. */
	purged = rds_recv_purge(rs);
	if (READ_ONCE(rs->bound_port))
		rds_conn_cancel(rs, sock_net(sk), &rs->bound_addr, NULL, 0, true);
	trace_rds_sock_release(rs, &rs->bound_addr, rs->bound_port, purged);
	/*
	 * Keys dead and pages unpinned before close returns, but those of a
	 * message the transport still holds: they go with it (mr.c).
	 */
	rds_rdma_sock_release(rs);
	/* Completions not read; later ones go unreported (zcopy.c). */
	rds_zc_sock_release(rs);

	lock_sock(sk);
	rds_cong_map_put(rs->cong_map);
	rs->cong_map = NULL;
	rds_transport_put(rs->trans);
	rs->trans = NULL;
	release_sock(sk);

	mutex_destroy(&rs->recv_mutex);
	sock->sk = NULL;
	rds_stat_inc(RDS_STAT_SOCK_RELEASED);
	sock_put(sk);
	return 0;
}

/*
 * Choose the transport for a local address: the one set with
 * SO_RDS_TRANSPORT, else a registered transport that claims the address,
 * else local delivery if the address is ours.
 */
static int rds_bind_transport(struct rds_sock *rs, const struct in6_addr *addr,
			      u32 scope)
{
	struct net *net = sock_net(&rs->sk);
	const struct rds_transport *trans;
	int ret;

	if (rs->trans) {
		if (!rs->trans->laddr_check)
			return -ENOPROTOOPT;
		ret = rs->trans->laddr_check(net, addr, scope);
		if (ret == -ENOMEM)
			return ret;
		return ret ? -ENOPROTOOPT : 0;
	}
	trans = rds_transport_for_addr(net, addr, scope);
	if (IS_ERR(trans))
		return PTR_ERR(trans);	/* not the loopback: it may be RDMA's */
	rs->trans = trans;
	if (rs->trans)
		return 0;
	if (!rds_addr_is_local(net, addr, scope))
		return -EADDRNOTAVAIL;
	rs->trans = &rds_loop_transport;
	return 0;
}

static int rds_bind(struct socket *sock, struct sockaddr *uaddr, int len)
{
	struct sock *sk = sock->sk;
	struct rds_sock *rs = rds_sk(sk);
	const struct rds_transport *preset;
	struct rds_cong_map *map;
	struct in6_addr addr;
	__be16 port;
	u32 scope;
	int ret;

	/* An unknown family is EINVAL here, EAFNOSUPPORT for connect(). */
	ret = rds_addr_parse(uaddr, len, -EINVAL, &addr, &port, &scope);
	if (ret)
		return ret;
	if (!rds_addr_unicast(&addr, scope))
		return -EINVAL;

	lock_sock(sk);
	if (rs->bound_port) {		/* RDS sockets bind once */
		ret = -EINVAL;
		goto out;
	}
	/* A link-local default destination and address share one link. */
	if (scope && rs->conn_scope && scope != rs->conn_scope) {
		ret = -EINVAL;
		goto out;
	}
	preset = rs->trans;
	ret = rds_bind_transport(rs, &addr, scope);
	if (ret)
		goto out;

	map = rds_cong_map_get(sock_net(sk), &addr);
	if (!map) {
		ret = -ENOMEM;
		goto out_trans;
	}
	/* Deliverers may find the socket as soon as it is inserted. */
	rs->cong_map = map;
	sock_set_flag(sk, SOCK_RCU_FREE);
	ret = rds_bind_insert(rs, &addr, scope, &port);
	if (ret)
		goto out_map;
	rds_stat_inc(RDS_STAT_SOCK_BOUND);
	trace_rds_sock_bind(rs, &addr, port, rs->trans->name, 0);
	release_sock(sk);
	return 0;

out_map:
	rs->cong_map = NULL;
	rds_cong_map_put(map);
out_trans:
	if (!preset) {
		rds_transport_put(rs->trans);
		rs->trans = NULL;
	}
out:
	trace_rds_sock_bind(rs, &addr, port, "", ret);
	release_sock(sk);
	return ret;
}

static int rds_connect(struct socket *sock, struct sockaddr *uaddr, int len,
		       int flags)
{
	struct sock *sk = sock->sk;
	struct rds_sock *rs = rds_sk(sk);
	struct in6_addr addr;
	__be16 port;
	u32 scope;
	int ret;

	ret = rds_addr_parse(uaddr, len, -EAFNOSUPPORT, &addr, &port, &scope);
	if (ret)
		return ret;
	/*
	 * The distribution's errors: a sockaddr_in of 0 lacks a destination,
	 * any other that is no unicast address is invalid; a sockaddr_in6
	 * that is none (link-local multicast too) is of the wrong type, and
	 * a link-local unicast one needs its scope.
	 */
	if (uaddr->sa_family == AF_INET) {
		if (!rds_addr_v4(&addr))
			return -EDESTADDRREQ;
		if (!rds_addr_unicast(&addr, scope))
			return -EINVAL;
	} else if (!rds_addr_is_unicast(&addr)) {
		return -EPROTOTYPE;
	} else if (rds_addr_link_local(&addr) && !scope) {
		return -EINVAL;
	}

	lock_sock(sk);
	if (scope && rs->bound_scope && scope != rs->bound_scope) {
		ret = -EINVAL;
	} else {
		rs->conn_addr = addr;
		rs->conn_port = port;
		rs->conn_scope = scope;
	}
	release_sock(sk);
	return ret;
}

static int rds_getname(struct socket *sock, struct sockaddr *uaddr, int peer)
{
	struct rds_sock *rs = rds_sk(sock->sk);
	bool connected;
	int ret;

	lock_sock(sock->sk);
	connected = !ipv6_addr_any(&rs->conn_addr);
	if (peer) {
		/* The scope of a link-local peer is the socket's link. */
		ret = connected ?
		      rds_addr_fill(uaddr, &rs->conn_addr, rs->conn_port,
				    rs->conn_scope ?: rs->bound_scope) :
		      -ENOTCONN;
	} else if (rs->bound_port) {
		ret = rds_addr_fill(uaddr, &rs->bound_addr, rs->bound_port,
				    rs->bound_scope);
	} else if (connected) {
		/* Connected, unbound: the family of the peer, address 0. */
		struct in6_addr any = in6addr_any;

		if (rds_addr_is_v4(&rs->conn_addr))
			rds_addr_set_v4(&any, 0);
		ret = rds_addr_fill(uaddr, &any, 0, 0);
	} else {
		memset(uaddr, 0, sizeof(struct sockaddr_in));
		uaddr->sa_family = AF_UNSPEC;
		ret = sizeof(struct sockaddr_in);
	}
	release_sock(sock->sk);
	return ret;
}

static __poll_t rds_poll(struct file *file, struct socket *sock,
			 poll_table *wait)
{
	struct sock *sk = sock->sk;
	struct rds_sock *rs = rds_sk(sk);
	__poll_t mask = 0;

	sock_poll_wait(file, sock, wait);
	if (READ_ONCE(rs->cong_seen))
		rds_cong_poll_wait(file, wait);

	if (rds_recv_readable(rs))
		mask |= EPOLLIN | EPOLLRDNORM;
	mask |= rds_op_poll(rs);	/* operations completed */

	/*
	 * Without RDS_CONG_MONITOR, a change of congestion after a send was
	 * refused with ENOBUFS is reported once, as readable and write-band,
	 * as RDS always did: it tells the sender to try again.
	 */
	if (READ_ONCE(rs->cong_seen) && !READ_ONCE(rs->cong_mon.active) &&
	    READ_ONCE(rs->cong_seen_gen) != rds_cong_generation()) {
		WRITE_ONCE(rs->cong_seen, false);
		mask |= EPOLLIN | EPOLLRDNORM | EPOLLWRBAND;
	}

	/* Local delivery never queues; connections do, up to SO_SNDBUF. */
	if (!rds_sock_snd_room(rs))
		rds_sock_snd_wait_mark(rs);
	if (rds_sock_snd_room(rs))
		mask |= EPOLLOUT | EPOLLWRNORM;

	if (sk->sk_err)
		mask |= EPOLLERR;
	return mask;
}

static int rds_ioctl(struct socket *sock, unsigned int cmd, unsigned long arg)
{
	struct rds_sock *rs = rds_sk(sock->sk);
	rds_tos_t __user *utos = (rds_tos_t __user *)arg;
	rds_tos_t tos;
	int ret = 0;

	switch (cmd) {
	case SIOCRDSSETTOS:
		if (get_user(tos, utos))
			return -EFAULT;
		/*
		 * As the distribution: only through a transport that carries
		 * a type of service (not unbound, not local delivery), and
		 * once, before the first send.
		 */
		lock_sock(sock->sk);
		if (!rs->trans || rs->trans->type == RDS_TRANS_LOOP)
			ret = -ENOIOCTLCMD;
		else if (rs->tos || rs->tos_fixed)
			ret = -EINVAL;
		else
			rs->tos = tos;
		release_sock(sock->sk);
		break;
	case SIOCRDSGETTOS:
		lock_sock(sock->sk);
		tos = rs->tos;
		release_sock(sock->sk);
		if (put_user(tos, utos))
			ret = -EFAULT;
		break;
	default:
		ret = -ENOIOCTLCMD;
	}
	return ret;
}

static const struct proto_ops rds_proto_ops = {
	.family		= PF_RDS,
	.owner		= THIS_MODULE,
	.release	= rds_release,
	.bind		= rds_bind,
	.connect	= rds_connect,
	.socketpair	= sock_no_socketpair,
	.accept		= sock_no_accept,
	.getname	= rds_getname,
	.poll		= rds_poll,
	.ioctl		= rds_ioctl,
	.listen		= sock_no_listen,
	.shutdown	= sock_no_shutdown,
	.setsockopt	= rds_setsockopt,
	.getsockopt	= rds_getsockopt,
	.sendmsg	= rds_sendmsg,
	.recvmsg	= rds_recvmsg,
	.mmap		= sock_no_mmap,
};

static const struct net_proto_family rds_family_ops = {
	.family	= PF_RDS,
	.create	= rds_create,
	.owner	= THIS_MODULE,
};

/**
 * rds_socket_init() - register the PF_RDS family
 *
 * Return: 0, or -EEXIST when another module (the distribution's rds)
 * already owns PF_RDS, or another errno.
 */
int rds_socket_init(void)
{
	int ret;

	ret = proto_register(&rds_proto, 1);
	if (ret)
		return ret;
	ret = sock_register(&rds_family_ops);
	if (ret) {
		if (ret == -EEXIST)
			pr_err("rds_zc: PF_RDS is already registered, probably by the distribution's rds module; unload it first (rmmod rds_rdma rds_tcp rds)\n");
		proto_unregister(&rds_proto);
	}
	return ret;
}

/**
 * rds_socket_exit() - unregister the PF_RDS family
 *
 * Context: module exit; no socket exists, each pins the module.
 */
void rds_socket_exit(void)
{
	sock_unregister(PF_RDS);
	proto_unregister(&rds_proto);
}
