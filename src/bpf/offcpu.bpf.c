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
 */
#include "vmlinux.h"
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
const volatile __u32 check_max = 64;	     /* longest check period, partly verified site */
const volatile __u32 check_max_exact = 1024; /* ... fully verified site */
const volatile bool kmem_direct = false;     /* bpf_rdonly_cast exists (6.2+) */
/* Run-queue time from the scheduler's own sched_info (else from the wakeup tracepoints). */
const volatile bool runq_schedinfo = true;
const volatile __u64 sched_lo = 0;
const volatile __u64 sched_hi = 0;
const volatile bool switch_has_state = true;
const volatile __u64 track_gap_ns = 10000000ULL;
/* Timeline: send each interval at least timeline_min_ns long (when timeline is set). */
const volatile bool timeline = false;
const volatile __u64 timeline_min_ns = 0;
/* The kernel's interrupt entry code, [irq_lo[i], irq_hi[i]); irq_lo[0] 0: unknown. */
const volatile __u64 irq_lo[OFFCPU_IRQ_RANGES] = {};
const volatile __u64 irq_hi[OFFCPU_IRQ_RANGES] = {};

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
__u32 gen = 0;
__u32 held_tgid = 0;

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct offcpu_thread);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct offcpu_proc);
} procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct offcpu_agg_key);
	__type(value, struct offcpu_agg_val);
} agg0 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct offcpu_agg_key);
	__type(value, struct offcpu_agg_val);
} agg1 SEC(".maps");

/* Ids of the stacks already sent to user space. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
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

/* The waker's kernel stack, walked to tell an interrupt from a thread (see waker_tid()). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64[OFFCPU_WAKER_FRAMES]);
} waker_stack SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} events SEC(".maps");

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

/* 64-bit hash of frames [first, nr); bit 63 set marks a real stack id. */
static __always_inline __u64 stack_hash(const struct offcpu_stack *s, __u64 seed)
{
	__u64 h = seed ^ ((__u64)(s->nr - s->first) * 0x9e3779b97f4a7c15ULL);

	for (__u32 i = 0; i < OFFCPU_MAX_STACK; i++) {
		if (i >= s->nr)
			break;
		if (i < s->first)
			continue;
		h ^= s->ips[i];
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 33;
	}
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h | OFFCPU_STACK_REAL;
}

/*
 * Commit the n bytes of frames a walk left in this CPU's scratch buffer: drop
 * tracer frames, hash, store. Returns the stack's id, or an errno at most
 * OFFCPU_STACK_ERRNO_MAX. A global function, so the verifier checks its loops
 * once rather than at every call site.
 */
__noinline __u64 stack_commit(long n, __u32 user)
{
	struct offcpu_stack *buf;
	__u32 zero = 0;
	__u8 one = 1;
	__u64 id, size;

	if (n < 0)
		return -n > OFFCPU_STACK_ERRNO_MAX ? OFFCPU_STACK_ERRNO_MAX : -n;
	/* A user walk of a task without user context (exiting) finds nothing: no stack. */
	if (n == 0)
		return user ? OFFCPU_STACK_NONE : EFAULT;
	buf = bpf_map_lookup_elem(&scratch, &zero);
	if (!buf)
		return ENOMEM;
	buf->nr = n / sizeof(__u64);
	buf->first = 0;
	if (buf->nr >= OFFCPU_MAX_STACK)
		STAT(stack_truncated, 1);
	if (!user && sched_lo) {
		/*
		 * The walk starts in this program: drop the tracer frames
		 * (bpf_prog_*, bpf_trace_run*, __bpf_trace_*, __traceiter_*,
		 * helper internals) above __schedule, whose number depends on
		 * who else is attached to the tracepoint.
		 */
		__u32 i;

		for (i = 0; i < OFFCPU_MAX_TRACER_FRAMES && i < buf->nr; i++)
			if (buf->ips[i] >= sched_lo && buf->ips[i] < sched_hi)
				break;
		if (i == OFFCPU_MAX_TRACER_FRAMES || i == buf->nr)
			STAT(unanchored, 1);
		else if (i)
			STAT(tracer_frames, 1);
		if (i < OFFCPU_MAX_TRACER_FRAMES && i < buf->nr)
			buf->first = i;
	}
	id = stack_hash(buf, user ? 0x5bd1e9955bd1e995ULL : 0x27d4eb2f165667c5ULL);
	buf->pad = 0;
	if (bpf_map_lookup_elem(&stacks, &id))
		return id;
	/*
	 * New: send the frames, then remember the id. If the stacks map is
	 * full the id is not remembered and the stack is sent again next
	 * time, which costs ring buffer space but loses nothing.
	 */
	buf->type = OFFCPU_EV_STACK;
	buf->pad = 1; /* new: the caller may want the process tracked again */
	buf->id = id;
	size = offsetof(struct offcpu_stack, ips) + (buf->nr & 0x7f) * sizeof(__u64);
	if (size > sizeof(*buf) || bpf_ringbuf_output(&events, buf, size, BPF_RB_NO_WAKEUP))
		return OFFCPU_STACK_LOST;
	bpf_map_update_elem(&stacks, &id, &one, BPF_NOEXIST);
	return id;
}

