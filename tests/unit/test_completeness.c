// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <json-c/json.h>

#include "analyze/completeness.h"
#include "model/frame_name.h"
#include "output/folded.h"
#include "output/report.h"
#include "output/summary.h"
#include "parse/folded.h"
#include "parse/profile_text.h"
#include "unit.h"

#define MS 1000000ull
/*
 * One stack of each class, written by hand: 710 ms complete, 220 ms stopped
 * by "no CFI in libfoo.so.1", 70 ms by "stack not readable", 16 ms under
 * user-side placeholders, 100 ms of a kernel thread; 70 ms of the no-CFI
 * time holds an unsymbolized frame.
 */
#define MARKERS "tests/data/completeness/markers/offcpu.profile.txt"

static struct profile *load(const char *path)
{
	struct profile *p = profile__new();
	FILE *f = fopen(path, "r");
	struct parse_stats st;
	int err = p && f ? profile_text__parse(f, p, &st) : -ENOENT;

	if (f)
		fclose(f);
	if (err || st.malformed) {
		profile__free(p);
		return NULL;
	}
	return p;
}

static uint32_t frame(struct profile *p, enum frame_kind k, const char *name)
{
	return (uint32_t)profile__frame(p, k, name, strlen(name));
}

static char *render(void (*fn)(FILE *, const void *), const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fn(f, arg);
	fclose(f);
	return buf;
}

struct report_arg {
	const struct profile *p;
	struct report_opts o;
};

static void put_report(FILE *f, const void *arg)
{
	const struct report_arg *a = arg;

	report__write(f, a->p, NULL, &a->o);
}

static void put_summary(FILE *f, const void *arg)
{
	summary__write(f, arg);
}

static struct json_object *get(struct json_object *o, const char *path)
{
	char key[64];

	while (o && *path) {
		size_t n = strcspn(path, ".");

		snprintf(key, sizeof(key), "%.*s", (int)n, path);
		if (!json_object_object_get_ex(o, key, &o))
			return NULL;
		path += n + (path[n] == '.');
	}
	return o;
}

TEST(frame_name_tells_raw_words_from_names)
{
	char buf[64];

	CHECK(frame_name__is_raw("0x7f12ab34", 10));
	CHECK(frame_name__is_raw("[unknown]", 9));
	CHECK(!frame_name__is_raw("0x", 2));
	CHECK(!frame_name__is_raw("0xcafe_babe", 11));
	CHECK(!frame_name__is_raw("deadbeef", 8));
	CHECK(!frame_name__is_raw("[libc.so.6+0x1a2b]", 18));
	CHECK_INT(frame_name__unsymbolize("0x7f12ab34", 10, buf, sizeof(buf)),
		  strlen("[unsymbolized 0x7f12ab34]"));
	CHECK_STR(buf, "[unsymbolized 0x7f12ab34]");
	frame_name__unsymbolize("[unknown]", 9, buf, sizeof(buf));
	CHECK_STR(buf, "[unsymbolized]");
	CHECK(frame_name__unsymbolized("[unsymbolized]"));
	CHECK(frame_name__unsymbolized("[unsymbolized 0x7f12ab34]"));
	CHECK(frame_name__unsymbolized("0x7f12ab34"));
	CHECK(!frame_name__unsymbolized("[unsymbolizedfoo]"));
	CHECK(!frame_name__unsymbolized("[postgres+0x4a3f0]"));
	CHECK(!frame_name__unsymbolized("main"));
}

TEST(frame_name_splits_unwind_markers)
{
	struct unwind_marker m;

	CHECK(frame_name__unwind_marker("[unwind: no CFI in libfoo.so.1]", &m));
	CHECK_INT(m.reason_len, 6);
	CHECK(!strncmp(m.reason, "no CFI", 6));
	CHECK_INT(m.binary_len, 11);
	CHECK(!strncmp(m.binary, "libfoo.so.1", 11));
	CHECK(frame_name__unwind_marker("[unwind: truncated]", &m));
	CHECK(!strncmp(m.reason, "truncated", m.reason_len) && m.reason_len == 9);
	CHECK(!m.binary);
	/* Only the first " in " splits: a binary's name may hold one. */
	CHECK(frame_name__unwind_marker("[unwind: outside code in my in app]", &m));
	CHECK_INT(m.binary_len, 9);
	CHECK(!strncmp(m.binary, "my in app", 9));
	CHECK(!frame_name__unwind_marker("[missing user stack: EFAULT]", NULL));
	CHECK(!frame_name__unwind_marker("[unwind: no CFI", NULL));
}

