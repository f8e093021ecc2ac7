// SPDX-License-Identifier: GPL-2.0
/*
 * rds-zc-bench - performance of RDS (AF_RDS) between two hosts: the RDMA
 * cycle of a storage server, memory registration, and plain datagrams.
 *
 *   rds-zc-bench server -a ADDR [-p PORT] [--once] [--idle SECS]
 *		[--no-fence] [--transport ib|tcp]
 *   rds-zc-bench client -a ADDR -s SERVER [-p PORT] [--tests LIST]
 *		[--transport ib|tcp] ...
 *
 * The server binds ADDR:PORT and answers what clients ask, one request per
 * message; it keeps no state but counters.  ADDR and SERVER are IPv4 or
 * IPv6 addresses, a link-local one with its interface (fe80::1%eth0).  The client runs the
 * measurements ("points") one after the other and prints, for each, one
 * machine-readable line
 *
 *   RESULT name=NAME size=BYTES inflight=N value=V unit=U [key=value...]
 *
 * (value is a number, "unsupported" when the kernel refused a feature the
 * point needs, or "error") and one line for people.  The points:
 *
 * rdma_{write,read}_{map,getmr,reuse}: the client sends a request naming
 *	its buffer (a cookie); the server RDMA-writes into it (or reads
 *	from it) with RDS_CMSG_RDMA_ARGS and RDS_RDMA_NOTIFY_ME and sends its
 *	ACK message in the same sendmsg(), a READ with RDS_RDMA_FENCE as
 *	rds(7) advises (the server's --no-fence leaves it out); the client
 *	receives the ACK and the buffer is free again.  The client's key comes from
 *	RDS_CMSG_RDMA_MAP with RDS_RDMA_USE_ONCE on the request (map), from
 *	RDS_GET_MR before and RDS_FREE_MR after every operation (getmr), or
 *	from one RDS_GET_MR per buffer kept for the whole point (reuse).
 *	The server counts the RDS_CMSG_RDMA_STATUS notifications; a point
 *	whose notifications are missing or not all RDS_RDMA_SUCCESS is an
 *	error.  Value: MiB/s of RDMA payload; inflight: operations in flight.
 * reg_pair, reg_pair_inv: RDS_GET_MR then RDS_FREE_MR (with
 *	RDS_RDMA_INVALIDATE for reg_pair_inv) of one buffer, as fast as
 *	possible, by inflight threads with a socket each, on this host only.
 *	Value: pairs per second, all threads together.
 * dgram_rtt_p50, dgram_rtt_p99: round trips of 64-byte datagrams, one at
 *	a time; median and 99th percentile in microseconds.  --tests rtt
 *	measures them alone (dgram measures them and the streams).
 * reclaim_notify, reclaim_barrier: the client RDMA-writes an MR of the
 *	server (asked for with a MR request) from 16 buffers in batches:
 *	all 16 in flight, then the batch is waited for, by one notification
 *	per operation (RDS_RDMA_NOTIFY_ME) or by one RDS_OP_BARRIER for the
 *	batch (the bulk reclaim of the original RDS design), and the buffers
 *	are reused.  Silent WRITEs, no messages.  Value: operations per
 *	second.  The barrier needs this project's module.
 * conn_setup (only with --tests conn, first of all): the first round trip
 *	of a ping on a new socket, which on a cold connection includes its
 *	setup, in milliseconds; then 20 round trips more, whose median is
 *	the warm round trip (warm_us).
 * dgram_rate, dgram_tput: datagrams sent to the server by inflight
 *	threads with a socket each, as fast as the sockets take them; the
 *	clock stops when the server has answered the last one of every
 *	thread, and its count must match.  Messages per second (64 B, 4 KiB)
 *	and MiB/s (64 KiB, 1 MiB).
 * dgram_rate_zc, dgram_tput_zc (--zerocopy: the streams above; --tests zc:
 *	64 KiB and 1 MiB, one sender): the same streams, each datagram sent
 *	with MSG_ZEROCOPY and an RDS_CMSG_ZCOPY_COOKIE from a socket with
 *	SO_ZEROCOPY, from a ring of 8 buffers per sender; a buffer is
 *	written again only once its cookie came back in an
 *	RDS_CMSG_ZCOPY_COMPLETION (recvmsg with MSG_DONTWAIT on the sending
 *	socket), and every cookie must come back, once, before the clock
 *	stops.  Their RESULT lines carry zc=1.  "unsupported" where the
 *	kernel refuses MSG_ZEROCOPY (the distribution's RDS over IB).
 * tcp_dgram_* (--tests tcp): the round trip, the streams and the
 *	zero-copy streams again, from sockets pinned to RDS-over-TCP
 *	(SO_RDS_TRANSPORT) to a second server on PORT + 1 started with
 *	--transport tcp (tcp.c).
 *
 * --transport pins every socket of the program (server or client) to one
 * transport with SO_RDS_TRANSPORT before its bind(): ib to go over the
 * RDMA device even between two addresses of one host (where RDS would
 * deliver locally), tcp for RDS over TCP.
 *
 * --live-keys N registers N keys more (RDS_GET_MR of one page each) before
 * the RDMA points and holds them until the last one is done: the cost of
 * a cycle on a device with many live keys.  Their RESULT lines carry
 * live_keys=N.
 *
 * Every wait is bounded (--timeout): a dead peer makes a point fail, never
 * the program hang.  Exit status: 0 if no point failed ("unsupported" is
 * not a failure), 1 if one did, 2 on bad usage.
 *
 * One client at a time per server: the server's counters are shared.
 */
