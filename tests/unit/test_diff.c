// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <json-c/json.h>
#include <math.h>

#include "analyze/diff.h"
#include "model/profile.h"
#include "output/diff_report.h"
#include "parse/profile_text.h"
#include "parse/summary_json.h"
#include "unit.h"

#define MS 1000000ull

/* Intern a stack written root first as "u:frame;...;k:frame". */
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

static void add(struct profile *p, int th, uint32_t st, uint64_t count, uint64_t off)
{
	struct profile_weight w = {count, off, 0};

	profile__add(p, (uint32_t)th, st, OFFCPU_STATE_SLEEP, &w);
}

#define LOCK_STACK                                        \
	"u:start_thread;u:worker;u:__GI___lll_lock_wait;" \
	"k:__x64_sys_futex;k:futex_wait;k:futex_do_wait+0x%x/0x40;k:schedule"
#define SLEEP_STACK \
	"u:main;u:clock_nanosleep;k:__x64_sys_clock_nanosleep;k:do_nanosleep+0x%x/0x90;k:schedule"
static const char *pipe_stack = "u:start_thread;u:reader;u:__libc_read;k:ksys_read;"
				"k:anon_pipe_read;k:schedule";

/*
 * A run of the same program: the lock stack holds lock_ms, everything else is
 * the same. Each build interns in another order and has other offsets, so ids
 * and raw names differ between the two profiles.
 */
static struct profile *run(uint64_t lock_ms, int build)
{
	struct profile *p = profile__new();
	char lock[256], sleep[256];
	uint32_t sl, sp, sk;
	int w1, w2, m;

	if (!p)
		return NULL;
	snprintf(lock, sizeof(lock), LOCK_STACK, 0x10 + build);
	snprintf(sleep, sizeof(sleep), SLEEP_STACK, 0x20 + build);
	if (build) {
		sp = stack_of(p, pipe_stack);
		sk = stack_of(p, sleep);
		sl = stack_of(p, lock);
		m = profile__thread(p, 500 + build, 500 + build, "main");
		w2 = profile__thread(p, 500 + build, 502 + build, "worker");
		w1 = profile__thread(p, 500 + build, 501 + build, "worker");
	} else {
		sl = stack_of(p, lock);
		sk = stack_of(p, sleep);
		sp = stack_of(p, pipe_stack);
		w1 = profile__thread(p, 100, 101, "worker");
		w2 = profile__thread(p, 100, 102, "worker");
		m = profile__thread(p, 100, 100, "main");
	}
	add(p, w1, sl, 100, lock_ms / 2 * MS);
	add(p, w2, sl, 100, lock_ms / 2 * MS);
	add(p, m, sk, 10, 500 * MS);
	add(p, w1, sp, 40, 200 * MS);
	return p;
}

static struct diff *diff_of(const struct profile *a, const struct profile *b, enum diff_norm norm)
{
	struct diff_side *sa = diff_side__from_profile(a), *sb = diff_side__from_profile(b);
	struct diff *d = NULL;

	if (sa && sb)
		diff__new(sa, sb, norm, &d);
	diff_side__free(sa);
	diff_side__free(sb);
	return d;
}

static bool gate(const struct diff *d, const char *expr)
{
	struct diff_gate g;
	struct diff_gate_result r;
	char why[256];

	if (diff_gate__parse(expr, &g, why, sizeof(why)))
		return false;
	diff_gate__eval(&g, d, &r);
	diff_gate__free(&g);
	return r.crossed;
}

