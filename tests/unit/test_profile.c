// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>

#include "model/profile.h"
#include "unit.h"

/* A pointer to a weight literal, for profile__add(). */
#define WP(c, o, r) (&(struct profile_weight){.count = (c), .off_ns = (o), .runq_ns = (r)})

static struct profile_weight W(uint64_t count, uint64_t off, uint64_t runq) {
	return (struct profile_weight){.count = count, .off_ns = off, .runq_ns = runq};
}

TEST(profile_state_letters_and_names)
{
	CHECK_STR(offcpu_state__letter(OFFCPU_STATE_UNKNOWN), "?");
	CHECK_STR(offcpu_state__letter(OFFCPU_STATE_SLEEP), "S");
	CHECK_STR(offcpu_state__letter(OFFCPU_STATE_DISK), "D");
	CHECK_STR(offcpu_state__letter(OFFCPU_STATE_PREEMPT), "R");
	CHECK_STR(offcpu_state__letter(OFFCPU_STATE_OTHER), "O");
	CHECK_STR(offcpu_state__name(OFFCPU_STATE_UNKNOWN), "unknown");
	CHECK_STR(offcpu_state__name(OFFCPU_STATE_SLEEP), "sleep");
	CHECK_STR(offcpu_state__name(OFFCPU_STATE_DISK), "disk");
	CHECK_STR(offcpu_state__name(OFFCPU_STATE_PREEMPT), "preempt");
	CHECK_STR(offcpu_state__name(OFFCPU_STATE_OTHER), "other");
	CHECK_STR(offcpu_state__name(OFFCPU_STATE__COUNT), "unknown");
}

TEST(profile_interns_frames_by_kind_and_name)
{
	struct profile *p = profile__new();
	int a, b, c, d;

	CHECK(p);
	a = profile__frame(p, FRAME_KERNEL, "schedule+35", 8); /* not NUL-terminated at len */
	b = profile__frame(p, FRAME_KERNEL, "schedule", 8);
	c = profile__frame(p, FRAME_USER, "schedule", 8);
	d = profile__frame(p, FRAME_KERNEL, "schedul", 7);
	CHECK_INT(a, 0);
	CHECK_INT(b, 0);
	CHECK_INT(c, 1);
	CHECK_INT(d, 2);
	CHECK_INT(profile__nr_frames(p), 3);
	CHECK_STR(profile__frame_at(p, 0)->name, "schedule");
	CHECK_INT(profile__frame_at(p, 0)->kind, FRAME_KERNEL);
	CHECK_INT(profile__frame_at(p, 1)->kind, FRAME_USER);
	CHECK_STR(profile__frame_at(p, 2)->name, "schedul");
	CHECK(profile__frame_at(p, 3) == NULL);
	CHECK_INT(profile__frame(p, FRAME_USER, "", 0), -EINVAL);
	CHECK_INT(profile__frame(p, FRAME_USER, NULL, 3), -EINVAL);
	CHECK_INT(profile__nr_frames(p), 3);
	profile__free(p);
}

/* The prefetch hints take any id and change nothing. */
TEST(profile_prefetch_hints_change_nothing)
{
	struct profile *p = profile__new();
	uint32_t f[2];
	int s;

	CHECK(p);
	profile__prefetch(p, 0); /* no stacks yet */
	profile__prefetch_more(p, 0);
	f[0] = profile__frame(p, FRAME_USER, "a", 1);
	f[1] = profile__frame(p, FRAME_KERNEL, "b", 1);
	s = profile__stack(p, f, 2);
	profile__prefetch_more(p, s); /* no row yet */
	CHECK_INT(
		profile__add(p, profile__thread(p, 1, 1, "t"), s, OFFCPU_STATE_SLEEP, WP(1, 5, 0)),
		0);
	profile__prefetch(p, s);
	profile__prefetch_more(p, s);
	profile__prefetch(p, UINT32_MAX);
	profile__prefetch_more(p, 7);
	CHECK_INT(profile__nr_stacks(p), 1);
	CHECK_INT(profile__nr_rows(p), 1);
	CHECK_U64(profile__totals(p)->all.off_ns, 5);
	profile__free(p);
}