/* Walk the current task's kernel or user stack. */
static __always_inline __u64 walk(void *ctx, bool user)
{
	struct offcpu_stack *buf;
	__u32 zero = 0;
	long n;

	buf = bpf_map_lookup_elem(&scratch, &zero);
	if (!buf)
		return ENOMEM;
	if (user) {
		STAT(walks_user, 1);
		n = bpf_get_stack(ctx, buf->ips, OFFCPU_MAX_STACK * 8, BPF_F_USER_STACK);
	} else {
		STAT(walks_kernel, 1);
		n = bpf_get_stack(ctx, buf->ips, OFFCPU_MAX_STACK * 8, 0);
	}
	return stack_commit(n, user);
}

static __always_inline bool stack_ok(__u64 id)
{
	return id == OFFCPU_STACK_NONE || (id & OFFCPU_STACK_REAL);
}

/*
 * Ask user space to snapshot a process's mappings while it lives: at its
 * first user stack (after start or exec), and again when a user stack never
 * seen before shows up (a library loaded since, the loader done), at most
 * every track_gap_ns (a later walk sends what was held back).
 */
static __always_inline void notify_track(__u32 tgid, __u64 now, bool new_stack)
{
	struct offcpu_proc *p = bpf_map_lookup_elem(&procs, &tgid);
	struct offcpu_event *ev;

	if (!p) {
		if (target == OFFCPU_TARGET_TGIDS)
			return;
		bpf_map_update_elem(&procs, &tgid, &zero_proc, BPF_NOEXIST);
		p = bpf_map_lookup_elem(&procs, &tgid);
		if (!p)
			return;
	}
	if (p->flags & OFFCPU_PROC_NOTIFIED) {
		if (!new_stack && !(p->flags & OFFCPU_PROC_PENDING))
			return;
		if (now - p->notified_ns < track_gap_ns) {
			p->flags |= OFFCPU_PROC_PENDING;
			return;
		}
	}
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev)
		return;
	__builtin_memset(ev, 0, sizeof(*ev));
	ev->type = OFFCPU_EV_TRACK;
	ev->tgid = tgid;
	bpf_ringbuf_submit(ev, 0);
	p->flags = (p->flags | OFFCPU_PROC_NOTIFIED) & ~OFFCPU_PROC_PENDING;
	p->notified_ns = now;
}

static __always_inline __u64 mix(__u64 h, __u64 v)
{
	h ^= v;
	h *= 0xff51afd7ed558ccdULL;
	return h ^ (h >> 33);
}

/* The kernel word at p + off (0 if unreadable): a plain load where the kernel allows it. */
static __always_inline __u64 kword(const void *p, __u64 off)
{
	struct timespec64 *w;
	__u64 v = 0;

	if (kmem_direct) {
		w = bpf_rdonly_cast(p + off, bpf_core_type_id_kernel(struct timespec64));
		return w->tv_sec;
	}
	bpf_probe_read_kernel(&v, sizeof(v), p + off);
	return v;
}

/* A pointer's value as a number (the verifier keeps pointer types otherwise). */
static __always_inline __u64 ptr_value(const void *p)
{
	const void *slot = p;
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), &slot);
	return v;
}

/*
 * Hash of the user frame-pointer chain as far as it lies within OFFCPU_UWIN
 * bytes above bp: every word the frame-pointer walk reads there (each frame's
 * return address, and its saved bp where the walk goes on to read it). Bit 0
 * set: the chain ends inside the window, so the walk reads nothing else and
 * the hash fixes the whole stack.
 */
static __always_inline bool no_user_memory(__u64 fp)
{
	return fp < 65536 || fp >= 0x00007ffffffff000ULL;
}

