// SPDX-License-Identifier: GPL-2.0-only
/*
 * offcpu's kernel side: off-CPU intervals per (thread, kernel stack, user
 * stack, state) from the scheduler tracepoints. Never kprobes.
 *
 * An interval runs from a thread's switch-out (sched_switch, prev) to its
 * next switch-in (sched_switch, next). prev_state and the preempt flag at the
 * switch-out say why it left; the run-queue part is the scheduler's own
 * sched_info accounting read at the switch-in (see queued_ns()), or, on
 * kernels without it, the time since sched_wakeup.
 *
 * Stacks are taken at the switch-out, where the leaving thread is current.
 * Walking them is what costs (an ORC kernel walk and a frame-pointer user walk
 * take microseconds on every context switch), so each thread remembers its
 * last OFFCPU_CACHE_WAYS call sites: a key read cheaply from the thread's
 * registers and user stack, plus the kernel stack offsets of the return
 * addresses, select the stacks walked last time. site_key() says what the key
 * holds and why it pins the walks' results; take_stacks() how hits are
 * checked against real walks so anything the key misses is caught and its
 * damage counted.
 *
 * Each stack is sent to user space once, on the events ring buffer, named by
 * a 64-bit hash of its frames; the stacks map only remembers which were sent.
 * A BPF_MAP_TYPE_STACK_TRACE would drop a new stack whenever its bucket holds
 * another one (-EEXIST), long before it is full.
 *
 * Intervals add up in the thread's cache entry and reach the aggregation map
 * when the entry is replaced, its check fails, or the thread exits; intervals
 * not from the cache go there directly. There are two aggregation maps,
 * agg0/agg1, chosen by `gen`: user space flips gen, waits for an RCU grace
 * period (no program still holds the old map), then drains the old one, so
 * nothing is lost to a read/delete race.
 *
 * The kernel sometimes does not run a tracepoint program for a switch (seen
 * on 6.18 under load, with no recursion miss counted): the thread's schedstat
 * totals, noted at every switch seen, rebuild such an interval (switch_out()
 * and switch_in()).
 *
 * Every program exists twice: tp_btf (direct, typed reads) and raw_tp (CO-RE
 * probe reads) for kernels or setups where tp_btf does not load. User space
 * enables one set with bpf_program__set_autoload().
 *
 * The kernel types come from kernel_types.h (only the fields read, CO-RE
 * relocated), the helpers from stacks.bpf.h (walks), cache.bpf.h (the
 * call-site cache), wakeup.bpf.h (wakeups and wakers) and snapshot.bpf.h
 * (the threads asleep at start).
 */
#include "kernel_types.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "offcpu.h"

char LICENSE[] SEC("license") = "GPL";

#define EEXIST 17
#define ENOMEM 12
#define E2BIG 7
#define EFAULT 14

/* Settings, fixed before load. */
const volatile __u32 target = OFFCPU_TARGET_ALL;
const volatile bool kernel_threads = false;
const volatile __u32 self_tgid = 0;
const volatile __u64 cgroup_id = 0;
const volatile __u32 cgroup_level = 0;
const volatile __u32 state_mask = 0;
const volatile __u64 min_block_ns = 0;
const volatile __u64 max_block_ns = 0;
const volatile bool kernel_stacks = true;
const volatile bool user_stacks = true;
const volatile bool stack_cache = true;
/* User stacks from the .eh_frame tables (unwind.bpf.h), else frame pointers. */
const volatile bool dwarf_unwind = false;
const volatile __u32 check_max = 64;	     /* longest check period, partly verified site */
const volatile __u32 check_max_exact = 1024; /* ... fully verified site */
const volatile bool kmem_direct = false;     /* bpf_rdonly_cast exists (6.2+) */
/*
 * The kernel's BTF ids of the types bpf_rdonly_cast() gives, found by user
 * space: libbpf resolves CO-RE against a BTF of the candidates alone
 * (collect/corebtf.h), whose ids are not the kernel's, so no
 * bpf_core_type_id_kernel(). Constants to the verifier (read-only data).
 */
const volatile __u32 kid_task_struct = 0;
const volatile __u32 kid_pt_regs = 0;
const volatile __u32 kid_timespec64 = 0;
/* bpf_loop exists (5.17+): loops the verifier checks one step of, not every pass. */
const volatile bool have_loop = false;
/* Run-queue time from the scheduler's own sched_info (else from the wakeup tracepoints). */
const volatile bool runq_schedinfo = true;
/* Switch times from the run queue's clock (switch_now()), where user space found it stable. */
const volatile bool switch_rq_clock = false;
const volatile bool switch_has_state = true;
const volatile __u64 track_gap_ns = 10000000ULL;
/* Timeline: send each interval at least timeline_min_ns long (when timeline is set). */
const volatile bool timeline = false;
const volatile __u64 timeline_min_ns = 0;

/*
 * Written by user space: start_ns just before attaching, gen to switch
 * buffers, held_tgid the follow_pid root, held by the caller until it execs:
 * nothing of it is recorded before its exec, which clears held_tgid. Its
 * window starts at its last switch-in before the exec, where schedstat is
 * exact (at the exec tracepoint the running task's is not).
 */
__u64 start_ns = 0;
/*
 * stop_ns: the window's end, written just before the detach, which can take
 * tens of milliseconds (trampolines wait for an RCU-tasks grace period).
 * Events after it are left to user space's account of the threads at stop,
 * or an interval would run past the window its ground truth covers.
 */
__u64 stop_ns = 0;
/*
 * The last period boundary (record --every, native__cut); 0 before the
 * first. An interval that spans it was split there by user space: its part
 * after is counted as carried, and its stacks are those user space gave the
 * part before (so the two halves fall on one row).
 */
__u64 cut_ns = 0;
__u32 gen = 0;
__u32 held_tgid = 0;
/*
 * Keys inserted into the current aggregation map since gen last changed
 * (user space zeroes it then), and the count at which user space is woken
 * to drain (half the map; 0: never). It polls every 200 ms otherwise, and a
 * burst of new keys in between would fill a small map: with the wake, the
 * maps can be sized for what a drain holds, not for 200 ms of a burst.
 */
__u64 agg_fill = 0;
const volatile __u64 agg_wake_at = 0;
/*
 * From kallsyms, which user space reads while the programs load, written
 * before the attach: __schedule, [sched_lo, sched_hi) (0: unknown), and the
 * kernel's interrupt entry code, [irq_lo[i], irq_hi[i]) (irq_lo[0] 0: unknown).
 */
