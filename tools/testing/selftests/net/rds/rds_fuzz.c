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
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>

#include <linux/rds.h>

#include "rds_test.h"
#include "rds_sock_util.h"
#include "rds_peer.h"

#define FZ_SOCKS	8	/* sockets per seed; slot i on port port0 + i */
#define FZ_LOCAL_CK	16	/* cookie slots 0..15: this node's registrations */
#define FZ_COOKIES	32	/* 16..31: cookies received from the peer */
#define FZ_ARENA	(2UL << 20)	/* memory for MRs and RDMA, guarded */
#define FZ_SBUF		((1UL << 20) + 8192)	/* payloads */
#define FZ_RBUF		(72 * 1024)	/* receives */
#define FZ_CTL		1024	/* control messages of one sendmsg() */
#define FZ_MAXIOV	(UIO_MAXIOV + 8)	/* local iovecs of RDMA_ARGS */
#define FZ_ERRMAX	256
#define FZ_PORT		28000	/* case k: ports FZ_PORT + 32 k + slot */
#define FZ_CTL_PORT	18637	/* two nodes: the control connection */
#define FZ_ABSENT	"10.0.0.200"	/* an address nobody answers */
#define FZ_RCVTIMEO_MS	20
#define FZ_KERNEL_ADDR	0xffffffff81000000ULL
#define FZ_NONCANON	0x0000800000000000ULL
#define FZ_MAGIC	0x525d5a46U
/* The kernel's own flag; recvmsg() and sendmsg() refuse it from users. */
#define FZ_MSG_CMSG_COMPAT	0x80000000U
#define FZ_FAIL_PRINT	12	/* unexpected errnos printed in full per seed */
#define FZ_STALL_MS	5000	/* an op blocked longer is interrupted */
#define FZ_HANG_MS	20000	/* an op of our modules blocked longer fails */
#define FZ_ALIVE_MS	20000	/* for a datagram after the fuzzing */
/* The largest SOL_RDS argument, and the sweep's last length. */
#define FZ_ARG_MAX	sizeof(struct rds_get_mr_for_dest_args)
#define FZ_SWEEP_MAX	(FZ_ARG_MAX + 8)

#ifndef SOCK_MAX
#define SOCK_MAX	(SOCK_PACKET + 1)
#endif

/*
 * The header a message carries when its RDMA_MAP or RDMA_DEST names a
 * region, so that the peer knows what it may aim at.
 */
struct fz_hdr {
	uint32_t magic;		/* FZ_MAGIC */
	uint32_t flags;		/* RDS_RDMA_* of the registration */
	uint64_t len;		/* bytes registered */
	uint32_t atomics;	/* the sender's modules allow atomics on it */
	uint32_t pad;
};

/* Which modules return an errno, and which this node runs. */
#define FZ_O	1	/* ours (rds_zc) */
#define FZ_D	2	/* the distribution's (rds, rds_rdma) */
#define FZ_OD	(FZ_O | FZ_D)

/* ------------------------------------------------------ the generator */

static uint64_t fuzz_state;

/* xorshift64*: the same sequence on every machine for a given seed. */
static uint64_t fuzz_rand(void)
{
	fuzz_state ^= fuzz_state >> 12;
	fuzz_state ^= fuzz_state << 25;
	fuzz_state ^= fuzz_state >> 27;
	return fuzz_state * 0x2545f4914f6cdd1dULL;
}

static void fuzz_seed_state(uint64_t seed)
{
	fuzz_state = seed * 0x9e3779b97f4a7c15ULL + 1;
	if (!fuzz_state)
		fuzz_state = 1;
}

/* Every op draws a fixed count of numbers first, whatever happens next. */
static void fz_draw(uint64_t *r, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		r[i] = fuzz_rand();
}

/* -------------------------------------------------------- call kinds */

enum fz_kind {
	FK_SOCKET, FK_CLOSE, FK_BIND, FK_CONNECT,
	FK_SEND,		/* no SOL_RDS control message */
	FK_SEND_MAP, FK_SEND_DEST, FK_SEND_ARGS, FK_SEND_ATOMIC,
	FK_SEND_MULTI,		/* several SOL_RDS control messages */
	FK_SEND_ODD,		/* types sendmsg() does not take, bad headers */
	FK_RECV,
	FK_SO_CANCEL, FK_SO_GET_MR, FK_SO_GET_MR_DEST, FK_SO_FREE_MR,
	FK_SO_BOOL,		/* RDS_RECVERR, RDS_CONG_MONITOR */
	FK_SO_TSTAMP,		/* SO_TIMESTAMP_OLD/_NEW at SOL_RDS */
	FK_SO_TRANSPORT, FK_SO_LATENCY,
	FK_SO_OTHER,		/* SOL_RDS names that are no option */
	FK_SO_LEVEL,		/* levels other than SOL_RDS and SOL_SOCKET */
	FK_GO_INT,		/* RDS_RECVERR, SO_RDS_TRANSPORT */
	FK_GO_BARRIER, FK_GO_INFO,
	FK_GO_OTHER,		/* other names or levels */
	FK_SOCK_OPT,		/* SOL_SOCKET, both ways */
	FK_IOCTL, FK_POLL, FK_NAME, FK_FORK,
	FK_NR
};

/* Groups of kinds, for errnos every member may return. */
#define FZG_SEND	(FK_NR + 1)	/* FK_SEND .. FK_SEND_ODD */
#define FZG_SET		(FK_NR + 2)	/* FK_SO_* */
#define FZG_GET		(FK_NR + 3)	/* FK_GO_* */
#define FZG_RDMA	(FK_NR + 4)	/* FK_SEND_MAP .. FK_SEND_ODD */
#define FZG_MR		(FK_NR + 5)	/* FK_SO_GET_MR, FK_SO_GET_MR_DEST */
#define FZG_PIN		(FK_NR + 6)	/* the calls that pin user pages */

static const char * const fz_kind_names[FK_NR] = {
	"socket", "close", "bind", "connect",
	"send", "send_map", "send_dest", "send_args", "send_atomic",
	"send_multi", "send_odd", "recv",
	"set_cancel_sent_to", "set_get_mr", "set_get_mr_for_dest",
	"set_free_mr", "set_bool", "set_timestamp", "set_transport",
	"set_rxpath_latency", "set_unknown", "set_other_level",
	"get_int", "get_op_barrier", "get_info", "get_unknown",
	"sol_socket", "ioctl", "poll", "getname", "fork",
};

struct fz_errno {
	unsigned short kind;	/* enum fz_kind or an FZG_* group */
	unsigned char who;	/* FZ_O, FZ_D or FZ_OD */
	unsigned char err;
	const char *why;
};

/*
 * The errnos each kind of call may return, and why.  "Socket layer":
 * the generic code before or after the RDS handler, the same with any
 * module.  Our modules' rules are in net/rds/ (socket.c, send.c, rdma.c,
 * mr.c, rdma_op.c, sockopt.c, info.c, op_barrier.c, recv.c); the
 * distribution's were read in linux-source-6.12 and measured on 6.1.
 */
static const struct fz_errno fz_errnos[] = {
	/* socket() */
	{ FK_SOCKET, FZ_OD, ESOCKTNOSUPPORT,
	  "a type other than SOCK_SEQPACKET, or a protocol other than 0" },
	{ FK_SOCKET, FZ_OD, EINVAL, "socket layer: a type past SOCK_MAX" },

	/* bind() */
	{ FK_BIND, FZ_OD, EINVAL,
	  "length short of the family or of sockaddr_in(6); family not AF_INET(6)" },
	{ FK_BIND, FZ_OD, EINVAL,
	  "0.0.0.0, broadcast or multicast; bound already; port 1 (RDS's probe)" },
	{ FK_BIND, FZ_OD, EINVAL, "socket layer: length over sockaddr_storage" },
	{ FK_BIND, FZ_D, EINVAL, "IPv6 that is not unicast, or link-local without scope" },
	{ FK_BIND, FZ_O, EAFNOSUPPORT, "AF_INET6: this implementation carries no IPv6" },
	{ FK_BIND, FZ_OD, EADDRNOTAVAIL, "no transport serves the address and it is not local" },
	{ FK_BIND, FZ_OD, ENOPROTOOPT,
	  "SO_RDS_TRANSPORT chose a transport that does not serve the address" },
	{ FK_BIND, FZ_OD, EADDRINUSE, "another socket has that address and port" },
	{ FK_BIND, FZ_OD, EFAULT, "socket layer: the address is not readable" },

	/* connect() */
	{ FK_CONNECT, FZ_OD, EINVAL,
	  "length short of the family or sockaddr_in(6); broadcast or multicast" },
	{ FK_CONNECT, FZ_OD, EINVAL, "socket layer: length over sockaddr_storage" },
	{ FK_CONNECT, FZ_D, EINVAL, "IPv6 link-local without scope" },
	{ FK_CONNECT, FZ_OD, EAFNOSUPPORT,
	  "a family other than AF_INET(6); ours: AF_INET6 too (no IPv6)" },
	{ FK_CONNECT, FZ_OD, EDESTADDRREQ, "0.0.0.0" },
	{ FK_CONNECT, FZ_D, EPROTOTYPE,
	  "IPv6 not unicast, or mapped 0.0.0.0, broadcast or multicast" },
	{ FK_CONNECT, FZ_OD, EFAULT, "socket layer: the address is not readable" },

	/* every sendmsg() */
	{ FZG_SEND, FZ_OD, EOPNOTSUPP,
	  "flags other than MSG_DONTWAIT and MSG_ZEROCOPY (OOB, MORE, EOR, NOSIGNAL)" },
	{ FZG_SEND, FZ_OD, EOPNOTSUPP,
	  "MSG_ZEROCOPY on a socket with SO_ZEROCOPY: no transport here has it" },
	{ FZG_SEND, FZ_D, EOPNOTSUPP,
	  "an IPv4 destination from an IPv6-bound socket, or the reverse" },
	{ FZG_SEND, FZ_OD, EINVAL,
	  "msg_namelen short of sockaddr_in; family not AF_INET(6); 0.0.0.0" },
	{ FZG_SEND, FZ_OD, EINVAL,
	  "broadcast or multicast destination; a control header that is not CMSG_OK" },
	{ FZG_SEND, FZ_OD, EINVAL, "socket layer: negative msg_namelen, MSG_CMSG_COMPAT" },
	{ FZG_SEND, FZ_D, EINVAL,
	  "MSG_ZEROCOPY without RDS_CMSG_ZCOPY_COOKIE; IPv6 not unicast" },
	{ FZG_SEND, FZ_O, EAFNOSUPPORT, "an AF_INET6 destination: no IPv6 here" },
	{ FZG_SEND, FZ_OD, ENOTCONN, "unbound, or no destination (no name, not connected)" },
	{ FZG_SEND, FZ_OD, EMSGSIZE, "payload over 1 MiB or over the send buffer" },
	{ FZG_SEND, FZ_OD, EMSGSIZE, "socket layer: more than UIO_MAXIOV payload iovecs" },
	{ FZG_SEND, FZ_OD, EFAULT,
	  "payload, name, iovec array or control buffer not readable" },
	{ FZG_SEND, FZ_OD, ENOBUFS, "the destination port is congested (MSG_DONTWAIT)" },
	{ FZG_SEND, FZ_OD, ENOBUFS, "socket layer: control buffer over optmem_max" },
	{ FZG_SEND, FZ_OD, EAGAIN, "the send buffer is full (MSG_DONTWAIT)" },
	{ FZG_SEND, FZ_D, EAGAIN, "the connection is being destroyed (rds_destroy_pending)" },
	{ FZG_SEND, FZ_O, ENETUNREACH,
	  "bound to 127/8 (local delivery), sending to another host" },

	/* control messages of sendmsg() */
	{ FK_SEND_MAP, FZ_OD, EINVAL,
	  "cmsg shorter than rds_get_mr_args; MAP twice; MAP with DEST" },
	{ FK_SEND_MAP, FZ_OD, EINVAL, "zero bytes, or a range that wraps" },
	{ FK_SEND_MAP, FZ_O, EINVAL, "unknown flag bits; over 1 MiB + a page" },
	{ FK_SEND_MAP, FZ_D, EMSGSIZE, "a region over 1 MiB + a page" },
	{ FK_SEND_MAP, FZ_OD, EFAULT,
	  "pages not there or not writable, or cookie_addr not writable" },
	{ FK_SEND_MAP, FZ_O, EOPNOTSUPP,
	  "to an address of this host (local delivery has no RDMA)" },
	{ FK_SEND_MAP, FZ_OD, EOPNOTSUPP, "bound where the transport registers nothing (127/8)" },
	{ FK_SEND_MAP, FZ_O, EAGAIN, "the MR pool is exhausted" },
	{ FK_SEND_MAP, FZ_D, EAGAIN,
	  "no connection to register through yet (get_mr's ENODEV becomes EAGAIN)" },
	{ FK_SEND_MAP, FZ_O, EBUSY, "the pages could not be DMA-mapped" },
	{ FK_SEND_MAP, FZ_O, EIO, "the registration QP is in error" },
	{ FK_SEND_MAP, FZ_O, ENODEV, "the RDMA device went away" },
	{ FK_SEND_MAP, FZ_D, ENOMEM, "the FRMR pool could not give an MR" },

	{ FK_SEND_DEST, FZ_OD, EINVAL,
	  "cmsg shorter than a cookie; DEST twice; DEST with MAP" },
	{ FK_SEND_DEST, FZ_OD, EINVAL,
	  "a cookie this socket does not have: stale, foreign, random, 0" },
	{ FK_SEND_DEST, FZ_O, EOPNOTSUPP, "to an address of this host" },

	{ FK_SEND_ARGS, FZ_OD, EINVAL,
	  "cmsg shorter than rds_rdma_args; two ARGS; ARGS with MAP or DEST" },
	{ FK_SEND_ARGS, FZ_OD, EINVAL, "nr_local 0; a local iovec that wraps" },
	{ FK_SEND_ARGS, FZ_O, EINVAL,
	  "unknown flags; total 0, over 1 MiB + a page or not remote_vec.bytes" },
	{ FK_SEND_ARGS, FZ_O, EINVAL, "ARGS with an atomic" },
	{ FK_SEND_ARGS, FZ_D, EINVAL,
	  "a zero-length local iovec; more local bytes than remote_vec.bytes" },
	{ FK_SEND_ARGS, FZ_OD, EMSGSIZE, "nr_local over UIO_MAXIOV" },
	{ FK_SEND_ARGS, FZ_D, EMSGSIZE, "remote_vec.bytes over 1 MiB" },
	{ FK_SEND_ARGS, FZ_OD, EFAULT,
	  "local_vec_addr not readable; local pages not there (or read-only for READ)" },
	{ FK_SEND_ARGS, FZ_O, EOPNOTSUPP, "to an address of this host" },
	{ FK_SEND_ARGS, FZ_D, EOPNOTSUPP, "the loopback transport has no xmit_rdma" },

	{ FK_SEND_ATOMIC, FZ_OD, EINVAL,
	  "cmsg shorter than rds_atomic_args; two atomics" },
	{ FK_SEND_ATOMIC, FZ_O, EINVAL,
	  "unknown flags; a misaligned remote address; with ARGS" },
	{ FK_SEND_ATOMIC, FZ_D, EINVAL, "an atomic with MAP or DEST" },
	{ FK_SEND_ATOMIC, FZ_OD, EFAULT, "local_addr misaligned, not there or not writable" },
	{ FK_SEND_ATOMIC, FZ_O, EOPNOTSUPP,
	  "to an address of this host; a device without (masked) atomics" },
	{ FK_SEND_ATOMIC, FZ_OD, EOPNOTSUPP, "bound to 127/8: no transport with atomics" },
	{ FK_SEND_ATOMIC, FZ_D, EOPNOTSUPP, "the loopback transport has no xmit_atomic" },

	{ FZG_PIN, FZ_OD, EOVERFLOW,
	  "6.12's pin_user_pages_fast(): pages that run past the top of memory" },

	{ FK_SEND_ODD, FZ_OD, EINVAL,
	  "a SOL_RDS type sendmsg() does not take (STATUS, CONG_UPDATE, unknown)" },
	{ FK_SEND_ODD, FZ_O, EINVAL, "RDS_CMSG_OP_ID without an operation" },
	{ FK_SEND_ODD, FZ_D, EINVAL,
	  "RDS_CMSG_OP_ID (not the distribution's); a ZCOPY_COOKIE without zero-copy" },
	{ FK_SEND_ODD, FZ_O, EOPNOTSUPP, "RDS_CMSG_ZCOPY_COOKIE: zero-copy is not carried" },
	{ FZG_RDMA, FZ_O, EFAULT, "RDS_CMSG_OP_ID's address is not writable" },
	{ FZG_RDMA, FZ_O, EINVAL, "RDS_CMSG_OP_ID twice" },

	/* recvmsg() */
	{ FK_RECV, FZ_OD, EAGAIN, "nothing queued (MSG_DONTWAIT); MSG_ERRQUEUE: none" },
	{ FK_RECV, FZ_OD, EFAULT,
	  "buffer, name, control buffer or iovec array not accessible" },
	{ FK_RECV, FZ_OD, EINVAL, "socket layer: negative msg_namelen, MSG_CMSG_COMPAT" },
	{ FK_RECV, FZ_OD, EMSGSIZE, "socket layer: more than UIO_MAXIOV iovecs" },

	/* setsockopt() */
	{ FZG_SET, FZ_OD, EFAULT, "optval not readable" },
	{ FZG_SET, FZ_OD, EINVAL, "socket layer: negative optlen" },
	{ FK_SO_CANCEL, FZ_OD, ENOTCONN, "the socket is not bound" },
	{ FK_SO_CANCEL, FZ_OD, EINVAL, "optlen short of sockaddr_in" },
	{ FZG_MR, FZ_OD, EINVAL,
	  "optlen not the argument's size; zero bytes; a range that wraps" },
	{ FZG_MR, FZ_O, EINVAL, "unknown flag bits; over 1 MiB + a page" },
	{ FZG_MR, FZ_D, EMSGSIZE, "a region over 1 MiB + a page" },
	{ FZG_MR, FZ_OD, ENOTCONN, "the socket is not bound" },
	{ FZG_MR, FZ_OD, EOPNOTSUPP,
	  "bound where the transport registers nothing (127/8)" },
	{ FZG_MR, FZ_D, EOPNOTSUPP,
	  "its fast registration needs a connection's QP (measured on rxe)" },
	{ FZG_MR, FZ_D, ENODEV, "no connection to register through" },
	{ FZG_MR, FZ_D, ENOMEM, "the FRMR pool could not give an MR" },
	{ FZG_MR, FZ_O, EAGAIN, "the MR pool is exhausted" },
	{ FZG_MR, FZ_O, EBUSY, "the pages could not be DMA-mapped" },
	{ FZG_MR, FZ_O, EIO, "the registration QP is in error" },
	{ FZG_MR, FZ_O, ENODEV, "the RDMA device went away" },
	{ FK_SO_GET_MR_DEST, FZ_O, EAFNOSUPPORT, "an AF_INET6 destination" },
	{ FK_SO_GET_MR_DEST, FZ_O, EINVAL, "a destination family other than AF_INET" },
	{ FK_SO_FREE_MR, FZ_OD, EINVAL,
	  "optlen not sizeof(rds_free_mr_args); a cookie this socket does not have" },
	{ FK_SO_FREE_MR, FZ_D, EINVAL, "cookie 0 (flush) on a socket with no transport" },
	{ FK_SO_FREE_MR, FZ_O, EINTR,
	  "RDS_RDMA_INVALIDATE: a signal ended the wait for a key a message carries" },
	{ FK_SO_FREE_MR, FZ_O, ENOMEM, "no memory for the RDS_RDMA_INVALIDATE waiter" },
	{ FK_SO_BOOL, FZ_OD, EINVAL, "optlen short of an int" },
	{ FK_SO_TSTAMP, FZ_O, EINVAL, "optlen short of an int" },
	{ FK_SO_TSTAMP, FZ_D, EFAULT, "optlen not sizeof(int) (the distribution's errno)" },
	{ FK_SO_TRANSPORT, FZ_OD, EOPNOTSUPP, "the transport is chosen already (bound or set)" },
	{ FK_SO_TRANSPORT, FZ_OD, EINVAL, "optlen not sizeof(int); a type out of range" },
	{ FK_SO_TRANSPORT, FZ_OD, ENOPROTOOPT, "no transport of that type (TCP, the gap)" },
	{ FK_SO_LATENCY, FZ_OD, EFAULT,
	  "any fault: optlen, more than 3 traces, a position over 2" },
	{ FK_SO_OTHER, FZ_OD, ENOPROTOOPT, "no such SOL_RDS option" },
	{ FK_SO_LEVEL, FZ_OD, ENOPROTOOPT, "RDS has no options at this level" },

	/* getsockopt() */
	{ FZG_GET, FZ_OD, EFAULT, "optlen or optval not accessible" },
	{ FK_GO_INT, FZ_OD, EINVAL, "*optlen short of an int" },
	{ FK_GO_BARRIER, FZ_O, EINVAL,
	  "*optlen short of rds_op_barrier; unknown family; wait_id not handed out" },
	{ FK_GO_BARRIER, FZ_O, EAFNOSUPPORT, "an AF_INET6 destination" },
	{ FK_GO_BARRIER, FZ_O, EAGAIN, "wait_id not reached within SO_RCVTIMEO" },
	{ FK_GO_BARRIER, FZ_D, ENOPROTOOPT, "the distribution has no RDS_OP_BARRIER" },
	{ FK_GO_INFO, FZ_OD, ENOSPC, "the table does not fit; *optlen says what it needs" },
	{ FK_GO_INFO, FZ_OD, EINVAL, "negative *optlen" },
	{ FK_GO_INFO, FZ_D, EINVAL, "optval + *optlen wraps or is over INT_MAX - PAGE_SIZE" },
	{ FK_GO_INFO, FZ_OD, ENOPROTOOPT, "a table this implementation does not have" },
	{ FK_GO_INFO, FZ_D, EAGAIN, "optval's pages could not be pinned (pinned first)" },
	{ FK_GO_OTHER, FZ_OD, ENOPROTOOPT, "no such option, or a level RDS does not have" },

	/* SOL_SOCKET options */
	{ FK_SOCK_OPT, FZ_OD, EINVAL,
	  "socket layer: optlen short; SO_ZEROCOPY other than 0 or 1" },
	{ FK_SOCK_OPT, FZ_OD, EDOM, "socket layer: SO_RCVTIMEO with tv_usec out of range" },
	{ FK_SOCK_OPT, FZ_OD, EFAULT, "socket layer: optval or optlen not accessible" },

	/* ioctl() */
	{ FK_IOCTL, FZ_OD, ENOTTY, "a command RDS does not have" },
	{ FK_IOCTL, FZ_OD, ENOTTY,
	  "SIOCRDSSETTOS without a transport that carries a TOS (unbound, 127/8)" },
	{ FK_IOCTL, FZ_O, EINVAL, "SIOCRDSSETTOS when set already or after the first send" },
	{ FK_IOCTL, FZ_D, EINVAL, "SIOCRDSSETTOS when set already or once connected" },
	{ FK_IOCTL, FZ_OD, EFAULT, "the argument is not accessible" },

	/* getsockname(), getpeername() */
	{ FK_NAME, FZ_OD, ENOTCONN, "getpeername() of a socket not connected" },
	{ FK_NAME, FZ_OD, EFAULT, "socket layer: address or length not accessible" },
	{ FK_NAME, FZ_OD, EINVAL, "socket layer: negative *addrlen" },
};

