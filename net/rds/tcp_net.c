// SPDX-License-Identifier: GPL-2.0
/*
 * The TCP transport's base (tcp.h): its workqueue, the id of its data in
 * each network namespace, and the options every socket of it gets.
 */
#include <linux/tcp.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "tcp.h"

unsigned int rds_tcp_netid;
struct workqueue_struct *rds_tcp_wq;

/* Keepalive, in seconds: a peer that vanished is noticed in about 30 s. */
#define RDS_TCP_KEEPIDLE	5
#define RDS_TCP_KEEPCNT		5

/**
 * rds_tcp_tune() - the options of every socket of this transport
 * @sock: a new socket, connecting or accepted
 *
 * No Nagle, keepalive, and the buffer sizes of its namespace's sysctls
 * when they are set (0: the system's defaults and autotuning).
 */
void rds_tcp_tune(struct socket *sock)
{
	struct sock *sk = sock->sk;
	struct rds_tcp_net *rtn = net_generic(sock_net(sk), rds_tcp_netid);
	int sndbuf = READ_ONCE(rtn->sndbuf);
	int rcvbuf = READ_ONCE(rtn->rcvbuf);

	tcp_sock_set_nodelay(sk);
	sock_set_keepalive(sk);
	tcp_sock_set_keepidle(sk, RDS_TCP_KEEPIDLE);
	tcp_sock_set_keepintvl(sk, RDS_TCP_KEEPIDLE);
	tcp_sock_set_keepcnt(sk, RDS_TCP_KEEPCNT);
	lock_sock(sk);
	if (sndbuf > 0) {
		sk->sk_sndbuf = sndbuf;
		sk->sk_userlocks |= SOCK_SNDBUF_LOCK;
	}
	if (rcvbuf > 0) {
		sk->sk_rcvbuf = rcvbuf;
		sk->sk_userlocks |= SOCK_RCVBUF_LOCK;
	}
	release_sock(sk);
}
