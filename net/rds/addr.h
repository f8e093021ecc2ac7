/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Addresses as applications give them: a struct sockaddr_in, or a struct
 * sockaddr_in6 that holds an IPv4-mapped address (::ffff:a.b.c.d), which
 * the distribution's RDS takes wherever it takes an address and treats as
 * the IPv4 address.  Other IPv6 addresses are not carried.
 */
#ifndef _RDS_ZC_ADDR_H
#define _RDS_ZC_ADDR_H

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/stddef.h>
#include <net/ipv6.h>

/**
 * rds_addr_parse() - the IPv4 address and port a user's sockaddr names
 * @uaddr: the sockaddr, in kernel memory
 * @len: its length
 * @bad_family: the error for a family other than AF_INET and AF_INET6
 * @addr: the address, on success
 * @port: the port, on success
 *
 * Return: 0; -EINVAL for a length short of the family's sockaddr;
 * -EAFNOSUPPORT for an IPv6 address that is not IPv4-mapped; @bad_family.
 */
static inline int rds_addr_parse(const void *uaddr, size_t len,
				 int bad_family, __be32 *addr, __be16 *port)
{
	const struct sockaddr_in6 *sin6 = uaddr;
	const struct sockaddr_in *sin = uaddr;

	if (len < offsetofend(struct sockaddr, sa_family))
		return -EINVAL;
	switch (sin->sin_family) {
	case AF_INET:
		if (len < sizeof(*sin))
			return -EINVAL;
		*addr = sin->sin_addr.s_addr;
		*port = sin->sin_port;
		return 0;
	case AF_INET6:
		if (len < sizeof(*sin6))
			return -EINVAL;
		if (!ipv6_addr_v4mapped(&sin6->sin6_addr))
			return -EAFNOSUPPORT;
		*addr = sin6->sin6_addr.s6_addr32[3];
		*port = sin6->sin6_port;
		return 0;
	default:
		return bad_family;
	}
}

#endif /* _RDS_ZC_ADDR_H */
