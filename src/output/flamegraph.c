// SPDX-License-Identifier: GPL-2.0-only
/*
 * The flame graph writer: output/flame_tree.h builds and lays out the tree,
 * this file draws it. FLAMEGRAPH_COLOR_REASON tags rows with their reason
 * from analyze/reasons.h, the classifier every output uses.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/budget.h"
#include "analyze/reasons.h"
#include "output/flame_tree.h"
#include "output/flamegraph.h"
#include "output/term.h"
/*
 * The SVG's style sheet and script, share/flamegraph.css and .js, built in so
 * the SVG stays self-contained; the script reads the layout it needs from the
 * `var fg` written before it.
 */
#include "share/flamegraph.css.h"
#include "share/flamegraph.js.h"

/* Layout in px. CHAR_W is Verdana's mean glyph width at FONT_PX, for labels. */
#define PAD 10
#define FRAME_H 16
#define FONT_PX 12
#define CHAR_W (0.59 * FONT_PX)
#define TOP 56
#define BOTTOM 32
#define LEGEND_ROW 18
#define LEGEND_COL 130
#define DIFF_KEY_H 18

/*
 * Reason colouring: a row's tag is its reason (analyze/reasons.h) + 1, as tag
 * 0 means "no row yet" to the tree, or, when a rule gave the row a detail, a
 * tag of its own for that (reason, detail) from TAG_DETAIL up, while there is
 * room. Nodes whose rows have one reason but several details take the bare
 * reason's tag; rows of different reasons make TAG_MIXED. The colours are the
 * report's (term__reason_rgb), by reason.
 */
#define TAG_MIXED (REASON__COUNT + 1)
#define TAG_DETAIL (REASON__COUNT + 2)
#define NR_TAGS 256
static const unsigned char mixed_rgb[3] = {215, 215, 215};

struct tagger {
	struct reasons *rs;
	struct {
		enum reason reason;
		const char *detail;
	} tag[NR_TAGS];
	int nr; /* tags in use: TAG_DETAIL + the details seen */
};

enum { NEW = 0, BASE = 1 };

/* What the writer draws: the tree, and how to read and colour it. */
struct graph {
	const struct flame_tree *t;
	const struct flame_node *nodes; /* the nodes kept, pre-order */
	size_t nr_nodes;
	size_t nr_tree; /* nodes in the whole tree */
	bool diff;
	enum flamegraph_diff cmp;
	double denom[2];		  /* a side's weight / denom is what is compared */
	uint64_t base_off_ns, base_count; /* BASE's totals */
	uint64_t vanished;
	size_t nr_vanished;
	bool per_thread, by_reason, by_count;
	uint64_t total_off_ns, total_count;
	uint64_t reason_ns[REASON__COUNT]; /* by_reason: the legend's totals */
	const struct tagger *tags;	   /* by_reason: what the nodes' tags mean */
};

static void tagger_init(struct tagger *tg, struct reasons *rs)
{
	tg->rs = rs;
	for (int r = 0; r < REASON__COUNT; r++)
		tg->tag[r + 1].reason = r;
	tg->nr = TAG_DETAIL;
}

/* The tree's tag function: a row's reason and detail, by the one classifier. */
static uint8_t row_reason(void *arg, const struct profile *p, uint32_t stack,
			  enum offcpu_state state)
{
	struct tagger *tg = arg;
	const char *detail;
	enum reason r = reasons__get_detail(tg->rs, stack, state, &detail);
	int t;

	(void)p;
	if (!detail)
		return (uint8_t)(r + 1);
	for (t = TAG_DETAIL; t < tg->nr; t++)
		if (tg->tag[t].reason == r && !strcmp(tg->tag[t].detail, detail))
			return (uint8_t)t;
	if (tg->nr == NR_TAGS)
		return (uint8_t)(r + 1); /* more details than tags: the reason alone */
	tg->tag[tg->nr].reason = r;
	tg->tag[tg->nr].detail = detail;
	return (uint8_t)tg->nr++;
}

