// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <json-c/json.h>

#include "model/integrity.h"
#include "model/profile.h"
#include "output/report.h"
#include "output/term.h"
#include "unit.h"

#define US 1000ull
#define MS 1000000ull

/* Intern a stack written root first as "u:frame;...;k:frame" (m: missing, i: inline). */
static uint32_t stack_of(struct profile *p, const char *spec)
{
	uint32_t ids[64];
	size_t n = 0;

	for (const char *s = spec; *s && n < 64;) {
		const char *end = strchr(s, ';');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		enum frame_kind k = FRAME_USER;

		frame_kind__from_letter(s[0], &k);
		ids[n++] = (uint32_t)profile__frame(p, k, s + 2, len - 2);
		s += len + (end ? 1 : 0);
	}
	return (uint32_t)profile__stack(p, ids, n);
}

static void add(struct profile *p, int th, uint32_t st, enum offcpu_state state, uint64_t count,
		uint64_t off, uint64_t runq)
{
	struct profile_weight w = {count, off, runq};

	profile__add(p, (uint32_t)th, st, state, &w);
}

static void set_time(struct profile *p, int th, uint64_t wall, uint64_t oncpu, uint64_t runq)
{
	struct profile_thread_time t = {wall, oncpu, runq};

	profile__set_thread_time(p, (uint32_t)th, &t);
}

/*
 * A server whose workers contend on a mutex, with an I/O thread, a poll loop,
 * a preempted spinner, and a cron job whose pid the collector did not know.
 * Stacks are real ones from tests/data/reasons.
 */
static struct profile *server_profile(void)
{
	struct profile *p = profile__new();
	uint32_t lock, lock_long, poll, fsync, spin, sleep, missing;
	int main_t, w1, w2, io, cron;

	if (!p)
		return NULL;
	profile__set_runq_known(p, true);
	lock = stack_of(
		p,
		"u:start_thread;u:worker_loop;u:__GI___lll_lock_wait;"
		"k:entry_SYSCALL_64_after_hwframe;k:do_syscall_64;k:__x64_sys_futex;"
		"k:do_futex;k:futex_wait;k:__futex_wait;k:futex_do_wait;k:schedule;k:__schedule");
	lock_long = stack_of(p, "u:start_thread;u:worker_loop;u:handle_request_with_a_very_long_"
				"templated_name<std::map<std::string,std::vector<int>>>;"
				"u:pthread_mutex_lock;u:__GI___lll_lock_wait;k:__x64_sys_futex;"
				"k:futex_do_wait;k:schedule");
	poll = stack_of(p, "u:main;u:event_loop;u:__GI___poll;k:entry_SYSCALL_64_after_hwframe;"
			   "k:do_syscall_64;k:__x64_sys_poll;k:do_sys_poll;"
			   "k:poll_schedule_timeout.constprop.0;k:schedule_hrtimeout_range_clock;"
			   "k:schedule;k:__schedule");
	fsync = stack_of(p,
			 "u:start_thread;u:flush;u:__GI_fsync;k:__x64_sys_fsync;k:do_fsync;"
			 "k:ext4_sync_file;k:file_write_and_wait_range;k:__filemap_fdatawait_range;"
			 "k:folio_wait_writeback;k:folio_wait_bit;k:io_schedule;k:schedule;"
			 "k:__schedule");
	spin = stack_of(p, "u:start_thread;u:compress;k:asm_sysvec_apic_timer_interrupt;"
			   "k:irqentry_exit_to_user_mode;k:schedule;k:__schedule");
	sleep = stack_of(p, "u:main;u:clock_nanosleep;k:__x64_sys_clock_nanosleep;"
			    "k:hrtimer_nanosleep;k:do_nanosleep;k:schedule;k:__schedule");
	missing = stack_of(p, "m:[Missed User Stack];k:do_syscall_64;k:__x64_sys_wait4;"
			      "k:kernel_wait4;k:do_wait;k:schedule");

	main_t = profile__thread(p, 1234, 1234, "server");
	w1 = profile__thread(p, 1234, 1235, "worker-1");
	w2 = profile__thread(p, 1234, 1236, "worker-2");
	io = profile__thread(p, 1234, 1237, "io\x1b[31m");
	cron = profile__thread(p, 0, 0, "cron");

