/* SPDX-License-Identifier: GPL-2.0 */
/*
 * a small TAP harness for the RDS selftests.
 *
 * Each test case is a function without arguments.  rt_run() runs every case
 * in a forked child, in a process group of its own and under alarm(), so a
 * case that hangs, crashes or leaves helper processes behind fails alone:
 * the parent reports "not ok" with the signal, kills the group and goes on
 * with the next case.
 *
 * Inside a case, the EXPECT_* macros report a mismatch (what was expected,
 * what came back, errno by name) and let the case go on; the ASSERT_* macros
 * do the same and then end the case.  rt_skip() ends the case as skipped.
 *
 * The program's exit code is 0 iff no case failed.
 *
 * The including file must define _GNU_SOURCE before any system header.
 */
#ifndef RDS_TEST_H
#define RDS_TEST_H

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

#define RT_DEFAULT_TIMEOUT	30	/* seconds per case */
#define RT_EXIT_PASS		0
#define RT_EXIT_FAIL		1
#define RT_EXIT_SKIP		4	/* the kselftest skip code */

/*
 * A case runs fn(), or, when fn is NULL, variant(arg): one function for a
 * family of cases that differ in one number (rds_rdma's owner 1 and 2).
 */
struct rt_case {
	const char *name;
	void (*fn)(void);
	unsigned int timeout;		/* seconds; 0: RT_DEFAULT_TIMEOUT */
	void (*variant)(int arg);
	int arg;
	int named_only;			/* runs only when named */
};

/* The case "id": test_id(), at most secs seconds (0: the default). */
#define RT_CASE(id, secs)	{ .name = #id, .fn = test_##id, .timeout = secs }
/* The case "id", run only when named: it needs a setup of its own. */
#define RT_CASE_NAMED(id, secs) \
	{ .name = #id, .fn = test_##id, .timeout = secs, .named_only = 1 }
/* The case "id_ownerN": id(N) (rds_rdma's owner 1 and 2). */
#define RT_CASE_OWNER(id, n, secs) \
	{ .name = #id "_owner" #n, .variant = id, .arg = n, .timeout = secs }

/* Shared between the parent and the case's child. */
struct rt_shared {
	char skip_reason[256];
	char first_failure[256];	/* put into the "not ok" line */
};

/*
 * Weak, not static: a program built from several files (rds_local) has one
 * copy of the state, whichever of its files run the checks.
 */
__attribute__((weak)) struct rt_shared *rt_shared;
__attribute__((weak)) int rt_failures;	/* in the child: failed checks so far */
__attribute__((weak)) const char *rt_case_name;

static inline const char *rt_errname(int err)
{
	static char buf[32];
	const char *name = NULL;

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
	name = strerrorname_np(err);
#endif
	if (name)
		return name;
	snprintf(buf, sizeof(buf), "errno %d", err);
	return buf;
}

static inline const char *rt_signame(int sig)
{
	static char buf[32];
	const char *name = NULL;

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
	name = sigabbrev_np(sig);
#endif
	if (name) {
		snprintf(buf, sizeof(buf), "SIG%s", name);
		return buf;
	}
	snprintf(buf, sizeof(buf), "signal %d", sig);
	return buf;
}

/* A TAP diagnostic line ("# ..."). */
static inline void __attribute__((format(printf, 1, 2)))
rt_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

/* Record a failed check of the current case, with where it happened. */
static inline void __attribute__((format(printf, 3, 4)))
rt_fail_at(const char *file, int line, const char *fmt, ...)
{
	char msg[sizeof(rt_shared->first_failure)];
	va_list ap;
	char *c;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("# %s: %s:%d: %s\n", rt_case_name ? rt_case_name : "?", file,
	       line, msg);
	fflush(stdout);
	rt_failures++;
	/*
	 * The first failure also goes into the result's name: a summary
	 * that keeps only the result lines (make check's) still says why.
	 * A '#' there would start a TAP directive.
	 */
	if (rt_shared && !rt_shared->first_failure[0]) {
		char *ff = rt_shared->first_failure;
		size_t n, size = sizeof(rt_shared->first_failure);
		const char *base = strrchr(file, '/');

		n = (size_t)snprintf(ff, size, "%s:%d: ",
				     base ? base + 1 : file, line);
		for (c = msg; *c && n + 1 < size; c++)
			ff[n++] = *c == '#' || *c == '\n' ? ' ' : *c;
		if (n < size)
			ff[n] = '\0';
	}
}

#define rt_fail(...)	rt_fail_at(__FILE__, __LINE__, __VA_ARGS__)

/* End the current case now, failed. */
static inline void __attribute__((noreturn)) rt_abort(void)
{
	fflush(stdout);
	_exit(RT_EXIT_FAIL);
}

/* End the current case now, skipped (unless a check already failed). */
static inline void __attribute__((noreturn, format(printf, 1, 2)))
rt_skip(const char *fmt, ...)
{
	va_list ap;

	if (rt_failures)
		rt_abort();
	va_start(ap, fmt);
	vsnprintf(rt_shared->skip_reason, sizeof(rt_shared->skip_reason),
		  fmt, ap);
	va_end(ap);
	fflush(stdout);
	_exit(RT_EXIT_SKIP);
}

/*
 * Checks.  Each evaluates its arguments once and yields whether it held
 * (EXPECT_SYS_OK yields the call's return value instead).
 */

/* cond must be true; the message says what was wrong. */
#define EXPECT_TRUE(cond, ...) ({					\
	int __ok = !!(cond);						\
	if (!__ok)							\
		rt_fail(__VA_ARGS__);					\
	__ok;								\
})

