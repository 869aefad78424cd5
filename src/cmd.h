/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Subcommands. Each cmd_*.c parses its own options and calls modules; it
 * returns the process exit status. Usage errors exit 2 with a one-line message.
 */
#ifndef OFFCPU_CMD_H
#define OFFCPU_CMD_H

int cmd_record(int argc, char **argv);
int cmd_summarize(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_flamegraph(int argc, char **argv);

#endif
