// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/budget.h"
#include "analyze/procgroups.h"
#include "analyze/reasons.h"
#include "output/completeness_json.h"
#include "output/integrity_json.h"
#include "output/report.h"
#include "output/term.h"
#include "output/woken_by.h"
#include "util/json_writer.h"

#define KEY_FRAMES 3
/* Threads named on a stack line that merges several: the text line, the JSON. */
#define WHO_TEXT 2
#define WHO_JSON 5

/* One of the top stacks, with the split the budget uses. */
struct top_stack {
	uint32_t stack;
	uint32_t thread;
	uint64_t off_ns, runq_ns, count;
	/* What the stack's frames say (analyze/reasons.h): the reason of its blocked time. */
	enum reason reason;
	const char *detail;
	double share;
	/* The threads on it (model/profile.h): how many, and the heaviest WHO_JSON. */
	const struct profile_stack_threads *who;
};

struct ctx {
	FILE *out;
	const struct profile *p;
	const struct integrity *in;
	struct report_opts o;
	struct budget *b;
	struct proc_groups *groups;
	struct completeness *comp;
	struct top_stack *top;
	size_t nr_top, nr_stacks;
	struct profile_stack_threads *who; /* one per top stack */
	struct reason_detail_sum *details; /* by reason, then time */
	size_t nr_details;
	uint64_t total_off;
	struct woken_by *woken; /* with a timeline */
};

static double frac(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

void report__key_frames(const struct profile *p, uint32_t stack, size_t max, size_t *kernel,
			size_t *nk, size_t *user, size_t *nu)
{
	size_t n = 0, from;
	const uint32_t *frames = profile__stack_at(p, stack, &n);
	struct reason_match m;

	*nk = *nu = 0;
	if (!frames)
		return;
	/*
	 * Kernel frames start at the one that decided the reason (a wait
	 * primitive inside it, like io_schedule, says less), else at the leaf.
	 */
	reasons__explain(p, stack, OFFCPU_STATE_UNKNOWN, &m);
	from = n;
	if (m.frame >= 0 && (m.step == REASON_BY_SPECIFIC || m.step == REASON_BY_GENERIC))
		from = (size_t)m.frame + 1;
	for (size_t i = from; i-- > 0 && *nk < max;) {
		const struct profile_frame *f = profile__frame_at(p, frames[i]);

		if (f->kind == FRAME_KERNEL && !reasons__is_plumbing(f->name))
			kernel[(*nk)++] = i;
		else if (f->kind == FRAME_MISSING && i + 1 < n &&
			 profile__frame_at(p, frames[i + 1])->kind != FRAME_KERNEL)
			kernel[(*nk)++] = i; /* "[Missed Kernel Stack]" after the user frames */
	}
	/* User frames start at the one a rule matched (ProcSleep, not libc's wait under it). */
	from = m.step == REASON_BY_RULE && m.frame >= 0 ? (size_t)m.frame + 1 : n;
	for (size_t i = from; i-- > 0 && *nu < max;) {
		const struct profile_frame *f = profile__frame_at(p, frames[i]);

		if (frame_kind__is_user(f->kind))
			user[(*nu)++] = i;
		else if (f->kind == FRAME_MISSING &&
			 (i + 1 == n || profile__frame_at(p, frames[i + 1])->kind == FRAME_KERNEL))
			user[(*nu)++] =
				i; /* "[Missed User Stack]" where the user frames would be */
	}
}

static int compute_top(struct ctx *c)
{
	struct profile_stack_sum *ss = NULL;
	struct reasons *rs = NULL;
	int32_t *slot = NULL;
	uint32_t *ids = NULL;
	size_t n = 0, nst = profile__nr_stacks(c->p);
	bool runq_known = profile__runq_known(c->p);
	int err;

	err = profile__sum_by_stack(c->p, &ss, &n);
	if (err)
		return err;
	err = -ENOMEM;
	c->nr_stacks = n;
	c->nr_top = n < (size_t)c->o.top ? n : (size_t)c->o.top;
	c->top = calloc(c->nr_top ? c->nr_top : 1, sizeof(*c->top));
	slot = malloc((nst ? nst : 1) * sizeof(*slot));
	ids = malloc((c->nr_top ? c->nr_top : 1) * sizeof(*ids));
	rs = reasons__new(c->p);
	if (!c->top || !slot || !ids || !rs)
		goto cleanup;
	for (size_t s = 0; s < nst; s++)
		slot[s] = -1;
	for (size_t i = 0; i < c->nr_top; i++) {
		c->top[i].stack = ss[i].stack;
		c->top[i].thread = ss[i].thread;
		c->top[i].off_ns = ss[i].w.off_ns;
		c->top[i].count = ss[i].w.count;
		c->top[i].share = frac(ss[i].w.off_ns, c->total_off);
		slot[ss[i].stack] = (int32_t)i;
		ids[i] = ss[i].stack;
	}
	err = profile__stack_threads(c->p, ids, c->nr_top, WHO_JSON, &c->who);
	if (err)
		goto cleanup;
	err = -ENOMEM;
	for (size_t i = 0; i < c->nr_top; i++)
		c->top[i].who = &c->who[i];
	for (size_t i = 0; i < profile__nr_rows(c->p); i++) {
		const struct profile_row *row = profile__row_at(c->p, i);
		struct top_stack *t;
		enum reason r;

		if (slot[row->stack] < 0)
			continue;
		t = &c->top[slot[row->stack]];
		r = reasons__get(rs, row->stack, row->state);
		t->runq_ns += r == REASON_RUNQUEUE ? row->w.off_ns
			      : runq_known	   ? row->w.runq_ns
						   : 0;
	}
	for (size_t i = 0; i < c->nr_top; i++)
		c->top[i].reason = reasons__get_detail(rs, c->top[i].stack, OFFCPU_STATE_UNKNOWN,
						       &c->top[i].detail);
	err = 0;
cleanup:
	reasons__free(rs);
	free(ids);
	free(slot);
	free(ss);
	return err;
}

/* ---- text ---- */

static void banner_line(struct ctx *c, const char *color, const char *text)
{
	struct term_line l;

	term_line__begin(&l, c->out, c->o.width, c->o.color);
	term_line__color(&l, color);
	term_line__text(&l, text, -1);
	term_line__end(&l);
}

/* "PREFIXname: count (time off-CPU affected)SUFFIX" */
static void loss_text(const struct integrity_loss *ls, const char *prefix, const char *suffix,
		      char *line, size_t size)
{
	char t[32];

	if (ls->affected_ns)
		snprintf(line, size, "%s%s: %llu (%s off-CPU affected)%s", prefix, ls->name,
			 (unsigned long long)ls->count, term__ns(ls->affected_ns, t, sizeof(t)),
			 suffix);
	else
		snprintf(line, size, "%s%s: %llu%s", prefix, ls->name,
			 (unsigned long long)ls->count, suffix);
}

/*
 * The real losses of a partial capture, each once: those that change the
 * answer (all of them when none is marked, as in a summary from before the
 * threshold), then the others, marked as below it.
 */
static void banner_losses(struct ctx *c)
{
	const struct integrity *in = c->in;
	size_t shown = 0, nonzero = 0, marked = 0;
	char line[192];

	for (size_t i = 0; i < in->nr_losses; i++)
		marked += in->losses[i].significant;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < in->nr_losses; i++) {
			const struct integrity_loss *ls = &in->losses[i];
			bool big = !marked || ls->significant;

			if (!ls->count || integrity__class(ls->name) != INTEGRITY_LOSS ||
			    big != !pass)
				continue;
			nonzero++;
			if (shown == 6)
				continue;
			shown++;
			loss_text(ls, "!!   ", big ? "" : " (below the threshold)", line,
				  sizeof(line));
			banner_line(c, big ? "31" : NULL, line);
		}
	}
	if (nonzero > shown) {
		snprintf(line, sizeof(line), "!!   and %zu more losses (--json lists all)",
			 nonzero - shown);
		banner_line(c, NULL, line);
	}
}

