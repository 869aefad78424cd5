// SPDX-License-Identifier: GPL-2.0-only
/*
 * The merged tree is never built in memory whole: the rows are sorted by
 * their path (comm or thread, then frames, each level ordered by name), so one
 * sweep meets the tree's nodes in pre-order with siblings already sorted,
 * keeping only the path of open nodes. A node's weight is final when the
 * sweep leaves it; a node too light to keep is then the last one kept and is
 * dropped on the spot. Memory is the rows plus the nodes kept, and the cost is
 * one sort: millions of distinct nodes cost sequential work, not a random
 * access each as a (parent, frame) hash would.
 *
 * A differential tree sweeps both profiles at once: their frames (names
 * cleaned) and stacks are interned into one union profile, the rows of both
 * become entries marked by side, and each node sums both sides' weights. The
 * layout is NEW's, so a node with no NEW weight is too light to keep like any
 * other; what it had in BASE is counted as vanished.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/reasons.h"
#include "output/flame_tree.h"
#include "util/hash.h"
#include "util/hmap.h"
#include "util/vec.h"

#define NONE UINT32_MAX

/* A row reduced to what the tree needs: its path is (group, stack's frames). */
struct entry {
	uint64_t off_ns, count;
	uint32_t group, stack;
	/* Sort keys at hand: group rank, first two frames' rank + 1 (0: no frame). */
	uint32_t key[3];
	uint8_t tag;
	bool base; /* differential: a BASE row */
};

enum { NEW = 0, BASE = 1 };

struct flame_tree {
	/* The frames, stacks and threads entries refer to: NEW, or the union of both sides. */
	const struct profile *p;
	const struct profile *side[2];		/* differential: NEW and BASE */
	struct profile *u;			/* the union, owned */
	uint32_t *thread_map[2], *stack_map[2]; /* side's ids -> the union's */
	bool diff, per_thread, by_count;
	flame_tree_tag_fn tag;
	void *tag_arg;
	uint8_t tag_mixed;
	flame_tree_merge_fn tag_merge;
	uint64_t base_off_ns, base_count; /* BASE's totals */
	uint64_t vanished;
	size_t nr_vanished;
	char **groups; /* labels of the root's children */
	size_t nr_groups, cap_groups;
	uint32_t *thread_group, *group_rank, *frame_rank;
	struct entry *entries;
	size_t nr_entries;
	struct flame_node *nodes; /* the nodes kept, pre-order */
	size_t nr_nodes, cap_nodes;
	size_t nr_tree; /* nodes in the whole tree */
	uint64_t total_off_ns, total_count;
	uint64_t min_weight;
	bool capped;
	struct flame_tree_info info;
};

static int add_group(struct flame_tree *t, char *label)
{
	if (!label)
		return -ENOMEM;
	if (vec_reserve(t->groups, t->cap_groups, t->nr_groups + 1)) {
		free(label);
		return -ENOMEM;
	}
	t->groups[t->nr_groups++] = label;
	return 0;
}

/* Map every thread to its root child: itself, or the first thread with its comm. */
static int make_groups(struct flame_tree *t)
{
	size_t n = profile__nr_threads(t->p);
	struct hmap by_comm = {0}; /* comm -> its group */
	int err = -ENOMEM;

	t->thread_group = malloc((n ? n : 1) * sizeof(*t->thread_group));
	if (!t->thread_group)
		return -ENOMEM;
	for (size_t id = 0; id < n; id++) {
		const struct profile_thread *th = profile__thread_at(t->p, id);
		const char *comm = th->comm && th->comm[0] ? th->comm : "[unknown]";
		char *label = NULL;
		size_t pos;
		uint64_t h;
		void *v;

		if (t->per_thread) {
			if (!th->tid)
				label = strdup(comm);
			else if (asprintf(&label, "%s-%d", comm, th->tid) < 0)
				label = NULL;
			t->thread_group[id] = t->nr_groups;
			if ((err = add_group(t, label)))
				goto cleanup;
			continue;
		}
		h = hash_bytes(comm, strlen(comm), 0);
		if ((err = hmap__reserve(&by_comm)))
			goto cleanup;
		for (pos = hmap__first(&by_comm, h); (v = hmap__next(&by_comm, h, &pos));)
			if (!strcmp(t->groups[hmap_idx_of(v)], comm))
				break;
		if (!v) {
			hmap__put(&by_comm, pos, h, hmap_idx(t->nr_groups));
			v = hmap_idx(t->nr_groups);
			if ((err = add_group(t, strdup(comm))))
				goto cleanup;
		}
		t->thread_group[id] = hmap_idx_of(v);
	}
	err = 0;
cleanup:
	hmap__free(&by_comm);
	return err;
}

