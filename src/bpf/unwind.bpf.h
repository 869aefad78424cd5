/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * User stacks without frame pointers: an unwinder over the tables user space
 * built from the binaries' .eh_frame (collect/cfi.h, collect/unwind.h).
 * Included once, by offcpu.bpf.c after stacks.bpf.h; x86-64 only (other
 * architectures keep bpf_get_stack's frame-pointer walk).
 *
 * At switch-out the leaving thread's user registers are in its pt_regs.
 * unwind_user() copies up to OFFCPU_UWIN_MAX bytes of its stack above sp
 * once (one read is cheaper than a read per saved word), then bpf_loop()
 * runs unwind_step() once per frame:
 *
 *   1. the mapping that holds the pc (for a return address, pc - 1: the
 *      call, which may be the last instruction of a function), from the
 *      process's sorted executable mappings (umaps); none: the stack ends
 *      with a marker, never with the word itself (no junk frames);
 *   2. the row for the pc in the binary's table (cfi_files), by binary search;
 *   3. the caller's registers: CFA from rsp or rbp, return address at CFA - 8,
 *      rbp restored if saved; signal frames from the ucontext, PLT stubs by
 *      their rule. A mapping without a table (JIT code, a binary without CFI,
 *      one over the memory budget) takes one frame-pointer step instead, and
 *      if that leads outside code the marker names the table's absence.
 *
 * The state lives in a per-CPU map value rather than on the stack of
 * bpf_loop's caller: the verifier then checks the step once, not per
 * possible stack layout. Every word read is remembered (its offset from sp
 * and a hash of the values, in order): the call-site cache re-reads those
 * words to prove a cached stack still holds (see uslots_match()).
 */
#ifndef OFFCPU_BPF_UNWIND_BPF_H
#define OFFCPU_BPF_UNWIND_BPF_H

#if defined(__TARGET_ARCH_x86)
#define OFFCPU_HAVE_DWARF_UNWIND 1

/* The ucontext a signal handler returns through, as offsets from its rsp (x86-64). */
#define UC_RBP 120
#define UC_RSP 160
#define UC_RIP 168

#define UWIN_WORDS (OFFCPU_UWIN_MAX / 8)

/*
 * Copy up to max bytes of user stack from sp into dst; returns how many.
 * Near the top of the stack mapping max bytes run past its end: then as many
 * whole pages as are there, down to the rest of sp's own page.
 */
static __always_inline __u32 read_window(void *dst, __u64 sp, const __u32 max)
{
	__u32 head = 4096 - (sp & 4095);

	if (!bpf_probe_read_user(dst, max, (const void *)sp))
		return max;
#pragma unroll
	for (int k = 3; k >= 0; k--) {
		__u32 len = head + k * 4096;

		if (len >= max)
			continue;
		if (!bpf_probe_read_user(dst, len, (const void *)sp))
			return len;
	}
	return 0;
}

/* Remember the word at addr (value v) as one the walk depends on (see uslots_match()). */
static __always_inline void unote(struct unwind_state *st, __u64 addr, __u64 v)
{
	__u64 off = addr - st->sp0;

	if (!(off & 7) && off < (1ULL << 19) && st->nslots < OFFCPU_USLOTS) {
		st->slot[st->nslots & (OFFCPU_USLOTS - 1)] = off >> 3;
		if ((off >> 3) > st->umax)
			st->umax = off >> 3;
		st->nslots++;
		st->hash = mix(st->hash, v);
	} else {
		/* Not verifiable by a site: its stack is checked by real walks. */
		st->overflow = 1;
	}
}

/*
 * A user word for the unwind, from the copied window where it lies there,
 * into st->rv; 0, or -1 when it cannot be read. A global function: inlined,
 * its branches multiply with every other read of a step for the verifier.
 * A restored rbp (rbp_slot) is only remembered when a later frame uses it:
 * code without frame pointers keeps loop counters and pointers in rbp, and a
 * call site whose stack is the same must not miss the cache for them.
 */
__noinline int uread(__u64 addr, int rbp_slot)
{
	struct unwind_state *st;
	__u32 zero = 0;
	__u64 off, v;

	st = bpf_map_lookup_elem(&ustate, &zero);
	if (!st)
		return -1;
	off = addr - st->sp0;
	if (off < st->raw.len && !(off & 7))
		v = st->raw.win[(off >> 3) & (UWIN_WORDS - 1)];
	else if (bpf_probe_read_user(&v, sizeof(v), (const void *)addr))
		return -1;
	st->rv = v;
	if (rbp_slot) {
		st->bp_addr = addr;
		st->bp_pending = 1;
	} else {
		unote(st, addr, v);
	}
	return 0;
}

/* A frame uses rbp: the word it was restored from, if any, joins the walk's words. */
__noinline int bp_used(void)
{
	struct unwind_state *st;
	__u32 zero = 0;

	st = bpf_map_lookup_elem(&ustate, &zero);
	if (!st || !st->bp_pending)
		return 0;
	st->bp_pending = 0;
	unote(st, st->bp_addr, st->bp);
	return 0;
}

/* uread() into dst; true when it failed. */
#define UREAD(st, addr, dst) (uread(addr, 0) || ((dst) = (st)->rv, 0))

/*
 * Binary searches as bpf_loop()s of one halving step each: the verifier
 * checks a step once, where a loop in line would be explored once for every
 * combination of its branches.
 */
struct bsearch {
	__u64 key; /* addr, or the pc relative to the table */
	__u32 lo, hi;
	__u32 owner; /* tgid (mappings) or chunk (rows) */
	__u32 fail;
};

/*
 * The process whose mappings unwind the current task when its own process
 * has none in umaps yet: its parent, if the two share one address space (a
 * vfork child before its exec: python's subprocess, posix_spawn), else 0.
 * Probe reads, on that path only.
 */
static __always_inline __u32 umaps_parent(void)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task(), *parent;

	parent = BPF_CORE_READ(t, real_parent);
	if (!parent || BPF_CORE_READ(t, mm) != BPF_CORE_READ(parent, mm))
		return 0;
	return BPF_CORE_READ(parent, tgid);
}

