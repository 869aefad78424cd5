/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Text for terminals, shared by the report and diff writers: durations in
 * human units, and lines that never pass a width.
 *
 * A term_line writes straight to its FILE * and counts display columns (UTF-8
 * continuation bytes take none). Text that does not fit is cut on a character
 * boundary and ends in "..."; control bytes in names (a comm may hold any
 * byte) are shown as '?', so no input can move the cursor or change colours.
 * Colour escapes are written only when the line was begun with color true and
 * never count as columns.
 */
#ifndef OFFCPU_OUTPUT_TERM_H
#define OFFCPU_OUTPUT_TERM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyze/reasons.h"

/*
 * ns as three significant digits in the largest fitting unit: "0", "850ns",
 * "12.3us", "4.56ms", "1.23s", "12.3s", "1234s". At most 7 columns below
 * 10000 s. Returns buf; size >= 16.
 */
char *term__ns(uint64_t ns, char *buf, size_t size);
/* n and its noun: "1 thread", "2 threads", "0 threads" (one, many). Returns buf. */
char *term__count(uint64_t n, const char *one, const char *many, char *buf, size_t size);
/* A signed change of ns: "+1.23ms", "-850ns", "0". size >= 16. */
char *term__ns_delta(uint64_t from, uint64_t to, char *buf, size_t size);
/* A share as a percentage: "45.2%", "100%", "<0.1%", "0%". size >= 8. */
char *term__pct(double share, char *buf, size_t size);

struct term_line {
	FILE *out;
	int width;
	int col;
	bool color;
	bool colored; /* an escape is open */
};

void term_line__begin(struct term_line *l, FILE *out, int width, bool color);
/* Columns left on the line. */
int term_line__left(const struct term_line *l);
/* Text, cut with "..." to at most max columns (max < 0: the rest of the line). */
void term_line__text(struct term_line *l, const char *s, int max);
/* Text right-aligned in a field of `field` columns (cut if longer). */
void term_line__right(struct term_line *l, const char *s, int field);
/* Text left-aligned in a field, padded with spaces. */
void term_line__left_in(struct term_line *l, const char *s, int field);
/* Spaces up to column col (nothing when already there). */
void term_line__pad(struct term_line *l, int col);
/* Start an SGR colour ("1", "31", "1;33"); NULL ends it. No-op without colour. */
void term_line__color(struct term_line *l, const char *sgr);
/* Close any colour and end the line. */
void term_line__end(struct term_line *l);

/* Display columns of s (as term_line__text would count them). */
int term__cols(const char *s);

/*
 * The columns of the longest start of s, at most max, that does not end
 * inside square brackets: where a frame name may be cut. 0 when none (s
 * starts with '[' and does not fit whole), so "[postgres+0x1a2b3c]" or
 * "[unwind: no CFI in libfoo.so.1]" is shown whole or not at all.
 */
int term__cut_cols(const char *s, int max);

/*
 * "      LABEL a <- b <- c": frames on one line, each cut with "..." to leave
 * room for the next (the last takes the rest), never inside square brackets
 * (term__cut_cols). A name that cannot be cut so goes whole on a continuation
 * line under the first frame (an address name cut short would name nothing),
 * going on to the next lines when it is longer than one: no line passes the
 * width. suffix[i] (NULL or the array NULL: none, e.g. " (inlined)") follows
 * the name and is kept when the name is cut.
 */
void term__frames(FILE *out, int width, bool color, const char *label, const char *const *names,
		  const char *const *suffix, size_t n);

/* The SGR colour of a reason in the report and the diff; NULL for none. */
const char *term__reason_color(enum reason r);
/* The flame graph's fill of a reason, from the same table: {r, g, b}. */
const unsigned char *term__reason_rgb(enum reason r);

#endif