static int by_group_label(const void *a, const void *b, void *arg)
{
	const struct flame_tree *t = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(t->groups[x], t->groups[y]);

	return c ? c : x < y ? -1 : x > y;
}

static int by_frame_name(const void *a, const void *b, void *arg)
{
	const struct flame_tree *t = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct profile_frame *fx = profile__frame_at(t->p, x),
				   *fy = profile__frame_at(t->p, y);
	int c = strcmp(fx->name, fy->name);

	if (c)
		return c;
	if (fx->kind != fy->kind)
		return fx->kind < fy->kind ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* rank[id]: the position of id when ids are sorted by cmp (siblings are laid out in that order). */
static uint32_t *make_ranks(struct flame_tree *t, size_t n,
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
	qsort_r(ids, n, sizeof(*ids), cmp, t);
	for (size_t i = 0; i < n; i++)
		rank[ids[i]] = i;
	free(ids);
	return rank;
}

static uint8_t merge_tag(const struct flame_tree *t, uint8_t a, uint8_t b)
{
	if (!a)
		return b;
	if (!b || a == b)
		return a;
	if (t->tag_merge)
		return t->tag_merge(t->tag_arg, a, b);
	return t->tag_mixed;
}

/* Entries by path, each level by rank: the sweep then meets the tree in pre-order. */
static int by_path(const void *a, const void *b, void *arg)
{
	const struct flame_tree *t = arg;
	const struct entry *x = a, *y = b;
	const uint32_t *fx, *fy;
	size_t nx, ny;

	for (int i = 0; i < 3; i++)
		if (x->key[i] != y->key[i])
			return x->key[i] < y->key[i] ? -1 : 1;
	if (x->stack == y->stack || !x->key[2])
		return 0;
	fx = profile__stack_at(t->p, x->stack, &nx);
	fy = profile__stack_at(t->p, y->stack, &ny);
	for (size_t i = 2; i < nx && i < ny; i++)
		if (fx[i] != fy[i])
			return t->frame_rank[fx[i]] < t->frame_rank[fy[i]] ? -1 : 1;
	return nx < ny ? -1 : nx > ny;
}

/* The rows of src as entries; the maps take its ids to t->p's (NULL: src is t->p). */
static void add_entries(struct flame_tree *t, const struct profile *src, const uint32_t *thread_map,
			const uint32_t *stack_map, bool base)
{
	size_t rows = profile__nr_rows(src);

	for (size_t i = 0; i < rows; i++) {
		const struct profile_row *row = profile__row_at(src, i);
		struct entry *e = &t->entries[t->nr_entries];
		uint32_t thread = thread_map ? thread_map[row->thread] : row->thread;
		uint32_t stack = stack_map ? stack_map[row->stack] : row->stack;
		const uint32_t *frames;
		size_t n;

		if (!row->w.off_ns && !row->w.count)
			continue;
		*e = (struct entry){.off_ns = row->w.off_ns,
				    .count = row->w.count,
				    .group = t->thread_group[thread],
				    .stack = stack,
				    .tag = t->tag ? t->tag(t->tag_arg, t->p, stack, row->state) : 0,
				    .base = base};
		frames = profile__stack_at(t->p, stack, &n);
		e->key[0] = t->group_rank[e->group];
		e->key[1] = n > 0 ? t->frame_rank[frames[0]] + 1 : 0;
		e->key[2] = n > 1 ? t->frame_rank[frames[1]] + 1 : 0;
		if (base) {
			t->base_off_ns += e->off_ns;
			t->base_count += e->count;
		} else {
			t->total_off_ns += e->off_ns;
			t->total_count += e->count;
		}
		t->nr_entries++;
	}
}

static int make_entries(struct flame_tree *t)
{
	size_t rows = t->diff ? profile__nr_rows(t->side[NEW]) + profile__nr_rows(t->side[BASE])
			      : profile__nr_rows(t->p);

	t->entries = malloc((rows ? rows : 1) * sizeof(*t->entries));
	if (!t->entries)
		return -ENOMEM;
	if (t->diff) {
		add_entries(t, t->side[NEW], t->thread_map[NEW], t->stack_map[NEW], false);
		add_entries(t, t->side[BASE], t->thread_map[BASE], t->stack_map[BASE], true);
	} else {
		add_entries(t, t->p, NULL, NULL, false);
	}
	qsort_r(t->entries, t->nr_entries, sizeof(*t->entries), by_path, t);
	return 0;
}

/*
 * Intern one side's threads, frames (names cleaned) and stacks into the
 * union, and map its ids to the union's.
 */
static int add_to_union(struct flame_tree *t, int side)
{
	const struct profile *p = t->side[side];
	size_t nf = profile__nr_frames(p), ns = profile__nr_stacks(p), nt = profile__nr_threads(p);
	uint32_t *frame_map = malloc((nf ? nf : 1) * sizeof(*frame_map)), *ids = NULL;
	size_t cap = 0;
	char clean[512];
	int id, err = -ENOMEM;

	t->thread_map[side] = malloc((nt ? nt : 1) * sizeof(uint32_t));
	t->stack_map[side] = malloc((ns ? ns : 1) * sizeof(uint32_t));
	if (!frame_map || !t->thread_map[side] || !t->stack_map[side])
		goto cleanup;
	for (size_t i = 0; i < nt; i++) {
		const struct profile_thread *th = profile__thread_at(p, i);

		if ((id = profile__thread(t->u, th->pid, th->tid, th->comm)) < 0)
			goto fail;
		t->thread_map[side][i] = id;
	}
	for (size_t i = 0; i < nf; i++) {
		const struct profile_frame *f = profile__frame_at(p, i);
		const char *name = reasons__clean_name(f->kind, f->name, clean, sizeof(clean));

		/* A name that is all offset keeps it, rather than becoming empty. */
		if (!name[0])
			name = f->name;
		if ((id = profile__frame(t->u, f->kind, name, strlen(name))) < 0)
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
		if ((id = profile__stack(t->u, ids, n)) < 0)
			goto fail;
		t->stack_map[side][i] = id;
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

static uint64_t weight(const struct flame_tree *t, const struct flame_node *n)
{
	return flame_node__weight(n, t->by_count);
}

static uint64_t base_weight(const struct flame_tree *t, const struct flame_node *n)
{
	return flame_node__base_weight(n, t->by_count);
}

static int push_node(struct flame_tree *t, uint32_t key, uint32_t depth)
{
	if (vec_reserve(t->nodes, t->cap_nodes, t->nr_nodes + 1))
		return -ENOMEM;
	t->nodes[t->nr_nodes++] = (struct flame_node){.key = key, .depth = depth};
	t->nr_tree++;
	return 0;
}

/*
 * Close the node open at depth d: its weight is final, so add it to its
 * parent's; a node too light to keep is the last one kept (its descendants
 * are lighter still and went before it), so dropping it is a pop.
 */
static void close_node(struct flame_tree *t, const size_t *path, size_t d, uint64_t min_weight)
{
	struct flame_node *n = &t->nodes[path[d]], *parent = &t->nodes[path[d - 1]];

	parent->off_ns += n->off_ns;
	parent->count += n->count;
	parent->base_off_ns += n->base_off_ns;
	parent->base_count += n->base_count;
	parent->tag = merge_tag(t, parent->tag, n->tag);
	/*
	 * Only in BASE: vanished, unless an ancestor is too (then that one
	 * counts); not a node of the tree, so not one pruned either.
	 */
	if (t->diff && !weight(t, n))
		t->nr_tree--;
	if (t->diff && !weight(t, n) && base_weight(t, n)) {
		parent->vanished += base_weight(t, n);
		parent->nr_vanished++;
	} else if (t->diff && weight(t, n)) {
		t->vanished += n->vanished;
		t->nr_vanished += n->nr_vanished;
	}
	if (weight(t, n) < min_weight)
		t->nr_nodes--;
}

/* One pass over the sorted entries builds the tree in pre-order, keeping only wide nodes. */
static int sweep(struct flame_tree *t, uint64_t min_weight)
{
	size_t cap = 64, open = 1, *path = malloc(cap * sizeof(*path)); /* open nodes, by depth */
	int err;

	if (!path)
		return -ENOMEM;
	if ((err = push_node(t, 0, 0)))
		goto cleanup;
	path[0] = 0;
	for (size_t i = 0; i < t->nr_entries; i++) {
		const struct entry *e = &t->entries[i];
		size_t n, same = 1, len;
		const uint32_t *frames = profile__stack_at(t->p, e->stack, &n);
		struct flame_node *leaf;

		len = n + 2; /* root, group, frames */
		if (vec_reserve(path, cap, len)) {
			err = -ENOMEM;
			goto cleanup;
		}
		if (open > 1 && t->nodes[path[1]].key == e->group)
			for (same = 2; same < open && same < len; same++)
				if (t->nodes[path[same]].key != frames[same - 2])
					break;
		while (open > same)
			close_node(t, path, --open, min_weight);
		for (; open < len; open++) {
			if ((err = push_node(t, open == 1 ? e->group : frames[open - 2], open)))
				goto cleanup;
			path[open] = t->nr_nodes - 1;
		}
		leaf = &t->nodes[path[len - 1]];
		if (e->base) {
			leaf->base_off_ns += e->off_ns;
			leaf->base_count += e->count;
		} else {
			leaf->off_ns += e->off_ns;
			leaf->count += e->count;
		}
		leaf->tag = merge_tag(t, leaf->tag, e->tag);
	}
	while (open > 1)
		close_node(t, path, --open, min_weight);
	if (t->diff && weight(t, &t->nodes[0])) {
		t->vanished += t->nodes[0].vanished;
		t->nr_vanished += t->nodes[0].nr_vanished;
	} else if (t->diff) {
		/* NEW is empty: all of BASE vanished, the root's children each a frame. */
		t->vanished = base_weight(t, &t->nodes[0]);
		t->nr_vanished = t->nodes[0].nr_vanished;
	}
	err = 0;
cleanup:
	free(path);
	return err;
}

void flame_tree__free(struct flame_tree *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nr_groups; i++)
		free(t->groups[i]);
	free(t->groups);
	free(t->thread_group);
	free(t->group_rank);
	free(t->frame_rank);
	free(t->entries);
	free(t->nodes);
	for (int s = 0; s < 2; s++) {
		free(t->thread_map[s]);
		free(t->stack_map[s]);
	}
	profile__free(t->u);
	free(t);
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

/*
 * Keep at most max nodes, the root and the heaviest others: all those heavier
 * than w, the (max - 1)-th largest weight, then those weighing exactly w in
 * pre-order while room is left. A parent weighs at least as much as its child
 * and comes first, so what stays is still a tree in pre-order.
 */
static int cap_nodes(struct flame_tree *t, size_t max)
{
	size_t n = t->nr_nodes - 1, kept = 1, room = max - 1;
	uint64_t *v, w;

	t->capped = n + 1 > max;
	if (!t->capped)
		return 0;
	if (max == 1) {
		t->min_weight = UINT64_MAX;
		t->nr_nodes = 1;
		return 0;
	}
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = weight(t, &t->nodes[i + 1]);
	w = kth_largest(v, n, max - 2);
	free(v);
	t->min_weight = w;
	for (size_t i = 1; i < t->nr_nodes; i++)
		room -= weight(t, &t->nodes[i]) > w;
	for (size_t i = 1; i < t->nr_nodes; i++) {
		uint64_t x = weight(t, &t->nodes[i]);

		if (x > w || (x == w && room && room--))
			t->nodes[kept++] = t->nodes[i];
	}
	t->nr_nodes = kept;
	return 0;
}

/* The pruning threshold as a weight: total * num / den, rounded up, at least 1. */
static uint64_t threshold(const struct flame_tree_opts *o, uint64_t total)
{
	long double m = 0;

	if (o->prune_num > 0)
		m = (long double)total * o->prune_num / o->prune_den;
	if (m >= (long double)UINT64_MAX)
		return UINT64_MAX;
	if (m <= 1)
		return 1;
	return (uint64_t)m + ((long double)(uint64_t)m < m);
}

/* Offsets: children kept are packed from their parent's start, in order. */
static int layout(struct flame_tree *t)
{
	uint64_t *cursor; /* per depth: where the next child goes */
	int max_depth = 0;

	for (size_t i = 0; i < t->nr_nodes; i++)
		if ((int)t->nodes[i].depth > max_depth)
			max_depth = t->nodes[i].depth;
	cursor = calloc(max_depth + 2, sizeof(*cursor));
	if (!cursor)
		return -ENOMEM;
	for (size_t i = 0; i < t->nr_nodes; i++) {
		struct flame_node *n = &t->nodes[i];
		uint64_t x = cursor[n->depth];

		n->offset = x;
		cursor[n->depth] = x + weight(t, n);
		cursor[n->depth + 1] = x;
	}
	free(cursor);
	t->info = (struct flame_tree_info){
		.nr_tree = t->nr_tree,
		.nr_nodes = t->nr_nodes,
		.by_count = t->by_count,
		.total_off_ns = t->total_off_ns,
		.total_count = t->total_count,
		.base_off_ns = t->base_off_ns,
		.base_count = t->base_count,
		.min_weight = t->min_weight,
		.capped = t->capped,
		.max_depth = max_depth,
		.vanished = t->vanished,
		.nr_vanished = t->nr_vanished,
	};
	return 0;
}

static int build(struct flame_tree *t, const struct flame_tree_opts *o)
{
	int err;

	if (t->diff) {
		t->u = profile__new();
		if (!t->u)
			return -ENOMEM;
		if ((err = add_to_union(t, NEW)) || (err = add_to_union(t, BASE)))
			return err;
		t->p = t->u;
	}
	if ((err = make_groups(t)))
		return err;
	t->group_rank = make_ranks(t, t->nr_groups, by_group_label);
	t->frame_rank = make_ranks(t, profile__nr_frames(t->p), by_frame_name);
	if (!t->group_rank || !t->frame_rank)
		return -ENOMEM;
	if ((err = make_entries(t)))
		return err;
	/* By count when asked, or when no time was recorded. */
	t->by_count = o->by_count || (!t->total_off_ns && t->total_count);
	t->min_weight = threshold(o, t->by_count ? t->total_count : t->total_off_ns);
	if ((err = sweep(t, t->min_weight)))
		return err;
	/* The rows are in the tree now. */
	free(t->entries);
	t->entries = NULL;
	if ((err = cap_nodes(t, o->max_nodes ? o->max_nodes : SIZE_MAX)))
		return err;
	return layout(t);
}

struct flame_tree *flame_tree__new(const struct profile *p, const struct flame_tree_opts *opts)
{
	static const struct flame_tree_opts defaults;
	const struct flame_tree_opts *o = opts ? opts : &defaults;
	struct flame_tree *t;
	int err;

	if (!p || (o->prune_num > 0 && !(o->prune_den > 0))) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->p = p;
	t->diff = o->base != NULL;
	t->side[NEW] = p;
	t->side[BASE] = o->base;
	t->per_thread = o->per_thread;
	t->tag = o->tag;
	t->tag_arg = o->tag_arg;
	t->tag_mixed = o->tag_mixed;
	t->tag_merge = o->tag_merge;
	if ((err = build(t, o))) {
		flame_tree__free(t);
		errno = -err;
		return NULL;
	}
	return t;
}

const struct flame_tree_info *flame_tree__info(const struct flame_tree *t)
{
	return &t->info;
}

const struct flame_node *flame_tree__nodes(const struct flame_tree *t, size_t *n)
{
	*n = t->nr_nodes;
	return t->nodes;
}

const char *flame_tree__name(const struct flame_tree *t, const struct flame_node *n)
{
	if (n->depth == 0)
		return "all";
	if (n->depth == 1)
		return t->groups[n->key];
	return profile__frame_at(t->p, n->key)->name;
}

int flame_tree__kind(const struct flame_tree *t, const struct flame_node *n)
{
	if (n->depth <= 1)
		return n->depth;
	return 2 + profile__frame_at(t->p, n->key)->kind;
}
