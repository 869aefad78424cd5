/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared by the test workloads (each tests/workloads/NAME.c includes it once and is
 * otherwise a single-file program): ground-truth reporting, argument handling and a
 * few sleeping/spinning helpers.
 *
 * Ground truth protocol. When the environment variable OFFCPU_TRUTH names a file,
 * every reporting thread appends one JSON object on one line when it ends:
 *
 *   {"workload":"mutex","comm":"waiter","pid":123,"tid":124,"expect":"S",
 *    "wall_ns":N,"oncpu_ns":N,"runq_ns":N,"offcpu_ns":N,"blocked_ns":N,"waits":N}
 *
 *   wall_ns    CLOCK_MONOTONIC between truth_begin() and truth_end()
 *   oncpu_ns   delta of /proc/self/task/TID/schedstat field 1 (time on a CPU)
 *   runq_ns    delta of field 2 (time runnable, waiting on a run queue)
 *   offcpu_ns  wall_ns - oncpu_ns
 *   blocked_ns offcpu_ns - runq_ns (sleeping: S or D)
 *   expect     the state the thread is designed to block in: S, D, R (only
 *              run-queue waits) or mixed
 *   waits      how many blocking calls the thread made by design
 *
 * The file is opened with O_APPEND and each line is one write(), so lines from many
 * threads and processes never interleave. Values are signed: on a thread that never
 * blocks, offcpu_ns can be a few microseconds below zero, and that is the truth.
 *
 * On a VM the kernel leaves time stolen by the hypervisor out of oncpu_ns
 * (CONFIG_PARAVIRT_TIME_ACCOUNTING), so it lands in offcpu_ns and blocked_ns, while a
 * profiler that times sched_switch sees the thread on the CPU then: for a thread that
 * computes a lot, expect blocked_ns a little (up to a few percent of oncpu_ns) above
 * what such a profiler measures. For threads that mostly wait it is negligible.
 *
 * Every workload but exitcode also takes --help, and --wait-start: the main thread
 * then blocks until it receives SIGUSR1 before any work (and any truth window)
 * begins, so a profiler attaching by PID can be ready first.
 */
#ifndef OFFCPU_TESTS_WORKLOAD_H
#define OFFCPU_TESTS_WORKLOAD_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_SEC 1000000000ULL

static const char *wl_prog = "workload";
static int wl_wait_start;

static inline void __attribute__((noreturn, format(printf, 1, 2))) wl_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", wl_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* pthread functions return the error instead of setting errno. */
static inline void wl_check(int err, const char *what)
{
	if (err)
		wl_die("%s: %s", what, strerror(err));
}

static inline uint64_t wl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* One blocking sleep; a signal does not make it two. */
static inline void wl_sleep_ns(uint64_t ns)
{
	struct timespec ts = {.tv_sec = ns / NSEC_PER_SEC, .tv_nsec = ns % NSEC_PER_SEC};

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

/* Busy loop without any system call, so the thread never leaves the CPU by itself. */
static inline void wl_spin_ns(uint64_t ns)
{
	uint64_t end = wl_now_ns() + ns;

	while (wl_now_ns() < end)
		__asm__ __volatile__("" ::: "memory");
}

static inline void wl_set_comm(const char *comm)
{
	if (prctl(PR_SET_NAME, comm, 0, 0, 0))
		wl_die("prctl(PR_SET_NAME, %s): %s", comm, strerror(errno));
}

static inline double wl_parse_num(const char *s, const char *what)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v <= 0)
		wl_die("%s must be a positive number, not '%s'; see --help", what, s);
	return v;
}

/*
 * Handles --help and --wait-start, and collects up to max_pos positional arguments
 * into pos[] (unused slots stay NULL). Dies on anything else.
 */
static inline void wl_args(int argc, char **argv, const char *usage, const char **pos, int max_pos)
{
	int n = 0;

	wl_prog = argv[0] && strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	for (int i = 0; i < max_pos; i++)
		pos[i] = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: %s %s\n", wl_prog, usage);
			printf("  --wait-start  block until SIGUSR1 before starting\n"
			       "  env OFFCPU_TRUTH=FILE  append ground truth, one JSON line per "
			       "thread\n");
			exit(0);
		} else if (!strcmp(argv[i], "--wait-start")) {
			wl_wait_start = 1;
		} else if (argv[i][0] == '-' && argv[i][1] == '-') {
			wl_die("unknown option '%s'; see --help", argv[i]);
		} else if (n < max_pos) {
			pos[n++] = argv[i];
		} else {
			wl_die("too many arguments; see --help");
		}
	}
}