static bool tag_is_reason(uint8_t tag)
{
	return tag && tag != TAG_MIXED;
}

/* Two details of one reason make that reason; two reasons, mixed. */
static uint8_t merge_tags(void *arg, uint8_t a, uint8_t b)
{
	struct tagger *tg = arg;

	if (!tag_is_reason(a) || !tag_is_reason(b) || tg->tag[a].reason != tg->tag[b].reason)
		return TAG_MIXED;
	return (uint8_t)(tg->tag[a].reason + 1);
}

static const unsigned char *tag_rgb(const struct tagger *tg, uint8_t tag)
{
	return tag_is_reason(tag) ? term__reason_rgb(tg->tag[tag].reason) : mixed_rgb;
}

static uint64_t weight(const struct graph *g, const struct flame_node *n)
{
	return flame_node__weight(n, g->by_count);
}

static uint64_t base_weight(const struct graph *g, const struct flame_node *n)
{
	return flame_node__base_weight(n, g->by_count);
}

/* What a side's weight is divided by before the sides are compared. */
static void set_denoms(struct graph *g, const struct flamegraph_opts *o)
{
	switch (g->cmp) {
	case FLAMEGRAPH_DIFF_ABSOLUTE:
		g->denom[NEW] = g->denom[BASE] = 1;
		break;
	case FLAMEGRAPH_DIFF_SHARE:
		g->denom[NEW] = g->by_count ? g->total_count : g->total_off_ns;
		g->denom[BASE] = g->by_count ? g->base_count : g->base_off_ns;
		break;
	case FLAMEGRAPH_DIFF_WALL:
		g->denom[NEW] = o->new_wall_ns / 1e9;
		g->denom[BASE] = o->base_wall_ns / 1e9;
		break;
	}
}

static const char *node_name(const struct graph *g, const struct flame_node *n)
{
	return flame_tree__name(g->t, n);
}

static int node_kind(const struct graph *g, const struct flame_node *n)
{
	return flame_tree__kind(g->t, n);
}

/*
 * Length of the valid, XML-safe UTF-8 character at s, or 0 when s[0] must be
 * shown as "\xNN" (not UTF-8, a control character, or U+FFFE/U+FFFF).
 */
static size_t utf8_char(const unsigned char *s)
{
	unsigned char c = s[0];

	if (c < 0x80)
		return c >= 0x20 && c != 0x7f;
	if (c >= 0xc2 && c <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f))
			return 0;
		if (c == 0xef && s[1] == 0xbf && s[2] >= 0xbe)
			return 0;
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))
			return 0;
		return 4;
	}
	return 0;
}

/*
 * Write s XML-escaped, at most max display units (a character, or a "\xNN"
 * escape per unit of its length; what the SVG's script sees as the string's
 * length). Returns the units written.
 */
static size_t put_text(FILE *out, const char *str, size_t max)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t units = 0;

	while (*s) {
		size_t n = utf8_char(s), u = n == 0 ? 4 : n == 4 ? 2 : 1;

		if (units + u > max)
			break;
		units += u;
		if (n == 0) {
			fprintf(out, "\\x%02x", *s++);
			continue;
		}
		switch (*s) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&apos;", out);
			break;
		default:
			fwrite(s, 1, n, out);
		}
		s += n;
	}
	return units;
}

static size_t text_units(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t units = 0;

	while (*s) {
		size_t n = utf8_char(s);

		units += n == 0 ? 4 : n == 4 ? 2 : 1;
		s += n ? n : 1;
	}
	return units;
}

/*
 * The units of the longest start of name, at most max, that does not end
 * inside square brackets: "[postgres+0x1a2b3c]" is never cut to a wrong
 * address. The script's cut() is the same rule.
 */
