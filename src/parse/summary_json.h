/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading offcpu.summary.json back (json-c), for `summarize` (which keeps the
 * workload's record when it rewrites a summary), `report` and `diff`.
 * Only the metadata is read here; stacks come from the capture itself.
 */
#ifndef OFFCPU_PARSE_SUMMARY_JSON_H
#define OFFCPU_PARSE_SUMMARY_JSON_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "model/integrity.h"
#include "model/run.h"

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

#endif
