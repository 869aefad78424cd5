/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The profile: what every collector and parser fills and every writer reads.
 *
 * A profile interns three kinds of things and keeps weights on their product:
 *
 *   frame   (kind, name)                 e.g. (KERNEL, "schedule"), (USER, "main")
 *   stack   sequence of frame ids, ROOT FIRST: user frames outermost..innermost,
 *           then kernel frames outermost..innermost (the order of a folded line
 *           after the comm, without the "-" separator: a frame's kind says it)
 *   thread  (pid, tid, comm); pid = tid = 0 when a collector does not say
 *           (folded input carries only the comm)
 *
 *   row     (thread, stack, state) -> { count, off_ns, runq_ns }
 *
 * off_ns is the whole time off the CPU (switch-out to switch-in). runq_ns is the
 * part of it spent runnable but waiting for a CPU (wakeup to switch-in, or all of
 * it for a preempted thread); blocked time is off_ns - runq_ns. Collectors that
 * cannot split (BCC, bpftrace) leave runq_ns at 0 and the profile's runq_known
 * false, so nobody reads their runq 0 as "no run-queue wait".
 *
 * Adding the same (thread, stack, state) twice sums into one row. Ids are dense,
 * start at 0 and are stable for the profile's life; pointers returned by the
 * accessors stay valid until profile__free(). No I/O happens here.
 *
 * Errors: functions returning int give an id/0 on success or -errno:
 * -ENOMEM, -EINVAL (bad id, empty name, state out of range, runq_ns > off_ns),
 * -EOVERFLOW (a weight or total would wrap 64 bits, or ids ran out; nothing is
 * changed then).
 */
#ifndef OFFCPU_MODEL_PROFILE_H
#define OFFCPU_MODEL_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum frame_kind {
	FRAME_USER = 0,
	FRAME_KERNEL,
	/*
	 * A placeholder the collector put where it could not walk the stack,
	 * e.g. BCC's "[Missed User Stack]"; kept so the time stays visible.
	 */
	FRAME_MISSING,
	/*
	 * A user function that the compiler inlined: no frame of its own on
	 * the machine stack. Its caller is the frame before it (root first),
	 * a FRAME_USER or another FRAME_INLINE; it counts as a user frame.
	 */
	FRAME_INLINE,
	FRAME__COUNT,
};

/* Frames of user code, physical or inlined. */
static inline bool frame_kind__is_user(enum frame_kind k)
{
	return k == FRAME_USER || k == FRAME_INLINE;
}

/*
 * The kind's word as the JSON outputs write it ("user", "kernel", "missing",
 * "inline") and its letter as profile.txt writes it ('u', 'k', 'm', 'i').
 * Out of range: "user", 'u'. frame_kind__from_letter() returns -EINVAL for a
 * letter that is none of those.
 */
const char *frame_kind__name(enum frame_kind k);
char frame_kind__letter(enum frame_kind k);
int frame_kind__from_letter(char c, enum frame_kind *k);
int frame_kind__from_name(const char *name, enum frame_kind *k);

/* Why the thread was off the CPU, from prev_state at switch-out. */
enum offcpu_state {
	OFFCPU_STATE_UNKNOWN = 0, /* the collector does not say */
	OFFCPU_STATE_SLEEP,	  /* S: voluntary, interruptible sleep */
	OFFCPU_STATE_DISK,	  /* D: uninterruptible (I/O, some locks) */
	OFFCPU_STATE_PREEMPT,	  /* R: involuntarily preempted, runnable throughout */
	OFFCPU_STATE_OTHER,	  /* stopped, traced, dead, parked, ... */
	OFFCPU_STATE__COUNT,
};

/* One-letter and word names: "?"/"unknown", "S"/"sleep", "D"/"disk", "R"/"preempt", "O"/"other". */
const char *offcpu_state__letter(enum offcpu_state s);
const char *offcpu_state__name(enum offcpu_state s);

struct profile_frame {
	const char *name; /* NUL-terminated, owned by the profile */
	enum frame_kind kind;
};

struct profile_thread {
	int pid; /* tgid; 0 when unknown */
	int tid; /* 0 when unknown */
	const char *comm;
};

struct profile_weight {
	uint64_t count;	  /* number of off-CPU intervals */
	uint64_t off_ns;  /* total off-CPU time */
	uint64_t runq_ns; /* part of off_ns spent runnable (<= off_ns) */
};

struct profile_row {
	uint32_t thread;
	uint32_t stack;
	enum offcpu_state state;
	struct profile_weight w;
};

struct profile_totals {
	struct profile_weight all;
	struct profile_weight by_state[OFFCPU_STATE__COUNT];
};

struct profile;

struct profile *profile__new(void);
void profile__free(struct profile *p);

