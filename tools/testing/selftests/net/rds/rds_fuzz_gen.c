// SPDX-License-Identifier: GPL-2.0
/*
 * rds_fuzz_gen.c - rds_fuzz's generator, the kinds of call it makes
 * and the errnos each may return, and the state of a seed.
 */
#include "rds_fuzz.h"

/* ------------------------------------------------------ the generator */

uint64_t fuzz_state;

/* xorshift64*: the same sequence on every machine for a given seed. */
uint64_t fuzz_rand(void)
{
	fuzz_state ^= fuzz_state >> 12;
	fuzz_state ^= fuzz_state << 25;
	fuzz_state ^= fuzz_state >> 27;
	return fuzz_state * 0x2545f4914f6cdd1dULL;
}

void fuzz_seed_state(uint64_t seed)
{
	fuzz_state = seed * 0x9e3779b97f4a7c15ULL + 1;
	if (!fuzz_state)
		fuzz_state = 1;
}

/* Every op draws a fixed count of numbers first, whatever happens next. */
void fz_draw(uint64_t *r, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		r[i] = fuzz_rand();
}

/* -------------------------------------------------------- call kinds */

/* Groups of kinds, for errnos every member may return. */
#define FZG_SEND	(FK_NR + 1)	/* FK_SEND .. FK_SEND_ODD */
#define FZG_SET		(FK_NR + 2)	/* FK_SO_* */
#define FZG_GET		(FK_NR + 3)	/* FK_GO_* */
#define FZG_RDMA	(FK_NR + 4)	/* FK_SEND_MAP .. FK_SEND_ODD */
#define FZG_MR		(FK_NR + 5)	/* FK_SO_GET_MR, FK_SO_GET_MR_DEST */
#define FZG_PIN		(FK_NR + 6)	/* the calls that pin user pages */

