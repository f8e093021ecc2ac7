// SPDX-License-Identifier: GPL-2.0
/*
 * RDS_INFO_* tables.
 *
 * The calling convention is the distribution's, which tools depend on:
 * *optlen is the room in bytes.  If the table does not fit, the call fails
 * with ENOSPC and *optlen says how much room it needs (a call with room 0
 * asks just that).  Otherwise the entries are copied, *optlen is set to
 * their total size and the call returns the size of one entry.
 *
 * Tables are built in a kernel buffer and then copied, so no lock is held
 * across user memory.  The table may change between the sizing pass and
 * the filling pass; the filling pass then reports ENOSPC again.
 *
 * Every table has an RDS6_INFO_* twin with struct rds6_info_* rows, as in
 * the distribution's RDS: every row, each IPv4 address written as an
 * IPv4-mapped IPv6 address (::ffff:a.b.c.d), 0.0.0.0 as ::.  The
 * RDS_INFO_* tables leave out the rows of IPv6 sockets and connections.
 */
#include <linux/errno.h>
#include <linux/mm.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <net/ipv6.h>
#include <net/sock.h>
#include <uapi/linux/rds.h>

#include "addr.h"
#include "connection.h"
#include "info.h"
#include "message.h"
#include "sock.h"
#include "socket.h"
#include "stats.h"
#include "transport_core.h"

struct rds_info_sink {
	struct net	*net;	/* the caller's namespace: only its sockets */
	char		*buf;
	size_t		room;	/* bytes at buf */
	size_t		each;	/* entry size */
	size_t		nr;	/* entries offered, stored or not */
	bool		v6;	/* RDS6_INFO_*: rows in struct rds6_info_* */
};

static void rds_info_add(struct rds_info_sink *s, const void *entry)
{
	if ((s->nr + 1) * s->each <= s->room)
		memcpy(s->buf + s->nr * s->each, entry, s->each);
	s->nr++;
}

/*
 * Rows are made in their RDS6_INFO_* form.  An RDS_INFO_* table takes
 * those whose addresses are all IPv4 (or none), as the distribution's.
 */
static bool rds_info_v4(struct in6_addr a)
{
	return ipv6_addr_any(&a) || rds_addr_is_v4(&a);
}

/* An address in an RDS6_INFO_* row: IPv4 mapped, 0.0.0.0 as ::. */
static struct in6_addr rds_info_v6(const struct in6_addr *a)
{
	if (rds_addr_is_v4(a) && !rds_addr_v4(a))
		return in6addr_any;
	return *a;
}

static void rds_info_add_socket(struct rds_info_sink *s,
				const struct rds6_info_socket *si6)
{
	struct rds_info_socket si;

	if (s->v6) {
		rds_info_add(s, si6);
		return;
	}
	memset(&si, 0, sizeof(si));
	if (!rds_info_v4(si6->bound_addr) || !rds_info_v4(si6->connected_addr))
		return;
	si.bound_addr = si6->bound_addr.s6_addr32[3];
	si.connected_addr = si6->connected_addr.s6_addr32[3];
	si.sndbuf = si6->sndbuf;
	si.bound_port = si6->bound_port;
	si.connected_port = si6->connected_port;
	si.rcvbuf = si6->rcvbuf;
	si.inum = si6->inum;
	rds_info_add(s, &si);
}

static void rds_info_add_message(struct rds_info_sink *s,
				 const struct rds6_info_message *mi6)
{
	struct rds_info_message mi;

	if (s->v6) {
		rds_info_add(s, mi6);
		return;
	}
	memset(&mi, 0, sizeof(mi));
	if (!rds_info_v4(mi6->laddr) || !rds_info_v4(mi6->faddr))
		return;
	mi.laddr = mi6->laddr.s6_addr32[3];
	mi.faddr = mi6->faddr.s6_addr32[3];
	mi.seq = mi6->seq;
	mi.len = mi6->len;
	mi.lport = mi6->lport;
	mi.fport = mi6->fport;
	mi.flags = mi6->flags;
	mi.tos = mi6->tos;
	rds_info_add(s, &mi);
}

static void rds_info_counter(const char *name, u64 value, void *arg)
{
	struct rds_info_counter c;

	memset(&c, 0, sizeof(c));
	strscpy(c.name, name, sizeof(c.name));
	c.value = value;
	rds_info_add(arg, &c);
}

/* The core's counters, then each transport's (as "ib_..."). */
static void rds_info_counters(struct rds_info_sink *s)
{
	unsigned int i;

	for (i = 0; i < RDS_STAT_NR; i++)
		rds_info_counter(rds_stat_name(i), rds_stat_read(i), s);
	rds_transport_stats_walk(rds_info_counter, s);
}

