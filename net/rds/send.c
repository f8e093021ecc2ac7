// SPDX-License-Identifier: GPL-2.0
/*
 * Sending: validating a sendmsg() call, building its message, waiting out
 * congestion at the destination, and handing the message on.
 *
 * Checks run in the order the distribution's RDS runs them, so that a call
 * with several faults fails with the same errno: flags, destination,
 * binding, control messages, size, user memory, congestion.
 */
#include <linux/errno.h>
#include <linux/in.h>
#include <linux/socket.h>
#include <net/sock.h>
#include <uapi/linux/rds.h>

#include "addr.h"
#include "cong.h"
#include "connection.h"
#include "defer.h"
#include "loop.h"
#include "message.h"
#include "rdma.h"
#include "send.h"
#include "sock.h"
#include "stats.h"
#include "trace.h"
#include "transport.h"
#include "zcopy.h"

/*
 * The flags RDS has always accepted; programs rely on others failing.
 * MSG_ZEROCOPY sends without a copy when SO_ZEROCOPY is on (zcopy.c);
 * without SO_ZEROCOPY it is EINVAL, as in the distribution.
 */
#define RDS_SEND_FLAGS	(MSG_DONTWAIT | MSG_CMSG_COMPAT | MSG_ZEROCOPY)

/*
 * Where the message goes, from msg_name, in *@daddr:*@dport; *@scope is
 * the interface of a link-local one.  Without msg_name the caller takes
 * the connect()ed destination.
 */
static int rds_send_dest(struct msghdr *msg, struct in6_addr *daddr,
			 __be16 *dport, u32 *scope)
{
	int ret;

	if (msg->msg_namelen < sizeof(struct sockaddr_in))
		return -EINVAL;
	ret = rds_addr_parse(msg->msg_name, msg->msg_namelen, -EINVAL, daddr,
			     dport, scope);
	if (ret)
		return ret;
	if (!rds_addr_unicast(daddr, *scope))
		return -EINVAL;
	return 0;
}

/*
 * The scope of a message from the socket's address to @daddr: both
 * families must match, and two link-local scopes must be one link.
 * Caller holds lock_sock().
 */
static int rds_send_scope(const struct rds_sock *rs,
			  const struct in6_addr *daddr, u32 *scope)
{
	if (rds_addr_is_v4(daddr) != rds_addr_is_v4(&rs->bound_addr))
		return -EOPNOTSUPP;
	if (!*scope)
		*scope = rs->bound_scope;
	else if (rs->bound_scope && rs->bound_scope != *scope)
		return -EINVAL;
	return 0;
}

/* Whether a SOL_RDS control message carries an RDMA operation or atomic. */
static bool rds_send_cmsg_is_op(int type)
{
	switch (type) {
	case RDS_CMSG_RDMA_ARGS:
	case RDS_CMSG_ATOMIC_FADD:
	case RDS_CMSG_ATOMIC_CSWP:
	case RDS_CMSG_MASKED_ATOMIC_FADD:
	case RDS_CMSG_MASKED_ATOMIC_CSWP:
		return true;
	default:
		return false;
	}
}

/*
 * Control messages, a first pass before anything is allocated: those of
 * other levels are ignored, as by every datagram socket; the RDMA ones
 * are parsed by rds_rdma_cmsgs() once the message exists.  A zero-copy
 * cookie is taken here, into *@cookie, with the distribution's errnos:
 * EINVAL for one shorter than a u32, one without a zero-copy send of a
 * payload (@zcopy), one with an RDMA operation or atomic, and for
 * MSG_ZEROCOPY without one; two are EINVAL too, as two of any kind.
 */
