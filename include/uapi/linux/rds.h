/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Reliable Datagram Sockets: the user-space interface.
 *
 * Every number and layout in this file is fixed by the applications that
 * were compiled against the distribution's <linux/rds.h>; the selftest
 * abi_check compares both headers field by field.  Change nothing here
 * without that test agreeing.
 */
#ifndef _UAPI_LINUX_RDS_H
#define _UAPI_LINUX_RDS_H

#include <linux/types.h>
#include <linux/socket.h>	/* __kernel_sockaddr_storage */
#include <linux/sockios.h>	/* SIOCPROTOPRIVATE */
#include <linux/in6.h>		/* struct in6_addr */

#define RDS_IB_ABI_VERSION		0x301

#define SOL_RDS				276

/* Option names for setsockopt()/getsockopt() at level SOL_RDS. */
#define RDS_CANCEL_SENT_TO		1
#define RDS_GET_MR			2
#define RDS_FREE_MR			3
/* 4 was RDS_BARRIER; it was specified but never implemented. */
#define RDS_RECVERR			5
#define RDS_CONG_MONITOR		6
#define RDS_GET_MR_FOR_DEST		7
#define SO_RDS_TRANSPORT		8
/* Receive-path latency tracing; the argument is struct rds_rx_trace_so. */
#define SO_RDS_MSG_RXPATH_LATENCY	10
/*
 * This implementation's own, at a number the distribution's header does
 * not use: getsockopt() with a struct rds_op_barrier, which operations
 * of this socket have completed (see RDS_CMSG_OP_ID).
 */
#define RDS_OP_BARRIER			64

/* Values of SO_RDS_TRANSPORT. */
#define RDS_TRANS_IB			0
#define RDS_TRANS_GAP			1	/* was iWARP */
#define RDS_TRANS_TCP			2
#define RDS_TRANS_COUNT			3
#define RDS_TRANS_NONE			(~0)
#define RDS_TRANS_IWARP			RDS_TRANS_GAP	/* deprecated */

/* ioctl()s that set and read a socket's type of service. */
#define SIOCRDSSETTOS			(SIOCPROTOPRIVATE)
#define SIOCRDSGETTOS			(SIOCPROTOPRIVATE + 1)

typedef __u8 rds_tos_t;

/*
 * Ancillary data types at level SOL_RDS.
 *
 * RDMA_ARGS (sendmsg): struct rds_rdma_args, start an RDMA READ or WRITE
 *	together with this message.
 * RDMA_DEST (sendmsg, recvmsg): an rds_rdma_cookie_t naming the peer
 *	memory an RDMA of this message exchange is meant for.
 * RDMA_MAP (sendmsg): struct rds_get_mr_args, register memory and send
 *	its cookie along with this message.
 * RDMA_STATUS (recvmsg): struct rds_rdma_notify, the outcome of an RDMA.
 * CONG_UPDATE (recvmsg): a __u64 mask of ports that became uncongested.
 * ATOMIC_* (sendmsg): struct rds_atomic_args, a remote atomic operation.
 * RXPATH_LATENCY (recvmsg): struct rds_cmsg_rx_trace.
 * ZCOPY_COOKIE (sendmsg), ZCOPY_COMPLETION (recvmsg): zero-copy send
 *	bookkeeping, struct rds_zcopy_cookies on completion.
 * OP_ID (sendmsg, this implementation's own): a __u64 user address where
 *	the id of the message's RDMA or atomic operation is stored.  Ids
 *	increase by one per operation of the socket, starting at 1; an id
 *	whose sendmsg() failed is complete at once.
 */
#define RDS_CMSG_RDMA_ARGS		1
#define RDS_CMSG_RDMA_DEST		2
#define RDS_CMSG_RDMA_MAP		3
#define RDS_CMSG_RDMA_STATUS		4
#define RDS_CMSG_CONG_UPDATE		5
#define RDS_CMSG_ATOMIC_FADD		6
#define RDS_CMSG_ATOMIC_CSWP		7
#define RDS_CMSG_MASKED_ATOMIC_FADD	8
#define RDS_CMSG_MASKED_ATOMIC_CSWP	9
#define RDS_CMSG_RXPATH_LATENCY		11
#define RDS_CMSG_ZCOPY_COOKIE		12
#define RDS_CMSG_ZCOPY_COMPLETION	13
#define RDS_CMSG_OP_ID			64

