// SPDX-License-Identifier: GPL-2.0-only
/* Processes grouped by name (analyze/procgroups.h) and the report's table of them. */
#include <errno.h>
#include <json-c/json.h>

#include "analyze/budget.h"
#include "analyze/filter.h"
#include "analyze/procgroups.h"
#include "model/profile.h"
#include "output/report.h"
#include "unit.h"

#define MS 1000000ull

static void row(struct profile *p, int pid, int tid, const char *comm, uint64_t off_ms)
{
	const char *kname = "do_epoll_wait";
	uint32_t ids[1];
	struct profile_weight w = {.count = 2, .off_ns = off_ms * MS};
	struct profile_thread_time tt = {.wall_ns = 1000 * MS, .oncpu_ns = 1000 * MS - off_ms * MS};
	int th = profile__thread(p, pid, tid, comm), st;

	ids[0] = (uint32_t)profile__frame(p, FRAME_KERNEL, kname, strlen(kname));
	st = profile__stack(p, ids, 1);
	if (th < 0 || st < 0 ||
	    profile__add(p, (uint32_t)th, (uint32_t)st, OFFCPU_STATE_SLEEP, &w) ||
	    profile__set_thread_time(p, (uint32_t)th, &tt))
		abort();
}

/*
 * A host: three postgres processes (90 ms each, one with two threads), one
 * big redis-server (200 ms), and 12 small daemons of distinct names.
 */
static struct profile *host(void)
{
	struct profile *p = profile__new();
	char name[32];

	if (!p)
		abort();
	profile__set_runq_known(p, true);
	row(p, 10, 10, "postgres", 60);
	row(p, 10, 11, "bgwriter", 30);
	row(p, 20, 20, "postgres", 90);
	row(p, 30, 30, "postgres", 90);
	row(p, 40, 40, "redis-server", 200);
	for (int i = 0; i < 12; i++) {
		snprintf(name, sizeof(name), "daemon%02d", i);
		row(p, 100 + i, 100 + i, name, 10 + (uint64_t)i);
	}
	return p;
}

