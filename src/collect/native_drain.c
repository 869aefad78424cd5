// SPDX-License-Identifier: GPL-2.0-only
/*
 * The built-in collector while it runs: the events ring buffer (stacks,
 * exits, timeline intervals) and the aggregation maps, drained into user
 * space's tables.
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collect/cpuvisit.h"
#include "collect/native_priv.h"
#include "collect/unwind.h"
#include "offcpu.skel.h"
#include "symbolize/procmaps.h"
#include "util/vec.h"

/*
 * Wait until no BPF program still runs with an old view: by running on
 * every CPU (cpuvisit.h), else an RCU grace period (10-20 ms here, at every
 * stop and drain), else a long sleep.
 */
void native_quiesce(struct native *n)
{
	int err;

	if (!n->cpuvisit_broken && !(err = cpus__visit_online()))
		return;
	if (!n->cpuvisit_broken)
		native_note(n, "cannot run on every CPU (%s): waiting for a grace period instead",
			    strerror(-err));
	n->cpuvisit_broken = true;
	if (!n->membarrier_broken && syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0)
		return;
	if (!n->membarrier_broken)
		native_note(n,
			    "membarrier(GLOBAL) failed (%s): waiting 50 ms instead of a "
			    "grace period",
			    strerror(errno));
	n->membarrier_broken = true;
	usleep(50000);
}

/* Keep one timeline interval until stop, when its stacks get their profile ids. */
int native_keep_interval(struct native *n, const struct offcpu_interval *iv)
{
	if (vec_reserve(n->ivs, n->cap_ivs, n->nr_ivs + 1))
		return -ENOMEM;
	n->ivs[n->nr_ivs++] = *iv;
	return 0;
}

/*
 * The stacks of tgid left to user space, unwound with the mappings just read:
 * at stop they may belong to another image (an exec since).
 */
static void raw_resolve(struct native *n, uint32_t tgid)
{
	const struct native_stack *st;
	const void *key;
	void *val;

	for (size_t pos = 0; n->raws.slots && ntable_next(&n->raws, &pos, &key, &val);) {
		const struct native_raw *raw = val;

		if (raw->r && raw->r->tgid == tgid)
			native_raw_unwind(n, *(const uint64_t *)key, &st, false);
	}
}

/* Whether the unwinder's mappings of tgid are in the kernel's map. */
static bool umaps_present(struct native *n, uint32_t tgid)
{
	static struct offcpu_umaps v; /* 10 KiB: not on the stack; one drainer */

	return !bpf_map_lookup_elem(bpf_map__fd(n->skel->maps.umaps), &tgid, &v);
}

/*
 * A request to snapshot tgid's mappings, from the BPF side or from a raw
 * stack they could not unwind. Most requests are only new call paths
 * (collect/mmstamp.h). An exec deletes the process's mappings from the
 * kernel's side: without them there, they are read whatever the stamp says.
 */
static void track(struct native *n, uint32_t tgid)
{
	if (!mmstamps__changed(&n->mm, tgid) && (!n->unw || umaps_present(n, tgid))) {
		/* stacks sent before the tables were in: the tables read before do */
		if (n->unw)
			raw_resolve(n, tgid);
		return;
	}
	if (!native_track_maps(n, n->sym, tgid) && n->unw)
		raw_resolve(n, tgid);
}

/*
 * Read tgid's mappings once, for the unwinder (its tables first: until they
 * are in, the process's stacks end early) and for sym. Each read of a large
 * process's mappings costs the kernel 0.1-0.5 ms of formatting.
 */
int native_track_maps(struct native *n, struct symbolizer *sym, uint32_t tgid)
{
	struct proc_map *maps = NULL;
	uint64_t from, to;
	size_t nr = 0;
	int err;

	if (!n->unw && !sym)
		return 0;
	from = native_mono_ns();
	err = procmaps__read(NULL, (int)tgid, &maps, &nr);
	to = native_mono_ns();
	if (!err && n->unw)
		err = unwinder__track_maps(n->unw, (int)tgid, maps, nr);
	/* Gone or not, the symbolizer keeps an entry: what it had, or its JIT map. */
	if (sym)
		symbolizer__track_maps(sym, (int)tgid, maps, nr, from, to);
	procmaps__free(maps, nr);
	return err;
}

