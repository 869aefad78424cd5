// SPDX-License-Identifier: GPL-2.0-only
/*
 * The built-in collector's stop: detach, drain what is left, account for
 * the threads still known, and turn the aggregates into the profile's rows,
 * thread times, timeline and losses.
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collect/bpfmap.h"
#include "collect/native_priv.h"
#include "collect/unwind.h"
#include "collect/wakers.h"
#include "model/timeline.h"
#include "util/vec.h"
#include "offcpu.skel.h"

static int read_u64s(const char *path, uint64_t *v, int nr)
{
	FILE *f = fopen(path, "r");
	int got = 0;

	if (!f)
		return -errno;
	while (got < nr && fscanf(f, "%" SCNu64, &v[got]) == 1)
		got++;
	fclose(f);
	return got == nr ? 0 : -EINVAL;
}

static void read_comm(uint32_t tgid, uint32_t tid, char *comm)
{
	char path[96], buf[OFFCPU_COMM_LEN + 2];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", tgid, tid);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		buf[OFFCPU_COMM_LEN - 1] = '\0';
		memcpy(comm, buf, OFFCPU_COMM_LEN);
	}
	fclose(f);
}

static void val_add(struct offcpu_agg_val *d, const struct offcpu_agg_val *v)
{
	d->count += v->count;
	d->off_ns += v->off_ns;
	d->runq_ns += v->runq_ns;
}

static int table_add(struct ntable *t, const void *key, const struct offcpu_agg_val *v)
{
	struct offcpu_agg_val *d = ntable_get(t, key, NULL);

	if (!d)
		return -ENOMEM;
	val_add(d, v);
	return 0;
}

/* A stack a live thread may still use (its interval, its call sites): not evicted. */
static void stack_touch(struct native *n, uint64_t id)
{
	struct native_stack *st = ntable_find(&n->stacks, &id);

	if (st)
		st->used = (uint32_t)n->cuts;
}

/* Weight accumulated in a live thread's call-site cache, not yet flushed. */
static int live_sites(struct build *b, const struct offcpu_thread *th, uint32_t tid)
{
	int err;

	for (int w = 0; w < OFFCPU_CACHE_WAYS; w++) {
		const struct offcpu_site *site = &th->sites[w];
		struct offcpu_agg_key k = {
			.kstack = site->kstack,
			.ustack = site->ustack,
			.tgid = th->tgid,
			.tid = tid,
			.state = site->state,
		};
		struct offcpu_agg_val v = {site->count, site->off_ns, site->runq_ns};

		if (!site->count)
			continue;
		/* A cut gives it now; the next one subtracts it (it stays in the site, or is
		 * flushed). */
		if ((err = native_agg_merge(b->n, &k, &v)) ||
		    (!b->final && (err = table_add(&b->site_now, &k, &v))))
			return err;
	}
	return 0;
}

/*
 * A thread's ground truth in this period: since first sight, minus what the
 * earlier cuts gave (the same thread: same tid and first sight). A cut keeps
 * what it gives for the next one.
 */
static int thread_since_cut(struct build *b, struct native_thread *t, bool live)
{
	const struct native_sofar *prev = ntable_find(&b->n->sofar, &t->tid);

	if (!b->final && live) {
		struct native_sofar *now = ntable_get(&b->sofar, &t->tid, NULL);

		if (!now)
			return -ENOMEM;
		now->first_ns = t->first_ns;
		now->time = t->time;
	}
	if (prev && prev->first_ns == t->first_ns) {
		struct profile_thread_time *x = &t->time;

		x->wall_ns = x->wall_ns > prev->time.wall_ns ? x->wall_ns - prev->time.wall_ns : 0;
		x->oncpu_ns =
			x->oncpu_ns > prev->time.oncpu_ns ? x->oncpu_ns - prev->time.oncpu_ns : 0;
		x->runq_ns = x->runq_ns > prev->time.runq_ns ? x->runq_ns - prev->time.runq_ns : 0;
		x->idle_exit_ns = x->idle_exit_ns > prev->time.idle_exit_ns
					  ? x->idle_exit_ns - prev->time.idle_exit_ns
					  : 0;
		if (x->idle_exit_ns > x->oncpu_ns)
			x->idle_exit_ns = x->oncpu_ns;
	}
	return 0;
}

/* A live thread's identity and ground truth: schedstat at stop minus at first sight. */
static int live_identity(struct build *b, const struct offcpu_thread *th, uint32_t tid)
{
	struct thread_key tk = {th->tgid, tid};
	struct native_thread *t;
	char path[96];
	uint64_t ss[2];
	const uint64_t *at;

	t = ntable_get(&b->threads, &tk, NULL);
	if (!t)
		return -ENOMEM;
	t->tgid = th->tgid;
	t->tid = tid;
	t->first_ns = th->first_ns;
	memcpy(t->comm, th->comm, sizeof(t->comm));
	t->comm[sizeof(t->comm) - 1] = '\0';
	read_comm(th->tgid, tid, t->comm);
	snprintf(path, sizeof(path), "/proc/%u/task/%u/schedstat", th->tgid, tid);
	at = ntable_find(&b->at_stop, &tid);
	if (at)
		memcpy(ss, at, sizeof(ss));
	if (at || !read_u64s(path, ss, 2)) {
		t->have_time = true;
		t->time.wall_ns = b->end_ns > th->first_ns ? b->end_ns - th->first_ns : 0;
		t->time.oncpu_ns = ss[0] > th->base_exec_ns ? ss[0] - th->base_exec_ns : 0;
		t->time.runq_ns = ss[1] > th->base_delay_ns ? ss[1] - th->base_delay_ns : 0;
		t->time.idle_exit_ns =
			th->idle_exit_ns < t->time.oncpu_ns ? th->idle_exit_ns : t->time.oncpu_ns;
		return thread_since_cut(b, t, true);
	}
	return 0;
}

