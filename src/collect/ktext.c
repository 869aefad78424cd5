// SPDX-License-Identifier: GPL-2.0-only
/* Kernel text ranges from kallsyms: see ktext.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "collect/ktext.h"
#include "util/hex.h"

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

void ktext__begin(struct ktext_reader *r, struct ktext *k)
{
	memset(r, 0, sizeof(*r));
	memset(k, 0, sizeof(*k));
	r->k = k;
}

void ktext__line(struct ktext_reader *r, const char *line)
{
	struct ktext *k = r->k;
	const char *name, *end;
	uint64_t addr;
	size_t len;

	if (r->done)
		return;
	addr = hex__parse(line, &name);
	/* "ADDR T NAME": module symbols come after the core kernel's, in no order. */
	if (name == line || name[0] != ' ' || !name[1] || name[2] != ' ')
		return;
	name += 3;
	end = name + strcspn(name, " \t\n");
	if (*end == '\t' || strchr(name, '[')) {
		r->done = true;
		return;
	}
	if (!addr)
		return;
	len = (size_t)(end - name);
	if (len == 18 && !strncmp(name, "__sched_text_start", 18))
		k->sched_text.lo = addr;
	if (len == 16 && !strncmp(name, "__sched_text_end", 16))
		k->sched_text.hi = addr;
	if (len == 6 && !strncmp(name, "_stext", 6))
		k->text.lo = addr;
	if (len == 6 && !strncmp(name, "_etext", 6))
		k->text.hi = addr;
	if (r->sched_open && addr > k->sched.lo) {
		k->sched.hi = addr;
		r->sched_open = false;
	}
	if (!k->sched.lo && is_sched(name, len)) {
		k->sched.lo = addr;
		r->sched_open = true;
	}
	if (r->irq_open && addr > r->irq_lo) {
		if (!k->irq_err)
			add_irq(k, r->irq_lo, addr);
		r->irq_open = false;
	}
	if (!r->irq_open && is_irq_entry(name, len)) {
		r->irq_lo = addr;
		r->irq_open = true;
	}
}

void ktext__end(struct ktext_reader *r)
{
	struct ktext *k = r->k;

	if (!k->sched.hi)
		k->sched.lo = 0;
	if (k->sched_text.hi <= k->sched_text.lo)
		k->sched_text = (struct addr_range){0, 0};
	if (k->text.hi <= k->text.lo)
		k->text = (struct addr_range){0, 0};
}

int ktext__read(FILE *in, struct ktext *k)
{
	struct ktext_reader r;
	char line[512];

	ktext__begin(&r, k);
	while (fgets(line, sizeof(line), in))
		ktext__line(&r, line);
	ktext__end(&r);
	return ferror(in) ? -EIO : 0;
}