/* Integer equality, both shown in decimal and hex on a mismatch. */
#define EXPECT_EQ(got, want) ({						\
	long long __g = (long long)(got);				\
	long long __w = (long long)(want);				\
	int __ok = __g == __w;						\
	if (!__ok)							\
		rt_fail("%s: expected %lld (%#llx), got %lld (%#llx)",	\
			#got, __w, (unsigned long long)__w,		\
			__g, (unsigned long long)__g);			\
	__ok;								\
})

#define EXPECT_NE(got, unwanted) ({					\
	long long __g = (long long)(got);				\
	long long __u = (long long)(unwanted);				\
	int __ok = __g != __u;						\
	if (!__ok)							\
		rt_fail("%s: expected anything but %lld, got it",	\
			#got, __u);					\
	__ok;								\
})

/* A system call must succeed (return >= 0); yields its return value. */
#define EXPECT_SYS_OK(call) ({						\
	long __r;							\
	int __e;							\
	errno = 0;							\
	__r = (long)(call);						\
	__e = errno;							\
	if (__r < 0)							\
		rt_fail("%s: expected success, got %ld (%s)",		\
			#call, __r, rt_errname(__e));			\
	errno = __e;							\
	__r;								\
})

/* A system call must fail with -1 and this errno. */
#define EXPECT_SYS_ERR(call, err) ({					\
	long __r;							\
	int __e, __ok;							\
	errno = 0;							\
	__r = (long)(call);						\
	__e = errno;							\
	__ok = __r == -1 && __e == (err);				\
	if (!__ok) {							\
		if (__r == -1)						\
			rt_fail("%s: expected -1 (%s), got -1 (%s)",	\
				#call, rt_errname(err),			\
				rt_errname(__e));			\
		else							\
			rt_fail("%s: expected -1 (%s), got %ld",	\
				#call, rt_errname(err), __r);		\
	}								\
	errno = __e;							\
	__ok;								\
})

#define ASSERT_TRUE(cond, ...)	do { if (!EXPECT_TRUE(cond, __VA_ARGS__)) rt_abort(); } while (0)
#define ASSERT_EQ(got, want)	do { if (!EXPECT_EQ(got, want)) rt_abort(); } while (0)
#define ASSERT_NE(got, want)	do { if (!EXPECT_NE(got, want)) rt_abort(); } while (0)
#define ASSERT_SYS_ERR(call, err) \
	do { if (!EXPECT_SYS_ERR(call, err)) rt_abort(); } while (0)
#define ASSERT_SYS_OK(call) ({						\
	long __v = EXPECT_SYS_OK(call);					\
	if (__v < 0)							\
		rt_abort();						\
	__v;								\
})

