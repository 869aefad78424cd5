/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Chrome Trace Event export: the timeline's off-CPU intervals as a JSON trace
 * for Perfetto (ui.perfetto.dev) and chrome://tracing, one track per thread.
 *
 *   {"displayTimeUnit":"ns","traceEvents":[...],"otherData":{...}}
 *
 *   "M" events   process_name per pid (the comm of the thread whose tid is the
 *                pid, else of any thread of it, else "pid N") and thread_name
 *                per tid (its comm in the profile, else "tid N")
 *   "X" events   one per interval, cat "offcpu", ts and dur in microseconds
 *                with three decimals (ns precision), ts relative to the
 *                earliest interval (otherData.monotonic_base_ns is that
 *                interval's CLOCK_MONOTONIC start); name = the interval's
 *                reason when a reason classifier is built in, else the
 *                leaf-most frame that is not scheduler or tracing plumbing
 *                (schedule*, __schedule, io_schedule*, preempt_schedule*,
 *                finish_task_switch*, __traceiter_*, bpf_*), else the leaf
 *                frame, else the state's name;
 *                args {state, off_ns, runq_ns, waker_tid, waker, stack}:
 *                waker (only when known) names what woke the interval:
 *                "COMM TID" (or "tid TID") for a thread, the interrupt
 *                context's name ("softirq:NET_RX", "irq:timer") else, when
 *                waker_tid is 0; stack is the frames root first joined by
 *                ';' with "-" before the first kernel frame and "_[i]" after
 *                an inlined function, as in folded stacks
 *   wakeups      each interval with a known waker: an "X" of cat "wakeup"
 *                on the waker's track at the wakeup (the interval's end less
 *                its run-queue part), up to 1 us long and never crossing
 *                another slice of that track (named "wakeup", or the
 *                interrupt's name; wakeups of one track at one time share
 *                it), and a flow, id from 1: "s" inside that slice, "f" with
 *                "bp":"e" strictly inside the woken interval. Interrupts have
 *                tracks of their own: pid 1 << 30 ("interrupts"), one tid per
 *                name; a waker thread the profile does not know goes under pid
 *                (1 << 30) + 1 ("other wakers"). An interval shorter than 2 ns,
 *                or a wakeup with no room for its slice, has no arrow.
 *   otherData    generator, monotonic_base_ns, intervals, overlaps_clipped,
 *                overlaps_dropped, flows
 *
 * A thread is off the CPU at most once at a time, so a thread's events never
 * overlap: an interval starting before the previous one of its tid ended is
 * clipped to start there (its args.off_ns keeps the collector's duration),
 * and one wholly inside the previous is left out; both are counted (an
 * overlap means the collector missed a switch).
 * Events are written in (tid, start) order.
 */
#ifndef OFFCPU_OUTPUT_CHROME_TRACE_H
#define OFFCPU_OUTPUT_CHROME_TRACE_H

#include <stddef.h>
#include <stdio.h>

#include "model/profile.h"
#include "model/timeline.h"

struct chrome_trace_stats {
	size_t events;	/* "X" events written */
	size_t clipped; /* intervals shortened to start where the previous one ended */
	size_t dropped; /* intervals wholly inside the previous one, left out */
	size_t flows;	/* wakeups drawn as flows */
};

/*
 * Write the trace; t may be empty (metadata-free, no events). Returns 0,
 * -EINVAL (an interval names a stack p does not have; nothing written),
 * -ENOMEM, -EIO.
 */
int chrome_trace__write(FILE *out, const struct profile *p, const struct timeline *t);
/* The same, and fills *st (may be NULL). */
int chrome_trace__write_stats(FILE *out, const struct profile *p, const struct timeline *t,
			      struct chrome_trace_stats *st);

#endif
