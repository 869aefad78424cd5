// SPDX-License-Identifier: GPL-2.0-only
/*
 * The built-in collector's snapshot of the targets' threads at start
 * (src/bpf/snapshot.bpf.h): run the iterator once, right after the attach,
 * and keep what it sent under the ids the threads' rows name: the kernel
 * frames as a stack, the user registers and stack as a raw user stack that
 * the unwinder replays like those the BPF side leaves to user space.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collect/native_priv.h"
#include "collect/unwind.h"
#include "symbolize/symbolize.h"
#include "offcpu.skel.h"
#include "util/vec.h"

/*
 * The iterator's output, appended to *buf: one struct offcpu_snap per thread,
 * cut after its stack. Over every task, or the threads of process pid.
 */
static int snap_read(struct native *n, int pid, char **buf, size_t *cap, size_t *got)
{
	union bpf_iter_link_info info = {.task = {.pid = pid > 0 ? (uint32_t)pid : 0}};
	LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &info, .link_info_len = sizeof(info));
	struct bpf_link *link;
	int fd, err = 0;

	link = bpf_program__attach_iter(n->skel->progs.snap, pid > 0 ? &opts : NULL);
	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	for (;;) {
		ssize_t r;

		if (vec_reserve(*buf, *cap, *got + 65536)) {
			err = -ENOMEM;
			break;
		}
		r = read(fd, *buf + *got, *cap - *got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		if (!r)
			break;
		*got += r;
	}
	close(fd);
out:
	bpf_link__destroy(link);
	return err;
}

/* The kernel frames from __schedule on, as the BPF side's walks keep them. */
static int snap_kernel(struct native *n, const struct offcpu_snap *s)
{
	uint64_t id = OFFCPU_SNAP_KSTACK(s->tid);
	uint32_t first = 0, nr = s->knr < OFFCPU_MAX_STACK ? s->knr : OFFCPU_MAX_STACK;
	struct native_stack *ns;
	bool created;

	for (uint32_t i = 0; n->sched_lo && i < nr && i < OFFCPU_MAX_TRACER_FRAMES; i++)
		if (s->kips[i] >= n->sched_lo && s->kips[i] < n->sched_hi) {
			first = i;
			break;
		}
	if (first >= nr)
		return 0;
	ns = ntable_get(&n->stacks, &id, &created);
	if (!ns)
		return -ENOMEM;
	free(created ? NULL : ns->ips);
	ns->used = (uint32_t)n->cuts;
	ns->nr = nr - first;
	ns->ips = malloc(ns->nr * sizeof(*ns->ips));
	if (!ns->ips) {
		ns->nr = 0;
		return -ENOMEM;
	}
	memcpy(ns->ips, s->kips + first, ns->nr * sizeof(*ns->ips));
	return 0;
}

/* The user registers and stack, for the unwinder (native_raw_unwind()). */
static int snap_user(struct native *n, const struct offcpu_snap *s)
{
	size_t len = offsetof(struct offcpu_raw_ustack, win) + s->u.len;
	struct native_raw *raw;
	bool created;

	raw = ntable_get(&n->raws, &s->u.id, &created);
	if (!raw)
		return -ENOMEM;
	if (!created)
		free(raw->r);
	raw->len = s->u.len;
	raw->r = malloc(len);
	if (!raw->r)
		return -ENOMEM;
	memcpy(raw->r, &s->u, len);
	return 0;
}

/*
 * The targets' threads: those of each process given by pid (the iterator
 * then walks only them), else every task. A thread sent twice (its record
 * did not fit the iterator's buffer at first) is kept once.
 */
int native_snapshot(struct native *n, const struct native_opts *o)
{
	const size_t head = offsetof(struct offcpu_snap, u.win);
	struct native_snapped *sn;
	size_t len = 0, cap = 0, threads = 0, user = 0;
	uint64_t t0 = native_mono_ns();
	char *buf = NULL;
	bool created;
	int err = 0;

	if (o->nr_pids) {
		for (size_t i = 0; i < o->nr_pids && !err; i++)
			err = snap_read(n, o->pids[i], &buf, &cap, &len);
	} else {
		err = snap_read(n, 0, &buf, &cap, &len);
	}
	if (err) {
		free(buf);
		return err;
	}
	for (size_t off = 0; off + head <= len;) {
		const struct offcpu_snap *s = (const void *)(buf + off);

		if (s->size < head || s->size > sizeof(*s) || s->size > len - off ||
		    s->u.len > s->size - head || s->size % 8) {
			err = -EPROTO;
			break;
		}
		if (s->knr && (err = snap_kernel(n, s)))
			break;
		sn = ntable_get(&n->snaps, &s->tid, &created);
		if (!sn) {
			err = -ENOMEM;
			break;
		}
		sn->since_ns = s->since_ns;
		sn->state = s->state;
		off += s->size;
		if (!created)
			continue;
		if (s->u.id && s->u.len && (err = snap_user(n, s)))
			break;
		threads++;
		user += s->u.id && s->u.len;
	}
	free(buf);
	n->snapped = threads;
	native_note(n,
		    "snapshot at start: %zu threads off the CPU (%zu with a user stack to unwind), "
		    "read in %.1f ms",
		    threads, user, (native_mono_ns() - t0) / 1e6);
	return err;
}