TEST(completeness_counts_each_class_and_charges_the_marker)
{
	struct profile *p = load(MARKERS);
	struct completeness *c;

	CHECK(p);
	c = completeness__new(p, UNWINDER_DWARF);
	CHECK(c);
	CHECK(c->known);
	CHECK_U64(c->off_ns, profile__totals(p)->all.off_ns);
	CHECK_U64(c->with_user_ns, 1000 * MS);
	CHECK_U64(c->complete_ns, 710 * MS);
	CHECK_U64(c->incomplete_ns, 290 * MS);
	CHECK_U64(c->missing_ns, 16 * MS);
	CHECK_U64(c->no_user_ns, 100 * MS);
	CHECK_U64(c->unsymbolized_ns, 70 * MS);
	CHECK_U64(c->off_ns, c->with_user_ns + c->missing_ns + c->no_user_ns);
	CHECK(completeness__share(c) > 0.7099 && completeness__share(c) < 0.7101);
	CHECK_INT(c->nr_losses, 2);
	CHECK_STR(c->losses[0].reason, "no CFI");
	CHECK_STR(c->losses[0].binary, "libfoo.so.1");
	CHECK_U64(c->losses[0].off_ns, 220 * MS);
	CHECK_STR(c->losses[1].reason, "stack not readable");
	CHECK(!c->losses[1].binary);
	CHECK_U64(c->losses[1].off_ns, 70 * MS);
	completeness__free(c);
	profile__free(p);
}

TEST(completeness_of_frame_pointer_lanes_is_unknown)
{
	struct profile *p = load(MARKERS);
	struct completeness *c;

	CHECK(p);
	c = completeness__new(p, UNWINDER_FP_BPFTRACE);
	CHECK(c);
	CHECK(!c->known);
	CHECK(completeness__share(c) < 0);
	CHECK_INT(c->nr_losses, 0);
	CHECK_STR(unwinder__name(c->unwinder), "frame pointers (bpftrace)");
	CHECK_INT(unwinder__of_collector(COLLECTOR_BCC), UNWINDER_FP_BCC);
	CHECK_INT(unwinder__of_collector(COLLECTOR_NATIVE), UNWINDER_DWARF);
	completeness__free(c);
	profile__free(p);
}

TEST(completeness_empty_and_kernel_only_profiles_have_no_share)
{
	struct profile *p = profile__new();
	struct profile_weight w = {.count = 1, .off_ns = 5 * MS};
	struct completeness *c;
	uint32_t k;

	CHECK(p);
	c = completeness__new(p, UNWINDER_DWARF);
	CHECK(c);
	CHECK(completeness__share(c) < 0);
	completeness__free(c);
	k = frame(p, FRAME_KERNEL, "schedule");
	profile__add(p, profile__thread(p, 0, 0, "kthreadd"), profile__stack(p, &k, 1),
		     OFFCPU_STATE_SLEEP, &w);
	c = completeness__new(p, UNWINDER_DWARF);
	CHECK(c);
	CHECK_U64(c->no_user_ns, 5 * MS);
	CHECK(completeness__share(c) < 0);
	completeness__free(c);
	profile__free(p);
}

TEST(summary_writes_user_stacks)
{
	struct profile *p = load(MARKERS);
	struct lane l = {.collector = COLLECTOR_NATIVE, .collector_name = "native"};
	struct outcome o = {.state = "summary_written"};
	struct integrity in = {0};
	struct summary_input si = {.lane = &l, .outcome = &o, .integrity = &in, .profile = p};
	struct json_object *root, *v, *inc;
	char *out;

	CHECK(p);
	strcpy(l.tool, "native");
	out = render(put_summary, &si);
	root = out ? json_tokener_parse(out) : NULL;
	free(out);
	CHECK(root);
	CHECK((v = get(root, "user_stacks.unwinder")));
	CHECK_STR(json_object_get_string(v), "dwarf");
	CHECK((v = get(root, "user_stacks.with_user_stack_ns")));
	CHECK_U64(json_object_get_uint64(v), 1000 * MS);
	CHECK((v = get(root, "user_stacks.complete_share")));
	CHECK(json_object_get_double(v) > 0.7099 && json_object_get_double(v) < 0.7101);
	CHECK((v = get(root, "user_stacks.stack_missing_ns")));
	CHECK_U64(json_object_get_uint64(v), 16 * MS);
	CHECK((inc = get(root, "user_stacks.incomplete")));
	CHECK_INT(json_object_array_length(inc), 2);
	CHECK((v = get(json_object_array_get_idx(inc, 0), "binary")));
	CHECK_STR(json_object_get_string(v), "libfoo.so.1");
	CHECK((v = get(json_object_array_get_idx(inc, 0), "share")));
	CHECK(json_object_get_double(v) > 0.2199 && json_object_get_double(v) < 0.2201);
	CHECK(json_object_object_get_ex(json_object_array_get_idx(inc, 1), "binary", &v));
	CHECK(!v);
	json_object_put(root);

	/* An external lane: the same stacks, but nobody can tell whether they are whole. */
	l.collector = COLLECTOR_BCC;
	l.collector_name = "bcc";
	out = render(put_summary, &si);
	root = out ? json_tokener_parse(out) : NULL;
	free(out);
	CHECK(root);
	CHECK((v = get(root, "user_stacks.unwinder")));
	CHECK_STR(json_object_get_string(v), "frame pointers (bcc)");
	CHECK(json_object_object_get_ex(get(root, "user_stacks"), "complete_share", &v));
	CHECK(!v);
	CHECK(json_object_object_get_ex(get(root, "user_stacks"), "complete_ns", &v));
	CHECK(!v);
	CHECK_INT(json_object_array_length(get(root, "user_stacks.incomplete")), 0);
	json_object_put(root);
	profile__free(p);
}

