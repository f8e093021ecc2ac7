// SPDX-License-Identifier: GPL-2.0
/*
 * rds_local_rdma.c - rds_local's cases of RDMA notifications, and of
 * RDMA between sockets of this host on local delivery.
 */
#include "rds_local.h"

#include <net/if.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

/* ------------------------------------------------- RDMA notifications */

#define RDMA_LEN	4096
#define RDMA_TOKEN	0xa5a5000000c0de00ULL	/* all 64 bits come back */
#define NOTE_SPACE	CMSG_SPACE(sizeof(struct rds_rdma_notify))

/*
 * Queue to *to a message carrying an RDMA WRITE of buf (RDMA_LEN bytes)
 * with RDS_RDMA_NOTIFY_ME.  Its cookie names no MR anywhere, which does
 * not matter: sent to nobody_addr(), the operation is never posted.
 * Return: sendmsg()'s.
 */
static long try_rdma_write(int fd, const struct sockaddr_in *to,
			   const void *buf, uint64_t token, int flags)
{
	struct rds_iovec local = {
		.addr = (uintptr_t)buf,
		.bytes = RDMA_LEN,
	};
	struct rds_rdma_args args = {
		.cookie = 0x0000001000001234ULL,
		.remote_vec = { .addr = 0, .bytes = RDMA_LEN },
		.local_vec_addr = (uintptr_t)&local,
		.nr_local = 1,
		.flags = RDS_RDMA_READWRITE | RDS_RDMA_NOTIFY_ME,
		.user_token = token,
	};

	return rds_send_cmsg_flags(fd, to, "rdma", 4, RDS_CMSG_RDMA_ARGS,
				   &args, sizeof(args), flags);
}

static void send_rdma_write(int fd, const struct sockaddr_in *to,
			    const void *buf, uint64_t token)
{
	ASSERT_EQ(ASSERT_SYS_OK(try_rdma_write(fd, to, buf, token, 0)), 4);
}

/*
 * recvmsg() with a control buffer of controllen bytes (0: none): the
 * RDS_CMSG_RDMA_STATUS notifications it carried are counted in *nnote,
 * the first one copied to *note; its msg_flags in *msg_flags.
 */
static long recv_notes(int fd, size_t controllen, int flags,
		       struct rds_rdma_notify *note, int *nnote,
		       int *msg_flags)
{
	union {
		char buf[4 * NOTE_SPACE];
		struct cmsghdr align;
	} ctl;
	char data[64];
	struct iovec iov = { data, sizeof(data) };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = controllen ? ctl.buf : NULL,
		.msg_controllen = controllen,
	};
	struct cmsghdr *cm;
	long ret;
	int err;

	ASSERT_TRUE(controllen <= sizeof(ctl.buf), "control buffer of %zu",
		    controllen);
	memset(&ctl, 0, sizeof(ctl));
	memset(note, 0, sizeof(*note));
	*nnote = 0;
	ret = recvmsg(fd, &msg, flags);
	err = errno;
	*msg_flags = ret < 0 ? 0 : msg.msg_flags;
	for (cm = ret < 0 ? NULL : CMSG_FIRSTHDR(&msg); cm;
	     cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level != SOL_RDS ||
		    cm->cmsg_type != RDS_CMSG_RDMA_STATUS) {
			rt_fail("unexpected cmsg level %d type %d",
				cm->cmsg_level, cm->cmsg_type);
			continue;
		}
		EXPECT_EQ(cm->cmsg_len, CMSG_LEN(sizeof(*note)));
		if (!(*nnote)++)
			memcpy(note, CMSG_DATA(cm), sizeof(*note));
	}
	errno = err;
	return ret;
}

