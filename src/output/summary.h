/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * offcpu.summary.json (schema in docs/summary.md and docs/summary.schema.json)
 * and the one-line result record of `record --json`.
 *
 * The summary is what a benchmark harness trusts: state, caveat, capture
 * integrity with every loss, the workload's fate, totals, per-thread totals
 * and the top stacks. Callers write it through util/atomic_file so a reader
 * never sees half of it.
 */
#ifndef OFFCPU_OUTPUT_SUMMARY_H
#define OFFCPU_OUTPUT_SUMMARY_H

#include <stdint.h>
#include <stdio.h>

#include "analyze/outcome.h"
#include "model/lane.h"
#include "model/integrity.h"
#include "model/profile.h"
#include "model/timeline.h"
#include "parse/parse.h"
#include "parse/summary_json.h"
#include "symbolize/symbolize.h"

/* What was run or attached to. Strings are borrowed. */
struct summary_run {
	const char *target;	/* "command", "pids", "cgroup", "host" */
	char *const *argv;	/* the workload's argv (target "command"), NULL-terminated */
	const char *target_arg; /* the pids, cgroup path, ... for other targets */
	int pid;		/* the workload's pid, 0 when none */
	struct proc_end workload;
	/* "exit", "deadline", "interrupt"; NULL: no command ran */
	const char *ended_by;
	uint64_t wall_ns;	     /* workload (or capture) wall time */
	int64_t started_unix_ns;     /* when the capture started (CLOCK_REALTIME), 0: unknown */
	char *const *collector_argv; /* external collectors: how it was run */
};

/* A lane's timeline file (record --timeline), as read back. */
struct summary_timeline {
	const char *path;
	uint64_t intervals;
	uint64_t malformed; /* lines skipped (or 1 when it is no timeline at all) */
	struct timeline_info info;
};

struct summary_input {
	const struct lane *lane;
	const struct outcome *outcome;
	const struct integrity *integrity;
	const struct profile *profile;	 /* NULL when nothing was captured */
	const struct parse_stats *parse; /* NULL when nothing was parsed */
	const struct summary_run *run;	 /* NULL when unknown (summarize without a prior summary) */
	const struct sym_binary *binaries; /* frame-pointer verdicts, may be NULL */
	size_t nr_binaries;
	const struct summary_timeline *timeline; /* NULL: the lane has none */
	size_t top_n;				 /* top stacks to list; 0 means 20 */
};

int summary__write(FILE *out, const struct summary_input *in);
/* The seed's result record: kind, tool, paths, state, caveat; one JSON line. */
int summary__write_record(FILE *out, const struct summary_input *in);

#endif
