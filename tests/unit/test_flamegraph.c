// SPDX-License-Identifier: GPL-2.0-only
/*
 * The flame graph writer: golden SVGs for small fixed profiles (regenerate
 * with OFFCPU_UPDATE_GOLDEN=1 after a deliberate change, then look at them),
 * XML well-formedness (xmllint, from libxml2-utils), exact widths, escaping,
 * pruning that keeps totals, the frame cap, reason colouring; the
 * differential graph (a NEW profile drawn coloured by its change from BASE).
 * How the tree is merged, pruned, capped and laid out: test_flame_tree.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/profile.h"
#include "output/flamegraph.h"
#include "profile_rows.h"
#include "unit.h"

#define GOLDEN_DIR "tests/data/flamegraph/"

/* A frame as the SVG shows it. */
struct drawn {
	uint64_t v;
	int y;
	double x, w;
	char name[256];
	char info[512];
	char fill[8];
};

#define ROW(p, comm, tid, state, ns, cnt, ...) \
	add(p, comm, tid, state, ns, cnt, (const char *const[]){__VA_ARGS__, NULL})

/* A small server: lock, sleep, disk, pipe, poll, child waits; two comms, a missed stack. */
static struct profile *small_profile(void)
{
	struct profile *p = profile__new();

	if (!p)
		abort();
	ROW(p, "app", 11, OFFCPU_STATE_SLEEP, 1200000000, 40, "u:main", "u:worker",
	    "u:pthread_mutex_lock", "k:entry_SYSCALL_64", "k:__x64_sys_futex", "k:futex_wait",
	    "k:schedule");
	ROW(p, "app", 12, OFFCPU_STATE_SLEEP, 800000000, 8, "u:main", "u:worker", "u:nanosleep",
	    "k:entry_SYSCALL_64", "k:hrtimer_nanosleep", "k:schedule");
	ROW(p, "app", 12, OFFCPU_STATE_DISK, 300000000, 30, "u:main", "u:worker", "u:fsync",
	    "k:entry_SYSCALL_64", "k:do_fsync", "k:io_schedule", "k:schedule");
	ROW(p, "app", 13, OFFCPU_STATE_SLEEP, 900000000, 90, "u:main", "u:poller", "u:epoll_wait",
	    "k:entry_SYSCALL_64", "k:ep_poll", "k:schedule_hrtimeout_range", "k:schedule");
	ROW(p, "app", 13, OFFCPU_STATE_PREEMPT, 2400000, 25, "u:main", "u:poller",
	    "k:asm_sysvec_apic_timer_interrupt", "k:preempt_schedule_irq", "k:schedule");
	ROW(p, "sh", 20, OFFCPU_STATE_SLEEP, 2000000000, 1, "u:main", "u:waitpid",
	    "k:entry_SYSCALL_64", "k:do_wait", "k:schedule");
	ROW(p, "sh", 20, OFFCPU_STATE_SLEEP, 150000000, 3, "m:[Missed User Stack]",
	    "k:entry_SYSCALL_64", "k:pipe_read", "k:schedule");
	return p;
}

/* Not inlined: GCC 12 takes the stream's buffer for a dangling local otherwise. */
__attribute__((noinline)) static char *render(const struct profile *p,
					      const struct flamegraph_opts *o, int *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		abort();
	*err = flamegraph__write(f, p, o);
	fclose(f);
	return buf;
}

/* Every frame in document order; returns how many (at most max). */
static size_t frames_of(const char *svg, struct drawn *d, size_t max)
{
	size_t n = 0;

	for (const char *s = strstr(svg, "<g data-v=\""); s && n < max;
	     s = strstr(s + 1, "<g data-v=\"")) {
		const char *t = strstr(s, "<title>") + 7, *nl = strchr(t, '\n'), *end;
		struct drawn *f = &d[n++];

		f->v = strtoull(s + 11, NULL, 10);
		snprintf(f->name, sizeof(f->name), "%.*s", (int)(nl - t), t);
		end = strstr(nl, "</title>");
		snprintf(f->info, sizeof(f->info), "%.*s", (int)(end - nl - 1), nl + 1);
		f->x = strtod(strstr(s, " x=\"") + 4, NULL);
		f->y = atoi(strstr(s, " y=\"") + 4);
		f->w = strtod(strstr(s, " width=\"") + 8, NULL);
		snprintf(f->fill, sizeof(f->fill), "%.7s", strstr(s, " fill=\"") + 7);
	}
	return n;
}

static bool xmllint_ok(const char *svg, bool *ran)
{
	char path[] = "/tmp/offcpu-fg-XXXXXX";
	int fd = mkstemp(path), rc;
	FILE *f;

	*ran = false;
	if (fd < 0 || !(f = fdopen(fd, "w")))
		return false;
	fputs(svg, f);
	fclose(f);
	rc = system("command -v xmllint >/dev/null 2>&1");
	if (rc == 0) {
		char cmd[128];

		*ran = true;
		snprintf(cmd, sizeof(cmd), "xmllint --noout %s 2>&1", path);
		rc = system(cmd);
	}
	unlink(path);
	return rc == 0;
}

