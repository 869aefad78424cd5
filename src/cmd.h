/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Subcommands. Each cmd_*.c parses its own options and calls modules; it
 * returns the process exit status. Usage errors exit 2 with a one-line message.
 *
 * The statuses every subcommand shares (docs/reliability.md, "Exit codes"):
 * one per kind of failure, whichever command meets it. 1 is left to results
 * that are not failures (diff: a gate crossed; doctor: cannot run here), and
 * record returns the workload's own status or 125-127 instead.
 */
#ifndef OFFCPU_CMD_H
#define OFFCPU_CMD_H

#define EXIT_USAGE 2  /* bad options or arguments; nothing was read or written */
#define EXIT_INPUT 3  /* an input cannot be used: missing, unreadable, cut short, unknown schema */
#define EXIT_OUTPUT 4 /* an output cannot be written */

int cmd_record(int argc, char **argv);
int cmd_summarize(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_flamegraph(int argc, char **argv);
int cmd_push(int argc, char **argv);

#endif
