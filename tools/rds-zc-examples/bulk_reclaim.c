// SPDX-License-Identifier: GPL-2.0
/*
 * bulk_reclaim - a server streams RDMA WRITEs from a ring of buffers and
 * reuses each buffer once a barrier says its WRITE is done: no
 * notification per operation (RDS_CMSG_OP_ID, RDS_OP_BARRIER).
 *
 *   bulk_reclaim serve ADDR PORT
 *	waits for a request that carries a client's buffer
 *	(RDS_CMSG_RDMA_MAP), fills it with WRITEs of 4 KiB, page k holding
 *	the byte k, from a ring of 4 buffers, then answers "done" and
 *	prints "served PAGES pages to CLIENT"; it serves until stopped.
 *   bulk_reclaim fetch ADDR PORT SERVER SERVER_PORT PAGES
 *	asks for PAGES pages (at most 256) and checks them.
 *
 * ADDR and SERVER are IPv4 or IPv6 addresses (rds_addr.h).
 *
 * These are this implementation's own calls: the distribution's module
 * refuses RDS_CMSG_OP_ID and RDS_OP_BARRIER.
 */
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

#define CHUNK	4096
#define RING	4

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static int rds_socket_at(const char *ip, const char *port)
{
	union rds_addr at = rds_addr_of(ip, port);
	int fd = socket(AF_RDS, SOCK_SEQPACKET, 0);

	if (fd < 0)
		die("socket(AF_RDS)");
	if (bind(fd, &at.sa, rds_addr_len(&at)))
		die("bind");
	return fd;
}

/* Wait until every operation towards @to up to @id is done. */
static void barrier(int fd, const union rds_addr *to, uint64_t id)
{
	struct rds_op_barrier b = { .wait_id = id };
	socklen_t len = sizeof(b);

	memcpy(&b.dest, to, rds_addr_len(to));
	if (getsockopt(fd, SOL_RDS, RDS_OP_BARRIER, &b, &len))
		die("RDS_OP_BARRIER");
}