/* Compare with the golden file; OFFCPU_UPDATE_GOLDEN=1 rewrites it instead. */
static bool matches_golden(const char *svg, const char *name, char *why, size_t sz)
{
	char path[128];
	char *want;
	bool ok;

	snprintf(path, sizeof(path), GOLDEN_DIR "%s", name);
	if (getenv("OFFCPU_UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "w");

		if (!f || fputs(svg, f) < 0 || fclose(f)) {
			snprintf(why, sz, "cannot write %s", path);
			return false;
		}
	}
	want = unit_slurp(path);
	if (!want) {
		snprintf(why, sz, "cannot read %s (run from the repository root)", path);
		return false;
	}
	ok = !strcmp(want, svg);
	if (!ok) {
		size_t i = 0;

		while (want[i] && want[i] == svg[i])
			i++;
		snprintf(why, sz, "differs from %s at byte %zu: \"%.40s\" vs \"%.40s\"", path, i,
			 svg + i, want + i);
	}
	free(want);
	return ok;
}

TEST(golden_default_flame_graph)
{
	struct profile *p = small_profile();
	int err;
	char *svg = render(p, NULL, &err), why[400];

	CHECK_INT(err, 0);
	if (!matches_golden(svg, "small.svg", why, sizeof(why)))
		UNIT_FAIL("%s", why);
	free(svg);
	profile__free(p);
}

TEST(golden_icicle_per_thread_reason_count)
{
	struct profile *p = small_profile();
	struct flamegraph_opts o = {.title = "Icicle <by> reason & count",
				    .subtitle = "fixture",
				    .icicle = true,
				    .per_thread = true,
				    .color = FLAMEGRAPH_COLOR_REASON,
				    .weight = FLAMEGRAPH_WEIGHT_COUNT,
				    .width = 900};
	int err;
	char *svg = render(p, &o, &err), why[400];

	CHECK_INT(err, 0);
	if (!matches_golden(svg, "small-icicle-reason.svg", why, sizeof(why)))
		UNIT_FAIL("%s", why);
	free(svg);
	profile__free(p);
}

TEST(svg_is_well_formed_xml)
{
	struct profile *p = small_profile();
	struct flamegraph_opts o = {.color = FLAMEGRAPH_COLOR_REASON, .per_thread = true};
	int err;
	char *svg = render(p, &o, &err);
	bool ran, ok = xmllint_ok(svg, &ran);

	free(svg);
	profile__free(p);
	CHECK_INT(err, 0);
	if (!ran)
		SKIP("xmllint not installed (Debian libxml2-utils)");
	CHECK(ok);
}

TEST(self_contained_no_external_references)
{
	struct profile *p = small_profile();
	int err, urls = 0;
	char *svg = render(p, NULL, &err);

	CHECK_INT(err, 0);
	CHECK(!strstr(svg, "href"));
	CHECK(!strstr(svg, "<script src"));
	CHECK(!strstr(svg, "@import"));
	/* The only URL is the SVG namespace's name, which is never fetched. */
	for (const char *s = strstr(svg, "://"); s; s = strstr(s + 1, "://")) {
		CHECK(!strncmp(s - 4, "http://www.w3.org/2000/svg\"", 27));
		urls++;
	}
	CHECK(urls >= 1);
	CHECK_CONTAINS(svg, "<script type=\"text/ecmascript\"><![CDATA[");
	CHECK_CONTAINS(svg, "<style>");
	free(svg);
	profile__free(p);
}

TEST(root_is_total_and_children_sum_to_it)
{
	struct profile *p = small_profile();
	struct drawn d[64];
	int err;
	char *svg = render(p, NULL, &err);
	size_t n = frames_of(svg, d, 64);
	uint64_t sum = 0;
	double wsum = 0;

	CHECK_INT(err, 0);
	CHECK_INT(n, 37);
	CHECK_STR(d[0].name, "all");
	CHECK_U64(d[0].v, profile__totals(p)->all.off_ns);
	CHECK_U64(d[0].v, 5352400000ULL);
	for (size_t i = 1; i < n; i++) {
		if (d[i].y != d[0].y - 16)
			continue;
		sum += d[i].v;
		wsum += d[i].w;
	}
	CHECK_U64(sum, d[0].v);
	CHECK(wsum > d[0].w - 0.02 && wsum < d[0].w + 0.02);
	CHECK(d[0].w == 1180.0);
	free(svg);
	profile__free(p);
}

TEST(comm_frames_merge_threads_and_per_thread_splits_them)
{
	struct profile *p = small_profile();
	struct flamegraph_opts o = {.per_thread = true};
	struct drawn d[64];
	int err;
	char *svg = render(p, NULL, &err);
	size_t n = frames_of(svg, d, 64), apps = 0;

	CHECK_INT(err, 0);
	for (size_t i = 0; i < n; i++)
		apps += !strcmp(d[i].name, "app");
	CHECK_INT(apps, 1);
	CHECK_CONTAINS(svg, "<title>app\ncomm, 3.20 s off-CPU, 59.83%, 193 intervals</title>");
	free(svg);
	svg = render(p, &o, &err);
	CHECK_INT(err, 0);
	CHECK(!strstr(svg, "<title>app\n"));
	CHECK_CONTAINS(svg, "<title>app-11\nthread, 1.20 s off-CPU");
	CHECK_CONTAINS(svg, "<title>app-12\nthread, 1.10 s off-CPU");
	CHECK_CONTAINS(svg, "<title>app-13\nthread, 902 ms off-CPU");
	free(svg);
	profile__free(p);
}

TEST(siblings_by_name_and_output_independent_of_insertion_order)
{
	struct profile *a = profile__new(), *b = profile__new();
	int err;
	char *sa, *sb;
	struct drawn d[16];

	ROW(a, "x", 1, OFFCPU_STATE_SLEEP, 100, 1, "u:zeta", "k:schedule");
	ROW(a, "x", 1, OFFCPU_STATE_SLEEP, 300, 1, "u:alpha", "k:schedule");
	ROW(a, "x", 1, OFFCPU_STATE_SLEEP, 200, 1, "u:mid");
	ROW(b, "x", 1, OFFCPU_STATE_SLEEP, 200, 1, "u:mid");
	ROW(b, "x", 1, OFFCPU_STATE_SLEEP, 300, 1, "u:alpha", "k:schedule");
	ROW(b, "x", 1, OFFCPU_STATE_SLEEP, 100, 1, "u:zeta", "k:schedule");
	sa = render(a, NULL, &err);
	CHECK_INT(err, 0);
	sb = render(b, NULL, &err);
	CHECK_INT(err, 0);
	CHECK_STR(sa, sb);
	CHECK_INT(frames_of(sa, d, 16), 7);
	CHECK_STR(d[2].name, "alpha");
	CHECK_STR(d[4].name, "mid");
	CHECK_STR(d[5].name, "zeta");
	/* Children start at their parent's left edge, one after another. */
	CHECK(d[2].x == 10.0 && d[3].x == 10.0);
	CHECK(d[4].x > d[2].x + d[2].w - 0.01 && d[4].x < d[2].x + d[2].w + 0.01);
	free(sa);
	free(sb);
	profile__free(a);
	profile__free(b);
}

TEST(names_are_escaped_and_made_valid_utf8)
{
	struct profile *p = profile__new();
	int err;
	char *svg;
	bool ran, ok;

	ROW(p, "a<b>&\"c'", 1, OFFCPU_STATE_SLEEP, 1000, 1, "u:operator<<(std::ostream&)",
	    "u:f\"'>", "u:bad\xff\xfe byte", "u:ctl\x01\x1f\x7f", "u:caf\xc3\xa9 \xe2\x82\xac",
	    "u:over\xc0\xaf"
	    "e",
	    "u:nonchar\xef\xbf\xbe", "u:surr\xed\xa0\x80", "u:emoji\xf0\x9f\x98\x80",
	    "u:cut\xe2\x82");
	svg = render(p, NULL, &err);
	CHECK_INT(err, 0);
	CHECK_CONTAINS(svg, "<title>a&lt;b&gt;&amp;&quot;c&apos;\n");
	CHECK_CONTAINS(svg, "<title>operator&lt;&lt;(std::ostream&amp;)\n");
	CHECK_CONTAINS(svg, "<title>f&quot;&apos;&gt;\n");
	CHECK_CONTAINS(svg, "<title>bad\\xff\\xfe byte\n");
	CHECK_CONTAINS(svg, "<title>ctl\\x01\\x1f\\x7f\n");
	CHECK_CONTAINS(svg, "<title>caf\xc3\xa9 \xe2\x82\xac\n");
	CHECK_CONTAINS(svg, "<title>over\\xc0\\xafe\n");
	CHECK_CONTAINS(svg, "<title>nonchar\\xef\\xbf\\xbe\n");
	CHECK_CONTAINS(svg, "<title>surr\\xed\\xa0\\x80\n");
	CHECK_CONTAINS(svg, "<title>emoji\xf0\x9f\x98\x80\n");
	CHECK_CONTAINS(svg, "<title>cut\\xe2\\x82\n");
	/* Labels are cut between characters, never inside an escape. */
	CHECK(!strstr(svg, "&am..") && !strstr(svg, "&l..") && !strstr(svg, "\\x.."));
	ok = xmllint_ok(svg, &ran);
	free(svg);
	profile__free(p);
	if (ran)
		CHECK(ok);
}

TEST(title_and_subtitle_are_escaped)
{
	struct profile *p = small_profile();
	struct flamegraph_opts o = {.title = "<script>alert(1)</script>", .subtitle = "a&b"};
	int err;
	char *svg = render(p, &o, &err);

	CHECK_INT(err, 0);
	CHECK_CONTAINS(svg, ">&lt;script&gt;alert(1)&lt;/script&gt;</text>");
	CHECK_CONTAINS(svg,
		       ">a&amp;b; total 5.35 s off-CPU in 197 intervals; width: off-CPU time<");
	free(svg);
	profile__free(p);
}

/* Labels fit their box; a cut label ends in "..". */
TEST(labels_are_cut_to_fit)
{
	struct profile *p = profile__new();
	int err;
	char *svg;

	ROW(p, "x", 1, OFFCPU_STATE_SLEEP, 100, 1, "u:a_very_long_function_name_that_cannot_fit");
	ROW(p, "x", 1, OFFCPU_STATE_SLEEP, 9900, 1, "u:big");
	svg = render(p, NULL, &err);
	CHECK_INT(err, 0);
	/* 1% of 1180 px = 11.8 px: no room for three characters, so no label at all. */
	CHECK(!strstr(svg, "\">a_v"));
	free(svg);
	profile__free(p);
	p = profile__new();
	ROW(p, "x", 1, OFFCPU_STATE_SLEEP, 1000, 1, "u:a_very_long_function_name_that_cannot_fit");
	ROW(p, "x", 1, OFFCPU_STATE_SLEEP, 9000, 1, "u:big");
	svg = render(p, NULL, &err);
	CHECK_INT(err, 0);
	/* 118 px: (118 - 6) / 7.08 = 15 characters, 13 of the name and "..". */
	CHECK_CONTAINS(svg, ">a_very_long_f..</text>");
	free(svg);
	profile__free(p);
}

/* An address name is no address cut short: whole, or no label. */
TEST(labels_are_never_cut_inside_brackets)
{
	struct profile *p = profile__new();
	struct drawn d[16];
	size_t n;
	int err;
	char *svg;

	ROW(p, "x", 1, OFFCPU_STATE_SLEEP, 1000, 1, "u:[postgres+0x1a2b3c]");
	ROW(p, "x", 1, OFFCPU_STATE_SLEEP, 1000, 1, "u:exec_query [clone .cold]");
	ROW(p, "x", 1, OFFCPU_STATE_SLEEP, 8000, 1, "u:big");
	svg = render(p, NULL, &err);
	CHECK_INT(err, 0);
	/* 118 px: 15 characters, 13 and ".." for a cut name. */
	CHECK(!strstr(svg, "\">[postgres"));
	CHECK_CONTAINS(svg, ">exec_query ..</text>");
	n = frames_of(svg, d, 16);
	CHECK(n >= 4);
	free(svg);
	profile__free(p);
	p = profile__new();
	ROW(p, "x", 1, OFFCPU_STATE_SLEEP, 2000, 1, "u:[postgres+0x1a2b3c]");
	ROW(p, "x", 1, OFFCPU_STATE_SLEEP, 8000, 1, "u:big");
	svg = render(p, NULL, &err);
	CHECK_INT(err, 0);
	CHECK_CONTAINS(svg, "\">[postgres+0x1a2b3c]</text>");
	free(svg);
	profile__free(p);
}

/* The script refits labels on zoom: its cut() keeps the same rule, run by node. */
TEST(script_labels_are_never_cut_inside_brackets)
{
	struct profile *p = profile__new();
	char path[] = "/tmp/offcpu-fg-XXXXXX", cmd[1024], out[64] = "";
	int fd, err;
	char *svg;
	FILE *f;

	ROW(p, "x", 1, OFFCPU_STATE_SLEEP, 1000, 1, "u:main");
	svg = render(p, NULL, &err);
	CHECK_INT(err, 0);
	if (system("command -v node >/dev/null 2>&1")) {
		free(svg);
		profile__free(p);
		SKIP("node is not installed (Debian: nodejs)");
	}
	fd = mkstemp(path);
	CHECK(fd >= 0 && (f = fdopen(fd, "w")));
	fputs(svg, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "node -e 'const m = require(\"fs\").readFileSync(\"%s\", \"utf8\")"
		 ".match(/function cut\\(s, max\\) \\{[\\s\\S]*?\\n\\}\\n/);"
		 "eval(m[0]); console.log([cut(\"[postgres+0x1a2b3c]\", 13),"
		 "cut(\"exec_query [clone .cold]\", 13), cut(\"[a] b\", 4),"
		 "cut(\"plain\", 3)].join(\" \"))' 2>&1",
		 path);
	f = popen(cmd, "r");
	CHECK(f);
	if (!fgets(out, sizeof(out), f))
		out[0] = '\0';
	pclose(f);
	unlink(path);
	CHECK_STR(out, "0 11 4 3\n");
	free(svg);
	profile__free(p);
}

TEST(inlined_frames_say_so_in_their_tooltip)
{
	struct profile *p = profile__new();
	struct drawn d[16];
	size_t n;
	int err, found = 0;
	char *svg;

	ROW(p, "x", 1, OFFCPU_STATE_SLEEP, 1000, 1, "u:main", "i:parse", "u:read", "k:schedule");
	ROW(p, "x", 1, OFFCPU_STATE_SLEEP, 1000, 1, "u:main", "u:parse", "k:schedule");
	svg = render(p, NULL, &err);
	CHECK_INT(err, 0);
	n = frames_of(svg, d, 16);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(d[i].name, "parse"))
			continue;
		found++;
		if (d[i].v == 1000 && !strncmp(d[i].info, "user, inlined,", 14))
			found += 10;
		else if (!strncmp(d[i].info, "user,", 5) && strncmp(d[i].info, "user, inlined", 13))
			found += 100;
	}
	/* Two frames named parse, one inlined, one not: siblings kept apart. */
	CHECK_INT(found, 112);
	free(svg);
	profile__free(p);
}

