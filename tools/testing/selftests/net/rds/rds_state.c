// SPDX-License-Identifier: GPL-2.0
/*
 * rds_state - print what the loaded RDS says about itself, as TAP
 * diagnostics, for a test that failed and wants to say why: the counters
 * that are not zero (RDS_INFO_COUNTERS, the transport's included) and one
 * line per connection (RDS_INFO_CONNECTIONS).  Works with our modules and
 * with the distribution's.
 *
 *   rds_state [PREFIX]	only the counters whose name starts with PREFIX
 *
 * Exit status 0, or 1 when there is no RDS socket family to ask.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/rds.h>

#include "rds_info_util.h"

#ifndef AF_RDS
#define AF_RDS 21
#endif

static void print_counters(int fd, const char *prefix)
{
	struct rds_info_counter *c;
	socklen_t len;
	size_t i;

	if (rds_info_read(fd, RDS_INFO_COUNTERS, (void **)&c, &len) < 0) {
		printf("# RDS_INFO_COUNTERS: %s\n", strerror(errno));
		free(c);
		return;
	}
	for (i = 0; c && i < len / sizeof(*c); i++) {
		c[i].name[sizeof(c[i].name) - 1] = '\0';
		if (!c[i].value ||
		    strncmp((char *)c[i].name, prefix, strlen(prefix)))
			continue;
		printf("# counter %s %llu\n", (char *)c[i].name,
		       (unsigned long long)c[i].value);
	}
	free(c);
}

static void print_connections(int fd)
{
	struct rds_info_connection *ci;
	char l[INET_ADDRSTRLEN], f[INET_ADDRSTRLEN];
	socklen_t len;
	size_t i, n;

	if (rds_info_read(fd, RDS_INFO_CONNECTIONS, (void **)&ci, &len) < 0) {
		printf("# RDS_INFO_CONNECTIONS: %s\n", strerror(errno));
		free(ci);
		return;
	}
	n = ci ? len / sizeof(*ci) : 0;
	if (!n)
		printf("# no connection\n");
	for (i = 0; i < n; i++) {
		ci[i].transport[sizeof(ci[i].transport) - 1] = '\0';
		inet_ntop(AF_INET, &ci[i].laddr, l, sizeof(l));
		inet_ntop(AF_INET, &ci[i].faddr, f, sizeof(f));
		printf("# connection %s -> %s tos %u %s:%s%s%s next_tx_seq %llu next_rx_seq %llu\n",
		       l, f, ci[i].tos, (char *)ci[i].transport,
		       ci[i].flags & RDS_INFO_CONNECTION_FLAG_SENDING ?
		       " sending" : "",
		       ci[i].flags & RDS_INFO_CONNECTION_FLAG_CONNECTING ?
		       " connecting" : "",
		       ci[i].flags & RDS_INFO_CONNECTION_FLAG_CONNECTED ?
		       " connected" : "",
		       (unsigned long long)ci[i].next_tx_seq,
		       (unsigned long long)ci[i].next_rx_seq);
	}
	free(ci);
}

int main(int argc, char **argv)
{
	int fd = socket(AF_RDS, SOCK_SEQPACKET, 0);

	if (fd < 0) {
		printf("# no RDS socket: %s\n", strerror(errno));
		return 1;
	}
	print_connections(fd);
	print_counters(fd, argc > 1 ? argv[1] : "");
	close(fd);
	return 0;
}