/* Information tables read with getsockopt(SOL_RDS, RDS_INFO_*). */
#define RDS_INFO_FIRST			10000
#define RDS_INFO_COUNTERS		10000
#define RDS_INFO_CONNECTIONS		10001
/* 10002 was RDS_INFO_FLOWS. */
#define RDS_INFO_SEND_MESSAGES		10003
#define RDS_INFO_RETRANS_MESSAGES	10004
#define RDS_INFO_RECV_MESSAGES		10005
#define RDS_INFO_SOCKETS		10006
#define RDS_INFO_TCP_SOCKETS		10007
#define RDS_INFO_IB_CONNECTIONS		10008
#define RDS_INFO_CONNECTION_STATS	10009
#define RDS_INFO_IWARP_CONNECTIONS	10010
#define RDS6_INFO_CONNECTIONS		10011
#define RDS6_INFO_SEND_MESSAGES		10012
#define RDS6_INFO_RETRANS_MESSAGES	10013
#define RDS6_INFO_RECV_MESSAGES		10014
#define RDS6_INFO_SOCKETS		10015
#define RDS6_INFO_TCP_SOCKETS		10016
#define RDS6_INFO_IB_CONNECTIONS	10017
#define RDS_INFO_LAST			10017

struct rds_info_counter {
	__u8	name[32];
	__u64	value;
} __attribute__((packed));

#define RDS_INFO_CONNECTION_FLAG_SENDING	0x01
#define RDS_INFO_CONNECTION_FLAG_CONNECTING	0x02
#define RDS_INFO_CONNECTION_FLAG_CONNECTED	0x04

#define TRANSNAMSIZ	16

struct rds_info_connection {
	__u64	next_tx_seq;
	__u64	next_rx_seq;
	__be32	laddr;
	__be32	faddr;
	__u8	transport[TRANSNAMSIZ];	/* NUL-terminated name */
	__u8	flags;
	__u8	tos;
} __attribute__((packed));

struct rds6_info_connection {
	__u64		next_tx_seq;
	__u64		next_rx_seq;
	struct in6_addr	laddr;
	struct in6_addr	faddr;
	__u8		transport[TRANSNAMSIZ];
	__u8		flags;
} __attribute__((packed));

#define RDS_INFO_MESSAGE_FLAG_ACK	0x01
#define RDS_INFO_MESSAGE_FLAG_FAST_ACK	0x02

struct rds_info_message {
	__u64	seq;
	__u32	len;
	__be32	laddr;
	__be32	faddr;
	__be16	lport;
	__be16	fport;
	__u8	flags;
	__u8	tos;
} __attribute__((packed));

struct rds6_info_message {
	__u64		seq;
	__u32		len;
	struct in6_addr	laddr;
	struct in6_addr	faddr;
	__be16		lport;
	__be16		fport;
	__u8		flags;
	__u8		tos;
} __attribute__((packed));

struct rds_info_socket {
	__u32	sndbuf;
	__be32	bound_addr;
	__be32	connected_addr;
	__be16	bound_port;
	__be16	connected_port;
	__u32	rcvbuf;
	__u64	inum;
} __attribute__((packed));

struct rds6_info_socket {
	__u32		sndbuf;
	struct in6_addr	bound_addr;
	struct in6_addr	connected_addr;
	__be16		bound_port;
	__be16		connected_port;
	__u32		rcvbuf;
	__u64		inum;
} __attribute__((packed));

struct rds_info_tcp_socket {
	__be32	local_addr;
	__be16	local_port;
	__be32	peer_addr;
	__be16	peer_port;
	__u64	hdr_rem;
	__u64	data_rem;
	__u32	last_sent_nxt;
	__u32	last_expected_una;
	__u32	last_seen_una;
	__u8	tos;
} __attribute__((packed));

struct rds6_info_tcp_socket {
	struct in6_addr	local_addr;
	__be16		local_port;
	struct in6_addr	peer_addr;
	__be16		peer_port;
	__u64		hdr_rem;
	__u64		data_rem;
	__u32		last_sent_nxt;
	__u32		last_expected_una;
	__u32		last_seen_una;
} __attribute__((packed));

#define RDS_IB_GID_LEN	16

struct rds_info_rdma_connection {
	__be32	src_addr;
	__be32	dst_addr;
	__u8	src_gid[RDS_IB_GID_LEN];
	__u8	dst_gid[RDS_IB_GID_LEN];
	__u32	max_send_wr;
	__u32	max_recv_wr;
	__u32	max_send_sge;
	__u32	rdma_mr_max;
	__u32	rdma_mr_size;
	__u8	tos;
	__u8	sl;
	__u32	cache_allocs;
};

struct rds6_info_rdma_connection {
	struct in6_addr	src_addr;
	struct in6_addr	dst_addr;
	__u8		src_gid[RDS_IB_GID_LEN];
	__u8		dst_gid[RDS_IB_GID_LEN];
	__u32		max_send_wr;
	__u32		max_recv_wr;
	__u32		max_send_sge;
	__u32		rdma_mr_max;
	__u32		rdma_mr_size;
	__u8		tos;
	__u8		sl;
	__u32		cache_allocs;
};

/* Points on the receive path whose latency can be traced. */
enum rds_message_rxpath_latency {
	RDS_MSG_RX_HDR_TO_DGRAM_START = 0,
	RDS_MSG_RX_DGRAM_REASSEMBLE,
	RDS_MSG_RX_DGRAM_DELIVERED,
	RDS_MSG_RX_DGRAM_TRACE_MAX
};

