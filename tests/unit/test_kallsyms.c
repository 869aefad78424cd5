// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/symbolize.h"
#include "unit.h"

#define FIXTURE "tests/data/symbolize/kallsyms.txt"

static struct ksyms *load_fixture(void)
{
	FILE *f = fopen(FIXTURE, "r");
	struct ksyms *k;

	if (!f)
		return NULL;
	k = ksyms__load(f);
	fclose(f);
	return k;
}

static struct ksyms *load_string(const char *s)
{
	FILE *f = unit_memfile(s);
	struct ksyms *k = ksyms__load(f);

	fclose(f);
	return k;
}

TEST(kallsyms_resolves_inside_symbols)
{
	struct ksyms *k = load_fixture();
	uint64_t off = 99;

	CHECK(k);
	CHECK_STR(ksyms__resolve(k, 0xffffffff81001400, &off), "do_nanosleep");
	CHECK_U64(off, 0);
	CHECK_STR(ksyms__resolve(k, 0xffffffff81001abc, &off), "do_nanosleep");
	CHECK_U64(off, 0x6bc);
	CHECK_STR(ksyms__resolve(k, 0xffffffff81003fff, &off), "futex_wait");
	CHECK_U64(off, 0xfff);
	/* the file is not sorted: module text comes first in it */
	CHECK_STR(ksyms__resolve(k, 0xffffffffc0a01010, NULL), "ext4_fill_super");
	CHECK_STR(ksyms__resolve(k, 0xffffffffc0a013ff, NULL), "ext4_fill_super");
	CHECK_STR(ksyms__resolve(k, 0xffffffffc0a01400, NULL), "ext4_sync_fs");
	ksyms__free(k);
}

/* The line-at-a-time reader (the native collector's, in one pass with ktext) agrees with load. */
TEST(kallsyms_lines_one_at_a_time_match_load)
{
	struct ksyms *whole = load_fixture(), *k = ksyms__new();
	char line[512];
	FILE *f = fopen(FIXTURE, "r");
	uint64_t probes[] = {0xffffffff81001400, 0xffffffff81001abc, 0xffffffff81003fff,
			     0xffffffffc0a01010, 0xffffffffc0a013ff, 0xffffffffc0a01400};

	CHECK(whole && k && f);
	while (fgets(line, sizeof(line), f)) {
		/* without its newline, as the collector hands it over */
		line[strcspn(line, "\n")] = '\0';
		CHECK_INT(ksyms__add_line(k, line), 0);
	}
	fclose(f);
	CHECK_INT(ksyms__finish(k), 0);
	CHECK_INT(ksyms__count(k), ksyms__count(whole));
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		uint64_t a = 1, b = 2;
		const char *x = ksyms__resolve(whole, probes[i], &a);

		CHECK(x);
		CHECK_STR(ksyms__resolve(k, probes[i], &b), x);
		CHECK_U64(b, a);
	}
	ksyms__free(whole);
	ksyms__free(k);
}

TEST(kallsyms_counts_distinct_text_addresses)
{
	struct ksyms *k = load_fixture();

	CHECK(k);
	/* 0x...000, 0x...1000, 0x...1200, 0x...1400, futex_wait, two ext4, bpf */
	CHECK_INT(ksyms__count(k), 8);
	ksyms__free(k);
}

TEST(kallsyms_prefers_global_names_with_fewer_underscores)
{
	struct ksyms *k = load_fixture();

	CHECK(k);
	/* t __local_alias, T __global_alias, T schedule, t schedule_local */
	CHECK_STR(ksyms__resolve(k, 0xffffffff81001000, NULL), "schedule");
	/* _stext, startup_64, _text: all global */
	CHECK_STR(ksyms__resolve(k, 0xffffffff81000000, NULL), "startup_64");
	/* a local function beats a weak one */
	CHECK_STR(ksyms__resolve(k, 0xffffffff81001200, NULL), "io_schedule");
	ksyms__free(k);
}

TEST(kallsyms_module_suffix_is_not_part_of_the_name)
{
	struct ksyms *k = load_fixture();

	CHECK(k);
	CHECK_STR(ksyms__resolve(k, 0xffffffffc0201000, NULL),
		  "bpf_prog_6deef7357e7b4530_sd_fw_egress");
	ksyms__free(k);
}

TEST(kallsyms_data_and_end_markers_bound_text)
{
	struct ksyms *k = load_fixture();

	CHECK(k);
	/* do_nanosleep ends where the data symbol init_task starts */
	CHECK_STR(ksyms__resolve(k, 0xffffffff81001fff, NULL), "do_nanosleep");
	CHECK(!ksyms__resolve(k, 0xffffffff81002000, NULL));
	CHECK(!ksyms__resolve(k, 0xffffffff81002800, NULL));
	/* _etext ends the kernel's text; it is no function */
	CHECK(!ksyms__resolve(k, 0xffffffff81004000, NULL));
	CHECK(!ksyms__resolve(k, 0xffffffff81004010, NULL));
	ksyms__free(k);
}

