/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Running a lane: the workload, the collector beside it, and the summary.
 *
 * Order of events (so that no early blocking is missed and nothing is lost):
 *   1. the output directory and its files are created (errors: before the
 *      workload runs, exit 125);
 *   2. the workload is forked held before exec: its pid is known;
 *   3. the collector starts, pointed at that pid, and is waited on until it is
 *      attached (observed, not slept on); a collector that fails here is
 *      classified and the workload runs anyway;
 *   4. the workload is released and waited for; SIGINT/SIGTERM/SIGHUP sent to
 *      offcpu are forwarded to it (a terminal's ^C reaches it directly);
 *   5. the collector is stopped with SIGINT and given stop_timeout_ms to flush,
 *      then SIGTERM, then SIGKILL (classified as collector_timeout);
 *   6. the summary is written atomically; the workload's status is returned.
 */
#ifndef OFFCPU_LANE_RECORD_H
#define OFFCPU_LANE_RECORD_H

#include <stdbool.h>

#include "lane/lane.h"

struct record_opts {
	const char *out_dir;
	enum lane_mode mode;
	const char *tool; /* NULL: the default collector */
	bool json;
	bool quiet;
	int ready_timeout_ms;
	int stop_timeout_ms;
	char **argv; /* the workload */
};

/* Returns the process exit status for offcpu (see offcpu(1)). */
int record__run(const struct record_opts *o);

#endif
