// SPDX-License-Identifier: GPL-2.0-only
/* Interrupt entry ranges from kallsyms: see irq_entry.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "collect/irq_entry.h"

static bool is_irq_entry(const char *name, size_t len)
{
	static const char *const exact[] = {
		"asm_common_interrupt", "asm_spurious_interrupt", "irq_entries_start",
		"spurious_entries_start", "asm_exc_nmi", "__do_softirq",
	};

	if (len > 11 && !strncmp(name, "asm_sysvec_", 11))
		return true;
	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (strlen(exact[i]) == len && !strncmp(name, exact[i], len))
			return true;
	return false;
}

/* Append [lo, hi) to r, merging with the last range when they touch. */
static int add(struct addr_range *r, size_t max, size_t *n, uint64_t lo, uint64_t hi)
{
	if (*n && r[*n - 1].hi >= lo) {
		if (hi > r[*n - 1].hi)
			r[*n - 1].hi = hi;
		return 0;
	}
	if (*n == max)
		return -E2BIG;
	r[(*n)++] = (struct addr_range){lo, hi};
	return 0;
}

int irq_entry__ranges(FILE *in, struct addr_range *r, size_t max)
{
	char line[512];
	uint64_t open_lo = 0; /* start of the entry symbol whose end is the next address */
	bool open = false;
	size_t n = 0;
	int err = 0;

	while (fgets(line, sizeof(line), in)) {
		char *name = strchr(line, ' '), *end;
		uint64_t addr;

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
		if (open && addr > open_lo) {
			if ((err = add(r, max, &n, open_lo, addr)))
				break;
			open = false;
		}
		if (!open && is_irq_entry(name, (size_t)(end - name))) {
			open_lo = addr;
			open = true;
		}
	}
	if (ferror(in))
		return -EIO;
	return err ? err : (int)n;
}