/* Threads that never ran named in the diagnostics, at most. */
#define NEVER_RAN_NOTES 16

static void never_ran_note(struct native *n, const struct offcpu_thread *th, uint32_t tid)
{
	const struct native_snapped *sn = ntable_find(&n->snaps, &tid);
	char since[64] = "";

	if (sn && sn->since_ns)
		snprintf(since, sizeof(since), "; its last run began %.3f s before start",
			 sn->since_ns / 1e9);
	native_note(n, "never ran in the window: thread %u (%.*s) of process %u, state %s%s", tid,
		    (int)sizeof(th->comm), th->comm, th->tgid,
		    offcpu_state__letter((enum offcpu_state)th->state), since);
}

/* The open interval of a thread still off the CPU at stop, recorded up to stop. */
static int live_interval(struct build *b, const struct offcpu_thread *th, uint32_t tid)
{
	struct native *n = b->n;
	struct offcpu_agg_key k = {
		.kstack = th->kstack,
		.ustack = th->ustack,
		.tgid = th->tgid,
		.tid = tid,
		.state = th->state,
	};
	struct offcpu_agg_val v = {.count = 1};
	const struct native_credit *c;
	int err;

	if (!th->off_ns || (th->flags & OFFCPU_TH_FILTERED) || b->end_ns <= th->off_ns)
		return 0;
	v.off_ns = b->end_ns - th->off_ns;
	if (th->state == OFFCPU_ST_PREEMPT || (th->flags & OFFCPU_TH_NEW))
		v.runq_ns = v.off_ns;
	else if (th->wake_ns && th->wake_ns < b->end_ns)
		v.runq_ns = b->end_ns - th->wake_ns;
	if (v.runq_ns > v.off_ns)
		v.runq_ns = v.off_ns;
	if ((th->flags & OFFCPU_TH_BEFORE_START) && !(th->flags & OFFCPU_TH_SNAPPED)) {
		k.kstack = k.ustack = OFFCPU_STACK_BEFORE_START;
		k.state = OFFCPU_ST_UNKNOWN;
	}
	/*
	 * Split at each cut: this period gets the part after the last one
	 * (the credit it left is subtracted from the rows), the next gets the
	 * rest. Open at the last cut and still open: off the CPU all period.
	 */
	c = n->cuts ? ntable_find(&n->credits, &tid) : NULL;
	if (c && c->since == th->off_ns && b->end_ns > n->cut_ns) {
		b->carried++;
		b->carried_ns += b->end_ns - n->cut_ns;
		b->never_ran++;
	}
	if (!b->final) {
		struct native_credit *nc = ntable_get(&b->credits, &tid, NULL);

		if (!nc)
			return -ENOMEM;
		/*
		 * What the next cut subtracts: the time given, not the count,
		 * so that the wait counts once in each period it spans.
		 */
		*nc = (struct native_credit){.since = th->off_ns, .key = k, .val = v};
		nc->val.count = 0;
	}
	if ((th->flags & OFFCPU_TH_BEFORE_START) && !n->cuts) {
		/* The snapshot's stacks and state (snapshot.bpf.h), else placeholders (above). */
		b->both++;
		b->both_ns += v.off_ns;
		/* Off the CPU from start to stop: asleep, or runnable and never given a CPU. */
		if (b->never_ran++ < NEVER_RAN_NOTES)
			never_ran_note(n, th, tid);
	}
	if (n->timeline && v.off_ns >= n->timeline_min_ns) {
		struct offcpu_interval iv = {
			.type = OFFCPU_EV_INTERVAL,
			.tgid = th->tgid,
			.tid = tid,
			.waker = th->waker,
			.start_ns = th->off_ns,
			.dur_ns = v.off_ns,
			.runq_ns = v.runq_ns,
			.kstack = k.kstack,
			.ustack = k.ustack,
			.state = k.state,
		};

		if ((err = native_keep_interval(n, &iv)))
			return err;
	}
	if ((err = native_agg_merge(n, &k, &v)))
		return err;
	b->inflight++;
	b->inflight_ns += v.off_ns;
	return 0;
}

/* Every thread the BPF side knows, each once (see bpfmap__read_all()). */
static int threads_read(struct native *n, uint32_t **tids, struct offcpu_thread **ths, size_t *nr)
{
	void *keys, *vals;
	int err = bpfmap__read_all(bpf_map__fd(n->skel->maps.threads), sizeof(**tids),
				   sizeof(**ths), &keys, &vals, nr);

	*tids = keys;
	*ths = vals;
	return err;
}

/*
 * Threads still known to the BPF side at stop: their identity and ground
 * truth, and the open interval of those still off the CPU.
 */
static int read_live_threads(struct build *b)
{
	struct native *n = b->n;
	struct offcpu_thread *ths;
	uint32_t *tids;
	size_t nr;
	int err = threads_read(n, &tids, &ths, &nr);

	for (size_t i = 0; !err && i < nr; i++) {
		const struct offcpu_thread *th = &ths[i];
		uint32_t tid = tids[i];

		stack_touch(n, th->kstack);
		stack_touch(n, th->ustack);
		for (int w = 0; w < OFFCPU_CACHE_WAYS; w++) {
			if (!th->tag[w])
				continue;
			stack_touch(n, th->sites[w].kstack);
			stack_touch(n, th->sites[w].ustack);
		}
		if (b->final) {
			n->stats.switches += th->switches;
			n->stats.cache_hits += th->hits;
			n->stats.intervals += th->intervals;
			n->stats.interval_ns += th->interval_ns;
		}
		if ((err = live_sites(b, th, tid)) || (err = live_identity(b, th, tid)))
			break;
		err = live_interval(b, th, tid);
	}
	free(tids);
	free(ths);
	return err;
}

