// SPDX-License-Identifier: GPL-2.0
/*
 * rds_ipv6 - RDS over IPv6: struct sockaddr_in6 names, IPv4-mapped
 * addresses, local delivery, the RDS6_INFO tables, and two hosts talking
 * over global and link-local IPv6 addresses, RDMA included.
 *
 * Two sets of cases:
 *
 *	rds_ipv6 [-l] [CASE...]		one node (run_guest.sh)
 *	rds_ipv6 -r [-n NODE] [-a ADDR] [-p PEER] [-c PORT] [-l] [CASE...]
 *					two nodes at once (run_remote.sh),
 *					as rds_remote: the same cases on
 *					both, coordinated over TCP on IPv4
 *					(rds_peer.h), here port 18634
 *
 * The IPv6 addresses come from the bench (tools/testing/vm/vm-run.sh):
 * RDS_ADDR6 (fd00::K), RDS_LL6 (eth0's link-local address), RDS_IFINDEX
 * (eth0's, the scope id of link-local addresses), and on two nodes
 * RDS_PEER_ADDR6 and RDS_PEER_LL6; RDS_ADDR is the IPv4 address.  One-node
 * cases that need an address the environment lacks skip, saying which;
 * the ::1 cases need none.
 *
 * The expected behaviour is that of the distribution's net/rds (Debian's
 * 6.1 and 6.12 over soft-RoCE), which the project's modules must match;
 * where the distribution lacks a feature (RDS_GET_MR), the case says so
 * and skips there.  Every receive is bounded (SO_RCVTIMEO), and a node
 * that cannot bind an IPv6 address tells its peer at once, so a module
 * without IPv6 fails each case in moments rather than at its alarm.
 *
 * Environment: RDS_MODULES (none: skip all if AF_RDS is missing), the
 * addresses above, and for -r those of rds_remote.
 */
#include "rds_ipv6.h"

struct in6_addr a6_self, a6_peer, ll6_self, ll6_peer;
struct in_addr a4_self;
unsigned int ifindex;
int have_a6, have_ll6, have_a4;

/* ------------------------------------------------------------- driver */

static const struct rt_case local_cases[] = {
	RT_CASE(bind_global, 0),
	RT_CASE(bind_loopback, 0),
	RT_CASE(bind_link_local, 0),
	RT_CASE(bind_not_local, 0),
	RT_CASE(bind_invalid, 0),
	RT_CASE(bind_in_use, 0),
	RT_CASE(v4mapped, 0),
	RT_CASE(mixed_families, 0),
	RT_CASE(local_loopback, 30),
	RT_CASE(local_global, 30),
	RT_CASE(local_link_local, 30),
	RT_CASE(local_ll_to_loopback, 30),
	RT_CASE(connect_send, 0),
	RT_CASE(peek_trunc, 0),
	RT_CASE(info_sockets, 0),
	RT_CASE(cancel_sent_to, 30),
};

static const struct rt_case remote_cases[] = {
	RT_CASE(peer_global, 60),
	RT_CASE(peer_link_local, 60),
	RT_CASE(peer_info_connections, 30),
	RT_CASE(peer_get_mr_for_dest, 30),
	RT_CASE_OWNER(peer_rdma_write, 1, 60),
	RT_CASE_OWNER(peer_rdma_write, 2, 60),
	RT_CASE_OWNER(peer_rdma_read, 1, 60),
	RT_CASE_OWNER(peer_rdma_read, 2, 60),
};

/* An address from the environment: 1 if @name holds one. */
static int env_addr6(const char *name, struct in6_addr *a)
{
	const char *s = getenv(name);

	return s && *s && inet_pton(AF_INET6, s, a) == 1;
}

static void read_env(void)
{
	const char *s = getenv("RDS_IFINDEX");

	have_a6 = env_addr6("RDS_ADDR6", &a6_self);
	have_ll6 = env_addr6("RDS_LL6", &ll6_self) && s && atoi(s) > 0;
	if (have_ll6)
		ifindex = (unsigned int)atoi(s);
	s = getenv("RDS_ADDR");
	have_a4 = s && *s && inet_pton(AF_INET, s, &a4_self) == 1;
}

static int bad_usage(const char *prog)
{
	fprintf(stderr, "Usage: %s [-l] [CASE...]\n"
		"       %s -r [-n NODE] [-a ADDR] [-p PEER] [-c PORT] [-l] [CASE...]\n",
		prog, prog);
	return 2;
}

/* Two nodes: the peer's IPv6 addresses must be there too. */
static int remote_main(int argc, char **argv)
{
	int peer_a6, peer_ll6;

	peer_a6 = env_addr6("RDS_PEER_ADDR6", &a6_peer);
	peer_ll6 = env_addr6("RDS_PEER_LL6", &ll6_peer);
	if (getenv("RDS_NODE") &&
	    !(have_a6 && have_ll6 && peer_a6 && peer_ll6)) {
		/* the bench sets them all: their absence is its failure */
		printf("1..1\n# RDS_ADDR6 '%s', RDS_LL6 '%s', RDS_IFINDEX '%s',",
		       getenv("RDS_ADDR6") ?: "", getenv("RDS_LL6") ?: "",
		       getenv("RDS_IFINDEX") ?: "");
		printf(" RDS_PEER_ADDR6 '%s', RDS_PEER_LL6 '%s'\n",
		       getenv("RDS_PEER_ADDR6") ?: "",
		       getenv("RDS_PEER_LL6") ?: "");
		printf("not ok 1 - the bench's IPv6 addresses\n");
		return RT_EXIT_FAIL;
	}
	return rds_peer_main(argc, argv, remote_cases,
			     ARRAY_SIZE(remote_cases), CTL_PORT, PORT_BASE);
}

int main(int argc, char **argv)
{
	unsigned int i;
	int ret, opt;

	read_env();
	if (argc > 1 && !strcmp(argv[1], "-r")) {
		argv[1] = argv[0];
		return remote_main(argc - 1, argv + 1);
	}

	while ((opt = getopt(argc, argv, "l")) != -1) {
		if (opt != 'l')
			return bad_usage(argv[0]);
		for (i = 0; i < ARRAY_SIZE(local_cases); i++)
			printf("%s\n", local_cases[i].name);
		return 0;
	}

	ret = rds_need_af_rds();
	if (ret)
		return ret;

	rt_diag("global %s, link-local %s%%%u, IPv4 %s",
		have_a6 ? in6_str(&a6_self) : "(none)",
		have_ll6 ? in6_str(&ll6_self) : "(none)", ifindex,
		getenv("RDS_ADDR") ?: "(none)");
	return rt_run(local_cases, ARRAY_SIZE(local_cases), argv + optind);
}
