// SPDX-License-Identifier: GPL-2.0
/*
 * rds_local - the RDS socket family on one node, with local delivery only.
 *
 * Every case talks to sockets of the same host: on the main address
 * (RDS_ADDR, the guest's own address, else 127.0.0.1) and, for the core
 * send/receive cases, once more on 127.0.0.1.  The expected errnos are
 * those of the distribution's net/rds (Debian's 6.1 kernel), which is the
 * reference: the project's module must behave the same.
 *
 * What the distribution does that matters here:
 *  - A socket bound to 127.0.0.0/8 uses the loopback transport, and the
 *    loopback transport never marks a port congested (its receive queue is
 *    not bounded by SO_RCVBUF).  The congestion cases therefore need the
 *    main address to be a real interface address with a transport
 *    (rds_rdma or rds_tcp) loaded, and skip otherwise.
 *  - Without RDS_CONG_MONITOR, poll() reports POLLIN (and POLLWRBAND) once
 *    after any congestion map update anywhere in the system, so the plain
 *    poll cases let POLLIN settle before they expect it clear; the
 *    monitoring cases expect exact results.
 *
 * Usage: rds_local [-l] [CASE...]	(-l lists the cases)
 * Environment: RDS_ADDR, RDS_MODULES (none: skip all if AF_RDS is missing).
 */
#include "rds_local.h"

struct in_addr addr_main, addr_lo;
char addr_main_str[INET_ADDRSTRLEN];
int main_is_lo;
volatile sig_atomic_t signals_seen;

/* ------------------------------------------------------------- driver */

#define CASE(name)		{ #name, test_##name, 0 }
#define CASE_T(name, secs)	{ #name, test_##name, secs }

static const struct rt_case cases[] = {
	CASE(socket_create),
	CASE(socket_bad_type),
	CASE(bind_rds_addr),
	CASE(bind_explicit_port),
	CASE(bind_port_zero),
	CASE(bind_addr_in_use),
	CASE(bind_nonlocal),
	CASE(bind_bad_args),
	CASE(bind_reserved_port),
	CASE(bind_twice),
	CASE_T(connect_default_dest, 30),
	CASE_T(connect_default_dest_lo, 30),
	CASE(getpeername_unconnected),
	CASE(connect_bad_args),
	CASE(getsockname_unbound),
	CASE(getname_bad_args),
	CASE_T(send_recv_boundaries, 30),
	CASE_T(send_recv_boundaries_lo, 30),
	CASE_T(recv_msg_name, 30),
	CASE_T(recv_msg_name_lo, 30),
	CASE_T(message_sizes, 90),
	CASE_T(message_sizes_lo, 90),
	CASE_T(message_too_big, 30),
	CASE(message_over_sndbuf),
	CASE(send_unbound),
	CASE(send_no_dest),
	CASE(send_bad_args),
	CASE(send_efault),
	CASE(recv_efault),
	CASE(recv_dontwait_empty),
	CASE(recv_timeout),
	CASE(recv_odd_flags),
	CASE(recv_peek),
	CASE(recv_trunc),
	CASE_T(message_order, 60),
	CASE_T(message_order_lo, 60),
	CASE(send_no_listener),
	CASE(poll_plain),
	CASE(poll_monitored),
	CASE(poll_wakeup),
	CASE_T(cong_enobufs_lo, 60),
	CASE_T(cong_enobufs, 60),
	CASE_T(cong_empty_messages, 60),
	CASE_T(cong_blocking_sender, 60),
	CASE_T(cong_monitor, 60),
	CASE_T(cong_send_eintr, 60),
	CASE(opt_transport),
	CASE(opt_recverr),
	CASE(opt_cancel_sent_to),
	CASE(opt_cong_monitor),
	CASE(opt_rxpath_latency),
	CASE(opt_unknown),
	CASE_T(close_with_queued, 30),
	CASE_T(close_with_queued_lo, 30),
	CASE(recv_eintr),
	CASE(recv_restart),
	CASE_T(many_sockets, 60),
	CASE_T(many_sockets_lo, 60),
	CASE_T(stress_many_senders, 120),
	CASE_T(stress_close_receiver, 60),
	CASE(info_sockets),
	CASE(info_send_messages),
	CASE(rdma_cancel_sent_to),
	CASE(rdma_note_needs_room),
	CASE(info_bad_args),
	CASE_T(conn_reap, 120),
	CASE(ioctl_tos),
	CASE(rx_timestamp),
};

/* Use RDS_ADDR as the main address if a socket can bind to it. */
static void pick_main_address(void)
{
	const char *env = getenv("RDS_ADDR");
	struct sockaddr_in sin;
	int fd;

	addr_lo = in_addr_of("127.0.0.1");
	addr_main = addr_lo;
	if (env && *env && in_addr_of(env).s_addr != htonl(INADDR_NONE)) {
		fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
		sin_set(&sin, in_addr_of(env), 0);
		if (fd >= 0 && !bind(fd, (struct sockaddr *)&sin, sizeof(sin)))
			addr_main = sin.sin_addr;
		else
			rt_diag("cannot bind to RDS_ADDR %s: %s", env,
				rt_errname(errno));
		if (fd >= 0)
			close(fd);
	}
	main_is_lo = (ntohl(addr_main.s_addr) >> 24) == 127;
	inet_ntop(AF_INET, &addr_main, addr_main_str, sizeof(addr_main_str));
}

int main(int argc, char **argv)
{
	const char *modules = getenv("RDS_MODULES");
	unsigned int i;
	int fd, opt;

	while ((opt = getopt(argc, argv, "l")) != -1) {
		if (opt != 'l') {
			fprintf(stderr, "usage: %s [-l] [CASE...]\n", argv[0]);
			return 2;
		}
		for (i = 0; i < ARRAY_SIZE(cases); i++)
			printf("%s\n", cases[i].name);
		return 0;
	}

	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (fd < 0) {
		int err = errno;

		if (modules && (!strcmp(modules, "ours") ||
				!strcmp(modules, "distro"))) {
			printf("1..1\n# socket(AF_RDS): %s\n", rt_errname(err));
			printf("not ok 1 - AF_RDS sockets (RDS_MODULES=%s)\n",
			       modules);
			return RT_EXIT_FAIL;
		}
		printf("1..0 # SKIP socket(AF_RDS): %s: no RDS module loaded\n",
		       rt_errname(err));
		return RT_EXIT_SKIP;
	}
	close(fd);

	pick_main_address();
	rt_diag("primary address %s%s, loopback 127.0.0.1", addr_main_str,
		main_is_lo ? " (loopback transport: congestion cases skip)" :
		"");
	return rt_run(cases, ARRAY_SIZE(cases), argv + optind);
}
