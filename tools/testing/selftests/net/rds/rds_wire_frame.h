/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rds_wire_frame.h - RDS 3.1 over IB as a peer puts it on the wire
 * (Documentation/networking/rds_zc-wire.rst): the connect private data
 * (section 2.1), the 48-byte header of every SEND (4.1), its checksum
 * (4.4) and its extension headers (4.5).  Needs the C library only: a
 * test that speaks the protocol through verbs builds its frames here.
 *
 * Multi-byte fields are big-endian on the wire; the structures hold them
 * so, and the helpers take and give host order.
 */
#ifndef RDS_WIRE_FRAME_H
#define RDS_WIRE_FRAME_H

#include <assert.h>
#include <arpa/inet.h>
#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define RDS_WIRE_PORT		18634	/* the IPv4 listener, RDMA_PS_TCP */
#define RDS_WIRE_PORT6		16385	/* the IPv6 listener, RDMA_PS_TCP */
#define RDS_WIRE_HDR_LEN	48
#define RDS_WIRE_FRAG		4096	/* payload bytes of a full fragment */
#define RDS_WIRE_SEND_MAX	(RDS_WIRE_HDR_LEN + RDS_WIRE_FRAG)
#define RDS_WIRE_MSG_MAX	(1u << 20)
#define RDS_WIRE_CONG_BYTES	8192
#define RDS_WIRE_EXT_SPACE	16

/* h_flags (4.3) */
#define RDS_WIRE_F_CONG		0x01	/* exactly this value: a map */
#define RDS_WIRE_F_ACK_REQ	0x02
#define RDS_WIRE_F_RETRANS	0x04

/* Extension types (4.5) and their payload sizes. */
#define RDS_WIRE_EXT_NONE	0
#define RDS_WIRE_EXT_VERSION	1	/* 4 bytes */
#define RDS_WIRE_EXT_RDMA	2	/* be32 rkey */
#define RDS_WIRE_EXT_RDMA_DEST	3	/* be32 rkey, be32 offset */
#define RDS_WIRE_EXT_NPATHS	5	/* 2 bytes, TCP only */
#define RDS_WIRE_EXT_GEN_NUM	6	/* 4 bytes, TCP only */

/* What both forms of the connect private data (2.1) end with. */
struct rds_wire_priv_cmn {
	uint8_t major;
	uint8_t minor;
	uint16_t minor_mask;	/* big-endian */
	uint8_t tos;
	uint8_t reserved0;
	uint16_t reserved1;
	uint64_t ack_seq;	/* big-endian */
	uint32_t credit;	/* big-endian */
	uint32_t padding;
};

/* The IPv4 form, 32 bytes, not packed. */
struct rds_wire_priv {
	uint32_t saddr;		/* network order, as the addresses */
	uint32_t daddr;
	struct rds_wire_priv_cmn c;
};

static_assert(sizeof(struct rds_wire_priv) == 32, "RDS/IB private data");

/* The IPv6 form: 16-byte addresses, then the same fields. */
struct rds_wire_priv6 {
	struct in6_addr saddr;
	struct in6_addr daddr;
	struct rds_wire_priv_cmn c;
};

static_assert(sizeof(struct rds_wire_priv6) == 56, "RDS/IB IPv6 private data");
static_assert(offsetof(struct rds_wire_priv6, c) == 32, "IPv6 dp_cmn");

/* The message header (4.1). */
struct rds_wire_hdr {
	uint64_t seq;		/* big-endian */
	uint64_t ack;		/* big-endian */
	uint32_t len;		/* big-endian: the whole message's payload */
	uint16_t sport;		/* big-endian */
	uint16_t dport;		/* big-endian */
	uint8_t flags;
	uint8_t credit;
	uint8_t padding[4];
	uint16_t csum;		/* 0: unchecked */
	uint8_t ext[RDS_WIRE_EXT_SPACE];
};

static_assert(sizeof(struct rds_wire_hdr) == RDS_WIRE_HDR_LEN, "RDS header");
static_assert(offsetof(struct rds_wire_hdr, csum) == 30, "h_csum");
static_assert(offsetof(struct rds_wire_hdr, ext) == 32, "h_exthdr");

/* Version 3.1 with @tos, @ack_seq and @credit. */
static inline void rds_wire_cmn_fill(struct rds_wire_priv_cmn *c, uint8_t tos,
				     uint64_t ack_seq, uint32_t credit)
{
	memset(c, 0, sizeof(*c));
	c->major = 3;
	c->minor = 1;
	c->minor_mask = htons(0x0003);
	c->tos = tos;
	c->ack_seq = htobe64(ack_seq);
	c->credit = htonl(credit);
}

