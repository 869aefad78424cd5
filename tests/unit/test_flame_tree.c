// SPDX-License-Identifier: GPL-2.0-only
/*
 * The flame graph's frame tree, without drawing: shared prefixes merge, every
 * node weighs the sum of the rows under it, pruning drops light subtrees but
 * keeps their weight in the parent, siblings are ordered by name whatever the
 * insertion order, offsets pack kept children from their parent's start, the
 * node cap keeps a tree, row tags merge, and the differential tree matches
 * cleaned names and counts what only BASE has.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/profile.h"
#include "output/flame_tree.h"
#include "profile_rows.h"
#include "unit.h"

#define ROW(p, comm, tid, ns, cnt, ...) \
	add(p, comm, tid, OFFCPU_STATE_SLEEP, ns, cnt, (const char *const[]){__VA_ARGS__, NULL})

static struct profile *new_profile(void)
{
	struct profile *p = profile__new();

	if (!p)
		abort();
	return p;
}

/* The kept nodes as "depth:name:off_ns" in pre-order, joined by spaces. */
static void outline(const struct flame_tree *t, char *buf, size_t sz)
{
	size_t n, len = 0;
	const struct flame_node *nodes = flame_tree__nodes(t, &n);

	buf[0] = '\0';
	for (size_t i = 0; i < n && len < sz; i++)
		len += snprintf(buf + len, sz - len, "%s%u:%s:%" PRIu64, i ? " " : "",
				nodes[i].depth, flame_tree__name(t, &nodes[i]), nodes[i].off_ns);
}

/* The kept node reached from the root through the names in path (NULL-terminated). */
static const struct flame_node *node_at(const struct flame_tree *t, const char *const *path)
{
	size_t n, i = 0;
	const struct flame_node *nodes = flame_tree__nodes(t, &n);

	for (uint32_t depth = 1; path[depth - 1]; depth++) {
		for (i++; i < n && nodes[i].depth >= depth; i++)
			if (nodes[i].depth == depth &&
			    !strcmp(flame_tree__name(t, &nodes[i]), path[depth - 1]))
				break;
		if (i >= n || nodes[i].depth != depth)
			return NULL;
	}
	return &nodes[i];
}

#define NODE(t, ...) node_at(t, (const char *const[]){__VA_ARGS__, NULL})

TEST(shared_prefixes_merge)
{
	struct profile *p = new_profile();
	struct flame_tree *t;
	char got[512];

	ROW(p, "x", 1, 10, 1, "u:a", "u:b", "u:c");
	ROW(p, "x", 2, 20, 1, "u:a", "u:b", "u:d");
	ROW(p, "x", 1, 30, 1, "u:a", "u:e");
	ROW(p, "y", 3, 5, 1, "u:a");
	/* The same stack again, from another thread of x: one more row, no new node. */
	ROW(p, "x", 2, 7, 1, "u:a", "u:e");
	t = flame_tree__new(p, NULL);
	CHECK(t);
	outline(t, got, sizeof(got));
	CHECK_STR(got, "0:all:72 1:x:67 2:a:67 3:b:30 4:c:10 4:d:20 3:e:37 1:y:5 2:a:5");
	CHECK_INT(flame_tree__info(t)->nr_tree, 9);
	CHECK_INT(flame_tree__info(t)->nr_nodes, 9);
	CHECK_INT(flame_tree__info(t)->max_depth, 4);
	CHECK_INT(flame_tree__kind(t, NODE(t, "x")), 1);
	CHECK_INT(flame_tree__kind(t, NODE(t, "x", "a")), 2 + FRAME_USER);
	flame_tree__free(t);

	/* Per thread: x's threads are nodes of their own, labelled comm-tid. */
	t = flame_tree__new(p, &(struct flame_tree_opts){.per_thread = true});
	CHECK(t);
	outline(t, got, sizeof(got));
	CHECK_STR(got, "0:all:72 1:x-1:40 2:a:40 3:b:10 4:c:10 3:e:30 "
		       "1:x-2:27 2:a:27 3:b:20 4:d:20 3:e:7 1:y-3:5 2:a:5");
	flame_tree__free(t);
	profile__free(p);
}

/*
 * Every node weighs exactly the rows whose path passes through it, for time
 * and for counts: computed here from the rows, independently of the sweep.
 */
