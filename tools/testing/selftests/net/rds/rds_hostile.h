/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rds_hostile.h - what the files of rds_hostile share: the hostile QP
 * (rds_hostile_qp.c), node 1's checks and the frame of every case
 * (rds_hostile_node.c), and the cases themselves, which rds_hostile.c
 * lists in its table.  Each of the other rds_hostile_*.c holds the
 * cases of one topic:
 *
 *   rds_hostile_connect.c	connect requests that lie
 *   rds_hostile_frames.c	checksums, lengths, credits, ACKs
 *   rds_hostile_keys.c		extension headers, keys, close_unacked
 *   rds_hostile_flood.c	floods that ignore congestion or credits
 *   rds_hostile_conns.c	how many connections a peer makes us hold
 */
#ifndef RDS_HOSTILE_H
#define RDS_HOSTILE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <linux/rds.h>

#include "rds_test.h"
#include "rds_sock_util.h"
#include "rds_info_util.h"
#include "rds_peer.h"
#include "rds_wire_frame.h"

#define CTL_PORT	18633
#define PORT_BASE	28000	/* case k uses PORT_BASE + 32 k .. + 31 */
#define HONEST_TOS	77	/* honest_request; no other test uses it */
#define HP_REJ_CONSUMER	28	/* IB CM REJ reason: consumer defined */
#define HP_REJ_NONE	INT_MIN	/* a REJ without the consumer's reason */
#define CM_WAIT_MS	30000
#define OPEN_MS		30000	/* to get a hostile QP accepted */
#define DOWN_MS		10000	/* for node 1 to drop a hostile QP */
#define SETTLE_MS	30000	/* for node 1's resources to come back */

/* The ports of a case (k of case_port()). */
#define P_VICTIM	0	/* node 1: takes the hostile messages */
#define P_OWNER		1	/* node 1: owns an MR */
#define P_S1		2	/* node 1: sends to the honest verbs peer */
#define P_S2		3	/* node 1: sends to the hostile verbs peer */
#define P_INIT		4	/* node 2: the honest RDMA initiator */
#define P_HONEST	31	/* both: the honest exchange */
#define HOSTILE_SPORT	7777	/* what the hostile messages come from */

/* The hostile QPs: send and receive slots of one frame each. */
#define HP_SEND_SLOTS	128
#define HP_RECV_SLOTS	64
#define HP_LOG		64	/* node 1's data messages remembered */
#define HP_READ_LEN	64
/*
 * The READs and atomics we serve for node 1 at once (responder
 * resources) and have outstanding at it (initiator depth): different, so
 * that node 1's reply shows which it bounded by which.
 */
#define HP_RD_RESP	1
#define HP_RD_INIT	2
#define WR_RECV		(1ULL << 62)
#define WR_READ		(1ULL << 61)

/* The floods */
#define FLOOD_MSGS	200000UL
#define FLOOD_BATCH	10000UL
#define FLOOD_STALL_MS	5000	/* no completion this long: held back */
#define FLOOD_BOUND_KIB	8192	/* what node 1 may grow by */
#define FLOOD_STOP_KIB	65536	/* stop before the guest runs out */
/* ping_flood */
#define PING_FLOOD	40000UL	/* pings; 5 MiB of pongs without a bound */
#define PING_CREDIT	3	/* node 1's congestion map, and one more */
#define PONGS_MAX	64	/* RDS_CONN_PONGS_MAX (conn_internal.h) */
#define PING_BOUND_KIB	1024	/* what node 1's slab may grow by */
#define PING_WD_MS	300000	/* node 1's unacked_timeout_ms meanwhile */

/* ------------------------------------------------------ the hostile QP */

/* One data message node 1 sent to a hostile QP. */
struct hp_rx {
	uint64_t seq;
	uint16_t sport;
	uint16_t dport;
	uint32_t len;
	uint8_t flags;
};

struct hp {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	unsigned char *mem;	/* send slots, receive slots, read buffer */
	size_t mem_len;
	uint8_t tos;
	int up;			/* ESTABLISHED, not yet DISCONNECTED */
	uint64_t seq;		/* of the last message sent */
	uint64_t ack;		/* h_ack of the frames we send */
	unsigned int slot;	/* next send slot */
	unsigned int busy;	/* sends posted, not completed */
	unsigned long long posted, done;	/* sends posted, completed */
	int err;		/* status of the first failed send, or 0 */
	int read_status;	/* of the RDMA READ, -1 while none ended */
	/* node 1's reply: its initiator depth and responder resources */
	int peer_rd_init, peer_rd_resp;
	int rej_reason;		/* of node 1's REJ (wire 1.6), or HP_REJ_NONE */
	/* what node 1 sent us */
	unsigned long long rx_frames, rx_acks, rx_cong, rx_bad;
	unsigned long long rx_credit;	/* h_credit of them all, summed */
	unsigned long long rx_pongs;	/* from port 0 to another */
	/* congested ports in its maps that no case uses, and the first */
	unsigned long long rx_cong_stray;
	int rx_cong_stray_port;
	uint64_t rx_ack;	/* the newest h_ack */
	unsigned int nrx;
	struct hp_rx rx[HP_LOG];
};

