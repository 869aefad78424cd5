/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One record run, shared by its two halves: record.c runs the workload and
 * the collector; record_dir.c owns the lane directory (created, locked,
 * staged, committed, given to the user) and the --json record. Not for use
 * outside src/lane/.
 */
#ifndef OFFCPU_LANE_RECORD_PRIV_H
#define OFFCPU_LANE_RECORD_PRIV_H

#include <stdbool.h>
#include <stdio.h>

#include "collect/identity.h"
#include "collect/native.h"
#include "collect/proc.h"
#include "lane/lane.h"
#include "lane/record.h"
#include "model/timeline.h"
#include "output/status_line.h"
#include "output/summary.h"
#include "symbolize/symbolize.h"

#define EXIT_OFFCPU_FAILED 125

/* Everything one run holds, so the steps below stay small. */
struct rec {
	struct record_opts *o;
	struct lane l;
	struct lane_evidence ev;
	struct lane_result res;
	struct summary_run run;
	struct identity id;
	struct proc work, coll;
	char **cargv, **cenv, **wenv;
	int cap_fd, diag_fd;
	/*
	 * The lane directory, open and flocked for the whole run. The new
	 * capture is written under staged names (st: the lane's paths + ".new")
	 * and renamed into place only once it is whole (commit_files): a record
	 * that fails before leaves the directory's earlier capture as it was.
	 */
	int dir_fd;
	int *made_fds; /* directories mkdir_p created: the only ones given away */
	size_t nr_made;
	struct lane st;
	bool locked; /* the staged names are ours only while we hold the lock */
	bool committed;
	/* Why the record failed, for the --json record (NULL: it did not). */
	const char *fail_kind;
	char fail_msg[512];
	FILE *diag;
	struct native *native;
	struct symbolizer *sym;
	struct timeline *timeline;  /* record --timeline */
	int interrupted_by;	    /* the first signal that asked offcpu to stop */
	int tty;		    /* offcpu's terminal, -1: none */
	bool gave_tty;		    /* the workload's group holds its foreground */
	uint64_t t0;		    /* when the workload was released */
	struct status_line *status; /* the live status line (a terminal, or --progress) */
	uint64_t next_draw;	    /* when it is redrawn next */
};

/* Say on stderr why the record failed and keep it for the --json record. */
void rec__fail(struct rec *r, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * Resolve whom the files are for, plan the lane and its staged names, check
 * that the target exists, then create, lock and open the directory. 0 or
 * -errno, said on stderr (and kept by rec__fail) before anything is touched
 * when the target is missing.
 */
int rec__prepare(struct rec *r);
/* The lane's file system is full: a failed write is said as ENOSPC. */
bool rec__disk_full(const struct rec *r);
/* Rename the staged capture into place, removing another capture's files. 0 or -errno. */
int rec__commit(struct rec *r);
/* The --json record, always one; a failed record says why. */
void rec__print_record(struct rec *r);
/* Remove what was staged and not committed, give what offcpu made to the user, unlock. */
void rec__close_dir(struct rec *r);

/* Signals (record.c): the first that asked offcpu to stop, 0: none. */
int rec__stop_signal(void);
/* Whether SIGHUP came since the last call (after rec__hup_reloads()). */
bool rec__take_hup(void);
/* From now on SIGHUP asks for a reload (rec__take_hup), not for the end. */
void rec__hup_reloads(void);

/* lane/continuous.c: the periods of record --every; offcpu's exit status. */
int continuous__run(struct rec *r);

#endif