TEST(diff_flags_exactly_the_stack_whose_lock_hold_grew)
{
	struct profile *a = run(300, 0), *b = run(400, 1);
	struct diff *d;
	size_t changed = 0;

	CHECK(a && b);
	d = diff_of(a, b, DIFF_NORM_NONE);
	CHECK(d);
	CHECK_INT(d->nr_stacks, 3); /* matched by names: none only on one side */
	for (size_t i = 0; i < d->nr_stacks; i++) {
		CHECK(!d->stacks[i].only_base && !d->stacks[i].only_new);
		changed += d->stacks[i].off.base != d->stacks[i].off.new;
	}
	CHECK_INT(changed, 1);
	CHECK_CONTAINS(d->stacks[0].name, "futex_do_wait");
	CHECK(!strstr(d->stacks[0].name, "+0x")); /* offsets are not part of the match */
	CHECK_INT(d->stacks[0].reason, REASON_LOCK);
	CHECK_U64(d->stacks[0].off.base, 300 * MS);
	CHECK_U64(d->stacks[0].off.new, 400 * MS);
	CHECK(fabs(diff_value__rel(d, &d->stacks[0].off) - 1.0 / 3.0) < 1e-9);
	/* Reasons: only lock moved. */
	CHECK_STR(d->reasons[0].name, "lock");
	CHECK_U64(d->reasons[0].off.new - d->reasons[0].off.base, 100 * MS);
	for (size_t i = 1; i < d->nr_reasons; i++)
		CHECK_U64(d->reasons[i].off.new, d->reasons[i].off.base);
	/* Threads by comm, whatever their tids. */
	CHECK_INT(d->nr_threads, 2);
	CHECK_STR(d->threads[0].name, "worker");
	CHECK_U64(d->threads[0].off.base, 500 * MS);
	CHECK_U64(d->threads[0].off.new, 600 * MS);
	CHECK_U64(d->threads[1].off.new, d->threads[1].off.base);
	CHECK_U64(d->blocked.new - d->blocked.base, 100 * MS);

	CHECK(gate(d, "blocked>+9.9%")); /* 1000 -> 1100 ms */
	CHECK(!gate(d, "blocked>+10%")); /* growing by exactly the threshold is not more */
	CHECK(gate(d, "stack:futex_do_wait>+5ms"));
	CHECK(!gate(d, "stack:futex_do_wait>+100ms")); /* exactly +100 ms is not more */
	CHECK(!gate(d, "stack:do_nanosleep>+1ns"));
	CHECK(gate(d, "reason:lock>+30%"));
	CHECK(!gate(d, "reason:sleep>+0%"));
	CHECK(!gate(d, "count>+0"));
	CHECK(!gate(d, "runq>+1ns"));
	diff__free(d);
	profile__free(a);
	profile__free(b);
}

TEST(diff_unchanged_pair_crosses_no_gate)
{
	struct profile *a = run(300, 0), *b = run(300, 1);
	struct diff *d;
	const char *gates[] = {"blocked>+0%",	  "off>+0ns",	   "count>+0",	     "runq>+0%",
			       "reason:lock>+0%", "stack:.*>+0ns", "stack:futex>+0%"};

	CHECK(a && b);
	d = diff_of(a, b, DIFF_NORM_NONE);
	CHECK(d);
	for (size_t i = 0; i < d->nr_stacks; i++)
		CHECK_U64(d->stacks[i].off.new, d->stacks[i].off.base);
	for (size_t i = 0; i < sizeof(gates) / sizeof(gates[0]); i++)
		if (gate(d, gates[i])) {
			UNIT_FAIL("%s crossed on an unchanged pair", gates[i]);
			return;
		}
	diff__free(d);
	profile__free(a);
	profile__free(b);
}

TEST(diff_normalized_by_total_compares_shares)
{
	struct profile *a = run(300, 0), *b = run(300, 1);
	struct diff *d;

	CHECK(a && b);
	/* The new run is twice as long: every stack doubles, no share moves. */
	for (size_t i = 0; i < profile__nr_rows(b); i++) {
		const struct profile_row *r = profile__row_at(b, i);
		struct profile_weight w = r->w;

		profile__add(b, r->thread, r->stack, r->state, &w);
	}
	d = diff_of(a, b, DIFF_NORM_TOTAL);
	CHECK(d);
	CHECK(gate(d, "stack:futex>+1ms")); /* time thresholds stay raw */
	CHECK(!gate(d, "stack:futex>+1%"));
	CHECK(!gate(d, "blocked>+1%"));
	CHECK(fabs(diff_value__delta(d, &d->stacks[0].off)) < 1e-12);
	diff__free(d);
	d = diff_of(a, b, DIFF_NORM_NONE);
	CHECK(gate(d, "stack:futex>+1%"));
	diff__free(d);
	profile__free(a);
	profile__free(b);
}