/*
 * What is not a loss, said once, plainly: the waits in progress at the
 * window's edges (counted within it), an interrupt, and in a complete capture
 * the losses too small to change an answer.
 */
static bool banner_notes(struct ctx *c)
{
	const struct integrity *in = c->in;
	const struct integrity_loss *a = integrity__loss(in, "inflight_at_start");
	const struct integrity_loss *z = integrity__loss(in, "inflight_at_stop");
	const struct integrity_loss *intr = integrity__loss(in, "interrupted");
	const struct integrity_loss *nr = integrity__loss(in, "threads_never_ran");
	uint64_t n, ns, both = nr ? nr->count : 0, both_ns = nr ? nr->affected_ns : 0;
	char line[256], t[32], w[48];
	bool any = false;

	integrity__sum(in, INTEGRITY_EDGE, &n, &ns);
	if (n) {
		/* A wait through the whole window is at both edges: count it and its time once. */
		uint64_t at_a = (a ? a->count : 0) - both, at_z = (z ? z->count : 0) - both;
		size_t used = (size_t)snprintf(line, sizeof(line), "edges:");

		if (at_a)
			used += snprintf(line + used, sizeof(line) - used, " %s at start",
					 term__count(at_a, "wait", "waits", w, sizeof(w)));
		if (at_z && used < sizeof(line))
			used += snprintf(line + used, sizeof(line) - used, "%s %s at stop",
					 at_a ? "," : "",
					 term__count(at_z, at_a ? "" : "wait", at_a ? "" : "waits",
						     w, sizeof(w)));
		if (both && used < sizeof(line))
			used += snprintf(line + used, sizeof(line) - used, "%s %s the whole window",
					 at_a || at_z ? "," : "",
					 term__count(both, at_a || at_z ? "" : "wait",
						     at_a || at_z ? "" : "waits", w, sizeof(w)));
		if (used < sizeof(line))
			snprintf(line + used, sizeof(line) - used, ": %s counted",
				 term__ns(ns > both_ns ? ns - both_ns : 0, t, sizeof(t)));
		banner_line(c, "2", line);
		any = true;
	}
	if (intr && intr->count) {
		banner_line(c, "2", "interrupted: the window ends at the interrupt (not a loss)");
		any = true;
	}
	integrity__sum(in, INTEGRITY_LOSS, &n, &ns);
	if (n && in->status == INTEGRITY_COMPLETE) {
		size_t used;

		used = (size_t)snprintf(line, sizeof(line), "losses below the threshold:");
		for (size_t i = 0; i < in->nr_losses && used < sizeof(line); i++) {
			const struct integrity_loss *ls = &in->losses[i];

			if (!ls->count || integrity__class(ls->name) != INTEGRITY_LOSS)
				continue;
			loss_text(ls, " ", "", line + used, sizeof(line) - used);
			used += strlen(line + used);
		}
		banner_line(c, "2", line);
		any = true;
	}
	return any;
}

static void banner(struct ctx *c)
{
	const struct integrity *in = c->in;

	if (!in)
		return;
	if (in->status == INTEGRITY_PARTIAL) {
		banner_line(c, "1;31",
			    "!! capture PARTIAL: losses change the answer, the numbers below "
			    "undercount");
		banner_losses(c);
	} else if (in->status == INTEGRITY_UNKNOWN) {
		char line[sizeof(in->message) + 8];

		banner_line(c, "1;33", "!! capture integrity UNKNOWN: no loss counters were read");
		if (in->message[0]) {
			snprintf(line, sizeof(line), "!!   %s", in->message);
			banner_line(c, NULL, line);
		}
	}
	if (banner_notes(c) || in->status != INTEGRITY_COMPLETE)
		fputc('\n', c->out);
}

static void heading(struct ctx *c, const char *title)
{
	struct term_line l;

	term_line__begin(&l, c->out, c->o.width, c->o.color);
	term_line__color(&l, "1");
	term_line__text(&l, title, -1);
	term_line__end(&l);
}