static size_t cut_units(const char *name, size_t max)
{
	const unsigned char *s = (const unsigned char *)name;
	size_t units = 0, best = 0;
	int depth = 0;

	while (*s) {
		size_t n = utf8_char(s), u = n == 0 ? 4 : n == 4 ? 2 : 1;

		if (!depth)
			best = units;
		if (units + u > max)
			return best;
		units += u;
		depth += *s == '[' ? 1 : *s == ']' && depth ? -1 : 0;
		s += n ? n : 1;
	}
	return depth ? best : units;
}

/* A label that fits w px: the name, or its start and "..", or nothing. */
static void put_label(FILE *out, const char *name, double w)
{
	double fit = (w - 6) / CHAR_W;
	size_t n = fit > 0 ? (size_t)fit : 0, len = text_units(name), cut;

	if (len <= n) {
		put_text(out, name, len);
	} else if (n >= 3 && (cut = cut_units(name, n - 2))) {
		put_text(out, name, cut);
		fputs("..", out);
	}
}

/* Same units, same rounding as the SVG's script. */
static void fmt_weight(char *buf, size_t sz, uint64_t v, bool count)
{
	static const char *const units[] = {"ns", "us", "ms", "s"};
	double x = v;
	int i = 0;

	if (count) {
		snprintf(buf, sz, "%" PRIu64 " interval%s", v, v == 1 ? "" : "s");
		return;
	}
	while (i < 3 && x >= 999.5) {
		x /= 1000;
		i++;
	}
	if (i == 0)
		snprintf(buf, sz, "%" PRIu64 " ns", v);
	else
		snprintf(buf, sz, "%.*f %s", x < 9.995 ? 2 : x < 99.95 ? 1 : 0, x, units[i]);
}

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static void node_color(const struct graph *g, const struct flame_node *n, unsigned char rgb[3])
{
	uint32_t h = fnv1a(node_name(g, n));
	double a = (h & 0xff) / 255.0, b = (h >> 8 & 0xff) / 255.0, c = (h >> 16 & 0xff) / 255.0;
	int kind = node_kind(g, n);

	if (kind == 2 + FRAME_MISSING) {
		rgb[0] = rgb[1] = rgb[2] = 160 + 25 * a;
	} else if (g->by_reason) {
		const unsigned char *base = tag_rgb(g->tags, n->tag);

		for (int k = 0; k < 3; k++) {
			int v = base[k] + (int)(24 * (a - 0.5));

			rgb[k] = v < 0 ? 0 : v > 255 ? 255 : v;
		}
	} else if (kind == 0) {
		rgb[0] = 190, rgb[1] = 195, rgb[2] = 210;
	} else if (kind == 1) {
		rgb[0] = 95 + 30 * a, rgb[1] = 175 + 30 * b, rgb[2] = 185 + 30 * c;
	} else if (kind == 2 + FRAME_KERNEL) {
		rgb[0] = 150 + 40 * a, rgb[1] = 125 + 35 * b, rgb[2] = 215 + 40 * c;
	} else if (kind == 2 + FRAME_INLINE) {
		rgb[0] = 60 + 50 * a, rgb[1] = 175 + 50 * b, rgb[2] = 195 + 40 * c;
	} else {
		rgb[0] = 60 + 50 * a, rgb[1] = 130 + 55 * b, rgb[2] = 215 + 40 * c;
	}
}

/* A side's weight as the sides are compared: raw, a share, or per second of wall time. */
static double compared(const struct graph *g, uint64_t w, int side)
{
	return g->denom[side] > 0 ? w / g->denom[side] : 0;
}

/*
 * A compared value (with an explicit sign for a change): a weight, a share
 * in % (a change of share in percentage points), or a weight per second.
 */
