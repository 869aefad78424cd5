// SPDX-License-Identifier: GPL-2.0-only
/*
 * offcpu's kernel side: off-CPU intervals per (thread, kernel stack, user
 * stack, state) from the scheduler tracepoints. Never kprobes.
 *
 * An interval runs from a thread's switch-out (sched_switch, prev) to its
 * next switch-in (sched_switch, next). prev_state and the preempt flag at the
 * switch-out say why it left; sched_wakeup/sched_wakeup_new say when it became
 * runnable again, which splits the interval into blocked and run-queue time.
 *
 * Stacks are taken at the switch-out, where the leaving thread is current.
 * Walking them is what costs (an ORC kernel walk and a frame-pointer user walk
 * take microseconds on every context switch), so each thread remembers its
 * last OFFCPU_CACHE_WAYS call sites: a key read cheaply from the thread's
 * registers and stack selects the stacks walked last time. See site_key() for
 * what the key holds, and take_stacks() for how hits are checked against real
 * walks so a weak key is caught and its damage counted.
 *
 * Stacks are stored by a 64-bit hash of their frames in a hash map, not in a
 * BPF_MAP_TYPE_STACK_TRACE: that map drops a new stack whenever its bucket
 * holds another one (-EEXIST), which loses stacks long before it is full.
 *
 * Aggregates go to one of two maps, agg0/agg1, chosen by `gen`: user space
 * flips gen, waits for an RCU grace period (no program still holds the old
 * map), then drains the old map, so nothing is lost to a read/delete race.
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
const volatile __u32 hold_tgid = 0;
const volatile __u64 cgroup_id = 0;
const volatile __u32 cgroup_level = 0;
const volatile __u32 state_mask = 0;
const volatile __u64 min_block_ns = 0;
const volatile __u64 max_block_ns = 0;
const volatile bool kernel_stacks = true;
const volatile bool user_stacks = true;
const volatile bool stack_cache = true;
const volatile __u32 check_max = 64;
const volatile __u64 sched_lo = 0;
const volatile __u64 sched_hi = 0;
const volatile bool switch_has_state = true;
const volatile __u64 track_interval_ns = 1000000000ULL;

/* Written by user space: start_ns just before attaching, gen to switch buffers. */
__u64 start_ns = 0;
__u32 gen = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct offcpu_thread);
} threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
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

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct offcpu_stack);
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

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} events SEC(".maps");

const struct offcpu_thread zero_thread = {};
const struct offcpu_proc zero_proc = {};
const struct offcpu_agg_val zero_val = {};

/* Typed (tp_btf) or probed (raw_tp) read of a kernel field. */
#define RD(btf, p, f) ((btf) ? (p)->f : BPF_CORE_READ(p, f))