TEST(summary_of_nothing_has_user_stacks_without_share)
{
	struct lane l = {.collector = COLLECTOR_NATIVE, .collector_name = "native"};
	struct outcome o = {.state = "tool_failed"};
	struct integrity in = {0};
	struct summary_input si = {.lane = &l, .outcome = &o, .integrity = &in};
	struct json_object *root, *v;
	char *out = render(put_summary, &si);

	root = out ? json_tokener_parse(out) : NULL;
	free(out);
	CHECK(root);
	CHECK(json_object_object_get_ex(get(root, "user_stacks"), "complete_share", &v));
	CHECK(!v);
	CHECK((v = get(root, "user_stacks.with_user_stack_ns")));
	CHECK_U64(json_object_get_uint64(v), 0);
	json_object_put(root);
}

TEST(report_warns_naming_binaries_and_reasons)
{
	struct report_arg a = {.p = load(MARKERS), .o = {.width = 80}};
	char *out;

	CHECK(a.p);
	out = render(put_report, &a);
	CHECK(out);
	CHECK_CONTAINS(out, "user stacks: 71.0% of off-CPU time in complete stacks; incomplete:\n"
			    "   22.0%  no CFI in libfoo.so.1\n"
			    "    7.0%  stack not readable\n");
	free(out);

	/* Frame-pointer lanes cannot tell: no claim either way. */
	a.o.unwinder = UNWINDER_FP_BCC;
	out = render(put_report, &a);
	CHECK(out);
	CHECK(!strstr(out, "user stacks:"));
	free(out);

	a.o.unwinder = UNWINDER_DWARF;
	a.o.json = true;
	out = render(put_report, &a);
	CHECK(out);
	{
		struct json_object *root = json_tokener_parse(out), *v;

		CHECK(root);
		v = get(root, "user_stacks.complete_share");
		CHECK(v && json_object_get_double(v) > 0.7099 &&
		      json_object_get_double(v) < 0.7101);
		json_object_put(root);
	}
	free(out);
	profile__free((struct profile *)a.p);
}

TEST(report_is_quiet_above_the_threshold)
{
	struct profile *p = profile__new();
	struct report_arg a = {.p = p};
	struct profile_weight whole = {.count = 1, .off_ns = 91 * MS};
	struct profile_weight cut = {.count = 1, .off_ns = 9 * MS};
	uint32_t f[3];
	int th;
	char *out;

	CHECK(p);
	th = profile__thread(p, 1, 1, "app");
	f[0] = frame(p, FRAME_USER, "main");
	f[1] = frame(p, FRAME_USER, "wait_here");
	f[2] = frame(p, FRAME_KERNEL, "schedule");
	profile__add(p, th, profile__stack(p, f, 3), OFFCPU_STATE_SLEEP, &whole);
	f[0] = frame(p, FRAME_MISSING, "[unwind: no CFI in libbar.so]");
	profile__add(p, th, profile__stack(p, f, 3), OFFCPU_STATE_SLEEP, &cut);
	out = render(put_report, &a);
	CHECK(out);
	CHECK(!strstr(out, "user stacks:"));
	free(out);
	/* 89% is below 90%: the warning appears. */
	cut.off_ns = 2.25 * MS;
	profile__add(p, th, profile__stack(p, f, 3), OFFCPU_STATE_SLEEP, &cut);
	out = render(put_report, &a);
	CHECK(out);
	CHECK_CONTAINS(out, "user stacks: 89.0% of off-CPU time in complete stacks");
	CHECK_CONTAINS(out, "   11.0%  no CFI in libbar.so\n");
	free(out);
	profile__free(p);
}

