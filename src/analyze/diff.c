// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/budget.h"
#include "analyze/diff.h"
#include "model/frame_name.h"
#include "parse/summary_json.h"
#include "util/vec.h"

/* One stack, thread or reason on one side. */
struct entry {
	char *name;
	char *kinds; /* stacks only */
	enum reason reason;
	uint64_t off, blocked, runq, count;
};

struct entries {
	struct entry *v;
	size_t n, cap;
};

struct diff_side {
	uint64_t off, blocked, runq, count, wall;
	uint64_t reason_ns[REASON__COUNT]; /* blocked by reason; runqueue: run-queue time */
	struct entries threads, stacks;
	bool stacks_partial;
	bool runq_known; /* the collector split run-queue time from blocked time */
};

static struct entry *push(struct entries *es)
{
	if (vec_reserve(es->v, es->cap, es->n + 1))
		return NULL;
	memset(&es->v[es->n], 0, sizeof(es->v[0]));
	return &es->v[es->n++];
}

static void entries_free(struct entries *es)
{
	for (size_t i = 0; i < es->n; i++) {
		free(es->v[i].name);
		free(es->v[i].kinds);
	}
	free(es->v);
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c || !x->kinds || !y->kinds)
		return c;
	return strcmp(x->kinds, y->kinds);
}

/* Sort by key and sum equal keys (equal frames: the same reason; else the heavier's). */
static void sort_merge(struct entries *es)
{
	size_t out = 0;

	if (!es->n)
		return;
	qsort(es->v, es->n, sizeof(es->v[0]), cmp_entry);
	for (size_t i = 1; i < es->n; i++) {
		struct entry *d = &es->v[out], *s = &es->v[i];

		if (cmp_entry(d, s)) {
			es->v[++out] = *s;
			continue;
		}
		if (s->off > d->off)
			d->reason = s->reason;
		d->off += s->off;
		d->blocked += s->blocked;
		d->runq += s->runq;
		d->count += s->count;
		free(s->name);
		free(s->kinds);
	}
	es->n = out + 1;
}

/*
 * "name;name;..." and "uukk" for a frame list. A run of frames without a name
 * ("[unsymbolized 0x7f...]", raw "0x7f..." or "[unknown]") is one
 * "[unsymbolized]" frame: their addresses move with ASLR from run to run, and
 * a frame-pointer walk through code without frame pointers finds a varying
 * number of them, so neither may tell two runs of the same stack apart.
 */
static int stack_key(const char *const *names, const enum frame_kind *kinds, size_t n, char **name,
		     char **kind_str)
{
	size_t len = 1, nk = 0;
	char clean[512], *s, *k;
	bool prev_unsym = false;

	for (size_t i = 0; i < n; i++)
		len += strlen(names[i]) + sizeof(FRAME_NAME_UNSYMBOLIZED) + 1;
	s = malloc(len);
	k = malloc(n + 1);
	if (!s || !k) {
		free(s);
		free(k);
		return -ENOMEM;
	}
	s[0] = '\0';
	for (size_t i = 0, pos = 0; i < n; i++) {
		bool unsym = kinds[i] != FRAME_MISSING && frame_name__unsymbolized(names[i]);
		const char *frame = clean;
		size_t l;

		if (unsym && prev_unsym && kinds[i] == kinds[i - 1])
			continue;
		prev_unsym = unsym;
		if (unsym)
			frame = FRAME_NAME_UNSYMBOLIZED;
		else
			reasons__clean_name(kinds[i], names[i], clean, sizeof(clean));
		l = strlen(frame);
		if (nk)
			s[pos++] = ';';
		memcpy(s + pos, frame, l + 1);
		pos += l;
		k[nk++] = frame_kind__letter(kinds[i]);
	}
	k[nk] = '\0';
	*name = s;
	*kind_str = k;
	return 0;
}

