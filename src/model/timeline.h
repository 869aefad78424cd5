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
 * timeline__at() stay valid until the next append. Its text form, the file
 * record --timeline writes: parse/timeline.h (reader), output/timeline.h.
 */
#ifndef OFFCPU_MODEL_TIMELINE_H
#define OFFCPU_MODEL_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "model/profile.h"

struct timeline_interval {
	uint64_t start_ns; /* switch-out time, CLOCK_MONOTONIC */
	uint64_t dur_ns;   /* switch-out to switch-in */
	uint64_t runq_ns;  /* part of dur_ns spent runnable (<= dur_ns) */
	int pid;
	int tid;
	uint32_t stack; /* profile stack id */
	enum offcpu_state state;
	int waker_tid;	    /* the thread that woke this one; 0 unknown, or an interrupt */
	uint32_t waker_irq; /* the interrupt context that woke it: timeline__irq_name(); 0 none */
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
 * Interrupt contexts that woke intervals, by name ("softirq:NET_RX",
 * "irq:timer", "irq:virtio0-input.0"; collect/wakers.h makes them): interned,
 * ids from 1 in order of first use. timeline__irq() returns the name's id,
 * -EINVAL for an empty name, -ENOMEM; timeline__irq_name() NULL for an id
 * out of range.
 */
int timeline__irq(struct timeline *t, const char *name);
const char *timeline__irq_name(const struct timeline *t, uint32_t id);
size_t timeline__nr_irqs(const struct timeline *t);

/*
 * Append a copy of *iv. -EINVAL when runq_ns > dur_ns, start_ns + dur_ns wraps,
 * the state is out of range, waker_irq names no interned context, or both
 * waker_tid and waker_irq are set; -ENOMEM.
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

#endif
