/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Was this binary built with frame pointers? Frame-pointer unwinding, which
 * the kernel does for user stacks, stops at the first function without one;
 * the summary says so rather than leave the reader with truncated stacks.
 *
 * Go programs have frame pointers on both architectures, always. For the
 * rest, three witnesses, asked in turn until one is sure:
 *
 * 1. The unwind tables (.eh_frame, else .debug_frame), which exist even in
 *    stripped binaries: at FP_CFI_SAMPLES addresses spread evenly over the
 *    executable segments, is the CFA computed from the frame pointer (%rbp,
 *    x29)? In code built with frame pointers it is, everywhere but in
 *    prologues, epilogues and frameless leaf functions. Tables that cover
 *    little of the code (FP_MIN_CFI_PCT) are only the C runtime's: no answer.
 * 2. The code of up to FP_SAMPLE functions from the symbol table: does it set
 *    the frame pointer within its first bytes (x86-64: mov %rsp,%rbp
 *    anywhere there, as scheduling and shrink-wrapping move it; arm64:
 *    "add x29, sp, #N")?
 * 3. The DW_AT_producer of the compile units, when GCC recorded
 *    -fno-omit-frame-pointer or -fomit-frame-pointer there.
 *
 * At least FP_PRESENT_PCT percent of the samples give FP_PRESENT, at most
 * FP_ABSENT_PCT give FP_ABSENT, anything between (a binary built from mixed
 * objects) or too few samples ask the next witness; x86-64 and arm64 only.
 */
#ifndef OFFCPU_SYMBOLIZE_FP_H
#define OFFCPU_SYMBOLIZE_FP_H

#include <elfutils/libdwfl.h>

#include "symbolize/symbolize.h"

#define FP_CFI_SAMPLES 512
#define FP_MIN_CFI 16
#define FP_MIN_CFI_PCT 25 /* of the probes must land in unwind tables */
#define FP_SAMPLE 256
#define FP_MIN_FUNCS 4
#define FP_PRESENT_PCT 50
#define FP_ABSENT_PCT 20

/* The verdict for the module's main ELF file (its symbols may come from debuginfo). */
enum fp_verdict fp__detect(Dwfl_Module *mod);

#endif