/* fz_ok[kind][errno]: accepted for this node's modules. */
static unsigned char fz_ok[FK_NR][FZ_ERRMAX];
static unsigned int fz_mods = FZ_OD;	/* FZ_O, FZ_D, or FZ_OD if unknown */

static int fz_in_group(unsigned int group, int k)
{
	switch (group) {
	case FZG_SEND:
		return k >= FK_SEND && k <= FK_SEND_ODD;
	case FZG_RDMA:
		return k >= FK_SEND_MAP && k <= FK_SEND_ODD;
	case FZG_SET:
		return k >= FK_SO_CANCEL && k <= FK_SO_LEVEL;
	case FZG_GET:
		return k >= FK_GO_INT && k <= FK_GO_OTHER;
	case FZG_MR:
		return k == FK_SO_GET_MR || k == FK_SO_GET_MR_DEST;
	case FZG_PIN:
		return (k >= FK_SEND_MAP && k <= FK_SEND_MULTI && k != FK_SEND_DEST) ||
		       k == FK_SO_GET_MR || k == FK_SO_GET_MR_DEST;
	default:
		return (int)group == k;
	}
}

/*
 * The accepted sets for this node.  A message with several control
 * messages may fail as any of them does.
 */
static void fz_build_ok(void)
{
	unsigned int i;
	int k, e;

	memset(fz_ok, 0, sizeof(fz_ok));
	for (i = 0; i < ARRAY_SIZE(fz_errnos); i++) {
		if (!(fz_errnos[i].who & fz_mods))
			continue;
		for (k = 0; k < FK_NR; k++)
			if (fz_in_group(fz_errnos[i].kind, k))
				fz_ok[k][fz_errnos[i].err] = 1;
	}
	for (k = FK_SEND; k <= FK_SEND_ODD; k++)
		for (e = 0; e < FZ_ERRMAX; e++)
			if (fz_ok[k][e])
				fz_ok[FK_SEND_MULTI][e] = 1;
}

/* ----------------------------------------------------------- the state */

/* What a cookie slot holds. */
enum fz_ck_state { FZ_CK_NONE, FZ_CK_LIVE, FZ_CK_MAYBE, FZ_CK_FREED };

struct fz_cookie {
	uint64_t cookie;	/* as the kernel wrote it; 0: none */
	uint64_t len;		/* bytes behind it; 0: unknown */
	uint32_t flags;		/* RDS_RDMA_* it was registered with */
	int32_t sock;		/* owning slot, -1: the peer's */
	uint32_t state;		/* enum fz_ck_state */
	uint32_t atomics;	/* its owner's modules allow atomics on it */
	uint32_t from_map;	/* registered by RDS_CMSG_RDMA_MAP: a message may hold it */
};

/* Bits of cmsg_ok: kinds of control message a successful send carried. */
enum {
	FZ_CM_MAP, FZ_CM_DEST, FZ_CM_READ, FZ_CM_WRITE, FZ_CM_FADD,
	FZ_CM_CSWP, FZ_CM_MFADD, FZ_CM_MCSWP, FZ_CM_OPID, FZ_CM_NR
};

static const char * const fz_cm_names[FZ_CM_NR] = {
	"map", "dest", "read", "write", "fadd", "cswp", "mfadd", "mcswp",
	"opid",
};

#define FZ_NOTE_NR	(RDS_RDMA_OTHER_ERROR + 2)	/* the last: unknown */

struct fz_stats {
	unsigned long ops, calls, bad, forks, dest_rx, stalls;
	unsigned long slow_op;			/* the slowest op, and its time */
	long long slow_ms;
	unsigned long kind_calls[FK_NR];
	unsigned long notes[FZ_NOTE_NR];
	unsigned char seen[FK_NR][FZ_ERRMAX];	/* [kind][0 or errno] */
	unsigned int cmsg_ok;			/* 1 << FZ_CM_* */
};

/* Shared with forked children: what they do counts, and is reported. */
struct fz_shared {
	struct fz_stats st;
	struct fz_cookie ck[FZ_COOKIES + 1];	/* the last: FZ_CK_STABLE */
	unsigned int peer_next;		/* next slot for a peer's cookie */
	uint64_t op_ids[4];		/* RDS_CMSG_OP_ID lands here */
	char child_fail[768];		/* a child's first unexpected errno */
	unsigned long child_bad;
	long long op_start;		/* rt_now_ms() at the running op's start, 0 */
	unsigned long op_no;		/* the running op, for the watcher */
};

struct fz {
	uint64_t seed;
	int node;			/* 0: one node; 1 or 2 */
	int two;			/* fuzzing a peer */
	unsigned long op;		/* 1-based number of the running op */
	unsigned long max_ops;		/* 0: no limit */
	uint64_t seq;			/* the generator's state after the ops */
	long long deadline;		/* rt_now_ms() at which to stop */
	int fd[FZ_SOCKS];
	unsigned short port0;		/* slot i's port: port0 + i */
	struct in_addr self, peer, absent;
	unsigned char *arena;		/* FZ_ARENA bytes, a guard page after */
	unsigned char *sbuf, *rbuf;
	unsigned char *ro;		/* two read-only pages */
	unsigned char *none;		/* a PROT_NONE page */
	uint64_t hole;			/* an address with nothing mapped */
	struct rds_iovec *iov;		/* FZ_MAXIOV local iovecs */
	union {
		unsigned char buf[FZ_CTL];
		struct cmsghdr align;
	} ctl;
	union {
		unsigned char buf[FZ_SWEEP_MAX + 64];
		struct rds_get_mr_args mr;
		struct rds_get_mr_for_dest_args mrd;
		struct rds_free_mr_args free;
		struct rds_rx_trace_so trace;
		struct rds_op_barrier barrier;
		struct sockaddr_in sin;
		int val;
	} opt;
	char desc[1024];
	char stall_desc[1024];		/* the call the watchdog interrupted */
	int stall_kind, stall_err;	/* and how it ended */
	struct fz_shared *sh;
};

static int fz_verbose;
static volatile sig_atomic_t fz_stalled;	/* see fz_watchdog() */
/*
 * -K: also make the calls that hit known kernel bugs or waits without
 * bound.  Without it:
 * - RDS_FREE_MR carries RDS_RDMA_INVALIDATE only for a cookie of
 *   RDS_GET_MR: with our modules, RDS_FREE_MR with RDS_RDMA_INVALIDATE
 *   of an MR that a queued message still holds (RDS_CMSG_RDMA_MAP on a
 *   message to a peer that does not answer) waits until that message is
 *   done with, which may be never: this fuzzer found it waiting in D
 *   state, unkillable; since 4fb6fd9 a signal ends the wait (EINTR), and
 *   with -K the watchdog's signal does, which is then no failure;
 * - on the distribution's modules, atomics, and on one node
 *   RDMA_MAP, go to the absent address only (see fz_send()).
 */
static int fz_known_bugs;
static int fz_in_child;			/* in a forked child */
static const char *fz_mods_name = "unknown";

/* ------------------------------------------------------------ checking */

static void __attribute__((format(printf, 2, 3)))
fz_desc(struct fz *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f->desc, sizeof(f->desc), fmt, ap);
	va_end(ap);
}

/* Append to the description of the call being built. */
static void __attribute__((format(printf, 2, 3)))
fz_more(struct fz *f, const char *fmt, ...)
{
	size_t n = strlen(f->desc);
	va_list ap;

	if (n + 1 >= sizeof(f->desc))
		return;
	va_start(ap, fmt);
	vsnprintf(f->desc + n, sizeof(f->desc) - n, fmt, ap);
	va_end(ap);
}

/*
 * Count a call of kind @k that returned @ret with @err, and fail it if
 * the errno is not one its kind may return here.
 */
static void fz_result(struct fz *f, enum fz_kind k, long ret, int err)
{
	struct fz_stats *st = &f->sh->st;
	int e = ret < 0 ? err : 0;
	char line[sizeof(f->desc) + 256];

	st->calls++;
	st->kind_calls[k]++;
	if (fz_stalled == 1) {
		fz_stalled = 2;
		memcpy(f->stall_desc, f->desc, sizeof(f->desc));
		f->stall_kind = k;
		f->stall_err = ret < 0 ? err : 0;
	}
	if (e >= 0 && e < FZ_ERRMAX)
		st->seen[k][e] = 1;
	if (fz_verbose)
		dprintf(STDOUT_FILENO, "# %s op %lu: %s: %s = %ld%s%s\n",
			fz_in_child ? "child" : "", f->op, fz_kind_names[k],
			f->desc, ret, ret < 0 ? " " : "",
			ret < 0 ? rt_errname(err) : "");
	if (ret >= 0 || (e > 0 && e < FZ_ERRMAX && fz_ok[k][e]))
		return;

	st->bad++;
	snprintf(line, sizeof(line),
		 "seed %llu node %d op %lu%s: %s: %s returned %ld (%s), not an errno this call may return with %s modules; replay: rds_fuzz -s %llu -n %lu",
		 (unsigned long long)f->seed, f->node, f->op,
		 fz_in_child ? " (forked child)" : "", fz_kind_names[k],
		 f->desc, ret, rt_errname(err), fz_mods_name,
		 (unsigned long long)f->seed, f->op);
	if (fz_in_child) {
		if (!f->sh->child_fail[0])
			snprintf(f->sh->child_fail, sizeof(f->sh->child_fail),
				 "%.*s", (int)sizeof(f->sh->child_fail) - 1, line);
		f->sh->child_bad++;
		return;
	}
	if (st->bad <= FZ_FAIL_PRINT)
		rt_fail("%s", line);
	else
		rt_failures++;
}

/* Make a call, keep its errno, check it; the call's value. */
#define FZ_CALL(f, kind, call) ({				\
	long __r;						\
	int __e;						\
	if (fz_verbose > 1)					\
		dprintf(STDOUT_FILENO, "# > %s\n", (f)->desc);	\
	errno = 0;						\
	__r = (long)(call);					\
	__e = errno;						\
	fz_result(f, kind, __r, __e);				\
	errno = __e;						\
	__r;							\
})

/* --------------------------------------------------- arguments, mutated */

/* A pointer to a user buffer: mostly @good, 1 in 8 a bad one. */
static uint64_t fz_ptr(struct fz *f, void *good, uint64_t r, const char **what)
{
	switch (r % 64) {
	case 0:
		*what = "NULL";
		return 0;
	case 1:
		*what = "kernel";
		return FZ_KERNEL_ADDR;
	case 2:
		*what = "unmapped";
		return f->hole;
	case 3:
		*what = "PROT_NONE";
		return (uintptr_t)f->none;
	case 4:
		*what = "read-only";
		return (uintptr_t)f->ro;
	case 5:
		*what = "non-canonical";
		return FZ_NONCANON;
	case 6:
		*what = "top";
		return (uint64_t)-4096;
	case 7:
		*what = "odd";
		return good ? (uintptr_t)good + 1 : 1;
	default:
		*what = "ok";
		return (uintptr_t)good;
	}
}

/*
 * Where local memory of an MR or an RDMA starts, for @len bytes: mostly
 * in the arena (any alignment), 1 in 4 somewhere bad.
 */
