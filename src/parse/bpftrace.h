/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * bpftrace map dumps as printed at exit (and by print(@map)), several maps in
 * one file, other output (printf lines, "Attaching N probes...") between them:
 *
 *     @offcpu_ns[
 *         __schedule+1576
 *         schedule+35
 *     ,
 *         0x7f7c36c5d503
 *     , sleep, 2451, 2451]: 300141379
 *
 *     @name[kstack]: N            one stack key
 *     @[kstack, ustack, comm]: N  several keys; an empty stack prints as nothing
 *     @name: N                    scalar map (skipped)
 *     @start[1234]: 5678          non-stack map (skipped)
 *
 * Keys: a stack key is a run of indented frame lines; scalar keys are text.
 * Stack keys are kernel or user by position and content: the first stack of a
 * map is the kernel stack and the second the user stack, unless the map name
 * says (contains "user"/"ustack" or "kernel"/"kstack"); a frame address at or
 * above 0xffff800000000000 is kernel whatever its position. Of the scalar keys,
 * the first non-numeric one is the comm, the first number the pid (tgid) and
 * the second the tid.
 *
 * Frames: bpftrace prints them innermost first; the stack is stored root first,
 * user stacks before kernel stacks. "sym+1576" and "sym+0x628" lose the offset;
 * raw addresses ("0x7f7c36c5d503") become "[unsymbolized 0x7f7c36c5d503]"
 * (model/frame_name.h); perf-mode lines ("7f7c36c5d503 sym+19
 * (/usr/lib/libc.so.6)") keep only the symbol, "[unknown]" becomes
 * "[unsymbolized]".
 *
 * Values: map names ending "_ns", "_us", "_ms" or "_s" hold time in that unit
 * (count 1 per key); any other name holds a count (off_ns 0). bpftrace's
 * histogram and stats output (lines starting "[" or "count ") is skipped.
 * Malformed: a value that is not a non-negative integer, a key that does not
 * split into elements, an entry cut short (by another entry or EOF), NUL bytes.
 * Other lines (printf output, "Attaching N probes...") count as skipped.
 */
#ifndef OFFCPU_PARSE_BPFTRACE_H
#define OFFCPU_PARSE_BPFTRACE_H

#include <stdio.h>

#include "model/profile.h"
#include "parse/parse.h"

int bpftrace__parse(FILE *in, struct profile *p, struct parse_stats *stats);

#endif