TEST(pruning_keeps_totals_exact)
{
	struct profile *p = profile__new();
	struct flamegraph_stats st;
	struct flamegraph_opts o = {.stats = &st};
	struct drawn d[64];
	char name[32];
	int err;
	char *svg;
	size_t n;

	ROW(p, "x", 1, OFFCPU_STATE_SLEEP, 1000000000, 1, "u:main", "u:big", "k:schedule");
	/* 100 tiny siblings of "big", each 0.0118 px wide: none drawn, 1 ms in "main" all the same.
	 */
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "u:tiny%03d", i);
		ROW(p, "x", 1, OFFCPU_STATE_SLEEP, 10000, 1, "u:main", name, "k:schedule");
	}
	svg = render(p, &o, &err);
	CHECK_INT(err, 0);
	n = frames_of(svg, d, 64);
	CHECK_INT(n, 5);
	CHECK(!strstr(svg, "tiny"));
	CHECK_U64(d[0].v, 1001000000);
	CHECK_STR(d[2].name, "main");
	CHECK_U64(d[2].v, 1001000000);
	CHECK_STR(d[3].name, "big");
	CHECK_U64(d[3].v, 1000000000);
	CHECK_INT(st.pruned, 200);
	CHECK_INT(st.drawn, 5);
	CHECK_INT(st.nodes, 205);
	CHECK_CONTAINS(svg, "200 frames narrower than 0.10 px not drawn");
	free(svg);

	/* Nothing pruned when asked; by share, the threshold follows the total. */
	o.min_width_px = -1;
	svg = render(p, &o, &err);
	CHECK_INT(err, 0);
	CHECK_INT(st.drawn, 205);
	CHECK_CONTAINS(svg, "tiny099");
	free(svg);
	o.min_share_pct = 50;
	svg = render(p, &o, &err);
	CHECK_INT(err, 0);
	CHECK_INT(st.drawn, 5);
	CHECK_U64(st.min_weight, 500500000);
	free(svg);
	profile__free(p);
}