struct rds_rx_trace_so {
	__u8 rx_traces;
	__u8 rx_trace_pos[RDS_MSG_RX_DGRAM_TRACE_MAX];
};

struct rds_cmsg_rx_trace {
	__u8 rx_traces;
	__u8 rx_trace_pos[RDS_MSG_RX_DGRAM_TRACE_MAX];
	__u64 rx_trace[RDS_MSG_RX_DGRAM_TRACE_MAX];
};

/*
 * Congestion monitoring.  A port is congested while the receive queue of
 * the socket bound to it is over that socket's receive buffer.  A socket
 * that set RDS_CONG_MONITOR gets an RDS_CMSG_CONG_UPDATE carrying a
 * 64-bit mask when ports it sent to become uncongested; bit
 * (port % 64) stands for a port.
 */
#define RDS_CONG_MONITOR_SIZE		64
#define RDS_CONG_MONITOR_BIT(port)	(((unsigned int)port) % RDS_CONG_MONITOR_SIZE)
#define RDS_CONG_MONITOR_MASK(port)	(1ULL << RDS_CONG_MONITOR_BIT(port))

/*
 * RDMA.  A cookie names registered memory to the peer: the R_Key in the
 * low 32 bits, the buffer's offset in its first page in the high 32.
 */
typedef __u64 rds_rdma_cookie_t;

struct rds_iovec {
	__u64	addr;
	__u64	bytes;
};

struct rds_get_mr_args {
	struct rds_iovec	vec;
	__u64			cookie_addr;	/* user pointer, receives the cookie */
	__u64			flags;
};

struct rds_get_mr_for_dest_args {
	struct __kernel_sockaddr_storage dest_addr;
	struct rds_iovec	vec;
	__u64			cookie_addr;
	__u64			flags;
};

struct rds_free_mr_args {
	rds_rdma_cookie_t	cookie;
	__u64			flags;
};

struct rds_rdma_args {
	rds_rdma_cookie_t	cookie;
	struct rds_iovec	remote_vec;	/* addr: offset in the peer's MR */
	__u64			local_vec_addr;	/* user pointer to rds_iovec[] */
	__u64			nr_local;
	__u64			flags;
	__u64			user_token;
};

struct rds_atomic_args {
	rds_rdma_cookie_t	cookie;
	__u64			local_addr;
	__u64			remote_addr;
	union {
		struct {
			__u64	compare;
			__u64	swap;
		} cswp;
		struct {
			__u64	add;
		} fadd;
		struct {
			__u64	compare;
			__u64	swap;
			__u64	compare_mask;
			__u64	swap_mask;
		} m_cswp;
		struct {
			__u64	add;
			__u64	nocarry_mask;
		} m_fadd;
	};
	__u64			flags;
	__u64			user_token;
};

struct rds_rdma_notify {
	__u64	user_token;
	__s32	status;
};

/*
 * RDS_OP_BARRIER: the highest id up to which every operation of the
 * socket towards @dest has completed (succeeded or failed, its status
 * reported as RDS_CMSG_RDMA_STATUS where one was asked for), in @done_id.
 * @dest: AF_INET address and port, port 0 for every port of the address,
 *	or AF_UNSPEC for every destination.
 * @wait_id: 0, or wait until @done_id reaches it: a blocking socket
 *	waits (SO_RCVTIMEO, then EAGAIN; a signal: EINTR), a non-blocking
 *	one gets EAGAIN.  An id not handed out yet: EINVAL.
 * poll() reports POLLRDBAND once an operation completed since the last
 * RDS_OP_BARRIER call.
 */
struct rds_op_barrier {
	struct __kernel_sockaddr_storage dest;
	__u64			wait_id;
	__u64			done_id;
};

/* Values of rds_rdma_notify.status. */
#define RDS_RDMA_SUCCESS	0
#define RDS_RDMA_REMOTE_ERROR	1
#define RDS_RDMA_CANCELED	2
#define RDS_RDMA_DROPPED	3
#define RDS_RDMA_OTHER_ERROR	4

#define RDS_MAX_ZCOOKIES	8
struct rds_zcopy_cookies {
	__u32	num;
	__u32	cookies[RDS_MAX_ZCOOKIES];
};

/* Flags of struct rds_get_mr_args, rds_free_mr_args and rds_rdma_args. */
#define RDS_RDMA_READWRITE	0x0001	/* WRITE to the peer, else READ */
#define RDS_RDMA_FENCE		0x0002	/* order the message after the RDMA */
#define RDS_RDMA_INVALIDATE	0x0004	/* invalidate the R_Key when freed */
#define RDS_RDMA_USE_ONCE	0x0008	/* free the MR after one RDMA */
#define RDS_RDMA_DONTWAIT	0x0010	/* was for RDS_BARRIER */
#define RDS_RDMA_NOTIFY_ME	0x0020	/* queue a status when it completes */
#define RDS_RDMA_SILENT		0x0040	/* no message for the peer's application */

#endif /* _UAPI_LINUX_RDS_H */
