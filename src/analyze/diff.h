/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Two captures compared: what got slower, where.
 *
 * Each capture becomes a diff_side: totals, blocked time by reason, and
 * off-CPU time per thread (by comm) and per stack. Stacks of two profiles
 * are matched by their frames' NAMES (kind and name, offsets and compiler
 * suffixes removed as in reasons__clean_name), never by ids; threads by comm,
 * since tids differ from run to run. Equal keys within one side are summed.
 * Never by raw addresses either: a run of frames without a name (raw "0x7f..",
 * "[unknown]", "[unsymbolized ...]": model/frame_name.h), whose addresses ASLR
 * moves and whose number a frame-pointer walk varies, is one "[unsymbolized]"
 * frame of the key; "[bin+0xoff]" frames are file-relative, stable, and stay.
 *
 * A side from a profile is exact. A side from offcpu.summary.json
 * (docs/summary.md) knows the totals and the threads fully, but only the
 * summary's top stacks: its stacks, and the reasons computed from them, cover
 * part of the time (diff_side__stacks_partial()).
 *
 * The accounting is budget.h's: a row's run-queue part is its runq_ns (when
 * the collector splits) or all of it when its reason is runqueue; the rest is
 * blocked, under the row's reason.
 *
 * Normalization divides each side's values by that side's total off-CPU time
 * (DIFF_NORM_TOTAL: shares) or by its wall time (DIFF_NORM_WALL: seconds off
 * per second of wall time; interval counts: shares of all intervals, or
 * intervals per second), so runs of different length compare. Items are
 * sorted by the absolute change of off-CPU time (normalized when asked),
 * largest first, then by name.
 *
 * Gates (--fail-on), one expression each:
 *
 *     METRIC>THRESHOLD
 *     METRIC     blocked | runq | off | count | reason:NAME | stack:REGEX
 *     THRESHOLD  +N%  (relative growth)  |  +Nns, +Nus, +Nms, +Ns  (absolute
 *                growth of time)  |  +N  (absolute growth of count)
 *
 * reason:NAME is that reason's blocked time (runqueue: run-queue time);
 * stack:REGEX is the blocked time of every stack whose frame names joined
 * root first with ';' ("start_thread;worker;__GI___lll_lock_wait;
 * futex_do_wait;...") match the POSIX extended regular expression: the
 * same rule as reason:NAME, so that the stacks of a reason add up to its
 * gate, and a stack whose threads only waited longer for a CPU does not
 * cross a gate on its wait (runq says that). A gate is
 * crossed when new - base exceeds the threshold (with +N%: when
 * new > base * (1 + N/100), and any growth from 0). With a normalization,
 * +N% compares normalized values; time thresholds always compare raw time.
 */
#ifndef OFFCPU_ANALYZE_DIFF_H
#define OFFCPU_ANALYZE_DIFF_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze/reasons.h"
#include "model/profile.h"

struct diff_side;

/* NULL and errno on failure. */
struct diff_side *diff_side__from_profile(const struct profile *p);
/*
 * Read a summary (json-c). Returns 0, -EINVAL when it is not JSON or not a
 * summary (why says what is wrong), -ENOMEM.
 */
int diff_side__read_summary(FILE *in, struct diff_side **out, char *why, size_t why_len);
void diff_side__free(struct diff_side *s);
/* The side's wall time (0: not known); from schedstat or the summary's workload. */
uint64_t diff_side__wall_ns(const struct diff_side *s);
void diff_side__set_wall_ns(struct diff_side *s, uint64_t wall_ns);
bool diff_side__stacks_partial(const struct diff_side *s);

enum diff_norm {
	DIFF_NORM_NONE = 0,
	DIFF_NORM_TOTAL,
	DIFF_NORM_WALL,
};
const char *diff_norm__name(enum diff_norm n); /* "none", "total", "wall" */

struct diff_value {
	uint64_t base, new;
	double base_norm, new_norm; /* value / the side's denominator; 0 when it is 0 */
};

enum diff_item_kind { DIFF_REASON = 0, DIFF_THREAD, DIFF_STACK };

struct diff_item {
	enum diff_item_kind kind;
	/* reason name, comm, or the stack's frame names root first joined by ';' */
	const char *name;
	/* stacks: frame kinds, one letter a frame ('u', 'k', 'm'), as long as the frames */
	const char *kinds;
	enum reason reason; /* stacks: what its frames say (reasons.h; new side, else base) */
	struct diff_value off, blocked, runq, count;
	bool only_base, only_new; /* present on one side only */
};

struct diff {
	enum diff_norm norm;
	/*
	 * Denominators of the normalized values: total off-CPU time (or wall
	 * time) for times, total count (or wall seconds) for counts.
	 */
	double base_denom, new_denom, base_count_denom, new_count_denom;
	struct diff_value off, blocked, runq, count;
	struct diff_item *reasons, *threads, *stacks;
	size_t nr_reasons, nr_threads, nr_stacks;
	bool stacks_partial; /* a side knew only its top stacks */
	/*
	 * Both sides split run-queue time from blocked time; else a side's
	 * run-queue time is only its preempted stacks' (BCC, bpftrace).
	 */
	bool runq_known;
};

/*
 * Compare base with new. DIFF_NORM_WALL needs both sides' wall time:
 * -EINVAL otherwise. Returns 0 or -errno; *out is NULL on error.
 */
int diff__new(const struct diff_side *base, const struct diff_side *new, enum diff_norm norm,
	      struct diff **out);
void diff__free(struct diff *d);

/* The change of a value (normalized when the diff is), and its relative change (inf from 0). */
double diff_value__delta(const struct diff *d, const struct diff_value *v);
double diff_value__rel(const struct diff *d, const struct diff_value *v);

enum diff_metric {
	DIFF_METRIC_BLOCKED = 0,
	DIFF_METRIC_RUNQ,
	DIFF_METRIC_OFF,
	DIFF_METRIC_COUNT,
	DIFF_METRIC_REASON,
	DIFF_METRIC_STACK,
};

struct diff_gate {
	char expr[256];
	enum diff_metric metric;
	enum reason reason; /* DIFF_METRIC_REASON */
	regex_t re;	    /* DIFF_METRIC_STACK */
	bool has_re;
	bool percent; /* threshold is relative */
	double pct;   /* +N% */
	uint64_t abs; /* +N in ns (time metrics) or intervals (count) */
};

/* Parse one expression. 0, or -EINVAL with why set to a one-line message. */
int diff_gate__parse(const char *expr, struct diff_gate *g, char *why, size_t why_len);
void diff_gate__free(struct diff_gate *g);

struct diff_gate_result {
	struct diff_value v; /* the metric on both sides */
	bool crossed;
	size_t matched_stacks; /* stack:REGEX: stacks that matched (either side) */
};
void diff_gate__eval(const struct diff_gate *g, const struct diff *d, struct diff_gate_result *r);

#endif
