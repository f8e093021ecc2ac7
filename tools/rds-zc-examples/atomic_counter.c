// SPDX-License-Identifier: GPL-2.0
/*
 * atomic_counter - a counter that clients on other hosts increment with
 * RDS remote atomics.
 *
 *   atomic_counter serve ADDR PORT
 *	registers an 8-byte counter (RDS_GET_MR) and answers every message
 *	with the counter's cookie; prints the counter on each request.
 *   atomic_counter add ADDR PORT SERVER SERVER_PORT N
 *	asks the server for the cookie, then adds 1 to the counter N times
 *	with RDS_CMSG_ATOMIC_FADD, waiting for each notification, and
 *	prints the value the last add saw.
 *
 * ADDR is an address of this host on an RDMA device, IPv4 or IPv6
 * (rds_addr.h), SERVER one of the same family.  Every prior value
 * a client sees is unique across all clients: the adds are atomic at the
 * server's HCA, and the server's CPU takes no part in them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/rds.h>

#include "rds_addr.h"

#ifndef AF_RDS
#define AF_RDS 21
#endif

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static int rds_socket_at(const union rds_addr *at)
{
	int fd = socket(AF_RDS, SOCK_SEQPACKET, 0);

	if (fd < 0)
		die("socket(AF_RDS)");
	if (bind(fd, &at->sa, rds_addr_len(at)))
		die("bind");
	return fd;
}

static void __attribute__((noreturn)) serve(const union rds_addr *self)
{
	static volatile uint64_t counter __attribute__((aligned(8)));
	int fd = rds_socket_at(self);
	struct rds_get_mr_args mr = {
		.vec = { (uintptr_t)&counter, sizeof(counter) },
	};
	uint64_t cookie = 0;

	mr.cookie_addr = (uintptr_t)&cookie;
	if (setsockopt(fd, SOL_RDS, RDS_GET_MR, &mr, sizeof(mr)))
		die("RDS_GET_MR");
	for (;;) {
		union rds_addr from;
		socklen_t len = sizeof(from);
		char buf[16];

		if (recvfrom(fd, buf, sizeof(buf), 0, &from.sa, &len) < 0)
			die("recvfrom");
		printf("counter %llu\n", (unsigned long long)counter);
		fflush(stdout);
		if (sendto(fd, &cookie, sizeof(cookie), 0, &from.sa, len) < 0)
			perror("sendto");
	}
}

/* Add 1 to the counter; the value it had. */
static uint64_t add_one(int fd, union rds_addr *server, uint64_t cookie,
			uint64_t token)
{
	static uint64_t prior __attribute__((aligned(8)));
	struct rds_atomic_args args = {
		.cookie = cookie,
		.local_addr = (uintptr_t)&prior,
		.remote_addr = 0,	/* offset in the MR */
		.fadd.add = 1,
		/* silent: no message goes with it, only the notification */
		.flags = RDS_RDMA_NOTIFY_ME | RDS_RDMA_SILENT,
		.user_token = token,
	};
	union {
		char buf[CMSG_SPACE(sizeof(args))];
		struct cmsghdr align;
	} ctl;
	struct msghdr msg = {
		.msg_name = server,
		.msg_namelen = rds_addr_len(server),
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	struct rds_rdma_notify note;

	c->cmsg_level = SOL_RDS;
	c->cmsg_type = RDS_CMSG_ATOMIC_FADD;
	c->cmsg_len = CMSG_LEN(sizeof(args));
	memcpy(CMSG_DATA(c), &args, sizeof(args));
	if (sendmsg(fd, &msg, 0) < 0)
		die("sendmsg(RDS_CMSG_ATOMIC_FADD)");

	/* The notification: an empty message with RDS_CMSG_RDMA_STATUS. */
	memset(&msg, 0, sizeof(msg));
	msg.msg_control = ctl.buf;
	msg.msg_controllen = sizeof(ctl.buf);
	if (recvmsg(fd, &msg, 0) < 0)
		die("recvmsg");
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_RDS || c->cmsg_type != RDS_CMSG_RDMA_STATUS)
			continue;
		memcpy(&note, CMSG_DATA(c), sizeof(note));
		if (note.user_token != token || note.status != RDS_RDMA_SUCCESS) {
			fprintf(stderr, "add %llu: status %d\n",
				(unsigned long long)token, note.status);
			exit(1);
		}
		return prior;
	}
	fprintf(stderr, "recvmsg: no notification\n");
	exit(1);
}

int main(int argc, char **argv)
{
	union rds_addr self, server;
	uint64_t cookie, prior = 0;
	long i, n;
	int fd;

	if (argc == 4 && !strcmp(argv[1], "serve")) {
		self = rds_addr_of(argv[2], argv[3]);
		serve(&self);
	}
	if (argc != 7 || strcmp(argv[1], "add")) {
		fprintf(stderr, "usage: %s serve ADDR PORT\n"
			"       %s add ADDR PORT SERVER SERVER_PORT N\n"
			"ADDR, SERVER: IPv4 or IPv6, link-local as fe80::1%%eth0\n",
			argv[0], argv[0]);
		return 2;
	}
	self = rds_addr_of(argv[2], argv[3]);
	server = rds_addr_of(argv[4], argv[5]);
	n = atol(argv[6]);
	fd = rds_socket_at(&self);
	if (sendto(fd, "cookie?", 8, 0, &server.sa, rds_addr_len(&server)) < 0)
		die("sendto");
	if (recv(fd, &cookie, sizeof(cookie), 0) != sizeof(cookie))
		die("recv cookie");
	for (i = 0; i < n; i++)
		prior = add_one(fd, &server, cookie, i + 1);
	printf("%ld adds, the last saw %llu\n", n, (unsigned long long)prior);
	return 0;
}
