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
 *
 * Loss names (every one is recorded, 0 included, so a zero is evidence; "time"
 * is the loss's affected_ns):
 *
 *   inflight_at_start     intervals that began before tracing did: the part
 *                         after start is recorded (state "?", user stack a
 *                         "[... since before start]" placeholder, kernel stack
 *                         walked from the sleeping task when tp_btf is in use);
 *                         time = that known part. The held follow_pid root's
 *                         wait for its release is not workload time: skipped,
 *                         not counted.
 *   inflight_at_stop      intervals still open at stop: recorded up to stop with
 *                         their stacks and state; time = that known part.
 *   map_full_agg          intervals dropped because the aggregation map was full
 *                         between two drains; time = their off-CPU time.
 *   map_full_stacks       intervals whose stack did not fit in the stacks map;
 *                         kept under a "[missing ... stack: stack map full]" frame.
 *   map_full_threads      threads that could not be tracked (their intervals are
 *                         missing; no time known).
 *   map_full_procs        forked processes of a followed tree that could not be
 *                         followed.
 *   unmatched_switch_in   switch-ins of tracked threads whose switch-out was not
 *                         seen (interval unknown).
 *   unmatched_wakeups     wakeups of target threads that could not be noted.
 *   stack_cache_mismatch  intervals that took their stacks from the per-thread
 *                         call-site cache from an entry whose next check by a
 *                         real walk found other stacks: an upper bound on
 *                         misattributed intervals; time = their off-CPU time.
 *   lost_thread_records   thread exit records lost (ring buffer full): those
 *                         threads lack ground truth and their comm.
 *   missed_events         program runs the kernel skipped (bpf recursion guard).
 *   kernel_stack_errors_<errno>, user_stack_errors_<errno>
 *                         intervals whose stack walk failed with that errno
 *                         (e.g. kernel_stack_errors_efault); kept under a
 *                         "[missing ... stack: EFAULT]" frame; time = their
 *                         off-CPU time. Only present when non-zero.
 *
 * Stacks are stored by a 64-bit hash of their frames (no STACK_TRACE map, so
 * no bucket collisions: -EEXIST cannot happen); tracer frames above __schedule
 * are dropped in the kernel. Map sizes default from the target (follow_pid and
 * pids: 8192 threads, 16384 aggregation keys and stacks; cgroup and all: 32768
 * threads, 65536 keys and stacks); the thread, process and stack maps allocate
 * on use, so large limits cost memory only when used.
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
	/*
	 * Optional: processes are tracked (symbolizer__track) while they live,
	 * when their first user stack is seen and again after exec. Pass the
	 * same symbolizer to native__stop.
	 */
	struct symbolizer *sym;
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