__u64 sched_lo = 0;
__u64 sched_hi = 0;
__u64 irq_lo[OFFCPU_IRQ_RANGES] = {};
__u64 irq_hi[OFFCPU_IRQ_RANGES] = {};

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

/*
 * threads, agg0/agg1 and stacks are written on every switch and preallocate:
 * without it an insert takes from a per-CPU cache refilled later by irq_work,
 * and a burst of new threads at a command's start finds it empty (-ENOMEM:
 * the waits and stacks of the first milliseconds were lost). The ~10 ms of
 * map creation this costs at start is paid while the command is held.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, OFFCPU_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct offcpu_thread);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, OFFCPU_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct offcpu_proc);
} procs SEC(".maps");

/*
 * -p: the last few tgids each CPU switched, and whether procs has them, so
 * that a switch costs no hash lookup in procs or threads when it is another
 * process's (most switches on a server: its clients, other services). The
 * answers hold while procs_gen does: every change to procs's members from the
 * programs bumps it after the change (user space fills procs before attach).
 */
#define OFFCPU_TGID_CACHE 4
struct offcpu_tgid_cache {
	__u32 gen;
	__u32 next;
	__u32 tgid[OFFCPU_TGID_CACHE];
	__u8 yes[OFFCPU_TGID_CACHE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_tgid_cache);
} tgid_cache SEC(".maps");

__u32 procs_gen = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, OFFCPU_MAX_AGG);
	__type(key, struct offcpu_agg_key);
	__type(value, struct offcpu_agg_val);
} agg0 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, OFFCPU_MAX_AGG);
	__type(key, struct offcpu_agg_key);
	__type(value, struct offcpu_agg_val);
} agg1 SEC(".maps");

/* Ids of the stacks already sent to user space. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, OFFCPU_MAX_STACKS);
	__type(key, __u64);
	__type(value, __u8);
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_stack);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_stats);
} stats SEC(".maps");

/* The user stack above bp, for the call-site key. */
struct user_window {
	__u64 w[OFFCPU_UWIN / 8];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct user_window);
} uwin SEC(".maps");

/* Where a new call site's kernel return addresses sit (kernel_sig() output). */
struct kernel_sig {
	__u64 hash;
	__u32 n;
	__u32 j;
	__u32 exact;
	__u16 slot[OFFCPU_KSLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kernel_sig);
} ksig SEC(".maps");

/* The call-site key of the thread leaving now (site_key()), for the cache's global functions. */
struct site_keybuf {
	__u64 k[OFFCPU_KEY_WORDS];
	__u64 pgd; /* not in the key: the leaving thread's page table (upt_walk()), or 0 */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct site_keybuf);
} sitekey SEC(".maps");

/* The waker's kernel stack, walked to tell an interrupt from a thread (see waker_tid()). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[OFFCPU_WAKER_FRAMES]);
} waker_stack SEC(".maps");

#define UPT_PAGES 8 /* the pages a site's words may span (32 KiB), a power of two */

/* The unwinder's state, one per CPU (see unwind.bpf.h). */
struct unwind_state {
	__u64 ip, sp, bp;
	__u64 di;      /* rdi at the switch-out: a return address where a row says so */
	__u64 sp0;     /* sp at the switch-out: where raw.win was copied from */
	__u64 hash;    /* of the words read at slot[], in order */
	__u64 rv;      /* the word uread() read last */
	__u64 bp_addr; /* where bp was restored from, while bp_pending */
	__u64 need_pc; /* with mark OFFCPU_UMARK_PENDING: the address whose table is missing */
	__u32 n;
	__u32 tgid;
	__u32 nslots;
	__u8 bp_ok;    /* bp holds the frame's rbp (not an undefined value) */
	__u8 exact_ip; /* ip is an interrupted pc, not a return address */
	__u8 via_fp; /* this frame was reached by a frame-pointer step: the marker if it is junk */
	__u8 mark;   /* enum offcpu_umark that ended the walk; 0: complete */
	__u8 overflow;	 /* words read that slot[] could not hold */
	__u8 transient;	 /* the walk ended for a reason that may not hold next time */
	__u8 bp_pending; /* bp came from the stack and no frame has used it yet */
	__u8 nocache;	 /* a register the cache's key and words do not hold made the stack */
	__u16 umax;	 /* the largest of slot[] */
	__u16 slot[OFFCPU_USLOTS];
	__u64 page[UPT_PAGES]; /* uslots_direct(): the direct-map address of each stack page */
	__u64 pte;	       /* upt_walk(): where the last page's last-level entry lies */
	/* The registers at switch-out and the window: sent as is when user space must unwind. */
	struct offcpu_raw_ustack raw;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_state);
} ustate SEC(".maps");

/* Executable mappings per process (key: tgid), written by user space. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, OFFCPU_MAX_THREADS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct offcpu_umaps);
} umaps SEC(".maps");

/*
 * Unwind tables, one array of rows per binary (key: the file id of struct
 * offcpu_umap), each as large as its table: user space creates them.
 */
struct cfi_rows {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	/* Mappable: user space fills a table with one copy, not a syscall per row. */
	__uint(map_flags, BPF_F_INNER_MAP | BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	/* By size: the row type is only used through pointers, BTF would have a forward. */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct offcpu_cfi_row));
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH_OF_MAPS);
	__uint(max_entries, OFFCPU_MAX_CFI_FILES);
	__type(key, __u32);
	__array(values, struct cfi_rows);
} cfi_files SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} events SEC(".maps");

/* Unread bytes in events from which a record wakes user space (a quarter of the ring). */
const volatile __u64 ring_wake_bytes = 1 << 18;

/*
 * The wakeup flag for a record sent to events. User space reads the ring
 * every 200 ms without being woken, which is what keeps the per-switch cost
 * low; a burst (a host-wide capture's first stacks, a fork storm) that
 * fills a quarter of the ring before then wakes it, so that the ring can be
 * sized for a burst in flight and not for 200 ms of them.
 */
static __always_inline __u64 ring_wake(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= ring_wake_bytes
		       ? BPF_RB_FORCE_WAKEUP
		       : BPF_RB_NO_WAKEUP;
}

const struct offcpu_thread zero_thread = {};
const struct offcpu_proc zero_proc = {};
const struct offcpu_agg_val zero_val = {};

/* Typed (tp_btf) or probed (raw_tp) read of a kernel field. */
#define RD(btf, p, f) ((btf) ? (p)->f : BPF_CORE_READ(p, f))

#define STAT(field, v)                                                         \
	do {                                                                   \
		__u32 zero_ = 0;                                               \
		struct offcpu_stats *s_ = bpf_map_lookup_elem(&stats, &zero_); \
		if (s_)                                                        \
			__sync_fetch_and_add(&s_->field, (v));                 \
	} while (0)