TEST(diff_stacks_on_one_side_only)
{
	struct profile *a = run(300, 0), *b = run(300, 1);
	struct diff *d;
	uint32_t st;

	CHECK(a && b);
	st = stack_of(b, "u:start_thread;u:flush;u:fsync;k:do_fsync;k:io_schedule;k:schedule");
	add(b, 0, st, 3, 40 * MS);
	d = diff_of(a, b, DIFF_NORM_NONE);
	CHECK(d);
	CHECK_INT(d->nr_stacks, 4);
	CHECK(d->stacks[0].only_new);
	CHECK_INT(d->stacks[0].reason, REASON_DISK_IO);
	CHECK(gate(d, "reason:disk_io>+1000%")); /* growth from nothing crosses any % */
	CHECK(gate(d, "stack:;fsync;>+39ms"));
	diff__free(d);
	profile__free(a);
	profile__free(b);
}

static size_t count_char(const char *s, char c)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == c;
	return n;
}

static struct profile *load_profile(const char *path)
{
	struct profile *p = profile__new();
	FILE *f = fopen(path, "r");
	int err = p && f ? profile_text__parse(f, p, NULL) : -ENOENT;

	if (f)
		fclose(f);
	if (err) {
		profile__free(p);
		return NULL;
	}
	return p;
}

/*
 * Two runs of one program whose frames without a name differ in address (ASLR),
 * in spelling ("0x...", "[unknown]", "[unsymbolized ...]") and in number: the
 * same stacks, none gone, none new.
 */
TEST(diff_matches_stacks_whatever_their_unnamed_frames)
{
	struct profile *a = load_profile("tests/data/diff/junk-a/offcpu.profile.txt");
	struct profile *b = load_profile("tests/data/diff/junk-b/offcpu.profile.txt");
	struct diff_side *sa = a ? diff_side__from_profile(a) : NULL;
	struct diff_side *sb = b ? diff_side__from_profile(b) : NULL;
	struct diff *d = NULL;
	bool libfoo = false;

	CHECK(sa && sb);
	CHECK_INT(diff__new(sa, sb, DIFF_NORM_NONE, &d), 0);
	CHECK_INT(d->nr_stacks, profile__nr_stacks(a));
	for (size_t i = 0; i < d->nr_stacks; i++) {
		const struct diff_item *it = &d->stacks[i];

		if (it->only_base || it->only_new) {
			UNIT_FAIL("%s only in %s", it->name, it->only_base ? "base" : "new");
			return;
		}
		CHECK(!strstr(it->name, "0x7f"));
		CHECK(!strstr(it->name, "[unknown]"));
		/* One kind letter per frame of the merged key. */
		CHECK_INT(strlen(it->kinds), 1 + count_char(it->name, ';'));
		CHECK_U64(it->off.base, it->off.new);
		/* A file-relative address is stable: a name, kept. */
		libfoo |= strstr(it->name, ";[libfoo.so.1+0x1a2b];[unsymbolized];poll;") != NULL;
	}
	CHECK(libfoo);
	diff__free(d);
	diff_side__free(sa);
	diff_side__free(sb);
	profile__free(a);
	profile__free(b);
}

TEST(diff_gate_grammar)
{
	struct diff_gate g;
	char why[256];
	static const char *bad[] = {"blocked",	   "blocked>10%", "blocked>+", "blocked>+x%",
				    "blocked>+5",  "count>+5ms",  "foo>+1%",   "reason:disk>+1%",
				    "stack:(>+1%", "off>+1h",	  "off>+-1ms", "off<+1ms"};

	CHECK_INT(diff_gate__parse("stack:a|b>+2.5ms", &g, why, sizeof(why)), 0);
	CHECK_INT(g.metric, DIFF_METRIC_STACK);
	CHECK_U64(g.abs, 2500000);
	diff_gate__free(&g);
	CHECK_INT(diff_gate__parse("runq>+3us", &g, why, sizeof(why)), 0);
	CHECK_U64(g.abs, 3000);
	CHECK_INT(diff_gate__parse("off>+1s", &g, why, sizeof(why)), 0);
	CHECK_U64(g.abs, 1000000000);
	CHECK_INT(diff_gate__parse("count>+12", &g, why, sizeof(why)), 0);
	CHECK_U64(g.abs, 12);
	CHECK_INT(diff_gate__parse("reason:memory>+7.5%", &g, why, sizeof(why)), 0);
	CHECK(g.percent);
	CHECK_INT(g.reason, REASON_MEMORY);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		if (diff_gate__parse(bad[i], &g, why, sizeof(why)) != -EINVAL) {
			UNIT_FAIL("'%s' was accepted", bad[i]);
			return;
		}
		CHECK_CONTAINS(why, bad[i]);
	}
}