#define STAT(field, v)                                                                           \
	do {                                                                                     \
		__u32 zero_ = 0;                                                                 \
		struct offcpu_stats *s_ = bpf_map_lookup_elem(&stats, &zero_);                   \
		if (s_)                                                                          \
			__sync_fetch_and_add(&s_->field, (v));                                   \
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

/* Store the n bytes of frames in buf; the stack's id, or an errno below OFFCPU_STACK_ERRNO_MAX. */
static __always_inline __u64 stack_store(struct offcpu_stack *buf, long n, bool user)
{
	__u64 id;
	long err;

	if (n < 0)
		return -n > OFFCPU_STACK_ERRNO_MAX ? OFFCPU_STACK_ERRNO_MAX : -n;
	if (n == 0)
		return EFAULT;
	buf->nr = n / sizeof(__u64);
	buf->first = 0;
	if (buf->nr >= OFFCPU_MAX_STACK)
		STAT(stack_truncated, 1);
	if (!user && sched_lo) {
		/*
		 * The walk starts in this program: drop the tracer frames
		 * (bpf_prog_*, bpf_trace_run*, __bpf_trace_*, __traceiter_*)
		 * above __schedule, whose number depends on who else is
		 * attached to the tracepoint.
		 */
		bool found = false;

		for (__u32 i = 0; i < OFFCPU_MAX_TRACER_FRAMES; i++) {
			if (i >= buf->nr)
				break;
			if (buf->ips[i] >= sched_lo && buf->ips[i] < sched_hi) {
				buf->first = i;
				found = true;
				break;
			}
		}
		if (!found)
			STAT(unanchored, 1);
		else if (buf->first)
			STAT(tracer_frames, 1);
	}
	id = stack_hash(buf, user ? 0x5bd1e9955bd1e995ULL : 0x27d4eb2f165667c5ULL);
	err = bpf_map_update_elem(&stacks, &id, buf, BPF_NOEXIST);
	if (err && err != -EEXIST)
		return (err == -E2BIG || err == -ENOMEM) ? E2BIG : (__u64)(-err) & 0xfff;
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
		n = bpf_get_stack(ctx, buf->ips, sizeof(buf->ips), BPF_F_USER_STACK);
	} else {
		STAT(walks_kernel, 1);
		n = bpf_get_stack(ctx, buf->ips, sizeof(buf->ips), 0);
	}
	return stack_store(buf, n, user);
}

static __always_inline bool stack_ok(__u64 id)
{
	return id == OFFCPU_STACK_NONE || (id & OFFCPU_STACK_REAL);
}

/* Ask user space to snapshot a process's mappings while it lives (rate-limited). */
static __always_inline void notify_track(__u32 tgid, __u64 now)
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
	if ((p->flags & OFFCPU_PROC_NOTIFIED) && now - p->notified_ns < track_interval_ns)
		return;
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev)
		return;
	__builtin_memset(ev, 0, sizeof(*ev));
	ev->type = OFFCPU_EV_TRACK;
	ev->tgid = tgid;
	bpf_ringbuf_submit(ev, 0);
	p->flags |= OFFCPU_PROC_NOTIFIED;
	p->notified_ns = now;
}

/*
 * The call-site key of the thread leaving now, read without walking:
 *
 *   0 user ip        (where the thread entered the kernel)
 *   1 user sp
 *   2 user bp        (the frame-pointer chain starts here)
 *   3 [bp]           (the caller's saved bp: first link of the chain)
 *   4 [bp + 8]       (the first return address the user walk reports)
 *   5 orig_ax        (syscall number; exception error code or irq vector otherwise)
 *   6 the word below the user pt_regs: return address of the first C call
 *     from the entry code (entry_SYSCALL_64, asm_exc_page_fault, asm_sysvec_*)
 *   7 kernel stack depth at the tracepoint (pt_regs - ctx) << 32,
 *     prev_state << 1, in_iowait
 *
 * The user walk reads ip, then follows the bp chain; words 0-4 fix its first
 * two frames exactly, and the rest whenever the chain above bp is unchanged.
 * The kernel walk is fixed by the path from the entry (word 6) to __schedule;
 * the syscall, the exact sleep state and the depth of that path pin it unless
 * two paths with the same entry, syscall and state have the same depth. Both
 * residual cases are what the checks in take_stacks() are for.
 */
