/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Why a thread was off the CPU, told from its stack and its state.
 *
 * One table of rules in reasons.c; docs/reasons.md lists it and says why the
 * order is what it is. The decision, in this order:
 *
 *   1. state R (OFFCPU_STATE_PREEMPT): runqueue; the scheduler said so.
 *      state O (stopped, traced, ...): other.
 *   2. the kernel frames, innermost (leaf) first, against the SPECIFIC rules:
 *      frames that name what was waited for (futex_do_wait, do_epoll_wait,
 *      sk_wait_data, filemap_fault, __cond_resched, ...). The first frame that
 *      matches decides: the innermost wait is the one the thread was in.
 *   3. the kernel frames, innermost first, against the GENERIC rules: wait
 *      primitives that only hint (io_schedule -> disk_io,
 *      schedule_hrtimeout_range -> sleep), used when nothing specific matched.
 *   4. the user frames, innermost first (the kernel stack is missing or
 *      says nothing): libc entry points (pthread_mutex_lock, __GI___poll,
 *      nanosleep, waitpid, recv, fsync, ...).
 *   5. other.
 *
 * Then the rules (a rules file, struct reason_rules): user frames refine what
 * the kernel said into a reason and an optional detail (ProcSleep: "lock",
 * "heavyweight"; aeApiPoll: "idle", "events"). They are tried on every stack
 * whose reason from steps 2-5 is not runqueue or memory (a preempted or
 * faulting thread was not in the wait its user frames ask for): the user's
 * rules (reasons__set_rules) first, then the shipped ones (share/reasons.rules,
 * built in), in file order; the first rule that matches decides.
 *
 * A stack's reason is what its frames say (state unknown); a row's reason is
 * its stack's, except in state R (runqueue) and state O (other). A row's
 * run-queue part (runq_ns, or all of it for a runqueue row) is runqueue time
 * and its blocked part is filed under the row's reason: budget.h.
 *
 * Scheduler plumbing (__schedule, schedule, schedule_timeout, ...) and syscall
 * entry frames match no rule. Frame names are compared without their
 * "+0x1a/0x40" or "+123" offset, without compiler suffixes (".constprop.0",
 * ".isra.0", ".part.0", ".cold") and, for user frames, without the glibc
 * prefixes "__GI_", "__libc_" and leading underscores.
 */
#ifndef OFFCPU_ANALYZE_REASONS_H
#define OFFCPU_ANALYZE_REASONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/profile.h"

enum reason {
	REASON_LOCK = 0, /* futex, kernel mutex/rwsem/semaphore */
	REASON_SLEEP,	 /* nanosleep, timers, schedule_timeout callers that only sleep */
	REASON_DISK_IO,	 /* block I/O, fsync, writeback, direct I/O */
	REASON_NETWORK,	 /* sockets: tcp, udp, unix, accept/connect */
	REASON_POLL,	 /* poll, epoll, select */
	REASON_PIPE,	 /* pipe read/write */
	REASON_CHILD,	 /* wait4/waitid for a child */
	REASON_MEMORY,	 /* page faults, reclaim, compaction, dirty throttling */
	REASON_RUNQUEUE, /* runnable but not running: preempted, cond_resched */
	REASON_IDLE, /* waiting for work: an event loop or a server with nothing to do (rules) */
	REASON_OTHER,
	REASON__COUNT,
};

/* snake_case names: "lock", "sleep", "disk_io", "network", "poll", "pipe", "child",
 * "memory", "runqueue", "idle", "other". */
const char *reason__name(enum reason r);
/* name -> reason; -EINVAL for an unknown name. */
int reason__parse(const char *name, enum reason *r);

/* The reason for the blocked part of the rows on (stack, state). */
enum reason reasons__classify(const struct profile *p, uint32_t stack, enum offcpu_state st);

/*
 * The same decision with a per-frame memo, for callers that classify every row
 * of a big profile (budget, report). The profile must outlive the object and
 * may grow meanwhile. reasons__new() returns NULL and sets errno on failure.
 */