/* Older kernels: task_struct::state, and cgroup::ancestor_ids. */
struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

struct cgroup___old {
	__u64 ancestor_ids[0];
} __attribute__((preserve_access_index));

static __always_inline __u32 task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___old *)t, state);
}

static __always_inline bool in_cgroup(struct task_struct *t)
{
	struct cgroup *cg = BPF_CORE_READ(t, cgroups, dfl_cgrp);
	__u64 id = 0;

	if (!cg || BPF_CORE_READ(cg, level) < (int)cgroup_level)
		return false;
	if (bpf_core_field_exists(cg->ancestors)) {
		struct cgroup *a = NULL;

		bpf_core_read(&a, sizeof(a), &cg->ancestors[cgroup_level]);
		if (!a)
			return false;
		id = BPF_CORE_READ(a, kn, id);
	} else {
		struct cgroup___old *old = (void *)cg;

		bpf_core_read(&id, sizeof(id), &old->ancestor_ids[cgroup_level]);
	}
	return id == cgroup_id;
}

/* Whether procs has tgid (a -p target), through this CPU's tgid_cache. */
static __always_inline bool target_tgid(__u32 tgid)
{
	__u32 zero = 0, gen = *(volatile __u32 *)&procs_gen, slot;
	struct offcpu_tgid_cache *c = bpf_map_lookup_elem(&tgid_cache, &zero);
	bool yes;

	if (!c)
		return bpf_map_lookup_elem(&procs, &tgid) != NULL;
	if (c->gen == gen) {
		/* tgid is never 0 here (the idle task is not looked up): empty slots never match */
		for (int i = 0; i < OFFCPU_TGID_CACHE; i++)
			if (c->tgid[i] == tgid)
				return c->yes[i];
	} else {
		__builtin_memset(c, 0, sizeof(*c));
		c->gen = gen;
	}
	yes = bpf_map_lookup_elem(&procs, &tgid) != NULL;
	slot = c->next++ & (OFFCPU_TGID_CACHE - 1);
	c->tgid[slot] = tgid;
	c->yes[slot] = yes;
	return yes;
}

/* Whether task t (tgid) is one we trace; decided once per thread, then its map entry says. */
static __always_inline bool wanted(struct task_struct *t, __u32 tgid, const bool btf)
{
	if (!kernel_threads && (RD(btf, t, flags) & OFFCPU_PF_KTHREAD))
		return false;
	switch (target) {
	case OFFCPU_TARGET_TGIDS:
		return bpf_map_lookup_elem(&procs, &tgid) != NULL;
	case OFFCPU_TARGET_CGROUP:
		return tgid != self_tgid && in_cgroup(t);
	default:
		return tgid != self_tgid;
	}
}

static __always_inline __u8 classify(bool preempt, __u32 st)
{
	if (preempt || st == 0)
		return OFFCPU_ST_PREEMPT;
	if (st & OFFCPU_TASK_INTERRUPTIBLE)
		return OFFCPU_ST_SLEEP;
	/* TASK_IDLE (uninterruptible but not counted as load) is an idle wait, not I/O. */
	if (st & OFFCPU_TASK_UNINTERRUPTIBLE)
		return (st & OFFCPU_TASK_NOLOAD) ? OFFCPU_ST_SLEEP : OFFCPU_ST_DISK;
	if (st & OFFCPU_TASK_RTLOCK_WAIT)
		return OFFCPU_ST_DISK;
	return OFFCPU_ST_OTHER;
}

static __always_inline struct offcpu_thread *thread_new(struct task_struct *t, __u32 tid,
							__u32 tgid, __u64 first, const bool btf)
{
	struct offcpu_thread *th;
	long err;

	err = bpf_map_update_elem(&threads, &tid, &zero_thread, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		STAT(map_full_threads, 1);
		return NULL;
	}
	th = bpf_map_lookup_elem(&threads, &tid);
	if (!th)
		return NULL;
	if (!err)
		STAT(threads_tracked, 1);
	th->tgid = tgid;
	th->first_ns = first;
	th->site = OFFCPU_NO_SITE;
	th->base_exec_ns = RD(btf, t, se.sum_exec_runtime);
	if (bpf_core_field_exists(t->sched_info))
		th->base_delay_ns = RD(btf, t, sched_info.run_delay);
	if (btf)
		bpf_probe_read_kernel_str(th->comm, sizeof(th->comm), t->comm);
	else
		BPF_CORE_READ_STR_INTO(&th->comm, t, comm);
	return th;
}

/*
 * now - then, or 0 when then is later: a stamp of the wakeup programs'
 * clock, or one taken across a sync of the switches' clock, may be a few
 * microseconds ahead of a switch's (see switch_now()). Without a branch:
 * one for the verifier to walk twice at each use.
 */
static __always_inline __u64 since(__u64 now, __u64 then)
{
	__u64 d = now - then;

	return d & ~(__u64)((__s64)d >> 63);
}

static __always_inline bool after_stop(__u64 now)
{
	__u64 stop = stop_ns;

	return stop && now >= stop;
}

/*
 * One more key in the current aggregation map: at half full, and every 256
 * keys after (a wake user space took before it read the count, or a ring
 * too full to take one), ask user space to drain.
 */
static __always_inline void agg_filled(void)
{
	__u64 f = __sync_fetch_and_add(&agg_fill, 1) + 1, wake = agg_wake_at;
	__u32 type = OFFCPU_EV_DRAIN;

	if (!wake || f < wake || ((f - wake) & 255))
		return;
	if (bpf_ringbuf_output(&events, &type, sizeof(type), BPF_RB_FORCE_WAKEUP))
		STAT(drain_wake_lost, 1);
	else
		STAT(drain_wakes, 1);
}

/* One addition to the aggregation map: the key, and what to add to its value. */
struct agg_add {
	struct offcpu_agg_key key;
	__u64 count, off, runq;
};

/*
 * Add to the current aggregation map's entry for a->key (made when
 * missing). A global function, verified once: in line, the sched_switch
 * program's five callers had the verifier walk it once per caller and state
 * (2,600 of its 24,000 processed instructions).
 */
