// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>

#include "output/folded.h"
#include "parse/folded.h"
#include "unit.h"

#define DATA "tests/data/folded/"

static int parse_buf(const char *buf, size_t len, struct profile *p, const struct folded_opts *o,
		     struct parse_stats *st)
{
	FILE *f = len ? fmemopen((void *)buf, len, "r") : fopen("/dev/null", "r");
	int err;

	if (!f)
		return -errno;
	err = folded__parse(f, p, o, st);
	fclose(f);
	return err;
}

static int parse_str(const char *s, struct profile *p, const struct folded_opts *o,
		     struct parse_stats *st)
{
	return parse_buf(s, strlen(s), p, o, st);
}

static int parse_path(const char *path, struct profile *p, const struct folded_opts *o,
		      struct parse_stats *st)
{
	FILE *f = fopen(path, "r");
	int err;

	if (!f)
		return -errno;
	err = folded__parse(f, p, o, st);
	fclose(f);
	return err;
}

/* The stack of row idx as "K:name;U:name;M:name;I:name", root first. */
static const char *stack_str(const struct profile *p, size_t idx)
{
	static char buf[4096];
	const struct profile_row *r = profile__row_at(p, idx);
	const uint32_t *fr;
	size_t n, off = 0;

	buf[0] = '\0';
	if (!r)
		return "(no row)";
	fr = profile__stack_at(p, r->stack, &n);
	for (size_t i = 0; i < n && off < sizeof(buf); i++) {
		const struct profile_frame *f = profile__frame_at(p, fr[i]);
		char k = f->kind == FRAME_KERNEL   ? 'K'
			 : f->kind == FRAME_USER   ? 'U'
			 : f->kind == FRAME_INLINE ? 'I'
						   : 'M';

		off += snprintf(buf + off, sizeof(buf) - off, "%s%c:%s", i ? ";" : "", k, f->name);
	}
	return buf;
}

static const char *comm_of(const struct profile *p, size_t idx)
{
	return profile__thread_at(p, profile__row_at(p, idx)->thread)->comm;
}

TEST(folded_bcc_without_delimiter_splits_at_kernel_entry)
{
	struct profile *p = profile__new();
	struct parse_stats st;

	CHECK(p);
	CHECK_INT(parse_path(DATA "bcc_f.txt", p, NULL, &st), 0);
	CHECK_INT(st.lines, 4);
	CHECK_INT(st.records, 4);
	CHECK_INT(st.malformed, 0);
	CHECK_INT(profile__nr_rows(p), 3); /* lines 1 and 4 are the same row */
	CHECK_STR(stack_str(p, 0),
		  "U:[unsymbolized];U:__libc_start_main;U:main;U:clock_nanosleep;"
		  "K:entry_SYSCALL_64_after_hwframe;K:do_syscall_64;"
		  "K:__x64_sys_clock_nanosleep;K:common_nsleep;K:hrtimer_nanosleep;"
		  "K:do_nanosleep;K:schedule;K:__schedule");
	CHECK_STR(comm_of(p, 0), "sleep");
	/* microseconds by default */
	CHECK_U64(profile__row_at(p, 0)->w.off_ns, (1000123ULL + 7) * 1000);
	CHECK_U64(profile__row_at(p, 0)->w.count, 2);
	CHECK_INT(profile__row_at(p, 0)->state, OFFCPU_STATE_UNKNOWN);
	CHECK_INT(profile__thread_at(p, 0)->pid, 0);
	CHECK_INT(profile__thread_at(p, 0)->tid, 0);
	/* A kernel thread is all kernel. */
	CHECK_STR(stack_str(p, 1), "K:ret_from_fork_asm;K:ret_from_fork;K:kthread;K:worker_thread;"
				   "K:schedule;K:__schedule");
	/* A comm with a space; the value is after the last space. */
	CHECK_STR(comm_of(p, 2), "Web Content");
	CHECK_U64(profile__row_at(p, 2)->w.off_ns, 42000);
	CHECK(strstr(stack_str(p, 2), "U:poll;K:entry_SYSCALL_64_after_hwframe;") != NULL);
	CHECK(!profile__runq_known(p));
	profile__free(p);
}

/*
 * Every kernel entry point turns a line without "-" to kernel frames; names
 * that share their first bytes (the quick filter's) do not.
 */
