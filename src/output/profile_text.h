/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The lossless profile text format, writer side (reader: parse/profile_text.h).
 *
 * One record a line, fields separated by one space, names last and escaped:
 *
 *     # offcpu profile v1                   first line, always
 *     runq_known 0|1
 *     frame ID KIND NAME                    KIND: u user, k kernel, m missing
 *     stack ID FRAME_ID...                  root first; no frame ids: empty stack
 *     thread ID PID TID COMM                COMM may be empty (nothing after TID)
 *     time THREAD WALL_NS ONCPU_NS RUNQ_NS  profile__set_thread_time()
 *     row THREAD STACK STATE COUNT OFF_NS RUNQ_NS   STATE: ? S D R O
 *     end ROWS COUNT OFF_NS RUNQ_NS         sums of this file's rows; last line
 *
 * Ids are the profile's own, written in id order, every definition before its
 * first use. Names escape '\\' as "\\\\", space as "\\s", tab, CR and LF as
 * "\\t", "\\r", "\\n", and other bytes below 0x20 and 0x7f as "\\xHH"; so a
 * record never holds a raw space inside a field, and trailing blanks carry no
 * meaning. The "end" line, written last, lets a reader tell a complete file
 * from a cut one: parse/profile_text.h refuses a file without it (-EBADMSG).
 * Lines starting with '#' after the first are comments.
 */
#ifndef OFFCPU_OUTPUT_PROFILE_TEXT_H
#define OFFCPU_OUTPUT_PROFILE_TEXT_H

#include <stdio.h>

#include "model/profile.h"

#define PROFILE_TEXT_MAGIC "# offcpu profile v1"

/* Write all of p. Returns 0, or -EIO when out reports an error. */
int profile_text__write(FILE *out, const struct profile *p);

#endif
