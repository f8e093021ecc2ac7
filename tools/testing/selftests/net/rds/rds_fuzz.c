// SPDX-License-Identifier: GPL-2.0
/*
 * rds_fuzz - a seeded, reproducible, time-bounded system-call fuzzer for
 * AF_RDS, on one node or on two that fuzz each other.
 *
 * What it calls.  Each step of a seed ("op") makes one or a few calls:
 * sendmsg() with payloads from 0 bytes to past 1 MiB and SOL_RDS control
 * messages built to look valid and then mutated (RDS_CMSG_RDMA_MAP,
 * _RDMA_DEST, _RDMA_ARGS, the four atomics, RDS_CMSG_OP_ID,
 * RDS_CMSG_ZCOPY_COOKIE, types sendmsg() does not take, malformed
 * headers, several in one message, duplicates and conflicts); recvmsg()
 * with odd flags, names and control buffers, which also harvests the
 * cookies (RDS_CMSG_RDMA_DEST) and notifications (RDS_CMSG_RDMA_STATUS)
 * that arrive; setsockopt() of every SOL_RDS option with valid-looking
 * and mutated arguments at any length; getsockopt() of every option,
 * RDS_OP_BARRIER and every RDS_INFO table; SOL_SOCKET options; bind(),
 * connect(), ioctl(), poll(), getsockname(), getpeername(); closing a
 * socket, now and then right after an RDMA send (the operation in
 * flight), and creating it again; fork(): a child makes calls on the
 * inherited sockets and is SIGKILLed mid-way.
 *
 * Mutations: iovec counts up to and past UIO_MAXIOV, lengths that wrap,
 * zero lengths, overlapping local iovecs, kernel (0xffffffff81000000),
 * non-canonical, unmapped, PROT_NONE, read-only and misaligned addresses;
 * cookies the socket registered itself (RDS_GET_MR, RDS_GET_MR_FOR_DEST,
 * RDS_CMSG_RDMA_MAP), that another socket owns (foreign), already freed
 * by RDS_FREE_MR, a USE_ONCE use or a close (stale), sent by the peer,
 * and random ones.
 *
 * Errnos.  Each call's errno is checked against the set of the call's
 * kind: fz_errnos[] says, for each errno a kind accepts, why that call
 * may return it and whether our modules, the distribution's or both do
 * (RDS_MODULES, else the loaded module, says which this node runs).
 * Anything else fails the case, naming the seed, the op, the call and its
 * arguments; the op number is what -n takes to replay up to it.  The
 * sweep also checks that a length an option cannot take never succeeds
 * and that RDS_INFO answers keep their convention.  Crashes and kernel
 * warnings fail the bench's kernel-log check.
 *
 * One node (RDS_NODES unset or 1): the cases sockopt_sweep (setsockopt()
 * and getsockopt() of every option at every length from 0 to the largest
 * argument + 8, on an unbound socket, one bound to RDS_ADDR and one bound
 * to 127.0.0.1) and seed_1 .. seed_4.  Sends go to this node's sockets
 * (local delivery), to an address nobody answers (FZ_ABSENT: operations
 * are built, pinned and queued, and dropped at close) and to bad ones.
 *
 * Two nodes (RDS_NODES=2 and RDS_PEER_ADDR, as vm-run.sh --guests 2 sets
 * them): both guests run the cases peer_seed_1 and peer_seed_2 and fuzz
 * each other.  Most sends go to the peer's sockets, so connections are
 * live and the RDMA operations and atomics aimed at cookies the peer sent
 * really run: a message whose RDS_CMSG_RDMA_MAP or _DEST succeeds carries
 * a header (struct fz_hdr) saying how long the region is.  The nodes
 * synchronise over rds_peer.h's TCP control connection (port
 * FZ_CTL_PORT) before and after fuzzing; then each sends a datagram to
 * the other on fresh sockets, which must arrive within 20 s: fuzzing must
 * not leave the connection broken.  Either node may run the
 * distribution's modules.
 *
 * Reproducible: which calls are made, with which arguments, depends on
 * the seed and the node only, never on what a call returned: every op
 * draws a fixed count of random numbers, and values the kernel handed out
 * (cookies, operation ids) only fill slots that the draws name.  So the
 * diag line's seq= (the generator's state at the end) is the same for the
 * same seed and ops on any kernel.  Nothing blocks: sends and receives
 * carry MSG_DONTWAIT, every socket has an SO_RCVTIMEO of FZ_RCVTIMEO_MS
 * (RDS_OP_BARRIER waits that long at most), and a seed stops at its time
 * budget even if ops remain.
 *
 * Usage: rds_fuzz [-s SEED] [-n OPS] [-t SECONDS] [-v] [-K] [CASE...]
 *   -s  run this seed alone (case seed_given; peer_seed_given on two
 *       nodes, where both must get the same options)
 *   -n  ops per seed (default 30000 on one node, no limit on two; 0: no
 *       limit); a failure at op N replays with -s SEED -n N
 *   -t  time budget per seed in seconds (default 60 on one node, 30 on
 *       two)
 *   -v  print every call and its result (-vv: each call before it too)
 *   -K  also make the calls that hit known kernel bugs (fz_known_bugs)
 *   CASE  only the cases named
 * Environment: RDS_ADDR, RDS_NODE, RDS_NODES, RDS_PEER_ADDR, RDS_MODULES
 * (vm-run.sh sets them); RDS_FUZZ_SECONDS, the time budget per seed for a
 * long run (it also lifts the op limit unless -n is given).
 *
 * The diag line.  After each seed one line (shown folded here):
 *
 *   # fuzz_diag seed=1 node=1 modules=ours ops=6000 calls=6791 ms=5210
 *     unexpected=0 paths=161 cmsg_ok=6 cmsg_ok_kinds=map,dest,read,...
 *     notes=14 note_status=0:9,2:5 dest_rx=33 forks=17
 *     seq=9f0c2b11d4a7e305 kinds=socket:40,close:40,... stalls=0
 *     slow_op=5310 slow_ms=212
 *
 * It starts with "# fuzz_diag ", then KEY=VALUE fields separated by one
 * space; values hold no space; lists are comma-separated, their pairs
 * NAME:COUNT.  Keys keep their meaning and new ones are only appended, so
 * "make reliability" can read:
 *   seed, node    which sequence (node 0: one-node mode)
 *   modules       this node's modules: ours, distro or unknown
 *   ops           ops run (the -n unit); calls: system calls made and
 *                 checked, those of forked children included; ms: time
 *   unexpected    calls that returned an errno outside their kind's set
 *   paths         distinct (call kind, result) pairs reached, the result
 *                 being 0 for success or the errno
 *   cmsg_ok       distinct kinds of SOL_RDS control message carried by a
 *                 successful sendmsg(); cmsg_ok_kinds names them: map, dest,
 *                 read, write, fadd, cswp, mfadd, mcswp, opid ("-": none)
 *   notes         RDS_CMSG_RDMA_STATUS notifications received;
 *                 note_status: per status (RDS_RDMA_*), "-" for none
 *   dest_rx       RDS_CMSG_RDMA_DEST cookies received
 *   forks         children forked and killed
 *   seq           the generator's state at the end (16 hex digits)
 *   kinds         calls per kind (fz_kind_names[])
 *   stalls        ops that blocked FZ_STALL_MS or more (with our modules
 *                 FZ_HANG_MS is a failure; see fz_watchdog())
 *   slow_op, slow_ms  the slowest op and how long it took
 */