static int rds_send_check_cmsgs(struct msghdr *msg, bool zcopy, size_t len,
				u32 *cookie)
{
	bool has_cookie = false, has_op = false;
	struct cmsghdr *cmsg;
	int ret;

	for_each_cmsghdr(cmsg, msg) {
		if (!CMSG_OK(msg, cmsg))
			return -EINVAL;
		if (cmsg->cmsg_level != SOL_RDS)
			continue;
		if (cmsg->cmsg_type == RDS_CMSG_ZCOPY_COOKIE) {
			if (cmsg->cmsg_len < CMSG_LEN(sizeof(*cookie)) ||
			    !zcopy || !len || has_cookie)
				return -EINVAL;
			memcpy(cookie, CMSG_DATA(cmsg), sizeof(*cookie));
			has_cookie = true;
			continue;
		}
		has_op |= rds_send_cmsg_is_op(cmsg->cmsg_type);
		ret = rds_rdma_cmsg_type(cmsg->cmsg_type);
		if (ret)
			return ret;
	}
	if ((msg->msg_flags & MSG_ZEROCOPY) && !has_cookie)
		return -EINVAL;
	if (has_cookie && has_op)
		return -EINVAL;
	return 0;
}

/*
 * Wait until the destination port is not congested: in @map, the
 * destination's, else in the one looked up.  A refusal with ENOBUFS is
 * remembered for poll(), with the generation read before the test so
 * that poll() sees any later change.
 */
static int rds_send_cong_wait(struct rds_sock *rs, struct rds_cong_map *map,
			      const struct in6_addr *daddr, __be16 dport,
			      bool nonblock, long *timeo)
{
	unsigned int gen = rds_cong_generation();
	int ret;

	if (map)
		ret = rds_cong_map_wait(map, dport, nonblock, timeo,
					&rs->cong_mon);
	else
		ret = rds_cong_wait(sock_net(&rs->sk), daddr, dport, nonblock,
				    timeo, &rs->cong_mon);
	if (ret == -ENOBUFS) {
		WRITE_ONCE(rs->cong_seen_gen, gen);
		WRITE_ONCE(rs->cong_seen, true);
	}
	return ret;
}

/**
 * rds_send_uncharge() - a message leaves its connection for good
 * @m: the message, still charged to its sender @m->rs
 *
 * Gives back what rds_send_charge() took, wakes the sender and drops the
 * message's socket reference; @m->rs is NULL afterwards.
 *
 * Context: any.
 */
void rds_send_uncharge(struct rds_msg *m)
{
	struct rds_sock *rs = m->rs;

	spin_lock_bh(&rs->snd_lock);
	rs->snd_bytes -= rds_msg_charge(m->len);
	spin_unlock_bh(&rs->snd_lock);
	rs->sk.sk_write_space(&rs->sk);
	m->rs = NULL;
	sock_put(&rs->sk);
}

/**
 * rds_send_sock_dead() - whether a sender is closed
 * @rs: the socket
 *
 * Context: any.
 */
bool rds_send_sock_dead(const struct rds_sock *rs)
{
	return READ_ONCE(rs->dead);
}

/*
 * The wait condition of a blocked writer: charge, or mark the socket as
 * having a waiting writer and try once more.  Marked at every test, not
 * once before the wait: a release clears the mark when it wakes the
 * writers, and one that finds the room taken by another must be woken by
 * the next release too.
 */
static bool rds_send_charge_or_mark(struct rds_sock *rs, size_t size,
				    bool *half)
{
	if (rds_sock_snd_charge(rs, size, half))
		return true;
	rds_sock_snd_wait_mark(rs);
	return rds_sock_snd_charge(rs, size, half);
}

/*
 * Charge the message to the sender's buffer (payload and descriptor),
 * waiting for room unless non-blocking.
 * Return: 0, -EAGAIN, -ETIMEDOUT, -EINTR/-ERESTARTSYS.
 */
static int rds_send_charge(struct rds_sock *rs, struct rds_msg *m,
			   bool nonblock, long *timeo)
{
	size_t size = rds_msg_charge(m->len);
	bool half = false;
	long left;

	if (rds_sock_snd_charge(rs, size, &half))
		goto charged;
	rds_stat_inc(RDS_STAT_SEND_SNDBUF_FULL);
	if (nonblock)
		return -EAGAIN;
	left = wait_event_interruptible_timeout(*sk_sleep(&rs->sk),
						rds_send_charge_or_mark(rs, size,
									&half),
						*timeo);
	if (left < 0)
		return sock_intr_errno(*timeo);
	if (!left)
		return -ETIMEDOUT;
	*timeo = left;
charged:
	/* Half the buffer in flight: ask the peer to acknowledge (wire 5.3). */
	if (half)
		m->flags |= RDS_FLAG_ACK_REQUIRED;
	return 0;
}

