// SPDX-License-Identifier: GPL-2.0-only
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "output/term.h"

/*
 * The one colour table of the reasons: the terminal's SGR code (report, diff)
 * and the flame graph's fill, of about the same hue.
 */
static const struct {
	const char *sgr;
	unsigned char rgb[3];
} reason_style[REASON__COUNT] = {
	[REASON_LOCK] = {"31", {235, 110, 70}},	      [REASON_SLEEP] = {"34", {120, 165, 235}},
	[REASON_DISK_IO] = {"33", {215, 175, 70}},    [REASON_NETWORK] = {"36", {90, 200, 205}},
	[REASON_POLL] = {"35", {185, 130, 225}},      [REASON_PIPE] = {"32", {110, 195, 110}},
	[REASON_CHILD] = {"32", {150, 210, 120}},     [REASON_MEMORY] = {"1;31", {205, 70, 70}},
	[REASON_RUNQUEUE] = {"1;33", {240, 215, 70}}, [REASON_IDLE] = {"2;36", {175, 205, 200}},
	[REASON_OTHER] = {"2", {150, 165, 190}},
};

const char *term__reason_color(enum reason r)
{
	return (unsigned)r < REASON__COUNT ? reason_style[r].sgr : NULL;
}

const unsigned char *term__reason_rgb(enum reason r)
{
	return reason_style[(unsigned)r < REASON__COUNT ? r : REASON_OTHER].rgb;
}

/* Unit thresholds are set where the rounded value would need a fourth digit. */
char *term__count(uint64_t n, const char *one, const char *many, char *buf, size_t size)
{
	const char *word = n == 1 ? one : many;

	snprintf(buf, size, "%" PRIu64 "%s%s", n, *word ? " " : "", word);
	return buf;
}

char *term__ns(uint64_t ns, char *buf, size_t size)
{
	static const struct {
		uint64_t div;
		const char *unit;
	} units[] = {{1000000000ull, "s"}, {1000000ull, "ms"}, {1000ull, "us"}};
	double v;

	if (ns == 0) {
		snprintf(buf, size, "0");
		return buf;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (ns < units[i].div - units[i].div / 2000)
			continue;
		v = (double)ns / (double)units[i].div;
		if (v < 9.995)
			snprintf(buf, size, "%.2f%s", v, units[i].unit);
		else if (v < 99.95)
			snprintf(buf, size, "%.1f%s", v, units[i].unit);
		else
			snprintf(buf, size, "%.0f%s", v, units[i].unit);
		return buf;
	}
	snprintf(buf, size, "%lluns", (unsigned long long)ns);
	return buf;
}

char *term__ns_delta(uint64_t from, uint64_t to, char *buf, size_t size)
{
	if (from == to) {
		snprintf(buf, size, "0");
		return buf;
	}
	buf[0] = to > from ? '+' : '-';
	term__ns(to > from ? to - from : from - to, buf + 1, size - 1);
	return buf;
}

char *term__pct(double share, char *buf, size_t size)
{
	double pct = share * 100.0;

	if (share <= 0)
		snprintf(buf, size, "0%%");
	else if (pct < 0.05)
		snprintf(buf, size, "<0.1%%");
	else if (pct >= 99.95)
		snprintf(buf, size, "%.0f%%", pct);
	else
		snprintf(buf, size, "%.1f%%", pct);
	return buf;
}

static bool is_cont(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

int term__cols(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += !is_cont((unsigned char)*s);
	return n;
}

void term_line__begin(struct term_line *l, FILE *out, int width, bool color)
{
	*l = (struct term_line){.out = out, .width = width > 0 ? width : 80, .color = color};
}

int term_line__left(const struct term_line *l)
{
	return l->width > l->col ? l->width - l->col : 0;
}

/* Write the first `cols` columns of s, control bytes as '?'. */
static void put_cols(struct term_line *l, const char *s, int cols)
{
	int n = 0;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (!is_cont(c) && n++ == cols)
			break;
		fputc(c < 0x20 || c == 0x7f ? '?' : c, l->out);
	}
	l->col += n < cols ? n : cols;
}

void term_line__text(struct term_line *l, const char *s, int max)
{
	int left = term_line__left(l), cols = term__cols(s);

	if (max < 0 || max > left)
		max = left;
	if (cols <= max) {
		put_cols(l, s, cols);
		return;
	}
	if (max <= 3) {
		for (int i = 0; i < max; i++)
			fputc('.', l->out);
		l->col += max;
		return;
	}
	put_cols(l, s, max - 3);
	fputs("...", l->out);
	l->col += 3;
}

void term_line__right(struct term_line *l, const char *s, int field)
{
	int cols = term__cols(s);

	if (cols < field)
		term_line__pad(l, l->col + field - cols);
	term_line__text(l, s, cols < field ? cols : field);
}