/* A silent RDMA WRITE of one chunk; the operation's id. */
static uint64_t write_chunk(int fd, const union rds_addr *to,
			    uint64_t cookie, unsigned int k, void *chunk)
{
	struct rds_iovec iov = { (uintptr_t)chunk, CHUNK };
	struct rds_rdma_args args = {
		.cookie = cookie,
		.remote_vec = { (uint64_t)k * CHUNK, CHUNK },
		.local_vec_addr = (uintptr_t)&iov,
		.nr_local = 1,
		.flags = RDS_RDMA_READWRITE | RDS_RDMA_SILENT,
	};
	uint64_t id = 0, where = (uintptr_t)&id;
	union {
		char buf[CMSG_SPACE(sizeof(args)) + CMSG_SPACE(sizeof(where))];
		struct cmsghdr align;
	} ctl;
	struct msghdr msg = {
		.msg_name = (void *)to,
		.msg_namelen = rds_addr_len(to),
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	memset(&ctl, 0, sizeof(ctl));
	c->cmsg_level = SOL_RDS;
	c->cmsg_type = RDS_CMSG_RDMA_ARGS;
	c->cmsg_len = CMSG_LEN(sizeof(args));
	memcpy(CMSG_DATA(c), &args, sizeof(args));
	c = CMSG_NXTHDR(&msg, c);
	c->cmsg_level = SOL_RDS;
	c->cmsg_type = RDS_CMSG_OP_ID;
	c->cmsg_len = CMSG_LEN(sizeof(where));
	memcpy(CMSG_DATA(c), &where, sizeof(where));
	if (sendmsg(fd, &msg, 0) < 0)
		die("sendmsg(RDS_CMSG_RDMA_ARGS)");
	return id;
}

static void __attribute__((noreturn)) serve(int fd)
{
	static char ring[RING][CHUNK];
	char who[RDS_ADDR_STRLEN];
	uint64_t ids[RING];

	for (;;) {
		union {
			char buf[CMSG_SPACE(sizeof(uint64_t))];
			struct cmsghdr align;
		} ctl;
		union rds_addr from;
		struct iovec iov;
		struct msghdr msg = {
			.msg_name = &from, .msg_namelen = sizeof(from),
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
		};
		struct cmsghdr *c;
		uint64_t cookie = 0;
		uint32_t pages = 0;
		unsigned int k;

		iov.iov_base = &pages;
		iov.iov_len = sizeof(pages);
		if (recvmsg(fd, &msg, 0) < 0)
			die("recvmsg");
		for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
			if (c->cmsg_level == SOL_RDS &&
			    c->cmsg_type == RDS_CMSG_RDMA_DEST)
				memcpy(&cookie, CMSG_DATA(c), sizeof(cookie));
		if (!cookie)
			continue;	/* not a request */
		for (k = 0; k < pages; k++) {
			/* The ring's slot is free once its last WRITE is. */
			if (k >= RING)
				barrier(fd, &from, ids[k % RING]);
			memset(ring[k % RING], k & 0xff, CHUNK);
			ids[k % RING] = write_chunk(fd, &from, cookie, k,
						    ring[k % RING]);
		}
		/* The answer follows the WRITEs on the same connection. */
		if (sendto(fd, "done", 4, 0, &from.sa, rds_addr_len(&from)) < 0) {
			perror("sendto");
			continue;
		}
		printf("served %u pages to %s\n", pages, rds_addr_str(&from, who));
		fflush(stdout);
	}
}

static int fetch(int fd, const char *ip, const char *port, uint32_t pages)
{
	union rds_addr server = rds_addr_of(ip, port);
	static char buf[256 * CHUNK] __attribute__((aligned(CHUNK)));
	uint64_t cookie = 0;
	struct rds_get_mr_args map = {
		.vec = { (uintptr_t)buf, (uint64_t)pages * CHUNK },
		.cookie_addr = (uintptr_t)&cookie,
	};
	union {
		char buf[CMSG_SPACE(sizeof(map))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { &pages, sizeof(pages) };
	struct msghdr msg = {
		.msg_name = &server, .msg_namelen = rds_addr_len(&server),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	struct rds_free_mr_args unmap = { 0 };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	char answer[8];
	uint32_t k;

	if (!pages || pages > 256) {
		fprintf(stderr, "bad page count\n");
		return 2;
	}
	memset(&ctl, 0, sizeof(ctl));
	c->cmsg_level = SOL_RDS;
	c->cmsg_type = RDS_CMSG_RDMA_MAP;
	c->cmsg_len = CMSG_LEN(sizeof(map));
	memcpy(CMSG_DATA(c), &map, sizeof(map));
	if (sendmsg(fd, &msg, 0) < 0)
		die("sendmsg(RDS_CMSG_RDMA_MAP)");
	if (recv(fd, answer, sizeof(answer), 0) < 0)
		die("recv");
	for (k = 0; k < pages * CHUNK; k++)
		if (buf[k] != (char)(k / CHUNK)) {
			fprintf(stderr, "byte %u is %d\n", k, buf[k]);
			return 1;
		}
	unmap.cookie = cookie;
	if (setsockopt(fd, SOL_RDS, RDS_FREE_MR, &unmap, sizeof(unmap)))
		die("RDS_FREE_MR");
	printf("%u pages fetched\n", pages);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "serve"))
		serve(rds_socket_at(argv[2], argv[3]));
	if (argc == 7 && !strcmp(argv[1], "fetch"))
		return fetch(rds_socket_at(argv[2], argv[3]), argv[4], argv[5],
			     atoi(argv[6]));
	fprintf(stderr, "usage: %s serve ADDR PORT\n"
		"       %s fetch ADDR PORT SERVER SERVER_PORT PAGES\n"
		"ADDR, SERVER: IPv4 or IPv6, link-local as fe80::1%%eth0\n",
		argv[0], argv[0]);
	return 2;
}