TEST(profile_interns_stacks_root_first)
{
	struct profile *p = profile__new();
	uint32_t f[3], rev[3];
	const uint32_t *got;
	size_t n = 99;
	int s1, s2, s3, s0;

	CHECK(p);
	f[0] = profile__frame(p, FRAME_USER, "main", 4);
	f[1] = profile__frame(p, FRAME_KERNEL, "do_syscall_64", 13);
	f[2] = profile__frame(p, FRAME_KERNEL, "schedule", 8);
	rev[0] = f[2], rev[1] = f[1], rev[2] = f[0];
	s1 = profile__stack(p, f, 3);
	s2 = profile__stack(p, f, 3);
	s3 = profile__stack(p, rev, 3);
	s0 = profile__stack(p, NULL, 0);
	CHECK_INT(s1, 0);
	CHECK_INT(s2, 0);
	CHECK_INT(s3, 1);
	CHECK_INT(s0, 2);
	CHECK_INT(profile__stack(p, f, 2), 3); /* a prefix is its own stack */
	got = profile__stack_at(p, 0, &n);
	CHECK_INT(n, 3);
	CHECK_INT(got[0], f[0]);
	CHECK_INT(got[2], f[2]);
	got = profile__stack_at(p, 2, &n);
	CHECK(got != NULL);
	CHECK_INT(n, 0);
	CHECK(profile__stack_at(p, 4, &n) == NULL);
	rev[1] = 77; /* no such frame */
	CHECK_INT(profile__stack(p, rev, 3), -EINVAL);
	CHECK_INT(profile__nr_stacks(p), 4);
	profile__free(p);
}

TEST(profile_interns_threads_by_pid_tid_comm)
{
	struct profile *p = profile__new();

	CHECK(p);
	CHECK_INT(profile__thread(p, 10, 11, "sleep"), 0);
	CHECK_INT(profile__thread(p, 10, 11, "sleep"), 0);
	CHECK_INT(profile__thread(p, 10, 12, "sleep"), 1);
	CHECK_INT(profile__thread(p, 10, 11, "sleeper"), 2);
	CHECK_INT(profile__thread(p, 0, 0, NULL), 3);
	CHECK_INT(profile__thread(p, 0, 0, ""), 3);
	CHECK_STR(profile__thread_at(p, 3)->comm, "");
	CHECK_INT(profile__thread_at(p, 1)->tid, 12);
	CHECK_INT(profile__thread_at(p, 1)->pid, 10);
	CHECK(profile__thread_at(p, 4) == NULL);
	profile__free(p);
}

TEST(profile_add_sums_same_row_and_totals)
{
	struct profile *p = profile__new();
	struct profile_weight w1 = W(1, 100, 10), w2 = W(2, 50, 50);
	const struct profile_totals *t;
	const struct profile_row *r;
	int th, st;

	CHECK(p);
	th = profile__thread(p, 1, 1, "a");
	st = profile__stack(p, NULL, 0);
	CHECK_INT(profile__add(p, th, st, OFFCPU_STATE_SLEEP, &w1), 0);
	CHECK_INT(profile__add(p, th, st, OFFCPU_STATE_SLEEP, &w2), 0);
	CHECK_INT(profile__add(p, th, st, OFFCPU_STATE_PREEMPT, &w2), 0);
	CHECK_INT(profile__nr_rows(p), 2);
	r = profile__row_at(p, 0);
	CHECK_INT(r->state, OFFCPU_STATE_SLEEP);
	CHECK_U64(r->w.count, 3);
	CHECK_U64(r->w.off_ns, 150);
	CHECK_U64(r->w.runq_ns, 60);
	CHECK_INT(profile__row_at(p, 1)->state, OFFCPU_STATE_PREEMPT);
	CHECK(profile__row_at(p, 2) == NULL);
	t = profile__totals(p);
	CHECK_U64(t->all.count, 5);
	CHECK_U64(t->all.off_ns, 200);
	CHECK_U64(t->all.runq_ns, 110);
	CHECK_U64(t->by_state[OFFCPU_STATE_SLEEP].off_ns, 150);
	CHECK_U64(t->by_state[OFFCPU_STATE_PREEMPT].off_ns, 50);
	CHECK_U64(t->by_state[OFFCPU_STATE_DISK].count, 0);
	profile__free(p);
}

