// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/completeness.h"
#include "output/completeness_json.h"
#include "output/integrity_json.h"
#include "output/summary.h"
#include "util/json_writer.h"

static void write_caveat(struct jw *w, const struct outcome *o)
{
	jw_key(w, "caveat");
	if (!o->caveat_kind) {
		jw_null(w);
		return;
	}
	jw_object_begin(w);
	jw_str_field(w, "kind", o->caveat_kind);
	jw_str_field(w, "message", o->caveat_message);
	jw_object_end(w);
}

static void write_paths(struct jw *w, const struct lane *l)
{
	jw_str_field(w, "capture_path", l->capture_path);
	jw_str_field(w, "diagnostics_path", l->diagnostics_path);
	jw_str_field(w, "summary_path", l->summary_path);
}

static void write_proc_end(struct jw *w, const struct proc_end *e)
{
	jw_bool_field(w, "started", e->started);
	jw_key(w, "exit_code");
	if (e->exited && !e->signal)
		jw_i64(w, e->exit_code);
	else
		jw_null(w);
	jw_key(w, "signal");
	if (e->signal)
		jw_i64(w, e->signal);
	else
		jw_null(w);
	jw_key(w, "signal_name");
	if (e->signal) {
		const char *abbrev = sigabbrev_np(e->signal);

		jw_string(w, abbrev ? abbrev : "?");
	} else {
		jw_null(w);
	}
	if (!e->started && e->exec_errno) {
		jw_str_field(w, "error", strerror(e->exec_errno));
	}
}

static void write_argv(struct jw *w, const char *key, char *const *argv)
{
	jw_key(w, key);
	if (!argv) {
		jw_null(w);
		return;
	}
	jw_array_begin(w);
	for (size_t i = 0; argv[i]; i++)
		jw_string(w, argv[i]);
	jw_array_end(w);
}

static void write_workload(struct jw *w, const struct summary_run *r)
{
	jw_key(w, "workload");
	if (!r) {
		jw_null(w);
		return;
	}
	jw_object_begin(w);
	jw_str_field(w, "target", r->target ? r->target : "command");
	write_argv(w, "argv", r->argv);
	if (r->target_arg) {
		jw_str_field(w, "target_arg", r->target_arg);
	}
	jw_i64_field(w, "pid", r->pid);
	write_proc_end(w, &r->workload);
	jw_str_field(w, "ended_by", r->ended_by);
	jw_u64_field(w, "wall_ns", r->wall_ns);
	jw_i64_field(w, "started_unix_ns", r->started_unix_ns);
	jw_object_end(w);
	if (r->collector_argv)
		write_argv(w, "collector_argv", r->collector_argv);
}

static void write_weight(struct jw *w, const struct profile_weight *pw, bool runq_known)
{
	jw_u64_field(w, "off_ns", pw->off_ns);
	jw_u64_field(w, "blocked_ns", pw->off_ns - pw->runq_ns);
	jw_key(w, "runq_ns");
	if (runq_known)
		jw_u64(w, pw->runq_ns);
	else
		jw_null(w);
	jw_u64_field(w, "count", pw->count);
}

static void write_by_state(struct jw *w, const struct profile_weight *by, bool runq_known)
{
	jw_object_field(w, "by_state");
	for (int s = 0; s < OFFCPU_STATE__COUNT; s++) {
		if (!by[s].count && !by[s].off_ns)
			continue;
		jw_object_field(w, offcpu_state__letter(s));
		write_weight(w, &by[s], runq_known);
		jw_object_end(w);
	}
	jw_object_end(w);
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

static void write_thread_ref(struct jw *w, const struct profile_thread *t)
{
	jw_i64_field(w, "pid", t->pid);
	jw_i64_field(w, "tid", t->tid);
	jw_str_field(w, "comm", t->comm);
}

/* Per-thread state split: one pass over rows into an array indexed by thread id. */
static int thread_states(const struct profile *p, struct profile_weight **out)
{
	size_t nt = profile__nr_threads(p), nr = profile__nr_rows(p);
	struct profile_weight *by = calloc(nt ? nt * OFFCPU_STATE__COUNT : 1, sizeof(*by));

	if (!by)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		const struct profile_row *r = profile__row_at(p, i);
		struct profile_weight *d = &by[r->thread * OFFCPU_STATE__COUNT + r->state];

		d->count += r->w.count;
		d->off_ns += r->w.off_ns;
		d->runq_ns += r->w.runq_ns;
	}
	*out = by;
	return 0;
}