static uint64_t fz_mem(struct fz *f, uint64_t len, uint64_t r, const char **what)
{
	uint64_t room = len < FZ_ARENA ? FZ_ARENA - len : 1;

	switch (r % 32) {
	case 0:
		*what = "kernel";
		return FZ_KERNEL_ADDR;
	case 1:
		*what = "unmapped";
		return f->hole;
	case 2:
		*what = "PROT_NONE";
		return (uintptr_t)f->none;
	case 3:
		*what = "read-only";
		return (uintptr_t)f->ro;
	case 4:
		*what = "NULL";
		return 0;
	case 5:
		*what = "non-canonical";
		return FZ_NONCANON;
	case 6:
		*what = "wrap";
		return (uint64_t)-4096;
	case 7:
		*what = "arena-end";	/* runs into the guard page */
		return (uintptr_t)f->arena + FZ_ARENA - 1 - (r >> 8) % 64;
	default:
		*what = "arena";
		return (uintptr_t)f->arena + (r >> 8) % room;
	}
}

/* A length for an MR or an RDMA: mostly up to 64 KiB, or an edge. */
static uint64_t fz_rlen(uint64_t r)
{
	static const uint64_t edges[] = {
		0, 1, 8, 4095, 4096, 4097, 1 << 20, (1 << 20) + 4096,
		(1 << 20) + 4097, 1ULL << 32, ~0ULL, ~0ULL - 4095, 1ULL << 63,
		2 << 20,
	};

	if (r % 4)
		return 1 + (r >> 8) % 65536;
	return edges[(r >> 2) % ARRAY_SIZE(edges)];
}

/* RDS_RDMA_* flags: mostly valid ones, 1 in 32 with unknown bits. */
static uint64_t fz_rflags(uint64_t r, uint64_t valid)
{
	uint64_t fl = r & valid;

	if ((r >> 16) % 32 == 0)
		fl |= (r >> 21) % 2 ? 0x80 : 1ULL << 40;
	return fl;
}

/*
 * A socket address: the peer's sockets mostly (on one node this node's
 * own, or the absent address), this node's, loopback, bad ones.
 * Returns its length, possibly mutated.
 */
static socklen_t fz_sin(struct fz *f, uint64_t r, struct sockaddr_storage *ss,
			const char **what)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	unsigned int pick = r % 32, slot = (r >> 16) % FZ_SOCKS;
	socklen_t len = sizeof(*sin);
	unsigned short port;

	memset(ss, 0, sizeof(*ss));
	switch ((r >> 8) % 8) {
	case 6:
		port = 0;
		break;
	case 7:
		port = (unsigned short)(r >> 24);
		break;
	default:
		port = f->port0 + slot;
	}
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	*what = "peer";
	if (pick < 16) {
		if (f->two)
			sin->sin_addr = f->peer;
		else if (pick < 10)
			sin->sin_addr = f->self;
		else
			sin->sin_addr = f->absent, *what = "absent";
	} else if (pick < 21) {
		sin->sin_addr = f->self;
		*what = "self";
	} else {
		switch (pick) {
		case 21:
			sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
			*what = "127.0.0.1";
			break;
		case 22:
			sin->sin_addr = f->absent;
			*what = "absent";
			break;
		case 23:
			inet_pton(AF_INET, "192.0.2.1", &sin->sin_addr);
			*what = "192.0.2.1";
			break;
		case 24:
			*what = "0.0.0.0";
			break;
		case 25:
			sin->sin_addr.s_addr = htonl(INADDR_BROADCAST);
			*what = "broadcast";
			break;
		case 26:
			inet_pton(AF_INET, "224.0.0.1", &sin->sin_addr);
			*what = "multicast";
			break;
		case 27:
			inet_pton(AF_INET, "127.0.0.2", &sin->sin_addr);
			*what = "127.0.0.2";
			break;
		case 28:
			sin6->sin6_family = AF_INET6;
			sin6->sin6_port = htons(port);
			sin6->sin6_addr = in6addr_loopback;
			len = sizeof(*sin6);
			*what = "::1";
			break;
		case 29:
			sin6->sin6_family = AF_INET6;
			sin6->sin6_port = htons(port);
			sin6->sin6_addr.s6_addr[10] = 0xff;
			sin6->sin6_addr.s6_addr[11] = 0xff;
			memcpy(&sin6->sin6_addr.s6_addr[12], &f->self, 4);
			len = sizeof(*sin6);
			*what = "v4-mapped";
			break;
		case 30:
			sin->sin_family = AF_UNSPEC;
			*what = "AF_UNSPEC";
			break;
		default:
			sin->sin_family = (sa_family_t)(r >> 40);
			sin->sin_addr.s_addr = (uint32_t)(r >> 8);
			*what = "random";
		}
	}
	switch ((r >> 48) % 32) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return sizeof(sa_family_t);
	case 3:
		return sizeof(*sin) - 1;
	case 4:
		return sizeof(*sin6);
	case 5:
		return sizeof(*ss) + 1;	/* socket layer: EINVAL */
	default:
		return len;
	}
}

static const char *fz_sin_str(const struct sockaddr_storage *ss, socklen_t len)
{
	static char buf[2][96];
	static int which;
	const struct sockaddr_in *sin = (const void *)ss;
	char a[INET6_ADDRSTRLEN] = "?";

	which ^= 1;
	if (ss->ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr,
			  a, sizeof(a));
	else
		inet_ntop(AF_INET, &sin->sin_addr, a, sizeof(a));
	snprintf(buf[which], sizeof(buf[which]), "{fam %u %s port %u len %u}",
		 ss->ss_family, a, ntohs(sin->sin_port), len);
	return buf[which];
}

/* An address as a run-independent name: "arena+off", "ro+off", ... */
static const char *fz_where(struct fz *f, uint64_t a)
{
	static char buf[4][40];
	static int which;
	char *b = buf[which++ % 4];

	if (a >= (uintptr_t)f->arena && a < (uintptr_t)f->arena + FZ_ARENA + 4096)
		snprintf(b, 40, "arena+%llx", (unsigned long long)(a - (uintptr_t)f->arena));
	else if (a >= (uintptr_t)f->ro && a < (uintptr_t)f->ro + 8192)
		snprintf(b, 40, "ro+%llx", (unsigned long long)(a - (uintptr_t)f->ro));
	else if (a >= (uintptr_t)f->none && a < (uintptr_t)f->none + 4096)
		snprintf(b, 40, "none+%llx", (unsigned long long)(a - (uintptr_t)f->none));
	else if (a == f->hole)
		snprintf(b, 40, "unmapped");
	else
		snprintf(b, 40, "%llx", (unsigned long long)a);
	return b;
}

/* ------------------------------------------------------------- cookies */

static const char * const fz_ck_state_names[] = {
	"none", "live", "maybe", "freed",
};

/* ------------------------------------------------ control messages */

/* A sendmsg()'s control messages, being built into f->ctl. */
struct fz_msg {
	size_t used;		/* bytes of f->ctl.buf */
	unsigned int cm;	/* 1 << FZ_CM_* of the SOL_RDS ones */
	int hdr;		/* the payload starts with h */
	struct fz_hdr h;
	int map_slot;		/* the slot an RDMA_MAP writes, or -1 */
	struct fz_cookie map_old;	/* what it held */
	int once_slot;		/* a peer slot a USE_ONCE MR is used from */
	int remote_bad;		/* an RDMA the peer will refuse */
	int atomic;		/* carries an atomic (see fz_send()) */
	int map;		/* carries an RDMA_MAP */
};

/* Append a control message with @len bytes of data; its data. */
static void *fz_cmsg(struct fz *f, struct fz_msg *m, int level, int type,
		     size_t len)
{
	struct cmsghdr *c;

	ASSERT_TRUE(m->used + CMSG_SPACE(len) <= sizeof(f->ctl.buf),
		    "control buffer full");
	c = (struct cmsghdr *)(f->ctl.buf + m->used);
	memset(c, 0, CMSG_SPACE(len));
	c->cmsg_level = level;
	c->cmsg_type = type;
	c->cmsg_len = CMSG_LEN(len);
	m->used += CMSG_SPACE(len);
	return CMSG_DATA(c);
}

/* The length of a control message's data: mostly right, now and then short. */
static size_t fz_cmsg_len(size_t good, uint64_t r)
{
	switch (r % 32) {
	case 0:
		return good - 8;
	case 1:
		return good + 8;
	default:
		return good;
	}
}

/* Which cookie slot is the peer's stable MR. */
#define FZ_CK_STABLE	FZ_COOKIES

enum { FZ_CKT_OWN, FZ_CKT_PEER };

/*
 * A cookie for socket @s to name, for an RDMA at the peer (FZ_CKT_PEER)
 * or in its own DEST or FREE_MR (FZ_CKT_OWN): 1 in 64 zero, 1 in 64
 * random, 2 in 64 any slot (foreign, stale...), 2 in 64 of the other
 * kind, else the kind asked for.  A peer cookie is its stable MR 15 times
 * in 16, else one of those it sent.  The draws are the same whatever the
 * slots hold.  The slot it came from, or -1, in *slot.
 */
static uint64_t fz_cookie(struct fz *f, int s, uint64_t r0, uint64_t r1,
			  int want, int *slot)
{
	struct fz_cookie *ck = f->sh->ck;
	unsigned int mode = r0 % 64, i, n, pick;
	int found = -1, peer = want == FZ_CKT_PEER;

	*slot = -1;
	if (mode == 0) {
		fz_more(f, " ck=0");
		return 0;
	}
	if (mode == 1) {
		fz_more(f, " ck=random:%llx", (unsigned long long)r1);
		return r1;
	}
	if (mode < 4) {
		found = (r1 >> 8) % FZ_COOKIES;
		goto out;
	}
	if (mode < 6)
		peer = !peer;
	if (peer && f->two) {
		if ((r1 >> 60) && ck[FZ_CK_STABLE].state == FZ_CK_LIVE) {
			found = FZ_CK_STABLE;
			goto out;
		}
		/* A live one the peer sent, from r1 on. */
		n = FZ_COOKIES - FZ_LOCAL_CK;
		for (i = 0; i < n && found < 0; i++) {
			pick = FZ_LOCAL_CK + (r1 + i) % n;
			if (ck[pick].state == FZ_CK_LIVE || i == n - 1)
				found = pick;
		}
	} else {
		/* One of @s's own, live, if it has one. */
		for (i = 0; i < FZ_LOCAL_CK && found < 0; i++) {
			pick = (r1 + i) % FZ_LOCAL_CK;
			if ((ck[pick].state == FZ_CK_LIVE && ck[pick].sock == s) ||
			    i == FZ_LOCAL_CK - 1)
				found = pick;
		}
	}
out:
	*slot = found;
	fz_more(f, " ck=%s%d:%s:%llx", found == FZ_CK_STABLE ? "stable" : "s",
		found, fz_ck_state_names[ck[found].state % 4],
		(unsigned long long)ck[found].cookie);
	return ck[found].cookie;
}

/* Slots of a closed socket hold stale cookies from now on. */
static void fz_cookies_stale(struct fz *f, int s)
{
	int i;

	for (i = 0; i < FZ_LOCAL_CK; i++)
		if (f->sh->ck[i].sock == s && f->sh->ck[i].state != FZ_CK_NONE)
			f->sh->ck[i].state = FZ_CK_FREED;
}

/* A cookie the peer sent; @h the header of its message, if it had one. */
static void fz_cookie_rx(struct fz *f, uint64_t cookie, const struct fz_hdr *h)
{
	struct fz_cookie *c;
	unsigned int n = FZ_COOKIES - FZ_LOCAL_CK;

	f->sh->st.dest_rx++;
	c = &f->sh->ck[FZ_LOCAL_CK + f->sh->peer_next++ % n];
	memset(c, 0, sizeof(*c));
	c->cookie = cookie;
	c->sock = -1;
	c->state = FZ_CK_LIVE;
	if (h) {
		c->len = h->len;
		c->flags = h->flags;
		c->atomics = h->atomics;
	}
}

/* The length behind a slot's cookie for an RDMA: what is known, or 1. */
static uint64_t fz_ck_len(struct fz *f, int slot)
{
	uint64_t len = slot >= 0 ? f->sh->ck[slot].len : 0;

	if (!len)
		return 1;
	return len > 65536 ? 65536 : len;
}

/* Is this an RDMA the peer will carry out, as far as we know? */
static int fz_ck_good(struct fz *f, int slot)
{
	return slot == FZ_CK_STABLE ||
	       (slot >= FZ_LOCAL_CK && f->sh->ck[slot].state == FZ_CK_LIVE &&
		f->sh->ck[slot].len);
}

/* RDS_CMSG_RDMA_MAP: register part of the arena, the cookie to a slot. */
static void fz_build_map(struct fz *f, struct fz_msg *m)
{
	struct rds_get_mr_args a;
	const char *where, *cka = "slot";
	unsigned int slot;
	uint64_t r[6];
	size_t len;
	void *d;

	fz_draw(r, 6);
	memset(&a, 0, sizeof(a));
	slot = r[0] % FZ_LOCAL_CK;
	a.vec.bytes = fz_rlen(r[1]);
	a.vec.addr = fz_mem(f, a.vec.bytes, r[2], &where);
	switch (r[3] % 16) {
	case 0:
		cka = "none";
		break;
	case 1:
		cka = "kernel";
		a.cookie_addr = FZ_KERNEL_ADDR;
		break;
	case 2:
		cka = "read-only";
		a.cookie_addr = (uintptr_t)f->ro;
		break;
	default:
		a.cookie_addr = (uintptr_t)&f->sh->ck[slot].cookie;
		if (m->map_slot < 0) {
			m->map_slot = slot;
			m->map_old = f->sh->ck[slot];
			f->sh->ck[slot].cookie = 0;
			/* Before the call: a child may be killed in it. */
			f->sh->ck[slot].from_map = 1;
		}
	}
	a.flags = fz_rflags(r[4], RDS_RDMA_USE_ONCE | RDS_RDMA_INVALIDATE |
			    RDS_RDMA_READWRITE);
	len = fz_cmsg_len(sizeof(a), r[5]);
	d = fz_cmsg(f, m, SOL_RDS, RDS_CMSG_RDMA_MAP, len);
	memcpy(d, &a, len < sizeof(a) ? len : sizeof(a));
	m->cm |= 1 << FZ_CM_MAP;
	m->map = 1;
	m->hdr = 1;
	m->h.flags = (uint32_t)a.flags;
	m->h.len = a.vec.bytes;
	m->h.atomics = fz_mods == FZ_O;
	fz_more(f, " MAP{%s %s/%llu ck@%s%u fl=%#llx len=%zu}", where,
		fz_where(f, a.vec.addr), (unsigned long long)a.vec.bytes, cka, slot,
		(unsigned long long)a.flags, len);
}

/* RDS_CMSG_RDMA_DEST: name one of our cookies to the peer. */
static void fz_build_dest(struct fz *f, struct fz_msg *m, int s)
{
	uint64_t r[3], cookie;
	size_t len;
	int slot;
	void *d;

	fz_draw(r, 3);
	fz_more(f, " DEST{");
	cookie = fz_cookie(f, s, r[0], r[1], FZ_CKT_OWN, &slot);
	len = fz_cmsg_len(sizeof(cookie), r[2]);
	d = fz_cmsg(f, m, SOL_RDS, RDS_CMSG_RDMA_DEST, len);
	memcpy(d, &cookie, len < sizeof(cookie) ? len : sizeof(cookie));
	m->cm |= 1 << FZ_CM_DEST;
	if (slot >= 0 && slot < FZ_LOCAL_CK) {
		m->hdr = 1;
		m->h.flags = f->sh->ck[slot].flags;
		m->h.len = f->sh->ck[slot].len;
		m->h.atomics = fz_mods == FZ_O;
	}
	fz_more(f, " len=%zu}", len);
}

/* Local iovecs of @total bytes in @nr pieces of the arena, from r. */
static void fz_iov_fill(struct fz *f, unsigned int nr, uint64_t total, uint64_t r)
{
	uint64_t left = total, size;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		size = i == nr - 1 ? left : total / nr;
		left -= size;
		f->iov[i].bytes = size;
		f->iov[i].addr = (uintptr_t)f->arena +
				 (r + i * 0x9e3779b97f4a7c15ULL) % (FZ_ARENA - size);
	}
}

/*
 * RDS_CMSG_RDMA_ARGS: mostly a READ or WRITE the peer will carry out
 * (a live cookie of its, a range inside the region), else mutated.
 */