static int add_profile_stack(struct diff_side *s, const struct profile *p, uint32_t stack,
			     const struct entry *w)
{
	size_t n = 0;
	const uint32_t *frames = profile__stack_at(p, stack, &n);
	const char **names = malloc((n ? n : 1) * sizeof(*names));
	enum frame_kind *kinds = malloc((n ? n : 1) * sizeof(*kinds));
	struct entry *e;
	int err = -ENOMEM;

	if (!names || !kinds)
		goto cleanup;
	for (size_t i = 0; i < n; i++) {
		const struct profile_frame *f = profile__frame_at(p, frames[i]);

		names[i] = f->name;
		kinds[i] = f->kind;
	}
	e = push(&s->stacks);
	if (!e)
		goto cleanup;
	*e = *w;
	err = stack_key(names, kinds, n, &e->name, &e->kinds);
	if (err)
		s->stacks.n--;
cleanup:
	free(names);
	free(kinds);
	return err;
}

struct diff_side *diff_side__from_profile(const struct profile *p)
{
	size_t nst = profile__nr_stacks(p), nrows = profile__nr_rows(p);
	struct diff_side *s = calloc(1, sizeof(*s));
	struct entry *per_stack = calloc(nst ? nst : 1, sizeof(*per_stack));
	bool *seen = calloc(nst ? nst : 1, sizeof(*seen));
	struct reasons *rs = reasons__new(p);
	struct budget *b = budget__new(p);
	bool runq_known = profile__runq_known(p);
	int err = -ENOMEM;

	if (!s || !per_stack || !seen || !rs || !b)
		goto cleanup;
	for (size_t i = 0; i < nrows; i++) {
		const struct profile_row *row = profile__row_at(p, i);
		struct entry *e = &per_stack[row->stack];
		enum reason r = reasons__get(rs, row->stack, row->state);
		uint64_t rq = r == REASON_RUNQUEUE ? row->w.off_ns
			      : runq_known	   ? row->w.runq_ns
						   : 0;

		e->off += row->w.off_ns;
		e->runq += rq;
		e->blocked += row->w.off_ns - rq;
		e->count += row->w.count;
		/* A stack's reason is what its frames say, as in the report. */
		if (!seen[row->stack])
			e->reason = reasons__get(rs, row->stack, OFFCPU_STATE_UNKNOWN);
		seen[row->stack] = true;
	}
	for (size_t st = 0; st < nst; st++) {
		if (!seen[st])
			continue;
		err = add_profile_stack(s, p, (uint32_t)st, &per_stack[st]);
		if (err)
			goto cleanup;
	}
	err = -ENOMEM;
	for (size_t i = 0; i < b->nr_threads; i++) {
		const struct budget_entry *t = &b->threads[i];
		struct entry *e = push(&s->threads);

		if (!e || !(e->name = strdup(t->comm)))
			goto cleanup;
		e->off = t->off_ns;
		e->runq = t->rows_runq_ns;
		e->blocked = t->blocked_total_ns;
		e->count = t->count;
	}
	sort_merge(&s->stacks);
	sort_merge(&s->threads);
	s->off = b->total.off_ns;
	s->runq = b->total.rows_runq_ns;
	s->blocked = b->total.blocked_total_ns;
	s->count = b->total.count;
	s->wall = b->total.time_known ? b->total.wall_ns : 0;
	s->runq_known = runq_known;
	memcpy(s->reason_ns, b->total.blocked_ns, sizeof(s->reason_ns));
	s->reason_ns[REASON_RUNQUEUE] = b->total.rows_runq_ns;
	err = 0;
cleanup:
	budget__free(b);
	reasons__free(rs);
	free(seen);
	free(per_stack);
	if (err) {
		diff_side__free(s);
		errno = -err;
		return NULL;
	}
	return s;
}

/* ---- summaries ---- */

/* An entry's weights from a summary's; false when runq is null (the collector did not split). */
static bool read_weight(const struct summary_weight *sw, struct entry *e)
{
	e->off = sw->off_ns;
	e->count = sw->count;
	e->runq = sw->has_runq ? sw->runq_ns : 0;
	e->blocked = sw->blocked_ns;
	if (!sw->has_blocked || e->blocked > e->off)
		e->blocked = e->off - (e->runq <= e->off ? e->runq : e->off);
	return sw->has_runq;
}

