// SPDX-License-Identifier: GPL-2.0-only
#include "analyze/budget.h"
#include "model/profile.h"
#include "unit.h"

#define MS 1000000ull

static int frame(struct profile *p, enum frame_kind k, const char *name)
{
	return profile__frame(p, k, name, strlen(name));
}

/* Stacks whose reasons are known: futex (lock), nanosleep (sleep), preempted. */
struct fixture {
	struct profile *p;
	uint32_t lock, sleep, preempt;
};

static int fixture_init(struct fixture *f)
{
	uint32_t fr[3];

	f->p = profile__new();
	if (!f->p)
		return -1;
	fr[0] = frame(f->p, FRAME_USER, "__GI___lll_lock_wait");
	fr[1] = frame(f->p, FRAME_KERNEL, "futex_do_wait");
	fr[2] = frame(f->p, FRAME_KERNEL, "schedule");
	f->lock = profile__stack(f->p, fr, 3);
	fr[0] = frame(f->p, FRAME_USER, "clock_nanosleep");
	fr[1] = frame(f->p, FRAME_KERNEL, "do_nanosleep");
	f->sleep = profile__stack(f->p, fr, 3);
	fr[0] = frame(f->p, FRAME_USER, "spin");
	fr[1] = frame(f->p, FRAME_KERNEL, "irqentry_exit_to_user_mode");
	f->preempt = profile__stack(f->p, fr, 3);
	return 0;
}

static void add(struct profile *p, int th, uint32_t stack, enum offcpu_state st, uint64_t count,
		uint64_t off, uint64_t runq)
{
	struct profile_weight w = {count, off, runq};

	profile__add(p, (uint32_t)th, stack, st, &w);
}

TEST(budget_with_schedstat_balances_to_wall)
{
	struct fixture f;
	struct budget *b;
	const struct budget_entry *t;
	struct profile_thread_time tt = {
		.wall_ns = 1000 * MS, .oncpu_ns = 300 * MS, .runq_ns = 50 * MS};
	int th;

	CHECK(!fixture_init(&f));
	profile__set_runq_known(f.p, true);
	th = profile__thread(f.p, 10, 11, "worker");
	/* 400 ms off on the lock, 20 of it waiting for a CPU after the wakeup. */
	add(f.p, th, f.lock, OFFCPU_STATE_SLEEP, 4, 400 * MS, 20 * MS);
	add(f.p, th, f.sleep, OFFCPU_STATE_SLEEP, 2, 200 * MS, 10 * MS);
	add(f.p, th, f.preempt, OFFCPU_STATE_PREEMPT, 5, 15 * MS, 15 * MS);
	profile__set_thread_time(f.p, (uint32_t)th, &tt);

	b = budget__new(f.p);
	CHECK(b);
	CHECK_INT(b->nr_threads, 1);
	t = &b->threads[0];
	CHECK(t->time_known);
	CHECK_INT(t->pid, 10);
	CHECK_INT(t->tid, 11);
	CHECK_U64(t->blocked_ns[REASON_LOCK], 380 * MS);
	CHECK_U64(t->blocked_ns[REASON_SLEEP], 190 * MS);
	CHECK_U64(t->blocked_ns[REASON_RUNQUEUE], 0);
	CHECK_U64(t->blocked_total_ns, 570 * MS);
	CHECK_U64(t->rows_runq_ns, 45 * MS);
	CHECK_U64(t->runq_ns, 50 * MS); /* schedstat is the ground truth */
	CHECK_U64(t->off_ns, 615 * MS);
	CHECK_U64(t->count, 11);
	/* 1000 = 300 + 50 + 570 + 80 */
	CHECK_U64(t->unaccounted_ns, 80 * MS);
	CHECK_U64(t->excess_ns, 0);
	CHECK_U64(t->oncpu_ns + t->runq_ns + t->blocked_total_ns + t->unaccounted_ns, t->wall_ns);
	/* 615 of the 700 ms the kernel saw off the CPU */
	CHECK(t->coverage > 0.8785 && t->coverage < 0.8786);
	CHECK_INT(budget_entry__top_reason(t), REASON_LOCK);
	/* more time on the run queue than in any one blocked reason: runqueue */
	{
		struct budget_entry e = *t;

		e.runq_ns = 600 * MS;
		CHECK_INT(budget_entry__top_reason(&e), REASON_RUNQUEUE);
	}
	CHECK_INT(b->nr_procs, 1);
	CHECK_U64(b->procs[0].unaccounted_ns, 80 * MS);
	CHECK_U64(b->total.wall_ns, 1000 * MS);
	budget__free(b);
	profile__free(f.p);
}

