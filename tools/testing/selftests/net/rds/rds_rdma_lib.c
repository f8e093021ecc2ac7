// SPDX-License-Identifier: GPL-2.0
/*
 * rds_rdma_lib.c - what rds_rdma's cases are made of: plain messages of
 * a kind, socket pairs, memory regions and their patterns, the steps of
 * an RDMA on each side, failed RDMAs, cutting the link.
 */
#include "rds_rdma.h"
#include <sys/ioctl.h>
#include <sys/utsname.h>

/* The module set of node k is the distribution's. */
int distro(int k)
{
	return !strcmp(modules_of(k), "distro");
}

uint64_t token_of(int i)
{
	/* all 64 bits matter: the high ones come back too */
	return 0xa5a5000000000000ULL | (uint64_t)this_case() << 16 | i;
}

/* -------------------------------------------------------------- sockets */

/* sendmsg() of len bytes with the control messages cm[0 .. n - 1]. */
long send_cm(int fd, const void *to, const void *data,
	     size_t len, const struct cm *cm, int n, int flags)
{
	union {
		char buf[4 * CMSG_SPACE(sizeof(struct rds_rdma_args))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { (void *)data, len };
	struct msghdr msg = {
		.msg_name = (void *)to,
		.msg_namelen = to ? sa_len(to) : sizeof(struct sockaddr_in),
		.msg_iov = &iov,
		.msg_iovlen = 1,
	};
	struct cmsghdr *c;
	size_t total = 0;
	int i;

	memset(&ctl, 0, sizeof(ctl));
	for (i = 0; i < n; i++)
		total += CMSG_SPACE(cm[i].len);
	ASSERT_TRUE(total <= sizeof(ctl.buf), "%zu bytes of control messages",
		    total);
	if (n) {
		msg.msg_control = ctl.buf;
		msg.msg_controllen = total;
	}
	c = n ? CMSG_FIRSTHDR(&msg) : NULL;
	for (i = 0; i < n; i++) {
		c->cmsg_level = SOL_RDS;
		c->cmsg_type = cm[i].type;
		c->cmsg_len = CMSG_LEN(cm[i].len);
		memcpy(CMSG_DATA(c), cm[i].data, cm[i].len);
		c = CMSG_NXTHDR(&msg, c);
	}
	return sendmsg(fd, &msg, flags);
}

long rx_msg(int fd, void *buf, size_t len, int flags, struct rx *rx)
{
	union {
		char buf[NOTE_MAX * CMSG_SPACE(sizeof(struct rds_rdma_notify))];
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
	unsigned char pad[sizeof(struct rds_rdma_notify)];
	struct cmsghdr *c;
	long ret;
	int err;

	memset(rx, 0, sizeof(*rx));
	memset(&ctl, 0, sizeof(ctl));
	ret = recvmsg(fd, &msg, flags);
	if (ret < 0)
		return ret;
	err = errno;
	rx->flags = msg.msg_flags;
	EXPECT_EQ(msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC), 0);
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level == SOL_RDS &&
		    c->cmsg_type == RDS_CMSG_RDMA_DEST) {
			EXPECT_EQ(c->cmsg_len, CMSG_LEN(sizeof(uint64_t)));
			memcpy(&rx->cookie, CMSG_DATA(c), sizeof(uint64_t));
			rx->ndest++;
		} else if (c->cmsg_level == SOL_RDS &&
			   c->cmsg_type == RDS_CMSG_RDMA_STATUS) {
			EXPECT_EQ(c->cmsg_len,
				  CMSG_LEN(sizeof(struct rds_rdma_notify)));
			memcpy(pad, CMSG_DATA(c), sizeof(pad));
			/* the tail padding must not leak kernel memory */
			EXPECT_TRUE(!pad[12] && !pad[13] && !pad[14] && !pad[15],
				    "rds_rdma_notify padding %02x%02x%02x%02x",
				    pad[12], pad[13], pad[14], pad[15]);
			if (rx->nnote < NOTE_MAX)
				memcpy(&rx->note[rx->nnote], pad, sizeof(pad));
			rx->nnote++;
		} else {
			rt_fail("unexpected control message level %d type %d",
				c->cmsg_level, c->cmsg_type);
		}
	}
	errno = err;
	return ret;
}