__noinline __u64 user_chain(__u64 bp)
{
	struct user_window *w;
	__u64 h = 0x9e3779b97f4a7c15ULL, fp = bp, len = OFFCPU_UWIN - 16;
	__u32 zero = 0;

	/*
	 * Where no user memory can be (below mmap_min_addr, above the 47-bit
	 * user space), the walk's read fails whatever the exact value: a clean
	 * end. Callers built without frame pointers leave a register there,
	 * often a small counter.
	 */
	if (no_user_memory(bp))
		return h | 1;
	w = bpf_map_lookup_elem(&uwin, &zero);
	if (!w)
		return 0;
	/* Near the top of a stack mapping the full window may not be readable. */
	if (bpf_probe_read_user(w->w, OFFCPU_UWIN, (void *)bp)) {
		len = 64 - 16;
		if (bpf_probe_read_user(w->w, 64, (void *)bp))
			return 0;
	}
	/* A frame takes 16 bytes at least: the window holds at most this many. */
	for (__u32 i = 0; i < OFFCPU_UWIN / 16; i++) {
		__u64 off = fp - bp, next;

		if (off > len || (fp & 7))
			return no_user_memory(fp) ? h | 1 : h & ~1ULL;
		off >>= 3;
		next = w->w[off & (OFFCPU_UWIN / 8 - 1)];
		h = (h ^ w->w[(off + 1) & (OFFCPU_UWIN / 8 - 1)]) * 0xff51afd7ed558ccdULL;
		if (!no_user_memory(next))
			h ^= next;
		fp = next;
	}
	/* Still inside after as many frames as fit: it cycles there. */
	return h | 1;
}

/*
 * Where the kernel return addresses of the stack just walked (in this CPU's
 * scratch buffer) sit, as word offsets from the tracepoint's ctx, and a hash
 * of their values; into this CPU's ksig. A frame is found by searching
 * upwards for its return address. exact: all frames between __schedule and
 * the entry code were found, and the last one is the word below the user
 * pt_regs (entry_ret, part of the key). Runs on cache misses only.
 */
__noinline int kernel_sig(__u64 base, __u64 entry_ret)
{
	struct offcpu_stack *buf;
	struct kernel_sig *sig;
	__u32 zero = 0, last;

	buf = bpf_map_lookup_elem(&scratch, &zero);
	sig = bpf_map_lookup_elem(&ksig, &zero);
	if (!buf || !sig)
		return 0;
	sig->hash = 0x9e3779b97f4a7c15ULL;
	sig->n = 0;
	sig->j = buf->first;
	sig->exact = 0;
	last = buf->nr - 1;
	if (last >= OFFCPU_MAX_STACK)
		return 0;
	for (__u32 w = 0; w < OFFCPU_KSCAN; w++) {
		__u32 j = sig->j, n = sig->n;
		__u64 v;

		if (j >= last || n >= OFFCPU_KSLOTS)
			break;
		v = kword((const void *)base, (__u64)w * 8);
		if (v != buf->ips[j & 127])
			continue;
		sig->slot[n & (OFFCPU_KSLOTS - 1)] = w;
		sig->hash = mix(sig->hash, v);
		sig->n = n + 1;
		sig->j = j + 1;
	}
	sig->exact = sig->j == last && buf->ips[last & 127] == entry_ret;
	return 0;
}

/*
 * The call-site key of the thread leaving now, read without walking:
 *
 *   0 user ip     where the thread entered the kernel
 *   1 user sp
 *   2 user bp     start of the frame-pointer chain
 *   3 user_chain(): the chain's words within OFFCPU_UWIN bytes above bp
 *   4 orig_ax     syscall number (exception error code, irq vector otherwise)
 *   5 the word below the user pt_regs: the return address into the entry
 *     code (entry_SYSCALL_64, asm_exc_page_fault, asm_sysvec_*), the
 *     outermost kernel frame
 *   6 prev_state << 1 | in_iowait
 *
 * The kernel frames in between are not in the key: a site keeps the stack
 * offsets of its return addresses (kernel_sig()), and a hit requires the
 * same values at the same offsets now (kslots_match()). The kernel walk is a
 * function of those values (ORC: each return address gives the next one's
 * offset), so a hit of a kernel-exact site gives the stack the walk would.
 */