static void fmt_compared(const struct graph *g, char *buf, size_t sz, double v, bool change)
{
	bool share = g->cmp == FLAMEGRAPH_DIFF_SHARE;
	uint64_t whole = (uint64_t)(fabs(v) + 0.5);
	/* No sign on a change that shows as zero (a share's rounding error, say). */
	bool zero = share ? fabs(v) * 100 < 0.005 : !whole;
	const char *sign = !change || zero ? "" : v > 0 ? "+" : "-";
	char w[32];

	if (share) {
		snprintf(buf, sz, "%s%.2f%s", sign, fabs(v) * 100, change ? " pp" : "%");
		return;
	}
	fmt_weight(w, sizeof(w), whole, g->by_count);
	snprintf(buf, sz, "%s%s%s", sign, w, g->cmp == FLAMEGRAPH_DIFF_WALL ? "/s" : "");
}

/* The relative change from b to n: "+12.5%", or "new" from nothing. */
static void fmt_rel(char *buf, size_t sz, double b, double n)
{
	if (b > 0)
		snprintf(buf, sz, "%+.1f%%", (n - b) / b * 100);
	else
		snprintf(buf, sz, "%s", n > 0 ? "new" : "+0.0%");
}

/*
 * Grey for no change, towards red (grew) or blue (shrank) by |n - b| over
 * the larger of the two, so that doubling and halving are equally strong.
 */
static void diff_color(double b, double n, unsigned char rgb[3])
{
	static const unsigned char neutral[3] = {222, 222, 222}, grew[3] = {228, 48, 40},
				   shrank[3] = {50, 100, 228};
	double m = b > n ? b : n, sat = m > 0 ? fabs(n - b) / m : 0;
	const unsigned char *to = n > b ? grew : shrank;

	for (int k = 0; k < 3; k++)
		rgb[k] = (unsigned char)(neutral[k] + sat * (to[k] - neutral[k]) + 0.5);
}

/* "; base B, new N, delta D (R)", shares and rates with their raw weights. */
static void put_diff_info(FILE *out, const struct graph *g, const struct flame_node *n)
{
	uint64_t wb = base_weight(g, n), wn = weight(g, n);
	double b = compared(g, wb, BASE), v = compared(g, wn, NEW);
	char sb[40], sn[40], sd[40], rel[24], rb[32], rn[32];

	fmt_compared(g, sb, sizeof(sb), b, false);
	fmt_compared(g, sn, sizeof(sn), v, false);
	fmt_compared(g, sd, sizeof(sd), v - b, true);
	fmt_rel(rel, sizeof(rel), b, v);
	if (g->cmp == FLAMEGRAPH_DIFF_ABSOLUTE) {
		fprintf(out, "; base %s, new %s, delta %s (%s)", sb, sn, sd, rel);
		return;
	}
	fmt_weight(rb, sizeof(rb), wb, g->by_count);
	fmt_weight(rn, sizeof(rn), wn, g->by_count);
	fprintf(out, "; base %s (%s), new %s (%s), delta %s (%s)", sb, rb, sn, rn, sd, rel);
}

static const char *kind_label(const struct graph *g, const struct flame_node *n)
{
	switch (node_kind(g, n)) {
	case 0:
		return "all threads";
	case 1:
		return g->per_thread ? "thread" : "comm";
	case 2 + FRAME_KERNEL:
		return "kernel";
	case 2 + FRAME_MISSING:
		return "stack not walked";
	case 2 + FRAME_INLINE:
		return "user, inlined";
	}
	return "user";
}

struct layout {
	unsigned int width;
	double scale; /* px per unit of weight */
	int max_depth, frames_top;
	bool icicle;
	uint64_t total;
	uint64_t min_weight; /* see flamegraph_stats */
	bool capped;
};

static int frame_y(const struct layout *l, int depth)
{
	return l->frames_top + (l->icicle ? depth : l->max_depth - depth) * FRAME_H;
}

