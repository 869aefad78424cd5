/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel text the native collector needs to know, from one read of
 * /proc/kallsyms (the core kernel's symbols come in address order, so a
 * symbol extends to the next one's address):
 *
 *   sched  __schedule (or a compiler's __schedule.* clone), where the
 *          sched_switch tracepoint fires: the BPF side drops the tracer frames
 *          above it.
 *   sched_text  the scheduler's section (__sched_text_start to
 *          __sched_text_end: schedule(), do_nanosleep(), the lock slow
 *          paths, ...), which the kernel leaves out of a sleeping task's
 *          stack (bpf_get_task_stack(), /proc/PID/stack).
 *   irq    the interrupt entry code: the hard-interrupt entries (asm_sysvec_*,
 *          asm_common_interrupt, asm_spurious_interrupt, the irq_entries_start
 *          and spurious_entries_start vector stubs), the NMI entry
 *          (asm_exc_nmi) and the soft-interrupt loop (__do_softirq),
 *          neighbouring ranges merged. A kernel stack with a return address
 *          in one was taken in interrupt context, where "current" is only the
 *          thread that happened to be interrupted. Exception entries (page
 *          faults, int3, ...) are not interrupts: they run for the current
 *          thread.
 *   text   the core kernel's text (_stext to _etext): its symbols never
 *          change while the kernel runs, unlike modules' and BPF programs'.
 *
 * Ranges are zero when kallsyms hides its addresses or lacks the names.
 */
#ifndef OFFCPU_COLLECT_KTEXT_H
#define OFFCPU_COLLECT_KTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define KTEXT_IRQ_RANGES 8

struct addr_range {
	uint64_t lo; /* first byte */
	uint64_t hi; /* one past the last */
};

struct ktext {
	struct addr_range sched;
	struct addr_range sched_text;
	struct addr_range text;
	struct addr_range irq[KTEXT_IRQ_RANGES]; /* lowest first */
	size_t nr_irq;
	int irq_err; /* -E2BIG: more ranges than KTEXT_IRQ_RANGES (irq holds the first) */
};

/* Read kallsyms lines ("ADDR TYPE NAME [MODULE]") from in into *k. 0 or -EIO. */
int ktext__read(FILE *in, struct ktext *k);

/*
 * The same a line at a time, for a reader that parses kallsyms for other
 * things in the same pass: begin, one line() per line (NUL-terminated, with
 * or without its newline), end.
 */
struct ktext_reader {
	struct ktext *k;
	uint64_t irq_lo; /* start of the entry symbol whose end is the next address */
	bool irq_open, sched_open;
	bool done; /* past the core kernel's symbols */
};
void ktext__begin(struct ktext_reader *r, struct ktext *k);
void ktext__line(struct ktext_reader *r, const char *line);
void ktext__end(struct ktext_reader *r);

#endif
