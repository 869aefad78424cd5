// SPDX-License-Identifier: GPL-2.0-only
/*
 * Threads that end long before the process does: "early-1" .. "early-4" each sleep
 * 20 * N ms (times SCALE) and exit; the main thread "early-main" joins them (4 waits
 * in pthread_join, about 80 ms) and then sleeps 200 ms more (1 wait). A profiler
 * must still name and count the threads that are gone by the time it reads /proc.
 */
#include "workload.h"

#define THREADS 4

static double scale;

static void *early(void *arg)
{
	long n = (long)arg;
	struct truth t;
	char comm[16];

	snprintf(comm, sizeof(comm), "early-%ld", n);
	truth_begin(&t, "earlyexit", comm, "S");
	wl_sleep_ns(20 * n * NSEC_PER_MSEC * scale);
	truth_end(&t, 1);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[THREADS];
	struct truth t;

	scale = wl_scale(argc, argv,
			 "[SCALE]\n  \"early-N\" (N = 1..4) sleep 20 * N ms * SCALE and exit; "
			 "\"early-main\"\n  joins them and sleeps 200 ms * SCALE");
	wl_start();
	truth_begin(&t, "earlyexit", "early-main", "S");
	for (long i = 0; i < THREADS; i++)
		wl_check(pthread_create(&th[i], NULL, early, (void *)(i + 1)), "pthread_create");
	for (int i = 0; i < THREADS; i++)
		wl_check(pthread_join(th[i], NULL), "pthread_join");
	wl_sleep_ns(200 * NSEC_PER_MSEC * scale);
	truth_end(&t, THREADS + 1);
	return 0;
}
