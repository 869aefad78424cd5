/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Folded stacks, as `offcputime-bpfcc -f [-d]` and FlameGraph's stackcollapse
 * scripts write them, one record a line:
 *
 *     comm;user_outer;...;user_inner;-;kernel_outer;...;kernel_inner VALUE
 *
 * The first field is the thread's comm (pid/tid unknown: 0). "-" separates user
 * from kernel frames. Without it, a frame ending in "_[k]" is kernel (the suffix
 * is removed), and otherwise frames from the first well-known kernel entry point
 * (entry_SYSCALL_64*, do_syscall_64, ret_from_fork*, asm_*, ...) on are kernel.
 * A user frame ending in "_[i]" (FlameGraph's mark, stackcollapse-perf.pl
 * --inline) is an inlined function, FRAME_INLINE, the suffix removed.
 * "[Missed User Stack]" and "[Missed Kernel Stack]" become FRAME_MISSING frames.
 * Frames printed without a name, "[unknown]" and raw "0x7f12ab34", become
 * "[unsymbolized]" and "[unsymbolized 0x7f12ab34]" (model/frame_name.h).
 * VALUE is a decimal integer after the last blank; it is multiplied by
 * value_scale_ns to give off_ns (BCC writes microseconds: 1000) and the row's
 * count is 1 per line unless count_only is set (VALUE is a count, off_ns 0).
 *
 * Accepted: CRLF line ends, blank lines, comment lines starting with '#'
 * (skipped), very long lines (no fixed limit). Malformed: no value, a value
 * that is not a non-negative integer, an empty comm, NUL bytes in a line.
 * opts may be NULL (microseconds, not count_only); stats may be NULL.
 */
#ifndef OFFCPU_PARSE_FOLDED_H
#define OFFCPU_PARSE_FOLDED_H

#include <stdbool.h>
#include <stdio.h>

#include "model/profile.h"
#include "parse/parse.h"

struct folded_opts {
	uint64_t value_scale_ns; /* 0 means 1000 (microseconds) */
	bool count_only;
};

int folded__parse(FILE *in, struct profile *p, const struct folded_opts *opts,
		  struct parse_stats *stats);

#endif
