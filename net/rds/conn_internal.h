/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared among the files of the connection layer only (connection.c,
 * conn_state.c, conn_send.c, conn_recv.c, conn_info.c); everyone else
 * uses connection.h.
 */
#ifndef _RDS_ZC_CONN_INTERNAL_H
#define _RDS_ZC_CONN_INTERNAL_H

#include <linux/list.h>
#include <linux/types.h>

struct rds_conn;
struct rds_conn_upcalls;
struct rds_msg;
struct work_struct;
struct workqueue_struct;

/* Every connection, under RCU; written under connection.c's lock. */
extern struct list_head rds_conn_list;
/* Connect, send and shutdown work of every connection. */
extern struct workqueue_struct *rds_conn_wq;
/* The socket layer's side, from rds_conn_init(). */
extern const struct rds_conn_upcalls *rds_conn_up;

/* conn_state.c */
bool rds_conn_set_state(struct rds_conn *conn, int from, int to,
			const char *reason);
void rds_conn_connect_if_down(struct rds_conn *conn);
void rds_conn_connect_work(struct work_struct *work);
void rds_conn_watchdog_work(struct work_struct *work);
void rds_conn_shutdown_work(struct work_struct *work);

/* conn_recv.c */
void rds_conn_mp_work(struct work_struct *work);

/* connection.c */
bool rds_conn_empty(struct rds_conn *conn);
bool rds_conn_mp_reserve(struct rds_conn *base);
void rds_conn_mp_each(struct rds_conn *conn,
		      void (*fn)(struct rds_conn *p, void *arg), void *arg);

/*
 * Pongs a connection holds at most, queued or waiting for their ACK
 * (rds_conn_enqueue_pong()): a pong is a bare struct rds_msg, so 64 of
 * them take about 8 KiB.  An honest pinger waits for each answer; pings
 * beyond the bound are counted (send_pong_dropped), not answered.
 */
#define RDS_CONN_PONGS_MAX	64

/*
 * How long a connection whose peer was challenged (rds_conn_challenge())
 * waits for the ACK of what it sent before it is taken for gone: an
 * honest peer acknowledges an ACK_REQUIRED message at once, and its
 * transport acknowledges every send within a round trip.
 */
#define RDS_CONN_CHALLENGE_MS	3000

/* conn_send.c */
bool rds_conn_msg_orphan(const struct rds_msg *m);
void rds_conn_msgs_done(struct list_head *list);
void rds_conn_enqueue(struct rds_conn *conn, struct rds_msg *m);
bool rds_conn_enqueue_pong(struct rds_conn *conn, struct rds_msg *m,
			   bool always);
void rds_conn_pongs_take(struct rds_conn *conn, struct list_head *list);
void rds_conn_send_work(struct work_struct *work);
void rds_conn_ack_probe_work(struct work_struct *work);
bool rds_conn_msg_is_probe(const struct rds_msg *m);
void rds_conn_idle_probe(struct rds_conn *conn);
void rds_conn_challenge(struct rds_conn *conn);
void rds_conn_mark_used(struct rds_conn *conn);

#endif /* _RDS_ZC_CONN_INTERNAL_H */