void send_kind(struct pair *p, const void *to,
	       uint32_t kind, uint32_t seq, const struct cm *cm, int n)
{
	struct kmsg m = { kind, seq, { 0 } };

	fill_pattern(m.pattern, sizeof(m.pattern), msg_seed(node, kind * 1000 + seq));
	ASSERT_EQ(EXPECT_SYS_OK(send_cm(p->fd, to, &m, sizeof(m), cm, n, 0)),
		  sizeof(m));
}

/*
 * Receive the next message on fd: it must be (kind, seq) from the peer's
 * port @port and intact; its control messages in *rx.
 */
void expect_kind_on(int fd, int port, uint32_t kind, uint32_t seq,
		    struct rx *rx)
{
	union rds_sa want = peer_sa(port);
	struct kmsg m;
	long n;

	memset(&m, 0, sizeof(m));
	n = rx_msg(fd, &m, sizeof(m), 0, rx);
	if (n < 0) {
		rt_fail("waiting for message kind %u seq %u: recvmsg: %s",
			kind, seq, rt_errname(errno));
		rt_abort();
	}
	EXPECT_TRUE(same_sa(&rx->from, &want), "message from %s, expected %s",
		    sa_str(&rx->from), sa_str(&want));
	ASSERT_TRUE(n == sizeof(m) && m.kind == kind && m.seq == seq,
		    "got %ld bytes, kind %u seq %u; expected kind %u seq %u",
		    n, m.kind, m.seq, kind, seq);
	EXPECT_EQ(pattern_mismatch(m.pattern, sizeof(m.pattern),
				   msg_seed(peer_node, kind * 1000 + seq)),
		  sizeof(m.pattern));
	EXPECT_EQ(rx->nnote, 0);
}

void expect_kind(struct pair *p, uint32_t kind, uint32_t seq,
		 struct rx *rx)
{
	expect_kind_on(p->fd, 0, kind, seq, rx);
}

/*
 * Both nodes: bind port 0, then one plain message each way, so the
 * connection is up (again) before anything is registered.  With a @tos
 * other than 0 the socket sends on it, and node @opener's message goes
 * first, the other only once it came: @opener's request opens that
 * connection, and its transport retry count holds for both QPs.
 */
void pair_start_open(struct pair *p, int owner_node, rds_tos_t tos,
		     int opener)
{
	struct rx rx;

	memset(p, 0, sizeof(*p));
	p->owner = node == owner_node;
	p->fd = rds_bound_sa(0, NULL);
	if (tos)
		ASSERT_SYS_OK(ioctl(p->fd, SIOCRDSSETTOS, &tos));
	make_room(p->fd, 65536, 0);
	p->peer = peer_sa(0);
	sync_peer("bound");
	if (!tos || node == opener)
		send_kind(p, &p->peer, K_WARM, 0, NULL, 0);
	set_rcvtimeo(p->fd, RECONNECT_MS);	/* see fail_server() */
	expect_kind(p, K_WARM, 0, &rx);
	set_rcvtimeo(p->fd, RCV_TIMEOUT_MS);
	EXPECT_EQ(rx.ndest, 0);
	if (tos && node != opener)
		send_kind(p, &p->peer, K_WARM, 0, NULL, 0);
	sync_peer("warm");
}

/* The owner's request opens the connection of @tos. */
void pair_start_tos(struct pair *p, int owner_node, rds_tos_t tos)
{
	pair_start_open(p, owner_node, tos, owner_node);
}

void pair_start(struct pair *p, int owner_node)
{
	pair_start_tos(p, owner_node, 0);
}

void pair_end(struct pair *p)
{
	sync_peer("end");
	expect_empty(p->fd);
	close(p->fd);
}

/* ----------------------------------------------------------- memory */

