/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The terminal options that report and diff share: --color, --width, the
 * numbers they take, and what "no evidence" means for the banner; and
 * --reasons FILE, which report, diff, flamegraph and export share.
 */
#ifndef OFFCPU_OUTPUT_TERM_OPTS_H
#define OFFCPU_OUTPUT_TERM_OPTS_H

#include <stdbool.h>

#include "model/integrity.h"

/*
 * --color=WHEN: "always", "never", or "auto" (stdout is a terminal and
 * NO_COLOR is unset or empty, per no-color.org). 0, or -EINVAL.
 */
int term_opts__color(const char *when, bool *color);
/* The terminal's width when stdout is one, else $COLUMNS, else 80. */
int term_opts__width(void);
/* A decimal integer in [min, max]. 0, or -EINVAL. */
int term_opts__int(const char *s, int min, int max, int *out);
/*
 * A capture whose integrity nothing vouched for (no diagnostics, no
 * counters: evidence 0) is UNKNOWN, not complete.
 */
void term_opts__settle_integrity(struct integrity *in);
/*
 * --reasons FILE: read a rules file (analyze/reasons.h) and use it before the
 * shipped rules. On failure says why on stderr in one line, "offcpu CMD:
 * FILE:LINE: what", and returns -errno (the command exits 2: a bad value).
 */
int term_opts__reasons(const char *cmd, const char *path);

#endif