/* lo becomes the first mapping that starts above key. */
static long umap_step(__u32 i, void *ctx)
{
	struct bsearch *b = ctx;
	const struct offcpu_umaps *um;
	__u32 mid;

	if (b->lo >= b->hi)
		return 1;
	um = bpf_map_lookup_elem(&umaps, &b->owner);
	if (!um) {
		b->fail = 1;
		return 1;
	}
	mid = (b->lo + b->hi) / 2;
	if (b->key < um->m[mid & (OFFCPU_MAX_UMAPS - 1)].start)
		b->hi = mid;
	else
		b->lo = mid + 1;
	return 0;
}

/* The mapping of process tgid holding addr: its index, or -1. */
__noinline int umap_find(__u32 tgid, __u64 addr)
{
	const struct offcpu_umaps *um = bpf_map_lookup_elem(&umaps, &tgid);
	struct bsearch b = {.key = addr, .owner = tgid};
	__u32 idx;

	if (!um)
		return -1;
	b.hi = um->n < OFFCPU_MAX_UMAPS ? um->n : OFFCPU_MAX_UMAPS;
	bpf_loop(9, umap_step, &b, 0);
	um = bpf_map_lookup_elem(&umaps, &tgid);
	if (!um || b.fail || b.lo == 0)
		return -1;
	idx = (b.lo - 1) & (OFFCPU_MAX_UMAPS - 1);
	if (addr >= um->m[idx].end)
		return -1;
	return idx;
}

