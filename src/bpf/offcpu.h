/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one header shared by src/bpf/offcpu.bpf.c and user space
 * (src/collect/native.c): map layouts, record formats, constants.
 *
 * It is included after vmlinux.h on the BPF side and after <linux/types.h>
 * in user space, so it uses only __u32/__u64 and plain C.
 */
#ifndef OFFCPU_BPF_OFFCPU_H
#define OFFCPU_BPF_OFFCPU_H

#define OFFCPU_MAX_STACK 127 /* PERF_MAX_STACK_DEPTH */
#define OFFCPU_COMM_LEN 16
#define OFFCPU_CACHE_WAYS 4  /* call sites remembered per thread */
#define OFFCPU_KEY_WORDS 8   /* words of a call-site key */
/* Frames searched from the top of a kernel stack for the __schedule anchor. */
#define OFFCPU_MAX_TRACER_FRAMES 8

/* Task bits the kernel defines as macros (absent from BTF). */
#define OFFCPU_PF_KTHREAD 0x00200000
#define OFFCPU_TASK_INTERRUPTIBLE 0x0001
#define OFFCPU_TASK_UNINTERRUPTIBLE 0x0002
#define OFFCPU_TASK_DEAD 0x0080
#define OFFCPU_TASK_NOLOAD 0x0400
#define OFFCPU_TASK_RTLOCK_WAIT 0x1000

enum offcpu_target {
	OFFCPU_TARGET_TGIDS = 1, /* processes in the procs map (and their forks) */
	OFFCPU_TARGET_CGROUP,	 /* tasks in a cgroup v2 subtree */
	OFFCPU_TARGET_ALL,	 /* every task */
};

/* Same numbering as enum offcpu_state in model/profile.h (checked in native.c). */
enum offcpu_bpf_state {
	OFFCPU_ST_UNKNOWN = 0,
	OFFCPU_ST_SLEEP,
	OFFCPU_ST_DISK,
	OFFCPU_ST_PREEMPT,
	OFFCPU_ST_OTHER,
};

/*
 * Stack ids. A captured stack's id has bit 63 set (the rest is a 64-bit hash
 * of its frames, see stack_hash() in offcpu.bpf.c); an id below that is one of
 * these sentinels, or 1..4095 for the errno of a capture that failed.
 */
#define OFFCPU_STACK_REAL (1ULL << 63)
#define OFFCPU_STACK_NONE 0		/* not asked for (option, or a kernel thread's user side) */
#define OFFCPU_STACK_ERRNO_MAX 4095
#define OFFCPU_STACK_BEFORE_START 4096	/* the interval began before tracing did */
#define OFFCPU_STACK_NEW_THREAD 4097	/* a new thread waiting for its first run */

/* A stack in the stacks map: frames [first, nr) of ips, innermost first. */
struct offcpu_stack {
	__u32 nr;
	__u32 first; /* tracer frames above __schedule are skipped */
	__u64 ips[OFFCPU_MAX_STACK];
};

/* Aggregation: one row of the profile, before symbolization. */
struct offcpu_agg_key {
	__u64 kstack;
	__u64 ustack;
	__u32 tgid;
	__u32 tid;
	__u32 state;
	__u32 pad; /* always 0 */
};

struct offcpu_agg_val {
	__u64 count;
	__u64 off_ns;
	__u64 runq_ns;
};

/* One remembered call site of a thread (see the cache notes in offcpu.bpf.c). */
struct offcpu_site {
	__u64 key[OFFCPU_KEY_WORDS];
	__u64 kstack;
	__u64 ustack;
	__u64 unchecked_ns; /* off-CPU time attributed from this entry since its last check */
	__u32 unchecked;    /* intervals attributed from this entry since its last check */
	__u32 hits;	    /* hits since the last check */
	__u32 period;	    /* check when hits reaches this; doubles up to check_max */
	__u32 used;	    /* clock of the last use, for replacement */
};

