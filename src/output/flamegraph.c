// SPDX-License-Identifier: GPL-2.0-only
/*
 * The flame graph writer. The merged tree is never built in memory whole: the
 * rows are sorted by their path (comm or thread, then frames, each level
 * ordered by name), so one sweep meets the tree's nodes in pre-order with
 * siblings already sorted, keeping only the path of open nodes. A node's
 * weight is final when the sweep leaves it; a node too narrow to draw is then
 * the last one kept and is dropped on the spot. Memory is the rows plus the
 * nodes drawn, and the cost is one sort: millions of distinct nodes cost
 * sequential work, not a random access each as a (parent, frame) hash would.
 *
 * A differential graph sweeps both profiles at once: their frames (names
 * cleaned) and stacks are interned into one union profile, the rows of both
 * become entries marked by side, and each node sums both sides' weights. The
 * layout is NEW's, so a node with no NEW weight is too narrow to draw like any
 * other; what it had in BASE is counted as vanished.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/reasons.h"
#include "output/flamegraph.h"
#include "util/hash.h"
#include "util/hmap.h"
#include "util/vec.h"

/* Layout in px. CHAR_W is Verdana's mean glyph width at FONT_PX, for labels. */
#define PAD 10
#define FRAME_H 16
#define FONT_PX 12
#define CHAR_W (0.59 * FONT_PX)
#define TOP 56
#define BOTTOM 32
#define LEGEND_ROW 18
#define LEGEND_COL 100
#define DIFF_KEY_H 18

#define NONE UINT32_MAX

enum fg_reason {
	R_UNSET = 0, /* no row seen yet: merges with anything */
	R_LOCK,
	R_SLEEP,
	R_DISK,
	R_NET,
	R_PIPE,
	R_POLL,
	R_CHILD,
	R_MEMORY,
	R_PREEMPT,
	R_OTHER,
	R_MIXED,
	R__COUNT,
};

static const struct {
	const char *name;
	unsigned char rgb[3];
} reasons[R__COUNT] = {
	[R_UNSET] = {"mixed", {215, 215, 215}}, [R_LOCK] = {"lock", {235, 140, 60}},
	[R_SLEEP] = {"sleep", {120, 180, 235}}, [R_DISK] = {"disk", {190, 150, 95}},
	[R_NET] = {"net", {110, 195, 110}},	[R_PIPE] = {"pipe", {80, 200, 200}},
	[R_POLL] = {"poll", {170, 130, 225}},	[R_CHILD] = {"child", {230, 135, 185}},
	[R_MEMORY] = {"memory", {225, 95, 85}}, [R_PREEMPT] = {"preempt", {235, 205, 70}},
	[R_OTHER] = {"other", {150, 165, 190}}, [R_MIXED] = {"mixed", {215, 215, 215}},
};

/*
 * Why a stack waits, from its kernel frames: the first rule (in this order)
 * whose needle occurs in any kernel frame's name wins, so the specific
 * mechanism (futex, pipe, poll) beats the generic way of sleeping (hrtimer)
 * that it uses underneath. A preempted row is "preempt" whatever its stack.
 * One table so that a shared reasons module can replace it.
 */
static const struct reason_rule {
	const char *needle;
	enum fg_reason reason;
} reason_rules[] = {
	{"futex", R_LOCK},	 {"mutex", R_LOCK},    {"rwsem", R_LOCK},
	{"pipe", R_PIPE},	 {"poll", R_POLL},     {"select", R_POLL},
	{"wait4", R_CHILD},	 {"do_wait", R_CHILD}, {"fault", R_MEMORY},
	{"io_schedule", R_DISK}, {"blk", R_DISK},      {"fsync", R_DISK},
	{"tcp", R_NET},		 {"sock", R_NET},      {"preempt_schedule", R_PREEMPT},
	{"nanosleep", R_SLEEP},	 {"hrtimer", R_SLEEP},
};
#define NR_RULES (sizeof(reason_rules) / sizeof(reason_rules[0]))
#define RULE_NONE 0xfe
#define RULE_UNKNOWN 0xff

/* A frame of the merged tree; the tree is kept as an array in pre-order. */
struct node {
	uint64_t off_ns; /* inclusive once the node is closed */
	uint64_t count;
	/* Differential: BASE's weights, and BASE weight of the children only in BASE. */
	uint64_t base_off_ns, base_count;
	uint64_t vanished;
	size_t nr_vanished;
	uint32_t key;	/* depth 1: group index; deeper: frame id */
	uint32_t depth; /* root 0 */
	uint8_t reason;
};

/* A row reduced to what the tree needs: its path is (group, stack's frames). */
struct entry {
	uint64_t off_ns, count;
	uint32_t group, stack;
	/* Sort keys at hand: group rank, first two frames' rank + 1 (0: no frame). */
	uint32_t key[3];
	uint8_t reason;
	bool base; /* differential: a BASE row */
};

enum { NEW = 0, BASE = 1 };

