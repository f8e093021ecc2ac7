// SPDX-License-Identifier: GPL-2.0
/*
 * rds_hostile_keys.c - rds_hostile's cases of keys: extension headers
 * naming nobody's key or another socket's, a socket closed and a key
 * freed while the peer holds its RDMA_MAP message unacknowledged, and
 * the owner of RDMA_MAP messages stalled for credits killed while its
 * link is down.
 */
#include "rds_hostile.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <signal.h>

/* (c) Extension headers; the key of another socket of node 1. */
#define OWNER_LEN	8192
#define NOBODY_COOKIE	0x0000012300a5c3e7ULL	/* offset 0x123 */

/* Node 1: register @r for the owner socket, send its cookie to node 2. */
static uint64_t owner_register(int fd, unsigned char *r)
{
	struct sockaddr_in to = peer_port(P_INIT);
	uint64_t cookie = 0;
	struct rds_get_mr_args args = {
		.vec = { (uintptr_t)r, OWNER_LEN },
		.cookie_addr = (uintptr_t)&cookie,
	};
	char note[] = "the owner's cookie";

	if (!distro_victim()) {
		/* RDS_GET_MR, then the cookie as RDMA_DEST */
		ASSERT_SYS_OK(setsockopt(fd, SOL_RDS, RDS_GET_MR, &args,
					 sizeof(args)));
		ASSERT_SYS_OK(rds_send_cmsg(fd, &to, note, sizeof(note),
					    RDS_CMSG_RDMA_DEST, &cookie,
					    sizeof(cookie)));
	} else {
		/* the distribution registers only with RDMA_MAP */
		ASSERT_SYS_OK(rds_send_cmsg(fd, &to, note, sizeof(note),
					    RDS_CMSG_RDMA_MAP, &args,
					    sizeof(args)));
	}
	return cookie;
}

/*
 * Node 1: send a message to @to that registers @r (OWNER_LEN) by MAP,
 * with RDS_RDMA_* @flags.
 */
static uint64_t map_send(int fd, struct sockaddr_in *to, unsigned char *r,
			 uint64_t flags)
{
	uint64_t cookie = 0;
	struct rds_get_mr_args args = {
		.vec = { (uintptr_t)r, OWNER_LEN },
		.cookie_addr = (uintptr_t)&cookie,
		.flags = flags,
	};
	char note[] = "a key, never acknowledged";

	ASSERT_SYS_OK(rds_send_cmsg(fd, to, note, sizeof(note),
				    RDS_CMSG_RDMA_MAP, &args, sizeof(args)));
	ASSERT_TRUE(cookie, "RDS_CMSG_RDMA_MAP stored no cookie");
	return cookie;
}

/* Node 2: the owner's cookie, from the RDMA_DEST of its message. */
static uint64_t initiator_cookie(int fd)
{
	union {
		char buf[2 * CMSG_SPACE(sizeof(uint64_t))];
		struct cmsghdr align;
	} ctl;
	char data[64];
	struct iovec iov = { data, sizeof(data) };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *c;
	uint64_t cookie = 0;

	ASSERT_SYS_OK(recvmsg(fd, &msg, 0));
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_RDS &&
		    c->cmsg_type == RDS_CMSG_RDMA_DEST)
			memcpy(&cookie, CMSG_DATA(c), sizeof(cookie));
	ASSERT_TRUE(cookie, "the owner's message carried no cookie");
	return cookie;
}

/*
 * Node 2, honestly through its kernel: RDMA READ all of the owner's MR
 * with @cookie; it must succeed and read what the owner put there.
 */