/* Adds right after interning a stack take a shortcut; it must find the same rows. */
TEST(profile_add_after_stack_finds_the_right_row)
{
	struct profile *p = profile__new();
	uint32_t f[1];
	int a, b;

	CHECK(p);
	f[0] = profile__frame(p, FRAME_USER, "f", 1);
	CHECK_INT(profile__thread(p, 1, 1, "t0"), 0);
	CHECK_INT(profile__thread(p, 1, 2, "t1"), 1);
	a = profile__stack(p, f, 1);
	CHECK_INT(profile__add(p, 0, a, OFFCPU_STATE_SLEEP, WP(1, 1, 0)), 0);
	CHECK_INT(profile__add(p, 1, a, OFFCPU_STATE_SLEEP, WP(1, 2, 0)), 0);
	CHECK_INT(profile__add(p, 0, a, OFFCPU_STATE_SLEEP, WP(1, 4, 0)), 0);
	CHECK_INT(profile__add(p, 0, a, OFFCPU_STATE_DISK, WP(1, 8, 0)), 0);
	b = profile__stack(p, NULL, 0);
	CHECK_INT(profile__add(p, 0, b, OFFCPU_STATE_SLEEP, WP(1, 16, 0)), 0);
	/* a stack id other than the one just interned */
	CHECK_INT(profile__add(p, 1, a, OFFCPU_STATE_SLEEP, WP(1, 32, 0)), 0);
	CHECK_INT(profile__stack(p, f, 1), a);
	CHECK_INT(profile__add(p, 0, a, OFFCPU_STATE_SLEEP, WP(1, 64, 0)), 0);
	CHECK_INT(profile__add(p, 0, a, OFFCPU_STATE_DISK, WP(1, 128, 0)), 0);
	CHECK_INT(profile__nr_rows(p), 4);
	CHECK_U64(profile__row_at(p, 0)->w.off_ns, 1 + 4 + 64);
	CHECK_U64(profile__row_at(p, 1)->w.off_ns, 2 + 32);
	CHECK_U64(profile__row_at(p, 2)->w.off_ns, 8 + 128);
	CHECK_U64(profile__row_at(p, 3)->w.off_ns, 16);
	CHECK_INT(profile__row_at(p, 3)->stack, b);
	profile__free(p);
}

/*
 * A stack's first row is kept out of the row table until a second comes (most
 * stacks have one): rows that come back after others on the same stack, in
 * any order across stacks, are still summed into one row each, and no row is
 * made twice.
 */
