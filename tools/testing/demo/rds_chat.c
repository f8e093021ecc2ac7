// SPDX-License-Identifier: GPL-2.0
/*
 * rds_chat: the demonstration's RDS program, small enough to read.
 *
 *   rds_chat serve ADDR PORT COUNT
 *	bind ADDR:PORT, answer COUNT datagrams, each with its bytes reversed
 *   rds_chat ask ADDR PORT PEER PEERPORT COUNT SIZE
 *	bind ADDR:PORT, send COUNT datagrams of SIZE bytes to PEER:PEERPORT,
 *	check every answer byte for byte, print what happened
 *
 * ADDR and PEER are IPv4 or IPv6 addresses, a link-local one with its
 * interface: fe80::1%eth0 or fe80::1%2.
 *
 * Exit status 0 only if every answer came back intact.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <linux/rds.h>

#ifndef AF_RDS
#define AF_RDS 21
#endif

/* An address of either family, as bind() and sendto() take it. */
union addr {
	struct sockaddr sa;
	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;
};

#define ADDR_STRLEN	(INET6_ADDRSTRLEN + IF_NAMESIZE + 16)

static socklen_t addr_len(const union addr *a)
{
	return a->sa.sa_family == AF_INET6 ? sizeof(a->sin6) : sizeof(a->sin);
}

/* IPv4, or IPv6 with an optional %ifname or %index; exits if neither. */
static union addr addr_of(const char *host, const char *port)
{
	const char *pct = strchr(host, '%');
	size_t len = pct ? (size_t)(pct - host) : strlen(host);
	char ip[INET6_ADDRSTRLEN], *end = "";
	unsigned long scope = 0;
	union addr a = { 0 };

	if (inet_pton(AF_INET, host, &a.sin.sin_addr) == 1) {
		a.sin.sin_family = AF_INET;
		a.sin.sin_port = htons(atoi(port));
		return a;
	}
	if (pct) {
		scope = if_nametoindex(pct + 1);
		if (!scope)
			scope = strtoul(pct + 1, &end, 10);
	}
	snprintf(ip, sizeof(ip), "%.*s", (int)len, host);
	if (len >= sizeof(ip) || inet_pton(AF_INET6, ip, &a.sin6.sin6_addr) != 1 ||
	    (pct && (!scope || *end || scope > 0xffffffffUL))) {
		fprintf(stderr, "not an IPv4 or IPv6 address: %s\n", host);
		exit(2);
	}
	a.sin6.sin6_family = AF_INET6;
	a.sin6.sin6_port = htons(atoi(port));
	a.sin6.sin6_scope_id = scope;
	return a;
}

/* "10.0.0.1:4000", "[fd00::1]:4000" or "[fe80::1%eth0]:4000". */
static const char *addr_str(const union addr *a, char *buf, size_t size)
{
	char ip[INET6_ADDRSTRLEN], scope[IF_NAMESIZE + 12] = "";
	unsigned int id;

	if (a->sa.sa_family != AF_INET6) {
		inet_ntop(AF_INET, &a->sin.sin_addr, ip, sizeof(ip));
		snprintf(buf, size, "%s:%u", ip, ntohs(a->sin.sin_port));
		return buf;
	}
	inet_ntop(AF_INET6, &a->sin6.sin6_addr, ip, sizeof(ip));
	id = a->sin6.sin6_scope_id;
	if (id && if_indextoname(id, scope + 1))
		scope[0] = '%';
	else if (id)
		snprintf(scope, sizeof(scope), "%%%u", id);
	snprintf(buf, size, "[%s%s]:%u", ip, scope, ntohs(a->sin6.sin6_port));
	return buf;
}

static int rds_socket(const union addr *at)
{
	char name[ADDR_STRLEN];
	int fd, size = 4 << 20;

	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (fd < 0) {
		perror("socket(AF_RDS)");
		exit(1);
	}
	/* Room for large datagrams: a message may use half the buffer. */
	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size));
	if (bind(fd, &at->sa, addr_len(at))) {
		fprintf(stderr, "bind %s: %s\n",
			addr_str(at, name, sizeof(name)), strerror(errno));
		exit(1);
	}
	return fd;
}

static void reverse(unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n / 2; i++) {
		unsigned char c = p[i];

		p[i] = p[n - 1 - i];
		p[n - 1 - i] = c;
	}
}

static int serve(char **argv)
{
	static unsigned char buf[1 << 20];
	union addr self = addr_of(argv[0], argv[1]);
	char name[ADDR_STRLEN];
	int fd = rds_socket(&self);
	int count = atoi(argv[2]), i;

	printf("server: bound to %s, waiting for %d datagrams\n",
	       addr_str(&self, name, sizeof(name)), count);
	fflush(stdout);
	for (i = 0; i < count; i++) {
		union addr from;
		socklen_t fromlen = sizeof(from);
		ssize_t n;

		n = recvfrom(fd, buf, sizeof(buf), 0, &from.sa, &fromlen);
		if (n < 0) {
			perror("server: recvfrom");
			return 1;
		}
		reverse(buf, n);
		if (sendto(fd, buf, n, 0, &from.sa, fromlen) != n) {
			perror("server: sendto");
			return 1;
		}
	}
	printf("server: answered %d datagrams\n", count);
	return 0;
}

static int ask(char **argv)
{
	union addr self = addr_of(argv[0], argv[1]);
	union addr peer = addr_of(argv[2], argv[3]);
	char name[ADDR_STRLEN];
	char peer_name[ADDR_STRLEN];
	int fd = rds_socket(&self);
	int count = atoi(argv[4]), i, bad = 0;
	size_t size = strtoul(argv[5], NULL, 0);
	unsigned char *out = malloc(size + 1), *in = malloc(size + 1);
	struct timespec t0, t1;
	double secs;

	printf("client: bound to %s, sending %d datagrams of %zu bytes to %s\n",
	       addr_str(&self, name, sizeof(name)), count, size,
	       addr_str(&peer, peer_name, sizeof(peer_name)));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < count; i++) {
		size_t j;
		ssize_t n;

		for (j = 0; j < size; j++)
			out[j] = (unsigned char)(i * 7 + j * 13);
		if (sendto(fd, out, size, 0, &peer.sa,
			   addr_len(&peer)) != (ssize_t)size) {
			perror("client: sendto");
			return 1;
		}
		n = recv(fd, in, size + 1, 0);
		if (n < 0) {
			perror("client: recv");
			return 1;
		}
		reverse(in, n);
		if ((size_t)n != size || memcmp(in, out, size))
			bad++;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("client: %d answers, %d intact, %d damaged\n",
	       count, count - bad, bad);
	printf("client: %zu bytes each way in %.2f s: %.1f ms per round trip, %.2f MB/s\n",
	       size * count, secs, secs * 1000 / count,
	       2.0 * size * count / secs / 1e6);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "serve"))
		return serve(argv + 2);
	if (argc == 8 && !strcmp(argv[1], "ask"))
		return ask(argv + 2);
	fprintf(stderr,
		"usage: rds_chat serve ADDR PORT COUNT\n"
		"       rds_chat ask ADDR PORT PEER PEERPORT COUNT SIZE\n"
		"ADDR, PEER: IPv4 or IPv6, link-local as fe80::1%%eth0\n");
	return 2;
}