/* "lock", "lock: heavyweight" or "mixed". */
static void put_tag(FILE *out, const struct tagger *tg, uint8_t tag)
{
	if (!tag_is_reason(tag)) {
		fputs("mixed", out);
		return;
	}
	fputs(reason__name(tg->tag[tag].reason), out);
	if (tg->tag[tag].detail) {
		fputs(": ", out);
		put_text(out, tg->tag[tag].detail, SIZE_MAX);
	}
}

static void put_frame(FILE *out, const struct graph *g, const struct layout *l,
		      const struct flame_node *n)
{
	char time[32], count[32];
	unsigned char rgb[3];
	uint64_t w = weight(g, n);
	double x = PAD + n->offset * l->scale, wpx = l->total ? w * l->scale : l->width - 2 * PAD;
	int y = frame_y(l, n->depth);

	fmt_weight(time, sizeof(time), n->off_ns, false);
	fmt_weight(count, sizeof(count), n->count, true);
	if (g->diff)
		diff_color(compared(g, base_weight(g, n), BASE), compared(g, w, NEW), rgb);
	else
		node_color(g, n, rgb);
	fprintf(out, "<g data-v=\"%" PRIu64 "\"><title>", w);
	put_text(out, node_name(g, n), SIZE_MAX);
	fprintf(out, "\n%s, ", kind_label(g, n));
	if (g->by_count)
		fprintf(out, "%s, %.2f%%, %s off-CPU", count, l->total ? 100.0 * w / l->total : 0.0,
			time);
	else
		fprintf(out, "%s off-CPU, %.2f%%, %s", time, l->total ? 100.0 * w / l->total : 0.0,
			count);
	if (g->by_reason) {
		fputs(", reason: ", out);
		put_tag(out, g->tags, n->tag);
	}
	if (g->diff)
		put_diff_info(out, g, n);
	fprintf(out,
		"</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
		"fill=\"#%02x%02x%02x\"/>",
		x, y, wpx, FRAME_H - 1, rgb[0], rgb[1], rgb[2]);
	if (wpx - 6 >= 3 * CHAR_W) {
		fprintf(out, "<text x=\"%.2f\" y=\"%d\">", x + 3, y + FRAME_H - 5);
		put_label(out, node_name(g, n), wpx);
		fputs("</text>", out);
	}
	fputs("</g>\n", out);
}

/*
 * The reasons with time, each with its total as the report counts it (blocked
 * time by reason, run-queue time as runqueue), then "mixed".
 */
static size_t legend_entries(const struct graph *g, enum reason *order)
{
	size_t n = 0;

	for (int r = 0; r < REASON__COUNT; r++)
		if (g->reason_ns[r])
			order[n++] = r;
	return n;
}

static void put_legend(FILE *out, const struct graph *g, const struct layout *l, int y)
{
	int cols = (l->width - 2 * PAD) / LEGEND_COL, k = 0;
	enum reason order[REASON__COUNT];
	size_t n = legend_entries(g, order);
	char t[32];

	if (cols < 1)
		cols = 1;
	fputs("<g id=\"legend\">\n", out);
	for (size_t i = 0; i <= n; i++, k++) {
		int x = PAD + (k % cols) * LEGEND_COL, ry = y + (k / cols) * LEGEND_ROW;
		const unsigned char *c = i < n ? term__reason_rgb(order[i]) : mixed_rgb;

		fprintf(out,
			"<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" "
			"fill=\"#%02x%02x%02x\"/><text x=\"%d\" y=\"%d\"",
			x, ry, c[0], c[1], c[2], x + 16, ry + 11);
		if (i == n) {
			fputs(">mixed</text>\n", out);
			continue;
		}
		fmt_weight(t, sizeof(t), g->reason_ns[order[i]], false);
		fprintf(out, " data-reason=\"%s\" data-ns=\"%" PRIu64 "\">%s %s</text>\n",
			reason__name(order[i]), g->reason_ns[order[i]], reason__name(order[i]), t);
	}
	fputs("</g>\n", out);
}