static void totals_line(struct ctx *c)
{
	const struct budget_entry *t = &c->b->total;
	const struct integrity_loss *nr =
		c->in ? integrity__loss(c->in, "threads_never_ran") : NULL;
	char off[16], n[3][48], line[200], never[48] = "";
	struct term_line l;

	if (nr && nr->count)
		snprintf(never, sizeof(never), ", %llu never ran", (unsigned long long)nr->count);
	snprintf(line, sizeof(line), "%s off-CPU in %s; %s in %s%s",
		 term__ns(t->off_ns, off, sizeof(off)),
		 term__count(t->count, "interval", "intervals", n[0], sizeof(n[0])),
		 term__count(c->b->nr_threads, "thread", "threads", n[1], sizeof(n[1])),
		 term__count(c->b->nr_procs, "process", "processes", n[2], sizeof(n[2])), never);
	term_line__begin(&l, c->out, c->o.width, c->o.color);
	term_line__text(&l, line, -1);
	term_line__end(&l);
	if (c->b->runq_known)
		return;
	term_line__begin(&l, c->out, c->o.width, c->o.color);
	term_line__text(
		&l, "(no run-queue split from this collector: only preempted stacks count as runq)",
		-1);
	term_line__end(&l);
}

/* Frames without a name in this share of the time or more get a line of their own. */
#define UNSYMBOLIZED_NOTE_SHARE 0.10
#define INCOMPLETE_SHOWN 3

static void warn_line(struct ctx *c, const char *text)
{
	struct term_line l;

	term_line__begin(&l, c->out, c->o.width, c->o.color);
	term_line__color(&l, "33");
	term_line__text(&l, text, -1);
	term_line__end(&l);
}

/*
 * Where user stacks fell short, when enough did to mislead
 * (analyze/completeness.h): one line, then the largest losses one a line so
 * that no binary's name is cut.
 */
static void completeness_lines(struct ctx *c)
{
	const struct completeness *cp = c->comp;
	double share = completeness__share(cp);
	char line[512], pct[16];

	if (share >= 0 && share < COMPLETENESS_WARN_SHARE) {
		snprintf(line, sizeof(line),
			 "user stacks: %s of off-CPU time in complete stacks; incomplete:",
			 term__pct(share, pct, sizeof(pct)));
		warn_line(c, line);
		for (size_t i = 0; i < cp->nr_losses; i++) {
			const struct completeness_loss *ls = &cp->losses[i];

			if (i == INCOMPLETE_SHOWN) {
				snprintf(line, sizeof(line), "  and %zu more (--json lists all)",
					 cp->nr_losses - i);
				warn_line(c, line);
				break;
			}
			term__pct((double)ls->off_ns / (double)cp->with_user_ns, pct, sizeof(pct));
			snprintf(line, sizeof(line), "  %6s  %s%s%s", pct, ls->reason,
				 ls->binary ? " in " : "", ls->binary ? ls->binary : "");
			warn_line(c, line);
		}
	}
	if (cp->off_ns &&
	    (double)cp->unsymbolized_ns / (double)cp->off_ns >= UNSYMBOLIZED_NOTE_SHARE) {
		snprintf(line, sizeof(line),
			 "%s of off-CPU time is in stacks with unsymbolized frames",
			 term__pct((double)cp->unsymbolized_ns / (double)cp->off_ns, pct,
				   sizeof(pct)));
		warn_line(c, line);
	}
}

/* Reasons with time, largest first (runqueue included, as the rows saw it). */
static size_t reasons_sorted(const struct budget_entry *t, enum reason *order, uint64_t *ns)
{
	size_t n = 0;

	for (int r = 0; r < REASON__COUNT; r++) {
		uint64_t v = r == REASON_RUNQUEUE ? t->rows_runq_ns : t->blocked_ns[r];
		size_t j;

		if (!v)
			continue;
		for (j = n; j > 0 && ns[j - 1] < v; j--) {
			ns[j] = ns[j - 1];
			order[j] = order[j - 1];
		}
		ns[j] = v;
		order[j] = r;
		n++;
	}
	return n;
}

/* Under a reason, the details rules gave part of its time (lock: lwlock, heavyweight). */
static void reason_details(struct ctx *c, enum reason r, int name_cols)
{
	struct term_line l;
	char t[16], pct[16];

	for (size_t i = 0; i < c->nr_details; i++) {
		const struct reason_detail_sum *d = &c->details[i];

		if (d->reason != r)
			continue;
		term_line__begin(&l, c->out, c->o.width, c->o.color);
		term_line__text(&l, "    ", -1);
		term_line__left_in(&l, d->detail, name_cols - 2);
		term_line__right(&l, term__ns(d->blocked_ns, t, sizeof(t)), 8);
		term_line__right(
			&l, term__pct(frac(d->blocked_ns, c->b->total.off_ns), pct, sizeof(pct)),
			8);
		term_line__end(&l);
	}
}

static void reasons_table(struct ctx *c)
{
	enum reason order[REASON__COUNT];
	uint64_t ns[REASON__COUNT];
	size_t n = reasons_sorted(&c->b->total, order, ns);
	struct term_line l;
	char t[16], pct[16];
	int name_cols = 10;

	/* One name column for reasons and the details under them. */
	for (size_t i = 0; i < c->nr_details; i++)
		if (term__cols(c->details[i].detail) + 3 > name_cols)
			name_cols = term__cols(c->details[i].detail) + 3;
	heading(c, "Off-CPU time by reason");
	for (size_t i = 0; i < n; i++) {
		term_line__begin(&l, c->out, c->o.width, c->o.color);
		term_line__text(&l, "  ", -1);
		term_line__color(&l, term__reason_color(order[i]));
		term_line__left_in(&l, reason__name(order[i]), name_cols);
		term_line__color(&l, NULL);
		term_line__right(&l, term__ns(ns[i], t, sizeof(t)), 8);
		term_line__right(&l, term__pct(frac(ns[i], c->b->total.off_ns), pct, sizeof(pct)),
				 8);
		term_line__end(&l);
		reason_details(c, order[i], name_cols);
	}
	if (!n) {
		term_line__begin(&l, c->out, c->o.width, c->o.color);
		term_line__text(&l, "  (no off-CPU time recorded)", -1);
		term_line__end(&l);
	}
	fputc('\n', c->out);
}

