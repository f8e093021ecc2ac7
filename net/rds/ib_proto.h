/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RDS 3.1 over InfiniBand/RoCE on the wire: the connection private data
 * and the 48-byte message header, as the distribution's rds_rdma sends
 * them.  Section numbers refer to Documentation/networking/rds_zc-wire.rst.
 */
#ifndef _RDS_ZC_IB_PROTO_H
#define _RDS_ZC_IB_PROTO_H

#include <linux/build_bug.h>
#include <linux/in6.h>
#include <linux/stddef.h>
#include <linux/types.h>
#include <net/checksum.h>

/* The rdma_cm ports RDS listens on (RDMA_PS_TCP), section 1.2. */
#define RDS_IB_PORT		18634	/* IPv4, IPv4-mapped */
#define RDS_IB_PORT6		16385	/* IPv6 */

/* Payload of one SEND: messages go out in fragments of this size (4.6). */
#define RDS_IB_FRAG_SIZE	4096

/* Protocol versions, major << 8 | minor (2.2). */
#define RDS_IB_VERSION(maj, min)	((maj) << 8 | (min))
#define RDS_IB_VERSION_3_1	RDS_IB_VERSION(3, 1)
#define RDS_IB_MINOR_MASK	0x0003	/* minors of major 4 we accept */

/*
 * The reason a reject carries, a host-order int (1.6): the distribution
 * sends 1 for every reject, a lost connect race among them.  We send 1
 * for a race we win and for a request we cannot take at all, and 0 for
 * "not now" (the connection is going down, or up and dropped as stale,
 * or its setup failed); any value up to 1 makes the distribution drop
 * its attempt and retry, so the two read alike there.
 */
#define RDS_IB_REJ_INCOMPAT	1
#define RDS_IB_REJ_RETRY	0

/* Timeouts of address and route resolution (1.3). */
#define RDS_IB_RESOLVE_MS	5000

/* Connection private data: the part both forms share (2.1). */
struct rds_ib_priv_cmn {
	u8	major;
	u8	minor;
	__be16	minor_mask;
	u8	tos;
	u8	reserved0;
	__be16	reserved1;
	__be64	ack_seq;	/* last sequence received, 0 for none */
	__be32	credit;		/* 0: no flow control */
	u32	padding;
};

/* The IPv4 form, on the RDS_IB_PORT listener (2.1). */
struct rds_ib_priv {
	__be32	saddr;		/* the sender's RDS address */
	__be32	daddr;		/* the address it wants to reach */
	struct rds_ib_priv_cmn cmn;
};

/* The IPv6 form, on the RDS_IB_PORT6 listener (2.1). */
struct rds_ib_priv6 {
	struct in6_addr	saddr;
	struct in6_addr	daddr;
	struct rds_ib_priv_cmn cmn;
};

static_assert(sizeof(struct rds_ib_priv) == 32);
static_assert(offsetof(struct rds_ib_priv, cmn) == 8);
static_assert(offsetof(struct rds_ib_priv_cmn, minor_mask) == 2);
static_assert(offsetof(struct rds_ib_priv_cmn, tos) == 4);
static_assert(offsetof(struct rds_ib_priv_cmn, ack_seq) == 8);
static_assert(offsetof(struct rds_ib_priv_cmn, credit) == 16);
static_assert(sizeof(struct rds_ib_priv6) == 56);
static_assert(offsetof(struct rds_ib_priv6, daddr) == 16);
static_assert(offsetof(struct rds_ib_priv6, cmn) == 32);

/* The header every fragment starts with (4.1). */
struct rds_ib_hdr {
	__be64	h_sequence;
	__be64	h_ack;
	__be32	h_len;		/* payload of the whole message */
	__be16	h_sport;
	__be16	h_dport;
	u8	h_flags;	/* RDS_FLAG_* */
	u8	h_credit;
	u8	h_padding[4];
	__sum16	h_csum;		/* IP checksum of the 48 bytes, 0: none */
	u8	h_exthdr[16];
};

#define RDS_IB_HDR_SIZE		48

static_assert(sizeof(struct rds_ib_hdr) == RDS_IB_HDR_SIZE);
static_assert(offsetof(struct rds_ib_hdr, h_len) == 16);
static_assert(offsetof(struct rds_ib_hdr, h_sport) == 20);
static_assert(offsetof(struct rds_ib_hdr, h_flags) == 24);
static_assert(offsetof(struct rds_ib_hdr, h_credit) == 25);
static_assert(offsetof(struct rds_ib_hdr, h_csum) == 30);
static_assert(offsetof(struct rds_ib_hdr, h_exthdr) == 32);

/* Fill in the checksum of a finished header (4.4). */
static inline void rds_ib_hdr_csum(struct rds_ib_hdr *h)
{
	h->h_csum = 0;
	h->h_csum = ip_fast_csum(h, RDS_IB_HDR_SIZE / 4);
}

/*
 * Change the h_credit of a header whose checksum is right, and update the
 * checksum for it (RFC 1624): h_flags and h_credit are one 16-bit word.
 */
static inline void rds_ib_hdr_set_credit(struct rds_ib_hdr *h, u8 credit)
{
	__be16 old = cpu_to_be16((u16)h->h_flags << 8 | h->h_credit);

	h->h_credit = credit;
	csum_replace2(&h->h_csum, old,
		      cpu_to_be16((u16)h->h_flags << 8 | credit));
}

/* A header is good if it carries no checksum or a correct one. */
static inline bool rds_ib_hdr_csum_ok(const struct rds_ib_hdr *h)
{
	return !h->h_csum || !ip_fast_csum(h, RDS_IB_HDR_SIZE / 4);
}

/* An ACK frame: a bare header from port 0 to port 0 (4.7). */
static inline bool rds_ib_hdr_is_ack(const struct rds_ib_hdr *h,
				     u32 payload)
{
	return !payload && !h->h_sport && !h->h_dport;
}

#endif /* _RDS_ZC_IB_PROTO_H */