static void initiator_read(int fd, uint64_t cookie)
{
	unsigned char *buf = xmalloc(OWNER_LEN);
	struct sockaddr_in to = peer_port(P_OWNER);
	struct rds_iovec local = { (uintptr_t)buf, OWNER_LEN };
	struct rds_rdma_args args = {
		.cookie = cookie,
		.remote_vec = { 0, OWNER_LEN },
		.local_vec_addr = (uintptr_t)&local,
		.nr_local = 1,
		.flags = RDS_RDMA_NOTIFY_ME,
		.user_token = 0x5eed,
	};
	union {
		char buf[CMSG_SPACE(sizeof(args))];
		struct cmsghdr align;
	} ctl;
	char note[] = "the honest RDMA READ";
	struct iovec iov = { note, sizeof(note) };
	struct msghdr msg;
	struct rds_rdma_notify note_got;
	struct cmsghdr *c;
	long long end = rt_now_ms() + RCV_TIMEOUT_MS;
	int seen = 0;

	memset(buf, 0, OWNER_LEN);
	ASSERT_SYS_OK(rds_send_cmsg(fd, &to, note, sizeof(note),
				    RDS_CMSG_RDMA_ARGS, &args, sizeof(args)));
	while (!seen && rt_now_ms() < end) {
		memset(&msg, 0, sizeof(msg));
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		msg.msg_control = ctl.buf;
		msg.msg_controllen = sizeof(ctl.buf);
		if (recvmsg(fd, &msg, 0) < 0)
			break;
		for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
			if (c->cmsg_level != SOL_RDS ||
			    c->cmsg_type != RDS_CMSG_RDMA_STATUS)
				continue;
			memcpy(&note_got, CMSG_DATA(c), sizeof(note_got));
			seen = 1;
		}
	}
	ASSERT_TRUE(seen, "no notification of the honest RDMA READ");
	EXPECT_EQ(note_got.user_token, 0x5eed);
	EXPECT_EQ(note_got.status, RDS_RDMA_SUCCESS);
	EXPECT_EQ(pattern_mismatch(buf, OWNER_LEN, msg_seed(1, 55)),
		  OWNER_LEN);
	free(buf);
}

/*
 * Node 2: read the owner's MR from the hostile QP with the leaked key, to
 * say whether a key alone opens it (not a check: RDS keys are
 * capabilities; see issue 10 item 4).  Return: the completion status, or
 * -1 for none.
 */
static int hostile_read(struct hp *h, uint64_t cookie)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)hp_read_buf(h),
		.length = HP_READ_LEN,
		.lkey = h->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = WR_READ,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = cookie >> 32,
			     .rkey = (uint32_t)cookie },
	}, *bad;
	long long end = rt_now_ms() + DOWN_MS;

	h->read_status = -1;
	if (ibv_post_send(h->id->qp, &wr, &bad)) {
		rt_diag("hostile RDMA READ: not posted: %s", rt_errname(errno));
		return -1;
	}
	while (h->read_status < 0 && rt_now_ms() < end)
		hp_progress(h, 100);
	if (h->read_status == IBV_WC_SUCCESS)
		rt_diag("hostile RDMA READ, leaked key: %d bytes read, %s",
			HP_READ_LEN,
			pattern_mismatch(hp_read_buf(h), HP_READ_LEN,
					 msg_seed(1, 55)) == HP_READ_LEN ?
			"the owner's (the key alone opens the MR)" :
			"not the owner's");
	else
		rt_diag("hostile RDMA READ, leaked key: %s",
			h->read_status < 0 ? "no completion" :
			ibv_wc_status_str(h->read_status));
	return h->read_status;
}

