// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "output/diff_report.h"
#include "output/term.h"
#include "util/json_writer.h"

#define KEY_FRAMES 3
#define COLS (10 + 10 + 10 + 9) /* base, new, change, relative change */

struct ctx {
	FILE *out;
	const struct diff *d;
	struct diff_report_opts o;
};

/* A value (time or intervals) as the diff's normalization shows it. */
static char *fmt_value(const struct ctx *c, uint64_t raw, double norm, bool time, char *buf,
		       size_t size)
{
	if (c->d->norm == DIFF_NORM_TOTAL)
		return term__pct(norm, buf, size);
	if (c->d->norm == DIFF_NORM_WALL) {
		snprintf(buf, size, time ? "%.3f" : "%.1f/s", norm);
		return buf;
	}
	if (time)
		return term__ns(raw, buf, size);
	snprintf(buf, size, "%llu", (unsigned long long)raw);
	return buf;
}

static char *fmt_delta(const struct ctx *c, const struct diff_value *v, bool time, char *buf,
		       size_t size)
{
	double dn = v->new_norm - v->base_norm;

	if (c->d->norm == DIFF_NORM_TOTAL) {
		snprintf(buf, size, "%+.1fpp", dn * 100.0);
		return buf;
	}
	if (c->d->norm == DIFF_NORM_WALL) {
		snprintf(buf, size, time ? "%+.3f" : "%+.1f/s", dn);
		return buf;
	}
	if (time)
		return term__ns_delta(v->base, v->new, buf, size);
	if (v->new == v->base)
		snprintf(buf, size, "0");
	else
		snprintf(buf, size, "%+lld", (long long)v->new - (long long)v->base);
	return buf;
}

static char *fmt_rel(const struct ctx *c, const struct diff_value *v, char *buf, size_t size)
{
	double r = diff_value__rel(c->d, v);

	if (isinf(r))
		snprintf(buf, size, "new");
	else if (r == 0)
		snprintf(buf, size, "0%%");
	else if (fabs(r) >= 10)
		snprintf(buf, size, "%+.0fx", r + 1);
	else
		snprintf(buf, size, "%+.1f%%", r * 100.0);
	return buf;
}

/* Red when worse, green when better. */
static const char *delta_color(const struct ctx *c, const struct diff_value *v)
{
	double d = diff_value__delta(c->d, v);

	return d > 0 ? "31" : d < 0 ? "32" : NULL;
}

static void row(const struct ctx *c, const char *name, const struct diff_value *v, bool time,
		const char *name_color)
{
	struct term_line l;
	char b[24], n[24], dl[24], r[24];

	term_line__begin(&l, c->out, c->o.width, c->o.color);
	term_line__text(&l, "  ", -1);
	term_line__color(&l, name_color);
	term_line__left_in(&l, name, c->o.width - COLS - 2);
	term_line__color(&l, NULL);
	term_line__right(&l, fmt_value(c, v->base, v->base_norm, time, b, sizeof(b)), 10);
	term_line__right(&l, fmt_value(c, v->new, v->new_norm, time, n, sizeof(n)), 10);
	term_line__color(&l, delta_color(c, v));
	term_line__right(&l, fmt_delta(c, v, time, dl, sizeof(dl)), 10);
	term_line__right(&l, fmt_rel(c, v, r, sizeof(r)), 9);
	term_line__end(&l);
}

static void heading(const struct ctx *c, const char *title, bool columns)
{
	struct term_line l;

	term_line__begin(&l, c->out, c->o.width, c->o.color);
	term_line__color(&l, "1");
	if (columns)
		term_line__left_in(&l, title, c->o.width - COLS);
	else
		term_line__text(&l, title, -1);
	term_line__color(&l, NULL);
	if (columns) {
		term_line__color(&l, "2");
		term_line__right(&l, "base", 10);
		term_line__right(&l, "new", 10);
		term_line__right(&l, "change", 10);
		term_line__right(&l, "rel", 9);
	}
	term_line__end(&l);
}