/* Equal weights: the cap still fills its budget, taking tied frames in document order. */
TEST(frame_cap_fills_with_ties_in_order)
{
	struct profile *p = profile__new();
	struct flamegraph_stats st;
	struct flamegraph_opts o = {
		.stats = &st, .max_frames = 10, .weight = FLAMEGRAPH_WEIGHT_COUNT};
	struct drawn d[64];
	char a[32];
	int err;
	char *svg;
	size_t n;

	for (int i = 0; i < 20; i++) {
		snprintf(a, sizeof(a), "u:f%02d", i);
		ROW(p, "x", 1, OFFCPU_STATE_SLEEP, 1000, 1, a, "k:schedule");
	}
	svg = render(p, &o, &err);
	CHECK_INT(err, 0);
	n = frames_of(svg, d, 64);
	CHECK_INT(n, 10);
	CHECK_U64(st.min_weight, 1);
	CHECK_STR(d[1].name, "x");
	CHECK_STR(d[2].name, "f00");
	CHECK_STR(d[3].name, "schedule");
	CHECK_STR(d[8].name, "f03");
	CHECK_STR(d[9].name, "schedule");
	CHECK_CONTAINS(svg, "32 frames of 59.00 px or less not drawn, to keep to 10; their time");
	free(svg);
	/* SIZE_MAX: no cap (output/flame_tree tests what the cap keeps). */
	o.max_frames = SIZE_MAX;
	svg = render(p, &o, &err);
	CHECK_INT(err, 0);
	CHECK_INT(frames_of(svg, d, 64), 42);
	CHECK(!st.capped);
	free(svg);
	profile__free(p);
}