TEST(diff_reads_a_summary)
{
	FILE *f = fopen("tests/data/diff/base.summary.json", "r");
	struct diff_side *s = NULL, *ps;
	struct profile *b = run(400, 1);
	struct diff *d = NULL;
	char why[256] = "";

	CHECK(f && b);
	CHECK_INT(diff_side__read_summary(f, &s, why, sizeof(why)), 0);
	fclose(f);
	CHECK(diff_side__stacks_partial(s)); /* 2 top stacks of 3 */
	CHECK_U64(diff_side__wall_ns(s), 2000 * MS);
	ps = diff_side__from_profile(b);
	CHECK(ps);
	CHECK_INT(diff__new(s, ps, DIFF_NORM_NONE, &d), 0);
	CHECK(d->stacks_partial);
	/* The pipe stack was not in the summary's top: it looks new. */
	CHECK_INT(d->nr_stacks, 3);
	CHECK(d->stacks[0].only_new);
	CHECK_CONTAINS(d->stacks[0].name, "anon_pipe_read");
	CHECK_CONTAINS(d->stacks[1].name, "futex_do_wait");
	CHECK(!d->stacks[1].only_new && !d->stacks[1].only_base);
	CHECK_U64(d->stacks[1].off.base, 300 * MS);
	CHECK_U64(d->stacks[1].off.new, 400 * MS);
	CHECK_INT(d->stacks[1].reason, REASON_LOCK);
	CHECK_U64(d->off.base, 1000 * MS);
	CHECK(gate(d, "stack:futex_do_wait>+50ms"));
	CHECK(!gate(d, "stack:do_nanosleep>+1ns"));
	CHECK_STR(d->threads[0].name, "worker");
	/* Wall time is known only for the summary. */
	diff__free(d);
	CHECK_INT(diff__new(s, ps, DIFF_NORM_WALL, &d), -EINVAL);
	diff_side__set_wall_ns(ps, 2000 * MS);
	CHECK_INT(diff__new(s, ps, DIFF_NORM_WALL, &d), 0);
	CHECK(fabs(d->stacks[1].off.new_norm - 0.2) < 1e-9);
	diff__free(d);
	diff_side__free(s);
	diff_side__free(ps);
	profile__free(b);
}

TEST(diff_summary_without_runq_split_counts_preempted_stacks_as_runq)
{
	FILE *f = unit_memfile(
		"{\"schema_version\": 1, \"kind\": \"offcpu_time\","
		" \"totals\": {\"off_ns\": 100, \"blocked_ns\": 100, \"runq_ns\": null, \"count\": "
		"3},"
		" \"top_stacks\": [{\"frames\": [{\"name\": \"spin\", \"kind\": \"user\"},"
		" {\"name\": \"irqentry_exit_to_user_mode\", \"kind\": \"kernel\"}],"
		" \"off_ns\": 30, \"blocked_ns\": 30, \"runq_ns\": null, \"count\": 1}]}");
	struct diff_side *s = NULL;
	struct diff *d = NULL;
	char why[256];

	CHECK_INT(diff_side__read_summary(f, &s, why, sizeof(why)), 0);
	fclose(f);
	CHECK_INT(diff__new(s, s, DIFF_NORM_NONE, &d), 0);
	CHECK_U64(d->runq.base, 30);
	CHECK_U64(d->blocked.base, 70);
	CHECK_INT(d->stacks[0].reason, REASON_RUNQUEUE);
	CHECK_U64(d->stacks[0].runq.base, 30);
	diff__free(d);
	diff_side__free(s);
}