void region_init(struct region *r, size_t start, size_t len,
		 uint32_t seed)
{
	r->map_len = (start + len + PAGE - 1) / PAGE * PAGE;
	r->map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(r->map != MAP_FAILED, "mmap %zu: %s", r->map_len,
		    rt_errname(errno));
	fill_pattern(r->map, r->map_len, seed);
	r->buf = r->map + start;
	r->len = len;
	r->before = xmalloc(r->map_len);
	memcpy(r->before, r->map, r->map_len);
}

void region_free(struct region *r)
{
	munmap(r->map, r->map_len);
	free(r->before);
}

/* Nothing changed in the region but [off, off + len) of the MR. */
int region_rest_unchanged(const struct region *r, size_t off,
			  size_t len)
{
	size_t a = r->buf - r->map + off, b = a + len, i;

	for (i = 0; i < r->map_len; i++) {
		if (i == a)
			i = b;
		if (i >= r->map_len)
			break;
		if (r->map[i] != r->before[i]) {
			rt_fail("MR byte %zd changed (%#x, was %#x), RDMA [%zu, %zu)",
				(ssize_t)i - (r->buf - r->map), r->map[i],
				r->before[i], off, off + len);
			return 0;
		}
	}
	return 1;
}

/* [off, off + len) of the MR holds the pattern of seed, the rest is as before. */
void region_expect(const struct region *r, size_t off, size_t len,
		   uint32_t seed)
{
	size_t bad = pattern_mismatch(r->buf + off, len, seed);

	EXPECT_TRUE(bad == len, "MR [%zu, %zu): byte %zu is not what the peer wrote",
		    off, off + len, off + bad);
	region_rest_unchanged(r, off, len);
}

void local_init(struct local *l, const size_t *pieces, int n,
		size_t one)
{
	size_t pos = 0;
	int i;

	memset(l, 0, sizeof(*l));
	if (!pieces) {
		pieces = &one;
		n = 1;
	}
	ASSERT_TRUE(n <= PIPE_OPS, "%d local pieces", n);
	for (i = 0; i < n; i++)
		l->total += pieces[i];
	l->mem = xmalloc(l->total + 3 * n + 64);
	memset(l->mem, 0x5c, l->total + 3 * n + 64);
	for (i = 0; i < n; i++) {
		pos += 3;
		l->iov[i].addr = (uintptr_t)(l->mem + pos);
		l->iov[i].bytes = pieces[i];
		pos += pieces[i];
	}
	l->n = n;
}

/* Copy the pattern of seed into the pieces (dir 1) or compare (dir 0). */
size_t local_pattern(struct local *l, uint32_t seed, size_t skip,
		     int fill)
{
	unsigned char *want = xmalloc(skip + l->total);
	size_t pos = skip, bad = l->total;
	int i;

	fill_pattern(want, skip + l->total, seed);
	for (i = 0; i < l->n; i++) {
		unsigned char *p = (unsigned char *)(uintptr_t)l->iov[i].addr;
		size_t k;

		if (fill) {
			memcpy(p, want + pos, l->iov[i].bytes);
		} else {
			for (k = 0; k < l->iov[i].bytes && bad == l->total; k++)
				if (p[k] != want[pos + k])
					bad = pos - skip + k;
		}
		pos += l->iov[i].bytes;
	}
	free(want);
	return bad;
}

/* ------------------------------------------------------- RDMA steps */

uint64_t cookie_offset(uint64_t cookie)
{
	return cookie >> 32;
}

/*
 * Owner: send request seq carrying RDS_CMSG_RDMA_MAP of the MR (with
 * flags) to the peer, and tell the peer the cookie the kernel stored.
 */
