// SPDX-License-Identifier: GPL-2.0-only
/*
 * "signaler" sleeps 40 ms (times SCALE) and then signals a condition variable, 5
 * times; "waiter" waits on it for each signal: about 200 ms blocked in S for each
 * thread, 5 waits each. The waiter's count is the number of pthread_cond_wait()
 * calls it really made, so a spurious wakeup would show.
 */
#include "workload.h"

#define ROUNDS 5

static double scale;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int posted; /* signals sent, under lock */

static void *signaler(void *arg)
{
	struct truth t;
	int i;

	truth_begin(&t, "condvar", "signaler", "S");
	for (i = 0; i < ROUNDS; i++) {
		wl_sleep_ns(40 * NSEC_PER_MSEC * scale);
		pthread_mutex_lock(&lock);
		posted++;
		pthread_cond_signal(&cond);
		pthread_mutex_unlock(&lock);
	}
	truth_end(&t, ROUNDS);
	return NULL;
}

static void *waiter(void *arg)
{
	struct truth t;
	long waits = 0;
	int seen;

	truth_begin(&t, "condvar", "waiter", "S");
	for (seen = 0; seen < ROUNDS; seen++) {
		pthread_mutex_lock(&lock);
		while (posted <= seen) {
			pthread_cond_wait(&cond, &lock);
			waits++;
		}
		pthread_mutex_unlock(&lock);
	}
	truth_end(&t, waits);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t s, w;

	scale = wl_scale(argc, argv,
			 "[SCALE]\n  \"signaler\" signals a condvar every 40 ms * SCALE, 5 times; "
			 "\"waiter\" waits");
	wl_start();
	wl_check(pthread_create(&w, NULL, waiter, NULL), "pthread_create");
	wl_check(pthread_create(&s, NULL, signaler, NULL), "pthread_create");
	wl_check(pthread_join(s, NULL), "pthread_join");
	wl_check(pthread_join(w, NULL), "pthread_join");
	return 0;
}
