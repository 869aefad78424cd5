// SPDX-License-Identifier: GPL-2.0-only
/*
 * The built-in collector at stop: stack ids to the profile's frames,
 * symbolized, with a placeholder frame for a stack that could not be had.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "collect/native_priv.h"
#include "collect/unwind.h"
#include "model/frame_name.h"
#include "util/vec.h"

const char *native_errno_name(unsigned int e, bool upper)
{
	static const struct {
		unsigned int e;
		const char *lo, *up;
	} names[] = {
		{EFAULT, "efault", "EFAULT"}, {ENOMEM, "enomem", "ENOMEM"},
		{EEXIST, "eexist", "EEXIST"}, {EINVAL, "einval", "EINVAL"},
		{ENOENT, "enoent", "ENOENT"}, {EPERM, "eperm", "EPERM"},
		{EBUSY, "ebusy", "EBUSY"},    {EOPNOTSUPP, "eopnotsupp", "EOPNOTSUPP"},
		{ENOSPC, "enospc", "ENOSPC"},
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == e)
			return upper ? names[i].up : names[i].lo;
	return NULL;
}

/* The placeholder frame of a stack that could not be had; side NULL: both sides. */
static int missing_frame(struct profile *p, const char *side, uint64_t id)
{
	const char *sp = side ? " " : "", *name;
	char buf[96];

	side = side ? side : "";
	if (id == OFFCPU_STACK_BEFORE_START)
		snprintf(buf, sizeof(buf), "[%s%sstack unknown: off-CPU since before start]", side,
			 sp);
	else if (id == OFFCPU_STACK_NEW_THREAD)
		snprintf(buf, sizeof(buf), "[new thread: waiting for its first run]");
	else if (id == OFFCPU_STACK_UNSEEN)
		snprintf(buf, sizeof(buf), "[%s%sstack unknown: switch-out not reported]", side,
			 sp);
	else if (id == OFFCPU_STACK_LOST)
		snprintf(buf, sizeof(buf), "[missing %s%sstack: ring buffer full]", side, sp);
	else if (id == ENOENT)
		snprintf(buf, sizeof(buf), "[missing %s%sstack: never received]", side, sp);
	else if ((name = native_errno_name(id, true)))
		snprintf(buf, sizeof(buf), "[missing %s%sstack: %s]", side, sp, name);
	else
		snprintf(buf, sizeof(buf), "[missing %s%sstack: errno %" PRIu64 "]", side, sp, id);
	return profile__frame(p, FRAME_MISSING, buf, strlen(buf));
}

static bool tracer_frame(const char *name)
{
	return !strncmp(name, "bpf_prog_", 9) || !strncmp(name, "bpf_trace_run", 13) ||
	       !strncmp(name, "__bpf_trace_", 12) || !strncmp(name, "__traceiter_", 12) ||
	       !strncmp(name, "bpf_trampoline_", 15);
}

static int part_push(struct part *pt, int id)
{
	if (id < 0)
		return id;
	if (vec_reserve(pt->ids, pt->cap, pt->n + 1))
		return -ENOMEM;
	pt->ids[pt->n++] = id;
	return 0;
}

/*
 * glibc has no CFI for the instructions of clone3/clone that start a new
 * thread: an unwind that stops there has reached the thread's first frame
 * (perf prints "[unknown]" above it). Nor has ld.so for its _start, the
 * process's first frame while the loader runs, before the executable's
 * own _start.
 */
static bool thread_entry(const char *name)
{
	return !strcmp(name, "_start") || !strcmp(name, "clone3") || !strcmp(name, "__clone3") ||
	       !strcmp(name, "clone") || !strcmp(name, "__clone") ||
	       !strcmp(name, "__GI___clone3") || !strcmp(name, "__GI___clone");
}

/*
 * The marker frame that ends user stack st (its last entry, OFFCPU_UMARK_BASE |
 * why): "[unwind: REASON in BIN]", BIN the binary of the outermost real frame.
 * Returns 0 with *id -1 when there is no marker or it only says the stack
 * reached a thread's start; else the frame's id in *id.
 */
