// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "collect/ktext.h"
#include "unit.h"

/* The layout of a 6.18 x86-64 kernel's /proc/kallsyms around its entry and scheduler code. */
static const char *const kallsyms = "ffffffff81000000 T startup_64\n"
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
				    "ffffffff822652d0 t __pfx___schedule\n"
				    "ffffffff822652e0 t __schedule\n"
				    "ffffffff82265e40 T schedule\n"
				    "ffffffff8226fa00 T __pfx___do_softirq\n"
				    "ffffffff8226fa10 T __do_softirq\n"
				    "ffffffff8226fa1c T __softirqentry_text_end\n"
				    "ffffffffc0000000 t helper\t[somemod]\n"
				    "ffffffffc0000100 t asm_sysvec_fake\t[somemod]\n";

/* Lines handed over one at a time, without newlines, give what reading the file gives. */
TEST(ktext_lines_one_at_a_time_match_read)
{
	struct ktext whole, k;
	struct ktext_reader r;
	FILE *f = unit_memfile(kallsyms);
	char *copy = strdup(kallsyms), *save = NULL;

	CHECK(f && copy);
	CHECK_INT(ktext__read(f, &whole), 0);
	fclose(f);
	ktext__begin(&r, &k);
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		ktext__line(&r, line);
	ktext__end(&r);
	free(copy);
	CHECK_U64(k.sched.lo, whole.sched.lo);
	CHECK_U64(k.sched.hi, whole.sched.hi);
	CHECK(k.sched.lo);
	CHECK_U64(k.text.lo, whole.text.lo);
	CHECK_U64(k.text.hi, whole.text.hi);
	CHECK_U64(k.nr_irq, whole.nr_irq);
	CHECK(k.nr_irq == 4);
	for (size_t i = 0; i < k.nr_irq; i++) {
		CHECK_U64(k.irq[i].lo, whole.irq[i].lo);
		CHECK_U64(k.irq[i].hi, whole.irq[i].hi);
	}
}

TEST(ktext_irq_ranges_cover_interrupts_not_exceptions)
{
	struct ktext k;
	FILE *f = unit_memfile(kallsyms);

	CHECK_INT(ktext__read(f, &k), 0);
	fclose(f);
	CHECK_INT(k.irq_err, 0);
	CHECK_U64(k.nr_irq, 4);
	/* the vector stubs, up to the first exception entry */
	CHECK_U64(k.irq[0].lo, 0xffffffff81000300);
	CHECK_U64(k.irq[0].hi, 0xffffffff81000a10);
	/* common, spurious and the sysvec stubs merged, up to the section's end */
	CHECK_U64(k.irq[1].lo, 0xffffffff81000d40);
	CHECK_U64(k.irq[1].hi, 0xffffffff81000f70);
	CHECK_U64(k.irq[2].lo, 0xffffffff81001200);
	CHECK_U64(k.irq[2].hi, 0xffffffff81001300);
	CHECK_U64(k.irq[3].lo, 0xffffffff8226fa10);
	CHECK_U64(k.irq[3].hi, 0xffffffff8226fa1c);
}

TEST(ktext_sched_range_is_schedule_to_the_next_symbol)
{
	struct ktext k;
	FILE *f = unit_memfile(kallsyms);

	CHECK_INT(ktext__read(f, &k), 0);
	fclose(f);
	CHECK_U64(k.sched.lo, 0xffffffff822652e0);
	CHECK_U64(k.sched.hi, 0xffffffff82265e40);
	/* a compiler's clone counts; the last symbol has no end: nothing */
	f = unit_memfile("ffffffff82000000 t __schedule.cold\nffffffff82000100 t other\n");
	CHECK_INT(ktext__read(f, &k), 0);
	fclose(f);
	CHECK_U64(k.sched.lo, 0xffffffff82000000);
	CHECK_U64(k.sched.hi, 0xffffffff82000100);
	f = unit_memfile("ffffffff82000000 t __schedule\n");
	CHECK_INT(ktext__read(f, &k), 0);
	fclose(f);
	CHECK_U64(k.sched.lo, 0);
	CHECK_U64(k.sched.hi, 0);
}

TEST(ktext_hidden_addresses_give_nothing)
{
	struct ktext k;
	FILE *f = unit_memfile("0000000000000000 T irq_entries_start\n"
			       "0000000000000000 T asm_common_interrupt\n"
			       "0000000000000000 t __schedule\n"
			       "0000000000000000 T entry_SYSCALL_64\n");

	CHECK_INT(ktext__read(f, &k), 0);
	fclose(f);
	CHECK_U64(k.nr_irq, 0);
	CHECK_U64(k.sched.lo, 0);
	CHECK_U64(k.sched.hi, 0);
}

TEST(ktext_too_many_irq_ranges_is_e2big)
{
	char text[8192] = "";
	struct ktext k;
	FILE *f;

	/* entry stubs separated by other code: one range each, one more than fits */
	for (int i = 0; i <= KTEXT_IRQ_RANGES; i++) {
		char l[128];

		snprintf(l, sizeof(l),
			 "ffffffff81%02x0000 T asm_sysvec_%d\nffffffff81%02x0100 T other_%d\n", i,
			 i, i, i);
		strcat(text, l);
	}
	f = unit_memfile(text);
	CHECK_INT(ktext__read(f, &k), 0);
	fclose(f);
	CHECK_INT(k.irq_err, -E2BIG);
	CHECK_U64(k.nr_irq, KTEXT_IRQ_RANGES);
	CHECK_U64(k.irq[KTEXT_IRQ_RANGES - 1].lo, 0xffffffff81070000);
}

/* The core kernel's text, whose symbols the symbolizer may keep from start. */
TEST(ktext_core_text_is_stext_to_etext)
{
	struct ktext k;
	FILE *f = unit_memfile("ffffffff81000000 T _stext\n"
			       "ffffffff81000000 T startup_64\n"
			       "ffffffff81001000 T schedule\n"
			       "ffffffff82278000 T _etext\n"
			       "ffffffffc0000000 t helper\t[somemod]\n");

	CHECK_INT(ktext__read(f, &k), 0);
	fclose(f);
	CHECK_U64(k.text.lo, 0xffffffff81000000);
	CHECK_U64(k.text.hi, 0xffffffff82278000);
	/* Without _etext (an older or odd kernel): unknown, not half a range. */
	f = unit_memfile("ffffffff81000000 T _stext\nffffffff81001000 T schedule\n");
	CHECK_INT(ktext__read(f, &k), 0);
	fclose(f);
	CHECK_U64(k.text.lo, 0);
	CHECK_U64(k.text.hi, 0);
}

/* The running kernel's, when it shows addresses: found, ordered, disjoint. */
TEST(ktext_of_this_kernel)
{
	struct ktext k;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		SKIP("no /proc/kallsyms");
	CHECK_INT(ktext__read(f, &k), 0);
	fclose(f);
	if (!k.nr_irq && !k.sched.lo)
		SKIP("kallsyms hides addresses here (kptr_restrict, not root)");
	CHECK(k.sched.lo && k.sched.lo < k.sched.hi);
	CHECK(k.nr_irq > 0);
	CHECK_INT(k.irq_err, 0);
	for (size_t i = 0; i < k.nr_irq; i++) {
		CHECK(k.irq[i].lo < k.irq[i].hi);
		if (i)
			CHECK(k.irq[i - 1].hi < k.irq[i].lo);
	}
}

int main(void)
{
	return unit_run();
}