/*
 * The timeline's intervals, in the order the kernel sent them (those open at
 * stop last), with their stacks as the profile's ids: the same stacks their
 * rows have, so the timeline is a subset of the profile's time.
 */
static int build_timeline(struct build *b)
{
	struct native *n = b->n;
	struct wakers wk = {0};
	int err = 0;

	if (!n->timeline)
		return 0;
	for (size_t i = 0; i < n->nr_ivs && !err; i++) {
		const struct offcpu_interval *iv = &n->ivs[i];
		struct offcpu_agg_key k = {
			.kstack = iv->kstack,
			.ustack = iv->ustack,
			.tgid = iv->tgid,
			.tid = iv->tid,
			.state = iv->state,
		};
		struct timeline_interval t = {
			.start_ns = iv->start_ns,
			.dur_ns = iv->dur_ns,
			.runq_ns = iv->runq_ns > iv->dur_ns ? iv->dur_ns : iv->runq_ns,
			.pid = (int)iv->tgid,
			.tid = (int)iv->tid,
			.state = (enum offcpu_state)iv->state,
		};
		int sid = native_stack_of(b, &k), irq = 0;

		/* An interrupt context is named by the timeline (collect/wakers.h). */
		if (wakers__is_irq(iv->waker))
			irq = wakers__intern(&wk, n->timeline, iv->waker);
		else
			t.waker_tid = (int)iv->waker;
		if (sid < 0 || irq < 0) {
			err = sid < 0 ? sid : irq;
			break;
		}
		t.stack = (uint32_t)sid;
		t.waker_irq = (uint32_t)irq;
		err = timeline__append(n->timeline, &t);
	}
	wakers__release(&wk);
	if (!err)
		n->stats.timeline_intervals = n->nr_ivs;
	return err;
}

/* The timeline's threshold and what the ring buffer dropped, once the stats are read. */
static void timeline_info(struct native *n, const struct offcpu_stats *st)
{
	struct timeline_info info = {
		.min_ns = n->timeline_min_ns,
		.lost = st->timeline_lost,
		.lost_ns = st->timeline_lost_ns,
	};

	if (n->timeline)
		timeline__set_info(n->timeline, &info);
}

/*
 * schedstat of the threads known at stop, read before the detach: the BPF
 * side records nothing past stop_ns, and a thread that ran on while the
 * links went (tens of ms) would count that run in a later reading.
 */
static int snapshot_live(struct native *n, struct ntable *at_stop)
{
	struct offcpu_thread *ths;
	uint32_t *tids;
	size_t nr;
	int err = threads_read(n, &tids, &ths, &nr);

	for (size_t i = 0; !err && i < nr; i++) {
		char path[96];
		uint64_t ss[2], *v;

		snprintf(path, sizeof(path), "/proc/%u/task/%u/schedstat", ths[i].tgid, tids[i]);
		if (read_u64s(path, ss, 2))
			continue;
		v = ntable_get(at_stop, &tids[i], NULL);
		if (!v) {
			err = -ENOMEM;
			break;
		}
		memcpy(v, ss, sizeof(ss));
	}
	free(tids);
	free(ths);
	return err;
}

/* Program runs the kernel skipped (its recursion guard), over all loaded programs. */
static uint64_t missed_events(struct native *n)
{
	struct bpf_program *prog;
	uint64_t sum = 0;

	bpf_object__for_each_program(prog, n->skel->obj)
	{
		struct bpf_prog_info info = {};
		uint32_t len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
			sum += info.recursion_misses;
	}
	return sum;
}

static void add_loss(struct integrity *in, const char *name, uint64_t count, uint64_t ns)
{
	if (in)
		integrity__add_loss(in, name, count, ns);
}

/* The exited threads' ground truth, in the window (or the period). */
static int take_exits(struct build *b)
{
	struct native *n = b->n;
	int err;

	for (size_t i = 0; i < n->nr_exits; i++) {
		struct thread_key tk = {n->exits[i].tgid, n->exits[i].tid};
		struct native_thread *t = ntable_get(&b->threads, &tk, NULL);

		if (!t)
			return -ENOMEM;
		*t = n->exits[i];
		if (n->cuts && (err = thread_since_cut(b, t, false)))
			return err;
	}
	return 0;
}

/*
 * Detach, then take in what the BPF side still holds: the ring buffer, both
 * aggregation maps, the counters, the exited and the live threads.
 */
static int stop_collect(struct build *b, struct offcpu_stats *st, uint64_t *misses)
{
	struct native *n = b->n;
	int err;

	n->stop_ns = native_mono_ns();
	b->end_ns = n->stop_ns;
	n->skel->bss->stop_ns = n->stop_ns;
	err = snapshot_live(n, &b->at_stop);
	*misses = missed_events(n);
	for (size_t i = 0; i < n->nr_links; i++)
		bpf_link__destroy(n->links[i]);
	n->nr_links = 0;
	native_quiesce(n); /* a program that started before the detach has finished */
	if (err)
		return err;
	ring_buffer__consume(n->rb);
	/* Read out: its mapping (twice its size, resident) goes before symbolization's peak. */
	ring_buffer__free(n->rb);
	n->rb = NULL;
	if ((err = native_drain_map(n, n->skel->maps.agg0)) ||
	    (err = native_drain_map(n, n->skel->maps.agg1)))
		return err;
	if ((err = native_read_stats(n, st)) || (err = take_exits(b)))
		return err;
	return read_live_threads(b);
}

/*
 * A cut, attached: the boundary first (the BPF side splits what spans it
 * the way read_live_threads() does), the aggregation map flipped, the
 * threads read at once (an interval that ends between the flip and the read
 * of its thread goes whole to the next period: microseconds, not the grace
 * period the drain waits for), then the map left drained. Credits given
 * ahead of their rows wait as debts (cut_minus()).
 */
