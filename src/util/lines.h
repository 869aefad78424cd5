/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A line reader for the parsers: big fread()s into one growing buffer, lines
 * found with memchr, no copy and no allocation per line, no limit on length.
 *
 * A line is returned without its '\n' and without one '\r' before it (CRLF
 * input reads as LF input); it may contain NUL bytes, so it comes with its
 * length and is not NUL-terminated. The pointer is valid until the next call.
 * A final line without '\n' is still a line; an empty input has no lines.
 */
#ifndef OFFCPU_UTIL_LINES_H
#define OFFCPU_UTIL_LINES_H

#include <stddef.h>
#include <stdio.h>

struct line_reader;

struct line_reader *line_reader__new(FILE *in);
void line_reader__free(struct line_reader *lr);
/* 1 and a line, 0 at EOF, -EIO on a read error, -ENOMEM. */
int line_reader__next(struct line_reader *lr, const char **line, size_t *len);
/*
 * The line line_reader__next() returns next, when it is already read whole
 * (no I/O happens here): 1 and the line, else 0. A look ahead only, for
 * prefetching: the line is not consumed, the line number does not move, and
 * the pointer is valid until the next call of either function.
 */
int line_reader__peek(struct line_reader *lr, const char **line, size_t *len);
/* The same for the line after that one. */
int line_reader__peek2(struct line_reader *lr, const char **line, size_t *len);
/* 1-based number of the line last returned (0 before the first). */
size_t line_reader__lineno(const struct line_reader *lr);

#endif