static __always_inline void site_key(void *ctx, struct task_struct *t, __u32 prev_state,
				     bool kthread, __u64 *k, const bool btf)
{
	struct task_struct *cur = btf ? t : bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(cur);

	if (!regs)
		return;
	if (!kthread) {
		k[0] = regs->ip;
		k[1] = regs->sp;
		k[2] = regs->bp;
		k[4] = regs->orig_ax;
		if (user_stacks)
			k[3] = user_chain(k[2]);
	}
	if (kernel_stacks)
		k[5] = kword(regs, -8);
	k[6] = ((__u64)(prev_state & 0x7fffffff) << 1) |
	       (BPF_CORE_READ_BITFIELD(cur, in_iowait) & 1);
}

static __always_inline bool key_eq(const __u64 *a, const __u64 *b)
{
	__u64 d = 0;

#pragma unroll
	for (int i = 0; i < OFFCPU_KEY_WORDS; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

/* A 32-bit summary of a key, never 0 (0 marks an empty cache entry). */
static __always_inline __u32 key_tag(const __u64 *k)
{
	__u64 h = 0x9e3779b97f4a7c15ULL;

#pragma unroll
	for (int i = 0; i < OFFCPU_KEY_WORDS; i++)
		h = mix(h, k[i]);
	return (__u32)(h >> 32) | 1;
}

static __always_inline bool kslots_match(void *ctx, const struct offcpu_site *s)
{
	__u64 h = 0x9e3779b97f4a7c15ULL;

	for (__u32 i = 0; i < OFFCPU_KSLOTS; i++) {
		if (i >= s->nk)
			break;
		h = mix(h, kword(ctx, (__u64)(s->kslot[i] & (OFFCPU_KSCAN - 1)) * 8));
	}
	return h == s->khash;
}

static __always_inline void record(__u32 tgid, __u32 tid, __u64 k, __u64 u, __u32 state,
				   __u64 count, __u64 off, __u64 runq);

/* Move a site's accumulated weight to the aggregation map. */
static __always_inline void site_flush(struct offcpu_thread *th, __u32 tid, struct offcpu_site *s)
{
	if (!s->count)
		return;
	record(th->tgid, tid, s->kstack, s->ustack, s->state, s->count, s->off_ns, s->runq_ns);
	s->count = 0;
	s->off_ns = 0;
	s->runq_ns = 0;
}

/*
 * Stacks of the thread leaving now, into th->kstack/ustack, and the cache
 * entry its interval will be added to (th->site).
 *
 * Preemptions (the preempt flag) and "other" states always walk: a kernel
 * preemption can land anywhere. Everything else looks up the thread's
 * call-site cache: the key must be equal and the kernel frames must sit where
 * they sat (kslots_match()). A hit reuses the remembered stacks, except every
 * period-th hit, which walks and compares: a match doubles the period (up to
 * check_max_exact for a site verified whole, check_max otherwise), a
 * difference resets it to 1, replaces the stacks, and counts every interval
 * attributed since the last check as possibly misattributed
 * (stack_cache_mismatch, an upper bound). New entries start at period 1.
 */
static __always_inline void take_stacks(void *ctx, struct task_struct *t, struct offcpu_thread *th,
					__u32 tid, bool preempt, __u32 prev_state, __u32 tgid,
					__u64 now, const bool btf)
{
	bool kthread = RD(btf, t, flags) & OFFCPU_PF_KTHREAD;
	bool cache = stack_cache && !preempt && th->state != OFFCPU_ST_OTHER;
	__u64 key[OFFCPU_KEY_WORDS] = {};
	struct offcpu_site *s = NULL;
	struct kernel_sig *sig;
	__u32 hit = OFFCPU_CACHE_WAYS, zero = 0, way, tag = 0;
	__u64 k, u;

	th->site = OFFCPU_NO_SITE;
	th->switches++;
	if (cache) {
		site_key(ctx, t, prev_state, kthread, key, btf);
		tag = key_tag(key);
#pragma unroll
		for (__u32 w = 0; w < OFFCPU_CACHE_WAYS; w++) {
			if (th->tag[w] != tag || !key_eq(th->sites[w].key, key))
				continue;
			if (kslots_match(ctx, &th->sites[w]))
				hit = w;
			else
				STAT(kslot_rejects, 1);
		}
		if (hit < OFFCPU_CACHE_WAYS) {
			s = &th->sites[hit];
			if (++s->hits < s->period) {
				th->kstack = s->kstack;
				th->ustack = s->ustack;
				th->site = hit;
				th->flags |= OFFCPU_TH_UNCHECKED;
				th->hits++;
				return;
			}
			STAT(cache_checks, 1);
		}
	}

	k = kernel_stacks ? walk(ctx, false) : OFFCPU_STACK_NONE;
	/* Locate the frames while the kernel walk is still in the scratch buffer. */
	if (cache && !s && kernel_stacks)
		kernel_sig(ptr_value(ctx), key[5]);
	u = user_stacks && !kthread ? walk(ctx, true) : OFFCPU_STACK_NONE;
	th->kstack = k;
	th->ustack = u;
	if (u & OFFCPU_STACK_REAL) {
		struct offcpu_stack *buf = bpf_map_lookup_elem(&scratch, &zero);

		notify_track(tgid, now, buf && buf->pad);
	}
	if (!cache)
		return;
	if (!stack_ok(k) || !stack_ok(u)) {
		/* A failed walk says nothing about the key: keep the entry as it was. */
		if (s)
			s->hits = 0;
		return;
	}
	if (s) {
		if (k == s->kstack && u == s->ustack) {
			__u32 max = s->exact == (OFFCPU_SITE_KERNEL_EXACT | OFFCPU_SITE_USER_EXACT)
					    ? check_max_exact
					    : check_max;

			if (s->period < max)
				s->period *= 2;
		} else {
			if (k != s->kstack)
				STAT(check_failed_kernel, 1);
			if (u != s->ustack)
				STAT(check_failed_user, 1);
			STAT(cache_mismatch, s->unchecked);
			STAT(cache_mismatch_ns, s->unchecked_ns);
			site_flush(th, tid, s);
			s->period = 1;
			s->kstack = k;
			s->ustack = u;
		}
		s->hits = 0;
		s->unchecked = 0;
		s->unchecked_ns = 0;
		th->site = hit;
		return;
	}

	/* A new call site replaces the oldest entry (round robin). */
	STAT(cache_misses, 1);
	way = th->clock++ & (OFFCPU_CACHE_WAYS - 1);
	s = &th->sites[way];
	if (th->tag[way])
		site_flush(th, tid, s);
	th->tag[way] = tag;
	__builtin_memcpy(s->key, key, sizeof(key));
	s->kstack = k;
	s->ustack = u;
	s->state = th->state;
	s->hits = 0;
	s->period = 1;
	s->unchecked = 0;
	s->unchecked_ns = 0;
	s->nk = 0;
	s->khash = 0x9e3779b97f4a7c15ULL;
	s->exact = 0;
	if (kernel_stacks) {
		sig = bpf_map_lookup_elem(&ksig, &zero);
		if (sig) {
			s->nk = sig->n;
			s->khash = sig->hash;
			__builtin_memcpy(s->kslot, sig->slot, sizeof(s->kslot));
			if (sig->exact)
				s->exact |= OFFCPU_SITE_KERNEL_EXACT;
		}
	} else {
		s->exact |= OFFCPU_SITE_KERNEL_EXACT;
	}
	if (!user_stacks || kthread || (key[3] & 1))
		s->exact |= OFFCPU_SITE_USER_EXACT;
	STAT(sites_made, 1);
	if (s->exact & OFFCPU_SITE_KERNEL_EXACT)
		STAT(sites_kernel_exact, 1);
	if (s->exact & OFFCPU_SITE_USER_EXACT)
		STAT(sites_user_exact, 1);
	th->site = way;
}

static __always_inline void record(__u32 tgid, __u32 tid, __u64 k, __u64 u, __u32 state,
				   __u64 count, __u64 off, __u64 runq)
{
	struct offcpu_agg_key key = {
		.kstack = k,
		.ustack = u,
		.tgid = tgid,
		.tid = tid,
		.state = state,
	};
	struct offcpu_agg_val *v;
	__u32 g = *(volatile __u32 *)&gen;
	long err;

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
			STAT(map_full_agg, count);
			STAT(map_full_agg_ns, off);
			return;
		}
		STAT(agg_inserts, 1);
		if (g & 1)
			v = bpf_map_lookup_elem(&agg1, &key);
		else
			v = bpf_map_lookup_elem(&agg0, &key);
		if (!v)
			return;
	}
	__sync_fetch_and_add(&v->count, count);
	__sync_fetch_and_add(&v->off_ns, off);
	__sync_fetch_and_add(&v->runq_ns, runq);
}