/* Keeps lo the last row whose pc <= key, hi past it. */
static long row_step(__u32 i, void *ctx)
{
	struct bsearch *b = ctx;
	const struct offcpu_cfi_row *r;
	void *inner;
	__u32 mid;

	if (b->hi - b->lo <= 1)
		return 1;
	inner = bpf_map_lookup_elem(&cfi_files, &b->owner);
	mid = b->lo + (b->hi - b->lo) / 2;
	r = inner ? bpf_map_lookup_elem(inner, &mid) : NULL;
	if (!r) {
		b->fail = 1;
		return 1;
	}
	if (r->pc <= b->key)
		b->lo = mid;
	else
		b->hi = mid;
	return 0;
}

/*
 * The row for rel (the last one whose pc <= rel) in the table at rows
 * [first, first + n) of chunk: its index, or -1.
 */
__noinline int row_find(__u32 chunk, __u32 first, __u32 n, __u64 rel)
{
	struct bsearch b = {.key = rel, .lo = first, .hi = first + n, .owner = chunk};
	const struct offcpu_cfi_row *r;
	void *inner;

	if (!n || rel >= (1ULL << 32))
		return -1;
	bpf_loop(32, row_step, &b, 0);
	inner = bpf_map_lookup_elem(&cfi_files, &chunk);
	r = inner && !b.fail ? bpf_map_lookup_elem(inner, &b.lo) : NULL;
	if (!r || r->pc > rel)
		return -1;
	return b.lo;
}

/*
 * One frame-pointer step, where no table covers the pc: the caller's frame
 * record at rbp. why: the marker if the step leads nowhere.
 */
static __always_inline long fp_step(struct unwind_state *st, __u8 why)
{
	__u64 ra, bp;

	if (!st->bp_ok || st->bp <= st->sp || (st->bp & 7) || no_user_memory(st->bp)) {
		st->mark = why;
		return 1;
	}
	bp_used();
	if (UREAD(st, st->bp + 8, ra) || UREAD(st, st->bp, bp)) {
		st->mark = why;
		return 1;
	}
	st->sp = st->bp + 16;
	st->bp = bp;
	st->ip = ra;
	st->exact_ip = 0;
	st->via_fp = why;
	return 0;
}

/*
 * One frame of the walk (see the top of this file); 0 to go on, 1 to stop.
 * A global function: bpf_loop's callback is verified again for every state
 * its caller reaches the loop in, a global function only once.
 */