struct graph {
	/* The frames, stacks and threads entries refer to: NEW, or the union of both sides. */
	const struct profile *p;
	const struct profile *side[2];		/* differential: NEW and BASE */
	struct profile *u;			/* the union, owned */
	uint32_t *thread_map[2], *stack_map[2]; /* side's ids -> the union's */
	bool diff;
	enum flamegraph_diff cmp;
	double denom[2];		  /* a side's weight / denom is what is compared */
	uint64_t base_off_ns, base_count; /* BASE's totals */
	uint64_t vanished;
	size_t nr_vanished;
	bool per_thread, by_reason, by_count;
	char **groups; /* labels of the root's children */
	size_t nr_groups, cap_groups;
	uint32_t *thread_group, *group_rank, *frame_rank;
	uint8_t *frame_rule, *stack_reason;
	struct entry *entries;
	size_t nr_entries;
	struct node *nodes; /* the nodes kept, pre-order */
	size_t nr_nodes, cap_nodes;
	size_t nr_tree; /* nodes in the whole tree */
	uint64_t total_off_ns, total_count;
};

static int add_group(struct graph *g, char *label)
{
	if (!label)
		return -ENOMEM;
	if (vec_reserve(g->groups, g->cap_groups, g->nr_groups + 1)) {
		free(label);
		return -ENOMEM;
	}
	g->groups[g->nr_groups++] = label;
	return 0;
}

/* Map every thread to its root child: itself, or the first thread with its comm. */
static int make_groups(struct graph *g)
{
	size_t n = profile__nr_threads(g->p);
	struct hmap by_comm = {0}; /* comm -> its group */
	int err = -ENOMEM;

	g->thread_group = malloc((n ? n : 1) * sizeof(*g->thread_group));
	if (!g->thread_group)
		return -ENOMEM;
	for (size_t id = 0; id < n; id++) {
		const struct profile_thread *th = profile__thread_at(g->p, id);
		const char *comm = th->comm && th->comm[0] ? th->comm : "[unknown]";
		char *label = NULL;
		size_t pos;
		uint64_t h;
		void *v;

		if (g->per_thread) {
			if (!th->tid)
				label = strdup(comm);
			else if (asprintf(&label, "%s-%d", comm, th->tid) < 0)
				label = NULL;
			g->thread_group[id] = g->nr_groups;
			if ((err = add_group(g, label)))
				goto cleanup;
			continue;
		}
		h = hash_bytes(comm, strlen(comm), 0);
		if ((err = hmap__reserve(&by_comm)))
			goto cleanup;
		for (pos = hmap__first(&by_comm, h); (v = hmap__next(&by_comm, h, &pos));)
			if (!strcmp(g->groups[hmap_idx_of(v)], comm))
				break;
		if (!v) {
			hmap__put(&by_comm, pos, h, hmap_idx(g->nr_groups));
			v = hmap_idx(g->nr_groups);
			if ((err = add_group(g, strdup(comm))))
				goto cleanup;
		}
		g->thread_group[id] = hmap_idx_of(v);
	}
	err = 0;
cleanup:
	hmap__free(&by_comm);
	return err;
}

static int by_group_label(const void *a, const void *b, void *arg)
{
	const struct graph *g = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(g->groups[x], g->groups[y]);

	return c ? c : x < y ? -1 : x > y;
}

