// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>

#include "parse/bpftrace.h"
#include "unit.h"

#define DATA "tests/data/bpftrace/"

static int parse_buf(const char *buf, size_t len, struct profile *p, struct parse_stats *st)
{
	FILE *f = len ? fmemopen((void *)buf, len, "r") : fopen("/dev/null", "r");
	int err;

	if (!f)
		return -errno;
	err = bpftrace__parse(f, p, st);
	fclose(f);
	return err;
}

static int parse_str(const char *s, struct profile *p, struct parse_stats *st)
{
	return parse_buf(s, strlen(s), p, st);
}

static int parse_path(const char *path, struct profile *p, struct parse_stats *st)
{
	FILE *f = fopen(path, "r");
	int err;

	if (!f)
		return -errno;
	err = bpftrace__parse(f, p, st);
	fclose(f);
	return err;
}

/* The stack of row idx as "K:name;U:name", root first. */
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
		char k = f->kind == FRAME_KERNEL ? 'K' : f->kind == FRAME_USER ? 'U' : 'M';

		off += snprintf(buf + off, sizeof(buf) - off, "%s%c:%s", i ? ";" : "", k, f->name);
	}
	return buf;
}

static const struct profile_thread *thread_of(const struct profile *p, size_t idx)
{
	return profile__thread_at(p, profile__row_at(p, idx)->thread);
}

TEST(bpftrace_real_offcpu_dump)
{
	struct profile *p = profile__new();
	struct parse_stats st;

	CHECK(p);
	CHECK_INT(parse_path(DATA "offcpu_real.txt", p, &st), 0);
	CHECK_INT(st.lines, 16);
	CHECK_INT(st.records, 1);
	CHECK_INT(st.malformed, 0);
	CHECK_INT(st.skipped, 2); /* "Attaching 4 probes...", "ready" */
	CHECK_INT(profile__nr_rows(p), 1);
	/* user stack root first, then kernel root first; offsets gone, raw addresses marked */
	CHECK_STR(stack_str(p, 0),
		  "U:[unsymbolized 0x11e1a300];U:[unsymbolized 0x7f7c36c5d503];"
		  "K:entry_SYSCALL_64_after_hwframe;K:do_syscall_64;"
		  "K:__x64_sys_clock_nanosleep;K:common_nsleep;K:hrtimer_nanosleep;"
		  "K:do_nanosleep;K:schedule;K:__schedule");
	CHECK_STR(thread_of(p, 0)->comm, "sleep");
	CHECK_INT(thread_of(p, 0)->pid, 2451);
	CHECK_INT(thread_of(p, 0)->tid, 0);
	/* "_ns": the value is time, one interval per key */
	CHECK_U64(profile__row_at(p, 0)->w.off_ns, 300141379);
	CHECK_U64(profile__row_at(p, 0)->w.count, 1);
	CHECK_INT(profile__row_at(p, 0)->state, OFFCPU_STATE_UNKNOWN);
	profile__free(p);
}

TEST(bpftrace_seed_kstack_count)
{
	struct profile *p = profile__new();
	struct parse_stats st;

	CHECK(p);
	CHECK_INT(parse_path(DATA "seed_kstack_count.txt", p, &st), 0);
	CHECK_INT(st.records, 1);
	CHECK_STR(stack_str(p, 0), "K:schedule;K:finish_task_switch");
	CHECK_U64(profile__row_at(p, 0)->w.count, 42);
	CHECK_U64(profile__row_at(p, 0)->w.off_ns, 0);
	CHECK_STR(thread_of(p, 0)->comm, "");
	profile__free(p);
}

TEST(bpftrace_real_sched_switch_empty_ustack)
{
	struct profile *p = profile__new();
	struct parse_stats st;

	CHECK(p);
	CHECK_INT(parse_path(DATA "sched_switch_real.txt", p, &st), 0);
	CHECK_INT(st.records, 3);
	CHECK_INT(st.malformed, 0);
	CHECK_STR(stack_str(p, 0), "K:ret_from_fork_asm;K:ret_from_fork;K:kthread;"
				   "K:worker_thread;K:schedule;K:__schedule");
	CHECK_STR(thread_of(p, 0)->comm, "kworker/0:1");
	CHECK_U64(profile__row_at(p, 0)->w.count, 1);
	CHECK_U64(profile__row_at(p, 1)->w.count, 2);
	CHECK_STR(stack_str(p, 2), "U:epoll_wait;K:entry_SYSCALL_64_after_hwframe;"
				   "K:do_syscall_64;K:__x64_sys_epoll_wait;K:do_epoll_wait;"
				   "K:schedule_hrtimeout_range_clock;K:schedule;K:__schedule");
	CHECK_STR(thread_of(p, 2)->comm, "bpftrace");
	profile__free(p);
}