uint64_t owner_map_on(struct pair *p, int fd, struct region *r,
		      uint64_t flags, uint32_t seq)
{
	struct kmsg m = { K_REQ, seq, { 0 } };
	uint64_t cookie = 0;
	struct rds_get_mr_args args = {
		.vec = { (uintptr_t)r->buf, r->len },
		.cookie_addr = (uintptr_t)&cookie,
		.flags = flags,
	};
	struct cm cm = { RDS_CMSG_RDMA_MAP, &args, sizeof(args) };
	long ret;

	fill_pattern(m.pattern, sizeof(m.pattern), msg_seed(node, K_REQ * 1000 + seq));
	ret = send_cm(fd, &p->peer, &m, sizeof(m), &cm, 1, 0);
	if (ret < 0) {
		rt_fail("sendmsg with RDS_CMSG_RDMA_MAP of %zu bytes: %s",
			r->len, rt_errname(errno));
		tell_peer(0);
		rt_abort();
	}
	EXPECT_EQ(ret, sizeof(m));
	EXPECT_NE(cookie, 0);
	EXPECT_EQ(cookie_offset(cookie), (uintptr_t)r->buf & (PAGE - 1));
	tell_peer((long)cookie);
	return cookie;
}

uint64_t owner_map(struct pair *p, struct region *r, uint64_t flags,
		   uint32_t seq)
{
	return owner_map_on(p, p->fd, r, flags, seq);
}

/* Initiator: the request seq from the peer's port, with the right cookie. */
uint64_t server_cookie_on(struct pair *p, int port, uint32_t seq)
{
	uint64_t told = (uint64_t)hear_peer();
	struct rx rx;

	ASSERT_TRUE(told, "node %d could not register its memory", peer_node);
	expect_kind_on(p->fd, port, K_REQ, seq, &rx);
	EXPECT_EQ(rx.ndest, 1);
	EXPECT_EQ(rx.cookie, told);
	return told;
}

uint64_t server_cookie(struct pair *p, uint32_t seq)
{
	return server_cookie_on(p, 0, seq);
}

/*
 * Initiator: the RDMA, with ACK seq (ack_len 0: no payload) to the peer's
 * port; the sendmsg() result, errno kept.
 */
long server_rdma_to(struct pair *p, const void *to,
		    uint64_t cookie, uint64_t off, uint64_t len,
		    struct local *l, uint64_t flags, uint64_t token,
		    uint32_t seq, size_t ack_len, int msg_flags)
{
	struct kmsg m = { K_ACK, seq, { 0 } };
	struct rds_rdma_args args = {
		.cookie = cookie,
		.remote_vec = { off, len },
		.local_vec_addr = (uintptr_t)l->iov,
		.nr_local = l->n,
		.flags = flags,
		.user_token = token,
	};
	struct cm cm = { RDS_CMSG_RDMA_ARGS, &args, sizeof(args) };

	fill_pattern(m.pattern, sizeof(m.pattern), msg_seed(node, K_ACK * 1000 + seq));
	return send_cm(p->fd, to, &m, ack_len, &cm, 1, msg_flags);
}

long server_rdma(struct pair *p, uint64_t cookie, uint64_t off,
		 uint64_t len, struct local *l, uint64_t flags,
		 uint64_t token, uint32_t seq)
{
	return server_rdma_to(p, &p->peer, cookie, off, len, l, flags, token,
			      seq, sizeof(struct kmsg), 0);
}

/*
 * The next notification: POLLIN, then an empty message with one
 * RDS_CMSG_RDMA_STATUS; its status (token checked).  The distribution
 * also signals POLLIN once after any congestion map update ("for
 * historical reasons", says its rds_poll()): a POLLIN that recvmsg()
 * answers with EAGAIN is tolerated there, and only there.
 */