static void fz_build_args(struct fz *f, struct fz_msg *m, int s)
{
	static const char * const modes[] = {
		"nr0", "maxiov", "pastmax", "wrap", "zero", "overlap",
		"badmem", "badvec", "mismatch", "big", "short", "past-end",
	};
	static const uint64_t past[] = {
		UIO_MAXIOV + 1, 4096, (1ULL << 32) + 1, ~0ULL,
	};
	struct rds_rdma_args a;
	uint64_t r[10], total, room, mlen;
	unsigned int mode, nr, i;
	const char *what = "valid", *mw;
	size_t len = sizeof(a);
	int slot;
	void *d;

	fz_draw(r, 10);
	memset(&a, 0, sizeof(a));
	fz_more(f, " ARGS{");
	a.cookie = fz_cookie(f, s, r[0], r[1], FZ_CKT_PEER, &slot);
	room = fz_ck_len(f, slot);
	m->remote_bad |= !fz_ck_good(f, slot);
	a.flags = fz_rflags(r[8], RDS_RDMA_READWRITE | RDS_RDMA_FENCE |
			    RDS_RDMA_NOTIFY_ME | RDS_RDMA_SILENT |
			    RDS_RDMA_USE_ONCE);
	if ((r[8] >> 32) % 4)
		a.flags |= RDS_RDMA_NOTIFY_ME;
	a.user_token = r[9];
	nr = 1 + r[4] % 4;
	total = 1 + r[3] % room;
	if (total < nr)
		nr = total;
	fz_iov_fill(f, nr, total, r[5]);
	a.remote_vec.addr = r[7] % (room - total + 1);
	mode = r[2] % 32;
	if (mode >= 20)
		what = modes[mode - 20];
	switch (mode) {
	case 20:
		nr = 0;
		break;
	case 21:
		nr = UIO_MAXIOV;
		for (i = 0; i < nr; i++) {
			f->iov[i].addr = (uintptr_t)f->arena + (r[5] + i * 1031) % FZ_ARENA;
			f->iov[i].bytes = 1;
		}
		total = nr;
		m->remote_bad |= room < total;
		a.remote_vec.addr = 0;
		break;
	case 22:
		a.nr_local = past[r[6] % ARRAY_SIZE(past)];
		break;
	case 23:
		nr = 1;
		if (r[6] % 2) {
			f->iov[0].addr = (uint64_t)-4096;
			f->iov[0].bytes = 8192;
		} else {
			f->iov[0].addr = (uintptr_t)f->arena;
			f->iov[0].bytes = ~0ULL - (uintptr_t)f->arena + 2;
		}
		total = f->iov[0].bytes;
		break;
	case 24:
		nr = 3;
		fz_iov_fill(f, nr, total, r[5]);
		f->iov[1].bytes = 0;
		total = f->iov[0].bytes + f->iov[2].bytes;
		break;
	case 25:
		nr = 3;
		fz_iov_fill(f, 1, total, r[5]);
		f->iov[1] = f->iov[0];
		f->iov[2] = f->iov[0];
		total *= 3;
		m->remote_bad |= room < total;
		break;
	case 26:
		f->iov[0].addr = fz_mem(f, f->iov[0].bytes, r[6] % 8, &mw);
		fz_more(f, " local=%s", mw);
		break;
	case 27:
		a.local_vec_addr = fz_ptr(f, NULL, 1 + r[6] % 6, &mw);
		fz_more(f, " vec=%s", mw);
		break;
	case 28:
		a.remote_vec.bytes = r[6] % 2 ? total + 1 + r[6] % 64 : total - 1;
		break;
	case 29:
		nr = 2;
		mlen = 600 * 1024;
		fz_iov_fill(f, nr, 2 * mlen, r[5]);
		total = 2 * mlen;
		break;
	case 30:
		len = sizeof(a) - 8;
		break;
	case 31:
		a.remote_vec.addr = room + r[6] % 4096;
		m->remote_bad = 1;
		break;
	}
	if (!a.nr_local)
		a.nr_local = nr;
	if (!a.local_vec_addr && mode != 27)
		a.local_vec_addr = (uintptr_t)f->iov;
	if (!a.remote_vec.bytes)
		a.remote_vec.bytes = total;
	if (!(a.flags & RDS_RDMA_READWRITE) && r[6] % 8 == 0 && mode < 20) {
		/* A READ into read-only memory. */
		f->iov[0].addr = (uintptr_t)f->ro;
		what = "read-into-ro";
	}
	d = fz_cmsg(f, m, SOL_RDS, RDS_CMSG_RDMA_ARGS, len);
	memcpy(d, &a, len);
	m->cm |= 1 << (a.flags & RDS_RDMA_READWRITE ? FZ_CM_WRITE : FZ_CM_READ);
	if (slot >= FZ_LOCAL_CK && slot < FZ_CK_STABLE &&
	    (f->sh->ck[slot].flags & RDS_RDMA_USE_ONCE))
		m->once_slot = slot;
	fz_more(f, " %s tok=%llx nr=%llu vec0=%s/%llu rv=%llx/%llu fl=%#llx len=%zu}",
		what, (unsigned long long)a.user_token,
		(unsigned long long)a.nr_local, fz_where(f, f->iov[0].addr),
		(unsigned long long)f->iov[0].bytes,
		(unsigned long long)a.remote_vec.addr,
		(unsigned long long)a.remote_vec.bytes,
		(unsigned long long)a.flags, len);
}

/* The four atomics, mostly valid against a region of the peer. */
static void fz_build_atomic(struct fz *f, struct fz_msg *m, int s)
{
	static const int types[] = {
		RDS_CMSG_ATOMIC_FADD, RDS_CMSG_ATOMIC_CSWP,
		RDS_CMSG_MASKED_ATOMIC_FADD, RDS_CMSG_MASKED_ATOMIC_CSWP,
	};
	static const int bits[] = {
		FZ_CM_FADD, FZ_CM_CSWP, FZ_CM_MFADD, FZ_CM_MCSWP,
	};
	struct rds_atomic_args a;
	uint64_t r[8], room, pad, off;
	unsigned int t, mode;
	const char *what = "valid";
	size_t len = sizeof(a);
	int slot;
	void *d;

	fz_draw(r, 8);
	memset(&a, 0, sizeof(a));
	t = r[0] % 4;
	fz_more(f, " ATOMIC%d{", types[t]);
	a.cookie = fz_cookie(f, s, r[1], r[2], FZ_CKT_PEER, &slot);
	room = fz_ck_len(f, slot);
	m->remote_bad |= !fz_ck_good(f, slot) ||
			 (slot >= 0 && !f->sh->ck[slot].atomics);
	off = a.cookie >> 32;
	pad = (8 - off % 8) % 8;
	if (room >= pad + 8)
		a.remote_addr = pad + 8 * (r[5] % ((room - pad - 8) / 8 + 1));
	else
		m->remote_bad = 1;
	a.local_addr = (uintptr_t)f->arena + 8 * (r[4] % (FZ_ARENA / 8));
	mode = r[3] % 16;
	switch (mode) {
	case 12:
		what = "local-misaligned";
		a.local_addr += 1 + r[6] % 7;
		break;
	case 13:
		a.local_addr = fz_mem(f, 8, r[6] % 8, &what);
		break;
	case 14:
		what = "remote-misaligned";
		a.remote_addr += 1 + r[6] % 7;
		m->remote_bad = 1;
		break;
	case 15:
		what = "short";
		len = sizeof(a) - 8;
		break;
	}
	a.flags = fz_rflags(r[6], RDS_RDMA_NOTIFY_ME | RDS_RDMA_SILENT |
			    RDS_RDMA_READWRITE);
	a.m_cswp.compare = r[7];
	a.m_cswp.swap = ~r[7];
	a.m_cswp.compare_mask = r[7] >> 3;
	a.m_cswp.swap_mask = r[7] << 5;
	a.user_token = r[5];
	d = fz_cmsg(f, m, SOL_RDS, types[t], len);
	memcpy(d, &a, len);
	m->cm |= 1 << bits[t];
	m->atomic = 1;
	fz_more(f, " %s tok=%llx local=%s remote=%llx fl=%#llx len=%zu}", what,
		(unsigned long long)a.user_token, fz_where(f, a.local_addr),
		(unsigned long long)a.remote_addr,
		(unsigned long long)a.flags, len);
}

/* RDS_CMSG_OP_ID: where the operation's id is stored. */
static void fz_build_op_id(struct fz *f, struct fz_msg *m)
{
	uint64_t r[2], addr;
	const char *what = "ok";
	size_t len;
	void *d;

	fz_draw(r, 2);
	if (r[0] % 8)
		addr = (uintptr_t)&f->sh->op_ids[r[1] % 4];
	else
		addr = fz_ptr(f, NULL, 1 + r[1] % 6, &what);
	len = (r[1] >> 8) % 16 ? sizeof(addr) : 4;
	d = fz_cmsg(f, m, SOL_RDS, RDS_CMSG_OP_ID, len);
	memcpy(d, &addr, len);
	m->cm |= 1 << FZ_CM_OPID;
	fz_more(f, " OP_ID{%s len=%zu}", what, len);
}

/* Types sendmsg() does not take, and headers that are not CMSG_OK. */
static void fz_build_odd(struct fz *f, struct fz_msg *m)
{
	static const int types[] = {
		RDS_CMSG_RDMA_STATUS, RDS_CMSG_CONG_UPDATE,
		RDS_CMSG_RXPATH_LATENCY, RDS_CMSG_ZCOPY_COOKIE,
		RDS_CMSG_ZCOPY_COMPLETION, 0, 10, 14, 63, 65, 255,
	};
	struct cmsghdr *c;
	uint64_t r[3];
	unsigned char *d;
	size_t len;

	fz_draw(r, 3);
	len = r[2] % 48;
	switch (r[0] % 16) {
	case 0:
		fz_build_op_id(f, m);	/* alone, or without an operation */
		return;
	case 1:
		c = (struct cmsghdr *)(f->ctl.buf + m->used);
		fz_cmsg(f, m, SOL_RDS, RDS_CMSG_RDMA_ARGS, 8);
		c->cmsg_len = r[1] % 2 ? sizeof(*c) - 1 : 0;
		fz_more(f, " cmsg_len=%zu", (size_t)c->cmsg_len);
		return;
	case 2:
		c = (struct cmsghdr *)(f->ctl.buf + m->used);
		fz_cmsg(f, m, SOL_RDS, RDS_CMSG_RDMA_DEST, 8);
		c->cmsg_len = sizeof(f->ctl.buf) * 2;
		fz_more(f, " cmsg_len=huge");
		return;
	case 3:
		d = fz_cmsg(f, m, SOL_RDS, RDS_CMSG_ZCOPY_COOKIE, sizeof(uint32_t));
		memcpy(d, &r[1], sizeof(uint32_t));
		fz_more(f, " ZCOPY_COOKIE");
		return;
	case 4:
		d = fz_cmsg(f, m, SOL_RDS, (int)(r[1] % 256), len);
		fz_more(f, " type=%d/%zu", (int)(r[1] % 256), len);
		break;
	default:
		d = fz_cmsg(f, m, SOL_RDS, types[r[1] % ARRAY_SIZE(types)], len);
		fz_more(f, " type=%d/%zu", types[r[1] % ARRAY_SIZE(types)], len);
	}
	memset(d, (int)r[2], len);
}

/* A control message of another level, which RDS ignores. */
static void fz_build_other_level(struct fz *f, struct fz_msg *m)
{
	static const int levels[] = { SOL_SOCKET, SOL_IP, 0x7fff, -1 };
	uint64_t r[2];
	void *d;

	fz_draw(r, 2);
	d = fz_cmsg(f, m, levels[r[0] % ARRAY_SIZE(levels)],
		    (int)(r[1] % 64), r[1] % 24);
	memset(d, 0xa5, r[1] % 24);
	fz_more(f, " level=%d", levels[r[0] % ARRAY_SIZE(levels)]);
}

/* Send modes; the kind of call they make. */
enum {
	FZ_SM_PLAIN, FZ_SM_MAP, FZ_SM_DEST, FZ_SM_ARGS, FZ_SM_ATOMIC,
	FZ_SM_MULTI, FZ_SM_ODD,
};

static const enum fz_kind fz_sm_kind[] = {
	FK_SEND, FK_SEND_MAP, FK_SEND_DEST, FK_SEND_ARGS, FK_SEND_ATOMIC,
	FK_SEND_MULTI, FK_SEND_ODD,
};

static void fz_build(struct fz *f, struct fz_msg *m, int s, int mode)
{
	uint64_t r[5];
	unsigned int i, n;

	switch (mode) {
	case FZ_SM_PLAIN:
		fz_draw(r, 1);
		if (r[0] % 8 == 0)
			fz_build_other_level(f, m);
		break;
	case FZ_SM_MAP:
		fz_build_map(f, m);
		break;
	case FZ_SM_DEST:
		fz_build_dest(f, m, s);
		break;
	case FZ_SM_ARGS:
		fz_build_args(f, m, s);
		fz_draw(r, 1);
		if (r[0] % 4 == 0)
			fz_build_op_id(f, m);
		break;
	case FZ_SM_ATOMIC:
		fz_build_atomic(f, m, s);
		fz_draw(r, 1);
		if (r[0] % 4 == 0)
			fz_build_op_id(f, m);
		break;
	case FZ_SM_MULTI:
		/* Duplicates, conflicts and allowed pairs alike. */
		fz_draw(r, 5);
		n = 2 + r[0] % 3;
		for (i = 0; i < n; i++) {
			switch (r[1 + i] % 8) {
			case 0:
				fz_build_map(f, m);
				break;
			case 1:
				fz_build_dest(f, m, s);
				break;
			case 2:
			case 3:
				fz_build_args(f, m, s);
				break;
			case 4:
				fz_build_atomic(f, m, s);
				break;
			case 5:
				fz_build_op_id(f, m);
				break;
			case 6:
				fz_build_odd(f, m);
				break;
			default:
				fz_build_other_level(f, m);
			}
		}
		break;
	default:
		fz_build_odd(f, m);
	}
}

/* ------------------------------------------------------------- calls */

/* The payload of a send: its length from r. */
static size_t fz_payload_len(uint64_t r)
{
	switch (r % 16) {
	case 0:
	case 1:
		return 0;
	case 13:
		return 1 << 20;
	case 14:
		return (1 << 20) + 1;
	case 15:
		return 1 + (r >> 8) % 64;
	case 10:
	case 11:
	case 12:
		return 4097 + (r >> 8) % (65536 - 4096);
	default:
		return 1 + (r >> 8) % 4096;
	}
}

/*
 * One sendmsg(): from socket @force_s (or a random one) with control
 * messages of mode @force_mode (or a random one).
 */
static void fz_send(struct fz *f, int force_s, int force_mode)
{
	static const int odd_flags[] = {
		MSG_ZEROCOPY, MSG_OOB, MSG_MORE, MSG_NOSIGNAL, MSG_EOR,
		(int)FZ_MSG_CMSG_COMPAT, MSG_WAITALL, MSG_CONFIRM,
	};
	struct fz_msg m = { .map_slot = -1, .once_slot = -1 };
	struct sockaddr_storage ss = { .ss_family = AF_UNSPEC };
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	const char *nw = "none", *pw = "sbuf", *cw = "ok";
	struct iovec iov[3];
	struct msghdr mh;
	uint64_t r[10];
	socklen_t nlen = 0;
	int s, mode, flags = 0, to_peer;
	size_t len;
	long ret;

	fz_draw(r, 10);
	s = force_s >= 0 ? force_s : (int)(r[0] % FZ_SOCKS);
	mode = r[1] % 32;
	if (force_mode >= 0)
		mode = force_mode;
	else if (mode < 10)
		mode = FZ_SM_PLAIN;
	else if (mode < 15)
		mode = FZ_SM_MAP;
	else if (mode < 17)
		mode = FZ_SM_DEST;
	else if (mode < 24)
		mode = FZ_SM_ARGS;
	else if (mode < 27)
		mode = FZ_SM_ATOMIC;
	else if (mode < 29)
		mode = FZ_SM_MULTI;
	else
		mode = FZ_SM_ODD;
	if (r[2] % 64 < ARRAY_SIZE(odd_flags))
		flags = odd_flags[r[2] % 64];

	memset(&mh, 0, sizeof(mh));
	switch (r[3] % 16) {
	case 0:
		break;		/* the connect()ed destination */
	case 1:
		mh.msg_name = (void *)(uintptr_t)fz_ptr(f, NULL, 1 + r[4] % 6, &nw);
		mh.msg_namelen = sizeof(struct sockaddr_in);
		break;
	default:
		nlen = fz_sin(f, r[4], &ss, &nw);
		if (force_s >= 0) {	/* an RDMA in flight at close */
			sin->sin_family = AF_INET;
			sin->sin_addr = f->two ? f->peer : f->absent;
			nlen = sizeof(*sin);
			nw = "peer";
		}
		mh.msg_name = &ss;
		mh.msg_namelen = nlen;
	}
	to_peer = mh.msg_name == &ss && sin->sin_family == AF_INET &&
		  f->two && sin->sin_addr.s_addr == f->peer.s_addr;

	len = fz_payload_len(r[5]);
	iov[0].iov_len = len;
	iov[0].iov_base = f->sbuf;
	if (r[6] % 32 < 3)
		iov[0].iov_base = (void *)(uintptr_t)fz_ptr(f, NULL, 1 + r[6] % 7, &pw);
	mh.msg_iov = iov;
	mh.msg_iovlen = 1;
	switch (r[7] % 32) {
	case 0:
		mh.msg_iovlen = 0;
		len = 0;
		break;
	case 1:
		mh.msg_iov = (struct iovec *)f->iov;	/* EMSGSIZE first */
		mh.msg_iovlen = UIO_MAXIOV + 1;
		break;
	case 2:
		iov[0].iov_len = len / 3;
		iov[1].iov_base = f->sbuf + len / 3;
		iov[1].iov_len = len / 3;
		iov[2].iov_base = f->sbuf + 2 * (len / 3);
		iov[2].iov_len = len - 2 * (len / 3);
		mh.msg_iovlen = 3;
		break;
	}

	fz_desc(f, "sendmsg(s%d, name %s%s, payload %s/%zu, iovlen %zu, flags %#x,",
		s, nw, nlen ? fz_sin_str(&ss, nlen) : "", pw, len,
		(size_t)mh.msg_iovlen, flags);
	fz_build(f, &m, s, mode);
	mh.msg_control = m.used ? f->ctl.buf : NULL;
	mh.msg_controllen = m.used;
	switch ((r[8] >> 8) % 64) {
	case 0:
		mh.msg_controllen = 1 << 24;	/* over optmem_max */
		cw = "huge";
		break;
	case 1:
		mh.msg_control = (void *)(uintptr_t)fz_ptr(f, NULL, 1 + r[8] % 6, &cw);
		mh.msg_controllen = m.used ? m.used : 64;
		break;
	case 2:
		if (m.used) {
			mh.msg_controllen = m.used - 1;
			cw = "cut";
		}
		break;
	}

	/* What the peer is told about a region it may aim at. */
	if (m.hdr && len >= sizeof(m.h) && iov[0].iov_base == f->sbuf &&
	    iov[0].iov_len >= sizeof(m.h)) {
		m.h.magic = FZ_MAGIC;
		memcpy(f->sbuf, &m.h, sizeof(m.h));
	} else {
		memset(f->sbuf, 0, sizeof(m.h));
	}
	/*
	 * An RDMA the peer refuses takes the connection down: only 1 in 32
	 * goes there (or to where the socket is connected; on one node, to
	 * this node's address, which the distribution serves over an RDMA
	 * connection to itself).  Known bugs of the distribution's, which
	 * fz_known_bugs (-K) lets through: it posts every atomic as a masked
	 * one, which rxe does not have, and its connection then stalls
	 * behind the message for good (ib_post_send() fails with EINVAL at
	 * every try); and an RDMA_MAP registers through a connection's QP
	 * and waits for it uninterruptibly, for ever when that connection to
	 * itself is being reset.  On it, atomics, and on one node RDMA_MAP,
	 * go to the absent address only, where nothing is posted.
	 */
	if ((fz_mods == FZ_D && !fz_known_bugs && (m.atomic || (m.map && !f->two))) ||
	    (m.remote_bad && r[9] % 32 && (f->two || fz_mods == FZ_D) &&
	     (to_peer || !mh.msg_name || mh.msg_namelen < sizeof(*sin) ||
	      (!f->two && sin->sin_addr.s_addr == f->self.s_addr)))) {
		/* A name of its own: with none the connected one counts. */
		sin_set(sin, f->absent, ntohs(sin->sin_port));
		mh.msg_name = &ss;
		mh.msg_namelen = sizeof(*sin);
		fz_more(f, " (to absent)");
	}
	fz_more(f, " ctl %s/%zu)", cw, (size_t)mh.msg_controllen);

	ret = FZ_CALL(f, fz_sm_kind[mode],
		      sendmsg(f->fd[s], &mh, MSG_DONTWAIT | flags));
	if (m.map_slot >= 0) {
		struct fz_cookie *c = &f->sh->ck[m.map_slot];

		if (c->cookie) {
			c->state = ret >= 0 ? FZ_CK_LIVE : FZ_CK_MAYBE;
			c->sock = s;
			c->len = m.h.len;
			c->flags = m.h.flags;
			c->atomics = m.h.atomics;
		} else {
			*c = m.map_old;
		}
	}
	if (ret >= 0) {
		f->sh->st.cmsg_ok |= m.cm;
		if (m.once_slot >= 0)
			f->sh->ck[m.once_slot].state = FZ_CK_FREED;
	}
}

