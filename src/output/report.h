/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The terminal report: what `offcpu report` prints.
 *
 * Text, in this order:
 *   1. the integrity banner, when in says the capture is not complete:
 *      partial, each real loss once with its count and affected time (those
 *      below the threshold marked so); unknown, the message. Then, plainly,
 *      not as losses: the waits in progress at the window's edges, an
 *      interrupt, and in a complete capture the losses below the threshold.
 *      Nothing else comes before them.
 *   2. one line of totals; then, when the unwinder marks the stacks it
 *      could not finish and less than COMPLETENESS_WARN_SHARE of the time
 *      with a user stack is in complete ones (analyze/completeness.h), one
 *      warning: "user stacks: 71.0% of off-CPU time in complete stacks;
 *      incomplete:", then the three largest (binary, reason) one a line,
 *      "   22.0%  no CFI in libfoo.so", shares of the time with a user
 *      stack. And when frames without a name hold at least 10% of all
 *      off-CPU time, a line saying how much;
 *   3. blocked time by reason (reasons.h), largest first, each with the
 *      details rules gave part of it (lock: lwlock, heavyweight) under it;
 *   4. the wall-clock budget (budget.h): processes grouped by name
 *      (procgroups.h), largest off-CPU time first, o->max_procs names; a
 *      name of one process is that process with its threads indented under
 *      it; a name of several is one line, "postgres (9 processes, 23
 *      threads)", with up to o->max_threads of its processes under it (the
 *      first such name: each with its threads); the names left over are one
 *      line, "(N more process names: T off-CPU)"; wall, on-CPU, run queue, blocked,
 *      unaccounted, coverage and the main reason. "-" where not known; an
 *      overcount (coverage above 100%, shown as it is, and unaccounted time
 *      below 0) gets two lines under the table that say what it means;
 *   5. the top stacks by off-CPU time: rank, the stack's reason (what its
 *      frames say: "lock" or "lock: heavyweight"), time, share of all
 *      off-CPU time, intervals, the thread with most time on it; then the
 *      leaf-most meaningful kernel frames (scheduler plumbing skipped) and the
 *      user frames nearest the syscall (or from the one a rule matched),
 *      innermost first, joined by " <- ";
 *   6. with o->timeline, last: "Woken by", the waits it kept by waker
 *      (output/woken_by.h).
 * Every line fits in o->width columns; longer names end in "...". Colour
 * (ANSI SGR) only when o->color.
 *
 * With o->filter, a line "filtered: OPTIONS: N of M threads, N of M
 * processes" comes after the banner.
 *
 * JSON (o->json): the same content as data, one document:
 *   { "integrity": {status, message, lost_total, losses: [{name, count,
 *     affected_ns}]} | null,
 *     "filter": {pids: [..], comms: [..], threads, threads_total, processes,
 *       processes_total} | null,
 *     "totals": {off_ns, blocked_ns, runq_ns, count, threads, processes, runq_known},
 *     "reasons": [{reason, ns, share,      (runqueue: the rows' run-queue part)
 *       details: [{detail, ns, share}]}],
 *     "budget": {"total": E, "processes": [E + "thread_list": [E]],
 *       "groups": [{comm, processes, pids: [..]} + E without pid/tid/comm]},
 *     "top_stacks": [{rank, reason, detail (or null), off_ns, blocked_ns, runq_ns,
 *       count, share, thread: {pid, tid, comm}, key_frames: {kernel: [..], user: [..]},
 *       frames: [{name, kind}]}],
 *     "user_stacks": the summary's object (output/completeness_json.h),
 *     "woken_by": output/woken_by.h's object, null without a timeline }
 * where E is {pid, tid, comm, threads, wall_ns, oncpu_ns, runq_ns, blocked_ns,
 * blocked_by_reason: {reason: ns}, unaccounted_ns, excess_ns, off_ns, count,
 * coverage}; values not known are null. frames are root first, as in the
 * profile; key_frames innermost first. Shares are fractions (0..1).
 *
 * in may be NULL: no integrity is known, no banner is printed and "integrity"
 * is null. Returns 0, -ENOMEM, or -EIO when writing failed.
 */
#ifndef OFFCPU_OUTPUT_REPORT_H
#define OFFCPU_OUTPUT_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "analyze/completeness.h"
#include "analyze/filter.h"
#include "model/integrity.h"
#include "model/profile.h"
#include "model/timeline.h"

struct report_opts {
	bool color;
	bool json;
	int width;		/* columns; 0 means 80, at least 40 is used */
	int top;		/* stacks; 0 means 10 */
	int max_procs;		/* budget rows for processes; 0 means 10 */
	int max_threads;	/* threads under each process; 0 means 5 */
	enum unwinder unwinder; /* the collector's (unwinder__of_collector()); 0: native */
	/* What selected the threads of p (analyze/filter.h), said in the header; NULL: none. */
	const struct filter *filter;
	const struct filter_result *filtered; /* with filter: what it kept of the capture */
	/* The capture's timeline, for the "Woken by" section (output/woken_by.h); NULL: none. */
	const struct timeline *timeline;
};

int report__write(FILE *out, const struct profile *p, const struct integrity *in,
		  const struct report_opts *o);

/*
 * The key frames of a stack, innermost first: up to max kernel frames that are
 * not scheduler plumbing, and up to max user frames. Indexes into the stack
 * (root first); returns how many were stored in each.
 */
void report__key_frames(const struct profile *p, uint32_t stack, size_t max, size_t *kernel,
			size_t *nk, size_t *user, size_t *nu);

#endif