/*
 * Whether a message to @daddr goes over a connection of the socket's
 * transport rather than through local delivery.  Another host's address
 * always does.  So does another address of this host when the socket was
 * pinned with SO_RDS_TRANSPORT to a transport with connections that
 * serves that address too: a program that asks for IB gets IB, an IB
 * connection between two local addresses of RDMA devices, through the
 * device, as with the distribution's RDS; not a transport that prefers
 * local delivery (TCP, as the distribution's).  Every other socket, whatever
 * address it is bound to, keeps local delivery for local destinations: it
 * asked for no transport, and local delivery gives it the same guarantees
 * without a device's work (rds_zc.rst, "Local destinations").  A message
 * to the socket's own address always stays local: one address cannot be
 * both ends of one connection.
 */
static bool rds_send_is_remote(struct rds_sock *rs,
			       const struct rds_transport *trans, bool pinned,
			       const struct in6_addr *saddr,
			       const struct in6_addr *daddr, u32 scope)
{
	struct net *net = sock_net(&rs->sk);

	if (!rds_addr_is_local(net, daddr, scope))
		return true;
	return pinned && trans && trans->xmit && !trans->prefer_local &&
	       trans->laddr_check &&
	       !ipv6_addr_equal(saddr, daddr) &&
	       !trans->laddr_check(net, daddr, scope);
}

/*
 * The connection to the destination: the socket's cached one (@conn,
 * found under lock_sock() in rds_sendmsg()), else looked up or made, and
 * then cached for the next message.
 */
static struct rds_conn *rds_send_conn(struct rds_sock *rs,
				      const struct rds_transport *trans,
				      const struct in6_addr *saddr,
				      const struct in6_addr *daddr, u32 scope,
				      u8 tos)
{
	unsigned long gen = rds_conn_generation();
	struct rds_conn *conn;

	conn = rds_zc_conn_get(sock_net(&rs->sk), saddr, daddr, tos, scope,
			       trans);
	if (IS_ERR(conn))
		return conn;
	lock_sock(&rs->sk);
	rds_conn_cache_set(&rs->conn_cache, conn, gen);
	release_sock(&rs->sk);
	return conn;
}

/*
 * The path a socket's messages take to a pair that agreed on several
 * (connection.h): the sum of its bound port and the destination port
 * modulo their number.  Both ends of a socket pair compute the same, so
 * a request and its answer share one TCP connection, whose ACKs then
 * ride on the data (with a path per sender, each connection carried
 * data one way, and its receiver sent a bare ACK for every message: two
 * segments each way where one does); sockets on consecutive ports to
 * one destination still spread over every path.  A socket leaves the
 * path it is on only when none of its messages is queued there or waits
 * there for an ACK: what it sent before then arrives before what it
 * sends after, whichever the path.
 *
 * *@connp is the path it is on when it comes from the socket's cache.
 * After a miss (the socket sent to another destination meanwhile, or
 * connections anywhere left the table and moved the cache's generation)
 * it is path 0, the base, which says nothing of where the socket's
 * messages are: they may wait on its own path.  So leaving the base
 * asks the base whether it holds any of them, and leaving a path > 0
 * (for another destination port, or when npaths changed) waits until
 * nothing of the socket is anywhere.  Staying on the base because the
 * socket's charge is on another path would put its next message before
 * them.  Paths are made by the handshake only; one not there (yet)
 * leaves the socket where it is.
 */
static void rds_send_path(struct rds_sock *rs, struct rds_conn **connp,
			  __be16 sport, __be16 dport)
{
	struct rds_conn *conn = *connp, *p;
	u8 n = READ_ONCE(conn->base->npaths);
	u8 want = n > 1 ? (ntohs(sport) + ntohs(dport)) % n : 0;
	unsigned long gen;

	if (conn->path == want)
		return;
	if (READ_ONCE(rs->snd_bytes) &&
	    (conn->path || rds_conn_holds_sock(conn, rs)))
		return;
	gen = rds_conn_generation();
	p = rds_zc_conn_lookup_path(conn->base, want);
	if (!p)
		return;
	lock_sock(&rs->sk);
	rds_conn_cache_set(&rs->conn_cache, p, gen);
	release_sock(&rs->sk);
	rds_zc_conn_put(conn);
	*connp = p;
}