#include "rds-zc-bench.h"

struct options opt;

const char * const key_names[] = { "map", "getmr", "reuse" };

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: rds-zc-bench server -a ADDR [-p PORT] [--once] [--idle SECS]\n"
		"                          [--no-fence]\n"
		"       rds-zc-bench client -a ADDR -s SERVER [-p PORT] [options]\n"
		"  (both: [--transport ib|tcp])\n"
		"\n"
		"Measures RDS (AF_RDS) between two hosts: the RDMA cycle of a storage\n"
		"server (request naming a buffer, RDMA WRITE or READ with its ACK in one\n"
		"sendmsg, notification), memory registration alone, and plain datagrams.\n"
		"Start the server first; each client point prints one line\n"
		"  RESULT name=NAME size=BYTES inflight=N value=V unit=U [key=value...]\n"
		"and one line for people.  ADDR must be an address of the RDMA device\n"
		"(IB or RoCE) for RDS to use its transport: IPv4 or IPv6, a link-local\n"
		"address with its interface (fe80::1%%eth0 or fe80::1%%2).  SERVER is of\n"
		"the same family.\n"
		"\n"
		"  -a, --addr ADDR        this host's address to bind (required)\n"
		"  -s, --server ADDR      the server's address (client)\n"
		"  -p, --port PORT        the server's RDS port (default %d)\n"
		"  -T, --time SECS        length of each point (default 2)\n"
		"  -n, --ops N            at most N operations per point and thread\n"
		"                         (default: no limit, only the time)\n"
		"  -t, --timeout SECS     longest wait for any answer or send (default 30)\n"
		"      --tests LIST       rdma,reg,dgram,reclaim,conn,rtt,stream,zc,tcp\n"
		"                         (default the first four; reg needs no server;\n"
		"                         conn: the first round trip on a new socket,\n"
		"                         cold connection; rtt: the 64 B round trip\n"
		"                         alone; stream: dgram's streams without the\n"
		"                         rtt; zc: streams of 64 KiB and 1 MiB, one\n"
		"                         sender, with MSG_ZEROCOPY; tcp: dgram and zc\n"
		"                         again over RDS-over-TCP, to a server on\n"
		"                         PORT + 1 run with --transport tcp)\n"
		"      --dirs LIST        RDMA directions: write,read (default both)\n"
		"      --keys LIST        how the client gets its key: map (RDS_CMSG_RDMA_MAP\n"
		"                         with RDS_RDMA_USE_ONCE on the request), getmr\n"
		"                         (RDS_GET_MR and RDS_FREE_MR per operation), reuse\n"
		"                         (one RDS_GET_MR per buffer for the whole point);\n"
		"                         default map,getmr,reuse\n"
		"      --sizes LIST       RDMA sizes (default 4K,64K,1M; at most 1M)\n"
		"      --inflight LIST    RDMA operations in flight (default 1,16; max %d)\n"
		"      --reg-size BYTES   buffer of the registration points (default 4K)\n"
		"      --reg-threads LIST registering threads (default 1,8)\n"
		"      --reg-kinds LIST   registration points: pair (RDS_GET_MR, then\n"
		"                         RDS_FREE_MR), inv (the same, freed with\n"
		"                         RDS_RDMA_INVALIDATE); default pair,inv\n"
		"      --senders LIST     datagram senders (default 1,16)\n"
		"      --dgram-sizes LIST datagram sizes of the streams (default\n"
		"                         64,4K,64K,1M)\n"
		"      --zerocopy         send the streams of dgram and stream with\n"
		"                         MSG_ZEROCOPY (dgram_rate_zc, dgram_tput_zc)\n"
		"      --live-keys N      hold N keys more (RDS_GET_MR of one page each)\n"
		"                         during the RDMA points; live_keys=N on their\n"
		"                         RESULT lines (default none)\n"
		"      --transport ib|tcp every socket pinned to that transport\n"
		"                         (SO_RDS_TRANSPORT, before bind); default:\n"
		"                         none, RDS picks by the bound address\n"
		"      --tag TEXT         appended to every RESULT line (e.g. round=2)\n"
		"      --rcvbuf BYTES     server: SO_RCVBUF (default 16M)\n"
		"      --once             server: exit after the client's BYE\n"
		"      --idle SECS        server: exit after SECS without a message\n"
		"      --no-fence         server: READs without RDS_RDMA_FENCE (their\n"
		"                         ACK may overtake them; rds(7) advises the fence)\n"
		"  -h, --help             this text\n"
		"\n"
		"Large messages need room in socket buffers: as root the tool forces\n"
		"them (SO_SNDBUFFORCE); otherwise raise net.core.wmem_max and rmem_max.\n"
		"Exit status: 0 when no point failed (\"unsupported\" is no failure),\n"
		"1 when one did, 2 on bad usage.\n",
		DEF_PORT, MAX_SLOTS);
}

void bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "rds-zc-bench: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n(rds-zc-bench --help for usage)\n");
	exit(2);
}

/* A number with an optional K or M suffix (powers of 1024); -1 if bad. */
static long parse_num(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || v < 0)
		return -1;
	if (*end == 'K' || *end == 'k') {
		v <<= 10;
		end++;
	} else if (*end == 'M' || *end == 'm') {
		v <<= 20;
		end++;
	}
	return *end ? -1 : v;
}

static void parse_list(struct list *l, const char *arg, long min, long max,
		       const char *what)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	long v;

	if (!copy)
		die("out of memory");
	l->n = 0;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		v = parse_num(tok);
		if (v < min || v > max || l->n == MAX_LIST)
			bad_usage(what, arg);
		l->v[l->n++] = v;
	}
	if (!l->n)
		bad_usage(what, arg);
	free(copy);
}

/* Bits of the names in a comma-separated list of names[]; exits if bad. */
static int parse_names(const char *arg, const char * const *names, int n,
		       const char *what)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	int bits = 0, i;

	if (!copy)
		die("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < n && strcmp(tok, names[i]); i++)
			;
		if (i == n)
			bad_usage(what, arg);
		bits |= 1 << i;
	}
	free(copy);
	if (!bits)
		bad_usage(what, arg);
	return bits;
}

/* IPv4, or IPv6 with an optional %ifname or %index (sin6_scope_id). */
static void parse_addr(union addr *a, const char *arg)
{
	const char *pct = strchr(arg, '%');
	size_t len = pct ? (size_t)(pct - arg) : strlen(arg);
	char ip[INET6_ADDRSTRLEN], *end = "";
	unsigned long scope = 0;

	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, arg, &a->sin.sin_addr) == 1) {
		a->sin.sin_family = AF_INET;
		return;
	}
	if (pct) {
		scope = if_nametoindex(pct + 1);
		if (!scope)
			scope = strtoul(pct + 1, &end, 10);
	}
	snprintf(ip, sizeof(ip), "%.*s", (int)len, arg);
	if (len >= sizeof(ip) || inet_pton(AF_INET6, ip, &a->sin6.sin6_addr) != 1)
		bad_usage("not an IPv4 or IPv6 address: %s", arg);
	if (pct && (!scope || *end || scope > 0xffffffffUL))
		bad_usage("no such interface: %s", arg);
	a->sin6.sin6_family = AF_INET6;
	a->sin6.sin6_scope_id = scope;
}

