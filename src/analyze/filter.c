// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/filter.h"

struct filter {
	int *pids;
	size_t nr_pids;
	char **comms;
	size_t nr_comms;
	size_t top;
};

struct filter *filter__new(void)
{
	struct filter *f = calloc(1, sizeof(*f));

	if (!f)
		errno = ENOMEM;
	return f;
}

void filter__free(struct filter *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nr_comms; i++)
		free(f->comms[i]);
	free(f->comms);
	free(f->pids);
	free(f);
}

int filter__add_pids(struct filter *f, const char *list)
{
	const char *s = list;
	size_t n = 1, old = f->nr_pids;
	int *pids;

	for (const char *c = list; *c; c++)
		n += *c == ',';
	pids = realloc(f->pids, (old + n) * sizeof(*pids));
	if (!pids)
		return -ENOMEM;
	f->pids = pids;
	for (size_t i = 0; i < n; i++) {
		char *end;
		long v;

		errno = 0;
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = strtol(s, &end, 10);
		if (errno || v < 1 || v > INT_MAX || (*end && *end != ','))
			return -EINVAL;
		pids[old + i] = (int)v;
		s = end + (*end == ',');
	}
	f->nr_pids = old + n;
	return 0;
}

int filter__add_comm(struct filter *f, const char *name)
{
	char **comms, *copy;

	if (!*name)
		return -EINVAL;
	comms = realloc(f->comms, (f->nr_comms + 1) * sizeof(*comms));
	if (!comms)
		return -ENOMEM;
	f->comms = comms;
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	comms[f->nr_comms++] = copy;
	return 0;
}

void filter__set_top(struct filter *f, size_t n)
{
	f->top = n;
}

bool filter__active(const struct filter *f)
{
	return f && (f->nr_pids || f->nr_comms || f->top);
}

void filter__describe(const struct filter *f, char *buf, size_t size)
{
	size_t used = 0;

#define PUT(...)                                                                        \
	do {                                                                            \
		if (used < size)                                                        \
			used += (size_t)snprintf(buf + used, size - used, __VA_ARGS__); \
	} while (0)
	if (!size)
		return;
	buf[0] = '\0';
	if (!f)
		return;
	for (size_t i = 0; i < f->nr_pids; i++)
		PUT("%s%d", i ? "," : used ? " --pid " : "--pid ", f->pids[i]);
	for (size_t i = 0; i < f->nr_comms; i++)
		PUT("%s--comm %s", used ? " " : "", f->comms[i]);
	if (f->top)
		PUT("%s--top %zu", used ? " " : "", f->top);
#undef PUT
}

const int *filter__pids(const struct filter *f, size_t *n)
{
	*n = f ? f->nr_pids : 0;
	return f ? f->pids : NULL;
}

const char *const *filter__comms(const struct filter *f, size_t *n)
{
	*n = f ? f->nr_comms : 0;
	return f ? (const char *const *)f->comms : NULL;
}

size_t filter__top(const struct filter *f)
{
	return f ? f->top : 0;
}

/* A thread of a known pid, by (pid, thread id): each pid's threads in a run, first one first. */
struct pid_thread {
	int pid;
	uint32_t thread;
};

static int cmp_pid_thread(const void *a, const void *b)
{
	const struct pid_thread *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

void filter__process_names(const struct profile *p, const char **names)
{
	size_t nth = profile__nr_threads(p), n = 0;
	struct pid_thread *map = malloc((nth ? nth : 1) * sizeof(*map));

	for (size_t t = 0; t < nth; t++) {
		const struct profile_thread *th = profile__thread_at(p, (uint32_t)t);

		names[t] = th->comm;
		if (map && th->pid)
			map[n++] = (struct pid_thread){th->pid, (uint32_t)t};
	}
	if (!map)
		return; /* out of memory: each thread names its own process */
	qsort(map, n, sizeof(*map), cmp_pid_thread);
	for (size_t i = 0, end; i < n; i = end) {
		const char *name = profile__thread_at(p, map[i].thread)->comm;

		for (end = i; end < n && map[end].pid == map[i].pid; end++) {
			const struct profile_thread *th = profile__thread_at(p, map[end].thread);

			if (th->tid == th->pid)
				name = th->comm;
		}
		for (size_t j = i; j < end; j++)
			names[map[j].thread] = name;
	}
	free(map);
}

/* A process: its pid, or for threads without one, its name. */
struct proc_key {
	int pid;
	const char *name;
};

static int cmp_proc_key(const void *a, const void *b)
{
	const struct proc_key *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->pid ? 0 : strcmp(x->name, y->name);
}

static size_t count_procs(const struct profile *p, const char **names, const bool *in,
			  struct proc_key *keys)
{
	size_t n = 0, distinct = 0;

	for (size_t t = 0; t < profile__nr_threads(p); t++)
		if (in[t])
			keys[n++] = (struct proc_key){profile__thread_at(p, (uint32_t)t)->pid,
						      names[t]};
	qsort(keys, n, sizeof(*keys), cmp_proc_key);
	for (size_t i = 0; i < n; i++)
		distinct += !i || cmp_proc_key(&keys[i - 1], &keys[i]);
	return distinct;
}

static bool selects(const struct filter *f, const struct profile_thread *th, const char *name)
{
	bool ok = !f->nr_pids;

	for (size_t i = 0; !ok && i < f->nr_pids; i++)
		ok = th->pid && th->pid == f->pids[i];
	if (!ok)
		return false;
	ok = !f->nr_comms;
	for (size_t i = 0; !ok && i < f->nr_comms; i++)
		ok = !strcmp(name, f->comms[i]) || !strcmp(th->comm, f->comms[i]);
	return ok;
}

struct name_time {
	const char *name;
	uint64_t off_ns;
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct name_time *)a)->name, ((const struct name_time *)b)->name);
}

