// SPDX-License-Identifier: GPL-2.0
/*
 * rds_mr - limits of RDMA memory registration on one host: RLIMIT_MEMLOCK,
 * the size limit, the pool size, and what close and process death leave
 * pinned; operation ids and barriers (RDS_CMSG_OP_ID, RDS_OP_BARRIER)
 * for operations that wait for a host that never answers; and what an
 * unprivileged user can and cannot do (unprivileged).  Needs a
 * socket bound to an address of an RDMA device (RDS_ADDR in the bench).
 *
 * The distribution's module cannot register memory before a connection
 * exists (its RDS_GET_MR fails with EOPNOTSUPP or ENODEV), so with it
 * every case that registers reports a skip; with ours (RDS_MODULES) a
 * failed registration fails the case.
 *
 * Usage: rds_mr [-l] [CASE...]
 *   pool_exhausted runs only when named, with the IB module loaded with
 *   fmr_pool_size=N and RDS_MR_POOL=N in the environment
 *   (rds_mr_pool.sh does that); it is not among the cases run by
 *   default.
 * Environment: RDS_ADDR, RDS_MODULES, RDS_MR_POOL.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/time.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <linux/rds.h>

#include "rds_test.h"
#include "rds_sock_util.h"

#ifndef AF_RDS
#define AF_RDS 21
#endif

#define PAGE		4096
#define NOBODY		65534

static struct in_addr addr;

/* A socket bound to the RDMA address, or the case ends as skipped. */
static int bound_socket(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr = addr };
	int fd = socket(AF_RDS, SOCK_SEQPACKET, 0);

	ASSERT_TRUE(fd >= 0, "socket: %s", rt_errname(errno));
	ASSERT_TRUE(!bind(fd, (struct sockaddr *)&sin, sizeof(sin)),
		    "bind: %s", rt_errname(errno));
	return fd;
}

/* A message to @to carrying @cookie as RDS_CMSG_RDMA_DEST: 0 or -errno. */
static int send_dest(int fd, const struct sockaddr_in *to, uint64_t cookie)
{
	return rds_send_cmsg(fd, to, "dest", 4, RDS_CMSG_RDMA_DEST, &cookie,
			     sizeof(cookie)) < 0 ? -errno : 0;
}

static void *pages(size_t n)
{
	void *p = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_TRUE(p != MAP_FAILED, "mmap: %s", rt_errname(errno));
	memset(p, 0x5a, n * PAGE);
	return p;
}

/* Skip the case if this module cannot register right after bind(). */
static void need_registration(void)
{
	int fd = bound_socket();
	uint64_t cookie = 0;
	void *p = pages(1);
	int ret = rds_get_mr(fd, p, PAGE, &cookie);

	if (ret && modules_are_distro())
		rt_skip("the distribution cannot RDS_GET_MR after bind: %s",
			rt_errname(-ret));
	ASSERT_EQ(ret, 0);
	EXPECT_EQ(rds_free_mr(fd, cookie, 0), 0);
	/*
	 * A release without RDS_RDMA_INVALIDATE ends later, in a work
	 * item; close() waits for every release of the socket, so that
	 * the probe's MR is off the counters before the case reads them.
	 */
	close(fd);
	munmap(p, PAGE);
}

/*
 * Pinned pages count against RLIMIT_MEMLOCK for a process without
 * CAP_IPC_LOCK: over it, ENOMEM; a release gives the room back.
 */
static void test_memlock_limit(void)
{
	struct rlimit lim = { 16 * PAGE, 16 * PAGE };
	uint64_t c1 = 0, c2 = 0, c3 = 0;
	int fd = bound_socket();
	void *p = pages(32);

	need_registration();
	ASSERT_TRUE(!setrlimit(RLIMIT_MEMLOCK, &lim), "setrlimit: %s",
		    rt_errname(errno));
	/* Without privileges: no CAP_IPC_LOCK any more. */
	ASSERT_TRUE(!setgid(NOBODY) && !setuid(NOBODY), "setuid: %s",
		    rt_errname(errno));

	EXPECT_EQ(rds_get_mr(fd, p, 17 * PAGE, &c1), -ENOMEM);
	EXPECT_EQ(rds_get_mr(fd, p, 10 * PAGE, &c1), 0);
	EXPECT_EQ(rds_get_mr(fd, (char *)p + 10 * PAGE, 6 * PAGE, &c2), 0);
	/* 16 pages pinned: one more is over the limit. */
	EXPECT_EQ(rds_get_mr(fd, (char *)p + 16 * PAGE, PAGE, &c3), -ENOMEM);
	EXPECT_EQ(rds_free_mr(fd, c1, 0), 0);
	EXPECT_EQ(rds_get_mr(fd, (char *)p + 16 * PAGE, PAGE, &c3), 0);
	/* Close releases the rest: the whole limit is free again. */
	close(fd);
	fd = bound_socket();
	EXPECT_EQ(rds_get_mr(fd, p, 16 * PAGE, &c1), 0);
	close(fd);
}

