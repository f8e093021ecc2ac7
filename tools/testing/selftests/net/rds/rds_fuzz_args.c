// SPDX-License-Identifier: GPL-2.0
/*
 * rds_fuzz_args.c - rds_fuzz's checks of each call's result and the
 * arguments it mutates: pointers, lengths, flags, addresses.
 */
#include "rds_fuzz.h"

/* ------------------------------------------------------------ checking */

void __attribute__((format(printf, 2, 3)))
fz_desc(struct fz *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f->desc, sizeof(f->desc), fmt, ap);
	va_end(ap);
}

/* Append to the description of the call being built. */
void __attribute__((format(printf, 2, 3)))
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
void fz_result(struct fz *f, enum fz_kind k, long ret, int err)
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

/* --------------------------------------------------- arguments, mutated */

/* A pointer to a user buffer: mostly @good, 1 in 8 a bad one. */
uint64_t fz_ptr(struct fz *f, void *good, uint64_t r, const char **what)
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
uint64_t fz_mem(struct fz *f, uint64_t len, uint64_t r, const char **what)
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
uint64_t fz_rlen(uint64_t r)
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
uint64_t fz_rflags(uint64_t r, uint64_t valid)
{
	uint64_t fl = r & valid;

	if ((r >> 16) % 32 == 0)
		fl |= (r >> 21) % 2 ? 0x80 : 1ULL << 40;
	return fl;
}

/*
 * A socket address: the peer's sockets mostly (on one node this node's
 * own, or the absent address), this node's, loopback, bad ones, and
 * where the guests have IPv6 addresses, the peer's and this node's
 * IPv6 ones (global, and link-local with or without its scope).
 * Returns its length, possibly mutated.
 */
socklen_t fz_sin(struct fz *f, uint64_t r, struct sockaddr_storage *ss,
		 const char **what)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	unsigned int pick = r % (f->have6 ? 36 : 32);
	unsigned int slot = (r >> 16) % FZ_SOCKS;
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
		case 32:
		case 33:
			sin6->sin6_family = AF_INET6;
			sin6->sin6_port = htons(port);
			sin6->sin6_addr = pick == 32 ? f->peer6 : f->self6;
			len = sizeof(*sin6);
			*what = pick == 32 ? "peer6" : "self6";
			break;
		case 34:
		case 35:
			sin6->sin6_family = AF_INET6;
			sin6->sin6_port = htons(port);
			sin6->sin6_addr = f->ll6;
			sin6->sin6_scope_id = pick == 34 ? f->ifindex : 0;
			len = sizeof(*sin6);
			*what = pick == 34 ? "ll6%eth0" : "ll6 unscoped";
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

const char *fz_sin_str(const struct sockaddr_storage *ss, socklen_t len)
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
const char *fz_where(struct fz *f, uint64_t a)
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

const char * const fz_ck_state_names[] = {
	"none", "live", "maybe", "freed",
};
