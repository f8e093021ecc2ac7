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
 * Exit status 0 only if every answer came back intact.
 */
#include <arpa/inet.h>
#include <errno.h>
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

static int rds_socket(const char *addr, const char *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int fd, size = 4 << 20;

	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (fd < 0) {
		perror("socket(AF_RDS)");
		exit(1);
	}
	/* Room for large datagrams: a message may use half the buffer. */
	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size));
	sin.sin_port = htons(atoi(port));
	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		fprintf(stderr, "bind %s:%s: %s\n", addr, port, strerror(errno));
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
	int fd = rds_socket(argv[0], argv[1]);
	int count = atoi(argv[2]), i;

	printf("server: bound to %s:%s, waiting for %d datagrams\n",
	       argv[0], argv[1], count);
	fflush(stdout);
	for (i = 0; i < count; i++) {
		struct sockaddr_in from;
		socklen_t fromlen = sizeof(from);
		ssize_t n;

		n = recvfrom(fd, buf, sizeof(buf), 0,
			     (struct sockaddr *)&from, &fromlen);
		if (n < 0) {
			perror("server: recvfrom");
			return 1;
		}
		reverse(buf, n);
		if (sendto(fd, buf, n, 0, (struct sockaddr *)&from,
			   fromlen) != n) {
			perror("server: sendto");
			return 1;
		}
	}
	printf("server: answered %d datagrams\n", count);
	return 0;
}

static int ask(char **argv)
{
	int fd = rds_socket(argv[0], argv[1]);
	struct sockaddr_in peer = { .sin_family = AF_INET };
	int count = atoi(argv[4]), i, bad = 0;
	size_t size = strtoul(argv[5], NULL, 0);
	unsigned char *out = malloc(size + 1), *in = malloc(size + 1);
	struct timespec t0, t1;
	double secs;

	peer.sin_port = htons(atoi(argv[3]));
	inet_pton(AF_INET, argv[2], &peer.sin_addr);
	printf("client: bound to %s:%s, sending %d datagrams of %zu bytes to %s:%s\n",
	       argv[0], argv[1], count, size, argv[2], argv[3]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < count; i++) {
		size_t j;
		ssize_t n;

		for (j = 0; j < size; j++)
			out[j] = (unsigned char)(i * 7 + j * 13);
		if (sendto(fd, out, size, 0, (struct sockaddr *)&peer,
			   sizeof(peer)) != (ssize_t)size) {
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
		"       rds_chat ask ADDR PORT PEER PEERPORT COUNT SIZE\n");
	return 2;
}