/* Budget columns after the name: wall, on-CPU, runq, blocked, unacct (8 each), cover (6), reason
 * (9). */
#define BUDGET_FIXED (5 * 8 + 6 + 9)

static void budget_row(struct ctx *c, const struct budget_entry *e, const char *name, bool bold)
{
	int name_cols = c->o.width - BUDGET_FIXED;
	char t[16], pct[16];
	enum reason top = budget_entry__top_reason(e);
	struct term_line l;

	term_line__begin(&l, c->out, c->o.width, c->o.color);
	if (bold)
		term_line__color(&l, "1");
	term_line__left_in(&l, name, name_cols);
	term_line__color(&l, NULL);
	term_line__right(&l, e->time_known ? term__ns(e->wall_ns, t, sizeof(t)) : "-", 8);
	term_line__right(&l, e->time_known ? term__ns(e->oncpu_ns, t, sizeof(t)) : "-", 8);
	term_line__right(&l, term__ns(e->runq_ns, t, sizeof(t)), 8);
	term_line__right(&l, term__ns(e->blocked_total_ns, t, sizeof(t)), 8);
	/* An overcount shows as negative unaccounted time: what the rows claim beyond the wall. */
	if (e->time_known && e->excess_ns)
		term__ns_delta(e->excess_ns, 0, t, sizeof(t));
	else if (e->time_known)
		term__ns(e->unaccounted_ns, t, sizeof(t));
	term_line__right(&l, e->time_known ? t : "-", 8);
	term_line__right(&l, e->coverage >= 0 ? term__pct(e->coverage, pct, sizeof(pct)) : "-", 6);
	term_line__text(&l, " ", -1);
	/* main: the reason with the most off-CPU time; "-" for a thread never off the CPU */
	if (e->blocked_total_ns || e->runq_ns) {
		term_line__color(&l, term__reason_color(top));
		term_line__text(&l, reason__name(top), -1);
	} else {
		term_line__text(&l, "-", -1);
	}
	term_line__end(&l);
}

/*
 * A thread's overcount up to 10 us plus 100 ppm of its wall time is the two
 * clocks' disagreement, not a finding: the rows are timed by the scheduler's
 * clock moved to CLOCK_MONOTONIC, which NTP slews against it (the offset
 * moved 1-2 us at each 50 ms sync here, 20-40 ppm: diagnostics, "moved N ns
 * a time"), and an interval across a sync is off by as much. Still shown in
 * the thread's unacct column.
 */
static bool overcount_is_clock_noise(const struct budget_entry *e, uint64_t x)
{
	return x <= 10000 + e->wall_ns / 10000;
}

/*
 * Coverage above 100% means the rows hold more off-CPU time than the
 * kernel's schedstat saw for those threads: said in words under the table,
 * with the overcount of all threads, so that it is never read as "all found".
 */
static void overcount_note(struct ctx *c)
{
	const struct budget *b = c->b;
	uint64_t excess = 0;
	bool over = false;
	char line[200], t[16];

	for (size_t i = 0; i < b->nr_threads; i++) {
		const struct budget_entry *e = &b->threads[i];
		uint64_t off_truth = e->wall_ns - e->oncpu_ns, x = e->excess_ns;

		if (!e->time_known || (e->coverage <= 1.0 && !x))
			continue;
		/* The rows' own excess, when the run-queue split hides it from unacct. */
		if (e->coverage > 1.0 && e->off_ns - off_truth > x)
			x = e->off_ns - off_truth;
		if (overcount_is_clock_noise(e, x))
			continue;
		over = true;
		excess += x;
	}
	if (!over)
		return;
	snprintf(line, sizeof(line),
		 "overcount: cover > 100%% or unacct < 0: the rows claim %s more than the",
		 term__ns(excess, t, sizeof(t)));
	banner_line(c, "33", line);
	banner_line(c, "33",
		    "wall time (on-CPU + runq + blocked > wall, by the kernel's schedstat)");
}

/* Today's rows of a process: its line, then its threads (up to max_threads) unless it has one. */
static void process_rows(struct ctx *c, const struct budget_entry *pe, const char *indent,
			 bool bold, bool threads)
{
	const struct budget *b = c->b;
	size_t shown = 0, hidden = 0;
	struct term_line l;
	char name[96];

	if (pe->pid)
		snprintf(name, sizeof(name), "%s%d %s", indent, pe->pid, pe->comm);
	else
		snprintf(name, sizeof(name), "%s%s", indent, pe->comm);
	budget_row(c, pe, name, bold);
	/* One thread: the process line says it all. */
	for (size_t j = 0; threads && pe->nr_threads > 1 && j < b->nr_threads; j++) {
		const struct budget_entry *te = &b->threads[j];

		if (te->pid != pe->pid || (!pe->pid && strcmp(te->comm, pe->comm)))
			continue;
		if (shown == (size_t)c->o.max_threads) {
			hidden++;
			continue;
		}
		shown++;
		if (te->tid)
			snprintf(name, sizeof(name), "%s  %d %s", indent, te->tid, te->comm);
		else
			snprintf(name, sizeof(name), "%s  %s", indent, te->comm);
		budget_row(c, te, name, false);
	}
	if (hidden) {
		snprintf(name, sizeof(name), "%s  (%zu more threads)", indent, hidden);
		term_line__begin(&l, c->out, c->o.width, c->o.color);
		term_line__text(&l, name, -1);
		term_line__end(&l);
	}
}

/*
 * A name shared by several processes: one line for all of them, then its
 * largest processes; the first such group shown (the likeliest service under
 * study) also gets each process's threads.
 */
