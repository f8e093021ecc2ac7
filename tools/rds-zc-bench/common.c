// SPDX-License-Identifier: GPL-2.0
/*
 * Addresses, clock, memory, and RDS sockets and messages: what the
 * server and every point use.
 */
#include "rds-zc-bench.h"

socklen_t addr_len(const union addr *a)
{
	return a->sa.sa_family == AF_INET6 ? sizeof(a->sin6) : sizeof(a->sin);
}

unsigned int addr_port(const union addr *a)
{
	return ntohs(a->sa.sa_family == AF_INET6 ? a->sin6.sin6_port :
			a->sin.sin_port);
}

void addr_set_port(union addr *a, unsigned int port)
{
	if (a->sa.sa_family == AF_INET6)
		a->sin6.sin6_port = htons(port);
	else
		a->sin.sin_port = htons(port);
}

/*
 * Whether a socket bound to @a can send to @b: RDS keeps the families
 * apart, an IPv4-mapped IPv6 address counting as IPv4.
 */
int addr_same_family(const union addr *a, const union addr *b)
{
	const union addr *v6 = a->sa.sa_family == AF_INET6 ? a : b;

	return a->sa.sa_family == b->sa.sa_family ||
	       IN6_IS_ADDR_V4MAPPED(&v6->sin6.sin6_addr);
}

/* The address alone: "10.0.0.1", "fd00::1" or "fe80::1%eth0". */
const char *addr_host(const union addr *a, char buf[ADDR_STRLEN])
{
	char ifname[IF_NAMESIZE];
	unsigned int id;
	size_t n;

	if (a->sa.sa_family != AF_INET6) {
		inet_ntop(AF_INET, &a->sin.sin_addr, buf, ADDR_STRLEN);
		return buf;
	}
	inet_ntop(AF_INET6, &a->sin6.sin6_addr, buf, ADDR_STRLEN);
	id = a->sin6.sin6_scope_id;
	n = strlen(buf);
	if (id && if_indextoname(id, ifname))
		snprintf(buf + n, ADDR_STRLEN - n, "%%%s", ifname);
	else if (id)
		snprintf(buf + n, ADDR_STRLEN - n, "%%%u", id);
	return buf;
}

/* "10.0.0.1:18700", or "[fd00::1]:18700" for IPv6. */
const char *addr_str(const union addr *a, char buf[ADDR_STRLEN])
{
	char host[ADDR_STRLEN];

	snprintf(buf, ADDR_STRLEN,
		 a->sa.sa_family == AF_INET6 ? "[%s]:%u" : "%s:%u",
		 addr_host(a, host), addr_port(a));
	return buf;
}

/* ------------------------------------------------------------ utilities */

double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

const char *errname(int err)
{
	const char *name = strerrorname_np(err);

	return name ? name : "E?";
}

const char *status_name(int status)
{
	static const char * const names[] = {
		[RDS_RDMA_SUCCESS] = "SUCCESS",
		[RDS_RDMA_REMOTE_ERROR] = "REMOTE_ERROR",
		[RDS_RDMA_CANCELED] = "CANCELED",
		[RDS_RDMA_DROPPED] = "DROPPED",
		[RDS_RDMA_OTHER_ERROR] = "OTHER_ERROR",
	};

	if (status >= 0 && status < (int)ARRAY_SIZE(names))
		return names[status];
	return "unknown";
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "rds-zc-bench: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

const char *size_str(unsigned long size)
{
	static char buf[4][32];
	static int which;

	which = (which + 1) % 4;
	if (size >= (1UL << 20) && !(size % (1UL << 20)))
		snprintf(buf[which], sizeof(buf[which]), "%lu MiB", size >> 20);
	else if (size >= 1024 && !(size % 1024))
		snprintf(buf[which], sizeof(buf[which]), "%lu KiB", size >> 10);
	else
		snprintf(buf[which], sizeof(buf[which]), "%lu B", size);
	return buf[which];
}

void *xmap(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED)
		die("mmap of %zu bytes: %s", len, strerror(errno));
	memset(p, 0x5a, len);
	return p;
}

size_t page_round(size_t len)
{
	return (len + PAGE_SZ - 1) / PAGE_SZ * PAGE_SZ;
}

/* Pinned memory beyond the default limit, where the rules allow it. */
void raise_memlock(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl))
		return;
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_MEMLOCK, &rl);
	rl.rlim_cur = RLIM_INFINITY;
	rl.rlim_max = RLIM_INFINITY;
	setrlimit(RLIMIT_MEMLOCK, &rl);
}

/*
 * A receive or send that ran out of SO_RCVTIMEO or SO_SNDTIMEO: RDS says
 * ETIMEDOUT for a receive, EAGAIN for a send.
 */
int timed_out(int err)
{
	return err == EAGAIN || err == ETIMEDOUT;
}