__noinline int agg_add(const struct agg_add *a)
{
	struct offcpu_agg_key key;
	struct offcpu_agg_val *v;
	__u32 g = *(volatile __u32 *)&gen;
	long err;

	if (!a)
		return 0;
	key = a->key;
	if (g & 1)
		v = bpf_map_lookup_elem(&agg1, &key);
	else
		v = bpf_map_lookup_elem(&agg0, &key);
	if (!v) {
		if (g & 1)
			err = bpf_map_update_elem(&agg1, &key, &zero_val, BPF_NOEXIST);
		else
			err = bpf_map_update_elem(&agg0, &key, &zero_val, BPF_NOEXIST);
		if (err && err != -EEXIST) {
			STAT(map_full_agg, a->count);
			STAT(map_full_agg_ns, a->off);
			return 0;
		}
		STAT(agg_inserts, 1);
		agg_filled();
		if (g & 1)
			v = bpf_map_lookup_elem(&agg1, &key);
		else
			v = bpf_map_lookup_elem(&agg0, &key);
		if (!v)
			return 0;
	}
	__sync_fetch_and_add(&v->count, a->count);
	__sync_fetch_and_add(&v->off_ns, a->off);
	__sync_fetch_and_add(&v->runq_ns, a->runq);
	return 0;
}

static __always_inline void record(__u32 tgid, __u32 tid, __u64 k, __u64 u, __u32 state,
				   __u64 count, __u64 off, __u64 runq)
{
	struct agg_add a = {
		.key = {.kstack = k, .ustack = u, .tgid = tgid, .tid = tid, .state = state},
		.count = count,
		.off = off,
		.runq = runq,
	};

	agg_add(&a);
}

#include "stacks.bpf.h"
#include "unwind.bpf.h"
#include "cache.bpf.h"
#include "wakeup.bpf.h"

static __always_inline __u64 run_delay(struct task_struct *t, const bool btf);
static __always_inline void close_interval(struct offcpu_thread *th, __u32 tid, __u64 start,
					   __u64 off, __u64 runq, __u64 kbefore, __u64 ubefore);

/*
 * The run of th that ends at now (a switch-out), begun at its last switch-in
 * (mark): what schedstat counted of it beyond its length by the switches'
 * times goes to th->idle_exit_ns. Out of idle, the scheduler's clock is the
 * wakeup's reading (see switch_clock()): the kernel counts the run from
 * there, while the interval the switch-in ended, timed by
 * bpf_ktime_get_ns(), counts the CPU's wake-up as its wait. Taken from the
 * run as a whole, not at the switch-in against the clock offset, so that
 * time the host took the CPU meanwhile (steal, which the kernel leaves out
 * of the run) is not counted as a wake-up.
 */
static __always_inline void run_end(struct offcpu_thread *th, __u64 now, __u64 exec)
{
	__u64 ran = exec - th->mark_exec_ns, span = now - th->mark_ns;

	/* Both marks from this thread's switch-in (a tid reused unseen has less run). */
	if (th->mark_ns && !th->off_ns && now >= th->mark_ns && exec >= th->mark_exec_ns &&
	    ran > span)
		th->idle_exit_ns += ran - span;
}

static __always_inline void thread_exit(struct task_struct *t, __u32 tid, __u64 now, const bool btf)
{
	struct offcpu_thread *th = bpf_map_lookup_elem(&threads, &tid);
	struct offcpu_event *ev;

	if (!th)
		return;
	if (!th->held)
		run_end(th, now, RD(btf, t, se.sum_exec_runtime));
	if (th->off_ns && th->mark_ns && !th->held) {
		/* Its last switch-in went unreported: rebuild that interval (see switch_out()). */
		__u64 span = since(now, th->off_ns);
		__u64 ran = RD(btf, t, se.sum_exec_runtime) - th->mark_exec_ns;

		if (ran <= span) {
			STAT(unseen_switch_in, 1);
			close_interval(th, tid, th->off_ns, span - ran,
				       th->state == OFFCPU_ST_PREEMPT
					       ? span - ran
					       : run_delay(t, btf) - th->mark_delay_ns,
				       OFFCPU_STACK_BEFORE_START, OFFCPU_STACK_BEFORE_START);
		}
	}
#pragma unroll
	for (__u32 w = 0; w < OFFCPU_CACHE_WAYS; w++)
		if (th->tag[w])
			site_flush(th, tid, &th->sites[w]);
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (ev) {
		ev->type = OFFCPU_EV_EXIT;
		ev->tgid = th->tgid;
		ev->tid = tid;
		ev->ptgid = 0;
		ev->first_ns = th->first_ns;
		ev->end_ns = now;
		ev->exec_ns = RD(btf, t, se.sum_exec_runtime) - th->base_exec_ns;
		ev->delay_ns = 0;
		if (bpf_core_field_exists(t->sched_info))
			ev->delay_ns = RD(btf, t, sched_info.run_delay) - th->base_delay_ns;
		ev->switches = th->switches;
		ev->hits = th->hits;
		ev->intervals = th->intervals;
		ev->interval_ns = th->interval_ns;
		ev->idle_exit_ns = th->idle_exit_ns;
		bpf_get_current_comm(ev->comm, sizeof(ev->comm));
		bpf_ringbuf_submit(ev, ring_wake());
	} else {
		STAT(lost_records, 1);
	}
	bpf_map_delete_elem(&threads, &tid);
}

/* schedstat's run-queue total of t (0 without CONFIG_SCHED_INFO). */
static __always_inline __u64 run_delay(struct task_struct *t, const bool btf)
{
	if (bpf_core_field_exists(t->sched_info))
		return RD(btf, t, sched_info.run_delay);
	return 0;
}

/*
 * Send one interval to the timeline (user space keeps those at least
 * timeline_min_ns long), waking user space only when the ring fills
 * (ring_wake()). A full ring drops the interval from the timeline only
 * (counted); the profile has it.
 */
static __always_inline void timeline_send(struct offcpu_thread *th, __u32 tid, __u64 start,
					  __u64 off, __u64 runq, __u64 k, __u64 u, __u32 state)
{
	struct offcpu_interval *iv;

	if (!timeline || off < timeline_min_ns)
		return;
	iv = bpf_ringbuf_reserve(&events, sizeof(*iv), 0);
	if (!iv) {
		STAT(timeline_lost, 1);
		STAT(timeline_lost_ns, off);
		return;
	}
	iv->type = OFFCPU_EV_INTERVAL;
	iv->tgid = th->tgid;
	iv->tid = tid;
	iv->waker = th->waker;
	iv->start_ns = start;
	iv->dur_ns = off;
	iv->runq_ns = runq;
	iv->kstack = k;
	iv->ustack = u;
	iv->state = state;
	iv->pad = 0;
	bpf_ringbuf_submit(iv, ring_wake());
}

/* The end of an interval: see close_interval(). */
struct iv_end {
	__u64 start, off, runq, kbefore, ubefore;
	__u32 tid, pad;
};

