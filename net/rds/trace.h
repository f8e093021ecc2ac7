/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of the RDS core: every change of a socket's binding, every
 * message sent, queued, dropped or read, every congestion change.
 *
 *	echo 1 > /sys/kernel/tracing/events/rds_zc/enable
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rds_zc

#if !defined(_RDS_ZC_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _RDS_ZC_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(rds_sock_bind,
	    TP_PROTO(const void *rs, __be32 addr, __be16 port,
		     const char *transport, int ret),
	    TP_ARGS(rs, addr, port, transport, ret),
	    TP_STRUCT__entry(__field(const void *, rs)
			     __field(u32, addr)	/* network order */
			     __field(u16, port)
			     __array(char, transport, 16)
			     __field(int, ret)),
	    TP_fast_assign(__entry->rs = rs;
			   __entry->addr = (__force u32)addr;
			   __entry->port = be16_to_cpu(port);
			   strscpy(__entry->transport, transport, 16);
			   __entry->ret = ret;),
	    TP_printk("rs=%p %pI4:%u transport=%s ret=%d", __entry->rs,
		      &__entry->addr, __entry->port, __entry->transport,
		      __entry->ret)
);

TRACE_EVENT(rds_sock_release,
	    TP_PROTO(const void *rs, __be32 addr, __be16 port, size_t purged),
	    TP_ARGS(rs, addr, port, purged),
	    TP_STRUCT__entry(__field(const void *, rs)
			     __field(u32, addr)	/* network order */
			     __field(u16, port)
			     __field(size_t, purged)),
	    TP_fast_assign(__entry->rs = rs;
			   __entry->addr = (__force u32)addr;
			   __entry->port = be16_to_cpu(port);
			   __entry->purged = purged;),
	    TP_printk("rs=%p %pI4:%u purged_bytes=%zu", __entry->rs,
		      &__entry->addr, __entry->port, __entry->purged)
);

DECLARE_EVENT_CLASS(rds_msg_class,
		    TP_PROTO(__be32 saddr, __be16 sport, __be32 daddr, __be16 dport,
			     size_t len, int ret),
		    TP_ARGS(saddr, sport, daddr, dport, len, ret),
		    TP_STRUCT__entry(__field(u32, saddr)	/* network order */
				     __field(u32, daddr)
				     __field(u16, sport)
				     __field(u16, dport)
				     __field(size_t, len)
				     __field(int, ret)),
		    TP_fast_assign(__entry->saddr = (__force u32)saddr;
				   __entry->daddr = (__force u32)daddr;
				   __entry->sport = be16_to_cpu(sport);
				   __entry->dport = be16_to_cpu(dport);
				   __entry->len = len;
				   __entry->ret = ret;),
		    TP_printk("%pI4:%u -> %pI4:%u len=%zu ret=%d",
			      &__entry->saddr, __entry->sport, &__entry->daddr,
			      __entry->dport, __entry->len, __entry->ret)
);

/* sendmsg() finished: ret is what it returns. */
DEFINE_EVENT(rds_msg_class, rds_send,
	     TP_PROTO(__be32 saddr, __be16 sport, __be32 daddr, __be16 dport,
		      size_t len, int ret),
	     TP_ARGS(saddr, sport, daddr, dport, len, ret));

/* A message reached its socket: ret 0 queued, -ENOTCONN none bound,
 * -ESHUTDOWN the socket was closing.
 */
DEFINE_EVENT(rds_msg_class, rds_recv_queue,
	     TP_PROTO(__be32 saddr, __be16 sport, __be32 daddr, __be16 dport,
		      size_t len, int ret),
	     TP_ARGS(saddr, sport, daddr, dport, len, ret));

/* recvmsg() took a message (ret: bytes returned, or an errno). */
DEFINE_EVENT(rds_msg_class, rds_recv_read,
	     TP_PROTO(__be32 saddr, __be16 sport, __be32 daddr, __be16 dport,
		      size_t len, int ret),
	     TP_ARGS(saddr, sport, daddr, dport, len, ret));

TRACE_EVENT(rds_cong_port,
	    TP_PROTO(__be32 addr, __be16 port, bool congested),
	    TP_ARGS(addr, port, congested),
	    TP_STRUCT__entry(__field(u32, addr)	/* network order */
			     __field(u16, port)
			     __field(bool, congested)),
	    TP_fast_assign(__entry->addr = (__force u32)addr;
			   __entry->port = be16_to_cpu(port);
			   __entry->congested = congested;),
	    TP_printk("%pI4:%u %s", &__entry->addr, __entry->port,
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

#endif /* _RDS_ZC_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
