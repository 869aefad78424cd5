// SPDX-License-Identifier: GPL-2.0-only
/* Kernel text ranges from kallsyms: see ktext.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "collect/ktext.h"

static bool is_sched(const char *name, size_t len)
{
	return (len == 10 && !strncmp(name, "__schedule", 10)) ||
	       (len > 11 && !strncmp(name, "__schedule.", 11));
}

static bool is_irq_entry(const char *name, size_t len)
{
	static const char *const exact[] = {
		"asm_common_interrupt", "asm_spurious_interrupt",
		"irq_entries_start",	"spurious_entries_start",
		"asm_exc_nmi",		"__do_softirq",
	};

	if (len > 11 && !strncmp(name, "asm_sysvec_", 11))
		return true;
	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (strlen(exact[i]) == len && !strncmp(name, exact[i], len))
			return true;
	return false;
}

/* Append [lo, hi) to k's irq ranges, merging with the last one when they touch. */
static void add_irq(struct ktext *k, uint64_t lo, uint64_t hi)
{
	struct addr_range *last = k->nr_irq ? &k->irq[k->nr_irq - 1] : NULL;

	if (last && last->hi >= lo) {
		if (hi > last->hi)
			last->hi = hi;
	} else if (k->nr_irq == KTEXT_IRQ_RANGES) {
		k->irq_err = -E2BIG;
	} else {
		k->irq[k->nr_irq++] = (struct addr_range){lo, hi};
	}
}

int ktext__read(FILE *in, struct ktext *k)
{
	char line[512];
	uint64_t irq_lo = 0; /* start of the entry symbol whose end is the next address */
	bool irq_open = false, sched_open = false;

	memset(k, 0, sizeof(*k));
	while (fgets(line, sizeof(line), in)) {
		char *name = strchr(line, ' '), *end;
		uint64_t addr;
		size_t len;

		/* "ADDR T NAME": module symbols come after the core kernel's, in no order. */
		if (!name || !name[1] || name[2] != ' ')
			continue;
		name += 3;
		end = name + strcspn(name, " \t\n");
		if (*end == '\t' || strchr(name, '['))
			break;
		addr = strtoull(line, NULL, 16);
		if (!addr)
			continue;
		len = (size_t)(end - name);
		if (len == 18 && !strncmp(name, "__sched_text_start", 18))
			k->sched_text.lo = addr;
		if (len == 16 && !strncmp(name, "__sched_text_end", 16))
			k->sched_text.hi = addr;
		if (len == 6 && !strncmp(name, "_stext", 6))
			k->text.lo = addr;
		if (len == 6 && !strncmp(name, "_etext", 6))
			k->text.hi = addr;
		if (sched_open && addr > k->sched.lo) {
			k->sched.hi = addr;
			sched_open = false;
		}
		if (!k->sched.lo && is_sched(name, len)) {
			k->sched.lo = addr;
			sched_open = true;
		}
		if (irq_open && addr > irq_lo) {
			if (!k->irq_err)
				add_irq(k, irq_lo, addr);
			irq_open = false;
		}
		if (!irq_open && is_irq_entry(name, len)) {
			irq_lo = addr;
			irq_open = true;
		}
	}
	if (!k->sched.hi)
		k->sched.lo = 0;
	if (k->sched_text.hi <= k->sched_text.lo)
		k->sched_text = (struct addr_range){0, 0};
	if (k->text.hi <= k->text.lo)
		k->text = (struct addr_range){0, 0};
	return ferror(in) ? -EIO : 0;
}