TEST(totals_are_sums_of_leaves)
{
	static const char *const names[] = {"u:f0", "u:f1", "u:f2", "k:f2", "u:f3"};
	struct profile *p = new_profile();
	const char *rows[200][6];
	uint64_t off[200], cnt[200], sum_off = 0, sum_cnt = 0;
	uint32_t seed = 12345;
	struct flame_tree *t;
	const struct flame_node *nodes;
	size_t n;

	for (int r = 0; r < 200; r++) {
		int len = 1 + r % 5;

		for (int k = 0; k < len; k++) {
			seed = seed * 1103515245 + 12345;
			rows[r][k] = names[(seed >> 16) % 5];
		}
		rows[r][len] = NULL;
		off[r] = 1000 + (seed >> 8) % 100000;
		cnt[r] = 1 + seed % 7;
		sum_off += off[r];
		sum_cnt += cnt[r];
		add(p, r % 3 ? "a" : "b", 1 + r % 3, OFFCPU_STATE_SLEEP, off[r], cnt[r], rows[r]);
	}
	t = flame_tree__new(p, NULL);
	CHECK(t);
	nodes = flame_tree__nodes(t, &n);
	CHECK_INT(n, flame_tree__info(t)->nr_tree);
	CHECK_U64(nodes[0].off_ns, sum_off);
	CHECK_U64(nodes[0].count, sum_cnt);
	CHECK_U64(flame_tree__info(t)->total_off_ns, sum_off);
	for (size_t i = 1; i < n; i++) {
		/* The path of node i: its ancestors' names and kinds, found walking back. */
		const struct flame_node *path[8];
		uint64_t want_off = 0, want_cnt = 0;
		uint32_t d = nodes[i].depth;

		for (size_t j = i + 1; j-- > 0 && d > 0;)
			if (nodes[j].depth == d)
				path[--d] = &nodes[j];
		for (int r = 0; r < 200; r++) {
			bool under = !strcmp(flame_tree__name(t, path[0]), r % 3 ? "a" : "b");

			for (uint32_t k = 1; under && k < nodes[i].depth; k++) {
				const char *f = rows[r][k - 1];
				int kind = f && f[0] == 'k' ? FRAME_KERNEL : FRAME_USER;

				under = f && !strcmp(flame_tree__name(t, path[k]), f + 2) &&
					flame_tree__kind(t, path[k]) == 2 + kind;
			}
			if (under) {
				want_off += off[r];
				want_cnt += cnt[r];
			}
		}
		if (nodes[i].off_ns != want_off || nodes[i].count != want_cnt) {
			UNIT_FAIL("node %zu (%s, depth %u): %" PRIu64 " ns %" PRIu64
				  " intervals, its rows say %" PRIu64 " and %" PRIu64,
				  i, flame_tree__name(t, &nodes[i]), nodes[i].depth,
				  nodes[i].off_ns, nodes[i].count, want_off, want_cnt);
			break;
		}
	}
	flame_tree__free(t);
	profile__free(p);
}

/* A light node goes with its subtree; its weight stays in its parent. */
TEST(pruning_drops_light_subtrees_keeping_weight)
{
	struct profile *p = new_profile();
	struct flame_tree_opts o = {.prune_num = 0.1, .prune_den = 1180};
	struct flame_tree *t;
	const struct flame_tree_info *info;
	char name[32], got[256];

	ROW(p, "x", 1, 1000000000, 1, "u:main", "u:big", "k:schedule");
	for (int i = 0; i < 100; i++) {
		snprintf(name, sizeof(name), "u:tiny%03d", i);
		ROW(p, "x", 1, 10000, 1, "u:main", name, "k:schedule");
	}
	t = flame_tree__new(p, &o);
	CHECK(t);
	info = flame_tree__info(t);
	outline(t, got, sizeof(got));
	CHECK_STR(got, "0:all:1001000000 1:x:1001000000 2:main:1001000000 3:big:1000000000 "
		       "4:schedule:1000000000");
	CHECK_INT(info->nr_tree, 205);
	CHECK_INT(info->nr_nodes, 5);
	/* 1001000000 * 0.1 / 1180 = 84830.5...: rounded up. */
	CHECK_U64(info->min_weight, 84831);
	CHECK(!info->capped);
	flame_tree__free(t);

	/* No threshold: only weightless nodes would go. */
	t = flame_tree__new(p, &(struct flame_tree_opts){0});
	CHECK(t);
	CHECK_INT(flame_tree__info(t)->nr_nodes, 205);
	CHECK_U64(flame_tree__info(t)->min_weight, 1);
	flame_tree__free(t);
	profile__free(p);
}