TEST(diff_rejects_what_is_not_a_summary)
{
	struct diff_side *s = NULL;
	char why[256];
	FILE *f;

	f = unit_memfile("{\"schema_version\": 1");
	CHECK_INT(diff_side__read_summary(f, &s, why, sizeof(why)), -EINVAL);
	CHECK_CONTAINS(why, "not JSON");
	fclose(f);
	f = unit_memfile("[1, 2]");
	CHECK_INT(diff_side__read_summary(f, &s, why, sizeof(why)), -EINVAL);
	CHECK_CONTAINS(why, "not an offcpu summary");
	fclose(f);
	f = unit_memfile("{\"schema_version\": 1, \"kind\": \"offcpu_time\"}");
	CHECK_INT(diff_side__read_summary(f, &s, why, sizeof(why)), -EINVAL);
	CHECK_CONTAINS(why, "totals");
	fclose(f);
	/* A schema this offcpu does not know is refused, not read by guesswork. */
	f = unit_memfile("{\"schema_version\": 99, \"kind\": \"offcpu_time\","
			 " \"totals\": {\"off_ns\": 5, \"count\": 1}}");
	CHECK_INT(diff_side__read_summary(f, &s, why, sizeof(why)), -EINVAL);
	CHECK_CONTAINS(why, "schema_version");
	fclose(f);
	f = unit_memfile("{\"kind\": \"offcpu_time\", \"totals\": {\"off_ns\": 5, \"count\": 1}}");
	CHECK_INT(diff_side__read_summary(f, &s, why, sizeof(why)), -EINVAL);
	CHECK_CONTAINS(why, "schema_version");
	fclose(f);
	f = unit_memfile(
		"{\"schema_version\": 1, \"kind\": \"offcpu_time\", \"totals\": {\"off_ns\": 5},"
		" \"top_stacks\": [{\"frames\": [{\"name\": \"x\"}]}]}");
	CHECK_INT(diff_side__read_summary(f, &s, why, sizeof(why)), -EINVAL);
	CHECK_CONTAINS(why, "top_stacks[0]");
	fclose(f);
	CHECK(!s);
}

static char *render(const struct diff *d, const char *const *exprs, size_t n,
		    const struct diff_report_opts *o, int *crossed)
{
	struct diff_gate g[8];
	struct diff_gate_result r[8];
	char *buf = NULL, why[256];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	*crossed = 0;
	for (size_t i = 0; i < n; i++) {
		if (diff_gate__parse(exprs[i], &g[i], why, sizeof(why)))
			return NULL;
		diff_gate__eval(&g[i], d, &r[i]);
		*crossed += r[i].crossed;
	}
	diff_report__write(f, d, g, r, n, o);
	fclose(f);
	for (size_t i = 0; i < n; i++)
		diff_gate__free(&g[i]);
	return buf;
}

TEST(diff_report_text_and_json)
{
	struct profile *a = run(300, 0), *b = run(400, 1);
	const char *exprs[] = {"blocked>+5%", "stack:do_nanosleep>+1ms"};
	struct diff_report_opts o = {.base_label = "before", .new_label = "after"};
	struct json_object *root, *v;
	struct diff *d;
	char *out;
	int crossed;

	CHECK(a && b);
	d = diff_of(a, b, DIFF_NORM_NONE);
	out = render(d, exprs, 2, &o, &crossed);
	CHECK(out);
	CHECK_INT(crossed, 1);
	CHECK_CONTAINS(out, "offcpu diff: before -> after\n");
	CHECK_CONTAINS(out, "  FAIL blocked>+5%: 1.00s -> 1.10s (+10.0%)\n");
	CHECK_CONTAINS(out, "  ok   stack:do_nanosleep>+1ms: 500ms -> 500ms (0%)\n");
	CHECK_CONTAINS(out, "  intervals                                     250       250         "
			    "0       0%\n");
	CHECK_CONTAINS(out, "\nGates\n");
	CHECK_CONTAINS(out, "kernel: futex_do_wait <- futex_wait <- __x64_sys_futex\n");
	CHECK_CONTAINS(out, "  1 lock                                      300ms     400ms    "
			    "+100ms   +33.3%\n");
	free(out);
	o.json = true;
	out = render(d, exprs, 2, &o, &crossed);
	root = json_tokener_parse(out);
	CHECK(root);
	CHECK(json_object_object_get_ex(root, "stacks", &v));
	CHECK_INT(json_object_array_length(v), 3);
	v = json_object_array_get_idx(v, 0);
	CHECK(json_object_object_get_ex(v, "off", &v));
	CHECK(json_object_object_get_ex(v, "delta", &v));
	CHECK_U64(json_object_get_int64(v), 100 * MS);
	CHECK(json_object_object_get_ex(root, "gates", &v));
	v = json_object_array_get_idx(v, 0);
	CHECK(json_object_object_get_ex(v, "crossed", &v));
	CHECK(json_object_get_boolean(v));
	json_object_put(root);
	free(out);
	diff__free(d);
	profile__free(a);
	profile__free(b);
}

