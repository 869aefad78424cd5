/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The wakeup tracepoints of offcpu.bpf.c: the run-queue wait's start on
 * kernels without sched_info, and the timeline's wakers. Included once, by
 * offcpu.bpf.c after its settings and maps.
 */
#ifndef OFFCPU_BPF_WAKEUP_BPF_H
#define OFFCPU_BPF_WAKEUP_BPF_H

/*
 * The interrupt context each CPU is in, timeline only: the innermost names a
 * wakeup's waker (see waker_of()). A hard IRQ handler or an hrtimer expiring
 * in hard IRQ context cannot nest in another on one CPU, nor run a softirq,
 * so one slot per level is a stack: timer above hard IRQ above softirq. Each
 * slot keeps the tid of the task it interrupted; a slot whose task is not
 * current is stale (its exit went unseen, or an RT kernel preempted the
 * softirq) and names nothing.
 */
struct irq_ctx {
	__u32 soft, soft_tid;
	__u32 hard, hard_tid;
	__u32 timer, timer_tid;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct irq_ctx);
} irq_ctx SEC(".maps");

/* Only the field read: a flavour, relocated to the kernel's struct hrtimer. */
struct hrtimer___offcpu {
	__u8 is_soft;
} __attribute__((preserve_access_index));

static __always_inline struct irq_ctx *irq_ctx_here(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&irq_ctx, &zero);
}

/*
 * A soft hrtimer expires inside softirq HRTIMER, which names it already;
 * kernels without is_soft (before 4.16) expire every hrtimer in hard IRQ.
 */
static __always_inline bool hrtimer_hard(void *timer, const bool btf)
{
	struct hrtimer___offcpu *t = timer;

	if (!bpf_core_field_exists(t->is_soft))
		return true;
	return !(btf ? t->is_soft : BPF_CORE_READ(t, is_soft));
}

static __always_inline void irq_enter_slot(__u32 *slot, __u32 *slot_tid, __u32 waker)
{
	*slot = waker;
	*slot_tid = (__u32)bpf_get_current_pid_tgid();
}

static __always_inline void on_softirq(__u32 vec, bool entry)
{
	struct irq_ctx *c = irq_ctx_here();

	if (!c)
		return;
	if (entry)
		irq_enter_slot(&c->soft, &c->soft_tid, OFFCPU_WAKER(OFFCPU_WAKER_SOFTIRQ, vec));
	else
		c->soft = 0;
}

static __always_inline void on_hardirq(int irq, bool entry)
{
	struct irq_ctx *c = irq_ctx_here();

	if (!c)
		return;
	if (entry)
		irq_enter_slot(&c->hard, &c->hard_tid,
			       OFFCPU_WAKER(OFFCPU_WAKER_HARDIRQ, (__u32)irq));
	else
		c->hard = 0;
}

/*
 * At the exit the timer is not read: its callback may have freed it (a
 * sleeper's timer lives on the sleeper's stack). A soft timer's exit cannot
 * come while a hard one runs, so clearing the slot is right for both.
 */
static __always_inline void on_hrtimer(void *timer, bool entry, const bool btf)
{
	struct irq_ctx *c;

	if (entry && !hrtimer_hard(timer, btf))
		return;
	c = irq_ctx_here();
	if (!c)
		return;
	if (entry)
		irq_enter_slot(&c->timer, &c->timer_tid, OFFCPU_WAKER(OFFCPU_WAKER_TIMER, 0));
	else
		c->timer = 0;
}

/*
 * The thread doing a wakeup, for the timeline; 0 when unknown. A wakeup from
 * an interrupt the tracepoints above do not see (irq_work, IPIs and the
 * other APIC vectors) runs on top of whichever thread it interrupted, so the
 * kernel stack is walked and a return address in the interrupt entry code
 * (irq_lo/irq_hi, from kallsyms) makes the waker unknown. So does a walk that
 * found no entry code within OFFCPU_WAKER_FRAMES frames, and a kernel whose
 * entry code is unknown.
 */
/*
 * Whether ip is in the interrupt entry code. A global function: in line, the
 * frame loop below had the verifier walk its 8 ranges for each of 32 frames
 * (5,000 instructions processed, 20-30 ms of a timeline's start-up).
 */
__noinline int in_irq_entry(__u64 ip)
{
	for (int r = 0; r < OFFCPU_IRQ_RANGES; r++)
		if (ip >= irq_lo[r] && ip < irq_hi[r])
			return 1;
	return 0;
}

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
		if (in_irq_entry(ips[i]))
			return 0;
	}
	return (__u32)bpf_get_current_pid_tgid();
}

/*
 * The waker of a wakeup: the innermost interrupt context the tracepoints
 * saw (OFFCPU_WAKER()), else the thread, as waker_tid() finds it. The
 * interrupt state also spares the stack walk of every wakeup it names.
 */
static __always_inline __u32 waker_of(void *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct irq_ctx *c = irq_ctx_here();

	if (c) {
		if (c->timer && c->timer_tid == tid)
			return c->timer;
		if (c->hard && c->hard_tid == tid)
			return c->hard;
		if (c->soft && c->soft_tid == tid)
			return c->soft;
	}
	return waker_tid(ctx);
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
			th->waker = waker_of(ctx);
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
		th->waker = waker_of(ctx);
		th->woken = 1;
	}
}

/*
 * The interrupt tracepoints, timeline only (they run on every interrupt of
 * every CPU): user space attaches them with sched_waking.
 */
SEC("tp_btf/softirq_entry")
int BPF_PROG(sie_btf, unsigned int vec)
{
	on_softirq(vec, true);
	return 0;
}

SEC("raw_tp/softirq_entry")
int BPF_PROG(sie_raw, unsigned int vec)
{
	on_softirq(vec, true);
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(six_btf, unsigned int vec)
{
	on_softirq(vec, false);
	return 0;
}

SEC("raw_tp/softirq_exit")
int BPF_PROG(six_raw, unsigned int vec)
{
	on_softirq(vec, false);
	return 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(hie_btf, int irq)
{
	on_hardirq(irq, true);
	return 0;
}

SEC("raw_tp/irq_handler_entry")
int BPF_PROG(hie_raw, int irq)
{
	on_hardirq(irq, true);
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(hix_btf, int irq)
{
	on_hardirq(irq, false);
	return 0;
}

SEC("raw_tp/irq_handler_exit")
int BPF_PROG(hix_raw, int irq)
{
	on_hardirq(irq, false);
	return 0;
}

SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(hte_btf, void *timer)
{
	on_hrtimer(timer, true, true);
	return 0;
}

SEC("raw_tp/hrtimer_expire_entry")
int BPF_PROG(hte_raw, void *timer)
{
	on_hrtimer(timer, true, false);
	return 0;
}

SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(htx_btf, void *timer)
{
	on_hrtimer(timer, false, true);
	return 0;
}

SEC("raw_tp/hrtimer_expire_exit")
int BPF_PROG(htx_raw, void *timer)
{
	on_hrtimer(timer, false, false);
	return 0;
}

#endif