unsigned char *hp_read_buf(struct hp *h);
int hp_progress(struct hp *h, int ms);
void hp_listen(struct hp *h, int ms);
enum rdma_cm_event_type hp_try_open(struct hp *h,
				    const struct rds_wire_priv *priv,
				    int *status);
enum rdma_cm_event_type hp_try_open_sa(struct hp *h, const void *priv,
				       size_t len, struct sockaddr *src,
				       struct sockaddr *dst, int *status);
enum rdma_cm_event_type hp_try_open_gid(struct hp *h,
					const struct rds_wire_priv *priv,
					const union ibv_gid *sgid, int ms,
					int *status);
void hp_open(struct hp *h, uint8_t tos, uint32_t credit,
	     uint64_t ack_seq);
int hp_wait_down(struct hp *h, int ms);
void hp_close(struct hp *h);
int hp_frame(struct hp *h, const struct rds_wire_hdr *hdr,
	     const void *payload, uint32_t len, int solicited, int ms);
int hp_flush(struct hp *h, int ms);
void hp_hdr(struct hp *h, struct rds_wire_hdr *hdr, uint64_t seq,
	    uint32_t len, int k, uint8_t flags, const uint8_t *ext);
unsigned char *hostile_payload(uint32_t idx, size_t len);
uint64_t hp_msg(struct hp *h, uint32_t idx, uint32_t len, int k,
		uint8_t flags, const uint8_t *ext);
void hp_ack(struct hp *h, uint64_t ack, uint8_t credit);
void hp_expect_drop(struct hp *h, const char *what);
int hp_wait_seen(struct hp *h, uint16_t sport, int want,
		 uint64_t *seqs, int ms);
void hp_ack_all(struct hp *h);

int distro_victim(void);
uint8_t case_tos(int k);

/* ------------------------------------------------- node 1: the victim */

/*
 * What must come back after the hostile QPs are gone.  QPs are counted
 * less the connections that are up: the distribution reconnects every
 * connection it once had (to node 2's kernel), ours only those with
 * messages to send.
 */
struct snap {
	int qp;
	int mr;
	int up;
	int connecting;
	long long mrs;		/* RDS MRs held: created - released */
	long long socks;	/* RDS sockets: created - released */
};

void expect_hostile(int fd, uint32_t idx, size_t len, int cookies,
		    uint64_t cookie);
int unacked(int fd, int k);
int unacked_wait(int fd, int k, int want, int ms);
void set_tos(int fd, uint8_t tos);

/* ---------------------------------------------------- both: the frame */

/* One case's sockets and what node 1 had before it. */
struct hcase {
	int cfd;		/* for the counters and tables */
	int honest;		/* port P_HONEST */
	int victim;		/* node 1: port P_VICTIM */
	int round;
	int mr_slack;		/* device MRs the case may leave pooled */
	struct snap base;
	long long drops;
	long long queued;
};

void hc_begin(struct hcase *hc);
void dirty_free_pages(void);
void hc_middle(struct hcase *hc);
void hc_end(struct hcase *hc, long long want_drops);

/* ------------------------------------------------------ the cases */

/* rds_hostile_connect.c */
void test_src_loopback(void);
void test_src_victim(void);
void test_src_third_host(void);
void test_dst_loopback(void);
void test_honest_request(void);
void test_reject_reason(void);
void test_src_gid(void);
void test_live_conn_kept(void);
void test_peer_restart(void);
void test_src6_loopback(void);
void test_src6_victim(void);
void test_src6_third_host(void);
void test_dst6_loopback(void);
void test_src6_mapped(void);
void test_honest_request6(void);

/* rds_hostile_frames.c */
void test_wire_sane(void);
void test_bad_csum(void);
void test_len_overrun(void);
void test_bad_credit(void);
void test_bad_ack(void);

/* rds_hostile_keys.c */
void test_bad_exthdr(void);
void test_close_unacked(void);
void test_free_unacked(void);
void test_use_once_unacked(void);
void test_kill_stalled(void);

/* rds_hostile_flood.c */
void test_flood_zero(void);
void test_flood_one(void);
void test_ping_flood(void);

/* rds_hostile_conns.c */
void test_conn_limit(void);
void test_conn_idle_reap(void);

#endif /* RDS_HOSTILE_H */
