/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Running a lane: the workload (or a target to watch), the collector beside
 * it, and the summary.
 *
 * Order of events (so that no early blocking is missed and nothing is lost):
 *   1. the output directory and its files are created (errors: before the
 *      workload runs, exit 125);
 *   2. the workload is forked held before exec: its pid is known;
 *   3. the collector starts, pointed at that pid, and is waited on until it is
 *      attached (the native collector: when native__start returns; external
 *      ones: observed, not slept on); a collector that fails here is
 *      classified and the workload runs anyway;
 *   4. the workload is released and waited for (or, for -p/-a/--cgroup, the
 *      duration passes). It leads its own process group; SIGINT/SIGTERM/
 *      SIGHUP/SIGQUIT sent to offcpu (a terminal's ^C included) are passed on
 *      to that group, a second one kills the group (SIGKILL), ^Z stops it
 *      with offcpu. At the duration the group gets deadline_signal, then
 *      SIGKILL after kill_after_ns, like timeout(1). Once offcpu has asked it
 *      to end (deadline, interrupt), what outlives the leader gets the same
 *      grace, then SIGKILL. Interrupted before the release, the workload
 *      never runs;
 *   5. the collector is stopped: native detaches and drains; external ones get
 *      SIGINT and stop_timeout_ms to flush, then SIGTERM, then SIGKILL;
 *   6. captures and the summary are written atomically, owned by the user the
 *      workload ran as; the workload's status is returned.
 *
 * The lane directory is flocked for the whole run (a second record into it
 * is refused). The new capture is written under staged names (NAME.new) and
 * renamed into place only when whole, the old summary removed first and the
 * new one written last: a record that fails leaves the earlier capture as it
 * was, or replaces it whole, never a mix. Only the directories offcpu
 * created and the files it wrote are given to the user, by fd.
 */
#ifndef OFFCPU_LANE_RECORD_H
#define OFFCPU_LANE_RECORD_H

#include <stdbool.h>

#include "collect/native.h"
#include "lane/lane.h"

enum record_target { TARGET_COMMAND = 0, TARGET_PIDS, TARGET_CGROUP, TARGET_HOST };

/*
 * Continuous mode (record --every, lane/continuous.c): the settings SIGHUP
 * may change, read again from the --config file by reload (set by the
 * caller; NULL: SIGHUP changes nothing). owner holds the strings, freed with
 * free_owner.
 */
struct continuous_opts {
	uint64_t keep_ns;	/* --keep: periods older are removed; 0: no limit */
	uint64_t keep_bytes;	/* --keep-size */
	const char *push_url;	/* --push */
	const char *push_auth;	/* --push-auth FILE */
	const char *push_spool; /* --push-spool; NULL: BASE/.push-spool */
	const char **labels;	/* --label K=V */
	size_t nr_labels;
	void *owner;
	void (*free_owner)(void *owner);
};

struct record_opts;
typedef int (*record_reload_fn)(const struct record_opts *o, struct continuous_opts *out, char *why,
				size_t whylen);

struct record_opts {
	const char *out_dir;
	enum lane_mode mode;
	const char *tool; /* NULL: the native collector */
	bool json;
	const char *json_path; /* --json=FILE; NULL or "-": offcpu's stdout */
	bool quiet;
	bool progress; /* the live status line even when stderr is not a terminal (or -q) */
	int ready_timeout_ms;
	int stop_timeout_ms;
	enum record_target target;
	const char *target_arg; /* the -p list or cgroup path, as given */
	int *pids;		/* -p, parsed (owned by the caller) */
	size_t nr_pids;
	uint64_t duration_ns;	   /* -d; 0: until the workload ends (or ^C) */
	int deadline_signal;	   /* sent to the workload's group at -d (0: SIGTERM) */
	uint64_t kill_after_ns;	   /* then SIGKILL after this grace (0: at once) */
	char **argv;		   /* the workload (TARGET_COMMAND) */
	const char *user;	   /* --user */
	bool as_root;		   /* --as-root */
	bool timeline;		   /* --timeline: write DIR/offcpu.timeline.txt (native) */
	uint64_t timeline_min_ns;  /* its threshold */
	bool no_inline;		   /* --no-inline: no inlined frames from DWARF (native) */
	struct native_opts native; /* target fields are filled by record__run */
	uint64_t every_ns;	   /* --every: one lane directory per period under out_dir */
	struct continuous_opts cont;
	const char *config;	 /* --config FILE */
	record_reload_fn reload; /* SIGHUP: the continuous settings from config again */
};

/* Returns the process exit status for offcpu (see offcpu(1)). */
int record__run(struct record_opts *o);

#endif