/*
 * Queue a message for another host on the connection to it: *@connp,
 * the socket's cached one with a reference, else looked up here and left
 * in *@connp; the caller gives the reference back.
 */
static int rds_send_remote(struct rds_sock *rs, const struct rds_transport *trans,
			   struct rds_conn **connp, struct rds_msg **mp,
			   const struct in6_addr *saddr, __be16 sport,
			   const struct in6_addr *daddr, __be16 dport,
			   u32 scope, u8 tos, bool nonblock, long *timeo)
{
	struct rds_msg *m = *mp;
	struct rds_conn *conn;
	int ret;

	if (!trans || !trans->xmit)
		return -ENETUNREACH;
	if (!*connp) {
		conn = rds_send_conn(rs, trans, saddr, daddr, scope, tos);
		if (IS_ERR(conn))
			return PTR_ERR(conn);
		*connp = conn;
	}
	if (trans->mp_capable)
		rds_send_path(rs, connp, sport, dport);
	conn = *connp;

	/*
	 * The connection holds the destination's map: no lookup.  A port
	 * it says is congested while the pair is down may be free by now:
	 * the update that said so may have gone down with the connection,
	 * and only a connection brings the peer's map, so connect (as the
	 * distribution's RDS does before it tests the map).
	 */
	if (rds_conn_state(conn->base) != RDS_CONN_UP &&
	    rds_cong_test(conn->fmap, dport))
		rds_zc_conn_connect(conn->base);
	ret = rds_send_cong_wait(rs, conn->fmap, daddr, dport, nonblock,
				 timeo);
	if (ret)
		return ret;
	ret = rds_send_charge(rs, m, nonblock, timeo);
	if (ret)
		return ret;

	m->sport = sport;
	m->dport = dport;
	sock_hold(&rs->sk);
	m->rs = rs;
	*mp = NULL;	/* the connection owns it now */
	return rds_conn_queue(conn, m);
}

/**
 * rds_sendmsg() - send one datagram
 * @sock: the socket, bound
 * @msg: payload, destination and control messages
 * @len: payload length, at most 1 MiB and half of SO_SNDBUF
 *
 * Return: @len, or a negative errno: -EOPNOTSUPP for unsupported flags or
 * control messages, -EINVAL for a bad destination, -ENOTCONN when unbound
 * or without destination, -EMSGSIZE, -EFAULT, -ENOBUFS when the
 * destination port is congested and MSG_DONTWAIT is set, -ETIMEDOUT when
 * SO_SNDTIMEO ran out, -EINTR/-ERESTARTSYS on a signal, -ENETUNREACH for
 * a destination no transport reaches, -EAGAIN when the send buffer is
 * full and MSG_DONTWAIT is set, -ECONNREFUSED when the message needs a
 * new connection and net.rds.conn_max or conn_max_per_peer is reached
 * (connection.c), -ENOBUFS also for an RDMA operation whose notification
 * would take the socket's notifications over half its SO_RCVBUF
 * (rdma_op.c) and for a zero-copy send when the socket holds as many
 * completions not read as it may, -ENOMEM for a zero-copy send whose
 * pinned pages would go over RLIMIT_MEMLOCK (zcopy.c).
 */