/* The one notification queued on fd: token, RDS_RDMA_CANCELED, whole. */
static void expect_canceled_note(int fd, uint64_t token)
{
	struct rds_rdma_notify note;
	int n, flags;

	EXPECT_EQ(EXPECT_SYS_OK(recv_notes(fd, 4 * NOTE_SPACE, 0, &note, &n,
					   &flags)), 0);
	EXPECT_EQ(flags & MSG_CTRUNC, 0);
	EXPECT_EQ(n, 1);
	EXPECT_EQ(note.user_token, token);
	EXPECT_EQ(note.status, RDS_RDMA_CANCELED);
}

/*
 * RDS_CANCEL_SENT_TO withdraws a message whose RDMA operation was never
 * posted: the operation ends as RDS_RDMA_CANCELED, and with
 * RDS_RDMA_NOTIFY_ME a notification says so, with its user_token, as
 * the distribution's RDS sends it.  An operation to another port stays
 * queued and unreported.
 */
void test_rdma_cancel_sent_to(void)
{
	struct in_addr nobody = nobody_addr();
	struct rds_rdma_notify note;
	struct sockaddr_in to, other;
	unsigned char *buf = xmalloc(RDMA_LEN);
	int fd, n, flags;

	fill_pattern(buf, RDMA_LEN, 1);
	fd = rds_bound(addr_main, 0, NULL);
	sin_set(&to, nobody, 4000);
	sin_set(&other, nobody, 4001);
	send_rdma_write(fd, &to, buf, RDMA_TOKEN);
	send_rdma_write(fd, &other, buf, RDMA_TOKEN + 1);

	/* Queued, not failed: nothing to report yet. */
	EXPECT_SYS_ERR(recv_notes(fd, 4 * NOTE_SPACE, MSG_DONTWAIT, &note, &n,
				  &flags), EAGAIN);
	ASSERT_SYS_OK(setsockopt(fd, SOL_RDS, RDS_CANCEL_SENT_TO, &to,
				 sizeof(to)));
	expect_canceled_note(fd, RDMA_TOKEN);
	EXPECT_SYS_ERR(recv_notes(fd, 4 * NOTE_SPACE, MSG_DONTWAIT, &note, &n,
				  &flags), EAGAIN);
	close(fd);
	free(buf);
}

/*
 * A notification leaves the socket only in a control buffer that holds
 * it whole.  A reader without room for one (recv(), or a buffer one
 * byte short) is served as if none were queued: the next datagram, or
 * EAGAIN; a later recvmsg() with room gets the notification.
 *
 * Distribution behaviour: a reader without room gets an empty message
 * with MSG_CTRUNC and the notification is freed, so nobody ever learns
 * how the operation ended; the case checks that and reports SKIP.
 */
