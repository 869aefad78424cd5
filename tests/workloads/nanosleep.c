// SPDX-License-Identifier: GPL-2.0-only
/*
 * One thread "sleeper" does 10 nanosleeps of 30 ms (times SCALE): about 300 ms
 * blocked in S, ten waits, almost nothing on the CPU.
 */
#include "workload.h"

#define ROUNDS 10

static double scale;

static void *sleeper(void *arg)
{
	struct truth t;
	int i;

	truth_begin(&t, "nanosleep", "sleeper", "S");
	for (i = 0; i < ROUNDS; i++)
		wl_sleep_ns(30 * NSEC_PER_MSEC * scale);
	truth_end(&t, i);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th;

	scale = wl_scale(argc, argv,
			 "[SCALE]\n  one thread \"sleeper\": 10 x nanosleep(30 ms * SCALE)");
	wl_start();
	wl_check(pthread_create(&th, NULL, sleeper, NULL), "pthread_create");
	wl_check(pthread_join(th, NULL), "pthread_join");
	return 0;
}
