// SPDX-License-Identifier: GPL-2.0
/*
 * Credit-based flow control (rds_zc-wire.rst section 6).
 *
 * A credit is one receive buffer the peer has posted for us: a SEND (data
 * fragment or ACK frame) may go out only against one, so a receiver never
 * answers with an RNR NAK and a sender never floods a slow peer.
 *
 * Negotiation.  With the module parameter flow_control on (the default)
 * we post the whole receive ring before the handshake and offer it as the
 * credit of our private data; from then on we return a credit for every
 * buffer we post again (the "posted" count), in the h_credit byte of the
 * next frame we send.  We enforce credits on our own SENDs only if the
 * peer offered a non-zero credit too: the distribution's rds_rdma always
 * offers 0 and, when its net.rds.ib.flow_control is 1, enforces the
 * credits we grant on its sends.  So we grant whenever we offered, and
 * enforce only against a peer that grants.
 *
 * Accounting is the distribution's: one atomic_t, send credits in the low
 * 16 bits, posted-but-not-yet-returned credits in the high 16 bits,
 * changed together by cmpxchg.  The last send credit is spent only on a
 * frame that also returns credits, so that each side can always tell the
 * other it may go on.  Because every received frame is posted again at
 * once, "posted" plus the credits the peer still holds (or has in flight)
 * is always our ring size: when the peer runs low, posted is high, and
 * posted reaching credit_batch asks for an ACK frame that returns them.
 */
#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/minmax.h>
#include <linux/module.h>

#include "ib.h"
#include "transport.h"

#define RDS_IB_CREDIT_SEND(v)	((u32)(v) & 0xffff)
#define RDS_IB_CREDIT_POSTED(v)	((u32)(v) >> 16)
#define RDS_IB_CREDIT(send, posted)	((send) | ((posted) << 16))

static bool rds_ib_flow_control = true;
module_param_named(flow_control, rds_ib_flow_control, bool, 0644);
MODULE_PARM_DESC(flow_control, "Offer credit-based flow control to peers; used with those that offer it too (default on)");

/* Most credits one frame returns: h_credit is a byte. */
#define RDS_IB_CREDIT_MAX_ADV	255
/* Most initial credits we take from a peer: the send count is 16 bits. */
#define RDS_IB_CREDIT_MAX_INIT	16383
/*
 * Most send credits we hold: what the low 16 bits count.  A peer that
 * grants more than it has receive buffers for only meets RNR NAKs; one
 * past this would carry into the posted count and make us return
 * credits we never posted.
 */
#define RDS_IB_CREDIT_MAX_SEND	0xffff

/**
 * rds_ib_credit_reset() - no flow control; before setup and at teardown
 * @ic: the connection
 */
void rds_ib_credit_reset(struct rds_ib_conn *ic)
{
	ic->fc_grant = false;
	ic->fc_enforce = false;
	atomic_set(&ic->credits, 0);
}

/**
 * rds_ib_credit_offer() - the credit for our private data
 * @ic: the connection, its receive ring posted
 *
 * Return: the whole receive ring if flow control is on, else 0.
 */
u32 rds_ib_credit_offer(struct rds_ib_conn *ic)
{
	ic->fc_grant = READ_ONCE(rds_ib_flow_control);
	ic->credit_batch = clamp(ic->recv_nr / 2, 1U, 16U);
	return ic->fc_grant ? ic->recv_nr : 0;
}

/**
 * rds_ib_credit_start() - take the peer's offer from its private data
 * @ic: the connection, before it is reported up
 * @offer: the peer's credit field
 */
void rds_ib_credit_start(struct rds_ib_conn *ic, u32 offer)
{
	if (!ic->fc_grant || !offer)
		return;
	ic->fc_enforce = true;
	atomic_set(&ic->credits,
		   RDS_IB_CREDIT(min_t(u32, offer, RDS_IB_CREDIT_MAX_INIT), 0));
	rds_ib_stat_inc(RDS_IB_STAT_CONN_FLOW_CONTROL);
}

/* How many send credits may be spent now (the last one is kept back). */
static u32 rds_ib_credit_usable(int v)
{
	u32 avail = RDS_IB_CREDIT_SEND(v);

	if (avail && !RDS_IB_CREDIT_POSTED(v))
		avail--;
	return avail;
}

static bool rds_ib_credit_try(struct rds_ib_conn *ic, u8 *adv)
{
	u32 take, give, left;
	int old, new;

	do {
		old = atomic_read(&ic->credits);
		take = ic->fc_enforce ? 1 : 0;
		if (take > rds_ib_credit_usable(old))
			return false;
		give = min_t(u32, RDS_IB_CREDIT_POSTED(old),
			     RDS_IB_CREDIT_MAX_ADV);
		new = old - RDS_IB_CREDIT(take, give);
	} while (atomic_cmpxchg(&ic->credits, old, new) != old);

	*adv = give;
	left = RDS_IB_CREDIT_POSTED(new);
	if (left >= ic->credit_batch)	/* more than one frame can carry */
		set_bit(RDS_IB_ACK_REQUESTED, &ic->flags);
	if (give)
		rds_ib_stat_inc(RDS_IB_STAT_TX_CREDIT_UPDATES);
	return true;
}

