/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared by the export tests (pprof, speedscope, chrome trace, timeline): a
 * small profile whose numbers are known, built through the model's API, and a
 * golden-file check.
 *
 * The profile (20 intervals, 20.3 ms off the CPU, run-queue split known):
 *
 *   thread 0  server pid 100 tid 100
 *   thread 1  worker pid 100 tid 101
 *   stack  0  main;serve;read_request;-;entry_SYSCALL_64;do_syscall_64;
 *             __x64_sys_read;pipe_read;schedule;__schedule
 *   stack  1  main;worker_loop;pthread_cond_wait;-;entry_SYSCALL_64;
 *             do_syscall_64;__x64_sys_futex;futex_wait_queue;schedule;__schedule
 *   stack  2  main;serve;-;entry_SYSCALL_64;do_syscall_64;
 *             __x64_sys_nanosleep;do_nanosleep;schedule;__schedule
 *   stack  3  [Missed User Stack];-;irqentry_exit;preempt_schedule_irq;__schedule
 *
 *   row  thread stack state    count  off_ns      runq_ns
 *    0   0      0     sleep    10     5000000     100000
 *    1   1      1     sleep     4     12000000    50000
 *    2   0      2     sleep     2     2000000     0
 *    3   1      3     preempt   3     300000      300000
 *    4   0      0     disk      1     1000000     0
 *
 * fixture_timeline() below holds four intervals on those stacks.
 *
 * Golden files live in tests/data/exports/; OFFCPU_UPDATE_GOLDEN=1 rewrites
 * them from the current output (then review the diff).
 */
#ifndef OFFCPU_TESTS_EXPORTS_FIXTURE_H
#define OFFCPU_TESTS_EXPORTS_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/profile.h"
#include "model/timeline.h"
#include "output/timeline.h"
#include "parse/timeline.h"

#define FIXTURE_TOTAL_NS 20300000ull
#define FIXTURE_TOTAL_COUNT 20ull

/*
 * "u1;u2_[i];-;k1;k2": frames root first, '-' switches to kernel, "[Missed ..."
 * is missing, a "_[i]" suffix marks an inlined function.
 */
static inline int fixture_stack(struct profile *p, const char *folded)
{
	uint32_t ids[64];
	size_t n = 0;
	enum frame_kind kind = FRAME_USER;
	const char *s = folded;

	while (*s && n < 64) {
		const char *e = strchr(s, ';');
		size_t len = e ? (size_t)(e - s) : strlen(s);

		if (len == 1 && *s == '-') {
			kind = FRAME_KERNEL;
		} else if (len > 4 && !strncmp(s + len - 4, "_[i]", 4)) {
			int id = profile__frame(p, FRAME_INLINE, s, len - 4);

			if (id < 0)
				return id;
			ids[n++] = (uint32_t)id;
		} else {
			int id = profile__frame(p, !strncmp(s, "[Missed", 7) ? FRAME_MISSING : kind,
						s, len);
			if (id < 0)
				return id;
			ids[n++] = (uint32_t)id;
		}
		s = e ? e + 1 : s + len;
	}
	return profile__stack(p, ids, n);
}

static inline int fixture_row(struct profile *p, int pid, int tid, const char *comm,
			      const char *folded, enum offcpu_state st, uint64_t count,
			      uint64_t off_ns, uint64_t runq_ns)
{
	struct profile_weight w = {count, off_ns, runq_ns};
	int th = profile__thread(p, pid, tid, comm);
	int sk = fixture_stack(p, folded);

	if (th < 0 || sk < 0)
		return th < 0 ? th : sk;
	return profile__add(p, (uint32_t)th, (uint32_t)sk, st, &w);
}

#define FIXTURE_S0                                                                           \
	"main;serve;read_request;-;entry_SYSCALL_64;do_syscall_64;__x64_sys_read;pipe_read;" \
	"schedule;__schedule"
#define FIXTURE_S1                                                                             \
	"main;worker_loop;pthread_cond_wait;-;entry_SYSCALL_64;do_syscall_64;__x64_sys_futex;" \
	"futex_wait_queue;schedule;__schedule"
#define FIXTURE_S2                                                                      \
	"main;serve;-;entry_SYSCALL_64;do_syscall_64;__x64_sys_nanosleep;do_nanosleep;" \
	"schedule;__schedule"
#define FIXTURE_S3 "[Missed User Stack];-;irqentry_exit;preempt_schedule_irq;__schedule"

