/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The wakeup tracepoints of offcpu.bpf.c: the run-queue wait's start on
 * kernels without sched_info, and the timeline's wakers. Included once, by
 * offcpu.bpf.c after its settings and maps.
 */
#ifndef OFFCPU_BPF_WAKEUP_BPF_H
#define OFFCPU_BPF_WAKEUP_BPF_H

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

#endif
