/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The RDS socket.
 *
 * Lifetime: a socket is reference counted as a struct sock.  Once bound it
 * is reachable from the bind table under RCU (SOCK_RCU_FREE is set), and
 * deliverers take a reference with refcount_inc_not_zero() before
 * touching it.  release() unhashes it, then marks it dead under recv_lock,
 * so nothing is queued on it afterwards.
 *
 * Locking:
 *  - lock_sock() protects the binding, the default destination, the
 *    transport and tos: bound_addr, bound_port, bound_scope, conn_addr,
 *    conn_port, conn_scope, trans, trans_pinned, cong_map, tos.  The
 *    bound fields never change once set, so
 *    readers on the data path may read them without the lock after seeing
 *    bound_port != 0 (with READ_ONCE(), or smp_load_acquire() where
 *    they read the other fields: bind publishes the port last, with
 *    smp_store_release()).
 *  - recv_lock (bottom halves off) protects recv_queue, recv_held,
 *    gate_last, rcv_bytes, rcv_mem, congested, dead and notify_queue.
 *    A connection's shutdown peeks at dead without it (READ_ONCE), to
 *    drop the messages of a closed socket.
 *  - mr_lock (bottom halves off) protects mr_tree.  It is taken by
 *    deliverers in any context.
 *  - snd_lock (bottom halves off) protects snd_bytes: the charge
 *    (rds_msg_charge()) of this socket's messages queued on
 *    connections and not yet acknowledged or cancelled.  Taken from
 *    completion handlers too.
 *  - recv_mutex serialises readers, so the head of recv_queue stays put
 *    while one of them copies it to user memory.
 *  - cong_mon is protected by the congestion code's monitor lock.
 *  - zc_lock (interrupts off) protects zc_queue and zc_dead (zcopy.c).
 */
#ifndef _RDS_ZC_SOCK_H
#define _RDS_ZC_SOCK_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/in6.h>
#include <net/sock.h>
#include <uapi/linux/rds.h>

#include "cong.h"
#include "connection.h"

struct rds_transport;

struct rds_sock {
	struct sock	sk;		/* first: rds_sk() casts */

	/* Under lock_sock(). */
	struct in6_addr	bound_addr;	/* IPv4 ones IPv4-mapped (addr.h) */
	__be16		bound_port;	/* 0 until bound */
	u32		bound_scope;	/* interface of a link-local address */
	struct in6_addr	conn_addr;	/* :: until connect() */
	__be16		conn_port;
	u32		conn_scope;	/* interface of a link-local conn_addr */
	const struct rds_transport *trans;	/* module pinned */
	bool		trans_pinned;	/* trans chosen by SO_RDS_TRANSPORT */
	struct rds_cong_map *cong_map;	/* of bound_addr, while bound */
	u8		tos;
	bool		tos_fixed;	/* it sent: SIOCRDSSETTOS is refused */
	struct rds_conn_cache conn_cache;	/* the last one sent on */

	bool		recverr;	/* RDS_RECVERR */

	/* SO_RDS_MSG_RXPATH_LATENCY, set under lock_sock(). */
	u8		rx_traces;
	u8		rx_trace_pos[RDS_MSG_RX_DGRAM_TRACE_MAX];

	/* On the list of all sockets, under its lock (socket.c). */
	struct list_head sock_item;

	/* In the bind table, under its lock; walked under RCU. */
	struct hlist_node bind_node;

	/* Under recv_lock. */
	spinlock_t	recv_lock;
	struct list_head recv_queue;	/* of struct rds_incoming */
	/* Arrived, not readable yet: behind a dying key (recv_hold.c). */
	struct list_head recv_held;
	u32		gate_last;	/* the last ticket handed out */
	size_t		rcv_bytes;	/* payload on recv_queue, recv_held */
	size_t		rcv_mem;	/* their true size (recv.c) */
	bool		congested;	/* our port's bit is set */
	bool		dead;		/* released: queue nothing */

	struct mutex	recv_mutex;	/* one reader at a time */

	spinlock_t	snd_lock;	/* snd_bytes, see above */
	size_t		snd_bytes;
	bool		snd_waiting;	/* a writer found no room */

