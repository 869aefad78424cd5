/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A lane: one capture directory and the collector that fills it.
 *
 *   DIR/offcpu.time.txt    capture, mode "time": folded stacks, microseconds
 *                          (BCC's `-f` format, so FlameGraph reads it unchanged)
 *   DIR/offcpu.stacks.txt  capture, mode "stacks": bpftrace map dump
 *   DIR/offcpu.diagnostics.txt  the collector's own stderr, nothing else
 *   DIR/offcpu.summary.json     the summary (docs/summary.md)
 *   DIR/offcpu.profile.txt      native collector only: the lossless profile
 *                               (threads, states, run-queue split) that report
 *                               and the exports read; see parse/profile_text.h
 *
 * lane__load() builds the profile model from a directory: the lossless
 * profile when present, else the capture through its parser. Every writer
 * (report, flame graph, exports, diff) starts from it; none re-parses another
 * writer's output.
 */
#ifndef OFFCPU_LANE_LANE_H
#define OFFCPU_LANE_LANE_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include "analyze/outcome.h"
#include "collect/collectors.h"
#include "model/integrity.h"
#include "model/lane.h"
#include "model/profile.h"
#include "model/run.h"
#include "parse/parse.h"

/* Fill l's paths for dir; tool NULL picks the mode's default collector. */
int lane__plan(struct lane *l, const char *dir, enum lane_mode mode, const char *tool);

/* Parse l's capture (folded or bpftrace dump, by mode) into p. -ENOENT when absent. */
int lane__parse_capture(const struct lane *l, struct profile *p, struct parse_stats *st);

/*
 * Results of loading a lane directory. Every subcommand that reads one
 * (report, flamegraph, export, diff, summarize) goes through lane__load or
 * lane__load_planned, prints ld.error when it fails and lane_load__warn()
 * when it does not, so the same input gets the same words and the same exit
 * status (docs/reliability.md, "Exit codes") whichever command reads it.
 */
struct lane_load {
	struct parse_stats parse;
	struct integrity integrity;
	bool from_profile; /* read offcpu.profile.txt */
	bool capture_found;
	char path[PATH_MAX]; /* the file read: the profile, else the capture */
	/* When the load failed: one line, "FILE:LINE: what" (FILE: what when no line). */
	char error[2 * PATH_MAX + 256];
	/* A summary that could not be read (the load went on without it); "" if none. */
	char summary_problem[PATH_MAX + 256];
};
/*
 * Load dir (mode and files detected; the tool and kernel-side losses from its
 * summary) into a new profile *out. Returns 0, or -errno with ld->error set
 * and *out NULL: -ENOENT dir holds no capture (or is missing), -ENOTDIR,
 * -EPROTO its summary has a schema_version this offcpu does not read,
 * -EBADMSG the profile was cut short, -EOVERFLOW, -EINVAL (not a profile),
 * -EIO, -ENOMEM. Malformed lines are not errors: they are in ld->parse.
 */
int lane__load(const char *dir, struct profile **out, struct lane *l, struct lane_load *ld);
/* The same for a lane already planned (mode and tool chosen); reads no summary. */
int lane__load_planned(const struct lane *l, struct profile **out, struct lane_load *ld);
/*
 * Print what a successful load should warn about, one line each, "offcpu CMD: ...";
 * a partial capture is left to `report`'s banner when cmd is "report".
 */
void lane_load__warn(const struct lane_load *ld, const char *cmd, FILE *out);

/*
 * Summarizing a lane after a run. Evidence is everything the outcome needs
 * besides what is in the directory (diagnostics, capture): how the collector
 * and the workload ended. The workload's stderr is never part of it.
 */
struct lane_evidence {
	bool tool_available;
	struct proc_end collector;
	bool collector_ready;
	bool collector_stopped;
	bool collector_timed_out;
	int collector_errno;
	struct proc_end workload;
	bool interrupted;
	/*
	 * The built-in collector was attached to the target and drained: it
	 * can tell "no off-CPU time" from "nothing captured", which an
	 * external collector cannot.
	 */
	bool native_attached;
};

struct summary_run;
struct sym_binary;

struct lane_result {
	struct outcome outcome;
	struct integrity integrity;
	struct parse_stats parse;
	bool parsed;		 /* the capture was parsed (parse is meaningful) */
	struct profile *profile; /* owned, freed by lane_result__free */
};

/*
 * Parse the capture into res->profile (unless the caller set res->profile:
 * the native collector's, with its losses already in res->integrity), read
 * the diagnostics, decide the outcome and write the summary atomically.
 * Returns 0 when the summary was written (whatever the state), or -errno
 * (an unreadable capture is not an error: it is a tool_failed outcome).
 */
int lane__summarize(const struct lane *l, const struct lane_evidence *ev,
		    const struct summary_run *run, const struct sym_binary *bins, size_t nr_bins,
		    struct lane_result *res);
/* lane__summarize in two steps, for a caller that looks at the outcome before writing. */
int lane__decide(const struct lane *l, const struct lane_evidence *ev, struct lane_result *res);
int lane__write_summary(const struct lane *l, const struct summary_run *run,
			const struct sym_binary *bins, size_t nr_bins, struct lane_result *res);
void lane_result__free(struct lane_result *res);

#endif