static int add_summary_stack(struct diff_side *s, const struct profile *scratch,
			     const struct summary_stack *st)
{
	struct entry w = {0};
	int err;

	read_weight(&st->w, &w);
	/* The reason needs the rows' states, which a summary lacks: the stack alone decides. */
	w.reason = reasons__classify(scratch, st->stack, OFFCPU_STATE_UNKNOWN);
	if (w.reason == REASON_RUNQUEUE) {
		w.runq = w.off;
		w.blocked = 0;
	}
	err = add_profile_stack(s, scratch, st->stack, &w);
	if (!err)
		s->reason_ns[w.reason] += w.reason == REASON_RUNQUEUE ? w.off : w.blocked;
	return err;
}

int diff_side__read_summary(FILE *in, struct diff_side **out, char *why, size_t why_len)
{
	struct profile *scratch = profile__new();
	struct diff_side *s = calloc(1, sizeof(*s));
	struct summary_weights sw = {0};
	struct entry t = {0};
	int err = -ENOMEM;
	bool split;

	*out = NULL;
	if (!scratch || !s)
		goto cleanup;
	err = summary_json__read_weights(in, scratch, &sw, why, why_len);
	if (err)
		goto cleanup;
	split = read_weight(&sw.totals, &t);
	s->runq_known = split;
	s->off = t.off;
	s->blocked = t.blocked;
	s->runq = t.runq;
	s->count = t.count;
	s->reason_ns[REASON_RUNQUEUE] = 0;
	s->wall = sw.wall_ns;
	err = -ENOMEM;
	for (size_t i = 0; i < sw.nr_threads; i++) {
		struct entry *e = push(&s->threads);

		if (!e)
			goto cleanup;
		read_weight(&sw.threads[i].w, e);
		e->name = strdup(sw.threads[i].comm);
		if (!e->name)
			goto cleanup;
	}
	if (sw.has_stacks) {
		uint64_t covered = 0;

		for (size_t i = 0; i < sw.nr_stacks; i++) {
			err = add_summary_stack(s, scratch, &sw.stacks[i]);
			if (err)
				goto cleanup;
			covered += s->stacks.v[s->stacks.n - 1].off;
		}
		s->stacks_partial = covered < s->off;
	} else {
		s->stacks_partial = s->off > 0;
	}
	if (split) {
		/* Run-queue time is in the totals even when the stacks are only the top ones. */
		if (s->runq > s->reason_ns[REASON_RUNQUEUE])
			s->reason_ns[REASON_RUNQUEUE] = s->runq;
	} else if (s->reason_ns[REASON_RUNQUEUE] <= s->off) {
		/*
		 * As for a profile without the split: preempted stacks are run-queue
		 * time (here only those among the top stacks), the rest is blocked.
		 */
		s->runq = s->reason_ns[REASON_RUNQUEUE];
		s->blocked = s->off - s->runq;
	}
	sort_merge(&s->stacks);
	sort_merge(&s->threads);
	*out = s;
	s = NULL;
	err = 0;
cleanup:
	summary_weights__free(&sw);
	profile__free(scratch);
	diff_side__free(s);
	return err;
}

void diff_side__free(struct diff_side *s)
{
	if (!s)
		return;
	entries_free(&s->threads);
	entries_free(&s->stacks);
	free(s);
}

uint64_t diff_side__wall_ns(const struct diff_side *s)
{
	return s->wall;
}

void diff_side__set_wall_ns(struct diff_side *s, uint64_t wall_ns)
{
	s->wall = wall_ns;
}

bool diff_side__stacks_partial(const struct diff_side *s)
{
	return s->stacks_partial;
}

/* ---- the diff ---- */

const char *diff_norm__name(enum diff_norm n)
{
	return n == DIFF_NORM_TOTAL ? "total" : n == DIFF_NORM_WALL ? "wall" : "none";
}

static void value(struct diff_value *v, uint64_t base, uint64_t new, const struct diff *d)
{
	v->base = base;
	v->new = new;
	v->base_norm = d->base_denom > 0 ? (double)base / d->base_denom : 0;
	v->new_norm = d->new_denom > 0 ? (double)new / d->new_denom : 0;
}