/* One record of the events ring buffer (enum offcpu_event_type). */
int native_on_event(void *ctx, void *data, size_t len)
{
	struct native *n = ctx;
	const struct offcpu_event *ev = data;
	struct native_thread *t;

	if (len < sizeof(uint32_t))
		return 0;
	n->events++;
	if (ev->type == OFFCPU_EV_STACK) {
		const struct offcpu_stack *st = data;
		struct native_stack *ns;
		bool created;
		size_t nr;

		if (len < offsetof(struct offcpu_stack, ips) || st->first > st->nr)
			return 0;
		nr = (len - offsetof(struct offcpu_stack, ips)) / sizeof(uint64_t);
		if (st->nr < nr)
			nr = st->nr;
		if (st->first >= nr)
			return 0;
		ns = ntable_get(&n->stacks, &st->id, &created);
		if (!ns)
			return -ENOMEM;
		if (!created)
			return 0; /* sent again after the stacks map filled */
		ns->used = (uint32_t)n->cuts;
		ns->seq = n->events;
		ns->nr = nr - st->first;
		ns->ips = malloc(ns->nr * sizeof(*ns->ips));
		if (!ns->ips) {
			ns->nr = 0;
			return -ENOMEM;
		}
		memcpy(ns->ips, st->ips + st->first, ns->nr * sizeof(*ns->ips));
		return 0;
	}
	if (ev->type == OFFCPU_EV_RAW_USTACK) {
		const struct offcpu_raw_ustack *r = data;
		struct native_raw *nr;
		bool created;

		if (len < offsetof(struct offcpu_raw_ustack, win))
			return 0;
		nr = ntable_get(&n->raws, &r->id, &created);
		if (!nr)
			return -ENOMEM;
		if (!created)
			return 0;
		nr->len = len - offsetof(struct offcpu_raw_ustack, win);
		nr->seq = n->events;
		nr->r = malloc(len);
		if (!nr->r)
			return -ENOMEM;
		memcpy(nr->r, r, len);
		/*
		 * The BPF side asked for the mappings again when it sent this,
		 * but holds a request back within track_gap_ns of the last one:
		 * a process that blocks once after its loader mapped libc (the
		 * command "sleep 1"), then exits, never sends it. The stack
		 * itself says whether the mappings read are enough: unwound
		 * now if they are, else they are read again.
		 */
		if (n->unw) {
			const struct native_stack *st;
			uint64_t id = r->id;

			native_raw_unwind(n, id, &st, false);
			nr = ntable_find(&n->raws, &id);
			if (nr && nr->r)
				track(n, r->tgid);
		}
		return 0;
	}
	if (ev->type == OFFCPU_EV_INTERVAL) {
		if (len < sizeof(struct offcpu_interval))
			return 0;
		return native_keep_interval(n, data);
	}
	if (ev->type == OFFCPU_EV_NEED) {
		const struct offcpu_need *need = data;

		if (len >= sizeof(*need) && n->unw)
			unwinder__need(n->unw, need->tgid, need->pc);
		return 0;
	}
	if (ev->type == OFFCPU_EV_DRAIN) {
		n->drain_asked = true;
		return 0;
	}
	if (len < sizeof(*ev))
		return 0;
	if (ev->type == OFFCPU_EV_TRACK) {
		n->tracked++;
		track(n, ev->tgid);
		/* gone before its mappings were read: a forked child has its parent's */
		if (ev->ptgid && n->sym)
			symbolizer__inherit(n->sym, (int)ev->tgid, (int)ev->ptgid, n->events);
		return 0;
	}
	if (ev->type == OFFCPU_EV_EXEC) {
		if (n->sym)
			symbolizer__exec(n->sym, (int)ev->tgid, n->events, ev->end_ns,
					 (int)ev->ptgid);
		return 0;
	}
	if (ev->type != OFFCPU_EV_EXIT)
		return 0;
	if (vec_reserve(n->exits, n->cap_exits, n->nr_exits + 1))
		return -ENOMEM;
	t = &n->exits[n->nr_exits++];
	memset(t, 0, sizeof(*t));
	t->tgid = ev->tgid;
	t->tid = ev->tid;
	t->first_ns = ev->first_ns;
	memcpy(t->comm, ev->comm, sizeof(t->comm));
	t->comm[sizeof(t->comm) - 1] = '\0';
	t->have_time = true;
	t->time.wall_ns = ev->end_ns > ev->first_ns ? ev->end_ns - ev->first_ns : 0;
	t->time.oncpu_ns = ev->exec_ns;
	t->time.idle_exit_ns = ev->idle_exit_ns < ev->exec_ns ? ev->idle_exit_ns : ev->exec_ns;
	t->time.runq_ns = ev->delay_ns;
	n->stats.switches += ev->switches;
	n->stats.cache_hits += ev->hits;
	n->stats.intervals += ev->intervals;
	n->stats.interval_ns += ev->interval_ns;
	return 0;
}