static void group_rows(struct ctx *c, const struct proc_group *g, bool expand)
{
	int name_cols = c->o.width - BUDGET_FIXED;
	size_t shown =
		g->nr_procs < (size_t)c->o.max_threads ? g->nr_procs : (size_t)c->o.max_threads;
	struct term_line l;
	char name[160], more[48];

	snprintf(name, sizeof(name), "%s (%zu processes, %zu threads)", g->comm, g->nr_procs,
		 g->e.nr_threads);
	if (term__cols(name) > name_cols)
		snprintf(name, sizeof(name), "%s (%zu procs)", g->comm, g->nr_procs);
	budget_row(c, &g->e, name, true);
	for (size_t i = 0; i < shown; i++)
		process_rows(c, &c->b->procs[g->procs[i]], "  ", false, expand);
	if (g->nr_procs > shown) {
		snprintf(name, sizeof(name), "  (%s more)",
			 term__count(g->nr_procs - shown, "process", "processes", more,
				     sizeof(more)));
		term_line__begin(&l, c->out, c->o.width, c->o.color);
		term_line__text(&l, name, -1);
		term_line__end(&l);
	}
}

/*
 * Processes grouped by name (analyze/procgroups.h), largest off-CPU time
 * first. A name held by one process shows as that process, as before
 * grouping; the names past max_procs are summed into one line.
 */
static void budget_table(struct ctx *c)
{
	const struct budget *b = c->b;
	const struct proc_groups *gs = c->groups;
	size_t ngroups = gs->nr < (size_t)c->o.max_procs ? gs->nr : (size_t)c->o.max_procs;
	bool expanded = false;
	struct term_line l;
	char name[96];

	heading(c, "Wall-clock budget (thread time)");
	term_line__begin(&l, c->out, c->o.width, c->o.color);
	term_line__color(&l, "2");
	term_line__left_in(&l, "process / thread", c->o.width - BUDGET_FIXED);
	term_line__right(&l, "wall", 8);
	term_line__right(&l, "on-CPU", 8);
	term_line__right(&l, "runq", 8);
	term_line__right(&l, "blocked", 8);
	term_line__right(&l, "unacct", 8);
	term_line__right(&l, "cover", 6);
	term_line__text(&l, " main", -1);
	term_line__end(&l);
	for (size_t i = 0; i < ngroups; i++) {
		const struct proc_group *g = &gs->groups[i];

		if (g->nr_procs == 1) {
			process_rows(c, &b->procs[g->procs[0]], "", true, true);
			continue;
		}
		group_rows(c, g, !expanded);
		expanded = true;
	}
	if (gs->nr > ngroups) {
		uint64_t off = 0;
		char more[48], t[16];

		for (size_t i = ngroups; i < gs->nr; i++)
			off += gs->groups[i].e.off_ns;
		snprintf(name, sizeof(name), "(%s: %s off-CPU)",
			 term__count(gs->nr - ngroups, "more process name", "more process names",
				     more, sizeof(more)),
			 term__ns(off, t, sizeof(t)));
		term_line__begin(&l, c->out, c->o.width, c->o.color);
		term_line__text(&l, name, -1);
		term_line__end(&l);
	}
	if (b->nr_procs > 1)
		budget_row(c, &b->total, "total", true);
	overcount_note(c);
	fputc('\n', c->out);
}

/* "label a <- b <- c" (term__frames), inlined functions marked. */
static void frames_line(struct ctx *c, const char *label, const uint32_t *frames, const size_t *idx,
			size_t n)
{
	char buf[KEY_FRAMES][256];
	const char *names[KEY_FRAMES], *suffix[KEY_FRAMES];

	for (size_t i = 0; i < n && i < KEY_FRAMES; i++) {
		const struct profile_frame *f = profile__frame_at(c->p, frames[idx[i]]);

		names[i] = reasons__clean_name(f->kind, f->name, buf[i], sizeof(buf[i]));
		suffix[i] = f->kind == FRAME_INLINE ? " (inlined)" : NULL;
	}
	term__frames(c->out, c->o.width, c->o.color, label, names, suffix, n);
}

/* A thread as a stack line names it: "comm pid/tid" (long) or "tid" (short), "comm" without ids. */
static void thread_name(const struct profile_thread *th, bool full, char *buf, size_t size)
{
	if (!th->tid)
		snprintf(buf, size, "%s", th->comm);
	else if (full)
		snprintf(buf, size, "%s %d/%d", th->comm, th->pid, th->tid);
	else
		snprintf(buf, size, "%d", th->tid);
}

/* A thread's share of the stack, whole percents ("<1%" rather than "0%" for a little). */
static void share_text(uint64_t part, uint64_t whole, char *buf, size_t size)
{
	double pct = frac(part, whole) * 100.0;

	if (part && pct < 0.5)
		snprintf(buf, size, "<1%%");
	else
		snprintf(buf, size, "%.0f%%", pct);
}

/* A process's name as the budget table gives it (its main thread's), not a worker's. */
static const char *proc_comm(const struct ctx *c, const struct profile_thread *th)
{
	for (size_t i = 0; th->pid && i < c->b->nr_procs; i++)
		if (c->b->procs[i].pid == th->pid)
			return c->b->procs[i].comm;
	return th->comm;
}

/*
 * Who is on a stack line: one thread as "comm pid/tid"; several as
 * "comm pid: 4 threads (20791 41%, 20794 30%, +2)", and several processes'
 * as "3 processes, 12 threads (comm pid/tid 41%, ..., +10)", so that a stack
 * that merges threads is never read as one thread's.
 */
