// SPDX-License-Identifier: GPL-2.0-only
/*
 * Several threads on one blocking stack, for the report's merged stack lines.
 * Four threads "crowd-1".."crowd-4" each call nap() 10 times, and nap() is one
 * nanosleep: thread i sleeps i x 10 ms (times SCALE) a time, so the four share
 * one stack (start_thread <- crowd <- nap <- clock_nanosleep) with 10%, 20%,
 * 30% and 40% of its time: 100, 200, 300 and 400 ms blocked in S, ten waits
 * each. The main thread joins them (a futex wait, another stack).
 */
#include "workload.h"

#define THREADS 4
#define ROUNDS 10

static double scale;

/* Not inlined: the frame that makes the four threads' stacks one. */
static void __attribute__((noinline)) nap(uint64_t ns)
{
	wl_sleep_ns(ns);
	__asm__ __volatile__("" ::: "memory");
}

static void *crowd(void *arg)
{
	long n = (long)arg;
	struct truth t;
	char comm[16];
	int i;

	snprintf(comm, sizeof(comm), "crowd-%ld", n);
	truth_begin(&t, "crowd", comm, "S");
	for (i = 0; i < ROUNDS; i++)
		nap(n * 10 * NSEC_PER_MSEC * scale);
	truth_end(&t, i);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[THREADS];

	scale = wl_scale(argc, argv,
			 "[SCALE]\n  threads \"crowd-N\" (N = 1..4) on one stack: 10 x "
			 "nanosleep(N x 10 ms * SCALE)");
	wl_start();
	for (long i = 0; i < THREADS; i++)
		wl_check(pthread_create(&th[i], NULL, crowd, (void *)(i + 1)), "pthread_create");
	for (int i = 0; i < THREADS; i++)
		wl_check(pthread_join(th[i], NULL), "pthread_join");
	return 0;
}