void test_rdma_note_needs_room(void)
{
	struct in_addr nobody = nobody_addr();
	unsigned char *buf = xmalloc(RDMA_LEN);
	struct rds_rdma_notify note;
	struct sockaddr_in me, to;
	int fd, tx, n, flags;
	char data[64];
	long ret;

	fill_pattern(buf, RDMA_LEN, 2);
	fd = rds_bound(addr_main, 0, &me);
	tx = rds_bound(addr_main, 0, NULL);
	sin_set(&to, nobody, 4000);
	send_rdma_write(fd, &to, buf, RDMA_TOKEN + 2);
	ASSERT_SYS_OK(setsockopt(fd, SOL_RDS, RDS_CANCEL_SENT_TO, &to,
				 sizeof(to)));
	EXPECT_TRUE(poll_fd(fd, POLLIN, 0) & POLLIN,
		    "no POLLIN with a notification queued");

	/* No data, no room: as an empty socket. */
	ret = recv(fd, data, sizeof(data), MSG_DONTWAIT);
	if (ret >= 0 && modules_are_distro()) {
		EXPECT_EQ(ret, 0);
		EXPECT_SYS_ERR(recv_notes(fd, 4 * NOTE_SPACE, MSG_DONTWAIT,
					  &note, &n, &flags), EAGAIN);
		close(tx);
		close(fd);
		free(buf);
		rt_skip("distribution: recv() got an empty message, the notification was freed");
	}
	if (ret >= 0)
		rt_fail("recv() without a control buffer returned %ld bytes, not EAGAIN",
			ret);
	else
		EXPECT_EQ(errno, EAGAIN);

	/* Data queued: recv() and a short buffer get the data. */
	EXPECT_EQ(EXPECT_SYS_OK(sendto(tx, "first", 5, 0, (void *)&me,
				       sizeof(me))), 5);
	recv_text(fd, "first", NULL);
	EXPECT_EQ(EXPECT_SYS_OK(sendto(tx, "second", 6, 0, (void *)&me,
				       sizeof(me))), 6);
	EXPECT_EQ(EXPECT_SYS_OK(recv_notes(fd, NOTE_SPACE - 1, 0, &note, &n,
					   &flags)), 6);
	EXPECT_EQ(n, 0);
	EXPECT_EQ(flags & MSG_CTRUNC, 0);
	EXPECT_SYS_ERR(recv_notes(fd, NOTE_SPACE - 1, MSG_DONTWAIT, &note, &n,
				  &flags), EAGAIN);

	/* Room for exactly one: it is still there, whole. */
	EXPECT_EQ(EXPECT_SYS_OK(recv_notes(fd, NOTE_SPACE, MSG_DONTWAIT, &note,
					   &n, &flags)), 0);
	EXPECT_EQ(flags & MSG_CTRUNC, 0);
	EXPECT_EQ(n, 1);
	EXPECT_EQ(note.user_token, RDMA_TOKEN + 2);
	EXPECT_EQ(note.status, RDS_RDMA_CANCELED);
	expect_empty(fd);
	close(tx);
	close(fd);
	free(buf);
}

#define NOTE_RCVBUF	4096	/* SO_RCVBUF: the kernel doubles it */
#define NOTE_TRIES	2000

/*
 * Notifications are charged to their socket: an RDMA operation with
 * RDS_RDMA_NOTIFY_ME whose notification would take the socket's over
 * half of SO_RCVBUF (the kernel's doubled value, as for data) fails
 * with ENOBUFS before it starts, and counts rdma_note_refused.  Nothing
 * is lost: every operation accepted reports its status, and once the
 * application read them the next operation goes.  Without the bound a
 * socket that never reads its notifications holds one for every
 * operation it ever started.
 *
 * Distribution behaviour: no bound; every operation is accepted (until
 * the send buffer or the locked-memory limit stops them, with EAGAIN or
 * ENOMEM) and its note queued uncharged, so an application that does not
 * read them grows kernel memory without limit; the case checks the notes
 * and reports SKIP.
 */