void test_bad_exthdr(void)
{
	uint8_t ext[RDS_WIRE_EXT_SPACE];
	uint8_t junk[4] = { 0xde, 0xad, 0xbe, 0xef };
	unsigned char *region = NULL, *before = NULL;
	struct rds_wire_hdr hdr;
	uint64_t cookie = 0;
	unsigned int pos, i;
	int owner = -1, init = -1;
	struct hcase hc;
	struct hp h;

	hc_begin(&hc);
	hc.mr_slack = 1;	/* the owner's MR may stay in a pool */
	if (node == 1) {
		owner = rds_bound(P_OWNER, NULL);
		region = mmap(NULL, OWNER_LEN, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_TRUE(region != MAP_FAILED, "mmap: %s", rt_errname(errno));
		fill_pattern(region, OWNER_LEN, msg_seed(1, 55));
		before = xmalloc(OWNER_LEN);
		memcpy(before, region, OWNER_LEN);
	} else {
		init = rds_bound(P_INIT, NULL);
	}
	sync_peer("owner bound");
	if (node == 1) {
		owner_register(owner, region);
	} else {
		cookie = initiator_cookie(init);
		hp_open(&h, case_tos(0), 0, 0);
		/* 1: an unknown type, then its junk */
		memset(ext, 0, sizeof(ext));
		ext[0] = 9;
		memcpy(ext + 1, junk, sizeof(junk));
		hp_msg(&h, 1, 10, P_VICTIM, 0, ext);
		/* 2: a type of 16 or more ends the walk */
		memset(ext, 0xff, sizeof(ext));
		hp_msg(&h, 2, 10, P_VICTIM, 0, ext);
		/* 3: VERSION, three empty types, an RDMA_DEST cut short */
		hp_hdr(&h, &hdr, 0, 0, 0, 0, NULL);
		pos = rds_wire_ext_put(&hdr, 0, RDS_WIRE_EXT_VERSION, junk, 4);
		for (i = 0; i < 3; i++)
			pos = rds_wire_ext_put(&hdr, pos, 7, NULL, 0);
		rds_wire_ext_dest(&hdr, pos, cookie);
		hp_msg(&h, 3, 10, P_VICTIM, 0, hdr.ext);
		/* 4: a cookie for a key nobody registered */
		hp_hdr(&h, &hdr, 0, 0, 0, 0, NULL);
		rds_wire_ext_dest(&hdr, 0, NOBODY_COOKIE);
		hp_msg(&h, 4, 10, P_VICTIM, 0, hdr.ext);
		/* 5: "your MR was written" for a key nobody registered */
		hp_hdr(&h, &hdr, 0, 0, 0, 0, NULL);
		rds_wire_ext_rdma(&hdr, 0, (uint32_t)NOBODY_COOKIE);
		hp_msg(&h, 5, 10, P_VICTIM, 0, hdr.ext);
		/* 6: the TCP multipath extensions, never meant for IB */
		hp_hdr(&h, &hdr, 0, 0, 0, 0, NULL);
		pos = rds_wire_ext_put(&hdr, 0, RDS_WIRE_EXT_NPATHS, junk, 2);
		rds_wire_ext_put(&hdr, pos, RDS_WIRE_EXT_GEN_NUM, junk, 4);
		hp_msg(&h, 6, 10, P_VICTIM, 0, hdr.ext);
		/* 7, 8: the owner's key, to another socket */
		hp_hdr(&h, &hdr, 0, 0, 0, 0, NULL);
		rds_wire_ext_dest(&hdr, 0, cookie);
		hp_msg(&h, 7, 10, P_VICTIM, 0, hdr.ext);
		hp_hdr(&h, &hdr, 0, 0, 0, 0, NULL);
		rds_wire_ext_rdma(&hdr, 0, (uint32_t)cookie);
		hp_msg(&h, 8, 10, P_VICTIM, 0, hdr.ext);
		/* 9, 10: and to the owner, as if an RDMA had been done */
		hp_msg(&h, 9, 10, P_OWNER, 0, hdr.ext);
		hp_hdr(&h, &hdr, 0, 0, 0, 0, NULL);
		pos = rds_wire_ext_rdma(&hdr, 0, (uint32_t)cookie);
		rds_wire_ext_dest(&hdr, pos, cookie);
		hp_msg(&h, 10, 10, P_OWNER, 0, hdr.ext);
		EXPECT_TRUE(!hp_flush(&h, DOWN_MS), "sends: status %d", h.err);
		EXPECT_TRUE(h.up, "node 1 dropped the connection");
	}
	sync_peer("sent");
	if (node == 1) {
		expect_hostile(hc.victim, 1, 10, 0, 0);
		expect_hostile(hc.victim, 2, 10, 0, 0);
		expect_hostile(hc.victim, 3, 10, 0, 0);
		expect_hostile(hc.victim, 4, 10, 1, NOBODY_COOKIE);
		expect_hostile(hc.victim, 5, 10, 0, 0);
		expect_hostile(hc.victim, 6, 10, 0, 0);
		cookie = (uint64_t)hear_peer();
		expect_hostile(hc.victim, 7, 10, 1, cookie);
		expect_hostile(hc.victim, 8, 10, 0, 0);
		expect_hostile(owner, 9, 10, 0, 0);
		expect_hostile(owner, 10, 10, 1, cookie);
		EXPECT_TRUE(!memcmp(region, before, OWNER_LEN),
			    "the owner's memory changed");
	} else {
		tell_peer((long)cookie);
	}
	sync_peer("checked");
	/* The key still works for its owner's honest peer. */
	if (node == 2) {
		initiator_read(init, cookie);
		hostile_read(&h, cookie);
	} else {
		char buf[64];

		EXPECT_SYS_OK(recv(owner, buf, sizeof(buf), 0));
	}
	hc_middle(&hc);
	if (node == 1) {
		EXPECT_TRUE(!memcmp(region, before, OWNER_LEN),
			    "the owner's memory changed");
		close(owner);
		munmap(region, OWNER_LEN);
		free(before);
	} else {
		hp_close(&h);
		close(init);
	}
	hc_end(&hc, -1);
}

/*
 * The start of close_unacked, free_unacked and use_once_unacked: node 1
 * sends an RDMA_MAP message (RDS_RDMA_* @flags) of a fresh region from
 * socket *@s to the verbs peer, which takes it and never acknowledges
 * it, and whose RDMA READ with the key must then work (@before names the
 * step that follows, for the message).
 * Return: the cookie, on both nodes.
 */
static uint64_t unacked_map(struct hcase *hc, struct hp *h, int *s,
			    unsigned char **region, const char *before,
			    uint64_t flags)
{
	struct sockaddr_in to = peer_port(P_INIT);
	uint64_t cookie, seqs[4];
	int st;

	hc_begin(hc);
	hc->mr_slack = 1;	/* the MR may stay in a pool */
	if (node == 2) {
		hp_open(h, case_tos(0), 0, 0);
	} else {
		*s = rds_bound(P_S1, NULL);
		set_tos(*s, case_tos(0));
		*region = mmap(NULL, OWNER_LEN, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_TRUE(*region != MAP_FAILED, "mmap: %s",
			    rt_errname(errno));
		fill_pattern(*region, OWNER_LEN, msg_seed(1, 55));
	}
	sync_peer("up");
	if (node == 1) {
		cookie = map_send(*s, &to, *region, flags);
		EXPECT_EQ(unacked_wait(hc->cfd, P_S1, 1, DOWN_MS), 1);
		tell_peer((long)cookie);
	} else {
		EXPECT_EQ(hp_wait_seen(h, case_port(P_S1), 1, seqs, DOWN_MS), 1);
		cookie = (uint64_t)hear_peer();
		/* the peer it was sent to may use it: the test can fail */
		st = hostile_read(h, cookie);
		EXPECT_TRUE(st == IBV_WC_SUCCESS,
			    "RDMA READ with the key before %s: %s", before,
			    st < 0 ? "none" : ibv_wc_status_str(st));
	}
	sync_peer("read");
	return cookie;
}

/*
 * The end of close_unacked and free_unacked: node 1 has let go of the key
 * (@what it is now); node 2 reads with it and tells node 1, which checks
 * that the read failed (the distribution's may not: the caller judges).
 * Return: the read's status, on both nodes.
 */
static int unacked_read_after(struct hp *h, uint64_t cookie,
			      const char *what)
{
	int st;

	if (node == 2) {
		st = hostile_read(h, cookie);
		tell_peer(st);
		hp_close(h);
		return st;
	}
	st = (int)hear_peer();
	if (!distro_victim())
		EXPECT_TRUE(st > 0, "the %s key still reads its memory (%d)",
			    what, st);
	return st;
}

/*
 * The end of free_unacked and use_once_unacked, once node 1 let go of the
 * key its socket @s still has a message for (@what the key is now, after
 * the step @step): node 2's READ with it must fail, the socket closes and
 * node 1 must be back where it was.
 * Return: on node 1, whether the distribution's key still read.
 */
static int unacked_finish(struct hcase *hc, struct hp *h, int s,
			  unsigned char *region, uint64_t cookie,
			  const char *step, const char *what)
{
	int st;

	sync_peer(step);
	st = unacked_read_after(h, cookie, what);
	if (node == 1) {
		close(s);
		munmap(region, OWNER_LEN);
	}
	hc_middle(hc);
	hc_end(hc, -1);
	return node == 1 && distro_victim() && st == IBV_WC_SUCCESS;
}

/*
 * close_unacked: node 1 sends an RDMA_MAP message to a verbs peer that
 * takes it and never acknowledges it, then closes the socket.  close()
 * must return at once (it waited for the ACK that frees the message's
 * key: 10 s until the ACK watchdog dropped the connection, and for ever
 * if the peer never came back), the message must be gone, and so must
 * the key: the peer that could read the memory before cannot after.
 */
#define CLOSE_MS	3000

void test_close_unacked(void)
{
	unsigned char *region = NULL;
	long long t0, took;
	uint64_t cookie;
	int s = -1, st = 0;
	struct hcase hc;
	struct hp h;

	cookie = unacked_map(&hc, &h, &s, &region, "close", 0);
	if (node == 1) {
		t0 = rt_now_ms();
		close(s);
		took = rt_now_ms() - t0;
		EXPECT_TRUE(took < CLOSE_MS,
			    "close() with a message never acknowledged took %lld ms",
			    took);
		EXPECT_EQ(unacked(hc.cfd, P_S1), 0);
		munmap(region, OWNER_LEN);
	}
	sync_peer("socket closed");
	st = unacked_read_after(&h, cookie, "closed socket's");
	hc_middle(&hc);
	hc_end(&hc, -1);
	if (node == 1 && distro_victim() && st == IBV_WC_SUCCESS)
		rt_skip("distribution: a closed socket's key still opens its memory");
}

/*
 * use_once_unacked: node 1 sends an RDMA_MAP message of a key with
 * RDS_RDMA_USE_ONCE and RDS_RDMA_INVALIDATE to a verbs peer that takes it
 * and never acknowledges it; the peer reads with the key, then sends the
 * ACK of its READ: a message whose RDMA extension names the key.  That
 * releases the key, and with RDS_RDMA_INVALIDATE node 1's reader gets
 * the ACK only once the key is dead.  The RDMA_MAP message still holds
 * the MR, and its peer never lets it go: node 1 must kill the key rather
 * than wait for the message, so the ACK must arrive (within the
 * socket's receive timeout), the message must still be there, and the
 * key must be dead: the peer's next READ fails.
 */
void test_use_once_unacked(void)
{
	unsigned char *region = NULL;
	struct rds_wire_hdr hdr;
	uint64_t cookie;
	int s = -1;
	struct hcase hc;
	struct hp h;

	cookie = unacked_map(&hc, &h, &s, &region, "its ACK",
			     RDS_RDMA_USE_ONCE | RDS_RDMA_INVALIDATE);
	if (node == 2) {
		hp_hdr(&h, &hdr, 0, 0, 0, 0, NULL);
		rds_wire_ext_rdma(&hdr, 0, (uint32_t)cookie);
		hp_msg(&h, 1, 10, P_S1, 0, hdr.ext);
		EXPECT_TRUE(!hp_flush(&h, DOWN_MS), "sends: status %d", h.err);
	} else {
		expect_hostile(s, 1, 10, 0, 0);
		EXPECT_EQ(unacked(hc.cfd, P_S1), 1);
	}
	if (unacked_finish(&hc, &h, s, region, cookie, "ACK read", "used-up"))
		rt_skip("%s",
			"distribution: a used-up key whose RDMA_MAP message is not acknowledged still opens its memory");
}

static void on_alarm(int sig)
{
	(void)sig;
}

/*
 * free_unacked: node 1 sends an RDMA_MAP message to a verbs peer that
 * takes it and never acknowledges it, then frees the MR with
 * RDS_FREE_MR and RDS_RDMA_INVALIDATE.  The call must return at once
 * with 0 (it waited for the message, which holds the MR, to be
 * acknowledged: for ever; since 4fb6fd9 until a signal), and the key
 * must be dead when it returns: the peer that read with it before
 * cannot after, although the message still holds the MR.  The socket
 * then closes and every MR comes back (hc_end()).
 */
#define FREE_MS		1000

void test_free_unacked(void)
{
	struct sigaction sa = { .sa_handler = on_alarm }, old;
	unsigned char *region = NULL;
	struct rds_free_mr_args fa;
	long long t0, took;
	uint64_t cookie;
	int s = -1, ret, err;
	struct hcase hc;
	struct hp h;

	cookie = unacked_map(&hc, &h, &s, &region, "RDS_FREE_MR", 0);
	if (node == 1) {
		/* A signal ends a wait that would last for ever. */
		sigaction(SIGALRM, &sa, &old);
		alarm(5);
		fa.cookie = cookie;
		fa.flags = RDS_RDMA_INVALIDATE;
		t0 = rt_now_ms();
		ret = setsockopt(s, SOL_RDS, RDS_FREE_MR, &fa, sizeof(fa));
		err = errno;
		took = rt_now_ms() - t0;
		alarm(0);
		sigaction(SIGALRM, &old, NULL);
		EXPECT_TRUE(!ret, "RDS_FREE_MR with RDS_RDMA_INVALIDATE: %s after %lld ms",
			    rt_errname(err), took);
		EXPECT_TRUE(took < FREE_MS,
			    "RDS_FREE_MR with RDS_RDMA_INVALIDATE of a key a message holds took %lld ms",
			    took);
		EXPECT_EQ(unacked(hc.cfd, P_S1), 1);
	}
	if (unacked_finish(&hc, &h, s, region, cookie, "freed", "freed"))
		rt_skip("distribution: a freed key a message holds still opens its memory");
}

/*
 * The netdev of this node's address, and whether it is virtio-net (whose
 * transmit queue once stayed stuck after "ip link set up": rds_faults.sh).
 */
static int self_netdev(char *name, size_t len, int *virtio)
{
	struct ifaddrs *ifa, *i;
	char path[PATH_MAX], drv[PATH_MAX];
	ssize_t n;
	int found = 0;

	if (getifaddrs(&ifa))
		return 0;
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
		    ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr !=
		    addr_self.s_addr)
			continue;
		snprintf(name, len, "%s", i->ifa_name);
		found = 1;
		break;
	}
	freeifaddrs(ifa);
	if (!found)
		return 0;
	snprintf(path, sizeof(path), "/sys/class/net/%s/device/driver", name);
	n = readlink(path, drv, sizeof(drv) - 1);
	drv[n > 0 ? n : 0] = 0;
	*virtio = !!strstr(drv, "virtio");
	return 1;
}