__noinline long unwind_frame(void)
{
	const struct offcpu_cfi_row *row = NULL;
	const struct offcpu_umap *m;
	struct offcpu_umaps *um;
	struct unwind_state *st;
	struct offcpu_stack *buf;
	__u32 zero = 0, chunk, nrows;
	__u64 look, cfa, ra, bp;
	void *inner;
	int idx, r;
	__u8 cfa_kind;

	st = bpf_map_lookup_elem(&ustate, &zero);
	buf = bpf_map_lookup_elem(&scratch, &zero);
	if (!st || !buf)
		return 1;
	/* A return address of 0 ends a chain: the outermost frame was reached. */
	if (!st->ip)
		return 1;
	um = bpf_map_lookup_elem(&umaps, &st->tgid);
	if (!um && !st->n) {
		/* from here on the walk, and a raw copy of it, uses the parent's */
		__u32 owner = umaps_parent();

		if (owner) {
			st->tgid = owner;
			um = bpf_map_lookup_elem(&umaps, &owner);
		}
	}
	if (!um) {
		st->mark = OFFCPU_UMARK_NO_MAPS;
		return 1;
	}
	look = st->exact_ip ? st->ip : st->ip - 1;
	idx = umap_find(st->tgid, look);
	if (idx < 0) {
		/* After a frame-pointer step: that step was the guess that failed. */
		st->mark = st->via_fp ? st->via_fp : OFFCPU_UMARK_OUTSIDE;
		return 1;
	}
	if (st->n >= OFFCPU_MAX_STACK - 1) {
		st->mark = OFFCPU_UMARK_TRUNCATED;
		return 1;
	}
	buf->ips[st->n & 127] = st->ip;
	st->n++;
	m = &um->m[idx & (OFFCPU_MAX_UMAPS - 1)];
	chunk = m->chunk;
	nrows = m->nrows;
	if (!chunk && nrows == OFFCPU_UMARK_PENDING) {
		/* User space builds the table from the raw copy sent for this walk. */
		st->mark = OFFCPU_UMARK_PENDING;
		st->need_pc = look;
		return 1;
	}
	if (!chunk)
		return fp_step(st, nrows && nrows < OFFCPU_UMARK_MAX ? nrows : OFFCPU_UMARK_NO_CFI);
	r = row_find(chunk, m->first, nrows, look - m->base);
	inner = r >= 0 ? bpf_map_lookup_elem(&cfi_files, &chunk) : NULL;
	if (inner)
		row = bpf_map_lookup_elem(inner, &r);
	cfa_kind = row ? OFFCPU_CFI_CFA(row->rule) : OFFCPU_CFA_NONE;
	switch (cfa_kind) {
	case OFFCPU_CFA_SP:
		cfa = st->sp + (__u64)row->cfa_off * 8;
		break;
	case OFFCPU_CFA_FP:
		if (!st->bp_ok) {
			st->mark = OFFCPU_UMARK_UNSUPPORTED;
			return 1;
		}
		bp_used();
		cfa = st->bp + (__u64)row->cfa_off * 8;
		break;
	case OFFCPU_CFA_PLT:
		cfa = st->sp + (__u64)row->cfa_off * 8 +
		      ((st->ip & 15) >= (__u64)row->fp_off ? 8 : 0);
		break;
	case OFFCPU_CFA_SIGNAL: {
		__u64 ip, sp;

		/* The handler returned here: the interrupted registers are in the ucontext. */
		if (UREAD(st, st->sp + UC_RIP, ip) || UREAD(st, st->sp + UC_RSP, sp) ||
		    UREAD(st, st->sp + UC_RBP, bp)) {
			st->mark = OFFCPU_UMARK_UNREADABLE;
			return 1;
		}
		st->ip = ip;
		st->sp = sp;
		st->bp = bp;
		st->bp_ok = 1;
		st->exact_ip = 1;
		st->via_fp = 0;
		return 0;
	}
	case OFFCPU_CFA_END:
		return 1;
	case OFFCPU_CFA_NONE:
		return fp_step(st, OFFCPU_UMARK_NO_CFI);
	case OFFCPU_CFA_RA_RDI:
		/*
		 * vfork's system call: the return address is in rdi, saved by the
		 * kernel at the entry, so only for the interrupted frame. The
		 * caller's cache keys neither rdi nor its frame: not cached.
		 */
		if (st->n != 1 || !st->exact_ip) {
			st->mark = OFFCPU_UMARK_UNSUPPORTED;
			return 1;
		}
		if (OFFCPU_CFI_FP(row->rule) == OFFCPU_FP_UNKNOWN)
			st->bp_ok = 0;
		st->sp += (__u64)row->cfa_off * 8;
		st->ip = st->di;
		st->exact_ip = 0;
		st->via_fp = 0;
		st->nocache = 1;
		return 0;
	default:
		st->mark = OFFCPU_UMARK_UNSUPPORTED;
		return 1;
	}
	/* The caller's frame lies above this one: anything else is a bad rule or a bad stack. */
	if (cfa <= st->sp) {
		st->mark = OFFCPU_UMARK_UNSUPPORTED;
		return 1;
	}
	if (UREAD(st, cfa - 8, ra)) {
		st->mark = OFFCPU_UMARK_UNREADABLE;
		return 1;
	}
	if (OFFCPU_CFI_FP(row->rule) == OFFCPU_FP_SAVED) {
		if (uread(cfa + (__s64)row->fp_off * 8, 1) || (bp = st->rv, 0)) {
			st->mark = OFFCPU_UMARK_UNREADABLE;
			return 1;
		}
		st->bp = bp;
		st->bp_ok = 1;
	} else if (OFFCPU_CFI_FP(row->rule) == OFFCPU_FP_UNKNOWN) {
		st->bp_ok = 0;
	}
	st->sp = cfa;
	st->ip = ra;
	st->exact_ip = 0;
	st->via_fp = 0;
	return 0;
}