void test_rdma_note_bound(void)
{
	struct in_addr nobody = nobody_addr();
	unsigned char *buf = xmalloc(RDMA_LEN);
	int fd, n, flags, rcvbuf = NOTE_RCVBUF, sndbuf = 4 << 20;
	struct rds_rdma_notify note;
	long long refused, ret = 0;
	int sent, notes = 0, err = 0;
	struct sockaddr_in to;
	socklen_t len = sizeof(rcvbuf);

	fill_pattern(buf, RDMA_LEN, 3);
	fd = rds_bound(addr_main, 0, NULL);
	refused = rds_counter(fd, "rdma_note_refused");
	ASSERT_SYS_OK(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
				 sizeof(rcvbuf)));
	ASSERT_SYS_OK(getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &len));
	/* Room for every message: the notes, not the buffer, must stop us. */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf,
		       sizeof(sndbuf)))
		rt_diag("SO_SNDBUFFORCE: %s", rt_errname(errno));
	sin_set(&to, nobody, 4000);
	for (sent = 0; sent < NOTE_TRIES; sent++) {
		ret = try_rdma_write(fd, &to, buf, RDMA_TOKEN + sent,
				     MSG_DONTWAIT);
		if (ret < 0) {
			err = errno;
			break;
		}
		EXPECT_EQ(ret, 4);
	}
	rt_diag("SO_RCVBUF %d: %d operations accepted, then %s", rcvbuf,
		sent, ret < 0 ? rt_errname(err) : "none refused");

	/* Every operation accepted reports, whatever stopped the rest. */
	ASSERT_SYS_OK(setsockopt(fd, SOL_RDS, RDS_CANCEL_SENT_TO, &to,
				 sizeof(to)));
	while (recv_notes(fd, 4 * NOTE_SPACE, MSG_DONTWAIT, &note, &n,
			  &flags) >= 0) {
		EXPECT_EQ(flags & MSG_CTRUNC, 0);
		notes += n;
	}
	EXPECT_EQ(errno, EAGAIN);
	EXPECT_EQ(notes, sent);

	if (modules_are_distro() && (ret >= 0 || err != ENOBUFS)) {
		close(fd);
		free(buf);
		rt_skip("distribution: %d NOTIFY_ME operations, SO_RCVBUF %d: notes uncharged",
			sent, rcvbuf);
	}
	EXPECT_TRUE(ret < 0 && err == ENOBUFS,
		    "%d NOTIFY_ME operations accepted with SO_RCVBUF %d, then %s: not ENOBUFS",
		    sent, rcvbuf, ret < 0 ? rt_errname(err) : "none refused");
	/* At most half of SO_RCVBUF, 64 bytes or more a note. */
	EXPECT_TRUE(sent >= 1 && sent <= rcvbuf / 2 / 64,
		    "%d notes held with SO_RCVBUF %d", sent, rcvbuf);
	refused = rds_counter(fd, "rdma_note_refused") - refused;
	/* make reliability's row "RDMA notes refused" */
	rt_diag("bound_diag kind=notes_refused n=%lld", refused);
	EXPECT_EQ(refused, 1);

	/* Read: charged no more, the next operation goes. */
	EXPECT_EQ(EXPECT_SYS_OK(try_rdma_write(fd, &to, buf, RDMA_TOKEN,
					       MSG_DONTWAIT)), 4);
	ASSERT_SYS_OK(setsockopt(fd, SOL_RDS, RDS_CANCEL_SENT_TO, &to,
				 sizeof(to)));
	expect_canceled_note(fd, RDMA_TOKEN);
	close(fd);
	free(buf);
}

/* --------------------------------------- RDMA between local sockets */

#define HOST_LEN	8192	/* the owner's MR: three pages at HOST_OFF */
#define HOST_OFF	100
#define NOBODY_UID	65534

/*
 * An RDMA of len bytes between buf and the MR of cookie at off (from the
 * MR's first byte: the kernel adds the cookie's offset), to *to,
 * with NOTIFY_ME and a 3-byte ACK.  Return: its notification's status,
 * or -errno of the send or the receive.
 */
static int host_rdma(int fd, const struct sockaddr_in *to, uint64_t cookie,
		     uint64_t off, void *buf, size_t len, int write,
		     uint64_t token)
{
	struct rds_iovec local = { .addr = (uintptr_t)buf, .bytes = len };
	struct rds_rdma_args args = {
		.cookie = cookie,
		.remote_vec = { .addr = off, .bytes = len },
		.local_vec_addr = (uintptr_t)&local,
		.nr_local = 1,
		.flags = RDS_RDMA_NOTIFY_ME | (write ? RDS_RDMA_READWRITE : 0),
		.user_token = token,
	};
	struct rds_rdma_notify note;
	int n, flags;

	if (rds_send_cmsg(fd, to, "ack", 3, RDS_CMSG_RDMA_ARGS, &args,
			  sizeof(args)) != 3)
		return -errno;
	if (recv_notes(fd, 4 * NOTE_SPACE, 0, &note, &n, &flags) < 0)
		return -errno;
	if (n != 1 || note.user_token != token)
		return -EPROTO;
	return note.status;
}