/* Interval counts are normalized by the total count, or per second of wall time. */
static void count_value(struct diff_value *v, uint64_t base, uint64_t new, const struct diff *d)
{
	v->base = base;
	v->new = new;
	v->base_norm = d->base_count_denom > 0 ? (double)base / d->base_count_denom : 0;
	v->new_norm = d->new_count_denom > 0 ? (double)new / d->new_count_denom : 0;
}

double diff_value__delta(const struct diff *d, const struct diff_value *v)
{
	if (d->norm != DIFF_NORM_NONE)
		return v->new_norm - v->base_norm;
	return (double)v->new - (double)v->base;
}

double diff_value__rel(const struct diff *d, const struct diff_value *v)
{
	double b = d->norm != DIFF_NORM_NONE ? v->base_norm : (double)v->base;
	double n = d->norm != DIFF_NORM_NONE ? v->new_norm : (double)v->new;

	if (b == 0)
		return n == 0 ? 0 : INFINITY;
	return (n - b) / b;
}

static int fill_item(struct diff_item *it, const struct entry *b, const struct entry *n,
		     const struct diff *d)
{
	static const struct entry zero;
	const struct entry *bb = b ? b : &zero, *nn = n ? n : &zero;
	const struct entry *e = n ? n : b;

	/* The diff outlives its sides: it keeps its own copies of the names. */
	it->name = strdup(e->name);
	it->kinds = e->kinds ? strdup(e->kinds) : NULL;
	if (!it->name || (e->kinds && !it->kinds))
		return -ENOMEM;
	it->reason = (n ? n : b)->reason;
	it->only_base = !n;
	it->only_new = !b;
	value(&it->off, bb->off, nn->off, d);
	value(&it->blocked, bb->blocked, nn->blocked, d);
	value(&it->runq, bb->runq, nn->runq, d);
	count_value(&it->count, bb->count, nn->count, d);
	return 0;
}

/* Merge two sorted entry lists into items. */
static int merge(const struct entries *b, const struct entries *n, enum diff_item_kind kind,
		 const struct diff *d, struct diff_item **out, size_t *nout)
{
	struct diff_item *items = calloc(b->n + n->n + 1, sizeof(*items));
	size_t i = 0, j = 0, k = 0;
	int err = 0;

	if (!items)
		return -ENOMEM;
	/* Handed over first, so diff__free() frees what was copied even on error. */
	*out = items;
	while (!err && (i < b->n || j < n->n)) {
		int c = i == b->n ? 1 : j == n->n ? -1 : cmp_entry(&b->v[i], &n->v[j]);

		items[k].kind = kind;
		if (c < 0)
			err = fill_item(&items[k++], &b->v[i++], NULL, d);
		else if (c > 0)
			err = fill_item(&items[k++], NULL, &n->v[j++], d);
		else
			err = fill_item(&items[k++], &b->v[i++], &n->v[j++], d);
		*nout = k;
	}
	return err;
}

static int cmp_item(const void *a, const void *b, void *ctx)
{
	const struct diff_item *x = a, *y = b;
	double dx = fabs(diff_value__delta(ctx, &x->off));
	double dy = fabs(diff_value__delta(ctx, &y->off));
	int c;

	if (dx != dy)
		return dx > dy ? -1 : 1;
	c = strcmp(x->name, y->name);
	if (c || !x->kinds || !y->kinds)
		return c;
	return strcmp(x->kinds, y->kinds);
}

static void sort_items(const struct diff *d, struct diff_item *items, size_t n)
{
	qsort_r(items, n, sizeof(*items), cmp_item, (void *)d);
}

int diff__new(const struct diff_side *base, const struct diff_side *new, enum diff_norm norm,
	      struct diff **out)
{
	struct diff *d = calloc(1, sizeof(*d));
	int err = -ENOMEM;