struct raw_hash {
	__u64 h;
};

static long raw_hash_step(__u32 i, void *ctx)
{
	struct raw_hash *c = ctx;
	struct unwind_state *st;
	__u32 zero = 0;

	st = bpf_map_lookup_elem(&ustate, &zero);
	if (!st)
		return 1;
	c->h = mix(c->h, st->raw.win[i & (OFFCPU_RAW_WIN / 8 - 1)]);
	return 0;
}

/*
 * This CPU's unwind window, from its sp. A global function: the fallbacks of
 * read_window() would otherwise multiply the states of the whole program.
 */
__noinline int uwin_fill(void)
{
	struct unwind_state *st;
	__u32 zero = 0;

	st = bpf_map_lookup_elem(&ustate, &zero);
	if (!st)
		return 0;
	st->raw.len = read_window(st->raw.win, st->sp, OFFCPU_UWIN_MAX);
	return 0;
}

static long unwind_step(__u32 i, void *ctx)
{
	return unwind_frame() ? 1 : 0;
}

/*
 * Ask user space for the table of the binary at pc (lazy tables), when the
 * process may send no more raw stacks: until it is built, each such walk
 * asks again. No wakeup: user space reads it at its next poll.
 */
static __always_inline void need_send(__u32 tgid, __u64 pc)
{
	struct offcpu_need *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e)
		return;
	e->type = OFFCPU_EV_NEED;
	e->tgid = tgid;
	e->pc = pc;
	bpf_ringbuf_submit(e, 0);
}

/*
 * Send this CPU's raw user stack (registers and window) for user space to
 * unwind, once per distinct content: its id is a hash of all of it. A
 * global function, so its loop is verified once.
 */
__noinline __u64 raw_commit(__u32 tgid)
{
	struct unwind_state *st;
	__u32 zero = 0, len;
	__u64 h = 0x6a09e667f3bcc909ULL, id, size;
	struct raw_hash hc;
	__u8 one = 1;

	st = bpf_map_lookup_elem(&ustate, &zero);
	if (!st)
		return ENOMEM;
	/* Deeper than the unwinder's own window: user space gets one chance only. */
	len = read_window(st->raw.win, st->raw.sp, OFFCPU_RAW_WIN);
	h = mix(h, tgid);
	h = mix(h, st->raw.ip);
	h = mix(h, st->raw.sp);
	h = mix(h, st->raw.bp);
	h = mix(h, st->raw.di);
	h = mix(h, len);
	/* A bpf_loop, not a loop: verified once, whatever len the reads gave. */
	hc.h = h;
	bpf_loop(len / 8, raw_hash_step, &hc, 0);
	h = hc.h;
	st->raw.len = len;
	id = h | OFFCPU_STACK_REAL;
	if (bpf_map_lookup_elem(&stacks, &id))
		return id;
	st->raw.type = OFFCPU_EV_RAW_USTACK;
	st->raw.tgid = tgid;
	st->raw.id = id;
	size = offsetof(struct offcpu_raw_ustack, win) + len;
	/* Woken: a few of these fill the ring buffer (OFFCPU_MAX_RAWS per process bounds them). */
	if (size > sizeof(st->raw) ||
	    bpf_ringbuf_output(&events, &st->raw, size, BPF_RB_FORCE_WAKEUP))
		return OFFCPU_STACK_LOST;
	bpf_map_update_elem(&stacks, &id, &one, BPF_NOEXIST);
	return id;
}

/*
 * Unwind the current task's user stack into this CPU's scratch buffer and
 * commit it (stack_commit()). ustate's transient: the stack ended for a
 * reason that may not hold next time (mappings not loaded yet, an address
 * outside the known mappings, a page not present): the caller must not cache
 * it, and user space is asked to read the process's mappings again. A global
 * function: verified once, not for every state its caller reaches it in.
 */