static int legend_rows(const struct graph *g, const struct layout *l)
{
	enum reason order[REASON__COUNT];
	int cols = (l->width - 2 * PAD) / LEGEND_COL, n = (int)legend_entries(g, order) + 1;

	if (cols < 1)
		cols = 1;
	return (n + cols - 1) / cols;
}

/* Both totals and their change, what the colours compare, what vanished. */
static void put_diff_totals(FILE *out, const struct graph *g)
{
	uint64_t tb = g->by_count ? g->base_count : g->base_off_ns;
	uint64_t tn = g->by_count ? g->total_count : g->total_off_ns;
	char sb[32], sn[32], sd[40], rel[24];

	if (!tb && !tn && !g->base_count && !g->total_count) {
		fputs("no off-CPU intervals recorded in base or new", out);
		return;
	}
	fmt_weight(sb, sizeof(sb), tb, g->by_count);
	fmt_weight(sn, sizeof(sn), tn, g->by_count);
	fmt_weight(sd + 1, sizeof(sd) - 1, tn > tb ? tn - tb : tb - tn, g->by_count);
	sd[0] = tn >= tb ? '+' : '-';
	fmt_rel(rel, sizeof(rel), tb, tn);
	fprintf(out, "base %s, new %s %s (%s, %s)", sb, sn,
		g->by_count ? "off-CPU intervals" : "off-CPU", sd, rel);
}

/* A second subtitle line: what the widths and colours say, and what is not drawn. */
static void put_diff_key(FILE *out, const struct graph *g, const struct layout *l)
{
	char v[40];

	fprintf(out,
		"<text id=\"diffkey\" x=\"%u\" y=\"%d\" style=\"text-anchor:middle;fill:#555\">"
		"widths: new; colour: change%s from base, red grew, blue shrank",
		l->width / 2, 44 + DIFF_KEY_H,
		g->cmp == FLAMEGRAPH_DIFF_SHARE	 ? " of share of total"
		: g->cmp == FLAMEGRAPH_DIFF_WALL ? " per second of wall time"
						 : "");
	if (g->nr_vanished) {
		fmt_compared(g, v, sizeof(v), -compared(g, g->vanished, BASE), true);
		fprintf(out, "; %zu frame%s only in base not drawn (%s)", g->nr_vanished,
			g->nr_vanished == 1 ? "" : "s", v);
	}
	fputs("</text>\n", out);
}

static void write_svg(FILE *out, const struct graph *g, const struct flamegraph_opts *o,
		      struct layout *l)
{
	size_t pruned = g->nr_tree - g->nr_nodes;
	char total_time[32], total_count[32];
	int legend_y = 0, height;
	const char *title = o->title		   ? o->title
			    : g->diff && o->icicle ? "Differential Off-CPU Icicle Graph"
			    : g->diff		   ? "Differential Off-CPU Flame Graph"
			    : o->icicle		   ? "Off-CPU Time Icicle Graph"
						   : "Off-CPU Time Flame Graph";