TEST(folded_each_kernel_entry_and_its_near_misses)
{
	static const char *const entries[] = {
		"asm_exc_page_fault",
		"common_startup_64",
		"cpu_startup_entry",
		"do_syscall_64",
		"do_fast_syscall_32",
		"do_int80_syscall_32",
		"entry_SYSCALL_64",
		"entry_INT80_compat",
		"entry_SYSENTER_32",
		"el0t_64_sync",
		"el0_svc",
		"el1h_64_irq",
		"ret_from_fork_asm",
		"rest_init",
		"secondary_startup_64_no_verify",
		"start_secondary",
		"start_kernel",
		"x86_64_start_kernel",
		"__do_fast_syscall_32",
	};
	static const char *const others[] = {
		"asm",
		"asmx",
		"commit_creds",
		"cpuset_read",
		"do_sys_poll",
		"entry",
		"el0",
		"el1_x",
		"ret",
		"return_to_handler",
		"restart_syscall",
		"sec_x",
		"start_thread",
		"x86_pmu",
		"__do_sys_poll",
		"a",
		"do_",
	};
	char line[256], want[256];

	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		struct profile *p = profile__new();
		struct parse_stats st;

		CHECK(p);
		snprintf(line, sizeof(line), "c;main;%s;schedule 1\n", entries[i]);
		CHECK_INT(parse_str(line, p, NULL, &st), 0);
		snprintf(want, sizeof(want), "U:main;K:%s;K:schedule", entries[i]);
		CHECK_STR(stack_str(p, 0), want);
		profile__free(p);
	}
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		struct profile *p = profile__new();
		struct parse_stats st;

		CHECK(p);
		snprintf(line, sizeof(line), "c;main;%s;schedule 1\n", others[i]);
		CHECK_INT(parse_str(line, p, NULL, &st), 0);
		snprintf(want, sizeof(want), "U:main;U:%s;U:schedule", others[i]);
		CHECK_STR(stack_str(p, 0), want);
		profile__free(p);
	}
}

TEST(folded_bcc_with_delimiter)
{
	struct profile *p = profile__new();
	struct parse_stats st;

	CHECK(p);
	CHECK_INT(parse_path(DATA "bcc_fd.txt", p, NULL, &st), 0);
	CHECK_INT(st.records, 2);
	CHECK_STR(stack_str(p, 0),
		  "U:__libc_start_main;U:main;U:clock_nanosleep;"
		  "K:entry_SYSCALL_64_after_hwframe;K:do_syscall_64;"
		  "K:__x64_sys_clock_nanosleep;K:do_nanosleep;K:schedule;K:__schedule");
	CHECK_STR(comm_of(p, 1), "pipe reader");
	CHECK_STR(stack_str(p, 1), "U:read;K:entry_SYSCALL_64_after_hwframe;K:do_syscall_64;"
				   "K:ksys_read;K:vfs_read;K:pipe_read;K:schedule;K:__schedule");
	profile__free(p);
}

TEST(folded_delimiter_wins_over_entry_heuristic)
{
	struct profile *p = profile__new();
	struct parse_stats st;

	CHECK(p);
	/* A user function that looks like a kernel entry stays user before "-". */
	CHECK_INT(parse_str("x;main;do_syscall_64_shim;-;schedule 1\n", p, NULL, &st), 0);
	CHECK_STR(stack_str(p, 0), "U:main;U:do_syscall_64_shim;K:schedule");
	profile__free(p);
}

/*
 * Consecutive lines reuse the frames of their common prefix; that must never
 * change a result. Parsing each line on its own (no reuse possible) and all
 * lines at once must give identical profiles, ids included.
 */