TEST(bpftrace_real_full_dump_skips_other_maps)
{
	struct profile *p = profile__new();
	struct parse_stats st;

	CHECK(p);
	CHECK_INT(parse_path(DATA "offcpu_us_full_real.txt", p, &st), 0);
	CHECK_INT(st.malformed, 0);
	/* 22 @offcpu_us entries; @lat's histogram, @n and 14 @start entries are skipped */
	CHECK_INT(st.records, 22);
	CHECK(st.skipped >= 16);
	CHECK_U64(profile__totals(p)->all.off_ns, 8815643ULL * 1000);
	CHECK_U64(profile__totals(p)->all.count, 22);
	/* "comm, pid, tid" */
	for (size_t i = 0; i < profile__nr_rows(p); i++) {
		const struct profile_thread *t = thread_of(p, i);

		if (!strcmp(t->comm, "ksoftirqd/0")) {
			CHECK_INT(t->pid, 14);
			CHECK_INT(t->tid, 14);
			CHECK_U64(profile__row_at(p, i)->w.off_ns, 609000);
		}
		CHECK(strlen(t->comm) > 0);
	}
	profile__free(p);
}

TEST(bpftrace_units_by_map_name)
{
	struct profile *p = profile__new();
	struct parse_stats st;

	CHECK(p);
	CHECK_INT(parse_str("@a_us[\n    f+1\n]: 3\n@b_ms[\n    f+1\n]: 3\n@c_s[\n    f+1\n]: 3\n"
			    "@d[\n    f+1\n]: 3\n@e_ns[\n    f+1\n]: 3\n",
			    p, &st),
		  0);
	CHECK_INT(st.records, 5);
	/* all the same (thread, stack): one row */
	CHECK_INT(profile__nr_rows(p), 1);
	CHECK_U64(profile__totals(p)->all.off_ns, 3000 + 3000000 + 3000000000ULL + 3);
	CHECK_U64(profile__totals(p)->all.count, 4 + 3);
	profile__free(p);
}

TEST(bpftrace_stack_kinds_by_name_position_and_address)
{
	struct profile *p = profile__new();
	struct parse_stats st;

	CHECK(p);
	/* A map named for user stacks: its only stack is user. */
	CHECK_INT(parse_str("@offcpu_ustack[\n    inner+4\n    outer+8\n]: 1\n", p, &st), 0);
	CHECK_STR(stack_str(p, 0), "U:outer;U:inner");
	/* Kernel addresses are kernel in any position; perf mode is read too. */
	CHECK_INT(parse_str("@x[\n    0xffffffff81000000\n    0x7f0000001000\n]: 1\n", p, &st), 0);
	CHECK_STR(stack_str(p, 1),
		  "K:[unsymbolized 0x7f0000001000];K:[unsymbolized 0xffffffff81000000]");
	CHECK_INT(parse_str("@y[comm1, \n\t7f7c36c5d503 epoll_wait+86 "
			    "(/usr/lib/x86_64-linux-gnu/libc.so.6)\n\tffffffff81e00000 "
			    "schedule+0x23 ([kernel.kallsyms])\n]: 1\n",
			    p, &st),
		  0);
	CHECK_STR(stack_str(p, 2), "K:schedule;K:epoll_wait");
	CHECK_STR(thread_of(p, 2)->comm, "comm1");
	/* Kernel stack first, user second; a kernel address in the user stack stays kernel. */
	CHECK_INT(parse_str("@z[\n    k_in+1\n    k_out+2\n, \n    u_in+1\n    0xffffffff81000000\n"
			    "    u_out\n, c, 7, 8]: 9\n",
			    p, &st),
		  0);
	CHECK_STR(stack_str(p, 3),
		  "U:u_out;K:[unsymbolized 0xffffffff81000000];U:u_in;K:k_out;K:k_in");
	CHECK_INT(thread_of(p, 3)->pid, 7);
	CHECK_INT(thread_of(p, 3)->tid, 8);
	/* perf mode's unnamed frame is no symbol either */
	CHECK_INT(parse_str("@w[\n\t7f7c36c5d503 [unknown] ([unknown])\n]: 1\n", p, &st), 0);
	CHECK_STR(stack_str(p, 4), "K:[unsymbolized]");
	profile__free(p);
}

TEST(bpftrace_cpp_symbols_keep_commas_and_spaces)
{
	struct profile *p = profile__new();
	struct parse_stats st;

	CHECK(p);
	CHECK_INT(parse_str("@[\n    schedule+35\n, \n    std::map<int, int>::find(int const&) "
			    "const+12\n    main+3\n, a.out]: 5\n",
			    p, &st),
		  0);
	CHECK_INT(st.records, 1);
	CHECK_STR(stack_str(p, 0),
		  "U:main;U:std::map<int, int>::find(int const&) const;K:schedule");
	profile__free(p);
}

