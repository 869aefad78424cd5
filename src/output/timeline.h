/* SPDX-License-Identifier: GPL-2.0-only */
/* The timeline text, writer side; the format is described in parse/timeline.h. */
#ifndef OFFCPU_OUTPUT_TIMELINE_H
#define OFFCPU_OUTPUT_TIMELINE_H

#include <stdio.h>

#include "model/profile.h"
#include "model/timeline.h"

/*
 * Write t in the text form; every interval's stack must be a stack of p
 * (-EINVAL otherwise, before anything is written). Returns 0, -EINVAL,
 * -ENOMEM or -EIO.
 */
int timeline__write(FILE *out, const struct timeline *t, const struct profile *p);

#endif
