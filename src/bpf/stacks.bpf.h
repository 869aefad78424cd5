/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Stack walks for offcpu.bpf.c: walking, naming a stack by the hash of its
 * frames and sending it once, and the cheap reads (user frame-pointer chain,
 * kernel return address slots) the call-site cache keys on.
 *
 * Included once, by offcpu.bpf.c after its settings and maps: these are
 * __always_inline helpers (and two global functions the verifier checks
 * once) of that one program, kept apart to keep each file readable.
 */
#ifndef OFFCPU_BPF_STACKS_BPF_H
#define OFFCPU_BPF_STACKS_BPF_H

static __always_inline __u64 mix(__u64 h, __u64 v)
{
	h ^= v;
	h *= 0xff51afd7ed558ccdULL;
	return h ^ (h >> 33);
}

struct hash_ctx {
	__u64 h;
	__u32 first, nr;
};

/* One frame of stack_hash(), from this CPU's scratch buffer. */
static long hash_step(__u32 i, void *arg)
{
	struct hash_ctx *c = arg;
	struct offcpu_stack *buf;
	__u32 zero = 0, j = c->first + i;

	if (j >= c->nr)
		return 1;
	buf = bpf_map_lookup_elem(&scratch, &zero);
	if (!buf)
		return 1;
	c->h = mix(c->h, buf->ips[j & 127]);
	return 0;
}

/*
 * 64-bit hash of frames [first, nr); bit 63 set marks a real stack id. A
 * bpf_loop() where the kernel has it: the verifier checks one step, where it
 * walks a loop in line once per frame and per state.
 */
static __always_inline __u64 stack_hash(const struct offcpu_stack *s, __u64 seed)
{
	struct hash_ctx c = {
		.h = seed ^ ((__u64)(s->nr - s->first) * 0x9e3779b97f4a7c15ULL),
		.first = s->first,
		.nr = s->nr,
	};
	__u64 h;

	if (have_loop) {
		bpf_loop(OFFCPU_MAX_STACK, hash_step, &c, 0);
	} else {
		for (__u32 i = 0; i < OFFCPU_MAX_STACK; i++) {
			if (i >= s->nr)
				break;
			if (i < s->first)
				continue;
			c.h = mix(c.h, s->ips[i]);
		}
	}
	h = c.h * 0xc4ceb9fe1a85ec53ULL;
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
	if (size > sizeof(*buf) || bpf_ringbuf_output(&events, buf, size, ring_wake()))
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
 * What user space's mapping reads depend on, from the current task's mm: the
 * size of the address space (any mmap or munmap of a library changes it),
 * where the code and the stack start (an exec moves them). collect/mmstamp.h
 * reads the same three from /proc/PID/stat.
 */
static __always_inline __u64 mm_stamp(void)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	__u64 h = 0x9e3779b97f4a7c15ULL;

	h = mix(h, BPF_CORE_READ(t, mm, total_vm));
	h = mix(h, BPF_CORE_READ(t, mm, start_code));
	h = mix(h, BPF_CORE_READ(t, mm, start_stack));
	return h | 1;
}

/*
 * The tgid of the process whose address space p's is a copy of, or 0: p has
 * exec'd `execs` times since its fork (self_exec_id is the parent's at the
 * fork, one more at each exec), and its parent none since. With execs 0, p
 * still runs in that copy (a shell's subshell, a server's forked worker);
 * with 1, at its first exec, the image it leaves was that copy. User space
 * names with the parent's mappings what p's own, never read, cannot. Probe
 * reads in both flavours: real_parent is RCU.
 */
static __always_inline __u32 image_parent(struct task_struct *p, __u64 execs)
{
	struct task_struct *parent = BPF_CORE_READ(p, real_parent);
	__u64 from = BPF_CORE_READ(p, parent_exec_id);

	if (BPF_CORE_READ(p, self_exec_id) != from + execs ||
	    BPF_CORE_READ(parent, self_exec_id) != from)
		return 0;
	return BPF_CORE_READ(parent, tgid);
}

/* Why notify_track() is called. */
enum {
	TRACK_AGAIN = 0,     /* a walk: only a request held back is sent */
	TRACK_NEW_STACK = 1, /* a user stack never seen before */
	TRACK_NO_MAPS = 2,   /* a user stack the mappings in BPF could not unwind */
};

