// SPDX-License-Identifier: GPL-2.0-only
/*
 * Run-queue wait without any blocking: "spin-a" and "spin-b" are pinned to the same
 * CPU and spin for 300 ms (times SCALE) of wall time each, so each spends about half
 * of it on the CPU and half runnable but waiting (runq_ns ~ 150 ms, blocked_ns ~ 0,
 * no waits). They share the first CPU the process may run on, or the CPU given.
 */
#include <sched.h>

#include "workload.h"

static double scale;

static void *spinner(void *arg)
{
	struct truth t;

	truth_begin(&t, "preempt", arg, "R");
	wl_spin_ns(300 * NSEC_PER_MSEC * scale);
	truth_end(&t, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	static const char *const names[] = {"spin-a", "spin-b"};
	const char *pos[2];
	pthread_attr_t attr;
	pthread_t th[2];
	cpu_set_t set;
	int cpu = -1;

	wl_args(argc, argv,
		"[SCALE [CPU]]\n  \"spin-a\" and \"spin-b\" pinned to one CPU spin 300 ms * SCALE",
		pos, 2);
	scale = pos[0] ? wl_parse_num(pos[0], "SCALE") : 1.0;
	if (sched_getaffinity(0, sizeof(set), &set))
		wl_die("sched_getaffinity: %s", strerror(errno));
	if (pos[1]) {
		cpu = atoi(pos[1]);
		if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &set))
			wl_die("CPU %s is not one this process may run on", pos[1]);
	} else {
		for (int i = 0; i < CPU_SETSIZE && cpu < 0; i++)
			if (CPU_ISSET(i, &set))
				cpu = i;
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	wl_check(pthread_attr_init(&attr), "pthread_attr_init");
	/* Pinned from birth, so neither thread ever runs alone on another CPU. */
	wl_check(pthread_attr_setaffinity_np(&attr, sizeof(set), &set),
		 "pthread_attr_setaffinity_np");
	wl_start();
	for (int i = 0; i < 2; i++)
		wl_check(pthread_create(&th[i], &attr, spinner, (void *)names[i]),
			 "pthread_create");
	for (int i = 0; i < 2; i++)
		wl_check(pthread_join(th[i], NULL), "pthread_join");
	pthread_attr_destroy(&attr);
	return 0;
}
