/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Names of the interrupt contexts that wake timeline intervals: the BPF
 * side's OFFCPU_WAKER() values (bpf/offcpu.h) as the timeline keeps them
 * (model/timeline.h, timeline__irq()):
 *
 *   softirq:NET_RX   a softirq handler, by vector (HI TIMER NET_TX NET_RX
 *                    BLOCK IRQ_POLL TASKLET SCHED HRTIMER RCU, else its number)
 *   irq:timer        an hrtimer expiring in hard IRQ context (nanosleep, ...)
 *   irq:NAME         a hard IRQ handler: the names of the irq's handlers, the
 *                    directories of /proc/irq/N (joined by ',', sorted)
 *   irq:N            ... when /proc/irq/N names none (gone, or unreadable)
 *
 * The names are read once the capture is over: an irq freed meanwhile keeps
 * its number.
 */
#ifndef OFFCPU_COLLECT_WAKERS_H
#define OFFCPU_COLLECT_WAKERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/timeline.h"

#define WAKERS_IRQ_ROOT "/proc/irq"

/* Whether a waker value is an interrupt context (else a tid, 0 unknown). */
bool wakers__is_irq(uint32_t waker);

/*
 * The name of an interrupt context into buf (cut to len - 1 bytes); irq_root
 * is WAKERS_IRQ_ROOT but for tests. 0, or -EINVAL when waker is none.
 */
int wakers__name(uint32_t waker, const char *irq_root, char *buf, size_t len);

/* The names a timeline got, by waker value, so /proc/irq is read once per irq. */
struct wakers {
	const char *irq_root; /* NULL: WAKERS_IRQ_ROOT */
	struct wakers_name {
		uint32_t waker, id;
	} * names;
	size_t nr, cap;
};

/*
 * The timeline's id for an interrupt context (timeline__irq()), named on first
 * use. Returns the id (from 1), -EINVAL when waker is none, -ENOMEM.
 */
int wakers__intern(struct wakers *w, struct timeline *t, uint32_t waker);
void wakers__release(struct wakers *w);

#endif
