// SPDX-License-Identifier: GPL-2.0
/*
 * The TCP transport's connections: connecting (or poking the peer, from
 * the higher address), the socket callbacks, and shutdown (tcp.h).
 *
 * Sockets are closed by abort (RST, linger 0): nothing of ours stays in
 * TIME_WAIT or FIN_WAIT with timers that would outlive its namespace, and
 * what the peer may not have read is sent again by the core, which only
 * counts as delivered what TCP acknowledged.
 */
#include <linux/errno.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/net.h>
#include <linux/random.h>
#include <linux/tcp.h>
#include <net/ipv6.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "addr.h"
#include "tcp.h"
#include "transport.h"

/* How long a poke waits for the peer to connect back before retrying. */
#define RDS_TCP_POKE_TIMEOUT	(5 * HZ)
/* How long we keep connecting for a peer that poked us, and how often. */
#define RDS_TCP_POKED_FOR	(30 * HZ)
#define RDS_TCP_RETRY_DELAY	(HZ / 4)

static void rds_tcp_set_ports(struct rds_tcp_conn *tc, struct sock *sk)
{
	WRITE_ONCE(tc->fport, inet_sk(sk)->inet_dport);
	WRITE_ONCE(tc->lport, inet_sk(sk)->inet_sport);
}

static void rds_tcp_state_change(struct sock *sk)
{
	void (*state_change)(struct sock *sk);
	struct rds_tcp_conn *tc;

	read_lock_bh(&sk->sk_callback_lock);
	tc = sk->sk_user_data;
	if (!tc) {		/* being released */
		state_change = sk->sk_state_change;
		goto out;
	}
	state_change = tc->orig_state_change;
	switch (sk->sk_state) {
	case TCP_ESTABLISHED:
		/* Ours: UP when the peer speaks (rds_tcp_rx_work()). */
		rds_tcp_set_ports(tc, sk);
		set_bit(RDS_TCP_AWAIT_PEER, &tc->tx_flags);
		queue_work(rds_tcp_wq, &tc->rx_w);
		queue_delayed_work(rds_tcp_wq, &tc->poke_w,
				   RDS_TCP_POKE_TIMEOUT);
		break;
	case TCP_CLOSE_WAIT:
	case TCP_CLOSE:
		rds_zc_conn_drop(tc->conn, "TCP connection closed");
		break;
	default:
		break;
	}
out:
	read_unlock_bh(&sk->sk_callback_lock);
	state_change(sk);
}

/**
 * rds_tcp_set_callbacks() - make @sock the connection of @tc
 * @tc: the connection, without a socket (a poke was released)
 * @sock: connecting, or accepted
 *
 * Data that arrived before is read at once.  Caller holds sock_mutex.
 */
void rds_tcp_set_callbacks(struct rds_tcp_conn *tc, struct socket *sock)
{
	struct sock *sk = sock->sk;

	lockdep_assert_held(&tc->sock_mutex);
	rds_tcp_ack_reset(tc);
	clear_bit(RDS_TCP_AWAIT_PEER, &tc->tx_flags);
	write_lock_bh(&sk->sk_callback_lock);
	tc->orig_data_ready = sk->sk_data_ready;
	tc->orig_write_space = sk->sk_write_space;
	tc->orig_state_change = sk->sk_state_change;
	tc->sock = sock;
	tc->poke = false;
	sk->sk_user_data = tc;
	sk->sk_data_ready = rds_tcp_data_ready;
	sk->sk_write_space = rds_tcp_write_space;
	sk->sk_state_change = rds_tcp_state_change;
	/*
	 * What came before our data_ready (tcp_recv.c); a socket still
	 * connecting has no rcv_nxt yet, and received nothing.
	 */
	WRITE_ONCE(tc->rx_seen, false);
	if (sk->sk_state == TCP_ESTABLISHED) {
		rds_tcp_set_ports(tc, sk);
		WRITE_ONCE(tc->rx_arrived, READ_ONCE(tcp_sk(sk)->rcv_nxt));
		smp_wmb();	/* rx_arrived, then rx_seen */
		WRITE_ONCE(tc->rx_seen, true);
	}
	WRITE_ONCE(tc->rx_pub, false);
	smp_wmb();	/* the above, then rx_gen (rds_tcp_rx_base_behind()) */
	WRITE_ONCE(tc->rx_gen, tc->rx_gen + 1);
	write_unlock_bh(&sk->sk_callback_lock);
	queue_work(rds_tcp_wq, &tc->rx_w);
}