	l->frames_top = TOP + (g->diff ? DIFF_KEY_H : 0);
	height = l->frames_top + (l->max_depth + 1) * FRAME_H + BOTTOM;
	if (g->by_reason) {
		legend_y = height - BOTTOM + 8;
		height += legend_rows(g, l) * LEGEND_ROW;
	}
	fmt_weight(total_time, sizeof(total_time), g->total_off_ns, false);
	fmt_weight(total_count, sizeof(total_count), g->total_count, true);

	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%u\" "
		"height=\"%d\" viewBox=\"0 0 %u %d\">\n"
		"<!-- offcpu flame graph: %zu frames drawn, %zu narrower than the threshold "
		"not drawn (their time is in their parents) -->\n"
		"<style>\n%s</style>\n"
		"<defs><linearGradient id=\"bg\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">"
		"<stop offset=\"0\" stop-color=\"#f8f8f8\"/>"
		"<stop offset=\"1\" stop-color=\"#dde4ee\"/></linearGradient></defs>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"url(#bg)\"/>\n"
		"<text id=\"title\" x=\"%u\" y=\"24\">",
		l->width, height, l->width, height, g->nr_nodes, pruned, flamegraph_css,
		l->width / 2);
	put_text(out, title, SIZE_MAX);
	fprintf(out, "</text>\n<text id=\"subtitle\" x=\"%u\" y=\"44\">", l->width / 2);
	if (o->subtitle) {
		put_text(out, o->subtitle, SIZE_MAX);
		fputs("; ", out);
	}
	if (g->diff)
		put_diff_totals(out, g);
	else if (!g->total_count && !g->total_off_ns)
		fputs("no off-CPU intervals recorded", out);
	else
		fprintf(out, "total %s off-CPU in %s; width: %s", total_time, total_count,
			!g->by_count			       ? "off-CPU time"
			: o->weight == FLAMEGRAPH_WEIGHT_COUNT ? "intervals"
							       : "intervals (no time recorded)");
	fputs("</text>\n", out);
	if (g->diff)
		put_diff_key(out, g, l);
	fprintf(out,
		"<text id=\"unzoom\" class=\"btn hid\" x=\"%d\" y=\"24\">Reset Zoom</text>\n"
		"<text id=\"search\" class=\"btn\" x=\"%u\" y=\"24\">Search</text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%d\">",
		PAD, l->width - PAD, PAD, height - 12);
	if (pruned && l->capped)
		fprintf(out, "%zu frames of %.2f px or less not drawn, to keep to %zu", pruned,
			l->min_weight * l->scale, g->nr_nodes);
	else if (pruned)
		fprintf(out, "%zu frames narrower than %.2f px not drawn", pruned,
			l->min_weight * l->scale);
	if (pruned)
		fputs("; their time is in their parents' width", out);
	fprintf(out, "</text>\n<text id=\"matched\" x=\"%u\" y=\"%d\"></text>\n", l->width - PAD,
		height - 12);
	if (g->by_reason)
		put_legend(out, g, l, legend_y);

	/* Pre-order, siblings by name: the script derives the tree from order and depth. */
	fputs("<g id=\"frames\">\n", out);
	for (size_t i = 0; i < g->nr_nodes; i++)
		put_frame(out, g, l, &g->nodes[i]);
	fputs("</g>\n", out);
	fprintf(out,
		"<script type=\"text/ecmascript\"><![CDATA[\n"
		"var fg = {width: %u, pad: %d, fh: %d, cw: %.2f, icicle: %s, base: %d, "
		"count: %s};\n%s]]></script>\n</svg>\n",
		l->width, PAD, FRAME_H, CHAR_W, l->icicle ? "true" : "false", frame_y(l, 0),
		g->by_count ? "true" : "false", flamegraph_js);
}

/* The tree's pruning threshold: min_share_pct of the total, or min_width_px of the plot. */
static void set_prune(struct flame_tree_opts *to, const struct flamegraph_opts *o,
		      unsigned int width)
{
	double px = o->min_width_px ? o->min_width_px : FLAMEGRAPH_MIN_WIDTH_PX;

	if (o->min_share_pct > 0) {
		to->prune_num = o->min_share_pct;
		to->prune_den = 100;
	} else if (px > 0) {
		to->prune_num = px;
		to->prune_den = width - 2 * PAD;
	}
}

/* Per reason, the time the report gives it: the budget's split of every row. */
static int reason_totals(struct graph *g, const struct profile *p)
{
	struct budget *b = budget__new(p);

	if (!b)
		return -errno;
	for (int r = 0; r < REASON__COUNT; r++)
		g->reason_ns[r] =
			r == REASON_RUNQUEUE ? b->total.rows_runq_ns : b->total.blocked_ns[r];
	budget__free(b);
	return 0;
}