__noinline __u64 unwind_user(__u32 tgid)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	struct offcpu_stack *buf;
	struct unwind_state *st;
	__u32 zero = 0, n;

	st = bpf_map_lookup_elem(&ustate, &zero);
	buf = bpf_map_lookup_elem(&scratch, &zero);
	if (!regs || !st || !buf)
		return ENOMEM;
	STAT(walks_user, 1);
	STAT(uwalks_dwarf, 1);
	st->ip = PT_REGS_IP(regs);
	st->sp = PT_REGS_SP(regs);
	st->bp = PT_REGS_FP(regs);
	st->di = PT_REGS_PARM1(regs);
	st->sp0 = st->sp;
	st->raw.ip = st->ip;
	st->raw.sp = st->sp;
	st->raw.bp = st->bp;
	st->raw.di = st->di;
	st->tgid = tgid;
	st->n = 0;
	st->nslots = 0;
	st->umax = 0;
	st->hash = 0x9e3779b97f4a7c15ULL;
	st->bp_ok = 1;
	st->exact_ip = 1;
	st->via_fp = 0;
	st->mark = 0;
	st->overflow = 0;
	st->bp_pending = 0;
	st->transient = 0;
	st->nocache = 0;
	/* Near the top of a stack mapping a full window is not readable: try less. */
	uwin_fill();
	bpf_loop(OFFCPU_MAX_STACK, unwind_step, NULL, 0);
	/*
	 * No mappings yet (a process just started), or none holding the pc
	 * (read before the loader mapped its libraries): user space unwinds it
	 * once it has them. The same for a walk that reached a binary whose
	 * table is built at its first need (collect/unwind.h): user space
	 * builds it, unwinds this copy, and the next walks have it.
	 */
	if (((st->mark == OFFCPU_UMARK_NO_MAPS || st->mark == OFFCPU_UMARK_OUTSIDE) && !st->n) ||
	    st->mark == OFFCPU_UMARK_PENDING) {
		struct offcpu_proc *p = bpf_map_lookup_elem(&procs, &tgid);

		st->transient = 1;
		if (!p || p->raws < OFFCPU_MAX_RAWS) {
			if (p)
				p->raws++;
			STAT(uraw_sent, 1);
			/* unwound in user space with the mappings of the owner */
			return raw_commit(st->tgid);
		}
		if (st->mark == OFFCPU_UMARK_PENDING)
			need_send(st->tgid, st->need_pc);
	}
	n = st->n;
	if (st->mark) {
		if (n < OFFCPU_MAX_STACK)
			buf->ips[n & 127] = OFFCPU_UMARK_BASE | st->mark;
		n++;
		STAT(umarks[st->mark & (OFFCPU_UMARK_SLOTS - 1)], 1);
		st->transient =
			st->mark == OFFCPU_UMARK_NO_MAPS || st->mark == OFFCPU_UMARK_OUTSIDE ||
			st->mark == OFFCPU_UMARK_UNREADABLE || st->mark == OFFCPU_UMARK_PENDING;
	}
	STAT(uframes, st->n);
	if (n > OFFCPU_MAX_STACK)
		n = OFFCPU_MAX_STACK;
	return stack_commit((long)n * 8, true);
}

/*
 * uslots_match()'s hash of site s's slots read one word at a time, for
 * slots beyond the window it copies (or when the copy failed). A global
 * function: its loop has no branch for the verifier to walk both ways.
 */
__noinline __u64 uslots_hash_far(const struct offcpu_site *s, __u64 sp)
{
	__u64 h = 0x9e3779b97f4a7c15ULL;

	if (!s)
		return 0;
	for (__u32 i = 0; i < OFFCPU_USLOTS; i++) {
		__u64 v = 0;

		if (i >= s->nu)
			break;
		if (bpf_probe_read_user(&v, sizeof(v), (const void *)(sp + (__u64)s->uslot[i] * 8)))
			return ~s->uhash; /* no match */
		h = mix(h, v);
	}
	return h;
}

