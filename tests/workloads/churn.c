// SPDX-License-Identifier: GPL-2.0-only
/*
 * Many short-lived threads, one after another: new aggregation keys as fast
 * as a process makes them. The main thread starts COUNT threads "churn"
 * (default 2000) in turn and joins each; a thread sleeps 100 us and exits.
 * Every thread is a new tid, so each adds keys of its own (its first run, its
 * sleep) and the main thread's join adds none after the first: about two
 * keys a thread, thousands a second. No truth lines: the threads are too
 * short for schedstat's window to mean much; what a test checks is that no
 * key was lost.
 */
#include "workload.h"

static void *churn(void *arg)
{
	(void)arg;
	wl_set_comm("churn");
	wl_sleep_ns(100 * 1000);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *pos[1];
	long count;

	wl_args(argc, argv,
		"[COUNT]\n  COUNT threads (default 2000) one after another, each a 100 us "
		"nanosleep",
		pos, 1);
	count = pos[0] ? (long)wl_parse_num(pos[0], "COUNT") : 2000;
	wl_start();
	for (long i = 0; i < count; i++) {
		pthread_t th;

		wl_check(pthread_create(&th, NULL, churn, NULL), "pthread_create");
		wl_check(pthread_join(th, NULL), "pthread_join");
	}
	return 0;
}