TEST(folded_prefix_reuse_changes_nothing)
{
	static const char *const frames[] = {
		"main",
		"do_syscall_64_shim",
		"-",
		"do_syscall_64",
		"schedule",
		"[Missed User Stack]",
		"[Missed Kernel Stack]",
		"read_[k]",
		"",
		"entry_SYSCALL_64",
		"foo",
		"foobar",
		"fo",
	};
	size_t nf = sizeof(frames) / sizeof(frames[0]);
	struct profile *a = profile__new(), *b = profile__new();
	struct parse_stats st;
	char *all = malloc(1 << 20), line[512];
	size_t alen = 0;
	unsigned seed = 1;

	CHECK(a && b && all);
	for (int i = 0; i < 3000; i++) {
		int len = snprintf(line, sizeof(line), "c%u", (seed >> 4) % 3);
		int depth;

		seed = seed * 1103515245 + 12345;
		depth = (seed >> 8) % 9;
		/* Runs of lines sharing prefixes: usually keep the previous line's start. */
		for (int d = 0; d < depth; d++) {
			seed = seed * 1103515245 + 12345;
			len += snprintf(line + len, sizeof(line) - len, ";%s",
					frames[(seed >> 16) % (d < 3 && (seed & 3) ? 2 : nf)]);
		}
		len += snprintf(line + len, sizeof(line) - len, " %d\n", i + 1);
		memcpy(all + alen, line, len);
		alen += len;
		CHECK_INT(parse_str(line, a, NULL, &st), 0);
	}
	all[alen] = '\0';
	CHECK_INT(parse_str(all, b, NULL, &st), 0);
	CHECK_INT(st.records, 3000);
	CHECK_INT(profile__nr_frames(a), profile__nr_frames(b));
	CHECK_INT(profile__nr_stacks(a), profile__nr_stacks(b));
	CHECK_INT(profile__nr_rows(a), profile__nr_rows(b));
	for (size_t i = 0; i < profile__nr_rows(a); i++) {
		char sa[300];

		snprintf(sa, sizeof(sa), "%s", stack_str(a, i));
		CHECK_STR(stack_str(b, i), sa);
		CHECK_U64(profile__row_at(a, i)->w.off_ns, profile__row_at(b, i)->w.off_ns);
	}
	free(all);
	profile__free(a);
	profile__free(b);
}

TEST(folded_prefix_reuse_respects_the_delimiter_mode)
{
	struct profile *p = profile__new();
	struct parse_stats st;

	CHECK(p);
	CHECK_INT(parse_str("a;main;do_syscall_64_shim;-;schedule 1\n"
			    "a;main;do_syscall_64_shim;schedule 1\n"
			    "a;main;do_syscall_64_shim;-;x 1\n"
			    "a;[Missed User Stack];k1;k2 1\n"
			    "b;[Missed User Stack];k1;k3 1\n"
			    "a;foo;barbaz 1\n"
			    "a;foo;bar 1\n",
			    p, NULL, &st),
		  0);
	CHECK_STR(stack_str(p, 0), "U:main;U:do_syscall_64_shim;K:schedule");
	CHECK_STR(stack_str(p, 1), "U:main;K:do_syscall_64_shim;K:schedule");
	CHECK_STR(stack_str(p, 2), "U:main;U:do_syscall_64_shim;K:x");
	CHECK_STR(stack_str(p, 4), "M:[Missed User Stack];K:k1;K:k3");
	CHECK_STR(comm_of(p, 4), "b");
	CHECK_STR(stack_str(p, 6), "U:foo;U:bar");
	profile__free(p);
}

TEST(folded_missed_stacks)
{
	struct profile *p = profile__new();
	struct parse_stats st;

	CHECK(p);
	CHECK_INT(parse_path(DATA "bcc_missed.txt", p, NULL, &st), 0);
	CHECK_INT(st.records, 3);
	CHECK_STR(stack_str(p, 0), "M:[Missed User Stack];K:entry_SYSCALL_64_after_hwframe;"
				   "K:do_syscall_64;K:futex_wait;K:schedule");
	CHECK_STR(stack_str(p, 1), "U:main;U:pthread_mutex_lock;M:[Missed Kernel Stack]");
	CHECK_STR(stack_str(p, 2), "M:[Missed User Stack];M:[Missed Kernel Stack]");
	CHECK_U64(profile__totals(p)->all.off_ns, 600000);
	profile__free(p);
}

TEST(folded_kernel_suffix)
{
	struct profile *p = profile__new();
	struct parse_stats st;

	CHECK(p);
	CHECK_INT(parse_path(DATA "flamegraph_k.txt", p, NULL, &st), 0);
	CHECK_STR(stack_str(p, 0), "U:start_thread;U:JavaMain;U:Thread::sleep;U:syscall;"
				   "K:entry_SYSCALL_64;K:do_syscall_64;K:schedule");
	profile__free(p);
}