/*
 * User memory through the kernel's direct map: the leaving thread's page
 * table walked by plain loads (kword()), the words read the same way. A
 * cache hit's check otherwise costs one bpf_probe_read_user(), 190 ns of a
 * 560 ns switch on the pinned pipe benchmark (BENCHMARKS.md), where these
 * are a few loads of lines the hardware walk and the user code left warm.
 *
 * The x86-64 page table format is the architecture's; what the kernel
 * chooses, the direct map's base (page_offset_base) and the number of
 * levels, upt_probe() learns at start by reading a word of its own process
 * both ways (0: not learnt, every check reads with the helper). A page not
 * present (swapped out, PROT_NONE) also takes the helper. Nothing here can
 * give a wrong stack: what is read is only ever compared with the hash of
 * the words the unwind read (uslots_match()), and a load the kernel cannot
 * do reads 0.
 */
__u64 upt_dmap = 0;
__u32 upt_levels = 0;

#define UPT_PRESENT 0x1ULL
#define UPT_HUGE 0x80ULL	       /* a 1 GiB or 2 MiB page at the PUD or PMD level */
#define UPT_ADDR 0x000ffffffffff000ULL /* the physical address bits of an entry */

/*
 * The direct-map address of user address va in page table pgd, or 0; into
 * st->pte, where its last-level entry lies (0: a 2 MiB or 1 GiB page).
 * The four levels below the top are unrolled with constant shifts: as a
 * loop whose shift started at 39 or 48, the verifier walked it once for
 * each (1,000 processed instructions more for sched_switch, 1,000 for
 * upt_probe).
 */
static __always_inline __u64 upt_walk_in(__u64 pgd, __u64 va, struct unwind_state *st)
{
	__u64 table = pgd, dmap = upt_dmap, e = 0;

	if (!st)
		return 0;
	st->pte = 0;
	if (!dmap || !pgd)
		return 0;
	/* The fifth level first, if there is one: the other four keep constant shifts. */
	if (upt_levels == 5) {
		e = kword((const void *)table, ((va >> 48) & 511) * 8);
		if (!(e & UPT_PRESENT))
			return 0;
		table = dmap + (e & UPT_ADDR);
	}
#pragma unroll
	for (int shift = 39; shift >= 12; shift -= 9) {
		__u64 mask = (1ULL << shift) - 1;

		e = kword((const void *)table, ((va >> shift) & 511) * 8);
		if (!(e & UPT_PRESENT))
			return 0;
		if (shift == 12)
			st->pte = table + ((va >> 12) & 511) * 8;
		if (shift == 12 || ((shift == 21 || shift == 30) && (e & UPT_HUGE)))
			return dmap + (e & UPT_ADDR & ~mask) + (va & mask);
		table = dmap + (e & UPT_ADDR);
	}
	return 0;
}

/* upt_walk_in() as a global function, verified once. */
__noinline __u64 upt_walk(__u64 pgd, __u64 va, struct unwind_state *st)
{
	return upt_walk_in(pgd, va, st);
}

/*
 * The direct-map addresses of the n + 1 pages from page-aligned va, into
 * st->page[]: 0, or -1 if one is not present. One walk; the pages after
 * the first take the entries after its in the same last-level table (a
 * second walk cost a switch about 100 ns where a site's words cross a page:
 * half of the pipe benchmark's runs, by where ASLR put the stack). In a
 * huge page, or past a table's end, each page is walked. The state is in
 * map memory, whose contents the verifier does not follow: the loop is
 * walked once. In line in uslots_match() (a global function): two calls
 * fewer on every hit.
 */
