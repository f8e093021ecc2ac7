// SPDX-License-Identifier: GPL-2.0
/*
 * Receiving: queueing delivered messages on a socket, accounting them
 * against its receive buffer, and handing them to recvmsg().
 *
 * A socket's port becomes congested when its queue holds more than half
 * of SO_RCVBUF in payload (rds_sk_rcvbuf(), as the distribution counts),
 * or more memory than rds_recv_mem_limit() (its messages' true size,
 * rds_msg_truesize(): a queue of empty messages holds memory too), and
 * uncongested again when a read takes both below half of that.  Senders
 * are held back by congestion before they send, and whatever was already
 * on its way is accepted, so no message is ever lost on a live socket.
 *
 * A remote peer that ignores congestion could still grow a queue without
 * bound.  Past twice the memory limit a message from a remote peer is
 * refused without being lost (rds_recv_over_limit()): the connection
 * holds it and takes nothing more from that peer until the reader has
 * made room (rds_zc_conn_recv()).  Local senders see the congestion map
 * directly and need no such limit.
 */
#include <linux/errno.h>
#include <linux/sched/clock.h>
#include <linux/in.h>
#include <linux/module.h>
#include <linux/socket.h>
#include <net/compat.h>
#include <net/ip.h>
#include <net/sock.h>
#include <uapi/linux/rds.h>

#include "addr.h"
#include "bind.h"
#include "connection.h"
#include "defer.h"
#include "message.h"
#include "rdma.h"
#include "recv.h"
#include "recv_hold.h"
#include "sock.h"
#include "stats.h"
#include "trace.h"
#include "transport.h"
#include "zcopy.h"

/*
 * The memory a socket's queue may hold before its port is congested:
 * SO_RCVBUF as the kernel keeps it (twice what was asked), and at least
 * RDS_RECV_MEM_MIN.  What an honest peer has on its way when congestion
 * reaches it depends on its send rate and the round trip, not on our
 * SO_RCVBUF, so a small buffer must not make the hard limit (twice this)
 * so low that honest traffic reaches it: a peer held back holds back the
 * other ports on its connection too.
 */
#define RDS_RECV_MEM_MIN	(1024 * 1024)

static size_t rds_recv_mem_limit(const struct rds_sock *rs)
{
	return max_t(size_t, READ_ONCE(rs->sk.sk_rcvbuf), RDS_RECV_MEM_MIN);
}

/* Caller holds rs->recv_lock. */
static void rds_recv_account(struct rds_sock *rs, long payload, long mem)
{
	size_t share = rds_sk_rcvbuf(rs), limit = rds_recv_mem_limit(rs);

	rs->rcv_bytes += payload;
	WRITE_ONCE(rs->rcv_mem, rs->rcv_mem + mem);
	if (!rs->cong_map)
		return;
	if (!rs->congested &&
	    (rs->rcv_bytes > share || rs->rcv_mem > limit)) {
		rs->congested = true;
		rds_cong_set_port(rs->cong_map, rs->bound_port);
	} else if (rs->congested && rs->rcv_bytes < share / 2 &&
		   rs->rcv_mem < limit / 2) {
		rs->congested = false;
		rds_cong_clear_port(rs->cong_map, rs->bound_port);
	} else {
		return;
	}
	/* Peers learn it from our next map update (wire 7.2). */
	rds_conn_cong_changed(sock_net(&rs->sk), &rs->bound_addr);
}

/*
 * Queue @inc on @rs, or free it if the socket was released.  A message
 * that released a USE_ONCE key with RDS_RDMA_INVALIDATE (@mr), and those
 * behind it, are held back from readers until the key is dead
 * (recv_hold.c); the key is released once the message has its ticket.
 * Inlined twice: with @mr NULL for the usual message, which then only
 * tests that nothing is held, and out of line for one that released a
 * key.
 * Return: true if queued.
 */
static __always_inline bool __rds_recv_queue(struct rds_sock *rs,
					     struct rds_incoming *inc,
					     struct rds_mr *mr)
{
	bool queued = false, held = false;
	u32 ticket = 0;

