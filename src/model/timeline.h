/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The timeline: individual off-CPU intervals, in the order a collector saw
 * them, for writers that show time (the Chrome Trace export). The profile
 * aggregates the same intervals into rows; the timeline keeps each one that a
 * collector chose to emit (the native collector: those above a threshold), so
 * the timeline is a subset of the profile's time, never a second source of it.
 *
 * An interval names its stack by profile stack id, so a timeline is only
 * meaningful next to the profile that interned those stacks. The list is
 * append-only; indices are stable for the timeline's life and pointers from
 * timeline__at() stay valid until the next append.
 *
 * Text form (DIR/offcpu.timeline.txt), one record a line, fields separated by
 * one space:
 *
 *     offcpu-timeline 1
 *     threshold MIN_NS
 *     lost COUNT NS
 *     stack ID FRAME;FRAME;...
 *     interval START_NS DUR_NS RUNQ_NS PID TID STATE WAKER_TID STACK_ID
 *
 * threshold and lost carry struct timeline_info (the last of each wins; a
 * file without them reads as zeros).
 * The first line names the format and its version; a reader refuses any other
 * version. A stack line defines a file-local stack id (the writer uses the
 * profile's id), root first; each FRAME is a kind letter, ':' and the name:
 * "u:" user, "k:" kernel, "m:" a missing-stack placeholder; '%', ';' and
 * bytes below 0x20 in a name are written as %XX so any name survives. An empty
 * stack is "stack ID" with nothing after the id. A stack line comes before the
 * first interval that uses it. STATE is the one-letter state (S D R O ?).
 * Blank lines and lines starting with '#' are skipped.
 */
#ifndef OFFCPU_MODEL_TIMELINE_H
#define OFFCPU_MODEL_TIMELINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/profile.h"
#include "parse/parse.h"

#define TIMELINE_FORMAT_VERSION 1

struct timeline_interval {
	uint64_t start_ns; /* switch-out time, CLOCK_MONOTONIC */
	uint64_t dur_ns;   /* switch-out to switch-in */
	uint64_t runq_ns;  /* part of dur_ns spent runnable (<= dur_ns) */
	int pid;
	int tid;
	uint32_t stack; /* profile stack id */
	enum offcpu_state state;
	int waker_tid; /* the thread that woke this one; 0 unknown */
};

/* The timeline as a whole, as its collector knew it. */
struct timeline_info {
	uint64_t min_ns;  /* intervals shorter than this were not kept */
	uint64_t lost;	  /* intervals at least min_ns long the collector could not keep */
	uint64_t lost_ns; /* (they are in the profile all the same) */
};

struct timeline;

struct timeline *timeline__new(void);
void timeline__set_info(struct timeline *t, const struct timeline_info *info);
const struct timeline_info *timeline__info(const struct timeline *t);
void timeline__free(struct timeline *t);

/*
 * Append a copy of *iv. -EINVAL when runq_ns > dur_ns, start_ns + dur_ns wraps,
 * or the state is out of range; -ENOMEM.
 */
int timeline__append(struct timeline *t, const struct timeline_interval *iv);
size_t timeline__nr(const struct timeline *t);
/* The idx-th appended interval; NULL when idx >= timeline__nr(). */
const struct timeline_interval *timeline__at(const struct timeline *t, size_t idx);

/*
 * Sorted access: fills a caller-freed (free()) array of timeline__nr()
 * indices ordered by (tid, start_ns), ties by append order. *idx is NULL
 * when the timeline is empty. Returns 0 or -ENOMEM.
 */
int timeline__sorted(const struct timeline *t, size_t **idx);

/*
 * Write t in the text form above; every interval's stack must be a stack of p
 * (-EINVAL otherwise, before anything is written). Returns 0, -EINVAL,
 * -ENOMEM or -EIO.
 */
int timeline__write(FILE *out, const struct timeline *t, const struct profile *p);

/*
 * Read the text form, appending intervals to t and interning their frames and
 * stacks into p (so STACK ids in the file need not be p's ids). Follows the
 * parser contract of parse/parse.h: malformed lines (a bad field, an interval
 * naming an undefined stack) are counted in stats and skipped; returns 0 at
 * EOF. -EPROTO when the first line is not "offcpu-timeline 1" (nothing is
 * read then), -ENOMEM, -EIO. stats may be NULL.
 */
int timeline__parse(FILE *in, struct profile *p, struct timeline *t, struct parse_stats *stats);

#endif