/* FlameGraph marks inlined functions "_[i]": read as FRAME_INLINE, written back the same. */
TEST(folded_inline_suffix_round_trips)
{
	const char *in = "app;main;parse_[i];parse_header_[i];read;-;ksys_read;schedule 7\n"
			 "app;main;parse;read_[i] 3\n";
	struct profile *p = profile__new(), *back = profile__new();
	struct parse_stats st;
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	CHECK(p && back);
	CHECK_INT(parse_str(in, p, NULL, &st), 0);
	CHECK_STR(stack_str(p, 0), "U:main;I:parse;I:parse_header;U:read;K:ksys_read;K:schedule");
	CHECK_STR(stack_str(p, 1), "U:main;U:parse;I:read");
	out = open_memstream(&text, &len);
	CHECK(out);
	CHECK_INT(folded__write(out, p), 0);
	fclose(out);
	CHECK_STR(text, in);
	CHECK_INT(parse_str(text, back, NULL, &st), 0);
	CHECK_STR(stack_str(back, 0),
		  "U:main;I:parse;I:parse_header;U:read;K:ksys_read;K:schedule");
	free(text);
	profile__free(p);
	profile__free(back);
}

TEST(folded_crlf_blank_and_comments)
{
	struct profile *p = profile__new();
	struct parse_stats st;

	CHECK(p);
	CHECK_INT(parse_path(DATA "crlf.txt", p, NULL, &st), 0);
	CHECK_INT(st.lines, 4);
	CHECK_INT(st.records, 2);
	CHECK_INT(st.skipped, 1);
	CHECK_INT(st.malformed, 0);
	CHECK_STR(stack_str(p, 1), "U:a;U:c");
	CHECK_U64(profile__row_at(p, 1)->w.off_ns, 2000);
	profile__free(p);
}

TEST(folded_empty_input)
{
	struct profile *p = profile__new();
	struct parse_stats st;

	CHECK(p);
	CHECK_INT(parse_str("", p, NULL, &st), 0);
	CHECK_INT(st.lines, 0);
	CHECK_INT(st.records, 0);
	CHECK_INT(profile__nr_rows(p), 0);
	profile__free(p);
}

TEST(folded_scale_and_count_only)
{
	struct profile *p = profile__new();
	struct folded_opts ns = {.value_scale_ns = 1}, cnt = {.count_only = true};
	struct parse_stats st;

	CHECK(p);
	CHECK_INT(parse_str("a;f 5\n", p, &ns, &st), 0);
	CHECK_U64(profile__totals(p)->all.off_ns, 5);
	CHECK_U64(profile__totals(p)->all.count, 1);
	CHECK_INT(parse_str("b;f 7\n", p, &cnt, &st), 0);
	CHECK_U64(profile__totals(p)->all.off_ns, 5);
	CHECK_U64(profile__totals(p)->all.count, 8);
	CHECK_U64(profile__row_at(p, 1)->w.off_ns, 0);
	profile__free(p);
}

TEST(folded_malformed_lines_are_counted_not_fatal)
{
	struct profile *p = profile__new();
	struct parse_stats st;
	const char *in = "ok;f 1\n"
			 "novalue\n"
			 "x;f abc\n"
			 "x;f -5\n"
			 "x;f 1.5\n"
			 ";f 3\n"
			 "x;f \n" /* trailing space, no value: "x;f" has no space either */
			 "ok;g 2\n";

	CHECK(p);
	CHECK_INT(parse_str(in, p, NULL, &st), 0);
	CHECK_INT(st.lines, 8);
	CHECK_INT(st.records, 2);
	CHECK_INT(st.malformed, 6);
	CHECK_INT(st.first_malformed_line, 2);
	CHECK_STR(st.first_malformed_reason, "no value after the last space");
	CHECK_INT(st.error_line, 0);
	CHECK_U64(profile__totals(p)->all.off_ns, 3000);
	profile__free(p);

	p = profile__new();
	CHECK(p);
	CHECK_INT(parse_str("x;f abc\n;f 3\n", p, NULL, &st), 0);
	CHECK_STR(st.first_malformed_reason, "value is not a non-negative integer");
	CHECK_INT(parse_str("a b;f 1\n;f 3\n", p, NULL, &st), 0);
	CHECK_INT(st.first_malformed_line, 2);
	CHECK_STR(st.first_malformed_reason, "empty comm");
	profile__free(p);
}

