/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where the kernel's interrupt entry code lies, from /proc/kallsyms: the
 * address ranges of the hard-interrupt entries (asm_sysvec_*,
 * asm_common_interrupt, asm_spurious_interrupt, the irq_entries_start and
 * spurious_entries_start vector stubs), the NMI entry (asm_exc_nmi) and the
 * soft-interrupt loop (__do_softirq). A kernel stack that holds a return
 * address in one of them was taken in interrupt context, where "current" is
 * only the thread that happened to be interrupted. Exception entries (page
 * faults, int3, ...) are not interrupts: they run for the current thread.
 *
 * Each symbol extends to the next symbol's address; neighbouring ranges are
 * merged, so the usual layout (the sysvec stubs side by side) gives a few.
 */
#ifndef OFFCPU_COLLECT_IRQ_ENTRY_H
#define OFFCPU_COLLECT_IRQ_ENTRY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct addr_range {
	uint64_t lo; /* first byte */
	uint64_t hi; /* one past the last */
};

/*
 * Read kallsyms lines ("ADDR TYPE NAME [MODULE]") from in and fill up to max
 * merged ranges, lowest first. Returns how many (0 when kallsyms hides its
 * addresses or names none of them), or -E2BIG when more than max ranges
 * would be needed (r then holds the first max), -EIO.
 */
int irq_entry__ranges(FILE *in, struct addr_range *r, size_t max);

#endif