struct reasons;
struct reasons *reasons__new(const struct profile *p);
enum reason reasons__get(struct reasons *r, uint32_t stack, enum offcpu_state st);
/* The same, with the detail a rule gave (NULL for none); *detail lives as long as the rules. */
enum reason reasons__get_detail(struct reasons *r, uint32_t stack, enum offcpu_state st,
				const char **detail);
void reasons__free(struct reasons *r);

/*
 * A rules file (docs/reasons.md, "The rules file"): lines
 *
 *     REASON[:DETAIL]  GLOB [GLOB...]      # comments and blank lines allowed
 *
 * REASON one of reason__name()'s, DETAIL 1-40 of [A-Za-z0-9_.-], each GLOB an
 * fnmatch(3) pattern for a user frame name, innermost first. name is what
 * errors and reasons__explain call the file. NULL and errno on failure:
 * EINVAL with "NAME:LINE: what is wrong" in err (also for a file without any
 * rule), ENOMEM, EIO.
 */
struct reason_rules;
struct reason_rules *reason_rules__parse(FILE *in, const char *name, char *err, size_t errlen);
void reason_rules__free(struct reason_rules *rr);
size_t reason_rules__count(const struct reason_rules *rr);

/*
 * The user's rules, tried before the shipped ones by every classifier from now
 * on (a memo from reasons__new takes the rules in force when it first looks at
 * a stack: set them before); takes ownership and frees the rules set before.
 * NULL: none. Commands set them once, from --reasons, before any output.
 */
void reasons__set_rules(struct reason_rules *rr);

/* The shipped rules' text (share/reasons.rules). */
extern const char *const reasons__default_rules_text;

/*
 * Per (reason, detail): the blocked time of the rows whose rule gave a detail,
 * split as budget.h splits rows. *out sorted by reason, then time descending;
 * free() it. 0 or -ENOMEM.
 */
struct reason_detail_sum {
	enum reason reason;
	const char *detail;
	uint64_t blocked_ns, count;
};
int reasons__detail_sums(const struct profile *p, struct reason_detail_sum **out, size_t *n);

/* What decided, for reports and for docs/reasons.md's examples. */
enum reason_step {
	REASON_BY_STATE = 0,
	REASON_BY_SPECIFIC,
	REASON_BY_GENERIC,
	REASON_BY_USER,
	REASON_BY_NOTHING,
	REASON_BY_RULE, /* a line of a rules file */
};
struct reason_match {
	enum reason reason;
	enum reason_step step;
	int frame;	     /* index in the stack (root first) of the deciding frame; -1 if none */
	const char *pattern; /* the rule's (first) pattern; NULL if none */
	const char *detail;  /* REASON_BY_RULE: the rule's detail, or NULL */
	const char *file;    /* REASON_BY_RULE: the rules file's name ("built-in": shipped) */
	int line;	     /* REASON_BY_RULE: its line */
};
void reasons__explain(const struct profile *p, uint32_t stack, enum offcpu_state st,
		      struct reason_match *m);

/*
 * The rule one frame name matches: its reason and tier (REASON_BY_SPECIFIC,
 * REASON_BY_GENERIC or REASON_BY_USER), or REASON_BY_NOTHING.
 */
enum reason_step reasons__frame(enum frame_kind kind, const char *name, enum reason *r);

/*
 * Whether a kernel frame is scheduler or syscall-entry plumbing, which says
 * nothing about the wait (__schedule, schedule, schedule_timeout,
 * entry_SYSCALL_64, do_syscall_64, ...). Reports skip these to show the
 * leaf-most meaningful frame.
 */
int reasons__is_plumbing(const char *name);

/*
 * A frame name as the rules see it, into buf (truncated to size, always
 * NUL-terminated; size > 0): without a "+0x1a/0x40" or "+123" offset and, for a
 * kernel frame, without compiler suffixes (".constprop.0", ".isra.0", ...).
 * User names keep their dots (Go's runtime.futex, Rust paths); an unnamed
 * address, "[BINARY+0xOFFSET]", is kept whole. Returns buf.
 * diff matches frames of two profiles by this name.
 */
char *reasons__clean_name(enum frame_kind kind, const char *name, char *buf, size_t size);

#endif
