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

static const struct rt_case cases[] = {
	RT_CASE(socket_create, 0),
	RT_CASE(socket_bad_type, 0),
	RT_CASE(bind_rds_addr, 0),
	RT_CASE(bind_explicit_port, 0),
	RT_CASE(bind_port_zero, 0),
	RT_CASE(bind_addr_in_use, 0),
	RT_CASE(bind_nonlocal, 0),
	RT_CASE(bind_bad_args, 0),
	RT_CASE(bind_reserved_port, 0),
	RT_CASE(bind_twice, 0),
	RT_CASE(connect_default_dest, 30),
	RT_CASE(connect_default_dest_lo, 30),
	RT_CASE(getpeername_unconnected, 0),
	RT_CASE(connect_bad_args, 0),
	RT_CASE(getsockname_unbound, 0),
	RT_CASE(getname_bad_args, 0),
	RT_CASE(v4mapped_addrs, 0),
	RT_CASE(send_recv_boundaries, 30),
	RT_CASE(send_recv_boundaries_lo, 30),
	RT_CASE(recv_msg_name, 30),
	RT_CASE(recv_msg_name_lo, 30),
	RT_CASE(message_sizes, 90),
	RT_CASE(message_sizes_lo, 90),
	RT_CASE(message_too_big, 30),
	RT_CASE(message_over_sndbuf, 0),
	RT_CASE(send_unbound, 0),
	RT_CASE(send_no_dest, 0),
	RT_CASE(send_bad_args, 0),
	RT_CASE(send_efault, 0),
	RT_CASE(recv_efault, 0),
	RT_CASE(recv_dontwait_empty, 0),
	RT_CASE(recv_timeout, 0),
	RT_CASE(recv_odd_flags, 0),
	RT_CASE(recv_peek, 0),
	RT_CASE(recv_trunc, 0),
	RT_CASE(message_order, 60),
	RT_CASE(message_order_lo, 60),
	RT_CASE(send_no_listener, 0),
	RT_CASE(poll_plain, 0),
	RT_CASE(poll_monitored, 0),
	RT_CASE(poll_wakeup, 0),
	RT_CASE(cong_enobufs_lo, 60),
	RT_CASE(cong_enobufs, 60),
	RT_CASE(cong_empty_messages, 60),
	RT_CASE(cong_blocking_sender, 60),
	RT_CASE(cong_monitor, 60),
	RT_CASE(cong_send_eintr, 60),
	RT_CASE(opt_transport, 0),
	RT_CASE(opt_recverr, 0),
	RT_CASE(opt_cancel_sent_to, 0),
	RT_CASE(opt_cong_monitor, 0),
	RT_CASE(opt_rxpath_latency, 0),
	RT_CASE(opt_unknown, 0),
	RT_CASE(close_with_queued, 30),
	RT_CASE(close_with_queued_lo, 30),
	RT_CASE(recv_eintr, 0),
	RT_CASE(recv_restart, 0),
	RT_CASE(many_sockets, 60),
	RT_CASE(many_sockets_lo, 60),
	RT_CASE(stress_many_senders, 120),
	RT_CASE(stress_close_receiver, 60),
	RT_CASE(info_sockets, 0),
	RT_CASE(info_send_messages, 0),
	RT_CASE(rdma_cancel_sent_to, 0),
	RT_CASE(rdma_note_needs_room, 0),
	RT_CASE(rdma_note_bound, 60),
	RT_CASE(rdma_local_copy, 30),
	RT_CASE(rdma_local_keys, 30),
	RT_CASE(info_bad_args, 0),
	RT_CASE(conn_reap, 120),
	RT_CASE(conn_reap_cached, 120),
	RT_CASE(ioctl_tos, 0),
	RT_CASE(rx_timestamp, 0),
	RT_CASE(netns_isolation, 0),
	RT_CASE(netns_limits, 60),
	RT_CASE(zcopy_errnos, 0),
	RT_CASE(zcopy_local_bytes, 30),
	RT_CASE(zcopy_completions, 30),
	RT_CASE(zcopy_queue_bound, 30),
	RT_CASE(zcopy_memlock, 30),
	RT_CASE(zcopy_close_inflight, 30),
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
	unsigned int i;
	int ret, opt;

	while ((opt = getopt(argc, argv, "l")) != -1) {
		if (opt != 'l') {
			fprintf(stderr, "usage: %s [-l] [CASE...]\n", argv[0]);
			return 2;
		}
		for (i = 0; i < ARRAY_SIZE(cases); i++)
			printf("%s\n", cases[i].name);
		return 0;
	}

	ret = rds_need_af_rds();
	if (ret)
		return ret;

	pick_main_address();
	rt_diag("primary address %s%s, loopback 127.0.0.1", addr_main_str,
		main_is_lo ? " (loopback transport: congestion cases skip)" :
		"");
	return rt_run(cases, ARRAY_SIZE(cases), argv + optind);
}