static int link_set(const char *dev, const char *state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "ip link set dev %s %s", dev, state);
	return system(cmd);
}

/*
 * Both nodes, after node 1's link came back: one message each way on the
 * honest connection, waited for up to SETTLE_MS (a QP that stalled while
 * the link was down is reconnected by the ACK watchdog), so that the
 * frame's exchanges find it working again.
 */
static void link_back(struct hcase *hc)
{
	struct sockaddr_in to = peer_port(P_HONEST), from;
	long long end = rt_now_ms() + SETTLE_MS;
	char buf[32];
	long n = -1;
	int i;

	for (i = 0; i < 2; i++) {
		if (i == node - 1) {	/* node 1 speaks first */
			EXPECT_SYS_OK(sendto(hc->honest, "link back", 9, 0,
					     (struct sockaddr *)&to,
					     sizeof(to)));
			continue;
		}
		do {
			n = recv_msg(hc->honest, buf, sizeof(buf), 0, &from,
				     NULL);
		} while (n < 0 && (errno == ETIMEDOUT || errno == EAGAIN) &&
			 rt_now_ms() < end);
		ASSERT_TRUE(n == 9, "honest message after the link came back: %s",
			    n < 0 ? rt_errname(errno) : "wrong length");
	}
}

/*
 * kill_stalled: node 2's verbs peer grants node 1 four credits and
 * never more, so that node 1's RDMA_MAP messages stall: the first that
 * finds no credit stays with the transport, holding its MR.  Node 1's
 * link goes down, and the process that owns the socket is killed
 * (SIGKILL).  It must be gone within KILL_MS: its close waited
 * uninterruptibly for that message's MR, which the connection's
 * teardown only gives back once the port is up again (rds_zc-ib-design
 * .rst), so the process sat in D state until the link came back.  The
 * link comes back, and every MR and socket comes back too (hc_end()).
 * Skipped on virtio-net and where node 1 runs the distribution, as
 * rds_faults.sh's link_down.
 */
