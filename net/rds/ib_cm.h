/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared among the IB transport's connection files only (ib_cm.c,
 * ib_conn.c, ib_handshake.c); everyone else uses ib.h.
 */
#ifndef _RDS_ZC_IB_CM_H
#define _RDS_ZC_IB_CM_H

#include <linux/types.h>

#include "ib_proto.h"

struct in6_addr;
struct rdma_cm_event;
struct rdma_cm_id;
struct rdma_conn_param;
struct rds_ib_conn;

/* Private data in either form: IPv4 (and mapped) or IPv6 (2.1). */
union rds_ib_privs {
	struct rds_ib_priv	v4;
	struct rds_ib_priv6	v6;
};

/* ib_conn.c: an incarnation's QP, CQs and rings */
int rds_ib_setup(struct rds_ib_conn *ic, struct rdma_cm_id *id, bool own);
int rds_ib_qp_ready(struct rds_ib_conn *ic, struct rdma_cm_id *id,
		    struct rdma_conn_param *param);
void rds_ib_teardown(struct rds_ib_conn *ic);
void rds_ib_info_record(struct rds_ib_conn *ic, struct rdma_cm_id *id);

/* ib_handshake.c: the private data of requests and replies */
const struct rds_ib_priv_cmn *
rds_ib_priv_parse(const union rds_ib_privs *p, u8 len, bool v6,
		  struct in6_addr *saddr, struct in6_addr *daddr);
u8 rds_ib_fill_priv(struct rds_ib_conn *ic, union rds_ib_privs *p,
		    u16 version);
int rds_ib_check_rep(struct rds_ib_conn *ic,
		     const struct rdma_cm_event *event);
u16 rds_ib_req_version(const struct rds_ib_priv_cmn *p, u8 len);
bool rds_ib_req_addrs_ok(const struct rdma_cm_id *id,
			 const struct in6_addr *saddr,
			 const struct in6_addr *daddr, u32 *dev_if,
			 bool *self);
bool rds_ib_req_gid_ok(const struct rdma_cm_id *id,
		       const struct in6_addr *saddr);

#endif /* _RDS_ZC_IB_CM_H */