/* This program's own path, to exec it again (by its path, so its comm stays its name). */
static inline void wl_self(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);

	if (n < 0)
		wl_die("readlink /proc/self/exe: %s", strerror(errno));
	buf[n] = '\0';
}

/* Most workloads take one optional SCALE that multiplies every duration. */
static inline double wl_scale(int argc, char **argv, const char *usage)
{
	const char *pos[1];

	wl_args(argc, argv, usage, pos, 1);
	return pos[0] ? wl_parse_num(pos[0], "SCALE") : 1.0;
}

/* Called by main before it starts any work; see --wait-start. */
static inline void wl_start(void)
{
	sigset_t set;
	int sig;

	if (!wl_wait_start)
		return;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	fprintf(stderr, "%s: pid %d waiting for SIGUSR1\n", wl_prog, (int)getpid());
	if (sigwait(&set, &sig))
		wl_die("sigwait failed");
}

struct truth {
	const char *workload;
	const char *expect;
	uint64_t wall0;
	uint64_t oncpu0;
	uint64_t runq0;
};

static inline void truth_schedstat(uint64_t *oncpu, uint64_t *runq)
{
	char path[64], buf[128];
	struct timespec ts;
	unsigned long long on, rq;
	ssize_t n;
	int fd;

	/*
	 * schedstat prints se.sum_exec_runtime, which for the running thread is only
	 * brought up to date at a tick or a switch (4 ms stale at HZ=250). Asking for
	 * the thread CPU clock runs update_curr() on ourselves, so the read below
	 * sees the time we have been running until now.
	 */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", (int)gettid());
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		wl_die("open %s: %s (the kernel needs CONFIG_SCHED_INFO)", path, strerror(errno));
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		wl_die("read %s failed", path);
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &on, &rq) != 2)
		wl_die("cannot parse %s: '%s'", path, buf);
	*oncpu = on;
	*runq = rq;
}

/*
 * Starts the truth window of the calling thread and names it. The schedstat read
 * comes right after the clock read, in the same order as in truth_end(), so the two
 * windows are shifted by the same few microseconds.
 */
static inline void truth_begin(struct truth *t, const char *workload, const char *comm,
			       const char *expect)
{
	wl_set_comm(comm);
	t->workload = workload;
	t->expect = expect;
	t->wall0 = wl_now_ns();
	truth_schedstat(&t->oncpu0, &t->runq0);
}

/*
 * Ends the truth window and appends the thread's line to $OFFCPU_TRUTH. Call it as
 * the last thing before the thread returns (or the process exits): reading
 * schedstat is the last act inside the window, and only the formatting and the one
 * write() of the line come after it.
 */
static inline void truth_end(struct truth *t, long waits)
{
	uint64_t wall1, oncpu1, runq1;
	int64_t wall, oncpu, runq;
	char comm[17] = "";
	const char *path;
	char line[512];
	int fd, len;

	wall1 = wl_now_ns();
	truth_schedstat(&oncpu1, &runq1); /* last read of the window */

	wall = wall1 - t->wall0;
	oncpu = oncpu1 - t->oncpu0;
	runq = runq1 - t->runq0;
	path = getenv("OFFCPU_TRUTH");
	if (!path || !*path)
		return;
	prctl(PR_GET_NAME, comm, 0, 0, 0);
	len = snprintf(line, sizeof(line),
		       "{\"workload\":\"%s\",\"comm\":\"%s\",\"pid\":%d,\"tid\":%d,"
		       "\"expect\":\"%s\",\"wall_ns\":%" PRId64 ",\"oncpu_ns\":%" PRId64
		       ",\"runq_ns\":%" PRId64 ",\"offcpu_ns\":%" PRId64 ",\"blocked_ns\":%" PRId64
		       ",\"waits\":%ld}\n",
		       t->workload, comm, (int)getpid(), (int)gettid(), t->expect, wall, oncpu,
		       runq, wall - oncpu, wall - oncpu - runq, waits);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		wl_die("open OFFCPU_TRUTH=%s: %s", path, strerror(errno));
	if (write(fd, line, len) != len)
		wl_die("write %s: %s", path, strerror(errno));
	close(fd);
}

#endif /* OFFCPU_TESTS_WORKLOAD_H */