static __always_inline void site_key(void *ctx, struct task_struct *t, __u32 prev_state,
				     bool kthread, __u64 *k, const bool btf)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	__u64 fr[2] = {};
	__u64 depth, iowait;

	if (!regs)
		return;
	if (!kthread) {
		if (btf) {
			k[0] = regs->ip;
			k[1] = regs->sp;
			k[2] = regs->bp;
			k[5] = regs->orig_ax;
		} else {
			k[0] = BPF_CORE_READ(regs, ip);
			k[1] = BPF_CORE_READ(regs, sp);
			k[2] = BPF_CORE_READ(regs, bp);
			k[5] = BPF_CORE_READ(regs, orig_ax);
		}
		if (user_stacks && k[2])
			bpf_probe_read_user(fr, sizeof(fr), (void *)k[2]);
		k[3] = fr[0];
		k[4] = fr[1];
	}
	if (kernel_stacks)
		bpf_probe_read_kernel(&k[6], sizeof(k[6]), (void *)((__u64)regs - 8));
	depth = (__u64)regs - (__u64)ctx;
	if (btf)
		iowait = BPF_CORE_READ_BITFIELD(t, in_iowait);
	else
		iowait = BPF_CORE_READ_BITFIELD_PROBED(t, in_iowait);
	k[7] = (depth << 32) | ((__u64)(prev_state & 0x7fffffff) << 1) | (iowait & 1);
}

static __always_inline bool key_eq(const __u64 *a, const __u64 *b)
{
	__u64 d = 0;

#pragma unroll
	for (int i = 0; i < OFFCPU_KEY_WORDS; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

/*
 * Stacks of the thread leaving now, into th->kstack/ustack.
 *
 * Preempted and "other" intervals always walk: a preemption can land
 * anywhere, so no cheap key describes it. Sleeps look up the thread's site
 * cache. A hit reuses the remembered stacks, except every period-th hit,
 * which walks and compares: a match doubles the period (up to check_max), a
 * difference resets it to 1, replaces the entry, and counts every interval
 * attributed from that entry since its last check as possibly misattributed
 * (stack_cache_mismatch: an upper bound). New entries start at period 1, so
 * a key is checked on its first reuse, again after 2, 4, ... hits.
 */
static __always_inline void take_stacks(void *ctx, struct task_struct *t, struct offcpu_thread *th,
					__u32 prev_state, __u32 tgid, __u64 now, const bool btf)
{
	bool kthread = RD(btf, t, flags) & OFFCPU_PF_KTHREAD;
	bool want_user = user_stacks && !kthread;
	__u64 key[OFFCPU_KEY_WORDS] = {};
	struct offcpu_site *s = NULL;
	__u64 k, u;
	__u32 hit = OFFCPU_CACHE_WAYS, victim = 0, oldest = 0xffffffff;

	th->site = OFFCPU_NO_SITE;
	if (!stack_cache || th->state == OFFCPU_ST_PREEMPT || th->state == OFFCPU_ST_OTHER)
		goto walk;

	site_key(ctx, t, prev_state, kthread, key, btf);
	th->clock++;
#pragma unroll
	for (__u32 w = 0; w < OFFCPU_CACHE_WAYS; w++) {
		if (th->sites[w].period && key_eq(th->sites[w].key, key)) {
			hit = w;
			break;
		}
		if (th->sites[w].used < oldest) {
			oldest = th->sites[w].used;
			victim = w;
		}
	}
	if (hit < OFFCPU_CACHE_WAYS) {
		s = &th->sites[hit];
		s->used = th->clock;
		if (++s->hits < s->period) {
			th->kstack = s->kstack;
			th->ustack = s->ustack;
			th->site = hit;
			STAT(cache_hits, 1);
			return;
		}
		STAT(cache_checks, 1);
	}

walk:
	k = kernel_stacks ? walk(ctx, false) : OFFCPU_STACK_NONE;
	u = want_user ? walk(ctx, true) : OFFCPU_STACK_NONE;
	th->kstack = k;
	th->ustack = u;
	if (u & OFFCPU_STACK_REAL)
		notify_track(tgid, now);
	if (!stack_cache || th->state == OFFCPU_ST_PREEMPT || th->state == OFFCPU_ST_OTHER)
		return;
	if (!stack_ok(k) || !stack_ok(u)) {
		/* A failed walk says nothing about the key: keep the entry as it was. */
		if (s)
			s->hits = 0;
		return;
	}
	if (s) {
		if (k == s->kstack && u == s->ustack) {
			if (s->period < check_max)
				s->period *= 2;
		} else {
			STAT(cache_mismatch, s->unchecked);
			STAT(cache_mismatch_ns, s->unchecked_ns);
			s->period = 1;
			s->kstack = k;
			s->ustack = u;
		}
		s->hits = 0;
		s->unchecked = 0;
		s->unchecked_ns = 0;
		return;
	}
	if (victim >= OFFCPU_CACHE_WAYS)
		return;
	s = &th->sites[victim];
	__builtin_memcpy(s->key, key, sizeof(key));
	s->kstack = k;
	s->ustack = u;
	s->hits = 0;
	s->period = 1;
	s->unchecked = 0;
	s->unchecked_ns = 0;
	s->used = th->clock;
}

static __always_inline void record(__u32 tgid, __u32 tid, __u64 k, __u64 u, __u32 state, __u64 off,
				   __u64 runq)
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
			STAT(map_full_agg, 1);
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
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->off_ns, off);
	__sync_fetch_and_add(&v->runq_ns, runq);
	STAT(recorded, 1);
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
	n = bpf_get_task_stack(t, buf->ips, sizeof(buf->ips), 0);
	return stack_store(buf, n, false);
}