/* Give the socket's callbacks back: none of ours runs after this. */
static void rds_tcp_restore_callbacks(struct rds_tcp_conn *tc)
{
	struct sock *sk = tc->sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	sk->sk_user_data = NULL;
	sk->sk_data_ready = tc->orig_data_ready;
	sk->sk_write_space = tc->orig_write_space;
	sk->sk_state_change = tc->orig_state_change;
	write_unlock_bh(&sk->sk_callback_lock);
}

/**
 * rds_tcp_release_sock() - close the socket of @tc, if any
 * @tc: the connection
 *
 * Its callbacks are removed and its receive work waited for first, and
 * the whole messages left in it delivered; the reassembly and the ACK
 * ring start afresh.  Caller holds sock_mutex.
 */
void rds_tcp_release_sock(struct rds_tcp_conn *tc)
{
	struct socket *sock = tc->sock;

	lockdep_assert_held(&tc->sock_mutex);
	if (!sock)
		return;
	if (!tc->poke) {
		rds_tcp_restore_callbacks(tc);
		/* rx_w re-arms rx_resume_w, which queues rx_w: twice. */
		cancel_delayed_work_sync(&tc->rx_resume_w);
		cancel_work_sync(&tc->rx_w);
		cancel_delayed_work_sync(&tc->rx_resume_w);
		cancel_delayed_work_sync(&tc->rx_deadline_w);
		rds_tcp_rx_drain(tc);
		rds_tcp_rx_reset(tc);
		rds_tcp_ack_reset(tc);
		/* Everything whole was read: other paths wait no more. */
		WRITE_ONCE(tc->rx_seen, false);
		smp_wmb();	/* the drain and rx_seen, then rx_gen */
		WRITE_ONCE(tc->rx_gen, tc->rx_gen + 1);
	}
	WRITE_ONCE(tc->lport, 0);
	WRITE_ONCE(tc->fport, 0);
	tc->sock = NULL;
	tc->poke = false;
	sock_no_linger(sock->sk);
	kernel_sock_shutdown(sock, SHUT_RDWR);
	sock_release(sock);
}

/* The peer address in a sockaddr of the socket's family. */
static int rds_tcp_sockaddr(const struct in6_addr *addr, u32 scope,
			    __be16 port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (rds_addr_is_v4(addr)) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = rds_addr_v4(addr);
		sin->sin_port = port;
		return sizeof(*sin);
	}
	{
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = *addr;
		sin6->sin6_port = port;
		sin6->sin6_scope_id = scope;
		return sizeof(*sin6);
	}
}

/* How many source ports rds_tcp_bind() tries before it gives up. */
#define RDS_TCP_BIND_TRIES	64

/*
 * Bind @sock to @conn's local address and a source port whose low bits
 * are @conn's path (wire 10.6), tried from a random one of the
 * namespace's ephemeral range; a poke binds any port.  Return: 0 or
 * the last bind's errno.
 */
static int rds_tcp_bind(struct socket *sock, struct rds_conn *conn, bool poke)
{
	int low, high, first, slots, len, ret, i;
	struct sockaddr_storage ss;
	u32 start;

	len = rds_tcp_sockaddr(&conn->laddr, conn->dev_if, 0, &ss);
	if (poke)
		return kernel_bind(sock, (struct sockaddr *)&ss, len);
	inet_get_local_port_range(conn->net, &low, &high);
	first = ALIGN(low, RDS_CONN_PATHS);
	slots = (high - first + 1 - conn->path + RDS_CONN_PATHS - 1) /
		RDS_CONN_PATHS;
	if (slots <= 0)
		return kernel_bind(sock, (struct sockaddr *)&ss, len);
	start = get_random_u32() % slots;
	for (i = 0; i < min(slots, RDS_TCP_BIND_TRIES); i++) {
		__be16 port = htons(first + ((start + i) % slots) *
				    RDS_CONN_PATHS + conn->path);

		len = rds_tcp_sockaddr(&conn->laddr, conn->dev_if, port, &ss);
		ret = kernel_bind(sock, (struct sockaddr *)&ss, len);
		if (ret != -EADDRINUSE)
			return ret;
	}
	return -EADDRINUSE;
}

