// SPDX-License-Identifier: GPL-2.0
/*
 * rds_fuzz_cmsg.c - rds_fuzz's control messages: cookies and the
 * SOL_RDS control messages it builds and mutates.
 */
#include "rds_fuzz.h"

/* ------------------------------------------------ control messages */

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

/*
 * A cookie for socket @s to name, for an RDMA at the peer (FZ_CKT_PEER)
 * or in its own DEST or FREE_MR (FZ_CKT_OWN): 1 in 64 zero, 1 in 64
 * random, 2 in 64 any slot (foreign, stale...), 2 in 64 of the other
 * kind, else the kind asked for.  A peer cookie is its stable MR 15 times
 * in 16, else one of those it sent.  The draws are the same whatever the
 * slots hold.  The slot it came from, or -1, in *slot.
 */
uint64_t fz_cookie(struct fz *f, int s, uint64_t r0, uint64_t r1,
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
void fz_cookies_stale(struct fz *f, int s)
{
	int i;

	for (i = 0; i < FZ_LOCAL_CK; i++)
		if (f->sh->ck[i].sock == s && f->sh->ck[i].state != FZ_CK_NONE)
			f->sh->ck[i].state = FZ_CK_FREED;
}

/* A cookie the peer sent; @h the header of its message, if it had one. */
void fz_cookie_rx(struct fz *f, uint64_t cookie, const struct fz_hdr *h)
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

/*
 * Is this an RDMA the peer will carry out, as far as we know?  None where
 * a node runs the distribution's modules (fz_pair_distro): the peer may
 * have freed or used up a key meanwhile, even the stable region's (a
 * make check run saw REMOTE_ERROR with that alone), and the access error
 * would reset the connection (see fz_known_bugs), so every RDMA goes to
 * the absent address there.
 */
static int fz_ck_good(struct fz *f, int slot)
{
	if (fz_pair_distro && !fz_known_bugs)
		return 0;
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

const enum fz_kind fz_sm_kind[] = {
	FK_SEND, FK_SEND_MAP, FK_SEND_DEST, FK_SEND_ARGS, FK_SEND_ATOMIC,
	FK_SEND_MULTI, FK_SEND_ODD,
};

void fz_build(struct fz *f, struct fz_msg *m, int s, int mode)
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