TEST(bpftrace_all_empty_stacks_and_single_line_keys)
{
	struct profile *p = profile__new();
	struct parse_stats st;

	CHECK(p);
	/* Both stacks printed as nothing: the time stays, on an empty stack. */
	CHECK_INT(parse_str("@[, , swapper/0]: 4\n@[\n    f+1\n, ]: 6\n", p, &st), 0);
	CHECK_INT(st.records, 2);
	CHECK_STR(stack_str(p, 0), "");
	CHECK_STR(thread_of(p, 0)->comm, "swapper/0");
	CHECK_STR(stack_str(p, 1), "K:f");
	/* A stack element that is a bare newline, found by fuzzing. */
	CHECK_INT(parse_str("@x[a, \n]: 5\n", p, &st), 0);
	CHECK_INT(st.records, 1);
	CHECK_STR(stack_str(p, 2), "");
	CHECK_STR(thread_of(p, 2)->comm, "a");
	profile__free(p);
}

TEST(bpftrace_skips_scalars_histograms_and_text)
{
	struct profile *p = profile__new();
	struct parse_stats st;
	const char *in = "Attaching 3 probes...\n"
			 "hello from printf\n"
			 "@calls: 12\n"
			 "@start[1234]: 5678\n"
			 "@lat:\n"
			 "[0, 1)    5 |@@@@@|\n"
			 "[1, 2)    1 |@|\n"
			 "\n"
			 "@hs[\n    f+1\n]:\n"
			 "[4, 8)    2 |@@|\n"
			 "@st[\n    f+1\n]: count 2, average 3, total 6\n";

	CHECK(p);
	CHECK_INT(parse_str(in, p, &st), 0);
	CHECK_INT(st.records, 0);
	CHECK_INT(st.malformed, 0);
	CHECK_INT(st.skipped, 10);
	CHECK_INT(profile__nr_rows(p), 0);
	profile__free(p);
}

TEST(bpftrace_malformed_entries)
{
	struct profile *p = profile__new();
	struct parse_stats st;
	const char *in = "@a[\n    f+1\n]: 1\n"
			 "@b[\n    f+1\n"	/* cut short by the next entry */
			 "@c[\n    g+1\n]: x\n" /* not a number */
			 "@d[\n    h+1\n]: -3\n"
			 "@e[\n    i+1\n]: 2\n"
			 "@f[\n    j+1\n"; /* cut short by EOF */

	CHECK(p);
	CHECK_INT(parse_str(in, p, &st), 0);
	CHECK_INT(st.records, 2);
	CHECK_INT(st.malformed, 4);
	CHECK_INT(st.first_malformed_line, 4);
	CHECK_STR(st.first_malformed_reason, "map entry cut short");
	CHECK_U64(profile__totals(p)->all.count, 3);
	profile__free(p);
}

TEST(bpftrace_overflow_is_fatal)
{
	struct profile *p = profile__new();
	struct parse_stats st;

	CHECK(p);
	CHECK_INT(parse_str("@a[\n    f\n]: 1\n@b[\n    f\n]: 18446744073709551616\n", p, &st),
		  -EOVERFLOW);
	CHECK_INT(st.error_line, 6);
	CHECK_INT(st.records, 1);
	CHECK_INT(parse_str("@t_s[\n    f\n]: 18446744074\n", p, &st), -EOVERFLOW);
	CHECK_INT(st.error_line, 3);
	CHECK_INT(parse_str("@a[\n    f\n]: 18446744073709551615\n", p, &st), -EOVERFLOW);
	CHECK_U64(profile__totals(p)->all.count, 1);
	profile__free(p);
}

TEST(bpftrace_crlf_empty_and_junk)
{
	static const char junk[] =
		"@a[\r\n    f+1\r\n, , x]: 2\r\n\0\0@\n@[\x01\xff\n    \0\n]: 3\n"
		"@[[[[\n]]]: 1\n@]: 4\n@:\n,,,]: 1\n";
	struct profile *p = profile__new();
	struct parse_stats st;

	CHECK(p);
	CHECK_INT(parse_str("", p, &st), 0);
	CHECK_INT(st.lines, 0);
	CHECK_INT(parse_buf(junk, sizeof(junk) - 1, p, &st), 0);
	CHECK(st.records >= 1);
	CHECK_STR(stack_str(p, 0), "K:f");
	CHECK_STR(thread_of(p, 0)->comm, "x");
	CHECK(st.malformed >= 2);
	profile__free(p);
}

int main(void)
{
	return unit_run();
}