TEST(reason_colouring_from_kernel_frames_and_state)
{
	struct profile *p = small_profile();
	struct flamegraph_opts o = {.color = FLAMEGRAPH_COLOR_REASON};
	int err;
	char *svg = render(p, &o, &err);

	CHECK_INT(err, 0);
	/* A rule's detail (pthread_mutex_lock: lock: mutex) shows with the reason. */
	CHECK_CONTAINS(svg, "<title>futex_wait\nkernel, 1.20 s off-CPU, 22.42%, 40 intervals, "
			    "reason: lock: mutex</title>");
	CHECK_CONTAINS(svg,
		       "<title>hrtimer_nanosleep\nkernel, 800 ms off-CPU, 14.95%, 8 intervals, "
		       "reason: sleep</title>");
	/* epoll sleeps through an hrtimer; poll is the more specific reason. */
	CHECK_CONTAINS(svg, "<title>ep_poll\nkernel, 900 ms off-CPU, 16.81%, 90 intervals, "
			    "reason: poll</title>");
	CHECK_CONTAINS(svg, "<title>io_schedule\nkernel, 300 ms off-CPU, 5.60%, 30 intervals, "
			    "reason: disk_io</title>");
	CHECK_CONTAINS(svg, "<title>do_wait\nkernel, 2.00 s off-CPU, 37.37%, 1 interval, "
			    "reason: child</title>");
	CHECK_CONTAINS(svg, "<title>pipe_read\nkernel, 150 ms off-CPU, 2.80%, 3 intervals, "
			    "reason: pipe</title>");
	CHECK_CONTAINS(svg, "<title>preempt_schedule_irq\nkernel, 2.40 ms off-CPU, 0.04%, "
			    "25 intervals, reason: runqueue</title>");
	CHECK_CONTAINS(svg, "<title>worker\nuser, 2.30 s off-CPU, 42.97%, 78 intervals, "
			    "reason: mixed</title>");
	CHECK_CONTAINS(svg, "<g id=\"legend\">");
	free(svg);
	profile__free(p);
}

TEST(reason_details_merge_into_their_reason)
{
	struct profile *p = profile__new();
	struct flamegraph_opts o = {.color = FLAMEGRAPH_COLOR_REASON};
	int err;
	char *svg;

	CHECK(p);
	ROW(p, "app", 11, OFFCPU_STATE_SLEEP, 600000000, 6, "u:main", "u:worker", "u:locker",
	    "u:pthread_mutex_lock", "k:futex_wait", "k:schedule");
	ROW(p, "app", 11, OFFCPU_STATE_SLEEP, 400000000, 4, "u:main", "u:worker", "u:waiter",
	    "u:pthread_cond_wait", "k:futex_wait", "k:schedule");
	ROW(p, "app", 11, OFFCPU_STATE_SLEEP, 500000000, 5, "u:main", "u:sleeper", "u:nanosleep",
	    "k:do_nanosleep", "k:schedule");
	svg = render(p, &o, &err);
	CHECK_INT(err, 0);
	CHECK_CONTAINS(svg, "<title>locker\nuser, 600 ms off-CPU, 40.00%, 6 intervals, "
			    "reason: lock: mutex</title>");
	CHECK_CONTAINS(svg, "<title>waiter\nuser, 400 ms off-CPU, 26.67%, 4 intervals, "
			    "reason: lock: condvar</title>");
	/* Two details of one reason: that reason, coloured as such. */
	CHECK_CONTAINS(svg, "<title>worker\nuser, 1.00 s off-CPU, 66.67%, 10 intervals, "
			    "reason: lock</title>");
	CHECK_CONTAINS(svg, "<title>main\nuser, 1.50 s off-CPU, 100.00%, 15 intervals, "
			    "reason: mixed</title>");
	free(svg);
	profile__free(p);
}

TEST(count_weight_and_fallback_when_no_time)
{
	struct profile *p = profile__new();
	struct flamegraph_stats st;
	struct flamegraph_opts o = {.stats = &st};
	int err;
	char *svg;

	ROW(p, "x", 1, OFFCPU_STATE_UNKNOWN, 0, 30, "u:a");
	ROW(p, "x", 1, OFFCPU_STATE_UNKNOWN, 0, 10, "u:b");
	svg = render(p, &o, &err);
	CHECK_INT(err, 0);
	CHECK(st.weight_is_count);
	CHECK_U64(st.total, 40);
	CHECK_CONTAINS(svg, "width: intervals (no time recorded)");
	CHECK_CONTAINS(svg, "<g data-v=\"30\"><title>a\nuser, 30 intervals, 75.00%, 0 ns off-CPU");
	free(svg);
	profile__free(p);
}

TEST(time_units_in_tooltips)
{
	struct profile *p = profile__new();
	int err;
	char *svg;

	ROW(p, "x", 1, OFFCPU_STATE_SLEEP, 999, 1, "u:ns999");
	ROW(p, "x", 1, OFFCPU_STATE_SLEEP, 1500, 1, "u:us1");
	ROW(p, "x", 1, OFFCPU_STATE_SLEEP, 99960, 1, "u:us99");
	ROW(p, "x", 1, OFFCPU_STATE_SLEEP, 1500000, 1, "u:ms1");
	ROW(p, "x", 1, OFFCPU_STATE_SLEEP, 999600000, 1, "u:ms999");
	ROW(p, "x", 1, OFFCPU_STATE_SLEEP, 12345678901ULL, 1, "u:s12");
	ROW(p, "x", 1, OFFCPU_STATE_SLEEP, 3600000000000ULL, 1, "u:hour");
	svg = render(p, &(struct flamegraph_opts){.min_width_px = -1}, &err);
	CHECK_INT(err, 0);
	CHECK_CONTAINS(svg, "<title>ns999\nuser, 999 ns off-CPU");
	CHECK_CONTAINS(svg, "<title>us1\nuser, 1.50 us off-CPU");
	CHECK_CONTAINS(svg, "<title>us99\nuser, 100 us off-CPU");
	CHECK_CONTAINS(svg, "<title>ms1\nuser, 1.50 ms off-CPU");
	CHECK_CONTAINS(svg, "<title>ms999\nuser, 1.00 s off-CPU");
	CHECK_CONTAINS(svg, "<title>s12\nuser, 12.3 s off-CPU");
	CHECK_CONTAINS(svg, "<title>hour\nuser, 3600 s off-CPU");
	free(svg);
	profile__free(p);
}