/* Count what a received control buffer holds; keep the peer's cookies. */
static void fz_recv_cmsgs(struct fz *f, struct msghdr *mh, long n)
{
	struct cmsghdr *c;
	struct rds_rdma_notify note;
	struct fz_hdr h;
	uint64_t cookie;
	int have_hdr = 0;

	if (n >= (long)sizeof(h) && mh->msg_iov[0].iov_base == f->rbuf &&
	    mh->msg_iov[0].iov_len >= sizeof(h)) {
		memcpy(&h, f->rbuf, sizeof(h));
		have_hdr = h.magic == FZ_MAGIC;
	}
	for (c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_RDS)
			continue;
		if (c->cmsg_type == RDS_CMSG_RDMA_DEST &&
		    c->cmsg_len >= CMSG_LEN(sizeof(cookie))) {
			memcpy(&cookie, CMSG_DATA(c), sizeof(cookie));
			fz_cookie_rx(f, cookie, have_hdr ? &h : NULL);
		} else if (c->cmsg_type == RDS_CMSG_RDMA_STATUS &&
			   c->cmsg_len >= CMSG_LEN(sizeof(note))) {
			memcpy(&note, CMSG_DATA(c), sizeof(note));
			if (fz_verbose)
				dprintf(STDOUT_FILENO, "# note token %llx status %d\n",
					(unsigned long long)note.user_token, note.status);
			if (note.status >= 0 && note.status < FZ_NOTE_NR - 1)
				f->sh->st.notes[note.status]++;
			else
				f->sh->st.notes[FZ_NOTE_NR - 1]++;
		}
	}
}

/*
 * One recvmsg(): odd flags, names and buffers, or (@drain) a plain one
 * that takes whatever is there and keeps the peer's cookies.
 */
static void fz_recv(struct fz *f, int drain)
{
	static const int odd_flags[] = {
		MSG_PEEK, MSG_TRUNC, MSG_OOB, MSG_ERRQUEUE, MSG_WAITALL,
		(int)FZ_MSG_CMSG_COMPAT, MSG_PEEK | MSG_TRUNC, MSG_CTRUNC,
	};
	struct sockaddr_storage ss;
	const char *nw = "ok", *bw = "rbuf", *cw = "ok";
	struct iovec iov[2];
	struct msghdr mh;
	uint64_t r[7];
	int s, flags = 0, good_ctl = 1;
	long ret;

	fz_draw(r, 7);
	s = r[0] % FZ_SOCKS;
	memset(&mh, 0, sizeof(mh));
	mh.msg_name = &ss;
	mh.msg_namelen = sizeof(ss);
	iov[0].iov_base = f->rbuf;
	iov[0].iov_len = FZ_RBUF;
	mh.msg_iov = iov;
	mh.msg_iovlen = 1;
	mh.msg_control = f->ctl.buf;
	mh.msg_controllen = sizeof(f->ctl.buf);
	if (!drain) {
		if (r[1] % 16 < ARRAY_SIZE(odd_flags))
			flags = odd_flags[r[1] % 16];
		switch (r[2] % 16) {
		case 0:
			mh.msg_name = NULL;
			nw = "NULL";
			break;
		case 1:
			mh.msg_name = (void *)(uintptr_t)fz_ptr(f, NULL, 1 + r[2] % 6, &nw);
			break;
		case 2:
			mh.msg_namelen = -1;
			nw = "namelen -1";
			break;
		case 3:
			mh.msg_namelen = (r[2] >> 8) % 16;
			nw = "short";
			break;
		}
		switch (r[3] % 16) {
		case 0:
			iov[0].iov_len = 0;
			break;
		case 1:
			iov[0].iov_base = (void *)(uintptr_t)fz_ptr(f, NULL, 1 + r[3] % 6, &bw);
			break;
		case 2:
			mh.msg_iov = (struct iovec *)f->iov;
			mh.msg_iovlen = UIO_MAXIOV + 1;
			bw = "iovlen";
			break;
		case 3:
			iov[0].iov_len = (r[3] >> 8) % 64;
			iov[1].iov_base = f->rbuf + 64;
			iov[1].iov_len = FZ_RBUF - 64;
			mh.msg_iovlen = 2;
			break;
		default:
			iov[0].iov_len = (r[3] >> 8) % (FZ_RBUF + 1);
		}
		switch (r[4] % 16) {
		case 0:
			mh.msg_control = NULL;
			mh.msg_controllen = 0;
			cw = "none";
			break;
		case 1:
			mh.msg_control = (void *)(uintptr_t)fz_ptr(f, NULL, 1 + r[4] % 6, &cw);
			good_ctl = 0;
			break;
		case 2:
			/* One notification's room, or a byte short of it. */
			mh.msg_controllen = CMSG_SPACE(sizeof(struct rds_rdma_notify)) -
					    (r[4] >> 8) % 2;
			cw = "one";
			break;
		case 3:
			mh.msg_controllen = (r[4] >> 8) % 40;
			cw = "short";
			break;
		}
	}
	fz_desc(f, "recvmsg(s%d, name %s/%d, buf %s/%zu, iovlen %zu, ctl %s/%zu, flags %#x)",
		s, nw, (int)mh.msg_namelen, bw, mh.msg_iovlen ? iov[0].iov_len : 0,
		(size_t)mh.msg_iovlen, cw, (size_t)mh.msg_controllen, flags);
	ret = FZ_CALL(f, FK_RECV, recvmsg(f->fd[s], &mh, MSG_DONTWAIT | flags));
	if (ret >= 0 && good_ctl && mh.msg_control && mh.msg_iovlen &&
	    mh.msg_iov == iov && !(flags & MSG_PEEK))
		fz_recv_cmsgs(f, &mh, ret);
}

/* The argument of RDS_GET_MR(_FOR_DEST), into f->opt; its size. */
static size_t fz_setopt_mr(struct fz *f, const uint64_t *r, int name, int *track)
{
	int dest = name == RDS_GET_MR_FOR_DEST;
	struct rds_iovec *vec = dest ? &f->opt.mrd.vec : &f->opt.mr.vec;
	__u64 *cka = dest ? &f->opt.mrd.cookie_addr : &f->opt.mr.cookie_addr;
	__u64 *fl = dest ? &f->opt.mrd.flags : &f->opt.mr.flags;
	const char *where, *sw = "";

	if (dest)
		fz_sin(f, r[6], (struct sockaddr_storage *)&f->opt.mrd.dest_addr, &sw);
	vec->bytes = fz_rlen(r[2]);
	vec->addr = fz_mem(f, vec->bytes, r[3], &where);
	switch (r[4] % 16) {
	case 0:
		break;
	case 1:
		*cka = FZ_KERNEL_ADDR;
		break;
	case 2:
		*cka = (uintptr_t)f->ro;
		break;
	default:
		*track = (r[4] >> 8) % FZ_LOCAL_CK;
		*cka = (uintptr_t)&f->sh->ck[*track].cookie;
	}
	*fl = fz_rflags(r[5], RDS_RDMA_USE_ONCE | RDS_RDMA_INVALIDATE |
			RDS_RDMA_READWRITE);
	fz_more(f, " %s %s, vec %s %s/%llu, cookie@%d, flags %#llx",
		dest ? "RDS_GET_MR_FOR_DEST" : "RDS_GET_MR", sw, where,
		fz_where(f, vec->addr), (unsigned long long)vec->bytes, *track,
		(unsigned long long)*fl);
	return dest ? sizeof(f->opt.mrd) : sizeof(f->opt.mr);
}

/* setsockopt(SOL_RDS, every option) with valid-looking, mutated arguments. */
static void fz_setopt(struct fz *f)
{
	static const int unknown[] = {
		0, 4, 9, 11, 12, 64, 65, RDS_INFO_COUNTERS, -1, INT_MAX,
	};
	static const int levels[] = { SOL_IP, SOL_TCP, 17, 0x7fff, -1 };
	struct fz_cookie old;
	uint64_t r[10], cookie = 0, p;
	const char *pw, *sw = "";
	int s, name, level = SOL_RDS, track = -1, slot = -1;
	enum fz_kind k;
	socklen_t len;
	size_t exact;
	unsigned int i;
	long ret;

	fz_draw(r, 10);
	s = r[0] % FZ_SOCKS;
	memset(&f->opt, 0, sizeof(f->opt));
	for (i = 0; i < sizeof(f->opt.buf); i++)
		f->opt.buf[i] = (unsigned char)(r[7] >> (8 * (i % 8))) ^ i;
	fz_desc(f, "setsockopt(s%d,", s);
	switch (r[1] % 32) {
	case 0 ... 5:
	case 28 ... 31:
		k = r[1] % 32 < 4 || r[1] % 32 >= 28 ? FK_SO_GET_MR : FK_SO_GET_MR_DEST;
		name = k == FK_SO_GET_MR ? RDS_GET_MR : RDS_GET_MR_FOR_DEST;
		memset(&f->opt, 0, sizeof(f->opt));
		exact = fz_setopt_mr(f, r, name, &track);
		break;
	case 6 ... 10:
		k = FK_SO_FREE_MR;
		name = RDS_FREE_MR;
		exact = sizeof(f->opt.free);
		memset(&f->opt, 0, sizeof(f->opt));
		fz_more(f, " RDS_FREE_MR");
		cookie = fz_cookie(f, s, r[2], r[3], FZ_CKT_OWN, &slot);
		f->opt.free.cookie = cookie;
		f->opt.free.flags = r[4] % 4 == 0 ? RDS_RDMA_INVALIDATE :
				    r[4] % 4 == 1 ? r[4] >> 8 : 0;
		if ((f->opt.free.flags & RDS_RDMA_INVALIDATE) && !fz_known_bugs &&
		    (slot < 0 || slot >= FZ_LOCAL_CK || f->sh->ck[slot].from_map)) {
			/* Known bug: see fz_known_bugs. */
			f->opt.free.flags &= ~(uint64_t)RDS_RDMA_INVALIDATE;
			fz_more(f, " (INVALIDATE withheld)");
		}
		fz_more(f, " flags %#llx", (unsigned long long)f->opt.free.flags);
		break;
	case 11:
	case 12:
		k = FK_SO_CANCEL;
		name = RDS_CANCEL_SENT_TO;
		exact = sizeof(struct sockaddr_in);
		fz_sin(f, r[2], (struct sockaddr_storage *)f->opt.buf, &sw);
		if (r[3] % 2) {
			/* Where operations wait: the absent address. */
			f->opt.sin.sin_addr = f->absent;
			sw = "absent";
		}
		fz_more(f, " RDS_CANCEL_SENT_TO %s:%u", sw, ntohs(f->opt.sin.sin_port));
		break;
	case 13 ... 16:
		k = FK_SO_BOOL;
		name = r[1] % 32 < 15 ? RDS_RECVERR : RDS_CONG_MONITOR;
		exact = sizeof(int);
		f->opt.val = r[2] % 4 ? (int)((r[2] >> 8) % 2) : (int)(r[2] >> 8);
		fz_more(f, " %s %d", name == RDS_RECVERR ? "RDS_RECVERR" :
			"RDS_CONG_MONITOR", f->opt.val);
		break;
	case 17:
	case 18:
		k = FK_SO_TRANSPORT;
		name = SO_RDS_TRANSPORT;
		exact = sizeof(int);
		switch (r[2] % 8) {
		case 1:
			f->opt.val = RDS_TRANS_GAP;
			break;
		case 2:
			f->opt.val = RDS_TRANS_TCP;
			break;
		case 3:
			f->opt.val = RDS_TRANS_COUNT;
			break;
		case 4:
			f->opt.val = -1;
			break;
		case 5:
			f->opt.val = (int)(r[2] >> 8);
			break;
		default:
			f->opt.val = RDS_TRANS_IB;
		}
		fz_more(f, " SO_RDS_TRANSPORT %d", f->opt.val);
		break;
	case 19:
	case 20:
		k = FK_SO_LATENCY;
		name = SO_RDS_MSG_RXPATH_LATENCY;
		exact = sizeof(f->opt.trace);
		f->opt.trace.rx_traces = r[2] % 5;
		for (i = 0; i < RDS_MSG_RX_DGRAM_TRACE_MAX; i++)
			f->opt.trace.rx_trace_pos[i] = (r[2] >> (8 + 8 * i)) % 4;
		fz_more(f, " SO_RDS_MSG_RXPATH_LATENCY %u traces",
			f->opt.trace.rx_traces);
		break;
	case 21:
	case 22:
		k = FK_SO_TSTAMP;
		name = r[1] % 32 == 21 ? SO_TIMESTAMP_OLD : SO_TIMESTAMP_NEW;
		exact = sizeof(int);
		f->opt.val = (int)(r[2] % 2);
		fz_more(f, " SO_TIMESTAMP(%d) %d", name, f->opt.val);
		break;
	case 27:
		k = FK_SO_LEVEL;
		level = levels[r[2] % ARRAY_SIZE(levels)];
		name = (int)(r[3] % 64);
		exact = sizeof(int);
		fz_more(f, " level %d name %d", level, name);
		break;
	default:
		k = FK_SO_OTHER;
		name = r[2] % 4 ? unknown[r[2] % ARRAY_SIZE(unknown)] :
		       (int)(r[2] >> 8);
		exact = sizeof(int);
		fz_more(f, " name %d", name);
	}
	switch (r[8] % 16) {
	case 10:
		len = 0;
		break;
	case 11:
		len = exact - 1;
		break;
	case 12:
		len = exact + 1;
		break;
	case 13:
		len = (r[8] >> 8) % (FZ_SWEEP_MAX + 1);
		break;
	case 14:
		len = INT_MAX;
		break;
	case 15:
		len = (socklen_t)-1;
		break;
	default:
		len = exact;
	}
	p = fz_ptr(f, f->opt.buf, r[9], &pw);
	fz_more(f, ", optval %s, optlen %d)", pw, (int)len);
	if (track >= 0) {
		old = f->sh->ck[track];
		f->sh->ck[track].cookie = 0;
	}
	ret = FZ_CALL(f, k, setsockopt(f->fd[s], level, name,
				       (void *)(uintptr_t)p, len));
	if (track >= 0) {
		struct fz_cookie *c = &f->sh->ck[track];

		if (c->cookie) {
			c->state = ret >= 0 ? FZ_CK_LIVE : FZ_CK_MAYBE;
			c->sock = s;
			c->len = name == RDS_GET_MR ? f->opt.mr.vec.bytes :
				 f->opt.mrd.vec.bytes;
			c->flags = name == RDS_GET_MR ? f->opt.mr.flags :
				   f->opt.mrd.flags;
			c->atomics = fz_mods == FZ_O;
			c->from_map = 0;
		} else {
			*c = old;
		}
	}
	if (k == FK_SO_FREE_MR && ret == 0 && slot >= 0 && slot < FZ_LOCAL_CK &&
	    f->sh->ck[slot].cookie == cookie)
		f->sh->ck[slot].state = FZ_CK_FREED;
}