void set_timeouts(int fd, int secs)
{
	struct timeval tv = { secs, 0 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* Set a socket buffer; the privileged option first, which ignores the cap. */
static int set_buf(int fd, int force, int plain, int bytes)
{
	int got = 0;
	socklen_t len = sizeof(got);

	if (setsockopt(fd, SOL_SOCKET, force, &bytes, sizeof(bytes)))
		setsockopt(fd, SOL_SOCKET, plain, &bytes, sizeof(bytes));
	getsockopt(fd, SOL_SOCKET, plain, &got, &len);
	return got;
}

/* The name of a SO_RDS_TRANSPORT value, as --transport takes it. */
const char *trans_name(int trans)
{
	switch (trans) {
	case RDS_TRANS_IB:
		return "ib";
	case RDS_TRANS_TCP:
		return "tcp";
	case RDS_TRANS_NONE:
		return "none";
	}
	return "?";
}

/*
 * An RDS socket bound to addr (port 0 picks one), with room for messages
 * of msg bytes (RDS lets one message take half the send buffer) and a
 * receive buffer of rcv bytes, pinned to opt.trans with SO_RDS_TRANSPORT
 * unless that is RDS_TRANS_NONE (the option must come before bind()).
 * -1 with errno and a message in err.
 */
int rds_open(const union addr *addr, int msg, int rcv,
	     char *err, size_t errlen)
{
	int fd, snd, want = 2 * msg + 65536;

	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket(AF_RDS): %s (is an RDS module loaded?)",
			 errname(errno));
		return -1;
	}
	snd = set_buf(fd, SO_SNDBUFFORCE, SO_SNDBUF, want);
	set_buf(fd, SO_RCVBUFFORCE, SO_RCVBUF, rcv);
	if (snd / 2 < msg) {
		snprintf(err, errlen,
			 "SO_SNDBUF is %d, too small for %d-byte messages: raise net.core.wmem_max and net.core.rmem_max (sysctl) or run as root",
			 snd, msg);
		close(fd);
		errno = ENOBUFS;
		return -1;
	}
	if (opt.trans != (int)RDS_TRANS_NONE &&
	    setsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &opt.trans,
		       sizeof(opt.trans))) {
		int e = errno;

		snprintf(err, errlen, "SO_RDS_TRANSPORT %s: %s%s",
			 trans_name(opt.trans), errname(e),
			 e == ENOPROTOOPT ? " (no such transport loaded)" : "");
		close(fd);
		errno = e;
		return -1;
	}
	if (bind(fd, &addr->sa, addr_len(addr))) {
		char name[ADDR_STRLEN];
		int e = errno;

		snprintf(err, errlen, "bind %s: %s", addr_str(addr, name),
			 errname(e));
		close(fd);
		errno = e;
		return -1;
	}
	set_timeouts(fd, opt.timeout);
	return fd;
}

void msg_init(struct bench_msg *m, int type, uint64_t seq)
{
	memset(m, 0, sizeof(*m));
	m->magic = BENCH_MAGIC;
	m->type = type;
	m->seq = seq;
}

/* sendmsg() of len bytes of buf to @to, with one SOL_RDS control message. */
long send_cm(int fd, const union addr *to, const void *buf,
	     size_t len, int cm_type, const void *cm, size_t cm_len)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct rds_rdma_args))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { (void *)buf, len };
	struct msghdr msg = {
		.msg_name = (void *)to,
		.msg_namelen = addr_len(to),
		.msg_iov = &iov,
		.msg_iovlen = 1,
	};
	struct cmsghdr *c;

	if (cm) {
		memset(&ctl, 0, sizeof(ctl));
		msg.msg_control = ctl.buf;
		msg.msg_controllen = CMSG_SPACE(cm_len);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_RDS;
		c->cmsg_type = cm_type;
		c->cmsg_len = CMSG_LEN(cm_len);
		memcpy(CMSG_DATA(c), cm, cm_len);
	}
	return sendmsg(fd, &msg, 0);
}

long send_plain(int fd, const union addr *to, const void *buf,
		size_t len)
{
	return send_cm(fd, to, buf, len, 0, NULL, 0);
}

long recv_rx(int fd, void *buf, size_t len, int flags, struct rx *rx)
{
	union {
		char buf[NOTE_BATCH * CMSG_SPACE(sizeof(struct rds_rdma_notify))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { buf, len };
	struct msghdr msg = {
		.msg_name = &rx->from,
		.msg_namelen = sizeof(rx->from),
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	struct rds_rdma_notify note;
	struct cmsghdr *c;
	long ret;

	memset(rx, 0, sizeof(*rx));
	ret = recvmsg(fd, &msg, flags);
	if (ret < 0)
		return ret;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_RDS)
			continue;
		if (c->cmsg_type == RDS_CMSG_RDMA_DEST &&
		    c->cmsg_len >= CMSG_LEN(sizeof(uint64_t))) {
			memcpy(&rx->cookie, CMSG_DATA(c), sizeof(uint64_t));
			rx->ndest++;
		} else if (c->cmsg_type == RDS_CMSG_RDMA_STATUS &&
			   c->cmsg_len >= CMSG_LEN(sizeof(note))) {
			memcpy(&note, CMSG_DATA(c), sizeof(note));
			if (rx->nnote < NOTE_BATCH)
				rx->note[rx->nnote++] = note;
		}
	}
	return ret;
}

int valid_msg(const void *buf, long n)
{
	const struct bench_msg *m = buf;

	return n >= (long)sizeof(*m) && m->magic == BENCH_MAGIC;
}

/* The key of len bytes at buf (RDS_GET_MR), and its release. */
int get_mr(int fd, void *buf, size_t len, uint64_t *cookie)
{
	struct rds_get_mr_args args = {
		.vec = { (uintptr_t)buf, len },
		.cookie_addr = (uintptr_t)cookie,
		.flags = 0,
	};

	return setsockopt(fd, SOL_RDS, RDS_GET_MR, &args, sizeof(args));
}

int free_mr(int fd, uint64_t cookie, uint64_t flags)
{
	struct rds_free_mr_args args = { cookie, flags };

	return setsockopt(fd, SOL_RDS, RDS_FREE_MR, &args, sizeof(args));
}