/* Called under the socket list lock. */
static void rds_info_one_socket(struct rds_sock *rs, void *arg)
{
	struct rds_info_sink *s = arg;
	struct rds6_info_socket si;

	if (!net_eq(sock_net(&rs->sk), s->net))
		return;
	memset(&si, 0, sizeof(si));
	si.sndbuf = rds_sk_sndbuf(rs);
	si.rcvbuf = rds_sk_rcvbuf(rs);
	/* Unlocked: a row may mix a binding with the one before it. */
	si.bound_addr = rds_info_v6(&rs->bound_addr);
	si.bound_port = READ_ONCE(rs->bound_port);
	si.connected_addr = rds_info_v6(&rs->conn_addr);
	si.connected_port = READ_ONCE(rs->conn_port);
	si.inum = sock_i_ino(&rs->sk);
	rds_info_add_socket(s, &si);
}

static void rds_info_sockets(struct rds_info_sink *s)
{
	rds_sock_walk(rds_info_one_socket, s);
}

static void rds_info_one_incoming(struct rds_info_sink *s,
				  const struct rds_sock *rs,
				  const struct rds_incoming *inc)
{
	struct rds6_info_message mi;

	memset(&mi, 0, sizeof(mi));
	mi.seq = inc->msg->seq;
	mi.len = inc->msg->len;
	mi.laddr = inc->daddr;
	mi.lport = inc->dport;
	mi.faddr = inc->saddr;
	mi.fport = inc->sport;
	mi.tos = rs->tos;
	rds_info_add_message(s, &mi);
}

/* Called under the socket list lock. */
static void rds_info_one_recv_queue(struct rds_sock *rs, void *arg)
{
	struct rds_info_sink *s = arg;
	struct rds_incoming *inc;

	if (!net_eq(sock_net(&rs->sk), s->net))
		return;
	spin_lock(&rs->recv_lock);
	list_for_each_entry(inc, &rs->recv_queue, item)
		rds_info_one_incoming(s, rs, inc);
	/* Arrived, readable once a key they wait for is dead. */
	list_for_each_entry(inc, &rs->recv_held, item)
		rds_info_one_incoming(s, rs, inc);
	spin_unlock(&rs->recv_lock);
}

static void rds_info_recv_messages(struct rds_info_sink *s)
{
	rds_sock_walk(rds_info_one_recv_queue, s);
}

static void rds_info_one_connection(const struct rds6_info_connection *ci6,
				    u8 tos, void *arg)
{
	struct rds_info_connection ci;
	struct rds_info_sink *s = arg;

	if (s->v6) {
		rds_info_add(s, ci6);
		return;
	}
	memset(&ci, 0, sizeof(ci));
	if (!rds_info_v4(ci6->laddr) || !rds_info_v4(ci6->faddr))
		return;
	ci.laddr = ci6->laddr.s6_addr32[3];
	ci.faddr = ci6->faddr.s6_addr32[3];
	ci.next_tx_seq = ci6->next_tx_seq;
	ci.next_rx_seq = ci6->next_rx_seq;
	memcpy(ci.transport, ci6->transport, sizeof(ci.transport));
	ci.flags = ci6->flags;
	ci.tos = tos;
	rds_info_add(s, &ci);
}

static void rds_info_connections(struct rds_info_sink *s)
{
	rds_conn_info_walk(s->net, rds_info_one_connection, s);
}

static void rds_info_one_rdma_connection(const struct rds6_info_rdma_connection *ri6,
					 void *arg)
{
	struct rds_info_rdma_connection ri;
	struct rds_info_sink *s = arg;

	if (s->v6) {
		rds_info_add(s, ri6);
		return;
	}
	memset(&ri, 0, sizeof(ri));
	if (!rds_info_v4(ri6->src_addr) || !rds_info_v4(ri6->dst_addr))
		return;
	ri.src_addr = ri6->src_addr.s6_addr32[3];
	ri.dst_addr = ri6->dst_addr.s6_addr32[3];
	memcpy(ri.src_gid, ri6->src_gid, sizeof(ri.src_gid));
	memcpy(ri.dst_gid, ri6->dst_gid, sizeof(ri.dst_gid));
	ri.max_send_wr = ri6->max_send_wr;
	ri.max_recv_wr = ri6->max_recv_wr;
	ri.max_send_sge = ri6->max_send_sge;
	ri.rdma_mr_max = ri6->rdma_mr_max;
	ri.rdma_mr_size = ri6->rdma_mr_size;
	ri.tos = ri6->tos;
	ri.sl = ri6->sl;
	ri.cache_allocs = ri6->cache_allocs;
	rds_info_add(s, &ri);
}

static void rds_info_ib_connections(struct rds_info_sink *s)
{
	rds_conn_rdma_info_walk(s->net, rds_info_one_rdma_connection, s);
}

static void rds_info_one_tcp_socket(const struct rds6_info_tcp_socket *ti6,
				    u8 tos, void *arg)
{
	struct rds_info_tcp_socket ti;
	struct rds_info_sink *s = arg;

	if (s->v6) {
		rds_info_add(s, ti6);
		return;
	}
	memset(&ti, 0, sizeof(ti));
	if (!rds_info_v4(ti6->local_addr) || !rds_info_v4(ti6->peer_addr))
		return;
	ti.local_addr = ti6->local_addr.s6_addr32[3];
	ti.local_port = ti6->local_port;
	ti.peer_addr = ti6->peer_addr.s6_addr32[3];
	ti.peer_port = ti6->peer_port;
	ti.hdr_rem = ti6->hdr_rem;
	ti.data_rem = ti6->data_rem;
	ti.last_sent_nxt = ti6->last_sent_nxt;
	ti.last_expected_una = ti6->last_expected_una;
	ti.last_seen_una = ti6->last_seen_una;
	ti.tos = tos;
	rds_info_add(s, &ti);
}

