// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>

#include "analyze/filter.h"
#include "model/profile.h"
#include "model/timeline.h"
#include "unit.h"

#define MS 1000000ull

static uint32_t frame_stack(struct profile *p, const char *user, const char *kernel)
{
	uint32_t ids[2];

	ids[0] = (uint32_t)profile__frame(p, FRAME_USER, user, strlen(user));
	ids[1] = (uint32_t)profile__frame(p, FRAME_KERNEL, kernel, strlen(kernel));
	return (uint32_t)profile__stack(p, ids, 2);
}

static int thread_row(struct profile *p, int pid, int tid, const char *comm, uint32_t stack,
		      uint64_t off_ms)
{
	struct profile_weight w = {.count = 1, .off_ns = off_ms * MS, .runq_ns = off_ms * MS / 4};
	struct profile_thread_time tt = {.wall_ns = 2000 * MS, .oncpu_ns = 10 * MS};
	int th = profile__thread(p, pid, tid, comm);

	if (th < 0 || profile__add(p, (uint32_t)th, stack, OFFCPU_STATE_SLEEP, &w) ||
	    profile__set_thread_time(p, (uint32_t)th, &tt))
		abort();
	return th;
}

/*
 * Two postgres processes (one with a background worker thread), a redis with
 * a bio thread named otherwise, a process seen only through a thread that is
 * not its main one, and a folded thread without a pid.
 */
static struct profile *host_profile(void)
{
	struct profile *p = profile__new();
	uint32_t poll, read, fsync;

	if (!p)
		abort();
	profile__set_runq_known(p, true);
	poll = frame_stack(p, "epoll_wait", "do_epoll_wait");
	read = frame_stack(p, "secure_read", "sock_read_iter");
	fsync = frame_stack(p, "fsync", "do_fsync");
	thread_row(p, 100, 100, "postgres", read, 300);
	thread_row(p, 100, 101, "bgworker", fsync, 100);
	thread_row(p, 200, 200, "postgres", poll, 250);
	thread_row(p, 300, 300, "redis-server", poll, 500);
	thread_row(p, 300, 301, "bio_close_file", fsync, 20);
	thread_row(p, 400, 402, "worker", read, 5);
	thread_row(p, 0, 0, "cron", poll, 1);
	return p;
}

static uint64_t off_of(const struct profile *p)
{
	return profile__totals(p)->all.off_ns;
}

static bool has_tid(const struct profile *p, int tid)
{
	for (size_t i = 0; i < profile__nr_threads(p); i++)
		if (profile__thread_at(p, (uint32_t)i)->tid == tid)
			return true;
	return false;
}

TEST(filter_pid_lists_parse_strictly)
{
	const char *bad[] = {"", "a", "0", "-1", "1,", ",1", "1,,2", "1 2", "99999999999", NULL};
	struct filter *f = filter__new();
	size_t n;
	const int *pids;

	CHECK(f);
	CHECK_INT(filter__add_pids(f, "12,13"), 0);
	CHECK_INT(filter__add_pids(f, "7"), 0);
	for (size_t i = 0; bad[i]; i++)
		CHECK_INT(filter__add_pids(f, bad[i]), -EINVAL);
	pids = filter__pids(f, &n);
	CHECK_INT(n, 3);
	CHECK_INT(pids[0], 12);
	CHECK_INT(pids[2], 7);
	CHECK_INT(filter__add_comm(f, ""), -EINVAL);
	filter__free(f);
}

TEST(filter_describes_its_options)
{
	struct filter *f = filter__new();
	char buf[128];

	CHECK(f);
	CHECK(!filter__active(f));
	filter__describe(f, buf, sizeof(buf));
	CHECK_STR(buf, "");
	filter__add_pids(f, "12,13");
	filter__add_comm(f, "postgres");
	filter__add_comm(f, "redis-server");
	filter__set_top(f, 2);
	CHECK(filter__active(f));
	filter__describe(f, buf, sizeof(buf));
	CHECK_STR(buf, "--pid 12,13 --comm postgres --comm redis-server --top 2");
	filter__free(f);
}

TEST(filter_names_processes_by_main_thread_else_first)
{
	struct profile *p = host_profile();
	const char *names[16];

	filter__process_names(p, names);
	CHECK_STR(names[1], "postgres");     /* bgworker of postgres 100 */
	CHECK_STR(names[4], "redis-server"); /* bio thread */
	CHECK_STR(names[5], "worker");	     /* main thread 400 not seen */
	CHECK_STR(names[6], "cron");	     /* no pid: its own name */
	profile__free(p);
}

TEST(filter_pid_keeps_all_threads_of_the_process_and_their_times)
{
	struct profile *p = host_profile(), *q = NULL;
	struct filter *f = filter__new();
	struct filter_result r;

	CHECK(f);
	CHECK_INT(filter__add_pids(f, "300"), 0);
	CHECK_INT(filter__apply(f, p, NULL, &q, NULL, &r), 0);
	CHECK_INT(profile__nr_threads(q), 2);
	CHECK(has_tid(q, 300) && has_tid(q, 301));
	CHECK_INT(off_of(q), 520 * MS);
	CHECK_INT(profile__totals(q)->all.runq_ns, 130 * MS);
	CHECK(profile__runq_known(q));
	CHECK(profile__thread_time(q, 0) && profile__thread_time(q, 0)->wall_ns == 2000 * MS);
	/* Only the stacks the kept rows use. */
	CHECK_INT(profile__nr_stacks(q), 2);
	CHECK_INT(r.threads, 2);
	CHECK_INT(r.threads_total, 7);
	CHECK_INT(r.procs, 1);
	CHECK_INT(r.procs_total, 5);
	profile__free(q);
	filter__free(f);
	profile__free(p);
}