#include "rds_fuzz.h"

/* ---------------------------------------------------------------- main */

static void fz_detect_modules(void)
{
	const char *m = getenv("RDS_MODULES");
	const char *all = getenv("RDS_MODULES_ALL");

	if ((m && !strcmp(m, "ours")) ||
	    (!m && !access("/sys/module/rds_zc", F_OK))) {
		fz_mods = FZ_O;
		fz_mods_name = "ours";
	} else if ((m && !strcmp(m, "distro")) ||
		   (!m && !access("/sys/module/rds", F_OK))) {
		fz_mods = FZ_D;
		fz_mods_name = "distro";
	}
	fz_pair_distro = fz_mods == FZ_D || (all && strstr(all, "distro"));
}

/* Two nodes: the control connection of rds_peer.h, then the cases. */
static int fz_main_two(struct rt_case *cases, int n, char *const *only)
{
	const char *nodestr = getenv("RDS_NODE");
	int ret;

	node = nodestr ? atoi(nodestr) : 0;
	if (node != 1 && node != 2) {
		printf("1..0 # SKIP RDS_NODE is not 1 or 2\n");
		return RT_EXIT_SKIP;
	}
	peer_node = 3 - node;
	if (!parse_addr(getenv("RDS_PEER_ADDR"), &addr_peer)) {
		printf("1..0 # SKIP no RDS_PEER_ADDR\n");
		return RT_EXIT_SKIP;
	}
	addr_self = fz_self;
	inet_ntop(AF_INET, &addr_self, addr_self_str, sizeof(addr_self_str));
	inet_ntop(AF_INET, &addr_peer, addr_peer_str, sizeof(addr_peer_str));
	ctl_port = FZ_CTL_PORT;
	port_base = FZ_PORT;
	if (ctl_stash_map())
		return RT_EXIT_FAIL;
	rt_diag("node %d, %s, peer %s, control port %u, modules %s", node,
		addr_self_str, addr_peer_str, ctl_port, fz_mods_name);
	ctl_fd = ctl_connect();
	if (ctl_fd < 0 || ctl_hello(only)) {
		printf("Bail out! no control connection with node %d (%s:%u)\n",
		       peer_node, node == 1 ? addr_self_str : addr_peer_str,
		       ctl_port);
		return RT_EXIT_FAIL;
	}
	ret = rt_run(cases, n, only);
	close(ctl_fd);
	return ret;
}