static int cut_collect(struct build *b, struct offcpu_stats *st, uint64_t *misses)
{
	struct native *n = b->n;
	uint32_t old;
	int err;

	/* The threads' schedstat first: the boundary is then as close to it as can be. */
	if ((err = snapshot_live(n, &b->at_stop)))
		return err;
	b->end_ns = native_mono_ns();
	__atomic_store_n(&n->skel->bss->cut_ns, b->end_ns, __ATOMIC_SEQ_CST);
	/*
	 * At once: a wait that ends between the boundary and the flip goes
	 * whole into the map of the period that ends, and its part after the
	 * boundary with it (the events ring buffer, which may take hundreds of
	 * ms under load, is read after).
	 */
	old = native_flip(n);
	*misses = missed_events(n);
	ring_buffer__consume(n->rb);
	if ((err = read_live_threads(b)))
		return err;
	native_quiesce(n);
	if ((err = native_drain_left(n, old)))
		return err;
	ring_buffer__consume(n->rb);
	if ((err = native_read_stats(n, st)) || (err = take_exits(b)))
		return err;
	return 0;
}

/*
 * What the cuts before gave that is in n->agg now, subtracted from it: the
 * open intervals' parts (now ended or grown), the call-site weight read
 * live, and the debts of the last cut. What is not there yet stays a debt.
 */
static int cut_minus(struct build *b, struct ntable *debts)
{
	struct native *n = b->n;
	const void *key;
	void *val;
	int err;

	for (size_t pos = 0; ntable_next(&n->credits, &pos, &key, &val);) {
		const struct native_credit *c = val;

		if ((err = table_add(&b->minus, &c->key, &c->val)))
			return err;
	}
	for (size_t pos = 0; ntable_next(&n->site_given, &pos, &key, &val);)
		if ((err = table_add(&b->minus, key, val)))
			return err;
	for (size_t pos = 0; ntable_next(&n->debts, &pos, &key, &val);)
		if ((err = table_add(&b->minus, key, val)))
			return err;
	for (size_t pos = 0; ntable_next(&b->minus, &pos, &key, &val);) {
		struct offcpu_agg_val *m = val, *a = ntable_find(&n->agg, key);
		struct offcpu_agg_val take = {0};

		if (a) {
			take.count = a->count < m->count ? a->count : m->count;
			take.off_ns = a->off_ns < m->off_ns ? a->off_ns : m->off_ns;
			take.runq_ns = a->runq_ns < m->runq_ns ? a->runq_ns : m->runq_ns;
			a->count -= take.count;
			a->off_ns -= take.off_ns;
			a->runq_ns -= take.runq_ns;
			/*
			 * Less off-CPU time was left than run-queue time (the parts
			 * given came from other intervals of the row): the excess
			 * run-queue time waits as a debt too, a row's is never more
			 * than its whole.
			 */
			if (a->runq_ns > a->off_ns) {
				m->runq_ns += a->runq_ns - a->off_ns;
				a->runq_ns = a->off_ns;
			}
		}
		if (m->count == take.count && m->off_ns == take.off_ns &&
		    m->runq_ns == take.runq_ns)
			continue;
		m->count -= take.count;
		m->off_ns -= take.off_ns;
		m->runq_ns -= take.runq_ns;
		if ((err = table_add(debts, key, m)))
			return err;
	}
	return 0;
}

/* A row's failed stack captures: losses named by side and errno, or lost stacks. */
static void row_stack_errors(struct build *b, struct integrity *in, const struct offcpu_agg_key *k,
			     const struct offcpu_agg_val *v)
{
	for (int side = 0; side < 2; side++) {
		uint64_t id = side ? k->ustack : k->kstack;
		char name[INTEGRITY_NAME_MAX];
		const char *e;

		if (id == OFFCPU_STACK_NONE || id > OFFCPU_STACK_ERRNO_MAX)
			continue;
		if (id == OFFCPU_STACK_LOST) {
			b->stacks_lost += v->count;
			b->stacks_lost_ns += v->off_ns;
			continue;
		}
		e = native_errno_name(id, false);
		if (e)
			snprintf(name, sizeof(name), "%s_stack_errors_%s", side ? "user" : "kernel",
				 e);
		else
			snprintf(name, sizeof(name), "%s_stack_errors_errno%u",
				 side ? "user" : "kernel", (unsigned int)id);
		add_loss(in, name, v->count, v->off_ns);
	}
}

/* Who the switch-outs the kernel did not report belong to (unseen_note()). */
static int unseen_add(struct build *b, const struct thread_key *tk, const struct native_thread *t,
		      const struct offcpu_agg_val *v)
{
	struct native_unseen *u;
	bool created;

	u = ntable_get(&b->unseen, tk, &created);
	if (!u)
		return -ENOMEM;
	if (created)
		snprintf(u->comm, sizeof(u->comm), "%s", t ? t->comm : "?");
	u->count += v->count;
	u->ns += v->off_ns;
	return 0;
}

/* The aggregates as the profile's rows. */
static int stop_rows(struct build *b, struct integrity *in)
{
	const void *key;
	void *val;
	int err;

	for (size_t pos = 0; ntable_next(&b->n->agg, &pos, &key, &val);) {
		const struct offcpu_agg_key *k = key;
		const struct offcpu_agg_val *v = val;
		struct thread_key tk = {k->tgid, k->tid};
		const struct native_thread *t = ntable_find(&b->threads, &tk);
		struct profile_weight w = {v->count, v->off_ns, v->runq_ns};
		int tid, sid;

		if (!v->count && !v->off_ns && !v->runq_ns)
			continue; /* all given by an earlier cut */
		tid = profile__thread(b->p, k->tgid, k->tid, t ? t->comm : NULL);
		if (tid < 0)
			return tid;
		sid = native_stack_of(b, k);
		if (sid < 0)
			return sid;
		if ((err = profile__add(b->p, tid, sid, k->state, &w)) < 0)
			return err;
		row_stack_errors(b, in, k, v);
		/* only the final build prints them (unseen_note()) */
		if (b->final && k->kstack == OFFCPU_STACK_UNSEEN &&
		    (err = unseen_add(b, &tk, t, v)))
			return err;
	}
	return 0;
}

