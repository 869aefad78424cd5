/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * record's live status line: one line on a terminal, redrawn in place while
 * the capture runs and erased at its end, so that the minutes of a long -d or
 * -a capture are not silent:
 *
 *     offcpu: 12.4s, 47.6s left: 183.2k switches, 96 threads, 1204 stacks, 0 lost
 *
 * ("left" only with -d; the counters, native__live(), only with the built-in
 * collector: elapsed time alone for the external ones). Each redraw is one
 * write(2) of "\r", the text cut to the terminal's width, and "erase to the
 * end of the line"; the cursor stays on that line, so the next message
 * starts after status_line__clear() on a clean line.
 */
#ifndef OFFCPU_OUTPUT_STATUS_LINE_H
#define OFFCPU_OUTPUT_STATUS_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct status_counters {
	uint64_t elapsed_ns;
	bool counted; /* the counters below were read (built-in collector) */
	uint64_t switches;
	uint64_t threads;
	uint64_t stacks;
	uint64_t lost;
};

/* The text of the line, at most width - 1 columns (ASCII only); returns buf. */
char *status_line__format(char *buf, size_t size, int width, uint64_t duration_ns,
			  const struct status_counters *c);

/* A status line on fd (duration_ns: -d, 0 for none). NULL and errno on failure. */
struct status_line *status_line__new(int fd, uint64_t duration_ns);
/* Redraw with c. */
void status_line__draw(struct status_line *s, const struct status_counters *c);
/* Erase it (it is drawn again at the next status_line__draw). NULL is a no-op. */
void status_line__clear(struct status_line *s);
/* Erase and free; NULL is a no-op. */
void status_line__free(struct status_line *s);
/*
 * The descriptor of a drawn line, or -1: for a signal handler that must clear
 * it (with write(2), "\r\033[K") before the process stops.
 */
int status_line__drawn_fd(const struct status_line *s);

#endif