/* The threshold is rounded up, and a node weighing exactly it stays. */
TEST(pruning_threshold_edges)
{
	struct profile *p = new_profile();
	struct flame_tree_opts o = {.prune_num = 1, .prune_den = 100};
	struct flame_tree *t;
	char got[256];

	ROW(p, "x", 1, 980, 1, "u:big");
	ROW(p, "x", 1, 10, 1, "u:ten");
	ROW(p, "x", 1, 9, 1, "u:nine");
	t = flame_tree__new(p, &o);
	CHECK(t);
	CHECK_U64(flame_tree__info(t)->min_weight, 10);
	outline(t, got, sizeof(got));
	CHECK_STR(got, "0:all:999 1:x:999 2:big:980 2:ten:10");
	flame_tree__free(t);

	/* 1% of 1001 is 10.01: ten weighs less than the threshold now. */
	ROW(p, "x", 1, 2, 1, "u:big");
	t = flame_tree__new(p, &o);
	CHECK(t);
	CHECK_U64(flame_tree__info(t)->min_weight, 11);
	outline(t, got, sizeof(got));
	CHECK_STR(got, "0:all:1001 1:x:1001 2:big:982");
	flame_tree__free(t);
	profile__free(p);
}

/*
 * Siblings by name, then kind; comms by label; the same tree whatever the
 * insertion order. Kept children are packed from their parent's offset, so a
 * pruned one's weight is a gap at the parent's end.
 */
TEST(order_and_offsets)
{
	struct profile *a = new_profile(), *b = new_profile();
	struct flame_tree_opts o = {.prune_num = 1, .prune_den = 100};
	struct flame_tree *ta, *tb;
	const struct flame_node *na, *nb;
	size_t n, m;
	char got[512];

	ROW(a, "zz", 1, 100, 1, "u:zeta", "k:schedule");
	ROW(a, "x", 2, 300, 1, "u:alpha", "k:schedule");
	ROW(a, "x", 2, 200, 1, "k:f");
	ROW(a, "x", 2, 2, 1, "u:beta");
	ROW(a, "x", 2, 250, 1, "u:f");
	ROW(a, "x", 2, 150, 1, "u:mid");
	ROW(b, "x", 2, 150, 1, "u:mid");
	ROW(b, "x", 2, 250, 1, "u:f");
	ROW(b, "x", 2, 2, 1, "u:beta");
	ROW(b, "x", 2, 200, 1, "k:f");
	ROW(b, "x", 2, 300, 1, "u:alpha", "k:schedule");
	ROW(b, "zz", 1, 100, 1, "u:zeta", "k:schedule");
	ta = flame_tree__new(a, &o);
	tb = flame_tree__new(b, &o);
	CHECK(ta && tb);
	outline(ta, got, sizeof(got));
	/* beta (2 of 1002) is pruned: f and mid start right after alpha. */
	CHECK_STR(got, "0:all:1002 1:x:902 2:alpha:300 3:schedule:300 2:f:250 2:f:200 2:mid:150 "
		       "1:zz:100 2:zeta:100 3:schedule:100");
	na = flame_tree__nodes(ta, &n);
	nb = flame_tree__nodes(tb, &m);
	CHECK_INT(n, m);
	for (size_t i = 0; i < n; i++) {
		CHECK_STR(flame_tree__name(ta, &na[i]), flame_tree__name(tb, &nb[i]));
		CHECK_INT(flame_tree__kind(ta, &na[i]), flame_tree__kind(tb, &nb[i]));
		CHECK_U64(na[i].off_ns, nb[i].off_ns);
		CHECK_U64(na[i].offset, nb[i].offset);
	}
	/* The user f before the kernel f (FRAME_USER < FRAME_KERNEL). */
	CHECK_INT(flame_tree__kind(ta, &na[4]), 2 + FRAME_USER);
	CHECK_INT(flame_tree__kind(ta, &na[5]), 2 + FRAME_KERNEL);
	CHECK_U64(na[1].offset, 0);
	CHECK_U64(na[2].offset, 0);
	CHECK_U64(na[3].offset, 0);
	CHECK_U64(na[4].offset, 300);
	CHECK_U64(na[5].offset, 550);
	CHECK_U64(na[6].offset, 750);
	/* zz starts after all of x, its pruned beta included. */
	CHECK_U64(na[7].offset, 902);
	CHECK_U64(na[9].offset, 902);
	flame_tree__free(ta);
	flame_tree__free(tb);
	profile__free(a);
	profile__free(b);
}