int expect_note(int fd, uint64_t token)
{
	long long deadline = rt_now_ms() + RECONNECT_MS;
	unsigned char buf[64];
	struct rx rx;
	long n;
	int rev;

	for (;;) {
		rev = poll_fd(fd, POLLIN, (int)(deadline - rt_now_ms()));
		ASSERT_TRUE(rev & POLLIN, "no notification (POLLIN) in %d ms",
			    RECONNECT_MS);
		n = rx_msg(fd, buf, sizeof(buf), MSG_DONTWAIT, &rx);
		if (n >= 0)
			break;
		if (errno != EAGAIN || !distro(node) ||
		    rt_now_ms() > deadline) {
			rt_fail("POLLIN, but recvmsg: %s", rt_errname(errno));
			rt_abort();
		}
		rt_sleep_ms(10);
	}
	ASSERT_TRUE(n == 0, "a message of %ld bytes from %s where a notification was due",
		    n, sa_str(&rx.from));
	EXPECT_EQ(rx.ndest, 0);
	ASSERT_EQ(rx.nnote, 1);
	EXPECT_EQ(rx.note[0].user_token, token);
	return rx.note[0].status;
}

const char *status_name(int s)
{
	static const char *const names[] = {
		"SUCCESS", "REMOTE_ERROR", "CANCELED", "DROPPED", "OTHER_ERROR",
	};

	return s >= 0 && s < (int)ARRAY_SIZE(names) ? names[s] : "unknown";
}

uint64_t rdma_cycle_keep(struct pair *p, const struct rdma_op *op,
			 uint32_t seq, struct region *keep)
{
	uint32_t seed = msg_seed(100 + node, seq);	/* this node's data */
	uint32_t pseed = msg_seed(100 + peer_node, seq);
	uint64_t cookie, flags;
	struct region r;
	struct local l;
	struct rx rx;
	size_t bad;
	int status;

	if (p->owner) {
		region_init(&r, op->start, op->mr_len, seed ^ 0x55);
		if (!op->write) {
			fill_pattern(r.buf, r.len, seed);
			memcpy(r.before, r.map, r.map_len);
		}
		cookie = owner_map(p, &r, op->map_flags, seq);
		expect_kind(p, K_ACK, seq, &rx);
		EXPECT_EQ(rx.ndest, 0);
		if (op->write)
			region_expect(&r, op->off, op->len, pseed);
		else
			region_rest_unchanged(&r, 0, 0);
		sync_peer("checked");
		if (op->map_flags & RDS_RDMA_USE_ONCE)
			EXPECT_EQ(rds_free_mr(p->fd, cookie, 0), -EINVAL);
		else if (!keep)
			EXPECT_EQ(rds_free_mr(p->fd, cookie, 0), 0);
		if (keep) {
			memcpy(r.before, r.map, r.map_len);
			*keep = r;
		} else {
			region_free(&r);
		}
		return cookie;
	}

	cookie = server_cookie(p, seq);
	local_init(&l, op->pieces, op->npieces, op->len);
	ASSERT_EQ(l.total, op->len);
	if (op->write)
		local_pattern(&l, seed, 0, 1);
	flags = RDS_RDMA_NOTIFY_ME | op->rdma_flags |
		(op->write ? RDS_RDMA_READWRITE : 0);
	if (EXPECT_SYS_OK(server_rdma(p, cookie, op->off, op->len, &l, flags,
				      token_of(seq), seq)) < 0) {
		sync_peer("checked");
		rt_abort();
	}
	status = expect_note(p->fd, token_of(seq));
	EXPECT_STATUS(status, RDS_RDMA_SUCCESS);
	if (!op->write) {
		bad = local_pattern(&l, pseed, op->off, 0);
		EXPECT_TRUE(bad == op->len, "%s of %zu bytes at %zu: byte %zu is not the peer's",
			    "READ", op->len, op->off, bad);
	}
	sync_peer("checked");
	free(l.mem);
	return cookie;
}

void rdma_cycle(struct pair *p, const struct rdma_op *op, uint32_t seq)
{
	rdma_cycle_keep(p, op, seq, NULL);
}