TEST(profile_add_rows_of_one_and_many_per_stack_sum_once)
{
	enum { STACKS = 300, THREADS = 5 };
	static uint64_t want[STACKS][THREADS][2];
	struct profile *p = profile__new();
	size_t rows = 0;
	uint32_t f;

	CHECK(p);
	f = profile__frame(p, FRAME_USER, "f", 1);
	for (int t = 0; t < THREADS; t++)
		CHECK_INT(profile__thread(p, 1, t + 1, "t"), t);
	for (uint32_t s = 0; s < STACKS; s++) {
		uint32_t fr[2] = {f, s};

		if (s)
			CHECK_INT(profile__frame(p, FRAME_USER,
						 (char[]){'a' + s % 26, 'a' + s / 26}, 2),
				  (int)s);
		CHECK_INT(profile__stack(p, fr, s ? 2 : 1), (int)s);
	}
	/* Stack s has s % 4 + 1 row keys: rounds revisit the first after later ones. */
	for (int round = 0; round < 6; round++) {
		for (uint32_t s = 0; s < STACKS; s++) {
			int keys = s % 4 + 1, k = (round * 3 + s) % keys;
			int th = k % 2 + s % 3, st = k / 2;
			uint64_t v = 1 + round * STACKS + s;

			CHECK_INT(profile__add(p, th, s,
					       st ? OFFCPU_STATE_DISK : OFFCPU_STATE_SLEEP,
					       WP(1, v, 0)),
				  0);
			want[s][th][st] += v;
		}
	}
	for (uint32_t s = 0; s < STACKS; s++)
		for (int k = 0; k < THREADS * 2; k++)
			rows += want[s][k % THREADS][k / THREADS] != 0;
	CHECK_INT(profile__nr_rows(p), rows);
	for (size_t i = 0; i < profile__nr_rows(p); i++) {
		const struct profile_row *r = profile__row_at(p, i);
		int st = r->state == OFFCPU_STATE_DISK;

		if (r->w.off_ns != want[r->stack][r->thread][st]) {
			CHECK_U64(r->w.off_ns, want[r->stack][r->thread][st]);
			break;
		}
		want[r->stack][r->thread][st] = 0; /* a second row of the same key would fail */
	}
	profile__free(p);
}

TEST(profile_add_rejects_bad_ids_and_weights)
{
	struct profile *p = profile__new();
	struct profile_weight ok = W(1, 10, 0), bad = W(1, 10, 11);

	CHECK(p);
	CHECK_INT(profile__thread(p, 1, 1, "a"), 0);
	CHECK_INT(profile__stack(p, NULL, 0), 0);
	CHECK_INT(profile__add(p, 1, 0, OFFCPU_STATE_SLEEP, &ok), -EINVAL);
	CHECK_INT(profile__add(p, 0, 1, OFFCPU_STATE_SLEEP, &ok), -EINVAL);
	CHECK_INT(profile__add(p, 0, 0, OFFCPU_STATE__COUNT, &ok), -EINVAL);
	CHECK_INT(profile__add(p, 0, 0, OFFCPU_STATE_SLEEP, &bad), -EINVAL);
	CHECK_INT(profile__add(p, 0, 0, OFFCPU_STATE_SLEEP, NULL), -EINVAL);
	CHECK_INT(profile__nr_rows(p), 0);
	CHECK_U64(profile__totals(p)->all.count, 0);
	profile__free(p);
}

TEST(profile_add_overflow_changes_nothing)
{
	struct profile *p = profile__new();
	struct profile_weight big = W(1, UINT64_MAX - 5, 0), more = W(1, 6, 0);
	struct profile_weight cnt = W(UINT64_MAX, 0, 0);

	CHECK(p);
	CHECK_INT(profile__thread(p, 1, 1, "a"), 0);
	CHECK_INT(profile__thread(p, 2, 2, "b"), 1);
	CHECK_INT(profile__stack(p, NULL, 0), 0);
	CHECK_INT(profile__add(p, 0, 0, OFFCPU_STATE_SLEEP, &big), 0);
	/* A new row whose own weight fits but whose total would wrap is refused too. */
	CHECK_INT(profile__add(p, 1, 0, OFFCPU_STATE_DISK, &more), -EOVERFLOW);
	CHECK_INT(profile__add(p, 0, 0, OFFCPU_STATE_SLEEP, &more), -EOVERFLOW);
	CHECK_INT(profile__add(p, 0, 0, OFFCPU_STATE_SLEEP, &cnt), -EOVERFLOW);
	CHECK_INT(profile__nr_rows(p), 1);
	CHECK_U64(profile__row_at(p, 0)->w.off_ns, UINT64_MAX - 5);
	CHECK_U64(profile__row_at(p, 0)->w.count, 1);
	CHECK_U64(profile__totals(p)->all.off_ns, UINT64_MAX - 5);
	CHECK_U64(profile__totals(p)->by_state[OFFCPU_STATE_DISK].off_ns, 0);
	more.off_ns = 5;
	CHECK_INT(profile__add(p, 1, 0, OFFCPU_STATE_DISK, &more), 0);
	CHECK_U64(profile__totals(p)->all.off_ns, UINT64_MAX);
	profile__free(p);
}

