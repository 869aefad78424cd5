/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The lossless profile text format, reader side; the format is described in
 * output/profile_text.h. Reading a file that profile_text__write() produced
 * into an empty profile gives back the same frames, stacks, threads, thread
 * times, rows (ids and order included) and runq_known flag. Reading into a
 * profile that already has data merges: the file's ids are mapped onto the
 * profile's, same (thread, stack, state) rows sum. runq_known is taken from
 * the file when the profile had no rows; in a merge it stays true only when
 * both say so, since the file's rows (or the profile's) carry no run-queue split.
 *
 * Malformed records (bad numbers or escapes, unknown or out-of-order ids,
 * runq_ns > off_ns) are counted in stats and skipped. A missing "end" line, or
 * one whose sums differ from the rows read, is -EBADMSG: the file was cut (or
 * damaged) and is not the profile that was written; stats->error_line is the
 * last line read (or the end line) and error_reason says which. Returns 0 at
 * EOF, -EINVAL when the first line is not PROFILE_TEXT_MAGIC (nothing is added
 * then), -EBADMSG, -EOVERFLOW (stats->error_line), -ENOMEM or -EIO, as
 * parse/parse.h says.
 */
#ifndef OFFCPU_PARSE_PROFILE_TEXT_H
#define OFFCPU_PARSE_PROFILE_TEXT_H

#include <stdio.h>

#include "model/profile.h"
#include "parse/parse.h"

int profile_text__parse(FILE *in, struct profile *p, struct parse_stats *stats);

#endif
