// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/hmap.h"

static void put(struct hmap *m, uint64_t hash, uint32_t idx)
{
	size_t mask = m->cap - 1, i = hash & mask;

	while (m->idx[i] != HMAP_EMPTY)
		i = (i + 1) & mask;
	m->hash[i] = hash;
	m->idx[i] = idx;
	m->len++;
}

static int grow(struct hmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	uint64_t *hash = malloc(cap * sizeof(*hash));
	uint32_t *idx = malloc(cap * sizeof(*idx));
	struct hmap old = *m;

	if (!hash || !idx) {
		free(hash);
		free(idx);
		return -ENOMEM;
	}
	memset(idx, 0xff, cap * sizeof(*idx));
	m->hash = hash;
	m->idx = idx;
	m->cap = cap;
	m->len = 0;
	for (size_t i = 0; i < old.cap; i++)
		if (old.idx[i] != HMAP_EMPTY)
			put(m, old.hash[i], old.idx[i]);
	free(old.hash);
	free(old.idx);
	return 0;
}

int hmap__add(struct hmap *m, uint64_t hash, uint32_t idx)
{
	/* at most half full, so that probe chains stay short */
	if ((m->len + 1) * 2 > m->cap) {
		int err = grow(m);

		if (err)
			return err;
	}
	put(m, hash, idx);
	return 0;
}

bool hmap__next(const struct hmap *m, uint64_t hash, size_t *pos, uint32_t *idx)
{
	size_t mask = m->cap - 1;

	if (!m->cap)
		return false;
	/* *pos counts probes taken, so that iteration resumes after the last hit */
	for (size_t i = (hash + *pos) & mask; m->idx[i] != HMAP_EMPTY; i = (i + 1) & mask) {
		(*pos)++;
		if (m->hash[i] == hash) {
			*idx = m->idx[i];
			return true;
		}
	}
	return false;
}

void hmap__clear(struct hmap *m)
{
	if (m->cap)
		memset(m->idx, 0xff, m->cap * sizeof(*m->idx));
	m->len = 0;
}

void hmap__free(struct hmap *m)
{
	if (!m)
		return;
	free(m->hash);
	free(m->idx);
	memset(m, 0, sizeof(*m));
}
