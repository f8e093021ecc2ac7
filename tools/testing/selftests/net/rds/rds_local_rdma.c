// SPDX-License-Identifier: GPL-2.0
/*
 * rds_local_rdma.c - rds_local's cases of RDMA notifications.
 */
#include "rds_local.h"

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
	union {
		char buf[CMSG_SPACE(sizeof(args))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { (void *)"rdma", 4 };
	struct msghdr msg = {
		.msg_name = (void *)to,
		.msg_namelen = sizeof(*to),
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl.buf,
		.msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *cm;

	memset(&ctl, 0, sizeof(ctl));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_RDS;
	cm->cmsg_type = RDS_CMSG_RDMA_ARGS;
	cm->cmsg_len = CMSG_LEN(sizeof(args));
	memcpy(CMSG_DATA(cm), &args, sizeof(args));
	return sendmsg(fd, &msg, flags);
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
