/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The wall-clock budget: where each thread's (and process's) time went.
 *
 *     wall = oncpu + runq + sum(blocked[reason]) + unaccounted - excess
 *
 * From the rows: each row's off_ns splits into a run-queue part and a blocked
 * part. The run-queue part is the row's runq_ns when the profile knows the
 * split (profile__runq_known), and all of off_ns when the row's reason is
 * runqueue (preempted, yielding, cond_resched); the blocked part is the rest,
 * filed under the row's reason (reasons.h).
 *
 * With the kernel's own accounting (profile__thread_time: schedstat), wall,
 * oncpu and runq are that ground truth (oncpu less idle_exit_ns: the CPU's
 * wake-ups from idle, which the kernel counts as the woken thread's run and
 * the rows as its wait) and
 *
 *     unaccounted = wall - oncpu - runq - blocked   (when positive; else 0)
 *     excess      = the amount by which that is negative (rows claim more than
 *                   the kernel saw: a collector that cannot split run-queue
 *                   time counts it twice, in blocked and in runq)
 *     coverage    = off_ns / (wall - oncpu)
 *
 * the share of the kernel's off-CPU time that the rows explain. Above 1 the
 * rows hold more off-CPU time than the kernel saw (an overcount: on-CPU +
 * run queue + blocked exceed the wall time, excess says by how much); it is
 * kept as it is, never clamped to 1. Without it,
 * wall and oncpu are 0, runq is the rows' run-queue part, unaccounted and
 * excess are 0, and coverage is -1 (unknown): only what the rows say.
 *
 * A process entry sums its threads (so its wall is thread-seconds); threads
 * whose pid is unknown (0: folded input) are grouped by comm. The total sums
 * all threads. Pure computation: no I/O.
 */
#ifndef OFFCPU_ANALYZE_BUDGET_H
#define OFFCPU_ANALYZE_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/reasons.h"
#include "model/profile.h"

struct budget_entry {
	int pid; /* 0 when unknown */
	int tid; /* 0 for a process or the total */
	const char *
		comm; /* the profile's; a process: its main thread's (tid == pid), else its first */
	size_t nr_threads;
	bool time_known; /* wall/oncpu from schedstat for every thread here */
	uint64_t wall_ns;
	uint64_t oncpu_ns; /* schedstat's, less the CPU's wake-ups from idle (idle_exit_ns) */
	uint64_t runq_ns;  /* schedstat's when time_known, else the rows' */
	uint64_t blocked_ns[REASON__COUNT];
	uint64_t blocked_total_ns;
	uint64_t unaccounted_ns;
	uint64_t excess_ns;
	uint64_t off_ns;       /* the rows' off-CPU time (run-queue part included) */
	uint64_t rows_runq_ns; /* the rows' run-queue part */
	uint64_t count;	       /* off-CPU intervals */
	double coverage;       /* from 0, above 1 when the rows overcount; -1 when not known */
};

struct budget {
	struct budget_entry total;
	/* Sorted by off_ns descending, then pid/tid ascending. */
	struct budget_entry *procs;
	size_t nr_procs;
	struct budget_entry *threads;
	size_t nr_threads;
	bool runq_known; /* the rows split run-queue time (profile__runq_known) */
};

/* NULL and errno (ENOMEM, EOVERFLOW) on failure. */
struct budget *budget__new(const struct profile *p);
void budget__free(struct budget *b);

/*
 * Sum entry e (a thread's or a process's) into the aggregate a and settle
 * a's derived fields (coverage, unaccounted): for groups the budget does not
 * make itself, such as processes by name (analyze/procgroups.h).
 */
void budget_entry__add(struct budget_entry *a, const struct budget_entry *e);

/*
 * The reason with most off-CPU time in e: blocked time by reason, and the
 * run-queue time as REASON_RUNQUEUE, as the reason table adds them up
 * (REASON_OTHER when none).
 */
enum reason budget_entry__top_reason(const struct budget_entry *e);

#endif