int flamegraph__write(FILE *out, const struct profile *p, const struct flamegraph_opts *opts)
{
	static const struct flamegraph_opts defaults;
	const struct flamegraph_opts *o = opts ? opts : &defaults;
	struct reasons *rs = NULL;
	struct tagger *tg = NULL;
	struct flame_tree *t = NULL;
	struct flame_tree_opts to = {0};
	const struct flame_tree_info *info;
	struct graph g = {0};
	struct layout l = {0};
	int err;

	if (!out || !p || isnan(o->min_width_px) || isnan(o->min_share_pct) ||
	    o->min_share_pct > 100 || (o->width && (o->width < 200 || o->width > 100000)))
		return -EINVAL;
	if (o->base && (o->diff > FLAMEGRAPH_DIFF_WALL ||
			(o->diff == FLAMEGRAPH_DIFF_WALL && (!o->base_wall_ns || !o->new_wall_ns))))
		return -EINVAL;
	l.width = o->width ? o->width : FLAMEGRAPH_WIDTH;
	l.icicle = o->icicle;
	g.per_thread = o->per_thread;
	g.diff = o->base != NULL;
	g.cmp = o->diff;
	g.by_reason = !g.diff && o->color == FLAMEGRAPH_COLOR_REASON;
	to.per_thread = o->per_thread;
	to.by_count = o->weight == FLAMEGRAPH_WEIGHT_COUNT;
	to.max_nodes = o->max_frames ? o->max_frames : FLAMEGRAPH_MAX_FRAMES;
	to.base = o->base;
	set_prune(&to, o, l.width);
	if (g.by_reason) {
		rs = reasons__new(p);
		tg = calloc(1, sizeof(*tg));
		if (!rs || !tg) {
			err = -ENOMEM;
			goto cleanup;
		}
		tagger_init(tg, rs);
		g.tags = tg;
		if ((err = reason_totals(&g, p)))
			goto cleanup;
		to.tag = row_reason;
		to.tag_arg = tg;
		to.tag_mixed = TAG_MIXED;
		to.tag_merge = merge_tags;
	}
	t = flame_tree__new(p, &to);
	if (!t) {
		err = -errno;
		goto cleanup;
	}
	info = flame_tree__info(t);
	g.t = t;
	g.nodes = flame_tree__nodes(t, &g.nr_nodes);
	g.nr_tree = info->nr_tree;
	g.by_count = info->by_count;
	g.total_off_ns = info->total_off_ns;
	g.total_count = info->total_count;
	g.base_off_ns = info->base_off_ns;
	g.base_count = info->base_count;
	g.vanished = info->vanished;
	g.nr_vanished = info->nr_vanished;
	if (g.diff)
		set_denoms(&g, o);
	l.min_weight = info->min_weight;
	l.capped = info->capped;
	l.max_depth = info->max_depth;
	l.total = weight(&g, &g.nodes[0]);
	l.scale = l.total ? (double)(l.width - 2 * PAD) / l.total : 0;
	write_svg(out, &g, o, &l);
	if (fflush(out) || ferror(out)) {
		err = -EIO;
		goto cleanup;
	}
	if (o->stats) {
		*o->stats = (struct flamegraph_stats){
			.nodes = g.nr_tree,
			.drawn = g.nr_nodes,
			.pruned = g.nr_tree - g.nr_nodes,
			.total = l.total,
			.min_weight = l.min_weight,
			.capped = l.capped,
			.max_depth = l.max_depth,
			.weight_is_count = g.by_count,
			.base_total = g.diff ? (g.by_count ? g.base_count : g.base_off_ns) : 0,
			.vanished = g.nr_vanished,
			.vanished_weight = g.vanished,
		};
	}
	err = 0;
cleanup:
	flame_tree__free(t);
	reasons__free(rs);
	free(tg);
	return err;
}
