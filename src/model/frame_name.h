/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Frame names that are not symbols, spelled in one place so that every
 * collector writes them alike and every reader recognises them.
 *
 *   [unsymbolized 0x7f12ab34]   a raw address a collector printed instead of a
 *   [unsymbolized]              symbol (bpftrace's "0x7f12ab34"), or an unnamed
 *                               frame without its address (BCC's and perf's
 *                               "[unknown]"). Kind stays user or kernel, as the
 *                               collector placed it. The address is kept for a
 *                               human only: ASLR moves it from run to run, so
 *                               nothing may match stacks on it (analyze/diff.h).
 *   [bin+0x1a2b]                a file-relative address in a binary without a
 *                               symbol for it: stable across runs, a name.
 *   [unwind: REASON]            FRAME_MISSING marker at the root end of a user
 *   [unwind: REASON in BIN]     stack the unwinder could not finish; BIN is the
 *                               basename of the binary where the walk stopped.
 *
 * Raw words ("0x7f12ab34", "[unknown]") still arrive from old profiles and
 * from the native collector's frame-pointer walk; frame_name__unsymbolized()
 * recognises both spellings.
 */
#ifndef OFFCPU_MODEL_FRAME_NAME_H
#define OFFCPU_MODEL_FRAME_NAME_H

#include <stdbool.h>
#include <stddef.h>

#define FRAME_NAME_UNSYMBOLIZED "[unsymbolized]"

/*
 * The frame of a signal trampoline (where a handler returns to): the frames
 * under it, towards the root, are the code the signal interrupted, not
 * callers of what runs above it. As gdb names it.
 */
#define FRAME_NAME_SIGNAL "[signal handler called]"

/* s[0..len) is a raw, collector-printed non-name: "0x" and 1 to 16 hex digits, or "[unknown]". */
bool frame_name__is_raw(const char *s, size_t len);
/*
 * The name a raw frame s[0..len) gets: "[unsymbolized 0xADDR]" or
 * "[unsymbolized]", NUL-terminated in buf. Returns its length (cut to fit).
 */
size_t frame_name__unsymbolize(const char *s, size_t len, char *buf, size_t size);
/* A frame without a symbol and without a stable address: raw or "[unsymbolized...]". */
bool frame_name__unsymbolized(const char *name);

/* An "[unwind: ...]" marker, split; the strings point into the name and are not terminated. */
struct unwind_marker {
	const char *reason;
	size_t reason_len;
	const char *binary; /* NULL when the marker names none */
	size_t binary_len;
};
/* Whether name is an "[unwind: ...]" marker; fills m (may be NULL) when it is. */
bool frame_name__unwind_marker(const char *name, struct unwind_marker *m);

#endif
