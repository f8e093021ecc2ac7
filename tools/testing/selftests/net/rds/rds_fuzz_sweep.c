// SPDX-License-Identifier: GPL-2.0
/*
 * rds_fuzz_sweep.c - rds_fuzz's sweep of every SOL_RDS option at every
 * length.
 */
#include "rds_fuzz.h"

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
void test_sockopt_sweep(void)
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