/* Milliseconds on the monotonic clock. */
static inline long long rt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static inline void rt_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The factor environment variable @name gives, 1 to 20 (else 1), read once. */
static inline unsigned int rt_env_scale(const char *name, unsigned int *cache)
{
	const char *env;
	long v;

	if (!*cache) {
		env = getenv(name);
		v = env ? atol(env) : 1;
		*cache = v >= 1 && v <= 20 ? (unsigned int)v : 1;
	}
	return *cache;
}

/*
 * RDS_TIME_SCALE=N (1 to 20, default 1): a slower kernel (the sanitizer
 * one of make check-debug, under TCG) gets N times every limit: each
 * case's, and the waits the programs build from rt_scaled_ms().
 */
static inline unsigned int rt_time_scale(void)
{
	static unsigned int scale;

	return rt_env_scale("RDS_TIME_SCALE", &scale);
}

static inline int rt_scaled_ms(int ms)
{
	return ms * (int)rt_time_scale();
}

/*
 * RDS_MEM_SCALE=N (1 to 20, default 1): on a kernel whose every slab
 * object carries sanitizer metadata (KASAN redzones and quarantine,
 * kmemleak's record of it), the same objects take N times the memory,
 * so a bound on how much memory the kernel grew by is N times larger.
 */
static inline unsigned int rt_mem_scale(void)
{
	static unsigned int scale;

	return rt_env_scale("RDS_MEM_SCALE", &scale);
}

/* How much memory is in use, in KiB (MemTotal - MemFree); the slab's in *@slab. */
static inline long long rt_mem_used_kib(long long *slab)
{
	char line[256];
	long long total = -1, free_kib = -1, v;
	FILE *f = fopen("/proc/meminfo", "r");

	ASSERT_TRUE(f, "/proc/meminfo: %s", rt_errname(errno));
	*slab = -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemTotal: %lld", &v) == 1)
			total = v;
		else if (sscanf(line, "MemFree: %lld", &v) == 1)
			free_kib = v;
		else if (sscanf(line, "Slab: %lld", &v) == 1)
			*slab = v;
	}
	fclose(f);
	return total - free_kib;
}

/*
 * How much the memory grew since @used0 and @slab0: the larger of the
 * growth of memory in use and of the slab (memory in use moves with
 * caches too); the new values in *@used and *@slab.
 */
static inline long long rt_mem_grown_kib(long long used0, long long slab0,
					 long long *used, long long *slab)
{
	*used = rt_mem_used_kib(slab);
	return *used - used0 > *slab - slab0 ? *used - used0 : *slab - slab0;
}

/* Run one case in a child; print its TAP line; return its verdict. */
static inline int rt_run_one(const struct rt_case *c, int num)
{
	unsigned int timeout = (c->timeout ? c->timeout : RT_DEFAULT_TIMEOUT) *
			       rt_time_scale();
	long long deadline;
	int status = 0, verdict;
	pid_t pid, w;

	memset(rt_shared, 0, sizeof(*rt_shared));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		rt_diag("fork: %s", rt_errname(errno));
		printf("not ok %d - %s\n", num, c->name);
		return RT_EXIT_FAIL;
	}
	if (pid == 0) {
		setpgid(0, 0);
		rt_case_name = c->name;
		rt_failures = 0;
		alarm(timeout);
		if (c->fn)
			c->fn();
		else
			c->variant(c->arg);
		fflush(stdout);
		_exit(rt_failures ? RT_EXIT_FAIL : RT_EXIT_PASS);
	}
	setpgid(pid, pid);	/* either side may win the race; both agree */

	/* The child's alarm should fire first; this is the backstop. */
	deadline = rt_now_ms() + (timeout + 10) * 1000LL;
	for (;;) {
		w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			rt_diag("waitpid: %s", rt_errname(errno));
			status = RT_EXIT_FAIL << 8;
			break;
		}
		if (rt_now_ms() > deadline) {
			kill(-pid, SIGKILL);
			waitpid(pid, &status, 0);
			break;
		}
		rt_sleep_ms(10);
	}
	/* Whatever the case left behind in its group goes too. */
	kill(-pid, SIGKILL);

	if (WIFEXITED(status) && WEXITSTATUS(status) == RT_EXIT_PASS) {
		printf("ok %d - %s\n", num, c->name);
		verdict = RT_EXIT_PASS;
	} else if (WIFEXITED(status) && WEXITSTATUS(status) == RT_EXIT_SKIP) {
		printf("ok %d - %s # SKIP %s\n", num, c->name,
		       rt_shared->skip_reason);
		verdict = RT_EXIT_SKIP;
	} else {
		char why[64] = "";

		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
			snprintf(why, sizeof(why), "timed out after %u s",
				 timeout);
		else if (WIFSIGNALED(status))
			snprintf(why, sizeof(why), "killed by %s",
				 rt_signame(WTERMSIG(status)));
		else if (WIFEXITED(status) &&
			 WEXITSTATUS(status) != RT_EXIT_FAIL)
			snprintf(why, sizeof(why), "exited with status %d",
				 WEXITSTATUS(status));
		if (why[0])
			rt_diag("%s: %s", c->name, why);
		/* the first failed check, then how the case ended */
		printf("not ok %d - %s", num, c->name);
		if (rt_shared->first_failure[0])
			printf(": %s", rt_shared->first_failure);
		if (why[0])
			printf("%s%s", rt_shared->first_failure[0] ? "; " : ": ",
			       why);
		putchar('\n');
		verdict = RT_EXIT_FAIL;
	}
	fflush(stdout);
	return verdict;
}