TEST(kallsyms_outside_any_symbol_is_null)
{
	struct ksyms *k = load_fixture();

	CHECK(k);
	CHECK(!ksyms__resolve(k, 0, NULL));
	CHECK(!ksyms__resolve(k, 0xffffffff80ffffff, NULL));
	/* past the last symbol, only a page more belongs to it */
	CHECK_STR(ksyms__resolve(k, 0xffffffffc0a01400 + 4095, NULL), "ext4_sync_fs");
	CHECK(!ksyms__resolve(k, 0xffffffffc0a01400 + 4096, NULL));
	CHECK(!ksyms__resolve(k, UINT64_MAX, NULL));
	CHECK(!ksyms__resolve(NULL, 1, NULL));
	ksyms__free(k);
}

TEST(kallsyms_keeps_names_of_any_length)
{
	char name[501], text[700];
	struct ksyms *k;
	uint64_t off;

	/* a Rust v0 symbol of 500 characters, as Rust-for-Linux modules have */
	memcpy(name, "_RNvMs0_NtCs", 12);
	for (int i = 12; i < 500; i++)
		name[i] = 'a' + i % 26;
	name[500] = '\0';
	snprintf(text, sizeof(text),
		 "ffffffffc1000000 t %s\t[rust_binder]\nffffffffc1000800 t "
		 "short_one\t[rust_binder]\n",
		 name);
	k = load_string(text);
	CHECK(k);
	CHECK_INT(ksyms__count(k), 2);
	/* compared by hand: CHECK_STR's message has no room for two such names */
	CHECK(!strcmp(ksyms__resolve(k, 0xffffffffc1000123, &off), name));
	CHECK_INT(strlen(ksyms__resolve(k, 0xffffffffc1000000, NULL)), 500);
	CHECK_U64(off, 0x123);
	CHECK_STR(ksyms__resolve(k, 0xffffffffc1000800, NULL), "short_one");
	ksyms__free(k);
}

TEST(kallsyms_hidden_addresses_resolve_nothing)
{
	/* what an unprivileged reader sees with kptr_restrict */
	struct ksyms *k = load_string("0000000000000000 T schedule\n0000000000000000 t foo [m]\n");

	CHECK(k);
	CHECK_INT(ksyms__count(k), 0);
	CHECK(!ksyms__resolve(k, 0, NULL));
	ksyms__free(k);
}

TEST(kallsyms_real_file_resolves_schedule)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	unsigned long long addr = 0;
	char line[512], type;
	struct ksyms *k;
	uint64_t off;

	if (!f)
		SKIP("/proc/kallsyms: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char name[256];

		if (sscanf(line, "%llx %c %255s", &addr, &type, name) == 3 &&
		    !strcmp(name, "schedule") && (type == 'T' || type == 't'))
			break;
		addr = 0;
	}
	rewind(f);
	if (!addr) {
		fclose(f);
		SKIP("no readable address for schedule (not root, or kptr_restrict)");
	}
	k = ksyms__load(f);
	fclose(f);
	CHECK(k);
	CHECK(ksyms__count(k) > 1000);
	CHECK_STR(ksyms__resolve(k, addr, &off), "schedule");
	CHECK_U64(off, 0);
	CHECK_STR(ksyms__resolve(k, addr + 1, &off), "schedule");
	CHECK_U64(off, 1);
	ksyms__free(k);
}

TEST(symbolizer_kernel_writes_names_and_hex)
{
	struct symbolizer_opts o = {.kallsyms_path = FIXTURE};
	struct symbolizer *s = symbolizer__new(&o);
	char buf[64];

	CHECK(s);
	CHECK_INT(symbolizer__kernel(s, 0xffffffff81003010, buf, sizeof(buf)), 0);
	CHECK_STR(buf, "futex_wait");
	CHECK_INT(symbolizer__kernel(s, 0xffffffff81002010, buf, sizeof(buf)), 0);
	CHECK_STR(buf, "0xffffffff81002010");
	/* a small buffer truncates, never overflows */
	CHECK_INT(symbolizer__kernel(s, 0xffffffff81003010, buf, 5), 0);
	CHECK_STR(buf, "fute");
	symbolizer__free(s);
}

TEST(symbolizer_kernel_without_kallsyms_says_why)
{
	struct symbolizer_opts o = {.kallsyms_path = "/nonexistent/kallsyms"};
	struct symbolizer *s = symbolizer__new(&o);
	char buf[64];

	CHECK(s);
	CHECK_INT(symbolizer__kernel(s, 0xffffffff81003010, buf, sizeof(buf)), -ENOENT);
	CHECK_STR(buf, "0xffffffff81003010");
	symbolizer__free(s);
}

/*
 * A table read at start answers the core kernel's addresses (their symbols
 * never change) without reading kallsyms again; others still read it then.
 */