/* However many nodes pass the threshold, at most max_nodes are kept, and they form a tree. */
TEST(cap_keeps_the_heaviest_as_a_tree)
{
	struct profile *p = new_profile();
	struct flame_tree_opts o = {.max_nodes = 50};
	struct flame_tree *t;
	const struct flame_tree_info *info;
	const struct flame_node *nodes;
	char a[32], b[32];
	size_t n;

	for (int i = 0; i < 300; i++) {
		snprintf(a, sizeof(a), "u:f%d", i % 37);
		snprintf(b, sizeof(b), "u:g%d", i);
		ROW(p, "x", 1, 1000 + i * 7, 1, a, b, "k:schedule");
	}
	t = flame_tree__new(p, &o);
	CHECK(t);
	info = flame_tree__info(t);
	nodes = flame_tree__nodes(t, &n);
	CHECK_INT(n, 50);
	CHECK(info->capped);
	CHECK_INT(info->nr_tree, 1 + 1 + 37 + 300 + 300);
	CHECK_U64(nodes[0].off_ns, profile__totals(p)->all.off_ns);
	/* Pre-order: each node's parent is kept and at least as heavy. */
	for (size_t i = 1; i < n; i++) {
		size_t j = i;

		while (j-- > 0 && nodes[j].depth + 1 != nodes[i].depth)
			CHECK(nodes[j].depth >= nodes[i].depth);
		CHECK(nodes[j].depth + 1 == nodes[i].depth);
		CHECK(nodes[j].off_ns >= nodes[i].off_ns);
		CHECK(nodes[i].off_ns >= info->min_weight);
	}
	flame_tree__free(t);
	o.max_nodes = 0;
	t = flame_tree__new(p, &o);
	CHECK(t);
	CHECK_INT(flame_tree__info(t)->nr_nodes, 639);
	CHECK(!flame_tree__info(t)->capped);
	flame_tree__free(t);
	profile__free(p);
}

/* Equal weights: the cap still fills its budget, taking tied nodes in pre-order. */
TEST(cap_fills_with_ties_in_order)
{
	struct profile *p = new_profile();
	struct flame_tree_opts o = {.max_nodes = 10, .by_count = true};
	struct flame_tree *t;
	char a[32], got[256];

	for (int i = 0; i < 20; i++) {
		snprintf(a, sizeof(a), "u:f%02d", i);
		ROW(p, "x", 1, 1000, 1, a, "k:schedule");
	}
	t = flame_tree__new(p, &o);
	CHECK(t);
	outline(t, got, sizeof(got));
	CHECK_STR(got, "0:all:20000 1:x:20000 2:f00:1000 3:schedule:1000 2:f01:1000 "
		       "3:schedule:1000 2:f02:1000 3:schedule:1000 2:f03:1000 3:schedule:1000");
	CHECK_U64(flame_tree__info(t)->min_weight, 1);
	CHECK(flame_tree__info(t)->by_count);
	flame_tree__free(t);

	/* A cap of one keeps the root alone. */
	o.max_nodes = 1;
	t = flame_tree__new(p, &o);
	CHECK(t);
	CHECK_INT(flame_tree__info(t)->nr_nodes, 1);
	CHECK_U64(flame_tree__info(t)->min_weight, UINT64_MAX);
	flame_tree__free(t);
	profile__free(p);
}

/* Counts when asked, or when no row has time. */
TEST(weight_by_count)
{
	struct profile *p = new_profile();
	struct flame_tree *t;

	ROW(p, "x", 1, 0, 3, "u:a");
	ROW(p, "x", 1, 0, 0, "u:nothing");
	t = flame_tree__new(p, NULL);
	CHECK(t);
	CHECK(flame_tree__info(t)->by_count);
	/* A row weighing nothing is no node. */
	CHECK_INT(flame_tree__info(t)->nr_tree, 3);
	flame_tree__free(t);
	ROW(p, "x", 1, 5, 1, "u:b");
	t = flame_tree__new(p, NULL);
	CHECK(t);
	CHECK(!flame_tree__info(t)->by_count);
	flame_tree__free(t);
	profile__free(p);
}