/*
 * Ask user space to snapshot a process's mappings while it lives: at its
 * first user stack (after start or exec), and again when a user stack never
 * seen before shows up (a library loaded since, the loader done), at most
 * every track_gap_ns (a later walk sends what was held back). A new stack
 * in an address space that has not changed (mm_stamp()) is only a new call
 * path: not sent (a PostgreSQL backend under pgbench has about 50 a
 * second, and each woke user space). A stack the mappings could not unwind
 * is always sent. Called at a switch-out: the current task is the
 * process's. A global function: in line at its two callers, 1,200
 * processed instructions.
 */
__noinline int notify_track(__u32 tgid, __u64 now, int why)
{
	struct offcpu_proc *p = bpf_map_lookup_elem(&procs, &tgid);
	struct offcpu_event *ev;
	__u64 stamp;

	if (!p) {
		if (target == OFFCPU_TARGET_TGIDS)
			return 0;
		bpf_map_update_elem(&procs, &tgid, &zero_proc, BPF_NOEXIST);
		p = bpf_map_lookup_elem(&procs, &tgid);
		if (!p)
			return 0;
	}
	if (p->flags & OFFCPU_PROC_NOTIFIED) {
		if (why == TRACK_AGAIN && !(p->flags & OFFCPU_PROC_PENDING))
			return 0;
		if (now - p->notified_ns < track_gap_ns) {
			p->flags |= OFFCPU_PROC_PENDING;
			return 0;
		}
	}
	stamp = mm_stamp();
	if ((p->flags & OFFCPU_PROC_NOTIFIED) && why != TRACK_NO_MAPS && stamp == p->mm_stamp) {
		STAT(track_same, 1);
		p->flags &= ~OFFCPU_PROC_PENDING;
		p->notified_ns = now;
		return 0;
	}
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (!ev) {
		STAT(track_lost, 1);
		return 0;
	}
	STAT(track_sent, 1);
	__builtin_memset(ev, 0, sizeof(*ev));
	ev->type = OFFCPU_EV_TRACK;
	ev->tgid = tgid;
	ev->ptgid = image_parent((struct task_struct *)bpf_get_current_task(), 0);
	/*
	 * Forced: the default wakes user space only if it has read every
	 * earlier record, and stacks are sent without waking it until the
	 * ring fills (ring_wake()). The process must be tracked while it lives.
	 */
	bpf_ringbuf_submit(ev, BPF_RB_FORCE_WAKEUP);
	p->flags = (p->flags | OFFCPU_PROC_NOTIFIED) & ~OFFCPU_PROC_PENDING;
	p->notified_ns = now;
	p->mm_stamp = stamp;
	return 0;
}

/* The kernel word at p + off (0 if unreadable): a plain load where the kernel allows it. */
static __always_inline __u64 kword(const void *p, __u64 off)
{
	struct timespec64 *w;
	__u64 v = 0;

	if (kmem_direct) {
		w = bpf_rdonly_cast(p + off, kid_timespec64);
		return w->tv_sec;
	}
	bpf_probe_read_kernel(&v, sizeof(v), p + off);
	return v;
}

/* A word of memory per CPU, for ptr_value(). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} ptrword SEC(".maps");

/*
 * A pointer's value as a number (the verifier keeps pointer types
 * otherwise): stored to map memory, which remembers no types, and read
 * back. Storing a pointer there is allowed where pointers may leak
 * (CAP_PERFMON, which tracing needs anyway). Two plain moves; a
 * bpf_probe_read_kernel() of it cost 38 ns, a tenth of a cached switch-out.
 */
static __always_inline __u64 ptr_value(const void *p)
{
	__u32 zero = 0;
	volatile __u64 *w = bpf_map_lookup_elem(&ptrword, &zero);

	if (!w)
		return 0;
	*w = (__u64)p;
	return *w;
}

/* The lowest and highest addresses user memory can have. */
#if defined(__TARGET_ARCH_x86)
#define OFFCPU_USER_TOP 0x00007ffffffff000ULL /* TASK_SIZE_MAX: 47-bit user space */
#elif defined(__TARGET_ARCH_arm64)
#define OFFCPU_USER_TOP 0x0001000000000000ULL /* TASK_SIZE_64: 48-bit user space */
#endif