static void who_text(const struct ctx *c, const struct top_stack *ts, char *buf, size_t size)
{
	const struct profile_stack_threads *w = ts->who;
	const struct profile_thread *th = profile__thread_at(c->p, ts->thread);
	bool procs = w->nr_procs > 1;
	size_t used, shown = w->nr_top < WHO_TEXT ? w->nr_top : WHO_TEXT;
	char n[2][48];

	if (w->nr_threads <= 1) {
		thread_name(th, true, buf, size);
		return;
	}
	term__count(w->nr_threads, "thread", "threads", n[0], sizeof(n[0]));
	if (procs)
		used = (size_t)snprintf(
			buf, size, "%s, %s (",
			term__count(w->nr_procs, "process", "processes", n[1], sizeof(n[1])), n[0]);
	else
		used = (size_t)snprintf(buf, size, "%s %d: %s (", proc_comm(c, th), th->pid, n[0]);
	for (size_t i = 0; i < shown && used < size; i++) {
		char name[96], pct[16];

		thread_name(profile__thread_at(c->p, w->top[i].thread), procs, name, sizeof(name));
		share_text(w->top[i].w.off_ns, ts->off_ns, pct, sizeof(pct));
		used += (size_t)snprintf(buf + used, size - used, "%s%s %s", i ? ", " : "", name,
					 pct);
	}
	if (used < size && w->nr_threads > shown)
		used += (size_t)snprintf(buf + used, size - used, ", +%zu", w->nr_threads - shown);
	if (used < size)
		snprintf(buf + used, size - used, ")");
}

/*
 * Stack line columns after the reason: off (7), share (7), then blocked (8)
 * and runq (7) when the collector split them, and the count (8) when the
 * width leaves room for it.
 */
static int stack_cols(const struct ctx *c, bool count)
{
	return 7 + 7 + (c->b->runq_known ? 8 + 7 : 0) + (count ? 8 : 0);
}

static void stacks_header(struct ctx *c, int reason_cols, bool count)
{
	struct term_line l;

	term_line__begin(&l, c->out, c->o.width, c->o.color);
	term_line__color(&l, "2");
	term_line__left_in(&l, "   reason", 3 + reason_cols);
	term_line__right(&l, "off", 7);
	term_line__right(&l, "share", 7);
	if (c->b->runq_known) {
		term_line__right(&l, "blocked", 8);
		term_line__right(&l, "runq", 7);
	}
	if (count)
		term_line__right(&l, "count", 8);
	if (term_line__left(&l) >= 9)
		term_line__text(&l, "  threads", -1);
	term_line__end(&l);
}

static void stacks_table(struct ctx *c)
{
	struct term_line l;
	char title[96], t[16], pct[16], cnt[24], who[256];
	int reason_cols = 9;
	bool count;

	/* One column wide enough for every "reason: detail" shown. */
	for (size_t i = 0; i < c->nr_top; i++) {
		const struct top_stack *ts = &c->top[i];
		int cols = term__cols(reason__name(ts->reason)) +
			   (ts->detail ? 2 + term__cols(ts->detail) : 0) + 1;

		if (cols > reason_cols)
			reason_cols = cols;
	}
	/*
	 * Never so wide that the numbers leave the line; on a narrow one the
	 * reason keeps its column (8: "runqueue", the off column starts with a
	 * space) and the count goes first.
	 */
	if (reason_cols > c->o.width - 3 - stack_cols(c, true))
		reason_cols = c->o.width - 3 - stack_cols(c, true);
	if (reason_cols < 8)
		reason_cols = 8;
	count = 3 + reason_cols + stack_cols(c, true) <= c->o.width;
	snprintf(title, sizeof(title), "Top %zu of %zu stacks by off-CPU time", c->nr_top,
		 c->nr_stacks);
	heading(c, title);
	if (c->nr_top)
		stacks_header(c, reason_cols, count);
	for (size_t i = 0; i < c->nr_top; i++) {
		const struct top_stack *ts = &c->top[i];
		size_t kidx[KEY_FRAMES], uidx[KEY_FRAMES], nk, nu, n;
		const uint32_t *frames = profile__stack_at(c->p, ts->stack, &n);
		char rank[24], label[64];

		snprintf(rank, sizeof(rank), "%2zu ", i + 1);
		snprintf(cnt, sizeof(cnt), "%llux", (unsigned long long)ts->count);
		who_text(c, ts, who, sizeof(who));
		term_line__begin(&l, c->out, c->o.width, c->o.color);
		term_line__text(&l, rank, -1);
		if (ts->detail)
			snprintf(label, sizeof(label), "%s: %s", reason__name(ts->reason),
				 ts->detail);
		else
			snprintf(label, sizeof(label), "%s", reason__name(ts->reason));
		term_line__color(&l, term__reason_color(ts->reason));
		term_line__left_in(&l, label, reason_cols);
		term_line__color(&l, NULL);
		term_line__right(&l, term__ns(ts->off_ns, t, sizeof(t)), 7);
		term_line__right(&l, term__pct(ts->share, pct, sizeof(pct)), 7);
		if (c->b->runq_known) {
			term_line__right(&l, term__ns(ts->off_ns - ts->runq_ns, t, sizeof(t)), 8);
			term_line__right(&l, term__ns(ts->runq_ns, t, sizeof(t)), 7);
		}
		if (count)
			term_line__right(&l, cnt, 8);
		/* Who is on it: at the end of the line when it fits, else a line of its own. */
		if (term_line__left(&l) >= 2 + term__cols(who)) {
			term_line__text(&l, "  ", -1);
			term_line__text(&l, who, -1);
		} else {
			term_line__end(&l);
			term_line__begin(&l, c->out, c->o.width, c->o.color);
			term_line__text(&l, "      ", -1);
			term_line__text(&l, who, -1);
		}
		term_line__end(&l);
		report__key_frames(c->p, ts->stack, KEY_FRAMES, kidx, &nk, uidx, &nu);
		if (nk)
			frames_line(c, "kernel: ", frames, kidx, nk);
		if (nu)
			frames_line(c, "user:   ", frames, uidx, nu);
		if (!nk && !nu)
			frames_line(c, "(empty stack)", frames, kidx, 0);
	}
	if (!c->nr_top) {
		term_line__begin(&l, c->out, c->o.width, c->o.color);
		term_line__text(&l, "  (no stacks)", -1);
		term_line__end(&l);
	}
}

