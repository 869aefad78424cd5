/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one header shared by src/bpf/offcpu.bpf.c and user space
 * (src/collect/native*.c): map layouts, record formats, constants.
 *
 * It is included after kernel_types.h on the BPF side and after <linux/types.h>
 * in user space, so it uses only __u32/__u64 and plain C.
 */
#ifndef OFFCPU_BPF_OFFCPU_H
#define OFFCPU_BPF_OFFCPU_H

#define OFFCPU_MAX_STACK 127 /* PERF_MAX_STACK_DEPTH */
#define OFFCPU_COMM_LEN 16
#define OFFCPU_CACHE_WAYS 4 /* call sites remembered per thread (a power of two) */
#define OFFCPU_KSLOTS 16    /* kernel return addresses a call site verifies */
#define OFFCPU_KSCAN 1024   /* kernel stack words searched for them (8 KiB) */
#define OFFCPU_UWIN 256	    /* bytes of user stack above bp read for a call-site key */
#define OFFCPU_USLOTS 32    /* user stack words a call site verifies (a power of two) */
/* Frames searched from the top of a kernel stack for the __schedule anchor. */
#define OFFCPU_MAX_TRACER_FRAMES 8

/*
 * Map sizes: the BPF maps' max_entries, and user space's defaults (the small
 * ones when tracing given processes, the large ones for a cgroup or all).
 */
#define OFFCPU_MAX_THREADS 8192 /* threads and procs maps */
#define OFFCPU_MAX_THREADS_LARGE 32768
#define OFFCPU_MAX_AGG 16384 /* each of agg0/agg1 */
#define OFFCPU_MAX_AGG_LARGE 65536
#define OFFCPU_MAX_STACKS 16384 /* ids of the stacks sent */
#define OFFCPU_MAX_STACKS_LARGE 65536

/*
 * The words of a call-site key (see site_key() in offcpu.bpf.c), read from
 * the registers the thread entered the kernel with and its user stack.
 */
enum offcpu_key_word {
	OFFCPU_KEY_IP,	      /* user ip: where the thread entered the kernel */
	OFFCPU_KEY_SP,	      /* user sp */
	OFFCPU_KEY_FP,	      /* user frame pointer: start of the frame-pointer chain */
	OFFCPU_KEY_CHAIN,     /* user_chain(): hash of the chain above the frame pointer */
	OFFCPU_KEY_SYSCALL,   /* syscall number (exception error code, irq vector otherwise) */
	OFFCPU_KEY_ENTRY_RET, /* the return address into the entry code */
	OFFCPU_KEY_STATE,     /* prev_state << 1 | in_iowait */
	OFFCPU_KEY_WORDS
};
/* In the OFFCPU_KEY_CHAIN word: the chain ends inside the window it hashes. */
#define OFFCPU_CHAIN_WHOLE 1ULL

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
#define OFFCPU_STACK_NONE 0 /* not asked for (option, or a kernel thread's user side) */
#define OFFCPU_STACK_ERRNO_MAX 4095
/* Capture errno meaning the events ring buffer had no room for a new stack. */
#define OFFCPU_STACK_LOST 28	       /* ENOSPC */
#define OFFCPU_STACK_BEFORE_START 4096 /* the interval began before tracing did */
#define OFFCPU_STACK_NEW_THREAD 4097   /* a new thread waiting for its first run */
#define OFFCPU_STACK_UNSEEN 4098       /* the switch-out was not reported: stack unknown */

/*
 * A stack as walked, innermost first: frames [first, nr) of ips (tracer frames
 * above __schedule come before first). The BPF side sends each new stack once
 * on the events ring buffer (type OFFCPU_EV_STACK) and remembers its id in
 * the stacks map; user space keeps the frames.
 */
