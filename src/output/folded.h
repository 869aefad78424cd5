/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Folded stacks out, in the format of `offcputime-bpfcc -f -d`, so FlameGraph
 * and every tool that reads BCC's output read ours unchanged:
 *
 *     comm;user_outer;...;user_inner;-;kernel_outer;...;kernel_inner MICROSECONDS
 *
 * One line per (thread, stack) summed over states, in row order. The "-" is
 * written only when the stack has both user and kernel frames (as BCC does).
 * Microseconds are rounded to nearest; rows under 0.5 us still print (as 0)
 * so no stack vanishes. An inlined function (FRAME_INLINE) has FlameGraph's
 * suffix "_[i]" after its name. Frame names containing ';' or newlines have those
 * bytes replaced by '_' (they would break the format), and so does a comm's
 * leading '#' (the line would read as a comment).
 */
#ifndef OFFCPU_OUTPUT_FOLDED_H
#define OFFCPU_OUTPUT_FOLDED_H

#include <stdio.h>

#include "model/profile.h"

int folded__write(FILE *out, const struct profile *p);

#endif