static __always_inline bool no_user_memory(__u64 fp)
{
	return fp < 65536 || fp >= OFFCPU_USER_TOP;
}

/*
 * Hash of the user frame-pointer chain as far as it lies within OFFCPU_UWIN
 * bytes above bp: every word the frame-pointer walk reads there (each frame's
 * return address, and its saved bp where the walk goes on to read it).
 * OFFCPU_CHAIN_WHOLE set: the chain ends inside the window, so the walk
 * reads nothing else and the hash fixes the whole stack.
 */
__noinline __u64 user_chain(__u64 bp)
{
	struct user_window *w;
	__u64 h = 0x9e3779b97f4a7c15ULL, fp = bp, len = OFFCPU_UWIN - 16;
	__u32 zero = 0;

	/*
	 * Where no user memory can be (below mmap_min_addr, above
	 * OFFCPU_USER_TOP), the walk's read fails whatever the exact value: a clean
	 * end. Callers built without frame pointers leave a register there,
	 * often a small counter.
	 */
	if (no_user_memory(bp))
		return h | OFFCPU_CHAIN_WHOLE;
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
			return no_user_memory(fp) ? h | OFFCPU_CHAIN_WHOLE
						  : h & ~OFFCPU_CHAIN_WHOLE;
		off >>= 3;
		next = w->w[off & (OFFCPU_UWIN / 8 - 1)];
		h = (h ^ w->w[(off + 1) & (OFFCPU_UWIN / 8 - 1)]) * 0xff51afd7ed558ccdULL;
		if (!no_user_memory(next))
			h ^= next;
		fp = next;
	}
	/* Still inside after as many frames as fit: it cycles there. */
	return h | OFFCPU_CHAIN_WHOLE;
}

/*
 * Where the kernel return addresses of the stack just walked (in this CPU's
 * scratch buffer) sit, as word offsets from the tracepoint's ctx, and a hash
 * of their values; into this CPU's ksig. Not from the base of the stack: the
 * kernel moves the frames below a syscall's entry by a random amount at each
 * syscall (randomize_kstack_offset). A frame is found by searching upwards
 * for its return address. exact: all frames between __schedule and the
 * entry code were found, and the last one is the word below the user
 * pt_regs (entry_ret, part of the key). Runs on cache misses only.
 */
struct ksig_ctx {
	__u64 base;
	__u32 last;
};

/* One word of kernel_sig()'s scan: 1 when every frame is found or nothing can be. */
static long ksig_step(__u32 w, void *arg)
{
	struct ksig_ctx *c = arg;
	struct offcpu_stack *buf;
	struct kernel_sig *sig;
	__u32 zero = 0, j, n;
	__u64 v;

	buf = bpf_map_lookup_elem(&scratch, &zero);
	sig = bpf_map_lookup_elem(&ksig, &zero);
	if (!buf || !sig)
		return 1;
	j = sig->j;
	n = sig->n;
	if (j >= c->last || n >= OFFCPU_KSLOTS)
		return 1;
	v = kword((const void *)c->base, (__u64)(w & (OFFCPU_KSCAN - 1)) * 8);
	if (v != buf->ips[j & 127])
		return 0;
	sig->slot[n & (OFFCPU_KSLOTS - 1)] = w;
	sig->hash = mix(sig->hash, v);
	sig->n = n + 1;
	sig->j = j + 1;
	return 0;
}

__noinline int kernel_sig(__u64 base, __u64 entry_ret)
{
	struct ksig_ctx c = {.base = base};
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
	c.last = last;
	if (have_loop) {
		bpf_loop(OFFCPU_KSCAN, ksig_step, &c, 0);
	} else {
		for (__u32 w = 0; w < OFFCPU_KSCAN; w++)
			if (ksig_step(w, &c))
				break;
	}
	/* Looked up again: the verifier forgets what it knew of sig across the loop. */
	buf = bpf_map_lookup_elem(&scratch, &zero);
	sig = bpf_map_lookup_elem(&ksig, &zero);
	if (!buf || !sig)
		return 0;
	sig->exact = sig->j == last && buf->ips[last & 127] == entry_ret;
	return 0;
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

#endif
