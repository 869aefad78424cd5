// SPDX-License-Identifier: GPL-2.0-only
/*
 * THREADS threads (64) contend on one pthread mutex: each takes it, does a little
 * work inside, drops it, does a little work outside, and counts. With more threads
 * than CPUs the losers sleep in the kernel (futex) and the winner wakes one, so the
 * run is a stream of short off-CPU waits on one lock: the convoy an off-CPU profiler
 * is meant to explain, and a worst case for its per-switch cost.
 *
 *   lock_contend [--wait-start] [--threads N] [--pi] [SECONDS]
 *
 * glibc's default mutex lets the thread that unlocks take the lock straight back,
 * so most waiters sleep long and few switches happen per operation. --pi makes it a
 * priority-inheritance mutex, which the kernel hands to the first waiter at every
 * contended unlock: the classic lock convoy, about one switch per operation.
 *
 * Not pinned: the convoy needs every CPU to form. --wait-start blocks until SIGUSR1.
 * Prints one line: lock_contend ops=N secs=S ops_per_sec=R csw=N threads=N pi=0|1
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define INSIDE 500  /* loop iterations holding the lock (~250 ns) */
#define OUTSIDE 100 /* and between two acquisitions: less, so the lock is mostly taken */

static pthread_mutex_t lock;
static atomic_int stop;
static volatile unsigned long shared;
static pthread_barrier_t go;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void work(int n)
{
	for (int i = 0; i < n; i++)
		__asm__ __volatile__("" ::: "memory");
}

static void *contender(void *arg)
{
	long *count = arg;

	pthread_barrier_wait(&go);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		pthread_mutex_lock(&lock);
		shared++;
		work(INSIDE);
		pthread_mutex_unlock(&lock);
		work(OUTSIDE);
		(*count)++;
	}
	return NULL;
}

static void wait_start(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	fprintf(stderr, "lock_contend: pid %d waiting for SIGUSR1\n", (int)getpid());
	sigwait(&set, &sig);
}

int main(int argc, char **argv)
{
	int threads = 64, wait = 0, pi = 0;
	pthread_mutexattr_t attr;
	double secs = 2, t0, t1;
	struct rusage r0, r1;
	pthread_t *th;
	long *counts, ops = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--wait-start"))
			wait = 1;
		else if (!strcmp(argv[i], "--pi"))
			pi = 1;
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (argv[i][0] != '-' && atof(argv[i]) > 0)
			secs = atof(argv[i]);
		else {
			fprintf(stderr, "usage: lock_contend [--wait-start] [--threads N] [--pi] "
					"[SECONDS]\n");
			return 2;
		}
	}
	if (threads < 1) {
		fprintf(stderr, "lock_contend: --threads must be at least 1\n");
		return 2;
	}
	th = calloc(threads, sizeof(*th));
	/* One cache line per counter, so counting does not contend too. */
	counts = calloc((size_t)threads * 8, sizeof(*counts));
	if (!th || !counts) {
		fprintf(stderr, "lock_contend: out of memory\n");
		return 1;
	}
	pthread_mutexattr_init(&attr);
	if (pi && pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_INHERIT)) {
		fprintf(stderr, "lock_contend: no priority-inheritance mutexes here\n");
		return 1;
	}
	pthread_mutex_init(&lock, &attr);
	if (wait)
		wait_start();
	pthread_barrier_init(&go, NULL, threads + 1);
	for (int i = 0; i < threads; i++)
		if (pthread_create(&th[i], NULL, contender, &counts[i * 8])) {
			fprintf(stderr, "lock_contend: pthread_create failed\n");
			return 1;
		}
	getrusage(RUSAGE_SELF, &r0);
	t0 = now();
	pthread_barrier_wait(&go);
	usleep((useconds_t)(secs * 1e6));
	atomic_store(&stop, 1);
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	t1 = now();
	getrusage(RUSAGE_SELF, &r1);
	for (int i = 0; i < threads; i++)
		ops += counts[i * 8];
	printf("lock_contend ops=%ld secs=%.6f ops_per_sec=%.0f csw=%ld threads=%d pi=%d\n", ops,
	       t1 - t0, ops / (t1 - t0),
	       (r1.ru_nvcsw - r0.ru_nvcsw) + (r1.ru_nivcsw - r0.ru_nivcsw), threads, pi);
	free(th);
	free(counts);
	return 0;
}
