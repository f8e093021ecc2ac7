// SPDX-License-Identifier: GPL-2.0
/*
 * Socket options at level SOL_RDS.
 *
 * Errno rules follow the distribution's RDS, since programs test for
 * them: a wrong option length is EINVAL, an unreadable argument EFAULT,
 * an unknown option or level ENOPROTOOPT.
 */
#include <linux/errno.h>
#include <linux/fs.h>
#include <linux/in.h>
#include <linux/net.h>
#include <linux/sockptr.h>
#include <linux/uaccess.h>
#include <net/net_namespace.h>
#include <net/sock.h>
#include <uapi/linux/rds.h>

#include "addr.h"
#include "connection.h"
#include "defer.h"
#include "info.h"
#include "op_barrier.h"
#include "rdma.h"
#include "sock.h"
#include "socket.h"
#include "transport_core.h"

/* An argument of exactly @size bytes, into @arg. */
static inline int rds_opt_copy(void *arg, size_t size, sockptr_t optval,
			       unsigned int optlen)
{
	if (optlen != size)
		return -EINVAL;
	if (copy_from_sockptr(arg, optval, size))
		return -EFAULT;
	return 0;
}

static int rds_opt_bool(bool *opt, sockptr_t optval, unsigned int optlen)
{
	int val;

	if (optlen < sizeof(int))
		return -EINVAL;
	if (copy_from_sockptr(&val, optval, sizeof(val)))
		return -EFAULT;
	*opt = val != 0;
	return 0;
}

/*
 * Drop messages queued for one destination and not yet handed to the
 * transport.  Local delivery queues nothing on the sender.
 */
static int rds_opt_cancel_sent_to(struct rds_sock *rs, sockptr_t optval,
				  unsigned int optlen)
{
	struct sockaddr_in6 sin6;
	struct in6_addr addr;
	__be16 port;
	u32 scope;
	int ret;

	if (!READ_ONCE(rs->bound_port))
		return -ENOTCONN;
	if (optlen < sizeof(struct sockaddr_in))
		return -EINVAL;
	optlen = min_t(unsigned int, optlen, sizeof(sin6));
	if (copy_from_sockptr(&sin6, optval, optlen))
		return -EFAULT;
	/* Anything but a full AF_INET6 sockaddr is read as AF_INET. */
	if (sin6.sin6_family != AF_INET6 || optlen < sizeof(sin6))
		sin6.sin6_family = AF_INET;
	ret = rds_addr_parse(&sin6, optlen, -EINVAL, &addr, &port, &scope);
	if (ret)
		return ret;
	rds_conn_cancel(rs, sock_net(&rs->sk), &rs->bound_addr, &addr, port,
			false);
	return 0;
}

/*
 * Memory registration for RDMA (rdma.c); the argument is copied first.
 * RDS_GET_MR's 32 bytes are all its stack holds: the 160 of
 * RDS_GET_MR_FOR_DEST, zeroed before every copy where the kernel
 * initialises its stack, cost each registration 20 instructions.  Out of
 * line, as RDS_FREE_MR's: rds_setsockopt() calls them without a frame
 * of its own.
 */
static noinline int rds_opt_get_mr(struct rds_sock *rs, sockptr_t optval,
				   unsigned int optlen)
{
	struct rds_get_mr_args args;
	int ret;

	ret = rds_opt_copy(&args, sizeof(args), optval, optlen);
	if (ret)
		return ret;
	if (!READ_ONCE(rs->bound_port))
		return -ENOTCONN;
	return rds_rdma_get_mr(rs, &args.vec, args.cookie_addr, args.flags);
}

/* The destination is only checked: keys serve any peer of the device. */
static int rds_opt_get_mr_for_dest(struct rds_sock *rs, sockptr_t optval,
				   unsigned int optlen)
{
	struct rds_get_mr_for_dest_args args;
	struct in6_addr addr;
	__be16 port;
	u32 scope;
	int ret;

	ret = rds_opt_copy(&args, sizeof(args), optval, optlen);
	if (ret)
		return ret;
	if (!READ_ONCE(rs->bound_port))
		return -ENOTCONN;
	ret = rds_addr_parse(&args.dest_addr, sizeof(args.dest_addr), -EINVAL,
			     &addr, &port, &scope);
	if (ret)
		return ret;
	return rds_rdma_get_mr(rs, &args.vec, args.cookie_addr, args.flags);
}

