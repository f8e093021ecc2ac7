// SPDX-License-Identifier: GPL-2.0
/*
 * The private data of connection requests and replies (rds_zc-wire.rst
 * section 2): its two forms, ours, the version we answer a request with
 * and the one a reply chose, and which requests are taken at all by the
 * addresses they name.  ib_cm.c sends and reads it.
 */
#include <linux/in.h>
#include <linux/netdevice.h>
#include <linux/rcupdate.h>
#include <linux/string.h>
#include <net/addrconf.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/route.h>
#include <rdma/rdma_cm.h>

#include "addr.h"
#include "ib.h"
#include "ib_cm.h"
#include "transport.h"

/* The size of the form for a connection between such addresses. */
static u8 rds_ib_priv_size(bool v6)
{
	return v6 ? sizeof(struct rds_ib_priv6) : sizeof(struct rds_ib_priv);
}

/*
 * The common part of private data @p of @len bytes in the form of @v6,
 * and its addresses if @saddr; NULL if it is shorter than that form.
 */
const struct rds_ib_priv_cmn *
rds_ib_priv_parse(const union rds_ib_privs *p, u8 len, bool v6,
		  struct in6_addr *saddr, struct in6_addr *daddr)
{
	if (!p || len < rds_ib_priv_size(v6))
		return NULL;
	if (v6) {
		if (saddr) {
			*saddr = p->v6.saddr;
			*daddr = p->v6.daddr;
		}
		return &p->v6.cmn;
	}
	if (saddr) {
		rds_addr_set_v4(saddr, p->v4.saddr);
		rds_addr_set_v4(daddr, p->v4.daddr);
	}
	return &p->v4.cmn;
}

/* Our private data, in the form of the connection; return its size. */
u8 rds_ib_fill_priv(struct rds_ib_conn *ic, union rds_ib_privs *p,
		    u16 version)
{
	const struct rds_conn *conn = ic->conn;
	struct rds_ib_priv_cmn *cmn;
	bool v6 = !rds_addr_is_v4(&conn->laddr);

	memset(p, 0, sizeof(*p));
	if (v6) {
		p->v6.saddr = conn->laddr;
		p->v6.daddr = conn->faddr;
		cmn = &p->v6.cmn;
	} else {
		p->v4.saddr = rds_addr_v4(&conn->laddr);
		p->v4.daddr = rds_addr_v4(&conn->faddr);
		cmn = &p->v4.cmn;
	}
	cmn->major = version >> 8;
	cmn->minor = version & 0xff;
	cmn->minor_mask = cpu_to_be16(RDS_IB_MINOR_MASK);
	cmn->tos = conn->tos;
	/* The whole posted receive ring, if we do flow control (6.1). */
	cmn->credit = cpu_to_be32(rds_ib_credit_offer(ic));
	/* ack_seq stays 0, as the distribution sends it (2.3). */
	return rds_ib_priv_size(v6);
}

/* ESTABLISHED on the active side: check the version the peer chose. */
int rds_ib_check_rep(struct rds_ib_conn *ic,
		     const struct rdma_cm_event *event)
{
	const struct rds_ib_priv_cmn *p;
	u16 version;

	p = rds_ib_priv_parse(event->param.conn.private_data,
			      event->param.conn.private_data_len,
			      !rds_addr_is_v4(&ic->conn->laddr), NULL, NULL);
	if (!p || !p->major) {
		ic->version = RDS_IB_VERSION(4, 1);
		return 0;
	}
	version = RDS_IB_VERSION(p->major, p->minor);
	if (version < RDS_IB_VERSION_3_1)
		return -EPROTO;
	ic->version = version;
	if (p->ack_seq)
		rds_zc_conn_acked(ic->conn, be64_to_cpu(p->ack_seq));
	rds_ib_credit_start(ic, be32_to_cpu(p->credit));
	return 0;
}

/*
 * Which version to answer a request with (section 2.2): 3.1 for 3.1,
 * 4.n for a 4.x mask we share, 4.0 for a request without a version; 0
 * to refuse.  @p is the common part of the request's private data of
 * @len bytes, NULL when it is shorter than its form.
 */
u16 rds_ib_req_version(const struct rds_ib_priv_cmn *p, u8 len)
{
	u16 mask;

	if (!len)
		return 0;
	if (!p || !p->major)
		return RDS_IB_VERSION(4, 0);
	mask = be16_to_cpu(p->minor_mask) & RDS_IB_MINOR_MASK;
	if (p->major == 4 && mask)
		return RDS_IB_VERSION(4, fls(mask) - 1);
	if (p->major == 3 && p->minor == 1)
		return RDS_IB_VERSION_3_1;
	return 0;
}

