/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The lossless profile text format, writer side; the format is described in
 * parse/profile_text.h, with the reader.
 */
#ifndef OFFCPU_OUTPUT_PROFILE_TEXT_H
#define OFFCPU_OUTPUT_PROFILE_TEXT_H

#include <stdio.h>

#include "model/profile.h"

/* Write all of p. Returns 0, or -EIO when out reports an error. */
int profile_text__write(FILE *out, const struct profile *p);

#endif