static char *render(const struct profile *p, const struct report_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		abort();
	if (report__write(f, p, NULL, o)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	return buf;
}

TEST(procgroups_sum_processes_by_name_largest_first)
{
	struct profile *p = host();
	struct budget *b = budget__new(p);
	struct proc_groups *gs = b ? proc_groups__new(b) : NULL;
	const struct proc_group *g;

	CHECK(gs);
	CHECK_INT(gs->nr, 14);
	g = &gs->groups[0];
	CHECK_STR(g->comm, "postgres");
	CHECK_INT(g->nr_procs, 3);
	CHECK_INT(g->e.nr_threads, 4);
	CHECK_U64(g->e.off_ns, 270 * MS);
	CHECK_U64(g->e.wall_ns, 4000 * MS);
	CHECK(g->e.time_known);
	CHECK(g->e.coverage > 0.99 && g->e.coverage < 1.01);
	/* Its processes in the budget's order: largest first, then by pid. */
	CHECK_INT(b->procs[g->procs[0]].pid, 10);
	CHECK_INT(b->procs[g->procs[1]].pid, 20);
	CHECK_INT(b->procs[g->procs[2]].pid, 30);
	CHECK_STR(gs->groups[1].comm, "redis-server");
	CHECK_INT(gs->groups[1].nr_procs, 1);
	CHECK_STR(gs->groups[2].comm, "daemon11");
	CHECK_STR(gs->groups[13].comm, "daemon00");
	proc_groups__free(gs);
	budget__free(b);
	profile__free(p);
}

TEST(report_groups_processes_by_name_and_sums_the_tail)
{
	struct profile *p = host();
	struct report_opts o = {.width = 100};
	char *out = render(p, &o), *pg, *redis;

	CHECK(out);
	pg = strstr(out, "postgres (3 processes, 4 threads)");
	redis = strstr(out, "40 redis-server");
	/* The service of three processes comes before the largest single process. */
	CHECK(pg && redis && pg < redis);
	/* The first group is expanded into its processes, and those into threads. */
	CHECK(strstr(out, "  10 postgres") && strstr(out, "  30 postgres"));
	CHECK(strstr(out, "    11 bgwriter"));
	/* 14 names, 10 shown: the 4 smallest daemons (10+11+12+13 ms) in one line. */
	CHECK(strstr(out, "(4 more process names: 46.0ms off-CPU)"));
	CHECK(!strstr(out, "daemon03"));
	CHECK(strstr(out, "daemon04"));
	free(out);

	/* --top: fewer names. */
	o.max_procs = 1;
	out = render(p, &o);
	CHECK(out);
	CHECK(strstr(out, "postgres (3 processes"));
	CHECK(!strstr(out, "40 redis-server"));
	CHECK(strstr(out, "(13 more process names: 386ms off-CPU)"));
	free(out);
	profile__free(p);
}

TEST(report_groups_are_in_the_json)
{
	struct profile *p = host();
	struct report_opts o = {.json = true};
	char *out = render(p, &o);
	struct json_object *root, *budget, *groups, *g, *v;

	CHECK(out);
	root = json_tokener_parse(out);
	CHECK(root);
	CHECK(json_object_object_get_ex(root, "budget", &budget));
	CHECK(json_object_object_get_ex(budget, "groups", &groups));
	CHECK_INT(json_object_array_length(groups), 14);
	g = json_object_array_get_idx(groups, 0);
	CHECK(json_object_object_get_ex(g, "comm", &v));
	CHECK_STR(json_object_get_string(v), "postgres");
	CHECK(json_object_object_get_ex(g, "processes", &v));
	CHECK_INT(json_object_get_int(v), 3);
	CHECK(json_object_object_get_ex(g, "threads", &v));
	CHECK_INT(json_object_get_int(v), 4);
	CHECK(json_object_object_get_ex(g, "off_ns", &v));
	CHECK_U64(json_object_get_uint64(v), 270 * MS);
	CHECK(json_object_object_get_ex(g, "pids", &v));
	CHECK_INT(json_object_array_length(v), 3);
	CHECK(json_object_object_get_ex(root, "filter", &v));
	CHECK(json_object_is_type(v, json_type_null));
	json_object_put(root);
	free(out);
	profile__free(p);
}

TEST(report_says_what_was_filtered)
{
	struct profile *p = host(), *q = NULL;
	struct filter *f = filter__new();
	struct filter_result r;
	struct report_opts o = {.width = 100};
	struct json_object *root, *fo, *v;
	char *out;

	CHECK(f);
	filter__add_comm(f, "postgres");
	CHECK_INT(filter__apply(f, p, NULL, &q, NULL, &r), 0);
	o.filter = f;
	o.filtered = &r;
	out = render(q, &o);
	CHECK(out);
	CHECK(strstr(out, "filtered: --comm postgres: 4 of 17 threads, 3 of 16 processes"));
	CHECK(!strstr(out, "redis"));
	free(out);
	o.json = true;
	out = render(q, &o);
	CHECK(out);
	root = json_tokener_parse(out);
	CHECK(root);
	CHECK(json_object_object_get_ex(root, "filter", &fo));
	CHECK(json_object_object_get_ex(fo, "comms", &v));
	CHECK_STR(json_object_get_string(json_object_array_get_idx(v, 0)), "postgres");
	CHECK(json_object_object_get_ex(fo, "threads_total", &v));
	CHECK_INT(json_object_get_int(v), 17);
	CHECK(json_object_object_get_ex(root, "totals", &v));
	CHECK(json_object_object_get_ex(v, "off_ns", &v));
	CHECK_U64(json_object_get_uint64(v), 270 * MS);
	json_object_put(root);
	free(out);
	profile__free(q);
	filter__free(f);
	profile__free(p);
}

int main(void)
{
	return unit_run();
}
