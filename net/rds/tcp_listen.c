// SPDX-License-Identifier: GPL-2.0
/*
 * The TCP transport's listener, one per namespace, and what it does with
 * a connection it accepts (tcp.h: the lower address connects).
 *
 * The listener's data_ready only queues accept_w; the listener's
 * sk_user_data is its namespace's rds_tcp_net.  Children inherit both:
 * a child not yet taken gets the original data_ready, and a connection
 * that is taken gets the connection's callbacks.
 */
#include <linux/errno.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/net.h>
#include <linux/tcp.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "addr.h"
#include "tcp.h"
#include "transport.h"

static void rds_tcp_listen_data_ready(struct sock *sk)
{
	void (*ready)(struct sock *sk);
	struct rds_tcp_net *rtn;

	read_lock_bh(&sk->sk_callback_lock);
	rtn = sk->sk_user_data;
	if (!rtn) {		/* the listener is going */
		ready = sk->sk_data_ready;
		goto out;
	}
	ready = rtn->orig_data_ready;
	if (sk->sk_state == TCP_LISTEN)
		queue_work(rds_tcp_wq, &rtn->accept_w);
out:
	read_unlock_bh(&sk->sk_callback_lock);
	if (ready && ready != rds_tcp_listen_data_ready)
		ready(sk);
}

/**
 * rds_tcp_listen_init() - listen on RDS_TCP_PORT in a namespace
 * @net: the namespace
 * @v6: an IPv6 socket (which takes IPv4 too), else IPv4 only
 *
 * Return: the listener, or NULL.
 */
struct socket *rds_tcp_listen_init(struct net *net, bool v6)
{
	struct rds_tcp_net *rtn = net_generic(net, rds_tcp_netid);
	struct sockaddr_storage ss = {};
	struct socket *sock;
	int len, ret;

	ret = sock_create_kern(net, v6 ? PF_INET6 : PF_INET, SOCK_STREAM,
			       IPPROTO_TCP, &sock);
	if (ret)
		return NULL;
	sock->sk->sk_reuse = SK_CAN_REUSE;
	tcp_sock_set_nodelay(sock->sk);

	write_lock_bh(&sock->sk->sk_callback_lock);
	rtn->orig_data_ready = sock->sk->sk_data_ready;
	sock->sk->sk_user_data = rtn;
	sock->sk->sk_data_ready = rds_tcp_listen_data_ready;
	write_unlock_bh(&sock->sk->sk_callback_lock);

	if (v6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = in6addr_any;
		sin6->sin6_port = htons(RDS_TCP_PORT);
		len = sizeof(*sin6);
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_ANY);
		sin->sin_port = htons(RDS_TCP_PORT);
		len = sizeof(*sin);
	}
	ret = kernel_bind(sock, (struct sockaddr *)&ss, len);
	if (ret)
		goto out;
	ret = kernel_listen(sock, 64);
	if (ret)
		goto out;
	return sock;
out:
	sock_release(sock);
	return NULL;
}

/**
 * rds_tcp_listen_stop() - close a namespace's listener
 * @sock: the listener, or NULL
 * @accept_w: its accept work, waited for
 *
 * When it returns, no accept runs or will run.
 */
void rds_tcp_listen_stop(struct socket *sock, struct work_struct *accept_w)
{
	struct rds_tcp_net *rtn;
	struct sock *sk;

	if (!sock)
		return;
	sk = sock->sk;
	lock_sock(sk);
	write_lock_bh(&sk->sk_callback_lock);
	rtn = sk->sk_user_data;
	if (rtn) {
		sk->sk_data_ready = rtn->orig_data_ready;
		sk->sk_user_data = NULL;
	}
	write_unlock_bh(&sk->sk_callback_lock);
	release_sock(sk);
	cancel_work_sync(accept_w);
	sock_release(sock);
}

/* Drop an accepted socket at once: RST, no TIME_WAIT left behind. */
static void rds_tcp_reject(struct socket *sock)
{
	sock_no_linger(sock->sk);
	kernel_sock_shutdown(sock, SHUT_RDWR);
	sock_release(sock);
}

/* The addresses and interface of an accepted socket. */
static void rds_tcp_accepted_addrs(struct socket *sock, struct in6_addr *my,
				   struct in6_addr *peer, u32 *dev_if)
{
	struct sock *sk = sock->sk;

	*dev_if = 0;
#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6) {
		*my = sk->sk_v6_rcv_saddr;
		*peer = sk->sk_v6_daddr;
		if (ipv6_addr_type(peer) & IPV6_ADDR_LINKLOCAL)
			*dev_if = sk->sk_bound_dev_if;
		return;
	}
#endif
	ipv6_addr_set_v4mapped(inet_sk(sk)->inet_rcv_saddr, my);
	ipv6_addr_set_v4mapped(inet_sk(sk)->inet_daddr, peer);
}

/*
 * Take @sock for @conn, whose state we own as CONNECTING: a poke of
 * ours in flight gives way.  Return: true if taken.
 */
