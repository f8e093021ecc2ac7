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

#include "../../rds-zc-examples/rds_addr.h"

#ifndef AF_RDS
#define AF_RDS 21
#endif

static int rds_socket(const union rds_addr *at)
{
	char name[RDS_ADDR_STRLEN];
	int fd, size = 4 << 20;

	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (fd < 0) {
		perror("socket(AF_RDS)");
		exit(1);
	}
	/* Room for large datagrams: a message may use half the buffer. */
	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size));
	if (bind(fd, &at->sa, rds_addr_len(at))) {
		fprintf(stderr, "bind %s: %s\n",
			rds_addr_str(at, name), strerror(errno));
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
	union rds_addr self = rds_addr_of(argv[0], argv[1]);
	char name[RDS_ADDR_STRLEN];
	int fd = rds_socket(&self);
	int count = atoi(argv[2]), i;

	printf("server: bound to %s, waiting for %d datagrams\n",
	       rds_addr_str(&self, name), count);
	fflush(stdout);
	for (i = 0; i < count; i++) {
		union rds_addr from;
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
	union rds_addr self = rds_addr_of(argv[0], argv[1]);
	union rds_addr peer = rds_addr_of(argv[2], argv[3]);
	char name[RDS_ADDR_STRLEN];
	char peer_name[RDS_ADDR_STRLEN];
	int fd = rds_socket(&self);
	int count = atoi(argv[4]), i, bad = 0;
	size_t size = strtoul(argv[5], NULL, 0);
	unsigned char *out = malloc(size + 1), *in = malloc(size + 1);
	struct timespec t0, t1;
	double secs;

	printf("client: bound to %s, sending %d datagrams of %zu bytes to %s\n",
	       rds_addr_str(&self, name), count, size,
	       rds_addr_str(&peer, peer_name));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < count; i++) {
		size_t j;
		ssize_t n;

		for (j = 0; j < size; j++)
			out[j] = (unsigned char)(i * 7 + j * 13);
		if (sendto(fd, out, size, 0, &peer.sa,
			   rds_addr_len(&peer)) != (ssize_t)size) {
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