/*
 * A region may be 1 MiB (fmr_message_size) long at any alignment, or
 * 1 MiB + 4 KiB from a page boundary (257 pages, as the distribution's),
 * and not one byte or page more; a bad address is EFAULT.
 */
static void test_size_limit(void)
{
	int fd = bound_socket();
	char *p = pages(258);
	uint64_t c = 0;

	need_registration();
	EXPECT_EQ(rds_get_mr(fd, p + 123, 1 << 20, &c), 0);
	EXPECT_EQ(rds_free_mr(fd, c, 0), 0);
	EXPECT_EQ(rds_get_mr(fd, p, (1 << 20) + PAGE, &c), 0);
	EXPECT_EQ(rds_free_mr(fd, c, 0), 0);
	EXPECT_EQ(rds_get_mr(fd, p, (1 << 20) + PAGE + 1, &c), -EINVAL);
	/* Within the bytes but over 257 pages at this offset. */
	EXPECT_EQ(rds_get_mr(fd, p + 123, (1 << 20) + 4000, &c), -EINVAL);
	EXPECT_EQ(rds_get_mr(fd, p, 0, &c), -EINVAL);
	EXPECT_EQ(rds_get_mr(fd, (void *)16, PAGE, &c), -EFAULT);
	EXPECT_EQ(rds_get_mr(fd, p, PAGE, (uint64_t *)16), -EFAULT);
	/* That cookie was never handed out: nothing is left to free. */
	close(fd);
}

/*
 * A registration pins its pages for a peer's WRITE (FOLL_WRITE), so memory
 * the caller may not write is refused with EFAULT, whole: a read-only or
 * PROT_NONE mapping, a read-only file mapped shared (a peer must not
 * write into the page cache of a file the caller opened read-only), a
 * range whose last page only is read-only, and a kernel address.  A
 * refused range leaves nothing pinned (VmPin), and the socket still
 * registers good memory afterwards.
 */
static void test_bad_ranges(void)
{
	char path[] = "/tmp/rds_mr_roXXXXXX";
	int fd = bound_socket();
	uint64_t c = 0;
	long pin0;
	char *rw, *ro, *none, *file;
	int ffd;

	need_registration();
	pin0 = vm_pin_kb();
	ASSERT_TRUE(pin0 >= 0, "no VmPin in /proc/self/status");
	rw = pages(3);
	ro = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	none = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(ro != MAP_FAILED && none != MAP_FAILED, "mmap: %s",
		    rt_errname(errno));
	ffd = mkstemp(path);
	ASSERT_TRUE(ffd >= 0, "mkstemp: %s", rt_errname(errno));
	ASSERT_TRUE(!ftruncate(ffd, PAGE), "ftruncate: %s", rt_errname(errno));
	close(ffd);
	ffd = open(path, O_RDONLY);
	ASSERT_TRUE(ffd >= 0, "open: %s", rt_errname(errno));
	file = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, ffd, 0);
	ASSERT_TRUE(file != MAP_FAILED, "mmap file: %s", rt_errname(errno));
	unlink(path);

	EXPECT_EQ(rds_get_mr(fd, ro, PAGE, &c), -EFAULT);
	EXPECT_EQ(rds_get_mr(fd, ro + 100, 200, &c), -EFAULT);
	EXPECT_EQ(rds_get_mr(fd, none, PAGE, &c), -EFAULT);
	EXPECT_EQ(rds_get_mr(fd, file, PAGE, &c), -EFAULT);
	EXPECT_EQ(rds_get_mr(fd, (void *)0xffff888000000000UL, PAGE, &c),
		  -EFAULT);
	/* Two writable pages, then a read-only one: none of them stays. */
	ASSERT_TRUE(!mprotect(rw + 2 * PAGE, PAGE, PROT_READ), "mprotect: %s",
		    rt_errname(errno));
	EXPECT_EQ(rds_get_mr(fd, rw + 10, 3 * PAGE - 20, &c), -EFAULT);
	EXPECT_EQ(vm_pin_kb(), pin0);
	/* The writable part alone registers, and is charged. */
	EXPECT_EQ(rds_get_mr(fd, rw + 10, 2 * PAGE - 20, &c), 0);
	EXPECT_EQ(vm_pin_kb(), pin0 + 2 * PAGE / 1024);
	EXPECT_EQ(rds_free_mr(fd, c, RDS_RDMA_INVALIDATE), 0);
	close(fd);
	EXPECT_EQ(vm_pin_kb(), pin0);
	munmap(file, PAGE);
	close(ffd);
	munmap(none, PAGE);
	munmap(ro, PAGE);
	munmap(rw, 3 * PAGE);
}

