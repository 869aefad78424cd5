/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The targets' threads at start (struct offcpu_snap): the iter/task program
 * snap, which user space runs once right after the attach for -p, --cgroup
 * and -a. Included once, at the end of offcpu.bpf.c.
 *
 * A thread that sleeps through the whole window never passes a tracepoint:
 * without this it would not exist in the capture, and a hung process would
 * give an empty one. A thread that wakes during the window would have its
 * interval from start without a user stack (its memory cannot be read from
 * another thread's switch): the snapshot gives it the one it sleeps in.
 *
 * Sleepable, for bpf_copy_from_user_task(): the user stack of another task.
 * It runs preemptible, so it uses its own per-CPU buffers, never the
 * tracepoints' (a switch on this CPU could run them mid-walk).
 */
#ifndef OFFCPU_BPF_SNAPSHOT_BPF_H
#define OFFCPU_BPF_SNAPSHOT_BPF_H

struct snap_scratch {
	struct offcpu_thread th; /* the map entry, built whole before it is inserted */
	struct offcpu_snap s;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct snap_scratch);
} snapbuf SEC(".maps");

struct vma_end {
	__u64 end;
};

static long vma_end_of(struct task_struct *t, struct vm_area_struct *vma, struct vma_end *out)
{
	out->end = vma->vm_end;
	return 0;
}

/*
 * Copy the top of t's user stack from sp, up to OFFCPU_RAW_WIN bytes but not
 * past the end of its mapping (a copy that runs off it fails whole: a main
 * thread's stack often ends a few KiB above sp). Bytes copied, or 0.
 */
static __always_inline __u32 snap_window(struct offcpu_snap *s, struct task_struct *t, __u64 sp)
{
	struct vma_end e = {};
	__u64 len;

	if (bpf_find_vma(t, sp, vma_end_of, &e, 0) || e.end <= sp)
		return 0;
	len = e.end - sp;
	if (len > OFFCPU_RAW_WIN)
		len = OFFCPU_RAW_WIN;
	len &= ~7ULL;
	if (!len || bpf_copy_from_user_task(s->u.win, len, (const void *)sp, t, 0))
		return 0;
	return len;
}

/* The user side: registers at the system call and the top of the stack. Bytes copied. */
static __always_inline __u32 snap_user(struct offcpu_snap *s, struct offcpu_thread *th,
				       struct task_struct *t, __u32 tid, __u32 tgid)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	__u32 len;

	s->u.type = OFFCPU_EV_RAW_USTACK;
	s->u.tgid = tgid;
	s->u.ip = PT_REGS_IP(regs);
	s->u.sp = PT_REGS_SP(regs);
	s->u.bp = PT_REGS_FP(regs);
	s->u.di = PT_REGS_PARM1(regs);
	len = snap_window(s, t, s->u.sp);
	if (!len)
		return 0;
	s->u.len = len;
	s->u.id = OFFCPU_SNAP_USTACK(tid);
	th->ustack = s->u.id;
	return len;
}

SEC("iter.s/task")
int snap(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct snap_scratch *b;
	struct offcpu_thread *th;
	struct offcpu_snap *s;
	__u32 zero = 0, tid, tgid, st, ulen = 0;
	bool again;
	long n;

	if (!t)
		return 0;
	tid = t->pid;
	tgid = t->tgid;
	/* On a CPU now: its switch-out will be seen. */
	if (!tid || t->on_cpu || !wanted(t, tgid, true))
		return 0;
	th = bpf_map_lookup_elem(&threads, &tid);
	/*
	 * Seen since start, unless by this program: a record that did not fit
	 * the iterator's buffer is shown again, with the thread then in the
	 * map. Send it again while the thread has not run since.
	 */
	if (th && (!(th->flags & OFFCPU_TH_SNAPPED) || !(th->flags & OFFCPU_TH_BEFORE_START) ||
		   th->base_exec_ns != t->se.sum_exec_runtime))
		return 0;
	again = th != NULL;
	b = bpf_map_lookup_elem(&snapbuf, &zero);
	if (!b)
		return 0;
	th = &b->th;
	s = &b->s;
	/* Too large for an inline copy: the helper zeroes what a reuse left. */
	bpf_probe_read_kernel(th, sizeof(*th), &zero_thread);
	st = t->__state;
	th->tgid = tgid;
	th->first_ns = start_ns;
	th->off_ns = start_ns;
	th->state = classify(st == 0, st);
	/* Runnable already: waiting for a CPU since start at least. */
	th->wake_ns = st == 0 ? start_ns : 0;
	th->flags = OFFCPU_TH_BEFORE_START | OFFCPU_TH_SNAPPED;
	th->site = OFFCPU_NO_SITE;
	th->base_exec_ns = t->se.sum_exec_runtime;
	th->base_delay_ns = run_delay(t, true);
	bpf_probe_read_kernel_str(th->comm, sizeof(th->comm), t->comm);
	th->kstack = OFFCPU_STACK_BEFORE_START;
	th->ustack = user_stacks && !(t->flags & OFFCPU_PF_KTHREAD) ? OFFCPU_STACK_BEFORE_START
								    : OFFCPU_STACK_NONE;
	s->tid = tid;
	s->state = th->state;
	s->knr = 0;
	s->exec_ns = th->base_exec_ns;
	s->since_ns = 0;
	if (bpf_core_field_exists(t->sched_info.last_arrival)) {
		/* The scheduler's clock and this one both count from boot: near enough. */
		__u64 la = t->sched_info.last_arrival, now = bpf_ktime_get_ns();

		s->since_ns = la && now > la ? now - la : 0;
	}
	s->u.id = 0;
	s->u.len = 0;
	if (kernel_stacks) {
		n = bpf_get_task_stack(t, s->kips, sizeof(s->kips), 0);
		if (n > 0) {
			s->knr = n / sizeof(__u64);
			th->kstack = OFFCPU_SNAP_KSTACK(tid);
		}
	}
	if (dwarf_unwind && th->ustack == OFFCPU_STACK_BEFORE_START)
		ulen = snap_user(s, th, t, tid, tgid);
	n = again ? 0 : bpf_map_update_elem(&threads, &tid, th, BPF_NOEXIST);
	if (n) {
		if (n != -EEXIST)
			STAT(map_full_threads, 1);
		return 0;
	}
	if (!again)
		STAT(threads_tracked, 1);
	if (ulen > OFFCPU_RAW_WIN)
		ulen = OFFCPU_RAW_WIN;
	s->size = offsetof(struct offcpu_snap, u.win) + ulen;
	bpf_seq_write(ctx->meta->seq, s, offsetof(struct offcpu_snap, u.win) + ulen);
	return 0;
}

#endif