struct unseen_proc {
	uint32_t tgid, threads;
	uint64_t count, ns;
	const char *comm; /* its first thread's, in the table */
};

static int unseen_cmp(const void *a, const void *b)
{
	const struct unseen_proc *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? 1 : -1;
	return (x->tgid > y->tgid) - (x->tgid < y->tgid);
}

/*
 * Whose intervals are "[stack unknown: switch-out not reported]", by process,
 * most time first: the capture is partial for them, and a user should be able
 * to tell a process of their own from one whose switch-outs this kernel never
 * reports (an agent of the hypervisor, say). Only the rows that carry that
 * placeholder: the other rebuilt intervals keep the stacks from before.
 */
int native_unseen_line(const struct ntable *unseen, char *buf, size_t size)
{
	enum { SHOWN = 4 };
	struct unseen_proc *ps = NULL;
	size_t nr = 0, cap = 0, i, len = 0;
	const void *key;
	void *val;

	if (size)
		buf[0] = '\0';
	for (size_t pos = 0; unseen->slots && ntable_next(unseen, &pos, &key, &val);) {
		const struct thread_key *tk = key;
		const struct native_unseen *u = val;

		for (i = 0; i < nr && ps[i].tgid != tk->tgid; i++)
			;
		if (i == nr) {
			if (vec_reserve(ps, cap, nr + 1)) {
				free(ps);
				return -ENOMEM;
			}
			ps[nr++] = (struct unseen_proc){.tgid = tk->tgid, .comm = u->comm};
		}
		ps[i].threads++;
		ps[i].count += u->count;
		ps[i].ns += u->ns;
	}
	if (nr)
		qsort(ps, nr, sizeof(*ps), unseen_cmp);
	for (i = 0; i < nr && i < SHOWN && len < size; i++)
		len += snprintf(buf + len, size - len,
				"%sPID %u %s (%u thread%s): %" PRIu64 " interval%s, %.3f s",
				i ? "; " : "", ps[i].tgid, ps[i].comm, ps[i].threads,
				ps[i].threads == 1 ? "" : "s", ps[i].count,
				ps[i].count == 1 ? "" : "s", ps[i].ns / 1e9);
	if (nr > SHOWN && len < size)
		snprintf(buf + len, size - len, "; %zu more processes", nr - SHOWN);
	free(ps);
	return (int)nr;
}

static void unseen_note(struct build *b)
{
	char buf[512];

	/* continuous mode: the count above is the whole run's, these rows the last period's */
	if (native_unseen_line(&b->unseen, buf, sizeof(buf)) > 0)
		native_note(b->n, "switch-outs not reported, by process%s: %s",
			    b->n->cuts ? " (last period)" : "", buf);
}

/* Each thread's ground truth, where it is known. */
static int stop_thread_times(struct build *b)
{
	const void *key;
	void *val;
	int err;

	for (size_t pos = 0; ntable_next(&b->threads, &pos, &key, &val);) {
		const struct native_thread *t = val;
		int tid;

		if (!t->have_time)
			continue;
		tid = profile__thread(b->p, t->tgid, t->tid, t->comm);
		if (tid < 0)
			return tid;
		if ((err = profile__set_thread_time(b->p, tid, &t->time)) < 0)
			return err;
	}
	profile__set_runq_known(b->p, true);
	return 0;
}

/*
 * The window's losses; after a cut, the period's: counters since the cut,
 * and at its start the waits that the cut split (ended since, or still open).
 */
static void stop_losses(struct build *b, struct integrity *in, const struct offcpu_stats *st,
			uint64_t misses)
{
	if (b->n->cuts) {
		add_loss(in, "inflight_at_start", st->carried + b->carried,
			 st->carried_ns + b->carried_ns);
		add_loss(in, "threads_never_ran", b->never_ran, b->carried_ns);
	} else {
		add_loss(in, "inflight_at_start", st->inflight_start + b->both,
			 st->inflight_start_ns + b->both_ns);
		add_loss(in, "threads_never_ran", b->never_ran, b->both_ns);
	}
	add_loss(in, "inflight_at_stop", b->inflight, b->inflight_ns);
	add_loss(in, "map_full_agg", st->map_full_agg, st->map_full_agg_ns);
	add_loss(in, "lost_stacks", b->stacks_lost, b->stacks_lost_ns);
	add_loss(in, "map_full_threads", st->map_full_threads, 0);
	add_loss(in, "map_full_procs", st->map_full_procs, 0);
	add_loss(in, "unmatched_switch_in", st->unmatched_switch_in, 0);
	add_loss(in, "unseen_switch_out", st->unseen_switch_out, st->unseen_switch_out_ns);
	add_loss(in, "unmatched_wakeups", st->unmatched_wakeups, 0);
	add_loss(in, "stack_cache_mismatch", st->cache_mismatch, st->cache_mismatch_ns);
	add_loss(in, "lost_thread_records", st->lost_records, 0);
	add_loss(in, "missed_events", misses, 0);
	if (in)
		in->evidence = 1;
}

static void stop_stats(struct native *n, const struct offcpu_stats *st)
{
	struct native_stats *ns = &n->stats;

	ns->raw_tp = n->raw_tp;
	ns->runq_schedinfo = n->schedinfo;
	ns->cache_misses = st->cache_misses;
	ns->cache_checks = st->cache_checks;
	ns->check_failures = st->check_failed_kernel + st->check_failed_user;
	ns->walks_kernel = st->walks_kernel;
	ns->walks_user = st->walks_user;
	ns->sites = st->sites_made;
	ns->sites_kernel_exact = st->sites_kernel_exact;
	ns->sites_user_exact = st->sites_user_exact;
	ns->uwords_direct = st->uslot_direct;
	ns->uwords_helper = st->uslot_helper;
	ns->timeline_lost = st->timeline_lost;
	ns->timeline_lost_ns = st->timeline_lost_ns;
	timeline_info(n, st);
}