/* Intern a frame; name need not be NUL-terminated. Returns the frame id. */
int profile__frame(struct profile *p, enum frame_kind kind, const char *name, size_t len);
/* Intern a stack of frame ids (root first; n may be 0). Returns the stack id. */
int profile__stack(struct profile *p, const uint32_t *frames, size_t n);
/* Intern a thread. comm may be NULL (stored as ""). Returns the thread id. */
int profile__thread(struct profile *p, int pid, int tid, const char *comm);
/*
 * Hints for a caller that knows which stack comes next (the folded parser's
 * line cache), so that memory latency overlaps its work; neither changes the
 * profile, and a bad id is ignored. profile__prefetch() starts fetching the
 * stack's record; some work later, profile__prefetch_more() reads it (in
 * cache by then) and starts fetching what adding to it (profile__add())
 * reads next.
 */
void profile__prefetch(const struct profile *p, uint32_t stack);
void profile__prefetch_more(const struct profile *p, uint32_t stack);
/* Add weight to the row (thread, stack, state); creates it if new. */
int profile__add(struct profile *p, uint32_t thread, uint32_t stack, enum offcpu_state state,
		 const struct profile_weight *w);

/*
 * Independent per-thread accounting (kernel schedstat: on-CPU and run-queue
 * time; wall time from the thread's start to its exit or the end of the
 * capture), for the cross-check of what the rows account for. Optional.
 */
struct profile_thread_time {
	uint64_t wall_ns;
	uint64_t oncpu_ns;
	uint64_t runq_ns;
	/*
	 * Of oncpu_ns: the CPU's wake-ups from idle before the thread ran,
	 * which the kernel counts as its run and its rows as its wait (0: none,
	 * or not known). At most oncpu_ns.
	 */
	uint64_t idle_exit_ns;
};
int profile__set_thread_time(struct profile *p, uint32_t thread,
			     const struct profile_thread_time *t);
/* NULL when none was set for this thread. */
const struct profile_thread_time *profile__thread_time(const struct profile *p, uint32_t thread);
/* t's on-CPU time that its rows do not count as waits: oncpu_ns less idle_exit_ns. */
uint64_t profile_thread_time__ran_ns(const struct profile_thread_time *t);

/* Whether the collector split run-queue time from blocked time. */
void profile__set_runq_known(struct profile *p, bool known);
bool profile__runq_known(const struct profile *p);

size_t profile__nr_frames(const struct profile *p);
size_t profile__nr_stacks(const struct profile *p);
size_t profile__nr_threads(const struct profile *p);
size_t profile__nr_rows(const struct profile *p);

const struct profile_frame *profile__frame_at(const struct profile *p, uint32_t id);
const uint32_t *profile__stack_at(const struct profile *p, uint32_t id, size_t *n);
const struct profile_thread *profile__thread_at(const struct profile *p, uint32_t id);
/* Rows in insertion order; idx < profile__nr_rows(). */
const struct profile_row *profile__row_at(const struct profile *p, size_t idx);
const struct profile_totals *profile__totals(const struct profile *p);

/*
 * Aggregations for writers. Each fills a caller-freed array (free()) sorted by
 * off_ns descending, ties broken by id ascending so output is deterministic.
 * Only stacks/threads that have at least one row appear. On error *out is NULL
 * and *n is 0.
 */
struct profile_stack_sum {
	uint32_t stack;
	struct profile_weight w;
	/* The thread with most off_ns on this stack (then most count, then lowest id). */
	uint32_t thread;
};
struct profile_thread_sum {
	uint32_t thread;
	struct profile_weight w;
};
int profile__sum_by_stack(const struct profile *p, struct profile_stack_sum **out, size_t *n);
int profile__sum_by_thread(const struct profile *p, struct profile_thread_sum **out, size_t *n);

/*
 * Who is on a stack that merges several threads, for the writers that label
 * a stack line with them. For each of stacks[0..nr) (ids, any order), in that
 * order: how many threads have rows on it, how many processes those are (by
 * pid; threads of pid 0, whose pid the collector did not say, by comm, as the
 * budget groups them), and up to max of the threads with their weight on that
 * stack, most off_ns first (then most count, then lowest id: top[0] is
 * profile__sum_by_stack()'s thread). A stack without rows gets zeros.
 * *out is one caller-freed block (free()); on error it is NULL.
 */
struct profile_stack_threads {
	uint32_t stack;
	size_t nr_threads;
	size_t nr_procs;
	struct profile_thread_sum *top; /* inside the block; nr_top <= max */
	size_t nr_top;
};
int profile__stack_threads(const struct profile *p, const uint32_t *stacks, size_t nr, size_t max,
			   struct profile_stack_threads **out);

#endif