	add(p, main_t, poll, OFFCPU_STATE_SLEEP, 120, 900 * MS, 2 * MS);
	add(p, w1, lock, OFFCPU_STATE_SLEEP, 4000, 1200 * MS, 30 * MS);
	add(p, w1, lock_long, OFFCPU_STATE_SLEEP, 100, 80 * MS, 1 * MS);
	add(p, w1, spin, OFFCPU_STATE_PREEMPT, 300, 40 * MS, 40 * MS);
	add(p, w2, lock, OFFCPU_STATE_SLEEP, 3500, 1100 * MS, 25 * MS);
	add(p, w2, spin, OFFCPU_STATE_PREEMPT, 280, 35 * MS, 35 * MS);
	add(p, io, fsync, OFFCPU_STATE_DISK, 50, 600 * MS, 500 * US);
	add(p, cron, sleep, OFFCPU_STATE_SLEEP, 1, 2000 * MS, 0);
	add(p, cron, missing, OFFCPU_STATE_SLEEP, 1, 750 * US, 0);

	set_time(p, main_t, 2000 * MS, 1050 * MS, 5 * MS);
	set_time(p, w1, 2000 * MS, 600 * MS, 75 * MS);
	set_time(p, w2, 2000 * MS, 700 * MS, 62 * MS);
	set_time(p, io, 2000 * MS, 1300 * MS, 1 * MS);
	return p;
}

static struct integrity partial(void)
{
	struct integrity in = {.status = INTEGRITY_PARTIAL, .evidence = 1};

	snprintf(in.message, sizeof(in.message),
		 "the stack map filled up; rerun with a bigger "
		 "--stack-storage-size");
	integrity__add_loss(&in, "lost_stack_traces", 12, 4 * MS);
	integrity__add_loss(&in, "lost_events", 0, 0);
	integrity__add_loss(&in, "map_full_start", 3, 0);
	return in;
}

/* Render into a malloc'ed string. */
static char *render(const struct profile *p, const struct integrity *in,
		    const struct report_opts *o, int *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	*err = report__write(f, p, in, o);
	fclose(f);
	return buf;
}