/* "filtered: --comm postgres: 23 of 1204 threads, 9 of 340 processes" */
static void filter_line(struct ctx *c)
{
	const struct filter_result *r = c->o.filtered;
	char what[256], line[400];

	if (!c->o.filter || !r)
		return;
	filter__describe(c->o.filter, what, sizeof(what));
	snprintf(line, sizeof(line), "filtered: %s: %zu of %zu threads, %zu of %zu processes", what,
		 r->threads, r->threads_total, r->procs, r->procs_total);
	banner_line(c, "36", line);
}

static void write_text(struct ctx *c)
{
	banner(c);
	filter_line(c);
	totals_line(c);
	completeness_lines(c);
	fputc('\n', c->out);
	reasons_table(c);
	budget_table(c);
	stacks_table(c);
	woken_by__write_text(c->woken, c->out, c->o.width, c->o.color, 0);
}

/* ---- JSON ---- */

static void json_u64_or_null(struct jw *w, const char *key, bool known, uint64_t v)
{
	jw_key(w, key);
	if (known)
		jw_u64(w, v);
	else
		jw_null(w);
}

static void json_entry(struct jw *w, const struct budget_entry *e, bool with_ids)
{
	if (with_ids) {
		jw_i64_field(w, "pid", e->pid);
		jw_i64_field(w, "tid", e->tid);
		jw_str_field(w, "comm", e->comm);
	}
	jw_u64_field(w, "threads", e->nr_threads);
	json_u64_or_null(w, "wall_ns", e->time_known, e->wall_ns);
	json_u64_or_null(w, "oncpu_ns", e->time_known, e->oncpu_ns);
	jw_u64_field(w, "runq_ns", e->runq_ns);
	jw_u64_field(w, "blocked_ns", e->blocked_total_ns);
	jw_object_field(w, "blocked_by_reason");
	for (int r = 0; r < REASON__COUNT; r++) {
		if (!e->blocked_ns[r])
			continue;
		jw_u64_field(w, reason__name(r), e->blocked_ns[r]);
	}
	jw_object_end(w);
	json_u64_or_null(w, "unaccounted_ns", e->time_known, e->unaccounted_ns);
	json_u64_or_null(w, "excess_ns", e->time_known, e->excess_ns);
	jw_u64_field(w, "off_ns", e->off_ns);
	jw_u64_field(w, "count", e->count);
	jw_key(w, "coverage");
	if (e->coverage >= 0)
		jw_double(w, e->coverage, 4);
	else
		jw_null(w);
}

static void json_frames(struct jw *w, const struct profile *p, const uint32_t *frames,
			const size_t *idx, size_t n)
{
	char buf[256];

	jw_array_begin(w);
	for (size_t i = 0; i < n; i++) {
		const struct profile_frame *f = profile__frame_at(p, frames[idx[i]]);

		jw_string(w, reasons__clean_name(f->kind, f->name, buf, sizeof(buf)));
	}
	jw_array_end(w);
}

static void json_filter(struct jw *w, struct ctx *c)
{
	const struct filter_result *r = c->o.filtered;
	const char *const *comms;
	const int *pids;
	size_t n;

	jw_key(w, "filter");
	if (!c->o.filter || !r) {
		jw_null(w);
		return;
	}
	jw_object_begin(w);
	pids = filter__pids(c->o.filter, &n);
	jw_array_field(w, "pids");
	for (size_t i = 0; i < n; i++)
		jw_i64(w, pids[i]);
	jw_array_end(w);
	comms = filter__comms(c->o.filter, &n);
	jw_array_field(w, "comms");
	for (size_t i = 0; i < n; i++)
		jw_string(w, comms[i]);
	jw_array_end(w);
	jw_u64_field(w, "threads", r->threads);
	jw_u64_field(w, "threads_total", r->threads_total);
	jw_u64_field(w, "processes", r->procs);
	jw_u64_field(w, "processes_total", r->procs_total);
	jw_object_end(w);
}

