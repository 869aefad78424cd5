/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The call-site cache of offcpu.bpf.c: a key read from the leaving thread's
 * registers selects the stacks walked for it before (see site_key() and
 * take_stacks()). Included once, by offcpu.bpf.c after stacks.bpf.h.
 */
#ifndef OFFCPU_BPF_CACHE_BPF_H
#define OFFCPU_BPF_CACHE_BPF_H

/* The syscall number a thread entered the kernel with (see OFFCPU_KEY_SYSCALL). */
#if defined(__TARGET_ARCH_x86)
#define PT_REGS_SYSCALL_NR(r) ((r)->orig_ax)
#elif defined(__TARGET_ARCH_arm64)
#define PT_REGS_SYSCALL_NR(r) ((__u64)(r)->syscallno)
#endif

/*
 * The call-site key of the thread leaving now (enum offcpu_key_word), read
 * without walking: from the registers it entered the kernel with, the user
 * ip, sp and frame pointer, the syscall number, and user_chain(), the
 * chain's words within OFFCPU_UWIN bytes above the frame pointer; the word
 * below the user pt_regs, the return address into the entry code
 * (entry_SYSCALL_64, asm_exc_page_fault, asm_sysvec_*), the outermost kernel
 * frame; and prev_state << 1 | in_iowait.
 *
 * The kernel frames in between are not in the key: a site keeps the stack
 * offsets of its return addresses (kernel_sig()), and a hit requires the
 * same values at the same offsets now (kslots_match()). The kernel walk is a
 * function of those values (ORC: each return address gives the next one's
 * offset), so a hit of a kernel-exact site gives the stack the walk would.
 *
 * The user pt_regs sit at the top of every task's kernel stack, at a fixed
 * offset from its base (regs_off, learned from bpf_task_pt_regs() at the
 * first switch-out): where bpf_rdonly_cast() exists they are read from
 * there, a helper call less. Either way the PT_REGS_* reads are plain loads,
 * CO-RE relocated through kernel_types.h.
 */
__u64 regs_off = 0;

/* The largest kernel stack there is (THREAD_SIZE: 16 KiB, 32 KiB with KASAN). */
#define OFFCPU_KSTACK_MAX (64 << 10)

