// SPDX-License-Identifier: GPL-2.0
/*
 * rds_fuzz_opts.c - rds_fuzz's calls of setsockopt and getsockopt.
 */
#include "rds_fuzz.h"

void fz_setopt(struct fz *f)
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
void fz_check_info(struct fz *f, long ret, int err, int room, int got)
{
	if (ret > 0 && (got < 0 || got > room || got % ret))
		rt_fail("seed %llu op %lu: %s returned %ld, then %d bytes for room %d",
			(unsigned long long)f->seed, f->op, f->desc, ret, got, room);
	if (ret < 0 && err == ENOSPC && got <= room)
		rt_fail("seed %llu op %lu: %s: ENOSPC, yet it asks for %d bytes of %d",
			(unsigned long long)f->seed, f->op, f->desc, got, room);
}

/* getsockopt(SOL_RDS): the options, RDS_OP_BARRIER, the RDS_INFO tables. */
void fz_getopt(struct fz *f)
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
void fz_sockopt(struct fz *f)
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