TEST(empty_profile_gives_valid_svg)
{
	struct profile *p = profile__new();
	struct drawn d[4];
	int err;
	char *svg = render(p, NULL, &err);
	bool ran, ok;

	CHECK_INT(err, 0);
	CHECK_CONTAINS(svg, "no off-CPU intervals recorded");
	CHECK_INT(frames_of(svg, d, 4), 1);
	CHECK_U64(d[0].v, 0);
	ok = xmllint_ok(svg, &ran);
	free(svg);
	profile__free(p);
	if (ran)
		CHECK(ok);
}

TEST(icicle_puts_root_on_top)
{
	struct profile *p = small_profile();
	struct drawn d[64];
	int err;
	char *svg = render(p, &(struct flamegraph_opts){.icicle = true}, &err);
	size_t n = frames_of(svg, d, 64);

	CHECK_INT(err, 0);
	CHECK_CONTAINS(svg, ">Off-CPU Time Icicle Graph<");
	for (size_t i = 1; i < n; i++)
		CHECK(d[i].y > d[0].y);
	CHECK_CONTAINS(svg, "icicle: true");
	free(svg);
	profile__free(p);
}

TEST(bad_arguments_and_write_errors)
{
	struct profile *p = small_profile();
	FILE *full = fopen("/dev/full", "w");

	CHECK_INT(flamegraph__write(NULL, p, NULL), -EINVAL);
	CHECK_INT(flamegraph__write(stdout, NULL, NULL), -EINVAL);
	CHECK_INT(flamegraph__write(stdout, p, &(struct flamegraph_opts){.width = 50}), -EINVAL);
	CHECK_INT(flamegraph__write(stdout, p, &(struct flamegraph_opts){.min_share_pct = 101}),
		  -EINVAL);
	if (!full)
		SKIP("no /dev/full");
	CHECK_INT(flamegraph__write(full, p, NULL), -EIO);
	fclose(full);
	profile__free(p);
}

/* ---- differential ---- */

/* The drawn frame named name whose parent (the closest shallower frame before it) is parent. */
static const struct drawn *find(const struct drawn *d, size_t n, const char *parent,
				const char *name)
{
	for (size_t i = 1; i < n; i++) {
		size_t j = i;

		if (strcmp(d[i].name, name))
			continue;
		while (j-- > 0 && d[j].y != d[i].y + 16)
			;
		if (!parent || !strcmp(d[j].name, parent))
			return &d[i];
	}
	return NULL;
}

/* BASE: a worker waits on a lock 100 ms, a sleeper sleeps 200 ms, a poller polls 60 ms. */
static struct profile *diff_base(void)
{
	struct profile *p = profile__new();

	if (!p)
		abort();
	ROW(p, "app", 11, OFFCPU_STATE_SLEEP, 100000000, 10, "u:main", "u:worker",
	    "u:pthread_mutex_lock", "k:futex_wait+0x1a/0x40", "k:schedule");
	ROW(p, "app", 12, OFFCPU_STATE_SLEEP, 200000000, 2, "u:main", "u:sleeper", "u:nanosleep",
	    "k:hrtimer_nanosleep", "k:schedule");
	ROW(p, "app", 13, OFFCPU_STATE_SLEEP, 60000000, 6, "u:main", "u:poller", "u:poll",
	    "k:do_sys_poll", "k:schedule");
	return p;
}

/* NEW: the lock wait tripled (other tids, other offsets), the sleeper is unchanged. */
static struct profile *diff_new(void)
{
	struct profile *p = profile__new();

	if (!p)
		abort();
	ROW(p, "app", 21, OFFCPU_STATE_SLEEP, 300000000, 30, "u:main", "u:worker",
	    "u:pthread_mutex_lock", "k:futex_wait+0x20/0x40", "k:schedule");
	ROW(p, "app", 22, OFFCPU_STATE_SLEEP, 200000000, 2, "u:main", "u:sleeper", "u:nanosleep",
	    "k:hrtimer_nanosleep", "k:schedule");
	return p;
}

TEST(diff_golden)
{
	struct profile *b = diff_base(), *n = diff_new();
	struct flamegraph_opts o = {.base = b, .subtitle = "base -> new"};
	int err;
	char *svg = render(n, &o, &err), why[400];
	bool ran, ok;

	CHECK_INT(err, 0);
	if (!matches_golden(svg, "diff.svg", why, sizeof(why)))
		UNIT_FAIL("%s", why);
	ok = xmllint_ok(svg, &ran);
	if (ran)
		CHECK(ok);
	free(svg);
	profile__free(b);
	profile__free(n);
}

/* The stack that grew is red along its path, in proportion; the unchanged one is grey. */
TEST(diff_grown_stack_red_unchanged_grey)
{
	struct profile *b = diff_base(), *n = diff_new();
	struct flamegraph_stats st;
	struct flamegraph_opts o = {.base = b, .stats = &st};
	struct drawn d[64];
	const struct drawn *f;
	int err;
	char *svg = render(n, &o, &err);
	size_t nr = frames_of(svg, d, 64);

	CHECK_INT(err, 0);
	CHECK_CONTAINS(svg, ">Differential Off-CPU Flame Graph<");
	/* The layout is NEW's: the root is NEW's total, the sleeper 2/5 of it. */
	CHECK_STR(d[0].name, "all");
	CHECK_U64(d[0].v, 500000000);
	CHECK_U64(st.total, 500000000);
	CHECK_U64(st.base_total, 360000000);
	f = find(d, nr, "worker", "pthread_mutex_lock");
	CHECK(f != NULL);
	if (!f)
		goto out;
	CHECK(f->w > 0.6 * 1180 - 0.01 && f->w < 0.6 * 1180 + 0.01);
	/* 100 -> 300 ms: saturation 2/3 of the way from grey (222,222,222) to red (228,48,40). */
	CHECK_STR(f->fill, "#e26a65");
	CHECK_STR(f->info, "user, 300 ms off-CPU, 60.00%, 30 intervals; base 100 ms, new 300 ms, "
			   "delta +200 ms (+200.0%)");
	/* Matched through the offsets that differ, not a new frame. */
	f = find(d, nr, "pthread_mutex_lock", "futex_wait");
	CHECK(f != NULL && !strcmp(f->fill, "#e26a65"));
	CHECK(!strstr(svg, "+0x"));
	CHECK(!strstr(svg, "(new)"));
	/* Unchanged: exactly grey. */
	f = find(d, nr, "nanosleep", "hrtimer_nanosleep");
	CHECK(f != NULL && !strcmp(f->fill, "#dedede"));
	CHECK(f && strstr(f->info, "; base 200 ms, new 200 ms, delta 0 ns (+0.0%)"));
	f = find(d, nr, "main", "sleeper");
	CHECK(f != NULL && !strcmp(f->fill, "#dedede"));
	/* main 360 -> 500 ms: red, paler (140/500 = 0.28). */
	f = find(d, nr, "app", "main");
	CHECK(f != NULL && !strcmp(f->fill, "#e0adab"));
	CHECK(f && strstr(f->info, "; base 360 ms, new 500 ms, delta +140 ms (+38.9%)"));
out:
	free(svg);
	profile__free(b);
	profile__free(n);
}