/*
 * An RDMA WRITE that must fail at the owner, and what follows it.  A
 * failed RDMA makes the distribution drop the connection, and its
 * reconnect took up to 15 s here: what follows waits on RDS for
 * RECONNECT_MS, not on the control connection.
 *
 * Initiator: sends the RDMA (to the peer's port 0 or @to) with ACK seq;
 * takes the status when NOTIFY_ME or RDS_RECVERR asks for one (else -1)
 * and tells the owner; sends AFTER seq and waits for the owner's answer.
 * Owner: the next message is AFTER seq, never the ACK (the RDMA and its
 * message succeed or fail together), and its memory did not change;
 * returns the status.  Where the caller allows it (quirk, a known failure
 * of the distribution to invalidate), a successful RDMA is accepted: ACK,
 * data, then AFTER.
 *
 * The distribution as owner does not re-establish the connection while
 * an MR it registered on it is live (its shutdown waits for every FRWR
 * MR of the QP to be invalidated): so there the owner frees the MR
 * (*cookie, then 0) once it heard of the failure.
 */
/* The initiator's side after the operation that must fail was sent. */
int fail_server_after(struct pair *p, long sent, int status_due,
		      uint32_t seq)
{
	int status = -1;
	struct rx rx;

	if (sent >= 0 && status_due)
		status = expect_note(p->fd, token_of(seq));
	tell_peer(status);
	send_kind(p, &p->peer, K_AFTER, seq, NULL, 0);
	set_rcvtimeo(p->fd, RECONNECT_MS);
	expect_kind(p, K_AFTER, seq + 1000, &rx);
	set_rcvtimeo(p->fd, RCV_TIMEOUT_MS);
	return status;
}

int fail_server(struct pair *p, const void *to,
		uint64_t cookie, uint64_t off, uint64_t len,
		uint64_t flags, int status_due, uint32_t seq)
{
	struct local l;
	int status;
	long ret;

	local_init(&l, NULL, 0, len);
	local_pattern(&l, msg_seed(100 + node, seq), 0, 1);
	ret = EXPECT_SYS_OK(server_rdma_to(p, to ? to : &p->peer, cookie, off,
					   len, &l, flags | RDS_RDMA_READWRITE,
					   token_of(seq), seq,
					   sizeof(struct kmsg), 0));
	status = fail_server_after(p, ret, status_due, seq);
	free(l.mem);
	return status;
}

int fail_owner(struct pair *p, struct region *r, uint64_t *cookie,
	       uint64_t off, uint64_t len, uint32_t seq, int quirk)
{
	union rds_sa want = peer_sa(0);
	struct kmsg m;
	struct rx rx;
	int acked = 0, status;
	long n;

	status = (int)hear_peer();
	if (status != RDS_RDMA_SUCCESS && distro(node) && cookie && *cookie) {
		EXPECT_EQ(rds_free_mr(p->fd, *cookie, RDS_RDMA_INVALIDATE), 0);
		*cookie = 0;
	}
	set_rcvtimeo(p->fd, RECONNECT_MS);
	for (;;) {
		memset(&m, 0, sizeof(m));
		n = rx_msg(p->fd, &m, sizeof(m), 0, &rx);
		if (n < 0) {
			rt_fail("waiting for message AFTER %u: recvmsg: %s",
				seq, rt_errname(errno));
			rt_abort();
		}
		EXPECT_TRUE(same_sa(&rx.from, &want), "message from %s, expected %s",
			    sa_str(&rx.from), sa_str(&want));
		EXPECT_EQ(pattern_mismatch(m.pattern, sizeof(m.pattern),
					   msg_seed(peer_node, m.kind * 1000 + m.seq)),
			  sizeof(m.pattern));
		if (n == sizeof(m) && m.kind == K_ACK && m.seq == seq &&
		    !acked) {
			acked = 1;
			EXPECT_TRUE(quirk, "the ACK of the RDMA that had to fail arrived");
			continue;
		}
		ASSERT_TRUE(n == sizeof(m) && m.kind == K_AFTER && m.seq == seq,
			    "got %ld bytes, kind %u seq %u; expected AFTER %u",
			    n, m.kind, m.seq, seq);
		break;
	}
	set_rcvtimeo(p->fd, RCV_TIMEOUT_MS);
	send_kind(p, &p->peer, K_AFTER, seq + 1000, NULL, 0);
	if (acked) {
		rt_diag("the RDMA succeeded, status %d (%s)", status,
			status_name(status));
		if (r)
			region_expect(r, off, len, msg_seed(100 + peer_node, seq));
	} else if (r) {
		region_rest_unchanged(r, 0, 0);
	}
	return acked ? RDS_RDMA_SUCCESS : status;
}

