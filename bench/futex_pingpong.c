// SPDX-License-Identifier: GPL-2.0-only
/*
 * Two threads hand a turn back and forth through one futex word, as fast as the
 * kernel lets them: every handoff is a FUTEX_WAKE and a FUTEX_WAIT that sleeps, so
 * every operation is at least one context switch, the event an off-CPU collector
 * pays for.
 *
 *   futex_pingpong [--wait-start] [--cpu N|--no-pin] [SECONDS]
 *
 * Both threads are pinned to one CPU (the last one unless --cpu says otherwise):
 * the handoff is then a plain switch on that CPU, without the cross-CPU wakeups
 * and idle exits that make a 2-CPU VM noisy, and the collectors' own user-space
 * work (draining buffers, printing) runs on the other CPUs. --wait-start blocks
 * until SIGUSR1, so a collector attaching by PID can be ready first.
 *
 * Prints one line: futex_pingpong ops=N secs=S ops_per_sec=R csw=N
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static atomic_int turn;
static atomic_int stop;
static long ops[2];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void futex(atomic_int *word, int op, int val)
{
	syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}

static void *player(void *arg)
{
	int me = (int)(long)arg, v;
	long n = 0;

	for (;;) {
		while ((v = atomic_load(&turn)) != me) {
			if (v == 2)
				goto out;
			futex(&turn, FUTEX_WAIT_PRIVATE, v);
		}
		if (atomic_load(&stop))
			break;
		n++;
		atomic_store(&turn, !me);
		futex(&turn, FUTEX_WAKE_PRIVATE, 1);
	}
out:
	/* 2 is nobody's turn: the partner wakes, sees it and leaves too. */
	atomic_store(&turn, 2);
	futex(&turn, FUTEX_WAKE_PRIVATE, INT_MAX);
	ops[me] = n;
	return NULL;
}

static void wait_start(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	fprintf(stderr, "futex_pingpong: pid %d waiting for SIGUSR1\n", (int)getpid());
	sigwait(&set, &sig);
}

int main(int argc, char **argv)
{
	int cpu = (int)sysconf(_SC_NPROCESSORS_ONLN) - 1, pin = 1, wait = 0;
	double secs = 2, t0, t1;
	struct rusage r0, r1;
	pthread_t th[2];
	cpu_set_t set;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--wait-start"))
			wait = 1;
		else if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
			cpu = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--no-pin"))
			pin = 0;
		else if (argv[i][0] != '-' && atof(argv[i]) > 0)
			secs = atof(argv[i]);
		else {
			fprintf(stderr, "usage: futex_pingpong [--wait-start] [--cpu N|--no-pin] "
					"[SECONDS]\n");
			return 2;
		}
	}
	if (pin) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			fprintf(stderr, "futex_pingpong: cannot pin to CPU %d: %s\n", cpu,
				strerror(errno));
			return 1;
		}
	}
	if (wait)
		wait_start();
	getrusage(RUSAGE_SELF, &r0);
	t0 = now();
	for (long i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, player, (void *)i)) {
			fprintf(stderr, "futex_pingpong: pthread_create failed\n");
			return 1;
		}
	usleep((useconds_t)(secs * 1e6));
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	t1 = now();
	getrusage(RUSAGE_SELF, &r1);
	printf("futex_pingpong ops=%ld secs=%.6f ops_per_sec=%.0f csw=%ld\n", ops[0] + ops[1],
	       t1 - t0, (ops[0] + ops[1]) / (t1 - t0),
	       (r1.ru_nvcsw - r0.ru_nvcsw) + (r1.ru_nivcsw - r0.ru_nivcsw));
	return 0;
}