static int by_frame_name(const void *a, const void *b, void *arg)
{
	const struct graph *g = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct profile_frame *fx = profile__frame_at(g->p, x),
				   *fy = profile__frame_at(g->p, y);
	int c = strcmp(fx->name, fy->name);

	if (c)
		return c;
	if (fx->kind != fy->kind)
		return fx->kind < fy->kind ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* rank[id]: the position of id when ids are sorted by cmp (siblings are drawn in that order). */
static uint32_t *make_ranks(struct graph *g, size_t n,
			    int (*cmp)(const void *, const void *, void *))
{
	uint32_t *ids = malloc((n ? n : 1) * sizeof(*ids)),
		 *rank = malloc((n ? n : 1) * sizeof(*rank));

	if (!ids || !rank) {
		free(ids);
		free(rank);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		ids[i] = i;
	qsort_r(ids, n, sizeof(*ids), cmp, g);
	for (size_t i = 0; i < n; i++)
		rank[ids[i]] = i;
	free(ids);
	return rank;
}

static uint8_t frame_rule(struct graph *g, uint32_t id)
{
	const struct profile_frame *f;

	if (g->frame_rule[id] != RULE_UNKNOWN)
		return g->frame_rule[id];
	f = profile__frame_at(g->p, id);
	g->frame_rule[id] = RULE_NONE;
	if (f->kind == FRAME_KERNEL) {
		for (size_t r = 0; r < NR_RULES; r++) {
			if (strstr(f->name, reason_rules[r].needle)) {
				g->frame_rule[id] = r;
				break;
			}
		}
	}
	return g->frame_rule[id];
}

static uint8_t row_reason(struct graph *g, uint32_t stack, enum offcpu_state state)
{
	const uint32_t *frames;
	size_t n;
	uint8_t best = RULE_NONE;

	if (state == OFFCPU_STATE_PREEMPT)
		return R_PREEMPT;
	if (g->stack_reason[stack])
		return g->stack_reason[stack];
	frames = profile__stack_at(g->p, stack, &n);
	for (size_t i = 0; i < n; i++) {
		uint8_t r = frame_rule(g, frames[i]);

		if (r < best)
			best = r;
	}
	g->stack_reason[stack] = best == RULE_NONE ? R_OTHER : reason_rules[best].reason;
	return g->stack_reason[stack];
}

static uint8_t merge_reason(uint8_t a, uint8_t b)
{
	if (a == R_UNSET)
		return b;
	if (b == R_UNSET || a == b)
		return a;
	return R_MIXED;
}

/* Entries by path, each level by rank: the sweep then meets the tree in pre-order. */
static int by_path(const void *a, const void *b, void *arg)
{
	const struct graph *g = arg;
	const struct entry *x = a, *y = b;
	const uint32_t *fx, *fy;
	size_t nx, ny;

	for (int i = 0; i < 3; i++)
		if (x->key[i] != y->key[i])
			return x->key[i] < y->key[i] ? -1 : 1;
	if (x->stack == y->stack || !x->key[2])
		return 0;
	fx = profile__stack_at(g->p, x->stack, &nx);
	fy = profile__stack_at(g->p, y->stack, &ny);
	for (size_t i = 2; i < nx && i < ny; i++)
		if (fx[i] != fy[i])
			return g->frame_rank[fx[i]] < g->frame_rank[fy[i]] ? -1 : 1;
	return nx < ny ? -1 : nx > ny;
}

/* The rows of src as entries; the maps take its ids to g->p's (NULL: src is g->p). */
static void add_entries(struct graph *g, const struct profile *src, const uint32_t *thread_map,
			const uint32_t *stack_map, bool base)
{
	size_t rows = profile__nr_rows(src);

	for (size_t i = 0; i < rows; i++) {
		const struct profile_row *row = profile__row_at(src, i);
		struct entry *e = &g->entries[g->nr_entries];
		uint32_t thread = thread_map ? thread_map[row->thread] : row->thread;
		uint32_t stack = stack_map ? stack_map[row->stack] : row->stack;
		const uint32_t *frames;
		size_t n;

		if (!row->w.off_ns && !row->w.count)
			continue;
		*e = (struct entry){.off_ns = row->w.off_ns,
				    .count = row->w.count,
				    .group = g->thread_group[thread],
				    .stack = stack,
				    .reason = g->by_reason ? row_reason(g, stack, row->state)
							   : R_UNSET,
				    .base = base};
		frames = profile__stack_at(g->p, stack, &n);
		e->key[0] = g->group_rank[e->group];
		e->key[1] = n > 0 ? g->frame_rank[frames[0]] + 1 : 0;
		e->key[2] = n > 1 ? g->frame_rank[frames[1]] + 1 : 0;
		if (base) {
			g->base_off_ns += e->off_ns;
			g->base_count += e->count;
		} else {
			g->total_off_ns += e->off_ns;
			g->total_count += e->count;
		}
		g->nr_entries++;
	}
}

static int make_entries(struct graph *g)
{
	size_t rows = g->diff ? profile__nr_rows(g->side[NEW]) + profile__nr_rows(g->side[BASE])
			      : profile__nr_rows(g->p);

	g->entries = malloc((rows ? rows : 1) * sizeof(*g->entries));
	if (!g->entries)
		return -ENOMEM;
	if (g->diff) {
		add_entries(g, g->side[NEW], g->thread_map[NEW], g->stack_map[NEW], false);
		add_entries(g, g->side[BASE], g->thread_map[BASE], g->stack_map[BASE], true);
	} else {
		add_entries(g, g->p, NULL, NULL, false);
	}
	qsort_r(g->entries, g->nr_entries, sizeof(*g->entries), by_path, g);
	return 0;
}

/*
 * Intern one side's threads, frames (names cleaned) and stacks into the
 * union, and map its ids to the union's.
 */
static int add_to_union(struct graph *g, int side)
{
	const struct profile *p = g->side[side];
	size_t nf = profile__nr_frames(p), ns = profile__nr_stacks(p), nt = profile__nr_threads(p);
	uint32_t *frame_map = malloc((nf ? nf : 1) * sizeof(*frame_map)), *ids = NULL;
	size_t cap = 0;
	char clean[512];
	int id, err = -ENOMEM;

	g->thread_map[side] = malloc((nt ? nt : 1) * sizeof(uint32_t));
	g->stack_map[side] = malloc((ns ? ns : 1) * sizeof(uint32_t));
	if (!frame_map || !g->thread_map[side] || !g->stack_map[side])
		goto cleanup;
	for (size_t i = 0; i < nt; i++) {
		const struct profile_thread *th = profile__thread_at(p, i);

		if ((id = profile__thread(g->u, th->pid, th->tid, th->comm)) < 0)
			goto fail;
		g->thread_map[side][i] = id;
	}
	for (size_t i = 0; i < nf; i++) {
		const struct profile_frame *f = profile__frame_at(p, i);
		const char *name = reasons__clean_name(f->kind, f->name, clean, sizeof(clean));

		/* A name that is all offset keeps it, rather than becoming empty. */
		if (!name[0])
			name = f->name;
		if ((id = profile__frame(g->u, f->kind, name, strlen(name))) < 0)
			goto fail;
		frame_map[i] = id;
	}
	for (size_t i = 0; i < ns; i++) {
		size_t n;
		const uint32_t *frames = profile__stack_at(p, i, &n);

		if (vec_reserve(ids, cap, n))
			goto cleanup;
		for (size_t k = 0; k < n; k++)
			ids[k] = frame_map[frames[k]];
		if ((id = profile__stack(g->u, ids, n)) < 0)
			goto fail;
		g->stack_map[side][i] = id;
	}
	err = 0;
	goto cleanup;
fail:
	err = id;
cleanup:
	free(ids);
	free(frame_map);
	return err;
}

static uint64_t weight(const struct graph *g, const struct node *n)
{
	return g->by_count ? n->count : n->off_ns;
}

static uint64_t base_weight(const struct graph *g, const struct node *n)
{
	return g->by_count ? n->base_count : n->base_off_ns;
}

static int push_node(struct graph *g, uint32_t key, uint32_t depth)
{
	if (vec_reserve(g->nodes, g->cap_nodes, g->nr_nodes + 1))
		return -ENOMEM;
	g->nodes[g->nr_nodes++] = (struct node){.key = key, .depth = depth};
	g->nr_tree++;
	return 0;
}

/*
 * Close the node open at depth d: its weight is final, so add it to its
 * parent's; a node too narrow to draw is the last one kept (its descendants
 * are narrower still and went before it), so dropping it is a pop.
 */
static void close_node(struct graph *g, const size_t *path, size_t d, uint64_t min_weight)
{
	struct node *n = &g->nodes[path[d]], *parent = &g->nodes[path[d - 1]];

	parent->off_ns += n->off_ns;
	parent->count += n->count;
	parent->base_off_ns += n->base_off_ns;
	parent->base_count += n->base_count;
	parent->reason = merge_reason(parent->reason, n->reason);
	/*
	 * Only in BASE: vanished, unless an ancestor is too (then that one
	 * counts); not a frame of the tree drawn, so not one pruned either.
	 */
	if (g->diff && !weight(g, n))
		g->nr_tree--;
	if (g->diff && !weight(g, n) && base_weight(g, n)) {
		parent->vanished += base_weight(g, n);
		parent->nr_vanished++;
	} else if (g->diff && weight(g, n)) {
		g->vanished += n->vanished;
		g->nr_vanished += n->nr_vanished;
	}
	if (weight(g, n) < min_weight)
		g->nr_nodes--;
}

/* One pass over the sorted entries builds the tree in pre-order, keeping only wide nodes. */
static int sweep(struct graph *g, uint64_t min_weight)
{
	size_t cap = 64, open = 1, *path = malloc(cap * sizeof(*path)); /* open nodes, by depth */
	int err;

	if (!path)
		return -ENOMEM;
	if ((err = push_node(g, 0, 0)))
		goto cleanup;
	path[0] = 0;
	for (size_t i = 0; i < g->nr_entries; i++) {
		const struct entry *e = &g->entries[i];
		size_t n, same = 1, len;
		const uint32_t *frames = profile__stack_at(g->p, e->stack, &n);
		struct node *leaf;

		len = n + 2; /* root, group, frames */
		if (vec_reserve(path, cap, len)) {
			err = -ENOMEM;
			goto cleanup;
		}
		if (open > 1 && g->nodes[path[1]].key == e->group)
			for (same = 2; same < open && same < len; same++)
				if (g->nodes[path[same]].key != frames[same - 2])
					break;
		while (open > same)
			close_node(g, path, --open, min_weight);
		for (; open < len; open++) {
			if ((err = push_node(g, open == 1 ? e->group : frames[open - 2], open)))
				goto cleanup;
			path[open] = g->nr_nodes - 1;
		}
		leaf = &g->nodes[path[len - 1]];
		if (e->base) {
			leaf->base_off_ns += e->off_ns;
			leaf->base_count += e->count;
		} else {
			leaf->off_ns += e->off_ns;
			leaf->count += e->count;
		}
		leaf->reason = merge_reason(leaf->reason, e->reason);
	}
	while (open > 1)
		close_node(g, path, --open, min_weight);
	if (g->diff && weight(g, &g->nodes[0])) {
		g->vanished += g->nodes[0].vanished;
		g->nr_vanished += g->nodes[0].nr_vanished;
	} else if (g->diff) {
		/* NEW is empty: all of BASE vanished, the root's children each a frame. */
		g->vanished = base_weight(g, &g->nodes[0]);
		g->nr_vanished = g->nodes[0].nr_vanished;
	}
	err = 0;
cleanup:
	free(path);
	return err;
}

static void graph_free(struct graph *g)
{
	for (size_t i = 0; i < g->nr_groups; i++)
		free(g->groups[i]);
	free(g->groups);
	free(g->thread_group);
	free(g->group_rank);
	free(g->frame_rank);
	free(g->frame_rule);
	free(g->stack_reason);
	free(g->entries);
	free(g->nodes);
	for (int s = 0; s < 2; s++) {
		free(g->thread_map[s]);
		free(g->stack_map[s]);
	}
	profile__free(g->u);
}

/* The k-th largest (0-based) of v[0..n), k < n; v is reordered. */
static uint64_t kth_largest(uint64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n;
	uint64_t seed = 0x9e3779b97f4a7c15ULL;

	for (;;) {
		uint64_t pivot;
		size_t lt = lo, i = lo, gt = hi;

		seed = hash_mix64(seed + 1);
		pivot = v[lo + seed % (hi - lo)];
		/* Three ways, largest first: [lo,lt) > pivot, [lt,gt) == pivot, [gt,hi) < pivot. */
		while (i < gt) {
			if (v[i] > pivot) {
				uint64_t x = v[i];

				v[i++] = v[lt];
				v[lt++] = x;
			} else if (v[i] < pivot) {
				uint64_t x = v[i];

				v[i] = v[--gt];
				v[gt] = x;
			} else {
				i++;
			}
		}
		if (k < lt)
			hi = lt;
		else if (k >= gt)
			lo = gt;
		else
			return pivot;
	}
}

/* The width threshold as a weight: no frame narrower is drawn. */
static uint64_t width_threshold(const struct flamegraph_opts *o, uint64_t total, unsigned int width)
{
	double px = o->min_width_px ? o->min_width_px : FLAMEGRAPH_MIN_WIDTH_PX;
	long double m = 0;

	if (o->min_share_pct > 0)
		m = (long double)total * o->min_share_pct / 100;
	else if (px > 0)
		m = (long double)total * px / (width - 2 * PAD);
	if (m >= (long double)UINT64_MAX)
		return UINT64_MAX;
	if (m <= 1)
		return 1;
	return (uint64_t)m + ((long double)(uint64_t)m < m); /* rounded up */
}

/*
 * Keep at most max nodes, the root and the heaviest others: all those heavier
 * than t, the (max - 1)-th largest weight, then those weighing exactly t in
 * pre-order while room is left. A parent weighs at least as much as its child
 * and comes first, so what stays is still a tree in pre-order.
 */
static int cap_frames(struct graph *g, size_t max, uint64_t *min_weight, bool *capped)
{
	size_t n = g->nr_nodes - 1, kept = 1, room = max - 1;
	uint64_t *v, t;

	*capped = n + 1 > max;
	if (!*capped)
		return 0;
	if (max == 1) {
		*min_weight = UINT64_MAX;
		g->nr_nodes = 1;
		return 0;
	}
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = weight(g, &g->nodes[i + 1]);
	t = kth_largest(v, n, max - 2);
	free(v);
	*min_weight = t;
	for (size_t i = 1; i < g->nr_nodes; i++)
		room -= weight(g, &g->nodes[i]) > t;
	for (size_t i = 1; i < g->nr_nodes; i++) {
		uint64_t w = weight(g, &g->nodes[i]);

		if (w > t || (w == t && room && room--))
			g->nodes[kept++] = g->nodes[i];
	}
	g->nr_nodes = kept;
	return 0;
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

static int graph_build(struct graph *g, const struct flamegraph_opts *o, unsigned int width,
		       uint64_t *min_weight, bool *capped)
{
	size_t nr_frames, nr_stacks;
	int err;

	if (g->diff) {
		g->u = profile__new();
		if (!g->u)
			return -ENOMEM;
		if ((err = add_to_union(g, NEW)) || (err = add_to_union(g, BASE)))
			return err;
		g->p = g->u;
	}
	nr_frames = profile__nr_frames(g->p);
	nr_stacks = profile__nr_stacks(g->p);
	g->stack_reason = calloc(nr_stacks ? nr_stacks : 1, 1);
	g->frame_rule = malloc(nr_frames ? nr_frames : 1);
	if (!g->stack_reason || !g->frame_rule)
		return -ENOMEM;
	memset(g->frame_rule, RULE_UNKNOWN, nr_frames ? nr_frames : 1);
	if ((err = make_groups(g)))
		return err;
	g->group_rank = make_ranks(g, g->nr_groups, by_group_label);
	g->frame_rank = make_ranks(g, nr_frames, by_frame_name);
	if (!g->group_rank || !g->frame_rank)
		return -ENOMEM;
	if ((err = make_entries(g)))
		return err;
	/* Widths by time unless asked for counts, or unless no time was recorded. */
	g->by_count = o->weight == FLAMEGRAPH_WEIGHT_COUNT || (!g->total_off_ns && g->total_count);
	if (g->diff)
		set_denoms(g, o);
	*min_weight = width_threshold(o, g->by_count ? g->total_count : g->total_off_ns, width);
	if ((err = sweep(g, *min_weight)))
		return err;
	return cap_frames(g, o->max_frames ? o->max_frames : FLAMEGRAPH_MAX_FRAMES, min_weight,
			  capped);
}

static const char *node_name(const struct graph *g, const struct node *n)
{
	if (n->depth == 0)
		return "all";
	if (n->depth == 1)
		return g->groups[n->key];
	return profile__frame_at(g->p, n->key)->name;
}

/* 0 root, 1 comm or thread, then 2 + the frame kind. */
static int node_kind(const struct graph *g, const struct node *n)
{
	if (n->depth <= 1)
		return n->depth;
	return 2 + profile__frame_at(g->p, n->key)->kind;
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

/* A label that fits w px: the name, or its start and "..", or nothing. */
static void put_label(FILE *out, const char *name, double w)
{
	double fit = (w - 6) / CHAR_W;
	size_t n = fit > 0 ? (size_t)fit : 0, len = text_units(name);

	if (len <= n) {
		put_text(out, name, len);
	} else if (n >= 3) {
		put_text(out, name, n - 2);
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

static void node_color(const struct graph *g, const struct node *n, unsigned char rgb[3])
{
	uint32_t h = fnv1a(node_name(g, n));
	double a = (h & 0xff) / 255.0, b = (h >> 8 & 0xff) / 255.0, c = (h >> 16 & 0xff) / 255.0;
	int kind = node_kind(g, n);

	if (kind == 2 + FRAME_MISSING) {
		rgb[0] = rgb[1] = rgb[2] = 160 + 25 * a;
	} else if (g->by_reason) {
		const unsigned char *base = reasons[n->reason].rgb;

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
static void put_diff_info(FILE *out, const struct graph *g, const struct node *n)
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

static const char *kind_label(const struct graph *g, const struct node *n)
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

static void put_frame(FILE *out, const struct graph *g, const struct layout *l,
		      const struct node *n, uint64_t off)
{
	char time[32], count[32];
	unsigned char rgb[3];
	uint64_t w = weight(g, n);
	double x = PAD + off * l->scale, wpx = l->total ? w * l->scale : l->width - 2 * PAD;
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
	if (g->by_reason)
		fprintf(out, ", reason: %s", reasons[n->reason].name);
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

static const char style[] =
	"text{font-family:Verdana,\"DejaVu Sans\",sans-serif;font-size:12px;fill:#000}\n"
	"#title{font-size:17px;text-anchor:middle}\n"
	"#subtitle{text-anchor:middle;fill:#555}\n"
	".btn{cursor:pointer;fill:#1a4d99}\n"
	".btn:hover{text-decoration:underline}\n"
	"#search,#matched{text-anchor:end}\n"
	"#frames>g{cursor:pointer}\n"
	"#frames>g:hover>rect{stroke:#000;stroke-width:0.5}\n"
	"#frames rect{rx:2px;ry:2px}\n"
	"#frames text{pointer-events:none}\n"
	".hid{display:none}\n"
	".anc{opacity:0.5}\n";

/* The SVG's script; the layout it needs comes first in `var fg`. See flamegraph.h. */
static const char script[] =
	"\"use strict\";\n"
	"var frames = [], box, details, rest, matched, unzoomBtn, searchBtn, term = \"\", zoomed = "
	"0;\n"
	"\n"
	"function fmt(v) {\n"
	"\tif (fg.count)\n"
	"\t\treturn v + (v === 1 ? \" interval\" : \" intervals\");\n"
	"\tvar units = [\"ns\", \"us\", \"ms\", \"s\"], i = 0;\n"
	"\twhile (i < 3 && v >= 999.5) {\n"
	"\t\tv /= 1000;\n"
	"\t\ti++;\n"
	"\t}\n"
	"\tif (i === 0)\n"
	"\t\treturn v + \" ns\";\n"
	"\treturn v.toFixed(v < 9.995 ? 2 : v < 99.95 ? 1 : 0) + \" \" + units[i];\n"
	"}\n"
	"\n"
	"function label(f, x, w) {\n"
	"\tvar n = Math.floor((w - 6) / fg.cw), s = \"\";\n"
	"\tif (f.name.length <= n)\n"
	"\t\ts = f.name;\n"
	"\telse if (n >= 3)\n"
	"\t\ts = f.name.slice(0, n - 2) + \"..\";\n"
	"\tif (!f.t) {\n"
	"\t\tif (!s)\n"
	"\t\t\treturn;\n"
	"\t\tf.t = document.createElementNS(\"http://www.w3.org/2000/svg\", \"text\");\n"
	"\t\tf.t.setAttribute(\"y\", +f.r.getAttribute(\"y\") + fg.fh - 5);\n"
	"\t\tf.g.appendChild(f.t);\n"
	"\t}\n"
	"\tf.t.setAttribute(\"x\", (x + 3).toFixed(2));\n"
	"\tf.t.textContent = s;\n"
	"}\n"
	"\n"
	"function place(f, x, w, cls) {\n"
	"\tf.r.setAttribute(\"x\", x.toFixed(2));\n"
	"\tf.r.setAttribute(\"width\", w.toFixed(2));\n"
	"\tlabel(f, x, w);\n"
	"\tif (cls)\n"
	"\t\tf.g.setAttribute(\"class\", cls);\n"
	"\telse\n"
	"\t\tf.g.removeAttribute(\"class\");\n"
	"}\n"
	"\n"
	"/* Zoom to z: its ancestors span the width (dimmed), its subtree widens, the rest hides. "
	"*/\n"
	"function zoom(z) {\n"
	"\tvar plot = fg.width - 2 * fg.pad, scale = z.v > 0 ? plot / z.v : 0;\n"
	"\tfor (var i = 0; i < frames.length; i++) {\n"
	"\t\tvar f = frames[i];\n"
	"\t\tif (i <= z.i && z.i < f.end)\n"
	"\t\t\tplace(f, fg.pad, plot, i < z.i ? \"anc\" : \"\");\n"
	"\t\telse if (i > z.i && i < z.end)\n"
	"\t\t\tplace(f, fg.pad + (f.off - z.off) * scale, f.v * scale, \"\");\n"
	"\t\telse\n"
	"\t\t\tf.g.setAttribute(\"class\", \"hid\");\n"
	"\t}\n"
	"\tzoomed = z.i;\n"
	"\tunzoomBtn.setAttribute(\"class\", z.i ? \"btn\" : \"btn hid\");\n"
	"\tkeep();\n"
	"}\n"
	"\n"
	"/* Matches nested inside a counted match are part of its width: count them once. */\n"
	"function search(s) {\n"
	"\tvar re = null, flags = \"\", sum = 0, end = -1;\n"
	"\tif (s) {\n"
	"\t\tvar src = s;\n"
	"\t\tif (src.slice(0, 4) === \"(?i)\") {\n"
	"\t\t\tsrc = src.slice(4);\n"
	"\t\t\tflags = \"i\";\n"
	"\t\t}\n"
	"\t\ttry {\n"
	"\t\t\tre = new RegExp(src, flags);\n"
	"\t\t} catch (err) {\n"
	"\t\t\tdetails.textContent = \"Not a regular expression: \" + s;\n"
	"\t\t\treturn;\n"
	"\t\t}\n"
	"\t}\n"
	"\tfor (var i = 0; i < frames.length; i++) {\n"
	"\t\tvar f = frames[i], m = re !== null && re.test(f.name);\n"
	"\t\tf.r.setAttribute(\"fill\", m ? \"#e600e6\" : f.fill);\n"
	"\t\tif (m && i >= end) {\n"
	"\t\t\tsum += f.v;\n"
	"\t\t\tend = f.end;\n"
	"\t\t}\n"
	"\t}\n"
	"\tterm = re ? s : \"\";\n"
	"\tsearchBtn.textContent = re ? \"Reset Search\" : \"Search\";\n"
	"\tif (re) {\n"
	"\t\tvar total = frames[0].v, pct = total > 0 ? 100 * sum / total : 0;\n"
	"\t\tmatched.textContent = \"Matched: \" + pct.toFixed(1) + \"% (\" + fmt(sum) + \")\";\n"
	"\t} else {\n"
	"\t\tmatched.textContent = \"\";\n"
	"\t}\n"
	"\tkeep();\n"
	"}\n"
	"\n"
	"function ask() {\n"
	"\tvar s = prompt(\"Search frames (a regular expression; (?i) first ignores case):\", "
	"term);\n"
	"\tif (s !== null)\n"
	"\t\tsearch(s);\n"
	"}\n"
	"\n"
	"/* Keep the view in the URL so that it can be reloaded or shared. */\n"
	"function keep() {\n"
	"\tvar h = [];\n"
	"\tif (term)\n"
	"\t\th.push(\"s=\" + encodeURIComponent(term));\n"
	"\tif (zoomed)\n"
	"\t\th.push(\"z=\" + zoomed);\n"
	"\tvar url = h.length ? \"#\" + h.join(\"&\") : location.pathname + location.search;\n"
	"\ttry {\n"
	"\t\thistory.replaceState(null, \"\", url);\n"
	"\t} catch (err) {\n"
	"\t}\n"
	"}\n"
	"\n"
	"function params() {\n"
	"\tvar p = {}, parts = (location.search.slice(1) + \"&\" + "
	"location.hash.slice(1)).split(\"&\");\n"
	"\tfor (var i = 0; i < parts.length; i++) {\n"
	"\t\tvar eq = parts[i].indexOf(\"=\");\n"
	"\t\tif (eq > 0) {\n"
	"\t\t\ttry {\n"
	"\t\t\t\tp[parts[i].slice(0, eq)] = decodeURIComponent(parts[i].slice(eq + 1));\n"
	"\t\t\t} catch (err) {\n"
	"\t\t\t}\n"
	"\t\t}\n"
	"\t}\n"
	"\treturn p;\n"
	"}\n"
	"\n"
	"function hit(e) {\n"
	"\tvar n = e.target;\n"
	"\twhile (n && n.parentNode !== box)\n"
	"\t\tn = n.parentNode;\n"
	"\treturn n ? frames[n.fgi] : null;\n"
	"}\n"
	"\n"
	"function init() {\n"
	"\tbox = document.getElementById(\"frames\");\n"
	"\tdetails = document.getElementById(\"details\");\n"
	"\tmatched = document.getElementById(\"matched\");\n"
	"\tunzoomBtn = document.getElementById(\"unzoom\");\n"
	"\tsearchBtn = document.getElementById(\"search\");\n"
	"\trest = details.textContent;\n"
	"\tvar gs = box.children, open = [];\n"
	"\tfor (var i = 0; i < gs.length; i++) {\n"
	"\t\tvar g = gs[i], r = g.querySelector(\"rect\"), y = +r.getAttribute(\"y\");\n"
	"\t\tvar title = g.querySelector(\"title\").textContent, nl = title.indexOf(\"\\n\");\n"
	"\t\tvar f = { i: i, g: g, r: r, t: g.querySelector(\"text\"), off: 0, next: 0, end: 0,\n"
	"\t\t\t  name: title.slice(0, nl), info: title.slice(nl + 1),\n"
	"\t\t\t  v: +g.getAttribute(\"data-v\"), fill: r.getAttribute(\"fill\"),\n"
	"\t\t\t  d: Math.round((fg.icicle ? y - fg.base : fg.base - y) / fg.fh) };\n"
	"\t\twhile (open.length && open[open.length - 1].d >= f.d)\n"
	"\t\t\topen.pop().end = i;\n"
	"\t\tif (open.length) {\n"
	"\t\t\tvar p = open[open.length - 1];\n"
	"\t\t\tf.off = p.next;\n"
	"\t\t\tp.next += f.v;\n"
	"\t\t}\n"
	"\t\tf.next = f.off;\n"
	"\t\topen.push(f);\n"
	"\t\tframes.push(f);\n"
	"\t\tg.fgi = i;\n"
	"\t}\n"
	"\twhile (open.length)\n"
	"\t\topen.pop().end = frames.length;\n"
	"\tif (!frames.length)\n"
	"\t\treturn;\n"
	"\tbox.addEventListener(\"click\", function (e) {\n"
	"\t\tvar f = hit(e);\n"
	"\t\tif (f)\n"
	"\t\t\tzoom(f);\n"
	"\t});\n"
	"\tbox.addEventListener(\"mouseover\", function (e) {\n"
	"\t\tvar f = hit(e);\n"
	"\t\tif (f)\n"
	"\t\t\tdetails.textContent = f.name + \" (\" + f.info + \")\";\n"
	"\t});\n"
	"\tbox.addEventListener(\"mouseout\", function () {\n"
	"\t\tdetails.textContent = rest;\n"
	"\t});\n"
	"\tunzoomBtn.addEventListener(\"click\", function () {\n"
	"\t\tzoom(frames[0]);\n"
	"\t});\n"
	"\tsearchBtn.addEventListener(\"click\", function () {\n"
	"\t\tif (term)\n"
	"\t\t\tsearch(\"\");\n"
	"\t\telse\n"
	"\t\t\task();\n"
	"\t});\n"
	"\twindow.addEventListener(\"keydown\", function (e) {\n"
	"\t\tvar find = (e.ctrlKey || e.metaKey) && (e.key === \"f\" || e.key === \"F\");\n"
	"\t\tif (find || e.key === \"F3\") {\n"
	"\t\t\te.preventDefault();\n"
	"\t\t\task();\n"
	"\t\t} else if (e.key === \"Escape\") {\n"
	"\t\t\tsearch(\"\");\n"
	"\t\t\tzoom(frames[0]);\n"
	"\t\t}\n"
	"\t});\n"
	"\tvar p = params();\n"
	"\tif (p.z && frames[+p.z])\n"
	"\t\tzoom(frames[+p.z]);\n"
	"\tif (p.s)\n"
	"\t\tsearch(p.s);\n"
	"}\n"
	"init();\n";

static void put_legend(FILE *out, const struct layout *l, int y)
{
	int cols = (l->width - 2 * PAD) / LEGEND_COL, k = 0;

	if (cols < 1)
		cols = 1;
	fputs("<g id=\"legend\">\n", out);
	for (int r = R_LOCK; r <= R_MIXED; r++, k++) {
		int x = PAD + (k % cols) * LEGEND_COL, ry = y + (k / cols) * LEGEND_ROW;
		const unsigned char *c = reasons[r].rgb;

		fprintf(out,
			"<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" "
			"fill=\"#%02x%02x%02x\"/>"
			"<text x=\"%d\" y=\"%d\">%s</text>\n",
			x, ry, c[0], c[1], c[2], x + 16, ry + 11, reasons[r].name);
	}
	fputs("</g>\n", out);
}

static int legend_rows(const struct layout *l)
{
	int cols = (l->width - 2 * PAD) / LEGEND_COL;

	if (cols < 1)
		cols = 1;
	return (R_MIXED - R_LOCK + cols) / cols;
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

static int write_svg(FILE *out, const struct graph *g, const struct flamegraph_opts *o,
		     struct layout *l)
{
	uint64_t *cursor; /* per depth: where the next child goes */
	size_t pruned = g->nr_tree - g->nr_nodes;
	char total_time[32], total_count[32];
	int legend_y = 0, height;
	const char *title = o->title		   ? o->title
			    : g->diff && o->icicle ? "Differential Off-CPU Icicle Graph"
			    : g->diff		   ? "Differential Off-CPU Flame Graph"
			    : o->icicle		   ? "Off-CPU Time Icicle Graph"
						   : "Off-CPU Time Flame Graph";

	cursor = calloc(l->max_depth + 2, sizeof(*cursor));
	if (!cursor)
		return -ENOMEM;
	l->frames_top = TOP + (g->diff ? DIFF_KEY_H : 0);
	height = l->frames_top + (l->max_depth + 1) * FRAME_H + BOTTOM;
	if (g->by_reason) {
		legend_y = height - BOTTOM + 8;
		height += legend_rows(l) * LEGEND_ROW;
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
		l->width, height, l->width, height, g->nr_nodes, pruned, style, l->width / 2);
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
		put_legend(out, l, legend_y);

	/* Pre-order, siblings by name: the script derives the tree from order and depth. */
	fputs("<g id=\"frames\">\n", out);
	for (size_t i = 0; i < g->nr_nodes; i++) {
		const struct node *n = &g->nodes[i];
		uint64_t x = cursor[n->depth];

		put_frame(out, g, l, n, x);
		cursor[n->depth] = x + weight(g, n);
		cursor[n->depth + 1] = x;
	}
	fputs("</g>\n", out);
	fprintf(out,
		"<script type=\"text/ecmascript\"><![CDATA[\n"
		"var fg = {width: %u, pad: %d, fh: %d, cw: %.2f, icicle: %s, base: %d, "
		"count: %s};\n%s]]></script>\n</svg>\n",
		l->width, PAD, FRAME_H, CHAR_W, l->icicle ? "true" : "false", frame_y(l, 0),
		g->by_count ? "true" : "false", script);
	free(cursor);
	return 0;
}

int flamegraph__write(FILE *out, const struct profile *p, const struct flamegraph_opts *opts)
{
	static const struct flamegraph_opts defaults;
	const struct flamegraph_opts *o = opts ? opts : &defaults;
	struct graph g = {.p = p};
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
	g.side[NEW] = p;
	g.side[BASE] = o->base;
	g.cmp = o->diff;
	g.by_reason = !g.diff && o->color == FLAMEGRAPH_COLOR_REASON;
	if ((err = graph_build(&g, o, l.width, &l.min_weight, &l.capped)))
		goto cleanup;
	l.total = weight(&g, &g.nodes[0]);
	l.scale = l.total ? (double)(l.width - 2 * PAD) / l.total : 0;
	for (size_t i = 0; i < g.nr_nodes; i++)
		if ((int)g.nodes[i].depth > l.max_depth)
			l.max_depth = g.nodes[i].depth;
	if ((err = write_svg(out, &g, o, &l)))
		goto cleanup;
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
cleanup:
	graph_free(&g);
	return err;
}
