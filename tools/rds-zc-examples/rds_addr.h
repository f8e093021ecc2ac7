/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rds_addr.h - the addresses of the example programs: IPv4 ("10.0.0.1"),
 * IPv6 ("fd00::1"), or IPv6 link-local with its interface, by name or
 * index ("fe80::1%eth0", "fe80::1%2"), which RDS needs as sin6_scope_id.
 */
#ifndef RDS_ADDR_H
#define RDS_ADDR_H

#include <arpa/inet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* An address and port of either family, as bind() and sendto() take. */
union rds_addr {
	struct sockaddr sa;
	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;
};

/* "[address%interface]:port" at most, with its NUL. */
#define RDS_ADDR_STRLEN	(INET6_ADDRSTRLEN + IF_NAMESIZE + 9)

static inline socklen_t rds_addr_len(const union rds_addr *a)
{
	return a->sa.sa_family == AF_INET6 ? sizeof(a->sin6) : sizeof(a->sin);
}

/* The interface of "%eth0" or "%2"; 0 if there is none such. */
static inline unsigned int rds_scope_of(const char *name)
{
	unsigned long index = if_nametoindex(name);
	char *end;

	if (index)
		return index;
	index = strtoul(name, &end, 10);
	return *name && !*end && index <= 0xffffffffUL ? index : 0;
}

/* @host and @port as an address; exits with status 2 if @host is none. */
static inline union rds_addr rds_addr_of(const char *host, const char *port)
{
	const char *scope = strchr(host, '%');
	size_t len = scope ? (size_t)(scope - host) : strlen(host);
	char ip[INET6_ADDRSTRLEN];
	unsigned int index = 0;
	union rds_addr a;

	memset(&a, 0, sizeof(a));
	if (inet_pton(AF_INET, host, &a.sin.sin_addr) == 1) {
		a.sin.sin_family = AF_INET;
		a.sin.sin_port = htons(atoi(port));
		return a;
	}
	if (len < sizeof(ip)) {
		memcpy(ip, host, len);
		ip[len] = '\0';
	}
	if (scope)
		index = rds_scope_of(scope + 1);
	if (len >= sizeof(ip) ||
	    inet_pton(AF_INET6, ip, &a.sin6.sin6_addr) != 1 ||
	    (scope && !index)) {
		fprintf(stderr, "not an IPv4 or IPv6 address: %s\n", host);
		exit(2);
	}
	a.sin6.sin6_family = AF_INET6;
	a.sin6.sin6_port = htons(atoi(port));
	a.sin6.sin6_scope_id = index;
	return a;
}

/* "address:port" of @a in @buf, "[address%interface]:port" for IPv6. */
static inline const char *rds_addr_str(const union rds_addr *a,
				       char buf[RDS_ADDR_STRLEN])
{
	char ip[INET6_ADDRSTRLEN], ifname[IF_NAMESIZE];
	unsigned int scope;

	if (a->sa.sa_family != AF_INET6) {
		inet_ntop(AF_INET, &a->sin.sin_addr, ip, sizeof(ip));
		snprintf(buf, RDS_ADDR_STRLEN, "%s:%u", ip,
			 ntohs(a->sin.sin_port));
		return buf;
	}
	inet_ntop(AF_INET6, &a->sin6.sin6_addr, ip, sizeof(ip));
	scope = a->sin6.sin6_scope_id;
	if (!scope)
		snprintf(buf, RDS_ADDR_STRLEN, "[%s]:%u", ip,
			 ntohs(a->sin6.sin6_port));
	else if (if_indextoname(scope, ifname))
		snprintf(buf, RDS_ADDR_STRLEN, "[%s%%%s]:%u", ip, ifname,
			 ntohs(a->sin6.sin6_port));
	else
		snprintf(buf, RDS_ADDR_STRLEN, "[%s%%%u]:%u", ip, scope,
			 ntohs(a->sin6.sin6_port));
	return buf;
}

#endif /* RDS_ADDR_H */
