/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The external collector lanes: BCC's offcputime (mode time, collect/bcc.c)
 * and bpftrace (mode stacks, collect/bpftrace.c), or any tool that speaks
 * their output format.
 *
 * The collector runs beside the workload, pointed at the workload's pid (the
 * workload is held before exec until the collector is attached), with its
 * stdout as the capture and its stderr as the diagnostics:
 *
 *   BCC:      TOOL -f -d -p PID                  (folded, "-" between user and kernel)
 *   bpftrace: TOOL -o CAPTURE -e SCRIPT PID      (share/offcpu.bt, follows forks)
 *
 * The workload's argv never passes through a shell or a joined string: it is
 * exec'd by offcpu itself, so spaces, quotes, $() and globs arrive intact.
 */
#ifndef OFFCPU_COLLECT_EXTERNAL_H
#define OFFCPU_COLLECT_EXTERNAL_H

#include <stddef.h>

#include "model/lane.h"

/*
 * The collector's argv for lane l run as tool_path against pid: a
 * NULL-terminated, malloc'ed vector freed by external__argv_free(). NULL with
 * errno on failure (EINVAL: l's collector is built in).
 */
char **external__argv(const struct lane *l, const char *tool_path, int pid);
void external__argv_free(char **argv);

/* The environment for the collector: ours plus its tuning (bpftrace's map size). */
char **external__envp(const struct lane *l);
void external__envp_free(char **envp);

/* A malloc'ed, NULL-terminated copy of items[0..n); NULL with errno. For argv builders. */
char **external__vec(const char *const *items, size_t n);

#endif