TEST(symbolizer_kernel_core_table_spares_a_read_inside_its_range)
{
	struct symbolizer_opts o = {.kallsyms_path = "/nonexistent/kallsyms"};
	struct symbolizer *s = symbolizer__new(&o);
	struct ksyms *k = load_fixture();
	char buf[64];

	CHECK(s && k);
	CHECK_INT(symbolizer__kernel_core(s, k, 0xffffffff81000000, 0xffffffff81004000), 0);
	CHECK_INT(symbolizer__kernel(s, 0xffffffff81003010, buf, sizeof(buf)), 0);
	CHECK_STR(buf, "futex_wait");
	/* A module's address is not the table's to answer: kallsyms is read (and missing). */
	CHECK_INT(symbolizer__kernel(s, 0xffffffffc0a01010, buf, sizeof(buf)), -ENOENT);
	CHECK_STR(buf, "0xffffffffc0a01010");
	CHECK_INT(symbolizer__kernel_core(s, NULL, 1, 2), -EINVAL);
	symbolizer__free(s);
}

/*
 * Symbols on demand (the native collector asks the kernel one symbol at a
 * time): a fake kernel of three functions, and a count of the questions.
 */
struct fake_kernel {
	int asked;
	bool freed;
};

static int fake_ask(void *ctx, uint64_t addr, char *name, size_t len, uint64_t *start,
		    uint64_t *size)
{
	static const struct {
		uint64_t lo, size;
		const char *name;
	} syms[] = {
		{0xffffffff81001000, 0x400, "do_nanosleep"},
		{0xffffffff81001400, 0x100, "schedule"},
		{0xffffffff81003000, 0x1000, "futex_wait"},
	};
	struct fake_kernel *fk = ctx;

	fk->asked++;
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (addr >= syms[i].lo && addr - syms[i].lo < syms[i].size) {
			snprintf(name, len, "%s", syms[i].name);
			*start = syms[i].lo;
			*size = syms[i].size;
			return 0;
		}
	return -ENOENT;
}

static void fake_free(void *ctx)
{
	((struct fake_kernel *)ctx)->freed = true;
}

TEST(kallsyms_lazy_asks_once_per_symbol_and_per_miss)
{
	struct fake_kernel fk = {};
	struct ksyms *k = ksyms__new_lazy(fake_ask, &fk, fake_free);
	uint64_t off = 99;

	CHECK(k);
	CHECK_STR(ksyms__resolve(k, 0xffffffff81003010, &off), "futex_wait");
	CHECK_U64(off, 0x10);
	CHECK_INT(fk.asked, 1);
	/* Anywhere else in the same symbol: from what the first answer kept. */
	CHECK_STR(ksyms__resolve(k, 0xffffffff81003fff, &off), "futex_wait");
	CHECK_U64(off, 0xfff);
	CHECK_STR(ksyms__resolve(k, 0xffffffff81003000, &off), "futex_wait");
	CHECK_U64(off, 0);
	CHECK_INT(fk.asked, 1);
	/* Its neighbours, asked in any order, each once. */
	CHECK(!ksyms__resolve(k, 0xffffffff814000ff, NULL));
	CHECK_STR(ksyms__resolve(k, 0xffffffff81001400, &off), "schedule");
	CHECK_U64(off, 0);
	CHECK_STR(ksyms__resolve(k, 0xffffffff810013ff, &off), "do_nanosleep");
	CHECK_U64(off, 0x3ff);
	CHECK_STR(ksyms__resolve(k, 0xffffffff810014ff, NULL), "schedule");
	CHECK_INT(fk.asked, 4);
	/* A miss is remembered: no second question for the same address. */
	CHECK(!ksyms__resolve(k, 0xffffffff814000ff, NULL));
	CHECK_INT(fk.asked, 4);
	/* Just past a symbol is another question, and another miss. */
	CHECK(!ksyms__resolve(k, 0xffffffff81001500, NULL));
	CHECK_INT(fk.asked, 5);
	CHECK_U64(ksyms__count(k), 3);
	ksyms__free(k);
	CHECK(fk.freed);
}

/* The symbolizer takes it as its core table: no read of kallsyms for what it names. */
TEST(symbolizer_kernel_core_table_may_answer_on_demand)
{
	struct symbolizer_opts o = {.kallsyms_path = "/nonexistent/kallsyms"};
	struct symbolizer *s = symbolizer__new(&o);
	struct fake_kernel fk = {};
	struct ksyms *k = ksyms__new_lazy(fake_ask, &fk, NULL);
	char buf[64];

	CHECK(s && k);
	CHECK_INT(symbolizer__kernel_core(s, k, 1ULL << 63, UINT64_MAX), 0);
	CHECK_INT(symbolizer__kernel(s, 0xffffffff81003010, buf, sizeof(buf)), 0);
	CHECK_STR(buf, "futex_wait");
	CHECK_INT(symbolizer__kernel(s, 0xffffffff81001010, buf, sizeof(buf)), 0);
	CHECK_STR(buf, "do_nanosleep");
	CHECK_INT(fk.asked, 2);
	/* What the kernel cannot name falls back to kallsyms (missing here). */
	CHECK_INT(symbolizer__kernel(s, 0xffffffff81005000, buf, sizeof(buf)), -ENOENT);
	CHECK_STR(buf, "0xffffffff81005000");
	symbolizer__free(s);
}

int main(void)
{
	return unit_run();
}