TEST(report_notes_unsymbolized_time)
{
	struct profile *p = profile__new();
	struct report_arg a = {.p = p, .o = {.unwinder = UNWINDER_FP_BCC}};
	struct profile_weight w = {.count = 1, .off_ns = 25 * MS};
	uint32_t f[2];
	int th;
	char *out;

	CHECK(p);
	th = profile__thread(p, 1, 1, "app");
	f[0] = frame(p, FRAME_USER, "[unsymbolized]");
	f[1] = frame(p, FRAME_KERNEL, "schedule");
	profile__add(p, th, profile__stack(p, f, 2), OFFCPU_STATE_SLEEP, &w);
	f[0] = frame(p, FRAME_USER, "main");
	w.off_ns = 75 * MS;
	profile__add(p, th, profile__stack(p, f, 2), OFFCPU_STATE_SLEEP, &w);
	out = render(put_report, &a);
	CHECK(out);
	CHECK_CONTAINS(out, "25.0% of off-CPU time is in stacks with unsymbolized frames");
	free(out);
	profile__free(p);
}

/* A real BCC capture: its "[unknown]" frames are marked, and their time counted. */
TEST(bcc_lane_frames_without_names_are_marked_and_counted)
{
	struct profile *p = profile__new();
	FILE *f = fopen("tests/data/bcc/system.folded", "r");
	struct completeness *c;
	uint64_t want = 0;
	size_t marked = 0;

	CHECK(p && f);
	CHECK_INT(folded__parse(f, p, NULL, NULL), 0);
	fclose(f);
	for (size_t i = 0; i < profile__nr_frames(p); i++) {
		const char *name = profile__frame_at(p, i)->name;

		CHECK(strcmp(name, "[unknown]"));
		CHECK(strncmp(name, "0x", 2));
		marked += !strcmp(name, FRAME_NAME_UNSYMBOLIZED);
	}
	CHECK_INT(marked, 1);
	for (size_t i = 0; i < profile__nr_rows(p); i++) {
		const struct profile_row *r = profile__row_at(p, i);
		size_t n;
		const uint32_t *fr = profile__stack_at(p, r->stack, &n);

		for (size_t j = 0; j < n; j++)
			if (!strcmp(profile__frame_at(p, fr[j])->name, FRAME_NAME_UNSYMBOLIZED)) {
				want += r->w.off_ns;
				break;
			}
	}
	c = completeness__new(p, UNWINDER_FP_BCC);
	CHECK(c);
	CHECK(want > 0);
	CHECK_U64(c->unsymbolized_ns, want);
	completeness__free(c);
	profile__free(p);
}

/* The mark survives writing and reading again: never wrapped twice, never lost. */
TEST(unsymbolized_frames_survive_a_folded_round_trip)
{
	struct profile *p = profile__new(), *q = profile__new();
	struct profile_weight w = {.count = 1, .off_ns = 3000};
	char *buf = NULL;
	size_t len = 0, n;
	FILE *f;
	uint32_t fr[3];
	const uint32_t *st;

	CHECK(p && q);
	fr[0] = frame(p, FRAME_USER, "[unsymbolized 0x7f12ab34]");
	fr[1] = frame(p, FRAME_USER, "[unsymbolized]");
	fr[2] = frame(p, FRAME_KERNEL, "schedule");
	profile__add(p, profile__thread(p, 1, 1, "app"), profile__stack(p, fr, 3),
		     OFFCPU_STATE_SLEEP, &w);
	f = open_memstream(&buf, &len);
	CHECK(f);
	CHECK_INT(folded__write(f, p), 0);
	fclose(f);
	CHECK_STR(buf, "app;[unsymbolized 0x7f12ab34];[unsymbolized];-;schedule 3\n");
	f = unit_memfile(buf);
	CHECK(f);
	CHECK_INT(folded__parse(f, q, NULL, NULL), 0);
	fclose(f);
	free(buf);
	st = profile__stack_at(q, profile__row_at(q, 0)->stack, &n);
	CHECK_INT(n, 3);
	CHECK_STR(profile__frame_at(q, st[0])->name, "[unsymbolized 0x7f12ab34]");
	CHECK_INT(profile__frame_at(q, st[0])->kind, FRAME_USER);
	CHECK_STR(profile__frame_at(q, st[1])->name, "[unsymbolized]");
	profile__free(p);
	profile__free(q);
}

int main(void)
{
	return unit_run();
}
