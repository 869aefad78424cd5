/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * speedscope export: the profile as a speedscope JSON file
 * (https://www.speedscope.app/file-format-schema.json), for
 * https://www.speedscope.app and the speedscope CLI.
 *
 *   shared.frames   every profile frame, index = frame id; kernel frames carry
 *                   "file": "[kernel.kallsyms]" so a name in both spaces
 *                   stays two frames; an inlined function's name ends in
 *                   " (inlined)" (speedscope has no field for it)
 *   profiles        one "sampled" profile per thread, heaviest first (so
 *                   activeProfileIndex 0 opens on it), named
 *                   "COMM pid PID tid TID" (just COMM when pid/tid are unknown);
 *                   one sample per profile row: the stack root first, weight
 *                   off_ns, unit "nanoseconds", startValue 0, endValue the
 *                   thread's total
 *
 * A profile whose rows carry counts but no time (bpftrace "stacks" captures)
 * is written with weights = count and unit "none" instead, so the stacks stay
 * visible. Threads without rows are left out.
 */
#ifndef OFFCPU_OUTPUT_SPEEDSCOPE_H
#define OFFCPU_OUTPUT_SPEEDSCOPE_H

#include <stdio.h>

#include "model/profile.h"

struct speedscope_opts {
	const char *name;     /* the file's profile-group name; NULL: "offcpu" */
	const char *exporter; /* e.g. "offcpu 0.1.0"; NULL: "offcpu" */
};

/* opts may be NULL. Returns 0, -ENOMEM, -EINVAL (a row names a missing stack or thread), -EIO. */
int speedscope__write(FILE *out, const struct profile *p, const struct speedscope_opts *opts);

#endif
