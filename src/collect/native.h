/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The built-in collector: a libbpf CO-RE program on the scheduler tracepoints
 * (tp_btf with raw_tp fallback; never kprobes) that measures, per thread and
 * stack, the time off the CPU split by why the thread left (S, D, preempted)
 * and the run-queue wait before it ran again.
 *
 * Life cycle, all in the caller's process:
 *
 *     n = native__start(&opts);      load, size maps, attach: tracing from here
 *     ... release the workload ...
 *     native__poll(n, ms);           call periodically: drains, keeps memory bounded
 *     native__stop(n, p, in, sym);   detach, read what remains, symbolize, fill p and in
 *     native__free(n);
 *
 * native__start returns NULL with errno set (EPERM not allowed, EOPNOTSUPP no
 * kernel BTF, ENOENT missing tracepoint or cgroup, ESRCH no such process,
 * EINVAL bad target, or what the kernel said) and a one-line reason in
 * opts->diag; the caller classifies errno, the workload still runs.
 * Everything libbpf prints goes to opts->diag too, never to the terminal.
 * native__poll() takes the kernel side's records (stacks, thread exits, new
 * processes to track) and every second, or when half full, moves the
 * aggregation map to user space, so long host-wide runs stay bounded.
 *
 * What is measured. An interval runs from a thread's switch-out to its next
 * switch-in. State from prev_state and the preempt flag: S, D (TASK_IDLE
 * counts as S), R (preempted, or left the CPU still runnable: all of it is
 * run-queue time), O (stopped, traced, ...). Run-queue time of S/D intervals
 * is the scheduler's own (sched_info.last_queued to the switch-in, what
 * /proc/PID/schedstat's run_delay adds up); kernels without CONFIG_SCHED_INFO
 * use the sched_wakeup tracepoints instead. A new thread's wait for its first
 * run is a row of state R under the "[new thread: waiting for its first run]"
 * frame. Ground truth per thread (profile__set_thread_time): wall time from
 * its first sight (start, birth, or the exec of the follow_pid root) to its
 * exit or stop, on-CPU and run-queue time from schedstat over that window.
 *
 * Stacks: kernel and user, up to 127 frames, walked where the thread leaves
 * the CPU; tracer frames above __schedule are dropped in the kernel. Each is
 * sent to user space once and identified by a 64-bit hash of its frames
 * (no STACK_TRACE map, so no bucket collisions: a stack is never lost because
 * another one had its bucket). Walking every switch-out costs what bcc's
 * offcputime costs; a per-thread call-site cache reuses the stacks of a site
 * whose key matches (user registers and frame-pointer chain, syscall, entry
 * path, sleep state) and whose kernel return addresses still sit where they
 * sat, which fixes the kernel walk's result exactly. The user part is exact
 * when the frame chain ends within 256 bytes above the frame pointer; the rest
 * is checked by real walks on the 1st, 2nd, 4th, ... hit (every 64th at most,
 * every 1024th for a site verified whole), and a failed check counts what it
 * may have misattributed (stack_cache_mismatch). no_stack_cache walks always.
 *
 * Follow_pid: the caller forks the workload held before exec and passes its
 * pid; the BPF side follows it and everything it forks from there. Nothing of
 * that process is recorded before its exec (the hold is the caller's, not the
 * workload's). Targets decide once per thread; kernel threads only with
 * kernel_threads; -a leaves out the collector's own process; the per-CPU idle
 * tasks are never recorded.
 *
 * Every loss is counted into the integrity. Names (every one is recorded, 0
 * included, so a zero is evidence; "time" is the loss's affected_ns):
 *
 *   inflight_at_start     intervals that began before tracing did: the part
 *                         after start is recorded (state "?", user stack a
 *                         "[... since before start]" placeholder, kernel stack
 *                         walked from the sleeping task where the kernel allows
 *                         it); time = that known part.
 *   inflight_at_stop      intervals still open at stop: recorded up to stop with
 *                         their stacks and state; time = that known part.
 *   map_full_agg          intervals dropped because the aggregation map filled
 *                         between two drains; time = their off-CPU time.
 *   map_full_threads      attempts to start tracking a thread that failed
 *                         (thread map full; its intervals are missing, time
 *                         unknown).
 *   map_full_procs        forked processes of a followed tree that could not be
 *                         followed.
 *   lost_stacks           intervals whose new stack could not be sent (events
 *                         ring buffer full); kept under a "[missing ... stack:
 *                         ring buffer full]" frame; time = their off-CPU time.
 *   unseen_switch_out     intervals whose switch-out the kernel did not report:
 *                         their time is rebuilt from schedstat, their stack and
 *                         state are unknown ("[stack unknown: switch-out not
 *                         reported]"); time = their off-CPU time. (An unreported
 *                         switch-in is rebuilt whole, stacks included, and only
 *                         noted in the diagnostics.)
 *   unmatched_switch_in   switch-ins (or switch-outs) that could not be paired
 *                         nor rebuilt (interval unknown).
 *   unmatched_wakeups     wakeups that could not be noted (only on kernels
 *                         without sched_info, where wakeups are traced).
 *   stack_cache_mismatch  intervals that took their stacks from a call-site
 *                         cache entry whose next check by a real walk found
 *                         other stacks: an upper bound on misattributed
 *                         intervals; time = their off-CPU time.
 *   lost_thread_records   thread exit records lost (ring buffer full): those
 *                         threads lack ground truth and their comm.
 *   missed_events         program runs the kernel skipped (its BPF recursion
 *                         guard).
 *   kernel_stack_errors_<errno>, user_stack_errors_<errno>
 *                         intervals whose stack walk failed with that errno
 *                         (e.g. kernel_stack_errors_efault); kept under a
 *                         "[missing ... stack: EFAULT]" frame; time = their
 *                         off-CPU time. Only present when non-zero.
 *
 * Map sizes default from the target (follow_pid and pids: 8192 threads, 16384
 * aggregation keys; cgroup and all: 32768 threads, 65536 keys; thread state
 * is about 900 bytes, preallocated; two aggregation maps alternate), and
 * options override them. stack_entries sizes the set of stack ids already
 * sent (16384 / 65536): when it is full, new stacks are sent again, nothing is
 * lost.
 */