/**
 * rds_ib_credit_grab() - a credit for one SEND, and credits to return
 * @ic: the connection, up
 * @adv: out: the h_credit of the frame, credits returned to the peer
 *
 * Without enforcement it always succeeds.  When it fails it marks the
 * connection as waiting, so that arriving credits resume sending.
 *
 * Return: true if the frame may be posted.
 */
bool rds_ib_credit_grab(struct rds_ib_conn *ic, u8 *adv)
{
	*adv = 0;
	if (rds_ib_credit_try(ic, adv))
		return true;
	set_bit(RDS_IB_CREDIT_WAIT, &ic->flags);
	/* Pairs with rds_ib_credit_add(): bit before recheck. */
	smp_mb__after_atomic();
	if (rds_ib_credit_try(ic, adv)) {
		clear_bit(RDS_IB_CREDIT_WAIT, &ic->flags);
		return true;
	}
	rds_ib_stat_inc(RDS_IB_STAT_TX_CREDIT_STALL);
	return false;
}

/**
 * rds_ib_credit_grab_many() - credits for up to @want SENDs at once
 * @ic: the connection, up
 * @want: SENDs the caller has ready, at least 1
 * @adv: out: the h_credit of the first of them; the others return none
 *
 * One atomic update for a message's fragments.  Under enforcement one
 * credit is kept back, as rds_ib_credit_usable() keeps the last one for
 * a frame that returns credits: only the first frame of a batch does.
 * When not even two are left, it is rds_ib_credit_grab() for one SEND.
 *
 * Return: the SENDs that may be posted, 0 to @want; 0 marks the
 * connection as waiting, as rds_ib_credit_grab() does.
 */
unsigned int rds_ib_credit_grab_many(struct rds_ib_conn *ic,
				     unsigned int want, u8 *adv)
{
	u32 take, give, avail;
	int old, new;

	if (want > 1) {
		old = atomic_read(&ic->credits);
		do {
			avail = RDS_IB_CREDIT_SEND(old);
			if (!ic->fc_enforce)
				take = 0;
			else if (avail > 1)
				take = min_t(u32, want, avail - 1);
			else
				break;
			give = min_t(u32, RDS_IB_CREDIT_POSTED(old),
				     RDS_IB_CREDIT_MAX_ADV);
			new = old - RDS_IB_CREDIT(take, give);
		} while (!atomic_try_cmpxchg(&ic->credits, &old, new));
		if (!ic->fc_enforce || avail > 1) {
			*adv = give;
			if (RDS_IB_CREDIT_POSTED(new) >= ic->credit_batch)
				set_bit(RDS_IB_ACK_REQUESTED, &ic->flags);
			if (give)
				rds_ib_stat_inc(RDS_IB_STAT_TX_CREDIT_UPDATES);
			return take ? take : want;
		}
	}
	return rds_ib_credit_grab(ic, adv) ? 1 : 0;
}

/**
 * rds_ib_credit_can_send() - would rds_ib_credit_grab() succeed now?
 * @ic: the connection
 *
 * Return: true if a SEND could be posted.
 */
bool rds_ib_credit_can_send(struct rds_ib_conn *ic)
{
	return !ic->fc_enforce ||
	       rds_ib_credit_usable(atomic_read(&ic->credits)) > 0;
}

/**
 * rds_ib_credit_add() - credits the peer returned in a frame's h_credit
 * @ic: the connection
 * @n: the credits
 *
 * The send count saturates at RDS_IB_CREDIT_MAX_SEND: a peer granting
 * more than that (it cannot have the buffers) must not reach the posted
 * count above it.  A sender that waited for credits is kicked.
 * Context: receive completion.
 * Return: true if one waited: an ACK frame may wait too, and the caller
 * sends it (rds_ib_send_ack()).
 */
bool rds_ib_credit_add(struct rds_ib_conn *ic, u8 n)
{
	int old, new;
	u32 send;

	if (!n || !ic->fc_enforce)
		return false;
	old = atomic_read(&ic->credits);
	do {
		send = min_t(u32, RDS_IB_CREDIT_SEND(old) + n,
			     RDS_IB_CREDIT_MAX_SEND);
		new = RDS_IB_CREDIT(send, RDS_IB_CREDIT_POSTED(old));
	} while (!atomic_try_cmpxchg(&ic->credits, &old, new));
	rds_ib_stat_inc(RDS_IB_STAT_RX_CREDIT_UPDATES);
	/* Pairs with rds_ib_credit_grab(): credits before the bit test. */
	smp_mb__after_atomic();
	if (!test_and_clear_bit(RDS_IB_CREDIT_WAIT, &ic->flags))
		return false;
	rds_zc_conn_kick(ic->conn);
	return true;
}

/**
 * rds_ib_credit_posted() - one receive buffer was posted again
 * @ic: the connection
 *
 * Context: receive completion.
 * Return: true when enough were posted to hand the peer: an ACK frame is
 * requested (RDS_IB_ACK_REQUESTED), and the caller sends it
 * (rds_ib_send_ack()).
 */
bool rds_ib_credit_posted(struct rds_ib_conn *ic)
{
	int v;

	if (!ic->fc_grant)
		return false;
	v = atomic_add_return(RDS_IB_CREDIT(0, 1), &ic->credits);
	if (RDS_IB_CREDIT_POSTED(v) < ic->credit_batch)
		return false;
	set_bit(RDS_IB_ACK_REQUESTED, &ic->flags);
	return true;
}