/* A kernel stack's frames outside the scheduler's section, hashed. */
static uint64_t unsched_hash(const struct native *n, const struct native_stack *st, size_t *nr)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	*nr = 0;
	for (uint32_t i = 0; i < st->nr; i++) {
		uint64_t ip = st->ips[i];

		if (ip >= n->sched_text.lo && ip < n->sched_text.hi)
			continue;
		h = (h ^ ip) * 0x100000001b3ULL;
		(*nr)++;
	}
	return h ^ *nr;
}

static bool unsched_equal(const struct native *n, const struct native_stack *full,
			  const struct native_stack *snap)
{
	uint32_t j = 0;

	for (uint32_t i = 0; i < full->nr; i++) {
		uint64_t ip = full->ips[i];

		if (ip >= n->sched_text.lo && ip < n->sched_text.hi)
			continue;
		if (j >= snap->nr || snap->ips[j++] != ip)
			return false;
	}
	return j == snap->nr;
}

static bool is_snap_kstack(uint64_t id)
{
	return id == OFFCPU_SNAP_KSTACK((uint32_t)id);
}

/*
 * The kernel leaves the scheduler's own functions (schedule(), do_nanosleep(),
 * the lock slow paths) out of a sleeping task's stack, so a snapshot's stack
 * lacks frames the switch-out walks of the same wait have, and would show as
 * another stack. Where a walked kernel stack is the snapshot's once those
 * frames are left out of it, the snapshot takes its frames. Returns how many
 * were completed, or -errno.
 */
static long snap_complete_kernel(struct native *n)
{
	struct ntable by_hash; /* unsched hash -> a walked stack's id */
	const void *key;
	void *val;
	long done = 0;

	if (!n->sched_text.lo || ntable_init(&by_hash, sizeof(uint64_t), sizeof(uint64_t)))
		return n->sched_text.lo ? -ENOMEM : 0;
	for (size_t pos = 0; ntable_next(&n->stacks, &pos, &key, &val);) {
		const struct native_stack *st = val;
		uint64_t id = *(const uint64_t *)key, h, *slot;
		size_t nr;
		bool created;

		/* Kernel walks that went through the scheduler: the others cannot differ. */
		if (is_snap_kstack(id) || !st->nr || st->ips[0] < n->sched_text.lo ||
		    st->ips[0] >= n->sched_text.hi)
			continue;
		h = unsched_hash(n, st, &nr);
		slot = ntable_get(&by_hash, &h, &created);
		if (!slot) {
			ntable_free(&by_hash);
			return -ENOMEM;
		}
		if (created)
			*slot = id;
	}
	for (size_t pos = 0; ntable_next(&n->stacks, &pos, &key, &val);) {
		struct native_stack *st = val;
		const struct native_stack *full;
		const uint64_t *match;
		uint64_t *ips, h;
		size_t nr;

		if (!is_snap_kstack(*(const uint64_t *)key) || !st->nr)
			continue;
		h = unsched_hash(n, st, &nr);
		match = ntable_find(&by_hash, &h);
		full = match ? ntable_find(&n->stacks, match) : NULL;
		if (!full || !unsched_equal(n, full, st))
			continue;
		ips = malloc(full->nr * sizeof(*ips));
		if (!ips) {
			ntable_free(&by_hash);
			return -ENOMEM;
		}
		memcpy(ips, full->ips, full->nr * sizeof(*ips));
		free(st->ips);
		st->ips = ips;
		st->nr = full->nr;
		done++;
	}
	ntable_free(&by_hash);
	return done;
}

/*
 * The processes whose snapshot stacks are still raw (none of their threads
 * walked a user stack since start, so nothing asked for their mappings) are
 * read now, while they live, so that those stacks unwind.
 */
static int snap_track(struct native *n, struct symbolizer *sym)
{
	struct ntable done; /* tgids read here: each once, however many threads it has */
	const void *key;
	void *val;

	if (ntable_init(&done, sizeof(uint32_t), sizeof(uint8_t)))
		return -ENOMEM;
	for (size_t pos = 0; n->raws.slots && ntable_next(&n->raws, &pos, &key, &val);) {
		const struct native_raw *raw = val;
		uint64_t id = *(const uint64_t *)key;
		uint32_t tgid;
		bool created;

		if (!raw->r || id != OFFCPU_SNAP_USTACK((uint32_t)id))
			continue;
		tgid = raw->r->tgid;
		if (!ntable_get(&done, &tgid, &created)) {
			ntable_free(&done);
			return -ENOMEM;
		}
		if (!created)
			continue;
		native_track_maps(n, sym, tgid);
	}
	ntable_free(&done);
	return 0;
}

int native_snap_finish(struct native *n, struct symbolizer *sym)
{
	long done = snap_complete_kernel(n);

	if (done < 0)
		return (int)done;
	native_note(n,
		    "snapshot: %ld kernel stacks of threads asleep at start completed with the "
		    "scheduler frames of the same wait walked at a switch-out",
		    done);
	return snap_track(n, sym);
}