/*
 * Private data from this host (@from) to @to (both network order), RDS
 * 3.1 with mask 0x0003, the given TOS, ACK and credit (host order).
 */
static inline void rds_wire_priv_fill(struct rds_wire_priv *p, uint32_t from,
				      uint32_t to, uint8_t tos,
				      uint64_t ack_seq, uint32_t credit)
{
	p->saddr = from;
	p->daddr = to;
	rds_wire_cmn_fill(&p->c, tos, ack_seq, credit);
}

/* The IPv6 form of rds_wire_priv_fill(): no ACK, no credit. */
static inline void rds_wire_priv6_fill(struct rds_wire_priv6 *p,
				       const struct in6_addr *from,
				       const struct in6_addr *to, uint8_t tos)
{
	p->saddr = *from;
	p->daddr = *to;
	rds_wire_cmn_fill(&p->c, tos, 0, 0);
}

/* The ones' complement sum of the header's 24 big-endian words, folded. */
static inline uint16_t rds_wire_sum(const struct rds_wire_hdr *h)
{
	const uint8_t *b = (const uint8_t *)h;
	uint32_t sum = 0;
	int i;

	for (i = 0; i < RDS_WIRE_HDR_LEN; i += 2)
		sum += (uint32_t)b[i] << 8 | b[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* Compute and store the checksum: after every change of the header. */
static inline void rds_wire_csum_set(struct rds_wire_hdr *h)
{
	h->csum = 0;
	h->csum = htons((uint16_t)~rds_wire_sum(h));
}

/* What a receiver accepts: no checksum, or one that sums to all ones. */
static inline int rds_wire_csum_ok(const struct rds_wire_hdr *h)
{
	return !h->csum || rds_wire_sum(h) == 0xffff;
}

/*
 * A header without extensions and with checksum 0 (call
 * rds_wire_csum_set() once it is complete).  Ports in host order.
 */
static inline void rds_wire_hdr_init(struct rds_wire_hdr *h, uint64_t seq,
				     uint64_t ack, uint32_t len,
				     uint16_t sport, uint16_t dport,
				     uint8_t flags)
{
	memset(h, 0, sizeof(*h));
	h->seq = htobe64(seq);
	h->ack = htobe64(ack);
	h->len = htonl(len);
	h->sport = htons(sport);
	h->dport = htons(dport);
	h->flags = flags;
}

/* An ACK frame (5.3): ports 0/0, no payload, the ACK in h_ack. */
static inline void rds_wire_ack_init(struct rds_wire_hdr *h, uint64_t ack,
				     uint8_t credit)
{
	rds_wire_hdr_init(h, 0, ack, 0, 0, 0, 0);
	h->credit = credit;
	rds_wire_csum_set(h);
}

static inline void rds_wire_put32(uint8_t *p, uint32_t v)
{
	uint32_t be = htonl(v);

	memcpy(p, &be, sizeof(be));
}

/*
 * Append extension @type with @len payload bytes at byte @pos of h_exthdr
 * (truncated if it does not fit, as a hostile peer may send it).
 * Return: the position after it.
 */
static inline unsigned int rds_wire_ext_put(struct rds_wire_hdr *h,
					    unsigned int pos, uint8_t type,
					    const void *payload,
					    unsigned int len)
{
	unsigned int room;

	if (pos >= RDS_WIRE_EXT_SPACE)
		return pos;
	h->ext[pos++] = type;
	room = RDS_WIRE_EXT_SPACE - pos;
	if (len > room)
		len = room;
	memcpy(h->ext + pos, payload, len);
	return pos + len;
}

/* An RDMA_DEST extension (a cookie: rkey low 32 bits, offset high 32). */
static inline unsigned int rds_wire_ext_dest(struct rds_wire_hdr *h,
					     unsigned int pos, uint64_t cookie)
{
	uint8_t p[8];

	rds_wire_put32(p, (uint32_t)cookie);
	rds_wire_put32(p + 4, (uint32_t)(cookie >> 32));
	return rds_wire_ext_put(h, pos, RDS_WIRE_EXT_RDMA_DEST, p, sizeof(p));
}

/* An RDMA extension: "an RDMA to your MR with this rkey has been done". */
static inline unsigned int rds_wire_ext_rdma(struct rds_wire_hdr *h,
					     unsigned int pos, uint32_t rkey)
{
	uint8_t p[4];

	rds_wire_put32(p, rkey);
	return rds_wire_ext_put(h, pos, RDS_WIRE_EXT_RDMA, p, sizeof(p));
}

#endif /* RDS_WIRE_FRAME_H */
