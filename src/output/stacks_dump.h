/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The "stacks" capture of the native collector, in the layout bpftrace prints
 * its maps in, so the stacks lane reads the same whoever collected it:
 *
 *     @offcpu_ns[
 *         kernel_inner
 *         ...
 *         kernel_outer
 *     ,
 *         user_inner
 *         ...
 *     , comm, PID, TID]: NANOSECONDS
 *
 * One entry per row (a thread's stack in one state; bpftrace's parser sums
 * entries with the same key), frames innermost first, as bpftrace prints them. Newlines and ", " in
 * names are replaced by '_'/';' so an entry cannot be misread.
 */
#ifndef OFFCPU_OUTPUT_STACKS_DUMP_H
#define OFFCPU_OUTPUT_STACKS_DUMP_H

#include <stdio.h>

#include "model/profile.h"

int stacks_dump__write(FILE *out, const struct profile *p);

#endif