/* With fmr_pool_size=N, MR N + 1 gets EAGAIN until one is released. */
static void test_pool_exhausted(void)
{
	const char *env = getenv("RDS_MR_POOL");
	int n = env ? atoi(env) : 0, fd, i;
	uint64_t *c;
	char *p;

	ASSERT_TRUE(n > 0 && n <= 64,
		    "needs fmr_pool_size=N and RDS_MR_POOL=N (N <= 64)");
	fd = bound_socket();
	need_registration();
	c = calloc(n + 1, sizeof(*c));
	p = pages(n + 1);
	for (i = 0; i < n; i++)
		EXPECT_EQ(rds_get_mr(fd, p + i * PAGE, PAGE, &c[i]), 0);
	EXPECT_EQ(rds_get_mr(fd, p + n * PAGE, PAGE, &c[n]), -EAGAIN);
	EXPECT_EQ(rds_free_mr(fd, c[0], 0), 0);
	EXPECT_EQ(rds_get_mr(fd, p + n * PAGE, PAGE, &c[n]), 0);
	close(fd);
	free(c);
}

/*
 * A process killed with memory registered leaves nothing behind: by the
 * time its parent sees it dead, every MR it made was released (counters
 * rdma_mr_created and rdma_mr_released move together).
 */
static void test_killed_owner(void)
{
	int fd = bound_socket(), status, sync[2];
	long long made, freed;
	pid_t pid;
	char c;

	need_registration();
	made = rds_counter(fd, "rdma_mr_created");
	freed = rds_counter(fd, "rdma_mr_released");
	ASSERT_TRUE(made >= 0 && freed >= 0, "no rdma_mr_* counters");
	ASSERT_TRUE(!pipe(sync), "pipe: %s", rt_errname(errno));

	pid = fork();
	ASSERT_TRUE(pid >= 0, "fork: %s", rt_errname(errno));
	if (pid == 0) {
		int cfd = bound_socket(), i;
		char *p = pages(64);
		uint64_t ck;

		for (i = 0; i < 8; i++)
			if (rds_get_mr(cfd, p + i * 8 * PAGE, 8 * PAGE, &ck))
				_exit(1);
		if (write(sync[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(sync[1]);
	ASSERT_EQ(read(sync[0], &c, 1), 1);
	EXPECT_EQ(rds_counter(fd, "rdma_mr_created") - made, 8);
	kill(pid, SIGKILL);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFSIGNALED(status), "the child was not killed");
	EXPECT_EQ(rds_counter(fd, "rdma_mr_released") - freed, 8);
	close(sync[0]);
	close(fd);
}

/*
 * Keys of released MRs come back rarely and unpredictably: cycling
 * RDS_GET_MR / RDS_FREE_MR, an MR is registered again only after at
 * least KEY_GAP others (the pool reuses the oldest free MR), and its key
 * byte does not just count up.  A peer holding an old cookie cannot walk
 * one MR through its 256 keys, or guess the next.
 */
#define KEY_CYCLES	160
#define KEY_GAP		32

static void test_key_reuse(void)
{
	uint32_t key[KEY_CYCLES];
	int fd = bound_socket(), i, j, reused = 0, stepped = 0;
	char *p = pages(1);

	need_registration();
	for (i = 0; i < KEY_CYCLES; i++) {
		uint64_t cookie;
		struct rds_free_mr_args a = { 0, i & 1 ? RDS_RDMA_INVALIDATE : 0 };

		ASSERT_EQ(rds_get_mr(fd, p, PAGE, &cookie), 0);
		key[i] = (uint32_t)cookie;
		a.cookie = cookie;
		ASSERT_TRUE(!setsockopt(fd, SOL_RDS, RDS_FREE_MR, &a, sizeof(a)),
			    "RDS_FREE_MR: %s", rt_errname(errno));
	}
	for (i = 0; i < KEY_CYCLES; i++) {
		for (j = i + 1; j < KEY_CYCLES; j++) {
			if (key[i] >> 8 != key[j] >> 8)
				continue;
			if (j - i < KEY_GAP)
				rt_fail("MR %#x registered again after %d others (keys %#x, %#x)",
					key[i] >> 8, j - i - 1, key[i], key[j]);
			reused++;
			if ((uint8_t)(key[i] + 1) == (uint8_t)key[j])
				stepped++;
			break;
		}
	}
	rt_diag("%d registrations reused an MR, %d of them with the next key byte",
		reused, stepped);
	EXPECT_TRUE(reused > 0, "no MR was reused in %d cycles", KEY_CYCLES);
	/* Random bytes: each reuse has a 1 in 255 chance of the next one. */
	EXPECT_TRUE(stepped < reused / 2 + 1,
		    "key bytes count up: %d of %d reuses", stepped, reused);
	close(fd);
	munmap(p, PAGE);
}

/*
 * A registration QP that broke comes back: with inject_reg_qp_error set,
 * the next registration fails with EIO (an invalid work request moved
 * the QP to the error state), and registrations work again shortly
 * after, counted in ib_mr_reg_qp_recovered.  Our module only.
 */
#define REG_FAULT "/sys/module/rds_zc_ib/parameters/inject_reg_qp_error"

static void test_reg_qp_recovery(void)
{
	int fd, ret = -1, tries = 0;
	long long recovered;
	uint64_t cookie;
	long long until;
	FILE *f;
	char *p;

	if (modules_are_distro())
		rt_skip("the distribution has no registration QP to fail (%s)",
			REG_FAULT);
	f = fopen(REG_FAULT, "w");
	ASSERT_TRUE(f, "%s: %s", REG_FAULT, rt_errname(errno));
	fd = bound_socket();
	p = pages(1);
	need_registration();
	recovered = rds_counter(fd, "ib_mr_reg_qp_recovered");
	ASSERT_TRUE(recovered >= 0, "no ib_mr_reg_qp_recovered counter");
	ASSERT_TRUE(fputs("1", f) >= 0 && !fclose(f), "write %s: %s",
		    REG_FAULT, rt_errname(errno));

	EXPECT_EQ(rds_get_mr(fd, p, PAGE, &cookie), -EIO);
	for (until = rt_now_ms() + 10000; rt_now_ms() < until; tries++) {
		ret = rds_get_mr(fd, p, PAGE, &cookie);
		if (ret != -EIO)
			break;
		rt_sleep_ms(20);
	}
	EXPECT_EQ(ret, 0);
	rt_diag("registration worked again after %d failed tries", tries);
	if (!ret)
		EXPECT_EQ(rds_free_mr(fd, cookie, 0), 0);
	EXPECT_EQ(rds_counter(fd, "ib_mr_reg_qp_recovered") - recovered, 1);
	close(fd);
	munmap(p, PAGE);
}

/* An address nobody has: what is sent there stays queued. */
static struct sockaddr_in silent_host(void)
{
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(4000) };

	inet_pton(AF_INET, "10.0.0.250", &to.sin_addr);
	return to;
}

/*
 * The local pages of an RDMA operation count against RLIMIT_MEMLOCK for
 * as long as the operation lives: its message may wait for a connection
 * that never comes.  Sent to an address nobody has, an 8-page operation
 * stays queued, and a 9-page one on top of it is over a 16-page limit
 * (ENOMEM); closing the socket gives the room back.  Without the charge a
 * loop of such sends pinned memory without bound.  The distribution does
 * not charge these pages: our modules only.
 */
/*
 * An RDMA WRITE of [p, p + len) to port @port of the silent host,
 * non-blocking; with @id, RDS_CMSG_OP_ID asks for its id there.  Return:
 * 0 or -errno.
 */
static int send_rdma_to(int fd, void *p, size_t len, unsigned short port,
			uint64_t *id)
{
	struct sockaddr_in to = silent_host();
	struct rds_iovec local = { (uintptr_t)p, len };
	struct rds_rdma_args a = {
		.cookie = 0x1234,
		.remote_vec = { 0, len },
		.local_vec_addr = (uintptr_t)&local,
		.nr_local = 1,
		.flags = RDS_RDMA_READWRITE,
	};
	uint64_t where = (uintptr_t)id;
	char cbuf[CMSG_SPACE(sizeof(a)) + CMSG_SPACE(sizeof(where))] = { 0 };
	struct msghdr m = {
		.msg_name = &to, .msg_namelen = sizeof(to),
		.msg_control = cbuf,
		.msg_controllen = id ? sizeof(cbuf) : CMSG_SPACE(sizeof(a)),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	to.sin_port = htons(port);
	c->cmsg_level = SOL_RDS;
	c->cmsg_type = RDS_CMSG_RDMA_ARGS;
	c->cmsg_len = CMSG_LEN(sizeof(a));
	memcpy(CMSG_DATA(c), &a, sizeof(a));
	if (id) {
		c = CMSG_NXTHDR(&m, c);
		c->cmsg_level = SOL_RDS;
		c->cmsg_type = RDS_CMSG_OP_ID;
		c->cmsg_len = CMSG_LEN(sizeof(where));
		memcpy(CMSG_DATA(c), &where, sizeof(where));
	}
	return sendmsg(fd, &m, MSG_DONTWAIT) < 0 ? -errno : 0;
}

static int send_rdma(int fd, void *p, size_t len)
{
	return send_rdma_to(fd, p, len, 4000, NULL);
}

static void test_rdma_op_memlock(void)
{
	struct rlimit lim = { 16 * PAGE, 16 * PAGE };
	int fd = bound_socket();
	char *p = pages(32);

	if (strcmp(getenv("RDS_MODULES") ?: "", "ours"))
		rt_skip("the distribution does not charge an RDMA operation's %s",
			"pages to RLIMIT_MEMLOCK");
	need_registration();
	ASSERT_TRUE(!setrlimit(RLIMIT_MEMLOCK, &lim), "setrlimit: %s",
		    rt_errname(errno));
	ASSERT_TRUE(!setgid(NOBODY) && !setuid(NOBODY), "setuid: %s",
		    rt_errname(errno));

	EXPECT_EQ(send_rdma(fd, p, 17 * PAGE), -ENOMEM);
	EXPECT_EQ(send_rdma(fd, p, 8 * PAGE), 0);
	EXPECT_EQ(send_rdma(fd, p + 8 * PAGE, 9 * PAGE), -ENOMEM);
	close(fd);
	fd = bound_socket();
	EXPECT_EQ(send_rdma(fd, p, 16 * PAGE), 0);
	close(fd);
}

/*
 * RDS_FREE_MR with RDS_RDMA_INVALIDATE of a key that a message on its way
 * carries (RDS_CMSG_RDMA_MAP to a host that never answers) kills the key
 * at once and returns 0 within FREE_MS; the MR is gone from the socket (a
 * second FREE_MR: EINVAL), its page stays pinned and charged while the
 * message holds it, and close gives the charge back (VmPin).  Before, the
 * call waited for the message: for ever, until a signal (EINTR); before
 * that, uninterruptibly.  The distribution invalidates at once, whatever
 * carries the key.
 */
#define FREE_MS	1000

static void on_usr1(int sig)
{
	(void)sig;
}

static void test_invalidate_carried_key(void)
{
	struct sockaddr_in to = silent_host();
	struct sigaction sa = { .sa_handler = on_usr1 };	/* no restart */
	char *p = pages(1);
	uint64_t cookie = 0;
	struct rds_get_mr_args a = {
		.vec = { .addr = (uintptr_t)p, .bytes = PAGE },
		.cookie_addr = (uintptr_t)&cookie,
	};
	char cbuf[CMSG_SPACE(sizeof(a))] = { 0 };
	struct msghdr m = {
		.msg_name = &to, .msg_namelen = sizeof(to),
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	struct rds_free_mr_args f = { .flags = RDS_RDMA_INVALIDATE };
	pid_t parent = getpid(), pid;
	long pin0, t0, took;
	int fd, ret;

	if (strcmp(getenv("RDS_MODULES") ?: "", "ours"))
		rt_skip("the distribution cannot RDS_CMSG_RDMA_MAP without %s",
			"a connection");
	need_registration();
	fd = bound_socket();
	pin0 = vm_pin_kb();
	ASSERT_TRUE(pin0 >= 0, "no VmPin in /proc/self/status");
	c->cmsg_level = SOL_RDS;
	c->cmsg_type = RDS_CMSG_RDMA_MAP;
	c->cmsg_len = CMSG_LEN(sizeof(a));
	memcpy(CMSG_DATA(c), &a, sizeof(a));
	ASSERT_SYS_OK(sendmsg(fd, &m, MSG_DONTWAIT));
	ASSERT_TRUE(cookie != 0, "no cookie from RDS_CMSG_RDMA_MAP");

	/* A signal ends a wait that would last for ever. */
	ASSERT_SYS_OK(sigaction(SIGUSR1, &sa, NULL));
	pid = ASSERT_SYS_OK(fork());
	if (pid == 0) {
		usleep(5 * FREE_MS * 1000);
		kill(parent, SIGUSR1);
		_exit(0);
	}
	f.cookie = cookie;
	t0 = rt_now_ms();
	ret = setsockopt(fd, SOL_RDS, RDS_FREE_MR, &f, sizeof(f));
	EXPECT_EQ(ret ? -errno : 0, 0);
	took = rt_now_ms() - t0;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	EXPECT_TRUE(took < FREE_MS,
		    "RDS_FREE_MR with RDS_RDMA_INVALIDATE of a key a message carries took %ld ms",
		    took);
	EXPECT_EQ(rds_free_mr(fd, cookie, 0), -EINVAL);
	/* The message still holds the MR: its page stays charged. */
	EXPECT_EQ(vm_pin_kb(), pin0 + PAGE / 1024);
	close(fd);	/* withdraws the message: the MR goes */
	EXPECT_EQ(vm_pin_kb(), pin0);
	munmap(p, PAGE);
}

/*
 * Messages queued for a host that never answers are charged to SO_SNDBUF
 * for their descriptor as well as their payload: a loop of empty or
 * one-byte sends meets EAGAIN after a bounded number of them, where
 * payload charging queues without bound (the distribution: one byte per
 * one-byte message, nothing for an empty one).  A descriptor is more than
 * 64 bytes.
 */
static void small_sends(int len)
{
	struct sockaddr_in to = silent_host();
	int fd = bound_socket(), share = 16384, sent = 0, bound;
	socklen_t olen = sizeof(share);

	ASSERT_SYS_OK(setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &share,
				 sizeof(share)));
	ASSERT_SYS_OK(getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &share, &olen));
	share /= 2;
	/* Each costs at least 64 bytes; one more goes in while below. */
	bound = share / 64 + 1;
	while (sendto(fd, "x", len, MSG_DONTWAIT, (void *)&to,
		      sizeof(to)) == len) {
		if (++sent > bound)
			break;
	}
	EXPECT_TRUE(sent <= bound,
		    "%d sends of %d bytes queued with SO_SNDBUF share %d",
		    sent, len, share);
	if (sent <= bound)
		EXPECT_EQ(errno, EAGAIN);
	close(fd);
}

static void test_small_sends_bounded(void)
{
	if (strcmp(getenv("RDS_MODULES") ?: "", "ours"))
		rt_skip("the distribution charges a message's payload only, %s",
			"so empty ones queue without bound");
	small_sends(0);
	small_sends(1);
}

/*
 * An unprivileged user (uid and gid 65534, no capabilities) does what
 * root does: bind, a message to itself, RDS_GET_MR, RDMA_DEST with its
 * own cookie, RDS_FREE_MR, the info tables.  And it cannot free or name
 * another socket's key (EINVAL), pin past RLIMIT_MEMLOCK (ENOMEM, also
 * by memlock_limit) or queue past SO_SNDBUF (EAGAIN, small_sends()).
 */
static void test_unprivileged(void)
{
	struct rlimit lim = { 16 * PAGE, 16 * PAGE };
	struct sockaddr_in to = silent_host(), self;
	socklen_t slen = sizeof(self);
	uint64_t ca = 0, cb = 0, cc = 0;
	char *p = pages(24), buf[32];
	int a, b;

	need_registration();
	ASSERT_TRUE(!setrlimit(RLIMIT_MEMLOCK, &lim), "setrlimit: %s",
		    rt_errname(errno));
	ASSERT_TRUE(!setgroups(0, NULL) && !setgid(NOBODY) && !setuid(NOBODY),
		    "dropping privileges: %s", rt_errname(errno));
	ASSERT_TRUE(geteuid() == NOBODY, "still uid %d", (int)geteuid());

	a = bound_socket();
	b = bound_socket();
	/* what root does */
	ASSERT_SYS_OK(getsockname(a, (struct sockaddr *)&self, &slen));
	EXPECT_EQ(sendto(a, "to myself", 9, 0, (struct sockaddr *)&self,
			 sizeof(self)), 9);
	memset(buf, 0, sizeof(buf));
	set_rcvtimeo(a, 5000);
	EXPECT_EQ(recv(a, buf, sizeof(buf), 0), 9);
	EXPECT_TRUE(!memcmp(buf, "to myself", 9), "received '%s'", buf);
	EXPECT_EQ(rds_get_mr(a, p, 4 * PAGE, &ca), 0);
	EXPECT_EQ(rds_get_mr(b, p + 4 * PAGE, 4 * PAGE, &cb), 0);
	EXPECT_EQ(send_dest(a, &to, ca), 0);
	EXPECT_TRUE(rds_counter(a, "sock_created") > 0,
		    "RDS_INFO_COUNTERS not readable");
	/* what nobody may do to another socket's key */
	EXPECT_EQ(rds_free_mr(b, ca, 0), -EINVAL);
	EXPECT_EQ(send_dest(b, &to, ca), -EINVAL);
	EXPECT_EQ(rds_free_mr(a, cb, 0), -EINVAL);
	/* nor pin past its limit: 8 pinned, 9 more is over 16 */
	EXPECT_EQ(rds_get_mr(a, p + 8 * PAGE, 9 * PAGE, &cc), -ENOMEM);
	EXPECT_EQ(rds_free_mr(a, ca, 0), 0);
	EXPECT_EQ(rds_free_mr(b, cb, 0), 0);
	close(a);
	close(b);
	/* nor queue past its send buffer */
	small_sends(0);
}

/*
 * RDS_OP_BARRIER of port @port of @host (port 0: all of them; host NULL:
 * every destination), waiting for @wait: 0 with the barrier in *done, or
 * -errno.
 */
static int barrier(int fd, const char *host, unsigned short port,
		   uint64_t wait, uint64_t *done)
{
	struct rds_op_barrier b = { .wait_id = wait, .done_id = ~0ULL };
	struct sockaddr_in *sin = (struct sockaddr_in *)&b.dest;
	socklen_t len = sizeof(b);

	if (host) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		inet_pton(AF_INET, host, &sin->sin_addr);
	}
	if (getsockopt(fd, SOL_RDS, RDS_OP_BARRIER, &b, &len))
		return -errno;
	EXPECT_EQ(len, sizeof(b));
	*done = b.done_id;
	return 0;
}

static uint64_t barrier_now(int fd, const char *host, unsigned short port)
{
	uint64_t done = ~0ULL;

	EXPECT_EQ(barrier(fd, host, port, 0, &done), 0);
	return done;
}

/* A message with RDS_CMSG_OP_ID and no operation: 0 or -errno. */
static int send_op_id_only(int fd, uint64_t *id)
{
	struct sockaddr_in to = silent_host();
	uint64_t where = (uintptr_t)id;
	char cbuf[CMSG_SPACE(sizeof(where))] = { 0 };
	struct msghdr m = {
		.msg_name = &to, .msg_namelen = sizeof(to),
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	c->cmsg_level = SOL_RDS;
	c->cmsg_type = RDS_CMSG_OP_ID;
	c->cmsg_len = CMSG_LEN(sizeof(where));
	memcpy(CMSG_DATA(c), &where, sizeof(where));
	return sendmsg(fd, &m, MSG_DONTWAIT) < 0 ? -errno : 0;
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* Let the barrier wait of @fd end by RDS_CANCEL_SENT_TO after @ms. */
static pid_t cancel_later(int fd, unsigned short port, int ms)
{
	struct sockaddr_in to = silent_host();
	pid_t pid = fork();

	ASSERT_TRUE(pid >= 0, "fork: %s", rt_errname(errno));
	if (pid == 0) {
		rt_sleep_ms(ms);
		to.sin_port = htons(port);
		_exit(setsockopt(fd, SOL_RDS, RDS_CANCEL_SENT_TO, &to,
				 sizeof(to)) ? 1 : 0);
	}
	return pid;
}

/*
 * Operation ids and barriers with operations that never leave: RDMAs
 * queued for the silent host's ports 4000 and 4001 get ids 1, 2, 3 ...;
 * each destination's barrier stops below its oldest one, another host's
 * is the last id; a wait for an undone id gives EAGAIN when non-blocking
 * or after SO_RCVTIMEO, EINTR on a signal, and ends when RDS_CANCEL_SENT_TO
 * ends the operations (CANCELED), which also sets POLLRDBAND until the
 * next barrier call.  Bad arguments: EINVAL, EFAULT.
 */
static void test_op_barrier(void)
{
	struct rds_op_barrier b = { .dest.ss_family = AF_INET6 };
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { .it_value = { 0, 200000 } };
	struct timeval tv = { 0, 300000 };
	struct pollfd pfd;
	uint64_t id[4] = { 0 }, done;
	socklen_t len = sizeof(b);
	long long t0;
	char *p = pages(1);
	int fd, st;
	pid_t pid;

	if (strcmp(getenv("RDS_MODULES") ?: "", "ours"))
		rt_skip("the distribution has no operation ids (%s)",
			"RDS_CMSG_OP_ID, RDS_OP_BARRIER)");
	fd = bound_socket();
	EXPECT_EQ(barrier_now(fd, NULL, 0), 0);
	EXPECT_EQ(send_rdma_to(fd, p, 64, 4000, &id[0]), 0);
	EXPECT_EQ(send_rdma_to(fd, p, 64, 4001, &id[1]), 0);
	EXPECT_EQ(send_rdma_to(fd, p, 64, 4000, &id[2]), 0);
	EXPECT_TRUE(id[0] == 1 && id[1] == 2 && id[2] == 3,
		    "ids %llu %llu %llu, expected 1 2 3",
		    (unsigned long long)id[0], (unsigned long long)id[1],
		    (unsigned long long)id[2]);
	EXPECT_EQ(barrier_now(fd, NULL, 0), 0);
	EXPECT_EQ(barrier_now(fd, "10.0.0.250", 4000), 0);
	EXPECT_EQ(barrier_now(fd, "10.0.0.250", 4001), 1);
	EXPECT_EQ(barrier_now(fd, "10.0.0.250", 0), 0);
	EXPECT_EQ(barrier_now(fd, "10.0.0.251", 4000), 3);

	/* errors */
	EXPECT_EQ(barrier(fd, NULL, 0, 4, &done), -EINVAL);
	/* an IPv6 host no operation went to: every id is done */
	ASSERT_SYS_OK(getsockopt(fd, SOL_RDS, RDS_OP_BARRIER, &b, &len));
	EXPECT_EQ(b.done_id, 3);
	b.dest.ss_family = 99;
	EXPECT_SYS_ERR(getsockopt(fd, SOL_RDS, RDS_OP_BARRIER, &b, &len),
		       EINVAL);
	b.dest.ss_family = AF_UNSPEC;
	len = sizeof(b) - 1;
	EXPECT_SYS_ERR(getsockopt(fd, SOL_RDS, RDS_OP_BARRIER, &b, &len),
		       EINVAL);
	EXPECT_EQ(send_rdma_to(fd, p, 64, 4000, (uint64_t *)8), -EFAULT);
	EXPECT_EQ(send_op_id_only(fd, &id[3]), -EINVAL);

	/* waiting */
	ASSERT_SYS_OK(fcntl(fd, F_SETFL, O_NONBLOCK));
	EXPECT_EQ(barrier(fd, NULL, 0, 1, &done), -EAGAIN);
	ASSERT_SYS_OK(fcntl(fd, F_SETFL, 0));
	ASSERT_SYS_OK(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	t0 = rt_now_ms();
	EXPECT_EQ(barrier(fd, NULL, 0, 1, &done), -EAGAIN);
	EXPECT_TRUE(rt_now_ms() - t0 >= 250, "SO_RCVTIMEO 300 ms: back after %lld ms",
		    rt_now_ms() - t0);
	memset(&tv, 0, sizeof(tv));
	ASSERT_SYS_OK(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	ASSERT_SYS_OK(sigaction(SIGALRM, &sa, NULL));	/* no SA_RESTART */
	ASSERT_SYS_OK(setitimer(ITIMER_REAL, &it, NULL));
	EXPECT_EQ(barrier(fd, NULL, 0, 1, &done), -EINTR);

	/* the operations end: CANCELED, and the barriers move */
	pfd = (struct pollfd){ .fd = fd, .events = POLLRDBAND };
	EXPECT_EQ(poll(&pfd, 1, 0), 0);
	pid = cancel_later(fd, 4001, 200);
	EXPECT_EQ(barrier(fd, "10.0.0.250", 4001, 2, &done), 0);
	EXPECT_EQ(done, 4);	/* the EFAULT send's id 4 is complete too */
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st), "RDS_CANCEL_SENT_TO failed");
	EXPECT_EQ(barrier_now(fd, NULL, 0), 0);
	pid = cancel_later(fd, 4000, 200);
	EXPECT_EQ(poll(&pfd, 1, 5000), 1);
	EXPECT_EQ(pfd.revents, POLLRDBAND);
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	EXPECT_EQ(barrier(fd, NULL, 0, 3, &done), 0);
	EXPECT_EQ(done, 4);
	EXPECT_EQ(poll(&pfd, 1, 0), 0);
	close(fd);
	munmap(p, PAGE);
}

static const struct rt_case cases[] = {
	RT_CASE(memlock_limit, 30),
	RT_CASE(size_limit, 30),
	RT_CASE(bad_ranges, 30),
	RT_CASE_NAMED(pool_exhausted, 30),
	RT_CASE(killed_owner, 30),
	RT_CASE(key_reuse, 60),
	RT_CASE(reg_qp_recovery, 30),
	RT_CASE(rdma_op_memlock, 30),
	RT_CASE(small_sends_bounded, 30),
	RT_CASE(invalidate_carried_key, 30),
	RT_CASE(op_barrier, 30),
	RT_CASE(unprivileged, 30),
};

int main(int argc, char **argv)
{
	const char *env = getenv("RDS_ADDR");
	unsigned int i;
	int fd;

	if (argc > 1 && !strcmp(argv[1], "-l")) {
		for (i = 0; i < ARRAY_SIZE(cases); i++)
			printf("%s\n", cases[i].name);
		return 0;
	}
	fd = rds_need_af_rds();
	if (fd)
		return fd;
	if (!env || inet_pton(AF_INET, env, &addr) != 1) {
		printf("1..0 # SKIP no RDMA address (RDS_ADDR)\n");
		return RT_EXIT_SKIP;
	}
	return rt_run(cases, ARRAY_SIZE(cases), argv + 1);
}
