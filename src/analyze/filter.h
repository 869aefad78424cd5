/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Thread filters shared by report, flamegraph and export: --pid, --comm and
 * --top select threads of a profile, and filter__apply() makes a copy of the
 * profile (and of its timeline, for the Chrome trace) that holds only them,
 * so every writer draws the selection without knowing about it.
 *
 *   --pid PID[,PID...]  threads of those processes (thread-group ids)
 *   --comm NAME         threads whose process name or own name is NAME,
 *                       exactly (case matters); repeatable
 *   --top N             after the above, only the N process names with most
 *                       off-CPU time (rows' off_ns, blocked and run queue)
 *
 * Values of one option are alternatives (any of them); different options must
 * all hold. A process's name is the name of its main thread (tid == pid) when
 * the profile has it, else that of its first thread (the rule budget.h uses);
 * threads whose pid is unknown (0: folded input) are their own process,
 * named by their comm, and no --pid selects them.
 *
 * The copy keeps, for each selected thread, its rows and its thread time
 * (schedstat), in the original's thread order; frames and stacks are only
 * those the kept rows and intervals use (so their ids differ from p's); the
 * timeline keeps the intervals of selected threads (by pid and tid) with its
 * info. Pure computation: no I/O.
 */
#ifndef OFFCPU_ANALYZE_FILTER_H
#define OFFCPU_ANALYZE_FILTER_H

#include <stdbool.h>
#include <stddef.h>

#include "model/profile.h"
#include "model/timeline.h"

struct filter;

/* NULL and errno ENOMEM on failure. */
struct filter *filter__new(void);
void filter__free(struct filter *f);

/* "PID[,PID...]", each from 1: 0, -EINVAL (bad list), -ENOMEM. */
int filter__add_pids(struct filter *f, const char *list);
/* An exact process or thread name (not empty): 0, -EINVAL, -ENOMEM. */
int filter__add_comm(struct filter *f, const char *name);
/* Keep the n process names with most off-CPU time; 0: no limit. */
void filter__set_top(struct filter *f, size_t n);

/* Whether any option was given (f may be NULL: no). */
bool filter__active(const struct filter *f);
/* The options as given, "--pid 12,13 --comm sleep --top 2" ("" when none). */
void filter__describe(const struct filter *f, char *buf, size_t size);
/* The selection's parts, for JSON: the pids and names in the order given. */
const int *filter__pids(const struct filter *f, size_t *n);
const char *const *filter__comms(const struct filter *f, size_t *n);
size_t filter__top(const struct filter *f);

/*
 * Process names, one per thread of p (thread id order): names[t] for thread t
 * (pointers into p). names has profile__nr_threads(p) slots.
 */
void filter__process_names(const struct profile *p, const char **names);

/* What a filter kept, of what the profile held (threads and processes with rows or times). */
struct filter_result {
	size_t threads, threads_total;
	size_t procs, procs_total;
};

/*
 * The selected part of p (and of t, which may be NULL) as new objects in
 * *out_p and *out_t (NULL when t is). An inactive filter copies everything.
 * Returns 0, -ESRCH when no thread is selected (nothing is made; *res is
 * filled all the same), -ENOMEM, -EOVERFLOW; res may be NULL.
 */
int filter__apply(const struct filter *f, const struct profile *p, const struct timeline *t,
		  struct profile **out_p, struct timeline **out_t, struct filter_result *res);

#endif