/* Split a stack item's name into frames (pointers into buf). */
static size_t split_frames(const struct diff_item *it, char *buf, size_t size, char **names,
			   size_t max)
{
	size_t n = 0;

	snprintf(buf, size, "%s", it->name);
	for (char *s = buf; n < max;) {
		char *semi = strchr(s, ';');

		names[n++] = s;
		if (!semi)
			break;
		*semi = '\0';
		s = semi + 1;
	}
	if (!*it->kinds)
		return 0;
	return n;
}

static enum frame_kind kind_of(char k)
{
	enum frame_kind kind;

	return frame_kind__from_letter(k, &kind) ? FRAME_USER : kind;
}

static void frames_line(const struct ctx *c, const char *label, char **names, const char *kinds,
			const size_t *idx, size_t n)
{
	const char *sel[KEY_FRAMES], *suffix[KEY_FRAMES];

	for (size_t i = 0; i < n && i < KEY_FRAMES; i++) {
		sel[i] = names[idx[i]];
		suffix[i] = kind_of(kinds[idx[i]]) == FRAME_INLINE ? " (inlined)" : NULL;
	}
	term__frames(c->out, c->o.width, c->o.color, label, sel, suffix, n);
}

static void stack_frames(const struct ctx *c, const struct diff_item *it)
{
	static char buf[65536];
	char *names[1024];
	size_t n = split_frames(it, buf, sizeof(buf), names, 1024), from;
	size_t kidx[KEY_FRAMES], uidx[KEY_FRAMES], nk = 0, nu = 0;
	enum reason r;

	/* A name holding ';' splits into more pieces than there are kinds. */
	if (n > strlen(it->kinds))
		n = strlen(it->kinds);
	from = n;
	/* As in the report: kernel frames from the one that decided the reason. */
	for (int pass = 0; pass < 2 && from == n; pass++)
		for (size_t i = n; i-- > 0;)
			if (it->kinds[i] == 'k' &&
			    reasons__frame(FRAME_KERNEL, names[i], &r) ==
				    (pass ? REASON_BY_GENERIC : REASON_BY_SPECIFIC)) {
				from = i + 1;
				break;
			}
	for (size_t i = from; i-- > 0 && nk < KEY_FRAMES;)
		if (it->kinds[i] == 'k' && !reasons__is_plumbing(names[i]))
			kidx[nk++] = i;
	for (size_t i = n; i-- > 0 && nu < KEY_FRAMES;)
		if (kind_of(it->kinds[i]) != FRAME_KERNEL)
			uidx[nu++] = i;
	if (nk)
		frames_line(c, "kernel: ", names, it->kinds, kidx, nk);
	if (nu)
		frames_line(c, "user:   ", names, it->kinds, uidx, nu);
}

/*
 * A stack's off-CPU time split as the reason table splits it: blocked (what
 * reason:NAME and stack:REGEX gates measure) and run queue. Left out when
 * one part is all of it on both sides (no run-queue time, or a preempted
 * stack: its reason says so), or when a side's collector did not split.
 */
static void stack_split(const struct ctx *c, const struct diff_item *it)
{
	if (!c->d->runq_known || (!it->runq.base && !it->runq.new) ||
	    (!it->blocked.base && !it->blocked.new))
		return;
	row(c, "    blocked", &it->blocked, true, "2");
	row(c, "    run queue", &it->runq, true, "2");
}

