// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <json-c/json.h>

#include "unit.h"

#include "exports_fixture.h"
#include "output/report.h"
#include "output/woken_by.h"

struct rep_args {
	const struct profile *p;
	struct report_opts o;
};

static int write_report(FILE *out, const void *arg)
{
	const struct rep_args *a = arg;

	return report__write(out, a->p, NULL, &a->o);
}

/*
 * Waits of tids 100 and 101: two woken by softirq NET_RX (3 ms), one by the
 * thread 100 ("server", 2 ms), one by nothing known (1 ms); a preempted
 * interval, which nothing woke, is left out.
 */
static struct timeline *wakers_timeline(void)
{
	struct timeline *t = timeline__new();
	struct timeline_interval v[] = {
		fixture_iv(1000000, 2000000, 100000, 101, 0, OFFCPU_STATE_SLEEP, 0),
		fixture_iv(4000000, 1000000, 0, 100, 0, OFFCPU_STATE_SLEEP, 0),
		fixture_iv(6000000, 2000000, 500000, 101, 0, OFFCPU_STATE_DISK, 100),
		fixture_iv(9000000, 1000000, 0, 101, 0, OFFCPU_STATE_SLEEP, 0),
		fixture_iv(11000000, 5000000, 5000000, 100, 0, OFFCPU_STATE_PREEMPT, 0),
	};
	int net = t ? timeline__irq(t, "softirq:NET_RX") : -1;
	struct timeline_info info = {.min_ns = 1000000};

	if (net < 0) {
		timeline__free(t);
		return NULL;
	}
	v[0].waker_irq = v[1].waker_irq = (uint32_t)net;
	timeline__set_info(t, &info);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (timeline__append(t, &v[i])) {
			timeline__free(t);
			return NULL;
		}
	return t;
}

TEST(woken_by_text_ranks_wakers_by_woken_time)
{
	struct profile *p = fixture_profile();
	struct timeline *t = wakers_timeline();
	struct rep_args a = {.o = {.width = 100}};
	struct timeline_info info = {0};
	char *text, *sec;
	int err;

	CHECK(p && t);
	a.p = p;
	a.o.timeline = t;
	text = fixture_capture(write_report, &a, &err, NULL);
	CHECK_INT(err, 0);
	sec = text ? strstr(text, "Woken by") : NULL;
	CHECK(sec);
	if (sec) {
		CHECK_CONTAINS(sec,
			       "Woken by (the timeline's 4 waits of at least 1.00ms: 6.00ms)\n");
		CHECK_CONTAINS(sec, "  softirq:NET_RX");
		/* Largest first: NET_RX (3 ms), server (2 ms), then the unknown row. */
		CHECK(strstr(sec, "softirq:NET_RX") < strstr(sec, "server 100"));
		CHECK(strstr(sec, "server 100") < strstr(sec, "(unknown)"));
		CHECK_CONTAINS(sec, "3.00ms   50.0%  2 waits\n");
		CHECK_CONTAINS(sec, "1.00ms   16.7%  1 wait\n");
	}
	free(text);
	/* With no threshold the title does not name one. */
	info.min_ns = 0;
	timeline__set_info(t, &info);
	text = fixture_capture(write_report, &a, &err, NULL);
	CHECK(text);
	if (text)
		CHECK_CONTAINS(text, "\nWoken by (the timeline's 4 waits: 6.00ms)\n");
	free(text);
	/* No timeline, no section. */
	a.o.timeline = NULL;
	text = fixture_capture(write_report, &a, &err, NULL);
	CHECK_INT(err, 0);
	CHECK(text && !strstr(text, "Woken by"));
	free(text);
	timeline__free(t);
	profile__free(p);
}

TEST(woken_by_json_lists_every_waker)
{
	struct profile *p = fixture_profile();
	struct timeline *t = wakers_timeline();
	struct rep_args a = {.o = {.json = true}};
	struct json_object *root = NULL, *wb = NULL, *wakers = NULL, *unk = NULL, *x;
	char *text;
	int err;

	CHECK(p && t);
	a.p = p;
	a.o.timeline = t;
	text = fixture_capture(write_report, &a, &err, NULL);
	CHECK_INT(err, 0);
	root = text ? json_tokener_parse(text) : NULL;
	CHECK(root && json_object_object_get_ex(root, "woken_by", &wb));
	CHECK(wb && json_object_object_get_ex(wb, "wakers", &wakers));
	CHECK(wakers && json_object_array_length(wakers) == 2);
	if (wakers && json_object_array_length(wakers) == 2) {
		x = json_object_array_get_idx(wakers, 0);
		CHECK_STR(json_object_get_string(json_object_object_get(x, "kind")), "interrupt");
		CHECK_STR(json_object_get_string(json_object_object_get(x, "name")),
			  "softirq:NET_RX");
		CHECK_INT(json_object_get_int64(json_object_object_get(x, "off_ns")), 3000000);
		CHECK_INT(json_object_get_int64(json_object_object_get(x, "blocked_ns")), 2900000);
		CHECK_INT(json_object_get_int(json_object_object_get(x, "count")), 2);
		x = json_object_array_get_idx(wakers, 1);
		CHECK_STR(json_object_get_string(json_object_object_get(x, "kind")), "thread");
		CHECK_INT(json_object_get_int(json_object_object_get(x, "tid")), 100);
		CHECK_INT(json_object_get_int(json_object_object_get(x, "pid")), 100);
		CHECK_INT(json_object_get_int64(json_object_object_get(x, "blocked_ns")), 1500000);
	}
	CHECK(wb && json_object_object_get_ex(wb, "unknown", &unk));
	if (unk)
		CHECK_INT(json_object_get_int(json_object_object_get(unk, "count")), 1);
	CHECK_INT(json_object_get_int(json_object_object_get(wb, "waits")), 4);
	json_object_put(root);
	free(text);
	timeline__free(t);
	profile__free(p);
}

int main(void)
{
	return unit_run();
}