int native_read_stats(struct native *n, struct offcpu_stats *sum)
{
	struct offcpu_stats *per = calloc(n->nr_cpus, sizeof(*per));
	uint32_t zero = 0;
	int err = 0;

	memset(sum, 0, sizeof(*sum));
	if (!per)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(n->skel->maps.stats), &zero, per)) {
		err = -errno;
		goto cleanup;
	}
	for (int c = 0; c < n->nr_cpus; c++) {
		const uint64_t *src = (const uint64_t *)&per[c];
		uint64_t *dst = (uint64_t *)sum;

		for (size_t i = 0; i < sizeof(*sum) / sizeof(uint64_t); i++)
			dst[i] += src[i];
	}
cleanup:
	free(per);
	return err;
}

int native_agg_merge(struct native *n, const struct offcpu_agg_key *k,
		     const struct offcpu_agg_val *v)
{
	struct offcpu_agg_val *dst;
	bool created;

	dst = ntable_get(&n->agg, k, &created);
	if (!dst)
		return -ENOMEM;
	dst->count += v->count;
	dst->off_ns += v->off_ns;
	dst->runq_ns += v->runq_ns;
	return 0;
}

/* Move every entry of a map no program writes any more into n->agg. */
int native_drain_map(struct native *n, struct bpf_map *map)
{
	enum { BATCH = 1024 };
	int fd = bpf_map__fd(map), err = 0;
	struct offcpu_agg_key *keys = calloc(BATCH, sizeof(*keys));
	struct offcpu_agg_val *vals = calloc(BATCH, sizeof(*vals));
	struct offcpu_agg_key key;
	struct offcpu_agg_val val;
	uint32_t in_b = 0, out_b = 0;
	bool first = true;

	if (!keys || !vals) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (;;) {
		uint32_t count = BATCH;
		int ret = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &in_b, &out_b, keys,
							  vals, &count, NULL);

		if (ret && errno != ENOENT) {
			if (first && (errno == EINVAL || errno == ENOTSUP || errno == EOPNOTSUPP))
				break; /* no batch ops: the slow way below */
			err = -errno;
			goto cleanup;
		}
		for (uint32_t i = 0; i < count; i++)
			if ((err = native_agg_merge(n, &keys[i], &vals[i])))
				goto cleanup;
		if (ret)
			goto cleanup; /* ENOENT: done */
		first = false;
		in_b = out_b;
	}
	while (!bpf_map_get_next_key(fd, NULL, &key)) {
		if (!bpf_map_lookup_elem(fd, &key, &val) && (err = native_agg_merge(n, &key, &val)))
			goto cleanup;
		if (bpf_map_delete_elem(fd, &key)) {
			err = -errno;
			goto cleanup;
		}
	}
cleanup:
	free(keys);
	free(vals);
	return err;
}

/* Switch the BPF side to the other aggregation map; the one it left. */
uint32_t native_flip(struct native *n)
{
	uint32_t old = n->skel->bss->gen & 1;
	struct offcpu_stats st;

	__atomic_store_n(&n->skel->bss->gen, old ^ 1, __ATOMIC_SEQ_CST);
	/* The new map's fill: keys an in-flight program adds to the old one count too (early). */
	__atomic_store_n(&n->skel->bss->agg_fill, 0, __ATOMIC_SEQ_CST);
	n->drain_asked = false;
	if (!native_read_stats(n, &st))
		n->inserts_at_flip = st.agg_inserts;
	return old;
}

/* Empty the map native_flip() left, once native_quiesce() has let its writers finish. */
int native_drain_left(struct native *n, uint32_t old)
{
	n->last_drain_ns = native_mono_ns();
	n->stats.drains++;
	return native_drain_map(n, old ? n->skel->maps.agg1 : n->skel->maps.agg0);
}

/* Switch the BPF side to the other aggregation map and empty the one it left. */
int native_drain(struct native *n)
{
	uint32_t old = native_flip(n);

	native_quiesce(n);
	return native_drain_left(n, old);
}