TEST(profile_thread_time_and_runq_flag)
{
	struct profile *p = profile__new();
	struct profile_thread_time tt = {.wall_ns = 1000, .oncpu_ns = 300, .runq_ns = 20};
	const struct profile_thread_time *got;

	CHECK(p);
	CHECK(!profile__runq_known(p));
	profile__set_runq_known(p, true);
	CHECK(profile__runq_known(p));
	CHECK_INT(profile__thread(p, 1, 1, "a"), 0);
	CHECK_INT(profile__thread(p, 1, 2, "a"), 1);
	CHECK(profile__thread_time(p, 0) == NULL);
	CHECK_INT(profile__set_thread_time(p, 1, &tt), 0);
	CHECK_INT(profile__set_thread_time(p, 2, &tt), -EINVAL);
	CHECK(profile__thread_time(p, 0) == NULL);
	CHECK(profile__thread_time(p, 2) == NULL);
	got = profile__thread_time(p, 1);
	CHECK(got);
	CHECK_U64(got->wall_ns, 1000);
	CHECK_U64(got->oncpu_ns, 300);
	CHECK_U64(got->runq_ns, 20);
	profile__free(p);
}

TEST(profile_sum_by_stack_sorted_with_top_thread)
{
	struct profile *p = profile__new();
	struct profile_stack_sum *s;
	uint32_t f[2];
	size_t n;
	int sa, sb, sc, sd;

	CHECK(p);
	f[0] = profile__frame(p, FRAME_USER, "a", 1);
	f[1] = profile__frame(p, FRAME_USER, "b", 1);
	sa = profile__stack(p, f, 1);
	sb = profile__stack(p, f + 1, 1);
	sc = profile__stack(p, f, 2);
	sd = profile__stack(p, NULL, 0); /* no rows: not in the output */
	CHECK_INT(profile__thread(p, 1, 1, "t1"), 0);
	CHECK_INT(profile__thread(p, 1, 2, "t2"), 1);
	CHECK_INT(profile__thread(p, 1, 3, "t3"), 2);
	/* stack a: t1 40 (two states), t2 30 -> 70, top t1 */
	CHECK_INT(profile__add(p, 0, sa, OFFCPU_STATE_SLEEP, WP(1, 20, 0)), 0);
	CHECK_INT(profile__add(p, 1, sa, OFFCPU_STATE_SLEEP, WP(1, 30, 0)), 0);
	CHECK_INT(profile__add(p, 0, sa, OFFCPU_STATE_DISK, WP(1, 20, 0)), 0);
	/* stack b: 70 too, so it sorts after a by id; t3 and t2 tie at 35 -> lower id t2 */
	CHECK_INT(profile__add(p, 2, sb, OFFCPU_STATE_SLEEP, WP(1, 35, 0)), 0);
	CHECK_INT(profile__add(p, 1, sb, OFFCPU_STATE_SLEEP, WP(1, 35, 0)), 0);
	/* stack c: 100 */
	CHECK_INT(profile__add(p, 2, sc, OFFCPU_STATE_PREEMPT, WP(4, 100, 100)), 0);
	CHECK_INT(profile__sum_by_stack(p, &s, &n), 0);
	CHECK_INT(n, 3);
	CHECK_INT(s[0].stack, sc);
	CHECK_U64(s[0].w.off_ns, 100);
	CHECK_U64(s[0].w.runq_ns, 100);
	CHECK_U64(s[0].w.count, 4);
	CHECK_INT(s[0].thread, 2);
	CHECK_INT(s[1].stack, sa);
	CHECK_U64(s[1].w.off_ns, 70);
	CHECK_U64(s[1].w.count, 3);
	CHECK_INT(s[1].thread, 0);
	CHECK_INT(s[2].stack, sb);
	CHECK_INT(s[2].thread, 1);
	CHECK(sd == 3);
	free(s);
	profile__free(p);
}