static int user_marker(struct build *b, uint32_t tgid, const struct native_stack *st, int *id)
{
	uint64_t why = st->ips[st->nr - 1] & ~OFFCPU_UMARK_BASE;
	const char *reason = unwind_mark__reason(why), *bin = NULL;
	char name[256];

	*id = -1;
	if (st->nr >= 2 && b->sym) {
		uint64_t ip = st->ips[st->nr - 2] - (st->nr > 2);
		struct sym_frame fr[8];
		int k = symbolizer__user_at(b->sym, tgid, st->seq, ip, fr, 8);

		if (why == OFFCPU_UMARK_NO_CFI && k > 0 && thread_entry(fr[0].name))
			return 0;
		/*
		 * A thread on its way out: glibc has discarded its stack above
		 * start_thread's frame (madvise), the thread's first frame.
		 */
		if (why == OFFCPU_UMARK_UNREADABLE && k > 0 && !strcmp(fr[0].name, "start_thread"))
			return 0;
		bin = symbolizer__binary_name_at(b->sym, tgid, st->seq, ip);
	}
	if (!reason)
		snprintf(name, sizeof(name), "[unwind: stopped (%" PRIu64 ")]", why);
	else if (bin)
		snprintf(name, sizeof(name), "[unwind: %s in %s]", reason, bin);
	else
		snprintf(name, sizeof(name), "[unwind: %s]", reason);
	*id = profile__frame(b->p, FRAME_MISSING, name, strlen(name));
	return *id < 0 ? *id : 0;
}

/*
 * A user stack the BPF side could not unwind (the process's mappings were not
 * loaded yet), unwound now and kept as if it had been sent as frames; its raw
 * copy is freed. *out stays NULL when id is not such a stack, or when not
 * final and the mappings read so far do not hold its first pc yet (a library
 * the loader maps after the process was read): a later read will.
 */
int native_raw_unwind(struct native *n, uint64_t id, const struct native_stack **out, bool final)
{
	struct native_raw *raw = ntable_find(&n->raws, &id);
	uint64_t ips[OFFCPU_MAX_STACK];
	struct native_stack *ns;
	bool created;
	size_t nr;

	if (!raw || !raw->r)
		return 0;
	nr = unwinder__unwind_raw(n->unw, raw->r, raw->len, ips, OFFCPU_MAX_STACK);
	if (!final && nr == 1 &&
	    (ips[0] == (OFFCPU_UMARK_BASE | OFFCPU_UMARK_NO_MAPS) ||
	     ips[0] == (OFFCPU_UMARK_BASE | OFFCPU_UMARK_OUTSIDE)))
		return 0;
	free(raw->r);
	raw->r = NULL;
	ns = ntable_get(&n->stacks, &id, &created);
	if (!ns)
		return -ENOMEM;
	if (created)
		ns->seq = raw->seq;
	if (created && nr) {
		ns->ips = malloc(nr * sizeof(*ns->ips));
		if (!ns->ips)
			return -ENOMEM;
		memcpy(ns->ips, ips, nr * sizeof(*ns->ips));
		ns->nr = nr;
	}
	ns->used = (uint32_t)n->cuts;
	*out = ns;
	return 0;
}