/* What the .eh_frame unwinder did: tables, memory, and why stacks ended early. */
static void unwind_notes(struct native *n, const struct offcpu_stats *st)
{
	struct unwinder_stats us;
	char marks[512] = "";
	size_t len = 0, nb;
	const struct unwind_binary *bins = unwinder__binaries(n->unw, &nb);

	unwinder__stats(n->unw, &us);
	for (unsigned int i = 1; i < OFFCPU_UMARK_MAX; i++)
		if (st->umarks[i] && len < sizeof(marks))
			len += snprintf(marks + len, sizeof(marks) - len, "%s%s %" PRIu64,
					len ? ", " : "", unwind_mark__reason(i),
					(uint64_t)st->umarks[i]);
	native_note(n,
		    "user stacks: .eh_frame unwinder, %" PRIu64
		    " walks, %.1f frames a walk, %" PRIu64
		    " left to user space (mappings not loaded or a table not built yet), %" PRIu64
		    " mapping reads asked (%" PRIu64 " lost; %" PRIu64
		    " not asked: address space unchanged), %" PRIu64
		    " cache keys refused by user stack words; ended early: %s",
		    (uint64_t)st->uwalks_dwarf,
		    st->uwalks_dwarf ? (double)st->uframes / st->uwalks_dwarf : 0.0,
		    (uint64_t)st->uraw_sent, (uint64_t)st->track_sent, (uint64_t)st->track_lost,
		    (uint64_t)st->track_same, (uint64_t)st->uslot_rejects, len ? marks : "none");
	native_note(n,
		    "unwind tables: %zu processes, %zu binaries, %zu tables loaded, %zu not "
		    "needed by a stack (not built), %" PRIu64 " bytes of budget used (%" PRIu64
		    " in rows) of %" PRIu64
		    ", %zu over budget, %zu mappings dropped, %zu forgotten",
		    us.processes, us.binaries, us.tables, us.pending, us.bytes, us.rows_bytes,
		    us.budget, us.over_budget, us.maps_dropped, us.forgotten);
	for (size_t i = 0; bins && i < nb; i++) {
		static const char *const status[] = {"table", "no CFI", "over budget", "error"};

		if (bins[i].status == UNWIND_PENDING)
			continue; /* counted above */
		native_note(n,
			    "unwind table %s: %s, %zu rows, %" PRIu64 " bytes, built in %.2f ms, "
			    "loaded in %.2f ms%s%s",
			    bins[i].path, status[bins[i].status], bins[i].rows, bins[i].bytes,
			    bins[i].build_ns / 1e6, bins[i].load_ns / 1e6,
			    bins[i].source ? ", from " : "", bins[i].source ? bins[i].source : "");
	}
}

/* The diagnostics of a run, for --verbose and the capture's diagnostics. */
static void stop_notes(struct build *b, const struct offcpu_stats *st)
{
	struct native *n = b->n;
	const struct native_stats *ns = &n->stats;

	if (n->timeline)
		native_note(n,
			    "timeline: %" PRIu64 " intervals of at least %" PRIu64
			    " ns kept, %" PRIu64 " dropped (ring buffer full; %" PRIu64
			    " ns, in the profile all the same)",
			    ns->timeline_intervals, n->timeline_min_ns, ns->timeline_lost,
			    ns->timeline_lost_ns);
	native_note(n,
		    "%s, %.3f s: %" PRIu64 " switch-outs of traced threads, %" PRIu64
		    " intervals, %" PRIu64 " filtered; stack walks %" PRIu64 " kernel / %" PRIu64
		    " user; %" PRIu64 " drains while running (%" PRIu64
		    " asked for by a half-full aggregation map, %" PRIu64 " such asks lost)",
		    n->raw_tp ? "raw_tp" : "tp_btf", (n->stop_ns - n->start_ns) / 1e9, ns->switches,
		    ns->intervals, st->filtered, st->walks_kernel, st->walks_user, ns->drains,
		    st->drain_wakes, st->drain_wake_lost);
	native_note(n,
		    "call-site cache: %" PRIu64 " hits, %" PRIu64 " misses, %" PRIu64
		    " checks (%" PRIu64 " found another kernel stack, %" PRIu64
		    " another user stack; %" PRIu64 " intervals in failed checks), %" PRIu64
		    " key matches refused by kernel frames; %" PRIu64 " sites made, %" PRIu64
		    " kernel-exact, %" PRIu64 " user-exact%s",
		    ns->cache_hits, st->cache_misses, st->cache_checks, st->check_failed_kernel,
		    st->check_failed_user, st->cache_mismatch, st->kslot_rejects, st->sites_made,
		    st->sites_kernel_exact, st->sites_user_exact,
		    n->rdonly_cast ? "" : " (kernel words read by helper)");
	if (n->sched_clock && !n->raw_tp)
		native_note(n,
			    "switch clock: the run queue's (sched_clock), its offset to "
			    "CLOCK_MONOTONIC taken %" PRIu64 " times, moved %.0f ns a time",
			    st->clock_syncs,
			    st->clock_syncs > 1 ? (double)st->clock_step_ns / (st->clock_syncs - 1)
						: 0.0);
	else
		native_note(n, "switch clock: bpf_ktime_get_ns() (%s)",
			    n->raw_tp ? "the raw_tp programs" : n->clock_why);
	if (n->unw)
		unwind_notes(n, st);
	if (n->unw && n->upt_levels)
		native_note(n,
			    "user words of cache hits: read through the page table (%d levels) "
			    "%" PRIu64 " times, with bpf_probe_read_user() %" PRIu64
			    " times (a page not present, or the words over 32 KiB apart)",
			    n->upt_levels, st->uslot_direct, st->uslot_helper);
	else if (n->unw)
		native_note(n, "user words of cache hits: read with bpf_probe_read_user() (%s)",
			    n->upt_why);
	else
		native_note(n, "user stacks: frame pointers only%s",
			    OFFCPU_DWARF_ARCH ? " (the .eh_frame unwinder was off or unavailable)"
					      : "");
	if (st->unseen_switch_in || st->unseen_switch_out)
		native_note(n,
			    "the kernel did not report %" PRIu64 " switch-ins and %" PRIu64
			    " switch-outs of traced threads; their intervals were rebuilt from "
			    "schedstat",
			    st->unseen_switch_in, st->unseen_switch_out);
	unseen_note(b);
	native_note(n,
		    "%" PRIu64 " tracer-frame strips, %" PRIu64
		    " kernel stacks without __schedule, %" PRIu64
		    " truncated at %d frames, %" PRIu64 " wakeups while running, %" PRIu64
		    " sleeps without a seen wakeup, %" PRIu64
		    " requests to track a process (%" PRIu64 " with its address space unchanged), "
		    "%zu threads exited",
		    st->tracer_frames + b->stripped, st->unanchored, st->stack_truncated,
		    OFFCPU_MAX_STACK, st->wakeup_running, st->no_wakeup, n->tracked, n->mm.same,
		    n->nr_exits);
	if (b->unresolved)
		native_note(n, "%" PRIu64 " stack ids whose frames never arrived", b->unresolved);
}