	*out = NULL;
	if (!d)
		return -ENOMEM;
	d->norm = norm;
	if (norm == DIFF_NORM_TOTAL) {
		d->base_denom = (double)base->off;
		d->new_denom = (double)new->off;
		d->base_count_denom = (double)base->count;
		d->new_count_denom = (double)new->count;
	} else if (norm == DIFF_NORM_WALL) {
		if (!base->wall || !new->wall) {
			err = -EINVAL;
			goto cleanup;
		}
		d->base_denom = (double)base->wall;
		d->new_denom = (double)new->wall;
		d->base_count_denom = (double)base->wall / 1e9;
		d->new_count_denom = (double)new->wall / 1e9;
	}
	value(&d->off, base->off, new->off, d);
	value(&d->blocked, base->blocked, new->blocked, d);
	value(&d->runq, base->runq, new->runq, d);
	count_value(&d->count, base->count, new->count, d);
	d->stacks_partial = base->stacks_partial || new->stacks_partial;
	d->runq_known = base->runq_known && new->runq_known;

	d->reasons = calloc(REASON__COUNT, sizeof(*d->reasons));
	if (!d->reasons)
		goto cleanup;
	for (int r = 0; r < REASON__COUNT; r++) {
		struct diff_item *it = &d->reasons[d->nr_reasons];

		if (!base->reason_ns[r] && !new->reason_ns[r])
			continue;
		it->kind = DIFF_REASON;
		it->name = reason__name(r);
		it->reason = r;
		it->only_base = !new->reason_ns[r];
		it->only_new = !base->reason_ns[r];
		value(&it->off, base->reason_ns[r], new->reason_ns[r], d);
		if (r == REASON_RUNQUEUE)
			it->runq = it->off;
		else
			it->blocked = it->off;
		d->nr_reasons++;
	}
	err = merge(&base->threads, &new->threads, DIFF_THREAD, d, &d->threads, &d->nr_threads);
	if (!err)
		err = merge(&base->stacks, &new->stacks, DIFF_STACK, d, &d->stacks, &d->nr_stacks);
	if (err)
		goto cleanup;
	sort_items(d, d->reasons, d->nr_reasons);
	sort_items(d, d->threads, d->nr_threads);
	sort_items(d, d->stacks, d->nr_stacks);
	*out = d;
	return 0;
cleanup:
	diff__free(d);
	return err;
}

void diff__free(struct diff *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nr_threads; i++) {
		free((char *)d->threads[i].name);
		free((char *)d->threads[i].kinds);
	}
	for (size_t i = 0; i < d->nr_stacks; i++) {
		free((char *)d->stacks[i].name);
		free((char *)d->stacks[i].kinds);
	}
	free(d->reasons);
	free(d->threads);
	free(d->stacks);
	free(d);
}

/* ---- gates ---- */

static int gate_fail(char *why, size_t why_len, const char *expr, const char *what)
{
	snprintf(why, why_len, "--fail-on '%s': %s", expr, what);
	return -EINVAL;
}