/*
 * RDS_INFO answers keep the convention: the size of a row, and the bytes
 * copied, whole rows that fit; or ENOSPC with the room needed.
 */
static void fz_check_info(struct fz *f, long ret, int err, int room, int got)
{
	if (ret > 0 && (got < 0 || got > room || got % ret))
		rt_fail("seed %llu op %lu: %s returned %ld, then %d bytes for room %d",
			(unsigned long long)f->seed, f->op, f->desc, ret, got, room);
	if (ret < 0 && err == ENOSPC && got <= room)
		rt_fail("seed %llu op %lu: %s: ENOSPC, yet it asks for %d bytes of %d",
			(unsigned long long)f->seed, f->op, f->desc, got, room);
}

/* getsockopt(SOL_RDS): the options, RDS_OP_BARRIER, the RDS_INFO tables. */
static void fz_getopt(struct fz *f)
{
	static const int unknown[] = {
		RDS_CANCEL_SENT_TO, RDS_GET_MR, RDS_FREE_MR, 4,
		RDS_CONG_MONITOR, RDS_GET_MR_FOR_DEST, 9,
		SO_RDS_MSG_RXPATH_LATENCY, 11, 65, SO_TIMESTAMP_OLD, -1,
	};
	uint64_t r[8], plen, pval;
	const char *lw = "ok", *vw;
	int s, name, level = SOL_RDS, len, room, probe = 0;
	enum fz_kind k;
	size_t exact;
	long ret;

	fz_draw(r, 8);
	s = r[0] % FZ_SOCKS;
	memset(&f->opt, 0, sizeof(f->opt));
	switch (r[1] % 16) {
	case 0:
	case 1:
		k = FK_GO_INT;
		name = r[1] % 2 ? SO_RDS_TRANSPORT : RDS_RECVERR;
		exact = sizeof(int);
		break;
	case 2 ... 4:
		k = FK_GO_BARRIER;
		name = RDS_OP_BARRIER;
		exact = sizeof(f->opt.barrier);
		switch (r[2] % 8) {
		case 4:
		case 5: {
			struct sockaddr_in *sin = (void *)&f->opt.barrier.dest;

			sin->sin_family = AF_INET;
			sin->sin_addr = f->two ? f->peer : f->absent;
			sin->sin_port = r[2] % 2 ? 0 : htons(f->port0 + (r[2] >> 8) % FZ_SOCKS);
			break;
		}
		case 6:
			f->opt.barrier.dest.ss_family = AF_INET6;
			break;
		case 7:
			f->opt.barrier.dest.ss_family = (unsigned short)(r[2] >> 16);
			break;
		}
		switch (r[3] % 8) {
		case 4:
		case 5:
			f->opt.barrier.wait_id = f->sh->op_ids[r[3] % 4];
			break;
		case 6:
			f->opt.barrier.wait_id = f->sh->op_ids[r[3] % 4] + 1;
			break;
		case 7:
			f->opt.barrier.wait_id = r[3];
			break;
		}
		break;
	case 5 ... 12:
		k = FK_GO_INFO;
		name = RDS_INFO_FIRST + r[2] % (RDS_INFO_LAST - RDS_INFO_FIRST + 2);
		exact = FZ_RBUF;
		probe = r[1] % 16 == 12;
		break;
	case 13:
		k = FK_GO_OTHER;
		level = r[2] % 2 ? SOL_IP : 0x7fff;
		name = RDS_RECVERR;
		exact = sizeof(int);
		break;
	default:
		k = FK_GO_OTHER;
		name = unknown[r[2] % ARRAY_SIZE(unknown)];
		exact = sizeof(int);
	}
	switch (r[4] % 16) {
	case 10:
		len = 0;
		break;
	case 11:
		len = (int)exact - 1;
		break;
	case 12:
		len = (int)((r[4] >> 8) % (FZ_SWEEP_MAX + 1));
		break;
	case 13:
		len = -1;
		break;
	case 14:
		len = (int)exact + 8;
		break;
	case 15:
		len = INT_MAX;
		break;
	default:
		len = (int)exact;
	}
	if (k != FK_GO_INFO && len > (int)sizeof(f->opt.buf) && len != INT_MAX)
		len = sizeof(f->opt.buf);
	pval = fz_ptr(f, k == FK_GO_INFO ? (void *)f->rbuf : (void *)f->opt.buf,
		      r[5], &vw);
	switch (r[6] % 32) {
	case 0:
		plen = 0;
		lw = "NULL";
		break;
	case 1:
		plen = FZ_KERNEL_ADDR;
		lw = "kernel";
		break;
	case 2:
		plen = (uintptr_t)f->ro;
		lw = "read-only";
		break;
	default:
		plen = (uintptr_t)&len;
	}
	if (probe) {
		/* Ask for the size first, then read the table in that room. */
		len = 0;
		fz_desc(f, "getsockopt(s%d, SOL_RDS, %d, %s, 0)", s, name, vw);
		ret = FZ_CALL(f, k, getsockopt(f->fd[s], SOL_RDS, name,
					       (void *)(uintptr_t)pval,
					       (socklen_t *)&len));
		if (len < 0 || len > FZ_RBUF)
			len = FZ_RBUF;
	}
	room = len;
	fz_desc(f, "getsockopt(s%d, level %d, name %d, optval %s, optlen %s %d)",
		s, level, name, vw, lw, len);
	ret = FZ_CALL(f, k, getsockopt(f->fd[s], level, name,
				       (void *)(uintptr_t)pval,
				       (socklen_t *)(uintptr_t)plen));
	if (k == FK_GO_INFO && plen == (uintptr_t)&len && room >= 0)
		fz_check_info(f, ret, errno, room, len);
}

/* SOL_SOCKET options that matter to RDS, both ways; never a long wait. */
static void fz_sockopt(struct fz *f)
{
	static const struct { int name; int set; const char *what; } opts[] = {
		{ SO_SNDBUF, 1, "SO_SNDBUF" }, { SO_RCVBUF, 1, "SO_RCVBUF" },
		{ SO_SNDBUFFORCE, 1, "SO_SNDBUFFORCE" },
		{ SO_RCVBUFFORCE, 1, "SO_RCVBUFFORCE" },
		{ SO_ZEROCOPY, 1, "SO_ZEROCOPY" },
		{ SO_TIMESTAMP_OLD, 1, "SO_TIMESTAMP_OLD" },
		{ SO_TIMESTAMP_NEW, 1, "SO_TIMESTAMP_NEW" },
		{ SO_RCVTIMEO_OLD, 1, "SO_RCVTIMEO" },
		{ SO_PRIORITY, 1, "SO_PRIORITY" },
		{ SO_SNDBUF, 0, "SO_SNDBUF" }, { SO_RCVBUF, 0, "SO_RCVBUF" },
		{ SO_ERROR, 0, "SO_ERROR" }, { SO_TYPE, 0, "SO_TYPE" },
		{ SO_ZEROCOPY, 0, "SO_ZEROCOPY" },
	};
	struct timeval tv = { 0, 0 };
	unsigned int o;
	uint64_t r[4];
	socklen_t len;
	int s, val = 0;
	void *arg = &val;

	fz_draw(r, 4);
	s = r[0] % FZ_SOCKS;
	o = r[1] % ARRAY_SIZE(opts);
	len = sizeof(val);
	switch (opts[o].name) {
	case SO_SNDBUF:
	case SO_SNDBUFFORCE:
		val = 4096 + (int)(r[2] % (1 << 20));
		break;
	case SO_RCVBUF:
	case SO_RCVBUFFORCE:
		val = 4096 + (int)(r[2] % (4 << 20));
		break;
	case SO_ZEROCOPY:
		val = (int)(r[2] % 3);
		break;
	case SO_PRIORITY:
		val = (int)(r[2] % 7);
		break;
	case SO_RCVTIMEO_OLD:
		/* Never 0 (forever): RDS_OP_BARRIER waits that long. */
		tv.tv_usec = 1000 + (long)(r[2] % (FZ_RCVTIMEO_MS * 1000));
		if (r[2] % 16 == 0)
			tv.tv_usec = 1000000;	/* EDOM */
		arg = &tv;
		len = sizeof(tv);
		break;
	default:
		val = (int)(r[2] % 2);
	}
	if (r[3] % 16 == 0)
		len = 2;
	fz_desc(f, "%ssockopt(s%d, SOL_SOCKET, %s, %d, %u)",
		opts[o].set ? "set" : "get", s, opts[o].what,
		arg == &tv ? (int)tv.tv_usec : val, len);
	if (opts[o].set)
		FZ_CALL(f, FK_SOCK_OPT, setsockopt(f->fd[s], SOL_SOCKET,
						   opts[o].name, arg, len));
	else
		FZ_CALL(f, FK_SOCK_OPT, getsockopt(f->fd[s], SOL_SOCKET,
						   opts[o].name, arg, &len));
}

static void fz_bind_connect(struct fz *f, int connect_it)
{
	struct sockaddr_storage ss;
	const char *aw, *pw;
	unsigned short port;
	socklen_t len;
	uint64_t r[3], p;
	int s;

	fz_draw(r, 3);
	s = r[0] % FZ_SOCKS;
	len = fz_sin(f, r[1], &ss, &aw);
	port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (!connect_it && port >= f->port0 && port < f->port0 + FZ_SOCKS) {
		/* Not a slot's own port: its next socket could not bind. */
		port += 16;
		((struct sockaddr_in *)&ss)->sin_port = htons(port);
	}
	p = fz_ptr(f, &ss, r[2], &pw);
	fz_desc(f, "%s(s%d, %s %s, ptr %s)", connect_it ? "connect" : "bind",
		s, aw, fz_sin_str(&ss, len), pw);
	if (connect_it)
		FZ_CALL(f, FK_CONNECT, connect(f->fd[s], (void *)(uintptr_t)p, len));
	else
		FZ_CALL(f, FK_BIND, bind(f->fd[s], (void *)(uintptr_t)p, len));
}

static void fz_ioctl(struct fz *f)
{
	static const struct { unsigned long cmd; const char *what; } cmds[] = {
		{ SIOCRDSSETTOS, "SIOCRDSSETTOS" }, { SIOCRDSSETTOS, "SIOCRDSSETTOS" },
		{ SIOCRDSSETTOS, "SIOCRDSSETTOS" }, { SIOCRDSGETTOS, "SIOCRDSGETTOS" },
		{ SIOCRDSGETTOS, "SIOCRDSGETTOS" },
		{ SIOCPROTOPRIVATE + 2, "SIOCPROTOPRIVATE+2" },
		{ SIOCPROTOPRIVATE + 15, "SIOCPROTOPRIVATE+15" },
		{ FIONREAD, "FIONREAD" }, { TIOCOUTQ, "SIOCOUTQ" },
		{ 0x8905, "SIOCATMARK" }, { 0x8906, "SIOCGSTAMP" },
		{ FIONBIO, "FIONBIO" },
	};
	uint64_t r[3], p;
	const char *pw;
	unsigned int c;
	int s;

	fz_draw(r, 3);
	s = r[0] % FZ_SOCKS;
	c = r[1] % ARRAY_SIZE(cmds);
	memset(f->opt.buf, 0, sizeof(int));
	/* A few types of service: each makes connections of its own. */
	f->opt.buf[0] = (unsigned char)((r[2] >> 8) % 4);
	p = fz_ptr(f, f->opt.buf, r[2], &pw);
	fz_desc(f, "ioctl(s%d, %s, %s %u)", s, cmds[c].what, pw, f->opt.buf[0]);
	FZ_CALL(f, FK_IOCTL, ioctl(f->fd[s], cmds[c].cmd, (void *)(uintptr_t)p));
}

static void fz_poll(struct fz *f)
{
	struct pollfd p[FZ_SOCKS];
	uint64_t r[2];
	int i, n;

	fz_draw(r, 2);
	n = r[0] % 2 ? FZ_SOCKS : 1;
	for (i = 0; i < n; i++) {
		p[i].fd = f->fd[(r[0] + i) % FZ_SOCKS];
		p[i].events = (short)(r[1] >> (4 * i));
		p[i].revents = 0;
	}
	fz_desc(f, "poll(%d fds)", n);
	FZ_CALL(f, FK_POLL, poll(p, n, 0));
}

static void fz_name(struct fz *f)
{
	struct sockaddr_storage ss;
	uint64_t r[3], pa, pl;
	const char *aw, *lw = "ok";
	socklen_t len;
	int s, peer;

	fz_draw(r, 3);
	s = r[0] % FZ_SOCKS;
	peer = (r[0] >> 32) & 1;
	switch (r[1] % 8) {
	case 0:
		len = (socklen_t)-1;
		break;
	case 1:
		len = 0;
		break;
	case 2:
		len = 4;
		break;
	default:
		len = sizeof(ss);
	}
	pa = fz_ptr(f, &ss, r[2], &aw);
	pl = (uintptr_t)&len;
	if ((r[2] >> 32) % 32 == 0) {
		pl = r[2] & (1ULL << 40) ? 0 : FZ_KERNEL_ADDR;
		lw = "bad";
	}
	fz_desc(f, "%s(s%d, %s, len %s %d)", peer ? "getpeername" : "getsockname",
		s, aw, lw, (int)len);
	FZ_CALL(f, FK_NAME, (peer ? getpeername : getsockname)
		(f->fd[s], (void *)(uintptr_t)pa, (socklen_t *)(uintptr_t)pl));
}

/*
 * Set a new socket up: a short SO_RCVTIMEO (RDS_OP_BARRIER never waits
 * long) and, unless @how says not to, bound to this node's address
 * (mostly) or to loopback, on slot @s's port.
 */
static void fz_sock_setup(struct fz *f, int s, unsigned int how)
{
	struct timeval tv = { 0, FZ_RCVTIMEO_MS * 1000 };
	struct sockaddr_in sin;

	fz_desc(f, "setsockopt(s%d, SOL_SOCKET, SO_RCVTIMEO, %d ms)", s,
		FZ_RCVTIMEO_MS);
	if (FZ_CALL(f, FK_SOCK_OPT, setsockopt(f->fd[s], SOL_SOCKET, SO_RCVTIMEO,
					       &tv, sizeof(tv))))
		rt_abort();
	if (how >= 7)
		return;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(f->port0 + s);
	sin.sin_addr = f->self;
	if (how == 6)
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fz_desc(f, "bind(s%d, %s)", s, sin_str(&sin));
	FZ_CALL(f, FK_BIND, bind(f->fd[s], (struct sockaddr *)&sin, sizeof(sin)));
}

static void fz_socket(struct fz *f, int s)
{
	fz_desc(f, "socket(AF_RDS, SOCK_SEQPACKET, 0) for s%d", s);
	f->fd[s] = FZ_CALL(f, FK_SOCKET, socket(AF_RDS, SOCK_SEQPACKET, 0));
	if (f->fd[s] < 0)
		rt_abort();
}

/*
 * Close a socket and make it again, now and then right after an RDMA
 * send, so that the close finds the operation in flight; now and then
 * after a socket() that must fail.
 */
static void fz_recreate(struct fz *f)
{
	static const int types[][2] = {
		{ SOCK_DGRAM, 0 }, { SOCK_STREAM, 0 }, { SOCK_RAW, 0 },
		{ SOCK_SEQPACKET, 1 }, { SOCK_SEQPACKET, IPPROTO_TCP },
		{ SOCK_MAX, 0 },
	};
	uint64_t r[4];
	int s, fd, t;

	fz_draw(r, 4);
	s = r[0] % FZ_SOCKS;
	if (r[1] % 4 == 0)
		fz_send(f, s, (r[1] >> 8) % 2 ? FZ_SM_ARGS : FZ_SM_MAP);
	fz_desc(f, "close(s%d)", s);
	FZ_CALL(f, FK_CLOSE, close(f->fd[s]));
	f->fd[s] = -1;
	fz_cookies_stale(f, s);
	if (r[2] % 8 == 0) {
		t = (r[2] >> 8) % ARRAY_SIZE(types);
		fz_desc(f, "socket(AF_RDS, %d, %d)", types[t][0], types[t][1]);
		fd = FZ_CALL(f, FK_SOCKET, socket(AF_RDS, types[t][0], types[t][1]));
		if (fd >= 0)
			close(fd);
	}
	fz_socket(f, s);
	fz_sock_setup(f, s, r[3] % 8);
}

static void fz_op(struct fz *f, int in_child);

/*
 * A child makes calls on the sockets it inherited, with its own sequence
 * (drawn from this one), and is killed after a few milliseconds, whatever
 * it is doing.
 */