TEST(folded_nul_bytes_and_binary_junk)
{
	static const char in[] = "ok;f 1\nbad\0line;f 2\n\x01\xff\xfe\x80;\x7f 3\n\0\0\0\0\nok;f 4";
	struct profile *p = profile__new();
	struct parse_stats st;

	CHECK(p);
	CHECK_INT(parse_buf(in, sizeof(in) - 1, p, NULL, &st), 0);
	CHECK_INT(st.lines, 5);
	CHECK_INT(st.records, 3); /* junk that is well-formed is still a record */
	CHECK_INT(st.malformed, 2);
	CHECK_INT(st.first_malformed_line, 2);
	CHECK_STR(st.first_malformed_reason, "NUL byte in line");
	CHECK_U64(profile__totals(p)->all.off_ns, 8000);
	profile__free(p);
}

TEST(folded_value_overflow_is_fatal_with_line)
{
	struct profile *p = profile__new();
	struct folded_opts ns = {.value_scale_ns = 1};
	struct parse_stats st;

	CHECK(p);
	CHECK_INT(parse_str("a;f 1\na;f 18446744073709551616\na;f 1\n", p, &ns, &st), -EOVERFLOW);
	CHECK_INT(st.error_line, 2);
	CHECK_INT(st.records, 1);
	CHECK_U64(profile__totals(p)->all.off_ns, 1); /* what came before stays */
	/* Fits 64 bits but not once scaled from microseconds. */
	CHECK_INT(parse_str("\n\na;f 18446744073709552\n", p, NULL, &st), -EOVERFLOW);
	CHECK_INT(st.error_line, 3);
	CHECK_INT(parse_str("a;f 18446744073709551\n", p, NULL, &st), 0);
	/* The sum wraps. */
	CHECK_INT(parse_str("a;f 18446744073709551615\n", p, &ns, &st), -EOVERFLOW);
	CHECK_INT(st.error_line, 1);
	profile__free(p);
}

TEST(folded_megabyte_line)
{
	size_t nframes = 1 << 17, len = 0; /* 8 bytes a frame: about 1 MB */
	char *buf = malloc(nframes * 8 + 64);
	struct profile *p = profile__new();
	struct parse_stats st;
	size_t n;

	CHECK(buf && p);
	len += sprintf(buf, "big");
	for (size_t i = 0; i < nframes; i++)
		len += sprintf(buf + len, ";f%05zu", i % 50000);
	len += sprintf(buf + len, " 9\nsmall;f 1\n");
	CHECK_INT(parse_buf(buf, len, p, NULL, &st), 0);
	CHECK_INT(st.records, 2);
	CHECK_INT(profile__nr_frames(p), 50001); /* and "f" */
	CHECK(profile__stack_at(p, 0, &n) != NULL);
	CHECK_INT(n, nframes);
	CHECK_STR(profile__frame_at(p, profile__stack_at(p, 0, &n)[nframes - 1])->name, "f31071");
	free(buf);
	profile__free(p);
}

/* A million lines with 320000 distinct stacks: every line lands, sums are exact. */
TEST(folded_million_lines)
{
	size_t nlines = 1000000, cap = nlines * 200, len = 0;
	char *buf = malloc(cap);
	struct profile *p = profile__new();
	struct parse_stats st;
	uint64_t want_us = 0;

	CHECK(buf && p);
	for (size_t i = 0; i < nlines; i++) {
		unsigned r = (unsigned)(i * 2654435761u);

		len += snprintf(buf + len, cap - len,
				"worker-%u;start_thread;thread_main;run_task_%u;lock_%u;"
				"pthread_mutex_lock;__lll_lock_wait;entry_SYSCALL_64_after_hwframe;"
				"do_syscall_64;__x64_sys_futex;do_futex;futex_wait;schedule;"
				"__schedule %u\n",
				r % 64, r % 500, (r >> 9) % 40, 1 + r % 1000);
		want_us += 1 + r % 1000;
	}
	CHECK_INT(parse_buf(buf, len, p, NULL, &st), 0);
	CHECK_INT(st.lines, nlines);
	CHECK_INT(st.records, nlines);
	CHECK_INT(st.malformed, 0);
	CHECK_U64(profile__totals(p)->all.count, nlines);
	CHECK_U64(profile__totals(p)->all.off_ns, want_us * 1000);
	CHECK_INT(profile__nr_frames(p), 500 + 40 + 11);
	CHECK_INT(profile__nr_threads(p), 64);
	free(buf);
	profile__free(p);
}

int main(void)
{
	return unit_run();
}