const char * const fz_kind_names[FK_NR] = {
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
	{ FK_BIND, FZ_OD, EINVAL, "IPv6 that is not unicast, or link-local without scope" },
	{ FK_BIND, FZ_OD, EADDRNOTAVAIL, "no transport serves the address and it is not local" },
	{ FK_BIND, FZ_OD, ENOPROTOOPT,
	  "SO_RDS_TRANSPORT chose a transport that does not serve the address" },
	{ FK_BIND, FZ_OD, EADDRINUSE, "another socket has that address and port" },
	{ FK_BIND, FZ_OD, EFAULT, "socket layer: the address is not readable" },

	/* connect() */
	{ FK_CONNECT, FZ_OD, EINVAL,
	  "length short of the family or sockaddr_in(6); broadcast or multicast" },
	{ FK_CONNECT, FZ_OD, EINVAL, "socket layer: length over sockaddr_storage" },
	{ FK_CONNECT, FZ_OD, EINVAL, "IPv6 link-local without scope" },
	{ FK_CONNECT, FZ_OD, EAFNOSUPPORT, "a family other than AF_INET(6)" },
	{ FK_CONNECT, FZ_OD, EDESTADDRREQ, "0.0.0.0" },
	{ FK_CONNECT, FZ_OD, EPROTOTYPE,
	  "IPv6 not unicast, or mapped 0.0.0.0, broadcast or multicast" },
	{ FK_CONNECT, FZ_OD, EFAULT, "socket layer: the address is not readable" },

	/* every sendmsg() */
	{ FZG_SEND, FZ_OD, EOPNOTSUPP,
	  "flags other than MSG_DONTWAIT and MSG_ZEROCOPY (OOB, MORE, EOR, NOSIGNAL)" },
	{ FZG_SEND, FZ_D, EOPNOTSUPP,
	  "MSG_ZEROCOPY on a socket with SO_ZEROCOPY: zero-copy is TCP's only" },
	{ FZG_SEND, FZ_OD, EOPNOTSUPP,
	  "an IPv4 destination from an IPv6-bound socket, or the reverse" },
	{ FZG_SEND, FZ_OD, EINVAL,
	  "msg_namelen short of sockaddr_in; family not AF_INET(6); 0.0.0.0" },
	{ FZG_SEND, FZ_OD, EINVAL,
	  "broadcast or multicast destination; a control header that is not CMSG_OK" },
	{ FZG_SEND, FZ_OD, EINVAL, "socket layer: negative msg_namelen, MSG_CMSG_COMPAT" },
	{ FZG_SEND, FZ_D, EINVAL,
	  "MSG_ZEROCOPY without RDS_CMSG_ZCOPY_COOKIE; IPv6 not unicast" },
	{ FZG_SEND, FZ_O, EINVAL, "IPv6 not unicast, or link-local without scope" },
	{ FZG_SEND, FZ_O, EINVAL,
	  "MSG_ZEROCOPY without SO_ZEROCOPY, a cookie or a payload" },
	{ FZG_SEND, FZ_O, ENOBUFS,
	  "MSG_ZEROCOPY: as many completions not read as SO_RCVBUF holds" },
	{ FZG_SEND, FZ_O, ENOMEM,
	  "MSG_ZEROCOPY: the pinned pages would go over RLIMIT_MEMLOCK" },
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
	  "bound to 127/8 or ::1 (local delivery), sending to another host" },

	/* control messages of sendmsg() */
	{ FK_SEND_MAP, FZ_OD, EINVAL,
	  "cmsg shorter than rds_get_mr_args; MAP twice; MAP with DEST" },
	{ FK_SEND_MAP, FZ_OD, EINVAL, "zero bytes, or a range that wraps" },
	{ FK_SEND_MAP, FZ_O, EINVAL, "unknown flag bits; over 1 MiB + a page" },
	{ FK_SEND_MAP, FZ_D, EMSGSIZE, "a region over 1 MiB + a page" },
	{ FK_SEND_MAP, FZ_OD, EFAULT,
	  "pages not there or not writable, or cookie_addr not writable" },
	{ FK_SEND_MAP, FZ_D, EOPNOTSUPP, "bound where the transport registers nothing (127/8)" },
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
	{ FK_SEND_ARGS, FZ_D, EOPNOTSUPP, "the loopback transport has no xmit_rdma" },

	{ FK_SEND_ATOMIC, FZ_OD, EINVAL,
	  "cmsg shorter than rds_atomic_args; two atomics" },
	{ FK_SEND_ATOMIC, FZ_O, EINVAL,
	  "unknown flags; a misaligned remote address; with ARGS" },
	{ FK_SEND_ATOMIC, FZ_D, EINVAL, "an atomic with MAP or DEST" },
	{ FK_SEND_ATOMIC, FZ_OD, EFAULT, "local_addr misaligned, not there or not writable" },
	{ FK_SEND_ATOMIC, FZ_O, EOPNOTSUPP,
	  "to another host: a device without (masked) atomics, or 127/8 bound" },
	{ FK_SEND_ATOMIC, FZ_D, EOPNOTSUPP, "bound to 127/8: no transport with atomics" },
	{ FK_SEND_ATOMIC, FZ_D, EOPNOTSUPP, "the loopback transport has no xmit_atomic" },

	{ FZG_PIN, FZ_OD, EOVERFLOW,
	  "6.12's pin_user_pages_fast(): pages that run past the top of memory" },

	{ FK_SEND_ODD, FZ_OD, EINVAL,
	  "a SOL_RDS type sendmsg() does not take (STATUS, CONG_UPDATE, unknown)" },
	{ FK_SEND_ODD, FZ_O, EINVAL, "RDS_CMSG_OP_ID without an operation" },
	{ FK_SEND_ODD, FZ_D, EINVAL,
	  "RDS_CMSG_OP_ID (not the distribution's); a ZCOPY_COOKIE without zero-copy" },
	{ FK_SEND_ODD, FZ_O, EINVAL,
	  "a ZCOPY_COOKIE without zero-copy, short, twice or with an operation" },
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
	{ FZG_MR, FZ_D, EOPNOTSUPP,
	  "bound where the transport registers nothing (127/8, ::1)" },
	{ FZG_MR, FZ_D, EOPNOTSUPP,
	  "its fast registration needs a connection's QP (measured on rxe)" },
	{ FZG_MR, FZ_D, ENODEV, "no connection to register through" },
	{ FZG_MR, FZ_D, ENOMEM, "the FRMR pool could not give an MR" },
	{ FZG_MR, FZ_O, EAGAIN, "the MR pool is exhausted" },
	{ FZG_MR, FZ_O, EBUSY, "the pages could not be DMA-mapped" },
	{ FZG_MR, FZ_O, EIO, "the registration QP is in error" },
	{ FZG_MR, FZ_O, ENODEV, "the RDMA device went away" },
	{ FK_SO_GET_MR_DEST, FZ_O, EINVAL, "a destination family other than AF_INET(6)" },
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
unsigned char fz_ok[FK_NR][FZ_ERRMAX];
unsigned int fz_mods = FZ_OD;	/* FZ_O, FZ_D, or FZ_OD if unknown */

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
void fz_build_ok(void)
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

const char * const fz_cm_names[FZ_CM_NR] = {
	"map", "dest", "read", "write", "fadd", "cswp", "mfadd", "mcswp",
	"opid",
};

int fz_verbose;
volatile sig_atomic_t fz_stalled;	/* see fz_watchdog() */
/*
 * -K: also make the calls that hit known kernel bugs or waits without
 * bound.  Without it:
 * - on the distribution's modules, atomics, and on one node
 *   RDMA_MAP, go to the absent address only (see fz_send()), and no
 *   call names an IPv6 address (see fz_new());
 * - where either node runs the distribution's modules (fz_pair_distro),
 *   no RDMA goes to the peer (the peer may have freed any key by then),
 *   so that the fuzzing does not reset the connection: the distribution
 *   registers memory (RDMA_MAP) through the connection's QP and waits for
 *   the registration uninterruptibly, for ever when the QP is reset under
 *   it (rds_fuzz of distro,distro on 6.1 blocked 240 s in D state, make
 *   check of 814e311, 2026-11-28).  RDMA between the two modules is
 *   rds_rdma's, case by case; ours,ours still sends 1 in 32 RDMAs the
 *   peer refuses.
 * (RDS_FREE_MR with RDS_RDMA_INVALIDATE of an MR that a queued message
 * holds, RDMA_MAP to a peer that does not answer, was withheld until our
 * modules killed the key without waiting for the message; the
 * distribution's never waited there: it only marks the MR, and
 * invalidates at its last reference.)
 */
int fz_known_bugs;
int fz_pair_distro;		/* RDS_MODULES_ALL names "distro" */
int fz_in_child;			/* in a forked child */
const char *fz_mods_name = "unknown";