static int write_json(struct ctx *c)
{
	const struct budget_entry *t = &c->b->total;
	enum reason order[REASON__COUNT];
	uint64_t ns[REASON__COUNT];
	size_t nr = reasons_sorted(t, order, ns);
	struct jw w;

	jw_init(&w, c->out, false);
	jw_object_begin(&w);
	integrity_json__write(&w, "integrity", c->in);
	json_filter(&w, c);

	jw_object_field(&w, "totals");
	jw_u64_field(&w, "off_ns", t->off_ns);
	jw_u64_field(&w, "blocked_ns", t->blocked_total_ns);
	jw_u64_field(&w, "runq_ns", t->rows_runq_ns);
	jw_u64_field(&w, "count", t->count);
	jw_u64_field(&w, "threads", c->b->nr_threads);
	jw_u64_field(&w, "processes", c->b->nr_procs);
	jw_bool_field(&w, "runq_known", c->b->runq_known);
	jw_object_end(&w);

	jw_array_field(&w, "reasons");
	for (size_t i = 0; i < nr; i++) {
		jw_object_begin(&w);
		jw_str_field(&w, "reason", reason__name(order[i]));
		jw_u64_field(&w, "ns", ns[i]);
		jw_double_field(&w, "share", frac(ns[i], t->off_ns), 4);
		jw_array_field(&w, "details");
		for (size_t k = 0; k < c->nr_details; k++) {
			const struct reason_detail_sum *d = &c->details[k];

			if (d->reason != order[i])
				continue;
			jw_object_begin(&w);
			jw_str_field(&w, "detail", d->detail);
			jw_u64_field(&w, "ns", d->blocked_ns);
			jw_double_field(&w, "share", frac(d->blocked_ns, t->off_ns), 4);
			jw_object_end(&w);
		}
		jw_array_end(&w);
		jw_object_end(&w);
	}
	jw_array_end(&w);

	jw_object_field(&w, "budget");
	jw_object_field(&w, "total");
	json_entry(&w, t, false);
	jw_object_end(&w);
	jw_array_field(&w, "processes");
	for (size_t i = 0; i < c->b->nr_procs; i++) {
		const struct budget_entry *pe = &c->b->procs[i];

		jw_object_begin(&w);
		json_entry(&w, pe, true);
		jw_array_field(&w, "thread_list");
		for (size_t j = 0; j < c->b->nr_threads; j++) {
			const struct budget_entry *te = &c->b->threads[j];

			if (te->pid != pe->pid || (!pe->pid && strcmp(te->comm, pe->comm)))
				continue;
			jw_object_begin(&w);
			json_entry(&w, te, true);
			jw_object_end(&w);
		}
		jw_array_end(&w);
		jw_object_end(&w);
	}
	jw_array_end(&w);
	jw_array_field(&w, "groups");
	for (size_t i = 0; i < c->groups->nr; i++) {
		const struct proc_group *g = &c->groups->groups[i];

		jw_object_begin(&w);
		jw_str_field(&w, "comm", g->comm);
		jw_u64_field(&w, "processes", g->nr_procs);
		jw_array_field(&w, "pids");
		for (size_t j = 0; j < g->nr_procs; j++)
			jw_i64(&w, c->b->procs[g->procs[j]].pid);
		jw_array_end(&w);
		json_entry(&w, &g->e, false);
		jw_object_end(&w);
	}
	jw_array_end(&w);
	jw_object_end(&w);

	jw_array_field(&w, "top_stacks");
	for (size_t i = 0; i < c->nr_top; i++) {
		const struct top_stack *ts = &c->top[i];
		const struct profile_thread *th = profile__thread_at(c->p, ts->thread);
		size_t kidx[KEY_FRAMES], uidx[KEY_FRAMES], nk, nu, n;
		const uint32_t *frames = profile__stack_at(c->p, ts->stack, &n);

		jw_object_begin(&w);
		jw_u64_field(&w, "rank", i + 1);
		jw_str_field(&w, "reason", reason__name(ts->reason));
		jw_key(&w, "detail");
		if (ts->detail)
			jw_string(&w, ts->detail);
		else
			jw_null(&w);
		jw_u64_field(&w, "off_ns", ts->off_ns);
		jw_u64_field(&w, "blocked_ns", ts->off_ns - ts->runq_ns);
		jw_u64_field(&w, "runq_ns", ts->runq_ns);
		jw_u64_field(&w, "count", ts->count);
		jw_double_field(&w, "share", ts->share, 4);
		jw_object_field(&w, "thread");
		jw_i64_field(&w, "pid", th->pid);
		jw_i64_field(&w, "tid", th->tid);
		jw_str_field(&w, "comm", th->comm);
		jw_object_end(&w);
		jw_u64_field(&w, "threads", ts->who->nr_threads);
		jw_u64_field(&w, "processes", ts->who->nr_procs);
		jw_array_field(&w, "top_threads");
		for (size_t k = 0; k < ts->who->nr_top; k++) {
			const struct profile_thread_sum *tw = &ts->who->top[k];
			const struct profile_thread *tt = profile__thread_at(c->p, tw->thread);

			jw_object_begin(&w);
			jw_i64_field(&w, "pid", tt->pid);
			jw_i64_field(&w, "tid", tt->tid);
			jw_str_field(&w, "comm", tt->comm);
			jw_u64_field(&w, "off_ns", tw->w.off_ns);
			jw_object_end(&w);
		}
		jw_array_end(&w);
		report__key_frames(c->p, ts->stack, KEY_FRAMES, kidx, &nk, uidx, &nu);
		jw_object_field(&w, "key_frames");
		jw_key(&w, "kernel");
		json_frames(&w, c->p, frames, kidx, nk);
		jw_key(&w, "user");
		json_frames(&w, c->p, frames, uidx, nu);
		jw_object_end(&w);
		jw_array_field(&w, "frames");
		for (size_t f = 0; f < n; f++) {
			const struct profile_frame *fr = profile__frame_at(c->p, frames[f]);

			jw_object_begin(&w);
			jw_str_field(&w, "name", fr->name);
			jw_str_field(&w, "kind", frame_kind__name(fr->kind));
			jw_object_end(&w);
		}
		jw_array_end(&w);
		jw_object_end(&w);
	}
	jw_array_end(&w);
	completeness_json__write(&w, "user_stacks", c->comp);
	woken_by__write_json(c->woken, &w, "woken_by");
	jw_object_end(&w);
	return jw_finish(&w);
}

int report__write(FILE *out, const struct profile *p, const struct integrity *in,
		  const struct report_opts *o)
{
	struct ctx c = {.out = out, .p = p, .in = in};
	int err;

	if (o)
		c.o = *o;
	if (!c.o.width)
		c.o.width = 80;
	if (c.o.width < 40)
		c.o.width = 40;
	if (c.o.top <= 0)
		c.o.top = 10;
	if (c.o.max_procs <= 0)
		c.o.max_procs = 10;
	if (c.o.max_threads <= 0)
		c.o.max_threads = 5;
	c.total_off = profile__totals(p)->all.off_ns;
	c.b = budget__new(p);
	if (!c.b)
		return -errno;
	c.groups = proc_groups__new(c.b);
	if (!c.groups) {
		err = -errno;
		goto cleanup;
	}
	c.comp = completeness__new(p, c.o.unwinder);
	if (!c.comp) {
		err = -errno;
		goto cleanup;
	}
	err = compute_top(&c);
	if (!err)
		err = reasons__detail_sums(p, &c.details, &c.nr_details);
	if (!err && c.o.timeline && !(c.woken = woken_by__new(p, c.o.timeline)))
		err = -errno;
	if (err)
		goto cleanup;
	if (c.o.json) {
		err = write_json(&c);
	} else {
		write_text(&c);
		err = 0;
	}
	if (!err && (fflush(out) || ferror(out)))
		err = -EIO;
cleanup:
	proc_groups__free(c.groups);
	budget__free(c.b);
	completeness__free(c.comp);
	woken_by__free(c.woken);
	free(c.top);
	free(c.who);
	free(c.details);
	return err;
}