/* Owner: map, hear that the request arrived, free with INVALIDATE. */
uint64_t owner_map_invalidate(struct pair *p, struct region *r,
			      uint32_t seq)
{
	uint64_t cookie = owner_map(p, r, 0, seq);
	struct rx rx;

	/*
	 * The request message holds a reference to its MR until the peer
	 * acknowledged it; the distribution invalidates only when the last
	 * reference goes.  GOTIT carries that acknowledgment.
	 */
	expect_kind(p, K_GOTIT, seq, &rx);
	EXPECT_EQ(rds_free_mr(p->fd, cookie, RDS_RDMA_INVALIDATE), 0);
	sync_peer("freed");
	return cookie;
}

uint64_t server_cookie_gotit(struct pair *p, uint32_t seq)
{
	uint64_t cookie = server_cookie(p, seq);

	send_kind(p, &p->peer, K_GOTIT, seq, NULL, 0);
	sync_peer("freed");
	return cookie;
}

/* ------------------------------------------ shared by the case files */

/* RDS_GET_MR with an argument optlen bytes long: setsockopt()'s. */
int get_mr_optlen(int fd, void *addr, uint64_t bytes,
		  void *cookie_addr, int optlen)
{
	struct {
		struct rds_get_mr_args a;
		char more[8];
	} args;

	memset(&args, 0, sizeof(args));
	args.a.vec.addr = (uintptr_t)addr;
	args.a.vec.bytes = bytes;
	args.a.cookie_addr = (uintptr_t)cookie_addr;
	return setsockopt(fd, SOL_RDS, RDS_GET_MR, &args, optlen);
}

/*
 * Collect the notifications of operations 0 .. n - 1 (token_of(i)), each
 * once, all SUCCESS.  Return: how many arrived.
 */
int collect_notes(int fd, int n)
{
	unsigned char seen[PIPE_OPS];
	unsigned char buf[64];
	int k, got = 0;
	uint64_t tok;
	struct rx rx;
	long ret;

	ASSERT_TRUE(n <= PIPE_OPS, "%d notifications to collect", n);
	memset(seen, 0, sizeof(seen));
	while (got < n) {
		if (!(poll_fd(fd, POLLIN, RCV_TIMEOUT_MS) & POLLIN)) {
			rt_fail("%d of %d notifications in %d ms", got, n,
				RCV_TIMEOUT_MS);
			break;
		}
		ret = rx_msg(fd, buf, sizeof(buf), MSG_DONTWAIT, &rx);
		if (ret < 0 && errno == EAGAIN && distro(node))
			continue;	/* see expect_note() */
		ASSERT_TRUE(ret == 0, "recvmsg: %ld (%s) where notifications were due",
			    ret, ret < 0 ? rt_errname(errno) : "a message");
		ASSERT_TRUE(rx.nnote > 0 && rx.nnote <= NOTE_MAX,
			    "%d notifications in one message", rx.nnote);
		for (k = 0; k < rx.nnote; k++) {
			tok = rx.note[k].user_token - token_of(0);
			EXPECT_STATUS(rx.note[k].status, RDS_RDMA_SUCCESS);
			if (!EXPECT_TRUE(tok < (uint64_t)n && !seen[tok],
					 "token %#llx unknown or repeated",
					 (unsigned long long)rx.note[k].user_token))
				continue;
			seen[tok] = 1;
			got++;
		}
	}
	return got;
}

/*
 * The owner's side of a case whose RDMA must fail: @mr_len bytes at
 * @start of a page mapped (request 1), GOTIT heard, then fail_owner():
 * no ACK, the memory unchanged; with @quirk, an RDMA of @len bytes at
 * @off that succeeded anyway is accepted.  Return: fail_owner()'s status.
 */