	inc->rx_lat[RDS_RX_LAT_QUEUED] = local_clock();
	inc->charge = rds_msg_truesize(inc->msg) + sizeof(*inc);
	spin_lock_bh(&rs->recv_lock);
	if (!rs->dead) {
		/* Once unlocked, a reader may take @inc and free it. */
		trace_rds_recv_queue(&inc->saddr, inc->sport, &inc->daddr,
				     inc->dport, inc->msg->len, 0);
		if (unlikely(mr || !list_empty(&rs->recv_held))) {
			ticket = rds_recv_hold(rs, inc, mr);
			held = true;
		} else {
			list_add_tail(&inc->item, &rs->recv_queue);
		}
		rds_recv_account(rs, inc->msg->len, inc->charge);
		queued = true;
	}
	spin_unlock_bh(&rs->recv_lock);
	if (mr)
		rds_mr_release_once(mr, ticket);

	if (!queued) {
		trace_rds_recv_queue(&inc->saddr, inc->sport, &inc->daddr,
				     inc->dport, inc->msg->len, -ESHUTDOWN);
		rds_stat_inc(RDS_STAT_RECV_DROP_CLOSED);
		rds_inc_free(inc);
		return false;
	}
	rds_stat_inc(RDS_STAT_RECV_QUEUED);
	if (likely(!held))
		rs->sk.sk_data_ready(&rs->sk);
	return true;
}

static noinline bool rds_recv_queue_once(struct rds_sock *rs,
					 struct rds_incoming *inc)
{
	struct rds_mr *mr = inc->once_mr;

	inc->once_mr = NULL;
	return __rds_recv_queue(rs, inc, mr);
}

static bool rds_recv_queue(struct rds_sock *rs, struct rds_incoming *inc)
{
	if (unlikely(inc->once_mr))
		return rds_recv_queue_once(rs, inc);
	return __rds_recv_queue(rs, inc, NULL);
}

/*
 * Does @rs hold too much to take a remote message?  Read without the
 * lock: a stale answer only moves the moment a peer is held back or let
 * go.
 */
static bool rds_recv_over_limit(const struct rds_sock *rs)
{
	return READ_ONCE(rs->rcv_mem) > 2 * rds_recv_mem_limit(rs);
}

/**
 * rds_zc_deliver() - hand a received message to its socket
 * @net: namespace the message arrived in
 * @inc: the message, with daddr/dport naming the receiver
 * @bounded: refuse it if the socket is over its hard limit
 * @cache: the socket the caller's connection delivered to last, or NULL
 *	(rds_bind_lookup())
 *
 * A message for a port nobody is bound to is dropped, as RDS always did:
 * the sender is not told.
 *
 * Context: any; does not sleep.
 * Return: 0, @inc consumed; -EBUSY (@bounded only): the socket is over
 * its hard limit and @inc was not touched.
 */
int rds_zc_deliver(struct net *net, struct rds_incoming *inc, bool bounded,
		   struct rds_sock_cache *cache)
{
	struct rds_sock *rs;

	/* Transports stamp these when a message starts to arrive. */
	if (!inc->rx_lat[RDS_RX_LAT_HEADER])
		inc->rx_lat[RDS_RX_LAT_HEADER] = local_clock();
	if (!inc->rx_lat[RDS_RX_LAT_START])
		inc->rx_lat[RDS_RX_LAT_START] = inc->rx_lat[RDS_RX_LAT_HEADER];

	rs = rds_bind_lookup(net, &inc->daddr, inc->dport, inc->scope, cache);
	if (!rs) {
		trace_rds_recv_queue(&inc->saddr, inc->sport, &inc->daddr,
				     inc->dport, inc->msg->len, -ENOTCONN);
		rds_stat_inc(RDS_STAT_RECV_DROP_NO_SOCK);
		rds_inc_free(inc);
		return 0;
	}
	if (bounded && rds_recv_over_limit(rs)) {
		sock_put(&rs->sk);
		return -EBUSY;
	}
	if (inc->msg->exthdr[0])
		rds_rdma_recv_exthdr(rs, inc);
	if (sock_flag(&rs->sk, SOCK_RCVTSTAMP))
		inc->rx_tstamp = ktime_get_real();
	rds_recv_queue(rs, inc);
	sock_put(&rs->sk);
	return 0;
}
EXPORT_SYMBOL_GPL(rds_zc_deliver);

/*
 * Anything for a reader, who may have room for congestion (@cong) and
 * RDMA (@rdma) notifications or not (see rds_recvmsg()).
 */
