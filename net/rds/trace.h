/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of the RDS core: every change of a socket's binding, every
 * message sent, queued, dropped or read, every congestion change, and the
 * life of every MR (registered, released, its key dead, its pages
 * unpinned) and RDMA operation (queued, done by the transport, its
 * notification).
 *
 *	echo 1 > /sys/kernel/tracing/events/rds_zc/enable
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rds_zc

#if !defined(_RDS_ZC_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _RDS_ZC_TRACE_H

#include <linux/in6.h>
#include <linux/tracepoint.h>

#include "addr.h"

TRACE_EVENT(rds_sock_bind,
	    TP_PROTO(const void *rs, const struct in6_addr *addr, __be16 port,
		     const char *transport, int ret),
	    TP_ARGS(rs, addr, port, transport, ret),
	    TP_STRUCT__entry(__field(const void *, rs)
			     __array(u8, addr, sizeof(struct sockaddr_in6))
			     __field(u16, port)
			     __array(char, transport, 16)
			     __field(int, ret)),
	    TP_fast_assign(__entry->rs = rs;
			   rds_addr_fill(__entry->addr, addr, port, 0);
			   __entry->port = be16_to_cpu(port);
			   strscpy(__entry->transport, transport, 16);
			   __entry->ret = ret;),
	    TP_printk("rs=%p %pISpc transport=%s ret=%d", __entry->rs,
		      __entry->addr, __entry->transport,
		      __entry->ret)
);

TRACE_EVENT(rds_sock_release,
	    TP_PROTO(const void *rs, const struct in6_addr *addr, __be16 port,
		     size_t purged),
	    TP_ARGS(rs, addr, port, purged),
	    TP_STRUCT__entry(__field(const void *, rs)
			     __array(u8, addr, sizeof(struct sockaddr_in6))
			     __field(u16, port)
			     __field(size_t, purged)),
	    TP_fast_assign(__entry->rs = rs;
			   rds_addr_fill(__entry->addr, addr, port, 0);
			   __entry->port = be16_to_cpu(port);
			   __entry->purged = purged;),
	    TP_printk("rs=%p %pISpc purged_bytes=%zu", __entry->rs,
		      __entry->addr, __entry->purged)
);

DECLARE_EVENT_CLASS(rds_msg_class,
		    TP_PROTO(const struct in6_addr *saddr, __be16 sport,
			     const struct in6_addr *daddr, __be16 dport,
			     size_t len, int ret),
		    TP_ARGS(saddr, sport, daddr, dport, len, ret),
		    TP_STRUCT__entry(__array(u8, saddr, sizeof(struct sockaddr_in6))
				     __array(u8, daddr, sizeof(struct sockaddr_in6))
				     __field(u16, sport)
				     __field(u16, dport)
				     __field(size_t, len)
				     __field(int, ret)),
		    TP_fast_assign(rds_addr_fill(__entry->saddr, saddr, sport, 0);
				   rds_addr_fill(__entry->daddr, daddr, dport, 0);
				   __entry->sport = be16_to_cpu(sport);
				   __entry->dport = be16_to_cpu(dport);
				   __entry->len = len;
				   __entry->ret = ret;),
		    TP_printk("%pISpc -> %pISpc len=%zu ret=%d",
			      __entry->saddr, __entry->daddr, __entry->len,
			      __entry->ret)
);

/* sendmsg() finished: ret is what it returns. */
DEFINE_EVENT(rds_msg_class, rds_send,
	     TP_PROTO(const struct in6_addr *saddr, __be16 sport,
		      const struct in6_addr *daddr, __be16 dport,
		      size_t len, int ret),
	     TP_ARGS(saddr, sport, daddr, dport, len, ret));

/* A message reached its socket: ret 0 queued, -ENOTCONN none bound,
 * -ESHUTDOWN the socket was closing.
 */
DEFINE_EVENT(rds_msg_class, rds_recv_queue,
	     TP_PROTO(const struct in6_addr *saddr, __be16 sport,
		      const struct in6_addr *daddr, __be16 dport,
		      size_t len, int ret),
	     TP_ARGS(saddr, sport, daddr, dport, len, ret));

/* recvmsg() took a message (ret: bytes returned, or an errno). */
DEFINE_EVENT(rds_msg_class, rds_recv_read,
	     TP_PROTO(const struct in6_addr *saddr, __be16 sport,
		      const struct in6_addr *daddr, __be16 dport,
		      size_t len, int ret),
	     TP_ARGS(saddr, sport, daddr, dport, len, ret));