enum {
	O_TESTS = 256, O_DIRS, O_KEYS, O_SIZES, O_INFLIGHT, O_REG_SIZE,
	O_REG_THREADS, O_SENDERS, O_TAG, O_RCVBUF, O_ONCE, O_IDLE,
	O_LIVE_KEYS, O_NO_FENCE, O_REG_KINDS, O_DGRAM_SIZES, O_ZEROCOPY,
	O_TRANSPORT,
};

static const struct option long_opts[] = {
	{ "addr", required_argument, NULL, 'a' },
	{ "server", required_argument, NULL, 's' },
	{ "port", required_argument, NULL, 'p' },
	{ "time", required_argument, NULL, 'T' },
	{ "ops", required_argument, NULL, 'n' },
	{ "timeout", required_argument, NULL, 't' },
	{ "tests", required_argument, NULL, O_TESTS },
	{ "dirs", required_argument, NULL, O_DIRS },
	{ "keys", required_argument, NULL, O_KEYS },
	{ "sizes", required_argument, NULL, O_SIZES },
	{ "inflight", required_argument, NULL, O_INFLIGHT },
	{ "reg-size", required_argument, NULL, O_REG_SIZE },
	{ "reg-threads", required_argument, NULL, O_REG_THREADS },
	{ "senders", required_argument, NULL, O_SENDERS },
	{ "reg-kinds", required_argument, NULL, O_REG_KINDS },
	{ "dgram-sizes", required_argument, NULL, O_DGRAM_SIZES },
	{ "tag", required_argument, NULL, O_TAG },
	{ "rcvbuf", required_argument, NULL, O_RCVBUF },
	{ "once", no_argument, NULL, O_ONCE },
	{ "idle", required_argument, NULL, O_IDLE },
	{ "live-keys", required_argument, NULL, O_LIVE_KEYS },
	{ "no-fence", no_argument, NULL, O_NO_FENCE },
	{ "zerocopy", no_argument, NULL, O_ZEROCOPY },
	{ "transport", required_argument, NULL, O_TRANSPORT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void parse_options(int argc, char **argv)
{
	static const char * const tests[] = {
		"rdma", "reg", "dgram", "reclaim", "conn", "rtt", "stream",
		"zc", "tcp",
	};
	static const char * const reg_kinds[] = { "pair", "inv" };
	static const char * const dirs[] = { "write", "read" };
	long port = DEF_PORT, v;
	char *end;
	int c;

	opt.secs = 2;
	opt.timeout = 30;
	opt.tests = TEST_RDMA | TEST_REG | TEST_DGRAM | TEST_RECLAIM;
	opt.dirs = 3;
	opt.keys = KEY_MAP | KEY_GETMR | KEY_REUSE;
	parse_list(&opt.sizes, "4K,64K,1M", 1, MAX_MSG, "");
	parse_list(&opt.inflight, "1,16", 1, MAX_SLOTS, "");
	parse_list(&opt.reg_threads, "1,8", 1, MAX_THREADS, "");
	parse_list(&opt.senders, "1,16", 1, MAX_THREADS, "");
	parse_list(&opt.dgram_sizes, "64,4K,64K,1M", 1, MAX_MSG, "");
	opt.reg_kinds = 3;
	opt.reg_size = 4096;
	opt.bufsize = 16 << 20;
	opt.trans = RDS_TRANS_NONE;

	while ((c = getopt_long(argc, argv, "a:s:p:T:n:t:h", long_opts,
				NULL)) != -1) {
		switch (c) {
		case 'a':
			parse_addr(&opt.self, optarg);
			opt.have_self = 1;
			break;
		case 's':
			parse_addr(&opt.server, optarg);
			opt.have_server = 1;
			break;
		case 'p':
			port = parse_num(optarg);
			if (port < 1 || port > 65535)
				bad_usage("bad port: %s", optarg);
			break;
		case 'T':
			opt.secs = strtod(optarg, &end);
			if (*end || !(opt.secs > 0 && opt.secs <= 3600))
				bad_usage("bad --time: %s", optarg);
			break;
		case 'n':
			opt.max_ops = parse_num(optarg);
			if (opt.max_ops < 1)
				bad_usage("bad --ops: %s", optarg);
			break;
		case 't':
			v = parse_num(optarg);
			if (v < 1 || v > 3600)
				bad_usage("bad --timeout: %s", optarg);
			opt.timeout = v;
			break;
		case O_TESTS:
			opt.tests = parse_names(optarg, tests, ARRAY_SIZE(tests),
						"--tests takes rdma,reg,dgram,reclaim,conn,rtt,stream,zc,tcp: %s");
			break;
		case O_DIRS:
			opt.dirs = parse_names(optarg, dirs, ARRAY_SIZE(dirs),
					       "--dirs takes write,read: %s");
			break;
		case O_KEYS:
			opt.keys = parse_names(optarg, key_names,
					       ARRAY_SIZE(key_names),
					       "--keys takes map,getmr,reuse: %s");
			break;
		case O_SIZES:
			parse_list(&opt.sizes, optarg, 1, MAX_MSG,
				   "bad --sizes (1 to 1M each): %s");
			break;
		case O_INFLIGHT:
			parse_list(&opt.inflight, optarg, 1, MAX_SLOTS,
				   "bad --inflight (1 to 64 each): %s");
			break;
		case O_REG_SIZE:
			opt.reg_size = parse_num(optarg);
			if (opt.reg_size < 1 || opt.reg_size > MAX_MSG)
				bad_usage("bad --reg-size (1 to 1M): %s", optarg);
			break;
		case O_REG_THREADS:
			parse_list(&opt.reg_threads, optarg, 1, MAX_THREADS,
				   "bad --reg-threads (1 to 64 each): %s");
			break;
		case O_SENDERS:
			parse_list(&opt.senders, optarg, 1, MAX_THREADS,
				   "bad --senders (1 to 64 each): %s");
			break;
		case O_REG_KINDS:
			opt.reg_kinds = parse_names(optarg, reg_kinds,
						    ARRAY_SIZE(reg_kinds),
						    "--reg-kinds takes pair,inv: %s");
			break;
		case O_DGRAM_SIZES:
			parse_list(&opt.dgram_sizes, optarg, 1, MAX_MSG,
				   "bad --dgram-sizes (1 to 1M each): %s");
			break;
		case O_TAG:
			opt.tag = optarg;
			break;
		case O_RCVBUF:
			v = parse_num(optarg);
			if (v < 4096 || v > INT_MAX)
				bad_usage("bad --rcvbuf: %s", optarg);
			opt.bufsize = v;
			break;
		case O_ONCE:
			opt.once = 1;
			break;
		case O_NO_FENCE:
			opt.no_fence = 1;
			break;
		case O_ZEROCOPY:
			opt.zerocopy = 1;
			break;
		case O_TRANSPORT:
			if (!strcmp(optarg, "ib"))
				opt.trans = RDS_TRANS_IB;
			else if (!strcmp(optarg, "tcp"))
				opt.trans = RDS_TRANS_TCP;
			else
				bad_usage("--transport takes ib or tcp: %s",
					  optarg);
			break;
		case O_IDLE:
			v = parse_num(optarg);
			if (v < 1 || v > INT_MAX)
				bad_usage("bad --idle: %s", optarg);
			opt.idle = v;
			break;
		case O_LIVE_KEYS:
			opt.live_keys = parse_num(optarg);
			if (opt.live_keys < 0 || opt.live_keys > MAX_LIVE_KEYS)
				bad_usage("bad --live-keys (0 to 1000000): %s",
					  optarg);
			opt.have_live_keys = 1;
			break;
		case 'h':
			print_usage(stdout);
			exit(0);
		default:
			print_usage(stderr);
			exit(2);
		}
	}
	/* the TCP group's server listens on PORT + 1 */
	if ((opt.tests & TEST_TCP) && port == 65535)
		bad_usage("%s", "--tests tcp needs a PORT below 65535");
	addr_set_port(&opt.self, 0);
	addr_set_port(&opt.server, port);
	if (!opt.have_self)
		bad_usage("%s", "-a ADDR (this host's address) is required");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "-h") || !strcmp(mode, "--help")) {
		print_usage(stdout);
		return 0;
	}
	if (strcmp(mode, "server") && strcmp(mode, "client")) {
		print_usage(stderr);
		return 2;
	}
	parse_options(argc - 1, argv + 1);
	if (optind != argc - 1)
		bad_usage("unexpected argument: %s", argv[optind + 1]);
	raise_memlock();
	if (!strcmp(mode, "server")) {
		addr_set_port(&opt.self, addr_port(&opt.server));
		return run_server();
	}
	return run_client();
}