/* Frames only in BASE are not drawn; the subtitle and stats count the outermost ones. */
TEST(diff_vanished_frames_reported)
{
	struct profile *b = diff_base(), *n = diff_new();
	struct flamegraph_stats st;
	struct flamegraph_opts o = {.base = b, .stats = &st};
	struct drawn d[64];
	const struct drawn *f;
	int err;
	char *svg;
	size_t nr;

	/* Two more stacks under the vanished poller, and a comm only in BASE. */
	ROW(b, "app", 13, OFFCPU_STATE_SLEEP, 15000000, 1, "u:main", "u:poller", "u:read",
	    "k:pipe_read", "k:schedule");
	ROW(b, "cron", 30, OFFCPU_STATE_SLEEP, 25000000, 1, "u:main", "k:do_nanosleep");
	svg = render(n, &o, &err);
	nr = frames_of(svg, d, 64);
	CHECK_INT(err, 0);
	CHECK(!strstr(svg, "poller") && !strstr(svg, "cron") && !strstr(svg, "pipe_read"));
	CHECK_INT(st.vanished, 2);
	CHECK_U64(st.vanished_weight, 100000000);
	CHECK_CONTAINS(svg, ">base 400 ms, new 500 ms off-CPU (+100 ms, +25.0%)</text>");
	CHECK_CONTAINS(svg, ">widths: new; colour: change from base, red grew, blue shrank; "
			    "2 frames only in base not drawn (-100 ms)</text>");
	/* Not drawn for want of NEW time, which is not for being narrow. */
	CHECK_INT(st.nodes, 11);
	CHECK_INT(st.drawn, 11);
	CHECK_INT(st.pruned, 0);
	CHECK(!strstr(svg, "frames narrower than"));
	/* What vanished stays in its parents' BASE time: main shrank in part by it. */
	f = find(d, nr, "app", "main");
	CHECK(f && strstr(f->info, "; base 375 ms, new 500 ms, delta +125 ms (+33.3%)"));
	f = find(d, nr, "all", "app");
	CHECK(f && strstr(f->info, "; base 375 ms, new 500 ms"));
	free(svg);
	profile__free(b);
	profile__free(n);
}

/* A stack that shrank is blue; one only in NEW is fully red and says "new". */
TEST(diff_shrank_blue_new_full_red)
{
	struct profile *b = profile__new(), *n = profile__new();
	struct drawn d[16];
	const struct drawn *f;
	int err;
	char *svg;
	size_t nr;

	ROW(b, "x", 1, OFFCPU_STATE_SLEEP, 400, 4, "u:shrinks", "k:schedule");
	ROW(n, "x", 2, OFFCPU_STATE_SLEEP, 100, 1, "u:shrinks", "k:schedule");
	ROW(n, "x", 2, OFFCPU_STATE_SLEEP, 300, 3, "u:appears", "k:schedule");
	/* A kernel frame of the same name is not the user one. */
	ROW(n, "x", 2, OFFCPU_STATE_SLEEP, 100, 1, "k:shrinks");
	svg = render(n, &(struct flamegraph_opts){.base = b}, &err);
	nr = frames_of(svg, d, 16);
	CHECK_INT(err, 0);
	f = find(d, nr, "x", "shrinks");
	CHECK(f && !strcmp(f->info, "user, 100 ns off-CPU, 20.00%, 1 interval; base 400 ns, "
				    "new 100 ns, delta -300 ns (-75.0%)"));
	/* 3/4 of the way to blue (50,100,228). */
	CHECK(f && !strcmp(f->fill, "#5d83e3"));
	f = find(d, nr, "x", "appears");
	CHECK(f && !strcmp(f->fill, "#e43028"));
	CHECK(f && strstr(f->info, "; base 0 ns, new 300 ns, delta +300 ns (new)"));
	CHECK_INT(d[3].w > 0, 1);
	CHECK_CONTAINS(svg,
		       "<title>shrinks\nkernel, 100 ns off-CPU, 20.00%, 1 interval; base 0 ns");
	free(svg);
	profile__free(b);
	profile__free(n);
}