int owner_of_failure_at(struct pair *p, size_t start, size_t mr_len,
			size_t off, size_t len, int quirk)
{
	struct region r;
	struct rx rx;
	uint64_t cookie;
	int status;

	region_init(&r, start, mr_len, msg_seed(node, 1));
	cookie = owner_map(p, &r, 0, 1);
	expect_kind(p, K_GOTIT, 1, &rx);
	status = fail_owner(p, &r, &cookie, off, len, 1, quirk);
	if (cookie)
		EXPECT_EQ(rds_free_mr(p->fd, cookie, 0), 0);
	region_free(&r);
	return status;
}

/* The same for 8 KiB at the start of a page, an RDMA at 0. */
void owner_of_failure(struct pair *p, size_t len, int quirk)
{
	owner_of_failure_at(p, 0, 8192, 0, len, quirk);
}

/* The initiator's side: the cookie of request 1, and GOTIT to say so. */
uint64_t server_cookie_ack(struct pair *p)
{
	uint64_t cookie = server_cookie(p, 1);

	send_kind(p, &p->peer, K_GOTIT, 1, NULL, 0);
	return cookie;
}

/*
 * The cut changes the loss of a netem that link_arm() put on eth0 while
 * the link was quiet, and link_disarm() removes it once quiet again:
 * adding or deleting a root qdisc while RDS traffic flows opens a moment
 * in which a frame meets the noop qdisc (NET_XMIT_CN), and rxe on 6.12
 * then moves the sending QP to the error state, for good when it is the
 * GSI QP that carries the CM's messages (lib_faults.sh, netem_arm).
 */
#define NETEM_ARGS	"root netem limit 100000 loss "	/* lib_faults.sh's limit */
#define NETEM		"tc qdisc change dev eth0 " NETEM_ARGS

void link_arm(void)
{
	ASSERT_TRUE(!system("modprobe sch_netem 2>/dev/null; "
			    "tc qdisc replace dev eth0 " NETEM_ARGS "0%"),
		    "tc qdisc replace dev eth0 root netem failed");
}

void link_disarm(void)
{
	EXPECT_TRUE(!system("tc qdisc del dev eth0 root"),
		    "tc qdisc del dev eth0 root failed");
}

/*
 * Lose every frame this node sends for @secs seconds (the bench's guests
 * carry RDS over eth0).  Return: the process that ends the loss.
 */
pid_t link_cut_for(unsigned int secs)
{
	pid_t restore;

	ASSERT_TRUE(!system(NETEM "100%"), NETEM "100%% failed");
	restore = fork();
	if (restore == 0) {
		sleep(secs);
		_exit(system(NETEM "0%") ? 1 : 0);
	}
	if (restore < 0) {
		EXPECT_TRUE(!system(NETEM "0%"), NETEM "0%% failed");
		rt_fail("fork: %s", rt_errname(errno));
		rt_abort();
	}
	return restore;
}

pid_t link_cut(void)
{
	return link_cut_for(CUT_S);
}

/* Wait for link_cut()'s process: the link is back. */
void link_restored(pid_t restore)
{
	int st;

	ASSERT_EQ(waitpid(restore, &st, 0), restore);
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st), NETEM "0%% failed");
}

/* The guest's kernel is of @series ("6.1", "6.12"). */
int kernel_series(const char *series)
{
	static struct utsname u;
	size_t n = strlen(series);

	if (!u.release[0] && uname(&u))
		return 0;
	return !strncmp(u.release, series, n) && u.release[n] == '.';
}

/*
 * Both nodes are processes of one host on local delivery, without a
 * device (rds_rdma_local.sh sets RDS_RDMA_LOCAL).
 */
int one_host(void)
{
	const char *v = getenv("RDS_RDMA_LOCAL");

	return v && *v && strcmp(v, "0");
}

/* Skip the case where node k runs the distribution's module, saying why. */
void needs_ours(int k, const char *why)
{
	if (distro(k))
		rt_skip("distribution on node %d: %s", k, why);
}
