// SPDX-License-Identifier: GPL-2.0
/*
 * Zero-copy RDMA, the core's part (see rdma.h): the SOL_RDS control
 * messages of sendmsg() (RDS_CMSG_RDMA_MAP, _DEST, _ARGS, the atomics and
 * RDS_CMSG_OP_ID), the extension headers that carry cookies and keys
 * (wire sections 4.5 and 8), what a delivered message's extensions ask
 * for, and the RDS_CMSG_RDMA_STATUS notifications recvmsg() hands out.
 * MRs are in mr.c, operations in rdma_op.c, their ids in op_barrier.c.
 *
 * Locking: rs->mr_lock (bottom halves off) protects rs->mr_tree;
 * rs->recv_lock protects rs->notify_queue.
 */
#include <linux/errno.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <net/sock.h>
#include <uapi/linux/rds.h>

#include "message.h"
#include "mr.h"
#include "op_barrier.h"
#include "rdma.h"
#include "rdma_op.h"
#include "sock.h"
#include "stats.h"
#include "trace.h"
#include "transport.h"

/* Extension header types and sizes (wire 4.5). */
#define RDS_EXTHDR_NONE		0
#define RDS_EXTHDR_RDMA		2	/* be32 rkey */
#define RDS_EXTHDR_RDMA_DEST	3	/* be32 rkey, be32 offset */

struct workqueue_struct *rds_mr_wq;

/**
 * rds_rdma_sock_init() - the RDMA state of a new socket
 * @rs: the socket
 */
void rds_rdma_sock_init(struct rds_sock *rs)
{
	spin_lock_init(&rs->mr_lock);
	rs->mr_tree = RB_ROOT;
	atomic_set(&rs->mr_pending, 0);
	atomic_set(&rs->mr_releasing, 0);
	init_waitqueue_head(&rs->mr_wait);
	INIT_LIST_HEAD(&rs->notify_queue);
	atomic_set(&rs->note_mem, 0);
	rds_defer_sock_init(rs);
	rds_op_sock_init(rs);
}

/**
 * rds_rdma_sock_release() - invalidate and unpin everything of a socket
 * @rs: the socket, being released; nothing is delivered to it any more
 *
 * When it returns no key of the socket is valid and none of its pages
 * is pinned, including those released from softirq meanwhile: every
 * release is started at once, and then all of them are waited for.
 * Only the pages of an MR that a message the transport still holds
 * (stalled behind a connection that cannot tear down yet) may stay, a
 * second at most waited for: they go with that message.
 */
void rds_rdma_sock_release(struct rds_sock *rs)
{
	struct rds_notifier *n, *tmp;
	LIST_HEAD(notes);

	rds_defer_sock_close(rs);
	rds_mr_sock_release(rs);
	flush_workqueue(rds_mr_wq);	/* operations' pages too */

	spin_lock_bh(&rs->recv_lock);
	list_splice_init(&rs->notify_queue, &notes);
	spin_unlock_bh(&rs->recv_lock);
	list_for_each_entry_safe(n, tmp, &notes, item) {
		rds_rdma_note_uncharge(rs);
		kfree(n);
	}
}

/* ------------------------------------------------ extension headers */

static void rds_exthdr_put32(u8 *p, u32 v)
{
	__be32 be = cpu_to_be32(v);

	memcpy(p, &be, sizeof(be));
}

static u32 rds_exthdr_get32(const u8 *p)
{
	__be32 be;

	memcpy(&be, p, sizeof(be));
	return be32_to_cpu(be);
}

/*
 * Walk a received header's extensions (wire 4.5) for one type.  Return:
 * the payload of the first entry of @type, or NULL.
 */
static const u8 *rds_exthdr_find(const u8 *ext, u8 type)
{
	static const u8 size[] = { 0, 4, 4, 8, 0, 2, 4 };
	unsigned int pos = 0;

	while (pos < RDS_HDR_EXT_SPACE) {
		u8 t = ext[pos];
		unsigned int len;

		if (t == RDS_EXTHDR_NONE || t >= 16)
			return NULL;
		len = t < ARRAY_SIZE(size) ? size[t] : 0;
		if (pos + 1 + len > RDS_HDR_EXT_SPACE)
			return NULL;
		if (t == type)
			return ext + pos + 1;
		pos += 1 + len;
	}
	return NULL;
}

/**
 * rds_rdma_cmsg_type() - may a sendmsg() carry this SOL_RDS control message?
 * @type: its cmsg_type
 *
 * Return: 0 for the RDMA, atomic and operation id ones and for zero-copy
 * cookies (send.c takes those), -EINVAL otherwise.
 */