int main(int argc, char **argv)
{
	static struct rt_case one[] = {
		RT_CASE(sockopt_sweep, 300),
		RT_CASE(seed_1, 0),
		RT_CASE(seed_2, 0),
		RT_CASE(seed_3, 0),
		RT_CASE(seed_4, 0),
	};
	static struct rt_case two[] = {
		{ .name = "peer_seed_1", .fn = test_seed_1, .timeout = 0 },
		{ .name = "peer_seed_2", .fn = test_seed_2, .timeout = 0 },
	};
	static struct rt_case given[] = {
		RT_CASE(seed_given, 0),
	};
	const char *addr = getenv("RDS_ADDR"), *env;
	const char *nodes = getenv("RDS_NODES");
	long ops = -1, secs = -1;
	struct rt_case *cases;
	int opt, ret, n, i;

	while ((opt = getopt(argc, argv, "s:n:t:vK")) != -1) {
		switch (opt) {
		case 's':
			fz_given_seed = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			ops = strtol(optarg, NULL, 0);
			break;
		case 't':
			secs = strtol(optarg, NULL, 0);
			break;
		case 'v':
			fz_verbose++;
			break;
		case 'K':
			fz_known_bugs = 1;
			break;
		default:
			fprintf(stderr,
				"usage: %s [-s SEED] [-n OPS] [-t SECONDS] [-v] [-K] [CASE...]\n",
				argv[0]);
			return 2;
		}
	}
	if (!addr || inet_pton(AF_INET, addr, &fz_self) != 1)
		inet_pton(AF_INET, "127.0.0.1", &fz_self);
	/* IPv6 targets, where the guests have them (vm-run.sh) */
	env = getenv("RDS_ADDR6");
	fz_have6 = env && inet_pton(AF_INET6, env, &fz_self6) == 1;
	env = getenv("RDS_PEER_ADDR6");
	if (!env || inet_pton(AF_INET6, env, &fz_peer6) != 1)
		fz_peer6 = fz_self6;
	env = getenv("RDS_LL6");
	if (!env || inet_pton(AF_INET6, env, &fz_ll6) != 1)
		fz_ll6 = in6addr_loopback;
	env = getenv("RDS_IFINDEX");
	fz_ifindex = env ? (unsigned int)atoi(env) : 0;
	fz_two = nodes && atoi(nodes) == 2 && getenv("RDS_PEER_ADDR") &&
		 *getenv("RDS_PEER_ADDR");
	if (fz_two) {
		fz_max_ops = 0;
		fz_budget_s = 30;
	}
	env = getenv("RDS_FUZZ_SECONDS");
	if (env && atoi(env) > 0) {
		fz_budget_s = atoi(env);
		fz_max_ops = 0;
	}
	if (ops >= 0)
		fz_max_ops = ops;
	if (secs > 0)
		fz_budget_s = secs;
	fz_detect_modules();
	fz_build_ok();

	if (fz_given_seed) {
		cases = given;
		n = ARRAY_SIZE(given);
		given[0].name = fz_two ? "peer_seed_given" : "seed_given";
	} else if (fz_two) {
		cases = two;
		n = ARRAY_SIZE(two);
	} else {
		cases = one;
		n = ARRAY_SIZE(one);
	}
	for (i = 0; i < n; i++) {
		if (cases[i].timeout)
			continue;
		cases[i].timeout = fz_budget_s + 120;
		if (fz_two)
			cases[i].timeout += 120;	/* syncs, the alive check */
	}
	all_cases = cases;
	n_cases = n;

	ret = rds_need_af_rds();
	if (ret)
		return ret;
	if (fz_two)
		return fz_main_two(cases, n, argv + optind);
	return rt_run(cases, n, argv + optind);
}