static inline bool rds_recv_ready(struct rds_sock *rs, bool cong, bool rdma)
{
	/*
	 * Without recv_lock: a wait condition, and whoever queues wakes the
	 * waiters after its list_add() (rds_recv_queue(), rds_rdma_op_done()),
	 * and the wait queue's lock orders the two.
	 */
	return !list_empty_careful(&rs->recv_queue) ||
	       (rdma && !list_empty_careful(&rs->notify_queue)) ||
	       (cong && rds_cong_monitor_pending(&rs->cong_mon));
}

/**
 * rds_recv_readable() - would recvmsg() return something now?
 * @rs: the socket
 *
 * Return: true if a message, a congestion or RDMA notification or a
 * zero-copy completion waits, even one that only a reader with a control
 * buffer can take.
 */
bool rds_recv_readable(struct rds_sock *rs)
{
	return rds_recv_ready(rs, true, true) || rds_zc_readable(rs);
}

/**
 * rds_recv_purge() - drop everything queued and refuse new messages
 * @rs: a socket being released, already out of the bind table
 *
 * Return: the payload bytes dropped.
 */
size_t rds_recv_purge(struct rds_sock *rs)
{
	struct rds_incoming *inc, *tmp;
	LIST_HEAD(dropped);
	size_t bytes;

	spin_lock_bh(&rs->recv_lock);
	WRITE_ONCE(rs->dead, true);	/* read by connections' shutdown */
	bytes = rs->rcv_bytes;
	list_splice_init(&rs->recv_queue, &dropped);
	list_splice_tail_init(&rs->recv_held, &dropped);
	rds_recv_account(rs, -(long)rs->rcv_bytes, -(long)rs->rcv_mem);
	spin_unlock_bh(&rs->recv_lock);

	list_for_each_entry_safe(inc, tmp, &dropped, item) {
		rds_stat_inc(RDS_STAT_RECV_PURGED);
		rds_inc_free(inc);
	}
	return bytes;
}

static struct rds_incoming *rds_recv_head(struct rds_sock *rs)
{
	struct rds_incoming *inc;

	spin_lock_bh(&rs->recv_lock);
	inc = list_first_entry_or_null(&rs->recv_queue, struct rds_incoming,
				       item);
	spin_unlock_bh(&rs->recv_lock);
	return inc;
}

static void rds_recv_dequeue(struct rds_sock *rs, struct rds_incoming *inc)
{
	spin_lock_bh(&rs->recv_lock);
	list_del_init(&inc->item);
	rds_recv_account(rs, -(long)inc->msg->len, -(long)inc->charge);
	spin_unlock_bh(&rs->recv_lock);
	rds_inc_free(inc);
}

/*
 * An empty message carrying the mask of ports that became uncongested.
 * Return: 0, -EAGAIN if there is none, -ENOBUFS if the control buffer
 * cannot hold it whole (it stays pending, as in rds_rdma_recv_cmsgs()),
 * -EFAULT.
 */
static int rds_recv_cong_notify(struct rds_sock *rs, struct msghdr *msg)
{
	u64 notify;
	size_t room = (msg->msg_flags & MSG_CMSG_COMPAT) ?
		      sizeof(struct compat_cmsghdr) + sizeof(notify) :
		      CMSG_LEN(sizeof(notify));
	int ret;

	/* The monitors' lock is global: not taken when nothing is pending. */
	if (!rds_cong_monitor_pending(&rs->cong_mon))
		return -EAGAIN;
	notify = rds_cong_monitor_peek(&rs->cong_mon);
	if (!notify)
		return -EAGAIN;
	if (!msg->msg_control || msg->msg_controllen < room)
		return -ENOBUFS;
	ret = put_cmsg(msg, SOL_RDS, RDS_CMSG_CONG_UPDATE, sizeof(notify),
		       &notify);
	if (ret)
		return ret;	/* still pending for the next reader */
	rds_cong_monitor_ack(&rs->cong_mon, notify);
	return 0;
}

/*
 * SO_RDS_MSG_RXPATH_LATENCY: for each point the reader asked for, the time
 * in nanoseconds from that point to the next one.
 */
static int rds_recv_put_latency(struct rds_sock *rs, struct msghdr *msg,
				struct rds_incoming *inc)
{
	struct rds_cmsg_rx_trace t;
	unsigned int i, pos;