struct offcpu_stack {
	__u32 type;
	__u32 nr;
	__u32 first;
	__u32 pad; /* in the scratch buffer: 1 if the walk just sent a new stack */
	__u64 id;
	__u64 ips[OFFCPU_MAX_STACK + 1]; /* one spare, so that "& 127" indexes safely */
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

/*
 * One remembered call site of a thread (see the cache notes in offcpu.bpf.c):
 * the key that selects it, where its kernel return addresses sit, the stacks
 * walked for it, and the weight of the intervals attributed to it since it
 * was last flushed to the aggregation map. Laid out in the order a lookup
 * touches it.
 */
struct offcpu_site {
	__u64 key[OFFCPU_KEY_WORDS];
	__u64 khash;		    /* hash of the words at kslot[0..nk) when the site was made */
	__u16 kslot[OFFCPU_KSLOTS]; /* word offsets from the tracepoint's ctx */
	__u8 nk;		    /* kslot entries used */
	__u8 exact;		    /* OFFCPU_SITE_* */
	__u8 state;
	__u8 pad;
	__u32 period;	 /* check when hits reaches this; 0: empty entry */
	__u32 hits;	 /* hits since the last check */
	__u32 unchecked; /* intervals attributed since the last check */
	__u64 kstack;	 /* stack ids */
	__u64 ustack;
	__u64 count; /* accumulated, not yet in the aggregation map */
	__u64 off_ns;
	__u64 runq_ns;
	__u64 unchecked_ns; /* off-CPU time attributed since the last check */
	/* The user stack words the unwind read, as word offsets from sp, and their hash. */
	__u64 uhash;
	__u16 uslot[OFFCPU_USLOTS];
	__u16 umax; /* the largest uslot */
	__u8 nu;    /* uslot entries used; 0: nothing to verify (no unwind, or no word read) */
	__u8 upad[5];
};

enum offcpu_site_flags {
	OFFCPU_SITE_KERNEL_EXACT = 1 << 0, /* every kernel frame's slot is verified */
	OFFCPU_SITE_USER_EXACT = 1 << 1,   /* the whole user frame chain is in the key */
};

enum offcpu_thread_flags {
	OFFCPU_TH_BEFORE_START = 1 << 0, /* current interval began before tracing */
	OFFCPU_TH_NEW = 1 << 1,		 /* current interval is the wait for the first run */
	OFFCPU_TH_FILTERED = 1 << 2,	 /* current interval is excluded by the state mask */
	OFFCPU_TH_UNCHECKED = 1 << 3,	 /* current interval's stacks came from a cache hit */
	OFFCPU_TH_SNAPPED = 1 << 4, /* ... began before start; stacks and state from the snapshot */
};

#define OFFCPU_NO_SITE 0xff

/* Per-thread state (threads map, key: tid). The first 64 bytes are the hot ones. */
struct offcpu_thread {
	__u64 off_ns; /* switch-out time of the current interval; 0 while on a CPU */
	__u64 kstack; /* stacks of the current interval */
	__u64 ustack;
	__u64 wake_ns;		      /* wakeup of the current interval (without sched_info only) */
	__u32 tag[OFFCPU_CACHE_WAYS]; /* hash of each site's key, 0: empty */
	__u32 tgid;
	__u32 clock; /* sites made; ties for the least used go to sites[clock % ways] */
	__u8 state;
	__u8 flags;
	__u8 site;  /* cache entry of the current interval, or OFFCPU_NO_SITE */
	__u8 held;  /* the follow_pid root before its exec: nothing recorded yet */
	__u8 woken; /* timeline: the current interval's waking was seen */
	__u8 pad[3];
	__u32 waker; /* timeline: the thread that woke it in this interval; 0 unknown */
	/*
	 * Hits of each cache entry (saturating), halved every 16 sites made: a
	 * new site replaces the least used (cache.bpf.h, site_make()).
	 */
	__u8 freq[OFFCPU_CACHE_WAYS];
	/* Ground truth window: [first_ns, exit or stop), schedstat values at first_ns. */
	__u64 first_ns;
	__u64 base_exec_ns;
	__u64 base_delay_ns;
	__u64 switches;	   /* switch-outs traced */
	__u64 hits;	   /* ... whose stacks came from the cache */
	__u64 intervals;   /* intervals recorded (to a site or the aggregation map) */
	__u64 interval_ns; /* their off-CPU time */
	/*
	 * Of its run by schedstat, what its intervals count as waits: the
	 * CPU's wake-ups from idle before it ran (run_end() in offcpu.bpf.c).
	 */
	__u64 idle_exit_ns;
	/*
	 * At the thread's last switch seen (out or in): time, and schedstat's
	 * on-CPU and run-queue totals, to rebuild an interval whose switch-in
	 * or switch-out the kernel did not report.
	 */
	__u64 mark_ns;
	__u64 mark_exec_ns;
	__u64 mark_delay_ns;
	char comm[OFFCPU_COMM_LEN];
	struct offcpu_site sites[OFFCPU_CACHE_WAYS];
};

/* Per-process state (procs map, key: tgid). */
enum offcpu_proc_flags {
	OFFCPU_PROC_NOTIFIED = 1 << 0, /* user space was asked to track this image */
	OFFCPU_PROC_PENDING = 1 << 1,  /* a new stack came too soon after: ask again */
};

struct offcpu_proc {
	__u64 notified_ns;
	__u64 mm_stamp; /* its address space when last notified (notify_track()) */
	__u32 flags;
	__u32 raws; /* user stacks left to user space since the last exec */
};

/*
 * Raw user stacks (OFFCPU_RAW_WIN bytes each) a process may send before its
 * mappings are loaded, or before a table its stacks need is built; later
 * ones end with the "maps not loaded" or "table not built yet" marker, so
 * that a process switching fast cannot fill the ring buffer meanwhile.
 */
#define OFFCPU_MAX_RAWS 32

/* Records on the events ring buffer. */
enum offcpu_event_type {
	OFFCPU_EV_TRACK = 1,  /* a process has user stacks now: snapshot its maps */
	OFFCPU_EV_EXIT,	      /* a traced thread exited: its ground truth */
	OFFCPU_EV_STACK,      /* a new stack: struct offcpu_stack, ips cut at nr */
	OFFCPU_EV_INTERVAL,   /* one interval for the timeline: struct offcpu_interval */
	OFFCPU_EV_RAW_USTACK, /* a user stack to unwind in user space: struct offcpu_raw_ustack */
	OFFCPU_EV_DRAIN,      /* the aggregation map is half full: drain it now (a __u32) */
	OFFCPU_EV_NEED,	      /* a walk needs a binary's table: struct offcpu_need */
	OFFCPU_EV_EXEC, /* a process with stacks exec'd: what came before is the old image's */
};

/*
 * A walk stopped at a binary whose table is not built yet (lazy tables,
 * OFFCPU_UMARK_PENDING) when its process may send no more raw stacks: user
 * space builds the table of the mapping holding pc in process tgid.
 */
struct offcpu_need {
	__u32 type;
	__u32 tgid;
	__u64 pc;
};

/* Waker detection: frames walked, interrupt entry ranges (see waker_tid()). */
#define OFFCPU_WAKER_FRAMES 32
#define OFFCPU_IRQ_RANGES 8

/*
 * One question to the ksym program (offcpu.bpf.c): name (len bytes with its
 * NUL) in, addr out; or, with len 0, addr in and "name+off/size" out. ret is
 * the helper's. name is u64 words: the program copies it through its stack.
 */
#define OFFCPU_KSYM_NAME 256

/*
 * upt_probe()'s question (offcpu.bpf.c): can the user word at addr, which
 * holds value, be read through the page table? levels: 4 or 5 if so, else 0.
 */
struct offcpu_upt_query {
	__u64 addr;
	__u64 value;
	__u32 levels;
	__u32 pad;
};

struct offcpu_ksym_query {
	__u64 addr;
	__s64 ret;
	__u64 len;
	__u64 name[OFFCPU_KSYM_NAME / 8];
};

/*
 * A timeline waker that is no thread: bit 31 set, the interrupt context's
 * kind (enum offcpu_waker_kind) in bits 24..30, its number below (softirq
 * vector, irq). A thread's tid stays below 1 << 22 (PID_MAX_LIMIT).
 */
#define OFFCPU_WAKER_IRQCTX (1u << 31)
#define OFFCPU_WAKER_KIND(w) (((w) >> 24) & 0x7f)
#define OFFCPU_WAKER_NR(w) ((w)&0xffffff)
#define OFFCPU_WAKER(kind, nr) (OFFCPU_WAKER_IRQCTX | (__u32)(kind) << 24 | ((nr)&0xffffff))
enum offcpu_waker_kind {
	OFFCPU_WAKER_SOFTIRQ = 1, /* a softirq handler: nr is the vector */
	OFFCPU_WAKER_HARDIRQ,	  /* a hard IRQ handler: nr is the irq */
	OFFCPU_WAKER_TIMER,	  /* an hrtimer expiring in hard IRQ context */
};

/* An interval at least timeline_min_ns long, as the profile records it. */
struct offcpu_interval {
	__u32 type;
	__u32 tgid;
	__u32 tid;
	__u32 waker; /* a tid, OFFCPU_WAKER(); 0: unknown (no wakeup seen, or an untracked one) */
	__u64 start_ns;
	__u64 dur_ns;
	__u64 runq_ns;
	__u64 kstack;
	__u64 ustack;
	__u32 state;
	__u32 pad;
};

struct offcpu_event {
	__u32 type;
	__u32 tgid;
	__u32 tid;
	__u32 ptgid; /* EXEC, TRACK: whose copy its address space was, or is (image_parent()) */
	__u64 first_ns;
	__u64 end_ns;
	__u64 exec_ns;
	__u64 delay_ns;
	__u64 switches;
	__u64 hits;
	__u64 intervals;
	__u64 interval_ns;
	__u64 idle_exit_ns; /* of exec_ns: see struct offcpu_thread */
	char comm[OFFCPU_COMM_LEN];
};

/*
 * Counters, one per-CPU array element, summed by user space. Losses go to the
 * integrity (names in native.h); the rest are diagnostics.
 */
struct offcpu_stats {
	/* losses */
	__u64 map_full_threads; /* threads that could not be tracked */
	__u64 map_full_procs;	/* forked processes that could not be followed */
	__u64 map_full_agg;	/* intervals dropped: aggregation map full */
	__u64 map_full_agg_ns;
	__u64 unmatched_switch_in; /* switch-in of a tracked thread never seen leaving, not rebuilt
				    */
	__u64 unseen_switch_out;   /* ... rebuilt from schedstat: time known, stack not */
	__u64 unseen_switch_out_ns;
	__u64 unseen_switch_in;	 /* switch-ins not reported, interval rebuilt from schedstat */
	__u64 unmatched_wakeups; /* wakeups of a target thread with no room to note them */
	__u64 inflight_start;	 /* intervals begun before tracing (known part recorded) */
	__u64 inflight_start_ns;
	__u64 cache_mismatch; /* intervals attributed by a cache entry that then failed its check */
	__u64 cache_mismatch_ns;
	__u64 lost_records;  /* thread exit records dropped: ring buffer full */
	__u64 timeline_lost; /* timeline intervals dropped: ring buffer full (in the profile) */
	__u64 timeline_lost_ns;
	/* diagnostics */
	__u64 switches;	       /* switch-outs of traced threads (the live status line) */
	__u64 threads_tracked; /* threads that began to be traced */
	__u64 walks_kernel;
	__u64 walks_user;
	__u64 cache_checks;	   /* cache hits checked by a real walk */
	__u64 cache_misses;	   /* switch-outs whose key was not in the cache */
	__u64 check_failed_kernel; /* checks that found another kernel stack */
	__u64 check_failed_user;   /* checks that found another user stack */
	__u64 sites_made;	   /* cache entries made (after a miss) */
	__u64 sites_kernel_exact;  /* ... whose kernel frames are all verified */
	__u64 sites_user_exact;	   /* ... whose user frame chain is all in the key */
	__u64 kslot_rejects;	   /* key matched but the kernel frames differed: a miss */
	__u64 stack_truncated;	   /* walks that filled all OFFCPU_MAX_STACK frames */
	__u64 tracer_frames;	   /* kernel walks with tracer frames above __schedule */
	__u64 unanchored;	   /* kernel walks without __schedule near the top */
	__u64 wakeup_running;	   /* wakeups of a thread still on its CPU (benign) */
	__u64 no_wakeup;	   /* S/D intervals ended without a seen wakeup */
	__u64 filtered;		   /* intervals outside the state mask or block-time bounds */
	__u64 held_skipped;	   /* the held follow_pid root's waits before its exec */
	__u64 agg_inserts;	   /* new aggregation keys (map fill) */
	__u64 drain_wakes;	   /* ... wakes of user space to drain a half-full map */
	__u64 drain_wake_lost;	   /* ... the ring buffer had no room for */
	__u64 uwalks_dwarf;	   /* user walks by the .eh_frame unwinder */
	__u64 uframes;		   /* ... frames they found */
	__u64 uslot_rejects;	   /* key matched but the user stack words differed: a miss */
	__u64 uraw_sent;	   /* user stacks left to user space (mappings not loaded yet) */
	__u64 track_sent;	   /* requests to read a process's mappings */
	__u64 track_lost;	   /* ... the ring buffer had no room for (or for an exec notice) */
	__u64 track_same;	   /* ... not sent: its address space had not changed */
	__u64 umarks[16];	   /* ... stacks ended by each enum offcpu_umark (index) */
	__u64 carried;		   /* intervals ended that began before the last period boundary */
	__u64 carried_ns;	   /* ... their part after it */
	__u64 clock_syncs;	   /* the switch clock's offset to CLOCK_MONOTONIC taken again */
	__u64 clock_step_ns;	   /* ... how far it moved, summed (|new - old|) */
	__u64 uslot_direct;	   /* hits' user words read through the page table */
	__u64 uslot_helper;	   /* ... with bpf_probe_read_user() */
};

/*
 * User stacks without frame pointers (x86-64): unwind tables built in user
 * space from .eh_frame/.debug_frame (collect/cfi.h), one row per address
 * range, 8 bytes, sorted by pc. A row says how to find the caller's frame
 * from the registers at any pc in [row.pc, next row.pc):
 *
 *   CFA = (cfa == OFFCPU_CFA_SP ? rsp : rbp) + cfa_off * 8
 *   return address = [CFA - 8], caller's rsp = CFA
 *   caller's rbp = fp == OFFCPU_FP_SAVED ? [CFA + fp_off * 8] : rbp
 *
 * or is a command (the other OFFCPU_CFA_* values). pc is relative to the
 * table's base (struct cfi_table in collect/cfi.h), an ELF virtual address.
 */
enum offcpu_cfa {
	OFFCPU_CFA_NONE = 0,	/* no CFI covers this pc (a gap between FDEs) */
	OFFCPU_CFA_SP,		/* CFA = rsp + cfa_off * 8 */
	OFFCPU_CFA_FP,		/* CFA = rbp + cfa_off * 8 */
	OFFCPU_CFA_PLT,		/* CFA = rsp + cfa_off * 8 + ((rip & 15) >= fp_off ? 8 : 0) */
	OFFCPU_CFA_SIGNAL,	/* a signal trampoline: registers are in the ucontext at rsp */
	OFFCPU_CFA_END,		/* return address undefined: the outermost frame (_start, clone) */
	OFFCPU_CFA_UNSUPPORTED, /* a rule the BPF side cannot evaluate (expression, odd offset) */
	/*
	 * CFA = rsp + cfa_off * 8, the return address in rdi: glibc's vfork pops
	 * it there around its system call (the stack is the child's until it
	 * execs). Known at the interrupted frame only, from the saved registers.
	 */
	OFFCPU_CFA_RA_RDI,
};

enum offcpu_fp_rule {
	OFFCPU_FP_SAME = 0,  /* rbp keeps its value */
	OFFCPU_FP_SAVED = 1, /* rbp saved at CFA + fp_off * 8 */
	OFFCPU_FP_UNKNOWN =
		2, /* rbp undefined or a rule not representable: unusable after this frame */
};

struct offcpu_cfi_row {
	__u32 pc;      /* first pc of the row, minus the table's base */
	__u16 cfa_off; /* in units of 8 bytes */
	__u8 rule;     /* enum offcpu_cfa in the low nibble, enum offcpu_fp_rule in the high one */
	__s8 fp_off;   /* in units of 8 bytes; for OFFCPU_CFA_PLT the rip & 15 threshold */
};

#define OFFCPU_CFI_RULE(cfa, fp) ((__u8)((cfa) | ((fp) << 4)))
#define OFFCPU_CFI_CFA(rule) ((rule)&0xf)
#define OFFCPU_CFI_FP(rule) ((rule) >> 4)

/*
 * The executable mappings of one traced process, for the unwinder (umaps
 * map, key: tgid), written by user space (collect/unwind.c) and sorted by
 * start. base: the runtime address of the table's pc 0 (load bias + the
 * table's base), so that a row's pc is address - base. Tables are packed
 * into arrays of rows ("chunks", 1 MiB or one large table each): adding a
 * map to cfi_files waits for an RCU grace period (milliseconds), adding rows
 * to a chunk does not.
 */
#define OFFCPU_MAX_UMAPS 256 /* a power of two */
#define OFFCPU_MAX_CFI_FILES 4096
#define OFFCPU_UWIN_MAX 4096 /* bytes of user stack above sp copied once per unwind */
#define OFFCPU_RAW_WIN 16384 /* ... copied for user space to unwind (struct offcpu_raw_ustack) */

struct offcpu_umap {
	__u64 start, end; /* [start, end) */
	__u64 base;
	__u32 chunk; /* key in cfi_files of the array holding the table; 0: no table */
	__u32 first; /* the table's first row in that array */
	__u32 nrows; /* its rows; without a table, an OFFCPU_UMARK_* saying why */
	__u32 fid;   /* user space's id of the file (collect/unwind.c); not read here */
};

struct offcpu_umaps {
	__u32 n;
	__u32 pad;
	struct offcpu_umap m[OFFCPU_MAX_UMAPS];
};

/*
 * A user stack left for user space to unwind: the registers and the top of
 * the stack, sent when the process's mappings were not loaded yet (its first
 * switches after exec, before user space has read them). Cut at win + len.
 */
struct offcpu_raw_ustack {
	__u32 type;
	__u32 tgid;
	__u64 id;
	__u64 ip, sp, bp;
	__u64 di;  /* rdi: the return address where a row says so (OFFCPU_CFA_RA_RDI) */
	__u32 len; /* bytes of stack from sp in win */
	__u32 pad;
	__u64 win[OFFCPU_RAW_WIN / 8];
};

/*
 * The targets' threads at start (program snap, an iter/task run once right
 * after the attach, for -p, --cgroup and -a): a thread off the CPU and not
 * yet seen gets its map entry with the stacks it sleeps in and its state, so
 * that its interval from start, and a whole window asleep, carry them. Its
 * kernel frames and user registers and stack come to user space as one
 * record on the iterator's file; the thread's rows name them by these ids
 * (their tag keeps them apart from stack hashes, whose top half is random).
 */
#define OFFCPU_SNAP_KSTACK(tid) (OFFCPU_STACK_REAL | (0x534e4150ULL << 32) | (__u32)(tid))
#define OFFCPU_SNAP_USTACK(tid) (OFFCPU_STACK_REAL | (0x534e4155ULL << 32) | (__u32)(tid))

struct offcpu_snap {
	__u32 size; /* bytes of this record: through u.win[u.len / 8] */
	__u32 tid;
	__u32 knr;   /* kernel frames in kips, innermost first; 0: none */
	__u32 state; /* enum offcpu_bpf_state */
	__u64 kips[OFFCPU_MAX_STACK];
	__u64 exec_ns;	/* se.sum_exec_runtime when read: the thread has not run since if equal */
	__u64 since_ns; /* since its last run began (sched_info.last_arrival); 0: unknown */
	struct offcpu_raw_ustack u; /* u.id 0: no user stack (kernel thread, or not asked) */
};

/*
 * Marker words: the last entry of a user stack the unwinder could not finish
 * says why (OFFCPU_UMARK_BASE | enum offcpu_umark); user space names it
 * "[unwind: REASON in BIN]". A user stack without one is complete.
 */
#define OFFCPU_UMARK_BASE 0xffffffffffffff00ULL
enum offcpu_umark {
	OFFCPU_UMARK_NO_CFI = 1,  /* no table for the binary and no usable frame pointer */
	OFFCPU_UMARK_UNSUPPORTED, /* a CFI rule the unwinder cannot evaluate */
	OFFCPU_UMARK_OUTSIDE,	  /* the next return address lies in no executable mapping */
	OFFCPU_UMARK_UNREADABLE,  /* the stack could not be read (not present, swapped out) */
	OFFCPU_UMARK_TRUNCATED,	  /* OFFCPU_MAX_STACK frames and more */
	OFFCPU_UMARK_NO_MAPS,	  /* the process's mappings were not loaded yet */
	OFFCPU_UMARK_OVER_BUDGET, /* the binary's table did not fit the memory budget */
	OFFCPU_UMARK_PENDING,	  /* its table is built at the first stack that needs it: not yet */
	OFFCPU_UMARK_MAX,
};
#define OFFCPU_UMARK_SLOTS 16 /* offcpu_stats.umarks: a power of two above OFFCPU_UMARK_MAX */

#endif
