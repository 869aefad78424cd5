// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/lines.h"
#include "util/vec.h"

/*
 * Reads of 32-64 KiB: few system calls, and a small input costs no big buffer.
 * The fuzz build makes it smaller still, so that a small input grows it.
 */
#ifndef LINES_CHUNK
#define LINES_CHUNK (64u << 10)
#endif

struct line_reader {
	FILE *in;
	char *buf;
	size_t cap;
	size_t start;	 /* first byte of the next line */
	size_t end;	 /* end of valid data */
	size_t scanned;	 /* bytes after start known to hold no '\n' */
	size_t scanned2; /* 0, or where the second '\n' after start is, + 1 (peek2) */
	size_t lineno;
	int eof;
};

struct line_reader *line_reader__new(FILE *in)
{
	struct line_reader *lr = calloc(1, sizeof(*lr));

	if (!lr)
		return NULL;
	lr->buf = malloc(LINES_CHUNK);
	if (!lr->buf) {
		free(lr);
		errno = ENOMEM;
		return NULL;
	}
	lr->cap = LINES_CHUNK;
	lr->in = in;
	return lr;
}

void line_reader__free(struct line_reader *lr)
{
	if (!lr)
		return;
	free(lr->buf);
	free(lr);
}

size_t line_reader__lineno(const struct line_reader *lr)
{
	return lr->lineno;
}

/* Read more input after the current partial line; 0, or -errno. */
static int fill(struct line_reader *lr)
{
	size_t n;

	if (lr->start > 0) {
		memmove(lr->buf, lr->buf + lr->start, lr->end - lr->start);
		lr->end -= lr->start;
		lr->start = 0;
	}
	if (lr->cap - lr->end < LINES_CHUNK / 2) {
		/* A line longer than the buffer: grow it, keeping reads large. */
		if (vec_reserve(lr->buf, lr->cap, lr->cap + 1))
			return -ENOMEM;
	}
	n = fread(lr->buf + lr->end, 1, lr->cap - lr->end, lr->in);
	lr->end += n;
	if (n == 0) {
		if (ferror(lr->in))
			return -EIO;
		lr->eof = 1;
	}
	return 0;
}

int line_reader__peek(struct line_reader *lr, const char **line, size_t *len)
{
	const char *from = lr->buf + lr->start;
	char *nl = memchr(from + lr->scanned, '\n', lr->end - lr->start - lr->scanned);
	size_t n;

	if (!nl) {
		lr->scanned = lr->end - lr->start;
		return 0;
	}
	/* line_reader__next() need not look for this '\n' again. */
	lr->scanned = nl - from;
	n = nl - from;
	if (n && from[n - 1] == '\r')
		n--;
	*line = from;
	*len = n;
	return 1;
}

int line_reader__peek2(struct line_reader *lr, const char **line, size_t *len)
{
	const char *first, *from;
	char *nl;
	size_t n;

	if (line_reader__peek(lr, &first, &n) <= 0)
		return 0;
	from = lr->buf + lr->start + lr->scanned + 1; /* after the next line's '\n' */
	nl = memchr(from, '\n', lr->buf + lr->end - from);
	if (!nl)
		return 0;
	lr->scanned2 = nl - (lr->buf + lr->start) + 1;
	n = nl - from;
	if (n && from[n - 1] == '\r')
		n--;
	*line = from;
	*len = n;
	return 1;
}

int line_reader__next(struct line_reader *lr, const char **line, size_t *len)
{
	char *nl;
	size_t n;
	int err;

	for (;;) {
		nl = memchr(lr->buf + lr->start + lr->scanned, '\n',
			    lr->end - lr->start - lr->scanned);
		if (nl)
			break;
		lr->scanned = lr->end - lr->start;
		if (lr->eof) {
			if (lr->start == lr->end)
				return 0;
			nl = lr->buf + lr->end; /* the last line has no '\n' */
			break;
		}
		err = fill(lr);
		if (err)
			return err;
	}
	*line = lr->buf + lr->start;
	n = nl - *line;
	lr->start += n + (nl < lr->buf + lr->end);
	/* A peek2 found the '\n' that ends the line now next. */
	lr->scanned = lr->scanned2 > n + 1 ? lr->scanned2 - 1 - (n + 1) : 0;
	lr->scanned2 = 0;
	if (n && (*line)[n - 1] == '\r')
		n--;
	*len = n;
	lr->lineno++;
	return 1;
}