TEST(filter_comm_matches_process_or_thread_name_exactly)
{
	struct profile *p = host_profile(), *q = NULL;
	struct filter *f = filter__new();
	struct filter_result r;

	CHECK(f);
	filter__add_comm(f, "postgres");
	CHECK_INT(filter__apply(f, p, NULL, &q, NULL, &r), 0);
	/* postgres 100 with its bgworker, postgres 200. */
	CHECK_INT(profile__nr_threads(q), 3);
	CHECK(has_tid(q, 101));
	CHECK_INT(off_of(q), 650 * MS);
	CHECK_INT(r.procs, 2);
	profile__free(q);
	filter__free(f);

	f = filter__new();
	CHECK(f);
	filter__add_comm(f, "bio_close_file");
	filter__add_comm(f, "cron");
	CHECK_INT(filter__apply(f, p, NULL, &q, NULL, &r), 0);
	CHECK_INT(profile__nr_threads(q), 2);
	CHECK(has_tid(q, 301) && !has_tid(q, 300));
	CHECK_INT(off_of(q), 21 * MS);
	profile__free(q);
	filter__free(f);

	/* Exact: a prefix is no match. */
	f = filter__new();
	CHECK(f);
	filter__add_comm(f, "redis");
	CHECK_INT(filter__apply(f, p, NULL, &q, NULL, &r), -ESRCH);
	CHECK(!q);
	CHECK_INT(r.threads, 0);
	CHECK_INT(r.threads_total, 7);
	filter__free(f);
	profile__free(p);
}

TEST(filter_options_must_all_hold)
{
	struct profile *p = host_profile(), *q = NULL;
	struct filter *f = filter__new();

	CHECK(f);
	filter__add_pids(f, "100,300");
	filter__add_comm(f, "postgres");
	CHECK_INT(filter__apply(f, p, NULL, &q, NULL, NULL), 0);
	CHECK_INT(profile__nr_threads(q), 2);
	CHECK(has_tid(q, 100) && has_tid(q, 101) && !has_tid(q, 200));
	profile__free(q);
	filter__free(f);
	profile__free(p);
}

TEST(filter_top_keeps_the_names_with_most_off_cpu_time)
{
	struct profile *p = host_profile(), *q = NULL;
	struct filter *f = filter__new();
	struct filter_result r;

	CHECK(f);
	/* postgres (650 ms in two processes) beats redis-server (520 ms, the largest process). */
	filter__set_top(f, 1);
	CHECK_INT(filter__apply(f, p, NULL, &q, NULL, &r), 0);
	CHECK_INT(off_of(q), 650 * MS);
	CHECK_INT(r.procs, 2);
	profile__free(q);
	filter__set_top(f, 2);
	CHECK_INT(filter__apply(f, p, NULL, &q, NULL, &r), 0);
	CHECK_INT(off_of(q), 1170 * MS);
	profile__free(q);
	/* After the other options: the top of what they selected. */
	filter__set_top(f, 1);
	filter__add_pids(f, "300,400");
	CHECK_INT(filter__apply(f, p, NULL, &q, NULL, &r), 0);
	CHECK_INT(off_of(q), 520 * MS);
	profile__free(q);
	filter__set_top(f, 100);
	CHECK_INT(filter__apply(f, p, NULL, &q, NULL, &r), 0);
	CHECK_INT(off_of(q), 525 * MS);
	profile__free(q);
	filter__free(f);
	profile__free(p);
}

TEST(filter_timeline_keeps_the_selected_threads_intervals)
{
	struct profile *p = host_profile(), *q = NULL;
	struct timeline *t = timeline__new(), *u = NULL;
	struct filter *f = filter__new();
	struct timeline_info info = {.min_ns = 1000, .lost = 3, .lost_ns = 9};
	/* A stack that no row uses, as a timeline may intern one. */
	uint32_t only_tl = frame_stack(p, "nanosleep", "hrtimer_nanosleep");
	struct timeline_interval iv[] = {
		{.start_ns = 10, .dur_ns = 5, .pid = 300, .tid = 301, .stack = only_tl},
		{.start_ns = 20, .dur_ns = 5, .pid = 100, .tid = 100, .stack = 1},
		{.start_ns = 30, .dur_ns = 5, .pid = 300, .tid = 300, .stack = 0},
		/* The same tid in another pid (reused) is another thread. */
		{.start_ns = 40, .dur_ns = 5, .pid = 999, .tid = 300, .stack = 0},
	};
	const struct timeline_interval *got;
	size_t n;
	const uint32_t *fr;

	CHECK(t && f);
	timeline__set_info(t, &info);
	for (size_t i = 0; i < 4; i++)
		CHECK_INT(timeline__append(t, &iv[i]), 0);
	filter__add_pids(f, "300");
	CHECK_INT(filter__apply(f, p, t, &q, &u, NULL), 0);
	CHECK(u);
	CHECK_INT(timeline__nr(u), 2);
	CHECK_INT(timeline__info(u)->lost, 3);
	got = timeline__at(u, 0);
	CHECK_INT(got->tid, 301);
	fr = profile__stack_at(q, got->stack, &n);
	CHECK(fr && n == 2);
	CHECK_STR(profile__frame_at(q, fr[0])->name, "nanosleep");
	got = timeline__at(u, 1);
	CHECK_INT(got->tid, 300);
	fr = profile__stack_at(q, got->stack, &n);
	CHECK(fr && n == 2);
	CHECK_STR(profile__frame_at(q, fr[1])->name, "do_epoll_wait");
	timeline__free(u);
	profile__free(q);
	timeline__free(t);
	filter__free(f);
	profile__free(p);
}

int main(void)
{
	return unit_run();
}