/* Normalized, shares are compared: a stack whose time held still while another grew shrank. */
TEST(diff_normalized_compares_shares_and_rates)
{
	struct profile *b = profile__new(), *n = profile__new();
	struct flamegraph_opts o = {.base = b, .diff = FLAMEGRAPH_DIFF_SHARE};
	struct drawn d[16];
	const struct drawn *f;
	int err;
	char *svg;
	size_t nr;

	ROW(b, "x", 1, OFFCPU_STATE_SLEEP, 100000000, 1, "u:grows", "k:schedule");
	ROW(b, "x", 1, OFFCPU_STATE_SLEEP, 100000000, 1, "u:steady", "k:schedule");
	ROW(n, "x", 1, OFFCPU_STATE_SLEEP, 300000000, 1, "u:grows", "k:schedule");
	ROW(n, "x", 1, OFFCPU_STATE_SLEEP, 100000000, 1, "u:steady", "k:schedule");
	svg = render(n, &o, &err);
	nr = frames_of(svg, d, 16);
	CHECK_INT(err, 0);
	f = find(d, nr, "x", "steady");
	CHECK(f && strstr(f->info, "; base 50.00% (100 ms), new 25.00% (100 ms), "
				   "delta -25.00 pp (-50.0%)"));
	CHECK(f && !strcmp(f->fill, "#88a1e1"));
	f = find(d, nr, "x", "grows");
	CHECK(f && strstr(f->info, "; base 50.00% (100 ms), new 75.00% (300 ms), "
				   "delta +25.00 pp (+50.0%)"));
	/* The whole is 100% on both sides: unchanged. */
	CHECK_STR(d[0].fill, "#dedede");
	CHECK_CONTAINS(svg, "colour: change of share of total from base, red grew");
	free(svg);

	/* Absolute, the steady stack is unchanged. */
	o.diff = FLAMEGRAPH_DIFF_ABSOLUTE;
	svg = render(n, &o, &err);
	nr = frames_of(svg, d, 16);
	f = find(d, nr, "x", "steady");
	CHECK(f && !strcmp(f->fill, "#dedede"));
	free(svg);

	/* Per second of wall time: 100 ms in 1 s, 300 ms in 2 s. */
	o.diff = FLAMEGRAPH_DIFF_WALL;
	o.base_wall_ns = 1000000000;
	o.new_wall_ns = 2000000000;
	svg = render(n, &o, &err);
	nr = frames_of(svg, d, 16);
	CHECK_INT(err, 0);
	f = find(d, nr, "x", "grows");
	CHECK(f && strstr(f->info, "; base 100 ms/s (100 ms), new 150 ms/s (300 ms), "
				   "delta +50.0 ms/s (+50.0%)"));
	f = find(d, nr, "x", "steady");
	CHECK(f && strstr(f->info, "delta -50.0 ms/s (-50.0%)"));
	CHECK_CONTAINS(svg, "colour: change per second of wall time");
	free(svg);
	profile__free(b);
	profile__free(n);
}

/* A change too small to show is written without a sign. */
TEST(diff_change_that_rounds_to_zero_has_no_sign)
{
	struct profile *b = profile__new(), *n = profile__new();
	struct flamegraph_opts o = {.base = b, .diff = FLAMEGRAPH_DIFF_SHARE};
	int err;
	char *svg;

	ROW(b, "x", 1, OFFCPU_STATE_SLEEP, 1000000, 1, "u:a");
	ROW(b, "x", 1, OFFCPU_STATE_SLEEP, 2000000, 1, "u:b");
	ROW(n, "x", 1, OFFCPU_STATE_SLEEP, 1000001, 1, "u:a");
	ROW(n, "x", 1, OFFCPU_STATE_SLEEP, 1999999, 1, "u:b");
	svg = render(n, &o, &err);
	CHECK_INT(err, 0);
	CHECK_CONTAINS(svg, "<title>a\nuser, 1.00 ms off-CPU, 33.33%, 1 interval; base 33.33% "
			    "(1.00 ms), new 33.33% (1.00 ms), delta 0.00 pp (+0.0%)</title>");
	CHECK_CONTAINS(svg, "delta 0.00 pp (-0.0%)</title>");
	free(svg);
	o.diff = FLAMEGRAPH_DIFF_ABSOLUTE;
	svg = render(n, &o, &err);
	CHECK_CONTAINS(svg, "; base 1.00 ms, new 1.00 ms, delta +1 ns (+0.0%)</title>");
	CHECK_CONTAINS(svg, "; base 2.00 ms, new 2.00 ms, delta -1 ns (-0.0%)</title>");
	free(svg);
	profile__free(b);
	profile__free(n);
}

/* The search and zoom script is the same; search counts NEW's widths. */
TEST(diff_keeps_search_zoom_and_pruning)
{
	struct profile *b = diff_base(), *n = diff_new();
	struct flamegraph_stats st;
	struct flamegraph_opts o = {.base = b, .stats = &st, .min_share_pct = 50};
	int err;
	char *svg = render(n, &o, &err);

	CHECK_INT(err, 0);
	CHECK_CONTAINS(svg, "function search(s)");
	CHECK_CONTAINS(svg, "function zoom(z)");
	CHECK_CONTAINS(svg, "<text id=\"unzoom\"");
	/* Pruned by NEW's width: the sleeper (40%) goes, the worker (60%) stays. */
	CHECK(!strstr(svg, "sleeper"));
	CHECK_CONTAINS(svg, "<title>worker\n");
	CHECK_INT(st.vanished, 1);
	free(svg);
	profile__free(b);
	profile__free(n);
}

TEST(diff_empty_sides_and_bad_options)
{
	struct profile *b = diff_base(), *empty = profile__new();
	struct flamegraph_stats st;
	struct flamegraph_opts o = {.base = b, .stats = &st};
	struct drawn d[4];
	int err;
	char *svg = render(empty, &o, &err);
	bool ran, ok;

	CHECK_INT(err, 0);
	CHECK_INT(frames_of(svg, d, 4), 1);
	CHECK_INT(st.vanished, 1);
	CHECK_U64(st.vanished_weight, 360000000);
	CHECK_CONTAINS(svg, "base 360 ms, new 0 ns off-CPU (-360 ms, -100.0%)");
	CHECK_CONTAINS(svg, "1 frame only in base not drawn (-360 ms)");
	ok = xmllint_ok(svg, &ran);
	if (ran)
		CHECK(ok);
	free(svg);
	o.base = empty;
	svg = render(empty, &o, &err);
	CHECK_INT(err, 0);
	CHECK_CONTAINS(svg, "no off-CPU intervals recorded in base or new");
	free(svg);
	o.base = b;
	o.diff = FLAMEGRAPH_DIFF_WALL;
	o.base_wall_ns = 1000;
	CHECK_INT(flamegraph__write(stdout, b, &o), -EINVAL);
	o.diff = FLAMEGRAPH_DIFF_WALL + 1;
	CHECK_INT(flamegraph__write(stdout, b, &o), -EINVAL);
	profile__free(b);
	profile__free(empty);
}

int main(void)
{
	return unit_run();
}