/* Kernel stack of a thread that is not running (its stack is intact until it runs). */
static __always_inline __u64 walk_task(struct task_struct *t)
{
	struct offcpu_stack *buf;
	__u32 zero = 0;
	long n;

	buf = bpf_map_lookup_elem(&scratch, &zero);
	if (!buf)
		return ENOMEM;
	STAT(walks_kernel, 1);
	n = bpf_get_task_stack(t, buf->ips, OFFCPU_MAX_STACK * 8, 0);
	return stack_commit(n, false);
}

static __always_inline __u64 run_delay(struct task_struct *t, const bool btf);
static __always_inline void close_interval(struct offcpu_thread *th, __u32 tid, __u64 start,
					   __u64 off, __u64 runq, __u64 kbefore, __u64 ubefore);

static __always_inline void thread_exit(struct task_struct *t, __u32 tid, __u64 now, const bool btf)
{
	struct offcpu_thread *th = bpf_map_lookup_elem(&threads, &tid);
	struct offcpu_event *ev;

	if (!th)
		return;
	if (th->off_ns && th->mark_ns && !th->held) {
		/* Its last switch-in went unreported: rebuild that interval (see switch_out()). */
		__u64 span = now - th->off_ns;
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
		ev->pad = 0;
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
		bpf_get_current_comm(ev->comm, sizeof(ev->comm));
		bpf_ringbuf_submit(ev, BPF_RB_NO_WAKEUP);
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
 * timeline_min_ns long). Not waking user space: it reads the ring every
 * 200 ms, and the ring is sized for that when the timeline is on. A full
 * ring drops the interval from the timeline only (counted); the profile has it.
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
	bpf_ringbuf_submit(iv, BPF_RB_NO_WAKEUP);
}

