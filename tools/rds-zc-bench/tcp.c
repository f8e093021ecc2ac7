// SPDX-License-Identifier: GPL-2.0
/*
 * The datagram points over RDS-over-TCP: tcp_dgram_rtt_p50,
 * tcp_dgram_rtt_p99, tcp_dgram_rate, tcp_dgram_tput, tcp_dgram_rate_zc,
 * tcp_dgram_tput_zc.
 */
#include "rds-zc-bench.h"

/*
 * --tests tcp: every datagram point of dgram and zc again, from sockets
 * pinned to TCP with SO_RDS_TRANSPORT, to a second server on PORT + 1 run
 * with --transport tcp: the requests and the answers both go over the
 * TCP transport, whichever transport the addresses would have by
 * default.  The names take "tcp_" in front.  Without a TCP transport
 * ("SO_RDS_TRANSPORT tcp: ENOPROTOOPT") every point is "unsupported";
 * without an answer on PORT + 1 every point fails, saying so.  The TCP
 * server gets its own BYE.
 */
void tcp_points(void)
{
	union addr server = opt.server;
	int trans = opt.trans, fd, unsup = 0, failed;
	char why[256];

	opt.trans = RDS_TRANS_TCP;
	addr_set_port(&opt.server, addr_port(&server) + 1);
	point_prefix = "tcp_";
	point_note = "over TCP: ";

	fd = rds_open(&opt.self, 4096, 65536, why, sizeof(why));
	if (fd < 0) {
		unsup = errno == ENOPROTOOPT;
		failed = 1;
	} else {
		close(fd);
		failed = reach_server(opt.timeout > 60 ? opt.timeout : 60, why,
				      sizeof(why));
		if (failed)
			strncat(why, " (the TCP server: server --transport tcp on PORT + 1)",
				sizeof(why) - strlen(why) - 1);
	}
	dgram_points(1, 1, 1, unsup, failed ? why : NULL);
	if (!failed) {
		fd = rds_open(&opt.self, 4096, 1 << 20, why, sizeof(why));
		if (fd < 0 || ask(fd, T_BYE, T_BYE_ACK, 1, NULL, 0))
			fprintf(stderr, "rds-zc-bench: the TCP server did not answer BYE\n");
		if (fd >= 0)
			close(fd);
	}

	point_prefix = "";
	point_note = "";
	addr_set_port(&opt.server, addr_port(&server));
	opt.trans = trans;
}