	/* RDMA (rdma.c): MRs by rkey under mr_lock, notifications. */
	spinlock_t	mr_lock;
	struct rb_root	mr_tree;
	atomic_t	mr_pending;	/* MRs created and not yet unpinned */
	atomic_t	mr_releasing;	/* MRs whose key is being invalidated */
	wait_queue_head_t mr_wait;	/* woken when either reaches 0 */
	struct list_head notify_queue;	/* under recv_lock */
	/*
	 * Bytes of notifications charged (rdma_op.c): those queued, and
	 * those that operations in flight may queue.  At most half of
	 * SO_RCVBUF when an operation starts (rds_sk_rcvbuf()); atomic.
	 */
	atomic_t	note_mem;

	/* Releases deferred to the owner (defer.h), under defer_lock. */
	spinlock_t	defer_lock;	/* interrupts off */
	struct list_head defer_list;	/* of struct rds_deferred */
	bool		defer_closed;	/* close() ran them: defer no more */
	struct delayed_work defer_w;	/* runs what an idle owner leaves */

	/* Operation ids and barriers (op_barrier.c), under op_lock. */
	spinlock_t	op_lock;	/* a leaf, with interrupts off */
	u64		op_last_id;	/* the last id handed out */
	struct list_head op_inflight;	/* operations not done, by id */
	bool		op_done_unseen;	/* one ended since the last barrier */
	wait_queue_head_t op_wait;	/* barriers waiting */

	/*
	 * MSG_ZEROCOPY completions (zcopy.c): batches of cookies waiting for
	 * recvmsg(), and the count of completions not read yet, queued or
	 * still to come, which bounds them; zc_dead once released.
	 */
	spinlock_t	zc_lock;
	struct list_head zc_queue;	/* of struct rds_zc_note */
	atomic_t	zc_pending;
	bool		zc_dead;

	struct rds_cong_monitor cong_mon;
	/* Set by a send refused with ENOBUFS, cleared by poll() reporting it. */
	unsigned int	cong_seen_gen;	/* congestion generation at refusal */
	bool		cong_seen;
};

static inline struct rds_sock *rds_sk(const struct sock *sk)
{
	return container_of(sk, struct rds_sock, sk);
}

/* A message may use at most half of the buffers, as in RDS since 2.6. */
static inline int rds_sk_sndbuf(const struct rds_sock *rs)
{
	return READ_ONCE(rs->sk.sk_sndbuf) / 2;
}

/*
 * Charge @len bytes to the socket's send buffer if it is not full yet.  As
 * in RDS since 2.6, a message is accepted while fewer than
 * rds_sk_sndbuf() bytes are queued, whatever its own size.
 * Return: true if charged; *@half tells that half the buffer is now used.
 */
static inline bool rds_sock_snd_charge(struct rds_sock *rs, size_t len,
				       bool *half)
{
	bool ok;

	spin_lock_bh(&rs->snd_lock);
	ok = rs->snd_bytes < rds_sk_sndbuf(rs);
	if (ok) {
		rs->snd_bytes += len;
		*half = rs->snd_bytes >= rds_sk_sndbuf(rs) / 2;
	}
	spin_unlock_bh(&rs->snd_lock);
	return ok;
}

static inline bool rds_sock_snd_room(struct rds_sock *rs)
{
	return READ_ONCE(rs->snd_bytes) < rds_sk_sndbuf(rs);
}

/*
 * A writer (sendmsg() or poll()) found no room and waits for the next
 * release to wake it; it tests for room again after this.  Releases wake
 * only such writers (rds_sock_write_space()): a reader sleeping on the
 * same queue is not woken for nothing by every acknowledgment.
 */
static inline void rds_sock_snd_wait_mark(struct rds_sock *rs)
{
	WRITE_ONCE(rs->snd_waiting, true);
	smp_mb();	/* pairs with rds_sock_write_space() */
}

static inline int rds_sk_rcvbuf(const struct rds_sock *rs)
{
	return READ_ONCE(rs->sk.sk_rcvbuf) / 2;
}

#endif /* _RDS_ZC_SOCK_H */