int rds_rdma_cmsg_type(int type)
{
	switch (type) {
	case RDS_CMSG_RDMA_ARGS:
	case RDS_CMSG_RDMA_DEST:
	case RDS_CMSG_RDMA_MAP:
	case RDS_CMSG_ATOMIC_FADD:
	case RDS_CMSG_ATOMIC_CSWP:
	case RDS_CMSG_MASKED_ATOMIC_FADD:
	case RDS_CMSG_MASKED_ATOMIC_CSWP:
	case RDS_CMSG_OP_ID:
	case RDS_CMSG_ZCOPY_COOKIE:
		return 0;
	default:
		return -EINVAL;
	}
}

/* What this layer attached to a message goes with it (rds_msg_put()). */
static void rds_rdma_msg_release(struct rds_msg *m)
{
	if (m->op)
		rds_rdma_op_free(m->op);
	if (m->reg_mr)
		rds_mr_put(m->reg_mr);
}

/**
 * rds_rdma_cmsgs() - the control messages of a sendmsg()
 * @rs: the sending socket, bound
 * @msg: the call's message
 * @m: the message being built: gets its extension header and operation
 * @daddr: the destination address
 * @dport: and port
 * @remote: the destination is another host
 *
 * At most one of each, and one operation: RDMA_MAP with RDMA_DEST, or
 * RDMA_ARGS with either or with an atomic, is a conflict (one message
 * carries one extension header and one operation; an atomic needs no
 * extension, so it may go with a cookie).  The cookie of RDMA_MAP is
 * stored before the send goes on and stays with the socket if the send
 * then fails, as in the distribution's RDS; the message holds the MR
 * (m->reg_mr), so a transport may register it on its way out.  The
 * operation gets its id (RDS_OP_BARRIER), stored for the caller where
 * RDS_CMSG_OP_ID says.
 *
 * Return: 0, or -EINVAL for a malformed or conflicting control message,
 * an unknown cookie, mismatched lengths, a misaligned remote atomic or
 * RDS_CMSG_OP_ID without an operation,
 * -ENODEV for an RDMA_DEST key whose device was removed,
 * -EFAULT for a misaligned or unwritable atomic result, -EOPNOTSUPP for
 * RDMA over a transport without it (TCP) or atomics the device does not
 * have, -EMSGSIZE for
 * more than UIO_MAXIOV iovecs, or an errno of registration or pinning.
 */