/* The counters since the last cut (all of them before the first). */
static void stats_since(const struct offcpu_stats *now, const struct offcpu_stats *then,
			struct offcpu_stats *d)
{
	const __u64 *a = (const __u64 *)now, *z = (const __u64 *)then;
	__u64 *o = (__u64 *)d;

	_Static_assert(sizeof(*now) % sizeof(__u64) == 0, "offcpu_stats holds __u64 only");
	for (size_t i = 0; i < sizeof(*now) / sizeof(__u64); i++)
		o[i] = a[i] >= z[i] ? a[i] - z[i] : 0;
}

static void table_move(struct ntable *dst, struct ntable *src)
{
	ntable_free(dst);
	*dst = *src;
	memset(src, 0, sizeof(*src));
}

static bool debt_alive(const void *key, void *val, void *arg)
{
	(void)val;
	return ntable_find(arg, &((const struct offcpu_agg_key *)key)->tid) != NULL;
}

/* After a cut: what it gave is what the next one subtracts; n->agg starts empty. */
static void cut_commit(struct build *b, struct ntable *agg, struct ntable *debts,
		       const struct offcpu_stats *st, uint64_t misses)
{
	struct native *n = b->n;

	table_move(&n->agg, agg);
	table_move(&n->credits, &b->credits);
	table_move(&n->site_given, &b->site_now);
	table_move(&n->sofar, &b->sofar);
	/* Debts of threads no longer alive: their rows have all come; what is left never will. */
	n->debts_dropped += (uint64_t)(ntable_keep(debts, debt_alive, &b->sofar) > 0);
	table_move(&n->debts, debts);
	n->cut_st = *st;
	n->cut_misses = misses;
	n->nr_exits = 0;
	n->cuts++;
	n->cut_ns = b->end_ns;
}

/*
 * Stacks no row, thread or call site needed in this period nor the one
 * before: freed, and deleted from the kernel's set of ids sent, so that a
 * later use sends them again. A long run's memory follows what runs, not
 * what ever ran. The rare use between the delete and a resend is a row
 * whose frames never arrive, counted as such.
 */
static bool stack_keep(const void *key, void *val, void *arg)
{
	struct native_stack *st = val;
	struct native *n = arg;

	if (st->used + 2 >= n->cuts)
		return true;
	bpf_map_delete_elem(bpf_map__fd(n->skel->maps.stacks), key);
	free(st->ips);
	n->stacks_evicted++;
	return false;
}

/* Raw user stacks: those still waiting for their mappings, and those of kept stacks. */
static bool raw_keep(const void *key, void *val, void *arg)
{
	return ((struct native_raw *)val)->r || ntable_find(&((struct native *)arg)->stacks, key);
}

static void cut_evict(struct native *n)
{
	ntable_keep(&n->stacks, stack_keep, n);
	ntable_keep(&n->raws, raw_keep, n);
}

static void debt_note(struct native *n, const struct ntable *debts, bool final)
{
	const void *key;
	void *val;
	uint64_t ns = 0;

	for (size_t pos = 0; ntable_next(debts, &pos, &key, &val);)
		ns += ((const struct offcpu_agg_val *)val)->off_ns;
	if (final && debts->n)
		native_note(n,
			    "periods: %zu rows were given %.6f s ahead by earlier periods that "
			    "never came (a wait split at a boundary that the state or time "
			    "filters then left out, or shortened by a run the kernel did not "
			    "report)",
			    debts->n, ns / 1e9);
}