/*
 * End thread th's current interval, begun at e->start: e->off off the CPU,
 * e->runq of it runnable. kbefore/ubefore: the stacks to show if the
 * interval began before start. A global function, verified once rather
 * than at each of its four callers (with record() in line, 2,000 processed
 * instructions of the sched_switch program).
 */
__noinline int interval_end(struct offcpu_thread *th, const struct iv_end *e)
{
	__u64 cut = *(volatile __u64 *)&cut_ns;
	__u64 start, off, runq;
	__u32 tid;

	if (!th || !e)
		return 0;
	start = e->start;
	off = e->off;
	runq = e->runq;
	tid = e->tid;
	if (runq > off)
		runq = off;
	if (cut && start < cut && !(th->flags & OFFCPU_TH_FILTERED)) {
		STAT(carried, 1);
		STAT(carried_ns, start + off > cut ? start + off - cut : 0);
	}
	if (th->flags & OFFCPU_TH_FILTERED) {
		STAT(filtered, 1);
	} else if (th->flags & OFFCPU_TH_BEFORE_START) {
		/* Its state at start is known only from the snapshot (snapshot.bpf.h). */
		__u32 st = (th->flags & OFFCPU_TH_SNAPPED) ? th->state : OFFCPU_ST_UNKNOWN;

		record(th->tgid, tid, e->kbefore, e->ubefore, st, 1, off, runq);
		timeline_send(th, tid, start, off, runq, e->kbefore, e->ubefore, st);
		STAT(inflight_start, 1);
		STAT(inflight_start_ns, off);
		th->intervals++;
		th->interval_ns += off;
	} else if ((min_block_ns && off < min_block_ns) || (max_block_ns && off > max_block_ns)) {
		STAT(filtered, 1);
	} else if (th->site < OFFCPU_CACHE_WAYS) {
		struct offcpu_site *s = &th->sites[th->site & (OFFCPU_CACHE_WAYS - 1)];

		th->intervals++;
		th->interval_ns += off;
		s->count++;
		s->off_ns += off;
		s->runq_ns += runq;
		if (th->flags & OFFCPU_TH_UNCHECKED) {
			s->unchecked++;
			s->unchecked_ns += off;
		}
		timeline_send(th, tid, start, off, runq, s->kstack, s->ustack, s->state);
	} else {
		th->intervals++;
		th->interval_ns += off;
		record(th->tgid, tid, th->kstack, th->ustack, th->state, 1, off, runq);
		timeline_send(th, tid, start, off, runq, th->kstack, th->ustack, th->state);
	}
	th->off_ns = 0;
	th->wake_ns = 0;
	th->waker = 0;
	th->woken = 0;
	th->flags = 0;
	th->site = OFFCPU_NO_SITE;
	return 0;
}

static __always_inline void close_interval(struct offcpu_thread *th, __u32 tid, __u64 start,
					   __u64 off, __u64 runq, __u64 kbefore, __u64 ubefore)
{
	struct iv_end e = {
		.start = start,
		.off = off,
		.runq = runq,
		.kbefore = kbefore,
		.ubefore = ubefore,
		.tid = tid,
	};

	interval_end(th, &e);
}

static __always_inline void switch_out(void *ctx, struct task_struct *prev, __u32 tid, bool preempt,
				       __u32 prev_state, __u64 now, const bool btf)
{
	struct offcpu_thread *th;
	__u64 exec, delay;
	__u32 tgid;

	if (prev_state & OFFCPU_TASK_DEAD) {
		thread_exit(prev, tid, now, btf);
		return;
	}
	tgid = RD(btf, prev, tgid);
	if (tgid == held_tgid)
		return;
	if (target == OFFCPU_TARGET_TGIDS && !target_tgid(tgid))
		return;
	th = bpf_map_lookup_elem(&threads, &tid);
	if (th && th->held)
		return;
	if (!th) {
		if (!wanted(prev, tgid, btf))
			return;
		th = thread_new(prev, tid, tgid, now, btf);
		if (!th)
			return;
	}
	/*
	 * Not before its switch-in: that may have read bpf_ktime_get_ns() (out
	 * of idle) and this the run queue's clock, a sync's error apart.
	 */
	now += since(th->mark_ns, now);
	/* Up to date here: __schedule() has just accounted prev's run. */
	exec = RD(btf, prev, se.sum_exec_runtime);
	delay = run_delay(prev, btf);
	run_end(th, now, exec);
	if (th->off_ns) {
		/*
		 * The kernel did not report the switch-in that ended the last
		 * interval. The thread has run exec - mark_exec since: the
		 * rest of the time since the interval began was off the CPU,
		 * and its run-queue part is what schedstat added meanwhile.
		 */
		__u64 span = since(now, th->off_ns), ran = exec - th->mark_exec_ns;

		if (th->mark_ns && ran <= span) {
			STAT(unseen_switch_in, 1);
			close_interval(th, tid, th->off_ns, span - ran,
				       th->state == OFFCPU_ST_PREEMPT ? span - ran
								      : delay - th->mark_delay_ns,
				       OFFCPU_STACK_BEFORE_START, OFFCPU_STACK_BEFORE_START);
		} else {
			STAT(unmatched_switch_in, 1);
		}
	}
	th->off_ns = now;
	th->wake_ns = 0;
	th->waker = 0;
	th->woken = 0;
	th->state = classify(preempt, prev_state);
	th->flags = 0;
	th->tgid = tgid;
	th->mark_ns = now;
	th->mark_exec_ns = exec;
	th->mark_delay_ns = delay;
	if (state_mask && !(state_mask & (1u << th->state))) {
		th->flags = OFFCPU_TH_FILTERED;
		th->site = OFFCPU_NO_SITE;
		return;
	}
	take_stacks(ctx, prev, th, tid, preempt, prev_state, tgid, now, btf);
}

/*
 * How long next has waited on a run queue, by the scheduler's own account:
 * sched_info.last_queued is set when a task is enqueued runnable (woken, or
 * preempted) and consumed right after this tracepoint against rq->clock,
 * which __schedule() has just updated. This is what /proc/PID/schedstat's
 * run_delay adds up, so the split agrees with that ground truth. The run
 * queue is reached through the task's CFS run queue (next is on this CPU's).
 */