static __always_inline void thread_exit(struct task_struct *t, __u32 tid, __u64 now,
					const bool btf)
{
	struct offcpu_thread *th = bpf_map_lookup_elem(&threads, &tid);
	struct offcpu_event *ev;

	if (!th)
		return;
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
		bpf_get_current_comm(ev->comm, sizeof(ev->comm));
		bpf_ringbuf_submit(ev, BPF_RB_NO_WAKEUP);
	} else {
		STAT(lost_records, 1);
	}
	bpf_map_delete_elem(&threads, &tid);
}

static __always_inline void switch_out(void *ctx, struct task_struct *prev, __u32 tid,
				       bool preempt, __u32 prev_state, __u64 now, const bool btf)
{
	struct offcpu_thread *th;
	__u32 tgid;

	if (prev_state & OFFCPU_TASK_DEAD) {
		thread_exit(prev, tid, now, btf);
		return;
	}
	tgid = RD(btf, prev, tgid);
	th = bpf_map_lookup_elem(&threads, &tid);
	if (!th) {
		if (!wanted(prev, tgid, btf))
			return;
		th = thread_new(prev, tid, tgid, now, btf);
		if (!th)
			return;
	}
	th->off_ns = now;
	th->wake_ns = 0;
	th->state = classify(preempt, prev_state);
	th->flags = 0;
	th->tgid = tgid;
	STAT(switch_out, 1);
	if (state_mask && !(state_mask & (1u << th->state))) {
		th->flags = OFFCPU_TH_FILTERED;
		th->site = OFFCPU_NO_SITE;
		return;
	}
	take_stacks(ctx, prev, th, prev_state, tgid, now, btf);
}