/* An inlined frame is part of the stack: the same name not inlined is another stack. */
TEST(diff_keeps_inlined_frames_in_the_stack)
{
	struct profile *a = profile__new(), *b = profile__new();
	const char *inl = "u:main;i:lock_helper;u:__GI___lll_lock_wait;k:futex_wait;k:schedule";
	const char *flat = "u:main;u:lock_helper;u:__GI___lll_lock_wait;k:futex_wait;k:schedule";
	struct diff_report_opts o = {.json = true};
	struct json_object *root, *v, *f;
	struct diff *d;
	char *out;
	int crossed, ta, tb;

	CHECK(a && b);
	ta = profile__thread(a, 1, 1, "app");
	tb = profile__thread(b, 1, 1, "app");
	add(a, ta, stack_of(a, inl), 1, 100 * MS);
	add(b, tb, stack_of(b, inl), 1, 150 * MS);
	add(b, tb, stack_of(b, flat), 1, 50 * MS);
	d = diff_of(a, b, DIFF_NORM_NONE);
	CHECK(d);
	CHECK_INT(d->nr_stacks, 2);
	CHECK(!d->stacks[0].only_new && !d->stacks[0].only_base);
	CHECK_U64(d->stacks[0].off.base, 100 * MS);
	CHECK_U64(d->stacks[0].off.new, 150 * MS);
	CHECK(d->stacks[1].only_new);
	out = render(d, NULL, 0, &o, &crossed);
	root = out ? json_tokener_parse(out) : NULL;
	CHECK(root);
	CHECK(json_object_object_get_ex(root, "stacks", &v));
	v = json_object_array_get_idx(v, 0);
	CHECK(json_object_object_get_ex(v, "frames", &v));
	f = json_object_array_get_idx(v, 1);
	CHECK(json_object_object_get_ex(f, "kind", &f));
	CHECK_STR(json_object_get_string(f), "inline");
	json_object_put(root);
	free(out);
	o.json = false;
	out = render(d, NULL, 0, &o, &crossed);
	CHECK_CONTAINS(out, "user:   __GI___lll_lock_wait <- lock_helper (inlined) <- main\n");
	free(out);
	diff__free(d);
	profile__free(a);
	profile__free(b);
}

/* An address name is never cut short in the diff's text, at any width. */
TEST(diff_text_keeps_address_names_whole)
{
	struct profile *a = profile__new(), *b = profile__new();
	const char *st = "u:main;u:[postgres+0x1a2b3c];u:[libc.so.6+0x8f1b2];k:futex_wait";
	struct diff_report_opts o = {0};
	struct diff *d;
	char *out;
	int crossed, ta, tb;

	CHECK(a && b);
	ta = profile__thread(a, 1, 1, "postgres");
	tb = profile__thread(b, 1, 1, "postgres");
	add(a, ta, stack_of(a, st), 1, 100 * MS);
	add(b, tb, stack_of(b, st), 1, 150 * MS);
	d = diff_of(a, b, DIFF_NORM_NONE);
	CHECK(d);
	for (int width = 40; width <= 80; width += 5) {
		o.width = width;
		out = render(d, NULL, 0, &o, &crossed);
		CHECK(out);
		CHECK_CONTAINS(out, "[postgres+0x1a2b3c]");
		CHECK_CONTAINS(out, "[libc.so.6+0x8f1b2]");
		CHECK(!strstr(out, "[postgres+0x1a2b3c]...") &&
		      !strstr(out, "[libc.so.6+0x8f1b2]..."));
		free(out);
	}
	diff__free(d);
	profile__free(a);
	profile__free(b);
}