/* Tag a row by its stack's last frame: "lock" frames 1, others 2. */
static uint8_t tag_by_leaf(void *arg, const struct profile *p, uint32_t stack,
			   enum offcpu_state state)
{
	size_t n;
	const uint32_t *frames = profile__stack_at(p, stack, &n);

	(*(int *)arg)++;
	return n && !strcmp(profile__frame_at(p, frames[n - 1])->name, "lock") ? 1 : 2;
}

TEST(tags_merge_and_disagree_to_mixed)
{
	struct profile *p = new_profile();
	int calls = 0;
	struct flame_tree_opts o = {.tag = tag_by_leaf, .tag_arg = &calls, .tag_mixed = 9};
	struct flame_tree *t;

	ROW(p, "x", 1, 10, 1, "u:a", "k:lock");
	ROW(p, "x", 1, 10, 1, "u:b", "k:lock");
	ROW(p, "x", 1, 10, 1, "u:b", "k:sleep");
	ROW(p, "y", 2, 10, 1, "u:c", "k:lock");
	t = flame_tree__new(p, &o);
	CHECK(t);
	CHECK_INT(calls, 4);
	CHECK_INT(NODE(t, "x", "a")->tag, 1);
	CHECK_INT(NODE(t, "x", "a", "lock")->tag, 1);
	CHECK_INT(NODE(t, "x", "b", "sleep")->tag, 2);
	CHECK_INT(NODE(t, "x", "b")->tag, 9);
	CHECK_INT(NODE(t, "x")->tag, 9);
	CHECK_INT(NODE(t, "y")->tag, 1);
	CHECK_INT(flame_tree__nodes(t, &(size_t){0})[0].tag, 9);
	flame_tree__free(t);
	/* No tag function: every tag 0. */
	t = flame_tree__new(p, NULL);
	CHECK(t);
	CHECK_INT(NODE(t, "x", "b")->tag, 0);
	flame_tree__free(t);
	profile__free(p);
}

/*
 * Differential: frames match by cleaned name (other offsets, other tids),
 * NEW's weights are laid out, BASE's are added, and the outermost nodes only
 * in BASE are counted as vanished, not as nodes.
 */
TEST(differential_matches_cleaned_names_and_counts_vanished)
{
	struct profile *b = new_profile(), *n = new_profile();
	struct flame_tree_opts o = {.base = b};
	struct flame_tree *t;
	const struct flame_tree_info *info;
	const struct flame_node *f;
	char got[512];

	ROW(b, "app", 11, 100, 10, "u:main", "u:worker", "k:futex_wait+0x1a/0x40");
	ROW(b, "app", 13, 60, 6, "u:main", "u:poller", "u:poll");
	ROW(b, "app", 13, 15, 1, "u:main", "u:poller", "u:read");
	ROW(b, "cron", 30, 25, 1, "u:main");
	ROW(n, "app", 21, 300, 30, "u:main", "u:worker", "k:futex_wait+0x20/0x40");
	t = flame_tree__new(n, &o);
	CHECK(t);
	info = flame_tree__info(t);
	outline(t, got, sizeof(got));
	CHECK_STR(got, "0:all:300 1:app:300 2:main:300 3:worker:300 4:futex_wait:300");
	CHECK_INT(info->nr_tree, 5);
	CHECK_U64(info->total_off_ns, 300);
	CHECK_U64(info->base_off_ns, 200);
	/* poller (with poll and read under it) and cron: two, 100 ns. */
	CHECK_INT(info->nr_vanished, 2);
	CHECK_U64(info->vanished, 100);
	f = NODE(t, "app", "main", "worker", "futex_wait");
	CHECK(f);
	CHECK_U64(f->base_off_ns, 100);
	CHECK_U64(f->base_count, 10);
	CHECK_U64(NODE(t, "app", "main")->base_off_ns, 175);
	CHECK_U64(flame_tree__nodes(t, &(size_t){0})[0].base_off_ns, 200);
	flame_tree__free(t);
	profile__free(b);
	profile__free(n);
}

TEST(bad_arguments)
{
	struct profile *p = new_profile();

	errno = 0;
	CHECK(!flame_tree__new(NULL, NULL));
	CHECK_INT(errno, EINVAL);
	errno = 0;
	CHECK(!flame_tree__new(p, &(struct flame_tree_opts){.prune_num = 1}));
	CHECK_INT(errno, EINVAL);
	flame_tree__free(NULL);
	profile__free(p);
}

int main(void)
{
	return unit_run();
}