/* A SILENT fetch-and-add of add on the word at off of cookie's MR. */
static long host_fadd(int fd, const struct sockaddr_in *to, uint64_t cookie,
		      uint64_t off, uint64_t *result, uint64_t add)
{
	struct rds_atomic_args args = {
		.cookie = cookie,
		.local_addr = (uintptr_t)result,
		.remote_addr = off,
		.fadd = { .add = add },
		.flags = RDS_RDMA_SILENT,
	};
	union {
		char buf[CMSG_SPACE(sizeof(args))];
		struct cmsghdr align;
	} ctl;
	struct msghdr msg = {
		.msg_name = (void *)to,
		.msg_namelen = sizeof(*to),
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *cm;

	memset(&ctl, 0, sizeof(ctl));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_RDS;
	cm->cmsg_type = RDS_CMSG_ATOMIC_FADD;
	cm->cmsg_len = CMSG_LEN(sizeof(args));
	memcpy(CMSG_DATA(cm), &args, sizeof(args));
	return sendmsg(fd, &msg, 0);
}

#define HOST_ADDS	400	/* fetch-and-adds of each side */

/* The owner's own atomic increments of the word, beside the RDMA ones. */
static void *host_cpu_adds(void *word)
{
	int i;

	for (i = 0; i < HOST_ADDS; i++)
		__atomic_fetch_add((uint64_t *)word, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* The owner's memory: the MR at HOST_OFF of three whole pages. */
static unsigned char *host_region(unsigned int seed)
{
	unsigned char *map = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_TRUE(map != MAP_FAILED, "mmap: %s", rt_errname(errno));
	fill_pattern(map, 3 * 4096, seed);
	return map;
}

/* Pages this process has pinned (VmPin), or -1. */
static long vm_pin_pages(void)
{
	long kb = vm_pin_kb();

	return kb < 0 ? -1 : kb / 4;
}

/*
 * The distribution's RDS has no RDMA on local delivery: RDS_GET_MR on
 * 127/8 fails, and RDMA to a local address with it.  Ours is right to
 * run it (rds-zerocopy.rst, "Local destinations"): the case skips.
 */
static void host_needs_ours(int fd)
{
	unsigned char buf[64];
	uint64_t cookie = 0;
	int ret;

	if (!modules_are_distro())
		return;
	ret = rds_get_mr(fd, buf, sizeof(buf), &cookie);
	EXPECT_TRUE(ret < 0, "distribution: RDS_GET_MR on 127.0.0.1 worked");
	rt_skip("distribution: no RDMA on local delivery (RDS_GET_MR on 127/8: %s)",
		rt_errname(-ret));
}

/*
 * RDMA between two sockets of this host, with no device: RDS_GET_MR on
 * 127.0.0.1 gives a local key, charged to RLIMIT_MEMLOCK (VmPin) until
 * RDS_FREE_MR; a WRITE and a READ from a socket on 127.0.0.2 move
 * exactly the bytes asked for, before their ACK arrives, each with a
 * SUCCESS notification; fetch-and-adds on a word of the MR lose none of
 * the owner's own atomic increments of it; a READ past the end of the
 * MR fails with REMOTE_ERROR, touches nothing and sends no ACK; after
 * RDS_FREE_MR with RDS_RDMA_INVALIDATE the key is dead.
 */
void test_rdma_local_copy(void)
{
	struct sockaddr_in own, ini;
	unsigned char *map, *want, *buf = xmalloc(HOST_LEN);
	uint64_t cookie = 0;
	long pin;
	int fo, fi;
	char ack[8];

	fo = rds_bound(addr_lo, 0, &own);
	host_needs_ours(fo);
	fi = rds_bound(in_addr_of("127.0.0.2"), 0, &ini);
	map = host_region(11);
	want = xmalloc(3 * 4096);
	memcpy(want, map, 3 * 4096);

	pin = vm_pin_pages();
	ASSERT_EQ(rds_get_mr(fo, map + HOST_OFF, HOST_LEN, &cookie), 0);
	EXPECT_NE(cookie, 0);
	EXPECT_EQ(cookie >> 32, HOST_OFF);
	if (pin >= 0)
		EXPECT_EQ(vm_pin_pages() - pin, 3);

	/* WRITE 5000 bytes at 300 of the MR; the ACK after the bytes */
	fill_pattern(buf, 5000, 12);
	EXPECT_EQ(host_rdma(fi, &own, cookie, 300, buf, 5000, 1, 1),
		  RDS_RDMA_SUCCESS);
	memcpy(want + HOST_OFF + 300, buf, 5000);
	EXPECT_EQ(recv(fo, ack, sizeof(ack), MSG_DONTWAIT), 3);
	EXPECT_EQ(memcmp(map, want, 3 * 4096), 0);

	/* READ 7000 bytes from 1 of the MR */
	memset(buf, 0, HOST_LEN);
	EXPECT_EQ(host_rdma(fi, &own, cookie, 1, buf, 7000, 0, 2),
		  RDS_RDMA_SUCCESS);
	EXPECT_EQ(memcmp(buf, map + HOST_OFF + 1, 7000), 0);
	EXPECT_EQ(recv(fo, ack, sizeof(ack), MSG_DONTWAIT), 3);

	/*
	 * fetch-and-add on the word at 4 of the MR (104 of the page),
	 * while the owner increments it with its CPU: none is lost
	 */
	{
		uint64_t zero = 0, prior, word;
		pthread_t t;
		int i, ok = 1;

		memcpy(map + HOST_OFF + 4, &zero, sizeof(zero));
		ASSERT_EQ(pthread_create(&t, NULL, host_cpu_adds,
					 map + HOST_OFF + 4), 0);
		for (i = 0; i < HOST_ADDS && ok; i++)
			ok = EXPECT_SYS_OK(host_fadd(fi, &own, cookie, 4,
						     &prior, 1 << 20)) >= 0;
		ASSERT_EQ(pthread_join(t, NULL), 0);
		memcpy(&word, map + HOST_OFF + 4, sizeof(word));
		EXPECT_EQ(word, (uint64_t)HOST_ADDS << 20 | HOST_ADDS);
		memcpy(want + HOST_OFF + 4, &word, sizeof(word));
	}

	/* one byte past the end: nothing moves, no ACK */
	fill_pattern(buf, HOST_LEN, 13);
	EXPECT_EQ(host_rdma(fi, &own, cookie, HOST_LEN - 15, buf, 16, 1,
			    3), RDS_RDMA_REMOTE_ERROR);
	EXPECT_EQ(memcmp(map, want, 3 * 4096), 0);
	EXPECT_SYS_ERR(recv(fo, ack, sizeof(ack), MSG_DONTWAIT), EAGAIN);

	/* invalidated: dead for the next one, and the charge is back */
	EXPECT_EQ(rds_free_mr(fo, cookie, RDS_RDMA_INVALIDATE), 0);
	EXPECT_EQ(host_rdma(fi, &own, cookie, 0, buf, 8, 1, 4),
		  RDS_RDMA_REMOTE_ERROR);
	EXPECT_EQ(memcmp(map, want, 3 * 4096), 0);
	if (pin >= 0)
		EXPECT_EQ(vm_pin_pages(), pin);
	close(fi);
	close(fo);
	munmap(map, 3 * 4096);
	free(want);
	free(buf);
}

/* Into a new network namespace, its loopback up.  0, or an errno. */
static int host_new_netns(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd, ret = 0;

	if (unshare(CLONE_NEWNET))
		return errno;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		ret = errno;
	ifr.ifr_flags |= IFF_UP;
	if (!ret && ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		ret = errno;
	close(fd);
	return ret;
}

/*
 * A child, as uid NOBODY_UID (after entering a new namespace if
 * @netns): its RDMA WRITEs with @cookie and with keys near it to *@own
 * must end @want (real) and REMOTE_ERROR (guessed); and RDS_GET_MR over
 * its RLIMIT_MEMLOCK of one page fails with ENOMEM.  Exit status: 0, or
 * the number of the check that failed.
 */
static int host_child(const struct sockaddr_in *own, uint64_t cookie,
		      int netns, int want)
{
	unsigned char *buf = xmalloc(HOST_LEN);
	struct rlimit one = { 4096, 4096 };
	uint64_t off = cookie >> 32, c;
	int fd, i;

	if (netns && host_new_netns())
		return 1;
	if (setrlimit(RLIMIT_MEMLOCK, &one) ||
	    setresgid(NOBODY_UID, NOBODY_UID, NOBODY_UID) ||
	    setresuid(NOBODY_UID, NOBODY_UID, NOBODY_UID))
		return 2;
	fd = rds_bound_at(in_addr_of(netns ? "127.0.0.1" : "127.0.0.3"), 0,
			  NULL, RCV_TIMEOUT_MS);
	if (fd < 0)
		return 3;
	fill_pattern(buf, HOST_LEN, 21);
	/* guessed: the neighbours of the key, then random ones */
	for (i = 0; i < 40; i++) {
		c = i < 8 ? cookie ^ (1ULL << i) : (uint64_t)random() | off << 32;
		if ((uint32_t)c == (uint32_t)cookie)
			continue;
		if (host_rdma(fd, own, c, 0, buf, 64, 1, 100 + i) !=
		    RDS_RDMA_REMOTE_ERROR)
			return 4;
	}
	if (host_rdma(fd, own, cookie, 64, buf, 64, 1, 99) != want)
		return 5;
	if (rds_get_mr(fd, buf, HOST_LEN, &c) != -ENOMEM)
		return 6;
	return 0;
}

/*
 * Who reaches the MR of a local key.  An unprivileged user in the same
 * namespace who was told the cookie reaches it as a peer over the wire
 * would: the cookie is the capability, as an rkey is.  Keys guessed
 * near it or at random fail (REMOTE_ERROR).  In another namespace even
 * the right cookie names nothing: its 127.0.0.1 is another address.  An
 * unprivileged user's RDS_GET_MR is charged to its RLIMIT_MEMLOCK.
 */
void test_rdma_local_keys(void)
{
	struct sockaddr_in own;
	unsigned char *map, *want;
	uint64_t cookie = 0;
	int fo, k, st;
	pid_t pid;

	if (geteuid())
		rt_skip("needs root to become another user");
	fo = rds_bound(addr_lo, 0, &own);
	host_needs_ours(fo);
	map = host_region(31);
	want = xmalloc(3 * 4096);
	memcpy(want, map, 3 * 4096);
	ASSERT_EQ(rds_get_mr(fo, map + HOST_OFF, HOST_LEN, &cookie), 0);

	for (k = 0; k < 2; k++) {
		pid = fork();
		ASSERT_TRUE(pid >= 0, "fork: %s", rt_errname(errno));
		if (!pid)
			_exit(host_child(&own, cookie, k,
					 k ? RDS_RDMA_REMOTE_ERROR :
					     RDS_RDMA_SUCCESS));
		ASSERT_EQ(waitpid(pid, &st, 0), pid);
		EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st),
			    "%s namespace: child check %d failed",
			    k ? "another" : "the same",
			    WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}
	/* only the same namespace's WRITE with the cookie, 64 bytes at 64 */
	fill_pattern(want + HOST_OFF + 64, 64, 21);
	EXPECT_EQ(memcmp(map, want, 3 * 4096), 0);
	close(fo);
	munmap(map, 3 * 4096);
	free(want);
}
