// SPDX-License-Identifier: GPL-2.0-only
/*
 * A process that hangs, the case an off-CPU profiler exists for: the main
 * thread blocks in read() of a pipe nobody writes to (hung_read), thread
 * "idler" waits on a condition variable nobody signals (idle_wait), and with
 * "ticker" a third thread sleeps 20 ms at a time (the only one that runs).
 * Runs until killed; prints "ready" on stdout once every thread is in place.
 *
 *   hung          main thread and idler asleep forever
 *   hung ticker   ... and a ticker
 *   hung signal   the main thread's read() is in a signal handler
 *                 (on_signal), run when raise_signal() raised SIGUSR1
 */
#include "workload.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static int fds[2];

static __attribute__((noinline)) void idle_wait(void)
{
	pthread_mutex_lock(&lock);
	for (;;)
		pthread_cond_wait(&never, &lock);
}

static void *idler(void *arg)
{
	wl_set_comm("idler");
	idle_wait();
	return NULL;
}

static void *ticker(void *arg)
{
	wl_set_comm("ticker");
	for (;;)
		wl_sleep_ns(20 * NSEC_PER_MSEC);
	return NULL;
}

static __attribute__((noinline)) void hung_read(void)
{
	char c;

	for (;;)
		if (read(fds[0], &c, 1) >= 0 || errno != EINTR)
			wl_die("read from a pipe nobody writes to returned");
}

static void on_signal(int sig)
{
	hung_read();
}

static __attribute__((noinline)) void raise_signal(void)
{
	signal(SIGUSR1, on_signal);
	raise(SIGUSR1);
}

int main(int argc, char **argv)
{
	const char *pos[1];
	pthread_t th;

	wl_args(argc, argv,
		"[ticker|signal]\n  main thread in read(), \"idler\" in pthread_cond_wait()", pos,
		1);
	wl_start();
	if (pipe(fds))
		wl_die("pipe: %s", strerror(errno));
	wl_check(pthread_create(&th, NULL, idler, NULL), "pthread_create");
	if (pos[0] && !strcmp(pos[0], "ticker"))
		wl_check(pthread_create(&th, NULL, ticker, NULL), "pthread_create");
	else if (pos[0] && strcmp(pos[0], "signal"))
		wl_die("unknown argument '%s'; see --help", pos[0]);
	/* Let the threads reach their waits before saying so. */
	wl_sleep_ns(50 * NSEC_PER_MSEC);
	printf("ready\n");
	fflush(stdout);
	if (pos[0] && !strcmp(pos[0], "signal"))
		raise_signal();
	hung_read();
	return 0;
}