static void write_text(const struct ctx *c, const struct diff_gate *gates,
		       const struct diff_gate_result *res, size_t ng)
{
	const struct diff *d = c->d;
	size_t top = (size_t)c->o.top;
	struct term_line l;
	char line[512];

	snprintf(line, sizeof(line), "offcpu diff: %s -> %s", c->o.base_label, c->o.new_label);
	term_line__begin(&l, c->out, c->o.width, c->o.color);
	term_line__text(&l, line, -1);
	term_line__end(&l);
	if (d->norm != DIFF_NORM_NONE) {
		term_line__begin(&l, c->out, c->o.width, c->o.color);
		term_line__text(&l,
				d->norm == DIFF_NORM_TOTAL
					? "values are shares of each side's total off-CPU time"
					: "values are seconds off-CPU per second of wall time",
				-1);
		term_line__end(&l);
	}
	if (!d->runq_known) {
		term_line__begin(&l, c->out, c->o.width, c->o.color);
		term_line__text(&l,
				"(no run-queue split in a side's collector: only preempted stacks "
				"count as run queue)",
				-1);
		term_line__end(&l);
	}
	if (d->stacks_partial) {
		term_line__begin(&l, c->out, c->o.width, c->o.color);
		term_line__color(&l, "33");
		term_line__text(&l,
				"a summary lists only its top stacks: stacks and reasons cover "
				"part of the time",
				-1);
		term_line__end(&l);
	}
	fputc('\n', c->out);
	heading(c, "Totals", true);
	row(c, "off-CPU", &d->off, true, NULL);
	row(c, "blocked", &d->blocked, true, NULL);
	row(c, "run queue", &d->runq, true, NULL);
	row(c, "intervals", &d->count, false, NULL);
	fputc('\n', c->out);

	heading(c, "By reason", true);
	for (size_t i = 0; i < d->nr_reasons; i++)
		row(c, d->reasons[i].name, &d->reasons[i].off, true,
		    term__reason_color(d->reasons[i].reason));
	fputc('\n', c->out);

	heading(c, "Threads (by comm)", true);
	for (size_t i = 0; i < d->nr_threads && i < top; i++)
		row(c, d->threads[i].name, &d->threads[i].off, true, NULL);
	if (d->nr_threads > top) {
		snprintf(line, sizeof(line), "  (%zu more)", d->nr_threads - top);
		term_line__begin(&l, c->out, c->o.width, c->o.color);
		term_line__text(&l, line, -1);
		term_line__end(&l);
	}
	fputc('\n', c->out);

	heading(c, "Stacks (largest change first)", true);
	for (size_t i = 0; i < d->nr_stacks && i < top; i++) {
		const struct diff_item *it = &d->stacks[i];

		snprintf(line, sizeof(line), "%zu %s%s", i + 1, reason__name(it->reason),
			 it->only_new	 ? " (new)"
			 : it->only_base ? " (gone)"
					 : "");
		row(c, line, &it->off, true, term__reason_color(it->reason));
		stack_split(c, it);
		stack_frames(c, it);
	}
	if (d->nr_stacks > top) {
		snprintf(line, sizeof(line), "  (%zu more)", d->nr_stacks - top);
		term_line__begin(&l, c->out, c->o.width, c->o.color);
		term_line__text(&l, line, -1);
		term_line__end(&l);
	}
	if (!ng)
		return;
	fputc('\n', c->out);
	heading(c, "Gates", false);
	for (size_t i = 0; i < ng; i++) {
		char b[24], n[24], r[24];
		bool time = gates[i].metric != DIFF_METRIC_COUNT;

		term_line__begin(&l, c->out, c->o.width, c->o.color);
		term_line__color(&l, res[i].crossed ? "1;31" : "32");
		term_line__text(&l, res[i].crossed ? "  FAIL " : "  ok   ", -1);
		term_line__color(&l, NULL);
		snprintf(line, sizeof(line), "%s: %s -> %s (%s)", gates[i].expr,
			 fmt_value(c, res[i].v.base, res[i].v.base_norm, time, b, sizeof(b)),
			 fmt_value(c, res[i].v.new, res[i].v.new_norm, time, n, sizeof(n)),
			 fmt_rel(c, &res[i].v, r, sizeof(r)));
		term_line__text(&l, line, -1);
		if (gates[i].metric == DIFF_METRIC_STACK && !res[i].matched_stacks)
			term_line__text(&l, "  no stack matched", -1);
		term_line__end(&l);
	}
}

static void json_value(struct jw *w, const struct ctx *c, const char *key,
		       const struct diff_value *v)
{
	double rel = diff_value__rel(c->d, v);

	jw_object_field(w, key);
	jw_u64_field(w, "base", v->base);
	jw_u64_field(w, "new", v->new);
	jw_i64_field(w, "delta", (int64_t)(v->new - v->base));
	jw_key(w, "rel");
	if (isinf(rel))
		jw_null(w);
	else
		jw_double(w, rel, 4);
	if (c->d->norm != DIFF_NORM_NONE) {
		jw_double_field(w, "base_norm", v->base_norm, 6);
		jw_double_field(w, "new_norm", v->new_norm, 6);
	}
	jw_object_end(w);
}