/* A stack that merges threads of two processes (and of two unnamed ones) names them all. */
/*
 * Thousands of stacks (sorted another way than a few): off_ns descending,
 * ties by stack id ascending, each stack with rows once, and its sums and
 * top thread carried along. Values differ in every byte and tie often.
 */
TEST(profile_sum_by_stack_sorts_many_stacks_with_ties)
{
	enum { STACKS = 5000 };
	static uint64_t want[STACKS];
	static bool seen[STACKS];
	struct profile *p = profile__new();
	struct profile_stack_sum *s;
	size_t n, nwant = 0;
	uint32_t f[2];

	CHECK(p);
	f[0] = profile__frame(p, FRAME_USER, "root", 4);
	CHECK_INT(profile__thread(p, 1, 1, "t1"), 0);
	CHECK_INT(profile__thread(p, 1, 2, "t2"), 1);
	for (uint32_t i = 0; i < STACKS; i++) {
		char name[16];
		int len = snprintf(name, sizeof(name), "s%u", i);
		/* 61 values spread over six bytes (the sum stays below 2^64): ties are many */
		uint64_t v = (uint64_t)(i * 7919u % 61) * 0x102040810204ULL + 1;

		f[1] = profile__frame(p, FRAME_USER, name, len);
		CHECK_INT(profile__stack(p, f, 2), (int)i);
		if (i % 7 == 3)
			continue; /* a stack without rows is not in the sums */
		/* The thread with the time has the smaller count: off_ns picks it. */
		CHECK_INT(profile__add(p, i % 2, i, OFFCPU_STATE_SLEEP, WP(1, v, 0)), 0);
		CHECK_INT(profile__add(p, 1 - i % 2, i, OFFCPU_STATE_SLEEP, WP(2, 0, 0)), 0);
		want[i] = v;
		nwant++;
	}
	CHECK_INT(profile__sum_by_stack(p, &s, &n), 0);
	CHECK_INT(n, nwant);
	for (size_t i = 0; i < n; i++) {
		uint32_t st = s[i].stack;
		bool ok = st < STACKS && !seen[st] && want[st] && s[i].w.off_ns == want[st] &&
			  s[i].w.count == 3 && s[i].thread == st % 2;

		if (ok && i)
			ok = s[i - 1].w.off_ns > s[i].w.off_ns ||
			     (s[i - 1].w.off_ns == s[i].w.off_ns && s[i - 1].stack < st);
		if (!ok) {
			CHECK(!"a stack sum out of order, twice or wrong");
			break;
		}
		seen[st] = true;
	}
	free(s);
	profile__free(p);
}