#define KILL_MS		5000
#define KILL_MAPS	8

void test_kill_stalled(void)
{
	char dev[IF_NAMESIZE] = "";
	long long t0, took = -1;
	int virtio = 0, i, st;
	int pfd[2] = { -1, -1 };
	struct hcase hc;
	pid_t pid = -1;
	struct hp h;
	char c;

	ASSERT_TRUE(self_netdev(dev, sizeof(dev), &virtio),
		    "no netdev has %s", addr_self_str);
	if (virtio)
		rt_skip("virtio-net: a link set down and up again may stall its queue");
	if (distro_victim())
		rt_skip("%s",
			"distribution: over rxe its connections do not come back from a link that went down");
	hc_begin(&hc);
	hc.mr_slack = KILL_MAPS;	/* their MRs may stay in a pool */
	if (node == 2)
		hp_open(&h, case_tos(0), 4, 0);
	sync_peer("up");
	if (node == 1) {
		ASSERT_SYS_OK(pipe(pfd));
		pid = fork();
		ASSERT_TRUE(pid >= 0, "fork: %s", rt_errname(errno));
		if (!pid) {
			struct sockaddr_in to = peer_port(P_INIT);
			unsigned char *r;
			int s;

			close(pfd[0]);
			s = rds_bound(P_S1, NULL);
			set_tos(s, case_tos(0));
			r = mmap(NULL, KILL_MAPS * OWNER_LEN,
				 PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (r == MAP_FAILED)
				_exit(1);
			for (i = 0; i < KILL_MAPS; i++)
				map_send(s, &to, r + i * OWNER_LEN, 0);
			if (write(pfd[1], "s", 1) != 1)
				_exit(1);
			for (;;)
				pause();
		}
		close(pfd[1]);
		ASSERT_TRUE(read(pfd[0], &c, 1) == 1,
			    "the owner did not send its messages");
		close(pfd[0]);
		/* Those with credits are out; the next one waits for one. */
		rt_sleep_ms(500);
		EXPECT_TRUE(!link_set(dev, "down"), "ip link set %s down", dev);
		t0 = rt_now_ms();
		kill(pid, SIGKILL);
		while (took < 0 && rt_now_ms() - t0 < KILL_MS) {
			if (waitpid(pid, &st, WNOHANG) == pid)
				took = rt_now_ms() - t0;
			else
				rt_sleep_ms(20);
		}
		EXPECT_TRUE(!link_set(dev, "up"), "ip link set %s up", dev);
		EXPECT_TRUE(took >= 0,
			    "the killed owner of stalled RDMA_MAP messages was not gone %d ms after SIGKILL with the link down",
			    KILL_MS);
		if (took < 0) {
			/* It goes once the link is back; do not leave it. */
			t0 = rt_now_ms();
			while (waitpid(pid, &st, WNOHANG) != pid &&
			       rt_now_ms() - t0 < SETTLE_MS)
				rt_sleep_ms(100);
			rt_diag("the owner went %lld ms after the link came back",
				rt_now_ms() - t0);
		} else {
			rt_diag("the owner went %lld ms after SIGKILL", took);
		}
	}
	sync_peer("killed");
	if (node == 2)
		hp_close(&h);
	link_back(&hc);
	hc_middle(&hc);
	hc_end(&hc, -1);
}