static __always_inline void switch_in(struct task_struct *next, __u32 tid, __u64 now,
				      const bool btf)
{
	struct offcpu_thread *th = bpf_map_lookup_elem(&threads, &tid);
	__u64 off, runq, k = OFFCPU_STACK_BEFORE_START;
	__u32 tgid;

	if (!th) {
		tgid = RD(btf, next, tgid);
		if (!wanted(next, tgid, btf))
			return;
		th = thread_new(next, tid, tgid, start_ns, btf);
		if (!th)
			return;
		if (RD(btf, next, start_time) > start_ns) {
			/* Born while we traced, yet its first wakeup went unseen. */
			th->first_ns = now;
			STAT(unmatched_switch_in, 1);
			return;
		}
		/* Off the CPU since before start, and runnable since (no wakeup seen). */
		th->off_ns = start_ns;
		th->wake_ns = start_ns;
		th->flags = OFFCPU_TH_BEFORE_START;
		if (tgid == hold_tgid)
			th->flags |= OFFCPU_TH_HELD;
	}
	if (!th->off_ns) {
		STAT(unmatched_switch_in, 1);
		return;
	}
	off = now - th->off_ns;
	if (th->state == OFFCPU_ST_PREEMPT || (th->flags & OFFCPU_TH_NEW)) {
		runq = off;
	} else if (th->wake_ns) {
		runq = now - th->wake_ns;
	} else {
		runq = 0;
		STAT(no_wakeup, 1);
	}
	if (runq > off)
		runq = off;

	if (th->flags & OFFCPU_TH_FILTERED) {
		STAT(filtered, 1);
	} else if (th->flags & OFFCPU_TH_HELD) {
		/* The caller held this process before exec: its window starts now. */
		STAT(held_skipped, 1);
		th->first_ns = now;
		th->base_exec_ns = RD(btf, next, se.sum_exec_runtime);
		if (bpf_core_field_exists(next->sched_info))
			th->base_delay_ns = RD(btf, next, sched_info.run_delay);
	} else if (th->flags & OFFCPU_TH_BEFORE_START) {
		if (btf && kernel_stacks)
			k = walk_task(next);
		record(th->tgid, tid, k,
		       user_stacks && !(RD(btf, next, flags) & OFFCPU_PF_KTHREAD)
			       ? OFFCPU_STACK_BEFORE_START
			       : OFFCPU_STACK_NONE,
		       OFFCPU_ST_UNKNOWN, off, runq);
		STAT(inflight_start, 1);
		STAT(inflight_start_ns, off);
	} else if ((min_block_ns && off < min_block_ns) || (max_block_ns && off > max_block_ns)) {
		STAT(filtered, 1);
	} else {
		record(th->tgid, tid, th->kstack, th->ustack, th->state, off, runq);
		if (th->site < OFFCPU_CACHE_WAYS) {
			struct offcpu_site *s = &th->sites[th->site];

			s->unchecked++;
			s->unchecked_ns += off;
		}
	}
	th->off_ns = 0;
	th->wake_ns = 0;
	th->flags = 0;
	th->site = OFFCPU_NO_SITE;
}

static __always_inline void on_switch(void *ctx, bool preempt, struct task_struct *prev,
				      struct task_struct *next, __u32 prev_state, const bool btf)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 ptid = RD(btf, prev, pid), ntid = RD(btf, next, pid);

	/* pid 0 is the per-CPU idle task: never recorded. */
	if (ptid)
		switch_out(ctx, prev, ptid, preempt, prev_state, now, btf);
	if (ntid)
		switch_in(next, ntid, now, btf);
}

static __always_inline void on_wakeup(struct task_struct *p, bool new, const bool btf)
{
	__u32 tid = RD(btf, p, pid), tgid;
	struct offcpu_thread *th;
	__u64 now;

	if (!tid)
		return;
	now = bpf_ktime_get_ns();
	th = bpf_map_lookup_elem(&threads, &tid);
	if (!th || new) {
		tgid = RD(btf, p, tgid);
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
			return;
		}
		/* Off the CPU since before start: the known part begins at start. */
		th->first_ns = start_ns;
		th->off_ns = start_ns;
		th->wake_ns = now;
		th->state = OFFCPU_ST_UNKNOWN;
		th->flags = OFFCPU_TH_BEFORE_START;
		if (tgid == hold_tgid)
			th->flags |= OFFCPU_TH_HELD;
		return;
	}
	if (!th->off_ns) {
		STAT(wakeup_running, 1);
		return;
	}
	if (!th->wake_ns)
		th->wake_ns = now;
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
	on_wakeup(p, false, true);
	return 0;
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(wk_raw, struct task_struct *p)
{
	on_wakeup(p, false, false);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(wkn_btf, struct task_struct *p)
{
	on_wakeup(p, true, true);
	return 0;
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(wkn_raw, struct task_struct *p)
{
	on_wakeup(p, true, false);
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
