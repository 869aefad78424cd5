// SPDX-License-Identifier: GPL-2.0-only
/*
 * Lock contention with a known answer. "holder" takes a pthread mutex and sleeps
 * 50 ms (times SCALE) while holding it, 5 times; "waiter" blocks on the same mutex
 * (a futex wait) in each of those rounds: about 250 ms blocked in S for each thread,
 * 5 waits each. --hold-ms N sets the hold to N ms whatever SCALE, so that two runs
 * can differ in the lock hold alone (what `offcpu diff` tests compare).
 *
 * The main thread joins both, a futex wait as long as the run. --wait-pipe has it
 * first wait for the two threads to say they are done on a pipe, so that the
 * waiter's is the process's only long futex wait.
 *
 * Rounds are handed over through two atomic counters that the threads spin on (on
 * the CPU, never blocking), so the only blocking either thread does is the one the
 * test is about, and a round never starts before the other side is ready. The two
 * threads are pinned to two different CPUs when there are two: a woken waiter then
 * never queues behind a spinning holder, which would add run-queue time to both.
 */
#include <sched.h>
#include <stdatomic.h>

#include "workload.h"

#define ROUNDS 5

static double scale;
static uint64_t hold_ns; /* per round */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int locked_round;	    /* holder has the lock for round N */
static atomic_int released_round;   /* waiter got and released the lock of round N */
static int done_pipe[2] = {-1, -1}; /* --wait-pipe: each thread writes a byte when done */

static void say_done(void)
{
	if (done_pipe[1] >= 0 && write(done_pipe[1], "", 1) != 1)
		wl_die("write: %s", strerror(errno));
}

static void spin_until(atomic_int *v, int want)
{
	while (atomic_load(v) < want)
		__builtin_ia32_pause();
}

static void *holder(void *arg)
{
	struct truth t;
	int i;

	truth_begin(&t, "mutex", "holder", "S");
	for (i = 1; i <= ROUNDS; i++) {
		pthread_mutex_lock(&lock);
		atomic_store(&locked_round, i);
		wl_sleep_ns(hold_ns);
		pthread_mutex_unlock(&lock);
		spin_until(&released_round, i);
	}
	truth_end(&t, ROUNDS);
	say_done();
	return NULL;
}

static void *waiter(void *arg)
{
	struct truth t;
	int i;

	truth_begin(&t, "mutex", "waiter", "S");
	for (i = 1; i <= ROUNDS; i++) {
		spin_until(&locked_round, i);
		pthread_mutex_lock(&lock);
		pthread_mutex_unlock(&lock);
		atomic_store(&released_round, i);
	}
	truth_end(&t, ROUNDS);
	say_done();
	return NULL;
}

/* Attributes that pin a thread to the n-th CPU we may use, or none if there is none. */
static void pin_attr(pthread_attr_t *attr, int n)
{
	cpu_set_t allowed, one;

	wl_check(pthread_attr_init(attr), "pthread_attr_init");
	if (sched_getaffinity(0, sizeof(allowed), &allowed) || CPU_COUNT(&allowed) < 2)
		return;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (CPU_ISSET(cpu, &allowed) && n-- == 0) {
			CPU_ZERO(&one);
			CPU_SET(cpu, &one);
			wl_check(pthread_attr_setaffinity_np(attr, sizeof(one), &one),
				 "pthread_attr_setaffinity_np");
			return;
		}
	}
}

int main(int argc, char **argv)
{
	pthread_attr_t ha, wa;
	pthread_t h, w;
	double hold_ms = 0;
	int n = 1, wait_pipe = 0;
	char buf[2];

	/* --hold-ms and --wait-pipe are ours; wl_scale() takes the rest. */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--hold-ms") && i + 1 < argc) {
			hold_ms = wl_parse_num(argv[++i], "--hold-ms");
		} else if (!strcmp(argv[i], "--wait-pipe")) {
			wait_pipe = 1;
		} else {
			argv[n++] = argv[i];
		}
	}
	argv[n] = NULL;
	scale = wl_scale(n, argv,
			 "[--hold-ms N] [--wait-pipe] [SCALE]\n"
			 "  \"holder\" holds a mutex 5 x 50 ms * SCALE (or 5 x N ms), \"waiter\" "
			 "blocks on it;\n  --wait-pipe: main waits on a pipe, not in pthread_join");
	hold_ns = hold_ms ? hold_ms * NSEC_PER_MSEC : 50 * NSEC_PER_MSEC * scale;
	pin_attr(&ha, 0);
	pin_attr(&wa, 1);
	if (wait_pipe && pipe(done_pipe))
		wl_die("pipe: %s", strerror(errno));
	wl_start();
	wl_check(pthread_create(&h, &ha, holder, NULL), "pthread_create");
	wl_check(pthread_create(&w, &wa, waiter, NULL), "pthread_create");
	for (size_t got = 0; wait_pipe && got < sizeof(buf);) {
		ssize_t r = read(done_pipe[0], buf + got, sizeof(buf) - got);

		if (r <= 0 && !(r < 0 && errno == EINTR))
			wl_die("read: %s", r ? strerror(errno) : "end of file");
		got += r > 0 ? r : 0;
	}
	wl_check(pthread_join(h, NULL), "pthread_join");
	wl_check(pthread_join(w, NULL), "pthread_join");
	pthread_attr_destroy(&ha);
	pthread_attr_destroy(&wa);
	return 0;
}