static __always_inline __u64 queued_ns(struct task_struct *next, const bool btf)
{
	__u64 q = RD(btf, next, sched_info.last_queued), now;

	if (!q)
		return 0;
	/*
	 * Through an untrusted copy of next where bpf_rdonly_cast exists: each
	 * pointer the verifier follows from a trusted one costs it searches of
	 * the kernel's BTF by name, on every path of a switch-in it explores.
	 * The loads stay plain loads.
	 */
	if (btf && kmem_direct) {
		const struct task_struct *t = bpf_rdonly_cast(next, kid_task_struct);

		now = t->se.cfs_rq->rq->clock;
	} else {
		now = btf ? next->se.cfs_rq->rq->clock : BPF_CORE_READ(next, se.cfs_rq, rq, clock);
	}
	return now > q ? now - q : 0;
}

/*
 * Run-queue time since the thread left the CPU: what schedstat added since
 * then, plus the wait the switch-in is about to add. More than queued alone
 * when the thread waited on another CPU's queue first (it was migrated while
 * runnable: the kernel adds that part when it leaves that queue).
 */
static __always_inline __u64 runq_since_mark(struct offcpu_thread *th, struct task_struct *next,
					     __u64 queued, const bool btf)
{
	__u64 total = run_delay(next, btf) + queued;

	if (!th->mark_ns || total < th->mark_delay_ns)
		return queued;
	return total - th->mark_delay_ns;
}

/* A thread first seen at its switch-in: start tracking it. NULL: not traced. */
static __always_inline struct offcpu_thread *switch_in_new(struct task_struct *next, __u32 tid,
							   __u64 now, const bool btf)
{
	__u32 tgid = RD(btf, next, tgid);
	struct offcpu_thread *th;

	if (tgid == held_tgid) {
		th = thread_new(next, tid, tgid, now, btf);
		if (th)
			th->held = 1;
		return th;
	}
	if (!wanted(next, tgid, btf))
		return NULL;
	return thread_new(next, tid, tgid, start_ns, btf);
}

/*
 * The interval a thread first seen at its switch-in ends. A new thread's
 * first run: its wait since it was made runnable, recorded here (true). If
 * it has run already (its first switches went unreported), its run is left
 * out and its waits so far are the run-queue part. Otherwise it has been off
 * the CPU since before start (no wakeup seen, if they are traced): false,
 * the switch-in closes that interval.
 */
static __always_inline bool first_run(struct offcpu_thread *th, struct task_struct *next, __u32 tid,
				      __u64 now, __u64 exec, __u64 queued, const bool btf)
{
	__u64 born = RD(btf, next, start_time), off, runq;

	if (born <= start_ns || !runq_schedinfo) {
		th->off_ns = start_ns;
		th->wake_ns = start_ns;
		th->state = OFFCPU_ST_UNKNOWN;
		th->flags = OFFCPU_TH_BEFORE_START;
		return false;
	}
	off = now > born + exec ? now - born - exec : 0;
	runq = run_delay(next, btf) + queued;
	if (runq > off)
		runq = off;
	if (exec) {
		STAT(unseen_switch_out, 1);
		STAT(unseen_switch_out_ns, off);
	}
	th->first_ns = born;
	th->base_exec_ns = 0;
	th->base_delay_ns = 0;
	record(th->tgid, tid, OFFCPU_STACK_NEW_THREAD, OFFCPU_STACK_NEW_THREAD, OFFCPU_ST_PREEMPT,
	       1, off, runq);
	timeline_send(th, tid, now - off, off, runq, OFFCPU_STACK_NEW_THREAD,
		      OFFCPU_STACK_NEW_THREAD, OFFCPU_ST_PREEMPT);
	th->intervals = 1;
	th->interval_ns = off;
	return true;
}

/*
 * The kernel did not report the switch-out that began this interval: the
 * thread ran exec - mark_exec after its last switch-in and left the CPU
 * then. Its stack is unknown.
 */
static __always_inline void unseen_switch_out(struct offcpu_thread *th, __u32 tid, __u64 now,
					      __u64 exec, __u64 queued)
{
	__u64 ran = exec - th->mark_exec_ns, off;

	if (!th->mark_ns || th->mark_ns + ran >= now) {
		STAT(unmatched_switch_in, 1);
		return;
	}
	off = now - th->mark_ns - ran;
	STAT(unseen_switch_out, 1);
	STAT(unseen_switch_out_ns, off);
	th->state = OFFCPU_ST_UNKNOWN;
	th->site = OFFCPU_NO_SITE;
	th->kstack = OFFCPU_STACK_UNSEEN;
	th->ustack = OFFCPU_STACK_UNSEEN;
	close_interval(th, tid, now - off, off, queued, 0, 0);
}

/* The switch-in that ends the interval th's switch-out began: its length and run-queue part. */
static __always_inline void switch_in_close(struct offcpu_thread *th, struct task_struct *next,
					    __u32 tid, __u64 now, __u64 exec, __u64 queued,
					    const bool btf)
{
	__u64 off = since(now, th->off_ns), runq, k = OFFCPU_STACK_BEFORE_START, u;

	if (th->mark_ns && exec > th->mark_exec_ns && !(th->flags & OFFCPU_TH_BEFORE_START)) {
		/*
		 * It ran meanwhile: a switch-in and a switch-out went
		 * unreported. Leave its run out of the interval; the part after
		 * the unseen switch-out is shown with the stacks from before.
		 */
		__u64 ran = exec - th->mark_exec_ns;

		off = ran < off ? off - ran : 0;
		STAT(unseen_switch_out, 1);
		STAT(unseen_switch_out_ns, off);
	}
	if (th->state == OFFCPU_ST_PREEMPT || (th->flags & OFFCPU_TH_NEW))
		runq = off;
	else if (runq_schedinfo)
		runq = runq_since_mark(th, next, queued, btf);
	else if (th->wake_ns)
		runq = since(now, th->wake_ns);
	else
		runq = 0;
	if (runq > off)
		runq = off;
	u = user_stacks && !(RD(btf, next, flags) & OFFCPU_PF_KTHREAD) ? OFFCPU_STACK_BEFORE_START
								       : OFFCPU_STACK_NONE;
	if (th->flags & OFFCPU_TH_BEFORE_START) {
		/* Ground truth counts the wait from start only, as the row does. */
		if (th->first_ns == start_ns)
			th->base_delay_ns += queued - runq;
		if (th->flags & OFFCPU_TH_SNAPPED) {
			/* Asleep at start: the stacks it slept in, read then. */
			k = th->kstack;
			u = th->ustack;
		} else if (btf && kernel_stacks && !*(volatile __u64 *)&cut_ns) {
			/*
			 * A bonus, not owed: a failed walk keeps the "before start"
			 * placeholder; so does a wait split at a period boundary.
			 */
			k = walk_task(next);
			if (!(k & OFFCPU_STACK_REAL))
				k = OFFCPU_STACK_BEFORE_START;
		}
	}
	close_interval(th, tid, now - off, off, runq, k, u);
}

