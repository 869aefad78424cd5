/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The off-CPU flame graph: one self-contained, interactive SVG drawn from a
 * profile (no network, no external script or style sheet).
 *
 * The tree: the root "all", then one frame per comm (or, with per_thread, per
 * thread, labelled "comm-tid", or "comm" when the tid is unknown), then each
 * stack's frames root first. Equal frames under the same parent merge; a
 * frame's width is the sum of its rows' off_ns (or count), so every parent is
 * at least as wide as its children and the root is the profile's total.
 * Siblings are ordered by name (then kind) so that output is deterministic;
 * the x axis is not time.
 *
 * Pruning: a frame narrower than min_width_px (or min_share_pct of the total)
 * is not drawn, nor are its descendants, but its time stays in its parent's
 * width, so every total stays exact; the gap shows at the parent's right end
 * with its self time. If more than max_frames frames would still be drawn,
 * only the max_frames widest are (ties in document order): the output size is
 * bounded whatever the input (about 150 bytes a frame plus twice its name).
 *
 * Interaction (in the SVG's own script, the conventions of Brendan Gregg's
 * FlameGraph): hovering a frame shows its name, kind, off-CPU time, interval
 * count and share of the total in the status line (and as a native tooltip);
 * a click zooms into a frame (descendants widen to the full width, ancestors
 * stay visible, dimmed); "Reset Zoom" or Escape returns. Ctrl-F, F3 or the
 * "Search" button asks for a regular expression ("(?i)" prefix: any case);
 * matching frames turn magenta and "Matched: P% (TIME)" shows the matched
 * share of the total, counting a match nested inside another match once
 * (frames not drawn are not searched).
 * The URL fragment or query "s=REGEX" searches and "z=N" zooms to the N-th
 * drawn frame (document order) on load; both are kept up to date.
 *
 * Colours are a deterministic function of the frame name (stable output):
 * user frames blue, inlined functions (FRAME_INLINE) cyan and "user, inlined"
 * in their tooltip, kernel frames violet, FRAME_MISSING grey, comm/thread
 * frames slate. FLAMEGRAPH_COLOR_REASON instead colours each frame by the
 * reason its stacks wait (lock, sleep, disk, net, pipe, poll, child, memory,
 * preempt, other; "mixed" when its stacks disagree), from a small table of
 * kernel frame name patterns and the preempted state, with a legend.
 *
 * A label too long for its frame is cut with "..", never inside square
 * brackets: "[postgres+0x1a2b3c]" is shown whole or not at all (the tooltip
 * always has the whole name). Names are written as XML-safe UTF-8: markup
 * characters are escaped, and bytes that are not valid UTF-8 or are control
 * characters are shown as
 * "\xNN".
 *
 * Differential mode (flamegraph_opts.base set; the conventions of FlameGraph's
 * difffolded): p is the NEW profile and gives the layout (every width is
 * NEW's); base is the BASE profile. Frames of both are matched by their path
 * from the root: the comm (or thread label), then the frame kinds and names
 * cleaned as analyze/diff.h matches stacks (reasons__clean_name: no offsets,
 * no kernel compiler suffixes). Names are drawn cleaned, so frames that differ
 * only by an offset merge. Each frame is coloured by the change of its
 * inclusive weight from BASE to NEW: red grew, blue shrank, grey unchanged;
 * the saturation is |change| / the larger of its two values (full for a frame
 * only in NEW; a frame that doubled is as pale as one that halved). Compared
 * values are the raw weights (FLAMEGRAPH_DIFF_ABSOLUTE), each side's share of
 * its total (FLAMEGRAPH_DIFF_SHARE), or weight per second of each side's wall
 * time (FLAMEGRAPH_DIFF_WALL). The tooltip adds "base B, new N, delta D (R)"
 * (R the relative change, "new" when B is 0; shares in %, their change in
 * percentage points "pp", with the raw times in parentheses; per-wall values
 * as "/s"). The subtitle gives both totals and their change; a second line
 * says what widths and colours show and how many frames are only in BASE,
 * counting only the outermost such frame of a path, with their total in
 * compared units. Those frames are not drawn (they have no width) and are
 * not counted as pruned: the stats' nodes are NEW's tree. Pruning, the frame
 * cap, search ("Matched" is a share of NEW's total) and zoom are as above;
 * color is ignored.
 */
#ifndef OFFCPU_OUTPUT_FLAMEGRAPH_H
#define OFFCPU_OUTPUT_FLAMEGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/profile.h"

enum flamegraph_weight {
	FLAMEGRAPH_WEIGHT_OFF_NS = 0, /* width = off-CPU time */
	FLAMEGRAPH_WEIGHT_COUNT,      /* width = number of off-CPU intervals */
};

enum flamegraph_color {
	FLAMEGRAPH_COLOR_BLUE = 0, /* the off-CPU palette: hue by frame kind */
	FLAMEGRAPH_COLOR_REASON,   /* hue by the reason the stacks wait */
};

#define FLAMEGRAPH_WIDTH 1200
#define FLAMEGRAPH_MIN_WIDTH_PX 0.1
#define FLAMEGRAPH_MAX_FRAMES 20000

/* What a write drew; filled on success when flamegraph_opts.stats is set. */
struct flamegraph_stats {
	size_t nodes;	/* frames in the merged tree, root and comm/thread frames included */
	size_t drawn;	/* frames written to the SVG */
	size_t pruned;	/* nodes - drawn */
	uint64_t total; /* the root's weight (ns or intervals) */
	/*
	 * The smallest weight a drawn frame may have. When capped, frames of
	 * exactly this weight were drawn in document order while room was left.
	 */
	uint64_t min_weight;
	bool capped;	      /* max_frames raised the width threshold */
	int max_depth;	      /* of the drawn frames; the root is depth 0 */
	bool weight_is_count; /* widths are interval counts (asked for, or no time recorded) */
	/* Differential mode only (else 0): */
	uint64_t base_total;	  /* BASE's root weight, in the same unit as total */
	size_t vanished;	  /* outermost frames only in BASE (not drawn) */
	uint64_t vanished_weight; /* their BASE weight, raw */
};

/* What a differential flame graph compares; see the top of this file. */
enum flamegraph_diff {
	FLAMEGRAPH_DIFF_ABSOLUTE = 0, /* raw weights */
	FLAMEGRAPH_DIFF_SHARE,	      /* shares of each side's total */
	FLAMEGRAPH_DIFF_WALL,	      /* weight per second of each side's wall time */
};

/* All-zero options (or NULL) give the defaults. */
struct flamegraph_opts {
	const char *title;    /* NULL: "Off-CPU Time Flame Graph" ("... Icicle Graph") */
	const char *subtitle; /* NULL: none; the totals line is always written */
	/*
	 * FLAMEGRAPH_WEIGHT_OFF_NS falls back to counts when the profile holds
	 * intervals but no time (folded input read with count_only).
	 */
	enum flamegraph_weight weight;
	enum flamegraph_color color;
	bool icicle;	      /* root at the top, stacks grow down */
	bool per_thread;      /* one frame per thread under the root, not per comm */
	unsigned int width;   /* image width in px, 200..100000; 0: FLAMEGRAPH_WIDTH */
	double min_width_px;  /* 0: FLAMEGRAPH_MIN_WIDTH_PX; < 0: no width threshold */
	double min_share_pct; /* > 0: prune below this share of the total instead of by px */
	size_t max_frames;    /* 0: FLAMEGRAPH_MAX_FRAMES; SIZE_MAX: no cap */
	struct flamegraph_stats *stats; /* optional, filled on success */
	/*
	 * Differential mode when set: p is NEW, this is BASE. The title then
	 * defaults to "Differential Off-CPU Flame Graph" ("... Icicle Graph").
	 */
	const struct profile *base;
	enum flamegraph_diff diff;
	uint64_t base_wall_ns, new_wall_ns; /* FLAMEGRAPH_DIFF_WALL: both > 0 */
};

/*
 * Write the SVG for p to out. Returns 0, -EINVAL (NULL out or p, width or
 * thresholds out of range, a NaN, diff out of range, FLAMEGRAPH_DIFF_WALL
 * without both wall times), -ENOMEM, -EOVERFLOW (differential mode: the
 * two profiles' frames or stacks together ran out of ids), or -EIO when
 * writing failed. An empty profile gives a valid SVG that says so.
 */
int flamegraph__write(FILE *out, const struct profile *p, const struct flamegraph_opts *o);

#endif