static inline struct profile *fixture_profile(void)
{
	struct profile *p = profile__new();

	if (!p)
		return NULL;
	if (fixture_row(p, 100, 100, "server", FIXTURE_S0, OFFCPU_STATE_SLEEP, 10, 5000000,
			100000) < 0 ||
	    fixture_row(p, 100, 101, "worker", FIXTURE_S1, OFFCPU_STATE_SLEEP, 4, 12000000, 50000) <
		    0 ||
	    fixture_row(p, 100, 100, "server", FIXTURE_S2, OFFCPU_STATE_SLEEP, 2, 2000000, 0) < 0 ||
	    fixture_row(p, 100, 101, "worker", FIXTURE_S3, OFFCPU_STATE_PREEMPT, 3, 300000,
			300000) < 0 ||
	    fixture_row(p, 100, 100, "server", FIXTURE_S0, OFFCPU_STATE_DISK, 1, 1000000, 0) < 0) {
		profile__free(p);
		return NULL;
	}
	profile__set_runq_known(p, true);
	return p;
}

/* An interval of pid 100. */
static inline struct timeline_interval fixture_iv(uint64_t start, uint64_t dur, uint64_t runq,
						  int tid, uint32_t stack, enum offcpu_state st,
						  int waker)
{
	return (struct timeline_interval){.start_ns = start,
					  .dur_ns = dur,
					  .runq_ns = runq,
					  .pid = 100,
					  .tid = tid,
					  .stack = stack,
					  .state = st,
					  .waker_tid = waker};
}

/*
 * Four intervals on the fixture's stacks, appended out of (tid, start) order:
 *
 *   idx tid  start_ns    dur_ns   runq_ns stack state   waker
 *    0  101  1000500000  2000000  50000   1     sleep   100
 *    1  100  1000000000  400000   1000    0     sleep   101
 *    2  101  1000450000  300000   300000  3     preempt 0     (runs 250 us into
 *                                                              idx 0: an overlap)
 *    3  100  1003000000  1000000  0       2     sleep   0
 */
static inline struct timeline *fixture_timeline(void)
{
	struct timeline *t = timeline__new();
	struct timeline_interval v[] = {
		fixture_iv(1000500000, 2000000, 50000, 101, 1, OFFCPU_STATE_SLEEP, 100),
		fixture_iv(1000000000, 400000, 1000, 100, 0, OFFCPU_STATE_SLEEP, 101),
		fixture_iv(1000450000, 300000, 300000, 101, 3, OFFCPU_STATE_PREEMPT, 0),
		fixture_iv(1003000000, 1000000, 0, 100, 2, OFFCPU_STATE_SLEEP, 0),
	};

	for (size_t i = 0; t && i < sizeof(v) / sizeof(v[0]); i++)
		if (timeline__append(t, &v[i])) {
			timeline__free(t);
			return NULL;
		}
	return t;
}

/* Run fn(out, arg) into a malloc'ed string (open_memstream); NULL on error, *err set. */
static inline char *fixture_capture(int (*fn)(FILE *, const void *), const void *arg, int *err,
				    size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	*err = f ? fn(f, arg) : -1;
	if (f)
		fclose(f);
	if (len)
		*len = n;
	if (*err) {
		free(buf);
		return NULL;
	}
	return buf;
}

/*
 * Compare text with tests/data/exports/NAME; rewrite it when
 * OFFCPU_UPDATE_GOLDEN=1. Returns NULL when equal, else a message (static).
 */
static inline const char *fixture_golden(const char *name, const char *text)
{
	static char why[1024];
	char path[512];
	char *want;

	snprintf(path, sizeof(path), "tests/data/exports/%s", name);
	if (getenv("OFFCPU_UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "w");

		if (!f || fputs(text, f) < 0 || fclose(f)) {
			snprintf(why, sizeof(why), "cannot write %s", path);
			return why;
		}
		return NULL;
	}
	want = unit_slurp(path);
	if (!want) {
		snprintf(why, sizeof(why), "missing golden %s (OFFCPU_UPDATE_GOLDEN=1 makes it)",
			 path);
		return why;
	}
	if (strcmp(want, text)) {
		size_t i = 0;

		while (want[i] && want[i] == text[i])
			i++;
		snprintf(why, sizeof(why), "%s differs at byte %zu: got \"%.40s\", want \"%.40s\"",
			 path, i, text + i, want + i);
		free(want);
		return why;
	}
	free(want);
	return NULL;
}

#endif