/*
 * Is the case among those named in only[] (all but the named_only ones
 * are, if none is named)?
 */
static inline int rt_wanted(const struct rt_case *c, char *const *only)
{
	int i;

	if (!only || !only[0])
		return !c->named_only;
	for (i = 0; only[i]; i++)
		if (!strcmp(only[i], c->name))
			return 1;
	return 0;
}

/*
 * The options of a program of cases: -l lists the case names, and -n
 * COUNT sets *@count where @count is not NULL.  Return: 0 to go on (case
 * names, if any, start at argv[optind]), or 1 + the exit status of main().
 */
static inline int rt_options(int argc, char **argv,
			     const struct rt_case *cases, int ncases,
			     unsigned int *count)
{
	int i, opt;

	while ((opt = getopt(argc, argv, count ? "ln:" : "l")) != -1) {
		switch (opt) {
		case 'l':
			for (i = 0; i < ncases; i++)
				printf("%s\n", cases[i].name);
			return 1;
		case 'n':
			*count = (unsigned int)atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-l]%s [CASE...]\n", argv[0],
				count ? " [-n COUNT]" : "");
			return 3;
		}
	}
	return 0;
}

static inline void rt_on_sigpipe(int sig)
{
	(void)sig;
}

/*
 * Run the cases (all of them, or those whose names are in only[], a NULL
 * terminated list), print the plan first and totals last, and return the
 * exit code for main().
 */
static inline int rt_run(const struct rt_case *cases, int ncases,
			 char *const *only)
{
	int i, n = 0, num = 0, pass = 0, fail = 0, skip = 0;

	rt_shared = mmap(NULL, sizeof(*rt_shared), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (rt_shared == MAP_FAILED) {
		printf("Bail out! mmap: %s\n", rt_errname(errno));
		return RT_EXIT_FAIL;
	}

	/*
	 * A write to a connection the other end closed fails with EPIPE,
	 * which the case reports where it happened, instead of killing it.
	 * A handler, not SIG_IGN: the commands a case runs get the default.
	 */
	signal(SIGPIPE, rt_on_sigpipe);

	for (i = 0; i < ncases; i++)
		n += rt_wanted(&cases[i], only);
	printf("1..%d\n", n);

	for (i = 0; i < ncases; i++) {
		if (!rt_wanted(&cases[i], only))
			continue;
		switch (rt_run_one(&cases[i], ++num)) {
		case RT_EXIT_PASS:
			pass++;
			break;
		case RT_EXIT_SKIP:
			skip++;
			break;
		default:
			fail++;
		}
	}
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n",
	       pass, fail, skip);
	fflush(stdout);
	return fail ? RT_EXIT_FAIL : RT_EXIT_PASS;
}

#endif /* RDS_TEST_H */