TEST(budget_excess_when_rows_claim_more_than_wall)
{
	struct fixture f;
	struct budget *b;
	struct profile_thread_time tt = {
		.wall_ns = 100 * MS, .oncpu_ns = 20 * MS, .runq_ns = 10 * MS};
	int th;

	CHECK(!fixture_init(&f));
	/* BCC-style: no run-queue split, so wakeup latency is in blocked too. */
	th = profile__thread(f.p, 0, 0, "bcc");
	add(f.p, th, f.lock, OFFCPU_STATE_UNKNOWN, 1, 75 * MS, 0);
	profile__set_thread_time(f.p, (uint32_t)th, &tt);
	b = budget__new(f.p);
	CHECK(b);
	CHECK_U64(b->threads[0].unaccounted_ns, 0);
	CHECK_U64(b->threads[0].excess_ns, 5 * MS);
	CHECK(b->threads[0].coverage == 75.0 / 80.0);
	budget__free(b);
	profile__free(f.p);
}

/* offcpu 3.78 s vs schedstat 3.60 s: coverage 1.05, shown as it is, with the excess. */
TEST(budget_overcount_keeps_coverage_above_one)
{
	struct fixture f;
	struct budget *b;
	struct profile_thread_time tt = {.wall_ns = 4000 * MS, .oncpu_ns = 400 * MS, .runq_ns = 0};
	int th;

	CHECK(!fixture_init(&f));
	profile__set_runq_known(f.p, true);
	th = profile__thread(f.p, 5, 5, "over");
	add(f.p, th, f.sleep, OFFCPU_STATE_SLEEP, 7, 3780 * MS, 0);
	profile__set_thread_time(f.p, (uint32_t)th, &tt);
	b = budget__new(f.p);
	CHECK(b);
	CHECK(b->threads[0].coverage > 1.0499 && b->threads[0].coverage < 1.0501);
	CHECK(b->total.coverage > 1.0499 && b->total.coverage < 1.0501);
	CHECK_U64(b->threads[0].excess_ns, 180 * MS);
	CHECK_U64(b->threads[0].unaccounted_ns, 0);
	budget__free(b);
	profile__free(f.p);
}

/*
 * The CPU's wake-ups from idle: the kernel's run, the rows' wait. Taken out
 * of on-CPU, the rows' 3,780 ms match the wall exactly (no overcount).
 */
TEST(budget_idle_exits_are_the_rows_wait_not_on_cpu)
{
	struct fixture f;
	struct budget *b;
	struct profile_thread_time tt = {
		.wall_ns = 4000 * MS, .oncpu_ns = 400 * MS, .runq_ns = 0, .idle_exit_ns = 180 * MS};
	int th;

	CHECK(!fixture_init(&f));
	profile__set_runq_known(f.p, true);
	th = profile__thread(f.p, 5, 5, "woken");
	add(f.p, th, f.sleep, OFFCPU_STATE_SLEEP, 7, 3780 * MS, 0);
	profile__set_thread_time(f.p, (uint32_t)th, &tt);
	b = budget__new(f.p);
	CHECK(b);
	CHECK_U64(b->threads[0].oncpu_ns, 220 * MS);
	CHECK_U64(b->threads[0].excess_ns, 0);
	CHECK_U64(b->threads[0].unaccounted_ns, 0);
	CHECK(b->threads[0].coverage == 1.0);
	CHECK_U64(b->total.oncpu_ns, 220 * MS);
	budget__free(b);
	profile__free(f.p);
}