static __always_inline int upt_pages(__u64 pgd, __u64 va, __u64 n, struct unwind_state *st)
{
	__u64 k, e;

	if (!st)
		return -1;
	k = upt_walk_in(pgd, va, st);
	if (!k)
		return -1;
	st->page[0] = k;
	for (__u32 p = 1; p < UPT_PAGES; p++) {
		if (p > n)
			break;
		if (st->pte && ((st->pte + 8) & 4095)) {
			st->pte += 8;
			e = kword((const void *)st->pte, 0);
			k = (e & UPT_PRESENT) ? upt_dmap + (e & UPT_ADDR) : 0;
		} else {
			k = upt_walk(pgd, va + p * 4096, st);
		}
		if (!k)
			return -1;
		st->page[p & (UPT_PAGES - 1)] = k;
	}
	return 0;
}

/*
 * uslots_match() through the page table: 1 the words hash to the site's,
 * 0 they do not, -1 a page could not be reached (read with the helper).
 * The pages from sp to the farthest word are found first (upt_pages()):
 * the loop over the words then has no branch per word. n, the pages past
 * the first, is compared apart from first: with first + p > last as the
 * test, the verifier learnt another bound on first at each way out of the
 * page loop and walked the word loop once for each (26,000 processed
 * instructions of sched_switch instead of 16,600). In line in
 * uslots_match().
 */
static __always_inline int uslots_direct(const struct offcpu_site *s, __u64 sp, __u64 pgd,
					 struct unwind_state *st)
{
	__u64 h = 0x9e3779b97f4a7c15ULL, first = sp >> 12, n;

	if (sp & 7)
		return -1;
	n = ((sp + (__u64)s->umax * 8) >> 12) - first;
	if (n >= UPT_PAGES || upt_pages(pgd, first << 12, n, st))
		return -1;
	for (__u32 i = 0; i < OFFCPU_USLOTS; i++) {
		__u64 va;

		if (i >= s->nu)
			break;
		/* 8-aligned from an 8-aligned sp: no word crosses a page. */
		va = sp + (__u64)s->uslot[i] * 8;
		h = mix(h, kword((const void *)st->page[((va >> 12) - first) & (UPT_PAGES - 1)],
				 va & 4095));
	}
	return h == s->uhash;
}

/*
 * Whether the user stack words a site's unwind read (its slots, offsets from
 * sp) still hold the values they held (the hash of them, in reading order).
 * The unwind is a function of the registers (in the key), those words and
 * the tables: same words, same stack. A global function, verified once
 * rather than for every way; given the site itself, not its thread's id (a
 * lookup in threads was a fifth of a cache hit's cost). The words
 * come from one copy of the stack up to the largest slot; in the loop, a
 * slot outside it hands the whole hash to uslots_hash_far() (a branch that
 * ends the walk: with a read in line there, the verifier walked every
 * remaining pass twice, 3,600 instructions).
 */
__noinline int uslots_match(const struct offcpu_site *s, __u64 sp, __u64 pgd)
{
	struct unwind_state *st;
	__u32 zero = 0, len;
	__u64 h = 0x9e3779b97f4a7c15ULL;
	int m;

	if (!s)
		return 0;
	if (!s->nu)
		return 1;
	st = bpf_map_lookup_elem(&ustate, &zero);
	if (!st)
		return 0;
	if (pgd && (m = uslots_direct(s, sp, pgd, st)) >= 0) {
		STAT(uslot_direct, 1);
		return m;
	}
	STAT(uslot_helper, 1);
	len = ((__u32)s->umax + 1) * 8;
	if (len > OFFCPU_UWIN_MAX)
		len = OFFCPU_UWIN_MAX;
	if (bpf_probe_read_user(st->raw.win, len, (const void *)sp))
		return uslots_hash_far(s, sp) == s->uhash;
	for (__u32 i = 0; i < OFFCPU_USLOTS; i++) {
		__u64 off;

		if (i >= s->nu)
			break;
		off = (__u64)s->uslot[i] * 8;
		if (off >= len)
			return uslots_hash_far(s, sp) == s->uhash;
		h = mix(h, st->raw.win[(off >> 3) & (UWIN_WORDS - 1)]);
	}
	return h == s->uhash;
}

#else
#define OFFCPU_HAVE_DWARF_UNWIND 0
#endif

#endif
