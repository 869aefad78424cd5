/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The built-in collector: a libbpf CO-RE program on the scheduler tracepoints
 * (tp_btf with raw_tp fallback; never kprobes) that measures, per thread and
 * stack, the time off the CPU split by why the thread left (S, D, preempted)
 * and the run-queue wait after its wakeup.
 *
 * Life cycle, all in the caller's process:
 *
 *     n = native__start(&opts);      load, size maps, attach: tracing from here
 *     ... release the workload ...
 *     native__poll(n, ms);           call periodically: drains, keeps memory bounded
 *     native__stop(n, p, in, sym);   detach, read what remains, symbolize, fill p and in
 *     native__free(n);
 *
 * native__start returns NULL with errno set (EPERM, ENOSYS, EOPNOTSUPP, ENOENT
 * for a missing tracepoint, ...) and a one-line reason in opts->diag; the
 * caller classifies errno, the workload still runs. Everything libbpf prints
 * goes to opts->diag too, never to the terminal.
 *
 * Every loss is counted into the integrity (names in docs/summary.md): stack
 * capture failures by errno, map-full per map, unmatched wakeups/switch-ins,
 * threads already off-CPU when tracing started or still off-CPU when it stopped
 * (their known part is reported and flagged).
 */
#ifndef OFFCPU_COLLECT_NATIVE_H
#define OFFCPU_COLLECT_NATIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model/integrity.h"
#include "model/profile.h"
#include "symbolize/symbolize.h"

struct native_opts {
	/* Targets: exactly one of follow_pid, pids, cgroup, all. */
	int follow_pid;	    /* this process and everything it forks after start */
	const int *pids;    /* these processes, all their threads (and their later children) */
	size_t nr_pids;
	const char *cgroup; /* a cgroup v2 directory */
	bool all;	    /* the whole host */
	bool kernel_threads; /* include kernel threads (default: only user threads) */

	uint64_t min_block_ns; /* 0: no bound */
	uint64_t max_block_ns; /* 0: no bound */
	uint32_t state_mask;   /* 1 << enum offcpu_state to keep; 0: all */
	bool no_user_stacks;
	bool no_kernel_stacks;
	bool no_stack_cache; /* walk every stack (for benchmarks of the cache) */
	bool force_raw_tp;   /* use the raw_tp programs even when tp_btf works */

	/* Map sizes; 0 picks a size from the target. */
	uint32_t stack_entries;
	uint32_t thread_entries;
	uint32_t agg_entries;

	FILE *diag; /* libbpf messages and collector notes (offcpu.diagnostics.txt) */
};

struct native;

struct native *native__start(const struct native_opts *opts);
/* Wait up to timeout_ms for work, drain what is ready. 0 or -errno. */
int native__poll(struct native *n, int timeout_ms);
/*
 * Detach, then add every interval to p (states, run-queue split, per-thread
 * schedstat ground truth via profile__set_thread_time) and every loss to in.
 * Symbolizes with sym (which may be NULL: addresses then stay hex).
 */
int native__stop(struct native *n, struct profile *p, struct integrity *in,
		 struct symbolizer *sym);
void native__free(struct native *n);

#endif
