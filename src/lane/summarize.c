// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lane/lane.h"
#include "output/summary.h"
#include "parse/diagnostics.h"
#include "parse/timeline.h"
#include "util/atomic_file.h"

static int put_summary(FILE *f, const void *si)
{
	return summary__write(f, si);
}

/*
 * The lane's timeline, counted: a reader of the summary learns that there is
 * one, its threshold and what it lost without opening it. 0 and *present
 * false when there is none; -ENOMEM.
 */
static int read_timeline(const struct lane *l, struct summary_timeline *st, bool *present)
{
	FILE *f = fopen(l->timeline_path, "r");
	struct profile *p = NULL;
	struct timeline *t = NULL;
	struct parse_stats ps;
	int err;

	*present = false;
	if (!f)
		return 0;
	p = profile__new();
	t = timeline__new();
	err = p && t ? timeline__parse(f, p, t, &ps) : -ENOMEM;
	fclose(f);
	if (err != -ENOMEM) {
		*present = true;
		*st = (struct summary_timeline){
			.path = l->timeline_path,
			.intervals = err ? 0 : timeline__nr(t),
			.malformed = err ? 1 : ps.malformed,
		};
		if (!err)
			st->info = *timeline__info(t);
		err = 0;
	}
	timeline__free(t);
	profile__free(p);
	return err;
}

int lane__decide(const struct lane *l, const struct lane_evidence *ev, struct lane_result *res)
{
	struct outcome_input oi = {
		.tool_available = ev->tool_available,
		.collector = ev->collector,
		.collector_ready = ev->collector_ready,
		.collector_stopped = ev->collector_stopped,
		.collector_timed_out = ev->collector_timed_out,
		.collector_errno = ev->collector_errno,
		.workload = ev->workload,
		.interrupted = ev->interrupted,
		.native_attached = ev->native_attached,
	};
	struct diagnostics diag;
	FILE *f;
	int err;

	if (ev->tool_available && !res->profile) {
		res->profile = profile__new();
		if (!res->profile)
			return -ENOMEM;
		err = lane__parse_capture(l, res->profile, &res->parse);
		res->parsed = err != -ENOENT;
		/* A capture we cannot read to the end is reported, not fatal. */
		if (err && err != -ENOENT && err != -EOVERFLOW)
			return err;
		if (err == -EOVERFLOW)
			integrity__add_loss(&res->integrity, "parse_overflow", 1, 0);
	}
	f = ev->tool_available ? fopen(l->diagnostics_path, "r") : NULL;
	if (f) {
		err = diagnostics__parse(f, &diag);
		fclose(f);
		if (err)
			return err;
		oi.diag = &diag;
	}
	oi.rows = res->profile ? profile__nr_rows(res->profile) : 0;
	if (res->profile) {
		oi.off_ns = profile__totals(res->profile)->all.off_ns;
		oi.intervals = profile__totals(res->profile)->all.count;
	}
	return outcome__decide(&oi, &res->integrity, &res->outcome);
}

int lane__write_summary(const struct lane *l, const struct summary_run *run,
			const struct sym_binary *bins, size_t nr_bins, struct lane_result *res)
{
	struct summary_input si;
	struct summary_timeline tl;
	bool have_tl;
	int err;

	err = read_timeline(l, &tl, &have_tl);
	if (err)
		return err;
	si = (struct summary_input){
		.lane = l,
		.outcome = &res->outcome,
		.integrity = &res->integrity,
		.profile = res->profile,
		.parse = res->parsed ? &res->parse : NULL,
		.run = run,
		.binaries = bins,
		.nr_binaries = nr_bins,
		.timeline = have_tl ? &tl : NULL,
	};
	return atomic_file__write(l->summary_path, put_summary, &si);
}

int lane__summarize(const struct lane *l, const struct lane_evidence *ev,
		    const struct summary_run *run, const struct sym_binary *bins, size_t nr_bins,
		    struct lane_result *res)
{
	int err = lane__decide(l, ev, res);

	return err ? err : lane__write_summary(l, run, bins, nr_bins, res);
}

void lane_result__free(struct lane_result *res)
{
	if (!res)
		return;
	profile__free(res->profile);
	res->profile = NULL;
}
