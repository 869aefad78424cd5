/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The thread filters as report, flamegraph and export take them (analyze/filter.h):
 * one parser and one "nothing matched" message for the three.
 */
#ifndef OFFCPU_CMD_FILTERS_H
#define OFFCPU_CMD_FILTERS_H

#include "analyze/filter.h"

/*
 * The getopt long options, to append to a command's table; their vals are
 * CMD_FILTER_PID and CMD_FILTER_COMM (report parses its own --top; the
 * others use CMD_FILTER_TOP).
 */
enum { CMD_FILTER_PID = 0x1000, CMD_FILTER_COMM, CMD_FILTER_TOP };

/*
 * Take option c (one of the above) with its argument into *f, made on the
 * first option (NULL until then: no filter). Returns 0, or EXIT_USAGE after
 * one line on stderr ("offcpu CMD: ..."), 1 out of memory.
 */
int cmd_filters__option(const char *cmd, struct filter **f, int c, const char *arg);

/*
 * Replace *p (and *t, when t and *t) by their filtered copies when f is
 * active (f may be NULL). Returns 0; EXIT_INPUT after one line on stderr when no thread is
 * selected (nothing is written then); 1 on out of memory.
 */
int cmd_filters__apply(const char *cmd, const struct filter *f, struct profile **p,
		       struct timeline **t, struct filter_result *res);

#endif