static __always_inline void site_key(struct task_struct *t, __u32 prev_state, bool kthread,
				     __u64 *k, __u64 *pgd, const bool btf)
{
	struct task_struct *cur = btf ? t : bpf_get_current_task_btf();
	struct pt_regs *regs = NULL;
	__u64 stack = 0, off;

	if (btf && kmem_direct) {
		stack = ptr_value(t->stack);
		off = *(volatile __u64 *)&regs_off;
		if (off)
			regs = bpf_rdonly_cast((void *)(stack + off), kid_pt_regs);
	}
	if (!regs) {
		regs = (struct pt_regs *)bpf_task_pt_regs(cur);
		off = ptr_value(regs) - stack;
		if (regs && stack && off < OFFCPU_KSTACK_MAX)
			regs_off = off;
	}
	if (!regs)
		return;
	if (!kthread) {
#if OFFCPU_HAVE_DWARF_UNWIND
		/* Plain loads: a thread without an mm (exiting) reads 0, the helper's case. */
		if (btf && kmem_direct)
			*pgd = ptr_value(((struct task_struct *)bpf_rdonly_cast(t, kid_task_struct))
						 ->mm->pgd);
#endif
		k[OFFCPU_KEY_IP] = PT_REGS_IP(regs);
		k[OFFCPU_KEY_SP] = PT_REGS_SP(regs);
		k[OFFCPU_KEY_FP] = PT_REGS_FP(regs);
		k[OFFCPU_KEY_SYSCALL] = PT_REGS_SYSCALL_NR(regs);
		/* The unwinder's words are verified per site (uslots_match()), not keyed. */
		if (user_stacks && !(OFFCPU_HAVE_DWARF_UNWIND && dwarf_unwind))
			k[OFFCPU_KEY_CHAIN] = user_chain(k[OFFCPU_KEY_FP]);
	}
	if (kernel_stacks)
		k[OFFCPU_KEY_ENTRY_RET] = kword(regs, -8);
	k[OFFCPU_KEY_STATE] = ((__u64)(prev_state & 0x7fffffff) << 1) |
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

/*
 * Whether the kernel return addresses of site s still sit where they sat
 * (base: the tracepoint's ctx as a number). A global function: verified
 * once, not for every way and every state of its caller.
 */
__noinline int kslots_match(const struct offcpu_site *s, __u64 base)
{
	__u64 h = 0x9e3779b97f4a7c15ULL;

	if (!s)
		return 0;
	for (__u32 i = 0; i < OFFCPU_KSLOTS; i++) {
		if (i >= s->nk)
			break;
		h = mix(h,
			kword((const void *)base, (__u64)(s->kslot[i] & (OFFCPU_KSCAN - 1)) * 8));
	}
	return h == s->khash;
}

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
 * The way of thread th's cache whose key is kb's and whose kernel
 * frames sit where they sat (base: the tracepoint's ctx as a number), or
 * OFFCPU_CACHE_WAYS. A global function, verified once.
 */
__noinline __u32 cache_lookup(const struct offcpu_thread *th, const struct site_keybuf *kb,
			      __u32 tag, __u64 base)
{
	__u32 hit = OFFCPU_CACHE_WAYS;

	if (!th || !kb)
		return hit;
	for (__u32 w = 0; w < OFFCPU_CACHE_WAYS; w++) {
		if (th->tag[w] != tag || !key_eq(th->sites[w].key, kb->k))
			continue;
		if (!kslots_match(&th->sites[w], base))
			STAT(kslot_rejects, 1);
#if OFFCPU_HAVE_DWARF_UNWIND
		else if (dwarf_unwind &&
			 !uslots_match(&th->sites[w], kb->k[OFFCPU_KEY_SP], kb->pgd))
			STAT(uslot_rejects, 1);
#endif
		else
			hit = w;
	}
	return hit;
}

/* A hit's periodic check: the walks k and u either confirm site s or replace its stacks. */
static __always_inline void site_check(struct offcpu_thread *th, __u32 tid, struct offcpu_site *s,
				       __u64 k, __u64 u)
{
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
}

/*
 * The user stack words the unwind just read (this CPU's ustate), to verify
 * hits of way of thread tid's cache by. A global function, verified once.
 */
#if OFFCPU_HAVE_DWARF_UNWIND
__noinline int site_uslots(__u32 tid, __u32 way)
{
	struct offcpu_thread *th = bpf_map_lookup_elem(&threads, &tid);
	struct unwind_state *st;
	struct offcpu_site *s;
	__u32 zero = 0, n;

	st = bpf_map_lookup_elem(&ustate, &zero);
	if (!th || !st)
		return 0;
	s = &th->sites[way & (OFFCPU_CACHE_WAYS - 1)];
	n = st->nslots < OFFCPU_USLOTS ? st->nslots : OFFCPU_USLOTS;
	__builtin_memcpy(s->uslot, st->slot, sizeof(s->uslot));
	/* Kept by unote() as the walk went: no loop here for the verifier to walk. */
	s->umax = st->umax;
	s->nu = n;
	s->uhash = st->hash;
	/* Every word the unwind read is verified at each hit: the site is exact. */
	if (!st->overflow)
		s->exact |= OFFCPU_SITE_USER_EXACT;
	return 0;
}
#else
static __always_inline int site_uslots(__u32 tid, __u32 way)
{
	return 0;
}
#endif

/*
 * A new call site for kb's key, with the walks just taken (th->kstack and
 * th->ustack) and the kernel frames' places kernel_sig() left in this CPU's
 * ksig: it replaces the least used entry. Returns its way. A
 * global function, verified once (in line: 800 processed instructions).
 */
__noinline __u32 site_make(struct offcpu_thread *th, __u32 tid, const struct site_keybuf *kb,
			   __u32 tag, int kthread)
{
	struct offcpu_site *s;
	struct kernel_sig *sig;
	__u32 way, zero = 0;
	const __u64 *key;

	if (!th || !kb)
		return OFFCPU_NO_SITE;
	key = kb->k;
	STAT(cache_misses, 1);
	/*
	 * The least used entry goes (ties: round robin from the clock). A
	 * thread's sites are skewed: a backend of pgbench's TPC-B waits at one
	 * site in 10 of 16 switches and at 400 others in the rest, and round
	 * robin evicted the hot one every fourth miss. The least used: a third
	 * fewer misses there (hits 66% to 82% of lookups), half the BPF time
	 * per switch. Halving the counts lets a new hot site in.
	 */
	way = th->clock & (OFFCPU_CACHE_WAYS - 1);
	for (__u32 i = 1; i < OFFCPU_CACHE_WAYS; i++) {
		__u32 w = (th->clock + i) & (OFFCPU_CACHE_WAYS - 1);

		if (th->freq[w] < th->freq[way])
			way = w;
	}
	if (!(++th->clock & 15))
		for (__u32 i = 0; i < OFFCPU_CACHE_WAYS; i++)
			th->freq[i] >>= 1;
	th->freq[way] = 1;
	s = &th->sites[way];
	if (th->tag[way])
		site_flush(th, tid, s);
	th->tag[way] = tag;
	__builtin_memcpy(s->key, key, sizeof(s->key));
	s->kstack = th->kstack;
	s->ustack = th->ustack;
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
	s->nu = 0;
	s->umax = 0;
	s->uhash = 0x9e3779b97f4a7c15ULL;
	if (!user_stacks || kthread)
		s->exact |= OFFCPU_SITE_USER_EXACT;
	else if (OFFCPU_HAVE_DWARF_UNWIND && dwarf_unwind)
		site_uslots(tid, way);
	else if (key[OFFCPU_KEY_CHAIN] & OFFCPU_CHAIN_WHOLE)
		s->exact |= OFFCPU_SITE_USER_EXACT;
	STAT(sites_made, 1);
	if (s->exact & OFFCPU_SITE_KERNEL_EXACT)
		STAT(sites_kernel_exact, 1);
	if (s->exact & OFFCPU_SITE_USER_EXACT)
		STAT(sites_user_exact, 1);
	return way;
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
	struct offcpu_site *s = NULL;
	__u32 hit = OFFCPU_CACHE_WAYS, zero = 0, tag = 0;
	struct site_keybuf *kb = NULL;
	bool transient = false, nocache = false;
	__u64 k, u, base = 0, *key = NULL;

	th->site = OFFCPU_NO_SITE;
	th->switches++;
	STAT(switches, 1);
	if (cache)
		kb = bpf_map_lookup_elem(&sitekey, &zero);
	if (kb) {
		key = kb->k;
		__builtin_memset(key, 0, sizeof(kb->k));
		kb->pgd = 0;
		site_key(t, prev_state, kthread, key, &kb->pgd, btf);
		tag = key_tag(key);
		base = ptr_value(ctx);
		hit = cache_lookup(th, kb, tag, base);
		if (hit < OFFCPU_CACHE_WAYS) {
			s = &th->sites[hit];
			if (th->freq[hit] < 255)
				th->freq[hit]++;
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
	if (key && !s && kernel_stacks)
		kernel_sig(base, key[OFFCPU_KEY_ENTRY_RET]);
	if (!user_stacks || kthread)
		u = OFFCPU_STACK_NONE;
#if OFFCPU_HAVE_DWARF_UNWIND
	else if (dwarf_unwind) {
		struct unwind_state *st;

		u = unwind_user(tgid);
		st = bpf_map_lookup_elem(&ustate, &zero);
		transient = st && st->transient;
		nocache = st && st->nocache;
	}
#endif
	else
		u = walk(ctx, true);
	th->kstack = k;
	th->ustack = u;
	/* Even when the stack was lost: the process's mappings are what is missing. */
	if (transient) {
		notify_track(tgid, now, TRACK_NO_MAPS);
	} else if (u & OFFCPU_STACK_REAL) {
		struct offcpu_stack *buf = bpf_map_lookup_elem(&scratch, &zero);

		notify_track(tgid, now, buf && buf->pad ? TRACK_NEW_STACK : TRACK_AGAIN);
	}
	if (!key)
		return;
	/* A stack cut by what may change (maps not loaded yet) is not remembered. */
	if (!stack_ok(k) || !stack_ok(u) || transient || nocache) {
		/* A failed walk says nothing about the key: keep the entry as it was. */
		if (s)
			s->hits = 0;
		return;
	}
	if (s) {
		site_check(th, tid, s, k, u);
		th->site = hit;
		return;
	}
	th->site = site_make(th, tid, kb, tag, kthread);
}

#endif