void term_line__left_in(struct term_line *l, const char *s, int field)
{
	int start = l->col;

	term_line__text(l, s, field);
	term_line__pad(l, start + field);
}

void term_line__pad(struct term_line *l, int col)
{
	if (col > l->width)
		col = l->width;
	for (; l->col < col; l->col++)
		fputc(' ', l->out);
}

void term_line__color(struct term_line *l, const char *sgr)
{
	if (!l->color)
		return;
	if (sgr) {
		fprintf(l->out, "\033[%sm", sgr);
		l->colored = true;
	} else if (l->colored) {
		fputs("\033[0m", l->out);
		l->colored = false;
	}
}

void term_line__end(struct term_line *l)
{
	term_line__color(l, NULL);
	fputc('\n', l->out);
	l->col = 0;
}

int term__cut_cols(const char *s, int max)
{
	int cols = 0, best = 0, depth = 0;

	for (; *s && cols <= max; s++) {
		unsigned char c = (unsigned char)*s;

		if (is_cont(c))
			continue;
		if (!depth)
			best = cols;
		cols++;
		if (c == '[')
			depth++;
		else if (c == ']' && depth)
			depth--;
	}
	if (cols <= max && !depth)
		best = cols;
	return best;
}

/* Whether a frame name must be shown whole where max columns are not enough. */
static bool uncuttable(const char *name, const char *suffix, int max)
{
	int scols = suffix ? term__cols(suffix) : 0;

	if (term__cols(name) + scols <= max || name[0] != '[')
		return false;
	if (max - scols < 4)
		scols = 0;
	return !term__cut_cols(name, max - scols - 3);
}

/* A name with its suffix in at most max columns, cut outside brackets. */
static void put_frame_name(struct term_line *l, const char *name, const char *suffix, int max)
{
	int ncols = term__cols(name), scols = suffix ? term__cols(suffix) : 0, cut;

	if (ncols + scols <= max) {
		put_cols(l, name, ncols);
		if (suffix)
			put_cols(l, suffix, scols);
		return;
	}
	/* Too little room for both: the suffix is dropped before the name is cut. */
	if (max - scols < 4)
		scols = 0, suffix = NULL;
	cut = term__cut_cols(name, max - scols - 3);
	if (max <= 3 || !cut) {
		term_line__text(l, "...", max);
		return;
	}
	put_cols(l, name, cut);
	put_cols(l, "...", 3);
	if (suffix)
		put_cols(l, suffix, scols);
}

/*
 * s whole from the current column, going on at column indent of the next
 * lines when it does not fit: no line passes the width, no byte is lost.
 */
static void put_wrapped(struct term_line *l, const char *s, int indent)
{
	if (indent >= l->width)
		indent = 0;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (!is_cont(c) && !term_line__left(l)) {
			term_line__end(l);
			term_line__pad(l, indent);
		}
		fputc(c < 0x20 || c == 0x7f ? '?' : c, l->out);
		l->col += !is_cont(c);
	}
}

void term__frames(FILE *out, int width, bool color, const char *label, const char *const *names,
		  const char *const *suffix, size_t n)
{
	struct term_line l;
	bool first = true; /* nothing after the label or the "<- " of this line yet */
	int indent;

	term_line__begin(&l, out, width, color);
	term_line__text(&l, "      ", -1);
	term_line__color(&l, "2");
	term_line__text(&l, label, -1);
	term_line__color(&l, NULL);
	indent = l.col;
	for (size_t i = 0; i < n && term_line__left(&l); i++) {
		const char *sfx = suffix ? suffix[i] : NULL;
		bool last = i + 1 == n;
		/* Leave room for the next frame unless this is the last one. */
		int left = term_line__left(&l) - (last ? 0 : 4), max;

		max = last ? term_line__left(&l) - (first ? 0 : 4) : left > 8 ? left - 8 : left;
		if (!uncuttable(names[i], sfx, max)) {
			if (!first)
				term_line__text(&l, " <- ", -1);
			put_frame_name(&l, names[i], sfx, max);
			first = false;
			continue;
		}
		/* Whole, on a line of its own unless it is the line's first. */
		if (!first) {
			term_line__text(&l, " <-", -1);
			term_line__end(&l);
			term_line__pad(&l, indent);
		}
		put_wrapped(&l, names[i], indent);
		if (sfx)
			put_wrapped(&l, sfx, indent);
		first = false;
		if (!last && term_line__left(&l) < 12) {
			term_line__end(&l);
			term_line__pad(&l, indent - 3);
			put_cols(&l, "<- ", 3);
			first = true;
		}
	}
	term_line__end(&l);
}
