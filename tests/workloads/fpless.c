// SPDX-License-Identifier: GPL-2.0-only
/*
 * Known user stacks in a program without frame pointers: the ground truth of the
 * .eh_frame unwinder (tests/e2e/unwind.sh). Built `-O2 -fomit-frame-pointer`
 * (the Makefile's own rule for it), like most of what a distribution ships, so a
 * frame-pointer walk from a libc leaf finds nothing of this program.
 *
 * Each blocking path goes through three functions of its own, so a stack that
 * names them root to leaf is complete and one that misses a level is not:
 *
 *   "sleeper"   sleeper_top  -> sleeper_mid  -> sleeper_leaf  -> clock_nanosleep
 *   "holder"    holder_top   -> holder_mid   -> holder_leaf   -> clock_nanosleep,
 *               holding the mutex, then signalling the condition variable
 *   "locker"    locker_top   -> locker_mid   -> locker_leaf   -> pthread_mutex_lock
 *               (a futex wait: the holder has the mutex)
 *   "cvwaiter"  cvwait_top   -> cvwait_mid   -> cvwait_leaf   -> pthread_cond_wait
 *   main        join_top     -> join_mid     -> join_leaf     -> pthread_join
 *
 * ROUNDS rounds of 20 ms * SCALE each; every thread reports its truth (workload.h).
 * The functions are noipa (no inlining, no clones with suffixed names) and do some
 * work after their call, so the compiler turns none of the calls into a jump: every
 * level keeps a frame of its own.
 */
#include <stdatomic.h>

#include "workload.h"

#define ROUNDS 10
#define STEP __attribute__((noipa))

static uint64_t step_ns;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cv_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int cv_round;		/* under cv_lock: rounds the holder has signalled */
static atomic_int held_round;	/* the holder has the mutex for round N */
static volatile long work_done; /* written after each call: no call is a tail call */

static STEP void sleeper_leaf(void)
{
	struct timespec ts = {.tv_sec = step_ns / NSEC_PER_SEC, .tv_nsec = step_ns % NSEC_PER_SEC};

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
	work_done++;
}

static STEP void sleeper_mid(void)
{
	sleeper_leaf();
	work_done++;
}

static STEP void sleeper_top(void)
{
	for (int i = 0; i < ROUNDS; i++)
		sleeper_mid();
	work_done++;
}

static STEP void holder_leaf(void)
{
	struct timespec ts = {.tv_sec = step_ns / NSEC_PER_SEC, .tv_nsec = step_ns % NSEC_PER_SEC};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	work_done++;
}

static STEP void holder_mid(int round)
{
	pthread_mutex_lock(&lock);
	atomic_store(&held_round, round);
	holder_leaf();
	pthread_mutex_unlock(&lock);
	pthread_mutex_lock(&cv_lock);
	cv_round = round;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&cv_lock);
	work_done++;
}

static STEP void holder_top(void)
{
	for (int i = 1; i <= ROUNDS; i++)
		holder_mid(i);
	work_done++;
}

static STEP void locker_leaf(void)
{
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
	work_done++;
}

static STEP void locker_mid(int round)
{
	/* On the CPU until the holder has the mutex, so the lock below blocks. */
	while (atomic_load(&held_round) < round)
		__builtin_ia32_pause();
	locker_leaf();
	work_done++;
}

static STEP void locker_top(void)
{
	for (int i = 1; i <= ROUNDS; i++)
		locker_mid(i);
	work_done++;
}

static STEP void cvwait_leaf(int round)
{
	pthread_mutex_lock(&cv_lock);
	while (cv_round < round)
		pthread_cond_wait(&cv, &cv_lock);
	pthread_mutex_unlock(&cv_lock);
	work_done++;
}

static STEP void cvwait_mid(int round)
{
	cvwait_leaf(round);
	work_done++;
}

static STEP void cvwait_top(void)
{
	for (int i = 1; i <= ROUNDS; i++)
		cvwait_mid(i);
	work_done++;
}

static void *sleeper(void *arg)
{
	struct truth t;

	truth_begin(&t, "fpless", "sleeper", "S");
	sleeper_top();
	truth_end(&t, ROUNDS);
	return NULL;
}

static void *holder(void *arg)
{
	struct truth t;

	truth_begin(&t, "fpless", "holder", "S");
	holder_top();
	truth_end(&t, ROUNDS);
	return NULL;
}

static void *locker(void *arg)
{
	struct truth t;

	truth_begin(&t, "fpless", "locker", "S");
	locker_top();
	truth_end(&t, ROUNDS);
	return NULL;
}

static void *cvwaiter(void *arg)
{
	struct truth t;

	truth_begin(&t, "fpless", "cvwaiter", "S");
	cvwait_top();
	truth_end(&t, ROUNDS);
	return NULL;
}

static STEP void join_leaf(pthread_t t)
{
	wl_check(pthread_join(t, NULL), "pthread_join");
	work_done++;
}

static STEP void join_mid(pthread_t t)
{
	join_leaf(t);
	work_done++;
}

static STEP void join_top(pthread_t *t, int n)
{
	for (int i = 0; i < n; i++)
		join_mid(t[i]);
	work_done++;
}

int main(int argc, char **argv)
{
	void *(*fn[])(void *) = {sleeper, holder, locker, cvwaiter};
	struct truth truth;
	pthread_t t[4];
	double scale;

	scale = wl_scale(argc, argv,
			 "[SCALE]\n"
			 "  threads sleep, wait on a mutex and on a condition variable through\n"
			 "  three functions each, 10 rounds of 20 ms * SCALE; main joins them");
	step_ns = 20 * NSEC_PER_MSEC * scale;
	wl_start();
	truth_begin(&truth, "fpless", "fpless", "S");
	for (int i = 0; i < 4; i++)
		wl_check(pthread_create(&t[i], NULL, fn[i], NULL), "pthread_create");
	join_top(t, 4);
	truth_end(&truth, 4);
	return 0;
}
