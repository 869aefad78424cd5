// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>

#include "collect/irq_entry.h"
#include "unit.h"

/* The layout of a 6.18 x86-64 kernel's /proc/kallsyms around its entry code. */
static const char *const kallsyms =
	"ffffffff81000000 T startup_64\n"
	"ffffffff81000300 T irq_entries_start\n"
	"ffffffff81000300 T __irqentry_text_start\n"
	"ffffffff81000960 T spurious_entries_start\n"
	"ffffffff81000a10 T asm_exc_divide_error\n"
	"ffffffff81000c60 T asm_exc_page_fault\n"
	"ffffffff81000d40 T asm_common_interrupt\n"
	"ffffffff81000d80 T asm_spurious_interrupt\n"
	"ffffffff81000db0 T asm_sysvec_error_interrupt\n"
	"ffffffff81000df0 T asm_sysvec_apic_timer_interrupt\n"
	"ffffffff81000e30 T asm_sysvec_reschedule_ipi\n"
	"ffffffff81000f70 T __irqentry_text_end\n"
	"ffffffff81001000 T entry_SYSCALL_64\n"
	"ffffffff81001200 T asm_exc_nmi\n"
	"ffffffff81001300 T paranoid_entry\n"
	"ffffffff8226fa00 T __pfx___do_softirq\n"
	"ffffffff8226fa10 T __do_softirq\n"
	"ffffffff8226fa1c T __softirqentry_text_end\n"
	"ffffffffc0000000 t helper\t[somemod]\n"
	"ffffffffc0000100 t asm_sysvec_fake\t[somemod]\n";

TEST(irq_entry_ranges_cover_interrupts_not_exceptions)
{
	struct addr_range r[8];
	FILE *f = unit_memfile(kallsyms);

	CHECK_INT(irq_entry__ranges(f, r, 8), 4);
	fclose(f);
	/* the vector stubs, up to the first exception entry */
	CHECK_U64(r[0].lo, 0xffffffff81000300);
	CHECK_U64(r[0].hi, 0xffffffff81000a10);
	/* common, spurious and the sysvec stubs merged, up to the section's end */
	CHECK_U64(r[1].lo, 0xffffffff81000d40);
	CHECK_U64(r[1].hi, 0xffffffff81000f70);
	CHECK_U64(r[2].lo, 0xffffffff81001200);
	CHECK_U64(r[2].hi, 0xffffffff81001300);
	CHECK_U64(r[3].lo, 0xffffffff8226fa10);
	CHECK_U64(r[3].hi, 0xffffffff8226fa1c);
}

TEST(irq_entry_hidden_addresses_give_nothing)
{
	struct addr_range r[4];
	FILE *f = unit_memfile("0000000000000000 T irq_entries_start\n"
			       "0000000000000000 T asm_common_interrupt\n"
			       "0000000000000000 T entry_SYSCALL_64\n");

	CHECK_INT(irq_entry__ranges(f, r, 4), 0);
	fclose(f);
}

TEST(irq_entry_too_many_ranges_is_e2big)
{
	struct addr_range r[2];
	FILE *f = unit_memfile(kallsyms);

	CHECK_INT(irq_entry__ranges(f, r, 2), -E2BIG);
	fclose(f);
	CHECK_U64(r[1].lo, 0xffffffff81000d40);
}

/* The running kernel's, when it shows addresses: non-empty, ordered, disjoint. */
TEST(irq_entry_ranges_of_this_kernel)
{
	struct addr_range r[8];
	FILE *f = fopen("/proc/kallsyms", "r");
	int n;

	if (!f)
		SKIP("no /proc/kallsyms");
	n = irq_entry__ranges(f, r, 8);
	fclose(f);
	if (n == 0)
		SKIP("kallsyms hides addresses here (kptr_restrict, not root)");
	CHECK(n > 0);
	for (int i = 0; i < n; i++) {
		CHECK(r[i].lo < r[i].hi);
		if (i)
			CHECK(r[i - 1].hi < r[i].lo);
	}
}

int main(void)
{
	return unit_run();
}