static int cmp_name_time(const void *a, const void *b)
{
	const struct name_time *x = a, *y = b;

	if (x->off_ns != y->off_ns)
		return x->off_ns > y->off_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Keep the threads of the top process names by off-CPU time; 0, -ENOMEM. */
static int keep_top(const struct profile *p, const char **names, const uint64_t *off, bool *sel,
		    size_t top)
{
	size_t nth = profile__nr_threads(p), n = 0, m = 0;
	struct name_time *nt = malloc((nth ? nth : 1) * sizeof(*nt));

	if (!nt)
		return -ENOMEM;
	for (size_t t = 0; t < nth; t++)
		if (sel[t])
			nt[n++] = (struct name_time){names[t], off[t]};
	qsort(nt, n, sizeof(*nt), cmp_name);
	for (size_t i = 0; i < n; i++) {
		if (m && !strcmp(nt[m - 1].name, nt[i].name)) {
			uint64_t s = nt[m - 1].off_ns + nt[i].off_ns;

			nt[m - 1].off_ns = s < nt[i].off_ns ? UINT64_MAX : s;
		} else {
			nt[m++] = nt[i];
		}
	}
	qsort(nt, m, sizeof(*nt), cmp_name_time);
	if (m > top) {
		qsort(nt, top, sizeof(*nt), cmp_name);
		for (size_t t = 0; t < nth; t++) {
			struct name_time key = {.name = names[t]};

			if (sel[t] && !bsearch(&key, nt, top, sizeof(*nt), cmp_name))
				sel[t] = false;
		}
	}
	free(nt);
	return 0;
}

struct tid_pid {
	int tid, pid;
};

static int cmp_tid_pid(const void *a, const void *b)
{
	const struct tid_pid *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Intern stack s of p into q (its frames too), once; the id in smap[s]. */
static int copy_stack(const struct profile *p, struct profile *q, uint32_t s, int64_t *smap,
		      int64_t *fmap, uint32_t **buf, size_t *cap)
{
	size_t n = 0;
	const uint32_t *frames = profile__stack_at(p, s, &n);
	int id;

	if (smap[s] >= 0)
		return 0;
	if (n > *cap) {
		uint32_t *b = realloc(*buf, n * sizeof(*b));

		if (!b)
			return -ENOMEM;
		*buf = b;
		*cap = n;
	}
	for (size_t i = 0; i < n; i++) {
		const struct profile_frame *fr = profile__frame_at(p, frames[i]);

		if (fmap[frames[i]] < 0) {
			id = profile__frame(q, fr->kind, fr->name, strlen(fr->name));
			if (id < 0)
				return id;
			fmap[frames[i]] = id;
		}
		(*buf)[i] = (uint32_t)fmap[frames[i]];
	}
	id = profile__stack(q, *buf, n);
	if (id < 0)
		return id;
	smap[s] = id;
	return 0;
}

static int copy_timeline(const struct profile *p, const struct timeline *t, struct profile *q,
			 const struct tid_pid *kept, size_t nkept, int64_t *smap, int64_t *fmap,
			 struct timeline **out)
{
	struct timeline *u = timeline__new();
	uint32_t *buf = NULL;
	size_t cap = 0;
	int err = -ENOMEM;

	if (!u)
		goto cleanup;
	timeline__set_info(u, timeline__info(t));
	for (size_t i = 0; i < timeline__nr(t); i++) {
		struct timeline_interval iv = *timeline__at(t, i);
		struct tid_pid key = {iv.tid, iv.pid};

		if (!bsearch(&key, kept, nkept, sizeof(*kept), cmp_tid_pid))
			continue;
		err = -EINVAL;
		if (iv.stack >= profile__nr_stacks(p))
			goto cleanup;
		err = copy_stack(p, q, iv.stack, smap, fmap, &buf, &cap);
		if (err)
			goto cleanup;
		iv.stack = (uint32_t)smap[iv.stack];
		if (iv.waker_irq) {
			/* The copy has its own table of interrupt names. */
			int irq = timeline__irq(u, timeline__irq_name(t, iv.waker_irq));

			if (irq < 0) {
				err = irq;
				goto cleanup;
			}
			iv.waker_irq = (uint32_t)irq;
		}
		err = timeline__append(u, &iv);
		if (err)
			goto cleanup;
	}
	err = 0;
cleanup:
	free(buf);
	if (err)
		timeline__free(u);
	else
		*out = u;
	return err;
}

int filter__apply(const struct filter *f, const struct profile *p, const struct timeline *t,
		  struct profile **out_p, struct timeline **out_t, struct filter_result *res)
{
	size_t nth = profile__nr_threads(p), nrows = profile__nr_rows(p),
	       nst = profile__nr_stacks(p), nfr = profile__nr_frames(p), nkept = 0, cap = 0;
	const char **names = malloc((nth ? nth : 1) * sizeof(*names));
	uint64_t *off = calloc(nth ? nth : 1, sizeof(*off));
	bool *has = calloc(nth ? nth : 1, sizeof(*has)), *sel = calloc(nth ? nth : 1, sizeof(*sel));
	struct proc_key *keys = malloc((nth ? nth : 1) * sizeof(*keys));
	struct tid_pid *kept = malloc((nth ? nth : 1) * sizeof(*kept));
	int64_t *tmap = malloc((nth ? nth : 1) * sizeof(*tmap));
	int64_t *smap = malloc((nst ? nst : 1) * sizeof(*smap));
	int64_t *fmap = malloc((nfr ? nfr : 1) * sizeof(*fmap));
	struct filter_result r = {0};
	struct profile *q = NULL;
	struct timeline *u = NULL;
	uint32_t *buf = NULL;
	int err = -ENOMEM;

	*out_p = NULL;
	if (out_t)
		*out_t = NULL;
	if (!names || !off || !has || !sel || !keys || !kept || !tmap || !smap || !fmap)
		goto cleanup;
	filter__process_names(p, names);
	for (size_t i = 0; i < nrows; i++) {
		const struct profile_row *row = profile__row_at(p, i);
		uint64_t s = off[row->thread] + row->w.off_ns;

		off[row->thread] = s < row->w.off_ns ? UINT64_MAX : s;
		has[row->thread] = true;
	}
	for (size_t th = 0; th < nth; th++) {
		has[th] = has[th] || profile__thread_time(p, (uint32_t)th);
		sel[th] = has[th] &&
			  (!f || selects(f, profile__thread_at(p, (uint32_t)th), names[th]));
	}
	if (f && f->top) {
		err = keep_top(p, names, off, sel, f->top);
		if (err)
			goto cleanup;
	}
	for (size_t th = 0; th < nth; th++) {
		r.threads_total += has[th];
		r.threads += sel[th];
	}
	r.procs_total = count_procs(p, names, has, keys);
	r.procs = count_procs(p, names, sel, keys);
	err = -ESRCH;
	if (!r.threads)
		goto cleanup;

	err = -ENOMEM;
	q = profile__new();
	if (!q)
		goto cleanup;
	profile__set_runq_known(q, profile__runq_known(p));
	for (size_t i = 0; i < nst; i++)
		smap[i] = -1;
	for (size_t i = 0; i < nfr; i++)
		fmap[i] = -1;
	for (size_t th = 0; th < nth; th++) {
		const struct profile_thread *pt = profile__thread_at(p, (uint32_t)th);
		const struct profile_thread_time *tt = profile__thread_time(p, (uint32_t)th);
		int id;

		tmap[th] = -1;
		if (!sel[th])
			continue;
		id = profile__thread(q, pt->pid, pt->tid, pt->comm);
		if (id < 0) {
			err = id;
			goto cleanup;
		}
		tmap[th] = id;
		kept[nkept++] = (struct tid_pid){pt->tid, pt->pid};
		if (tt) {
			err = profile__set_thread_time(q, (uint32_t)id, tt);
			if (err)
				goto cleanup;
		}
	}
	qsort(kept, nkept, sizeof(*kept), cmp_tid_pid);
	for (size_t i = 0; i < nrows; i++) {
		const struct profile_row *row = profile__row_at(p, i);

		if (!sel[row->thread])
			continue;
		err = copy_stack(p, q, row->stack, smap, fmap, &buf, &cap);
		if (!err)
			err = profile__add(q, (uint32_t)tmap[row->thread],
					   (uint32_t)smap[row->stack], row->state, &row->w);
		if (err)
			goto cleanup;
	}
	if (t && out_t) {
		err = copy_timeline(p, t, q, kept, nkept, smap, fmap, &u);
		if (err)
			goto cleanup;
	}
	*out_p = q;
	q = NULL;
	if (out_t)
		*out_t = u;
	u = NULL;
	err = 0;
cleanup:
	if (res)
		*res = r;
	profile__free(q);
	timeline__free(u);
	free(buf);
	free(names);
	free(off);
	free(has);
	free(sel);
	free(keys);
	free(kept);
	free(tmap);
	free(smap);
	free(fmap);
	return err;
}