/*
 * The interface that has local IPv6 address @addr, 0 if none.  Two
 * interfaces with one link-local address are not told apart: rdma_cm
 * does not say which one a request came in on.
 */
static u32 rds_ib_addr_ifindex(const struct in6_addr *addr)
{
	struct net_device *dev;
	u32 ifindex = 0;

	rcu_read_lock();
	for_each_netdev_rcu(&init_net, dev) {
		if (ipv6_chk_addr(&init_net, addr, dev, 1)) {
			ifindex = dev->ifindex;
			break;
		}
	}
	rcu_read_unlock();
	return ifindex;
}

/*
 * A request's private data names the two RDS addresses of the connection
 * it is for; rdma_cm reports the IP addresses the request came from and
 * went to, checked against the routes of the device it arrived on.  Only
 * a request whose private data agrees with them is taken, to one of our
 * addresses and from a remote unicast address, or from another address
 * of this host (*@self: the caller must then find that it is ours, with
 * rds_ib_req_from_self()): anything else would let a host on the fabric
 * reach loopback-bound sockets, pose as this host or as a third one, or
 * rewrite a congestion map it does not own.  Loopback addresses never
 * take the IB transport.
 */
bool rds_ib_req_addrs_ok(const struct rdma_cm_id *id,
			 const struct in6_addr *saddr,
			 const struct in6_addr *daddr, u32 *dev_if,
			 bool *self)
{
	struct in6_addr to, from;
	__be16 port;
	u32 scope;

	*self = false;
	if (rds_addr_parse(&id->route.addr.src_addr,
			   sizeof(id->route.addr.src_addr), -EINVAL, &to,
			   &port, &scope) ||
	    rds_addr_parse(&id->route.addr.dst_addr,
			   sizeof(id->route.addr.dst_addr), -EINVAL, &from,
			   &port, &scope) ||
	    !ipv6_addr_equal(daddr, &to) || !ipv6_addr_equal(saddr, &from) ||
	    ipv6_addr_equal(saddr, daddr))
		return false;
	if (rds_addr_is_v4(daddr)) {
		unsigned int stype;

		*dev_if = 0;
		if (ipv4_is_loopback(rds_addr_v4(saddr)) ||
		    ipv4_is_loopback(rds_addr_v4(daddr)) ||
		    inet_addr_type(&init_net, rds_addr_v4(daddr)) != RTN_LOCAL)
			return false;
		stype = inet_addr_type(&init_net, rds_addr_v4(saddr));
		*self = stype == RTN_LOCAL;
		return stype == RTN_UNICAST || *self;
	}
	if (!(ipv6_addr_type(saddr) & IPV6_ADDR_UNICAST) ||
	    !(ipv6_addr_type(daddr) & IPV6_ADDR_UNICAST) ||
	    ipv6_addr_loopback(saddr) || ipv6_addr_loopback(daddr))
		return false;
	*self = ipv6_chk_addr(&init_net, saddr, NULL, 0);
	/* A link-local pair lives on the link of our address (addr.h). */
	*dev_if = rds_ib_addr_ifindex(daddr);
	if (!*dev_if)
		return false;
	if (!rds_addr_link_local(daddr) && !rds_addr_link_local(saddr))
		*dev_if = 0;
	return true;
}

/**
 * rds_ib_req_gid_ok() - whether a request's source GID is its address's
 * @id: the id of the request
 * @saddr: the source address its private data and rdma_cm's header name
 *
 * The connection's QP sends everything to the GID the request names as
 * its sender's port (rdma_cm's path record for the request, built from
 * the CM REQ), wherever the request itself came from.  On RoCE that GID
 * is an IP address (IPv4-mapped for IPv4, RoCE v1 and v2 alike): it must
 * be @saddr, else a host could claim another's address with its own
 * GID, and take the other's messages (or send ours to a third host).
 * With it equal, what we send goes to @saddr on the wire: a host that
 * claims an address receives only if it owns that address there.
 *
 * On InfiniBand the GID is the port's, assigned by the subnet manager
 * and unrelated to the IP address; only IPoIB's neighbour entry of
 * @saddr (its hardware address holds the GID) could vouch for it, and
 * this is not checked (rds_zc-threat-model.rst).
 *
 * Context: the rdma_cm handler of the listener.
 * Return: false if the request's source GID is not @saddr's (RoCE only).
 */
bool rds_ib_req_gid_ok(const struct rdma_cm_id *id,
		       const struct in6_addr *saddr)
{
	const struct sa_path_rec *path = id->route.path_rec;

	if (!rdma_protocol_roce(id->device, id->port_num))
		return true;
	return path && !memcmp(path->dgid.raw, saddr->s6_addr,
			       sizeof(path->dgid.raw));
}