TEST(profile_stack_threads_counts_threads_and_processes)
{
	struct profile *p = profile__new();
	struct profile_stack_threads *st;
	uint32_t f[1], ask[4];
	int sa, sb, sc;

	CHECK(p);
	f[0] = profile__frame(p, FRAME_KERNEL, "futex_do_wait", 13);
	sa = profile__stack(p, f, 1);
	sb = profile__stack(p, NULL, 0);
	sc = profile__stack(p, (uint32_t[]){f[0], f[0]}, 2);
	CHECK_INT(profile__thread(p, 10, 10, "app"), 0);
	CHECK_INT(profile__thread(p, 10, 11, "app"), 1);
	CHECK_INT(profile__thread(p, 10, 12, "app"), 2);
	CHECK_INT(profile__thread(p, 20, 20, "other"), 3);
	CHECK_INT(profile__thread(p, 0, 0, "x"), 4);
	CHECK_INT(profile__thread(p, 0, 0, "y"), 5);
	/* stack a: 11 has 50 (two rows), 12 40, 10 40 with more count, 20 5, the unnamed 1 + 1 */
	CHECK_INT(profile__add(p, 1, sa, OFFCPU_STATE_SLEEP, WP(1, 30, 0)), 0);
	CHECK_INT(profile__add(p, 2, sa, OFFCPU_STATE_SLEEP, WP(1, 40, 0)), 0);
	CHECK_INT(profile__add(p, 0, sa, OFFCPU_STATE_SLEEP, WP(3, 40, 0)), 0);
	CHECK_INT(profile__add(p, 3, sa, OFFCPU_STATE_SLEEP, WP(1, 5, 0)), 0);
	CHECK_INT(profile__add(p, 1, sa, OFFCPU_STATE_DISK, WP(1, 20, 5)), 0);
	CHECK_INT(profile__add(p, 4, sa, OFFCPU_STATE_SLEEP, WP(1, 1, 0)), 0);
	CHECK_INT(profile__add(p, 5, sa, OFFCPU_STATE_SLEEP, WP(1, 1, 0)), 0);
	/* stack c: one thread */
	CHECK_INT(profile__add(p, 3, sc, OFFCPU_STATE_SLEEP, WP(1, 7, 0)), 0);
	ask[0] = sc;
	ask[1] = sa;
	ask[2] = sb; /* no rows */
	ask[3] = sa; /* asked twice */
	CHECK_INT(profile__stack_threads(p, ask, 4, 3, &st), 0);
	CHECK_INT(st[0].stack, sc);
	CHECK_INT(st[0].nr_threads, 1);
	CHECK_INT(st[0].nr_procs, 1);
	CHECK_INT(st[0].nr_top, 1);
	CHECK_INT(st[0].top[0].thread, 3);
	CHECK_U64(st[0].top[0].w.off_ns, 7);
	CHECK_INT(st[1].nr_threads, 6);
	CHECK_INT(st[1].nr_procs, 4); /* pid 10, pid 20, and x and y by comm */
	CHECK_INT(st[1].nr_top, 3);
	CHECK_INT(st[1].top[0].thread, 1);
	CHECK_U64(st[1].top[0].w.off_ns, 50);
	CHECK_U64(st[1].top[0].w.runq_ns, 5);
	CHECK_U64(st[1].top[0].w.count, 2);
	CHECK_INT(st[1].top[1].thread, 0); /* 40 as 12, but more intervals */
	CHECK_INT(st[1].top[2].thread, 2);
	CHECK_INT(st[2].nr_threads, 0);
	CHECK_INT(st[2].nr_procs, 0);
	CHECK_INT(st[2].nr_top, 0);
	CHECK_INT(st[3].nr_threads, 6);
	CHECK_INT(st[3].top[0].thread, 1);
	free(st);
	ask[0] = 99;
	CHECK_INT(profile__stack_threads(p, ask, 1, 3, &st), -EINVAL);
	CHECK(st == NULL);
	profile__free(p);
}

TEST(profile_sum_by_thread_sorted)
{
	struct profile *p = profile__new();
	struct profile_thread_sum *s;
	size_t n;
	int st;

	CHECK(p);
	st = profile__stack(p, NULL, 0);
	CHECK_INT(profile__thread(p, 1, 1, "idle"), 0); /* no rows */
	CHECK_INT(profile__thread(p, 1, 2, "x"), 1);
	CHECK_INT(profile__thread(p, 1, 3, "y"), 2);
	CHECK_INT(profile__thread(p, 1, 4, "z"), 3);
	CHECK_INT(profile__add(p, 3, st, OFFCPU_STATE_SLEEP, WP(1, 5, 0)), 0);
	CHECK_INT(profile__add(p, 2, st, OFFCPU_STATE_SLEEP, WP(1, 9, 0)), 0);
	CHECK_INT(profile__add(p, 1, st, OFFCPU_STATE_SLEEP, WP(1, 4, 0)), 0);
	CHECK_INT(profile__add(p, 1, st, OFFCPU_STATE_DISK, WP(2, 5, 0)), 0);
	CHECK_INT(profile__sum_by_thread(p, &s, &n), 0);
	CHECK_INT(n, 3);
	CHECK_INT(s[0].thread, 1); /* 9, tie with thread 2, lower id first */
	CHECK_U64(s[0].w.count, 3);
	CHECK_INT(s[1].thread, 2);
	CHECK_INT(s[2].thread, 3);
	free(s);
	profile__free(p);
}

