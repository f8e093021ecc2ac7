// SPDX-License-Identifier: GPL-2.0
/*
 * rds_fuzz_calls.c - rds_fuzz's calls but the socket options: sendmsg,
 * recvmsg, bind, connect, ioctl, poll, the names, sockets, forks, and
 * one op.
 */
#include "rds_fuzz.h"

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
	int s, mode, flags = 0, to_peer, to_self;
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
	 * connection to itself), and none where either node runs the
	 * distribution's modules (fz_pair_distro: its registrations can
	 * hang in the reset), neither to the peer nor to this node's own
	 * address, which the distribution serves over an RDMA connection to
	 * itself.  Known bugs of the distribution's, which
	 * fz_known_bugs (-K) lets through: it posts every atomic as a masked
	 * one, which rxe does not have, and its connection then stalls
	 * behind the message for good (ib_post_send() fails with EINVAL at
	 * every try); and an RDMA_MAP registers through a connection's QP
	 * and waits for it uninterruptibly, for ever when that connection is
	 * being reset.  On it, atomics, and RDMA_MAP on one node or to its
	 * own address, go to the absent address only, where nothing is
	 * posted.
	 */
	to_self = mh.msg_name == &ss && sin->sin_family == AF_INET &&
		  sin->sin_addr.s_addr == f->self.s_addr;
	if ((fz_mods == FZ_D && !fz_known_bugs &&
	     (m.atomic || (m.map && (!f->two || to_self)))) ||
	    (m.remote_bad && (r[9] % 32 || (fz_pair_distro && !fz_known_bugs)) &&
	     (f->two || fz_mods == FZ_D) &&
	     (to_peer || !mh.msg_name || mh.msg_namelen < sizeof(*sin) ||
	      ((!f->two || fz_pair_distro) && to_self)))) {
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
size_t fz_setopt_mr(struct fz *f, const uint64_t *r, int name, int *track)
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
void fz_sock_setup(struct fz *f, int s, unsigned int how)
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

void fz_socket(struct fz *f, int s)
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
void fz_op(struct fz *f, int in_child)
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