#ifndef OFFCPU_COLLECT_NATIVE_H
#define OFFCPU_COLLECT_NATIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model/integrity.h"
#include "model/profile.h"
#include "model/timeline.h"
#include "symbolize/symbolize.h"

struct native_opts {
	/* Targets: exactly one of follow_pid, pids, cgroup, all. */
	int follow_pid;	 /* this held process from its exec, and everything it forks */
	const int *pids; /* these processes, all their threads (and their later children) */
	size_t nr_pids;
	const char *cgroup;  /* a cgroup v2 directory */
	bool all;	     /* the whole host */
	bool kernel_threads; /* include kernel threads (default: only user threads) */

	uint64_t min_block_ns; /* 0: no bound */
	uint64_t max_block_ns; /* 0: no bound */
	uint32_t state_mask;   /* 1 << enum offcpu_state to keep; 0: all */
	bool no_user_stacks;
	bool no_kernel_stacks;
	bool no_stack_cache; /* walk every stack (for benchmarks of the cache) */
	/*
	 * User stacks by frame pointers only (bpf_get_stack), as before the
	 * .eh_frame unwinder; the unwinder is the default on x86-64 kernels
	 * with bpf_loop (5.17+). unwind_budget: bytes of unwind table rows at
	 * most (0: UNWIND_DEFAULT_BUDGET), see collect/unwind.h.
	 */
	bool fp_unwind;
	uint64_t unwind_budget;
	bool force_raw_tp; /* use the raw_tp programs even when tp_btf works */

	/*
	 * Map sizes; 0 picks a size from the target. Host-wide and cgroup
	 * captures track threads for four times the host's threads at start
	 * (8192 to 32768), unless long_run: a run of no set length (continuous
	 * mode) takes the largest size, since the host may grow meanwhile.
	 */
	uint32_t stack_entries;	 /* stack ids remembered as sent */
	uint32_t thread_entries; /* threads (and processes) tracked at once */
	uint32_t agg_entries;	 /* aggregation keys between two drains */
	bool long_run;