TRACE_EVENT(rds_cong_port,
	    TP_PROTO(const struct in6_addr *addr, __be16 port, bool congested),
	    TP_ARGS(addr, port, congested),
	    TP_STRUCT__entry(__array(u8, addr, sizeof(struct sockaddr_in6))
			     __field(u16, port)
			     __field(bool, congested)),
	    TP_fast_assign(rds_addr_fill(__entry->addr, addr, port, 0);
			   __entry->port = be16_to_cpu(port);
			   __entry->congested = congested;),
	    TP_printk("%pISpc %s", __entry->addr,
		      __entry->congested ? "congested" : "uncongested")
);

TRACE_EVENT(rds_cong_notify,
	    TP_PROTO(const void *mon, u64 mask),
	    TP_ARGS(mon, mask),
	    TP_STRUCT__entry(__field(const void *, mon)
			     __field(u64, mask)),
	    TP_fast_assign(__entry->mon = mon;
			   __entry->mask = mask;),
	    TP_printk("monitor=%p ports=%#llx", __entry->mon, __entry->mask)
);

TRACE_EVENT(rds_conn_state,
	    TP_PROTO(const void *conn, const struct in6_addr *laddr,
		     const struct in6_addr *faddr, u8 tos,
		     int from, int to, const char *reason),
	    TP_ARGS(conn, laddr, faddr, tos, from, to, reason),
	    TP_STRUCT__entry(__field(const void *, conn)
			     __array(u8, laddr, sizeof(struct sockaddr_in6))
			     __array(u8, faddr, sizeof(struct sockaddr_in6))
			     __field(u8, tos)
			     __field(int, from)
			     __field(int, to)
			     __array(char, reason, 32)),
	    TP_fast_assign(__entry->conn = conn;
			   rds_addr_fill(__entry->laddr, laddr, 0, 0);
			   rds_addr_fill(__entry->faddr, faddr, 0, 0);
			   __entry->tos = tos;
			   __entry->from = from;
			   __entry->to = to;
			   strscpy(__entry->reason, reason, 32);),
	    TP_printk("conn=%p %pISc->%pISc tos=%u state %d->%d (%s)",
		      __entry->conn, __entry->laddr, __entry->faddr,
		      __entry->tos, __entry->from, __entry->to,
		      __entry->reason)
);

DECLARE_EVENT_CLASS(rds_conn_msg_class,
		    TP_PROTO(const void *conn, u64 seq, size_t len, u8 flags),
		    TP_ARGS(conn, seq, len, flags),
		    TP_STRUCT__entry(__field(const void *, conn)
				     __field(u64, seq)
				     __field(size_t, len)
				     __field(u8, flags)),
		    TP_fast_assign(__entry->conn = conn;
				   __entry->seq = seq;
				   __entry->len = len;
				   __entry->flags = flags;),
		    TP_printk("conn=%p seq=%llu len=%zu flags=%#x",
			      __entry->conn, __entry->seq, __entry->len,
			      __entry->flags)
);

/* A message took its sequence number on a connection. */
DEFINE_EVENT(rds_conn_msg_class, rds_conn_queue,
	     TP_PROTO(const void *conn, u64 seq, size_t len, u8 flags),
	     TP_ARGS(conn, seq, len, flags));

/* The transport was handed a message (again, if RETRANSMITTED). */
DEFINE_EVENT(rds_conn_msg_class, rds_conn_xmit,
	     TP_PROTO(const void *conn, u64 seq, size_t len, u8 flags),
	     TP_ARGS(conn, seq, len, flags));

/* The transport stopped taking a message: ring full (-EAGAIN) or error. */
TRACE_EVENT(rds_conn_xmit_stop,
	    TP_PROTO(const void *conn, u64 seq, unsigned int frag, int ret),
	    TP_ARGS(conn, seq, frag, ret),
	    TP_STRUCT__entry(__field(const void *, conn)
			     __field(u64, seq)
			     __field(unsigned int, frag)
			     __field(int, ret)),
	    TP_fast_assign(__entry->conn = conn;
			   __entry->seq = seq;
			   __entry->frag = frag;
			   __entry->ret = ret;),
	    TP_printk("conn=%p seq=%llu frag=%u ret=%d", __entry->conn,
		      __entry->seq, __entry->frag, __entry->ret)
);

/* The peer acknowledged a message: it leaves the connection. */
DEFINE_EVENT(rds_conn_msg_class, rds_conn_acked,
	     TP_PROTO(const void *conn, u64 seq, size_t len, u8 flags),
	     TP_ARGS(conn, seq, len, flags));

/* A message arrived complete from the peer (flags tell a duplicate). */
DEFINE_EVENT(rds_conn_msg_class, rds_conn_recv,
	     TP_PROTO(const void *conn, u64 seq, size_t len, u8 flags),
	     TP_ARGS(conn, seq, len, flags));

/* ------------------------------------------------------- MRs */