/**
 * rds_tcp_conn_connect() - connect, or poke the peer to connect to us
 * @conn: a connection in CONNECTING
 *
 * From the lower address: a TCP connection to the peer's RDS_TCP_PORT,
 * reported by the state callback.  From the higher one: a poke, which
 * the peer resets before it connects to us (rds_tcp_accept_one()); if it
 * does not within RDS_TCP_POKE_TIMEOUT, the connection is dropped and
 * the core tries again later.
 *
 * Context: connect_w, under the core's work_mutex.
 * Return: 0, or a negative errno if it failed at once.
 */
int rds_tcp_conn_connect(struct rds_conn *conn)
{
	struct rds_tcp_conn *tc = conn->tp;
	bool poke = ipv6_addr_cmp(&conn->laddr, &conn->faddr) > 0;
	struct sockaddr_storage ss;
	struct socket *sock;
	int len, ret;

	mutex_lock(&tc->sock_mutex);
	ret = 0;
	if (tc->sock)	/* the peer's connection was taken meanwhile */
		goto out;
	ret = sock_create_kern(conn->net,
			       rds_addr_is_v4(&conn->laddr) ? PF_INET : PF_INET6,
			       SOCK_STREAM, IPPROTO_TCP, &sock);
	if (ret)
		goto out;
	rds_tcp_tune(sock);
	ret = rds_tcp_bind(sock, conn, poke);
	if (ret) {
		sock_release(sock);
		goto out;
	}
	if (poke) {
		tc->sock = sock;
		tc->poke = true;
	} else {
		rds_tcp_set_callbacks(tc, sock);
	}
	len = rds_tcp_sockaddr(&conn->faddr, conn->dev_if, htons(RDS_TCP_PORT),
			       &ss);
	ret = kernel_connect(sock, (struct sockaddr *)&ss, len, O_NONBLOCK);
	if (ret == -EINPROGRESS)
		ret = 0;
	if (ret)
		rds_tcp_release_sock(tc);
	else if (poke)
		queue_delayed_work(rds_tcp_wq, &tc->poke_w,
				   RDS_TCP_POKE_TIMEOUT);
out:
	mutex_unlock(&tc->sock_mutex);
	return ret;
}

/**
 * rds_tcp_poke_work() - poke_w: the peer did not connect back, or did
 *	not speak on our connection
 * @work: the connection's poke_w
 */
void rds_tcp_poke_work(struct work_struct *work)
{
	struct rds_tcp_conn *tc = container_of(to_delayed_work(work),
					       struct rds_tcp_conn, poke_w);
	bool poking;

	mutex_lock(&tc->sock_mutex);
	poking = tc->sock && tc->poke;
	mutex_unlock(&tc->sock_mutex);
	if (poking)
		rds_zc_conn_drop(tc->conn, "the peer did not connect back");
	else if (test_bit(RDS_TCP_AWAIT_PEER, &tc->tx_flags))
		rds_zc_conn_drop(tc->conn, "the peer took our connection but sent nothing");
}

/**
 * rds_tcp_poked() - the peer, the higher address, asks us to connect
 * @tc: the connection to it
 *
 * Context: the accept work.
 */
void rds_tcp_poked(struct rds_tcp_conn *tc)
{
	WRITE_ONCE(tc->poked_until, jiffies + RDS_TCP_POKED_FOR);
	rds_zc_conn_poked(tc->conn);
}

/**
 * rds_tcp_retry_work() - retry_w: connect again for a peer that poked us
 * @work: the connection's retry_w
 */
void rds_tcp_retry_work(struct work_struct *work)
{
	struct rds_tcp_conn *tc = container_of(to_delayed_work(work),
					       struct rds_tcp_conn, retry_w);

	rds_zc_conn_connect(tc->conn);
}

/**
 * rds_tcp_conn_shutdown() - close the connection's socket
 * @conn: the connection
 *
 * When it returns, no callback or work of this transport runs for
 * @conn's socket.  Context: the core's shutdown, under work_mutex.
 */
void rds_tcp_conn_shutdown(struct rds_conn *conn)
{
	struct rds_tcp_conn *tc = conn->tp;

	unsigned long until = READ_ONCE(tc->poked_until);

	cancel_delayed_work_sync(&tc->poke_w);	/* it takes sock_mutex */
	mutex_lock(&tc->sock_mutex);
	rds_tcp_release_sock(tc);
	mutex_unlock(&tc->sock_mutex);
	/* After the core set it DOWN, which follows this. */
	if (until && time_before(jiffies, until))
		queue_delayed_work(rds_tcp_wq, &tc->retry_w,
				   RDS_TCP_RETRY_DELAY);
}