	if (!rs->rx_traces)
		return 0;
	memset(&t, 0, sizeof(t));
	inc->rx_lat[RDS_RX_LAT_READ] = local_clock();
	t.rx_traces = rs->rx_traces;
	for (i = 0; i < rs->rx_traces; i++) {
		pos = rs->rx_trace_pos[i];
		t.rx_trace_pos[i] = pos;
		t.rx_trace[i] = inc->rx_lat[pos + 1] - inc->rx_lat[pos];
	}
	return put_cmsg(msg, SOL_RDS, RDS_CMSG_RXPATH_LATENCY, sizeof(t), &t);
}

/*
 * SO_TIMESTAMP (SOL_SOCKET, or SOL_RDS as the distribution also takes
 * it): when the message was queued, as a struct timeval in the old form
 * or the new one (SO_TIMESTAMP_NEW); put_cmsg() converts it for 32-bit
 * tasks.
 */
static int rds_recv_put_tstamp(struct rds_sock *rs, struct msghdr *msg,
			       const struct rds_incoming *inc)
{
	struct __kernel_old_timeval tv;
	struct __kernel_sock_timeval stv;

	if (!inc->rx_tstamp || !sock_flag(&rs->sk, SOCK_RCVTSTAMP))
		return 0;
	tv = ns_to_kernel_old_timeval(ktime_to_ns(inc->rx_tstamp));
	if (!sock_flag(&rs->sk, SOCK_TSTAMP_NEW))
		return put_cmsg(msg, SOL_SOCKET, SO_TIMESTAMP_OLD, sizeof(tv),
				&tv);
	stv.tv_sec = tv.tv_sec;
	stv.tv_usec = tv.tv_usec;
	return put_cmsg(msg, SOL_SOCKET, SO_TIMESTAMP_NEW, sizeof(stv), &stv);
}

/* The sender's name: a sockaddr_in, or a sockaddr_in6 for IPv6. */
static void rds_recv_fill_name(struct msghdr *msg,
			       const struct rds_incoming *inc)
{
	DECLARE_SOCKADDR(struct sockaddr_in6 *, sin6, msg->msg_name);

	if (sin6)
		msg->msg_namelen = rds_addr_fill(sin6, &inc->saddr, inc->sport,
						 inc->scope);
}

/*
 * The control messages a datagram may bring: latency traces, its RDMA
 * cookie, its timestamp, and the zero-copy completions that ride along,
 * room permitting.  Out of line: rds_recv_one() calls it only when one
 * of them is there to put, which most reads do not have.
 */
static noinline int rds_recv_put_cmsgs(struct rds_sock *rs,
				       struct msghdr *msg,
				       struct rds_incoming *inc)
{
	if (rds_recv_put_latency(rs, msg, inc) || rds_rdma_put_dest(msg, inc) ||
	    rds_recv_put_tstamp(rs, msg, inc) || rds_zc_recv_cmsg(rs, msg) < 0)
		return -EFAULT;
	return 0;
}

/*
 * Copy the head of the queue to the reader.  Caller holds recv_mutex, so
 * the head cannot be taken by anyone else meanwhile.
 * Return: bytes for recvmsg() to return, -EAGAIN if the queue is empty.
 */
static int rds_recv_one(struct rds_sock *rs, struct msghdr *msg,
			size_t size, int flags)
{
	struct rds_incoming *inc = rds_recv_head(rs);
	size_t len, n;
	int ret;

	if (!inc)
		return -EAGAIN;
	len = inc->msg->len;
	n = min(size, len);
	ret = rds_msg_copy_to_iter(inc->msg, n, &msg->msg_iter);
	if (ret < 0)
		return ret;	/* the message stays queued */

	if (n < len) {
		msg->msg_flags |= MSG_TRUNC;
		if (flags & MSG_TRUNC)
			ret = len;
	}
	if (unlikely(rs->rx_traces || inc->has_rdma_cookie ||
		     inc->rx_tstamp || rds_zc_readable(rs)) &&
	    rds_recv_put_cmsgs(rs, msg, inc))
		return -EFAULT;
	rds_recv_fill_name(msg, inc);
	trace_rds_recv_read(&inc->saddr, inc->sport, &inc->daddr, inc->dport,
			    len, ret);
	if (!(flags & MSG_PEEK)) {
		rds_stat_inc(RDS_STAT_RECV_DELIVERED);
		rds_stat_add(RDS_STAT_RECV_BYTES, len);
		rds_recv_dequeue(rs, inc);
	}
	return ret;
}

/*
 * What a reader takes: a congestion notification, else RDMA ones, else
 * the next datagram; @cong and @rdma are cleared when the reader has no
 * room for those.  Caller holds recv_mutex.
 * Return: as rds_recvmsg(), -EAGAIN when there was nothing to take.
 */
