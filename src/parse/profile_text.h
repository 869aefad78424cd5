/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The lossless profile text format, reader side (writer: output/profile_text.h).
 *
 * One record a line, fields separated by one space, names last and escaped:
 *
 *     # offcpu profile v1                   first line, always
 *     runq_known 0|1
 *     frame ID KIND NAME                    KIND: u user, k kernel, m missing,
 *                                           i inline (a user function inlined
 *                                           into the frame before it)
 *     stack ID FRAME_ID...                  root first; no frame ids: empty stack
 *     thread ID PID TID COMM                COMM may be empty (nothing after TID)
 *     time THREAD WALL_NS ONCPU_NS RUNQ_NS [IDLE_EXIT_NS]
 *                                           profile__set_thread_time()
 *     row THREAD STACK STATE COUNT OFF_NS RUNQ_NS   STATE: ? S D R O
 *     end ROWS COUNT OFF_NS RUNQ_NS         sums of this file's rows; last line
 *
 * Kind 'i' and IDLE_EXIT_NS (written when not 0) came later than the others:
 * files without them read as before.
 * Ids are the profile's own, written in id order, every definition before its
 * first use. Names escape '\\' as "\\\\", space as "\\s", tab, CR and LF as
 * "\\t", "\\r", "\\n", and other bytes below 0x20 and 0x7f as "\\xHH"; so a
 * record never holds a raw space inside a field, and trailing blanks carry no
 * meaning. The "end" line, written last, lets a reader tell a complete file
 * from a cut one: the reader refuses a file without it (-EBADMSG).
 * Lines starting with '#' after the first are comments.
 *
 * Reading a file that profile_text__write() produced
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

#define PROFILE_TEXT_MAGIC "# offcpu profile v1"

int profile_text__parse(FILE *in, struct profile *p, struct parse_stats *stats);

#endif