TEST(profile_empty_sums)
{
	struct profile *p = profile__new();
	struct profile_stack_sum *ss = (void *)1;
	struct profile_thread_sum *ts = (void *)1;
	size_t n = 5;

	CHECK(p);
	CHECK_INT(profile__sum_by_stack(p, &ss, &n), 0);
	CHECK_INT(n, 0);
	free(ss);
	CHECK_INT(profile__sum_by_thread(p, &ts, &n), 0);
	CHECK_INT(n, 0);
	free(ts);
	profile__free(p);
	profile__free(NULL);
}

/* Pointers handed out earlier must survive the growth of every table. */
TEST(profile_pointers_stable_and_ids_dense_at_scale)
{
	struct profile *p = profile__new();
	const struct profile_frame *f0;
	const struct profile_thread *t0;
	const struct profile_row *r0;
	const uint32_t *s0;
	char name[32];
	uint32_t fr[4];
	size_t n;

	CHECK(p);
	f0 = profile__frame_at(p, profile__frame(p, FRAME_KERNEL, "first", 5));
	t0 = profile__thread_at(p, profile__thread(p, 1, 1, "first"));
	fr[0] = 0;
	s0 = profile__stack_at(p, profile__stack(p, fr, 1), &n);
	CHECK_INT(profile__add(p, 0, 0, OFFCPU_STATE_SLEEP, WP(1, 1, 0)), 0);
	r0 = profile__row_at(p, 0);
	for (int i = 1; i < 200000; i++) {
		int len = snprintf(name, sizeof(name), "fn_%d", i);
		int id = profile__frame(p, FRAME_USER, name, len);

		CHECK_INT(id, i);
		fr[0] = 0, fr[1] = id, fr[2] = i % 7, fr[3] = i % 3;
		CHECK_INT(profile__stack(p, fr, 4), i);
		CHECK_INT(profile__thread(p, i, i, name), i);
		CHECK_INT(profile__add(p, i, i, OFFCPU_STATE_SLEEP, WP(1, 2, 1)), 0);
	}
	for (int i = 1; i < 200000; i += 997) {
		int len = snprintf(name, sizeof(name), "fn_%d", i);

		CHECK_INT(profile__frame(p, FRAME_USER, name, len), i);
		CHECK_STR(profile__thread_at(p, i)->comm, name);
	}
	CHECK_STR(f0->name, "first");
	CHECK_STR(t0->comm, "first");
	CHECK_INT(s0[0], 0);
	CHECK_U64(r0->w.off_ns, 1);
	CHECK_INT(profile__nr_rows(p), 200000);
	CHECK_U64(profile__totals(p)->all.off_ns, 1 + 2 * 199999ULL);
	profile__free(p);
}

TEST(profile_long_names_are_kept_whole)
{
	struct profile *p = profile__new();
	size_t len = 1 << 20;
	char *big = malloc(len);
	int id;

	CHECK(p && big);
	memset(big, 'x', len);
	id = profile__frame(p, FRAME_USER, big, len);
	CHECK_INT(id, 0);
	CHECK_INT(profile__frame(p, FRAME_USER, "small", 5), 1);
	CHECK_INT(profile__frame(p, FRAME_USER, big, len), 0);
	CHECK_INT(strlen(profile__frame_at(p, 0)->name), len);
	CHECK_STR(profile__frame_at(p, 1)->name, "small");
	free(big);
	profile__free(p);
}

int main(void)
{
	return unit_run();
}