static int rds_recv_take(struct rds_sock *rs, struct msghdr *msg,
			 size_t size, int flags, bool *cong, bool *rdma)
{
	int ret;

	ret = rds_recv_cong_notify(rs, msg);
	if (ret == -ENOBUFS)
		*cong = false;
	if (ret != -EAGAIN && ret != -ENOBUFS)
		return ret;
	/* Not even a call when no RDMA notification is queued: most reads. */
	ret = list_empty_careful(&rs->notify_queue) ? -EAGAIN :
	      rds_rdma_recv_cmsgs(rs, msg);
	if (ret == -ENOBUFS)
		*rdma = false;
	if (ret != -EAGAIN && ret != -ENOBUFS)
		return ret;
	return rds_recv_one(rs, msg, size, flags);
}

/**
 * rds_recvmsg() - receive one datagram or one notification
 * @sock: the socket
 * @msg: where the payload, name and control messages go
 * @size: room for payload
 * @flags: MSG_DONTWAIT, MSG_PEEK, MSG_TRUNC are honoured
 *
 * Pending congestion notifications are returned first, as an empty
 * message with an RDS_CMSG_CONG_UPDATE control message; then RDMA
 * notifications, as an empty message with RDS_CMSG_RDMA_STATUS control
 * messages; then datagrams, with RDS_CMSG_RDMA_DEST if one carried a
 * cookie.
 *
 * A notification is taken only by a reader whose control buffer holds it
 * whole.  One without room (recv(), or too short a buffer) leaves them
 * queued and is served as if there were none: it gets the next datagram,
 * or waits for one, or gets -EAGAIN.  The distribution's RDS instead
 * returns an empty message with MSG_CTRUNC and frees the notification,
 * which then reaches nobody.
 *
 * MSG_OOB returns 0 and MSG_ERRQUEUE reads the (always empty) error
 * queue, as they always did with RDS.
 *
 * Return: bytes received (the full length with MSG_TRUNC), or a negative
 * errno: -EAGAIN when nothing is queued and the call may not wait,
 * -ETIMEDOUT when SO_RCVTIMEO ran out, -EINTR/-ERESTARTSYS on a signal,
 * -EFAULT if the buffer cannot be written (the message stays queued).
 */
int rds_recvmsg(struct socket *sock, struct msghdr *msg, size_t size,
		int flags)
{
	struct sock *sk = sock->sk;
	struct rds_sock *rs = rds_sk(sk);
	long timeo = sock_rcvtimeo(sk, flags & MSG_DONTWAIT);
	const long timeo_set = timeo;
	bool cong = true, rdma = true;	/* room for notifications */
	int ret;

	rds_defer_run(rs);	/* before waiting: off the critical path */
	if (flags & MSG_OOB)
		return 0;
	if (flags & MSG_ERRQUEUE)
		return sock_recv_errqueue(sk, msg, size, SOL_IP, IP_RECVERR);

	for (;;) {
		/*
		 * A reader that comes before its message finds an empty
		 * socket without the mutex and goes to sleep at once.
		 */
		if (rds_recv_ready(rs, cong, rdma)) {
			if (mutex_lock_interruptible(&rs->recv_mutex))
				return sock_intr_errno(timeo_set);
			ret = rds_recv_take(rs, msg, size, flags, &cong, &rdma);
			mutex_unlock(&rs->recv_mutex);
			if (ret != -EAGAIN)
				return ret;
		}
		if (!timeo) {
			/*
			 * No datagram for a reader that may not wait: zero-copy
			 * completions alone, in an empty message, as in the
			 * distribution.  A blocking reader waits for a
			 * datagram, and they come with it.
			 */
			ret = rds_zc_recv_cmsg(rs, msg);
			if (ret > 0)
				return 0;
			return ret < 0 ? ret : -EAGAIN;
		}

		/*
		 * Not woken for notifications this reader cannot take.  The
		 * test above was the first: the wait goes straight to its
		 * queue, and tests again there, without one more before.
		 */
		timeo = __wait_event_interruptible_timeout(*sk_sleep(sk),
							   rds_recv_ready(rs,
									  cong,
									  rdma),
							   timeo);
		if (timeo < 0)
			return sock_intr_errno(timeo_set);
		if (!timeo)
			return -ETIMEDOUT;
	}
}