	/*
	 * Optional timeline: native__stop() appends to it every interval at
	 * least timeline_min_ns long (0: all), those still open at stop
	 * included, each with the stack id its row has in the profile, its
	 * state, run-queue part and waker (the thread whose wakeup ended it,
	 * when a thread did: 0 for a wakeup from an interrupt, a timer say).
	 * Costs a ring-buffer record per such interval (user space keeps 72
	 * bytes of each until stop) and the sched_wakeup tracepoints. Intervals
	 * the ring buffer had no room for are counted (timeline_lost), never
	 * missing from the profile.
	 */
	struct timeline *timeline;
	uint64_t timeline_min_ns;

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
/* A descriptor that polls readable when native__poll() has work (the ring buffer's). */
int native__fd(const struct native *n);
/*
 * Detach, then add every interval to p (states, run-queue split, per-thread
 * schedstat ground truth via profile__set_thread_time) and every loss to in.
 * Symbolizes with sym (which may be NULL: addresses then stay hex).
 */
int native__stop(struct native *n, struct profile *p, struct integrity *in, struct symbolizer *sym);
/*
 * Periods (record --every): hand over what happened since the last cut (or
 * start) without detaching, into a new profile p and integrity in, and set
 * *at_ns to the boundary (CLOCK_MONOTONIC). A wait in progress there is
 * split: its part before goes to this period (an "inflight_at_stop" edge),
 * the rest to the next (an "inflight_at_start" edge there); a thread off the
 * CPU for a whole period "never ran" in it; a wait counts once in each
 * period it spans. Ground truth per thread is its
 * share of the period; losses are the counters' growth over it. The sum of
 * the periods (and the final native__stop's part) is the profile one stop
 * would have given: a period may get a part of a row that ended just after
 * its boundary, never one counted twice. Not with a timeline (-EOPNOTSUPP).
 * After a cut, n holds only what the next one needs: rows given are freed,
 * threads that exited are forgotten.
 */
int native__cut(struct native *n, struct profile *p, struct integrity *in, struct symbolizer *sym,
		uint64_t *at_ns);
void native__free(struct native *n);

/*
 * Whether dir can be a --cgroup target: 0, or -ENOENT (missing), -ENOTDIR (not
 * a directory, or not on cgroup v2: why names where cgroup v2 is mounted, if
 * it is), -errno; why gets one line saying what is wrong and what to give.
 */
int native__check_cgroup(const char *dir, char *why, size_t why_len);

/*
 * Counters of the capture, for tests, benchmarks and diagnostics; filled by
 * native__stop() (zero before). The identity the tests check: the rows'
 * counts plus map_full_agg's count equal intervals plus inflight_at_stop's.
 */
struct native_stats {
	bool raw_tp;	     /* the raw_tp programs were loaded (tp_btf failed or was refused) */
	bool runq_schedinfo; /* run-queue time from sched_info, not the wakeup tracepoints */
	uint64_t switches;   /* switch-outs of traced threads */
	uint64_t intervals;  /* off-CPU intervals the kernel side recorded or tried to */
	uint64_t interval_ns;
	uint64_t cache_hits; /* switch-outs whose stacks came from the call-site cache */
	uint64_t cache_misses;
	uint64_t cache_checks;	 /* hits verified by a real walk */
	uint64_t check_failures; /* ... that found other stacks */
	uint64_t walks_kernel;	 /* stack walks done */
	uint64_t walks_user;
	uint64_t sites;		     /* call-site cache entries made */
	uint64_t sites_kernel_exact; /* ... whose every kernel frame is verified on a hit */
	uint64_t sites_user_exact;   /* ... whose whole user frame chain is in the key */
	uint64_t uwords_direct;	     /* hits' user stack words read through the page table */
	uint64_t uwords_helper;	     /* ... with bpf_probe_read_user() */
	uint64_t timeline_intervals; /* intervals appended to opts->timeline */
	uint64_t timeline_lost;	     /* ... that the ring buffer had no room for */
	uint64_t timeline_lost_ns;
	uint64_t drains; /* aggregation map drains while running (not at stop) */
};
int native__stats(const struct native *n, struct native_stats *st);

/*
 * While it runs (native_live.c): what the live status line shows, cheap
 * enough to read a few times a second (one read of the per-CPU stats map):
 * switch-outs of traced threads, threads traced so far, distinct stacks
 * received (kernel and user stacks counted apart), and the loss counters the
 * kernel side keeps (what only the stop can count, lost stacks among them,
 * is not in it). 0 or -errno.
 */
struct native_live {
	uint64_t switches;
	uint64_t threads;
	uint64_t stacks;
	uint64_t lost;
};
int native__live(struct native *n, struct native_live *out);
/*
 * Whether a process the collector follows is still there: for a command or
 * -p, the processes given and every process they forked since tracing began
 * (1: some, 0: none left); always 1 for --cgroup and -a. -errno on failure.
 */
int native__targets_alive(struct native *n);

#endif