/* Frames of stack id of one side, root first, interned into the profile. */
static int part_build(struct build *b, struct part *pt, bool user, uint32_t tgid, uint64_t id)
{
	const struct native_stack *st;
	char name[256];
	size_t first = 0, nr;
	int e;

	if (id == OFFCPU_STACK_NONE)
		return 0;
	if (!(id & OFFCPU_STACK_REAL))
		return part_push(pt, missing_frame(b->p, user ? "user" : "kernel", id));
	st = ntable_find(&b->n->stacks, &id);
	if (!st && user && (e = native_raw_unwind(b->n, id, &st, true)))
		return e;
	if (st)
		((struct native_stack *)st)->used = (uint32_t)b->n->cuts;
	if (!st || !st->nr) {
		b->unresolved++;
		return part_push(pt, missing_frame(b->p, user ? "user" : "kernel", ENOENT));
	}
	if (!user && !b->n->sched_lo && b->sym) {
		/* No __schedule anchor in the kernel: drop tracer frames by name. */
		while (first + 1 < st->nr &&
		       !symbolizer__kernel(b->sym, st->ips[first] - 1, name, sizeof(name)) &&
		       tracer_frame(name))
			first++;
		b->stripped += first != 0;
	}
	nr = st->nr;
	if (user && st->ips[nr - 1] >= OFFCPU_UMARK_BASE) {
		int mark;

		nr--;
		if ((e = user_marker(b, tgid, st, &mark)) ||
		    (mark >= 0 && (e = part_push(pt, mark))))
			return e;
	}
	for (size_t i = nr; i-- > first;) {
		uint64_t ip = st->ips[i];
		int err = 0;

		if (!b->sym) {
			snprintf(name, sizeof(name), "0x%" PRIx64, ip);
			err = part_push(pt, profile__frame(b->p, user ? FRAME_USER : FRAME_KERNEL,
							   name, strlen(name)));
		} else if (!user) {
			/* Return addresses: look up the call instruction, not the one after. */
			symbolizer__kernel(b->sym, ip - 1, name, sizeof(name));
			err = part_push(pt, profile__frame(b->p, FRAME_KERNEL, name, strlen(name)));
		} else if (b->n->unw &&
			   unwinder__signal_frame(b->n->unw, tgid, i == 0 ? ip : ip - 1)) {
			err = part_push(pt, profile__frame(b->p, FRAME_USER, FRAME_NAME_SIGNAL,
							   strlen(FRAME_NAME_SIGNAL)));
		} else {
			struct sym_frame fr[8];
			int k = symbolizer__user_at(b->sym, tgid, st->seq, i == 0 ? ip : ip - 1, fr,
						    8);

			if (k <= 0) {
				snprintf(fr[0].name, sizeof(fr[0].name), "0x%" PRIx64, ip);
				k = 1;
			}
			/*
			 * Code in no mapping the symbolizer read (an image gone by
			 * an exec since): say so, never pass the address off as a name.
			 */
			if (k == 1 && !strncmp(fr[0].name, "0x", 2)) {
				char raw[sizeof(fr[0].name)];

				snprintf(raw, sizeof(raw), "%s", fr[0].name);
				frame_name__unsymbolize(raw, strlen(raw), fr[0].name,
							sizeof(fr[0].name));
			}
			for (int j = 0; j < k && !err; j++)
				err = part_push(
					pt,
					profile__frame(b->p,
						       fr[j].is_inline ? FRAME_INLINE : FRAME_USER,
						       fr[j].name,
						       strnlen(fr[j].name, sizeof(fr[j].name))));
		}
		if (err)
			return err;
	}
	return 0;
}

static int part_get(struct build *b, bool user, uint32_t tgid, uint64_t id, const struct part **out)
{
	struct part_key key = {.id = id, .tgid = user ? tgid : 0, .user = user};
	struct part *pt, built = {};
	bool created;
	int err;

	pt = ntable_find(&b->parts, &key);
	if (pt) {
		*out = pt;
		return 0;
	}
	if ((err = part_build(b, &built, user, tgid, id))) {
		free(built.ids);
		return err;
	}
	pt = ntable_get(&b->parts, &key, &created);
	if (!pt) {
		free(built.ids);
		return -ENOMEM;
	}
	*pt = built;
	*out = pt;
	return 0;
}

/* The profile stack of a row: user part then kernel part, each root first. */
int native_stack_of(struct build *b, const struct offcpu_agg_key *k)
{
	const struct part *u = NULL, *kp = NULL;
	uint32_t *ids;
	size_t nr;
	int err, id;

	/* Both sides unknown for the same reason: one placeholder says it. */
	if (k->kstack == k->ustack &&
	    (k->kstack == OFFCPU_STACK_BEFORE_START || k->kstack == OFFCPU_STACK_NEW_THREAD ||
	     k->kstack == OFFCPU_STACK_UNSEEN)) {
		uint32_t one;

		if ((id = missing_frame(b->p, NULL, k->kstack)) < 0)
			return id;
		one = id;
		return profile__stack(b->p, &one, 1);
	}
	if ((err = part_get(b, true, k->tgid, k->ustack, &u)) ||
	    (err = part_get(b, false, k->tgid, k->kstack, &kp)))
		return err;
	nr = u->n + kp->n;
	ids = malloc((nr ? nr : 1) * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	if (u->n)
		memcpy(ids, u->ids, u->n * sizeof(*ids));
	if (kp->n)
		memcpy(ids + u->n, kp->ids, kp->n * sizeof(*ids));
	id = profile__stack(b->p, ids, nr);
	free(ids);
	return id;
}