static int write_threads(struct jw *w, const struct profile *p, bool runq_known)
{
	struct profile_thread_sum *ts = NULL;
	struct profile_weight *by = NULL;
	size_t n = 0;
	int err;

	err = profile__sum_by_thread(p, &ts, &n);
	if (!err)
		err = thread_states(p, &by);
	if (err)
		goto cleanup;
	jw_array_field(w, "threads");
	for (size_t i = 0; i < n; i++) {
		const struct profile_thread *t = profile__thread_at(p, ts[i].thread);
		const struct profile_thread_time *tt = profile__thread_time(p, ts[i].thread);

		jw_object_begin(w);
		write_thread_ref(w, t);
		write_weight(w, &ts[i].w, runq_known);
		write_by_state(w, &by[ts[i].thread * OFFCPU_STATE__COUNT], runq_known);
		if (tt) {
			/* The CPU's wake-ups: the kernel's run, the rows' wait (profile.h). */
			uint64_t ran = profile_thread_time__ran_ns(tt);
			uint64_t expected_off = tt->wall_ns > ran ? tt->wall_ns - ran : 0;

			jw_object_field(w, "schedstat");
			jw_u64_field(w, "wall_ns", tt->wall_ns);
			jw_u64_field(w, "oncpu_ns", tt->oncpu_ns);
			jw_u64_field(w, "runq_ns", tt->runq_ns);
			jw_u64_field(w, "idle_exit_ns", tt->idle_exit_ns);
			jw_u64_field(w, "offcpu_ns", expected_off);
			jw_object_end(w);
			/* What share of the independently measured off-CPU time rows account for.
			 */
			jw_key(w, "coverage");
			if (expected_off)
				jw_double(w, share(ts[i].w.off_ns, expected_off), 4);
			else
				jw_null(w);
		}
		jw_object_end(w);
	}
	jw_array_end(w);
cleanup:
	free(ts);
	free(by);
	return err;
}

static int write_top_stacks(struct jw *w, const struct profile *p, size_t top_n, bool runq_known)
{
	const struct profile_totals *tot = profile__totals(p);
	struct profile_stack_sum *ss = NULL;
	size_t n = 0;
	int err;

	err = profile__sum_by_stack(p, &ss, &n);
	if (err)
		return err;
	jw_array_field(w, "top_stacks");
	for (size_t i = 0; i < n && i < top_n; i++) {
		size_t nf = 0;
		const uint32_t *frames = profile__stack_at(p, ss[i].stack, &nf);

		jw_object_begin(w);
		jw_array_field(w, "frames");
		for (size_t f = 0; f < nf; f++) {
			const struct profile_frame *fr = profile__frame_at(p, frames[f]);

			jw_object_begin(w);
			jw_str_field(w, "name", fr->name);
			jw_str_field(w, "kind", frame_kind__name(fr->kind));
			jw_object_end(w);
		}
		jw_array_end(w);
		write_weight(w, &ss[i].w, runq_known);
		jw_double_field(w, "share", share(ss[i].w.off_ns, tot->all.off_ns), 6);
		jw_object_field(w, "top_thread");
		write_thread_ref(w, profile__thread_at(p, ss[i].thread));
		jw_object_end(w);
		jw_object_end(w);
	}
	jw_array_end(w);
	free(ss);
	return 0;
}

static void write_totals(struct jw *w, const struct profile *p, bool runq_known)
{
	const struct profile_totals *t = profile__totals(p);

	jw_object_field(w, "totals");
	write_weight(w, &t->all, runq_known);
	jw_u64_field(w, "rows", profile__nr_rows(p));
	jw_u64_field(w, "stacks", profile__nr_stacks(p));
	jw_u64_field(w, "threads", profile__nr_threads(p));
	write_by_state(w, t->by_state, runq_known);
	jw_object_end(w);
}

static void write_empty_totals(struct jw *w)
{
	static const struct profile_weight zero;
	static const struct profile_weight by[OFFCPU_STATE__COUNT];

	jw_object_field(w, "totals");
	write_weight(w, &zero, false);
	jw_u64_field(w, "rows", 0);
	jw_u64_field(w, "stacks", 0);
	jw_u64_field(w, "threads", 0);
	write_by_state(w, by, false);
	jw_object_end(w);
	jw_array_field(w, "threads");
	jw_array_end(w);
	jw_array_field(w, "top_stacks");
	jw_array_end(w);
}

static void write_parse(struct jw *w, const struct parse_stats *ps)
{
	jw_key(w, "parse");
	if (!ps) {
		jw_null(w);
		return;
	}
	jw_object_begin(w);
	jw_u64_field(w, "lines", ps->lines);
	jw_u64_field(w, "records", ps->records);
	jw_u64_field(w, "skipped", ps->skipped);
	jw_u64_field(w, "malformed", ps->malformed);
	jw_key(w, "first_malformed_line");
	if (ps->first_malformed_line)
		jw_u64(w, ps->first_malformed_line);
	else
		jw_null(w);
	jw_key(w, "first_malformed_reason");
	if (ps->first_malformed_line)
		jw_string(w, ps->first_malformed_reason);
	else
		jw_null(w);
	jw_object_end(w);
}

