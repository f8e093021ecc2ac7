/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the core's RDMA files share among themselves (mr.c, rdma_op.c,
 * rdma.c): pinning and charging user pages, finding and mapping a
 * socket's MRs, and the workqueue that releases MRs and operations.
 * Nothing outside the core includes it.
 */
#ifndef _RDS_ZC_MR_H
#define _RDS_ZC_MR_H

#include <linux/types.h>
#include <uapi/linux/rds.h>

struct in6_addr;
struct mm_struct;
struct net;
struct page;
struct rds_mr;
struct rds_sock;
struct workqueue_struct;

/* Flags of the RDMA interface; any other bit is refused with EINVAL. */
#define RDS_RDMA_FLAGS	(RDS_RDMA_READWRITE | RDS_RDMA_FENCE | \
			 RDS_RDMA_INVALIDATE | RDS_RDMA_USE_ONCE | \
			 RDS_RDMA_DONTWAIT | RDS_RDMA_NOTIFY_ME | \
			 RDS_RDMA_SILENT)

/* Releases MRs and operations (rdma.c creates it). */
extern struct workqueue_struct *rds_mr_wq;

static inline u64 rds_rdma_cookie(u32 rkey, u32 offset)
{
	return rkey | ((u64)offset << 32);
}

int rds_rdma_pin(unsigned long addr, size_t len, unsigned int gup,
		 struct page ***pagesp, unsigned int *nrp);
int rds_rdma_charge(struct mm_struct *mm, unsigned long nr);

struct rds_mr *rds_mr_find(struct rds_sock *rs, u32 rkey);
void rds_mr_unlink(struct rds_sock *rs, struct rds_mr *mr);
int rds_mr_map(struct rds_sock *rs, const struct rds_iovec *vec,
	       u64 cookie_addr, u64 flags, u64 *cookie, struct rds_mr **keep,
	       bool defer);
void rds_mr_sock_release(struct rds_sock *rs);

struct rds_mr *rds_mr_get_local(struct net *net, const struct in6_addr *addr,
				u32 scope, u32 rkey);
bool rds_mr_claim(struct rds_mr *mr);
int rds_mr_index_init(void);
void rds_mr_index_exit(void);

#endif /* _RDS_ZC_MR_H */