static void fz_fork(struct fz *f)
{
	unsigned long ops, i;
	uint64_t r[3];
	int status;
	pid_t pid;

	fz_draw(r, 3);
	ops = 1 + r[0] % 48;
	fflush(stdout);
	fz_desc(f, "fork() for %lu ops, SIGKILL after %llu us", ops,
		(unsigned long long)(r[1] % 8000));
	pid = fork();
	if (pid)
		fz_result(f, FK_FORK, pid, errno);
	if (pid < 0)
		return;
	if (!pid) {
		fz_in_child = 1;
		fuzz_seed_state(r[2]);
		for (i = 0; i < ops; i++)
			fz_op(f, 1);
		_exit(0);
	}
	f->sh->st.forks++;
	usleep(r[1] % 8000);
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (f->sh->child_fail[0]) {
		rt_fail("%s", f->sh->child_fail);
		f->sh->child_fail[0] = 0;
	}
}

/* One op: a call or a few, of a kind drawn by weight. */
static void fz_op(struct fz *f, int in_child)
{
	unsigned int w = fuzz_rand() % 1000;

	if (w < 300)
		fz_send(f, -1, -1);
	else if (w < 420)
		fz_recv(f, 0);
	else if (w < 590)
		fz_recv(f, 1);
	else if (w < 720)
		fz_setopt(f);
	else if (w < 790)
		fz_getopt(f);
	else if (w < 815)
		fz_sockopt(f);
	else if (w < 835)
		fz_bind_connect(f, 0);
	else if (w < 855)
		fz_bind_connect(f, 1);
	else if (w < 880)
		fz_ioctl(f);
	else if (w < 920)
		fz_poll(f);
	else if (w < 960)
		fz_name(f);
	else if (w < 990)
		fz_recreate(f);
	else if (!in_child)
		fz_fork(f);
}

/* --------------------------------------------------------------- seeds */

static struct in_addr fz_self;		/* RDS_ADDR, or 127.0.0.1 */
static int fz_two;			/* RDS_NODES=2: fuzz the peer */
static unsigned long fz_max_ops = 30000;
static unsigned int fz_budget_s = 60;
static uint64_t fz_given_seed;

static void *fz_map(size_t len, int prot, int shared)
{
	void *p = mmap(NULL, len, prot, (shared ? MAP_SHARED : MAP_PRIVATE) |
		       MAP_ANONYMOUS, -1, 0);

	ASSERT_TRUE(p != MAP_FAILED, "mmap %zu: %s", len, rt_errname(errno));
	return p;
}

/* The state of a seed: memory, sockets bound to slot ports. */
static struct fz *fz_new(uint64_t seed)
{
	static struct fz fz;
	struct fz *f = &fz;
	size_t i;
	void *hole;

	memset(f, 0, sizeof(*f));
	f->seed = seed;
	f->two = fz_two;
	f->node = fz_two ? node : 0;
	f->max_ops = fz_max_ops;
	f->port0 = FZ_PORT + 32 * this_case();
	f->self = fz_self;
	if (fz_two)
		f->peer = addr_peer;
	inet_pton(AF_INET, FZ_ABSENT, &f->absent);
	f->sh = fz_map(sizeof(*f->sh), PROT_READ | PROT_WRITE, 1);
	memset(f->sh, 0, sizeof(*f->sh));
	f->arena = fz_map(FZ_ARENA + 4096, PROT_READ | PROT_WRITE, 0);
	ASSERT_SYS_OK(mprotect(f->arena + FZ_ARENA, 4096, PROT_NONE));
	f->sbuf = fz_map(FZ_SBUF, PROT_READ | PROT_WRITE, 0);
	f->rbuf = fz_map(FZ_RBUF + 8192, PROT_READ | PROT_WRITE, 0);
	f->iov = fz_map(FZ_MAXIOV * sizeof(*f->iov), PROT_READ | PROT_WRITE, 0);
	f->ro = fz_map(2 * 4096, PROT_READ, 0);
	f->none = fz_map(4096, PROT_NONE, 0);
	hole = fz_map(4096, PROT_READ, 0);
	munmap(hole, 4096);
	f->hole = (uintptr_t)hole;
	for (i = 0; i < FZ_ARENA; i += 64)
		f->arena[i] = (unsigned char)(i >> 6);
	for (i = 0; i < FZ_SBUF; i += 64)
		f->sbuf[i] = (unsigned char)(i >> 6);

	/* The sequence of node 2 differs from node 1's for the same seed. */
	fuzz_seed_state(seed + ((uint64_t)f->node << 48));
	for (i = 0; i < FZ_SOCKS; i++) {
		fz_socket(f, i);
		fz_sock_setup(f, i, 0);
	}
	return f;
}

/*
 * The stall watchdog: an op still running after FZ_STALL_MS gets a
 * SIGUSR1 (no SA_RESTART), which ends an interruptible wait in the
 * kernel, as a kill would, and the watcher prints where it waits.  With
 * our modules an op that takes FZ_HANG_MS fails (close() waits,
 * uninterruptibly, until the messages that carry the socket's keys are
 * acknowledged: seconds across a reconnection); the distribution's
 * close() can wait without end for a message its transport keeps mapped
 * (rds_send_drop_to() in rds_message_wait(), seen with RDMA to its own
 * address), so there a stall is only counted (stalls=).
 */
static timer_t fz_timer;
static int fz_timer_ok;

static void fz_on_stall(int sig)
{
	(void)sig;
	fz_stalled = 1;
}

static void fz_watchdog_init(void)
{
	struct sigaction sa = { .sa_handler = fz_on_stall };
	struct sigevent ev = {
		.sigev_notify = SIGEV_SIGNAL,
		.sigev_signo = SIGUSR1,
	};

	sigemptyset(&sa.sa_mask);
	fz_timer_ok = !sigaction(SIGUSR1, &sa, NULL) &&
		      !timer_create(CLOCK_MONOTONIC, &ev, &fz_timer);
}

static void fz_watchdog(int on)
{
	struct itimerspec its = {
		.it_value = { FZ_STALL_MS / 1000, (FZ_STALL_MS % 1000) * 1000000L },
	};

	if (!fz_timer_ok)
		return;
	if (!on)
		memset(&its, 0, sizeof(its));
	timer_settime(fz_timer, 0, &its, NULL);
}

/*
 * The watcher: a process that, when an op of @parent runs past
 * FZ_STALL_MS, prints where in the kernel it waits (/proc/PID/stack),
 * which the op itself cannot tell if the wait is uninterruptible.
 */
static void fz_watcher(struct fz *f, pid_t parent)
{
	char path[64], line[256];
	unsigned long dumped = 0;
	long long start;
	FILE *in;
	int fd;

	/* The sockets are the fuzzer's: a close there must release them. */
	for (fd = STDERR_FILENO + 1; fd < 1024; fd++)
		close(fd);
	for (;;) {
		rt_sleep_ms(1000);
		if (getppid() != parent)
			_exit(0);
		start = f->sh->op_start;
		if (!start || rt_now_ms() - start < FZ_STALL_MS ||
		    dumped == f->sh->op_no)
			continue;
		dumped = f->sh->op_no;
		dprintf(STDOUT_FILENO, "# seed %llu op %lu: blocked %lld ms; the kernel stack:\n",
			(unsigned long long)f->seed, dumped, rt_now_ms() - start);
		snprintf(path, sizeof(path), "/proc/%d/stack", parent);
		in = fopen(path, "r");
		while (in && fgets(line, sizeof(line), in))
			dprintf(STDOUT_FILENO, "#   %s", line);
		if (in)
			fclose(in);
	}
}

static void fz_run(struct fz *f)
{
	long long t0, ms;
	pid_t parent = getpid(), watcher;

	fz_watchdog_init();
	fflush(stdout);
	watcher = fork();
	if (!watcher)
		fz_watcher(f, parent);
	f->deadline = rt_now_ms() + fz_budget_s * 1000LL;
	for (f->op = 1; !f->max_ops || f->op <= f->max_ops; f->op++) {
		t0 = rt_now_ms();
		if (t0 >= f->deadline)
			break;
		fz_stalled = 0;
		snprintf(f->stall_desc, sizeof(f->stall_desc), "?");
		f->stall_kind = -1;
		f->sh->op_no = f->op;
		f->sh->op_start = t0;
		fz_watchdog(1);
		fz_op(f, 0);
		fz_watchdog(0);
		f->sh->op_start = 0;
		ms = rt_now_ms() - t0;
		if (ms > f->sh->st.slow_ms) {
			f->sh->st.slow_ms = ms;
			f->sh->st.slow_op = f->op;
		}
		f->sh->st.ops = f->op;
		if (!fz_stalled)
			continue;
		f->sh->st.stalls++;
		/*
		 * With our modules an op that blocked FZ_HANG_MS fails; a
		 * shorter stall is reported (the watcher printed where it
		 * waited), as is one of the distribution's and the wait
		 * fz_known_bugs describes, which a signal ends.
		 */
		if (fz_mods != FZ_D && ms >= FZ_HANG_MS &&
		    !(f->stall_kind == FK_SO_FREE_MR && f->stall_err == EINTR))
			rt_fail("seed %llu op %lu: blocked %lld ms: %s; replay with -n %lu",
				(unsigned long long)f->seed, f->op, ms,
				f->stall_desc, f->op);
		else
			rt_diag("seed %llu op %lu: stalled, %lld ms: %s",
				(unsigned long long)f->seed, f->op, ms,
				f->stall_desc);
	}
	f->seq = fuzz_state;
	if (watcher > 0) {
		kill(watcher, SIGKILL);
		waitpid(watcher, NULL, 0);
	}
}

/* Close the seed's sockets, with whatever they still have in flight. */
static void fz_close_all(struct fz *f)
{
	int i;

	for (i = 0; i < FZ_SOCKS; i++) {
		fz_desc(f, "close(s%d) at the end", i);
		FZ_CALL(f, FK_CLOSE, close(f->fd[i]));
		f->fd[i] = -1;
	}
}

/* The seed's diag line; its format is in the header comment. */
static void fz_diag(struct fz *f, long long ms)
{
	const struct fz_stats *st = &f->sh->st;
	char kinds[1536], cms[128], notes[160];
	size_t kl = 0, cl = 0, nl = 0;
	unsigned int paths = 0, cm = 0;
	unsigned long total = 0;
	int k, e;

	kinds[0] = 0;
	cms[0] = 0;
	notes[0] = 0;
	for (k = 0; k < FK_NR; k++) {
		for (e = 0; e < FZ_ERRMAX; e++)
			paths += st->seen[k][e];
		kl += snprintf(kinds + kl, sizeof(kinds) - kl, "%s%s:%lu",
			       k ? "," : "", fz_kind_names[k], st->kind_calls[k]);
		if (kl >= sizeof(kinds))
			kl = sizeof(kinds) - 1;
	}
	for (k = 0; k < FZ_CM_NR; k++) {
		if (!(st->cmsg_ok & (1U << k)))
			continue;
		cm++;
		cl += snprintf(cms + cl, sizeof(cms) - cl, "%s%s", cl ? "," : "",
			       fz_cm_names[k]);
	}
	for (k = 0; k < FZ_NOTE_NR; k++) {
		if (!st->notes[k])
			continue;
		total += st->notes[k];
		nl += snprintf(notes + nl, sizeof(notes) - nl, "%s%d:%lu",
			       nl ? "," : "", k, st->notes[k]);
	}
	printf("# fuzz_diag seed=%llu node=%d modules=%s ops=%lu calls=%lu",
	       (unsigned long long)f->seed, f->node, fz_mods_name, st->ops,
	       st->calls);
	printf(" ms=%lld unexpected=%lu paths=%u cmsg_ok=%u cmsg_ok_kinds=%s",
	       ms, st->bad, paths, cm, cm ? cms : "-");
	printf(" notes=%lu note_status=%s dest_rx=%lu forks=%lu seq=%016llx",
	       total, total ? notes : "-", st->dest_rx, st->forks,
	       (unsigned long long)f->seq);
	printf(" kinds=%s stalls=%lu slow_op=%lu slow_ms=%lld\n", kinds,
	       st->stalls, st->slow_op, st->slow_ms);
	fflush(stdout);
}

/* One node: fuzz this node's sockets, an absent peer and bad addresses. */
static void fz_case_one(uint64_t seed)
{
	struct fz *f = fz_new(seed);
	long long start = rt_now_ms(), ms;

	fz_run(f);
	ms = rt_now_ms() - start;
	fz_close_all(f);
	fz_diag(f, ms);
}

/*
 * A region the peer may always aim at: 256 KiB of the arena, registered
 * with RDS_GET_MR or, where that needs a connection (the distribution),
 * with RDS_CMSG_RDMA_MAP on a message to the peer.  Its cookie and
 * whether it takes atomics go to the peer over the control connection;
 * the peer's come back into the stable slot.  The socket stays open
 * until the seed ends.
 */
static int fz_stable(struct fz *f)
{
	struct rds_get_mr_args a = {
		.vec = { (uintptr_t)f->arena + (1 << 20), 256 << 10 },
	};
	struct fz_cookie *st = &f->sh->ck[FZ_CK_STABLE];
	long long until = rt_now_ms() + 20000;
	struct sockaddr_in sin;
	union {
		unsigned char buf[CMSG_SPACE(sizeof(a))];
		struct cmsghdr align;
	} ctl;
	struct msghdr mh = { .msg_name = &sin, .msg_namelen = sizeof(sin) };
	struct cmsghdr *c;
	uint64_t cookie = 0;
	long got[2], ret;
	int fd;

	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	ASSERT_TRUE(fd >= 0, "socket: %s", rt_errname(errno));
	sin_set(&sin, f->self, f->port0 + FZ_SOCKS);
	ASSERT_SYS_OK(bind(fd, (struct sockaddr *)&sin, sizeof(sin)));
	sync_peer("stable bound");

	a.cookie_addr = (uintptr_t)&cookie;
	fz_desc(f, "setsockopt(stable, RDS_GET_MR, 256 KiB)");
	ret = FZ_CALL(f, FK_SO_GET_MR, setsockopt(fd, SOL_RDS, RDS_GET_MR, &a,
						  sizeof(a)));
	sin_set(&sin, f->peer, f->port0 + FZ_SOCKS);
	while (ret < 0 && rt_now_ms() < until) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_RDS;
		c->cmsg_type = RDS_CMSG_RDMA_MAP;
		c->cmsg_len = CMSG_LEN(sizeof(a));
		memcpy(CMSG_DATA(c), &a, sizeof(a));
		fz_desc(f, "sendmsg(stable, RDS_CMSG_RDMA_MAP 256 KiB)");
		ret = FZ_CALL(f, FK_SEND_MAP, sendmsg(fd, &mh, MSG_DONTWAIT));
		if (ret < 0)
			rt_sleep_ms(100);
	}
	if (ret < 0)
		rt_diag("node %d: no stable region for the peer: %s", node,
			rt_errname(errno));
	if (node == 1) {
		tell_peer((long)cookie);
		tell_peer(fz_mods == FZ_O);
		got[0] = hear_peer();
		got[1] = hear_peer();
	} else {
		got[0] = hear_peer();
		got[1] = hear_peer();
		tell_peer((long)cookie);
		tell_peer(fz_mods == FZ_O);
	}
	if (got[0]) {
		st->cookie = (uint64_t)got[0];
		st->len = 256 << 10;
		st->sock = -1;
		st->state = FZ_CK_LIVE;
		st->atomics = got[1];
	}
	rt_diag("node %d: stable region cookie %llx, the peer's %llx", node,
		(unsigned long long)cookie, (unsigned long long)st->cookie);
	return fd;
}

/* The nonzero counters about sending, on one line. */
static void fz_dump_counters(int fd)
{
	struct rds_info_counter *c;
	char line[2048];
	size_t n = 0;
	socklen_t len;
	unsigned int i;

	if (rds_info_read(fd, RDS_INFO_COUNTERS, (void **)&c, &len) < 0)
		return;
	line[0] = 0;
	for (i = 0; c && i < len / sizeof(*c) && n < sizeof(line) - 64; i++) {
		if (!c[i].value || (!strstr((char *)c[i].name, "send") &&
				    !strstr((char *)c[i].name, "tx") &&
				    !strstr((char *)c[i].name, "drop") &&
				    !strstr((char *)c[i].name, "conn")))
			continue;
		n += snprintf(line + n, sizeof(line) - n, " %.32s=%llu",
			      (char *)c[i].name, (unsigned long long)c[i].value);
	}
	free(c);
	rt_diag("node %d: counters:%s", node, line);
}

/* What this node's RDS says about its connections, for a failed check. */
static void fz_dump_conns(int fd, unsigned short port)
{
	struct rds_info_connection *ci;
	struct rds_info_message *mi;
	char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];
	const int tables[] = { RDS_INFO_SEND_MESSAGES, RDS_INFO_RETRANS_MESSAGES };
	socklen_t len;
	unsigned int i, t, n;

	if (rds_info_read(fd, RDS_INFO_CONNECTIONS, (void **)&ci, &len) >= 0) {
		for (i = 0; ci && i < len / sizeof(*ci); i++) {
			inet_ntop(AF_INET, &ci[i].laddr, a, sizeof(a));
			inet_ntop(AF_INET, &ci[i].faddr, b, sizeof(b));
			rt_diag("node %d: connection %s -> %s tos %u flags %#x tx %llu rx %llu",
				node, a, b, ci[i].tos, ci[i].flags,
				(unsigned long long)ci[i].next_tx_seq,
				(unsigned long long)ci[i].next_rx_seq);
		}
	}
	free(ci);
	for (t = 0; t < ARRAY_SIZE(tables); t++) {
		if (rds_info_read(fd, tables[t], (void **)&mi, &len) < 0)
			continue;
		for (i = 0, n = 0; mi && i < len / sizeof(*mi); i++)
			n += ntohs(mi[i].lport) == port;
		rt_diag("node %d: %s: %u messages, %u from port %u", node,
			t ? "RDS_INFO_RETRANS_MESSAGES" : "RDS_INFO_SEND_MESSAGES",
			(unsigned int)(len / sizeof(*mi)), n, port);
		for (i = 0; mi && i < len / sizeof(*mi) && i < 4; i++) {
			inet_ntop(AF_INET, &mi[i].laddr, a, sizeof(a));
			inet_ntop(AF_INET, &mi[i].faddr, b, sizeof(b));
			rt_diag("node %d:   seq %llu len %u %s:%u -> %s:%u flags %#x tos %u",
				node, (unsigned long long)mi[i].seq, mi[i].len, a,
				ntohs(mi[i].lport), b, ntohs(mi[i].fport),
				mi[i].flags, mi[i].tos);
		}
		free(mi);
	}
	fz_dump_counters(fd);
}

