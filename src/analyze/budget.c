// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/budget.h"

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* Fill the derived fields once the sums are in. */
static void finish(struct budget_entry *e)
{
	uint64_t claimed, off_truth;

	e->blocked_total_ns = 0;
	for (int r = 0; r < REASON__COUNT; r++)
		e->blocked_total_ns = sat_add(e->blocked_total_ns, e->blocked_ns[r]);
	e->coverage = -1;
	e->unaccounted_ns = e->excess_ns = 0;
	if (!e->time_known) {
		e->runq_ns = e->rows_runq_ns;
		return;
	}
	claimed = sat_add(sat_add(e->oncpu_ns, e->runq_ns), e->blocked_total_ns);
	if (claimed <= e->wall_ns)
		e->unaccounted_ns = e->wall_ns - claimed;
	else
		e->excess_ns = claimed - e->wall_ns;
	off_truth = e->wall_ns > e->oncpu_ns ? e->wall_ns - e->oncpu_ns : 0;
	/* Above 1 is an overcount (rows claim more than the kernel saw): shown, never hidden. */
	if (off_truth)
		e->coverage = (double)e->off_ns / (double)off_truth;
	else if (!e->off_ns)
		e->coverage = 1.0; /* never off the CPU, nothing to explain */
}

/* Add thread entry t into the aggregate a (process or total). */
static void merge(struct budget_entry *a, const struct budget_entry *t)
{
	if (!a->nr_threads) {
		a->time_known = t->time_known;
		a->comm = t->comm;
	} else {
		a->time_known = a->time_known && t->time_known;
	}
	/* A process is named by its main thread when that one is seen. */
	if (t->pid && t->tid == t->pid)
		a->comm = t->comm;
	a->nr_threads++;
	a->wall_ns = sat_add(a->wall_ns, t->wall_ns);
	a->oncpu_ns = sat_add(a->oncpu_ns, t->oncpu_ns);
	a->runq_ns = sat_add(a->runq_ns, t->runq_ns);
	a->rows_runq_ns = sat_add(a->rows_runq_ns, t->rows_runq_ns);
	a->off_ns = sat_add(a->off_ns, t->off_ns);
	a->count = sat_add(a->count, t->count);
	for (int r = 0; r < REASON__COUNT; r++)
		a->blocked_ns[r] = sat_add(a->blocked_ns[r], t->blocked_ns[r]);
}

static int cmp_entry(const void *a, const void *b)
{
	const struct budget_entry *x = a, *y = b;
	int c;

	if (x->off_ns != y->off_ns)
		return x->off_ns > y->off_ns ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	c = strcmp(x->comm ? x->comm : "", y->comm ? y->comm : "");
	return c;
}

/* Same process: same pid, or both pids unknown and the same comm. */
static bool same_proc(const struct budget_entry *proc, const struct budget_entry *t)
{
	if (proc->pid || t->pid)
		return proc->pid == t->pid;
	return !strcmp(proc->comm, t->comm);
}

struct budget *budget__new(const struct profile *p)
{
	size_t nth = profile__nr_threads(p), nrows = profile__nr_rows(p), n = 0;
	struct budget_entry *all = NULL;
	struct reasons *rs = NULL;
	struct budget *b = NULL;
	bool *used = NULL;
	int err = -ENOMEM;

	b = calloc(1, sizeof(*b));
	all = calloc(nth ? nth : 1, sizeof(*all));
	used = calloc(nth ? nth : 1, sizeof(*used));
	rs = reasons__new(p);
	if (!b || !all || !used || !rs)
		goto cleanup;
	b->runq_known = profile__runq_known(p);

	for (size_t i = 0; i < nrows; i++) {
		const struct profile_row *row = profile__row_at(p, i);
		struct budget_entry *e = &all[row->thread];
		enum reason r = reasons__get(rs, row->stack, row->state);
		uint64_t rq;

		if (r == REASON_RUNQUEUE)
			rq = row->w.off_ns;
		else
			rq = b->runq_known ? row->w.runq_ns : 0;
		e->off_ns = sat_add(e->off_ns, row->w.off_ns);
		e->count = sat_add(e->count, row->w.count);
		e->rows_runq_ns = sat_add(e->rows_runq_ns, rq);
		if (r != REASON_RUNQUEUE)
			e->blocked_ns[r] = sat_add(e->blocked_ns[r], row->w.off_ns - rq);
		used[row->thread] = true;
	}
	for (size_t t = 0; t < nth; t++) {
		const struct profile_thread *th = profile__thread_at(p, (uint32_t)t);
		const struct profile_thread_time *tt = profile__thread_time(p, (uint32_t)t);
		struct budget_entry *e = &all[t];

		if (!used[t] && !tt)
			continue;
		e->pid = th->pid;
		e->tid = th->tid;
		e->comm = th->comm;
		e->nr_threads = 1;
		if (tt) {
			e->time_known = true;
			e->wall_ns = tt->wall_ns;
			/* The rows count the CPU's wake-ups as waits: not on-CPU here. */
			e->oncpu_ns = profile_thread_time__ran_ns(tt);
			e->runq_ns = tt->runq_ns;
		}
		finish(e);
		all[n++] = *e;
	}
	b->threads = all;
	b->nr_threads = n;
	all = NULL;

	b->procs = calloc(n ? n : 1, sizeof(*b->procs));
	if (!b->procs)
		goto cleanup;
	/* Few processes in practice: a linear search per thread keeps first-seen order. */
	for (size_t t = 0; t < n; t++) {
		const struct budget_entry *te = &b->threads[t];
		size_t j;

		for (j = 0; j < b->nr_procs; j++)
			if (same_proc(&b->procs[j], te))
				break;
		if (j == b->nr_procs) {
			b->procs[j].pid = te->pid;
			b->nr_procs++;
		}
		merge(&b->procs[j], te);
		merge(&b->total, te);
	}
	for (size_t j = 0; j < b->nr_procs; j++)
		finish(&b->procs[j]);
	finish(&b->total);
	b->total.comm = "";
	qsort(b->threads, b->nr_threads, sizeof(*b->threads), cmp_entry);
	qsort(b->procs, b->nr_procs, sizeof(*b->procs), cmp_entry);
	err = 0;
cleanup:
	reasons__free(rs);
	free(used);
	free(all);
	if (err) {
		budget__free(b);
		errno = -err;
		return NULL;
	}
	return b;
}

void budget__free(struct budget *b)
{
	if (!b)
		return;
	free(b->threads);
	free(b->procs);
	free(b);
}

enum reason budget_entry__top_reason(const struct budget_entry *e)
{
	enum reason best = REASON_OTHER;
	uint64_t max = 0;

	for (int r = 0; r < REASON__COUNT; r++) {
		if (e->blocked_ns[r] > max) {
			max = e->blocked_ns[r];
			best = r;
		}
	}
	/* the run queue's part counts as runqueue, as in the reason table */
	if (e->runq_ns > max)
		best = REASON_RUNQUEUE;
	return best;
}

void budget_entry__add(struct budget_entry *a, const struct budget_entry *e)
{
	size_t n = a->nr_threads;

	merge(a, e);
	a->nr_threads = n + e->nr_threads;
	finish(a);
}
