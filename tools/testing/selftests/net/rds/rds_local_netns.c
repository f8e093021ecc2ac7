// SPDX-License-Identifier: GPL-2.0
/*
 * rds_local_netns.c - RDS in network namespaces: what each namespace sees
 * of the others, and what a namespace other than init_net gets.
 *
 * A case runs in its own process: it moves that process into a new
 * namespace (unshare(CLONE_NEWNET)) and back (setns() with the namespace
 * it came from), and a socket stays in the namespace it was made in.
 */
#include "rds_local.h"

#include <net/if.h>
#include <sched.h>

/* The namespace this process is in, open; -1 and a failure if not. */
static int netns_here(void)
{
	int fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		rt_fail("open /proc/self/ns/net: %s", rt_errname(errno));
	return fd;
}

/* Into a new namespace, with its loopback interface up. */
static void netns_enter_new(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd;

	if (unshare(CLONE_NEWNET)) {
		if (errno == EPERM)
			rt_skip("unshare(CLONE_NEWNET) needs CAP_SYS_ADMIN");
		ASSERT_SYS_OK(-1);
	}
	fd = ASSERT_SYS_OK(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
	ASSERT_SYS_OK(ioctl(fd, SIOCGIFFLAGS, &ifr));
	ifr.ifr_flags |= IFF_UP;
	ASSERT_SYS_OK(ioctl(fd, SIOCSIFFLAGS, &ifr));
	close(fd);
}

/* Back into the namespace @nsfd names. */
static void netns_leave(int nsfd)
{
	ASSERT_SYS_OK(setns(nsfd, CLONE_NEWNET));
}

/* Rows of table @name, as @fd's namespace sees it. */
static int info_rows(int fd, int name)
{
	void *buf;
	socklen_t len;
	long row;

	row = rds_info_read(fd, name, &buf, &len);
	free(buf);
	if (row < 0) {
		rt_fail("RDS_INFO %d: %s", name, rt_errname(errno));
		return -1;
	}
	return row ? (int)(len / row) : 0;
}

/*
 * Two namespaces share nothing: the same address and port bind in both,
 * a message to 127.0.0.1 stays in the sender's namespace, the info
 * tables of one list none of the other's sockets, and an address of
 * another namespace is no local address (EADDRNOTAVAIL).
 */
void test_netns_isolation(void)
{
	struct sockaddr_in a, main_sin;
	int home, fa, fb, fc, ret;

	home = netns_here();
	ASSERT_TRUE(home >= 0, "no namespace to come back to");
	fa = rds_bound(addr_lo, 0, &a);		/* stays in this namespace */
	netns_enter_new();

	fb = rds_socket();
	set_rcvtimeo(fb, RCV_TIMEOUT_MS);
	ret = bind(fb, (struct sockaddr *)&a, sizeof(a)) ? errno : 0;
	/*
	 * The distribution's bind table is one for all namespaces: the
	 * port of another namespace is taken.  Ours keeps them apart, as
	 * every other socket family does.
	 */
	if (ret == EADDRINUSE && modules_are_distro())
		rt_skip("the distribution's bind table is shared by all namespaces (EADDRINUSE)");
	ASSERT_EQ(ret, 0);
	EXPECT_EQ(info_rows(fb, RDS_INFO_SOCKETS), 1);
	send_pattern(fb, 100, 7, &a);
	recv_pattern(fb, 100, 7, &a);
	if (!main_is_lo) {
		fc = rds_socket();
		sin_set(&main_sin, addr_main, 0);
		EXPECT_SYS_ERR(bind(fc, (struct sockaddr *)&main_sin,
				    sizeof(main_sin)), EADDRNOTAVAIL);
		close(fc);
	}

	/* The first namespace's socket got nothing, and sees only itself. */
	expect_empty(fa);
	send_pattern(fa, 200, 8, &a);
	recv_pattern(fa, 200, 8, &a);
	expect_empty(fb);
	close(fb);
	netns_leave(home);
	EXPECT_EQ(info_rows(fa, RDS_INFO_SOCKETS), 1);
	close(fa);
	close(home);
}

#define NETNS_ROUNDS	30

/*
 * What RDS gives a namespace other than the first (init_net): local
 * delivery only.  The IB transport lives in init_net, as the
 * distribution's does, and the bench's soft-RoCE cannot carry a namespace
 * other than init_net on these kernels (rxe's UDP socket is in init_net),
 * so there:
 *  - SO_RDS_TRANSPORT RDS_TRANS_IB fails with EPROTOTYPE, as on the
 *    distribution;
 *  - a message for another host fails with ENETUNREACH, at once, and no
 *    connection is made;
 *  - local messages work, in each of NETNS_ROUNDS namespaces made and left
 *    in turn, and every socket made there is released.
 */
void test_netns_limits(void)
{
	long long made = 0, released = 0;
	struct sockaddr_in me, to;
	int home, fd, ns_fd, i, ret, ib = RDS_TRANS_IB;
	socklen_t len;

	home = netns_here();
	ASSERT_TRUE(home >= 0, "no namespace to come back to");
	fd = rds_socket();
	if (!modules_are_distro()) {
		made = rds_counter(fd, "sock_created");
		released = rds_counter(fd, "sock_released");
	}
	for (i = 0; i < NETNS_ROUNDS; i++) {
		netns_enter_new();
		ns_fd = rds_socket();
		set_rcvtimeo(ns_fd, RCV_TIMEOUT_MS);
		sin_set(&me, addr_lo, 0);
		ret = bind(ns_fd, (struct sockaddr *)&me, sizeof(me));
		if (ret && modules_are_distro() && errno == EADDRNOTAVAIL)
			rt_skip("the distribution's RDS binds no address outside init_net");
		ASSERT_SYS_OK(ret);
		len = sizeof(me);
		EXPECT_SYS_OK(getsockname(ns_fd, (struct sockaddr *)&me, &len));
		send_pattern(ns_fd, 64, i, &me);
		recv_pattern(ns_fd, 64, i, &me);
		if (!i && !modules_are_distro()) {
			sin_set(&to, in_addr_of("192.0.2.1"), 4000);
			EXPECT_SYS_ERR(sendto(ns_fd, "x", 1, MSG_DONTWAIT,
					      (struct sockaddr *)&to,
					      sizeof(to)), ENETUNREACH);
			EXPECT_EQ(info_rows(ns_fd, RDS_INFO_CONNECTIONS), 0);
		}
		if (!i) {
			close(ns_fd);
			ns_fd = rds_socket();
			EXPECT_SYS_ERR(setsockopt(ns_fd, SOL_RDS, SO_RDS_TRANSPORT,
						  &ib, sizeof(ib)), EPROTOTYPE);
		}
		close(ns_fd);
		netns_leave(home);
	}
	if (!modules_are_distro()) {
		EXPECT_EQ(rds_counter(fd, "sock_created") - made,
			  NETNS_ROUNDS + 1);
		EXPECT_EQ(rds_counter(fd, "sock_released") - released,
			  NETNS_ROUNDS + 1);
	}
	close(fd);
	close(home);
}