static bool rds_tcp_take(struct rds_conn *conn, struct socket *sock)
{
	struct rds_tcp_conn *tc = conn->tp;
	bool up;

	mutex_lock(&tc->sock_mutex);
	if (rds_conn_state(conn) != RDS_CONN_CONNECTING ||
	    (tc->sock && !tc->poke)) {
		mutex_unlock(&tc->sock_mutex);
		return false;
	}
	if (tc->sock)
		rds_tcp_release_sock(tc);	/* the poke */
	cancel_delayed_work(&tc->poke_w);
	rds_tcp_tune(sock);
	rds_tcp_set_callbacks(tc, sock);
	up = sock->sk->sk_state == TCP_ESTABLISHED;
	mutex_unlock(&tc->sock_mutex);
	if (up) {
		rds_zc_conn_connected(conn);
		rds_zc_conn_mp_probe(conn);	/* path 0 only */
	} else {
		rds_zc_conn_drop(conn, "accepted socket closed");
	}
	return true;
}

/*
 * A connection from a higher address: ours, if our connection to it is
 * down or only poking; one that is up is taken to be stale (the peer
 * restarted) and dropped, and the peer connects again.  One from a lower
 * address is a poke: reset it and connect ourselves.
 */
static bool rds_tcp_accept_conn(struct rds_conn *conn, struct socket *sock)
{
	int ret;

	if (ipv6_addr_cmp(&conn->laddr, &conn->faddr) < 0) {
		rds_tcp_poked(conn->tp);
		return false;
	}
	if (rds_conn_state(conn) == RDS_CONN_CONNECTING)
		return rds_tcp_take(conn, sock);
	ret = rds_zc_conn_accept(conn);
	if (ret && ret != -EINPROGRESS && ret != -EBUSY)
		return false;
	return rds_tcp_take(conn, sock);
}

/*
 * The path a connection from @base's peer is for (wire 10.6): the low
 * bits of its source port once the peer said that it puts them there
 * (SPORT_IDX, mp_peer_named); else path 0, as for the distribution's
 * 6.1 and 6.12, which we answer with one path, and for a poke from a
 * higher address.  A path > 0 is taken only while path 0 is up and its
 * handshake in this incarnation agreed on it: never as path 0, even
 * when path 0 is down (our reset of it may have been lost, and the peer
 * still counts it up), or the two ends would count its messages on
 * different paths.
 * Return: that path, referenced (@base's reference given back), or NULL
 * if there is no such path now.
 */
static struct rds_conn *rds_tcp_accept_path(struct rds_conn *base,
					    struct socket *sock)
{
	u8 path = ntohs(inet_sk(sock->sk)->inet_dport) & (RDS_CONN_PATHS - 1);
	struct rds_conn *conn;

	/* From a higher address it is a poke, for path 0 (tcp.h). */
	if (!READ_ONCE(base->mp_peer_named) || !path ||
	    ipv6_addr_cmp(&base->laddr, &base->faddr) < 0)
		return base;
	conn = NULL;
	if (READ_ONCE(base->mp_peer_idx) &&
	    path < READ_ONCE(base->npaths) &&
	    rds_conn_state(base) == RDS_CONN_UP)
		conn = rds_zc_conn_lookup_path(base, path);
	rds_zc_conn_put(base);
	return conn;
}

/* Accept one connection.  Return: 0 if there was one, else an errno. */
static int rds_tcp_accept_one(struct rds_tcp_net *rtn)
{
	struct in6_addr my, peer;
	struct socket *sock;
	struct rds_conn *conn;
	u32 dev_if;
	int ret;

	ret = kernel_accept(rtn->lsock, &sock, O_NONBLOCK);
	if (ret)
		return ret;
	/* What it inherited from the listener. */
	write_lock_bh(&sock->sk->sk_callback_lock);
	if (sock->sk->sk_user_data == rtn) {
		sock->sk->sk_data_ready = rtn->orig_data_ready;
		sock->sk->sk_user_data = NULL;
	}
	write_unlock_bh(&sock->sk->sk_callback_lock);
	rds_tcp_accepted_addrs(sock, &my, &peer, &dev_if);
	/* Between addresses of one namespace, local delivery is used. */
	if (rds_addr_is_local(rtn->net, &peer, dev_if))
		goto reject;
	conn = rds_zc_conn_get(rtn->net, &my, &peer, 0, dev_if, rtn->trans);
	if (IS_ERR(conn))
		goto reject;
	conn = rds_tcp_accept_path(conn, sock);
	if (!conn)
		goto reject;
	if (!rds_tcp_accept_conn(conn, sock)) {
		rds_zc_conn_put(conn);
		goto reject;
	}
	rds_zc_conn_put(conn);
	return 0;
reject:
	rds_tcp_reject(sock);
	return 0;
}

/**
 * rds_tcp_accept_work() - accept_w: take what the listener has
 * @work: the namespace's accept_w
 */
void rds_tcp_accept_work(struct work_struct *work)
{
	struct rds_tcp_net *rtn = container_of(work, struct rds_tcp_net,
					       accept_w);

	while (!rds_tcp_accept_one(rtn))
		cond_resched();
}
