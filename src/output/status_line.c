// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "output/status_line.h"

#define ERASE "\r\033[K"
#define TENTH 100000000ull

struct status_line {
	int fd;
	uint64_t duration_ns;
	bool drawn;
};

/* "8.2s", "12m05s", "3h02m": tenths of a second only while they matter. */
static char *span(uint64_t ns, char *buf, size_t size)
{
	uint64_t s = ns / 1000000000;

	if (s < 60)
		snprintf(buf, size, "%" PRIu64 ".%" PRIu64 "s", s, ns / 100000000 % 10);
	else if (s < 3600)
		snprintf(buf, size, "%" PRIu64 "m%02" PRIu64 "s", s / 60, s % 60);
	else
		snprintf(buf, size, "%" PRIu64 "h%02" PRIu64 "m", s / 3600, s / 60 % 60);
	return buf;
}

/* "873", "18.3k", "4.1M": counts in a few columns. */
static char *count(uint64_t n, char *buf, size_t size)
{
	if (n < 10000)
		snprintf(buf, size, "%" PRIu64, n);
	else if (n < 1000000)
		snprintf(buf, size, "%.1fk", n / 1e3);
	else if (n < 1000000000)
		snprintf(buf, size, "%.1fM", n / 1e6);
	else
		snprintf(buf, size, "%.1fG", n / 1e9);
	return buf;
}

char *status_line__format(char *buf, size_t size, int width, uint64_t duration_ns,
			  const struct status_counters *c)
{
	char el[24], left[24], more[160] = "", n[4][16];
	size_t max;

	if (!size)
		return buf;
	left[0] = '\0';
	if (duration_ns) {
		uint64_t rest = duration_ns > c->elapsed_ns ? duration_ns - c->elapsed_ns : 0;

		/* Rounded up to the tenth shown, so that elapsed and left add up to -d. */
		rest = (rest + TENTH - 1) / TENTH * TENTH;
		snprintf(left, sizeof(left), ", %s left", span(rest, el, sizeof(el)));
	}
	if (c->counted)
		snprintf(more, sizeof(more), ": %s switches, %s threads, %s stacks, %s lost",
			 count(c->switches, n[0], sizeof(n[0])),
			 count(c->threads, n[1], sizeof(n[1])),
			 count(c->stacks, n[2], sizeof(n[2])), count(c->lost, n[3], sizeof(n[3])));
	snprintf(buf, size, "offcpu: %s%s%s", span(c->elapsed_ns, el, sizeof(el)), left, more);
	/* A line that wraps cannot be redrawn in place: one column short of the edge. */
	max = width > 1 ? (size_t)width - 1 : 0;
	if (strlen(buf) > max)
		buf[max] = '\0';
	return buf;
}

struct status_line *status_line__new(int fd, uint64_t duration_ns)
{
	struct status_line *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->fd = fd;
	s->duration_ns = duration_ns;
	return s;
}

static int width_of(int fd)
{
	struct winsize ws;

	if (!ioctl(fd, TIOCGWINSZ, &ws) && ws.ws_col)
		return ws.ws_col;
	return 80;
}

/* All of buf, in as few writes as the descriptor takes. */
static void put(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

void status_line__draw(struct status_line *s, const struct status_counters *c)
{
	char line[512], text[256];

	if (!s)
		return;
	status_line__format(text, sizeof(text), width_of(s->fd), s->duration_ns, c);
	/* One write: a redraw is never split by another writer's line. */
	snprintf(line, sizeof(line), "\r%s\033[K", text);
	put(s->fd, line, strlen(line));
	s->drawn = true;
}

void status_line__clear(struct status_line *s)
{
	if (!s || !s->drawn)
		return;
	put(s->fd, ERASE, strlen(ERASE));
	s->drawn = false;
}

void status_line__free(struct status_line *s)
{
	status_line__clear(s);
	free(s);
}

int status_line__drawn_fd(const struct status_line *s)
{
	return s && s->drawn ? s->fd : -1;
}
