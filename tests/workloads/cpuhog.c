// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pure on-CPU loop for SECONDS (default 0.5) in the main thread "cpuhog": no system
 * call inside the loop, so the only off-CPU time is preemption by others; for
 * "nothing (or almost nothing) to report" tests.
 */
#include "workload.h"

int main(int argc, char **argv)
{
	const char *pos[1];
	struct truth t;
	double secs;

	wl_args(argc, argv, "[SECONDS]\n  spin on the CPU for SECONDS (default 0.5)", pos, 1);
	secs = pos[0] ? wl_parse_num(pos[0], "SECONDS") : 0.5;
	wl_start();
	truth_begin(&t, "cpuhog", "cpuhog", "R");
	wl_spin_ns(secs * NSEC_PER_SEC);
	truth_end(&t, 0);
	return 0;
}