/*
 * After the fuzzing: a datagram each way on fresh sockets must arrive
 * within FZ_ALIVE_MS, or the fuzzing left the connection broken.  (The
 * other node waits CTL_TIMEOUT_MS at most for the next step: longer.)
 */
static void fz_alive(struct fz *f)
{
	struct sockaddr_in me, to, from;
	long long until;
	char buf[64], want[64];
	int fd, sent = 0, got = 0, peer_ok;
	long n;

	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	ASSERT_TRUE(fd >= 0, "socket: %s", rt_errname(errno));
	sin_set(&me, f->self, f->port0 + FZ_SOCKS + 1);
	ASSERT_SYS_OK(bind(fd, (struct sockaddr *)&me, sizeof(me)));
	sin_set(&to, f->peer, f->port0 + FZ_SOCKS + 1);
	sync_peer("alive bound");
	snprintf(buf, sizeof(buf), "fz-alive from node %d", node);
	snprintf(want, sizeof(want), "fz-alive from node %d", peer_node);
	until = rt_now_ms() + FZ_ALIVE_MS;
	while ((!sent || !got) && rt_now_ms() < until) {
		if (!sent) {
			n = sendto(fd, buf, strlen(buf) + 1, MSG_DONTWAIT,
				   (struct sockaddr *)&to, sizeof(to));
			if (n >= 0)
				sent = 1;
			else if (errno != EAGAIN && errno != ENOBUFS)
				ASSERT_TRUE(0, "sendto %s: %s", sin_str(&to),
					    rt_errname(errno));
		}
		if (!got && (poll_fd(fd, POLLIN, 100) & POLLIN)) {
			memset(buf, 0, sizeof(buf));
			n = recv_msg(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT,
				     &from, NULL);
			if (n > 0) {
				EXPECT_TRUE(!strcmp(buf, want), "got '%s', expected '%s'",
					    buf, want);
				got = 1;
			}
			snprintf(buf, sizeof(buf), "fz-alive from node %d", node);
		} else if (!sent) {
			rt_sleep_ms(100);
		}
	}
	EXPECT_TRUE(sent, "could not send to node %d in %d ms after fuzzing",
		    peer_node, FZ_ALIVE_MS);
	EXPECT_TRUE(got,
		    "nothing from node %d in %d ms after fuzzing: the connection did not survive",
		    peer_node, FZ_ALIVE_MS);
	/* Either side failing: both say what their connections look like. */
	if (!(sent && got))
		fz_dump_conns(fd, f->port0 + FZ_SOCKS + 1);
	if (node == 1) {
		tell_peer(sent && got);
		peer_ok = hear_peer();
	} else {
		peer_ok = hear_peer();
		tell_peer(sent && got);
	}
	if (sent && got && !peer_ok)
		fz_dump_conns(fd, f->port0 + FZ_SOCKS + 1);
	close(fd);
	sync_peer("alive done");
}

/* Two nodes: fuzz each other, then check that they still talk. */
static void fz_case_two(uint64_t seed)
{
	struct fz *f = fz_new(seed);
	long long start, ms;
	int stable;

	stable = fz_stable(f);
	sync_peer("start");
	start = rt_now_ms();
	fz_run(f);
	ms = rt_now_ms() - start;
	sync_peer("fuzzed");
	fz_close_all(f);
	close(stable);
	fz_alive(f);
	fz_diag(f, ms);
}

static void fz_case(uint64_t seed)
{
	if (fz_two)
		fz_case_two(seed);
	else
		fz_case_one(seed);
}

/* --------------------------------------------------------------- sweep */

/* What lengths a setsockopt() takes: it must fail outside min..max. */
struct fz_opt_rule {
	int name;
	enum fz_kind kind;
	unsigned int min, max, max_distro;
	const char *what;
};

/* No limit; min > max: the option takes no length. */
#define FZ_ANY	UINT_MAX

static const struct fz_opt_rule fz_set_rules[] = {
	{ RDS_CANCEL_SENT_TO, FK_SO_CANCEL, sizeof(struct sockaddr_in), FZ_ANY,
	  FZ_ANY, "RDS_CANCEL_SENT_TO" },
	{ RDS_GET_MR, FK_SO_GET_MR, sizeof(struct rds_get_mr_args),
	  sizeof(struct rds_get_mr_args), sizeof(struct rds_get_mr_args),
	  "RDS_GET_MR" },
	{ RDS_FREE_MR, FK_SO_FREE_MR, sizeof(struct rds_free_mr_args),
	  sizeof(struct rds_free_mr_args), sizeof(struct rds_free_mr_args),
	  "RDS_FREE_MR" },
	{ 4, FK_SO_OTHER, 1, 0, 0, "4 (was RDS_BARRIER)" },
	{ RDS_RECVERR, FK_SO_BOOL, sizeof(int), FZ_ANY, FZ_ANY, "RDS_RECVERR" },
	{ RDS_CONG_MONITOR, FK_SO_BOOL, sizeof(int), FZ_ANY, FZ_ANY,
	  "RDS_CONG_MONITOR" },
	{ RDS_GET_MR_FOR_DEST, FK_SO_GET_MR_DEST,
	  sizeof(struct rds_get_mr_for_dest_args),
	  sizeof(struct rds_get_mr_for_dest_args),
	  sizeof(struct rds_get_mr_for_dest_args), "RDS_GET_MR_FOR_DEST" },
	{ SO_RDS_TRANSPORT, FK_SO_TRANSPORT, sizeof(int), sizeof(int),
	  sizeof(int), "SO_RDS_TRANSPORT" },
	{ 9, FK_SO_OTHER, 1, 0, 0, "9" },
	{ SO_RDS_MSG_RXPATH_LATENCY, FK_SO_LATENCY,
	  sizeof(struct rds_rx_trace_so), sizeof(struct rds_rx_trace_so),
	  sizeof(struct rds_rx_trace_so), "SO_RDS_MSG_RXPATH_LATENCY" },
	{ SO_TIMESTAMP_OLD, FK_SO_TSTAMP, sizeof(int), FZ_ANY, sizeof(int),
	  "SO_TIMESTAMP_OLD" },
	{ SO_TIMESTAMP_NEW, FK_SO_TSTAMP, sizeof(int), FZ_ANY, sizeof(int),
	  "SO_TIMESTAMP_NEW" },
	{ RDS_OP_BARRIER, FK_SO_OTHER, 1, 0, 0, "RDS_OP_BARRIER" },
	{ 0, FK_SO_OTHER, 1, 0, 0, "0" },
	{ 11, FK_SO_OTHER, 1, 0, 0, "11" },
	{ 65, FK_SO_OTHER, 1, 0, 0, "65" },
	{ RDS_INFO_COUNTERS, FK_SO_OTHER, 1, 0, 0, "RDS_INFO_COUNTERS" },
};

/* A valid-looking argument for option @name, in f->opt. */
static void fz_sweep_arg(struct fz *f, int name, uint64_t *cookie)
{
	struct sockaddr_in *sin;

	memset(&f->opt, 0, sizeof(f->opt));
	*cookie = 0;
	switch (name) {
	case RDS_CANCEL_SENT_TO:
		sin_set(&f->opt.sin, f->absent, f->port0);
		break;
	case RDS_GET_MR:
		f->opt.mr.vec.addr = (uintptr_t)f->arena + 65536;
		f->opt.mr.vec.bytes = 4096;
		f->opt.mr.cookie_addr = (uintptr_t)cookie;
		break;
	case RDS_GET_MR_FOR_DEST:
		sin = (struct sockaddr_in *)&f->opt.mrd.dest_addr;
		sin_set(sin, f->absent, f->port0);
		f->opt.mrd.vec.addr = (uintptr_t)f->arena + 65536;
		f->opt.mrd.vec.bytes = 4096;
		f->opt.mrd.cookie_addr = (uintptr_t)cookie;
		break;
	case RDS_RECVERR:
	case RDS_CONG_MONITOR:
	case SO_TIMESTAMP_OLD:
	case SO_TIMESTAMP_NEW:
		f->opt.val = 1;
		break;
	case SO_RDS_TRANSPORT:
		f->opt.val = RDS_TRANS_IB;
		break;
	case SO_RDS_MSG_RXPATH_LATENCY:
		f->opt.trace.rx_traces = 1;
		break;
	}
}

/* A socket for the sweep: unbound (0), on RDS_ADDR (1) or loopback (2). */
static int fz_sweep_socket(struct fz *f, int state)
{
	struct sockaddr_in sin;
	int fd = ASSERT_SYS_OK(socket(AF_RDS, SOCK_SEQPACKET, 0));

	sin_set(&sin, f->self, f->port0 + 20);
	if (state == 2)
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (state)
		ASSERT_SYS_OK(bind(fd, (struct sockaddr *)&sin, sizeof(sin)));
	return fd;
}

static const char * const fz_states[] = {
	"unbound", "bound to RDS_ADDR", "bound to 127.0.0.1",
};

static void fz_sweep_set(struct fz *f, int state, const struct fz_opt_rule *o)
{
	struct rds_free_mr_args fr;
	unsigned int len, max = fz_mods == FZ_D ? o->max_distro : o->max;
	uint64_t cookie, bad[] = { 0, FZ_KERNEL_ADDR };
	unsigned int i;
	long ret;
	int fd = fz_sweep_socket(f, state);

	for (len = 0; len <= FZ_SWEEP_MAX; len++) {
		fz_sweep_arg(f, o->name, &cookie);
		fz_desc(f, "sweep: setsockopt(%s socket, %s, valid-looking, %u)",
			fz_states[state], o->what, len);
		ret = FZ_CALL(f, o->kind, setsockopt(fd, SOL_RDS, o->name,
						     f->opt.buf, len));
		if (ret == 0 && (len < o->min || len > max))
			rt_fail("sweep: setsockopt(%s socket, %s, %u bytes) worked: not %u..%u",
				fz_states[state], o->what, len, o->min, max);
		if (ret == 0 && cookie) {
			fr.cookie = cookie;
			fr.flags = 0;
			fz_desc(f, "sweep: setsockopt(%s socket, RDS_FREE_MR, the cookie of %s)",
				fz_states[state], o->what);
			EXPECT_EQ(FZ_CALL(f, FK_SO_FREE_MR,
					  setsockopt(fd, SOL_RDS, RDS_FREE_MR, &fr,
						     sizeof(fr))), 0);
		} else if (ret == 0 && (o->name == RDS_GET_MR ||
					o->name == RDS_GET_MR_FOR_DEST)) {
			rt_fail("sweep: %s succeeded without a cookie", o->what);
		}
	}
	if (o->min > max)
		goto out;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		fz_desc(f, "sweep: setsockopt(%s socket, %s, optval %#llx, %u)",
			fz_states[state], o->what, (unsigned long long)bad[i],
			o->min);
		ret = FZ_CALL(f, o->kind, setsockopt(fd, SOL_RDS, o->name,
						     (void *)(uintptr_t)bad[i],
						     o->min));
		EXPECT_TRUE(ret < 0, "%s succeeded", f->desc);
	}
out:
	close(fd);
}

static void fz_sweep_get(struct fz *f, int state)
{
	static const int other[] = {
		0, RDS_CANCEL_SENT_TO, RDS_GET_MR, RDS_FREE_MR, 4,
		RDS_CONG_MONITOR, RDS_GET_MR_FOR_DEST, 9,
		SO_RDS_MSG_RXPATH_LATENCY, 11, 12, SO_TIMESTAMP_OLD,
		SO_TIMESTAMP_NEW, 65,
	};
	int names[64], n = 0, i, len, room, fd = fz_sweep_socket(f, state);
	enum fz_kind k;
	long ret;

	names[n++] = RDS_RECVERR;
	names[n++] = SO_RDS_TRANSPORT;
	names[n++] = RDS_OP_BARRIER;
	for (i = 0; i < (int)ARRAY_SIZE(other); i++)
		names[n++] = other[i];
	for (i = RDS_INFO_FIRST; i <= RDS_INFO_LAST + 1; i++)
		names[n++] = i;

	for (i = 0; i < n; i++) {
		if (names[i] == RDS_RECVERR || names[i] == SO_RDS_TRANSPORT)
			k = FK_GO_INT;
		else if (names[i] == RDS_OP_BARRIER)
			k = FK_GO_BARRIER;
		else if (names[i] >= RDS_INFO_FIRST)
			k = FK_GO_INFO;
		else
			k = FK_GO_OTHER;
		for (room = -1; room <= (int)FZ_SWEEP_MAX; room++) {
			len = room;
			memset(f->rbuf, 0, FZ_SWEEP_MAX + 8);
			fz_desc(f, "sweep: getsockopt(%s socket, %d, rbuf, %d)",
				fz_states[state], names[i], room);
			ret = FZ_CALL(f, k, getsockopt(fd, SOL_RDS, names[i], f->rbuf,
						       (socklen_t *)&len));
			switch (k) {
			case FK_GO_INT:
				/*
				 * The distribution compares a negative
				 * *optlen with sizeof(int) as unsigned,
				 * and answers it.
				 */
				if (room < 0 && fz_mods == FZ_D)
					break;
				EXPECT_TRUE((ret == 0) == (room >= (int)sizeof(int)),
					    "%s returned %ld", f->desc, ret);
				if (ret == 0)
					EXPECT_EQ(len, sizeof(int));
				break;
			case FK_GO_BARRIER:
				if (fz_mods != FZ_O)
					break;
				EXPECT_TRUE((ret == 0) ==
					    (room >= (int)sizeof(struct rds_op_barrier)),
					    "%s returned %ld", f->desc, ret);
				if (ret == 0)
					EXPECT_EQ(len, sizeof(struct rds_op_barrier));
				break;
			case FK_GO_INFO:
				if (room >= 0)
					fz_check_info(f, ret, errno, room, len);
				break;
			default:
				EXPECT_TRUE(ret < 0, "%s succeeded", f->desc);
			}
		}
	}
	close(fd);
}

/*
 * Every SOL_RDS option, set and read, at every length from 0 to the
 * largest argument + 8, on an unbound socket, one on RDS_ADDR and one on
 * loopback; then bad pointers at the length each takes.
 */
static void test_sockopt_sweep(void)
{
	long long start = rt_now_ms();
	struct fz *f = fz_new(0);
	const struct fz_stats *st = &f->sh->st;
	unsigned int i, paths = 0;
	int state, k, e;

	for (state = 0; state < 3; state++) {
		for (i = 0; i < ARRAY_SIZE(fz_set_rules); i++)
			fz_sweep_set(f, state, &fz_set_rules[i]);
		fz_sweep_get(f, state);
	}
	for (k = 0; k < FK_NR; k++)
		for (e = 0; e < FZ_ERRMAX; e++)
			paths += st->seen[k][e];
	rt_diag("sweep: calls=%lu paths=%u unexpected=%lu ms=%lld", st->calls,
		paths, st->bad, rt_now_ms() - start);
}

static void test_seed_1(void) { fz_case(1); }
static void test_seed_2(void) { fz_case(2); }
static void test_seed_3(void) { fz_case(3); }
static void test_seed_4(void) { fz_case(4); }
static void test_seed_given(void) { fz_case(fz_given_seed); }

/* ---------------------------------------------------------------- main */

static void fz_detect_modules(void)
{
	const char *m = getenv("RDS_MODULES");

	if ((m && !strcmp(m, "ours")) ||
	    (!m && !access("/sys/module/rds_zc", F_OK))) {
		fz_mods = FZ_O;
		fz_mods_name = "ours";
	} else if ((m && !strcmp(m, "distro")) ||
		   (!m && !access("/sys/module/rds", F_OK))) {
		fz_mods = FZ_D;
		fz_mods_name = "distro";
	}
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
	const char *nodes = getenv("RDS_NODES"), *modules;
	long ops = -1, secs = -1;
	struct rt_case *cases;
	int opt, fd, n, i;

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

	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (fd < 0) {
		modules = getenv("RDS_MODULES");
		if (modules && (!strcmp(modules, "ours") ||
				!strcmp(modules, "distro"))) {
			printf("1..1\n# socket(AF_RDS): %s\n", rt_errname(errno));
			printf("not ok 1 - AF_RDS sockets (RDS_MODULES=%s)\n",
			       modules);
			return RT_EXIT_FAIL;
		}
		printf("1..0 # SKIP no AF_RDS: %s\n", rt_errname(errno));
		return RT_EXIT_SKIP;
	}
	close(fd);
	if (fz_two)
		return fz_main_two(cases, n, argv + optind);
	return rt_run(cases, n, argv + optind);
}
