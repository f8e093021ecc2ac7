// SPDX-License-Identifier: GPL-2.0
/*
 * Messages held back from readers until a key they released is dead.
 *
 * The message that names a USE_ONCE MR registered with
 * RDS_RDMA_INVALIDATE in its RDMA extension (the ACK of the peer's RDMA)
 * releases that MR (rdma.c), and with RDS_RDMA_INVALIDATE the reader may
 * take the message only once the key is dead: a reader that has the ACK
 * knows that the peer can reach the memory no more, as one whose
 * RDS_FREE_MR with RDS_RDMA_INVALIDATE returned knows it.  Invalidating
 * takes the local device's LOCAL_INV (microseconds), never an answer of
 * a peer.
 *
 * Such a message waits on the socket's recv_held list with a ticket (its
 * gate, never 0), which its MR carries (mr.c), and the messages queued
 * after it wait behind it, so that readers still get the socket's
 * messages in the order they arrived.  When the key dies,
 * rds_recv_ungate() opens that gate and moves the messages at the front
 * of the list that wait for nothing to recv_queue, where readers and
 * poll() see them.  Held messages are charged to the receive buffer
 * from their arrival, as queued ones are, and a closing socket drops
 * them with the others (rds_recv_purge()).
 *
 * Locking: recv_held and the gates of its messages are under the
 * socket's recv_lock.
 */
#include <linux/spinlock.h>
#include <net/sock.h>

#include "recv_hold.h"

/**
 * rds_recv_hold() - hold a message back from readers
 * @rs: its socket, not dead
 * @inc: the message, charged to @rs
 * @gated: it waits for a key itself, else only behind the messages held
 *	already
 *
 * Context: caller holds recv_lock.
 * Return: the message's ticket, or 0 when it is not @gated.
 */
u32 rds_recv_hold(struct rds_sock *rs, struct rds_incoming *inc,
		  bool gated)
{
	if (gated) {
		if (!++rs->gate_last)
			rs->gate_last = 1;	/* 0 means no gate */
		inc->gate = rs->gate_last;
	}
	list_add_tail(&inc->item, &rs->recv_held);
	return inc->gate;
}

/**
 * rds_recv_ungate() - a held message's key died: let readers have it
 * @rs: its socket
 * @ticket: the message's ticket from rds_recv_hold()
 *
 * The message may be gone already (the socket closed): then only the
 * messages before it can still be held, and they wait for their own
 * keys.
 *
 * Context: any but hard interrupts; takes recv_lock.
 */
void rds_recv_ungate(struct rds_sock *rs, u32 ticket)
{
	struct rds_incoming *inc, *tmp;
	bool ready = false;

	spin_lock_bh(&rs->recv_lock);
	list_for_each_entry(inc, &rs->recv_held, item) {
		if (inc->gate == ticket) {
			inc->gate = 0;
			break;
		}
	}
	list_for_each_entry_safe(inc, tmp, &rs->recv_held, item) {
		if (inc->gate)
			break;
		list_move_tail(&inc->item, &rs->recv_queue);
		ready = true;
	}
	spin_unlock_bh(&rs->recv_lock);
	if (ready)
		rs->sk.sk_data_ready(&rs->sk);
}
