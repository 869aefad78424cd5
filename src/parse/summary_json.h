/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading offcpu.summary.json back (json-c), for `summarize` (which keeps the
 * workload's record when it rewrites a summary), `report` and `diff`.
 * summary_json__read() reads the metadata; summary_json__read_weights() the
 * totals, threads and top stacks, for `diff` against a summary alone.
 */
#ifndef OFFCPU_PARSE_SUMMARY_JSON_H
#define OFFCPU_PARSE_SUMMARY_JSON_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "model/integrity.h"
#include "model/profile.h"
#include "model/run.h"

/* The summary format this offcpu writes and the only one it reads (docs/summary.md). */
#define SUMMARY_SCHEMA_VERSION 1

struct summary_meta {
	int schema_version;
	char tool[PATH_MAX];
	char mode[16];
	char collector[16];
	char state[32];
	struct integrity integrity;
	/* The workload, when the summary had one. */
	bool has_workload;
	char target[16];
	char **argv; /* NULL-terminated, owned; NULL when none */
	int pid;
	struct proc_end workload;
	char ended_by[16]; /* "exit", "deadline", "interrupt"; "" when absent */
	uint64_t wall_ns;
	int64_t started_unix_ns;
};

/*
 * 0, -EINVAL (not JSON, or not a summary), -EPROTO (a schema_version other
 * than SUMMARY_SCHEMA_VERSION, or none), -errno; why (may be NULL) says what
 * is wrong for -EINVAL and -EPROTO.
 */
int summary_json__read(FILE *in, struct summary_meta *m, char *why, size_t why_len);
int summary_json__read_path(const char *path, struct summary_meta *m, char *why, size_t why_len);
void summary_meta__free(struct summary_meta *m);

/* A weight as the summary has it; a field that is absent (or null) is not "has". */
struct summary_weight {
	uint64_t off_ns, count;
	uint64_t runq_ns;
	bool has_runq; /* false: null, the collector did not split run-queue time */
	uint64_t blocked_ns;
	bool has_blocked;
};

struct summary_thread {
	char *comm; /* "" when the summary has none */
	struct summary_weight w;
};

struct summary_stack {
	uint32_t stack; /* id in the profile given to summary_json__read_weights() */
	struct summary_weight w;
};

struct summary_weights {
	struct summary_weight totals;
	uint64_t wall_ns; /* workload.wall_ns, 0 when absent */
	struct summary_thread *threads;
	size_t nr_threads;
	struct summary_stack *stacks; /* top_stacks, in the summary's order */
	size_t nr_stacks;
	bool has_stacks; /* the summary lists top stacks */
};

/*
 * Read the weights of a summary into *w, interning the top stacks' frames and
 * stacks into p. Only "totals" is required of the document. 0; -EINVAL with
 * why ("not JSON: ...", no "totals" object, "top_stacks[N]: a frame without
 * name or kind"); -ENOMEM. *w is empty on error; free it with
 * summary_weights__free().
 */
int summary_json__read_weights(FILE *in, struct profile *p, struct summary_weights *w, char *why,
			       size_t why_len);
void summary_weights__free(struct summary_weights *w);

#endif
