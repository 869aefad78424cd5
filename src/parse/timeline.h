/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The timeline text, reader side (writer: output/timeline.h).
 *
 * Text form (DIR/offcpu.timeline.txt), one record a line, fields separated by
 * one space:
 *
 *     offcpu-timeline 2
 *     threshold MIN_NS
 *     lost COUNT NS
 *     stack ID FRAME;FRAME;...
 *     interval START_NS DUR_NS RUNQ_NS PID TID STATE WAKER STACK_ID
 *
 * WAKER is what woke the interval: a thread's tid (0: unknown, or no wakeup),
 * or, when it does not begin with a digit or '-', the name of the interrupt
 * context whose wakeup it was ("softirq:NET_RX", "irq:timer", "irq:NAME",
 * "irq:N"; collect/wakers.h), escaped as frame names are and spaces as %20.
 * Version 1 files, whose WAKER is always a tid, read the same way.
 * threshold and lost carry struct timeline_info (the last of each wins; a
 * file without them reads as zeros).
 * The first line names the format and its version; a reader refuses any other
 * version. A stack line defines a file-local stack id (the writer uses the
 * profile's id), root first; each FRAME is a kind letter, ':' and the name:
 * "u:" user, "k:" kernel, "m:" a missing-stack placeholder, "i:" an inlined
 * user function (profile.h FRAME_INLINE); '%', ';' and
 * bytes below 0x20 in a name are written as %XX so any name survives. An empty
 * stack is "stack ID" with nothing after the id. A stack line comes before the
 * first interval that uses it. STATE is the one-letter state (S D R O ?).
 * Blank lines and lines starting with '#' are skipped.
 */
#ifndef OFFCPU_PARSE_TIMELINE_H
#define OFFCPU_PARSE_TIMELINE_H

#include <stdio.h>

#include "model/profile.h"
#include "model/timeline.h"
#include "parse/parse.h"

#define TIMELINE_FORMAT_VERSION 2
/* The oldest version the reader still reads. */
#define TIMELINE_FORMAT_OLDEST 1

/*
 * Read the text form, appending intervals to t and interning their frames and
 * stacks into p (so STACK ids in the file need not be p's ids). Follows the
 * parser contract of parse/parse.h: malformed lines (a bad field, an interval
 * naming an undefined stack) are counted in stats and skipped; returns 0 at
 * EOF. -EPROTO when the first line is not "offcpu-timeline V" with V from
 * TIMELINE_FORMAT_OLDEST to TIMELINE_FORMAT_VERSION (nothing is read then), -ENOMEM, -EIO. stats
 * may be NULL.
 */
int timeline__parse(FILE *in, struct profile *p, struct timeline *t, struct parse_stats *stats);

#endif