int rds_rdma_cmsgs(struct rds_sock *rs, struct msghdr *msg, struct rds_msg *m,
		   const struct in6_addr *daddr, __be16 dport, bool remote)
{
	const struct rds_atomic_args *atomic = NULL;
	const u64 *id_addr = NULL;
	const struct rds_get_mr_args *map = NULL;
	const struct rds_rdma_args *args = NULL;
	const struct rds_transport *trans;
	const u64 *dest = NULL;
	struct cmsghdr *cmsg;
	struct rds_rdma_op *op;
	int atomic_type = 0;
	struct rds_mr *mr;
	u64 cookie;
	int ret;

	for_each_cmsghdr(cmsg, msg) {
		size_t len;

		if (!CMSG_OK(msg, cmsg))
			return -EINVAL;
		if (cmsg->cmsg_level != SOL_RDS)
			continue;
		len = cmsg->cmsg_len - CMSG_LEN(0);
		switch (cmsg->cmsg_type) {
		case RDS_CMSG_RDMA_ARGS:
			if (args || len < sizeof(*args))
				return -EINVAL;
			args = CMSG_DATA(cmsg);
			break;
		case RDS_CMSG_RDMA_DEST:
			if (dest || len < sizeof(*dest))
				return -EINVAL;
			dest = CMSG_DATA(cmsg);
			break;
		case RDS_CMSG_RDMA_MAP:
			if (map || len < sizeof(*map))
				return -EINVAL;
			map = CMSG_DATA(cmsg);
			break;
		case RDS_CMSG_ATOMIC_FADD:
		case RDS_CMSG_ATOMIC_CSWP:
		case RDS_CMSG_MASKED_ATOMIC_FADD:
		case RDS_CMSG_MASKED_ATOMIC_CSWP:
			if (atomic || len < sizeof(*atomic))
				return -EINVAL;
			atomic = CMSG_DATA(cmsg);
			atomic_type = cmsg->cmsg_type;
			break;
		case RDS_CMSG_OP_ID:
			if (id_addr || len < sizeof(*id_addr))
				return -EINVAL;
			id_addr = CMSG_DATA(cmsg);
			break;
		case RDS_CMSG_ZCOPY_COOKIE:	/* send.c took it */
			break;
		default:
			return rds_rdma_cmsg_type(cmsg->cmsg_type);
		}
	}
	if ((map && dest) || (args && (map || dest || atomic)) ||
	    (id_addr && !args && !atomic))
		return -EINVAL;
	if (!map && !dest && !args && !atomic)
		return 0;
	/*
	 * A transport without memory registration (TCP) carries no RDMA:
	 * EOPNOTSUPP, as the distribution's (no xmit_rdma).  Atomics ask
	 * atomic_check, which it does not have either.
	 */
	trans = READ_ONCE(rs->trans);	/* bound: set, and stays */
	if (args && trans && trans->xmit && !trans->mr_reg)
		return -EOPNOTSUPP;

	m->release = rds_rdma_msg_release;
	if (args || atomic) {
		op = args ? rds_rdma_op_build(rs, args) :
			    rds_atomic_op_build(rs, atomic_type, atomic, remote);
		if (IS_ERR(op))
			return PTR_ERR(op);
		m->op = op;
		m->no_sends = op->silent && !m->len && !map && !dest;
		rds_op_track(rs, op, daddr, dport);
		trace_rds_rdma_op(op->id, op->rkey, op->remote_addr, op->len,
				  op->write, op->is_atomic, op->token);
		if (id_addr) {
			u64 uaddr;

			memcpy(&uaddr, id_addr, sizeof(uaddr));
			if (put_user(op->id, (u64 __user *)(unsigned long)uaddr))
				return -EFAULT;
		}
		if (atomic) {
			rds_stat_inc(RDS_STAT_ATOMIC_OPS);
			if (!map && !dest)
				return 0;
		} else {
			m->exthdr[0] = RDS_EXTHDR_RDMA;
			rds_exthdr_put32(&m->exthdr[1], op->rkey);
			rds_stat_inc(RDS_STAT_RDMA_OPS);
			return 0;
		}
	}
	if (dest) {
		memcpy(&cookie, dest, sizeof(cookie));
		spin_lock_bh(&rs->mr_lock);
		mr = rds_mr_find(rs, (u32)cookie);
		/*
		 * What the socket wrote reaches the device before the peer;
		 * a key that died with its device is named to nobody.
		 */
		ret = mr ? 0 : -EINVAL;
		if (mr && mr->trans->mr_sync)
			ret = mr->trans->mr_sync(mr, DMA_TO_DEVICE);
		spin_unlock_bh(&rs->mr_lock);
		if (ret)
			return ret;
	} else {
		struct rds_get_mr_args a;

		memcpy(&a, map, sizeof(a));
		ret = rds_mr_map(rs, &a.vec, a.cookie_addr, a.flags, &cookie,
				 &m->reg_mr, remote);
		if (ret)
			return ret;
	}
	m->exthdr[0] = RDS_EXTHDR_RDMA_DEST;
	rds_exthdr_put32(&m->exthdr[1], (u32)cookie);
	rds_exthdr_put32(&m->exthdr[5], cookie >> 32);
	return 0;
}

/* ---------------------------------------------------------- receive */

/**
 * rds_rdma_recv_exthdr() - act on a delivered message's extensions
 * @rs: the socket it is queued for
 * @inc: the message
 *
 * RDMA_DEST: the cookie goes to the reader as RDS_CMSG_RDMA_DEST.  RDMA:
 * an operation against one of our MRs has finished: its pages are synced
 * for the CPU, and a USE_ONCE MR leaves the socket and is released
 * (which invalidates it): now, or with RDS_RDMA_INVALIDATE once @inc is
 * queued, which then waits for the key's death before readers get it
 * (@inc->once_mr, recv_hold.c).  An unknown rkey is ignored.
 *
 * Context: any.
 */
void rds_rdma_recv_exthdr(struct rds_sock *rs, struct rds_incoming *inc)
{
	const u8 *ext = inc->msg->exthdr;
	const u8 *p;
	struct rds_mr *mr = NULL;

	p = rds_exthdr_find(ext, RDS_EXTHDR_RDMA_DEST);
	if (p) {
		inc->rdma_cookie = rds_rdma_cookie(rds_exthdr_get32(p),
						   rds_exthdr_get32(p + 4));
		inc->has_rdma_cookie = true;
	}
	p = rds_exthdr_find(ext, RDS_EXTHDR_RDMA);
	if (!p)
		return;
	spin_lock_bh(&rs->mr_lock);
	mr = rds_mr_find(rs, rds_exthdr_get32(p));
	/* What the peer wrote is the reader's before the ACK is. */
	if (mr && mr->trans->mr_sync)
		(void)mr->trans->mr_sync(mr, DMA_FROM_DEVICE);
	if (mr && (mr->flags & RDS_RDMA_USE_ONCE))
		rds_mr_unlink(rs, mr);
	else
		mr = NULL;
	spin_unlock_bh(&rs->mr_lock);
	if (!mr)
		return;
	if (rds_mr_gates(mr))
		inc->once_mr = mr;	/* released once queued (recv.c) */
	else
		rds_mr_release_once(mr, 0);
}