static noinline int rds_opt_free_mr(struct rds_sock *rs, sockptr_t optval,
				    unsigned int optlen)
{
	struct rds_free_mr_args args;
	int ret;

	ret = rds_opt_copy(&args, sizeof(args), optval, optlen);
	if (ret)
		return ret;
	return rds_rdma_free_mr(rs, args.cookie, args.flags);
}

/*
 * Errors are EFAULT whatever is wrong, as in the distribution's RDS,
 * whose users test for exactly that.
 */
static int rds_opt_rxpath_latency(struct rds_sock *rs, sockptr_t optval,
				  unsigned int optlen)
{
	struct rds_rx_trace_so trace;
	unsigned int i;

	if (optlen != sizeof(trace))
		return -EFAULT;
	if (copy_from_sockptr(&trace, optval, sizeof(trace)))
		return -EFAULT;
	if (trace.rx_traces > RDS_MSG_RX_DGRAM_TRACE_MAX)
		return -EFAULT;
	for (i = 0; i < trace.rx_traces; i++)
		if (trace.rx_trace_pos[i] >= RDS_MSG_RX_DGRAM_TRACE_MAX)
			return -EFAULT;

	lock_sock(&rs->sk);
	rs->rx_traces = trace.rx_traces;
	memcpy(rs->rx_trace_pos, trace.rx_trace_pos, sizeof(rs->rx_trace_pos));
	release_sock(&rs->sk);
	return 0;
}

/*
 * SO_TIMESTAMP_OLD and _NEW at SOL_RDS, which the distribution takes as
 * it takes them at SOL_SOCKET: receive timestamps on or off.
 */
static int rds_opt_timestamp(struct rds_sock *rs, int optname,
			     sockptr_t optval, unsigned int optlen)
{
	struct sock *sk = &rs->sk;
	bool on;
	int ret;

	ret = rds_opt_bool(&on, optval, optlen);
	if (ret)
		return ret;
	lock_sock(sk);
	sock_valbool_flag(sk, SOCK_RCVTSTAMP, on);
	sock_valbool_flag(sk, SOCK_TSTAMP_NEW, on && optname == SO_TIMESTAMP_NEW);
	release_sock(sk);
	return 0;
}

static int rds_opt_cong_monitor(struct rds_sock *rs, sockptr_t optval,
				unsigned int optlen)
{
	bool on;
	int ret;

	ret = rds_opt_bool(&on, optval, optlen);
	if (!ret)
		rds_cong_monitor_enable(&rs->cong_mon, on);
	return ret;
}

/* Caller holds lock_sock(). */
static int rds_opt_set_transport(struct rds_sock *rs, sockptr_t optval,
				 unsigned int optlen)
{
	int type, ret;

	if (rs->trans)
		return -EOPNOTSUPP;	/* chosen already, by bind or option */
	ret = rds_opt_copy(&type, sizeof(type), optval, optlen);
	if (ret)
		return ret;
	if (type < 0 || type >= RDS_TRANS_COUNT)
		return -EINVAL;
	/* RDMA transports live in the initial namespace only. */
	if (type != RDS_TRANS_TCP && !net_eq(sock_net(&rs->sk), &init_net))
		return -EPROTOTYPE;
	rs->trans = rds_transport_get(type);
	if (!rs->trans)
		return -ENOPROTOOPT;
	rs->trans_pinned = true;
	return 0;
}