/* Compare with tests/data/report/NAME; OFFCPU_UPDATE_GOLDEN=1 rewrites it. */
static int golden(const char *name, const char *got, char *why, size_t why_len)
{
	char path[256];
	char *want;
	int rc = 0;

	snprintf(path, sizeof(path), "tests/data/report/%s", name);
	if (getenv("OFFCPU_UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "w");

		if (!f || fputs(got, f) < 0 || fclose(f))
			return -1;
	}
	want = unit_slurp(path);
	if (!want) {
		snprintf(why, why_len, "cannot read %s", path);
		return -1;
	}
	if (strcmp(want, got)) {
		size_t i = 0, line = 1;

		while (want[i] && want[i] == got[i])
			line += want[i++] == '\n';
		snprintf(why, why_len, "%s differs at line %zu", path, line);
		rc = -1;
	}
	free(want);
	return rc;
}

#define CHECK_GOLDEN(name, got)                              \
	do {                                                 \
		char why_[300];                              \
		if (golden(name, got, why_, sizeof(why_))) { \
			UNIT_FAIL("%s", why_);               \
			return;                              \
		}                                            \
	} while (0)

/* Every line at most width display columns, escapes not counted. */
static int widest_line(const char *s)
{
	int max = 0, col = 0;

	for (; *s; s++) {
		if (*s == '\033') {
			while (*s && *s != 'm')
				s++;
			continue;
		}
		if (*s == '\n') {
			col = 0;
			continue;
		}
		if (((unsigned char)*s & 0xc0) != 0x80 && ++col > max)
			max = col;
	}
	return max;
}

/* One of a thing is not "1 threads": counts agree with their nouns. */
TEST(report_counts_agree_with_their_nouns)
{
	struct profile *p = profile__new();
	struct integrity in = {.status = INTEGRITY_COMPLETE};
	struct report_opts o = {0};
	char buf[48], *out;
	int th, err = -1;

	CHECK_STR(term__count(1, "thread", "threads", buf, sizeof(buf)), "1 thread");
	CHECK_STR(term__count(0, "thread", "threads", buf, sizeof(buf)), "0 threads");
	CHECK_STR(term__count(2, "process", "processes", buf, sizeof(buf)), "2 processes");
	CHECK(p);
	th = profile__thread(p, 7, 7, "one");
	add(p, th, stack_of(p, "u:main;k:schedule"), OFFCPU_STATE_SLEEP, 1, 5 * MS, 0);
	out = render(p, &in, &o, &err);
	CHECK_INT(err, 0);
	CHECK_CONTAINS(out, "in 1 interval; 1 thread in 1 process");
	free(out);
	profile__free(p);
}

TEST(report_text_matches_golden)
{
	struct profile *p = server_profile();
	struct integrity in = partial();
	struct report_opts o = {0};
	char *out;
	int err = -1;

	CHECK(p);
	out = render(p, &in, &o, &err);
	CHECK_INT(err, 0);
	CHECK_GOLDEN("server.txt", out);
	CHECK(!strchr(out, '\033'));
	free(out);
	profile__free(p);
}

TEST(report_color_matches_golden)
{
	struct profile *p = server_profile();
	struct integrity in = partial();
	struct report_opts o = {.color = true};
	char *out;
	int err = -1;

	CHECK(p);
	out = render(p, &in, &o, &err);
	CHECK_INT(err, 0);
	CHECK_GOLDEN("server.color.txt", out);
	CHECK_CONTAINS(out, "\033[31mlock");
	free(out);
	profile__free(p);
}

TEST(report_json_matches_golden_and_parses)
{
	struct profile *p = server_profile();
	struct integrity in = partial();
	struct report_opts o = {.json = true, .top = 3};
	struct json_object *root, *v, *st, *in_obj;
	char *out;
	int err = -1;

	CHECK(p);
	out = render(p, &in, &o, &err);
	CHECK_INT(err, 0);
	CHECK_GOLDEN("server.json", out);
	root = json_tokener_parse(out);
	CHECK(root);
	CHECK(json_object_object_get_ex(root, "top_stacks", &v));
	CHECK_INT(json_object_array_length(v), 3);
	st = json_object_array_get_idx(v, 0);
	CHECK(json_object_object_get_ex(st, "reason", &v));
	CHECK_STR(json_object_get_string(v), "lock");
	CHECK(json_object_object_get_ex(st, "off_ns", &v));
	CHECK_U64(json_object_get_uint64(v), 2300 * MS);
	CHECK(json_object_object_get_ex(root, "integrity", &in_obj));
	CHECK(json_object_object_get_ex(in_obj, "status", &v));
	CHECK_STR(json_object_get_string(v), "partial");
	/* the summary's capture_integrity shape: losses keyed by name */
	CHECK(json_object_object_get_ex(in_obj, "lost_stack_trace_count", &v));
	CHECK_U64(json_object_get_uint64(v), 12);
	CHECK(json_object_object_get_ex(in_obj, "losses", &v));
	CHECK(json_object_is_type(v, json_type_object));
	CHECK(json_object_object_get_ex(v, "map_full_start", &v));
	CHECK(json_object_object_get_ex(v, "count", &v));
	CHECK_U64(json_object_get_uint64(v), 3);
	json_object_put(root);
	free(out);
	profile__free(p);
}

TEST(report_banner_comes_first_only_when_incomplete)
{
	struct profile *p = server_profile();
	struct integrity in = partial();
	struct report_opts o = {0};
	char *out;
	int err;

	CHECK(p);
	out = render(p, &in, &o, &err);
	CHECK(!strncmp(out, "!! capture PARTIAL", 18));
	CHECK_CONTAINS(out, "!!   lost_stack_traces: 12 (4.00ms off-CPU affected)\n");
	CHECK_CONTAINS(out, "!!   map_full_start: 3\n");
	/* A loss counted as zero is evidence, not a loss to shout about. */
	CHECK(!strstr(out, "lost_events"));
	free(out);

	in = (struct integrity){.status = INTEGRITY_COMPLETE, .evidence = 1};
	out = render(p, &in, &o, &err);
	CHECK(!strstr(out, "!!"));
	free(out);
	out = render(p, NULL, &o, &err);
	CHECK(!strstr(out, "!!"));
	free(out);

	in = (struct integrity){.status = INTEGRITY_UNKNOWN};
	out = render(p, &in, &o, &err);
	CHECK(!strncmp(out, "!! capture integrity UNKNOWN", 28));
	free(out);
	profile__free(p);
}

static int occurrences(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* Each loss once; edges and an interrupt apart, as facts, never under "!!". */
TEST(report_banner_names_each_loss_once_and_edges_apart)
{
	struct profile *p = server_profile();
	struct integrity in = {.status = INTEGRITY_COMPLETE, .evidence = 1};
	struct report_opts o = {.width = 100};
	char *out;
	int err;

	CHECK(p);
	integrity__add_loss(&in, "inflight_at_start", 2, 1500 * MS);
	integrity__add_loss(&in, "inflight_at_stop", 1, 500 * MS);
	integrity__add_loss(&in, "interrupted", 1, 0);
	integrity__add_loss(&in, "stack_cache_mismatch", 1, 22 * US);
	snprintf(in.message, sizeof(in.message), "stack_cache_mismatch: 1");
	out = render(p, &in, &o, &err);
	CHECK(!strstr(out, "!!"));
	CHECK(!strncmp(out, "edges: 2 waits at start, 1 at stop: 2.00s counted\n", 50));
	CHECK_CONTAINS(out, "\ninterrupted: the window ends at the interrupt");
	CHECK_CONTAINS(out, "below the threshold: stack_cache_mismatch: 1 (22.0us off-CPU");
	CHECK_INT(occurrences(out, "stack_cache_mismatch"), 1);
	free(out);

	/* Partial: what changes the answer first, the rest marked, the message not repeated. */
	in.status = INTEGRITY_PARTIAL;
	integrity__add_loss(&in, "map_full_agg", 40, 900 * MS);
	((struct integrity_loss *)integrity__loss(&in, "map_full_agg"))->significant = true;
	snprintf(in.message, sizeof(in.message), "map_full_agg: 40");
	out = render(p, &in, &o, &err);
	CHECK(!strncmp(out, "!! capture PARTIAL", 18));
	CHECK_CONTAINS(
		out,
		"\n!!   map_full_agg: 40 (900ms off-CPU affected)\n"
		"!!   stack_cache_mismatch: 1 (22.0us off-CPU affected) (below the threshold)\n"
		"edges: 2 waits");
	CHECK_INT(occurrences(out, "map_full_agg"), 1);
	CHECK(!strstr(out, "inflight_at"));
	free(out);
	profile__free(p);
}

/* Coverage above 100% is printed as such, unaccounted time as negative, and said in words. */
/*
 * A thread asleep through the whole window is a wait at both edges: one wait
 * and its time once in the edges line, and "never ran" in the totals line.
 */
TEST(report_counts_a_wait_through_the_window_once)
{
	struct profile *p = server_profile();
	struct integrity in = {.status = INTEGRITY_COMPLETE, .evidence = 1};
	struct report_opts o = {.width = 100};
	char *out;
	int err;

	CHECK(p);
	integrity__add_loss(&in, "inflight_at_start", 3, 2500 * MS);
	integrity__add_loss(&in, "inflight_at_stop", 2, 1500 * MS);
	integrity__add_loss(&in, "threads_never_ran", 1, 1000 * MS);
	out = render(p, &in, &o, &err);
	CHECK(!strncmp(out,
		       "edges: 2 waits at start, 1 at stop, 1 the whole window: 3.00s counted\n",
		       70));
	CHECK_CONTAINS(out, ", 1 never ran\n");
	CHECK(!strstr(out, "!!"));
	free(out);

	/* Only such waits. */
	memset(&in, 0, sizeof(in));
	in.status = INTEGRITY_COMPLETE;
	in.evidence = 1;
	integrity__add_loss(&in, "inflight_at_start", 1, 1000 * MS);
	integrity__add_loss(&in, "inflight_at_stop", 1, 1000 * MS);
	integrity__add_loss(&in, "threads_never_ran", 1, 1000 * MS);
	out = render(p, &in, &o, &err);
	CHECK(!strncmp(out, "edges: 1 wait the whole window: 1.00s counted\n", 46));
	free(out);
	profile__free(p);
}

/*
 * The report of one thread "over" (4 s of wall, 400 ms on the CPU) whose rows
 * hold off_ns off the CPU in 7 sleeps; its return code in *err.
 */
static char *overcount_report(uint64_t off_ns, int *err)
{
	struct profile *p = profile__new();
	struct profile_thread_time tt = {.wall_ns = 4000 * MS, .oncpu_ns = 400 * MS};
	struct report_opts o = {.width = 80};
	struct integrity in = {.status = INTEGRITY_COMPLETE, .evidence = 1};
	uint32_t fr;
	int th;
	char *out;

	if (!p)
		return NULL;
	fr = (uint32_t)profile__frame(p, FRAME_KERNEL, "do_nanosleep", 12);
	th = profile__thread(p, 5, 5, "over");
	profile__set_runq_known(p, true);
	profile__add(p, (uint32_t)th, profile__stack(p, &fr, 1), OFFCPU_STATE_SLEEP,
		     &(struct profile_weight){7, off_ns, 0});
	profile__set_thread_time(p, (uint32_t)th, &tt);
	out = render(p, &in, &o, err);
	profile__free(p);
	return out;
}

TEST(report_shows_an_overcount_as_such)
{
	int err = -1;
	char *out = overcount_report(3780 * MS, &err);

	CHECK(out);
	CHECK_INT(err, 0);
	CHECK_CONTAINS(out, "-180ms  105% sleep\n");
	CHECK_CONTAINS(out, "overcount: cover > 100% or unacct < 0: the rows claim 180ms more");
	CHECK(widest_line(out) <= 80);
	free(out);
}

/*
 * An overcount within the clocks' disagreement (10 us and 100 ppm of the
 * wall: 410 us here) is shown in the unacct column, with no banner; 420 us
 * over gets the banner.
 */
TEST(report_overcount_of_microseconds_is_not_a_finding)
{
	int err = -1;
	char *out = overcount_report(3600 * MS + 400000, &err);

	CHECK(out);
	CHECK_INT(err, 0);
	CHECK_CONTAINS(out, "-400us");
	CHECK(!strstr(out, "overcount:"));
	free(out);
	out = overcount_report(3600 * MS + 420000, &err);
	CHECK(out);
	CHECK_INT(err, 0);
	CHECK_CONTAINS(out, "-420us");
	CHECK(strstr(out, "overcount:"));
	free(out);
}

/*
 * The budget's main column: a thread that only waited for a CPU says
 * runqueue (it was blank), one with no off-CPU time "-".
 */
TEST(report_budget_main_of_a_thread_only_on_the_run_queue)
{
	struct profile *p = profile__new();
	struct profile_thread_time tt = {
		.wall_ns = 100 * MS, .oncpu_ns = 60 * MS, .runq_ns = 40 * MS};
	struct report_opts o = {.width = 80};
	struct integrity in = {.status = INTEGRITY_COMPLETE, .evidence = 1};
	uint32_t fr;
	int th, idle, err = -1;
	char *out;

	CHECK(p);
	fr = (uint32_t)profile__frame(p, FRAME_KERNEL, "exit_to_user_mode_loop", 22);
	th = profile__thread(p, 5, 5, "busy");
	idle = profile__thread(p, 5, 6, "spin");
	profile__set_runq_known(p, true);
	profile__add(p, (uint32_t)th, profile__stack(p, &fr, 1), OFFCPU_STATE_PREEMPT,
		     &(struct profile_weight){3, 40 * MS, 40 * MS});
	profile__set_thread_time(p, (uint32_t)th, &tt);
	tt.oncpu_ns = 100 * MS;
	tt.runq_ns = 0;
	profile__set_thread_time(p, (uint32_t)idle, &tt);
	out = render(p, &in, &o, &err);
	profile__free(p);
	CHECK(out);
	CHECK_INT(err, 0);
	CHECK_CONTAINS(out, "40.0ms       0       0  100% runqueue\n");
	CHECK_CONTAINS(out, "100ms       0       0       0  100% -\n");
	free(out);
}

TEST(report_never_passes_the_width)
{
	struct profile *p = server_profile();
	struct integrity in = partial();

	CHECK(p);
	for (int width = 40; width <= 160; width += 7) {
		struct report_opts o = {.width = width, .color = width % 2};
		int err = -1;
		char *out = render(p, &in, &o, &err);

		CHECK_INT(err, 0);
		if (widest_line(out) > width) {
			UNIT_FAIL("width %d: a line of %d columns", width, widest_line(out));
			free(out);
			return;
		}
		/* The long C++ name is cut, not wrapped. */
		if (width < 100)
			CHECK_CONTAINS(out, "...");
		free(out);
	}
	profile__free(p);
}

TEST(report_shows_key_frames_and_reasons)
{
	struct profile *p = server_profile();
	struct report_opts o = {.width = 120};
	char *out;
	int err;

	CHECK(p);
	out = render(p, NULL, &o, &err);
	/* Plumbing skipped, innermost first, offsets and suffixes gone. */
	CHECK_CONTAINS(out, "kernel: futex_do_wait <- __futex_wait <- futex_wait\n");
	CHECK_CONTAINS(out, "user:   __GI___lll_lock_wait <- worker_loop <- start_thread\n");
	CHECK_CONTAINS(out, "kernel: poll_schedule_timeout <- do_sys_poll <- __x64_sys_poll\n");
	/* The wait primitive inside the deciding frame is not shown. */
	CHECK_CONTAINS(out, "kernel: folio_wait_writeback <- __filemap_fdatawait_range <- "
			    "file_write_and_wait_range\n");
	CHECK_CONTAINS(out, "user:   [Missed User Stack]\n");
	/* A comm's escape bytes are not passed to the terminal. */
	CHECK(!strchr(out, '\033'));
	CHECK_CONTAINS(out, "io?[31m");
	free(out);
	profile__free(p);
}

TEST(report_empty_profile)
{
	struct profile *p = profile__new();
	struct report_opts o = {0};
	char *out;
	int err = -1;

	CHECK(p);
	out = render(p, NULL, &o, &err);
	CHECK_INT(err, 0);
	CHECK_CONTAINS(out, "(no off-CPU time recorded)");
	CHECK_CONTAINS(out, "(no stacks)");
	free(out);
	o.json = true;
	out = render(p, NULL, &o, &err);
	CHECK_INT(err, 0);
	CHECK_CONTAINS(out, "\"top_stacks\": []");
	free(out);
	profile__free(p);
}

TEST(term_formats_durations_in_human_units)
{
	char b[16];

	CHECK_STR(term__ns(0, b, sizeof(b)), "0");
	CHECK_STR(term__ns(999, b, sizeof(b)), "999ns");
	CHECK_STR(term__ns(1000, b, sizeof(b)), "1.00us");
	CHECK_STR(term__ns(12345, b, sizeof(b)), "12.3us");
	CHECK_STR(term__ns(999499, b, sizeof(b)), "999us");
	CHECK_STR(term__ns(999500, b, sizeof(b)), "1.00ms");
	CHECK_STR(term__ns(4560000, b, sizeof(b)), "4.56ms");
	CHECK_STR(term__ns(1230000000, b, sizeof(b)), "1.23s");
	CHECK_STR(term__ns(1234000000000ull, b, sizeof(b)), "1234s");
	CHECK_STR(term__ns_delta(5 * MS, 2 * MS, b, sizeof(b)), "-3.00ms");
	CHECK_STR(term__ns_delta(2 * MS, 2 * MS, b, sizeof(b)), "0");
	CHECK_STR(term__pct(0.4523, b, sizeof(b)), "45.2%");
	CHECK_STR(term__pct(1.0, b, sizeof(b)), "100%");
	CHECK_STR(term__pct(0.0001, b, sizeof(b)), "<0.1%");
}

TEST(term_cuts_on_character_boundaries)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct term_line l;

	CHECK(f);
	term_line__begin(&l, f, 10, false);
	term_line__text(&l, "h\xc3\xa9llo w\xc3\xb6rld!", -1); /* 12 columns */
	term_line__end(&l);
	term_line__begin(&l, f, 10, false);
	term_line__right(&l, "ab", 5);
	term_line__text(&l, "\tx", -1);
	term_line__end(&l);
	fclose(f);
	CHECK_STR(buf, "h\xc3\xa9llo w...\n   ab?x\n");
	free(buf);
}

/* Lines of s in which a '[' is left open or a ']' closes nothing: a cut bracket. */
static int cut_brackets(const char *s)
{
	int depth = 0, bad = 0;

	for (; *s; s++) {
		if (*s == '\n') {
			bad += depth != 0;
			depth = 0;
		} else if (*s == '[') {
			depth++;
		} else if (*s == ']' && depth-- <= 0) {
			bad++;
			depth = 0;
		}
	}
	return bad + (depth != 0);
}

/* s with each line break and the indent (up to indent blanks) after it taken out. */
static char *unwrap(const char *s, int indent)
{
	char *out = malloc(strlen(s) + 1), *o = out;

	if (!out)
		return NULL;
	for (; *s; s++) {
		if (*s == '\n') {
			for (int i = 0; i < indent && s[1] == ' '; i++)
				s++;
			continue;
		}
		*o++ = *s;
	}
	*o = '\0';
	return out;
}

TEST(term_frames_never_cut_inside_brackets)
{
	const char *names[] = {"exec_simple_query_with_a_long_name [clone .cold]",
			       "[postgres+0x1a2b3c]", "[unwind: no CFI in libpq.so.5]"};
	const char *suffix[] = {NULL, NULL, " (inlined)"};

	for (int width = 19; width <= 120; width += 3) {
		char *buf = NULL, *joined;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		CHECK(f);
		term__frames(f, width, false, "user:   ", names, suffix, 3);
		fclose(f);
		/* The longest name fits on a line of its own: no bracket is split. */
		if (width >= 14 + 40 && cut_brackets(buf)) {
			UNIT_FAIL("width %d: a name cut inside brackets: %s", width, buf);
			free(buf);
			return;
		}
		if (widest_line(buf) > width) {
			UNIT_FAIL("width %d: a line of %d columns", width, widest_line(buf));
			free(buf);
			return;
		}
		/* Whole, if need be over several lines. */
		joined = unwrap(buf, 14);
		CHECK_CONTAINS(joined, "[postgres+0x1a2b3c]");
		CHECK_CONTAINS(joined, "[unwind: no CFI in libpq.so.5] (inlined)");
		free(joined);
		free(buf);
	}
	CHECK_INT(term__cut_cols("ab [x] cd", 5), 3);
	CHECK_INT(term__cut_cols("ab [x] cd", 7), 7);
	CHECK_INT(term__cut_cols("[bin+0x1]", 8), 0);
	CHECK_INT(term__cut_cols("[bin+0x1]", 9), 9);
}

TEST(report_marks_inlined_frames_and_keeps_address_names_whole)
{
	struct profile *p = profile__new();
	struct report_opts o = {.width = 60};
	char *out;
	int th, err = -1;

	CHECK(p);
	th = profile__thread(p, 7, 7, "postgres");
	add(p, th,
	    stack_of(p, "u:main;u:PostgresMain;i:ReadCommand;"
			"u:[postgres+0x1a2b3c];u:[libc.so.6+0x8f1b2];k:schedule"),
	    OFFCPU_STATE_SLEEP, 1, 5 * MS, 0);
	add(p, th, stack_of(p, "u:main;u:PostgresMain;i:ReadCommand;u:epoll_wait;k:schedule"),
	    OFFCPU_STATE_SLEEP, 1, 4 * MS, 0);
	out = render(p, NULL, &o, &err);
	CHECK_INT(err, 0);
	/* A plain name is cut to fit, an address name goes whole to the next line. */
	CHECK_CONTAINS(out, "user:   epoll_wait <- ReadCommand (inlined) <- Post...\n");
	CHECK_CONTAINS(out, "user:   [libc.so.6+0x8f1b2] <-\n"
			    "              [postgres+0x1a2b3c] <- ReadCommand (inlined)\n");
	CHECK(!cut_brackets(out));
	free(out);
	o.json = true;
	out = render(p, NULL, &o, &err);
	CHECK_INT(err, 0);
	CHECK_CONTAINS(out, "\"name\": \"ReadCommand\",\n          \"kind\": \"inline\"");
	free(out);
	profile__free(p);
}

int main(void)
{
	return unit_run();
}

/*
 * Four python3 threads on one lock stack (41/30/20/9%), one stack shared by two
 * processes, one thread alone: #11's "nginx 1395/1395" was two workers.
 */
static struct profile *merged_profile(void)
{
	struct profile *p = profile__new();
	uint32_t lock, sem, sleep, nap;
	int t[4], main_t, a, b, solo;

	if (!p)
		return NULL;
	profile__set_runq_known(p, true);
	lock = stack_of(p, "u:start_thread;u:PyThread_acquire_lock_timed;u:sem_clockwait;"
			   "k:__x64_sys_futex;k:futex_wait;k:futex_do_wait;k:schedule");
	sem = stack_of(p, "u:main;u:accept;k:__x64_sys_accept4;k:inet_csk_accept;k:schedule");
	sleep = stack_of(p, "u:main;u:clock_nanosleep;k:__x64_sys_clock_nanosleep;"
			    "k:hrtimer_nanosleep;k:do_nanosleep;k:schedule");
	nap = stack_of(p, "u:main;u:usleep;u:clock_nanosleep;k:__x64_sys_clock_nanosleep;"
			  "k:hrtimer_nanosleep;k:do_nanosleep;k:schedule");
	main_t = profile__thread(p, 500, 500, "python3");
	for (int i = 0; i < 4; i++) {
		char name[16];

		snprintf(name, sizeof(name), "worker-%d", i);
		t[i] = profile__thread(p, 500, 501 + i, name);
	}
	a = profile__thread(p, 600, 600, "nginx");
	b = profile__thread(p, 601, 601, "nginx");
	solo = profile__thread(p, 700, 700, "solo");
	add(p, main_t, sleep, OFFCPU_STATE_SLEEP, 1, 10 * MS, 0);
	add(p, t[0], lock, OFFCPU_STATE_SLEEP, 10, 90 * MS, 1 * MS);
	add(p, t[1], lock, OFFCPU_STATE_SLEEP, 10, 410 * MS, 10 * MS);
	add(p, t[2], lock, OFFCPU_STATE_SLEEP, 10, 200 * MS, 4 * MS);
	add(p, t[3], lock, OFFCPU_STATE_SLEEP, 10, 300 * MS, 5 * MS);
	add(p, a, sem, OFFCPU_STATE_SLEEP, 5, 334 * MS, 4 * MS);
	add(p, b, sem, OFFCPU_STATE_SLEEP, 5, 331 * MS, 3 * MS);
	add(p, b, sem, OFFCPU_STATE_PREEMPT, 5, 35 * MS, 35 * MS);
	add(p, solo, nap, OFFCPU_STATE_SLEEP, 2, 20 * MS, 0);
	return p;
}

static struct json_object *top_stack(struct json_object *root, size_t i)
{
	struct json_object *v;

	if (!json_object_object_get_ex(root, "top_stacks", &v))
		return NULL;
	return json_object_array_get_idx(v, i);
}

static uint64_t json_u64_at(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_uint64(v) : UINT64_MAX;
}

TEST(report_names_the_threads_a_stack_merges)
{
	struct profile *p = merged_profile();
	struct report_opts o = {.width = 100};
	struct json_object *root, *st, *tt, *v;
	char *out;
	int err = -1;

	CHECK(p);
	out = render(p, NULL, &o, &err);
	CHECK_INT(err, 0);
	/* The process's name (its main thread's), the count, the top two, the rest. */
	CHECK_CONTAINS(out, "python3 500: 4 threads (502 41%, 504 30%, +2)");
	CHECK_CONTAINS(out, "2 processes, 2 threads (nginx 601/601 52%, nginx 600/600 48%)");
	/* One thread alone stays one thread's line. */
	CHECK_CONTAINS(out, "solo 700/700");
	CHECK(!strstr(out, "1 thread"));
	free(out);
	/* A narrow line keeps the reason and the split, drops the count, cuts the names. */
	o.width = 40;
	out = render(p, NULL, &o, &err);
	CHECK_INT(err, 0);
	CHECK_CONTAINS(out, "\n   reason      off  share blocked   runq\n");
	CHECK_CONTAINS(out, "\n 1 lock:...  1.00s  57.8%   980ms 20.0ms\n");
	CHECK_CONTAINS(out, "\n      python3 500: 4 threads (502 41%...\n");
	free(out);
	o.width = 100;

	o.json = true;
	out = render(p, NULL, &o, &err);
	CHECK_INT(err, 0);
	root = json_tokener_parse(out);
	CHECK(root);
	st = top_stack(root, 0);
	CHECK(st);
	CHECK_U64(json_u64_at(st, "threads"), 4);
	CHECK_U64(json_u64_at(st, "processes"), 1);
	CHECK(json_object_object_get_ex(st, "top_threads", &v));
	CHECK_INT(json_object_array_length(v), 4);
	tt = json_object_array_get_idx(v, 0);
	CHECK_U64(json_u64_at(tt, "tid"), 502);
	CHECK_U64(json_u64_at(tt, "pid"), 500);
	CHECK_U64(json_u64_at(tt, "off_ns"), 410 * MS);
	CHECK(json_object_object_get_ex(tt, "comm", &v));
	CHECK_STR(json_object_get_string(v), "worker-1");
	st = top_stack(root, 1);
	CHECK_U64(json_u64_at(st, "threads"), 2);
	CHECK_U64(json_u64_at(st, "processes"), 2);
	json_object_put(root);
	free(out);
	profile__free(p);
}

/*
 * One rule for stack lines and the reason table: a line's blocked time is
 * off - runq (all of it runq when preempted), and the lines' blocked time
 * summed by their reason is the table's, runqueue the lines' runq.
 */
TEST(report_stack_lines_split_blocked_and_runq_as_the_reason_table)
{
	struct profile *p = merged_profile();
	struct report_opts o = {.width = 100, .top = 1000};
	struct json_object *root, *v;
	uint64_t by_reason[REASON__COUNT] = {0};
	char *out;
	int err = -1;

	CHECK(p);
	out = render(p, NULL, &o, &err);
	CHECK_INT(err, 0);
	CHECK_CONTAINS(out, "   reason           off  share blocked   runq   count  threads\n");
	/* The lock line: 1 s off, 980 ms blocked, 20 ms waiting for a CPU. */
	CHECK_CONTAINS(out, " 1 lock: python   1.00s  57.8%   980ms 20.0ms     40x  ");
	/* The shared accept: 700 ms, of it 35 ms preempted + 7 ms runq. */
	CHECK_CONTAINS(out, " 2 network        700ms  40.5%   658ms 42.0ms     15x\n");
	free(out);

	o.json = true;
	out = render(p, NULL, &o, &err);
	CHECK_INT(err, 0);
	root = json_tokener_parse(out);
	CHECK(root);
	CHECK(json_object_object_get_ex(root, "top_stacks", &v));
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		struct json_object *st = json_object_array_get_idx(v, i), *r;
		enum reason reason;

		CHECK(json_object_object_get_ex(st, "reason", &r));
		CHECK_INT(reason__parse(json_object_get_string(r), &reason), 0);
		CHECK_U64(json_u64_at(st, "blocked_ns") + json_u64_at(st, "runq_ns"),
			  json_u64_at(st, "off_ns"));
		by_reason[reason] += json_u64_at(st, "blocked_ns");
		by_reason[REASON_RUNQUEUE] += json_u64_at(st, "runq_ns");
	}
	CHECK(json_object_object_get_ex(root, "reasons", &v));
	CHECK(json_object_array_length(v) >= 4);
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		struct json_object *r = json_object_array_get_idx(v, i), *name;
		enum reason reason;

		CHECK(json_object_object_get_ex(r, "reason", &name));
		CHECK_INT(reason__parse(json_object_get_string(name), &reason), 0);
		CHECK_U64(json_u64_at(r, "ns"), by_reason[reason]);
	}
	json_object_put(root);
	free(out);
	profile__free(p);
}

/* A collector without the split (BCC, bpftrace): said once, no split columns. */
TEST(report_without_the_runq_split_shows_no_split_columns)
{
	struct profile *p = merged_profile();
	struct report_opts o = {.width = 100};
	char *out;
	int err = -1;

	CHECK(p);
	profile__set_runq_known(p, false);
	out = render(p, NULL, &o, &err);
	CHECK_INT(err, 0);
	CHECK_CONTAINS(out, "(no run-queue split from this collector");
	CHECK_CONTAINS(out, "   reason           off  share   count  threads\n");
	CHECK(!strstr(out, "blocked   runq"));
	free(out);
	profile__free(p);
}