static void json_item(struct jw *w, const struct ctx *c, const struct diff_item *it)
{
	jw_object_begin(w);
	if (it->kind == DIFF_STACK) {
		static char buf[65536];
		char *names[1024];
		size_t n = split_frames(it, buf, sizeof(buf), names, 1024);

		jw_array_field(w, "frames");
		for (size_t i = 0; i < n && it->kinds[i]; i++) {
			const char *kind = frame_kind__name(kind_of(it->kinds[i]));

			jw_object_begin(w);
			jw_str_field(w, "name", names[i]);
			jw_str_field(w, "kind", kind);
			jw_object_end(w);
		}
		jw_array_end(w);
		jw_str_field(w, "reason", reason__name(it->reason));
	} else {
		jw_str_field(w, "comm", it->name);
	}
	json_value(w, c, "off", &it->off);
	json_value(w, c, "blocked", &it->blocked);
	json_value(w, c, "runq", &it->runq);
	json_value(w, c, "count", &it->count);
	jw_bool_field(w, "only_base", it->only_base);
	jw_bool_field(w, "only_new", it->only_new);
	jw_object_end(w);
}

static int write_json(const struct ctx *c, const struct diff_gate *gates,
		      const struct diff_gate_result *res, size_t ng)
{
	const struct diff *d = c->d;
	struct jw w;

	jw_init(&w, c->out, false);
	jw_object_begin(&w);
	jw_str_field(&w, "base", c->o.base_label);
	jw_str_field(&w, "new", c->o.new_label);
	jw_str_field(&w, "normalize", diff_norm__name(d->norm));
	jw_bool_field(&w, "stacks_partial", d->stacks_partial);
	jw_bool_field(&w, "runq_known", d->runq_known);
	jw_object_field(&w, "totals");
	json_value(&w, c, "off", &d->off);
	json_value(&w, c, "blocked", &d->blocked);
	json_value(&w, c, "runq", &d->runq);
	json_value(&w, c, "count", &d->count);
	jw_object_end(&w);
	jw_array_field(&w, "reasons");
	for (size_t i = 0; i < d->nr_reasons; i++) {
		jw_object_begin(&w);
		jw_str_field(&w, "reason", d->reasons[i].name);
		json_value(&w, c, "off", &d->reasons[i].off);
		jw_object_end(&w);
	}
	jw_array_end(&w);
	jw_array_field(&w, "threads");
	for (size_t i = 0; i < d->nr_threads; i++)
		json_item(&w, c, &d->threads[i]);
	jw_array_end(&w);
	jw_array_field(&w, "stacks");
	for (size_t i = 0; i < d->nr_stacks; i++)
		json_item(&w, c, &d->stacks[i]);
	jw_array_end(&w);
	jw_array_field(&w, "gates");
	for (size_t i = 0; i < ng; i++) {
		jw_object_begin(&w);
		jw_str_field(&w, "expr", gates[i].expr);
		jw_bool_field(&w, "crossed", res[i].crossed);
		jw_u64_field(&w, "base", res[i].v.base);
		jw_u64_field(&w, "new", res[i].v.new);
		jw_u64_field(&w, "matched_stacks", res[i].matched_stacks);
		jw_object_end(&w);
	}
	jw_array_end(&w);
	jw_object_end(&w);
	return jw_finish(&w);
}

int diff_report__write(FILE *out, const struct diff *d, const struct diff_gate *gates,
		       const struct diff_gate_result *results, size_t nr_gates,
		       const struct diff_report_opts *o)
{
	struct ctx c = {.out = out, .d = d};
	int err = 0;

	if (o)
		c.o = *o;
	if (!c.o.width)
		c.o.width = 80;
	if (c.o.width < 40)
		c.o.width = 40;
	if (c.o.top <= 0)
		c.o.top = 10;
	if (!c.o.base_label)
		c.o.base_label = "base";
	if (!c.o.new_label)
		c.o.new_label = "new";
	if (c.o.json)
		err = write_json(&c, gates, results, nr_gates);
	else
		write_text(&c, gates, results, nr_gates);
	if (!err && (fflush(out) || ferror(out)))
		err = -EIO;
	return err;
}