TEST(budget_without_schedstat_says_only_what_rows_say)
{
	struct fixture f;
	struct budget *b;
	int a1, a2, c1;

	CHECK(!fixture_init(&f));
	/* Folded input: no pids, no run-queue split. */
	a1 = profile__thread(f.p, 0, 0, "app");
	c1 = profile__thread(f.p, 0, 0, "cron");
	add(f.p, a1, f.lock, OFFCPU_STATE_UNKNOWN, 3, 30 * MS, 0);
	add(f.p, a1, f.preempt, OFFCPU_STATE_UNKNOWN, 2, 7 * MS, 0);
	add(f.p, c1, f.sleep, OFFCPU_STATE_UNKNOWN, 1, 90 * MS, 0);
	/* The same comm with a pid is another process. */
	a2 = profile__thread(f.p, 42, 42, "app");
	add(f.p, a2, f.sleep, OFFCPU_STATE_UNKNOWN, 1, 5 * MS, 0);

	b = budget__new(f.p);
	CHECK(b);
	CHECK_INT(b->nr_threads, 3);
	CHECK_STR(b->threads[0].comm, "cron");
	CHECK(!b->threads[0].time_known);
	CHECK(b->threads[0].coverage < 0);
	CHECK_U64(b->threads[0].wall_ns, 0);
	CHECK_U64(b->threads[1].runq_ns, 7 * MS); /* preempted stacks are run-queue time */
	CHECK_U64(b->threads[1].blocked_ns[REASON_LOCK], 30 * MS);
	CHECK_U64(b->threads[1].unaccounted_ns, 0);
	CHECK_INT(b->nr_procs, 3);
	CHECK_STR(b->procs[0].comm, "cron");
	CHECK_STR(b->procs[1].comm, "app");
	CHECK_INT(b->procs[1].pid, 0);
	CHECK_U64(b->procs[1].off_ns, 37 * MS);
	CHECK_INT(b->procs[2].pid, 42);
	CHECK_U64(b->total.off_ns, 132 * MS);
	CHECK_U64(b->total.blocked_total_ns, 125 * MS);
	CHECK_U64(b->total.runq_ns, 7 * MS);
	CHECK_INT(b->total.nr_threads, 3);
	budget__free(b);
	profile__free(f.p);
}

TEST(budget_groups_threads_into_processes)
{
	struct fixture f;
	struct budget *b;
	struct profile_thread_time tt = {.wall_ns = 100 * MS, .oncpu_ns = 60 * MS, .runq_ns = 0};
	int t1, t2, t3;

	CHECK(!fixture_init(&f));
	profile__set_runq_known(f.p, true);
	t2 = profile__thread(f.p, 100, 101, "srv-io");
	t1 = profile__thread(f.p, 100, 100, "srv");
	t3 = profile__thread(f.p, 200, 200, "other");
	add(f.p, t1, f.lock, OFFCPU_STATE_SLEEP, 1, 10 * MS, 0);
	add(f.p, t2, f.sleep, OFFCPU_STATE_SLEEP, 1, 20 * MS, 0);
	add(f.p, t3, f.sleep, OFFCPU_STATE_SLEEP, 1, 25 * MS, 0);
	profile__set_thread_time(f.p, (uint32_t)t1, &tt);
	profile__set_thread_time(f.p, (uint32_t)t2, &tt);
	b = budget__new(f.p);
	CHECK(b);
	CHECK_INT(b->nr_procs, 2);
	CHECK_INT(b->procs[0].pid, 100);
	CHECK_STR(b->procs[0].comm, "srv"); /* the main thread's, though seen second */
	CHECK_INT(b->procs[0].nr_threads, 2);
	CHECK(b->procs[0].time_known);
	CHECK_U64(b->procs[0].wall_ns, 200 * MS);
	CHECK_U64(b->procs[0].unaccounted_ns, 200 * MS - 120 * MS - 30 * MS);
	CHECK(!b->procs[1].time_known);
	/* One thread lacks schedstat, so the total is not known either. */
	CHECK(!b->total.time_known);
	CHECK(b->total.coverage < 0);
	budget__free(b);
	budget__free(NULL);
	profile__free(f.p);
}

TEST(budget_thread_with_schedstat_but_no_rows_is_listed)
{
	struct fixture f;
	struct budget *b;
	struct profile_thread_time tt = {.wall_ns = 50 * MS, .oncpu_ns = 50 * MS, .runq_ns = 0};
	int th;

	CHECK(!fixture_init(&f));
	th = profile__thread(f.p, 7, 7, "cpu-bound");
	profile__set_thread_time(f.p, (uint32_t)th, &tt);
	b = budget__new(f.p);
	CHECK(b);
	CHECK_INT(b->nr_threads, 1);
	CHECK_U64(b->threads[0].unaccounted_ns, 0);
	CHECK(b->threads[0].coverage == 1.0);
	budget__free(b);
	profile__free(f.p);
}

int main(void)
{
	return unit_run();
}