static __always_inline void switch_in(struct task_struct *next, __u32 tid, __u64 now,
				      const bool btf)
{
	struct offcpu_thread *th;
	__u64 exec, queued = 0;
	bool first = false;
	__u32 tgid;

	if (target == OFFCPU_TARGET_TGIDS) {
		tgid = RD(btf, next, tgid);
		if (tgid != held_tgid && !target_tgid(tgid))
			return;
	}
	th = bpf_map_lookup_elem(&threads, &tid);
	if (!th) {
		th = switch_in_new(next, tid, now, btf);
		if (!th)
			return;
		first = !th->held;
	}
	exec = RD(btf, next, se.sum_exec_runtime);
	if (runq_schedinfo)
		queued = queued_ns(next, btf);
	if (first && first_run(th, next, tid, now, exec, queued, btf))
		goto mark;
	if (th->held) {
		/*
		 * Until the exec: keep the window's start at the latest switch-in,
		 * and mark it: the run that begins here is the window's first.
		 */
		th->first_ns = now;
		th->base_exec_ns = exec;
		th->base_delay_ns = run_delay(next, btf) + queued;
		th->mark_ns = now;
		th->mark_exec_ns = exec;
		th->mark_delay_ns = th->base_delay_ns;
		STAT(held_skipped, 1);
		return;
	}
	if (!th->off_ns)
		unseen_switch_out(th, tid, now, exec, queued);
	else
		switch_in_close(th, next, tid, now, exec, queued, btf);
mark:
	th->mark_ns = now;
	th->mark_exec_ns = exec;
	th->mark_delay_ns = run_delay(next, btf) + queued;
}

/*
 * The switch clock: CLOCK_MONOTONIC less the run queue's clock (rq->clock:
 * sched_clock, which __schedule() has just read) at the last sync, and the
 * run-queue clock at which to sync again. Shared by all CPUs: two switches
 * it times between syncs differ by exactly what the scheduler's clock
 * advanced, as schedstat counts it.
 */
__u64 clk_off = 0;
__u64 clk_next = 0;

#define CLK_SYNC_NS 50000000ULL /* 50 ms: the two clocks drift apart by ppm (NTP) */
#define CLK_LATE_NS 1000000000ULL

/*
 * When a switch happens, in CLOCK_MONOTONIC nanoseconds, as
 * bpf_ktime_get_ns() would say it: from the clock of the run queue next
 * joins (this CPU's), plus clk_off. A bpf_ktime_get_ns() cost 65 ns of a
 * 600 ns switch on the pinned pipe benchmark (BENCHMARKS.md); the run
 * queue's clock is three loads, and its cache line queued_ns() reads anyway.
 *
 * __schedule() reads the clock first, but skips that when a wakeup asked it
 * to (it will run soon): then the clock is the waker's reading. Measured per
 * kind of switch under a mixed load (offset to the freshest reading seen):
 * out of idle, 2-10 us old in 88% of switches, 10-100 us in 3% (the CPU
 * waking up, a wait the woken thread did have); a task leaving of its own
 * accord, under 2 us in 98%; a preemption, under 2 us in 57% and 2-10 us in
 * 43% (the time to reach the preemption point: schedstat and the run time
 * count from the same reading). So a switch out of idle reads
 * bpf_ktime_get_ns(), the others the run queue's clock, and the offset is
 * taken again (sync: fresh) only when a task blocks; after a second without
 * such a switch, on any.
 */
__noinline __u64 switch_clock(__u64 rq, int fresh)
{
	__u64 now, old, due = *(volatile __u64 *)&clk_next;

	if (rq && (rq < due || (!fresh && rq < due + CLK_LATE_NS)))
		return rq + *(volatile __u64 *)&clk_off;
	now = bpf_ktime_get_ns();
	/* A load through a NULL pointer reads 0; the first sync waits for a fresh reading. */
	if (!rq || (!fresh && !due))
		return now;
	old = clk_off;
	clk_off = now - rq;
	clk_next = rq + CLK_SYNC_NS;
	STAT(clock_syncs, 1);
	if (due)
		STAT(clock_step_ns, now - rq > old ? now - rq - old : old - (now - rq));
	return now;
}

static __always_inline __u64 switch_now(struct task_struct *next, bool from_idle, bool fresh,
					const bool btf)
{
	const struct task_struct *t;

	if (!btf || !kmem_direct || !runq_schedinfo || !switch_rq_clock || from_idle)
		return bpf_ktime_get_ns();
	t = bpf_rdonly_cast(next, kid_task_struct);
	/* A global function: verified once, its paths not the switch's to multiply. */
	return switch_clock(t->se.cfs_rq->rq->clock, fresh);
}

static __always_inline void on_switch(void *ctx, bool preempt, struct task_struct *prev,
				      struct task_struct *next, __u32 prev_state, const bool btf)
{
	__u32 ptid = RD(btf, prev, pid), ntid = RD(btf, next, pid);
	/* pid 0: the idle task; a task that blocks has a state (see switch_clock()). */
	__u64 now = switch_now(next, !ptid, !preempt && ptid && prev_state, btf);

	if (after_stop(now))
		return;
	/* pid 0 is the per-CPU idle task: never recorded. */
	if (ptid)
		switch_out(ctx, prev, ptid, preempt, prev_state, now, btf);
	if (ntid)
		switch_in(next, ntid, now, btf);
}

static __always_inline void on_fork(struct task_struct *parent, struct task_struct *child,
				    const bool btf)
{
	__u32 ptgid, ctgid;
	long err;

	if (target != OFFCPU_TARGET_TGIDS)
		return;
	ptgid = RD(btf, parent, tgid);
	ctgid = RD(btf, child, tgid);
	if (ptgid == ctgid || !bpf_map_lookup_elem(&procs, &ptgid))
		return;
	err = bpf_map_update_elem(&procs, &ctgid, &zero_proc, BPF_NOEXIST);
	if (err && err != -EEXIST)
		STAT(map_full_procs, 1);
	__sync_fetch_and_add(&procs_gen, 1); /* after the change: see tgid_cache */
}