static void write_binaries(struct jw *w, const struct sym_binary *b, size_t n)
{
	static const char *const fp[] = {"unknown", "present", "absent"};

	jw_array_field(w, "binaries");
	for (size_t i = 0; b && i < n; i++) {
		jw_object_begin(w);
		jw_str_field(w, "path", b[i].path);
		jw_str_field(w, "frame_pointers",
			     fp[b[i].frame_pointers <= FP_ABSENT ? b[i].frame_pointers : 0]);
		jw_bool_field(w, "has_symbols", b[i].has_symbols);
		jw_bool_field(w, "has_debuginfo", b[i].has_debuginfo);
		jw_object_end(w);
	}
	jw_array_end(w);
}

/* How much off-CPU time has a whole user stack (analyze/completeness.h). */
static int write_user_stacks(struct jw *w, const struct lane *l, const struct profile *p)
{
	enum unwinder u = unwinder__of_collector(l->collector);
	struct profile *empty = NULL;
	struct completeness *c;

	if (!p)
		p = empty = profile__new();
	c = p ? completeness__new(p, u) : NULL;
	profile__free(empty);
	if (!c)
		return -ENOMEM;
	completeness_json__write(w, "user_stacks", c);
	completeness__free(c);
	return 0;
}

static void write_timeline(struct jw *w, const struct summary_timeline *t)
{
	jw_key(w, "timeline");
	if (!t) {
		jw_null(w);
		return;
	}
	jw_object_begin(w);
	jw_str_field(w, "path", t->path);
	jw_u64_field(w, "min_ns", t->info.min_ns);
	jw_u64_field(w, "intervals", t->intervals);
	jw_u64_field(w, "lost", t->info.lost);
	jw_u64_field(w, "lost_ns", t->info.lost_ns);
	jw_u64_field(w, "malformed_lines", t->malformed);
	jw_object_end(w);
}

int summary__write(FILE *out, const struct summary_input *in)
{
	const struct lane *l = in->lane;
	bool runq_known = in->profile && profile__runq_known(in->profile);
	struct jw w;
	int err = 0;

	jw_init(&w, out, false);
	jw_object_begin(&w);
	jw_u64_field(&w, "schema_version", SUMMARY_SCHEMA_VERSION);
	jw_str_field(&w, "kind", "offcpu_time");
	jw_str_field(&w, "offcpu_version", OFFCPU_VERSION);
	jw_str_field(&w, "mode", lane_mode__name(l->mode));
	jw_str_field(&w, "tool", l->tool);
	jw_str_field(&w, "collector", l->collector_name);
	jw_str_field(&w, "state", in->outcome->state);
	write_caveat(&w, in->outcome);
	integrity_json__write(&w, "capture_integrity", in->integrity);
	write_paths(&w, l);
	write_workload(&w, in->run);
	write_parse(&w, in->parse);
	jw_bool_field(&w, "runq_known", runq_known);
	if (in->profile && profile__nr_rows(in->profile)) {
		write_totals(&w, in->profile, runq_known);
		err = write_threads(&w, in->profile, runq_known);
		if (!err)
			err = write_top_stacks(&w, in->profile, in->top_n ? in->top_n : 20,
					       runq_known);
	} else {
		write_empty_totals(&w);
	}
	if (!err)
		err = write_user_stacks(&w, l, in->profile);
	write_binaries(&w, in->binaries, in->nr_binaries);
	write_timeline(&w, in->timeline);
	jw_object_end(&w);
	if (!err)
		err = jw_finish(&w);
	return err;
}

int summary__write_record(FILE *out, const struct summary_input *in)
{
	struct jw w;

	jw_init(&w, out, true);
	jw_object_begin(&w);
	jw_str_field(&w, "kind", "offcpu_time");
	jw_str_field(&w, "tool", in->lane->tool);
	write_paths(&w, in->lane);
	jw_str_field(&w, "state", in->outcome->state);
	jw_str_field(&w, "caveat_kind", in->outcome->caveat_kind);
	jw_str_field(&w, "caveat_message",
		     in->outcome->caveat_kind ? in->outcome->caveat_message : NULL);
	jw_str_field(&w, "capture_integrity", integrity_status__name(in->integrity->status));
	if (in->run) {
		jw_key(&w, "exit_code");
		if (in->run->workload.exited && !in->run->workload.signal)
			jw_i64(&w, in->run->workload.exit_code);
		else
			jw_null(&w);
		jw_key(&w, "signal");
		if (in->run->workload.signal)
			jw_i64(&w, in->run->workload.signal);
		else
			jw_null(&w);
		jw_str_field(&w, "ended_by", in->run->ended_by);
	}
	jw_object_end(&w);
	fputc('\n', out);
	return ferror(out) ? -EIO : 0;
}
