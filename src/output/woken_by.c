// SPDX-License-Identifier: GPL-2.0-only
/*
 * The "Woken by" section (woken_by.h): the timeline's waits summed by waker,
 * by sorting the intervals' (waker, time) pairs and merging equal wakers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/term.h"
#include "output/woken_by.h"

struct woken_row {
	int pid, tid;
	uint32_t irq; /* timeline__irq() id; 0: a thread */
	uint64_t off_ns, blocked_ns, count;
	char name[64];
};

struct woken_by {
	struct woken_row *rows; /* by off_ns, largest first */
	size_t nr;
	struct woken_row unknown;
	uint64_t off_ns, count, min_ns;
};

static int cmp_key(const void *a, const void *b)
{
	const struct woken_row *x = a, *y = b;

	if (x->irq != y->irq)
		return x->irq < y->irq ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int cmp_off(const void *a, const void *b)
{
	const struct woken_row *x = a, *y = b;

	if (x->off_ns != y->off_ns)
		return x->off_ns > y->off_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* A waker thread's name and pid, from the profile's threads. */
static void name_thread(const struct profile *p, struct woken_row *r)
{
	for (size_t i = 0; i < profile__nr_threads(p); i++) {
		const struct profile_thread *th = profile__thread_at(p, (uint32_t)i);

		if (th->tid == r->tid) {
			r->pid = th->pid;
			if (*th->comm) {
				snprintf(r->name, sizeof(r->name), "%s %d", th->comm, r->tid);
				return;
			}
		}
	}
	snprintf(r->name, sizeof(r->name), "tid %d", r->tid);
}

struct woken_by *woken_by__new(const struct profile *p, const struct timeline *t)
{
	struct woken_by *wb = calloc(1, sizeof(*wb));
	size_t n = 0, out = 0;
	struct woken_row *v;

	if (!wb)
		return NULL;
	wb->min_ns = timeline__info(t)->min_ns;
	snprintf(wb->unknown.name, sizeof(wb->unknown.name), "(unknown)");
	v = calloc(timeline__nr(t) + 1, sizeof(*v));
	if (!v) {
		free(wb);
		return NULL;
	}
	for (size_t i = 0; i < timeline__nr(t); i++) {
		const struct timeline_interval *iv = timeline__at(t, i);
		struct woken_row *r = &v[n];

		if (iv->state == OFFCPU_STATE_PREEMPT)
			continue;
		wb->off_ns += iv->dur_ns;
		wb->count++;
		if (!iv->waker_irq && iv->waker_tid <= 0) {
			wb->unknown.off_ns += iv->dur_ns;
			wb->unknown.blocked_ns += iv->dur_ns - iv->runq_ns;
			wb->unknown.count++;
			continue;
		}
		r->irq = iv->waker_irq;
		r->tid = iv->waker_irq ? 0 : iv->waker_tid;
		r->off_ns = iv->dur_ns;
		r->blocked_ns = iv->dur_ns - iv->runq_ns;
		r->count = 1;
		n++;
	}
	qsort(v, n, sizeof(*v), cmp_key);
	for (size_t i = 0; i < n; i++) {
		if (out && !cmp_key(&v[out - 1], &v[i])) {
			v[out - 1].off_ns += v[i].off_ns;
			v[out - 1].blocked_ns += v[i].blocked_ns;
			v[out - 1].count += v[i].count;
			continue;
		}
		v[out++] = v[i];
	}
	for (size_t i = 0; i < out; i++) {
		if (v[i].irq)
			snprintf(v[i].name, sizeof(v[i].name), "%s",
				 timeline__irq_name(t, v[i].irq));
		else
			name_thread(p, &v[i]);
	}
	qsort(v, out, sizeof(*v), cmp_off);
	wb->rows = v;
	wb->nr = out;
	return wb;
}

void woken_by__free(struct woken_by *wb)
{
	if (!wb)
		return;
	free(wb->rows);
	free(wb);
}

static double frac(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0;
}

static void text_row(const struct woken_by *wb, const struct woken_row *r, FILE *out, int width,
		     bool color)
{
	char t[16], pct[16], n[48];
	struct term_line l;

	term_line__begin(&l, out, width, color);
	term_line__text(&l, "  ", -1);
	term_line__left_in(&l, r->name, 24);
	term_line__right(&l, term__ns(r->off_ns, t, sizeof(t)), 8);
	term_line__right(&l, term__pct(frac(r->off_ns, wb->off_ns), pct, sizeof(pct)), 8);
	term_line__text(&l, "  ", -1);
	term_line__text(&l, term__count(r->count, "wait", "waits", n, sizeof(n)), -1);
	term_line__end(&l);
}

void woken_by__write_text(const struct woken_by *wb, FILE *out, int width, bool color, int top)
{
	char title[160], t[16], min[16], n[48];
	struct term_line l;
	size_t shown;
	uint64_t rest = 0;

	if (!wb)
		return;
	if (top <= 0)
		top = 10;
	if (wb->min_ns)
		snprintf(title, sizeof(title), "Woken by (the timeline's %s of at least %s: %s)",
			 term__count(wb->count, "wait", "waits", n, sizeof(n)),
			 term__ns(wb->min_ns, min, sizeof(min)),
			 term__ns(wb->off_ns, t, sizeof(t)));
	else
		snprintf(title, sizeof(title), "Woken by (the timeline's %s: %s)",
			 term__count(wb->count, "wait", "waits", n, sizeof(n)),
			 term__ns(wb->off_ns, t, sizeof(t)));
	fputc('\n', out);
	term_line__begin(&l, out, width, color);
	term_line__color(&l, "1");
	term_line__text(&l, title, -1);
	term_line__end(&l);
	shown = wb->nr < (size_t)top ? wb->nr : (size_t)top;
	for (size_t i = 0; i < shown; i++)
		text_row(wb, &wb->rows[i], out, width, color);
	if (wb->unknown.count)
		text_row(wb, &wb->unknown, out, width, color);
	for (size_t i = shown; i < wb->nr; i++)
		rest += wb->rows[i].off_ns;
	if (shown < wb->nr) {
		snprintf(title, sizeof(title), "  (%zu more wakers: %s)", wb->nr - shown,
			 term__ns(rest, t, sizeof(t)));
		term_line__begin(&l, out, width, color);
		term_line__text(&l, title, -1);
		term_line__end(&l);
	}
	if (!wb->count) {
		term_line__begin(&l, out, width, color);
		term_line__text(&l, "  (no waits in the timeline)", -1);
		term_line__end(&l);
	}
}

static void json_sums(const struct woken_by *wb, struct jw *w, const struct woken_row *r)
{
	jw_u64_field(w, "off_ns", r->off_ns);
	jw_u64_field(w, "blocked_ns", r->blocked_ns);
	jw_u64_field(w, "count", r->count);
	jw_double_field(w, "share", frac(r->off_ns, wb->off_ns), 4);
}

void woken_by__write_json(const struct woken_by *wb, struct jw *w, const char *key)
{
	jw_key(w, key);
	if (!wb) {
		jw_null(w);
		return;
	}
	jw_object_begin(w);
	jw_u64_field(w, "min_ns", wb->min_ns);
	jw_u64_field(w, "waits", wb->count);
	jw_u64_field(w, "off_ns", wb->off_ns);
	jw_array_field(w, "wakers");
	for (size_t i = 0; i < wb->nr; i++) {
		const struct woken_row *r = &wb->rows[i];

		jw_object_begin(w);
		jw_str_field(w, "kind", r->irq ? "interrupt" : "thread");
		jw_str_field(w, "name", r->name);
		if (!r->irq) {
			jw_i64_field(w, "pid", r->pid);
			jw_i64_field(w, "tid", r->tid);
		}
		json_sums(wb, w, r);
		jw_object_end(w);
	}
	jw_array_end(w);
	jw_object_field(w, "unknown");
	json_sums(wb, w, &wb->unknown);
	jw_object_end(w);
	jw_object_end(w);
}