static __always_inline void on_exec(struct task_struct *p, const bool btf)
{
	__u32 tid = RD(btf, p, pid), tgid = RD(btf, p, tgid);
	struct offcpu_thread *th = bpf_map_lookup_elem(&threads, &tid);
	struct offcpu_proc *pr = bpf_map_lookup_elem(&procs, &tgid);
	bool held = tgid == held_tgid; /* forked by the caller: nothing recorded before */

	if (held) {
		/* The caller's workload begins (its window began at its last switch-in). */
		held_tgid = 0;
		if (th)
			th->held = 0;
		else
			th = thread_new(p, tid, tgid, bpf_ktime_get_ns(), btf);
	}
	if (th)
		bpf_get_current_comm(th->comm, sizeof(th->comm));
	if (pr) {
		struct offcpu_event *ev;

		pr->flags &= ~OFFCPU_PROC_NOTIFIED;
		pr->raws = 0;
		/*
		 * Its stacks so far are the old image's: user space names them
		 * with its mappings (symbolizer__exec()), in the ring's order.
		 */
		ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
		if (ev) {
			__builtin_memset(ev, 0, sizeof(*ev));
			ev->type = OFFCPU_EV_EXEC;
			ev->tgid = tgid;
			ev->tid = tid;
			ev->ptgid = held ? 0 : image_parent(p, 1);
			ev->end_ns = bpf_ktime_get_ns(); /* the mappings read before are the old
							    image's */
			bpf_ringbuf_submit(ev, ring_wake());
		} else {
			STAT(track_lost, 1);
		}
	}
	/* A new image: the old one's mappings must not unwind it. */
	bpf_map_delete_elem(&umaps, &tgid);
}

static __always_inline void on_exit(struct task_struct *p, const bool btf)
{
	__u32 tgid = RD(btf, p, tgid);
	/*
	 * A probe read in both flavours: following p->signal from the trusted
	 * p made the verifier search the kernel's BTF by name (its
	 * __safe_trusted types), 1.5-8 ms for this 22-instruction program.
	 */
	int live = BPF_CORE_READ(p, signal, live.counter);

	/* The last thread of the process: its pid may be reused by a stranger. */
	if (live == 0) {
		bpf_map_delete_elem(&procs, &tgid);
		__sync_fetch_and_add(&procs_gen, 1); /* after the change: see tgid_cache */
		bpf_map_delete_elem(&umaps, &tgid);
	}
}

#include "snapshot.bpf.h"

SEC("tp_btf/sched_switch")
int BPF_PROG(sw_btf, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	on_switch(ctx, preempt, prev, next, prev_state, true);
	return 0;
}

SEC("raw_tp/sched_switch")
int BPF_PROG(sw_raw, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 st = switch_has_state ? (__u32)ctx[3] : task_state(prev);

	on_switch(ctx, preempt, prev, next, st, false);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(wk_btf, struct task_struct *p)
{
	on_wakeup(ctx, p, false, true);
	return 0;
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(wk_raw, struct task_struct *p)
{
	on_wakeup(ctx, p, false, false);
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(wkg_btf, struct task_struct *p)
{
	on_waking(ctx, p, true);
	return 0;
}

SEC("raw_tp/sched_waking")
int BPF_PROG(wkg_raw, struct task_struct *p)
{
	on_waking(ctx, p, false);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(wkn_btf, struct task_struct *p)
{
	on_wakeup(ctx, p, true, true);
	return 0;
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(wkn_raw, struct task_struct *p)
{
	on_wakeup(ctx, p, true, false);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(fork_btf, struct task_struct *parent, struct task_struct *child)
{
	on_fork(parent, child, true);
	return 0;
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(fork_raw, struct task_struct *parent, struct task_struct *child)
{
	on_fork(parent, child, false);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(exec_btf, struct task_struct *p)
{
	on_exec(p, true);
	return 0;
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(exec_raw, struct task_struct *p)
{
	on_exec(p, false);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(exit_btf, struct task_struct *p)
{
	on_exit(p, true);
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(exit_raw, struct task_struct *p)
{
	on_exit(p, false);
	return 0;
}

/*
 * User space's questions about kernel symbols, answered by the kernel's own
 * kallsyms index (run with BPF_PROG_TEST_RUN; 5.16+): with len set, the
 * address of the name (bpf_kallsyms_lookup_name); else the symbol holding
 * addr - 1 as "name+off/size [module]" (%pB, the backtrace form). Reading
 * /proc/kallsyms instead makes the kernel format all its 100,000+ symbols:
 * tens of milliseconds, where a record needs a few names and ranges.
 * The helpers take no context memory: the strings go through the stack.
 */
SEC("syscall")
int ksym(struct offcpu_ksym_query *q)
{
	__u64 buf[OFFCPU_KSYM_NAME / 8], addr = 0;
	__u32 len = q->len;

	if (len) {
		if (len > sizeof(buf))
			return 1;
		for (int i = 0; i < OFFCPU_KSYM_NAME / 8; i++)
			buf[i] = q->name[i];
		q->ret = bpf_kallsyms_lookup_name((const char *)buf, len, 0, &addr);
		q->addr = addr;
		return 0;
	}
	addr = q->addr;
	q->ret = bpf_snprintf((char *)buf, sizeof(buf), "%pB", &addr, sizeof(addr));
	for (int i = 0; i < OFFCPU_KSYM_NAME / 8; i++)
		q->name[i] = buf[i];
	return 0;
}

#if OFFCPU_HAVE_DWARF_UNWIND
/*
 * Whether user memory can be read through the page table (upt_walk()):
 * run by user space at start (BPF_PROG_TEST_RUN), in its own context, on a
 * word of its own it names with the value it holds. The direct map starts at
 * page_offset_base where the kernel randomizes it, else at the fixed base of
 * the paging mode. Sets upt_dmap and upt_levels for the switch programs, or
 * leaves them 0.
 */
SEC("syscall")
int upt_probe(struct offcpu_upt_query *q)
{
	static const char sym[] = "page_offset_base";
	const struct task_struct *cur;
	__u64 pgd, base = 0, k, va = q->addr;
	struct unwind_state *st;
	__u32 zero = 0;

	q->levels = 0;
	st = bpf_map_lookup_elem(&ustate, &zero);
	if (!kmem_direct || !st || (va & 7))
		return 1;
	cur = bpf_rdonly_cast((void *)bpf_get_current_task(), kid_task_struct);
	pgd = ptr_value(cur->mm->pgd);
	if (!bpf_kallsyms_lookup_name(sym, sizeof(sym), 0, &base) && base)
		base = kword((const void *)base, 0);
	for (__u32 levels = 4; levels <= 5; levels++) {
		upt_levels = levels;
		upt_dmap = base		 ? base
			   : levels == 4 ? 0xffff888000000000ULL
					 : 0xff11000000000000ULL;
		k = upt_walk(pgd, va & ~4095ULL, st);
		if (k && kword((const void *)k, va & 4095) == q->value) {
			q->levels = levels;
			return 0;
		}
	}
	upt_levels = 0;
	upt_dmap = 0;
	return 0;
}
#endif
