/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Processes grouped by name, for host-wide reports: a service runs as many
 * processes of one name (postgres, nginx, php-fpm), and the name is what a
 * user looks for among hundreds of processes.
 *
 * A group holds the budget's processes (budget.h) whose comm (the main
 * thread's, else the first thread's) is its name; its entry sums theirs
 * (pid and tid 0, comm the name, nr_threads all their threads). Groups are
 * sorted by off-CPU time (the rows' off_ns: blocked and run queue) largest
 * first, then by name; a group's processes keep the budget's order (off_ns
 * descending). Processes without a pid (folded input) are grouped by comm as
 * the budget already does, so each is its own group. Pure computation.
 */
#ifndef OFFCPU_ANALYZE_PROCGROUPS_H
#define OFFCPU_ANALYZE_PROCGROUPS_H

#include <stddef.h>

#include "analyze/budget.h"

struct proc_group {
	const char *comm;
	struct budget_entry e;
	size_t nr_procs;
	size_t *procs; /* indexes into b->procs, nr_procs of them */
};

struct proc_groups {
	struct proc_group *groups;
	size_t nr;
	size_t *members; /* the groups' procs arrays, one allocation */
};

/* NULL and errno ENOMEM on failure. */
struct proc_groups *proc_groups__new(const struct budget *b);
void proc_groups__free(struct proc_groups *gs);

#endif
