/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The flame graph's frame tree, built from a profile and laid out; the SVG
 * writer (output/flamegraph.h) only draws it.
 *
 * The tree: the root, then one node per comm (or, with per_thread, per
 * thread, labelled "comm-tid", or "comm" when the tid is unknown), then each
 * stack's frames root first. Rows with equal paths merge; a node's weight is
 * the sum of its rows' off_ns and count plus its children's (inclusive), so
 * every parent weighs at least as much as its children and the root is the
 * total of the rows. Siblings are ordered by name (then frame kind, then id;
 * comm and thread nodes by label): the result does not depend on the order
 * rows were added. Rows weighing nothing are left out.
 *
 * Pruning: a node weighing less than the threshold (total * prune_num /
 * prune_den, rounded up, at least 1) is dropped with its descendants, its
 * weight staying in its parent's. If more than max_nodes nodes remain, only
 * the root and the heaviest others are kept (ties in pre-order while room is
 * left). What is kept is a tree in pre-order; each node's offset is where it
 * starts along the x axis, in weight units: its parent's offset plus the
 * weights of the siblings kept before it, so the weight of dropped children
 * shows as a gap at the parent's end.
 *
 * Differential mode (opts.base set): p is NEW and gives the weights that are
 * laid out; BASE's rows add base weights. Frames of both sides are matched by
 * their path with names cleaned as analyze/diff.h matches stacks
 * (reasons__clean_name), and node names are the cleaned ones. A node with no
 * NEW weight is too light to keep like any other; the outermost such nodes
 * with BASE weight are counted as vanished (not counted in nr_tree).
 *
 * Tags: an optional function tags each row (the flame graph's wait reason);
 * a node's tag is that of its rows when they agree, else tag_merge's of two
 * that differ (when set; it may give one they share) or tag_mixed. Tag 0
 * means no row seen and agrees with anything.
 */
#ifndef OFFCPU_OUTPUT_FLAME_TREE_H
#define OFFCPU_OUTPUT_FLAME_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/profile.h"

/* A node of the tree; flame_tree__nodes gives them in pre-order. */
struct flame_node {
	uint64_t off_ns, count;		  /* inclusive */
	uint64_t base_off_ns, base_count; /* differential: BASE's, inclusive */
	uint64_t vanished;		  /* differential: BASE weight of children only in BASE */
	size_t nr_vanished;		  /* and how many such children */
	uint64_t offset;		  /* layout: start along the x axis, in weight units */
	uint32_t key;			  /* depth 1: comm or thread index; deeper: frame id */
	uint32_t depth;			  /* the root is 0 */
	uint8_t tag;
};

/* Tags one row; p is the profile the tree's frame and stack ids refer to. */
typedef uint8_t (*flame_tree_tag_fn)(void *arg, const struct profile *p, uint32_t stack,
				     enum offcpu_state state);

/* The tag of a node whose rows have tags a and b (both non-zero, a != b). */
typedef uint8_t (*flame_tree_merge_fn)(void *arg, uint8_t a, uint8_t b);

/* All-zero options give a tree by time, per comm, nothing pruned but weightless nodes. */
struct flame_tree_opts {
	bool per_thread;	    /* one node per thread under the root, not per comm */
	bool by_count;		    /* weights are counts (also chosen when no time was recorded) */
	double prune_num;	    /* > 0: drop nodes under total * prune_num / prune_den */
	double prune_den;	    /* > 0 when prune_num is */
	size_t max_nodes;	    /* 0: no cap */
	const struct profile *base; /* differential mode when set; p is NEW */
	flame_tree_tag_fn tag;	    /* NULL: every tag 0 */
	void *tag_arg;
	uint8_t tag_mixed;	       /* the tag of a node whose rows' tags disagree */
	flame_tree_merge_fn tag_merge; /* NULL: tag_mixed; else called with tag_arg */
};

/* What was built; weights in the unit by_count says. */
struct flame_tree_info {
	size_t nr_tree;	 /* nodes in the whole tree, root and comm/thread nodes included */
	size_t nr_nodes; /* nodes kept */
	bool by_count;	 /* weights are interval counts */
	uint64_t total_off_ns, total_count; /* NEW's rows */
	uint64_t base_off_ns, base_count;   /* differential: BASE's rows */
	/*
	 * The smallest weight a kept node may have. When capped, nodes of
	 * exactly this weight were kept in pre-order while room was left.
	 */
	uint64_t min_weight;
	bool capped;	    /* max_nodes raised the threshold */
	int max_depth;	    /* of the nodes kept */
	uint64_t vanished;  /* differential: BASE weight of the outermost nodes only in BASE */
	size_t nr_vanished; /* and how many */
};

/*
 * Build the tree of p. Returns NULL with errno EINVAL (NULL p, prune_den not
 * > 0 while prune_num is), ENOMEM, or EOVERFLOW (differential mode: the two
 * profiles' frames or stacks together ran out of ids).
 */
struct flame_tree *flame_tree__new(const struct profile *p, const struct flame_tree_opts *o);
void flame_tree__free(struct flame_tree *t);

const struct flame_tree_info *flame_tree__info(const struct flame_tree *t);
/* The nodes kept, in pre-order; *n is set to flame_tree__info(t)->nr_nodes. */
const struct flame_node *flame_tree__nodes(const struct flame_tree *t, size_t *n);
/* "all", the comm or thread label, or the frame's (in differential mode cleaned) name. */
const char *flame_tree__name(const struct flame_tree *t, const struct flame_node *n);
/* 0 the root, 1 a comm or thread, else 2 + the frame's enum frame_kind. */
int flame_tree__kind(const struct flame_tree *t, const struct flame_node *n);

static inline uint64_t flame_node__weight(const struct flame_node *n, bool by_count)
{
	return by_count ? n->count : n->off_ns;
}

static inline uint64_t flame_node__base_weight(const struct flame_node *n, bool by_count)
{
	return by_count ? n->base_count : n->base_off_ns;
}

#endif
