// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>

#include "unit.h"

#include "exports_fixture.h"
#include "output/chrome_trace.h"

struct ct_args {
	const struct profile *p;
	const struct timeline *t;
	struct chrome_trace_stats *st;
};

static int write_ct(FILE *out, const void *arg)
{
	const struct ct_args *a = arg;

	return chrome_trace__write_stats(out, a->p, a->t, a->st);
}

static struct json_object *field(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *sfield(struct json_object *o, const char *key)
{
	struct json_object *v = field(o, key);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* A microsecond value with three decimals, back to integer nanoseconds. */
static int64_t ns(struct json_object *o, const char *key)
{
	struct json_object *v = field(o, key);

	if (!v ||
	    !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		return -1;
	return (int64_t)(json_object_get_double(v) * 1000.0 + 0.5);
}

/* Write, parse back (json_tokener_parse), return the root; text kept in *text. */
static struct json_object *trace(const struct profile *p, const struct timeline *t,
				 struct chrome_trace_stats *st, char **text, int *err)
{
	struct ct_args a = {p, t, st};

	*text = fixture_capture(write_ct, &a, err, NULL);
	return *text ? json_tokener_parse(*text) : NULL;
}

/* The events of root of phase ph (and category cat, when not NULL), in file order. */
static size_t events_of(struct json_object *root, const char *ph, const char *cat,
			struct json_object **out, size_t max)
{
	struct json_object *ev = field(root, "traceEvents");
	size_t n = 0;

	for (size_t i = 0; ev && i < json_object_array_length(ev); i++) {
		struct json_object *e = json_object_array_get_idx(ev, i);
		const char *eph = sfield(e, "ph"), *ecat = sfield(e, "cat");

		if (eph && !strcmp(eph, ph) && (!cat || (ecat && !strcmp(ecat, cat))) && n < max)
			out[n++] = e;
	}
	return n;
}

/* The off-CPU intervals' "X" events (not the wakers' slices), in file order. */
static size_t x_events(struct json_object *root, struct json_object **out, size_t max)
{
	return events_of(root, "X", "offcpu", out, max);
}

/* No two X events of one tid overlap: the check a user's viewer relies on. */
static bool no_overlap(struct json_object **x, size_t n, char *why, size_t len)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			int64_t si = ns(x[i], "ts"), ei = si + ns(x[i], "dur");
			int64_t sj = ns(x[j], "ts");

			if (i == j || json_object_get_int(field(x[i], "tid")) !=
					      json_object_get_int(field(x[j], "tid")))
				continue;
			if (sj >= si && sj < ei && !(sj == si && j < i)) {
				snprintf(why, len,
					 "events %zu [%lld, %lld) and %zu (at %lld) overlap", i,
					 (long long)si, (long long)ei, j, (long long)sj);
				return false;
			}
		}
	return true;
}

TEST(chrome_trace_matches_golden)
{
	struct profile *p = fixture_profile();
	struct timeline *t = fixture_timeline();
	struct json_object *root;
	const char *why;
	char *text;
	int err;

	CHECK(p && t);
	root = trace(p, t, NULL, &text, &err);
	CHECK_INT(err, 0);
	CHECK(root);
	why = fixture_golden("chrome_trace_small.json", text);
	if (why)
		UNIT_FAIL("%s", why);
	json_object_put(root);
	free(text);
	timeline__free(t);
	profile__free(p);
}

TEST(chrome_trace_events_carry_interval_fields)
{
	struct profile *p = fixture_profile();
	struct timeline *t = fixture_timeline();
	struct chrome_trace_stats st;
	struct json_object *root, *x[16], *args;
	char *text;
	int err;

	CHECK(p && t);
	root = trace(p, t, &st, &text, &err);
	CHECK_INT(err, 0);
	CHECK(root);
	CHECK_STR(sfield(root, "displayTimeUnit"), "ns");
	CHECK_INT(x_events(root, x, 16), 4);
	CHECK_INT(st.events, 4);
	/* (tid, start) order: tid 100 at 0 us and 3000 us, tid 101 at 450 us and 500 us */
	CHECK_INT(json_object_get_int(field(x[0], "tid")), 100);
	CHECK_INT(json_object_get_int(field(x[0], "pid")), 100);
	CHECK_INT(ns(x[0], "ts"), 0);
	CHECK_INT(ns(x[0], "dur"), 400000);
	/* Named by its reason (analyze/reasons.h): a pipe read is "pipe". */
	CHECK_STR(sfield(x[0], "name"), "pipe");
	CHECK_STR(sfield(x[0], "cat"), "offcpu");
	args = field(x[0], "args");
	CHECK_STR(sfield(args, "state"), "sleep");
	CHECK_INT(json_object_get_int64(field(args, "off_ns")), 400000);
	CHECK_INT(json_object_get_int64(field(args, "runq_ns")), 1000);
	CHECK_INT(json_object_get_int(field(args, "waker_tid")), 101);
	CHECK_STR(sfield(args, "stack"),
		  "main;serve;read_request;-;entry_SYSCALL_64;do_syscall_64;__x64_sys_read;"
		  "pipe_read;schedule;__schedule");
	CHECK_INT(ns(x[1], "ts"), 3000000);
	CHECK_STR(sfield(x[1], "name"), "sleep");
	/* preempted: named by its reason, the run queue */
	CHECK_STR(sfield(x[2], "name"), "runqueue");
	CHECK_STR(sfield(field(x[2], "args"), "state"), "preempt");
	CHECK_STR(sfield(field(x[2], "args"), "stack"),
		  "[Missed User Stack];-;irqentry_exit;preempt_schedule_irq;__schedule");
	CHECK_STR(sfield(x[3], "name"), "lock");
	json_object_put(root);
	free(text);
	timeline__free(t);
	profile__free(p);
}

TEST(chrome_trace_names_processes_and_threads)
{
	struct profile *p = fixture_profile();
	struct timeline *t = fixture_timeline();
	struct timeline_interval stranger =
		fixture_iv(1005000000, 10, 0, 4242, 0, OFFCPU_STATE_SLEEP, 0);
	static const struct {
		const char *name;
		int id;
		const char *value;
	} want[] = {
		{"process_name", 100, "server"},    /* the comm of tid 100 = pid 100 */
		{"process_name", 4200, "pid 4200"}, /* not in the profile */
		{"thread_name", 100, "server"},	    {"thread_name", 101, "worker"},
		{"thread_name", 4242, "tid 4242"},
	};
	struct json_object *root, *ev;
	int seen = 0;
	char *text;
	int err;

	CHECK(p && t);
	stranger.pid = 4200;
	CHECK_INT(timeline__append(t, &stranger), 0);
	root = trace(p, t, NULL, &text, &err);
	CHECK_INT(err, 0);
	CHECK(root);
	ev = field(root, "traceEvents");
	for (size_t i = 0; i < json_object_array_length(ev); i++) {
		struct json_object *e = json_object_array_get_idx(ev, i);
		const char *name = sfield(e, "name"), *ph = sfield(e, "ph");
		int pid = json_object_get_int(field(e, "pid"));
		int tid = json_object_get_int(field(e, "tid"));
		const char *value = sfield(field(e, "args"), "name");
		size_t k;

		if (strcmp(ph, "M"))
			continue;
		for (k = 0; k < sizeof(want) / sizeof(want[0]); k++)
			if (!strcmp(name, want[k].name) &&
			    (want[k].name[0] == 'p' ? pid : tid) == want[k].id)
				break;
		if (k == sizeof(want) / sizeof(want[0]))
			UNIT_FAIL("unexpected metadata %s pid %d tid %d", name, pid, tid);
		CHECK_STR(value, want[k].value);
		seen |= 1 << k;
	}
	CHECK_INT(seen, 31);
	json_object_put(root);
	free(text);
	timeline__free(t);
	profile__free(p);
}

TEST(chrome_trace_clips_and_counts_overlaps_per_thread)
{
	struct profile *p = fixture_profile();
	struct timeline *t = timeline__new();
	struct timeline_interval v[] = {
		fixture_iv(1000, 500, 0, 7, 0, OFFCPU_STATE_SLEEP, 0), /* [1000, 1500) */
		fixture_iv(1200, 600, 0, 7, 1, OFFCPU_STATE_SLEEP, 0), /* clipped to [1500, 1800) */
		fixture_iv(1600, 100, 0, 7, 2, OFFCPU_STATE_SLEEP, 0), /* inside: dropped */
		fixture_iv(1800, 100, 0, 7, 2, OFFCPU_STATE_DISK, 0),  /* touches: kept */
		fixture_iv(1200, 600, 0, 8, 1, OFFCPU_STATE_SLEEP, 0), /* other tid: kept */
		fixture_iv(1000, 500, 500, 7, 3, OFFCPU_STATE_PREEMPT,
			   0), /* same start as [0]: dropped */
	};
	struct chrome_trace_stats st;
	struct json_object *root, *x[16], *other;
	char *text, why[160];
	size_t n;
	int err;

	CHECK(p && t);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		CHECK_INT(timeline__append(t, &v[i]), 0);
	root = trace(p, t, &st, &text, &err);
	CHECK_INT(err, 0);
	CHECK(root);
	CHECK_INT(st.clipped, 1);
	CHECK_INT(st.dropped, 2);
	CHECK_INT(st.events, 4);
	n = x_events(root, x, 16);
	CHECK_INT(n, 4);
	if (!no_overlap(x, n, why, sizeof(why)))
		UNIT_FAIL("%s", why);
	CHECK_INT(ns(x[1], "ts"), 500);
	CHECK_INT(ns(x[1], "dur"), 300);
	/* the collector's duration stays in the args */
	CHECK_INT(json_object_get_int64(field(field(x[1], "args"), "off_ns")), 600);
	other = field(root, "otherData");
	CHECK_INT(json_object_get_int(field(other, "overlaps_clipped")), 1);
	CHECK_INT(json_object_get_int(field(other, "overlaps_dropped")), 2);
	CHECK_INT(json_object_get_int(field(other, "intervals")), 6);
	CHECK_INT(json_object_get_int64(field(other, "monotonic_base_ns")), 1000);
	json_object_put(root);
	free(text);
	timeline__free(t);
	profile__free(p);
}

TEST(chrome_trace_fixture_has_no_overlap_after_clipping)
{
	struct profile *p = fixture_profile();
	struct timeline *t = fixture_timeline();
	struct chrome_trace_stats st;
	struct json_object *root, *x[16];
	char *text, why[160];
	size_t n;
	int err;

	CHECK(p && t);
	root = trace(p, t, &st, &text, &err);
	CHECK_INT(err, 0);
	CHECK(root);
	n = x_events(root, x, 16);
	/* the preempted interval of tid 101 runs into the next one: clipped, not lost */
	CHECK_INT(st.clipped, 1);
	CHECK_INT(st.dropped, 0);
	CHECK_INT(n, 4);
	if (!no_overlap(x, n, why, sizeof(why)))
		UNIT_FAIL("%s", why);
	json_object_put(root);
	free(text);
	timeline__free(t);
	profile__free(p);
}

TEST(chrome_trace_names_fall_back_to_leaf_then_state)
{
	struct profile *p = profile__new();
	struct timeline *t = timeline__new();
	struct json_object *root, *x[4];
	struct timeline_interval a, b, c;
	int plumbing, empty, user_only;
	char *text;
	int err;

	CHECK(p && t);
	plumbing = fixture_stack(p, "-;schedule;__schedule");
	empty = fixture_stack(p, "");
	user_only = fixture_stack(p, "main;yield_helper_[i];sched_yield_loop");
	CHECK(plumbing >= 0 && empty >= 0 && user_only >= 0);
	a = fixture_iv(0, 10, 0, 1, (uint32_t)plumbing, OFFCPU_STATE_SLEEP, 0);
	b = fixture_iv(0, 10, 0, 2, (uint32_t)empty, OFFCPU_STATE_DISK, 0);
	c = fixture_iv(0, 10, 0, 3, (uint32_t)user_only, OFFCPU_STATE_SLEEP, 0);
	CHECK_INT(timeline__append(t, &a), 0);
	CHECK_INT(timeline__append(t, &b), 0);
	CHECK_INT(timeline__append(t, &c), 0);
	root = trace(p, t, NULL, &text, &err);
	CHECK_INT(err, 0);
	CHECK(root);
	CHECK_INT(x_events(root, x, 4), 3);
	CHECK_STR(sfield(x[0], "name"), "__schedule");
	CHECK_STR(sfield(x[1], "name"), "disk");
	CHECK_STR(sfield(field(x[1], "args"), "stack"), "");
	CHECK_STR(sfield(x[2], "name"), "sched_yield_loop");
	CHECK_STR(sfield(field(x[2], "args"), "stack"), "main;yield_helper_[i];sched_yield_loop");
	json_object_put(root);
	free(text);
	timeline__free(t);
	profile__free(p);
}

TEST(chrome_trace_keeps_nanoseconds_far_from_the_base)
{
	struct profile *p = fixture_profile();
	struct timeline *t = timeline__new();
	struct timeline_interval a =
		fixture_iv(5000000000000000001ull, 1, 0, 1, 0, OFFCPU_STATE_SLEEP, 0);
	struct timeline_interval b =
		fixture_iv(5000003600000000007ull, 999, 0, 1, 0, OFFCPU_STATE_SLEEP, 0);
	char *text;
	int err;

	CHECK(p && t);
	CHECK_INT(timeline__append(t, &a), 0);
	CHECK_INT(timeline__append(t, &b), 0);
	{
		struct ct_args args = {p, t, NULL};

		text = fixture_capture(write_ct, &args, &err, NULL);
	}
	CHECK_INT(err, 0);
	/* an hour later, still to the nanosecond */
	CHECK_CONTAINS(text, "\"ts\":0.000,\"dur\":0.001");
	CHECK_CONTAINS(text, "\"ts\":3600000000.006,\"dur\":0.999");
	CHECK_CONTAINS(text, "\"monotonic_base_ns\":5000000000000000001");
	free(text);
	timeline__free(t);
	profile__free(p);
}

TEST(chrome_trace_refuses_unknown_stacks_and_handles_empty)
{
	struct profile *p = fixture_profile();
	struct timeline *t = timeline__new();
	struct timeline_interval bad = fixture_iv(0, 10, 0, 1, 77, OFFCPU_STATE_SLEEP, 0);
	struct json_object *root;
	struct ct_args a = {p, t, NULL};
	size_t len = 1;
	char *text;
	int err;

	CHECK(p && t);
	root = trace(p, t, NULL, &text, &err);
	CHECK_INT(err, 0);
	CHECK(root);
	CHECK_INT(json_object_array_length(field(root, "traceEvents")), 0);
	json_object_put(root);
	free(text);
	CHECK_INT(timeline__append(t, &bad), 0);
	text = fixture_capture(write_ct, &a, &err, &len);
	CHECK_INT(err, -EINVAL);
	CHECK(text == NULL);
	CHECK_INT(len, 0);
	timeline__free(t);
	profile__free(p);
}

static int ival(struct json_object *o, const char *key)
{
	return json_object_get_int(field(o, key));
}

/* The "X" event on ev's track (pid, tid) that ev's ts lies strictly inside, if any. */
static struct json_object *enclosing(struct json_object **x, size_t n, struct json_object *ev)
{
	int64_t at = ns(ev, "ts");

	for (size_t i = 0; i < n; i++)
		if (ival(x[i], "pid") == ival(ev, "pid") && ival(x[i], "tid") == ival(ev, "tid") &&
		    ns(x[i], "ts") < at && at < ns(x[i], "ts") + ns(x[i], "dur"))
			return x[i];
	return NULL;
}

/*
 * Every wakeup is a flow: an "s" inside a slice on the waker's track (an
 * interrupt's track under the pseudo-process "interrupts", named after it),
 * an "f" binding to ("bp":"e") and inside the woken interval, one of each per id.
 */
TEST(chrome_trace_draws_wakeups_as_flows)
{
	struct profile *p = fixture_profile();
	struct timeline *t = fixture_timeline();
	struct timeline_interval a = fixture_iv(1005000000, 1000000, 2000, 101, 1,
						OFFCPU_STATE_SLEEP, 0),
				 b = fixture_iv(1005000000, 500000, 0, 100, 1, OFFCPU_STATE_SLEEP,
						0),
				 c = fixture_iv(1007000000, 500000, 0, 100, 1, OFFCPU_STATE_SLEEP,
						0);
	struct json_object *root, *x[32], *sv[16], *fv[16], *meta[32];
	struct chrome_trace_stats st;
	int net, timer, irq_tid = 0, want_x = 0;
	char *text;
	int err;
	size_t nx, ns_, nf, nm;

	CHECK(p && t);
	net = timeline__irq(t, "softirq:NET_RX");
	timer = timeline__irq(t, "irq:timer");
	/* Two wakeups of NET_RX at once (one slice for both), one of the timer. */
	a.waker_irq = (uint32_t)net;
	b.waker_irq = (uint32_t)net;
	b.start_ns = 1005000000 + 1000000 - 2000 - 500000; /* ends at a's wakeup */
	c.waker_irq = (uint32_t)timer;
	CHECK_INT(timeline__append(t, &a), 0);
	CHECK_INT(timeline__append(t, &b), 0);
	CHECK_INT(timeline__append(t, &c), 0);
	root = trace(p, t, &st, &text, &err);
	CHECK_INT(err, 0);
	CHECK(root);
	nx = events_of(root, "X", NULL, x, 32);
	ns_ = events_of(root, "s", NULL, sv, 16);
	nf = events_of(root, "f", NULL, fv, 16);
	nm = events_of(root, "M", NULL, meta, 32);
	/* The fixture's two thread wakeups and these three. */
	CHECK_INT(st.flows, 5);
	CHECK_INT(ns_, 5);
	CHECK_INT(nf, 5);
	CHECK_INT(json_object_get_int(field(field(root, "otherData"), "flows")), 5);
	/* 7 intervals, 2 thread wakeup slices, 1 NET_RX slice for two wakeups, 1 timer slice. */
	CHECK_INT(nx, 11);
	CHECK_INT(st.events, 7);
	for (size_t i = 0; i < ns_; i++) {
		struct json_object *f = NULL, *from, *to;

		for (size_t j = 0; j < nf; j++)
			if (ival(fv[j], "id") == ival(sv[i], "id")) {
				CHECK(f == NULL);
				f = fv[j];
			}
		CHECK(f);
		if (!f)
			continue;
		CHECK_STR(sfield(f, "bp"), "e");
		CHECK_STR(sfield(f, "cat"), sfield(sv[i], "cat"));
		CHECK_STR(sfield(f, "name"), sfield(sv[i], "name"));
		from = enclosing(x, nx, sv[i]);
		to = enclosing(x, nx, f);
		CHECK(from && to);
		if (!from || !to)
			continue;
		CHECK_STR(sfield(from, "cat"), "wakeup");
		CHECK_STR(sfield(to, "cat"), "offcpu");
		/* The arrow leaves the waker at the wakeup: the interval's end less its run queue.
		 */
		CHECK_INT(ns(from, "ts"),
			  ns(to, "ts") + ns(to, "dur") -
				  json_object_get_int64(field(field(to, "args"), "runq_ns")));
		if (ival(sv[i], "pid") == 1 << 30) {
			CHECK_STR(sfield(from, "name"), sfield(field(to, "args"), "waker"));
			want_x++;
		} else {
			CHECK_INT(ival(sv[i], "tid"), ival(field(to, "args"), "waker_tid"));
		}
	}
	CHECK_INT(want_x, 3);
	/* The interrupts' tracks: a pseudo-process, one thread per name. */
	for (size_t i = 0; i < nm; i++) {
		const char *name = sfield(field(meta[i], "args"), "name");

		if (ival(meta[i], "pid") != 1 << 30)
			continue;
		if (!strcmp(sfield(meta[i], "name"), "process_name"))
			CHECK_STR(name, "interrupts");
		else if (!strcmp(name, "softirq:NET_RX"))
			irq_tid = ival(meta[i], "tid");
		else
			CHECK_STR(name, "irq:timer");
	}
	CHECK(irq_tid > 1 << 30);
	/* An interrupt waker is named in the args, its tid is 0. */
	for (size_t i = 0; i < nx; i++)
		if (!strcmp(sfield(x[i], "cat"), "offcpu") && ns(x[i], "ts") == 7000000)
			CHECK_STR(sfield(field(x[i], "args"), "waker"), "irq:timer");
	json_object_put(root);
	free(text);
	timeline__free(t);
	profile__free(p);
}

/* A wakeup slice never crosses an interval of the waker thread: it is cut short. */
TEST(chrome_trace_waker_slice_stops_at_the_wakers_next_interval)
{
	struct profile *p = fixture_profile();
	struct timeline *t = timeline__new();
	/* 101 wakes 100 at 3000 ns, then goes off the CPU itself 300 ns later. */
	struct timeline_interval woken = fixture_iv(1000, 2000, 0, 100, 0, OFFCPU_STATE_SLEEP, 101),
				 waker = fixture_iv(3300, 5000, 0, 101, 0, OFFCPU_STATE_SLEEP, 0);
	struct json_object *root, *x[8];
	char *text, why[200];
	int err;
	size_t nx;

	CHECK(p && t);
	CHECK_INT(timeline__append(t, &woken), 0);
	CHECK_INT(timeline__append(t, &waker), 0);
	root = trace(p, t, NULL, &text, &err);
	CHECK_INT(err, 0);
	CHECK(root);
	nx = events_of(root, "X", NULL, x, 8);
	CHECK_INT(nx, 3);
	for (size_t i = 0; i < nx; i++)
		if (!strcmp(sfield(x[i], "cat"), "wakeup")) {
			CHECK_INT(ns(x[i], "ts"), 2000);
			CHECK_INT(ns(x[i], "dur"), 300);
		}
	if (!no_overlap(x, nx, why, sizeof(why)))
		UNIT_FAIL("%s", why);
	json_object_put(root);
	free(text);
	timeline__free(t);
	profile__free(p);
}

int main(void)
{
	return unit_run();
}