/**
 * rds_rdma_put_dest() - RDS_CMSG_RDMA_DEST for a message that carried one
 * @msg: the reader's message
 * @inc: the message being read
 *
 * Return: 0 or -EFAULT.
 */
int rds_rdma_put_dest(struct msghdr *msg, const struct rds_incoming *inc)
{
	u64 cookie = inc->rdma_cookie;

	if (!inc->has_rdma_cookie)
		return 0;
	return put_cmsg(msg, SOL_RDS, RDS_CMSG_RDMA_DEST, sizeof(cookie),
			&cookie);
}

/**
 * rds_rdma_recv_cmsgs() - hand queued notifications to recvmsg()
 * @rs: the socket; caller holds recv_mutex
 * @msg: the reader's message
 *
 * As many RDS_CMSG_RDMA_STATUS as the control buffer holds whole, in an
 * empty message.  A notification leaves the queue only for a buffer that
 * holds it whole: put_cmsg() would cut a longer one short, set
 * MSG_CTRUNC and lose it.  A reader without room for one (a recv(), a
 * control buffer that is too short) takes none and they stay queued.
 *
 * Return: 0 when some were given, -EAGAIN if none is queued, -ENOBUFS if
 * some are but none fits, -EFAULT (they stay queued).
 */
int rds_rdma_recv_cmsgs(struct rds_sock *rs, struct msghdr *msg)
{
	/*
	 * What put_cmsg() writes for one; a 32-bit task's header (struct
	 * compat_cmsghdr) is three 32-bit words.
	 */
	size_t room = (msg->msg_flags & MSG_CMSG_COMPAT) ?
		      3 * sizeof(u32) + sizeof(struct rds_rdma_notify) :
		      CMSG_SPACE(sizeof(struct rds_rdma_notify));
	unsigned int max = msg->msg_control ? msg->msg_controllen / room : 0;
	struct rds_notifier *n, *tmp;
	LIST_HEAD(todo);
	unsigned int nr = 0;
	bool queued;
	int ret = 0;

	/*
	 * Most reads find none: no lock then.  One queued meanwhile is
	 * found by the next read, as if it came just after this one.
	 */
	if (list_empty_careful(&rs->notify_queue))
		return -EAGAIN;
	spin_lock_bh(&rs->recv_lock);
	queued = !list_empty(&rs->notify_queue);
	list_for_each_entry_safe(n, tmp, &rs->notify_queue, item) {
		if (nr++ == max)
			break;
		list_move_tail(&n->item, &todo);
	}
	spin_unlock_bh(&rs->recv_lock);
	if (list_empty(&todo))
		return queued ? -ENOBUFS : -EAGAIN;

	list_for_each_entry_safe(n, tmp, &todo, item) {
		if (!ret)
			ret = put_cmsg(msg, SOL_RDS, RDS_CMSG_RDMA_STATUS,
				       sizeof(n->n), &n->n);
		if (ret)
			continue;	/* back to the queue below */
		list_del(&n->item);
		rds_rdma_note_uncharge(rs);
		kfree(n);
	}
	if (!list_empty(&todo)) {
		spin_lock_bh(&rs->recv_lock);
		list_splice(&todo, &rs->notify_queue);
		spin_unlock_bh(&rs->recv_lock);
	}
	msg->msg_namelen = 0;
	return ret;
}

/**
 * rds_rdma_init() - the MR key index, and the workqueue that releases
 * MRs and operations
 *
 * Return: 0 or -ENOMEM.
 */
int rds_rdma_init(void)
{
	int ret = rds_mr_index_init();

	if (ret)
		return ret;
	rds_mr_wq = alloc_workqueue("rds_zc_mr", WQ_UNBOUND, 0);
	if (!rds_mr_wq) {
		rds_mr_index_exit();
		return -ENOMEM;
	}
	return 0;
}

/**
 * rds_rdma_exit() - after every socket is gone
 */
void rds_rdma_exit(void)
{
	destroy_workqueue(rds_mr_wq);
	rds_mr_index_exit();
}