enum offcpu_thread_flags {
	OFFCPU_TH_BEFORE_START = 1 << 0, /* current interval began before tracing */
	OFFCPU_TH_NEW = 1 << 1,		 /* current interval is the wait for the first run */
	OFFCPU_TH_FILTERED = 1 << 2,	 /* current interval is excluded by the state mask */
	OFFCPU_TH_HELD = 1 << 3,	 /* the held root of follow_pid: skip its first wait */
};

#define OFFCPU_NO_SITE 0xff

/* Per-thread state (threads map, key: tid). */
struct offcpu_thread {
	__u64 off_ns;  /* switch-out time of the current interval; 0 while on a CPU */
	__u64 wake_ns; /* wakeup of the current interval; 0 if none yet */
	__u64 kstack;  /* stacks of the current interval */
	__u64 ustack;
	/* Ground truth window: [first_ns, exit or stop), schedstat values at first_ns. */
	__u64 first_ns;
	__u64 base_exec_ns;
	__u64 base_delay_ns;
	__u32 tgid;
	__u32 clock; /* site use counter */
	__u8 state;
	__u8 flags;
	__u8 site; /* cache entry the current interval's stacks came from, or OFFCPU_NO_SITE */
	__u8 pad[5];
	char comm[OFFCPU_COMM_LEN];
	struct offcpu_site sites[OFFCPU_CACHE_WAYS];
};

/* Per-process state (procs map, key: tgid). */
enum offcpu_proc_flags {
	OFFCPU_PROC_NOTIFIED = 1 << 0, /* user space was asked to track this image */
};

struct offcpu_proc {
	__u64 notified_ns;
	__u32 flags;
	__u32 pad;
};

/* Records on the events ring buffer. */
enum offcpu_event_type {
	OFFCPU_EV_TRACK = 1, /* a process has user stacks now: snapshot its maps */
	OFFCPU_EV_EXIT,	     /* a traced thread exited: its ground truth */
};

struct offcpu_event {
	__u32 type;
	__u32 tgid;
	__u32 tid;
	__u32 pad;
	__u64 first_ns;
	__u64 end_ns;
	__u64 exec_ns;
	__u64 delay_ns;
	char comm[OFFCPU_COMM_LEN];
};

/*
 * Counters, one per-CPU array element, summed by user space. Losses go to the
 * integrity (names in native.h); the rest are diagnostics.
 */
struct offcpu_stats {
	/* losses */
	__u64 map_full_threads;	    /* threads that could not be tracked */
	__u64 map_full_procs;	    /* forked processes that could not be followed */
	__u64 map_full_agg;	    /* intervals dropped: aggregation map full */
	__u64 map_full_agg_ns;
	__u64 unmatched_switch_in;  /* switch-in of a tracked thread never seen leaving */
	__u64 unmatched_wakeups;    /* wakeups of a target thread with no room to note them */
	__u64 inflight_start;	    /* intervals begun before tracing (known part recorded) */
	__u64 inflight_start_ns;
	__u64 cache_mismatch;	    /* intervals attributed by a cache entry that then failed its check */
	__u64 cache_mismatch_ns;
	__u64 lost_records;	    /* thread exit records dropped: ring buffer full */
	/* diagnostics */
	__u64 switch_out;	    /* traced switch-outs */
	__u64 recorded;		    /* intervals recorded */
	__u64 walks_kernel;
	__u64 walks_user;
	__u64 cache_hits;	    /* switch-outs whose stacks came from the cache */
	__u64 cache_checks;	    /* cache hits checked by a real walk */
	__u64 stack_truncated;	    /* walks that filled all OFFCPU_MAX_STACK frames */
	__u64 tracer_frames;	    /* kernel walks with tracer frames above __schedule */
	__u64 unanchored;	    /* kernel walks without __schedule near the top */
	__u64 wakeup_running;	    /* wakeups of a thread still on its CPU (benign) */
	__u64 no_wakeup;	    /* S/D intervals ended without a seen wakeup */
	__u64 filtered;		    /* intervals outside the state mask or block-time bounds */
	__u64 held_skipped;	    /* the held follow_pid root's wait before release */
	__u64 agg_inserts;	    /* new aggregation keys (map fill) */
};

#endif