int main(void)
{
	return unit_run();
}

/* The parse side alone: weights as written, null and absent kept apart, frames interned. */
TEST(summary_weights_are_read_as_written)
{
	FILE *f = unit_memfile(
		"{\"schema_version\": 1, \"kind\": \"offcpu_time\","
		" \"totals\": {\"off_ns\": 100, \"blocked_ns\": 60, \"runq_ns\": 40, \"count\": 3},"
		" \"workload\": {\"wall_ns\": 500},"
		" \"threads\": [{\"comm\": \"w\", \"off_ns\": 7, \"runq_ns\": null}, {\"off_ns\": "
		"1}],"
		" \"top_stacks\": [{\"frames\": [{\"name\": \"main\", \"kind\": \"user\"},"
		" {\"name\": \"schedule\", \"kind\": \"kernel\"}], \"off_ns\": 30, \"count\": "
		"1}]}");
	struct profile *p = profile__new();
	struct summary_weights w;
	const struct profile_frame *fr;
	const uint32_t *frames;
	size_t n = 0;
	char why[256] = "";

	CHECK(f && p);
	CHECK_INT(summary_json__read_weights(f, p, &w, why, sizeof(why)), 0);
	fclose(f);
	CHECK_U64(w.totals.off_ns, 100);
	CHECK_U64(w.totals.blocked_ns, 60);
	CHECK(w.totals.has_runq && w.totals.has_blocked);
	CHECK_U64(w.totals.runq_ns, 40);
	CHECK_U64(w.wall_ns, 500);
	CHECK_INT(w.nr_threads, 2);
	CHECK_STR(w.threads[0].comm, "w");
	CHECK(!w.threads[0].w.has_runq && !w.threads[0].w.has_blocked);
	CHECK_STR(w.threads[1].comm, "");
	CHECK(w.has_stacks);
	CHECK_INT(w.nr_stacks, 1);
	CHECK_U64(w.stacks[0].w.off_ns, 30);
	frames = profile__stack_at(p, w.stacks[0].stack, &n);
	CHECK_INT(n, 2);
	fr = profile__frame_at(p, frames[1]);
	CHECK_STR(fr->name, "schedule");
	CHECK_INT(fr->kind, FRAME_KERNEL);
	summary_weights__free(&w);
	profile__free(p);
}

/*
 * The lock stack of a run whose lock hold shrank while its threads waited
 * longer for a CPU: 300 ms off (10 ms runq) before, 400 ms (150 ms runq)
 * after; a preempted stack and a sleep as they were.
 */
static struct profile *split_run(bool after, bool runq_known)
{
	struct profile *p = profile__new();
	char lock[256], sleep[256];
	uint32_t sl, sk, ss;
	int w, m;

	if (!p)
		return NULL;
	profile__set_runq_known(p, runq_known);
	snprintf(lock, sizeof(lock), LOCK_STACK, 0x10);
	snprintf(sleep, sizeof(sleep), SLEEP_STACK, 0x20);
	sl = stack_of(p, lock);
	sk = stack_of(p, sleep);
	ss = stack_of(p, "u:start_thread;u:compress;k:asm_sysvec_apic_timer_interrupt;"
			 "k:irqentry_exit_to_user_mode;k:schedule");
	w = profile__thread(p, 100, 101, "worker");
	m = profile__thread(p, 100, 100, "main");
	profile__add(
		p, w, sl, OFFCPU_STATE_SLEEP,
		&(struct profile_weight){100, (after ? 400 : 300) * MS, (after ? 150 : 10) * MS});
	profile__add(p, w, ss, OFFCPU_STATE_PREEMPT,
		     &(struct profile_weight){10, 20 * MS, 20 * MS});
	profile__add(p, m, sk, OFFCPU_STATE_SLEEP, &(struct profile_weight){10, 500 * MS, 2 * MS});
	return p;
}

static uint64_t json_path_u64(struct json_object *o, const char *a, const char *b)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, a, &o) || !json_object_object_get_ex(o, b, &v))
		return UINT64_MAX;
	return json_object_get_uint64(v);
}

