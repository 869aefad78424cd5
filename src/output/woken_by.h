/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The report's "Woken by" section: what ended the waits a timeline
 * (record --timeline) kept, by waker, largest woken off-CPU time first.
 * A waker is a thread ("COMM TID", its comm from the profile, else "tid
 * TID") or an interrupt context by name ("softirq:NET_RX", "irq:timer";
 * collect/wakers.h). Preempted intervals are left out (nothing woke them);
 * waits whose waker is not known add up in one "(unknown)" row.
 *
 * Text:
 *   Woken by (the timeline's N waits of at least MIN: T)   (no "of at least" for MIN 0)
 *     softirq:NET_RX        3.20s   80.0%   12345 waits
 *     writer 1234           ...
 *     (unknown)             ...
 *     (K more wakers: T)
 * JSON ("woken_by", null without a timeline):
 *   {min_ns, waits, off_ns, wakers: [{kind: "thread"|"interrupt", name,
 *    pid, tid (threads only), off_ns, blocked_ns, count, share}],
 *    unknown: {off_ns, blocked_ns, count, share}}
 * shares of off_ns; every waker is listed in JSON, top in text.
 */
#ifndef OFFCPU_OUTPUT_WOKEN_BY_H
#define OFFCPU_OUTPUT_WOKEN_BY_H

#include <stdbool.h>
#include <stdio.h>

#include "model/profile.h"
#include "model/timeline.h"
#include "util/json_writer.h"

struct woken_by;

/* The wakers of t's intervals; p names the threads. NULL with errno on ENOMEM. */
struct woken_by *woken_by__new(const struct profile *p, const struct timeline *t);
void woken_by__free(struct woken_by *wb);
/* The text section, top wakers (0: 10), lines of width columns. wb NULL: nothing. */
void woken_by__write_text(const struct woken_by *wb, FILE *out, int width, bool color, int top);
/* key: the object above, or null when wb is NULL. */
void woken_by__write_json(const struct woken_by *wb, struct jw *w, const char *key);

#endif