DECLARE_EVENT_CLASS(rds_mr_class,
		    TP_PROTO(u32 rkey, size_t len, unsigned int nr_pages),
		    TP_ARGS(rkey, len, nr_pages),
		    TP_STRUCT__entry(__field(u32, rkey)
				     __field(size_t, len)
				     __field(unsigned int, nr_pages)),
		    TP_fast_assign(__entry->rkey = rkey;
				   __entry->len = len;
				   __entry->nr_pages = nr_pages;),
		    TP_printk("rkey=%#x len=%zu pages=%u", __entry->rkey,
			      __entry->len, __entry->nr_pages)
);

/* RDS_GET_MR or RDS_CMSG_RDMA_MAP registered (or prepared) an MR. */
DEFINE_EVENT(rds_mr_class, rds_mr_register,
	     TP_PROTO(u32 rkey, size_t len, unsigned int nr_pages),
	     TP_ARGS(rkey, len, nr_pages));

/* Its last reference went: the transport invalidates the key. */
DEFINE_EVENT(rds_mr_class, rds_mr_release,
	     TP_PROTO(u32 rkey, size_t len, unsigned int nr_pages),
	     TP_ARGS(rkey, len, nr_pages));

/* The key is dead: no peer reaches the pages any more. */
DEFINE_EVENT(rds_mr_class, rds_mr_invalidated,
	     TP_PROTO(u32 rkey, size_t len, unsigned int nr_pages),
	     TP_ARGS(rkey, len, nr_pages));

/* The pages are unpinned and the MR freed. */
DEFINE_EVENT(rds_mr_class, rds_mr_unpinned,
	     TP_PROTO(u32 rkey, size_t len, unsigned int nr_pages),
	     TP_ARGS(rkey, len, nr_pages));

/*
 * RDS_FREE_MR with RDS_RDMA_INVALIDATE or close killed the key of an MR
 * that a message may still hold; its pages go with the last reference.
 */
DEFINE_EVENT(rds_mr_class, rds_mr_killed,
	     TP_PROTO(u32 rkey, size_t len, unsigned int nr_pages),
	     TP_ARGS(rkey, len, nr_pages));

/* Close returns with MRs whose pages messages still hold (keys dead). */
TRACE_EVENT(rds_mr_close_left,
	    TP_PROTO(int pending),
	    TP_ARGS(pending),
	    TP_STRUCT__entry(__field(int, pending)),
	    TP_fast_assign(__entry->pending = pending;),
	    TP_printk("mrs=%d", __entry->pending)
);

/* ---------------------------------------------- RDMA operations */

/* A message carries an RDMA READ/WRITE or an atomic, with its id. */
TRACE_EVENT(rds_rdma_op,
	    TP_PROTO(u64 id, u32 rkey, u64 remote_addr, u64 len, bool write,
		     bool atomic, u64 token),
	    TP_ARGS(id, rkey, remote_addr, len, write, atomic, token),
	    TP_STRUCT__entry(__field(u64, id)
			     __field(u32, rkey)
			     __field(u64, remote_addr)
			     __field(u64, len)
			     __field(bool, write)
			     __field(bool, atomic)
			     __field(u64, token)),
	    TP_fast_assign(__entry->id = id;
			   __entry->rkey = rkey;
			   __entry->remote_addr = remote_addr;
			   __entry->len = len;
			   __entry->write = write;
			   __entry->atomic = atomic;
			   __entry->token = token;),
	    TP_printk("id=%llu %s rkey=%#x remote_addr=%#llx len=%llu token=%#llx",
		      __entry->id,
		      __entry->atomic ? "atomic" :
		      __entry->write ? "write" : "read",
		      __entry->rkey, __entry->remote_addr, __entry->len,
		      __entry->token)
);

/* The transport finished an operation with @status (RDS_RDMA_*). */
TRACE_EVENT(rds_rdma_done,
	    TP_PROTO(u64 id, int status),
	    TP_ARGS(id, status),
	    TP_STRUCT__entry(__field(u64, id)
			     __field(int, status)),
	    TP_fast_assign(__entry->id = id;
			   __entry->status = status;),
	    TP_printk("id=%llu status=%d", __entry->id, __entry->status)
);

/* An operation ended: its notification queued for the socket, or not. */
TRACE_EVENT(rds_rdma_notify,
	    TP_PROTO(u64 id, u64 token, int status, bool queued),
	    TP_ARGS(id, token, status, queued),
	    TP_STRUCT__entry(__field(u64, id)
			     __field(u64, token)
			     __field(int, status)
			     __field(bool, queued)),
	    TP_fast_assign(__entry->id = id;
			   __entry->token = token;
			   __entry->status = status;
			   __entry->queued = queued;),
	    TP_printk("id=%llu token=%#llx status=%d queued=%d", __entry->id,
		      __entry->token, __entry->status, __entry->queued)
);

#endif /* _RDS_ZC_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