TEST(diff_stack_rows_split_blocked_and_runq_and_gates_measure_blocked)
{
	struct profile *a = split_run(false, true), *b = split_run(true, true);
	const char *exprs[] = {"stack:futex_do_wait>+1ms", "reason:lock>+1ms",
			       "stack:futex_do_wait>+0%"};
	struct diff_report_opts o = {.top = 10};
	struct json_object *root, *v;
	uint64_t by_reason[REASON__COUNT] = {0};
	struct diff *d;
	char *out;
	int crossed = -1;

	CHECK(a && b);
	d = diff_of(a, b, DIFF_NORM_NONE);
	CHECK(d);
	CHECK(d->runq_known);
	CHECK_STR(reason__name(d->stacks[0].reason), "lock");
	CHECK_U64(d->stacks[0].blocked.base, 290 * MS);
	CHECK_U64(d->stacks[0].blocked.new, 250 * MS);
	CHECK_U64(d->stacks[0].runq.new, 150 * MS);
	out = render(d, exprs, 3, &o, &crossed);
	CHECK(out);
	/* Off-CPU time grew by 100 ms, the wait itself shrank by 40 ms: no gate on it. */
	CHECK_INT(crossed, 0);
	CHECK_CONTAINS(out, "  ok   stack:futex_do_wait>+1ms: 290ms -> 250ms (-13.8%)\n");
	CHECK_CONTAINS(out, "  1 lock                                      300ms     400ms    "
			    "+100ms   +33.3%\n"
			    "      blocked                                 290ms     250ms   "
			    "-40.0ms   -13.8%\n"
			    "      run queue                              10.0ms     150ms    "
			    "+140ms     +15x\n");
	/* All of it run queue (preempted): the reason says it, no split rows. */
	CHECK_CONTAINS(out, "  3 runqueue                                 20.0ms    20.0ms         "
			    "0       0%\n      kernel: ");
	CHECK(!strstr(out, "(no run-queue split"));
	free(out);

	o.json = true;
	out = render(d, exprs, 3, &o, &crossed);
	root = json_tokener_parse(out);
	CHECK(root);
	CHECK(json_object_object_get_ex(root, "runq_known", &v));
	CHECK(json_object_get_boolean(v));
	/* The stacks' blocked time by reason is the reason table, runqueue their runq. */
	CHECK(json_object_object_get_ex(root, "stacks", &v));
	CHECK_INT(json_object_array_length(v), 3);
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		struct json_object *st = json_object_array_get_idx(v, i), *r;
		enum reason reason;

		CHECK(json_object_object_get_ex(st, "reason", &r));
		CHECK_INT(reason__parse(json_object_get_string(r), &reason), 0);
		by_reason[reason] += json_path_u64(st, "blocked", "new");
		by_reason[REASON_RUNQUEUE] += json_path_u64(st, "runq", "new");
	}
	CHECK(json_object_object_get_ex(root, "reasons", &v));
	CHECK_INT(json_object_array_length(v), 3);
	for (size_t i = 0; i < json_object_array_length(v); i++) {
		struct json_object *r = json_object_array_get_idx(v, i), *name;
		enum reason reason;

		CHECK(json_object_object_get_ex(r, "reason", &name));
		CHECK_INT(reason__parse(json_object_get_string(name), &reason), 0);
		CHECK_U64(json_path_u64(r, "off", "new"), by_reason[reason]);
	}
	json_object_put(root);
	free(out);
	diff__free(d);
	profile__free(a);
	profile__free(b);
}

/* A side without the split (BCC, bpftrace): said once, and no split rows. */
TEST(diff_without_the_runq_split_says_so_and_shows_no_split)
{
	struct profile *a = split_run(false, false), *b = split_run(true, true);
	struct diff_report_opts o = {.top = 10};
	struct diff *d;
	char *out;
	int crossed;

	CHECK(a && b);
	d = diff_of(a, b, DIFF_NORM_NONE);
	CHECK(d);
	CHECK(!d->runq_known);
	out = render(d, NULL, 0, &o, &crossed);
	CHECK(out);
	CHECK_CONTAINS(out, "(no run-queue split in a side's collector");
	CHECK(!strstr(out, "      blocked "));
	free(out);
	diff__free(d);
	profile__free(a);
	profile__free(b);
}