/* The options set once, or rarely: out of rds_setsockopt()'s frame. */
static noinline int rds_setsockopt_other(struct socket *sock,
					 struct rds_sock *rs, int optname,
					 sockptr_t optval, unsigned int optlen)
{
	int ret;

	switch (optname) {
	case RDS_CANCEL_SENT_TO:
		return rds_opt_cancel_sent_to(rs, optval, optlen);
	case RDS_GET_MR_FOR_DEST:
		return rds_opt_get_mr_for_dest(rs, optval, optlen);
	case RDS_RECVERR:
		lock_sock(sock->sk);
		ret = rds_opt_bool(&rs->recverr, optval, optlen);
		release_sock(sock->sk);
		return ret;
	case RDS_CONG_MONITOR:
		return rds_opt_cong_monitor(rs, optval, optlen);
	case SO_RDS_TRANSPORT:
		lock_sock(sock->sk);
		ret = rds_opt_set_transport(rs, optval, optlen);
		release_sock(sock->sk);
		return ret;
	case SO_RDS_MSG_RXPATH_LATENCY:
		return rds_opt_rxpath_latency(rs, optval, optlen);
	case SO_TIMESTAMP_OLD:
	case SO_TIMESTAMP_NEW:
		return rds_opt_timestamp(rs, optname, optval, optlen);
	default:
		return -ENOPROTOOPT;
	}
}

/**
 * rds_setsockopt() - setsockopt() at level SOL_RDS
 * @sock: the socket
 * @level: must be SOL_RDS
 * @optname: RDS_* option
 * @optval: argument
 * @optlen: argument length
 *
 * RDS_GET_MR and RDS_FREE_MR come once per registration: they are
 * dispatched first, from a frame with nothing to save.
 *
 * Return: 0 or a negative errno.
 */
int rds_setsockopt(struct socket *sock, int level, int optname,
		   sockptr_t optval, unsigned int optlen)
{
	struct rds_sock *rs = rds_sk(sock->sk);

	if (level != SOL_RDS)
		return -ENOPROTOOPT;
	rds_defer_run(rs);	/* memlock charges of ended operations */

	if (optname == RDS_GET_MR)
		return rds_opt_get_mr(rs, optval, optlen);
	if (optname == RDS_FREE_MR)
		return rds_opt_free_mr(rs, optval, optlen);
	return rds_setsockopt_other(sock, rs, optname, optval, optlen);
}

static int rds_opt_put_int(int val, char __user *optval, int __user *optlen)
{
	int len;

	if (get_user(len, optlen))
		return -EFAULT;
	if (len < (int)sizeof(int))
		return -EINVAL;
	if (put_user(val, (int __user *)optval) ||
	    put_user(sizeof(int), optlen))
		return -EFAULT;
	return 0;
}

/**
 * rds_getsockopt() - getsockopt() at level SOL_RDS
 * @sock: the socket
 * @level: must be SOL_RDS
 * @optname: RDS_RECVERR, SO_RDS_TRANSPORT, RDS_OP_BARRIER or RDS_INFO_*
 * @optval: user buffer
 * @optlen: user buffer length, in and out
 *
 * Return: 0 or a negative errno.
 */
int rds_getsockopt(struct socket *sock, int level, int optname,
		   char __user *optval, int __user *optlen)
{
	struct rds_sock *rs = rds_sk(sock->sk);
	int val;

	if (level != SOL_RDS)
		return -ENOPROTOOPT;
	if (optname >= RDS_INFO_FIRST && optname <= RDS_INFO_LAST)
		return rds_info_getsockopt(sock, optname, optval, optlen);

	switch (optname) {
	case RDS_OP_BARRIER:
		return rds_op_barrier(rs, sock->file &&
				      (sock->file->f_flags & O_NONBLOCK),
				      optval, optlen);
	case RDS_RECVERR:
		lock_sock(sock->sk);
		val = rs->recverr;
		release_sock(sock->sk);
		break;
	case SO_RDS_TRANSPORT:
		lock_sock(sock->sk);
		val = rs->trans ? (int)rs->trans->type : RDS_TRANS_NONE;
		release_sock(sock->sk);
		break;
	default:
		return -ENOPROTOOPT;
	}
	return rds_opt_put_int(val, optval, optlen);
}
