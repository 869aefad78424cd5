// SPDX-License-Identifier: GPL-2.0-only
/*
 * A pipe ping-pong without frame pointers (built -O2 -fomit-frame-pointer, see
 * mk/unwind-bench.mk), for bench/unwind.sh: the cost of unwinding user stacks
 * from .eh_frame at every switch. Two threads pass one byte back and forth over
 * two pipes; run it pinned to one CPU (taskset -c 0) so that every hand-off is a
 * read that sleeps and a switch to the other thread. Each side blocks through
 * three functions of its own below its thread function, like real code does, so
 * an unwinder has a few frames to walk.
 *
 *   pipe_fpless [--wait-start] [OPS]          (default 100000)
 *
 * --wait-start: say "waiting for SIGUSR1" on stderr and wait for it before the
 * first operation, so that a tool attaching by pid can be ready first.
 * Prints one line: pipe_fpless ops=N secs=S us_per_op=X csw=N
 * csw counts the process's context switches (getrusage), voluntary or not, so
 * that a cost per switch can be derived.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define STEP __attribute__((noipa))

static int ping[2], pong[2];
static long ops = 100000;
static volatile long sink; /* written after each call: no call is a tail call */

static void die(const char *what)
{
	fprintf(stderr, "pipe_fpless: %s: %s\n", what, strerror(errno));
	exit(1);
}

static STEP void xfer_leaf(int in, int out)
{
	char c = 0;

	if (read(in, &c, 1) != 1)
		die("read");
	if (out >= 0 && write(out, &c, 1) != 1)
		die("write");
	sink++;
}

static STEP void xfer_mid(int in, int out)
{
	xfer_leaf(in, out);
	sink++;
}

static STEP void xfer_top(int in, int out, long n)
{
	for (long i = 0; i < n; i++)
		xfer_mid(in, out);
	sink++;
}

static void *ponger(void *arg)
{
	xfer_top(ping[0], pong[1], ops);
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct rusage r0, r1;
	pthread_t t;
	double t0, t1;
	int wait_start = argc > 1 && !strcmp(argv[1], "--wait-start");
	char c = 0;
	sigset_t set;
	int sig;

	if (argc > 1 + wait_start && (ops = atol(argv[1 + wait_start])) <= 0) {
		fprintf(stderr, "usage: pipe_fpless [--wait-start] [OPS]\n");
		return 2;
	}
	if (wait_start) {
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		fprintf(stderr, "pipe_fpless: pid %d waiting for SIGUSR1\n", (int)getpid());
		if (sigwait(&set, &sig))
			die("sigwait");
	}
	if (pipe(ping) || pipe(pong))
		die("pipe");
	if (pthread_create(&t, NULL, ponger, NULL))
		die("pthread_create");
	getrusage(RUSAGE_SELF, &r0);
	t0 = now();
	for (long i = 0; i < ops; i++) {
		if (write(ping[1], &c, 1) != 1)
			die("write");
		xfer_mid(pong[0], -1);
	}
	t1 = now();
	getrusage(RUSAGE_SELF, &r1);
	pthread_join(t, NULL);
	printf("pipe_fpless ops=%ld secs=%.6f us_per_op=%.4f csw=%ld\n", ops, t1 - t0,
	       (t1 - t0) * 1e6 / ops, (r1.ru_nvcsw - r0.ru_nvcsw) + (r1.ru_nivcsw - r0.ru_nivcsw));
	return 0;
}