/* After a cut: hand over, then forget what no one needs (memory follows what runs). */
static void cut_finish(struct build *b, struct ntable *agg, struct ntable *debts,
		       const struct offcpu_stats *st, uint64_t misses)
{
	struct native *n = b->n;
	struct symbolizer *sym = b->sym;
	uint64_t before = n->stacks_evicted, closed = 0;
	struct unwinder_stats us = {0}, us2 = {0};
	struct symbolizer_stats ss;
	int gone = 0;

	cut_commit(b, agg, debts, st, misses);
	cut_evict(n);
	if (sym) {
		symbolizer__stats(sym, &ss);
		closed = ss.binaries_closed;
		gone = symbolizer__forget_gone(sym);
		symbolizer__stats(sym, &ss);
		closed = ss.binaries_closed - closed;
	}
	if (n->unw) {
		unwinder__stats(n->unw, &us);
		unwinder__forget_gone(n->unw);
		unwinder__stats(n->unw, &us2);
	}
	mmstamps__forget_gone(&n->mm);
	/* Give what was freed back to the system, or the heap only ever grows to its peak. */
	malloc_trim(0);
	if (n->stacks_evicted > before || gone > 0 || closed || us2.forgotten > us.forgotten) {
		size_t pending = 0;
		const void *rk;
		void *rv;

		for (size_t pos = 0; ntable_next(&n->raws, &pos, &rk, &rv);)
			pending += ((struct native_raw *)rv)->r != NULL;
		symbolizer__stats(sym, &ss);
		native_note(n,
			    "period %" PRIu64 ": %" PRIu64
			    " stacks unused for two periods forgotten (%" PRIu64
			    " in all, %zu kept; %zu raw user stacks, %zu to unwind; %zu "
			    "debts), %d exited processes forgotten (%zu known), %" PRIu64
			    " binaries no process maps closed, %zu unwind tables forgotten (%zu "
			    "loaded, %" PRIu64 " of %" PRIu64 " bytes of rows in use)",
			    n->cuts, n->stacks_evicted - before, n->stacks_evicted, n->stacks.n,
			    n->raws.n, pending, n->debts.n, gone > 0 ? gone : 0,
			    sym ? ss.processes : 0, closed, us2.forgotten - us.forgotten,
			    us2.tables, us2.rows_bytes, us2.budget);
	}
}

/*
 * native__stop (final: detach first) and native__cut (attached) share this:
 * read, subtract what earlier cuts gave, and build the rows, thread times
 * and losses of the window or period.
 */
static int native_build_free(struct build *b, struct ntable *debts, struct ntable *agg, int err);
static int native_build(struct native *n, struct profile *p, struct integrity *in,
			struct symbolizer *sym, bool final)
{
	struct build b = {.n = n, .p = p, .sym = sym, .final = final};
	struct ntable debts = {0}, agg = {0};
	struct offcpu_stats st, d;
	uint64_t misses;
	bool collected = false;
	int err;

	if ((err = ntable_init(&b.threads, sizeof(struct thread_key),
			       sizeof(struct native_thread))) ||
	    (err = ntable_init(&b.parts, sizeof(struct part_key), sizeof(struct part))) ||
	    (err = ntable_init(&b.at_stop, sizeof(uint32_t), 2 * sizeof(uint64_t))) ||
	    (err = ntable_init(&b.minus, sizeof(struct offcpu_agg_key),
			       sizeof(struct offcpu_agg_val))) ||
	    (err = ntable_init(&debts, sizeof(struct offcpu_agg_key),
			       sizeof(struct offcpu_agg_val))) ||
	    (err = ntable_init(&b.credits, sizeof(uint32_t), sizeof(struct native_credit))) ||
	    (err = ntable_init(&b.site_now, sizeof(struct offcpu_agg_key),
			       sizeof(struct offcpu_agg_val))) ||
	    (err = ntable_init(&b.sofar, sizeof(uint32_t), sizeof(struct native_sofar))) ||
	    (err = ntable_init(&b.unseen, sizeof(struct thread_key),
			       sizeof(struct native_unseen))) ||
	    (!final && (err = ntable_init(&agg, sizeof(struct offcpu_agg_key),
					  sizeof(struct offcpu_agg_val)))))
		goto cleanup;
	err = final ? stop_collect(&b, &st, &misses) : cut_collect(&b, &st, &misses);
	collected = !err;
	if (!err && n->snapped && !n->snap_finished) {
		n->snap_finished = true;
		err = native_snap_finish(n, sym);
	}
	if (err || (n->cuts && (err = cut_minus(&b, &debts))) || (err = stop_rows(&b, in)) ||
	    (final && (err = build_timeline(&b))) || (err = stop_thread_times(&b)))
		goto cleanup;
	stats_since(&st, &n->cut_st, &d);
	stop_losses(&b, in, &d, misses > n->cut_misses ? misses - n->cut_misses : 0);
	debt_note(n, &debts, final);
	if (final) {
		stop_stats(n, &st);
		stop_notes(&b, &st);
	} else {
		cut_finish(&b, &agg, &debts, &st, misses);
	}
	return native_build_free(&b, &debts, &agg, 0);
cleanup:
	/* A cut that failed half way still hands over: what it kept would grow, or count twice. */
	if (!final && collected)
		cut_finish(&b, &agg, &debts, &st, misses);
	return native_build_free(&b, &debts, &agg, err);
}

static int native_build_free(struct build *b, struct ntable *debts, struct ntable *agg, int err)
{
	const void *key;
	void *val;

	for (size_t pos = 0; b->parts.slots && ntable_next(&b->parts, &pos, &key, &val);)
		free(((struct part *)val)->ids);
	ntable_free(&b->parts);
	ntable_free(&b->threads);
	ntable_free(&b->at_stop);
	ntable_free(&b->minus);
	ntable_free(&b->credits);
	ntable_free(&b->site_now);
	ntable_free(&b->sofar);
	ntable_free(&b->unseen);
	ntable_free(debts);
	ntable_free(agg);
	return err;
}

int native__stop(struct native *n, struct profile *p, struct integrity *in, struct symbolizer *sym)
{
	if (!n || !p || n->stopped)
		return -EINVAL;
	n->stopped = true;
	return native_build(n, p, in, sym, true);
}

int native__cut(struct native *n, struct profile *p, struct integrity *in, struct symbolizer *sym,
		uint64_t *at_ns)
{
	int err;

	if (!n || !p || n->stopped)
		return -EINVAL;
	if (n->timeline)
		return -EOPNOTSUPP;
	err = native_build(n, p, in, sym, false);
	if (!err && at_ns)
		*at_ns = n->cut_ns;
	return err;
}