static void rds_info_tcp_sockets(struct rds_info_sink *s)
{
	rds_conn_tcp_info_walk(s->net, rds_info_one_tcp_socket, s);
}

static void rds_info_one_message(const struct rds6_info_message *mi,
				 void *arg)
{
	rds_info_add_message(arg, mi);
}

static void rds_info_send_messages(struct rds_info_sink *s)
{
	rds_conn_msg_info_walk(s->net, false, rds_info_one_message, s);
}

static void rds_info_retrans_messages(struct rds_info_sink *s)
{
	rds_conn_msg_info_walk(s->net, true, rds_info_one_message, s);
}

static const struct rds_info_table {
	int	optname;
	size_t	each;
	void	(*fill)(struct rds_info_sink *s);
	bool	v6;
} rds_info_tables[] = {
	{ RDS_INFO_COUNTERS, sizeof(struct rds_info_counter),
	  rds_info_counters },
	{ RDS_INFO_CONNECTIONS, sizeof(struct rds_info_connection),
	  rds_info_connections },
	{ RDS_INFO_SEND_MESSAGES, sizeof(struct rds_info_message),
	  rds_info_send_messages },
	{ RDS_INFO_RETRANS_MESSAGES, sizeof(struct rds_info_message),
	  rds_info_retrans_messages },
	{ RDS_INFO_RECV_MESSAGES, sizeof(struct rds_info_message),
	  rds_info_recv_messages },
	{ RDS_INFO_SOCKETS, sizeof(struct rds_info_socket),
	  rds_info_sockets },
	{ RDS_INFO_IB_CONNECTIONS, sizeof(struct rds_info_rdma_connection),
	  rds_info_ib_connections },
	{ RDS_INFO_TCP_SOCKETS, sizeof(struct rds_info_tcp_socket),
	  rds_info_tcp_sockets },
	{ RDS6_INFO_CONNECTIONS, sizeof(struct rds6_info_connection),
	  rds_info_connections, true },
	{ RDS6_INFO_SEND_MESSAGES, sizeof(struct rds6_info_message),
	  rds_info_send_messages, true },
	{ RDS6_INFO_RETRANS_MESSAGES, sizeof(struct rds6_info_message),
	  rds_info_retrans_messages, true },
	{ RDS6_INFO_RECV_MESSAGES, sizeof(struct rds6_info_message),
	  rds_info_recv_messages, true },
	{ RDS6_INFO_SOCKETS, sizeof(struct rds6_info_socket),
	  rds_info_sockets, true },
	{ RDS6_INFO_IB_CONNECTIONS, sizeof(struct rds6_info_rdma_connection),
	  rds_info_ib_connections, true },
	{ RDS6_INFO_TCP_SOCKETS, sizeof(struct rds6_info_tcp_socket),
	  rds_info_tcp_sockets, true },
};

/**
 * rds_info_getsockopt() - getsockopt(SOL_RDS, RDS_INFO_*)
 * @sock: any RDS socket; the tables cover its network namespace
 * @optname: RDS_INFO_FIRST .. RDS_INFO_LAST
 * @optval: user buffer
 * @optlen: in: room at @optval; out: bytes needed or copied
 *
 * Return: the size of one entry, or -ENOSPC (with *@optlen set), -EINVAL
 * for a negative length, -EFAULT, -ENOPROTOOPT for a table this
 * implementation does not have, -ENOMEM.
 */
int rds_info_getsockopt(struct socket *sock, int optname,
			char __user *optval, int __user *optlen)
{
	const struct rds_info_table *t = NULL;
	struct rds_info_sink s = { .net = sock_net(sock->sk) };
	size_t total;
	unsigned int i;
	int len, ret;

	if (get_user(len, optlen))
		return -EFAULT;
	if (len < 0)
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(rds_info_tables); i++)
		if (rds_info_tables[i].optname == optname)
			t = &rds_info_tables[i];
	if (!t)
		return -ENOPROTOOPT;

	s.each = t->each;
	s.v6 = t->v6;
	t->fill(&s);			/* sizing pass */
	total = s.nr * s.each;
	if (total > len)
		goto nospc;

	if (total) {
		s.buf = kvzalloc(total, GFP_KERNEL);
		if (!s.buf)
			return -ENOMEM;
		s.room = total;
		s.nr = 0;
		t->fill(&s);		/* filling pass */
		total = s.nr * s.each;
		if (total > len) {
			kvfree(s.buf);
			goto nospc;
		}
		total = min(total, s.room);
	}

	ret = s.each;
	if (copy_to_user(optval, s.buf, total) || put_user(total, optlen))
		ret = -EFAULT;
	kvfree(s.buf);
	return ret;

nospc:
	if (put_user(total, optlen))
		return -EFAULT;
	return -ENOSPC;
}