int diff_gate__parse(const char *expr, struct diff_gate *g, char *why, size_t why_len)
{
	static const struct {
		const char *suffix;
		uint64_t ns;
	} units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}};
	const char *gt = strrchr(expr, '>'), *num;
	char metric[256], *end;
	double v;
	size_t mlen;

	memset(g, 0, sizeof(*g));
	snprintf(g->expr, sizeof(g->expr), "%s", expr);
	if (!gt)
		return gate_fail(why, why_len, expr,
				 "expected METRIC>+THRESHOLD, e.g. 'blocked>+10%'");
	mlen = (size_t)(gt - expr);
	if (mlen >= sizeof(metric))
		return gate_fail(why, why_len, expr, "metric too long");
	memcpy(metric, expr, mlen);
	metric[mlen] = '\0';
	if (!strcmp(metric, "blocked")) {
		g->metric = DIFF_METRIC_BLOCKED;
	} else if (!strcmp(metric, "runq")) {
		g->metric = DIFF_METRIC_RUNQ;
	} else if (!strcmp(metric, "off")) {
		g->metric = DIFF_METRIC_OFF;
	} else if (!strcmp(metric, "count")) {
		g->metric = DIFF_METRIC_COUNT;
	} else if (!strncmp(metric, "reason:", 7)) {
		g->metric = DIFF_METRIC_REASON;
		if (reason__parse(metric + 7, &g->reason))
			return gate_fail(
				why, why_len, expr,
				"unknown reason (lock, sleep, disk_io, network, poll, pipe, "
				"child, memory, runqueue, idle, other)");
	} else if (!strncmp(metric, "stack:", 6)) {
		char msg[128];
		int rc;

		g->metric = DIFF_METRIC_STACK;
		/*
		 * The regex may itself hold '>': the threshold starts at the last
		 * '>', and a regex with a later '>' is not one we can tell apart.
		 */
		rc = regcomp(&g->re, metric + 6, REG_EXTENDED | REG_NOSUB);
		if (rc) {
			regerror(rc, &g->re, msg, sizeof(msg));
			return gate_fail(why, why_len, expr, msg);
		}
		g->has_re = true;
	} else {
		return gate_fail(
			why, why_len, expr,
			"unknown metric (blocked, runq, off, count, reason:NAME, stack:REGEX)");
	}

	num = gt + 1;
	if (*num != '+') {
		diff_gate__free(g);
		return gate_fail(why, why_len, expr,
				 "the threshold is a growth and starts with '+'");
	}
	num++;
	errno = 0;
	v = strtod(num, &end);
	if (end == num || errno || !(v >= 0) || isinf(v)) {
		diff_gate__free(g);
		return gate_fail(why, why_len, expr, "the threshold is not a number");
	}
	if (!strcmp(end, "%")) {
		g->percent = true;
		g->pct = v;
		return 0;
	}
	if (!*end) {
		if (g->metric != DIFF_METRIC_COUNT) {
			diff_gate__free(g);
			return gate_fail(why, why_len, expr,
					 "a time threshold needs a unit: ns, us, ms or s");
		}
		g->abs = (uint64_t)v;
		return 0;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		if (g->metric == DIFF_METRIC_COUNT) {
			diff_gate__free(g);
			return gate_fail(why, why_len, expr, "count takes +N or +N%, not a time");
		}
		if (v * (double)units[i].ns >= 18446744073709551615.0) {
			diff_gate__free(g);
			return gate_fail(why, why_len, expr, "the threshold is too large");
		}
		g->abs = (uint64_t)(v * (double)units[i].ns + 0.5);
		return 0;
	}
	diff_gate__free(g);
	return gate_fail(why, why_len, expr, "unknown unit (%, ns, us, ms, s)");
}

void diff_gate__free(struct diff_gate *g)
{
	if (g && g->has_re) {
		regfree(&g->re);
		g->has_re = false;
	}
}

void diff_gate__eval(const struct diff_gate *g, const struct diff *d, struct diff_gate_result *r)
{
	memset(r, 0, sizeof(*r));
	switch (g->metric) {
	case DIFF_METRIC_BLOCKED:
		r->v = d->blocked;
		break;
	case DIFF_METRIC_RUNQ:
		r->v = d->runq;
		break;
	case DIFF_METRIC_OFF:
		r->v = d->off;
		break;
	case DIFF_METRIC_COUNT:
		r->v = d->count;
		break;
	case DIFF_METRIC_REASON:
		for (size_t i = 0; i < d->nr_reasons; i++)
			if (d->reasons[i].reason == g->reason)
				r->v = d->reasons[i].off;
		break;
	case DIFF_METRIC_STACK:
		for (size_t i = 0; i < d->nr_stacks; i++) {
			const struct diff_item *it = &d->stacks[i];

			if (regexec(&g->re, it->name, 0, NULL, 0))
				continue;
			r->matched_stacks++;
			r->v.base += it->blocked.base;
			r->v.new += it->blocked.new;
			r->v.base_norm += it->blocked.base_norm;
			r->v.new_norm += it->blocked.new_norm;
		}
		break;
	}
	if (g->percent) {
		double b = d->norm != DIFF_NORM_NONE ? r->v.base_norm : (double)r->v.base;
		double n = d->norm != DIFF_NORM_NONE ? r->v.new_norm : (double)r->v.new;

		r->crossed = b == 0 ? n > 0 : n > b * (1.0 + g->pct / 100.0);
	} else {
		r->crossed = r->v.new > r->v.base && r->v.new - r->v.base > g->abs;
	}
}