int rds_sendmsg(struct socket *sock, struct msghdr *msg, size_t len)
{
	struct sock *sk = sock->sk;
	struct rds_sock *rs = rds_sk(sk);
	struct net *net = sock_net(sk);
	const struct rds_transport *trans;
	bool nonblock = msg->msg_flags & MSG_DONTWAIT;
	long timeo = sock_sndtimeo(sk, nonblock);
	struct in6_addr saddr, daddr;
	struct rds_conn *conn = NULL;
	__be16 sport, dport;
	struct rds_msg *m;
	bool remote, pinned;
	bool zcopy = (msg->msg_flags & MSG_ZEROCOPY) &&
		     sock_flag(sk, SOCK_ZEROCOPY);
	u32 scope, cookie = 0;
	u8 tos;
	int ret;

	rds_defer_run(rs);	/* releases of earlier operations first */
	if (msg->msg_flags & ~RDS_SEND_FLAGS)
		return -EOPNOTSUPP;
	if (msg->msg_namelen) {
		ret = rds_send_dest(msg, &daddr, &dport, &scope);
		if (ret)
			return ret;
	}

	/* Once per call: the destination, the binding and the connection. */
	lock_sock(sk);
	if (!msg->msg_namelen) {
		daddr = rs->conn_addr;
		dport = rs->conn_port;
		scope = rs->conn_scope;
	}
	saddr = rs->bound_addr;
	sport = rs->bound_port;
	trans = rs->trans;	/* pinned while bound */
	pinned = rs->trans_pinned;
	tos = rs->tos;
	if (!sport || ipv6_addr_any(&daddr))
		ret = -ENOTCONN;
	else
		ret = rds_send_scope(rs, &daddr, &scope);
	if (!ret) {
		/* As in the distribution: the type of service is fixed by a send. */
		rs->tos_fixed = true;
		conn = rds_conn_cache_get(&rs->conn_cache, net, &saddr, &daddr,
					  tos, scope);
	}
	release_sock(sk);
	if (ret)
		return ret;

	/* Most sends have no control message and no MSG_ZEROCOPY. */
	if (unlikely(msg->msg_controllen || (msg->msg_flags & MSG_ZEROCOPY))) {
		ret = rds_send_check_cmsgs(msg, zcopy, len, &cookie);
		if (ret)
			goto out_conn;
	}
	ret = -EMSGSIZE;
	if (len > RDS_MAX_MSG_SIZE || len > rds_sk_sndbuf(rs))
		goto out_conn;

	if (zcopy) {	/* the user's pages, pinned (zcopy.c) */
		m = rds_zc_msg_build(rs, &msg->msg_iter, len, cookie);
		if (IS_ERR(m)) {
			ret = PTR_ERR(m);
			goto out_conn;
		}
		goto built;
	}
	/* A small payload goes inline: no page per datagram. */
	if (len && len <= RDS_MSG_INLINE_MAX)
		m = rds_msg_alloc_inline(len, GFP_KERNEL | __GFP_ACCOUNT);
	else
		m = rds_msg_alloc(len, GFP_KERNEL);
	ret = -ENOMEM;
	if (!m)
		goto out_conn;
	ret = rds_msg_copy_from_iter(m, &msg->msg_iter);
	if (ret)
		goto out;
built:
	/* A connection cached for this destination says it already. */
	remote = conn ||
		 rds_send_is_remote(rs, trans, pinned, &saddr, &daddr, scope);
	if (msg->msg_controllen) {	/* RDMA, atomics: none in most sends */
		ret = rds_rdma_cmsgs(rs, msg, m, &daddr, dport, remote);
		if (ret)
			goto out;
	}

	if (remote) {
		ret = rds_send_remote(rs, trans, &conn, &m, &saddr, sport,
				      &daddr, dport, scope, tos, nonblock,
				      &timeo);
		if (ret)
			goto out;
		goto sent;
	}

	ret = rds_send_cong_wait(rs, NULL, &daddr, dport, nonblock, &timeo);
	if (ret)
		goto out;

	ret = rds_loop_xmit(net, m, &saddr, sport, &daddr, dport, scope);
	if (ret)
		goto out;
sent:
	rds_stat_inc(RDS_STAT_SEND_MSGS);
	rds_stat_add(RDS_STAT_SEND_BYTES, len);
	ret = len;
out:
	trace_rds_send(&saddr, sport, &daddr, dport, len, ret);
	/* A send that failed keeps its buffer: no completion for it. */
	if (ret < 0 && m && m->zc)
		rds_zc_msg_abort(m);
	rds_msg_put(m);
out_conn:
	if (conn)
		rds_zc_conn_put(conn);
	return ret;
}