/*
 * End th's current interval, begun at start: off_ns off the CPU, runq_ns of
 * it runnable. kbefore/ubefore: the stacks to show if the interval began
 * before start.
 */
static __always_inline void close_interval(struct offcpu_thread *th, __u32 tid, __u64 start,
					   __u64 off, __u64 runq, __u64 kbefore, __u64 ubefore)
{
	if (runq > off)
		runq = off;
	if (th->flags & OFFCPU_TH_FILTERED) {
		STAT(filtered, 1);
	} else if (th->flags & OFFCPU_TH_BEFORE_START) {
		record(th->tgid, tid, kbefore, ubefore, OFFCPU_ST_UNKNOWN, 1, off, runq);
		timeline_send(th, tid, start, off, runq, kbefore, ubefore, OFFCPU_ST_UNKNOWN);
		STAT(inflight_start, 1);
		STAT(inflight_start_ns, off);
		th->intervals++;
		th->interval_ns += off;
	} else if ((min_block_ns && off < min_block_ns) || (max_block_ns && off > max_block_ns)) {
		STAT(filtered, 1);
	} else if (th->site < OFFCPU_CACHE_WAYS) {
		struct offcpu_site *s = &th->sites[th->site];

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
	/* Up to date here: __schedule() has just accounted prev's run. */
	exec = RD(btf, prev, se.sum_exec_runtime);
	delay = run_delay(prev, btf);
	if (th->off_ns) {
		/*
		 * The kernel did not report the switch-in that ended the last
		 * interval. The thread has run exec - mark_exec since: the
		 * rest of the time since the interval began was off the CPU,
		 * and its run-queue part is what schedstat added meanwhile.
		 */
		__u64 span = now - th->off_ns, ran = exec - th->mark_exec_ns;

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
	now = btf ? next->se.cfs_rq->rq->clock : BPF_CORE_READ(next, se.cfs_rq, rq, clock);
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

static __always_inline void switch_in(struct task_struct *next, __u32 tid, __u64 now,
				      const bool btf)
{
	struct offcpu_thread *th = bpf_map_lookup_elem(&threads, &tid);
	__u64 off, runq, born, exec, queued = 0, k = OFFCPU_STACK_BEFORE_START, u;
	__u32 tgid;

	if (!th) {
		tgid = RD(btf, next, tgid);
		if (tgid == held_tgid) {
			th = thread_new(next, tid, tgid, now, btf);
			if (!th)
				return;
			th->held = 1;
		} else {
			if (!wanted(next, tgid, btf))
				return;
			th = thread_new(next, tid, tgid, start_ns, btf);
			if (!th)
				return;
			born = RD(btf, next, start_time);
			if (born > start_ns && runq_schedinfo) {
				/*
				 * A new thread's first run: its wait since it was
				 * made runnable. If it has run already (its first
				 * switches went unreported), its run is left out
				 * and its waits so far are the run-queue part.
				 */
				exec = RD(btf, next, se.sum_exec_runtime);
				queued = queued_ns(next, btf);
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
				record(tgid, tid, OFFCPU_STACK_NEW_THREAD, OFFCPU_STACK_NEW_THREAD,
				       OFFCPU_ST_PREEMPT, 1, off, runq);
				timeline_send(th, tid, now - off, off, runq, OFFCPU_STACK_NEW_THREAD,
					      OFFCPU_STACK_NEW_THREAD, OFFCPU_ST_PREEMPT);
				th->intervals = 1;
				th->interval_ns = off;
				goto mark;
			}
			/* Off the CPU since before start (no wakeup seen, if they are traced). */
			th->off_ns = start_ns;
			th->wake_ns = start_ns;
			th->state = OFFCPU_ST_UNKNOWN;
			th->flags = OFFCPU_TH_BEFORE_START;
		}
	}
	exec = RD(btf, next, se.sum_exec_runtime);
	if (runq_schedinfo)
		queued = queued_ns(next, btf);
	if (th->held) {
		/* Until the exec: keep the window's start at the latest switch-in. */
		th->first_ns = now;
		th->base_exec_ns = exec;
		th->base_delay_ns = run_delay(next, btf) + queued;
		STAT(held_skipped, 1);
		return;
	}
	if (!th->off_ns) {
		/*
		 * The kernel did not report the switch-out that began this
		 * interval: the thread ran exec - mark_exec after its last
		 * switch-in and left the CPU then. Its stack is unknown.
		 */
		__u64 ran = exec - th->mark_exec_ns;

		if (th->mark_ns && th->mark_ns + ran < now) {
			off = now - th->mark_ns - ran;
			STAT(unseen_switch_out, 1);
			STAT(unseen_switch_out_ns, off);
			th->state = OFFCPU_ST_UNKNOWN;
			th->site = OFFCPU_NO_SITE;
			th->kstack = OFFCPU_STACK_UNSEEN;
			th->ustack = OFFCPU_STACK_UNSEEN;
			close_interval(th, tid, now - off, off, queued, 0, 0);
		} else {
			STAT(unmatched_switch_in, 1);
		}
		goto mark;
	}
	off = now - th->off_ns;
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
		runq = now - th->wake_ns;
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
		/* A bonus, not owed: a failed walk keeps the "before start" placeholder. */
		if (btf && kernel_stacks) {
			k = walk_task(next);
			if (!(k & OFFCPU_STACK_REAL))
				k = OFFCPU_STACK_BEFORE_START;
		}
	}
	close_interval(th, tid, now - off, off, runq, k, u);
mark:
	th->mark_ns = now;
	th->mark_exec_ns = exec;
	th->mark_delay_ns = run_delay(next, btf) + queued;
}

static __always_inline bool after_stop(__u64 now)
{
	__u64 stop = stop_ns;

	return stop && now >= stop;
}

static __always_inline void on_switch(void *ctx, bool preempt, struct task_struct *prev,
				      struct task_struct *next, __u32 prev_state, const bool btf)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 ptid = RD(btf, prev, pid), ntid = RD(btf, next, pid);

	if (after_stop(now))
		return;
	/* pid 0 is the per-CPU idle task: never recorded. */
	if (ptid)
		switch_out(ctx, prev, ptid, preempt, prev_state, now, btf);
	if (ntid)
		switch_in(next, ntid, now, btf);
}

/*
 * The thread doing a wakeup, for the timeline; 0 when unknown. A wakeup from
 * an interrupt (a timer expiring, an I/O completion, a softirq) runs on top
 * of whichever thread it interrupted, so the kernel stack is walked and a
 * return address in the interrupt entry code (irq_lo/irq_hi, from kallsyms)
 * makes the waker unknown. So does a walk that found no entry code within
 * OFFCPU_WAKER_FRAMES frames, and a kernel whose entry code is unknown.
 */
static __always_inline __u32 waker_tid(void *ctx)
{
	__u32 zero = 0;
	__u64 *ips;
	long n;
	__u32 nr;

	if (!timeline || !irq_lo[0])
		return 0;
	ips = bpf_map_lookup_elem(&waker_stack, &zero);
	if (!ips)
		return 0;
	n = bpf_get_stack(ctx, ips, OFFCPU_WAKER_FRAMES * 8, 0);
	if (n <= 0 || n >= OFFCPU_WAKER_FRAMES * 8)
		return 0;
	nr = (__u32)n >> 3;
	for (__u32 i = 0; i < OFFCPU_WAKER_FRAMES; i++) {
		if (i >= nr)
			break;
		for (int r = 0; r < OFFCPU_IRQ_RANGES; r++)
			if (ips[i] >= irq_lo[r] && ips[i] < irq_hi[r])
				return 0;
	}
	return (__u32)bpf_get_current_pid_tgid();
}

static __always_inline void on_wakeup(void *ctx, struct task_struct *p, bool new, const bool btf)
{
	__u32 tid = RD(btf, p, pid), tgid;
	struct offcpu_thread *th;
	__u64 now;

	if (!tid)
		return;
	now = bpf_ktime_get_ns();
	if (after_stop(now))
		return;
	th = bpf_map_lookup_elem(&threads, &tid);
	if (!th || new) {
		tgid = RD(btf, p, tgid);
		if (tgid == held_tgid)
			return;
		if (!th && !wanted(p, tgid, btf))
			return;
		if (!th)
			th = thread_new(p, tid, tgid, now, btf);
		if (!th) {
			STAT(unmatched_wakeups, 1);
			return;
		}
		if (new) {
			/* A new thread: runnable from now, its schedstat starts at zero. */
			th->first_ns = now;
			th->base_exec_ns = 0;
			th->base_delay_ns = 0;
			th->off_ns = now;
			th->wake_ns = now;
			th->state = OFFCPU_ST_PREEMPT;
			th->flags = OFFCPU_TH_NEW;
			th->kstack = OFFCPU_STACK_NEW_THREAD;
			th->ustack = OFFCPU_STACK_NEW_THREAD;
			th->site = OFFCPU_NO_SITE;
			th->waker = waker_tid(ctx);
			return;
		}
		/* Off the CPU since before start: the known part begins at start. */
		th->first_ns = start_ns;
		th->off_ns = start_ns;
		th->wake_ns = now;
		th->state = OFFCPU_ST_UNKNOWN;
		th->flags = OFFCPU_TH_BEFORE_START;
		return;
	}
	if (!th->off_ns) {
		STAT(wakeup_running, 1);
		return;
	}
	if (!th->wake_ns)
		th->wake_ns = now;
}

/*
 * sched_waking, timeline only: it fires in the waker's context, where
 * sched_wakeup may fire on the wakee's CPU, from the IPI that queued a remote
 * wakeup. The first waking of an interval is the one that ends it.
 */
static __always_inline void on_waking(void *ctx, struct task_struct *p, const bool btf)
{
	__u32 tid = RD(btf, p, pid);
	struct offcpu_thread *th;

	if (!tid || after_stop(bpf_ktime_get_ns()))
		return;
	th = bpf_map_lookup_elem(&threads, &tid);
	if (th && th->off_ns && !th->woken) {
		th->waker = waker_tid(ctx);
		th->woken = 1;
	}
}

static __always_inline void on_fork(struct task_struct *parent, struct task_struct *child,
				    const bool btf)
{
	__u32 ptgid, ctgid;

	if (target != OFFCPU_TARGET_TGIDS)
		return;
	ptgid = RD(btf, parent, tgid);
	ctgid = RD(btf, child, tgid);
	if (ptgid == ctgid || !bpf_map_lookup_elem(&procs, &ptgid))
		return;
	if (bpf_map_update_elem(&procs, &ctgid, &zero_proc, BPF_NOEXIST) == -E2BIG)
		STAT(map_full_procs, 1);
}

static __always_inline void on_exec(struct task_struct *p, const bool btf)
{
	__u32 tid = RD(btf, p, pid), tgid = RD(btf, p, tgid);
	struct offcpu_thread *th = bpf_map_lookup_elem(&threads, &tid);
	struct offcpu_proc *pr = bpf_map_lookup_elem(&procs, &tgid);

	if (tgid == held_tgid) {
		/* The caller's workload begins (its window began at its last switch-in). */
		held_tgid = 0;
		if (th)
			th->held = 0;
		else
			th = thread_new(p, tid, tgid, bpf_ktime_get_ns(), btf);
	}
	if (th)
		bpf_get_current_comm(th->comm, sizeof(th->comm));
	if (pr)
		pr->flags &= ~OFFCPU_PROC_NOTIFIED;
}

static __always_inline void on_exit(struct task_struct *p, const bool btf)
{
	__u32 tgid = RD(btf, p, tgid);
	int live = btf ? p->signal->live.counter : BPF_CORE_READ(p, signal, live.counter);

	/* The last thread of the process: its pid may be reused by a stranger. */
	if (live == 0)
		bpf_map_delete_elem(&procs, &tgid);
}

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
